"""The AMDGCN interpreter's hazard table (runtime/amdgcn_sim/hazards.py, from the MI200/MI300 ISA
documents) against the emitter's (backends/amdgcn/hazards.py): row by row on hand-written
instruction pairs, on every instruction pair of the LLVM test corpus, and by removing each rule
from the emitter's table: the code then lacks its `s_nop` and the interpreter must reject it."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import wavegpu as wg
from wavegpu.backends.amdgcn import AMDGCNRenderer
from wavegpu.backends.amdgcn import hazards as EH
from wavegpu.backends.amdgcn.isa import EMITTED
from wavegpu.backends.amdgcn.target import target
from wavegpu.runtime.amdgcn_sim import AmdgcnSimError, parse_module
from wavegpu.runtime.amdgcn_sim import hazards as IH
from wavegpu.runtime.amdgcn_sim.parse import parse_inst

ARCHES = ["gfx942", "gfx90a"]
# rows of the emitter's table that ask for more than the ISA documents (never less)
CONSERVATIVE = {"accvgpr_read>valu": "spill reloads from AGPRs: the ISA asks for no wait state"}
# rows of the ISA table for instructions the backend never emits (VALU writes of EXEC, M0 for LDS
# DMA, s_getreg): the emitter needs no row for them
NOT_EMITTED = {"valu-exec>dpp", "valu-exec>readlane", "salu-m0>lds-dma", "setreg>getreg"}

# (rule, producer, consumer, wait states on gfx90a, on gfx942)
ROWS = [
    ("valu-sgpr>vmem", "v_readfirstlane_b32 s4, v1", "global_load_dword v2, v1, s[4:5]", 5, 5),
    ("valu-sgpr>lane-select", "v_readfirstlane_b32 s6, v1", "v_readlane_b32 s7, v2, s6", 4, 4),
    ("valu-vcc>div_fmas", "v_div_scale_f32 v1, vcc, v2, v3, v2", "v_div_fmas_f32 v4, v1, v2, v3", 4, 4),
    ("valu-vgpr>dpp", "v_mov_b32 v2, v0", "v_add_u32_dpp v3, v2, v2 row_shr:1 row_mask:0xf bank_mask:0xf", 2, 2),
    ("wide-store>valu-write", "global_store_dwordx4 v1, v[4:7], s[4:5]", "v_mov_b32 v5, 0", 1, 2),
    ("valu-vgpr>accvgpr_write", "v_mov_b32 v1, 0", "v_accvgpr_write_b32 a0, v1", 2, 2),
    ("valu-sgpr>valu", "v_cmp_eq_u32 vcc, 0, v0", "v_cndmask_b32 v1, 0, v0, vcc", 0, 2),
    ("valu-sgpr>valu", "v_readfirstlane_b32 s4, v1", "v_add_u32 v2, s4, v1", 0, 2),
    ("valu-vgpr>readlane", "v_mov_b32 v2, v0", "v_readlane_b32 s8, v2, 47", 0, 1),
    ("trans>non-trans", "v_rcp_f32 v1, v0", "v_mul_f32 v2, v1, v1", 0, 1),
    ("trans>non-trans", "v_rsq_f64 v[2:3], v[4:5]", "v_mul_f64 v[6:7], v[2:3], v[2:3]", 0, 1),
    ("trans>non-trans", "v_rcp_f64 v[2:3], v[4:5]", "v_fma_f64 v[6:7], -v[4:5], v[2:3], 1.0", 0, 1),
    ("accvgpr_read>valu", "v_accvgpr_read_b32 v1, a0", "v_add_u32 v2, v1, v1", 0, 0),
    # no hazard
    ("", "v_rcp_f32 v1, v0", "v_rcp_f32 v2, v1", 0, 0),
    ("", "s_mov_b32 s4, 0", "global_load_dword v2, v1, s[4:5]", 0, 0),
    ("", "v_add_u32 v1, v0, v0", "v_add_u32 v2, v1, v1", 0, 0),
    ("", "global_store_dwordx2 v1, v[4:5], s[4:5]", "v_mov_b32 v5, 0", 0, 0),
    ("", "v_mov_b32 v3, v0", "v_add_u32_dpp v4, v2, v2 row_shr:1 row_mask:0xf bank_mask:0xf", 0, 0),
]


def test_every_rule_has_a_source_and_the_tables_name_the_same_rules() -> None:
    isa = {r.name for r in IH.RULES}
    emitter = {r.name for r in EH.RULES}
    assert all("ISA" in r.source for r in IH.RULES)
    assert emitter - isa == set(CONSERVATIVE)
    assert isa - emitter == NOT_EMITTED
    # ... and those really are instructions the backend cannot emit
    assert not [m for m, (_, form) in EMITTED.items() if m.startswith("v_") and "exec" in form.split(",")[0]]
    assert not [m for m in EMITTED if m.startswith(("s_getreg", "s_sendmsg", "v_cmpx")) or m.endswith("_lds")]
    assert {r for r, *_ in ROWS if r} == isa - NOT_EMITTED | set(CONSERVATIVE)


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize(("rule", "p", "c", "n90a", "n942"), ROWS, ids=[f"{r or 'none'}:{p}" for r, p, *_ in ROWS])
def test_the_tables_agree_row_by_row(rule: str, p: str, c: str, n90a: int, n942: int, arch: str) -> None:
    t = target(arch)
    pi, ci = parse_inst(p, 1), parse_inst(c, 2)
    want = n942 if t.gfx940 else n90a
    isa, why = IH.required(t, pi, ci)
    assert (isa, why if isa else "") == (want, rule if want else "")
    emitted = EH.required(t, pi.mi, ci.mi)
    if rule in CONSERVATIVE:
        assert emitted >= isa
    else:
        assert emitted == isa


def test_the_tables_agree_on_every_instruction_pair_of_the_llvm_corpus() -> None:
    """Every pair within the hazard window of every kernel of the LLVM test corpus (examples,
    assembler corpus, compiler corpus, one kernel per value row), for gfx942 and gfx90a."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backends" / "amdgcn"))
    from test_amdgcn_llvm import corpus

    fired: set[str] = set()
    for arch in ARCHES:
        t, r = target(arch), AMDGCNRenderer(arch)
        for k in corpus():
            insts = parse_module(r.render(k).source)[k.name].insts
            for i, p in enumerate(insts):
                for c in insts[i + 1 : i + 1 + IH.MAXDIST]:
                    isa, why = IH.required(t, p, c)
                    fired.add(why)
                    assert EH.required(t, p.mi, c.mi) == isa, (arch, k.name, p.text, c.text, why)
    assert {"valu-sgpr>valu", "valu-vgpr>dpp", "valu-vgpr>readlane", "trans>non-trans", "valu-vcc>div_fmas"} <= fired


HEAD = """
.kernel h
.param out, buffer, u32
.workgroup_size 64, 1, 1
    mov.u32 r1, %tid.x
    shl.b32 r2, r1, 4
    add.u32 r2, r0, r2
    ld.global.v4.b32 {r4, r5, r6, r7}, [r2]
"""
BODIES = {
    "fadd": "    add.f32 r8, r4, r5\n    st.global.f32 [r2], r8\n",
    "reduce": "    wave.reduce.add.u32 r8, r4\n    st.global.u32 [r2], r8\n",
    "rcp": "    rcp.f32 r8, r4\n    st.global.f32 [r2], r8\n",
    "div.f64": "    div.f64 r8:r9, r4:r5, r6:r7\n    st.global.f64 [r2], r8:r9\n",
    # r5 is stored unchanged by both stores: the two tuples are one group of registers (the
    # backend renames registers by webs, backends/amdgcn/webs.py), so the add that follows the
    # first store overwrites one of its data VGPRs
    "wide store": "    st.global.v4.b32 [r2+1024], {r4, r5, r6, r7}\n    add.u32 r4, r4, 1\n"
    "    add.u32 r6, r4, r5\n    add.u32 r7, r7, r6\n    st.global.v4.b32 [r2], {r4, r5, r6, r7}\n",
}
# the rules whose removal changes each kernel's code (found by the test below, kept here so that a
# rule that stops being exercised is noticed)
CAUGHT = {
    "gfx942": {
        "fadd": {"valu-sgpr>valu"},
        "reduce": {"valu-vgpr>readlane", "valu-sgpr>valu", "valu-vgpr>dpp"},
        "rcp": {"valu-sgpr>valu", "trans>non-trans"},
        "div.f64": {"valu-sgpr>valu", "trans>non-trans", "valu-vcc>div_fmas"},
        "wide store": {"wide-store>valu-write"},
    },
    "gfx90a": {
        "fadd": set(),
        "reduce": {"valu-vgpr>dpp"},
        "rcp": set(),
        "div.f64": {"valu-vcc>div_fmas"},
        "wide store": {"wide-store>valu-write"},
    },
}


@pytest.mark.parametrize("arch", ARCHES)
def test_a_rule_removed_from_the_emitters_table_is_caught_by_the_interpreter(
    arch: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Removing a rule from the emitter's table removes its `s_nop`s; the interpreter, with its own
    table, rejects the kernel naming that rule (it used to accept it: it read the emitter's table)."""
    mem = np.random.default_rng(0).integers(0, 2**32, 64 * 8, dtype=np.uint64).astype(np.uint32)
    mem[:256:4] = np.float32(1.5).view(np.uint32)
    mem[1:256:4] = np.float32(3.0).view(np.uint32)
    kw = {"grid": 1, "workgroup": 64, "memory": mem, "args": [0]}
    rules = EH.RULES
    for name, body in BODIES.items():
        k = wg.assemble(HEAD + body + "    ret\n.end\n", "h.wave").kernels[0]
        whole = wg.translate(k, "amdgcn", arch=arch)
        got = wg.launch(k, device="amdgcn-sim", arch=arch, **kw).memory
        assert np.array_equal(got, wg.launch(k, wave_width=64, **kw).memory), name
        caught = set()
        for rule in rules:
            monkeypatch.setattr(EH, "RULES", tuple(r for r in rules if r is not rule))
            if wg.translate(k, "amdgcn", arch=arch) != whole:
                with pytest.raises(AmdgcnSimError, match=rf"hazard: .* \(ISA rule {rule.name}\)"):
                    wg.launch(k, device="amdgcn-sim", arch=arch, **kw)
                caught.add(rule.name)
            monkeypatch.setattr(EH, "RULES", rules)
        assert caught == CAUGHT[arch][name], name


def test_the_interpreter_does_not_read_the_emitters_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the emitter's table emptied after rendering, the hazard check is unchanged."""
    from wavegpu.runtime.amdgcn_sim import run

    k = wg.assemble(HEAD + BODIES["rcp"] + "    ret\n.end\n", "h.wave").kernels[0]
    text = AMDGCNRenderer("gfx942").render(k, nargs=1).source.replace("  s_nop 0  ; hazard\n", "", 1)
    monkeypatch.setattr(EH, "RULES", ())
    monkeypatch.setattr(EH, "required", lambda *a: 0)
    with pytest.raises(AmdgcnSimError, match="ISA rule"):
        run(text, "h", (1, 1, 1), (64, 1, 1), np.zeros(4096, np.uint8), np.zeros(16, np.uint8), [0], "gfx942")


def test_the_isa_rows_for_instructions_we_do_not_emit_apply() -> None:
    """VALU writes of EXEC, M0 before LDS DMA and s_setreg before s_getreg are stated for any
    input; built here as instructions directly (the parser refuses what the backend never emits)."""
    from wavegpu.backends.amdgcn.ir import EXEC, M0, Imm, Phys
    from wavegpu.runtime.amdgcn_sim.parse import Inst

    def inst(op: str, ops: list[object], ndefs: int) -> Inst:
        return Inst(op, op.removesuffix("_e64"), ops, {}, ndefs, 1, op)

    cmpx = inst("v_cmp_eq_u32_e64", [EXEC, Imm(0), Phys("v", 0)], 1)
    dpp = parse_inst("v_add_u32_dpp v3, v2, v2 row_shr:1 row_mask:0xf bank_mask:0xf", 2)
    rfl = parse_inst("v_readfirstlane_b32 s4, v1", 2)
    m0 = inst("s_mov_b32", [M0, Imm(0)], 1)
    dma = Inst("buffer_load_dword", "buffer_load_dword", [], {"lds": True}, 0, 2, "buffer_load_dword ... lds")
    setreg, getreg = inst("s_setreg_imm32_b32", [], 0), inst("s_getreg_b32", [Phys("s", 4)], 1)
    for arch, want in (("gfx90a", [5, 0, 1, 2]), ("gfx942", [5, 4, 1, 2])):
        t = target(arch)
        got = [IH.required(t, p, c) for p, c in ((cmpx, dpp), (cmpx, rfl), (m0, dma), (setreg, getreg))]
        assert [n for n, _ in got] == want, arch
        assert [w for n, w in got if n] == [
            r
            for r, n in zip(
                ["valu-exec>dpp", "valu-exec>readlane", "salu-m0>lds-dma", "setreg>getreg"], want, strict=True
            )
            if n
        ]
