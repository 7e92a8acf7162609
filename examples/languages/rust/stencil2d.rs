//! A 4-point average on the interior of a w x h grid: out = (up + down + left + right) * 0.25.

use wave::*;

#[wave::kernel]
pub fn stencil2d(inp: &[f32], out: &mut [f32], w: u32, h: u32) {
    let x = global_id(0);
    let y = global_id(1);
    if x > 0 && y > 0 && x < w - 1 && y < h - 1 {
        let c = (y * w + x) as usize;
        let w = w as usize;
        out[c] = (inp[c - w] + inp[c + w] + inp[c - 1] + inp[c + 1]) * 0.25;
    }
}
