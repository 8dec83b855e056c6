"""test_progress.py - tailcut.build(progress=callable) (tc_build_options.progress): the calls a build makes (phase,
done of total, the step under way, a last call without item), an exception raised by the callable (build raises it
once the library returns, the callable is not called again, the process and later builds are fine), and a
progress= that is not callable."""
import re
import threading

import pytest

import tailcut
from conftest import assert_close, image


def _runs(calls):
    """The calls split into runs of the phase (each starts at done 0)."""
    runs = []
    for c in calls:
        if c[1] == 0 and (not runs or runs[-1][-1][3] is None):
            runs.append([])
        runs[-1].append(c)
    return runs


@pytest.mark.parametrize("tactics_fixed", [True, False])
def test_progress_calls_are_sane(models, ort, tactics_fixed):
    calls, threads = [], set()

    def progress(phase, done, total, item):
        calls.append((phase, done, total, item))
        threads.add(threading.get_ident())

    engine = tailcut.build(models["cnn"], shapes={"input": (2, 3, 32, 32)}, tactics_fixed=tactics_fixed,
                           progress=progress)
    steps = engine.steps()
    assert calls, "the build never called progress"
    assert {c[0] for c in calls} == {"tune"}
    assert threads == {threading.get_ident()}  # the build runs on the calling thread
    for run in _runs(calls):
        total = run[0][2]
        assert total > 0 and all(c[2] == total for c in run), run
        assert [c[1] for c in run] == list(range(total + 1)), "done must count 0, 1, .. total"
        assert run[-1][3] is None and all(c[3] is not None for c in run[:-1])
        for _, _, _, item in run[:-1]:
            m = re.fullmatch(r"(.+) \((\w+)\)", item)
            assert m, item
    # every Conv step of the engine was announced by name while its tactic was chosen
    announced = {re.fullmatch(r"(.+) \((\w+)\)", c[3]).group(1) for c in calls if c[3] is not None}
    convs = {s["name"] for s in steps if s["ops"].startswith("Conv")}
    assert convs and convs <= announced, convs - announced
    x = image(2)
    assert_close(engine.create_context().run({"input": x}), ort(models["cnn"], {"input": x}))


def test_progress_exception_is_raised_by_build(models, ort):
    calls = []

    class Stop(Exception):
        pass

    def progress(phase, done, total, item):
        calls.append(done)
        if len(calls) == 3:
            raise Stop(f"stopped at {done} of {total}")

    with pytest.raises(Stop, match="stopped at 2 of"):
        tailcut.build(models["cnn"], shapes={"input": (1, 3, 32, 32)}, tactics_fixed=True, progress=progress)
    assert calls == [0, 1, 2], "the callable must not be called after it raised"
    # the library and the interpreter are fine afterwards: a build with a callable that returns normally works
    seen = []
    engine = tailcut.build(models["cnn"], shapes={"input": (1, 3, 32, 32)}, tactics_fixed=True,
                           progress=lambda *a: seen.append(a))
    assert seen and seen[-1][1] == seen[-1][2] and seen[-1][3] is None
    x = image(1, seed=3)
    assert_close(engine.create_context().run({"input": x}), ort(models["cnn"], {"input": x}))


def test_progress_exception_wins_over_nothing_else(models):
    """A callable that raises on its last call (done == total) still fails the build: the engine is discarded."""
    def progress(phase, done, total, item):
        if item is None:
            raise KeyError("last call")

    with pytest.raises(KeyError, match="last call"):
        tailcut.build(models["cnn"], shapes={"input": (1, 3, 32, 32)}, tactics_fixed=True, progress=progress)


def test_progress_must_be_callable(models):
    with pytest.raises(TypeError, match="progress must be a callable"):
        tailcut.build(models["cnn"], shapes={"input": (1, 3, 32, 32)}, tactics_fixed=True, progress=42)
