"""Running the `wave` command line from tests (a fresh interpreter, as a user would)."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import threading
from pathlib import Path

WAVE = [sys.executable, "-m", "wavegpu.cli"]
# the console script's own entry (cli.resident.emu_entry: its exit, cli.resident.exit_now, included)
WAVE_EMU = [
    sys.executable,
    "-c",
    "import sys; from wavegpu.cli.resident import emu_entry; sys.argv[0] = 'wave-emu'; emu_entry()",
]


def run_wave(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*WAVE, *args], capture_output=True, text=True, cwd=cwd, timeout=120)


def run_emu(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*WAVE_EMU, *args], capture_output=True, text=True, timeout=120)


def run_with_terminal_stderr(cmd: list[str], timeout: float = 120) -> tuple[int, str, str]:
    """Run cmd with stderr on a pseudo-terminal (as in an interactive shell) and stdout on a pipe:
    (exit status, stdout, everything written to the terminal)."""
    master, slave = pty.openpty()
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "100", "LINES": "40"}
    for var in ("NO_COLOR", "FORCE_COLOR", "TERM_PROGRAM", "CI"):
        env.pop(var, None)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=slave, stdin=subprocess.DEVNULL, env=env)
    os.close(slave)
    chunks: list[bytes] = []

    def drain() -> None:  # keep reading, or a full terminal buffer would block the child
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:  # EIO once the child has closed its end
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        stdout, _ = proc.communicate(timeout=timeout)
    finally:
        reader.join(timeout=10)
        os.close(master)
    return proc.returncode, stdout.decode(), b"".join(chunks).decode(errors="replace")
