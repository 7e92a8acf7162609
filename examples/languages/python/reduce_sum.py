"""Each 256-thread workgroup sums its 256 elements by a tree in local memory: partial[g]."""

import wavegpu as wg


@wg.kernel
def reduce_sum(data: wg.f32[:], partial: wg.f32[:], n: wg.u32):
    buf = wg.local_array(wg.f32, 256)
    t = wg.thread_id(0)
    i = wg.global_id(0)
    buf[t] = data[i] if i < n else 0.0
    wg.barrier()
    s = 128
    while s > 0:
        if t < s:
            buf[t] = buf[t] + buf[t + s]
        wg.barrier()
        s = s // 2
    if t == 0:
        partial[wg.workgroup_id(0)] = buf[0]
