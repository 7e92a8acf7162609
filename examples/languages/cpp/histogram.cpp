// bins[data[i] % nbins] += 1 by atomics.
#include "wave.hpp"

[[wave::kernel]] void histogram(const uint32_t* data, uint32_t* bins, uint32_t n, uint32_t nbins) {
    uint32_t i = wave::global_id(0);
    if (i < n) {
        wave::atomic_add(&bins[data[i] % nbins], 1u);
    }
}
