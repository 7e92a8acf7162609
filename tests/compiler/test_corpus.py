"""The corpus compiled at every optimisation level gives NumPy's answers."""

from __future__ import annotations

import math

import kernels as K
import numpy as np
import pytest

import wavegpu as wg

OPTS = [0, 1, 2, 3]


def at(kernel, opt):  # type: ignore[no-untyped-def]
    kernel.opt = opt
    return kernel


@pytest.mark.parametrize("opt", OPTS)
def test_saxpy(opt: int) -> None:
    n = 1000
    x = np.linspace(-2, 2, n).astype(np.float32)
    y = np.ones(n, np.float32)
    at(K.saxpy, opt)(np.float32(1.5), x, y, n, grid=4, workgroup=256, check=True)
    np.testing.assert_array_equal(y, (np.float32(1.5) * x) + np.float32(1))


@pytest.mark.parametrize("opt", OPTS)
def test_reduce(opt: int) -> None:
    n = 1000
    data = np.random.default_rng(0).random(n).astype(np.float32)
    out = np.zeros(4, np.float32)
    at(K.reduce_sum, opt)(data, out, n, grid=4, check=True)
    ref = np.concatenate([data, np.zeros(24, np.float32)]).reshape(4, 256)
    np.testing.assert_allclose(out, ref.sum(axis=1, dtype=np.float64), rtol=1e-5)


@pytest.mark.parametrize("opt", OPTS)
def test_histogram(opt: int) -> None:
    n = 3000
    data = np.random.default_rng(1).integers(0, 1 << 20, n).astype(np.uint32)
    bins = np.zeros(16, np.uint32)
    fbins = np.zeros(16, np.float32)
    at(K.histogram, opt)(data, bins, fbins, n, grid=12, workgroup=256)
    np.testing.assert_array_equal(bins, np.bincount(data % 16, minlength=16))
    np.testing.assert_array_equal(fbins, np.bincount(data % 16, minlength=16) * 0.5)


@pytest.mark.parametrize("opt", OPTS)
def test_matmul(opt: int) -> None:
    n = 32
    rng = np.random.default_rng(2)
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    c = np.zeros((n, n), np.float32)
    at(K.matmul, opt)(a, b, c, n, grid=(n // 16, n // 16), check=True)
    ref = np.zeros((n, n), np.float32)
    for k in range(n):  # the kernel's fma order
        ref = (a[:, k : k + 1].astype(np.float64) * b[k : k + 1, :] + ref).astype(np.float32)
    np.testing.assert_array_equal(c, ref)


@pytest.mark.parametrize("opt", OPTS)
def test_scan_with_wave_ops(opt: int) -> None:
    n = 128
    x = np.random.default_rng(3).integers(0, 100, n).astype(np.uint32)
    x0 = x.copy()
    out = np.zeros(n, np.uint32)
    totals = np.zeros(n // 32, np.uint32)
    at(K.scan, opt)(x, out, totals, grid=1, workgroup=n, check=True)
    w = x0.reshape(-1, 32)
    np.testing.assert_array_equal(out, np.cumsum(w, axis=1).reshape(-1))
    np.testing.assert_array_equal(totals, w.sum(axis=1))
    ballot = np.array([sum(1 << j for j in range(32) if row[j] % 2) for row in w], np.uint32)
    lanes = np.arange(n) % 32
    step = np.where(np.repeat((w < 1000).all(1) & (w > 0).any(1), 32), np.repeat(ballot, 32), x0)
    expect = step + x0.reshape(-1, 32)[np.arange(n) // 32, lanes ^ 1] + np.repeat(w[:, 3], 32)
    np.testing.assert_array_equal(x, expect.astype(np.uint32))


def loops_ref(i: int) -> int:
    """The kernel itself, run as plain Python for thread i (wg.python_thread)."""
    out = np.full(i + 1, 7, np.int32)
    with wg.python_thread(global_id=i):
        K.loops.python(out, np.int32(i + 1))
    return int(out[i])


@pytest.mark.parametrize("opt", OPTS)
def test_loops_break_continue_return(opt: int) -> None:
    n = 200
    out = np.full(n + 56, 7, np.int32)
    at(K.loops, opt)(out, n, grid=1, workgroup=256, check=True)
    assert list(out[:n]) == [loops_ref(i) for i in range(n)]
    assert (out[n:] == 7).all()  # threads past n returned early


@pytest.mark.parametrize("opt", OPTS)
def test_floor_division_and_modulo_on_negatives(opt: int) -> None:
    vals = [-7, 7, -8, 8, 0, -1, 1, 2**31 - 1, -(2**31), 13, -13, 100, -100, 6, -6, 5]
    divs = [2, -2, 3, -3, 5, -5, 7, -7, 1, -1, 16, -16, 9, 4, -4, 3]
    a = np.array(vals, np.int32)
    b = np.array(divs, np.int32)
    n = len(vals)
    q, r, fq = np.zeros(n, np.int32), np.zeros(n, np.int32), np.zeros(n, np.float32)
    at(K.floor_ops, opt)(a, b, q, r, fq, n, grid=1, workgroup=32, check=True)
    for i, (x, y) in enumerate(zip(vals, divs)):
        if x == -(2**31) and y == -1:
            continue  # INT_MIN // -1 overflows 32 bits
        assert q[i] == x // y, (x, y)
        assert r[i] == x % y, (x, y)
        f = np.float32(np.float32(x) / np.float32(y))
        want = np.float32(
            np.float32(np.float32(np.float32(f + np.float32(x // 7)) + np.float32(x % -6)) + np.float32(x // 8))
            + np.float32(x % 16)
        )
        assert fq[i] == want, (x, y)


@pytest.mark.parametrize("opt", OPTS)
def test_math_functions(opt: int) -> None:
    n = 64
    x = np.linspace(0.1, 6.0, n).astype(np.float32)
    out = np.zeros(8 * n, np.float32)
    at(K.math_fns, opt)(x, out, n, grid=1, workgroup=64)
    o = out.reshape(n, 8).astype(np.float64)
    v = x.astype(np.float64)
    np.testing.assert_allclose(o[:, 0], np.sqrt(v), rtol=1e-6)
    np.testing.assert_allclose(o[:, 1], np.sin(v) + np.cos(v), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(o[:, 2], np.exp(v * 0.1) + np.log2(v + 1), rtol=1e-5)
    np.testing.assert_allclose(o[:, 3], np.floor(x * np.float32(1.5)) - np.ceil(x * np.float32(0.3)), rtol=0)
    np.testing.assert_allclose(o[:, 4], v * v - 1, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(o[:, 5], np.maximum(v, 2.5) - np.minimum(v, 1.5) + np.abs(v - 3), rtol=1e-6)
    np.testing.assert_allclose(o[:, 6], np.trunc(x * np.float32(10)) + np.trunc(v), rtol=0)
    np.testing.assert_allclose(o[:, 7], 1 / np.sqrt(v + 1) + 2 ** (v / 4) + np.log(v + 1), rtol=1e-5)
    assert math.isfinite(float(o.sum()))
