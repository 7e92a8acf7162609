"""C++ idioms (issue 24 point 5), each run on the emulator's two engines against NumPy and each
file accepted by g++ with wave.hpp: `*(a + i)` and `*a`, references to elements and variables,
object-like `#define` constants, per-thread arrays with initialisers and range-based `for`, and
OpenCL's `__kernel`/`__global` signature; the idioms that stay refused say why, once."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from wavegpu.compiler.frontends.cpp import CPP, include_dir
from wavegpu.errors import CompileError
from wavegpu.runtime.sources import load_kernels

GXX = shutil.which("g++")
ENGINES = ("numpy", "compiled")

IDIOMS = """#include "wave.hpp"

#define N_OUT 4
#define SCALE 0.5f
#define OFFSET (N_OUT * 2)

__kernel void ocl(__global const float* a, __global float* out, uint32_t n) {
    uint32_t i = wave::global_id(0);
    if (i < n) out[i] = a[i] * SCALE + OFFSET;
}

[[wave::kernel]] void pointers(const float* a, float* out, uint32_t n) {
    uint32_t i = wave::global_id(0);
    if (i >= n) return;
    *(out + i) = *(a + i) + *a;  // out[i] = a[i] + a[0]
    float& r = out[i];
    r += 1.0f;
    const float& c = a[i];
    float acc = 0.0f;
    float& s = acc;
    s += c * 2.0f;
    r = r + acc;
    *(i + out) += 0.25f;
}

[[wave::kernel]] void lambdas(const float* a, float* out, uint32_t n) {
    uint32_t i = wave::global_id(0);
    if (i >= n) return;
    auto sq = [](float v) { return v * v; };
    auto half_of = [](int32_t k) -> float { return static_cast<float>(k) * 0.5f; };
    float acc = 0.0f;
    auto add = [&](float v) { acc += v; };
    auto clipped = [&](float v) {
        if (v > 4.0f) return 4.0f;
        return v;
    };
    add(sq(a[i]));
    add(half_of(static_cast<int32_t>(i)));
    out[i] = clipped(acc) + sq(2.0f);
}

[[wave::kernel]] void weights(const float* a, float* out, uint32_t n) {
    uint32_t i = wave::global_id(0);
    if (i >= n) return;
    float w[N_OUT] = {1.0f, 2.0f, 3.0f};  // the rest is zero
    float s = 0.0f;
    for (float v : w) s += v * a[i];
    out[i] = s;
}
"""


TEMPLATES = """#include "wave.hpp"

template <typename T, int K>
[[wave::kernel]] void scale(const T* a, T* out, uint32_t n) {
    uint32_t i = wave::global_id(0);
    if (i < n) out[i] = a[i] * static_cast<T>(K) + T(1);
}

template void scale<float, 3>(const float*, float*, uint32_t);
template void scale<int32_t, -2>(const int32_t*, int32_t*, uint32_t);
"""


@pytest.mark.parametrize("engine", ENGINES)
def test_template_kernels_are_their_explicit_instantiations(engine: str) -> None:
    """Each `template void k<...>(...);` is a kernel named k_<arguments>: scale_float_3, scale_int32_t_m2."""
    ks = load_kernels(TEMPLATES, lang="cpp")
    assert [f.name for f in CPP.parse(TEMPLATES, "t.cpp")] == ["scale_float_3", "scale_int32_t_m2"]
    n = 40
    a = np.linspace(-5, 5, n).astype(np.float32)
    out = np.zeros(n, np.float32)
    ks["scale_float_3"](a, out, np.uint32(n), grid=(1,), workgroup=(64,), engine=engine)
    np.testing.assert_array_equal(out, a * np.float32(3) + np.float32(1))
    ai = np.arange(-20, 20, dtype=np.int32)
    oi = np.zeros(n, np.int32)
    ks["scale_int32_t_m2"](ai, oi, np.uint32(n), grid=(1,), workgroup=(64,), engine=engine)
    np.testing.assert_array_equal(oi, ai * -2 + 1)


@pytest.mark.parametrize("engine", ENGINES)
def test_idioms_against_numpy(engine: str) -> None:
    rng = np.random.default_rng(5)
    n = 48
    a = rng.uniform(-3, 3, n).astype(np.float32)
    ks = load_kernels(IDIOMS, lang="cpp")
    out = np.zeros(n, np.float32)
    ks["ocl"](a, out, np.uint32(n), grid=(1,), workgroup=(64,), engine=engine)
    np.testing.assert_array_equal(out, a * np.float32(0.5) + np.float32(8))
    out = np.zeros(n, np.float32)
    ks["pointers"](a, out, np.uint32(n), grid=(1,), workgroup=(64,), engine=engine)
    want = ((a + a[0]) + np.float32(1)) + np.float32(2) * a + np.float32(0.25)
    np.testing.assert_array_equal(out, want)
    out = np.zeros(n, np.float32)
    ks["lambdas"](a, out, np.uint32(n), grid=(1,), workgroup=(64,), engine=engine)
    acc = a * a + np.arange(n, dtype=np.float32) * np.float32(0.5)
    np.testing.assert_array_equal(out, np.where(acc > 4, np.float32(4), acc) + np.float32(4))
    out = np.zeros(n, np.float32)
    ks["weights"](a, out, np.uint32(n), grid=(1,), workgroup=(64,), engine=engine)
    want = np.zeros(n, np.float32)
    for w in (1, 2, 3, 0):
        want += np.float32(w) * a
    np.testing.assert_array_equal(out, want)


def test_a_define_is_a_constant_of_its_type() -> None:
    src = "#define A 7u\n#define B (A * 2u)\n#define H 0.5\n[[wave::kernel]] void k(uint32_t* u, float* f) {\n"
    src += "    u[0] = B;\n    f[0] = H;\n}\n"
    u, f = np.zeros(1, np.uint32), np.zeros(1, np.float32)
    load_kernels(src, lang="cpp")["k"](u, f, grid=(1,), workgroup=(1,))
    assert u[0] == 14 and f[0] == 0.5


@pytest.mark.skipif(GXX is None, reason="g++ is not installed")
def test_gxx_accepts_the_idioms(tmp_path: Path) -> None:
    flags = ["-std=c++20", "-fsyntax-only", "-Werror", "-Wno-attributes=wave::", f"-I{include_dir()}"]
    for name, text in (("idioms.cpp", IDIOMS), ("templates.cpp", TEMPLATES)):
        p = tmp_path / name
        p.write_text(text)
        r = subprocess.run([GXX or "g++", *flags, str(p)], capture_output=True, text=True)
        assert r.returncode == 0, f"{name}:\n{r.stderr}"


def test_a_template_kernel_needs_an_instantiation() -> None:
    src = "template <typename T> [[wave::kernel]] void k(T* x) { x[0] = T(1); }\n"
    with pytest.raises(CompileError) as e:
        CPP.parse(src, "k.cpp")
    assert "compiled for its explicit instantiations" in str(e.value)


def _diagnostics(body: str, head: str = "") -> list[str]:
    src = f'#include "wave.hpp"\n{head}[[wave::kernel]] void k(const float* a, float* o, uint32_t n) {{\n{body}\n}}\n'
    with pytest.raises(CompileError) as e:
        CPP.parse(src, "k.cpp")
    return [f"{d.span.line}: {d.message}" for d in e.value.diagnostics if d.span is not None]


@pytest.mark.parametrize(
    ("body", "head", "message"),
    [
        # size_t is 64-bit in C++: taken as 32 bits, `i * stride` would wrap where C++ does not
        ("    size_t i = wave::global_id(0);\n    o[i] = a[i];", "", "size_t is 64-bit"),
        ("    float t[2] = {1.0f, 2.0f};\n    float& r = t[0];\n    o[0] = r;", "", "per-thread array's element"),
        ("    const float& c = a[0];\n    c = 1.0f;", "", "is a const reference"),
        ("    float& r = a[0];\n    o[0] = r;", "", "points to const"),
        ("    int32_t& r = o[0];\n    r = 1;", "", "a int32_t& cannot bind a float element"),
        ("    o[0] = *(a + 1.5f);", "", "a pointer offset is an integer, not float"),
        ("    o[0] = M;", "#define M 1 + 2\n", "a #define's value is substituted as text"),
        ("    long x = 3;\n    o[0] = x;", "", "64-bit integers"),
        ("    float k = 2.0f;\n    auto f = [=](float v) { return v * k; };\n    o[0] = f(1.0f);", "", "by copy"),
        (
            "    float k = 2.0f;\n    auto f = [](float v) { return v * k; };\n    o[0] = f(1.0f);",
            "",
            "'k' is not declared",
        ),
        ("    auto f = [](float v) { return v; };\n    auto g = f;\n    o[0] = g(1.0f);", "", "is a lambda: call it"),
        # assigning to a lambda (it was an AttributeError, found by pyright)
        ("    auto f = [](float v) { return v; };\n    f = 1.0f;", "", "'f' is a lambda, which cannot be assigned"),
        ("    auto f = [](float v) { return v; };\n    f++;", "", "'f' is a lambda, which cannot be assigned"),
    ],
)
def test_refused_idioms_are_reported_once(body: str, head: str, message: str) -> None:
    diags = _diagnostics(body, head)
    assert len(diags) == 1 and message in diags[0], diags


def test_a_by_value_parameter_written_through_a_reference_or_a_lambda_is_the_kernels_copy() -> None:
    """`uint32_t& r = n; r += 5u;` and `[&] { n += 2u; }` write the kernel's copy of the scalar n."""
    src = """#include "wave.hpp"
[[wave::kernel]] void k(float* o, uint32_t n, uint32_t m) {
    uint32_t& r = n;
    r += 5u;
    auto bump = [&]() { m += 2u; };
    bump();
    o[wave::thread_id(0)] = static_cast<float>(n * 100u + m);
}
"""
    o = np.zeros(4, np.float32)
    load_kernels(src, lang="cpp")["k"](o, np.uint32(3), np.uint32(4), grid=(1,), workgroup=(4,))
    np.testing.assert_array_equal(o, np.full(4, 806, np.float32))
