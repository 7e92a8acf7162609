"""The AMDGCN interpreter (runtime/amdgcn_sim, `device="amdgcn-sim"`): the backend's assembly
for gfx942 and gfx90a run against the emulator, bit for bit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import wavegpu as wg

EX = Path(__file__).resolve().parents[2] / "examples"
ARCHES = ["gfx942", "gfx90a"]


@wg.kernel
def saxpy(a: wg.f32, x: wg.f32[:], y: wg.f32[:], n: wg.i32):
    i = wg.global_id()
    if i < n:
        y[i] = a * x[i] + y[i]


def _example(name: str) -> wg.Program:
    return wg.assemble((EX / name).read_text(), name)


@pytest.mark.parametrize("arch", ARCHES)
def test_vector_add_matches_the_emulator(arch: str) -> None:
    n = 1000
    f = np.random.default_rng(0).random(n).astype(np.float32)
    mem = np.concatenate([f, f * 3, np.zeros(n, np.float32)])
    args = [0, 4 * n, 8 * n, n]
    prog = _example("vector_add.wave")
    a = wg.launch(prog, grid=4, memory=mem, args=args, wave_width=64)
    b = wg.launch(prog, device="amdgcn-sim", arch=arch, grid=4, memory=mem, args=args)
    assert np.array_equal(a.memory, b.memory)
    assert np.array_equal(b.view(np.float32, 8 * n, n), f + f * 3)
    assert b.stats.wave_width == 64 and b.stats.threads == 1024


def test_kernel_calls_take_the_device_and_an_arch() -> None:
    x = np.arange(300, dtype=np.float32)

    want = np.ones(300, np.float32)
    saxpy(2.5, x, want, 300, grid=3, workgroup=128)
    for arch in (None, "gfx90a", "gfx950"):
        y = np.ones(300, np.float32)
        saxpy(2.5, x, y, 300, grid=3, workgroup=128, device="amdgcn-sim", arch=arch)
        assert np.array_equal(y, want), arch


# ---- the interpreter's own rules, on small hand-written kernels --------------------------------
HEAD = """  .amdgcn_target "amdgcn-amd-amdhsa--gfx942"
  .text
  .globl k
  .p2align 8
  .type k,@function
k:
"""
TAIL = """  s_endpgm
.Lfunc_end_k:
  .size k, .Lfunc_end_k-k
  .rodata
  .p2align 6
  .amdhsa_kernel k
    .amdhsa_user_sgpr_count 2
    .amdhsa_user_sgpr_kernarg_segment_ptr 1
    .amdhsa_kernarg_size 48
    .amdhsa_group_segment_fixed_size 256
    .amdhsa_private_segment_fixed_size 0
    .amdhsa_system_sgpr_workgroup_id_x 1
    .amdhsa_system_sgpr_workgroup_id_y 0
    .amdhsa_system_sgpr_workgroup_id_z 0
    .amdhsa_system_vgpr_workitem_id 0
    .amdhsa_next_free_vgpr 8
    .amdhsa_next_free_sgpr 16
    .amdhsa_accum_offset 8
  .end_amdhsa_kernel
  .text
  .amdgpu_metadata
---
amdhsa.kernels:
  - .name: k
    .args:
      - { .name: !str mem, .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global }
      - { .name: !str cmem, .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: constant }
      - { .name: !str a0, .size: 4, .offset: 16, .value_kind: by_value }
...
  .end_amdgpu_metadata
"""


def _sim(
    body: str, mem: np.ndarray, threads: int = 64, arch: str = "gfx942", a0: int = 0, tail: str = TAIL
) -> np.ndarray:
    from wavegpu.runtime.amdgcn_sim import run

    text = HEAD + "\n".join("  " + ln.strip() for ln in body.strip().splitlines()) + "\n" + tail
    m8 = np.ascontiguousarray(mem).view(np.uint8).copy()
    return run(text, "k", (1, 1, 1), (threads, 1, 1), m8, np.zeros(16, np.uint8), [a0], arch).view(mem.dtype)


PRO = """
s_load_dwordx2 s[4:5], s[0:1], 0
s_waitcnt lgkmcnt(0)
v_lshlrev_b32 v1, 2, v0
"""


def test_a_load_read_before_its_wait_is_reported_with_pc_instruction_and_register() -> None:
    from wavegpu.runtime.amdgcn_sim import AmdgcnSimError

    body = PRO + "global_load_dword v2, v1, s[4:5]\nv_add_u32 v3, 1, v2\nglobal_store_dword v1, v3, s[4:5] offset:256"
    with pytest.raises(AmdgcnSimError, match=r"kernel k, pc 4 \(line \d+: `v_add_u32 v3, 1, v2`\) reads v2 before"):
        _sim(body, np.zeros(128, np.uint32))
    ok = body.replace("v_add_u32", "s_waitcnt vmcnt(0)\nv_add_u32")
    out = _sim(ok, np.arange(128, dtype=np.uint32))
    assert np.array_equal(out[64:], np.arange(64) + 1)


def test_a_load_overwritten_before_its_wait_is_reported() -> None:
    from wavegpu.runtime.amdgcn_sim import AmdgcnSimError

    body = PRO + "global_load_dword v2, v1, s[4:5]\nv_mov_b32 v2, 0"
    with pytest.raises(AmdgcnSimError, match="overwrites v2 before the s_waitcnt"):
        _sim(body, np.zeros(64, np.uint32))


def test_vmcnt_drains_in_order_and_scalar_loads_only_at_lgkmcnt_0() -> None:
    from wavegpu.runtime.amdgcn_sim import AmdgcnSimError

    two = PRO + "global_load_dword v2, v1, s[4:5]\nglobal_load_dword v3, v1, s[4:5] offset:4\ns_waitcnt vmcnt(1)\n"
    _sim(two + "v_mov_b32 v4, v2", np.zeros(80, np.uint32))  # the older load is done
    with pytest.raises(AmdgcnSimError, match="reads v3"):
        _sim(two + "v_mov_b32 v4, v3", np.zeros(80, np.uint32))
    # two scalar loads: lgkmcnt(1) guarantees neither (SMEM returns out of order)
    smem = "s_load_dword s6, s[0:1], 16\ns_load_dword s7, s[0:1], 20\ns_waitcnt lgkmcnt(1)\ns_mov_b32 s8, s6"
    with pytest.raises(AmdgcnSimError, match="reads s6 before"):
        _sim(smem, np.zeros(4, np.uint32))
    _sim(smem.replace("lgkmcnt(1)", "lgkmcnt(0)"), np.zeros(4, np.uint32))


def test_a_barrier_with_a_store_in_flight_is_reported() -> None:
    from wavegpu.runtime.amdgcn_sim import AmdgcnSimError

    body = PRO + "ds_write_b32 v1, v0\ns_barrier\nds_read_b32 v2, v1\ns_waitcnt lgkmcnt(0)"
    with pytest.raises(AmdgcnSimError, match="s_barrier while `ds_write_b32 v1, v0`"):
        _sim(body, np.zeros(4, np.uint32))
    _sim(body.replace("s_barrier", "s_waitcnt lgkmcnt(0)\ns_barrier"), np.zeros(4, np.uint32))


def test_hazards_follow_the_target_table() -> None:
    from wavegpu.runtime.amdgcn_sim import AmdgcnSimError

    body = "v_cmp_eq_u32 vcc, 0, v0\nv_cndmask_b32 v1, 0, v0, vcc"
    with pytest.raises(AmdgcnSimError, match=r"hazard: `v_cmp_eq_u32 vcc, 0, v0` .* needs 2 wait state\(s\)"):
        _sim(body, np.zeros(4, np.uint32), arch="gfx942")
    _sim(body, np.zeros(4, np.uint32), arch="gfx90a")  # not a gfx90a hazard
    _sim(body.replace("\n", "\ns_nop 1\n"), np.zeros(4, np.uint32), arch="gfx942")


def test_dpp_bpermute_and_readlane_lane_rules() -> None:
    # lanes 0..47 active; v2 = lane id
    body = (
        PRO
        + """v_mov_b32 v2, v0
v_mov_b32 v3, 1000
v_mov_b32 v4, 1000
s_nop 1
v_add_u32_dpp v3, v2, v2 row_shr:1 row_mask:0xf bank_mask:0xf
v_add_u32_dpp v4, v2, v2 row_shr:1 row_mask:0xf bank_mask:0xf bound_ctrl:0
v_add_u32 v5, 4, v1
ds_bpermute_b32 v6, v5, v2
v_readlane_b32 s8, v2, 47
s_waitcnt lgkmcnt(0)
global_store_dword v1, v3, s[4:5]
global_store_dword v1, v4, s[4:5] offset:256
global_store_dword v1, v6, s[4:5] offset:512
v_mov_b32 v7, s8
global_store_dword v1, v7, s[4:5] offset:768"""
    )
    out = _sim(body, np.zeros(256, np.uint32), threads=48)
    lane = np.arange(48)
    # row_shr:1: lane i reads lane i-1 within its row of 16; the first lane of a row keeps its
    # old value without bound_ctrl and reads 0 with it
    src = np.where(lane % 16 == 0, -1, lane - 1)
    assert np.array_equal(out[:48], np.where(src < 0, 1000, src + lane))
    assert np.array_equal(out[64:112], np.where(src < 0, 0, src) + lane)
    # bpermute from lane i+1: lane 47 reads lane 48, which is inactive: 0
    assert np.array_equal(out[128:176], np.where(lane + 1 < 48, lane + 1, 0))
    assert (out[192:240] == 47).all()


def test_the_parser_refuses_what_the_backend_does_not_emit() -> None:
    from wavegpu.runtime.amdgcn_sim import AmdgcnSimError

    with pytest.raises(AmdgcnSimError, match=r"line 7: `v_sad_u32 v1, v0, v0, v0`: v_sad_u32 is not an instruction"):
        _sim("v_sad_u32 v1, v0, v0, v0", np.zeros(4, np.uint32))
    with pytest.raises(AmdgcnSimError, match="operand 'v0x' is not one the backend emits"):
        _sim("v_mov_b32 v1, v0x", np.zeros(4, np.uint32))
    with pytest.raises(AmdgcnSimError, match=r"label \.Lnowhere is not defined"):
        _sim("s_branch .Lnowhere", np.zeros(4, np.uint32))
    with pytest.raises(AmdgcnSimError, match="beyond the kernel's 8 VGPRs"):
        _sim("v_mov_b32 v9, 0", np.zeros(4, np.uint32))


def test_sgprs_at_or_above_next_free_sgpr_are_refused() -> None:
    """The descriptor says `.amdhsa_next_free_sgpr 16`: s15 is the kernel's, s16 (alone or as
    the top of a pair) is not."""
    from wavegpu.runtime.amdgcn_sim import AmdgcnSimError

    _sim("s_mov_b32 s15, 0", np.zeros(4, np.uint32))
    for body in (
        "s_mov_b32 s16, 0",
        "s_mov_b64 s[15:16], 0",
        "v_add_u32 v1, s17, v0",
        "s_load_dwordx2 s[16:17], s[0:1], 0",
    ):
        with pytest.raises(AmdgcnSimError, match=r"beyond the kernel's 16 SGPRs \(.amdhsa_next_free_sgpr\)"):
            _sim(body, np.zeros(4, np.uint32))
    with pytest.raises(AmdgcnSimError, match=r"no \.amdhsa_next_free_sgpr"):
        _sim("s_nop 0", np.zeros(4, np.uint32), tail=TAIL.replace("    .amdhsa_next_free_sgpr 16\n", ""))


def test_launch_errors_are_wave_errors() -> None:
    prog = _example("vector_add.wave")
    with pytest.raises(wg.WaveError, match="unknown AMDGCN architecture 'gfx1100'"):
        wg.launch(prog, device="amdgcn-sim", arch="gfx1100", memory=64, args=[0, 0, 0, 0])
    with pytest.raises(wg.WaveError, match="wave width 32 is not supported"):
        wg.launch(prog, device="amdgcn-sim", wave_width=32, memory=64, args=[0, 0, 0, 0])
    with pytest.raises(wg.WaveError, match="applies to device='amdgcn-sim' only"):
        wg.launch(prog, arch="gfx942", memory=64, args=[0, 0, 0, 0])
    with pytest.raises(wg.WaveError, match="outside every buffer"):
        wg.launch(prog, device="amdgcn-sim", memory=64, args=[0, 4096, 0, 64], grid=1)
    assert "amdgcn-sim" in wg.devices()


# ---- spilled kernels: AGPRs and SGPRs in VGPR lanes, run against the emulator --------------------
def _spill_case(src: str, args: list[int], mem: np.ndarray, arch: str, **budget: int) -> None:
    from wavegpu.backends.amdgcn import AMDGCNRenderer
    from wavegpu.runtime.amdgcn_sim import run

    k = wg.assemble(src, "m.wave").kernels[0]
    r = AMDGCNRenderer(arch, **budget)
    c = r.compile(k, nargs=len(args))
    assert c.spilled_vgprs or c.spilled_sgprs
    text = r.render(k, nargs=len(args)).source
    want = wg.launch(k, workgroup=64, memory=mem, args=args, wave_width=64).memory
    got = run(text, k.name, (1, 1, 1), (64, 1, 1), mem.view(np.uint8).copy(), np.zeros(16, np.uint8), args, arch)
    assert np.array_equal(want, got[: want.size])


@pytest.mark.parametrize("arch", ARCHES)
def test_a_kernel_spilled_to_agprs_runs(arch: str) -> None:
    src = ".kernel many\n.param a, buffer, u32\n    mov.u32 r1, %tid.x\n    shl.b32 r1, r1, 2\n    add.u32 r1, r0, r1\n"
    src += "".join(f"    ld.global.u32 r{i + 1}, [r1+{4 * i}]\n" for i in range(2, 30))
    src += "    mov.u32 r40, 0\n"
    src += "".join(f"    mul.lo.u32 r40, r40, r{i + 1}\n    add.u32 r40, r40, r{i + 1}\n" for i in range(2, 30))
    src += "    st.global.b32 [r1], r40\n    ret\n.end\n"
    mem = np.random.default_rng(3).integers(0, 2**32, 64 + 32, dtype=np.uint64).astype(np.uint32)
    _spill_case(src, [0], mem, arch, max_vgprs=8)


def test_a_kernel_spilled_to_vgpr_lanes_runs() -> None:
    src = ".kernel many\n" + "".join(f".param p{i}, scalar, u32\n" for i in range(20))
    src += "    mov.u32 r30, %tid.x\n    mov.u32 r31, 0\n"
    src += "".join(f"    mul.lo.u32 r31, r31, r{i}\n    add.u32 r31, r31, r{i}\n" for i in range(20))
    src += "    add.u32 r31, r31, r30\n    shl.b32 r30, r30, 2\n    st.global.b32 [r30], r31\n    ret\n.end\n"
    _spill_case(src, [3 * i + 1 for i in range(20)], np.zeros(64, np.uint32), "gfx942", max_sgprs=16)


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("ids", ["%tid.y", "%tid.z", "%ctaid.y", "%ctaid.z", "%ntid.z", "%nctaid.y"])
def test_work_item_and_group_ids_follow_the_abi(arch: str, ids: str) -> None:
    """Packed work-item ids in v0 and the workgroup ids densely after the user SGPRs, for 3-D
    launches; the stored value reads one id (the index uses all of them)."""
    src = f"""
.kernel ids
.registers 8
    mov.u32 r1, %tid.x
    mov.u32 r2, %tid.y
    mov.u32 r3, %tid.z
    mad.lo.u32 r2, r3, 4, r2
    mad.lo.u32 r1, r2, 4, r1
    mov.u32 r5, %ctaid.x
    mov.u32 r2, %ctaid.y
    mov.u32 r3, %ctaid.z
    mad.lo.u32 r2, r3, 3, r2
    mad.lo.u32 r5, r2, 2, r5
    mad.lo.u32 r1, r5, 64, r1
    shl.b32 r1, r1, 2
    mov.u32 r7, {ids}
    st.global.u32 [r1], r7
    ret
.end
"""
    k = wg.assemble(src, "ids.wave").kernels[0]
    kw = {"grid": (2, 3, 2), "workgroup": (4, 4, 4), "memory": 4 * 64 * 12}
    a = wg.launch(k, wave_width=64, **kw).memory
    b = wg.launch(k, device="amdgcn-sim", arch=arch, **kw).memory
    assert np.array_equal(a, b)


@pytest.mark.parametrize("arch", ARCHES)
def test_a_z_group_id_without_y_arrives_densely(arch: str) -> None:
    src = """
.kernel z
.registers 4
    mov.u32 r1, %tid.x
    mov.u32 r2, %ctaid.z
    mad.lo.u32 r1, r2, 64, r1
    shl.b32 r1, r1, 2
    add.u32 r3, r2, 100
    st.global.u32 [r1], r3
    ret
.end
"""
    k = wg.assemble(src, "z.wave").kernels[0]
    text = wg.translate(k, "amdgcn", arch=arch)
    assert ".amdhsa_system_sgpr_workgroup_id_y 0" in text and ".amdhsa_system_sgpr_workgroup_id_z 1" in text
    kw = {"grid": (1, 1, 3), "workgroup": 64, "memory": 4 * 64 * 3}
    b = wg.launch(k, device="amdgcn-sim", arch=arch, **kw)
    assert np.array_equal(b.memory, wg.launch(k, wave_width=64, **kw).memory)
    assert np.array_equal(b.view(np.uint32), np.repeat([100, 101, 102], 64))


# ---- fence.device: the per-target cache instructions ------------------------------------------
FENCE = """
.kernel f
.param out, buffer, u32
.workgroup_size 64, 1, 1
    mov.u32 r1, %tid.x
    shl.b32 r2, r1, 2
    add.u32 r2, r0, r2
    st.global.u32 [r2], r1
    fence.device
    ld.global.u32 r3, [r2]
    add.u32 r3, r3, 5
    st.global.u32 [r2+256], r3
    ret
.end
"""


@pytest.mark.parametrize("arch", ["gfx942", "gfx950", "gfx90a"])
def test_a_device_fence_runs_with_the_targets_cache_instructions(arch: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """gfx942/gfx950 write back with `buffer_wbl2 sc1` and invalidate with `buffer_inv sc1`
    (device scope in SC1:SC0); gfx90a invalidates its L1 with `buffer_wbinvl1_vol`."""
    from wavegpu.runtime.amdgcn_sim import execute

    k = wg.assemble(FENCE, "f.wave").kernels[0]
    text = wg.translate(k, "amdgcn", arch=arch)
    seen: list[tuple[str, str]] = []
    real = execute.cache_scope

    def spy(w: object, inst: object) -> str:
        scope = real(w, inst)  # type: ignore[arg-type]
        seen.append((inst.base, scope))  # type: ignore[attr-defined]
        return scope

    monkeypatch.setattr(execute, "cache_scope", spy)
    kw = {"grid": 1, "workgroup": 64, "memory": 512, "args": [0]}
    got = wg.launch(k, device="amdgcn-sim", arch=arch, **kw)
    assert np.array_equal(got.memory, wg.launch(k, wave_width=64, **kw).memory)
    assert np.array_equal(got.view(np.uint32)[64:128], np.arange(64) + 5)
    if arch == "gfx90a":
        assert "buffer_wbinvl1_vol" in text and seen == [("buffer_wbinvl1_vol", "device")]
    else:
        assert "buffer_wbl2 sc1" in text and "buffer_inv sc1" in text
        assert seen == [("buffer_wbl2", "device"), ("buffer_inv", "device")]


def test_cache_instructions_are_checked_against_the_target() -> None:
    from wavegpu.runtime.amdgcn_sim import AmdgcnSimError

    z = np.zeros(4, np.uint32)
    for body in ("buffer_inv sc0 sc1", "buffer_wbl2 sc0", "buffer_inv", "buffer_wbinvl1_vol"):
        _sim(body + "\ns_waitcnt vmcnt(0)", z, arch="gfx942")
    with pytest.raises(AmdgcnSimError, match="glc is not a cache bit of gfx942"):
        _sim("buffer_wbl2 glc", z, arch="gfx942")
    with pytest.raises(AmdgcnSimError, match="gfx940-family instruction, not gfx90a"):
        _sim("buffer_inv sc1", z, arch="gfx90a")
    with pytest.raises(AmdgcnSimError, match="does not exist on gfx950"):
        _sim("buffer_wbinvl1_vol", z, arch="gfx950")
    with pytest.raises(AmdgcnSimError, match="takes no cache bits"):
        _sim("buffer_wbinvl1_vol sc1", z, arch="gfx90a")
