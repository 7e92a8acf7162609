"""Data types and operand kinds of WAVE instructions."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class DataType(enum.Enum):
    """An operand's data type; `bits` is its width, `mask` its bit in capability type masks."""

    B8 = ("b8", 8, 0)
    U8 = ("u8", 8, 1)
    S8 = ("s8", 8, 2)
    B16 = ("b16", 16, 3)
    U16 = ("u16", 16, 4)
    S16 = ("s16", 16, 5)
    F16 = ("f16", 16, 6)
    BF16 = ("bf16", 16, 7)
    B32 = ("b32", 32, 8)
    U32 = ("u32", 32, 9)
    S32 = ("s32", 32, 10)
    F32 = ("f32", 32, 11)
    F16X2 = ("f16x2", 32, 12)
    BF16X2 = ("bf16x2", 32, 13)
    B64 = ("b64", 64, 14)
    U64 = ("u64", 64, 15)
    S64 = ("s64", 64, 16)
    F64 = ("f64", 64, 17)
    PRED = ("pred", 1, 18)

    def __init__(self, text: str, bits: int, code: int) -> None:
        self.text = text
        self.bits = bits
        self.code = code

    @property
    def mask(self) -> int:
        return 1 << self.code

    @property
    def is_float(self) -> bool:
        return self.text.startswith(("f", "bf"))

    @property
    def is_signed(self) -> bool:
        return self.text.startswith("s")

    @classmethod
    def from_text(cls, text: str) -> DataType:
        return _BY_TEXT[text]

    @classmethod
    def from_code(cls, code: int) -> DataType:
        return _BY_CODE[code]


_BY_TEXT = {t.text: t for t in DataType}
_BY_CODE = {t.code: t for t in DataType}


class Kind(enum.Enum):
    """How an operand is written and encoded. Each kind takes one 8-bit field."""

    REG = "R"  # a 32-bit register rN, optionally a sub-register rN.lo/.hi/.b0..b3
    PAIR = "P"  # an even-odd register pair rN:rN+1 holding 64 bits
    VEC1 = "V1"  # {rN}
    VEC2 = "V2"  # {rN, rN+1}
    VEC4 = "V4"  # {rN, rN+1, rN+2, rN+3}
    PRED = "Q"  # a predicate register p0..p7
    SREG = "S"  # a special register (%tid.x ...)
    MEM = "M"  # a memory operand [rN+offset] or [address]

    @property
    def vector_len(self) -> int:
        return {Kind.VEC1: 1, Kind.VEC2: 2, Kind.VEC4: 4}.get(self, 0)

    @property
    def reg_span(self) -> int:
        """How many consecutive GPRs the operand names."""
        return {
            Kind.REG: 1,
            Kind.PAIR: 2,
            Kind.VEC1: 1,
            Kind.VEC2: 2,
            Kind.VEC4: 4,
            Kind.MEM: 1,
        }.get(self, 0)


class Role(enum.Enum):
    DST = "d"
    SRC = "s"


@dataclass(frozen=True)
class OperandSpec:
    """One operand slot of an instruction row."""

    kind: Kind
    role: Role
    dtype: DataType

    @property
    def accepts_immediate(self) -> bool:
        """Source registers and pairs may be written as immediates (32 or 64 bits)."""
        return self.role is Role.SRC and self.kind in (Kind.REG, Kind.PAIR)

    @property
    def imm_bits(self) -> int:
        return 64 if self.kind is Kind.PAIR else 32

    def describe(self) -> str:
        return f"{self.kind.value}{'=' if self.role is Role.DST else ''}:{self.dtype.text}"


# Sub-register selectors of a 32-bit register: (name, bit offset, bit width); index 0 = whole.
SUBREGS: tuple[tuple[str, int, int], ...] = (
    ("", 0, 32),
    ("lo", 0, 16),
    ("hi", 16, 16),
    ("b0", 0, 8),
    ("b1", 8, 8),
    ("b2", 16, 8),
    ("b3", 24, 8),
)
SUBREG_INDEX = {name: i for i, (name, _, _) in enumerate(SUBREGS)}
