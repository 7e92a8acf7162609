"""y[i] = alpha * x[i] + y[i] for i < n (a multiply, then an add: no fused multiply-add)."""

import wavegpu as wg


@wg.kernel
def saxpy(alpha: wg.f32, x: wg.f32[:], y: wg.f32[:], n: wg.u32):
    i = wg.global_id(0)
    if i < n:
        y[i] = alpha * x[i] + y[i]
