
__attribute__((intel_reqd_sub_group_size(32))) __attribute__((reqd_work_group_size(256, 1, 1)))
__kernel void vector_add(__global uchar* restrict mem, __global const uchar* restrict cmem, uint wv_glo, uint wv_glast, uint wv_clo, uint wv_clast, uint wv_err, uint a0, uint a1, uint a2, uint a3) {
    uint r0 = 0u, r1 = 0u, r2 = 0u, r3 = 0u, r4 = 0u, r5 = 0u, r6 = 0u, r7 = 0u, r8 = 0u;
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
    p0 = (r4 >= r3);
    if (p0) {
        WV_REPORT();
        return;
    }
    r5 = wv_shl(r4, 0x2u);
    r6 = (r0 + r5);
    {
        bool wv_ok = wv_in(r6, 4u, wv_glo, wv_glast);
        WV_NOTE(wv_ok, r6, 8u);
        if (wv_ok) {
            r7 = (*((__global uint*)(mem + (r6))));
        }
    }
    r6 = (r1 + r5);
    {
        bool wv_ok = wv_in(r6, 4u, wv_glo, wv_glast);
        WV_NOTE(wv_ok, r6, 10u);
        if (wv_ok) {
            r8 = (*((__global uint*)(mem + (r6))));
        }
    }
    r7 = U(F(r7) + F(r8));
    r6 = (r2 + r5);
    r7 = wv_c32(F(r7));
    {
        bool wv_ok = wv_in(r6, 4u, wv_glo, wv_glast);
        WV_NOTE(wv_ok, r6, 13u);
        if (wv_ok) {
            *((__global uint*)(mem + (r6))) = r7;
        }
    }
    WV_REPORT();
    return;
}
