"""bins[data[i] % nbins] += 1 by atomics."""

import wavegpu as wg


@wg.kernel
def histogram(data: wg.u32[:], bins: wg.u32[:], n: wg.u32, nbins: wg.u32):
    i = wg.global_id(0)
    if i < n:
        wg.atomic_add(bins, data[i] % nbins, 1)
