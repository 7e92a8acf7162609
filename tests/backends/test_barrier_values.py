"""Values carried across a barrier on Intel's CPU OpenCL runtime (which runs the SYCL device
too): at its default optimisation level it miscompiled a float quotient computed before a
barrier and used after it (the H200 run's generated kernel k5307, reduced; 107 of 256 results
wrong on ordinary inputs before the OpenCL and SYCL dialects made every register opaque at a
barrier, render.Dialect.opaque_at_barrier). Bit for bit against the emulator."""

from __future__ import annotations

import re

import numpy as np
import pytest

import wavegpu as wg

DEVICES = [d for d in ("opencl", "sycl") if d in wg.devices()]


@wg.kernel(workgroup=64)
def across_barrier(x: wg.f32[:], out: wg.f32[:], n: wg.i32):
    i = wg.global_id(0)
    f0 = x[i]
    f1 = -(wg.floor(x[(i + 2) % n]) / (0.1 if x[(i + 0) % n] < x[(i + 2) % n] else x[(i + 2) % n]))
    wg.barrier()
    out[i] = f0 + f1


@pytest.mark.skipif(not DEVICES, reason="neither OpenCL nor SYCL is available here")
@pytest.mark.parametrize("device", DEVICES)
def test_a_quotient_carried_across_a_barrier(device: str) -> None:
    n = 256
    x = (np.random.default_rng(7).standard_normal(n) * 10).astype(np.float32)
    x[::17] = 0.0  # and some divisions by zero
    want = np.zeros(n, np.float32)
    across_barrier(x, want, n, grid=4)
    got = np.zeros(n, np.float32)
    across_barrier(x, got, n, grid=4, device=device)
    assert np.array_equal(want.view(np.uint32), got.view(np.uint32)), np.nonzero(
        want.view(np.uint32) != got.view(np.uint32)
    )[0][:8]


def test_the_opencl_and_sycl_sources_pass_live_registers_through_a_volatile_before_each_barrier() -> None:
    """Only what is read after the barrier is copied: here the sum's two operands (f0 and the
    quotient) and the output address, not the input's address."""
    for target in ("opencl", "sycl"):
        src = wg.translate(across_barrier.program, target)
        body = src[src.rindex("r0 = 0u") :]
        line = next(ln for ln in body.splitlines() if "volatile uint" in ln)
        assert body.index(line) < body.index("barrier"), target
        copied = re.findall(r"volatile uint v(\d+)_ = r\1;", line)
        assert 3 <= len(copied) <= 4, (target, line)
    assert "volatile" not in wg.translate(across_barrier.program, "cuda")
