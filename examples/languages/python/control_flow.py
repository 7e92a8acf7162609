"""A loop with continue and break, and two returns: odd sums are stored negated."""

import wavegpu as wg


@wg.kernel
def control_flow(out: wg.i32[:], n: wg.u32):
    i = wg.global_id(0)
    if i >= n:
        return
    acc = 0
    for k in range(64):
        if k % 3 == 0:
            continue
        if acc > i * 5:
            break
        acc += k * (i % 7)
    if acc % 2 == 1:
        out[i] = -acc
        return
    out[i] = acc
