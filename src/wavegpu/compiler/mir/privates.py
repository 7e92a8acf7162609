"""Per-thread arrays and unrolled loops before MIR lowering: the trips of each unrolled loop, and
where each per-thread array lives (registers, or the thread's slice of local memory).

An array lives in registers (one variable per element) when every index of every access folds to
a constant (`hir.fold_int`: literals, constants, arithmetic on them and the counters of unrolled
loops, in each unrolled copy); otherwise in local memory. The decision is made once, on the HIR,
so it does not depend on -O; docs/compiler.md states the rule.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...errors import CompileError, Diagnostic, Span
from .. import hir

# The most MIR instructions the copies of one unrolled loop may emit (nested unrolled loops
# count inside the outer one); one copy emits at least one (the counter's assignment), so this
# also bounds the trip count. docs/compiler.md.
MAX_UNROLLED_INSTS = 4096
# Threads a per-thread array in local memory makes room for when the kernel does not fix its
# workgroup size: the device's MAX_WORKGROUP_SIZE (DESIGN section 3), so every launch fits.
DEFAULT_THREADS = 1024


def trips(s: hir.For, env: dict[str, int]) -> range | None:
    """The counter's values when the loop is to be unrolled here, None when it runs as a loop.
    A loop that must be unrolled (Unroll.FULL) and cannot be is a CompileError at the loop: its
    bounds are not constants, or it would make more copies than MAX_UNROLLED_INSTS."""
    if s.unroll is hir.Unroll.NO:
        return None
    start, stop, step = (hir.fold_int(x, env) for x in (s.start, s.stop, s.step))
    hint = s.unroll is hir.Unroll.HINT
    if hint and (start is None or stop is None or not step or len(range(start, stop, step)) > MAX_UNROLLED_INSTS):
        return None
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
    r = range(start, stop, step)
    if len(r) > MAX_UNROLLED_INSTS:
        raise CompileError([too_big(s.span, f"{len(r)} trips")])
    return r


def too_big(span: Span | None, what: str) -> Diagnostic:
    return Diagnostic(
        f"unrolling this loop makes {what}, more than the limit of {MAX_UNROLLED_INSTS} instructions: "
        "unroll an inner loop only, or use an ordinary loop",
        span,
    )


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
    body: tuple[hir.Stmt, ...], env: dict[str, int], budget: list[int] | None
) -> Iterator[tuple[str, tuple[hir.Expr, ...], dict[str, int]]]:
    """Every per-thread array access (array, indices, the counters' values there), unrolled loops
    walked copy by copy (at most MAX_UNROLLED_INSTS copies per outermost one: each copy emits an
    instruction)."""
    for s in body:
        values = trips(s, env) if isinstance(s, hir.For) else None
        if values is not None:
            assert isinstance(s, hir.For)
            inner = substitutable(s)
            left = budget if budget is not None else [MAX_UNROLLED_INSTS]  # per outermost unrolled loop
            for k in values:
                left[0] -= 1
                if left[0] < 0:
                    raise CompileError([too_big(s.span, "more copies than that")])
                yield from _accesses(s.body, {**env, s.var: k} if inner else env, left)
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
            yield from _accesses(s.then, env, budget)
            yield from _accesses(s.other, env, budget)
        elif isinstance(s, hir.While | hir.For):
            yield from _accesses(s.body, env, budget)


def plan(fn: hir.Function) -> set[str]:
    """The per-thread arrays that need local memory (an index not constant); a CompileError for
    a constant index outside its dimension."""
    shapes = {p.name: p for p in fn.privates}
    in_memory: set[str] = set()
    errors: list[Diagnostic] = []
    for name, indices, env in _accesses(fn.body, {}, None):
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
