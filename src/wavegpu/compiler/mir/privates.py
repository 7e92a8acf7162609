"""Per-thread arrays and unrolled loops before MIR lowering: which loops are unrolled (and their
trips), and where each per-thread array lives (registers, or the thread's slice of local memory).

An array lives in registers (one variable per element) when every index of every access folds to
a constant (`hir.fold_int`: literals, constants, arithmetic on them and the counters of unrolled
loops, in each unrolled copy); otherwise in local memory. The decision is made once, on the HIR,
so it does not depend on -O; docs/compiler.md states the rule.

The size of an unrolled loop is counted in HIR operations (statements and expression nodes,
each about one MIR instruction), over every copy, nested unrolled loops included: the planner
and MIR lowering count the same way, so they agree on which loops are unrolled.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...errors import CompileError, Diagnostic
from .. import hir

# The most HIR operations the copies of one unrolled loop may hold (docs/compiler.md).
MAX_UNROLLED = 4096
# Threads a per-thread array in local memory makes room for when the kernel does not fix its
# workgroup size: the device's MAX_WORKGROUP_SIZE (DESIGN section 3), so every launch fits.
DEFAULT_THREADS = 1024


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


def _accesses(
    body: tuple[hir.Stmt, ...], env: dict[str, int]
) -> Iterator[tuple[str, tuple[hir.Expr, ...], dict[str, int]]]:
    """Every per-thread array access (array, indices, the counters' values there), unrolled loops
    walked copy by copy."""
    for s in body:
        values = trips(s, env) if isinstance(s, hir.For) else None
        if values is not None:
            assert isinstance(s, hir.For)
            inner = substitutable(s)
            for k in values:
                yield from _accesses(s.body, {**env, s.var: k} if inner else env)
            continue
        if isinstance(s, hir.PrivateStore):
            yield s.array, s.indices, env
        stack = list(_exprs(s))
        while stack:
            x = stack.pop()
            if isinstance(x, hir.PrivateLoad):
                yield x.array, x.indices, env
            stack.extend(c for c in hir._children(x) if isinstance(c, hir.Expr))
        if isinstance(s, hir.If):
            yield from _accesses(s.then, env)
            yield from _accesses(s.other, env)
        elif isinstance(s, hir.While | hir.For):
            yield from _accesses(s.body, env)


def plan(fn: hir.Function) -> set[str]:
    """The per-thread arrays that need local memory (an index not constant); a CompileError for
    a constant index outside its dimension."""
    shapes = {p.name: p for p in fn.privates}
    in_memory: set[str] = set()
    errors: list[Diagnostic] = []
    for name, indices, env in _accesses(fn.body, {}):
        pa = shapes[name]
        for dim, (ix, n) in enumerate(zip(indices, pa.shape)):
            k = hir.fold_int(ix, env)
            if k is None:
                in_memory.add(name)
            elif not 0 <= k < n:
                where = f" in dimension {dim + 1}" if len(pa.shape) > 1 else ""
                msg = f"index {k} is out of range for per-thread array {name!r}{where} (size {n})"
                if all(d.message != msg or d.span != ix.span for d in errors):
                    errors.append(Diagnostic(msg, ix.span))
    if errors:
        raise CompileError(errors)
    return in_memory
