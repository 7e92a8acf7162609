
extern "C" __global__ void wave_scan(uchar* __restrict__ mem, const uchar* __restrict__ cmem, uint a0, uint a1, uint a2) {
    uint r0 = 0u, r1 = 0u, r2 = 0u, r3 = 0u, r4 = 0u, r5 = 0u, r6 = 0u, r7 = 0u, r8 = 0u, r9 = 0u, r10 = 0u, r11 = 0u, r12 = 0u, r13 = 0u, r14 = 0u;
    bool p0 = false;
    r0 = a0;
    r1 = a1;
    r2 = a2;
    wv_mask wv_m0 = WV_ENTRY();
    bool wv_brk = false, wv_cnt = false;
    r3 = (uint)threadIdx.x;
    r4 = (uint)blockIdx.x;
    r5 = (uint)blockDim.x;
    r6 = (r4 * r5 + r3);
    r7 = wv_shl(r6, 0x2u);
    r8 = (r0 + r7);
    r9 = (*((uint*)(mem + (r8))));
    {
        wv_mask wv_act = WV_BALLOT(wv_m0, true);
        r10 = wv_prefix_add_u32(wv_act, r9, wv_lane());
    }
    r10 = (r10 + r9);
    r8 = (r1 + r7);
    *((uint*)(mem + (r8))) = r10;
    {
        wv_mask wv_act = WV_BALLOT(wv_m0, true);
        r11 = wv_reduce_add_u32(wv_act, r9);
    }
    r12 = wv_lane();
    p0 = (r12 == 0x0u);
    if (p0) {
        r13 = (uint)warpSize;
        r14 = wv_div_u32(r6, r13);
        r14 = wv_shl(r14, 0x2u);
        r14 = (r2 + r14);
        *((uint*)(mem + (r14))) = r11;
    }
    return;
}
