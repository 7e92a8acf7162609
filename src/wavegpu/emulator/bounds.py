"""Per-buffer bounds: where each array lives in device memory, and the vectorised check that
every global access stays inside one array (or inside the array its access-table entry names)."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import WaveError
from ..wbin.program import Kernel


@dataclass(frozen=True)
class BufferRegion:
    """One buffer argument's array: bytes [offset, offset + nbytes) of device memory.

    `param` is the kernel parameter's index (its address arrives in r(param)), `name` names the
    array in traps, `itemsize` turns byte addresses into element indices.
    """

    param: int
    name: str
    offset: int
    nbytes: int
    itemsize: int = 1

    @property
    def end(self) -> int:
        return self.offset + self.nbytes

    @property
    def count(self) -> int:
        return self.nbytes // self.itemsize


_VERB = {"load": "load from", "store": "store to", "atomic": "atomic on"}


class Bounds:
    """The regions of one launch. `first_outside` is the check on the fast path: two reductions
    (min and max of the addresses) when every lane stays in one region, per-lane work only when
    one does not."""

    def __init__(self, regions: Sequence[BufferRegion], memory_size: int, kernel: Kernel, exact: bool):
        regs = tuple(regions)
        seen: dict[int, BufferRegion] = {}
        for r in regs:
            if not isinstance(r, BufferRegion):
                raise WaveError(f"buffers: expected BufferRegion values, got {type(r).__name__}")
            if r.offset < 0 or r.nbytes < 0 or r.itemsize < 1:
                raise WaveError(f"buffers: {r.name!r} has offset {r.offset}, {r.nbytes} bytes, itemsize {r.itemsize}")
            if r.end > memory_size:
                raise WaveError(
                    f"buffers: {r.name!r} (bytes {r.offset}..{r.end}) lies beyond device memory ({memory_size} bytes)"
                )
            if r.param < 0 or (kernel.params and r.param >= len(kernel.params)):
                raise WaveError(
                    f"buffers: {r.name!r} names parameter {r.param}; kernel {kernel.name!r} has {len(kernel.params)}"
                )
            if kernel.params and kernel.params[r.param].kind != "buffer":
                raise WaveError(f"buffers: parameter {r.param} ({kernel.params[r.param].name}) is not a buffer")
            if r.param in seen:
                raise WaveError(f"buffers: parameter {r.param} is described twice")
            seen[r.param] = r
        self.by_param = seen
        self.exact = exact
        self.regions = tuple(sorted(regs, key=lambda r: (r.offset, -r.end)))
        # regions may overlap (one array passed twice): an access is inside some region when a
        # region starting at or below it reaches past its end, i.e. the running maximum of ends
        self.starts = [r.offset for r in self.regions]
        self.reach: list[int] = []
        self.reacher: list[BufferRegion] = []
        best: BufferRegion | None = None
        for r in self.regions:
            if best is None or r.end > best.end:
                best = r
            self.reach.append(best.end)
            self.reacher.append(best)
        self.starts_np = np.asarray(self.starts, dtype=np.int64)
        self.reach_np = np.asarray(self.reach, dtype=np.int64)

    def region_for(self, tag: int | None) -> BufferRegion | None:
        """The region an access is checked against exactly, or None (any region will do)."""
        if not self.exact or tag is None:
            return None
        return self.by_param.get(tag)

    def first_outside(self, addr: np.ndarray, width: int, hi: int, tag: int | None) -> int:
        """The position of the first address whose `width` bytes leave the allowed region, or -1.
        `hi` is addr.max() (the caller has it already)."""
        lo = int(addr.min())
        own = self.region_for(tag)
        if own is not None:
            if lo >= own.offset and hi + width <= own.end:
                return -1
            a = addr.astype(np.int64)
            bad = (a < own.offset) | (a + width > own.end)
            return int(np.argmax(bad))
        j = bisect.bisect_right(self.starts, lo) - 1
        if j >= 0 and hi + width <= self.reach[j]:
            return -1  # every address lies in [lo, hi], inside the region reaching furthest from lo
        if not self.regions:
            return 0
        a = addr.astype(np.int64)
        js = np.searchsorted(self.starts_np, a, side="right") - 1
        ok = (js >= 0) & (a + width <= self.reach_np[np.maximum(js, 0)])
        return -1 if ok.all() else int(np.argmin(ok))  # lanes may lie in different regions

    def describe(self, address: int, width: int, tag: int | None, cls: str) -> tuple[str, BufferRegion | None, int]:
        """(reason, the array the access belongs to, its element index) for an access outside."""
        verb = _VERB.get(cls, "access to")
        r = self.by_param.get(tag) if tag is not None else None
        if r is None:
            r = self.nearest(address, width)
        if r is None:
            return (
                f"{width}-byte {verb.split()[0]} at address {address} lies outside every buffer (none given)",
                None,
                0,
            )
        delta = (address - r.offset + (1 << 31)) % (1 << 32) - (1 << 31)  # addresses wrap at 2^32
        if width > r.itemsize and 0 <= delta < r.nbytes:
            # a vector access (several elements) starting inside: its first element past the end
            delta = r.nbytes
        index = delta // r.itemsize
        inside = [o for o in self.regions if o.offset <= address and address + width <= o.end and o.param != r.param]
        where = f"; the address lies inside {inside[0].name}" if inside else ""
        reason = (
            f"out-of-bounds {verb} {r.name}[{index}]: {r.name} has {r.count} element(s) of {r.itemsize} byte(s) "
            f"at addresses {r.offset}..{r.end - 1}{where}"
        )
        return reason, r, index

    def nearest(self, address: int, width: int) -> BufferRegion | None:
        """The region the address most plausibly belongs to: one it overlaps, else the closest
        (an address just past an array's end belongs to that array)."""
        best: tuple[int, int, BufferRegion] | None = None
        for r in self.regions:
            if address + width > r.offset and address < r.end:
                dist, side = 0, 0
            else:  # distances modulo 2^32: a[-1] of an array at address 0 wraps to the top
                past, below = (address - r.end) % (1 << 32), (r.offset - address - width) % (1 << 32)
                dist, side = (past, 0) if past <= below else (below, 1)  # past the end wins ties
            key = (dist, side, r)
            if best is None or key[:2] < best[:2]:
                best = key
        return None if best is None else best[2]


__all__ = ["Bounds", "BufferRegion"]
