"""The command line: `wave` (cli.wave) and the Rust-compatible `wave-emu` (cli.emu); the only
place that prints for users or exits. Exit status: 0 success, 1 bad input (a WaveError), 2 bad usage.
"""

from .emu import emu_main
from .wave import main

__all__ = ["emu_main", "main"]
