"""The compiled engine's module cache (emulator/compiled/cache.py): modules are compiled from the
source generated, written and cached through the private folder's descriptor; numba's cache of
their machine code keeps working through it; WAVEGPU_CACHE_DIR= (empty) writes nothing at all."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("numba")

PROBE = r"""
import sys
from wavegpu.emulator.compiled import cache
src = "from numba import njit\n@njit(cache=True)\ndef f(x):\n    return x + 41\n"
mod = cache.load(cache.key_of(src), src, "_probe_module")
print(mod.f(1), sum(mod.f.stats.cache_hits.values()), mod.__file__)
if sys.argv[1:] == ["helpers"]:
    from numba.core.caching import NullCache
    from wavegpu.emulator.compiled import control, scalar
    print(all(isinstance(v._cache, NullCache) for m in (control, scalar) for v in vars(m).values()
              if hasattr(v, "_cache") and hasattr(v, "py_func")))
"""


def probe(env: dict[str, str], *args: str) -> list[str]:
    r = subprocess.run(
        [sys.executable, "-c", PROBE, *args], env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout.split("\n")


def files_under(p: Path) -> list[str]:
    return sorted(str(f.relative_to(p)) for f in p.rglob("*"))


def test_numba_caches_through_the_folders_descriptor(tmp_path: Path) -> None:
    root = tmp_path / "cache"
    env = {**os.environ, "WAVEGPU_CACHE_DIR": str(root)}
    first = probe(env)[0].split()
    second = probe(env)[0].split()
    assert first[:2] == ["42", "0"] and second[:2] == ["42", "1"]  # the second process loads numba's cache
    assert first[2].startswith("/proc/self/fd/") and first[2].endswith("/kernel.py")  # never a path again
    (folder,) = (root / "compiled").iterdir()
    assert (folder / "kernel.py").read_text().startswith("from numba import njit")
    assert any(f.suffix == ".nbi" for f in (folder / "__pycache__").iterdir())
    modes = {str(p.relative_to(root)): p.stat().st_mode & 0o777 for p in [root, *root.rglob("*")] if p.is_dir()}
    assert set(modes.values()) == {0o700}, modes


def test_an_empty_cache_dir_writes_nothing(tmp_path: Path) -> None:
    """WAVEGPU_CACHE_DIR= turns off every on-disk cache of wavegpu, the compiled engine's included:
    modules compile in memory and numba caches none of them (nor the engine's own functions)."""
    home, xdg = tmp_path / "home", tmp_path / "xdg"
    home.mkdir()
    xdg.mkdir()
    env = {**os.environ, "WAVEGPU_CACHE_DIR": "", "HOME": str(home), "XDG_CACHE_HOME": str(xdg)}
    env.pop("NUMBA_CACHE_DIR", None)
    out = probe(env, "helpers")
    assert out[0].split()[:2] == ["42", "0"] and out[1] == "True"  # compiled in memory
    assert "<wavegpu: no disk cache>" in out[0]  # its file name: nothing on disk
    assert files_under(home) == [] and files_under(xdg) == []
