"""Vector access in the backends, checked without a GPU: the .v4 rows the compiler merges
(passes/vectorize.py) reach the machine code as 128-bit accesses: in the SASS `LDG.E.128` /
`STG.E.128` for the four-per-thread vector add and `LDS.128` for the register-blocked SGEMM's
local tiles (ptxas from CUDA, nvdisasm from the nvidia-cuda-nvdisasm wheel); in AMDGCN
`global_load_dwordx4` / `ds_read_b128` (our backend, and hipcc for the HIP source). Each skips
cleanly without its tool."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from test_sass import ARCH, nvdisasm

import wavegpu as wg
from toolchains import hipcc, ptxas
from wavegpu.backends import render

ROOT = Path(__file__).resolve().parents[2]


def sass_of(prog: wg.Program, tmp: Path) -> str:
    tool, nvd = ptxas(), nvdisasm()
    if tool.path is None or nvd is None:
        pytest.skip(tool.reason or "nvdisasm is not installed (the nvidia-cuda-nvdisasm wheel)")
    (tmp / "k.ptx").write_text(render(prog, "ptx").source)
    subprocess.run([tool.path, f"-arch={ARCH}", "-O3", str(tmp / "k.ptx"), "-o", str(tmp / "k.cubin")], check=True)
    return subprocess.run([nvd, "-c", str(tmp / "k.cubin")], check=True, capture_output=True, text=True).stdout


def count(sass: str, pattern: str) -> int:
    return len(re.findall(pattern, sass))


def test_vector_add4_gets_128_bit_global_accesses(tmp_path: Path) -> None:
    sass = sass_of(wg.compile(str(ROOT / "examples" / "kernels" / "vector_add4.py")), tmp_path)
    assert count(sass, r"\bLDG\.E\.128\b") == 2
    assert count(sass, r"\bSTG\.E\.128\b") == 1
    assert count(sass, r"\bLDG\.E\b(?!\.)") == 0  # no 32-bit load left
    # at -O0 nothing is merged: eight 32-bit loads
    sass0 = sass_of(wg.compile(str(ROOT / "examples" / "kernels" / "vector_add4.py"), opt=0), tmp_path)
    assert count(sass0, r"\bLDG\.E\.128\b") == 0


def test_sgemm_blocked_reads_its_tiles_with_lds_128(tmp_path: Path) -> None:
    sass = sass_of(wg.compile(str(ROOT / "examples" / "sgemm_blocked" / "sgemm_blocked.py")), tmp_path)
    assert count(sass, r"\bLDS\.128\b") >= 2


def test_amdgcn_backend_uses_dwordx4_and_b128() -> None:
    """The AMDGCN backend's own assembly (no toolchain needed): 128-bit global and LDS accesses."""
    va4 = wg.translate(wg.compile(str(ROOT / "examples" / "kernels" / "vector_add4.py")), "amdgcn")
    assert count(va4, r"\bglobal_load_dwordx4\b") == 2 and count(va4, r"\bglobal_store_dwordx4\b") == 1
    assert count(va4, r"\bglobal_load_dword\b") == 0
    sgemm = wg.translate(wg.compile(str(ROOT / "examples" / "sgemm_blocked" / "sgemm_blocked.py")), "amdgcn")
    assert count(sgemm, r"\bds_read_b128\b") >= 2


def test_hip_vector_add4_gets_dwordx4(tmp_path: Path) -> None:
    """The HIP source's uint4 accesses through hipcc (gfx90a): global_load/store_dwordx4."""
    tool = hipcc()
    if tool.path is None:
        pytest.skip(tool.reason)
    src = tmp_path / "k.hip"
    src.write_text(render(wg.compile(str(ROOT / "examples" / "kernels" / "vector_add4.py")), "hip").source)
    flags = ["--offload-arch=gfx90a", "--cuda-device-only", "-S", "-x", "hip"]
    env = {**os.environ, "HIP_PLATFORM": "amd"}
    subprocess.run([tool.path, *flags, str(src), "-o", str(tmp_path / "k.s")], check=True, env=env, capture_output=True)
    asm = (tmp_path / "k.s").read_text()
    assert count(asm, r"\bglobal_load_dwordx4\b") == 2 and count(asm, r"\bglobal_store_dwordx4\b") == 1
