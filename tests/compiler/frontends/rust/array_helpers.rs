// Per-thread arrays passed to helpers and closures by reference (issue 24): `&mut [f32; N]`,
// `&[f32; N]`, `&mut [[f32; N]; M]`, and a slice parameter given an array (`&t` for `&[f32]`, as
// rustc coerces it). rustc checks this file with the wave crate (test_rust_rustc.py);
// test_rust_array_helpers.py runs it against NumPy.
use wave::*;

const T: usize = 4;

// acc[r][c] += a[r] * b[c]: the 4x4 register tile of a blocked matrix multiply
fn outer(acc: &mut [[f32; T]; T], a: &[f32; T], b: &[f32; T]) {
    for r in unroll(0..T) {
        for c in unroll(0..T) {
            acc[r][c] += a[r] * b[c];
        }
    }
}

fn load_row(dst: &mut [f32; T], src: &[f32], at: usize) {
    for j in unroll(0..T) {
        dst[j] = src[at + j];
    }
}

// C (4m x 4n) = A (4m x k) B (k x 4n): each thread computes one 4x4 tile of C in registers
#[wave::kernel]
pub fn tile(a: &[f32], b: &[f32], c: &mut [f32], k: u32, n: u32) {
    let col = global_id(0) as usize;
    let row = global_id(1) as usize;
    let k = k as usize;
    let w = n as usize * T;
    let mut acc = [[0.0f32; T]; T];
    for p in 0..k {
        let mut av = [0.0f32; T];
        let mut bv = [0.0f32; T];
        for r in unroll(0..T) {
            av[r] = a[(row * T + r) * k + p];
        }
        load_row(&mut bv, b, p * w + col * T);
        outer(&mut acc, &av, &bv);
    }
    for r in unroll(0..T) {
        for c2 in unroll(0..T) {
            c[(row * T + r) * w + col * T + c2] = acc[r][c2];
        }
    }
}

fn total(t: &[f32]) -> f32 {
    let mut s = 0.0f32;
    for v in t.iter() {
        s += *v;
    }
    s
}

fn bump(t: &mut [f32; T], j: usize, by: f32) {
    t[j] += by;
}

fn twice(t: &mut [f32; T], j: usize) {
    bump(t, j, 1.0); // a helper passes its parameter on
    bump(t, j, 2.0);
}

// o[i] = x[4i..4i+4] with element sel[i] raised by 3 and 10, summed; and the sum of x[4i..4i+4]
#[wave::kernel]
pub fn pick(x: &[f32], sel: &[u32], o: &mut [f32], whole: &mut [f32]) {
    let i = global_id(0) as usize;
    let mut t = [0.0; T]; // its element type: the parameter's, as rustc infers it
    load_row(&mut t, x, i * T);
    whole[i] = total(x) + total(&t); // the slice helper, once with a slice and once with the array
    twice(&mut t, sel[i] as usize); // a run-time index: the array lives in local memory
    let scale = |u: &mut [f32; T], by: f32| {
        for j in 0..T {
            u[j] *= by;
        }
    };
    scale(&mut t, 10.0);
    let peek = |u: &[f32; T], j: usize| u[j];
    o[i] = total(&t) + peek(&t, 0);
}

fn weighted(x: &[f32], at: usize) -> f32 {
    let mut t = [0.0f32; T]; // the helper's own array: one per call
    load_row(&mut t, x, at);
    let w = [1.0f32, 2.0, 3.0, 4.0];
    let mut s = 0.0f32;
    for j in unroll(0..T) {
        s += t[j] * w[j];
    }
    s
}

// per-thread arrays declared in a helper and in a closure (which also reads the kernel's)
#[wave::kernel]
pub fn own(x: &[f32], o: &mut [f32]) {
    let i = global_id(0) as usize;
    let mut t = [5.0f32; 2];
    let twice = |v: f32| {
        let mut u = [v; 2];
        u[1] += t[0];
        u[0] + u[1]
    };
    t[0] = twice(1.0);
    o[i] = weighted(x, i * T) + weighted(x, 0) + t[0] + t[1];
}
