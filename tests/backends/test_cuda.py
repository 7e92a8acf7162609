"""The CUDA C++ backend: every row is rendered or refused with a reason, and what it renders
compiles with nvcc (and assembles with ptxas, through -cubin) without a warning. No NVIDIA GPU
is needed; running the output on a GPU is the job of the device checks (docs/backends.md)."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import wavegpu as wg
from wavegpu.backends import render
from wavegpu.backends.cstyle import CUDA, coverage
from wavegpu.isa import ROWS
from wavegpu.isa.semantics import SEMANTICS
from wavegpu.wbin import Kernel

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "emulator"))
import test_differential as D

NVCC = shutil.which("nvcc")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc (CUDA 13.0) is not installed")
EX = Path(__file__).resolve().parents[2] / "examples"


def _compile(kernels: list[Kernel], tmp_path: Path) -> str:
    """One translation unit holding every kernel (the prelude once); returns the PTX text."""
    prelude = CUDA().prelude()
    parts = [prelude]
    for k in kernels:
        src = render(k, "cuda").source
        assert src.startswith(prelude)
        parts.append(src[len(prelude) :])
    cu = tmp_path / "k.cu"
    cu.write_text("\n".join(parts))
    for flag, out in (("-ptx", "k.ptx"), ("-cubin", "k.cubin")):
        r = subprocess.run(
            [NVCC, "-arch=sm_80", flag, str(cu), "-o", str(tmp_path / out)],  # type: ignore[list-item]
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert r.returncode == 0 and "warning" not in r.stderr, r.stderr[-4000:]
    return (tmp_path / "k.ptx").read_text()


def test_every_row_is_rendered_or_unsupported_with_a_reason() -> None:
    cov = coverage(CUDA())
    missing = [k for k, v in cov.items() if v == "missing"]
    assert not missing, missing
    assert all(v.startswith(("expr", "statement", "unsupported: ")) for v in cov.values())


def test_wave_width_other_than_32_is_refused() -> None:
    k = wg.assemble((EX / "vector_add.wave").read_text(), "vector_add.wave").kernels[0]
    with pytest.raises(wg.WaveError, match="32 lanes"):
        render(k, "cuda", wave_width=64)


@needs_nvcc
def test_every_supported_row_compiles(tmp_path: Path) -> None:
    cov = coverage(CUDA())
    rows = [r for r in ROWS if r.key in SEMANTICS and not cov[r.key].startswith("unsupported")]
    kernels = [dataclasses.replace(D.row_kernel(r), name=f"row_{i}") for i, r in enumerate(rows)]
    assert len(kernels) > 150
    ptx = _compile(kernels, tmp_path)
    assert ptx.count(".entry row_") == len(kernels)


@needs_nvcc
def test_examples_and_compiled_kernels_compile(tmp_path: Path) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "compiler"))
    import kernels as K

    ks = [wg.assemble(p.read_text(), p.name).kernels[0] for p in sorted(EX.glob("*.wave"))]
    for opt in (0, 3):
        for kf in (K.loops, K.floor_ops, K.scan, K.matmul, K.histogram):
            k = wg.compile(kf.python, opt=opt).kernels[0]
            ks.append(dataclasses.replace(k, name=f"{k.name}_O{opt}"))
    ptx = _compile(ks, tmp_path)
    for k in ks:
        assert f".entry {k.name}(" in ptx


@needs_nvcc
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_random_structured_programs_compile(tmp_path: Path, data: st.DataObject) -> None:
    seed_vals = data.draw(st.lists(st.integers(0, 2**32 - 1), min_size=24, max_size=24))
    body = [i for i in data.draw(D.block()) if i.spec.cls not in ("atomic",) and i.spec.name != "ret"]
    if any(i.spec.cls == "control" for i in body):
        from wavegpu.isa.structure import check_structure

        if check_structure(body):
            return
    _compile([Kernel("rnd", tuple(D.prologue(seed_vals) + body + D.epilogue()), 19, 8)], tmp_path)


def test_float_arithmetic_is_never_contracted_into_fma(tmp_path: Path) -> None:
    """nvcc fuses a * b + c by default; a mul and a dependent add must stay two roundings."""
    src = """
.kernel muladd
    mov.b32 r0, 0x3f800001
    mul.f32 r1, r0, r0
    add.f32 r2, r1, r0
    mov.b32 r3, 0
    st.global.b32 [r3], r2
    ret
.end
"""
    k = wg.assemble(src, "m.wave").kernels[0]
    out = render(k, "cuda").source
    assert "__fmul_rn(" in out and "__fadd_rn(" in out and " * F(" not in out
    if NVCC is not None:
        ptx = _compile([k], tmp_path)
        assert "mul.rn.f32" in ptx and "add.rn.f32" in ptx and "fma" not in ptx
