"""Liveness: which variables may be read later, by backward dataflow to a fixpoint.

A variable is live at a point when some path from that point reads it before writing it. Two
granularities:

- `instruction_liveness`: every instruction is a node (successors as index lists), variables are
  bits of Python ints (use `Numbering` to give each variable a bit). This is what the compiler's
  register allocator runs on structured LIR.
- `block_liveness`: basic blocks as nodes with per-block upward-exposed uses and definitions as
  sets (`block_use_def` computes them from per-instruction defs and uses), then
  `liveness_within_block` walks one block backwards for per-instruction live sets.

Both give live-in (before the node) and live-out (after it); live-out is the union of the
successors' live-in, live-in is uses | (live-out - defs).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

N = TypeVar("N", bound=Hashable)
V = TypeVar("V", bound=Hashable)


class Numbering(Generic[V]):
    """Consecutive bit indices for variables, in first-seen order: `index(v)` gives (and on first
    sight assigns) v's bit; `items[i]` is the variable of bit i; `mask(vs)` and `members(mask)`
    convert between variables and bitsets."""

    def __init__(self) -> None:
        self.items: list[V] = []
        self.of: dict[V, int] = {}

    def index(self, v: V) -> int:
        i = self.of.get(v)
        if i is None:
            i = self.of[v] = len(self.items)
            self.items.append(v)
        return i

    def mask(self, vs: Iterable[V]) -> int:
        m = 0
        for v in vs:
            m |= 1 << self.index(v)
        return m

    def members(self, mask: int) -> list[V]:
        return [self.items[i] for i in bits(mask)]

    def __len__(self) -> int:
        return len(self.items)


def bits(mask: int) -> list[int]:
    """The indices of the set bits of `mask`, ascending."""
    out = []
    i = 0
    while mask:
        if mask & 1:
            out.append(i)
        mask >>= 1
        i += 1
    return out


def instruction_liveness(
    succs: Sequence[Sequence[int]], defs: Sequence[int], uses: Sequence[int]
) -> tuple[list[int], list[int]]:
    """Per-instruction live-in and live-out bitsets.

    `succs[i]` lists the indices of instruction i's successors (the next instruction, branch
    targets; none after a return), `defs[i]` and `uses[i]` are bitsets of the variables it
    writes and reads. Sweeps backwards (from the last instruction to the first) until nothing
    changes, which converges fast when most edges point forward. Returns (live_in, live_out)."""
    n = len(succs)
    live_in = [0] * n
    live_out = [0] * n
    changed = True
    while changed:
        changed = False
        for i in range(n - 1, -1, -1):
            out = 0
            for s in succs[i]:
                out |= live_in[s]
            inn = uses[i] | (out & ~defs[i])
            if out != live_out[i] or inn != live_in[i]:
                live_out[i], live_in[i] = out, inn
                changed = True
    return live_in, live_out


@dataclass
class BlockLiveness(Generic[N, V]):
    """Live variables at each block's entry and exit."""

    live_in: dict[N, frozenset[V]]
    live_out: dict[N, frozenset[V]]


def block_use_def(steps: Iterable[tuple[Iterable[V], Iterable[V]]]) -> tuple[set[V], set[V]]:
    """A block's (upward-exposed uses, definitions) from its instructions' (defs, uses) in order:
    a use counts only when no earlier instruction of the block defines the variable."""
    used: set[V] = set()
    defined: set[V] = set()
    for d, u in steps:
        used.update(x for x in u if x not in defined)
        defined.update(d)
    return used, defined


def block_liveness(
    blocks: Sequence[N],
    succs: Callable[[N], Sequence[N]],
    uses: Mapping[N, Iterable[V]],
    defs: Mapping[N, Iterable[V]],
) -> BlockLiveness[N, V]:
    """Live-in and live-out of every block by a worklist to the fixpoint.

    `uses[b]` are b's upward-exposed uses (read before any write in b), `defs[b]` the variables b
    writes (see `block_use_def`); successors outside `blocks` are ignored. Listing `blocks` in
    reverse postorder makes the (reversed) sweep fast; any order gives the same answer."""
    ue = {b: frozenset(uses.get(b, ())) for b in blocks}
    kill = {b: frozenset(defs.get(b, ())) for b in blocks}
    inside = set(blocks)
    preds: dict[N, list[N]] = {b: [] for b in blocks}
    for b in blocks:
        for s in succs(b):
            if s in inside:
                preds[s].append(b)
    live_in: dict[N, frozenset[V]] = {b: ue[b] for b in blocks}
    live_out: dict[N, frozenset[V]] = {b: frozenset() for b in blocks}
    work = list(blocks)
    queued = set(blocks)
    while work:
        b = work.pop()
        queued.discard(b)
        out = frozenset().union(*(live_in[s] for s in succs(b) if s in inside))
        live_out[b] = out
        inn = ue[b] | (out - kill[b])
        if inn != live_in[b]:
            live_in[b] = inn
            for p in preds[b]:
                if p not in queued:
                    queued.add(p)
                    work.append(p)
    return BlockLiveness(live_in, live_out)


def liveness_within_block(
    live_out: Iterable[V], steps: Sequence[tuple[Iterable[V], Iterable[V]]]
) -> tuple[list[frozenset[V]], list[frozenset[V]]]:
    """Per-instruction (live_in, live_out) inside one block, from the block's live-out and its
    instructions' (defs, uses) in order, walking backwards."""
    n = len(steps)
    ins: list[frozenset[V]] = [frozenset()] * n
    outs: list[frozenset[V]] = [frozenset()] * n
    live = frozenset(live_out)
    for i in range(n - 1, -1, -1):
        d, u = steps[i]
        outs[i] = live
        live = frozenset(u) | (live - frozenset(d))
        ins[i] = live
    return ins, outs
