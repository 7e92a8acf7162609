"""Control-flow graphs as plain data: any hashable node and a successor function.

A graph is given by its entry node and `succs(node) -> Sequence[node]`; nodes may be IR blocks
(hashable by identity), integers (instruction indices) or anything else hashable. Successor order
matters only where documented (reverse postorder visits successors in the order given).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import TypeVar

N = TypeVar("N", bound=Hashable)

Succs = Callable[[N], Sequence[N]]


def rpo(entry: N, succs: Callable[[N], Sequence[N]]) -> list[N]:
    """Reverse postorder of the nodes reachable from `entry` (iterative depth-first search that
    takes successors in the order `succs` gives them). The entry comes first; in an acyclic graph
    every node comes before its successors; a loop's header comes before its body."""
    seen: set[N] = {entry}
    out: list[N] = []
    stack: list[tuple[N, int]] = [(entry, 0)]
    while stack:
        n, i = stack[-1]
        ss = succs(n)
        if i < len(ss):
            stack[-1] = (n, i + 1)
            s = ss[i]
            if s not in seen:
                seen.add(s)
                stack.append((s, 0))
        else:
            stack.pop()
            out.append(n)
    out.reverse()
    return out


def reachable(entry: N, succs: Callable[[N], Sequence[N]]) -> set[N]:
    """The nodes reachable from `entry`, `entry` included."""
    return set(rpo(entry, succs))


def predecessors(nodes: Iterable[N], succs: Callable[[N], Sequence[N]]) -> dict[N, list[N]]:
    """Each node's predecessors among `nodes`, in the order of `nodes` (a node listed twice as a
    successor of the same predecessor counts once per listing). Every node of `nodes` is a key;
    a successor outside `nodes` also becomes a key with the predecessors that name it."""
    order = list(nodes)
    out: dict[N, list[N]] = {n: [] for n in order}
    for n in order:
        for s in succs(n):
            out.setdefault(s, []).append(n)
    return out
