// double and half arithmetic: out_d = d * d + 1/3 in double; out_h = h * h + h in half
// (rounded after each operation).
#include "wave.hpp"

[[wave::kernel]] void precision(const half* h, const double* d, half* out_h, double* out_d, uint32_t n) {
    uint32_t i = wave::global_id(0);
    if (i < n) {
        out_d[i] = d[i] * d[i] + 1.0 / 3.0;
        out_h[i] = h[i] * h[i] + h[i];
    }
}
