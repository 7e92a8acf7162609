"""Register-blocked SGEMM, 8 x 8 outputs per thread: C = A @ B for n x n row-major f32
matrices, n a multiple of 128.

A workgroup of 16 x 16 threads computes a 128 x 128 tile of C. Each thread keeps its 8 x 8
outputs in a per-thread array (`wg.private_array`) indexed only by the counters of unrolled loops
(`wg.static_range`), so all 64 stay in registers: rows ty*4 + 0..3 and 64 + ty*4 + 0..3 of the
tile, columns tx*4 + 0..3 and 64 + tx*4 + 0..3.

K advances 8 at a time through tiles of A (128 x 8, stored transposed) and B (8 x 128) in local
memory, double buffered: a step first loads the next step's elements from device memory into
registers, then runs its 512 fma on the current buffer while those loads are in flight, then
stores them into the other buffer; one barrier per step. The step loop tests at its end (a
`while True` with a final `break`), so the accumulators are loop-carried without copies. The K
loop within a step is an ordinary `range(8)` that -O3's unroll pass unrolls (it fits its 1024
instructions; a `wg.static_range(8)` would pass the 4096-operation limit of HIR unrolling).

Local memory, one array of two buffers of 2080 words (an A^T tile, then a B tile):

- A^T: element (m, k) at k * 132 + m. A thread reads its 4 + 4 rows of column k as two 128-bit
  loads (the vectorize pass proves them 16-byte aligned: 132, ty * 4 and the buffer offsets are
  multiples of 4 words); a warp's two values of ty make two addresses, a broadcast. The 4 words
  of padding make the transposing stores conflict-free: a warp stores (m, k) and (m, k + 4) for
  16 consecutive m, and k * 132 = 4k (mod 32 banks) puts the two halves 16 banks apart.
- B: element (k, j) at 1056 + k * 128 + j: a thread reads its columns as two 128-bit loads and
  stores its 4 elements as one; each 8-thread phase of such an access covers 128 contiguous bytes,
  all 32 banks once.

Device memory is read and written 4 elements at a time too: with n4 = n // 4 every index is
4 * (...) + q, which the vectorize pass proves 16-byte aligned (buffers are). Every C element is
the fma chain over k = 0, 1, ..., n - 1 in order, the same on every device (bit-identical).
"""

import sys

import wavegpu as wg

TM = 128  # C tile rows per workgroup
TN = 128  # C tile columns per workgroup
KT = 8  # K step
SA = TM + 4  # row stride (words) of the A^T tile: 4 words of padding (conflict-free stores)
BUF_A = KT * SA  # one A^T tile
BUF = BUF_A + KT * TN  # one buffer: an A^T tile, then a B tile


@wg.kernel(workgroup=(16, 16), opt=3)
def sgemm_8x8(a: wg.f32[:], b: wg.f32[:], c: wg.f32[:], n: wg.i32):
    s = wg.local_array(wg.f32, 2 * BUF)  # A^T at s[cur + k * SA + m], B at s[cur + BUF_A + k * TN + j]
    acc = wg.private_array(wg.f32, (8, 8))  # this thread's outputs
    fa = wg.private_array(wg.f32, 8)  # A column k at this thread's 8 rows
    fb = wg.private_array(wg.f32, 8)  # B row k at this thread's 8 columns
    ga = wg.private_array(wg.f32, 4)  # the next step's A elements this thread copies
    gb = wg.private_array(wg.f32, 4)  # the next step's B elements this thread copies
    tx = wg.thread_id(0)
    ty = wg.thread_id(1)
    t = ty * 16 + tx  # 0..255
    row0 = wg.workgroup_id(1) * TM
    col0 = wg.workgroup_id(0) * TN
    n4 = n // 4  # n is a multiple of 128: a row is n4 groups of 4
    # the elements this thread copies: A row am, k = aq * 4 + 0..3; B row bk, columns bq * 4 + 0..3
    am = t // 2
    aq = t % 2
    bk = t // 32
    bq = t % 32
    ia = 4 * ((row0 + am) * n4 + aq)  # a[ia + q]: advances KT per step
    ib = 4 * (bk * n4 + col0 // 4 + bq)  # b[ib + q]: advances KT rows per step
    sta = aq * 4 * SA + am  # where they go in a buffer
    stb = BUF_A + bk * TN + bq * 4
    rda = wg.u32(ty * 4)  # where this thread reads its A rows and B columns
    rdb = wg.u32(BUF_A + tx * 4)
    for q in wg.static_range(4):
        ga[q] = a[ia + q]
        gb[q] = b[ib + q]
    for q in wg.static_range(4):
        s[stb + q] = gb[q]
    for q in wg.static_range(4):
        s[sta + q * SA] = ga[q]
    wg.barrier()
    cur = wg.u32(0)
    k0 = 0
    while True:
        more = k0 + KT < n
        if more:  # the next step's elements, in flight during this step's fma
            ia += KT
            ib += KT * n
            for q in wg.static_range(4):
                ga[q] = a[ia + q]
                gb[q] = b[ib + q]
        for k in range(KT):
            pa = cur + rda + k * SA  # rows ty * 4 + 0..3
            pa2 = pa + 64  # rows 64 + ty * 4 + 0..3
            pb = cur + rdb + k * TN
            pb2 = pb + 64
            for i in wg.static_range(4):
                fa[i] = s[pa + i]
                fa[i + 4] = s[pa2 + i]
                fb[i] = s[pb + i]
                fb[i + 4] = s[pb2 + i]
            for i in wg.static_range(8):
                for j in wg.static_range(8):
                    acc[i, j] = wg.fma(fa[i], fb[j], acc[i, j])
        nxt = BUF - cur  # the other buffer, which nobody reads since the last barrier
        if more:
            for q in wg.static_range(4):
                s[nxt + stb + q] = gb[q]
            for q in wg.static_range(4):
                s[nxt + sta + q * SA] = ga[q]
        wg.barrier()
        cur = nxt
        k0 += KT
        if not more:
            break
    for i in wg.static_range(8):
        r = row0 + (i // 4) * 64 + ty * 4 + i % 4
        for h in wg.static_range(2):
            for q in wg.static_range(4):
                c[4 * (r * n4 + col0 // 4 + h * 16 + tx) + q] = acc[i, h * 4 + q]


if __name__ == "__main__":
    import numpy as np

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 128
    rng = np.random.default_rng(0)
    x, y = rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)
    out = np.zeros((n, n), np.float32)
    sgemm_8x8(x.reshape(-1), y.reshape(-1), out.reshape(-1), n, grid=(n // TN, n // TM))
    print("max |C - A @ B| =", float(np.abs(out - x.astype(np.float64) @ y.astype(np.float64)).max()))
