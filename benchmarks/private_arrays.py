"""Per-thread arrays in registers against the same kernel with the array in local memory: a C++
register-blocked matrix product (a 2 x 4 accumulator tile per thread, `#pragma unroll`), once
with every tile index constant and once with one run-time index (`+ z`, z = 0 passed at run time),
which puts the tile in the thread's slice of local memory. Prints, from one run each on the
NumPy engine, the lane instructions per thread, the local-memory bytes moved and the registers;
and the compiled engine's wall time (best of 5) of both.

    python benchmarks/private_arrays.py
"""

from __future__ import annotations

import os
import platform
import time

import numpy as np

import wavegpu as wg

TILE = """
#include "wave.hpp"
using namespace wave;

[[wave::kernel]] [[wave::workgroup(16, 4)]] void tile(const float* a, const float* b, float* c, uint32_t k,
                                                     uint32_t cols, uint32_t z) {
    uint32_t col = global_id(0);
    uint32_t row = global_id(1);
    float acc[2][4] = {};
    for (uint32_t p = 0; p < k; ++p) {
        float av[2];
        float bv[4];
#pragma unroll
        for (int r = 0; r < 2; ++r) av[r] = a[(row * 2 + r) * k + p];
#pragma unroll
        for (int j = 0; j < 4; ++j) bv[j] = b[p * cols * 4 + col * 4 + j];
#pragma unroll
        for (int r = 0; r < 2; ++r) {
#pragma unroll
            for (int j = 0; j < 4; ++j) acc[r][j INDEX] += av[r] * bv[j];
        }
    }
#pragma unroll
    for (int r = 0; r < 2; ++r) {
#pragma unroll
        for (int j = 0; j < 4; ++j) c[(row * 2 + r) * cols * 4 + col * 4 + j] = acc[r][j];
    }
}
"""


def main() -> None:
    m, k, cols = 64, 64, 16
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, cols * 4)).astype(np.float32)
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cpus, load {os.getloadavg()}")
    print(f"C = A ({m} x {k}) B ({k} x {cols * 4}), 2 x 4 tile per thread, grid (1, {m // 8}), workgroup (16, 4)")
    for label, index in (("registers", ""), ("local memory", " + z")):
        src = TILE.replace(" INDEX", index)
        prog = wg.compile(src, lang="cpp")
        kern = wg.load_kernels(src, lang="cpp").tile
        c = np.zeros((m, cols * 4), np.float32)
        res = kern(a, b, c, k, cols, 0, grid=(1, m // 8), engine="numpy")
        assert np.allclose(c, a @ b, rtol=1e-4, atol=1e-4)
        st = res.stats
        best = float("inf")
        for _ in range(5):
            t0 = time.perf_counter()
            kern(a, b, c, k, cols, 0, grid=(1, m // 8), engine="compiled")
            best = min(best, time.perf_counter() - t0)
        print(
            f"{label:13s}: {st.lane_instructions / st.threads:8.1f} instructions/thread, "
            f"local bytes read {st.local_bytes_read:8d} written {st.local_bytes_written:8d}, "
            f"{prog.kernels[0].registers} registers, .local_memory {prog.kernels[0].local_memory}, "
            f"compiled engine {best * 1e3:.2f} ms"
        )


if __name__ == "__main__":
    main()
