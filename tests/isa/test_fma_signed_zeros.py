"""fma.f64 and fma.f32 give IEEE's signed zero when a zero product meets a zero addend
((-0) + (-0) = -0; any other mix +0) and +0 for an exact cancellation, in isa/semantics.py and so
in both emulator engines (the numpy engine computes f64 fma by an error-free transformation,
which once lost the sign: fma(0, -1, -0) gave +0; the compiled engine's llvm.fma gave -0)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import wavegpu as wg
from wavegpu.isa import semantics as sem

ZEROS = [(0.0, 0.0, 0.0), (0.0, -0.0, 0.0), (0.0, -0.0, -0.0), (-0.0, 1.0, -0.0), (0.0, -1.0, -0.0)]
ZEROS += [(3.0, 0.0, -0.0), (-3.0, 0.0, -0.0), (1.0, 1.0, -1.0), (-1.0, 1.0, 1.0), (0.0, 5.0, -0.0)]


def ieee(a: float, b: float, c: float) -> float:
    """The correctly signed result for these exact cases (the product is exact)."""
    return a * b + c


@pytest.mark.parametrize("a,b,c", ZEROS)
def test_semantics(a: float, b: float, c: float) -> None:
    want = ieee(a, b, c)
    got = float(sem.fma_f64(np.array([a]), np.array([b]), np.array([c]))[0])
    assert got == want == 0 and np.signbit(got) == np.signbit(want), (a, b, c, got)
    got32 = float(sem.fma_f32(np.array([a], np.float32), np.array([b], np.float32), np.array([c], np.float32))[0])
    assert np.signbit(got32) == np.signbit(want), (a, b, c, got32)


def test_both_engines_agree_on_fma_f64_zeros() -> None:
    text = """
.kernel f
    mov.u32 r20, %tid.x
    shl.b32 r20, r20, 5
    ld.global.b64 r0:r1, [r20]
    ld.global.b64 r2:r3, [r20+8]
    ld.global.b64 r4:r5, [r20+16]
    fma.f64 r6:r7, r0:r1, r2:r3, r4:r5
    st.global.b64 [r20], r6:r7
    ret
.end
"""
    k = wg.assemble(text, "f.wave")
    vals = [0.0, -0.0, 1.0, -1.0]
    cases = list(itertools.product(vals, vals, vals))
    slots = np.zeros((64, 4), np.float64)
    slots[: len(cases), :3] = cases
    mem = slots.view(np.uint8).reshape(-1)
    want = np.array([ieee(*t) for t in cases])
    for engine in ("numpy", "compiled"):
        got = wg.launch(k, workgroup=64, memory=mem, engine=engine).memory.view(np.float64)[::4][: len(cases)]
        assert (got == want).all() and (np.signbit(got) == np.signbit(want)).all(), engine
