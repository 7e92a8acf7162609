"""Running a launch on the compiled engine: translate (or find) the kernel, split the grid over
threads, and say whether it finished (a trap or an exhausted budget is re-run by the caller on
the NumPy engine, which names it exactly as it always does). A translation that fails to
generate, load or compile, for whatever reason, is `CompileFailed` (remembered for the process):
the caller falls back to the NumPy engine or names the kernel and the reason (choice.py)."""

from __future__ import annotations

import functools
import os
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import numpy as np

from ...errors import EngineWarning
from ...wbin.program import Kernel
from .cache import is_cached, key_of, load, load_rows
from .codegen import Shape, Unsupported, generate, ordered_reason
from .opsgen import rmw

if TYPE_CHECKING:
    from ..bounds import Bounds
    from ..machine import Memory


class CompileFailed(Exception):
    """Generating, loading or compiling a kernel's translation failed; the message is the
    reason in one line (the exception's type and the first line of its message)."""


_FAILED: dict[str, str] = {}  # translation key -> why it failed (not retried in this process)


def one_line(e: BaseException) -> str:
    """`Type: first line of the message` (numba's errors run to dozens of lines), at most 300 characters."""
    text = next((ln.strip() for ln in str(e).splitlines() if ln.strip()), "")
    text = f"{type(e).__name__}: {text}" if text else type(e).__name__
    return text if len(text) <= 300 else text[:297] + "..."


@functools.lru_cache(maxsize=256)
def _generated(k: Kernel, shape: Shape) -> tuple[str, str]:
    src = generate(k, shape)
    return key_of(src), src


def _source(k: Kernel, shape: Shape) -> tuple[str, str]:
    """(key, source) of the translation (raises Unsupported, or CompileFailed for anything else)."""
    try:
        return _generated(k, shape)
    except Unsupported:
        raise
    except Exception as e:  # a generator defect, a RecursionError: the NumPy engine still runs it
        raise CompileFailed(one_line(e)) from e


TRANSLATIONS = ("c", "numba")


def translation() -> str:
    """Which translation runs the compiled engine: $WAVEGPU_COMPILED when it names one of
    TRANSLATIONS (forced: its failure is the engine's), else C where a C compiler is found (the
    faster to compile and to run, docs/performance.md), numba otherwise."""
    env = os.environ.get("WAVEGPU_COMPILED", "").strip().lower()
    if env in TRANSLATIONS:
        return env
    from .cbuild import has_compiler

    return "c" if has_compiler() else "numba"


def forced() -> bool:
    return os.environ.get("WAVEGPU_COMPILED", "").strip().lower() in TRANSLATIONS


def _c_key(k: Kernel, shape: Shape) -> str:
    """The C translation's cache key: a hash of the generated program it spells (the emitter's
    own code is in cbuild.digest), so that a cached object is found without spelling it again."""
    from .cbuild import key_of as c_key

    return c_key(_source(k, shape)[1])


def _c_generated(k: Kernel, shape: Shape) -> str:
    """The C source of kernel k's translation (raises CUntranslatable, Unsupported or CompileFailed)."""
    from .ctrans import lane_mode

    return _c_spelt(k, shape, lane_mode())


@functools.lru_cache(maxsize=256)
def _c_spelt(k: Kernel, shape: Shape, mode: str) -> str:
    from .ctrans import translate

    return translate(_source(k, shape)[1], mode)


def c_reason(k: Kernel, shape: Shape) -> str | None:
    """Why the C emitter cannot spell kernel k's translation (it then runs on numba), or None
    (raises Unsupported or CompileFailed as `_source` does)."""
    from .cbuild import is_cached as c_cached
    from .ctrans import CUntranslatable

    if c_cached(_c_key(k, shape)):
        return None
    try:
        _c_generated(k, shape)
    except CUntranslatable as e:
        return str(e)
    return None


_USED: dict[tuple[Kernel, Shape], str] = {}  # which translation ran each kernel and shape
_LAST: list[str | None] = [None]


def used(k: Kernel, shape: Shape) -> str | None:
    """The translation ("c" or "numba") that ran kernel k with this shape last, or None."""
    return _USED.get((k, shape))


def last_used() -> str | None:
    """The translation of this process's latest compiled launch, or None."""
    return _LAST[0]


def _pick(k: Kernel, shape: Shape) -> str:
    """The translation for kernel k: `translation()`, except that a kernel the C emitter cannot
    spell (CUntranslatable) runs on numba."""
    t = translation()
    if t == "c" and (c_reason(k, shape) is not None) and available_numba():
        return "numba"
    return t


def available_numba() -> bool:
    from . import numba_available

    return numba_available()


def translation_key(k: Kernel, shape: Shape) -> str:
    """The cache key of a translation (raises codegen.Unsupported or CompileFailed)."""
    if _pick(k, shape) == "c":
        return _c_key(k, shape)
    return _source(k, shape)[0]


def cached(k: Kernel, shape: Shape) -> bool:
    """Whether the translation is already loaded or on disk (no compile latency to pay)."""
    key = translation_key(k, shape)
    if key.startswith("c-"):
        from .cbuild import is_cached as c_cached

        return c_cached(key)
    return is_cached(key)


def runner(k: Kernel, shape: Shape):
    """The compiled `run_range` of kernel k for this shape (numba compiles it on its first call:
    `execute` makes that call an empty one, where a failure is CompileFailed)."""
    key, src = _source(k, shape)
    if key in _FAILED:
        raise CompileFailed(_FAILED[key])
    try:
        load_rows()
        return load(key, src).run_range
    except Exception as e:
        _FAILED[key] = one_line(e)
        raise CompileFailed(_FAILED[key]) from e


def c_runner(k: Kernel, shape: Shape):
    """The C translation of kernel k as a `run_range` (cbuild.CRunner), compiled (or found in
    the cache) here; a failure is CompileFailed (remembered)."""
    from .cbuild import CRunner
    from .cbuild import load as c_load
    from .ctrans import CUntranslatable

    key = _c_key(k, shape)
    if key in _FAILED:
        raise CompileFailed(_FAILED[key])

    def source() -> str:
        try:
            return _c_generated(k, shape)
        except CUntranslatable as e:
            raise CompileFailed(one_line(e)) from e

    try:
        return CRunner(c_load(key, source))
    except Exception as e:  # the compiler's error, a missing compiler, dlopen's
        _FAILED[key] = one_line(e)
        raise CompileFailed(_FAILED[key]) from e


def _compiled(k: Kernel, shape: Shape, common: tuple[object, ...]):
    """The translation's `run_range`, ready to run (raises CompileFailed). C: compiled by the
    system compiler; when that fails and no translation is forced ($WAVEGPU_COMPILED), numba
    runs it, after a one-line EngineWarning. numba: `runner`, compiled for these arguments'
    types by a call that runs no workgroup, here on the calling thread (so that no worker thread
    compiles, and any failure is CompileFailed). Made on every launch: once compiled for these
    types, it costs a dispatch and a few small allocations."""
    if _pick(k, shape) == "c":
        try:
            run = c_runner(k, shape)
            _USED[(k, shape)] = _LAST[0] = "c"
            return run
        except CompileFailed as e:
            if forced() or not available_numba():
                raise
            warnings.warn(
                f"kernel {k.name!r}: the C translation failed to compile ({e}); running it on numba",
                EngineWarning,
                stacklevel=4,
            )
    run = runner(k, shape)
    try:
        run(0, 0, *common, False, np.zeros(4, dtype=np.int64))
    except Exception as e:  # numba's errors, RecursionError in its passes, LLVM's
        key = _source(k, shape)[0]
        _FAILED[key] = one_line(e)
        raise CompileFailed(_FAILED[key]) from e
    _USED[(k, shape)] = _LAST[0] = "numba"
    return run


@functools.lru_cache(maxsize=256)
def _ordered(k: Kernel) -> bool:
    return ordered_reason(k) is not None


@functools.lru_cache(maxsize=256)
def _atomic(k: Kernel) -> bool:
    """Whether k has a global atomic that threads may apply at once (`opsgen.rmw`)."""
    return any(rmw(i.spec) is not None for i in k.instructions)


def threads_for(k: Kernel, n_wg: int) -> int:
    """Worker threads: all cores, or one for a kernel whose global atomics must be applied in
    workgroup order (`codegen.ordered_reason`; docs/emulator.md, "Parallel workgroups")."""
    if _ordered(k):
        return 1
    env = os.environ.get("WAVEGPU_THREADS")
    n = int(env) if env and env.isdigit() and int(env) > 0 else (os.cpu_count() or 1)
    return max(1, min(n, n_wg))


def execute(
    k: Kernel,
    shape: Shape,
    grid: tuple[int, int, int],
    args: tuple[int, ...],
    dev: Memory,
    const: Memory,
    bounds: Bounds | None,
    budget: int,
    span: tuple[int, int] | None = None,
) -> bool:
    """Run every workgroup (or the linear workgroup ids span[0]..span[1]-1 of the grid); True
    when all finished, False on a trap or an exhausted budget (raises CompileFailed before
    touching memory when the translation does not compile)."""
    lo, hi = span if span is not None else (0, grid[0] * grid[1] * grid[2])
    n_wg = hi - lo
    a = np.asarray(args, dtype=np.int64)
    n_inst = max(len(k.instructions), 1)
    own_lo = np.full(n_inst, -1, dtype=np.int64)
    own_hi = np.full(n_inst, -1, dtype=np.int64)
    hint_lo = np.full(n_inst, -1, dtype=np.int64)
    hint_hi = np.full(n_inst, -1, dtype=np.int64)
    if bounds is None:
        rs = re = np.zeros(1, dtype=np.int64)
        nb = -1
    else:
        rs = np.asarray([r.offset for r in bounds.regions] or [0], dtype=np.int64)
        re = np.asarray([r.end for r in bounds.regions] or [0], dtype=np.int64)
        nb = len(bounds.regions)
        if k.accesses is not None:
            for pc, tag in enumerate(k.accesses):
                hint = bounds.by_param.get(tag) if tag is not None else None
                if hint is not None:  # the array the compiler named for this access
                    hint_lo[pc], hint_hi[pc] = hint.offset, hint.end
                own = bounds.region_for(tag)
                if own is not None:
                    own_lo[pc], own_hi[pc] = own.offset, own.end
    d8, c8 = dev.u8, const.u8
    common = (
        grid[0],
        grid[1],
        grid[2],
        a,
        d8,
        dev.u16,
        dev.u32,
        dev.size,
        c8,
        const.u16,
        const.u32,
        const.size,
        rs,
        re,
        own_lo,
        own_hi,
        hint_lo,
        hint_hi,
        nb,
        budget,
    )
    run = _compiled(k, shape, common)
    workers = threads_for(k, n_wg)

    def alone(first: int, last: int) -> bool:
        status = np.zeros(4, dtype=np.int64)
        run(first, last, *common, False, status)
        return int(status[0]) == 0

    if workers == 1:
        return alone(lo, hi)
    pieces = min(n_wg, workers * 8)
    cut = [lo + n_wg * i // pieces for i in range(pieces + 1)]

    def together(first: int, last: int) -> bool:
        """Pieces first..last-1 on all workers, global atomics as atomic instructions."""
        statuses = [np.zeros(4, dtype=np.int64) for _ in range(last - first)]

        def piece(i: int) -> None:
            run(cut[first + i], cut[first + i + 1], *common, True, statuses[i])

        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(piece, range(last - first)))
        return all(int(s[0]) == 0 for s in statuses)

    start = 0
    if _atomic(k) and pieces > 2 * workers:
        # atomics on words that every workgroup updates (a histogram's bins) make cores contend:
        # one piece alone, then `workers` pieces together, and the rest the faster way (the
        # memory is the same either way: these atomics are order-free and their results unread)
        t = time.perf_counter()
        ok = alone(cut[0], cut[1])
        one = (time.perf_counter() - t) / (cut[1] - cut[0])
        t = time.perf_counter()
        ok = ok and together(1, 1 + workers)
        many = (time.perf_counter() - t) / (cut[1 + workers] - cut[1])
        if not ok:
            return False
        if one <= many:
            return alone(cut[1 + workers], hi)
        start = 1 + workers
    return together(start, pieces)
