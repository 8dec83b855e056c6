"""test_calibration.py - INT8 builds calibrated by a Calibrator written in Python (get_batch / read_cache /
write_cache), by a plain iterable of samples and by a cache path: the same calibration gives the same plan, the
INT8 engine agrees with onnxruntime, and bad calibration data raises with the library's message; accuracy_threshold
reaches its target and writes the plan of `tailcut build --accuracy-threshold` on the same samples."""
import subprocess
import sys

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


def test_accuracy_threshold_matches_cli(models, tmp_path):
    data = samples()
    plain = tailcut.build(models["cnn"], shapes=SHAPES, precision="int8", calibration=data, tactics_fixed=True)
    fp32 = tailcut.build(models["cnn"], shapes=SHAPES, tactics_fixed=True)
    plain_cos = tailcut.compare(fp32, plain, data)["outputs"]["logits"]["cosine"]
    assert plain_cos < 0.99, plain_cos  # else the threshold below would have nothing to do
    e = tailcut.build(models["cnn"], shapes=SHAPES, precision="int8", calibration=data, tactics_fixed=True,
                      accuracy_threshold=0.99)
    assert "kept out of INT8 (fp32) by the threshold" in e.build_log, e.build_log
    assert e.accuracy >= 0.99, e.build_log
    assert e.accuracy == pytest.approx(tailcut.compare(fp32, e, data)["outputs"]["logits"]["cosine"], abs=1e-12)
    count = lambda eng: sum(s["precision"] == "int8" for s in eng.steps())  # noqa: E731
    assert 0 < count(e) < count(plain)
    # the command line's --accuracy-threshold on the same samples writes the same plan
    d = tmp_path / "cal"
    d.mkdir()
    for k, s in enumerate(data):
        np.save(d / f"input.{k}.npy", s["input"])
    r = subprocess.run([sys.executable, "-m", "tailcut", "build", models["cnn"], "-o", str(tmp_path / "cli.plan"),
                        "--shapes", "input:2x3x32x32", "--int8", "--calib-data", str(d), "--tactics-fixed",
                        "--accuracy-threshold", "0.99"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert plan_bytes(e, tmp_path / "py.plan") == (tmp_path / "cli.plan").read_bytes()
    top1 = tailcut.build(models["cnn"], shapes=SHAPES, precision="int8", calibration=data, tactics_fixed=True,
                         accuracy_threshold=1.0, accuracy_metric="top1")
    assert top1.accuracy == 1.0 and "top-1 agreement" in top1.build_log


def test_accuracy_threshold_refusals(models, tmp_path):
    cache = tmp_path / "c.cache"  # a cache holds no samples to measure on
    with pytest.raises(tailcut.InvalidArgumentError, match="not a cache file"):
        tailcut.build(models["cnn"], shapes=SHAPES, precision="int8", calibration=str(cache), accuracy_threshold=0.9)
    with pytest.raises(tailcut.InvalidArgumentError, match=r"\(0, 1\]"):
        tailcut.build(models["cnn"], shapes=SHAPES, precision="int8", calibration=samples(), accuracy_threshold=1.5)
    with pytest.raises(tailcut.InvalidArgumentError, match="accuracy_metric"):
        tailcut.build(models["cnn"], shapes=SHAPES, precision="int8", calibration=samples(), accuracy_threshold=0.9,
                      accuracy_metric="l2")
    with pytest.raises(tailcut.InvalidArgumentError, match="int8"):
        tailcut.build(models["cnn"], shapes=SHAPES, accuracy_threshold=0.9)
