//! C = A * B for n x n row-major matrices, n a multiple of 16: 16 x 16 tiles in local memory,
//! one output per thread, launched with 16 x 16 workgroups on an (n/16, n/16) grid.

use wave::*;

#[wave::kernel]
pub fn sgemm_tiled(a: &[f32], b: &[f32], c: &mut [f32], n: u32) {
    let a_tile = local_array::<f32, 256>();
    let b_tile = local_array::<f32, 256>();
    let tx = thread_id(0);
    let ty = thread_id(1);
    let col = workgroup_id(0) * 16 + tx;
    let row = workgroup_id(1) * 16 + ty;
    let mut acc = 0.0_f32;
    for t in (0..n).step_by(16) {
        a_tile[(ty * 16 + tx) as usize] = a[(row * n + t + tx) as usize];
        b_tile[(ty * 16 + tx) as usize] = b[((t + ty) * n + col) as usize];
        barrier();
        for k in 0..16 {
            acc = acc + a_tile[(ty * 16 + k) as usize] * b_tile[(k * 16 + tx) as usize];
        }
        barrier();
    }
    c[(row * n + col) as usize] = acc;
}
