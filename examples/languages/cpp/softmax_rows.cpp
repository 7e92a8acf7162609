// One thread per row: y = exp(x - max(x)) / sum(exp(x - max(x))), in float.
#include "wave.hpp"

template <typename T>
T larger(T a, T b) {
    return wave::max(a, b);
}

[[wave::kernel]] void softmax_rows(const float* x, float* y, uint32_t rows, uint32_t cols) {
    uint32_t r = wave::global_id(0);
    if (r < rows) {
        uint32_t base = r * cols;
        float m = x[base];
        for (uint32_t j = 1; j < cols; ++j) {
            m = larger(m, x[base + j]);
        }
        float s = 0.0f;
        for (uint32_t j = 0; j < cols; ++j) {
            float e = wave::exp(x[base + j] - m);
            y[base + j] = e;
            s += e;
        }
        for (uint32_t j = 0; j < cols; ++j) {
            y[base + j] /= s;
        }
    }
}
