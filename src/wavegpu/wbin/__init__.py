"""The .wbin container: program model, writer and strict reader."""

from __future__ import annotations

import os

from ..errors import WbinError
from .format import read, write
from .program import Kernel, Param, Program, SourceLoc


def load(path: str | os.PathLike[str]) -> Program:
    """Read a .wbin file; WbinError (naming the file and byte offset) on bad input."""
    p = os.fspath(path)
    try:
        with open(p, "rb") as f:
            data = f.read()
    except OSError as e:
        raise WbinError(f"cannot read file: {e.strerror}", None, p) from None
    return read(data, p)


__all__ = ["Kernel", "Param", "Program", "SourceLoc", "load", "read", "write"]
