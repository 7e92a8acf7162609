// y[i] = alpha * x[i] + y[i] for i < n (a multiply, then an add: no fused multiply-add).
#include "wave.hpp"

[[wave::kernel]] void saxpy(float alpha, const float* x, float* y, uint32_t n) {
    uint32_t i = wave::global_id(0);
    if (i < n) {
        y[i] = alpha * x[i] + y[i];
    }
}
