"""The AMDGCN backend's passes one by one: uniformity (SGPR vs VGPR), EXEC-mask control flow,
spilling (forced by a small register budget), the waitcnt scoreboard and the hazard table,
on small kernels and hand-made instruction streams."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

import wavegpu as wg
from wavegpu.backends.amdgcn import AMDGCNRenderer, hazards, waitcnt
from wavegpu.backends.amdgcn.ir import EXEC, MI, VCC, Imm, Label, Phys, label
from wavegpu.backends.amdgcn.target import target

V = lambda i, n=1: Phys("v", i, n)  # noqa: E731
S = lambda i, n=1: Phys("s", i, n)  # noqa: E731
MEMBASE = S(10, 2)


def _text(src: str, arch: str = "gfx942", **kw: int) -> str:
    return AMDGCNRenderer(arch, **kw).render(wg.assemble(src, "k.wave").kernels[0], 64).source


def _assembles(text: str, arch: str, tmp_path: Path) -> None:
    mc = shutil.which("llvm-mc-22")
    if mc is None:
        pytest.skip("llvm-mc-22 is not installed (make test installs llvm-22)")
    (tmp_path / "k.s").write_text(text)
    r = subprocess.run(
        [
            mc,
            "-triple=amdgcn-amd-amdhsa",
            f"-mcpu={arch}",
            "-filetype=obj",
            str(tmp_path / "k.s"),
            "-o",
            str(tmp_path / "k.o"),
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0 and not r.stderr, r.stderr


def _code(text: str) -> list[str]:
    body = text.split(".Lfunc_end")[0]
    return [ln.strip() for ln in body.splitlines() if ln.startswith("  ") and not ln.startswith("  .")]


# ---- uniformity and control flow ---------------------------------------------------------------
UNIFORM = """
.kernel u
.param a, buffer, u32
.param n, scalar, u32
    mov.u32 r2, %ctaid.x
    mul.lo.u32 r3, r2, r1
    mov.u32 r4, %tid.x
    add.u32 r5, r3, r4
    shl.b32 r5, r5, 2
    add.u32 r5, r0, r5
    st.global.b32 [r5], r3
    ret
.end
"""


def test_uniform_values_use_scalar_instructions() -> None:
    code = _code(_text(UNIFORM))
    assert any(c.startswith("s_mul_i32") for c in code)  # group id * n: uniform
    assert not any(c.startswith("v_mul_lo_u32") for c in code)
    assert any(c.startswith("v_add_u32") for c in code)  # + tid.x: divergent


DIVERGENT = """
.kernel d
    mov.u32 r0, %tid.x
    setp.lt.u32 p0, r0, 5
    if p0
        add.u32 r1, r0, 1
    else
        add.u32 r1, r0, 2
    endif
    loop
        add.u32 r1, r1, 3
        setp.gt.u32 p1, r1, 40
        break p1
        setp.eq.u32 p2, r1, 20
        continue p2
        add.u32 r1, r1, 1
    endloop
    shl.b32 r2, r0, 2
    st.global.b32 [r2], r1
    ret
.end
"""


def test_divergent_if_and_loop_use_exec_masks(tmp_path: Path) -> None:
    text = _text(DIVERGENT)
    code = _code(text)
    assert "s_and_b64 exec, exec, s[" in "\n".join(code)  # then lanes
    assert any(c.startswith("s_cbranch_execz") for c in code)  # empty then/else skipped
    assert any(c.startswith("s_cbranch_execnz") for c in code)  # loop while lanes remain
    # break and continue accumulate masks and remove lanes from EXEC
    assert sum(1 for c in code if re.match(r"s_or_b64 s\[\d+:\d+\], s\[\d+:\d+\], s\[\d+:\d+\]", c)) >= 2
    _assembles(text, "gfx942", tmp_path)


def test_uniform_loop_branches_on_scc() -> None:
    src = """
.kernel l
.param n, scalar, u32
    mov.u32 r1, 0
    mov.u32 r2, %tid.x
    loop
        setp.ge.u32 p0, r1, r0
        break p0
        add.u32 r1, r1, 1
        add.u32 r2, r2, r1
    endloop
    shl.b32 r3, r2, 2
    st.global.b32 [r3], r2
    ret
.end
"""
    code = _code(_text(src))
    assert any(c.startswith("s_cbranch_scc1") for c in code)
    assert not any(c.startswith("s_cbranch_execnz") for c in code)
    assert any(c.startswith("s_add_u32") for c in code)  # the counter is an SGPR


def test_wave_width_32_is_refused_with_the_reason() -> None:
    with pytest.raises(wg.WaveError, match="wave width 32"):
        AMDGCNRenderer("gfx90a").render(wg.assemble(UNIFORM, "k.wave").kernels[0], 32)


# ---- spilling ------------------------------------------------------------------------------------
def _many_vgprs() -> str:
    src = ".kernel many\n.param a, buffer, u32\n    mov.u32 r1, %tid.x\n    shl.b32 r1, r1, 2\n    add.u32 r1, r0, r1\n"
    src += "".join(f"    ld.global.u32 r{i + 1}, [r1+{4 * i}]\n" for i in range(2, 30))
    src += "    mov.u32 r40, 0\n"
    src += "".join(f"    mul.lo.u32 r40, r40, r{i + 1}\n    add.u32 r40, r40, r{i + 1}\n" for i in range(2, 30))
    return src + "    st.global.b32 [r1], r40\n    ret\n.end\n"


def _many_sgprs() -> str:
    src = ".kernel many\n" + "".join(f".param p{i}, scalar, u32\n" for i in range(20))
    src += "    mov.u32 r30, %tid.x\n    mov.u32 r31, 0\n"
    src += "".join(f"    mul.lo.u32 r31, r31, r{i}\n    add.u32 r31, r31, r{i}\n" for i in range(20))
    return src + "    shl.b32 r30, r30, 2\n    st.global.b32 [r30], r31\n    ret\n.end\n"


@pytest.mark.parametrize("arch", ["gfx90a", "gfx942", "gfx950"])
def test_a_small_vgpr_budget_spills_to_agprs(arch: str, tmp_path: Path) -> None:
    k = wg.assemble(_many_vgprs(), "m.wave").kernels[0]
    assert AMDGCNRenderer(arch).compile(k).spilled_vgprs == 0
    r = AMDGCNRenderer(arch, max_vgprs=8)
    c = r.compile(k)
    assert c.spilled_vgprs > 0 and c.info.vgprs <= 8 and c.info.agprs > 0
    text = r.render(k).source
    assert "v_accvgpr_write_b32 a" in text and "v_accvgpr_read_b32 v" in text
    assert f".amdhsa_accum_offset {c.info.accum_offset}" in text
    _assembles(text, arch, tmp_path)


def test_a_small_sgpr_budget_spills_to_vgpr_lanes(tmp_path: Path) -> None:
    k = wg.assemble(_many_sgprs(), "m.wave").kernels[0]
    assert AMDGCNRenderer("gfx942").compile(k).spilled_sgprs == 0
    r = AMDGCNRenderer("gfx942", max_sgprs=16)
    c = r.compile(k)
    assert c.spilled_sgprs > 0 and c.info.sgprs <= 16
    text = r.render(k).source
    assert "v_writelane_b32" in text and "v_readlane_b32" in text
    _assembles(text, "gfx942", tmp_path)


def test_an_impossible_budget_is_a_clear_error() -> None:
    k = wg.assemble(_many_vgprs(), "m.wave").kernels[0]
    with pytest.raises(wg.WaveError, match="VGPRs"):
        AMDGCNRenderer("gfx942", max_vgprs=1).compile(k)


# ---- waitcnt --------------------------------------------------------------------------------------
def _load(dst: Phys, addr: Phys) -> MI:
    return MI("global_load_dword", [dst, addr, MEMBASE], 1)


def _valu(op: str, d: Phys, *s: object) -> MI:
    return MI(op, [d, *s], 1, imp_uses=(EXEC,))  # type: ignore[list-item]


def _waits(mis: list[MI]) -> list[str]:
    return [m.text().strip() for m in waitcnt.insert_waits(mis)]


def test_read_after_load_waits_for_exactly_that_load() -> None:
    out = _waits([_load(V(1), V(0)), _load(V(2), V(0)), _valu("v_add_u32", V(3), V(1), V(1)), MI("s_endpgm")])
    assert out.index("s_waitcnt vmcnt(1)") == 2  # the second load may stay in flight


def test_write_after_load_waits_too() -> None:
    out = _waits([_load(V(1), V(0)), _valu("v_mov_b32", V(1), Imm(0)), MI("s_endpgm")])
    assert out[1] == "s_waitcnt vmcnt(0)"


def test_stores_count_on_vmcnt() -> None:
    store = MI("global_store_dword", [V(0), V(5), MEMBASE], 0)
    out = _waits([_load(V(1), V(0)), store, store, _valu("v_add_u32", V(3), V(1), V(1)), MI("s_endpgm")])
    assert "s_waitcnt vmcnt(2)" in out


def test_scalar_loads_return_out_of_order() -> None:
    lds = MI("ds_read_b32", [V(4), V(0)], 1)
    smem = MI("s_load_dword", [S(8), S(0, 2), Imm(16)], 1)
    out = _waits([lds, smem, _valu("v_add_u32", V(3), V(4), V(4)), MI("s_endpgm")])
    assert "s_waitcnt lgkmcnt(0)" in out  # lgkmcnt(1) would be wrong with an SMEM in flight


def test_a_load_at_the_bottom_of_a_loop_is_waited_for_at_the_top() -> None:
    mis = [
        label(".Lh"),
        _valu("v_add_u32", V(3), V(1), V(3)),  # reads v1, loaded at the bottom of the last iteration
        _load(V(1), V(0)),
        MI("s_cbranch_scc1", [Label(".Lh")], 0),
        MI("s_endpgm"),
    ]
    out = _waits(mis)
    assert out[1] == "s_waitcnt vmcnt(0)"


def test_a_barrier_drains_both_counters() -> None:
    out = _waits([_load(V(1), V(0)), MI("ds_write_b32", [V(0), V(2)], 0), MI("s_barrier"), MI("s_endpgm")])
    assert out[2] == "s_waitcnt vmcnt(0) lgkmcnt(0)"


# ---- hazards ---------------------------------------------------------------------------------------
def _cmp_then_select() -> list[MI]:
    return [
        MI("v_cmp_u_f32", [VCC, V(1), V(1)], 1, imp_uses=(EXEC,)),
        MI("v_cndmask_b32", [V(1), V(1), V(2), VCC], 1, imp_uses=(EXEC,)),
        MI("s_endpgm"),
    ]


def test_vcc_from_valu_to_valu_needs_two_wait_states_on_gfx940_only() -> None:
    for arch, nops in (("gfx90a", []), ("gfx942", ["s_nop 1"]), ("gfx950", ["s_nop 1"])):
        out = [m.text().strip() for m in hazards.mitigate(_cmp_then_select(), target(arch))]
        assert [o.split("  ;")[0] for o in out if o.startswith("s_nop")] == nops, arch


def test_hazards_are_seen_across_labels_and_independent_instructions_count() -> None:
    mis = _cmp_then_select()
    mis.insert(1, label(".Lx"))
    out = [m.text().strip() for m in hazards.mitigate(mis, target("gfx942"))]
    assert any(o.startswith("s_nop 1") for o in out)  # a label is not a wait state
    mis = _cmp_then_select()
    mis.insert(1, MI("s_mov_b32", [S(4), Imm(0)], 1))
    out = [m.text().strip() for m in hazards.mitigate(mis, target("gfx942"))]
    assert any(o.startswith("s_nop 0") for o in out)  # one independent instruction: one more needed


def test_hazard_across_a_loop_back_edge() -> None:
    mis = [
        label(".Lh"),
        MI("v_cndmask_b32", [V(1), V(1), V(2), VCC], 1, imp_uses=(EXEC,)),
        MI("s_mov_b32", [S(4), Imm(0)], 1),
        MI("v_cmp_u_f32", [VCC, V(1), V(1)], 1, imp_uses=(EXEC,)),
        MI("s_cbranch_scc1", [Label(".Lh")], 0),
        MI("s_endpgm"),
    ]
    out = [m.text().strip() for m in hazards.mitigate(mis, target("gfx942"))]
    assert out[1].startswith("s_nop 0")  # the branch counts as one wait state, one more needed


def test_readfirstlane_after_valu_on_gfx942() -> None:
    mis = [
        MI("v_add_u32", [V(7), V(5), V(6)], 1, imp_uses=(EXEC,)),
        MI("v_readfirstlane_b32", [S(10), V(7)], 1),
        MI("s_endpgm"),
    ]
    assert "s_nop 0" in [m.text().strip().split("  ;")[0] for m in hazards.mitigate(mis, target("gfx942"))]
    assert not any(m.op == "s_nop" for m in hazards.mitigate(mis, target("gfx90a")))


def test_the_division_sequence_respects_the_div_fmas_vcc_hazard(tmp_path: Path) -> None:
    src = ".kernel f\n    mov.u32 r0, %tid.x\n    cvt.f32.u32 r1, r0\n    div.f32 r2, r1, r1\n    st.global.b32 [r0], r2\n    ret\n.end\n"
    for arch in ("gfx90a", "gfx942"):
        code = _code(_text(src, arch))
        i = next(j for j, c in enumerate(code) if c.startswith("v_div_fmas_f32"))
        k = max(j for j in range(i) if code[j].startswith("v_div_scale_f32") and "vcc" in code[j])
        states = sum(int(c.split()[1]) + 1 if c.startswith("s_nop") else 1 for c in code[k + 1 : i])
        assert states >= 4, arch


# ---- peepholes ------------------------------------------------------------------------------------
def test_a_shift_feeding_an_add_or_an_or_fuses() -> None:
    src = """
.kernel f
.param a, buffer, u32
    mov.u32 r1, %tid.x
    shl.b32 r2, r1, 2
    add.u32 r2, r0, r2
    shl.b32 r3, r1, 4
    or.b32 r3, r3, r1
    st.global.b32 [r2], r3
    ret
.end
"""
    code = _code(_text(src))
    assert any(c.startswith("v_lshl_add_u32") for c in code)
    assert any(c.startswith("v_lshl_or_b32") for c in code)
    assert not any(c.startswith("v_lshlrev_b32") for c in code)


def test_a_shift_read_twice_does_not_fuse() -> None:
    src = """
.kernel f
.param a, buffer, u32
    mov.u32 r1, %tid.x
    shl.b32 r2, r1, 2
    add.u32 r3, r0, r2
    st.global.b32 [r3], r2
    ret
.end
"""
    code = _code(_text(src))
    assert any(c.startswith("v_lshlrev_b32") for c in code) and not any(c.startswith("v_lshl_add") for c in code)


def test_constant_address_offsets_fold_into_the_memory_instruction() -> None:
    src = """
.kernel k
.param a, buffer, u32
    mov.u32 r1, %tid.x
    shl.b32 r1, r1, 2
    add.u32 r2, r1, 64
    ld.global.u32 r3, [r2]
    add.u32 r4, r1, 128
    st.local.b32 [r4+4], r3
    add.u32 r5, r1, 8
    ld.global.u32 r6, [r5]
    st.global.b32 [r5], r6
    add.u32 r7, r1, -64
    ld.global.u32 r8, [r7]
    st.global.b32 [r1], r8
    ret
.end
"""
    code = _code(_text(src))
    # a global offset adds to the 64-bit address: only one <= 0 folds (a positive one could carry
    # a WAVE address past 2^32, where WAVE wraps: peephole.GLOBAL_OFFSETS)
    assert not any(re.match(r"global_load_dword .* offset:64$", c) for c in code)
    assert any(re.match(r"global_load_dword v\d+, v\d+, s\[\d+:\d+\] offset:-64$", c) for c in code)
    assert any(re.match(r"ds_write_b32 v\d+, v\d+ offset:132$", c) for c in code)
    assert any(c.startswith("v_add_u32") and ", 8," in c for c in code)  # r5 is read twice: kept


def test_a_kernel_without_params_takes_the_registers_it_reads_first() -> None:
    """As every backend (lift.preset_count): flat_saxpy reads r0..r3 before writing them."""
    prog = wg.assemble((Path(__file__).resolve().parents[3] / "examples" / "flat_saxpy.wave").read_text(), "f.wave")
    c = AMDGCNRenderer("gfx942").compile(prog.kernels[0])
    assert c.info.nargs == 4
    text = AMDGCNRenderer("gfx942").render(prog.kernels[0]).source
    assert "s_load_dwordx4 s[" in text.split("s_waitcnt")[1]  # r0..r3 from kernarg offset 16
    assert ".name: !str a3" in text and ".name: !str a4" not in text


@pytest.mark.parametrize(
    ("k", "form"),
    [(1, "swizzle(SWAP,1)"), (16, "swizzle(SWAP,16)"), (3, "swizzle(REVERSE,4)"), (5, 'swizzle(BITMASK_PERM,"ppipi")')],
)
def test_xor_shuffles_by_a_constant_below_32_use_ds_swizzle(k: int, form: str, tmp_path: Path) -> None:
    src = f".kernel x\n    mov.u32 r0, %tid.x\n    wave.shuffle.xor.b32 r1, r0, {k}\n    shl.b32 r2, r0, 2\n    st.global.b32 [r2], r1\n    ret\n.end\n"
    text = _text(src)
    assert "ds_swizzle_b32 v" in text and f"offset:{form}" in text and "ds_bpermute" not in text
    _assembles(text, "gfx942", tmp_path)


# ---- regressions found by the AMDGCN interpreter (runtime/amdgcn_sim) ---------------------------
def test_broadcast_from_a_lane_that_differs_per_lane_permutes() -> None:
    src = ".kernel b\n    mov.b32 r6, %tid.x\n    shl.b32 r0, r6, 2\n    ld.global.b32 r1, [r0]\n"
    src += "    wave.broadcast.b32 r2, r1, r1\n    st.global.b32 [r0+512], r2\n    ret\n.end\n"
    code = _code(_text(src))
    assert any(c.startswith("ds_bpermute_b32") for c in code)
    assert not any(c.startswith(("v_readlane_b32", "v_readfirstlane_b32")) for c in code)


def test_mul_wide_into_its_own_source_reads_it_first() -> None:
    src = ".kernel m\n    mov.b32 r6, %tid.x\n    shl.b32 r0, r6, 3\n    ld.global.b32 r2, [r0]\n"
    src += "    mul.wide.s32 r2:r3, r2, r6\n    st.global.b64 [r0], r2:r3\n    ret\n.end\n"
    code = _code(_text(src))
    hi = next(i for i, c in enumerate(code) if c.startswith("v_mul_hi_i32"))
    lo = next(i for i, c in enumerate(code) if c.startswith("v_mul_lo_u32"))
    assert hi < lo


def test_an_f64_immediate_is_materialised() -> None:
    src = ".kernel f\n    mov.b32 r6, %tid.x\n    shl.b32 r0, r6, 3\n    ld.global.b64 r8:r9, [r0]\n"
    src += "    sub.f64 r2:r3, r8:r9, 2.5\n    st.global.b64 [r0], r2:r3\n    ret\n.end\n"
    code = _code(_text(src))
    assert any(re.match(r"s_mov_b32 s\d+, 0x40040000$", c) for c in code)  # 2.5: high word
