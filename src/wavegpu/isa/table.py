"""THE instruction table: one row per instruction (opcode, modifier, operands, flags, doc).

Every other part (encoder, decoder, assembler, disassembler, emulator, backends, docs) derives
from these rows. A group is one opcode; its variants are the modifier numbers 0, 1, 2, ...
in the order written here. Append new variants at the end of a group, and new groups with
new opcode numbers, so existing binaries keep their meaning.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from .types import DataType, Kind, OperandSpec, Role
from .vocabulary import (
    FLOAT_CONDITIONS,
    INT_CONDITIONS,
    NEST_OF,
    UNIT_OF,
    AtomOp,
    Cmp,
    InstrClass,
    Nest,
    Op,
    ReduceOp,
    Rounding,
    Scope,
    ShuffleMode,
    Space,
    Unit,
    Variant,
)

T = DataType
C = InstrClass

MAX_MODIFIER = 63  # 6-bit modifier field
MAX_OPCODE = 255  # 8-bit opcode field


@dataclass(frozen=True)
class InstrSpec:
    """One instruction row."""

    key: str  # unique id (equal to `name` unless two rows share a mnemonic)
    name: str  # the canonical mnemonic, e.g. "add.s32"
    opcode: int
    mod: int
    operands: tuple[OperandSpec, ...]
    cls: InstrClass
    doc: str
    op: Op  # what the row does (the group's stem without the memory space)
    variant: Variant | None = None  # which flavour of `op`: ReduceOp, AtomOp, ShuffleMode, Cmp, ...
    nest: Nest | None = None  # the row's role in structured control flow
    signed: bool = False  # the principal type (`dtype`) is signed; for loads, the memory value
    ext: bool = False  # an extension row, not in WAVE v0.1
    space: Space | None = None  # the memory space of a load, store or atomic
    cap: str | None = None  # optional capability the row needs
    barrier: bool = False
    control: bool = False  # structured control flow
    side_effects: bool = False  # writes memory or has effects beyond its destinations
    guardable: bool = True
    uniform: bool = False  # printed with the @uniform annotation
    aliases: tuple[str, ...] = ()  # other accepted spellings of the mnemonic
    width: int = 0  # memory access width in bytes (loads, stores, atomics)

    @property
    def unit(self) -> Unit:
        """What runs the row (vocabulary.UNIT_OF of its op)."""
        return UNIT_OF[self.op]

    @property
    def is_global_access(self) -> bool:
        """Whether the row reads or writes device memory (a global load, store or atomic): the
        accesses a kernel's buffers are recorded for."""
        return self.space is Space.GLOBAL

    @property
    def format(self) -> str:
        """The operand signature, e.g. "R=,R,R" (R reg, P pair, V vector, Q pred, S sreg, M mem)."""
        return ",".join(o.kind.value + ("=" if o.role is Role.DST else "") for o in self.operands)

    @property
    def dtype(self) -> DataType | None:
        """The row's principal type (of its first source, else its first operand)."""
        srcs = [o for o in self.operands if o.role is Role.SRC and o.kind is not Kind.MEM]
        if srcs:
            return srcs[0].dtype
        return self.operands[0].dtype if self.operands else None

    @property
    def dests(self) -> tuple[int, ...]:
        return tuple(i for i, o in enumerate(self.operands) if o.role is Role.DST)

    @property
    def mem_index(self) -> int | None:
        for i, o in enumerate(self.operands):
            if o.kind is Kind.MEM:
                return i
        return None


# ----------------------------------------------------------------------------------------------
# operand constructors


def d(t: DataType) -> OperandSpec:
    return OperandSpec(Kind.REG, Role.DST, t)


def s(t: DataType) -> OperandSpec:
    return OperandSpec(Kind.REG, Role.SRC, t)


def dp(t: DataType) -> OperandSpec:
    return OperandSpec(Kind.PAIR, Role.DST, t)


def sp(t: DataType) -> OperandSpec:
    return OperandSpec(Kind.PAIR, Role.SRC, t)


def pd() -> OperandSpec:
    return OperandSpec(Kind.PRED, Role.DST, T.PRED)


def ps() -> OperandSpec:
    return OperandSpec(Kind.PRED, Role.SRC, T.PRED)


def sr() -> OperandSpec:
    return OperandSpec(Kind.SREG, Role.SRC, T.U32)


def mem(t: DataType) -> OperandSpec:
    return OperandSpec(Kind.MEM, Role.SRC, t)


def vec(n: int, role: Role, t: DataType) -> OperandSpec:
    kind = {1: Kind.VEC1, 2: Kind.VEC2, 4: Kind.VEC4}[n]
    return OperandSpec(kind, role, t)


def rd(t: DataType) -> OperandSpec:
    """A 32-bit destination, or a pair for 64-bit types."""
    return dp(t) if t.bits == 64 else d(t)


def rs(t: DataType) -> OperandSpec:
    return sp(t) if t.bits == 64 else s(t)


# ----------------------------------------------------------------------------------------------
# the builder


@dataclass(frozen=True)
class V:
    """One variant of a group: the mnemonic suffix and its operands."""

    suffix: str
    operands: tuple[OperandSpec, ...]
    doc: str
    ext: bool = False
    cap: str | None = None
    aliases: tuple[str, ...] = ()
    key: str | None = None
    extra: tuple[tuple[str, object], ...] = ()


ROWS: list[InstrSpec] = []
_opcodes: dict[int, str] = {}


def group(
    opcode: int,
    stem: str,
    cls: InstrClass,
    variants: Iterable[V],
    **flags: object,
) -> None:
    if opcode in _opcodes:
        raise ValueError(f"opcode 0x{opcode:02x} used by {_opcodes[opcode]} and {stem}")
    _opcodes[opcode] = stem
    space = flags.get("space")
    assert space is None or isinstance(space, Space), stem
    op = Op(stem[: -len(f".{space}")] if space else stem)
    for mod, v in enumerate(variants):
        name = f"{stem}.{v.suffix}" if v.suffix else stem
        row_cls = cls
        if cls is C.F32 and v.operands:
            bits = v.operands[0].dtype
            row_cls = C.F64 if bits is T.F64 else C.F16 if bits in (T.F16, T.F16X2, T.BF16, T.BF16X2) else cls
        # the group's flags and the variant's own (keyword arguments of InstrSpec, checked there)
        row_flags: dict[str, Any] = dict(flags)
        row_flags.update(dict(v.extra))
        ROWS.append(
            InstrSpec(
                key=v.key or name,
                name=name,
                opcode=opcode,
                mod=mod,
                operands=v.operands,
                cls=row_cls,
                doc=v.doc,
                op=op,
                variant=_variant(op, v.suffix),
                nest=NEST_OF.get(op),
                signed=_signed(op, v.operands),
                ext=v.ext,
                cap=v.cap,
                aliases=v.aliases,
                **row_flags,
            )
        )


def _variant(op: Op, suffix: str) -> Variant | None:
    """The typed variant a row's mnemonic suffix spells (the only place that reads suffixes)."""
    word = suffix.split(".")[0]
    if op in (Op.REDUCE, Op.PREFIX):
        return ReduceOp(word)
    if op in (Op.ATOM, Op.RED):
        return AtomOp(word)
    if op is Op.BROADCAST:
        return ShuffleMode.IDX
    if op is Op.SHUFFLE:
        return ShuffleMode(word) if word in ("xor", "up", "down") else ShuffleMode.IDX
    if op is Op.SETP:
        return Cmp(word)
    if op is Op.FENCE:
        return Scope(word)
    if op is Op.CVT and word in {r.value for r in Rounding}:
        return Rounding(word)
    return None


def _signed(op: Op, operands: tuple[OperandSpec, ...]) -> bool:
    """Loads: the memory value is signed (sign-extended); other rows: the principal type is."""
    if op is Op.LD:
        return any(o.kind is Kind.MEM and o.dtype.is_signed for o in operands)
    srcs = [o for o in operands if o.role is Role.SRC and o.kind is not Kind.MEM]
    t = srcs[0].dtype if srcs else operands[0].dtype if operands else None
    return t is not None and t.is_signed


def typed(
    types: Iterable[DataType],
    sig: Callable[[DataType], tuple[OperandSpec, ...]],
    doc: str,
    *,
    spec: Iterable[DataType] = (),
    caps: dict[DataType, str] | None = None,
    aliases: dict[DataType, tuple[str, ...]] | None = None,
) -> list[V]:
    """Variants of one operation over several types; types not in `spec` are extensions."""
    spec_set = set(spec)
    caps = caps or {}
    aliases = aliases or {}
    return [
        V(
            t.text,
            sig(t),
            f"{doc} ({t.text})",
            ext=t not in spec_set,
            cap=caps.get(t),
            aliases=aliases.get(t, ()),
        )
        for t in types
    ]


FLOAT_CAPS = {
    T.F16: "CAP_F16",
    T.F16X2: "CAP_F16",
    T.BF16: "CAP_BF16",
    T.BF16X2: "CAP_BF16",
    T.F64: "CAP_F64",
}


def _bin(t: DataType) -> tuple[OperandSpec, ...]:
    return (rd(t), rs(t), rs(t))


def _un(t: DataType) -> tuple[OperandSpec, ...]:
    return (rd(t), rs(t))


def _tern(t: DataType) -> tuple[OperandSpec, ...]:
    return (rd(t), rs(t), rs(t), rs(t))


# ---- moves and misc --------------------------------------------------------------------------
_ALIAS32 = ("mov.u32", "mov.s32", "mov.f32")
group(0x00, "nop", C.MISC, [V("", (), "no operation", ext=True)])
group(
    0x01,
    "mov",
    C.MOVE,
    [
        V(
            "b32",
            (d(T.B32), s(T.B32)),
            "copy a register or an immediate",
            ext=True,
            aliases=_ALIAS32,
        ),
        V(
            "b32",
            (d(T.U32), sr()),
            "read a special register",
            ext=True,
            aliases=_ALIAS32,
            key="mov.b32.sreg",
        ),
        V(
            "b64",
            (dp(T.B64), sp(T.B64)),
            "copy a register pair or a 64-bit immediate",
            ext=True,
            aliases=("mov.u64", "mov.s64", "mov.f64"),
        ),
        V("pred", (pd(), ps()), "copy a predicate", ext=True),
    ],
)

# ---- integer ---------------------------------------------------------------------------------
I32 = (T.S32, T.U32)
group(0x08, "add", C.INT, typed(I32, _bin, "32-bit add, wrapping", spec=I32))
group(0x09, "sub", C.INT, typed(I32, _bin, "32-bit subtract, wrapping", spec=(T.S32,)))
group(0x0A, "mul.lo", C.INT, typed(I32, _bin, "multiply, low 32 bits", spec=(T.S32,)))
group(
    0x0B,
    "mul.hi",
    C.INT,
    typed(I32, _bin, "multiply, high 32 bits of the 64-bit product", spec=(T.S32,)),
)
group(
    0x0C,
    "mul.wide",
    C.INT,
    [
        V(
            t.text,
            (dp({T.S32: T.S64, T.U32: T.U64}[t]), s(t), s(t)),
            f"32x32 -> 64-bit multiply ({t.text})",
            ext=t is T.U32,
        )
        for t in I32
    ],
)
group(0x0D, "mad.lo", C.INT, typed(I32, _tern, "multiply-add, low 32 bits: a*b + c", spec=(T.S32,)))
group(
    0x0E,
    "div",
    C.INT,
    typed(I32, _bin, "division (x/0 = 0xffffffff, INT_MIN/-1 = INT_MIN)", spec=(T.S32,)),
)
group(0x0F, "rem", C.INT, typed(I32, _bin, "remainder (x%0 = x, INT_MIN%-1 = 0)", spec=(T.S32,)))
group(0x10, "neg", C.INT, typed((T.S32,), _un, "negate", spec=(T.S32,)))
group(
    0x11,
    "abs",
    C.INT,
    typed((T.S32,), _un, "absolute value (abs(INT_MIN) = INT_MIN)", spec=(T.S32,)),
)
group(0x12, "min", C.INT, typed(I32, _bin, "minimum", spec=(T.S32,)))
group(0x13, "max", C.INT, typed(I32, _bin, "maximum", spec=(T.S32,)))
group(0x14, "clamp", C.INT, typed(I32, _tern, "clamp a to [b, c]: min(max(a, b), c)"))
group(
    0x15,
    "dp4a",
    C.INT,
    [
        V(
            "s32.s32",
            (d(T.S32), s(T.S32), s(T.S32), s(T.S32)),
            "4-way signed int8 dot product plus c",
            ext=True,
            cap="CAP_DP4A",
        ),
        V(
            "u32.u32",
            (d(T.U32), s(T.U32), s(T.U32), s(T.U32)),
            "4-way unsigned int8 dot product plus c",
            ext=True,
            cap="CAP_DP4A",
        ),
    ],
)

# ---- bitwise ---------------------------------------------------------------------------------
group(
    0x18,
    "and",
    C.BIT,
    [
        V("b32", _bin(T.B32), "bitwise and"),
        V("pred", (pd(), ps(), ps()), "predicate and", ext=True),
    ],
)
group(
    0x19,
    "or",
    C.BIT,
    [V("b32", _bin(T.B32), "bitwise or"), V("pred", (pd(), ps(), ps()), "predicate or", ext=True)],
)
group(
    0x1A,
    "xor",
    C.BIT,
    [
        V("b32", _bin(T.B32), "bitwise xor"),
        V("pred", (pd(), ps(), ps()), "predicate xor", ext=True),
    ],
)
group(
    0x1B,
    "not",
    C.BIT,
    [V("b32", _un(T.B32), "bitwise not"), V("pred", (pd(), ps()), "predicate not", ext=True)],
)
group(0x1C, "shl", C.BIT, [V("b32", _bin(T.B32), "shift left (amounts >= 32 give 0)")])
group(
    0x1D,
    "shr",
    C.BIT,
    [
        V("u32", _bin(T.U32), "logical shift right (amounts >= 32 give 0)"),
        V("s32", _bin(T.S32), "arithmetic shift right (amounts >= 32 give sign fill)"),
    ],
)
group(0x1E, "popc", C.BIT, [V("b32", (d(T.U32), s(T.B32)), "population count")])
group(0x1F, "clz", C.BIT, [V("b32", (d(T.U32), s(T.B32)), "count leading zeros (clz(0) = 32)")])
group(0x20, "brev", C.BIT, [V("b32", _un(T.B32), "bit reverse")])
group(
    0x21,
    "bfe",
    C.BIT,
    [
        V(
            "u32",
            (d(T.U32), s(T.U32), s(T.U32), s(T.U32)),
            "bit field extract: (a >> b) & mask(c), as PTX",
        ),
        V(
            "s32",
            (d(T.S32), s(T.S32), s(T.U32), s(T.U32)),
            "signed bit field extract, as PTX",
            ext=True,
        ),
    ],
)
group(
    0x22,
    "bfi",
    C.BIT,
    [
        V(
            "b32",
            (d(T.B32), s(T.B32), s(T.U32), s(T.U32), s(T.B32)),
            "bit field insert: c bits of a at position b into e, as PTX bfi",
        )
    ],
)

# ---- floating point: f32 and (optional) f16, bf16, f64 ---------------------------------------
FLOATS = (T.F32, T.F16X2, T.F16, T.BF16X2, T.BF16, T.F64)
_fspec_add = (T.F32, T.F16X2, T.F64)
group(0x28, "add", C.F32, typed(FLOATS, _bin, "floating-point add", spec=_fspec_add, caps=FLOAT_CAPS))
group(
    0x29,
    "sub",
    C.F32,
    typed(
        (T.F32, T.F16, T.BF16, T.F64),
        _bin,
        "floating-point subtract",
        spec=(T.F32,),
        caps=FLOAT_CAPS,
    ),
)
group(
    0x2A,
    "mul",
    C.F32,
    typed(FLOATS, _bin, "floating-point multiply", spec=_fspec_add, caps=FLOAT_CAPS),
)
group(
    0x2B,
    "fma",
    C.F32,
    typed(FLOATS, _tern, "fused multiply-add a*b + c, one rounding", spec=_fspec_add, caps=FLOAT_CAPS),
)
group(
    0x2C,
    "div",
    C.F32,
    typed((T.F32, T.F64), _bin, "division, correctly rounded", spec=(T.F32, T.F64), caps=FLOAT_CAPS),
)
group(0x2D, "rcp", C.F32, typed((T.F32,), _un, "reciprocal (approximate, 1 ulp)", spec=(T.F32,)))
group(
    0x2E,
    "sqrt",
    C.F32,
    typed((T.F32, T.F64), _un, "square root, correctly rounded", spec=(T.F32,), caps=FLOAT_CAPS),
)
group(
    0x2F,
    "rsqrt",
    C.F32,
    typed((T.F32,), _un, "reciprocal square root (approximate)", spec=(T.F32,)),
)
group(
    0x30,
    "neg",
    C.F32,
    typed((T.F32, T.F64), _un, "negate (flips the sign bit)", spec=(T.F32,), caps=FLOAT_CAPS),
)
group(
    0x31,
    "abs",
    C.F32,
    typed((T.F32, T.F64), _un, "absolute value (clears the sign bit)", spec=(T.F32,), caps=FLOAT_CAPS),
)
group(
    0x32,
    "min",
    C.F32,
    typed(
        (T.F32, T.F64),
        _bin,
        "minimum; a NaN operand yields the other",
        spec=(T.F32,),
        caps=FLOAT_CAPS,
    ),
)
group(
    0x33,
    "max",
    C.F32,
    typed(
        (T.F32, T.F64),
        _bin,
        "maximum; a NaN operand yields the other",
        spec=(T.F32,),
        caps=FLOAT_CAPS,
    ),
)
group(0x34, "sin", C.F32, typed((T.F32,), _un, "sine (approximate)", spec=(T.F32,)))
group(0x35, "cos", C.F32, typed((T.F32,), _un, "cosine (approximate)", spec=(T.F32,)))
group(0x36, "exp2", C.F32, typed((T.F32,), _un, "2^x (approximate)", spec=(T.F32,)))
group(0x37, "log2", C.F32, typed((T.F32,), _un, "log2(x) (approximate)", spec=(T.F32,)))
group(0x38, "fract", C.F32, typed((T.F32,), _un, "x - floor(x)"))
group(0x39, "sat", C.F32, typed((T.F32,), _un, "clamp to [0, 1] (NaN gives 0)"))
group(0x3A, "clamp", C.F32, typed((T.F32,), _tern, "clamp a to [b, c]"))


# ---- conversions -----------------------------------------------------------------------------
def _cvt(
    prefix: str,
    dt: DataType,
    st: DataType,
    doc: str,
    *,
    ext: bool,
    cap: str | None = None,
    aliases: tuple[str, ...] = (),
) -> V:
    return V(f"{prefix}{dt.text}.{st.text}", (rd(dt), rs(st)), doc, ext=ext, cap=cap, aliases=aliases)


group(
    0x40,
    "cvt",
    C.CVT,
    [
        _cvt(
            "",
            T.F32,
            T.S32,
            "signed int to f32, round to nearest even",
            ext=False,
            aliases=("cvt.rn.f32.s32",),
        ),
        _cvt(
            "",
            T.F32,
            T.U32,
            "unsigned int to f32, round to nearest even",
            ext=False,
            aliases=("cvt.rn.f32.u32",),
        ),
        _cvt(
            "",
            T.S32,
            T.F32,
            "f32 to signed int, truncate, saturate, NaN -> 0",
            ext=False,
            aliases=("cvt.rzi.s32.f32",),
        ),
        _cvt("rni.", T.S32, T.F32, "f32 to signed int, round to nearest even, saturate", ext=False),
        _cvt("rmi.", T.S32, T.F32, "f32 to signed int, round toward -inf, saturate", ext=True),
        _cvt("rpi.", T.S32, T.F32, "f32 to signed int, round toward +inf, saturate", ext=True),
        _cvt(
            "",
            T.U32,
            T.F32,
            "f32 to unsigned int, truncate, saturate, NaN -> 0",
            ext=True,
            aliases=("cvt.rzi.u32.f32",),
        ),
        _cvt("rni.", T.U32, T.F32, "f32 to unsigned int, round to nearest even, saturate", ext=True),
        _cvt("rmi.", T.U32, T.F32, "f32 to unsigned int, round toward -inf, saturate", ext=True),
        _cvt("rpi.", T.U32, T.F32, "f32 to unsigned int, round toward +inf, saturate", ext=True),
        _cvt(
            "",
            T.F16,
            T.F32,
            "f32 to f16 in the low half (high half 0), round to nearest even",
            ext=False,
            cap="CAP_F16",
            aliases=("cvt.rn.f16.f32",),
        ),
        _cvt("", T.F32, T.F16, "f16 in the low half to f32 (exact)", ext=False, cap="CAP_F16"),
        _cvt("", T.F64, T.F32, "f32 to f64 (exact)", ext=False, cap="CAP_F64"),
        _cvt(
            "",
            T.F32,
            T.F64,
            "f64 to f32, round to nearest even",
            ext=False,
            cap="CAP_F64",
            aliases=("cvt.rn.f32.f64",),
        ),
        _cvt("", T.F64, T.S32, "signed int to f64 (exact)", ext=True, cap="CAP_F64"),
        _cvt("", T.F64, T.U32, "unsigned int to f64 (exact)", ext=True, cap="CAP_F64"),
        _cvt(
            "",
            T.S32,
            T.F64,
            "f64 to signed int, truncate, saturate, NaN -> 0",
            ext=True,
            cap="CAP_F64",
            aliases=("cvt.rzi.s32.f64",),
        ),
        _cvt(
            "",
            T.U32,
            T.F64,
            "f64 to unsigned int, truncate, saturate, NaN -> 0",
            ext=True,
            cap="CAP_F64",
            aliases=("cvt.rzi.u32.f64",),
        ),
        _cvt(
            "",
            T.BF16,
            T.F32,
            "f32 to bf16 in the low half, round to nearest even",
            ext=True,
            cap="CAP_BF16",
            aliases=("cvt.rn.bf16.f32",),
        ),
        _cvt("", T.F32, T.BF16, "bf16 in the low half to f32 (exact)", ext=True, cap="CAP_BF16"),
        _cvt("rni.", T.F32, T.F32, "round to nearest integral value, ties to even", ext=True),
        _cvt("rzi.", T.F32, T.F32, "round toward zero to an integral value (trunc)", ext=True),
        _cvt("rmi.", T.F32, T.F32, "round toward -inf to an integral value (floor)", ext=True),
        _cvt("rpi.", T.F32, T.F32, "round toward +inf to an integral value (ceil)", ext=True),
        _cvt("rz.", T.F32, T.F64, "f64 to f32, round toward zero", ext=True, cap="CAP_F64"),
        _cvt(
            "rni.",
            T.F64,
            T.F64,
            "round f64 to nearest integral value, ties to even",
            ext=True,
            cap="CAP_F64",
        ),
        _cvt(
            "rzi.",
            T.F64,
            T.F64,
            "round f64 toward zero to an integral value",
            ext=True,
            cap="CAP_F64",
        ),
        _cvt(
            "rmi.",
            T.F64,
            T.F64,
            "round f64 toward -inf to an integral value",
            ext=True,
            cap="CAP_F64",
        ),
        _cvt(
            "rpi.",
            T.F64,
            T.F64,
            "round f64 toward +inf to an integral value",
            ext=True,
            cap="CAP_F64",
        ),
    ],
)

# ---- comparisons and selects -----------------------------------------------------------------
_CMP_DOC = {
    "eq": "equal",
    "ne": "not equal",
    "lt": "less than",
    "le": "less or equal",
    "gt": "greater than",
    "ge": "greater or equal",
}


def _setp_variants(t: DataType, spec_ops: Iterable[str], cap: str | None) -> list[V]:
    out = []
    spec_set = set(spec_ops)
    for cond in FLOAT_CONDITIONS if t.is_float else INT_CONDITIONS:
        c = cond.value
        if cond is Cmp.NUM:
            doc = "true if neither operand is NaN"
        elif cond is Cmp.NAN:
            doc = "true if either operand is NaN"
        elif cond.unordered:
            doc = f"{_CMP_DOC[cond.ordered.value]}, or either operand NaN (unordered)"
        elif t.is_float:
            doc = f"{_CMP_DOC[c]}; false if either operand is NaN (ordered)"
        else:
            doc = _CMP_DOC[c]
        out.append(
            V(
                f"{c}.{t.text}",
                (pd(), rs(t), rs(t)),
                f"{doc} ({t.text})",
                ext=c not in spec_set,
                cap=cap,
            )
        )
    return out


_ICMP = tuple(c.value for c in INT_CONDITIONS)
group(0x48, "setp", C.CMP, _setp_variants(T.S32, _ICMP, None))
group(0x49, "setp", C.CMP, _setp_variants(T.U32, (), None))
group(0x4A, "setp", C.CMP, _setp_variants(T.F32, (*_ICMP, "neu"), None))
group(0x4B, "setp", C.CMP, _setp_variants(T.F64, (), "CAP_F64"))
group(
    0x4C,
    "selp",
    C.SELECT,
    [
        V(
            "b32",
            (d(T.B32), s(T.B32), s(T.B32), ps()),
            "select: d = p ? a : b",
            aliases=("selp.s32", "selp.u32", "selp.f32"),
        ),
        V(
            "b64",
            (dp(T.B64), sp(T.B64), sp(T.B64), ps()),
            "select a pair: d = p ? a : b",
            ext=True,
            aliases=("selp.u64", "selp.s64", "selp.f64"),
        ),
    ],
)
group(
    0x4D,
    "slct",
    C.SELECT,
    [
        V(
            "s32.f32",
            (d(T.B32), s(T.B32), s(T.B32), s(T.F32)),
            "select on sign: d = (c >= 0.0) ? a : b",
            aliases=("slct.b32.f32", "slct.u32.f32", "slct.f32.f32"),
        ),
        V(
            "b32.s32",
            (d(T.B32), s(T.B32), s(T.B32), s(T.S32)),
            "select on sign: d = (c >= 0) ? a : b",
            ext=True,
            aliases=("slct.s32.s32", "slct.u32.s32", "slct.f32.s32"),
        ),
    ],
)

# ---- memory ----------------------------------------------------------------------------------
_LD = (
    ("u8", 1, d(T.U32), T.U8, False, ()),
    ("s8", 1, d(T.S32), T.S8, False, ()),
    ("u16", 2, d(T.U32), T.U16, False, ()),
    ("s16", 2, d(T.S32), T.S16, False, ()),
    ("b32", 4, d(T.B32), T.B32, False, ("u32", "s32", "f32")),
    ("b64", 8, dp(T.B64), T.B64, False, ("u64", "s64", "f64")),
    ("v2.b32", 8, vec(2, Role.DST, T.B32), T.B32, False, ("v2.u32", "v2.s32", "v2.f32")),
    ("v4.b32", 16, vec(4, Role.DST, T.B32), T.B32, False, ("v4.u32", "v4.s32", "v4.f32")),
)
_ST = (
    ("b8", 1, s(T.B32), T.B8, ("u8", "s8")),
    ("b16", 2, s(T.B32), T.B16, ("u16", "s16")),
    ("b32", 4, s(T.B32), T.B32, ("u32", "s32", "f32")),
    ("b64", 8, sp(T.B64), T.B64, ("u64", "s64", "f64")),
    ("v2.b32", 8, vec(2, Role.SRC, T.B32), T.B32, ("v2.u32", "v2.s32", "v2.f32")),
    ("v4.b32", 16, vec(4, Role.SRC, T.B32), T.B32, ("v4.u32", "v4.s32", "v4.f32")),
)
_SPACE_DOC = {Space.GLOBAL: "device memory", Space.LOCAL: "local memory", Space.CONST: "constant memory"}
_SPEC_LOADS = {
    (Space.LOCAL, "b32"),
    (Space.LOCAL, "b64"),
    (Space.GLOBAL, "b32"),
    (Space.CONST, "b32"),
    (Space.GLOBAL, "v2.b32"),
    (Space.GLOBAL, "v4.b32"),
}
_SPEC_STORES = {(Space.LOCAL, "b32"), (Space.GLOBAL, "b32")}

for _opc, _space in ((0x50, Space.GLOBAL), (0x51, Space.LOCAL), (0x52, Space.CONST)):
    group(
        _opc,
        f"ld.{_space}",
        C.LOAD,
        [
            V(
                sfx,
                (dst, mem(mt)),
                f"load {w} byte(s) from {_SPACE_DOC[_space]}"
                + (" (sign-extended)" if sfx.startswith("s") else " (zero-extended)" if w < 4 else ""),
                ext=(_space, sfx) not in _SPEC_LOADS,
                aliases=tuple(f"ld.{_space}.{a}" for a in al),
                extra=(("width", w),),
            )
            for sfx, w, dst, mt, _e, al in _LD
        ],
        space=_space,
    )
for _opc, _space in ((0x54, Space.GLOBAL), (0x55, Space.LOCAL)):
    group(
        _opc,
        f"st.{_space}",
        C.STORE,
        [
            V(
                sfx,
                (mem(mt), val),
                f"store {w} byte(s) to {_SPACE_DOC[_space]}",
                ext=(_space, sfx) not in _SPEC_STORES,
                aliases=tuple(f"st.{_space}.{a}" for a in al),
                extra=(("width", w),),
            )
            for sfx, w, val, mt, al in _ST
        ],
        space=_space,
        side_effects=True,
    )

# ---- atomics ---------------------------------------------------------------------------------
_ATOM_OPS = (
    ("add.u32", T.U32, "add", ("add.s32",)),
    ("sub.u32", T.U32, "subtract", ("sub.s32",)),
    ("min.s32", T.S32, "signed minimum", ()),
    ("max.s32", T.S32, "signed maximum", ()),
    ("min.u32", T.U32, "unsigned minimum", ()),
    ("max.u32", T.U32, "unsigned maximum", ()),
    ("and.b32", T.B32, "bitwise and", ()),
    ("or.b32", T.B32, "bitwise or", ()),
    ("xor.b32", T.B32, "bitwise xor", ()),
    ("exch.b32", T.B32, "exchange", ()),
    ("cas.b32", T.B32, "compare and swap: store c where memory equals b", ()),
    ("add.f32", T.F32, "f32 add", ()),
)
_SPEC_ATOMS = {
    "add.u32",
    "sub.u32",
    "min.s32",
    "max.s32",
    "min.u32",
    "max.u32",
    "and.b32",
    "or.b32",
    "xor.b32",
    "exch.b32",
    "cas.b32",
}

for _opc, _space in ((0x58, Space.GLOBAL), (0x59, Space.LOCAL)):
    group(
        _opc,
        f"atom.{_space}",
        C.ATOMIC,
        [
            V(
                sfx,
                (d(t), mem(t), s(t), *((s(t),) if sfx.startswith("cas") else ())),
                f"atomic {doc} on {_SPACE_DOC[_space]}, returns the old value",
                ext=sfx not in _SPEC_ATOMS,
                aliases=tuple(f"atom.{_space}.{a}" for a in al),
                extra=(("width", 4),),
            )
            for sfx, t, doc, al in _ATOM_OPS
        ],
        space=_space,
        side_effects=True,
    )
for _opc, _space in ((0x5A, Space.GLOBAL), (0x5B, Space.LOCAL)):
    group(
        _opc,
        f"red.{_space}",
        C.ATOMIC,
        [
            V(
                sfx,
                (mem(t), s(t), *((s(t),) if sfx.startswith("cas") else ())),
                f"atomic {doc} on {_SPACE_DOC[_space]}, no result",
                ext=True,
                aliases=tuple(f"red.{_space}.{a}" for a in al),
                extra=(("width", 4),),
            )
            for sfx, t, doc, al in _ATOM_OPS
        ],
        space=_space,
        side_effects=True,
    )

# ---- wave operations -------------------------------------------------------------------------
group(
    0x60,
    "wave.reduce",
    C.WAVE,
    [
        V(
            "add.u32",
            (d(T.U32), s(T.U32)),
            "sum over the active lanes",
            aliases=("wave.reduce.add.s32",),
        ),
        V("min.s32", (d(T.S32), s(T.S32)), "signed minimum over the active lanes"),
        V("max.s32", (d(T.S32), s(T.S32)), "signed maximum over the active lanes"),
        V("and.b32", (d(T.B32), s(T.B32)), "bitwise and over the active lanes"),
        V("or.b32", (d(T.B32), s(T.B32)), "bitwise or over the active lanes"),
        V("min.u32", (d(T.U32), s(T.U32)), "unsigned minimum over the active lanes", ext=True),
        V("max.u32", (d(T.U32), s(T.U32)), "unsigned maximum over the active lanes", ext=True),
        V("xor.b32", (d(T.B32), s(T.B32)), "bitwise xor over the active lanes", ext=True),
        V(
            "min.f32",
            (d(T.F32), s(T.F32)),
            "f32 minimum over the active lanes (NaN ignored)",
            ext=True,
        ),
        V(
            "max.f32",
            (d(T.F32), s(T.F32)),
            "f32 maximum over the active lanes (NaN ignored)",
            ext=True,
        ),
    ],
)
group(
    0x61,
    "wave.broadcast",
    C.WAVE,
    [V("b32", (d(T.B32), s(T.B32), s(T.U32)), "a from lane b (modulo W) to every active lane")],
)
group(
    0x62,
    "wave.shuffle",
    C.WAVE,
    [
        V("b32", (d(T.B32), s(T.B32), s(T.U32)), "a from lane b (modulo W)"),
        V(
            "xor.b32",
            (d(T.B32), s(T.B32), s(T.U32)),
            "a from lane lane_id ^ b (own value if out of range)",
        ),
        V(
            "up.b32",
            (d(T.B32), s(T.B32), s(T.U32)),
            "a from lane lane_id - b (own value if out of range)",
        ),
        V(
            "down.b32",
            (d(T.B32), s(T.B32), s(T.U32)),
            "a from lane lane_id + b (own value if out of range)",
        ),
    ],
)
group(
    0x63,
    "wave.prefix",
    C.WAVE,
    [
        V(
            "add.u32",
            (d(T.U32), s(T.U32)),
            "exclusive prefix sum over the active lanes",
            aliases=("wave.prefix.add.s32",),
        )
    ],
)
group(
    0x64,
    "wave.ballot",
    C.WAVE,
    [V("b32", (d(T.B32), ps()), "bit i set for each active lane i (i < 32) where p holds")],
)
group(0x65, "wave.any", C.WAVE, [V("", (pd(), ps()), "true if p holds in any active lane")])
group(0x66, "wave.all", C.WAVE, [V("", (pd(), ps()), "true if p holds in every active lane")])

# ---- synchronisation -------------------------------------------------------------------------
group(
    0x68,
    "barrier",
    C.SYNC,
    [V("", (), "workgroup barrier with a workgroup-scope fence")],
    barrier=True,
    guardable=False,
    side_effects=True,
)
group(
    0x69,
    "fence",
    C.SYNC,
    [
        V("wave", (), "memory fence, wave scope"),
        V("workgroup", (), "memory fence, workgroup scope"),
        V("device", (), "memory fence, device scope"),
    ],
    side_effects=True,
)

# ---- structured control flow -----------------------------------------------------------------
group(
    0x70,
    "if",
    C.CONTROL,
    [
        V("", (ps(),), "begin an if block for the lanes where p holds"),
        V(
            "uniform",
            (ps(),),
            "an if whose condition is uniform across the wave (divergence is UB)",
            key="if.uniform",
            extra=(("uniform", True),),
        ),
    ],
    control=True,
    guardable=False,
)
group(0x71, "else", C.CONTROL, [V("", (), "begin the else block")], control=True, guardable=False)
group(
    0x72,
    "endif",
    C.CONTROL,
    [V("", (), "end an if/else block; lanes reconverge")],
    control=True,
    guardable=False,
)
group(0x73, "loop", C.CONTROL, [V("", (), "begin a loop")], control=True, guardable=False)
group(
    0x74,
    "endloop",
    C.CONTROL,
    [V("", (), "end of the loop body; back to its start")],
    control=True,
    guardable=False,
)
group(
    0x75,
    "break",
    C.CONTROL,
    [V("", (ps(),), "lanes where p holds leave the innermost loop")],
    control=True,
)
group(
    0x76,
    "continue",
    C.CONTROL,
    [V("", (ps(),), "lanes where p holds go to the next iteration of the innermost loop")],
    control=True,
)
group(0x77, "ret", C.CONTROL, [V("", (), "end the executing threads")], control=True)

# ---- matrix multiply-accumulate --------------------------------------------------------------
group(
    0x7C,
    "mma",
    C.MMA,
    [
        V(
            "m16n8k8.f32.f16",
            (
                vec(4, Role.DST, T.F32),
                vec(2, Role.SRC, T.F16X2),
                vec(1, Role.SRC, T.F16X2),
                vec(4, Role.SRC, T.F32),
            ),
            "16x8x8 matrix multiply-accumulate, PTX mma.sync fragment layout (W = 32)",
            cap="CAP_MMA",
        )
    ],
)

# ----------------------------------------------------------------------------------------------
# indexes

BY_KEY: dict[str, InstrSpec] = {}
BY_CODE: dict[tuple[int, int], InstrSpec] = {}
BY_MNEMONIC: dict[str, list[InstrSpec]] = {}


def _index() -> None:
    for row in ROWS:
        if row.key in BY_KEY:
            raise ValueError(f"duplicate row key {row.key}")
        BY_KEY[row.key] = row
        code = (row.opcode, row.mod)
        if code in BY_CODE:
            raise ValueError(f"duplicate code {code}")
        if not (0 <= row.opcode <= MAX_OPCODE and 0 <= row.mod <= MAX_MODIFIER):
            raise ValueError(f"{row.key}: opcode or modifier out of range")
        BY_CODE[code] = row
        for m in (row.name, *row.aliases):
            BY_MNEMONIC.setdefault(m, []).append(row)


_index()


def row(key: str) -> InstrSpec:
    """The row with this key (e.g. "add.s32", "mov.b32.sreg")."""
    return BY_KEY[key]


VALUE_ROWS: frozenset[str] = frozenset(r.key for r in ROWS if r.unit is Unit.VALUE)
"""The keys of the value rows: the destination is a pure function of the sources (the
`isa.semantics` functions) or, for the special-register move, of the thread's position. Every
renderer computes them from one table keyed by row key, so each such table covers exactly these."""
