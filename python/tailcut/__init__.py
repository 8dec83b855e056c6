"""tailcut - Python bindings of libtailcut, an ONNX inference optimizer and runtime.

    import numpy as np, tailcut
    engine = tailcut.build("model.onnx", shapes={"input": (1, 3, 224, 224)}, precision="fp32")
    engine.save("model.plan")                      # tailcut.load("model.plan") maps it back
    ctx = engine.create_context()                  # one per thread; run() releases the GIL
    out = ctx.run({"input": np.random.rand(1, 3, 224, 224).astype(np.float32)})

Errors raise tailcut.Error subclasses (InvalidArgumentError, UnsupportedError, CorruptFileError, ...) whose
message is the library's. `python -m tailcut ...` runs the tailcut command line.
"""
from ._tailcut import (CorruptFileError, Error, InternalError, InvalidArgumentError, InvalidGraphError, IOError,
                       OutOfMemoryError, UnsupportedError, UnsupportedHardwareError)
from .build import build
from .calibration import Calibrator
from .compare import compare
from .engine import Context, Engine, Profile, TensorInfo, load

__all__ = ["build", "load", "compare", "Engine", "Context", "TensorInfo", "Profile", "Calibrator", "Error",
           "InvalidArgumentError", "UnsupportedError", "UnsupportedHardwareError", "CorruptFileError",
           "OutOfMemoryError", "IOError", "InvalidGraphError", "InternalError"]
__version__ = "0.1.0"
