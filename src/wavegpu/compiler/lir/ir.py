"""LIR: ISA rows over virtual registers, in structured order (if/else/endif, loop/.../endloop)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...errors import Span
from ...isa.structure import nesting
from ...isa.table import BY_KEY, InstrSpec
from ...isa.types import Kind
from ...isa.vocabulary import Op


@dataclass(eq=False)
class VReg:
    id: int
    # "r" 32-bit register, "p" even-aligned register pair, "q" predicate, "x2"/"x4" the aligned
    # registers of a .v2/.v4 access (never spilled: read or written only through `Part`s next to it)
    cls: str
    phys: int | None = None  # after allocation (or pinned: parameters arrive in r0..)
    name: str = ""

    @property
    def width(self) -> int:
        return {"p": 2, "x2": 2, "x4": 4}.get(self.cls, 1)

    def __repr__(self) -> str:
        pre = {"r": "v", "p": "w", "q": "q", "x2": "x", "x4": "x"}[self.cls]
        return f"{pre}{self.id}" + (f"({self.name})" if self.name else "")


@dataclass(frozen=True)
class Imm:
    bits: int
    width: int = 32


@dataclass(frozen=True)
class SpecialReg:
    id: int


@dataclass(frozen=True)
class Address:
    base: VReg | None
    offset: int = 0


@dataclass(frozen=True)
class Part:
    """Register `index` of a vector register (class x2/x4): a move's source after a vector load,
    its destination before a vector store. Writing part 0 starts the vector's value; writing a
    later part keeps the others (it is also a use)."""

    reg: VReg
    index: int


LOperand = VReg | Imm | SpecialReg | Address | Part


@dataclass(eq=False)
class LInst:
    key: str  # the row key
    operands: list[LOperand] = field(default_factory=list)
    guard: tuple[VReg, bool] | None = None  # (predicate, negated)
    span: Span | None = None
    buffer: int | None = None  # a global access: the buffer parameter it addresses (MIR's tag)

    @property
    def spec(self) -> InstrSpec:
        return BY_KEY[self.key]

    def defs(self) -> list[VReg]:
        spec = self.spec
        out: list[VReg] = []
        for o, s in zip(self.operands, spec.operands):
            if s.role.value == "d":
                if isinstance(o, VReg):
                    out.append(o)
                elif isinstance(o, Part):
                    out.append(o.reg)
        return out

    def uses(self) -> list[VReg]:
        spec = self.spec
        out: list[VReg] = []
        for o, s in zip(self.operands, spec.operands):
            if isinstance(o, Address) and o.base is not None:
                out.append(o.base)
            elif s.role.value == "s" and isinstance(o, VReg):
                out.append(o)
            elif isinstance(o, Part) and (s.role.value == "s" or o.index > 0):
                out.append(o.reg)
        if self.guard is not None:
            out.append(self.guard[0])
            out.extend(self.defs())  # a guarded write keeps the old value in the other lanes
        return out

    @property
    def is_move(self) -> bool:
        spec = self.spec
        return (
            spec.op is Op.MOV
            and spec.operands[1].kind is not Kind.SREG
            and self.guard is None
            and isinstance(self.operands[1], VReg)
        )


@dataclass(eq=False)
class LFunction:
    name: str
    insts: list[LInst]
    params: list[VReg]  # parameter i arrives in r(i)
    next_id: int
    local_bytes: int  # local arrays
    workgroup_size: tuple[int, int, int] | None
    source_file: str

    def new(self, cls: str, name: str = "") -> VReg:
        v = VReg(self.next_id, cls, name=name)
        self.next_id += 1
        return v


def show(o: LOperand) -> str:
    if isinstance(o, Part):
        r = o.reg
        return f"r{r.phys + o.index}" if r.phys is not None else f"{r!r}.{o.index}"
    if isinstance(o, VReg):
        if o.phys is not None:
            if o.cls in ("x2", "x4"):
                return "{" + ", ".join(f"r{o.phys + k}" for k in range(o.width)) + "}"
            return f"p{o.phys}" if o.cls == "q" else (f"r{o.phys}:r{o.phys + 1}" if o.cls == "p" else f"r{o.phys}")
        return repr(o)
    if isinstance(o, Imm):
        return str(o.bits) if o.bits < 10 else hex(o.bits)
    if isinstance(o, SpecialReg):
        from ...isa.registers import SREG_BY_ID

        return SREG_BY_ID[o.id].name
    base = show(o.base) if o.base is not None else ""
    if not base:
        return f"[{o.offset}]"
    return f"[{base}{'+' if o.offset >= 0 else '-'}{abs(o.offset)}]" if o.offset else f"[{base}]"


def dump(fn: LFunction) -> str:
    out = [f"lir {fn.name}(" + ", ".join(show(p) for p in fn.params) + ")"]
    depths = nesting(fn.insts, strict=False).depth
    for k, i in enumerate(fn.insts):
        depth = 1 + depths[k]
        guard = f"@{'!' if i.guard[1] else ''}{show(i.guard[0])} " if i.guard else ""
        name = "@uniform if" if i.spec.uniform else i.spec.name
        ops = ", ".join(show(o) for o in i.operands)
        out.append("  " * depth + f"{guard}{name} {ops}".rstrip())
    return "\n".join(out) + "\n"
