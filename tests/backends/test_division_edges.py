"""Division, remainder and the conversions of their results at the edges DESIGN section 3 defines
(issue 22 point 4: generated kernels that divide by zero): integer division and remainder by
zero (quotient all ones, remainder the dividend), INT_MIN / -1 (INT_MIN, remainder 0), float
division by zero and of infinities and NaNs, and the saturating conversions of those quotients
(NaN -> 0, +-inf -> the bounds), on every device that runs here, bit for bit against the
emulator. Each thread takes one (a, b) pair of the edge values' cross product, so every pair is
in the same wave as divisions that do not divide by zero (the GPU kernels' shape)."""

from __future__ import annotations

import itertools
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import wavegpu as wg

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import toolchains

KERNEL = """
.kernel div_edges
.param a, buffer, u32, readonly
.param b, buffer, u32, readonly
.param out, buffer, u32
    mov.u32 r3, %ctaid.x
    mov.u32 r4, %ntid.x
    mov.u32 r5, %tid.x
    mad.lo.u32 r6, r3, r4, r5
    shl.b32 r7, r6, 2
    add.u32 r8, r0, r7
    ld.global.u32 r9, [r8]
    add.u32 r8, r1, r7
    ld.global.u32 r10, [r8]
    mul.lo.u32 r11, r6, 48
    add.u32 r11, r2, r11
    div.s32 r12, r9, r10
    st.global.u32 [r11], r12
    rem.s32 r12, r9, r10
    st.global.u32 [r11+4], r12
    div.u32 r12, r9, r10
    st.global.u32 [r11+8], r12
    rem.u32 r12, r9, r10
    st.global.u32 [r11+12], r12
    div.f32 r13, r9, r10
    st.global.u32 [r11+16], r13
    cvt.s32.f32 r12, r13
    st.global.u32 [r11+20], r12
    cvt.u32.f32 r12, r13
    st.global.u32 [r11+24], r12
    cvt.rni.s32.f32 r12, r13
    st.global.u32 [r11+28], r12
    rcp.f32 r12, r10
    cvt.rmi.s32.f32 r12, r12
    st.global.u32 [r11+32], r12
    cvt.f32.s32 r12, r12
    div.f32 r12, r12, r13
    st.global.u32 [r11+36], r12
    setp.ne.u32 p0, r10, 0
    @p0 div.s32 r12, r9, r10
    @!p0 mov.u32 r12, 7
    st.global.u32 [r11+40], r12
    neg.s32 r12, r10
    rem.s32 r12, r12, r9
    st.global.u32 [r11+44], r12
    ret
.end
"""
INTS = [0, 1, 2, 7, 0xFFFFFFFF, 0xFFFFFFFE, 0xFFFFFFF9, 0x80000000, 0x80000001, 0x7FFFFFFF, 0x7FFFFFFE]
FLOATS = [
    0x00000000,
    0x80000000,
    0x7F800000,
    0xFF800000,
    0x7FC00000,
    0x3F800000,
    0xBF800000,
    0x00000001,
    0x7F7FFFFF,
    0x4F000000,
    0xCF000000,
]
DEVICES = [d for d in ("opencl", "sycl", "amdgcn-sim") if d in wg.devices()]


@pytest.mark.skipif(not DEVICES, reason="no device but the emulator here (opencl, sycl, amdgcn-sim)")
def test_division_by_zero_and_overflow_match_the_emulator_on_every_device() -> None:
    vals = INTS + FLOATS
    pairs = np.array(list(itertools.product(vals, vals)), np.uint32)
    n = -(-len(pairs) // 64) * 64
    a = np.zeros(n, np.uint32)
    b = np.ones(n, np.uint32)
    a[: len(pairs)], b[: len(pairs)] = pairs[:, 0], pairs[:, 1]
    k = wg.assemble(KERNEL, "div_edges.wave")
    mem = np.concatenate([a, b, np.zeros(12 * n, np.uint32)]).view(np.uint8)
    args = [0, 4 * n, 8 * n]
    want = wg.launch(k, grid=n // 64, workgroup=64, memory=mem, args=args).memory.view(np.uint32)[2 * n :]
    for device in DEVICES:
        got = wg.launch(k, device=device, grid=n // 64, workgroup=64, memory=mem, args=args).memory
        got = got.view(np.uint32)[2 * n :]
        bad = np.nonzero(got != want)[0]
        where = [(hex(a[i // 12]), hex(b[i // 12]), int(i % 12), hex(got[i]), hex(want[i])) for i in bad[:6]]
        assert bad.size == 0, (device, where)


def test_ptx_guards_every_integer_division_and_ptxas_accepts_it(tmp_path: Path) -> None:
    """PTX leaves division by zero to the hardware ("an unspecified, machine-specific value"), so
    the backend decides it: every div/rem divides by a register a `selp` set to 1 where the
    divisor is 0 (or -1, for the signed forms: INT_MIN / -1), then selects WAVE's results."""
    k = wg.assemble(KERNEL, "div_edges.wave")
    text = wg.translate(k, "ptx")
    lines = text.splitlines()
    divs = [i for i, ln in enumerate(lines) if re.match(r"\s*(div|rem)\.[su]32 ", ln)]
    assert len(divs) == 6
    for i in divs:
        op, _dst, _a, divisor = re.split(r"[\s,;]+", lines[i].strip())[:4]
        guards = [ln for ln in lines[max(0, i - 4) : i] if re.match(rf"\s*selp\.b32 {re.escape(divisor)}, 1, ", ln)]
        want = 2 if op.endswith(".s32") else 1  # zero, and -1 for the signed forms
        assert len(guards) == want, (lines[i], lines[i - 4 : i])
        after = "\n".join(lines[i + 1 : i + 4])
        assert "0xFFFFFFFF" in after if op.startswith("div") else "selp.b32" in after, after
    tool = toolchains.ptxas()
    if tool.path is None:
        pytest.skip(tool.reason)
    (tmp_path / "k.ptx").write_text(text)
    r = subprocess.run([tool.path, "-arch=sm_90", str(tmp_path / "k.ptx"), "-o", str(tmp_path / "k.cubin")],
                       capture_output=True, text=True)  # fmt: skip
    assert r.returncode == 0, r.stderr
