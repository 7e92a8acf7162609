"""The per-user cache folder and its private subfolders (floor 0: the runtime's compile cache and
SYCL runners, and the emulator's compiled engine, all keep files there and load code from them)."""

from __future__ import annotations

import os
import stat

TYPE_CHECKING = False  # no pathlib, typing or errors at import: cli/resident.py's client uses this
if TYPE_CHECKING:
    from pathlib import Path


def _error(message: str) -> Exception:
    from .errors import WaveError  # imported when raising: the error classes cost start-up time

    return WaveError(message)


def cache_root() -> Path:
    """$WAVEGPU_CACHE_DIR when set (and not empty), else $XDG_CACHE_HOME/wavegpu, else ~/.cache/wavegpu."""
    from pathlib import Path

    return Path(cache_root_str())


def cache_root_str() -> str:
    """cache_root() as a string (without importing pathlib)."""
    d = os.environ.get("WAVEGPU_CACHE_DIR")
    if d:
        return d
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):  # the XDG spec: a relative value is ignored
        return os.path.join(xdg, "wavegpu")
    return os.path.join(os.path.expanduser("~"), ".cache", "wavegpu")


def check_private(path: Path | str, st: os.stat_result | None = None) -> None:
    """A WaveError naming path unless it belongs to this user and no one else may write it."""
    st = os.stat(path) if st is None else st
    if st.st_uid != os.geteuid():
        raise _error(f"{path}: owned by uid {st.st_uid}, not by this user (uid {os.geteuid()}); refusing to use it")
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise _error(
            f"{path}: writable by group or others (mode {stat.S_IMODE(st.st_mode):o}); "
            f"refusing to use it (chmod go-w {path})"
        )


def private_dir(*parts: str) -> Path:
    """cache_root()/parts..., each folder created 0700 when missing and checked with check_private."""
    from pathlib import Path

    return Path(private_dir_str(*parts))


def private_dir_str(*parts: str) -> str:
    """private_dir() as a string (without importing pathlib)."""
    path = cache_root_str()
    levels = [path] + [path := os.path.join(path, p) for p in parts]
    for level in levels:
        try:
            os.makedirs(level, mode=0o700, exist_ok=True)  # the mode applies to the folders it creates
            st = os.stat(level)
        except OSError as e:
            raise _error(f"{level}: cannot create the cache folder: {e.strerror}") from None
        if not stat.S_ISDIR(st.st_mode):
            raise _error(f"{level}: not a folder")
        check_private(level, st)
    return levels[-1]
