"""A 4-point average on the interior of a w x h grid: out = (up + down + left + right) * 0.25."""

import wavegpu as wg


@wg.kernel
def stencil2d(inp: wg.f32[:], out: wg.f32[:], w: wg.u32, h: wg.u32):
    x = wg.global_id(0)
    y = wg.global_id(1)
    if x > 0 and y > 0 and x < w - 1 and y < h - 1:
        c = y * w + x
        out[c] = (inp[c - w] + inp[c + w] + inp[c - 1] + inp[c + 1]) * 0.25
