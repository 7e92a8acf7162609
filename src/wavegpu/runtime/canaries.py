"""The canaries of the device-array heaps: the pattern in every byte that belongs to no array, the
ranges of it around a call's arrays (the `Canaries` part of each Heap), the check after a call
(on "cuda": canary_check.py's kernel on the GPU, its findings back in one small copy; on host
heaps: the image compared under the copy-back rule, `adopt`) and the error naming the array a
write out of bounds passed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..emulator import BufferRegion
from ..errors import WaveError
from ..wbin.program import Kernel, Param
from .buffers import GUARD, slot_bytes

if TYPE_CHECKING:
    from .device_arrays import DeviceArray
    from .heap import Heap

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


class Canaries:
    """The canary part of a Heap (heap.py): the ranges around arrays, their damage, re-arming, and
    the block of the device-side check ("cuda"). It reads the heap's memory through `write`,
    `read`, `alloc`, `release`, `host` and `block*` (Heap sets them up)."""

    host: np.ndarray | None
    block: int
    block_cap: int
    block_ranges: list[tuple[int, int]] | None
    block_clean: bytes
    block_spans: tuple[tuple[int, int], ...]
    block_gaps: list[tuple[int, int]]

    if TYPE_CHECKING:  # Heap's own (heap.py), declared for the type checker

        def write(self, at: int, data: np.ndarray) -> None: ...
        def read(self, at: int, nbytes: int) -> np.ndarray: ...
        def alloc(self, nbytes: int) -> int: ...
        def release(self, at: int, nbytes: int) -> None: ...

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


def check_kernel() -> tuple[str, str]:
    """The PTX of canary_check.py's kernel (compiled once, through the compile cache)."""
    if not _CHECK_KERNEL:
        from ..backends import render
        from .canary_check import canary_check

        r = render(canary_check.program.kernels[0], "ptx", nargs=7)
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


def adopt(h: Heap, memory: np.ndarray, arrays: list[tuple[Param, BufferRegion]], kernel: str = "") -> None:
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
