//! A loop with continue and break, and two returns: odd sums are stored negated.

use wave::*;

#[wave::kernel]
pub fn control_flow(out: &mut [i32], n: u32) {
    let i = global_id(0);
    if i >= n {
        return;
    }
    let i = i as i32;
    let mut acc = 0;
    for k in 0..64 {
        if k % 3 == 0 {
            continue;
        }
        if acc > i * 5 {
            break;
        }
        acc += k * (i % 7);
    }
    if acc % 2 == 1 {
        out[i as usize] = -acc;
        return;
    }
    out[i as usize] = acc;
}
