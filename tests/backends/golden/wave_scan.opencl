
__attribute__((intel_reqd_sub_group_size(32)))
__kernel void wave_scan(__global uchar* restrict mem, __global const uchar* restrict cmem, uint wv_glo, uint wv_glast, uint wv_clo, uint wv_clast, uint wv_err, uint a0, uint a1, uint a2) {
    uint r0 = 0u, r1 = 0u, r2 = 0u, r3 = 0u, r4 = 0u, r5 = 0u, r6 = 0u, r7 = 0u, r8 = 0u, r9 = 0u, r10 = 0u, r11 = 0u, r12 = 0u, r13 = 0u, r14 = 0u;
    bool p0 = false;
    r0 = a0;
    r1 = a1;
    r2 = a2;
    uint wv_fa = 0u, wv_fpc = 0u;
    bool wv_bad = false;
    r3 = (uint)get_local_id(0);
    r4 = (uint)get_group_id(0);
    r5 = (uint)get_local_size(0);
    r6 = (r4 * r5 + r3);
    r7 = wv_shl(r6, 0x2u);
    r8 = (r0 + r7);
    {
        bool wv_ok = wv_in(r8, 4u, wv_glo, wv_glast);
        WV_NOTE(wv_ok, r8, 6u);
        if (wv_ok) {
            r9 = (*((__global uint*)(mem + (r8))));
        }
    }
    r10 = sub_group_non_uniform_scan_exclusive_add(r9);
    r10 = (r10 + r9);
    r8 = (r1 + r7);
    {
        bool wv_ok = wv_in(r8, 4u, wv_glo, wv_glast);
        WV_NOTE(wv_ok, r8, 10u);
        if (wv_ok) {
            *((__global uint*)(mem + (r8))) = r10;
        }
    }
    r11 = (uint)sub_group_non_uniform_reduce_add((uint)r9);
    r12 = (uint)get_sub_group_local_id();
    p0 = (r12 == 0x0u);
    if (p0) {
        r13 = 32u;
        r14 = wv_div_u32(r6, r13);
        r14 = wv_shl(r14, 0x2u);
        r14 = (r2 + r14);
        {
            bool wv_ok = wv_in(r14, 4u, wv_glo, wv_glast);
            WV_NOTE(wv_ok, r14, 19u);
            if (wv_ok) {
                *((__global uint*)(mem + (r14))) = r11;
            }
        }
    }
    WV_REPORT();
    return;
}
