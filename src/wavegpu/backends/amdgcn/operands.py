"""What AMDGCN instruction selection (select.py) and its per-row rules (rows.py) share, below
both: operand register classes, the inline constants, the compare suffixes and the refusal."""

from __future__ import annotations

import struct

from ...errors import WaveError
from ...isa.vocabulary import Cmp
from .ir import VR, Operand, Phys, Sub


def inline_int(v: int) -> bool:
    """An integer the hardware encodes inline (no literal, no constant bus)."""
    v = v - (1 << 32) if v >= 1 << 31 else v
    return -16 <= v <= 64


_INLINE_F32 = {struct.unpack("<I", struct.pack("<f", f))[0] for f in (0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 4.0, -4.0)} | {
    0x3E22F983
}


def inline32(v: int) -> bool:
    return inline_int(v & 0xFFFFFFFF) or (v & 0xFFFFFFFF) in _INLINE_F32


def is_v(o: Operand) -> bool:
    return (
        (isinstance(o, VR) and o.rc == "v")
        or (isinstance(o, Sub) and o.vr.rc == "v")
        or (isinstance(o, Phys) and o.rc == "v")
    )


def is_s(o: Operand) -> bool:
    return (
        (isinstance(o, VR) and o.rc == "s")
        or (isinstance(o, Sub) and o.vr.rc == "s")
        or (isinstance(o, Phys) and o.rc == "s")
    )


class Unsupported(WaveError):
    """A kernel uses something this backend refuses (named with the kernel and pc)."""


CMP_INT = {Cmp.EQ: "eq", Cmp.NE: "ne", Cmp.LT: "lt", Cmp.LE: "le", Cmp.GT: "gt", Cmp.GE: "ge"}
# WAVE float conditions -> v_cmp suffix (ordered plain forms; n<op> = unordered "not ...").
CMP_F = {
    Cmp.EQ: "eq",
    Cmp.NE: "lg",
    Cmp.LT: "lt",
    Cmp.LE: "le",
    Cmp.GT: "gt",
    Cmp.GE: "ge",
    Cmp.EQU: "nlg",
    Cmp.NEU: "neq",
    Cmp.LTU: "nge",
    Cmp.LEU: "ngt",
    Cmp.GTU: "nle",
    Cmp.GEU: "nlt",
    Cmp.NUM: "o",
    Cmp.NAN: "u",
}
SWAP_CMP = {"lt": "gt", "gt": "lt", "le": "ge", "ge": "le", "eq": "eq", "ne": "ne", "lg": "lg"}
