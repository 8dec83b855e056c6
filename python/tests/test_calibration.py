"""test_calibration.py - INT8 builds calibrated by a Calibrator written in Python (get_batch / read_cache /
write_cache), by a plain iterable of samples and by a cache path: the same calibration gives the same plan, the
INT8 engine agrees with onnxruntime, and bad calibration data raises with the library's message."""
import numpy as np
import pytest

import tailcut
from conftest import image

SHAPES = {"input": (2, 3, 32, 32)}


def samples():
    return [{"input": image(2, seed=100 + k)} for k in range(6)]


class ListCalibrator(tailcut.Calibrator):
    def __init__(self, data, cache=None):
        self.data, self.cache, self.written, self.calls = list(data), cache, None, 0

    def get_batch(self, names):
        assert names == ["input"]
        self.calls += 1
        return self.data.pop(0) if self.data else None

    def read_cache(self):
        return self.cache

    def write_cache(self, cache):
        self.written = cache


def plan_bytes(engine, path):
    engine.save(path)
    return path.read_bytes()


def test_calibration_forms_agree(models, ort, tmp_path):
    cal = ListCalibrator(samples())
    e1 = tailcut.build(models["cnn"], shapes=SHAPES, precision="int8", calibration=cal, tactics_fixed=True)
    assert cal.calls == 7 and isinstance(cal.written, bytes) and len(cal.written) > 0
    assert any(s["precision"] == "int8" for s in e1.steps()), e1.steps()
    p1 = plan_bytes(e1, tmp_path / "a.plan")

    e2 = tailcut.build(models["cnn"], shapes=SHAPES, precision="int8", calibration=iter(samples()),
                       tactics_fixed=True)
    assert plan_bytes(e2, tmp_path / "b.plan") == p1

    cached = ListCalibrator([], cache=cal.written)
    e3 = tailcut.build(models["cnn"], shapes=SHAPES, precision="int8", calibration=cached, tactics_fixed=True)
    assert cached.calls == 0 and cached.written is None  # read_cache spared the calibration
    assert plan_bytes(e3, tmp_path / "c.plan") == p1

    cache_file = tmp_path / "calib.cache"
    cache_file.write_bytes(cal.written)
    e4 = tailcut.build(models["cnn"], shapes=SHAPES, precision="int8", calibration=str(cache_file),
                       tactics_fixed=True)
    assert plan_bytes(e4, tmp_path / "d.plan") == p1

    x = image(2, seed=7)
    got = e1.create_context().run({"input": x})["logits"].astype(np.float64)
    ref = ort(models["cnn"], {"input": x})["logits"].astype(np.float64)
    cos = float((got * ref).sum() / np.sqrt((got * got).sum() * (ref * ref).sum()))
    assert cos > 0.97, cos  # a 0.25-width MobileNetV2 (depthwise) on 12 calibration images: ~0.977
    assert not np.allclose(got, ref, atol=1e-6)  # INT8 did change the arithmetic

    other = tailcut.build(models["cnn"], shapes=SHAPES, precision="int8", calibration=samples()[:1],
                          calibration_method="minmax", tactics_fixed=True)
    assert plan_bytes(other, tmp_path / "e.plan") != p1


def test_bad_calibration(models, tmp_path):
    with pytest.raises(tailcut.InvalidArgumentError, match="float64"):
        tailcut.build(models["cnn"], shapes=SHAPES, precision="int8",
                      calibration=[{"input": image(2).astype(np.float64)}], tactics_fixed=True)
    with pytest.raises(tailcut.InvalidArgumentError, match="no samples"):
        tailcut.build(models["cnn"], shapes=SHAPES, precision="int8", calibration=[], tactics_fixed=True)
    with pytest.raises(tailcut.InvalidArgumentError, match="calibration_method"):
        tailcut.build(models["cnn"], shapes=SHAPES, precision="int8", calibration=samples(),
                      calibration_method="median")

    class Broken(tailcut.Calibrator):
        def get_batch(self, names):
            raise RuntimeError("no data here")
    with pytest.raises(RuntimeError, match="no data here"):
        tailcut.build(models["cnn"], shapes=SHAPES, precision="int8", calibration=Broken())
    garbage = tmp_path / "garbage.cache"
    garbage.write_bytes(b"\x00\x01garbage")
    with pytest.raises(tailcut.Error, match="garbage.cache"):
        tailcut.build(models["cnn"], shapes=SHAPES, precision="int8", calibration=str(garbage))
    with pytest.raises(tailcut.Error):
        tailcut.build(models["cnn"], shapes=SHAPES, precision="int8",
                      calibration=ListCalibrator([], cache=b"\x00\x01garbage"))
