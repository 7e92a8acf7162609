"""The Rust frontend: `#[wave::kernel]` functions of a tree-sitter-rust tree to typed HIR.

Rust's own rules, not Python's (docs/compiler.md, "The kernel language in Rust"): no implicit
conversions between types (a mismatch is refused with the `as` fix-it rustc suggests), integer
`/` and `%` truncate (HIR TRUNC_DIV/TRUNC_REM), integer arithmetic wraps as in a release build,
shift counts are taken modulo 32 as a release build does, `as` casts keep or convert values as
Rust defines them (float -> int saturates, NaN gives 0: WAVE's cvt does the same). Unsuffixed
literals take their type from the context; a `let` of an unsuffixed literal with no annotation
is inferred from its later uses, as rustc does (the default: i32 and f64).

Kernels are functions marked `#[wave::kernel]` or `#[kernel]` (every function when none is
marked, the Rust toolchain's examples); builtins are called as `wave::thread_id(0)` or, after
`use wave::*;`, `thread_id(0)`, and the usual methods (`x.sqrt()`, `a.min(b)`, `a.mul_add(b, c)`,
`x.powf(y)`, `k.count_ones()`): FUNCTIONS and METHODS name their rows of compiler/builtins.py, and
every call is bound by compiler/bind.py. Rust's idioms (per-thread arrays, `unroll(a..b)`,
`.rev()`, tuple `let`, blocks as values, `if let Some(v) = x.get(i)`, labels, slice iterators,
raw pointers) lower to the same HIR (docs/compiler.md, the Rust table). The declaration crate
under support/rust/ lets rustc check the same kernels.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import NamedTuple

import numpy as np

from ...errors import CompileError, Diagnostic
from .. import bind, builtins, hir
from ..builtins import NO_VALUE, ROWS, TOOLCHAIN_WORKGROUP, VOID, Arg, Builtin, Rule
from ..inline import HIDDEN_LENGTH, HelperFailed, Helpers
from ..types import BOOL, F16, F32, F64, I32, NARROW, U32, ArrayType, ScalarType
from . import treesitter
from .treesitter import Node

BinOp = hir.BinaryOp
Cmp = hir.CompareOp

# Rust's scalar type names and the HIR type that holds their values (usize is u32 here; the 8- and
# 16-bit integers are storage types whose values are held in an i32 or u32)
RUST_TYPES: dict[str, ScalarType] = {
    "i32": I32,
    "u32": U32,
    "usize": U32,
    "f32": F32,
    "f64": F64,
    "f16": F16,
    "bool": BOOL,
    "u8": U32,
    "u16": U32,
    "i8": I32,
    "i16": I32,
}
NARROW_BITS = {"u8": 8, "u16": 16, "i8": 8, "i16": 16}
ELEMENT_TYPES = {"i32": I32, "u32": U32, "f32": F32, "f64": F64, "f16": F16}
UNSUPPORTED_INTS = ("i64", "u64", "i128", "u128", "isize")
INTS = ("i32", "u32", "usize", *NARROW_BITS)
FLOATS = ("f32", "f64", "f16")

BINOPS = {
    "+": BinOp.ADD,
    "-": BinOp.SUB,
    "*": BinOp.MUL,
    "/": BinOp.DIV,
    "%": BinOp.TRUNC_REM,
    "&": BinOp.AND,
    "|": BinOp.OR,
    "^": BinOp.XOR,
    "<<": BinOp.SHL,
    ">>": BinOp.SHR,
}
CMPOPS = {"==": Cmp.EQ, "!=": Cmp.NE, "<": Cmp.LT, "<=": Cmp.LE, ">": Cmp.GT, ">=": Cmp.GE}
WRAPPING = {  # x.wrapping_add(y) ... : what release-mode arithmetic does anyway
    "wrapping_add": "+",
    "wrapping_sub": "-",
    "wrapping_mul": "*",
    "wrapping_div": "/",
    "wrapping_rem": "%",
    "wrapping_shl": "<<",
    "wrapping_shr": ">>",
}
# ---- how Rust spells the builtins (compiler/builtins.py's rows; bound by compiler/bind.py) -------
# The wave crate's free functions (`thread_id(0)`, `wave::thread_id(0)` after `use wave::*;`): every
# row by its name (a cast is `as`, local_array a generic declaration), and Rust's names of two
FUNCTIONS: dict[str, str] = {n: n for n, b in ROWS.items() if b.rule not in (Rule.CAST, Rule.PRIVATE)}
FUNCTIONS |= {"ln": "log", "mul_add": "fma"}
# Rust's std methods (and the crate's `Rsqrt` trait): the method -> its row, and the Rust types
# that have it (rustc refuses the others: no `u32::abs`, no `i32::sqrt`)
_FLOAT_METHODS = {"sqrt": "sqrt", "sin": "sin", "cos": "cos", "exp": "exp", "exp2": "exp2", "ln": "log"}
_FLOAT_METHODS |= {"log2": "log2", "floor": "floor", "ceil": "ceil", "mul_add": "fma", "powf": "pow"}
_FLOAT_METHODS |= {"powi": "powi", "round": "round_away", "round_ties_even": "round_even", "trunc": "trunc"}
_FLOAT_METHODS |= {"is_nan": "isnan"}
_INT_METHODS = {"count_ones": "popcount", "leading_zeros": "clz", "trailing_zeros": "ctz", "pow": "powi"}
METHODS: dict[str, str] = {**_FLOAT_METHODS, **_INT_METHODS, "rsqrt": "rsqrt", "abs": "abs", "min": "min"}
METHODS |= {"max": "max", "clamp": "clamp_keep_nan", "signum": "signum"}
# i32::signum(0) = 0 is `sign`'s meaning; f32::signum(+-0.0) = +-1.0 (and NaN for NaN) is `signum`'s
# f32::clamp keeps a NaN x (clamp's min(max(x, lo), hi) would give lo); on integers they agree
INT_METHODS = {"signum": "sign", "clamp": "clamp"}
_NUMBERS = ("i32", "u32", "usize", "f32", "f64")
METHOD_TYPES: dict[str, tuple[str, ...]] = {m: ("f32", "f64") for m in _FLOAT_METHODS}
METHOD_TYPES |= {m: ("i32", "u32", "usize") for m in _INT_METHODS} | {"rsqrt": ("f32",), "clamp": _NUMBERS}
METHOD_TYPES |= {"abs": ("i32", "f32", "f64", "f16"), "signum": ("i32", "f32", "f64")}
METHOD_TYPES |= {"min": (*_NUMBERS, "f16"), "max": (*_NUMBERS, "f16")}
# `core::cmp::min(a, b)`: Ord's functions (integers; f32 is not Ord); `f32::sqrt(x)`: a method
# called as a function
CMP_PATHS = ("core::cmp", "std::cmp", "cmp")
CMP_FUNCTIONS = {"min": "min", "max": "max"}
UNROLL = "unroll"  # `for i in unroll(0..4)`: the crate's marker of a loop unrolled at compile time
COUNT_TYPES = {"powi": "i32", "pow": "u32"}  # f32::powi(n: i32), u32::pow(exp: u32)
# `T::from(x)`: the lossless conversions Rust implements From for (between the kernel types)
FROM = {
    "u32": ("u32", "bool", "u8", "u16"),
    "usize": ("usize", "bool", "u8", "u16"),
    "i32": ("i32", "bool", "u8", "u16", "i8", "i16"),
    "f32": ("f32", "bool", "u8", "u16", "i8", "i16"),
    "f64": ("f64", "bool", "u8", "u16", "i8", "i16", "i32", "u32", "f32"),
}
SCOPES = {"Wave": "wave", "Workgroup": "workgroup", "Device": "device"}
FLOAT_CONSTS = {
    "PI": math.pi,
    "E": math.e,
    "TAU": math.tau,
    "LN_2": math.log(2),
    "LN_10": math.log(10),
    "LOG2_E": math.log2(math.e),
    "LOG10_E": math.log10(math.e),
    "SQRT_2": math.sqrt(2),
    "FRAC_PI_2": math.pi / 2,
    "FRAC_PI_4": math.pi / 4,
    "FRAC_1_SQRT_2": 1 / math.sqrt(2),
}
TYPE_CONSTS: dict[str, dict[str, float | int]] = {
    "f32": {
        "MAX": 3.4028234663852886e38,
        "MIN": -3.4028234663852886e38,
        "EPSILON": 2.0**-23,
        "INFINITY": math.inf,
        "NEG_INFINITY": -math.inf,
        "NAN": math.nan,
        "MIN_POSITIVE": 2.0**-126,
    },
    "f64": {
        "MAX": 1.7976931348623157e308,
        "MIN": -1.7976931348623157e308,
        "EPSILON": 2.220446049250313e-16,
        "INFINITY": math.inf,
        "NEG_INFINITY": -math.inf,
        "NAN": math.nan,
    },
    "i32": {"MAX": 2**31 - 1, "MIN": -(2**31), "BITS": 32},
    "u32": {"MAX": 2**32 - 1, "MIN": 0, "BITS": 32},
    "usize": {"MAX": 2**32 - 1, "MIN": 0},
}
HEAP = ("Vec", "Box", "String", "Rc", "Arc", "HashMap", "BTreeMap", "VecDeque")
HIDDEN_SUFFIXES = ("__len", "__shape0", "__shape1")

# How Rust spells each builtin (docs/compiler.md's table is generated from these)
SPELLINGS: dict[str, str] = {
    "thread_id": "thread_id(0)",
    "workgroup_id": "workgroup_id(0)",
    "workgroup_size": "workgroup_size(0)",
    "grid_size": "grid_size(0)",
    "global_id": "global_id(0)",
    "global_size": "global_size(0)",
    "lane_id": "lane_id()",
    "wave_id": "wave_id()",
    "wave_width": "wave_width()",
    "barrier": "barrier()",
    "fence": "fence(Scope::Workgroup)",
    "local_array": "let s = local_array::<f32, 256>();",
    **{f"atomic_{op}": f"atomic_{op}(bins, i, v)" for op in ("add", "sub", "min", "max", "and", "or", "xor")},
    "atomic_exchange": "atomic_exchange(a, i, v)",
    "atomic_cas": "atomic_cas(a, i, expected, desired)",
    **{n: f"{n}(x)" for n in ("wave_reduce_add", "wave_reduce_min", "wave_reduce_max", "wave_reduce_and")},
    "wave_reduce_or": "wave_reduce_or(x)",
    "wave_prefix_add": "wave_prefix_add(x)",
    "wave_shuffle": "wave_shuffle(x, lane)",
    "wave_shuffle_up": "wave_shuffle_up(x, n)",
    "wave_shuffle_down": "wave_shuffle_down(x, n)",
    "wave_shuffle_xor": "wave_shuffle_xor(x, mask)",
    "wave_broadcast": "wave_broadcast(x, lane)",
    "wave_ballot": "wave_ballot(c)",
    "wave_any": "wave_any(c)",
    "wave_all": "wave_all(c)",
    "sqrt": "x.sqrt()",
    "rsqrt": "x.rsqrt()",
    "sin": "x.sin()",
    "cos": "x.cos()",
    "exp": "x.exp()",
    "exp2": "x.exp2()",
    "log": "x.ln()",
    "log2": "x.log2()",
    "floor": "x.floor()",
    "ceil": "x.ceil()",
    "fma": "a.mul_add(b, c)",
    "abs": "x.abs()",
    "min": "a.min(b), core::cmp::min(i, j)",
    "max": "a.max(b), core::cmp::max(i, j)",
    "i32": "x as i32",
    "u32": "x as u32",
    "f32": "x as f32",
    "f64": "x as f64",
    "f16": "f16::from_f32(x)",
    "bool": "x != 0",
    "pow": "x.powf(y)",
    "powi": "x.powi(3)",
    "round_away": "x.round()",
    "round_even": "x.round_ties_even()",
    "trunc": "x.trunc()",
    "clamp": "k.clamp(lo, hi) (integers)",
    "clamp_keep_nan": "x.clamp(lo, hi) (floats)",
    "min_first": "min_first(a, b)",
    "max_first": "max_first(a, b)",
    "round_half_up": "round_half_up(x)",
    "private_array": "let mut t = [0.0f32; 8];",
    "sign": "k.signum() (integers)",
    "signum": "x.signum() (floats)",
    "isnan": "x.is_nan()",
    "popcount": "k.count_ones()",
    "clz": "k.leading_zeros()",
    "ctz": "k.trailing_zeros()",
}


class V(NamedTuple):
    """A lowered expression with its Rust type ('usize', 'u8', ... where HIR's type says less)."""

    e: hir.Expr
    rt: str
    lit: bool = False  # an unsuffixed literal (its type comes from the context)
    flex: frozenset[str] | None = None  # built only of literals and not-yet-inferred variables
    src: str | None = None  # a float literal's decimal text: an f32 is rounded from it once


@dataclass
class Var:
    hir_name: str
    rt: str
    mutable: bool
    flexible: bool  # declared from an unsuffixed literal with no annotation: inferred from uses
    node: Node
    ref: bool = False  # `if let Some(v) = x.get(i)`: v is a `&T` (`*v` reads it; it converts itself)


@dataclass
class Array:
    name: str
    type: ArrayType
    rt: str  # the element's Rust type
    mutable: bool
    count: int | None = None  # local arrays
    pointer: bool = False  # `*const f32` / `*mut f32` (rust-cuda style): `*p.add(i)` in unsafe code


@dataclass
class Closure:
    """A closure bound by `let`: inlined where it is called (it never escapes)."""

    node: Node  # the closure_expression
    scopes: list[dict[str, Binding]]  # what its body sees: the scopes at its definition
    kinds: list[Array | Private | str] | None = None  # its parameters' types, fixed by its first call as rustc does


@dataclass
class Private:
    """A per-thread array (`let mut t = [0.0f32; 4];`): the hir.PrivateArray `hir_name`."""

    hir_name: str
    rt: str  # the element's Rust type
    mutable: bool
    flexible: bool  # its element type is inferred from its first use, as rustc does
    node: Node
    shape: tuple[int, ...]
    ref: bool = False  # a helper's parameter `t: &mut [f32; 8]`: the caller's array, by reference

    def spelled(self) -> str:
        """Its Rust type: `[f32; 8]`, `[[f32; 8]; 4]` (a reference parameter: `&mut [f32; 8]`)."""
        t = self.rt
        for d in reversed(self.shape):
            t = f"[{t}; {d}]"
        return f"{'&mut ' if self.mutable else '&'}{t}" if self.ref else t


Binding = Var | Array | Closure | Private
ParamKind = Array | Private | str  # a helper parameter's: a slice, a per-thread array by reference, a scalar


@dataclass
class _Walk:
    """What an iterator chain walks (KernelBuilder.walk_of): each array with its first index, the
    number of trips, the statements computing them once, values (`.copied()`) or references."""

    arrays: list[tuple[Array | Private, hir.Expr | None]]  # None: the element at the loop's counter
    lo: hir.Expr  # the counter's range
    hi: hir.Expr
    pre: list[hir.Stmt]
    by_value: bool = False
    counter: Var | None = None  # `(a..b)`: the elements are the counter's values (no arrays), of this type


@dataclass
class _Loop:
    """An enclosing loop: its label, the flags `break 'label` / `continue 'label` set from loops
    inside it, and the (loop, kind) exits to test after this loop (close_loop)."""

    label: str | None
    flags: dict[str, str] = field(default_factory=dict)
    pending: dict[tuple[int, str], None] = field(default_factory=dict)  # an ordered set: the output is deterministic

    def flag(self, kw: str, b: KernelBuilder) -> str:
        if kw not in self.flags:
            self.flags[kw] = b.temp(BOOL)
        return self.flags[kw]


class _Bail(Exception):
    """Abandon the current statement after recording a diagnostic."""


class _Restart(Exception):
    """A variable's type was inferred from a later use: lower the function again."""


def _fits(v: int, rt: str) -> bool:
    if rt == "i32":
        return -(2**31) <= v < 2**31
    if rt in ("u32", "usize"):
        return 0 <= v < 2**32
    if rt in NARROW_BITS:
        b = NARROW_BITS[rt]
        return -(1 << (b - 1)) <= v < (1 << (b - 1)) if rt.startswith("i") else 0 <= v < (1 << b)
    return False


def _wrap(v: int, rt: str) -> int:
    v &= 0xFFFFFFFF
    if rt == "i32" and v >> 31:
        return v - (1 << 32)
    return v


def parse_int(text: str) -> tuple[int, str | None]:
    """The value and the suffix of a Rust integer literal."""
    t = text.replace("_", "")
    suffix = None
    for s in (*INTS, *UNSUPPORTED_INTS, "i64", "u64", "f32", "f64"):
        if t.endswith(s) and not (t.startswith(("0x", "0X")) and s in ("f32", "f64")):
            suffix, t = s, t[: -len(s)]
            break
    base = 10
    if t[:2] in ("0x", "0X"):
        base, t = 16, t[2:]
    elif t[:2] in ("0o", "0O"):
        base, t = 8, t[2:]
    elif t[:2] in ("0b", "0B"):
        base, t = 2, t[2:]
    return int(t, base), suffix


def parse_float(text: str) -> tuple[float, str | None]:
    t, suffix = float_text(text)
    return float(t), suffix


def float_text(text: str) -> tuple[str, str | None]:
    """A float literal's decimal digits (no underscores) and its suffix."""
    t = text.replace("_", "")
    for s in ("f32", "f64", "f16"):
        if t.endswith(s):
            return t[: -len(s)], s
    return t, None


def f32_of(decimal: str) -> float:
    """The f32 nearest to a decimal literal, rounded once as rustc does (ties to even; through a
    double first would round twice). inf when it is beyond f32's range."""
    exact = Fraction(decimal)
    with np.errstate(over="ignore"):
        c = np.float32(float(exact))
        if not np.isfinite(c):
            return math.copysign(math.inf, float(exact))
        up, down = np.nextafter(c, np.float32(math.inf)), np.nextafter(c, np.float32(-math.inf))
    best = min(
        (x for x in (down, c, up) if np.isfinite(x)),
        key=lambda x: (abs(Fraction(float(x)) - exact), int(np.float32(x).view(np.uint32)) & 1),
    )
    return float(best)


class KernelBuilder:
    """One kernel function to HIR (run again when a variable's type is inferred from a later use)."""

    def __init__(
        self,
        front: RustKernels,
        fn: Node,
        inferred: dict[int, str],
        name: str | None = None,
        helpers: Helpers | None = None,
    ):
        self.f = front
        self.src = front.src
        self.fn = fn
        self.inferred = inferred  # let/for node id -> the type its later uses gave it
        self.diags: list[Diagnostic] = []
        self.scopes: list[dict[str, Binding]] = [{}]
        self.vars: dict[str, ScalarType] = {}  # HIR variable names and types
        self.params: set[str] = set()
        self.locals: list[hir.LocalArray] = []
        self.privates: list[hir.PrivateArray] = []
        self.hidden: set[str] = set()
        self.loop_depth = 0
        self.loops: list[_Loop] = []  # the enclosing loops, innermost last (labels)
        mods = next((c for c in fn.children if c.type == "function_modifiers"), None)
        self.unsafe = int(mods is not None and "unsafe" in self.src.node_text(mods))  # unsafe blocks around
        self.closed = _Loop(None)  # the loop loop_body left last
        self.tmp = 0
        self.fn_name = name or self.text(fn.child_by_field_name("name"))
        self.toolchain_dialect = False  # an axis-less thread_id(): the Rust toolchain's local id
        self.helpers = helpers or Helpers(self.fn_name)  # the helper instances of the kernel
        self.ret: str | None = None  # a helper's result type ("()": none, "?": a closure's, inferred)
        self.result_types: dict[str, str] = {}  # helper key -> its result's Rust type
        self.failed = False  # a helper it calls was refused (reported at its first call)

    # -- helpers
    def text(self, n: Node) -> str:
        return self.src.node_text(n)

    def error(self, n: Node, msg: str) -> _Bail:
        self.diags.append(Diagnostic(msg, self.src.span(n)))
        return _Bail()

    def span(self, n: Node):
        return self.src.span(n)

    def lookup(self, name: str) -> Binding | None:
        for sc in reversed(self.scopes):
            if name in sc:
                return sc[name]
        return None

    def fresh_name(self, base: str, t: ScalarType) -> str:
        name = base
        k = 1
        while name in self.vars or name in self.params or self.is_array_name(name):
            k += 1
            name = f"{base}${k}"
        self.vars[name] = t
        return name

    def is_array_name(self, name: str) -> bool:
        return (
            any(isinstance(sc.get(name), Array) for sc in self.scopes)
            or any(la.name == name for la in self.locals)
            or any(pa.name == name for pa in self.privates)
            # a closure's own array must not take the name of one it captures
            or any(isinstance(b, Private) and b.hir_name == name for sc in self.scopes for b in sc.values())
        )

    def temp(self, t: ScalarType) -> str:
        self.tmp += 1
        name = f"$t{self.tmp}"
        self.vars[name] = t
        return name

    def named_children(self, n: Node) -> list[Node]:
        return [c for c in n.named_children if c.type not in ("line_comment", "block_comment")]

    # -- entry
    def run(self) -> hir.Function:
        fn = self.fn
        params: list[hir.Param] = []
        prologue: list[hir.Stmt] = []
        for tp in fn.named_children:
            if tp.type == "type_parameters":
                raise self.error(tp, "kernels are not generic: write the element types (f32, u32, ...)")
        plist = fn.child_by_field_name("parameters")
        for p in self.named_children(plist):
            if p.type == "self_parameter":
                self.error(p, "kernels are free functions (no self)")
                continue
            if p.type != "parameter":
                self.error(p, "kernel parameters are `name: type`")
                continue
            pat, ty = p.child_by_field_name("pattern"), p.child_by_field_name("type")
            mutable = False
            if pat.type == "mut_pattern":
                mutable = True
                pat = pat.named_children[-1]
            if pat.type != "identifier":
                self.error(pat, "a kernel parameter is a plain name")
                continue
            name = self.text(pat)
            if name.endswith(HIDDEN_SUFFIXES):
                self.error(
                    pat, f"parameter names ending in {', '.join(HIDDEN_SUFFIXES)} are reserved (hidden arguments)"
                )
                continue
            try:
                kind = self.param_type(ty)
            except _Bail:
                continue
            if isinstance(kind, Array):
                kind.name = name
                self.scopes[0][name] = kind
                params.append(hir.Param(name, kind.type, self.span(p)))
                continue
            assert isinstance(kind, str)  # param_type gives a kernel no per-thread array parameter
            rt = kind
            t = RUST_TYPES[rt]
            self.params.add(name)
            params.append(hir.Param(name, t, self.span(p)))
            if mutable:  # `mut n: u32`: a variable initialised from the argument
                hn = self.fresh_name(name, t)
                prologue.append(hir.Assign(self.span(p), hn, hir.Var(t, self.span(p), name)))
                self.scopes[0][name] = Var(hn, rt, True, False, p)
            else:
                self.scopes[0][name] = Var(name, rt, False, False, p)
        ret = fn.child_by_field_name("return_type")
        if ret is not None and self.text(ret) != "()":
            self.error(ret, "kernels return nothing (write results to a `&mut [T]` parameter)")
        body = self.block(fn.child_by_field_name("body"), new_scope=True)
        if self.diags:
            raise CompileError(self.diags)
        for p in list(params):
            if p.name + "__len" in self.hidden:
                params.append(hir.Param(p.name + "__len", I32, p.span))
        variables = tuple((k, v) for k, v in self.vars.items() if k not in self.params and k not in self.hidden)
        return hir.Function(
            self.fn_name,
            tuple(params),
            tuple(prologue) + body,
            variables,
            tuple(self.locals),
            self.src.file,
            privates=tuple(self.privates),
        )

    def param_type(self, ty: Node, helper: bool = False) -> ParamKind:
        """A parameter's type: a slice, a raw pointer, a scalar; in a helper or closure also a
        per-thread array by reference (`&[f32; 8]`, `&mut [[f32; 8]; 8]`)."""
        if ty.type == "pointer_type":  # `*const f32`, `*mut f32`: a buffer read by `*p.add(i)`
            elem = ty.named_children[-1]
            rt = self.type_name(elem)
            if rt not in ELEMENT_TYPES and rt not in NARROW_BITS:
                raise self.error(elem, f"pointer elements are i32, u32, f32, f64, f16, u8, i8, u16 or i16, not {rt}")
            et = NARROW[rt] if rt in NARROW_BITS else ELEMENT_TYPES[rt]
            mutable = any(c.type == "mutable_specifier" for c in ty.children)
            return Array("", ArrayType(et, "global"), rt, mutable, pointer=True)
        if ty.type == "reference_type":
            inner = ty.child_by_field_name("type")
            mutable = any(c.type == "mutable_specifier" for c in ty.children)
            if inner.type == "array_type" and inner.child_by_field_name("length") is None:
                elem = inner.child_by_field_name("element")
                rt = self.type_name(elem)
                if rt in NARROW_BITS:
                    return Array("", ArrayType(NARROW[rt], "global"), rt, mutable)
                if rt not in ELEMENT_TYPES:
                    raise self.error(elem, f"slice elements are i32, u32, f32, f64, f16, u8, i8, u16 or i16, not {rt}")
                return Array("", ArrayType(ELEMENT_TYPES[rt], "global"), rt, mutable)
            if inner.type == "array_type" and helper:
                return self.array_param(ty, inner, mutable)
            if inner.type == "array_type":
                raise self.error(ty, "buffers are slices, `&[f32]` or `&mut [f32]` (their length comes at run time)")
            if inner.type == "type_identifier" and self.text(inner) in self.f.foreign:
                raise self.error(inner, self.f.foreign[self.text(inner)])
            if inner.type == "dynamic_type":
                raise self.error(
                    inner, "trait objects (dyn) are not supported in kernels: there are no virtual calls on the GPU"
                )
            raise self.error(ty, "a reference parameter is a slice, `&[f32]` or `&mut [f32]`")
        rt = self.type_name(ty)
        if rt == "bool":
            raise self.error(ty, "scalar parameters are i32, u32, usize, f32, f16 or f64")
        if rt in NARROW_BITS:
            raise self.error(ty, f"{rt} is an array element type only: pass an u32 or i32")
        return rt

    def array_param(self, ty: Node, inner: Node, mutable: bool) -> Private:
        """A helper's `&[f32; 8]` / `&mut [[f32; 8]; 8]`: the caller's per-thread array, by reference."""
        shape: list[int] = []
        t = inner
        while t.type == "array_type":
            length = t.child_by_field_name("length")
            if length is None:
                raise self.error(t, "a per-thread array's rows have a constant length: `[[f32; 8]; 8]`")
            shape.append(self.array_length(length))
            t = t.child_by_field_name("element")
        rt = self.type_name(t)
        if rt not in ELEMENT_TYPES or rt == "f16":
            raise self.error(t, f"per-thread arrays hold i32, u32, f32 or f64 elements, not {rt}")
        if len(shape) > 2:
            raise self.error(ty, builtins.dimensions("per-thread"))
        return Private("", rt, mutable, False, ty, tuple(shape), ref=True)

    def type_name(self, ty: Node) -> str:
        """The Rust scalar type a type node names (`wave::f16` and `f16` included)."""
        if ty.type in ("primitive_type", "type_identifier"):
            name = self.text(ty)
        elif ty.type == "scoped_type_identifier" and self.text(ty.child_by_field_name("path")) == "wave":
            name = self.text(ty.child_by_field_name("name"))
        elif ty.type == "dynamic_type" or (ty.type == "generic_type" and "dyn " in self.text(ty)):
            raise self.error(
                ty, "trait objects (dyn) are not supported in kernels: there are no virtual calls on the GPU"
            )
        elif ty.type == "generic_type" and self.text(ty.child_by_field_name("type")) in HEAP:
            raise self.error(
                ty,
                f"{self.text(ty)} needs heap allocation, which kernels do not have: use a slice parameter or local_array",
            )
        else:
            raise self.error(ty, f"unsupported type {self.text(ty)!r}: use i32, u32, usize, f32, f64, f16 or bool")
        if name in UNSUPPORTED_INTS:
            raise self.error(ty, f"{name} is not supported: kernel integers are 32-bit (i32, u32, usize)")
        if name in HEAP:
            raise self.error(ty, f"{name} needs heap allocation, which kernels do not have")
        if name in self.f.foreign:
            raise self.error(ty, self.f.foreign[name])
        if name not in RUST_TYPES:
            raise self.error(ty, f"unknown type {name!r}: use i32, u32, usize, f32, f64, f16 or bool")
        return name

    # -- statements
    def block(self, b: Node, new_scope: bool = True) -> tuple[hir.Stmt, ...]:
        if b.type != "block":
            return self.stmts_of([b])
        if new_scope:
            self.scopes.append({})
        try:
            return self.stmts_of(self.named_children(b))
        finally:
            if new_scope:
                self.scopes.pop()

    def stmts_of(self, nodes: list[Node]) -> tuple[hir.Stmt, ...]:
        out: list[hir.Stmt] = []
        for s in nodes:
            try:
                r = self.stmt(s)
            except _Bail:
                self.poison(s)
                continue
            out.extend(r)
        return tuple(out)

    def poison(self, s: Node) -> None:
        """A failed `let`: its names are defined anyway (as poisoned) so later uses say nothing more."""
        if s.type == "let_declaration":
            pat = s.child_by_field_name("pattern")
            names = [] if pat is None else [pat] if pat.type != "tuple_pattern" else self.named_children(pat)
            for p in names:  # `let (a, b) = ...` too: each name once
                if p.type == "mut_pattern":
                    p = p.named_children[-1]
                self.scopes[-1][self.text(p)] = Var("", "poison", True, False, s)

    def stmt(self, s: Node) -> list[hir.Stmt]:
        t = s.type
        sp = self.span(s)
        if t in ("empty_statement", "attribute_item", "inner_attribute_item", "use_declaration"):
            return []
        if t == "let_declaration":
            return self.let(s)
        if t == "const_item":
            self.f.const_item(s, self.scopes[-1], self)
            return []
        if t == "expression_statement":
            return self.stmt(s.named_children[0])
        if t in ("function_item", "closure_expression"):
            raise self.error(s, "nested functions and closures are not supported in kernels")
        if t in ("struct_item", "impl_item", "trait_item", "enum_item", "mod_item", "static_item", "union_item"):
            raise self.error(s, f"{t.replace('_item', '')} items are not supported inside kernels")
        if t == "macro_invocation":
            raise self.macro_error(s)
        if t == "assignment_expression":
            return self.assignment(s)
        if t == "compound_assignment_expr":
            return self.compound(s)
        if t == "if_expression":
            return [self.if_stmt(s)]
        if t == "while_expression":
            if s.child_by_field_name("condition").type == "let_condition":
                raise self.error(s, "`while let` is not supported: kernels have no Option values")
            cond = self.condition(s.child_by_field_name("condition"))
            return self.close_loop([hir.While(sp, cond, self.loop_body(s))], sp)
        if t == "loop_expression":
            return self.close_loop([hir.While(sp, hir.Const(BOOL, sp, True), self.loop_body(s))], sp)
        if t == "for_expression":
            return self.for_loop(s)
        if t == "match_expression":
            return self.match_stmt(s)
        if t in ("break_expression", "continue_expression"):
            kw = t.split("_")[0]
            if any(c.type != "label" for c in s.named_children):
                raise self.error(s, "break with a value is not supported (kernel loops are statements)")
            if not self.loop_depth:
                raise self.error(s, f"`{kw}` outside of a loop")
            label = next((self.text(c) for c in s.named_children if c.type == "label"), None)
            if label is None or self.loops[-1].label == label:
                return [hir.Break(sp) if kw == "break" else hir.Continue(sp)]
            target = next((lp for lp in reversed(self.loops) if lp.label == label), None)
            if target is None:
                raise self.error(s, f"use of undeclared label `{label}`")
            # leave the inner loops with a flag the loops around test after themselves (close_loop)
            flag = target.flag(kw, self)
            self.loops[-1].pending[(id(target), kw)] = None
            return [hir.Assign(sp, flag, hir.Const(BOOL, sp, True)), hir.Break(sp)]
        if t == "return_expression" and self.ret is not None:
            return self.helper_return(s)
        if t == "return_expression":
            if s.named_children:
                raise self.error(
                    s.named_children[0], "kernels return no value (write results to a `&mut [T]` parameter)"
                )
            return [hir.Return(sp)]
        if t == "block":
            return list(self.block(s))
        if t == "unsafe_block":
            self.unsafe += 1
            try:
                return list(self.block(s.named_children[-1]))
            finally:
                self.unsafe -= 1
        if t == "call_expression":
            v = self.expr(s)
            if isinstance(v.e, hir.Invoke):  # a helper's result may go unused, as in Rust
                return [hir.ExprStmt(sp, v.e)]
            if not isinstance(v.e, hir.Call):
                raise self.error(s, "this call computes a value that is not used")
            return [hir.ExprStmt(sp, v.e)]
        if t in ("line_comment", "block_comment"):
            return []
        if t == "label" or t.endswith("_item"):
            raise self.error(s, f"{t.replace('_', ' ')} is not supported in kernels")
        v = self.expr(s)  # diagnoses unsupported expressions
        raise self.error(s, f"this expression's value ({v.rt}) is not used: a kernel body is statements")

    def loop_body(self, s: Node) -> tuple[hir.Stmt, ...]:
        label = next((self.text(c) for c in s.named_children if c.type == "label"), None)
        self.loops.append(_Loop(label))
        self.loop_depth += 1
        try:
            return self.block(s.child_by_field_name("body"))
        finally:
            self.loop_depth -= 1
            self.closed = self.loops.pop()

    def close_loop(self, stmts: list[hir.Stmt], sp) -> list[hir.Stmt]:
        """A loop's statements with its labelled exits: its flags cleared before it, and after it
        the test of every flag a `break 'outer` / `continue 'outer` inside it set."""
        lp = self.closed
        out = [hir.Assign(sp, f, hir.Const(BOOL, sp, False)) for f in lp.flags.values()] + stmts
        outer = self.loops[-1] if self.loops else None
        for key, kw in sorted(lp.pending, key=lambda p: p[1]):
            assert outer is not None  # a label names an enclosing loop
            target = next(x for x in self.loops if id(x) == key)
            flag = hir.Var(BOOL, sp, target.flags[kw])
            if target is outer and kw == "continue":
                done: tuple[hir.Stmt, ...] = (
                    hir.Assign(sp, target.flags[kw], hir.Const(BOOL, sp, False)),
                    hir.Continue(sp),
                )
            else:
                done = (hir.Break(sp),)
                if target is not outer:
                    outer.pending[(key, kw)] = None
            out.append(hir.If(sp, flag, done, ()))
        return out

    def let(self, s: Node) -> list[hir.Stmt]:
        pat = s.child_by_field_name("pattern")
        mutable = False
        if pat.type == "mut_pattern":
            mutable = True
            pat = pat.named_children[-1]
        elif any(c.type == "mutable_specifier" for c in s.children):
            mutable = True
        if pat.type == "tuple_pattern":
            return self.tuple_let(s, pat)
        if self.text(pat) == "_" and s.child_by_field_name("value") is not None:  # `let _ = f(x);`: evaluated, dropped
            pre, v = self.let_value(s.child_by_field_name("value"), None)
            return [*pre, hir.ExprStmt(self.span(s), v.e)] if isinstance(v.e, hir.Invoke | hir.Call) else pre
        if pat.type != "identifier":
            raise self.error(pat, "`let` binds one name (no tuple or struct patterns)")
        if s.child_by_field_name("alternative") is not None:
            raise self.error(s, "`let ... else` is not supported")
        name = self.text(pat)
        ty = s.child_by_field_name("type")
        value = s.child_by_field_name("value")
        if value is not None and value.type == "closure_expression":
            if ty is not None:
                raise self.error(ty, "leave the type of a closure to rustc: let f = |x: f32| x * 2.0;")
            self.scopes[-1][name] = Closure(value, [dict(sc) for sc in self.scopes])
            return []
        if value is not None and self.is_local_array(value):
            if ty is not None:
                raise self.error(ty, "leave the type of a local array to local_array::<T, N>()")
            self.local_array(name, value)
            return []
        if (ty is not None and ty.type == "array_type") or (value is not None and value.type == "array_expression"):
            return self.private_array(s, name, mutable, ty, value)
        declared = self.type_name(ty) if ty is not None else None
        if value is None:
            if declared is None:
                raise self.error(s, f"give `{name}` a type or a value: let {name}: u32;")
            hn = self.fresh_name(name, RUST_TYPES[declared])
            self.scopes[-1][name] = Var(hn, declared, mutable, False, s)
            return []
        hint = declared or self.inferred.get(s.id)
        pre, v = self.let_value(value, hint, natural=hint is None and _use_fixes_type(s, name))
        stmt, var = self.let_bind(s, name, mutable, declared, v, value)
        # the new name is visible only after its initialiser (`let i = i as i32;`)
        self.scopes[-1][name] = var
        return [*pre, stmt]

    def let_value(self, value: Node, hint: str | None, natural: bool = False) -> tuple[list[hir.Stmt], V]:
        """A `let`'s value: an expression, or a block (`{ let a = ..; a * 2.0 }`, `unsafe { .. }`)
        whose statements run first and whose tail expression is the value (`natural`: a sum or
        product without a type takes its values' type, where the later use fixes it)."""
        if value.type not in ("block", "unsafe_block"):
            summed = self.iter_reduce(value, hint, natural)
            return summed if summed is not None else ([], self.expr(value, hint))
        b = value if value.type == "block" else value.named_children[-1]
        kids = self.named_children(b)
        self.scopes.append({})
        unsafe = value.type == "unsafe_block"
        self.unsafe += unsafe
        try:
            last = kids[-1] if kids else b
            if not kids or last.type in _STATEMENTS or last.type in _TAIL_STATEMENTS:
                raise self.error(last, "this block has no value: its last line is a statement (drop its `;`)")
            pre = list(self.stmts_of(kids[:-1]))
            return pre, self.expr(last, hint)
        finally:
            self.scopes.pop()
            self.unsafe -= unsafe

    def tuple_let(self, s: Node, pat: Node) -> list[hir.Stmt]:
        """`let (q, r) = (a / b, a % b);`: every value computed before any name is bound."""
        value = s.child_by_field_name("value")
        ty = s.child_by_field_name("type")
        pats = [c for c in pat.children if c.type not in ("(", ")", ",", "line_comment", "block_comment")]
        if value is None or value.type != "tuple_expression" or len(self.named_children(value)) != len(pats):
            raise self.error(value or s, f"a tuple `let` takes a tuple of {len(pats)} values: let (a, b) = (x, y);")
        types = self.named_children(ty) if ty is not None and ty.type == "tuple_type" else [None] * len(pats)
        if ty is not None and len(types) != len(pats):
            raise self.error(ty, f"mismatched types: expected a tuple of {len(pats)} types")
        out: list[hir.Stmt] = []
        bound: list[tuple[str, Var]] = []
        for p, vn, tn in zip(pats, self.named_children(value), types):
            mutable = p.type == "mut_pattern"
            ident = p.named_children[-1] if mutable else p
            if ident.type not in ("identifier", "_"):
                raise self.error(p, "a tuple `let` binds names (no nested patterns)")
            declared = self.type_name(tn) if tn is not None else None
            hint = declared or self.inferred.get(ident.id)
            pre, v = self.let_value(vn, hint)
            out += pre
            if ident.type == "_":
                continue
            stmt, var = self.let_bind(ident, self.text(ident), mutable, declared, v, vn)
            out.append(stmt)
            bound.append((self.text(ident), var))
        for name, var in bound:
            self.scopes[-1][name] = var
        return out

    def let_bind(
        self, s: Node, name: str, mutable: bool, declared: str | None, v: V, value: Node
    ) -> tuple[hir.Stmt, Var]:
        """The assignment of a `let`'s value to its new variable (inferred where rustc infers)."""
        sp = self.span(s)
        if v.rt == "void":
            raise self.error(value, NO_VALUE)
        flexible = False
        if declared is not None:
            v = self.want(v, declared, value)
        elif s.id in self.inferred:
            v = self.want(v, self.inferred[s.id], value)
        elif v.lit:
            v = self.literal_default(v, value)
            flexible = True
        elif v.flex is not None:  # built of literals and inferable variables: inferable itself
            flexible = True
        rt = declared or v.rt
        hn = self.fresh_name(name, RUST_TYPES[rt])
        return hir.Assign(sp, hn, v.e), Var(hn, rt, mutable, flexible, s)

    def literal_default(self, v: V, n: Node) -> V:
        """An unsuffixed literal with nothing to say its type: i32 or f64, as in Rust."""
        return self.retype(v, "f64" if v.e.type.is_float else "i32", n)

    def assignable(self, left: Node) -> Var:
        if left.type != "identifier":
            raise self.error(left, "only variables and slice elements can be assigned")
        name = self.text(left)
        var = self.lookup(name)
        if var is None:
            raise self.error(left, f"cannot find value `{name}` in this scope")
        if isinstance(var, Array):
            raise self.error(left, f"`{name}` is a slice: assign its elements, {name}[i] = ...")
        if isinstance(var, Private):  # rustc: mismatched types / `+=` cannot be applied to `[f32; N]`
            raise self.error(left, f"`{name}` is an array: assign its elements, {name}[i] = ...")
        if isinstance(var, Closure):
            raise self.error(left, f"`{name}` is a closure: closures are inlined where they are called")
        if var.rt == "poison":
            raise _Bail()
        if not var.mutable:
            what = "parameter" if var.hir_name in self.params else "variable"
            raise self.error(
                left,
                f"cannot assign twice to immutable {what} `{name}`: declare it `{'mut ' if what == 'parameter' else 'let mut '}{name}`",
            )
        return var

    def assignment(self, s: Node) -> list[hir.Stmt]:
        sp = self.span(s)
        left, right = s.child_by_field_name("left"), s.child_by_field_name("right")
        if left.type == "index_expression" or self.is_deref(left):
            arr, idx = (
                self.index(left, write=True) if left.type == "index_expression" else self.pointer_element(left, True)
            )
            v = self.expr(right, arr.rt)
            return [self.store(arr, idx, v, right, sp)]
        if left.type in ("field_expression", "unary_expression"):
            raise self.error(left, "only variables and slice elements can be assigned")
        var = self.assignable(left)
        v = self.expr(right, var.rt)
        v = self.want(v, var.rt, right, target=var)
        return [hir.Assign(sp, var.hir_name, v.e)]

    def compound(self, s: Node) -> list[hir.Stmt]:
        sp = self.span(s)
        left, right = s.child_by_field_name("left"), s.child_by_field_name("right")
        opnode = s.child_by_field_name("operator")
        op = self.text(opnode)[:-1]
        if left.type == "index_expression" or self.is_deref(left):
            arr, idx = (
                self.index(left, write=True) if left.type == "index_expression" else self.pointer_element(left, True)
            )
            pre: list[hir.Stmt] = []
            kept = []
            for i in idx:
                if not isinstance(i, hir.Const | hir.Var):
                    tmp = self.temp(i.type)
                    pre.append(hir.Assign(sp, tmp, i))
                    i = hir.Var(i.type, sp, tmp)
                kept.append(i)
            idx = tuple(kept)
            v = self.binary(op, self.element(arr, idx, sp), self.expr(right, arr.rt), s, left, right)
            return [*pre, self.store(arr, idx, v, right, sp)]
        var = self.assignable(left)
        cur = V(hir.Var(RUST_TYPES[var.rt], sp, var.hir_name), var.rt, flex=self.flex_of(var))
        v = self.binary(op, cur, self.expr(right, var.rt), s, left, right)
        v = self.want(v, var.rt, s, target=var)
        return [hir.Assign(sp, var.hir_name, v.e)]

    def if_stmt(self, s: Node) -> hir.Stmt:
        cond_node = s.child_by_field_name("condition")
        if cond_node.type == "let_condition":
            return self.if_let(s, cond_node)
        cond = self.condition(cond_node)
        then = self.block(s.child_by_field_name("consequence"))
        other: tuple[hir.Stmt, ...] = ()
        alt = s.child_by_field_name("alternative")
        if alt is not None:
            inner = alt.named_children[-1]
            other = (self.if_stmt(inner),) if inner.type == "if_expression" else self.block(inner)
        return hir.If(self.span(s), cond, then, other)

    def if_let(self, s: Node, c: Node) -> hir.Stmt:
        """`if let Some(v) = x.get(i) { .. } else { .. }`: the element where `i < x.len()`, read in
        the branch only (v is `&T`: `*v`, or `Some(&v)` for the value)."""
        pat, value = c.child_by_field_name("pattern"), c.child_by_field_name("value")
        sp = self.span(s)
        kids = self.named_children(pat) if pat.type == "tuple_struct_pattern" else []
        ok = len(kids) == 2 and self.text(kids[0]) == "Some"
        inner = kids[1] if ok else pat
        ref = inner.type != "reference_pattern"
        if not ref:
            inner = inner.named_children[-1]
        fe = value.child_by_field_name("function") if value.type == "call_expression" else None
        if not ok or inner.type != "identifier" or fe is None or fe.type != "field_expression":
            raise self.error(c, "`if let` takes `Some(v) = x.get(i)` (kernels have no other Option or enum values)")
        recv, method = fe.child_by_field_name("value"), self.text(fe.child_by_field_name("field"))
        args = self.args(value)
        arr = self.lookup(self.text(recv)) if recv.type == "identifier" else None
        self.private_here(arr, recv)
        if method != "get" or len(args) != 1 or not isinstance(arr, Array | Private):
            raise self.error(value, "`if let Some(v) = x.get(i)` reads an element of a slice or array `x`")
        if isinstance(arr, Private) and len(arr.shape) != 1:
            raise self.error(value, "get(i) of a two-dimensional array gives a row, which is no value: index t[i][j]")
        idx = self.expr(args[0], "usize")
        if idx.lit:
            idx = self.retype(idx, "usize", args[0])
        if idx.rt != "usize":
            raise self.error(args[0], f"get takes a usize, not {idx.rt}: convert it, `{self.text(args[0])} as usize`")
        pre: list[hir.Stmt] = []
        i = idx.e
        if not isinstance(i, hir.Const | hir.Var):
            tmp = self.temp(i.type)
            pre.append(hir.Assign(sp, tmp, i))
            i = hir.Var(i.type, sp, tmp)
        length = self.method(value, recv, "len", [], None).e
        cond = hir.Compare(BOOL, sp, Cmp.LT, i, length)
        elem = self.element(arr, (i,), sp)
        self.scopes.append({})
        try:
            hn = self.fresh_name(self.text(inner), elem.e.type)
            self.scopes[-1][self.text(inner)] = Var(hn, elem.rt, False, False, inner, ref=ref)
            then = (hir.Assign(sp, hn, elem.e), *self.block(s.child_by_field_name("consequence")))
        finally:
            self.scopes.pop()
        other: tuple[hir.Stmt, ...] = ()
        alt = s.child_by_field_name("alternative")
        if alt is not None:
            nxt = alt.named_children[-1]
            other = (self.if_stmt(nxt),) if nxt.type == "if_expression" else self.block(nxt)
        if pre:
            return hir.If(sp, hir.Const(BOOL, sp, True), (*pre, hir.If(sp, cond, then, other)), ())
        return hir.If(sp, cond, then, other)

    def method_parts(self, n: Node) -> tuple[Node, str, list[Node]] | None:
        """`recv.method(args)` (also `recv.method::<T>(args)`): its parts, or None."""
        if n.type != "call_expression":
            return None
        f = n.child_by_field_name("function")
        if f.type == "generic_function":
            f = f.child_by_field_name("function")
        if f.type != "field_expression":
            return None
        return f.child_by_field_name("value"), self.text(f.child_by_field_name("field")), self.args(n)

    def slice_of(self, n: Node, sp) -> tuple[Array | Private, hir.Expr, hir.Expr, list[hir.Stmt]] | None:
        """The elements an iterator walks: `x.iter()`, `&x`, `x[a..b].iter()`, `&x[a..b]` (also
        `a..`, `..b`) of a slice or one-dimensional array: (array, start, stop, statements that
        compute them once); None when `n` is none of these."""
        parts = self.method_parts(n)
        if parts is not None and parts[1] in ("iter", "into_iter") and not parts[2]:
            n = parts[0]
        elif n.type == "reference_expression":
            n = n.named_children[-1]
        elif not (n.type == "identifier" and isinstance(self.lookup(self.text(n)), Array)):  # `for v in x`
            return None
        rng = None
        if n.type == "index_expression":
            n, rng = self.named_children(n)
            if rng.type != "range_expression":
                return None
        arr = self.lookup(self.text(n)) if n.type == "identifier" else None
        if isinstance(arr, Var) and arr.rt == "poison":
            raise _Bail()
        self.private_here(arr, n)
        if not isinstance(arr, Array | Private) or (isinstance(arr, Private) and len(arr.shape) != 1):
            raise self.error(n, "iterators walk a slice or a one-dimensional array (`x.iter()`, `&x[a..b]`)")
        length = self.method(n, n, "len", [], None).e
        lo: hir.Expr = hir.Const(U32, sp, 0)
        hi = length
        if rng is not None:
            kids = self.named_children(rng)
            if "..=" in [c.type for c in rng.children]:
                raise self.error(rng, "sub-slices take `a..b`, `a..` or `..b`")
            ends = [None, None]
            if len(kids) == 2:
                ends = kids
            elif len(kids) == 1:
                ends = [kids[0], None] if rng.children[0].type != ".." else [None, kids[0]]
            vals = []
            for e, dflt in zip(ends, (lo, hi)):
                if e is None:
                    vals.append(dflt)
                    continue
                v = self.expr(e, "usize")
                if v.lit:
                    v = self.retype(v, "usize", e)
                if v.rt != "usize":
                    raise self.error(
                        e, f"slices are indexed by usize, not {v.rt}: convert it, `{self.text(e)} as usize`"
                    )
                vals.append(v.e)
            lo, hi = vals
        pre: list[hir.Stmt] = []
        kept = []
        for e in (lo, hi):
            if not isinstance(e, hir.Const | hir.Var):
                tmp = self.temp(e.type)
                pre.append(hir.Assign(sp, tmp, e))
                e = hir.Var(e.type, sp, tmp)
            kept.append(e)
        return arr, kept[0], kept[1], pre

    def range_walk(self, n: Node, sp) -> _Walk | None:
        """`(a..b)` / `(a..=b)` as the source of a sum or product: the counter's values, of the
        bounds' type (unsuffixed literals: the type their use gives, as rustc infers it)."""
        while n.type == "parenthesized_expression":
            n = n.named_children[0]
        if n.type != "range_expression" or len(self.named_children(n)) != 2:
            return None
        a, stop, flexible = self.range_bounds(n, self.inferred.get(n.id), sp, "a range", "b + 1 wraps")
        return _Walk([], a.e, stop, [], True, Var("", a.rt, False, flexible, n))

    def range_bounds(self, n: Node, hint: str | None, sp, what: str, wraps: str) -> tuple[V, hir.Expr, bool]:
        """The range `a..b` / `a..=b` `n`: its start (typed as rustc infers unsuffixed literals from
        `hint`), its exclusive stop (b + 1 for `..=`, refused where that wraps: `wraps` says what
        that would do) and whether its type is still open to inference (both bounds literals)."""
        a_node, b_node = self.named_children(n)
        a = self.expr(a_node, hint)
        b = self.expr(b_node, a.rt if not a.lit else hint)
        if a.lit and not b.lit:
            a = self.expr(a_node, b.rt)
        flexible = False
        if a.lit and b.lit:
            a, b = self.literal_default(a, a_node), self.literal_default(b, b_node)
            flexible = hint is None
        a, b = self.unify(a, b, n, a_node, b_node)
        if a.rt not in INTS or a.rt in NARROW_BITS:
            raise self.error(n, f"{what} counts with i32, u32 or usize, not {a.rt}")
        stop = b.e
        if "..=" in [c.type for c in n.children]:
            top = (2**31 - 1) if a.rt == "i32" else (2**32 - 1)
            if isinstance(stop, hir.Const) and int(stop.value) == top:  # b + 1 would wrap to the minimum
                raise self.error(b_node, f"`..={self.text(b_node)}` ends at the largest {a.rt}: {wraps}")
            stop = hir.Binary(stop.type, sp, BinOp.ADD, stop, hir.Const(stop.type, sp, 1))
        return a, stop, flexible

    def walk_of(self, n: Node, sp) -> _Walk | None:
        """The elements an iterator chain walks: a slice or array (`slice_of`), `.zip(other)` of two
        (as many trips as the shorter), `.copied()` / `.cloned()` (values instead of references);
        None when `n` is none of these."""
        parts = self.method_parts(n)
        if parts is not None and parts[1] in ("copied", "cloned") and not parts[2]:
            w = self.walk_of(parts[0], sp)
            if w is not None:
                w.by_value = True
            return w
        if parts is not None and parts[1] == "zip" and len(parts[2]) == 1:
            w = self.walk_of(parts[0], sp)
            if w is None:
                return None
            if len(w.arrays) != 1 or w.by_value:
                raise self.error(n, "`.zip()` pairs the elements of two slices or arrays: `x.iter().zip(y.iter())`")
            other = self.slice_of(parts[2][0], sp)
            if other is None:
                raise self.error(parts[2][0], "`.zip()` takes a slice or an array: `y.iter()`, `&y`, `&y[a..b]`")
            arr, lo, hi, pre = other
            m = self.temp(U32)
            pre = [*pre, hir.Assign(sp, m, self.trips(lo, hi, sp))]
            count, first = hir.Var(U32, sp, m), self.trips(w.lo, w.hi, sp)
            shorter = hir.IfExpr(U32, sp, hir.Compare(BOOL, sp, hir.CompareOp.LT, count, first), count, first)
            k = self.temp(U32)
            pre.append(hir.Assign(sp, k, shorter))
            pairs: list[tuple[Array | Private, hir.Expr | None]] = [(w.arrays[0][0], w.lo), (arr, lo)]  # from 0
            return _Walk(pairs, hir.Const(U32, sp, 0), hir.Var(U32, sp, k), [*w.pre, *pre])
        got = self.slice_of(n, sp)
        if got is None:
            return None
        arr, lo, hi, pre = got
        return _Walk([(arr, None)], lo, hi, pre)

    def trips(self, lo: hir.Expr, hi: hir.Expr, sp) -> hir.Expr:
        """The elements of `a..b` (`hi - lo`; none when the range is empty: Rust panics there)."""
        if isinstance(lo, hir.Const) and lo.value == 0:
            return hi
        empty = hir.Compare(BOOL, sp, hir.CompareOp.LT, hi, lo)
        return hir.IfExpr(U32, sp, empty, hir.Const(U32, sp, 0), hir.Binary(U32, sp, BinOp.SUB, hi, lo))

    def walk_elements(self, w: _Walk, j: str, sp) -> list[V]:
        """The elements of trip `j` (the loop's counter) of each array of `w` (of a range: `j`)."""
        if w.counter is not None:
            return [V(hir.Var(RUST_TYPES[w.counter.rt], sp, j), w.counter.rt)]
        out = []
        for arr, lo in w.arrays:
            at: hir.Expr = hir.Var(U32, sp, j)
            if lo is not None and not (isinstance(lo, hir.Const) and lo.value == 0):
                at = hir.Binary(U32, sp, BinOp.ADD, lo, at)
            out.append(self.element(arr, (at,), sp))
        return out

    def bind_elements(
        self, pat: Node, elems: list[V], by_value: bool, sp, counter: Var | None = None
    ) -> list[hir.Stmt]:
        """Bind a loop's or closure's pattern to the elements of one trip, in the current scope:
        `v` (a `&T`, or the value after `.copied()`), `&v` (the value), `(a, b)` / `(&a, &b)` of a
        zip."""
        if pat.type == "parameter":  # a closure's `|v: &f32|`: the type is the element's
            pat = pat.child_by_field_name("pattern")
        names = self.named_children(pat) if pat.type == "tuple_pattern" else [pat]
        if len(names) != len(elems):
            what = "a pair `(a, b)`" if len(elems) == 2 else "one element, `v` or `&v`"
            raise self.error(pat, f"each trip gives {what}")
        out: list[hir.Stmt] = []
        for name, elem in zip(names, elems):
            ref = name.type != "reference_pattern" and not by_value
            if name.type == "reference_pattern":
                if by_value:
                    raise self.error(name, "mismatched types: the elements are values here, not references: bind `v`")
                name = name.named_children[-1]
            if name.type != "identifier":
                raise self.error(name, "the elements bind names: `v`, `&v`, `(a, b)`")
            hv = self.fresh_name(self.text(name), elem.e.type)
            flexible = counter is not None and counter.flexible  # its type: the range's, inferred from this use
            node = counter.node if counter is not None else name
            self.scopes[-1][self.text(name)] = Var(hv, elem.rt, False, flexible, node, ref=ref)
            out.append(hir.Assign(sp, hv, elem.e))
        return out

    def iter_loop(self, s: Node, it: Node, enumerate_: bool) -> list[hir.Stmt] | None:
        """`for v in x.iter()`, `for (i, v) in x[a..b].iter().enumerate()`, `for &v in &x`,
        `for (a, b) in x.iter().zip(y.iter())`: a counted loop over the elements (v is `&T`: `*v`,
        or the pattern `&v` for the value)."""
        sp = self.span(s)
        w = self.walk_of(it, sp)
        if w is None:
            return None
        pat = s.child_by_field_name("pattern")
        vpat = pat
        if enumerate_:
            names = self.named_children(pat) if pat.type == "tuple_pattern" else []
            if len(names) != 2 or names[0].type != "identifier":
                raise self.error(pat, "`.enumerate()` gives `(i, v)` pairs")
            vpat = names[1]
        j = self.temp(U32)
        self.scopes.append({})
        try:
            head = self.bind_elements(vpat, self.walk_elements(w, j, sp), w.by_value, sp)
            if enumerate_:
                hi_name = self.fresh_name(self.text(names[0]), U32)
                self.scopes[-1][self.text(names[0])] = Var(hi_name, "usize", False, False, names[0])
                at: hir.Expr = hir.Var(U32, sp, j)
                if not (isinstance(w.lo, hir.Const) and w.lo.value == 0):
                    at = hir.Binary(U32, sp, BinOp.SUB, at, w.lo)
                head.insert(0, hir.Assign(sp, hi_name, at))
            body = self.loop_body(s)
        finally:
            self.scopes.pop()
        return self.close_loop([*w.pre, hir.For(sp, j, w.lo, w.hi, hir.Const(U32, sp, 1), (*head, *body))], sp)

    def iter_reduce(self, value: Node, hint: str | None, natural: bool = False) -> tuple[list[hir.Stmt], V] | None:
        """`x[a..b].iter().sum::<f32>()`, `.product()`, also after `.map(|v| ..)` and `.zip(..)`:
        a loop folding the elements (or the closure's values) in order, from Rust's neutral element
        (a float sum starts from -0.0, as std's `Sum` does: the empty sum is -0.0). The type is the
        turbofish's or the `hint` (the type rustc infers from a `let` annotation or the place the
        value goes); the statements compute it, the value is the accumulator."""
        parts = self.method_parts(value)
        if parts is None or parts[1] not in ("sum", "product") or parts[2]:
            return None
        sp = self.span(value)
        recv, closure = parts[0], None
        mp = self.method_parts(recv)
        if mp is not None and mp[1] == "map" and len(mp[2]) == 1:
            recv, closure = mp[0], mp[2][0]
            if closure.type != "closure_expression":
                raise self.error(closure, "`.map()` takes a closure written there: `.map(|v| v * 2.0)`")
        w = self.walk_of(recv, sp) or self.range_walk(recv, sp)
        if w is None:
            return None
        f = value.child_by_field_name("function")
        targs = f.child_by_field_name("type_arguments") if f.type == "generic_function" else None
        want = self.type_name(self.named_children(targs)[0]) if targs is not None else hint
        verb = parts[1]
        if want is None and not natural:
            raise self.error(value, f"type annotations needed: `let s: f32 = ...{verb}();` or `.{verb}::<f32>()`")
        if want is not None and want not in ("i32", "u32", "f32", "f64", "usize"):
            raise self.error(value, f"a {verb} here is of i32, u32, usize, f32 or f64 values, not {want}")
        j = self.temp(RUST_TYPES[w.counter.rt] if w.counter is not None else U32)
        self.scopes.append({})
        try:
            elems = self.walk_elements(w, j, sp)
            if closure is None:
                if len(elems) != 1:
                    raise self.error(value, f"a {verb} of pairs: `.map(|(a, b)| a * b)` first")
                pre: list[hir.Stmt] = []
                v, vnode = elems[0], recv
            else:
                params = [p for p in self.named_children(closure.child_by_field_name("parameters"))]
                if len(params) != 1:
                    raise self.error(closure, "the closure of `.map()` takes one parameter")
                pre = self.bind_elements(params[0], elems, w.by_value, sp, w.counter)
                body = closure.child_by_field_name("body")
                more, v = self.let_value(body, want)
                pre += more
                vnode = body
        finally:
            self.scopes.pop()
        if v.lit:
            v = self.retype(v, want, vnode) if want is not None else self.literal_default(v, vnode)
        if want is None:  # `let s = x.iter().sum(); o[i] = s;`: the later use fixes it to the values' type
            want = v.rt
        if want not in ("i32", "u32", "f32", "f64", "usize"):
            raise self.error(value, f"a {verb} here is of i32, u32, usize, f32 or f64 values, not {want}")
        t = RUST_TYPES[want]
        acc = self.temp(t)
        if v.rt != want:
            shown = f"&{v.rt}" if closure is None and not w.by_value else v.rt
            raise self.error(
                value, f"a {verb} of {shown} values is a {v.rt} ({verb.capitalize()}<{shown}>), not {want}"
            )
        op = BinOp.ADD if verb == "sum" else BinOp.MUL
        start = hir.Const(t, sp, (-0.0 if verb == "sum" else 1.0) if t.is_float else (0 if verb == "sum" else 1))
        step = hir.Assign(sp, acc, hir.Binary(t, sp, op, hir.Var(t, sp, acc), v.e))
        loop = hir.For(sp, j, w.lo, w.hi, hir.Const(w.lo.type, sp, 1), (*pre, step))
        return [*w.pre, hir.Assign(sp, acc, start), loop], V(hir.Var(t, sp, acc), want)

    def as_value(self, n: Node, name: str, build: Callable[[], tuple[list[hir.Stmt], V]]) -> V:
        """Statements and the value they compute, used where an expression stands (`o[i] = 2.0 *
        x.iter().sum::<f32>();`): a helper of no parameters inlined there by compiler/inline.py,
        which keeps the order of evaluation around it; its temporaries are its own."""
        sp = self.span(n)
        before = set(self.vars)
        stmts, v = build()
        own = tuple((k, t) for k, t in self.vars.items() if k not in before)
        for k, _ in own:
            del self.vars[k]
        key = f"${name}@{sp.line}:{sp.col}#{len(self.helpers.instances)}"
        h = hir.Helper(key, f"${name}", (), v.e.type, (*stmts, hir.Return(sp, v.e)), own, sp)
        self.helpers.instance(key, h.name, sp, lambda: h)
        return V(hir.Invoke(v.e.type, sp, key, ()), v.rt)

    def for_loop(self, s: Node) -> list[hir.Stmt]:
        sp = self.span(s)
        pat = s.child_by_field_name("pattern")
        it = s.child_by_field_name("value")
        parts = self.method_parts(it)
        enumerate_ = parts is not None and parts[1] == "enumerate" and not parts[2]
        stmts = self.iter_loop(s, parts[0] if parts is not None and enumerate_ else it, enumerate_)
        if stmts is not None:
            return stmts
        if pat.type != "identifier":
            raise self.error(pat, "the loop variable is one name")
        it = s.child_by_field_name("value")
        step_node = None
        rev = False
        unroll = hir.Unroll.NO
        if it.type == "call_expression" and self.builtin_path(it.child_by_field_name("function")) == UNROLL:
            args = self.named_children(it.child_by_field_name("arguments"))
            if len(args) != 1:
                raise self.error(it, "unroll(a..b) takes one range")
            unroll = hir.Unroll.FULL  # every trip a copy of the body, the counter a constant in each
            it = args[0]
            while it.type == "parenthesized_expression":
                it = it.named_children[0]
        if it.type == "call_expression" and it.child_by_field_name("function").type == "field_expression":
            fe = it.child_by_field_name("function")
            method = self.text(fe.child_by_field_name("field"))
            args = self.named_children(it.child_by_field_name("arguments"))
            if not ((method == "step_by" and len(args) == 1) or (method == "rev" and not args)):
                raise self.error(it, "kernels loop over ranges: `for i in a..b`, `(a..b).step_by(s)` or `(a..b).rev()`")
            step_node = args[0] if args else None
            rev = method == "rev"
            it = fe.child_by_field_name("value")
            while it.type == "parenthesized_expression":
                it = it.named_children[0]
        if it.type != "range_expression" or len(self.named_children(it)) != 2:
            raise self.error(it, "kernels loop over ranges: `for i in a..b` or `for i in (a..b).step_by(s)`")
        a, stop, flexible = self.range_bounds(
            it,
            self.inferred.get(s.id),
            sp,
            "a range loop",
            "the loop's bound b + 1 wraps and it would run no iteration; count with a `while` loop (test, "
            "then `if i == b { break; } i += 1`)",
        )
        rt = a.rt
        step: hir.Expr = hir.Const(a.e.type, sp, 1)
        if step_node is not None:
            st = self.want(self.expr(step_node, "usize"), "usize", step_node)  # Iterator::step_by(usize)
            if isinstance(st.e, hir.Const) and st.e.value == 0:
                raise self.error(step_node, "step_by(0) panics: the step must be positive")
            step = st.e if st.e.type == a.e.type else hir.Cast(a.e.type, sp, st.e)
        name = self.text(pat)
        pre: list[hir.Stmt] = []
        start = a.e
        if rev:  # (a..b).rev(): a hidden counter j runs a..b, and i = (b - 1) - (j - a)
            ends = []
            for e in (start, stop):
                if not isinstance(e, hir.Const | hir.Var):
                    tmp = self.temp(e.type)
                    pre.append(hir.Assign(sp, tmp, e))
                    e = hir.Var(e.type, sp, tmp)
                ends.append(e)
            start, stop = ends
        self.scopes.append({})
        hn = self.fresh_name(name, a.e.type)
        self.scopes[-1][name] = Var(hn, rt, False, flexible, s)
        try:
            body = self.loop_body(s)
        finally:
            self.scopes.pop()
        if rev:
            t = start.type
            j = self.temp(t)
            last = hir.Binary(t, sp, BinOp.SUB, stop, hir.Const(t, sp, 1))
            i = hir.Binary(t, sp, BinOp.SUB, last, hir.Binary(t, sp, BinOp.SUB, hir.Var(t, sp, j), start))
            return self.close_loop(
                [*pre, hir.For(sp, j, start, stop, step, (hir.Assign(sp, hn, i), *body), unroll)], sp
            )
        return self.close_loop([hir.For(sp, hn, start, stop, step, body, unroll)], sp)

    # -- match: a chain of conditional branches
    def match_stmt(self, s: Node) -> list[hir.Stmt]:
        sp = self.span(s)
        scrut, arms = self.match_parts(s)
        pre: list[hir.Stmt] = []
        if not isinstance(scrut.e, hir.Var | hir.Const):
            tmp = self.temp(scrut.e.type)
            pre.append(hir.Assign(sp, tmp, scrut.e))
            scrut = V(hir.Var(scrut.e.type, sp, tmp), scrut.rt)
        chain: tuple[hir.Stmt, ...] = ()
        for arm, cond in reversed(self.arm_conditions(scrut, arms)):
            value = arm.child_by_field_name("value")
            self.scopes.append({})
            try:
                body = self.block(value) if value.type == "block" else tuple(self.stmt(value))
            finally:
                self.scopes.pop()
            chain = body if cond is None else (hir.If(self.span(arm), cond, body, chain),)
        return pre + list(chain)

    def match_parts(self, s: Node) -> tuple[V, list[Node]]:
        scrut = self.expr(s.child_by_field_name("value"))
        if scrut.rt not in (*INTS, "bool"):
            raise self.error(s.child_by_field_name("value"), f"match works on integers and bools here, not {scrut.rt}")
        if scrut.lit:
            scrut = self.literal_default(scrut, s)
        arms = [a for a in self.named_children(s.child_by_field_name("body")) if a.type == "match_arm"]
        return scrut, arms

    def arm_conditions(self, scrut: V, arms: list[Node]) -> list[tuple[Node, hir.Expr | None]]:
        out: list[tuple[Node, hir.Expr | None]] = []
        covered = False
        seen_bools: set[bool] = set()
        for arm in arms:
            mp = arm.child_by_field_name("pattern")
            if covered:
                raise self.error(mp, "unreachable pattern: an earlier arm matches every value")
            if mp.child_by_field_name("condition") is not None:
                raise self.error(mp, "match guards (`if` in an arm) are not supported: use if/else")
            pats = self.named_children(mp)
            if not pats:  # `_`
                out.append((arm, None))
                covered = True
                continue
            alts = self.named_children(pats[0]) if pats[0].type == "or_pattern" else pats
            cond: hir.Expr | None = None
            for p in self.flatten_or(alts):
                c = self.pattern_condition(scrut, p)
                if scrut.rt == "bool" and p.type == "boolean_literal":
                    seen_bools.add(self.text(p) == "true")
                cond = c if cond is None else hir.Logical(BOOL, self.span(p), hir.LogicalOp.OR, cond, c)
            out.append((arm, cond))
            if seen_bools == {True, False}:
                covered = True
        if not covered:
            raise self.error(arms[-1] if arms else self.fn, "non-exhaustive patterns: add a last arm `_ => {}`")
        return out

    def flatten_or(self, pats: list[Node]) -> list[Node]:
        out = []
        for p in pats:
            if p.type == "or_pattern":
                out.extend(self.flatten_or(self.named_children(p)))
            else:
                out.append(p)
        return out

    def pattern_condition(self, scrut: V, p: Node) -> hir.Expr:
        sp = self.span(p)
        if p.type == "range_pattern":
            lo, hi = p.child_by_field_name("left"), p.child_by_field_name("right")
            inclusive = "..=" in [c.type for c in p.children] or "..." in [c.type for c in p.children]
            conds = []
            if lo is not None:
                conds.append(hir.Compare(BOOL, sp, Cmp.GE, scrut.e, self.pattern_value(scrut, lo)))
            if hi is not None:
                conds.append(
                    hir.Compare(BOOL, sp, Cmp.LE if inclusive else Cmp.LT, scrut.e, self.pattern_value(scrut, hi))
                )
            if not conds:
                raise self.error(p, "an empty range pattern")
            return conds[0] if len(conds) == 1 else hir.Logical(BOOL, sp, hir.LogicalOp.AND, conds[0], conds[1])
        if p.type in ("identifier",) and self.f.consts_lookup(self.text(p), self) is None:
            raise self.error(p, "binding patterns are not supported in a match: use `_` and the scrutinee")
        return hir.Compare(BOOL, sp, Cmp.EQ, scrut.e, self.pattern_value(scrut, p))

    def pattern_value(self, scrut: V, p: Node) -> hir.Expr:
        if p.type == "negative_literal" or p.type in (
            "integer_literal",
            "boolean_literal",
            "identifier",
            "scoped_identifier",
        ):
            v = self.f.const_eval(p, scrut.rt, self)
        else:
            raise self.error(p, "match patterns are integer literals, ranges (a..=b), constants, `|` and `_`")
        if isinstance(v, bool) != (scrut.rt == "bool"):
            raise self.error(p, f"this pattern is no value of {scrut.rt}")
        if not isinstance(v, bool) and not _fits(int(v), scrut.rt):
            raise self.error(p, f"{v} is out of range for {scrut.rt}")
        return hir.Const(scrut.e.type, self.span(p), v)

    # -- per-thread arrays: `let mut t = [0.0f32; 4];`, `[[0.0f32; 4]; 4]`, `[1.0, 2.0, 3.0]`
    def private_array(self, s: Node, name: str, mutable: bool, ty: Node | None, value: Node | None) -> list[hir.Stmt]:
        """A per-thread array (hir.PrivateArray): in registers where unrolling makes every index
        constant, else in the thread's local memory (docs/compiler.md). Its element type is the
        annotation's, a literal's suffix, or, as rustc infers it, the type of its first use."""
        sp = self.span(s)
        if value is None:
            raise self.error(s, f"give `{name}` its elements: let mut {name} = [0.0f32; 4];")
        shape_t: list[int] = []
        elem_rt: str | None = None
        t = ty
        while t is not None and t.type == "array_type":
            shape_t.append(self.array_length(t.child_by_field_name("length")))
            t = t.child_by_field_name("element")
        if t is not None:
            elem_rt = self.type_name(t)
        shape, leaves = self.array_value(value, 0)
        if shape_t and shape_t != list(shape):
            raise self.error(value, f"mismatched types: expected an array of shape {shape_t}, found {list(shape)}")
        if len(shape) > 2:
            raise self.error(value, builtins.dimensions("per-thread"))
        rt = elem_rt or self.inferred.get(s.id)
        distinct = {leaf.id: leaf for leaf in leaves}
        vals = {k: self.expr(leaf, rt) for k, leaf in distinct.items()}
        if rt is None:
            typed = [v for v in vals.values() if not v.lit]
            first = next(iter(distinct))
            rt = typed[0].rt if typed else self.literal_default(vals[first], distinct[first]).rt
        if rt not in ELEMENT_TYPES or rt == "f16":
            raise self.error(value, f"per-thread arrays hold i32, u32, f32 or f64 elements, not {rt}")
        flexible = elem_rt is None and s.id not in self.inferred and all(v.lit for v in vals.values())
        pre: list[hir.Stmt] = []
        exprs: dict[int, hir.Expr] = {}
        for k, v in vals.items():
            e = self.want(v, rt, distinct[k]).e
            if sum(leaf.id == k for leaf in leaves) > 1 and not isinstance(e, hir.Const | hir.Var):  # [f(); N]: f once
                tmp = self.temp(e.type)
                pre.append(hir.Assign(sp, tmp, e))
                e = hir.Var(e.type, sp, tmp)
            exprs[k] = e
        init = [exprs[leaf.id] for leaf in leaves]
        if all(isinstance(e, hir.Const) and e.value == 0 and math.copysign(1, e.value) > 0 for e in init):
            init = []  # zeros: PrivateInit's default
        hn = self.fresh_name(name, RUST_TYPES[rt])
        del self.vars[hn]  # an array, not a scalar variable
        self.privates.append(hir.PrivateArray(hn, ELEMENT_TYPES[rt], tuple(shape), sp))
        self.scopes[-1][name] = Private(hn, rt, mutable, flexible, s, tuple(shape))
        return [*pre, hir.PrivateInit(sp, hn, tuple(init))]

    def array_length(self, n: Node) -> int:
        k = self.f.const_eval(n, "usize", self)
        if not isinstance(k, int) or isinstance(k, bool) or k < 1:
            raise self.error(n, "an array length is a positive constant (no dynamic allocation on a GPU)")
        return k

    def array_value(self, n: Node, depth: int) -> tuple[tuple[int, ...], list[Node]]:
        """The shape and the element expressions (row-major) of `[x; N]` / `[a, b, c]`, nested for
        rows; a repeated x is listed N times (the same node: evaluated once)."""
        if n.type != "array_expression":
            if depth == 0:
                raise self.error(n, "a per-thread array is made with `[x; N]` or `[a, b, c]`")
            return (), [n]
        length = n.child_by_field_name("length")
        kids = [c for c in self.named_children(n) if c.id != (length.id if length is not None else -1)]
        if length is not None:
            shape, leaves = self.array_value(kids[0], depth + 1)
            k = self.array_length(length)
            return (k, *shape), leaves * k
        if not kids:
            raise self.error(n, "an empty array has no elements to keep")
        parts = [self.array_value(c, depth + 1) for c in kids]
        if any(p[0] != parts[0][0] for p in parts):
            raise self.error(n, "the rows of an array have one length")
        return (len(kids), *parts[0][0]), [leaf for p in parts for leaf in p[1]]

    # -- local arrays
    def is_local_array(self, n: Node) -> bool:
        if n.type != "call_expression":
            return False
        f = n.child_by_field_name("function")
        if f.type != "generic_function":
            return False
        row = ROWS.get(FUNCTIONS.get(self.builtin_path(f.child_by_field_name("function")) or "", ""))
        return row is not None and row.rule is Rule.LOCAL

    def local_array(self, name: str, call: Node) -> None:
        """`let s = local_array::<f32, 256>();`: the row's type and count, bound by the binder."""
        gf = call.child_by_field_name("function")
        row = ROWS[FUNCTIONS[self.builtin_path(gf.child_by_field_name("function")) or ""]]
        if self.named_children(call.child_by_field_name("arguments")):
            raise self.error(call, "local_array::<T, N>() takes no arguments")
        targs = self.named_children(gf.child_by_field_name("type_arguments"))
        if len(targs) != 2:
            raise self.error(gf, "local_array::<T, N>(): an element type and a constant count")
        rt = self.type_name(targs[0])
        cn = targs[1]
        if cn.type == "block":
            kids = self.named_children(cn)
            if len(kids) != 1:
                raise self.error(cn, "the count is one constant expression")
            cn = kids[0]
        r = bind.bind(row, self.span(call), [NARROW.get(rt) or ELEMENT_TYPES.get(rt), self.constant(cn, "usize")])
        if isinstance(r, bind.Refusal):
            raise self.error(targs[0] if r.arg == 0 else cn if r.arg == 1 else call, r.message)
        if self.is_array_name(name) or name in self.vars:
            raise self.error(call, f"`{name}` is already defined: local arrays need their own names")
        attrs = dict(r.attrs)  # type: ignore[union-attr]
        elem, (count,) = attrs["dtype"], attrs["shape"]
        at = ArrayType(elem, "local", 1)
        self.scopes[-1][name] = Array(name, at, rt, True, count)
        self.locals.append(hir.LocalArray(name, at, count, self.span(call)))

    # -- expressions
    def condition(self, n: Node) -> hir.Expr:
        v = self.expr(n, "bool")
        if v.rt != "bool":
            raise self.error(n, f"expected bool, found {v.rt}: compare it, e.g. `x != 0`")
        return v.e

    def flex_of(self, var: Var) -> frozenset[str] | None:
        return frozenset({var.hir_name}) if var.flexible else None

    def retype(self, v: V, rt: str, n: Node) -> V:
        """An unsuffixed literal given a type by its context (rustc's rules: an integer literal is
        no float, and must fit)."""
        c = v.e
        assert isinstance(c, hir.Const)
        t = RUST_TYPES[rt]
        if rt == "f16":
            raise self.error(n, f"expected f16, found a literal: write f16::from_f32({float(c.value)!r})")
        if t.is_float:
            if not c.type.is_float:
                raise self.error(n, f"expected {rt}, found an integer literal: write {c.value}.0")
            value = self.float_value(v.src, rt, n) if v.src is not None else float(c.value)
            return V(hir.Const(t, c.span, value), rt, False, frozenset())
        if c.type.is_float:
            raise self.error(n, f"expected {rt}, found a float literal")
        if t is BOOL:
            raise self.error(n, "expected bool, found an integer: compare it, `x != 0`")
        if not _fits(int(c.value), rt):
            raise self.error(n, f"literal out of range for {rt}: {c.value}")
        return V(hir.Const(t, c.span, int(c.value)), rt, False, frozenset())

    def float_value(self, digits: str, rt: str, n: Node) -> float:
        """A decimal literal's value in f32 or f64, each rounded once; out of range is refused (rustc's
        overflowing_literals)."""
        value = f32_of(digits) if rt in ("f32", "f16") else float(digits)
        if math.isinf(value):
            raise self.error(n, f"literal out of range for {rt}: {digits}")
        return value

    def want(self, v: V, rt: str, n: Node, target: Var | None = None) -> V:
        """`v` where a value of Rust type rt is expected: no implicit conversions."""
        if v.rt == rt:
            return v
        if v.rt == "void":
            raise self.error(n, NO_VALUE)
        if v.lit:
            return self.retype(v, rt, n)
        if self.same_class(v.rt, rt) and v.flex:
            self.infer(v.flex, rt)
        if target is not None and target.flexible and self.same_class(v.rt, target.rt):
            self.infer(frozenset({target.hir_name}), v.rt)
        fix = self.float_start(v.flex, rt)
        if fix is not None:
            raise self.error(n, f"mismatched types: expected {rt}, found {v.rt}: {fix}")
        raise self.error(n, self.mismatch(rt, v.rt, n))

    def same_class(self, a: str, b: str) -> bool:
        return (a in INTS and b in INTS) or (a in FLOATS and b in FLOATS)

    def infer(self, names: frozenset[str], rt: str) -> None:
        """Flexible variables (by HIR name) take type rt: record it at their `let` and restart."""
        for sc in self.scopes:
            for var in sc.values():
                if isinstance(var, Var | Private) and var.flexible and var.hir_name in names:
                    self.inferred[var.node.id] = rt
        raise _Restart()

    def mismatch(self, want: str, got: str, n: Node) -> str:
        shown = self.text(n)
        if len(shown) > 40 or "\n" in shown:
            shown = "..."
        if n.type not in (
            "identifier",
            "index_expression",
            "call_expression",
            "parenthesized_expression",
            "field_expression",
        ):
            shown = f"({shown})"
        if want == "f16" or got == "f16":
            fix = "f16::from_f32(x)" if want == "f16" else "x.to_f32()"
            return f"mismatched types: expected {want}, found {got}: convert with {fix}"
        if want == "bool":
            return f"mismatched types: expected bool, found {got}: compare it, `{shown} != 0`"
        return f"mismatched types: expected {want}, found {got}: convert it, `{shown} as {want}`"

    def unify(self, a: V, b: V, n: Node, an: Node, bn: Node) -> tuple[V, V]:
        """Two operands of one type, as Rust's operators need (literals adopt the other's type)."""
        if a.rt == b.rt:
            return a, b
        if "void" in (a.rt, b.rt):
            raise self.error(n, NO_VALUE)
        if a.lit and not b.lit:
            return self.retype(a, b.rt, an), b
        if b.lit and not a.lit:
            return a, self.retype(b, a.rt, bn)
        if self.same_class(a.rt, b.rt):
            if a.flex and not b.flex:
                self.infer(a.flex, b.rt)
            if b.flex and not a.flex:
                self.infer(b.flex, a.rt)
        for x, other in ((a, b), (b, a)):  # `let mut s = 0; s += x[j]`: s is a float from its start
            fix = self.float_start(x.flex, other.rt)
            if fix is not None:
                raise self.error(
                    n,
                    f"mismatched types: {a.rt} and {b.rt} (Rust converts nothing implicitly): {fix}",
                )
        fix_a = f"({self.text(an)} as {b.rt})" if len(self.text(an)) < 40 else f"(... as {b.rt})"
        fix_b = f"({self.text(bn)} as {a.rt})" if len(self.text(bn)) < 40 else f"(... as {a.rt})"
        raise self.error(
            n,
            f"mismatched types: {a.rt} and {b.rt} (Rust converts nothing implicitly): "
            f"convert one side with `as`, e.g. {fix_b} or {fix_a}",
        )

    def float_start(self, flex: frozenset[str] | None, rt: str) -> str | None:
        """The fix-it where a variable bound to an unsuffixed integer literal (`let mut s = 0;`) meets
        a float: bind it to the float literal (`let mut s = 0.0;`), which keeps every value it takes
        (an `as` on the other side would truncate them). None where that is not the case."""
        if not flex or rt not in FLOATS:
            return None
        for sc in self.scopes:
            for name, var in sc.items():
                if not (isinstance(var, Var) and var.flexible and var.hir_name in flex):
                    continue
                value = var.node.child_by_field_name("value")
                if value is None or value.type != "integer_literal":
                    continue
                lit = self.text(value).replace("_", "")
                if not lit.isdigit():
                    continue
                mut = "mut " if var.mutable else ""
                return (
                    f"`{name}` is an integer because it starts as `{self.text(value)}`: start it as a float, "
                    f"`let {mut}{name} = {int(lit)}.0;`"
                )
        return None

    def expr(self, n: Node, hint: str | None = None) -> V:
        t = n.type
        sp = self.span(n)
        if t == "parenthesized_expression":
            return self.expr(n.named_children[0], hint)
        if t == "integer_literal":
            value, suffix = parse_int(self.text(n))
            if suffix in UNSUPPORTED_INTS:
                raise self.error(n, f"{suffix} is not supported: kernel integers are 32-bit")
            if suffix in FLOATS:
                return V(hir.Const(RUST_TYPES[suffix], sp, float(value)), suffix)
            if suffix is not None:
                if not _fits(value, suffix):
                    raise self.error(n, f"literal out of range for {suffix}: {value}")
                return V(hir.Const(RUST_TYPES[suffix], sp, value), suffix)
            if value >= 2**32:
                raise self.error(n, f"literal out of range for 32-bit integers: {value}")
            lit = V(hir.Const(I32 if value < 2**31 else U32, sp, value), "i32", True, frozenset())
            if hint is not None and hint in INTS:
                return self.retype(lit, hint, n)
            return lit
        if t == "float_literal":
            digits, fs = float_text(self.text(n))
            if fs is not None:
                return V(hir.Const(RUST_TYPES[fs], sp, self.float_value(digits, fs, n)), fs)
            lit = V(hir.Const(F64, sp, self.float_value(digits, "f64", n)), "f64", True, frozenset(), digits)
            if hint in FLOATS:
                return self.retype(lit, hint, n)
            return lit
        if t == "boolean_literal":
            return V(hir.Const(BOOL, sp, self.text(n) == "true"), "bool")
        if t == "identifier":
            return self.name(n)
        if t == "scoped_identifier":
            return self.path_value(n, hint)
        if t == "unary_expression":
            return self.unary(n, hint)
        if t == "binary_expression":
            return self.binary_expr(n, hint)
        if t == "type_cast_expression":
            return self.cast(n)
        if t == "index_expression":
            arr, idx = self.index(n, write=False)
            return self.element(arr, idx, sp)
        if t == "call_expression":
            return self.call(n, hint)
        if t == "if_expression":
            return self.if_value(n, hint)
        if t == "match_expression":
            return self.match_value(n, hint)
        if t == "block":
            kids = self.named_children(n)
            if len(kids) == 1 and kids[0].type != "expression_statement" and not kids[0].type.endswith("declaration"):
                return self.expr(kids[0], hint)
            if (
                len(kids) == 1
                and kids[0].type == "expression_statement"
                and not any(c.type == ";" for c in kids[0].children)
                and kids[0].named_children
                and kids[0].named_children[0].type in ("if_expression", "match_expression", "block")
            ):  # the grammar wraps a tail `if`/`match`/block in a statement: `else { if c { x } else { y } }`
                return self.expr(kids[0].named_children[0], hint)
            raise self.error(n, "a block with statements as a value is not supported: assign in the block instead")
        if t == "macro_invocation":
            raise self.macro_error(n)
        if t == "closure_expression":
            raise self.error(
                n,
                "a closure is bound by `let` and called (`let f = |v: f32| v * 2.0;`) or written in `.map(..)`: "
                "it is no value here (no function values on the GPU)",
            )
        if t == "array_expression":
            raise self.error(
                n, "an array makes a per-thread array in a `let` (`let mut t = [0.0f32; 4];`), not a value"
            )
        if t in ("reference_expression",):
            if self.borrowed_private(n) is not None:
                raise self.error(
                    n, "a reference to a per-thread array is passed to a helper (`acc(&mut t)`); here use `t` itself"
                )
            raise self.error(n, "references are passed to helpers and atomics (`atomic_add(bins, i, 1)`)")
        if t in ("assignment_expression", "compound_assignment_expr"):
            raise self.error(n, "an assignment is a statement here, not a value")
        if t in ("struct_expression", "tuple_expression", "unit_expression"):
            raise self.error(n, "structs and tuples are not supported in kernels: use scalars")
        if t == "range_expression":
            raise self.error(n, "a range is only the iterator of a for loop")
        if t == "field_expression":
            raise self.error(n, "structs are not supported in kernels (fields: no); methods are called with ()")
        if t in (
            "return_expression",
            "break_expression",
            "continue_expression",
            "loop_expression",
            "while_expression",
            "for_expression",
        ):
            raise self.error(n, f"{t.split('_')[0]} is a statement here, not a value")
        if t == "unsafe_block":  # `unsafe { *p.add(i) }`: one expression (statements: in a `let`)
            kids = self.named_children(n.named_children[-1])
            if len(kids) != 1 or kids[0].type in _STATEMENTS:
                raise self.error(
                    n, "an unsafe block with statements is a value only in a `let`: let v = unsafe { .. };"
                )
            self.unsafe += 1
            try:
                return self.expr(kids[0], hint)
            finally:
                self.unsafe -= 1
        if t == "generic_function":
            raise self.error(
                n, "generic functions are not supported: local_array::<T, N>() is the only generic builtin"
            )
        raise self.error(n, f"{t.replace('_', ' ')} is not supported in kernels")

    def macro_error(self, n: Node) -> _Bail:
        name = self.text(n.child_by_field_name("macro"))
        if name == "vec":
            return self.error(
                n,
                "vec! allocates on the heap, which kernels do not have: use a slice parameter or local_array::<T, N>()",
            )
        if name in ("println", "print", "eprintln", "format", "write", "writeln", "dbg"):
            return self.error(n, f"{name}! is not available in kernels: write the value to a `&mut [T]` parameter")
        if name in ("panic", "assert", "assert_eq", "unreachable", "todo", "unimplemented"):
            return self.error(n, f"{name}! is not available in kernels (no panics on the GPU): test and return early")
        return self.error(n, f"macros are not supported in kernels ({name}!)")

    def name(self, n: Node) -> V:
        name = self.text(n)
        var = self.lookup(name)
        sp = self.span(n)
        if isinstance(var, Var):
            if var.rt == "poison":
                raise _Bail()
            return V(hir.Var(RUST_TYPES[var.rt], sp, var.hir_name), var.rt, flex=self.flex_of(var))
        if isinstance(var, Array):
            raise self.error(n, f"`{name}` is a slice: index it, {name}[i]")
        if isinstance(var, Private):
            raise self.error(n, f"`{name}` is a per-thread array: use its elements, {name}{'[i]' * len(var.shape)}")
        if isinstance(var, Closure):
            raise self.error(
                n, f"`{name}` is a closure: call it, {name}(...) (closures are inlined; they cannot be passed on)"
            )
        if name in self.f.functions:
            raise self.error(n, f"`{name}` is a function: call it (functions are inlined; they are no values)")
        c = self.f.consts_lookup(name, self)
        if c is not None:
            value, rt = c
            return V(hir.Const(RUST_TYPES[rt], sp, value), rt)
        if name == self.fn_name and self.ret is None:
            raise self.error(n, f"recursion is not supported: `{name}` is the kernel itself")
        if name in self.f.foreign:
            raise self.error(n, self.f.foreign[name])
        raise self.error(n, f"cannot find value `{name}` in this scope")

    def path_value(self, n: Node, hint: str | None) -> V:
        """`f32::MAX`, `std::f32::consts::PI`, `u32::MAX`, `wave::Scope::...` ..."""
        parts = self.text(n).replace(" ", "").split("::")
        sp = self.span(n)
        if parts[0] in ("std", "core"):
            parts = parts[1:]
        if len(parts) == 3 and parts[1] == "consts" and parts[0] in ("f32", "f64") and parts[2] in FLOAT_CONSTS:
            return V(hir.Const(RUST_TYPES[parts[0]], sp, FLOAT_CONSTS[parts[2]]), parts[0])
        if len(parts) == 2 and parts[0] in TYPE_CONSTS and parts[1] in TYPE_CONSTS[parts[0]]:
            rt = parts[0]
            val = TYPE_CONSTS[rt][parts[1]]
            if parts[1] == "BITS":
                rt = "u32"
            return V(hir.Const(RUST_TYPES[rt], sp, val), rt)
        if len(parts) == 2 and parts[0] == "wave":
            c = self.f.consts_lookup(parts[1], self)
            if c is not None:
                return V(hir.Const(RUST_TYPES[c[1]], sp, c[0]), c[1])
        raise self.error(n, f"unknown path `{self.text(n)}`")

    def unary(self, n: Node, hint: str | None) -> V:
        op = self.text(n.children[0])
        operand = n.named_children[0]
        sp = self.span(n)
        if op == "*" and operand.type == "identifier":
            b = self.lookup(self.text(operand))
            if isinstance(b, Var) and b.ref:
                return self.name(operand)
        if op == "*" and self.pointee(operand) is not None:
            arr, idx = self.pointer_element(n, write=False)
            return self.element(arr, idx, sp)
        if op == "*":
            raise self.error(n, "dereferencing is not needed in kernels (scalars are values)")
        if op == "-" and operand.type == "integer_literal":  # -2147483648i32 is a literal
            value, suffix = parse_int(self.text(operand))
            if suffix in UNSUPPORTED_INTS:
                raise self.error(operand, f"{suffix} is not supported: kernel integers are 32-bit")
            if suffix in FLOATS:
                return V(hir.Const(RUST_TYPES[suffix], sp, -float(value)), suffix)
            rt = suffix or (hint if hint in INTS or hint in FLOATS else None)
            if rt in ("u32", "usize", "u8", "u16"):
                raise self.error(n, f"cannot apply unary operator `-` to type `{rt}`")
            if rt is not None and rt in INTS and not _fits(-value, rt):
                raise self.error(n, f"literal out of range for {rt}: -{value}")
            if suffix is not None:
                return V(hir.Const(RUST_TYPES[suffix], sp, -value), suffix)
            if -value < -(2**31):
                raise self.error(n, f"literal out of range for 32-bit integers: -{value}")
            lit = V(hir.Const(I32, sp, -value), "i32", True, frozenset())
            return self.retype(lit, rt, n) if rt is not None else lit
        if op == "-" and operand.type == "float_literal":
            v = self.expr(operand, None)
            c = v.e
            assert isinstance(c, hir.Const)
            neg = V(hir.Const(c.type, sp, -c.value), v.rt, v.lit, v.flex, "-" + v.src if v.src else None)
            if neg.lit:
                if hint in INTS or hint in FLOATS:
                    if hint in ("u32", "usize", "u8", "u16") and c.type.is_int:
                        raise self.error(n, f"cannot apply unary operator `-` to type `{hint}`")
                    return self.retype(neg, hint, n)
                return neg
            if v.rt in ("u32", "usize", "u8", "u16"):
                raise self.error(n, f"cannot apply unary operator `-` to type `{v.rt}`")
            if c.type.is_int and not _fits(-int(c.value), v.rt):
                raise self.error(n, f"literal out of range for {v.rt}")
            return neg
        v = self.expr(operand, hint)
        if op == "!":
            if v.rt == "bool":
                return V(hir.Unary(BOOL, sp, hir.UnaryOp.NOT, v.e), "bool")
            if v.lit:
                v = self.literal_default(v, operand)
            if v.rt in INTS:
                self.no_narrow(v, n)
                return V(hir.Unary(v.e.type, sp, hir.UnaryOp.BIT_NOT, v.e), v.rt, flex=v.flex)
            raise self.error(n, f"cannot apply unary operator `!` to type `{v.rt}`")
        if op == "-":
            if v.rt in ("u32", "usize", "u8", "u16", "bool", "void"):
                raise self.error(n, f"cannot apply unary operator `-` to type `{v.rt}`")
            self.no_narrow(v, n)
            return V(hir.Unary(v.e.type, sp, hir.UnaryOp.NEG, v.e), v.rt, flex=v.flex)
        raise self.error(n, f"unsupported unary operator {op}")

    def no_narrow(self, v: V, n: Node) -> None:
        if v.rt in NARROW_BITS:
            raise self.error(
                n,
                f"arithmetic on {v.rt} values is not supported (kernel values are 32-bit): convert first, `x as u32` or `x as i32`",
            )

    def binary_expr(self, n: Node, hint: str | None) -> V:
        op = self.text(n.child_by_field_name("operator"))
        ln, rn = n.child_by_field_name("left"), n.child_by_field_name("right")
        sp = self.span(n)
        if op in ("&&", "||"):
            a, b = self.condition(ln), self.condition(rn)
            lop = hir.LogicalOp.AND if op == "&&" else hir.LogicalOp.OR
            return V(hir.Logical(BOOL, sp, lop, a, b), "bool")
        if op in CMPOPS:
            a = self.expr(ln)
            b = self.expr(rn, a.rt if not a.lit else None)
            if a.lit and not b.lit:
                a = self.expr(ln, b.rt)
            if a.lit and b.lit:
                a, b = self.literal_default(a, ln), self.literal_default(b, rn)
            a, b = self.unify(a, b, n, ln, rn)
            if a.rt == "bool" and op not in ("==", "!="):
                pass  # Rust orders bools (false < true): compare as u32
            if a.rt == "void":
                raise self.error(n, NO_VALUE)
            if a.rt == "bool" and op not in ("==", "!="):
                one, zero = hir.Const(U32, sp, 1), hir.Const(U32, sp, 0)
                a = V(hir.IfExpr(U32, sp, a.e, one, zero), "u32")
                b = V(hir.IfExpr(U32, sp, b.e, one, zero), "u32")
            return V(hir.Compare(BOOL, sp, CMPOPS[op], a.e, b.e), "bool")
        if op in ("<<", ">>"):
            a = self.expr(ln, hint)
            b = self.expr(rn, None)
        else:
            a = self.expr(ln, hint)
            b = self.expr(rn, a.rt if not a.lit else hint)
            if a.lit and not b.lit:
                a = self.expr(ln, b.rt)
        return self.binary(op, a, b, n, ln, rn)

    def binary(self, op: str, a: V, b: V, n: Node, ln: Node, rn: Node, wrapping: bool = False) -> V:
        """`a op b` by Rust's rules (`wrapping`: x.wrapping_shl(k) takes any constant k modulo 32)."""
        sp = self.span(n)
        if op not in BINOPS:
            raise self.error(n, f"unsupported operator {op}")
        if op in ("<<", ">>"):
            if a.lit:
                a = self.literal_default(a, ln)
            if a.rt not in INTS or b.rt not in INTS:
                raise self.error(n, f"no implementation for `{a.rt} {op} {b.rt}`: shifts take integers")
            self.no_narrow(a, ln)
            count = b.e
            if isinstance(count, hir.Const):
                if wrapping:
                    count = hir.Const(count.type, count.span, int(count.value) & 31)
                if not 0 <= int(count.value) < 32:
                    raise self.error(
                        rn, f"this arithmetic operation will overflow: shifting a 32-bit value by {count.value}"
                    )
                count = hir.Const(a.e.type, count.span, int(count.value))
            else:
                if count.type != a.e.type:
                    count = hir.Cast(a.e.type, sp, count)
                # a release build takes the count modulo 32 (WAVE's shifts by 32 and more give 0)
                count = hir.Binary(a.e.type, sp, BinOp.AND, count, hir.Const(a.e.type, sp, 31))
            return V(hir.Binary(a.e.type, sp, BINOPS[op], a.e, count), a.rt, flex=a.flex)
        if a.lit and b.lit:
            folded, b = self.fold_literals(op, a, b, n)
            if folded is None:
                return b
            a = folded
        a, b = self.unify(a, b, n, ln, rn)
        rt = a.rt
        flex = a.flex if (a.flex is not None and b.flex is not None) else None
        if flex is not None:
            flex = a.flex | b.flex  # type: ignore[operator]
        bop = BINOPS[op]
        if rt in ("void",):
            raise self.error(n, NO_VALUE)
        if rt == "bool":
            if bop in (BinOp.AND, BinOp.OR, BinOp.XOR):
                return V(hir.Binary(BOOL, sp, bop, a.e, b.e), "bool")
            raise self.error(n, f"cannot apply `{op}` to bools")
        self.no_narrow(a, ln)
        if rt in FLOATS:
            if bop in (BinOp.AND, BinOp.OR, BinOp.XOR):
                raise self.error(n, f"no implementation for `{rt} {op} {rt}`: bitwise operators take integers")
            if bop is BinOp.TRUNC_REM:
                raise self.error(n, "`%` of floats is not supported: write a - (a / b).floor() * b or use integers")
        elif bop is BinOp.DIV:
            bop = BinOp.TRUNC_DIV
        if bop in (BinOp.TRUNC_DIV, BinOp.TRUNC_REM) and isinstance(b.e, hir.Const) and b.e.value == 0:
            raise self.error(n, "this operation will panic at runtime: attempt to divide by zero")
        return V(hir.Binary(a.e.type, sp, bop, a.e, b.e), rt, flex=flex)

    def fold_literals(self, op: str, a: V, b: V, n: Node) -> tuple[V | None, V]:
        """Two unsuffixed literals: one literal (Rust evaluates them in the type the context gives)."""
        x, y = a.e.value, b.e.value  # type: ignore[attr-defined]
        isf = a.e.type.is_float or b.e.type.is_float
        if a.e.type.is_float != b.e.type.is_float:
            raise self.error(n, f"cannot apply `{op}` to an integer and a float literal: write both as floats")
        sp = self.span(n)
        if isf:
            if op in ("&", "|", "^", "%"):
                return a, b
            r = {"+": x + y, "-": x - y, "*": x * y}.get(op)
            if op == "/":
                if y == 0:
                    return a, b
                r = x / y
            if r is None:
                return a, b
            return None, V(hir.Const(F64, sp, r), "f64", True, frozenset())
        if op in ("/", "%") and y == 0:
            raise self.error(n, "this operation will panic at runtime: attempt to divide by zero")
        if op == "/":
            r = abs(x) // abs(y) * (1 if (x >= 0) == (y >= 0) else -1)
        elif op == "%":
            r = x - (abs(x) // abs(y) * (1 if (x >= 0) == (y >= 0) else -1)) * y
        else:
            r = {"+": x + y, "-": x - y, "*": x * y, "&": x & y, "|": x | y, "^": x ^ y}[op]
        if not -(2**31) <= r < 2**32:
            raise self.error(n, f"this arithmetic operation will overflow: {r} is no 32-bit value")
        return None, V(hir.Const(I32 if r < 2**31 else U32, sp, r), "i32", True, frozenset())

    def cast(self, n: Node) -> V:
        sp = self.span(n)
        vn, tn = n.child_by_field_name("value"), n.child_by_field_name("type")
        to = self.type_name(tn)
        v = self.expr(vn, None)
        if v.lit:
            if v.e.type.is_float and to in FLOATS:
                return self.retype(v, to, vn)
            if not v.e.type.is_float and to in INTS and _fits(int(v.e.value), to):  # type: ignore[attr-defined]
                return self.retype(v, to, vn)
            v = self.literal_default(v, vn)
        frm = v.rt
        e = v.e
        if frm == "void":
            raise self.error(vn, NO_VALUE)
        if to == "f16" or frm == "f16":
            if to == frm:
                return v
            fix = "f16::from_f32(x)" if to == "f16" else "x.to_f32()"
            raise self.error(n, f"non-primitive cast: f16 is the wave crate's type, convert with {fix}")
        if to == "bool":
            raise self.error(n, f"cannot cast {frm} as bool: compare instead, `x != 0`")
        if frm == "bool":
            if to in FLOATS:
                raise self.error(n, "cannot cast bool as a float: cast it to an integer first, `c as u32 as f32`")
            t = RUST_TYPES[to]
            return V(hir.IfExpr(t, sp, e, hir.Const(t, sp, 1), hir.Const(t, sp, 0)), to)
        t = RUST_TYPES[to]
        if to in NARROW_BITS:
            bits = NARROW_BITS[to]
            if frm in FLOATS:  # saturates to the narrow type's range, NaN to 0 (as i32 first: the same)
                lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if to.startswith("i") else (0, (1 << bits) - 1)
                wide = hir.Cast(I32, sp, e)
                # the rows Rust spells i.max(lo).min(hi)
                above = bind.bind(ROWS[METHODS["max"]], sp, [wide, hir.Const(I32, sp, lo)])
                assert isinstance(above, hir.Expr)
                clamped = bind.bind(ROWS[METHODS["min"]], sp, [above, hir.Const(I32, sp, hi)])
                assert isinstance(clamped, hir.Expr)
                return V(clamped if t is I32 else hir.Cast(U32, sp, clamped), to)
            x = e if e.type == t else hir.Cast(t, sp, e)
            if to.startswith("u"):
                return V(hir.Binary(t, sp, BinOp.AND, x, hir.Const(t, sp, (1 << bits) - 1)), to)
            k = hir.Const(t, sp, 32 - bits)
            return V(hir.Binary(t, sp, BinOp.SHR, hir.Binary(t, sp, BinOp.SHL, x, k), k), to)
        if e.type == t:
            return V(e, to)
        if isinstance(e, hir.Const) and e.type.is_int and t.is_int:
            return V(hir.Const(t, sp, _wrap(int(e.value), to)), to)
        return V(hir.Cast(t, sp, e), to)

    def index(self, n: Node, write: bool) -> tuple[Array | Private, tuple[hir.Expr, ...]]:
        """`x[i]` of a slice or local array, `t[i]` / `t[i][j]` of a per-thread array: the array
        and its indices (usize, as rustc wants them)."""
        nodes: list[Node] = []
        base = n
        while base.type == "index_expression":
            kids = self.named_children(base)
            base, idx_node = kids[0], kids[1]
            nodes.insert(0, idx_node)
        if base.type != "identifier":
            raise self.error(base, "only slices and arrays can be indexed")
        name = self.text(base)
        arr = self.lookup(name)
        if isinstance(arr, Var) and arr.rt == "poison":
            raise _Bail()
        if not isinstance(arr, Array | Private):
            raise self.error(base, f"`{name}` is not a slice: only slices and arrays can be indexed")
        self.private_here(arr, base)
        if isinstance(arr, Array) and arr.pointer:
            raise self.error(
                n,
                f"cannot index into a value of type `*{'mut' if arr.mutable else 'const'} {arr.rt}`: "
                f"read the element with `unsafe {{ *{name}.add(i) }}`",
            )
        dims = len(arr.shape) if isinstance(arr, Private) else 1
        if len(nodes) != dims:
            what = (
                "slices have one dimension: index a[row * cols + col]"
                if isinstance(arr, Array)
                else (
                    f"`{name}` has {dims} dimension{'s' if dims != 1 else ''}: index every one, "
                    f"{name}{''.join(f'[{c}]' for c in 'ij'[:dims])} (rows are no values)"
                )
            )
            raise self.error(n, what)
        if write and not arr.mutable:
            if isinstance(arr, Private) and arr.ref:
                raise self.error(
                    n,
                    f"cannot assign to `{self.text(n)}`, which is behind a `&` reference: "
                    f"take it as `&mut {arr.spelled()[1:]}`",
                )
            if isinstance(arr, Private):
                raise self.error(n, f"cannot assign to `{name}[..]`: declare it `let mut {name}`")
            raise self.error(
                n, f"cannot assign to `{name}[..]`, which is behind a `&` reference: declare `{name}: &mut [{arr.rt}]`"
            )
        out = []
        for idx_node in nodes:
            if idx_node.type == "range_expression":
                raise self.error(idx_node, "sub-slices are not supported: index elements")
            idx = self.expr(idx_node, "usize")
            if idx.rt != "usize" and not (idx.rt == "u32" and self.f.toolchain_file):
                if idx.rt in ("i32", "u32") and idx.flex:
                    self.infer(idx.flex, "usize")
                shown = (
                    self.text(idx_node)
                    if idx_node.type in ("identifier", "integer_literal")
                    else f"({self.text(idx_node)})"
                )
                kind = f"[{arr.rt}]" if isinstance(arr, Array) else f"[{arr.rt}; {arr.shape[-1]}]"
                raise self.error(
                    idx_node,
                    f"the type `{kind}` cannot be indexed by `{idx.rt}`: slices and arrays are indexed by usize, "
                    f"convert it, `{self.text(base)}[{shown} as usize]`",
                )
            out.append(idx.e)
        return arr, tuple(out)

    def private_here(self, arr: object, n: Node) -> None:
        """A closure may use the kernel's per-thread array (by reference, as Rust captures it) once
        its element type is known: its first use in the kernel, or written at its declaration."""
        if isinstance(arr, Private) and self.ret is not None and arr.flexible:
            raise self.error(
                n,
                f"a closure uses `{self.text(n)}` before the kernel gives its elements a type: write it at "
                f"the declaration, `[0.0f32; N]`",
            )

    def pointee(self, n: Node) -> Array | None:
        """The pointer parameter `p` of `p` or `p.add(i)`, else None."""
        if n.type == "call_expression":
            parts = self.method_parts(n)
            if parts is None or parts[1] != "add":
                return None
            n = parts[0]
        b = self.lookup(self.text(n)) if n.type == "identifier" else None
        return b if isinstance(b, Array) and b.pointer else None

    def pointer_element(self, n: Node, write: bool) -> tuple[Array, tuple[hir.Expr, ...]]:
        """`*p` / `*p.add(i)` of a pointer parameter, in unsafe code as rustc wants (E0133)."""
        operand = n.named_children[0]
        arr = self.pointee(operand)
        assert arr is not None
        if not self.unsafe:
            raise self.error(n, "dereference of raw pointer is unsafe and requires an unsafe block: unsafe { .. }")
        if write and not arr.mutable:
            raise self.error(n, "cannot assign through a `*const` pointer: declare the parameter `*mut`")
        sp = self.span(n)
        if operand.type != "call_expression":
            return arr, (hir.Const(U32, sp, 0),)
        args = self.args(operand)
        if len(args) != 1:
            raise self.error(operand, "add takes 1 argument (the element offset)")
        idx = self.expr(args[0], "usize")
        if idx.lit:
            idx = self.retype(idx, "usize", args[0])
        if idx.rt != "usize":
            raise self.error(args[0], f"add takes a usize, not {idx.rt}: convert it, `{self.text(args[0])} as usize`")
        return arr, (idx.e,)

    def element(self, arr: Array | Private, idx: tuple[hir.Expr, ...], sp) -> V:
        if isinstance(arr, Private):
            flex = frozenset({arr.hir_name}) if arr.flexible else None
            return V(hir.PrivateLoad(RUST_TYPES[arr.rt], sp, arr.hir_name, idx), arr.rt, flex=flex)
        return V(hir.Load(arr.type.elem.value_type, sp, arr.name, idx[0]), arr.rt)

    def is_deref(self, n: Node) -> bool:
        return (
            n.type == "unary_expression"
            and self.text(n.children[0]) == "*"
            and self.pointee(n.named_children[0]) is not None
        )

    def store(self, arr: Array | Private, idx: tuple[hir.Expr, ...], v: V, n: Node, sp) -> hir.Stmt:
        if v.rt == "void":
            raise self.error(n, NO_VALUE)
        if isinstance(arr, Private):
            if arr.flexible and v.rt != arr.rt and not v.lit and self.same_class(v.rt, arr.rt):
                self.infer(frozenset({arr.hir_name}), v.rt)
            return hir.PrivateStore(sp, arr.hir_name, idx, self.want(v, arr.rt, n).e)
        return hir.Store(sp, arr.name, idx[0], self.want(v, arr.rt, n).e)

    def if_value(self, n: Node, hint: str | None) -> V:
        cond = self.condition(n.child_by_field_name("condition"))
        alt = n.child_by_field_name("alternative")
        if alt is None:
            raise self.error(n, "`if` without an `else` has no value")
        a = self.expr(n.child_by_field_name("consequence"), hint)
        other = alt.named_children[-1]
        b = self.expr(other, a.rt if not a.lit else hint)
        if a.lit and not b.lit:
            a = self.expr(n.child_by_field_name("consequence"), b.rt)
        if a.lit and b.lit:
            a, b = self.literal_default(a, n), self.literal_default(b, n)
        a, b = self.unify(a, b, n, n.child_by_field_name("consequence"), other)
        flex = a.flex | b.flex if a.flex is not None and b.flex is not None else None
        return V(hir.IfExpr(a.e.type, self.span(n), cond, a.e, b.e), a.rt, flex=flex)

    def match_value(self, n: Node, hint: str | None) -> V:
        scrut, arms = self.match_parts(n)
        if not _recomputable(scrut.e):  # each arm's test reads the scrutinee again
            raise self.error(n.child_by_field_name("value"), "match a variable here: `let k = ...; match k { ... }`")
        conds = self.arm_conditions(scrut, arms)
        values = [self.expr(arm.child_by_field_name("value"), hint) for arm, _ in conds]
        typed = [v for v in values if not v.lit]
        rt = typed[0].rt if typed else None
        out: list[V] = []
        for (arm, _), v in zip(conds, values):
            vn = arm.child_by_field_name("value")
            if v.lit:
                v = self.expr(vn, rt) if rt else self.literal_default(v, vn)
            out.append(self.want(v, rt or v.rt, vn))
        acc = out[-1]
        for (arm, cond), v in zip(reversed(conds[:-1]), reversed(out[:-1])):
            assert cond is not None, "only the last arm matches every value (arm_conditions)"
            flex = acc.flex | v.flex if acc.flex is not None and v.flex is not None else None
            acc = V(hir.IfExpr(acc.e.type, self.span(arm), cond, v.e, acc.e), acc.rt, flex=flex)
        return acc

    # -- calls
    def builtin_path(self, f: Node) -> str | None:
        """The builtin a function path names: `thread_id`, `wave::thread_id` (None otherwise)."""
        if f.type == "identifier":
            name = self.text(f)
            return None if self.lookup(name) is not None else name
        if f.type == "scoped_identifier":
            path = f.child_by_field_name("path")
            if path is not None and self.text(path).replace(" ", "") in ("wave", "crate::wave", "::wave"):
                return self.text(f.child_by_field_name("name"))
        return None

    def args(self, call: Node) -> list[Node]:
        return self.named_children(call.child_by_field_name("arguments"))

    def call(self, n: Node, hint: str | None) -> V:
        f = n.child_by_field_name("function")
        args = self.args(n)
        if f.type == "identifier" and isinstance(self.lookup(self.text(f)), Closure):
            return self.closure_call(n, self.text(f), args)
        if f.type == "field_expression":
            recv = f.child_by_field_name("value")
            method = self.text(f.child_by_field_name("field"))
            return self.method(n, recv, method, args, hint)
        if f.type == "generic_function" and f.child_by_field_name("function").type == "field_expression":
            inner = f.child_by_field_name("function")  # `x.iter().sum::<f32>()`: a method with a turbofish
            if self.text(inner.child_by_field_name("field")) in ("sum", "product"):
                field_ = self.text(inner.child_by_field_name("field"))
                return self.method(n, inner.child_by_field_name("value"), field_, args, hint)
        if f.type == "generic_function":
            if self.is_local_array(n):
                raise self.error(n, "local_array::<T, N>() is a declaration: let s = local_array::<f32, 256>();")
            raise self.error(f, "generic functions are not supported in kernels")
        name = self.builtin_path(f)
        if f.type == "scoped_identifier" and name is None:
            parts = self.text(f).replace(" ", "").split("::")
            if parts[0] in HEAP:
                raise self.error(
                    n,
                    f"{parts[0]} allocates on the heap, which kernels do not have: use a slice parameter or local_array::<T, N>()",
                )
            if (
                len(parts) == 2
                and parts[0] in ("f32", "f64", "i32", "u32")
                and (parts[1] in METHODS or parts[1] in WRAPPING)
            ):
                if not args:  # f32::sqrt(x): the method called as a function
                    raise self.error(n, f"{parts[1]} takes its receiver first")
                return self.method(n, args[0], parts[1], args[1:], hint, want_rt=parts[0])
            if len(parts) == 2 and parts[0] in FROM and parts[1] == "from":
                return self.from_call(n, parts[0], args)
            if "::".join(parts[:-1]) in CMP_PATHS and parts[-1] in CMP_FUNCTIONS:
                return self.cmp_call(n, parts[-1], args, hint)
            if (len(parts) == 2 and parts[0] == "f16") or parts[:2] == ["wave", "f16"]:
                return self.f16_call(n, parts[-1], args)
            raise self.error(
                f, f"unknown function `{self.text(f)}`: kernels call wave's builtins and the file's functions"
            )
        if name is None:
            name = self.text(f)
            raise self.error(
                f, f"`{name}` is not a function: kernels call wave's builtins, the file's functions and closures"
            )
        if name == self.fn_name and self.ret is None:
            raise self.error(f, f"recursion is not supported: `{name}` calls itself (no call stack on the GPU)")
        if name in self.f.functions:
            return self.function_call(n, f, name, args)
        return self.builtin(n, name, args, hint)

    # -- helper functions and closures: lowered once per instance, inlined by compiler/inline.py
    def function_call(self, n: Node, f: Node, name: str, args: list[Node]) -> V:
        """A call of a function of the file (`fn sq(v: f32) -> f32`): its body inlined."""
        item = self.f.functions[name]
        if any(item is k for k, _ in self.f.kernels):
            raise self.error(f, f"`{name}` is a kernel: kernels cannot be called (make the shared code a helper `fn`)")
        tps = item.child_by_field_name("type_parameters")
        if tps is not None:
            raise self.error(tps, f"generic functions are not supported in kernels: give `{name}` concrete types")
        params: list[tuple[str, ParamKind, bool, Node]] = []
        for p in self.named_children(item.child_by_field_name("parameters")):
            pat, ty = p.child_by_field_name("pattern"), p.child_by_field_name("type")
            if p.type != "parameter" or pat is None or ty is None:
                raise self.error(p, "helper parameters are `name: type` (no self)")
            mutable = pat.type == "mut_pattern"
            if mutable:
                pat = pat.named_children[-1]
            if pat.type != "identifier":
                raise self.error(pat, "a helper parameter is a plain name")
            kind = self.param_type(ty, helper=True) if ty.type == "reference_type" else self.type_name(ty)
            params.append((self.text(pat), kind, mutable, p))
        rnode = item.child_by_field_name("return_type")
        ret = "()" if rnode is None or self.text(rnode) == "()" else self.type_name(rnode)
        if len(args) != len(params):
            raise self.error(
                n,
                f"this function takes {len(params)} argument{'s' if len(params) != 1 else ''} but "
                f"{len(args)} {'were' if len(args) != 1 else 'was'} supplied",
            )
        params = [(pn, self.coerced(kind, a), m, p) for a, (pn, kind, m, p) in zip(args, params)]
        actual = [self.argument(a, kind, name) for a, (_, kind, _, _) in zip(args, params)]
        key = name
        if any(isinstance(k, Private) for _, k, _, _ in params):  # a slice parameter may take an array
            key += "(" + ",".join(k.spelled() if isinstance(k, Private) else "_" for _, k, _, _ in params) + ")"

        def build() -> hir.Helper:
            return self.build_helper(item, name, key, params, ret, None, item.child_by_field_name("body"))

        return self.invoke(n, name, key, actual, build, ret)

    def coerced(self, kind: ParamKind, a: Node) -> ParamKind:
        """A slice parameter given a one-dimensional per-thread array (`&t` for `x: &[f32]`, which
        rustc coerces): the parameter is that array, by reference, in this instance of the helper
        (an instance per kind of array, as for a generic); anything else: the parameter as declared."""
        if not isinstance(kind, Array) or kind.pointer:
            return kind
        got = self.borrowed_private(a)
        if got is None or len(got[0].shape) != 1 or got[0].rt != kind.rt:
            return kind
        return Private("", kind.rt, kind.mutable, False, a, got[0].shape, ref=True)

    def closure_call(self, n: Node, name: str, args: list[Node]) -> V:
        """A call of a closure bound by `let` (`let sq = |v: f32| v * v;`): an untyped parameter
        takes the type of its first call's argument, as rustc infers it (a closure is not generic);
        captures are the caller's."""
        c = self.lookup(name)
        assert isinstance(c, Closure)
        plist = c.node.child_by_field_name("parameters")
        pnodes = [p for p in self.named_children(plist)] if plist is not None else []
        if len(args) != len(pnodes):
            raise self.error(n, f"this closure takes {len(pnodes)} argument(s) but {len(args)} were supplied")
        params: list[tuple[str, ParamKind, bool, Node]] = []
        actual: list[hir.Expr | hir.ArrayArg] = []
        for k, (a, p) in enumerate(zip(args, pnodes)):
            pat, ty = (
                (p.child_by_field_name("pattern"), p.child_by_field_name("type"))
                if p.type == "parameter"
                else (p, None)
            )
            mutable = pat is not None and pat.type == "mut_pattern"
            if pat is not None and mutable:
                pat = pat.named_children[-1]
            if pat is None or pat.type != "identifier":
                raise self.error(p, "a closure parameter is a plain name")
            kind: ParamKind
            if c.kinds is not None:
                kind = c.kinds[k]
                actual.append(self.argument(a, kind, name))
            elif ty is not None:
                kind = self.param_type(ty, helper=True) if ty.type == "reference_type" else self.type_name(ty)
                kind = self.coerced(kind, a)
                actual.append(self.argument(a, kind, name))
            else:
                b = self.lookup(self.text(a)) if a.type == "identifier" else None
                borrowed = self.borrowed_private(a)
                if isinstance(b, Array):
                    kind = b
                    actual.append(hir.ArrayArg(b.name, b.type))
                elif borrowed is not None:  # `&mut t`: the closure's parameter is `&mut [f32; N]`
                    pb, mut = borrowed
                    self.private_here(pb, a)
                    kind = Private("", pb.rt, mut, False, a, pb.shape, ref=True)
                    actual.append(self.argument(a, kind, name))
                else:
                    v = self.expr(a)
                    if v.rt == "void":
                        raise self.error(a, NO_VALUE)
                    if v.lit:
                        v = self.literal_default(v, a)
                    kind = v.rt
                    actual.append(v.e)
            params.append((self.text(pat), kind, mutable, p))
        c.kinds = [k for _, k, _, _ in params]
        rnode = c.node.child_by_field_name("return_type")
        ret = "?" if rnode is None else self.type_name(rnode)
        sig = ",".join(
            k if isinstance(k, str) else k.spelled() if isinstance(k, Private) else f"[{k.rt}]" for _, k, _, _ in params
        )
        key = f"{name}@{c.node.start_point[0] + 1}:{c.node.start_point[1] + 1}({sig})"

        def build() -> hir.Helper:
            return self.build_helper(c.node, name, key, params, ret, c, c.node.child_by_field_name("body"))

        return self.invoke(n, name, key, actual, build, ret)

    def borrowed_private(self, a: Node) -> tuple[Private, bool] | None:
        """`&t` / `&mut t` of a per-thread array, or `t` of a helper's array parameter: the array and
        whether the reference is `&mut`; None for anything else."""
        if a.type == "reference_expression":
            inner = a.named_children[-1]
            b = self.lookup(self.text(inner)) if inner.type == "identifier" else None
            mut = any(c.type == "mutable_specifier" for c in a.children)
            return (b, mut) if isinstance(b, Private) else None
        b = self.lookup(self.text(a)) if a.type == "identifier" else None
        return (b, b.mutable) if isinstance(b, Private) and b.ref else None

    def private_argument(self, a: Node, kind: Private, callee: str) -> hir.ArrayArg:
        """A per-thread array for a `&[T; N]` / `&mut [T; N]` parameter, checked as rustc checks it:
        borrowed (`&t`, `&mut t`; a helper passes its own parameter on as `t`), of the parameter's
        element type and shape, `&mut` only of a `let mut` array or a `&mut` parameter."""
        want = kind.spelled()
        b = self.lookup(self.text(a)) if a.type == "identifier" else None
        if isinstance(b, Var) and b.rt == "poison":
            raise _Bail()
        if isinstance(b, Private) and not b.ref:
            amp = "&mut " if kind.mutable else "&"
            raise self.error(
                a, f"mismatched types: expected `{want}`, found `{b.spelled()}`: borrow it, `{amp}{self.text(a)}`"
            )
        got = self.borrowed_private(a)
        if got is None:
            inner = a.named_children[-1] if a.type == "reference_expression" else a
            ib = self.lookup(self.text(inner)) if inner.type == "identifier" else None
            if isinstance(ib, Var) and ib.rt == "poison":
                raise _Bail()
            found = f" found a slice `&{'mut ' if ib.mutable else ''}[{ib.rt}]`," if isinstance(ib, Array) else ""
            raise self.error(
                a,
                f"mismatched types: `{callee}` takes `{want}`,{found} pass a per-thread array, `&mut t`"
                if kind.mutable
                else f"mismatched types: `{callee}` takes `{want}`,{found} pass a per-thread array, `&t`",
            )
        b, mut = got
        name = self.text(a.named_children[-1] if a.type == "reference_expression" else a)
        if b.ref and a.type == "reference_expression":  # `&t` of a `&[T; N]` parameter: a reference to a reference
            if mut:
                raise self.error(
                    a, f"cannot borrow `{name}` as mutable, as it is not declared as mutable: pass `{name}`"
                )
            mut = False
        if mut and not b.mutable:
            if b.ref:
                raise self.error(a, f"cannot borrow `*{name}` as mutable, as it is behind a `&` reference")
            raise self.error(
                a, f"cannot borrow `{name}` as mutable, as it is not declared as mutable: declare it `let mut {name}`"
            )
        if kind.mutable and not mut:
            found = Private("", b.rt, False, False, a, b.shape, ref=True).spelled()
            raise self.error(a, f"types differ in mutability: expected `{want}`, found `{found}`")
        self.private_here(b, a)
        if b.flexible and b.shape == kind.shape and b.rt != kind.rt and self.same_class(b.rt, kind.rt):
            self.infer(frozenset({b.hir_name}), kind.rt)  # `let mut t = [0.0; 8]; acc(&mut t)`: as rustc infers
        if b.rt != kind.rt or b.shape != kind.shape:
            found = Private("", b.rt, mut, False, a, b.shape, ref=True).spelled()
            raise self.error(a, f"mismatched types: expected `{want}`, found `{found}`")
        return hir.ArrayArg(b.hir_name, ArrayType(ELEMENT_TYPES[b.rt], "private", len(b.shape)))

    def argument(self, a: Node, kind: ParamKind, callee: str) -> hir.Expr | hir.ArrayArg:
        """An argument for a parameter: a slice (`x`, `&x`, `&mut x`), a per-thread array (`&mut t`)
        or a value of its type."""
        if isinstance(kind, Private):
            return self.private_argument(a, kind, callee)
        if isinstance(kind, Array):
            inner = a
            if a.type == "reference_expression":
                inner = a.named_children[-1]
            b = self.lookup(self.text(inner)) if inner.type == "identifier" else None
            if isinstance(b, Var) and b.rt == "poison":
                raise _Bail()
            if isinstance(b, Private):  # a 1-D array of the element type was coerced (`coerced`): not this one
                found = Private("", b.rt, kind.mutable, False, a, b.shape, ref=True).spelled()
                amp = "&mut " if kind.mutable else "&"
                raise self.error(a, f"mismatched types: expected `{amp}[{kind.rt}]`, found `{found}`")
            if not isinstance(b, Array) or b.pointer:
                raise self.error(
                    a, f"`{callee}` takes a slice here, `&[{kind.rt}]`: pass a slice parameter or local array"
                )
            if b.rt != kind.rt:
                raise self.error(a, f"mismatched types: expected `&[{kind.rt}]`, found `&[{b.rt}]`")
            if kind.mutable and not b.mutable:
                raise self.error(a, f"`{callee}` takes `&mut [{kind.rt}]`, and `{self.text(inner)}` is not mutable")
            return hir.ArrayArg(b.name, b.type)
        v = self.expr(a, kind)
        return self.want(v, kind, a).e

    def invoke(
        self,
        n: Node,
        name: str,
        key: str,
        args: list[hir.Expr | hir.ArrayArg],
        build: Callable[[], hir.Helper],
        ret: str,
    ) -> V:
        try:
            h = self.helpers.instance(key, name, self.span(n), build)
        except HelperFailed:
            self.failed = True
            raise _Bail() from None
        except CompileError as e:
            self.diags.extend(e.diagnostics)
            raise _Bail() from None
        rt = self.result_types.get(key, ret)
        for p, a in zip(h.params, args):  # a slice whose length the helper reads: the kernel's hidden argument
            if isinstance(a, hir.ArrayArg) and self.helpers.reads_length(h, p.name):
                local = next((la for la in self.locals if la.name == a.name), None)
                if local is not None:
                    raise self.error(
                        n, f"`{name}` reads the length of a local array: pass it as a parameter ({local.count})"
                    )
                self.hidden.add(a.name + HIDDEN_LENGTH)
        if rt in ("()", "?"):
            return V(hir.Invoke(VOID, self.span(n), key, tuple(args)), "void")
        return V(hir.Invoke(RUST_TYPES[rt], self.span(n), key, tuple(args)), rt)

    def build_helper(
        self,
        node: Node,
        name: str,
        key: str,
        params: list[tuple[str, ParamKind, bool, Node]],
        ret: str,
        closure: Closure | None,
        body: Node,
    ) -> hir.Helper:
        """The helper's HIR: its body lowered in its own scope (a closure's: the scopes where it
        was defined), with its result (`return v;` or the body's tail expression)."""
        inferred: dict[int, str] = {}
        for _ in range(64):
            sub = KernelBuilder(self.f, node, inferred, name, self.helpers)
            sub.result_types = self.result_types
            sub.ret = ret
            base: set[str] = set()
            if closure is not None:  # the captured names are the caller's: the helper's own avoid them
                sub.scopes = [dict(sc) for sc in closure.scopes]
                sub.vars = dict(self.vars)
                sub.params = set(self.params)
                sub.tmp = self.tmp
                base = set(self.vars) | set(self.params)
            scope: dict[str, Binding] = {}
            hparams: list[hir.Param] = []
            own: set[str] = set()
            for pname, kind, mutable, pnode in params:
                if isinstance(kind, Private):  # the caller's per-thread array, renamed to it when inlined
                    hn = f"{pname}$array"
                    scope[pname] = Private(hn, kind.rt, kind.mutable, False, pnode, kind.shape, ref=True)
                    at = ArrayType(ELEMENT_TYPES[kind.rt], "private", len(kind.shape))
                    hparams.append(hir.Param(hn, at, self.span(pnode)))
                    continue
                if isinstance(kind, Array):
                    hn = f"{pname}$slice"
                    scope[pname] = Array(hn, kind.type, kind.rt, kind.mutable)
                    hparams.append(hir.Param(hn, kind.type, self.span(pnode)))
                    continue
                t = RUST_TYPES[kind]
                hn = sub.fresh_name(pname, t)
                own.add(hn)
                scope[pname] = Var(hn, kind, mutable, False, pnode)
                hparams.append(hir.Param(hn, t, self.span(pnode)))
            sub.scopes.append(scope)
            try:
                stmts = sub.tail(body)
                if sub.locals:
                    raise sub.error(
                        node, "workgroup arrays (local_array) are declared in kernels: pass one to the helper"
                    )
            except _Restart:
                continue
            except _Bail:
                pass
            if sub.diags:
                raise CompileError(sub.diags)
            if sub.failed:
                raise HelperFailed()
            mine = {f"{pname}$slice{HIDDEN_LENGTH}" for pname, kind, _, _ in params if isinstance(kind, Array)}
            self.hidden |= sub.hidden - mine  # the length of a slice a closure captures: the caller's
            rt = sub.ret if sub.ret is not None else "()"
            self.result_types[key] = rt
            self.toolchain_dialect |= sub.toolchain_dialect
            variables = tuple((k, v) for k, v in sub.vars.items() if k not in base and k not in own)
            result = None if rt in ("()", "?") else RUST_TYPES[rt]
            privates = tuple(sub.privates)  # its own per-thread arrays: a fresh set per call (compiler/inline.py)
            return hir.Helper(key, name, tuple(hparams), result, tuple(stmts), variables, self.span(node), privates)
        raise CompileError([Diagnostic("type inference did not settle", self.span(node))])

    def tail(self, n: Node) -> list[hir.Stmt]:
        """A helper's body or its tail: its value is the result (a `Return` with the value)."""
        t = n.type
        sp = self.span(n)
        if t == "block":
            kids = self.named_children(n)
            self.scopes.append({})
            try:
                out = list(self.stmts_of(kids[:-1]))
                if kids:
                    last = kids[-1]
                    if last.type == "expression_statement" and not self.text(last).rstrip().endswith(";"):
                        last = last.named_children[0]
                    try:
                        out += self.stmt(last) if last.type in _STATEMENTS else self.tail(last)
                    except _Bail:
                        self.poison(last)
                return out
            finally:
                self.scopes.pop()
        if self.ret == "()" or t in _STATEMENTS or t in _TAIL_STATEMENTS:
            return self.stmt(n)
        if t == "if_expression" and n.child_by_field_name("alternative") is not None:
            if n.child_by_field_name("condition").type == "let_condition":
                raise self.error(n, "`if let` is not supported: kernels have no Option values")
            cond = self.condition(n.child_by_field_name("condition"))
            then = self.tail(n.child_by_field_name("consequence"))
            alt = n.child_by_field_name("alternative")
            other = self.tail(alt.named_children[-1] if alt.type == "else_clause" else alt)
            return [hir.If(sp, cond, tuple(then), tuple(other))]
        if t == "unsafe_block":
            return self.tail(n.named_children[-1])
        v = self.expr(n, None if self.ret == "?" else self.ret)
        if v.rt == "void" and self.ret == "?":
            return [hir.ExprStmt(sp, v.e)]
        return [hir.Return(sp, self.result_value(v, n))]

    def result_value(self, v: V, n: Node) -> hir.Expr:
        if self.ret == "?":  # a closure without `-> T`: its first value's type
            if v.rt == "void":
                raise self.error(n, NO_VALUE)
            if v.lit:
                v = self.literal_default(v, n)
            self.ret = v.rt
        assert self.ret is not None
        return self.want(v, self.ret, n).e

    def helper_return(self, s: Node) -> list[hir.Stmt]:
        sp = self.span(s)
        kids = self.named_children(s)
        if self.ret == "()":
            if kids:
                raise self.error(kids[0], f"`{self.fn_name}` returns nothing: `return;` (or give it `-> T`)")
            return [hir.Return(sp)]
        if not kids:
            if self.ret == "?":
                self.ret = "()"
                return [hir.Return(sp)]
            raise self.error(s, f"`{self.fn_name}` returns {self.ret}: return a value")
        v = self.expr(kids[0], None if self.ret == "?" else self.ret)
        return [hir.Return(sp, self.result_value(v, kids[0]))]

    def f16_call(self, n: Node, fname: str, args: list[Node]) -> V:
        sp = self.span(n)
        if fname in ("from_f32", "from_f64") and len(args) == 1:
            src = "f32" if fname == "from_f32" else "f64"
            v = self.want(self.expr(args[0], src), src, args[0])
            return V(hir.Cast(F16, sp, v.e), "f16")
        raise self.error(n, "f16 values are made with f16::from_f32(x) (or from_f64)")

    def method(
        self, n: Node, recv: Node, method: str, args: list[Node], hint: str | None, want_rt: str | None = None
    ) -> V:
        sp = self.span(n)
        if method in ("sum", "product") and not args and _iterator_chain(self, recv):

            def reduce() -> tuple[list[hir.Stmt], V]:
                got = self.iter_reduce(n, hint if _result_type_known(n) else None)
                if got is None:
                    raise self.error(recv, "iterators walk a slice or a one-dimensional array (`x.iter()`, `&x[a..b]`)")
                return got

            return self.as_value(n, method, reduce)
        if (
            method == "len"
            and not args
            and recv.type == "identifier"
            and isinstance(self.lookup(self.text(recv)), Array | Private)
        ):
            arr = self.lookup(self.text(recv))
            assert isinstance(arr, Array | Private)
            if isinstance(arr, Array) and arr.pointer:
                raise self.error(n, "a raw pointer has no length: pass it as a parameter (`n: u32`)")
            if isinstance(arr, Private):
                self.private_here(arr, recv)
                return V(hir.Const(U32, sp, arr.shape[0]), "usize")
            if arr.count is not None:
                return V(hir.Const(U32, sp, arr.count), "usize")
            hn = arr.name + HIDDEN_LENGTH
            self.hidden.add(hn)
            return V(hir.Cast(U32, sp, hir.Var(I32, sp, hn)), "usize")
        row = ROWS.get(METHODS.get(method, ""))
        same = row is not None and row.rule is Rule.SAME
        x = self.expr(recv, want_rt or (hint if same or method in WRAPPING else None))
        if x.lit:
            if want_rt:
                x = self.retype(x, want_rt, recv)
            else:
                raise self.error(
                    recv, f"can't call method `{method}` on an ambiguous numeric type: add a suffix, e.g. 2.0_f32"
                )
        if want_rt and x.rt != want_rt:
            raise self.error(recv, self.mismatch(want_rt, x.rt, recv))
        rt = x.rt
        if method in ("to_f32", "to_f64") and rt == "f16" and not args:
            to = method[3:]
            return V(hir.Cast(RUST_TYPES[to], sp, x.e), to)
        if row is not None:
            if rt not in METHOD_TYPES[method]:
                fix = f": convert first, `(x as f32).{method}()`" if method in _FLOAT_METHODS and rt in INTS else ""
                raise self.error(n, f"no method named `{method}` found for {rt}{fix}")
            if rt in INTS:
                row = ROWS[INT_METHODS.get(method, row.name)]
            if len(args) != len(row.args) - 1:  # Rust methods take a fixed number of arguments
                k = len(row.args) - 1
                raise self.error(
                    n,
                    f"`{method}` takes {k} argument{'s' if k != 1 else ''} but {len(args)} "
                    f"{'were' if len(args) != 1 else 'was'} supplied",
                )
            return self.bind_call(n, row, method, [recv, *args], hint, x)
        if method in WRAPPING:
            self.nargs(n, args, 1, method)
            if rt not in INTS:
                raise self.error(n, f"{method} takes integers, not {rt}")
            y = self.expr(args[0], "u32" if method in ("wrapping_shl", "wrapping_shr") else rt)
            return self.binary(WRAPPING[method], x, y, n, recv, args[0], wrapping=True)
        if method == "wrapping_neg":
            self.nargs(n, args, 0, method)
            return V(hir.Unary(x.e.type, sp, hir.UnaryOp.NEG, x.e), rt)
        if method == "recip" and rt in ("f32", "f64"):
            self.nargs(n, args, 0, method)
            return V(hir.Binary(x.e.type, sp, BinOp.DIV, hir.Const(x.e.type, sp, 1.0), x.e), rt)
        if method in ("clone", "to_owned") and not args:
            return x
        if method in ("iter", "into_iter", "map", "collect", "for_each", "push"):
            raise self.error(
                n, f"iterators and closures are not supported in kernels (`.{method}()`): write a for loop over a range"
            )
        raise self.error(f_field(n), f"no method `{method}` for {rt} in kernels")

    def nargs(self, n: Node, args: list[Node], k: int, name: str) -> None:
        if len(args) != k:
            raise self.error(n, f"{name} takes {k} argument(s), {len(args)} given")

    def bind_call(
        self, n: Node, row: Builtin, spelled: str, nodes: list[Node], hint: str | None, recv: V | None = None
    ) -> V:
        """A builtin's call (`spelled` as the kernel wrote it; a method's receiver is `nodes[0]`,
        already lowered as `recv`), bound by compiler/bind.py with Rust's reading of the arguments
        (_Args: no implicit conversions; unsuffixed literals take the other values' type), and
        the binder's refusal placed at its argument with Rust's fix-it."""
        if row.rule is Rule.LOCAL:
            raise self.error(
                n, "local_array::<T, N>() names its element type and count: let s = local_array::<f32, 256>();"
            )
        if bind.toolchain_id(row, len(nodes)):
            self.toolchain_dialect = True  # builtins.TOOLCHAIN_WORKGROUP
        args = _Args(self, row, spelled, hint, nodes[0] if recv is not None else None, recv)
        r = bind.call(row, self.span(n), args, nodes, spelled=spelled, variadic=False)  # Rust's min/max take two
        if isinstance(r, bind.Refusal):
            msg = r.message
            if row.rule is Rule.MATH and r.arg is not None:  # an f64 or f16 the device has no op for
                form = f"(x as f32).{spelled}()" if recv is not None else f"{spelled}(x as f32)"
                msg += f": `{form}` computes it in f32, if that is what you mean"
            raise self.error(bind.at(r, nodes) or n, msg)
        sp = self.span(n)
        if row.rule in (Rule.ID, Rule.BITS):  # Rust's ids and bit counts are u32
            return V(hir.Cast(U32, sp, r), "u32")
        if r.type is VOID:
            return V(r, "void")
        if row.rule is Rule.ATOMIC and args.elem is not None:
            return V(r, args.elem.rt)
        if row.rule in (Rule.PREDICATE, Rule.VOTE):
            return V(r, r.type.name)
        return V(r, args.rt)

    def value_type(self, row: Builtin, nodes: list[Node], values: list[V]) -> tuple[str, list[V]]:
        """The VALUE arguments of one call in one Rust type: the first typed one's; unsuffixed
        literals adopt it (all literals: their default); nothing converts."""
        typed = [v for v in values if not v.lit]
        rt = typed[0].rt if typed else self.literal_default(values[0], nodes[0]).rt
        out: list[V] = []
        for v, node in zip(values, nodes):
            if v.rt == "void":
                raise self.error(node, NO_VALUE)
            v = self.want(v, rt, node)
            self.no_narrow(v, node)
            if row.rule in (Rule.WAVE, Rule.ATOMIC) and rt != v.e.type.name:  # the crate's Value: i32, u32, f32
                raise self.error(node, builtins.wave_values(row.name, rt))
            out.append(v)
        return rt, out

    def constant(self, n: Node, rt: str) -> int | float | bool | None:
        """A constant argument (an axis, a power), or None when it is not one (the binder refuses)."""
        mark = len(self.diags)
        try:
            return self.f.const_eval(n, rt, self)
        except _Bail:
            del self.diags[mark:]
            return None

    def from_call(self, n: Node, to: str, args: list[Node]) -> V:
        """`u32::from(c)`: Rust's lossless conversions (From), a bool to 0 or 1 included."""
        if len(args) != 1:
            raise self.error(n, f"{to}::from takes 1 argument but {len(args)} were supplied")
        v = self.expr(args[0], to)
        if v.lit:
            v = self.retype(v, to, args[0]) if self.same_class(v.rt, to) else self.literal_default(v, args[0])
        if v.rt not in FROM[to]:
            raise self.error(
                n,
                f"the trait `From<{v.rt}>` is not implemented for `{to}` (the conversion may lose or change "
                f"the value): `x as {to}` converts as Rust's `as` does, if that is what you mean",
            )
        sp, t = self.span(n), RUST_TYPES[to]
        if v.rt == "bool":
            return V(
                hir.IfExpr(
                    t, sp, v.e, hir.Const(t, sp, 1 if t.is_int else 1.0), hir.Const(t, sp, 0 if t.is_int else 0.0)
                ),
                to,
            )
        return V(v.e if v.e.type is t else hir.Cast(t, sp, v.e), to)

    def cmp_call(self, n: Node, name: str, args: list[Node], hint: str | None) -> V:
        """`core::cmp::min(a, b)`: Ord's min and max, of integers (f32 is not Ord: rustc refuses)."""
        r = self.bind_call(n, ROWS[CMP_FUNCTIONS[name]], name, args, hint)
        if r.rt not in INTS:
            raise self.error(
                n, f"the trait bound `{r.rt}: Ord` is not satisfied: floats have the method, `a.{name}(b)`"
            )
        return r

    def builtin(self, n: Node, name: str, args: list[Node], hint: str | None) -> V:
        row = ROWS.get(FUNCTIONS.get(name, ""))
        if row is not None:
            return self.bind_call(n, row, name, args, hint)
        if name in HEAP:
            raise self.error(n, f"{name} allocates on the heap, which kernels do not have")
        raise self.error(
            n.child_by_field_name("function"),
            f"cannot find function `{name}`: kernels call wave's builtins and the file's functions",
        )


class _Args:
    """How Rust reads a builtin call's arguments (a bind.Reader): an axis or count is a constant
    expression, a scope `Scope::Workgroup`, an atomic's array a slice and its index a usize or
    u32, a lane or distance a u32; the values one Rust type (KernelBuilder.value_type)."""

    def __init__(self, k: KernelBuilder, row: Builtin, spelled: str, hint: str | None, recv: Node | None, v: V | None):
        self.k, self.row, self.spelled, self.hint = k, row, spelled, hint
        self.recv, self.recv_v = recv, v  # a method's receiver, already lowered
        self.elem: Array | None = None  # an atomic's array
        self.rt = ""  # the values' Rust type

    def constant(self, node: Node, kind: Arg) -> bind.Actual:  # powi(n: i32), pow(n: u32): the device unrolls
        return self.k.constant(node, "u32" if kind is Arg.AXIS else COUNT_TYPES.get(self.spelled, "u32"))

    def scope(self, node: Node) -> bind.Actual:
        txt = self.k.text(node).replace(" ", "").split("::")
        if len(txt) < 2 or txt[-2] != "Scope" or txt[-1] not in SCOPES:
            raise self.k.error(node, "fence takes Scope::Wave, Scope::Workgroup or Scope::Device")
        return SCOPES[txt[-1]]

    def type(self, node: Node) -> bind.Actual:
        return NARROW.get(self.k.text(node)) or ELEMENT_TYPES.get(self.k.text(node))

    def array(self, node: Node) -> bind.ArrayRef | None:
        an = node
        while an.type == "reference_expression":
            an = an.named_children[-1]
        b = self.k.lookup(self.k.text(an)) if an.type == "identifier" else None
        if isinstance(b, Var) and b.rt == "poison":
            raise _Bail()
        self.elem = b if isinstance(b, Array) and not b.pointer else None  # the crate's atomics take slices
        return bind.ArrayRef(self.elem.name, self.elem.type.elem) if self.elem else None

    def index(self, node: Node) -> hir.Expr:
        if self.row.rule is not Rule.ATOMIC:  # a lane or distance: u32
            return self.k.want(self.k.expr(node, "u32"), "u32", node).e
        idx = self.k.expr(node, "usize")  # the crate's Index: usize or u32
        if idx.lit:
            idx = self.k.retype(idx, "usize", node)
        if idx.rt not in ("usize", "u32"):
            raise self.k.error(
                node, f"an index is a usize or u32, not {idx.rt}: convert it, `{self.k.text(node)} as u32`"
            )
        return idx.e

    def condition(self, node: Node) -> hir.Expr:
        return self.k.condition(node)

    def element(self, node: Node, elem: ScalarType) -> hir.Expr:
        assert self.elem is not None
        return self.k.want(self.k.expr(node, self.elem.rt), self.elem.rt, node).e

    def value(self, node: Node) -> V:
        return self.recv_v if node is self.recv and self.recv_v is not None else self.k.expr(node, self.hint)

    def values(self, read: list[V], nodes: list[Node]) -> list[hir.Expr]:
        self.rt, vs = self.k.value_type(self.row, nodes, read)
        return [v.e for v in vs]


# nodes a helper's tail lowers as statements (their value is `()`)
_STATEMENTS = frozenset(
    ("let_declaration", "expression_statement", "const_item", "empty_statement", "line_comment", "block_comment")
)
_TAIL_STATEMENTS = frozenset(
    (
        "assignment_expression",
        "compound_assignment_expr",
        "return_expression",
        "for_expression",
        "while_expression",
        "loop_expression",
        "break_expression",
        "continue_expression",
        "macro_invocation",
    )
)


def _recomputable(e: hir.Expr) -> bool:
    """An expression that gives the same value wherever it is evaluated again (no call: an atomic
    has effects, a wave operation reads the lanes active where it runs)."""
    if isinstance(e, hir.Var | hir.Const):
        return True
    if isinstance(e, hir.Load):
        return _recomputable(e.index)
    if isinstance(e, hir.Unary | hir.Cast):
        return _recomputable(e.operand)
    if isinstance(e, hir.Binary | hir.Compare | hir.Logical):
        return _recomputable(e.left) and _recomputable(e.right)
    if isinstance(e, hir.IfExpr):
        return _recomputable(e.cond) and _recomputable(e.then) and _recomputable(e.other)
    return False


def _iterator_chain(b: KernelBuilder, n: Node) -> bool:
    """Is `n` an iterator chain over a slice or array (`x.iter()`, `&x[a..]`, `.map(..)`, `.zip(..)`,
    `.copied()` of one)?"""
    parts = b.method_parts(n)
    while parts is not None and parts[1] in ("map", "zip", "copied", "cloned"):
        n = parts[0]
        parts = b.method_parts(n)
    while n.type == "parenthesized_expression":
        n = n.named_children[0]
    if n.type == "range_expression":  # `(0..n).map(|k| ..).sum()`
        return True
    return (
        parts is not None and parts[1] in ("iter", "into_iter") and not parts[2]
    ) or n.type == "reference_expression"


def _use_fixes_type(let: Node, name: str) -> bool:
    """Does the first use of `let`'s `name` after it fix its type, as rustc's inference needs for an
    unannotated `let s = x.iter().sum();` (`o[i] = s;` does; `s * 2.0` does not: E0282)?"""
    sib = let.next_named_sibling
    while sib is not None:
        stack = [sib]
        while stack:
            x = stack.pop()
            if x.type == "identifier" and x.text is not None and x.text.decode() == name:
                return _result_type_known(x)
            stack.extend(reversed(x.named_children))
        sib = sib.next_named_sibling
    return False


def _result_type_known(n: Node) -> bool:
    """Does rustc know the type of `n`'s value from where it goes (so that `.sum()` needs no
    turbofish)? The right side of `=`, an argument of a function of the file, a `return` value or
    a function's tail; not an operand (`2.0 * x.iter().sum()` is E0284, `s += ...` E0283)."""
    p = n.parent
    if p is None:
        return False
    if p.type == "assignment_expression":
        return p.child_by_field_name("right") is not None and p.child_by_field_name("right").id == n.id
    if p.type == "arguments":
        call = p.parent
        f = call.child_by_field_name("function") if call is not None else None
        return f is not None and f.type == "identifier"  # a helper's parameter type (builtins are generic)
    if p.type == "return_expression":
        return True
    if p.type == "let_declaration":  # `let t: f32 = s;`
        value = p.child_by_field_name("value")
        return p.child_by_field_name("type") is not None and value is not None and value.id == n.id
    if p.type == "block" and p.parent is not None and p.parent.type == "function_item":
        kids = [c for c in p.named_children if c.type not in ("line_comment", "block_comment")]
        return bool(kids) and kids[-1].id == n.id
    return False


def f_field(n: Node) -> Node:
    f = n.child_by_field_name("function")
    return f.child_by_field_name("field") if f is not None and f.type == "field_expression" else n


class RustKernels:
    """The kernels of one Rust source file, with its `const` items and function names."""

    def __init__(self, text: str, file: str):
        self.src, self.root = treesitter.parse("rust", text, file)
        self.consts: dict[str, tuple[int | float | bool, str]] = {}
        self.const_nodes: dict[str, Node] = {}
        self.functions: dict[str, Node] = {}
        self.foreign: dict[str, str] = {}  # names of host items (structs, statics, ...) -> why a kernel cannot use them
        self.kernels: list[tuple[Node, dict[str, object]]] = []
        self.diags: list[Diagnostic] = []
        # The Rust toolchain's dialect (COMPAT.md): a file that names no `wave` path (no `use
        # wave::*;`, no `#[wave::kernel]`), which rustc cannot check anyway, may index slices
        # with a u32 as that toolchain's kernels do; every other file follows rustc (E0277)
        self.toolchain_file = not any(
            n.type in ("scoped_identifier", "use_declaration", "scoped_use_list", "use_wildcard")
            and self.src.node_text(n).lstrip(":").removeprefix("crate::").replace(" ", "").startswith("wave")
            for n in treesitter.walk(self.root)
        )

    def error(self, n: Node, msg: str) -> _Bail:
        self.diags.append(Diagnostic(msg, self.src.span(n)))
        return _Bail()

    def collect(self) -> None:
        attrs: list[Node] = []
        marked: list[tuple[Node, dict[str, object]]] = []
        for item in self.root.named_children:
            t = item.type
            if t in ("line_comment", "block_comment", "inner_attribute_item", "empty_statement"):
                continue
            if t == "attribute_item":
                attrs.append(item)
                continue
            if t == "function_item":
                name = self.src.node_text(item.child_by_field_name("name"))
                if name in self.functions:  # rustc: E0428, defined multiple times
                    self.diags.extend(
                        treesitter.duplicates(self.src, [(name, self.functions[name]), (name, item)], "function")
                    )
                self.functions[name] = item
                try:
                    opts = self.kernel_attribute(attrs)
                except _Bail:  # recorded in self.diags
                    opts = {}
                if opts is not None:
                    marked.append((item, opts))
            elif t == "use_declaration":
                pass
            elif t == "const_item":
                ty = item.child_by_field_name("type")
                name = self.src.node_text(item.child_by_field_name("name"))
                if ty is not None and self.src.node_text(ty) in RUST_TYPES and self.src.node_text(ty) != "f16":
                    with contextlib.suppress(_Bail):  # recorded in self.diags
                        self.const_item(item, None, None)
                else:  # host code's constant: an error only where a kernel uses it
                    self.foreign[name] = (
                        f"the constant `{name}` is no kernel value (constants are i32, u32, usize, f32, f64 or bool)"
                    )
            elif t in ("struct_item", "enum_item", "union_item", "type_item", "trait_item"):
                # host code beside the kernels: refused where a kernel names it
                name_node = item.child_by_field_name("name")
                if name_node is not None:
                    what = t.replace("_item", "")
                    self.foreign[self.src.node_text(name_node)] = (
                        f"{'traits' if what == 'trait' else what + 's'} are not supported in kernels "
                        "(no structs, enums or virtual calls on the GPU): pass scalars and slices"
                    )
            elif t == "static_item":
                name = self.src.node_text(item.child_by_field_name("name"))
                self.foreign[name] = f"static `{name}` is not available in kernels (no global variables): use a const"
            elif t in ("impl_item", "mod_item", "macro_definition", "extern_crate_declaration", "foreign_mod_item"):
                pass  # host code beside the kernels
            else:
                self.error(item, f"{t.replace('_', ' ')} is not supported at the top level of a kernel file")
            attrs = []
        self.kernels = marked or [(f, {}) for f in self.functions.values()]
        if not self.kernels and not self.diags:
            self.diags.append(
                Diagnostic("no kernel function found (mark one #[wave::kernel])", treesitter.file_start(self.src))
            )

    def kernel_attribute(self, attrs: list[Node]) -> dict[str, object] | None:
        for a in attrs:
            attr = a.named_children[0]
            path = self.src.node_text(attr.named_children[0]).replace(" ", "")
            if path in ("kernel", "wave::kernel"):
                args = attr.child_by_field_name("arguments")
                return self.kernel_options(args) if args is not None else {}
        return None

    def kernel_options(self, tt: Node) -> dict[str, object]:
        """`#[wave::kernel(workgroup = (16, 16), max_registers = 32)]`: constants of the file."""
        out: dict[str, object] = {}
        toks = [c for c in tt.children if c.type not in ("(", ")", "line_comment", "block_comment")]
        i = 0
        while i < len(toks):
            key = toks[i]
            if key.type != "identifier" or i + 2 >= len(toks) or self.src.node_text(toks[i + 1]) != "=":
                raise self.error(key, "kernel options are `workgroup = (16, 16)` or `max_registers = 32`")
            name, value = self.src.node_text(key), toks[i + 2]
            if name not in ("workgroup", "max_registers"):
                raise self.error(key, f"unknown kernel option `{name}` (workgroup, max_registers)")
            parts = [c for c in value.named_children] if value.type == "token_tree" else [value]
            nums = []
            for part in parts:
                v = self.const_eval(part, "u32", None)
                if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                    raise self.error(part, f"{name} takes positive integer constants")
                nums.append(v)
            if not 1 <= len(nums) <= (3 if name == "workgroup" else 1):
                raise self.error(value, f"{name} takes {'one to three sizes' if name == 'workgroup' else 'one count'}")
            out[name] = tuple(nums) if name == "workgroup" else nums[0]
            i += 3
            if i < len(toks):
                if self.src.node_text(toks[i]) != ",":
                    raise self.error(toks[i], "separate kernel options with commas")
                i += 1
        return out

    def consts_lookup(self, name: str, low: KernelBuilder | None) -> tuple[int | float | bool, str] | None:
        if low is not None:
            for sc in reversed(low.scopes):
                c = sc.get("const " + name)
                if c is not None:
                    return c  # type: ignore[return-value]
                if name in sc:
                    return None
        return self.consts.get(name)

    def const_item(self, item: Node, scope: dict | None, low: KernelBuilder | None) -> None:
        name = self.src.node_text(item.child_by_field_name("name"))
        ty = item.child_by_field_name("type")
        value = item.child_by_field_name("value")
        owner = low or self
        tname = self.src.node_text(ty) if ty is not None else ""
        if tname not in RUST_TYPES or tname == "f16":
            raise owner.error(ty or item, "constants are i32, u32, usize, f32, f64 or bool")
        v = self.const_eval(value, tname, low)
        if scope is not None:
            scope["const " + name] = (v, tname)
        else:
            self.consts[name] = (v, tname)

    def const_eval(self, n: Node, rt: str, low: KernelBuilder | None) -> int | float | bool:
        """A constant expression of Rust type rt (literals, constants, + - * / % & | ^ << >>, casts)."""
        owner = low or self
        t = n.type
        txt = self.src.node_text(n)
        if t == "parenthesized_expression":
            return self.const_eval(n.named_children[0], rt, low)
        if t == "block" and len(n.named_children) == 1:
            return self.const_eval(n.named_children[0], rt, low)
        if t == "integer_literal":
            v, suffix = parse_int(txt)
            if suffix in FLOATS:
                return float(v)
            if rt in FLOATS and suffix is None:
                raise owner.error(n, f"expected {rt}, found an integer literal: write {v}.0")
            if not _fits(v, suffix or rt) and (suffix or rt) in INTS:
                raise owner.error(n, f"literal out of range for {suffix or rt}: {v}")
            return v
        if t == "float_literal":
            if rt in INTS:
                raise owner.error(n, f"expected {rt}, found a float literal")
            return parse_float(txt)[0]
        if t == "boolean_literal":
            return txt == "true"
        if t in ("negative_literal",) or (t == "unary_expression" and txt.startswith("-")):
            v = self.const_eval(n.named_children[0], rt, low)
            if rt in ("u32", "usize"):
                raise owner.error(n, f"cannot apply unary operator `-` to type `{rt}`")
            return -v
        if t in ("identifier", "type_identifier"):  # a constant generic argument parses as a type
            c = self.consts_lookup(txt, low)
            if c is None:
                raise owner.error(
                    n, f"`{txt}` is not a constant: a constant expression is needed here (const {txt}: u32 = ...;)"
                )
            return c[0]
        if t == "scoped_identifier":
            parts = txt.replace(" ", "").split("::")
            if parts[0] in TYPE_CONSTS and len(parts) == 2 and parts[1] in TYPE_CONSTS[parts[0]]:
                return TYPE_CONSTS[parts[0]][parts[1]]
            if len(parts) == 2 and parts[0] == "wave":
                c = self.consts_lookup(parts[1], low)
                if c is not None:
                    return c[0]
            raise owner.error(n, f"unknown constant `{txt}`")
        if t == "type_cast_expression":
            to = self.src.node_text(n.child_by_field_name("type"))
            inner = self.const_eval(n.child_by_field_name("value"), to if to in RUST_TYPES else rt, low)
            if to in INTS:
                return _wrap(int(inner), to) if not isinstance(inner, float) else int(inner)
            return float(inner)
        if t == "binary_expression":
            op = self.src.node_text(n.child_by_field_name("operator"))
            a = self.const_eval(n.child_by_field_name("left"), rt, low)
            b = self.const_eval(n.child_by_field_name("right"), rt if op not in ("<<", ">>") else "u32", low)
            try:
                if isinstance(a, float) or isinstance(b, float):
                    r: int | float = {"+": a + b, "-": a - b, "*": a * b}.get(op) if op != "/" else a / b  # type: ignore[assignment]
                    if r is None:
                        raise owner.error(n, f"`{op}` is not a constant float operation")
                    return r
                a, b = int(a), int(b)
                if op == "/":
                    r = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)
                elif op == "%":
                    r = a - abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1) * b
                elif op in ("<<", ">>"):
                    r = a << b if op == "<<" else a >> b
                else:
                    r = {"+": a + b, "-": a - b, "*": a * b, "&": a & b, "|": a | b, "^": a ^ b}[op]
            except ZeroDivisionError:
                raise owner.error(n, "attempt to divide by zero in a constant") from None
            except KeyError:
                raise owner.error(n, f"`{op}` is not supported in a constant") from None
            if rt in INTS and not _fits(r, rt):
                raise owner.error(n, f"this arithmetic operation will overflow: {r} is no {rt}")
            return r
        raise owner.error(n, "a constant expression is needed here (literals, constants and arithmetic)")

    def lower(self) -> list[hir.Function]:
        self.collect()
        if self.diags:
            raise CompileError(self.diags)
        out = []
        for fn, opts in self.kernels:
            inferred: dict[int, str] = {}
            for _ in range(64):
                low = KernelBuilder(self, fn, inferred)
                try:
                    f = low.run()
                except _Restart:
                    continue
                except _Bail:
                    raise CompileError(low.diags) from None
                dup = treesitter.param_errors(f)
                if dup:  # rustc: E0415, identifier bound more than once in this parameter list
                    raise CompileError(dup)
                break
            else:  # pragma: no cover - inference settles in one step per variable
                raise CompileError([Diagnostic("type inference did not settle", self.src.span(fn))])
            if low.toolchain_dialect and "workgroup" not in opts:
                opts = {**opts, "workgroup": TOOLCHAIN_WORKGROUP}
            out.append(
                hir.Function(
                    f.name,
                    f.params,
                    f.body,
                    f.variables,
                    f.locals,
                    f.source_file,
                    f.workgroup_size,
                    opts,
                    low.helpers.built(),
                    privates=f.privates,
                )
            )
        return out


class RustFrontend:
    """The FRONTENDS entry for Rust (compiler/frontends/__init__.py)."""

    name = "rust"
    suffixes = (".rs",)

    def parse(self, text: str, file: str) -> list[hir.Function]:
        return RustKernels(text, file).lower()


RUST = RustFrontend()

__all__ = ["RUST", "SPELLINGS", "RustFrontend"]
