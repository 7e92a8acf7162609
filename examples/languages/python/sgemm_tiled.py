"""C = A @ B for n x n row-major matrices, n a multiple of 16: 16 x 16 tiles in local memory,
one output per thread, launched with 16 x 16 workgroups on an (n/16, n/16) grid."""

import wavegpu as wg


@wg.kernel
def sgemm_tiled(a: wg.f32[:], b: wg.f32[:], c: wg.f32[:], n: wg.u32):
    a_tile = wg.local_array(wg.f32, 256)
    b_tile = wg.local_array(wg.f32, 256)
    tx = wg.thread_id(0)
    ty = wg.thread_id(1)
    col = wg.workgroup_id(0) * 16 + tx
    row = wg.workgroup_id(1) * 16 + ty
    acc = wg.f32(0.0)
    for t in range(0, n, 16):
        a_tile[ty * 16 + tx] = a[row * n + t + tx]
        b_tile[ty * 16 + tx] = b[(t + ty) * n + col]
        wg.barrier()
        for k in range(16):
            acc = acc + a_tile[ty * 16 + k] * b_tile[k * 16 + tx]
        wg.barrier()
    c[row * n + col] = acc
