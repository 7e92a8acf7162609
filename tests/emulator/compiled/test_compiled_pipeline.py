"""The generated functions compile with compiled/pipeline.KernelCompiler: numba's pipeline
without its SSA pass (about a fifth of a long kernel's compile time, docs/performance.md),
and what they compute does not change: locals assigned many times, under guards, in a lane
loop and in a lane-by-lane loop with a float accumulator, bit-identical to the NumPy engine."""

from __future__ import annotations

import numpy as np
import pytest

import wavegpu as wg

pytest.importorskip("numba")

PROBE = """
.kernel ssa_probe
.registers 12
    mov.u32 r1, %tid.x
    shl.b32 r2, r1, 2
    add.u32 r2, r2, r0
    mov.b32 r3, 0
    mov.b32 r4, 0
    mov.b32 r5, 0.5
    mov.b32 r7, 1.5
    and.b32 r6, r1, 7
    loop
        setp.ge.u32 p0, r3, r6
        break p0
        add.u32 r4, r4, r3
        setp.eq.u32 p1, r3, 2
        @p1 add.u32 r4, r4, 0x5EED0026
        fma.f32 r5, r5, r7, -0.25
        add.u32 r3, r3, 1
    endloop
    xor.b32 r4, r4, r5
    setp.lt.u32 p2, r1, 40
    @p2 mul.lo.u32 r4, r4, 3
    st.global.b32 [r2], r4
    st.global.b32 [r2+512], r5
    ret
.end
"""
"""A kernel of its own (its constant 0x5EED0026 keeps its translation out of every other test's)."""


def test_generated_functions_skip_the_ssa_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    from numba.core import event

    monkeypatch.setenv("WAVEGPU_CACHE_DIR", "")  # compiled in this process, nothing from disk
    monkeypatch.setenv("WAVEGPU_COMPILED", "numba")  # numba's pipeline is what this checks
    prog = wg.assemble(PROBE, "ssa_probe.wave")
    kw = dict(grid=1, workgroup=128, memory=1024, args=[0])
    with event.install_recorder("numba:run_pass") as rec:
        got = wg.emulate(prog, engine="compiled", **kw)  # type: ignore[arg-type]
    passes = [ev.data["name"] for _, ev in rec.buffer if ev.is_start]
    driver = [p for p in passes if p.endswith("[run_range]")]
    assert driver, "the probe's translation was not compiled in this test (loaded from a cache?)"
    assert any(p.startswith("nopython_type_inference [run_range]") for p in driver)
    generated = [p for p in passes if p.endswith("[run_range]") or "[lanes_" in p]
    assert not [p for p in generated if p.startswith("reconstruct_ssa [")], generated
    ref = wg.emulate(prog, engine="numpy", **kw)  # type: ignore[arg-type]
    assert got.engine == "compiled"
    assert np.array_equal(got.memory, ref.memory)
    assert len(np.unique(ref.memory.view(np.uint32)[:128])) > 8  # the lanes computed different things
