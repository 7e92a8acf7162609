"""Per-thread arrays in TypeScript as its users write them (issue 24): initializer lists
(`new Float32Array([..])`, `Float32Array.of`, `.from`, `.fill`) converted as JavaScript stores them,
2-D arrays (`[new Float32Array(4), ...]`, `Array.from({ length: R }, () => new Float32Array(C))`,
`t[i][j]`, rows `t[r]` and `const row = t[r]`), and per-thread arrays passed to functions and arrow
functions by reference or declared in them. Each kernel runs on the emulator (NumPy and compiled
engines) against NumPy; literal conversions are checked against node itself; tsc accepts every
kernel with wave.d.ts (docs/compiler.md, "The kernel language in TypeScript")."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
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
RNG = np.random.default_rng(2024)
X = RNG.uniform(-4, 4, 64).astype(np.float32)
NODE = shutil.which("node")


def _file(name: str, text: str) -> str:
    K[name + ".ts"] = text
    return text


def _kernel(name: str, params: str, body: str, before: str = "") -> str:
    return _file(name, f"{before}/** @kernel */\nexport function {name}({params}): void {{\n{body}}}\n")


def _run(src: str, *args: np.ndarray | int, engine: str = "numpy", opt: int = 2) -> None:
    (kernel,) = load_kernels(src, lang="typescript", opt=opt).values()
    kernel(*args, grid=1, workgroup=32, engine=engine)


def _local_rows(src: str) -> int:
    prog = wg.compile(src, lang="typescript")
    return sum(1 for i in prog.kernels[0].instructions if i.spec.space == "local" and i.spec.op in (Op.LD, Op.ST))


def _refused(src: str) -> list[tuple[str, int, int]]:
    with pytest.raises(CompileError) as e:
        wg.compile(src, lang="typescript")
    return [(d.message, d.span.line, d.span.col) for d in e.value.diagnostics]  # type: ignore[union-attr]


def _i32(v: float) -> int:
    """ToInt32 (ECMAScript 7.1.6): truncate, modulo 2**32, into [-2**31, 2**31)."""
    if not math.isfinite(v):
        return 0
    k = math.trunc(v) % 2**32
    return k - 2**32 if k >= 2**31 else k


# ---- initializer lists ---------------------------------------------------------------------------
LITERALS = [1, 2.5, 0.1, -0.0, 1e40, -1.9, 2**32 + 5, 4294967295.7, -(2**31) - 1, 3e-46]
LIST = ", ".join(repr(v) if v != -0.0 or math.copysign(1, v) > 0 else "-0" for v in LITERALS)
INIT = _kernel(
    "init_lists",
    "x: Float32Array, f: Float32Array, d: Float64Array, s: Int32Array, u: Uint32Array, h: Float16Array",
    f"  const i = wave.global_id(0);\n  const a = new Float32Array([{LIST}]);\n"
    f"  const b = Float64Array.of({LIST});\n  const c = Int32Array.from([{LIST}]);\n"
    f"  const e = new Uint32Array([{LIST}]);\n  const g = new Float16Array([{LIST}]);\n"
    "  const r = new Float32Array([x[i], x[i] * 0.1, x[i] / 3]);\n  const q = new Int32Array(3).fill(x[i] * 2.5);\n"
    "  for (let j = 0; j < a.length; j++) {\n    f[i * 16 + j] = a[j];\n    d[i * 16 + j] = b[j];\n"
    "    s[i * 16 + j] = c[j];\n    u[i * 16 + j] = e[j];\n    h[i * 16 + j] = g[j];\n  }\n"
    "  for (let j = 0; j < 3; j++) {\n    f[i * 16 + 10 + j] = r[j];\n    s[i * 16 + 10 + j] = q[j];\n  }\n",
)


def _init_buffers() -> tuple[np.ndarray, ...]:
    n = 32 * 16
    return (
        X[:32].copy(),
        np.zeros(n, np.float32),
        np.zeros(n, np.float64),
        np.zeros(n, np.int32),
        np.zeros(n, np.uint32),
        np.zeros(n, np.float16),
    )


@pytest.mark.parametrize(("engine", "opt"), [("numpy", 0), ("numpy", 2), ("compiled", 2)])
def test_initializer_lists_convert_as_typed_array_stores(engine: str, opt: int) -> None:
    """Math.fround for Float32Array (0.1 rounds, 1e40 is Infinity, 3e-46 is 0, -0 stays -0),
    Math.f16round for Float16Array, ToInt32 / ToUint32 for the integer arrays (1.9 -> 1, -1.9 -> -1,
    2**32 + 5 -> 5, -1 in a Uint32Array is 4294967295); run-time values alike, and fill(v)
    evaluates v once."""
    x, f, d, s, u, h = _init_buffers()
    _run(INIT, x, f, d, s, u, h, engine=engine, opt=opt)
    lit = np.array(LITERALS, np.float64)
    with np.errstate(over="ignore"):
        want_f, want_h = lit.astype(np.float32), lit.astype(np.float16)
    want_s = np.array([_i32(v) for v in LITERALS], np.int64).astype(np.int32)
    for i in range(32):
        row = slice(i * 16, i * 16 + 10)
        assert np.array_equal(f[row].view(np.uint32), want_f.view(np.uint32))  # -0 and Infinity included
        assert np.array_equal(d[row].view(np.uint64), lit.view(np.uint64))
        assert np.array_equal(s[row], want_s)
        assert np.array_equal(u[row], want_s.view(np.uint32))
        assert np.array_equal(h[row].view(np.uint16), want_h.view(np.uint16))
        v = np.float64(x[i])
        assert f[i * 16 + 10 : i * 16 + 13].tolist() == [x[i], np.float32(v * 0.1), np.float32(v / 3)]
        assert s[i * 16 + 10 : i * 16 + 13].tolist() == [_i32(v * 2.5)] * 3
    assert f[4] == np.inf and math.copysign(1, f[3]) < 0 and f[9] == 0 and s[5] == -1 and u[5] == 2**32 - 1


@pytest.mark.skipif(NODE is None, reason="node is not installed: JavaScript's answers come from it")
@settings(max_examples=12, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.floats(allow_nan=False, allow_infinity=False, width=64),
            st.integers(-(2**40), 2**40),
            st.sampled_from([0.5, -0.5, 2.5, 65520.0, 65519.0, 3.4028235677973366e38, 1 + 2**-11 + 2**-40]),
        ),
        min_size=4,
        max_size=4,
    )
)
def test_literal_conversions_are_nodes(values: list[float | int]) -> None:
    """Each per-thread array kind, initialized with the same literals, against node's typed arrays
    (Float16Array against NumPy's one rounding of the f64 value where node has none: node < 24)."""
    lits = ", ".join(repr(v) for v in values)
    kinds = ["Float32Array", "Float64Array", "Int32Array", "Uint32Array", "Float16Array"]
    has_f16 = subprocess.run([NODE, "-e", "Float16Array"], capture_output=True, timeout=60).returncode == 0  # type: ignore[list-item]
    asked = kinds if has_f16 else kinds[:-1]
    script = (
        f"const v = [{lits}];\nconsole.log(JSON.stringify(["
        + ", ".join(f"Array.from(new {k}(v), (e) => Object.is(e, -0) ? '-0' : String(e))" for k in asked)
        + "]));"
    )
    r = subprocess.run([NODE, "-e", script], capture_output=True, text=True, timeout=60)  # type: ignore[list-item]
    assert r.returncode == 0, r.stderr
    node = [["-0" if w == "-0" else float(w) for w in ws] for ws in json.loads(r.stdout)]
    if not has_f16:
        with np.errstate(over="ignore"):
            half = np.array([float(v) for v in values]).astype(np.float16).astype(np.float64)
        node.append(["-0" if h == 0 and math.copysign(1, h) < 0 else float(h) for h in half])
    body = "".join(f"  const a{k} = new {t}([{lits}]);\n" for k, t in enumerate(kinds))
    body += "".join(f"  for (let j = 0; j < 4; j++) {{\n    o{k}[j] = a{k}[j];\n  }}\n" for k in range(len(kinds)))
    src = (
        "/** @kernel */\nexport function lits(o0: Float32Array, o1: Float64Array, o2: Int32Array, "
        f"o3: Uint32Array, o4: Float16Array): void {{\n{body}}}\n"
    )
    outs = [np.zeros(4, t) for t in (np.float32, np.float64, np.int32, np.uint32, np.float16)]
    (kernel,) = load_kernels(src, lang="typescript").values()
    kernel(*outs, grid=1, workgroup=1)
    for out, want in zip(outs, node):
        got = ["-0" if v == 0 and math.copysign(1, v) < 0 else float(v) for v in out.astype(np.float64)]
        assert got == want, (values, got, want)


# ---- 2-D per-thread arrays -----------------------------------------------------------------------
TILE = _kernel(
    "register_tile",
    "a: Float32Array, b: Float32Array, c: Float32Array, k: i32",
    "  const i = wave.global_id(0);\n"
    "  const acc = [new Float32Array(4), new Float32Array(4), new Float32Array(4), new Float32Array(4)];\n"
    "  const bias = Array.from({ length: 4 }, () => new Float32Array([1, 2, 3, 4]));\n"
    "  for (let p = 0; p < k; p++) {\n    for (let r = 0; r < 4; r++) {\n      const av = a[(i * 4 + r) * k + p];\n"
    "      for (let j = 0; j < acc[r].length; j++) {\n"
    "        acc[r][j] = Math.fround(acc[r][j] + Math.fround(av * b[p * 4 + j]));\n      }\n    }\n  }\n"
    "  for (let r = 0; r < acc.length; r++) {\n    for (let j = 0; j < 4; j++) {\n"
    "      c[(i * 4 + r) * 4 + j] = acc[r][j] + bias[r][j];\n    }\n  }\n",
)


def _tile_reference(a: np.ndarray, b: np.ndarray, k: int) -> np.ndarray:
    acc = np.zeros((128, 4), np.float32)
    for p in range(k):  # one rounding per product and per sum, in the kernel's order
        acc = (acc + (a.reshape(128, k)[:, p : p + 1] * b.reshape(k, 4)[p]).astype(np.float32)).astype(np.float32)
    return (acc + np.array([1, 2, 3, 4], np.float32)).reshape(-1)


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_a_2d_tile_stays_in_registers_when_unrolled(engine: str) -> None:
    """`const acc = [new Float32Array(4), ...]` and Array.from rows, indexed acc[r][j] by counters of
    loops with constant bounds (the unroll rule): no local-memory access, NumPy's answer."""
    assert _local_rows(TILE) == 0 and wg.compile(TILE, lang="typescript").kernels[0].local_memory == 0
    k = 5
    a, b = RNG.uniform(-2, 2, 128 * k).astype(np.float32), RNG.uniform(-2, 2, k * 4).astype(np.float32)
    c = np.zeros(512, np.float32)
    _run(TILE, a, b, c, k, engine=engine)
    assert np.array_equal(c, _tile_reference(a, b, k))


DYNAMIC_2D = _kernel(
    "tile_dynamic",
    "x: Float32Array, out: Float32Array",
    "  const i = wave.global_id(0);\n  const t = [new Float32Array([1, 2, 3]), Float32Array.of(4, 5, 6)];\n"
    "  t[i % 2][i % 3] += x[i];\n  const row = t[(i + 1) % 2];\n  row[i % 3] = row[i % 3] * 10;\n"
    "  out[i * 2] = t[i % 2][i % 3];\n  out[i * 2 + 1] = t[0][0] + t[0][1] + t[0][2] + t[1][0] + t[1][1] + t[1][2];\n",
)


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_run_time_indices_put_a_2d_array_in_local_memory(engine: str) -> None:
    """Row-major 2-D initializers; `const row = t[r]` writes t by reference, as in JavaScript."""
    assert wg.compile(DYNAMIC_2D, lang="typescript").kernels[0].local_memory > 0
    out = np.zeros(64, np.float32)
    _run(DYNAMIC_2D, X[:32].copy(), out, engine=engine)
    for i in range(32):
        t = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
        t[i % 2, i % 3] += X[i]
        t[(i + 1) % 2, i % 3] *= np.float32(10)
        assert out[i * 2] == t[i % 2, i % 3]
        assert out[i * 2 + 1] == np.float32(sum(float(v) for v in t.reshape(-1)))


NULLISH = _kernel(
    "private_nullish",
    "out: Float32Array, n: i32",
    "  const i = wave.global_id(0);\n  let t = Float32Array.of(1, 2, 3);\n"
    "  var m = [new Float32Array(2), new Float32Array([5, 6])];\n  let row = m[1];\n"
    "  out[i * 2] = t[i - n] ?? -1;\n  out[i * 2 + 1] = row[i - n] ?? -1;\n",
)


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_nullish_past_the_end_of_a_per_thread_array_or_row(engine: str) -> None:
    """`t[k] ?? d` and `row[k] ?? d`: d where k is outside the array or row (JavaScript's
    undefined), no access and no trap. (`let` and `var` declare them too where the name is never
    assigned again: the same meaning as const.)"""
    out = np.zeros(64, np.float32)
    _run(NULLISH, out, 1, engine=engine)
    k = np.arange(32) - 1
    assert out[0::2].tolist() == [float(k + 1) if 0 <= k < 3 else -1.0 for k in k]
    assert out[1::2].tolist() == [[5.0, 6.0][k] if 0 <= k < 2 else -1.0 for k in k]


@st.composite
def _programs(draw: st.DrawFn) -> tuple[int, int, list[list[int]] | None, list[tuple[str, int, int, int]]]:
    """A 2-D shape, an optional initializer (row-major integers) and a few element updates, each
    (row spelling, row, column, value): `t[r][c] += v`, `row[c] += v` through `const row = t[r]`,
    `fill(t[r], c, v)` through a function; a row or column of -1 means `x[i] % size` (at run time)."""
    rows, cols = draw(st.integers(1, 3)), draw(st.integers(1, 4))
    init = draw(
        st.none() | st.lists(st.lists(st.integers(-9, 9), min_size=cols, max_size=cols), min_size=rows, max_size=rows)
    )
    ops = draw(
        st.lists(
            st.tuples(
                st.sampled_from(["direct", "view", "function"]),
                st.integers(-1, rows - 1),
                st.integers(-1, cols - 1),
                st.integers(-5, 5),
            ),
            min_size=1,
            max_size=5,
        )
    )
    return rows, cols, init, ops


@settings(max_examples=8, deadline=None)
@given(_programs())
def test_2d_updates_match_numpy(
    program: tuple[int, int, list[list[int]] | None, list[tuple[str, int, int, int]]],
) -> None:
    """Random 2-D per-thread arrays and updates, against NumPy: in registers where every index is
    a constant, in local memory where one is known only at run time (`(x[i] >>> 0) % n`); both
    engines."""
    rows, cols, init, ops = program
    if init is None:
        decl = "[" + ", ".join(f"new Int32Array({cols})" for _ in range(rows)) + "]"
    else:
        decl = "[" + ", ".join(f"Int32Array.of({', '.join(map(str, r))})" for r in init) + "]"
    body = f"  const i = wave.global_id(0);\n  const t = {decl};\n"
    for k, (how, r, c, v) in enumerate(ops):
        rs = f"(x[i] >>> 0) % {rows}" if r < 0 else str(r)
        cs = f"(x[i] >>> 0) % {cols}" if c < 0 else str(c)
        if how == "direct":
            body += f"  t[{rs}][{cs}] += {v} + i;\n"
        elif how == "view":
            body += f"  const row{k} = t[{rs}];\n  row{k}[{cs}] += {v} + i;\n"
        else:
            body += f"  bump(t[{rs}], {cs}, {v} + i);\n"
    body += f"  for (let r = 0; r < {rows}; r++) {{\n    for (let c = 0; c < t[r].length; c++) {{\n"
    body += f"      out[(i * {rows} + r) * {cols} + c] = t[r][c];\n    }}\n  }}\n"
    before = "function bump(row: Int32Array, c: number, v: number): void {\n  row[c] += v;\n}\n"
    src = f"{before}/** @kernel */\nexport function upd(x: Int32Array, out: Int32Array): void {{\n{body}}}\n"
    x = RNG.integers(0, 1000, 32).astype(np.int32)
    want = np.zeros((32, rows, cols), np.int64)
    for i in range(32):
        t = np.array(init if init is not None else np.zeros((rows, cols)), np.int64)
        for _, r, c, v in ops:
            t[x[i] % rows if r < 0 else r, x[i] % cols if c < 0 else c] += v + i
        want[i] = t
    dynamic = any(r < 0 or c < 0 for _, r, c, _ in ops)
    assert (wg.compile(src, lang="typescript").kernels[0].local_memory > 0) == dynamic
    for engine in ("numpy", "compiled"):
        out = np.zeros(32 * rows * cols, np.int32)
        _run(src, x, out, engine=engine)
        assert np.array_equal(out, want.reshape(-1)), (engine, src)


# ---- per-thread arrays and functions -------------------------------------------------------------
FUNCTIONS = """function axpy(t: Float32Array, v: number, s: f32): void {
  for (let j = 0; j < t.length; j++) {
    t[j] = t[j] + v * s;
  }
}

function total(t: Float32Array[]): number {
  let s = 0;
  for (let r = 0; r < t.length; r++) {
    for (let j = 0; j < t[r].length; j++) {
      s += t[r][j];
    }
  }
  return s;
}

function squares(v: number): number {
  const own = Float64Array.of(v, v * v, v * v * v);
  return own[0] + own[1] + own[2];
}

"""
HELPERS = _kernel(
    "private_helpers",
    "x: Float32Array, out: Float64Array",
    "  const i = wave.global_id(0);\n  const t = Array.from({ length: 3 }, () => new Float32Array(2));\n"
    "  const w = new Float32Array([1, 2]);\n  const scale = (r: Float32Array, f: number) => {\n"
    "    for (let j = 0; j < r.length; j++) {\n      r[j] *= f;\n    }\n  };\n"
    "  for (let r = 0; r < 3; r++) {\n    axpy(t[r], x[i], r + 1);\n  }\n  const mid = t[1];\n  axpy(mid, 1, 1);\n"
    "  scale(t[2], 0.5);\n  axpy(w, x[i], 2);\n  scale(w, 3);\n"
    "  out[i * 4] = total(t);\n  out[i * 4 + 1] = w[0] + w[1];\n  out[i * 4 + 2] = squares(i) + squares(i + 1);\n"
    "  out[i * 4 + 3] = t[1][0];\n",
    FUNCTIONS,
)


def _helpers_reference(x: np.ndarray) -> np.ndarray:
    out = np.zeros((32, 4))
    for i in range(32):
        v = float(x[i])
        t = np.zeros((3, 2), np.float32)
        for r in range(3):
            t[r] = (t[r].astype(np.float64) + v * np.float32(r + 1)).astype(np.float32)
        t[1] = (t[1].astype(np.float64) + 1).astype(np.float32)
        t[2] = (t[2].astype(np.float64) * 0.5).astype(np.float32)
        w = np.array([1, 2], np.float32)
        w = (w.astype(np.float64) + v * 2).astype(np.float32)
        w = (w.astype(np.float64) * 3).astype(np.float32)
        s = 0.0
        for e in t.reshape(-1):
            s += float(e)
        out[i] = [s, float(w[0]) + float(w[1]), sum(k + k * k + k**3 for k in (i, i + 1)), t[1, 0]]
    return out.reshape(-1)


@pytest.mark.parametrize(("engine", "opt"), [("numpy", 0), ("numpy", 2), ("compiled", 2)])
def test_per_thread_arrays_pass_to_functions_by_reference(engine: str, opt: int) -> None:
    """A row `t[r]` and `const row = t[r]` to a `Float32Array` parameter, the 2-D array to a
    `Float32Array[]` one, a 1-D array to a function and an arrow function: each writes the
    caller's array, as JavaScript does; a function's own per-thread array is its call's (two calls
    in one expression); unrolled, everything stays in registers."""
    assert _local_rows(HELPERS) == 0
    out = np.zeros(128)
    _run(HELPERS, X[:32].copy(), out, engine=engine, opt=opt)
    assert np.array_equal(out, _helpers_reference(X[:32]))


def test_a_row_is_taken_where_the_call_is() -> None:
    """`f(t[r], ...)` evaluates r once, at the call: a later change of r does not move the row."""
    src = _kernel(
        "row_at_call",
        "out: Int32Array",
        "  const t = [new Int32Array(2), new Int32Array(2)];\n  let r = 0;\n"
        "  const bump = (row: Int32Array) => {\n    r = 1;\n    row[0] = 7;\n    row[1] = r;\n  };\n"
        "  bump(t[r]);\n  out[0] = t[0][0];\n  out[1] = t[0][1];\n  out[2] = t[1][0];\n  out[3] = r;\n",
    )
    out = np.zeros(4, np.int32)
    (kernel,) = load_kernels(src, lang="typescript").values()
    kernel(out, grid=1, workgroup=1)
    assert out.tolist() == [7, 1, 0, 1]


NESTED = """function rowsum(r: Float32Array): number {
  let s = 0;
  for (let j = 0; j < r.length; j++) {
    s += r[j];
  }
  return s;
}

function scale(t: Float32Array[], f: number): void {
  for (let r = 0; r < t.length; r++) {
    const row = t[r];
    for (let j = 0; j < row.length; j++) {
      row[j] *= f;
    }
  }
}

function total(t: Float32Array[]): number {
  let s = 0;
  for (let r = 0; r < t.length; r++) {
    s += rowsum(t[r]);
  }
  return s;
}

"""
NESTED = _kernel(
    "private_nested",
    "x: Float32Array, out: Float64Array",
    "  const i = wave.global_id(0);\n  const t = [Float32Array.of(1, 2, 3), Float32Array.of(4, 5, 6)];\n"
    "  t[1][2] = x[i];\n  scale(t, 2);\n  out[i] = total(t) + rowsum(t[1]);\n",
    NESTED,
)


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_a_function_passes_rows_of_its_2d_parameter_on(engine: str) -> None:
    """total(t) calls rowsum(t[r]) and scale(t) writes through `const row = t[r]`: the rows of a
    2-D parameter are the caller's rows; the loops unroll, the array stays in registers."""
    assert _local_rows(NESTED) == 0
    out = np.zeros(32)
    _run(NESTED, X[:32].copy(), out, engine=engine)
    v = X[:32].astype(np.float64)
    assert np.array_equal(out, 2 * (1 + 2 + 3 + 4 + 5 + v) + 2 * (4 + 5 + v))


# ---- refusals ------------------------------------------------------------------------------------
def _in_kernel(body: str, before: str = "") -> str:
    return f"{before}/** @kernel */\nexport function k(x: Float32Array, n: i32): void {{\n{body}}}\n"


@pytest.mark.parametrize(
    ("body", "fragment", "col"),
    [
        ("  const t = new Float32Array(n);\n", "must be a constant integer expression", 30),
        ("  const t = new Float32Array([1, , 2]);\n", "holes or spread elements", 30),
        ("  const t = new Float32Array([...x]);\n", "holes or spread elements", 30),
        ("  const t = new Uint8Array([1, 2]);\n", "32- or 64-bit elements", 17),
        ("  let t = new Float32Array(2);\n  t = new Float32Array(3);\n", "declared once, with const", 7),
        ("  const t = new Float32Array([]);\n", "at least one element", 13),
        ("  const t = [new Float32Array(2), new Float32Array(3)];\n", "this is a Float32Array of 3", 35),
        ("  const t = [new Float32Array(2), new Int32Array(2)];\n", "this is a Int32Array of 2", 35),
        ("  const t = [new Float32Array(2), 1];\n", "an array of typed arrays of one type", 35),
        ("  const t = Array.from({ length: 2 }, () => new Float32Array([x[0]]));\n", "with constants", 63),
        ("  const t = Array.from({ size: 2 }, () => new Float32Array(2));\n", "takes { length: R }", 24),
        ("  const t: Int32Array = new Float32Array(2);\n", "is a Float32Array", 12),
        ("  const t = [new Float32Array(2)];\n  x[0] = t[0];\n", "one of its rows: index it, t[i][j]", 10),
        ("  const t = [new Float32Array(2)];\n  x[0] = t[0][0] ?? 1;\n", "write the bounds test", 10),
        ("  const t = new Float32Array(2);\n  x[0] = t[0][1];\n", "t[0] is a number", 10),
        ("  const t = [new Float32Array(2)];\n  const r = t[0];\n  x[0] = r;\n", "'r' is a row of t", 10),
        ("  const t = new Float32Array(2).fill(1, 0, 1);\n", "fill(v) with one value", 13),
        ("  const t = Float32Array.from(x);\n", "takes an array literal here", 13),
        ("  const t = Array.from({ length: n }, () => new Float32Array(2));\n", "number of rows must be a", 34),
        ("  const t = Array.from({ length: 2 }, () => 3);\n", "made by a typed array's constructor", 39),
        ("  const t = [new Float32Array(2)];\n  let r = t[0];\n  r = t[0];\n", "declare a row of t with const", 7),
        ("  const t = [new Float32Array(2)];\n  const r: Int32Array = t[0];\n", "a Float32Array (a row of t)", 12),
        ("  const t = [new Float32Array(2)];\n  x[0] = t[2].length;\n", "t has 1 rows: t[2] is undefined", 12),
        ("  const t = [[new Float32Array(2)]];\n", "an array literal allocates on the heap", 13),
        ("  const t = new Float32Array([1]);\n  const u = t;\n", "'t' is an array: index it", 13),
    ],
)
def test_refusals_say_why_at_their_place(body: str, fragment: str, col: int) -> None:
    (d,) = _refused(_in_kernel(body))
    assert fragment in d[0] and d[2] == col, d


def test_a_2d_array_where_a_function_takes_one_row_is_refused() -> None:
    before = "function f(t: Float32Array): number {\n  return t[0];\n}\n"
    (d,) = _refused(_in_kernel("  const t = [new Float32Array(2)];\n  x[0] = f(t);\n", before))
    assert "pass a row, t[i]" in d[0] and (d[1], d[2]) == (7, 12), d
    (d,) = _refused(_in_kernel("  const t = new Int32Array(2);\n  x[0] = f(t);\n", before))
    assert "not an array of i32" in d[0], d


def test_a_function_writing_a_passed_array_is_a_statement_of_its_own() -> None:
    before = "function put(t: Float32Array): number {\n  t[0] = 1;\n  return 2;\n}\n"
    (d,) = _refused(_in_kernel("  const t = new Float32Array(2);\n  x[0] = put(t) + t[0];\n", before))
    assert "writes memory or synchronises" in d[0], d


# ---- block scope: per-thread arrays of one name in sibling blocks, inner blocks, arrow functions ----
SCOPES = _kernel(
    "scopes",
    "x: Float32Array, out: Float32Array",
    """  const i = wave.global_id(0);
  let s = 0;
  for (let r = 0; r < 4; r++) {
    const acc = new Float32Array(4);
    for (let j = 0; j < 4; j++) acc[j] = x[i] * j + r;
    s += acc[3];
  }
  for (let r = 0; r < 2; r++) {
    const acc = new Float32Array(4);
    acc[i % 4] = 1;
    s += acc[1] * 10;
  }
  {
    const acc = new Int32Array(3);
    acc[2] = 7;
    s += acc[2];
  }
  const acc = new Float32Array(2);
  acc[1] = 100;
  const twice = (v: number): number => {
    const acc = new Float32Array(2);
    acc[0] = v;
    acc[1] = v;
    return acc[0] + acc[1];
  };
  const peek = (): number => acc[1];
  for (let r = 0; r < 2; r++) {
    const acc = new Float32Array(2);
    acc[1] = r;
    s += twice(acc[1]) + peek();
  }
  out[i] = s + acc[1];
""",
    before="",
)


def _scopes_reference(x: np.ndarray) -> np.ndarray:
    out = np.zeros(len(x), np.float32)
    for i, xi in enumerate(x.astype(np.float64)):
        s = 0.0
        for r in range(4):
            s += float(np.float32(xi * 3 + r))  # the first loop's acc[3]
        s += 10.0 * 2 if i % 4 == 1 else 0.0  # the second loop's acc, zeroed on each trip
        s += 7  # the inner block's Int32Array acc
        for r in range(2):
            s += 2 * r + 100  # twice() on the loop's acc[1], peek() reading the outer acc (lexical)
        out[i] = np.float32(s + 100)
    return out


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_arrays_of_one_name_in_sibling_and_inner_blocks_and_arrow_functions(engine: str) -> None:
    """`const acc = new Float32Array(4)` in two sibling loops, an inner block, an arrow function's
    body and the kernel's own block: each its own array (JavaScript's block scope), and an arrow
    function reads the array visible where it is declared, not the one visible where it is
    called."""
    x = np.linspace(-2, 2, 32).astype(np.float32)
    out = np.zeros(32, np.float32)
    _run(SCOPES, x, out, engine=engine)
    np.testing.assert_array_equal(out, _scopes_reference(x))


HIDING = _kernel(
    "hiding",
    "x: Float32Array, out: Float32Array",
    "  const i = wave.global_id(0);\n  const acc = new Float32Array(2);\n  acc[0] = 5;\n  const n = 1;\n  {\n"
    "    const acc = 2;\n    let n = new Float32Array(2);\n    n[1] = x[i];\n    out[i] = acc + n[1];\n  }\n"
    "  const f = (v: number): number => {\n    const acc = new Float32Array(2);\n    acc[1] = v;\n"
    "    return acc[1] + acc[0];\n  };\n  out[i] += f(x[i]) + acc[0] + n;\n",
)


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_an_array_and_a_variable_of_one_name_hide_each_other_by_block(engine: str) -> None:
    """A variable of an inner block hides an array (`const acc = 2`), an array of an inner block
    hides a variable (`let n = new Float32Array(2)`), and an arrow function's own array hides the
    captured one; each is visible again after its block."""
    x = np.linspace(-2, 2, 32).astype(np.float32)
    out = np.zeros(32, np.float32)
    _run(HIDING, x, out, engine=engine)
    first = (2 + x.astype(np.float64)).astype(np.float32)  # numbers are f64, stores Math.fround
    np.testing.assert_array_equal(out, (first.astype(np.float64) + x + 5 + 1).astype(np.float32))


def test_what_block_scope_still_refuses() -> None:
    """A var array read after its block (JavaScript would read the last one, or undefined) and an
    array named like a parameter (JavaScript allows the latter in an inner block: not yet)."""
    var = (
        "/** @kernel */\nexport function k(x: Float32Array, out: Float32Array): void {\n"
        "  for (let r = 0; r < 2; r++) {\n    var acc = new Float32Array(4);\n    acc[r] = x[0];\n  }\n"
        "  out[0] = acc[0];\n}\n"
    )
    ((msg, line, col),) = _refused(var)
    assert "'acc' is a var of an inner block" in msg and (line, col) == (7, 12)
    param = (
        "/** @kernel */\nexport function k(x: Float32Array, out: Float32Array): void {\n  {\n"
        "    const x = new Float32Array(4);\n    out[0] = x[0];\n  }\n}\n"
    )
    ((msg, line, col),) = _refused(param)
    assert "'x' is already declared (an array parameter or local array)" in msg and (line, col) == (4, 11)


def test_a_second_array_of_one_name_in_one_block_is_refused() -> None:
    src = _kernel(
        "twice_declared",
        "out: Float32Array",
        "  {\n    const a = new Float32Array(2);\n    a[0] = 1;\n  }\n  const a = new Float32Array(2);\n"
        "  const a2 = new Float32Array(2);\n  out[0] = a[0] + a2[0];\n",
    )
    assert wg.compile(src, lang="typescript").kernels[0].local_memory == 0  # an inner block's name is free again
    bad = (
        "/** @kernel */\nexport function k(out: Float32Array): void {\n  const a = new Float32Array(2);\n"
        "  const a = new Float32Array(3);\n  out[0] = a[0];\n}\n"
    )  # tsc refuses it too (TS2451): not in K
    assert _refused(bad) == [("'a' is already declared in this block", 4, 9)]


def test_tsc_accepts_every_kernel(tmp_path: Path) -> None:
    tsc = _tsc()
    if tsc is None:
        pytest.skip("tsc is not installed (tools/node-tools.sh installs npm's typescript into .tools/node)")
    files = [str(DTS)]
    for name, text in K.items():
        (tmp_path / name).write_text(text)
        files.append(str(tmp_path / name))
    assert len(files) >= 6
    args = [tsc, "--noEmit", "--strict", "--target", "es2022", "--lib", "esnext", "--pretty", "false", *files]
    r = subprocess.run(args, capture_output=True, text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"})
    assert r.returncode == 0, r.stdout + r.stderr
