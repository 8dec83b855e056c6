"""tailcut.compare - tailcut.compare(a, b, data): runs two engines on the same samples and returns, per output,
the agreement figures of `tailcut compare --json` (computed by the library's tc_compare_* API)."""
from __future__ import annotations

import os
from typing import Any, Dict, Iterable, Mapping, Tuple, Union

import numpy as np

from . import _tailcut
from ._dtypes import code_of
from .build import build
from .engine import Context, Engine, load

Model = Union[Engine, str, "os.PathLike[str]"]


class _Side:
    """One side (A or B): an engine, or an .onnx built for each new set of sample shapes, and its contexts."""

    def __init__(self, model: Model, label: str) -> None:
        self.label = label
        self.onnx = None
        self.engines: Dict[Tuple, Engine] = {}
        self.contexts: Dict[Tuple[int, int], Context] = {}
        if isinstance(model, Engine):
            self.engine = model
        elif os.fspath(model).endswith(".onnx"):
            self.onnx = os.fspath(model)
            self.engine = None
        else:
            self.engine = load(model)

    def run(self, sample: Mapping[str, np.ndarray]) -> Dict[str, np.ndarray]:
        shapes = {n: tuple(np.shape(v)) for n, v in sample.items()}
        engine = self.engine
        if self.onnx is not None:
            key = tuple(sorted(shapes.items()))
            engine = self.engines.get(key)
            if engine is None:
                engine = self.engines[key] = build(self.onnx, shapes=shapes)
        profile = engine.profile_for(shapes)
        ctx = self.contexts.get((id(engine), profile))
        if ctx is None:
            ctx = self.contexts[(id(engine), profile)] = engine.create_context(profile)
        return ctx.run(sample)


def compare(a: Model, b: Model, data: Iterable[Mapping[str, np.ndarray]]) -> Dict[str, Any]:
    """Runs A and B (each an Engine, a plan path, or an .onnx path built at each sample's shapes) on every sample
    of `data` ({input name: array} dicts) and returns {"samples": n, "outputs": {name: figures}}, A being the
    reference. Figures per output over all elements of all samples, as `tailcut compare --json` reports them:
    dtype, shape (of the first sample), shape_varies, elements, exact; for float outputs cosine, max_abs_error,
    mean_abs_error, max_rel_error, rel_l2_error, sqnr_db, rows, top1, top5 (None where undefined),
    nan_mismatches, finite; for other types mismatches (elements that differ)."""
    sa, sb = _Side(a, "A"), _Side(b, "B")
    stats: Dict[str, Any] = {}
    meta: Dict[str, Dict[str, Any]] = {}
    n = 0
    for k, sample in enumerate(data):
        if not isinstance(sample, Mapping):
            raise TypeError(f"sample {k} must be a dict {{input name: numpy array}}")
        oa, ob = sa.run(sample), sb.run(sample)
        if set(oa) != set(ob):
            raise _tailcut.InvalidArgumentError(f"A's outputs {sorted(oa)} differ from B's {sorted(ob)}")
        for name, x in oa.items():
            y = ob[name]
            if name not in stats:
                stats[name] = _tailcut.compare_new()
                meta[name] = {"dtype": str(x.dtype), "shape": list(x.shape), "shape_varies": False}
            elif list(x.shape) != meta[name]["shape"]:
                meta[name]["shape_varies"] = True
            pair = [(name, code_of(x.dtype, f"A's output '{name}'"), x.shape, x),
                    (name, code_of(y.dtype, f"B's output '{name}'"), y.shape, y)]
            try:
                _tailcut.compare_add(stats[name], pair)
            except _tailcut.InvalidArgumentError as exc:
                raise _tailcut.InvalidArgumentError(f"output '{name}' on sample {k}: {exc}") from None
        n += 1
    if n == 0:
        raise _tailcut.InvalidArgumentError("compare: data gave no samples")
    return {"samples": n,
            "outputs": {name: {**meta[name], **_tailcut.compare_figures(st)} for name, st in stats.items()}}
