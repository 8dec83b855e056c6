"""test_compare.py - tailcut.compare(a, b, data) gives the figures of `tailcut compare --json` (run through
`python -m tailcut`) for an FP32 and an INT8 plan of the same model; an engine against itself agrees exactly;
mismatched engines are refused."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import tailcut
from conftest import image


@pytest.fixture(scope="module")
def plans(models, tmp_path_factory):
    d = tmp_path_factory.mktemp("compare")
    shapes = {"input": (2, 3, 32, 32)}
    fp32 = tailcut.build(models["cnn"], shapes=shapes, tactics_fixed=True)
    int8 = tailcut.build(models["cnn"], shapes=shapes, precision="int8", tactics_fixed=True,
                         calibration=[{"input": image(2, seed=50 + k)} for k in range(4)])
    fp32.save(d / "fp32.plan")
    int8.save(d / "int8.plan")
    data = [{"input": image(2, seed=200 + k)} for k in range(3)]
    os.makedirs(d / "data")
    for k, s in enumerate(data):
        np.save(d / "data" / f"input.{k}.npy", s["input"])
    return d, fp32, int8, data


def test_compare_matches_cli(plans):
    d, fp32, int8, data = plans
    got = tailcut.compare(fp32, int8, data)
    r = subprocess.run([sys.executable, "-m", "tailcut", "compare", str(d / "fp32.plan"), str(d / "int8.plan"),
                        "--data", str(d / "data"), "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    cli = json.loads(r.stdout)
    assert got["samples"] == cli["samples"] == 3
    assert set(got["outputs"]) == set(cli["outputs"]) == {"logits"}
    g, c = got["outputs"]["logits"], cli["outputs"]["logits"]
    for key, value in c.items():
        if isinstance(value, float):
            assert g[key] == pytest.approx(value, rel=1e-9, abs=1e-15), key
        else:
            assert g[key] == value, key
    assert 0.9 < g["cosine"] < 1.0 and g["max_abs_error"] > 0 and g["rows"] == 6
    assert g["sqnr_db"] > 10


def test_compare_paths_and_identity(plans, models):
    d, fp32, _, data = plans
    same = tailcut.compare(str(d / "fp32.plan"), fp32, data)["outputs"]["logits"]
    assert same["cosine"] == 1.0 and same["max_abs_error"] == 0.0 and same["top1"] == 1.0
    assert same["sqnr_db"] == float("inf")
    onnx = tailcut.compare(models["cnn"], fp32, data)["outputs"]["logits"]
    assert onnx["cosine"] > 0.9999


def test_compare_refusals(plans, models):
    _, fp32, _, data = plans
    bert = tailcut.build(models["bert"], shapes={"input_ids": (1, 4), "attention_mask": (1, 4)}, tactics_fixed=True)
    with pytest.raises(tailcut.Error):
        tailcut.compare(fp32, bert, data)
    with pytest.raises(tailcut.InvalidArgumentError, match="no samples"):
        tailcut.compare(fp32, fp32, [])
