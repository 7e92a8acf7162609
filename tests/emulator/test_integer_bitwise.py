"""Spec section 6, integer and bitwise instructions, with DESIGN section 3's edge rules."""

from __future__ import annotations

import pytest
from kit import lanewise

M = 0xFFFFFFFF
INT_MIN = 0x80000000


def s(v: int) -> int:
    return v & M


@pytest.mark.parametrize(
    "line, a, b, expect",
    [
        ("add.s32 r7, r4, r5", [1, M, INT_MIN], [2, 1, M], [3, 0, 0x7FFFFFFF]),
        ("add.u32 r7, r4, r5", [M], [M], [M - 1]),
        ("sub.s32 r7, r4, r5", [0, 5], [1, 7], [M, s(-2)]),
        ("mul.lo.s32 r7, r4, r5", [0x10000, s(-3)], [0x10000, 7], [0, s(-21)]),
        (
            "mul.hi.s32 r7, r4, r5",
            [0x10000, s(-1), INT_MIN],
            [0x10000, 1, INT_MIN],
            [1, M, 0x40000000],
        ),
        ("mul.hi.u32 r7, r4, r5", [M, 0x10000], [M, 0x10000], [0xFFFFFFFE, 1]),
        (
            "div.s32 r7, r4, r5",
            [7, s(-7), 7, INT_MIN, 5],
            [2, 2, 0, M, s(-5)],
            [3, s(-3), M, INT_MIN, M],
        ),
        ("div.u32 r7, r4, r5", [7, M, 3], [2, 0, M], [3, M, 0]),
        ("rem.s32 r7, r4, r5", [7, s(-7), 7, INT_MIN], [2, 2, 0, M], [1, M, 7, 0]),
        ("rem.u32 r7, r4, r5", [7, 9], [0, 4], [7, 1]),
        ("min.s32 r7, r4, r5", [s(-1), 3], [1, 3], [M, 3]),
        ("max.s32 r7, r4, r5", [s(-1), 3], [1, 4], [1, 4]),
        ("min.u32 r7, r4, r5", [M, 3], [1, 3], [1, 3]),
        ("max.u32 r7, r4, r5", [M, 3], [1, 4], [M, 4]),
        ("and.b32 r7, r4, r5", [0xF0F0], [0xFF00], [0xF000]),
        ("or.b32 r7, r4, r5", [0xF0F0], [0xFF00], [0xFFF0]),
        ("xor.b32 r7, r4, r5", [0xF0F0], [0xFF00], [0x0FF0]),
        ("shl.b32 r7, r4, r5", [1, 1, 1, 3], [31, 32, 100, 0], [INT_MIN, 0, 0, 3]),
        ("shr.u32 r7, r4, r5", [INT_MIN, INT_MIN, M], [31, 32, 33], [1, 0, 0]),
        ("shr.s32 r7, r4, r5", [INT_MIN, INT_MIN, 0x40000000, 8], [31, 32, 40, 2], [M, M, 0, 2]),
    ],
)
def test_binary(line: str, a: list[int], b: list[int], expect: list[int]) -> None:
    assert lanewise(line, a, b) == expect


@pytest.mark.parametrize(
    "line, a, expect",
    [
        ("neg.s32 r7, r4", [1, 0, INT_MIN], [M, 0, INT_MIN]),
        ("abs.s32 r7, r4", [s(-5), 5, INT_MIN], [5, 5, INT_MIN]),
        ("not.b32 r7, r4", [0, 0xF0F0F0F0], [M, 0x0F0F0F0F]),
        ("popc.b32 r7, r4", [0, M, 0x80000001, 0x12345678], [0, 32, 2, 13]),
        ("clz.b32 r7, r4", [0, 1, INT_MIN, 0x00010000], [32, 31, 0, 15]),
        ("brev.b32 r7, r4", [1, 0x12345678, M], [INT_MIN, 0x1E6A2C48, M]),
    ],
)
def test_unary(line: str, a: list[int], expect: list[int]) -> None:
    assert lanewise(line, a) == expect


def test_mul_wide() -> None:
    out = lanewise_wide("mul.wide.s32", [s(-2), INT_MIN], [3, INT_MIN])
    assert out == [(-6) & (2**64 - 1), 2**62]
    out = lanewise_wide("mul.wide.u32", [M, 2], [M, 3])
    assert out == [M * M, 6]


def lanewise_wide(op: str, a: list[int], b: list[int]) -> list[int]:
    import numpy as np

    import wavegpu as wg

    n = len(a)
    mem = np.concatenate(
        [
            np.array(a, np.uint32).view(np.uint8),
            np.array(b, np.uint32).view(np.uint8),
            np.zeros(8 * n, np.uint8),
        ]
    )
    src = f""".kernel t
    mov.u32 r1, %tid.x
    shl.b32 r2, r1, 2
    ld.global.b32 r4, [r2]
    add.u32 r3, r2, {4 * n}
    ld.global.b32 r5, [r3]
    {op} r6:r7, r4, r5
    shl.b32 r2, r1, 3
    add.u32 r2, r2, {8 * n}
    st.global.b64 [r2], r6:r7
    .end"""
    res = wg.emulate(wg.assemble(src), workgroup=n, memory=mem)
    return [int(v) for v in res.memory[8 * n :].view(np.uint64)]


@pytest.mark.parametrize(
    "line, a, b, c, expect",
    [
        ("mad.lo.s32 r7, r4, r5, r6", [3, M], [4, 2], [5, 3], [17, 1]),
        ("clamp.s32 r7, r4, r5, r6", [s(-9), 5, 100], [s(-3)] * 3, [10] * 3, [s(-3), 5, 10]),
        ("clamp.u32 r7, r4, r5, r6", [1, 5, M], [3] * 3, [10] * 3, [3, 5, 10]),
        # bfe as PTX: position b, length c (both masked to 8 bits)
        (
            "bfe.u32 r7, r4, r5, r6",
            [0xABCD1234, 0xABCD1234, 0xABCD1234, M, M],
            [8, 28, 40, 0, 4],
            [8, 8, 4, 0, 0x104],
            [0x12, 0xA, 0, 0, 0xF],
        ),
        (
            "bfe.s32 r7, r4, r5, r6",
            [0x0000F000, 0x00007000, 0x80000000, 0x80000000],
            [12, 12, 31, 40],
            [4, 4, 8, 4],
            [M, 7, M, M],
        ),
        (
            "dp4a.s32.s32 r7, r4, r5, r6",
            [0x01FF0203],
            [0x02020202],
            [10],
            [10 + 2 * (1 - 1 + 2 + 3)],
        ),
        (
            "dp4a.u32.u32 r7, r4, r5, r6",
            [0x01FF0203],
            [0x02020202],
            [10],
            [10 + 2 * (1 + 255 + 2 + 3)],
        ),
    ],
)
def test_ternary(line: str, a: list[int], b: list[int], c: list[int], expect: list[int]) -> None:
    assert lanewise(line, a, b, c) == expect


def test_bfi_spec_operand_order() -> None:
    # bfi.b32 rd, ra, rb, rc, re: insert rc bits of ra at position rb into re
    src_lines = "mov.b32 r8, 0xFFFF0000\nbfi.b32 r7, r4, r5, r6, r8"
    out = lanewise(src_lines, [0xAB, 0xAB, 0xFF], [4, 28, 0], [8, 8, 40])
    assert out == [0xFFFF0AB0, 0xBFFF0000, 0x000000FF]
