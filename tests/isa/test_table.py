"""The instruction table: completeness against spec section 6, consistency, capabilities."""

from __future__ import annotations

import pytest

import wavegpu as wg
from wavegpu.isa import BY_KEY, BY_MNEMONIC, ROWS, Kind, Role
from wavegpu.isa.capabilities import CONSTANT_MINIMUMS, EMULATOR, OPTIONAL_CAPABILITIES, occupancy
from wavegpu.isa.registers import SPECIAL_REGISTERS

# Every instruction the spec's section 6 tables name (with our canonical spelling).
SPEC_SECTION_6 = [
    "add.s32",
    "add.u32",
    "sub.s32",
    "mul.lo.s32",
    "mul.hi.s32",
    "mul.wide.s32",
    "mad.lo.s32",
    "div.s32",
    "rem.s32",
    "neg.s32",
    "abs.s32",
    "min.s32",
    "max.s32",
    "and.b32",
    "or.b32",
    "xor.b32",
    "not.b32",
    "shl.b32",
    "shr.u32",
    "shr.s32",
    "popc.b32",
    "clz.b32",
    "brev.b32",
    "bfe.u32",
    "bfi.b32",
    "add.f32",
    "sub.f32",
    "mul.f32",
    "fma.f32",
    "div.f32",
    "rcp.f32",
    "sqrt.f32",
    "rsqrt.f32",
    "neg.f32",
    "abs.f32",
    "min.f32",
    "max.f32",
    "sin.f32",
    "cos.f32",
    "exp2.f32",
    "log2.f32",
    "add.f16x2",
    "mul.f16x2",
    "fma.f16x2",
    "add.f64",
    "mul.f64",
    "fma.f64",
    "div.f64",
    "cvt.f32.s32",
    "cvt.f32.u32",
    "cvt.s32.f32",
    "cvt.rni.s32.f32",
    "cvt.f16.f32",
    "cvt.f32.f16",
    "cvt.f64.f32",
    "cvt.f32.f64",
    "setp.eq.s32",
    "setp.ne.s32",
    "setp.lt.s32",
    "setp.le.s32",
    "setp.gt.s32",
    "setp.ge.s32",
    "selp.s32",
    "slct.s32.f32",
    "setp.eq.f32",
    "setp.neu.f32",
    "ld.local.b32",
    "ld.local.b64",
    "ld.global.b32",
    "ld.const.b32",
    "st.local.b32",
    "st.global.b32",
    "ld.global.v2.b32",
    "ld.global.v4.b32",
    "atom.local.add.u32",
    "atom.global.add.u32",
    "atom.global.cas.b32",
    "atom.global.exch.b32",
    "atom.global.min.s32",
    "atom.global.max.s32",
    "wave.reduce.add.u32",
    "wave.reduce.min.s32",
    "wave.reduce.max.s32",
    "wave.reduce.and.b32",
    "wave.reduce.or.b32",
    "wave.broadcast.b32",
    "wave.shuffle.b32",
    "wave.shuffle.xor.b32",
    "wave.shuffle.up.b32",
    "wave.shuffle.down.b32",
    "wave.prefix.add.u32",
    "wave.ballot.b32",
    "wave.any",
    "wave.all",
    "barrier",
    "fence.wave",
    "fence.workgroup",
    "fence.device",
    "if",
    "else",
    "endif",
    "loop",
    "endloop",
    "break",
    "continue",
    "ret",
    "mma.m16n8k8.f32.f16",
]

# Section 4: atomics required on local and device memory.
SPEC_ATOMICS = [
    f"atom.{sp}.{op}"
    for sp in ("local", "global")
    for op in (
        "add.u32",
        "sub.u32",
        "min.s32",
        "max.s32",
        "min.u32",
        "max.u32",
        "and.b32",
        "or.b32",
        "xor.b32",
        "exch.b32",
        "cas.b32",
    )
]

ISSUE_EXTRAS = [
    "ld.global.u8",
    "ld.global.s8",
    "ld.global.u16",
    "ld.global.s16",
    "ld.global.b64",
    "ld.local.u8",
    "ld.const.v4.b32",
    "st.global.b8",
    "st.global.b16",
    "st.global.b64",
    "st.global.v2.b32",
    "st.global.v4.b32",
    "st.local.b8",
    "setp.lt.u32",
    "setp.ltu.f32",
    "setp.equ.f32",
    "setp.num.f32",
    "setp.nan.f32",
    "min.u32",
    "max.u32",
    "wave.reduce.min.u32",
    "mov.b32",
    "nop",
    "cvt.rmi.f32.f32",
    "cvt.rpi.f32.f32",
    "cvt.rni.f32.f32",
    "cvt.rzi.f32.f32",
    "clamp.s32",
    "clamp.f32",
    "sat.f32",
    "add.f16",
    "mul.f16",
    "fma.f16",
    "red.global.add.u32",
    "cvt.u32.f32",
    "cvt.rmi.s32.f32",
]


@pytest.mark.parametrize("mnemonic", SPEC_SECTION_6 + SPEC_ATOMICS + ISSUE_EXTRAS)
def test_every_spec_instruction_has_a_row(mnemonic: str) -> None:
    assert mnemonic in BY_MNEMONIC, mnemonic


def test_spec_rows_are_not_marked_extension() -> None:
    for m in SPEC_SECTION_6:
        rows = BY_MNEMONIC[m]
        assert any(not r.ext for r in rows), f"{m} is in the spec but marked as an extension"


def test_codes_and_keys_unique_and_in_range() -> None:
    codes = {(r.opcode, r.mod) for r in ROWS}
    assert len(codes) == len(ROWS)
    assert len({r.key for r in ROWS}) == len(ROWS)
    for r in ROWS:
        assert 0 <= r.opcode < 256 and 0 <= r.mod < 64
        assert r.doc and r.cls
        assert len(r.operands) <= 5


def test_rows_are_self_consistent() -> None:
    for r in ROWS:
        if r.space is not None:
            assert r.mem_index is not None or r.cls in ("atomic",), r.key
            assert r.width in (1, 2, 4, 8, 16), r.key
        if r.cls == "store" or r.cls == "atomic":
            assert r.side_effects, r.key
        if r.control:
            assert r.cls == "control"
        if r.barrier:
            assert not r.guardable
        kinds = [o.kind for o in r.operands]
        assert kinds.count(Kind.MEM) <= 1
        for o in r.operands:
            if o.kind is Kind.PAIR:
                assert o.dtype.bits == 64, r.key
            if o.kind is Kind.SREG or o.kind is Kind.MEM:
                assert o.role is Role.SRC


def test_memory_rows_cover_every_width_and_space() -> None:
    for sp in ("global", "local", "const"):
        for w in ("u8", "s8", "u16", "s16", "b32", "b64", "v2.b32", "v4.b32"):
            assert f"ld.{sp}.{w}" in BY_KEY
    for sp in ("global", "local"):
        for w in ("b8", "b16", "b32", "b64", "v2.b32", "v4.b32"):
            assert f"st.{sp}.{w}" in BY_KEY
    assert "st.const.b32" not in BY_MNEMONIC  # constant memory is read-only


def test_special_registers() -> None:
    names = {s.name for s in SPECIAL_REGISTERS}
    for n in (
        "%tid.x",
        "%tid.y",
        "%tid.z",
        "%wid",
        "%lid",
        "%ctaid.x",
        "%ntid.z",
        "%nctaid.y",
        "%nwaves",
        "%clock",
        "%wave_width",
    ):
        assert n in names
    assert len({s.id for s in SPECIAL_REGISTERS}) == len(SPECIAL_REGISTERS)


def test_capabilities_meet_spec_minimums() -> None:
    for name, minimum in CONSTANT_MINIMUMS.items():
        assert wg.get_capability("emulator", name) >= minimum
    for name in OPTIONAL_CAPABILITIES:
        assert isinstance(wg.get_capability("emulator", name), bool)
    assert wg.get_capability("emulator", "WAVE_CAP_WAVE_WIDTH") == 32
    assert wg.get_capability("emulator", "WAVE_CAP_F64") is True
    assert wg.get_capability(EMULATOR, "mma_m") == 16
    assert wg.get_capability(EMULATOR.with_wave_width(16), "CAP_MMA") is False


def test_capability_errors() -> None:
    with pytest.raises(wg.WaveError):
        wg.get_capability("emulator", "NO_SUCH_THING")
    with pytest.raises(wg.WaveError):
        wg.get_capability("no-such-device", "WAVE_WIDTH")
    with pytest.raises(wg.WaveError):
        wg.get_capability(42, "WAVE_WIDTH")


def test_occupancy_equation() -> None:
    # F = 256 KiB, W = 32: floor(262144 / (R * 32 * 4))
    assert occupancy(EMULATOR, 32, 0, 256) == 64
    assert occupancy(EMULATOR, 128, 0, 256) == 16
    assert occupancy(EMULATOR, 256, 0, 256) == 8
    # local memory bounds: 65536 / 32768 = 2 workgroups of 8 waves
    assert occupancy(EMULATOR, 16, 32768, 256) == 16
