// Rust's std methods of f32, i32 and u32 that are builtins of the table (docs/compiler.md, the
// Rust table): rustc accepts this file with the wave crate; test_rust_idioms.py runs it.
use wave::*;

#[wave::kernel]
pub fn floats(x: &[f32], y: &[f32], o: &mut [f32], nan: &mut [u32], n: u32) {
    let i = global_id(0) as usize;
    if i < n as usize {
        let v = x[i];
        let w = y[i];
        let b = i * 12;
        o[b] = v.abs().powf(w);
        o[b + 1] = v.powi(3);
        o[b + 2] = v.round();
        o[b + 3] = v.round_ties_even();
        o[b + 4] = v.trunc();
        o[b + 5] = v.clamp(-1.5, 2.5);
        o[b + 6] = v.signum();
        o[b + 7] = f32::min(v, w);
        o[b + 8] = v.max(w);
        o[b + 9] = f32::powf(w.abs(), 0.5);
        o[b + 10] = clamp(v, -1.5, 2.5);
        o[b + 11] = trunc(v) + round_away(w);
        nan[i] = v.is_nan() as u32;
    }
}

#[wave::kernel]
pub fn ints(k: &[i32], u: &[u32], oi: &mut [i32], ou: &mut [u32], n: u32) {
    let i = global_id(0) as usize;
    if i < n as usize {
        let a = k[i];
        let c = u[i];
        let b = i * 6;
        oi[b] = a.signum();
        oi[b + 1] = a.clamp(-100, 100);
        oi[b + 2] = a.pow(3);
        oi[b + 3] = core::cmp::min(a, 7);
        oi[b + 4] = std::cmp::max(a, -7);
        oi[b + 5] = a.abs();
        ou[b] = c.count_ones();
        ou[b + 1] = c.leading_zeros();
        ou[b + 2] = c.trailing_zeros();
        ou[b + 3] = a.count_ones() + a.leading_zeros() + a.trailing_zeros();
        ou[b + 4] = c.pow(2);
        ou[b + 5] = c.clamp(10, 1000);
    }
}
