"""graph_builder.py - a small helper that builds ONNX graphs the way torch.onnx names them.

Node names follow the TorchScript exporter: "/<module scope>/<Op>" with "_1", "_2"... for repeats in
one scope, outputs "<node name>_output_0", small constants as Constant nodes and weights as
initializers. finish() turns the graph into a checked, shape-inferred ModelProto. Nothing here is
random: callers pass the arrays, so the output depends only on what they pass (byte-identical files
for identical inputs).
"""

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# The ops the tailcut library supports; a generated model must use nothing else.
ALLOWED_OPS = frozenset(
    "Conv BatchNormalization Relu Clip Add Sub Mul Div Erf MatMul Gemm MaxPool GlobalAveragePool "
    "Flatten Reshape Transpose Squeeze Unsqueeze Concat Slice Gather Shape Constant ConstantOfShape "
    "Cast Identity Expand Where Equal Softmax LayerNormalization Range Sigmoid".split()
)

PRODUCER_NAME = "tailcut-modelgen"
PRODUCER_VERSION = "1"


class GraphBuilder:
    """Collects nodes and initializers; names them like the TorchScript ONNX exporter does."""

    def __init__(self, opset):
        self.opset = opset
        self.nodes = []
        self.initializers = []
        self.inputs = []
        self.outputs = []
        self._scope_counts = {}  # (scope, op) -> uses so far
        self._anon = 0  # counter for exporter-style "onnx::Op_N" initializer names
        self._names = set()

    # ----- values -------------------------------------------------------------------------------

    def add_input(self, name, elem_type, shape):
        self.inputs.append(helper.make_tensor_value_info(name, elem_type, shape))
        return name

    def add_output(self, name, elem_type, shape):
        self.outputs.append(helper.make_tensor_value_info(name, elem_type, shape))

    def initializer(self, name, array):
        """Adds a weight. name=None gives an exporter-style anonymous name, e.g. onnx::MatMul_12."""
        if name is None or name.startswith("onnx::"):
            self._anon += 1
            name = "%s_%d" % (name or "onnx::Tensor", self._anon)
        if name in self._names:
            raise ValueError("duplicate initializer name " + name)
        self._names.add(name)
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    # ----- nodes --------------------------------------------------------------------------------

    def _node_name(self, scope, op):
        key = (scope, op)
        k = self._scope_counts.get(key, 0)
        self._scope_counts[key] = k + 1
        return "%s/%s%s" % (scope, op, "" if k == 0 else "_%d" % k)

    def node(self, op, inputs, scope="", outputs=None, n_out=1, **attrs):
        """Adds one node; returns its output name, or the list of names when it has several."""
        if op not in ALLOWED_OPS:
            raise ValueError("op %s is not supported by tailcut" % op)
        name = self._node_name(scope, op)
        outs = outputs if outputs is not None else ["%s_output_%d" % (name, i) for i in range(n_out)]
        self.nodes.append(helper.make_node(op, list(inputs), list(outs), name=name, **attrs))
        return outs[0] if len(outs) == 1 else outs

    def const(self, value, scope="", dtype=None):
        """A Constant node holding `value` (scalar or array), as the exporter emits literals."""
        arr = np.asarray(value, dtype=dtype)
        return self.node("Constant", [], scope, value=numpy_helper.from_array(arr))

    def unsqueeze(self, x, axes, scope=""):
        """Unsqueeze with axes as an input (opset >= 13) or as an attribute (older opsets)."""
        if self.opset >= 13:
            return self.node("Unsqueeze", [x, self.const(np.array(axes, np.int64), scope)], scope)
        return self.node("Unsqueeze", [x], scope, axes=list(axes))

    # ----- model --------------------------------------------------------------------------------

    def finish(self, graph_name="main_graph"):
        """Returns a checked ModelProto; raises if the checker or strict shape inference objects."""
        graph = helper.make_graph(self.nodes, graph_name, self.inputs, self.outputs, self.initializers)
        opset = helper.make_opsetid("", self.opset)
        model = helper.make_model(
            graph,
            opset_imports=[opset],
            producer_name=PRODUCER_NAME,
            producer_version=PRODUCER_VERSION,
            ir_version=helper.find_min_ir_version_for([opset]),
        )
        used = {n.op_type for n in model.graph.node}
        assert used <= ALLOWED_OPS, used - ALLOWED_OPS
        onnx.checker.check_model(model, full_check=False)
        # Strict mode raises when an inferred shape contradicts a declared one (e.g. the output).
        onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
        return model


def elem_type(dtype):
    """numpy dtype -> TensorProto element type."""
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


FLOAT = TensorProto.FLOAT
INT64 = TensorProto.INT64
