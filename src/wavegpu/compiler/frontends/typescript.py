"""The TypeScript frontend: tree-sitter-typescript trees to typed HIR, with JavaScript's numbers.

A kernel is a `function` declaration preceded by a comment carrying the tag `@kernel` (a JSDoc
`/** @kernel */`, optionally `@workgroup 16 16`); a file without any tagged function takes every
top-level function as a kernel (the Rust toolchain's `vector_add.ts`, COMPAT.md), recording its
256-thread workgroup. docs/compiler.md ("The kernel language in TypeScript") is the reference.

JavaScript has one number type, an IEEE f64. The frontend keeps each value in the narrowest HIR
type that holds it *exactly* (a Float32Array element is an f32, `x | 0` an i32, `x >>> 0` a u32,
`a + b` of two i32 values an integer of known range) and computes in f64 otherwise, so every
result is the one JavaScript gives. Where an f64 result is rounded to f32 (`Math.fround`, a
Float32Array store, an `f32` variable) right after one `+ - * /` or `Math.sqrt` of f32 operands,
the operation is done in f32: rounding the exact result twice (to f64, then f32) gives the same
value as rounding it once, because 53 >= 2 * 24 + 2 (the same holds for f16 and 11 bits).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ...errors import CompileError, Diagnostic
from .. import bind, hir
from .. import builtins as B
from ..builtins import ROWS, VOID, Arg, Builtin, Kind, Rule
from ..inline import HIDDEN_LENGTH, HelperFailed, Helpers
from ..types import BOOL, F16, F32, F64, I8, I16, I32, U8, U16, U32, ArrayType, ScalarType
from .treesitter import Node, Source, duplicates, file_start, param_errors, parse

BinOp = hir.BinaryOp
Cmp = hir.CompareOp

TYPED_ARRAYS = {
    "Float32Array": F32,
    "Float64Array": F64,
    "Float16Array": F16,
    "Int32Array": I32,
    "Uint32Array": U32,
    "Int16Array": I16,
    "Uint16Array": U16,
    "Int8Array": I8,
    "Uint8Array": U8,
}
ALIASES = {"f32": F32, "f64": F64, "f16": F16, "i32": I32, "u32": U32, "number": F64}
ELEMENT_ALIASES = {"f32": F32, "f64": F64, "f16": F16, "i32": I32, "u32": U32}
NAMESPACES = ("wave",)

# ---- the spelling tables: how TypeScript kernels call each builtin row (compiler/bind.py) --------
# wave.NAME: every row by its name (x ** k spells powi)
# every row by its name, but `x ** k` (powi) and per-thread arrays (`new Float32Array(N)`)
WAVE_CALLS: dict[str, str] = {n: n for n, b in ROWS.items() if b.rule not in (Rule.POWI, Rule.PRIVATE)}
# the rows also callable by their bare names (wave.d.ts declares these globals; math and casts are
# Math.* or wave.* only, so that a bare min or f32 never means something unexpected)
BARE = frozenset(
    n for n in WAVE_CALLS if ROWS[n].kind in (Kind.ID, Kind.SYNC, Kind.LOCAL, Kind.ATOMIC, Kind.WAVE, Kind.VOTE)
) | {"rsqrt", "exp2", "fma"}
# JavaScript's own functions that are rows, with JavaScript's meaning (KernelBuilder.math)
MATH_CALLS: dict[str, str] = {
    "Math.sqrt": "sqrt",
    "Math.floor": "floor",
    "Math.ceil": "ceil",
    "Math.trunc": "trunc",
    "Math.round": "round_half_up",  # ties toward +Infinity
    "Math.abs": "abs",
    "Math.min": "min",
    "Math.max": "max",
    "Math.sign": "sign",
    "Math.clz32": "clz",
    "Math.exp": "exp",
    "Math.log": "log",
    "Math.log2": "log2",
    "Math.sin": "sin",
    "Math.cos": "cos",
    "Math.pow": "pow",
    "Number.isNaN": "isnan",
}
GLOBAL_CALLS: dict[str, str] = {"isNaN": "isnan"}  # the global isNaN (ToNumber of a number: itself)
# JavaScript's functions that are no row: Math.fround and Math.f16round (the f32 and f16 casts'
# spellings), Math.imul (an i32 product), Math.hypot (a composite in f64, KernelBuilder.hypot)
JS_MATH = {"Math.fround": "fround", "Math.f16round": "f16round", "Math.imul": "imul", "Math.hypot": "hypot"}
MATH_NAMES = sorted(s.split(".")[1] for s in (*MATH_CALLS, *JS_MATH) if s.startswith("Math."))  # for messages
POWER_OP = "**"
JS_CONSTANTS = frozenset({"Math.PI", "Math.E", "Math.LN2", "Math.SQRT2", "Number.MAX_VALUE", "Number.EPSILON"})
ATOMICS_JS = {  # JavaScript's own Atomics API on Int32Array / Uint32Array
    "add": "atomic_add",
    "sub": "atomic_sub",
    "and": "atomic_and",
    "or": "atomic_or",
    "xor": "atomic_xor",
    "exchange": "atomic_exchange",
    "compareExchange": "atomic_cas",
}
# how the rows behave under their JavaScript spellings
ONLY_F32 = frozenset({"exp", "log", "log2", "sin", "cos", "exp2", "pow"})  # the device's f32 functions
EXACT_ROUNDING = frozenset({"sqrt"})  # correctly rounded: f32(sqrt_f64(x)) = sqrt_f32(x) for f32 x
INTEGRAL = frozenset({"floor", "ceil", "trunc", "round_half_up"})  # an integer is its own result
SCALED_OK = frozenset({"exp", "exp2"})  # their f32 argument may be an f32 value times a power of two
MAXIMA = frozenset({"max"})
SIZES = frozenset({"workgroup_size", "grid_size", "global_size", "wave_width"})  # at least 1
# the rows the composites here use (Math.hypot, **, a wide %)
B_ABS, B_MAX, B_SQRT, B_POWI, B_POW, B_TRUNC, B_FMA = "abs", "max", "sqrt", "powi", "pow", "trunc", "fma"
CMPOPS = {
    "===": Cmp.EQ,
    "==": Cmp.EQ,
    "!==": Cmp.NE,
    "!=": Cmp.NE,
    "<": Cmp.LT,
    "<=": Cmp.LE,
    ">": Cmp.GT,
    ">=": Cmp.GE,
}
ARITH = {"+": BinOp.ADD, "-": BinOp.SUB, "*": BinOp.MUL}
BITS = {"&": BinOp.AND, "|": BinOp.OR, "^": BinOp.XOR}
SHIFTS = {"<<", ">>", ">>>"}
EXACT = 2**53  # integers up to this magnitude are exact f64 values
I32_RANGE = (-(2**31), 2**31 - 1)
U32_RANGE = (0, 2**32 - 1)
HIDDEN = "__len"
PRIVATE = "private"  # the ArrayType space of a per-thread array (new Float32Array(N))


_T = TypeVar("_T")


class _Bail(Exception):
    """Abandon the current statement after recording a diagnostic."""


class _Retype(Exception):
    """A variable typed by its initializer (`let s = 0`) is assigned a value its type does not
    hold: the kernel is lowered again with that variable a number (f64), as JavaScript has it;
    `integral`: every value assigned so far is an integer (a counter)."""

    def __init__(self, key: tuple[int, int], integral: bool):
        self.key, self.integral = key, integral


class _Widen(Exception):
    """A helper returns values of more than one type: lower it again returning numbers (f64)."""


@dataclass(frozen=True)
class V:
    """A JavaScript number (or boolean) being lowered.

    `e` holds the value exactly in its HIR type. An integer-valued number also has its exact range
    [lo, hi], `bits` (an i32 expression equal to the value modulo 2**32 whenever |value| < 2**53)
    and `f64()` (the value as JavaScript computes it, in f64, including -0). `mz`: it may be -0."""

    e: hir.Expr
    lo: int = 0  # integer-valued numbers (bits is set): the range
    hi: int = 0
    bits: hir.Expr | None = None
    mz: bool = False
    f64_of: Callable[[], hir.Expr] | None = None
    op: tuple[object, ...] | None = None  # (BinaryOp | "sqrt" | math name, operands...): rounding fusion
    only_f32: str | None = None  # Math.exp(x) and friends: only where the result is rounded to f32
    nan_bits: hir.Expr | None = None  # an integer or NaN (x % y, y maybe 0): ToInt32 of it
    node: Node = None

    @property
    def is_int(self) -> bool:
        return self.bits is not None

    @property
    def ibits(self) -> hir.Expr:
        """The i32 bits of an integer-valued number."""
        assert self.bits is not None
        return self.bits

    @property
    def exact(self) -> bool:
        return self.bits is not None and self.lo >= -EXACT and self.hi <= EXACT

    @property
    def type(self) -> ScalarType:
        return self.e.type


def _js_convert(c: float | int, t: ScalarType) -> float | int:
    """The number c stored into a typed array of elements t, as JavaScript stores it: f64 as it
    is, Math.fround / Math.f16round (one rounding of the f64 value, to nearest even; beyond the
    largest finite value: Infinity), ToInt32 / ToUint32 for the integer arrays (truncated toward
    zero, then modulo 2**32 into the type's range: 2**32 + 1 is 1, -1 in a Uint32Array is
    4294967295, 1.9 is 1, -1.9 is -1; NaN and the infinities are 0), the low bits for the narrow ones."""
    import numpy as np

    x = float(c)
    if t.is_float:
        with np.errstate(over="ignore"):
            return x if t is F64 else float(np.float32(x)) if t is F32 else float(np.float16(x))
    if not math.isfinite(x):
        return 0
    k = (c if isinstance(c, int) else math.trunc(x)) % (1 << t.bits)
    return k - (1 << t.bits) if t.signed and k >> (t.bits - 1) else k


def _fits(lo: int, hi: int, r: tuple[int, int]) -> bool:
    return r[0] <= lo and hi <= r[1]


def _wrap32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >> 31 else v


def _is_f32(v: float) -> bool:
    import numpy as np

    with np.errstate(over="ignore"):
        return math.isnan(v) or float(np.float32(v)) == v


def _is_f16(v: float) -> bool:
    import numpy as np

    with np.errstate(over="ignore"):
        return math.isnan(v) or float(np.float16(v)) == v


@dataclass
class Binding:
    hname: str
    type: ScalarType
    const: bool
    declared: bool  # declared with an alias type: assignments convert (ToInt32, Math.fround, ...)
    lo: int | None = None
    hi: int | None = None
    mz: bool = False
    f64name: str | None = None  # a const integer beyond 32 bits: its f64 value
    node: Node | None = None  # the declared name (its declarator holds the initializer)
    arrow: Node | None = None  # a `const f = (v: number) => ...`: inlined where it is called
    arrow_scopes: list[dict[str, Binding]] | None = None  # what the arrow function sees (its captures)
    # the arrays it sees, where it is declared (arrays, local_counts, shapes, array_hir of KernelBuilder)
    arrow_arrays: tuple[dict[str, Any], ...] | None = None
    integral: bool = False  # a number (f64) retyped from an integer initializer: integer values only
    # `const row = t[r]`: a row of the 2-D per-thread array t (its name), r as it was there
    view: tuple[str, tuple[hir.Expr, ...]] | None = None


# In a block's scope, a per-thread array declared there that hides a variable of an enclosing block
_ARRAY_HERE = Binding("", VOID, True, False)


@dataclass
class Ctx:
    src: Source
    consts: dict[str, float | int]
    compat: bool
    functions: dict[str, Node] = field(default_factory=dict)  # the file's helper functions
    kernels: set[str] = field(default_factory=set)
    # declarations typed by their uses (_Retype): the declared name's bytes -> integer values only
    widened: dict[tuple[int, int], bool] = field(default_factory=dict)


class KernelBuilder:
    def __init__(
        self,
        ctx: Ctx,
        fn: Node,
        options: dict[str, object],
        name: str | None = None,
        helpers: Helpers | None = None,
    ):
        self.ctx = ctx
        self.src = ctx.src
        self.fn = fn
        self.options = options
        self.diags: list[Diagnostic] = []
        self.scopes: list[dict[str, Binding]] = [{}]
        self.arrays: dict[str, ArrayType] = {}
        self.local_counts: dict[str, int] = {}
        self.vars: dict[str, ScalarType] = {}
        self.params: set[str] = set()
        self.locals: list[hir.LocalArray] = []
        self.privates: dict[str, hir.PrivateArray] = {}  # the per-thread arrays declared here: new Float32Array(N)
        self.shapes: dict[str, tuple[int, ...]] = {}  # every per-thread array seen here (also parameters, captures)
        # per-thread arrays are block-scoped, as JavaScript's const and let: the HIR name of one
        # whose source name another array had (sibling blocks, an inner block, an arrow function's
        # own array named like a capture), and what each declaration hid, restored at its block's end
        self.array_hir: dict[str, str] = {}
        self.block_arrays: list[tuple[int, str, tuple[object, ...]]] = []
        self.hidden: set[str] = set()
        self.loops: list[str] = []  # "for", "while", "do", "for-general"
        self.tmp = 0
        self.pending: list[hir.Stmt] | None = None
        self.cond_depth = 0
        self.poisoned: set[str] = set()  # names whose declaration failed
        self.var_names: set[str] = set()  # names declared with var (a read outside their block is refused)
        self.atomic_ok: set[tuple[int, int]] = set()  # calls whose value is a whole initializer or statement
        self.name = name or self.src.node_text(fn.child_by_field_name("name"))
        self.helpers = helpers or Helpers(self.name)  # the helper instances of the kernel
        self.ret: ScalarType | str | None = None  # a helper's result: a type, "void" or "infer" (None: a kernel)
        self.ret_b: Binding | None = None  # "infer": the result's type, from the first return
        self.failed = False  # a helper it calls was refused (reported at its first call)

    # -- diagnostics
    def error(self, n: Node, msg: str) -> _Bail:
        self.diags.append(Diagnostic(msg, self.src.span(n)))
        return _Bail()

    def text(self, n: Node) -> str:
        return self.src.node_text(n)

    # -- names
    def aname(self, name: str) -> str:
        """The HIR name of the array visible as `name` (a per-thread array may be renamed)."""
        return self.array_hir.get(name, name)

    def end_scope(self) -> None:
        """Leave a block: its names, and the per-thread arrays declared in it, go out of scope."""
        self.scopes.pop()
        depth = len(self.scopes)
        while self.block_arrays and self.block_arrays[-1][0] > depth:
            _, name, saved = self.block_arrays.pop()
            for table, old in zip((self.arrays, self.local_counts, self.shapes, self.array_hir), saved):
                if old is None:
                    table.pop(name, None)  # type: ignore[attr-defined]
                else:
                    table[name] = old  # type: ignore[index]

    def lookup(self, name: str) -> Binding | None:
        for s in reversed(self.scopes):
            if name in s:
                b = s[name]
                return None if b is _ARRAY_HERE else b
        return None

    def inner_array(self, name: str) -> bool:
        """Whether the array visible as `name` is a per-thread array of an enclosing block, which a
        declaration in this block may hide (JavaScript's block scope)."""
        depths = [d for d, n, _ in self.block_arrays if n == name]
        return bool(depths) and depths[-1] < len(self.scopes)

    def fresh(self, hint: str, t: ScalarType) -> str:
        self.tmp += 1
        name = f"${hint}{self.tmp}"  # user names never start with $ in HIR (declare renames them)
        while name in self.vars:
            self.tmp += 1
            name = f"${hint}{self.tmp}"
        self.vars[name] = t
        return name

    def declare(self, name: str, t: ScalarType, n: Node, const: bool, declared: bool) -> Binding:
        if name in self.scopes[-1] or (name in self.arrays and not self.inner_array(name)):
            raise self.error(n, f"{name!r} is already declared in this block")
        if name in NAMESPACES or name in ("Math", "Atomics"):
            raise self.error(n, f"{name!r} is a builtin namespace")
        # HIR names: a TypeScript name may contain $, which HIR keeps for temporaries, and may end
        # in __len, which hidden arguments use
        base = name.replace("$", "_S_")
        hname = base
        k = 1
        while hname in self.vars or hname in self.arrays or hname.endswith(HIDDEN) or hname in self.params:
            k += 1
            hname = f"{base}${k}"
        self.vars[hname] = t
        b = Binding(hname, t, const, declared, node=n)
        self.scopes[-1][name] = b
        return b

    # -- entry
    def run(self) -> hir.Function:
        fn = self.fn
        params: list[hir.Param] = []
        for p in fn.child_by_field_name("parameters").named_children:
            if p.type == "comment":
                continue
            if p.type != "required_parameter" or p.child_by_field_name("value") is not None:
                self.error(
                    p, "kernel parameters are plain `name: Type` parameters (no defaults, no rest, not optional)"
                )
                continue
            pat = p.child_by_field_name("pattern")
            if pat is None or pat.type != "identifier":
                self.error(p, "a kernel parameter is a plain name")
                continue
            name = self.text(pat)
            if name.endswith(HIDDEN):
                self.error(pat, f"parameter names ending in {HIDDEN} are reserved (hidden arguments)")
                continue
            ann = p.child_by_field_name("type")
            if ann is None:
                self.error(
                    p,
                    f"parameter {name!r} needs a type: Float32Array (or f32[]), Int32Array, ..., or f32, i32, u32, number",
                )
                continue
            try:
                t = self.param_type(ann.named_children[0])
            except _Bail:
                continue
            if t is F64 and self.text(ann.named_children[0]) == "number":
                # JavaScript's number where a register holds it exactly: the integers of i32 (a call
                # with any other value is refused before the kernel runs, never rounded)
                t = I32
            if isinstance(t, ArrayType):
                self.arrays[name] = t
            elif t is F64:
                self.poisoned.add(name)  # one mistake, one message
                self.error(
                    ann,
                    f"scalar parameters are 32-bit values (f32, i32, u32, f16); {self.text(ann.named_children[0])} "
                    f"is an f64 (64 bits): pass it in a Float64Array ({name}: Float64Array, read {name}[0]), or declare "
                    f"it number for an integer, f32 for an f32",
                )
                continue
            else:
                self.vars[name] = t
                lo, hi = (I32_RANGE if t is I32 else U32_RANGE) if t.is_int else (None, None)
                self.scopes[0][name] = Binding(name, t, True, True, lo, hi)
            self.params.add(name)
            params.append(hir.Param(name, t, self.src.span(p)))
        ret = fn.child_by_field_name("return_type")
        if ret is not None and self.text(ret.named_children[0]) != "void":
            self.error(ret, "kernels return nothing (`: void`): write results to an array")
        if fn.child_by_field_name("type_parameters") is not None:
            self.error(fn.child_by_field_name("type_parameters"), "kernels are not generic")
        if any(c.type == "async" for c in fn.children):
            self.error(fn, "kernels are not async functions")
        self.scopes.append({})
        body = self.block(fn.child_by_field_name("body"))
        if self.diags:
            raise CompileError(self.diags)
        for p in list(params):
            if p.name + HIDDEN in self.hidden:
                params.append(hir.Param(p.name + HIDDEN, I32, p.span))
        variables = tuple((k, v) for k, v in self.vars.items() if k not in self.params)
        return hir.Function(
            self.name,
            tuple(params),
            body,
            variables,
            tuple(self.locals),
            self.src.file,
            None,
            dict(self.options),
            self.helpers.built(),
            privates=tuple(self.privates.values()),
        )

    def param_type(self, t: Node) -> ScalarType | ArrayType:
        txt = self.text(t)
        if t.type == "array_type":
            elem = self.text(t.named_children[0])
            if elem in ELEMENT_ALIASES:
                return ArrayType(ELEMENT_ALIASES[elem], "global")
            raise self.error(
                t,
                f"array parameters are typed arrays (Float32Array, Int32Array, ...) or f32[], i32[], u32[], f64[], f16[], not {txt}",
            )
        if txt in TYPED_ARRAYS:
            return ArrayType(TYPED_ARRAYS[txt], "global")
        if txt in ALIASES:
            return ALIASES[txt]
        if txt == "any":
            raise self.error(t, "`any` has no machine type: give the parameter a typed array type or a number type")
        if txt == "boolean":
            raise self.error(t, "scalar parameters are numbers: f32, i32, u32, f16, f64 or number")
        if txt == "string":
            raise self.error(t, "strings are not supported in kernels")
        if txt == "Uint8ClampedArray":
            raise self.error(t, "Uint8ClampedArray clamps its stores: use Uint8Array (stores keep the low 8 bits)")
        raise self.error(
            t, f"unknown parameter type {txt!r}: use a typed array (Float32Array, ...) or f32, i32, u32, number"
        )

    # -- statements
    def block(self, n: Node, scoped: bool = True) -> tuple[hir.Stmt, ...]:
        if scoped:
            self.scopes.append({})
        out: list[hir.Stmt] = []
        stmts = n.named_children if n.type == "statement_block" else [n]
        for s in stmts:
            try:
                out.extend(self.stmt(s))
            except _Bail:
                continue
        if scoped:
            self.end_scope()
        return tuple(out)

    def collect(self, fn: Callable[[], list[hir.Stmt]]) -> list[hir.Stmt]:
        """Statements from fn, after the temporaries their expressions share (`pending`)."""
        saved = self.pending
        self.pending = []
        try:
            out = fn()
            return [*self.pending, *out]
        finally:
            self.pending = saved

    def share(self, e: hir.Expr) -> hir.Expr:
        """An expression used more than once: a temporary assigned before the statement where that
        evaluates it exactly as often (not inside a branch, a short-circuit or a loop condition),
        else the expression itself (it is pure: atomics are never operands)."""
        if isinstance(e, hir.Var | hir.Const) or self.pending is None or self.cond_depth:
            return e
        name = self.fresh("ts", e.type)
        self.pending.append(hir.Assign(e.span, name, e))
        return hir.Var(e.type, e.span, name)

    def conditional(self, fn: Callable[[], _T]) -> _T:
        self.cond_depth += 1
        try:
            return fn()
        finally:
            self.cond_depth -= 1

    def stmt(self, s: Node) -> list[hir.Stmt]:
        return self.collect(lambda: self._stmt(s))

    def _stmt(self, s: Node) -> list[hir.Stmt]:
        sp = self.src.span(s)
        t = s.type
        if t in ("comment", "empty_statement"):
            return []
        if t == "statement_block":
            return list(self.block(s))
        if t in ("lexical_declaration", "variable_declaration"):
            const = t == "lexical_declaration" and s.child_by_field_name("kind").type == "const"
            out: list[hir.Stmt] = []
            for d in s.named_children:
                if d.type == "variable_declarator":
                    try:
                        if t == "variable_declaration":
                            self.var_scope(d)
                        out.extend(self.declaration(d, const))
                    except _Bail:  # its uses say nothing more: one mistake, one message
                        self.poisoned.add(self.text(d.child_by_field_name("name")))
                        raise
            return out
        if t == "expression_statement":
            return self.expr_stmt(s.named_children[0])
        if t == "if_statement":
            cond = self.condition(s.child_by_field_name("condition"))
            then = self.block(s.child_by_field_name("consequence"))
            alt = s.child_by_field_name("alternative")
            other: tuple[hir.Stmt, ...] = ()
            if alt is not None:
                other = self.block(alt.named_children[0])
            return [hir.If(sp, cond, then, other)]
        if t == "while_statement":
            cond = self.conditional(lambda: self.condition(s.child_by_field_name("condition")))  # type: ignore[assignment]
            self.loops.append("while")
            body = self.block(s.child_by_field_name("body"))
            self.loops.pop()
            return [hir.While(sp, cond, body)]
        if t == "do_statement":
            self.loops.append("do")
            body = self.block(s.child_by_field_name("body"))
            self.loops.pop()
            stop = self.collect(
                lambda: [
                    hir.If(
                        sp,
                        hir.Unary(BOOL, sp, hir.UnaryOp.NOT, self.condition(s.child_by_field_name("condition"))),
                        (hir.Break(sp),),
                        (),
                    )
                ]
            )
            return [hir.While(sp, hir.Const(BOOL, sp, True), (*body, *stop))]
        if t == "for_statement":
            return self.for_loop(s)
        if t in ("break_statement", "continue_statement"):
            word = t.split("_")[0]
            if s.named_children:
                raise self.error(s, f"labelled {word} is not supported in kernels")
            if not self.loops or (word == "continue" and all(k == "switch" for k in self.loops)):
                raise self.error(s, f"'{word}' outside a loop")
            if word == "continue" and self.loops[-1] == "switch":
                raise self.error(s, "'continue' inside a switch is not supported in kernels: use if / else if")
            if word == "continue" and self.loops[-1] in ("do", "for-general"):
                kind = (
                    "do ... while"
                    if self.loops[-1] == "do"
                    else "this for loop (not of the form for (let i = a; i < b; i++))"
                )
                raise self.error(s, f"'continue' in {kind} is not supported: use a while loop or an if")
            return [hir.Break(sp) if word == "break" else hir.Continue(sp)]
        if t == "return_statement" and self.ret is not None:
            return self.helper_return(s)
        if t == "return_statement":
            if s.named_children:
                raise self.error(s.named_children[0], "kernels return no value (write results to an array)")
            return [hir.Return(sp)]
        if t in ("function_declaration", "generator_function_declaration"):
            raise self.error(s, "nested functions are not supported in kernels (no closures, no recursion)")
        if t in ("class_declaration", "abstract_class_declaration"):
            raise self.error(s, "classes are not supported in kernels (no objects, no method dispatch)")
        if t in ("for_in_statement",):
            raise self.error(s, "for ... of / for ... in iterate objects: write for (let i = 0; i < n; i++)")
        if t == "switch_statement":
            return self.switch(s)
        if t in ("try_statement", "throw_statement"):
            raise self.error(s, "exceptions are not supported in kernels")
        raise self.error(s, f"{t.replace('_', ' ')} is not supported in kernels")

    def switch(self, s: Node) -> list[hir.Stmt]:
        """switch (x) with constant case labels: a loop run once (break leaves it), a flag that turns
        on at the clause where execution starts (the first case === x, else default) and stays on,
        so the clauses after it run too (fall-through), as in JavaScript."""
        sp = self.src.span(s)
        vn = s.child_by_field_name("value")
        v = self.expr(vn)
        self.number_of(v, vn)
        tmp = self.fresh("sw", v.type)
        var = hir.Var(v.type, sp, tmp)
        if v.is_int and v.type in (I32, U32):
            x = self.int_v(var, v.lo, v.hi, vn)
        else:
            x = V(var, node=vn)
        flag = self.fresh("swon", BOOL)
        on = hir.Var(BOOL, sp, flag)
        clauses = [
            c for c in s.child_by_field_name("body").named_children if c.type in ("switch_case", "switch_default")
        ]
        tests: list[hir.Expr] = []
        for c in clauses:
            if c.type == "switch_case":
                label = c.child_by_field_name("value")
                if self.fold(label) is None:
                    raise self.error(label, "case labels are constant expressions in kernels")
                tests.append(self.compare(Cmp.EQ, x, self.expr(label), label).e)
        some: hir.Expr = hir.Const(BOOL, sp, False)
        for t in tests:
            some = hir.Logical(BOOL, sp, hir.LogicalOp.OR, some, t)
        body: list[hir.Stmt] = []
        self.loops.append("switch")
        self.scopes.append({})  # the clauses share one block scope
        k = 0
        try:
            for c in clauses:
                if c.type == "switch_case":
                    start: hir.Expr = tests[k]
                    k += 1
                else:
                    start = hir.Unary(BOOL, sp, hir.UnaryOp.NOT, some)
                off = hir.Unary(BOOL, sp, hir.UnaryOp.NOT, on)
                turn_on = hir.Assign(sp, flag, hir.Const(BOOL, sp, True))
                body.append(hir.If(sp, hir.Logical(BOOL, sp, hir.LogicalOp.AND, off, start), (turn_on,), ()))
                inner: list[hir.Stmt] = []
                for st in c.children_by_field_name("body"):
                    try:
                        inner.extend(self.stmt(st))
                    except _Bail:
                        continue
                if inner:
                    body.append(hir.If(sp, on, tuple(inner), ()))
        finally:
            self.end_scope()
            self.loops.pop()
        body.append(hir.Break(sp))
        return [
            hir.Assign(sp, tmp, v.e),
            hir.Assign(sp, flag, hir.Const(BOOL, sp, False)),
            hir.While(sp, hir.Const(BOOL, sp, True), tuple(body)),
        ]

    def declaration(self, d: Node, const: bool) -> list[hir.Stmt]:
        name_node = d.child_by_field_name("name")
        if name_node.type != "identifier":
            raise self.error(name_node, "destructuring is not supported in kernels: declare one name at a time")
        name = self.text(name_node)
        value = d.child_by_field_name("value")
        ann = d.child_by_field_name("type")
        if value is None:
            raise self.error(d, f"give {name!r} a value where it is declared")
        if value.type == "arrow_function":
            if not const:
                raise self.error(d, f"declare the arrow function with const, `const {name} = ...` (it is inlined)")
            if ann is not None:
                raise self.error(ann, "leave the type of an arrow function to its parameters and body")
            if name in self.scopes[-1] or name in self.arrays:
                raise self.error(name_node, f"{name!r} is already declared in this block")
            b = Binding("", VOID, True, False, node=name_node, arrow=value)
            b.arrow_scopes = [dict(sc) for sc in self.scopes]
            b.arrow_arrays = (dict(self.arrays), dict(self.local_counts), dict(self.shapes), dict(self.array_hir))
            self.scopes[-1][name] = b
            return []
        callee = self.row_of(value.child_by_field_name("function")) if value.type == "call_expression" else None
        if callee is not None and isinstance(callee[0], Builtin) and callee[0].rule is Rule.LOCAL:
            return self.local_array(name, name_node, value, ann, const)
        if value.type == "new_expression" or _makes_private(value, self.src):
            return self.private_array(name, name_node, value, ann, const)
        if value.type == "subscript_expression" and self.row_of_private(value) is not None:
            return self.row_view(name, name_node, value, ann, const)
        self.allow_atomic(value)
        declared: ScalarType | None = None
        if ann is not None:
            tn = ann.named_children[0]
            txt = self.text(tn)
            if txt not in ALIASES:
                if txt == "any":
                    raise self.error(tn, "`any` has no machine type: use f32, i32, u32, f16, f64 or number")
                if txt == "boolean":
                    declared = BOOL
                else:
                    raise self.error(tn, "local variables are numbers (f32, i32, u32, f16, f64, number) or boolean")
            else:
                declared = ALIASES[txt]
        v = self.expr(value)
        sp = self.src.span(d)
        if declared is not None:
            e = self.convert_to(v, declared, value)
            b = self.declare(name, declared, name_node, const, True)
            if declared.is_int:
                b.lo, b.hi = I32_RANGE if declared is I32 else U32_RANGE
            return [hir.Assign(sp, b.hname, e)]
        self.materialize(v, value)
        if v.type is VOID:
            raise self.error(value, B.NO_VALUE)
        key = (name_node.start_byte, name_node.end_byte)
        if key in self.ctx.widened and v.type is not BOOL:  # typed by its uses: a number (f64)
            b = self.declare(name, F64, name_node, const, False)
            b.integral = self.ctx.widened[key] and v.is_int
            return [hir.Assign(sp, b.hname, self.f64(v, value))]
        if v.is_int:
            if v.mz:
                raise self.error(
                    value,
                    f"{self.text(value)!r} may be -0 (JavaScript's negative zero), which no integer holds: "
                    f"declare {name} a number, `{name}: number` (an f64, which keeps -0)",
                )
            if _fits(v.lo, v.hi, I32_RANGE) or _fits(v.lo, v.hi, U32_RANGE):
                t = v.type
                lo, hi = (v.lo, v.hi) if const else (I32_RANGE if t is I32 else U32_RANGE)
                b = self.declare(name, t, name_node, const, False)
                b.lo, b.hi = lo, hi
                return [hir.Assign(sp, b.hname, v.e)]
            if const:  # an integer beyond 32 bits: its bits and its f64 value
                b = self.declare(name, I32, name_node, const, False)
                b.lo, b.hi = v.lo, v.hi
                b.f64name = self.fresh(name + "_f64", F64)
                return [hir.Assign(sp, b.hname, v.ibits), hir.Assign(sp, b.f64name, self.f64(v, value))]
            e = self.f64(v, value)
            b = self.declare(name, F64, name_node, const, False)
            return [hir.Assign(sp, b.hname, e)]
        b = self.declare(name, v.type, name_node, const, False)
        return [hir.Assign(sp, b.hname, v.e)]

    def var_scope(self, d: Node) -> None:
        """`var x = ...` means `let x = ...` where no other visible name is x: the kernel reads x only
        after the declaration and inside its block (a read elsewhere is refused, 'x' is not
        declared), where the two agree. A `var` that redeclares a visible name (a parameter, an
        outer variable) would assign that one in JavaScript: refused."""
        name_node = d.child_by_field_name("name")
        name = self.text(name_node)
        if name_node.type == "identifier" and (self.lookup(name) is not None or name in self.arrays):
            raise self.error(
                name_node,
                f"`var {name}` redeclares the visible {name!r} (JavaScript's var is function-scoped: it "
                f"assigns that one): give the new variable its own name, or assign {name} without var",
            )
        self.var_names.add(name)

    def private_array(self, name: str, name_node: Node, value: Node, ann: Node | None, const: bool) -> list[hir.Stmt]:
        """A per-thread array (hir.PrivateArray), in registers when every index folds after unrolling:
        `new Float32Array(N)` (N zeros, N a constant), `new Float32Array([a, b, c])`,
        `Float32Array.of(a, b, c)`, `Float32Array.from([a, b, c])`, `new Float32Array(N).fill(v)`;
        2-D, an array of such rows of one type and length, `[new Float32Array(4), ...]` or
        `Array.from({ length: R }, () => new Float32Array(C))`. The values are converted as a store
        into the typed array converts them (Math.fround, ToInt32, ToUint32, Math.f16round)."""
        rows, two_d = self.private_rows(value)
        elem, ctor, count = rows[0].elem, rows[0].ctor, rows[0].count
        if not const and self.reassigned(name):
            raise self.error(
                name_node,
                f"{name!r} is assigned again below: a per-thread array is declared once, with const "
                f"(const {name} = ...), and its elements are assigned",
            )
        shape = (len(rows), count) if two_d else (count,)
        if ann is not None:
            want = f"{ctor}[]" if two_d else ctor
            got = self.text(ann.named_children[0]).replace(" ", "")
            if got not in (want, f"Array<{ctor}>") or (got != want and not two_d):
                raise self.error(ann.named_children[0], f"{name!r} is a {want} (its initializer makes one), not {got}")
        if name in self.scopes[-1] or any(d == len(self.scopes) and n == name for d, n, _ in self.block_arrays):
            raise self.error(name_node, f"{name!r} is already declared in this block")
        if name in self.arrays and not self.inner_array(name):  # a parameter or a local array
            raise self.error(
                name_node,
                f"{name!r} is already declared (an array parameter or local array): give this array its own name",
            )
        if self.lookup(name) is not None:  # a variable of an enclosing block: hidden in this one
            self.scopes[-1][name] = _ARRAY_HERE
        values: list[hir.Expr] = []
        sp = self.src.span(value)
        for k, r in enumerate(rows):
            row: list[hir.Expr] = []
            if r.fill is not None:
                fv = self.share(self.convert_to(self.expr(r.fill), elem, r.fill))
                row = [fv] * count
            elif r.values is not None:
                row = [self.convert_to(self.expr(x), elem, x) for x in r.values]
            if row:  # the rows before it hold zeros
                values += [_zero(elem, sp)] * (k * count - len(values))
                values += row
        taken = {self.aname(a) for a in self.arrays} | {p.name for p in self.privates.values()}
        hname, k = name, 1
        while hname in taken or hname in self.vars or hname in self.params:
            k += 1
            hname = f"{name}${k}"
        saved = (self.arrays.get(name), self.local_counts.get(name), self.shapes.get(name), self.array_hir.get(name))
        self.block_arrays.append((len(self.scopes), name, saved))
        self.arrays[name] = ArrayType(elem, PRIVATE, len(shape))
        self.local_counts[name] = shape[0]
        self.shapes[name] = shape
        self.array_hir[name] = hname
        self.privates[hname] = hir.PrivateArray(hname, elem, shape, sp)
        return [hir.PrivateInit(sp, hname, tuple(values))]

    def private_rows(self, value: Node) -> tuple[list[_Row], bool]:
        """The rows a per-thread array's initializer makes (one for a 1-D array), and whether it is 2-D."""
        row = self.typed_row(value)
        if row is not None:
            return [row], False
        if value.type == "array":
            items = _elements(value, self.src)
            if items is None:
                raise self.error(value, "an array literal with holes or spread elements is no per-thread array")
            rows = []
            for it in items:
                r = self.typed_row(it)
                if r is None:
                    raise self.error(
                        it,
                        "a 2-D per-thread array is an array of typed arrays of one type and constant length, "
                        "[new Float32Array(4), new Float32Array(4)]: not " + repr(self.text(it)),
                    )
                rows.append(r)
            if not rows:
                raise self.error(value, "an empty array literal allocates on the heap: kernels have no such arrays")
        else:  # Array.from({ length: R }, () => new Float32Array(C))
            rows = self.array_from(value)
        first = rows[0]
        for r in rows[1:]:
            if r.ctor != first.ctor or r.count != first.count:
                raise self.error(
                    r.node,
                    f"the rows of a 2-D per-thread array have one type and length: this is a {r.ctor} of "
                    f"{r.count}, the first row a {first.ctor} of {first.count}",
                )
        return rows, True

    def array_from(self, value: Node) -> list[_Row]:
        usage = "Array.from({ length: R }, () => new Float32Array(C)) (R and C constants)"
        args = _arguments(value)
        if len(args) != 2 or args[0].type != "object" or args[1].type != "arrow_function":
            raise self.error(value, f"a 2-D per-thread array from Array.from is {usage}")
        pairs = [p for p in args[0].named_children if p.type != "comment"]
        key = pairs[0].child_by_field_name("key") if len(pairs) == 1 and pairs[0].type == "pair" else None
        if key is None or self.text(key) != "length":
            raise self.error(args[0], f"Array.from takes {{ length: R }} here: {usage}")
        count = self.const_int(pairs[0].child_by_field_name("value"), "the number of rows", 1)
        body = args[1].child_by_field_name("body")
        r = self.typed_row(body) if body is not None else None
        if r is None:
            raise self.error(args[1], f"each row is made by a typed array's constructor: {usage}")
        for x in (*(r.values or ()), *((r.fill,) if r.fill is not None else ())):
            if self.fold(x) is None:  # evaluated once for every row in JavaScript
                raise self.error(x, "the rows Array.from makes are initialized with constants here")
        return [r] * count

    def typed_row(self, n: Node) -> _Row | None:
        """`new T(N)`, `new T([..])`, `T.of(..)`, `T.from([..])`, `new T(N).fill(v)` for a typed
        array T of per-thread elements; None where n is none of these."""
        if n.type == "parenthesized_expression":
            return self.typed_row(n.named_children[0])
        fill: Node | None = None
        if n.type == "call_expression" and n.child_by_field_name("function").type == "member_expression":
            f = n.child_by_field_name("function")
            obj, prop = f.child_by_field_name("object"), self.text(f.child_by_field_name("property"))
            if prop == "fill" and obj.type == "new_expression":
                args = _arguments(n)
                if len(args) != 1:
                    raise self.error(n, "fill(v) with one value (fill(v, start, end) is not supported in kernels)")
                fill, n = args[0], obj
            elif obj.type == "identifier" and self.text(obj) in TYPED_ARRAYS and prop in ("of", "from"):
                ctor = self.text(obj)
                args = _arguments(n)
                if prop == "from":
                    items = _elements(args[0], self.src) if len(args) == 1 and args[0].type == "array" else None
                    if items is None:
                        raise self.error(n, f"{ctor}.from takes an array literal here: {ctor}.from([1, 2, 3])")
                    args = items
                return self.make_row(n, obj, args, None)
            else:
                return None
        if n.type != "new_expression":
            return None
        ctor_node = n.child_by_field_name("constructor")
        if ctor_node is None or self.text(ctor_node) not in TYPED_ARRAYS:
            raise self.error(
                n,
                "`new` allocates on the heap: kernels use per-thread typed arrays, new Float32Array(N), "
                "wave.local_array(Float32Array, n) or parameters",
            )
        ctor = self.text(ctor_node)
        args = _arguments(n)
        if len(args) == 1 and args[0].type == "array":
            items = _elements(args[0], self.src)
            if items is None:
                raise self.error(args[0], "an initializer list with holes or spread elements is not supported")
            if fill is not None:
                raise self.error(n, f"fill the array or list its values: new {ctor}([...]) or new {ctor}(N).fill(v)")
            return self.make_row(n, ctor_node, items, None)
        if len(args) != 1:
            raise self.error(n, f"new {ctor}(N) takes a constant length N (no dynamic allocation on a GPU)")
        count = self.const_int(args[0], f"the length of a per-thread {ctor}", 1)
        return self.make_row(n, ctor_node, None, fill, count)

    def make_row(self, n: Node, ctor_node: Node, values: list[Node] | None, fill: Node | None, count: int = 0) -> _Row:
        ctor = self.text(ctor_node)
        elem = TYPED_ARRAYS[ctor]
        if elem.narrow:
            raise self.error(ctor_node, f"per-thread arrays hold 32- or 64-bit elements, not {elem}: use Int32Array")
        if values is not None:
            if not values:
                raise self.error(n, "a per-thread array holds at least one element")
            count = len(values)
        return _Row(n, ctor, elem, count, values, fill)

    def reassigned(self, name: str) -> bool:
        """Is `name` assigned anywhere in the function (a `let` per-thread array that is never
        assigned means what `const` means)?"""
        return name in _assigned_names(self.fn.child_by_field_name("body"), self.src)

    def row_of_private(self, n: Node) -> tuple[str, Node] | None:
        """`t[r]` for a 2-D per-thread array t: (t, the index node)."""
        obj = n.child_by_field_name("object")
        if n.type != "subscript_expression" or obj.type != "identifier":
            return None
        name = self.text(obj)
        if self.lookup(name) is None and name in self.shapes and len(self.shapes[name]) == 2:
            return name, n.child_by_field_name("index")
        return None

    def row_view(self, name: str, name_node: Node, value: Node, ann: Node | None, const: bool) -> list[hir.Stmt]:
        """`const row = t[r]`: the row r of the 2-D per-thread array t, by reference (as in
        JavaScript: `row[j] = v` writes t[r][j]); r is evaluated here, once."""
        found = self.row_of_private(value)
        assert found is not None
        base, idx_node = found
        if not const and self.reassigned(name):
            raise self.error(
                name_node, f"{name!r} is assigned again below: declare a row of {base} with const: const {name} = ..."
            )
        ctor = next(c for c, t in TYPED_ARRAYS.items() if t == self.arrays[base].elem)
        if ann is not None and self.text(ann.named_children[0]) != ctor:
            tn = ann.named_children[0]
            raise self.error(tn, f"{name!r} is a {ctor} (a row of {base}), not {self.text(tn)}")
        idx = self.index(idx_node)
        pre: list[hir.Stmt] = []
        if not isinstance(idx, hir.Const):
            tmp = self.fresh(f"{name}_row", idx.type)
            pre.append(hir.Assign(self.src.span(value), tmp, idx))
            idx = hir.Var(idx.type, idx.span, tmp)
        if name in self.scopes[-1] or name in self.arrays:
            raise self.error(name_node, f"{name!r} is already declared in this block")
        self.scopes[-1][name] = Binding("", VOID, True, False, node=name_node, view=(base, (idx,)))
        return pre

    def local_array(self, name: str, name_node: Node, call: Node, ann: Node | None, const: bool) -> list[hir.Stmt]:
        if not const:
            raise self.error(name_node, "declare a local array with const")
        found = self.row_of(call.child_by_field_name("function"))
        assert found is not None and isinstance(found[0], Builtin)
        row, spelled = found[0], found[1]
        args = [a for a in call.child_by_field_name("arguments").named_children if a.type != "comment"]
        r = bind.call(row, self.src.span(call), _Args(self, row, spelled), args, spelled=spelled)
        if isinstance(r, bind.Refusal):
            hint = " (a typed array: Float32Array, Int32Array, Uint32Array, ...)" if r.arg == 0 else ""
            raise self.error(bind.at(r, args) or call, r.message + hint)
        if name in self.arrays or self.lookup(name) is not None:
            raise self.error(name_node, f"{name!r} is already declared")
        assert isinstance(r, hir.Call), "a declaration binds to a call"
        attrs = dict(r.attrs)
        elem, shape = attrs["dtype"], attrs["shape"]
        assert isinstance(elem, ScalarType) and isinstance(shape, tuple) and len(shape) == 1
        count = shape[0]
        at = ArrayType(elem, "local")
        self.arrays[name] = at
        self.local_counts[name] = count
        self.locals.append(hir.LocalArray(name, at, count, self.src.span(call)))
        return []

    def const_int(self, n: Node, what: str, lo: int) -> int:
        v = self.fold(n)
        if not isinstance(v, int | float) or isinstance(v, bool) or not float(v).is_integer():
            raise self.error(n, f"{what} must be a constant integer expression (literals and top-level const numbers)")
        if v < lo:
            raise self.error(n, f"{what} must be at least {lo}, not {int(v)}")
        return int(v)

    def fold(self, n: Node) -> float | int | None:
        """The value of a constant expression of literals and top-level `const` numbers."""
        t = n.type
        if t == "number":
            try:
                return _number(self.text(n))
            except ValueError:
                raise self.error(
                    n, "BigInt literals are not supported in kernels: numbers are f64, i32 or u32"
                ) from None
        if t == "parenthesized_expression":
            return self.fold(n.named_children[0])
        if t == "identifier":
            if self.lookup(self.text(n)) is not None:
                return None
            return self.ctx.consts.get(self.text(n))
        if t == "unary_expression":
            x = self.fold(n.child_by_field_name("argument"))
            op = self.text(n.child_by_field_name("operator"))
            if x is None or op not in ("-", "+"):
                return None
            if op == "-" and x == 0:
                return -0.0 if math.copysign(1.0, x) > 0 else 0.0  # JavaScript's -0
            return -x if op == "-" else x
        if t == "binary_expression":
            a = self.fold(n.child_by_field_name("left"))
            b = self.fold(n.child_by_field_name("right"))
            op = self.text(n.child_by_field_name("operator"))
            if a is None or b is None:
                return None
            return _fold_binary(op, a, b)
        if t == "member_expression":
            obj, prop = n.child_by_field_name("object"), n.child_by_field_name("property")
            if self.text(obj) == "Math" and self.lookup("Math") is None:
                return {"PI": math.pi, "E": math.e, "LN2": math.log(2), "SQRT2": math.sqrt(2)}.get(self.text(prop))
        return None

    def expr_stmt(self, n: Node) -> list[hir.Stmt]:
        sp = self.src.span(n)
        t = n.type
        if t == "assignment_expression":
            return self.assign(n.child_by_field_name("left"), None, n.child_by_field_name("right"), n)
        if t == "augmented_assignment_expression":
            op = self.text(n.child_by_field_name("operator"))[:-1]
            return self.assign(n.child_by_field_name("left"), op, n.child_by_field_name("right"), n)
        if t == "update_expression":
            op = "+" if self.text(n.child_by_field_name("operator")) == "++" else "-"
            return self.assign(n.child_by_field_name("argument"), op, None, n)
        if t == "parenthesized_expression":
            return self.expr_stmt(n.named_children[0])
        if t == "call_expression":
            self.allow_atomic(n)
            v = self.expr(n)
            if isinstance(v.e, hir.Invoke):  # a helper, its result unused
                return [hir.ExprStmt(sp, v.e)]
            if not isinstance(v.e, hir.Call):
                raise self.error(n, "an expression statement must call wave.barrier(), wave.fence() or an atomic")
            return [hir.ExprStmt(sp, v.e)]
        if t == "sequence_expression":
            raise self.error(n, "the comma operator is not supported: write one statement per expression")
        raise self.error(n, "this expression statement has no effect: kernels write results to arrays")

    def assign(self, left: Node, op: str | None, right: Node | None, n: Node) -> list[hir.Stmt]:
        sp = self.src.span(n)
        if left.type == "identifier":
            name = self.text(left)
            b = self.lookup(name)
            if b is None and name in self.poisoned:
                raise _Bail()
            if b is None:
                if name in self.arrays:
                    raise self.error(left, f"{name!r} is an array: assign its elements, {name}[i] = ...")
                raise self.error(left, f"{name!r} is not declared: declare it with let")
            if name in self.params and b is self.scopes[0].get(name):
                raise self.error(left, f"parameter {name!r} is read-only in kernels; copy it to a variable first")
            if b.const:
                raise self.error(left, f"{name!r} is a const; declare it with let to assign it")
            v = self.value_of(op, self.var_value(b, left), right, n)
            if b.declared:
                e = self.convert_to(v, b.type, n)
            else:
                e = self.fits_var(v, b, name, n)
            return [hir.Assign(sp, b.hname, e)]
        if left.type == "subscript_expression":
            arr, idxs = self.subscript(left)
            pre: list[hir.Stmt] = []
            if op is not None:
                kept = []
                for idx in idxs:
                    if not isinstance(idx, hir.Const | hir.Var):
                        tmp = self.fresh("idx", idx.type)
                        pre.append(hir.Assign(sp, tmp, idx))
                        idx = hir.Var(idx.type, sp, tmp)
                    kept.append(idx)
                idxs = tuple(kept)
            cur = self.load(arr, idxs, left) if op is not None else None
            v = self.value_of(op, cur, right, n)
            value = self.convert_to(v, self.arrays[arr].elem, n)
            if arr in self.shapes:
                return [*pre, hir.PrivateStore(sp, self.aname(arr), idxs, value)]
            return [*pre, hir.Store(sp, arr, idxs[0], value)]
        if left.type == "member_expression":
            raise self.error(left, "objects have no properties to assign in kernels")
        raise self.error(left, "only variables and array elements can be assigned")

    def value_of(self, op: str | None, cur: V | None, right: Node | None, n: Node) -> V:
        if op is None:
            assert right is not None
            self.allow_atomic(right)
            return self.expr(right)
        assert cur is not None
        rv = self.expr(right) if right is not None else self.int_const(1, n)
        return self.binary(op, cur, rv, n)

    def fits_var(self, v: V, b: Binding, name: str, n: Node) -> hir.Expr:
        """An assignment to a variable typed by its initializer: the value must be one of its type."""
        self.materialize(v, n)
        t = b.type
        if v.type is VOID:
            raise self.error(n, B.NO_VALUE)
        key = (b.node.start_byte, b.node.end_byte) if b.node is not None else None
        if b.integral and not v.is_int and key is not None:  # a counter given a fraction: any number
            raise _Retype(key, False)
        if t is F64:
            return self.f64(v, n)
        if t.is_int and v.is_int and not v.mz and _fits(v.lo, v.hi, I32_RANGE if t is I32 else U32_RANGE):
            return v.ibits if t is I32 else self.as_u32(v.ibits)
        if t is F32 and self.exact_in(v, F32):
            return self.narrow_exact(v, F32)
        if t is F16 and self.exact_in(v, F16):
            return self.narrow_exact(v, F16)
        if t is BOOL and v.type is BOOL:
            return v.e
        if t is not BOOL and v.type is BOOL:
            raise self.error(
                n, f"{name!r} holds numbers, and this is a boolean: write the number it stands for, c ? 1 : 0"
            )
        if key is not None and t is not BOOL and key not in self.ctx.widened:
            raise _Retype(key, t.is_int and v.is_int)  # lowered again, the variable a number
        # the fix-it keeps JavaScript's meaning: the variable is a number (an f64) that holds this value
        # as it is; narrowing the value (| 0, Math.fround) would change every later result
        decl = b.node.parent if b.node is not None else None
        init = decl.child_by_field_name("value") if decl is not None else None
        keyword = "const" if b.const else "let"
        shown = f"{keyword} {name}: number = {self.text(init) if init is not None else '...'}"
        raise self.error(
            n,
            f"{name!r} holds {t} values (the type of its initializer), and in JavaScript this value is not "
            f"always one: declare {name} a number where it is declared, `{shown}` (an f64: the value "
            f"JavaScript keeps)",
        )

    def for_loop(self, s: Node) -> list[hir.Stmt]:
        sp = self.src.span(s)
        init = s.child_by_field_name("initializer")
        conds = [c for c in s.children_by_field_name("condition") if c.type != ";"]
        cond = conds[0] if conds else None
        if cond is not None and cond.type == "expression_statement":
            cond = cond.named_children[0] if cond.named_children else None
        inc = s.child_by_field_name("increment")
        body = s.child_by_field_name("body")
        self.scopes.append({})
        try:
            canon = self.canonical_for(init, cond, inc, body)
            if canon is not None:
                return [canon]
            out: list[hir.Stmt] = []
            if init is not None and init.type != ";":
                if init.type in ("lexical_declaration", "variable_declaration"):
                    out.extend(self.stmt(init))
                elif init.type == "expression_statement" or init.type.endswith("expression"):
                    out.extend(self.expr_stmt(init.named_children[0] if init.type == "expression_statement" else init))
                else:
                    raise self.error(init, "unsupported for-loop initializer")
            c = self.conditional(lambda: self.condition(cond)) if cond is not None else hir.Const(BOOL, sp, True)
            self.loops.append("for-general")
            b = self.block(body)
            self.loops.pop()
            step = self.collect(lambda: self.expr_stmt(inc)) if inc is not None else []
            out.append(hir.While(sp, c, (*b, *step)))
            return out
        finally:
            self.end_scope()

    def canonical_for(self, init: Node | None, cond: Node | None, inc: Node | None, body: Node) -> hir.Stmt | None:
        """for (let i = a; i < b; i++ / i += c) with i not assigned in the body and b invariant:
        a HIR for loop (i stays below b, so it is exactly an integer of b's type)."""
        if init is None or init.type not in ("lexical_declaration", "variable_declaration") or cond is None:
            return None
        decls = [d for d in init.named_children if d.type == "variable_declarator"]
        let = init.type == "variable_declaration" or init.child_by_field_name("kind").type == "let"
        if len(decls) != 1 or not let or inc is None:
            return None
        d = decls[0]
        name_node, value = d.child_by_field_name("name"), d.child_by_field_name("value")
        if name_node.type != "identifier" or value is None or d.child_by_field_name("type") is not None:
            return None
        name = self.text(name_node)
        if cond.type != "binary_expression" or self.text(cond.child_by_field_name("left")) != name:
            return None
        cop = self.text(cond.child_by_field_name("operator"))
        step = self.step_of(inc, name)
        if step is None or cop not in ("<", "<=", ">", ">=") or (step >= 0) != (cop in ("<", "<=")):
            return None
        stop_node = cond.child_by_field_name("right")
        assigned = _assigned_names(body, self.src)
        step_v: V | None = None
        if step == 0:  # i += s with s invariant and at least 1
            step_node = inc.child_by_field_name("right")
            if not self.invariant(step_node, assigned | {name}):
                return None
            step_v = self.expr(step_node)
            if not (step_v.is_int and step_v.exact and step_v.lo >= 1 and step_v.type in (I32, U32)):
                return None
            step = 1
        if name in assigned or not self.invariant(stop_node, assigned | {name}):
            return None
        start = self.expr(value)
        stop = self.expr(stop_node)
        if not (start.is_int and stop.is_int and start.exact and stop.exact) or start.mz:
            return None
        for r, t in ((I32_RANGE, I32), (U32_RANGE, U32)):
            if stop.type is t and _fits(start.lo, start.hi, r):
                break
        else:
            if stop.type in (I32, U32) and start.type in (I32, U32):
                t = start.type
            else:
                return None
        inclusive = cop in ("<=", ">=")
        # the values i takes in the body must all be values of its type
        if step > 0:
            lo, hi = start.lo, max(start.lo, stop.hi - (0 if inclusive else 1))
        else:
            lo, hi = min(start.hi, stop.lo + (0 if inclusive else 1)), start.hi
        if not _fits(lo, hi, I32_RANGE if t is I32 else U32_RANGE):
            return None
        stop_e = stop.e
        assert stop_e is not None
        if inclusive:
            bound = stop.hi if step > 0 else stop.lo
            limit = (I32_RANGE if stop.type is I32 else U32_RANGE)[1 if step > 0 else 0]
            if bound == limit:
                return None  # i <= max would never end in the type: leave it to the general loop
            one = hir.Const(stop.type, stop_e.span, 1 if step > 0 else -1 if stop.type is I32 else 0xFFFFFFFF)
            stop_e = hir.Binary(stop.type, stop_e.span, BinOp.ADD, stop_e, one)
        if step < 0 and t is U32 and step < -1:
            return None
        sp = self.src.span(init)
        if init.type == "variable_declaration":
            self.var_scope(decls[0])
        b = self.declare(name, t, name_node, False, False)
        b.lo, b.hi = lo, hi
        b.const = True  # not assigned in the body
        start_e = start.ibits if t is I32 else self.as_u32(start.ibits)
        step_c = hir.Const(t, sp, step if t is I32 or step > 0 else step & 0xFFFFFFFF)
        if t is U32 and step < 0:
            step_c = hir.Const(I32, sp, step)
        if step_v is not None:
            step_c = step_v.ibits if t is I32 else self.as_u32(step_v.ibits)  # type: ignore[assignment,arg-type]
        self.loops.append("for")
        body_h = self.block(body)
        self.loops.pop()
        # the unroll rule: a counted loop whose body indexes a per-thread array is unrolled where its
        # bounds are constant (the indices become constants: the array stays in registers)
        indexes = self.uses_private(body)
        unroll = hir.Unroll.HINT if indexes else hir.Unroll.NO
        return hir.For(self.src.span(init.parent), b.hname, start_e, stop_e, step_c, body_h, unroll)

    def uses_private(self, body: Node) -> bool:
        """Does a loop body index a per-thread array, pass one (or a row) to a function, or call an
        arrow function that does (the unroll rule)?"""
        for x in _walk(body):
            if x.type != "identifier":
                continue
            b = self.lookup(self.text(x))
            if (b is None and self.text(x) in self.shapes) or (b is not None and b.view is not None):
                return True
            if b is not None and b.arrow is not None and x.parent is not None and x.parent.type == "call_expression":
                saved = self.scopes
                self.scopes = b.arrow_scopes or []  # the names the arrow function sees
                try:
                    if self.uses_private(b.arrow.child_by_field_name("body")):
                        return True
                finally:
                    self.scopes = saved
        return False

    def step_of(self, inc: Node, name: str) -> int | None:
        if inc.type == "update_expression" and self.text(inc.child_by_field_name("argument")) == name:
            return 1 if self.text(inc.child_by_field_name("operator")) == "++" else -1
        if inc.type == "augmented_assignment_expression" and self.text(inc.child_by_field_name("left")) == name:
            op = self.text(inc.child_by_field_name("operator"))
            c = self.fold(inc.child_by_field_name("right"))
            if op in ("+=", "-=") and isinstance(c, int) and not isinstance(c, bool) and c != 0 and abs(c) < 2**31:
                return c if op == "+=" else -c
            if op == "+=" and c is None:
                return 0  # a step known at run time (checked by canonical_for): upward
        return None

    def invariant(self, n: Node, assigned: set[str]) -> bool:
        stack = [n]
        while stack:
            x = stack.pop()
            if self.constant_length(x):  # t[r].length of a 2-D per-thread array: its constant row length
                continue
            stack.extend(x.children)
            if x.type == "identifier" and self.text(x) in assigned:
                return False
            callee = self.row_of(x.child_by_field_name("function")) if x.type == "call_expression" else None
            if callee is not None and isinstance(callee[0], Builtin) and callee[0].kind is Kind.ID:
                continue  # ids and sizes are the same all along
            if x.type in ("subscript_expression", "call_expression", "assignment_expression", "update_expression"):
                return False
        return True

    def constant_length(self, n: Node) -> bool:
        """Is n `t[i].length` of a 2-D per-thread array t (a constant, whatever i is)?"""
        if n.type != "member_expression" or self.text(n.child_by_field_name("property")) != "length":
            return False
        obj = n.child_by_field_name("object")
        return obj.type == "subscript_expression" and self.row_of_private(obj) is not None

    # -- expressions
    def condition(self, n: Node) -> hir.Expr:
        if n.type == "parenthesized_expression":
            n = n.named_children[0]
        return self.truth(self.expr(n), n)

    def truth(self, v: V, n: Node) -> hir.Expr:
        self.materialize(v, n)
        if v.type is BOOL:
            return v.e
        if v.type is VOID:
            raise self.error(n, B.NO_VALUE)
        sp = v.e.span
        if v.is_int and v.type in (I32, U32):
            return hir.Compare(BOOL, sp, Cmp.NE, v.e, hir.Const(v.type, sp, 0))
        e = v.e
        zero = hir.Const(e.type, sp, 0.0)  # NaN is false: ordered tests
        return hir.Logical(
            BOOL, sp, hir.LogicalOp.OR, hir.Compare(BOOL, sp, Cmp.LT, e, zero), hir.Compare(BOOL, sp, Cmp.GT, e, zero)
        )

    def int_const(self, c: int, n: Node) -> V:
        sp = self.src.span(n)
        bits = hir.Const(I32, sp, _wrap32(c))
        if _fits(c, c, I32_RANGE):
            e: hir.Expr = hir.Const(I32, sp, c)
        elif _fits(c, c, U32_RANGE):
            e = hir.Const(U32, sp, c)
        else:
            e = hir.Const(F64, sp, float(c))
        return V(e, c, c, bits, node=n)

    def number(self, x: float | int, n: Node) -> V:
        if isinstance(x, float) and math.isfinite(x) and x == int(x) and abs(x) <= EXACT:
            if x == 0 and math.copysign(1.0, x) < 0:
                return V(hir.Const(F64, self.src.span(n), -0.0), node=n)
            return self.int_const(int(x), n)
        if isinstance(x, int):
            if abs(x) <= EXACT:
                return self.int_const(x, n)
            x = float(x)
        return V(hir.Const(F64, self.src.span(n), float(x)), node=n)

    def const_value(self, v: V) -> float | int | None:
        if isinstance(v.e, hir.Const) and not v.mz and v.e.type is not BOOL:
            return v.lo if v.is_int and v.lo == v.hi else v.e.value  # type: ignore[return-value]
        return None

    def expr(self, n: Node) -> V:
        v = self.fold(n)
        if v is not None:
            if isinstance(v, bool):
                return V(hir.Const(BOOL, self.src.span(n), v), node=n)
            return self.number(v, n)
        t = n.type
        sp = self.src.span(n)
        if t == "parenthesized_expression":
            return self.expr(n.named_children[0])
        if t in ("true", "false"):
            return V(hir.Const(BOOL, sp, t == "true"), node=n)
        if t == "identifier":
            name = self.text(n)
            b = self.lookup(name)
            if b is not None and b.arrow is not None:
                raise self.error(
                    n, f"{name!r} is an arrow function: call it, {name}(...) (it is inlined; it cannot be passed on)"
                )
            if b is not None and b.view is not None:
                raise self.error(n, f"{name!r} is a row of {b.view[0]}: index it, {name}[j], or pass it to a function")
            if b is not None:
                return self.var_value(b, n)
            if name in self.ctx.functions:
                raise self.error(n, f"{name!r} is a function: call it, {name}(...) (it is inlined; it is no value)")
            if name in self.poisoned:
                raise _Bail()
            if name in self.arrays:
                raise self.error(n, f"{name!r} is an array: index it, {name}[i]")
            if name in ("NaN", "Infinity"):
                return V(hir.Const(F64, sp, math.nan if name == "NaN" else math.inf), node=n)
            if name in self.var_names:
                raise self.error(
                    n,
                    f"{name!r} is a var of an inner block: JavaScript reads it here too (var is function-scoped, "
                    f"undefined where that block did not run); declare it with let before the block",
                )
            raise self.error(n, f"{name!r} is not declared")
        if t == "binary_expression":
            op = self.text(n.child_by_field_name("operator"))
            ln, rn = n.child_by_field_name("left"), n.child_by_field_name("right")
            if op in ("&&", "||"):
                a = self.expr(ln)
                b = self.conditional(lambda: self.expr(rn))  # type: ignore[assignment]
                self.materialize(a, ln)
                self.materialize(b, rn)
                if a.type is not BOOL or b.type is not BOOL:
                    raise self.error(
                        n, f"{op} gives one of its operands in JavaScript: use it on booleans (comparisons)"
                    )
                lop = hir.LogicalOp.AND if op == "&&" else hir.LogicalOp.OR
                return V(hir.Logical(BOOL, sp, lop, a.e, b.e), node=n)
            if op in CMPOPS:
                return self.compare(CMPOPS[op], self.expr(ln), self.expr(rn), n)
            if op == "**":
                return self.power(ln, rn, n)
            if op == "??":
                return self.nullish(ln, rn, n)
            if op in ("instanceof", "in"):
                raise self.error(n, f"{op} is not supported in kernels")
            return self.binary(op, self.expr(ln), self.expr(rn), n)
        if t == "unary_expression":
            op = self.text(n.child_by_field_name("operator"))
            an = n.child_by_field_name("argument")
            if op == "!":
                return V(hir.Unary(BOOL, sp, hir.UnaryOp.NOT, self.truth(self.expr(an), an)), node=n)
            if op in ("typeof", "void", "delete"):
                raise self.error(n, f"{op} is not supported in kernels")
            a = self.expr(an)
            if op == "+":
                self.number_of(a, an)
                return a
            if op == "-":
                return self.negate(a, n)
            if op == "~":
                bits = self.to_int32(a, an)
                e = hir.Unary(I32, sp, hir.UnaryOp.BIT_NOT, bits)
                return self.int_v(e, *I32_RANGE, n)
        if t == "ternary_expression":
            c = self.condition(n.child_by_field_name("condition"))
            a = self.conditional(lambda: self.expr(n.child_by_field_name("consequence")))
            b = self.conditional(lambda: self.expr(n.child_by_field_name("alternative")))
            return self.select(c, a, b, n)  # type: ignore[arg-type]
        if t == "subscript_expression":
            arr, idx = self.subscript(n)
            return self.load(arr, idx, n)
        if t == "member_expression":
            obj, prop = n.child_by_field_name("object"), n.child_by_field_name("property")
            name = self.text(obj)
            b = self.lookup(name) if obj.type == "identifier" else None
            if self.text(prop) == "length" and b is not None and b.view is not None:  # row.length
                return self.int_const(self.shapes[b.view[0]][1], n)
            found = self.row_of_private(obj) if obj.type == "subscript_expression" else None
            if self.text(prop) == "length" and found is not None:  # t[i].length: every row's length
                i = self.index(found[1])
                rows = self.shapes[found[0]][0]
                if isinstance(i, hir.Const) and not 0 <= int(i.value) < rows:  # (JavaScript throws there)
                    raise self.error(found[1], f"{found[0]} has {rows} rows: {found[0]}[{i.value}] is undefined")
                return self.int_const(self.shapes[found[0]][1], n)
            if obj.type == "identifier" and name in self.arrays and self.text(prop) == "length" and b is None:
                if self.arrays[name].space in ("local", PRIVATE):
                    return self.int_const(self.local_counts[name], n)
                self.hidden.add(name + HIDDEN)
                self.vars[name + HIDDEN] = I32
                return self.int_v(hir.Var(I32, sp, name + HIDDEN), 0, 2**31 - 1, n)
            if name == "Math":
                raise self.error(n, f"Math.{self.text(prop)} is not supported in kernels")
            raise self.error(n, "objects and properties are not supported in kernels (arrays have .length)")
        if t == "call_expression":
            return self.call(n)
        if t == "as_expression" or t == "satisfies_expression" or t == "type_assertion":
            raise self.error(
                n, "a type assertion converts nothing in JavaScript: narrow with x | 0, x >>> 0 or Math.fround(x)"
            )
        if t == "non_null_expression":
            return self.expr(n.named_children[0])
        if t in ("string", "template_string"):
            raise self.error(n, "strings are not supported in kernels")
        if t == "new_expression":
            raise self.error(
                n, "`new` allocates on the heap: kernels use wave.local_array(Float32Array, n) or parameters"
            )
        if t in ("array", "object"):
            raise self.error(n, f"an {t} literal allocates on the heap: kernels use wave.local_array or parameters")
        if t in ("arrow_function", "function_expression", "function"):
            raise self.error(n, "closures are not supported in kernels")
        if t in ("assignment_expression", "augmented_assignment_expression", "update_expression"):
            raise self.error(n, "an assignment inside an expression is not supported: write it as its own statement")
        if t in ("null", "undefined"):
            raise self.error(n, f"{t} is not a number: kernels compute with numbers and booleans")
        if t == "this":
            raise self.error(n, "`this` is not supported in kernels (no objects)")
        raise self.error(n, f"{t.replace('_', ' ')} is not supported in kernels")

    def power(self, ln: Node, rn: Node, n: Node) -> V:
        """x ** k for a constant integer k >= 1: the powi row (repeated multiplication: exact for
        integers that stay in i32, else in f64); x ** 0 is 1 (also for NaN, as in JavaScript);
        any other exponent: Math.pow's meaning (the device's f32 pow, where rounded to f32)."""
        x = self.expr(ln)
        self.number_of(x, ln)
        k = self.fold(rn)
        if isinstance(k, float) and k.is_integer() and abs(k) < 2**31:
            k = int(k)
        if isinstance(k, int) and not isinstance(k, bool) and k == 0:
            return self.int_const(1, n)
        if not (isinstance(k, int) and not isinstance(k, bool) and 1 <= k <= 64):
            y = self.expr(rn)
            self.number_of(y, rn)
            return self.only_f32(ROWS[B_POW], POWER_OP, [x, y], [ln, rn], n)
        row = ROWS[B_POWI]
        if x.is_int and x.exact and not x.mz:
            ends = [x.lo**k, x.hi**k] + ([0] if x.lo <= 0 <= x.hi else [])
            lo, hi = min(ends), max(ends)
            if _fits(lo, hi, I32_RANGE) and _fits(x.lo, x.hi, I32_RANGE):
                e = self.bound(row, "**", n, [ln, rn], [x.ibits, k])
                return self.make_int(e, lo, hi, False, lambda: hir.Cast(F64, e.span, e), n)
        if x.type in (F32, F16) and k == 2:  # exact in f64: the rounding sites may compute it in f32
            return self.float_op(BinOp.MUL, x, x, n)
        return V(self.bound(row, "**", n, [ln, rn], [self.f64(x, ln), k]), node=n)

    def nullish(self, ln: Node, rn: Node, n: Node) -> V:
        """a ?? b. A number is never null or undefined; an element read past the end of an array is
        undefined in JavaScript: `x[i] ?? d` is x[i] where 0 <= i < x.length, else d (no access)."""
        sp = self.src.span(n)
        inner = ln.named_children[0] if ln.type == "parenthesized_expression" else ln
        if inner.type != "subscript_expression":
            self.expr(rn)  # checked, never evaluated: the left operand is a number
            return self.expr(ln)
        arr, idxs = self.subscript(inner)
        if inner.child_by_field_name("object").type == "subscript_expression":
            raise self.error(
                inner,
                f"in JavaScript {self.text(inner.child_by_field_name('object'))} is undefined past the rows of "
                f"{arr}, and reading its element throws: write the bounds test, i < {arr}.length ? ... : d",
            )
        idx = self.share(idxs[-1])  # (a row's index, `row[j] ?? d`, is a variable or a constant)
        at = self.arrays[arr]
        if at.space == PRIVATE:
            length: hir.Expr = hir.Const(U32, sp, self.shapes[arr][-1])
        elif at.space == "local":
            length = hir.Const(U32, sp, self.local_counts[arr])
        else:
            self.hidden.add(arr + HIDDEN)
            self.vars[arr + HIDDEN] = I32
            length = hir.Cast(U32, sp, hir.Var(I32, sp, arr + HIDDEN))
        inside = hir.Compare(BOOL, sp, Cmp.LT, self.as_u32(idx) if idx.type is I32 else idx, length)
        a = self.conditional(lambda: self.load(arr, (*idxs[:-1], idx), inner))
        b = self.conditional(lambda: self.expr(rn))
        return self.select(inside, a, b, n)

    def var_value(self, b: Binding, n: Node) -> V:
        sp = self.src.span(n)
        var = hir.Var(b.type, sp, b.hname)
        full = I32_RANGE if b.type is I32 else U32_RANGE
        lo = b.lo if b.lo is not None else full[0]
        hi = b.hi if b.hi is not None else full[1]
        if b.f64name is not None:
            f = hir.Var(F64, sp, b.f64name)
            return V(f, lo, hi, var, False, lambda: f, node=n)
        if b.integral:  # an integer-valued number: its i32 bits by ToInt32, its range unknown
            bits = self.to_int32(V(var, node=n), n)
            big = 2**1100
            return V(var, -big, big, bits, True, lambda: var, node=n)
        if b.type.is_int:
            return V(var, lo, hi, var if b.type is I32 else hir.Cast(I32, sp, var), node=n)
        return V(var, node=n)

    def int_v(self, e: hir.Expr, lo: int, hi: int, n: Node) -> V:
        """An integer-valued number from an i32 or u32 expression (its bits) and its range."""
        sp = e.span
        bits = e if e.type is I32 else hir.Cast(I32, sp, e)
        if _fits(lo, hi, I32_RANGE):
            rep = bits
        elif _fits(lo, hi, U32_RANGE):
            rep = e if e.type is U32 else hir.Cast(U32, sp, e)
        else:
            raise AssertionError("int_v beyond 32 bits")
        return V(rep, lo, hi, bits, node=n)

    def as_u32(self, bits: hir.Expr) -> hir.Expr:
        if bits.type is U32:
            return bits
        if isinstance(bits, hir.Const):
            return hir.Const(U32, bits.span, int(bits.value) & 0xFFFFFFFF)
        return hir.Cast(U32, bits.span, bits)

    def materialize(self, v: V, n: Node) -> None:
        if v.only_f32 is not None:
            raise self.error(n, v.only_f32)

    def number_of(self, v: V, n: Node) -> None:
        self.materialize(v, n)
        if v.type is BOOL:
            raise self.error(n, "a boolean is not a number in kernels: write c ? 1 : 0")
        if v.type is VOID:
            raise self.error(n, B.NO_VALUE)

    def f64(self, v: V, n: Node) -> hir.Expr:
        """The exact JavaScript value as an f64 expression."""
        self.number_of(v, n)
        if v.is_int and v.mz and v.f64_of is not None:
            return v.f64_of()
        if v.type is F64:
            return v.e
        if isinstance(v.e, hir.Const):
            return hir.Const(F64, v.e.span, float(v.e.value))
        return hir.Cast(F64, v.e.span, v.e)

    def exact_in(self, v: V, t: ScalarType) -> bool:
        """Whether the number v is always exactly a value of the float type t."""
        if v.e is None or v.only_f32 is not None or v.type is BOOL or v.type is VOID:
            return False
        if v.type is t or (t is F32 and v.type is F16):
            return True
        c = self.const_value(v)
        if c is not None:
            return _is_f32(float(c)) if t is F32 else _is_f16(float(c))
        if isinstance(v.e, hir.Const) and v.e.type is F64:
            return _is_f32(float(v.e.value)) if t is F32 else _is_f16(float(v.e.value))
        if v.is_int and not v.mz and v.type in (I32, U32):
            lim = 2**24 if t is F32 else 2**11
            return -lim <= v.lo and v.hi <= lim
        return False

    def narrow_exact(self, v: V, t: ScalarType) -> hir.Expr:
        if v.type is t:
            return v.e
        if isinstance(v.e, hir.Const):
            return hir.Const(t, v.e.span, float(v.e.value))
        return hir.Cast(t, v.e.span, v.e)

    def round_to(self, v: V, t: ScalarType, n: Node) -> hir.Expr:
        """Math.fround (t = f32) or Math.f16round (t = f16) of v, exactly."""
        if v.e is not None and v.type is BOOL:
            raise self.error(n, "a boolean is not a number in kernels: write c ? 1 : 0")
        if self.exact_in(v, t):
            return self.narrow_exact(v, t)
        sp = self.src.span(n)
        if v.op is not None:
            kind = v.op[0]
            xs = v.op[1:]
            if all(self.exact_in(x, t) for x in xs):  # type: ignore[arg-type]
                args = tuple(self.narrow_exact(x, t) for x in xs)  # type: ignore[arg-type]
                if isinstance(kind, BinOp):
                    return hir.Binary(t, sp, kind, *args)
                if isinstance(kind, Builtin) and kind.name in EXACT_ROUNDING:  # f16: through f32, exact
                    r = bind.bind(kind, sp, [hir.Cast(F32, sp, a) if t is F16 else a for a in args])
                    assert isinstance(r, hir.Expr)
                    return hir.Cast(F16, sp, r) if t is F16 else r
            only = isinstance(kind, Builtin) and kind.name in ONLY_F32 and t is F32
            if only and all(self.f32_argument(kind, x) for x in xs):  # type: ignore[arg-type]
                r = bind.bind(kind, sp, [self.scaled(x) for x in xs])  # type: ignore[arg-type]
                assert isinstance(r, hir.Expr)
                return r
        if v.only_f32 is not None:
            raise self.error(n, v.only_f32)
        self.number_of(v, n)
        if t is F32:
            if v.type is F16:
                return hir.Cast(F32, sp, v.e)
            if v.is_int and v.type in (I32, U32) and not v.mz:
                return hir.Cast(F32, sp, v.e)  # one rounding of the exact integer
            return hir.Cast(F32, sp, self.f64(v, n))
        # f16: from an f32 or a 32-bit integer the conversion rounds once; an f64 would round twice
        if v.type is F32:
            return hir.Cast(F16, sp, v.e)
        if v.is_int and not v.mz and v.type in (I32, U32) and v.lo >= -(2**24) and v.hi <= 2**24:
            return hir.Cast(F16, sp, hir.Cast(F32, sp, v.e))
        raise self.error(
            n,
            "rounding an f64 value to f16 is not supported (the device converts f64 to f16 through f32, "
            "rounding twice): round it to f32 first, Math.f16round(Math.fround(x)), if that is what you mean",
        )

    def to_int32(self, v: V, n: Node, unsigned: bool = False) -> hir.Expr:
        """ToInt32 (ToUint32) of v: its value modulo 2**32 as an i32 (u32) expression."""
        self.number_of(v, n)
        sp = self.src.span(n)
        if v.nan_bits is not None:
            return self.as_u32(v.nan_bits) if unsigned else v.nan_bits
        if v.is_int and v.exact:
            bits = v.ibits
            assert bits is not None
            return self.as_u32(bits) if unsigned else bits
        x = self.share(self.f64(v, n))
        # trunc, then modulo 2**32 in f64 (every step exact); NaN and infinities give 0 (cvt: NaN -> 0)
        zero = hir.Const(F64, sp, 0.0)
        t = hir.IfExpr(
            F64,
            sp,
            hir.Compare(BOOL, sp, Cmp.GE, x, zero),
            hir.Call(F64, sp, "floor", (x,)),
            hir.Call(F64, sp, "ceil", (x,)),
        )
        tv = self.share(t)
        q = hir.Call(F64, sp, "floor", (hir.Binary(F64, sp, BinOp.MUL, tv, hir.Const(F64, sp, 2.0**-32)),))
        m = hir.Binary(F64, sp, BinOp.SUB, tv, hir.Binary(F64, sp, BinOp.MUL, q, hir.Const(F64, sp, 2.0**32)))
        u = hir.Cast(U32, sp, m)
        return u if unsigned else hir.Cast(I32, sp, u)

    def convert_to(self, v: V, t: ScalarType, n: Node) -> hir.Expr:
        """A value stored into an element or variable of type t, converted as a typed array store
        converts it (ToInt32/ToUint32 modulo 2**32 and keeping the low bits, rounding to f32/f16)."""
        if t is BOOL:
            return self.truth(v, n)
        c = self.const_value(v) if v.only_f32 is None and v.type not in (BOOL, VOID) else None
        if c is not None:  # a constant: converted here, exactly as JavaScript converts it
            return hir.Const(t.value_type, self.src.span(n), _js_convert(c, t))
        if t is F64:
            return self.f64(v, n)
        if t in (F32, F16):
            return self.round_to(v, t, n)
        bits = self.to_int32(v, n, unsigned=not t.value_type.signed)
        return bits

    def negate(self, a: V, n: Node) -> V:
        self.number_of(a, n)
        sp = self.src.span(n)
        c = self.const_value(a)
        if c is not None:
            return self.number(-0.0 if isinstance(c, int) and c == 0 else -c, n)
        if a.is_int and a.exact:
            assert a.ibits is not None
            bits = hir.Unary(I32, sp, hir.UnaryOp.NEG, a.ibits)

            def f() -> hir.Expr:
                return hir.Unary(F64, sp, hir.UnaryOp.NEG, self.f64(a, n))

            return self.make_int(bits, -a.hi, -a.lo, a.lo <= 0 <= a.hi or a.mz, f, n)
        t = a.type if a.type in (F32, F16) else F64
        e = a.e if t is not F64 else self.f64(a, n)
        return V(hir.Unary(t, sp, hir.UnaryOp.NEG, e), node=n)

    def make_int(self, bits: hir.Expr, lo: int, hi: int, mz: bool, f: Callable[[], hir.Expr], n: Node) -> V:
        if _fits(lo, hi, I32_RANGE):
            rep: hir.Expr = bits
        elif _fits(lo, hi, U32_RANGE):
            rep = self.as_u32(bits)
        else:
            rep = f()
        return V(rep, lo, hi, bits, mz, f, node=n)

    def binary(self, op: str, a: V, b: V, n: Node) -> V:
        sp = self.src.span(n)
        self.number_of(a, n)
        self.number_of(b, n)
        ca, cb = self.const_value(a), self.const_value(b)
        if ca is not None and cb is not None and op in ("+", "-", "*", "/", "%"):
            r = _fold_binary(op, ca, cb)
            if r is not None:
                return self.number(r, n)
        if op in ARITH:
            bop = ARITH[op]
            if a.is_int and b.is_int:
                assert a.ibits is not None and b.ibits is not None
                if op == "*":
                    cands = [a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi]
                    lo, hi = min(cands), max(cands)
                    mz = a.mz or b.mz or (a.lo <= 0 <= a.hi and b.lo < 0) or (b.lo <= 0 <= b.hi and a.lo < 0)
                elif op == "+":
                    lo, hi, mz = a.lo + b.lo, a.hi + b.hi, a.mz and b.mz
                else:
                    lo, hi, mz = a.lo - b.hi, a.hi - b.lo, a.mz
                exact = a.exact and b.exact and lo >= -EXACT and hi <= EXACT
                bits = hir.Binary(I32, sp, bop, a.ibits, b.ibits)

                def f() -> hir.Expr:
                    return hir.Binary(F64, sp, bop, self.f64(a, n), self.f64(b, n))

                # beyond 2**53 the value is JavaScript's rounded f64 (ToInt32 takes it from there);
                # the bits still address an array: such an index is outside it in JavaScript too
                del exact
                return self.make_int(bits, lo, hi, mz, f, n)
            return self.float_op(bop, a, b, n)
        if op == "/":
            return self.float_op(BinOp.DIV, a, b, n)
        if op == "%":
            return self.remainder(a, b, n)
        if op in BITS:
            x, y = self.to_int32(a, n), self.to_int32(b, n)
            e = hir.Binary(I32, sp, BITS[op], x, y)
            lo, hi = I32_RANGE
            if op == "&":  # a non-negative constant mask bounds the result
                for c in (ca, cb):
                    if isinstance(c, int) and 0 <= c < 2**31:
                        lo, hi = 0, c
            return self.int_v(e, lo, hi, n)
        if op in SHIFTS:
            x = self.to_int32(a, n, unsigned=op == ">>>")
            if isinstance(cb, int):
                count: hir.Expr = hir.Const(x.type, sp, cb & 31)
            else:
                cnt = self.to_int32(b, n, unsigned=True)
                count = hir.Binary(U32, sp, BinOp.AND, cnt, hir.Const(U32, sp, 31))
                if x.type is I32:
                    count = hir.Cast(I32, sp, count)
            bop = BinOp.SHL if op == "<<" else BinOp.SHR
            e = hir.Binary(x.type, sp, bop, x, count)
            if op == ">>>":
                hi = 2**32 - 1 if not isinstance(cb, int) or cb & 31 == 0 else (2**32 - 1) >> (cb & 31)
                return self.int_v(e, 0, hi, n)
            return self.int_v(e, *I32_RANGE, n)
        raise self.error(n, f"operator {op} is not supported in kernels")

    def float_op(self, bop: hir.BinaryOp, a: V, b: V, n: Node) -> V:
        sp = self.src.span(n)
        e = hir.Binary(F64, sp, bop, self.f64(a, n), self.f64(b, n))
        return V(e, op=(bop, a, b), node=n)  # op: the rounding sites may compute it in f32 or f16

    def remainder(self, a: V, b: V, n: Node) -> V:
        """`a % b` of integer values: the truncated remainder (the dividend's sign), NaN when b is 0."""
        sp = self.src.span(n)
        if not (a.is_int and b.is_int and a.exact and b.exact):
            raise self.error(
                n,
                "% is supported on integer values (i32 or u32): JavaScript's % of other numbers is an f64 "
                "remainder the device does not compute; if the operands always hold integers, narrow them, "
                "(x | 0) % (y | 0)",
            )
        t = _common_int(a, b)
        if t is None and (_fits(b.lo, b.hi, I32_RANGE) or _fits(b.lo, b.hi, U32_RANGE)) and not b.mz:
            return self.wide_remainder(a, b, n)  # a dividend beyond 32 bits (ids times constants)
        if t is None:
            for side, name in ((a, "dividend"), (b, "divisor")):
                if not (_fits(side.lo, side.hi, I32_RANGE) or _fits(side.lo, side.hi, U32_RANGE)):
                    text = self.text(side.node) if side.node is not None else name
                    raise self.error(
                        side.node if side.node is not None else n,
                        f"the {name} of % may be any integer in {side.lo}..{side.hi}, beyond one 32-bit type, and "
                        f"the device computes % on 32-bit integers: if it always fits one, say which, ({text}) | 0 "
                        f"or ({text}) >>> 0 (where it does not, these wrap it)",
                    )
            raise self.error(
                n,
                "% of an i32 and a u32 value: the device computes % in one 32-bit type; if both values are "
                "always values of one, say which, (x | 0) or (x >>> 0) (where one is not, these change it)",
            )
        x = a.e if a.type is t else self.as_u32(a.ibits) if t is U32 else a.ibits
        y = b.e if b.type is t else self.as_u32(b.ibits) if t is U32 else b.ibits
        m = max(abs(b.lo), abs(b.hi))
        lo = 0 if a.lo >= 0 else -max(0, min(m - 1, -a.lo))
        hi = 0 if a.hi <= 0 else max(0, min(m - 1, a.hi))
        may_nan = not (b.lo > 0 or b.hi < 0)
        # % 0 is NaN, not a division by zero: the device divides by 1 there (no trap with check=True)
        y = self.share(y) if may_nan else y
        div = hir.IfExpr(t, sp, hir.Compare(BOOL, sp, Cmp.EQ, y, hir.Const(t, sp, 0)), hir.Const(t, sp, 1), y)
        r_e = hir.Binary(t, sp, BinOp.TRUNC_REM, x, div if may_nan else y)
        v = self.int_v(r_e, lo, hi, n)
        mz = a.lo < 0 or a.mz
        if not may_nan and not mz:
            return v
        zero = hir.Const(t, sp, 0)

        def f() -> hir.Expr:
            r64: hir.Expr = hir.Cast(F64, sp, v.e)
            if mz:
                neg = self.is_negative(a, n)
                r64 = hir.IfExpr(
                    F64,
                    sp,
                    hir.Logical(
                        BOOL, sp, hir.LogicalOp.AND, hir.Compare(BOOL, sp, Cmp.EQ, v.e, hir.Const(v.type, sp, 0)), neg
                    ),
                    hir.Const(F64, sp, -0.0),
                    r64,
                )
            if may_nan:
                r64 = hir.IfExpr(F64, sp, hir.Compare(BOOL, sp, Cmp.EQ, y, zero), hir.Const(F64, sp, math.nan), r64)
            return r64

        if may_nan:
            # NaN is no integer: the value is an f64; ToInt32 of it is the remainder or 0
            bits = hir.IfExpr(I32, sp, hir.Compare(BOOL, sp, Cmp.EQ, y, zero), hir.Const(I32, sp, 0), v.ibits)
            return V(f(), node=n, nan_bits=bits)
        return V(v.e, v.lo, v.hi, v.ibits, True, f, node=n)

    def wide_remainder(self, a: V, b: V, n: Node) -> V:
        """`a % b` of an exact integer a beyond 32 bits (|a| <= 2**53) and a 32-bit b, in f64 and
        exactly: q = trunc(a / b) (maybe one off: a / b is rounded), r = fma(-q, b, a) (an exact
        integer below 2**33 in magnitude), then r moved by |b| into the dividend's side of
        (-|b|, |b|); -0 for a zero remainder of a negative a; NaN for b = 0."""
        sp = self.src.span(n)
        x = self.share(self.f64(a, n))
        y = self.share(self.f64(b, n))
        zero = hir.Const(F64, sp, 0.0)
        q = self.bound(ROWS[B_TRUNC], "%", n, [], [hir.Binary(F64, sp, BinOp.DIV, x, y)])
        r = self.share(self.bound(ROWS[B_FMA], "%", n, [], [hir.Unary(F64, sp, hir.UnaryOp.NEG, q), y, x]))
        ay = self.share(self.bound(ROWS[B_ABS], "%", n, [], [y]))

        def cmp(op: hir.CompareOp, p: hir.Expr, q: hir.Expr) -> hir.Expr:
            return hir.Compare(BOOL, sp, op, p, q)

        def add(p: hir.Expr, q: hir.Expr, bop: hir.BinaryOp = BinOp.ADD) -> hir.Expr:
            return hir.Binary(F64, sp, bop, p, q)

        neg_ay = hir.Unary(F64, sp, hir.UnaryOp.NEG, ay)
        up = hir.IfExpr(
            F64, sp, cmp(Cmp.LT, r, zero), add(r, ay), hir.IfExpr(F64, sp, cmp(Cmp.GE, r, ay), add(r, ay, BinOp.SUB), r)
        )
        down = hir.IfExpr(
            F64,
            sp,
            cmp(Cmp.GT, r, zero),
            add(r, ay, BinOp.SUB),
            hir.IfExpr(F64, sp, cmp(Cmp.LE, r, neg_ay), add(r, ay), r),
        )
        neg = cmp(Cmp.LT, x, zero)
        fixed = self.share(hir.IfExpr(F64, sp, neg, down, up))
        # a zero remainder of a negative dividend is -0; b = 0 gives NaN (0 * inf or inf - inf above)
        r64: hir.Expr = hir.IfExpr(
            F64,
            sp,
            hir.Logical(BOOL, sp, hir.LogicalOp.AND, cmp(Cmp.EQ, fixed, zero), neg),
            hir.Const(F64, sp, -0.0),
            fixed,
        )
        may_nan = not (b.lo > 0 or b.hi < 0)
        if may_nan:
            r64 = hir.IfExpr(F64, sp, cmp(Cmp.EQ, y, zero), hir.Const(F64, sp, math.nan), r64)
        r64 = self.share(r64)
        m = max(abs(b.lo), abs(b.hi))
        lo = 0 if a.lo >= 0 else -max(0, min(m - 1, -a.lo))
        hi = 0 if a.hi <= 0 else max(0, min(m - 1, a.hi))
        t = I32 if _fits(lo, hi, I32_RANGE) else U32
        bits = hir.Cast(I32, sp, hir.Cast(t, sp, r64)) if t is U32 else hir.Cast(I32, sp, r64)  # NaN -> 0: ToInt32
        if may_nan:
            return V(r64, node=n, nan_bits=bits)
        mz = a.lo < 0 or a.mz
        return self.make_int(bits, lo, hi, mz, lambda: r64, n)

    def is_negative(self, a: V, n: Node) -> hir.Expr:
        sp = self.src.span(n)
        x = self.share(self.f64(a, n))
        zero = hir.Const(F64, sp, 0.0)
        neg_zero = hir.Logical(
            BOOL,
            sp,
            hir.LogicalOp.AND,
            hir.Compare(BOOL, sp, Cmp.EQ, x, zero),
            hir.Compare(BOOL, sp, Cmp.LT, hir.Binary(F64, sp, BinOp.DIV, hir.Const(F64, sp, 1.0), x), zero),
        )
        return hir.Logical(BOOL, sp, hir.LogicalOp.OR, hir.Compare(BOOL, sp, Cmp.LT, x, zero), neg_zero)

    def compare(self, op: hir.CompareOp, a: V, b: V, n: Node) -> V:
        sp = self.src.span(n)
        self.materialize(a, n)
        self.materialize(b, n)
        if a.type is BOOL or b.type is BOOL:
            if a.type is BOOL and b.type is BOOL and op in (Cmp.EQ, Cmp.NE):
                return V(hir.Compare(BOOL, sp, op, a.e, b.e), node=n)
            raise self.error(n, "booleans compare with === and !== to booleans only")
        self.number_of(a, n)
        self.number_of(b, n)
        if a.is_int and b.is_int and a.type in (I32, U32) and b.type in (I32, U32):
            x, y = a.e, b.e
            if isinstance(x, hir.Const) and _fits(a.lo, a.hi, I32_RANGE if y.type is I32 else U32_RANGE):
                x = hir.Const(y.type, x.span, x.value)
            if isinstance(y, hir.Const) and _fits(b.lo, b.hi, I32_RANGE if x.type is I32 else U32_RANGE):
                y = hir.Const(x.type, y.span, y.value)
            return V(hir.Compare(BOOL, sp, op, x, y), node=n)
        for t in (F16, F32):
            if self.exact_in(a, t) and self.exact_in(b, t):
                return V(hir.Compare(BOOL, sp, op, self.narrow_exact(a, t), self.narrow_exact(b, t)), node=n)
        return V(hir.Compare(BOOL, sp, op, self.f64(a, n), self.f64(b, n)), node=n)

    def select(self, c: hir.Expr, a: V, b: V, n: Node) -> V:
        sp = self.src.span(n)
        self.materialize(a, n)
        self.materialize(b, n)
        if a.type is BOOL and b.type is BOOL:
            return V(hir.IfExpr(BOOL, sp, c, a.e, b.e), node=n)
        self.number_of(a, n)
        self.number_of(b, n)
        if a.is_int and b.is_int and a.exact and b.exact:
            lo, hi = min(a.lo, b.lo), max(a.hi, b.hi)
            assert a.ibits is not None and b.ibits is not None
            bits = hir.IfExpr(I32, sp, c, a.ibits, b.ibits)
            mz = a.mz or b.mz

            def f() -> hir.Expr:
                return hir.IfExpr(F64, sp, c, self.f64(a, n), self.f64(b, n))

            return self.make_int(bits, lo, hi, mz, f, n)
        for t in (F16, F32):
            if self.exact_in(a, t) and self.exact_in(b, t):
                return V(hir.IfExpr(t, sp, c, self.narrow_exact(a, t), self.narrow_exact(b, t)), node=n)
        return V(hir.IfExpr(F64, sp, c, self.f64(a, n), self.f64(b, n)), node=n)

    def subscript(self, n: Node) -> tuple[str, tuple[hir.Expr, ...]]:
        """The array an element access reads or writes, and its indices (two for `t[i][j]` of a 2-D
        per-thread array, or `row[j]` of a row `const row = t[i]`)."""
        obj = n.child_by_field_name("object")
        idx_node = n.child_by_field_name("index")
        if obj.type == "subscript_expression":
            found = self.row_of_private(obj)
            if found is not None:
                i = self.index(found[1])
                return found[0], (i, self.index(idx_node))
            raise self.error(obj, f"{self.text(obj)} is a number: it has no elements to index")
        name = self.text(obj)
        b = self.lookup(name) if obj.type == "identifier" else None
        if b is not None and b.view is not None:
            return b.view[0], (*b.view[1], self.index(idx_node))
        if name in self.poisoned and name not in self.arrays:
            raise _Bail()
        if obj.type == "identifier" and name not in self.arrays and b is None and name in self.var_names:
            raise self.error(
                obj,
                f"{name!r} is a var of an inner block: JavaScript reads it here too (var is function-scoped, "
                f"undefined where that block did not run); declare it before the block",
            )
        if obj.type != "identifier" or name not in self.arrays or b is not None:
            raise self.error(obj, "only arrays (typed array parameters or wave.local_array) can be indexed")
        if len(self.shapes.get(name, ())) == 2:
            raise self.error(
                n, f"{name} is a 2-D per-thread array and {self.text(n)} one of its rows: index it, {name}[i][j]"
            )
        return name, (self.index(idx_node),)

    def index(self, idx_node: Node) -> hir.Expr:
        v = self.expr(idx_node)
        self.number_of(v, idx_node)
        if not v.is_int:
            raise self.error(
                idx_node, "an array index is an integer value: if it always holds one, narrow it, (x | 0) or (x >>> 0)"
            )
        assert v.ibits is not None
        if v.type in (I32, U32):
            return v.e
        # an index beyond 32 bits is outside the array in JavaScript too: its low 32 bits address
        return self.as_u32(v.ibits) if v.lo >= 0 else v.ibits

    def load(self, arr: str, idx: tuple[hir.Expr, ...], n: Node) -> V:
        elem = self.arrays[arr].elem
        sp = self.src.span(n)
        if arr in self.shapes:
            e: hir.Expr = hir.PrivateLoad(elem.value_type, sp, self.aname(arr), idx)
        else:
            e = hir.Load(elem.value_type, sp, arr, idx[0])
        if elem.is_int:
            if elem.narrow:
                lo, hi = (
                    (-(1 << (elem.bits - 1)), (1 << (elem.bits - 1)) - 1) if elem.signed else (0, (1 << elem.bits) - 1)
                )
            else:
                lo, hi = I32_RANGE if elem is I32 else U32_RANGE
            return self.int_v(e, lo, hi, n)
        return V(e, node=n)

    # -- calls
    # -- helper functions and arrow functions: one instance per argument types, inlined by compiler/inline.py
    def helper_call(
        self,
        n: Node,
        name: str,
        fn: Node,
        args: list[Node],
        scopes: list[dict[str, Binding]] | None,
        arrays: tuple[dict[str, Any], ...] | None = None,
    ) -> V:
        """A call of a function of the file or of an arrow function bound by `const`. A parameter
        typed `number` (or untyped) takes the argument's exact value as the caller holds it (so
        the helper computes what JavaScript computes); f32, i32, u32, f16 convert as a declared
        variable does; typed arrays are passed by reference."""
        sp = self.src.span(n)
        tps = fn.child_by_field_name("type_parameters")
        if tps is not None:
            raise self.error(
                tps, "generic functions are not supported in kernels: the parameters are numbers or typed arrays"
            )
        if any(c.type == "async" for c in fn.children):
            raise self.error(fn, "async functions are not supported in kernels")
        single = fn.child_by_field_name("parameter")  # `v => v * v`
        pnodes = (
            [single]
            if single is not None
            else [p for p in fn.child_by_field_name("parameters").named_children if p.type != "comment"]
        )
        if len(args) != len(pnodes):
            raise self.error(
                n, f"Expected {len(pnodes)} arguments, but got {len(args)} ({name!r} is inlined with its arguments)"
            )
        assigned = _assigned_names(fn.child_by_field_name("body"), self.src)
        shapes: dict[str, tuple[int, ...]] = {}  # the per-thread arrays passed: their shapes
        params: list[tuple[str, ScalarType | ArrayType, bool, tuple[int, int] | None, Node]] = []
        actual: list[hir.Expr | hir.ArrayArg] = []
        for a, p in zip(args, pnodes):
            pat = p if p.type == "identifier" else p.child_by_field_name("pattern")
            if p.type not in ("identifier", "required_parameter") or pat is None or pat.type != "identifier":
                raise self.error(
                    p, "helper parameters are plain `name: type` parameters (no defaults, no rest, not optional)"
                )
            if p.type != "identifier" and p.child_by_field_name("value") is not None:
                raise self.error(p, "helper parameters have no default values: pass every argument")
            pname = self.text(pat)
            ann = p.child_by_field_name("type") if p.type != "identifier" else None
            tn = ann.named_children[0] if ann is not None else None
            txt = self.text(tn) if tn is not None else "number"
            if tn is not None and (txt in TYPED_ARRAYS or tn.type in ("array_type", "generic_type")):
                arg, shape = self.array_argument(a, tn, name)
                params.append((pname, arg.type, False, None, p))
                actual.append(arg)
                if shape:
                    shapes[pname] = shape
                continue
            if txt == "boolean":
                v = self.expr(a)
                if v.type is not BOOL:
                    raise self.error(a, f"{name!r} takes a boolean here")
                params.append((pname, BOOL, True, None, p))
                actual.append(v.e)
                continue
            if txt not in ALIASES:
                raise self.error(
                    tn or p,
                    f"helper parameters are numbers (number, f32, i32, u32, f16), booleans or typed arrays, not {txt}",
                )
            v = self.expr(a)
            self.number_of(v, a)
            if txt != "number":  # declared: converted as a declared variable is
                t = ALIASES[txt]
                params.append((pname, t, True, None, p))
                actual.append(self.convert_to(v, t, a))
                continue
            rng: tuple[int, int] | None = None
            if v.is_int and not v.mz and (_fits(v.lo, v.hi, I32_RANGE) or _fits(v.lo, v.hi, U32_RANGE)):
                t, e = v.type, v.e
                rng = (v.lo, v.hi) if pname not in assigned else (I32_RANGE if t is I32 else U32_RANGE)
            elif v.is_int or v.type is F64:
                t, e = F64, self.f64(v, a)
            else:
                t, e = v.type, v.e
            params.append((pname, t, False, rng, p))
            actual.append(e)
        rnode = fn.child_by_field_name("return_type")
        rtxt = self.text(rnode.named_children[0]) if rnode is not None else "number"
        ret: ScalarType | str
        if rtxt == "void":
            ret = "void"
        elif rtxt == "boolean":
            ret = BOOL
        elif rtxt == "number":
            ret = "infer"
        elif rtxt in ALIASES:
            ret = ALIASES[rtxt]
        else:
            raise self.error(
                rnode, f"a helper returns a number (number, f32, i32, u32, f16), a boolean or void, not {rtxt}"
            )
        sig = ",".join(
            f"[{t.elem}{''.join(f' {d}' for d in shapes.get(p, ()))}]"
            if isinstance(t, ArrayType)
            else f"{t}{'' if r is None else f':{r[0]}..{r[1]}'}"
            for p, t, _, r, _ in params
        )
        where = f"@{fn.start_point[0] + 1}:{fn.start_point[1] + 1}" if scopes is not None else ""
        key = f"{name}{where}({sig})"

        def build() -> hir.Helper:
            try:
                return self.build_helper(fn, name, key, params, ret, scopes, shapes, arrays)
            except _Widen:  # returns of several types: numbers (f64), as JavaScript has them
                return self.build_helper(fn, name, key, params, F64, scopes, shapes, arrays)

        try:
            h = self.helpers.instance(key, name, sp, build)
        except HelperFailed:
            self.failed = True
            raise _Bail() from None
        except CompileError as e:
            self.diags.extend(e.diagnostics)
            raise _Bail() from None
        for (_, _, _, _, _), hp, a in zip(params, h.params, actual):  # a length read in the helper: the kernel's
            if isinstance(a, hir.ArrayArg) and self.helpers.reads_length(h, hp.name):
                if a.name in self.local_counts:
                    raise self.error(n, f"{name!r} reads the length of a local array: pass the length as a parameter")
                self.hidden.add(a.name + HIDDEN_LENGTH)
                self.vars.setdefault(a.name + HIDDEN_LENGTH, I32)
        rt = h.result or VOID
        inv = hir.Invoke(rt, sp, key, tuple(actual))
        whole = (n.start_byte, n.end_byte) in self.atomic_ok
        if not whole and not self.helpers.pure(h):
            raise self.error(
                n,
                f"{name!r} writes memory or synchronises: call it as a statement of its own, or as the whole value "
                "of a declaration or assignment, so that its effects keep their order",
            )
        value: hir.Expr = inv if whole or rt is VOID else self.share(inv)
        if rt.is_int and rt is not BOOL:
            return self.int_v(value, *(I32_RANGE if rt is I32 else U32_RANGE), n)
        return V(value, node=n)

    def array_argument(self, a: Node, tn: Node, name: str) -> tuple[hir.ArrayArg, tuple[int, ...]]:
        """An array passed to a helper parameter of type tn, by reference: a parameter, a local array,
        a per-thread array (`Float32Array`, or `Float32Array[]` for a 2-D one), a row of a 2-D one
        (`t[r]`, `const row = t[r]`); and the shape of a per-thread one (() for others)."""
        txt = self.text(tn)
        row_type = self.text(tn.named_children[0]) if tn.type == "array_type" else None
        if tn.type == "generic_type":  # Array<Float32Array>
            m = re.fullmatch(r"(?:Readonly)?Array<\s*(\w+)\s*>", txt)
            if m is None or m.group(1) not in TYPED_ARRAYS:
                raise self.error(tn, f"helper parameters are numbers, booleans or typed arrays, not {txt}")
            row_type = m.group(1)
        rows = row_type in TYPED_ARRAYS
        want = TYPED_ARRAYS.get(row_type or "")
        if not rows:
            at = self.param_type(tn)
            assert isinstance(at, ArrayType)
            want = at.elem
        found = self.row_of_private(a) if a.type == "subscript_expression" else None
        b = self.lookup(self.text(a)) if a.type == "identifier" else None
        if found is not None and not rows:  # t[r]: a row
            base = found[0]
            arg = hir.ArrayArg(self.aname(base), ArrayType(self.arrays[base].elem, PRIVATE), (self.index(found[1]),))
            shape: tuple[int, ...] = self.shapes[base][1:]
        elif b is not None and b.view is not None and not rows:  # const row = t[r]
            base = b.view[0]
            arg = hir.ArrayArg(self.aname(base), ArrayType(self.arrays[base].elem, PRIVATE), b.view[1])
            shape = self.shapes[base][1:]
        elif a.type == "identifier" and self.text(a) in self.arrays and b is None:
            base = self.text(a)
            arg = hir.ArrayArg(self.aname(base), self.arrays[base])
            shape = self.shapes.get(base, ())
            if len(shape) == 2 and not rows:
                raise self.error(
                    a, f"{base} is a 2-D per-thread array: {name!r} takes a {txt} here (pass a row, {base}[i])"
                )
            if rows and len(shape) != 2:
                raise self.error(a, f"{name!r} takes a {txt} here (an array of rows): {base} is not one")
        else:
            raise self.error(a, f"{name!r} takes an array here ({txt}): pass an array")
        if arg.type.elem != want:
            raise self.error(a, f"{name!r} takes a {txt} here, not an array of {arg.type.elem}")
        return arg, shape

    def build_helper(
        self,
        fn: Node,
        name: str,
        key: str,
        params: list[tuple[str, ScalarType | ArrayType, bool, tuple[int, int] | None, Node]],
        ret: ScalarType | str,
        scopes: list[dict[str, Binding]] | None,
        shapes: dict[str, tuple[int, ...]],
        arrays: tuple[dict[str, Any], ...] | None = None,
    ) -> hir.Helper:
        sub = KernelBuilder(self.ctx, fn, self.options, name, self.helpers)
        sub.ret = ret
        base: set[str] = set()
        if scopes is not None:  # an arrow function: the caller's names are its captures
            sub.scopes = [dict(sc) for sc in scopes]
            sub.vars = dict(self.vars)
            sub.params = set(self.params)
            # the arrays it captures: those visible where it is declared (JavaScript's lexical scope)
            seen: tuple[dict[str, Any], ...] = arrays or (self.arrays, self.local_counts, self.shapes, self.array_hir)
            sub.arrays, sub.local_counts, sub.shapes, sub.array_hir = (
                dict(seen[0]),
                dict(seen[1]),
                dict(seen[2]),
                dict(seen[3]),
            )
            # its body is a block of its own: an array it declares may hide a captured one
            sub.block_arrays = [
                (0, a, (sub.arrays[a], sub.local_counts.get(a), sub.shapes.get(a), None)) for a in sub.arrays
            ]
            sub.tmp = self.tmp
            base = set(self.vars) | set(self.params)
        sub.scopes.append({})
        hparams: list[hir.Param] = []
        own: set[str] = set()
        for pname, t, declared, rng, pnode in params:
            if isinstance(t, ArrayType):
                sub.arrays[pname] = t
                sub.array_hir.pop(pname, None)
                sub.scopes[-1].pop(pname, None)
                sub.shapes.pop(pname, None)
                if pname in shapes:  # a per-thread array (or a row of one): its constant extents
                    sub.shapes[pname] = shapes[pname]
                    sub.local_counts[pname] = shapes[pname][0]
                hparams.append(hir.Param(pname, t, self.src.span(pnode)))
                continue
            sub.arrays.pop(pname, None)
            sub.array_hir.pop(pname, None)
            b = sub.declare(pname, t, pnode, False, declared)
            if t.is_int and t is not BOOL:
                b.lo, b.hi = rng if rng is not None else (I32_RANGE if t is I32 else U32_RANGE)
                b.const = rng is not None and rng != (I32_RANGE if t is I32 else U32_RANGE)
            own.add(b.hname)
            hparams.append(hir.Param(b.hname, t, self.src.span(pnode)))
        body = fn.child_by_field_name("body")
        if body.type == "statement_block":
            stmts = list(sub.block(body))
        else:  # `(v) => v * v`
            try:
                stmts = sub.collect(lambda: sub.helper_value(body))
            except _Bail:
                stmts = []
        if sub.locals:
            sub.error(fn, "workgroup arrays (wave.local_array) are declared in kernels: pass one to the helper")
        mine = {pname + HIDDEN_LENGTH for pname, t, _, _, _ in params if isinstance(t, ArrayType)}
        for h in sub.hidden - mine:  # the length of an array an arrow function captures: the caller's
            self.hidden.add(h)
            self.vars.setdefault(h, I32)
        if sub.diags:
            raise CompileError(sub.diags)
        if sub.failed:
            raise HelperFailed()
        result = None if sub.ret in ("void", "infer") else sub.ret
        if sub.ret == "infer" and sub.ret_b is not None:
            result = sub.ret_b.type
        hidden = {h for h in sub.vars if h.endswith(HIDDEN_LENGTH)}
        variables = tuple((k, v) for k, v in sub.vars.items() if k not in base and k not in own and k not in hidden)
        assert not isinstance(result, str)
        privates = tuple(sub.privates.values())  # its own: one set per call
        return hir.Helper(key, name, tuple(hparams), result, tuple(stmts), variables, self.src.span(fn), privates)

    def helper_return(self, s: Node) -> list[hir.Stmt]:
        sp = self.src.span(s)
        if not s.named_children:
            if self.ret not in ("void", "infer") or self.ret_b is not None:
                raise self.error(s, f"{self.name!r} returns a value: return one")
            self.ret = "void"
            return [hir.Return(sp)]
        if self.ret == "void":
            raise self.error(s.named_children[0], f"{self.name!r} returns void: `return;`")
        return self.helper_value(s.named_children[0])

    def helper_value(self, n: Node) -> list[hir.Stmt]:
        """`return value` (or an arrow function's expression body): the result, of the declared
        type, or of the first returned value's type when it says `number` (another type: f64)."""
        sp = self.src.span(n)
        self.allow_atomic(n)
        v = self.expr(n)
        if isinstance(self.ret, ScalarType):
            return [hir.Return(sp, v.e if self.ret is BOOL and v.type is BOOL else self.convert_to(v, self.ret, n))]
        if v.type is BOOL:
            if self.ret_b is not None and self.ret_b.type is not BOOL:
                raise _Widen()
            self.ret_b = Binding("", BOOL, False, False)
            return [hir.Return(sp, v.e)]
        self.number_of(v, n)
        if self.ret_b is None:
            if v.is_int and not v.mz and (_fits(v.lo, v.hi, I32_RANGE) or _fits(v.lo, v.hi, U32_RANGE)):
                t = v.type
            elif v.is_int or v.type is F64:
                t = F64
            else:
                t = v.type
            self.ret_b = Binding(
                "", t, False, False, *((I32_RANGE if t is I32 else U32_RANGE) if t.is_int else (None, None))
            )
        t = self.ret_b.type
        if t is F64:
            return [hir.Return(sp, self.f64(v, n))]
        if t.is_int and v.is_int and not v.mz and _fits(v.lo, v.hi, I32_RANGE if t is I32 else U32_RANGE):
            return [hir.Return(sp, v.ibits if t is I32 else self.as_u32(v.ibits))]
        if t in (F32, F16) and self.exact_in(v, t):
            return [hir.Return(sp, self.narrow_exact(v, t))]
        raise _Widen()

    def row_of(self, f: Node) -> tuple[Builtin | str, str] | None:
        """What a callee names: (the builtin's row, or a JavaScript function of JS_MATH / Atomics.*,
        the spelling as written), or None. wave.NAME, a bare NAME of BARE (not shadowed), Math.NAME,
        Atomics.NAME."""
        if f.type == "member_expression":
            obj, prop = f.child_by_field_name("object"), f.child_by_field_name("property")
            o, p = self.text(obj), self.text(prop)
            if obj.type == "identifier" and self.lookup(o) is None and o not in self.arrays:
                if o in NAMESPACES:
                    return (ROWS[WAVE_CALLS[p]] if p in WAVE_CALLS else p), f"wave.{p}"
                if o in ("Math", "Number"):
                    spelled = f"{o}.{p}"
                    return (ROWS[MATH_CALLS[spelled]] if spelled in MATH_CALLS else spelled), spelled
                if o == "Atomics":
                    return (ROWS[ATOMICS_JS[p]] if p in ATOMICS_JS else f"Atomics.{p}"), f"Atomics.{p}"
            return None
        if f.type == "identifier":
            name = self.text(f)
            if self.lookup(name) is None and name not in self.arrays:
                if name in BARE:
                    return ROWS[WAVE_CALLS[name]], name
                if name in GLOBAL_CALLS:
                    return ROWS[GLOBAL_CALLS[name]], name
        return None

    def call(self, n: Node) -> V:
        f = n.child_by_field_name("function")
        args = [a for a in n.child_by_field_name("arguments").named_children if a.type != "comment"]
        if f.type == "identifier":
            callee = self.text(f)
            b = self.lookup(callee)
            if b is not None and b.arrow is not None:
                return self.helper_call(n, callee, b.arrow, args, b.arrow_scopes, b.arrow_arrays)
            if b is None and callee in self.ctx.functions and callee not in self.arrays:
                return self.helper_call(n, callee, self.ctx.functions[callee], args, None)
            if b is None and callee in self.ctx.kernels and callee != self.name:
                raise self.error(
                    f, f"{callee!r} is a kernel: kernels cannot be called (make the shared code a function)"
                )
        found = self.row_of(f)
        if found is None:
            if f.type == "identifier" and self.text(f) == self.name and self.ret is None:
                raise self.error(f, "recursion is not supported in kernels (no call stack on the device)")
            if f.type == "identifier":
                raise self.error(
                    f,
                    f"{self.text(f)!r} is not a builtin: kernels call builtins (wave.*, Math.*), the file's functions and arrow functions",
                )
            if f.type == "member_expression":
                raise self.error(f, "method calls are not supported in kernels (no objects, no dynamic dispatch)")
            raise self.error(f, "only builtins can be called in kernels")
        what, spelled = found
        if isinstance(what, str):
            if spelled in JS_MATH:
                return self.js_math(spelled, args, n)
            if spelled.startswith("Atomics."):
                raise self.error(
                    f, f"{spelled} is not supported in kernels (add sub and or xor exchange compareExchange)"
                )
            if spelled.startswith(("Math.", "Number.")):
                if spelled in JS_CONSTANTS:
                    raise self.error(f, f"{spelled} is a constant, not a function")
                raise self.error(
                    f,
                    f"{spelled} is not supported in kernels (Math: {' '.join(MATH_NAMES)}, the device having f32 "
                    f"versions only of exp log log2 sin cos pow: where rounded to f32; Number.isNaN)",
                )
            raise self.error(f, f"unknown builtin {what!r}")
        return self.builtin(what, spelled, args, n)

    # -- builtins: the spelling's arguments as the binder's actuals, with JavaScript's conversions
    def bound(self, row: Builtin, spelled: str, n: Node, args: list[Node], actuals: list[bind.Actual]) -> hir.Expr:
        """The typed call of `row` (compiler/bind.py), or its refusal placed at the argument."""
        r = bind.bind(row, self.src.span(n), actuals)
        if isinstance(r, bind.Refusal):
            at = args[r.arg] if isinstance(r.arg, int) and r.arg < len(args) else n
            raise self.error(at, r.message.replace(f"{row.name}(", f"{spelled}(", 1))
        return r

    def builtin(self, row: Builtin, spelled: str, args: list[Node], n: Node) -> V:
        """A builtin's call, bound by compiler/bind.py with JavaScript's reading of the arguments
        (_Args); Math.* and wave.abs/min/max keep JavaScript's meaning (math)."""
        if row.rule is Rule.LOCAL:
            raise self.error(
                n, "wave.local_array(...) must initialise a const: const s = wave.local_array(Float32Array, 256)"
            )
        if row.rule is Rule.ATOMIC and (n.start_byte, n.end_byte) not in self.atomic_ok:
            raise self.error(
                n,
                "an atomic's old value is used as a whole statement or initializer: const old = wave.atomic_add(a, i, v)",
            )
        math_call = spelled.startswith(("Math.", "Number.")) or spelled in GLOBAL_CALLS
        if math_call or row.kind in (Kind.MINMAX, Kind.ABS):  # wave.min, wave.abs: Math.min's, Math.abs's
            kinds = bind.slots(row, len(args), spelled=spelled)
            if isinstance(kinds, bind.Refusal):
                raise self.error(n, kinds.message)
            return self.math(row, spelled, args, n)
        e = bind.call(row, self.src.span(n), _Args(self, row, spelled), args)
        if isinstance(e, bind.Refusal):  # an atomic's operation refused: at its array, whose type is why
            at = bind.at(e, args) or (args[0] if row.rule is Rule.ATOMIC and not e.arity else n)
            raise self.error(at, e.message.replace(f"{row.name}(", f"{spelled}(", 1))
        if row.rule is Rule.ATOMIC and spelled.startswith("Atomics.") and not e.type.is_int:  # a TypeError in JS
            raise self.error(
                args[0], f"JavaScript's {spelled} works on integer arrays, not {e.type}: call wave.{row.name} for f32"
            )
        if row.rule is Rule.ID:
            if row.name in B.WIDE_IDS:  # its range below is correct only up to 2**31 - 1 threads an axis
                self.options["max_global_size"] = B.I32_ID_LIMIT
            return self.int_v(e, 1 if row.name in SIZES else 0, 2**31 - 1, n)
        return self.value(e, n)

    def common(self, args: list[Node]) -> list[bind.Actual]:
        """Numbers in one type that holds each exactly: i32, u32, f32, else their f64 values."""
        xs = [self.expr(a) for a in args]
        for x, a in zip(xs, args):
            self.number_of(x, a)
        if all(x.is_int and x.exact and not x.mz for x in xs):
            for r, t in ((I32_RANGE, I32), (U32_RANGE, U32)):
                if all(_fits(x.lo, x.hi, r) for x in xs):
                    return [x.ibits if t is I32 else self.as_u32(x.ibits) for x in xs]
        if all(self.exact_in(x, F32) for x in xs):
            return [self.narrow_exact(x, F32) for x in xs]
        return [self.f64(x, a) for x, a in zip(xs, args)]

    def value(self, e: hir.Expr, n: Node, lo: int | None = None, hi: int | None = None) -> V:
        """A builtin's result as a number: integers with their type's range (or lo..hi)."""
        if e.type in (I32, U32):
            full = I32_RANGE if e.type is I32 else U32_RANGE
            return self.int_v(e, full[0] if lo is None else lo, full[1] if hi is None else hi, n)
        return V(e, node=n)

    def wave_value(self, x: V, n: Node, spelled: str) -> hir.Expr:
        self.number_of(x, n)
        if x.is_int and x.type in (I32, U32) and not x.mz:
            return x.e
        if x.type is F32:
            return x.e
        raise self.error(
            n,
            f"{spelled} works on i32, u32 and f32 values, and this number may be none of them: narrow it if "
            f"that is what you mean, x | 0, x >>> 0 or Math.fround(x) (each changes a value it does not hold)",
        )

    def allow_atomic(self, n: Node) -> None:
        if n.type == "call_expression":
            self.atomic_ok.add((n.start_byte, n.end_byte))

    def math(self, row: Builtin, spelled: str, args: list[Node], n: Node) -> V:
        """Math.* (and wave.abs/min/max) with JavaScript's meaning: integers stay exact integers,
        f32 and f16 values stay in their type where the result is one, other numbers compute in f64."""
        sp = self.src.span(n)
        if row.kind is Kind.MINMAX:
            acc = self.expr(args[0])
            for a in args[1:]:
                acc = self.minmax(row, spelled, acc, self.expr(a), n, args)
            return acc
        xs = [self.expr(a) for a in args]
        for x, a in zip(xs, args):
            self.number_of(x, a)
        if row.name in ONLY_F32:  # the device's f32 functions: where the result is rounded to f32
            return self.only_f32(row, spelled, xs, args, n)
        x, a = xs[0], args[0]
        if row.rule is Rule.BITS:  # Math.clz32: of ToUint32(x)
            return self.value(self.bound(row, spelled, n, args, [self.to_int32(x, a, unsigned=True)]), n, 0, 32)
        if row.rule is Rule.PREDICATE:  # isNaN: an integer never is
            if x.is_int:
                return V(hir.Const(BOOL, sp, False), node=n)
            return V(self.bound(row, spelled, n, args, [self.float_of(x, a)]), node=n)
        if row.name in INTEGRAL:  # floor ceil trunc round: an integer is its own
            if x.is_int:
                return x
            return V(self.float_call(row, spelled, x, a, n), node=n)
        if row.kind is Kind.ABS:
            if x.is_int and x.exact and (x.lo >= 0 or _fits(x.lo, x.hi, I32_RANGE)):
                lo = 0 if x.lo <= 0 <= x.hi else min(abs(x.lo), abs(x.hi))
                hi = max(abs(x.lo), abs(x.hi))
                bits = self.bound(row, spelled, n, args, [x.ibits])

                def fa() -> hir.Expr:
                    return self.bound(row, spelled, n, args, [self.f64(x, a)])

                if x.lo >= 0:  # itself, but never -0
                    return x if not x.mz else self.make_int(x.ibits, x.lo, x.hi, False, fa, n)
                return self.make_int(bits, lo, hi, False, fa, n)
            return V(self.bound(row, spelled, n, args, [self.float_of(x, a)]), node=n)
        if row.rule is Rule.SAME and len(args) == 1:  # Math.sign
            if x.is_int and x.exact and not x.mz and _fits(x.lo, x.hi, I32_RANGE):
                e = self.bound(row, spelled, n, args, [x.ibits])
                return self.int_v(e, max(-1, min(x.lo, 1)), min(1, max(x.hi, -1)), n)
            return V(self.bound(row, spelled, n, args, [self.float_of(x, a)]), node=n)
        # Math.sqrt: f64, correctly rounded (rounding sites may compute it in f32 or f16)
        e = self.bound(row, spelled, n, args, [self.f64(x, a)])
        return V(e, op=(row, x), node=n)

    def float_of(self, x: V, a: Node) -> hir.Expr:
        """x in its own float type when it has one (f32, f16), else its f64 value."""
        return x.e if x.type in (F32, F16, F64) and not x.is_int else self.f64(x, a)

    def float_call(self, row: Builtin, spelled: str, x: V, a: Node, n: Node) -> hir.Expr:
        """An exact function (floor, ceil, trunc, round) in x's float type: an f16 through f32,
        exactly (its result is an f16 value)."""
        sp = self.src.span(n)
        e = self.float_of(x, a)
        if e.type is F16:
            return hir.Cast(F16, sp, self.bound(row, spelled, n, [a], [hir.Cast(F32, sp, e)]))
        return self.bound(row, spelled, n, [a], [e])

    def only_f32(self, row: Builtin, spelled: str, xs: list[V], args: list[Node], n: Node) -> V:
        sp = self.src.span(n)
        shown = [self.text(a) if len(self.text(a)) <= 40 and "\n" not in self.text(a) else "x" for a in args]
        call = f" {spelled} ".join(shown) if spelled == POWER_OP else f"{spelled}({', '.join(shown)})"
        bad = [(x, a, s) for x, a, s in zip(xs, args, shown) if not self.f32_argument(row, x)]
        if not bad:
            msg = (
                f"{spelled} is computed by the device's f32 function: use it where the result is rounded "
                f"to f32, Math.fround({call})"
                + (f", or call wave.{row.name}({', '.join(shown)})" if row.name in WAVE_CALLS else "")
            )
        else:  # the fix-it says that it rounds the argument: a change of the value, if that is meant
            _, a, s = bad[0]
            fixed = [f"Math.fround({t})" if t == s else t for t in shown]
            fixed_call = f" {spelled} ".join(fixed) if spelled == POWER_OP else f"{spelled}({', '.join(fixed)})"
            msg = (
                f"{spelled} is computed by the device's f32 function, on f32 arguments, and `{s}` is "
                f"an f64 (JavaScript computes {'it' if a.type != 'identifier' else 'this number'} in "
                f"f64): round the argument to f32 first if that is what you mean, "
                f"{fixed_call}, where the result is rounded to f32"
            )
        return V(hir.Const(F32, sp, math.nan), op=(row, *xs), only_f32=msg, node=n)  # e: never read

    def f32_argument(self, row: Builtin, x: V) -> bool:
        """Whether x may be an argument of the device's f32 functions: exactly an f32 value, or an
        f32 value times (or divided by) a power of two, which is exact in f32 but where it
        overflows (an infinity: exp2 and exp give the same 0 or inf as of the f64 value) or falls
        below 2**-126 (where their f32 result is 1 either way). See EXP_SCALED."""
        if self.exact_in(x, F32):
            return True
        if (
            row.name not in SCALED_OK
            or x.op is None
            or not isinstance(x.op[0], BinOp)
            or x.op[0] not in (BinOp.MUL, BinOp.DIV)
        ):
            return False
        a, b = x.op[1], x.op[2]
        c = self.const_value(b)  # type: ignore[arg-type]
        if c is None or not self.exact_in(a, F32):  # type: ignore[arg-type]
            return False
        m, _ = math.frexp(abs(float(c)))
        return m == 0.5 and -100 < math.log2(abs(float(c))) < 100

    def scaled(self, x: V) -> hir.Expr:
        """An f32_argument as an f32 expression."""
        if self.exact_in(x, F32):
            return self.narrow_exact(x, F32)
        assert x.op is not None
        bop, a, b = x.op
        assert isinstance(bop, BinOp) and isinstance(a, V) and isinstance(b, V)
        return hir.Binary(F32, x.e.span, bop, self.narrow_exact(a, F32), self.narrow_exact(b, F32))

    def js_math(self, spelled: str, args: list[Node], n: Node) -> V:
        """JavaScript's own functions that are no builtin row: Math.fround, Math.f16round, Math.imul,
        Math.hypot."""
        sp = self.src.span(n)
        kind = JS_MATH[spelled]
        if kind == "imul":
            if len(args) != 2:
                raise self.error(n, "Math.imul(a, b) takes two arguments")
            a, b = (self.to_int32(self.expr(x), x) for x in args)
            return self.int_v(hir.Binary(I32, sp, BinOp.MUL, a, b), *I32_RANGE, n)
        if kind == "hypot":
            return self.hypot(args, n)
        if len(args) != 1:
            raise self.error(n, f"{spelled}(x) takes one argument")
        t = F32 if kind == "fround" else F16
        return V(self.round_to(self.expr(args[0]), t, args[0]), node=n)

    def hypot(self, args: list[Node], n: Node) -> V:
        """Math.hypot(a, b, ...) in f64 without overflow or underflow: m * sqrt(sum((x/m)**2)) for
        m = max |x| (docs/compiler.md: within 2 ulp; Infinity if any is infinite, else NaN if any
        is NaN; 0 for no arguments or all zeros)."""
        sp = self.src.span(n)
        if not args:
            return self.int_const(0, n)
        absr, maxr, sqrtr = ROWS[B_ABS], ROWS[B_MAX], ROWS[B_SQRT]
        xs = []
        for a in args:
            v = self.expr(a)
            self.number_of(v, a)
            xs.append(self.share(self.bound(absr, "Math.hypot", n, [a], [self.f64(v, a)])))
        m = xs[0]
        for x in xs[1:]:
            m = self.bound(maxr, "Math.hypot", n, args, [m, x])
        m = self.share(m)
        zero, inf = hir.Const(F64, sp, 0.0), hir.Const(F64, sp, math.inf)
        safe = self.share(hir.IfExpr(F64, sp, hir.Compare(BOOL, sp, Cmp.EQ, m, zero), hir.Const(F64, sp, 1.0), m))
        total: hir.Expr = zero
        for x in xs:
            q = self.share(hir.Binary(F64, sp, BinOp.DIV, x, safe))
            total = hir.Binary(F64, sp, BinOp.ADD, total, hir.Binary(F64, sp, BinOp.MUL, q, q))
        r: hir.Expr = hir.Binary(F64, sp, BinOp.MUL, safe, self.bound(sqrtr, "Math.hypot", n, args, [total]))
        r = hir.IfExpr(F64, sp, hir.Compare(BOOL, sp, Cmp.EQ, m, zero), zero, r)
        nan = None
        for x in xs:
            c = hir.Compare(BOOL, sp, Cmp.NE, x, x)
            nan = c if nan is None else hir.Logical(BOOL, sp, hir.LogicalOp.OR, nan, c)
        r = hir.IfExpr(F64, sp, nan, hir.Const(F64, sp, math.nan), r)  # type: ignore[arg-type]
        # max ignores a NaN operand: m is infinite exactly when some argument is
        r = hir.IfExpr(F64, sp, hir.Compare(BOOL, sp, Cmp.EQ, m, inf), inf, r)
        return V(r, node=n)

    def minmax(self, row: Builtin, spelled: str, a: V, b: V, n: Node, args: list[Node]) -> V:
        sp = self.src.span(n)
        self.number_of(a, n)
        self.number_of(b, n)
        if a.is_int and b.is_int and a.exact and b.exact and not a.mz and not b.mz:
            for r, t in ((I32_RANGE, I32), (U32_RANGE, U32)):
                if _fits(a.lo, a.hi, r) and _fits(b.lo, b.hi, r):
                    x = a.ibits if t is I32 else self.as_u32(a.ibits)
                    y = b.ibits if t is I32 else self.as_u32(b.ibits)
                    pick = max if row.name in MAXIMA else min
                    lo, hi = pick(a.lo, b.lo), pick(a.hi, b.hi)
                    return self.int_v(self.bound(row, spelled, n, args, [x, y]), lo, hi, n)
        t = F32 if self.exact_in(a, F32) and self.exact_in(b, F32) else F64
        x = self.narrow_exact(a, t) if t is F32 else self.f64(a, n)
        y = self.narrow_exact(b, t) if t is F32 else self.f64(b, n)
        # JavaScript: NaN if either is NaN (the device's min/max return the other operand)
        vx, vy = self.share(x), self.share(y)
        r = hir.IfExpr(
            t,
            sp,
            hir.Compare(BOOL, sp, Cmp.NE, vx, vx),
            vx,
            hir.IfExpr(t, sp, hir.Compare(BOOL, sp, Cmp.NE, vy, vy), vy, self.bound(row, spelled, n, args, [vx, vy])),
        )
        return V(r, node=n)


class _Args:
    """How TypeScript reads a builtin call's arguments (a bind.Reader): constants folded, a scope a
    string, an atomic's array a typed array of the kernel and its index an integer value, a lane
    an i32 or u32 value; the values by the row (wave values, ToInt32 for bit counts, f32 for the
    device's math, clamp and sign in one type that holds each exactly: KernelBuilder.common)."""

    def __init__(self, k: KernelBuilder, row: Builtin, spelled: str):
        self.k, self.row, self.spelled = k, row, spelled
        self.together = row.rule is Rule.SAME and row.kind is not Kind.FMA  # wave.clamp, wave.sign

    def constant(self, node: Node, kind: Arg) -> bind.Actual:
        v = self.k.fold(node)
        return None if isinstance(v, bool) or not isinstance(v, int) else v

    def scope(self, node: Node) -> bind.Actual:
        return self.k.text(node)[1:-1] if node.type == "string" else None

    def type(self, node: Node) -> bind.Actual:
        return TYPED_ARRAYS.get(self.k.text(node))  # wave.local_array(Float32Array, 256)

    def array(self, node: Node) -> bind.ArrayRef | None:
        an = self.k.text(node)
        ok = node.type == "identifier" and an in self.k.arrays and self.k.lookup(an) is None
        ok = ok and self.k.arrays[an].space != PRIVATE  # a thread's own array needs no atomics
        return bind.ArrayRef(an, self.k.arrays[an].elem) if ok else None

    def index(self, node: Node) -> hir.Expr:
        x = self.k.expr(node)
        self.k.number_of(x, node)
        if self.row.rule is Rule.ATOMIC:
            if not x.is_int:
                raise self.k.error(
                    node, "an array index is an integer value: if it always holds one, narrow it, (x | 0) or (x >>> 0)"
                )
            return x.e if x.type in (I32, U32) else self.k.as_u32(x.ibits)
        if not x.is_int or x.type not in (I32, U32):
            raise self.k.error(
                node, "a lane or distance is an i32 or u32 value: if it always holds one, narrow it, x | 0"
            )
        return x.e

    def condition(self, node: Node) -> hir.Expr:
        return self.k.condition(node)

    def element(self, node: Node, elem: ScalarType) -> hir.Expr:
        return self.k.convert_to(self.k.expr(node), elem, node)

    def value(self, node: Node) -> hir.Expr | Node:
        rule = self.row.rule
        if self.together:
            return node  # by values, together
        if rule is Rule.WAVE:
            return self.k.wave_value(self.k.expr(node), node, self.spelled)
        if rule is Rule.CAST:
            t = B.CASTS[self.row.name]
            x = self.k.expr(node)
            return self.k.truth(x, node) if t is BOOL else self.k.convert_to(x, t, node)
        if rule is Rule.BITS:  # wave.popcount: of ToInt32(x)
            return self.k.to_int32(self.k.expr(node), node)
        if rule is Rule.PREDICATE:
            x = self.k.expr(node)
            self.k.number_of(x, node)
            return self.k.float_of(x, node)
        return self.k.round_to(self.k.expr(node), F32, node)  # the device's f32 math (wave.sqrt, wave.fma, ...)

    def values(self, read: list[hir.Expr | Node], nodes: list[Node]) -> list[hir.Expr]:
        if self.together:
            return [x for x in self.k.common(nodes) if isinstance(x, hir.Expr)]
        return [x for x in read if isinstance(x, hir.Expr)]


def _common_int(a: V, b: V) -> ScalarType | None:
    """i32 or u32 when both integer ranges fit it (i32 first)."""
    for r, t in ((I32_RANGE, I32), (U32_RANGE, U32)):
        if _fits(a.lo, a.hi, r) and _fits(b.lo, b.hi, r):
            return t
    return None


def _fold_binary(op: str, a: float | int, b: float | int) -> float | int | None:
    try:
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            r = a * b
            if r == 0 and isinstance(r, int) and (a < 0 or b < 0):
                return -0.0  # 0 * -5 is -0 in JavaScript
            return r
        if op == "/":
            if b == 0:
                return math.nan if a == 0 or math.isnan(a) else math.copysign(math.inf, a) * math.copysign(1, b)
            return a / b
        if op == "%":
            if b == 0 or math.isinf(a):
                return math.nan
            if isinstance(a, float) or isinstance(b, float):
                return math.fmod(a, b)
            r = abs(a) % abs(b)  # the dividend's sign; -0 for a zero remainder of a negative dividend
            return (-r if r else -0.0) if a < 0 else r
    except (OverflowError, ValueError):
        return None
    if isinstance(a, float) and isinstance(b, float) and a.is_integer() and b.is_integer() and op in BITS:
        a, b = int(a), int(b)
    if isinstance(a, int) and isinstance(b, int):
        x, y = _wrap32(a), _wrap32(b)
        if op == "&":
            return x & y
        if op == "|":
            return _wrap32(x | y)
        if op == "^":
            return _wrap32(x ^ y)
        if op == "<<":
            return _wrap32(x << (y & 31))
        if op == ">>":
            return x >> (y & 31)
        if op == ">>>":
            return (x & 0xFFFFFFFF) >> (y & 31)
    return None


def _number(txt: str) -> float | int:
    t = txt.replace("_", "")
    low = t.lower()
    if low.startswith(("0x", "0o", "0b")):
        return int(low, 0)
    if low.endswith("n"):
        raise ValueError("bigint")
    v = float(t)
    return int(v) if v.is_integer() and abs(v) <= EXACT and "." not in t and "e" not in low else v


@dataclass(frozen=True)
class _Row:
    """A typed array constructed in a kernel (a per-thread array, or one row of a 2-D one)."""

    node: Node
    ctor: str  # Float32Array, ...
    elem: ScalarType
    count: int
    values: list[Node] | None = None  # new Float32Array([..]), Float32Array.of(..), Float32Array.from([..])
    fill: Node | None = None  # new Float32Array(N).fill(v)


def _zero(t: ScalarType, sp: object) -> hir.Const:
    return hir.Const(t, sp, 0.0 if t.is_float else 0)  # type: ignore[arg-type]


def _arguments(n: Node) -> list[Node]:
    args = n.child_by_field_name("arguments")
    return [a for a in args.named_children if a.type != "comment"] if args is not None else []


def _elements(n: Node, src: Source) -> list[Node] | None:
    """The elements of an array literal, or None where it has a hole (`[1, , 2]`) or a spread."""
    out: list[Node] = []
    expect = True  # an element comes next
    for c in n.children:
        if c.type in ("[", "comment"):
            continue
        if c.type == "]":
            break
        if c.type == ",":
            if expect:
                return None
            expect = True
            continue
        if c.type == "spread_element":
            return None
        out.append(c)
        expect = False
    return out


def _makes_private(n: Node, src: Source) -> bool:
    """Is n one of the spellings of a per-thread array (KernelBuilder.private_array)?"""
    while n.type == "parenthesized_expression":
        n = n.named_children[0]
    if n.type == "new_expression":
        return True
    if n.type == "array":
        items = [c for c in n.named_children if c.type != "comment"]
        return bool(items) and _makes_private(items[0], src) and items[0].type != "array"
    if n.type != "call_expression" or n.child_by_field_name("function").type != "member_expression":
        return False
    f = n.child_by_field_name("function")
    obj, prop = f.child_by_field_name("object"), src.node_text(f.child_by_field_name("property"))
    if prop == "fill":
        return obj.type == "new_expression"
    name = src.node_text(obj) if obj.type == "identifier" else ""
    return (name in TYPED_ARRAYS and prop in ("of", "from")) or (name == "Array" and prop == "from")


def _walk(n: Node) -> list[Node]:
    out, stack = [], [n]
    while stack:
        x = stack.pop()
        out.append(x)
        stack.extend(x.children)
    return out


def _assigned_names(n: Node, src: Source) -> set[str]:
    out: set[str] = set()
    for x in _walk(n):
        if x.type in ("assignment_expression", "augmented_assignment_expression"):
            left = x.child_by_field_name("left")
        elif x.type == "update_expression":
            left = x.child_by_field_name("argument")
        else:
            continue
        if left is not None and left.type == "identifier":
            out.add(src.node_text(left))
    return out


# ---- files: kernels, markers, top-level constants -------------------------------------------------
KERNEL_TAG = re.compile(r"@(?:wave\.)?kernel\b")
WORKGROUP_TAG = re.compile(r"@workgroup\s+(\d+)(?:\s+(\d+))?(?:\s+(\d+))?")


def _kernels(src: Source, root: Node) -> tuple[list[tuple[Node, dict[str, object]]], dict[str, float | int], bool]:
    consts: dict[str, float | int] = {}
    marked: list[tuple[Node, dict[str, object]]] = []
    plain: list[Node] = []
    comments: list[Node] = []  # the comments right before the current statement
    for top in root.named_children:
        node = top
        if top.type == "export_statement":
            d = top.child_by_field_name("declaration")
            node = d if d is not None else top
        if node.type == "function_declaration":
            doc = "\n".join(src.node_text(c) for c in comments)
            if KERNEL_TAG.search(doc):
                opts: dict[str, object] = {}
                m = WORKGROUP_TAG.search(doc)
                if m:
                    opts["workgroup"] = tuple(int(g) for g in m.groups() if g)
                marked.append((node, opts))
            else:
                plain.append(node)
        elif node.type == "lexical_declaration" and node.child_by_field_name("kind").type == "const":
            for d in node.named_children:
                v = d.child_by_field_name("value") if d.type == "variable_declarator" else None
                if v is not None and d.child_by_field_name("name").type == "identifier":
                    tmp = KernelBuilder.__new__(KernelBuilder)
                    tmp.src, tmp.scopes, tmp.ctx, tmp.diags = src, [{}], Ctx(src, consts, False), []
                    try:
                        val = KernelBuilder.fold(tmp, v)
                    except _Bail:  # not a constant of the kernel language (a BigInt): not one
                        val = None
                    if val is not None:
                        consts[src.node_text(d.child_by_field_name("name"))] = val
        comments = [*comments, top] if top.type == "comment" else []
    if marked:
        return marked, consts, False
    return [(p, {"workgroup": (256,)}) for p in plain], consts, True


class TypeScriptFrontend:
    """The FRONTENDS entry for TypeScript (compiler/frontends/__init__.py)."""

    name = "typescript"
    suffixes = (".ts",)

    def parse(self, text: str, file: str) -> list[hir.Function]:
        src, root = parse("typescript", text, file, _describe_syntax_error)
        found, consts, compat = _kernels(src, root)
        kernels = {src.node_text(node.child_by_field_name("name")) for node, _ in found}
        functions: dict[str, Node] = {}
        if not compat:  # beside tagged kernels, the file's other functions are helpers
            for top in root.named_children:
                node = top.child_by_field_name("declaration") if top.type == "export_statement" else top
                if node is not None and node.type == "function_declaration":
                    fname = src.node_text(node.child_by_field_name("name"))
                    if fname not in kernels:
                        functions[fname] = node
        if not found:
            raise CompileError([Diagnostic("no kernel function found (mark one with /** @kernel */)", file_start(src))])
        out: list[hir.Function] = []
        # tsc: "Duplicate function implementation", "Duplicate identifier"
        diags: list[Diagnostic] = duplicates(
            src, [(src.node_text(node.child_by_field_name("name")), node) for node, _ in found], "kernel"
        )
        for node, opts in found:
            ctx = Ctx(src, consts, compat, functions, kernels)
            while True:  # again while a variable typed by its initializer turns out a number (_Retype)
                lw = KernelBuilder(ctx, node, dict(opts))
                try:
                    fn = lw.run()
                    diags.extend(param_errors(fn))
                    out.append(fn)
                except _Retype as r:
                    ctx.widened[r.key] = ctx.widened.get(r.key, True) and r.integral
                    continue
                except _Bail:
                    diags.extend(lw.diags)
                except CompileError as e:
                    diags.extend(e.diagnostics)
                break
        if diags:
            raise CompileError(diags)
        return out


TYPESCRIPT = TypeScriptFrontend()


def _describe_syntax_error(n: Node) -> str | None:
    """tree-sitter-typescript reads `a < (-1) ? x : y` as the start of type arguments and fails
    where tsc parses a comparison: say so, and how to write it."""
    prev = n.prev_sibling
    if prev is not None and prev.type == "<" and n.text.lstrip().startswith(b"("):
        return (
            "syntax error: the parser reads `< (` here as the start of type arguments (tsc reads a "
            "comparison): drop the parentheses, `a < -1`, or name the value first"
        )
    return None


def _spellings() -> dict[str, str]:
    """Row -> a typical call in TypeScript: JavaScript's own spelling where it has the row (Math.*,
    Atomics.*, operators), else wave.NAME(...)."""
    shown = {Arg.AXIS: "0", Arg.SCOPE: '"workgroup"', Arg.TYPE: "Float32Array", Arg.COUNT: "256", Arg.ARRAY: "a"}
    shown |= {Arg.INDEX: "lane", Arg.CONDITION: "c", Arg.VALUE: "x"}
    out = {n: f"wave.{n}({', '.join(shown[a] for a in ROWS[n].args)})" for n in WAVE_CALLS}
    js = {row: spelled for spelled, row in MATH_CALLS.items()}
    args = {"min": "a, b", "max": "a, b", "pow": "x, y"}
    out |= {row: f"{spelled}({args.get(row, 'x')})" for row, spelled in js.items()}
    out |= {row: f"Math.fround({out[row]})" for row in js if row in ONLY_F32}  # where rounded to f32
    out |= {f"atomic_{op}": f"wave.atomic_{op}(a, i, v)" for op in B.ATOMIC_OPS}
    out |= {row: f"wave.{row}(a, i, v) or Atomics.{op}(a, i, v)" for op, row in ATOMICS_JS.items()}
    out["atomic_cas"] = "wave.atomic_cas(a, i, expected, desired) or Atomics.compareExchange(a, i, e, d)"
    out |= {"fma": "wave.fma(a, b, c)", "clamp": "wave.clamp(x, lo, hi)", "powi": "x ** 3"}
    out |= {"i32": "x | 0", "u32": "x >>> 0", "f32": "Math.fround(x)", "f16": "Math.f16round(x)"}
    out |= {"isnan": "Number.isNaN(x) or isNaN(x)", "private_array": "const p = new Float32Array(8);"}
    out |= {"min_first": "wave.min_first(a, b)", "max_first": "wave.max_first(a, b)"}
    out |= {"clamp_keep_nan": "wave.clamp_keep_nan(x, lo, hi)"}
    return out


# builtin name -> a typical call in TypeScript (compiler/frontends: the docs' table of spellings)
SPELLINGS: dict[str, str] = _spellings()

__all__ = ["SPELLINGS", "TYPESCRIPT", "TypeScriptFrontend"]
