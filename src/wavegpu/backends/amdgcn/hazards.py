"""Hazard mitigation on the final instruction stream: `s_nop` where the table of AMDGCN.md
section 4.6 asks for wait states the code does not already have.

Distances count real instructions only (labels and comments are not instructions; `s_nop N`
counts N+1). At a block entry the history is every predecessor's tail (already mitigated
blocks as emitted, later blocks, reached by back edges, as selected: nops only lengthen
distances, so that is conservative), so a hazard across a branch or a loop back edge is seen.

Rules (producer -> consumer: wait states, targets):

* VALU writes a VGPR -> `v_readlane`/`v_readfirstlane`/`v_writelane` reads it: 1 (gfx940+)
* VALU writes an SGPR or VCC -> a VALU reads it: 2 (gfx940+)
* VALU writes an SGPR -> `v_readlane`/`v_writelane` lane select: 4 (all)
* VALU writes an SGPR -> a VMEM instruction reads it (saddr): 5 (all)
* VALU writes a VGPR -> a DPP instruction reads it: 2 (all)
* transcendental VALU -> a non-transcendental VALU reads its result: 1 (gfx940+)
* store with more than 64 bits of data -> a VALU overwrites its data VGPRs: 1 (gfx90a), 2 (gfx940+)
* VALU writes VCC -> `v_div_fmas_*`: 4 (all)
* VALU writes a VGPR -> `v_accvgpr_write_b32` reads it, and `v_accvgpr_read_b32` -> a VALU reads
  its result: 2 (all; conservative, for our spill code)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .ir import MI, VCC, Imm, Neg, Phys, Special, is_pseudo
from .isa import TRANS, VMEM, is_valu
from .target import Target
from .waitcnt import blocks

MAXDIST = 5
READLANE = ("v_readlane_b32", "v_readfirstlane_b32", "v_writelane_b32")


def _u(o: object) -> set[tuple[str, int]]:
    if isinstance(o, Neg):
        o = o.o
    if isinstance(o, Phys):
        return set(o.units())
    if isinstance(o, Special) and o.name in ("vcc", "exec", "m0"):
        return set(o.units())
    return set()


def _defs(mi: MI) -> set[tuple[str, int]]:
    out: set[tuple[str, int]] = set()
    for o in (*mi.defs, *mi.imp_defs):
        out |= _u(o)
    if mi.op.startswith("v_cmp_") and not mi.op.endswith("_e64"):
        out |= set(VCC.units())
    return out


def _uses(mi: MI) -> set[tuple[str, int]]:
    out: set[tuple[str, int]] = set()
    for o in (*mi.uses, *mi.imp_uses):
        out |= _u(o)
    return out


def _valu(mi: MI) -> bool:
    return is_valu(mi.op) or mi.op in ("v_accvgpr_read_b32", "v_accvgpr_write_b32")


def _store_data(mi: MI) -> set[tuple[str, int]]:
    if mi.op in ("global_store_dwordx4",) or mi.op == "global_store_dwordx3":
        return _u(mi.ops[1])
    if mi.op in ("ds_write_b128",):
        return set()
    return set()


def _pv(p: MI) -> set[tuple[str, int]]:
    return {u for u in _defs(p) if u[0] == "v"} if _valu(p) else set()


def _ps(p: MI) -> set[tuple[str, int]]:
    return {u for u in _defs(p) if u[0] in ("s", "vcc")} if _valu(p) else set()


@dataclass(frozen=True)
class Rule:
    """One row of the table: `states(target, producer, consumer)` is the wait states it asks for
    (0 where it does not apply). Names follow the interpreter's ISA table
    (runtime/amdgcn_sim/hazards.py), which the tests compare with this one row by row."""

    name: str
    states: Callable[[Target, MI, MI], int]


RULES: tuple[Rule, ...] = (
    Rule(
        "valu-vgpr>readlane",
        lambda t, p, c: 1 if t.gfx940 and c.op in READLANE and _pv(p) & _u(c.ops[1]) else 0,
    ),
    Rule("valu-sgpr>valu", lambda t, p, c: 2 if t.gfx940 and _valu(c) and _ps(p) & _uses(c) else 0),
    Rule(
        "valu-sgpr>lane-select",
        lambda t, p, c: (
            4 if c.op in ("v_readlane_b32", "v_writelane_b32") and len(c.ops) > 2 and _ps(p) & _u(c.ops[2]) else 0
        ),
    ),
    Rule("valu-sgpr>vmem", lambda t, p, c: 5 if c.op in VMEM and _ps(p) & _uses(c) else 0),
    Rule("valu-vgpr>dpp", lambda t, p, c: 2 if "_dpp" in c.op and _pv(p) & _uses(c) else 0),
    Rule(
        "trans>non-trans",
        lambda t, p, c: 1 if t.gfx940 and p.op in TRANS and _valu(c) and c.op not in TRANS and _pv(p) & _uses(c) else 0,
    ),
    Rule(
        "wide-store>valu-write",
        lambda t, p, c: (2 if t.gfx940 else 1) if _valu(c) and _store_data(p) & _defs(c) else 0,
    ),
    Rule(
        "valu-vcc>div_fmas",
        lambda t, p, c: 4 if _valu(p) and c.op.startswith("v_div_fmas") and ("vcc", 0) in _defs(p) else 0,
    ),
    Rule(
        "valu-vgpr>accvgpr_write",
        lambda t, p, c: 2 if c.op == "v_accvgpr_write_b32" and _pv(p) & _uses(c) else 0,
    ),
    # conservative (the ISA documents ask for none on gfx90a/gfx940): our spill reloads
    Rule(
        "accvgpr_read>valu",
        lambda t, p, c: 2 if p.op == "v_accvgpr_read_b32" and _valu(c) and _pv(p) & _uses(c) else 0,
    ),
)


def required(t: Target, p: MI, c: MI) -> int:
    """Wait states consumer c needs after producer p (the most any rule of RULES asks for)."""
    return max((r.states(t, p, c) for r in RULES), default=0)


def _states(mi: MI) -> int:
    if mi.op == "s_nop":
        assert isinstance(mi.ops[0], Imm)
        return mi.ops[0].value + 1
    return 1


def mitigate(mis: list[MI], t: Target) -> list[MI]:
    bl, preds = blocks(mis)
    done: dict[int, list[MI]] = {}

    def tails(j: int, depth: int, seen: frozenset[int]) -> list[list[MI]]:
        """Histories (most recent first) reaching the start of block j, each up to `depth` states."""
        if depth <= 0:
            return [[]]
        out: list[list[MI]] = []
        for p in preds[j]:
            s, e = bl[p]
            body = [m for m in (done.get(p) or mis[s:e]) if not is_pseudo(m)]
            rev = list(reversed(body))
            n = sum(_states(m) for m in rev)
            if n >= depth or p in seen:
                out.append(rev)
            else:
                for more in tails(p, depth - n, seen | {p}):
                    out.append(rev + more)
        return out or [[]]

    for j, (s, e) in enumerate(bl):
        cur: list[MI] = []
        for mi in mis[s:e]:
            if is_pseudo(mi):
                cur.append(mi)
                continue
            local = [m for m in reversed(cur) if not is_pseudo(m)]
            nlocal = sum(_states(m) for m in local)
            hists = [local + h for h in tails(j, MAXDIST - nlocal, frozenset({j}))] if nlocal < MAXDIST else [local]
            extra = 0
            for h in hists:
                dist = 0
                for p in h:
                    if dist >= MAXDIST:
                        break
                    req = required(t, p, mi)
                    if req > dist:
                        extra = max(extra, req - dist)
                    dist += _states(p)
            if extra:
                cur.append(MI("s_nop", [Imm(extra - 1)], 0, comment="hazard"))
            cur.append(mi)
        done[j] = cur
    out: list[MI] = []
    for j in range(len(bl)):
        out += done[j]
    return out
