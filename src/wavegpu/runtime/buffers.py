"""Kernel arguments -> one device memory: buffers placed at aligned offsets, scalars as bits."""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import WaveError
from ..isa.types import DataType
from ..wbin.program import Kernel, Param

ALIGN = 256  # buffer alignment in device memory (enough for every vector access)

NUMPY_TYPES: dict[DataType, np.dtype] = {
    DataType.B8: np.dtype(np.uint8),
    DataType.U8: np.dtype(np.uint8),
    DataType.S8: np.dtype(np.int8),
    DataType.B16: np.dtype(np.uint16),
    DataType.U16: np.dtype(np.uint16),
    DataType.S16: np.dtype(np.int16),
    DataType.F16: np.dtype(np.float16),
    DataType.BF16: np.dtype(np.uint16),
    DataType.B32: np.dtype(np.uint32),
    DataType.U32: np.dtype(np.uint32),
    DataType.S32: np.dtype(np.int32),
    DataType.F32: np.dtype(np.float32),
    DataType.F16X2: np.dtype(np.uint32),
    DataType.BF16X2: np.dtype(np.uint32),
    DataType.B64: np.dtype(np.uint64),
    DataType.U64: np.dtype(np.uint64),
    DataType.S64: np.dtype(np.int64),
    DataType.F64: np.dtype(np.float64),
    DataType.PRED: np.dtype(np.uint32),
}


@dataclass(frozen=True)
class Slot:
    """Where a buffer argument lives in device memory."""

    name: str
    offset: int
    count: int
    dtype: np.dtype

    @property
    def nbytes(self) -> int:
        return self.count * self.dtype.itemsize


@dataclass
class Layout:
    memory: np.ndarray  # uint8 device-memory image
    args: list[int]  # register presets r0..r(k-1)
    buffers: dict[str, Slot]

    def read(self, memory: np.ndarray, name: str) -> np.ndarray:
        """Buffer `name` from a device memory image (a copy, with the parameter's element type)."""
        s = self.buffers[name]
        return memory[s.offset : s.offset + s.nbytes].view(s.dtype).copy()


def scalar_bits(value: object, p: Param) -> int:
    """A scalar argument's 32 register bits for a parameter of type p.dtype."""
    dt = p.dtype
    try:
        if dt is DataType.F32:
            return struct.unpack("<I", struct.pack("<f", float(value)))[0]  # type: ignore[arg-type]
        if dt is DataType.F16:
            return int(np.asarray(float(value), dtype=np.float16).view(np.uint16))  # type: ignore[arg-type]
        if dt.bits == 64:
            raise WaveError(f"parameter {p.name!r}: 64-bit scalars do not fit a 32-bit register; pass a buffer")
        if isinstance(value, float | np.floating) and not float(value).is_integer():
            raise WaveError(f"parameter {p.name!r} ({dt.text}) needs an integer, got {value!r}")
        v = int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError, OverflowError) as e:
        raise WaveError(f"parameter {p.name!r}: cannot use {value!r} as {dt.text}: {e}") from None
    if not -(1 << 31) <= v < (1 << 32):
        raise WaveError(f"parameter {p.name!r}: {v} does not fit in 32 bits")
    return v & 0xFFFFFFFF


def pack(kernel: Kernel, values: Sequence[object] | Mapping[str, object], extra_bytes: int = 0) -> Layout:
    """Place buffer arguments (NumPy arrays) in one device memory and encode scalars.

    `values` follows the kernel's parameters, by position or by name. A buffer value is an
    array (converted to the parameter's element type) or an int (that many zero elements).
    """
    params = kernel.params
    if isinstance(values, Mapping):
        unknown = set(values) - {p.name for p in params}
        if unknown:
            raise WaveError(
                f"kernel {kernel.name!r} has no parameter(s) {', '.join(sorted(unknown))}; "
                f"parameters: {', '.join(p.name for p in params) or '(none)'}"
            )
        missing = [p.name for p in params if p.name not in values]
        if missing:
            raise WaveError(f"missing argument(s) for {', '.join(missing)}")
        seq = [values[p.name] for p in params]
    else:
        seq = list(values)
        if len(seq) != len(params):
            raise WaveError(f"kernel {kernel.name!r} takes {len(params)} argument(s), got {len(seq)}")
    offset = 0
    slots: dict[str, Slot] = {}
    datas: list[tuple[int, np.ndarray]] = []
    args: list[int] = []
    for p, v in zip(params, seq):
        if p.kind == "scalar":
            args.append(scalar_bits(v, p))
            continue
        dt = NUMPY_TYPES[p.dtype]
        if isinstance(v, int | np.integer) and not isinstance(v, bool):
            arr = np.zeros(int(v), dtype=dt)
        else:
            src = np.asarray(v)
            if src.dtype != dt and not np.can_cast(src.dtype, dt, casting="same_kind"):
                raise WaveError(f"parameter {p.name!r} is {p.dtype.text}[]; cannot convert an array of {src.dtype}")
            arr = np.ascontiguousarray(src, dtype=dt).reshape(-1)
        slots[p.name] = Slot(p.name, offset, arr.size, dt)
        datas.append((offset, arr))
        args.append(offset)
        offset += (arr.nbytes + ALIGN - 1) // ALIGN * ALIGN or ALIGN
    total = offset + extra_bytes
    if total > (1 << 32):
        raise WaveError(f"arguments need {total} bytes of device memory, more than the 32-bit address space")
    mem = np.zeros(total, dtype=np.uint8)
    for off, arr in datas:
        mem[off : off + arr.nbytes] = arr.view(np.uint8).reshape(-1)
    return Layout(mem, args, slots)
