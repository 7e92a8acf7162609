//! One thread per row: y = exp(x - max(x)) / sum(exp(x - max(x))), in f32.

use wave::*;

#[wave::kernel]
pub fn softmax_rows(x: &[f32], y: &mut [f32], rows: u32, cols: u32) {
    let r = global_id(0);
    if r < rows {
        let base = (r * cols) as usize;
        let cols = cols as usize;
        let mut m = x[base];
        for j in 1..cols {
            m = m.max(x[base + j]);
        }
        let mut s = 0.0_f32;
        for j in 0..cols {
            let e = (x[base + j] - m).exp();
            y[base + j] = e;
            s = s + e;
        }
        for j in 0..cols {
            y[base + j] = y[base + j] / s;
        }
    }
}
