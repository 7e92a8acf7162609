"""Instruction values: a row of the table with concrete operands and an optional guard."""

from __future__ import annotations

from dataclasses import dataclass

from .table import InstrSpec


@dataclass(frozen=True)
class Reg:
    """A 32-bit register, or a sub-register (sel: index into types.SUBREGS; 0 = whole)."""

    n: int
    sel: int = 0


@dataclass(frozen=True)
class Pair:
    """The register pair rN:rN+1 (N even)."""

    n: int


@dataclass(frozen=True)
class Vec:
    """Consecutive registers {rN, ..., rN+count-1}."""

    n: int
    count: int


@dataclass(frozen=True)
class Pred:
    n: int


@dataclass(frozen=True)
class SReg:
    id: int


@dataclass(frozen=True)
class Imm:
    """An immediate's raw bits, 32 or 64 wide."""

    bits: int
    width: int = 32


@dataclass(frozen=True)
class Mem:
    """[base + offset]; base None means an absolute address. offset is signed 32-bit."""

    base: int | None
    offset: int = 0


Operand = Reg | Pair | Vec | Pred | SReg | Imm | Mem


@dataclass(frozen=True)
class Guard:
    pred: int
    negated: bool = False


@dataclass(frozen=True)
class Instruction:
    spec: InstrSpec
    operands: tuple[Operand, ...] = ()
    guard: Guard | None = None

    @property
    def name(self) -> str:
        return self.spec.name
