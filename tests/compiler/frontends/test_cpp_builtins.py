"""The C++ frontend on the builtin table (issues 23 and 24): every spelling of every row (CALLS)
compiles in wavegpu and in g++ with wave.hpp (the header is checked against the table), the rows
added with the binder give NumPy's answers in their C++ spellings, and the C++-specific refusals
(std::popcount of a signed int, std::pow of float and int being double) say why."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wavegpu.compiler.builtins import ROWS, Arg, Kind, Rule
from wavegpu.compiler.frontends.cpp import CALLS, CPP, SPELLINGS, Form, include_dir
from wavegpu.errors import CompileError
from wavegpu.runtime.sources import load_kernels

GXX = shutil.which("g++")
GXX_FLAGS = ["-std=c++20", "-fsyntax-only", "-Werror", "-Wno-attributes=wave::", f"-I{include_dir()}"]
HEAD = '#include <algorithm>\n#include <bit>\n#include <cmath>\n#include "wave.hpp"\n'


def _gxx(tmp_path: Path, src: str, name: str = "k.cpp") -> None:
    p = tmp_path / name
    p.write_text(src)
    r = subprocess.run([GXX or "g++", *GXX_FLAGS, str(p)], capture_output=True, text=True)
    assert r.returncode == 0, f"{name}:\n{r.stderr}"


# ---- every spelling of every row, in one kernel -------------------------------------------------
def _call(ns: str, name: str, row_name: str, form: Form) -> str | None:
    """A call of this spelling with arguments of the types its overload takes."""
    row = ROWS[row_name]
    callee = f"{ns}::{name}" if ns else name
    if row.rule is Rule.LOCAL:
        return None  # a declaration: `auto s = wave::local_array<float, 64>();` below
    if row.kind is Kind.CAST:
        return f"{callee}(f)"
    if row.rule is Rule.ATOMIC:
        extra = ", 1u" if row_name == "atomic_cas" else ""
        return f"{callee}(&u[1], 2u{extra})"
    value = "u" if form in (Form.UINT, Form.UNSIGNED) or row.rule is Rule.WAVE else "f"
    args = {
        Arg.AXIS: "0",
        Arg.SCOPE: "wave::scope::workgroup",
        Arg.INDEX: "1u",
        Arg.CONDITION: "c",
        Arg.VALUE: {"u": "u[0]", "f": "x", "d": "xd"}[value],
        Arg.COUNT: "3",
    }
    n = 2 if row.kind is Kind.MINMAX else len(row.args)
    kinds = row.args if row.kind is not Kind.MINMAX else (Arg.VALUE,) * n
    return f"{callee}({', '.join(args[k] for k in kinds)})"


def _every_spelling() -> str:
    lines = []
    for (ns, name), (row, form) in sorted(CALLS.items()):
        if ns == "" and (row, form) == CALLS.get(("wave", name)):
            continue  # `using namespace wave;` names: the same declarations as wave::
        call = _call(ns, name, row, form)
        if call is not None:
            lines.append(f"    (void){call};  // {row}")
    body = "\n".join(lines)
    return (
        HEAD
        + "[[wave::kernel]] void all(float* y, uint32_t* u) {\n"
        + "    auto loc = wave::local_array<float, 64>();\n    loc[0] = 1.0f;\n"
        + "    float x = y[0];\n    double xd = static_cast<double>(y[1]);\n    float f = y[2];\n"
        + "    bool c = x > 0.0f;\n"
        + body
        + "\n}\n"
    )


def test_every_row_has_a_call_spelling() -> None:
    """Every row but bool (a keyword: `static_cast<bool>(x)`, read as a conversion) and
    private_array (a declaration: `float t[8];`) is a call."""
    spelled = {row for row, _ in CALLS.values()}
    assert spelled == set(ROWS) - {"bool", "private_array"}
    assert set(SPELLINGS) == set(ROWS)


def test_wavegpu_accepts_every_spelling() -> None:
    src = _every_spelling()
    assert CPP.parse(src, "all.cpp")
    load_kernels(src, lang="cpp")


@pytest.mark.skipif(GXX is None, reason="g++ is not installed")
def test_gxx_accepts_every_spelling_with_wave_hpp(tmp_path: Path) -> None:
    """wave.hpp is checked against the table: every spelling of every row, as wavegpu reads it."""
    _gxx(tmp_path, _every_spelling())


# ---- the rows added with the binder, in C++'s spellings, against NumPy --------------------------
NEW_ROWS = (
    HEAD
    + """
[[wave::kernel]] void rows(const float* x, const float* y, const uint32_t* u, const int32_t* s,
                           float* f, int32_t* bits, uint32_t n) {
    uint32_t i = wave::global_id(0);
    if (i >= n) return;
    float a = x[i], b = y[i];
    f[i * 12 + 0] = powf(a, b);
    f[i * 12 + 1] = std::pow(a, 2.0f);
    f[i * 12 + 2] = roundf(a);
    f[i * 12 + 3] = std::round(a);
    f[i * 12 + 4] = truncf(a);
    f[i * 12 + 5] = rintf(a);
    f[i * 12 + 6] = std::clamp(a, -1.0f, 1.0f);
    f[i * 12 + 7] = wave::clamp(a, -1.0f, 1.0f);
    f[i * 12 + 8] = wave::sign(a);
    f[i * 12 + 9] = std::isnan(a) ? 1.0f : 0.0f;
    f[i * 12 + 10] = __builtin_powif(a, 3);
    f[i * 12 + 11] = static_cast<float>(std::clamp(s[i], -5, 5) + wave::sign(s[i]));
    bits[i * 6 + 0] = __builtin_popcount(u[i]);
    bits[i * 6 + 1] = std::popcount(u[i]);
    bits[i * 6 + 2] = __builtin_clz(u[i]);
    bits[i * 6 + 3] = std::countl_zero(u[i]);
    bits[i * 6 + 4] = __builtin_ctz(s[i]);
    bits[i * 6 + 5] = std::countr_zero(u[i]);
}
"""
)


def _bits32(v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    vals = [int(x) for x in v.astype(np.uint32)]
    pop = [bin(x).count("1") for x in vals]
    clz = [32 - x.bit_length() for x in vals]
    ctz = [32 if x == 0 else (x & -x).bit_length() - 1 for x in vals]
    return np.array(pop), np.array(clz), np.array(ctz)


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_new_rows_against_numpy(engine: str) -> None:
    rng = np.random.default_rng(24)
    n = 64
    x = rng.uniform(-4, 4, n).astype(np.float32)
    x[:8] = [0.5, -0.5, 1.5, -2.5, 2.5, np.nan, -0.0, 3.0]  # ties, NaN, a negative zero
    y = rng.uniform(-2, 2, n).astype(np.float32)
    y[:8] = [2.0, 3.0, 0.0, 2.0, 1.0, 1.0, 2.0, -1.0]
    u = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    u[:3] = [0, 1, 0x80000000]
    s = rng.integers(-20, 20, n).astype(np.int32)
    s[:2] = [0, -7]
    u[3] = s[3] = 0 if s[3] else s[3]  # a zero for ctz through the int overload (it is 32: documented)
    f = np.zeros(n * 12, np.float32)
    bits = np.zeros(n * 6, np.int32)
    k = load_kernels(NEW_ROWS, lang="cpp")["rows"]
    k(x, y, u, s, f, bits, np.uint32(n), grid=(1,), workgroup=(n,), engine=engine)
    f = f.reshape(n, 12)
    bits = bits.reshape(n, 6)
    with np.errstate(invalid="ignore"):
        pw = np.power(x.astype(np.float64), y.astype(np.float64))
    ok = np.isfinite(pw) & (np.abs(pw) < 1e30)
    np.testing.assert_allclose(f[ok, 0], pw[ok], rtol=2e-6, atol=1e-30)
    assert np.isnan(f[~np.isfinite(pw) & np.isnan(pw), 0]).all()
    np.testing.assert_allclose(f[:, 1], np.square(x.astype(np.float64)), rtol=2e-6)
    away = np.where(np.isnan(x), np.nan, np.copysign(np.floor(np.abs(x) + 0.5), x)).astype(np.float32)
    for col in (2, 3):
        np.testing.assert_array_equal(f[:, col], away)
    np.testing.assert_array_equal(f[:, 4], np.trunc(x))
    np.testing.assert_array_equal(f[:, 5], np.rint(x))
    # std::clamp is `v < lo ? lo : hi < v ? hi : v`: a NaN stays NaN; wave::clamp is the device's
    # min(max(x, lo), hi), whose min/max give the non-NaN operand
    std = np.where(x < -1, -1, np.where(x > 1, 1, x)).astype(np.float32)
    np.testing.assert_array_equal(f[:, 6], std)
    dev = np.fmin(np.fmax(x, np.float32(-1)), np.float32(1))
    np.testing.assert_array_equal(f[:, 7], dev)
    assert np.isnan(f[5, 6]) and f[5, 7] == -1.0
    sign = np.where(x > 0, 1, np.where(x < 0, -1, x)).astype(np.float32)
    np.testing.assert_array_equal(f[:, 8], sign)
    assert np.signbit(f[6, 8]), "sign(-0.0) keeps the zero's sign"
    np.testing.assert_array_equal(f[:, 9], np.isnan(x).astype(np.float32))
    np.testing.assert_allclose(f[:, 10], x.astype(np.float64) ** 3, rtol=2e-6)
    np.testing.assert_array_equal(f[:, 11], (np.clip(s, -5, 5) + np.sign(s)).astype(np.float32))
    pop, clz, _ = _bits32(u)
    _, _, ctz_s = _bits32(s.view(np.uint32))
    _, _, ctz_u = _bits32(u)
    np.testing.assert_array_equal(bits[:, 0], pop)
    np.testing.assert_array_equal(bits[:, 1], pop)
    np.testing.assert_array_equal(bits[:, 2], clz)
    np.testing.assert_array_equal(bits[:, 3], clz)
    np.testing.assert_array_equal(bits[:, 4], ctz_s)
    np.testing.assert_array_equal(bits[:, 5], ctz_u)
    assert bits[0, 2] == 32 and bits[0, 5] == 32, "clz(0) and ctz(0) are 32 here (undefined for __builtin_clz)"


@pytest.mark.skipif(GXX is None, reason="g++ is not installed")
def test_gxx_accepts_the_new_rows_kernels(tmp_path: Path) -> None:
    _gxx(tmp_path, NEW_ROWS, "rows.cpp")
    _gxx(tmp_path, ROUNDING, "rounding.cpp")


# ---- refusals in C++'s words --------------------------------------------------------------------
def _error(body: str) -> str:
    src = HEAD + f"[[wave::kernel]] void k(const float* x, float* o, int32_t* s, uint32_t n) {{\n{body}\n}}\n"
    with pytest.raises(CompileError) as e:
        CPP.parse(src, "k.cpp")
    return str(e.value)


@pytest.mark.parametrize(
    ("body", "where", "message"),
    [
        # std::popcount is declared for unsigned types only: g++ refuses an int too
        (
            "    s[0] = std::popcount(s[1]);",
            "6:26",
            "std::popcount takes an unsigned integer in C++ (<bit>), not int32_t",
        ),
        # std::pow(float, int) is double in C++ (an integer argument makes it double): no double pow
        (
            "    o[0] = std::pow(x[0], 2);",
            "6:21",
            "pow takes float, not double: powf(static_cast<float>(x), ...) computes it in float",
        ),
        ("    o[0] = __builtin_powif(x[0], s[0]);", "6:34", "exponent must be a constant positive integer"),
        ("    s[0] = __builtin_clz(x[0]);", "6:26", "clz takes an int32_t or uint32_t, not float"),
        (
            "    o[0] = std::clamp(x[0], 0, 1);",
            "6:12",
            "needs arguments of one type (C++ deduces one T), not float and int32_t",
        ),
        ("    o[0] = wave::round(n);", "6:24", "wave::round of an integer is ambiguous (float or double)"),
        ("    o[0] = wave::fma(x[0], x[0]);", "6:12", "fma() takes 3 arguments, 2 given: wave::fma(a, b, c)"),
        ("    wave::fence(3);", "6:17", "fence takes wave::scope::wave, wave::scope::workgroup or wave::scope::device"),
        ("    o[0] = wave::thread_id(n);", "6:28", "axis must be the constant 0, 1 or 2"),
        ("    __shared__ bool t[4];", "6:16", "a shared array's element type must be int32_t, uint32_t, float"),
        ("    __shared__ float t[n];", "6:24", "a shared array's size must be a constant positive integer"),
    ],
)
def test_refusals_speak_cpp(body: str, where: str, message: str) -> None:
    text = _error(body)
    first = text.splitlines()[0]
    assert first.startswith(f"k.cpp:{where}: error: "), text
    assert message in first, text


# ---- differential: C++'s rounding and bit-count spellings against NumPy on any values -----------
ROUNDING = (
    HEAD
    + """
[[wave::kernel]] void rounding(const float* x, const uint32_t* u, float* f, int32_t* b) {
    uint32_t i = wave::thread_id(0);
    f[i * 3 + 0] = roundf(x[i]);
    f[i * 3 + 1] = std::rint(x[i]);
    f[i * 3 + 2] = std::trunc(x[i]);
    b[i * 3 + 0] = std::popcount(u[i]);
    b[i * 3 + 1] = std::countl_zero(u[i]);
    b[i * 3 + 2] = __builtin_ctz(u[i]);
}
"""
)


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.floats(width=32, allow_nan=True, allow_infinity=True), min_size=32, max_size=32),
    st.lists(st.integers(0, 2**32 - 1), min_size=32, max_size=32),
)
def test_rounding_and_bit_counts_match_numpy(engine: str, xs: list[float], us: list[int]) -> None:
    x = np.array(xs, np.float32)
    u = np.array(us, np.uint32)
    f = np.zeros(96, np.float32)
    b = np.zeros(96, np.int32)
    _KERNELS.setdefault("k", load_kernels(ROUNDING, lang="cpp")["rounding"])
    _KERNELS["k"](x, u, f, b, grid=(1,), workgroup=(32,), engine=engine)
    f, b = f.reshape(32, 3), b.reshape(32, 3)
    with np.errstate(invalid="ignore"):
        away = np.where(np.abs(x) < 2**23, np.copysign(np.floor(np.abs(x.astype(np.float64)) + 0.5), x), x)
    np.testing.assert_array_equal(f[:, 0], away.astype(np.float32))
    np.testing.assert_array_equal(f[:, 1], np.rint(x))
    np.testing.assert_array_equal(f[:, 2], np.trunc(x))
    pop, clz, ctz = _bits32(u)
    np.testing.assert_array_equal(b[:, 0], pop)
    np.testing.assert_array_equal(b[:, 1], clz)
    np.testing.assert_array_equal(b[:, 2], ctz)


_KERNELS: dict[str, object] = {}
