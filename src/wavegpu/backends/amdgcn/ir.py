"""The kernel IR: AMDGCN machine instructions over virtual and physical registers.

An `MI` is one machine instruction in llvm-mc syntax: a mnemonic, its operands in assembly
order (which of them it defines), trailing modifiers (`offset:16`, `glc`, `quad_perm:[..]`), and
the special registers it reads and writes implicitly (`exec`, `vcc`, `scc`, `m0`). Operands are
virtual registers (`VR`: a class, a size in dwords and an alignment), sub-dwords of them (`Sub`),
physical registers (`Phys`: precoloured ABI registers and the allocator's result), the special
registers, immediates and labels. Pseudo instructions (`LABEL`, `COMMENT`) carry no encoding.

`MI.partial` marks a per-lane definition made under a partial EXEC mask (inside divergent control
flow or under a guard): a VALU write, a load or a returning atomic (LDS, global, buffer). The
lanes outside the mask keep their old value, so for liveness such a definition also reads the
register (it does not kill it).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

_ids = itertools.count()


@dataclass(eq=False)
class VR:
    """A virtual register range: class 'v' (VGPR) or 's' (SGPR), `size` dwords, base alignment."""

    rc: str
    size: int = 1
    align: int = 1
    name: str = ""
    temp: bool = False  # a temporary of one expansion: always written under the EXEC it is read under
    id: int = field(default_factory=lambda: next(_ids))

    def __repr__(self) -> str:
        return f"%{self.rc}{self.id}" + (f"x{self.size}" if self.size > 1 else "")


@dataclass(frozen=True)
class Sub:
    """Dwords i .. i+n-1 of a virtual register range."""

    vr: VR
    i: int
    n: int = 1


@dataclass(frozen=True)
class Phys:
    """Physical registers: class 'v', 's' or 'a' (AGPR), first index, size in dwords."""

    rc: str
    idx: int
    size: int = 1

    def __str__(self) -> str:
        if self.size == 1:
            return f"{self.rc}{self.idx}"
        return f"{self.rc}[{self.idx}:{self.idx + self.size - 1}]"

    def units(self) -> tuple[tuple[str, int], ...]:
        return tuple((self.rc, self.idx + i) for i in range(self.size))


@dataclass(frozen=True)
class Special:
    """exec, vcc, scc, m0 (and their halves exec_lo/exec_hi/vcc_lo/vcc_hi)."""

    name: str

    def __str__(self) -> str:
        return self.name

    def units(self) -> tuple[tuple[str, int], ...]:
        base = {"exec": ("exec", 2), "vcc": ("vcc", 2)}
        if self.name in base:
            return ((self.name, 0), (self.name, 1))
        if self.name.endswith(("_lo", "_hi")):
            return ((self.name[:-3], 0 if self.name.endswith("_lo") else 1),)
        return ((self.name, 0),)


EXEC, VCC, SCC, M0 = Special("exec"), Special("vcc"), Special("scc"), Special("m0")


@dataclass(frozen=True)
class Imm:
    """An integer immediate (a 32-bit pattern; negative values print as such)."""

    value: int

    def __str__(self) -> str:
        v = self.value
        if v & 0xFFFFFFFF in _FLOAT_INLINE:
            return _FLOAT_INLINE[v & 0xFFFFFFFF]
        if -16 <= v <= 64:
            return str(v)
        return hex(v & 0xFFFFFFFF) if v >= 0 else str(v)


_FLOAT_INLINE = {
    0x3F000000: "0.5",
    0xBF000000: "-0.5",
    0x3F800000: "1.0",
    0xBF800000: "-1.0",
    0x40000000: "2.0",
    0xC0000000: "-2.0",
    0x40800000: "4.0",
    0xC0800000: "-4.0",
}


@dataclass(frozen=True)
class Neg:
    """A VOP3 source with the negate modifier."""

    o: object

    def __str__(self) -> str:
        return f"-{self.o}"


@dataclass(frozen=True)
class Raw:
    """Operand text passed through as written (`hwreg(HW_REG_MODE, 0, 2)`)."""

    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Label:
    name: str

    def __str__(self) -> str:
        return self.name


Reg = VR | Sub | Phys | Special
Operand = Reg | Imm | Label | Neg | Raw


@dataclass(eq=False)
class MI:
    """One machine instruction (or a LABEL/COMMENT pseudo)."""

    op: str
    ops: list[Operand] = field(default_factory=list)
    ndefs: int = 0  # the first `ndefs` operands are definitions
    mods: str = ""
    imp_defs: tuple[Special, ...] = ()
    imp_uses: tuple[Special, ...] = ()
    partial: bool = False
    comment: str = ""
    defs_extra: tuple[int, ...] = ()  # operand indexes after ndefs that are also defined (atomics' in-out)

    @property
    def defs(self) -> list[Operand]:
        return self.ops[: self.ndefs] + [self.ops[i] for i in self.defs_extra]

    @property
    def uses(self) -> list[Operand]:
        return [o for i, o in enumerate(self.ops) if i >= self.ndefs]

    def text(self) -> str:
        if self.op == "LABEL":
            return f"{self.ops[0]}:"
        if self.op == "COMMENT":
            return f"  ; {self.comment}"
        args = ", ".join(str(o) for o in self.ops)
        s = f"  {self.op}"
        if args:
            s += " " + args
        if self.mods:
            s += " " + self.mods
        if self.comment:
            s += f"  ; {self.comment}"
        return s


def label(name: str) -> MI:
    return MI("LABEL", [Label(name)])


def is_pseudo(mi: MI) -> bool:
    return mi.op in ("LABEL", "COMMENT")
