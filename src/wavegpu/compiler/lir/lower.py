"""MIR -> LIR: out of SSA (`lir/ssa.py`), structured control flow rebuilt (`lir/structure.py`),
instructions selected (`lir/selection.py`, rows from `lir/rows.py`), operand classes checked.
"""

from __future__ import annotations

from ...errors import CompileError, Diagnostic
from ...isa.types import Kind
from ...isa.vocabulary import Op
from ..mir.ir import Function
from .ir import LFunction, VReg
from .selection import Selector
from .ssa import PhiCopies
from .structure import Structurizer


def lower(fn: Function, offsets: bool = False) -> LFunction:
    """`offsets`: a local access through `x + c` reads `[x+c]` (Selector.address)."""
    sel = Selector(fn, offsets)
    Structurizer(fn, sel, PhiCopies(sel)).run()
    _check_operand_kinds(sel.lf)
    if sel.vector_done or sel.folded_address:
        _drop_dead_arithmetic(sel.lf)
    return sel.lf


# the address arithmetic that a merged access leaves unused (its other members' addresses)
_ADDRESS_OPS = frozenset({Op.ADD, Op.SUB, Op.SHL, Op.MUL_LO, Op.MAD_LO, Op.MOV})


def _drop_dead_arithmetic(lf: LFunction) -> None:
    """Delete unguarded integer arithmetic and moves whose results nothing reads (run after a
    vector access took over its members' addresses, or a local access an add's, `[x+c]`)."""
    while True:
        used = {v.id for i in lf.insts for v in i.uses()} | {p.id for p in lf.params}
        keep = [
            i
            for i in lf.insts
            if i.guard is not None
            or i.spec.op not in _ADDRESS_OPS
            or i.spec.cls not in ("int", "bit", "move")
            or not i.defs()
            or any(d.id in used for d in i.defs())
        ]
        if len(keep) == len(lf.insts):
            return
        lf.insts[:] = keep


def _check_operand_kinds(lf: LFunction) -> None:
    for i in lf.insts:
        spec = i.spec
        if len(i.operands) != len(spec.operands):
            raise CompileError([Diagnostic(f"internal error: {spec.key} got {len(i.operands)} operands", i.span)])
        for o, s in zip(i.operands, spec.operands):
            want = {Kind.REG: "r", Kind.PAIR: "p", Kind.PRED: "q", Kind.VEC2: "x2", Kind.VEC4: "x4"}.get(s.kind)
            if isinstance(o, VReg) and want is not None and o.cls != want:
                raise CompileError(
                    [
                        Diagnostic(
                            f"internal error: {spec.key} operand class {o.cls}, expected {want}",
                            i.span,
                        )
                    ]
                )


__all__ = ["lower"]
