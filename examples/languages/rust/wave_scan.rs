//! The exclusive prefix sum of x within each wave (u32, wrapping).

use wave::*;

#[wave::kernel]
pub fn wave_scan(x: &[u32], out: &mut [u32], n: u32) {
    let i = global_id(0);
    let v = if i < n { x[i as usize] } else { 0 };
    let p = wave_prefix_add(v);
    if i < n {
        out[i as usize] = p;
    }
}
