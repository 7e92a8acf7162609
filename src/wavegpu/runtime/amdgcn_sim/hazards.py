"""The AMDGCN interpreter's own statement of the hazards the hardware does not detect ("manually
inserted wait states"), written from the ISA documents and independent of the backend's table
(`backends/amdgcn/hazards.py`), so that a rule missing from the emitter's table is caught here
instead of being copied.

Sources: the "AMD Instinct MI200" ISA reference guide (gfx90a, CDNA2) and the "AMD Instinct
MI300" ISA reference guide (gfx942, CDNA3; gfx950 is the CDNA3.5 revision of the same rules),
their sections "Manually Inserted Wait States (NOPs)"; the MI300 one adds the gfx940-family rows
(VALU-written SGPR/VCC read by a VALU, `v_readlane` of a freshly written VGPR, transcendental
results, EXEC before readlane). Rows that AMD's rocRoller also states (its wait-state observers,
a second transcription of the same tables) name the observer they were checked against. None of
it is derived from the backend's table.

A *wait state* is one instruction between producer and consumer (`s_nop N` counts N+1); labels
are not instructions. Each rule gives the wait states for gfx90a and for the gfx940 family
(gfx942, gfx950); 0 is "not a hazard on that target". Rows for instructions the backend never
emits (VALU writes of EXEC, `s_setreg`/`s_getreg`, M0 for LDS DMA) are kept so that any input is
checked, not just ours.

Differences from the emitter's table are deliberate and listed in the tests
(tests/runtime/test_amdgcn_sim_hazards.py): the emitter may be more conservative than a row here,
never less.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ...backends.amdgcn.ir import Neg, Phys, Special
from ...backends.amdgcn.target import Target
from .parse import Inst

Unit = tuple[str, int]

# transcendental VALU ops (MI300 ISA 4.5, "VALU Trans op followed by a non-trans VALU consuming
# the result"; the same list in rocRoller's VALUTransWrite94x): f32, f64 and f16 forms
TRANS_OPS = frozenset(
    f"v_{op}_{t}" for op in ("exp", "log", "rcp", "rsq", "sqrt", "sin", "cos") for t in ("f16", "f32")
) | frozenset({"v_rcp_iflag_f32", "v_rcp_f64", "v_rsq_f64", "v_sqrt_f64", "v_exp_legacy_f32", "v_log_legacy_f32"})
LANE_READS = frozenset({"v_readlane_b32", "v_readfirstlane_b32"})
LANE_SELECT = frozenset({"v_readlane_b32", "v_writelane_b32"})
# stores whose data is more than 64 bits (MI200/MI300 ISA 4.5: "VMEM store with more than 8 bytes
# of data followed by a VALU write of those VGPRs")
WIDE_STORES = frozenset(f"{k}_store_dword{w}" for k in ("global", "buffer", "flat", "scratch") for w in ("x3", "x4"))


def _units(o: object) -> set[Unit]:
    if isinstance(o, Neg):
        o = o.o
    if isinstance(o, (Phys, Special)):
        return set(o.units())
    return set()


@dataclass(frozen=True)
class View:
    """What the rules need of one instruction, from its parsed text alone."""

    base: str
    valu: bool  # a vector ALU instruction (any v_ mnemonic, DPP and lane ops included)
    trans: bool
    vmem: bool  # global/buffer/flat/scratch (reads SGPR addresses, SRDs, offsets)
    dpp: bool
    lds_dma: bool  # a buffer/global load into LDS (`... lds`), which takes its LDS address from M0
    writes: frozenset[Unit]  # every register unit it writes (VGPRs, SGPRs, AGPRs, vcc, exec, m0)
    reads: frozenset[Unit]  # every register unit it reads, vcc/exec implied by the opcode too
    vsrc: frozenset[Unit]  # v_readlane / v_readfirstlane: the VGPR read
    lane_select: frozenset[Unit]  # v_readlane / v_writelane: the SGPR choosing the lane
    store_data: frozenset[Unit]  # a store of more than 64 bits: its data VGPRs


def view(inst: Inst) -> View:
    b = inst.base
    ops = inst.ops
    writes: set[Unit] = set()
    for o in ops[: inst.ndefs]:
        writes |= _units(o)
    reads: set[Unit] = set()
    for o in ops[inst.ndefs :]:
        reads |= _units(o)
    if b == "v_writelane_b32":
        reads |= _units(ops[0])  # the other lanes of the VGPR are kept
    if b.startswith("v_div_fmas"):
        reads |= {("vcc", 0), ("vcc", 1)}
    if b.startswith("v_") and b not in ("v_readlane_b32", "v_readfirstlane_b32"):
        reads |= {("exec", 0), ("exec", 1)}
    vmem = b.startswith(("global_", "buffer_", "flat_", "scratch_"))
    return View(
        base=b,
        valu=b.startswith("v_"),
        trans=b in TRANS_OPS,
        vmem=vmem,
        dpp=b.endswith("_dpp"),
        lds_dma=vmem and ("lds" in inst.mods or b.endswith("_lds")),
        writes=frozenset(writes),
        reads=frozenset(reads),
        vsrc=frozenset(_units(ops[1])) if b in LANE_READS and len(ops) > 1 else frozenset(),
        lane_select=frozenset(_units(ops[2])) if b in LANE_SELECT and len(ops) > 2 else frozenset(),
        store_data=frozenset(_units(ops[1])) if b in WIDE_STORES and len(ops) > 1 else frozenset(),
    )


def _v(us: frozenset[Unit]) -> set[Unit]:
    return {u for u in us if u[0] == "v"}


def _s(us: frozenset[Unit]) -> set[Unit]:
    return {u for u in us if u[0] in ("s", "vcc")}


def _exec(us: frozenset[Unit]) -> set[Unit]:
    return {u for u in us if u[0] == "exec"}


@dataclass(frozen=True)
class Rule:
    name: str
    gfx90a: int  # wait states on gfx90a (0: not a hazard there)
    gfx940: int  # on the gfx940 family (gfx942, gfx950)
    source: str
    applies: Callable[[View, View], bool]  # (producer, consumer)

    def states(self, t: Target) -> int:
        return self.gfx940 if t.gfx940 else self.gfx90a


RULES: tuple[Rule, ...] = (
    Rule(
        "valu-sgpr>vmem",
        5,
        5,
        "MI200/MI300 ISA 4.5: VALU writes SGPR -> VMEM reads that SGPR (rocRoller VALUWriteSGPRVMEM)",
        lambda p, c: p.valu and c.vmem and bool(_s(p.writes) & c.reads),
    ),
    Rule(
        "valu-sgpr>lane-select",
        4,
        4,
        "MI200/MI300 ISA 4.5: VALU writes SGPR -> V_{READ,WRITE}LANE using that SGPR as the lane select",
        lambda p, c: p.valu and bool(_s(p.writes) & c.lane_select),
    ),
    Rule(
        "valu-vcc>div_fmas",
        4,
        4,
        "MI200/MI300 ISA 4.5: VALU writes VCC (including v_div_scale) -> V_DIV_FMAS (rocRoller VALUWriteVCCVDIVFMAS)",
        lambda p, c: p.valu and c.base.startswith("v_div_fmas") and ("vcc", 0) in p.writes,
    ),
    Rule(
        "valu-vgpr>dpp",
        2,
        2,
        "MI200/MI300 ISA 4.5: VALU writes VGPR -> VALU DPP reads that VGPR",
        lambda p, c: p.valu and c.dpp and bool(_v(p.writes) & c.reads),
    ),
    Rule(
        "valu-exec>dpp",
        5,
        5,
        "MI200/MI300 ISA 4.5: VALU writes EXEC -> VALU DPP op",
        lambda p, c: p.valu and c.dpp and bool(_exec(p.writes)),
    ),
    Rule(
        "wide-store>valu-write",
        1,
        2,
        "MI200/MI300 ISA 4.5: VMEM store of more than 8 bytes -> VALU writes its data VGPRs "
        "(rocRoller BufferStoreDwordXXRead: 1 on gfx90a, 2 on gfx94x/950)",
        lambda p, c: c.valu and bool(p.store_data & c.writes),
    ),
    Rule(
        "valu-vgpr>accvgpr_write",
        2,
        2,
        "MI200/MI300 ISA 4.5 (MAI): VALU writes VGPR -> V_ACCVGPR_WRITE reads it (rocRoller VALUWrite)",
        lambda p, c: p.valu and c.base == "v_accvgpr_write_b32" and bool(_v(p.writes) & c.reads),
    ),
    Rule(
        "salu-m0>lds-dma",
        1,
        1,
        "MI200/MI300 ISA 4.5: SALU writes M0 -> LDS DMA (buffer_load ... lds), S_SENDMSG",
        lambda p, c: p.base.startswith("s_") and ("m0", 0) in p.writes and (c.base == "s_sendmsg" or c.lds_dma),
    ),
    Rule(
        "setreg>getreg",
        2,
        2,
        "MI200/MI300 ISA 4.5: S_SETREG -> S_GETREG of the same register (any register here)",
        lambda p, c: p.base.startswith("s_setreg") and c.base.startswith("s_getreg"),
    ),
    # the gfx940 family's additions (MI300 ISA 4.5)
    Rule(
        "valu-sgpr>valu",
        0,
        2,
        "MI300 ISA 4.5: VALU writes SGPR/VCC (v_readlane, v_readfirstlane, v_cmp, v_add/sub_co, "
        "v_div_scale) -> VALU reads that SGPR/VCC (rocRoller VALUWriteSGPRVCC94x)",
        lambda p, c: p.valu and c.valu and bool(_s(p.writes) & c.reads),
    ),
    Rule(
        "valu-vgpr>readlane",
        0,
        1,
        "MI300 ISA 4.5: VALU writes VGPR -> V_READLANE/V_READFIRSTLANE reads that VGPR "
        "(rocRoller VALUWriteReadlane94x)",
        lambda p, c: p.valu and bool(_v(p.writes) & c.vsrc),
    ),
    Rule(
        "valu-exec>readlane",
        0,
        4,
        "MI300 ISA 4.5: VALU writes EXEC -> V_READLANE, V_READFIRSTLANE, V_WRITELANE",
        lambda p, c: p.valu and c.base in LANE_READS | LANE_SELECT and bool(_exec(p.writes)),
    ),
    Rule(
        "trans>non-trans",
        0,
        1,
        "MI300 ISA 4.5: VALU trans op -> non-trans VALU consuming its result (rocRoller VALUTransWrite94x)",
        lambda p, c: p.trans and c.valu and not c.trans and bool(_v(p.writes) & c.reads),
    ),
)
MAXDIST = max(max(r.gfx90a, r.gfx940) for r in RULES)


def required(t: Target, p: Inst, c: Inst, rules: tuple[Rule, ...] = RULES) -> tuple[int, str]:
    """(wait states, the rule asking for the most) that consumer c needs after producer p."""
    pv, cv = view(p), view(c)
    need, why = 0, ""
    for r in rules:
        n = r.states(t)
        if n > need and r.applies(pv, cv):
            need, why = n, r.name
    return need, why
