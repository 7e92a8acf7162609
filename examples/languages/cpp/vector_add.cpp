// out[i] = a[i] + b[i] for i < n.
#include "wave.hpp"

[[wave::kernel]] void vector_add(const float* a, const float* b, float* out, uint32_t n) {
    uint32_t i = wave::global_id(0);
    if (i < n) {
        out[i] = a[i] + b[i];
    }
}
