"""The compiled engine: each kernel translated once (generated Python over the structured
program, compiled by numba to machine code and cached on disk), workgroups run in parallel.

Importing this package is cheap; numba is imported when a kernel is first translated.
"""

from __future__ import annotations

import importlib.util


def available() -> bool:
    """Whether numba (the `compiled` extra) is installed."""
    return importlib.util.find_spec("numba") is not None and importlib.util.find_spec("llvmlite") is not None


__all__ = ["available"]
