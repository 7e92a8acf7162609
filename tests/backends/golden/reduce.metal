
kernel void reduce_sum(
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
    uint r0 = 0u, r1 = 0u, r2 = 0u, r3 = 0u, r4 = 0u, r5 = 0u, r6 = 0u, r7 = 0u, r8 = 0u, r9 = 0u, r10 = 0u, r11 = 0u, r12 = 0u, r13 = 0u;
    bool p0 = false, p1 = false, p2 = false;
    r0 = a0;
    r1 = a1;
    threadgroup ulong lmem_[128]; threadgroup uchar* lmem = (threadgroup uchar*)lmem_;
    r2 = wv_tid.x;
    r3 = wv_ctaid.x;
    r4 = wv_ntid.x;
    r5 = (r3 * r4 + r2);
    r5 = wv_shl(r5, 0x2u);
    r5 = (r0 + r5);
    r6 = (*((device uint*)(mem + (r5))));
    r7 = wv_shl(r2, 0x2u);
    *((threadgroup uint*)(lmem + (r7))) = r6;
    threadgroup_barrier(mem_flags::mem_device | mem_flags::mem_threadgroup);
    r8 = wv_shr_u(r4, 0x1u);
    for (;;) {
        p0 = (r8 == 0x0u);
        if (p0) break;
        p1 = (r2 < r8);
        if (p1) {
            r9 = wv_shl(r8, 0x2u);
            r9 = (r7 + r9);
            r10 = (*((threadgroup uint*)(lmem + (r9))));
            r11 = (*((threadgroup uint*)(lmem + (r7))));
            r11 = (r11 + r10);
            *((threadgroup uint*)(lmem + (r7))) = r11;
        }
        threadgroup_barrier(mem_flags::mem_device | mem_flags::mem_threadgroup);
        r8 = wv_shr_u(r8, 0x1u);
    }
    p2 = (r2 == 0x0u);
    if (p2) {
        r12 = (*((threadgroup uint*)(lmem + (0u))));
        r13 = wv_shl(r3, 0x2u);
        r13 = (r1 + r13);
        *((device uint*)(mem + (r13))) = r12;
    }
    return;
}
