"""Interference graphs for register allocation, with multi-register nodes.

Nodes are the integers 0..n-1 (number the allocator's virtual registers with
`liveness.Numbering`). Each node has a `size` (how many consecutive registers it occupies: 1 for a
32-bit value, 2 for a 64-bit pair, 3 or 4 for a VGPR tuple), an `align` (its first register must
be a multiple of it), a spill `cost` (`INF` for a node that must not spill, such as a reload
temporary), optionally a `pinned` register it must take (a parameter's fixed register) and
optionally a `limit`: its registers must all lie below it (a register class narrower than the
file, such as operands an encoding can only name below some number).
Interference edges are symmetric; `moves` are copy pairs the colourer tries to coalesce.
"""

from __future__ import annotations

from collections.abc import Sequence

INF = float("inf")


class InterferenceGraph:
    """The graph the colourer (`codegen.coloring.color`) reads; it does not modify it."""

    def __init__(self) -> None:
        self.adj: list[set[int]] = []
        self.size: list[int] = []
        self.align: list[int] = []
        self.cost: list[float] = []
        self.pinned: dict[int, int] = {}
        self.limit: dict[int, int] = {}
        self.moves: list[tuple[int, int]] = []

    def __len__(self) -> int:
        return len(self.adj)

    def add_node(
        self, size: int = 1, align: int = 1, cost: float = 0.0, pinned: int | None = None, limit: int | None = None
    ) -> int:
        """A new node; returns its number (nodes are numbered from 0 in order of addition)."""
        if size < 1 or align < 1:
            raise ValueError(f"a node needs size >= 1 and align >= 1, not size={size} align={align}")
        if pinned is not None and pinned % align:
            raise ValueError(f"pinned register {pinned} is not a multiple of the alignment {align}")
        if limit is not None and limit < size:
            raise ValueError(f"a node of {size} registers cannot lie below {limit}")
        self.adj.append(set())
        self.size.append(size)
        self.align.append(align)
        self.cost.append(cost)
        j = len(self.adj) - 1
        if pinned is not None:
            self.pinned[j] = pinned
        if limit is not None:
            self.limit[j] = limit
        return j

    def add_edge(self, a: int, b: int) -> None:
        """a and b are live at once: they may not share a register (a self-edge is ignored)."""
        if a != b:
            self.adj[a].add(b)
            self.adj[b].add(a)

    def add_move(self, dst: int, src: int) -> None:
        """A copy dst <- src: giving both one register would delete it."""
        self.moves.append((dst, src))

    def interferes(self, a: int, b: int) -> bool:
        return b in self.adj[a]


def build_interference(
    graph: InterferenceGraph,
    live_out: Sequence[int],
    defs: Sequence[Sequence[int]],
    moves: Sequence[tuple[int, int] | None] | None = None,
) -> None:
    """Add the edges of a program to `graph` (whose nodes must already exist).

    Per instruction i: `live_out[i]` is the bitset of nodes live after it
    (`liveness.instruction_liveness`, or a block walk), `defs[i]` the nodes it writes, `moves[i]`
    (dst, src) when it is a plain copy between two nodes of this graph. Each definition interferes
    with everything live after the instruction except itself and, for a copy, the copy's source
    (Chaitin's rule, so that copies can be coalesced); the definitions of one instruction
    interfere with each other. Copies are recorded with `add_move` in instruction order."""
    for i, live in enumerate(live_out):
        src = None
        mv = moves[i] if moves is not None else None
        if mv is not None:
            src = mv[1]
            graph.add_move(*mv)
        d = defs[i]
        for a in d:
            bits = live
            j = 0
            while bits:
                if bits & 1 and j != a and j != src:
                    graph.add_edge(a, j)
                bits >>= 1
                j += 1
        if len(d) > 1:
            for x in d:
                for y in d:
                    graph.add_edge(x, y)
