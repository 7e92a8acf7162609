"""Kernels for the bounds tests (test_device_bounds.py): one kernel, so each device builds it once."""

import wavegpu as wg


@wg.kernel
def access(x: wg.u32[:], out: wg.u32[:], kind: wg.i32, i: wg.i32):
    """Thread 0 accesses out[i] (x[i] for a negative i: x lies first, out last): kind 0 stores,
    1 loads, 2 adds atomically; kind 3: every thread t stores out[t]."""
    t = wg.global_id()
    if kind == 3:
        out[t] = wg.u32(t)
    elif t == 0:
        if kind == 0:
            if i < 0:
                x[i] = wg.u32(7)
            else:
                out[i] = wg.u32(7)
        elif kind == 1:
            if i < 0:
                out[0] = x[i]
            else:
                out[0] = out[i]
        elif i < 0:
            wg.atomic_add(x, i, wg.u32(1))
        else:
            wg.atomic_add(out, i, wg.u32(1))
