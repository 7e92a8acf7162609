// A loop with continue and break, and two returns: odd sums are stored negated.
#include "wave.hpp"

[[wave::kernel]] void control_flow(int32_t* out, uint32_t n) {
    uint32_t i = wave::global_id(0);
    if (i >= n) {
        return;
    }
    int32_t acc = 0;
    for (int32_t k = 0; k < 64; ++k) {
        if (k % 3 == 0) {
            continue;
        }
        if (acc > static_cast<int32_t>(i) * 5) {
            break;
        }
        acc += k * static_cast<int32_t>(i % 7);
    }
    if (acc % 2 == 1) {
        out[i] = -acc;
        return;
    }
    out[i] = acc;
}
