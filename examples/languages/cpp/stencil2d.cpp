// A 4-point average on the interior of a w x h grid: out = (up + down + left + right) * 0.25f.
#include "wave.hpp"

[[wave::kernel]] void stencil2d(const float* inp, float* out, uint32_t w, uint32_t h) {
    uint32_t x = wave::global_id(0);
    uint32_t y = wave::global_id(1);
    if (x > 0 && y > 0 && x < w - 1 && y < h - 1) {
        uint32_t c = y * w + x;
        out[c] = (inp[c - w] + inp[c + w] + inp[c - 1] + inp[c + 1]) * 0.25f;
    }
}
