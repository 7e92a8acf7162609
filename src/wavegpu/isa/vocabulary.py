"""The typed words of the instruction table: operations, their units, variants and nesting roles.

Every row of `isa.table` carries an `op` (what it does), the `unit` that runs that op (how an engine
runs it: a value, a memory access, an atomic, a wave operation, ...), an optional `variant`
(which flavour: the reduction operator, the shuffle mode, the compare condition, ...), for
structured control flow a `nest` role, and for memory rows a `space`. Consumers switch on these
instead of reading mnemonics.
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


class Unit(enum.Enum):
    """What runs a row: the one partition of `Op` that emulators and backends dispatch on."""

    VALUE = "value"  # destinations are a function of the sources (or of a special register)
    MEMORY = "memory"  # ld, st
    ATOMIC = "atomic"  # atom, red
    WAVE = "wave"  # the wave.* rows: lanes read each other
    CONTROL = "control"  # structured control flow (the rows with a `nest` role)
    SYNC = "sync"  # barrier, fence
    MMA = "mma"  # the matrix fragment multiply
    NOP = "nop"


MEMORY_OPS: frozenset[Op] = frozenset({Op.LD, Op.ST})
ATOMIC_OPS: frozenset[Op] = frozenset({Op.ATOM, Op.RED})
WAVE_OPS: frozenset[Op] = frozenset({Op.REDUCE, Op.BROADCAST, Op.SHUFFLE, Op.PREFIX, Op.BALLOT, Op.ANY, Op.ALL})
_OTHER_OF: dict[Op, Unit] = {
    **{o: Unit.MEMORY for o in MEMORY_OPS},
    **{o: Unit.ATOMIC for o in ATOMIC_OPS},
    **{o: Unit.WAVE for o in WAVE_OPS},
    **{o: Unit.CONTROL for o in NEST_OF},
    Op.BARRIER: Unit.SYNC,
    Op.FENCE: Unit.SYNC,
    Op.MMA: Unit.MMA,
    Op.NOP: Unit.NOP,
}
UNIT_OF: dict[Op, Unit] = {o: _OTHER_OF.get(o, Unit.VALUE) for o in Op}
"""Every operation's unit; the ones not named above are value operations."""
VALUE_OPS: frozenset[Op] = frozenset(o for o, g in UNIT_OF.items() if g is Unit.VALUE)
"""The operations of value rows (every `mov`, including the special-register move, is one)."""


class Space(enum.StrEnum):
    """The memory space a load, store or atomic addresses (the mnemonic's second word)."""

    GLOBAL = "global"  # device memory, shared by the dispatch
    LOCAL = "local"  # per-workgroup memory
    CONST = "const"  # read-only constant memory


class InstrClass(enum.StrEnum):
    """A row's instruction class, the unit of the emulator's statistics and the docs' tables."""

    MOVE = "move"
    INT = "int"
    BIT = "bit"
    F32 = "f32"
    F16 = "f16"
    F64 = "f64"
    CVT = "cvt"
    CMP = "cmp"
    SELECT = "select"
    LOAD = "load"
    STORE = "store"
    ATOMIC = "atomic"
    WAVE = "wave"
    SYNC = "sync"
    CONTROL = "control"
    MMA = "mma"
    MISC = "misc"
