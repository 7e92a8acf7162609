"""The command line: `wave` (cli.wave) and the Rust-compatible `wave-emu` (cli.emu); the only
place that prints for users or exits. Exit status: 0 success, 1 bad input (a WaveError), 2 bad usage.

`main` and `emu_main` are imported on first use, so `wave-emu` never loads the `wave` commands
(and through them the compiler and the backends).
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # as in wavegpu/__init__.py: no typing import on the client's path
if TYPE_CHECKING:
    from typing import Any

_ENTRIES = {"main": ".wave", "emu_main": ".emu"}


def __getattr__(name: str) -> Any:
    module = _ENTRIES.get(name)
    if module is None:
        raise AttributeError(f"module 'wavegpu.cli' has no attribute {name!r}")
    return getattr(importlib.import_module(module, __name__), name)


if TYPE_CHECKING:
    from .emu import emu_main as emu_main
    from .wave import main as main

__all__ = ["emu_main", "main"]
