"""Natural loops and loop depth over a graph given as nodes, successors and predecessors.

A back edge is an edge b -> h whose target h dominates its source b; the natural loop of header
h is h plus every node that reaches a back edge's source without passing through h. Loops that
share a header are merged (one loop per header).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from .dominance import dominates

N = TypeVar("N", bound=Hashable)


@dataclass(eq=False)
class Loop(Generic[N]):
    """One natural loop: its header, its nodes (the header included), the enclosing loop, the
    loops directly inside it, and its exits (nodes outside the loop that a node inside reaches in
    one edge). `blocks` and `exits` may be edited by a client that reshapes loops (the
    compiler's structuriser widens loops by their break paths)."""

    header: N
    blocks: set[N]
    parent: Loop[N] | None = None
    children: list[Loop[N]] = field(default_factory=list)
    exits: set[N] = field(default_factory=set)

    @property
    def depth(self) -> int:
        """1 for an outermost loop, 2 for a loop inside it, ..."""
        d, p = 1, self.parent
        while p is not None:
            d, p = d + 1, p.parent
        return d


def natural_loops(
    nodes: Iterable[N],
    succs: Callable[[N], Sequence[N]],
    preds: Mapping[N, Sequence[N]],
    idom: Mapping[N, N | None],
) -> list[Loop[N]]:
    """The natural loops, one per header, outermost first (sorted by size, largest first; equal
    sizes keep the order their headers' back edges are met walking `nodes`). Each loop's `parent`
    is the smallest enclosing loop, and `children` lists the loops directly inside. Unreachable
    nodes (absent from `idom`) take no part."""
    order = list(nodes)
    by_header: dict[N, Loop[N]] = {}
    for b in order:
        for s in succs(b):
            if b in idom and dominates(idom, s, b):  # back edge b -> s
                body = {s}
                work = [b]
                while work:
                    x = work.pop()
                    if x not in body:
                        body.add(x)
                        work.extend(p for p in preds.get(x, []) if p in idom)
                lp = by_header.setdefault(s, Loop(s, set()))
                lp.blocks |= body
    ls = sorted(by_header.values(), key=lambda lp: len(lp.blocks), reverse=True)
    for i, lp in enumerate(ls):
        for outer in reversed(ls[:i]):
            if lp.header in outer.blocks and lp is not outer:
                lp.parent = outer
                outer.children.append(lp)
                break
        lp.exits = {s for b in lp.blocks for s in succs(b) if s not in lp.blocks}
    return ls


def loop_depths(nodes: Iterable[N], loops: Iterable[Loop[N]]) -> dict[N, int]:
    """How many loops contain each node (0 outside every loop)."""
    depth = {b: 0 for b in nodes}
    for lp in loops:
        for b in lp.blocks:
            depth[b] = max(depth.get(b, 0), lp.depth)
    return depth
