"""The `wave` command line: exit codes, outputs, and no tracebacks for bad input."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cli_helpers import run_wave as run
from corpus import EXAMPLES


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


def _emu(*args: str) -> subprocess.CompletedProcess[str]:
    code = "import sys; from wavegpu.cli import emu_main; sys.argv[0] = 'wave-emu'; emu_main()"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120)


VADD = str(next(p for p in EXAMPLES if p.name == "vector_add.wave"))


def test_wave_emu_runs_rust_style_scripts(tmp_path: Path) -> None:
    wbin = tmp_path / "v.wbin"
    assert run("asm", VADD, "-o", str(wbin)).returncode == 0
    r = _emu(
        str(wbin),
        "--grid",
        "1,1,1",
        "--workgroup",
        "256,1,1",
        "--fill-iota",
        "0:f32:256:1",
        "--fill-iota",
        "1024:f32:256:2",
        "--fill-zero",
        "2048:f32:256",
        "--set-reg",
        "0:0",
        "--set-reg",
        "1:1024",
        "--set-reg",
        "2:0x800",
        "--set-reg",
        "3:256",
        "--dump-f32",
        "2048:4",
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["0.0", "3.0", "6.0", "9.0"]


def test_wave_emu_files_after_fills_and_dumps(tmp_path: Path) -> None:
    import numpy as np

    data = tmp_path / "in.bin"
    data.write_bytes(np.array([1.5, 2.5], np.float32).tobytes())
    r = _emu(
        VADD,
        "--fill-iota",
        "0:f32:4:10",
        "--arg",
        f"0:{data}",
        "--fill-zero",
        "64:u32:4",
        "--set-reg",
        "0:0",
        "--set-reg",
        "1:0",
        "--set-reg",
        "2:64",
        "--set-reg",
        "3:4",
        "--dump-f32",
        "64:4",
        "--dump-u32",
        "0:1",
        "--dump-f16",
        "0:2",
        "--stats",
    )
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[:4] == [
        "3.0",
        "5.0",
        "40.0",
        "60.0",
    ]  # a + a, with the file over the first two iota values
    assert lines[4] == str(np.array([1.5], np.float32).view(np.uint32)[0])
    assert lines[5:7] == ["0.0", "1.9375"]  # the halves of 1.5f (0x3FC00000) as f16
    assert "SIMD efficiency" in r.stdout


def test_wave_emu_errors(tmp_path: Path) -> None:
    r = _emu(VADD, "--fill-zero", "2000000:u32:4")
    assert r.returncode == 1 and r.stderr.startswith("Error:") and "device memory" in r.stderr
    r = _emu(VADD, "--set-reg", "0:5", "--set-reg", "3:64", "--dump-u32", "0:1")
    assert r.returncode == 1 and "out-of-bounds" not in r.stdout and "Error:" in r.stderr
    assert "Traceback" not in r.stderr


def test_wave_run_with_npy_buffers(tmp_path: Path) -> None:
    import numpy as np

    a = tmp_path / "a.npy"
    np.save(a, np.arange(300, dtype=np.float32))
    out = tmp_path / "c.npy"
    r = run(
        "run",
        VADD,
        "--grid",
        "2",
        f"a={a}",
        "b=iota:300",
        "c=zeros:300",
        "n=300",
        "--out",
        f"c={out}",
        "--print",
        "c:3",
        "--stats",
        "--check",
    )
    assert r.returncode == 0, r.stderr
    assert np.array_equal(np.load(out), 2 * np.arange(300, dtype=np.float32))
    assert "c[:3] = [0. 2. 4.]" in r.stdout and "lane instructions" in r.stdout


def test_wave_run_reports_traps_with_place(tmp_path: Path) -> None:
    r = run("run", VADD, "--grid", "2", "a=zeros:10", "b=zeros:10", "c=zeros:10", "n=512")
    assert r.returncode == 1
    assert "trap: out-of-bounds" in r.stderr and "kernel 'vector_add'" in r.stderr
    assert "workgroup (" in r.stderr and "vector_add.wave:" in r.stderr  # the assembly line
    assert "Traceback" not in r.stderr


def test_wave_run_usage_errors() -> None:
    assert run("run", VADD, "--grid", "1", "x=1").returncode == 2
    assert run("run", VADD, "a=zeros:4").returncode == 2  # --grid missing
    r = run("run", VADD, "--grid", "1", "a=zeros:4", "b=zeros:4", "c=zeros:4", "n=abc")
    assert r.returncode == 2
