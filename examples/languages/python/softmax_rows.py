"""One thread per row: y = exp(x - max(x)) / sum(exp(x - max(x))), in f32."""

import wavegpu as wg


@wg.kernel
def softmax_rows(x: wg.f32[:], y: wg.f32[:], rows: wg.u32, cols: wg.u32):
    r = wg.global_id(0)
    if r < rows:
        base = r * cols
        m = x[base]
        for j in range(1, cols):
            m = max(m, x[base + j])
        s = wg.f32(0.0)
        for j in range(cols):
            e = wg.exp(x[base + j] - m)
            y[base + j] = e
            s = s + e
        for j in range(cols):
            y[base + j] = y[base + j] / s
