#!/usr/bin/env python3
"""make_corpus.py - writes the seed corpus of fuzz_onnx_import (tests/fuzz/corpus_onnx_import/): small
ONNX models and TensorProtos (each under 4 KiB) built with the onnx helper API, covering raw and
typed initializers, every common attribute kind, symbolic dims, absent optional inputs, external
data references and non-tensor types. Run after tests/data/onnx/make_test_data.py:
python3 tests/fuzz/make_corpus.py (needs onnx, numpy).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus_onnx_import")
sys.path.insert(0, os.path.join(HERE, "..", "data", "onnx"))
import make_test_data  # noqa: E402  (small_model)


def model(nodes, inputs, outputs, inits=(), opset=17, ir=8):
    g = helper.make_graph(nodes, "seed", inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, producer_name="make_corpus", opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = ir
    return m


def seeds():
    f = TensorProto.FLOAT
    vi = helper.make_tensor_value_info
    yield "small", make_test_data.small_model()
    yield "relu", model([helper.make_node("Relu", ["x"], ["y"])],
                        [vi("x", f, ["N", 4])], [vi("y", f, ["N", 4])])
    w = np.arange(16, dtype=np.float32).reshape(4, 4) / 8 - 1
    yield "gemm", model([helper.make_node("Gemm", ["x", "w", "b"], ["y"], alpha=0.5, beta=2.0, transB=1)],
                        [vi("x", f, [2, 4])], [vi("y", f, [2, 4])],
                        [numpy_helper.from_array(w, "w"),
                         helper.make_tensor("b", f, [4], [1.0, -1.0, 0.5, 2.0])])
    yield "typed", model(
        [helper.make_node("Identity", ["i8"], ["o"])], [], [vi("o", TensorProto.INT8, [3])],
        [helper.make_tensor("i8", TensorProto.INT8, [3], [-5, 0, 7]),
         helper.make_tensor("u16", TensorProto.UINT16, [2], [1, 65535]),
         helper.make_tensor("bf", TensorProto.BFLOAT16, [2], [1.0, -2.0]),
         helper.make_tensor("u32", TensorProto.UINT32, [2], [7, 4000000000]),
         helper.make_tensor("d", TensorProto.DOUBLE, [2], [0.25, -8.0]),
         helper.make_tensor("bo", TensorProto.BOOL, [3], [True, False, True]),
         helper.make_tensor("sc", TensorProto.INT64, [], [9])])
    yield "slice", model(
        [helper.make_node("Slice", ["x", "st", "en", "", "sp"], ["y"])],
        [vi("x", f, ["batch", "seq", 8])], [vi("y", f, None)],
        [helper.make_tensor("st", TensorProto.INT64, [1], [1]),
         helper.make_tensor("en", TensorProto.INT64, [1], [-1]),
         helper.make_tensor("sp", TensorProto.INT64, [1], [2])], opset=13)
    body = helper.make_graph([helper.make_node("Identity", ["x"], ["z"])], "body", [], [vi("z", f, [1])])
    yield "if", model([helper.make_node("If", ["c"], ["y"], then_branch=body, else_branch=body)],
                      [vi("c", TensorProto.BOOL, [])], [vi("y", f, [1])])
    yield "sequence", model([helper.make_node("SequenceEmpty", [], ["s"])], [],
                            [helper.make_tensor_sequence_value_info("s", f, None)])
    wq = np.array([[[[3]], [[-7]]], [[[127]], [[-127]]]], dtype=np.int8)  # 2x2x1x1 int8 conv weight
    yield "qdq", model(
        [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"]),
         helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xd"]),
         helper.make_node("DequantizeLinear", ["wq", "ws", "wz"], ["w"], axis=0),
         helper.make_node("Conv", ["xd", "w"], ["y"])],
        [vi("x", f, [1, 2, 3, 3])], [vi("y", f, [1, 2, 3, 3])],
        [helper.make_tensor("s", f, [], [0.05]), helper.make_tensor("z", TensorProto.UINT8, [], [128]),
         numpy_helper.from_array(wq, "wq"), helper.make_tensor("ws", f, [2], [0.01, 0.02]),
         helper.make_tensor("wz", TensorProto.INT8, [2], [0, 0])], opset=13)
    yield "old_ir3", model([helper.make_node("Add", ["x", "k"], ["y"])],
                           [vi("x", f, [3]), vi("k", f, [3])], [vi("y", f, [3])],
                           [helper.make_tensor("k", f, [3], [1, 2, 3])], opset=9, ir=3)


def main():
    os.makedirs(OUT, exist_ok=True)
    # The external-data model of the unit tests; its external.bin is found when the fuzzer runs
    # with TC_FUZZ_BASE_DIR=tests/data/onnx.
    with open(os.path.join(HERE, "..", "data", "onnx", "external.onnx"), "rb") as src:
        with open(os.path.join(OUT, "external.onnx"), "wb") as dst:
            dst.write(src.read())
    for name, m in seeds():
        data = m.SerializeToString()
        assert len(data) < 4096, (name, len(data))
        with open(os.path.join(OUT, name + ".onnx"), "wb") as fh:
            fh.write(data)
    tensors = {
        "t_float": numpy_helper.from_array(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4), "a"),
        "t_int64": numpy_helper.from_array(np.array([0, 1, 3], np.int64), "indices"),
        "t_half": helper.make_tensor("h", TensorProto.FLOAT16, [2, 2], np.array([1, -2, 3.5, 0.5], np.float16)),
    }
    for name, t in tensors.items():
        with open(os.path.join(OUT, name + ".pb"), "wb") as fh:
            fh.write(t.SerializeToString())


if __name__ == "__main__":
    main()
