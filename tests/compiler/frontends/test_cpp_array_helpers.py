"""C++ per-thread arrays passed to helpers, templates and lambdas (issue 24): by reference
(`float (&t)[4]`, `const float (&t)[4]`, `float (&t)[4][4]`, `template <int N> ... (&t)[N]`) and
as the pointer an array parameter decays to (`float t[4]`, `float t[]`, `float* t`). The helper
reads and writes the caller's array: registers when every index folds after inlining and
unrolling (no local-memory row in the .wbin), local memory with the range check otherwise. Each
kernel runs on the emulator's two engines against NumPy; g++ accepts the file with wave.hpp, and
refuses each argument our frontend refuses (at the same place)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import wavegpu as wg
from wavegpu.compiler.frontends.cpp import include_dir
from wavegpu.isa.vocabulary import Op
from wavegpu.runtime.sources import load_kernels

GXX = shutil.which("g++")
ENGINES = ("numpy", "compiled")
GXX_FLAGS = ["-std=c++20", "-fsyntax-only", "-Werror", "-Wno-attributes=wave::", f"-I{include_dir()}"]

ARRAYS = """#include "wave.hpp"

// acc[r][c] += a[r] * b[c]: the 4x4 register tile of a blocked matrix multiply
void outer(float (&acc)[4][4], const float (&a)[4], const float* b) {
#pragma unroll
    for (int r = 0; r < 4; ++r) {
#pragma unroll
        for (int c = 0; c < 4; ++c) acc[r][c] += a[r] * b[c];
    }
}

void load_row(float dst[4], const float* src, uint32_t at) {
#pragma unroll
    for (int j = 0; j < 4; ++j) dst[j] = src[at + j];
}

// C (4m x 4n) = A (4m x k) B (k x 4n): each thread computes one 4x4 tile of C in registers
[[wave::kernel]] void tile(const float* a, const float* b, float* c, uint32_t k, uint32_t n) {
    uint32_t col = wave::global_id(0);
    uint32_t row = wave::global_id(1);
    uint32_t w = n * 4;
    float acc[4][4] = {};
    for (uint32_t p = 0; p < k; ++p) {
        float av[4];
        float bv[4];
#pragma unroll
        for (int r = 0; r < 4; ++r) av[r] = a[(row * 4 + r) * k + p];
        load_row(bv, b, p * w + col * 4);
        outer(acc, av, bv);
    }
#pragma unroll
    for (int r = 0; r < 4; ++r) {
#pragma unroll
        for (int j = 0; j < 4; ++j) c[(row * 4 + r) * w + col * 4 + j] = acc[r][j];
    }
}

template <int N>
float total(const float (&t)[N]) {
    float s = 0.0f;
    for (float v : t) s += v;
    return s;
}

void bump(float* t, uint32_t j, float by) { t[j] += by; }

void twice(float t[], uint32_t j) {
    bump(t, j, 1.0f);  // a helper passes its parameter on
    bump(t, j, 2.0f);
}

// t = x[4i..4i+4]; t[sel[i]] += 3 (a run-time index: local memory); t *= 10; out[i] = sum + t[0]
[[wave::kernel]] void pick(const float* x, const uint32_t* sel, float* out, float* sums) {
    uint32_t i = wave::global_id(0);
    float t[4];
    load_row(t, x, i * 4);
    sums[i] = total(t);
    twice(t, sel[i]);
    auto scale = [](float (&u)[4], float by) {
        for (float& v : u) v *= by;
    };
    scale(t, 10.0f);
    auto first = [&]() { return t[0]; };  // a by-reference capture sees the array as it is now
    const float (&view)[4] = t;
    out[i] = total(view) + first();
}
"""


def local_rows(prog: wg.Program, kernel: str) -> int:
    """Local-memory loads and stores in the kernel's code (read from the ISA rows, not text)."""
    k = next(k for k in prog.kernels if k.name == kernel)
    return sum(1 for i in k.instructions if i.spec.space == "local" and i.spec.op in (Op.LD, Op.ST))


@pytest.mark.parametrize("opt", [0, 2])
def test_a_tile_passed_to_helpers_stays_in_registers(opt: int) -> None:
    prog = wg.compile(ARRAYS, lang="cpp", opt=opt)
    tile, pick = prog.kernels
    assert local_rows(prog, "tile") == 0 and tile.local_memory == 0
    assert local_rows(prog, "pick") > 0 and pick.local_memory > 0  # twice(t, sel[i]): a run-time index


@pytest.mark.parametrize("engine", ENGINES)
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_the_register_tile_against_numpy(engine: str, data: st.DataObject) -> None:
    m, k, n = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 6)), data.draw(st.integers(1, 3))
    floats = st.integers(-8, 8).map(float)  # small integers: every sum is exact, in any order
    a = data.draw(hnp.arrays(np.float32, (4 * m, k), elements=floats))
    b = data.draw(hnp.arrays(np.float32, (k, 4 * n), elements=floats))
    c = np.zeros((4 * m, 4 * n), np.float32)
    load_kernels(ARRAYS, lang="cpp").tile(a, b, c, k, n, grid=(1, m), workgroup=(n, 1), engine=engine)
    np.testing.assert_array_equal(c, a @ b)


@pytest.mark.parametrize("engine", ENGINES)
def test_helpers_templates_and_lambdas_write_the_callers_array(engine: str) -> None:
    f = np.float32
    x = np.arange(32, dtype=f) - 7
    sel = np.array([0, 1, 2, 3, 3, 2, 1, 0], np.uint32)
    out, sums = np.zeros(8, f), np.zeros(8, f)
    load_kernels(ARRAYS, lang="cpp").pick(x, sel, out, sums, grid=1, workgroup=8, engine=engine)
    t = x.reshape(8, 4).copy()
    np.testing.assert_array_equal(sums, t.sum(axis=1, dtype=f))
    t[np.arange(8), sel] += f(3)
    t *= f(10)
    np.testing.assert_array_equal(out, t.sum(axis=1, dtype=f) + t[:, 0])


@pytest.mark.parametrize("engine", ENGINES)
def test_an_out_of_range_index_in_a_helper_traps(engine: str) -> None:
    sel = np.array([0, 1, 2, 3, 4, 2, 1, 0], np.uint32)  # t[4] of a float[4], inside `bump` (line 45)
    out, sums = np.zeros(8, np.float32), np.zeros(8, np.float32)
    with pytest.raises(wg.WaveError) as e:
        load_kernels(ARRAYS, lang="cpp").pick(
            np.zeros(32, np.float32), sel, out, sums, grid=1, workgroup=8, engine=engine
        )
    assert "thread (4, 0, 0)" in str(e.value) and "<string>:45:45" in str(e.value)
    assert not out.any()


def test_a_constant_index_out_of_range_in_a_helper_is_a_compile_error() -> None:
    with pytest.raises(wg.CompileError) as e:
        wg.compile(ARRAYS.replace("twice(t, sel[i]);", "twice(t, 5u);"), lang="cpp")
    (d,) = e.value.diagnostics
    assert "index 5 is out of range for per-thread array" in d.message and d.span.line == 45


@pytest.mark.skipif(GXX is None, reason="g++ is not installed")
def test_gxx_accepts_the_kernels(tmp_path: Path) -> None:
    p = tmp_path / "arrays.cpp"
    p.write_text(ARRAYS)
    r = subprocess.run([GXX or "g++", *GXX_FLAGS, str(p)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


REFUSED = {  # (helper, kernel body) -> (line, column, message); g++ refuses each too
    ("void acc(float (&t)[8]) { t[0] += 1.0f; }", "float t[4] = {}; acc(t); o[0] = t[0];"): (
        4, 26, "invalid initialization of reference of type 'float (&)[8]' from 'float t[4]'"),
    ("void acc(float (&t)[8]) { t[0] += 1.0f; }", "int32_t t[8] = {}; acc(t); o[0] = t[0];"): (
        4, 28, "invalid initialization of reference of type 'float (&)[8]' from 'int32_t t[8]'"),
    ("void acc(float (&t)[8]) { t[0] += 1.0f; }", "const float t[8] = {}; acc(t); o[0] = t[0];"): (
        4, 32, "'t' is const: 'acc' takes a non-const array"),
    ("void acc(float* t) { t[0] += 1.0f; }", "const float t[8] = {}; acc(t); o[0] = t[0];"): (
        4, 32, "'t' is const: 'acc' takes a non-const array"),
    ("void acc(float (&t)[8]) { t[0] += 1.0f; }", "acc(o);"): (
        4, 9, "'acc' takes a reference to an array: pass a per-thread array"),
    ("void w(const float (&t)[8]) { t[0] = 1.0f; }", "float t[8] = {}; w(t); o[0] = t[0];"): (
        2, 31, "assignment of read-only location 't[0]'"),
    ("void w(const float* t) { t[1]++; }", "float t[8] = {}; w(t); o[0] = t[0];"): (
        2, 26, "increment of read-only location 't[1]'"),
    ("float rf(float* t) { float s = 0.0f; for (float v : t) s += v; return s; }", "float t[8] = {}; o[0] = rf(t);"): (
        2, 53, "range-based for over 't', a pointer parameter"),
    ("float p(const float* t) { return t[1]; }", "float t[2][4] = {}; o[0] = p(t);"): (
        4, 34, "cannot convert 'float t[2][4]' to 'const float*' for 'p'"),
    ("void two(float (&t)[2][4]) { t[1][3] = 1.0f; }", "float t[4][2] = {}; two(t); o[0] = t[0][0];"): (
        4, 29, "invalid initialization of reference of type 'float (&)[2][4]' from 'float t[4][2]'"),
}  # fmt: skip


def refused_kernel(helper: str, body: str) -> str:
    return '#include "wave.hpp"\n' + helper + "\n[[wave::kernel]] void k(float* o) {\n    " + body + "\n}\n"


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_wrong_array_arguments_are_refused_at_the_place_once(case: tuple[str, str], tmp_path: Path) -> None:
    line, col, message = REFUSED[case]
    src = refused_kernel(*case)
    with pytest.raises(wg.CompileError) as e:
        wg.compile(src, lang="cpp")
    (d,) = e.value.diagnostics
    assert message in d.message and (d.span.line, d.span.col) == (line, col), (d.message, d.span)
    if GXX is not None:
        p = tmp_path / "k.cpp"
        p.write_text(src)
        r = subprocess.run([GXX, *GXX_FLAGS, str(p)], capture_output=True, text=True)
        assert r.returncode != 0 and f"k.cpp:{line}:" in r.stderr, r.stderr


def test_a_refused_array_reference_is_reported_once() -> None:
    src = refused_kernel("", "const float (&v)[4] = o; o[0] = v[1] + v[2];")
    with pytest.raises(wg.CompileError) as e:
        wg.compile(src, lang="cpp")
    (d,) = e.value.diagnostics
    assert "a reference to an array binds a per-thread array" in d.message and (d.span.line, d.span.col) == (4, 27)
