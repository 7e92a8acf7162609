"""Hand-built HIR for the compiler tests that skip the frontends (helper inlining): a span, an
output array type, and short builders of variables, constants and the thread id."""

from __future__ import annotations

from wavegpu.compiler import hir
from wavegpu.compiler.types import I32, U32, ArrayType, ScalarType
from wavegpu.errors import Span

SP = Span("t", 1, 1)
OUT = ArrayType(U32, "global")


def var(name: str, t: ScalarType = U32) -> hir.Var:
    return hir.Var(t, SP, name)


def const(v: int, t: ScalarType = U32) -> hir.Const:
    return hir.Const(t, SP, v)


def tid() -> hir.Expr:
    """thread_id(0) as u32."""
    return hir.Cast(U32, SP, hir.Call(I32, SP, "thread_id", (), None, (("axis", 0),)))
