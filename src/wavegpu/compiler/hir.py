"""HIR: the typed, structured form of a kernel every frontend produces (one language-free tree).

Frontends type-check while building it; `check` performs the GPU validation that does not depend
on the source language, and `dump` prints it deterministically.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum

from ..errors import Span
from .types import ArrayType, ScalarType, Type


@dataclass(frozen=True)
class Param:
    name: str
    type: Type  # a ScalarType (scalar, by value) or ArrayType (buffer)
    span: Span | None = None


# ---- operations: what they compute, not how a language spells them -----------------------------
class UnaryOp(Enum):
    NEG = "neg"  # arithmetic negation (integers wrap)
    NOT = "not"  # logical not of a bool
    BIT_NOT = "bit_not"  # bitwise complement of an integer


class BinaryOp(Enum):
    """The operands have the result's type (shifts: the left operand's; bool and/or/xor: bools)."""

    ADD = "add"
    SUB = "sub"
    MUL = "mul"
    DIV = "div"  # true division: of floats, rounded once (frontends convert integer operands)
    FLOOR_DIV = "floor_div"  # the quotient rounded toward negative infinity
    FLOOR_MOD = "floor_mod"  # a - floor_div(a, b) * b: the remainder takes the divisor's sign
    TRUNC_DIV = "trunc_div"  # integers: the quotient rounded toward zero (C, C++, Rust, `| 0`)
    TRUNC_REM = "trunc_rem"  # integers: a - trunc_div(a, b) * b: the remainder takes the dividend's sign
    AND = "and"  # bitwise, or logical of bools (both sides evaluated)
    OR = "or"
    XOR = "xor"
    SHL = "shl"
    SHR = "shr"  # arithmetic for i32, logical for u32


class CompareOp(Enum):
    EQ = "eq"
    NE = "ne"
    LT = "lt"
    LE = "le"
    GT = "gt"
    GE = "ge"


class LogicalOp(Enum):
    """Short-circuit: the right operand is evaluated only when the left does not decide."""

    AND = "and"
    OR = "or"


# ---- expressions ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Expr:
    type: ScalarType
    span: Span | None


@dataclass(frozen=True)
class Const(Expr):
    value: int | float | bool


@dataclass(frozen=True)
class Var(Expr):
    name: str


@dataclass(frozen=True)
class Unary(Expr):
    op: UnaryOp
    operand: Expr


@dataclass(frozen=True)
class Binary(Expr):
    op: BinaryOp
    left: Expr
    right: Expr


@dataclass(frozen=True)
class Compare(Expr):
    """Compares mathematical values: the operands have one type, or are i32 and u32."""

    op: CompareOp
    left: Expr
    right: Expr


@dataclass(frozen=True)
class Logical(Expr):
    op: LogicalOp
    left: Expr
    right: Expr


@dataclass(frozen=True)
class IfExpr(Expr):
    cond: Expr
    then: Expr
    other: Expr


@dataclass(frozen=True)
class Cast(Expr):
    operand: Expr


@dataclass(frozen=True)
class Load(Expr):
    array: str
    index: Expr


@dataclass(frozen=True)
class PrivateLoad(Expr):
    """An element of a per-thread array (`Function.privates`): one index per dimension."""

    array: str
    indices: tuple[Expr, ...]


@dataclass(frozen=True)
class Call(Expr):
    """A builtin of compiler/builtins.py by its name (special registers, math, atomics, wave
    operations, barrier, fence), or `powi` (x ** n for a constant n >= 2 in attrs, x evaluated once)."""

    name: str
    args: tuple[Expr, ...] = ()
    array: str | None = None  # the array operand of an atomic
    attrs: tuple[tuple[str, object], ...] = ()


@dataclass(frozen=True)
class ArrayArg:
    """An array passed to a helper function: by reference, the caller's array by its HIR name.
    `index`: a row of a 2-D per-thread array (`acc(t[r], v)` in TypeScript): the leading indices,
    evaluated once at the call; the helper's own indices follow them."""

    name: str
    type: ArrayType
    index: tuple[Expr, ...] = ()


@dataclass(frozen=True)
class Invoke(Expr):
    """A call of a helper function of `Function.helpers` by its key, inlined by compiler/inline.py
    before MIR. `type` is the helper's result type (builtins.VOID for none); scalars are passed by
    value (each argument converted to its parameter's type by the frontend), arrays by reference."""

    callee: str
    args: tuple[Expr | ArrayArg, ...] = ()


# ---- statements -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Stmt:
    span: Span | None


@dataclass(frozen=True)
class Assign(Stmt):
    name: str
    value: Expr


@dataclass(frozen=True)
class Store(Stmt):
    array: str
    index: Expr
    value: Expr


@dataclass(frozen=True)
class PrivateStore(Stmt):
    array: str
    indices: tuple[Expr, ...]
    value: Expr


@dataclass(frozen=True)
class PrivateInit(Stmt):
    """The declaration of a per-thread array runs here: its elements (row-major) take `values`
    in order, those after the last value zero (C++'s `float t[4] = {1.0f};`, `[0.0f32; 4]`)."""

    array: str
    values: tuple[Expr, ...] = ()


@dataclass(frozen=True)
class ExprStmt(Stmt):
    expr: Expr


@dataclass(frozen=True)
class If(Stmt):
    cond: Expr
    then: tuple[Stmt, ...]
    other: tuple[Stmt, ...]


@dataclass(frozen=True)
class While(Stmt):
    cond: Expr
    body: tuple[Stmt, ...]


class Unroll(Enum):
    """How a counted loop asks to be unrolled. Full unrolling needs start, stop and step that
    fold to constants (`fold_int`, with the counters of enclosing unrolled loops known)."""

    NO = "no"  # an ordinary loop (-O3's unroll pass may still unroll it: passes/unroll.py)
    FULL = "full"  # wg.static_range: fully unrolled, a CompileError when the bounds are not constant
    HINT = "hint"  # #pragma unroll: fully unrolled when the bounds are constant, else runs as written


@dataclass(frozen=True)
class For(Stmt):
    """for var in range(start, stop, step): step's sign decides the test when it is not constant.

    `unroll`: whether the source asks for full unrolling (`Unroll`); MIR lowering then emits one
    copy of the body per trip, the counter a constant in each (docs/compiler.md)."""

    var: str
    start: Expr
    stop: Expr
    step: Expr
    body: tuple[Stmt, ...]
    unroll: Unroll = Unroll.NO


@dataclass(frozen=True)
class Break(Stmt):
    pass


@dataclass(frozen=True)
class Continue(Stmt):
    pass


@dataclass(frozen=True)
class Return(Stmt):
    value: Expr | None = None  # a helper's result (kernels return no value)


@dataclass(frozen=True)
class LocalArray:
    name: str
    type: ArrayType
    count: int
    span: Span | None = None


@dataclass(frozen=True)
class Helper:
    """A helper function, language-free: one instance per key (a generic helper has one per
    argument types). Its body may read and write names it does not declare (the variables a
    closure captures: the caller's, by reference); `variables` are its own, renamed when inlined."""

    key: str  # unique within its kernel: the name, with the instance's types for a generic one
    name: str  # as the source spells it
    params: tuple[Param, ...]
    result: ScalarType | None  # None: returns nothing
    body: tuple[Stmt, ...]
    variables: tuple[tuple[str, ScalarType], ...]
    span: Span | None = None  # the definition
    privates: tuple[PrivateArray, ...] = ()  # the per-thread arrays it declares (one set per call)


@dataclass(frozen=True)
class PrivateArray:
    """A per-thread array: each thread has its own `shape` (one or two constant dimensions,
    row-major) of `elem`. MIR lowering keeps it in registers when every access's indices fold to
    constants, else in the thread's slice of local memory (docs/compiler.md)."""

    name: str
    elem: ScalarType
    shape: tuple[int, ...]
    span: Span | None = None

    @property
    def count(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n


@dataclass(frozen=True)
class Function:
    name: str
    params: tuple[Param, ...]
    body: tuple[Stmt, ...]
    variables: tuple[tuple[str, ScalarType], ...]
    locals: tuple[LocalArray, ...] = ()
    source_file: str = "<kernel>"
    workgroup_size: tuple[int, int, int] | None = None
    options: dict[str, object] = field(default_factory=dict, compare=False)
    helpers: tuple[Helper, ...] = ()  # the helper functions its Invokes call (compiler/inline.py)
    privates: tuple[PrivateArray, ...] = ()  # per-thread arrays (after the fields frontends pass by position)

    def array_type(self, name: str) -> ArrayType:
        for p in self.params:
            if p.name == name and isinstance(p.type, ArrayType):
                return p.type
        for la in self.locals:
            if la.name == name:
                return la.type
        raise KeyError(name)


# ---- constant integers --------------------------------------------------------------------------
def _wrap(v: int, t: ScalarType) -> int:
    v &= (1 << t.bits) - 1
    return v - (1 << t.bits) if t.signed and v >> (t.bits - 1) else v


def fold_int(e: Expr, env: Mapping[str, int] | None = None) -> int | None:
    """The value of an integer expression built from constants, the variables in `env` (the
    counters of unrolled loops) and integer arithmetic, computed as the operation does (32-bit
    integers wrap); None when it is not such a constant. What makes a per-thread array index or
    an unrolled loop's bounds constant (docs/compiler.md)."""
    t = e.type
    if not t.is_int:
        return None
    if isinstance(e, Const):
        return None if isinstance(e.value, bool) else _wrap(int(e.value), t)
    if isinstance(e, Var):
        v = (env or {}).get(e.name)
        return None if v is None else _wrap(v, t)
    if isinstance(e, Cast):
        x = fold_int(e.operand, env)
        return None if x is None else _wrap(x, t)
    if isinstance(e, Unary):
        x = fold_int(e.operand, env)
        if x is None or e.op is UnaryOp.NOT:
            return None
        return _wrap(-x if e.op is UnaryOp.NEG else ~x, t)
    if isinstance(e, Binary):
        a, b = fold_int(e.left, env), fold_int(e.right, env)
        if a is None or b is None:
            return None
        op = e.op
        if op in (BinaryOp.SHL, BinaryOp.SHR):
            if not 0 <= b < t.bits:
                return None
            return _wrap(a << b if op is BinaryOp.SHL else a >> b, t)
        if op in (BinaryOp.TRUNC_DIV, BinaryOp.TRUNC_REM, BinaryOp.FLOOR_DIV, BinaryOp.FLOOR_MOD, BinaryOp.DIV):
            if b == 0 or op is BinaryOp.DIV:
                return None
            if op is BinaryOp.FLOOR_DIV:
                return _wrap(a // b, t)
            if op is BinaryOp.FLOOR_MOD:
                return _wrap(a % b, t)
            q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
            return _wrap(q if op is BinaryOp.TRUNC_DIV else a - q * b, t)
        table = {
            BinaryOp.ADD: lambda: a + b,
            BinaryOp.SUB: lambda: a - b,
            BinaryOp.MUL: lambda: a * b,
            BinaryOp.AND: lambda: a & b,
            BinaryOp.OR: lambda: a | b,
            BinaryOp.XOR: lambda: a ^ b,
        }
        return _wrap(table[op](), t)
    return None


def assigned(body: tuple[Stmt, ...]) -> set[str]:
    """The variables a block writes (assignments and loop counters, nested blocks included)."""
    out: set[str] = set()
    stack: list[Stmt | Expr] = list(body)
    while stack:
        x = stack.pop()
        if isinstance(x, Assign):
            out.add(x.name)
        elif isinstance(x, For):
            out.add(x.var)
        stack.extend(c for c in _children(x) if isinstance(c, Stmt))
    return out


# ---- depth ---------------------------------------------------------------------------------------
# The deepest source tree the frontends take, and the deepest HIR the later stages (which recurse
# over expressions and blocks: HIR to MIR, the printers) process within Python's recursion limit,
# with a margin (measured: MIR lowering of a chain of nested min() calls fails near 300 levels).
MAX_DEPTH = 150
MAX_HIR_DEPTH = 200


def too_deep_message(limit: int = MAX_DEPTH) -> str:
    """What every frontend says of a source that nests more than `limit` levels."""
    return (
        f"this nests more than {limit} levels deep (blocks and sub-expressions), beyond what the "
        "compiler processes: split it, e.g. into variables or a loop"
    )


def _show_array_arg(a: ArrayArg) -> str:
    return a.name + "".join(f"[{show_expr(i)}]" for i in a.index)


def _children(x: Stmt | Expr) -> tuple[Stmt | Expr, ...]:
    if isinstance(x, Unary | Cast):
        return (x.operand,)
    if isinstance(x, Binary | Compare | Logical):
        return (x.left, x.right)
    if isinstance(x, IfExpr):
        return (x.cond, x.then, x.other)
    if isinstance(x, Load):
        return (x.index,)
    if isinstance(x, PrivateLoad):
        return x.indices
    if isinstance(x, PrivateStore):
        return (*x.indices, x.value)
    if isinstance(x, PrivateInit):
        return x.values
    if isinstance(x, Call):
        return x.args
    if isinstance(x, Invoke):
        return tuple(y for a in x.args for y in ((a,) if isinstance(a, Expr) else a.index))
    if isinstance(x, Assign):
        return (x.value,)
    if isinstance(x, Store):
        return (x.index, x.value)
    if isinstance(x, ExprStmt):
        return (x.expr,)
    if isinstance(x, If):
        return (x.cond, *x.then, *x.other)
    if isinstance(x, While):
        return (x.cond, *x.body)
    if isinstance(x, For):
        return (x.start, x.stop, x.step, *x.body)
    if isinstance(x, Return) and x.value is not None:
        return (x.value,)
    return ()


def too_deep(fn: Function, limit: int = MAX_HIR_DEPTH) -> Span | None:
    """The place of the first HIR node (statement or expression) deeper than `limit`, if any
    (a frontend may build deeper HIR than its source: `min(a, b, c, ...)` is a chain of calls).
    Iterative: it must not itself run out of stack."""
    stack: list[tuple[Stmt | Expr, int, Span | None]] = [(s, 1, s.span) for s in reversed(fn.body)]
    while stack:
        x, d, near = stack.pop()
        near = x.span or near
        if d > limit:
            return near
        stack.extend((c, d + 1, near) for c in reversed(_children(x)))
    return None


def i32_id(fn: Function, names: frozenset[str]) -> Span | None:
    """The place of the first call of a builtin in `names` whose i32 value the kernel uses as
    i32, None when every such call is cast to u32 at once (the same bits, read unsigned).
    Iterative, as too_deep."""
    stack: list[tuple[Stmt | Expr, bool]] = [(s, False) for s in reversed(fn.body)]
    while stack:
        x, as_u32 = stack.pop()
        if isinstance(x, Call) and x.name in names and x.type.name == "i32" and not as_u32:
            return x.span
        to_u32 = isinstance(x, Cast) and x.type.name == "u32"
        stack.extend((c, to_u32) for c in reversed(_children(x)))
    return None


# ---- printer -----------------------------------------------------------------------------------
def show_expr(e: Expr) -> str:
    if isinstance(e, Const):
        return f"{e.value!r}:{e.type}"
    if isinstance(e, Var):
        return e.name
    if isinstance(e, Unary):
        return f"({e.op.value} {show_expr(e.operand)})"
    if isinstance(e, Binary | Compare | Logical):
        return f"({show_expr(e.left)} {e.op.value} {show_expr(e.right)})"
    if isinstance(e, IfExpr):
        return f"({show_expr(e.then)} if {show_expr(e.cond)} else {show_expr(e.other)})"
    if isinstance(e, Cast):
        return f"{e.type}({show_expr(e.operand)})"
    if isinstance(e, Load):
        return f"{e.array}[{show_expr(e.index)}]"
    if isinstance(e, PrivateLoad):
        return f"{e.array}[{', '.join(show_expr(i) for i in e.indices)}]"
    if isinstance(e, Call):
        args = ([e.array] if e.array else []) + [show_expr(a) for a in e.args] + [f"{k}={v}" for k, v in e.attrs]
        return f"{e.name}({', '.join(args)}):{e.type}"
    if isinstance(e, Invoke):
        shown = [_show_array_arg(a) if isinstance(a, ArrayArg) else show_expr(a) for a in e.args]
        return f"call {e.callee}({', '.join(shown)}):{e.type}"
    raise TypeError(e)


def _show_body(body: tuple[Stmt, ...], ind: str, out: list[str]) -> None:
    for s in body:
        if isinstance(s, Assign):
            out.append(f"{ind}{s.name} = {show_expr(s.value)}")
        elif isinstance(s, Store):
            out.append(f"{ind}{s.array}[{show_expr(s.index)}] = {show_expr(s.value)}")
        elif isinstance(s, PrivateStore):
            out.append(f"{ind}{s.array}[{', '.join(show_expr(i) for i in s.indices)}] = {show_expr(s.value)}")
        elif isinstance(s, PrivateInit):
            out.append(f"{ind}init {s.array} = [{', '.join(show_expr(v) for v in s.values)}]")
        elif isinstance(s, ExprStmt):
            out.append(f"{ind}{show_expr(s.expr)}")
        elif isinstance(s, If):
            out.append(f"{ind}if {show_expr(s.cond)}:")
            _show_body(s.then, ind + "    ", out)
            if s.other:
                out.append(f"{ind}else:")
                _show_body(s.other, ind + "    ", out)
        elif isinstance(s, While):
            out.append(f"{ind}while {show_expr(s.cond)}:")
            _show_body(s.body, ind + "    ", out)
        elif isinstance(s, For):
            how = {Unroll.NO: "range", Unroll.FULL: "static_range", Unroll.HINT: "range_unroll_hint"}[s.unroll]
            out.append(f"{ind}for {s.var} in {how}({show_expr(s.start)}, {show_expr(s.stop)}, {show_expr(s.step)}):")
            _show_body(s.body, ind + "    ", out)
        elif isinstance(s, Return) and s.value is not None:
            out.append(f"{ind}return {show_expr(s.value)}")
        else:
            out.append(f"{ind}{type(s).__name__.lower()}")


def dump(fn: Function) -> str:
    out: list[str] = []
    for h in fn.helpers:
        params = ", ".join(f"{p.name}: {p.type}" for p in h.params)
        out.append(f"helper {h.key}({params}) -> {h.result or 'none'}")
        for name, t in h.variables:
            out.append(f"  var {name}: {t}")
        _show_body(h.body, "  ", out)
    params = ", ".join(f"{p.name}: {p.type}" for p in fn.params)
    out.append(f"kernel {fn.name}({params})")
    for la in fn.locals:
        out.append(f"  local {la.name}: {la.type.elem}[{la.count}]")
    for pa in fn.privates:
        out.append(f"  private {pa.name}: {pa.elem}[{']['.join(map(str, pa.shape))}]")
    for name, t in fn.variables:
        out.append(f"  var {name}: {t}")
    _show_body(fn.body, "  ", out)
    return "\n".join(out) + "\n"
