"""16x16-tiled SGEMM (the compiled twin of examples/sgemm_tiled.wave)."""

import wavegpu as wg


@wg.kernel(workgroup=(16, 16))
def sgemm_tiled(a: wg.f32[:], b: wg.f32[:], c: wg.f32[:], n: wg.i32):
    ta = wg.local_array(wg.f32, 256)
    tb = wg.local_array(wg.f32, 256)
    tx = wg.thread_id(0)
    ty = wg.thread_id(1)
    row = wg.workgroup_id(1) * 16 + ty
    col = wg.workgroup_id(0) * 16 + tx
    acc = 0.0
    for t in range(0, n, 16):
        ta[ty * 16 + tx] = a[row * n + t + tx]
        tb[ty * 16 + tx] = b[(t + ty) * n + col]
        wg.barrier()
        for k in range(16):
            acc = wg.fma(ta[ty * 16 + k], tb[k * 16 + tx], acc)
        wg.barrier()
    c[row * n + col] = acc
