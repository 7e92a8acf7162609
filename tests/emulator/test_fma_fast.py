"""The emulator's faster fma.f32 is bit-identical to isa.semantics' reference and to exact
rational arithmetic, on random and special values."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wavegpu.emulator.ops.alu import fma_f32_fast, value_function
from wavegpu.isa import semantics as sem
from wavegpu.isa.table import row

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # inf and NaN operands

SPECIAL = [
    0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007FFFFF, 0x00800000, 0x00800001, 0x01000000,
    0x00FFFFFF, 0x3F800000, 0xBF800000, 0x3F800001, 0x33800000, 0x34000000, 0x7F7FFFFF, 0xFF7FFFFF,
    0x7F800000, 0xFF800000, 0x7FC00000, 0x7FA00001, 0x0C800000, 0x1F800000, 0x5F800000,
]  # fmt: skip

bits = st.one_of(st.sampled_from(SPECIAL), st.integers(0, 0xFFFFFFFF))
# exponents near each other make products and addends cancel and land on midpoints
near = st.tuples(st.integers(0, 1), st.integers(60, 190), st.integers(0, (1 << 23) - 1)).map(
    lambda t: (t[0] << 31) | (t[1] << 23) | t[2]
)
tiny = st.tuples(st.integers(0, 1), st.integers(0, 40), st.integers(0, (1 << 23) - 1)).map(
    lambda t: (t[0] << 31) | (t[1] << 23) | t[2]
)
lanes = st.lists(
    st.tuples(st.one_of(bits, near, tiny), st.one_of(bits, near, tiny), st.one_of(bits, near, tiny)),
    min_size=1,
    max_size=64,
)


def _f(u: list[int]) -> np.ndarray:
    return np.array(u, dtype=np.uint32).view(np.float32)


def _exact(a: float, b: float, c: float) -> np.float32:
    """fma by fractions, rounded to float32 by numpy's nearest-even on a float64 that is exact
    or decided by a sticky bit (the exact value is compared with the two float32 neighbours)."""
    if not all(np.isfinite([a, b, c])):
        return np.float32(np.float64(a) * np.float64(b) + np.float64(c))
    x = Fraction(a) * Fraction(b) + Fraction(c)
    if x == 0:
        return np.float32(np.float64(a) * np.float64(b) + np.float64(c))  # signed zero by IEEE rules
    big = Fraction(float(np.finfo(np.float32).max))
    if abs(x) >= big + Fraction(2) ** 103:  # at least half an ulp beyond the largest float
        return np.float32(np.inf if x > 0 else -np.inf)
    if abs(x) > big:
        return np.float32(float(big) if x > 0 else -float(big))
    r = np.float32(float(x))  # float(x) rounds once to float64; resolve double rounding below
    lo, hi = (
        (np.nextafter(r, np.float32(-np.inf)), r)
        if Fraction(float(r)) > x
        else (r, np.nextafter(r, np.float32(np.inf)))
    )
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return r
    dl, dh = x - Fraction(float(lo)), Fraction(float(hi)) - x
    if dl < dh:
        return lo
    if dh < dl:
        return hi
    return lo if int(np.array(lo).view(np.uint32)) % 2 == 0 else hi


@settings(max_examples=300, deadline=None)
@given(lanes)
def test_fast_fma_equals_the_reference(triples: list[tuple[int, int, int]]) -> None:
    """The row functions (results canonical: NaN payloads are the host's before canon32)."""
    a, b, c = (np.array([t[i] for t in triples], dtype=np.uint32) for i in range(3))
    key = row("fma.f32").key
    want = sem.SEMANTICS[key](a, b, c)
    got = value_function(key)(a, b, c)
    assert value_function(key) is not sem.SEMANTICS[key]
    np.testing.assert_array_equal(got, want)
    fa, fb, fc = (x.view(np.float32) for x in (a, b, c))
    fast, ref = np.asarray(fma_f32_fast(fa, fb, fc)), np.asarray(sem.fma_f32(fa, fb, fc))
    ok = ~np.isnan(ref)
    np.testing.assert_array_equal(fast.view(np.uint32)[ok], ref.view(np.uint32)[ok])
    assert np.isnan(fast[~ok]).all()


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(st.one_of(near, tiny, bits), st.one_of(near, tiny, bits), st.one_of(near, tiny, bits)),
        min_size=1,
        max_size=8,
    )
)
def test_fast_fma_is_correctly_rounded(triples: list[tuple[int, int, int]]) -> None:
    a, b, c = (_f([t[i] for t in triples]) for i in range(3))
    got = np.asarray(fma_f32_fast(a, b, c))
    for i in range(len(triples)):
        want = _exact(float(a[i]), float(b[i]), float(c[i]))
        if np.isnan(want):
            assert np.isnan(got[i])
        else:
            assert got[i].view(np.uint32) == np.float32(want).view(np.uint32), (triples[i], got[i], want)


def test_midpoints_and_underflow_take_the_exact_path() -> None:
    # 2^-24 * (1 + 2^-23) + 1 = 1 + 2^-24 + 2^-47: the float64 sum is exact here, just above the
    # float32 midpoint 1 + 2^-24, so the result is 1 + 2^-23
    got = fma_f32_fast(
        np.array([2.0**-24], np.float32), np.array([1 + 2.0**-23], np.float32), np.array([1.0], np.float32)
    )
    assert got[0] == np.float32(1 + 2.0**-23)
    # 1 + 2^-24 + 2^-80: float64 rounds the sum onto the midpoint; round to odd keeps it above
    got = fma_f32_fast(
        np.array([2.0**-40], np.float32), np.array([2.0**-40], np.float32) * np.float32(1), np.array([1.0], np.float32)
    )
    assert got[0] == np.float32(1.0)  # 2^-80 alone is far below half an ulp
    x = np.array([1 + 2.0**-23], np.float32)
    got = fma_f32_fast(x, np.array([2.0**-24], np.float32), np.array([1.0], np.float32))
    assert got[0] == np.float32(1 + 2.0**-23)
    # a product below half the smallest subnormal plus nothing: the float64 sum is exact but
    # lies in float32's subnormal range
    t = np.float32(2.0**-75)
    got = fma_f32_fast(np.array([t]), np.array([t * np.float32(1.5)]), np.array([np.float32(0)]))
    assert got[0] == np.float32(2.0**-149)
    # uniform and broadcast operands
    x = np.arange(5, dtype=np.float32)
    np.testing.assert_array_equal(fma_f32_fast(np.float32(3)[()], x, np.float32(1)[()]), 3 * x + 1)
    np.testing.assert_array_equal(fma_f32_fast(x, x, np.array(np.float32(2))), x * x + 2)
