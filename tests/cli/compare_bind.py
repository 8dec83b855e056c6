"""compare_bind.py - bench/compare.py's ctypes binding (Tailcut.bind) with numpy arrays that are not packed row-major
native data: a transposed view, a strided slice, a Fortran-order array and a big-endian one must give the outputs of
their values (y = x * c, checked against numpy), and an array of another dtype (int32 for a float32 input: as many
bytes) must be refused with a reason, never read as floats; a 0-d array (a scalar input, as silero's sr) stays rank 0,
native or big-endian. usage: compare_bind.py LIBTAILCUT.so WORKDIR"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import compare  # noqa: E402


def main():
    lib_path, work = sys.argv[1], sys.argv[2]
    rng = np.random.default_rng(3)
    c = rng.uniform(0.5, 2.0, size=(5,)).astype(np.float32)
    g = helper.make_graph([helper.make_node("Mul", ["x", "c"], ["y"], name="mul")], "bind",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 5])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 5])],
                          [numpy_helper.from_array(c, "c")])
    model = os.path.join(work, "bind.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), model)
    tc = compare.Tailcut(compare.load_library(lib_path))
    try:
        tc.build(model, {"x": [3, 5]}, 1)
        tc.save_and_load(os.path.join(work, "bind.plan"))
        base = rng.standard_normal((5, 3)).astype(np.float32) + 3.0  # no zeros
        wide = rng.standard_normal((3, 10)).astype(np.float32) - 3.0
        cases = {"transposed view": base.T, "strided slice": wide[:, ::2],
                 "Fortran order": np.asfortranarray(base.T.copy()), "big-endian": base.T.astype(">f4")}
        failed = []
        for tag, x in cases.items():
            assert x.shape == (3, 5) and not (x.flags.c_contiguous and x.dtype.isnative), tag
            tc.bind({"x": x})
            tc.run()
            y = tc.outputs()["y"]
            want = x.astype(np.float32) * c
            if not np.array_equal(y, want):
                failed.append(f"{tag}: max abs error {float(np.max(np.abs(y - want)))}")
        try:
            tc.bind({"x": np.ones((3, 5), np.int32)})
            failed.append("an int32 array for a float32 input was bound")
        except compare.CompareError as e:
            if "x" not in str(e):
                failed.append(f"the int32 refusal does not name the input: {e}")
    finally:
        tc.close()
    # a rank-0 input: y = s * 2
    g0 = helper.make_graph([helper.make_node("Mul", ["s", "two"], ["y"], name="mul0")], "bind0",
                           [helper.make_tensor_value_info("s", TensorProto.FLOAT, [])],
                           [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])],
                           [numpy_helper.from_array(np.array(2.0, np.float32), "two")])
    model0 = os.path.join(work, "bind0.onnx")
    onnx.save(helper.make_model(g0, opset_imports=[helper.make_opsetid("", 17)]), model0)
    tc = compare.Tailcut(compare.load_library(lib_path))
    try:
        tc.build(model0, {"s": []}, 1)
        tc.save_and_load(os.path.join(work, "bind0.plan"))
        for tag, s0 in {"0-d": np.array(1.5, np.float32), "0-d big-endian": np.array(1.5, ">f4")}.items():
            tc.bind({"s": s0})
            tc.run()
            y = tc.outputs()["y"]
            if y.ndim != 0 or float(y) != 3.0:
                failed.append(f"{tag}: got {y!r}, want a 0-d 3.0")
    except compare.CompareError as e:
        failed.append(f"rank-0 input: {e}")
    finally:
        tc.close()
    if failed:
        sys.exit("compare_bind: FAIL: " + "; ".join(failed))
    print("compare_bind: non-contiguous, Fortran-order, big-endian and 0-d inputs bound by value; a wrong dtype refused")


if __name__ == "__main__":
    main()
