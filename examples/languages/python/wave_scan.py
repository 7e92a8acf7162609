"""The exclusive prefix sum of x within each wave (u32, wrapping)."""

import wavegpu as wg


@wg.kernel
def wave_scan(x: wg.u32[:], out: wg.u32[:], n: wg.u32):
    i = wg.global_id(0)
    v = x[i] if i < n else wg.u32(0)
    p = wg.wave_prefix_add(v)
    if i < n:
        out[i] = p
