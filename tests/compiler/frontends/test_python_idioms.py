"""Python idioms of issue 24 as Python users write them: accumulators typed by flow (`s = 0` then
`s += x[j]`), `min`/`max` with CPython's meaning in both modes (compiled and `wg.python_thread`)
and the device's as `wg.fmin`/`wg.fmax`, `round`, `math.isinf`/`math.isfinite`, and the refusals
of what the device lacks, each in the user's terms."""

from __future__ import annotations

import math
import re
import textwrap

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import wavegpu as wg
from wavegpu.runtime import pyexec

f32 = np.float32


def _kernels(body: str, params: str = "x: wg.f32[:], o: wg.f32[:]") -> wg.Kernels:
    src = f"import math\nimport wavegpu as wg\n@wg.kernel\ndef k({params}):\n" + textwrap.indent(
        textwrap.dedent(body), "    "
    )
    return wg.load_kernels(src, lang="python")


@pytest.mark.parametrize("opt", [0, 2])
def test_an_integer_started_accumulator_of_floats_sums_in_the_float_type(opt: int) -> None:
    """`s = 0; s += x[j]` is Python's float sum (the 0 is 0.0: one number); a counter stays an i32."""
    src = textwrap.dedent(
        """
        import wavegpu as wg
        @wg.kernel
        def k(x: wg.f32[:], d: wg.f64[:], o: wg.f32[:], c: wg.i32[:], od: wg.f64[:]):
            s = 0
            n = 0
            t = 1
            for j in range(len(x)):
                s += x[j]
                if x[j] > 0.5:
                    n += 1
                t = t * 0.5
            o[0] = s
            o[1] = t
            c[0] = n
            a = 0
            for j in range(len(d)):
                a = a + d[j]
            od[0] = a
        """
    )
    rng = np.random.default_rng(4)
    x, d = rng.random(37, dtype=f32), rng.random(9)
    o, c, od = np.zeros(2, f32), np.zeros(1, np.int32), np.zeros(1)
    wg.load_kernels(src, lang="python", opt=opt).k(x, d, o, c, od, grid=1, workgroup=1)
    s = f32(0)
    for v in x:
        s = f32(s + v)
    assert o[0] == s and o[1] == f32(0.5**37) and c[0] == (x > 0.5).sum()
    assert od[0] == sum(float(v) for v in d)  # f64 from the start: Python's own sum
    assert "s" in src  # (the kernel above is the idiom itself)


def test_a_start_the_float_type_does_not_hold_is_refused_without_a_truncating_fix() -> None:
    with pytest.raises(wg.CompileError) as e:
        _kernels("s = 16777217\ns += x[0]\no[0] = s\n")
    msg = e.value.diagnostics[0].message
    assert "use another name" in msg and "i32(" not in msg and "int(" not in msg, msg


MINMAX = """
i = wg.global_id()
o[4 * i] = min(a[i], b[i])
o[4 * i + 1] = max(a[i], b[i], 0.5)
o[4 * i + 2] = wg.fmin(a[i], b[i])
o[4 * i + 3] = wg.fmax(a[i], b[i])
"""
SPECIAL = [math.nan, -0.0, 0.0, 1.0, -1.0, math.inf, -math.inf, 0.5]


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal bits, any NaN equal to any NaN (the device's NaN is the canonical one)."""
    return bool(np.all((a.view(np.uint32) == b.view(np.uint32)) | (np.isnan(a) & np.isnan(b))))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    pairs=st.lists(
        st.tuples(
            st.one_of(st.sampled_from(SPECIAL), st.floats(width=32)),
            st.one_of(st.sampled_from(SPECIAL), st.floats(width=32)),
        ),
        min_size=1,
        max_size=32,
    )
)
def test_min_and_max_mean_the_same_compiled_and_as_plain_python(pairs: list[tuple[float, float]]) -> None:
    """`min`/`max` are CPython's (NaN and signed zeros by argument order), `wg.fmin`/`wg.fmax` the
    device's (a NaN operand gives the other, -0 below +0), in both modes, bit for bit."""
    a = np.array([p[0] for p in pairs], f32)
    b = np.array([p[1] for p in pairs], f32)
    ks = _kernels(MINMAX, "a: wg.f32[:], b: wg.f32[:], o: wg.f32[:]")
    got = np.zeros(4 * len(a), f32)
    ks.k(a, b, got, grid=1, workgroup=len(a))
    want = np.zeros_like(got)
    for i in range(len(a)):  # the same body, run by CPython with the wavegpu builtins
        want[4 * i : 4 * i + 4] = [
            min(a[i], b[i]),
            max(a[i], b[i], f32(0.5)),
            wg.fmin(a[i], b[i]),
            wg.fmax(a[i], b[i]),
        ]
    assert _same(got, want), (a, b, got, want)


def test_min_and_max_of_nan_and_zeros_in_both_modes() -> None:
    nan = f32("nan")
    assert math.isnan(min(nan, f32(1))) and min(f32(1), nan) == 1  # CPython's own
    assert math.copysign(1, min(f32(0.0), f32(-0.0))) == 1 and math.copysign(1, min(f32(-0.0), f32(0.0))) == -1
    assert pyexec.fmin(nan, f32(1)) == 1 and pyexec.fmin(f32(1), nan) == 1
    assert math.copysign(1, pyexec.fmin(f32(0.0), f32(-0.0))) == -1
    assert math.copysign(1, pyexec.fmax(f32(-0.0), f32(0.0))) == 1
    a = np.array([nan, 1, 0.0, -0.0], f32)
    b = np.array([1, nan, -0.0, 0.0], f32)
    o = np.zeros(16, f32)
    _kernels(MINMAX, "a: wg.f32[:], b: wg.f32[:], o: wg.f32[:]").k(a, b, o, grid=1, workgroup=4)
    mins = o[0::4]
    assert np.isnan(mins[0]) and mins[1] == 1 and not np.signbit(mins[2]) and np.signbit(mins[3])
    fmins = o[2::4]
    assert fmins[0] == 1 and fmins[1] == 1 and np.signbit(fmins[2]) and np.signbit(fmins[3])


def test_integer_min_and_max_keep_the_device_rows() -> None:
    """On integers both meanings agree: the kernel keeps the ISA's min.s32 (no compare and select)."""
    text = (
        "import wavegpu as wg\n@wg.kernel\ndef k(o: wg.i32[:]):\n    i = wg.global_id()\n    o[i] = min(i, 7 - i, 3)\n"
    )
    dis = wg.disassemble(wg.compile(text, lang="python"))
    assert "min.s32" in dis and "selp" not in dis
    o = np.zeros(8, np.int32)
    wg.load_kernels(text, lang="python").k(o, grid=1, workgroup=8)
    assert o.tolist() == [min(i, 7 - i, 3) for i in range(8)]


def test_round_is_pythons_round_in_both_modes() -> None:
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 2.4999998, 1e9, -7.5], f32)
    o = np.zeros(len(x), np.int32)
    ks = _kernels("i = wg.global_id()\no[i] = round(x[i])\n", "x: wg.f32[:], o: wg.i32[:]")
    ks.k(x, o, grid=1, workgroup=len(x))
    assert o.tolist() == [round(float(v)) for v in x]


def test_isinf_and_isfinite_are_exact() -> None:
    x = np.array([math.inf, -math.inf, math.nan, 0.0, 3.4028235e38, -1e-45], f32)
    o = np.zeros(2 * len(x), np.int32)
    body = "i = wg.global_id()\no[2 * i] = wg.i32(math.isinf(x[i]))\no[2 * i + 1] = wg.i32(math.isfinite(x[i]))\n"
    _kernels(body, "x: wg.f32[:], o: wg.i32[:]").k(x, o, grid=1, workgroup=len(x))
    assert o.tolist() == [int(f(float(v))) for v in x for f in (math.isinf, math.isfinite)]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("o[0] = math.tan(x[0])", "math.tan has no device instruction; kernels have math.sqrt"),
        ("o[0] = math.hypot(x[0], x[1])", "math.hypot has no device instruction"),
        ("o[0] = round(x[0], 2)", "round(x, ndigits) rounds to decimal digits"),
        ("o[0] = sum(x)", "'sum' is not a builtin or a function of this module"),
        ("o[0] = min(x[0])", "min(a, b, ...) takes two or more numbers, 1 given"),
    ],
)
def test_what_the_device_lacks_is_refused_in_the_users_terms(body: str, message: str) -> None:
    with pytest.raises(wg.CompileError, match=re.escape(message)):
        _kernels(body + "\n")
