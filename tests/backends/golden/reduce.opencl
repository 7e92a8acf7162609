
__attribute__((intel_reqd_sub_group_size(32))) __attribute__((reqd_work_group_size(256, 1, 1)))
__kernel void reduce_sum(__global uchar* restrict mem, __global const uchar* restrict cmem, uint wv_glo, uint wv_glast, uint wv_clo, uint wv_clast, uint wv_err, uint a0, uint a1) {
    uint r0 = 0u, r1 = 0u, r2 = 0u, r3 = 0u, r4 = 0u, r5 = 0u, r6 = 0u, r7 = 0u, r8 = 0u, r9 = 0u, r10 = 0u, r11 = 0u, r12 = 0u, r13 = 0u;
    bool p0 = false, p1 = false, p2 = false;
    r0 = a0;
    r1 = a1;
    __local ulong lmem_[128]; __local uchar* lmem = (__local uchar*)lmem_;
    uint wv_fa = 0u, wv_fpc = 0u;
    bool wv_bad = false;
    r2 = (uint)get_local_id(0);
    r3 = (uint)get_group_id(0);
    r4 = (uint)get_local_size(0);
    r5 = (r3 * r4 + r2);
    r5 = wv_shl(r5, 0x2u);
    r5 = (r0 + r5);
    {
        bool wv_ok = wv_in(r5, 4u, wv_glo, wv_glast);
        WV_NOTE(wv_ok, r5, 6u);
        if (wv_ok) {
            r6 = (*((__global uint*)(mem + (r5))));
        }
    }
    r7 = wv_shl(r2, 0x2u);
    {
        bool wv_ok = wv_in(r7, 4u, 0u, 1023u);
        WV_NOTE(wv_ok, r7, 8u);
        if (wv_ok) {
            *((__local uint*)(lmem + (r7))) = r6;
        }
    }
    { volatile uint v1_ = r1; r1 = v1_; volatile uint v2_ = r2; r2 = v2_; volatile uint v3_ = r3; r3 = v3_; volatile uint v4_ = r4; r4 = v4_; volatile uint v7_ = r7; r7 = v7_; }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    r8 = wv_shr_u(r4, 0x1u);
    for (;;) {
        p0 = (r8 == 0x0u);
        if (p0) break;
        p1 = (r2 < r8);
        if (p1) {
            r9 = wv_shl(r8, 0x2u);
            r9 = (r7 + r9);
            {
                bool wv_ok = wv_in(r9, 4u, 0u, 1023u);
                WV_NOTE(wv_ok, r9, 18u);
                if (wv_ok) {
                    r10 = (*((__local uint*)(lmem + (r9))));
                }
            }
            {
                bool wv_ok = wv_in(r7, 4u, 0u, 1023u);
                WV_NOTE(wv_ok, r7, 19u);
                if (wv_ok) {
                    r11 = (*((__local uint*)(lmem + (r7))));
                }
            }
            r11 = (r11 + r10);
            {
                bool wv_ok = wv_in(r7, 4u, 0u, 1023u);
                WV_NOTE(wv_ok, r7, 21u);
                if (wv_ok) {
                    *((__local uint*)(lmem + (r7))) = r11;
                }
            }
        }
        { volatile uint v1_ = r1; r1 = v1_; volatile uint v2_ = r2; r2 = v2_; volatile uint v3_ = r3; r3 = v3_; volatile uint v7_ = r7; r7 = v7_; volatile uint v8_ = r8; r8 = v8_; }
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        r8 = wv_shr_u(r8, 0x1u);
    }
    p2 = (r2 == 0x0u);
    if (p2) {
        {
            bool wv_ok = wv_in(0u, 4u, 0u, 1023u);
            WV_NOTE(wv_ok, 0u, 28u);
            if (wv_ok) {
                r12 = (*((__local uint*)(lmem + (0u))));
            }
        }
        r13 = wv_shl(r3, 0x2u);
        r13 = (r1 + r13);
        {
            bool wv_ok = wv_in(r13, 4u, wv_glo, wv_glast);
            WV_NOTE(wv_ok, r13, 31u);
            if (wv_ok) {
                *((__global uint*)(mem + (r13))) = r12;
            }
        }
    }
    WV_REPORT();
    return;
}
