"""The builtins added as table rows with the binder (issue 23): pow, clamp, sign, isnan, trunc,
round_even / round_away (and Python's round), popcount, clz, ctz, in Python kernels on the
emulator against NumPy, edge cases (NaN, inf, -0.0, ties) included, and against plain Python
(`wg.python_thread`)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import wavegpu as wg

F = np.float32


@wg.kernel
def floats(x: wg.f32[:], y: wg.f32[:], o: wg.f32[:], n: wg.i32):
    i = wg.global_id()
    if i < n:
        v = x[i]
        o[8 * i] = wg.pow(v, y[i])
        o[8 * i + 1] = wg.clamp(v, -1.5, y[i])
        o[8 * i + 2] = wg.sign(v)
        o[8 * i + 3] = wg.trunc(v)
        o[8 * i + 4] = wg.round_even(v)
        o[8 * i + 5] = wg.round_away(v)
        o[8 * i + 6] = wg.f32(math.isnan(v))
        o[8 * i + 7] = math.pow(y[i], 2.0)


@wg.kernel
def ints(a: wg.i32[:], u: wg.u32[:], o: wg.i32[:], n: wg.i32):
    i = wg.global_id()
    if i < n:
        j = a[i]
        o[8 * i] = wg.popcount(j)
        o[8 * i + 1] = wg.clz(j)
        o[8 * i + 2] = wg.ctz(j)
        o[8 * i + 3] = wg.sign(j)
        o[8 * i + 4] = wg.clamp(j, -5, 5)
        o[8 * i + 5] = wg.popcount(u[i]) + wg.clz(u[i]) * 64
        o[8 * i + 6] = wg.i32(wg.sign(u[i]))
        o[8 * i + 7] = wg.ctz(u[i])


SPECIAL = [0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999997, -0.49999997, 1.0, -1.0, 3.0, -3.0]
SPECIAL += [math.inf, -math.inf, math.nan, 8388607.5, -8388607.5, 8388608.0, 1e30, -1e-30, 2.0**-149]


def _run_floats(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    n = len(x)
    o = np.zeros(8 * n, F)
    floats(x, y, o, n, grid=((n + 63) // 64,), workgroup=(64,))
    return o.reshape(n, 8)


def _bits_equal(got: np.ndarray, want: np.ndarray) -> bool:
    got, want = np.asarray(got, F), np.asarray(want, F)
    same = got.view(np.uint32) == want.view(np.uint32)
    return bool(np.all(same | (np.isnan(got) & np.isnan(want))))


def _round_away(x: np.ndarray) -> np.ndarray:
    x64 = x.astype(np.float64)
    return np.copysign(np.floor(np.abs(x64) + 0.5), x64).astype(F)


def _pow_ulps(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The bound docs/compiler.md states: 2 ulps plus 1.5 ulps per unit of |y * log2|x||."""
    with np.errstate(all="ignore"):
        e = np.abs(y.astype(np.float64) * np.log2(np.abs(x.astype(np.float64))))
    return 2 + 1.5 * np.nan_to_num(e, nan=0.0, posinf=0.0)


def _check_pow(x: np.ndarray, y: np.ndarray, got: np.ndarray) -> None:
    with np.errstate(all="ignore"):
        want = np.power(x.astype(np.float64), y.astype(np.float64)).astype(F)
    exact = ~np.isfinite(want) | (want == 0) | ~np.isfinite(got) | (got == 0)
    assert _bits_equal(got[exact], want[exact]), np.c_[x, y, got, want][exact]
    g, w = got[~exact].astype(np.float64), want[~exact].astype(np.float64)
    ulp = np.spacing(np.abs(want[~exact])).astype(np.float64)
    err = np.abs(g - w) / ulp
    assert np.all(err <= _pow_ulps(x[~exact], y[~exact])), np.c_[x[~exact], y[~exact], g, w, err][err > 2]


def test_rounding_and_number_builtins_match_numpy_on_edge_cases() -> None:
    x = np.array(SPECIAL, F)
    y = np.resize(np.array([2.0, 3.0, -1.0, 0.5, 0.0, -0.0, math.inf, -math.inf, math.nan, 10.0], F), len(x))
    o = _run_floats(x, y)
    assert _bits_equal(o[:, 1], np.fmin(np.fmax(x, F(-1.5)), y))  # the device's min/max drop a NaN
    assert _bits_equal(o[:, 2], np.where(x == 0, x, np.sign(x)))  # sign(-0.0) is -0.0 (NumPy: +0.0)
    assert _bits_equal(o[:, 3], np.trunc(x))
    assert _bits_equal(o[:, 4], np.round(x))  # ties to even
    assert _bits_equal(o[:, 5], _round_away(x))  # ties away from zero (C's roundf, Rust's round)
    assert np.array_equal(o[:, 6], np.isnan(x).astype(F))
    _check_pow(x, y, o[:, 0])
    _check_pow(y, np.full_like(y, 2.0), o[:, 7])


def test_pow_special_cases_follow_c() -> None:
    inf, nan = math.inf, math.nan
    cases = [
        (-0.0, -1.0, -inf), (-0.0, -2.0, inf), (0.0, -3.0, inf), (-0.0, 3.0, -0.0), (-0.0, 0.5, 0.0),
        (-1.0, inf, 1.0), (-1.0, -inf, 1.0), (1.0, nan, 1.0), (nan, 0.0, 1.0), (nan, -0.0, 1.0),
        (-8.0, 1 / 3, nan), (-2.0, 3.0, -8.0), (-2.0, -3.0, -0.125), (-inf, 3.0, -inf), (-inf, -3.0, -0.0),
        (-inf, 0.5, inf), (0.5, inf, 0.0), (2.0, -inf, 0.0), (0.5, -inf, inf), (inf, -1.0, 0.0),
        (2.0, 10.0, 1024.0), (4.0, 0.5, 2.0), (-2.0, 2.0**30, inf), (-0.5, 2.0**30, 0.0),
    ]  # fmt: skip
    x, y, want = (np.array(c, F) for c in zip(*cases))
    o = _run_floats(x, y)
    assert _bits_equal(o[:, 0], want), np.c_[x, y, o[:, 0], want]
    with np.errstate(all="ignore"):
        assert _bits_equal(want, np.power(x, y))  # the table above is NumPy's (C's) answer


@settings(max_examples=15, deadline=None)
@given(st.lists(st.floats(width=32, allow_nan=True), min_size=1, max_size=64), st.integers(0, 2**32 - 1))
def test_float_builtins_match_numpy(values: list[float], seed: int) -> None:
    x = np.array(values, F)
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(len(x)) < 0.5, np.round(rng.uniform(-6, 6, len(x))), rng.uniform(-4, 4, len(x))).astype(F)
    o = _run_floats(x, y)
    assert _bits_equal(o[:, 3], np.trunc(x))
    assert _bits_equal(o[:, 4], np.round(x))
    assert _bits_equal(o[:, 5], _round_away(x))
    assert _bits_equal(o[:, 2], np.where(x == 0, x, np.sign(x)))
    assert np.array_equal(o[:, 6], np.isnan(x).astype(F))
    _check_pow(x, y, o[:, 0])


def _popcount(v: int) -> int:
    return (v & 0xFFFFFFFF).bit_count()


def _clz(v: int) -> int:
    return 32 - (v & 0xFFFFFFFF).bit_length()


def _ctz(v: int) -> int:
    v &= 0xFFFFFFFF
    return (v & -v).bit_length() - 1 if v else 32


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(-(2**31), 2**31 - 1), min_size=1, max_size=64))
def test_bit_counts_match_python(values: list[int]) -> None:
    values = [*values, 0, -1, 1, -(2**31), 2**31 - 1]
    a = np.array(values, np.int32)
    u = a.view(np.uint32)
    n = len(a)
    o = np.zeros(8 * n, np.int32)
    ints(a, u, o, n, grid=((n + 63) // 64,), workgroup=(64,))
    o = o.reshape(n, 8)
    assert o[:, 0].tolist() == [_popcount(v) for v in values]
    assert o[:, 1].tolist() == [_clz(v) for v in values]
    assert o[:, 2].tolist() == [_ctz(v) for v in values]
    assert o[:, 3].tolist() == np.sign(a).tolist()
    assert o[:, 4].tolist() == np.clip(a, -5, 5).tolist()
    assert o[:, 5].tolist() == [_popcount(v) + 64 * _clz(v) for v in values]
    assert o[:, 6].tolist() == [1 if v & 0xFFFFFFFF else 0 for v in values]
    assert o[:, 7].tolist() == [_ctz(v) for v in values]


def test_plain_python_agrees() -> None:
    rng = np.random.default_rng(7)
    x = np.array([*SPECIAL[:14], *rng.uniform(-9, 9, 50)], F)
    y = np.resize(np.array([2.0, 3.0, -1.0, 0.5, 4.0], F), len(x))
    dev = _run_floats(x, y)
    host = np.zeros(8 * len(x), F)
    with np.errstate(all="ignore"):
        for i in range(len(x)):
            with wg.python_thread(global_id=i):
                floats.python(x, y, host, len(x))  # type: ignore[attr-defined]
    host = host.reshape(len(x), 8)
    assert _bits_equal(dev[:, 1:7], host[:, 1:7])
    _check_pow(x, y, host[:, 0])
    _check_pow(x, y, dev[:, 0])
    a = np.array([0, 1, -1, 12, -(2**31), 2**31 - 1, 96], np.int32)
    want = np.zeros(8 * len(a), np.int32)
    got = np.zeros_like(want)
    ints(a, a.view(np.uint32), got, len(a), grid=(1,), workgroup=(64,))
    for i in range(len(a)):
        with wg.python_thread(global_id=i):
            ints.python(a, a.view(np.uint32), want, len(a))  # type: ignore[attr-defined]
    assert got.tolist() == want.tolist()


@wg.kernel
def rounds(x: wg.f32[:], o: wg.i32[:], k: wg.i32[:]):
    i = wg.global_id()
    o[i] = round(x[i])  # Python's round: an int, ties to even
    k[i] = round(k[i])  # of an int: the int itself


def test_python_round_is_an_integer_rounded_to_even() -> None:
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4999998, 3.7, -3.7, 1e9], F)
    o = np.zeros(len(x), np.int32)
    k = np.array([2**31 - 1, -5, 0, 7, 16777217, -16777217, 1, 2, 3, 4], np.int32)
    k0 = k.copy()
    rounds(x, o, k, grid=(1,), workgroup=(len(x),))
    assert o.tolist() == [round(float(v)) for v in x]
    assert k.tolist() == k0.tolist()


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("wg.popcount(x[0])", "popcount takes an i32 or u32, not f32"),
        ("wg.clamp(n, 1, wg.u32(n))", "clamp of i32 and u32"),
        ("wg.trunc(wg.f16(x[0]))", "trunc takes f32 or f64, not f16"),
        ("pow(n, n)", r"pow\(\) of two integers is an integer in Python"),
        ("wg.round_even(x[0], 2)", r"round_even\(\) takes 1 argument, 2 given"),
        ("round(x[0], 2)", r"round\(x, ndigits\) rounds to decimal digits"),  # refused before arity
        ("math.fabs(x[0], x[1])", r"fabs\(\) takes 1 argument, 2 given"),
        ("wg.isnan(x)", "'x' is an array"),
    ],
)
def test_new_builtins_refuse_with_the_place(expr: str, message: str) -> None:
    src = f"import wavegpu as wg\n@wg.kernel\ndef k(x: wg.f32[:], n: wg.i32):\n    x[1] = wg.f32({expr})\n"
    with pytest.raises(wg.CompileError, match=message) as e:
        wg.compile(src)
    span = e.value.diagnostics[0].span
    assert span is not None and span.line == 4


COUNTS = """import wavegpu as wg
@wg.kernel
def k(a: wg.i32[:]):
    v = a[0]
    a[1] = wg.popcount(v)
    a[2] = wg.clz(v)
    a[3] = wg.ctz(v)
    a[4] = wg.popcount(-1) + 100 * wg.clz(0) + 10000 * wg.ctz(0) + 1000000 * wg.clz(1)
"""


@pytest.mark.parametrize("opt", [0, 1, 2, 3])
def test_bit_counts_select_the_isa_rows_and_fold(opt: int) -> None:
    """popcount and clz are the ISA's popc.b32 and clz.b32 rows (ctz: popc of a mask); constant
    arguments fold (compiler/passes/sccp.py, by the rows' semantics) to the same values."""
    prog = wg.compile(COUNTS, opt=opt)
    text = wg.disassemble(prog)
    assert "popc.b32" in text and "clz.b32" in text
    mem = np.zeros(64, np.uint8)
    mem[:4] = np.array([0x00F0_0100], np.int32).view(np.uint8)
    out = wg.emulate(prog, grid=(1, 1, 1), workgroup=(1, 1, 1), memory=mem, args=[0]).memory.view(np.int32)
    assert out[1:5].tolist() == [5, 8, 8, 32 + 100 * 32 + 10000 * 32 + 1000000 * 31]


@wg.kernel
def floats64(x: wg.f64[:], o: wg.f64[:], b: wg.i32[:], n: wg.i32):
    i = wg.global_id()
    if i < n:
        v = x[i]
        o[5 * i] = wg.trunc(v)
        o[5 * i + 1] = wg.round_even(v)
        o[5 * i + 2] = wg.round_away(v)
        o[5 * i + 3] = wg.sign(v)
        o[5 * i + 4] = wg.clamp(v, -1.5, 2.0)
        b[i] = wg.i32(wg.isnan(v))


def _round_half_up(v: float) -> float:
    """Ties away from zero, exactly (decimal arithmetic): floor(|v| + 0.5) is wrong at 0.49999999999999994."""
    from decimal import ROUND_HALF_UP, Decimal

    if not math.isfinite(v) or abs(v) >= 2.0**52:  # every such double is an integer
        return v
    return math.copysign(float(Decimal(abs(v)).quantize(Decimal(1), rounding=ROUND_HALF_UP)), v)


@settings(max_examples=10, deadline=None)
@given(st.lists(st.floats(allow_nan=True), min_size=1, max_size=40))
def test_f64_rounding_matches_numpy(values: list[float]) -> None:
    x = np.array([*values, 0.49999999999999994, -0.5, 2.5, -0.0, 4503599627370495.5, math.inf, math.nan], np.float64)
    n = len(x)
    o, b = np.zeros(5 * n), np.zeros(n, np.int32)
    floats64(x, o, b, n, grid=((n + 63) // 64,), workgroup=(64,))
    o = o.reshape(n, 5)

    def same(got: np.ndarray, want: np.ndarray) -> bool:
        return bool(np.all((got.view(np.uint64) == want.view(np.uint64)) | (np.isnan(got) & np.isnan(want))))

    assert same(o[:, 0], np.trunc(x))
    assert same(o[:, 1], np.round(x))
    assert same(o[:, 2], np.array([_round_half_up(v) for v in x]))
    assert same(o[:, 3], np.where(x == 0, x, np.sign(x)))
    assert same(o[:, 4], np.fmin(np.fmax(x, -1.5), 2.0))
    assert b.tolist() == np.isnan(x).astype(int).tolist()
