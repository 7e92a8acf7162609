"""The examples give identical memory on the NumPy and the compiled engines (the small ones under
both translations, the GEMMs under the default one, C where a compiler is found)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import wavegpu as wg
from wavegpu.emulator.compiled import available

if not available():
    pytest.skip("neither a C compiler nor numba: the compiled engine cannot run here", allow_module_level=True)

EX = Path(__file__).resolve().parents[3] / "examples"


def prog(name: str) -> wg.Program:
    return wg.assemble((EX / name).read_text(), name)


def same(p: wg.Program, **kw: object) -> wg.EmulationResult:
    ref = wg.emulate(p, engine="numpy", **kw)  # type: ignore[arg-type]
    got = wg.emulate(p, engine="compiled", **kw)  # type: ignore[arg-type]
    assert got.engine == "compiled" and ref.engine == "numpy"
    assert np.array_equal(ref.memory, got.memory)
    return got


def test_vector_add(translation: str) -> None:
    n = 1000
    a = np.arange(n, dtype=np.float32)
    b = np.full(n, 0.5, np.float32)
    mem = np.concatenate([a, b, np.zeros(n, np.float32)])
    res = same(prog("vector_add.wave"), grid=(n + 255) // 256, memory=mem, args=[0, 4 * n, 8 * n, n])
    np.testing.assert_array_equal(res.view(np.float32, 8 * n, n), a + b)


def test_reduce(translation: str) -> None:
    x = np.random.default_rng(0).integers(0, 1000, 256 * 8).astype(np.uint32)
    mem = np.concatenate([x, np.zeros(8, np.uint32)])
    res = same(prog("reduce.wave"), grid=8, memory=mem, args=[0, 4 * x.size])
    assert list(res.view(np.uint32, 4 * x.size, 8)) == list(x.reshape(8, -1).sum(axis=1))


def test_wave_scan(translation: str) -> None:
    n = 256
    x = np.random.default_rng(1).integers(0, 100, n).astype(np.uint32)
    mem = np.concatenate([x, np.zeros(n + n // 32, np.uint32)])
    same(prog("wave_scan.wave"), grid=2, workgroup=128, memory=mem, args=[0, 4 * n, 8 * n])


def test_flat_saxpy(translation: str) -> None:
    n = 300
    x = np.linspace(-1, 1, n).astype(np.float32)
    mem = np.concatenate([x, np.ones(n, np.float32)])
    same(prog("flat_saxpy.wave"), grid=3, memory=mem, args=[0, 4 * n, np.float32(2.5), n])


@pytest.mark.parametrize("n", [16, 48])
def test_sgemm_tiled(n: int) -> None:
    rng = np.random.default_rng(2)
    A = rng.standard_normal((n, n)).astype(np.float32)
    B = rng.standard_normal((n, n)).astype(np.float32)
    mem = np.concatenate([A.ravel(), B.ravel(), np.zeros(n * n, np.float32)])
    same(prog("sgemm_tiled.wave"), grid=(n // 16, n // 16), memory=mem, args=[0, 4 * n * n, 8 * n * n, n])


def test_sgemm_blocked_lane_loops_are_bounded() -> None:
    """The shipped unrolled GEMM (1,000 straight-line instructions) is cut into lane loops of at
    most SEGMENT_MAX instructions: one 1,800-line lane loop made numba's SSA pass recurse past
    Python's limit after minutes (RecursionError)."""
    from wavegpu.emulator.compiled.codegen import SEGMENT_MAX, Shape, generate

    k = prog("sgemm_blocked/sgemm_blocked.wave").kernels[0]
    src = generate(k, Shape(32, (16, 16, 1)))
    loops = re.split(r"\n\s*for l in range\(L\):", src)[1:]
    assert len(loops) > 10
    for body in loops:  # each access is one `if` that traps: their number bounds numba's blocks
        assert body.count("status[0] = 1") <= SEGMENT_MAX
        assert body.count("\n") < 30 * SEGMENT_MAX


def test_sgemm_blocked() -> None:
    """The shipped unrolled GEMM, bit-identical on both engines (issue 28: it crashed numba with
    a RecursionError; now 20-40 s of compiling, handed out first by tests/conftest.py)."""
    n = 64
    rng = np.random.default_rng(3)
    a = rng.normal(size=n * n).astype(np.float32)
    b = rng.normal(size=n * n).astype(np.float32)
    mem = np.concatenate([a, b, np.zeros(n * n, np.float32)])
    res = same(prog("sgemm_blocked/sgemm_blocked.wave"), grid=(1, 1), memory=mem, args=[0, 4 * n * n, 8 * n * n, n])
    c = res.view(np.float32, 8 * n * n, n * n).reshape(n, n)
    np.testing.assert_allclose(c, a.reshape(n, n) @ b.reshape(n, n), rtol=1e-4, atol=1e-4)
