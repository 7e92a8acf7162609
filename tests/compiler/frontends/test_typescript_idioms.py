"""TypeScript kernels as their users write them (issue 24): untyped accumulators and counters,
`%` on ids and counters, Math.exp of a scaled f32, `??`, `var`, `n: number` parameters, per-thread
typed arrays with the unroll rule, and the builtins spelled JavaScript's way (Math.round, trunc,
sign, clz32, pow, hypot, min/max, isNaN, `**`). Each kernel runs on the emulator against NumPy,
and tsc accepts every one with wave.d.ts (docs/compiler.md, "The kernel language in TypeScript")."""

from __future__ import annotations

import math
import os
import subprocess
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import wavegpu as wg
from frontends.test_typescript_tsc import DTS, _tsc
from wavegpu.errors import CompileError
from wavegpu.isa.vocabulary import Op
from wavegpu.runtime.sources import load_kernels

K: dict[str, str] = {}  # file name -> kernel source (tsc checks them all)


def _kernel(name: str, params: str, body: str) -> str:
    src = f"/** @kernel */\nexport function {name}({params}): void {{\n{body}}}\n"
    K[name + ".ts"] = src
    return src


def _run(src: str, *args: object, n: int = 32, opt: int = 2) -> None:
    (kernel,) = load_kernels(src, lang="typescript", opt=opt).values()
    kernel(*args, grid=1, workgroup=n)


RNG = np.random.default_rng(24)
X = RNG.uniform(-4, 4, 64).astype(np.float32)

ACCUMULATE = _kernel(
    "accumulate",
    "x: Float32Array, out: Float32Array, cnt: Int32Array, m: i32",
    "  const i = wave.global_id(0);\n  let s = 0;\n  let c = 0;\n"
    "  for (let j = 0; j < m; j++) {\n    s += x[j] * (i + 1);\n    if (x[j] > 0) c++;\n  }\n"
    "  out[i] = s;\n  cnt[i] = c;\n",
)


@pytest.mark.parametrize("opt", [0, 2])
def test_an_untyped_accumulator_and_counter_are_typed_by_their_uses(opt: int) -> None:
    """`let s = 0; s += x[j]` adds in f64 (a number, as JavaScript does), `c++` counts exactly."""
    out, cnt = np.zeros(32, np.float32), np.zeros(32, np.int32)
    _run(ACCUMULATE, X, out, cnt, 64, opt=opt)
    for i in range(32):
        s = 0.0
        for v in X.astype(np.float64):
            s += v * (i + 1)
        assert out[i] == np.float32(s), i
    assert (cnt == np.count_nonzero(X > 0)).all()


def test_a_counter_given_a_fraction_becomes_a_number() -> None:
    src = _kernel(
        "halves",
        "out: Float64Array",
        "  let c = 0;\n  for (let j = 0; j < 5; j++) {\n    c++;\n  }\n  c /= 2;\n  out[0] = c;\n",
    )
    out = np.zeros(1, np.float64)
    _run(src, out, n=1)
    assert out[0] == 2.5


MODULO = _kernel(
    "modulo",
    "out: Int32Array, n: i32",
    "  const i = wave.global_id(0);\n  for (let j = 0; j < 4; j++) {\n    out[i * 4 + j] = (i * 7 + j * 3) % n;\n  }\n",
)


def test_remainder_of_ids_times_constants() -> None:
    """`(i * 7 + j * 3) % n` on an i32 id may exceed 32 bits: computed exactly (in f64)."""
    out = np.zeros(128, np.int32)
    _run(MODULO, out, 5)
    i, j = np.divmod(np.arange(128), 4)
    assert (out == (i * 7 + j * 3) % 5).all()


def test_wide_remainder_is_exact_beyond_32_bits() -> None:
    """Dividends near 2**53 and divisors of both signs: JavaScript's % (the dividend's sign)."""
    src = _kernel(
        "wide_rem",
        "a: Int32Array, b: Int32Array, out: Float64Array",
        "  const i = wave.global_id(0);\n  out[i] = (a[i] * 2097152 + a[i]) % b[i];\n",
    )
    a = RNG.integers(-(2**31), 2**31, 32).astype(np.int32)
    b = RNG.integers(-(2**31), 2**31, 32).astype(np.int32)
    a[:4], b[:4] = [-(2**31), 2**31 - 1, -7, 0], [3, -(2**31), 7, 5]
    b[b == 0] = 1
    b[4] = 0
    out = np.zeros(32, np.float64)
    _run(src, a, b, out)
    for k in range(32):
        x = int(a[k]) * 2097153  # exact: below 2**53
        if b[k] == 0:
            assert math.isnan(out[k])
            continue
        r = math.fmod(x, int(b[k])) if abs(x) < 2**53 else None
        want = abs(x) % abs(int(b[k])) * (1 if x >= 0 else -1)
        assert r is None or r == want
        assert out[k] == want and (want != 0 or math.copysign(1, out[k]) == (1 if x >= 0 else -1)), k


SOFTMAX = _kernel(
    "scaled_exp",
    "x: Float32Array, out: Float32Array",
    "  const i = wave.global_id(0);\n  const v = x[i];\n  out[i] = Math.fround(Math.exp(v * 0.125));\n",
)


def test_exp_of_an_f32_times_a_power_of_two() -> None:
    out = np.zeros(32, np.float32)
    _run(SOFTMAX, X[:32], out)
    want = np.exp(X[:32].astype(np.float64) * 0.125)
    ulp = np.spacing(want.astype(np.float32)).astype(np.float64)
    assert (np.abs(out - want) <= 3 * ulp).all()  # exp's bound (docs/compiler.md)


def test_exp_of_an_f32_times_another_constant_stays_refused() -> None:
    src = "export function k(x: Float32Array, out: Float32Array) {\n  out[0] = Math.exp(x[0] * 0.1);\n}\n"
    with pytest.raises(CompileError, match=r"`x\[0\] \* 0\.1` is an f64"):
        wg.compile(src, lang="typescript")


NULLISH = _kernel(
    "nullish",
    "x: Float32Array, out: Float32Array",
    "  const i = wave.global_id(0);\n  out[i] = (x[i + 1] ?? 0) + (x[i - 1] ?? -1);\n",
)


def test_nullish_reads_past_the_end_as_undefined() -> None:
    """`x[i + 1] ?? 0`: JavaScript's undefined past the end (no access, no trap)."""
    x = X[:32].copy()
    out = np.zeros(32, np.float32)
    _run(NULLISH, x, out)
    nxt = np.append(x[1:], np.float32(0))
    prv = np.insert(x[:-1], 0, np.float32(-1))
    assert (out == (nxt.astype(np.float64) + prv).astype(np.float32)).all()


VAR = _kernel(
    "with_var",
    "x: Float32Array, out: Float32Array, n: number",
    "  var i = wave.global_id(0);\n  var s = 0;\n  for (var j = 0; j < n; j++) {\n    s += x[j];\n  }\n"
    "  out[i] = s + n / 2;\n",
)


def test_var_and_a_number_parameter() -> None:
    """`var` where it means what let means; `n: number` holds the integers of i32 exactly (`n / 2`
    is JavaScript's division), and a fraction is refused at the call, never rounded."""
    out = np.zeros(32, np.float32)
    _run(VAR, X, out, 7)
    assert (out == np.float32(float(np.sum(X[:7].astype(np.float64))) + 3.5)).all()
    with pytest.raises(wg.WaveError, match="needs an integer"):
        _run(VAR, X, out, 7.5)


def test_var_that_would_assign_an_outer_name_is_refused_once() -> None:
    src = "/** @kernel */\nexport function k(out: Float32Array, n: i32) {\n  { var n = 2; }\n  out[0] = n;\n}\n"
    with pytest.raises(CompileError) as e:
        wg.compile(src, lang="typescript")
    assert len(e.value.diagnostics) == 1 and "redeclares" in e.value.diagnostics[0].message


def test_a_refused_declaration_is_reported_once() -> None:
    src = "/** @kernel */\nexport function k(out: Float32Array, n: f64) {\n  const t = new Float32Array(n);\n"
    src += "  t[0] = n;\n  out[0] = t[0] + n;\n}\n"
    with pytest.raises(CompileError) as e:
        wg.compile(src, lang="typescript")
    msgs = [d.message for d in e.value.diagnostics]
    assert len(msgs) == 2 and not any("not declared" in m for m in msgs), msgs


PRIVATE = _kernel(
    "private_tile",
    "x: Float32Array, out: Float32Array, idx: Int32Array",
    "  const i = wave.global_id(0);\n  const t = new Float32Array(4);\n  const c = new Int32Array(4);\n"
    "  for (let j = 0; j < 4; j++) {\n    t[j] = x[i] * (j + 1);\n    c[j] = i + j;\n  }\n"
    "  let s = 0;\n  for (let j = 0; j < 4; j++) {\n    s += t[j] * c[j];\n  }\n"
    "  out[i] = s + t.length;\n  idx[i] = c[3];\n",
)
DYNAMIC = _kernel(
    "private_dynamic",
    "x: Float32Array, out: Float32Array",
    "  const i = wave.global_id(0);\n  const t = new Float32Array(8);\n"
    "  for (let j = 0; j < 8; j++) {\n    t[j] = x[j];\n  }\n  out[i] = t[i % 8];\n",
)


def _local_rows(prog: wg.Program) -> int:
    return sum(1 for i in prog.kernels[0].instructions if i.spec.space == "local" and i.spec.op in (Op.LD, Op.ST))


def test_per_thread_arrays_in_registers_with_the_unroll_rule() -> None:
    prog = wg.compile(PRIVATE, lang="typescript")
    assert _local_rows(prog) == 0 and prog.kernels[0].local_memory == 0
    out, idx = np.zeros(32, np.float32), np.zeros(32, np.int32)
    _run(PRIVATE, X[:32], out, idx)
    i = np.arange(32)
    want = sum(
        (X[:32].astype(np.float64) * np.float32(j + 1)).astype(np.float32).astype(np.float64) * (i + j)
        for j in range(4)
    )
    assert (out == (want + 4).astype(np.float32)).all()
    assert (idx == i + 3).all()


def test_a_run_time_index_puts_the_array_in_local_memory() -> None:
    prog = wg.compile(DYNAMIC, lang="typescript")
    assert prog.kernels[0].local_memory > 0
    out = np.zeros(32, np.float32)
    _run(DYNAMIC, X[:8], out)
    assert (out == X[np.arange(32) % 8]).all()


MATH = _kernel(
    "js_math",
    "d: Float64Array, f: Float32Array, k: Int32Array, out: Float64Array, o32: Float32Array, oi: Int32Array",
    "  const i = wave.global_id(0);\n  const z = d[i];\n  const x = f[i];\n"
    "  out[i * 8] = Math.round(z);\n  out[i * 8 + 1] = Math.trunc(z);\n  out[i * 8 + 2] = Math.sign(z);\n"
    "  out[i * 8 + 3] = Number.isNaN(z) ? 1 : isNaN(x) ? 2 : 0;\n  out[i * 8 + 4] = Math.hypot(z, x);\n"
    "  out[i * 8 + 5] = Math.min(z, x);\n  out[i * 8 + 6] = Math.max(z, x, 0);\n  out[i * 8 + 7] = z ** 2;\n"
    "  o32[i * 2] = Math.fround(Math.pow(x, 2.5));\n  o32[i * 2 + 1] = x ** 3;\n"
    "  oi[i * 2] = Math.clz32(k[i]);\n  oi[i * 2 + 1] = Math.sign(k[i]) + Math.round(k[i]) + k[i] ** 2;\n",
)


def js_round(v: float) -> float:
    """JavaScript's Math.round, exactly: the integer nearest, ties toward +Infinity; -0 for
    -0.5 <= v < 0 (and -0)."""
    if math.isnan(v) or math.isinf(v):
        return v
    r = float(math.floor(Fraction(v) + Fraction(1, 2)))
    return math.copysign(0.0, v) if r == 0 else r


def test_javascript_math_against_numpy() -> None:
    d = np.array(
        [
            2.5,
            -2.5,
            -0.5,
            0.49999999999999994,
            -0.0,
            1e300,
            np.nan,
            np.inf,
            -np.inf,
            3.7,
            -3.7,
            0.5,
            4503599627370497.0,
            *RNG.uniform(-1e3, 1e3, 19),
        ],
        np.float64,
    )
    f = np.array([1.5, np.nan, 0.0, -0.0, 3e38, 2.0, -1.0, *RNG.uniform(0, 8, 25)], np.float32)
    k = np.array([0, 1, -1, 2**31 - 1, -(2**31), 7, 46340, *RNG.integers(-1000, 1000, 25)], np.int32)
    out, o32, oi = np.zeros(256), np.zeros(64, np.float32), np.zeros(64, np.int32)
    _run(MATH, d, f, k, out, o32, oi)
    out, o32, oi = out.reshape(32, 8), o32.reshape(32, 2), oi.reshape(32, 2)
    fd = f.astype(np.float64)
    with np.errstate(all="ignore"):
        for i in range(32):
            z, x = float(d[i]), float(fd[i])
            got = out[i]
            assert np.array_equal([got[0]], [js_round(z)], equal_nan=True), (z, got[0])
            assert math.copysign(1, got[0]) == math.copysign(1, js_round(z)) or math.isnan(z)
            assert np.array_equal([got[1]], [np.trunc(z)], equal_nan=True)
            assert np.array_equal([got[2]], [np.sign(z) if z != 0 else z], equal_nan=True)
            assert got[3] == (1 if math.isnan(z) else 2 if math.isnan(x) else 0)
            h = math.hypot(z, x)
            assert (math.isnan(h) and math.isnan(got[4])) or got[4] == h or abs(got[4] - h) <= 2 * math.ulp(h), (z, x)
            nan = math.isnan(z) or math.isnan(x)
            assert (nan and math.isnan(got[5])) or got[5] == min(z, x)
            assert (nan and math.isnan(got[6])) or got[6] == max(z, x, 0)
            assert np.array_equal([got[7]], [z * z], equal_nan=True)
            p = np.float32(np.power(fd[i], 2.5))
            assert (
                (np.isnan(p) and np.isnan(o32[i, 0]))
                or o32[i, 0] == p
                or abs(o32[i, 0] - p) <= 4 * np.spacing(np.abs(p))
            ), (x, p)
            assert np.array_equal([o32[i, 1]], [np.float32(x * x * x)], equal_nan=True)
            v = int(k[i])
            assert oi[i, 0] == 32 - (v & 0xFFFFFFFF).bit_length()
            want = float((v > 0) - (v < 0) + v) + float(v) * float(v)  # f64, as JavaScript adds them
            assert oi[i, 1] == np.int64(int(want) % 2**32).astype(np.uint32).view(np.int32), v  # ToInt32


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), min_size=32, max_size=32))
def test_math_round_is_javascripts_for_any_number(values: list[float]) -> None:
    """Math.round on the emulator = the exact reference = wg.round_half_up (runtime/pyexec.py)."""
    src = K.get("round_any.ts") or _kernel(
        "round_any",
        "d: Float64Array, out: Float64Array",
        "  const i = wave.global_id(0);\n  out[i] = Math.round(d[i]);\n",
    )
    d = np.array(values, np.float64)
    out = np.zeros(32)
    _run(src, d, out)
    for v, r in zip(d, out):
        want = js_round(float(v))
        py = float(wg.round_half_up(np.float64(v)))
        assert np.array_equal([r, py], [want, want], equal_nan=True), (v, r, py, want)
        assert math.isnan(want) or math.copysign(1, r) == math.copysign(1, want) == math.copysign(1, py)


def test_tsc_accepts_every_idiom_kernel(tmp_path: Path) -> None:
    tsc = _tsc()
    if tsc is None:
        pytest.skip("tsc is not installed (tools/node-tools.sh installs npm's typescript into .tools/node)")
    K.setdefault(
        "round_any.ts",
        "/** @kernel */\nexport function round_any(d: Float64Array, out: Float64Array): void {\n"
        "  const i = wave.global_id(0);\n  out[i] = Math.round(d[i]);\n}\n",
    )
    files = [str(DTS)]
    for name, text in K.items():
        (tmp_path / name).write_text(text)
        files.append(str(tmp_path / name))
    assert len(files) >= 12
    args = [tsc, "--noEmit", "--strict", "--target", "es2022", "--lib", "esnext", "--pretty", "false", *files]
    r = subprocess.run(args, capture_output=True, text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"})
    assert r.returncode == 0, r.stdout + r.stderr


CAPTURE = _kernel(
    "private_capture",
    "x: Float32Array, out: Float32Array",
    "  const i = wave.global_id(0);\n  const t = new Float32Array(2);\n  t[0] = x[i];\n  t[1] = 2;\n"
    "  const g = (j: i32) => t[j] * 3;\n  const put = (j: i32, v: f32) => {\n    t[j] = v;\n  };\n"
    "  put(1, t[1] + 1);\n  out[i] = g(0) + g(1);\n",
)


def test_an_arrow_function_reads_and_writes_a_captured_per_thread_array() -> None:
    """compiler/inline.py renames inside per-thread accesses (the index `j` is the helper's)."""
    out = np.zeros(32, np.float32)
    _run(CAPTURE, X[:32], out)
    assert (out == (X[:32].astype(np.float64) * 3 + 9).astype(np.float32)).all()


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), min_size=32, max_size=32),
    st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64), min_size=32, max_size=32),
)
def test_math_hypot_neither_overflows_nor_underflows(a: list[float], b: list[float]) -> None:
    """Math.hypot(a, b, c) in f64 within 2 ulp of the exact value (math.hypot), for every
    magnitude (1e300, 1e-300); Infinity if any argument is infinite, else NaN if any is NaN."""
    src = K.get("hypot_any.ts") or _kernel(
        "hypot_any",
        "a: Float64Array, b: Float64Array, out: Float64Array",
        "  const i = wave.global_id(0);\n  out[i] = Math.hypot(a[i], b[i], b[i] * 0.5);\n",
    )
    x, y = np.array(a), np.array(b)
    out = np.zeros(32)
    _run(src, x, y, out)
    for u, v, r in zip(x, y, out):
        want = math.hypot(float(u), float(v), float(v) * 0.5)
        if math.isinf(want) or math.isnan(want):
            assert np.array_equal([r], [want], equal_nan=True), (u, v, r)
        else:
            assert abs(r - want) <= 2 * math.ulp(want), (u, v, r, want)


def test_the_compiled_engine_gives_the_same_bits() -> None:
    """Every idiom kernel above on the emulator's compiled engine: the NumPy engine's bits."""
    math_args = (
        np.array([2.5, -2.5, -0.5, np.nan, np.inf, -0.0, *RNG.uniform(-1e3, 1e3, 26)]),
        np.array([1.5, np.nan, 0.0, -0.0, 3e38, *RNG.uniform(0, 8, 27)], np.float32),
        np.array([0, 1, -1, 2**31 - 1, -(2**31), *RNG.integers(-1000, 1000, 27)], np.int32),
        np.zeros(256),
        np.zeros(64, np.float32),
        np.zeros(64, np.int32),
    )
    cases = [
        (ACCUMULATE, lambda: (X, np.zeros(32, np.float32), np.zeros(32, np.int32), 64)),
        (MODULO, lambda: (np.zeros(128, np.int32), 5)),
        (NULLISH, lambda: (X[:32].copy(), np.zeros(32, np.float32))),
        (PRIVATE, lambda: (X[:32], np.zeros(32, np.float32), np.zeros(32, np.int32))),
        (DYNAMIC, lambda: (X[:8], np.zeros(32, np.float32))),
        (CAPTURE, lambda: (X[:32], np.zeros(32, np.float32))),
        (SOFTMAX, lambda: (X[:32], np.zeros(32, np.float32))),
        (VAR, lambda: (X, np.zeros(32, np.float32), 7)),
        (MATH, lambda: tuple(a.copy() for a in math_args)),
    ]
    for src, make in cases:
        (kernel,) = load_kernels(src, lang="typescript").values()
        results = []
        for engine in ("numpy", "compiled"):
            args = make()
            kernel(*args, grid=1, workgroup=32, engine=engine)
            results.append([a.view(np.uint8) for a in args if isinstance(a, np.ndarray)])
        assert all(np.array_equal(p, q) for p, q in zip(*results)), src.splitlines()[1]


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ("  Atomics.add(x, 0, 1);\n", "Atomics.add works on integer arrays, not f32: call wave.atomic_add"),
        ("  const y = x[0] ** x[1];\n  x[2] = y;\n", "Math.fround(x[0] ** x[1]), or call wave.pow(x[0], x[1])"),
        ("  x[0] = Math.tan(x[1]);\n", "Math.tan is not supported in kernels (Math: abs ceil clz32"),
        ("  let c = 0;\n  c = x[0] > 1;\n", "'c' holds numbers, and this is a boolean"),
    ],
)
def test_refusals_say_why_in_javascripts_terms(body: str, fragment: str) -> None:
    src = f"/** @kernel */\nexport function k(x: Float32Array): void {{\n{body}}}\n"
    with pytest.raises(CompileError) as e:
        wg.compile(src, lang="typescript")
    assert len(e.value.diagnostics) == 1 and fragment in e.value.diagnostics[0].message, e.value.diagnostics


HELPERS = (
    "function total(x: Float32Array, m: i32): number {\n  let s = 0;\n  for (let j = 0; j < m; j++) {\n"
    "    s += x[j];\n  }\n  return s;\n}\n"
)
HELPERS += _kernel(
    "helper_accumulators",
    "x: Float32Array, out: Float64Array",
    "  const i = wave.global_id(0);\n  let c = 0;\n  const f = (v: number) => {\n    c++;\n    return v * 2;\n  };\n"
    "  const r = f(i);\n  out[i] = total(x, 4) + r + c;\n",
)
K["helper_accumulators.ts"] = HELPERS


def test_accumulators_in_functions_and_counters_captured_by_arrow_functions() -> None:
    """A function's `let s = 0; s += x[j]` and a kernel's counter bumped inside an arrow function
    are typed by their uses too (the kernel is lowered again, its helpers with it)."""
    out = np.zeros(32)
    _run(HELPERS, X[:4], out)
    assert np.array_equal(out, sum(float(v) for v in X[:4]) + 2 * np.arange(32) + 1)
