"""The C++ frontend: tree-sitter-cpp trees to the same typed HIR the Python frontend builds.

Kernels are `void` functions marked `[[wave::kernel]]` (or the Rust toolchain's `__kernel`, or
CUDA's `__global__`); other functions of the file are helpers, inlined at their call sites, and
function templates are instantiated there (explicit `f<float>(x)` or deduced from the argument
types). The arithmetic is C++'s own: the integer promotions and the usual arithmetic conversions
(`int32_t < uint32_t` compares as unsigned, `int / int` truncates), floating literals are `double`
unless suffixed `f`, implicit conversions on assignment, `?:` and `&&`/`||` evaluate lazily.
Signed overflow, undefined in C++, wraps (two's complement), as every 32-bit operation here does.

`__kernel`, `__global__`, `__device__` and `__shared__` are macros in the declaration header
(support/cpp/wave.hpp); the tree-sitter grammar does not know them, so they are blanked out
before parsing (same length: every span stays exact) and their places remembered.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

import numpy as np

from ...errors import CompileError, Diagnostic, Span
from .. import bind, builtins, hir
from ..builtins import (
    ATOMIC_OPS,
    CASTS,
    CONSTANTS,
    IDS,
    MATH1,
    NO_AXIS,
    NO_VALUE,
    NOT_AN_INDEX,
    ROWS,
    TOOLCHAIN_WORKGROUP,
    VOID,
    VOTES,
    WAVE1,
    Arg,
    Builtin,
    Kind,
    Rule,
)
from ..inline import HelperFailed, Helpers
from ..types import BOOL, F16, F32, F64, I8, I16, I32, U8, U16, U32, ArrayType, ScalarType
from . import cppinclude
from .treesitter import Node, Source, file_start, param_errors, parse

BinOp = hir.BinaryOp
Cmp = hir.CompareOp

# ---- types -------------------------------------------------------------------------------------
TYPES: dict[str, ScalarType] = {
    "int32_t": I32,
    "int": I32,
    "signed": I32,
    "signed int": I32,
    "uint32_t": U32,
    "unsigned": U32,
    "unsigned int": U32,
    "float": F32,
    "double": F64,
    "half": F16,
    "_Float16": F16,
    "bool": BOOL,
    "uint8_t": U8,
    "int8_t": I8,
    "uint16_t": U16,
    "int16_t": I16,
}
NOT_SUPPORTED_TYPES = {
    "long": "64-bit integers are not in the kernel language (int32_t, uint32_t)",
    "size_t": "size_t is 64-bit in C++ and this device's integers are 32-bit (i * stride would wrap where C++ "
    "does not): index with uint32_t, which holds every index of a buffer (buffers are below 4 GiB)",
    "int64_t": "64-bit integers are not in the kernel language (int32_t, uint32_t)",
    "uint64_t": "64-bit integers are not in the kernel language (int32_t, uint32_t)",
    "short": "short is a storage-only type here: int16_t arrays hold 16-bit values, variables are int32_t",
    "char": "char is a storage-only type here: use uint8_t/int8_t arrays, and int32_t variables",
    "long double": "long double is not in the kernel language (float, double, half)",
}

# the C++ names of the kernel language's types (diagnostics speak C++)
_CPP_NAMES = {
    "i32": "int32_t",
    "u32": "uint32_t",
    "f32": "float",
    "f64": "double",
    "f16": "half",
    "bool": "bool",
    "u8": "uint8_t",
    "i8": "int8_t",
    "u16": "uint16_t",
    "i16": "int16_t",
}
_TYPE_WORD = re.compile(r"\b(" + "|".join(_CPP_NAMES) + r")\b")


def _cpp_words(message: str) -> str:
    """A binder message in C++'s type names (f32 -> float, u32 -> uint32_t)."""
    return _TYPE_WORD.sub(lambda m: _CPP_NAMES[m.group(1)], message)


# ---- operators ---------------------------------------------------------------------------------
ARITH = {"+": BinOp.ADD, "-": BinOp.SUB, "*": BinOp.MUL, "/": BinOp.DIV, "%": BinOp.TRUNC_REM}
BITS = {"&": BinOp.AND, "|": BinOp.OR, "^": BinOp.XOR}
SHIFTS = {"<<": BinOp.SHL, ">>": BinOp.SHR}
COMPARES = {"==": Cmp.EQ, "!=": Cmp.NE, "<": Cmp.LT, "<=": Cmp.LE, ">": Cmp.GT, ">=": Cmp.GE}


# ---- builtins: the spelling table (compiler/builtins.py holds the rows, compiler/bind.py binds) --
class Form(Enum):
    """How a C++ spelling converts its value arguments before the row binds them (C++'s overloads)."""

    EXACT = "exact"  # ids, sync, atomics, wave ops: the arguments as they are (integral promotions)
    WAVE = "wave"  # wave::'s float and double overloads: the argument's type; an integer is ambiguous
    C = "c"  # <cmath> (std::sqrt, sqrt, fmin): an integer argument becomes double, then one common type
    FLOAT = "float"  # C's float functions (sqrtf, powf, fminf): every argument converts to float
    ONE_T = "one_t"  # a template of one T (std::min, std::clamp, wave::sign): the arguments' types agree
    ABS = "abs"  # abs / std::abs: int or floating overloads (an unsigned argument is ambiguous)
    UINT = "uint"  # GCC's __builtin_popcount/clz/ctz: an integer converts to unsigned int
    UNSIGNED = "unsigned"  # <bit>'s std::popcount/countl_zero/countr_zero: unsigned integers only
    CAST = "cast"  # wave::i32(x) ...: a conversion by the row's type
    GCC_POWI = "gcc_powi"  # __builtin_powif(x, n): float x, an int n (a constant here)


def _spell(rows: dict[tuple[str, str], tuple[str, Form]], row: str, form: Form, *names: str) -> None:
    for name in names:
        ns, _, n = name.rpartition("::")
        rows[(ns, n)] = (row, form)


NO_CMATH = frozenset({"rsqrt"})  # the math rows <cmath> has no function for


def _calls() -> dict[tuple[str, str], tuple[str, Form]]:
    """(namespace, name) of a callee -> (row, form): `wave::sqrt`, `std::sqrt`, `sqrt`, `sqrtf`, ...
    The unqualified wave names are those of `using namespace wave;` (WAVE_USING_NAMESPACE)."""
    out: dict[tuple[str, str], tuple[str, Form]] = {}
    for n, row in ROWS.items():
        if row.kind in (Kind.ID, Kind.SYNC, Kind.ATOMIC, Kind.WAVE, Kind.VOTE, Kind.LOCAL):
            if row.rule is builtins.Rule.PRIVATE:  # C++ declares a per-thread array: float t[N];
                continue
            _spell(out, n, Form.EXACT, f"wave::{n}", n)
    for n in (*MATH1, "fma"):
        _spell(out, n, Form.WAVE, f"wave::{n}", n)
        if n in NO_CMATH:  # rsqrtf: CUDA's (wave.hpp declares it), no <cmath> function
            _spell(out, n, Form.FLOAT, f"{n}f")
            continue
        _spell(out, n, Form.C, f"std::{n}", n)
        _spell(out, n, Form.FLOAT, f"{n}f")
    _spell(out, "abs", Form.ABS, "wave::abs", "std::abs", "abs")
    _spell(out, "abs", Form.C, "std::fabs", "fabs")
    _spell(out, "abs", Form.FLOAT, "fabsf")
    for n in ("min", "max"):
        _spell(out, n, Form.ONE_T, f"wave::{n}", f"std::{n}", n)
        _spell(out, n, Form.C, f"std::f{n}", f"f{n}")
        _spell(out, n, Form.FLOAT, f"f{n}f")
    for n, t in CASTS.items():
        if t is not BOOL:  # `bool` is a keyword: static_cast<bool>(x), bool(x)
            _spell(out, n, Form.CAST, f"wave::{n}")
    # the rows added with the binder (issue 23)
    _spell(out, "pow", Form.WAVE, "wave::pow")
    _spell(out, "pow", Form.C, "std::pow", "pow")
    _spell(out, "pow", Form.FLOAT, "powf")
    _spell(out, "powi", Form.GCC_POWI, "__builtin_powif")
    _spell(out, "round_away", Form.WAVE, "wave::round")
    _spell(out, "round_away", Form.C, "std::round", "round")
    _spell(out, "round_away", Form.FLOAT, "roundf")
    _spell(out, "trunc", Form.WAVE, "wave::trunc")
    _spell(out, "trunc", Form.C, "std::trunc", "trunc")
    _spell(out, "trunc", Form.FLOAT, "truncf")
    _spell(out, "round_even", Form.WAVE, "wave::rint", "wave::nearbyint")
    _spell(out, "round_even", Form.C, "std::rint", "rint", "std::nearbyint", "nearbyint")
    _spell(out, "round_even", Form.FLOAT, "rintf", "nearbyintf")
    _spell(out, "clamp", Form.ONE_T, "wave::clamp", "std::clamp")
    _spell(out, "sign", Form.ONE_T, "wave::sign")
    # the other languages' meanings, by their row names (std::min, std::max and std::clamp have
    # min_first's, max_first's and clamp_keep_nan's meaning on floats: STANDARD_ORDER below)
    _spell(out, "signum", Form.FLOAT, "wave::signum")
    _spell(out, "round_half_up", Form.WAVE, "wave::round_half_up")
    for n in ("min_first", "max_first", "clamp_keep_nan"):
        _spell(out, n, Form.ONE_T, f"wave::{n}")
    _spell(out, "isnan", Form.WAVE, "wave::isnan", "isnan")  # <cmath> has std::isnan only
    _spell(out, "isnan", Form.C, "std::isnan", "__builtin_isnan")
    for row, gcc, std in (
        ("popcount", "popcount", "popcount"),
        ("clz", "clz", "countl_zero"),
        ("ctz", "ctz", "countr_zero"),
    ):
        _spell(out, row, Form.UINT, f"__builtin_{gcc}", f"wave::{row}")
        _spell(out, row, Form.UNSIGNED, f"std::{std}")
    return out


CALLS = _calls()


# std::min, std::max and std::clamp are, in the standard's words, `(b < a) ? b : a`, `(a < b) ? b : a`
# and `v < lo ? lo : hi < v ? hi : v`: on floats a NaN or a signed zero gives what g++ gives, not
# the device's min/max (the non-NaN operand); their calls of float type become those comparisons
def _lt(sp: Span, a: hir.Expr, b: hir.Expr) -> hir.Expr:
    return hir.Compare(BOOL, sp, Cmp.LT, a, b)


def _std_min(sp: Span, a: hir.Expr, b: hir.Expr) -> hir.Expr:
    return hir.IfExpr(a.type, sp, _lt(sp, b, a), b, a)


def _std_max(sp: Span, a: hir.Expr, b: hir.Expr) -> hir.Expr:
    return hir.IfExpr(a.type, sp, _lt(sp, a, b), b, a)


def _std_clamp(sp: Span, v: hir.Expr, lo: hir.Expr, hi: hir.Expr) -> hir.Expr:
    return hir.IfExpr(v.type, sp, _lt(sp, v, lo), lo, hir.IfExpr(v.type, sp, _lt(sp, hi, v), hi, v))


STANDARD_ORDER: dict[tuple[str, str], Callable[..., hir.Expr]] = {
    ("std", "min"): _std_min,
    ("std", "max"): _std_max,
    ("std", "clamp"): _std_clamp,
}
# a row's float spelling (sqrtf, powf), named in the fix-it for a double the device has no row for
FLOAT_NAMES = {row: name for (ns, name), (row, form) in CALLS.items() if form is Form.FLOAT}
# How C++ spells each row (the docs' table); every call form above is listed in docs/compiler.md.
SPELLINGS: dict[str, str] = {n: f"wave::{n}(0)" for n in IDS - NO_AXIS} | {n: f"wave::{n}()" for n in NO_AXIS}
SPELLINGS |= {n: f"wave::{n}(x)" for n in sorted(WAVE1 | MATH1)} | {n: f"wave::{n}(c)" for n in sorted(VOTES)}
SPELLINGS |= {n: f"wave::{n}(x, lane)" for n in ("wave_shuffle", "wave_broadcast")}
SPELLINGS |= {n: f"wave::{n}(x, d)" for n in ("wave_shuffle_up", "wave_shuffle_down", "wave_shuffle_xor")}
SPELLINGS |= {"barrier": "wave::barrier()"}
SPELLINGS |= {"fence": "wave::fence(wave::scope::workgroup)", "local_array": "__shared__ float s[256];"}
SPELLINGS |= {f"atomic_{op}": f"wave::atomic_{op}(&a[i], v)" for op in ATOMIC_OPS}
SPELLINGS |= {"atomic_cas": "wave::atomic_cas(&a[i], expected, desired)"}
SPELLINGS |= {"fma": "wave::fma(a, b, c)", "abs": "wave::abs(x)", "min": "wave::min(a, b)", "max": "wave::max(a, b)"}
SPELLINGS |= {n: f"static_cast<{_CPP_NAMES[t.name]}>(x)" for n, t in CASTS.items()}
SPELLINGS |= {"pow": "powf(x, y)", "powi": "__builtin_powif(x, 3)", "round_away": "roundf(x)"}
SPELLINGS |= {"round_even": "rintf(x)", "trunc": "truncf(x)", "clamp": "std::clamp(x, lo, hi)"}
SPELLINGS |= {"sign": "wave::sign(x)", "isnan": "std::isnan(x)", "popcount": "__builtin_popcount(x)"}
SPELLINGS |= {"clz": "__builtin_clz(x)", "ctz": "__builtin_ctz(x)", "private_array": "float t[8];"}
SPELLINGS |= {"min_first": "wave::min_first(a, b)", "max_first": "wave::max_first(a, b)", "signum": "wave::signum(x)"}
SPELLINGS |= {"clamp_keep_nan": "wave::clamp_keep_nan(x, lo, hi)", "round_half_up": "wave::round_half_up(x)"}

# CUDA's spellings, named in the errors of a kernel ported from CUDA
CUDA_IDS = {
    "threadIdx": "wave::thread_id({})",
    "blockIdx": "wave::workgroup_id({})",
    "blockDim": "wave::workgroup_size({})",
    "gridDim": "wave::grid_size({})",
}
CUDA_CALLS = {
    "__syncthreads": "wave::barrier()",
    "__threadfence_block": "wave::fence(wave::scope::workgroup)",
    "__threadfence": "wave::fence(wave::scope::device)",
    **{
        f"atomic{op.capitalize()}": f"wave::atomic_{op}(&a[i], v)"
        for op in ("add", "sub", "min", "max", "and", "or", "xor")
    },
    "atomicExch": "wave::atomic_exchange(&a[i], v)",
    "atomicCAS": "wave::atomic_cas(&a[i], expected, desired)",
    "__shfl_sync": "wave::wave_shuffle(x, lane)",
    "__shfl_xor_sync": "wave::wave_shuffle_xor(x, mask)",
    "__shfl_up_sync": "wave::wave_shuffle_up(x, d)",
    "__shfl_down_sync": "wave::wave_shuffle_down(x, d)",
    "__ballot_sync": "wave::wave_ballot(c)",
    "__any_sync": "wave::wave_any(c)",
    "__all_sync": "wave::wave_all(c)",
    "__fmaf_rn": "wave::fma(a, b, c)",
}
REFUSED_CALLS = {
    "malloc": "heap allocation is not available on a GPU: use __shared__ arrays or buffers",
    "calloc": "heap allocation is not available on a GPU: use __shared__ arrays or buffers",
    "realloc": "heap allocation is not available on a GPU: use __shared__ arrays or buffers",
    "free": "heap allocation is not available on a GPU",
    "printf": "kernels have no output stream: write the value to an array",
    "memcpy": "copy the elements in a loop",
    "memset": "set the elements in a loop",
    "reinterpret_cast": "reinterpret_cast is not supported (no pointer casts in kernels)",
    "const_cast": "const_cast is not supported",
    "dynamic_cast": "dynamic_cast is not supported (no classes in kernels)",
}

MACROS = re.compile(
    rb"\b(__kernel|__global__|__device__|__shared__|__forceinline__|__global|__private|__local|__constant)\b"
)
# OpenCL C's address-space qualifiers (docs/compiler.md): `__global` and `__private` say what a pointer
# parameter and a variable are here anyway, and are accepted; the other two mean memory these
# kernels declare otherwise, and are refused with the C++ form
OPENCL_REFUSED = {
    "__local": "`__local` is OpenCL C's workgroup memory: parameters point to global memory here; declare "
    "workgroup memory in the kernel, `__shared__ float tile[256];`",
    "__constant": "`__constant` is OpenCL C's constant memory: write a read-only array parameter as "
    "`const float* x`, a constant as `constexpr float c = ...;`",
}


def _blank_macros(text: str) -> tuple[str, dict[int, str]]:
    """The text with the CUDA/OpenCL-style qualifier macros blanked (same length), and the byte
    offset of the token each one qualifies -> the macro."""
    data = text.encode("utf-8")
    marks: dict[int, str] = {}
    out = bytearray(data)
    for m in MACROS.finditer(data):
        out[m.start() : m.end()] = b" " * (m.end() - m.start())
        q = m.end()
        while q < len(data) and data[q : q + 1].isspace():
            q += 1
        marks[q] = m.group(1).decode()
    return out.decode("utf-8"), marks


def _wrap(v: int, t: ScalarType) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if t is I32 and v >> 31 else v


def _fits(v: object, t: ScalarType) -> bool:
    if isinstance(v, bool) or not isinstance(v, int):
        return False
    if t is I32:
        return -(2**31) <= v < 2**31
    if t is U32:
        return 0 <= v < 2**32
    return False


def _f32(v: float) -> float:
    with np.errstate(all="ignore"):
        return float(np.float32(v))


def _round(v: float, t: ScalarType) -> float:
    with np.errstate(all="ignore"):
        if t is F32:
            return float(np.float32(v))
        if t is F16:
            return float(np.float16(v))
    return float(v)


class _Bail(Exception):
    pass


# ---- the file: kernels, helpers, constants -----------------------------------------------------
@dataclass
class FunctionDef:
    name: str
    node: Node  # the function_definition
    template: Node | None = None  # the template_parameter_list
    kernel: bool = False
    attrs: list[Node] = field(default_factory=list)


@dataclass
class Unit:
    src: Source
    marks: dict[int, str]
    functions: dict[str, FunctionDef] = field(default_factory=dict)
    constants: dict[str, hir.Const] = field(default_factory=dict)
    declared: dict[str, int] = field(default_factory=dict)  # function -> its first declaration's byte
    instances: list[Node] = field(default_factory=list)  # `template void k<float>(float*);`: the k<float>


def _children(n: Node, field_name: str) -> list[Node]:
    return list(n.children_by_field_name(field_name))


def _function_name(src: Source, fn: Node) -> tuple[str, Node]:
    d = fn.child_by_field_name("declarator")
    while d is not None and d.type in ("pointer_declarator", "reference_declarator"):
        d = d.child_by_field_name("declarator") or next((c for c in d.named_children), None)
    if d is None or d.type != "function_declarator":
        raise src.error(fn, "expected a function")
    name = d.child_by_field_name("declarator")
    if name.type != "identifier":
        what = src.node_text(name)
        raise src.error(name, f"{what!r}: only plain functions are supported (no members, operators or namespaces)")
    return src.node_text(name), d


def _is_kernel_attr(src: Source, a: Node) -> bool:
    for at in a.named_children:
        if at.type == "attribute":
            text = src.node_text(at).replace(" ", "")
            if text in ("wave::kernel", "kernel"):
                return True
    return False


def read_unit(text: str, file: str) -> Unit:
    # quoted #includes read in (cppinclude.py); spans name each byte's own file and line
    spliced, pieces, main, _ = cppinclude.splice(text, file, lambda t: _blank_macros(t)[0])
    blanked, marks = _blank_macros(spliced)
    src, root = cppinclude.parse_spliced(spliced, blanked, file, pieces, main)  # diagnostics show the text as written
    unit = Unit(src, marks)
    _refuse_opencl_qualifiers(src, root, marks)
    for n in _top_level(root):
        t = n.type
        if t in ("comment", "preproc_include", "using_declaration", "alias_declaration"):
            if t == "alias_declaration":
                raise src.error(n, "type aliases are not supported in kernel files")
            continue
        if t == "preproc_call" and src.node_text(n).startswith("#pragma"):
            continue
        if t == "preproc_def":
            _define(unit, n)
            continue
        if t.startswith("preproc_"):
            raise src.error(n, _preprocessor_message(src.node_text(n), "in kernel files"))
        if t == "function_definition":
            _add_function(unit, n, None)
            continue
        if t == "template_declaration":
            inner = next((c for c in n.named_children if c.type == "function_definition"), None)
            proto = next((c for c in n.named_children if c.type == "declaration"), None)
            if inner is None and proto is not None:
                _file_declaration(unit, proto)
                continue
            if inner is None:
                raise src.error(n, "only function templates are supported")
            _add_function(unit, inner, n.child_by_field_name("parameters"))
            continue
        if t == "declaration":
            _file_declaration(unit, n)
            continue
        if t == "template_instantiation":
            d = n.child_by_field_name("declarator")
            f = d.child_by_field_name("declarator") if d is not None and d.type == "function_declarator" else None
            if f is None or f.type != "template_function":
                raise src.error(
                    n, "an explicit instantiation names its template arguments: template void k<float>(float*);"
                )
            unit.instances.append(f)
            continue
        if t in ("class_specifier", "struct_specifier", "union_specifier"):
            raise src.error(n, "classes and structs are not supported in kernels (no virtual calls, no members)")
        if t == "namespace_definition":
            raise src.error(n, "namespaces are not supported in kernel files: define kernels at file scope")
        raise src.error(n, f"{t.replace('_', ' ')} is not supported at file scope")
    return unit


# The values a `#define NAME value` may have: one operand, so that the text substituted at a use
# means what a constant of that value means (`#define N 4 + 1` makes `N * 2` 6, not 10)
MACRO_OPERANDS = frozenset(
    {"number_literal", "char_literal", "true", "false", "parenthesized_expression", "identifier"}
    | {"qualified_identifier", "unary_expression", "call_expression"}
)


def _define(unit: Unit, n: Node) -> None:
    """`#define N 256`, `#define SCALE 0.5f`, `#define M (N * 2)` at file scope: a constant of the
    value's C++ type, as `constexpr auto N = 256;` would be (function-like macros stay refused)."""
    src = unit.src
    name, value = n.child_by_field_name("name"), n.child_by_field_name("value")
    if value is None or not src.node_text(value).strip():
        raise src.error(n, "a #define without a value is not supported: kernels use constexpr constants")
    # the value parsed as the initializer of a declaration, at its own place in the file (spans stay exact)
    data = src.data
    start = value.start_byte
    line = data.rfind(b"\n", 0, start) + 1
    wrapper = b"auto _ = "
    prefix = bytearray(re.sub(rb"[^\n]", b" ", data[:start]))
    prefix[line : line + len(wrapper)] = wrapper
    snippet = bytes(prefix) + data[start : value.end_byte] + b"\n;\n"
    try:
        _, root = parse("cpp", snippet.decode("utf-8"), src.file)
    except CompileError:
        raise src.error(value, "a #define here names one constant value: #define N 256") from None
    decl = next((c for c in root.named_children if c.type == "declaration"), None)
    init = decl.child_by_field_name("declarator") if decl is not None else None
    expr = init.child_by_field_name("value") if init is not None else None
    if expr is None or init is None or init.type != "init_declarator":
        raise src.error(value, "a #define here names one constant value: #define N 256")
    if expr.type not in MACRO_OPERANDS or (
        expr.type == "unary_expression" and expr.named_children[0].type != "number_literal"
    ):
        raise src.error(
            value,
            "a #define's value is substituted as text: write it in parentheses, #define N (a + b), or use "
            "a constexpr constant",
        )
    fe = KernelBuilder(unit, None)
    c = _fold(fe.expr(expr))
    key = src.node_text(name)
    if c is None:
        raise src.error(value, "a #define here names a constant value (a literal or a constant expression)")
    if key in unit.constants or key in unit.functions:
        raise src.error(name, f"{key!r} is already defined")
    unit.constants[key] = c


def _refuse_opencl_qualifiers(src: cppinclude.Spliced, root: Node, marks: dict[int, str]) -> None:
    """A CompileError at the first `__local` or `__constant` outside comments and strings."""
    data = src.text.encode("utf-8")
    for q, name in sorted(marks.items()):
        if name not in OPENCL_REFUSED:
            continue
        start = data.rfind(name.encode(), 0, q)
        node = root.descendant_for_byte_range(start, start)
        inside = node
        while inside is not None and inside.type not in ("comment", "string_literal", "raw_string_literal"):
            inside = inside.parent
        if inside is not None:
            continue
        raise CompileError([Diagnostic(OPENCL_REFUSED[name], src.span_at(start, start + len(name)))])


def _preprocessor_message(text: str, where: str) -> str:
    """What a preprocessor directive the compiler does not run is refused with, in C++ words."""
    directive = text.split(None, 1)[0] if text.strip() else "#"
    if directive in ("#define", "#undef"):
        return f"macros are not supported {where}: use constexpr constants (or an inline helper function)"
    if directive in ("#if", "#ifdef", "#ifndef", "#elif", "#else", "#endif", "#elifdef", "#elifndef"):
        return (
            f"conditional compilation ({directive}) is not supported {where}: the compiler does not run "
            f"the preprocessor; use a constexpr constant in an if"
        )
    if directive == "#include":
        return f"#include is not supported {where}: write includes at the top of the file"
    if directive == "#pragma":
        return f"this #pragma is not supported {where} (only #pragma unroll [N] before a loop, and file-level pragmas)"
    return f"the preprocessor directive {directive} is not supported {where}"


def _top_level(root: Node) -> Iterator[Node]:
    """The file's declarations, also those inside `extern "C"` (and `extern "C" { ... }`)."""
    for n in root.named_children:
        if n.type == "linkage_specification":
            body = n.child_by_field_name("body")
            if body is not None and body.type == "declaration_list":
                yield from (c for c in body.named_children)
            elif body is not None:
                yield body
            continue
        yield n


def _add_function(unit: Unit, fn: Node, tparams: Node | None) -> None:
    src = unit.src
    name, _ = _function_name(src, fn)
    attrs = [c for c in fn.children if c.type == "attribute_declaration"]
    kernel = any(_is_kernel_attr(src, a) for a in attrs)
    start = fn.start_byte
    if unit.marks.get(start) in ("__kernel", "__global__"):
        kernel = True
    tnode = fn.child_by_field_name("type")
    if tnode is not None and unit.marks.get(tnode.start_byte) in ("__kernel", "__global__"):
        kernel = True
    unit.declared.setdefault(name, fn.start_byte)
    if fn.child_by_field_name("body") is None:
        return  # a declaration only
    if name in unit.functions:
        raise src.error(fn, f"{name!r} is defined twice (overloads are not supported)")
    unit.functions[name] = FunctionDef(name, fn, tparams, kernel, attrs)


def _file_declaration(unit: Unit, n: Node) -> None:
    """`constexpr uint32_t TILE = 16;` (a constant the kernels may use), or a prototype."""
    src = unit.src
    decls = _children(n, "declarator")
    if decls and all(d.type == "function_declarator" for d in decls):
        for d in decls:  # a prototype: the function may be called below it
            name = d.child_by_field_name("declarator")
            if name is not None and name.type == "identifier":
                unit.declared.setdefault(src.node_text(name), n.start_byte)
        return
    text = src.node_text(n)
    if not re.match(r"\s*(static\s+|inline\s+)*(constexpr|const)\b", text):
        raise src.error(n, "file-scope variables are not supported: kernels use constexpr constants and buffers")
    fe = KernelBuilder(unit, None)
    for d in decls:
        fe.constant_declaration(n, d, file_scope=True)


AUTO = ScalarType("auto", 0, "auto")  # a lambda's return type before its first return sets it


# ---- lowering ----------------------------------------------------------------------------------
@dataclass
class VarB:
    name: str  # the HIR variable
    type: ScalarType
    const: bool = False


@dataclass
class ArrB:
    name: str  # the HIR array (parameter or local)
    type: ArrayType
    const: bool = False
    shape: tuple[int, ...] = ()  # local arrays: [16][17] indexes as i * 17 + j


@dataclass
class PrivB:
    """A per-thread array: `float t[4];`, `float t[2][4] = {...};` (hir.PrivateArray)."""

    name: str  # the HIR per-thread array
    elem: ScalarType
    shape: tuple[int, ...]
    const: bool = False
    decayed: bool = False  # a helper's `float t[]` / `float* t` parameter: C++ sees a pointer (no range-for)


@dataclass
class RefB:
    """`float& r = a[i];`: an element of an array, its index evaluated once (in `index`)."""

    array: ArrB
    index: str  # the HIR variable holding the element's index
    index_type: ScalarType
    const: bool = False


@dataclass
class LambdaB:
    """`auto f = [&](float v) { ... };`: a lambda that does not escape, inlined at its calls in the
    scopes of its definition (by-reference captures see the variables as they are at the call)."""

    fd: FunctionDef  # the lambda_expression as a function
    scopes: list[Scope]  # the names visible at its definition
    serial: int = 0  # distinct per definition lowered: its helper instances' key


@dataclass
class ConstB:
    value: hir.Const


@dataclass
class PoisonB:
    """A name whose declaration failed (reported): its uses say nothing more."""


class _Poisoned(Exception):
    """A use of a poisoned name: the statement is abandoned without another message."""


Binding = VarB | ArrB | ConstB | PrivB | RefB | LambdaB
Scope = dict[str, "Binding | PoisonB"]  # a block's names (a poisoned one: its declaration failed)


@dataclass
class Loop:
    on_continue: list[hir.Stmt]  # statements before a `continue` (a for's update, a do's test)
    switch: bool = False  # a switch: `break` leaves it, `continue` belongs to the loop around it
    cont: str | None = None  # a switch's flag: a `continue` inside it continues the loop around


@dataclass
class Inline:
    """The helper whose body is being lowered (into a hir.Helper: compiler/inline.py inlines it)."""

    name: str
    ret: ScalarType | None  # None: void; AUTO: a lambda's, its first return's type
    start: int = 0  # the helper's first byte: what it calls must be declared above it


class KernelBuilder:
    def __init__(self, unit: Unit, fn: FunctionDef | None, instance: Node | None = None):
        self.unit = unit
        self.src = unit.src
        self.fn = fn
        self.toolchain_dialect = False  # an axis-less thread_id(): the Rust toolchain's local id
        self.scopes: list[Scope] = [{}]
        self.vars: dict[str, ScalarType] = {}
        self.arrays: dict[str, ArrayType] = {}
        self.locals: list[hir.LocalArray] = []
        self.privates: list[hir.PrivateArray] = []
        self.unroll_next: int | None = None  # the loop a `#pragma unroll` stands before (its first byte)
        self.pre: list[hir.Stmt] = []
        self.loops: list[Loop] = []
        self.inlines: list[Inline] = []
        self.helpers = Helpers(fn.name if fn is not None else "")  # the chain of helpers being inlined
        self.types: list[dict[str, ScalarType]] = [{}]  # template type parameters in scope
        self.instance = instance  # a template kernel's explicit instantiation: k<float>
        self.tmp = 0
        self.diags: list[Diagnostic] = []
        self.taken: set[str] = set()  # the parameters' names (a local that shadows one is renamed)

    # -- helpers
    def error(self, n: Node, msg: str) -> CompileError:
        return self.src.error(n, msg)

    def span(self, n: Node):
        return self.src.span(n)

    def text(self, n: Node) -> str:
        return self.src.node_text(n)

    def fresh(self, hint: str, t: ScalarType) -> str:
        self.tmp += 1
        name = f"{hint}${self.tmp}"
        self.vars[name] = t
        return name

    def declare_name(self, name: str, t: ScalarType) -> str:
        """A HIR name for a new C++ variable (a shadowing or repeated declaration gets a new one)."""
        if name not in self.vars and name not in self.arrays and name not in self.taken and not self.inlines:
            self.vars[name] = t
            return name
        return self.fresh(name, t)

    def lookup(self, name: str) -> Binding | None:
        for s in reversed(self.scopes):
            if name in s:
                b = s[name]
                if isinstance(b, PoisonB):
                    raise _Poisoned()
                return b
        c = self.unit.constants.get(name)
        return ConstB(c) if c is not None else None

    # -- types
    def scalar_type(self, n: Node, elements: bool = False) -> ScalarType:
        """The type a type node names (template parameters resolved)."""
        text = " ".join(self.text(n).split())
        for q in ("std::", "wave::"):
            if text.startswith(q):
                text = text[len(q) :]
        for scope in reversed(self.types):
            if text in scope:
                return scope[text]
        t = TYPES.get(text)
        if t is None:
            why = NOT_SUPPORTED_TYPES.get(text) or next(
                (v for k, v in NOT_SUPPORTED_TYPES.items() if k in text.split()), None
            )
            if text == "void":
                why = "void is not a value type"
            if text == "auto":
                why = "auto needs an initializer"
            raise self.error(n, why or f"unknown type {text!r} (int32_t, uint32_t, float, double, half, bool)")
        if t.narrow and not elements:
            raise self.error(
                n,
                f"{text} is a storage-only type: {text} arrays hold {t.bits}-bit values, "
                f"variables are {'int32_t' if t.signed else 'uint32_t'} (C++ promotes them to int)",
            )
        return t

    # -- entry: a kernel
    def kernel(self) -> hir.Function:
        assert self.fn is not None
        fn = self.fn.node
        name, decl = _function_name(self.src, fn)
        rtype = fn.child_by_field_name("type")
        if rtype is None or self.text(rtype) != "void" or decl.parent != fn:
            raise self.error(rtype or fn, "a kernel returns void (write results to an array)")
        if self.instance is not None:
            name = self.instantiate(self.instance)
        params: list[hir.Param] = []
        body_node = fn.child_by_field_name("body")
        assigned = self.assigned_names(body_node)
        prologue: list[hir.Stmt] = []
        for p in decl.child_by_field_name("parameters").named_children:
            if p.type == "comment":
                continue
            if p.type != "parameter_declaration":
                raise self.error(p, "kernel parameters are plain: const float* a, float* out, uint32_t n")
            pname, b = self.parameter(p)
            if pname.endswith(("__len", "__shape0", "__shape1")):  # the runtime would fill it itself
                raise self.error(
                    p, "parameter names ending in __len, __shape0, __shape1 are reserved (hidden arguments)"
                )
            self.taken.add(pname)
            if isinstance(b, ArrB):
                self.arrays[pname] = b.type
                params.append(hir.Param(pname, b.type, self.span(p)))
            else:
                if b.type is BOOL:
                    raise self.error(p, "scalar parameters are int32_t, uint32_t, float, half or double")
                params.append(hir.Param(pname, b.type, self.span(p)))
                if pname in assigned and not b.const:  # a by-value parameter the kernel changes: a copy
                    v = self.fresh(pname, b.type)
                    prologue.append(hir.Assign(self.span(p), v, hir.Var(b.type, self.span(p), pname)))
                    b = VarB(v, b.type)
            self.scopes[-1][pname] = b
        body = prologue + self.block(body_node, scope=False)  # the parameters' scope, as in C++
        if self.diags:
            raise CompileError(self.diags)
        variables = tuple(self.vars.items())
        options: dict[str, object] = {}
        for a in self.fn.attrs:
            for at in a.named_children:
                t = self.text(at).replace(" ", "")
                if t.startswith(("wave::workgroup(", "workgroup(")):
                    args = at.child_by_field_name("arguments") or next(
                        (c for c in at.named_children if c.type == "argument_list"), None
                    )
                    if args is None:
                        raise self.error(at, "wave::workgroup(x[, y[, z]]) takes constant sizes")
                    options["workgroup"] = tuple(
                        self.const_int(x, "a workgroup size", lo=1) for x in args.named_children
                    )
        if self.toolchain_dialect and "workgroup" not in options:
            options["workgroup"] = TOOLCHAIN_WORKGROUP
        return hir.Function(
            name,
            tuple(params),
            tuple(body),
            variables,
            tuple(self.locals),
            self.src.file,
            options=options,
            helpers=self.helpers.built(),
            privates=tuple(self.privates),
        )

    def instantiate(self, f: Node) -> str:
        """Bind a template kernel's parameters to an instantiation's arguments (`k<float, 4>`: T is
        float, N the constant 4); its name: k_float_4 (the arguments' C++ spellings joined)."""
        assert self.fn is not None and self.fn.template is not None
        args = list(f.child_by_field_name("arguments").named_children)
        params = [p for p in self.fn.template.named_children if p.type != "comment"]
        if len(args) != len(params):
            raise self.error(f, f"{self.fn.name!r} has {len(params)} template parameter(s): name every one")
        parts = [self.fn.name]
        for p, a in zip(params, args):
            if p.type == "type_parameter_declaration" and p.named_children:
                t = self.scalar_type(a.child_by_field_name("type") or a, elements=True)
                self.types[0][self.text(p.named_children[-1])] = t
                parts.append(_cpp_name(t))
            elif p.type == "parameter_declaration" and p.child_by_field_name("declarator") is not None:
                pname = self.text(p.child_by_field_name("declarator"))
                pt = self.scalar_type(p.child_by_field_name("type"))
                v = _wrap(self.const_int(a, f"template argument {pname}"), pt)
                self.scopes[0][pname] = ConstB(hir.Const(pt, self.span(a), v))
                parts.append(str(v).replace("-", "m"))
            else:
                raise self.error(p, "template parameters are typename T or an integer constant")
        return "_".join(parts)

    def parameter(self, p: Node) -> tuple[str, ArrB | VarB]:
        """A parameter: `const float* a` (an array; const: read-only), `uint32_t n` (a scalar)."""
        tnode = p.child_by_field_name("type")
        d = p.child_by_field_name("declarator")
        const = any(c.type == "type_qualifier" and self.text(c) == "const" for c in p.children)
        if d is None:
            raise self.error(p, "parameters need a name")
        if d.type == "pointer_declarator" or d.type == "array_declarator":
            inner = d.child_by_field_name("declarator")
            if inner is None or inner.type != "identifier":
                raise self.error(d, "arrays are plain pointers: const float* a")
            if d.type == "array_declarator" and d.child_by_field_name("size") is not None:
                raise self.error(d, "array parameters are unsized pointers: float* a or float a[]")
            elem = self.scalar_type(tnode, elements=True)
            if elem is BOOL:
                raise self.error(tnode, "arrays of bool are not supported; use uint32_t")
            return self.text(inner), ArrB(self.text(inner), ArrayType(elem, "global"), const)
        if d.type == "reference_declarator":
            raise self.error(d, "kernel parameters are pointers or values, not references")
        if d.type != "identifier":
            raise self.error(d, "unsupported parameter declarator")
        t = self.scalar_type(tnode)
        return self.text(d), VarB(self.text(d), t, const)

    def assigned_names(self, n: Node) -> set[str]:
        out = set()
        for x in _walk(n):
            if x.type in ("assignment_expression", "update_expression"):
                tgt = x.child_by_field_name("left") or x.child_by_field_name("argument")
                if tgt is not None and tgt.type == "identifier":
                    out.add(self.text(tgt))
            # `T& r = x;` (a reference, also a by-reference lambda capture's body) may write x: counted
            # as assigned, so that a by-value parameter gets its copy
            if x.type == "init_declarator" and x.child_by_field_name("declarator").type == "reference_declarator":
                value = x.child_by_field_name("value")
                if value is not None and value.type == "identifier":
                    out.add(self.text(value))
            if x.type == "lambda_expression":
                out |= {self.text(c) for c in _walk(x) if c.type == "identifier"}
        return out

    # -- statements
    def block(self, n: Node, scope: bool = True) -> list[hir.Stmt]:
        if n.type != "compound_statement":
            return self.stmt_scoped(n)
        if scope:
            self.scopes.append({})
        out: list[hir.Stmt] = []
        try:
            for s in n.named_children:
                out.extend(self.statement(s))
        finally:
            if scope:
                self.scopes.pop()
        return out

    def statement(self, s: Node) -> list[hir.Stmt]:
        """One statement of a kernel's body; a refused one is reported and skipped, so that every
        independent error of a kernel is reported once (the names it declares are poisoned: their
        uses report nothing more). Inside an inlined helper an error stops the call's statement."""
        if self.inlines:
            return self.stmt(s)
        depth = (len(self.scopes), len(self.loops), len(self.types))
        try:
            return self.stmt(s)
        except (CompileError, _Poisoned) as e:
            if isinstance(e, CompileError):
                self.diags.extend(e.diagnostics)
            del self.scopes[depth[0] :], self.loops[depth[1] :], self.types[depth[2] :]
            self.pre = []
            if s.type == "declaration":
                for d in _children(s, "declarator"):
                    name = _declared_name(d)
                    if name is not None:
                        self.scopes[-1][self.text(name)] = PoisonB()
            return []

    def stmt_scoped(self, n: Node) -> list[hir.Stmt]:
        self.scopes.append({})
        try:
            return self.stmt(n)
        finally:
            self.scopes.pop()

    def flush(self, stmts: list[hir.Stmt]) -> list[hir.Stmt]:
        """The pending statements the expressions of a statement need, then the statement."""
        out, self.pre = self.pre + stmts, []
        return out

    def stmt(self, n: Node) -> list[hir.Stmt]:
        t = n.type
        sp = self.span(n)
        if t == "comment":
            return []
        if t == "compound_statement":
            return self.block(n)
        if t == "expression_statement":
            if not n.named_children:
                return []
            return self.flush(self.expr_stmt(n.named_children[0]))
        if t == "declaration":
            return self.flush(self.declaration(n))
        if t == "if_statement":
            if any(c.type == "constexpr" or self.text(c) == "constexpr" for c in n.children[:2]):
                raise self.error(n, "if constexpr is not supported")
            cond = self.condition(n.child_by_field_name("condition"))
            pre = self.take_pre()
            then = self.stmt_scoped(n.child_by_field_name("consequence"))
            alt = n.child_by_field_name("alternative")
            other: list[hir.Stmt] = []
            if alt is not None:
                other = self.stmt_scoped(alt.named_children[-1] if alt.type == "else_clause" else alt)
            return [*pre, hir.If(sp, cond, tuple(then), tuple(other))]
        if t == "while_statement":
            return self.after_loop(self.while_loop(n), n)
        if t == "do_statement":
            return self.after_loop(self.do_loop(n), n)
        if t == "for_statement":
            return self.after_loop(self.for_loop(n), n)
        if t == "break_statement":
            if not self.loops:  # (a helper's body starts with no loop: its caller's are not its own)
                raise self.error(n, "'break' outside a loop")
            return [hir.Break(sp)]
        if t == "continue_statement":
            if not any(not loop.switch for loop in self.loops):
                raise self.error(n, "'continue' outside a loop")
            return self.continue_stmts(sp)
        if t == "return_statement":
            return self.return_stmt(n)
        if t == "goto_statement" or t == "labeled_statement":
            raise self.error(n, "goto and labels are not supported: use loops with break and continue")
        if t == "switch_statement":
            return self.after_loop(self.switch(n), n)
        if t in ("for_range_loop",):
            return self.after_loop(self.range_for(n), n)
        if t in ("try_statement", "throw_statement"):
            raise self.error(n, "exceptions are not supported in kernels")
        if t in ("function_definition", "class_specifier", "struct_specifier"):
            raise self.error(n, "nested functions and classes are not supported in kernels")
        if t == "preproc_call" and self.text(n).split(None, 1)[0] == "#pragma":
            return self.pragma(n)
        if t.startswith("preproc_"):
            raise self.error(n, _preprocessor_message(self.text(n), "in kernels"))
        raise self.error(n, f"{t.replace('_', ' ')} is not supported in kernels")

    def pragma(self, n: Node) -> list[hir.Stmt]:
        """`#pragma unroll`, `#pragma unroll N` (or `(N)`) and `#pragma nounroll` before a loop: hints
        to unroll it, which this compiler takes as hints only (docs/compiler.md): the loop runs as
        written; no other pragma is accepted inside a kernel."""
        words = self.text(n).split(None, 1)
        arg = words[1].strip() if len(words) > 1 else ""
        m = re.fullmatch(r"(unroll|nounroll)\s*(?:\(\s*(.*?)\s*\)|(.*?))\s*", arg)
        if m is None:
            first = arg.split(None, 1)[0] if arg else ""
            raise self.error(
                n,
                f"#pragma {first} is not supported in kernels (only #pragma unroll [N] before a loop)".replace(
                    "  ", " "
                ),
            )
        count = m.group(2) if m.group(2) is not None else m.group(3)
        if count:
            if m.group(1) == "nounroll":
                raise self.error(n, "#pragma nounroll takes no count")
            const = self.unit.constants.get(count)  # a constexpr integer constant
            try:
                value = int(const.value) if const is not None and const.type.is_int else int(count, 0)
            except ValueError:
                value = 0
            if value < 1:
                raise self.error(n, f"#pragma unroll takes a positive integer count, not {count!r}")
        after = n.next_named_sibling
        while after is not None and after.type == "comment":
            after = after.next_named_sibling
        if after is None or after.type not in ("for_statement", "while_statement", "do_statement", "for_range_loop"):
            raise self.error(n, f"#pragma {m.group(1)} applies to a loop: put it right before a for, while or do")
        if m.group(1) == "unroll" and not count:
            self.unroll_next = after.start_byte  # fully unrolled when it is counted with constant bounds
        return []

    def after_loop(self, out: list[hir.Stmt], n: Node) -> list[hir.Stmt]:
        """A loop's statements (a `return` inside a helper's loops leaves them: compiler/inline.py)."""
        return out

    def continue_stmts(self, sp) -> list[hir.Stmt]:
        """`continue`: the loop's update (or test) and the jump; inside a switch, the switch's flag
        and a break out of it (after the switch, the flag continues the loop around it)."""
        top = self.loops[-1]
        if not top.switch:
            return [*top.on_continue, hir.Continue(sp)]
        if top.cont is None:
            top.cont = self.fresh("cont", BOOL)
        return [hir.Assign(sp, top.cont, hir.Const(BOOL, sp, True)), hir.Break(sp)]

    def switch(self, n: Node) -> list[hir.Stmt]:
        """switch on an integer: the case the value selects (else default), then every case body
        from there on until a `break` (C++'s fall-through), in a one-trip loop that `break` leaves."""
        sp = self.span(n)
        cn = n.child_by_field_name("condition")
        if cn.type == "condition_clause":
            if cn.child_by_field_name("initializer") is not None:
                raise self.error(cn, "declarations in conditions are not supported")
            cn = cn.child_by_field_name("value") or cn.named_children[-1]
        v = self.promote(self.expr(cn), cn)
        if not v.type.is_int:
            raise self.error(cn, f"switch needs an integer, not {_cpp_name(v.type)}")
        out = self.take_pre()
        sel = self.fresh("switch", v.type)
        out.append(hir.Assign(sp, sel, v))
        body = n.child_by_field_name("body")
        cases: list[Node] = []
        for c in body.named_children:
            if c.type == "case_statement":
                cases.append(c)
            elif c.type != "comment":
                raise self.error(c, "a statement before the first case label never runs")
        labels: dict[int, int] = {}  # value -> case index
        default = -1
        for i, c in enumerate(cases):
            val = c.child_by_field_name("value")
            if val is None:
                if default >= 0:
                    raise self.error(c, "a second default label")
                default = i
                continue
            k = _wrap(self.const_int(val, "a case label"), v.type)  # converted to the promoted type
            if k in labels:
                raise self.error(val, f"case {k} appears twice")
            labels[k] = i
        entry = self.fresh("case", I32)
        chain: list[hir.Stmt] = [hir.Assign(sp, entry, hir.Const(I32, sp, default))]
        for k, i in reversed(labels.items()):
            test = hir.Compare(BOOL, sp, Cmp.EQ, hir.Var(v.type, sp, sel), hir.Const(v.type, sp, k))
            chain = [hir.If(sp, test, (hir.Assign(sp, entry, hir.Const(I32, sp, i)),), tuple(chain))]
        fell = self.fresh("fell", BOOL)
        loop = Loop([], switch=True)
        self.loops.append(loop)
        self.scopes.append({})  # the cases share one scope
        parts: list[hir.Stmt] = []
        try:
            for i, c in enumerate(cases):
                stmts: list[hir.Stmt] = []
                for j, x in enumerate(c.children):
                    if x.is_named and c.field_name_for_child(j) != "value":
                        stmts += self.statement(x)
                here = hir.Compare(BOOL, sp, Cmp.EQ, hir.Var(I32, sp, entry), hir.Const(I32, sp, i))
                test = hir.Logical(BOOL, sp, hir.LogicalOp.OR, hir.Var(BOOL, sp, fell), here)
                parts.append(hir.If(self.span(c), test, (hir.Assign(sp, fell, hir.Const(BOOL, sp, True)), *stmts), ()))
        finally:
            self.scopes.pop()
            self.loops.pop()
        out += [*chain, hir.Assign(sp, fell, hir.Const(BOOL, sp, False))]
        if loop.cont is not None:
            out.append(hir.Assign(sp, loop.cont, hir.Const(BOOL, sp, False)))
        out.append(hir.While(sp, hir.Const(BOOL, sp, True), (*parts, hir.Break(sp))))
        if loop.cont is not None:
            out.append(hir.If(sp, hir.Var(BOOL, sp, loop.cont), tuple(self.continue_stmts(sp)), ()))
        return out

    def take_pre(self) -> list[hir.Stmt]:
        out, self.pre = self.pre, []
        return out

    def return_stmt(self, n: Node) -> list[hir.Stmt]:
        sp = self.span(n)
        value = n.named_children[0] if n.named_children else None
        if not self.inlines:
            if value is not None:
                raise self.error(value, "kernels return no value (write results to an array)")
            return [hir.Return(sp)]
        inl = self.inlines[-1]  # a helper's return: compiler/inline.py makes it leave the call
        if inl.ret is None:
            if value is not None:
                raise self.error(value, f"{inl.name!r} returns void")
            return [hir.Return(sp)]
        if value is None:
            raise self.error(n, f"{inl.name!r} returns {inl.ret}: return a value")
        e = self.expr(value)
        if inl.ret is AUTO:  # a lambda without `-> T`: the first return's type
            inl.ret = e.type
        v = self.convert(e, inl.ret, value)
        return [*self.take_pre(), hir.Return(sp, v)]

    def while_loop(self, n: Node) -> list[hir.Stmt]:
        sp = self.span(n)
        self.scopes.append({})
        try:
            cond = self.condition(n.child_by_field_name("condition"))
            pre = self.take_pre()
            self.loops.append(Loop([]))
            body = self.stmt_scoped(n.child_by_field_name("body"))
            self.loops.pop()
        finally:
            self.scopes.pop()
        if pre:  # the condition needs statements: they run at the top of every trip
            test = [*pre, hir.If(sp, hir.Unary(BOOL, sp, hir.UnaryOp.NOT, cond), (hir.Break(sp),), ())]
            return [hir.While(sp, hir.Const(BOOL, sp, True), tuple(test + body))]
        return [hir.While(sp, cond, tuple(body))]

    def do_loop(self, n: Node) -> list[hir.Stmt]:
        """do body while (c): a loop that tests at its end; `continue` goes to the test."""
        sp = self.span(n)
        cnode = n.child_by_field_name("condition")
        # the test is lowered once for the end and once for every continue (each is the same HIR)
        cond = self.condition(cnode)
        test = [*self.take_pre(), hir.If(sp, hir.Unary(BOOL, sp, hir.UnaryOp.NOT, cond), (hir.Break(sp),), ())]
        self.loops.append(Loop(test))
        body = self.stmt_scoped(n.child_by_field_name("body"))
        self.loops.pop()
        return [hir.While(sp, hir.Const(BOOL, sp, True), tuple(body + test))]

    def for_loop(self, n: Node) -> list[hir.Stmt]:
        sp = self.span(n)
        self.scopes.append({})
        try:
            init_nodes = _children(n, "initializer")
            out: list[hir.Stmt] = []
            for i in init_nodes:
                if i.type == "declaration":
                    out += self.flush(self.declaration(i))
                else:
                    out += self.flush(self.expr_stmt(i))
            simple = self.counted(n, init_nodes, out)
            if simple is not None:
                return simple
            cnode = n.child_by_field_name("condition")
            cond: hir.Expr = hir.Const(BOOL, sp, True)
            cpre: list[hir.Stmt] = []
            if cnode is not None:
                cond = self.condition(cnode)
                cpre = self.take_pre()
            update: list[hir.Stmt] = []
            for u in _children(n, "update"):
                parts = u.named_children if u.type == "comma_expression" else [u]
                for part in _flatten_comma(u) if u.type == "comma_expression" else parts:
                    update += self.flush(self.expr_stmt(part))
            self.loops.append(Loop(update))
            body = self.stmt_scoped(n.child_by_field_name("body"))
            self.loops.pop()
            if cpre:
                test = [*cpre, hir.If(sp, hir.Unary(BOOL, sp, hir.UnaryOp.NOT, cond), (hir.Break(sp),), ())]
                return [*out, hir.While(sp, hir.Const(BOOL, sp, True), tuple(test + body + update))]
            return [*out, hir.While(sp, cond, tuple(body + update))]
        finally:
            self.scopes.pop()

    def counted(self, n: Node, init_nodes: list[Node], init: list[hir.Stmt]) -> list[hir.Stmt] | None:
        """`for (T i = a; i < b; ++i / i += c)` with neither i nor b changed in the body, b evaluated
        once: the HIR counted loop (the same trips as C++'s loop)."""
        if len(init_nodes) != 1 or init_nodes[0].type != "declaration" or len(init) != 1:
            return None
        a = init[0]
        if not isinstance(a, hir.Assign):
            return None
        cnode = n.child_by_field_name("condition")
        unode = _children(n, "update")
        body_node = n.child_by_field_name("body")
        if cnode is None or len(unode) != 1 or cnode.type != "binary_expression":
            return None
        decl = _children(init_nodes[0], "declarator")
        if len(decl) != 1 or decl[0].type != "init_declarator":
            return None
        cname = self.text(decl[0].child_by_field_name("declarator"))
        b = self.lookup(cname)
        if not isinstance(b, VarB) or not b.type.is_int:
            return None
        left, right = cnode.child_by_field_name("left"), cnode.child_by_field_name("right")
        if self.text(cnode.child_by_field_name("operator")) != "<" or self.text(left) != cname:
            return None
        changed = self.assigned_names(body_node)
        if cname in changed:
            return None
        step = self.step_of(unode[0], cname)
        if step is None:
            return None
        if right.type == "identifier":
            if self.text(right) in changed:
                return None
        elif right.type != "number_literal":
            return None
        stop = self.expr(right)
        if self.pre:
            self.pre = []
            return None
        if isinstance(stop, hir.Const) and stop.type.is_int and stop.type != b.type and _fits(stop.value, b.type):
            stop = hir.Const(b.type, stop.span, stop.value)
        if stop.type != b.type:
            return None  # C++ compares after converting: the general loop says what it means
        sp = self.span(n)
        unroll = hir.Unroll.HINT if self.unroll_next == n.start_byte else hir.Unroll.NO
        self.loops.append(Loop([]))
        body = self.stmt_scoped(body_node)
        self.loops.pop()
        return [hir.For(sp, b.name, a.value, stop, hir.Const(b.type, sp, step), tuple(body), unroll)]

    def range_for(self, n: Node) -> list[hir.Stmt]:
        """`for (float v : t)` (also `auto`, `const float&`, `float&`) over a one-dimensional
        per-thread array: unrolled, so the array may stay in registers; a reference writes the
        element back after each trip (and before a `continue`)."""
        sp = self.span(n)
        right = n.child_by_field_name("right")
        b = self.lookup(self.text(right)) if right.type == "identifier" else None
        if not isinstance(b, PrivB):
            raise self.error(
                right,
                "range-based for runs over per-thread arrays only: for (uint32_t i = 0; i < n; ++i) for the others",
            )
        if b.decayed:  # g++: 'begin' was not declared: the parameter is a pointer
            raise self.error(
                right,
                f"range-based for over {self.text(right)!r}, a pointer parameter (C++ does not know its "
                f"length): take the array by reference, {_cpp_name(b.elem)} (&{self.text(right)})[{b.shape[0]}]",
            )
        if len(b.shape) != 1:
            raise self.error(right, f"range-based for over {self.text(right)!r} (two dimensions): index it, t[i][j]")
        decl = n.child_by_field_name("declarator")
        tnode = n.child_by_field_name("type")
        quals = [self.text(c) for c in n.children if c.type == "type_qualifier"]
        ref = decl.type == "reference_declarator"
        ident = decl.named_children[0] if ref else decl
        if ident.type != "identifier":
            raise self.error(decl, "range-based for declares one variable: for (float v : t)")
        t = b.elem if self.text(tnode) == "auto" else self.scalar_type(tnode)
        if ref and t != b.elem:
            raise self.error(
                tnode, f"a reference to an element of {self.text(right)!r} has its type, {_cpp_name(b.elem)}"
            )
        const = "const" in quals
        if ref and not const and b.const:
            raise self.error(decl, f"{self.text(right)!r} is const: bind a const reference")
        counter = self.fresh("k", I32)
        at = hir.Var(I32, sp, counter)
        self.scopes.append({})
        try:
            name = self.declare_name(self.text(ident), t)
            self.scopes[-1][self.text(ident)] = VarB(name, t, const)
            first = hir.Assign(sp, name, self.convert(hir.PrivateLoad(b.elem, sp, b.name, (at,)), t, n))
            back = [hir.PrivateStore(sp, b.name, (at,), hir.Var(t, sp, name))] if ref and not const else []
            if back and any(x.type == "break_statement" for x in _walk(n.child_by_field_name("body"))):
                raise self.error(n, "break in a range-based for by reference is not supported: use an index loop")
            self.loops.append(Loop(list(back)))
            body = self.stmt_scoped(n.child_by_field_name("body"))
            self.loops.pop()
        finally:
            self.scopes.pop()
        zero, stop, one = (hir.Const(I32, sp, v) for v in (0, b.shape[0], 1))
        return [hir.For(sp, counter, zero, stop, one, (first, *body, *back), hir.Unroll.FULL)]

    def private_array(self, tnode: Node, d: Node, const: bool) -> list[hir.Stmt]:
        """`float t[4];`, `float t[4] = {1.0f};`, `float t[2][4] = {{...}, {...}};`, `float t[] = {...}`:
        a per-thread array; elements without a value are zero (C++'s rule for an initializer list,
        and here also for no initializer: registers start at zero)."""
        target, value = (
            (d.child_by_field_name("declarator"), d.child_by_field_name("value"))
            if d.type == "init_declarator"
            else (d, None)
        )
        ref = _array_reference(target)
        if ref is not None and value is not None:  # `const float (&v)[4] = t;`: another name of t
            ident, sizes = ref
            b = self.lookup(self.text(value)) if value.type == "identifier" else None
            if not isinstance(b, PrivB):
                raise self.error(value, "a reference to an array binds a per-thread array: float (&r)[4] = t;")
            self.scopes[-1][self.text(ident)] = self.array_binding(
                self.scalar_type(tnode), sizes, True, const, b, value, "the reference", {}
            )
            return []
        if value is not None and value.type != "initializer_list":
            raise self.error(value, "an array is initialised with braces: float t[4] = {1.0f, 2.0f};")
        dims: list[Node | None] = []
        while target.type == "array_declarator":
            dims.insert(0, target.child_by_field_name("size"))
            target = target.child_by_field_name("declarator")
        if target.type != "identifier":
            raise self.error(target, "per-thread arrays are declared float t[4]; (pointers are not supported)")
        if len(dims) > 2:
            raise self.error(d, builtins.dimensions("per-thread"))
        elem = self.scalar_type(tnode)
        shape: list[int] = []
        for k, x in enumerate(dims):
            if x is None:
                if k != 0 or value is None:
                    raise self.error(d, "only the first size may be left out, and then the initializer gives it")
                per = 1
                for y in dims[1:]:
                    assert y is not None
                    per *= self.const_int(y, "a per-thread array size", lo=1)
                items = value.named_children
                nested = bool(items) and items[0].type == "initializer_list"
                shape.append(len(items) if nested or len(dims) == 1 else -(-len(items) // per))
                continue
            shape.append(
                self.const_int(x, "a per-thread array size (a constant: no dynamic allocation on a GPU)", lo=1)
            )
        if const and value is None:
            raise self.error(d, "a const array needs an initializer")
        values = self.array_values(value, tuple(shape), elem) if value is not None else []
        self.fresh_in_scope(target)
        name = self.text(target)
        taken = (
            name in self.arrays or name in self.vars or name in self.taken or any(p.name == name for p in self.privates)
        )
        hname = self.fresh(name, elem) if taken else name
        self.vars.pop(hname, None)
        self.privates.append(hir.PrivateArray(hname, elem, tuple(shape), self.span(d)))
        self.scopes[-1][name] = PrivB(hname, elem, tuple(shape), const)
        return [hir.PrivateInit(self.span(d), hname, tuple(values))]

    def array_values(self, value: Node, shape: tuple[int, ...], elem: ScalarType) -> list[hir.Expr]:
        """The row-major values of a braced initializer, each converted as braces convert (no
        narrowing); rows may be braced or not (C++'s brace elision); missing values are zero."""
        n = 1
        for x in shape:
            n *= x
        zero = hir.Const(elem, None, 0.0 if elem.is_float else (False if elem is BOOL else 0))
        out: list[hir.Expr] = []
        items = value.named_children
        if len(shape) == 2 and items and all(x.type == "initializer_list" for x in items):
            if len(items) > shape[0]:
                raise self.error(items[shape[0]], f"too many initializers: the array has {shape[0]} rows")
            for row in items:
                vals = self.array_values(row, shape[1:], elem)
                out += vals + [zero] * (shape[1] - len(vals))
            return out
        if len(items) > n:
            raise self.error(items[n], f"too many initializers: the array has {n} elements")
        for x in items:
            if x.type == "initializer_list":
                raise self.error(x, "braces here would initialise a scalar element: drop them")
            e = self.expr(x)
            self.check_narrowing(e, elem, x)
            out.append(self.convert(e, elem, x))
        return out

    def subscripts(self, n: Node) -> tuple[Node, list[Node]]:
        """a[i][j]...: the indexed expression and the index nodes, outermost first."""
        idx_nodes: list[Node] = []
        base = n
        while base.type == "subscript_expression":
            ind = base.child_by_field_name("indices") or base.child_by_field_name("index")
            parts = ind.named_children if ind.type == "subscript_argument_list" else [ind]
            if len(parts) != 1:
                raise self.error(ind, "index with one integer: a[i]")
            idx_nodes.insert(0, parts[0])
            base = base.child_by_field_name("argument")
        return base, idx_nodes

    def private_ref(self, n: Node) -> tuple[PrivB, tuple[hir.Expr, ...]] | None:
        """t[i] or t[i][j] of a per-thread array: the array and its indices (None: another array)."""
        base, idx_nodes = self.subscripts(n)
        if base.type != "identifier":
            return None
        b = self.lookup(self.text(base))
        if not isinstance(b, PrivB):
            return None
        if len(idx_nodes) != len(b.shape):
            form = "[i]" * len(b.shape)
            raise self.error(
                n, f"{self.text(base)!r} has {len(b.shape)} dimension(s): index it {self.text(base)}{form}"
            )
        idxs = []
        for p in idx_nodes:
            e = self.promote(self.expr(p), p)
            if not e.type.is_int:
                raise self.error(p, f"{NOT_AN_INDEX}, not {e.type}")
            idxs.append(e)
        return b, tuple(idxs)

    def step_of(self, u: Node, name: str) -> int | None:
        if u.type == "update_expression":
            arg = u.child_by_field_name("argument")
            op = self.text(u.child_by_field_name("operator"))
            return 1 if self.text(arg) == name and op == "++" else None
        if u.type == "assignment_expression" and self.text(u.child_by_field_name("operator")) == "+=":
            if self.text(u.child_by_field_name("left")) != name:
                return None
            r = u.child_by_field_name("right")
            if r.type != "number_literal":
                return None
            v = self.literal(r).value
            return v if isinstance(v, int) and not isinstance(v, bool) and 0 < v < 2**31 else None
        return None

    # -- declarations
    def declaration(self, n: Node) -> list[hir.Stmt]:
        shared = self.unit.marks.get(n.start_byte) == "__shared__"
        tnode = n.child_by_field_name("type")
        quals = [self.text(c) for c in n.children if c.type in ("type_qualifier", "storage_class_specifier")]
        if "static" in quals or "extern" in quals or "thread_local" in quals:
            raise self.error(n, "static and extern variables are not supported in kernels")
        const = "const" in quals or "constexpr" in quals
        out: list[hir.Stmt] = []
        for d in _children(n, "declarator"):
            for x in _walk(d):
                if x.type == "new_expression":
                    raise self.error(x, "heap allocation (new) is not available on a GPU: use __shared__ arrays")
                if x.type == "call_expression":
                    callee = self.callee_name(x.child_by_field_name("function"))[0]
                    if callee in REFUSED_CALLS:
                        raise self.error(x, REFUSED_CALLS[callee])
            if shared:
                self.shared_array(n, tnode, d)
                continue
            if d.type == "array_declarator" or (
                d.type == "init_declarator" and d.child_by_field_name("declarator").type == "array_declarator"
            ):
                out += self.private_array(tnode, d, const)
                continue
            if d.type in ("pointer_declarator", "reference_declarator"):
                if d.type == "pointer_declarator" and self.local_array_alias(tnode, d):
                    continue
                raise self.error(d, "local pointers and references are not supported: index the arrays directly")
            if d.type == "identifier":
                t = self.scalar_type(tnode) if self.text(tnode) != "auto" else None
                if t is None:
                    raise self.error(d, "auto needs an initializer")
                if const:
                    raise self.error(d, "a const variable needs an initializer")
                self.fresh_in_scope(d)
                name = self.declare_name(self.text(d), t)
                self.scopes[-1][self.text(d)] = VarB(name, t)
                # an uninitialised variable has an indeterminate value in C++: here it is zero
                out.append(hir.Assign(self.span(d), name, hir.Const(t, self.span(d), 0.0 if t.is_float else 0)))
                continue
            if d.type != "init_declarator":
                raise self.error(d, "unsupported declaration")
            target = d.child_by_field_name("declarator")
            value = d.child_by_field_name("value")
            if target.type == "reference_declarator":
                out += self.reference(tnode, target, value, const)
                continue
            if target.type != "identifier":
                if target.type == "pointer_declarator" and self.local_array_alias(tnode, d):
                    continue
                raise self.error(target, "only scalar variables can be declared here (arrays: __shared__)")
            braced = value.type == "initializer_list"
            if value.type in ("initializer_list", "argument_list"):  # T x{v}, T x = {v}, T x(v)
                vals = value.named_children
                if len(vals) != 1:
                    raise self.error(value, "a scalar is initialised with one value")
                value = vals[0]
            if value.type == "lambda_expression":
                self.lambda_declaration(tnode, target, value)
                continue
            if self.local_array_call(value):
                if self.text(tnode) != "auto":
                    raise self.error(tnode, "auto s = wave::local_array<float, 256>(); (or float* s = ...)")
                self.make_local(self.text(target), value, value)
                continue
            if "constexpr" in quals or "const" in quals:
                c = self.constant_declaration(n, d)
                if c:
                    continue
                if "constexpr" in quals:
                    raise self.error(value, "constexpr needs a constant expression (write const for a run-time value)")
            if self.text(tnode) == "auto":
                e = self.expr(value)
                if e.type is VOID:
                    raise self.error(value, NO_VALUE)
                if self.narrow_load(value):
                    raise self.error(
                        tnode, "auto would make a storage-only 8/16-bit variable: write int32_t or uint32_t"
                    )
                t = e.type
            else:
                t = self.scalar_type(tnode)
                e = self.expr(value)
                if braced:
                    self.check_narrowing(e, t, value)
                e = self.convert(e, t, value)
            self.fresh_in_scope(target)
            name = self.declare_name(self.text(target), t)
            self.scopes[-1][self.text(target)] = VarB(name, t, const)
            out.append(hir.Assign(self.span(d), name, e))
        return out

    def lambda_declaration(self, tnode: Node, target: Node, value: Node) -> None:
        """`auto f = [](float v) { return v * v; };` or `[&]`: a name the kernel calls (inlined).
        A capture by copy (`[=]`, `[x]`) takes the values at the definition, which inlining at the
        call would not keep: refused."""
        if self.text(tnode) != "auto":
            raise self.error(tnode, "a lambda is held in an auto variable: auto f = [&](float v) { ... };")
        caps = value.child_by_field_name("captures")
        items = [c for c in caps.named_children if c.type != "comment"] if caps is not None else []
        by_copy = [c for c in items if self.text(c).replace(" ", "") not in ("&",) and not self.text(c).startswith("&")]
        if by_copy:
            raise self.error(
                by_copy[0],
                "a lambda capturing by copy takes the values at its definition: capture by reference, [&], or "
                "pass the values as arguments",
            )
        name = self.text(target)
        self.fresh_in_scope(target)
        fd = FunctionDef(name, value)
        scopes = [{}] if not items else list(self.scopes)  # [] sees the file's names only
        self.tmp += 1
        self.scopes[-1][name] = LambdaB(fd, scopes, self.tmp)

    def reference(self, tnode: Node, target: Node, value: Node, const: bool) -> list[hir.Stmt]:
        """`float& r = out[i];` (an alias of the element: reads load it, writes store it; the index
        is evaluated here, once) or `float& r = x;` (another name of the variable x)."""
        name_n = target.named_children[-1] if target.named_children else target
        if name_n.type != "identifier":
            raise self.error(target, "a reference declares one name: float& r = a[i];")
        if value.type == "initializer_list" and len(value.named_children) == 1:
            value = value.named_children[0]
        while value.type == "parenthesized_expression":
            value = value.named_children[0]
        auto = self.text(tnode) == "auto"
        want = None if auto else self.scalar_type(tnode, elements=True)
        if value.type == "identifier":
            b = self.lookup(self.text(value))
            if not isinstance(b, VarB | RefB):
                raise self.error(value, "a reference binds a variable or an array element here: float& r = a[i];")
            have = b.type if isinstance(b, VarB) else b.array.type.elem
            if want is not None and want != have:
                raise self.error(value, f"a {self.text(tnode)}& cannot bind a {_cpp_name(have)} (C++ refuses it too)")
            if not const and b.const:
                raise self.error(value, f"{self.text(value)!r} is const: bind it with const {self.text(tnode)}&")
            self.fresh_in_scope(name_n)
            self.scopes[-1][self.text(name_n)] = b if not const or b.const else _const_view(b)
            return []
        if value.type == "subscript_expression" and self.private_ref(value) is not None:
            raise self.error(value, "a reference to a per-thread array's element is not supported: index the array")
        if value.type not in ("subscript_expression", "pointer_expression"):
            raise self.error(value, "a reference binds a variable or an array element here: float& r = a[i];")
        _, idx, ab = self.element(value, write=not const)
        if want is not None and want != ab.type.elem:
            raise self.error(
                value, f"a {self.text(tnode)}& cannot bind a {_cpp_name(ab.type.elem)} element (C++ refuses it too)"
            )
        sp = self.span(target)
        var = self.fresh("ref", idx.type)
        self.fresh_in_scope(name_n)
        self.scopes[-1][self.text(name_n)] = RefB(ab, var, idx.type, const or ab.const)
        return self.flush([hir.Assign(sp, var, idx)])

    def fresh_in_scope(self, name: Node) -> None:
        """C++ refuses a second declaration of a name in one scope (a parameter's included)."""
        if self.text(name) in self.scopes[-1]:
            raise self.error(name, f"{self.text(name)!r} is already declared in this scope")

    def check_narrowing(self, e: hir.Expr, t: ScalarType, n: Node) -> None:
        """Braces refuse a narrowing conversion (C++11): float to int, a wider float to a
        narrower one, int to float, or int to an int type that does not hold every value;
        a constant whose value fits is no narrowing."""
        s = e.type
        if s == t or (s is BOOL and t is not BOOL):
            return
        if s.is_float and t.is_float and s.bits < t.bits:
            return
        if isinstance(e, hir.Const) and not (s.is_float and not t.is_float):
            v = e.value
            if s.is_int and t is BOOL and v in (0, 1):
                return
            if s.is_int and t.is_int and _fits(int(v), t):
                return
            if s.is_int and t.is_float and _round(float(v), t) == v:
                return
            if s.is_float and t.is_float and (not math.isfinite(v) or math.isfinite(_round(float(v), t))):
                return
        raise self.error(
            n,
            f"narrowing conversion from {_cpp_name(s)} to {_cpp_name(t)} in braces: write static_cast<{_cpp_name(t)}>(...)",
        )

    def narrow_load(self, n: Node) -> bool:
        if n.type == "subscript_expression":
            b = self.lookup(self.text(n.child_by_field_name("argument")))
            return isinstance(b, ArrB) and b.type.elem.narrow
        return False

    def constant_declaration(self, n: Node, d: Node, file_scope: bool = False) -> bool:
        """`constexpr T NAME = constant;`: a name for a constant (True), or False when the value
        is not a constant expression (a const variable, then)."""
        tnode = n.child_by_field_name("type")
        if d.type != "init_declarator" or d.child_by_field_name("declarator").type != "identifier":
            raise self.error(d, "constants are declared constexpr T NAME = value;")
        value = d.child_by_field_name("value")
        if value.type == "initializer_list" and len(value.named_children) == 1:
            value = value.named_children[0]
        saved, self.pre = self.pre, []
        try:
            e = self.expr(value)
            if self.text(tnode) != "auto":
                e = self.convert(e, self.scalar_type(tnode), value)
        finally:
            self.pre = saved  # a value that needs statements is no constant: lowered again as a variable
        c = _fold(e)
        name = self.text(d.child_by_field_name("declarator"))
        if c is None:
            if file_scope:
                raise self.error(value, "a file-scope constant needs a constant expression")
            return False
        if file_scope:
            if name in self.unit.constants or name in self.unit.functions:
                raise self.error(d, f"{name!r} is already defined")
            self.unit.constants[name] = c
        else:
            self.fresh_in_scope(d.child_by_field_name("declarator"))
            self.scopes[-1][name] = ConstB(c)
        return True

    def local_array_call(self, value: Node) -> bool:
        if value.type != "call_expression":
            return False
        name, scope = self.callee_name(value.child_by_field_name("function"))
        spelled = CALLS.get(("wave" if scope.startswith("wave") else scope, name))
        return spelled is not None and ROWS[spelled[0]].rule is Rule.LOCAL

    def local_array_alias(self, tnode: Node, d: Node) -> bool:
        """`float* s = wave::local_array<float, 256>();`"""
        if d.type != "init_declarator":
            return False
        target, value = d.child_by_field_name("declarator"), d.child_by_field_name("value")
        if target.type != "pointer_declarator" or not self.local_array_call(value):
            return False
        name = target.child_by_field_name("declarator")
        arr = self.make_local(self.text(name), value, value)
        if self.scalar_type(tnode, elements=True) != arr.elem:
            raise self.error(tnode, f"the local array holds {self.text(tnode)}: the pointer type differs")
        return True

    def make_local(self, name: str, call: Node, at: Node) -> ArrayType:
        f = call.child_by_field_name("function")
        if f.type == "qualified_identifier":
            f = f.child_by_field_name("name")
        if f.type != "template_function":
            raise self.error(call, "wave::local_array<T, N>() names its element type and size")
        targs = [c for c in f.child_by_field_name("arguments").named_children]
        if len(targs) != 2 or call.child_by_field_name("arguments").named_children:
            raise self.error(call, "wave::local_array<T, N>() takes a type and a constant size, no arguments")
        elem, shape = self.bind_local(targs[0], targs[1:], call)
        return self.add_local(name, elem, shape, at)

    def bind_local(self, tnode: Node, dims: list[Node], at: Node) -> tuple[ScalarType, tuple[int, ...]]:
        """A workgroup-shared array's element type and shape, bound to the local_array row."""
        row = next(r for r in ROWS.values() if r.rule is Rule.LOCAL)
        elem = self.scalar_type(tnode, elements=True)
        sizes = tuple(self.const_or_none(x) for x in dims)
        shape = sizes if len(sizes) != 1 else sizes[0]
        r = bind.bind(row, self.span(at), [elem, shape])  # type: ignore[list-item]
        if isinstance(r, bind.Refusal):
            where = {0: tnode, 1: next((d for d, v in zip(dims, sizes) if v is None or v < 1), at)}
            msg = r.message.replace("local_array element type", "a shared array's element type")
            msg = _cpp_words(msg.replace(f"a {row.name} count", "a shared array's size"))
            arg = where.get(r.arg, at) if isinstance(r.arg, int) else at
            raise self.error(arg if len(dims) <= 2 else dims[2], msg)
        attrs = dict(r.attrs) if isinstance(r, hir.Call) else {}
        return attrs["dtype"], attrs["shape"]  # type: ignore[return-value]

    def shared_array(self, n: Node, tnode: Node, d: Node) -> None:
        """`__shared__ float s[256];` or `__shared__ float tile[16][17];`: a workgroup-shared array."""
        if d.type == "init_declarator":
            raise self.error(d, "__shared__ arrays cannot be initialised (store to them, then barrier())")
        dims: list[Node] = []
        while d.type == "array_declarator":
            size = d.child_by_field_name("size")
            if size is None:
                raise self.error(d, "a __shared__ array needs a constant size")
            dims.insert(0, size)
            d = d.child_by_field_name("declarator")
        if not dims or d.type != "identifier":
            raise self.error(d, "__shared__ declares arrays: __shared__ float s[256];")
        elem, shape = self.bind_local(tnode, dims, n)
        self.add_local(self.text(d), elem, shape, n)

    def add_local(self, name: str, elem: ScalarType, shape: tuple[int, ...], at: Node) -> ArrayType:
        if name in self.scopes[-1]:
            raise self.error(at, f"{name!r} is already declared in this scope")
        taken = name in self.arrays or name in self.vars or name in self.taken
        hname = self.fresh(name, elem.value_type) if taken else name
        self.vars.pop(hname, None)
        at_ = ArrayType(elem, "local")
        self.arrays[hname] = at_
        self.locals.append(hir.LocalArray(hname, at_, math.prod(shape), self.span(at)))
        self.scopes[-1][name] = ArrB(hname, at_, False, shape)
        return at_

    # -- expression statements
    def expr_stmt(self, n: Node) -> list[hir.Stmt]:
        sp = self.span(n)
        t = n.type
        if t == "assignment_expression":
            return self.assignment(n)
        if t == "update_expression":
            self.update(n, want_value=False)
            return []
        if t == "comma_expression":
            out: list[hir.Stmt] = []
            for part in _flatten_comma(n):
                out += self.flush(self.expr_stmt(part))
            return out
        if t == "call_expression":
            e = self.call(n, statement=True)
            if e is None:
                return []
            if isinstance(e, hir.Var | hir.Const):
                return []  # a helper's result, unused: its statements ran
            return [hir.ExprStmt(sp, e)]  # evaluated for its effects (an atomic, also under a cast)
        if t == "parenthesized_expression":
            return self.expr_stmt(n.named_children[0])
        if t == "cast_expression" and self.text(n.child_by_field_name("type")).strip() == "void":
            # `(void)old;`: C++'s way to say a value is unused (it silences -Wunused)
            v = n.child_by_field_name("value")
            while v.type == "parenthesized_expression":
                v = v.named_children[0]
            if v.type in ("assignment_expression", "update_expression", "comma_expression", "call_expression"):
                return self.expr_stmt(v)
            self.expr(v)  # checked (a name must exist), then dropped
            return []
        raise self.error(n, "this expression statement has no effect (assign it, or call a function)")

    def assignment(self, n: Node) -> list[hir.Stmt]:
        sp = self.span(n)
        left = n.child_by_field_name("left")
        op = self.text(n.child_by_field_name("operator"))
        right = n.child_by_field_name("right")
        pr = self.private_ref(left) if left.type == "subscript_expression" else None
        if pr is not None:
            pb, idxs = pr
            if pb.const:
                raise self.error(left, f"assignment of read-only location {self.text(left)!r} (the array is const)")
            if op != "=":
                idxs = tuple(self.once(i, sp) for i in idxs)
                cur0 = hir.PrivateLoad(pb.elem, sp, pb.name, idxs)
                return [
                    hir.PrivateStore(
                        sp, pb.name, idxs, self.convert(self.binary(op[:-1], cur0, self.expr(right), n), pb.elem, n)
                    )
                ]
            return [hir.PrivateStore(sp, pb.name, idxs, self.convert(self.expr(right), pb.elem, right))]
        ref = left.type == "identifier" and isinstance(self.lookup(self.text(left)), RefB)
        if op == "=":
            if left.type == "identifier" and not ref:
                b = self.writable_var(left)
                value = self.convert(self.expr(right), b.type, right)
                return [hir.Assign(sp, b.name, value)]
            arr, idx, ab = self.element(left, write=True)
            value = self.store_value(ab, self.expr(right), right)
            return [hir.Store(sp, arr, idx, value)]
        sym = op[:-1]
        if left.type == "identifier" and not ref:
            b = self.writable_var(left)
            cur = hir.Var(b.type, sp, b.name)
            value = self.convert(self.binary(sym, cur, self.expr(right), n), b.type, n)
            return [hir.Assign(sp, b.name, value)]
        arr, idx, ab = self.element(left, write=True)
        idx = self.once(idx, sp)
        cur2 = self.load(ab, idx, sp)
        value = self.store_value(ab, self.binary(sym, cur2, self.expr(right), n), n)
        return [hir.Store(sp, arr, idx, value)]

    def once(self, e: hir.Expr, sp) -> hir.Expr:
        """e evaluated once: a temporary unless it is a constant or a variable."""
        if isinstance(e, hir.Const | hir.Var):
            return e
        tmp = self.fresh("t", e.type)
        self.pre.append(hir.Assign(sp, tmp, e))
        return hir.Var(e.type, sp, tmp)

    def update(self, n: Node, want_value: bool) -> hir.Expr | None:
        """++x, x++, --x, x-- (on variables and array elements): x += 1 with C++'s conversions."""
        sp = self.span(n)
        arg = n.child_by_field_name("argument")
        op = self.text(n.child_by_field_name("operator"))
        postfix = arg.start_byte == n.start_byte
        sym = "+" if op == "++" else "-"
        if arg.type == "identifier" and not isinstance(self.lookup(self.text(arg)), RefB):
            b = self.writable_var(arg)
            if b.type is BOOL:
                raise self.error(n, f"{op} on a bool is not allowed in C++17 and later")
            cur = hir.Var(b.type, sp, b.name)
            old = None
            if want_value and postfix:
                old = self._copy(cur, sp)
            new = self.convert(self.binary(sym, cur, hir.Const(I32, sp, 1), n), b.type, n)
            self.pre.append(hir.Assign(sp, b.name, new))
            if not want_value:
                return None
            return old if old is not None else hir.Var(b.type, sp, b.name)
        pr = self.private_ref(arg) if arg.type == "subscript_expression" else None
        if pr is not None:
            pb, idxs = pr
            if pb.const:
                raise self.error(arg, f"increment of read-only location {self.text(arg)!r} (the array is const)")
            if pb.elem is BOOL:
                raise self.error(n, f"{op} on a bool is not allowed in C++17 and later")
            idxs = tuple(self.once(i, sp) for i in idxs)
            cur_p = hir.PrivateLoad(pb.elem, sp, pb.name, idxs)
            old_p = self._copy(cur_p, sp) if want_value else None
            new_p = self.convert(self.binary(sym, old_p or cur_p, hir.Const(I32, sp, 1), n), pb.elem, n)
            self.pre.append(hir.PrivateStore(sp, pb.name, idxs, new_p))
            if not want_value:
                return None
            return old_p if postfix else hir.PrivateLoad(pb.elem, sp, pb.name, idxs)
        arr, idx, ab = self.element(arg, write=True)
        idx = self.once(idx, sp)
        cur2 = self.load(ab, idx, sp)
        old = self._copy(cur2, sp) if want_value else None
        cur3 = old if old is not None else cur2
        value = self.store_value(ab, self.binary(sym, cur3, hir.Const(I32, sp, 1), n), n)
        self.pre.append(hir.Store(sp, arr, idx, value))
        if not want_value:
            return None
        return old if postfix else self.load(ab, idx, sp)

    def _copy(self, e: hir.Expr, sp) -> hir.Var:
        tmp = self.fresh("old", e.type)
        self.pre.append(hir.Assign(sp, tmp, e))
        return hir.Var(e.type, sp, tmp)

    def writable_var(self, n: Node) -> VarB:
        name = self.text(n)
        b = self.lookup(name)
        if b is None:
            raise self.error(n, f"{name!r} is not declared")
        if isinstance(b, ArrB | PrivB):
            raise self.error(n, f"{name!r} is an array; assign its elements: {name}[i] = ...")
        if isinstance(b, LambdaB):
            raise self.error(n, f"{name!r} is a lambda, which cannot be assigned (C++ deletes its operator=)")
        if isinstance(b, ConstB) or b.const:
            raise self.error(n, f"{name!r} is const")
        assert isinstance(b, VarB), "a reference is assigned through its element (the callers' RefB case)"
        return b

    # -- arrays
    def element(self, n: Node, write: bool = False) -> tuple[str, hir.Expr, ArrB]:
        """a[i] (a 1-D array), t[i][j] (a 2-D __shared__ array), *(a + i), *a, or a reference to an
        element: the array and the flat index."""
        if n.type == "identifier" and isinstance(self.lookup(self.text(n)), RefB):
            r = self.lookup(self.text(n))
            assert isinstance(r, RefB)
            if write and r.const:
                raise self.error(n, f"{self.text(n)!r} is a const reference: the kernel cannot write through it")
            return r.array.name, hir.Var(r.index_type, self.span(n), r.index), r.array
        if n.type == "pointer_expression" and self.text(n.child_by_field_name("operator")) == "*":
            return self.dereference(n, write)
        if n.type != "subscript_expression":
            raise self.error(n, "only variables and array elements can be assigned")
        base, idx_nodes = self.subscripts(n)
        if base.type != "identifier":
            raise self.error(base, "only arrays can be indexed (pointer arithmetic is not supported)")
        b = self.lookup(self.text(base))
        if not isinstance(b, ArrB):
            raise self.error(base, f"{self.text(base)!r} is not an array")
        dims = b.shape or (0,)
        if len(idx_nodes) != len(dims):
            form = "[i]" * len(dims)
            raise self.error(n, f"{self.text(base)!r} has {len(dims)} dimension(s): index it {self.text(base)}{form}")
        if write and b.const:
            raise self.error(n, f"{self.text(base)!r} points to const: the kernel cannot write it")
        idxs = []
        for p in idx_nodes:
            e = self.promote(self.expr(p), p)
            if not e.type.is_int:
                raise self.error(p, f"{NOT_AN_INDEX}, not {e.type}")
            idxs.append(e)
        idx = idxs[0]
        if len(idxs) == 2:
            sp = self.span(n)
            row = self.binary_typed(BinOp.MUL, idx, hir.Const(I32, sp, b.shape[1]), n)
            idx = self.binary_typed(BinOp.ADD, row, idxs[1], n)
        return b.name, idx, b

    def dereference(self, n: Node, write: bool) -> tuple[str, hir.Expr, ArrB]:
        """`*(a + i)`, `*(i + a)` or `*a` of a 1-D array: the element a[i] (a[0])."""
        arg = n.child_by_field_name("argument")
        while arg.type == "parenthesized_expression":
            arg = arg.named_children[0]
        base, offset = arg, None
        if arg.type == "binary_expression" and self.text(arg.child_by_field_name("operator")) == "+":
            left, right = arg.child_by_field_name("left"), arg.child_by_field_name("right")
            pointer = isinstance(self.lookup(self.text(right)), ArrB | PrivB) and right.type == "identifier"
            base, offset = (right, left) if pointer else (left, right)
        b = self.lookup(self.text(base)) if base.type == "identifier" else None
        if isinstance(b, PrivB):
            raise self.error(n, f"{self.text(base)!r} is a per-thread array: index it, {self.text(base)}[i]")
        if not isinstance(b, ArrB) or len(b.shape) > 1:
            raise self.error(
                n, "a dereference reads an element of a 1-D array: *(a + i) or *a (pointer variables are not supported)"
            )
        if write and b.const:
            raise self.error(n, f"{self.text(base)!r} points to const: the kernel cannot write it")
        sp = self.span(n)
        idx: hir.Expr = hir.Const(I32, sp, 0)
        if offset is not None:
            idx = self.promote(self.expr(offset), offset)
            if not idx.type.is_int:
                raise self.error(offset, f"a pointer offset is an integer, not {_cpp_name(idx.type)}")
        return b.name, idx, b

    def load(self, b: ArrB, idx: hir.Expr, sp) -> hir.Expr:
        elem = b.type.elem
        e: hir.Expr = hir.Load(elem.value_type, sp, b.name, idx)
        if elem.narrow and elem.value_type is U32:
            e = hir.Cast(I32, sp, e)  # uint8_t and uint16_t values promote to int (they fit)
        return e

    def store_value(self, b: ArrB, e: hir.Expr, n: Node) -> hir.Expr:
        """The value stored into an element: converted to the element type (8/16-bit elements keep
        the low bits, as C++'s conversion to an unsigned type does)."""
        elem = b.type.elem
        if elem.narrow:
            if e.type is VOID:
                raise self.error(n, NO_VALUE)
            v = self.convert(e, I32 if e.type.is_float else self.promote(e, n).type, n)
            return self.convert(v, elem.value_type, n)
        return self.convert(e, elem, n)

    # -- expressions
    def condition(self, n: Node) -> hir.Expr:
        if n.type == "condition_clause":
            inner = n.child_by_field_name("value") or n.named_children[-1]
            if n.child_by_field_name("initializer") is not None or inner.type == "declaration":
                raise self.error(n, "declarations in conditions are not supported")
            n = inner
        if n.type == "parenthesized_expression":
            n = n.named_children[0]
        return self.truth(self.expr(n), n)

    def truth(self, e: hir.Expr, n: Node) -> hir.Expr:
        if e.type is BOOL:
            return e
        if e.type is VOID:
            raise self.error(n, NO_VALUE)
        if isinstance(e, hir.Const):
            return hir.Const(BOOL, e.span, bool(e.value))
        return hir.Compare(BOOL, e.span, Cmp.NE, e, hir.Const(e.type, e.span, 0.0 if e.type.is_float else 0))

    def promote(self, e: hir.Expr, n: Node) -> hir.Expr:
        """The integral promotions: bool becomes int (the 8/16-bit values already are int)."""
        if e.type is VOID:
            raise self.error(n, NO_VALUE)
        if e.type is BOOL:
            return self.convert(e, I32, n)
        return e

    def convert(self, e: hir.Expr, t: ScalarType, n: Node) -> hir.Expr:
        """A C++ standard conversion (implicit or by a cast) of e to t."""
        if e.type is VOID:
            raise self.error(n, NO_VALUE)
        if e.type == t:
            return e
        sp = e.span
        if t is BOOL:
            return self.truth(e, n)
        if e.type is BOOL:
            if isinstance(e, hir.Const):
                return hir.Const(t, sp, (1.0 if t.is_float else 1) if e.value else (0.0 if t.is_float else 0))
            one, zero = (1.0, 0.0) if t.is_float else (1, 0)
            return hir.IfExpr(t, sp, e, hir.Const(t, sp, one), hir.Const(t, sp, zero))
        if isinstance(e, hir.Const):
            v = e.value
            if t.is_int and e.type.is_int:
                return hir.Const(t, sp, _wrap(int(v), t))
            if t.is_float and e.type.is_int:
                return hir.Const(t, sp, _round(float(v), t))
            if t.is_float and e.type.is_float:
                return hir.Const(t, sp, _round(float(v), t))
            if t.is_int and e.type.is_float and math.isfinite(v):
                iv = int(v)  # truncation toward zero
                if _fits(iv, t):
                    return hir.Const(t, sp, iv)
                raise self.error(n, f"{v} does not fit {_cpp_name(t)} (the conversion is undefined in C++)")
        return hir.Cast(t, sp, e)

    def cast(self, e: hir.Expr, t: ScalarType, n: Node) -> hir.Expr:
        """An explicit conversion; to an 8- or 16-bit type it keeps the low bits (sign-extended
        for int8_t and int16_t), and the value is then an int, as C++ promotes it."""
        if not t.narrow:
            return self.convert(e, t, n)
        sp = self.span(n)
        v = self.convert(e, I32, n)
        shift = hir.Const(I32, sp, 32 - t.bits)
        if t.signed:
            return self.fold(hir.Binary(I32, sp, BinOp.SHR, hir.Binary(I32, sp, BinOp.SHL, v, shift), shift))
        return self.fold(hir.Binary(I32, sp, BinOp.AND, v, hir.Const(I32, sp, (1 << t.bits) - 1)))

    def arith_type(self, a: hir.Expr, b: hir.Expr, n: Node) -> ScalarType:
        """The usual arithmetic conversions of C++ for two promoted operands."""
        ta, tb = a.type, b.type
        if VOID in (ta, tb):
            raise self.error(n, NO_VALUE)
        if ta.is_float or tb.is_float:
            for t in (F64, F32, F16):
                if t in (ta, tb):
                    return t
        if ta == tb:
            return ta
        return U32  # int with unsigned int: unsigned int

    def binary(self, sym: str, a: hir.Expr, b: hir.Expr, n: Node) -> hir.Expr:
        sp = self.span(n)
        a, b = self.promote(a, n), self.promote(b, n)
        if sym in SHIFTS:
            if not (a.type.is_int and b.type.is_int):
                raise self.error(n, f"{sym} needs integers, not {a.type} and {b.type}")
            return self.fold(hir.Binary(a.type, sp, SHIFTS[sym], a, self.convert(b, a.type, n)))
        t = self.arith_type(a, b, n)
        a, b = self.convert(a, t, n), self.convert(b, t, n)
        if sym in COMPARES:
            return self.fold(hir.Compare(BOOL, sp, COMPARES[sym], a, b))
        if sym in BITS:
            if not t.is_int:
                raise self.error(n, f"{sym} needs integers, not {t}")
            return self.fold(hir.Binary(t, sp, BITS[sym], a, b))
        if sym in ARITH:
            op = ARITH[sym]
            if t.is_int and op is BinOp.DIV:
                op = BinOp.TRUNC_DIV
            if op is BinOp.TRUNC_REM and not t.is_int:
                raise self.error(n, "% needs integers (for floats: x - y * wave::floor(x / y))")
            if op in (BinOp.TRUNC_DIV, BinOp.TRUNC_REM) and isinstance(b, hir.Const) and b.value == 0:
                raise self.error(n, "division by zero")
            return self.fold(hir.Binary(t, sp, op, a, b))
        raise self.error(n, f"operator {sym} is not supported")

    def binary_typed(self, op: hir.BinaryOp, a: hir.Expr, b: hir.Expr, n: Node) -> hir.Expr:
        sym = {BinOp.MUL: "*", BinOp.ADD: "+"}[op]
        return self.binary(sym, a, b, n)

    def fold(self, e: hir.Expr) -> hir.Expr:
        c = _fold(e)
        return c if c is not None else e

    def expr(self, n: Node) -> hir.Expr:
        t = n.type
        sp = self.span(n)
        if t == "number_literal":
            return self.literal(n)
        if t in ("true", "false"):
            return hir.Const(BOOL, sp, t == "true")
        if t == "parenthesized_expression":
            inner = n.named_children[0]
            if inner.type == "comma_expression":
                raise self.error(inner, "the comma operator is not supported")
            return self.expr(inner)
        if t == "identifier":
            return self.name(n)
        if t == "qualified_identifier":
            name, scope = self.callee_name(n)
            if name in CONSTANTS and scope in ("wave", "std::numbers", "numbers"):
                return hir.Const(
                    F32 if scope == "wave" else F64, sp, _round(CONSTANTS[name], F32 if scope == "wave" else F64)
                )
            raise self.error(n, f"unknown name {self.text(n)!r}")
        if t == "binary_expression":
            sym = self.text(n.child_by_field_name("operator"))
            ln, rn = n.child_by_field_name("left"), n.child_by_field_name("right")
            if sym in ("&&", "||", "and", "or"):
                return self.logical(sym, ln, rn, n)
            return self.binary(sym, self.expr(ln), self.expr(rn), n)
        if t == "unary_expression":
            return self.unary(n)
        if t == "update_expression":
            v = self.update(n, want_value=True)
            assert v is not None
            return v
        if t == "conditional_expression":
            return self.conditional(n)
        if t == "subscript_expression":
            pr = self.private_ref(n)
            if pr is not None:
                return hir.PrivateLoad(pr[0].elem, sp, pr[0].name, pr[1])
            _, idx, b = self.element(n)
            return self.load(b, idx, sp)
        if t == "cast_expression":
            ty = self.scalar_type(n.child_by_field_name("type"), elements=True)
            return self.cast(self.expr(n.child_by_field_name("value")), ty, n)
        if t == "call_expression":
            e = self.call(n)
            if e is None or e.type is VOID:
                raise self.error(n, NO_VALUE)
            return e
        if t == "assignment_expression":
            raise self.error(n, "an assignment inside an expression is not supported: assign in its own statement")
        if t == "pointer_expression":
            op = self.text(n.child_by_field_name("operator"))
            if op == "&":
                raise self.error(n, "addresses are only taken for atomics: wave::atomic_add(&a[i], v)")
            _, idx, b = self.element(n)
            return self.load(b, idx, sp)
        if t == "new_expression" or t == "delete_expression":
            raise self.error(n, "heap allocation (new/delete) is not available on a GPU: use __shared__ arrays")
        if t == "lambda_expression":
            raise self.error(
                n,
                "a lambda is named and then called here: auto f = [&](float v) { ... }; f(x) (it is inlined; it cannot be stored or passed)",
            )
        if t == "field_expression":
            obj, member = self.text(n.child_by_field_name("argument")), self.text(n.child_by_field_name("field"))
            axis = "xyz".find(member)
            if obj in CUDA_IDS and axis >= 0:  # a CUDA port: say what WAVE calls it
                raise self.error(n, f"CUDA's {obj}.{member} is {CUDA_IDS[obj].format(axis)} here")
            raise self.error(n, "member access is not supported (no classes, no virtual calls in kernels)")
        if t == "sizeof_expression":
            raise self.error(n, "sizeof is not supported in kernels")
        if t == "comma_expression":
            raise self.error(n, "the comma operator is not supported")
        if t in ("string_literal", "char_literal", "raw_string_literal"):
            raise self.error(n, "strings and characters are not values in kernels")
        if t == "nullptr":
            raise self.error(n, "pointers are not values in kernels")
        raise self.error(n, f"{t.replace('_', ' ')} is not supported in kernels")

    def name(self, n: Node) -> hir.Expr:
        sp = self.span(n)
        name = self.text(n)
        b = self.lookup(name)
        if isinstance(b, VarB):
            return hir.Var(b.type, sp, b.name)
        if isinstance(b, ConstB):
            return hir.Const(b.value.type, sp, b.value.value)
        if isinstance(b, RefB):
            return self.load(b.array, hir.Var(b.index_type, sp, b.index), sp)
        if isinstance(b, LambdaB):
            raise self.error(
                n, f"{name!r} is a lambda: call it here (it is inlined at its calls; it cannot be stored or passed)"
            )
        if isinstance(b, ArrB | PrivB):
            raise self.error(n, f"{name!r} is an array: index it, {name}[i]")
        if name in CONSTANTS:  # wave::pi ... after `using namespace wave;`
            return hir.Const(F32, sp, _round(CONSTANTS[name], F32))
        if name in ("INFINITY", "NAN"):
            return hir.Const(F32, sp, math.inf if name == "INFINITY" else math.nan)
        raise self.error(n, f"{name!r} is not declared")

    def literal(self, n: Node) -> hir.Const:
        """A C++ literal with its type: int, then (hex/octal/binary only) unsigned int; u: unsigned;
        a decimal literal beyond int is long (64-bit), refused; 1.0 is double, 1.0f float."""
        sp = self.span(n)
        text = self.text(n).replace("'", "")
        if text.startswith(("-", "+")):  # the grammar folds a sign into the literal: unary minus
            c = self.literal_text(text[1:].lstrip(), n)
            if text[0] == "+":
                return c
            v = -c.value
            return hir.Const(c.type, sp, _wrap(int(v), c.type) if c.type.is_int else v)
        return self.literal_text(text, n)

    def literal_text(self, text: str, n: Node) -> hir.Const:
        sp = self.span(n)
        low = text.lower()
        is_hex = low.startswith("0x")
        is_float = ("." in low or ("e" in low and not is_hex) or ("p" in low and is_hex)) and not low.startswith("0b")
        if is_float:
            body = low
            t = F64
            if body.endswith("f") and (not is_hex or "p" in body):  # 0x1p-2f: the exponent is decimal
                body, t = body[:-1], F32
            elif body.endswith(("f16", "bf16")):
                raise self.error(n, "f16 literals: write static_cast<half>(1.0f)")
            elif body.endswith("l"):
                raise self.error(n, "long double is not in the kernel language")
            try:
                v = float.fromhex(body) if is_hex else float(body)
            except ValueError:
                raise self.error(n, f"bad number {text!r}") from None
            return hir.Const(t, sp, _round(v, t))
        m = re.fullmatch(r"(0x[0-9a-f]+|0b[01]+|0[0-7]*|[1-9][0-9]*)([ul]*)", low)
        if m is None:
            raise self.error(n, f"bad number {text!r}")
        digits, suffix = m.groups()
        if "l" in suffix:
            raise self.error(n, "long literals are 64-bit: write 123u or 123 (int32_t, uint32_t)")
        if digits.startswith("0x"):
            v = int(digits, 16)
        elif digits.startswith("0b"):
            v = int(digits[2:], 2)
        elif digits.startswith("0") and len(digits) > 1:
            v = int(digits, 8)
        else:
            v = int(digits)
        decimal = not (digits.startswith("0") and len(digits) > 1) or digits == "0"
        if "u" in suffix:
            if v < 2**32:
                return hir.Const(U32, sp, v)
            raise self.error(n, f"{text} does not fit in 32 bits")
        if v < 2**31:
            return hir.Const(I32, sp, v)
        if not decimal and v < 2**32:
            return hir.Const(U32, sp, v)
        if v < 2**32:
            raise self.error(n, f"{text} is a long (64-bit) in C++, which kernels do not have: write {text}u")
        raise self.error(n, f"{text} does not fit in 32 bits")

    def unary(self, n: Node) -> hir.Expr:
        sp = self.span(n)
        op = self.text(n.child_by_field_name("operator"))
        arg = n.child_by_field_name("argument")
        e = self.expr(arg)
        if op in ("!", "not"):
            return self.fold(hir.Unary(BOOL, sp, hir.UnaryOp.NOT, self.truth(e, arg)))
        e = self.promote(e, arg)
        if op == "+":
            return e
        if op == "-":
            if isinstance(e, hir.Const):
                v = -e.value
                return hir.Const(e.type, sp, _wrap(int(v), e.type) if e.type.is_int else v)
            return hir.Unary(e.type, sp, hir.UnaryOp.NEG, e)
        if op in ("~", "compl"):
            if not e.type.is_int:
                raise self.error(n, f"~ needs an integer, not {e.type}")
            return self.fold(hir.Unary(e.type, sp, hir.UnaryOp.BIT_NOT, e))
        raise self.error(n, f"operator {op} is not supported")

    def logical(self, sym: str, ln: Node, rn: Node, n: Node) -> hir.Expr:
        """&& and || evaluate the right side only when the left does not decide (its pending
        statements, from inlined helpers or ++, run only then)."""
        sp = self.span(n)
        a = self.truth(self.expr(ln), ln)
        saved, self.pre = self.pre, []
        b = self.truth(self.expr(rn), rn)
        rpre, self.pre = self.pre, saved
        op = hir.LogicalOp.AND if sym in ("&&", "and") else hir.LogicalOp.OR
        if not rpre:
            return hir.Logical(BOOL, sp, op, a, b)
        res = self.fresh("c", BOOL)
        self.pre.append(hir.Assign(sp, res, a))
        test: hir.Expr = hir.Var(BOOL, sp, res)
        if op is hir.LogicalOp.OR:
            test = hir.Unary(BOOL, sp, hir.UnaryOp.NOT, test)
        self.pre.append(hir.If(sp, test, (*rpre, hir.Assign(sp, res, b)), ()))
        return hir.Var(BOOL, sp, res)

    def conditional(self, n: Node) -> hir.Expr:
        sp = self.span(n)
        cn = n.child_by_field_name("condition")
        c = self.truth(self.expr(cn), cn)
        saved, self.pre = self.pre, []
        tn, on = n.child_by_field_name("consequence"), n.child_by_field_name("alternative")
        if tn is None or on is None:
            self.pre = saved
            raise self.error(n, "write both branches of ?: (the GNU `a ?: b` is not standard C++)")
        a = self.expr(tn)
        apre, self.pre = self.pre, []
        b = self.expr(on)
        bpre, self.pre = self.pre, saved
        if a.type is BOOL and b.type is BOOL:
            t = BOOL
        else:
            t = self.arith_type(self.promote(a, tn), self.promote(b, on), n)
        a, b = self.convert(a, t, tn), self.convert(b, t, on)
        if not apre and not bpre:
            return hir.IfExpr(t, sp, c, a, b)
        res = self.fresh("sel", t)
        self.pre.append(hir.If(sp, c, (*apre, hir.Assign(sp, res, a)), (*bpre, hir.Assign(sp, res, b))))
        return hir.Var(t, sp, res)

    def const_int(self, n: Node, what: str, lo: int | None = None) -> int:
        c = self.const_or_none(n)
        if c is None:
            raise self.error(n, f"{what} must be a constant integer expression (a literal or a constexpr)")
        if lo is not None and c < lo:
            raise self.error(n, f"{what} must be at least {lo}, not {c}")
        return c

    # -- calls
    def callee_name(self, f: Node) -> tuple[str, str]:
        """(name, namespace) of a callee: `wave::sqrt` -> ('sqrt', 'wave'), `f<T>` -> ('f', '')."""
        if f.type == "qualified_identifier":
            scope = f.child_by_field_name("scope")
            name_n = f.child_by_field_name("name")
            inner, inner_scope = self.callee_name(name_n)
            s = self.text(scope) if scope is not None else ""
            return inner, f"{s}::{inner_scope}" if inner_scope else s
        if f.type == "template_function":
            return self.text(f.child_by_field_name("name")), ""
        if f.type in ("identifier", "primitive_type", "type_identifier", "namespace_identifier"):
            return self.text(f), ""
        return "", ""

    def call(self, n: Node, statement: bool = False) -> hir.Expr | None:
        f = n.child_by_field_name("function")
        args = [a for a in n.child_by_field_name("arguments").named_children if a.type != "comment"]
        if f.type == "field_expression":
            raise self.error(f, "member function calls are not supported (no classes, no virtual calls in kernels)")
        if f.type in ("lambda_expression", "parenthesized_expression"):
            raise self.error(f, "lambdas and function pointers are not supported: write a helper function")
        name, scope = self.callee_name(f)
        if not name:
            raise self.error(f, "only functions can be called")
        if scope not in ("", "wave", "std") and not scope.startswith("wave::"):
            raise self.error(f, f"unknown function {self.text(f)!r}")
        # casts
        if name in ("static_cast", "reinterpret_cast", "const_cast", "dynamic_cast"):
            if name != "static_cast":
                raise self.error(f, REFUSED_CALLS[name])
            if f.type != "template_function":
                raise self.error(f, f"{name}<T>(x) names its type")
            targs = f.child_by_field_name("arguments").named_children
            if len(targs) != 1:
                raise self.error(f, "static_cast<T> names one type")
            t = self.scalar_type(targs[0], elements=True)
            if len(args) != 1:
                raise self.error(n, "static_cast<T>(x) takes one value")
            return self.cast(self.expr(args[0]), t, n)
        if (
            f.type in ("primitive_type", "type_identifier", "identifier")
            and (name in TYPES or any(name in s for s in self.types))
            and self.lookup(name) is None
            and name not in self.unit.functions
        ):
            t = self.scalar_type(f, elements=True)
            if len(args) != 1:
                raise self.error(n, f"{name}(x) converts one value")
            return self.cast(self.expr(args[0]), t, n)
        if scope == "" and name in self.unit.functions:
            return self.inline(n, f, args, name, statement)
        if name in REFUSED_CALLS:
            raise self.error(f, REFUSED_CALLS[name])
        lam = self.lookup(name) if scope == "" and f.type == "identifier" else None
        if isinstance(lam, LambdaB):
            return self.inline(n, f, args, name, statement, lam)
        if scope == "" and self.lookup(name) is not None:
            if f.type == "template_function":  # `a < b || c > (d)`: the grammar guesses a template
                raise self.error(
                    n,
                    f"{name!r} is a variable, but the parser reads `{self.text(n)}` as a template call: "
                    f"parenthesize the comparisons, ({name} < ...) ... (... > ...)",
                )
            raise self.error(f, f"{name!r} is not a function")
        return self.builtin(n, f, name, scope, args)

    def builtin(self, n: Node, f: Node, name: str, scope: str, args: list[Node]) -> hir.Expr:
        """A builtin's call in one of its C++ spellings (CALLS): the arguments converted by C++'s
        overloads (the spelling's Form), bound to the row by compiler/bind.py; a refusal becomes a
        diagnostic at the argument it names."""
        ns = "std" if scope == "std" else "wave" if scope.startswith("wave") else ""
        spelled = CALLS.get((ns, name))
        if spelled is None:
            hint = CUDA_CALLS.get(self.text(f))
            if hint is not None:  # a CUDA port: say what WAVE calls it
                raise self.error(f, f"CUDA's {self.text(f)} is {hint} here")
            raise self.error(
                f,
                f"unknown function {self.text(f)!r} (not a builtin, and not defined in this file or a header it includes)",
            )
        row, form = ROWS[spelled[0]], spelled[1]
        sp = self.span(n)
        if row.rule is Rule.LOCAL:
            raise self.error(n, "declare it: auto s = wave::local_array<float, 256>();")
        if bind.toolchain_id(row, len(args)):
            self.toolchain_dialect = True  # the Rust toolchain's local id (builtins.TOOLCHAIN_WORKGROUP)
        address = row.rule is Rule.ATOMIC and bool(args) and self.is_address(args[0])
        places = [args[0], *args] if address else list(args)  # &a[i] is the array and the index
        r = bind.call(row, sp, _Args(self, row, form, address, n), places, spelled=name, variadic=False)
        if isinstance(r, bind.Refusal) and r.arity:
            raise self.error(n, f"{r.message}: {SPELLINGS[row.name]}")
        if isinstance(r, bind.Refusal):
            msg = _cpp_words(r.message)
            if row.rule in (Rule.MATH, Rule.FLOAT_SAME) and r.arg is not None and row.name in FLOAT_NAMES:
                more = ", ..." if len(row.args) > 1 else ""
                msg += f": {FLOAT_NAMES[row.name]}(static_cast<float>(x){more}) computes it in float, if that is what you mean"
            elif row.rule is Rule.POWI and r.arg == 1:
                msg = f"{self.text(f)}'s exponent must be a constant positive integer here: powf(x, y) takes any"
            elif row.rule is Rule.VOID:
                msg = "fence takes wave::scope::wave, wave::scope::workgroup or wave::scope::device"
            raise self.error(bind.at(r, places) or n, msg)
        if row.rule is Rule.ID:  # uint32_t in C++ (the ids are never negative): the same bits
            return hir.Cast(U32, sp, r)
        order = STANDARD_ORDER.get((ns, name))
        if order is not None and isinstance(r, hir.Call) and r.type.is_float:
            return order(sp, *(self.once(a, sp) for a in r.args))
        return r

    def overload(self, row: Builtin, form: Form, nodes: list[Node], n: Node) -> list[hir.Expr]:
        """A builtin's value arguments as the C++ overload of the spelling takes them (Form)."""
        xs = [self.promote(self.expr(a), a) for a in nodes]
        sp = self.span(n)
        if form in (Form.FLOAT, Form.GCC_POWI):
            t: ScalarType = F32
        elif form is Form.CAST:
            return [self.convert(xs[0], CASTS[row.name], n)]
        elif form in (Form.EXACT, Form.ABS):
            if form is Form.ABS and xs[0].type is U32:
                raise self.error(
                    n,
                    f"{self.text(n.child_by_field_name('function'))} of a uint32_t is ambiguous in C++ (and would be the value itself)",
                )
            return xs
        elif form is Form.UINT:  # the builtin's parameter is unsigned int: an int converts
            return [self.convert(x, U32, a) if x.type.is_int else x for x, a in zip(xs, nodes)]
        elif form is Form.UNSIGNED:
            if xs[0].type is not U32:
                f = self.text(n.child_by_field_name("function"))
                raise self.error(
                    nodes[0],
                    f"{f} takes an unsigned integer in C++ (<bit>), not {_cpp_name(xs[0].type)}: "
                    f"{f}(static_cast<uint32_t>(x)) counts the bits of its two's complement",
                )
            return xs
        elif form is Form.ONE_T:
            # a template of one T: C++ deduces T from every argument, which must agree
            if any(x.type != xs[0].type for x in xs):
                a, b = (_cpp_name(x.type) for x in (xs[0], next(x for x in xs if x.type != xs[0].type)))
                f = self.text(n.child_by_field_name("function"))
                raise self.error(
                    n,
                    f"{f}(...) needs arguments of one type (C++ deduces one T), not {a} and {b}: convert one, "
                    f"e.g. static_cast<{a}>(...)",
                )
            return xs
        else:  # WAVE, C: the common type of the arguments
            if form is Form.C:
                xs = [self.convert(x, F64, a) if x.type.is_int else x for x, a in zip(xs, nodes)]
            t = xs[0].type
            for x in xs[1:]:
                t = self.arith_type(hir.Var(t, sp, "_"), x, n)
            if t.is_int:
                f = self.text(n.child_by_field_name("function"))
                raise self.error(
                    nodes[0],
                    f"{f} of an integer is ambiguous (float or double): convert it, {f}(static_cast<float>(x))",
                )
        return [self.convert(x, t, a) for x, a in zip(xs, nodes)]

    def is_address(self, a: Node) -> bool:
        return a.type == "pointer_expression" and self.text(a.child_by_field_name("operator")) == "&"

    def atomic_array(self, a: Node, address: bool) -> bind.ArrayRef | None:
        """An atomic's array: of `&a[i]`, or the array named by the first argument (None: not one)."""
        if address:
            arr, _, b = self.element(a.child_by_field_name("argument"), write=True)
            return bind.ArrayRef(arr, b.type.elem)
        b = self.lookup(self.text(a)) if a.type == "identifier" else None
        if not isinstance(b, ArrB):
            raise self.error(a, "the first argument of an atomic is an element's address &a[i], or an array")
        if b.const:
            raise self.error(a, f"{self.text(a)!r} points to const: the kernel cannot write it")
        return bind.ArrayRef(b.name, b.type.elem)

    def const_or_none(self, n: Node) -> int | None:
        """The value of a constant integer expression, or None (the binder says what it needs)."""
        saved, self.pre = self.pre, []
        try:
            e = self.expr(n) if n.type != "type_descriptor" else None
        except CompileError:
            e = None
        self.pre = saved
        c = _fold(e) if e is not None else None
        return int(c.value) if c is not None and c.type.is_int else None

    # -- helpers and templates, inlined
    def private_parameter(self, p: Node, v: PrivB, a: Node, callee: str, cmap: dict[str, hir.Const]) -> PrivB:
        """A per-thread array bound to a helper's array parameter, checked as g++ checks it: by
        reference (`float (&t)[8]`, `const float (&t)[2][4]`) the element type and every dimension
        must match; decayed to a pointer (`float t[8]`, `float t[]`, `float* t`) the element type and
        the inner dimensions (the first is the caller's); a const array only to a const parameter.
        The helper's name for it is the caller's array (inlined in place)."""
        _, sizes, ref = _array_parameter(p)  # type: ignore[misc]
        const = any(c.type == "type_qualifier" and self.text(c) == "const" for c in p.children)
        elem = self.scalar_type(p.child_by_field_name("type"), elements=True)
        return self.array_binding(elem, sizes, ref, const, v, a, repr(callee), cmap)

    def array_binding(
        self,
        elem: ScalarType,
        sizes: list[Node | None],
        ref: bool,
        const: bool,
        v: PrivB,
        a: Node,
        taker: str,
        cmap: dict[str, hir.Const],
    ) -> PrivB:
        """The per-thread array `v` (the expression `a`) bound to a reference to an array of
        `elem` and `sizes` (`ref`), or to the pointer an array parameter decays to, as g++ binds it."""
        dims: list[int | None] = []
        for size in sizes:
            if size is None:
                dims.append(None)
            elif self.text(size) in cmap:
                dims.append(int(cmap[self.text(size)].value))
            else:
                dims.append(self.const_int(size, "an array parameter's size", lo=1))
        arr = f"{_cpp_name(v.elem)} {self.text(a)}{''.join(f'[{d}]' for d in v.shape)}"
        if ref:
            want = f"{'const ' if const else ''}{_cpp_name(elem)} (&){''.join(f'[{d}]' for d in dims)}"
            if elem != v.elem or tuple(dims) != v.shape:
                raise self.error(a, f"invalid initialization of reference of type '{want}' from {arr!r}")
        else:
            inner = tuple(dims[1:])
            if elem != v.elem or len(dims) != len(v.shape) or inner != v.shape[1:]:
                q = "const " if const else ""
                want = f"{q}{_cpp_name(elem)}*" if len(dims) == 1 else f"{q}{_cpp_name(elem)} (*)"
                want += "".join(f"[{d}]" for d in inner)
                raise self.error(a, f"cannot convert {arr!r} to '{want}' for {taker}")
        if v.const and not const:
            raise self.error(
                a, f"{self.text(a)!r} is const: {taker} takes a non-const array (binding it discards the const)"
            )
        return PrivB(v.name, v.elem, v.shape, v.const or const, decayed=not ref)

    def inline(
        self, n: Node, f: Node, args: list[Node], name: str, statement: bool, lam: LambdaB | None = None
    ) -> hir.Expr | None:
        sp = self.span(n)
        fd = self.unit.functions[name] if lam is None else lam.fd
        if fd.kernel:
            raise self.error(f, f"{name!r} is a kernel: kernels cannot call kernels")
        caller = self.inlines[-1].start if self.inlines else self.fn.node.start_byte if self.fn else 0
        if lam is None and self.unit.declared.get(name, 0) > caller:
            raise self.error(f, f"{name!r} is used before its declaration: define or declare it above, as C++ needs")
        fnode = fd.node
        decl = _function_name(self.src, fnode)[1] if lam is None else fnode.child_by_field_name("declarator")
        plist = decl.child_by_field_name("parameters") if decl is not None else None
        pnodes = [p for p in plist.named_children if p.type != "comment"] if plist is not None else []
        if len(pnodes) != len(args):
            raise self.error(n, f"{name!r} takes {len(pnodes)} argument(s), not {len(args)}")
        # template parameters: explicit <...>, else deduced from the argument types
        tmap: dict[str, ScalarType] = {}
        cmap: dict[str, hir.Const] = {}
        tparams: list[tuple[str, Node]] = []
        if fd.template is not None:
            for tp in fd.template.named_children:
                if tp.type == "type_parameter_declaration" and tp.named_children:
                    tparams.append(("type", tp.named_children[-1]))
                elif tp.type == "parameter_declaration" and tp.child_by_field_name("declarator") is not None:
                    tparams.append(("value", tp))
                else:
                    raise self.error(tp, "template parameters are typename T or an integer constant")
        explicit: list[Node] = []
        if f.type == "template_function":
            if fd.template is None:
                raise self.error(f, f"{name!r} is not a template")
            explicit = list(f.child_by_field_name("arguments").named_children)
            if len(explicit) > len(tparams):
                raise self.error(f, f"{name!r} has {len(tparams)} template parameter(s)")
        for (kind, tp), ex in zip(tparams, explicit):
            if kind == "type":
                tmap[self.text(tp)] = self.scalar_type(ex.child_by_field_name("type") or ex, elements=True)
            else:
                pname = self.text(tp.child_by_field_name("declarator"))
                pt = self.scalar_type(tp.child_by_field_name("type"))
                v = self.const_int(ex, f"template argument {pname}")
                cmap[pname] = hir.Const(pt, sp, _wrap(v, pt))
        # evaluate the arguments (left to right) in the caller's scope
        values: list[hir.Expr | ArrB | PrivB] = []
        for a, p in zip(args, pnodes):
            ap = _array_parameter(p)
            if ap is not None:
                b = self.lookup(self.text(a)) if a.type == "identifier" else None
                if isinstance(b, PrivB) or (isinstance(b, ArrB) and not ap[2]):
                    values.append(b)
                    continue
                if ap[2]:
                    raise self.error(a, f"{name!r} takes a reference to an array: pass a per-thread array (float t[N])")
                raise self.error(a, "this parameter is a pointer: pass an array (pointer arithmetic is not supported)")
            values.append(self.expr(a))
        # deduce the remaining type parameters from the arguments' types (no conversions, as C++)
        given = {self.text(tp) for (kind, tp), _ in zip(tparams, explicit) if kind == "type"}
        deduced: set[str] = set()
        for a, p, v in zip(args, pnodes, values):
            tn = p.child_by_field_name("type")
            tname = " ".join(self.text(tn).split()) if tn is not None else ""
            if tname in given or not any(k == "type" and self.text(tp) == tname for k, tp in tparams):
                continue
            got = v.type.elem if isinstance(v, ArrB) else v.elem if isinstance(v, PrivB) else v.type
            if tname in deduced and tmap[tname] != got:
                raise self.error(
                    a,
                    f"{name}: template parameter {tname} deduced as both {_cpp_name(tmap[tname])} and "
                    f"{_cpp_name(got)}: convert the argument, or write {name}<{_cpp_name(tmap[tname])}>(...)",
                )
            tmap[tname] = got
            deduced.add(tname)
        for p, v in zip(pnodes, values):  # `template <int N> void f(float (&t)[N])`: N is the array's size
            ap = _array_parameter(p)
            if ap is None or not ap[2] or not isinstance(v, PrivB) or len(ap[1]) != len(v.shape):
                continue
            for size, got_n in zip(ap[1], v.shape):
                tp = next(
                    (
                        tp
                        for k, tp in tparams
                        if k == "value"
                        and size is not None
                        and self.text(tp.child_by_field_name("declarator")) == self.text(size)
                    ),
                    None,
                )
                if tp is not None and self.text(size) not in cmap:
                    pt = self.scalar_type(tp.child_by_field_name("type"))
                    cmap[self.text(size)] = hir.Const(pt, sp, _wrap(got_n, pt))
        for kind, tp in tparams:
            key = self.text(tp) if kind == "type" else self.text(tp.child_by_field_name("declarator"))
            if kind == "type" and key not in tmap:
                raise self.error(f, f"{name}: cannot deduce template parameter {key}: write {name}<T>(...)")
            if kind == "value" and key not in cmap:
                raise self.error(f, f"{name}: template parameter {key} is a constant: write {name}<...>(...)")
        # the parameters: the helper's own names, bound in a fresh scope (it sees the file's names
        # only); the arguments: the caller's arrays by reference, values converted here
        scope: Scope = {k: ConstB(v) for k, v in cmap.items()}
        hparams: list[hir.Param] = []
        actual: list[hir.Expr | hir.ArrayArg] = []
        kinds: list[str] = []
        self.types.append(tmap)
        try:
            for a, p, v in zip(args, pnodes, values):
                pd = p.child_by_field_name("declarator")
                if pd is None:
                    continue
                if isinstance(v, PrivB):
                    pname = self.text(_array_parameter(p)[0])  # type: ignore[index]
                    pb = self.private_parameter(p, v, a, name, cmap)
                    at = ArrayType(pb.elem, "private", len(pb.shape))
                    scope[pname] = PrivB(f"{pname}$array", pb.elem, pb.shape, pb.const, pb.decayed)
                    hparams.append(hir.Param(f"{pname}$array", at, self.span(p)))
                    actual.append(hir.ArrayArg(v.name, at))
                    kinds.append(f"{pb.elem.name}{list(pb.shape)}{'c' if pb.const else ''}{'*' if pb.decayed else '&'}")
                    continue
                if isinstance(v, ArrB):
                    pname = self.text(_array_parameter(p)[0])  # type: ignore[index]
                    const = any(c.type == "type_qualifier" and self.text(c) == "const" for c in p.children)
                    if v.const and not const:
                        raise self.error(a, f"{self.text(a)!r} points to const: {name!r} takes a non-const pointer")
                    elem = self.scalar_type(p.child_by_field_name("type"), elements=True)
                    if elem != v.type.elem:
                        raise self.error(a, f"{name!r} takes a {_cpp_name(elem)}*, not a {_cpp_name(v.type.elem)}*")
                    scope[pname] = ArrB(f"{pname}$array", v.type, v.const or const, v.shape)
                    hparams.append(hir.Param(f"{pname}$array", v.type, self.span(p)))
                    actual.append(hir.ArrayArg(v.name, v.type))
                    kinds.append(f"{v.type!r}{list(v.shape)}{'c' if v.const or const else ''}")
                    continue
                if pd.type == "reference_declarator":
                    const = any(c.type == "type_qualifier" and self.text(c) == "const" for c in p.children)
                    if not const:
                        raise self.error(pd, "reference parameters are not supported (const T& is: it reads the value)")
                    pd = pd.named_children[-1]
                if pd.type != "identifier":
                    raise self.error(pd, "unsupported parameter")
                pt = self.scalar_type(p.child_by_field_name("type"))
                actual.append(self.convert(v, pt, a))
                pname = self.text(pd)
                scope[pname] = VarB(pname, pt)  # renamed to its own name in build(), below
                hparams.append(hir.Param(pname, pt, self.span(p)))
                kinds.append(pt.name)
            rtn = fnode.child_by_field_name("type") if lam is None else _trailing_type(decl)
            body_node = fnode.child_by_field_name("body")
            returns = [x for x in _walk(body_node) if x.type == "return_statement"]
            auto_ret = lam is not None and rtn is None  # a lambda's return type: its return's
            if rtn is None and not auto_ret:
                raise self.error(fnode, f"{name!r} needs a return type")
            rtext = self.text(rtn) if rtn is not None else "auto"
            valued = any(x.named_children for x in returns)
            ret = None if rtext == "void" or (auto_ret and not valued) else AUTO if auto_ret else self.scalar_type(rtn)
            if ret is None and not statement:
                raise self.error(n, f"{name!r} returns void: it has no value")
            if ret is not None and not returns:
                raise self.error(rtn or fnode, f"{name!r} returns {rtext} but has no return statement")
        finally:
            self.types.pop()
        targs = ",".join([*(f"{k}={t.name}" for k, t in tmap.items()), *(f"{k}={c.value}" for k, c in cmap.items())])
        where = f"{fnode.start_byte}" if lam is None else f"lambda{lam.serial}"
        key = f"{name}@{where}<{targs}>({','.join(kinds)})"

        def build() -> hir.Helper:
            """The helper's body in its own scope: its variables and per-thread arrays are its own
            (one set per call, renamed by compiler/inline.py), the names it captures the caller's."""
            saved = (self.scopes, self.loops, self.pre, self.unroll_next)
            vars_before, privates_before = set(self.vars), len(self.privates)
            params = []
            for hp in hparams:  # a scalar parameter gets a name of its own
                b = scope.get(hp.name)
                if isinstance(b, VarB) and b.name == hp.name and not isinstance(hp.type, ArrayType):
                    hn = self.fresh(hp.name, hp.type)
                    scope[hp.name] = VarB(hn, hp.type)
                    hp = hir.Param(hn, hp.type, hp.span)
                params.append(hp)
            self.scopes = [{}, scope] if lam is None else [*lam.scopes, scope]
            self.loops, self.pre = [], []
            self.types.append(tmap)
            inl = Inline(name, ret, start=fnode.start_byte)
            self.inlines.append(inl)
            try:
                body = self.block(body_node, scope=False)
            finally:  # also after an error: the kernel's next statement is outside the helper
                self.scopes, self.loops, self.pre, self.unroll_next = saved
                self.inlines.pop()
                self.types.pop()
                own = tuple((k, t) for k, t in self.vars.items() if k not in vars_before)
                for k, _ in own:
                    del self.vars[k]
                mine = tuple(self.privates[privates_before:])
                del self.privates[privates_before:]
            pnames = {p.name for p in params}
            result = inl.ret if inl.ret is not AUTO else None
            variables = tuple((k, t) for k, t in own if k not in pnames)
            return hir.Helper(key, name, tuple(params), result, tuple(body), variables, self.span(fnode), mine)

        try:
            h = self.helpers.instance(key, name, self.span(f), build)  # recursion refused; errors noted at the call
        except HelperFailed:
            raise _Poisoned() from None  # refused at its first call, reported there
        inv = hir.Invoke(h.result or VOID, sp, key, tuple(actual))
        if h.result is None:
            if not statement:
                raise self.error(n, f"{name!r} returns void: it has no value")
            self.pre.append(hir.ExprStmt(sp, inv))
            return None
        res = self.fresh(name, h.result)  # the call runs where it stands, as its statements did
        self.pre.append(hir.Assign(sp, res, inv))
        return hir.Var(h.result, sp, res)


def _array_parameter(p: Node) -> tuple[Node, list[Node | None], bool] | None:
    """A helper parameter that takes an array: (its name, the size nodes outermost first, None where
    left out; whether it is a reference to the array). `float* t` and `float t[]` / `float t[8]`
    (which C++ makes a pointer), `float (&t)[8]`, `const float (&t)[2][4]`; None for the others."""
    d = p.child_by_field_name("declarator")
    if d is None:
        return None
    if d.type == "pointer_declarator":
        inner = d.child_by_field_name("declarator")
        return (inner, [None], False) if inner is not None and inner.type == "identifier" else None
    ref = _array_reference(d)
    if ref is not None:
        return ref[0], ref[1], True
    sizes: list[Node | None] = []
    while d.type == "array_declarator":
        sizes.insert(0, d.child_by_field_name("size"))
        d = d.child_by_field_name("declarator")
    return (d, sizes, False) if sizes and d.type == "identifier" else None


def _array_reference(d: Node) -> tuple[Node, list[Node | None]] | None:
    """`(&r)[4]`, `(&r)[2][4]`: the name and the size nodes (outermost first); None for the others."""
    sizes: list[Node | None] = []
    while d.type == "array_declarator":
        sizes.insert(0, d.child_by_field_name("size"))
        d = d.child_by_field_name("declarator")
    if sizes and d.type == "parenthesized_declarator" and d.named_children:
        r = d.named_children[0]
        if r.type == "reference_declarator" and r.named_children and r.named_children[-1].type == "identifier":
            return (r.named_children[-1], sizes) if None not in sizes else None
    return None


def _trailing_type(decl: Node | None) -> Node | None:
    """A lambda's `-> T`: the type node, or None."""
    tr = next((c for c in decl.named_children if c.type == "trailing_return_type"), None) if decl is not None else None
    td = tr.named_children[0] if tr is not None and tr.named_children else None
    return (td.child_by_field_name("type") or td) if td is not None else None


def _const_view(b: VarB | RefB) -> VarB | RefB:
    """A const reference's binding: the same variable or element, read-only."""
    if isinstance(b, VarB):
        return VarB(b.name, b.type, True)
    return RefB(b.array, b.index, b.index_type, True)


class _Args:
    """How C++ reads a builtin call's arguments (a bind.Reader): constants folded, a scope
    `wave::scope::workgroup`, an atomic's `&a[i]` (or array and index), the values converted as
    the spelling's overloads convert them (Form, KernelBuilder.overload)."""

    def __init__(self, k: KernelBuilder, row: Builtin, form: Form, address: bool, n: Node):
        self.k, self.row, self.form, self.address, self.n = k, row, form, address, n

    def constant(self, node: Node, kind: Arg) -> bind.Actual:  # an axis, __builtin_powif's exponent
        return self.k.const_or_none(node)

    def scope(self, node: Node) -> bind.Actual:
        last = self.k.text(node).split("::")[-1].strip()
        return last if node.type in ("qualified_identifier", "identifier") else None

    def type(self, node: Node) -> bind.Actual:
        return self.k.scalar_type(node, elements=True)

    def array(self, node: Node) -> bind.ArrayRef | None:
        return self.k.atomic_array(node, self.address)

    def index(self, node: Node) -> hir.Expr:
        if self.address:  # &a[i]: the element's index (an atomic's only INDEX)
            return self.k.element(node.child_by_field_name("argument"), write=True)[1]
        return self.k.promote(self.k.expr(node), node)

    def condition(self, node: Node) -> hir.Expr:
        return self.k.truth(self.k.expr(node), node)

    def element(self, node: Node, elem: ScalarType) -> hir.Expr:
        return self.k.convert(self.k.expr(node), elem, node)

    def value(self, node: Node) -> Node:
        return node  # converted by values, together

    def values(self, read: list[Node], nodes: list[Node]) -> list[hir.Expr]:
        return self.k.overload(self.row, self.form, nodes, self.n)


def _cpp_name(t: ScalarType) -> str:
    return _CPP_NAMES.get(t.name, t.name)


def _declared_name(d: Node) -> Node | None:
    """The identifier a declarator declares (through init, array and pointer declarators)."""
    while d is not None and d.type != "identifier":
        inner = d.child_by_field_name("declarator")
        if inner is None and d.type in ("reference_declarator", "parenthesized_declarator") and d.named_children:
            inner = d.named_children[-1]  # `float& r`, `(&r)[4]`: the declarator has no field name
        d = inner
    return d


def _flatten_comma(n: Node) -> list[Node]:
    if n.type != "comma_expression":
        return [n]
    return _flatten_comma(n.child_by_field_name("left")) + _flatten_comma(n.child_by_field_name("right"))


def _walk(n: Node) -> Iterator[Node]:
    stack = [n]
    while stack:
        x = stack.pop()
        yield x
        stack.extend(reversed(x.children))


def _fold(e: hir.Expr | None) -> hir.Const | None:
    """The value of a constant HIR expression, computed as the operation does (integers wrap)."""
    if e is None:
        return None
    if isinstance(e, hir.Const):
        return e
    t = e.type
    sp = e.span
    if isinstance(e, hir.Cast):
        c = _fold(e.operand)
        if c is None or c.type is BOOL:
            return None
        if t.is_int and c.type.is_int:
            return hir.Const(t, sp, _wrap(int(c.value), t))
        if t.is_float:
            return hir.Const(t, sp, _round(float(c.value), t))
        if t.is_int and c.type.is_float and math.isfinite(c.value) and _fits(int(c.value), t):
            return hir.Const(t, sp, int(c.value))
        return None
    if isinstance(e, hir.Unary):
        c = _fold(e.operand)
        if c is None:
            return None
        if e.op is hir.UnaryOp.NOT:
            return hir.Const(BOOL, sp, not c.value)
        if e.op is hir.UnaryOp.NEG:
            return hir.Const(t, sp, _wrap(-int(c.value), t) if t.is_int else -c.value)
        if e.op is hir.UnaryOp.BIT_NOT and t.is_int:
            return hir.Const(t, sp, _wrap(~int(c.value), t))
        return None
    if isinstance(e, hir.Compare):
        a, b = _fold(e.left), _fold(e.right)
        if a is None or b is None:
            return None
        ops = {
            Cmp.EQ: "__eq__",
            Cmp.NE: "__ne__",
            Cmp.LT: "__lt__",
            Cmp.LE: "__le__",
            Cmp.GT: "__gt__",
            Cmp.GE: "__ge__",
        }
        return hir.Const(BOOL, sp, bool(getattr(a.value, ops[e.op])(b.value)))
    if isinstance(e, hir.Binary):
        a, b = _fold(e.left), _fold(e.right)
        if a is None or b is None:
            return None
        x, y = a.value, b.value
        if t.is_int:
            x, y = int(x), int(y)
            op = e.op
            if op is BinOp.ADD:
                r = x + y
            elif op is BinOp.SUB:
                r = x - y
            elif op is BinOp.MUL:
                r = x * y
            elif op in (BinOp.TRUNC_DIV, BinOp.TRUNC_REM):
                if y == 0:
                    return None
                q = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)
                r = q if op is BinOp.TRUNC_DIV else x - q * y
            elif op is BinOp.AND:
                r = x & y
            elif op is BinOp.OR:
                r = x | y
            elif op is BinOp.XOR:
                r = x ^ y
            elif op is BinOp.SHL:
                if not 0 <= y < 32:
                    return None
                r = x << y
            elif op is BinOp.SHR:
                if not 0 <= y < 32:
                    return None
                r = x >> y  # arithmetic for int32_t; uint32_t values are non-negative
            else:
                return None
            return hir.Const(t, sp, _wrap(r, t))
        if t.is_float:
            fx, fy = float(x), float(y)
            with np.errstate(all="ignore"):
                dt = {"f32": np.float32, "f64": np.float64, "f16": np.float16}[t.name]
                u, v = dt(fx), dt(fy)
                if e.op is BinOp.ADD:
                    r2 = u + v
                elif e.op is BinOp.SUB:
                    r2 = u - v
                elif e.op is BinOp.MUL:
                    r2 = u * v
                elif e.op is BinOp.DIV:
                    if fy == 0:
                        return None
                    r2 = u / v
                else:
                    return None
            return hir.Const(t, sp, float(r2))
    return None


def _instances(unit: Unit) -> list[tuple[FunctionDef, Node | None]]:
    """The explicit instantiations of the template kernels (`template void k<float>(float*);`);
    a template kernel without one is refused (nothing would be compiled)."""
    out: list[tuple[FunctionDef, Node | None]] = []
    for f in unit.instances:
        name = unit.src.node_text(f.child_by_field_name("name"))
        fd = unit.functions.get(name)
        if fd is None or fd.template is None:
            raise unit.src.error(f, f"{name!r} is not a template defined above this instantiation")
        if fd.kernel:
            out.append((fd, f))
    named = {unit.src.node_text(f.child_by_field_name("name")) for f in unit.instances}
    for fd in unit.functions.values():
        if fd.kernel and fd.template is not None and fd.name not in named:
            raise unit.src.error(
                fd.node,
                f"the template kernel {fd.name!r} is compiled for its explicit instantiations: add one, "
                f"template void {fd.name}<float>(...);",
            )
    return out


class CppFrontend:
    """The FRONTENDS entry for C++ (compiler/frontends/__init__.py)."""

    name = "cpp"
    suffixes = (".cpp", ".cc", ".cu", ".hpp")

    def parse(self, text: str, file: str) -> list[hir.Function]:
        unit = read_unit(text, file)
        kernels: list[tuple[FunctionDef, Node | None]] = [
            (fd, None) for fd in unit.functions.values() if fd.kernel and fd.template is None
        ]
        kernels += _instances(unit)
        if not kernels:
            raise CompileError(
                [Diagnostic("no kernel found: mark one with [[wave::kernel]] (or __kernel)", file_start(unit.src))]
            )
        out: list[hir.Function] = []
        diags: list[Diagnostic] = []
        for fd, instance in kernels:  # every kernel's errors, not only the first kernel's
            try:
                fn = KernelBuilder(unit, fd, instance).kernel()
                diags.extend(param_errors(fn))  # g++: redefinition of a parameter
                out.append(fn)
            except CompileError as e:
                diags.extend(e.diagnostics)
        if diags:
            raise CompileError(diags)
        return out

    def dependencies(self, text: str, file: str) -> list[tuple[str, str]]:
        """The headers a kernel file reads through quoted includes (path, text): the compile
        cache's key holds them, so that a changed header recompiles (runtime/sources.py)."""
        return cppinclude.headers(text, file, lambda t: _blank_macros(t)[0])


CPP = CppFrontend()


def include_dir() -> Path:
    """The folder of wave.hpp, for `g++ -I`: the kernels' declarations for C++ compilers and editors."""
    return Path(__file__).resolve().parent / "support" / "cpp"


__all__ = ["CPP", "SPELLINGS", "CppFrontend", "include_dir"]
