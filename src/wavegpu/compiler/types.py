"""Kernel-language types: i32 u32 f32 f16 f64 bool, and arrays of them in device or local memory.

u8 i8 u16 i16 are storage-only array element types: an element read is an u32 (u8, u16) or i32
(i8, i16) value, zero- or sign-extended; an element written keeps the low 8 or 16 bits of an u32 or
i32 value (wrapping, as C's conversions do)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..isa.types import DataType


@dataclass(frozen=True)
class ScalarType:
    """A scalar type. In annotations `wg.f32[:]` makes an array type; called in plain Python
    (outside a compiled kernel) it converts like NumPy (32-bit integers wrap)."""

    name: str
    bits: int
    kind: str  # "int", "uint", "float", "bool"

    def __getitem__(self, item: object) -> ArrayType:
        if item == slice(None):
            return ArrayType(self, "global")
        if item == (slice(None), slice(None)):
            return ArrayType(self, "global", 2)
        raise TypeError(f"array types are written {self.name}[:] or {self.name}[:, :]")

    def __call__(self, value: object) -> object:
        return NUMPY[self.name](value)

    def __repr__(self) -> str:
        return self.name

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_int(self) -> bool:
        return self.kind in ("int", "uint")

    @property
    def signed(self) -> bool:
        return self.kind == "int"

    @property
    def size(self) -> int:
        return max(1, self.bits // 8) if self.kind != "bool" else 1

    @property
    def wide(self) -> bool:
        return self.bits == 64

    @property
    def narrow(self) -> bool:
        """An 8- or 16-bit integer: a storage-only array element type."""
        return self.kind in ("int", "uint") and self.bits < 32

    @property
    def value_type(self) -> ScalarType:
        """The type of a value read from (or written to) an array of this element type."""
        if self.narrow:
            return I32 if self.signed else U32
        return self

    @property
    def data_type(self) -> DataType:
        return {
            "u8": DataType.U8,
            "i8": DataType.S8,
            "u16": DataType.U16,
            "i16": DataType.S16,
            "i32": DataType.S32,
            "u32": DataType.U32,
            "f32": DataType.F32,
            "f16": DataType.F16,
            "f64": DataType.F64,
            "bool": DataType.PRED,
        }[self.name]


@dataclass(frozen=True)
class ArrayType:
    elem: ScalarType
    space: (
        str  # "global" (a buffer parameter), "local" (local_array), "private" (a per-thread array passed to a helper)
    )
    ndim: int = 1  # 2: indexed a[i, j], row-major (C order); the shape is known at run time

    def __repr__(self) -> str:
        dims = ", ".join([":"] * self.ndim)
        return f"{self.elem.name}[{'local' if self.space == 'local' else dims}]"


I32 = ScalarType("i32", 32, "int")
U32 = ScalarType("u32", 32, "uint")
F32 = ScalarType("f32", 32, "float")
F16 = ScalarType("f16", 16, "float")
F64 = ScalarType("f64", 64, "float")
BOOL = ScalarType("bool", 1, "bool")
SCALARS = {t.name: t for t in (I32, U32, F32, F16, F64, BOOL)}
U8 = ScalarType("u8", 8, "uint")
I8 = ScalarType("i8", 8, "int")
U16 = ScalarType("u16", 16, "uint")
I16 = ScalarType("i16", 16, "int")
# storage-only: array element types, never the type of a value (see the module docstring)
NARROW = {t.name: t for t in (U8, I8, U16, I16)}
ELEMENTS = {**SCALARS, **NARROW}


_FLOAT_DTYPES = {"f32": np.float32, "f16": np.float16, "f64": np.float64}


def round_float(v: float, t: ScalarType) -> float:
    """The number v rounded once to the float type t, as IEEE rounding does: beyond the type's
    range it is inf of v's sign (1.0e39 in f32), below it a subnormal or zero; never a warning."""
    try:
        x = float(v)
    except OverflowError:  # an integer beyond the double range (1 followed by 400 zeros)
        return math.inf if v > 0 else -math.inf
    with np.errstate(all="ignore"):
        return float(_FLOAT_DTYPES[t.name](x))


_CANON_BITS = {"f16": 0x7FFF, "f32": 0x7FFFFFFF, "f64": 0x7FFFFFFFFFFFFFFF}
_BITS_DTYPES = {"f16": np.uint16, "f32": np.uint32, "f64": np.uint64}
_HOST_NAN = 0x7FF8000000000000  # the NaN Python and the host's arithmetic make (float("nan"), inf - inf)


def float_bits(v: float, t: ScalarType) -> int:
    """The IEEE bits of v rounded to the float type t (f16 and f32: 16 and 32 bits, f64: 64). A
    NaN the host made (a `nan` literal, the frontend's own inf - inf, either sign) is the canonical
    NaN of DESIGN section 3 (0x7FFF, 0x7FFFFFFF, 0x7FFFFFFFFFFFFFFF); a NaN that sccp folded from
    the ISA's semantics keeps its sign and payload (neg of the canonical NaN is 0xFFFFFFFF in
    f32, as at run time)."""
    x = np.float64(v)
    if x != x and int(x.view(np.uint64)) & ~(1 << 63) == _HOST_NAN:
        return _CANON_BITS[t.name]
    with np.errstate(all="ignore"):
        return int(x.astype(_FLOAT_DTYPES[t.name]).view(_BITS_DTYPES[t.name]))


def _bool(v: object) -> bool:
    return bool(v)


# the NumPy scalar constructor of each type (a Python callable: wg.f32(1.5) makes a value)
NUMPY: dict[str, Callable[[Any], object]] = {
    "i32": np.int32,
    "u32": np.uint32,
    "f32": np.float32,
    "f16": np.float16,
    "f64": np.float64,
    "bool": _bool,
    "u8": np.uint8,
    "i8": np.int8,
    "u16": np.uint16,
    "i16": np.int16,
}

Type = ScalarType | ArrayType
