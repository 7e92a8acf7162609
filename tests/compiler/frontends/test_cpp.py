"""The C++ frontend (issue 13): diagnostics with spans and carets, C++'s own conversions (checked
against g++ where it is installed), helpers and templates inlined, every builtin's spelling,
wave.hpp accepted by g++ for every C++ kernel, and the Rust toolchain's vector_add.cpp."""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import wavegpu as wg
from wavegpu.compiler import builtins, hir
from wavegpu.compiler.frontends import FRONTENDS
from wavegpu.compiler.frontends.cpp import CPP, SPELLINGS, include_dir
from wavegpu.errors import CompileError
from wavegpu.runtime.sources import load_kernels

ROOT = Path(__file__).resolve().parents[3]
SUPPORT = include_dir()
EXAMPLES = sorted((ROOT / "examples" / "languages" / "cpp").glob("*.cpp"))
COMPAT = ROOT / "tests" / "compiler" / "languages" / "compat" / "vector_add.cpp"
GXX = shutil.which("g++")


def _error(src: str) -> str:
    with pytest.raises(CompileError) as e:
        CPP.parse(src, "k.cpp")
    return str(e.value)


def _diag(src: str, where: str, message: str, caret: str) -> None:
    """The first diagnostic is at `where` (line:col), says `message`, shows the source line and
    puts the caret (`caret`, with its tildes) under the column."""
    text = _error(src)
    lines = text.splitlines()
    assert lines[0].startswith(f"k.cpp:{where}: error: "), text
    assert message in lines[0], text
    row, col = (int(x) for x in where.split(":"))
    original = src.splitlines()[row - 1]
    assert lines[1].endswith(original), text
    prefix = len(lines[1]) - len(original)
    assert lines[2] == " " * (prefix + col - 1) + caret, text


KERNEL = "[[wave::kernel]] void k(const float* a, float* out, uint32_t n) {{\n{}\n}}\n"

DIAGNOSTICS = [
    # (body or whole file, line:col, message, caret)
    ("    out[0] = 1 +;", "2:16", "syntax error", "^"),
    ("    a[0] = 1.0f;", "2:5", "points to const", "^~~~"),
    ("    float* p = new float[4];", "2:16", "heap allocation", "^~~~~~~~~~~~"),
    ("    float* p = (float*)malloc(16);", "2:24", "heap allocation", "^~~~~~~~~~"),
    ("    out[0] = *n;", "2:14", "a dereference reads an element of a 1-D array", "^~"),
    ("    out[0] = (a + 1)[0];", "2:14", "pointer arithmetic", "^~~~~~~"),
    ("    goto end;\nend:\n    return;", "2:5", "goto", "^~~~~~~~~"),
    ("    uint32_t h = n * 2654435761;", "2:22", "write 2654435761u", "^~~~~~~~~~"),
    ("    out[0] = std::min(n, 3);", "2:14", "one type", "^~~~~~~~~~~~~~"),
    ("    out[0] = wave::exp(1.0);", "2:24", "exp takes float, not double", "^~~"),
    ("    out[0] = wave::sqrt(n);", "2:25", "ambiguous", "^"),
    ("    out[0] = m;", "2:14", "'m' is not declared", "^"),
    ("    uint8_t x = 3;", "2:5", "storage-only", "^~~~~~~"),
    ("    switch (n) { case 1: break; case 1: break; }", "2:38", "case 1 appears twice", "^"),
    ("    switch (1.5f) { default: break; }", "2:13", "switch needs an integer", "^~~~"),
    ("    __shared__ float s[n];", "2:24", "constant", "^"),
    ("    break;", "2:5", "outside a loop", "^~~~~~"),
    ("    if (n < 3u || n > (4u)) out[0] = 1.0f;", "2:9", "parenthesize the comparisons", "^" + "~" * 17),
    ("    constexpr float x = a[0];", "2:25", "constexpr needs a constant expression", "^~~~"),
    ("    uint32_t n = 3u;", "2:14", "'n' is already declared in this scope", "^"),
    ("    uint32_t u{-1};", "2:16", "narrowing conversion from int32_t to uint32_t", "^~"),
    ("    float g{16777217};", "2:13", "narrowing conversion from int32_t to float", "^~~~~~~~"),
    ("    int32_t e{n};", "2:15", "narrowing conversion from uint32_t to int32_t", "^"),
    ("    size_t i = 0;", "2:5", "size_t", "^~~~~~"),
    ("    float s = 0.0f;\n    auto f = [=](float x) { return s + x; };", "3:15", "capturing by copy", "^"),
    ("    out[0] = a.size();", "2:14", "member", "^~~~~~"),
    ("    out[0] = 1.0f;\n    return 1;", "3:12", "return no value", "^"),
    ("    uint32_t x = wave::thread_id(3);", "2:34", "axis", "^"),
    ("    wave::fence(2);", "2:17", "wave::scope", "^"),
]


@pytest.mark.parametrize("body,where,message,caret", DIAGNOSTICS, ids=[d[2] for d in DIAGNOSTICS])
def test_diagnostics_name_the_place(body: str, where: str, message: str, caret: str) -> None:
    _diag(KERNEL.format(body), where, message, caret)


FILE_DIAGNOSTICS = [
    (
        "uint32_t f(uint32_t x) { return x == 0 ? 0u : f(x - 1); }\n"
        "[[wave::kernel]] void k(uint32_t* out) {\n    out[0] = f(3u);\n}\n",
        "1:47",
        "recursion is not supported (no call stack on the GPU; helpers are inlined): k -> f (line 3) -> f (line 1)",
        "^",
    ),
    (
        "struct S { virtual float g(); };\n[[wave::kernel]] void k(float* out) { out[0] = 1.0f; }\n",
        "1:1",
        "virtual calls",
        "^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~",
    ),
    ("[[wave::kernel]] int k(float* out) { return 0; }\n", "1:18", "returns void", "^~~"),
    (
        "[[wave::kernel]] void k(int32_t* o) {\n    o[0] = later(1);\n}\nint32_t later(int32_t x) { return x; }\n",
        "2:12",
        "'later' is used before its declaration",
        "^~~~~",
    ),
    (  # a function-like macro (an object-like #define at file scope is a constant: test_cpp_idioms.py)
        "#define SQ(x) ((x) * (x))\n[[wave::kernel]] void k(float* out) { out[0] = 1.0f; }\n",
        "1:1",
        "macros",
        "^~~~~~~~~~~~~~~~~~~~~~~~~",
    ),
    (
        "[[wave::kernel]] void k(float* out) {\n    wave::atomic_min(&out[0], 1.0f);\n}\n",
        "2:5",
        "atomic_min on float arrays is not supported",
        "^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~",
    ),
    (
        "template <typename T> T add(T a, T b) { return a + b; }\n"
        "[[wave::kernel]] void k(float* out, uint32_t n) {\n    out[0] = add(1.0f, n);\n}\n",
        "3:24",
        "deduced as both float and uint32_t",
        "^",
    ),
]


@pytest.mark.parametrize("src,where,message,caret", FILE_DIAGNOSTICS, ids=[d[2][:30] for d in FILE_DIAGNOSTICS])
def test_file_diagnostics(src: str, where: str, message: str, caret: str) -> None:
    _diag(src, where, message, caret)


def test_no_kernel_and_macro_markers() -> None:
    assert "no kernel found" in _error("void f(float* a) { a[0] = 1.0f; }\n")
    # __kernel / __global__ / __shared__ are blanked for the grammar but keep every column
    fns = CPP.parse("__global__ void g(float* a) {\n    __shared__ float s[4];\n    a[0] = s[0];\n}\n", "k.cu")
    assert fns[0].name == "g" and [la.count for la in fns[0].locals] == [4]
    src = 'extern "C" __global__ void k(float* a) { a[0] = 1.0f; }\nextern "C" {\n[[wave::kernel]] void k2(float* a) {}\n}\n'
    assert [f.name for f in CPP.parse(src, "k.cu")] == ["k", "k2"]
    text = _error("__kernel void g(float* a) {\n    a[0] = q;\n}\n")
    assert text.startswith("k.cpp:2:12: error: 'q' is not declared") or "2:12" in text.splitlines()[0]


# ---- C++'s conversions -----------------------------------------------------------------------
def _run(src: str, **arrays: np.ndarray) -> dict[str, np.ndarray]:
    kernels = load_kernels(src, lang="cpp", opt=0)
    name = next(f.name for f in CPP.parse(src, "<t>"))
    kernels[name](**arrays, grid=(1,), workgroup=(1,))
    return arrays


def test_usual_arithmetic_conversions() -> None:
    src = """
[[wave::kernel]] void conv(int32_t* o, float* f, double* d) {
    int32_t m = -1;
    uint32_t one = 1u;
    o[0] = m < one;             // -1 converts to 4294967295u: false
    o[1] = -7 / 2;              // truncates: -3
    o[2] = -7 % 2;              // the dividend's sign: -1
    o[3] = static_cast<int32_t>(m / one);  // 4294967295u / 1u
    o[4] = (uint8_t)300 + static_cast<int8_t>(200);  // the low bits, then int: 44 + -56
    f[0] = 0.1f * 3;            // float
    d[0] = 0.1f * 0.1;          // float * double: computed in double
    f[1] = 1.0f / 3.0;          // computed in double, converted on assignment
    o[5] = static_cast<int32_t>(-2.7f);  // toward zero
    o[6] = true + true;         // bool promotes to int
}
"""
    out = _run(src, o=np.zeros(8, np.int32), f=np.zeros(2, np.float32), d=np.zeros(1, np.float64))
    assert out["o"][:7].tolist() == [0, -3, -1, -1, -12, -2, 2]
    assert out["f"][0] == np.float32(0.1) * np.float32(3)
    assert out["d"][0] == float(np.float32(0.1)) * 0.1
    assert out["f"][1] == np.float32(1.0 / 3.0)


def test_float_literal_is_double_unless_suffixed() -> None:
    """`x * 0.1` computes in double then rounds once; `x * 0.1f` rounds 0.1 to float first."""
    src = """
[[wave::kernel]] void lit(const float* x, float* a, float* b) {
    a[0] = x[0] * 0.1;
    b[0] = x[0] * 0.1f;
}
"""
    x = np.array([9.0], np.float32)
    out = _run(src, x=x, a=np.zeros(1, np.float32), b=np.zeros(1, np.float32))
    assert out["a"][0] == np.float32(9.0 * 0.1)
    assert out["b"][0] == np.float32(9.0) * np.float32(0.1)
    assert out["a"][0] != out["b"][0]  # 0.9 vs 0.90000004


def test_helpers_templates_loops_and_shared_2d() -> None:
    src = """
#include "wave.hpp"
using namespace wave;
constexpr uint32_t N = 4;
template <typename T> T square(T x) { return x * x; }
template <typename T, uint32_t K> T scaled(T x) { return x * K; }
uint32_t clamp_to(uint32_t v, uint32_t hi) {
    if (v > hi) {
        return hi;
    }
    return v;
}
void put(uint32_t* o, uint32_t i, uint32_t v) { o[i] = v; }
[[wave::kernel]] void k(uint32_t* o) {
    __shared__ uint32_t t[N][N + 1];
    uint32_t s = 0;
    for (uint32_t i = 0, j = 10; i < 10; i++, j--) {
        if (i == 3) continue;
        if (j == 2) break;
        s += i;
    }
    o[0] = s;                              // 0+1+2+4+5+6+7 = 25
    o[1] = square(7u) + scaled<uint32_t, 3>(5u);   // 49 + 15
    o[2] = clamp_to(9u, 5u) * 10 + clamp_to(2u, 5u);  // 52
    put(o, 3, 77u);
    int32_t q = 0;
    do { q++; if (q == 2) continue; } while (q < 5);
    o[4] = q;
    t[2][3] = 5u;
    o[5] = t[2][3] + N;
    uint32_t w = 0;
    while (w < 100u) { w = w * 2 + 1; }
    o[6] = w;                              // 127
    int32_t c = 5;
    o[7] = c > 3 ? c-- : 0;                // 5, then c == 4
    o[8] = c;
    o[9] = lane_id() == 0u && wave_width() >= 1u;
}
"""
    out = _run(src, o=np.zeros(10, np.uint32))
    assert out["o"].tolist() == [25, 64, 52, 77, 5, 9, 127, 5, 4, 1]


# random integer expressions: the emulator against g++ (native, -fwrapv: wrapping is what we define)
VARS = {"a": "int32_t", "b": "int32_t", "c": "int32_t", "u": "uint32_t", "v": "uint32_t", "w": "uint32_t"}
VALUES = {"a": -7, "b": 2147483647, "c": -2147483648, "u": 3, "v": 4294967295, "w": 2654435761}
LITERALS = ["7", "7u", "0xFFFFFFFF", "-3", "2147483647", "0x80000000", "1", "0"]


def _expr(rng: random.Random, depth: int) -> str:
    if depth == 0 or rng.random() < 0.2:
        return rng.choice([*VARS, *LITERALS])
    x, y = _expr(rng, depth - 1), _expr(rng, depth - 1)
    k = rng.randrange(9)
    if k < 3:
        return f"({x} {rng.choice(['+', '-', '*', '&', '|', '^'])} {y})"
    if k == 3:
        return f"({x} {rng.choice(['/', '%'])} (({y} & 255) | 1))"
    if k == 4:
        return f"({x} {rng.choice(['<<', '>>'])} ({y} & 31))"
    if k == 5:
        return f"({x} {rng.choice(['<', '<=', '>', '>=', '==', '!='])} {y})"
    if k == 6:
        return f"({rng.choice(['-', '~', '!'])}({x}))"
    if k == 7:
        return f"static_cast<{rng.choice(['int32_t', 'uint32_t'])}>({x})"
    return f"({x} {rng.choice(['&&', '||'])} {y} ? {x} : {y})"


@pytest.mark.skipif(GXX is None, reason="g++ is not installed: C++'s own answers come from it")
def test_integer_expressions_match_gxx(tmp_path: Path) -> None:
    rng = random.Random(1313)
    exprs = [_expr(rng, 4) for _ in range(120)]
    decls = "\n".join(
        f"    {t} {n} = {'xi' if t == 'int32_t' else 'xu'}[{i % 3}];" for i, (n, t) in enumerate(VARS.items())
    )
    body = decls + "\n" + "\n".join(f"    out[{i}] = static_cast<uint32_t>({e});" for i, e in enumerate(exprs))
    kernel = f"[[wave::kernel]] void exprs(const int32_t* xi, const uint32_t* xu, uint32_t* out) {{\n{body}\n}}\n"
    xi = np.array([VALUES["a"], VALUES["b"], VALUES["c"]], np.int32)
    xu = np.array([VALUES["u"], VALUES["v"], VALUES["w"]], np.uint32)
    out = np.zeros(len(exprs), np.uint32)
    load_kernels(kernel, lang="cpp", opt=2)["exprs"](xi, xu, out, grid=(1,), workgroup=(1,))
    native = (
        "#include <cstdint>\n#include <cstdio>\n"
        + kernel.replace("[[wave::kernel]] ", "")
        + "int main() {\n"
        + f"    int32_t xi[3] = {{{VALUES['a']}, {VALUES['b']}, -2147483647 - 1}};\n"
        + f"    uint32_t xu[3] = {{{VALUES['u']}u, {VALUES['v']}u, {VALUES['w']}u}};\n"
        + f"    uint32_t out[{len(exprs)}];\n    exprs(xi, xu, out);\n"
        + f'    for (int i = 0; i < {len(exprs)}; i++) printf("%u\\n", out[i]);\n}}\n'
    )
    (tmp_path / "e.cpp").write_text(native)
    subprocess.run(
        [GXX, "-std=c++20", "-O0", "-fwrapv", "-w", "-o", str(tmp_path / "e"), str(tmp_path / "e.cpp")], check=True
    )
    want = [int(x) for x in subprocess.run([str(tmp_path / "e")], capture_output=True, text=True).stdout.split()]
    bad = [(e, int(g), w) for e, g, w in zip(exprs, out, want) if int(g) != w]
    assert not bad, bad[:5]


# ---- builtins, spellings, interfaces -------------------------------------------------------------
def test_spellings_cover_every_builtin() -> None:
    assert set(SPELLINGS) == set(builtins.ROWS), set(SPELLINGS) ^ set(builtins.ROWS)


def test_every_builtin_compiles() -> None:
    src = """
#include "wave.hpp"
[[wave::kernel]] void all(float* f, uint32_t* u, int32_t* s) {
    auto loc = wave::local_array<float, 64>();
    uint32_t t = wave::thread_id(0) + wave::workgroup_id(1) + wave::workgroup_size(2) + wave::grid_size(0)
        + wave::global_id(0) + wave::global_size(0) + wave::lane_id() + wave::wave_id() + wave::wave_width();
    loc[t % 64] = 1.0f;
    wave::barrier();
    wave::fence(wave::scope::workgroup);
    wave::fence();
    u[0] = wave::atomic_add(&u[1], 1u) + wave::atomic_sub(u, 2, 1u) + wave::atomic_min(&u[1], 3u)
        + wave::atomic_max(&u[1], 3u) + wave::atomic_and(&u[1], 3u) + wave::atomic_or(&u[1], 3u)
        + wave::atomic_xor(&u[1], 3u) + wave::atomic_exchange(&u[1], 3u) + wave::atomic_cas(&u[1], 3u, 4u);
    f[0] = wave::atomic_add(&f[1], 1.0f) + wave::atomic_exchange(&f[1], 2.0f) + wave::atomic_cas(f, 1, 1.0f, 2.0f);
    s[0] = wave::wave_reduce_add(s[1]) + wave::wave_reduce_min(s[1]) + wave::wave_reduce_max(s[1])
        + wave::wave_reduce_and(s[1]) + wave::wave_reduce_or(s[1]) + wave::wave_prefix_add(s[1])
        + wave::wave_shuffle(s[1], 0u) + wave::wave_shuffle_up(s[1], 1u) + wave::wave_shuffle_down(s[1], 1u)
        + wave::wave_shuffle_xor(s[1], 1u) + wave::wave_broadcast(s[1], 0u);
    u[2] = wave::wave_ballot(t > 3u) + wave::wave_any(t > 3u) + wave::wave_all(t > 3u);
    float x = f[2];
    f[3] = wave::sqrt(x) + wave::rsqrt(x) + wave::sin(x) + wave::cos(x) + wave::exp(x) + wave::exp2(x)
        + wave::log(x) + wave::log2(x) + wave::floor(x) + wave::ceil(x) + wave::fma(x, x, x) + wave::abs(x)
        + wave::min(x, 1.0f) + wave::max(x, 1.0f) + sqrtf(x) + fabsf(x) + fminf(x, 2.0f) + wave::pi;
    s[2] = static_cast<int32_t>(x) + (int32_t)x + int32_t(x) + wave::abs(s[3]);
    f[4] = static_cast<float>(static_cast<half>(x)) + static_cast<float>(static_cast<double>(x)) + loc[0];
    f[5] = powf(x, 2.0f) + __builtin_powif(x, 3) + roundf(x) + rintf(x) + truncf(x) + wave::sign(x)
        + wave::signum(x) + wave::round_half_up(x) + wave::min_first(x, 1.0f) + wave::max_first(x, 1.0f)
        + wave::clamp_keep_nan(x, 0.0f, 1.0f) + (std::isnan(x) ? 1.0f : 0.0f);
    s[4] = wave::clamp(s[1], 0, 9) + __builtin_popcount(u[3]) + __builtin_clz(u[3]) + __builtin_ctz(u[3]);
}
"""
    fn = CPP.parse(src, "all.cpp")[0]
    called = {e.name for e in _calls(fn.body)}
    want = {n for n, b in builtins.ROWS.items() if b.kind not in (builtins.Kind.CAST, builtins.Kind.LOCAL)}
    assert want <= called, want - called
    assert [la.count for la in fn.locals] == [64]
    wg.compile(src, lang="cpp")


def _calls(body: tuple[hir.Stmt, ...]):
    def exprs(x: object):
        if isinstance(x, hir.Expr):
            yield x
        if isinstance(x, hir.Expr | hir.Stmt):
            for v in vars(x).values():
                if isinstance(v, tuple):
                    for y in v:
                        yield from exprs(y)
                elif isinstance(v, hir.Expr | hir.Stmt):
                    yield from exprs(v)

    for s in body:
        for e in exprs(s):
            if isinstance(e, hir.Call):
                yield e


def test_registered_with_suffixes() -> None:
    assert FRONTENDS["cpp"] is CPP
    assert {".cpp", ".cc", ".cu", ".hpp"} <= set(CPP.suffixes)


def test_workgroup_attribute_is_recorded() -> None:
    src = "[[wave::kernel, wave::workgroup(16, 16)]] void k(float* a) { a[0] = 1.0f; }\n"
    assert CPP.parse(src, "k.cpp")[0].options == {"workgroup": (16, 16)}
    prog = wg.compile(src, lang="cpp")
    assert tuple(prog.kernels[0].workgroup_size) == (16, 16, 1)


def test_compat_vector_add_compiles_unchanged_and_runs() -> None:
    """The Rust toolchain's vector_add.cpp: `__kernel`, no include, a bare thread_id() (the local
    id), run as its CI does with the 256-thread workgroup."""
    n = 200
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal(256).astype(np.float32), rng.standard_normal(256).astype(np.float32)
    out = np.full(256, -1.0, np.float32)
    for opt in (0, 2):
        out[:] = -1.0
        load_kernels(COMPAT, opt=opt)["vector_add"](a, b, out, np.uint32(n), grid=(1,), workgroup=(256,))
        assert np.array_equal(out[:n], a[:n] + b[:n])
        assert (out[n:] == -1.0).all()


def test_cli_compile_and_run(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from wavegpu.cli import main

    runner = CliRunner()
    r = runner.invoke(main, ["compile", str(COMPAT), "-o", str(tmp_path / "v.wbin")])
    assert r.exit_code == 0, r.output
    assert wg.load(str(tmp_path / "v.wbin")).kernels[0].name == "vector_add"
    np.save(tmp_path / "a.npy", np.arange(8, dtype=np.float32))
    r = runner.invoke(
        main,
        [
            "run",
            str(COMPAT),
            "--grid",
            "1",
            f"a={tmp_path / 'a.npy'}",
            "b=iota:8",
            "out=zeros:8",
            "n=8",
            "--print",
            "out",
        ],
    )
    assert r.exit_code == 0, r.output
    assert "14" in r.output
    bad = tmp_path / "bad.cpp"
    bad.write_text("__kernel void k(float* a) {\n    a[0] = 1 +;\n}\n")
    r = runner.invoke(main, ["compile", str(bad), "-o", str(tmp_path / "b.wbin")])
    assert r.exit_code != 0 and "bad.cpp:2:14: error: syntax error" in r.output
    assert "Traceback" not in r.output


# ---- g++ accepts every C++ kernel with wave.hpp -----------------------------------------------
def _gxx_sources() -> list[Path]:
    return [*EXAMPLES, COMPAT, NATIVE]


@pytest.mark.skipif(GXX is None, reason="g++ is not installed")
def test_gxx_accepts_every_kernel() -> None:
    """`g++ -std=c++20 -fsyntax-only` with wave.hpp: [[wave::kernel]] is an attribute g++ does not
    know (-Wno-attributes=wave::); the Rust toolchain's file has no include and calls the builtins
    unqualified (-include wave.hpp -DWAVE_USING_NAMESPACE)."""
    files = _gxx_sources()
    assert len(EXAMPLES) == 12
    flags = [GXX, "-std=c++20", "-fsyntax-only", "-Werror", "-Wno-attributes=wave::", f"-I{SUPPORT}"]
    for f in files:
        extra = ["-include", "wave.hpp", "-DWAVE_USING_NAMESPACE"] if f == COMPAT else []
        r = subprocess.run([*flags, *extra, str(f)], capture_output=True, text=True)
        assert r.returncode == 0, f"{f}:\n{r.stderr}"


@pytest.mark.skipif(GXX is None, reason="g++ is not installed")
def test_gxx_accepts_the_test_kernels(tmp_path: Path) -> None:
    """The kernels of this file that WAVE accepts, g++ accepts too (with wave.hpp and <cmath>)."""
    import inspect

    tests = [
        test_every_builtin_compiles,
        test_helpers_templates_loops_and_shared_2d,
        test_usual_arithmetic_conversions,
        test_float_literal_is_double_unless_suffixed,
    ]
    flags = [GXX, "-std=c++20", "-fsyntax-only", "-Werror", "-Wno-attributes=wave::", f"-I{SUPPORT}"]
    for t in tests:
        body = inspect.getsource(t).split('src = """', 1)[1].split('"""', 1)[0]
        assert CPP.parse(body, "t.cpp")
        p = tmp_path / f"{t.__name__}.cpp"
        p.write_text('#include <cmath>\n#include "wave.hpp"\n' + body)
        r = subprocess.run([*flags, str(p)], capture_output=True, text=True)
        assert r.returncode == 0, f"{t.__name__}:\n{r.stderr}"


FVARS = {"f": "float", "g": "float", "d": "double", "i": "int32_t", "u": "uint32_t", "h": "half"}
FLITERALS = ["0.1", "0.1f", "3", "2.5f", "7u", "1e10", "-0.75f"]


def _fexpr(rng: random.Random, depth: int) -> str:
    if depth == 0 or rng.random() < 0.2:
        return rng.choice([*FVARS, *FLITERALS])
    x, y = _fexpr(rng, depth - 1), _fexpr(rng, depth - 1)
    k = rng.randrange(6)
    if k < 3:
        return f"({x} {rng.choice(['+', '-', '*', '/'])} {y})"
    if k == 3:
        return f"static_cast<{rng.choice(['float', 'double'])}>({x})"
    if k == 4:
        return f"({x} {rng.choice(['<', '>=', '=='])} {y} ? {x} : {y})"
    return f"(-({x}))"


@pytest.mark.skipif(GXX is None, reason="g++ is not installed: C++'s own answers come from it")
def test_float_expressions_match_gxx(tmp_path: Path) -> None:
    """float, double, half and integer operands mixed as C++ mixes them (double literals, float
    literals, int to float conversions), every operation rounded once, as g++ computes them
    with SSE arithmetic and no contraction."""
    rng = random.Random(1717)
    exprs = [_fexpr(rng, 3) for _ in range(80)]
    body = (
        "    float f = fs[0], g = fs[1];\n    double d = ds[0];\n    int32_t i = is[0];\n    uint32_t u = us[0];\n"
        "    half h = hs[0];\n" + "\n".join(f"    out[{k}] = static_cast<double>({e});" for k, e in enumerate(exprs))
    )
    kernel = (
        "[[wave::kernel]] void fexprs(const float* fs, const double* ds, const int32_t* is, const uint32_t* us, "
        "const half* hs, "
        f"double* out) {{\n{body}\n}}\n"
    )
    fs = np.array([1.1, -3.7], np.float32)
    ds = np.array([0.3])
    is_ = np.array([-5], np.int32)
    us = np.array([4000000000], np.uint32)
    out = np.zeros(len(exprs))
    hs = np.array([2.375], np.float16)
    load_kernels(kernel, lang="cpp", opt=2)["fexprs"](fs, ds, is_, us, hs, out, grid=(1,), workgroup=(1,))
    native = (
        "#include <cstdint>\n#include <cstdio>\n#include <cstring>\nusing half = _Float16;\n"
        + kernel.replace("[[wave::kernel]] ", "")
        + "int main() {\n    float fs[2] = {1.1f, -3.7f};\n    double ds[1] = {0.3};\n"
        + "    int32_t is[1] = {-5};\n    uint32_t us[1] = {4000000000u};\n"
        + "    half hs[1] = {static_cast<half>(2.375f)};\n"
        + f"    double out[{len(exprs)}];\n    fexprs(fs, ds, is, us, hs, out);\n"
        + f"    for (int k = 0; k < {len(exprs)}; k++) {{ unsigned long long b; memcpy(&b, &out[k], 8); "
        + 'printf("%llu\\n", b); }\n}\n'
    )
    (tmp_path / "f.cpp").write_text(native)
    subprocess.run(
        [GXX, "-std=c++20", "-O0", "-ffp-contract=off", "-w", "-o", str(tmp_path / "f"), str(tmp_path / "f.cpp")],
        check=True,
    )
    got = out.view(np.uint64).tolist()
    want = [int(x) for x in subprocess.run([str(tmp_path / "f")], capture_output=True, text=True).stdout.split()]
    nan = lambda b: np.isnan(np.array([b], np.uint64).view(np.float64)[0])  # noqa: E731
    bad = [(e, g, w) for e, g, w in zip(exprs, got, want) if g != w and not (nan(g) and nan(w))]
    assert not bad, [(e, np.array([g, w], np.uint64).view(np.float64).tolist()) for e, g, w in bad[:5]]


def test_every_independent_error_is_reported_once() -> None:
    """A refused statement is skipped, and the names it declares say nothing more where used."""
    src = (
        "[[wave::kernel]] void k(uint32_t* a, uint32_t n) {\n"
        "    uint32_t x = q + 1;\n"
        "    a[0] = x;\n"
        "    a[1] = 2654435761;\n"
        "    for (uint32_t i = 0; i < n; ++i) {\n"
        "        a[i] = bogus;\n"
        "    }\n"
        "    a[2] = x * 2u;\n"
        "}\n"
        "[[wave::kernel]] void k2(float* b) {\n"
        "    b[0] = b;\n"
        "}\n"
    )
    with pytest.raises(CompileError) as e:
        CPP.parse(src, "k.cpp")
    places = [(d.span.line, d.span.col) for d in e.value.diagnostics if d.span]
    assert places == [(2, 18), (4, 12), (6, 16), (11, 12)], str(e.value)


def test_line_table_names_the_cpp_lines() -> None:
    path = ROOT / "examples" / "languages" / "cpp" / "control_flow.cpp"
    k = wg.compile(str(path), opt=2).kernels[0]
    lines = {(loc.file, loc.line) for loc in k.lines or () if loc}
    text = path.read_text().splitlines()
    assert lines and all(f.endswith("control_flow.cpp") for f, _ in lines)
    assert any("continue" in text[n - 1] or "acc +=" in text[n - 1] for _, n in lines)


NATIVE = Path(__file__).resolve().parent / "cpp" / "native.cpp"
NATIVE_MAIN = """#include <cstdio>
#include <cstring>
#include "native.cpp"
int main() {
    int32_t o[41] = {0};
    uint8_t bytes[5] = {1, 2, 9, 100, 250};
    int16_t shorts[4] = {0, 0, 12345, -32768};
    float f[5] = {0, 1.25f, 0, 0, 0};
    int32_t in[4] = {-123456789, 987654, 33333, 2147483647};
    native(o, bytes, shorts, f, in);
    for (int i = 0; i < 41; i++) printf("%d\\n", o[i]);
    for (int i = 0; i < 5; i++) printf("%d\\n", bytes[i]);
    for (int i = 0; i < 4; i++) printf("%d\\n", shorts[i]);
    for (int i = 0; i < 5; i++) { uint32_t b; memcpy(&b, &f[i], 4); printf("%u\\n", (unsigned)b); }
}
"""


@pytest.mark.skipif(GXX is None, reason="g++ is not installed: C++'s own answers come from it")
def test_statements_helpers_and_templates_match_gxx(tmp_path: Path) -> None:
    """Loops with continue/break (for, while with a postfix test, do), ++/--, compound
    assignments, shadowing, templates deduced and explicit, helpers with early returns (also
    from inside a loop), 8/16-bit stores and loads, casts and literals: WAVE's emulator gives
    what the same file compiled natively by g++ gives."""
    o = np.zeros(41, np.int32)
    b = np.array([1, 2, 9, 100, 250], np.uint8)
    s = np.array([0, 0, 12345, -32768], np.int16)
    f = np.array([0, 1.25, 0, 0, 0], np.float32)
    i = np.array([-123456789, 987654, 33333, 2147483647], np.int32)
    load_kernels(NATIVE, opt=2)["native"](o, b, s, f, i, grid=(1,), workgroup=(1,))
    got = [*o.tolist(), *b.tolist(), *s.tolist(), *f.view(np.uint32).tolist()]
    (tmp_path / "main.cpp").write_text(NATIVE_MAIN)
    cmd = [GXX, "-std=c++20", "-fwrapv", "-ffp-contract=off", "-Wno-attributes=wave::", f"-I{SUPPORT}"]
    subprocess.run([*cmd, f"-I{NATIVE.parent}", "-o", str(tmp_path / "m"), str(tmp_path / "main.cpp")], check=True)
    want = [int(x) for x in subprocess.run([str(tmp_path / "m")], capture_output=True, text=True).stdout.split()]
    assert got == want
    assert o[7] == 111 and o[27] == -1  # collatz_steps(27) and the return from inside its loop


def test_mutated_kernels_give_compile_errors_not_crashes() -> None:
    """Tokens of the corpus kernels replaced, deleted or inserted at random: every outcome is a
    kernel or a CompileError with a place, never another exception."""
    import re

    from wavegpu.compiler import Options, compile_functions

    tok = re.compile(r"[A-Za-z_]\w*|\d+(?:\.\d*)?[fu]?|::|<<|>>|[-+*/%&|^!<>=]=?|[()\[\]{};,?:.~]")
    texts = [p.read_text() for p in [*EXAMPLES, NATIVE]]
    extra = ["&", "*", "[&]", "new", "auto", "template", "goto", "->", '"s"', "'c'", "nullptr", "sizeof", "this"]
    pool = sorted({t for x in texts for t in tok.findall(x)} | set(extra))
    words = [p for p in pool if p[0].isalnum() or p[0] == "_"]
    rng = random.Random(2024)
    compiled = 0
    for _ in range(400):
        t = rng.choice(texts)
        for _ in range(rng.randint(1, 3)):
            m = rng.choice(list(tok.finditer(t)))
            k = rng.randrange(4)
            if k == 0:
                rep = ""
            elif k == 1:
                rep = m.group() + " " + rng.choice(pool)
            else:
                rep = rng.choice(words if m.group()[0].isalnum() or m.group()[0] == "_" else pool)
            t = t[: m.start()] + rep + t[m.end() :]
        try:
            fns = CPP.parse(t, "m.cpp")
        except CompileError as e:
            assert (e.diagnostics and all(d.span is not None for d in e.diagnostics[:1])) or "no kernel" in str(e)
            continue
        if compiled < 20:
            compiled += 1
            compile_functions(fns, Options(opt=1))
