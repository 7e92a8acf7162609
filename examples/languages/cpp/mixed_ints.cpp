// Signed and unsigned 32-bit arithmetic that wraps: a hash, shifts, masks and a compare.
// (Signed overflow is undefined in C++; WAVE kernels wrap, as the Python version does.)
#include "wave.hpp"

[[wave::kernel]] void mixed_ints(const int32_t* a, const uint32_t* b, int32_t* out_i, uint32_t* out_u, uint32_t n) {
    uint32_t i = wave::global_id(0);
    if (i < n) {
        uint32_t h = static_cast<uint32_t>(a[i]) * 2654435761u + b[i];
        out_u[i] = (h >> 7) ^ (h << 3);
        int32_t s = (a[i] >> 3) ^ static_cast<int32_t>(b[i] & 255u);
        if (a[i] < 0) {
            s = s - 1000;
        }
        out_i[i] = s * -3;
    }
}
