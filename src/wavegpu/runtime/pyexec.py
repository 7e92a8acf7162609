"""Run a kernel function as plain Python, one thread at a time (debugging, and the oracle of the
compiler's differential tests). Builtins read the thread set by `python_thread`."""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import WaveError


@dataclass(frozen=True)
class ThreadContext:
    thread: tuple[int, int, int] = (0, 0, 0)
    workgroup: tuple[int, int, int] = (0, 0, 0)
    workgroup_size: tuple[int, int, int] = (1, 1, 1)
    grid: tuple[int, int, int] = (1, 1, 1)
    wave_width: int = 32


Scalar = int | float | np.number[Any] | np.bool_
"""A kernel's scalar value as the plain-Python runtime sees it: a Python or NumPy number."""

_CTX: contextvars.ContextVar[ThreadContext | None] = contextvars.ContextVar("wavegpu_thread", default=None)


@contextlib.contextmanager
def python_thread(global_id: int | None = None, **kw: object) -> Iterator[ThreadContext]:
    """Make builtins answer for one thread: python_thread(global_id=i) or thread=..., workgroup=..."""
    if global_id is not None:
        kw.setdefault("thread", (global_id, 0, 0))
        kw.setdefault("workgroup_size", (max(global_id + 1, 1), 1, 1))
    ctx = ThreadContext(
        **{
            k: (tuple(v) + (0,) * (3 - len(v)) if isinstance(v, tuple) else v)  # type: ignore[arg-type]
            for k, v in kw.items()
        }
    )
    token = _CTX.set(ctx)
    try:
        yield ctx
    finally:
        _CTX.reset(token)


def _ctx() -> ThreadContext:
    c = _CTX.get()
    if c is None:
        raise WaveError(
            "kernel builtins run in plain Python only inside `with wg.python_thread(...)`; "
            "call the kernel with grid=... to run it on a device"
        )
    return c


def thread_id(axis: int = 0) -> np.int32:
    return np.int32(_ctx().thread[axis])


def workgroup_id(axis: int = 0) -> np.int32:
    return np.int32(_ctx().workgroup[axis])


def workgroup_size(axis: int = 0) -> np.int32:
    return np.int32(_ctx().workgroup_size[axis])


def grid_size(axis: int = 0) -> np.int32:
    """The number of WORKGROUPS along `axis` (not threads, unlike numba's cuda.gridsize): the
    total thread count, the stride of a grid-stride loop, is `global_size(axis)`."""
    return np.int32(_ctx().grid[axis])


def global_size(axis: int = 0) -> np.int32:
    """The number of threads along `axis`: grid_size(axis) * workgroup_size(axis), the stride of
    a grid-stride loop (numba's cuda.gridsize)."""
    c = _ctx()
    return np.int32(c.grid[axis] * c.workgroup_size[axis])


def global_id(axis: int = 0) -> np.int32:
    c = _ctx()
    return np.int32(c.workgroup[axis] * c.workgroup_size[axis] + c.thread[axis])


def lane_id() -> np.int32:
    c = _ctx()
    return np.int32(c.thread[0] % c.wave_width)


def wave_id() -> np.int32:
    c = _ctx()
    return np.int32(c.thread[0] // c.wave_width)


def wave_width() -> np.int32:
    return np.int32(_ctx().wave_width)


def barrier() -> None:
    """One thread at a time: a barrier orders nothing here."""


def fence(scope: str = "device") -> None:
    del scope


def _element_type(dtype: object) -> np.dtype:
    """The NumPy dtype of a kernel's element type (wg.f32, ..., or Python's bool): the dtype of
    a zero made by the type's scalar constructor."""
    from ..compiler.types import NUMPY

    name = "bool" if dtype is bool else getattr(dtype, "name", None)
    if not isinstance(name, str) or name not in NUMPY:
        raise WaveError(f"{dtype!r} is not an element type (wg.f32, wg.i32, wg.u32, ...)")
    return np.asarray(NUMPY[name](0)).dtype


def local_array(dtype: object, n: int | tuple[int, int]) -> np.ndarray:
    """A count or a (rows, cols) shape, as in kernels."""
    return np.zeros(n, dtype=_element_type(dtype))


def private_array(dtype: object, n: int | tuple[int, int]) -> np.ndarray:
    """A per-thread array: zeros of a count or a (rows, cols) shape, as in kernels (Python's
    `bool` is the element type bool)."""
    return np.zeros(n, dtype=_element_type(dtype))


def static_range(*args: int) -> range:
    """`for i in wg.static_range(...)`: the loop a kernel has unrolled, here Python's own range
    (a loop form of the language, not a row of compiler/builtins.py)."""
    return range(*args)


def _atomic(op: str) -> Callable[..., object]:
    def fn(arr: np.ndarray, index: int, *vals: object) -> object:
        if arr.dtype.itemsize < 4:
            raise WaveError(f"atomics work on i32, u32 and f32 arrays, not {arr.dtype} (32- and 64-bit atomics only)")
        old = arr[index].copy()
        v = arr.dtype.type(vals[0])
        arr[index] = {
            "add": lambda: old + v,
            "sub": lambda: old - v,
            "min": lambda: min(old, v),
            "max": lambda: max(old, v),
            "and": lambda: old & v,
            "or": lambda: old | v,
            "xor": lambda: old ^ v,
            "exchange": lambda: v,
            "cas": lambda: arr.dtype.type(vals[1]) if old == v else old,
        }[op]()
        return old

    return fn


atomic_add, atomic_sub, atomic_min, atomic_max = (_atomic(o) for o in ("add", "sub", "min", "max"))
atomic_and, atomic_or, atomic_xor, atomic_exchange, atomic_cas = (
    _atomic(o) for o in ("and", "or", "xor", "exchange", "cas")
)


def _one_lane(x: object, *_: object) -> object:
    """A wave of one thread: reductions and shuffles return the thread's own value."""
    return x


wave_reduce_add = wave_reduce_min = wave_reduce_max = wave_reduce_and = wave_reduce_or = _one_lane
wave_shuffle = wave_shuffle_up = wave_shuffle_down = wave_shuffle_xor = wave_broadcast = _one_lane


def wave_prefix_add(x: object) -> object:
    return type(x)(0)  # type: ignore[call-arg]


def wave_ballot(c: object) -> np.uint32:
    return np.uint32(1 if c else 0)


def wave_any(c: object) -> bool:
    return bool(c)


wave_all = wave_any


def _f(fn: Callable[[np.ndarray], Any]) -> Callable[[object], object]:
    def g(x: object) -> object:
        arr = np.asarray(x)
        dt = arr.dtype if arr.dtype.kind == "f" else np.dtype(np.float32)
        with np.errstate(all="ignore"):
            return dt.type(fn(arr.astype(np.float64)))

    return g


sqrt, sin, cos, exp, exp2, log, log2, floor, ceil = (
    _f(f) for f in (np.sqrt, np.sin, np.cos, np.exp, np.exp2, np.log, np.log2, np.floor, np.ceil)
)
rsqrt = _f(lambda x: 1.0 / np.sqrt(x))


def fma(a: Scalar, b: Scalar, c: Scalar) -> object:
    from ..isa.semantics import fma_f32, fma_f64

    if np.asarray(a).dtype == np.float64:
        return np.float64(fma_f64(np.asarray(a, np.float64), np.asarray(b, np.float64), np.asarray(c, np.float64)))
    return np.float32(fma_f32(np.asarray(a, np.float32), np.asarray(b, np.float32), np.asarray(c, np.float32)))


def pow(x: Scalar, y: Scalar) -> np.float32:
    """The float power (C's powf, NumPy's power), computed in f64 and rounded once."""
    with np.errstate(all="ignore"):
        return np.float32(np.power(np.float64(np.float32(x)), np.float64(np.float32(y))))


def _device_minmax(a: Scalar, b: Scalar, less: bool) -> Scalar:
    """The device's min (less) or max of two numbers: a NaN operand gives the other; -0.0 orders
    below +0.0 (IEEE minNum and maxNum, the ISA's min.f32 and max.f32)."""
    x, y = np.asarray(a)[()], np.asarray(b)[()]
    if isinstance(x, np.floating | float) or isinstance(y, np.floating | float):
        if x != x:
            return b
        if y != y:
            return a
        if x == y:  # equal, or zeros of either sign
            first = bool(np.signbit(x)) if less else not bool(np.signbit(x))
            return a if first else b
    return (a if not y < x else b) if less else (a if not y > x else b)


def fmin(*xs: Scalar) -> Scalar:
    """`wg.fmin(a, b, ...)`: the device's min, left to right (a NaN operand gives the other)."""
    r = xs[0]
    for x in xs[1:]:
        r = _device_minmax(r, x, True)
    return r


def fmax(*xs: Scalar) -> Scalar:
    """`wg.fmax(a, b, ...)`: the device's max, left to right (a NaN operand gives the other)."""
    r = xs[0]
    for x in xs[1:]:
        r = _device_minmax(r, x, False)
    return r


def clamp(x: Scalar, lo: Scalar, hi: Scalar) -> Scalar:
    """min(max(x, lo), hi), with the device's min and max (a NaN operand gives the other)."""
    return np.fmin(np.fmax(x, lo), hi)


def clamp_keep_nan(x: Scalar, lo: Scalar, hi: Scalar) -> Scalar:
    """x < lo ? lo : x > hi ? hi : x (Rust's f32::clamp, C++'s std::clamp): a NaN x stays NaN."""
    return lo if x < lo else hi if x > hi else x


def sign(x: Scalar) -> object:
    """1, -1 or x itself for a zero (keeping -0.0) or a NaN, in x's type."""
    v = np.asarray(x)[()]
    t = type(v)
    return t(1) if v > 0 else t(-1) if v < 0 else v


def signum(x: Scalar) -> object:
    """Rust's f32::signum: 1.0 or -1.0 with x's sign (+0.0 gives 1.0, -0.0 gives -1.0); NaN for NaN."""
    v = np.asarray(x)[()]
    t = type(v) if isinstance(v, np.floating) else np.float32
    return v if np.isnan(v) else t(np.copysign(1.0, v))


def isnan(x: Scalar) -> bool:
    return bool(np.isnan(x))


def _float(fn: Callable[[np.ndarray], Any]) -> Callable[[object], object]:
    def g(x: object) -> object:
        arr = np.asarray(x)
        dt = arr.dtype if arr.dtype.kind == "f" else np.dtype(np.float32)
        return dt.type(fn(arr.astype(dt)))

    return g


trunc = _float(np.trunc)
round_even = _float(np.round)  # ties to even, as Python's round
round_away = _float(lambda x: np.copysign(np.floor(np.abs(x.astype(np.float64)) + 0.5), x))  # C's roundf


def _half_up(x: np.ndarray) -> np.ndarray:
    """JavaScript's Math.round: ties toward +inf, from floor(x) and the exact rest x - floor(x)."""
    with np.errstate(invalid="ignore"):
        fl = np.floor(x)
        r = np.where(x - fl >= 0.5, fl + 1, fl)
    return np.where(r == 0, np.copysign(r, x), r)


round_half_up = _float(_half_up)


def _bits(x: object) -> int:
    return int(np.asarray(x).astype(np.int64)) & 0xFFFFFFFF


def popcount(x: object) -> np.int32:
    return np.int32(_bits(x).bit_count())


def clz(x: object) -> np.int32:
    return np.int32(32 - _bits(x).bit_length())


def ctz(x: object) -> np.int32:
    v = _bits(x)
    return np.int32((v & -v).bit_length() - 1 if v else 32)


# python_thread and every function a row of compiler/builtins.py names here: static, so type checkers
# and editors see `wg.sqrt` (tests/compiler/test_builtin_table.py checks it against the table)
__all__ = [
    "atomic_add",
    "atomic_and",
    "atomic_cas",
    "atomic_exchange",
    "atomic_max",
    "atomic_min",
    "atomic_or",
    "atomic_sub",
    "atomic_xor",
    "barrier",
    "ceil",
    "clamp",
    "clamp_keep_nan",
    "clz",
    "cos",
    "ctz",
    "exp",
    "exp2",
    "fence",
    "floor",
    "fma",
    "fmax",
    "fmin",
    "global_id",
    "global_size",
    "grid_size",
    "isnan",
    "lane_id",
    "local_array",
    "log",
    "log2",
    "popcount",
    "pow",
    "private_array",
    "python_thread",
    "round_away",
    "round_even",
    "round_half_up",
    "rsqrt",
    "sign",
    "signum",
    "sin",
    "sqrt",
    "static_range",
    "thread_id",
    "trunc",
    "wave_all",
    "wave_any",
    "wave_ballot",
    "wave_broadcast",
    "wave_id",
    "wave_prefix_add",
    "wave_reduce_add",
    "wave_reduce_and",
    "wave_reduce_max",
    "wave_reduce_min",
    "wave_reduce_or",
    "wave_shuffle",
    "wave_shuffle_down",
    "wave_shuffle_up",
    "wave_shuffle_xor",
    "wave_width",
    "workgroup_id",
    "workgroup_size",
]
