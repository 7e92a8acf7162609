"""Vector add with four elements per thread: the loads come first, then the stores, so the
compiler merges each run of four into one 128-bit access (`ld.global.v4.b32`, `st.global.v4.b32`;
docs/compiler.md, "Vector access"). Launch n // 4 threads (n a multiple of 4)."""

import wavegpu as wg


@wg.kernel(workgroup=256)
def vector_add4(a: wg.f32[:], b: wg.f32[:], c: wg.f32[:], n: wg.u32):
    i = wg.u32(wg.global_id()) * 4
    if i < n:
        a0 = a[i]
        a1 = a[i + 1]
        a2 = a[i + 2]
        a3 = a[i + 3]
        b0 = b[i]
        b1 = b[i + 1]
        b2 = b[i + 2]
        b3 = b[i + 3]
        c[i] = a0 + b0
        c[i + 1] = a1 + b1
        c[i + 2] = a2 + b2
        c[i + 3] = a3 + b3
