// Helper functions and closures, inlined: helpers calling helpers, early returns inside loops and
// branches, slices passed by reference (their length read in the helper), loops in helpers.
use wave::*;

fn sq(v: f32) -> f32 {
    v * v
}

fn norm2(a: f32, b: f32) -> f32 {
    sq(a) + sq(b)
}

/// The first index at or after `from` whose element exceeds `limit`, or the slice's length.
fn first_above(x: &[f32], from: usize, limit: f32) -> usize {
    let mut i = from;
    while i < x.len() {
        if x[i] > limit {
            return i;
        }
        i += 1;
    }
    x.len()
}

fn clamp_to(v: f32, lo: f32, hi: f32) -> f32 {
    if v < lo {
        return lo;
    }
    if v > hi { hi } else { v }
}

fn sum_window(x: &[f32], start: usize, n: usize) -> f32 {
    let mut s = 0.0f32;
    for k in 0..n {
        if start + k >= x.len() {
            break;
        }
        s += x[start + k];
    }
    s
}

fn bump(counts: &mut [u32], i: usize) {
    if i >= counts.len() {
        return;
    }
    atomic_add(counts, i as u32, 1u32);
}

fn is_odd(k: u32) -> bool {
    k % 2 == 1
}

#[wave::kernel]
pub fn helpers(x: &[f32], y: &[f32], out: &mut [f32], pos: &mut [u32], counts: &mut [u32], n: u32) {
    let i = global_id(0) as usize;
    if i >= n as usize {
        return;
    }
    let scale = 0.5f32;
    let half = |v: f32| v * scale;
    let twice = |v| v + v;
    let r = norm2(x[i], y[i]);
    out[i] = clamp_to(half(r), 0.25, 8.0) + sum_window(x, i, 4) + twice(1.5f32);
    pos[i] = first_above(x, i, 0.75) as u32;
    if is_odd(i as u32) && sq(x[i]) > 0.25 {
        bump(counts, i % 4);
    }
}
