
__attribute__((intel_reqd_sub_group_size(32))) __attribute__((reqd_work_group_size(128, 1, 1)))
__kernel void flat_saxpy(__global uchar* restrict mem, __global const uchar* restrict cmem, uint wv_glo, uint wv_glast, uint wv_clo, uint wv_clast, uint wv_err, uint a0, uint a1, uint a2, uint a3) {
    uint r0 = 0u, r1 = 0u, r2 = 0u, r3 = 0u, r4 = 0u, r5 = 0u, r6 = 0u, r7 = 0u, r8 = 0u, r9 = 0u, r10 = 0u, r11 = 0u;
    bool p0 = false;
    r0 = a0;
    r1 = a1;
    r2 = a2;
    r3 = a3;
    uint wv_fa = 0u, wv_fpc = 0u;
    bool wv_bad = false;
    r4 = (uint)get_local_id(0);
    r5 = (uint)get_group_id(0);
    r6 = (uint)get_local_size(0);
    r4 = (r5 * r6 + r4);
    p0 = (r4 < r3);
    if (p0) {
        r7 = 0x4u;
        r7 = (r4 * r7);
        r8 = (r0 + r7);
        {
            bool wv_ok = wv_in(r8, 4u, wv_glo, wv_glast);
            WV_NOTE(wv_ok, r8, 9u);
            if (wv_ok) {
                r9 = (*((__global uint*)(mem + (r8))));
            }
        }
        r10 = (r1 + r7);
        {
            bool wv_ok = wv_in(r10, 4u, wv_glo, wv_glast);
            WV_NOTE(wv_ok, r10, 11u);
            if (wv_ok) {
                r11 = (*((__global uint*)(mem + (r10))));
            }
        }
        r11 = U(fma(F(r2), F(r9), F(r11)));
        r11 = wv_c32(F(r11));
        {
            bool wv_ok = wv_in(r10, 4u, wv_glo, wv_glast);
            WV_NOTE(wv_ok, r10, 13u);
            if (wv_ok) {
                *((__global uint*)(mem + (r10))) = r11;
            }
        }
    }
    WV_REPORT();
    return;
}
