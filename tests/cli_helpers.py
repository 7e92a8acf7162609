"""Running the `wave` command line from tests (a fresh interpreter, as a user would)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

WAVE = [sys.executable, "-m", "wavegpu.cli"]


def run_wave(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*WAVE, *args], capture_output=True, text=True, cwd=cwd, timeout=120)
