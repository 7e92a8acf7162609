"""Vector access in the PTX backend, measured without a GPU: the .v4 rows the compiler merges
(passes/vectorize.py) reach the SASS as 128-bit accesses: `LDG.E.128`/`STG.E.128` for the
four-per-thread vector add, `LDS.128` for the register-blocked SGEMM's local tiles (ptxas from
CUDA, nvdisasm from the nvidia-cuda-nvdisasm wheel; skipped without them)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from test_sass import ARCH, nvdisasm

import wavegpu as wg
from toolchains import ptxas
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
