"""MIR -> LIR: out of SSA (`lir/ssa.py`), structured control flow rebuilt (`lir/structure.py`),
instructions selected (`lir/selection.py`, rows from `lir/rows.py`), operand classes checked.
"""

from __future__ import annotations

from ...errors import CompileError, Diagnostic
from ...isa.types import Kind
from ..mir.ir import Function
from .ir import LFunction, VReg
from .selection import Selector
from .ssa import PhiCopies
from .structure import Structurizer


def lower(fn: Function) -> LFunction:
    sel = Selector(fn)
    Structurizer(fn, sel, PhiCopies(sel)).run()
    _check_operand_kinds(sel.lf)
    return sel.lf


def _check_operand_kinds(lf: LFunction) -> None:
    for i in lf.insts:
        spec = i.spec
        if len(i.operands) != len(spec.operands):
            raise CompileError([Diagnostic(f"internal error: {spec.key} got {len(i.operands)} operands", i.span)])
        for o, s in zip(i.operands, spec.operands):
            want = {Kind.REG: "r", Kind.PAIR: "p", Kind.PRED: "q"}.get(s.kind)
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
