"""The language corpus kernel (tests/compiler/kernels.py `language`) at every optimisation level
against NumPy."""

from __future__ import annotations

import kernels as K
import numpy as np
import pytest

import wavegpu as wg


def reference(a: np.ndarray, n: int, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    rows, cols = a.shape
    t = K.TILE
    out = np.zeros_like(a)
    f = np.float32
    for y in range(rows):
        for x in range(cols):
            # the transposed element comes from the same tile: tile[tx, ty]
            by, bx = y - y % t, x - x % t
            ty, tx = y % t, x % t
            yy, xx = by + tx, bx + ty
            other = a[yy, xx] if yy < rows and xx < cols else f(0)
            lo, hi = sorted((a[y, x], other))
            out[y, x] = hi * hi - np.sqrt(lo) * f(0.5) + max(lo, hi, f(1)) + min(abs(lo), f(0.5), hi)
    c = counts.copy()
    g = np.arange(min(n, c.size), dtype=np.uint32)
    c[: g.size] += g * np.uint32(3) - np.uint32(1)
    return out, c


@pytest.mark.parametrize("opt", [0, 1, 2, 3])
def test_language_kernel_at_every_level(opt: int) -> None:
    rng = np.random.default_rng(opt)
    a = rng.uniform(0, 3, (16, 24)).astype(np.float32)
    out = np.zeros_like(a)
    counts = np.arange(300, dtype=np.uint32)
    K.language.opt = opt
    try:
        K.language(a, out, counts, 250, grid=(3, 2), check=True)
    finally:
        K.language.opt = 2
    # the launch has 3 * 8 by 2 * 8 = 384 threads, more than n = 250: counts[:250] change
    want_out, want_counts = reference(a, 250, np.arange(300, dtype=np.uint32))
    np.testing.assert_allclose(out, want_out, rtol=1e-6)
    assert np.array_equal(counts, want_counts)


def test_language_kernel_in_one_workgroup_and_its_recorded_workgroup() -> None:
    a = np.random.default_rng(9).uniform(0, 3, (8, 8)).astype(np.float32)
    out = np.zeros_like(a)
    counts = np.zeros(4, np.uint32)
    K.language(a, out, counts, 4, grid=1, check=True)
    want_out, want_counts = reference(a, 4, np.zeros(4, np.uint32))
    np.testing.assert_allclose(out, want_out, rtol=1e-6)
    assert np.array_equal(counts, want_counts)
    assert wg.compile(K.language).kernels[0].workgroup_size == (K.TILE, K.TILE, 1)
