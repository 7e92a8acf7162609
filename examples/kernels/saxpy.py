"""SAXPY as a Python kernel: y[i] = a * x[i] + y[i]."""

import wavegpu as wg


@wg.kernel
def saxpy(a: wg.f32, x: wg.f32[:], y: wg.f32[:], n: wg.i32):
    i = wg.global_id()
    if i < n:
        y[i] = wg.fma(a, x[i], y[i])
