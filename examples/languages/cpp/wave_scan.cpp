// The exclusive prefix sum of x within each wave (uint32_t, wrapping).
#include "wave.hpp"

using namespace wave;

[[wave::kernel]] void wave_scan(const uint32_t* x, uint32_t* out, uint32_t n) {
    uint32_t i = global_id(0);
    uint32_t v = i < n ? x[i] : 0u;
    uint32_t p = wave_prefix_add(v);
    if (i < n) {
        out[i] = p;
    }
}
