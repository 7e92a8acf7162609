// C = A * B for n x n row-major matrices, n a multiple of 16: 16 x 16 tiles in local memory,
// one output per thread, launched with 16 x 16 workgroups on an (n/16, n/16) grid.
#include "wave.hpp"

constexpr uint32_t TILE = 16;

[[wave::kernel]] void sgemm_tiled(const float* a, const float* b, float* c, uint32_t n) {
    auto a_tile = wave::local_array<float, TILE * TILE>();
    auto b_tile = wave::local_array<float, TILE * TILE>();
    uint32_t tx = wave::thread_id(0);
    uint32_t ty = wave::thread_id(1);
    uint32_t col = wave::workgroup_id(0) * TILE + tx;
    uint32_t row = wave::workgroup_id(1) * TILE + ty;
    float acc = 0.0f;
    for (uint32_t t = 0; t < n; t += TILE) {
        a_tile[ty * TILE + tx] = a[row * n + t + tx];
        b_tile[ty * TILE + tx] = b[(t + ty) * n + col];
        wave::barrier();
        for (uint32_t k = 0; k < TILE; ++k) {
            acc = acc + a_tile[ty * TILE + k] * b_tile[k * TILE + tx];
        }
        wave::barrier();
    }
    c[row * n + col] = acc;
}
