"""THE table of the kernel language's builtins: per row its argument kinds, typing rule, MIR
lowering and plain-Python implementation, as isa/table.py is the table of the ISA.

DESIGN section 5 lists the builtins. A frontend recognises its spelling of a call (`wg.sqrt(x)`,
`x.sqrt()`, `sqrtf(x)`), converts the arguments into neutral actuals with its own language's
promotions and hands them to compiler/bind.py, which applies the row's argument kinds and typing
rule and returns a typed call or a refusal (the frontend adds the place and its fix-it).
mir/lower.py lowers a call as its row's `lowering` says; runtime/pyexec.py exports the rows'
Python implementations (`wg.python_thread`).

Adding a builtin: one row here (kind, argument kinds, rule, lowering: a MIR op, or a composite
method named in mir/lower.COMPOSITES; the Python implementation in runtime/pyexec.py and its
name in `_PYEXEC` of wavegpu/__init__.py), one spelling per ported frontend, and tests against
NumPy. tests/compiler/test_builtin_table.py says what is missing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum

from .types import BOOL, F16, F32, F64, I32, U32, ScalarType

VOID = ScalarType("void", 0, "void")  # the type of a call that gives no value (barrier, fence)
# Refusals a frontend also gives outside a builtin's call: each text once, here
NO_VALUE = "this call has no value"  # a VOID call (barrier, a helper without a result) used as a value
NOT_AN_INDEX = "an array index is an integer"  # (a frontend adds ", not <type>")
POWER_OF_A_NUMBER = "** takes a number"


def dimensions(what: str) -> str:
    """The refusal of an array of more than two dimensions (`what`: 'local', 'per-thread')."""
    return f"{what} arrays have one or two dimensions"


class Kind(Enum):
    """The family of a builtin: how its arguments are read and its result typed."""

    ID = "id"  # a thread, workgroup or wave index or size: i32
    SYNC = "sync"  # barrier(), fence(scope): no value
    LOCAL = "local"  # local_array / private_array(dtype, count): a declaration, not a value
    ATOMIC = "atomic"  # atomic_op(array, index, value...): the element's old value
    WAVE = "wave"  # wave_reduce/prefix/shuffle/broadcast(x[, lane]): x's type
    VOTE = "vote"  # wave_ballot/any/all(condition)
    MATH = "math"  # one float argument, its type
    FMA = "fma"  # fma(a, b, c): one float type
    ABS = "abs"  # abs(x): x's type
    MINMAX = "minmax"  # min/max(a, b, ...): one type
    CAST = "cast"  # i32(x), f32(x), ...: the named type
    POWER = "power"  # x ** n for a constant n (powi), pow(x, y)
    NUMBER = "number"  # clamp, sign, isnan, trunc, round_even, round_away, round_half_up
    BITCOUNT = "bitcount"  # popcount, clz, ctz


class Arg(Enum):
    """What an argument position holds."""

    VALUE = "value"  # a scalar expression
    INDEX = "index"  # an integer expression (an element index, a lane, a distance)
    CONDITION = "condition"  # a bool (other values test != 0)
    ARRAY = "array"  # the name of an array
    AXIS = "axis"  # a constant 0, 1 or 2 (optional, 0 when left out)
    SCOPE = "scope"  # a constant 'wave', 'workgroup' or 'device' (optional, 'device')
    TYPE = "type"  # an element type name
    COUNT = "count"  # a constant positive integer, or two of them (a shape)


class Rule(Enum):
    """How a builtin's call is typed (the binder, compiler/bind.py, applies it; the checks are the
    functions below, which the frontends not yet ported to the binder still call one by one)."""

    ID = "id"  # i32 (a thread, workgroup or wave index or size)
    VOID = "void"  # no value (barrier, fence)
    LOCAL = "local"  # a declaration: the element type and shape (local_array)
    PRIVATE = "private"  # a per-thread array's declaration: the element type and shape (private_array)
    ATOMIC = "atomic"  # the array element's type (atomic_element, atomic_operation)
    WAVE = "wave"  # x's type (wave_operand)
    VOTE = "vote"  # u32 (ballot) or bool (any, all): vote_result
    MATH = "math"  # x's float type, one of math_types(name)
    SAME = "same"  # every value argument and the result of one number type (fma, abs, min, clamp)
    FLOAT_SAME = "float_same"  # every value argument and the result of one float type (pow, sign)
    PREDICATE = "predicate"  # a float argument, a bool result (isnan)
    BITS = "bits"  # an integer argument (i32 or u32), an i32 result (popcount, clz, ctz)
    POWI = "powi"  # x ** n for a constant n >= 1 (attrs): x's type
    CAST = "cast"  # the named type


class Via(Enum):
    """How mir/lower.py lowers a builtin's call: the family of its MIR operation, or a named
    composite lowering (a method of mir/lower.Lowerer)."""

    OP = "op"  # one MIR op (Lowering.op) on the evaluated arguments, of the result type
    SREG = "sreg"  # the special register Lowering.op (along attrs' axis), read as i32
    EFFECT = "effect"  # a MIR op without operands or result (barrier)
    FENCE = "fence"  # fence.<scope> with the scope of attrs
    ATOMIC = "atomic"  # atomic.<Lowering.op>.<space> on the array element
    WAVE = "wave"  # the wave op Lowering.op; a second operand (lane, distance) converted to u32
    COMPOSITE = "composite"  # Lowerer.<Lowering.op>(call): several MIR ops
    DECLARATION = "declaration"  # not lowered as a call (local_array: a LocalArray; private_array: a PrivateArray)
    CAST = "cast"  # a hir.Cast, not a call


@dataclass(frozen=True)
class Lowering:
    via: Via
    op: str = ""  # the MIR op (stem), or the composite's name


@dataclass(frozen=True)
class Builtin:
    """One builtin of the kernel language: its argument kinds, typing rule, MIR lowering and the
    attribute of runtime/pyexec.py that runs it in plain Python (`wg.python_thread`)."""

    name: str
    kind: Kind
    args: tuple[Arg, ...]  # the fixed positions (MINMAX: two or more VALUEs)
    rule: Rule = Rule.SAME
    lowering: Lowering = Lowering(Via.OP)
    # what runs it in plain Python: "pyexec:NAME" (runtime/pyexec.py; "": pyexec:<the row's name>),
    # "python:NAME" (Python's own builtin, abs/min/max) or "types:NAME" (a cast: compiler/types.py)
    python: str = ""

    @property
    def implementation(self) -> tuple[str, str]:
        """(where, attribute) of the plain-Python implementation (see `python`)."""
        where, _, attr = (self.python or f"pyexec:{self.name}").partition(":")
        return where, attr


def _op(name: str) -> Lowering:
    return Lowering(Via.OP, name)


def _composite(name: str) -> Lowering:
    return Lowering(Via.COMPOSITE, name)


SREGS = {"thread_id": "tid", "workgroup_id": "ctaid", "workgroup_size": "ntid", "grid_size": "nctaid"}
SREGS0 = {"lane_id": "lid", "wave_id": "wid", "wave_width": "wave_width"}
ATOMIC_OPS = {"add": "add", "sub": "sub", "min": "min", "max": "max", "and": "and", "or": "or", "xor": "xor"}
ATOMIC_OPS |= {"exchange": "exch"}
WAVE_OPS = {
    "wave_reduce_add": "wave.reduce.add",
    "wave_reduce_min": "wave.reduce.min",
    "wave_reduce_max": "wave.reduce.max",
    "wave_reduce_and": "wave.reduce.and",
    "wave_reduce_or": "wave.reduce.or",
    "wave_prefix_add": "wave.prefix.add",
    "wave_shuffle": "wave.shuffle.idx",
    "wave_shuffle_up": "wave.shuffle.up",
    "wave_shuffle_down": "wave.shuffle.down",
    "wave_shuffle_xor": "wave.shuffle.xor",
    "wave_broadcast": "wave.broadcast",
}
VOTE_OPS = {"wave_ballot": "wave.ballot", "wave_any": "wave.any", "wave_all": "wave.all"}
MATH_OPS = {n: _op(n) for n in ("sqrt", "rsqrt", "sin", "cos", "exp", "exp2", "log", "log2", "floor", "ceil")}
MATH_OPS |= {"exp": _composite("exp"), "log": _composite("log")}  # (keeps the order above)


def _table() -> dict[str, Builtin]:
    rows: list[Builtin] = []
    for n, sreg in SREGS.items():
        rows.append(Builtin(n, Kind.ID, (Arg.AXIS,), Rule.ID, Lowering(Via.SREG, sreg)))
    rows.append(Builtin("global_id", Kind.ID, (Arg.AXIS,), Rule.ID, _composite("global_id")))
    rows.append(Builtin("global_size", Kind.ID, (Arg.AXIS,), Rule.ID, _composite("global_size")))
    for n, sreg in SREGS0.items():
        rows.append(Builtin(n, Kind.ID, (), Rule.ID, Lowering(Via.SREG, sreg)))
    rows.append(Builtin("barrier", Kind.SYNC, (), Rule.VOID, Lowering(Via.EFFECT, "barrier")))
    rows.append(Builtin("fence", Kind.SYNC, (Arg.SCOPE,), Rule.VOID, Lowering(Via.FENCE, "fence")))
    rows.append(Builtin("local_array", Kind.LOCAL, (Arg.TYPE, Arg.COUNT), Rule.LOCAL, Lowering(Via.DECLARATION)))
    for op, mir in ATOMIC_OPS.items():
        args = (Arg.ARRAY, Arg.INDEX, Arg.VALUE)
        rows.append(Builtin(f"atomic_{op}", Kind.ATOMIC, args, Rule.ATOMIC, Lowering(Via.ATOMIC, mir)))
    args = (Arg.ARRAY, Arg.INDEX, Arg.VALUE, Arg.VALUE)
    rows.append(Builtin("atomic_cas", Kind.ATOMIC, args, Rule.ATOMIC, Lowering(Via.ATOMIC, "cas")))
    for n, mir in WAVE_OPS.items():
        args = (Arg.VALUE,) if "reduce" in mir or "prefix" in mir else (Arg.VALUE, Arg.INDEX)
        rows.append(Builtin(n, Kind.WAVE, args, Rule.WAVE, Lowering(Via.WAVE, mir)))
    for n, mir in VOTE_OPS.items():
        rows.append(Builtin(n, Kind.VOTE, (Arg.CONDITION,), Rule.VOTE, Lowering(Via.WAVE, mir)))
    for n, low in MATH_OPS.items():
        rows.append(Builtin(n, Kind.MATH, (Arg.VALUE,), Rule.MATH, low))
    rows.append(Builtin("fma", Kind.FMA, (Arg.VALUE, Arg.VALUE, Arg.VALUE), Rule.SAME, _op("fma")))
    rows.append(Builtin("abs", Kind.ABS, (Arg.VALUE,), Rule.SAME, _op("abs"), python="python:abs"))
    # the device's min and max (IEEE minNum/maxNum: a NaN operand gives the other, -0 below +0)
    rows.append(Builtin("min", Kind.MINMAX, (Arg.VALUE, Arg.VALUE), Rule.SAME, _op("min"), python="pyexec:fmin"))
    rows.append(Builtin("max", Kind.MINMAX, (Arg.VALUE, Arg.VALUE), Rule.SAME, _op("max"), python="pyexec:fmax"))
    for n in CASTS:
        rows.append(
            Builtin(n, Kind.CAST, (Arg.VALUE,), Rule.CAST, Lowering(Via.CAST), python=f"types:{CASTS[n].name.upper()}")
        )
    # Added with the binder (issue 23)
    rows.append(Builtin("powi", Kind.POWER, (Arg.VALUE, Arg.COUNT), Rule.POWI, _composite("powi"), "python:pow"))
    rows.append(Builtin("pow", Kind.POWER, (Arg.VALUE, Arg.VALUE), Rule.FLOAT_SAME, _composite("pow")))
    rows.append(Builtin("clamp", Kind.NUMBER, (Arg.VALUE,) * 3, Rule.SAME, _composite("clamp")))
    rows.append(Builtin("sign", Kind.NUMBER, (Arg.VALUE,), Rule.SAME, _composite("sign")))
    rows.append(Builtin("isnan", Kind.NUMBER, (Arg.VALUE,), Rule.PREDICATE, _composite("isnan")))
    rows.append(Builtin("trunc", Kind.NUMBER, (Arg.VALUE,), Rule.MATH, _composite("trunc")))
    # rounding to an integral value: ties to even (Python's round), ties away from zero (Rust's
    # f32::round, C's roundf), ties toward +inf (JavaScript's Math.round: -0 for -0.5 <= x < 0)
    rows.append(Builtin("round_even", Kind.NUMBER, (Arg.VALUE,), Rule.MATH, _composite("round_even")))
    rows.append(Builtin("round_away", Kind.NUMBER, (Arg.VALUE,), Rule.MATH, _composite("round_away")))
    rows.append(Builtin("round_half_up", Kind.NUMBER, (Arg.VALUE,), Rule.MATH, _composite("round_half_up")))
    # Rust's f32::clamp (and C++'s std::clamp): x < lo ? lo : x > hi ? hi : x, so a NaN x stays NaN
    # (clamp's min(max(x, lo), hi) gives lo)
    rows.append(Builtin("clamp_keep_nan", Kind.NUMBER, (Arg.VALUE,) * 3, Rule.SAME, _composite("clamp_keep_nan")))
    # Rust's f32::signum: +-1.0 with the sign of x, zeros included (sign keeps a zero); NaN for NaN
    rows.append(Builtin("signum", Kind.NUMBER, (Arg.VALUE,), Rule.MATH, _composite("signum")))
    for n in ("popcount", "clz", "ctz"):
        rows.append(Builtin(n, Kind.BITCOUNT, (Arg.VALUE,), Rule.BITS, _composite(n)))
    # a per-thread array (issue 24; HIR PrivateArray): Python's call; C++ `float t[N]`, Rust
    # `[0.0f32; N]` and TypeScript `new Float32Array(N)` are declarations their frontends spell
    args = (Arg.TYPE, Arg.COUNT)
    rows.append(Builtin("private_array", Kind.LOCAL, args, Rule.PRIVATE, Lowering(Via.DECLARATION)))
    # min and max by comparison, left to right: the first argument unless a later one compares
    # less (greater): CPython's min/max and C++'s std::min/std::max, NaN and signed zeros by
    # argument order (on integers the same as min and max)
    for n in ("min_first", "max_first"):
        rows.append(Builtin(n, Kind.MINMAX, (Arg.VALUE, Arg.VALUE), Rule.SAME, _composite(n), f"python:{n[:3]}"))
    return {b.name: b for b in rows}


# The scalar types a cast names (a frontend adds its own spellings, Python's int and float)
CASTS: dict[str, ScalarType] = {"i32": I32, "u32": U32, "f32": F32, "f16": F16, "f64": F64, "bool": BOOL}
ROWS = _table()
"""Every row: the kernel language (DESIGN section 5's list and the rows added since, issues 23 and
24); every frontend spells every row (tests/compiler/test_builtin_table.py)."""


def named(kind: Kind, nargs: int | None = None) -> frozenset[str]:
    """The names of a kind's builtins (with nargs: only those of that many fixed arguments)."""
    return frozenset(b.name for b in ROWS.values() if b.kind is kind and (nargs is None or len(b.args) == nargs))


IDS = named(Kind.ID)
NO_AXIS = named(Kind.ID, 0)  # lane_id(), wave_id(), wave_width()
ATOMICS = named(Kind.ATOMIC)
WAVE1 = named(Kind.WAVE, 1)  # reductions and the prefix sum
WAVE2 = named(Kind.WAVE, 2)  # shuffles and the broadcast: (x, lane or distance)
VOTES = named(Kind.VOTE)
MATH1 = named(Kind.MATH)
F64_MATH = frozenset(
    {"sqrt", "floor", "ceil", "trunc", "round_even", "round_away", "round_half_up"}
)  # the math that also takes f64
FENCE_SCOPES = ("wave", "workgroup", "device")
DEFAULT_SCOPE = "device"
AXES = (0, 1, 2)
# The Rust toolchain records a 256-thread workgroup in every binary, and its kernels call an
# axis-less thread_id() for the id within it (COMPAT.md): a kernel in that dialect (an axis-less
# thread_id() and no workgroup of its own) records this workgroup too, so `wave-emu` runs it as
# that toolchain's CI does.
TOOLCHAIN_WORKGROUP = (256, 1, 1)
TOOLCHAIN_ID = "thread_id"  # the call that marks that dialect when it is axis-less
# The ids that grow with the launch (the others are below MAX_WORKGROUP_SIZE). Every frontend's
# call is typed i32 here; Rust and C++ cast it to u32 at once (their ids are unsigned), Python and
# TypeScript keep it i32. A kernel that reads one of them as i32 is correct for at most
# I32_ID_LIMIT threads along an axis (beyond, ids and sizes turn negative): the compiler records
# it (Kernel.max_global_size) and every launch path refuses larger launches.
WIDE_IDS = frozenset({"workgroup_id", "grid_size", "global_id", "global_size"})
I32_ID_LIMIT = 2**31 - 1
ATOMIC_TYPES = (I32, U32, F32)  # the element types atomics work on
F32_ATOMICS = frozenset({"atomic_add", "atomic_exchange", "atomic_cas"})
WAVE_TYPES = (I32, U32, F32)
INT_WAVE = frozenset({"wave_reduce_and", "wave_reduce_or", "wave_prefix_add"})  # integers only
CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e, "tau": math.tau, "inf": math.inf, "nan": math.nan}


# ---- typing rules: a result type, or the message of a refusal ---------------------------------
def atomic_element(name: str, elem: ScalarType) -> str | None:
    """Why an atomic cannot work on an array of `elem` (None: it can; the result is `elem`)."""
    if elem.narrow:
        return (
            f"atomics work on i32, u32 and f32 arrays, not {elem} (the device has 32- and 64-bit "
            f"atomics only): keep counters in an u32 or i32 array"
        )
    if elem not in ATOMIC_TYPES:
        return f"atomics work on i32, u32 and f32 arrays, not {elem}"
    return None


def atomic_operation(name: str, elem: ScalarType) -> str | None:
    """Why this atomic's operation is not offered on `elem` (f32 has add, exchange and cas)."""
    if elem is F32 and name not in F32_ATOMICS:
        return f"{name} on f32 arrays is not supported (use atomic_cas in a loop)"
    return None


def wave_operand(name: str, t: ScalarType) -> str | None:
    """Why a wave operation cannot take a value of type t (None: it can; the result is t)."""
    if t not in WAVE_TYPES:
        return wave_values(name, str(t))
    if name in INT_WAVE and t is F32:
        return f"{name} needs an integer"
    return None


def wave_values(name: str, what: str) -> str:
    """The refusal of a wave operation's value of a type (`what`: its name in the kernel's language)."""
    return f"{name} works on i32, u32 and f32 values, not {what}"


def vote_result(name: str) -> ScalarType:
    """wave_ballot gives the mask of lanes as u32, wave_any and wave_all a bool."""
    return BOOL if name in ("wave_any", "wave_all") else U32


# The optional argument positions and the keyword a language with keywords (Python) names them by
OPTIONAL_ARGS = {Arg.AXIS: "axis", Arg.SCOPE: "scope"}


def arity(name: str, positional: int, keywords: tuple[str, ...] = (), variadic: bool = True) -> str | None:
    """Why a call of builtin `name` with `positional` arguments and these keyword names does not fit
    its table row (None: it fits). `variadic=False`: min and max take exactly two values (Rust's,
    C++'s), not two or more (Python's, JavaScript's)."""
    b = ROWS[name]
    if b.kind is Kind.MINMAX:
        if keywords:
            return f"{name} takes no keyword arguments"
        if not variadic and positional != len(b.args):
            return f"{name}() takes {len(b.args)} arguments, {positional} given"
        return None if positional >= 2 else f"{name}(a, b, ...) takes two or more numbers, {positional} given"
    required = sum(1 for a in b.args if a not in OPTIONAL_ARGS)
    names = [OPTIONAL_ARGS.get(a) for a in b.args]
    for i, k in enumerate(keywords):
        if k in keywords[:i]:
            return f"{name}() got the keyword {k!r} twice"
        if k not in names:
            allowed = [n for n in names if n]
            return f"{name}() has no keyword {k!r}" + (f" (it takes {', '.join(allowed)}=)" if allowed else "")
        if names.index(k) < positional:
            return f"{name}() got {k!r} both by position and by keyword"
    given = positional + len(keywords)
    if positional > len(b.args) or given < required:
        most = len(b.args)
        if not most:
            want = "no arguments"
        elif required == most:
            want = f"{most} argument{'s' if most != 1 else ''}"
        elif required == 0:
            want = f"at most {most} argument{'s' if most != 1 else ''}"
        else:
            want = f"{required} to {most} arguments"
        return f"{name}() takes {want}, {given} given"
    return None


def math_operand(t: ScalarType) -> ScalarType:
    """The type a math builtin computes in for an argument of type t (integers convert to f32)."""
    return F32 if t.is_int else t


def math_types(name: str) -> tuple[ScalarType, ...]:
    """The float types a math builtin takes (and returns)."""
    return (F32, F64) if name in F64_MATH else (F32,)


def same_types(name: str) -> tuple[ScalarType, ...]:
    """The types a Rule.SAME builtin takes (and returns): numbers; fma floats only."""
    return (F32, F64) if name == "fma" else (I32, U32, F32, F64, F16)


__all__ = [
    "ATOMICS",
    "CASTS",
    "CONSTANTS",
    "IDS",
    "MATH1",
    "ROWS",
    "VOID",
    "VOTES",
    "WAVE1",
    "WAVE2",
    "Arg",
    "Builtin",
    "Kind",
    "Lowering",
    "Rule",
    "Via",
    "arity",
]
