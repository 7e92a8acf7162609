"""Tree reduction in local memory (the compiled twin of examples/reduce.wave)."""

import wavegpu as wg


@wg.kernel(workgroup=256)
def reduce_sum(data: wg.u32[:], out: wg.u32[:]):
    s = wg.local_array(wg.u32, 256)
    t = wg.thread_id()
    s[t] = data[wg.global_id()]
    wg.barrier()
    stride = wg.workgroup_size() // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        wg.barrier()
        stride = stride // 2
    if t == 0:
        out[wg.workgroup_id()] = s[0]
