"""Webs: a WAVE register reused for unrelated values becomes one register per value.

The `.wbin`'s allocator reuses registers freely: `r3` may hold the kernel argument `n` at entry
and, later, a word loaded from local memory. Uniformity (`uniform.py`) is decided per register,
so one divergent use would make every value that register ever holds a VGPR (and everything
computed from it: the K loop of examples/sgemm_8x8 became a divergent loop steered through EXEC
because its bound was copied out of `r3`). This step renames registers by webs first: the
definitions that reach a common read (reaching definitions over the structured kernel's
control flow, `isa.structure.successors`, which is each lane's own path) form one web, and each
web gets its own register number. A write that keeps part of the old value (a sub-register
write, a guarded instruction) joins the web of the value it keeps.

Pairs and vectors name consecutive registers: the webs an operand names together are renamed
by one common shift (even, so pairs stay even-aligned), so the operand stays consecutive. The
webs that hold a register's value at entry (the register presets: parameters, or the registers
read before written, which start at zero) keep their numbers, with everything shifted with them;
every other group of webs gets a fresh range above the kernel's registers. The renamed kernel
computes exactly what the original does: every read sees the same definitions it saw.
"""

from __future__ import annotations

from dataclasses import replace

from ...isa.instruction import Instruction, Mem, Pair, Reg, Vec
from ...isa.structure import successors
from ...isa.types import Role
from ...wbin.program import Kernel


class _Union:
    def __init__(self) -> None:
        self.parent: list[int] = []

    def add(self) -> int:
        self.parent.append(len(self.parent))
        return len(self.parent) - 1

    def find(self, x: int) -> int:
        p = self.parent
        while p[x] != x:
            p[x] = p[p[x]]
            x = p[x]
        return x

    def union(self, a: int, b: int) -> None:
        a, b = self.find(a), self.find(b)
        if a != b:
            self.parent[max(a, b)] = min(a, b)


def _slots(inst: Instruction) -> list[tuple[int, object, list[int], bool, bool]]:
    """(operand index, operand, registers, written?, keeps old bits?) of each register operand."""
    out = []
    guarded = inst.guard is not None
    for n, (o, s) in enumerate(zip(inst.operands, inst.spec.operands)):
        if isinstance(o, Mem):
            if o.base is not None:
                out.append((n, o, [o.base], False, False))
        elif isinstance(o, Reg):
            write = s.role is Role.DST
            out.append((n, o, [o.n], write, write and (guarded or o.sel != 0)))
        elif isinstance(o, Pair):
            write = s.role is Role.DST
            out.append((n, o, [o.n, o.n + 1], write, write and guarded))
        elif isinstance(o, Vec):
            write = s.role is Role.DST
            out.append((n, o, list(range(o.n, o.n + o.count)), write, write and guarded))
    return out


def split(k: Kernel) -> Kernel:
    """`k` with its registers renamed by webs (the same kernel when nothing splits)."""
    insts = k.instructions
    if not insts:
        return k
    nregs = 0
    slots = [_slots(i) for i in insts]
    for ss in slots:
        for *_, regs, _w, _k in ss:
            nregs = max(nregs, max(regs) + 1)
    # definition sites: one entry definition per register, then one per (instruction, register)
    uf = _Union()
    entry = [uf.add() for _ in range(nregs)]
    site: dict[tuple[int, int], int] = {}
    of_reg: list[int] = [1 << entry[r] for r in range(nregs)]  # bit mask of each register's sites
    for i, ss in enumerate(slots):
        for *_, regs, write, _keep in ss:
            if write:
                for r in regs:
                    if (i, r) not in site:
                        site[i, r] = uf.add()
                        of_reg[r] |= 1 << site[i, r]
    gen: list[int] = []
    kill: list[int] = []
    for i, ss in enumerate(slots):
        g = kl = 0
        for *_, regs, write, keep in ss:
            if write:
                for r in regs:
                    g |= 1 << site[i, r]
                    if not keep:
                        kl |= of_reg[r]
        gen.append(g)
        kill.append(kl & ~g)
    # reaching definitions (a forward may-analysis to a fixed point)
    succ = successors(insts)
    n = len(insts)
    into = [0] * n
    into[0] = sum(1 << e for e in entry)
    work = list(range(n))
    queued = [True] * n
    while work:
        i = work.pop()
        queued[i] = False
        out = (into[i] & ~kill[i]) | gen[i]
        for j in succ[i]:
            if out & ~into[j]:
                into[j] |= out
                if not queued[j]:
                    queued[j] = True
                    work.append(j)
    # webs: the definitions reaching one read, and a keeping write with what it keeps
    reads: dict[tuple[int, int], int] = {}  # (instruction, register) -> a site of its web

    def web_of_read(i: int, r: int) -> int:
        if (i, r) not in reads:
            sites = into[i] & of_reg[r]
            first = None
            while sites:
                low = sites & -sites
                s = low.bit_length() - 1
                sites ^= low
                if first is None:
                    first = s
                else:
                    uf.union(first, s)
            reads[i, r] = entry[r] if first is None else first
        return reads[i, r]

    for i, ss in enumerate(slots):
        for *_, regs, write, keep in ss:
            for r in regs:
                if not write:
                    web_of_read(i, r)
                elif keep:
                    uf.union(site[i, r], web_of_read(i, r))
    # which register each web holds, and groups of webs named together by one operand
    home: dict[int, int] = {}  # web root -> its register
    for r in range(nregs):
        home.setdefault(uf.find(entry[r]), r)
    for (_i, r), s in site.items():
        home.setdefault(uf.find(s), r)

    def web(i: int, r: int, write: bool) -> int:
        return uf.find(site[i, r] if write else reads[i, r])

    group = _Union()
    gid: dict[int, int] = {}
    for w in home:
        gid[w] = group.add()
    for i, ss in enumerate(slots):
        for *_, regs, write, _keep in ss:
            ws = [web(i, r, write) for r in regs]
            for w in ws[1:]:
                group.union(gid[ws[0]], gid[w])
    members: dict[int, list[int]] = {}
    for w, g in gid.items():
        members.setdefault(group.find(g), []).append(w)
    entry_roots = {uf.find(entry[r]) for r in range(nregs)}
    # a register's first web keeps its number; a group holding an entry value keeps them all
    shift: dict[int, int] = {}
    top = nregs + (nregs % 2)
    for ws in members.values():
        if any(w in entry_roots for w in ws):
            for w in ws:
                shift[w] = 0
    for ws in sorted(members.values(), key=lambda ws: min(home[w] for w in ws)):
        if ws[0] in shift:
            continue
        lo = min(home[w] for w in ws)
        hi = max(home[w] for w in ws)
        base = top + (lo % 2)
        for w in ws:
            shift[w] = base - lo
        top = base + (hi - lo) + 1
        top += top % 2
    if all(v == 0 for v in shift.values()):
        return k

    def rename(i: int, n: int, write: bool) -> int:
        return n + shift[web(i, n, write)]

    new: list[Instruction] = []
    for i, (inst, ss) in enumerate(zip(insts, slots)):
        ops = list(inst.operands)
        for idx, o, regs, write, _keep in ss:
            if isinstance(o, Mem):
                ops[idx] = Mem(rename(i, regs[0], False), o.offset)
            elif isinstance(o, Reg):
                ops[idx] = Reg(rename(i, o.n, write), o.sel)
            elif isinstance(o, Pair):
                ops[idx] = Pair(rename(i, o.n, write))
            else:
                assert isinstance(o, Vec)
                ops[idx] = Vec(rename(i, o.n, write), o.count)
        new.append(replace(inst, operands=tuple(ops)))
    return replace(k, instructions=tuple(new), registers=max(top, k.registers))


__all__ = ["split"]
