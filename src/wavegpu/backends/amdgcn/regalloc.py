"""Register allocation: CFG liveness on the real execution order, graph colouring, spilling.

The control-flow graph is the instruction stream's own (fall-through and branch targets), so a
divergent if/else laid out then-part first is analysed as it executes: the then-part runs
before the else-part. A VALU definition under a partial EXEC (`MI.partial`) and a definition of
part of a register range also read the register (the other lanes or dwords survive), so they
never end a live range. Registers read before any definition (WAVE registers start at zero)
get a zero at the kernel entry.

Colouring is `codegen.coloring.color` (Chaitin-Briggs with coalescing of copies) on one
interference graph per class: VGPRs (at most `max_vgprs`) and SGPRs (at most `max_sgprs`;
physical ABI registers are pinned nodes). Nodes that do not fit are spilled: VGPRs to AGPRs
(`v_accvgpr_write_b32` after each definition, `v_accvgpr_read_b32` before each use, into short
temporaries), SGPRs to lanes of a spill VGPR (`v_writelane_b32` / `v_readlane_b32`); then the
program is coloured again.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...codegen import InterferenceGraph, build_interference, color, instruction_liveness
from ...codegen.interference import INF
from ...errors import WaveError
from .ir import MI, VR, Imm, Neg, Operand, Phys, Sub, is_pseudo

BRANCHES = frozenset({"s_branch", "s_cbranch_scc0", "s_cbranch_scc1", "s_cbranch_execz", "s_cbranch_execnz"})


class AllocationError(WaveError):
    """The kernel needs more registers than the target has, even with spilling."""


@dataclass
class Allocation:
    mis: list[MI]
    vgprs: int  # architectural VGPRs used (next free)
    sgprs: int  # SGPRs used (next free)
    agprs: int  # AGPRs used as spill slots
    spilled_v: int = 0
    spilled_s: int = 0
    notes: list[str] = field(default_factory=list)


def successors(mis: list[MI]) -> list[list[int]]:
    where = {str(mi.ops[0]): i for i, mi in enumerate(mis) if mi.op == "LABEL"}
    out: list[list[int]] = []
    for i, mi in enumerate(mis):
        s: list[int] = []
        if mi.op in BRANCHES:
            s.append(where[str(mi.ops[0])])
        if mi.op not in ("s_branch", "s_endpgm") and i + 1 < len(mis):
            s.append(i + 1)
        out.append(s)
    return out


def _reg_of(o: object) -> VR | Phys | None:
    if isinstance(o, Neg):
        o = o.o
    if isinstance(o, VR):
        return o
    if isinstance(o, Sub):
        return o.vr
    if isinstance(o, Phys):
        return o
    return None


def _full(o: object) -> bool:
    return isinstance(o, VR | Phys) or (isinstance(o, Sub) and o.i == 0 and o.n == o.vr.size)


def def_use(mi: MI) -> tuple[list[VR | Phys], list[VR | Phys]]:
    """(killing definitions, reads) of one instruction, partial definitions counted as reads."""
    defs: list[VR | Phys] = []
    uses: list[VR | Phys] = []
    for o in mi.uses:
        r = _reg_of(o)
        if r is not None:
            uses.append(r)
    for o in mi.defs:
        r = _reg_of(o)
        if r is None:
            continue
        partial = mi.partial and r.rc == "v" and not (isinstance(r, VR) and r.temp)
        if _full(o) and not partial and mi.op != "v_writelane_b32":
            defs.append(r)
        else:
            defs.append(r)
            uses.append(r)
    return defs, uses


def _rc(r: VR | Phys) -> str:
    return r.rc


def allocate(mis: list[MI], max_vgprs: int = 256, max_sgprs: int = 102, max_agprs: int = 256) -> Allocation:
    _temps.clear()
    mis = _zero_init(mis)
    agprs = 0
    spill_vgprs: list[VR] = []
    s_slots = 0
    sv = ss = 0
    for _round in range(64):
        res: dict[str, dict[VR, int]] = {}
        failed: dict[str, list[VR]] = {}
        for rc, K in (("v", max_vgprs), ("s", max_sgprs)):
            colours, spilled = _colour(mis, rc, K)
            res[rc] = colours
            failed[rc] = spilled
        if not failed["v"] and not failed["s"]:
            break
        for vr in failed["s"]:
            if any(vr is t for t in _temps):
                raise AllocationError(f"the kernel needs more than {max_sgprs} SGPRs even after spilling")
            lane = s_slots % 64
            if lane == 0:
                spill_vgprs.append(VR("v", name="sgpr-spill"))
            mis = _spill_s(mis, vr, spill_vgprs[-1], lane)
            s_slots += vr.size
            ss += 1
        for vr in failed["v"]:
            if any(vr is t for t in _temps):
                raise AllocationError(f"the kernel needs more than {max_vgprs} VGPRs even after spilling")
            if agprs + vr.size > max_agprs:
                raise AllocationError(f"the kernel needs more than {max_vgprs} VGPRs and {max_agprs} AGPRs")
            mis = _spill_v(mis, vr, agprs)
            agprs += vr.size
            sv += 1
        mis = _zero_init(mis)
    else:
        raise AllocationError("register allocation did not converge")
    out: list[MI] = []
    for mi in mis:
        mi.ops = [_phys(o, res) for o in mi.ops]
        if mi.op in ("v_mov_b32", "s_mov_b32", "s_mov_b64") and len(mi.ops) == 2 and mi.ops[0] == mi.ops[1]:
            continue
        out.append(mi)
    used = {"v": 0, "s": 0}
    for mi in out:
        for o in mi.ops:
            o = o.o if isinstance(o, Neg) else o
            if isinstance(o, Phys) and o.rc in used:
                used[o.rc] = max(used[o.rc], o.idx + o.size)
    return Allocation(out, used["v"], used["s"], agprs, sv, ss)


_temps: list[VR] = []  # spill temporaries of the current allocation (never spilled again)


def _phys(o: Operand, res: dict[str, dict[VR, int]]) -> Operand:
    if isinstance(o, Neg):
        return Neg(_phys(o.o, res))  # type: ignore[arg-type]
    if isinstance(o, VR):
        return Phys(o.rc, res[o.rc][o], o.size)
    if isinstance(o, Sub):
        return Phys(o.vr.rc, res[o.vr.rc][o.vr] + o.i, o.n)
    return o


def _zero_init(mis: list[MI]) -> list[MI]:
    """Registers read before any write hold zero (DESIGN section 3): define them at the entry."""
    nodes: dict[object, int] = {}
    dl, ul = [], []
    for mi in mis:
        d, u = def_use(mi)
        dl.append(sum(1 << nodes.setdefault(r, len(nodes)) for r in set(d)))
        ul.append(sum(1 << nodes.setdefault(r, len(nodes)) for r in set(u)))
    live_in, _ = instruction_liveness(successors(mis), dl, ul)
    inv = {i: r for r, i in nodes.items()}
    init: list[MI] = []
    m = live_in[0] if mis else 0
    i = 0
    while m:
        if m & 1:
            r = inv[i]
            if isinstance(r, VR):
                for j in range(r.size):
                    dst = r if r.size == 1 else Sub(r, j)
                    mv = "v_mov_b32" if r.rc == "v" else "s_mov_b32"
                    init.append(MI(mv, [dst, Imm(0)], 1, comment="registers start at zero"))
        m >>= 1
        i += 1
    return init + mis


def _colour(mis: list[MI], rc: str, K: int) -> tuple[dict[VR, int], list[VR]]:
    nodes: dict[VR | Phys, int] = {}
    g = InterferenceGraph()
    cost: dict[int, float] = {}

    def node(r: VR | Phys) -> int:
        if r not in nodes:
            if isinstance(r, Phys):
                nodes[r] = g.add_node(r.size, r.size if r.size in (2, 4) else 1, INF, pinned=r.idx)
            else:
                inf = any(r is t for t in _temps)
                nodes[r] = g.add_node(r.size, r.align, INF if inf else 0.0)
        return nodes[r]

    dl: list[int] = []
    ul: list[int] = []
    dn: list[list[int]] = []
    moves: list[tuple[int, int] | None] = []
    for mi in mis:
        d, u = def_use(mi)
        d = [r for r in d if _rc(r) == rc]
        u = [r for r in u if _rc(r) == rc]
        di = [node(r) for r in dict.fromkeys(d)]
        ui = [node(r) for r in dict.fromkeys(u)]
        for j in di + ui:
            cost[j] = cost.get(j, 0.0) + 1.0
        dl.append(sum(1 << j for j in di))
        ul.append(sum(1 << j for j in ui))
        dn.append(di)
        mv = None
        if (
            mi.op in ("v_mov_b32", "s_mov_b32", "s_mov_b64")
            and not mi.partial
            and isinstance(mi.ops[0], VR)
            and isinstance(mi.ops[1], VR)
            and _rc(mi.ops[1]) == rc
            and _rc(mi.ops[0]) == rc
            and mi.ops[0].size == mi.ops[1].size
        ):
            mv = (nodes[mi.ops[0]], nodes[mi.ops[1]])
        moves.append(mv)
    for j in range(len(g)):
        if g.cost[j] != INF:
            g.cost[j] = cost.get(j, 1.0)
    _, live_out = instruction_liveness(successors(mis), dl, ul)
    build_interference(g, live_out, dn, moves)
    c = color(g, K)
    inv = {i: r for r, i in nodes.items()}
    colours = {r: c.colors[j] for j in c.colors if isinstance(r := inv[j], VR)}
    spilled: list[VR] = []
    for grp in c.spilled:
        for j in grp:
            r = inv[j]
            if isinstance(r, Phys):
                raise AllocationError(f"the precoloured register {r} cannot be kept")
            spilled.append(r)
    return colours, spilled


def _slice(o: object, vr: VR) -> tuple[int, int] | None:
    if isinstance(o, Neg):
        o = o.o
    if o is vr:
        return (0, vr.size)
    if isinstance(o, Sub) and o.vr is vr:
        return (o.i, o.n)
    return None


def _spill(mis: list[MI], vr: VR, reload, store) -> list[MI]:
    """Around each instruction that names `vr`: reload the dwords it reads into short
    temporaries (only the slice the operand names), and store the ones it writes."""
    out: list[MI] = []
    for mi in mis:
        if is_pseudo(mi):
            out.append(mi)
            continue
        temps: dict[tuple[int, int], VR] = {}
        read: set[tuple[int, int]] = set()
        written: set[tuple[int, int]] = set()
        defs = set(range(mi.ndefs)) | set(mi.defs_extra)
        for k, o in enumerate(mi.ops):
            sl = _slice(o, vr)
            if sl is None:
                continue
            if sl not in temps:
                n = sl[1]
                align = 4 if vr.rc == "s" and n >= 4 else (2 if n >= 2 else 1)
                temps[sl] = VR(vr.rc, n, align, name=f"reload-{vr.name}", temp=True)
                _temps.append(temps[sl])
            if k in defs:
                written.add(sl)
                if mi.partial or mi.op == "v_writelane_b32":
                    read.add(sl)
            if k not in defs or k in mi.defs_extra:
                read.add(sl)
        if not temps:
            out.append(mi)
            continue
        for sl in sorted(read):
            t = temps[sl]
            for j in range(sl[1]):
                out.append(reload(t if sl[1] == 1 else Sub(t, j), sl[0] + j, mi))
        new_ops = []
        for o in mi.ops:
            sl = _slice(o, vr)
            if sl is None:
                new_ops.append(o)
            else:
                t = temps[sl]
                new_ops.append(Neg(t) if isinstance(o, Neg) else t)
        mi.ops = new_ops
        out.append(mi)
        for sl in sorted(written):
            t = temps[sl]
            for j in range(sl[1]):
                out.append(store(t if sl[1] == 1 else Sub(t, j), sl[0] + j, mi))
    return out


def _spill_v(mis: list[MI], vr: VR, slot: int) -> list[MI]:
    return _spill(
        mis,
        vr,
        lambda t, i, mi: MI("v_accvgpr_read_b32", [t, Phys("a", slot + i)], 1, partial=mi.partial),
        lambda t, i, mi: MI("v_accvgpr_write_b32", [Phys("a", slot + i), t], 1, partial=mi.partial),
    )


def _spill_s(mis: list[MI], vr: VR, holder: VR, lane: int) -> list[MI]:
    return _spill(
        mis,
        vr,
        lambda t, i, mi: MI("v_readlane_b32", [t, holder, Imm(lane + i)], 1),
        lambda t, i, mi: MI("v_writelane_b32", [holder, t, Imm(lane + i)], 1, partial=True),
    )
