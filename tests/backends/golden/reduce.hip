
/* reduce_sum: launch with 1024 bytes of dynamic shared memory */
extern "C" __global__ void __launch_bounds__(256) reduce_sum(uchar* __restrict__ mem, const uchar* __restrict__ cmem, uint a0, uint a1) {
    uint r0 = 0u, r1 = 0u, r2 = 0u, r3 = 0u, r4 = 0u, r5 = 0u, r6 = 0u, r7 = 0u, r8 = 0u, r9 = 0u, r10 = 0u, r11 = 0u, r12 = 0u, r13 = 0u;
    bool p0 = false, p1 = false, p2 = false;
    r0 = a0;
    r1 = a1;
    extern __shared__ __attribute__((aligned(16))) uchar shared_mem[]; uchar* lmem = shared_mem;
    r2 = (uint)threadIdx.x;
    r3 = (uint)blockIdx.x;
    r4 = (uint)blockDim.x;
    r5 = (r3 * r4 + r2);
    r5 = wv_shl(r5, 0x2u);
    r5 = (r0 + r5);
    r6 = (*((uint*)(mem + (r5))));
    r7 = wv_shl(r2, 0x2u);
    *((uint*)(lmem + (r7))) = r6;
    __syncthreads();
    r8 = wv_shr_u(r4, 0x1u);
    for (;;) {
        p0 = (r8 == 0x0u);
        if (p0) break;
        p1 = (r2 < r8);
        if (p1) {
            r9 = wv_shl(r8, 0x2u);
            r9 = (r7 + r9);
            r10 = (*((uint*)(lmem + (r9))));
            r11 = (*((uint*)(lmem + (r7))));
            r11 = (r11 + r10);
            *((uint*)(lmem + (r7))) = r11;
        }
        __syncthreads();
        r8 = wv_shr_u(r8, 0x1u);
    }
    p2 = (r2 == 0x0u);
    if (p2) {
        r12 = (*((uint*)(lmem + (0u))));
        r13 = wv_shl(r3, 0x2u);
        r13 = (r1 + r13);
        *((uint*)(mem + (r13))) = r12;
    }
    return;
}
