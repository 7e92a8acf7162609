//! y[i] = alpha * x[i] + y[i] for i < n (a multiply, then an add: no fused multiply-add).

use wave::*;

#[wave::kernel]
pub fn saxpy(alpha: f32, x: &[f32], y: &mut [f32], n: u32) {
    let i = global_id(0);
    if i < n {
        let i = i as usize;
        y[i] = alpha * x[i] + y[i];
    }
}
