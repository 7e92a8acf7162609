"""f64 and f16 arithmetic: out_d = d * d + 1/3 in f64; out_h = h * h + h in f16 (rounded after each operation)."""

import wavegpu as wg


@wg.kernel
def precision(h: wg.f16[:], d: wg.f64[:], out_h: wg.f16[:], out_d: wg.f64[:], n: wg.u32):
    i = wg.global_id(0)
    if i < n:
        out_d[i] = d[i] * d[i] + 1.0 / 3.0
        out_h[i] = h[i] * h[i] + h[i]
