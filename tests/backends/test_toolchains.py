"""The CUDA C++ and HIP backends: every row is rendered or refused with a reason, and what
they render compiles with the vendor's compiler without a warning: nvcc to PTX and cubin
(ptxas for sm_75 and sm_90), hipcc to code objects for gfx90a (waves of 64) and gfx1030 (waves of 32).
No GPU is needed; running the output on one is the job of the device checks (docs/backends.md)."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import wavegpu as wg
from wavegpu.backends import TARGETS, render
from wavegpu.backends.cstyle import coverage
from wavegpu.isa import ROWS
from wavegpu.isa.semantics import SEMANTICS
from wavegpu.wbin import Kernel

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "emulator"))
import test_differential as D

import toolchains

EX = Path(__file__).resolve().parents[2] / "examples"
ASM = Path(__file__).resolve().parents[1] / "data" / "asm"
NVCC = toolchains.nvcc().path  # CUDA 13.0 by its --version
HIPCC = toolchains.hipcc().path  # HIP 5.2 (Debian)
# (target, wave width, tool) of each compile check
CASES = [("cuda", 32, "nvcc"), ("hip", 64, "hipcc"), ("hip", 32, "hipcc")]


def _commands(target: str, width: int, src: Path) -> list[list[str]]:
    if target == "cuda":
        assert NVCC is not None
        return [
            [NVCC, f"-arch={arch}", flag, str(src), "-o", str(src.with_suffix(ext))]
            for arch, flag, ext in (
                ("sm_75", "-ptx", ".ptx"),
                ("sm_75", "-cubin", ".cubin"),
                ("sm_90", "-cubin", ".sm90"),
            )
        ]
    return [_hipcc("gfx90a" if width == 64 else "gfx1030", "-c", src, src.with_suffix(".o"))]


def _hipcc(arch: str, mode: str, src: Path, out: Path) -> list[str]:
    """hipcc for one AMD target, device code only (mode -c: a code object; -S: assembly)."""
    assert HIPCC is not None
    flags = ["--cuda-device-only", mode, "-Wall", "-Wno-unused-command-line-argument", "-x", "hip"]
    return [HIPCC, f"--offload-arch={arch}", *flags, str(src), "-o", str(out)]


def _run(cmd: list[str]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HIP_PLATFORM": "amd"}  # hipcc would pick nvcc when it finds one
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)


def _compile(target: str, width: int, kernels: list[Kernel], tmp_path: Path) -> Path:
    """One translation unit holding every kernel (the prelude once); returns its path."""
    prelude = TARGETS[target]().prelude()
    parts = [prelude]
    for k in kernels:
        src = render(k, target, wave_width=width).source
        assert src.startswith(prelude)
        parts.append(src[len(prelude) :])
    cu = tmp_path / f"k_{target}{width}.cu"
    cu.write_text("\n".join(parts))
    for cmd in _commands(target, width, cu):
        r = _run(cmd)
        assert r.returncode == 0 and "warning" not in r.stderr, r.stderr[-4000:]
    return cu


def _skip_without(tool: str) -> None:
    if (NVCC if tool == "nvcc" else HIPCC) is None:
        pytest.skip((toolchains.nvcc() if tool == "nvcc" else toolchains.hipcc()).reason)


@pytest.mark.parametrize(("target", "width"), [("cuda", 64), ("cuda", 16), ("hip", 16)])
def test_wave_widths_the_hardware_lacks_are_refused(target: str, width: int) -> None:
    k = wg.assemble((EX / "vector_add.wave").read_text(), "vector_add.wave").kernels[0]
    with pytest.raises(wg.WaveError, match="lanes; cannot render for a wave width"):
        render(k, target, wave_width=width)


@pytest.mark.parametrize(("target", "width", "tool"), CASES)
def test_every_supported_row_compiles(target: str, width: int, tool: str, tmp_path: Path) -> None:
    _skip_without(tool)
    cov = coverage(TARGETS[target]())
    rows = [r for r in ROWS if r.key in SEMANTICS and not cov[r.key].startswith("unsupported")]
    kernels = [dataclasses.replace(D.row_kernel(r), name=f"row_{i}") for i, r in enumerate(rows)]
    assert len(kernels) > 150
    cu = _compile(target, width, kernels, tmp_path)
    if target == "cuda":
        assert cu.with_suffix(".ptx").read_text().count(".entry row_") == len(kernels)
    else:  # one kernel descriptor per kernel in the code object
        obj = cu.with_suffix(".o").read_bytes()
        assert all(f"row_{i}.kd".encode() in obj for i in range(len(kernels)))


@pytest.mark.parametrize(("target", "width", "tool"), CASES)
def test_examples_and_compiled_kernels_compile(target: str, width: int, tool: str, tmp_path: Path) -> None:
    _skip_without(tool)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "compiler"))
    import kernels as K

    ks = [wg.assemble(p.read_text(), p.name).kernels[0] for p in sorted(EX.glob("*.wave"))]
    ks += wg.assemble((ASM / "features.wave").read_text(), "features.wave").kernels  # the assembler corpus
    for opt in (0, 3):
        for kf in (K.loops, K.floor_ops, K.scan, K.matmul, K.histogram):
            k = wg.compile(kf.python, opt=opt).kernels[0]
            ks.append(dataclasses.replace(k, name=f"{k.name}_O{opt}"))
    cu = _compile(target, width, ks, tmp_path)
    if target == "cuda":
        ptx = cu.with_suffix(".ptx").read_text()
        assert all(f".entry {k.name}(" in ptx for k in ks)
    else:
        obj = cu.with_suffix(".o").read_bytes()
        assert all(f"{k.name}.kd".encode() in obj for k in ks)


@pytest.mark.parametrize(("target", "width", "tool"), CASES)
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_structured_programs_compile(
    target: str, width: int, tool: str, tmp_path: Path, data: st.DataObject
) -> None:
    _skip_without(tool)
    seed_vals = data.draw(st.lists(st.integers(0, 2**32 - 1), min_size=24, max_size=24))
    body = [i for i in data.draw(D.block()) if i.spec.cls not in ("atomic",) and i.spec.name != "ret"]
    if any(i.spec.cls == "control" for i in body):
        from wavegpu.isa.structure import check_structure

        if check_structure(body):
            return
    _compile(target, width, [Kernel("rnd", tuple(D.prologue(seed_vals) + body + D.epilogue()), 19, 8)], tmp_path)


UNSIGNED_ZERO = """
.kernel cmp0
.registers 4
.predicates 2
    mov.u32 r1, %tid.x
    setp.le.u32 p0, 0, r1
    setp.ge.u32 p1, r1, 0
    selp.b32 r2, r1, 0, p0
    st.global.b32 [r2], r1
.end
"""


@pytest.mark.parametrize(("target", "width", "tool"), CASES)
def test_comparisons_with_an_immediate_zero_compile_without_a_warning(
    target: str, width: int, tool: str, tmp_path: Path
) -> None:
    """Found by the random programs: nvcc warns (#186) on `0u <= r1`, which generated code may hold."""
    _skip_without(tool)
    _compile(target, width, list(wg.assemble(UNSIGNED_ZERO, "c.wave").kernels), tmp_path)


MULADD = """
.kernel muladd
    mov.b32 r3, 0
    ld.global.b32 r0, [r3]
    ld.global.b32 r4, [r3+4]
    mul.f32 r1, r0, r4
    add.f32 r2, r1, r0
    st.global.b32 [r3], r2
    ret
.end
"""


def test_cuda_float_arithmetic_is_never_contracted_into_fma(tmp_path: Path) -> None:
    """nvcc fuses a * b + c by default; a mul and a dependent add must stay two roundings."""
    k = wg.assemble(MULADD, "m.wave").kernels[0]
    out = render(k, "cuda").source
    assert "__fmul_rn(" in out and "__fadd_rn(" in out and " * F(" not in out
    if NVCC is not None:
        ptx = _compile("cuda", 32, [k], tmp_path).with_suffix(".ptx").read_text()
        assert "mul.rn.f32" in ptx and "add.rn.f32" in ptx and "fma" not in ptx


def test_hip_float_arithmetic_is_never_contracted_into_fma(tmp_path: Path) -> None:
    """clang contracts across statements for HIP; the prelude's pragma turns that off."""
    k = wg.assemble(MULADD, "m.wave").kernels[0]
    assert "#pragma clang fp contract(off)" in render(k, "hip", wave_width=64).source
    _skip_without("hipcc")
    src = tmp_path / "m.hip"
    src.write_text(render(k, "hip", wave_width=64).source)
    r = _run(_hipcc("gfx90a", "-S", src, tmp_path / "m.s"))
    assert r.returncode == 0, r.stderr
    asm = (tmp_path / "m.s").read_text()
    assert "v_mul_f32" in asm and "v_add_f32" in asm and "v_fma" not in asm and "v_fmac" not in asm


def test_hip_source_is_the_same_for_wave32_and_wave64_and_builds_for_both(tmp_path: Path) -> None:
    """The backends document's HIP mapping: warpSize wherever W appears, extern __shared__ local
    memory sized at launch, butterfly reductions over __shfl_xor when the whole wave is active."""
    prog = wg.assemble((ASM / "features.wave").read_text(), "features.wave")
    src = wg.translate(prog, "hip", wave_width=64)
    assert src == wg.translate(prog, "hip", wave_width=32)
    assert "(uint)warpSize" in src and "#define WV_LANES warpSize" in src and "__shfl_xor(" in src
    assert "extern __shared__ __attribute__((aligned(16))) uchar shared_mem[];" in src
    assert "launch with 4096 bytes of dynamic shared memory" in src
    assert "if ((uint)warpSize != 32u) { __builtin_trap();" in src  # mma needs waves of 32
    _skip_without("hipcc")
    hip = tmp_path / "f.hip"
    hip.write_text(src)
    for arch in ("gfx90a", "gfx1030"):  # waves of 64 and of 32
        out = tmp_path / f"f_{arch}.o"
        r = _run(_hipcc(arch, "-c", hip, out))
        assert r.returncode == 0 and "warning" not in r.stderr, (arch, r.stderr[-3000:])
        assert b"features.kd" in out.read_bytes()
