"""Fix-its never suggest a change of meaning (issue 22.8): for an accumulator that starts as an
integer and adds floats, each frontend suggests the float start, and applying the suggestion
compiles to the sum the language means; where only a change of value would compile (an f64
argument of an f32-only function), the message says so instead of offering it as the fix."""

from __future__ import annotations

import re

import numpy as np
import pytest

import wavegpu as wg

X = np.array([0.5, 1.25, 2.75, 3.125, 1e-3, 7.5, 0.1, 0.2], np.float32)

# (Python types `s = 0` then `s += x[j]` by flow: tests/compiler/frontends/test_python_idioms.py)
ACCUMULATORS = {
    "typescript": (
        "export function k(x: Float32Array, out: Float32Array) {\n"
        "  let s = 0;\n  for (let j = 0; j < 8; j++) { s += x[j]; }\n  out[0] = s;\n}\n",
        "`let s: number = 0`",
        ("let s = 0;", "let s: number = 0;"),
    ),
    "rust": (
        "use wave::*;\n\n#[wave::kernel]\npub fn k(x: &[f32], out: &mut [f32]) {\n    let mut s = 0;\n    for j in 0..8 {\n"
        "        s += x[j];\n    }\n    out[0] = s;\n}\n",
        "`let mut s = 0.0;`",
        ("let mut s = 0;", "let mut s = 0.0;"),
    ),
}
TRUNCATIONS = ("| 0", "i32(", "as i32", "int(")


def _sum(lang: str) -> float:
    """The language's own meaning: JavaScript adds in f64 (a number), Python and Rust in f32."""
    if lang == "typescript":
        return float(np.float32(sum(float(v) for v in X)))
    s = np.float32(0)
    for v in X:
        s = np.float32(s + v)
    return float(s)


@pytest.mark.parametrize("lang", sorted(ACCUMULATORS))
def test_an_integer_accumulator_of_floats_is_told_to_start_as_a_float(lang: str) -> None:
    src, fix, (old, new) = ACCUMULATORS[lang]
    if lang == "typescript":  # typed by its uses: `s` is a number (f64), as JavaScript has it
        out = np.zeros(1, np.float32)
        wg.load_kernels(src, lang=lang).k(X, out, grid=1)
        assert out[0] == np.float32(_sum(lang)), (out[0], _sum(lang))
        return
    with pytest.raises(wg.CompileError) as e:
        wg.compile(src, lang=lang)
    msg = e.value.diagnostics[0].message
    assert fix in msg, msg
    assert not any(t in msg for t in TRUNCATIONS), msg  # never a truncation of every partial sum
    fixed = src.replace(old, new)
    assert fixed != src
    k = wg.load_kernels(fixed, lang=lang).k
    out = np.zeros(1, np.float32)
    k(X, out, grid=1)
    assert out[0] == np.float32(_sum(lang)), (out[0], _sum(lang))


def test_typescript_math_of_an_f64_argument_names_the_argument() -> None:
    src = "export function k(x: Float32Array, out: Float32Array) {\n  const v = x[0];\n"
    src += "  out[0] = Math.exp(v * 0.1);\n}\n"
    with pytest.raises(wg.CompileError) as e:
        wg.compile(src, lang="typescript")
    msg = e.value.diagnostics[0].message
    assert "`v * 0.1` is an f64" in msg and "Math.exp(Math.fround(v * 0.1))" in msg, msg
    assert "if that is what you mean" in msg and "Math.fround(Math.exp(x))" not in msg, msg
    fixed = src.replace("Math.exp(v * 0.1)", "Math.exp(Math.fround(v * 0.1))")
    out = np.zeros(1, np.float32)
    wg.load_kernels(fixed, lang="typescript").k(np.array([2.0], np.float32), out, grid=1)
    assert abs(out[0] - np.exp(np.float32(np.float32(2.0) * np.float32(0.1)))) <= 2e-7


def test_typescript_math_of_an_f32_argument_used_unrounded_names_the_users_argument() -> None:
    src = "export function k(x: Float32Array, out: Float32Array) {\n  const y = Math.exp(x[0]);\n  out[0] = y;\n}\n"
    with pytest.raises(wg.CompileError, match=re.escape("Math.fround(Math.exp(x[0]))")):
        wg.compile(src, lang="typescript")


def test_typescript_negative_zero_is_not_narrowed_away() -> None:
    src = "export function k(b: Float32Array, n: i32) {\n  let q = -n;\n  b[0] = q;\n}\n"
    with pytest.raises(wg.CompileError) as e:
        wg.compile(src, lang="typescript")
    msg = e.value.diagnostics[0].message
    assert "may be -0" in msg and "q: number" in msg and "| 0" not in msg, msg


@pytest.mark.parametrize(
    ("lang", "src", "shown"),
    [
        (
            "python",
            "import wavegpu as wg\n@wg.kernel\ndef k(d: wg.f64[:], o: wg.f32[:]):\n    o[0] = wg.sin(d[0])\n",
            "wg.sin(wg.f32(d[0]))",
        ),
        (
            "rust",
            "use wave::*;\n\n#[wave::kernel]\npub fn k(d: &[f64], o: &mut [f32]) {\n    o[0] = d[0].sin() as f32;\n}\n",
            "(x as f32).sin()",
        ),
        (
            "cpp",
            '#include <cmath>\n#include "wave.hpp"\n\n'
            "[[wave::kernel]] void k(const double* d, float* o) { o[0] = (float)std::sin(d[0]); }\n",
            "sinf(static_cast<float>(x))",
        ),
    ],
)
def test_f64_math_the_device_lacks_says_the_f32_form_changes_the_value(lang: str, src: str, shown: str) -> None:
    with pytest.raises(wg.CompileError) as e:
        wg.compile(src, lang=lang)
    msg = e.value.diagnostics[0].message
    assert shown in msg and "if that is what you mean" in msg and "convert it" not in msg, msg


def test_python_int_to_int_type_change_offers_the_constant_start_only_where_it_fits() -> None:
    head = "import wavegpu as wg\n@wg.kernel\ndef k(u: wg.u32[:]):\n"
    with pytest.raises(wg.CompileError, match=re.escape("`s = wg.u32(0)`")):
        wg.compile(head + "    s = 0\n    s = u[0]\n    u[1] = s\n")
    with pytest.raises(wg.CompileError) as e:  # -1 is no u32: no fix-it that would change it
        wg.compile(head + "    s = -1\n    s = u[0]\n    u[1] = wg.u32(s)\n")
    msg = e.value.diagnostics[0].message
    assert "wg.u32(-1)" not in msg and "use another name" in msg, msg


@pytest.mark.parametrize(
    ("body", "params", "condition"),
    [
        (
            "  o[0] = a[0] % (u[0] + 1);\n",
            "a: Int32Array, u: Uint32Array, o: Int32Array",
            "if it always fits one",
        ),
        ("  o[0] = o[f[0]];\n", "f: Float32Array, o: Int32Array", "if it always holds one"),
        ("  o[0] = f[0] % f[1];\n", "f: Float32Array, o: Float32Array", "if the operands always hold integers"),
        (
            "  o[0] = wave.wave_reduce_add(f[0] * 0.5);\n",
            "f: Float32Array, o: Float32Array",
            "narrow it if that is what you mean",
        ),
    ],
)
def test_typescript_narrowing_is_offered_only_under_its_condition(body: str, params: str, condition: str) -> None:
    """`| 0` and `>>> 0` wrap a value that is not one of their type: the message offers them only
    for values that always are, and says so."""
    src = f"/** @kernel */\nexport function k({params}) {{\n{body}}}\n"
    with pytest.raises(wg.CompileError) as e:
        wg.compile(src, lang="typescript")
    msg = e.value.diagnostics[0].message
    assert condition in msg, msg
