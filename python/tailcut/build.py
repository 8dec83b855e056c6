"""tailcut.build - tailcut.build(): imports an ONNX model and optimizes it into an Engine (tc_engine_build, the
GIL released while it runs), with shapes or optimization profiles, a precision and INT8 calibration."""
from __future__ import annotations

import logging
import os
from typing import Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from . import _tailcut
from .calibration import METHODS, CalibrationSource, prepare, tempdir
from .engine import Engine, _engine_from_handle

Shape = Sequence[int]
Progress = Callable[[str, int, int, Optional[str]], object]
METRICS = {"cosine": _tailcut.ACCURACY_COSINE, "top1": _tailcut.ACCURACY_TOP1}
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
          accuracy_threshold: Optional[float] = None,
          accuracy_metric: str = "cosine",
          timing_cache: Optional[Union[str, "os.PathLike[str]"]] = None,
          threads: int = 0,
          tactics_fixed: bool = False,
          disabled_passes: Sequence[str] = (),
          fp32_layers: Sequence[str] = (),
          backend: Optional[str] = None,
          progress: Optional[Progress] = None) -> Engine:
    """Optimizes an ONNX model (a file path, or the file's bytes) for this machine and returns its Engine.

    shapes: {input name: shape}, one static profile (min = opt = max) for the inputs with symbolic dims;
    profiles: a list of {input name: (min, opt, max)} (TensorRT's optimization profiles); neither: the model's
    static shapes. precision: "fp32", "fp16", "bf16" or "int8", or a list of them that the tuner may mix
    (["int8", "fp16"]); layers without such a kernel on this CPU stay FP32. calibration (int8): a calibration
    cache path (tailcut calibrate, a previous write_cache), a Calibrator (get_batch / read_cache /
    write_cache) or an iterable of {input name: array} samples, observed with calibration_method "entropy",
    "minmax" or "percentile" (percentile=). accuracy_threshold (int8, with calibration samples or a Calibrator):
    the INT8 layers with the noisiest input move out of INT8 (to FP32, or FP16/BF16 where allowed) until the
    engine's accuracy_metric ("cosine": the lowest output cosine similarity, "top1": the lowest top-1 agreement)
    against the FP32 engine on the calibration samples reaches it (`tailcut build --accuracy-threshold`); the
    engine's `accuracy` attribute holds the value reached, the rounds go to the "tailcut" logger. timing_cache: a file the tuner reads and updates.
    threads: a context's threads (0: this process's CPU budget). tactics_fixed: no timing (fast builds).
    disabled_passes: names of optimization passes to switch off. fp32_layers: node names kept in FP32.
    backend: "cpu" (default) or "cuda" where the library was built with it.
    progress: a callable progress(phase, done, total, item) called as the build makes progress (tc_build_options.
    progress): phase "tune" while each compute step's tactic is chosen, done of total steps finished (total is the
    same within one run of a phase; a phase may run more than once, from done 0: once per layout timed, and once per
    round of accuracy_threshold), item the step under way as "name (Op)", None on a phase's last call (done ==
    total). It is called on the building thread, with the GIL held. If it raises, it is not called again and
    build() raises that exception once the library returns (the library cannot stop a build part way; the engine it
    made is discarded)."""
    flags = _precision_flags(precision)
    if tactics_fixed:
        flags |= _tailcut.BUILD_TACTICS_FIXED
    if (flags & _tailcut.BUILD_INT8) and calibration is None:
        raise _tailcut.InvalidArgumentError("precision 'int8' needs calibration= (samples, a Calibrator or a "
                                            "calibration cache path)")
    if calibration is not None and not (flags & _tailcut.BUILD_INT8):
        raise _tailcut.InvalidArgumentError("calibration= is for precision 'int8'")
    if accuracy_threshold is not None:
        if not (flags & _tailcut.BUILD_INT8):
            raise _tailcut.InvalidArgumentError("accuracy_threshold= is for precision 'int8'")
        if accuracy_metric not in METRICS:
            raise _tailcut.InvalidArgumentError(f"accuracy_metric must be one of {sorted(METRICS)}, "
                                                f"not {accuracy_metric!r}")
    known = _tailcut.pass_flags()
    disabled = 0
    for name in disabled_passes:
        if name not in known:
            raise _tailcut.InvalidArgumentError(f"unknown pass {name!r} (passes: {', '.join(known)})")
        disabled |= known[name]
    ranges = _profiles(shapes, profiles)
    handle = _tailcut.model_load(model if isinstance(model, bytes) else os.fspath(model))
    keep = accuracy_threshold is not None
    with tempdir() as work:
        cal = None
        if calibration is not None:
            names = [i[0] for i in _tailcut.model_io(handle)[0]]
            cal = prepare(handle, names, calibration, calibration_method, percentile, work, keep)
        kw = dict(threads=int(threads), flags=flags, disabled_passes=disabled, profiles=ranges,
                  timing_cache=os.fspath(timing_cache) if timing_cache is not None else None,
                  calib_cache=cal.path if cal else None, fp32_layers=list(fp32_layers), backend=backend,
                  progress=progress)
        if not keep:
            return _engine_from_handle(_tailcut.engine_build(handle, **kw))
        engine, achieved, log = _tailcut.engine_build_accurate(
            handle, **kw, calibrator=cal.handle, method=METHODS[calibration_method], percentile=float(percentile),
            metric=METRICS[accuracy_metric], threshold=float(accuracy_threshold), num_inputs=len(names),
            samples=cal.samples)
    for line in log.splitlines():
        logging.getLogger("tailcut").info(line)
    result = _engine_from_handle(engine)
    result.accuracy = achieved
    result.build_log = log
    return result
