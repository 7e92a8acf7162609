"""The compile cache: keyed on text, file, first line, module-level values, options and the
compiler itself; damaged entries rebuilt; entries written through unique temporary names."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import wavegpu as wg
from wavegpu.runtime import cache as sdk

KERNEL = """
import wavegpu as wg

SCALE = {scale}


@wg.kernel
def bad(y: wg.f32[:], n: wg.i32):
    i = wg.global_id()
    y[i + n] = 1.0
"""
# module-level constants in kernels come with the kernel-language issue; the key covers them now
USES_SCALE = KERNEL.replace("= 1.0", "= 1.0 * SCALE")


def _module(path: Path, text: str) -> ModuleType:
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(f"m_{abs(hash(str(path)))}", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "cache"
    monkeypatch.setenv("WAVEGPU_CACHE_DIR", str(d))
    sdk._MEMORY_CACHE.clear()
    return d / "kernels"


def _trap_source(mod: ModuleType) -> str:
    with pytest.raises(wg.Trap) as ei:
        mod.bad(np.zeros(4, np.float32), 1000, grid=1, workgroup=1)
    assert ei.value.source is not None
    return ei.value.source


def test_same_kernel_in_another_file_or_line_names_its_own(tmp_path: Path, cache: Path) -> None:
    a = _module(tmp_path / "a.py", KERNEL.format(scale=1))
    b = _module(tmp_path / "b.py", KERNEL.format(scale=1))
    c = _module(tmp_path / "c.py", "\n\n\n" + KERNEL.format(scale=1))
    sa, sb, sc = _trap_source(a), _trap_source(b), _trap_source(c)
    assert "a.py:" in sa and "b.py:" in sb and "c.py:" in sc
    assert int(sc.split(":")[-2]) == int(sa.split(":")[-2]) + 3
    assert len(list(cache.glob("*.wbin"))) == 3


def test_module_level_values_are_part_of_the_key(tmp_path: Path, cache: Path) -> None:
    a = _module(tmp_path / "a.py", USES_SCALE.format(scale=1))
    ka = sdk._cache_key(a.bad.source, a.bad.context())
    a.SCALE = 2
    assert sdk._cache_key(a.bad.source, a.bad.context()) != ka
    assert a.bad.context()["globals"]["SCALE"] == "2"


def test_the_compiler_version_is_its_source(monkeypatch: pytest.MonkeyPatch) -> None:
    v = sdk.compiler_version()
    assert len(v) == 64 and v == sdk.compiler_version()
    sdk.compiler_version.cache_clear()
    real = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda p: real(p) + (b"#" if p.name == "emit.py" else b""))
    try:
        assert sdk.compiler_version() != v  # an edited compiler never serves old binaries
    finally:
        sdk.compiler_version.cache_clear()


@pytest.mark.parametrize("damage", [b"", b"garbage", b"WBIN" + bytes(200), None])
def test_any_unreadable_entry_is_rebuilt(tmp_path: Path, cache: Path, damage: bytes | None) -> None:
    a = _module(tmp_path / "a.py", KERNEL.format(scale=1))
    good = a.bad.program
    (entry,) = cache.glob("*.wbin")
    if damage is None:
        entry.unlink()
        entry.mkdir()  # a folder where the file should be: reading raises IsADirectoryError
    else:
        entry.write_bytes(damage)
    sdk._MEMORY_CACHE.clear()
    assert a.bad.program == good


def test_entries_are_written_through_unique_temporary_names(tmp_path: Path, cache: Path) -> None:
    cache.mkdir(mode=0o700, parents=True)
    a = _module(tmp_path / "a.py", KERNEL.format(scale=1))
    key = sdk._cache_key(a.bad.source, a.bad.context())
    victim = cache / f"{key}.{os.getpid()}.tmp"  # the old fixed temporary name
    victim.write_text("a user's file")
    a.bad.program  # noqa: B018
    assert victim.read_text() == "a user's file"
    assert sorted(p.name for p in cache.iterdir()) == sorted([victim.name, f"{key}.wbin"])


def test_compile_names_a_missing_file() -> None:
    with pytest.raises(wg.CompileError, match=r"no such file: missing\.py"):
        wg.compile("missing.py")


def test_a_cache_others_may_write_is_not_used(tmp_path: Path, cache: Path) -> None:
    cache.mkdir(parents=True)
    cache.chmod(0o777)
    a = _module(tmp_path / "a.py", KERNEL.format(scale=1))
    with pytest.warns(UserWarning, match="compile cache off.*writable by group or others"):
        a.bad.program  # noqa: B018
    assert not list(cache.iterdir())
