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
        with files.open_private("sycl", "inner") as d:
            assert d.path == str(root / "sycl" / "inner")
    finally:
        os.umask(old)
    assert [mode(p) for p in (root, root / "sycl", root / "sycl" / "inner")] == [0o700] * 3


@pytest.mark.parametrize("bits", [0o020, 0o002, 0o777])
def test_a_folder_others_may_write_is_refused_with_its_path(root: Path, bits: int) -> None:
    (root / "sycl").mkdir(parents=True, mode=0o700)
    os.chmod(root / "sycl", 0o700 | bits)
    with pytest.raises(wg.WaveError, match=f"{root / 'sycl'}: writable by group or others"):
        files.open_private("sycl")
    os.chmod(root, 0o777)
    with pytest.raises(wg.WaveError, match=f"{root}: writable by group or others"):
        files.open_private("opencl")
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
        files.open_private("sycl")


@pytest.fixture
def parent(root: Path):  # type: ignore[no-untyped-def]
    with files.open_private("t") as d:
        yield d


def test_a_build_happens_in_a_fresh_private_folder_renamed_into_place(root: Path, parent: files.PrivateDir) -> None:
    where = root / "t"
    seen: list[tuple[Path, bool, int]] = []

    def build(path: Path) -> None:
        seen.append((path, (where / "k").exists(), mode(path.parent)))
        path.write_text("#!/bin/sh\necho built\n")

    exe = files.executable(parent, "k", build)
    assert exe == where / "k" / files.EXE
    (tmp, final_existed, tmp_mode), *_ = seen
    assert not final_existed and tmp_mode == 0o700 and not tmp.parent.exists()
    assert mode(exe) == 0o700 and mode(exe.parent / files.RECORD) == 0o600
    files.discard(parent, "k")
    files.executable(parent, "k", build)
    assert sorted(os.listdir(where)) == ["k"]  # no temporary folder left behind


def test_a_build_folder_has_an_unpredictable_name(parent: files.PrivateDir, monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[str] = []
    real = parent.mkdtemp
    monkeypatch.setattr(files.PrivateDir, "mkdtemp", lambda self, prefix: made.append(real(prefix)) or made[-1])
    for _ in range(2):
        files.executable(parent, "k", script("echo built"))
        files.discard(parent, "k")
    assert len(made) == 2 and made[0] != made[1] and all(m.startswith(".k-") and len(m) > 8 for m in made)


def test_a_verified_executable_runs(parent: files.PrivateDir) -> None:
    files.executable(parent, "k", script('echo "hello $1"'))
    p = files.spawn(parent, "k", ["there"], stdout=-1, text=True)
    assert p.communicate()[0] == "hello there\n" and p.returncode == 0


def test_a_compiler_output_the_umask_left_group_writable_is_made_private(parent: files.PrivateDir) -> None:
    """With umask 002 (Debian's default where each user has their own group) a compiler writes
    its output 0775: the build makes it 0700 before it is checked, not refused as not private."""

    def build(path: Path) -> None:
        path.write_text("#!/bin/sh\necho built\n")
        os.chmod(path, 0o775)  # what a compiler writes under umask 002

    exe = files.executable(parent, "k", build)
    assert mode(exe) == 0o700
    p = files.spawn(parent, "k", [], stdout=-1, text=True)
    assert p.communicate()[0] == "built\n"


def test_an_executable_changed_after_its_build_is_not_started(parent: files.PrivateDir, tmp_path: Path) -> None:
    exe = files.executable(parent, "k", script("echo good"))
    marker = tmp_path / "planted-ran"
    exe.write_text(f"#!/bin/sh\ntouch {marker}\n")
    with pytest.raises(files.Tampered, match=f"{exe}: SHA-256 .* differs from the .* recorded"):
        files.spawn(parent, "k", [], stdout=-1)
    time.sleep(0.1)
    assert not marker.exists()


def test_a_changed_executable_is_rebuilt_before_it_is_used(parent: files.PrivateDir, tmp_path: Path) -> None:
    build = script("echo good")
    exe = files.executable(parent, "k", build)
    exe.write_text(f"#!/bin/sh\ntouch {tmp_path / 'planted-ran'}\n")
    files.executable(parent, "k", build)
    assert len(build.calls) == 2  # type: ignore[attr-defined]
    p = files.spawn(parent, "k", [], stdout=-1, text=True)
    assert p.communicate()[0] == "good\n" and not (tmp_path / "planted-ran").exists()


@pytest.mark.parametrize(
    "damage", ["record", "no record", "group-writable", "record 0666", "foreign exe", "foreign record"]
)
def test_a_damaged_runner_fails_verification_and_is_rebuilt(parent: files.PrivateDir, damage: str) -> None:
    """Whatever makes a built executable untrusted (a changed digest, a missing record, a file or
    record others may write or that another user owns) is Tampered, and the next executable()
    builds it again in a fresh private folder, which then runs."""
    build = script("echo good")
    exe = files.executable(parent, "k", build)
    rec = exe.parent / files.RECORD
    if damage == "record":
        rec.write_text("0" * 64 + "\n")
    elif damage == "no record":
        rec.unlink()
    elif damage == "group-writable":
        os.chmod(exe, 0o770)
    elif damage == "record 0666":
        os.chmod(rec, 0o666)
    else:
        if os.geteuid() != 0:
            pytest.skip("needs root to give a file to another user")
        os.chown(exe if damage == "foreign exe" else rec, 65534, 65534)
    with pytest.raises(files.Tampered):
        files.open_verified(parent, "k")
    files.executable(parent, "k", build)
    assert len(build.calls) == 2  # type: ignore[attr-defined]
    p = files.spawn(parent, "k", [], stdout=-1, text=True)
    assert p.communicate()[0] == "good\n"
    assert all(os.stat(f).st_uid == os.geteuid() for f in (exe, rec)) and mode(rec) == 0o600


def test_a_runner_folder_another_user_owns_is_moved_aside_and_rebuilt(root: Path, parent: files.PrivateDir) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to give a folder to another user")
    build = script("echo good")
    exe = files.executable(parent, "k", build)
    os.chown(exe.parent, 65534, 65534)
    files.executable(parent, "k", build)
    assert os.stat(exe.parent).st_uid == os.geteuid() and len(build.calls) == 2  # type: ignore[attr-defined]


def test_concurrent_builders_agree_on_one_executable(root: Path, parent: files.PrivateDir) -> None:
    def build(path: Path) -> None:
        time.sleep(0.2)
        path.write_text(f"#!/bin/sh\necho {os.path.basename(os.path.dirname(os.path.realpath(path)))}\n")

    out: list[Path] = []
    threads = [threading.Thread(target=lambda: out.append(files.executable(parent, "k", build))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(out) == 4 and len(set(out)) == 1
    os.close(files.open_verified(parent, "k"))
    assert sorted(os.listdir(root / "t")) == ["k"]
