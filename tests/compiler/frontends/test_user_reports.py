"""Regressions from trying the Rust, C++ and TypeScript frontends as a new user would (issue 13):
each failure is a CompileError at file:line:col with a caret, never a Python exception or a
silently accepted kernel that each language's own compiler refuses."""

from __future__ import annotations

import numpy as np
import pytest

import wavegpu as wg
from wavegpu.compiler.frontends.treesitter import MAX_DEPTH
from wavegpu.errors import CompileError
from wavegpu.runtime.sources import load_kernels

KERNEL = {
    "cpp": '#include "wave.hpp"\n[[wave::kernel]] void k(const float* a, float* out, uint32_t n) {{\n{}\n}}\n',
    "rust": "use wave::*;\n#[wave::kernel]\npub fn k(a: &[f32], out: &mut [f32], n: u32) {{\n{}\n}}\n",
    "typescript": "/** @kernel */\nexport function k(a: Float32Array, out: Float32Array, n: u32): void {{\n{}\n}}\n",
}
SUFFIX = {"cpp": ".cpp", "rust": ".rs", "typescript": ".ts"}
BODY_LINE = {"cpp": 3, "rust": 4, "typescript": 3}
LANGS = tuple(KERNEL)


def _error(src: str, lang: str) -> str:
    with pytest.raises(CompileError) as e:
        wg.compile(src, lang=lang)
    return str(e.value)


def _first(text: str) -> tuple[int, int, str]:
    """line, col and message of the first diagnostic; asserts the caret line is there."""
    head = text.splitlines()[0]
    _, line, col, rest = head.split(":", 3)
    assert rest.startswith(" error: "), text
    return int(line), int(col), rest[len(" error: ") :]


# -- nesting beyond what the recursive stages take: a located error, not a RecursionError


def _nested_ifs(lang: str, m: int) -> str:
    head = "if n > 1 {" if lang == "rust" else "if (n > 1) {"
    return KERNEL[lang].format(head * m + "out[0] = a[0];" + "}" * m)


def _sum(lang: str, m: int) -> str:
    return KERNEL[lang].format("out[0] = " + " + ".join(["a[0]"] * m) + ";")


@pytest.mark.parametrize("lang", LANGS)
def test_deep_nesting_is_a_located_error(lang: str) -> None:
    for src in (
        _nested_ifs(lang, 400),
        _sum(lang, 3000),
        KERNEL[lang].format("{" * 1000 + "out[0] = a[0];" + "}" * 1000),
    ):
        text = _error(src, lang)
        line, col, msg = _first(text)
        assert line == BODY_LINE[lang] and col > 1, text
        assert f"nests more than {MAX_DEPTH} levels" in msg, text
        assert "^" in text.splitlines()[2], text


@pytest.mark.parametrize("lang", LANGS)
def test_nesting_within_the_limit_compiles_and_runs(lang: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / f"k{SUFFIX[lang]}"
    path.write_text(_sum(lang, 120))
    a = np.array([0.5, 0.0], np.float32)
    out = np.zeros(1, np.float32)
    load_kernels(path)["k"](a, out, 2, grid=1, workgroup=1)
    assert out[0] == 60.0
    wg.compile(_nested_ifs(lang, 45), lang=lang)


# -- two parameters or two kernels of one name: each language's compiler refuses them


@pytest.mark.parametrize(
    ("lang", "src", "col"),
    [
        ("cpp", '#include "wave.hpp"\n[[wave::kernel]] void k(float* a, float* a) { a[0] = 1; }\n', 35),
        ("rust", "use wave::*;\n#[wave::kernel]\npub fn k(a: &mut [f32], a: &mut [f32]) { a[0] = 1.0; }\n", 25),
        ("typescript", "/** @kernel */\nexport function k(a: Float32Array, a: Float32Array): void { a[0] = 1; }\n", 36),
    ],
)
def test_duplicate_parameter_is_refused(lang: str, src: str, col: int) -> None:
    text = _error(src, lang)
    line, c, msg = _first(text)
    assert (c, msg) == (col, f"parameter 'a' is defined twice (first on line {line})"), text


@pytest.mark.parametrize(
    ("lang", "src", "where"),
    [
        (
            "rust",
            "#[wave::kernel]\npub fn k(a: &mut [f32]) { a[0] = 1.0; }\npub fn k(a: &mut [f32]) { a[0] = 2.0; }\n",
            (3, 1),
        ),
        (
            "typescript",
            "/** @kernel */\nfunction k(a: Float32Array): void { a[0] = 1; }\n"
            "/** @kernel */\nfunction k(a: Float32Array): void { a[0] = 2; }\n",
            (4, 1),
        ),
    ],
)
def test_duplicate_kernel_is_refused(lang: str, src: str, where: tuple[int, int]) -> None:
    text = _error(src, lang)
    line, col, msg = _first(text)
    assert (line, col) == where and "'k' is defined twice (first on line 2)" in msg, text


def test_cpp_reserved_parameter_name_is_refused() -> None:
    # the runtime would fill `a__len` itself and refuse the caller's argument
    src = '#include "wave.hpp"\n[[wave::kernel]] void k(float* a, uint32_t a__len) { a[0] = a__len; }\n'
    text = _error(src, "cpp")
    assert _first(text)[:2] == (2, 35) and "reserved (hidden arguments)" in text, text


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("text", ["", "\n\n", "// nothing here\n"])
def test_file_without_kernel_names_its_place(lang: str, text: str) -> None:
    with pytest.raises(CompileError) as e:
        wg.compile(text, lang=lang)
    d = e.value.diagnostics[0]
    assert d.span is not None and (d.span.line, d.span.col) == (1, 1), str(e.value)
    assert "no kernel" in d.message


# -- Rust: a tail `if` inside an `else` block is a value (rustc accepts it)


def test_rust_nested_if_in_else_block_is_a_value(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "k.rs"
    path.write_text(
        KERNEL["rust"].format(
            "    let v = if n > 1 { a[0] } else { if n > 0 { a[1] } else { match n { 0 => a[2], _ => a[1] } } };\n"
            "    out[0] = v;"
        )
    )
    k = load_kernels(path)["k"]
    for n, want in ((0, 3.0), (1, 2.0), (2, 1.0)):
        out = np.zeros(1, np.float32)
        k(np.array([1, 2, 3], np.float32), out, n, grid=1, workgroup=1)
        assert out[0] == want


# -- TypeScript: % of a sum that may leave 32 bits is JavaScript's (exact, in f64); a divisor
# beyond 32 bits says which operand and how to narrow it


def test_typescript_remainder_of_a_wide_sum_is_javascripts() -> None:
    src = (
        "/** @kernel */\nexport function k(out: Int32Array, n: u32): void {\n  let b = 0;\n"
        "  for (let a = 0; a < 10; a++) {\n    b = (b + 1) | 0;\n    out[a] = (a + b) % 4;\n  }\n}\n"
    )
    out = np.zeros(10, np.int32)
    wg.load_kernels(src, lang="typescript").k(out, 0, grid=1)
    assert (out == (2 * np.arange(10) + 1) % 4).all()
    text = _error(src.replace("(a + b) % 4", "a % (a + b)"), "typescript")
    line, col, msg = _first(text)
    assert (line, col) == (6, 19), text
    assert "divisor of % may be any integer" in msg and "(a + b) | 0" in msg, text


# -- C++: std::min/std::max of floats are the standard's (b < a) ? b : a, as g++ computes them


def test_cpp_std_min_max_of_floats_follow_the_standard(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "mm.cpp"
    path.write_text(
        '#include "wave.hpp"\n#include <algorithm>\n'
        "[[wave::kernel]] void mm(const float* a, const float* b, float* o) {\n"
        "    uint32_t i = wave::global_id(0);\n"
        "    o[i * 4 + 0] = std::min(a[i], b[i]);\n"
        "    o[i * 4 + 1] = std::max(a[i], b[i]);\n"
        "    o[i * 4 + 2] = wave::min(a[i], b[i]);\n"  # the device's: the non-NaN operand
        "    o[i * 4 + 3] = fmaxf(a[i], b[i]);\n"
        "}\n"
    )
    nan = float("nan")
    a = np.array([nan, 1.0, -0.0, 0.0], np.float32)
    b = np.array([1.0, nan, 0.0, -0.0], np.float32)
    o = np.zeros(16, np.float32)
    load_kernels(path)["mm"](a, b, o, grid=1, workgroup=4)
    # what g++ gives (std::min(x, y) returns x unless y < x; std::max(x, y) returns x unless x < y)
    want = np.array(
        [[nan, nan, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0], [-0.0, -0.0, -0.0, 0.0], [0.0, 0.0, -0.0, 0.0]], np.float32
    )
    got = o.reshape(4, 4)
    assert got[:, :2].tobytes() == want[:, :2].tobytes(), got
    assert got[:2, 2:].tobytes() == want[:2, 2:].tobytes(), got


# -- C++: `(void)x;` marks a value unused (a CUDA port writes it); its effects still run


def test_cpp_cast_to_void_statement(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "v.cpp"
    path.write_text(
        '#include "wave.hpp"\n[[wave::kernel]] void k(const float* a, float* out, uint32_t* cnt, uint32_t n) {\n'
        "    uint32_t i = wave::global_id(0);\n    uint32_t old = wave::atomic_add(&cnt[0], 1u);\n"
        "    (void)old;\n    (void)n;\n    (void)wave::atomic_add(&cnt[1], 2u);\n    out[i] = a[i];\n}\n"
    )
    a = np.arange(4, dtype=np.float32)
    out = np.zeros(4, np.float32)
    cnt = np.zeros(2, np.uint32)
    load_kernels(path)["k"](a, out, cnt, 4, grid=1, workgroup=4)
    assert out.tolist() == a.tolist() and cnt.tolist() == [4, 8]
    text = _error('#include "wave.hpp"\n[[wave::kernel]] void k(float* out) {\n    (void)zz;\n}\n', "cpp")
    assert _first(text)[:2] == (3, 11) and "'zz' is not declared" in text, text


# -- Rust: `match i % 4 { ... }` as a value (an expression scrutinee without calls is read per arm)


def test_rust_match_value_on_an_expression(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "m.rs"
    path.write_text(
        "use wave::*;\n#[wave::kernel]\npub fn k(out: &mut [i32], n: u32) {\n    let i = global_id(0);\n"
        "    if i >= n { return; }\n    let acc = (i as i32) * 10 - 7;\n"
        "    let r = match i % 4 { 0 => acc, 1 | 2 => -acc, _ => acc / 2 };\n"
        "    out[i as usize] = r + match (i / 4) as i32 - 1 { -1 => 100, 0..=2 => 200, _ => 300 };\n}\n"
    )
    out = np.zeros(40, np.int32)
    load_kernels(path)["k"](out, 40, grid=1, workgroup=64)

    def model(i: int) -> int:
        acc = i * 10 - 7
        r = acc if i % 4 == 0 else -acc if i % 4 in (1, 2) else int(acc / 2)
        q = i // 4 - 1
        return r + (100 if q == -1 else 200 if 0 <= q <= 2 else 300)

    assert out.tolist() == [model(i) for i in range(40)]
    # a call (a wave operation, an atomic) is not read again under each arm's test: still refused
    src = "use wave::*;\n#[wave::kernel]\npub fn k(a: &[f32], out: &mut [i32]) {\n"
    src += "    let r = match wave_ballot(a[0] > 0.0) { 0 => 1, _ => 2 };\n    out[0] = r;\n}\n"
    text = _error(src, "rust")
    assert _first(text)[:2] == (4, 19) and "match a variable here" in text, text


# -- TypeScript: the grammar's misreading of `a < (-1) ? x : y` (tsc accepts it) is explained


def test_typescript_less_than_parenthesis_is_explained() -> None:
    src = (
        "/** @kernel */\nexport function k(ia: Int32Array, fo: Float32Array): void {\n"
        "  fo[1] = (ia[0] < (-1) ? 1 : 2);\n}\n"
    )
    text = _error(src, "typescript")
    line, col, msg = _first(text)
    assert (line, col) == (3, 20) and "start of type arguments" in msg and "a < -1" in msg, text
    wg.compile(src.replace("(-1)", "-1"), lang="typescript")


# -- C++: a kernel ported from CUDA hears what WAVE calls CUDA's names


def test_cpp_cuda_names_are_translated_in_errors() -> None:
    src = (
        '#include "wave.hpp"\n__global__ void k(const float* a, float* out, int* c, int n) {\n'
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    __syncthreads();\n    atomicAdd(&c[0], 1);\n"
        "    out[0] = a[0] + gridDim.y;\n}\n"
    )
    with pytest.raises(CompileError) as e:
        wg.compile(src, lang="cpp")
    got = [(d.span.line, d.span.col, d.message) for d in e.value.diagnostics if d.span is not None]
    assert got == [
        (3, 13, "CUDA's blockIdx.x is wave::workgroup_id(0) here"),
        (4, 5, "CUDA's __syncthreads is wave::barrier() here"),
        (5, 5, "CUDA's atomicAdd is wave::atomic_add(&a[i], v) here"),
        (6, 21, "CUDA's gridDim.y is wave::grid_size(1) here"),
    ], str(e.value)


# -- C++: hexadecimal float literals (C++17), `f` after the binary exponent makes a float


def test_cpp_hex_float_literals(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "hx.cpp"
    path.write_text(
        '#include "wave.hpp"\n[[wave::kernel]] void k(float* out, double* d) {\n'
        "    out[0] = 0x1p-2f;\n    out[1] = wave::min(0x1.8p1f, 4.0f);\n    d[0] = 0x1.8p1;\n}\n"
    )
    out = np.zeros(2, np.float32)
    d = np.zeros(1, np.float64)
    load_kernels(path)["k"](out, d, grid=1, workgroup=1)
    assert out.tolist() == [0.25, 3.0] and d.tolist() == [3.0]


# -- more parameters than registers: refused at the first one beyond, in every language


@pytest.mark.parametrize(
    ("lang", "param", "body"),
    [
        ("cpp", "float* a{}", "[[wave::kernel]] void k({}) {{ a0[0] = 1; }}"),
        ("rust", "a{}: &mut [f32]", "#[wave::kernel]\npub fn k({}) {{ a0[0] = 1.0; }}"),
        ("typescript", "a{}: Float32Array", "/** @kernel */\nexport function k({}): void {{ a0[0] = 1; }}"),
    ],
)
def test_more_parameters_than_registers(lang: str, param: str, body: str) -> None:
    src = body.format(", ".join(param.format(i) for i in range(260)))
    text = _error(src, lang)
    line, col, msg = _first(text)
    assert "has 260 parameters" in msg and "more than the 256 registers" in msg, text
    assert src.splitlines()[line - 1][col - 1 :].startswith(param.format(256)), text


# -- Rust: `a..=u32::MAX` would wrap its bound and run no iteration (rustc runs them): refused


@pytest.mark.parametrize("bound", ["u32::MAX", "4294967295"])
def test_rust_inclusive_range_to_the_largest_value_is_refused(bound: str) -> None:
    src = (
        "use wave::*;\n#[wave::kernel]\npub fn k(out: &mut [u32], s: u32) {\n    let mut c = 0u32;\n"
        f"    for _i in s..={bound} {{ c += 1; }}\n    out[0] = c;\n}}\n"
    )
    text = _error(src, "rust")
    line, col, msg = _first(text)
    assert (line, col) == (5, 19) and "ends at the largest u32" in msg and "while" in msg, text
    wg.compile(src.replace(bound, "4294967294"), lang="rust")
