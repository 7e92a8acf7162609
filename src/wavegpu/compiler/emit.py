"""Emission: register-allocated LIR to a .wbin kernel with complete metadata and a line table."""

from __future__ import annotations

from ..errors import CompileError, Diagnostic
from ..isa.instruction import Guard, Imm, Instruction, Mem, Pair, Pred, Reg, SReg
from ..isa.table import BY_KEY
from ..isa.types import Kind
from ..wbin.program import Kernel, Param, SourceLoc
from .lir.ir import Address, LFunction, LInst, SpecialReg, VReg
from .lir.ir import Imm as LImm
from .regalloc.chaitin import Allocation


def _operand(o: object, kind: Kind) -> object:
    if isinstance(o, VReg):
        assert o.phys is not None, f"unallocated {o!r}"
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
        return Mem(o.base.phys if o.base is not None else None, o.offset)  # type: ignore[union-attr]
    raise TypeError(o)


def instruction(i: LInst) -> Instruction:
    spec = BY_KEY[i.key]
    ops = tuple(_operand(o, s.kind) for o, s in zip(i.operands, spec.operands))
    guard = None
    if i.guard is not None:
        assert i.guard[0].phys is not None
        guard = Guard(i.guard[0].phys, i.guard[1])
    return Instruction(spec, ops, guard)  # type: ignore[arg-type]


def emit(lf: LFunction, alloc: Allocation, params: list[Param]) -> Kernel:
    from ..encoding import check_operands
    from ..errors import EncodingError

    insts = []
    lines = []
    for i in lf.insts:
        inst = instruction(i)
        try:
            check_operands(inst)
        except EncodingError as e:
            raise CompileError([Diagnostic(f"internal error emitting {i.key}: {e.reason}", i.span)]) from None
        insts.append(inst)
        lines.append(SourceLoc(i.span.file, i.span.line, i.span.col) if i.span is not None else None)
    if not insts or insts[-1].spec.name != "ret":
        insts.append(Instruction(BY_KEY["ret"]))
        lines.append(None)
    return Kernel(
        lf.name,
        tuple(insts),
        alloc.registers,
        alloc.predicates,
        alloc.local_memory,
        lf.workgroup_size,
        tuple(params),
        lines=tuple(lines) if any(lines) else None,
    )
