"""Loads and stores (ld, st) in device, local and constant memory."""

from __future__ import annotations

import numpy as np

from ...isa.instruction import Imm, Instruction, Mem, Reg
from ...isa.types import Kind
from ...isa.vocabulary import InstrClass
from ..memory import addresses, load_words, space_of, store_words
from ..state import State, Step

U32 = np.uint32
STAT = {"global": "device", "local": "local", "const": "constant"}
_NCOMP = {Kind.VEC2: 2, Kind.VEC4: 4, Kind.PAIR: 2}


def mask_from(idx: np.ndarray, n: int) -> np.ndarray:
    m = np.zeros(n, dtype=bool)
    m[idx] = True
    return m


def widen(st: State, idx: np.ndarray | None, v: np.ndarray) -> np.ndarray:
    """Values of the executing lanes idx as a value per lane of the batch (or v itself when it
    covers every lane or is uniform)."""
    if idx is None or v.ndim == 0:
        return v
    full = np.zeros(st.N, dtype=U32)
    full[idx] = v
    return full


def compile_memory(st: State, inst: Instruction, pc: int) -> Step:
    spec = inst.spec
    return (compile_load if spec.cls is InstrClass.LOAD else compile_store)(st, inst, pc)


def compile_load(st: State, inst: Instruction, pc: int) -> Step:
    spec = inst.spec
    space = spec.space
    assert space is not None and spec.mem_index is not None
    width = spec.width
    mem = inst.operands[spec.mem_index]
    assert isinstance(mem, Mem)
    guard = st.guard_reader(inst)
    chk = st.checker
    buf = space_of(st, space)
    dst_op = inst.operands[0]
    signed = spec.signed  # a sign-extending s8 or s16 load
    ncomp = _NCOMP.get(spec.operands[0].kind, 1)
    reg0 = dst_op.n  # type: ignore[union-attr]
    sub_writer = st.writer(dst_op) if isinstance(dst_op, Reg) and dst_op.sel else None
    scatter = st.scatterer(dst_op) if ncomp == 1 else None
    read_attr = f"{STAT[space]}_bytes_read"
    stats = st.stats

    def load() -> None:
        m = st.exec_mask(guard)
        if m is not None and not m.any():
            st.count(pc, m)
            return
        if chk:
            chk.reads(pc, [mem], m)  # type: ignore[attr-defined]
        idx, addr = addresses(st, pc, mem, m, width, space)
        if chk and space == "local":
            chk.local_access(pc, idx, addr, width, write=False)  # type: ignore[attr-defined]
        vals = load_words(buf, addr, width, signed, ncomp)
        n = st.n_real if idx is None else idx.size
        setattr(stats, read_attr, getattr(stats, read_attr) + width * n)
        if scatter is not None and idx is not None:  # partial: write the loaded lanes only
            scatter(idx, np.asarray(vals[0]))
            st.count(pc, m)
            return
        emask = None if idx is None else mask_from(idx, st.N)
        for i, v in enumerate(vals):
            v = widen(st, idx, np.asarray(v))
            if sub_writer is not None:
                sub_writer(v, emask)
            else:
                st.set_reg(reg0 + i, v, emask)
        if chk and sub_writer is None:
            chk.mark(reg0, len(vals), emask)  # type: ignore[attr-defined]
        st.count(pc, m)

    return load


def compile_store(st: State, inst: Instruction, pc: int) -> Step:
    spec = inst.spec
    space = spec.space
    assert space is not None and spec.mem_index is not None
    width = spec.width
    mem = inst.operands[spec.mem_index]
    assert isinstance(mem, Mem)
    guard = st.guard_reader(inst)
    chk = st.checker
    buf = space_of(st, space)
    val_op = inst.operands[1]
    ncomp = _NCOMP.get(spec.operands[1].kind, 1)
    regs = st.regs
    if isinstance(val_op, Imm):
        consts = [np.asarray((val_op.bits >> (32 * i)) & 0xFFFFFFFF, dtype=U32) for i in range(ncomp)]
        comps = [(lambda c=c: c) for c in consts]
    elif isinstance(val_op, Reg):
        comps = [st.reader(val_op)]
    else:
        base = val_op.n  # type: ignore[union-attr]
        comps = [(lambda i=i: regs[base + i]) for i in range(ncomp)]
    write_attr = f"{STAT[space]}_bytes_written"
    stats = st.stats

    def store() -> None:
        m = st.exec_mask(guard)
        if m is not None and not m.any():
            st.count(pc, m)
            return
        if chk:
            chk.reads(pc, [mem, val_op], m)  # type: ignore[attr-defined]
        idx, addr = addresses(st, pc, mem, m, width, space)
        if chk and space == "local":
            chk.local_access(pc, idx, addr, width, write=True)  # type: ignore[attr-defined]
        vals = []
        for c in comps:
            v = c()
            vals.append(v[idx] if v.ndim and idx is not None else v)
        store_words(buf, addr, width, vals)
        n = st.n_real if idx is None else idx.size
        setattr(stats, write_attr, getattr(stats, write_attr) + width * n)
        st.count(pc, m)

    return store
