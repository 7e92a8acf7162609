"""The kernel language's builtins, the same in every frontend: names, argument kinds and typing.

DESIGN section 5 lists them; each frontend spells a call in its own syntax (`wg.sqrt(x)` in
Python) and parses the arguments this table asks for, then types the call with the rules here.
The rules return a message for what they refuse; the frontend adds the place and its own fix-it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum

from .types import BOOL, F16, F32, F64, I32, U32, ScalarType

VOID = ScalarType("void", 0, "void")  # the type of a call that gives no value (barrier, fence)


class Kind(Enum):
    """The family of a builtin: how its arguments are read and its result typed."""

    ID = "id"  # a thread, workgroup or wave index or size: i32
    SYNC = "sync"  # barrier(), fence(scope): no value
    LOCAL = "local"  # local_array(dtype, count): a declaration, not a value
    ATOMIC = "atomic"  # atomic_op(array, index, value...): the element's old value
    WAVE = "wave"  # wave_reduce/prefix/shuffle/broadcast(x[, lane]): x's type
    VOTE = "vote"  # wave_ballot/any/all(condition)
    MATH = "math"  # one float argument, its type
    FMA = "fma"  # fma(a, b, c): one float type
    ABS = "abs"  # abs(x): x's type
    MINMAX = "minmax"  # min/max(a, b, ...): one type
    CAST = "cast"  # i32(x), f32(x), ...: the named type


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


@dataclass(frozen=True)
class Builtin:
    name: str
    kind: Kind
    args: tuple[Arg, ...]  # the fixed positions (MINMAX: two or more VALUEs)


def _table() -> dict[str, Builtin]:
    rows: list[Builtin] = []
    for n in ("thread_id", "workgroup_id", "workgroup_size", "grid_size", "global_id", "global_size"):
        rows.append(Builtin(n, Kind.ID, (Arg.AXIS,)))
    for n in ("lane_id", "wave_id", "wave_width"):
        rows.append(Builtin(n, Kind.ID, ()))
    rows.append(Builtin("barrier", Kind.SYNC, ()))
    rows.append(Builtin("fence", Kind.SYNC, (Arg.SCOPE,)))
    rows.append(Builtin("local_array", Kind.LOCAL, (Arg.TYPE, Arg.COUNT)))
    for op in ("add", "sub", "min", "max", "and", "or", "xor", "exchange"):
        rows.append(Builtin(f"atomic_{op}", Kind.ATOMIC, (Arg.ARRAY, Arg.INDEX, Arg.VALUE)))
    rows.append(Builtin("atomic_cas", Kind.ATOMIC, (Arg.ARRAY, Arg.INDEX, Arg.VALUE, Arg.VALUE)))
    for n in ("wave_reduce_add", "wave_reduce_min", "wave_reduce_max", "wave_reduce_and", "wave_reduce_or"):
        rows.append(Builtin(n, Kind.WAVE, (Arg.VALUE,)))
    rows.append(Builtin("wave_prefix_add", Kind.WAVE, (Arg.VALUE,)))
    for n in ("wave_shuffle", "wave_shuffle_up", "wave_shuffle_down", "wave_shuffle_xor", "wave_broadcast"):
        rows.append(Builtin(n, Kind.WAVE, (Arg.VALUE, Arg.INDEX)))
    for n in ("wave_ballot", "wave_any", "wave_all"):
        rows.append(Builtin(n, Kind.VOTE, (Arg.CONDITION,)))
    for n in ("sqrt", "rsqrt", "sin", "cos", "exp", "exp2", "log", "log2", "floor", "ceil"):
        rows.append(Builtin(n, Kind.MATH, (Arg.VALUE,)))
    rows.append(Builtin("fma", Kind.FMA, (Arg.VALUE, Arg.VALUE, Arg.VALUE)))
    rows.append(Builtin("abs", Kind.ABS, (Arg.VALUE,)))
    rows.append(Builtin("min", Kind.MINMAX, (Arg.VALUE, Arg.VALUE)))
    rows.append(Builtin("max", Kind.MINMAX, (Arg.VALUE, Arg.VALUE)))
    for n in CASTS:
        rows.append(Builtin(n, Kind.CAST, (Arg.VALUE,)))
    return {b.name: b for b in rows}


# The scalar types a cast names (a frontend adds its own spellings, Python's int and float)
CASTS: dict[str, ScalarType] = {"i32": I32, "u32": U32, "f32": F32, "f16": F16, "f64": F64, "bool": BOOL}
BUILTINS = _table()


def named(kind: Kind, nargs: int | None = None) -> frozenset[str]:
    """The names of a kind's builtins (with nargs: only those of that many fixed arguments)."""
    return frozenset(b.name for b in BUILTINS.values() if b.kind is kind and (nargs is None or len(b.args) == nargs))


IDS = named(Kind.ID)
NO_AXIS = named(Kind.ID, 0)  # lane_id(), wave_id(), wave_width()
ATOMICS = named(Kind.ATOMIC)
WAVE1 = named(Kind.WAVE, 1)  # reductions and the prefix sum
WAVE2 = named(Kind.WAVE, 2)  # shuffles and the broadcast: (x, lane or distance)
VOTES = named(Kind.VOTE)
MATH1 = named(Kind.MATH)
F64_MATH = frozenset({"sqrt", "floor", "ceil"})  # the math that also takes f64
FENCE_SCOPES = ("wave", "workgroup", "device")
DEFAULT_SCOPE = "device"
AXES = (0, 1, 2)
# The Rust toolchain records a 256-thread workgroup in every binary, and its kernels call an
# axis-less thread_id() for the id within it (COMPAT.md): a kernel in that dialect (an axis-less
# thread_id() and no workgroup of its own) records this workgroup too, so `wave-emu` runs it as
# that toolchain's CI does.
TOOLCHAIN_WORKGROUP = (256, 1, 1)
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
        return f"{name} works on i32, u32 and f32 values, not {t}"
    if name in INT_WAVE and t is F32:
        return f"{name} needs an integer"
    return None


def vote_result(name: str) -> ScalarType:
    """wave_ballot gives the mask of lanes as u32, wave_any and wave_all a bool."""
    return BOOL if name in ("wave_any", "wave_all") else U32


# The optional argument positions and the keyword a language with keywords (Python) names them by
OPTIONAL_ARGS = {Arg.AXIS: "axis", Arg.SCOPE: "scope"}


def arity(name: str, positional: int, keywords: tuple[str, ...] = ()) -> str | None:
    """Why a call of builtin `name` with `positional` arguments and these keyword names does not fit
    its table row (None: it fits). The Python frontend checks every call here before reading it;
    Rust, C++ and TypeScript still count arguments in their own code (issue 23 moves them here)."""
    b = BUILTINS[name]
    if b.kind is Kind.MINMAX:
        if keywords:
            return f"{name} takes no keyword arguments"
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


__all__ = [
    "ATOMICS",
    "BUILTINS",
    "CASTS",
    "CONSTANTS",
    "IDS",
    "MATH1",
    "VOID",
    "VOTES",
    "WAVE1",
    "WAVE2",
    "Arg",
    "Builtin",
    "Kind",
    "arity",
]
