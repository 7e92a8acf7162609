"""Kernels with high register and predicate pressure (for the spilling tests)."""

import wavegpu as wg


@wg.kernel(workgroup=64)
def pressure(x: wg.f32[:], out: wg.f32[:], n: wg.i32):
    i = wg.global_id()
    v0 = x[i]
    v1 = v0 * 1.5
    v2 = v1 + 2.0
    v3 = v2 * v0
    v4 = v3 - v1
    v5 = v4 * 0.5
    v6 = v5 + v2
    v7 = v6 * v3
    v8 = v7 - v0
    v9 = v8 * 0.25
    acc = 0.0
    for k in range(n):
        acc += v0 * v1 + v2 * v3 + v4 * v5 + v6 * v7 + v8 * v9 + wg.f32(k)
    out[i] = acc + v0 + v1 + v2 + v3 + v4 + v5 + v6 + v7 + v8 + v9


@wg.kernel(workgroup=64)
def wide(x: wg.f64[:], out: wg.f64[:]):
    i = wg.global_id()
    a = x[i]
    b = a * 2.0
    c = b + a
    d = c * c
    e = d - b
    out[i] = a + b + c + d + e


@wg.kernel(workgroup=64)
def many_flags(x: wg.i32[:], out: wg.i32[:]):
    i = wg.global_id()
    v = x[i]
    f0 = v > 0
    f1 = v > 1
    f2 = v > 2
    f3 = v > 3
    f4 = v > 4
    f5 = v > 5
    f6 = v > 6
    f7 = v > 7
    f8 = v > 8
    f9 = v > 9
    f10 = v < -3
    r = 0
    if f0:
        r += 1
    if f1 and f2:
        r += 2
    if f3 or f4:
        r += 4
    if f5 != f6:
        r += 8
    if f7:
        r += 16
    if f8 and not f9:
        r += 32
    if f10:
        r += 64
    if f0 and f1 and f2 and f3 and f4 and f5 and f6 and f7 and f8 and f9:
        r += 128
    out[i] = r
