//! out[i] = a[i] + b[i] for i < n.

use wave::*;

#[wave::kernel]
pub fn vector_add(a: &[f32], b: &[f32], out: &mut [f32], n: u32) {
    let i = global_id(0);
    if i < n {
        let i = i as usize;
        out[i] = a[i] + b[i];
    }
}
