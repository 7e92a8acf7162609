"""Constants beyond their type's range and expressions nested beyond what the compiler processes
(issue 28): the same answer, or the same refusal with its place, in all four languages."""

from __future__ import annotations

import shutil
import subprocess
import warnings
from pathlib import Path

import numpy as np
import pytest

import wavegpu as wg
from cli_helpers import run_wave
from wavegpu.compiler import hir
from wavegpu.compiler.frontends import FRONTENDS
from wavegpu.runtime.kernel import run_kernel

INF, NINF = 0x7F800000, 0xFF800000

# out[0] = a constant beyond FLT_MAX, out[1] = a folded product beyond it, out[2] = its negation,
# out[3] = a constant below the smallest subnormal: inf, inf, -inf, 0 in every language
BEYOND_F32 = {
    "python": """import wavegpu as wg

@wg.kernel
def k(out: wg.f32[:]):
    out[0] = 1.0e39
    out[1] = 3.0e38 * 2.0
    out[2] = -1.0e39
    out[3] = 1.0e-50
""",
    "cpp": """#include "wave.hpp"

[[wave::kernel]] void k(float* out) {
    out[0] = 3.4e38f * 10.0f;
    out[1] = 3.0e38f * 2.0f;
    out[2] = -(3.4e38f * 10.0f);
    out[3] = 1.0e-30f * 1.0e-30f;
}
""",
    # rustc refuses an f32 literal beyond the range (overflowing_literals) and g++ -Werror one in C++
    # (-Woverflow): folded products there instead
    "rust": """use wave::*;

#[wave::kernel]
pub fn k(out: &mut [f32]) {
    out[0] = f32::MAX * 2.0;
    out[1] = 3.0e38f32 * 2.0;
    out[2] = -f32::MAX * 2.0;
    out[3] = 1.0e-30f32 * 1.0e-30;
}
""",
    "typescript": """/** @kernel */
export function k(out: Float32Array): void {
  out[0] = 1.0e39;
  out[1] = Math.fround(3.0e38) * 2.0;
  out[2] = -1.0e39;
  out[3] = 1.0e-50;
}
""",
}


@pytest.mark.parametrize("opt", [0, 2])
@pytest.mark.parametrize("lang", sorted(BEYOND_F32))
def test_f32_constants_beyond_the_range_are_inf_in_every_language(lang: str, opt: int) -> None:
    """No OverflowError, no NumPy warning at compile time: inf, as IEEE rounding and C give."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        prog = wg.compile(BEYOND_F32[lang], lang=lang, opt=opt)
        out = np.full(4, 7.0, np.float32)
        run_kernel(prog.kernels[0], [out], grid=1, workgroup=1)
    assert out.view(np.uint32).tolist() == [INF, INF, NINF, 0]


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
def test_gxx_accepts_the_cpp_kernel_beyond_f32(tmp_path: Path) -> None:
    """The C++ form above is one g++ compiles with -Werror and wave.hpp."""
    from wavegpu.compiler.frontends.cpp import include_dir

    p = tmp_path / "k.cpp"
    p.write_text(BEYOND_F32["cpp"])
    flags = ["g++", "-std=c++20", "-fsyntax-only", "-Werror", "-Wno-attributes=wave::", f"-I{include_dir()}"]
    r = subprocess.run([*flags, str(p)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_python_f16_f64_and_power_constants_round_once_to_their_type() -> None:
    src = """import wavegpu as wg

@wg.kernel
def k(out: wg.f32[:], h: wg.f16[:], d: wg.f64[:]):
    out[0] = 10.0 ** 400
    out[1] = (-10.0) ** 401
    out[2] = wg.f32(3.0e38 * 2.0)
    h[0] = 70000.0
    h[1] = 65519
    h[2] = wg.f16(1.0e39)
    d[0] = 1e308 * 10
    d[1] = 3.0e38 * 2.0
"""
    (fn,) = FRONTENDS["python"].parse(src, "k.py")
    assert "out[0:i32] = inf:f32" in hir.dump(fn) and "h[0:i32] = inf:f16" in hir.dump(fn)
    for opt in (0, 2):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            prog = wg.compile(src, opt=opt)
            out, h, d = np.zeros(3, np.float32), np.zeros(3, np.float16), np.zeros(2)
            run_kernel(prog.kernels[0], [out, h, d], grid=1, workgroup=1)
        assert out.view(np.uint32).tolist() == [INF, NINF, INF]
        assert h.view(np.uint16).tolist() == [0x7C00, 0x7BFF, 0x7C00]  # 65519 rounds down to 65504
        assert d.tolist() == [np.inf, 6e38]


def test_an_integer_literal_beyond_the_double_range_in_a_float_is_inf() -> None:
    """`1` followed by 400 zeros stored into an f32 (or f64) is inf, as a float literal beyond the
    range is (it raised a bare OverflowError converting the int to a float)."""
    big = "1" + "0" * 400
    src = f"""import wavegpu as wg

@wg.kernel
def k(out: wg.f32[:], d: wg.f64[:]):
    out[0] = {big}
    out[1] = -{big}
    d[0] = {big}
"""
    out, d = np.zeros(2, np.float32), np.zeros(1)
    run_kernel(wg.compile(src).kernels[0], [out, d], grid=1, workgroup=1)
    assert out.view(np.uint32).tolist() == [INF, NINF] and d.tolist() == [np.inf]


@pytest.mark.parametrize(
    "stmt, message",
    [
        ("out[0] = 2147483647 + 1", "expected i32, got u32"),
        ("out[0] = 4294967296", "does not fit in 32 bits"),
        ("u[0] = 4294967295 + 1", "does not fit in 32 bits"),
        ("out[0] = -2147483648 - 1", "does not fit in 32 bits"),
        ("u[0] = 1 << 32", "does not fit in 32 bits"),
        ("out[0] = int(1e10)", "does not fit in 32 bits"),
        ("out[0] = ~0xFFFFFFFF", "does not fit in 32 bits"),
        ("out[0] = 3 * 1000000000", "expected i32, got u32"),
        ("out[0] = abs(-2147483648)", "expected i32, got u32"),
        ("u[0] = -1", "expected u32, got i32"),
    ],
)
def test_python_integer_constants_never_wrap(stmt: str, message: str) -> None:
    """An integer constant out of its type's range is refused where it stands (an explicit cast,
    i32(x) or u32(x), keeps the 32 bits instead)."""
    src = f"import wavegpu as wg\n@wg.kernel\ndef k(out: wg.i32[:], u: wg.u32[:]):\n    {stmt}\n"
    with pytest.raises(wg.CompileError) as ei:
        FRONTENDS["python"].parse(src, "k.py")
    d = ei.value.diagnostics[0]
    assert message in d.message and d.span is not None and d.span.line == 4


def test_int_of_a_non_finite_constant_is_the_saturating_cast() -> None:
    """int(inf) and int(nan) are i32(inf) and i32(nan): the cast's rule (saturate; NaN gives 0)."""
    src = """import wavegpu as wg

@wg.kernel
def k(out: wg.i32[:]):
    out[0] = int(wg.inf)
    out[1] = int(-wg.inf)
    out[2] = int(wg.nan)
    out[3] = wg.i32(wg.inf)
"""
    for opt in (0, 2):
        out = np.zeros(4, np.int32)
        run_kernel(wg.compile(src, opt=opt).kernels[0], [out], grid=1, workgroup=1)
        assert out.tolist() == [2**31 - 1, -(2**31), 0, 2**31 - 1]


def test_wave_compile_of_a_constant_beyond_f32_shows_no_traceback(tmp_path: Path) -> None:
    path = tmp_path / "big.py"
    path.write_text(BEYOND_F32["python"])
    r = run_wave("compile", str(path), "-o", str(tmp_path / "big.wbin"))
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr


# -- expressions nested beyond what the compiler processes (issue 28.2, bullet 4)
TERMS = 20_000


def deep_sum(lang: str, terms: int = TERMS) -> str:
    """A kernel storing the sum of `terms` array elements, in `lang`."""
    s = " + ".join(f"a[{k % 7}]" for k in range(terms))
    return {
        "python": f"import wavegpu as wg\n\n@wg.kernel\ndef k(a: wg.f32[:], out: wg.f32[:]):\n    out[0] = {s}\n",
        "cpp": f'#include "wave.hpp"\n\n[[wave::kernel]] void k(const float* a, float* out) {{\n    out[0] = {s};\n}}\n',
        "rust": f"use wave::*;\n\n#[wave::kernel]\npub fn k(a: &[f32], out: &mut [f32]) {{\n    out[0] = {s};\n}}\n",
        "typescript": f"/** @kernel */\nexport function k(a: Float32Array, out: Float32Array): void {{\n  out[0] = {s};\n}}\n",
    }[lang]


DEEP = "this nests more than 150 levels deep"
SUFFIXES = {"python": ".py", "cpp": ".cpp", "rust": ".rs", "typescript": ".ts"}


@pytest.mark.parametrize("lang", sorted(SUFFIXES))
def test_a_20000_term_sum_is_refused_with_its_place_in_every_language(lang: str, tmp_path: Path) -> None:
    """The same WaveError with the place in all four languages, through wg.compile of a path and
    `wave compile` (Python gave a bare RecursionError)."""
    path = tmp_path / f"deep{SUFFIXES[lang]}"
    text = deep_sum(lang)
    path.write_text(text)
    line = next(n for n, x in enumerate(text.splitlines(), 1) if "out[0] =" in x)
    with pytest.raises(wg.CompileError) as ei:
        wg.compile(str(path))
    (d,) = ei.value.diagnostics
    assert DEEP in d.message and d.span is not None and d.span.line == line and d.span.file == str(path)
    r = run_wave("compile", str(path), "-o", str(tmp_path / "deep.wbin"))
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert f"{path}:{line}:" in r.stderr and DEEP in r.stderr


def test_python_expressions_just_within_the_limit_compile() -> None:
    """A 140-term sum, a 140-argument min and a 140-operand chained comparison compile at -O3
    and compute their values (the limit leaves the later stages room on the stack)."""
    src = deep_sum("python", 140).replace("out[0] = ", "out[0] = wg.f32(0.0) + ")
    src += (
        "\n@wg.kernel\ndef m(a: wg.f32[:], out: wg.f32[:]):\n    out[0] = min("
        + ", ".join(f"a[{k % 7}]" for k in range(140))
        + ")\n"
    )
    src += (
        "\n@wg.kernel\ndef c(a: wg.f32[:], out: wg.i32[:]):\n    out[0] = wg.i32("
        + " <= ".join("a[0]" for _ in range(140))
        + ")\n"
    )
    prog = wg.compile(src, opt=3)
    a = np.arange(1, 8, dtype=np.float32)
    out = np.zeros(1, np.float32)
    run_kernel(prog.kernels[0], [a, out], grid=1, workgroup=1)
    assert out[0] == np.float32(sum(float(a[k % 7]) for k in range(140)))
    run_kernel(prog.kernels[1], [a, out], grid=1, workgroup=1)
    assert out[0] == 1.0
    iout = np.zeros(1, np.int32)
    run_kernel(prog.kernels[2], [a, iout], grid=1, workgroup=1)
    assert iout[0] == 1


@pytest.mark.parametrize(
    "expr",
    [
        "min(" + ", ".join(f"a[{k % 7}]" for k in range(TERMS)) + ")",
        "wg.f32(" + " and ".join(f"a[{k % 7}] > 0.0" for k in range(300)) + ")",
        "wg.f32(" + " < ".join(f"a[{k % 7}]" for k in range(300)) + ")",
    ],
    ids=["min", "and", "chained-compare"],
)
def test_flat_python_forms_that_nest_in_hir_are_refused_with_their_place(expr: str) -> None:
    """min(a, b, ...), `and` chains and chained comparisons are flat in Python's ast but nest in
    HIR: the compiler checks HIR's depth before any stage recurses over it (also for the other
    frontends), and names the kernel and the place."""
    src = f"import wavegpu as wg\n\n@wg.kernel\ndef k(a: wg.f32[:], out: wg.f32[:]):\n    out[0] = {expr}\n"
    with pytest.raises(wg.CompileError) as ei:
        wg.compile(src, opt=3)
    (d,) = ei.value.diagnostics
    assert DEEP in d.message and "kernel 'k'" in d.message and d.span is not None and d.span.line == 5


def test_python_nesting_that_cpython_cannot_parse_is_refused_too() -> None:
    """300 unary minus signs overflow CPython's own parser: the same message, no traceback."""
    src = "import wavegpu as wg\n\n@wg.kernel\ndef k(a: wg.i32[:]):\n    a[0] = " + "-" * 300 + "a[1]\n"
    with pytest.raises(wg.CompileError, match=DEEP):
        wg.compile(src)
