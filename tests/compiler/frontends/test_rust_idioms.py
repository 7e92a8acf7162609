"""Rust's own spellings on the emulator against NumPy: the std methods of f32, i32 and u32 that are
builtins of the table (rust/std_methods.rs, which rustc also checks: test_rust_rustc.py), with
Rust's meanings where they differ from another row's (f32::signum of zeros, f32::clamp of NaN)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import wavegpu as wg

HERE = Path(__file__).parent
SPECIAL = [0.0, -0.0, np.nan, np.inf, -np.inf, 0.5, -0.5, 1.5, 2.5, -2.5, 0.49999997, -0.49999997, 3.0, -1e-30]


@pytest.fixture(scope="module")
def kernels() -> object:
    return wg.load_kernels(HERE / "rust" / "std_methods.rs")


def _round_away(v: np.ndarray) -> np.ndarray:
    t = np.trunc(v)
    up = np.abs(v.astype(np.float64) - t) >= 0.5  # exact in f64
    return np.where(up, t + np.copysign(np.float32(1), v), t).astype(np.float32)


def _floats(ks: object, x: np.ndarray, y: np.ndarray) -> None:
    n = len(x)
    o = np.zeros(n * 12, np.float32)
    nan = np.zeros(n, np.uint32)
    ks.floats(x, y, o, nan, n, grid=(n + 31) // 32, workgroup=32)  # type: ignore[attr-defined]
    r = o.reshape(n, 12)
    f = np.float32
    with np.errstate(all="ignore"):
        exact = {
            1: x * (x * x),  # square and multiply
            2: _round_away(x),
            3: np.rint(x),
            4: np.trunc(x),
            5: np.where(x < f(-1.5), f(-1.5), np.where(x > f(2.5), f(2.5), x)),  # a NaN stays
            6: np.where(np.isnan(x), x, np.copysign(f(1), x)),  # +-0.0 -> +-1.0
            7: np.fmin(x, y),
            8: np.fmax(x, y),
            10: np.fmin(np.fmax(x, f(-1.5)), f(2.5)),  # the row clamp: a NaN x gives lo
            11: np.trunc(x) + _round_away(y),
        }
        for col, want in exact.items():
            np.testing.assert_array_equal(r[:, col], want.astype(np.float32), err_msg=f"column {col}")
        np.testing.assert_array_equal(np.signbit(r[:, 6]), np.signbit(exact[6]))  # -0.0 gives -1.0
        assert nan.tolist() == np.isnan(x).astype(int).tolist()
        ok = np.isfinite(x) & np.isfinite(y) & (np.abs(y) < 8) & (np.abs(x) > 1e-3) & (np.abs(x) < 1e3)
        want = np.abs(x.astype(np.float64)) ** y.astype(np.float64)
        np.testing.assert_allclose(r[ok, 0], want[ok], rtol=1e-5)
        np.testing.assert_allclose(r[:, 9][np.isfinite(y)], np.sqrt(np.abs(y[np.isfinite(y)])), rtol=1e-6)


def test_float_methods_against_numpy_on_the_special_values(kernels: object) -> None:
    x = np.array(SPECIAL, np.float32)
    y = np.array(SPECIAL[::-1], np.float32)
    _floats(kernels, x, y)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    hnp.arrays(np.float32, 40, elements=st.floats(width=32, allow_nan=True, allow_infinity=True)),
    hnp.arrays(np.float32, 40, elements=st.floats(-6, 6, width=32)),
)
def test_float_methods_against_numpy(kernels: object, x: np.ndarray, y: np.ndarray) -> None:
    _floats(kernels, x, y)


def _ints(ks: object, k: np.ndarray, u: np.ndarray) -> None:
    n = len(k)
    oi = np.zeros(n * 6, np.int32)
    ou = np.zeros(n * 6, np.uint32)
    ks.ints(k, u, oi, ou, n, grid=(n + 31) // 32, workgroup=32)  # type: ignore[attr-defined]
    ri, ru = oi.reshape(n, 6), ou.reshape(n, 6)
    k64, u64 = k.astype(np.int64), u.astype(np.int64)

    def wrap_i(v: np.ndarray) -> np.ndarray:
        return (v & 0xFFFFFFFF).astype(np.uint32).view(np.int32)

    def bits(v: np.ndarray) -> tuple[list[int], list[int], list[int]]:
        w = [int(x) & 0xFFFFFFFF for x in v]
        ones = [bin(x).count("1") for x in w]
        lead = [32 - x.bit_length() for x in w]
        trail = [32 if x == 0 else (x & -x).bit_length() - 1 for x in w]
        return ones, lead, trail

    assert ri[:, 0].tolist() == np.sign(k).tolist()
    assert ri[:, 1].tolist() == np.clip(k, -100, 100).tolist()
    assert ri[:, 2].tolist() == wrap_i(k64 * ((k64 * k64) & 0xFFFFFFFF)).tolist()  # wrapping, as release builds
    assert ri[:, 3].tolist() == np.minimum(k, 7).tolist()
    assert ri[:, 4].tolist() == np.maximum(k, -7).tolist()
    assert ri[:, 5].tolist() == wrap_i(np.abs(k64)).tolist()  # i32::MIN.abs() wraps in release builds
    ones, lead, trail = bits(u)
    assert (ru[:, 0].tolist(), ru[:, 1].tolist(), ru[:, 2].tolist()) == (ones, lead, trail)
    ko, kl, kt = bits(k)
    assert ru[:, 3].tolist() == [a + b + c for a, b, c in zip(ko, kl, kt)]
    assert ru[:, 4].tolist() == ((u64 * u64) & 0xFFFFFFFF).tolist()
    assert ru[:, 5].tolist() == np.clip(u, 10, 1000).tolist()


def test_int_methods_against_numpy_on_the_edges(kernels: object) -> None:
    k = np.array([0, 1, -1, 7, -7, 100, -101, 2**31 - 1, -(2**31), 1290, -1291, 16], np.int32)
    u = np.array([0, 1, 2**32 - 1, 2**31, 8, 9, 10, 1000, 1001, 65536, 0x00F0_0000, 3], np.uint32)
    _ints(kernels, k, u)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(hnp.arrays(np.int32, 33), hnp.arrays(np.uint32, 33))
def test_int_methods_against_numpy(kernels: object, k: np.ndarray, u: np.ndarray) -> None:
    _ints(kernels, k, u)
