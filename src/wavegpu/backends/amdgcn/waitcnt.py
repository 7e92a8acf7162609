"""Waitcnt placement on the final, allocated instruction stream (a scoreboard of physical
registers, AMDGCN.md section 4.1 with the fixes of 4.5).

Two in-order counters: `vmcnt` (global loads, stores and atomics: gfx9 counts stores on vmcnt
too) and `lgkmcnt` (LDS `ds_*` and scalar `s_load*`). Every issued operation takes the next
score of its counter; a register written by a pending operation remembers its age (how many
operations of that counter were issued after it). An instruction that reads *or writes* such a
register (read-after-load and write-after-load) first waits with the counter at that age, which
guarantees the operation and every older one are done. Scalar loads may return out of order,
so while one is outstanding an LGKM wait is `lgkmcnt(0)`. `s_barrier` drains both counters (the
barrier publishes memory to the workgroup). The state at a block entry is the merge of its
predecessors' exit states (the larger pending count, the younger age of each register), iterated
to a fixed point over loop back edges.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .ir import MI, Neg, Phys, Special
from .isa import LDS, SMEM, VMEM
from .regalloc import BRANCHES

LIMIT = {"vm": 63, "lgkm": 15}


@dataclass
class State:
    pend: dict[str, int] = field(default_factory=lambda: {"vm": 0, "lgkm": 0})
    ages: dict[str, dict[tuple[str, int], int]] = field(default_factory=lambda: {"vm": {}, "lgkm": {}})
    smem: bool = False

    def copy(self) -> State:
        return State(dict(self.pend), {c: dict(a) for c, a in self.ages.items()}, self.smem)

    def merge(self, o: State) -> State:
        r = State()
        for c in ("vm", "lgkm"):
            r.pend[c] = max(self.pend[c], o.pend[c])
            keys = set(self.ages[c]) | set(o.ages[c])
            r.ages[c] = {k: min(self.ages[c].get(k, 1 << 30), o.ages[c].get(k, 1 << 30)) for k in keys}
        r.smem = self.smem or o.smem
        return r

    def __eq__(self, o: object) -> bool:
        return isinstance(o, State) and (self.pend, self.ages, self.smem) == (o.pend, o.ages, o.smem)


def counter(mi: MI) -> str | None:
    if mi.op in VMEM:
        return "vm"
    if mi.op in LDS or mi.op in SMEM:
        return "lgkm"
    return None


def units(o: object) -> list[tuple[str, int]]:
    if isinstance(o, Neg):
        o = o.o
    if isinstance(o, Phys):
        return list(o.units())
    if isinstance(o, Special) and o.name in ("vcc", "exec"):
        return list(o.units())
    return []


def _touched(mi: MI) -> set[tuple[str, int]]:
    out: set[tuple[str, int]] = set()
    for o in mi.ops:
        out.update(units(o))
    for o in (*mi.imp_uses, *mi.imp_defs):
        out.update(units(o))
    return out


def _need(st: State, mi: MI) -> dict[str, int]:
    need: dict[str, int] = {}
    if mi.op == "s_barrier":
        return {c: 0 for c in ("vm", "lgkm") if st.pend[c]}
    t = _touched(mi)
    for c in ("vm", "lgkm"):
        ages = [st.ages[c][u] for u in t if u in st.ages[c]]
        if ages:
            n = min(ages)
            if c == "lgkm" and st.smem:
                n = 0
            need[c] = min(n, LIMIT[c])
    return need


def _apply_wait(st: State, c: str, n: int) -> None:
    st.pend[c] = min(st.pend[c], n)
    st.ages[c] = {u: a for u, a in st.ages[c].items() if a < n}
    if c == "lgkm" and n == 0:
        st.smem = False


def _parse_wait(mi: MI) -> dict[str, int]:
    out = {}
    for part in mi.mods.split():
        name, _, rest = part.partition("(")
        if name == "vmcnt":
            out["vm"] = int(rest.rstrip(")"))
        elif name == "lgkmcnt":
            out["lgkm"] = int(rest.rstrip(")"))
    return out


def _step(st: State, mi: MI) -> None:
    if mi.op == "s_waitcnt":
        for c, n in _parse_wait(mi).items():
            _apply_wait(st, c, n)
        return
    c = counter(mi)
    defs = set()
    for o in mi.defs:
        defs.update(units(o))
    for o in mi.imp_defs:
        defs.update(units(o))
    for cc in ("vm", "lgkm"):
        for u in defs:
            st.ages[cc].pop(u, None)
    if c is None:
        return
    for u in list(st.ages[c]):
        st.ages[c][u] += 1
        if st.ages[c][u] > LIMIT[c]:
            del st.ages[c][u]
    st.pend[c] = min(st.pend[c] + 1, LIMIT[c] + 1)
    for u in defs:
        st.ages[c][u] = 0
    if mi.op in SMEM:
        st.smem = True


def _wait_text(need: dict[str, int]) -> str:
    return " ".join(f"{'vmcnt' if c == 'vm' else 'lgkmcnt'}({n})" for c, n in sorted(need.items(), reverse=True))


def blocks(mis: list[MI]) -> tuple[list[tuple[int, int]], dict[int, list[int]]]:
    """Basic blocks [start, end) and each block's predecessors (block indices)."""
    starts = {0}
    for i, mi in enumerate(mis):
        if mi.op == "LABEL":
            starts.add(i)
        if mi.op in BRANCHES or mi.op == "s_endpgm":
            starts.add(i + 1)
    order = sorted(s for s in starts if s < len(mis))
    bl = [(s, order[j + 1] if j + 1 < len(order) else len(mis)) for j, s in enumerate(order)]
    at = {s: j for j, (s, _) in enumerate(bl)}
    lab = {str(mis[s].ops[0]): j for j, (s, _) in enumerate(bl) if mis[s].op == "LABEL"}
    preds: dict[int, list[int]] = {j: [] for j in range(len(bl))}
    for j, (_s, e) in enumerate(bl):
        last = mis[e - 1]
        if last.op in BRANCHES:
            preds[lab[str(last.ops[0])]].append(j)
        if last.op not in ("s_branch", "s_endpgm") and e in at:
            preds[at[e]].append(j)
    return bl, preds


def insert_waits(mis: list[MI]) -> list[MI]:
    bl, preds = blocks(mis)
    entry: dict[int, State] = {0: State()}
    exit_: dict[int, State] = {}
    changed = True
    while changed:
        changed = False
        for j, (s, e) in enumerate(bl):
            ins = [exit_[p] for p in preds[j] if p in exit_]
            st = entry.get(0, State()).copy() if j == 0 else None
            for x in ins:
                st = x.copy() if st is None else st.merge(x)
            if st is None:
                continue
            entry[j] = st.copy()
            for mi in mis[s:e]:
                need = _need(st, mi)
                for c, n in need.items():
                    _apply_wait(st, c, n)
                _step(st, mi)
            if exit_.get(j) != st:
                exit_[j] = st
                changed = True
    out: list[MI] = []
    for j, (s, e) in enumerate(bl):
        st = entry.get(j, State()).copy()
        for mi in mis[s:e]:
            need = _need(st, mi)
            if need and mi.op != "s_waitcnt":
                out.append(MI("s_waitcnt", [], 0, _wait_text(need)))
                for c, n in need.items():
                    _apply_wait(st, c, n)
            _step(st, mi)
            out.append(mi)
    return out
