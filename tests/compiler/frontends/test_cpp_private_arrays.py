"""C++ per-thread arrays and `#pragma unroll` (issue 24, points 2 and 3): `float t[4];`, initialisers
(the rest zero), `float t[2][4]`, t[i] loads, stores and compound assignment, range-based for, kept
in registers when unrolling makes every index constant (no local-memory row in the .wbin) and in
the thread's slice of local memory otherwise, where an out-of-range index traps. Each kernel runs
on the emulator's two engines against NumPy, and g++ accepts every one with wave.hpp."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import wavegpu as wg
from wavegpu.compiler import Options, compile_source
from wavegpu.compiler.frontends.cpp import include_dir
from wavegpu.errors import CompileError
from wavegpu.isa.vocabulary import Op
from wavegpu.runtime.sources import load_kernels

GXX = shutil.which("g++")
ENGINES = ("numpy", "compiled")
SOURCES: list[str] = []  # every kernel this file compiles: g++ reads them too


def _src(text: str) -> str:
    SOURCES.append(text)
    return text


def local_rows(prog: wg.Program) -> int:
    """Local-memory loads and stores in the kernel's code (read from the ISA rows, not text)."""
    return sum(1 for i in prog.kernels[0].instructions if i.spec.space == "local" and i.spec.op in (Op.LD, Op.ST))


# ---- registers: every index constant once unrolled ---------------------------------------------
TILE = _src("""
#include "wave.hpp"
using namespace wave;

// C (m x 4*cols) = A (m x k) B (k x 4*cols): each thread computes a 2 x 4 tile in registers
[[wave::kernel]] void tile(const float* a, const float* b, float* c, uint32_t k, uint32_t cols) {
    uint32_t col = global_id(0);
    uint32_t row = global_id(1);
    float acc[2][4] = {};
    for (uint32_t p = 0; p < k; ++p) {
        float av[2];
        float bv[4];
#pragma unroll
        for (int r = 0; r < 2; ++r) av[r] = a[(row * 2 + r) * k + p];
#pragma unroll
        for (int j = 0; j < 4; ++j) bv[j] = b[p * cols * 4 + col * 4 + j];
#pragma unroll
        for (int r = 0; r < 2; ++r) {
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                acc[r][j] += av[r] * bv[j];
            }
        }
    }
#pragma unroll
    for (int r = 0; r < 2; ++r) {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            c[(row * 2 + r) * cols * 4 + col * 4 + j] = acc[r][j];
        }
    }
}
""")


@pytest.mark.parametrize("engine", ENGINES)
def test_a_register_tile_has_no_local_memory_traffic(engine: str) -> None:
    prog = wg.compile(TILE, lang="cpp")
    assert local_rows(prog) == 0 and prog.kernels[0].local_memory == 0
    rng = np.random.default_rng(1)
    m, k, cols = 8, 5, 3
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, cols * 4)).astype(np.float32)
    c = np.zeros((m, cols * 4), np.float32)
    load_kernels(TILE, lang="cpp").tile(a, b, c, k, cols, grid=(1, m // 2), workgroup=(cols, 1), engine=engine)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


INIT = _src("""
#include "wave.hpp"

[[wave::kernel]] void init(const float* x, float* out) {
    uint32_t i = wave::global_id(0);
    float t[4] = {1.0f, 2.0f};      // the rest is zero, as in C++
    int32_t m[2][3] = {{1, 2}, {4}};
    double d[3]{0.5, 0.25};
    uint32_t u[] = {7u, 8u, 9u};
    bool f[2] = {true};
    t[3] = x[i];
    t[2] += t[0] * 3.0f;            // compound assignment
    m[1][2]++;
    ++m[0][2];
    float s = 0.0f;
    for (float v : t) s += v;       // range-based for: unrolled
    for (float& v : t) {
        if (v == 2.0f) continue;
        v *= 10.0f;                 // through the reference
    }
    for (const auto& v : u) s += float(v);
    out[i * 8 + 0] = s;
    out[i * 8 + 1] = t[0] + t[1] + t[2] + t[3];
    out[i * 8 + 2] = float(m[0][0] + m[0][1] + m[0][2] + m[1][0] + m[1][1] + m[1][2]);
    out[i * 8 + 3] = float(d[0] + d[1] + d[2]);
    out[i * 8 + 4] = f[0] && !f[1] ? 1.0f : 0.0f;
    out[i * 8 + 5] = float(u[2]);
    out[i * 8 + 6] = t[1];
    out[i * 8 + 7] = t[3];
}
""")


def _init_reference(x: np.ndarray) -> np.ndarray:
    out = np.zeros((x.size, 8), np.float32)
    for i, xi in enumerate(x):
        t = np.array([1, 2, 0, xi], np.float32)
        t[2] += t[0] * np.float32(3)
        s = np.float32(0)
        for v in t:
            s = np.float32(s + v)
        t = np.where(t == 2, t, t * np.float32(10)).astype(np.float32)
        for v in (7, 8, 9):
            s = np.float32(s + np.float32(v))
        out[i] = [s, ((t[0] + t[1]) + t[2]) + t[3], 1 + 2 + 1 + 4 + 0 + 1, 0.75, 1, 9, t[1], t[3]]
    return out


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("opt", [0, 2, 3])
def test_initialisers_compound_assignment_and_range_for(engine: str, opt: int) -> None:
    prog = wg.compile(INIT, lang="cpp", opt=opt)
    assert local_rows(prog) == 0 and prog.kernels[0].local_memory == 0
    x = np.array([0.5, -3.0, 2.0, 7.25], np.float32)
    out = np.zeros(x.size * 8, np.float32)
    load_kernels(INIT, lang="cpp", opt=opt).init(x, out, grid=1, workgroup=x.size, engine=engine)
    np.testing.assert_array_equal(out.reshape(-1, 8), _init_reference(x))


KNOWN = _src("""
#include "wave.hpp"
[[wave::kernel]] void known(const float* x, float* out) {
    uint32_t i = wave::global_id(0);
    float t[8] = {};
#pragma unroll
    for (int r = 0; r < 2; ++r) {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            int idx = r * 4 + j;          // a variable, known in each copy: it folds too
            t[idx] = x[i] * float(idx);
        }
    }
    float s = 0.0f;
    for (float v : t) s += v;
    out[i] = s;
}
""")


def test_an_index_through_a_variable_known_in_straight_line_code_folds() -> None:
    prog = wg.compile(KNOWN, lang="cpp")
    assert local_rows(prog) == 0 and prog.kernels[0].local_memory == 0
    x = np.array([1.0, -2.0, 0.5], np.float32)
    out = np.zeros(3, np.float32)
    load_kernels(KNOWN, lang="cpp").known(x, out, grid=1, workgroup=3)
    np.testing.assert_array_equal(out, x * np.float32(28))


UNKNOWN = _src("""
#include "wave.hpp"
[[wave::kernel]] [[wave::workgroup(8)]] void unknown(const float* x, float* out, uint32_t n) {
    uint32_t i = wave::global_id(0);
    float t[4] = {};
    int a = 1;
    if (x[i] > 0.0f) a = 2;               // known on neither path after the if
    t[a] += 5.0f;
    int m = 0;
    for (uint32_t k = 0; k < n; ++k) {    // changed by the loop
        t[m] += 1.0f;
        m = (m + 1) % 4;
    }
    int w = 0;
#pragma unroll
    for (int k = 0; k < 3; ++k) {
        t[w] += 10.0f;                    // w from the previous copy: after a continue (1) or not (2)
        if (x[i] > float(k)) {
            w = 1;
            continue;
        }
        w = 2;
    }
    for (int k = 0; k < 4; ++k) out[i * 4 + k] = t[k];
}
""")


@pytest.mark.parametrize("engine", ENGINES)
def test_values_that_depend_on_the_path_are_run_time_indices(engine: str) -> None:
    prog = wg.compile(UNKNOWN, lang="cpp")
    assert local_rows(prog) > 0
    x = np.array([-1.0, 0.5, 1.5, 2.5, 3.0, 0.0, -4.0, 1.0], np.float32)
    n = 6
    want = np.zeros((8, 4), np.float32)
    for i, xi in enumerate(x):
        t = want[i]
        t[2 if xi > 0 else 1] += 5
        for k in range(n):
            t[k % 4] += 1
        w = 0
        for k in range(3):
            t[w] += 10
            w = 1 if xi > k else 2
    out = np.zeros(32, np.float32)
    load_kernels(UNKNOWN, lang="cpp").unknown(x, out, n, grid=1, engine=engine)
    np.testing.assert_array_equal(out.reshape(8, 4), want)


# ---- local memory: an index known only at run time ---------------------------------------------
HIST = _src("""
#include "wave.hpp"
using namespace wave;

[[wave::kernel]] [[wave::workgroup(32)]] void hist(const uint32_t* x, uint32_t* out, uint32_t n) {
    uint32_t i = global_id(0);
    uint32_t bins[8] = {};
    for (uint32_t k = 0; k < n; ++k) {
        bins[x[i * n + k] % 8] += 1;   // a run-time index: the array lives in local memory
    }
#pragma unroll
    for (int b = 0; b < 8; ++b) out[i * 8 + b] = bins[b];
}
""")


@pytest.mark.parametrize("engine", ENGINES)
def test_a_dynamic_index_puts_the_array_in_local_memory(engine: str) -> None:
    prog = wg.compile(HIST, lang="cpp")
    assert local_rows(prog) > 0
    assert prog.kernels[0].local_memory == 8 * 4 * 32  # 8 words for each of the 32 threads
    rng = np.random.default_rng(2)
    n, threads = 37, 64
    x = rng.integers(0, 1000, threads * n).astype(np.uint32)
    out = np.zeros(threads * 8, np.uint32)
    load_kernels(HIST, lang="cpp").hist(x, out, n, grid=2, engine=engine)
    want = np.stack([np.bincount(x[i * n : (i + 1) * n] % 8, minlength=8) for i in range(threads)])
    np.testing.assert_array_equal(out.reshape(threads, 8), want)


def test_without_a_workgroup_size_the_slice_fits_every_launch() -> None:
    src = HIST.replace("[[wave::workgroup(32)]] ", "")
    assert wg.compile(src, lang="cpp").kernels[0].local_memory == 8 * 4 * 1024  # MAX_WORKGROUP_SIZE threads


def test_consecutive_threads_touch_consecutive_words() -> None:
    """The layout: element k of thread t at word k * threads + t (no bank conflicts): in MIR, the
    initialiser's stores go to (tid + k * 4) * 4 for 4 threads, a run-time index to (j * 4 + tid) * 4."""
    src = _src("""
#include "wave.hpp"
[[wave::kernel]] [[wave::workgroup(4)]] void lay(const uint32_t* sel, float* out) {
    uint32_t i = wave::thread_id(0);
    float t[3] = {float(i), float(i) + 0.5f, float(i) + 0.25f};
    out[i] = t[sel[i]];
}
""")
    opts = Options(opt=0, dump_after={"mir"})
    prog = compile_source(src, opts, "k.cpp", "cpp")
    assert prog.kernels[0].local_memory == 3 * 4 * 4
    mir = opts.dumps[0][1]
    tid = set(re.findall(r"(%\d+) = sreg\.tid\.x", mir))
    firsts = [int(c) for v, c in re.findall(r"= add (%\d+), (\d+):u32", mir) if v in tid]
    assert firsts == [4, 8]  # elements 1 and 2 (element 0: the thread's own word, tid * 4)
    assert re.search(r"= mad (%\d+), 4:u32, (%\d+) : u32", mir)  # j * threads + tid
    sel = np.array([0, 1, 2, 1], np.uint32)
    out = np.zeros(4, np.float32)
    load_kernels(src, lang="cpp").lay(sel, out, grid=1)
    np.testing.assert_array_equal(out, [0.0, 1.5, 2.25, 3.5])


OUT_OF_RANGE = _src("""
#include "wave.hpp"
[[wave::kernel]] [[wave::workgroup(16)]] void pick(const int32_t* idx, float* out) {
    uint32_t i = wave::global_id(0);
    float t[4] = {1.0f, 2.0f, 3.0f, 4.0f};
    out[i] = t[idx[i]];
}
""")


@pytest.mark.parametrize(("engine", "boundscheck"), [("numpy", False), ("compiled", False), ("numpy", True)])
@pytest.mark.parametrize("bad", [4, -1, 1 << 30])
def test_an_out_of_range_dynamic_index_traps(engine: str, boundscheck: bool, bad: int) -> None:
    """Always checked, with or without boundscheck (the compiled engine runs without it)."""
    kernels = load_kernels(OUT_OF_RANGE, lang="cpp", boundscheck=boundscheck)
    idx = np.tile(np.arange(4, dtype=np.int32), 4)
    out = np.zeros(16, np.float32)
    kernels.pick(idx, out, grid=1, engine=engine)
    np.testing.assert_array_equal(out, np.tile([1.0, 2.0, 3.0, 4.0], 4))
    idx[5] = bad
    with pytest.raises(wg.WaveError) as e:
        kernels.pick(idx, out, grid=1, engine=engine)
    assert "thread (5, 0, 0)" in str(e.value) and "<string>:6:14" in str(e.value)


def _opencl() -> tuple[bool, str]:
    from wavegpu.runtime import opencl

    return opencl.available()


@pytest.mark.parametrize(
    "device",
    ["amdgcn-sim", pytest.param("opencl", marks=pytest.mark.skipif(not _opencl()[0], reason="no OpenCL"))],
)
def test_other_devices_give_the_same_answers_and_trap(device: str) -> None:
    """To the backends both placements are ordinary registers and local memory: the AMDGCN
    simulator and OpenCL give NumPy's answers, and the simulator traps the out-of-range index."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((4, 3)).astype(np.float32)
    b = rng.standard_normal((3, 8)).astype(np.float32)
    c = np.zeros((4, 8), np.float32)
    load_kernels(TILE, lang="cpp").tile(a, b, c, 3, 2, grid=(1, 2), workgroup=(2, 1), device=device)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)
    n, threads = 9, 64
    x = rng.integers(0, 1000, threads * n).astype(np.uint32)
    out = np.zeros(threads * 8, np.uint32)
    load_kernels(HIST, lang="cpp").hist(x, out, n, grid=2, device=device)
    want = np.stack([np.bincount(x[i * n : (i + 1) * n] % 8, minlength=8) for i in range(threads)])
    np.testing.assert_array_equal(out.reshape(threads, 8), want)
    if device == "amdgcn-sim":
        idx = np.tile(np.arange(4, dtype=np.int32), 4)
        idx[5] = 4
        with pytest.raises(wg.WaveError, match="outside the workgroup's 256 bytes"):
            load_kernels(OUT_OF_RANGE, lang="cpp").pick(idx, np.zeros(16, np.float32), grid=1, device=device)


# ---- compile-time refusals ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("body", "where", "message"),
    [
        ("float t[4];\n    t[4] = 1.0f;", "4:7", "index 4 is out of range for per-thread array 't' (size 4)"),
        (
            "float t[4];\n#pragma unroll\n    for (int k = 0; k < 5; ++k) t[k] = 1.0f;",
            "5:35",
            "index 4 is out of range for per-thread array 't' (size 4)",
        ),
        (
            "float t[2][3] = {};\n    x[0] = t[1][3];",
            "4:17",
            "index 3 is out of range for per-thread array 't' in dimension 2 (size 3)",
        ),
        ("float t[4];\n    x[0] = t[-1];", "4:14", "index -1 is out of range"),
        ("float t[2] = {1.0f, 2.0f, 3.0f};", "3:31", "too many initializers: the array has 2 elements"),
        ("int32_t t[2] = {1.5f};", "3:21", "narrowing conversion from float to int32_t in braces"),
        ("float t[2];\n    x[0] = t[0][1];", "4:12", "'t' has 1 dimension(s): index it t[i]"),
        ("float t[2];\n    t = 1.0f;", "4:5", "'t' is an array; assign its elements"),
        ("uint32_t n = 3;\n    float t[n];", "4:13", "a per-thread array size"),
        ("float t[2];\n    for (float v : x) x[0] = v;", "4:20", "range-based for runs over per-thread arrays only"),
        ("float t[2][2];\n    for (float v : t) x[0] = v;", "4:20", "two dimensions"),
    ],
)
def test_refusals_name_the_place(body: str, where: str, message: str) -> None:
    src = f'#include "wave.hpp"\n[[wave::kernel]] void k(float* x) {{\n    {body}\n}}\n'
    with pytest.raises(CompileError) as e:
        compile_source(src, Options(), "k.cpp", "cpp")
    text = str(e.value)
    assert f"k.cpp:{where}" in text and message in text, text


def test_a_huge_dynamic_array_without_a_workgroup_size_says_how_to_fit() -> None:
    src = (
        '#include "wave.hpp"\n[[wave::kernel]] void k(float* x, uint32_t j) {\n    float t[64];\n    x[0] = t[j];\n}\n'
    )
    with pytest.raises(CompileError) as e:
        compile_source(src, Options(), "k.cpp", "cpp")
    text = str(e.value)
    assert "k.cpp:3:11" in text and "LOCAL_MEMORY_SIZE" in text and "fix the kernel's workgroup size" in text


# ---- #pragma unroll ----------------------------------------------------------------------------
UNROLLED_CONTROL = _src("""
#include "wave.hpp"
[[wave::kernel]] void ctl(const int32_t* x, int32_t* out, uint32_t n) {
    uint32_t i = wave::global_id(0);
    int32_t t[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    int32_t s = 0;
#pragma unroll
    for (int k = 0; k < 8; ++k) {
        if (x[i] == k) continue;     // to the next copy
        if (k == 6) break;           // past the last
        s += t[k] * (k + 1);
    }
    int32_t r = 0;
#pragma unroll
    for (uint32_t k = 0; k < n; ++k) r += int32_t(k);   // run-time bounds: a hint, the loop runs as written
    int32_t q = 0;
#pragma unroll
    for (int k = 0; k < 3; ++k) {
        if (x[i] > k) {
            if (x[i] > k + 2) continue;  // from inside two ifs
            if (x[i] == 7) break;
            q += t[k];
        }
        q += 2 * k;
    }
    if (x[i] == 8) {
#pragma unroll
        for (int k = 0; k < 2; ++k) {
            out[i] = -k;
            return;                     // a return in the first copy
        }
    }
    out[i] = s * 1000 + r + q * 100000;
}
""")


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("opt", [0, 2, 3])
def test_unrolled_copies_keep_break_continue_and_return(engine: str, opt: int) -> None:
    prog = wg.compile(UNROLLED_CONTROL, lang="cpp", opt=opt)
    assert local_rows(prog) == 0
    x = np.arange(-1, 9, dtype=np.int32)
    out = np.zeros(x.size, np.int32)
    load_kernels(UNROLLED_CONTROL, lang="cpp", opt=opt).ctl(x, out, 5, grid=1, workgroup=x.size, engine=engine)
    want = []
    for xi in x:
        s = 0
        for k in range(8):
            if xi == k:
                continue
            if k == 6:
                break
            s += (k + 1) * (k + 1)
        q = 0
        for k in range(3):
            if xi > k:
                if xi > k + 2:
                    continue
                if xi == 7:
                    break
                q += k + 1
            q += 2 * k
        want.append(0 if xi == 8 else s * 1000 + 10 + q * 100000)
    np.testing.assert_array_equal(out, want)


def test_a_long_hinted_loop_stays_a_loop() -> None:
    """`#pragma unroll` over more operations than the unroll limit is a hint nvcc may ignore too:
    the loop stays (the code is small), and an array it indexes goes to local memory."""
    src = _src("""
#include "wave.hpp"
[[wave::kernel]] [[wave::workgroup(32)]] void big(float* x) {
    uint32_t i = wave::global_id(0);
    float t[2] = {};
#pragma unroll
    for (int k = 0; k < 5000; ++k) t[k % 2] += 1.0f;
    x[i] = t[0] - t[1];
}
""")
    prog = wg.compile(src, lang="cpp")
    assert len(prog.kernels[0].instructions) < 200 and local_rows(prog) > 0
    x = np.ones(32, np.float32)
    load_kernels(src, lang="cpp").big(x, grid=1)
    np.testing.assert_array_equal(x, np.zeros(32, np.float32))


# ---- every element type, in registers and in local memory -------------------------------------
TYPES = [
    ("int32_t", np.int32, "3"),
    ("uint32_t", np.uint32, "3u"),
    ("float", np.float32, "1.5f"),
    ("double", np.float64, "0.125"),
    ("half", np.float16, "half(0.5f)"),
]


@pytest.mark.parametrize(("cty", "dtype", "lit"), TYPES)
@pytest.mark.parametrize("dynamic", [False, True])
def test_every_element_type(cty: str, dtype: type, lit: str, dynamic: bool) -> None:
    j = "j" if dynamic else "1"
    src = _src(f"""
#include "wave.hpp"
[[wave::kernel]] [[wave::workgroup(8)]] void el({cty}* out, const uint32_t* sel) {{
    uint32_t i = wave::global_id(0);
    uint32_t j = sel[i];
    {cty} t[3] = {{{lit}}};
    bool f[3] = {{}};
    t[{j}] = t[0] + t[0];
    f[{j}] = true;
    out[i * 3 + 0] = t[0];
    out[i * 3 + 1] = f[1] ? t[1] : {cty}(0);
    out[i * 3 + 2] = t[2];
}}
""")
    prog = wg.compile(src, lang="cpp")
    assert (local_rows(prog) > 0) == dynamic
    sel = np.ones(8, np.uint32)
    out = np.zeros(24, dtype)
    load_kernels(src, lang="cpp").el(out, sel, grid=1)
    v = dtype(eval(lit.replace("half(", "(").replace("f", "").replace("u", "")))
    np.testing.assert_array_equal(out.reshape(8, 3), np.tile([v, v + v, 0], (8, 1)).astype(dtype))


# ---- hypothesis: random mixes of constant and run-time indices against NumPy -------------------
N = 6


@st.composite
def programs(draw: st.DrawFn) -> list[tuple[str, int, int, int]]:
    """Statements t[dst] = t[src] * c + x[i] (or +=); each index a constant or (i + k) % N."""
    ops = []
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["=", "+="]))
        dst = draw(st.integers(-1, N - 1))  # -1: the run-time index (i + 1) % N
        src = draw(st.integers(-1, N - 1))
        c = draw(st.integers(-3, 3))
        ops.append((kind, dst, src, c))
    return ops


def _index(k: int, shift: int) -> str:
    return f"(i + {shift}u) % {N}u" if k < 0 else str(k)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_random_index_mixes_match_numpy(ops: list[tuple[str, int, int, int]]) -> None:
    lines = [f"    t[{_index(d, 1)}] {kind} t[{_index(s, 2)}] * {c}.0f + x[i];" for kind, d, s, c in ops]
    src = (
        '#include "wave.hpp"\n[[wave::kernel]] [[wave::workgroup(16)]] void mix(const float* x, float* out) {\n'
        "    uint32_t i = wave::global_id(0);\n"
        f"    float t[{N}] = {{1.0f, 2.0f, 3.0f}};\n" + "\n".join(lines) + "\n"
        f"#pragma unroll\n    for (int k = 0; k < {N}; ++k) out[i * {N} + k] = t[k];\n}}\n"
    )
    x = np.linspace(-2, 3, 16).astype(np.float32)
    want = np.zeros((16, N), np.float32)
    for i in range(16):
        t = np.array([1, 2, 3] + [0] * (N - 3), np.float32)
        for kind, d, s, c in ops:
            di = (i + 1) % N if d < 0 else d
            si = (i + 2) % N if s < 0 else s
            v = np.float32(t[si] * np.float32(c)) + x[i]
            t[di] = np.float32(t[di] + v) if kind == "+=" else v
        want[i] = t
    prog = wg.compile(src, lang="cpp")
    assert (local_rows(prog) > 0) == any(d < 0 or s < 0 for _, d, s, _ in ops)
    for engine in ENGINES:
        out = np.zeros(16 * N, np.float32)
        load_kernels(src, lang="cpp").mix(x, out, grid=1, engine=engine)
        np.testing.assert_array_equal(out.reshape(16, N), want)


# ---- g++ accepts every kernel of this file -----------------------------------------------------
@pytest.mark.skipif(GXX is None, reason="g++ is not installed")
def test_gxx_accepts_every_kernel(tmp_path: Path) -> None:
    flags = [GXX, "-std=c++20", "-fsyntax-only", "-Werror", "-Wno-attributes=wave::", f"-I{include_dir()}"]
    flags += ["-Wno-unknown-pragmas"]
    texts = [*SOURCES]
    for cty, _, lit in TYPES:  # the element-type kernels, as the test above writes them
        texts.append(
            f'#include "wave.hpp"\nvoid f() {{ {cty} t[3] = {{{lit}}}; bool g[3] = {{}}; (void)t; (void)g; }}\n'
        )
    for k, text in enumerate(texts):
        f = tmp_path / f"k{k}.cpp"
        f.write_text(text)
        r = subprocess.run([*flags, str(f)], capture_output=True, text=True)
        assert r.returncode == 0, f"{text}\n{r.stderr}"
