"""Operators and builtins Python users reach for (docs/compiler.md): `**`, abs, n-ary min/max,
tuple assignment, augmented stores, conditional expressions, `math.` aliases, global_size."""

from __future__ import annotations

import math

import numpy as np
import pytest

import wavegpu as wg

N = 64


@wg.kernel
def powers(x: wg.f32[:], k: wg.i32[:], o: wg.f32[:], oi: wg.i32[:]):
    i = wg.global_id()
    v = x[i]
    o[6 * i] = v**2
    o[6 * i + 1] = v**3 + v**0
    o[6 * i + 2] = abs(v) ** 0.5
    o[6 * i + 3] = (abs(v) + 1.0) ** -0.5
    o[6 * i + 4] = (v + 10.0) ** -2
    o[6 * i + 5] = v**1 * 2.0**3
    oi[2 * i] = k[i] ** 7  # wraps as 32-bit integers do
    oi[2 * i + 1] = k[i] ** 2 + 2**10


def test_powers_with_constant_exponents() -> None:
    rng = np.random.default_rng(0)
    x = rng.uniform(-4, 4, N).astype(np.float32)
    k = rng.integers(-300, 300, N).astype(np.int32)
    o = np.zeros(6 * N, np.float32)
    oi = np.zeros(2 * N, np.int32)
    powers(x, k, o, oi, grid=1, workgroup=N)
    o = o.reshape(N, 6)
    f = np.float32
    assert np.array_equal(o[:, 0], x * x)
    assert np.array_equal(o[:, 1], x * x * x + f(1))
    assert np.array_equal(o[:, 2], np.sqrt(np.abs(x)))
    assert np.array_equal(o[:, 3], f(1) / np.sqrt(np.abs(x) + f(1)))
    y = x + f(10)
    assert np.array_equal(o[:, 4], f(1) / (y * y))
    assert np.array_equal(o[:, 5], x * f(8))
    k64 = k.astype(np.int64)
    want7 = ((k64**7) & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
    assert np.array_equal(oi[0::2], want7)
    assert np.array_equal(oi[1::2], (k64 * k64 + 1024).astype(np.int32))


def test_powers_that_are_not_supported_say_what_to_write() -> None:
    src = "import wavegpu as wg\n@wg.kernel\ndef k(x: wg.f32[:], n: wg.i32):\n    x[0] = x[1] ** {}\n"
    for exp in ("n", "1.5", "x[2]"):
        with pytest.raises(wg.CompileError) as ei:
            wg.compile(src.format(exp))
        (d,) = ei.value.diagnostics
        assert "constant integer exponent" in d.message and "exp2" in d.message


@wg.kernel
def builtins(x: wg.f32[:], a: wg.i32[:], o: wg.f32[:], oi: wg.i32[:]):
    i = wg.global_id()
    v = x[i]
    j = a[i]
    o[4 * i] = min(v, 1.0, -v, 0.25)
    o[4 * i + 1] = max(v, 2.0 * v, -3.0)
    o[4 * i + 2] = math.sqrt(abs(v)) + math.exp(v / 4.0) * math.pi + math.fabs(v)
    o[4 * i + 3] = v if v > 0.0 else -v * 0.5
    oi[3 * i] = abs(j)
    oi[3 * i + 1] = min(j, 3, i, 100)
    oi[3 * i + 2] = max(j, -j, 7) if j != 0 else -1


def run_python(kernel: object, *arrays: np.ndarray) -> None:
    fn = kernel.python  # type: ignore[attr-defined]
    with np.errstate(all="ignore"):
        for i in range(N):
            with wg.python_thread(global_id=i):
                fn(*arrays)


def test_builtins_match_plain_python() -> None:
    rng = np.random.default_rng(1)
    x = rng.uniform(-6, 6, N).astype(np.float32)
    a = rng.integers(-50, 50, N).astype(np.int32)
    a[0] = -(2**31)  # abs wraps like the ISA's abs.s32
    o, oi = np.zeros(4 * N, np.float32), np.zeros(3 * N, np.int32)
    builtins(x, a, o, oi, grid=1, workgroup=N)
    po, poi = np.zeros_like(o), np.zeros_like(oi)
    with np.errstate(all="ignore"):
        run_python(builtins, x, a.copy(), po, poi)
    exact = np.ones(4 * N, bool)
    exact[2::4] = False  # exp is approximate (DESIGN section 3)
    assert np.array_equal(o[exact], po[exact])
    assert np.allclose(o[~exact], po[~exact], rtol=1e-5)
    assert np.array_equal(oi, poi)


@wg.kernel
def swaps(x: wg.f32[:], y: wg.i32[:], n: wg.i32):
    i = wg.global_id()
    if i < n // 2:
        j = n - 1 - i
        x[i], x[j] = x[j], x[i]  # reversal by swapping elements
    a, b = i, i * 10
    a, b = b, a
    a, b, c = b + 1, a + 2, a * b
    y[i] += a + b
    y[i] *= 2
    y[i] -= c


def test_tuple_assignment_swap_and_augmented_stores() -> None:
    x = np.arange(N, dtype=np.float32)
    y = np.ones(N, np.int32)
    swaps(x, y, N, grid=1, workgroup=N)
    assert np.array_equal(x, np.arange(N, dtype=np.float32)[::-1])
    i = np.arange(N)
    assert np.array_equal(y, (1 + (i + 1) + (i * 10 + 2)) * 2 - i * 10 * i)


def test_tuple_assignment_needs_as_many_values() -> None:
    src = "import wavegpu as wg\n@wg.kernel\ndef k(x: wg.f32[:]):\n    a, b = {}\n"
    for rhs, msg in (("1", "assign a tuple of 2 values"), ("1, 2, 3", "assign a tuple of 2 values")):
        with pytest.raises(wg.CompileError) as ei:
            wg.compile(src.format(rhs))
        assert [d.message for d in ei.value.diagnostics] == [msg + ": a, b = x, y"]


@wg.kernel(workgroup=32)
def grid_stride(x: wg.f32[:], n: wg.i32, sizes: wg.i32[:]):
    i = wg.global_id()
    while i < n:
        x[i] = x[i] * 2.0 + 1.0
        i += wg.global_size()
    if wg.global_id() == 0:
        sizes[0] = wg.global_size(0)
        sizes[1] = wg.grid_size(0)
        sizes[2] = wg.global_size(1)


def test_global_size_is_the_thread_count_and_grid_size_the_workgroups() -> None:
    x = np.arange(1000, dtype=np.float32)
    sizes = np.zeros(3, np.int32)
    grid_stride(x, 1000, sizes, grid=3)
    assert np.array_equal(x, np.arange(1000, dtype=np.float32) * 2 + 1)
    assert sizes.tolist() == [96, 3, 1]
    with wg.python_thread(thread=(1, 0, 0), workgroup=(2, 0, 0), workgroup_size=(32, 1, 1), grid=(3, 1, 1)):
        assert wg.global_size() == 96 and wg.grid_size() == 3
    assert "WORKGROUPS" in (wg.grid_size.__doc__ or "") and "global_size" in (wg.grid_size.__doc__ or "")
