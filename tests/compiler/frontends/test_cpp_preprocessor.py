"""C++: `#pragma unroll` before a loop is a hint the compiler accepts (the loop runs as written);
every other preprocessor construct in a kernel is refused in C++ words, never by a tree-sitter
node name; OpenCL's `__global` and `__private` are accepted, `__local` and `__constant` refused
with the C++ form (issue 22.8; docs/compiler.md)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import wavegpu as wg

LOOP = "  for (int j = 0; j < 8; j++) { x[j] = x[j] * 2.0f + 1.0f; }\n"


def _kernel(before_loop: str, head: str = "") -> str:
    return f"{head}[[wave::kernel]] void k(float* x) {{\n{before_loop}{LOOP}}}\n"


@pytest.mark.parametrize(
    "pragma",
    [
        "#pragma unroll",
        "#pragma unroll 4",
        "#pragma unroll(2)",
        "  #pragma unroll 8",
        "#pragma nounroll",
        "#pragma unroll U",
    ],
)
def test_pragma_unroll_before_a_loop_is_a_hint(pragma: str) -> None:
    src = _kernel(pragma + "\n  // the loop\n", head="constexpr int U = 4;\n")
    x = np.arange(8, dtype=np.float32)
    wg.load_kernels(src, lang="cpp").k(x, grid=1, workgroup=1)
    assert np.array_equal(x, np.arange(8, dtype=np.float32) * 2 + 1)  # the loop runs as written


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("#pragma unroll 0\n", "#pragma unroll takes a positive integer count, not '0'"),
        ("#pragma unroll n\n", "#pragma unroll takes a positive integer count, not 'n'"),
        ("#pragma nounroll 2\n", "#pragma nounroll takes no count"),
        (
            "#pragma unroll\n  x[0] = 1.0f;\n",
            "#pragma unroll applies to a loop: put it right before a for, while or do",
        ),
        (
            "#pragma omp parallel for\n",
            "#pragma omp is not supported in kernels (only #pragma unroll [N] before a loop)",
        ),
        ("#if 0\n  x[0] = 2.0f;\n#endif\n", "conditional compilation (#if) is not supported in kernels"),
        ("#ifdef FAST\n  x[0] = 2.0f;\n#endif\n", "conditional compilation (#ifdef) is not supported in kernels"),
        ("#define TWO 2.0f\n", "macros are not supported in kernels: use constexpr constants"),
        ("#undef TWO\n", "macros are not supported in kernels: use constexpr constants"),
        ("#include <cmath>\n", "#include is not supported in kernels: write includes at the top of the file"),
        ("#error stop\n", "the preprocessor directive #error is not supported in kernels"),
    ],
)
def test_other_preprocessor_constructs_are_refused_in_cpp_words(text: str, message: str) -> None:
    with pytest.raises(wg.CompileError) as e:
        wg.compile(_kernel(text), lang="cpp")
    d = e.value.diagnostics[0]
    assert message in d.message and not re.search(r"\bpreproc[ _]", d.message), d.message
    assert d.span is not None and d.span.line == 2


def test_conditional_compilation_at_file_scope_is_refused_in_cpp_words() -> None:
    with pytest.raises(wg.CompileError) as e:
        wg.compile(_kernel("", head="#ifndef K_H\n#define K_H\n#endif\n"), lang="cpp")
    d = e.value.diagnostics[0]
    assert "conditional compilation (#ifndef)" in d.message and not re.search(r"\bpreproc[ _]", d.message), d.message


def test_opencl_global_and_private_are_accepted() -> None:
    src = (
        "__kernel void k(__global float* x, __global const float* y) {\n  uint32_t i = thread_id();\n"
        "  __private float t = y[i];\n  x[i] = t * 2.0f;\n}\n"
    )
    x = np.zeros(256, np.float32)
    y = np.arange(256, dtype=np.float32)
    wg.load_kernels(src, lang="cpp").k(x, y, grid=1)
    assert np.array_equal(x, 2 * y)


@pytest.mark.parametrize(
    ("qualifier", "fix"), [("__local", "__shared__ float tile[256];"), ("__constant", "const float* x")]
)
def test_opencl_local_and_constant_are_refused_with_the_cpp_form(qualifier: str, fix: str) -> None:
    src = f"[[wave::kernel]] void k({qualifier} float* x, float* o) {{\n  o[0] = x[0];\n}}\n"
    with pytest.raises(wg.CompileError) as e:
        wg.compile(src, lang="cpp")
    d = e.value.diagnostics[0]
    assert f"`{qualifier}` is OpenCL C's" in d.message and fix in d.message, d.message
    assert d.span is not None and (d.span.line, d.span.col, d.span.length) == (1, 25, len(qualifier))


def test_opencl_qualifiers_in_comments_and_strings_change_nothing() -> None:
    src = "[[wave::kernel]] void k(float* x) {\n  // no __local memory, no __constant\n  x[0] = 1.0f;\n}\n"
    assert wg.compile(src, lang="cpp").kernels[0].name == "k"


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
def test_gxx_accepts_what_is_accepted_here(tmp_path: Path) -> None:
    """With wave.hpp (which defines `__global` and `__private` empty), g++ takes the OpenCL
    qualifiers and the unroll pragma the frontend accepts: the kernels stay C++."""
    from wavegpu.compiler.frontends.cpp import include_dir

    src = '#include "wave.hpp"\n' + (
        "__kernel void k(__global float* x, __global const float* y) {\n  uint32_t i = wave::thread_id(0);\n"
        "  __private float t = y[i];\n#pragma unroll 2\n  for (int j = 0; j < 2; j++) { x[i] = t * 2.0f; }\n}\n"
    )
    assert wg.compile(src, lang="cpp").kernels[0].name == "k"
    p = tmp_path / "k.cpp"
    p.write_text(src)
    flags = ["g++", "-std=c++20", "-fsyntax-only", "-Werror", "-Wno-unknown-pragmas", f"-I{include_dir()}"]
    r = subprocess.run([*flags, str(p)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
