"""tailcut.calibration - INT8 calibration data for tailcut.build: a calibrator object in TensorRT's style
(get_batch / read_cache / write_cache) or a plain iterable of {input name: array} samples, observed by the
library's calibrator (tc_calibrator_*) into a calibration cache."""
from __future__ import annotations

import os
import tempfile
from typing import Dict, Iterable, List, Mapping, Optional, Union

import numpy as np

from . import _tailcut
from ._dtypes import code_of

METHODS = {"entropy": _tailcut.CALIB_ENTROPY, "minmax": _tailcut.CALIB_MINMAX,
           "percentile": _tailcut.CALIB_PERCENTILE}


class Calibrator:
    """Base of calibrators (TensorRT's IInt8Calibrator protocol, NumPy arrays on the host). Any object with a
    get_batch method works; read_cache and write_cache are optional.

    get_batch(names) returns the next sample as {input name: array} (names: the model's inputs), or None when
    there are no more. read_cache() returns a calibration cache (bytes) written before, or None to calibrate;
    write_cache(cache) receives the cache calibration produced, to be returned by read_cache next time."""

    def get_batch(self, names: List[str]) -> Optional[Mapping[str, np.ndarray]]:
        raise NotImplementedError

    def read_cache(self) -> Optional[bytes]:
        return None

    def write_cache(self, cache: bytes) -> None:
        return None


CalibrationSource = Union[str, "os.PathLike[str]", Calibrator, Iterable[Mapping[str, np.ndarray]]]


def _samples(source, names: List[str]) -> Iterable[Mapping[str, np.ndarray]]:
    if hasattr(source, "get_batch"):
        while True:
            batch = source.get_batch(list(names))
            if batch is None:
                return
            yield batch
    else:
        yield from source


class Calibration:
    """What calibrating produced: the cache file, and (when kept) the library's calibrator with its samples as
    flat (name, dtype, shape, array) tuples in model input order, which an accuracy threshold measures on."""

    def __init__(self, path: str, handle=None, samples: Optional[list] = None, num_samples: int = 0) -> None:
        self.path, self.handle, self.samples, self.num_samples = path, handle, samples, num_samples


def calibrate(model_handle, names: List[str], source, method: str, percentile: float, path: str,
              keep: bool = False) -> Calibration:
    """Runs every sample of `source` through the library's calibrator of the model and writes the cache to
    `path`; with keep, the calibrator and the samples (every model input of each) stay in the result."""
    if method not in METHODS:
        raise _tailcut.InvalidArgumentError(f"calibration_method must be one of {sorted(METHODS)}, not {method!r}")
    cal = _tailcut.calib_create(model_handle)
    count, kept = 0, []
    for k, sample in enumerate(_samples(source, names)):
        if not isinstance(sample, Mapping):
            raise TypeError(f"calibration sample {k} must be a dict {{input name: numpy array}}, not "
                            f"{type(sample).__name__}")
        args = []
        for name, value in sample.items():
            arr = np.ascontiguousarray(np.asarray(value))
            args.append((name, code_of(arr.dtype, f"calibration sample {k}, input '{name}'"), arr.shape, arr))
        count = _tailcut.calib_add(cal, args)
        if keep:
            by_name = {a[0]: a for a in args}
            missing = [n for n in names if n not in by_name]
            if missing:
                raise _tailcut.InvalidArgumentError(f"calibration sample {k} lacks input(s) {missing}")
            kept.extend(by_name[n] for n in names)
    if count == 0:
        raise _tailcut.InvalidArgumentError("calibration gave no samples: INT8 needs at least one")
    _tailcut.calib_save(cal, METHODS[method], float(percentile), path)
    return Calibration(path, cal if keep else None, kept if keep else None, count)


def prepare(model_handle, names: List[str], source: CalibrationSource, method: str, percentile: float,
            workdir: str, keep: bool = False) -> Calibration:
    """The calibration cache for tc_build_options.calib_cache: `source` itself when it is a path, the calibrator's
    read_cache() bytes, or a cache calibrated now into `workdir` (given to write_cache). keep (an accuracy
    threshold): always calibrate, and keep the calibrator and samples."""
    if isinstance(source, (str, os.PathLike)):
        if keep:
            raise _tailcut.InvalidArgumentError("accuracy_threshold= measures on the calibration samples: give "
                                                "calibration= samples or a Calibrator, not a cache file")
        return Calibration(os.fspath(source))
    path = os.path.join(workdir, "calibration.cache")
    if hasattr(source, "get_batch"):
        cached = source.read_cache() if hasattr(source, "read_cache") and not keep else None
        if cached is not None:
            with open(path, "wb") as f:
                f.write(bytes(cached))
            return Calibration(path)
    elif not hasattr(source, "__iter__"):
        raise TypeError("calibration must be a cache path, a Calibrator (get_batch) or an iterable of dicts "
                        "{input name: numpy array}")
    result = calibrate(model_handle, names, source, method, percentile, path, keep)
    if hasattr(source, "write_cache"):
        with open(path, "rb") as f:
            source.write_cache(f.read())
    return result


def tempdir() -> tempfile.TemporaryDirectory:
    return tempfile.TemporaryDirectory(prefix="tailcut-calib-")
