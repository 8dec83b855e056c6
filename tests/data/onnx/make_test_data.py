#!/usr/bin/env python3
"""make_test_data.py - writes the tiny ONNX files used by tests/unit/test_onnx_import.c and
test_onnx_corrupt.c, using the onnx helper API, and copies two TensorProto .pb files from the
ONNX backend test data so the tests do not need the onnx package.

Run from anywhere: python3 tests/data/onnx/make_test_data.py  (needs onnx and numpy).
Values are deterministic formulas (no randomness, never all zero) that the C tests recompute.
"""
import os
import shutil

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def small_model():
    """A model that touches most importer features: symbolic and unknown dims, raw and typed
    initializers (float16 bits in int32_data), every common attribute kind, absent optional
    inputs, a custom-domain node and a Constant with a tensor attribute."""
    w = ((np.arange(4 * 3 * 3 * 3) % 7) - 3).astype(np.float32).reshape(4, 3, 3, 3) * 0.25
    inits = [
        numpy_helper.from_array(w, "w"),  # raw_data
        helper.make_tensor("b", TensorProto.FLOAT, [4], [0.5, -1.0, 1.5, -2.0]),  # float_data
        helper.make_tensor("shape", TensorProto.INT64, [2], [0, -1]),  # int64_data
        helper.make_tensor("h", TensorProto.FLOAT16, [3], np.array([1.0, -2.5, 65504.0], np.float16)),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", kernel_shape=[3, 3],
                         pads=[1, 1, 1, 1], strides=[1, 1], group=1),
        helper.make_node("LeakyRelu", ["c"], ["r"], name="leaky", alpha=0.125),
        helper.make_node("Reshape", ["r", "shape"], ["flat"], name="reshape"),
        helper.make_node("Constant", [], ["k"], name="const",
                         value=helper.make_tensor("kv", TensorProto.INT32, [2, 2], [1, -2, 3, -4])),
        helper.make_node("Resize", ["r", "", "", "sizes"], ["rs"], name="resize", mode="nearest"),
        helper.make_node("Foo", ["flat", "h"], ["y", ""], name="custom", domain="com.example",
                         names=["a", "bc"], weights=[0.5, 2.0]),
    ]
    graph = helper.make_graph(
        nodes, "small",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, 8, 8]),
         helper.make_tensor_value_info("sizes", TensorProto.INT64, [4]),
         helper.make_tensor_value_info("mask", TensorProto.BOOL, ["batch", None])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", None]),
         helper.make_tensor_value_info("k", TensorProto.INT32, [2, 2])],
        initializer=inits)
    model = helper.make_model(graph, producer_name="make_test_data",
                              opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)])
    model.ir_version = 8
    return model


def external_model():
    """A two-initializer model saved by onnx with its weights in a separate file."""
    a = (np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5)
    c = np.array([3, -1, 4, -1, 5], dtype=np.int64)
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "a"], ["y"], name="add")], "ext",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        initializer=[numpy_helper.from_array(a, "a"), numpy_helper.from_array(c, "c")])
    model = helper.make_model(graph, producer_name="make_test_data", opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def main():
    small = small_model()
    onnx.checker.check_model(small)
    onnx.save(small, os.path.join(HERE, "small.onnx"))

    ext = external_model()
    onnx.save_model(ext, os.path.join(HERE, "external.onnx"), save_as_external_data=True,
                    all_tensors_to_one_file=True, location="external.bin", size_threshold=0)

    node_dir = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "node")
    shutil.copyfile(os.path.join(node_dir, "test_matmul_2d", "test_data_set_0", "input_0.pb"),
                    os.path.join(HERE, "matmul_2d_input_0.pb"))
    shutil.copyfile(os.path.join(node_dir, "test_gather_0", "test_data_set_0", "input_1.pb"),
                    os.path.join(HERE, "gather_0_input_1.pb"))


if __name__ == "__main__":
    main()
