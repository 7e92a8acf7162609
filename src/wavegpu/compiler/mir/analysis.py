"""CFG analyses: reverse postorder, dominators, dominance frontiers, natural loops, postdominators."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import TypeVar

from .ir import Block, Function

N = TypeVar("N", bound=Hashable)


def rpo(entry: N, succs: Callable[[N], list[N]]) -> list[N]:
    seen: set[N] = set()
    out: list[N] = []
    stack: list[tuple[N, int]] = [(entry, 0)]
    seen.add(entry)
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


def idoms(entry: N, succs: Callable[[N], list[N]]) -> dict[N, N | None]:
    """Immediate dominators (Cooper, Harvey, Kennedy) of the nodes reachable from entry."""
    order = rpo(entry, succs)
    index = {n: i for i, n in enumerate(order)}
    preds: dict[N, list[N]] = {n: [] for n in order}
    for n in order:
        for s in succs(n):
            if s in preds:
                preds[s].append(n)
    idom: dict[N, N | None] = {entry: entry}
    changed = True
    while changed:
        changed = False
        for n in order[1:]:
            ps = [p for p in preds[n] if p in idom]
            if not ps:
                continue
            new = ps[0]
            for p in ps[1:]:
                a, b = p, new
                while a != b:
                    while index[a] > index[b]:
                        a = idom[a]  # type: ignore[assignment]
                    while index[b] > index[a]:
                        b = idom[b]  # type: ignore[assignment]
                new = a
            if idom.get(n) != new:
                idom[n] = new
                changed = True
    idom[entry] = None
    return idom


def dominates(idom: dict[N, N | None], a: N, b: N) -> bool:
    n: N | None = b
    while n is not None:
        if n == a:
            return True
        n = idom.get(n)
    return False


def frontiers(fn: Function, idom: dict[Block, Block | None]) -> dict[Block, set[Block]]:
    df: dict[Block, set[Block]] = {b: set() for b in fn.blocks}
    preds = fn.preds()
    for b in fn.blocks:
        ps = [p for p in preds.get(b, []) if p in idom]
        if len(ps) >= 2:
            for p in ps:
                runner: Block | None = p
                while runner is not None and runner is not idom[b]:
                    df[runner].add(b)
                    runner = idom[runner]
    return df


@dataclass(eq=False)
class Loop:
    header: Block
    blocks: set[Block]
    parent: Loop | None = None
    children: list[Loop] = field(default_factory=list)
    exits: set[Block] = field(default_factory=set)  # blocks outside the loop reached from inside

    @property
    def depth(self) -> int:
        d, p = 1, self.parent
        while p is not None:
            d, p = d + 1, p.parent
        return d


def loops(fn: Function, idom: dict[Block, Block | None] | None = None) -> list[Loop]:
    """Natural loops (one per header), nested; outermost first."""
    idom = idom or idoms(fn.entry, lambda b: b.succs)
    preds = fn.preds()
    by_header: dict[Block, Loop] = {}
    for b in fn.blocks:
        for s in b.succs:
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
        lp.exits = {s for b in lp.blocks for s in b.succs if s not in lp.blocks}
    return ls


def loop_depths(fn: Function) -> dict[Block, int]:
    depth = {b: 0 for b in fn.blocks}
    for lp in loops(fn):
        for b in lp.blocks:
            depth[b] = max(depth[b], lp.depth)
    return depth
