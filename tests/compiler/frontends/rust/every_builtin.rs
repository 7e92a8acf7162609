//! Every builtin of the kernel language under its Rust spelling (checked by rustc and compiled by
//! wave's Rust frontend; tests/compiler/frontends/test_rust.py runs it).

use wave::*;

const SCALE: f32 = 0.5;
const COUNT: usize = 64;

#[wave::kernel]
pub fn ids(out: &mut [u32]) {
    let g = wave::global_id(0) as usize;
    out[g * 12] = thread_id(0);
    out[g * 12 + 1] = thread_id(1) + thread_id(2);
    out[g * 12 + 2] = workgroup_id(0) + workgroup_id(1) + workgroup_id(2);
    out[g * 12 + 3] = workgroup_size(0);
    out[g * 12 + 4] = grid_size(0);
    out[g * 12 + 5] = global_size(0);
    out[g * 12 + 6] = lane_id();
    out[g * 12 + 7] = wave_id();
    out[g * 12 + 8] = wave_width();
    out[g * 12 + 9] = global_id(1) + global_id(2);
    out[g * 12 + 10] = out.len() as u32;
    out[g * 12 + 11] = COUNT as u32;
}

#[kernel]
pub fn memory(counts: &mut [u32], vals: &mut [i32], fs: &mut [f32]) {
    let t = thread_id(0);
    let s = local_array::<u32, COUNT>();
    s[t as usize] = t;
    barrier();
    fence(Scope::Workgroup);
    fence(Scope::Device);
    fence(wave::Scope::Wave);
    let other = s[(COUNT - 1 - t as usize) % COUNT];
    atomic_add(counts, 0usize, 1);
    atomic_sub(counts, 1usize, 1);
    atomic_max(counts, 2usize, other);
    atomic_min(counts, 3usize, other);
    atomic_or(counts, 4usize, 1 << (t % 32));
    atomic_and(counts, 5usize, !(1u32 << (t % 32)));
    atomic_xor(counts, 6usize, t);
    let old = atomic_exchange(vals, t as usize, -(t as i32));
    atomic_cas(vals, (t + 64) as usize, 0, old + 1);
    wave::atomic_add(fs, 0usize, SCALE);
}

#[kernel]
pub fn waves(xs: &[i32], out: &mut [i32], flags: &mut [u32]) {
    let t = thread_id(0);
    let x = xs[t as usize];
    let u = x as u32;
    let i = t as usize * 9;
    out[i] = wave_reduce_add(x);
    out[i + 1] = wave_reduce_min(x) + wave_reduce_max(x);
    out[i + 2] = (wave_reduce_and(u) | wave_reduce_or(u)) as i32;
    out[i + 3] = wave_prefix_add(x);
    out[i + 4] = wave_shuffle(x, (t + 1) % 32);
    out[i + 5] = wave_shuffle_up(x, 1) + wave_shuffle_down(x, 1);
    out[i + 6] = wave_shuffle_xor(x, 3);
    out[i + 7] = wave_broadcast(x, 0);
    out[i + 8] = wave_ballot(x > 0) as i32;
    flags[t as usize] = wave_any(x < 0) as u32 + 2 * wave_all(x != 0) as u32;
}

#[wave::kernel]
pub fn math(x: &[f32], out: &mut [f32], d: &mut [f64], h: &mut [f16], n: u32) {
    let i = global_id(0);
    if i >= n {
        return;
    }
    let i = i as usize;
    let v = x[i];
    let a = v.abs() + 1.0;
    let k = i * 16;
    out[k] = a.sqrt();
    out[k + 1] = a.rsqrt();
    out[k + 2] = v.sin();
    out[k + 3] = v.cos();
    out[k + 4] = v.exp();
    out[k + 5] = v.exp2();
    out[k + 6] = a.ln();
    out[k + 7] = a.log2();
    out[k + 8] = v.floor() + v.ceil();
    out[k + 9] = v.mul_add(2.0, 1.0);
    out[k + 10] = v.min(0.5).max(-0.5);
    out[k + 11] = wave::sqrt(a) + wave::log(a) + wave::fma(v, v, v) + wave::abs(v) + min(v, 1.0) + max(v, 1.0);
    out[k + 12] = f32::sqrt(a) + f32::max(v, 0.0);
    out[k + 13] = (v as i32) as f32 + (v as u32) as f32;
    out[k + 14] = std::f32::consts::PI * SCALE;
    out[k + 15] = if v > 0.0 { f32::MAX } else { f32::MIN };
    d[i] = (v as f64).sqrt().floor() + wave::ceil(v as f64);
    h[i] = f16::from_f32(v) * f16::from_f32(2.0) + h[i];
}
