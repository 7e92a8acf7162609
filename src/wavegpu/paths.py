"""The per-user cache folder and its private subfolders (floor 0: the runtime's compile cache and
SYCL runners, and the emulator's compiled engine, all keep files there and load code from them)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .errors import WaveError


def cache_root() -> Path:
    """$WAVEGPU_CACHE_DIR when set (and not empty), else $XDG_CACHE_HOME/wavegpu, else ~/.cache/wavegpu."""
    d = os.environ.get("WAVEGPU_CACHE_DIR")
    if d:
        return Path(d)
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):  # the XDG spec: a relative value is ignored
        return Path(xdg) / "wavegpu"
    return Path.home() / ".cache" / "wavegpu"


def check_private(path: Path, st: os.stat_result | None = None) -> None:
    """A WaveError naming path unless it belongs to this user and no one else may write it."""
    st = os.stat(path) if st is None else st
    if st.st_uid != os.geteuid():
        raise WaveError(f"{path}: owned by uid {st.st_uid}, not by this user (uid {os.geteuid()}); refusing to use it")
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise WaveError(
            f"{path}: writable by group or others (mode {stat.S_IMODE(st.st_mode):o}); "
            f"refusing to use it (chmod go-w {path})"
        )


def private_dir(*parts: str) -> Path:
    """cache_root()/parts..., each folder created 0700 when missing and checked with check_private."""
    path = cache_root()
    levels = [path] + [path := path / p for p in parts]
    for level in levels:
        try:
            os.makedirs(level, mode=0o700, exist_ok=True)  # the mode applies to the folders it creates
            st = os.stat(level)
        except OSError as e:
            raise WaveError(f"{level}: cannot create the cache folder: {e.strerror}") from None
        if not stat.S_ISDIR(st.st_mode):
            raise WaveError(f"{level}: not a folder")
        check_private(level, st)
    return levels[-1]
