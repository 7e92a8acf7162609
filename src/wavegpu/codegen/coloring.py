"""Chaitin-Briggs graph colouring with conservative coalescing and spilling.

`color(graph, K)` assigns each node of an `InterferenceGraph` a first register in 0..K-1 such
that interfering nodes' register ranges [r, r + size) never overlap, every range lies inside
0..K-1 (and below the node's `limit`, if it has one), starts at a multiple of the node's
`align`, and pinned nodes get their pinned register.
Steps:

1. coalesce copies (`graph.moves`, in order) whose ends do not interfere and have the same size,
   alignment and limit: George's test when one end is pinned (every neighbour of the other end already
   interferes with it or has fewer than K neighbours, and none is pinned to the same register),
   Briggs's test otherwise (the merged node has fewer than K neighbours of degree >= K);
2. simplify optimistically: repeatedly remove a node that is surely colourable (its neighbours
   can block fewer of its aligned positions than exist), else the node with the lowest
   cost / (degree + 1) as a spill candidate, and push it;
3. select: pop nodes and give each the lowest aligned free range; a node with none is spilled.

When nodes spill, the caller rewrites the program (reloads and stores around each use and
definition, with unspillable temporaries of cost `INF`) and colours again. A spilled node whose
cost is `INF` means the program cannot be coloured in K registers at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from .interference import INF, InterferenceGraph


@dataclass
class Coloring:
    """The result of `color`.

    `colors` maps every coloured node (coalesced members included) to its first register;
    `spilled` lists the groups of nodes that got none: each group is a coalesced node's members
    in ascending order (a node that was not coalesced is a group of one). `rep[j]` is the node
    that j was coalesced into (j itself when it was not). The colouring is complete when
    `spilled` is empty."""

    colors: dict[int, int]
    spilled: list[list[int]]
    rep: list[int]

    @property
    def complete(self) -> bool:
        return not self.spilled


@cache
def positions(K: int, size: int, align: int) -> int:
    """How many aligned positions a node of `size` and `align` has among K registers."""
    return 0 if size > K else (K - size) // align + 1


@cache
def blocked(size: int, align: int, other_size: int, other_align: int) -> int:
    """The most aligned positions of a (size, align) node that one neighbour of (other_size,
    other_align) can overlap, wherever its aligned range lies."""
    period = align * other_align
    worst = 0
    for c in range(0, period, other_align):
        # positions r (multiples of align) with r < c + other_size and r + size > c
        lo, hi = c - size + 1, c + other_size - 1
        worst = max(worst, hi // align - (lo - 1) // align)
    return worst


def color(graph: InterferenceGraph, K: int) -> Coloring:
    """Colour `graph` with registers 0..K-1 (see the module docstring); `graph` is not modified.

    Pinned nodes keep their register as given: the caller makes sure that pinned nodes which
    interfere do not overlap (the compiler pins each parameter to its own register). A pinned
    range outside 0..K-1 is a ValueError."""
    for j, r in graph.pinned.items():
        if r < 0 or r + graph.size[j] > min(K, graph.limit.get(j, K)):
            raise ValueError(f"node {j} is pinned to {r}, outside the {K} registers or its limit")
    nr = len(graph)
    adj = [set(s) for s in graph.adj]
    cost = list(graph.cost)
    size, align = graph.size, graph.align
    pinned = graph.pinned
    top = [min(K, graph.limit.get(j, K)) for j in range(len(graph))]  # registers lie below top
    # ---- coalescing (conservative)
    parent = list(range(nr))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in graph.moves:
        ra, rb = find(a), find(b)
        if ra == rb or rb in adj[ra] or size[ra] != size[rb] or align[ra] != align[rb] or top[ra] != top[rb]:
            continue
        if ra in pinned and rb in pinned:
            continue
        if rb in pinned:
            ra, rb = rb, ra
        if ra in pinned:  # George
            ok = all(t in adj[ra] or len(adj[t]) < K for t in adj[rb])
            ok = ok and all(pinned.get(t) != pinned[ra] for t in adj[rb])
        else:  # Briggs
            nb = adj[ra] | adj[rb]
            ok = sum(1 for t in nb if len(adj[t]) >= K) < K
        if not ok:
            continue
        parent[rb] = ra
        for t in adj[rb]:
            adj[t].discard(rb)
            adj[t].add(ra)
            adj[ra].add(t)
        adj[rb] = set()
        cost[ra] = max(cost[ra], cost[rb]) if INF in (cost[ra], cost[rb]) else cost[ra] + cost[rb]
    roots = [j for j in range(nr) if find(j) == j]
    # ---- simplify (optimistic)
    active = {j for j in roots if j not in pinned}
    neighbours = {j: set(adj[j]) for j in roots}
    stack: list[int] = []

    def colorable(j: int) -> bool:
        nb = [t for t in neighbours[j] if t in active or t in pinned]
        if size[j] == 1 and align[j] == 1:
            return sum(size[t] for t in nb) < top[j]
        need = positions(top[j], size[j], align[j])
        return sum(blocked(size[j], align[j], size[t], align[t]) for t in nb) < need

    while active:
        pick = next((j for j in active if colorable(j)), None)
        if pick is None:
            pick = min(active, key=lambda j: (cost[j] / (len(neighbours[j]) + 1), -len(neighbours[j])))
        active.remove(pick)
        stack.append(pick)
    # ---- select
    colors: dict[int, int] = dict(pinned)
    spilled: list[int] = []
    while stack:
        j = stack.pop()
        taken: set[int] = set()
        for t in adj[j]:
            c = colors.get(t)
            if c is not None:
                taken.update(range(c, c + size[t]))
        choice = None
        for r in range(0, top[j] - size[j] + 1, align[j]):
            if all(r + k not in taken for k in range(size[j])):
                choice = r
                break
        if choice is None:
            spilled.append(j)
        else:
            colors[j] = choice
    rep = [find(j) for j in range(nr)]
    groups = [[m for m in range(nr) if rep[m] == j] for j in spilled]
    return Coloring({j: colors[rep[j]] for j in range(nr) if rep[j] in colors}, groups, rep)
