"""The Metal backend: every row is rendered or refused with a reason (f64: Apple GPUs have no
double precision), and every program of the corpus without f64 passes a syntax and type check:
clang++ -fsyntax-only against our own shim of <metal_stdlib> (tests/backends/metal_shim), which
declares Metal's types, address spaces (as clang address spaces), SIMD-group functions, barriers,
atomics and math. Running Metal needs an Apple GPU, which no test machine has."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import wavegpu as wg
from wavegpu.backends import render
from wavegpu.backends.cstyle import Metal, coverage
from wavegpu.isa import ROWS
from wavegpu.isa.semantics import SEMANTICS
from wavegpu.wbin import Kernel

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "emulator"))
import test_differential as D

import toolchains

ROOT = Path(__file__).resolve().parents[2]
SHIM = Path(__file__).parent / "metal_shim"
CLANG = toolchains.clang()  # by versioned name: clang 14 rejects _Float16 on x86
# the attributes the kernel signature may use (Metal's names for kernel inputs)
ATTRIBUTES = {
    "buffer",
    "thread_position_in_threadgroup",
    "threadgroup_position_in_grid",
    "threads_per_threadgroup",
    "threadgroups_per_grid",
    "thread_index_in_simdgroup",
    "simdgroup_index_in_threadgroup",
    "simdgroups_per_threadgroup",
}


def _check(kernels: list[Kernel], tmp_path: Path) -> str:
    prelude = Metal().prelude()
    text = prelude + "\n".join(render(k, "metal").source[len(prelude) :] for k in kernels)
    used = set(re.findall(r"\[\[(\w+)", text))
    assert used <= ATTRIBUTES, used - ATTRIBUTES
    if CLANG.path is None:
        pytest.skip(CLANG.reason)
    src = tmp_path / "k.metal"
    # clang refuses an address space on a local variable; Metal allows threadgroup ones in a kernel
    src.write_text(re.sub(r"^    threadgroup ", "    static threadgroup ", text, flags=re.M))
    flags = ["-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", "-Wno-unknown-attributes"]
    flags += ["-Wno-unused-variable", "-Wno-unused-but-set-variable", "-Wno-unused-parameter"]
    flags += ["-Wno-tautological-compare", "-Wno-unused-function"]  # row kernels compare p with p; helpers unused
    r = subprocess.run([CLANG.path, *flags, "-I", str(SHIM), "-x", "c++", str(src)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-4000:]
    return text


def test_f64_gives_a_diagnostic() -> None:
    k = wg.assemble(".kernel d\n    add.f64 r0:r1, r2:r3, r4:r5\n    ret\n.end\n", "d.wave")
    with pytest.raises(wg.WaveError, match=r"metal: kernel 'd' uses add\.f64, which is not supported: Apple GPUs"):
        render(k, "metal")
    r = __import__("cli_helpers").run_wave("translate", str(ROOT / "tests/data/asm/features.wave"), "-t", "metal")
    assert r.returncode == 1 and "double precision" in r.stderr and "Traceback" not in r.stderr
    with pytest.raises(wg.WaveError, match="32 lanes"):
        render(wg.assemble((ROOT / "examples/vector_add.wave").read_text(), "v.wave"), "metal", wave_width=64)


def test_every_supported_value_row_checks(tmp_path: Path) -> None:
    cov = coverage(Metal())
    rows = [r for r in ROWS if r.key in SEMANTICS and not cov[r.key].startswith("unsupported")]
    kernels = [dataclasses.replace(D.row_kernel(r), name=f"row_{i}") for i, r in enumerate(rows)]
    assert len(kernels) > 120
    text = _check(kernels, tmp_path)
    assert "as_type<float>" in text and "precise::sin" in text


def test_examples_and_compiled_kernels_check(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "tests" / "compiler"))
    import kernels as K

    ks = [k for p in sorted((ROOT / "examples").glob("*.wave")) for k in wg.assemble(p.read_text(), p.name).kernels]
    for opt in (0, 3):
        for kf in (K.loops, K.floor_ops, K.scan, K.matmul, K.histogram):
            k = wg.compile(kf.python, opt=opt).kernels[0]
            ks.append(dataclasses.replace(k, name=f"{k.name}_O{opt}"))
    text = _check(ks, tmp_path)
    for spelling in ("threadgroup uchar* lmem", "simd_shuffle(", "threadgroup_barrier(", "atomic_fetch_add_explicit("):
        assert spelling in text, spelling


def test_the_assembler_corpus_without_f64_checks(tmp_path: Path) -> None:
    """features.wave minus its f64 and mma lines (Metal refuses those with a reason)."""
    text = (ROOT / "tests/data/asm/features.wave").read_text()
    text = "\n".join(line for line in text.splitlines() if "f64" not in line and "mma." not in line)
    _check(list(wg.assemble(text, "features.wave").kernels), tmp_path)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_structured_programs_check(tmp_path: Path, data: st.DataObject) -> None:
    seed_vals = data.draw(st.lists(st.integers(0, 2**32 - 1), min_size=24, max_size=24))
    body = list(data.draw(D.block()))
    if any(i.spec.key in Metal.unsupported for i in body):
        return
    if any(i.spec.cls == "control" for i in body):
        from wavegpu.isa.structure import check_structure

        if check_structure(body):
            return
    _check([Kernel("rnd", tuple(D.prologue(seed_vals) + body + D.epilogue()), 19, 8)], tmp_path)
