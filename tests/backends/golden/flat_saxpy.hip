
extern "C" __global__ void __launch_bounds__(128) flat_saxpy(uchar* __restrict__ mem, const uchar* __restrict__ cmem, uint a0, uint a1, uint a2, uint a3) {
    uint r0 = 0u, r1 = 0u, r2 = 0u, r3 = 0u, r4 = 0u, r5 = 0u, r6 = 0u, r7 = 0u, r8 = 0u, r9 = 0u, r10 = 0u, r11 = 0u;
    bool p0 = false;
    r0 = a0;
    r1 = a1;
    r2 = a2;
    r3 = a3;
    r4 = (uint)threadIdx.x;
    r5 = (uint)blockIdx.x;
    r6 = (uint)blockDim.x;
    r4 = (r5 * r6 + r4);
    p0 = (r4 < r3);
    if (p0) {
        r7 = 0x4u;
        r7 = (r4 * r7);
        r8 = (r0 + r7);
        r9 = (*((uint*)(mem + (r8))));
        r10 = (r1 + r7);
        r11 = (*((uint*)(mem + (r10))));
        r11 = U(fma(F(r2), F(r9), F(r11)));
        r11 = wv_c32(F(r11));
        *((uint*)(mem + (r10))) = r11;
    }
    return;
}
