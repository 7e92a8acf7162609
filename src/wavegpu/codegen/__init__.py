"""Target-neutral code generation analyses shared by the compiler and the backends.

This floor sits below both `compiler/` and `backends/` (it imports only `errors` and `isa`), so a
backend that allocates its own registers (AMDGCN) reuses the compiler's analyses instead of
writing a second copy. Nothing here knows MIR, LIR or any backend's IR: every function takes
plain data (hashable nodes and a successor function, or integer indices and bitsets) and the
caller adapts its own IR.

- `cfg`: reverse postorder, predecessors, reachability over any graph given as `succs(node)`.
- `dominance`: immediate dominators (Cooper-Harvey-Kennedy), `dominates`, dominance frontiers,
  the dominator tree, postdominators (dominators of the reversed graph).
- `loops`: natural loops (one per header, nested) and per-node loop depth.
- `liveness`: backward dataflow liveness, per block over sets or per instruction over bitsets,
  and the per-instruction refinement inside one block.
- `interference`: an interference graph with per-node size, alignment, spill cost and pinned
  register, and a builder from per-instruction live-out bitsets.
- `canonical`: where float results must be canonical NaNs (their bits observed), per WAVE
  instruction: the plan PTX, the C-style dialects and AMDGCN follow.
- `coloring`: Chaitin-Briggs colouring with conservative coalescing (Briggs and George),
  optimistic simplification, spill choice by cost/degree and aligned multi-register tuples.

The modules' docstrings say what each function expects and returns.
"""

from __future__ import annotations

from .cfg import predecessors, reachable, rpo
from .coloring import Coloring, color
from .dominance import dominates, dominator_tree, frontiers, idoms, postdominators
from .interference import InterferenceGraph, build_interference
from .liveness import (
    BlockLiveness,
    Numbering,
    block_liveness,
    block_use_def,
    instruction_liveness,
    liveness_within_block,
)
from .loops import Loop, loop_depths, natural_loops

__all__ = [
    "BlockLiveness",
    "Coloring",
    "InterferenceGraph",
    "Loop",
    "Numbering",
    "block_liveness",
    "block_use_def",
    "build_interference",
    "color",
    "dominates",
    "dominator_tree",
    "frontiers",
    "idoms",
    "instruction_liveness",
    "liveness_within_block",
    "loop_depths",
    "natural_loops",
    "postdominators",
    "predecessors",
    "reachable",
    "rpo",
]
