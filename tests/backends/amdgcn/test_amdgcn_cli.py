"""`wave translate --target amdgcn`: assembly text per architecture, `--hsaco` code objects
through llvm-mc and ld.lld, and the errors a user can make (each a message, never a traceback)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cli_helpers import run_wave

EX = Path(__file__).resolve().parents[3] / "examples"


@pytest.mark.parametrize("arch", ["gfx90a", "gfx942", "gfx950"])
def test_translate_prints_assembly_for_each_architecture(arch: str) -> None:
    r = run_wave("translate", str(EX / "vector_add.wave"), "--target", "amdgcn", "--arch", arch)
    assert r.returncode == 0, r.stderr
    assert f'.amdgcn_target "amdgcn-amd-amdhsa--{arch}"' in r.stdout
    assert ".amdhsa_kernel vector_add" in r.stdout and ".amdgpu_metadata" in r.stdout


def test_hsaco_is_an_amdgpu_code_object(tmp_path: Path) -> None:
    if shutil.which("llvm-mc-22") is None or shutil.which("ld.lld-22") is None:
        pytest.skip("llvm-mc-22/ld.lld-22 are not installed (make test installs llvm-22 and lld-22)")
    out = tmp_path / "k.hsaco"
    r = run_wave("translate", str(EX / "reduce.wave"), "-t", "amdgcn", "--arch", "gfx950", "--hsaco", "-o", str(out))
    assert r.returncode == 0, r.stderr
    data = out.read_bytes()
    assert data[:4] == b"\x7fELF" and data[18:20] == (224).to_bytes(2, "little")  # EM_AMDGPU
    assert b"reduce_sum.kd" in data


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--wave-width", "32"), "wave width 32"),
        (("--arch", "gfx1100"), "unknown AMDGCN architecture"),
        (("--hsaco",), "give -o FILE"),
    ],
)
def test_user_errors_are_messages(args: tuple[str, ...], message: str) -> None:
    r = run_wave("translate", str(EX / "vector_add.wave"), "-t", "amdgcn", *args)
    assert r.returncode == 1 and message in r.stderr and "Traceback" not in r.stderr


def test_hsaco_is_only_for_amdgcn(tmp_path: Path) -> None:
    r = run_wave("translate", str(EX / "vector_add.wave"), "-t", "ptx", "--hsaco", "-o", str(tmp_path / "k"))
    assert r.returncode == 1 and "amdgcn target only" in r.stderr
