import math

import wavegpu as wg


@wg.kernel
def acc(x: wg.f32[:], y: wg.f32[:], o: wg.f32[:], n: wg.u32):
    i = wg.global_id()
    if i < n:
        v = x[i]
        o[i] = math.exp(v)
        o[n + i] = wg.exp2(v)
        o[2 * n + i] = math.log(v)
        o[3 * n + i] = math.log2(v)
        o[4 * n + i] = math.sin(v)
        o[5 * n + i] = math.cos(v)
        o[6 * n + i] = math.sqrt(v)
        o[7 * n + i] = wg.rsqrt(v)
        o[8 * n + i] = math.pow(v, y[i])
