
kernel void flat_saxpy(
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
    const uint a3 = wv_args[3];
    uint r0 = 0u, r1 = 0u, r2 = 0u, r3 = 0u, r4 = 0u, r5 = 0u, r6 = 0u, r7 = 0u, r8 = 0u, r9 = 0u, r10 = 0u, r11 = 0u;
    bool p0 = false;
    r0 = a0;
    r1 = a1;
    r2 = a2;
    r3 = a3;
    r4 = wv_tid.x;
    r5 = wv_ctaid.x;
    r6 = wv_ntid.x;
    r4 = (r5 * r6 + r4);
    p0 = (r4 < r3);
    if (p0) {
        r7 = 0x4u;
        r7 = (r4 * r7);
        r8 = (r0 + r7);
        r9 = (*((device uint*)(mem + (r8))));
        r10 = (r1 + r7);
        r11 = (*((device uint*)(mem + (r10))));
        r11 = U(fma(F(r2), F(r9), F(r11)));
        r11 = wv_c32(F(r11));
        *((device uint*)(mem + (r10))) = r11;
    }
    return;
}
