"""The compile cache: compiled programs in memory and on disk (cache root/kernels), keyed by the
source, everything else the binary depends on, and the compiler's own version and source."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import inspect
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


def used_globals(fn: Callable[..., Any], _seen: set[int] | None = None) -> dict[str, str]:
    """The module-level values a function refers to (constants, by repr; others by type), and
    for the functions it may call as helpers (a def of a user module, by name or as a module's
    attribute) their source and the values they use in turn: a helper edited in another module
    is a new binary."""
    seen = set() if _seen is None else _seen
    seen.add(id(fn))
    g = getattr(fn, "__globals__", {})
    out: dict[str, str] = {}
    names = sorted(names_of(fn.__code__)) if hasattr(fn, "__code__") else []
    for name in names:
        if name in g:
            v = g[name]
            simple = isinstance(v, SIMPLE_VALUES) or (
                isinstance(v, tuple) and all(isinstance(x, SIMPLE_VALUES) for x in v)
            )
            out[name] = repr(v) if simple else type(v).__qualname__
            if inspect.ismodule(v) and not v.__name__.startswith(_NOT_HELPERS):
                for attr in names:  # `mylib.sq(x)`: the attribute's name is among the code's names
                    out |= _helper_key(f"{name}.{attr}", getattr(v, attr, None), seen)
            else:
                out |= _helper_key(name, v, seen)
    return out


_NOT_HELPERS = ("wavegpu", "math", "numpy")  # modules whose functions are no helpers


def _helper_key(name: str, v: object, seen: set[int]) -> dict[str, str]:
    """A user function's source and used values, as cache-key entries (nothing for other values)."""
    if not inspect.isfunction(v) or id(v) in seen or (v.__module__ or "").startswith("wavegpu"):
        return {}
    try:
        text = inspect.getsource(v)
    except (OSError, TypeError):
        text = "<no source>"
    digest = hashlib.sha256(text.encode()).hexdigest()
    inner = used_globals(v, seen)
    return {f"{name}()": digest, **{f"{name}().{k}": x for k, x in inner.items()}}


def helper_bindings(fn: Callable[..., Any], _seen: set[int] | None = None) -> list[tuple[dict[str, Any], str, object]]:
    """(namespace, name, function) of every user function a kernel may call as a helper, directly
    or through others (`sq` of its globals, `mylib.sq` of a module it uses): a later call compiles
    again when one of these names is bound to another function (a helper redefined)."""
    seen = set() if _seen is None else _seen
    seen.add(id(fn))
    g = getattr(fn, "__globals__", {})
    names = names_of(fn.__code__) if hasattr(fn, "__code__") else set()
    out: list[tuple[dict[str, Any], str, object]] = []
    for name in names:
        v = g.get(name)
        places: list[tuple[dict[str, Any], str, object]] = [(g, name, v)]
        if inspect.ismodule(v) and not v.__name__.startswith(_NOT_HELPERS):
            places = [(vars(v), a, getattr(v, a, None)) for a in names]
        for d, n, w in places:
            if inspect.isfunction(w) and not (w.__module__ or "").startswith("wavegpu"):
                out.append((d, n, w))  # every binding, also of a function met before
                if id(w) not in seen:
                    out += helper_bindings(w, seen)
    return out


def same_helpers(bindings: list[tuple[dict[str, Any], str, object]]) -> bool:
    """Whether every helper name still holds the function it held (helper_bindings)."""
    return all(d.get(n, MISSING) is w for d, n, w in bindings)


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
