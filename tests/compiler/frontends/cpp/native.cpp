// Helpers, templates and statements compiled by WAVE and natively by g++: the same answers.
#include "wave.hpp"

template <typename T>
T twice(const T& x) {
    return x + x;
}
template <typename T, int32_t K>
T scale(T x) {
    return x * K;
}
template <typename T>
void store(T* o, uint32_t i, T v) {
    o[i] = v;
}
int32_t collatz_steps(uint32_t x) {
    int32_t steps = 0;
    while (x != 1u) {
        x = (x % 2u == 0u) ? x / 2u : 3u * x + 1u;
        ++steps;
        if (steps > 500) {
            return -1;
        }
    }
    return steps;
}
uint32_t pick(uint32_t a, uint32_t b) {
    if (a > b) {
        return a - b;
    } else if (a == b) {
        return 0u;
    }
    return b - a;
}
int32_t classify(int32_t v) {
    switch (v % 4) {
        case 0:
            return 10;
        case 1:
        case -1:
            v += 100;
        case 2:
            v *= 2;
            break;
        default:
            v = -v;
    }
    return v;
}
void early(int32_t* o, int32_t v) {
    if (v < 0) {
        return;
    }
    o[40] += v;
}

[[wave::kernel]] void native(int32_t* o, uint8_t* bytes, int16_t* shorts, float* f, const int32_t* in) {
    int32_t k = 0;
    for (int32_t i = 0; i < 10; i++) {
        if (i == 2) continue;
        if (i == 8) break;
        k += i * i;
    }
    o[0] = k;
    uint32_t j = 10;
    while (j-- > 3u) {
        if (j % 3u == 0u) continue;
        k -= static_cast<int32_t>(j);
    }
    o[1] = k;
    o[2] = static_cast<int32_t>(j);
    int32_t d = 0;
    do {
        d += 3;
        if (d == 9) continue;
        d++;
    } while (d < 20);
    o[3] = d;
    o[4] = twice(in[0]) + scale<int32_t, 5>(in[1]);
    f[0] = twice(f[1]) * scale<float, 3>(0.5f);
    store(o, 5, in[2] / 7);
    store(o, 6, in[2] % 7);
    o[7] = collatz_steps(27u);
    o[8] = static_cast<int32_t>(pick(3u, 10u) + pick(10u, 3u) + pick(4u, 4u));
    early(o, -5);
    early(o, 7);
    bytes[0] = o[0] + 200;
    bytes[1] = static_cast<uint8_t>(bytes[2] + 250);
    bytes[3] += 200;
    shorts[0] = -in[1];
    shorts[1] = shorts[2] * 3;
    o[9] = bytes[4] - 300;
    o[10] = shorts[3] >> 2;
    int32_t x = in[0];
    {
        int32_t x = 100;
        o[11] = x;
    }
    o[12] = x++;
    o[26] = ++x;
    o[13] = x;
    o[14] = (in[0] < 0u) + (in[1] > -1) * 2;
    o[15] = -in[3] / 4 + (-in[3]) % 4;
    o[16] = static_cast<int32_t>(1.9f) + static_cast<int32_t>(-1.9) + (int32_t)2.5f;
    o[17] = static_cast<int32_t>(0.1f + 0.2 == 0.3) + static_cast<int32_t>(0.1 + 0.2 == 0.3);
    o[18] = ~in[0] ^ (in[1] << 3) | (in[2] & 0x0F0F);
    uint32_t u = static_cast<uint32_t>(in[0]);
    o[19] = static_cast<int32_t>(u >> 28) + (in[0] >> 28);
    o[20] = in[0] != 0 && in[1] / in[0] > 2 ? 1 : (in[1] || in[2]) ? 2 : 3;
    int32_t acc = 0;
    for (uint32_t a = 0, b = 20; a < b; a += 3, --b) {
        acc += static_cast<int32_t>(a * b);
    }
    o[21] = acc;
    o[22] = static_cast<int32_t>(static_cast<half>(f[1]) * static_cast<half>(3.0f));
    o[23] = 7;
    o[23] <<= 2;
    o[23] |= 1;
    o[23] %= 5;
    int32_t neg = -17;
    neg /= 4;
    o[24] = neg;
    float fl = 10.0f;
    fl *= 0.1;
    f[2] = fl;
    f[3] = 1 / 3;
    f[4] = 1.0f / 3;
    bool flag = in[0];
    o[25] = flag + true;
    o[27] = collatz_steps(0u);
    int32_t sw = 0;
    for (int32_t q = -5; q < 6; ++q) {
        switch (q & 3) {
            case 1:
                continue;
            case 2:
                sw += 7;
                break;
            default:
                sw += q;
        }
        sw += classify(q);
        if (sw > 1000) {
            break;
        }
    }
    o[28] = sw;
    uint32_t top = static_cast<uint32_t>(in[0]);
    switch (top >> 30) {
        case 3u:
            o[29] = 3;
            break;
        case 0u:
            o[29] = -1;
            break;
        default:
            o[29] = 9;
    }
}
