"""Private cache folders and verified executables: created 0700, refused when someone else owns
or may write them, built under a unique temporary name and renamed into place, and checked
against the recorded SHA-256 before every start."""

from __future__ import annotations

import os
import stat
import threading
import time
from pathlib import Path

import pytest

import wavegpu as wg
from wavegpu.runtime import files


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    r = tmp_path / "cache"
    monkeypatch.setenv("WAVEGPU_CACHE_DIR", str(r))
    return r


def mode(p: Path) -> int:
    return stat.S_IMODE(os.stat(p).st_mode)


def script(text: str):  # type: ignore[no-untyped-def]
    """A build function writing a shell script (an executable that builds in no time)."""
    calls: list[Path] = []

    def build(path: Path) -> None:
        calls.append(path)
        path.write_text(f"#!/bin/sh\n{text}\n")

    build.calls = calls  # type: ignore[attr-defined]
    return build


def test_the_cache_root_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("WAVEGPU_CACHE_DIR", str(tmp_path / "w"))
    assert files.cache_root() == tmp_path / "w"
    monkeypatch.setenv("WAVEGPU_CACHE_DIR", "")  # the compile cache's "off" still leaves a place for these
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert files.cache_root() == tmp_path / "x" / "wavegpu"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/path")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert files.cache_root() == tmp_path / "home" / ".cache" / "wavegpu"


def test_private_folders_are_created_0700_whatever_the_umask(root: Path) -> None:
    old = os.umask(0o002)
    try:
        d = files.private_dir("sycl", "inner")
    finally:
        os.umask(old)
    assert d == root / "sycl" / "inner"
    assert [mode(p) for p in (root, root / "sycl", d)] == [0o700] * 3


@pytest.mark.parametrize("bits", [0o020, 0o002, 0o777])
def test_a_folder_others_may_write_is_refused_with_its_path(root: Path, bits: int) -> None:
    (root / "sycl").mkdir(parents=True, mode=0o700)
    os.chmod(root / "sycl", 0o700 | bits)
    with pytest.raises(wg.WaveError, match=f"{root / 'sycl'}: writable by group or others"):
        files.private_dir("sycl")
    os.chmod(root, 0o777)
    with pytest.raises(wg.WaveError, match=f"{root}: writable by group or others"):
        files.private_dir("opencl")
    assert not (root / "opencl").exists()  # refused before anything is created in it


def test_a_folder_someone_else_owns_is_refused(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if os.geteuid() == 0:
        root.mkdir(mode=0o700)
        os.chown(root, 65534, 65534)
    else:
        root = Path("/")  # root's, and never this user's
        assert os.stat(root).st_uid != os.geteuid()
        monkeypatch.setenv("WAVEGPU_CACHE_DIR", str(root))
    with pytest.raises(wg.WaveError, match=f"{root}: owned by uid {os.stat(root).st_uid}, not by this user"):
        files.private_dir("sycl")


def test_a_build_happens_in_a_fresh_private_folder_renamed_into_place(root: Path) -> None:
    parent = files.private_dir("t")
    seen: list[tuple[Path, bool, int]] = []

    def build(path: Path) -> None:
        seen.append((path, (parent / "k").exists(), mode(path.parent)))
        path.write_text("#!/bin/sh\necho built\n")

    exe = files.executable(parent, "k", build)
    assert exe == parent / "k" / files.EXE
    (tmp, final_existed, tmp_mode), *_ = seen
    assert tmp.parent.parent == parent and tmp.parent.name.startswith(".k-") and tmp.parent.name != ".k-"
    assert not final_existed and tmp_mode == 0o700 and not tmp.parent.exists()
    assert mode(exe) == 0o700 and mode(exe.parent / files.RECORD) == 0o600
    files.discard(exe.parent)
    files.executable(parent, "k", build)
    assert seen[0][0].parent != seen[1][0].parent  # not a predictable name
    assert sorted(os.listdir(parent)) == ["k"]  # no temporary folder left behind


def test_a_verified_executable_runs(root: Path) -> None:
    exe = files.executable(files.private_dir("t"), "k", script('echo "hello $1"'))
    p = files.spawn(exe, ["there"], stdout=-1, text=True)
    assert p.communicate()[0] == "hello there\n" and p.returncode == 0


def test_an_executable_changed_after_its_build_is_not_started(root: Path, tmp_path: Path) -> None:
    exe = files.executable(files.private_dir("t"), "k", script("echo good"))
    marker = tmp_path / "planted-ran"
    exe.write_text(f"#!/bin/sh\ntouch {marker}\n")
    with pytest.raises(files.Tampered, match=f"{exe}: SHA-256 .* differs from the .* recorded"):
        files.spawn(exe, [], stdout=-1)
    time.sleep(0.1)
    assert not marker.exists()


def test_a_changed_executable_is_rebuilt_before_it_is_used(root: Path, tmp_path: Path) -> None:
    build = script("echo good")
    parent = files.private_dir("t")
    exe = files.executable(parent, "k", build)
    exe.write_text(f"#!/bin/sh\ntouch {tmp_path / 'planted-ran'}\n")
    again = files.executable(parent, "k", build)
    assert len(build.calls) == 2  # type: ignore[attr-defined]
    p = files.spawn(again, [], stdout=-1, text=True)
    assert p.communicate()[0] == "good\n" and not (tmp_path / "planted-ran").exists()


@pytest.mark.parametrize("damage", ["record", "no record", "group-writable"])
def test_a_damaged_record_fails_verification(root: Path, damage: str) -> None:
    exe = files.executable(files.private_dir("t"), "k", script("echo good"))
    rec = exe.parent / files.RECORD
    if damage == "record":
        rec.write_text("0" * 64 + "\n")
    elif damage == "no record":
        rec.unlink()
    else:
        os.chmod(exe, 0o770)
    with pytest.raises(files.Tampered if damage != "group-writable" else wg.WaveError):
        files.open_verified(exe)


def test_concurrent_builders_agree_on_one_executable(root: Path) -> None:
    parent = files.private_dir("t")

    def build(path: Path) -> None:
        time.sleep(0.2)
        path.write_text(f"#!/bin/sh\necho {path.parent.name}\n")

    out: list[Path] = []
    threads = [threading.Thread(target=lambda: out.append(files.executable(parent, "k", build))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(out) == 4 and len(set(out)) == 1
    os.close(files.open_verified(out[0]))
    assert sorted(os.listdir(parent)) == ["k"]
