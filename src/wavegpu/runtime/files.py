"""Private per-user cache folders, and the executables built into them: each run only after its
SHA-256, recorded when it was built, matches the bytes about to be executed."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..errors import WaveError
from ..paths import cache_root, check_private, private_dir

EXE = "exe"  # the executable inside its folder
RECORD = "sha256"  # its digest, written when it was built


class Tampered(WaveError):
    """A cached executable whose bytes no longer match the digest recorded when it was built."""


def sha256_fd(fd: int) -> str:
    h = hashlib.sha256()
    offset = 0
    while chunk := os.pread(fd, 1 << 20, offset):
        h.update(chunk)
        offset += len(chunk)
    return h.hexdigest()


def _recorded(folder: Path) -> str:
    """The digest recorded in folder/RECORD (the folder and the record checked as private)."""
    check_private(folder)
    try:
        fd = os.open(folder / RECORD, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as e:
        raise Tampered(f"{folder / RECORD}: no recorded digest ({e.strerror})") from None
    try:
        check_private(folder / RECORD, os.fstat(fd))
        return os.read(fd, 256).decode(errors="replace").strip()
    finally:
        os.close(fd)


def open_verified(exe: Path) -> int:
    """A read-only descriptor of exe once its bytes match the digest recorded beside it (Tampered if not)."""
    want = _recorded(exe.parent)
    try:
        fd = os.open(exe, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as e:
        raise Tampered(f"{exe}: cannot open the cached executable ({e.strerror})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Tampered(f"{exe}: not a regular file")
        check_private(exe, st)
        got = sha256_fd(fd)
        if got != want:
            raise Tampered(f"{exe}: SHA-256 {got} differs from the {want} recorded when it was built")
    except BaseException:
        os.close(fd)
        raise
    return fd


def spawn(exe: Path, args: Sequence[str], **popen: Any) -> subprocess.Popen[Any]:
    """Start exe (verified first; see open_verified) with args. Where /proc is present the process
    executes the very descriptor that was hashed, so a file swapped in after the check is not run."""
    fd = open_verified(exe)
    try:
        if os.path.isdir("/proc/self/fd"):
            return subprocess.Popen([f"/proc/self/fd/{fd}", *args], pass_fds=(fd,), **popen)
        return subprocess.Popen([str(exe), *args], **popen)
    finally:
        os.close(fd)


def discard(folder: Path) -> None:
    """Move folder aside (one rename, so no one sees it half deleted), then delete it."""
    aside = Path(tempfile.mkdtemp(prefix=".discard-", dir=folder.parent))
    with contextlib.suppress(FileNotFoundError):  # another process discarded it first
        os.rename(folder, aside / "x")
    shutil.rmtree(aside, ignore_errors=True)


def executable(parent: Path, key: str, build: Callable[[Path], None]) -> Path:
    """parent/key/EXE, verified (open_verified). When it is missing or fails verification,
    build(path) writes it into a fresh private temporary folder, its digest is recorded there,
    and the folder is renamed into place in one step (a concurrent builder's folder wins)."""
    folder = parent / key
    for _ in range(3):
        if folder.exists():
            try:
                os.close(open_verified(folder / EXE))
                return folder / EXE
            except Tampered:
                discard(folder)
        tmp = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=parent))  # 0700, an unpredictable name
        try:
            build(tmp / EXE)
            os.chmod(tmp / EXE, 0o700)  # whatever the umask gave the compiler's output
            fd = os.open(tmp / EXE, os.O_RDONLY | os.O_CLOEXEC)
            try:
                digest = sha256_fd(fd)
            finally:
                os.close(fd)
            rec = os.open(tmp / RECORD, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
            with os.fdopen(rec, "w") as f:
                f.write(digest + "\n")
            with contextlib.suppress(OSError):  # ENOTEMPTY/EEXIST: another build is in place; verify that
                os.rename(tmp, folder)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    raise WaveError(f"{folder}: the built executable does not stay as built (something rewrites the cache)")


__all__ = [
    "EXE",
    "RECORD",
    "Tampered",
    "cache_root",
    "check_private",
    "discard",
    "executable",
    "open_verified",
    "private_dir",
    "spawn",
]
