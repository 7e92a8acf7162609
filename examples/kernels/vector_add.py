"""Vector add as a Python kernel (the compiled twin of examples/vector_add.wave)."""

import wavegpu as wg


@wg.kernel(workgroup=256)
def vector_add(a: wg.f32[:], b: wg.f32[:], c: wg.f32[:], n: wg.u32):
    i = wg.u32(wg.global_id())
    if i < n:
        c[i] = a[i] + b[i]
