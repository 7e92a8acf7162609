
__attribute__((intel_reqd_sub_group_size(32))) __attribute__((reqd_work_group_size(128, 1, 1)))
__kernel void flat_saxpy(__global uchar* restrict mem, __global const uchar* restrict cmem, uint a0, uint a1, uint a2, uint a3) {
    uint r0 = 0u, r1 = 0u, r2 = 0u, r3 = 0u, r4 = 0u, r5 = 0u, r6 = 0u, r7 = 0u, r8 = 0u, r9 = 0u, r10 = 0u, r11 = 0u;
    bool p0 = false;
    r0 = a0;
    r1 = a1;
    r2 = a2;
    r3 = a3;
    r4 = (uint)get_local_id(0);
    r5 = (uint)get_group_id(0);
    r6 = (uint)get_local_size(0);
    r4 = (r5 * r6 + r4);
    p0 = (r4 < r3);
    if (p0) {
        r7 = 0x4u;
        r7 = (r4 * r7);
        r8 = (r0 + r7);
        r9 = (*((__global uint*)(mem + (r8))));
        r10 = (r1 + r7);
        r11 = (*((__global uint*)(mem + (r10))));
        r11 = U(fma(F(r2), F(r9), F(r11)));
        r11 = wv_c32(F(r11));
        *((__global uint*)(mem + (r10))) = r11;
    }
    return;
}
