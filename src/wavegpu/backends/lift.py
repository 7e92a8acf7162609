"""Lift: a kernel's instruction list to a structured tree, the one input every renderer reads."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..isa.instruction import Instruction, Mem, Pred, Reg
from ..isa.structure import operand_registers
from ..isa.types import Role
from ..isa.vocabulary import Nest, Op
from ..wbin.program import Kernel


@dataclass
class Stmt:
    """A straight-line instruction (also break, continue and ret)."""

    inst: Instruction
    pc: int


@dataclass
class If:
    pred: int
    uniform: bool
    then: list[Node] = field(default_factory=list)
    other: list[Node] = field(default_factory=list)
    pc: int = 0


@dataclass
class Loop:
    body: list[Node] = field(default_factory=list)
    pc: int = 0


Node = Stmt | If | Loop


def lift(k: Kernel) -> list[Node]:
    """The kernel as nested if/else and loops (the .wbin reader already checked the nesting).

    Lifting and every renderer walk the tree with explicit stacks, never Python recursion, so
    any nesting depth the container holds translates."""
    root: list[Node] = []
    stack: list[tuple[If | Loop, list[Node]]] = []
    cur = root
    for pc, inst in enumerate(k.instructions):
        role = inst.spec.nest
        if role is Nest.OPEN_IF:
            p = inst.operands[0]
            assert isinstance(p, Pred)
            node = If(p.n, inst.spec.uniform, pc=pc)
            cur.append(node)
            stack.append((node, cur))
            cur = node.then
        elif role is Nest.ELSE:
            node = stack[-1][0]
            assert isinstance(node, If)
            cur = node.other
        elif role is Nest.CLOSE:
            _, cur = stack.pop()
        elif role is Nest.OPEN_LOOP:
            lp = Loop(pc=pc)
            cur.append(lp)
            stack.append((lp, cur))
            cur = lp.body
        else:
            cur.append(Stmt(inst, pc))
    assert not stack, "unbalanced structure (the .wbin reader rejects this)"
    return root


def walk(nodes: list[Node]) -> list[Stmt]:
    """Every instruction of a tree, in order (iterative: any nesting depth)."""
    out: list[Stmt] = []
    todo: list[Node] = list(reversed(nodes))
    while todo:
        n = todo.pop()
        if isinstance(n, Stmt):
            out.append(n)
        elif isinstance(n, If):
            todo.extend(reversed(n.then + n.other))
        else:
            todo.extend(reversed(n.body))
    return out


# ------------------------------------------------------------------ where the active set is needed
MASK_USERS = frozenset({Op.REDUCE, Op.BROADCAST, Op.SHUFFLE, Op.PREFIX, Op.BALLOT, Op.ANY, Op.ALL, Op.MMA})
"""The operations that read WAVE's active set: the wave operations (over the active lanes) and
mma (all 32 lanes must take part; the C dialects' exact form shuffles among them)."""


@dataclass(frozen=True)
class MaskPlan:
    """Which regions of a lifted kernel must keep WAVE's active set as an explicit mask.

    A region needs a mask when an operation in it, or in a region nested in it, reads the active
    set (MASK_USERS), because a nested region's mask is derived from its parent's. A loop whose
    body needs one must also learn which lanes left by break/continue, so every `if` between such
    a leave and its loop keeps a mask too (those are `escaping`: lanes may leave the loop from
    inside them). Every other region needs none: no operation in it can observe which lanes
    run, so renderers give it plain control flow. The needing set is closed upwards (an
    enclosing if/loop of a needing one needs one), so plain regions are whole subtrees."""

    root: bool  # the kernel reads the active set at all (the top-level region keeps a mask)
    tracked: frozenset[int]  # pc of each If/Loop whose regions keep a mask
    escaping: frozenset[int]  # pc of each tracked If from which a lane may leave an enclosing tracked loop

    def tracks(self, n: Node) -> bool:
        return not isinstance(n, Stmt) and n.pc in self.tracked

    def leaves(self, n: Node) -> bool:
        """n may take lanes out of the tracked loop around it (a break/continue, or an escaping if)."""
        if isinstance(n, Stmt):
            return n.inst.spec.nest in (Nest.BREAK, Nest.CONTINUE)
        return isinstance(n, If) and n.pc in self.escaping


def mask_plan(nodes: list[Node]) -> MaskPlan:
    """The MaskPlan of a lifted kernel (iterative: any nesting depth)."""
    tracked: set[int] = set()
    escaping: set[int] = set()
    leaves: list[tuple[If | Loop, ...]] = []  # the enclosing nodes of every break/continue
    users = False
    todo: list[tuple[Node, tuple[If | Loop, ...]]] = [(n, ()) for n in reversed(nodes)]
    while todo:
        n, path = todo.pop()
        if isinstance(n, Stmt):
            op = n.inst.spec.op
            if op in MASK_USERS:
                users = True
                tracked.update(p.pc for p in path)
            elif n.inst.spec.nest in (Nest.BREAK, Nest.CONTINUE):
                leaves.append(path)
            continue
        inner = (*path, n)
        kids = n.then + n.other if isinstance(n, If) else n.body
        todo.extend((c, inner) for c in reversed(kids))
    for path in leaves:
        at = max((i for i, p in enumerate(path) if isinstance(p, Loop)), default=-1)
        if at >= 0 and path[at].pc in tracked:
            between = [p.pc for p in path[at + 1 :]]
            tracked.update(between)
            escaping.update(between)
    return MaskPlan(users, frozenset(tracked), frozenset(escaping))


# ------------------------------------------------------------------ registers a kernel takes as inputs
def _reads_writes(inst: Instruction) -> tuple[set[int], set[int]]:
    """(registers inst reads, registers it surely writes). A sub-register write keeps the rest of
    the register (a read); a guarded instruction may not write at all."""
    reads: set[int] = set()
    writes: set[int] = set()
    for o, s in zip(inst.operands, inst.spec.operands):
        if s.role is Role.SRC or isinstance(o, Mem):
            reads.update(operand_registers(o))
        elif isinstance(o, Reg) and o.sel:
            reads.add(o.n)
        else:
            writes.update(operand_registers(o))
    return reads, (writes if inst.guard is None else set())


def preset_registers(nodes: list[Node]) -> frozenset[int]:
    """The registers some path of the kernel reads before writing them: the inputs of a kernel
    that declares no parameters (the flat dialect's kernels take their arguments as register
    presets r0, r1, ..., COMPAT.md). A write counts after an if only when both branches make it,
    and never after a loop (its body may stop before it); iterative, any nesting depth."""
    inputs: set[int] = set()
    written: set[int] = set()
    # work items: a node, or a step closing an if or a loop: (what, saved set)
    work: list[Node | tuple[str, set[int]]] = list(reversed(nodes))
    then_out: list[set[int]] = []  # the sets at the end of each open if's then branch
    while work:
        item = work.pop()
        if isinstance(item, Stmt):
            reads, writes = _reads_writes(item.inst)
            inputs.update(reads - written)
            written |= writes
        elif isinstance(item, If):
            work += [("endif", set()), *reversed(item.other), ("else", set(written)), *reversed(item.then)]
        elif isinstance(item, Loop):
            work += [("endloop", set(written)), *reversed(item.body)]
        elif item[0] == "else":  # the else branch starts from the sets before the if
            then_out.append(written)
            written = item[1]
        elif item[0] == "endif":  # surely written after the if: by both branches
            written = then_out.pop() & written
        else:  # after a loop: what was written before it
            written = item[1]
    return frozenset(inputs)


def preset_count(k: Kernel, nodes: list[Node]) -> int:
    """How many register presets a kernel takes: its parameters when it declares them, else one
    past the highest register it reads before writing (0 when none)."""
    if k.params:
        return len(k.params)
    regs = preset_registers(nodes)
    return max(regs) + 1 if regs else 0
