"""The flat dialect of the Rust toolchain: every mnemonic maps onto its canonical instruction."""

from __future__ import annotations

import pytest

import wavegpu as wg
from wavegpu.asm.flat import FLAT

# (flat line, canonical line) pairs; together they use every mnemonic of COMPAT.md.
PAIRS = [
    ("iadd r1, r2, r3", "add.s32 r1, r2, r3"),
    ("isub r1, r2, r3", "sub.s32 r1, r2, r3"),
    ("imul r1, r2, r3", "mul.lo.s32 r1, r2, r3"),
    ("imul_hi r1, r2, r3", "mul.hi.u32 r1, r2, r3"),
    ("imad r1, r2, r3, r4", "mad.lo.s32 r1, r2, r3, r4"),
    ("idiv r1, r2, r3", "div.s32 r1, r2, r3"),
    ("imod r1, r2, r3", "rem.s32 r1, r2, r3"),
    ("ineg r1, r2", "neg.s32 r1, r2"),
    ("iabs r1, r2", "abs.s32 r1, r2"),
    ("imin r1, r2, r3", "min.s32 r1, r2, r3"),
    ("imax r1, r2, r3", "max.s32 r1, r2, r3"),
    ("iclamp r1, r2, r3, r4", "clamp.s32 r1, r2, r3, r4"),
    ("fadd r1, r2, r3", "add.f32 r1, r2, r3"),
    ("fsub r1, r2, r3", "sub.f32 r1, r2, r3"),
    ("fmul r1, r2, r3", "mul.f32 r1, r2, r3"),
    ("fdiv r1, r2, r3", "div.f32 r1, r2, r3"),
    ("fmin r1, r2, r3", "min.f32 r1, r2, r3"),
    ("fmax r1, r2, r3", "max.f32 r1, r2, r3"),
    ("fma r1, r2, r3, r4", "fma.f32 r1, r2, r3, r4"),
    ("fneg r1, r2", "neg.f32 r1, r2"),
    ("fabs r1, r2", "abs.f32 r1, r2"),
    ("fsqrt r1, r2", "sqrt.f32 r1, r2"),
    ("frsqrt r1, r2", "rsqrt.f32 r1, r2"),
    ("frcp r1, r2", "rcp.f32 r1, r2"),
    ("fsin r1, r2", "sin.f32 r1, r2"),
    ("fcos r1, r2", "cos.f32 r1, r2"),
    ("fexp2 r1, r2", "exp2.f32 r1, r2"),
    ("flog2 r1, r2", "log2.f32 r1, r2"),
    ("ffloor r1, r2", "cvt.rmi.f32.f32 r1, r2"),
    ("fceil r1, r2", "cvt.rpi.f32.f32 r1, r2"),
    ("fround r1, r2", "cvt.rni.f32.f32 r1, r2"),
    ("ftrunc r1, r2", "cvt.rzi.f32.f32 r1, r2"),
    ("ffract r1, r2", "fract.f32 r1, r2"),
    ("fsat r1, r2", "sat.f32 r1, r2"),
    ("fclamp r1, r2, r3, r4", "clamp.f32 r1, r2, r3, r4"),
    ("hadd r1, r2, r3", "add.f16 r1, r2, r3"),
    ("hsub r1, r2, r3", "sub.f16 r1, r2, r3"),
    ("hmul r1, r2, r3", "mul.f16 r1, r2, r3"),
    ("hma r1, r2, r3, r4", "fma.f16 r1, r2, r3, r4"),
    ("hadd2 r1, r2, r3", "add.f16x2 r1, r2, r3"),
    ("hmul2 r1, r2, r3", "mul.f16x2 r1, r2, r3"),
    ("hma2 r1, r2, r3, r4", "fma.f16x2 r1, r2, r3, r4"),
    ("badd r1, r2, r3", "add.bf16 r1, r2, r3"),
    ("bsub r1, r2, r3", "sub.bf16 r1, r2, r3"),
    ("bmul r1, r2, r3", "mul.bf16 r1, r2, r3"),
    ("bma r1, r2, r3, r4", "fma.bf16 r1, r2, r3, r4"),
    ("badd2 r1, r2, r3", "add.bf16x2 r1, r2, r3"),
    ("bmul2 r1, r2, r3", "mul.bf16x2 r1, r2, r3"),
    ("bma2 r1, r2, r3, r4", "fma.bf16x2 r1, r2, r3, r4"),
    ("dadd r0, r2, r4", "add.f64 r0:r1, r2:r3, r4:r5"),
    ("dsub r0, r2, r4", "sub.f64 r0:r1, r2:r3, r4:r5"),
    ("dmul r0, r2, r4", "mul.f64 r0:r1, r2:r3, r4:r5"),
    ("ddiv r0, r2, r4", "div.f64 r0:r1, r2:r3, r4:r5"),
    ("dma r0, r2, r4, r6", "fma.f64 r0:r1, r2:r3, r4:r5, r6:r7"),
    ("dsqrt r0, r2", "sqrt.f64 r0:r1, r2:r3"),
    ("and r1, r2, r3", "and.b32 r1, r2, r3"),
    ("or r1, r2, r3", "or.b32 r1, r2, r3"),
    ("xor r1, r2, r3", "xor.b32 r1, r2, r3"),
    ("shl r1, r2, r3", "shl.b32 r1, r2, r3"),
    ("not r1, r2", "not.b32 r1, r2"),
    ("shr r1, r2, r3", "shr.u32 r1, r2, r3"),
    ("sar r1, r2, r3", "shr.s32 r1, r2, r3"),
    ("bitcount r1, r2", "popc.b32 r1, r2"),
    ("bitfind r1, r2", "clz.b32 r1, r2"),
    ("bitrev r1, r2", "brev.b32 r1, r2"),
    ("bfe r1, r2, r3, r4", "bfe.u32 r1, r2, r3, r4"),
    ("bfi r1, r2, r3, r4, r5", "bfi.b32 r1, r3, r4, r5, r2"),
    ("icmp_eq p1, r2, r3", "setp.eq.s32 p1, r2, r3"),
    ("icmp_ne p1, r2, r3", "setp.ne.s32 p1, r2, r3"),
    ("icmp_lt p1, r2, r3", "setp.lt.s32 p1, r2, r3"),
    ("icmp_le p1, r2, r3", "setp.le.s32 p1, r2, r3"),
    ("icmp_gt p1, r2, r3", "setp.gt.s32 p1, r2, r3"),
    ("icmp_ge p1, r2, r3", "setp.ge.s32 p1, r2, r3"),
    ("ucmp_lt p1, r2, r3", "setp.lt.u32 p1, r2, r3"),
    ("ucmp_le p1, r2, r3", "setp.le.u32 p1, r2, r3"),
    ("fcmp_eq p1, r2, r3", "setp.eq.f32 p1, r2, r3"),
    ("fcmp_lt p1, r2, r3", "setp.lt.f32 p1, r2, r3"),
    ("fcmp_le p1, r2, r3", "setp.le.f32 p1, r2, r3"),
    ("fcmp_gt p1, r2, r3", "setp.gt.f32 p1, r2, r3"),
    ("fcmp_ge p1, r2, r3", "setp.ge.f32 p1, r2, r3"),
    ("fcmp_ne p1, r2, r3", "setp.neu.f32 p1, r2, r3"),
    ("fcmp_ord p1, r2, r3", "setp.num.f32 p1, r2, r3"),
    ("fcmp_unord p1, r2, r3", "setp.nan.f32 p1, r2, r3"),
    ("select r1, p2, r3, r4", "selp.b32 r1, r3, r4, p2"),
    ("cvt_f32_i32 r1, r2", "cvt.f32.s32 r1, r2"),
    ("cvt_f32_u32 r1, r2", "cvt.f32.u32 r1, r2"),
    ("cvt_i32_f32 r1, r2", "cvt.s32.f32 r1, r2"),
    ("cvt_u32_f32 r1, r2", "cvt.u32.f32 r1, r2"),
    ("cvt_f32_f16 r1, r2", "cvt.f32.f16 r1, r2"),
    ("cvt_f16_f32 r1, r2", "cvt.f16.f32 r1, r2"),
    ("cvt_f32_f64 r1, r2", "cvt.f32.f64 r1, r2:r3"),
    ("cvt_f64_f32 r2, r1", "cvt.f64.f32 r2:r3, r1"),
    ("local_load_u8 r1, r2", "ld.local.u8 r1, [r2]"),
    ("local_load_u16 r1, r2", "ld.local.u16 r1, [r2]"),
    ("local_load_u32 r1, r2", "ld.local.b32 r1, [r2]"),
    ("local_load_u64 r2, r1", "ld.local.b64 r2:r3, [r1]"),
    ("local_store_u8 r1, r2", "st.local.b8 [r1], r2"),
    ("local_store_u16 r1, r2", "st.local.b16 [r1], r2"),
    ("local_store_u32 r1, r2", "st.local.b32 [r1], r2"),
    ("local_store_u64 r1, r2", "st.local.b64 [r1], r2:r3"),
    ("device_load_u8 r1, r2", "ld.global.u8 r1, [r2]"),
    ("device_load_u16 r1, r2", "ld.global.u16 r1, [r2]"),
    ("device_load_u32 r1, r2", "ld.global.b32 r1, [r2]"),
    ("device_load_u64 r2, r1", "ld.global.b64 r2:r3, [r1]"),
    ("device_load_u128 r4, r1", "ld.global.v4.b32 {r4, r5, r6, r7}, [r1]"),
    ("device_store_u8 r1, r2", "st.global.b8 [r1], r2"),
    ("device_store_u16 r1, r2", "st.global.b16 [r1], r2"),
    ("device_store_u32 r1, r2", "st.global.b32 [r1], r2"),
    ("device_store_u64 r1, r2", "st.global.b64 [r1], r2:r3"),
    ("device_store_u128 r1, r4", "st.global.v4.b32 [r1], {r4, r5, r6, r7}"),
    ("local_atomic_add r1, r2, r3", "atom.local.add.u32 r1, [r2], r3"),
    ("local_atomic_add r2, r3", "red.local.add.u32 [r2], r3"),
    ("local_atomic_sub r1, r2, r3", "atom.local.sub.u32 r1, [r2], r3"),
    ("local_atomic_min r1, r2, r3", "atom.local.min.u32 r1, [r2], r3"),
    ("local_atomic_max r1, r2, r3", "atom.local.max.u32 r1, [r2], r3"),
    ("local_atomic_and r1, r2, r3", "atom.local.and.b32 r1, [r2], r3"),
    ("local_atomic_or r1, r2, r3", "atom.local.or.b32 r1, [r2], r3"),
    ("local_atomic_xor r1, r2, r3", "atom.local.xor.b32 r1, [r2], r3"),
    ("local_atomic_exchange r1, r2, r3", "atom.local.exch.b32 r1, [r2], r3"),
    ("local_atomic_cas r1, r2, r3, r4", "atom.local.cas.b32 r1, [r2], r3, r4"),
    ("local_atomic_cas r2, r3, r4", "red.local.cas.b32 [r2], r3, r4"),
    ("atomic_add r1, r2, r3, .device", "atom.global.add.u32 r1, [r2], r3"),
    ("atomic_add r2, r3, device", "red.global.add.u32 [r2], r3"),
    ("atomic_sub r1, r2, r3, .workgroup", "atom.global.sub.u32 r1, [r2], r3"),
    ("atomic_min r1, r2, r3, .device", "atom.global.min.u32 r1, [r2], r3"),
    ("atomic_max r1, r2, r3, .device", "atom.global.max.u32 r1, [r2], r3"),
    ("atomic_and r1, r2, r3, .device", "atom.global.and.b32 r1, [r2], r3"),
    ("atomic_or r1, r2, r3, .device", "atom.global.or.b32 r1, [r2], r3"),
    ("atomic_xor r1, r2, r3, .device", "atom.global.xor.b32 r1, [r2], r3"),
    ("atomic_exchange r1, r2, r3, .system", "atom.global.exch.b32 r1, [r2], r3"),
    ("atomic_cas r1, r2, r3, r4, .device", "atom.global.cas.b32 r1, [r2], r3, r4"),
    ("atomic_cas r2, r3, r4, .wave", "red.global.cas.b32 [r2], r3, r4"),
    ("wave_shuffle r1, r2, r3", "wave.shuffle.b32 r1, r2, r3"),
    ("wave_shuffle_up r1, r2, r3", "wave.shuffle.up.b32 r1, r2, r3"),
    ("wave_shuffle_down r1, r2, r3", "wave.shuffle.down.b32 r1, r2, r3"),
    ("wave_shuffle_xor r1, r2, r3", "wave.shuffle.xor.b32 r1, r2, r3"),
    ("wave_broadcast r1, r2, r3", "wave.broadcast.b32 r1, r2, r3"),
    ("wave_ballot r1, p2", "wave.ballot.b32 r1, p2"),
    ("wave_any p1, p2", "wave.any p1, p2"),
    ("wave_all p1, p2", "wave.all p1, p2"),
    ("wave_prefix_sum r1, r2", "wave.prefix.add.u32 r1, r2"),
    ("wave_reduce_add r1, r2", "wave.reduce.add.u32 r1, r2"),
    ("wave_reduce_min r1, r2", "wave.reduce.min.u32 r1, r2"),
    ("wave_reduce_max r1, r2", "wave.reduce.max.u32 r1, r2"),
    ("return", "ret"),
    ("halt", "ret"),
    ("barrier", "barrier"),
    ("nop", "nop"),
    ("wait", "nop"),
    ("fence_acquire .workgroup", "fence.workgroup"),
    ("fence_release .device", "fence.device"),
    ("fence_acq_rel system", "fence.device"),
    ("fence_acq_rel .wave", "fence.wave"),
    ("mov r1, r2", "mov.b32 r1, r2"),
    ("mov_imm r1, 0x1_0000", "mov.b32 r1, 65536"),
    ("mov_imm r1, -2", "mov.b32 r1, 0xfffffffe"),
    ("mov_imm r1, 1.5", "mov.b32 r1, 0x3fc00000"),
    ("mov r1, sr_lane_id", "mov.b32 r1, %lid"),
    ("mov_sr r1, sr_grid_size_y", "mov.b32 r1, %nctaid.y"),
    ("mov_sr r1, sr_wave_width", "mov.b32 r1, %wave_width"),
    ("mov_sr r1, sr_num_waves", "mov.b32 r1, %nwaves"),
    ("@!p1 iadd r1, r2, r3", "@!p1 add.s32 r1, r2, r3"),
    ("device_load_u32.cached r1, r2", "ld.global.b32 r1, [r2]"),
    ("device_load_u32 .streaming r1, r2", "ld.global.b32 r1, [r2]"),
]


def assemble_line(line: str) -> bytes:
    return wg.assemble(f".kernel k\n.registers 16\n.predicates 4\n{line}\n.end\n").to_bytes()


@pytest.mark.parametrize("flat, canonical", PAIRS)
def test_flat_mnemonic(flat: str, canonical: str) -> None:
    assert assemble_line(flat) == assemble_line(canonical)


def test_every_flat_mnemonic_is_tested() -> None:
    used = {p[0].lstrip("@!p1 ").split()[0].split(".")[0] for p in PAIRS}
    missing = set(FLAT) - used
    assert not missing, missing


def test_structured_control_flow_in_flat_dialect() -> None:
    src = """
.kernel flat
top: mov_imm r1, 0
loop
    icmp_ge p0, r1, r2
    break p0
    if p1
        continue p1
    endif
    iadd r1, r1, r3
endloop
halt
.end
"""
    names = [i.spec.name for i in wg.assemble(src).kernels[0].instructions]
    assert names == [
        "mov.b32",
        "loop",
        "setp.ge.s32",
        "break",
        "if",
        "continue",
        "endif",
        "add.s32",
        "endloop",
        "ret",
    ]


@pytest.mark.parametrize(
    "line, message",
    [
        ("call foo", "not part of WAVE v0.1"),
        ("mma_load_a r1, r2", "not part of WAVE v0.1"),
        ("mma_compute r1, r2", "not part of WAVE v0.1"),
        ("dadd r1, r2, r4", "even register pair"),
        ("atomic_add r1, r2, r3, r4", "scope"),
        ("iadd r1, r2", "takes 3 operands"),
        ("fence_acquire", "SCOPE"),
    ],
)
def test_flat_errors(line: str, message: str) -> None:
    with pytest.raises(wg.AsmError) as ei:
        assemble_line(line)
    assert message in str(ei.value)
