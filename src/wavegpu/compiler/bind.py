"""The binder: a builtin's row (compiler/builtins.py) + a frontend's neutral actual arguments ->
a typed `hir.Call`, or a `Refusal` that says which argument it is about.

How to port a frontend to the binder
------------------------------------
1. Spelling: keep one table in the frontend, row name -> how its users write the call
   (`SPELLINGS`, the docs' column) and how the frontend recognises it (a callee name, a method,
   an operator). Look the row up in `builtins.ROWS`; nothing else in the frontend names a builtin.
2. Reader: one small class of the frontend (a `Reader`) reads each kind of argument from its
   syntax with the language's own rules: VALUE / INDEX / CONDITION -> a typed `hir.Expr`
   (CONDITION: a BOOL expression, the language's truth rule applied; VALUE: `value` reads each in
   source order and `values` converts them together, with the promotions the language gives, e.g.
   every argument of `min` unified); AXIS / COUNT -> the folded constant (`int`, a tuple of ints
   for a shape) or `None` when it is not a constant; SCOPE -> the string or `None`; ARRAY ->
   `ArrayRef(name, elem)` or `None` when the argument is not an array; TYPE -> the `ScalarType` or
   `None`. The reader raises the language's own diagnostics (a syntax the language does not have
   there); what the row refuses, the binder says.
3. `call(row, span, reader, nodes, keywords, spelled)` does the rest for every frontend: the arity
   (`slots`: wrong count, unknown or repeated keyword, named as the kernel spelled the builtin),
   each argument read by its kind (an atomic's array checked first: its values are read in its
   element type), the row's argument checks and typing rule (`bind`). It returns the typed
   `hir.Expr` or a `Refusal`.
4. On a refusal, place the diagnostic at `at(refusal, nodes, keywords)` (None: the call as a whole)
   and add the language's fix-it; the message itself never proposes a change of meaning, and a
   frontend does not restate it (tests/compiler/test_builtin_table.py checks).
5. Spell every row and check your SPELLINGS against `builtins.ROWS` in your own tests. Add the
   frontend to `PORTED` in tests/compiler/test_builtin_table.py and
   remove its file from `NOT_YET_PORTED` in tests/test_no_builtin_strings.py. Rows whose meaning
   differs between languages are separate rows (`round_even`, `round_away`): add a row, with its
   rule and lowering, rather than a language branch in a shared one.

A row's MIR lowering and its Python implementation need nothing from a frontend.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from ..errors import Span
from . import builtins as B
from . import hir
from .builtins import Arg, Builtin, Rule
from .types import BOOL, F16, F32, F64, I32, U32, ScalarType


@dataclass(frozen=True)
class ArrayRef:
    """An ARRAY actual: the array's name and element type."""

    name: str
    elem: ScalarType


@dataclass(frozen=True)
class Refusal:
    """Why a call does not bind; `arg` is the position (int), keyword (str) or None (the call);
    `arity`: the call gives the wrong arguments (count or keywords), not a wrong argument."""

    message: str
    arg: int | str | None = None
    arity: bool = False


# (a folded AXIS or COUNT may be any number: its case refuses what is not a fitting int)
Actual = hir.Expr | ArrayRef | ScalarType | int | float | str | tuple[int, ...] | None
LOCAL_TYPES = "i32, u32, f32, f16, f64, u8, i8, u16 or i16"
PRIVATE_TYPES = (I32, U32, F32, F16, F64, BOOL)  # a per-thread array's elements (no 8- or 16-bit integers)


def slots(
    row: Builtin, positional: int, keywords: Sequence[str] = (), spelled: str = "", variadic: bool = True
) -> tuple[Arg, ...] | Refusal:
    """The argument kind of every given argument (positions, then keywords), or the arity refusal
    (naming the builtin as the kernel spelled it, e.g. round() for round_even; `variadic=False`: a
    language whose min and max take exactly two values)."""
    why = B.arity(row.name, positional, tuple(keywords), variadic)
    if why is not None:
        return Refusal(why.replace(f"{row.name}(", f"{spelled}(", 1) if spelled else why, None, True)
    if row.kind is B.Kind.MINMAX:
        return (Arg.VALUE,) * positional
    names = [B.OPTIONAL_ARGS.get(a) for a in row.args]
    return tuple(row.args[:positional]) + tuple(row.args[names.index(k)] for k in keywords)


# ---- one case per argument kind: the actual -> its checked value, or _Bad(the refusal's message) --
@dataclass(frozen=True)
class _Bad:
    message: str
    of_call: bool = False  # about the call as a whole, not the argument (an atomic's operation)

    def refusal(self, place: int | str | None) -> Refusal:
        return Refusal(self.message, None if self.of_call else place)


def _value(row: Builtin, a: Actual) -> object:
    if not isinstance(a, hir.Expr):
        return _Bad(f"{row.name} takes a value here")
    if a.type is B.VOID:
        return _Bad(B.NO_VALUE)
    return a


def _index(row: Builtin, a: Actual) -> object:
    if not isinstance(a, hir.Expr) or not a.type.is_int:
        atomic = row.rule is Rule.ATOMIC
        return _Bad(B.NOT_AN_INDEX if atomic else "a lane or distance is an integer")
    return a


def _condition(row: Builtin, a: Actual) -> object:
    if not isinstance(a, hir.Expr) or a.type is not BOOL:
        return _Bad(f"{row.name} takes a condition (a bool)")
    return a


def _array(row: Builtin, a: Actual) -> object:
    if not isinstance(a, ArrayRef):
        return _Bad("the first argument of an atomic is an array")
    why = B.atomic_element(row.name, a.elem)
    if why is not None:
        return _Bad(why)
    why = B.atomic_operation(row.name, a.elem)  # f32 has add, exchange and cas: the call's choice
    return a if why is None else _Bad(why, of_call=True)


def _axis(row: Builtin, a: Actual) -> object:
    ok = isinstance(a, int) and not isinstance(a, bool) and a in B.AXES
    return a if ok else _Bad("axis must be the constant 0, 1 or 2")


def _scope(row: Builtin, a: Actual) -> object:
    ok = isinstance(a, str) and a in B.FENCE_SCOPES
    return a if ok else _Bad("fence(scope) takes 'wave', 'workgroup' or 'device'")


def _type(row: Builtin, a: Actual) -> object:
    if row.rule is Rule.PRIVATE:
        if a not in PRIVATE_TYPES:
            return _Bad(f"private_array element type must be {', '.join(map(str, PRIVATE_TYPES[:-1]))} or bool")
        return a
    if not isinstance(a, ScalarType) or a is BOOL or a is B.VOID:
        return _Bad(f"local_array element type must be {LOCAL_TYPES}")
    return a


def _count(row: Builtin, a: Actual) -> object:
    shaped = row.rule in (Rule.LOCAL, Rule.PRIVATE)
    dims = a if isinstance(a, tuple) and shaped else (a,)  # a shape: local and per-thread arrays only
    if len(dims) > 2:
        return _Bad(B.dimensions("per-thread" if row.rule is Rule.PRIVATE else "local"))
    if not all(isinstance(d, int) and not isinstance(d, bool) and d >= 1 for d in dims):
        return _Bad(f"a {row.name} count must be a constant positive integer (no dynamic allocation on a GPU)")
    return a


ARG_CASES: dict[Arg, Callable[[Builtin, Actual], object]] = {
    Arg.VALUE: _value,
    Arg.INDEX: _index,
    Arg.CONDITION: _condition,
    Arg.ARRAY: _array,
    Arg.AXIS: _axis,
    Arg.SCOPE: _scope,
    Arg.TYPE: _type,
    Arg.COUNT: _count,
}
DEFAULTS: dict[Arg, object] = {Arg.AXIS: 0, Arg.SCOPE: B.DEFAULT_SCOPE}


class _Refused(Exception):
    def __init__(self, refusal: Refusal):
        self.refusal = refusal


def check(row: Builtin, kind: Arg, actual: Actual, place: int | str | None = None) -> Refusal | None:
    """One argument's check alone, for a frontend that needs it before converting the next
    arguments (an atomic's array: its element type is the values' type)."""
    v = ARG_CASES[kind](row, actual)
    return v.refusal(place) if isinstance(v, _Bad) else None


def bind(
    row: Builtin, span: Span | None, actuals: Sequence[Actual], keywords: Mapping[str, Actual] | None = None
) -> hir.Expr | Refusal:
    """The typed call of `row` with these actual arguments (see the module docstring), or why not.
    MINMAX rows take two or more values and give the chain min(min(a, b), c)."""
    kw = dict(keywords or {})
    kinds = slots(row, len(actuals), tuple(kw))
    if isinstance(kinds, Refusal):
        return kinds
    where: list[int | str] = [*range(len(actuals)), *kw]
    given = [*actuals, *kw.values()]
    checked: dict[int | str, object] = {}
    for place, kind, a in zip(where, kinds, given):
        v = ARG_CASES[kind](row, a)
        if isinstance(v, _Bad):
            return v.refusal(place)
        checked[place] = v
    # the values in row order (optional ones by keyword or default)
    names = [B.OPTIONAL_ARGS.get(a) for a in row.args]
    vals: list[object] = []
    places: list[int | str] = []
    if row.kind is B.Kind.MINMAX:
        vals, places = [checked[i] for i in range(len(actuals))], list(range(len(actuals)))
    else:
        for i, (kind, name) in enumerate(zip(row.args, names)):
            place: int | str = i if i < len(actuals) else (name or i)
            vals.append(checked[place] if place in checked else DEFAULTS[kind])
            places.append(place)
    try:
        return RULES[row.rule](row, span, vals, places)
    except _Refused as r:
        return r.refusal


# ---- the actual arguments of a call, read from a frontend's syntax -----------------------------
N = TypeVar("N")  # a frontend's syntax node of an argument
R = TypeVar("R")  # a VALUE argument as the frontend first reads it (before its promotions)


class Reader(Protocol[N, R]):
    """How a frontend reads each kind of argument of one call from its syntax, with its language's
    rules (see the module docstring, step 3); `call` drives it. A reader raises the frontend's own
    diagnostic for what its language refuses; what the row refuses, the binder says."""

    def constant(self, node: N, kind: Arg) -> Actual:
        """An AXIS or COUNT: the folded constant (a COUNT of a declaration may be a tuple of ints,
        a shape), or None when the argument is not a constant."""
        ...

    def scope(self, node: N) -> Actual:
        """The scope's name ('wave', 'workgroup', 'device'), or None when it names none."""
        ...

    def type(self, node: N) -> Actual:
        """The ScalarType named, or None."""
        ...

    def array(self, node: N) -> ArrayRef | None:
        """The array named (None: the argument is not an array)."""
        ...

    def index(self, node: N) -> hir.Expr:
        """An integer expression: an atomic's element index, a lane, a distance."""
        ...

    def condition(self, node: N) -> hir.Expr:
        """A BOOL expression (the language's truth rule applied)."""
        ...

    def element(self, node: N, elem: ScalarType) -> hir.Expr:
        """An atomic's value, converted to the array's element type."""
        ...

    def value(self, node: N) -> R:
        """A VALUE argument read in source order; `values` converts them all together."""
        ...

    def values(self, read: list[R], nodes: list[N]) -> list[hir.Expr]:
        """The VALUE arguments of the call, with the language's promotions for the row."""
        ...


_READ: dict[Arg, Callable[[Reader, object], Actual]] = {
    Arg.AXIS: lambda r, n: r.constant(n, Arg.AXIS),
    Arg.SCOPE: lambda r, n: r.scope(n),
    Arg.COUNT: lambda r, n: r.constant(n, Arg.COUNT),
    Arg.TYPE: lambda r, n: r.type(n),
    Arg.INDEX: lambda r, n: r.index(n),
    Arg.CONDITION: lambda r, n: r.condition(n),
}


def call(
    row: Builtin,
    span: Span | None,
    reader: Reader[N, R],
    nodes: Sequence[N],
    keywords: Sequence[tuple[str, N]] = (),
    spelled: str = "",
    variadic: bool = True,
) -> hir.Expr | Refusal:
    """A call of `row` with these argument nodes (positions, then (keyword, node) pairs): its
    arity, every argument read by its kind through `reader` (an atomic's array first checked,
    its values then read in its element type; the VALUE arguments converted together), and the
    binder's typed call, or the refusal. `spelled`, `variadic`: as in `slots`."""
    kinds = slots(row, len(nodes), [k for k, _ in keywords], spelled, variadic)
    if isinstance(kinds, Refusal):
        return kinds
    given = [*nodes, *(n for _, n in keywords)]
    places: list[int | str] = [*range(len(nodes)), *(k for k, _ in keywords)]
    out: list[Actual] = []
    pending: list[tuple[int, R, N]] = []
    elem: ScalarType | None = None
    for i, (place, kind, node) in enumerate(zip(places, kinds, given)):
        if kind is Arg.ARRAY:
            ref = reader.array(node)
            why = check(row, kind, ref, place)
            if why is not None:
                return why
            assert ref is not None
            elem = ref.elem
            out.append(ref)
        elif kind is Arg.VALUE and elem is not None:
            out.append(reader.element(node, elem))
        elif kind is Arg.VALUE:
            out.append(None)
            pending.append((i, reader.value(node), node))
        else:
            out.append(_READ[kind](reader, node))
    if pending:
        for (i, _, _), x in zip(pending, reader.values([r for _, r, _ in pending], [n for _, _, n in pending])):
            out[i] = x
    return bind(row, span, out[: len(nodes)], dict(zip((k for k, _ in keywords), out[len(nodes) :])))


def at(refusal: Refusal, nodes: Sequence[N], keywords: Sequence[tuple[str, N]] = ()) -> N | None:
    """The argument node a refusal is about (None: the call as a whole)."""
    if isinstance(refusal.arg, int) and refusal.arg < len(nodes):
        return nodes[refusal.arg]
    return next((n for k, n in keywords if k == refusal.arg), None)


def toolchain_id(row: Builtin, given: int) -> bool:
    """An axis-less thread_id(): the Rust toolchain's dialect (builtins.TOOLCHAIN_WORKGROUP)."""
    return row.rule is Rule.ID and not given and row.name == B.TOOLCHAIN_ID


# ---- one case per typing rule -------------------------------------------------------------------
def _exprs(vals: list[object]) -> list[hir.Expr]:
    return [v for v in vals if isinstance(v, hir.Expr)]


def _id(row: Builtin, sp: Span | None, vals: list[object], places: list[int | str]) -> hir.Expr:
    return hir.Call(I32, sp, row.name, (), None, (("axis", vals[0] if vals else 0),))


def _void(row: Builtin, sp: Span | None, vals: list[object], places: list[int | str]) -> hir.Expr:
    attrs = (("scope", vals[0]),) if vals else ()
    return hir.Call(B.VOID, sp, row.name, (), None, attrs)


def _local(row: Builtin, sp: Span | None, vals: list[object], places: list[int | str]) -> hir.Expr:
    t, count = vals
    shape = count if isinstance(count, tuple) else (count,)
    return hir.Call(B.VOID, sp, row.name, (), None, (("dtype", t), ("shape", shape)))


def _atomic(row: Builtin, sp: Span | None, vals: list[object], places: list[int | str]) -> hir.Expr:
    arr = vals[0]
    assert isinstance(arr, ArrayRef)
    idx, *values = _exprs(vals)
    for v, place in zip(values, places[2:]):
        if v.type != arr.elem:
            raise _Refused(Refusal(f"{row.name} on a {arr.elem} array takes {arr.elem} values, not {v.type}", place))
    return hir.Call(arr.elem, sp, row.name, (idx, *values), arr.name)


def _wave(row: Builtin, sp: Span | None, vals: list[object], places: list[int | str]) -> hir.Expr:
    args = _exprs(vals)
    why = B.wave_operand(row.name, args[0].type)
    if why is not None:
        raise _Refused(Refusal(why, places[0]))
    return hir.Call(args[0].type, sp, row.name, tuple(args))


def _vote(row: Builtin, sp: Span | None, vals: list[object], places: list[int | str]) -> hir.Expr:
    return hir.Call(B.vote_result(row.name), sp, row.name, tuple(_exprs(vals)))


def _float_of(row: Builtin, takes: tuple[ScalarType, ...], x: hir.Expr, place: int | str) -> None:
    if x.type not in takes:
        raise _Refused(
            Refusal(
                f"{row.name} takes {' or '.join(map(str, takes))}, not {x.type} (the device has no {x.type} {row.name})",
                place,
            )
        )


def _math(row: Builtin, sp: Span | None, vals: list[object], places: list[int | str]) -> hir.Expr:
    (x,) = _exprs(vals)
    _float_of(row, B.math_types(row.name), x, places[0])
    return hir.Call(x.type, sp, row.name, (x,))


def _one_type(row: Builtin, xs: list[hir.Expr], places: list[int | str], takes: tuple[ScalarType, ...]) -> ScalarType:
    t = xs[0].type
    for x, place in zip(xs, places):
        if x.type is BOOL:
            raise _Refused(Refusal(f"{row.name} takes numbers, not bool", place))
        if x.type != t:
            raise _Refused(Refusal(f"{row.name} takes arguments of one type, not {t} and {x.type}", place))
    if t not in takes:
        raise _Refused(Refusal(f"{row.name} takes {', '.join(map(str, takes))}, not {t}", places[0]))
    return t


def _same(row: Builtin, sp: Span | None, vals: list[object], places: list[int | str]) -> hir.Expr:
    xs = _exprs(vals)
    t = _one_type(row, xs, places, B.same_types(row.name))
    if row.kind is B.Kind.MINMAX:
        acc = xs[0]
        for x in xs[1:]:
            acc = hir.Call(t, sp, row.name, (acc, x))
        return acc
    return hir.Call(t, sp, row.name, tuple(xs))


def _float_same(row: Builtin, sp: Span | None, vals: list[object], places: list[int | str]) -> hir.Expr:
    xs = _exprs(vals)
    t = _one_type(row, xs, places, (F32,))
    return hir.Call(t, sp, row.name, tuple(xs))


def _predicate(row: Builtin, sp: Span | None, vals: list[object], places: list[int | str]) -> hir.Expr:
    (x,) = _exprs(vals)
    _float_of(row, (F32, F64), x, places[0])
    return hir.Call(BOOL, sp, row.name, (x,))


def _bits(row: Builtin, sp: Span | None, vals: list[object], places: list[int | str]) -> hir.Expr:
    (x,) = _exprs(vals)
    if x.type not in (I32, U32):
        raise _Refused(Refusal(f"{row.name} takes an i32 or u32, not {x.type}", places[0]))
    return hir.Call(I32, sp, row.name, (x,))


def _powi(row: Builtin, sp: Span | None, vals: list[object], places: list[int | str]) -> hir.Expr:
    x, n = vals
    assert isinstance(x, hir.Expr) and isinstance(n, int)
    if x.type is BOOL:
        raise _Refused(Refusal(B.POWER_OF_A_NUMBER, places[0]))
    return hir.Call(x.type, sp, row.name, (x,), None, (("n", n),))


def _cast(row: Builtin, sp: Span | None, vals: list[object], places: list[int | str]) -> hir.Expr:
    (x,) = _exprs(vals)
    t = B.CASTS[row.name]
    return x if x.type is t else hir.Cast(t, sp, x)


RULES: dict[Rule, Callable[[Builtin, Span | None, list[object], list[int | str]], hir.Expr]] = {
    Rule.ID: _id,
    Rule.VOID: _void,
    Rule.LOCAL: _local,
    Rule.PRIVATE: _local,  # the same attributes: dtype and shape
    Rule.ATOMIC: _atomic,
    Rule.WAVE: _wave,
    Rule.VOTE: _vote,
    Rule.MATH: _math,
    Rule.SAME: _same,
    Rule.FLOAT_SAME: _float_same,
    Rule.PREDICATE: _predicate,
    Rule.BITS: _bits,
    Rule.POWI: _powi,
    Rule.CAST: _cast,
}

__all__ = [
    "ARG_CASES",
    "RULES",
    "Actual",
    "ArrayRef",
    "Reader",
    "Refusal",
    "at",
    "bind",
    "call",
    "check",
    "slots",
    "toolchain_id",
]
