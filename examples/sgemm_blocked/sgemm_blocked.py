"""Register-blocked SGEMM: C = A @ B for n x n row-major f32 matrices, n a multiple of 64.

A workgroup of 16 x 16 threads computes a 64 x 64 tile of C; each thread computes a 4 x 4 block
of it in 16 registers. The K dimension advances 16 at a time through tiles of A (64 x 16, stored
k-major so a thread's four A values are adjacent) and B (16 x 64) in local memory, double
buffered: while the workgroup multiplies the tiles of step t it has already stored those of
step t + 1 in the other buffer, so one barrier per step suffices. Every C element is the fma
chain over k = 0, 1, ..., n - 1 in order, the same on every device (bit-identical results).

`sgemm_blocked.wave` beside this file is the assembly this compiles to (opt=3); regenerate it with
    .venv/bin/python examples/sgemm_blocked/sgemm_blocked.py --write-asm
"""

import sys
from pathlib import Path

import wavegpu as wg

TILE = 64  # C tile per workgroup (TILE x TILE)
KT = 16  # K step
BUF = KT * TILE  # one tile of A or B in local memory


@wg.kernel(workgroup=(16, 16), opt=3, max_registers=128)
def sgemm_blocked(a: wg.f32[:], b: wg.f32[:], c: wg.f32[:], n: wg.i32):
    sa = wg.local_array(wg.f32, 2 * BUF)  # two buffers of A^T tiles: sa[buf * BUF + k * TILE + m]
    sb = wg.local_array(wg.f32, 2 * BUF)  # two buffers of B tiles: sb[buf * BUF + k * TILE + j]
    tx = wg.thread_id(0)
    ty = wg.thread_id(1)
    t = ty * 16 + tx  # 0..255: which elements this thread loads
    row0 = wg.workgroup_id(1) * TILE
    col0 = wg.workgroup_id(0) * TILE
    # loads: A tile rows row0 + lm (4 of them, 16 apart), column lk; B tile row lk, 4 columns
    lk = t % KT
    lm = t // KT
    bj = t % TILE
    bk = t // TILE
    c00 = 0.0
    c01 = 0.0
    c02 = 0.0
    c03 = 0.0
    c10 = 0.0
    c11 = 0.0
    c12 = 0.0
    c13 = 0.0
    c20 = 0.0
    c21 = 0.0
    c22 = 0.0
    c23 = 0.0
    c30 = 0.0
    c31 = 0.0
    c32 = 0.0
    c33 = 0.0
    # the first step's tiles into buffer 0
    for i in range(4):
        sa[lk * TILE + lm + 16 * i] = a[(row0 + lm + 16 * i) * n + lk]
        sb[(bk + 4 * i) * TILE + bj] = b[(bk + 4 * i) * n + col0 + bj]
    wg.barrier()
    buf = 0
    for k0 in range(0, n, KT):
        nxt = (1 - buf) * BUF
        if k0 + KT < n:  # the next step's tiles into the other buffer
            for i in range(4):
                sa[nxt + lk * TILE + lm + 16 * i] = a[(row0 + lm + 16 * i) * n + k0 + KT + lk]
                sb[nxt + (bk + 4 * i) * TILE + bj] = b[(k0 + KT + bk + 4 * i) * n + col0 + bj]
        base = buf * BUF
        for k in range(KT):
            pa = base + k * TILE + ty * 4
            pb = base + k * TILE + tx * 4
            a0 = sa[pa]
            a1 = sa[pa + 1]
            a2 = sa[pa + 2]
            a3 = sa[pa + 3]
            b0 = sb[pb]
            b1 = sb[pb + 1]
            b2 = sb[pb + 2]
            b3 = sb[pb + 3]
            c00 = wg.fma(a0, b0, c00)
            c01 = wg.fma(a0, b1, c01)
            c02 = wg.fma(a0, b2, c02)
            c03 = wg.fma(a0, b3, c03)
            c10 = wg.fma(a1, b0, c10)
            c11 = wg.fma(a1, b1, c11)
            c12 = wg.fma(a1, b2, c12)
            c13 = wg.fma(a1, b3, c13)
            c20 = wg.fma(a2, b0, c20)
            c21 = wg.fma(a2, b1, c21)
            c22 = wg.fma(a2, b2, c22)
            c23 = wg.fma(a2, b3, c23)
            c30 = wg.fma(a3, b0, c30)
            c31 = wg.fma(a3, b1, c31)
            c32 = wg.fma(a3, b2, c32)
            c33 = wg.fma(a3, b3, c33)
        wg.barrier()  # the next tiles are stored; nobody reads this buffer any more
        buf = 1 - buf
    r = (row0 + ty * 4) * n + col0 + tx * 4
    c[r] = c00
    c[r + 1] = c01
    c[r + 2] = c02
    c[r + 3] = c03
    r += n
    c[r] = c10
    c[r + 1] = c11
    c[r + 2] = c12
    c[r + 3] = c13
    r += n
    c[r] = c20
    c[r + 1] = c21
    c[r + 2] = c22
    c[r + 3] = c23
    r += n
    c[r] = c30
    c[r + 1] = c31
    c[r + 2] = c32
    c[r + 3] = c33


def assembly() -> str:
    """The checked-in assembly: a header, then the disassembly of the compiled kernel."""
    head = "// examples/sgemm_blocked/sgemm_blocked.py compiled at opt=3 (regenerate: python examples/sgemm_blocked/sgemm_blocked.py --write-asm)\n"
    text = wg.disassemble(sgemm_blocked.program.kernels[0])
    return head + "".join(line + "\n" for line in text.splitlines() if not line.lstrip().startswith(".loc "))


if __name__ == "__main__":
    if "--write-asm" in sys.argv:
        Path(__file__).with_suffix(".wave").write_text(assembly())
    else:
        import numpy as np

        n = 128
        rng = np.random.default_rng(0)
        x, y = rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)
        out = np.zeros((n, n), np.float32)
        sgemm_blocked(x.reshape(-1), y.reshape(-1), out.reshape(-1), n, grid=(n // TILE, n // TILE))
        print("max |C - A @ B| =", float(np.abs(out - x @ y).max()))
