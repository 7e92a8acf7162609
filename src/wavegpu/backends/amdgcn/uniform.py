"""Uniformity analysis: which WAVE registers and predicates may live in SGPRs.

A value is uniform when every active lane of a wave holds the same bits. Kernel arguments,
workgroup ids and sizes, the wave index, constants, wave reductions, votes and broadcasts are
uniform; thread and lane ids, vector memory loads, atomics and shuffles are not. An instruction
defines a divergent register when any of its sources (or its guard) is divergent, or when it runs
in divergent control flow: inside an `if` on a divergent predicate, or inside a loop that some
lane may leave at a different iteration (a `break`/`continue` on a divergent predicate or under
divergent control flow within that loop). A value defined in such a region differs between
lanes even if its computation is uniform, so it must be a VGPR.

The analysis is an optimistic fixed point: everything starts uniform and divergence only grows.
`if.uniform` regions are treated as uniform control flow (a divergent `@uniform` branch is
undefined behaviour in WAVE; the selector branches on "any active lane").
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...isa.instruction import Instruction, Pred, Reg, SReg
from ...isa.registers import SRegId as SR
from ...isa.structure import operand_registers
from ...isa.types import Role
from ...isa.vocabulary import Nest, Op, Space
from ..lift import If, Loop, Node, Stmt

UNIFORM_SREGS = frozenset(
    {
        SR.WID,
        SR.CTAID_X,
        SR.CTAID_Y,
        SR.CTAID_Z,
        SR.NTID_X,
        SR.NTID_Y,
        SR.NTID_Z,
        SR.NCTAID_X,
        SR.NCTAID_Y,
        SR.NCTAID_Z,
        SR.NWAVES,
        SR.WAVE_WIDTH,
    }
)
# Operations whose result is the same in every active lane whatever their sources (a broadcast:
# when its lane operand is uniform).
UNIFORM_RESULT = frozenset({Op.REDUCE, Op.BALLOT, Op.ANY, Op.ALL, Op.BROADCAST})
# Operations whose result differs per lane whatever their sources (vector memory, lane exchange).
DIVERGENT_RESULT = frozenset({Op.ATOM, Op.RED, Op.SHUFFLE, Op.PREFIX, Op.MMA})


@dataclass
class Uniformity:
    regs: set[int] = field(default_factory=set)  # divergent WAVE registers
    preds: set[int] = field(default_factory=set)  # divergent predicates
    div_ifs: set[int] = field(default_factory=set)  # pcs of ifs that branch divergently
    div_loops: set[int] = field(default_factory=set)  # pcs of loops some lane may leave early

    def reg_uniform(self, n: int) -> bool:
        return n not in self.regs

    def pred_uniform(self, n: int) -> bool:
        return n not in self.preds


def _registers(inst: Instruction, role: Role) -> tuple[list[int], list[int]]:
    """(general registers, predicates) the operands of this role name; a source's include the
    guard and a memory operand's base."""
    regs: list[int] = []
    preds: list[int] = []
    for spec, o in zip(inst.spec.operands, inst.operands, strict=False):
        if spec.role is not role:
            continue
        if isinstance(o, Pred):
            preds.append(o.n)
        else:
            regs += operand_registers(o)
    if role is Role.SRC and inst.guard is not None:
        preds.append(inst.guard.pred)
    return regs, preds


def _inherently_divergent(inst: Instruction) -> bool:
    op = inst.spec.op
    if op in DIVERGENT_RESULT:
        return True
    if op is Op.LD:
        return inst.spec.space is not Space.CONST or inst.spec.width < 4
    if op is Op.MOV:
        for o in inst.operands:
            if isinstance(o, SReg):
                return o.id not in UNIFORM_SREGS
    return False


def analyse(tree: list[Node]) -> Uniformity:
    u = Uniformity()
    changed = True
    while changed:
        changed = False
        # (nodes, divergent context, innermost loop pc)
        todo: list[tuple[list[Node], bool, int | None]] = [(tree, False, None)]
        while todo:
            nodes, div, loop = todo.pop()
            for n in nodes:
                if isinstance(n, Stmt):
                    inst = n.inst
                    sregs, spreds = _registers(inst, Role.SRC)
                    src_div = any(r in u.regs for r in sregs) or any(p in u.preds for p in spreds)
                    if inst.spec.nest in (Nest.BREAK, Nest.CONTINUE) and loop is not None:
                        if (div or src_div) and loop not in u.div_loops:
                            u.div_loops.add(loop)
                            changed = True
                        continue
                    if inst.spec.op in UNIFORM_RESULT:
                        d = div or (inst.guard is not None and inst.guard.pred in u.preds)
                        if inst.spec.op is Op.BROADCAST:  # each lane names its source lane
                            lane = inst.operands[2]
                            d = d or (isinstance(lane, Reg) and lane.n in u.regs)
                    else:
                        d = div or src_div or _inherently_divergent(inst)
                    if d:
                        dregs, dpreds = _registers(inst, Role.DST)
                        for r in dregs:
                            if r not in u.regs:
                                u.regs.add(r)
                                changed = True
                        for p in dpreds:
                            if p not in u.preds:
                                u.preds.add(p)
                                changed = True
                elif isinstance(n, If):
                    d = div or (not n.uniform and n.pred in u.preds)
                    if d and not div and n.pc not in u.div_ifs:
                        u.div_ifs.add(n.pc)
                        changed = True
                    todo.append((n.then, d, loop))
                    todo.append((n.other, d, loop))
                else:
                    assert isinstance(n, Loop)
                    d = div or n.pc in u.div_loops
                    todo.append((n.body, d, n.pc))
    return u
