"""Value rows (integer, bitwise, float, conversion, compare, select, moves): the row's semantics
from isa.semantics applied to its source operands, written under the executing-lane mask.

`VALUE_OVERRIDES` replaces a row's reference function by a faster one that is proven
bit-identical to it (tests/emulator/test_fma_fast.py): only `fma.f32` today.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ...isa import semantics as sem
from ...isa.instruction import Instruction
from ...isa.table import row
from ...isa.types import Role
from ...isa.vocabulary import Op
from ..state import State, Step

F32 = np.float32
F64 = np.float64
U32 = np.uint32
U64 = np.uint64

_MOV = row("mov.b32")
_FMA_F32 = row("fma.f32")

_MID = U64(0x1FFFFFFF)  # float64 bits below float32 precision
_HALF = U64(0x10000000)  # ... exactly half a float32 unit: a float32 midpoint
_TINY = U32(0x01000000)  # float32 magnitude bits of 2**-125


def fma_f32_fast(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Correctly rounded float32 fma of float32 values; bit-identical to isa.semantics.fma_f32
    in about half its passes over the data.

    a*b is exact in float64 and the float64 sum is one rounding away from the exact result;
    rounding that again to float32 is wrong only when the sum lands exactly on a float32
    midpoint, or where float32 is subnormal (|result| <= 2**-125 here, zero included, so a sum
    that underflows to zero is caught too): those lanes take isa.semantics' round-to-odd path.
    The casts to float64 happen inside the multiply and the add (no float64 copies of a, b, c).
    """
    s = np.multiply(a, b, dtype=F64)
    if s.ndim != 1:  # lanes are one-dimensional; uniform operands take the reference
        return sem.fma_f32(a, b, c)
    if c.ndim == 0 or c.shape == s.shape:
        np.add(s, c, out=s, dtype=F64)
    else:
        s = np.add(s, c, dtype=F64)
    r = s.astype(F32)
    sus = np.bitwise_and(s.view(U64), _MID) == _HALF
    mag = np.bitwise_and(r.view(U32), U32(0x7FFFFFFF))
    sus |= mag <= _TINY
    where = np.flatnonzero(sus)
    if where.size:
        where = where[s[where] != 0]  # exact zeros are exact
        if where.size:
            n = s.shape
            p = np.broadcast_to(a, n)[where].astype(F64) * np.broadcast_to(b, n)[where].astype(F64)
            r[where] = sem._fma64_round_odd(p, np.broadcast_to(c, n)[where].astype(F64)).astype(F32)
    return r


def _fmaf(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    return sem.canon32(fma_f32_fast(sem.f32(a), sem.f32(b), sem.f32(c)))


VALUE_OVERRIDES: dict[str, Callable[..., np.ndarray]] = {_FMA_F32.key: _fmaf}
"""Row key -> a faster function bit-identical to isa.semantics.SEMANTICS[key]."""


def value_function(key: str) -> Callable[..., np.ndarray]:
    """The function computing a value row's result from its source values."""
    return VALUE_OVERRIDES.get(key) or sem.SEMANTICS[key]


def compile_value(st: State, inst: Instruction, pc: int, f: Callable[..., np.ndarray] | None = None) -> Step:
    """A value row: its destination := f(sources) on the executing lanes."""
    spec = inst.spec
    if f is None:
        f = value_function(spec.key)
    pairs = [(o, s) for o, s in zip(inst.operands, spec.operands) if s.role is Role.SRC]
    srcs = [st.reader(o) for o, _ in pairs]
    reads = [o for o, _ in pairs]
    dst = st.writer(inst.operands[spec.dests[0]])
    scatter = st.scatterer(inst.operands[spec.dests[0]])
    sparse = st.sparse
    guard = st.guard_reader(inst)
    chk = st.checker
    exec_mask, count = st.exec_mask, st.count
    # an integer division by zero traps when asked (WAVE defines its value, DESIGN section 3;
    # in Python it is an error: kernel calls ask under check and boundscheck)
    divides = st.launch.zero_division and spec.op in (Op.DIV, Op.REM) and not (spec.dtype and spec.dtype.is_float)
    if len(srcs) == 2 and chk is None and not divides:
        s0, s1 = srcs

        def run2() -> None:
            m = exec_mask(guard)
            if scatter is not None and sparse(m):  # a divergent region: compute on its lanes only
                idx = np.flatnonzero(m)
                a, b = s0(), s1()  # (read even without an executing lane: %clock counts its reads)
                if idx.size:
                    scatter(idx, np.asarray(f(a[idx] if a.ndim else a, b[idx] if b.ndim else b)))
            else:
                dst(f(s0(), s1()), m)
            count(pc, m)

        return run2

    def run() -> None:
        m = exec_mask(guard)
        if chk:
            chk.reads(pc, reads, m)  # type: ignore[attr-defined]
        vals = [s() for s in srcs]
        if divides:
            check_divisor(st, pc, vals[-1], m)
        if scatter is not None and sparse(m):
            idx = np.flatnonzero(m)
            if idx.size:
                scatter(idx, np.asarray(f(*[v[idx] if v.ndim else v for v in vals])))
        else:
            dst(f(*vals), m)
        count(pc, m)

    return run


def check_divisor(st: State, pc: int, divisor: np.ndarray, m: np.ndarray | None) -> None:
    lanes = st.active if m is None else m
    bad = lanes & (np.broadcast_to(divisor, lanes.shape) == 0)
    if bad.any():
        raise st.trap(
            pc,
            "integer division by zero (the run asked for this check: check=True or boundscheck; "
            "without it the result is the one DESIGN section 3 defines)",
            int(np.flatnonzero(bad)[0]),
        )


def compile_sreg(st: State, inst: Instruction, pc: int) -> Step:
    """mov.b32.sreg: a move from the special register's reader."""
    return compile_value(st, inst, pc, sem.SEMANTICS[_MOV.key])


def compile_nop(st: State, inst: Instruction, pc: int) -> Step:
    """nop, and fence (the machine is sequentially consistent): statistics only."""

    def run() -> None:
        st.count(pc, None)

    return run
