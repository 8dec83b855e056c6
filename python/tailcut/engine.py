"""tailcut.engine - engines (built or loaded plans), their inputs, outputs and profiles, and execution contexts."""
from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional, Tuple, Union

import numpy as np

from . import _tailcut
from ._dtypes import code_of, dtype_of

Dim = Union[int, str, None]
PathLike = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class TensorInfo:
    """An engine input or output: its name, NumPy dtype and shape, a symbolic dim by its name (e.g. "batch"),
    an unknown one as None."""
    name: str
    dtype: np.dtype
    shape: Tuple[Dim, ...]


@dataclass(frozen=True)
class Profile:
    """One optimization profile: per input name, the (min, opt, max) shapes it accepts."""
    index: int
    ranges: Dict[str, Tuple[Tuple[int, ...], Tuple[int, ...], Tuple[int, ...]]]

    def contains(self, shapes: Mapping[str, Tuple[int, ...]]) -> bool:
        """True when every given input shape lies within this profile's ranges."""
        for name, shape in shapes.items():
            r = self.ranges.get(name)
            if r is None:
                continue
            lo, _, hi = r
            if len(shape) != len(lo) or any(not (a <= s <= b) for s, a, b in zip(shape, lo, hi)):
                return False
        return True


def _tensor_info(raw) -> TensorInfo:
    name, code, rank, dims, dim_names = raw
    if rank < 0:
        shape: Tuple[Dim, ...] = ()
    else:
        shape = tuple(n if d < 0 and n is not None else (None if d < 0 else d) for d, n in zip(dims, dim_names))
    return TensorInfo(name, dtype_of(code), shape)


class Engine:
    """An optimized model for this machine (what tailcut.build returns and tailcut.load maps from a plan file).
    Immutable; several contexts of one engine may run at once on different threads."""

    def __init__(self, handle, _key: object = None) -> None:
        if _key is not _PRIVATE:
            raise TypeError("Engine objects come from tailcut.build() or tailcut.load()")
        self._handle = handle
        self.accuracy: Optional[float] = None  # build(accuracy_threshold=...): the metric reached
        self.build_log = ""                    # build(accuracy_threshold=...): the rounds of the fallback
        ins, outs = _tailcut.engine_io(handle)
        self._inputs = [_tensor_info(r) for r in ins]
        self._outputs = [_tensor_info(r) for r in outs]
        self._profiles = [Profile(i, {n: (tuple(a), tuple(o), tuple(b)) for n, a, o, b in p})
                          for i, p in enumerate(_tailcut.engine_profiles(handle))]

    @property
    def inputs(self) -> List[TensorInfo]:
        """The engine's inputs, in graph order."""
        return list(self._inputs)

    @property
    def outputs(self) -> List[TensorInfo]:
        """The engine's outputs, in graph order."""
        return list(self._outputs)

    @property
    def profiles(self) -> List[Profile]:
        """The optimization profiles (at least one)."""
        return list(self._profiles)

    def steps(self) -> List[Dict[str, str]]:
        """The engine's steps (fused nodes): name, ops, tactic, precision and backend of each."""
        keys = ("name", "ops", "tactic", "precision", "backend")
        return [dict(zip(keys, s)) for s in _tailcut.engine_steps(self._handle)]

    def profile_for(self, shapes: Mapping[str, Tuple[int, ...]]) -> int:
        """Index of the first profile whose ranges hold these input shapes; InvalidArgumentError if none does."""
        for p in self._profiles:
            if p.contains(shapes):
                return p.index
        got = ", ".join(f"{n}: {tuple(s)}" for n, s in shapes.items())
        raise _tailcut.InvalidArgumentError(f"no profile of the engine holds the input shapes {got} "
                                            f"(profiles: {[p.ranges for p in self._profiles]})")

    def save(self, path: PathLike) -> None:
        """Writes the engine as one plan file (byte-identical for identical builds)."""
        _tailcut.engine_save(self._handle, os.fspath(path))

    def create_context(self, profile: int = 0) -> "Context":
        """A context that runs the engine in `profile`, its memory allocated now for the profile's max shapes."""
        if not isinstance(profile, int) or isinstance(profile, bool):
            raise TypeError("profile must be an int")
        return Context(self, _tailcut.context_create(self._handle, profile), profile, _PRIVATE)

    def __repr__(self) -> str:
        return (f"Engine(inputs={[(i.name, str(i.dtype), i.shape) for i in self._inputs]}, "
                f"outputs={[(o.name, str(o.dtype), o.shape) for o in self._outputs]}, profiles={len(self._profiles)})")


_PRIVATE = object()


class Context:
    """Runs an engine. One thread at a time per context (a second thread gets InvalidArgumentError at once);
    create one context per thread to run in parallel. run() releases the GIL while the engine runs."""

    def __init__(self, engine: Engine, handle, profile: int, _key: object = None) -> None:
        if _key is not _PRIVATE:
            raise TypeError("Context objects come from Engine.create_context()")
        self.engine = engine
        self.profile = profile
        self._handle = handle
        self._lock = threading.Lock()

    @property
    def threads(self) -> int:
        """The threads this context's kernels run on."""
        return _tailcut.context_threads(self._handle)

    def run(self, inputs: Mapping[str, np.ndarray],
            out: Optional[Mapping[str, np.ndarray]] = None) -> Dict[str, np.ndarray]:
        """Runs the engine on `inputs` (an array for every engine input) and returns {output name: array}.

        An input array that is C-contiguous and of the input's dtype is read in place (no copy); others are
        copied to a contiguous array of their own dtype first (a wrong dtype is refused by the library, never
        converted). `out` maps output names to writable C-contiguous arrays of the output's dtype and shape that
        receive the results (the returned dict holds those very arrays); outputs not in `out` get new arrays.
        Raises tailcut.InvalidArgumentError (with the library's message) for a wrong dtype, shape, or a shape
        outside the context's profile."""
        if not self._lock.acquire(blocking=False):
            raise _tailcut.InvalidArgumentError("this context is running on another thread: "
                                                "create one context per thread")
        try:
            return self._run(inputs, out or {})
        finally:
            self._lock.release()

    def _run(self, inputs: Mapping[str, np.ndarray], out: Mapping[str, np.ndarray]) -> Dict[str, np.ndarray]:
        if not isinstance(inputs, Mapping):
            raise TypeError("inputs must be a dict {input name: numpy array}")
        names = {i.name for i in self.engine._inputs}
        missing = [n for n in names if n not in inputs]
        if missing:
            raise _tailcut.InvalidArgumentError(f"missing input(s) {sorted(missing)}: every engine input "
                                                f"({sorted(names)}) needs an array")
        args = []
        for name, value in inputs.items():
            arr = np.asarray(value)
            code = code_of(arr.dtype, f"input '{name}'")
            arr = np.ascontiguousarray(arr)  # the same array when it already is: zero-copy
            args.append((name, code, arr.shape, arr))
        outs = {o.name for o in self.engine._outputs}
        unknown = [n for n in out if n not in outs]
        if unknown:
            raise _tailcut.InvalidArgumentError(f"out= names {unknown} are not outputs of the engine "
                                                f"({sorted(outs)})")

        def provide(specs):
            arrays = []
            for name, code, shape in specs:
                dt = dtype_of(code)
                given = out.get(name)
                if given is None:
                    arrays.append((name, code, shape, np.empty(shape, dt)))
                    continue
                if not isinstance(given, np.ndarray):
                    raise TypeError(f"out['{name}'] must be a numpy array")
                if given.dtype != dt or tuple(given.shape) != tuple(shape):
                    raise _tailcut.InvalidArgumentError(
                        f"out['{name}'] is {given.dtype} {tuple(given.shape)}, the output is {dt} {tuple(shape)}")
                if not given.flags.c_contiguous or not given.flags.writeable:
                    raise _tailcut.InvalidArgumentError(f"out['{name}'] must be a writable C-contiguous array")
                arrays.append((name, code, shape, given))
            return arrays

        results = _tailcut.context_run(self._handle, self.engine._handle, args, provide)
        return {name: arr for name, _, _, arr in results}

    def __call__(self, inputs: Mapping[str, np.ndarray], **kw) -> Dict[str, np.ndarray]:
        return self.run(inputs, **kw)


def load(path: PathLike) -> Engine:
    """Maps a plan file written by Engine.save or `tailcut build`; refuses a corrupt file, another format
    version or another machine type (tailcut.CorruptFileError, UnsupportedHardwareError, ...)."""
    return Engine(_tailcut.engine_load(os.fspath(path)), _PRIVATE)


def _engine_from_handle(handle) -> Engine:
    return Engine(handle, _PRIVATE)
