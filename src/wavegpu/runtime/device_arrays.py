"""Device-resident arrays: `wg.to_device`, `wg.device_array`, `.copy_to_host()` (numba's names).

Each device has one heap: a range of WAVE's 32-bit device memory that kernels address with byte
addresses, carved by a first-fit sub-allocator into slots (256-byte aligned, each followed by a
guard gap that belongs to no array, as in a call's layout: docs/sdk.md). The bytes from an
array's end to its slot's end, and the heap's first GUARD bytes, hold a canary pattern: after a
call on "cuda" (where nothing traps a write out of bounds) a small kernel (canary_check.py)
compares the canaries around the call's arrays on the GPU and its findings come back in one
small copy; a changed canary is a WaveError naming the array and the kernel. The emulator
traps such a write itself (the call's arrays are its buffer regions); on OpenCL and SYCL the
heap image comes back from the device and is taken only when every changed byte lies in an
array the kernel may write (`_adopt`), which catches the same writes. A kernel call whose
arrays are all device arrays launches on the heap itself: on "cuda" nothing is copied at all;
on the emulator and the OpenCL and SYCL devices the heap is host memory, which the launch hands
to the device as its memory image (those devices copy it in and out themselves). NumPy arrays
in a call with device arrays are placed in the heap for the call, and copied back under the
calling convention's rules; on "cuda", objects with `__cuda_array_interface__` (CuPy arrays,
PyTorch CUDA tensors) are copied device to device, and back when the kernel may write them.

Device arrays on "cuda" export `__cuda_array_interface__` and DLPack (`__dlpack__`), so CuPy and
PyTorch use them without a copy; the heap's base address never moves (its size is fixed when it
is first used: WAVEGPU_HEAP_BYTES, default 1 GiB), so exported pointers stay valid while the
array lives.
"""

from __future__ import annotations

import ctypes
import os
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..emulator import BufferRegion
from ..emulator.launch import check_threads, dim3
from ..errors import WaveError
from ..wbin.program import Kernel, Param
from . import cuda
from .buffers import ALIGN, GUARD, NUMPY_TYPES, _array, bind, scalar_bits, slot_bytes, type_name
from .launch import launch

DEVICES = ("emulator", "opencl", "sycl", "cuda", "cuda-cpp")


def home(device: str) -> str:
    """The heap a device's arrays live in: "cuda-cpp" (the CUDA C++ path) shares the GPU's with "cuda"."""
    return "cuda" if device == "cuda-cpp" else device


DEFAULT_HEAP = 1 << 30


def heap_bytes() -> int:
    """The heap size of a device, fixed when the heap is first used (WAVEGPU_HEAP_BYTES)."""
    text = os.environ.get("WAVEGPU_HEAP_BYTES", "")
    if not text:
        return DEFAULT_HEAP
    try:
        n = int(text, 0)
    except ValueError:
        raise WaveError(f"WAVEGPU_HEAP_BYTES={text!r} is not a number of bytes") from None
    if not 4 * ALIGN <= n <= 1 << 32:
        raise WaveError(f"WAVEGPU_HEAP_BYTES={n} is out of range ({4 * ALIGN} to 4 GiB)")
    return n


# The canary: heap address x outside every array holds _CANARY[x % 16] (a pattern no zero fill,
# small integer or common float run produces by chance).
_CANARY = np.frombuffer(b"WAVE\xa5guard\x5a\xc3!\x96\x0f\xf0", np.uint8)


CHECK_WORDS = 4  # canary_check.py: per range its start, end, first changed address, ~last one
CHECK_THREADS = 256  # canary_check.py: one workgroup (a call's canary ranges are small)
_PATTERN_WORDS = tuple(int(w) for w in _CANARY.view("<u4"))  # the canary_check kernel's p0..p3

READ_SLACK = 64 << 10  # Heap.damage: canary ranges closer than this come back in one copy


def check_table(ranges: Sequence[tuple[int, int]]) -> np.ndarray:
    """The canary check's block for ranges before a check: start, end, and two minima at
    0xFFFFFFFF (nothing changed) per range (canary_check.py)."""
    table = np.full((len(ranges), CHECK_WORDS), 0xFFFFFFFF, np.uint32)
    if ranges:
        table[:, :2] = ranges
    return table


def canary(at: int, nbytes: int) -> np.ndarray:
    """The canary bytes of heap addresses at .. at+nbytes-1."""
    return _CANARY[np.arange(at, at + nbytes) % _CANARY.size]


class Heap:
    """One device's heap: the sub-allocator, and the memory behind it (host memory, or one CUDA
    allocation for "cuda")."""

    def __init__(self, device: str, capacity: int) -> None:
        self.device = device
        self.capacity = capacity
        self.top = GUARD  # addresses below GUARD belong to no array (address 0 is never one)
        self.free: list[tuple[int, int]] = []  # (start, size) of released slots, sorted, merged
        self.live: dict[int, int] = {}  # heap address -> bytes of each array alive in the heap
        self.host: np.ndarray | None = None
        self.ptr = 0  # "cuda": the device address of heap address 0
        # "cuda": the canary check's block (canary_check.py), its capacity in ranges, and the
        # ranges its table holds now (None: to be written before the next check)
        self.block = 0
        self.block_cap = 0
        self.block_ranges: list[tuple[int, int]] | None = None
        self.block_clean = b""  # the block's bytes as written (a check that found nothing)
        self.block_spans: tuple[tuple[int, int], ...] = ()  # the last call's arrays and their gaps
        self.block_gaps: list[tuple[int, int]] = []
        if device == "cuda":
            self.ptr = cuda.heap_alloc(capacity)
        else:  # zero pages the OS maps lazily: an unused heap costs no memory
            self.host = np.zeros(capacity, np.uint8)
        self.write(0, canary(0, GUARD))
        if device == "cuda":  # the canary check's block, made before any array: a call never needs a slot
            self.block_cap = 16
            self.block = self.alloc(self.block_cap * CHECK_WORDS * 4)

    # -- the sub-allocator
    def alloc(self, nbytes: int) -> int:
        """A slot for nbytes (zeroed); its heap address."""
        need = slot_bytes(nbytes)
        for i, (start, size) in enumerate(self.free):
            if size >= need:
                if size == need:
                    del self.free[i]
                else:
                    self.free[i] = (start + need, size - need)
                return self.place(start, nbytes)
        if self.top + need > self.capacity:
            raise WaveError(
                f"device {self.device!r}: the heap is full ({self.capacity} bytes, {self.top} in use; "
                f"an array of {nbytes} bytes does not fit); set WAVEGPU_HEAP_BYTES before the first device array"
            )
        at = self.top
        self.top += need
        return self.place(at, nbytes)

    def place(self, at: int, nbytes: int) -> int:
        """Make the slot at `at` an array of nbytes: zeroed, its gap armed with the canary."""
        self.fill(at, nbytes)
        self.write(at + nbytes, canary(at + nbytes, slot_bytes(nbytes) - nbytes))
        self.live[at] = nbytes
        return at

    def release(self, at: int, nbytes: int) -> None:
        self.live.pop(at, None)
        size = slot_bytes(nbytes)
        self.free.append((at, size))
        self.free.sort()
        merged: list[tuple[int, int]] = []
        for s, n in self.free:
            if merged and merged[-1][0] + merged[-1][1] == s:
                merged[-1] = (merged[-1][0], merged[-1][1] + n)
            else:
                merged.append((s, n))
        if merged and merged[-1][0] + merged[-1][1] == self.top:  # give the end back
            self.top = merged.pop()[0]
        self.free = merged

    # -- the memory
    def fill(self, at: int, nbytes: int) -> None:
        if self.host is not None:
            self.host[at : at + nbytes] = 0
        else:
            cuda.memset(self.ptr + at, nbytes)

    def write(self, at: int, data: np.ndarray) -> None:
        raw = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        if self.host is not None:
            self.host[at : at + raw.size] = raw
        elif raw.size:
            cuda.copy_in(self.ptr + at, raw)

    def read(self, at: int, nbytes: int) -> np.ndarray:
        if self.host is not None:
            return self.host[at : at + nbytes].copy()
        out = np.empty(nbytes, np.uint8)
        if nbytes:
            cuda.copy_out(out, self.ptr + at)
        return out

    # -- the canaries
    def gaps(self, arrays: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
        """The canary ranges [start, end) around arrays (address, bytes): the gap after each one
        (its end to its slot's end) and the GUARD bytes before it (the end of the gap of the slot
        below, or the heap's first GUARD bytes), merged where they touch."""
        spans = sorted(
            span for a, n in arrays for span in ((a - GUARD, a), (a + n, a + slot_bytes(n))) if span[1] > span[0]
        )
        merged: list[tuple[int, int]] = []
        for lo, hi in spans:
            if merged and lo <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
            else:
                merged.append((lo, hi))
        return merged

    def damage(self, arrays: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
        """(first, last) changed heap address of each canary range around arrays that a write
        changed. Only canary bytes are compared; on "cuda" they come back in as few
        device-to-host copies as possible: ranges less than READ_SLACK apart share one copy
        (the array bytes between them travel but are not looked at), since each copy costs a
        round trip of microseconds whatever its size."""
        ranges = self.gaps(arrays)
        reads: list[list[tuple[int, int]]] = []
        for r in ranges:
            if reads and r[0] - reads[-1][-1][1] <= READ_SLACK:
                reads[-1].append(r)
            else:
                reads.append([r])
        out = []
        for group in reads:
            start, end = group[0][0], group[-1][1]
            got = self.host[start:end] if self.host is not None else self.read(start, end - start)
            for lo, hi in group:
                bad = np.flatnonzero(got[lo - start : hi - start] != canary(lo, hi - lo))
                if bad.size:
                    out.append((lo + int(bad[0]), lo + int(bad[-1])))
        return out

    def rearm(self, arrays: Sequence[tuple[int, int]]) -> None:
        """Write the canaries around arrays again (after a reported overrun)."""
        for lo, hi in self.gaps(arrays):
            self.write(lo, canary(lo, hi - lo))
        self.block_ranges = None  # the check's minima are reset with the table

    # -- the device-side canary check ("cuda": canary_check.py)
    def prepare_check(self, arrays: Sequence[tuple[int, int]]) -> tuple[list[tuple[int, int]], list[int]]:
        """The canary ranges around arrays and the check kernel's arguments for them. The
        check's block is allocated (or grown) here, and its table written only when the ranges
        differ from the last call's: a call with the same arrays as the one before copies
        nothing to the device."""
        key = tuple(arrays)
        if key != self.block_spans:
            self.block_spans, self.block_gaps = key, self.gaps(arrays)
        ranges = self.block_gaps
        if len(ranges) > self.block_cap:
            if self.block:
                self.release(self.block, self.block_cap * CHECK_WORDS * 4)
            cap = max(8, 2 * len(ranges))
            self.block = self.alloc(cap * CHECK_WORDS * 4)
            self.block_cap = cap
            self.block_ranges = None
        if ranges != self.block_ranges:
            table = check_table(ranges)
            self.write(self.block, table)
            self.block_ranges, self.block_clean = ranges, table.tobytes()
        return ranges, [0, self.block, len(ranges), *_PATTERN_WORDS]

    def check_result(self, ranges: Sequence[tuple[int, int]], got: np.ndarray) -> list[tuple[int, int]]:
        """(first, last) changed heap address of each range whose canary the check found
        changed, from the block as it came back (`got`, the words of len(ranges) entries). A
        table entry that is not what was written means a write out of bounds landed in the block
        itself: it is reported at the changed word. The block is written afresh before the next
        check when anything was found."""
        if ranges is self.block_ranges and got.tobytes() == self.block_clean:
            return []  # the block as written: no canary changed
        rows = got.reshape(-1, CHECK_WORDS)
        want = check_table(ranges)
        out = []
        for i in map(int, np.flatnonzero((rows != want).any(axis=1))):
            lo, hi, first, nlast = (int(v) for v in rows[i])
            if (lo, hi) != ranges[i]:
                word = self.block + CHECK_WORDS * 4 * i + (0 if lo != ranges[i][0] else 4)
                out.append((word, word + 3))
            else:
                out.append((first, 0xFFFFFFFF - nlast))
        if out:
            self.block_ranges = None
        return out


_HEAPS: dict[str, Heap] = {}


def heap(device: str) -> Heap:
    if device not in DEVICES:
        raise WaveError(f"unknown device {device!r}; device arrays live on: {', '.join(DEVICES)}")
    key = home(device)
    if key not in _HEAPS:
        if device != "emulator":
            from .launch import devices

            if device not in devices():
                raise WaveError(f"device {device!r} is not usable here (devices here: {', '.join(devices())})")
        _HEAPS[key] = Heap(key, heap_bytes())
    return _HEAPS[key]


class DeviceArray:
    """An array living in a device's heap: `shape`, `dtype`, `device`, `address` (its WAVE byte
    address, what a kernel receives), `.copy_to_host()`, `.copy_to_device(array)`."""

    def __init__(self, shape: int | Sequence[int], dtype: Any, device: str) -> None:
        dims = (shape,) if isinstance(shape, int | np.integer) else tuple(shape)
        if not all(isinstance(n, int | np.integer) and n >= 0 for n in dims):
            raise WaveError(f"device array shape must be non-negative ints, got {shape!r}")
        try:
            dt = np.dtype(dtype)
        except TypeError as e:
            raise WaveError(f"device array dtype {dtype!r}: {e}") from None
        if dt not in set(NUMPY_TYPES.values()):
            names = sorted({str(t) for t in NUMPY_TYPES.values()})
            raise WaveError(f"device arrays hold WAVE's element types ({', '.join(names)}), not {dt}")
        self.shape = tuple(int(n) for n in dims)
        self.dtype = dt
        self.device = home(device) if device in DEVICES else device
        self.size = int(np.prod(self.shape, dtype=np.int64))
        self.ndim = len(self.shape)
        self.nbytes = self.size * dt.itemsize
        self._heap = heap(device)
        self.address = self._heap.alloc(self.nbytes)
        weakref.finalize(self, self._heap.release, self.address, self.nbytes)

    def __repr__(self) -> str:
        return f"<wavegpu device array {self.shape} {self.dtype} on {self.device} at {self.address:#x}>"

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d device array")
        return self.shape[0]

    def copy_to_host(self, out: np.ndarray | None = None) -> np.ndarray:
        """The array's contents as a new NumPy array (or into `out`, of the same shape and dtype)."""
        data = self._heap.read(self.address, self.nbytes).view(self.dtype).reshape(self.shape)
        if out is None:
            return data
        if not isinstance(out, np.ndarray) or out.shape != self.shape or out.dtype != self.dtype:
            raise WaveError(f"copy_to_host(out=...) needs a {self.dtype} array of shape {self.shape}")
        np.copyto(out, data)
        return out

    def copy_to_device(self, array: np.ndarray) -> None:
        """Overwrite the contents from a NumPy array of exactly this shape and dtype."""
        if not isinstance(array, np.ndarray) or array.shape != self.shape or array.dtype != self.dtype:
            got = f"{array.dtype} {array.shape}" if isinstance(array, np.ndarray) else type(array).__name__
            raise WaveError(f"copy_to_device needs a {self.dtype} array of shape {self.shape}, got {got}")
        self._heap.write(self.address, array)

    @property
    def pointer(self) -> int:
        """The array's address in the process: the device pointer on "cuda", host memory elsewhere."""
        if self._heap.host is not None:
            return int(self._heap.host.ctypes.data) + self.address
        return self._heap.ptr + self.address

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        if self.device != "cuda":
            raise AttributeError(f"a device array on {self.device!r} is host memory: use copy_to_host()")
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.pointer, False), "version": 3}

    def __dlpack_device__(self) -> tuple[int, int]:
        return (2, 0) if self.device == "cuda" else (1, 0)  # kDLCUDA, kDLCPU

    def __dlpack__(self, *, stream: Any = None, **kwargs: Any) -> Any:
        """A DLPack capsule viewing the array in place (the producer's stream: the default one,
        synchronised after every launch, so no stream handshake is needed)."""
        if kwargs.get("copy") is True:
            raise BufferError("wavegpu device arrays export without copies only")
        return dlpack_capsule(self)


def to_device(array: Any, device: str = "emulator") -> DeviceArray:
    """A device array with a copy of `array` (a NumPy array of one of WAVE's element types)."""
    if not isinstance(array, np.ndarray):
        raise WaveError(
            f"to_device needs a NumPy array, got {type(array).__name__} (pass np.asarray(value, dtype=...))"
        )
    d = DeviceArray(array.shape, array.dtype, device)
    d.copy_to_device(array)
    return d


def device_array(shape: int | Sequence[int], dtype: Any = np.float32, device: str = "emulator") -> DeviceArray:
    """A zero-filled device array."""
    return DeviceArray(shape, dtype, device)


# ------------------------------------------------------------------ DLPack
class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class _DLManagedTensor(ctypes.Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensor))
_DLManagedTensor._fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _DELETER)]
_LIVE: dict[int, tuple[Any, ...]] = {}  # managed tensor address -> what must outlive it


@_DELETER
def _delete(p: Any) -> None:
    _LIVE.pop(ctypes.addressof(p.contents), None)


_CAPSULE_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)  # the capsule, raw: it is being freed


@_CAPSULE_DESTRUCTOR
def _capsule_gone(capsule: Any) -> None:
    """A capsule no consumer took (still named "dltensor"): free what it holds (a consumer renames
    it "used_dltensor" and calls the deleter itself)."""
    api = _PY
    if api.PyCapsule_IsValid(capsule, b"dltensor"):
        p = api.PyCapsule_GetPointer(capsule, b"dltensor")
        _LIVE.pop(p, None)


_PY = ctypes.PyDLL(ctypes.pythonapi._name)  # own function objects: their signatures stay ours
_PY.PyCapsule_New.restype = ctypes.py_object
_PY.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, _CAPSULE_DESTRUCTOR]
_PY.PyCapsule_IsValid.restype = ctypes.c_int
_PY.PyCapsule_IsValid.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_PY.PyCapsule_GetPointer.restype = ctypes.c_void_p
_PY.PyCapsule_GetPointer.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_DL_CODE = {"i": 0, "u": 1, "f": 2}


def dlpack_capsule(a: DeviceArray) -> Any:
    """A legacy ("dltensor") DLPack capsule over a's memory, keeping a alive until the consumer
    (or the capsule, when none takes it) lets go."""
    m = _DLManagedTensor()
    shape = (ctypes.c_int64 * max(a.ndim, 1))(*a.shape)
    t = m.dl_tensor
    t.data = a.pointer
    t.device = _DLDevice(*a.__dlpack_device__())
    t.ndim = a.ndim
    t.dtype = _DLDataType(_DL_CODE[a.dtype.kind], a.dtype.itemsize * 8, 1)
    t.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
    t.strides = ctypes.POINTER(ctypes.c_int64)()  # NULL: C-contiguous
    t.byte_offset = 0
    m.deleter = _delete
    _LIVE[ctypes.addressof(m)] = (m, shape, a)
    return _PY.PyCapsule_New(ctypes.addressof(m), b"dltensor", _capsule_gone)


# ------------------------------------------------------------------ kernel calls on the heap
def has_device_arrays(values: Sequence[object] | Mapping[str, object]) -> bool:
    """A call to run on a device's heap: it passes a device array, or a CuPy/PyTorch CUDA array."""
    seq = values.values() if isinstance(values, Mapping) else values
    return any(isinstance(v, DeviceArray) or _foreign(v) is not None for v in seq)


_PLAIN = (DeviceArray, np.ndarray, int, float, np.generic)  # values that are never a CUDA array


def _foreign(v: object) -> dict[str, Any] | None:
    """The __cuda_array_interface__ of a CuPy array or PyTorch CUDA tensor, else None."""
    if isinstance(v, _PLAIN):
        return None
    try:
        return getattr(v, "__cuda_array_interface__", None)
    except Exception:  # torch raises for tensors that are not on a GPU
        return None


def _check_device_array(p: Param, v: DeviceArray, device: str) -> None:
    dt = NUMPY_TYPES[p.dtype]
    if v.device == home(device) and v.dtype == dt:
        return
    where = f"parameter {p.name!r} ({type_name(p.dtype)}[])"
    if v.device != home(device):
        raise WaveError(f"{where}: the device array lives on {v.device!r}; call the kernel with device={v.device!r}")
    if v.dtype != dt:
        raise WaveError(
            f"{where} needs an array of {dt}, got a device array of {v.dtype}; wavegpu never converts arrays"
        )


_RENDERED: dict[tuple[int, str, int, int, str], Any] = {}  # kernel, device, W, nargs, mma path
_BACKENDS: list[Any] = []  # backends.render and the PTX backend's MMA_PATH, imported on first use


def _backends() -> list[Any]:
    if not _BACKENDS:
        from ..backends import render
        from ..backends.ptx import MMA_PATH

        _BACKENDS.extend((render, MMA_PATH))
    return _BACKENDS


def run_resident(
    k: Kernel,
    values: Sequence[object] | Mapping[str, object],
    *,
    grid: int | Sequence[int],
    workgroup: int | Sequence[int],
    device: str,
    wave_width: int = 32,
    check: bool = False,
    max_instructions: int | None = None,
    progress: bool = False,
    boundscheck: bool = False,
    mma: str | None = None,
) -> Any:
    """One kernel call on the device's heap (docs/sdk.md, device arrays): the launch result on
    the emulator, OpenCL and SYCL (its memory is the heap's image); None on "cuda", where nothing
    comes back to the host."""
    g, wg = dim3(grid, "grid"), dim3(workgroup, "workgroup")
    check_threads(g, wg, k)
    seq = bind(k, values)
    h = heap(device)
    args: list[int] = []
    regions: list[BufferRegion] = []
    temps: list[tuple[Param, Any, DeviceArray, bool]] = []  # (param, caller's array, its copy, foreign)
    named: list[tuple[str, DeviceArray]] = []  # the call's arrays in the heap, by parameter name
    try:
        for i, (p, v) in enumerate(zip(k.params, seq)):
            if p.kind == "scalar":
                args.append(scalar_bits(v, p))
                continue
            if isinstance(v, DeviceArray):
                _check_device_array(p, v, device)
                d = v
            elif (cai := _foreign(v)) is not None:
                d = _from_foreign(p, v, cai, device)
                temps.append((p, v, d, True))
            else:
                a = _array(p, v, counts=False)
                assert isinstance(a, np.ndarray)
                for q, other, _, foreign in temps:
                    if not foreign and np.shares_memory(a, other):
                        raise WaveError(
                            f"parameters {q.name!r} and {p.name!r} share memory: with device arrays in the call, "
                            "NumPy arguments are copied one by one; pass one device array for both"
                        )
                d = to_device(a, device)
                temps.append((p, a, d, False))
            args.append(d.address)
            regions.append(BufferRegion(i, p.name, d.address, d.nbytes, d.dtype.itemsize))
            named.append((p.name, d))
        if home(device) == "cuda":
            for flag, given in (
                ("check=True", check),
                ("boundscheck=True", boundscheck),
                ("max_instructions", max_instructions),
            ):
                if given:
                    raise WaveError(
                        f"{flag} applies to the emulator only (device='emulator'); {device!r} cannot enforce it"
                    )
            policy = mma if mma is not None else _backends()[1].get()
            key = (id(k), device, wave_width, len(args), policy)
            src = _RENDERED.get(key)
            if src is None or src[0] is not k:
                target, path = ("ptx", policy) if device == "cuda" else ("cuda", None)
                r = _backends()[0](k, target, wave_width=wave_width, nargs=len(args), mma=path)
                text = r.source if device == "cuda" else cuda.nvrtc_ptx(r.source, cuda.arch())
                src = _RENDERED[key] = (k, text, r.entry)
            spans = [(d.address, d.nbytes) for _, d in named]
            if spans:  # the canary check runs after the kernel; its block comes back in one copy
                ranges, check_args = h.prepare_check(spans)
                got = np.empty(len(ranges) * CHECK_WORDS, np.uint32)
                verify = (*_check_kernel(), CHECK_THREADS, check_args, got, h.block)
                res = cuda.run_resident(src[1], src[2], g, wg, h.ptr, args, check=verify)
                check_canaries(h, k, device, named, h.check_result(ranges, got))
            else:
                res = cuda.run_resident(src[1], src[2], g, wg, h.ptr, args)
        else:
            assert h.host is not None
            res = launch(
                k,
                device=device,
                grid=g,
                workgroup=wg,
                memory=h.host[: h.top],
                args=args,
                wave_width=wave_width,
                check=check,
                max_instructions=max_instructions,
                progress=progress,
                buffers=regions,
                boundscheck=boundscheck,
                zero_division=check or boundscheck,
            )
            _adopt(
                h, res.memory, [(p, r) for p, r in zip((q for q in k.params if q.kind != "scalar"), regions)], k.name
            )
        for p, a, d, foreign in temps:
            if not p.writable:
                continue
            if foreign:
                cuda.copy_device(int(_foreign(a)["data"][0]), h.ptr + d.address, d.nbytes)  # type: ignore[index]
            else:
                new = d.copy_to_host()
                old = np.ascontiguousarray(a).reshape(-1).view(np.uint8)
                if not np.array_equal(new.reshape(-1).view(np.uint8), old):  # bit for bit: NaNs too
                    np.copyto(a, new)
        return res
    finally:
        temps.clear()


def whose(at: int, arrays: Sequence[tuple[str, DeviceArray]]) -> str:
    """Where heap address `at`, outside the call's arrays, lies: in the gap after one of them (so
    many bytes past its end), in the GUARD bytes before one, or near none of them."""
    return _gap_of(
        at,
        [
            (name, d.address, d.nbytes, d.dtype.itemsize, f"the {d.dtype} device array {d.shape} at {d.address:#x}")
            for name, d in arrays
        ],
    )


def _gap_of(at: int, spans: Sequence[tuple[str, int, int, int, str]]) -> str:
    """`whose` over (name, start, bytes, item size, description) of each array."""
    for name, start, nbytes, itemsize, what in spans:
        if start + nbytes <= at < start + slot_bytes(nbytes):
            past = at - start - nbytes
            return (
                f"the guard gap after array {name!r} ({what}), {past} bytes past its end "
                f"(element {(nbytes + past) // itemsize})"
            )
    for name, start, _nbytes, _itemsize, what in spans:
        if start - GUARD <= at < start:
            return f"the guard gap before array {name!r} ({what}), {start - at} bytes before its start"
    return "memory that belongs to no array it was given"


_CHECK_KERNEL: list[tuple[str, str]] = []  # the canary check's PTX and entry, rendered once


def _check_kernel() -> tuple[str, str]:
    """The PTX of canary_check.py's kernel (compiled once, through the compile cache)."""
    if not _CHECK_KERNEL:
        from .canary_check import canary_check

        r = _backends()[0](canary_check.program.kernels[0], "ptx", nargs=7)
        _CHECK_KERNEL.append((r.source, r.entry))
    return _CHECK_KERNEL[0]


def check_canaries(
    h: Heap, k: Kernel, device: str, arrays: Sequence[tuple[str, DeviceArray]], hit: list[tuple[int, int]] | None = None
) -> None:
    """After a launch on the heap: a WaveError when the kernel changed a canary around one of the
    call's arrays (a write out of bounds, which the device did not trap). `hit`: what the device
    check found (Heap.check_result); None: the canaries are read back and compared here
    (Heap.damage). The canaries are armed again first, so that the next call reports only its
    own writes."""
    if hit is not None and not hit:
        return
    spans = [(d.address, d.nbytes) for _, d in arrays]
    if hit is None:
        hit = h.damage(spans)
    if not hit:
        return
    h.rearm(spans)
    first, last = hit[0]
    beyond = ""
    ends = {d.address + slot_bytes(d.nbytes): name for name, d in arrays}
    if last + 1 in ends or last + 1 in h.live:
        beyond = (
            "; it reached the end of the gap, so the array above it in the heap "
            f"(at {last + 1:#x}) may have been overwritten too"
        )
    raise WaveError(
        f"kernel {k.name!r} wrote out of bounds on device {device!r}: heap address {first:#x} is in "
        f"{whose(first, arrays)}{beyond}. The device arrays of this call may "
        "hold partial results (a device cannot undo a kernel's writes); NumPy arguments were not "
        "copied back. Run the call on device='emulator' to find the access: it traps there, naming "
        "the instruction and the thread"
    )


def _adopt(h: Heap, memory: np.ndarray, arrays: list[tuple[Param, BufferRegion]], kernel: str = "") -> None:
    """Take a host device's memory after a run as the heap's contents, under the copy-back rule
    (docs/sdk.md): every changed byte must lie in an array of a parameter the kernel may write;
    otherwise (a write out of bounds, which OpenCL and SYCL cannot trap) the heap keeps what it
    had and the call raises."""
    assert h.host is not None
    before, after = h.host[: h.top], memory[: h.top]
    changed = before != after
    if not changed.any():
        return
    allowed = np.zeros(h.top, dtype=bool)
    for p, r in arrays:
        if p.writable:
            allowed[r.offset : r.offset + r.nbytes] = True
    stray = changed & ~allowed
    if stray.any():
        at = int(np.argmax(stray))
        owners = [p.name for p, r in arrays if r.offset <= at < r.offset + r.nbytes]
        if owners:
            what = f"array {owners[0]!r}, which it may not write"
        else:
            what = _region_whose(at, arrays) + " (a write out of bounds?)"
        who = f"kernel {kernel!r}" if kernel else "the kernel"
        raise WaveError(
            f"{who} wrote device address {at}, in {what}: the device arrays "
            "keep their contents from before the call; run on the emulator with check=True to find the access"
        )
    np.copyto(before, after)


def _region_whose(at: int, arrays: list[tuple[Param, BufferRegion]]) -> str:
    """`whose` for a host device's call, from its buffer regions."""
    return _gap_of(
        at, [(p.name, r.offset, r.nbytes, r.itemsize, f"{r.nbytes} bytes at {r.offset:#x}") for p, r in arrays]
    )


def _from_foreign(p: Param, v: object, cai: dict[str, Any], device: str) -> DeviceArray:
    """A heap copy of a CuPy array or PyTorch CUDA tensor (device to device)."""
    dt = NUMPY_TYPES[p.dtype]
    where = f"parameter {p.name!r} ({type_name(p.dtype)}[])"
    if home(device) != "cuda":
        raise WaveError(
            f"{where}: a CUDA array ({type(v).__name__}) can only be passed to a kernel on device='cuda' or 'cuda-cpp'"
        )
    got = np.dtype(cai["typestr"])
    if got != dt:
        raise WaveError(f"{where} needs an array of {dt}, got a {type(v).__name__} of {got}; wavegpu never converts")
    shape = tuple(cai["shape"])
    strides = cai.get("strides")
    if strides is not None and tuple(strides) != tuple(np.empty(shape, dt).strides):
        raise WaveError(
            f"{where}: a non-contiguous {type(v).__name__} cannot be copied as one block; pass a contiguous one"
        )
    if p.writable and cai["data"][1]:
        raise WaveError(f"{where}: the kernel may write this array, but the array passed is read-only")
    d = DeviceArray(shape, dt, device)
    cuda.copy_device(d.pointer, int(cai["data"][0]), d.nbytes)
    return d
