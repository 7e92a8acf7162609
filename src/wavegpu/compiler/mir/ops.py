"""MIR's operations in one table: each op's name, operand count, type signature and effects.

MIR op names are MIR's own vocabulary (dotted: `add`, `cmp.lt`, `load.global.u8`,
`atomic.cas.local`, `sreg.tid.x`, `wave.shuffle.xor`), not ISA mnemonics; selection maps them to
rows by the rows' vocabulary (`compiler/rowmap.py`, `lir/selection.py`). The families with a
suffix take it from one list each: memory spaces, narrow element types, the ISA's `AtomOp`,
`ReduceOp`, `ShuffleMode` and `Scope`, compare conditions and special registers, and each OpSpec
carries its suffix typed (`family`, `space`, `elem`, `atom`, `reduce`, `shuffle`, `scope`,
`sreg`), which selection reads instead of parsing the name. `mir/verify.py` checks every
instruction against `OPS`; the types listed are those selection implements (a test selects every
(op, type) pair of the table).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ...isa.registers import SPECIAL_REGISTERS
from ...isa.table import ROWS
from ...isa.vocabulary import AtomOp, Op, ReduceOp, Scope, ShuffleMode
from ..types import NARROW


class Sig(enum.Enum):
    """How an op's operand types relate to its result type (t is the result's type unless said)."""

    SAME = "(t, ..., t) -> t"  # arithmetic: every operand has the result's type
    SHIFT = "(t, int) -> t"
    COMPARE = "(t, t) -> bool"
    SELECT = "(bool, t, t) -> t"
    CONVERT = "(s) -> t"  # any scalar to any scalar
    LOAD = "(u32 address) -> t"
    STORE = "(u32 address, t) -> none"
    ATOMIC = "(u32 address, t[, t]) -> t"
    WAVE = "(t) -> t"
    WAVE_LANE = "(t, u32 lane or distance) -> t"
    VOTE = "(bool) -> t"
    SREG = "() -> u32"
    GETVAR = "() -> the variable's type"
    SETVAR = "(the variable's type) -> none"
    NONE = "() -> none"


class Family(enum.Enum):
    """What kind of operation an op is, for the consumers that switch on it (selection): a value
    computed by a row (`VALUE`), a variable slot, memory, a special register, synchronisation, or
    a wave operation. The op's suffix is in the OpSpec's typed fields."""

    VALUE = "value"
    GETVAR = "getvar"
    SETVAR = "setvar"
    LOAD = "load"
    STORE = "store"
    ATOMIC = "atomic"
    SREG = "sreg"
    BARRIER = "barrier"
    FENCE = "fence"
    REDUCE = "reduce"
    PREFIX = "prefix"
    SHUFFLE = "shuffle"
    BROADCAST = "broadcast"
    BALLOT = "ballot"
    ANY = "any"
    ALL = "all"


INT = frozenset({"i32", "u32"})
FLOAT = frozenset({"f32", "f64", "f16"})
NUMBER = INT | FLOAT
BITS = INT | {"bool"}
SCALAR = NUMBER | {"bool"}
WORD = INT | {"f32", "f16"}  # a value in one 32-bit register: what atomics and wave operations move
SHORT_MATH = frozenset({"f32", "f16"})  # the transcendental rows have no f64 form


@dataclass(frozen=True)
class OpSpec:
    """One MIR operation. `arity` is the allowed operand counts; `types` the allowed result
    types (for ops without a result: the stored or compared value's types), None for any;
    `effects`: never removed or moved; `convergent`: its result depends on the active lanes, never
    moved across control flow or merged between blocks; `reads`: reads memory, a variable slot or
    the clock (not pure, though free of effects)."""

    name: str
    arity: tuple[int, ...]
    sig: Sig
    types: frozenset[str] | None = None
    space: str | None = None  # memory ops: "global" or "local"
    effects: bool = False
    convergent: bool = False
    reads: bool = False
    family: Family = Family.VALUE
    # the typed suffix, by family: a narrow element type name (loads and stores of u8/i8/u16/i16),
    # the atomic operator, the reduction (reduce, prefix), the shuffle mode, the fence scope, the
    # special register's name ("%tid.x")
    elem: str | None = None
    atom: AtomOp | None = None
    reduce: ReduceOp | None = None
    shuffle: ShuffleMode | None = None
    scope: Scope | None = None
    sreg: str | None = None

    @property
    def has_result(self) -> bool:
        return self.sig not in (Sig.STORE, Sig.SETVAR, Sig.NONE)

    @property
    def pure(self) -> bool:
        return not (self.effects or self.convergent or self.reads)


LOAD_STORE_ATOMIC = (Sig.LOAD, Sig.STORE, Sig.ATOMIC)
SPACES = ("global", "local")
COMPARES = ("eq", "ne", "lt", "le", "gt", "ge")


def _table() -> dict[str, OpSpec]:
    ops: list[OpSpec] = []
    for name in ("add", "sub", "mul", "div", "min", "max"):
        ops.append(OpSpec(name, (2,), Sig.SAME, NUMBER))
    for name in ("rem", "floordiv", "floormod", "mulhi"):
        ops.append(OpSpec(name, (2,), Sig.SAME, INT))
    ops.append(OpSpec("mad", (3,), Sig.SAME, INT))
    for name in ("and", "or", "xor"):
        ops.append(OpSpec(name, (2,), Sig.SAME, BITS))
    ops.append(OpSpec("not", (1,), Sig.SAME, BITS))
    for name in ("shl", "shr"):
        ops.append(OpSpec(name, (2,), Sig.SHIFT, INT))
    for name in ("neg", "abs"):
        ops.append(OpSpec(name, (1,), Sig.SAME, NUMBER))
    for name in ("popc", "clz"):  # the number of one bits, of leading zero bits (a count: 0..32)
        ops.append(OpSpec(name, (1,), Sig.SAME, INT))
    for name in ("sqrt", "floor", "ceil"):
        ops.append(OpSpec(name, (1,), Sig.SAME, FLOAT))
    for name in ("rsqrt", "sin", "cos", "exp2", "log2"):
        ops.append(OpSpec(name, (1,), Sig.SAME, SHORT_MATH))
    ops.append(OpSpec("fma", (3,), Sig.SAME, FLOAT))
    for cc in COMPARES:  # bools compare for (in)equality only
        ops.append(OpSpec(f"cmp.{cc}", (2,), Sig.COMPARE, SCALAR if cc in ("eq", "ne") else NUMBER))
    ops.append(OpSpec("select", (3,), Sig.SELECT, SCALAR))
    ops.append(OpSpec("cvt", (1,), Sig.CONVERT, NUMBER))  # between numbers (a bool is compared or selected)
    ops.append(OpSpec("getvar", (0,), Sig.GETVAR, SCALAR, reads=True, family=Family.GETVAR))
    ops.append(OpSpec("setvar", (1,), Sig.SETVAR, SCALAR, effects=True, family=Family.SETVAR))
    for space in SPACES:
        ops.append(OpSpec(f"load.{space}", (1,), Sig.LOAD, NUMBER, space, reads=True, family=Family.LOAD))
        ops.append(OpSpec(f"store.{space}", (2,), Sig.STORE, NUMBER, space, effects=True, family=Family.STORE))
        for narrow, elem in NARROW.items():  # the value is widened to (or narrowed from) 32 bits
            value = frozenset({elem.value_type.name})
            load, store = f"load.{space}.{narrow}", f"store.{space}.{narrow}"
            ops.append(OpSpec(load, (1,), Sig.LOAD, value, space, reads=True, family=Family.LOAD, elem=narrow))
            ops.append(OpSpec(store, (2,), Sig.STORE, value, space, effects=True, family=Family.STORE, elem=narrow))
        for aop in AtomOp:
            arity = (3,) if aop is AtomOp.CAS else (2,)
            name = f"atomic.{aop.value}.{space}"
            ops.append(OpSpec(name, arity, Sig.ATOMIC, WORD, space, effects=True, family=Family.ATOMIC, atom=aop))
    ops.append(OpSpec("barrier", (0,), Sig.NONE, effects=True, convergent=True, family=Family.BARRIER))
    for scope in Scope:
        ops.append(OpSpec(f"fence.{scope.value}", (0,), Sig.NONE, effects=True, family=Family.FENCE, scope=scope))
    for s in SPECIAL_REGISTERS:
        name = s.name.removeprefix("%")
        u32 = frozenset({"u32"})
        ops.append(OpSpec(f"sreg.{name}", (0,), Sig.SREG, u32, reads=name == "clock", family=Family.SREG, sreg=s.name))
    prefixes = {r.variant for r in ROWS if r.op is Op.PREFIX}  # the scans the ISA has
    for rop in ReduceOp:
        ops.append(
            OpSpec(f"wave.reduce.{rop.value}", (1,), Sig.WAVE, WORD, family=Family.REDUCE, reduce=rop, convergent=True)
        )
        if rop in prefixes:
            name = f"wave.prefix.{rop.value}"
            ops.append(OpSpec(name, (1,), Sig.WAVE, WORD, family=Family.PREFIX, reduce=rop, convergent=True))
    for mode in ShuffleMode:
        name = f"wave.shuffle.{mode.value}"
        ops.append(OpSpec(name, (2,), Sig.WAVE_LANE, WORD, family=Family.SHUFFLE, shuffle=mode, convergent=True))
    ops.append(OpSpec("wave.broadcast", (2,), Sig.WAVE_LANE, WORD, family=Family.BROADCAST, convergent=True))
    ops.append(OpSpec("wave.ballot", (1,), Sig.VOTE, frozenset({"u32"}), family=Family.BALLOT, convergent=True))
    ops.append(OpSpec("wave.any", (1,), Sig.VOTE, frozenset({"bool"}), family=Family.ANY, convergent=True))
    ops.append(OpSpec("wave.all", (1,), Sig.VOTE, frozenset({"bool"}), family=Family.ALL, convergent=True))
    table = {o.name: o for o in ops}
    assert len(table) == len(ops), "an op is listed twice"
    return table


OPS: dict[str, OpSpec] = _table()


def check(op: OpSpec, dst: str | None, args: list[str], var: str | None) -> str | None:
    """What is wrong with an instruction of `op` with result type `dst` (None: no result) and
    operand types `args`, or None. `var` is the slot's type for getvar/setvar."""
    if len(args) not in op.arity:
        want = " or ".join(str(n) for n in op.arity)
        return f"takes {want} operand{'s' if op.arity != (1,) else ''}, not {len(args)}"
    if op.has_result and dst is None:
        return "needs a result"
    if not op.has_result and dst is not None:
        return "has no result"
    sig = op.sig
    t = dst
    if sig in (Sig.STORE, Sig.SETVAR):
        t = args[-1]
    elif sig is Sig.CONVERT and op.types is not None and args[0] not in op.types:
        return f"does not take {args[0]} (takes {', '.join(sorted(op.types))})"
    elif sig is Sig.COMPARE:
        t = args[0]
        if dst != "bool":
            return f"yields bool, not {dst}"
    if op.types is not None and t is not None and t not in op.types:
        if len(op.types) == 1 and sig in (Sig.LOAD, Sig.STORE):
            (only,) = op.types
            return f"yields {only}, not {t}" if sig is Sig.LOAD else f"stores a {only} value, not {t}"
        return f"does not take {t} (takes {', '.join(sorted(op.types))})"
    wrong = None
    if sig is Sig.SAME:
        wrong = next((a for a in args if a != dst), None)
    elif sig is Sig.SHIFT:
        if args[0] != dst:
            wrong = args[0]
        elif args[1] not in INT:
            wrong = args[1]
    elif sig is Sig.COMPARE:
        wrong = args[1] if args[1] != args[0] else None
    elif sig is Sig.SELECT:
        if args[0] != "bool":
            wrong = args[0]
        else:
            wrong = next((a for a in args[1:] if a != dst), None)
    elif sig in (Sig.LOAD, Sig.STORE, Sig.ATOMIC):
        if args[0] != "u32":
            return f"addresses with u32, not {args[0]}"
        if sig is Sig.ATOMIC:
            wrong = next((a for a in args[1:] if a != dst), None)
    elif sig in (Sig.WAVE, Sig.WAVE_LANE):
        if args[0] != dst:
            wrong = args[0]
        elif sig is Sig.WAVE_LANE and args[1] != "u32":
            return f"takes its lane as u32, not {args[1]}"
    elif sig is Sig.VOTE:
        wrong = args[0] if args[0] != "bool" else None
    elif sig in (Sig.GETVAR, Sig.SETVAR) and var is not None and t != var:
        return f"of a {var} variable with {t}"
    if wrong is not None:
        return f"operand types {', '.join(args)} do not fit {sig.value}" + (f" with t = {dst}" if dst else "")
    return None
