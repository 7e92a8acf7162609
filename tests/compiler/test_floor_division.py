"""Python's `//` and `%` on i32 and u32 against a scalar reference of DESIGN's rules (issue 28.3):
rounded toward -inf, except that a zero divisor gives quotient all ones (-1) and remainder the
dividend, and INT_MIN // -1 wraps to INT_MIN with remainder 0; the floor fix-up never fires for a
zero divisor. Variable divisors, every edge divisor as a constant, -O0 and -O2, and OpenCL."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import wavegpu as wg
from wavegpu.runtime import opencl
from wavegpu.runtime.kernel import run_kernel

INT_MIN, INT_MAX = -(2**31), 2**31 - 1
EDGES = [0, 1, -1, 2, -2, 3, -7, 8, INT_MIN, INT_MIN + 1, INT_MAX]
CONST_DIVISORS = [0, -1, 1, 2, -8, 7, -3, INT_MIN]
N = 32


def floordiv_ref(x: int, y: int, bits: int = 32, signed: bool = True) -> int:
    """DESIGN section 3 with Python's rounding: the reference the kernels must give."""
    if y == 0:
        return -1 if signed else (1 << bits) - 1
    if signed and x == INT_MIN and y == -1:
        return INT_MIN
    return x // y


def floormod_ref(x: int, y: int, bits: int = 32, signed: bool = True) -> int:
    if y == 0:
        return x
    if signed and x == INT_MIN and y == -1:
        return 0
    return x % y


SRC = (
    """import wavegpu as wg

@wg.kernel
def vary(x: wg.i32[:], y: wg.i32[:], q: wg.i32[:], r: wg.i32[:], ux: wg.u32[:], uy: wg.u32[:], uq: wg.u32[:], ur: wg.u32[:]):
    i = wg.global_id()
    q[i] = x[i] // y[i]
    r[i] = x[i] % y[i]
    uq[i] = ux[i] // uy[i]
    ur[i] = ux[i] % uy[i]

@wg.kernel
def const(x: wg.i32[:], q: wg.i32[:, :], r: wg.i32[:, :]):
    i = wg.global_id()
"""
    + "".join(f"    q[i, {j}] = x[i] // {d}\n    r[i, {j}] = x[i] % {d}\n" for j, d in enumerate(CONST_DIVISORS))
    + """    q[i, 8] = -7 // x[i]
    r[i, 8] = -7 % x[i]
    q[i, 9] = 0 // x[i]
    r[i, 9] = 0 % x[i]
"""
)


@functools.cache
def program(opt: int) -> wg.Program:
    return wg.compile(SRC, opt=opt)


def kernel(opt: int, name: str) -> wg.Kernel:
    return next(k for k in program(opt).kernels if k.name == name)


values = st.one_of(st.sampled_from(EDGES), st.integers(INT_MIN, INT_MAX))
uvalues = st.one_of(st.sampled_from([0, 1, 2, 7, 2**31, 2**32 - 1]), st.integers(0, 2**32 - 1))


def run_vary(xs: list[int], ys: list[int], uxs: list[int], uys: list[int], opt: int, device: str = "emulator"):  # type: ignore[no-untyped-def]
    x, y = np.array(xs, np.int32), np.array(ys, np.int32)
    ux, uy = np.array(uxs, np.uint32), np.array(uys, np.uint32)
    q, r, uq, ur = np.zeros(N, np.int32), np.zeros(N, np.int32), np.zeros(N, np.uint32), np.zeros(N, np.uint32)
    run_kernel(kernel(opt, "vary"), [x, y, q, r, ux, uy, uq, ur], grid=1, workgroup=N, device=device)
    return q, r, uq, ur


def check_vary(xs, ys, uxs, uys, got) -> None:  # type: ignore[no-untyped-def]
    q, r, uq, ur = got
    assert q.tolist() == [floordiv_ref(a, b) for a, b in zip(xs, ys)]
    assert r.tolist() == [floormod_ref(a, b) for a, b in zip(xs, ys)]
    assert uq.tolist() == [floordiv_ref(a, b, signed=False) for a, b in zip(uxs, uys)]
    assert ur.tolist() == [floormod_ref(a, b, signed=False) for a, b in zip(uxs, uys)]


pairs = st.tuples(
    st.lists(values, min_size=N, max_size=N),
    st.lists(values, min_size=N, max_size=N),
    st.lists(uvalues, min_size=N, max_size=N),
    st.lists(uvalues, min_size=N, max_size=N),
)


@settings(max_examples=25, deadline=None)
@given(pairs)
def test_floor_division_and_modulo_follow_design(p: tuple[list[int], ...]) -> None:
    xs, ys, uxs, uys = p
    for opt in (0, 2):
        check_vary(xs, ys, uxs, uys, run_vary(xs, ys, uxs, uys, opt))


def test_a_negative_dividend_over_zero_is_minus_one() -> None:
    """The case of issue 28.3: -7 // 0 was -2 (the fix-up fired); it is -1, as in C++ and Rust."""
    xs = [-7, 7, -1, 0, INT_MIN, INT_MIN, 5, -5] + [1] * (N - 8)
    ys = [0, 0, 0, 0, 0, -1, -3, 3] + [1] * (N - 8)
    for opt in (0, 2):
        q, r, _, _ = run_vary(xs, ys, [0] * N, [0] * N, opt)
        assert q[:8].tolist() == [-1, -1, -1, -1, -1, INT_MIN, -2, -2]
        assert r[:8].tolist() == [-7, 7, -1, 0, INT_MIN, 0, -1, 1]


@settings(max_examples=15, deadline=None)
@given(st.lists(values, min_size=N, max_size=N))
def test_constant_divisors_and_dividends_follow_design(xs: list[int]) -> None:
    """Each edge divisor as a constant (strength reduction and legalisation take other paths),
    and constant dividends over a variable divisor."""
    x = np.array(xs, np.int32)
    cols = len(CONST_DIVISORS) + 2
    for opt in (0, 2):
        q, r = np.zeros((N, cols), np.int32), np.zeros((N, cols), np.int32)
        run_kernel(kernel(opt, "const"), [x, q, r], grid=1, workgroup=N)
        for j, d in enumerate(CONST_DIVISORS):
            assert q[:, j].tolist() == [floordiv_ref(a, d) for a in xs], f"-O{opt} x // {d}"
            assert r[:, j].tolist() == [floormod_ref(a, d) for a in xs], f"-O{opt} x % {d}"
        j = len(CONST_DIVISORS)
        assert q[:, j].tolist() == [floordiv_ref(-7, a) for a in xs]
        assert r[:, j].tolist() == [floormod_ref(-7, a) for a in xs]
        assert q[:, j + 1].tolist() == [floordiv_ref(0, a) for a in xs]
        assert r[:, j + 1].tolist() == [floormod_ref(0, a) for a in xs]


@pytest.mark.skipif(not opencl.available()[0], reason="no OpenCL")
def test_opencl_gives_the_same_quotients() -> None:
    xs = [-7, 7, -1, 0, INT_MIN, INT_MIN, 5, -5] + EDGES + [3] * (N - 8 - len(EDGES))
    ys = [0, 0, 0, 0, 0, -1, -3, 3] + EDGES[::-1] + [0] * (N - 8 - len(EDGES))
    uxs = [2**32 - 1, 7, 0] + [5] * (N - 3)
    uys = [0, 0, 0] + [3] * (N - 3)
    check_vary(xs, ys, uxs, uys, run_vary(xs, ys, uxs, uys, 2, device="opencl"))
