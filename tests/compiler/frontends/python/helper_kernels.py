"""Kernels calling helper functions as Python users write them: plain defs of this module and of
wavehelpers.py, generic (one instance per argument types), with keywords and defaults, early
returns, arrays passed by reference, helpers calling helpers."""

import wavehelpers
from wavehelpers import count_into, sq

import wavegpu as wg


def norm2(a, b):
    return sq(a) + sq(b)


def clip(v: wg.f32, lo: wg.f32 = 0.25, hi: wg.f32 = 8.0) -> wg.f32:
    if v < lo:
        return lo
    if v > hi:
        return hi
    return v


def halve_sum(t, n):
    """A local array's length is a constant of the instance."""
    s = 0.0
    for j in range(len(t)):
        if j < n:
            s += t[j]
    return s * 0.5


@wg.kernel
def helpers(x: wg.f32[:], y: wg.f32[:], m: wg.f32[:, :], out: wg.f32[:], pos: wg.i32[:], counts: wg.u32[:]):
    i = wg.global_id()
    t = wg.local_array(wg.f32, 64)
    t[wg.thread_id()] = x[i % len(x)]
    wg.barrier()
    if i < len(x):
        r = clip(norm2(x[i], y[i]) * 0.5, hi=6.0)
        out[i] = wavehelpers.scaled(r) + sq(3) + halve_sum(t, 4) + wavehelpers.row_sum(m, i % m.shape[0])
        pos[i] = wavehelpers.first_above(x, i, 0.75)
        count_into(counts, x[i] * x[i])
