"""C++ helpers from a header next to the kernel file (issue 24 point 1): `#include "helpers.hpp"`
read at the include's place (functions, templates, constexpr and #define constants), `#pragma once`
and classic include guards, headers in subfolders including each other; results against NumPy on
the emulator, the same files accepted by g++ with wave.hpp; the refusals at the `#include` (a
missing header, a cycle, source text without a file); diagnostics inside a header at the header's
place with a note at the call site; the compile cache recompiling when a header changes."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import wavegpu as wg
from wavegpu.compiler.frontends.cpp import CPP, include_dir
from wavegpu.errors import CompileError
from wavegpu.runtime import cache
from wavegpu.runtime.sources import load_kernels

GXX = shutil.which("g++")

HELPERS = """#pragma once
// helpers next to the kernel file
#include <cstdint>
#include "wave.hpp"
#include "lib/poly.hpp"

#define SCALE 0.5f
constexpr uint32_t STRIDE = 2;

template <typename T>
inline T sq(T v) { return v * v; }

inline float scaled(float v) { return poly(v) * SCALE; }
"""

POLY = """// a classic include guard around the whole header
#ifndef LIB_POLY_HPP
#define LIB_POLY_HPP
#include "../common.hpp"

inline float poly(float v) {
    float acc = 0.0f;
    for (uint32_t k = 0; k < DEGREE; k++) {
        acc = acc * v + 1.0f;
    }
    return acc;
}
#endif  // LIB_POLY_HPP
"""

COMMON = """#ifndef COMMON_HPP
#define COMMON_HPP
#include <cstdint>
constexpr uint32_t DEGREE = 3;
#endif
"""

KERNEL = """#include <cstdint>
#include "wave.hpp"
#include "helpers.hpp"
#include "helpers.hpp"      // #pragma once: read once
#include "lib/poly.hpp"     // the guard: empty the second time
#include "common.hpp"

[[wave::kernel]] void apply(const float* x, float* out, int32_t* sqi, uint32_t n) {
    uint32_t i = wave::global_id(0);
    if (i >= n) return;
    out[i] = scaled(x[i]) + sq(x[i]);
    sqi[i] = sq(int32_t(i * STRIDE)) - int32_t(DEGREE);
}
"""


def _tree(root: Path, kernel: str = KERNEL) -> Path:
    (root / "lib").mkdir(parents=True, exist_ok=True)
    (root / "helpers.hpp").write_text(HELPERS)
    (root / "lib" / "poly.hpp").write_text(POLY)
    (root / "common.hpp").write_text(COMMON)
    k = root / "k.cpp"
    k.write_text(kernel)
    return k


def _want(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = x.astype(np.float32)
    one = np.float32(1)
    p = np.zeros_like(x)
    for _ in range(3):
        p = p * x + one
    i = np.arange(len(x), dtype=np.int64)
    return p * np.float32(0.5) + x * x, ((i * 2) ** 2 - 3).astype(np.int32)


def test_header_helpers_match_numpy(tmp_path: Path) -> None:
    k = _tree(tmp_path)
    n = 100
    x = np.linspace(-2, 2, n, dtype=np.float32)
    out, sqi = np.zeros(n, np.float32), np.zeros(n, np.int32)
    load_kernels(k).apply(x, out, sqi, np.uint32(n), grid=(2,), workgroup=(64,))
    want_out, want_sqi = _want(x)
    np.testing.assert_array_equal(out, want_out)
    np.testing.assert_array_equal(sqi, want_sqi)


def test_compile_by_path_and_line_table_name_the_header(tmp_path: Path) -> None:
    """wg.compile of the path reads the headers; the instructions of an inlined header helper
    carry the header's file and line in the line table."""
    k = _tree(tmp_path)
    prog = wg.compile(str(k), opt=0)
    files = {Path(loc.file).name for loc in prog.kernels[0].lines or () if loc}
    assert {"k.cpp", "poly.hpp", "helpers.hpp"} <= files


@pytest.mark.skipif(GXX is None, reason="g++ is not installed")
def test_gxx_accepts_the_same_files(tmp_path: Path) -> None:
    k = _tree(tmp_path)
    flags = ["-std=c++20", "-fsyntax-only", "-Werror", "-Wno-attributes=wave::", f"-I{include_dir()}"]
    r = subprocess.run([GXX or "g++", *flags, str(k)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def _error(path: Path) -> CompileError:
    with pytest.raises(CompileError) as e:
        CPP.parse(path.read_text(), str(path))
    return e.value


def _places(e: CompileError) -> list[tuple[str, int, int, str]]:
    out = []
    for d in e.diagnostics:
        for x in (d, *d.notes):
            assert x.span is not None
            out.append((Path(x.span.file).name, x.span.line, x.span.col, x.severity))
    return out


def test_a_diagnostic_inside_a_header_names_the_header_and_the_call(tmp_path: Path) -> None:
    (tmp_path / "h.hpp").write_text("#pragma once\n\ninline float g(float v) {\n    return v + missing;\n}\n")
    k = tmp_path / "k.cpp"
    k.write_text('#include "h.hpp"\n[[wave::kernel]] void k(float* o) {\n    o[0] = g(1.0f);\n}\n')
    e = _error(k)
    assert _places(e) == [("h.hpp", 4, 16, "error"), ("k.cpp", 3, 12, "note")]
    assert "'missing' is not declared" in e.diagnostics[0].message
    assert e.diagnostics[0].span is not None and e.diagnostics[0].span.text == "    return v + missing;"


def test_the_kernel_files_lines_after_a_header_keep_their_numbers(tmp_path: Path) -> None:
    (tmp_path / "h.hpp").write_text("inline float g(float v) { return v; }\n" * 1 + "constexpr int A = 1;\n")
    k = tmp_path / "k.cpp"
    k.write_text('#include "h.hpp"\n\n[[wave::kernel]] void k(float* o) {\n    o[0] = g(nope);\n}\n')
    assert _places(_error(k)) == [("k.cpp", 4, 14, "error")]


def test_a_syntax_error_in_a_header_is_at_its_place(tmp_path: Path) -> None:
    (tmp_path / "h.hpp").write_text("// ok\ninline float g(float v) { return v +; }\n")
    k = tmp_path / "k.cpp"
    k.write_text('#include "h.hpp"\n[[wave::kernel]] void k(float* o) { o[0] = g(1.0f); }\n')
    assert [(f, line) for f, line, _, _ in _places(_error(k))] == [("h.hpp", 2)]


def test_a_missing_header_is_refused_at_the_include(tmp_path: Path) -> None:
    k = tmp_path / "k.cpp"
    k.write_text('#include "wave.hpp"\n\n#include "nope.hpp"\n[[wave::kernel]] void k(float* o) { o[0] = 1.0f; }\n')
    e = _error(k)
    assert _places(e) == [("k.cpp", 3, 1, "error")]
    assert "cannot find 'nope.hpp'" in str(e) and "no -I search paths" in str(e)


def test_an_include_cycle_is_refused_at_the_include_that_closes_it(tmp_path: Path) -> None:
    (tmp_path / "a.hpp").write_text('#include "b.hpp"\ninline float fa(float v) { return v; }\n')
    (tmp_path / "b.hpp").write_text('\n#include "a.hpp"\n')
    k = tmp_path / "k.cpp"
    k.write_text('#include "a.hpp"\n[[wave::kernel]] void k(float* o) { o[0] = fa(1.0f); }\n')
    e = _error(k)
    assert _places(e) == [("b.hpp", 2, 1, "error")]
    assert "#include cycle" in str(e) and "a.hpp -> " in str(e)


def test_a_guarded_cycle_is_empty_as_in_cpp(tmp_path: Path) -> None:
    (tmp_path / "a.hpp").write_text('#pragma once\n#include "b.hpp"\ninline float fa(float v) { return v + 1.0f; }\n')
    (tmp_path / "b.hpp").write_text(
        '#ifndef B\n#define B\n#include "a.hpp"\ninline float fb(float v) { return v; }\n#endif\n'
    )
    k = tmp_path / "k.cpp"
    k.write_text('#include "a.hpp"\n[[wave::kernel]] void k(float* o) { o[0] = fa(fb(1.0f)); }\n')
    o = np.zeros(1, np.float32)
    load_kernels(k).k(o, grid=(1,), workgroup=(1,))
    assert o[0] == 2.0


def test_source_text_without_a_file_refuses_a_quoted_include() -> None:
    src = '#include "wave.hpp"\n#include "cstdint"\n#include "helpers.hpp"\n[[wave::kernel]] void k(float* o) { o[0] = 1.0f; }\n'
    with pytest.raises(CompileError) as e:
        wg.compile(src, lang="cpp")
    assert _places(e.value) == [("<string>", 3, 1, "error")]
    assert "this source text has no file" in str(e.value)


def test_a_header_that_is_not_exactly_guarded_is_refused_in_the_header(tmp_path: Path) -> None:
    (tmp_path / "h.hpp").write_text("#ifndef H\n#define H\n#endif\ninline float g(float v) { return v; }\n")
    k = tmp_path / "k.cpp"
    k.write_text('#include "h.hpp"\n[[wave::kernel]] void k(float* o) { o[0] = g(1.0f); }\n')
    e = _error(k)
    assert _places(e) == [("h.hpp", 1, 1, "error")] and "conditional compilation" in str(e)


def test_an_include_inside_a_function_is_refused(tmp_path: Path) -> None:
    (tmp_path / "h.hpp").write_text("constexpr int A = 1;\n")
    k = tmp_path / "k.cpp"
    k.write_text('[[wave::kernel]] void k(float* o) {\n#include "h.hpp"\n    o[0] = 1.0f;\n}\n')
    e = _error(k)
    assert _places(e) == [("k.cpp", 2, 1, "error")] and "file scope" in str(e)


def test_a_changed_header_recompiles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WAVEGPU_CACHE_DIR", str(tmp_path / "cache"))
    cache._MEMORY_CACHE.clear()
    h = tmp_path / "h.hpp"
    k = tmp_path / "k.cpp"
    k.write_text('#include "h.hpp"\n[[wave::kernel]] void k(float* o) { o[0] = f(); }\n')
    got = []
    for v in (2, 3, 2):
        h.write_text(f"inline float f() {{ return {v}.0f; }}\n")
        o = np.zeros(1, np.float32)
        load_kernels(k).k(o, grid=(1,), workgroup=(1,))
        got.append(float(o[0]))
    assert got == [2.0, 3.0, 2.0]
    assert len(list((tmp_path / "cache" / "kernels").glob("*.wbin"))) == 2


@settings(max_examples=15, deadline=None)
@given(before=st.integers(0, 6), inside=st.integers(0, 6), after=st.integers(0, 6))
def test_places_map_back_to_their_files(
    tmp_path_factory: pytest.TempPathFactory, before: int, inside: int, after: int
) -> None:
    """Blank lines before the include, in the header and after it: an error in the header and one
    in the kernel file each land on their own file's line."""
    d = tmp_path_factory.mktemp("places")
    (d / "h.hpp").write_text("\n" * inside + "inline float g(float v) { return v + bad_h; }\n")
    k = d / "k.cpp"
    k.write_text(
        "\n" * before + '#include "h.hpp"\n' + "\n" * after + "[[wave::kernel]] void k(float* o) { o[0] = g(bad_k); }\n"
    )
    assert _places(_error(k)) == [("k.cpp", before + after + 2, 46, "error")]
    k.write_text(
        "\n" * before + '#include "h.hpp"\n' + "\n" * after + "[[wave::kernel]] void k(float* o) { o[0] = g(1.0f); }\n"
    )
    assert _places(_error(k)) == [("h.hpp", inside + 1, 38, "error"), ("k.cpp", before + after + 2, 44, "note")]


@pytest.mark.parametrize(
    ("header", "line", "message"),
    [
        ("#define OK 1\n#define BAD 1 + 2\n", 2, "write it in parentheses"),
        ("\n__kernel void q(__local float* x) { x[0] = 1.0f; }\n", 2, "`__local` is OpenCL C's workgroup memory"),
        ("constexpr int A = 1;\nint counter = 0;\n", 2, "file-scope variables are not supported"),
    ],
)
def test_file_scope_refusals_in_a_header_are_at_its_place(tmp_path: Path, header: str, line: int, message: str) -> None:
    (tmp_path / "h.hpp").write_text(header)
    k = tmp_path / "k.cpp"
    k.write_text('\n\n#include "h.hpp"\n[[wave::kernel]] void k(float* o) { o[0] = 1.0f; }\n')
    e = _error(k)
    assert [(f, ln) for f, ln, _, _ in _places(e)] == [("h.hpp", line)] and message in str(e)


def test_a_headers_define_is_a_constant_of_the_kernel_file(tmp_path: Path) -> None:
    (tmp_path / "h.hpp").write_text("#pragma once\n#define N_OUT 3\n#define HALF 0.5f\n")
    k = tmp_path / "k.cpp"
    k.write_text(
        '#include "h.hpp"\n[[wave::kernel]] void k(float* o) {\n'
        "    for (int i = 0; i < N_OUT; i++) o[i] = HALF * float(i);\n}\n"
    )
    o = np.zeros(4, np.float32)
    load_kernels(k).k(o, grid=(1,), workgroup=(1,))
    assert o.tolist() == [0.0, 0.5, 1.0, 0.0]
