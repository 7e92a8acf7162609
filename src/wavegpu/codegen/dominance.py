"""Dominance over a graph given by its entry and a successor function (see `codegen.cfg`).

`idoms` returns a dict node -> immediate dominator for the nodes reachable from the entry, with
the entry mapped to None; unreachable nodes are absent. Every other function here takes that dict.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import TypeVar

from .cfg import rpo

N = TypeVar("N", bound=Hashable)


def idoms(entry: N, succs: Callable[[N], Sequence[N]]) -> dict[N, N | None]:
    """Immediate dominators (Cooper, Harvey and Kennedy's iterative algorithm over reverse
    postorder) of the nodes reachable from `entry`; `entry` maps to None."""
    order = rpo(entry, succs)
    index = {n: i for i, n in enumerate(order)}
    preds: dict[N, list[N]] = {n: [] for n in order}
    for n in order:
        for s in succs(n):
            if s in preds:
                preds[s].append(n)
    # while iterating, the entry is its own dominator (the intersection walk stops there)
    work: dict[N, N] = {entry: entry}
    changed = True
    while changed:
        changed = False
        for n in order[1:]:
            ps = [p for p in preds[n] if p in work]
            if not ps:
                continue
            new = ps[0]
            for p in ps[1:]:
                a, b = p, new
                while a != b:
                    while index[a] > index[b]:
                        a = work[a]
                    while index[b] > index[a]:
                        b = work[b]
                new = a
            if work.get(n) != new:
                work[n] = new
                changed = True
    idom: dict[N, N | None] = dict(work)
    idom[entry] = None
    return idom


def dominates(idom: Mapping[N, N | None], a: N, b: N) -> bool:
    """Whether `a` dominates `b` (every node dominates itself). A node absent from `idom`
    (unreachable) is dominated only by itself."""
    n: N | None = b
    while n is not None:
        if n == a:
            return True
        n = idom.get(n)
    return False


def dominator_tree(idom: Mapping[N, N | None]) -> dict[N, list[N]]:
    """Children of each node in the dominator tree, in the order of `idom`'s keys."""
    kids: dict[N, list[N]] = {n: [] for n in idom}
    for n, d in idom.items():
        if d is not None:
            kids[d].append(n)
    return kids


def frontiers(nodes: Iterable[N], preds: Mapping[N, Sequence[N]], idom: Mapping[N, N | None]) -> dict[N, set[N]]:
    """Dominance frontiers (Cooper, Harvey and Kennedy): for each of `nodes`, the join points
    where its dominance ends. `preds` gives each node's predecessors; predecessors that are
    unreachable (absent from `idom`) are ignored. Only join points (two or more reachable
    predecessors) are found, so the entry must have no predecessors: give a graph whose loops
    return to the entry a fresh entry node first."""
    order = list(nodes)
    df: dict[N, set[N]] = {b: set() for b in order}
    for b in order:
        ps = [p for p in preds.get(b, []) if p in idom]
        if len(ps) >= 2:
            for p in ps:
                runner: N | None = p
                while runner is not None and runner != idom[b]:
                    df[runner].add(b)
                    runner = idom[runner]
    return df


def postdominators(nodes: Iterable[N], succs: Callable[[N], Sequence[N]], exit: N) -> dict[N, N | None]:
    """Immediate postdominators: dominators of the reversed graph from `exit`. Give a single
    exit node (add a virtual one joined from every exiting node when there are several); nodes
    that cannot reach `exit` are absent from the result."""
    order = list(nodes)
    rev: dict[N, list[N]] = {n: [] for n in order}
    rev.setdefault(exit, [])
    for n in order:
        for s in succs(n):
            rev.setdefault(s, []).append(n)
    return idoms(exit, lambda n: rev.get(n, []))
