"""Atomics (atom returns the old value, red does not): read-modify-write in ascending lane order."""

from __future__ import annotations

import numpy as np

from ...isa import semantics as sem
from ...isa.instruction import Instruction, Mem
from ...isa.vocabulary import Op
from .. import atomics
from ..memory import addresses, element_index, space_of
from ..state import State, Step
from .memory import STAT, mask_from, widen


def compile_atomic(st: State, inst: Instruction, pc: int) -> Step:
    spec = inst.spec
    space = spec.space
    assert space is not None and spec.mem_index is not None
    returns = spec.op is Op.ATOM
    atom = sem.atomic_of(spec)
    mi = spec.mem_index
    mem = inst.operands[mi]
    assert isinstance(mem, Mem)
    srcs = [st.reader(o) for o in inst.operands[mi + 1 :]]
    dst = st.writer(inst.operands[0]) if returns else None
    guard = st.guard_reader(inst)
    chk = st.checker
    stat = STAT[space]
    reads = [mem, *inst.operands[mi + 1 :]]
    buf = space_of(st, space)
    stats = st.stats

    def run() -> None:
        m = st.exec_mask(guard)
        if m is not None and not m.any():
            st.count(pc, m)
            return
        if chk:
            chk.reads(pc, reads, m)  # type: ignore[attr-defined]
        idx, addr = addresses(st, pc, mem, m, 4, space)
        n = st.N if idx is None else idx.size
        word = np.broadcast_to(element_index(addr, 4), (n,))
        vals = []
        for s in srcs:
            v = s()
            vals.append(v[idx] if v.ndim and idx is not None else v)
        old = atomics.apply(buf.u32, word, atom, vals[0], vals[1] if len(vals) > 1 else None)
        if dst is not None:
            dst(widen(st, idx, old), None if idx is None else mask_from(idx, st.N))
        k = old.size
        stats.atomics += k
        setattr(stats, f"{stat}_bytes_read", getattr(stats, f"{stat}_bytes_read") + 4 * k)
        setattr(stats, f"{stat}_bytes_written", getattr(stats, f"{stat}_bytes_written") + 4 * k)
        st.count(pc, m)

    return run
