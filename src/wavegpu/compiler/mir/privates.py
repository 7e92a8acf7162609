"""Unrolled loops in MIR lowering: which loops are unrolled, and their trips; the layout constant
of per-thread arrays in local memory.

The size of an unrolled loop is counted in HIR operations (statements and expression nodes,
each about one MIR instruction), over every copy, nested unrolled loops included, so the
decision is made on the HIR before any copy is emitted. Where each per-thread array lives is
decided by lowering itself (`mir/lower.py`: registers, unless an index is known only at run
time); docs/compiler.md states both rules.
"""

from __future__ import annotations

from ...errors import CompileError, Diagnostic
from ...isa.capabilities import EMULATOR
from .. import hir
from ..types import BOOL

# The most HIR operations the copies of one unrolled loop may hold (docs/compiler.md).
MAX_UNROLLED = 4096
# The most 32-bit registers a per-thread array may take (an f64 element takes two): a larger one
# lives in local memory even when every index folds (docs/compiler.md). Half the emulator's
# MAX_REGISTERS (256; a GPU thread has at most 255), the other half for the kernel's other values:
# an array near the whole register file spills, element by element, at a high compile-time cost.
MAX_REGISTER_WORDS = EMULATOR.constants["MAX_REGISTERS"] // 2
# Threads a per-thread array in local memory makes room for when the kernel does not fix its
# workgroup size: the device's MAX_WORKGROUP_SIZE (DESIGN section 3), so every launch fits.
DEFAULT_THREADS = 1024


def register_words(pa: hir.PrivateArray) -> int:
    """The 32-bit registers a per-thread array takes in registers: one per element, two per f64."""
    return pa.count * (2 if pa.elem.size == 8 else 1)


def _bounds(s: hir.For, env: dict[str, int]) -> range | None:
    """The counter's values when the bounds fold to constants; a CompileError for a loop that
    must be unrolled (Unroll.FULL) and has a bound known only at run time or a zero step."""
    start, stop, step = (hir.fold_int(x, env) for x in (s.start, s.stop, s.step))
    if s.unroll is hir.Unroll.HINT:
        return None if start is None or stop is None or not step else range(start, stop, step)
    if start is None or stop is None or step is None:
        which = [n for n, v in (("start", start), ("stop", stop), ("step", step)) if v is None]
        raise CompileError(
            [
                Diagnostic(
                    f"a loop marked for unrolling needs constant bounds, but its {' and '.join(which)} "
                    "is known only at run time: use a constant, or an ordinary loop",
                    s.span,
                )
            ]
        )
    if step == 0:
        raise CompileError([Diagnostic("a loop marked for unrolling has a step of 0: it would never end", s.span)])
    return range(start, stop, step)


def trips(s: hir.For, env: dict[str, int]) -> range | None:
    """The counter's values when the loop is unrolled here (with the counters of the enclosing
    unrolled copies in env), None when it runs as a loop: Unroll.NO, or a hint whose bounds are
    not constant or whose copies would be too big. A loop that must be unrolled (Unroll.FULL)
    and cannot be is a CompileError at the loop."""
    if s.unroll is hir.Unroll.NO:
        return None
    r = _bounds(s, env)
    if r is None:
        return None
    size = _copies_size(s, r, env, MAX_UNROLLED)
    if size > MAX_UNROLLED:
        if s.unroll is hir.Unroll.HINT:
            return None
        raise CompileError(
            [
                Diagnostic(
                    f"unrolling this loop ({len(r)} trips) makes more than {MAX_UNROLLED} operations, the "
                    "limit of an unrolled loop: unroll an inner loop only, or use an ordinary loop",
                    s.span,
                )
            ]
        )
    return r


def _copies_size(s: hir.For, r: range, env: dict[str, int], limit: int) -> int:
    inner = substitutable(s)
    size = 0
    for k in r:
        size += 1 + _size(s.body, {**env, s.var: k} if inner else env, limit - size)
        if size > limit:
            break
    return size


def _size(body: tuple[hir.Stmt, ...], env: dict[str, int], limit: int) -> int:
    """HIR operations of a block as lowered (unrolled loops copied), stopping past `limit`."""
    size = 0
    for s in body:
        r = trips(s, env) if isinstance(s, hir.For) else None
        if r is not None:
            assert isinstance(s, hir.For)
            size += _copies_size(s, r, env, limit - size)
        else:
            size += 1 + sum(_nodes(e) for e in _exprs(s))
            if isinstance(s, hir.If):
                size += _size(s.then, env, limit - size) + _size(s.other, env, limit - size)
            elif isinstance(s, hir.While | hir.For):
                size += _size(s.body, env, limit - size)
        if size > limit:
            break
    return size


def _nodes(e: hir.Expr) -> int:
    n, stack = 0, [e]
    while stack:
        x = stack.pop()
        n += 1
        stack.extend(c for c in hir._children(x) if isinstance(c, hir.Expr))
    return n


def substitutable(s: hir.For) -> bool:
    """The counter of an unrolled loop is a constant in each copy when the body never writes it."""
    return s.var not in hir.assigned(s.body)


def _exprs(s: hir.Stmt) -> tuple[hir.Expr, ...]:
    """The expressions directly under a statement (not those of its nested blocks)."""
    if isinstance(s, hir.If | hir.While):
        return (s.cond,)
    if isinstance(s, hir.For):
        return (s.start, s.stop, s.step)
    return tuple(c for c in hir._children(s) if isinstance(c, hir.Expr))


def jumps(body: tuple[hir.Stmt, ...]) -> tuple[bool, bool]:
    """Whether a loop body holds a `continue`, a `break` of its own (not of a nested loop)."""
    cont = brk = False
    stack = list(body)
    while stack:
        s = stack.pop()
        if isinstance(s, hir.Continue):
            cont = True
        elif isinstance(s, hir.Break):
            brk = True
        elif isinstance(s, hir.If):
            stack.extend(s.then + s.other)
    return cont, brk


def without_jumps(body: tuple[hir.Stmt, ...], cont: str | None, brk: str | None) -> tuple[hir.Stmt, ...]:
    """An unrolled copy's body with its own `continue` and `break` made flags (`cont`, `brk`,
    bool variables) and the statements after one guarded by them: a jump from inside an `if` to
    the next copy or past the last would not be structured control flow (LIR has loops and ifs
    only), while a flag is. The statements after a jump in its own block never run: dropped."""
    out: list[hir.Stmt] = []
    for n, s in enumerate(body):
        sp = s.span
        if isinstance(s, hir.Continue | hir.Break):
            flag = cont if isinstance(s, hir.Continue) else brk
            assert flag is not None
            out.append(hir.Assign(sp, flag, hir.Const(BOOL, sp, True)))
            return tuple(out)
        if not isinstance(s, hir.If) or jumps((s,)) == (False, False):
            out.append(s)
            continue
        out.append(hir.If(sp, s.cond, without_jumps(s.then, cont, brk), without_jumps(s.other, cont, brk)))
        rest = without_jumps(body[n + 1 :], cont, brk)
        if rest:
            flags = [hir.Var(BOOL, sp, f) for f in (cont, brk) if f is not None]
            either = flags[0] if len(flags) == 1 else hir.Binary(BOOL, sp, hir.BinaryOp.OR, flags[0], flags[1])
            out.append(hir.If(sp, hir.Unary(BOOL, sp, hir.UnaryOp.NOT, either), rest, ()))
        return tuple(out)
    return tuple(out)
