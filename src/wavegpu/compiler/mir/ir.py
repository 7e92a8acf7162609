"""MIR: SSA values in a CFG of basic blocks; variables live in slots until mem2reg promotes them.

Text form (printed by `dump`, read by `mir.parse`):

    func @saxpy(%0: f32 a, %1: u32 x[f32], ...) {
      var i: i32
    bb0:
      %4 = sreg.tid.x : u32
      %5 = add %4, 1:u32 : u32
      setvar i, %5
      condbr %6, bb1, bb2
    bb1:
      %7 = phi [bb0, %5], [bb1, %8] : u32
      ...
      ret
    }
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...errors import Span
from ..types import ELEMENTS, ScalarType
from .ops import OPS, OpSpec


@dataclass(eq=False)
class Value:
    id: int
    type: ScalarType

    def __repr__(self) -> str:
        return f"%{self.id}"


@dataclass(frozen=True)
class Const:
    value: int | float | bool
    type: ScalarType

    def __repr__(self) -> str:
        return show_const(self)


Operand = Value | Const


@dataclass(eq=False)
class Inst:
    # dotted: "add", "cmp.lt", "load.global", "atomic.add.local", "sreg.tid.x", ...; an access to an
    # 8- or 16-bit array element names the element type last: "load.global.u8", "store.local.i16"
    # (the load's value is u32 or i32, zero- or sign-extended; the store keeps the low bits).
    # Every op, its operand count and types: the table in mir/ops.py, which the verifier checks.
    op: str
    dst: Value | None
    args: list[Operand]
    var: str | None = None  # getvar / setvar
    span: Span | None = None
    # A global load, store or atomic: the index of the buffer parameter whose array it addresses
    # (printed `load.global[x]`); carried wherever the instruction goes, like its span.
    buffer: int | None = None
    # A load or store merged with its neighbours into one .v2/.v4 access (passes/vectorize.py):
    # selection emits the vector row for the first member
    vector: Vector | None = None

    @property
    def spec(self) -> OpSpec | None:
        """The op's entry in MIR's op table (None for an op the verifier will refuse)."""
        return OPS.get(self.op)

    @property
    def has_effects(self) -> bool:
        """Never removed or moved by the optimiser (an unknown op counts as one)."""
        spec = self.spec
        return spec is None or spec.effects

    @property
    def convergent(self) -> bool:
        """Its result depends on which lanes are active: never moved across control flow or
        merged between blocks."""
        spec = self.spec
        return spec is None or spec.convergent

    @property
    def pure(self) -> bool:
        """Free of effects, memory reads and lane dependence: may be removed, merged or moved."""
        spec = self.spec
        return spec is not None and spec.pure


@dataclass(eq=False)
class Vector:
    """A merged access: its members in address order (the first one's address is the group's).
    Printed as a line `vector N` before its members, which stand together in their block."""

    insts: list[Inst]

    @property
    def width(self) -> int:
        return 4 * len(self.insts)

    def valid_in(self, insts: list[Inst], at: int) -> bool:
        """The members still stand together, in order, from insts[at] on."""
        n = len(self.insts)
        return at + n <= len(insts) and all(insts[at + k] is m for k, m in enumerate(self.insts))


@dataclass(eq=False)
class Phi:
    dst: Value
    incoming: list[tuple[Block, Operand]]


@dataclass(eq=False)
class Br:
    target: Block


@dataclass(eq=False)
class CondBr:
    cond: Operand
    then: Block
    other: Block


@dataclass(eq=False)
class Ret:
    pass


Term = Br | CondBr | Ret


@dataclass(eq=False)
class Block:
    name: str
    phis: list[Phi] = field(default_factory=list)
    insts: list[Inst] = field(default_factory=list)
    term: Term | None = None

    @property
    def succs(self) -> list[Block]:
        t = self.term
        if isinstance(t, Br):
            return [t.target]
        if isinstance(t, CondBr):
            return [t.then, t.other] if t.then is not t.other else [t.then]
        return []

    def __repr__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Param:
    name: str
    type: ScalarType  # the register's type: a buffer's address is u32
    kind: str  # "scalar" or "buffer"
    elem: ScalarType | None  # a buffer's element type
    value: Value = field(compare=False)


@dataclass(frozen=True)
class LocalArray:
    name: str
    elem: ScalarType
    count: int
    offset: int  # byte offset in local memory


@dataclass(eq=False)
class Function:
    name: str
    params: list[Param]
    blocks: list[Block]
    vars: dict[str, ScalarType] = field(default_factory=dict)
    locals: list[LocalArray] = field(default_factory=list)
    next_id: int = 0
    source_file: str = "<kernel>"
    workgroup_size: tuple[int, int, int] | None = None

    @property
    def entry(self) -> Block:
        return self.blocks[0]

    def new_value(self, t: ScalarType) -> Value:
        v = Value(self.next_id, t)
        self.next_id += 1
        return v

    def preds(self) -> dict[Block, list[Block]]:
        out: dict[Block, list[Block]] = {b: [] for b in self.blocks}
        for b in self.blocks:
            for s in b.succs:
                out.setdefault(s, []).append(b)
        return out

    @property
    def local_bytes(self) -> int:
        return max((la.offset + la.count * la.elem.size for la in self.locals), default=0)


def show_const(c: Const) -> str:
    v = c.value
    if isinstance(v, bool):
        text = "true" if v else "false"
    elif isinstance(v, float):
        text = repr(v)
        if "inf" in text or "nan" in text:
            text = {"inf": "inf", "-inf": "-inf", "nan": "nan"}[text]
    else:
        text = str(v)
    return f"{text}:{c.type.name}"


def show_op(o: Operand) -> str:
    return repr(o) if isinstance(o, Value) else show_const(o)


def show_inst(i: Inst, params: list[Param] | None = None) -> str:
    args = ", ".join(show_op(a) for a in i.args)
    op = i.op
    if i.buffer is not None:
        name = params[i.buffer].name if params is not None and 0 <= i.buffer < len(params) else str(i.buffer)
        op = f"{op}[{name}]"
    if i.op == "setvar":
        return f"setvar {i.var}, {args}"
    if i.op == "getvar":
        assert i.dst is not None
        return f"{i.dst!r} = getvar {i.var} : {i.dst.type.name}"
    body = f"{op} {args}".rstrip()
    if i.dst is None:
        return body
    return f"{i.dst!r} = {body} : {i.dst.type.name}"


def dump(fn: Function) -> str:
    params = ", ".join(
        f"{p.value!r}: {p.type.name} {p.name}" + (f"[{p.elem.name}]" if p.kind == "buffer" and p.elem else "")
        for p in fn.params
    )
    out = [f"func @{fn.name}({params}) {{"]
    if fn.workgroup_size:
        out.append(f"  workgroup {fn.workgroup_size[0]}, {fn.workgroup_size[1]}, {fn.workgroup_size[2]}")
    for la in fn.locals:
        out.append(f"  local {la.name}: {la.elem.name}[{la.count}] @{la.offset}")
    for name, t in fn.vars.items():
        out.append(f"  var {name}: {t.name}")
    for b in fn.blocks:
        out.append(f"{b.name}:")
        for phi in b.phis:
            inc = ", ".join(f"[{blk.name}, {show_op(v)}]" for blk, v in phi.incoming)
            out.append(f"  {phi.dst!r} = phi {inc} : {phi.dst.type.name}")
        for k, i in enumerate(b.insts):
            if i.vector is not None and i is i.vector.insts[0] and i.vector.valid_in(b.insts, k):
                out.append(f"  vector {len(i.vector.insts)}")
            out.append(f"  {show_inst(i, fn.params)}")
        t = b.term
        if isinstance(t, Br):
            out.append(f"  br {t.target.name}")
        elif isinstance(t, CondBr):
            out.append(f"  condbr {show_op(t.cond)}, {t.then.name}, {t.other.name}")
        elif isinstance(t, Ret):
            out.append("  ret")
        else:
            out.append("  <no terminator>")
    out.append("}")
    return "\n".join(out) + "\n"


TYPE_BY_NAME = dict(ELEMENTS)  # value types and (buffer and local parameters) element types
