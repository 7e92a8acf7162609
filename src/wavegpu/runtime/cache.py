"""The compile cache: compiled programs in memory and on disk (cache root/kernels), keyed by the
source, everything else the binary depends on, and the compiler's own version and source."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import types
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import WaveError
from ..wbin.program import Program
from . import files

_MEMORY_CACHE: dict[str, Program] = {}
SIMPLE_VALUES = (int, float, bool, str, complex, bytes, np.generic)


def cache_dir() -> files.PrivateDir | None:
    """The folder of compiled kernels (cache root/kernels, private: 0700 and owned by the user),
    open (close it), or None: the disk cache is off (WAVEGPU_CACHE_DIR set empty) or its folder
    is refused (a warning)."""
    if files.disk_cache_off():
        return None
    try:
        return files.open_private("kernels")
    except WaveError as e:
        warnings.warn(f"wavegpu: compile cache off: {e}", stacklevel=3)
        return None


@functools.cache
def compiler_version() -> str:
    """The package's version and a hash of its own source: an upgraded or edited wavegpu never
    serves binaries an older one compiled."""
    import importlib.metadata  # here: it loads email, zipfile, csv (start-up of `wave run k.py`)

    h = hashlib.sha256()
    try:
        h.update(importlib.metadata.version("wavegpu").encode())
    except importlib.metadata.PackageNotFoundError:
        h.update(b"unknown")
    root = Path(__file__).resolve().parents[1]
    for f in sorted(root.rglob("*.py")):
        h.update(str(f.relative_to(root)).encode() + b"\0")
        h.update(f.read_bytes())
    return h.hexdigest()


def names_of(code: types.CodeType) -> set[str]:
    out = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            out |= names_of(c)
    return out


def used_globals(fn: Callable[..., Any]) -> dict[str, str]:
    """The module-level values a function refers to (constants, by repr; others by type and id)."""
    g = getattr(fn, "__globals__", {})
    out: dict[str, str] = {}
    for name in sorted(names_of(fn.__code__)) if hasattr(fn, "__code__") else ():
        if name in g:
            v = g[name]
            simple = isinstance(v, SIMPLE_VALUES) or (
                isinstance(v, tuple) and all(isinstance(x, SIMPLE_VALUES) for x in v)
            )
            out[name] = repr(v) if simple else type(v).__qualname__
    return out


MISSING = object()


def same_globals(fn: Callable[..., Any], seen: tuple[tuple[str, object], ...]) -> bool:
    """Whether every module-level name the function uses still holds the very object it held
    (an identical object has the repr and type used_globals gave the full key)."""
    g = getattr(fn, "__globals__", {})
    return all(g.get(n, MISSING) is v for n, v in seen)


def _cache_key(source: str, context: dict[str, object]) -> str:
    h = hashlib.sha256()
    h.update(compiler_version().encode())
    h.update(source.encode())
    h.update(repr(sorted(context.items())).encode())
    return h.hexdigest()


def compile_cached(source_key: str, context: dict[str, object], build: Callable[[], Program]) -> Program:
    """A program from the memory cache, the disk cache, or `build` (then stored in both).

    `context` holds everything besides the text that the binary depends on: the file and first
    line (the line table), the module-level values used, and the options. An entry that cannot
    be read for any reason is rebuilt; entries are written through unique temporary names."""
    key = _cache_key(source_key, context)
    prog = _MEMORY_CACHE.get(key)
    if prog is not None:
        return prog
    d = cache_dir()
    try:
        name = f"{key}.wbin"
        if d is not None:
            try:  # read through the folder's descriptor: the file checked is the file read
                prog = Program.from_bytes(d.read_bytes(name), d.where(name))
            except Exception:
                prog = None
        if prog is None:
            prog = build()
            if d is not None:
                with contextlib.suppress(OSError):  # the cache is an optimisation; a read-only home still compiles
                    d.write_bytes(name, prog.to_bytes())
    finally:
        if d is not None:
            d.close()
    _MEMORY_CACHE[key] = prog
    return prog
