"""Signed and unsigned 32-bit arithmetic that wraps: a hash, shifts, masks and a compare."""

import wavegpu as wg


@wg.kernel
def mixed_ints(a: wg.i32[:], b: wg.u32[:], out_i: wg.i32[:], out_u: wg.u32[:], n: wg.u32):
    i = wg.global_id(0)
    if i < n:
        h = wg.u32(a[i]) * 2654435761 + b[i]
        out_u[i] = (h >> 7) ^ (h << 3)
        s = (a[i] >> 3) ^ wg.i32(b[i] & 255)
        if a[i] < 0:
            s = s - 1000
        out_i[i] = s * -3
