"""The bit layout of WAVE instruction words, declared once for the codec and the docs.

An instruction is a 32-bit base word, optionally followed by extension words in this order:
the operand word (O), the auxiliary word (A, only after O) and the immediate (one word, or two
for a 64-bit immediate of a register-pair operand). Base + one extension word is the spec's
64-bit extended form.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Field:
    name: str
    word: str  # "base", "operand", "aux"
    lo: int
    width: int
    doc: str

    @property
    def hi(self) -> int:
        return self.lo + self.width - 1

    @property
    def mask(self) -> int:
        return (1 << self.width) - 1

    def get(self, word: int) -> int:
        return (word >> self.lo) & self.mask

    def put(self, value: int) -> int:
        if not 0 <= value <= self.mask:
            raise ValueError(f"{self.name}={value} does not fit {self.width} bits")
        return value << self.lo


BASE_FIELDS = (
    Field("opcode", "base", 0, 8, "operation group (the table's opcode)"),
    Field("mod", "base", 8, 6, "variant within the group (the table's modifier)"),
    Field("O", "base", 14, 1, "an operand word follows"),
    Field("I", "base", 15, 1, "an immediate follows (after O and A)"),
    Field("F0", "base", 16, 8, "field of the 1st non-immediate operand"),
    Field("F1", "base", 24, 8, "field of the 2nd non-immediate operand"),
)
OPERAND_FIELDS = (
    Field("F2", "operand", 0, 8, "field of the 3rd non-immediate operand"),
    Field("F3", "operand", 8, 8, "field of the 4th non-immediate operand"),
    Field("guard", "operand", 16, 5, "bit 0: guarded; bit 1: negated; bits 2-4: predicate"),
    Field(
        "slot",
        "operand",
        21,
        3,
        "0: no immediate; 1-5: operand 0-4 is the immediate; "
        "6: the memory offset; 7: an absolute memory address (no base register)",
    ),
    Field("A", "operand", 24, 1, "an auxiliary word follows"),
    Field("reserved", "operand", 25, 7, "must be zero"),
)
AUX_FIELDS = (
    Field("F4", "aux", 0, 8, "field of the 5th non-immediate operand"),
    Field("sel0", "aux", 8, 3, "sub-register of operand 0 (0 whole, 1 lo, 2 hi, 3-6 b0-b3)"),
    Field("sel1", "aux", 11, 3, "sub-register of operand 1"),
    Field("sel2", "aux", 14, 3, "sub-register of operand 2"),
    Field("sel3", "aux", 17, 3, "sub-register of operand 3"),
    Field("sel4", "aux", 20, 3, "sub-register of operand 4"),
    Field("reserved", "aux", 23, 9, "must be zero"),
)

BASE = {f.name: f for f in BASE_FIELDS}
OPW = {f.name: f for f in OPERAND_FIELDS}
AUX = {f.name: f for f in AUX_FIELDS}

MAX_FIELDS = 5
MAX_OPERANDS = 5
SLOT_MEM_OFFSET = 6
SLOT_MEM_ABSOLUTE = 7
