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
