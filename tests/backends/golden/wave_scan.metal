
kernel void wave_scan(
    device uchar* mem [[buffer(0)]],
    constant uchar* cmem [[buffer(1)]],
    constant uint* wv_args [[buffer(2)]],
    uint3 wv_tid [[thread_position_in_threadgroup]],
    uint3 wv_ctaid [[threadgroup_position_in_grid]],
    uint3 wv_ntid [[threads_per_threadgroup]],
    uint3 wv_nctaid [[threadgroups_per_grid]],
    uint wv_lane [[thread_index_in_simdgroup]],
    uint wv_wid [[simdgroup_index_in_threadgroup]],
    uint wv_nwaves [[simdgroups_per_threadgroup]]) {
    const uint a0 = wv_args[0];
    const uint a1 = wv_args[1];
    const uint a2 = wv_args[2];
    uint r0 = 0u, r1 = 0u, r2 = 0u, r3 = 0u, r4 = 0u, r5 = 0u, r6 = 0u, r7 = 0u, r8 = 0u, r9 = 0u, r10 = 0u, r11 = 0u, r12 = 0u, r13 = 0u, r14 = 0u;
    bool p0 = false;
    r0 = a0;
    r1 = a1;
    r2 = a2;
    wv_mask wv_m0 = WV_ENTRY();
    bool wv_brk = false, wv_cnt = false;
    r3 = wv_tid.x;
    r4 = wv_ctaid.x;
    r5 = wv_ntid.x;
    r6 = (r4 * r5 + r3);
    r7 = wv_shl(r6, 0x2u);
    r8 = (r0 + r7);
    r9 = (*((device uint*)(mem + (r8))));
    {
        wv_mask wv_act = WV_BALLOT(wv_m0, true);
        r10 = wv_prefix_add_u32(wv_act, r9, wv_lane);
    }
    r10 = (r10 + r9);
    r8 = (r1 + r7);
    *((device uint*)(mem + (r8))) = r10;
    {
        wv_mask wv_act = WV_BALLOT(wv_m0, true);
        r11 = wv_reduce_add_u32(wv_act, r9);
    }
    r12 = wv_lane;
    p0 = (r12 == 0x0u);
    if (p0) {
        r13 = 32u;
        r14 = wv_div_u32(r6, r13);
        r14 = wv_shl(r14, 0x2u);
        r14 = (r2 + r14);
        *((device uint*)(mem + (r14))) = r11;
    }
    return;
}
