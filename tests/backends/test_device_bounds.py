"""Accesses outside the memory image on the devices that cannot trap (issue 28: on OpenCL a store
at index 200 of a 10-element array crashed the process with SIGSEGV, at 128 and 100,000 the
write was lost). The OpenCL and SYCL kernels check every load, store and atomic and record the
first fault (runtime/faults.py); the run reports the emulator's own Trap, word for word, and
leaves the caller's arrays untouched."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import wavegpu as wg
from wavegpu.runtime import opencl, sycl

sys.path.insert(0, str(Path(__file__).resolve().parent))
import oob_kernels as K

DEVICES = [
    pytest.param("opencl", marks=pytest.mark.skipif(not opencl.available()[0], reason="no OpenCL device")),
    pytest.param("sycl", marks=pytest.mark.skipif(not sycl.available()[0], reason="no SYCL runtime")),
]
# (kind, index): just past the end, the 128, 200 and 100,000, far beyond the image, negative
CASES = [(0, 10), (0, 128), (0, 200), (0, 100_000), (0, 1 << 27), (0, -1), (0, -300)]
CASES += [(1, 10), (1, 200), (1, 100_000), (1, -1), (1, -1000), (2, 10), (2, 200), (2, 100_000), (2, -1)]


def trap_of(device: str, kind: int, i: int, threads: int = 32) -> tuple[str, np.ndarray, np.ndarray]:
    x = np.arange(10, dtype=np.uint32) + 100
    out = np.arange(10, dtype=np.uint32)
    with pytest.raises(wg.Trap) as e:
        K.access(x, out, kind, i, grid=1, workgroup=threads, device=device)
    return str(e.value), x, out


@pytest.mark.parametrize("device", DEVICES)
def test_accesses_outside_the_arrays_are_the_emulators_trap(device: str) -> None:
    for kind, i in CASES:
        want, _, _ = trap_of("emulator", kind, i)
        got, x, out = trap_of(device, kind, i)
        assert got == want, (kind, i)
        assert np.array_equal(x, np.arange(10) + 100) and np.array_equal(out, np.arange(10)), (kind, i)
    # many threads out of bounds at once: the lowest-numbered one is reported, as the emulator does
    want, _, _ = trap_of("emulator", 3, 0, threads=64)
    got, _, out = trap_of(device, 3, 0, threads=64)
    assert got == want and "out[10]" in got and np.array_equal(out, np.arange(10))


@pytest.mark.parametrize("device", DEVICES)
def test_in_bounds_calls_are_unchanged(device: str) -> None:
    x = np.arange(10, dtype=np.uint32) + 100
    outs = {}
    for d in ("emulator", device):
        out = np.arange(10, dtype=np.uint32)
        for kind, i in [(0, 9), (2, 3), (1, 9)]:
            K.access(x, out, kind, i, grid=1, workgroup=32, device=d)
        outs[d] = out
    assert np.array_equal(outs["emulator"], outs[device]) and list(outs[device][:4]) == [7, 1, 2, 4]


SPACES = """
.kernel spaces
.local_memory 64
.registers 8
    mov.u32 r1, %tid.x
    setp.eq.u32 p0, r1, 0
    @p0 ld.global.u32 r2, [r0]
    setp.eq.u32 p1, r2, 1
    @p1 st.global.u32 [r3], r2
    setp.eq.u32 p1, r2, 2
    @p1 st.local.u32 [r3], r2
    setp.eq.u32 p1, r2, 3
    @p1 ld.local.u32 r4, [r3]
    setp.eq.u32 p1, r2, 4
    @p1 ld.const.u32 r4, [r3]
    setp.eq.u32 p1, r2, 5
    @p1 atom.global.add.u32 r4, [r3], r2
    setp.eq.u32 p1, r2, 6
    @p1 ld.global.v4.b32 {r4, r5, r6, r7}, [r3]
    ret
.end
"""


@pytest.mark.parametrize("device", DEVICES)
def test_every_space_and_misalignment_without_arrays(device: str) -> None:
    """A launch with a bare memory image (no arrays): global, local and constant memory, past the
    end, far beyond, just below 2^32, and misaligned; the emulator's Trap each time."""
    prog = wg.assemble(SPACES, "spaces.wave")
    cases = [(1, 256), (1, 254), (1, 100_000), (1, 0xFFFFFFFC), (2, 64), (2, 62), (3, 60 + 8), (4, 16)]
    cases += [(5, 256), (5, 2), (6, 248), (6, 8 + 4)]
    for what, addr in cases:
        mem = np.zeros(64, np.uint32)
        mem[0] = what
        got = {}
        for d in ("emulator", device):
            with pytest.raises(wg.Trap) as e:
                wg.launch(
                    prog,
                    device=d,
                    workgroup=32,
                    memory=mem.view(np.uint8),
                    args=[0, 0, 0, addr],
                    constants=np.zeros(16, np.uint8),
                )
            got[d] = str(e.value)
        assert got[device] == got["emulator"], (what, addr)
