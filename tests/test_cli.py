"""The `wave` command line: exit codes, outputs, and no tracebacks for bad input."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from corpus import EXAMPLES

WAVE = [sys.executable, "-m", "wavegpu.cli"]


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*WAVE, *args], capture_output=True, text=True, cwd=cwd, timeout=120)


def test_asm_dis_info(tmp_path: Path) -> None:
    src = next(p for p in EXAMPLES if p.name == "vector_add.wave")
    out = tmp_path / "k.wbin"
    r = run("asm", str(src), "-o", str(out))
    assert r.returncode == 0, r.stderr
    r = run("dis", str(out))
    assert r.returncode == 0 and ".kernel" in r.stdout
    (tmp_path / "again.wave").write_text(r.stdout)
    assert run("asm", str(tmp_path / "again.wave"), "-o", str(tmp_path / "b.wbin")).returncode == 0
    assert (tmp_path / "b.wbin").read_bytes() == out.read_bytes()
    r = run("info", str(out))
    assert r.returncode == 0 and "instructions" in r.stdout and "parameters" in r.stdout
    r = run("info", "--device")
    assert r.returncode == 0 and "WAVE_WIDTH" in r.stdout and "CAP_MMA" in r.stdout


def test_default_output_name(tmp_path: Path) -> None:
    src = tmp_path / "v.wave"
    src.write_text(EXAMPLES[0].read_text())
    assert run("asm", str(src)).returncode == 0
    assert (tmp_path / "v.wbin").exists()


@pytest.mark.parametrize(
    "content, needle",
    [
        (".kernel k\n  add.s32 r1, r2\n.end\n", "k.wave:2:3: error:"),
        (".kernel k\n  frob\n  bar r1\n.end\n", "k.wave:3:"),
    ],
)
def test_bad_assembly_exits_1_with_diagnostics(tmp_path: Path, content: str, needle: str) -> None:
    f = tmp_path / "k.wave"
    f.write_text(content)
    r = run("asm", str(f), "-o", str(tmp_path / "o.wbin"))
    assert r.returncode == 1
    assert needle in r.stderr
    assert "Traceback" not in r.stderr + r.stdout
    assert "^" in r.stderr
    assert not (tmp_path / "o.wbin").exists()


def test_bad_wbin_exits_1(tmp_path: Path) -> None:
    f = tmp_path / "bad.wbin"
    f.write_bytes(b"WBIN" + b"\x01" * 40)
    for cmd in ("dis", "info"):
        r = run(cmd, str(f))
        assert r.returncode == 1
        assert "byte offset" in r.stderr
        assert "Traceback" not in r.stderr


def test_bad_usage_exits_2(tmp_path: Path) -> None:
    assert run("asm").returncode == 2
    assert run("asm", str(tmp_path / "missing.wave")).returncode == 2
    assert run("frobnicate").returncode == 2
    assert run("info").returncode == 2


def test_refuses_to_overwrite_input(tmp_path: Path) -> None:
    f = tmp_path / "k.wave"
    f.write_text(EXAMPLES[0].read_text())
    r = run("asm", str(f), "-o", str(f))
    assert r.returncode == 1
    assert "refusing to overwrite" in r.stderr
    assert f.read_text() == EXAMPLES[0].read_text()


def test_binary_garbage_as_text(tmp_path: Path) -> None:
    f = tmp_path / "junk.wave"
    f.write_bytes(b"\xff\xfe\x00garbage")
    r = run("dis", str(f))
    assert r.returncode == 1 and "Traceback" not in r.stderr
