"""Where translated kernels live: a private per-user folder of generated modules, one per
translation key, beside numba's own cache of their machine code (`cache=True`).

The folder (cache root/compiled) is opened once per cache root and kept open (paths.PrivateDir):
a module is written through its descriptor, compiled from the very bytes generated (never
imported by path), and numba reaches its cache through /proc/self/fd/N/<key>/__pycache__, so
what it reads (pickles) is what this user wrote there, whatever the cache root's path says
later. With WAVEGPU_CACHE_DIR set empty, or where there is no /proc, nothing is written: modules
compile in memory and numba caches nothing of wavegpu's, so every process compiles its kernels
again (seconds each)."""

from __future__ import annotations

import functools
import hashlib
import linecache
import sys
import threading
import types
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any, Generic, TypeVar

from ...errors import WaveError
from ...paths import PrivateDir, cache_root_str, disk_cache_off, open_private, proc_available

T = TypeVar("T")


class Once(Generic[T]):
    """What a process makes once per key (a loaded translation), under a lock: a second thread
    asking for the same key waits for the first's and gets it; what raises is not kept."""

    def __init__(self) -> None:
        self._made: dict[str, T] = {}
        self._lock = threading.Lock()

    def get(self, key: str, make: Callable[[], T]) -> T:
        got = self._made.get(key)
        if got is not None:
            return got
        with self._lock:
            got = self._made.get(key)
            if got is None:
                got = self._made[key] = make()
            return got

    def __contains__(self, key: str) -> bool:
        return key in self._made

    def __len__(self) -> int:
        return len(self._made)

    def pop(self, key: str) -> T | None:
        """Forget `key` (the next `get` makes it again)."""
        return self._made.pop(key, None)


_LOADED: Once[ModuleType] = Once()
_DIRS: dict[str, PrivateDir] = {}  # cache root -> its compiled/ folder, open for the process's life
# a generated module's file name -> (numba's cache folder for it, or None: memory only; its source's hash)
_SOURCES: dict[str, tuple[str | None, bytes]] = {}
_MEMORY_PATH = "<wavegpu: no disk cache>"


def code_digest(what: str) -> str:
    """A sha256 of `what` (the versions and settings a translation depends on) and of this
    package's code: a translation cached under it is stale once either changes."""
    h = hashlib.sha256(what.encode())
    here = Path(__file__).resolve().parent
    for name in sorted(p.name for p in here.glob("*.py")):
        h.update(name.encode())
        h.update((here / name).read_bytes())
    return h.hexdigest()


@functools.lru_cache(maxsize=1)
def engine_digest() -> str:
    """What a translation depends on besides the kernel: this package's code, wavegpu's and
    numba's versions."""
    from importlib.metadata import version

    from ...version import __version__

    return code_digest(f"{__version__}|{version('numba')}|{sys.version_info[:2]}")


def on_disk(key: str, filename: str) -> bool:
    """Whether the private cache folder holds `filename` of the translation `key`."""
    if disk_cache_off() or not proc_available():
        return False
    try:
        with open_private("compiled", key, create=False) as d:
            return d.exists(filename)
    except (OSError, WaveError):
        return False


def is_cached(key: str) -> bool:
    """Whether the translation `key` is loaded in this process or its module is on disk."""
    return key in _LOADED or on_disk(key, "kernel.py")


def load_rows() -> ModuleType:
    """The shared row module (opsgen), generated once per engine digest and registered under
    codegen.OPS_MODULE, which every driver imports."""
    from .codegen import OPS_MODULE
    from .opsgen import module

    mod = sys.modules.get(OPS_MODULE)
    if mod is not None:
        return mod
    return load("rows-" + engine_digest()[:32], module(), OPS_MODULE)


def _folder() -> PrivateDir | None:
    """The open compiled/ folder of the current cache root (None: nothing on disk). Kept open:
    the modules loaded from it compile, and numba caches, through its descriptor."""
    if disk_cache_off() or not proc_available():
        return None
    fresh = open_private("compiled")
    old = _DIRS.get(cache_root_str())
    if old is not None and old.identity() == fresh.identity():
        fresh.close()
        return old
    _DIRS[cache_root_str()] = fresh  # an older one stays open: its modules may still compile
    return fresh


def load(key: str, source: str, name: str | None = None) -> ModuleType:
    """The generated module for `key`: written (through the folder's descriptor) on first use,
    compiled from `source` itself into a fresh module; numba caches its machine code in the
    folder's __pycache__ (nothing on disk when the disk cache is off)."""
    return _LOADED.get(key, lambda: _module(key, source, name))


def _module(key: str, source: str, name: str | None) -> ModuleType:
    data = source.encode()
    folder = _folder()
    if folder is None:
        filename, cache = f"{_MEMORY_PATH} {key}/kernel.py", None
    else:
        try:
            with folder.subdir(key) as sub:
                try:
                    same = sub.read_bytes("kernel.py") == data
                except (OSError, WaveError):  # missing, or not this user's own file: rewritten
                    same = False
                if not same:
                    sub.write_bytes("kernel.py", data)
                sub.subdir("__pycache__").close()  # numba's, private like the rest
        except OSError as e:
            raise WaveError(f"{folder.where(key)}: cannot write the compiled kernel: {e.strerror}") from None
        filename = folder.fs_path(key) + "/kernel.py"
        cache = folder.fs_path(key) + "/__pycache__"
    _SOURCES[filename] = (cache, hashlib.sha256(data).digest())
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    _install_locator()
    if cache is None:
        _memory_only_helpers()
    name = name or f"_wavegpu_compiled_{key[:24]}"
    mod = types.ModuleType(name)
    mod.__file__ = filename
    sys.modules[name] = mod  # numba's cache finds the functions' module by name
    exec(compile(data, filename, "exec", dont_inherit=True), mod.__dict__)
    if cache is None:
        _no_disk_cache(mod)
    return mod


@functools.cache
def _install_locator() -> None:
    """Put _Locator first among numba's cache locators (once)."""
    from numba.core.caching import CacheImpl, _CacheLocator

    class _Locator(_CacheLocator):
        """numba's cache of a generated module: in its folder reached through the descriptor
        (never a path resolved again), its freshness the hash of the source compiled."""

        def __init__(self, py_func: Any, cache: str | None, stamp: bytes) -> None:
            self._lineno = py_func.__code__.co_firstlineno
            self._cache = cache
            self._stamp = stamp

        def ensure_cache_path(self) -> None:  # made (and checked) by load()
            pass

        def get_cache_path(self) -> str:
            return self._cache if self._cache is not None else _MEMORY_PATH

        def get_source_stamp(self) -> bytes:
            return self._stamp

        def get_disambiguator(self) -> str:
            return str(self._lineno)

        @classmethod
        def from_function(cls, py_func: Any, py_file: str) -> _Locator | None:
            entry = _SOURCES.get(py_file)
            return None if entry is None else cls(py_func, *entry)

    CacheImpl._locator_classes.insert(0, _Locator)


def _no_disk_cache(mod: ModuleType) -> None:
    """Turn numba's disk cache off for the functions of mod (before any of them compiles)."""
    from numba.core.caching import NullCache
    from numba.core.dispatcher import Dispatcher

    for v in list(vars(mod).values()):
        if isinstance(v, Dispatcher) and not isinstance(getattr(v, "_cache", None), NullCache):
            v._cache = NullCache()  # type: ignore[attr-defined]  # numba's default (enable_caching replaced it)


@functools.cache
def _memory_only_helpers() -> None:
    """The engine's own numba functions (control, scalar) cache nothing either when the disk cache
    is off (they would write beside the package or under ~/.cache/numba)."""
    from . import control, scalar

    for m in (control, scalar):
        _no_disk_cache(m)


def key_of(source: str) -> str:
    return hashlib.sha256((engine_digest() + "\n" + source).encode()).hexdigest()[:40]
