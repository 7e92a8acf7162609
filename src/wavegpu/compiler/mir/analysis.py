"""MIR's view of the CFG analyses in `codegen/`: the generic functions applied to a Function's
blocks (successors from each block's terminator, predecessors from `Function.preds`).

`rpo`, `idoms`, `dominates` and `dominator_tree` are codegen's own (they take an entry and a successor function);
`frontiers`, `loops` and `loop_depths` take a MIR Function.
"""

from __future__ import annotations

from ...codegen import cfg, dominance
from ...codegen import loops as codegen_loops
from .ir import Block, Function

rpo = cfg.rpo
idoms = dominance.idoms
dominates = dominance.dominates
dominator_tree = dominance.dominator_tree

Loop = codegen_loops.Loop  # a MIR loop is a Loop[Block]


def block_idoms(fn: Function) -> dict[Block, Block | None]:
    """Immediate dominators of fn's reachable blocks (the entry maps to None)."""
    return dominance.idoms(fn.entry, lambda b: b.succs)


def frontiers(fn: Function, idom: dict[Block, Block | None]) -> dict[Block, set[Block]]:
    """Dominance frontier of every block of fn."""
    return dominance.frontiers(fn.blocks, fn.preds(), idom)


def loops(fn: Function, idom: dict[Block, Block | None] | None = None) -> list[Loop[Block]]:
    """Natural loops (one per header), nested; outermost first."""
    return codegen_loops.natural_loops(fn.blocks, lambda b: b.succs, fn.preds(), idom or block_idoms(fn))


def loop_depths(fn: Function) -> dict[Block, int]:
    """How many loops contain each block."""
    return codegen_loops.loop_depths(fn.blocks, loops(fn))
