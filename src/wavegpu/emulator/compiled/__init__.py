"""The compiled engine: each kernel translated once (the structured program as generated C
compiled by the system C compiler, or as generated Python compiled by numba; both cached on
disk), workgroups run in parallel.

Importing this package is cheap; numba is imported when a kernel is first translated.
"""

from __future__ import annotations

import importlib.util


def numba_available() -> bool:
    """Whether numba (the `compiled` extra) is installed."""
    return importlib.util.find_spec("numba") is not None and importlib.util.find_spec("llvmlite") is not None


def available() -> bool:
    """Whether the compiled engine can run here: numba installed, or a C compiler on PATH
    (cbuild.compiler); $WAVEGPU_COMPILED naming one asks for that one."""
    import os

    want = os.environ.get("WAVEGPU_COMPILED", "").strip().lower()
    if want != "c" and numba_available():
        return True
    if want == "numba":
        return False
    from .cbuild import has_compiler

    return has_compiler()


__all__ = ["available", "numba_available"]
