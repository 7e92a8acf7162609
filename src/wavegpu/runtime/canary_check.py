"""The device-side canary check of the device-array heap on "cuda" (runtime/heap.py, canaries.py).

After a call's launch, `canary_check` compares, on the GPU, every canary byte around the call's
arrays with the pattern, and records for each range the first and last changed address in a
small block of the heap; the host then reads that block back in one copy of a few bytes,
whatever the sizes of the arrays and the distances between them.

The block (a heap slot of its own, `CheckBlock`) holds `count` entries of four words: the
range's start and end (written by the host, read by the check) and the smallest changed address
and the smallest complement of one (written by the check with atomic minima, so no order between
threads matters; 0xFFFFFFFF: nothing changed). The copy brings back the ranges too, so a write
out of bounds that lands in the block itself cannot hide an overrun: a range that is not the
one the host wrote, or a minimum that is not 0xFFFFFFFF, is reported."""

# pyright: reportInvalidTypeForm=false, reportGeneralTypeIssues=false
# (the kernel's annotations are WAVE types, read by the Python frontend, not Python types)
from __future__ import annotations

import wavegpu as wg

from .canaries import CHECK_THREADS as THREADS
from .canaries import CHECK_WORDS as WORDS  # the 4 in the kernel's indexing

__all__ = ["THREADS", "WORDS", "canary_check"]


@wg.kernel(workgroup=THREADS)
def canary_check(
    heap: wg.u8[:],
    block: wg.u32[:],
    count: wg.u32,
    p0: wg.u32,
    p1: wg.u32,
    p2: wg.u32,
    p3: wg.u32,
):
    t = wg.global_id()
    step = wg.global_size()
    for r in range(0, count):
        lo = block[4 * r]
        hi = block[4 * r + 1]
        for x in range(lo + t, hi, step):
            q = (x >> 2) & 3
            w = p0
            if q == 1:
                w = p1
            elif q == 2:
                w = p2
            elif q == 3:
                w = p3
            want = (w >> ((x & 3) * 8)) & 0xFF
            if wg.u32(heap[x]) != want:
                wg.atomic_min(block, 4 * r + 2, x)
                wg.atomic_min(block, 4 * r + 3, 0xFFFFFFFF - x)
