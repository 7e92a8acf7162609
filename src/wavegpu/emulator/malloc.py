"""glibc's malloc tuned while the emulator runs: freed multi-megabyte NumPy temporaries stay in
the heap for reuse, and go back to the system once runs pause (`malloc_tuned`)."""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
import threading
import time
from collections.abc import Iterator

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
GLIBC_THRESHOLD = 128 * 1024  # glibc's default for both
TRIM_DELAY = 0.5  # seconds with no emulate running before the retained heap goes back (malloc_trim)
_MALLOC_LOCK = threading.Lock()
_MALLOC_DEPTH = 0  # emulate calls running (threads may run several)
_LAST_END = 0.0  # time.monotonic() when the last running emulate returned
_TRIM_TIMER: threading.Timer | None = None  # the pending malloc_trim, if any
_LIBC: list[object] = []  # glibc, loaded once


def _libc() -> object | None:
    """glibc, for mallopt; None elsewhere or with WAVEGPU_NO_MALLOPT=1."""
    if os.environ.get("WAVEGPU_NO_MALLOPT") or sys.platform != "linux":
        return None
    if not _LIBC:
        try:
            libc = ctypes.CDLL("libc.so.6")
            _LIBC.append(libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None)
        except OSError:
            _LIBC.append(None)
    return _LIBC[0]


def _env_bytes(name: str) -> int:
    try:
        return int(os.environ.get(name, GLIBC_THRESHOLD))
    except ValueError:
        return GLIBC_THRESHOLD


def _trim_when_idle(libc: object) -> None:
    """The timer's body: trim once no emulate has run for TRIM_DELAY, else wait the rest."""
    global _TRIM_TIMER
    with _MALLOC_LOCK:
        wait = _LAST_END + TRIM_DELAY - time.monotonic()
        if _MALLOC_DEPTH == 0 and wait <= 0:
            _TRIM_TIMER = None
            libc.malloc_trim(0)  # type: ignore[attr-defined]
            return
        if _MALLOC_DEPTH:  # a run is going on: its end starts a new timer
            _TRIM_TIMER = None
            return
        _TRIM_TIMER = _start_timer(libc, wait)


def _start_timer(libc: object, delay: float) -> threading.Timer:
    t = threading.Timer(max(delay, 0.0), _trim_when_idle, args=(libc,))
    t.daemon = True
    t.start()
    return t


@contextlib.contextmanager
def malloc_tuned() -> Iterator[None]:
    """While emulate runs, glibc keeps freed multi-megabyte NumPy temporaries in the heap, so the
    per-instruction arrays are reused instead of page-faulted afresh (SGEMM 512^3: 1.0 s instead
    of 3 s). When the last running emulate returns (or traps), the thresholds go back to glibc's
    values at once (MALLOC_MMAP_THRESHOLD_ / MALLOC_TRIM_THRESHOLD_ when set, else 128 KiB); the
    retained memory goes back to the system (malloc_trim) from a timer thread once no emulate
    has run for TRIM_DELAY seconds, so repeated short runs reuse it instead of page-faulting
    their temporaries afresh each time. WAVEGPU_NO_MALLOPT=1 disables all of it."""
    global _MALLOC_DEPTH, _LAST_END, _TRIM_TIMER
    libc = _libc()
    if libc is None:
        yield
        return
    with _MALLOC_LOCK:
        if _MALLOC_DEPTH == 0:
            libc.mallopt(M_MMAP_THRESHOLD, 32 << 20)  # type: ignore[attr-defined]  # glibc's largest
            libc.mallopt(M_TRIM_THRESHOLD, 512 << 20)  # type: ignore[attr-defined]
        _MALLOC_DEPTH += 1
    try:
        yield
    finally:
        with _MALLOC_LOCK:
            _MALLOC_DEPTH -= 1
            if _MALLOC_DEPTH == 0:
                libc.mallopt(M_MMAP_THRESHOLD, _env_bytes("MALLOC_MMAP_THRESHOLD_"))  # type: ignore[attr-defined]
                libc.mallopt(M_TRIM_THRESHOLD, _env_bytes("MALLOC_TRIM_THRESHOLD_"))  # type: ignore[attr-defined]
                _LAST_END = time.monotonic()
                if _TRIM_TIMER is None:
                    _TRIM_TIMER = _start_timer(libc, TRIM_DELAY)
