"""Where translated kernels live: a private per-user folder of generated modules, one per
translation key, beside numba's own cache of their machine code (`cache=True`)."""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import sys
import tempfile
import threading
from pathlib import Path
from types import ModuleType

from ...errors import WaveError
from ...paths import cache_root, private_dir

_LOCK = threading.Lock()
_LOADED: dict[str, ModuleType] = {}


@functools.lru_cache(maxsize=1)
def engine_digest() -> str:
    """What a translation depends on besides the kernel: this package's code, wavegpu's and
    numba's versions."""
    from importlib.metadata import version

    from ... import __version__

    h = hashlib.sha256(f"{__version__}|{version('numba')}|{sys.version_info[:2]}".encode())
    here = Path(__file__).resolve().parent
    for name in sorted(p.name for p in here.glob("*.py")):
        h.update(name.encode())
        h.update((here / name).read_bytes())
    return h.hexdigest()


def is_cached(key: str) -> bool:
    """Whether the translation `key` is loaded in this process or its module is on disk."""
    return key in _LOADED or (cache_root() / "compiled" / key / "kernel.py").is_file()


def load_rows() -> ModuleType:
    """The shared row module (opsgen), generated once per engine digest and registered under
    codegen.OPS_MODULE, which every driver imports."""
    from .codegen import OPS_MODULE
    from .opsgen import module

    mod = sys.modules.get(OPS_MODULE)
    if mod is not None:
        return mod
    return load("rows-" + engine_digest()[:32], module(), OPS_MODULE)


def load(key: str, source: str, name: str | None = None) -> ModuleType:
    """The generated module for `key` (written atomically on first use, then imported; numba
    caches its machine code in the folder's __pycache__)."""
    mod = _LOADED.get(key)
    if mod is not None:
        return mod
    with _LOCK:
        mod = _LOADED.get(key)
        if mod is not None:
            return mod
        folder = private_dir("compiled", key)
        path = folder / "kernel.py"
        data = source.encode()
        if not path.is_file() or path.read_bytes() != data:
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=".kernel-", suffix=".py")
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                os.replace(tmp, path)
            except OSError as e:
                with _suppress():
                    os.unlink(tmp)
                raise WaveError(f"{path}: cannot write the compiled kernel: {e.strerror}") from None
        name = name or f"_wavegpu_compiled_{key[:24]}"
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod  # numba's cache finds the functions' module by name
        spec.loader.exec_module(mod)
        _LOADED[key] = mod
        return mod


class _suppress:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return True


def key_of(source: str) -> str:
    return hashlib.sha256((engine_digest() + "\n" + source).encode()).hexdigest()[:40]
