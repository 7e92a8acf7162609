"""Helper functions, language-free: the instances a frontend builds (recursion refused with its call
chain, diagnostics inside a helper noted at the call site) and their inlining into HIR kernels.

A frontend lowers each helper it calls into a `hir.Helper` through `Helpers.instance` (one per key:
a generic helper has one per argument types) and writes each call as a `hir.Invoke` expression;
`expand` then replaces every Invoke by the helper's body before MIR: arguments evaluated once, left
to right, into fresh variables (scalars by value; arrays by reference: the caller's array), the
helper's own names renamed so that they never clash, `return` from anywhere (loops and branches
included) leaving the call exactly, and the evaluation order of the expression around the call kept
(operands before it are evaluated before it; a short-circuit or conditional operand only when the
language evaluates it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, fields, is_dataclass, replace
from typing import cast

from ..errors import CompileError, Diagnostic, Span
from . import hir
from .builtins import VOID
from .types import BOOL, ArrayType, ScalarType

# The hidden argument that carries an array parameter's length (`x.len()`, `x.length`): an array
# passed to a helper passes its length with it
HIDDEN_LENGTH = "__len"
# every hidden argument an array brings along, renamed with it when the array is passed: its length,
# and a 2-D array's extents (Python's `x.shape[k]`)
HIDDEN_EXTENTS = (HIDDEN_LENGTH, "__shape0", "__shape1")


class RecursionRefused(CompileError):
    """A helper that calls itself, directly or through others (no call stack on the GPU)."""


class HelperFailed(CompileError):
    """A call of a helper whose body was refused (reported already, at its first call)."""

    def __init__(self) -> None:
        super().__init__([])


@dataclass(frozen=True)
class _Call:
    name: str  # the helper called
    site: Span | None  # where


def _line(span: Span | None) -> str:
    return f" (line {span.line})" if span is not None else ""


class Helpers:
    """The helper instances of one kernel, in the order they were first called."""

    def __init__(self, kernel: str):
        self.kernel = kernel
        self.instances: dict[str, hir.Helper | None] = {}  # None: its body was refused
        self.stack: list[_Call] = []
        self.reported: set[tuple[str, str, Span | None]] = set()  # (helper, message, place): given once

    def instance(self, key: str, name: str, site: Span | None, build: Callable[[], hir.Helper]) -> hir.Helper:
        """The helper `key` (a call of `name` at `site`), built by `build` on its first call.

        RecursionRefused when `name` is being built already (or is the kernel), naming the chain of
        calls with their lines; a CompileError of `build` comes back with a note at `site` on each
        of its diagnostics; HelperFailed for a later call of a helper that was refused."""
        if name == self.kernel or any(c.name == name for c in self.stack):
            raise self._recursion(name, site)
        if key in self.instances:
            got = self.instances[key]
            if got is None:
                raise HelperFailed()
            return got
        self.instances[key] = None  # until it is built
        with self.entered(name, site):
            h = build()
        self.instances[key] = h
        return h

    @contextmanager
    def entered(self, name: str, site: Span | None) -> Iterator[None]:
        """Lowering the body of helper `name` for its call at `site` (`instance` builds in it; a
        frontend that lowered each call's body in place would use this alone): RecursionRefused when `name` is being
        lowered already or is the kernel; a CompileError raised inside comes out with a note at
        `site` on each diagnostic (and a diagnostic given already for this helper is left out)."""
        if name == self.kernel or any(c.name == name for c in self.stack):
            raise self._recursion(name, site)
        self.stack.append(_Call(name, site))
        try:
            yield
        except CompileError as e:
            # another instance of a generic helper refused already says it: one mistake, one message
            fresh = [d for d in e.diagnostics if (name, d.message, d.span) not in self.reported]
            self.reported |= {(name, d.message, d.span) for d in fresh}
            if not fresh:
                raise HelperFailed() from None
            note = Diagnostic(f"in `{name}`, inlined from this call", site, "note")
            kind = RecursionRefused if isinstance(e, RecursionRefused) else CompileError
            raise kind([replace(d, notes=(*d.notes, note)) for d in fresh]) from None
        finally:
            self.stack.pop()

    def _recursion(self, name: str, site: Span | None) -> RecursionRefused:
        """The chain of calls, each with the line of its call; the diagnostic's notes (added as
        the error leaves each helper) show every call of the chain in its source line."""
        calls = [*self.stack, _Call(name, site)]
        chain = " -> ".join([self.kernel, *(f"{c.name}{_line(c.site)}" for c in calls)])
        msg = f"recursion is not supported (no call stack on the GPU; helpers are inlined): {chain}"
        return RecursionRefused([Diagnostic(msg, site)])

    def reads_length(self, h: hir.Helper, param: str, suffix: str = HIDDEN_LENGTH) -> bool:
        """Does `h` read the length (or the extent `suffix`, of HIDDEN_EXTENTS) of its array
        parameter `param`, itself or through the helpers it passes the array to?"""
        want = param + suffix
        for e in (e for s in h.body for e in _exprs(s)):
            if isinstance(e, hir.Var) and e.name == want:
                return True
            if isinstance(e, hir.Invoke):
                inner = self.instances.get(e.callee)
                if inner is not None and any(
                    isinstance(a, hir.ArrayArg) and a.name == param and self.reads_length(inner, p.name, suffix)
                    for p, a in zip(inner.params, e.args)
                ):
                    return True
        return False

    def pure(self, h: hir.Helper) -> bool:
        """Does `h` only compute its result (no store, atomic, barrier or fence, no write to a
        captured variable, itself or through the helpers it calls)? A pure call may be evaluated
        early or twice without a change of meaning."""
        own = {*(p.name for p in h.params), *(n for n, _ in h.variables)}
        mine = {pa.name for pa in h.privates}  # its own per-thread arrays (a passed one is the caller's)
        for s in _stmts(h.body):
            if isinstance(s, hir.Store) or (isinstance(s, hir.Assign) and s.name not in own):
                return False
            if isinstance(s, hir.PrivateStore | hir.PrivateInit) and s.array not in mine:
                return False
            if isinstance(s, hir.For) and s.var not in own:
                return False
        for e in (e for s in h.body for e in _exprs(s)):
            if isinstance(e, hir.Call) and (e.array is not None or e.type == VOID):
                return False
            if isinstance(e, hir.Invoke):
                inner = self.instances.get(e.callee)
                if inner is None or not self.pure(inner):
                    return False
        return True

    def built(self) -> tuple[hir.Helper, ...]:
        """The helpers built (for `hir.Function.helpers`)."""
        return tuple(h for h in self.instances.values() if h is not None)


def zero(t: ScalarType, sp: Span | None) -> hir.Const:
    """The zero of a scalar type."""
    return hir.Const(t, sp, False if t is BOOL else 0.0 if t.is_float else 0)


# ---- inlining ------------------------------------------------------------------------------------
def _exprs(x: hir.Stmt | hir.Expr) -> Iterator[hir.Expr]:
    stack: list[hir.Stmt | hir.Expr] = [x]
    while stack:
        y = stack.pop()
        if isinstance(y, hir.Expr):
            yield y
        stack.extend(hir._children(y))


def has_invoke(x: hir.Stmt | hir.Expr) -> bool:
    """Does it call a helper anywhere inside?"""
    return any(isinstance(e, hir.Invoke) for e in _exprs(x))


class _Inliner:
    def __init__(self, fn: hir.Function):
        self.fn = fn
        self.helpers = {h.key: h for h in fn.helpers}
        self.vars: dict[str, ScalarType] = dict(fn.variables)
        self.taken: set[str] = {*self.vars, *(p.name for p in fn.params), *(la.name for la in fn.locals)}
        self.taken |= {pa.name for pa in fn.privates}
        self.stack: list[tuple[hir.Helper, Span | None]] = []
        self.arrays_taken: set[str] = {*(p.name for p in fn.params), *(la.name for la in fn.locals)}
        self.arrays_taken |= {pa.name for pa in fn.privates}
        self.privates: list[hir.PrivateArray] = []  # those of the helpers inlined, one set per call

    def fresh_array(self, hint: str) -> str:
        name, k = hint, 1
        while name in self.arrays_taken or name in self.taken:
            k += 1
            name = f"{hint}${k}"
        self.arrays_taken.add(name)
        return name

    def fresh(self, hint: str, t: ScalarType) -> str:
        name, k = hint, 1
        while name in self.taken:
            k += 1
            name = f"{hint}${k}"
        self.taken.add(name)
        self.vars[name] = t
        return name

    # -- statements
    def block(self, body: tuple[hir.Stmt, ...] | list[hir.Stmt]) -> tuple[hir.Stmt, ...]:
        out: list[hir.Stmt] = []
        for s in body:
            out.extend(self.stmt(s) if has_invoke(s) else (s,))
        return tuple(out)

    def stmt(self, s: hir.Stmt) -> list[hir.Stmt]:
        sp = s.span
        if isinstance(s, hir.Assign):
            pre, v = self.expr(s.value)
            return [*pre, replace(s, value=v)]
        if isinstance(s, hir.Store):
            pre, (i, v) = self.seq([s.index, s.value])
            return [*pre, replace(s, index=i, value=v)]
        if isinstance(s, hir.PrivateStore):
            pre, xs = self.seq([*s.indices, s.value])
            return [*pre, replace(s, indices=tuple(xs[:-1]), value=xs[-1])]
        if isinstance(s, hir.PrivateInit):
            pre, xs = self.seq(list(s.values))
            return [*pre, replace(s, values=tuple(xs))]
        if isinstance(s, hir.ExprStmt):
            if isinstance(s.expr, hir.Invoke):
                pre, _ = self.call(s.expr)
                return pre
            pre, e = self.expr(s.expr)
            return pre if isinstance(e, hir.Var | hir.Const) else [*pre, replace(s, expr=e)]
        if isinstance(s, hir.If):
            pre, c = self.expr(s.cond)
            return [*pre, hir.If(sp, c, self.block(s.then), self.block(s.other))]
        if isinstance(s, hir.While):
            body = self.block(s.body)
            if not has_invoke(s.cond):
                return [replace(s, body=body)]
            # the test's calls run before each test: `continue` goes to the top, and so to them
            pre, c = self.expr(s.cond)
            stop = hir.If(sp, hir.Unary(BOOL, sp, hir.UnaryOp.NOT, c), (hir.Break(sp),), ())
            return [hir.While(sp, hir.Const(BOOL, sp, True), (*pre, stop, *body))]
        if isinstance(s, hir.For):
            # start, stop and step are evaluated once, in this order, before the loop (mir/lower.py)
            pre, (a, b, c) = self.seq([s.start, s.stop, s.step])
            return [*pre, replace(s, start=a, stop=b, step=c, body=self.block(s.body))]
        if isinstance(s, hir.Return):  # a kernel's: no value
            return [s]
        raise AssertionError(f"statement {type(s).__name__} holds no expression")

    # -- expressions: (statements to run first, the value)
    def seq(self, es: list[hir.Expr]) -> tuple[list[hir.Stmt], list[hir.Expr]]:
        """Expressions evaluated left to right: a value is kept in a temporary when a later one
        calls a helper (the call may write an array or a captured variable the value reads)."""
        parts = [self.expr(e) for e in es]
        later = [any(p for p, _ in parts[i + 1 :]) for i in range(len(parts))]
        pre: list[hir.Stmt] = []
        vals: list[hir.Expr] = []
        for (p, v), spill in zip(parts, later):
            pre.extend(p)
            if spill and not isinstance(v, hir.Const):
                t = self.fresh("$arg", v.type)
                pre.append(hir.Assign(v.span, t, v))
                v = hir.Var(v.type, v.span, t)
            vals.append(v)
        return pre, vals

    def expr(self, e: hir.Expr) -> tuple[list[hir.Stmt], hir.Expr]:
        if not has_invoke(e):
            return [], e
        sp = e.span
        if isinstance(e, hir.Invoke):
            pre, v = self.call(e)
            assert v is not None, "a helper without a result used as a value (the frontend refuses it)"
            return pre, v
        if isinstance(e, hir.Unary | hir.Cast):
            pre, x = self.expr(e.operand)
            return pre, replace(e, operand=x)
        if isinstance(e, hir.Binary | hir.Compare):
            pre, (a, b) = self.seq([e.left, e.right])
            return pre, replace(e, left=a, right=b)
        if isinstance(e, hir.Logical):
            pre, a = self.expr(e.left)
            if not has_invoke(e.right):
                return pre, replace(e, left=a)
            t = self.fresh("$sc", BOOL)
            rpre, b = self.expr(e.right)
            test: hir.Expr = hir.Var(BOOL, sp, t)
            if e.op is hir.LogicalOp.OR:
                test = hir.Unary(BOOL, sp, hir.UnaryOp.NOT, test)
            then = (*rpre, hir.Assign(sp, t, b))
            return [*pre, hir.Assign(sp, t, a), hir.If(sp, test, then, ())], hir.Var(BOOL, sp, t)
        if isinstance(e, hir.IfExpr):
            pre, c = self.expr(e.cond)
            if not has_invoke(e.then) and not has_invoke(e.other):
                return pre, replace(e, cond=c)
            t = self.fresh("$sel", e.type)
            tpre, tv = self.expr(e.then)
            opre, ov = self.expr(e.other)
            branch = hir.If(sp, c, (*tpre, hir.Assign(sp, t, tv)), (*opre, hir.Assign(sp, t, ov)))
            return [*pre, branch], hir.Var(e.type, sp, t)
        if isinstance(e, hir.Load):
            pre, i = self.expr(e.index)
            return pre, replace(e, index=i)
        if isinstance(e, hir.PrivateLoad):
            pre, xs = self.seq(list(e.indices))
            return pre, replace(e, indices=tuple(xs))
        if isinstance(e, hir.Call):
            pre, args = self.seq(list(e.args))
            return pre, replace(e, args=tuple(args))
        raise AssertionError(f"expression {type(e).__name__} holds no call")

    def snapshot(self, v: hir.Expr, hint: str, pre: list[hir.Stmt]) -> hir.Expr:
        """v as it is now: a constant, else a fresh variable assigned it (appended to pre)."""
        if isinstance(v, hir.Const):
            return v
        t = self.fresh(hint, v.type)
        pre.append(hir.Assign(v.span, t, v))
        return hir.Var(v.type, v.span, t)

    # -- one call
    def call(self, e: hir.Invoke) -> tuple[list[hir.Stmt], hir.Expr | None]:
        h = self.helpers[e.callee]
        if any(x is h for x, _ in self.stack):  # frontends refuse it first, through Helpers
            chain = " -> ".join([self.fn.name, *(f"{x.name}{_line(site)}" for x, site in self.stack)])
            raise RecursionRefused(
                [Diagnostic(f"recursion is not supported (no call stack on the GPU): {chain} -> {h.name}", e.span)]
            )
        assert len(e.args) == len(h.params), f"{h.key}: {len(e.args)} arguments for {len(h.params)} parameters"
        # the scalars and the leading indices of a row (ArrayArg.index), left to right
        flat = [x for a in e.args for x in ((a,) if isinstance(a, hir.Expr) else a.index)]
        pre, vals = self.seq(flat)
        names: dict[str, str] = {}
        arrays: dict[str, str] = {}
        rows: dict[str, tuple[hir.Expr, ...]] = {}
        it = iter(vals)
        for p, a in zip(h.params, e.args):
            if isinstance(a, hir.ArrayArg):
                assert isinstance(p.type, ArrayType)
                arrays[p.name] = a.name
                names |= {p.name + x: a.name + x for x in HIDDEN_EXTENTS}
                if a.index:  # a row: its indices as they were at the call
                    rows[p.name] = tuple(self.snapshot(next(it), f"{h.name}${p.name}$row", pre) for _ in a.index)
                continue
            v = next(it)
            assert isinstance(p.type, ScalarType) and v.type == p.type, f"{h.key}: {p.name} takes {p.type}"
            names[p.name] = self.fresh(f"{h.name}${p.name}", p.type)
            pre.append(hir.Assign(v.span, names[p.name], v))
        for name, t in h.variables:
            if name not in names:
                names[name] = self.fresh(f"{h.name}${name.lstrip('$')}", t)
        for pa in h.privates:  # a per-thread array the helper declares: this call's own
            arrays[pa.name] = self.fresh_array(f"{h.name}${pa.name}")
            self.privates.append(replace(pa, name=arrays[pa.name]))
        result = self.fresh(f"{h.name}$result", h.result) if h.result is not None else None
        body = _Rename(names, arrays, rows, self.helpers).block(h.body)
        if e.span is not None:  # the body's places remember this call (call_notes)
            body = tuple(cast(hir.Stmt, _called(s, h.name, e.span)) for s in body)
        body = self.returns(body, h, result, e.span)
        self.stack.append((h, e.span))
        try:
            pre.extend(self.block(body))
        finally:
            self.stack.pop()
        if result is None or h.result is None:
            return pre, None
        return pre, hir.Var(h.result, e.span, result)

    def returns(
        self, body: tuple[hir.Stmt, ...], h: hir.Helper, result: str | None, sp: Span | None
    ) -> tuple[hir.Stmt, ...]:
        """The body with each `return` made an assignment of the result and a jump past the rest:
        a body whose only return is its last statement runs as it is; otherwise a return sets a
        flag, the statements after one that may have returned run only while the flag is clear,
        and a return inside the helper's own loops breaks out of each of them (no loop of one
        trip: the structured ifs are what every later stage handles best)."""

        def value(r: hir.Return) -> list[hir.Stmt]:
            if r.value is None or result is None:
                return []
            return [hir.Assign(r.span, result, r.value)]

        body = _reachable(body)
        count = sum(1 for s in _stmts(body) if isinstance(s, hir.Return))
        if count == 0 or (count == 1 and body and isinstance(body[-1], hir.Return)):
            if count:
                last = body[-1]
                assert isinstance(last, hir.Return)
                return (*body[:-1], *value(last))
            return body
        flag = self.fresh(f"{h.name}$returned", BOOL)

        def returns_in(s: hir.Stmt) -> bool:
            return any(isinstance(x, hir.Return) for x in _stmts((s,)))

        def block(stmts: tuple[hir.Stmt, ...], in_loop: bool) -> tuple[hir.Stmt, ...]:
            out: list[hir.Stmt] = []
            for k, s in enumerate(stmts):
                if isinstance(s, hir.Return):
                    out += value(s)
                    out.append(hir.Assign(s.span, flag, hir.Const(BOOL, s.span, True)))
                    if in_loop:
                        out.append(hir.Break(s.span))
                    return tuple(out)  # _reachable: nothing follows
                if not returns_in(s):
                    out.append(s)
                    continue
                if isinstance(s, hir.If):
                    out.append(replace(s, then=block(s.then, in_loop), other=block(s.other, in_loop)))
                else:
                    assert isinstance(s, hir.While | hir.For)
                    out.append(replace(s, body=block(s.body, True)))
                    if in_loop:  # it returned from an inner loop: leave this one too
                        out.append(hir.If(s.span, hir.Var(BOOL, s.span, flag), (hir.Break(s.span),), ()))
                rest = block(stmts[k + 1 :], in_loop)
                if rest and not in_loop:  # (in a loop, a return has left it already)
                    clear = hir.Unary(BOOL, s.span, hir.UnaryOp.NOT, hir.Var(BOOL, s.span, flag))
                    out.append(hir.If(s.span, clear, rest, ()))
                else:
                    out.extend(rest)
                return tuple(out)
            return tuple(out)

        head: list[hir.Stmt] = []
        if result is not None and h.result is not None:
            head.append(hir.Assign(sp, result, zero(h.result, sp)))  # a path that falls off the end
        head.append(hir.Assign(sp, flag, hir.Const(BOOL, sp, False)))
        return (*head, *block(body, False))


def _reachable(body: tuple[hir.Stmt, ...]) -> tuple[hir.Stmt, ...]:
    """The statements that can run: none after a break, continue or return of the same block
    (LIR structuring expects no unreachable code, which a rewritten `return` would otherwise leave)."""
    out: list[hir.Stmt] = []
    for s in body:
        if isinstance(s, hir.If):
            s = replace(s, then=_reachable(s.then), other=_reachable(s.other))
        elif isinstance(s, hir.While | hir.For):
            s = replace(s, body=_reachable(s.body))
        out.append(s)
        if isinstance(s, hir.Break | hir.Continue | hir.Return):
            break
    return tuple(out)


def _stmts(body: tuple[hir.Stmt, ...]) -> Iterator[hir.Stmt]:
    stack = list(body)
    while stack:
        s = stack.pop()
        yield s
        if isinstance(s, hir.If):
            stack.extend((*s.then, *s.other))
        elif isinstance(s, hir.While | hir.For):
            stack.extend(s.body)


@dataclass
class _Rename:
    """A helper's body with its own names (parameters, variables) and its array parameters replaced;
    the names it does not own (a closure's captures) stay the caller's."""

    names: dict[str, str]
    arrays: dict[str, str]
    rows: dict[str, tuple[hir.Expr, ...]] = field(default_factory=dict)  # a row parameter's leading indices
    helpers: dict[str, hir.Helper] | None = None  # the kernel's: a nested helper's copy is added here

    def block(self, body: tuple[hir.Stmt, ...]) -> tuple[hir.Stmt, ...]:
        return tuple(self.stmt(s) for s in body)

    def nested(self, key: str) -> str:
        """The helper a renamed body calls: a closure defined inside the helper (its body reads the
        helper's names, which this renaming replaces) is called as a copy renamed the same way; its
        own names stay. Any other helper (nothing of ours in its body) is called as it is."""
        if self.helpers is None or key not in self.helpers:
            return key
        g = self.helpers[key]
        own = {p.name for p in g.params} | {n for n, _ in g.variables}
        mine = {p.name for p in g.params} | {pa.name for pa in g.privates}
        inner = _Rename(
            {k: v for k, v in self.names.items() if k not in own},
            {k: v for k, v in self.arrays.items() if k not in mine},
            {k: v for k, v in self.rows.items() if k not in mine},
            self.helpers,
        )
        body = inner.block(g.body)
        if body == g.body:
            return key
        k, helpers = 2, self.helpers
        while f"{g.key}#{k}" in helpers:
            k += 1
        copy = replace(g, key=f"{g.key}#{k}", body=body)
        helpers[copy.key] = copy
        return copy.key

    def var(self, name: str) -> str:
        return self.names.get(name, name)

    def arr(self, name: str) -> str:
        return self.arrays.get(name, name)

    def idx(self, array: str, indices: tuple[hir.Expr, ...]) -> tuple[hir.Expr, ...]:
        return (*self.rows.get(array, ()), *map(self.expr, indices))

    def stmt(self, s: hir.Stmt) -> hir.Stmt:
        e = self.expr
        if isinstance(s, hir.Assign):
            return replace(s, name=self.var(s.name), value=e(s.value))
        if isinstance(s, hir.Store):
            return replace(s, array=self.arr(s.array), index=e(s.index), value=e(s.value))
        if isinstance(s, hir.PrivateStore):
            return replace(s, array=self.arr(s.array), indices=self.idx(s.array, s.indices), value=e(s.value))
        if isinstance(s, hir.PrivateInit):
            return replace(s, array=self.arr(s.array), values=tuple(map(e, s.values)))
        if isinstance(s, hir.ExprStmt):
            return replace(s, expr=e(s.expr))
        if isinstance(s, hir.If):
            return replace(s, cond=e(s.cond), then=self.block(s.then), other=self.block(s.other))
        if isinstance(s, hir.While):
            return replace(s, cond=e(s.cond), body=self.block(s.body))
        if isinstance(s, hir.For):
            return replace(
                s, var=self.var(s.var), start=e(s.start), stop=e(s.stop), step=e(s.step), body=self.block(s.body)
            )
        if isinstance(s, hir.Return) and s.value is not None:
            return replace(s, value=e(s.value))
        return s

    def expr(self, x: hir.Expr) -> hir.Expr:
        e = self.expr
        if isinstance(x, hir.Var):
            return replace(x, name=self.var(x.name))
        if isinstance(x, hir.Unary | hir.Cast):
            return replace(x, operand=e(x.operand))
        if isinstance(x, hir.Binary | hir.Compare | hir.Logical):
            return replace(x, left=e(x.left), right=e(x.right))
        if isinstance(x, hir.IfExpr):
            return replace(x, cond=e(x.cond), then=e(x.then), other=e(x.other))
        if isinstance(x, hir.Load):
            return replace(x, array=self.arr(x.array), index=e(x.index))
        if isinstance(x, hir.PrivateLoad):
            return replace(x, array=self.arr(x.array), indices=self.idx(x.array, x.indices))
        if isinstance(x, hir.Call):
            return replace(x, args=tuple(e(a) for a in x.args), array=None if x.array is None else self.arr(x.array))
        if isinstance(x, hir.Invoke):
            args = tuple(
                hir.ArrayArg(self.arr(a.name), a.type, self.idx(a.name, a.index))
                if isinstance(a, hir.ArrayArg)
                else e(a)
                for a in x.args
            )
            return replace(x, callee=self.nested(x.callee), args=args)
        return x


def _called(x: object, name: str, site: Span) -> object:
    """`x` (a HIR node, a tuple of them, a span) with every span's call chain extended by the call
    of helper `name` at `site` (and that site's own chain): Span.calls, innermost first."""
    if isinstance(x, Span):
        return replace(x, calls=(*x.calls, (name, site), *site.calls))
    if isinstance(x, tuple):
        return tuple(_called(y, name, site) for y in x)
    if is_dataclass(x) and not isinstance(x, type) and type(x).__module__ == hir.__name__:
        changes = {f.name: _called(getattr(x, f.name), name, site) for f in fields(x) if f.init}
        return replace(x, **changes)
    return x


def call_notes(d: Diagnostic) -> Diagnostic:
    """A diagnostic found after inlining (in MIR, after unrolling) at a place inside a helper: a
    note at each call that brought it there, innermost first, as a frontend's own errors inside a
    helper have (Helpers.entered)."""
    if d.span is None or not d.span.calls or d.notes:
        return d
    notes = tuple(Diagnostic(f"in `{name}`, inlined from this call", site, "note") for name, site in d.span.calls)
    return replace(d, notes=notes)


def expand(fn: hir.Function) -> hir.Function:
    """The kernel with every helper call inlined (the kernel itself when it calls none)."""
    if not fn.helpers and not any(has_invoke(s) for s in fn.body):
        return fn
    inl = _Inliner(fn)
    body = inl.block(fn.body)
    privates = (*fn.privates, *inl.privates)
    return replace(fn, body=body, variables=tuple(inl.vars.items()), helpers=(), privates=privates)


__all__ = [
    "HIDDEN_EXTENTS",
    "HIDDEN_LENGTH",
    "HelperFailed",
    "Helpers",
    "RecursionRefused",
    "call_notes",
    "expand",
    "has_invoke",
    "zero",
]
