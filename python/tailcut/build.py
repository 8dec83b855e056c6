"""tailcut.build - tailcut.build(): imports an ONNX model and optimizes it into an Engine (tc_engine_build, the
GIL released while it runs), with shapes or optimization profiles, a precision and INT8 calibration."""
from __future__ import annotations

import os
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from . import _tailcut
from .calibration import CalibrationSource, cache_path, tempdir
from .engine import Engine, _engine_from_handle

Shape = Sequence[int]
PRECISIONS = {"fp32": 0, "fp16": _tailcut.BUILD_FP16, "bf16": _tailcut.BUILD_BF16, "int8": _tailcut.BUILD_INT8}


def _profiles(shapes: Optional[Mapping[str, Shape]],
              profiles: Optional[Sequence[Mapping[str, Tuple[Shape, Shape, Shape]]]]) -> List[list]:
    if shapes is not None and profiles is not None:
        raise _tailcut.InvalidArgumentError("give shapes= (one static profile) or profiles=, not both")
    if shapes is not None:
        profiles = [{n: (s, s, s) for n, s in shapes.items()}]
    out = []
    for k, p in enumerate(profiles or []):
        if not isinstance(p, Mapping):
            raise TypeError(f"profile {k} must be a dict {{input name: (min, opt, max) shapes}}")
        ranges = []
        for name, r in p.items():
            if len(r) != 3:
                raise _tailcut.InvalidArgumentError(f"profile {k}, input '{name}': give (min, opt, max) shapes")
            ranges.append((name, *(tuple(int(d) for d in s) for s in r)))
        out.append(ranges)
    return out


def _precision_flags(precision: Union[str, Iterable[str]]) -> int:
    names = [precision] if isinstance(precision, str) else list(precision)
    flags = 0
    for p in names:
        if p not in PRECISIONS:
            raise _tailcut.InvalidArgumentError(f"precision must be among {sorted(PRECISIONS)}, not {p!r}")
        flags |= PRECISIONS[p]
    return flags


def build(model: Union[str, "os.PathLike[str]", bytes], *,
          shapes: Optional[Mapping[str, Shape]] = None,
          profiles: Optional[Sequence[Mapping[str, Tuple[Shape, Shape, Shape]]]] = None,
          precision: Union[str, Sequence[str]] = "fp32",
          calibration: Optional[CalibrationSource] = None,
          calibration_method: str = "entropy",
          percentile: float = 99.99,
          timing_cache: Optional[Union[str, "os.PathLike[str]"]] = None,
          threads: int = 0,
          tactics_fixed: bool = False,
          disabled_passes: Sequence[str] = (),
          fp32_layers: Sequence[str] = (),
          backend: Optional[str] = None) -> Engine:
    """Optimizes an ONNX model (a file path, or the file's bytes) for this machine and returns its Engine.

    shapes: {input name: shape}, one static profile (min = opt = max) for the inputs with symbolic dims;
    profiles: a list of {input name: (min, opt, max)} (TensorRT's optimization profiles); neither: the model's
    static shapes. precision: "fp32", "fp16", "bf16" or "int8", or a list of them that the tuner may mix
    (["int8", "fp16"]); layers without such a kernel on this CPU stay FP32. calibration (int8): a calibration
    cache path (tailcut calibrate, a previous write_cache), a Calibrator (get_batch / read_cache /
    write_cache) or an iterable of {input name: array} samples, observed with calibration_method "entropy",
    "minmax" or "percentile" (percentile=). timing_cache: a file the tuner reads and updates.
    threads: a context's threads (0: this process's CPU budget). tactics_fixed: no timing (fast builds).
    disabled_passes: names of optimization passes to switch off. fp32_layers: node names kept in FP32.
    backend: "cpu" (default) or "cuda" where the library was built with it."""
    flags = _precision_flags(precision)
    if tactics_fixed:
        flags |= _tailcut.BUILD_TACTICS_FIXED
    if (flags & _tailcut.BUILD_INT8) and calibration is None:
        raise _tailcut.InvalidArgumentError("precision 'int8' needs calibration= (samples, a Calibrator or a "
                                            "calibration cache path)")
    if calibration is not None and not (flags & _tailcut.BUILD_INT8):
        raise _tailcut.InvalidArgumentError("calibration= is for precision 'int8'")
    known = _tailcut.pass_flags()
    disabled = 0
    for name in disabled_passes:
        if name not in known:
            raise _tailcut.InvalidArgumentError(f"unknown pass {name!r} (passes: {', '.join(known)})")
        disabled |= known[name]
    ranges = _profiles(shapes, profiles)
    handle = _tailcut.model_load(model if isinstance(model, bytes) else os.fspath(model))
    with tempdir() as work:
        cache = None
        if calibration is not None:
            names = [i[0] for i in _tailcut.model_io(handle)[0]]
            cache = cache_path(handle, names, calibration, calibration_method, percentile, work)
        engine = _tailcut.engine_build(
            handle, threads=int(threads), flags=flags, disabled_passes=disabled, profiles=ranges,
            timing_cache=os.fspath(timing_cache) if timing_cache is not None else None, calib_cache=cache,
            fp32_layers=list(fp32_layers), backend=backend)
    return _engine_from_handle(engine)
