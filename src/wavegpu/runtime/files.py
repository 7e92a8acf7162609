"""Private per-user cache folders, and the executables built into them: each run only after its
SHA-256, recorded when it was built, matches the bytes about to be executed."""

from __future__ import annotations

import contextlib
import hashlib
import os
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..errors import WaveError
from ..paths import PrivateDir, cache_root, check_private, disk_cache_off, open_private, proc_available

EXE = "exe"  # the executable inside its folder
RECORD = "sha256"  # its digest, written when it was built


class Tampered(WaveError):
    """A cached executable that cannot be trusted as built: its bytes no longer match the digest
    recorded when it was built, or it, its record or its folder is not private to this user."""


def sha256_fd(fd: int) -> str:
    h = hashlib.sha256()
    offset = 0
    while chunk := os.pread(fd, 1 << 20, offset):
        h.update(chunk)
        offset += len(chunk)
    return h.hexdigest()


def open_verified(parent: PrivateDir, key: str) -> int:
    """A read-only descriptor of parent/key/EXE once its bytes match the digest recorded beside
    it, everything opened through parent's descriptor (Tampered if not)."""
    try:
        folder = parent.subdir(key, create=False)
    except FileNotFoundError:
        raise Tampered(f"{parent.where(key)}: not built") from None
    except WaveError as e:
        raise Tampered(str(e)) from None
    with folder:
        try:
            want = folder.read_bytes(RECORD)[:256].decode(errors="replace").strip()
        except OSError as e:
            raise Tampered(f"{folder.where(RECORD)}: no recorded digest ({e.strerror})") from None
        except WaveError as e:
            raise Tampered(str(e)) from None
        exe = folder.where(EXE)
        try:
            fd = folder.open_file(EXE)
        except OSError as e:
            raise Tampered(f"{exe}: cannot open the cached executable ({e.strerror})") from None
        except WaveError as e:
            raise Tampered(str(e)) from None
    try:
        got = sha256_fd(fd)
        if got != want:
            raise Tampered(f"{exe}: SHA-256 {got} differs from the {want} recorded when it was built")
    except BaseException:
        os.close(fd)
        raise
    return fd


def spawn(parent: PrivateDir, key: str, args: Sequence[str], **popen: Any) -> subprocess.Popen[Any]:
    """Start parent/key/EXE (verified first; see open_verified) with args. Where /proc is present
    the process executes the very descriptor that was hashed, so a file swapped in after the
    check is not run."""
    fd = open_verified(parent, key)
    try:
        if proc_available():
            return subprocess.Popen([f"/proc/self/fd/{fd}", *args], pass_fds=(fd,), **popen)
        return subprocess.Popen([parent.fs_path(key) + "/" + EXE, *args], **popen)
    finally:
        os.close(fd)


def discard(parent: PrivateDir, key: str) -> None:
    """Move parent/key aside (one rename inside parent, so no one sees it half deleted, and it
    works whoever owns the folder moved), then delete what can be deleted of it."""
    aside = f".discard-{key}-{os.urandom(6).hex()}"
    try:
        parent.rename(key, aside)
    except FileNotFoundError:  # another process discarded it first
        return
    parent.rmtree(aside)


def executable(parent: PrivateDir, key: str, build: Callable[[Path], None]) -> Path:
    """Make sure parent/key/EXE is built and verified (open_verified); its path, for messages
    (what runs is started through parent: spawn). When it is missing or fails verification (its
    bytes changed, or it, its record or its folder is not private), it is moved aside and
    build(path) writes a new one into a fresh private temporary folder, whose digest is recorded
    there before the folder is renamed into place in one step (a concurrent builder's folder wins)."""
    shown = Path(parent.where(key)) / EXE
    for _ in range(3):
        if parent.exists(key):
            try:
                os.close(open_verified(parent, key))
                return shown
            except Tampered:
                discard(parent, key)
        tmp = parent.mkdtemp(f".{key}-")  # 0700, an unpredictable name
        try:
            with parent.subdir(tmp, create=False) as folder:
                build(Path(folder.fs_path(EXE, for_children=True)))  # g++ writes it
                # the compiler's output: ours, not a link, 0700 whatever the umask gave it
                fd = folder.open_file(EXE, os.O_RDONLY, chmod=0o700)
                try:
                    digest = sha256_fd(fd)
                finally:
                    os.close(fd)
                rec = folder.open(RECORD, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(rec, "w") as f:
                    f.write(digest + "\n")
            with contextlib.suppress(OSError):  # ENOTEMPTY/EEXIST: another build is in place; verify that
                parent.rename(tmp, key)
        finally:
            parent.rmtree(tmp)
    raise WaveError(f"{parent.where(key)}: the built executable does not stay as built (something rewrites the cache)")


__all__ = [
    "EXE",
    "RECORD",
    "PrivateDir",
    "Tampered",
    "cache_root",
    "check_private",
    "discard",
    "disk_cache_off",
    "executable",
    "open_private",
    "open_verified",
    "spawn",
]
