"""out[i] = a[i] + b[i] for i < n."""

import wavegpu as wg


@wg.kernel
def vector_add(a: wg.f32[:], b: wg.f32[:], out: wg.f32[:], n: wg.u32):
    i = wg.global_id(0)
    if i < n:
        out[i] = a[i] + b[i]
