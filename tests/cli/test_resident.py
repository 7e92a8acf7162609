"""The resident process (WAVEGPU_SERVER=1, cli/resident.py): a command it serves gives the same
output, on the same streams, and the same exit status as a local run; its key follows the code
and the environment; it is never used for a terminal."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import wavegpu as wg
from corpus import EXAMPLES

pytestmark = pytest.mark.skipif(os.name != "posix", reason="the resident server uses Unix sockets")

ENTRY = "import sys; from wavegpu.cli.resident import {0}; sys.argv[0] = {1!r}; {0}()"
# forward() alone: what it returned is written to a file (stdout and stderr go to the server)
PROBE = (
    "import sys; from wavegpu.cli.resident import forward; r = forward({0!r}, sys.argv[2:]); "
    "open(sys.argv[1], 'w').write(repr(r))"
)


@pytest.fixture
def server_env() -> Iterator[dict[str, str]]:
    """A private cache folder with a short path (a Unix socket's is limited to about 100 bytes),
    WAVEGPU_SERVER=1, and the server stopped afterwards."""
    root = tempfile.mkdtemp(prefix="wgs", dir="/tmp")
    env = {**os.environ, "WAVEGPU_CACHE_DIR": root, "WAVEGPU_SERVER": "1", "WAVEGPU_SERVER_IDLE": "120"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    try:
        yield env
    finally:
        for lock in Path(root, "server").glob("*.lock"):
            pid = lock.read_text().strip()
            if pid.isdigit():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(pid), signal.SIGTERM)
        shutil.rmtree(root, ignore_errors=True)


def entry(prog: str, args: list[str], env: dict[str, str], cwd: str | None = None) -> subprocess.CompletedProcess[str]:
    name = "emu_entry" if prog == "wave-emu" else "wave_entry"
    cmd = [sys.executable, "-c", ENTRY.format(name, prog), *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd, timeout=120)


def served(prog: str, args: list[str], env: dict[str, str], tmp: Path, cwd: str | None = None):  # type: ignore[no-untyped-def]
    """(forward's result, the completed process) of one client call."""
    note = tmp / "forward.txt"
    cmd = [sys.executable, "-c", PROBE.format(prog), str(note), *args]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd, timeout=120)
    return note.read_text(), r


def timeless(text: str) -> str:
    return re.sub(r" in [0-9.]+ [mu]?s\b", " in T", text)  # `wave run` says how long the kernel took


def wait_for_server(env: dict[str, str], tmp: Path) -> None:
    """Call until a server answers (the first call starts one; it loads NumPy and numba)."""
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        got, _ = served("wave-emu", ["--help"], env, tmp)
        if got != "None":
            return
        time.sleep(0.5)
    raise AssertionError("no server answered within 90 s")


def test_served_commands_are_local_runs(server_env: dict[str, str], tmp_path: Path) -> None:
    wbin = tmp_path / "va.wbin"
    wbin.write_bytes(wg.assemble(next(p for p in EXAMPLES if p.name == "vector_add.wave").read_text()).to_bytes())
    np.arange(256, dtype=np.float32).tofile(tmp_path / "a.bin")
    run = [
        "va.wbin", "--grid", "1", "--workgroup", "256", "--set-reg", "r1:1024", "--set-reg", "r2:2048",
        "--set-reg", "r3:256", "--arg", "0:a.bin", "--fill-iota", "1024:f32:256", "--dump-f32", "2048:8",
    ]  # fmt: skip
    cases = [
        ("wave-emu", run),  # relative paths: the server works in the client's folder
        ("wave-emu", [*run[:-2], "--dump-f32", "4000000:8"]),  # bad input: status 1, "Error: ..."
        ("wave-emu", ["va.wbin", "--grid", "x"]),  # a usage error (click): status 2, named wave-emu
        ("wave-emu", ["missing.wbin"]),
        ("wave", ["run", str(next(p for p in EXAMPLES if p.name == "vector_add.wave")), "--grid", "1",
                  "a=iota:256", "b=iota:256", "c=zeros:256", "n=256", "--print", "c:4"]),
    ]  # fmt: skip
    local_env = {k: v for k, v in server_env.items() if k != "WAVEGPU_SERVER"}
    local = [entry(prog, args, local_env, cwd=str(tmp_path)) for prog, args in cases]
    assert local[0].returncode == 0 and local[0].stdout.split()[:2] == ["0.0", "2.0"], local[0].stderr
    assert local[1].returncode == 1 and local[2].returncode == 2 and local[4].returncode == 0
    wait_for_server(server_env, tmp_path)
    for (prog, args), want in zip(cases, local):
        got, r = served(prog, args, server_env, tmp_path, cwd=str(tmp_path))
        assert got == str(want.returncode), (prog, args, got, r.stderr)
        assert (timeless(r.stdout), r.stderr) == (timeless(want.stdout), want.stderr), (prog, args)
    # and through the console script's entry: the server's status is the process's
    r = entry("wave-emu", cases[1][1], server_env, cwd=str(tmp_path))
    assert (r.returncode, r.stdout, r.stderr) == (1, local[1].stdout, local[1].stderr)


def test_served_files_follow_the_callers_umask(server_env: dict[str, str], tmp_path: Path) -> None:
    """A file the command writes gets the mode a local run in the caller's umask would give."""
    src = str(next(p for p in EXAMPLES if p.name == "vector_add.wave"))
    args = ["run", src, "--grid", "1", "a=iota:256", "b=iota:256", "c=zeros:256", "n=256"]
    wait_for_server(server_env, tmp_path)
    for mask in (0o077, 0o002):
        note = tmp_path / "forward.txt"
        out = tmp_path / f"c{mask:o}.npy"
        cmd = [sys.executable, "-c", PROBE.format("wave"), str(note), *args, "--out", f"c={out.name}"]
        r = subprocess.run(cmd, capture_output=True, text=True, env=server_env, cwd=tmp_path, umask=mask, timeout=120)
        assert note.read_text() == "0", r.stderr  # served
        assert out.stat().st_mode & 0o777 == 0o666 & ~mask
        assert np.array_equal(np.load(out), np.arange(256, dtype=np.float32) * 2)


def test_not_offered(server_env: dict[str, str], tmp_path: Path) -> None:
    """Other `wave` commands, a terminal, and WAVEGPU_SERVER unset run here, and start nothing."""
    got, r = served("wave", ["info", "--device"], server_env, tmp_path)
    assert got == "None" and r.returncode == 0
    env = {k: v for k, v in server_env.items() if k != "WAVEGPU_SERVER"}
    assert served("wave-emu", ["--help"], env, tmp_path)[0] == "None"
    assert not Path(server_env["WAVEGPU_CACHE_DIR"], "server").exists()
    from cli_helpers import run_with_terminal_stderr

    code, _, _ = run_with_terminal_stderr(
        [sys.executable, "-c", PROBE.format("wave-emu"), str(tmp_path / "t"), "--help"]
    )
    assert code == 0 and (tmp_path / "t").read_text() == "None"


def test_key_follows_code_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from wavegpu.cli import resident

    key = resident.server_key()
    assert resident.server_key() == key
    monkeypatch.setenv("WAVEGPU_THREADS", "1")
    assert resident.server_key() != key
    monkeypatch.delenv("WAVEGPU_THREADS")
    assert resident.server_key() == key
    module = Path(resident.__file__)
    st = module.stat()
    try:
        os.utime(module, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
        assert resident.server_key() != key  # an edited checkout: a new server
    finally:
        os.utime(module, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert resident.server_key() == key


def test_client_imports_neither_numpy_nor_the_emulator() -> None:
    code = (
        "import sys; from wavegpu.cli import resident; from wavegpu.paths import open_private; "
        "resident.socket_name(); open_private('server').close(); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'typing', 'pathlib', 'json') "
        "or m.startswith(('wavegpu.emulator', 'wavegpu.errors'))))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert r.stdout.strip() == "[]"
    # and without WAVEGPU_SERVER=1 the console scripts' module costs nothing beyond os and sys
    code = "import sys; import wavegpu.cli.resident; print(sorted({'socket', 'struct', 'zlib'} & set(sys.modules)))"
    env = {k: v for k, v in os.environ.items() if k != "WAVEGPU_SERVER"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True, env=env)
    assert r.stdout.strip() == "[]"


SPIN = """
.kernel spin
.workgroup_size 64, 1, 1
    mov.u32 r1, 2000000
    loop
        setp.eq.u32 p0, r1, 0
        break p0
        sub.u32 r1, r1, 1
    endloop
    ret
.end
"""


def test_a_server_that_dies_mid_command(server_env: dict[str, str], tmp_path: Path) -> None:
    """The client reports it (status 1) and does not run the command a second time itself."""
    (tmp_path / "spin.wave").write_text(SPIN)
    wait_for_server(server_env, tmp_path)
    cmd = [sys.executable, "-c", ENTRY.format("emu_entry", "wave-emu"), "spin.wave", "--check", "--max-instructions", "0",
           "--dump-u32", "0:1"]  # fmt: skip
    p = subprocess.Popen(cmd, cwd=tmp_path, env=server_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)  # the server is running the kernel (seconds on the NumPy engine, for --check)
    (lock,) = Path(server_env["WAVEGPU_CACHE_DIR"], "server").glob("*.lock")
    os.kill(int(lock.read_text()), signal.SIGKILL)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 1 and out == "", (out, err)
    assert "the resident server (WAVEGPU_SERVER=1) stopped during the command" in err
