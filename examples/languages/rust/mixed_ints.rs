//! Signed and unsigned 32-bit arithmetic that wraps: a hash, shifts, masks and a compare.

use wave::*;

#[wave::kernel]
pub fn mixed_ints(a: &[i32], b: &[u32], out_i: &mut [i32], out_u: &mut [u32], n: u32) {
    let i = global_id(0);
    if i < n {
        let i = i as usize;
        let h = (a[i] as u32).wrapping_mul(2654435761).wrapping_add(b[i]);
        out_u[i] = (h >> 7) ^ (h << 3);
        let mut s = (a[i] >> 3) ^ (b[i] & 255) as i32;
        if a[i] < 0 {
            s = s.wrapping_sub(1000);
        }
        out_i[i] = s.wrapping_mul(-3);
    }
}
