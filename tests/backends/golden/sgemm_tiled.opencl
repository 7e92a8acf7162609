
__attribute__((intel_reqd_sub_group_size(32))) __attribute__((reqd_work_group_size(16, 16, 1)))
__kernel void sgemm_tiled(__global uchar* restrict mem, __global const uchar* restrict cmem, uint wv_glo, uint wv_glast, uint wv_clo, uint wv_clast, uint wv_err, uint a0, uint a1, uint a2, uint a3) {
    uint r0 = 0u, r1 = 0u, r2 = 0u, r3 = 0u, r4 = 0u, r5 = 0u, r6 = 0u, r7 = 0u, r8 = 0u, r9 = 0u, r10 = 0u, r11 = 0u, r12 = 0u, r13 = 0u, r14 = 0u, r15 = 0u, r16 = 0u, r17 = 0u, r18 = 0u, r19 = 0u, r20 = 0u, r21 = 0u, r22 = 0u, r23 = 0u, r24 = 0u;
    bool p0 = false, p1 = false;
    r0 = a0;
    r1 = a1;
    r2 = a2;
    r3 = a3;
    __local ulong lmem_[256]; __local uchar* lmem = (__local uchar*)lmem_;
    uint wv_fa = 0u, wv_fpc = 0u;
    bool wv_bad = false;
    r4 = (uint)get_local_id(0);
    r5 = (uint)get_local_id(1);
    r6 = (uint)get_group_id(0);
    r7 = (uint)get_group_id(1);
    r6 = wv_shl(r6, 0x4u);
    r6 = (r6 + r4);
    r7 = wv_shl(r7, 0x4u);
    r7 = (r7 + r5);
    r8 = 0x0u;
    r9 = wv_shl(r5, 0x6u);
    r10 = wv_shl(r4, 0x2u);
    r11 = (r9 + r10);
    r12 = (r7 * r3 + r4);
    r12 = wv_shl(r12, 0x2u);
    r12 = (r0 + r12);
    r13 = (r5 * r3 + r6);
    r13 = wv_shl(r13, 0x2u);
    r13 = (r1 + r13);
    r14 = wv_shl(r3, 0x6u);
    r15 = wv_shr_u(r3, 0x4u);
    for (;;) {
        p0 = (r15 == 0x0u);
        if (p0) break;
        {
            bool wv_ok = wv_in(r12, 4u, wv_glo, wv_glast);
            WV_NOTE(wv_ok, r12, 23u);
            if (wv_ok) {
                r16 = (*((__global uint*)(mem + (r12))));
            }
        }
        {
            bool wv_ok = wv_in(r11, 4u, 0u, 2047u);
            WV_NOTE(wv_ok, r11, 24u);
            if (wv_ok) {
                *((__local uint*)(lmem + (r11))) = r16;
            }
        }
        {
            bool wv_ok = wv_in(r13, 4u, wv_glo, wv_glast);
            WV_NOTE(wv_ok, r13, 25u);
            if (wv_ok) {
                r17 = (*((__global uint*)(mem + (r13))));
            }
        }
        {
            bool wv_ok = wv_in((r11 + 0x400u), 4u, 0u, 2047u);
            WV_NOTE(wv_ok, (r11 + 0x400u), 26u);
            if (wv_ok) {
                *((__local uint*)(lmem + ((r11 + 0x400u)))) = r17;
            }
        }
        { volatile uint v2_ = r2; r2 = v2_; volatile uint v3_ = r3; r3 = v3_; volatile uint v6_ = r6; r6 = v6_; volatile uint v7_ = r7; r7 = v7_; volatile uint v8_ = r8; r8 = v8_; volatile uint v9_ = r9; r9 = v9_; volatile uint v10_ = r10; r10 = v10_; volatile uint v11_ = r11; r11 = v11_; volatile uint v12_ = r12; r12 = v12_; volatile uint v13_ = r13; r13 = v13_; volatile uint v14_ = r14; r14 = v14_; volatile uint v15_ = r15; r15 = v15_; }
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        r21 = 0x0u;
        r22 = 0x400u;
        for (;;) {
            p1 = (r21 >= 0x40u);
            if (p1) break;
            r23 = (r9 + r21);
            {
                bool wv_ok = wv_in(r23, 4u, 0u, 2047u);
                WV_NOTE(wv_ok, r23, 34u);
                if (wv_ok) {
                    r18 = (*((__local uint*)(lmem + (r23))));
                }
            }
            r24 = (r22 + r10);
            {
                bool wv_ok = wv_in(r24, 4u, 0u, 2047u);
                WV_NOTE(wv_ok, r24, 36u);
                if (wv_ok) {
                    r19 = (*((__local uint*)(lmem + (r24))));
                }
            }
            r8 = U(fma(F(r18), F(r19), F(r8)));
            r21 = (r21 + 0x4u);
            r22 = (r22 + 0x40u);
        }
        { volatile uint v2_ = r2; r2 = v2_; volatile uint v3_ = r3; r3 = v3_; volatile uint v6_ = r6; r6 = v6_; volatile uint v7_ = r7; r7 = v7_; volatile uint v8_ = r8; r8 = v8_; volatile uint v9_ = r9; r9 = v9_; volatile uint v10_ = r10; r10 = v10_; volatile uint v11_ = r11; r11 = v11_; volatile uint v12_ = r12; r12 = v12_; volatile uint v13_ = r13; r13 = v13_; volatile uint v14_ = r14; r14 = v14_; volatile uint v15_ = r15; r15 = v15_; }
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        r12 = (r12 + 0x40u);
        r13 = (r13 + r14);
        r15 = (r15 - 0x1u);
    }
    r20 = (r7 * r3 + r6);
    r20 = wv_shl(r20, 0x2u);
    r20 = (r2 + r20);
    r8 = wv_c32(F(r8));
    {
        bool wv_ok = wv_in(r20, 4u, wv_glo, wv_glast);
        WV_NOTE(wv_ok, r20, 49u);
        if (wv_ok) {
            *((__global uint*)(mem + (r20))) = r8;
        }
    }
    WV_REPORT();
    return;
}
