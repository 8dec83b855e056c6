"""ov_peer.py - OpenVINO as a third engine in bench/compare.py's interleaved runs (compare.py --openvino,
fp32_matrix.py), used only where the `openvino` module is installed: it is not in tools/requirements.txt, so CI never
downloads it. To install it, make a virtual environment of your own with the pinned tooling plus OpenVINO:

    python3 -m venv /tmp/ov-venv
    /tmp/ov-venv/bin/pip install numpy==2.3.5 onnx==1.19.1 onnxruntime==1.23.2 openvino==2026.4.1
    /tmp/ov-venv/bin/python bench/fp32_matrix.py MODELS_DIR --threads 2

How it runs: the CPU plugin reads the ONNX model, reshaped to the run's static input shapes, and compiles it with
INFERENCE_PRECISION_HINT f32 (no BF16/FP16 on CPUs that have them), PERFORMANCE_HINT LATENCY, one stream and
INFERENCE_NUM_THREADS = the run's threads; the inputs are set once as tensors over the same numpy arrays the other
engines read, and a timed run is one synchronous infer() of that request, in the same process as the others.
"""
import importlib.util
import time

import numpy as np


def available():
    """True when the openvino module is installed here (found, not yet imported)."""
    return importlib.util.find_spec("openvino") is not None


class OpenVinoPeer:
    """One compiled model and infer request on the CPU plugin, inputs bound once (see the module's text)."""

    def __init__(self, model_path, arrays, threads):
        import openvino as ov
        t0 = time.perf_counter_ns()
        core = ov.Core()
        model = core.read_model(model_path)
        model.reshape({name: list(a.shape) for name, a in arrays.items()})
        config = {"INFERENCE_PRECISION_HINT": "f32", "PERFORMANCE_HINT": "LATENCY", "NUM_STREAMS": "1",
                  "INFERENCE_NUM_THREADS": str(threads)}
        self.compiled = core.compile_model(model, "CPU", config)
        self.request = self.compiled.create_infer_request()
        self._inputs = {name: np.ascontiguousarray(a) for name, a in arrays.items()}  # kept: the tensors share them
        for name, a in self._inputs.items():
            self.request.set_tensor(name, ov.Tensor(a, shared_memory=True))
        self.names = [o.get_any_name() for o in self.compiled.outputs]
        self.load_ms = (time.perf_counter_ns() - t0) / 1e6
        self.version = ov.__version__
        hint = self.compiled.get_property("INFERENCE_PRECISION_HINT")
        self.precision = hint.get_type_name() if hasattr(hint, "get_type_name") else str(hint)

    def run(self):
        self.request.infer()

    def outputs(self):
        """The last run's outputs by name (copies)."""
        return {n: np.array(self.request.get_output_tensor(i).data) for i, n in enumerate(self.names)}
