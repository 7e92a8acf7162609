"""Mask bookkeeping of structured control flow for the compiled engine (DESIGN section 3), the
same rules as the NumPy engine: per construct at depth d, E[d] is the entry mask, Q[d] the
`if` predicate, B[d] and C[d] a loop's break and continue masks; `lp` names the innermost
loop around (-1: none), whose break and continue lanes stay out of enclosing masks."""

from __future__ import annotations

import numpy as np
from numba import njit

jit = njit(cache=True, nogil=True, error_model="numpy", boundscheck=False)


@jit
def start(act: np.ndarray, alive: np.ndarray, T: int, L: int) -> int:
    for i in range(L):
        alive[i] = i < T
        act[i] = i < T
    return T


@jit
def if_open(act: np.ndarray, E: np.ndarray, Q: np.ndarray, P: np.ndarray, d: int, pn: int, L: int) -> int:
    n = 0
    for i in range(L):
        e = act[i]
        q = P[pn, i]
        E[d, i] = e
        Q[d, i] = q
        t = e and q
        act[i] = t
        n += t
    return n


@jit
def _left(B: np.ndarray, C: np.ndarray, lp: int, i: int) -> bool:
    return lp >= 0 and (B[lp, i] or C[lp, i])


@jit
def if_else(
    act: np.ndarray,
    E: np.ndarray,
    Q: np.ndarray,
    alive: np.ndarray,
    B: np.ndarray,
    C: np.ndarray,
    d: int,
    lp: int,
    L: int,
) -> int:
    n = 0
    for i in range(L):
        t = E[d, i] and not Q[d, i] and alive[i] and not _left(B, C, lp, i)
        act[i] = t
        n += t
    return n


@jit
def close(
    act: np.ndarray, E: np.ndarray, alive: np.ndarray, B: np.ndarray, C: np.ndarray, d: int, lp: int, L: int
) -> int:
    """endif, or the exit of a loop: the entry lanes still alive and not gone from the loop
    (their count)."""
    n = 0
    for i in range(L):
        t = E[d, i] and alive[i] and not _left(B, C, lp, i)
        act[i] = t
        n += t
    return n


@jit
def loop_open(act: np.ndarray, E: np.ndarray, B: np.ndarray, C: np.ndarray, d: int, L: int) -> None:
    for i in range(L):
        E[d, i] = act[i]
        B[d, i] = False
        C[d, i] = False


@jit
def loop_next(act: np.ndarray, E: np.ndarray, alive: np.ndarray, B: np.ndarray, C: np.ndarray, d: int, L: int) -> int:
    """At endloop: the lanes that go round again (their count; 0 ends the loop)."""
    n = 0
    for i in range(L):
        t = E[d, i] and alive[i] and not B[d, i]
        act[i] = t
        n += t
    if n:
        for i in range(L):
            C[d, i] = False
    return n


@jit
def jump(act: np.ndarray, P: np.ndarray, X: np.ndarray, k: int, pn: int, g: int, gp: bool, L: int) -> int:
    """break (X = B) or continue (X = C) of the lanes where P[pn] holds, out of loop k; the
    lanes left active."""
    n = 0
    for i in range(L):
        if act[i] and P[pn, i] and (g < 0 or P[g, i] == gp):
            X[k, i] = True
            act[i] = False
        n += act[i]
    return n


@jit
def ret(act: np.ndarray, alive: np.ndarray, P: np.ndarray, g: int, gp: bool, L: int) -> int:
    n = 0
    for i in range(L):
        if act[i] and (g < 0 or P[g, i] == gp):
            alive[i] = False
            act[i] = False
        n += act[i]
    return n


@jit
def extract(R: np.ndarray, t: int, n: int, off: int, mask: int, L: int) -> None:
    """Scratch register t = bits off.. of register n (a sub-register source), every lane."""
    for i in range(L):
        R[t, i] = (R[n, i] >> off) & mask


@jit
def insert(
    R: np.ndarray, P: np.ndarray, act: np.ndarray, g: int, gp: bool, n: int, t: int, off: int, mask: int, L: int
) -> None:
    """A sub-register destination: bits off.. of register n = scratch t, executing lanes."""
    for i in range(L):
        if act[i] and (g < 0 or P[g, i] == gp):
            R[n, i] = (R[n, i] & ~(mask << off) & 0xFFFFFFFF) | ((R[t, i] & mask) << off)


@jit
def trap(status: np.ndarray, code: int, wg: int, pc: int) -> None:
    status[0] = code
    status[1] = wg
    status[2] = pc
