"""test_threads.py - several contexts of one engine run at once from Python threads (the GIL released during
the run) and give the single-threaded results; one context used by two threads at once is refused."""
import threading

import numpy as np
import pytest

import tailcut
from conftest import image


def run_threads(fn, n):
    """Runs fn(k) for k in range(n) on n threads; returns the repr of each exception raised."""
    errors = []

    def guarded(k):
        try:
            fn(k)
        except Exception as exc:  # reported to the test, with its thread
            errors.append((k, repr(exc)))
    threads = [threading.Thread(target=guarded, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads), "a thread did not finish"
    return errors


def test_contexts_in_threads(models):
    engine = tailcut.build(models["cnn"], shapes={"input": (2, 3, 32, 32)}, tactics_fixed=True, threads=1)
    inputs = [image(2, seed=10 + k) for k in range(4)]
    ref = engine.create_context()
    expected = [ref.run({"input": x})["logits"].copy() for x in inputs]
    assert not np.array_equal(expected[0], expected[1])
    done = [0] * 4
    start = threading.Barrier(4)

    def worker(k):
        ctx = engine.create_context()
        start.wait()
        for it in range(25):
            j = (k + it) % 4
            got = ctx.run({"input": inputs[j]})["logits"]
            np.testing.assert_array_equal(got, expected[j])
            done[k] += 1

    errors = run_threads(worker, 4)
    assert not errors, errors
    assert done == [25] * 4


def test_builds_in_threads(models):
    engines = [None, None]

    def build(k):
        engines[k] = tailcut.build(models["cnn"], shapes={"input": (k + 1, 3, 32, 32)}, tactics_fixed=True)
    errors = run_threads(build, 2)
    assert not errors, errors
    assert [e.profiles[0].ranges["input"][0][0] for e in engines] == [1, 2]


def test_one_context_two_threads_refused(models):
    engine = tailcut.build(models["cnn"], shapes={"input": (1, 3, 32, 32)}, tactics_fixed=True)
    ctx = engine.create_context()
    with ctx._lock:  # as if another thread were inside run()
        with pytest.raises(tailcut.InvalidArgumentError, match="another thread"):
            ctx.run({"input": image(1)})
    assert ctx.run({"input": image(1)})["logits"].shape == (1, 10)
