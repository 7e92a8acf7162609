#include <cmath>
#include "wave.hpp"

[[wave::kernel]] void acc(const float* x, const float* y, float* o, uint32_t n) {
    uint32_t i = wave::global_id(0);
    if (i < n) {
        float v = x[i];
        o[i] = expf(v);
        o[n + i] = exp2f(v);
        o[2 * n + i] = std::log(v);
        o[3 * n + i] = log2f(v);
        o[4 * n + i] = sinf(v);
        o[5 * n + i] = std::cos(v);
        o[6 * n + i] = sqrtf(v);
        o[7 * n + i] = wave::rsqrt(v);
    }
}
