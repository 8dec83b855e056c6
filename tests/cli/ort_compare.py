"""ort_compare.py - checks that the outputs tailcut wrote (OUTDIR/<output>.npy) equal onnxruntime's on the same inputs:
dtype and shape exactly, values within 1e-5 relative to the largest |reference| (integers exactly). Exits non-zero
naming the first output that differs.

usage: python tests/cli/ort_compare.py MODEL.onnx OUTDIR NAME=FILE.npy...
"""
import sys

import numpy as np
import onnxruntime as ort


def main(argv):
    model, out = argv[0], argv[1]
    feeds = {kv.split("=", 1)[0]: np.load(kv.split("=", 1)[1]) for kv in argv[2:]}
    opts = ort.SessionOptions()
    opts.log_severity_level = 3  # onnxruntime's own warnings (a wrong declared output shape) stay quiet
    sess = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
    for o, want in zip(sess.get_outputs(), sess.run(None, feeds)):
        got = np.load(f"{out}/{o.name}.npy")
        if got.dtype != want.dtype or got.shape != want.shape:
            return f"{o.name}: tailcut wrote {got.dtype} {got.shape}, onnxruntime gives {want.dtype} {want.shape}"
        if np.issubdtype(want.dtype, np.floating):
            err = float(np.abs(got.astype(np.float64) - want).max()) if want.size else 0.0
            if err > 1e-5 * (1 + float(np.abs(want).max())):
                return f"{o.name}: max error {err}"
        elif not np.array_equal(got, want):
            return f"{o.name}: values differ"
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
