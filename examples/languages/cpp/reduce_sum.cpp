// Each 256-thread workgroup sums its 256 elements by a tree in local memory: partial[g].
#include "wave.hpp"

[[wave::kernel]] void reduce_sum(const float* data, float* partial, uint32_t n) {
    __shared__ float buf[256];
    uint32_t t = wave::thread_id(0);
    uint32_t i = wave::global_id(0);
    buf[t] = i < n ? data[i] : 0.0f;
    wave::barrier();
    for (uint32_t s = 128; s > 0; s /= 2) {
        if (t < s) {
            buf[t] = buf[t] + buf[t + s];
        }
        wave::barrier();
    }
    if (t == 0) {
        partial[wave::workgroup_id(0)] = buf[0];
    }
}
