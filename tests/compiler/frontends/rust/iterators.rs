// Iterator chains over slices and per-thread arrays (issue 24): `.sum()` / `.product()` in any
// expression position (the type from a turbofish, or from where the value goes, as rustc infers
// it), after `.map(|v| ..)`, `.copied()` and `.zip(..)`, and `for (a, b) in x.iter().zip(..)`.
// rustc checks this file with the wave crate (test_rust_rustc.py); test_rust_iterators.py runs it.
use wave::*;

fn sq(v: f32) -> f32 {
    v * v
}

fn total(x: &[f32]) -> f32 {
    x.iter().sum() // a helper's tail: its result type
}

fn tail_from(x: &[f32], a: usize) -> f32 {
    let b = a + 1;
    let pick = |j: usize| x[j] + x[b]; // a closure in a helper reads the helper's names
    return x[a..].iter().map(|v| v * 0.5).sum::<f32>() + pick(0);
}

#[wave::kernel]
pub fn sums(x: &[f32], y: &[f32], o: &mut [f32], n: u32) {
    let i = global_id(0) as usize;
    if i >= n as usize {
        return;
    }
    let r = i * 12;
    o[r] = x[i..].iter().sum(); // the type of o's elements
    o[r + 1] = sq(x[..i].iter().sum()); // sq's parameter type
    o[r + 2] = 2.0 * x.iter().sum::<f32>() + 1.0;
    let mut s = 1.0f32;
    s += y.iter().map(|&v| v * 2.0).sum::<f32>();
    o[r + 3] = s;
    o[r + 4] = x.iter().zip(y.iter()).map(|(a, b)| a * b).sum(); // a dot product
    let p: f32 = x[i..i + 3].iter().copied().map(|v| v + 1.0).product();
    o[r + 5] = p;
    if x[..i].iter().sum::<f32>() > 10.0 {
        o[r + 6] = 1.0;
    }
    o[r + 7] = total(x) + tail_from(y, i);
    let mut t = [0.0f32; 4];
    for j in unroll(0..4) {
        t[j] = x[i + j];
    }
    o[r + 8] = t.iter().map(|v| { let w = *v * 3.0; w - 1.0 }).sum::<f32>() + total(&t);
    let mut d = 0.0f32;
    for (a, &b) in x[i..].iter().zip(&y[1..]) {
        d += *a - b;
    }
    o[r + 9] = d;
    o[r + 10] = x[..0].iter().sum::<f32>() + x[..0].iter().sum::<f32>(); // the empty sum: -0.0, as std's Sum
    o[r + 11] = y.iter().map(|v| sq(*v)).sum::<f32>().sqrt();
}

// ranges as the source: C = A B with the inner product a sum over `(0..n).map(..)`
#[wave::kernel]
pub fn matmul(a: &[f32], b: &[f32], c: &mut [f32], ints: &mut [i32], n: u32) {
    let i = global_id(0) as usize;
    let j = global_id(1) as usize;
    let n = n as usize;
    c[i * n + j] = (0..n).map(|k| a[i * n + k] * b[k * n + j]).sum();
    if i == 0 && j == 0 {
        let f: i32 = (1..=5).product(); // the literals' type: the annotation's
        ints[0] = f;
        ints[1] = (0..4).map(|k| k * 3).sum::<i32>();
        ints[2] = (0..n).map(|k| a[k] as i32).sum(); // k: usize (it indexes), the sum an i32
    }
}
