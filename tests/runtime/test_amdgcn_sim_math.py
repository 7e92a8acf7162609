"""f32 math sequences of the AMDGCN backend on the interpreter against the emulator at the edges
of the hardware approximations' ranges (denormal inputs and results, 2^+-126, 2^+-128,
overflow), for gfx942 and gfx90a."""

from __future__ import annotations

import numpy as np
import pytest

import wavegpu as wg

ARCHES = ["gfx942", "gfx90a"]


def _edges() -> np.ndarray:
    pts = [0x00000001, 0x00000100, 0x00200000, 0x001FFFFF, 0x00200001, 0x00400000, 0x00600000, 0x007FFFFF]
    pts += [0x00800000, 0x00800001, 0x0F800000, 0x0F7FFFFF, 0x1F800000, 0x3F800000, 0x40400000, 0x3EAAAAAB]
    pts += [0x7E7FFFFF, 0x7E800000, 0x7E800001, 0x7F000000, 0x7F7FFFFF, 0x7F800000, 0x7FC00000, 0x00000000]
    pts += [0x42FC0000, 0xC2FC0000, 0xC2FC0001, 0xC3000000, 0x43000000, 0x5F800000, 0x1FFFFFFF, 0x00012345]
    v = np.array(pts, np.uint32)
    return np.concatenate([v, v | np.uint32(0x80000000)])  # 64 lanes: each value and its negation


EDGES = _edges()
UNARY = """
.kernel u
.param out, buffer, u32
.workgroup_size 64, 1, 1
    mov.u32 r1, %tid.x
    shl.b32 r2, r1, 2
    add.u32 r2, r0, r2
    ld.global.f32 r3, [r2]
    {op}.f32 r4, r3
    st.global.f32 [r2+256], r4
    ret
.end
"""


def _run(src: str, mem: np.ndarray, arch: str) -> tuple[np.ndarray, np.ndarray]:
    k = wg.assemble(src, "m.wave").kernels[0]
    kw = {"grid": 1, "workgroup": 64, "memory": mem, "args": [0]}
    want = wg.launch(k, wave_width=64, **kw).memory.view(np.uint32)
    got = wg.launch(k, device="amdgcn-sim", arch=arch, **kw).memory.view(np.uint32)
    return want, got


def _differences(mem: np.ndarray, want: np.ndarray, got: np.ndarray, lo: int) -> list[str]:
    return [
        f"{mem[i - lo]:#010x}: emulator {want[i]:#010x}, amdgcn {got[i]:#010x}" for i in np.flatnonzero(want != got)
    ]


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("op", ["rcp", "rsqrt", "sqrt", "exp2", "log2"])
def test_unary_ops_at_the_edges_of_the_hardware_ranges(op: str, arch: str) -> None:
    """`rcp` of a denormal input in (2^-128, 2^-126) was +-inf (`rcp(0x00600000)` must be
    0x7eaaaaab): the hardware flushes it, so the backend scales it first."""
    mem = np.concatenate([EDGES, np.zeros(64, np.uint32)])
    want, got = _run(UNARY.format(op=op), mem, arch)
    assert not _differences(mem, want, got, 64), _differences(mem, want, got, 64)
    if op == "rcp":
        assert got[64 + list(EDGES).index(0x00600000)] == 0x7EAAAAAB


@pytest.mark.parametrize("arch", ARCHES)
def test_division_at_the_edges(arch: str) -> None:
    src = """
.kernel d
.param out, buffer, u32
.workgroup_size 64, 1, 1
    mov.u32 r1, %tid.x
    shl.b32 r2, r1, 2
    add.u32 r2, r0, r2
    ld.global.f32 r3, [r2]
    ld.global.f32 r5, [r2+256]
    div.f32 r4, r3, r5
    st.global.f32 [r2+512], r4
    ret
.end
"""
    for shift in (1, 7, 23, 40):
        mem = np.concatenate([EDGES, np.roll(EDGES, shift), np.zeros(64, np.uint32)])
        want, got = _run(src, mem, arch)
        assert np.array_equal(want, got), (shift, _differences(mem, want, got, 128))
