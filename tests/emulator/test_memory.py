"""Spec section 4: memory spaces, widths, sign extension, atomics (old values in lane order)."""

from __future__ import annotations

import numpy as np
import pytest
from kit import run

import wavegpu as wg


def test_load_widths_and_extension() -> None:
    mem = np.array(
        [0x80, 0xFF, 0x01, 0x80, 0x11, 0x22, 0x33, 0x44, 1, 2, 3, 4, 5, 6, 7, 8] + [0] * 64,
        np.uint8,
    )
    src = """.kernel t
    ld.global.u8 r1, [0]
    ld.global.s8 r2, [0]
    ld.global.u16 r3, [2]
    ld.global.s16 r4, [2]
    ld.global.b32 r5, [4]
    ld.global.b64 r6:r7, [8]
    ld.global.v2.b32 {r8, r9}, [8]
    ld.global.v4.b32 {r10, r11, r12, r13}, [0]
    st.global.v4.b32 [16], {r1, r2, r3, r4}
    st.global.b32 [32], r5
    st.global.b64 [40], r6:r7
    st.global.v2.b32 [48], {r8, r9}
    st.global.v4.b32 [64], {r10, r11, r12, r13}
    .end"""
    out = run(src, workgroup=1, memory=mem).memory
    w = out.view(np.uint32)
    assert list(w[4:8]) == [0x80, 0xFFFFFF80, 0x8001, 0xFFFF8001]
    assert w[8] == 0x44332211
    assert list(w[10:12]) == [0x04030201, 0x08070605]
    assert list(w[12:14]) == [0x04030201, 0x08070605]
    assert bytes(out[64:80]) == bytes(mem[0:16])


def test_narrow_stores_keep_neighbours() -> None:
    src = """.kernel t
    mov.b32 r1, 0xAABBCCDD
    st.global.b8 [1], r1
    st.global.b16 [6], r1
    .end"""
    out = run(src, workgroup=1, memory=bytes([0x11] * 8)).memory
    assert list(out) == [0x11, 0xDD, 0x11, 0x11, 0x11, 0x11, 0xDD, 0xCC]


def test_memory_offsets_and_wraparound() -> None:
    src = """.kernel t
    mov.b32 r1, 8
    mov.b32 r2, 7
    st.global.b32 [r1-4], r2
    mov.b32 r3, 0xFFFFFFFC
    st.global.b32 [r3+8], r2
    .end"""
    w = run(src, workgroup=1, memory=16).memory.view(np.uint32)
    assert list(w) == [0, 7, 0, 0]  # [8-4] and [0xFFFFFFFC+8] (wraps to 4) are the same word


def test_local_memory_is_per_workgroup_and_zeroed() -> None:
    src = """.kernel t
    .local_memory 64
    mov.u32 r1, %tid.x
    mov.u32 r2, %ctaid.x
    shl.b32 r3, r1, 2
    ld.local.b32 r4, [r3]          // zero at workgroup start
    add.u32 r5, r2, 100
    st.local.b32 [r3], r5
    barrier
    xor.b32 r6, r1, 1
    shl.b32 r6, r6, 2
    ld.local.b32 r7, [r6]          // the neighbour's value, same workgroup
    add.u32 r7, r7, r4
    mov.u32 r8, %ntid.x
    mad.lo.s32 r9, r2, r8, r1
    shl.b32 r9, r9, 2
    st.global.b32 [r9], r7
    .end"""
    res = run(src, grid=3, workgroup=4, memory=48, check=True)
    assert list(res.memory.view(np.uint32)) == [100] * 4 + [101] * 4 + [102] * 4


def test_constant_memory() -> None:
    src = """.kernel t
    mov.u32 r1, %tid.x
    shl.b32 r1, r1, 2
    ld.const.b32 r2, [r1]
    st.global.b32 [r1], r2
    .end"""
    consts = np.array([5, 6, 7, 8], np.uint32)
    res = run(src, workgroup=4, memory=16, constants=consts.tobytes())
    assert list(res.memory.view(np.uint32)) == [5, 6, 7, 8]


ATOMIC_CASES = [
    ("add.u32", 10, [1, 2, 3, 4], [10, 11, 13, 16], 20),
    ("sub.u32", 10, [1, 2, 3, 4], [10, 9, 7, 4], 0),
    ("min.s32", 5, [7, -3, 2, -8], [5, 5, -3, -3], -8),
    ("max.s32", -5, [-7, 3, 2, 8], [-5, -5, 3, 3], 8),
    ("min.u32", 5, [7, 0xFFFFFFFF, 2, 3], [5, 5, 5, 2], 2),
    ("max.u32", 5, [7, 0xFFFFFFFF, 2, 3], [5, 7, 0xFFFFFFFF, 0xFFFFFFFF], 0xFFFFFFFF),
    ("and.b32", 0xFF, [0xF0, 0x3C, 1, 0xFF], [0xFF, 0xF0, 0x30, 0], 0),
    ("or.b32", 0, [1, 2, 4, 8], [0, 1, 3, 7], 15),
    ("xor.b32", 0, [1, 3, 1, 8], [0, 1, 2, 3], 11),
    ("exch.b32", 9, [1, 2, 3, 4], [9, 1, 2, 3], 4),
]


@pytest.mark.parametrize("space", ["global", "local"])
@pytest.mark.parametrize("op, init, vals, olds, final", ATOMIC_CASES)
def test_atomics_return_old_values_in_lane_order(
    space: str, op: str, init: int, vals: list[int], olds: list[int], final: int
) -> None:
    n = len(vals)
    mem = np.array([init & 0xFFFFFFFF] + [v & 0xFFFFFFFF for v in vals] + [0] * (n + 1), np.uint32)
    copy_in = "st.local.b32 [0], r9" if space == "local" else ""
    copy_out = "ld.local.b32 r9, [0]\nst.global.b32 [r12], r9" if space == "local" else ""
    src = f""".kernel t
    .local_memory 16
    mov.u32 r1, %tid.x
    ld.global.b32 r9, [0]
    setp.eq.u32 p0, r1, 0
    @p0 {copy_in or "nop"}
    barrier
    shl.b32 r2, r1, 2
    ld.global.b32 r3, [r2+4]
    atom.{space}.{op} r4, [r10], r3
    st.global.b32 [r2+{4 * (n + 1)}], r4
    barrier
    mov.b32 r12, {4 * (2 * n + 1)}
    @p0 {copy_out.replace(chr(10), chr(10) + "    @p0 ") if copy_out else "ld.global.b32 r9, [0]"}
    @p0 st.global.b32 [r12], r9
    .end"""
    src = src.replace("atom.", "mov.b32 r10, 0\n    atom.")
    res = run(src, workgroup=n, memory=mem, wave_width=4)
    w = res.memory.view(np.uint32)
    assert list(w[n + 1 : 2 * n + 1]) == [o & 0xFFFFFFFF for o in olds]
    assert w[2 * n + 1] == final & 0xFFFFFFFF


def test_cas_applies_in_lane_order() -> None:
    # every lane tries to swap 0 -> its id + 1; only lane 0 succeeds, others see 1
    src = """.kernel t
    mov.u32 r1, %tid.x
    add.u32 r2, r1, 1
    mov.b32 r5, 0
    atom.global.cas.b32 r3, [64], r5, r2
    shl.b32 r4, r1, 2
    st.global.b32 [r4], r3
    .end"""
    w = run(src, workgroup=8, memory=68, wave_width=8).memory.view(np.uint32)
    assert list(w[:8]) == [0] + [1] * 7
    assert w[16] == 1


def test_many_colliding_atomics_histogram() -> None:
    n = 4096
    rng = np.random.default_rng(1)
    data = rng.integers(0, 16, n).astype(np.uint32)
    src = """.kernel hist
    mov.u32 r1, %ctaid.x
    mov.u32 r2, %ntid.x
    mov.u32 r3, %tid.x
    mad.lo.s32 r1, r1, r2, r3
    shl.b32 r1, r1, 2
    ld.global.b32 r4, [r1]
    shl.b32 r4, r4, 2
    add.u32 r4, r4, 16384
    red.global.add.u32 [r4], 1
    .end"""
    mem = np.concatenate([data, np.zeros(16, np.uint32)])
    res = run(src, grid=n // 256, workgroup=256, memory=mem)
    assert list(res.memory.view(np.uint32)[n:]) == list(np.bincount(data, minlength=16))


def test_atomic_float_add_is_sequential_in_lane_order() -> None:
    src = """.kernel t
    mov.f32 r1, 1e8
    mov.u32 r2, %tid.x
    setp.eq.u32 p0, r2, 0
    @p0 st.global.b32 [0], r1
    mov.f32 r3, 1.0
    setp.ne.u32 p1, r2, 0
    @p1 red.global.add.f32 [0], r3
    .end"""
    w = run(src, workgroup=32, memory=4).memory.view(np.float32)
    acc = np.float32(1e8)
    for _ in range(31):
        acc = np.float32(acc + np.float32(1.0))
    assert w[0] == acc


@pytest.mark.parametrize(
    "body, what",
    [
        ("ld.global.b32 r1, [100]", "out-of-bounds global access of 4 byte(s) at address 100"),
        ("ld.global.b32 r1, [2]", "misaligned global access: address 2"),
        ("ld.global.b64 r2:r3, [4]", "misaligned"),
        ("st.local.b32 [16], r1", "out-of-bounds local access"),
        ("ld.const.b32 r1, [0]", "out-of-bounds const access"),
        ("atom.global.add.u32 r1, [64], r1", "out-of-bounds global"),
    ],
)
def test_bad_accesses_trap(body: str, what: str) -> None:
    src = f".kernel badk\n.local_memory 16\nmov.b32 r1, 0\n{body}\nret\n.end"
    with pytest.raises(wg.Trap) as ei:
        run(src, grid=(2, 1, 1), workgroup=4, memory=64)
    e = ei.value
    assert what in e.reason
    assert e.kernel == "badk" and e.pc == 1
    assert e.workgroup == (0, 0, 0) and e.thread == (0, 0, 0)
    assert e.address is not None
    assert body.split()[0] in e.instruction


def test_trap_names_the_offending_thread() -> None:
    src = """.kernel t
    mov.u32 r1, %tid.x
    mov.u32 r2, %ctaid.y
    mad.lo.s32 r1, r2, 64, r1
    setp.eq.u32 p0, r1, 133
    @p0 mov.b32 r1, 100000
    shl.b32 r1, r1, 2
    ld.global.b32 r3, [r1]
    .end"""
    with pytest.raises(wg.Trap) as ei:
        run(src, grid=(1, 4, 1), workgroup=(8, 2, 2), memory=4 * 64 * 4)
    e = ei.value
    # 133 = 2 * 64 + 5: workgroup y = 2, thread linear 5 = (x 5, y 0, z 0)
    assert e.workgroup == (0, 2, 0) and e.thread == (5, 0, 0)
    assert e.address == 400000
    assert "pc 6" in str(e) and "ld.global.b32 r3, [r1]" in str(e)
