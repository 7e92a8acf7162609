"""How large a per-thread array may be (issue 24), in all four languages: up to MAX_REGISTER_WORDS
registers it stays in registers when its indices fold, one register more puts it in local memory,
and one that does not fit the device's local memory is refused at its declaration with the limit.
Compile time does not grow with the array: a 100000-element declaration is refused at once,
mem2reg is linear in variables plus instructions, and the declaration of an array in local
memory stores its zeros (or its repeated value) with a loop (docs/compiler.md, "Per-thread
arrays and unrolled loops")."""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import wavegpu as wg
from wavegpu.compiler.mir.ir import Block, Const, Function, Inst, Ret
from wavegpu.compiler.mir.lower import FILL_LOOP, MAX_LOCAL
from wavegpu.compiler.mir.privates import MAX_REGISTER_WORDS
from wavegpu.compiler.passes import mem2reg
from wavegpu.compiler.types import F32
from wavegpu.errors import CompileError
from wavegpu.isa.vocabulary import Op
from wavegpu.runtime.sources import load_kernels

ENGINES = ("numpy", "compiled")
LANGS = ("python", "rust", "cpp", "typescript")


def declared(lang: str, n: int, workgroup: int | None, elem: str = "f32") -> str:
    """A kernel declaring a per-thread array of n elements, written as each language's users
    write it: element n - 1 and element 1 take x[i] and 2 * x[i] (constant indices), and out[i]
    reads them back."""
    py_t, rs_t, c_t, ts_t = {
        "f32": ("wg.f32", "f32", "float", "Float32Array"),
        "f64": ("wg.f64", "f64", "double", "Float64Array"),
    }[elem]
    wgs = {
        "python": f"(workgroup=({workgroup},))",
        "rust": f"(workgroup = ({workgroup}, 1, 1))",
        "cpp": f"[[wave::workgroup({workgroup})]] ",
        "typescript": f" @workgroup {workgroup}",
    }
    w = {k: v if workgroup is not None else "" for k, v in wgs.items()}
    return {
        "python": f"import wavegpu as wg\n\n@wg.kernel{w['python']}\ndef k(x: wg.f32[:], out: wg.f32[:]):\n"
        f"    i = wg.global_id(0)\n    t = wg.private_array({py_t}, {n})\n"
        f"    t[{n - 1}] = x[i]\n    t[1] = x[i] * 2.0\n    out[i] = wg.f32(t[{n - 1}] + t[1] + t[0])\n",
        "rust": f"use wave::*;\n\n#[wave::kernel{w['rust']}]\npub fn k(x: &[f32], out: &mut [f32]) {{\n"
        f"    let i = global_id(0) as usize;\n    let mut t = [0.0{rs_t}; {n}];\n"
        f"    t[{n - 1}] = x[i] as {rs_t};\n    t[1] = x[i] as {rs_t} * 2.0;\n"
        f"    out[i] = (t[{n - 1}] + t[1] + t[0]) as f32;\n}}\n",
        "cpp": f'#include "wave.hpp"\n\n{w["cpp"]}__global__ void k(const float* x, float* out) {{\n'
        f"    uint32_t i = wave::global_id(0);\n    {c_t} t[{n}];\n"
        f"    t[{n - 1}] = x[i];\n    t[1] = x[i] * 2.0f;\n    out[i] = (float)(t[{n - 1}] + t[1] + t[0]);\n}}\n",
        "typescript": f"/** @kernel{w['typescript']} */\nexport function k(x: Float32Array, out: Float32Array): void {{\n"
        f"  const i = wave.global_id(0);\n  const t = new {ts_t}({n});\n"
        f"  t[{n - 1}] = x[i];\n  t[1] = x[i] * 2;\n  out[i] = t[{n - 1}] + t[1] + t[0];\n}}\n",
    }[lang]


# the line and column of each language's declaration in `declared` (C++: its declarator, `t[n]`)
DECLARATION = {"python": (6, 9), "rust": (6, 5), "cpp": (5, 11), "typescript": (4, 13)}


def local_rows(src: str, lang: str) -> tuple[int, int]:
    """The kernel's local-memory load/store rows and its local memory in bytes."""
    k = wg.compile(src, lang=lang).kernels[0]
    return sum(1 for i in k.instructions if i.spec.space == "local" and i.spec.op in (Op.LD, Op.ST)), k.local_memory


def check_runs(src: str, lang: str, threads: int) -> None:
    x = np.linspace(-3, 3, 2 * threads).astype(np.float32)
    for engine in ENGINES:
        out = np.zeros_like(x)
        (kernel,) = load_kernels(src, lang=lang).values()
        kernel(x, out, grid=2, workgroup=threads, engine=engine)
        np.testing.assert_array_equal(out, x * np.float32(3))


@pytest.mark.parametrize("lang", LANGS)
def test_the_register_or_local_choice_flips_at_the_limit(lang: str) -> None:
    """MAX_REGISTER_WORDS elements whose indices fold: registers (no local row, no local memory);
    one more: local memory, the same answer on both engines."""
    at = declared(lang, MAX_REGISTER_WORDS, 32)
    assert local_rows(at, lang) == (0, 0)
    check_runs(at, lang, 32)
    over = declared(lang, MAX_REGISTER_WORDS + 1, 32)
    rows, size = local_rows(over, lang)
    assert rows > 0 and size == (MAX_REGISTER_WORDS + 1) * 4 * 32
    check_runs(over, lang, 32)


@pytest.mark.parametrize("lang", ["python", "cpp"])
def test_an_f64_element_counts_two_registers(lang: str) -> None:
    half = MAX_REGISTER_WORDS // 2
    assert local_rows(declared(lang, half, 16, "f64"), lang) == (0, 0)
    over = declared(lang, half + 1, 16, "f64")
    assert local_rows(over, lang)[0] > 0
    check_runs(over, lang, 16)


@pytest.mark.parametrize("lang", LANGS)
def test_a_100000_element_array_is_refused_at_once_naming_the_limit(lang: str) -> None:
    """Whatever the workgroup size, 400000 bytes per thread exceed the 64 KiB of local memory:
    refused at the declaration, quickly (it took minutes when the array went to registers)."""
    for workgroup in (None, 1):
        start = time.perf_counter()
        with pytest.raises(CompileError) as e:
            wg.compile(declared(lang, 100000, workgroup), lang=lang)
        assert time.perf_counter() - start < 20
        (d,) = e.value.diagnostics
        assert d.span is not None and (d.span.line, d.span.col) == DECLARATION[lang]
        assert f"per-thread array holds at most {MAX_LOCAL // 4} f32 elements" in d.message
        assert f"more than the {MAX_REGISTER_WORDS} a per-thread array may keep in registers" in d.message
        assert f"the device has {MAX_LOCAL} (LOCAL_MEMORY_SIZE)" in d.message


@pytest.mark.parametrize("lang", LANGS)
def test_a_large_array_without_a_workgroup_size_names_how_many_threads_fit(lang: str) -> None:
    """Without a declared workgroup size, room is made for 1024 threads: the remedies are a
    smaller array or a workgroup size, with how many threads fit; the workgroup size it names
    compiles."""
    n = MAX_REGISTER_WORDS + 1
    with pytest.raises(CompileError) as e:
        wg.compile(declared(lang, n, None), lang=lang)
    fits = MAX_LOCAL // (n * 4)
    (d,) = e.value.diagnostics
    assert d.span is not None and (d.span.line, d.span.col) == DECLARATION[lang]
    assert d.message.endswith(f"make it smaller, or fix the kernel's workgroup size (at most {fits} threads fit)")
    local_rows(declared(lang, n, fits), lang)  # compiles
    with pytest.raises(CompileError, match=f"a smaller workgroup size \\(at most {fits} threads fit\\)"):
        wg.compile(declared(lang, n, fits + 1), lang=lang)


@pytest.mark.parametrize("lang", LANGS)
def test_the_largest_array_for_one_thread_compiles_and_runs(lang: str) -> None:
    """MAX_LOCAL bytes per thread with a workgroup of one thread: the whole local memory, zeroed
    by a loop (a code size that does not grow with the array), run on both engines."""
    n = MAX_LOCAL // 4
    src = declared(lang, n, 1)
    start = time.perf_counter()
    k = wg.compile(src, lang=lang).kernels[0]
    assert time.perf_counter() - start < 20
    assert k.local_memory == MAX_LOCAL and len(k.instructions) < 100
    check_runs(src, lang, 1)
    with pytest.raises(CompileError, match=f"holds at most {n} f32 elements"):
        wg.compile(declared(lang, n + 1, 1), lang=lang)


def test_mem2reg_is_linear_in_variables_and_instructions() -> None:
    """20000 variables, each written once and read once: each variable's writers were found by a
    walk over every instruction (4 * 10**8 steps here, minutes); now one walk."""
    n = 20000
    fn = Function("k", [], [])
    b = Block("bb0")
    fn.blocks.append(b)
    reads = []
    for k in range(n):
        name = f"v{k}"
        fn.vars[name] = F32
        b.insts.append(Inst("setvar", None, [Const(float(k), F32)], name))
    for k in range(n):
        dst = fn.new_value(F32)
        b.insts.append(Inst("getvar", dst, [], f"v{k}"))
        reads.append(dst)
    total = fn.new_value(F32)
    b.insts.append(Inst("add", total, [reads[3], reads[n - 1]], None))
    b.term = Ret()
    start = time.perf_counter()
    assert mem2reg.run(fn)
    assert time.perf_counter() - start < 10
    (add,) = b.insts
    assert add.args == [Const(3.0, F32), Const(float(n - 1), F32)]


# ---- the declaration's values in local memory: one by one, then the repeated tail by a loop -----
def cpp_initialised(n: int, values: list[int], r_index: int) -> str:
    """An array of n ints (in local memory: n > MAX_REGISTER_WORDS) declared with `values` inside
    a loop, so the second trip must store every element again: element r_index, which both trips
    add to, included."""
    init = ", ".join(str(v) for v in values)
    return (
        '#include "wave.hpp"\n\n[[wave::workgroup(8)]] __global__ void k(const float* x, float* out) {\n'
        "    uint32_t i = wave::global_id(0);\n    for (int r = 0; r < 2; ++r) {\n"
        f"        int32_t t[{n}] = {{{init}}};\n        t[{r_index}] += (int32_t)x[i] + r;\n"
        f"        int32_t s = 0;\n        for (int j = 0; j < {n}; ++j) s += t[j] * (j + 1);\n"
        "        out[i * 2 + r] = (float)s;\n    }\n}\n"
    )


def check_initialised(n: int, values: list[int], r_index: int, engine: str) -> None:
    src = cpp_initialised(n, values, r_index)
    x = np.arange(-4, 4, dtype=np.float32)
    want = np.zeros(16, np.float32)
    for i in range(8):
        for r in range(2):
            t = np.zeros(n, np.int64)
            t[: len(values)] = values
            t[r_index] += int(x[i]) + r
            want[i * 2 + r] = np.float32((t * np.arange(1, n + 1)).sum())
    out = np.zeros(16, np.float32)
    load_kernels(src, lang="cpp").k(x, out, grid=1, engine=engine)
    np.testing.assert_array_equal(out, want)


@settings(max_examples=10, deadline=None)
@given(
    n=st.integers(MAX_REGISTER_WORDS + 1, MAX_REGISTER_WORDS + 3 * FILL_LOOP),
    head=st.lists(st.integers(-5, 5), max_size=6),
    tail=st.tuples(st.integers(-3, 3), st.integers(0, 3 * FILL_LOOP)),
    r_index=st.integers(0, 40),
)
def test_initialisers_in_local_memory_match_numpy(n: int, head: list[int], tail: tuple[int, int], r_index: int) -> None:
    """Values given, a run of one repeated value, zeros up to n (C++'s rule), stored again on the
    second trip of the loop around the declaration: NumPy's answer (the NumPy engine; the
    compiled engine builds each kernel natively, seconds apiece: the test below)."""
    value, count = tail
    check_initialised(n, (head + [value] * count)[:n], r_index, "numpy")


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    ("values", "r_index"),
    [([1, 2, 3] + [2] * 40, 20), ([4, -1] + [0] * (FILL_LOOP + 1), 30), ([3] * (MAX_REGISTER_WORDS + 9), 0)],
)
def test_initialisers_in_local_memory_on_both_engines(values: list[int], r_index: int, engine: str) -> None:
    """A repeated tail stored by the loop, zeros after given values, a whole array of one value."""
    check_initialised(MAX_REGISTER_WORDS + 9, values, r_index, engine)


def test_a_long_repeated_tail_is_one_loop() -> None:
    """The code of `[v; N]` / `{1, 2}` plus zeros in local memory does not grow with N."""
    sizes = {n: len(wg.compile(cpp_initialised(n, [1, 2], 1), lang="cpp").kernels[0].instructions) for n in (200, 1000)}
    assert sizes[200] == sizes[1000]
    rust = {
        n: len(
            wg.compile(
                "use wave::*;\n\n#[wave::kernel(workgroup = (8, 1, 1))]\npub fn k(x: &[f32], out: &mut [f32]) {\n"
                f"    let i = global_id(0) as usize;\n    let mut t = [x[i] * 2.0; {n}];\n    t[i % 3] += 1.0;\n"
                f"    out[i] = t[{n - 1}] + t[0];\n}}\n",
                lang="rust",
            )
            .kernels[0]
            .instructions
        )
        for n in (200, 1000)
    }
    assert rust[200] == rust[1000]
