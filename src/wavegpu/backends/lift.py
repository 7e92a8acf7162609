"""Lift: a kernel's instruction list to a structured tree, the one input every renderer reads."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..isa.instruction import Instruction, Pred
from ..isa.vocabulary import Nest
from ..wbin.program import Kernel


@dataclass
class Op:
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


Node = Op | If | Loop


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
            cur.append(Op(inst, pc))
    assert not stack, "unbalanced structure (the .wbin reader rejects this)"
    return root


def walk(nodes: list[Node]) -> list[Op]:
    """Every instruction of a tree, in order (iterative: any nesting depth)."""
    out: list[Op] = []
    todo: list[Node] = list(reversed(nodes))
    while todo:
        n = todo.pop()
        if isinstance(n, Op):
            out.append(n)
        elif isinstance(n, If):
            todo.extend(reversed(n.then + n.other))
        else:
            todo.extend(reversed(n.body))
    return out
