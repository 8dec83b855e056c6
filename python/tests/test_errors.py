"""test_errors.py - bad inputs raise tailcut.Error subclasses carrying the library's message: wrong dtype, rank or
shape, a shape outside the profile, missing and unknown inputs, corrupt or missing files, bad build options."""
import numpy as np
import pytest

import tailcut
from conftest import image


@pytest.fixture(scope="module")
def ctx(models):
    engine = tailcut.build(models["cnn"], profiles=[{"input": ((1, 3, 32, 32), (2, 3, 32, 32), (2, 3, 32, 32))}],
                           tactics_fixed=True)
    return engine.create_context()


def test_wrong_dtype_is_refused_with_the_library_message(ctx):
    with pytest.raises(tailcut.InvalidArgumentError) as e:
        ctx.run({"input": image(1).astype(np.float64)})
    msg = str(e.value)
    assert "'input'" in msg and "float64" in msg and "float32" in msg, msg  # names the input, both types
    assert e.value.status == 1
    assert isinstance(e.value, tailcut.Error) and isinstance(e.value, ValueError)
    with pytest.raises(tailcut.InvalidArgumentError, match="complex"):
        ctx.run({"input": image(1).astype(np.complex64)})


def test_wrong_shape_and_profile(ctx):
    with pytest.raises(tailcut.InvalidArgumentError, match="input") as e:
        ctx.run({"input": image(1)[0]})  # rank 3
    assert str(e.value)
    with pytest.raises(tailcut.InvalidArgumentError, match="input"):
        ctx.run({"input": np.ones((1, 3, 31, 32), np.float32)})  # a static dim differs
    with pytest.raises(tailcut.InvalidArgumentError, match="input"):
        ctx.run({"input": image(3)})  # batch 3 > the profile's max 2
    # the context still runs after refusals
    assert ctx.run({"input": image(2)})["logits"].shape == (2, 10)


def test_missing_and_unknown_inputs(ctx):
    with pytest.raises(tailcut.InvalidArgumentError, match="missing input"):
        ctx.run({})
    with pytest.raises(tailcut.InvalidArgumentError, match="nope"):
        ctx.run({"input": image(1), "nope": image(1)})
    with pytest.raises(TypeError):
        ctx.run([image(1)])


def test_files(models, tmp_path):
    bad = tmp_path / "bad.plan"
    bad.write_bytes(b"not a plan at all" * 10)
    with pytest.raises(tailcut.Error) as e:
        tailcut.load(bad)
    assert "bad.plan" in str(e.value) or str(e.value)
    assert type(e.value) is not tailcut.Error  # a specific subclass (corrupt file)
    with pytest.raises(tailcut.Error, match="missing.onnx"):
        tailcut.build(str(tmp_path / "missing.onnx"))
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(open(models["cnn"], "rb").read()[:200])
    with pytest.raises(tailcut.Error):
        tailcut.build(str(broken))


def test_build_options(models):
    with pytest.raises(tailcut.InvalidArgumentError, match="precision"):
        tailcut.build(models["cnn"], precision="fp8")
    with pytest.raises(tailcut.InvalidArgumentError, match="calibration"):
        tailcut.build(models["cnn"], shapes={"input": (1, 3, 32, 32)}, precision="int8")
    with pytest.raises(tailcut.InvalidArgumentError, match="not both"):
        tailcut.build(models["cnn"], shapes={"input": (1, 3, 32, 32)}, profiles=[])
    with pytest.raises(tailcut.InvalidArgumentError, match="unknown pass"):
        tailcut.build(models["cnn"], shapes={"input": (1, 3, 32, 32)}, disabled_passes=["nope"])
    with pytest.raises(tailcut.Error, match="input"):
        tailcut.build(models["cnn"], shapes={"input": (1, 3, 32)})  # rank differs from the model's
    with pytest.raises(tailcut.Error, match="nope"):
        tailcut.build(models["cnn"], shapes={"nope": (1, 3, 32, 32)})
    with pytest.raises(TypeError):
        tailcut.Engine(None)
