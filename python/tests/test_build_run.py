"""test_build_run.py - tailcut.build / Engine / Context.run against onnxruntime: static shapes, profiles with a
symbolic batch, int64 inputs and a symbolic sequence (BERT), Engine.save + tailcut.load, the out= form, inputs
that need a copy (non-contiguous), FP16 / BF16 builds, the timing cache, and `python -m tailcut`."""
import os
import subprocess
import sys

import numpy as np
import pytest

import tailcut
from conftest import assert_close, image, tokens


def test_static_shapes_match_onnxruntime(models, ort):
    engine = tailcut.build(models["cnn"], shapes={"input": (2, 3, 32, 32)}, tactics_fixed=True)
    assert [i.name for i in engine.inputs] == ["input"]
    assert engine.inputs[0].dtype == np.float32 and engine.inputs[0].shape == (2, 3, 32, 32)
    assert engine.outputs[0].name == "logits" and engine.outputs[0].shape == (2, 10)
    assert len(engine.profiles) == 1
    assert engine.profiles[0].ranges["input"] == ((2, 3, 32, 32),) * 3
    ctx = engine.create_context()
    x = image(2)
    assert_close(ctx.run({"input": x}), ort(models["cnn"], {"input": x}))
    assert engine.steps() and all(s["backend"] == "cpu" for s in engine.steps())


def test_profiles_and_save_load(models, ort, tmp_path):
    prof = [{"input": ((1, 3, 32, 32), (2, 3, 32, 32), (4, 3, 32, 32))},
            {"input": ((5, 3, 32, 32), (8, 3, 32, 32), (8, 3, 32, 32))}]
    engine = tailcut.build(models["cnn"], profiles=prof, tactics_fixed=True)
    assert [p.ranges["input"] for p in engine.profiles] == [tuple(tuple(s) for s in r["input"]) for r in prof]
    assert engine.profile_for({"input": (6, 3, 32, 32)}) == 1
    assert engine.inputs[0].shape == ("batch", 3, 32, 32) and engine.outputs[0].shape == ("batch", 10)
    plan = tmp_path / "cnn.plan"
    engine.save(plan)
    loaded = tailcut.load(str(plan))
    assert loaded.inputs == engine.inputs and loaded.outputs == engine.outputs
    c0, c1 = loaded.create_context(0), loaded.create_context(1)
    for batch, ctx in ((1, c0), (3, c0), (4, c0), (7, c1)):
        x = image(batch, seed=batch)
        got = ctx.run({"input": x})
        assert_close(got, ort(models["cnn"], {"input": x}))
        np.testing.assert_array_equal(got["logits"], engine.create_context(ctx.profile).run({"input": x})["logits"])
    with pytest.raises(tailcut.InvalidArgumentError, match="input"):
        c0.run({"input": image(5)})  # batch 5 lies outside profile 0


def test_bert_int64_inputs_dynamic_sequence(models, ort):
    engine = tailcut.build(models["bert"], profiles=[{"input_ids": ((1, 4), (2, 8), (2, 16)),
                                                      "attention_mask": ((1, 4), (2, 8), (2, 16))}],
                           tactics_fixed=True)
    assert {i.name: i.dtype for i in engine.inputs} == {"input_ids": np.int64, "attention_mask": np.int64}
    ctx = engine.create_context()
    for batch, seq in ((1, 4), (2, 16), (2, 9)):
        feeds = tokens(batch, seq, seed=seq)
        assert_close(ctx.run(feeds), ort(models["bert"], feeds), tol=2e-3)


def test_out_form_and_copies(models, ort):
    engine = tailcut.build(models["cnn"], shapes={"input": (2, 3, 32, 32)}, tactics_fixed=True)
    ctx = engine.create_context()
    x = image(2, seed=3)
    ref = ort(models["cnn"], {"input": x})
    out = np.full((2, 10), np.nan, np.float32)
    got = ctx.run({"input": x}, out={"logits": out})
    assert got["logits"] is out
    assert_close({"logits": out}, ref)
    # a non-contiguous view of the right data is copied, and gives the same result
    xf = np.asfortranarray(x)
    assert not xf.flags.c_contiguous
    np.testing.assert_array_equal(ctx.run({"input": xf})["logits"], out)
    wide = np.zeros((2, 3, 32, 64), np.float32)
    wide[..., ::2] = x
    np.testing.assert_array_equal(ctx.run({"input": wide[..., ::2]})["logits"], out)
    with pytest.raises(tailcut.InvalidArgumentError, match="out\\['logits'\\]"):
        ctx.run({"input": x}, out={"logits": np.empty((2, 11), np.float32)})
    with pytest.raises(tailcut.InvalidArgumentError, match="float64"):
        ctx.run({"input": x}, out={"logits": np.empty((2, 10), np.float64)})
    with pytest.raises(tailcut.InvalidArgumentError, match="not outputs"):
        ctx.run({"input": x}, out={"nope": out})


@pytest.mark.parametrize("precision", ["fp16", "bf16"])
def test_half_precisions(models, ort, precision):
    engine = tailcut.build(models["cnn"], shapes={"input": (2, 3, 32, 32)}, precision=precision, tactics_fixed=True)
    isa = {"fp16": "avx512_fp16", "bf16": "avx512_bf16"}[precision]
    with open("/proc/cpuinfo") as f:
        if isa in f.read().split():  # else the layers stay FP32 (no such kernels on this CPU)
            assert any(s["precision"] == precision for s in engine.steps()), engine.steps()
    x = image(2, seed=4)
    got = engine.create_context().run({"input": x})["logits"].astype(np.float64)
    ref = ort(models["cnn"], {"input": x})["logits"].astype(np.float64)
    cos = float((got * ref).sum() / np.sqrt((got * got).sum() * (ref * ref).sum()))
    assert cos > 0.99, cos


def test_timing_cache(models, tmp_path):
    cache = tmp_path / "timing.cache"
    tailcut.build(models["cnn"], shapes={"input": (1, 3, 32, 32)}, timing_cache=str(cache))
    assert cache.exists() and cache.stat().st_size > 0
    engine = tailcut.build(models["cnn"], shapes={"input": (1, 3, 32, 32)}, timing_cache=str(cache))
    assert engine.create_context().run({"input": image(1)})["logits"].shape == (1, 10)


def test_model_bytes_and_python_m(models, tmp_path):
    with open(models["cnn"], "rb") as f:
        engine = tailcut.build(f.read(), shapes={"input": (1, 3, 32, 32)}, tactics_fixed=True)
    plan = tmp_path / "m.plan"
    engine.save(plan)
    r = subprocess.run([sys.executable, "-m", "tailcut", "inspect", str(plan)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"plan {plan}: {len(engine.steps())} steps, 1 profile(s)"), r.stdout
    r = subprocess.run([sys.executable, "-m", "tailcut", "no-such-command"], capture_output=True, text=True)
    assert r.returncode != 0 and r.stderr
