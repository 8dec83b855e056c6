"""tailcut._dtypes - NumPy dtypes and libtailcut's tc_dtype codes (the values of ONNX TensorProto.DataType)."""
from __future__ import annotations

import numpy as np

from . import _tailcut

_BY_NAME = {
    "float32": 1, "uint8": 2, "int8": 3, "uint16": 4, "int16": 5, "int32": 6, "int64": 7,
    "bool": 9, "float16": 10, "float64": 11, "uint32": 12, "uint64": 13, "bfloat16": 16,
}
_BY_CODE = {v: k for k, v in _BY_NAME.items()}


def code_of(dtype: np.dtype, what: str) -> int:
    """The tc_dtype code of a NumPy dtype; InvalidArgumentError naming `what` for one tailcut has no type for."""
    dt = np.dtype(dtype)
    if dt.byteorder == ">":
        raise _tailcut.InvalidArgumentError(f"{what}: big-endian {dt} data; convert it with .astype('{dt.newbyteorder('<')}')")
    code = _BY_NAME.get(dt.name)
    if code is None:
        raise _tailcut.InvalidArgumentError(f"{what}: dtype {dt} has no tailcut type (tailcut takes "
                                            f"{', '.join(sorted(_BY_NAME))})")
    return code


def dtype_of(code: int) -> np.dtype:
    """The NumPy dtype of a tc_dtype code (bfloat16 needs the ml_dtypes package)."""
    name = _BY_CODE.get(code)
    if name is None:
        raise _tailcut.UnsupportedError(f"tailcut dtype code {code} has no NumPy type")
    if name == "bfloat16":
        try:
            import ml_dtypes  # noqa: PLC0415 - optional dependency, only for bfloat16 tensors
        except ImportError as exc:
            raise _tailcut.UnsupportedError("a bfloat16 tensor needs the ml_dtypes package") from exc
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)
