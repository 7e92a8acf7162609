"""Atomic read-modify-write on a word array, lanes applied in ascending lane order."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..isa import semantics as sem
from ..isa.types import DataType
from ..isa.vocabulary import AtomOp

U32 = np.uint32

Combine = Callable[..., np.ndarray]


def apply(
    words: np.ndarray,
    index: np.ndarray,
    atom: sem.Atomic,
    value: np.ndarray,
    third: np.ndarray | None = None,
) -> np.ndarray:
    """Apply `atom` at words[index[i]] for lanes i in order; return each lane's old value.

    For cas, `value` is the compare operand and `third` the new value.
    """
    n = index.size
    value = np.broadcast_to(np.asarray(value, dtype=U32), (n,))
    if third is not None:
        third = np.broadcast_to(np.asarray(third, dtype=U32), (n,))
    combine = atom.combine
    if n == 0:
        return np.zeros(0, dtype=U32)
    order = np.argsort(index, kind="stable")
    sidx = index[order]
    first = np.empty(n, dtype=bool)
    first[0] = True
    np.not_equal(sidx[1:], sidx[:-1], out=first[1:])
    if first.all():  # every lane has its own word
        old = words[index].copy()
        words[index] = combine(old, value, third) if third is not None else combine(old, value)
        return old
    sval = value[order]
    seg_start = np.flatnonzero(first)
    seg_id = np.cumsum(first) - 1
    base = words[sidx[seg_start]]  # memory before the instruction, per segment
    if atom.dtype is DataType.U32 and atom.op in (AtomOp.ADD, AtomOp.SUB):  # a running sum
        v = sval if atom.op is AtomOp.ADD else (U32(0) - sval)
        incl = np.cumsum(v, dtype=U32)
        seg_base_sum = np.concatenate(([U32(0)], incl))[seg_start]  # sum before each segment
        excl = incl - v - seg_base_sum[seg_id]
        old_sorted = base[seg_id] + excl
        last = np.r_[seg_start[1:], n] - 1
        words[sidx[seg_start]] = base + (incl[last] - seg_base_sum)
    else:
        old_sorted = _rounds(words, sidx, sval, None if third is None else third[order], combine, seg_id, seg_start)
    old = np.empty(n, dtype=U32)
    old[order] = old_sorted
    return old


def _rounds(
    words: np.ndarray,
    sidx: np.ndarray,
    sval: np.ndarray,
    sthird: np.ndarray | None,
    combine: Combine,
    seg_id: np.ndarray,
    seg_start: np.ndarray,
) -> np.ndarray:
    """Sequential semantics by rank: round r applies every segment's r-th lane (distinct words)."""
    rank = np.arange(sidx.size) - seg_start[seg_id]
    old = np.empty(sidx.size, dtype=U32)
    by_rank = np.argsort(rank, kind="stable")
    counts = np.bincount(rank)
    pos = 0
    for c in counts:
        sel = by_rank[pos : pos + c]
        pos += c
        w = sidx[sel]
        o = words[w].copy()
        old[sel] = o
        words[w] = combine(o, sval[sel], sthird[sel]) if sthird is not None else combine(o, sval[sel])
    return old


__all__ = ["apply"]
