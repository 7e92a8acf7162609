"""Emission: register-allocated LIR to a .wbin kernel with complete metadata and a line table."""

from __future__ import annotations

from dataclasses import replace

from ..errors import CompileError, Diagnostic
from ..isa.instruction import Guard, Imm, Instruction, Mem, Operand, Pair, Pred, Reg, SReg, Vec
from ..isa.table import BY_KEY
from ..isa.types import Kind
from ..isa.vocabulary import Nest
from ..wbin.program import Kernel, Param, SourceLoc
from .lir import rows
from .lir.ir import Address, LFunction, LInst, LOperand, Part, SpecialReg, VReg
from .lir.ir import Imm as LImm
from .regalloc.chaitin import Allocation


def _operand(o: LOperand, kind: Kind) -> Operand:
    if isinstance(o, Part):
        assert o.reg.phys is not None, f"unallocated {o.reg!r}"
        return Reg(o.reg.phys + o.index)
    if isinstance(o, VReg):
        assert o.phys is not None, f"unallocated {o!r}"
        if kind in (Kind.VEC2, Kind.VEC4):
            return Vec(o.phys, o.width)
        if o.cls == "q":
            return Pred(o.phys)
        if o.cls == "p":
            return Pair(o.phys)
        return Reg(o.phys)
    if isinstance(o, LImm):
        return Imm(o.bits, o.width)
    if isinstance(o, SpecialReg):
        return SReg(o.id)
    if isinstance(o, Address):
        if o.base is None:
            return Mem(None, o.offset)
        assert o.base.phys is not None, f"unallocated {o.base!r}"
        return Mem(o.base.phys, o.offset)
    raise TypeError(o)


def instruction(i: LInst) -> Instruction:
    spec = BY_KEY[i.key]
    ops = tuple(_operand(o, s.kind) for o, s in zip(i.operands, spec.operands))
    guard = None
    if i.guard is not None:
        assert i.guard[0].phys is not None
        guard = Guard(i.guard[0].phys, i.guard[1])
    return Instruction(spec, ops, guard)


def emit(lf: LFunction, alloc: Allocation, params: list[Param]) -> Kernel:
    from ..encoding import check_operands
    from ..errors import EncodingError

    insts = []
    lines = []
    accesses: list[int | None] = []
    for i in lf.insts:
        inst = instruction(i)
        try:
            check_operands(inst)
        except EncodingError as e:
            raise CompileError([Diagnostic(f"internal error emitting {i.key}: {e.reason}", i.span)]) from None
        insts.append(inst)
        lines.append(SourceLoc(i.span.file, i.span.line, i.span.col) if i.span is not None else None)
        accesses.append(i.buffer if inst.spec.is_global_access else None)
    if not insts or insts[-1].spec.nest is not Nest.RET:
        insts.append(Instruction(BY_KEY[rows.RET]))
        lines.append(None)
        accesses.append(None)
    return Kernel(
        lf.name,
        tuple(insts),
        alloc.registers,
        alloc.predicates,
        alloc.local_memory,
        lf.workgroup_size,
        tuple(mark_read_only(params, insts, accesses)),
        lines=tuple(lines) if any(lines) else None,
        accesses=tuple(accesses),
    )


def mark_read_only(params: list[Param], insts: list[Instruction], accesses: list[int | None]) -> list[Param]:
    """Buffers no store or atomic addresses become `writable=False`; when a store or atomic's
    buffer is unknown (untagged), every buffer stays writable."""
    written: set[int] = set()
    for inst, tag in zip(insts, accesses):
        if inst.spec.is_global_access and inst.spec.side_effects:  # a global store or atomic
            if tag is None:
                return params
            written.add(tag)
    return [replace(p, writable=False) if p.kind == "buffer" and i not in written else p for i, p in enumerate(params)]
