// Helpers taking and returning every kernel type: f64, f16, bool, i32, u32 and slices of 8-bit elements.
use wave::*;

fn halve(x: f64) -> f64 {
    x * 0.5
}

fn neg(b: bool) -> bool {
    !b
}

fn triple(v: i32) -> i32 {
    v.wrapping_mul(3)
}

fn larger16(x: f16, y: f16) -> f16 {
    x.max(y)
}

fn byte(b: &[u8], i: usize) -> u32 {
    b[i] as u32
}

#[wave::kernel]
pub fn k(d: &mut [f64], h: &mut [f16], b: &[u8], o: &mut [i32]) {
    d[0] = halve(d[0]);
    h[2] = larger16(h[0], h[1]);
    o[0] = if neg(d[0] > 1.0) { 1 } else { 2 };
    o[1] = triple(-5) + byte(b, 1) as i32;
}
