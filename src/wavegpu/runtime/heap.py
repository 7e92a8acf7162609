"""The device-array heaps: one per device with device arrays (the device table's `heap`), a
range of WAVE's 32-bit device memory carved by a first-fit sub-allocator into slots (256-byte
aligned, each followed by a guard gap armed with the canary: canaries.py), over host memory or
one GPU allocation. Its size is fixed when first used (WAVEGPU_HEAP_BYTES, default 1 GiB), so its
base address never moves and exported pointers stay valid."""

from __future__ import annotations

import os

import numpy as np

from ..errors import WaveError
from . import cuda, devices
from .buffers import ALIGN, GUARD, slot_bytes
from .canaries import CHECK_WORDS, Canaries, canary

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


class Heap(Canaries):
    """One device's heap: the sub-allocator, and the memory behind it (host memory, or one CUDA
    allocation for a GPU heap), and its canaries (canaries.Canaries)."""

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
        self.gpu = devices.device(device).gpu_heap  # the heap is GPU memory (cuda.py)
        if self.gpu:
            self.ptr = cuda.heap_alloc(capacity)
        else:  # zero pages the OS maps lazily: an unused heap costs no memory
            self.host = np.zeros(capacity, np.uint8)
        self.write(0, canary(0, GUARD))
        if self.gpu:  # the canary check's block, made before any array: a call never needs a slot
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


_HEAPS: dict[str, Heap] = {}


def heap(device: str) -> Heap:
    """The heap of device `device`'s arrays (made on first use); a WaveError for a device without
    device arrays, or one not usable here (with its reason)."""
    owner = devices.heap_device(device)
    if owner.name not in _HEAPS:
        ok, why = devices.device(device).available()
        if not ok:
            raise WaveError(f"device {device!r} is not usable here: {why}")
        _HEAPS[owner.name] = Heap(owner.name, heap_bytes())
    return _HEAPS[owner.name]
