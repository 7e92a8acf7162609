"""Spec section 6, wave operations: active lanes only, PTX shuffle rules, exclusive prefix, MMA."""

from __future__ import annotations

import numpy as np
import pytest
from kit import run

import wavegpu as wg


def wave(body: str, W: int = 8, n: int = 8, mem_in: np.ndarray | None = None) -> list[int]:
    """Each thread runs body with r1 = lane value input[tid]; stores r2."""
    inp = np.arange(n, dtype=np.uint32) * 10 + 1 if mem_in is None else mem_in
    src = f""".kernel w
    .registers 16
    .predicates 4
    mov.u32 r10, %tid.x
    shl.b32 r11, r10, 2
    ld.global.b32 r1, [r11]
    mov.b32 r2, 0xDEAD
{body}
    add.u32 r11, r11, {4 * n}
    st.global.b32 [r11], r2
    .end"""
    res = run(src, workgroup=n, memory=np.concatenate([inp, np.zeros(n, np.uint32)]), wave_width=W)
    return [int(v) for v in res.memory.view(np.uint32)[n:]]


def test_reductions_over_active_lanes() -> None:
    assert wave("    wave.reduce.add.u32 r2, r1") == [sum(range(1, 80, 10))] * 8
    odd = "    and.b32 r3, r10, 1\n    setp.eq.u32 p0, r3, 1\n    if p0\n{}\n    endif"
    assert wave(odd.format("        wave.reduce.add.u32 r2, r1")) == [0xDEAD, 164] * 4  # 11+31+51+71
    assert wave(odd.format("        wave.reduce.min.s32 r2, r1")) == [0xDEAD, 11] * 4
    assert wave(odd.format("        wave.reduce.max.u32 r2, r1")) == [0xDEAD, 71] * 4
    vals = np.array([3, 0xFFFFFFFF, 5, 0x80000000, 1, 1, 2, 7], np.uint32)
    assert wave("    wave.reduce.min.s32 r2, r1", mem_in=vals) == [0x80000000] * 8
    assert wave("    wave.reduce.max.s32 r2, r1", mem_in=vals) == [7] * 8
    assert wave("    wave.reduce.and.b32 r2, r1", mem_in=vals) == [0] * 8
    assert wave("    wave.reduce.or.b32 r2, r1", mem_in=vals) == [0xFFFFFFFF] * 8
    assert wave("    wave.reduce.xor.b32 r2, r1", mem_in=np.array([1, 2, 4, 8, 1, 2, 4, 0], np.uint32)) == [8] * 8


def test_waves_reduce_separately() -> None:
    assert wave("    wave.reduce.add.u32 r2, r1", W=4) == [1 + 11 + 21 + 31] * 4 + [41 + 51 + 61 + 71] * 4


def test_shuffle_rules() -> None:
    assert wave("    wave.shuffle.b32 r2, r1, 3") == [31] * 8
    assert wave("    wave.shuffle.b32 r2, r1, 11") == [31] * 8  # lane index modulo W
    assert wave("    wave.broadcast.b32 r2, r1, 6") == [61] * 8
    assert wave("    wave.shuffle.xor.b32 r2, r1, 1") == [11, 1, 31, 21, 51, 41, 71, 61]
    assert wave("    wave.shuffle.xor.b32 r2, r1, 8") == [
        1,
        11,
        21,
        31,
        41,
        51,
        61,
        71,
    ]  # out of range: own
    assert wave("    wave.shuffle.up.b32 r2, r1, 2") == [1, 11, 1, 11, 21, 31, 41, 51]
    assert wave("    wave.shuffle.down.b32 r2, r1, 3") == [31, 41, 51, 61, 71, 51, 61, 71]
    # lane-varying source lanes
    assert wave("    sub.u32 r3, 7, r10\n    wave.shuffle.b32 r2, r1, r3") == [
        71,
        61,
        51,
        41,
        31,
        21,
        11,
        1,
    ]


def test_prefix_is_exclusive_over_active_lanes() -> None:
    assert wave("    wave.prefix.add.u32 r2, r1") == [0, 1, 12, 33, 64, 105, 156, 217]
    body = "    setp.ne.u32 p0, r10, 2\n    if p0\n        wave.prefix.add.u32 r2, r1\n    endif"
    assert wave(body) == [0, 1, 0xDEAD, 12, 43, 84, 135, 196]


def test_ballot_any_all() -> None:
    body = "    and.b32 r3, r10, 2\n    setp.ne.u32 p0, r3, 0\n    wave.ballot.b32 r2, p0"
    assert wave(body) == [0b11001100] * 8
    body = "    setp.eq.u32 p0, r10, 5\n    wave.any p1, p0\n    wave.all p2, p0\n    selp.b32 r2, r1, 0, p1\n    @p2 mov.b32 r2, 7"
    assert wave(body) == list(range(1, 80, 10))
    body = "    setp.lt.u32 p0, r10, 4\n    if p0\n        wave.all p2, p0\n        mov.b32 r4, 1\n        selp.b32 r2, r4, 0, p2\n    endif"
    assert wave(body) == [1, 1, 1, 1] + [0xDEAD] * 4


def test_ballot_with_w64() -> None:
    assert wave("    setp.ge.u32 p0, r10, 30\n    wave.ballot.b32 r2, p0", W=64, n=64) == [0xC0000000] * 64


def test_mma_m16n8k8_matches_numpy_with_ptx_layout() -> None:
    rng = np.random.default_rng(0)
    A = rng.standard_normal((16, 8)).astype(np.float16)
    B = rng.standard_normal((8, 8)).astype(np.float16)
    C = rng.standard_normal((16, 8)).astype(np.float32)
    lane = np.arange(32)
    g, t = lane >> 2, lane & 3
    # fragments per lane, PTX mma.m16n8k8 .f16 layout
    a0 = np.stack([A[g, 2 * t], A[g, 2 * t + 1]], 1)
    a1 = np.stack([A[g + 8, 2 * t], A[g + 8, 2 * t + 1]], 1)
    b0 = np.stack([B[2 * t, g], B[2 * t + 1, g]], 1)
    c = np.stack([C[g, 2 * t], C[g, 2 * t + 1], C[g + 8, 2 * t], C[g + 8, 2 * t + 1]], 1)
    frag = np.concatenate(
        [
            a0.view(np.uint32),
            a1.view(np.uint32),
            b0.view(np.uint32),
            c.view(np.uint32),
            np.zeros((32, 1), np.uint32),
        ],
        1,
    )  # 8 words per lane: aligned vectors
    mem = np.concatenate([frag.reshape(-1), np.zeros(32 * 4, np.uint32)])
    src = """.kernel mma
    mov.u32 r20, %lid
    shl.b32 r21, r20, 5
    ld.global.v4.b32 {r0, r1, r2, r3}, [r21]
    ld.global.v2.b32 {r4, r5}, [r21+16]
    ld.global.b32 r6, [r21+24]
    mma.m16n8k8.f32.f16 {r8, r9, r10, r11}, {r0, r1}, {r2}, {r3, r4, r5, r6}
    shl.b32 r22, r20, 4
    st.global.v4.b32 [r22+1024], {r8, r9, r10, r11}
    .end"""
    res = run(src, workgroup=32, memory=mem)
    d = res.memory.view(np.float32)[256:].reshape(32, 4)
    D = np.zeros((16, 8), np.float32)
    for i in range(4):
        D[g + (8 if i >= 2 else 0), 2 * t + (i & 1)] = d[:, i]
    ref = A.astype(np.float64) @ B.astype(np.float64) + C
    np.testing.assert_allclose(D, ref, rtol=1e-6, atol=1e-6)


def test_mma_needs_w32_and_full_waves() -> None:
    src = ".kernel m\nmma.m16n8k8.f32.f16 {r8, r9, r10, r11}, {r0, r1}, {r2}, {r3, r4, r5, r6}\n.end"
    with pytest.raises(wg.Trap, match="wave width of 32"):
        run(src, workgroup=16, wave_width=16)
    with pytest.raises(wg.Trap, match="every lane"):
        run(src, workgroup=20)
