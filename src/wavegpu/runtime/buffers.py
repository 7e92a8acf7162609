"""Kernel arguments -> one device memory, and back: the calling convention of docs/sdk.md.

Each array becomes one buffer at an aligned offset with a guard gap after it (an overrun lands
in no array and traps); overlapping views of one array become one buffer that every parameter
addresses; scalars become register bits, checked against their type's range. After a run only
the arrays the kernel may write are copied back, only where they changed, and only when every
change lies inside such an array.
"""

from __future__ import annotations

import contextlib
import math
import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.lib.array_utils import byte_bounds

from ..emulator import BufferRegion
from ..errors import WaveError
from ..isa.types import DataType, Kind
from ..wbin.program import Kernel, Param

ALIGN = 256  # buffer alignment in device memory (enough for every vector access)
GUARD = 256  # bytes before the first buffer and after each one that belong to no array

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

# the integer range a 32-bit scalar parameter accepts, by type (untyped bits take either sign)
INT_RANGES: dict[DataType, tuple[int, int]] = {
    DataType.S32: (-(1 << 31), (1 << 31) - 1),
    DataType.U32: (0, (1 << 32) - 1),
    DataType.B32: (-(1 << 31), (1 << 32) - 1),
    DataType.PRED: (0, 1),
    DataType.S16: (-(1 << 15), (1 << 15) - 1),
    DataType.U16: (0, (1 << 16) - 1),
    DataType.B16: (-(1 << 15), (1 << 16) - 1),
    DataType.S8: (-128, 127),
    DataType.U8: (0, 255),
    DataType.B8: (-128, 255),
}


# the kernel languages' names where they differ from the ISA's (docs/compiler.md)
LANGUAGE_NAMES = {DataType.S32: "i32", DataType.S16: "i16", DataType.S8: "i8", DataType.PRED: "bool"}


def type_name(dt: DataType) -> str:
    return LANGUAGE_NAMES.get(dt, dt.text)


def vector_widths(kernel: Kernel) -> dict[int, int]:
    """The widest vector access (.v2/.v4: 8 or 16 bytes) the kernel makes through each buffer
    parameter, by the access table; a parameter's address must be a multiple of it."""
    out: dict[int, int] = {}
    if kernel.accesses is None:
        return out
    for inst, tag in zip(kernel.instructions, kernel.accesses):
        spec = inst.spec
        if tag is not None and spec.width > 4 and any(o.kind in (Kind.VEC2, Kind.VEC4) for o in spec.operands):
            out[tag] = max(out.get(tag, 0), spec.width)
    return out


@dataclass(frozen=True)
class Slot:
    """Where a buffer argument lives in device memory."""

    name: str
    offset: int
    count: int
    dtype: np.dtype
    index: int = -1  # the parameter's position

    @property
    def nbytes(self) -> int:
        return self.count * self.dtype.itemsize


@dataclass
class _Group:
    """One device buffer: one host array (copied contiguous), or overlapping contiguous views of one."""

    offset: int  # in device memory
    nbytes: int
    members: list[tuple[Param, Slot, np.ndarray | None]]  # the caller's array, None for a count


@dataclass
class Layout:
    memory: np.ndarray  # uint8 device-memory image
    args: list[int]  # register presets r0..r(k-1)
    buffers: dict[str, Slot]
    groups: list[_Group] = field(default_factory=list)

    def read(self, memory: np.ndarray, name: str) -> np.ndarray:
        """Buffer `name` from a device memory image (a copy, with the parameter's element type)."""
        s = self.buffers[name]
        return memory[s.offset : s.offset + s.nbytes].view(s.dtype).copy()

    def regions(self) -> list[BufferRegion]:
        """Where every array lives, for the emulator's bounds checks (emulate(buffers=...))."""
        return [BufferRegion(s.index, s.name, s.offset, s.nbytes, s.dtype.itemsize) for s in self.buffers.values()]

    def write_back(self, memory: np.ndarray) -> list[str]:
        """Copy what the kernel changed into the caller's arrays; the names of the arrays written.

        Checks every buffer and every guard gap first, and writes nothing if a change lies outside
        the arrays the kernel may write (a write out of bounds of its array, on a device that
        cannot trap it). The comparisons go in chunks (COMPARE_CHUNK bytes), so the temporaries
        stay small beside the device memory (docs/performance.md: a kernel call's peak memory)."""
        start = 0
        for g in sorted(self.groups, key=lambda g: g.offset):
            self._no_change(memory, start, g.offset)
            start = max(start, g.offset + g.nbytes)
        self._no_change(memory, start, self.memory.size)
        plan: list[tuple[np.ndarray, np.ndarray]] = []
        for g in self.groups:
            before = self.memory[g.offset : g.offset + g.nbytes]
            after = memory[g.offset : g.offset + g.nbytes]
            spans = [
                (s.offset - g.offset, s.offset - g.offset + s.nbytes)
                for p, s, a in g.members
                if p.writable and a is not None
            ]
            stray = _first_stray(before, after, spans)
            if stray >= 0:
                at = stray + g.offset
                owners = [s.name for _, s, _ in g.members if s.offset <= at < s.offset + s.nbytes]
                raise WaveError(
                    f"the kernel changed array {', '.join(repr(n) for n in owners)} (device address {at}), "
                    "which it has no right to write: a write out of bounds of another array? "
                    "Nothing was copied back; run with check=True to find the access"
                )
            for p, s, a in g.members:
                if p.writable and a is not None:
                    lo = s.offset - g.offset
                    new = after[lo : lo + s.nbytes]
                    if first_difference(new, before[lo : lo + s.nbytes]) >= 0:
                        plan.append((a, new.view(s.dtype).reshape(a.shape)))
        for a, new in plan:
            np.copyto(a, new)
        written = {id(a) for a, _ in plan}
        return [s.name for g in self.groups for p, s, a in g.members if p.writable and id(a) in written]

    def _no_change(self, memory: np.ndarray, lo: int, hi: int) -> None:
        """Bytes lo..hi belong to no array: a kernel that changed one wrote out of bounds."""
        i = first_difference(self.memory[lo:hi], memory[lo:hi]) if hi > lo else -1
        if i >= 0:
            raise WaveError(
                f"the kernel wrote device address {lo + i}, which belongs to no array (a write out of bounds; "
                "the emulator traps it, other devices cannot): nothing was copied back"
            )


COMPARE_CHUNK = 1 << 22  # bytes compared at a time by write_back (bounds its temporaries)


def first_difference(x: np.ndarray, y: np.ndarray) -> int:
    """The first index where two equal-length uint8 arrays differ, or -1 (compared in chunks)."""
    for i in range(0, x.size, COMPARE_CHUNK):
        diff = x[i : i + COMPARE_CHUNK] != y[i : i + COMPARE_CHUNK]
        if diff.any():
            return i + int(np.argmax(diff))
    return -1


def _first_stray(before: np.ndarray, after: np.ndarray, spans: list[tuple[int, int]]) -> int:
    """The first byte that changed from `before` to `after` outside every [lo, hi) of `spans`, or -1."""
    for i in range(0, before.size, COMPARE_CHUNK):
        changed = before[i : i + COMPARE_CHUNK] != after[i : i + COMPARE_CHUNK]
        if not changed.any():
            continue
        for lo, hi in spans:  # the writable arrays' bytes in this chunk may change
            changed[max(lo - i, 0) : max(hi - i, 0)] = False
        if changed.any():
            return i + int(np.argmax(changed))
    return -1


def slot_bytes(nbytes: int) -> int:
    """Device memory one buffer of nbytes takes in a layout: itself and its guard gap, aligned."""
    return -(-(nbytes + GUARD) // ALIGN) * ALIGN


def device_bytes(sizes: Iterable[int]) -> int:
    """Device memory a layout of buffers of these sizes needs (pack's layout, no aliasing)."""
    return GUARD + sum(slot_bytes(n) for n in sizes)


def scalar_bits(value: object, p: Param) -> int:
    """A scalar argument's 32 register bits for a parameter of type p.dtype; out of range is an error."""
    dt = p.dtype
    # the common cases first, with the general path's results; anything else (errors) below
    if dt is DataType.F32 and isinstance(value, float | np.floating):
        v = float(value)
        if v == v:  # not a NaN (whose bits the general path's NumPy conversion gives)
            with contextlib.suppress(OverflowError):  # a finite value beyond f32's range: named below
                return struct.unpack("<I", struct.pack("<f", v))[0]
    elif type(value) is int and dt in INT_RANGES:
        lo, hi = INT_RANGES[dt]
        if lo <= value <= hi:
            return value & 0xFFFFFFFF
    where = f"parameter {p.name!r} ({type_name(dt)})"
    if isinstance(value, np.ndarray | list | tuple | str | bytes | complex | np.complexfloating) or value is None:
        raise WaveError(f"{where} needs a number, got {type(value).__name__} {value!r:.60}")
    if dt.bits == 64:
        raise WaveError(f"{where}: 64-bit scalars do not fit a 32-bit register; pass a one-element array")
    if dt in (DataType.F32, DataType.F16):
        try:
            v = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError, OverflowError) as e:
            raise WaveError(f"{where}: cannot use {value!r} as a number: {e}") from None
        ft = np.float32 if dt is DataType.F32 else np.float16
        with np.errstate(over="ignore"):
            f = ft(v)
        if math.isfinite(v) and not np.isfinite(f):
            raise WaveError(f"{where}: {value!r} is out of range (largest finite: {float(np.finfo(ft).max)!r})")
        if dt is DataType.F32:
            return struct.unpack("<I", f.tobytes())[0]
        return int(np.asarray(f).view(np.uint16))
    if isinstance(value, float | np.floating) and not (math.isfinite(float(value)) and float(value).is_integer()):
        raise WaveError(f"{where} needs an integer, got {value!r}")
    try:
        v = int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError, OverflowError) as e:
        raise WaveError(f"{where}: cannot use {value!r} as an integer: {e}") from None
    lo, hi = INT_RANGES.get(dt, (-(1 << 31), (1 << 32) - 1))
    if not lo <= v <= hi:
        raise WaveError(f"{where}: {v} is out of range ({lo} to {hi})")
    return v & 0xFFFFFFFF


HIDDEN_SUFFIXES = ("__len", "__shape0", "__shape1")


def hidden_of(kernel: Kernel) -> dict[str, tuple[str, str]]:
    """The hidden parameters (x__len, A__shape0, A__shape1 of a buffer parameter x or A, added by
    the compiler for len(x), x.shape[k] and 2-D indexing): name -> (array parameter, suffix)."""
    buffers = {p.name for p in kernel.params if p.kind == "buffer"}
    out = {}
    for p in kernel.params:
        for suffix in HIDDEN_SUFFIXES:
            if p.kind == "scalar" and p.name.endswith(suffix) and p.name[: -len(suffix)] in buffers:
                out[p.name] = (p.name[: -len(suffix)], suffix)
    return out


def _hidden_value(kernel: Kernel, array: str, suffix: str, v: object) -> int:
    """The value of a hidden argument from its array: the element count, or a dimension of a 2-D
    array (which must then be 2-D)."""
    two_d = array + "__shape1" in {p.name for p in kernel.params}
    where = f"parameter {array!r}"
    if isinstance(v, int | np.integer) and not isinstance(v, bool | np.bool_):  # a count of zeros
        if two_d:
            raise WaveError(f"{where} is a 2-D array: pass a 2-D NumPy array, not a count")
        n = int(v)
    elif isinstance(v, np.ndarray) or _device_like(v):  # a device array, a CuPy array, a torch tensor
        shape = tuple(int(d) for d in v.shape)  # type: ignore[attr-defined]
        if two_d and len(shape) != 2:
            raise WaveError(f"{where} is a 2-D array ([:, :]): pass a 2-D array, got shape {shape}")
        n = math.prod(shape) if suffix == "__len" else shape[int(suffix[-1])]
    else:
        return 0  # _array refuses the value with its own message
    if n >= 1 << 31:
        raise WaveError(f"{where}: {n} elements do not fit the i32 that len() and .shape give")
    return n


def _device_like(v: object) -> bool:
    """A device array (runtime/device_arrays.py) or another library's CUDA array."""
    return hasattr(v, "__dlpack_device__") and hasattr(v, "shape") and not isinstance(v, np.ndarray)


_HIDDEN: dict[int, tuple[Kernel, dict[str, tuple[str, str]]]] = {}  # id(kernel) -> (kernel, hidden_of)


def bind(kernel: Kernel, values: Sequence[object] | Mapping[str, object]) -> list[object]:
    """The arguments in parameter order, from positions or names; a count or name mismatch is an
    error. Hidden parameters (hidden_of) are not passed: they are computed from their arrays."""
    seen = _HIDDEN.get(id(kernel))
    if seen is None or seen[0] is not kernel:
        seen = _HIDDEN[id(kernel)] = (kernel, hidden_of(kernel))
    hidden = seen[1]
    if hidden:
        params = [p for p in kernel.params if p.name not in hidden]
        got = _bind(kernel.name, params, values)
        by_name = {p.name: v for p, v in zip(params, got)}
        return [
            _hidden_value(kernel, *hidden[p.name], by_name[hidden[p.name][0]]) if p.name in hidden else by_name[p.name]
            for p in kernel.params
        ]
    return _bind(kernel.name, list(kernel.params), values)


def _bind(name: str, params: list[Param], values: Sequence[object] | Mapping[str, object]) -> list[object]:
    if isinstance(values, Mapping):
        unknown = set(values) - {p.name for p in params}
        if unknown:
            raise WaveError(
                f"kernel {name!r} has no parameter(s) {', '.join(sorted(unknown))}; "
                f"parameters: {', '.join(p.name for p in params) or '(none)'}"
            )
        missing = [p.name for p in params if p.name not in values]
        if missing:
            raise WaveError(f"kernel {name!r}: missing argument(s) for {', '.join(missing)}")
        return [values[p.name] for p in params]
    seq = list(values)
    if len(seq) != len(params):
        raise WaveError(f"kernel {name!r} takes {len(params)} argument(s), got {len(seq)}")
    return seq


def _array(p: Param, v: object, counts: bool) -> np.ndarray | int:
    dt = NUMPY_TYPES[p.dtype]
    where = f"parameter {p.name!r} ({type_name(p.dtype)}[])"
    if counts and isinstance(v, int | np.integer) and not isinstance(v, bool | np.bool_):
        if not 0 <= int(v) < (1 << 32):
            raise WaveError(f"{where}: {v} elements do not fit the 32-bit device memory")
        return int(v)
    if not isinstance(v, np.ndarray):
        raise WaveError(
            f"{where} needs a NumPy array, got {type(v).__name__}: what the kernel writes could not be "
            f"returned (pass np.asarray(value, dtype=np.{dt.name}))"
        )
    if v.dtype != dt:
        raise WaveError(
            f"{where} needs an array of {dt} (NumPy {dt.str}), got {v.dtype} ({v.dtype.str}); "
            f"wavegpu never converts arrays: pass x.astype(np.{dt.name}) and read the result from it"
        )
    if p.writable and not v.flags.writeable:
        raise WaveError(f"{where}: the kernel may write this array, but the array passed is read-only")
    return v


def _view_key(a: np.ndarray) -> tuple[object, ...]:
    return (a.__array_interface__["data"][0], a.shape, a.strides, a.dtype.str)


def _components(arrays: list[np.ndarray]) -> list[list[int]]:
    """Indices of `arrays` grouped by shared memory (connected components)."""
    parent = list(range(len(arrays)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    bounds = [byte_bounds(a) if a.size else (0, 0) for a in arrays]
    order = sorted(range(len(arrays)), key=lambda i: bounds[i][0])
    for n, i in enumerate(order):
        for j in order[n + 1 :]:
            if bounds[j][0] >= bounds[i][1]:
                break
            if arrays[i].size and arrays[j].size and np.shares_memory(arrays[i], arrays[j]):
                parent[find(j)] = find(i)
    comps: dict[int, list[int]] = {}
    for i in range(len(arrays)):
        comps.setdefault(find(i), []).append(i)
    return list(comps.values())


def pack(
    kernel: Kernel,
    values: Sequence[object] | Mapping[str, object],
    extra_bytes: int = 0,
    counts: bool = True,
) -> Layout:
    """Place buffer arguments in one device memory and encode scalars (docs/sdk.md).

    `values` follows the kernel's parameters, by position or by name. A buffer value is a NumPy
    array of exactly the parameter's element type, or (when `counts`) an int: that many zeros."""
    seq = bind(kernel, values)
    args: list[int] = [0] * len(seq)
    arrays: list[tuple[int, np.ndarray]] = []
    zeros: list[tuple[int, int]] = []
    for i, (p, v) in enumerate(zip(kernel.params, seq)):
        if p.kind == "scalar":
            args[i] = scalar_bits(v, p)
            continue
        a = _array(p, v, counts)
        if isinstance(a, int):
            zeros.append((i, a))
        else:
            arrays.append((i, a))
    params = kernel.params
    images: list[tuple[int, np.ndarray]] = []
    groups: list[_Group] = []
    slots: dict[str, Slot] = {}
    offset = GUARD

    def place(nbytes: int) -> int:
        nonlocal offset
        at = offset
        offset += slot_bytes(nbytes)
        return at

    for comp in _components([a for _, a in arrays]):
        members = [arrays[c] for c in comp]
        views = {_view_key(a) for _, a in members}
        if len(views) == 1:  # one array (passed once, or the same view several times): copied into the image
            first = members[0][1]
            nbytes = first.size * first.dtype.itemsize  # from shape and dtype: nothing copied before the size check
            at = place(nbytes)
            g = _Group(at, nbytes, [])
            for i, a in members:
                s = Slot(params[i].name, at, a.size, a.dtype, i)
                g.members.append((params[i], s, a))
            images.append((at, first))
        else:  # overlapping views of one array: one buffer, each parameter at its own address
            for i, a in members:
                if not a.flags.c_contiguous:
                    others = ", ".join(repr(params[j].name) for j, _ in members if j != i)
                    raise WaveError(
                        f"parameter {params[i].name!r} is a non-contiguous view that overlaps {others}: "
                        "one buffer cannot hold both; pass contiguous views (or copies)"
                    )
            lo = min(byte_bounds(a)[0] for _, a in members)
            hi = max(byte_bounds(a)[1] for _, a in members)
            wide = vector_widths(kernel)
            for i, a in members:
                if (byte_bounds(a)[0] - lo) % a.dtype.itemsize:
                    raise WaveError(
                        f"parameter {params[i].name!r} overlaps another argument at a byte offset that is "
                        f"not a multiple of its element size ({a.dtype.itemsize}): its address would be misaligned"
                    )
                w = wide.get(i, 0)
                if w and (byte_bounds(a)[0] - lo) % w:
                    raise WaveError(
                        f"parameter {params[i].name!r} overlaps another argument at byte offset "
                        f"{byte_bounds(a)[0] - lo}, not a multiple of {w}: kernel {kernel.name!r} accesses it "
                        f'{w} bytes at a time (merged vector accesses, docs/compiler.md "Vector access"), '
                        "which needs such an address; pass copies, or compile the kernel with opt=0"
                    )
            at = place(hi - lo)
            g = _Group(at, hi - lo, [])
            for i, a in members:
                start = at + byte_bounds(a)[0] - lo
                s = Slot(params[i].name, start, a.size, a.dtype, i)
                g.members.append((params[i], s, a))
                images.append((start, a.reshape(-1).view(np.uint8)))
        groups.append(g)
        for _, s, _ in g.members:
            slots[s.name] = s
    for i, n in zeros:
        dt = NUMPY_TYPES[params[i].dtype]
        at = place(n * dt.itemsize)
        s = Slot(params[i].name, at, n, dt, i)
        groups.append(_Group(at, s.nbytes, [(params[i], s, None)]))
        slots[s.name] = s
    for g in groups:
        for _, s, _ in g.members:
            args[s.index] = s.offset
    total = offset + extra_bytes
    if total > (1 << 32):
        raise WaveError(f"arguments need {total} bytes of device memory, more than the 32-bit address space")
    mem = np.zeros(total, dtype=np.uint8)
    for at, data in images:  # straight into the image (a strided or broadcast array is never copied twice)
        n = data.size * data.dtype.itemsize
        mem[at : at + n].view(data.dtype).reshape(data.shape)[...] = data
    slots = dict(sorted(slots.items(), key=lambda kv: kv[1].index))
    return Layout(mem, args, slots, groups)
