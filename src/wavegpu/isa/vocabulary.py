"""The typed words of the instruction table: operations, their variants and nesting roles.

Every row of `isa.table` carries an `op` (what it does), an optional `variant` (which flavour:
the reduction operator, the shuffle mode, the compare condition, ...) and, for structured
control flow, a `nest` role. Consumers switch on these instead of reading mnemonics.
"""

from __future__ import annotations

import enum


class Op(enum.Enum):
    """The operation of a row: its group's stem without the memory space."""

    NOP = "nop"
    MOV = "mov"
    ADD = "add"
    SUB = "sub"
    MUL = "mul"
    MUL_LO = "mul.lo"
    MUL_HI = "mul.hi"
    MUL_WIDE = "mul.wide"
    MAD_LO = "mad.lo"
    FMA = "fma"
    DIV = "div"
    REM = "rem"
    NEG = "neg"
    ABS = "abs"
    MIN = "min"
    MAX = "max"
    CLAMP = "clamp"
    DP4A = "dp4a"
    AND = "and"
    OR = "or"
    XOR = "xor"
    NOT = "not"
    SHL = "shl"
    SHR = "shr"
    POPC = "popc"
    CLZ = "clz"
    BREV = "brev"
    BFE = "bfe"
    BFI = "bfi"
    RCP = "rcp"
    SQRT = "sqrt"
    RSQRT = "rsqrt"
    SIN = "sin"
    COS = "cos"
    EXP2 = "exp2"
    LOG2 = "log2"
    FRACT = "fract"
    SAT = "sat"
    CVT = "cvt"
    SETP = "setp"
    SELP = "selp"
    SLCT = "slct"
    LD = "ld"
    ST = "st"
    ATOM = "atom"
    RED = "red"
    REDUCE = "wave.reduce"
    BROADCAST = "wave.broadcast"
    SHUFFLE = "wave.shuffle"
    PREFIX = "wave.prefix"
    BALLOT = "wave.ballot"
    ANY = "wave.any"
    ALL = "wave.all"
    BARRIER = "barrier"
    FENCE = "fence"
    IF = "if"
    ELSE = "else"
    ENDIF = "endif"
    LOOP = "loop"
    ENDLOOP = "endloop"
    BREAK = "break"
    CONTINUE = "continue"
    RET = "ret"
    MMA = "mma"


class ReduceOp(enum.Enum):
    """The combining operator of a wave reduction or prefix."""

    ADD = "add"
    MIN = "min"
    MAX = "max"
    AND = "and"
    OR = "or"
    XOR = "xor"


class AtomOp(enum.Enum):
    """The read-modify-write operator of an atomic (`atom`, `red`)."""

    ADD = "add"
    SUB = "sub"
    MIN = "min"
    MAX = "max"
    AND = "and"
    OR = "or"
    XOR = "xor"
    EXCH = "exch"
    CAS = "cas"


class ShuffleMode(enum.Enum):
    """Where a shuffle reads from: lane b, lane ^ b, lane - b or lane + b."""

    IDX = "idx"
    XOR = "xor"
    UP = "up"
    DOWN = "down"


class Cmp(enum.Enum):
    """A `setp` condition; the `U` forms are unordered (true when either operand is NaN)."""

    EQ = "eq"
    NE = "ne"
    LT = "lt"
    LE = "le"
    GT = "gt"
    GE = "ge"
    EQU = "equ"
    NEU = "neu"
    LTU = "ltu"
    LEU = "leu"
    GTU = "gtu"
    GEU = "geu"
    NUM = "num"
    NAN = "nan"

    @property
    def unordered(self) -> bool:
        return self in _UNORDERED

    @property
    def ordered(self) -> Cmp:
        """The ordered condition an unordered one extends (EQU -> EQ); itself otherwise."""
        return _ORDERED_OF.get(self, self)


_UNORDERED = frozenset({Cmp.EQU, Cmp.NEU, Cmp.LTU, Cmp.LEU, Cmp.GTU, Cmp.GEU})
_ORDERED_OF = {Cmp.EQU: Cmp.EQ, Cmp.NEU: Cmp.NE, Cmp.LTU: Cmp.LT, Cmp.LEU: Cmp.LE, Cmp.GTU: Cmp.GT, Cmp.GEU: Cmp.GE}

INT_CONDITIONS: tuple[Cmp, ...] = (Cmp.EQ, Cmp.NE, Cmp.LT, Cmp.LE, Cmp.GT, Cmp.GE)
"""The conditions of integer `setp` rows, in modifier order."""
FLOAT_CONDITIONS: tuple[Cmp, ...] = tuple(Cmp)
"""The conditions of floating-point `setp` rows, in modifier order."""


class Scope(enum.Enum):
    """The scope of a memory fence."""

    WAVE = "wave"
    WORKGROUP = "workgroup"
    DEVICE = "device"


class Rounding(enum.Enum):
    """The rounding of a conversion that names one (`cvt.rni...`); plain `cvt` rows have none."""

    RNI = "rni"  # to nearest integer, ties to even
    RZI = "rzi"  # toward zero, to an integer
    RMI = "rmi"  # toward -inf, to an integer
    RPI = "rpi"  # toward +inf, to an integer
    RZ = "rz"  # toward zero (f64 -> f32)


Variant = ReduceOp | AtomOp | ShuffleMode | Cmp | Scope | Rounding


class Nest(enum.Enum):
    """A row's role in structured control flow."""

    OPEN_IF = "open_if"  # if, if.uniform
    ELSE = "else"
    CLOSE = "close"  # endif, endloop
    OPEN_LOOP = "open_loop"
    BREAK = "break"
    CONTINUE = "continue"
    RET = "ret"


NEST_OF: dict[Op, Nest] = {
    Op.IF: Nest.OPEN_IF,
    Op.ELSE: Nest.ELSE,
    Op.ENDIF: Nest.CLOSE,
    Op.LOOP: Nest.OPEN_LOOP,
    Op.ENDLOOP: Nest.CLOSE,
    Op.BREAK: Nest.BREAK,
    Op.CONTINUE: Nest.CONTINUE,
    Op.RET: Nest.RET,
}
