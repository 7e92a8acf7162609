//! f64 and f16 arithmetic: out_d = d * d + 1/3 in f64; out_h = h * h + h in f16 (rounded after each operation).

use wave::*;

#[wave::kernel]
pub fn precision(h: &[f16], d: &[f64], out_h: &mut [f16], out_d: &mut [f64], n: u32) {
    let i = global_id(0);
    if i < n {
        let i = i as usize;
        out_d[i] = d[i] * d[i] + 1.0 / 3.0;
        out_h[i] = h[i] * h[i] + h[i];
    }
}
