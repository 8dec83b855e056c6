"""test_wheel.py - the wheel (TAILCUT_WHEEL, built by `make python`) installed into a fresh virtual environment and
used from another folder: it bundles libtailcut.so and the CLI (found through RPATH $ORIGIN), builds and runs a model
with the results of the package under test, and `python -m tailcut` answers. Skipped when TAILCUT_WHEEL is unset."""
import os
import subprocess
import sys
import textwrap
import zipfile

import numpy as np
import pytest

import tailcut
from conftest import image

WHEEL = os.environ.get("TAILCUT_WHEEL")
pytestmark = pytest.mark.skipif(not WHEEL, reason="TAILCUT_WHEEL (a built wheel) not given; `make python` sets it")


def test_wheel_contents():
    names = zipfile.ZipFile(WHEEL).namelist()
    assert "tailcut/libtailcut.so" in names, names
    assert "tailcut/bin/tailcut" in names, names
    assert any(n.startswith("tailcut/_tailcut") and n.endswith(".so") for n in names), names
    assert "tailcut/__init__.py" in names and "tailcut/py.typed" in names


def test_fresh_venv_from_another_folder(models, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = str(venv / "bin" / "python")
    subprocess.run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check", WHEEL,
                    f"numpy=={np.__version__}"], check=True)
    x = image(1, seed=42)
    np.save(tmp_path / "x.npy", x)
    expected = tailcut.build(models["cnn"], shapes={"input": (1, 3, 32, 32)}, tactics_fixed=True) \
        .create_context().run({"input": x})["logits"]
    script = textwrap.dedent(f"""
        import os, sys, numpy as np, tailcut
        assert tailcut.__file__.startswith({str(venv)!r}), tailcut.__file__
        e = tailcut.build({models["cnn"]!r}, shapes={{"input": (1, 3, 32, 32)}}, tactics_fixed=True)
        out = e.create_context().run({{"input": np.load("x.npy")}})["logits"]
        np.save("out.npy", out)
        try:
            e.create_context().run({{"input": np.load("x.npy").astype(np.float64)}})
            sys.exit("a float64 input was accepted")
        except tailcut.InvalidArgumentError as exc:
            print("refused:", exc)
    """)
    work = tmp_path / "elsewhere"
    work.mkdir()
    (work / "x.npy").write_bytes((tmp_path / "x.npy").read_bytes())
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LD_LIBRARY_PATH")}
    r = subprocess.run([py, "-c", script], cwd=work, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "float64" in r.stdout
    np.testing.assert_array_equal(np.load(work / "out.npy"), expected)
    r = subprocess.run([py, "-m", "tailcut", "--help"], cwd=work, env=env, capture_output=True, text=True)
    assert r.returncode == 0 and "build" in (r.stdout + r.stderr), r.stdout + r.stderr
