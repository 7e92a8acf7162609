"""Chaitin-Briggs register allocation on LIR: build, coalesce, simplify, spill, select.

Predicates are coloured first over p0..p7 (a spilled predicate lives in a GPR: `mov g, 0;
@p mov g, 1` after its definition, `setp.ne.u32 p, g, 0` before each use). Then 32-bit registers
and even-aligned pairs share r0..r(K-1); parameters are precoloured r0..r(k-1). A spilled GPR
lives in a per-thread slot of local memory addressed from a register set up at entry:
base + linear thread id * stride. Spill costs weigh each use and definition by 10^loop depth.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

from ...codegen.coloring import color
from ...codegen.interference import INF, InterferenceGraph, build_interference
from ...codegen.liveness import instruction_liveness
from ...errors import CompileError, Diagnostic
from ...isa.capabilities import EMULATOR
from ...isa.registers import SRegId
from ...isa.structure import nesting, successors
from ..lir import rows
from ..lir.ir import Address, Imm, LFunction, LInst, Part, SpecialReg, VReg
from . import parts

NUM_PREDS = 8
VECTOR = ("x2", "x4")  # the register classes of .v2/.v4 accesses (aligned tuples, never spilled)
MAX_LOCAL = EMULATOR.constants["LOCAL_MEMORY_SIZE"]
MAX_WG = EMULATOR.constants["MAX_WORKGROUP_SIZE"]


@dataclass
class _SpillArea:
    """The GPR spill slots: the next free slot, the register holding this thread's slot base once
    set up, and the two instructions whose immediates (stride and base) are patched at the end."""

    next: int = 0
    addr: VReg | None = None
    patch: tuple[LInst, LInst] | None = None


@dataclass
class Allocation:
    registers: int
    predicates: int
    spill_bytes: int  # total local memory for spill slots
    spilled: int  # number of spilled virtual registers
    local_memory: int  # arrays + spill area


# ---- one register class ------------------------------------------------------------------------
class ClassAllocator:
    """One colouring problem: the virtual registers of `classes` in K registers. LIR's view of
    `codegen`: instruction-level liveness over LIR's successors, then an interference graph and
    Chaitin-Briggs colouring from codegen.coloring."""

    def __init__(self, lf: LFunction, classes: tuple[str, ...], K: int):
        self.lf = lf
        self.classes = classes
        self.K = K

    def vregs_of(self, ins: LInst) -> tuple[list[VReg], list[VReg]]:
        d = [v for v in ins.defs() if v.cls in self.classes]
        u = [v for v in ins.uses() if v.cls in self.classes]
        return d, u

    def liveness(self) -> tuple[list[int], list[VReg], dict[int, int]]:
        """live-out bitsets per instruction, the vregs indexed, index of each vreg id."""
        insts = self.lf.insts
        index: dict[int, int] = {}
        regs: list[VReg] = []

        def idx(v: VReg) -> int:
            if v.id not in index:
                index[v.id] = len(regs)
                regs.append(v)
            return index[v.id]

        defs, uses = [], []
        for ins in insts:
            d, u = self.vregs_of(ins)
            dm = 0
            for v in d:
                dm |= 1 << idx(v)
            um = 0
            for v in u:
                um |= 1 << idx(v)
            defs.append(dm)
            uses.append(um)
        for p in self.lf.params:
            if p.cls in self.classes:
                idx(p)
        live_in, live_out = instruction_liveness(successors(insts), defs, uses)
        self.live_in0 = live_in[0] if insts else 0
        return live_out, regs, index

    def run(self, spill_cb: Callable[[list[VReg]], None], unspillable: set[int]) -> dict[int, int]:
        for _round in range(40):
            result = self.attempt(unspillable)
            if isinstance(result, dict):
                return result
            spill_cb(result)
        raise CompileError([Diagnostic(f"register allocation did not converge for kernel {self.lf.name!r}")])

    def attempt(self, unspillable: set[int]) -> dict[int, int] | list[VReg]:
        insts = self.lf.insts
        live_out, regs, index = self.liveness()
        # undefined at entry (read before any write): give it a zero, except parameters
        params = {p.id for p in self.lf.params}
        undefined = [regs[j] for j in range(len(regs)) if self.live_in0 >> j & 1 and regs[j].id not in params]
        if undefined:
            for v in undefined:
                if v.cls == "q":
                    z = self.lf.new("r")
                    insts[0:0] = [
                        LInst(rows.MOVE["r"], [z, Imm(0)]),
                        LInst(rows.SETP_NE_U32, [v, z, Imm(0)]),
                    ]
                else:
                    insts.insert(0, LInst(rows.MOVE[v.cls], [v, Imm(0, 64 if v.cls == "p" else 32)]))
            return self.attempt(unspillable)
        graph = InterferenceGraph()
        for v in regs:
            # a 64-bit pair takes an even-aligned pair of registers
            graph.add_node(v.width, v.width, INF if v.id in unspillable else 0.0)
        depth = nesting(insts).loop_depth
        defs: list[list[int]] = []
        moves: list[tuple[int, int] | None] = []
        for i, ins in enumerate(insts):
            d, u = self.vregs_of(ins)
            w = 10.0 ** min(depth[i], 8)
            for v in d + u:
                graph.cost[index[v.id]] += w
            defs.append([index[v.id] for v in d])
            dst, src = (ins.operands[0], ins.operands[1]) if ins.is_move else (None, None)
            if isinstance(src, VReg) and src.cls in self.classes and isinstance(dst, VReg):
                moves.append((index[dst.id], index[src.id]))
            else:
                moves.append(None)
        build_interference(graph, live_out, defs, moves)
        # parameters interfere with each other (all live at entry)
        graph.pinned.update({j: v.phys for j, v in enumerate(regs) if v.phys is not None})
        for a in graph.pinned:
            for b in graph.pinned:
                graph.add_edge(a, b)
        result = color(graph, self.K)
        if result.spilled:
            if any(graph.cost[m] == INF for group in result.spilled for m in group):
                raise CompileError(
                    [
                        Diagnostic(
                            f"kernel {self.lf.name!r} cannot be allocated in {self.K} registers: even after spilling, "
                            f"more values are live at once than registers exist (raise max_registers)"
                        )
                    ]
                )
            # members of a coalesced spilled node spill together
            return [regs[m] for group in result.spilled for m in group]
        return {regs[j].id: result.colors[j] for j in range(len(regs))}


# ---- the whole function ------------------------------------------------------------------------
def allocate(lf: LFunction, max_registers: int = 256) -> Allocation:
    """Allocate `lf`'s registers in place. The vector accesses' moves are folded away first
    (parts.py) when that costs no spill the unfolded program would not have."""
    trial = copy.deepcopy(lf)
    if parts.fold(trial) and not _vector_live_at_entry(trial):
        try:
            folded = _allocate(trial, max_registers)
        except CompileError:
            folded = None
        if folded is not None and folded.spilled == 0:
            lf.__dict__.update(trial.__dict__)
            return folded
        plain = _allocate(lf, max_registers)
        if folded is not None and folded.spilled <= plain.spilled:
            lf.__dict__.update(trial.__dict__)
            return folded
        return plain
    return _allocate(lf, max_registers)


def _vector_live_at_entry(lf: LFunction) -> bool:
    """Whether some vector register would be read before any write (a part read on a path that
    skips the access): the rewrite is then not kept (a tuple gets no zero at entry)."""
    c = ClassAllocator(lf, VECTOR, 256)
    c.liveness()
    return c.live_in0 != 0


def _allocate(lf: LFunction, max_registers: int) -> Allocation:
    K = max(1, min(256, max_registers))
    # the registers of a vector access live only between it and its moves: never spilled
    unspillable: set[int] = {
        o.reg.id for ins in lf.insts for o in ins.operands if isinstance(o, Part) and o.reg.cls in VECTOR
    }

    # predicates: spill into GPRs
    pred_home: dict[int, VReg] = {}

    def spill_preds(vs: list[VReg]) -> None:
        for v in vs:
            g = pred_home.setdefault(v.id, lf.new("r", f"spill_{v!r}"))
            out: list[LInst] = []
            for ins in lf.insts:
                uses = [u for u in ins.uses() if u is v]
                defs = [d for d in ins.defs() if d is v]
                if uses:
                    t = lf.new("q")
                    unspillable.add(t.id)
                    out.append(LInst(rows.SETP_NE_U32, [t, g, Imm(0)], None, ins.span))
                    _replace(ins, v, t)
                    if defs:
                        out.append(ins)
                        out += [
                            LInst(rows.MOVE["r"], [g, Imm(0)], None, ins.span),
                            LInst(rows.MOVE["r"], [g, Imm(1)], (t, False), ins.span),
                        ]
                        continue
                if defs and not uses:
                    t = lf.new("q")
                    unspillable.add(t.id)
                    _replace(ins, v, t)
                    out.append(ins)
                    out += [
                        LInst(rows.MOVE["r"], [g, Imm(0)], None, ins.span),
                        LInst(rows.MOVE["r"], [g, Imm(1)], (t, False), ins.span),
                    ]
                    continue
                out.append(ins)
            lf.insts[:] = out

    pcolors = ClassAllocator(lf, ("q",), NUM_PREDS).run(spill_preds, unspillable)
    # GPRs: spill into local memory
    for i, p in enumerate(lf.params):
        p.phys = i
    if len(lf.params) > K:
        raise CompileError([Diagnostic(f"kernel {lf.name!r} has {len(lf.params)} parameters but max_registers is {K}")])
    slots: dict[int, int] = {}
    state = _SpillArea()

    def spill_addr() -> VReg:
        if state.addr is None:
            a = lf.new("r", "spill_addr")
            unspillable.add(a.id)
            tx, ty, tz, nx, ny = (lf.new("r") for _ in range(5))
            for t in (tx, ty, tz, nx, ny):
                unspillable.add(t.id)
            mul = LInst(rows.MUL_LO_U32, [a, tx, Imm(0)])
            add = LInst(rows.ADD_U32, [a, a, Imm(0)])
            entry = [
                LInst(rows.MOV_SREG, [tx, SpecialReg(SRegId.TID_X)]),
                LInst(rows.MOV_SREG, [ty, SpecialReg(SRegId.TID_Y)]),
                LInst(rows.MOV_SREG, [tz, SpecialReg(SRegId.TID_Z)]),
                LInst(rows.MOV_SREG, [nx, SpecialReg(SRegId.NTID_X)]),
                LInst(rows.MOV_SREG, [ny, SpecialReg(SRegId.NTID_Y)]),
                LInst(rows.MAD_LO_U32, [ty, tz, ny, ty]),
                LInst(rows.MAD_LO_U32, [tx, ty, nx, tx]),
                mul,
                add,
            ]
            lf.insts[0:0] = entry
            state.addr = a
            state.patch = (mul, add)
        return state.addr

    def spill_gprs(vs: list[VReg]) -> None:
        addr = spill_addr()
        for v in vs:
            if v.id not in slots:
                n = state.next
                if v.cls == "p" and n % 2:
                    n += 1
                slots[v.id] = n
                state.next = n + v.width
            off = 4 * slots[v.id]
            width = 8 if v.cls == "p" else 4
            ld, st = rows.load("local", width, False), rows.store("local", width)
            out: list[LInst] = []
            for ins in lf.insts:
                uses = any(u is v for u in ins.uses())
                defs = any(d is v for d in ins.defs())
                if not uses and not defs:
                    out.append(ins)
                    continue
                t = lf.new(v.cls)
                unspillable.add(t.id)
                if uses:
                    out.append(LInst(ld, [t, Address(addr, off)], None, ins.span))
                _replace(ins, v, t)
                out.append(ins)
                if defs:
                    out.append(LInst(st, [Address(addr, off), t], None, ins.span))
            lf.insts[:] = out

    gcolors = ClassAllocator(lf, ("r", "p", *VECTOR), K).run(spill_gprs, unspillable)
    for ins in lf.insts:
        for o in [*ins.operands, *([ins.guard[0]] if ins.guard else [])]:
            base = o.base if isinstance(o, Address) else o.reg if isinstance(o, Part) else o
            if isinstance(base, VReg):
                table = pcolors if base.cls == "q" else gcolors
                if base.id in table:
                    base.phys = table[base.id]
    # drop moves that coalescing made trivial
    lf.insts[:] = [i for i in lf.insts if not _trivial_move(i)]
    nslots = state.next
    spill_bytes = 0
    local = lf.local_bytes
    if state.patch is not None:
        stride = (4 * nslots + 7) // 8 * 8
        base = (lf.local_bytes + 7) // 8 * 8
        threads = lf.workgroup_size[0] * lf.workgroup_size[1] * lf.workgroup_size[2] if lf.workgroup_size else MAX_WG
        spill_bytes = stride * threads
        local = base + spill_bytes
        if local > MAX_LOCAL:
            hint = (
                ""
                if lf.workgroup_size
                else " (no workgroup size given: room is made for 1024 threads; pass workgroup=(x, y, z) to @wg.kernel)"
            )
            raise CompileError(
                [
                    Diagnostic(
                        f"kernel {lf.name!r} spills {nslots} registers per thread: {local} bytes of "
                        f"local memory exceed {MAX_LOCAL}{hint}"
                    )
                ]
            )
        mul, add = state.patch
        mul.operands[2] = Imm(stride)
        add.operands[2] = Imm(base)
    regs_used = 0
    preds_used = 0
    for ins in lf.insts:
        for o in [*ins.operands, *([ins.guard[0]] if ins.guard else [])]:
            base = o.base if isinstance(o, Address) else o.reg if isinstance(o, Part) else o
            if isinstance(base, VReg) and base.phys is not None:
                if base.cls == "q":
                    preds_used = max(preds_used, base.phys + 1)
                else:
                    regs_used = max(regs_used, base.phys + base.width)
    regs_used = max(regs_used, len(lf.params), 1)
    return Allocation(regs_used, preds_used, spill_bytes, len(slots) + len(pred_home), local)


def _trivial_move(ins: LInst) -> bool:
    """A copy whose source and destination got the same register (a vector part included)."""
    if ins.key == rows.MOVE["r"] and ins.guard is None and len(ins.operands) == 2:

        def phys(o: object) -> int | None:
            if isinstance(o, Part):
                return None if o.reg.phys is None else o.reg.phys + o.index
            return o.phys if isinstance(o, VReg) and o.cls == "r" else None

        d, s = phys(ins.operands[0]), phys(ins.operands[1])
        if d is not None and d == s:
            return True
    if not ins.is_move:
        return False
    a, b = ins.operands[0], ins.operands[1]
    return isinstance(a, VReg) and isinstance(b, VReg) and a.phys == b.phys


def _replace(ins: LInst, old: VReg, new: VReg) -> None:
    ops = []
    for o in ins.operands:
        if o is old:
            ops.append(new)
        elif isinstance(o, Address) and o.base is old:
            ops.append(Address(new, o.offset))
        else:
            ops.append(o)
    ins.operands = ops
    if ins.guard is not None and ins.guard[0] is old:
        ins.guard = (new, ins.guard[1])
