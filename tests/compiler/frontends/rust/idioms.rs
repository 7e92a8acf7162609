// Rust idioms the frontend accepts (docs/compiler.md, the Rust table): rustc accepts this file
// with the wave crate (test_rust_rustc.py); test_rust_idioms.py runs every kernel against NumPy.
use wave::*;

/// Per-thread arrays: a 4-element tile kept in registers (unroll makes every index constant),
/// a 2-D accumulator, an array of values, and a reversed range.
#[wave::kernel]
pub fn tiles(a: &[f32], o: &mut [f32], n: u32) {
    let i = global_id(0) as usize;
    if i >= n as usize {
        return;
    }
    let mut t = [0.0f32; 4];
    let mut m = [[0.0; 3]; 2];
    let w = [1.0, 2.0, 3.0, 4.0];
    for j in unroll(0..4) {
        t[j] = a[i * 4 + j] * w[j];
    }
    for r in 0..2 {
        for c in 0..3 {
            m[r][c] = a[r + c] + t[c];
        }
    }
    let mut s = 0.0;
    for j in (0..4).rev() {
        s = s * 10.0 + t[j];
    }
    o[i] = s + m[1][2] + t.len() as f32;
}

/// Tuple `let`, blocks as values, `if let Some(v) = x.get(i)`, `u32::from(bool)`.
#[wave::kernel]
pub fn values(a: &[f32], o: &mut [f32], flags: &mut [u32], n: u32) {
    let i = global_id(0) as usize;
    if i >= n as usize {
        return;
    }
    let (q, mut r, _) = (a[i] * 2.0, a[i] + 1.0, 7);
    r += 1.0;
    let (x, y) = (r, q);
    let (x, y) = (y, x);
    let v = {
        let p = x * y;
        p + 1.0
    };
    let mut s = x - y + v;
    if let Some(e) = a.get(i + 3) {
        s += *e;
    } else if let Some(&e) = a.get(i) {
        s -= e * 100.0;
    }
    o[i] = s;
    flags[i] = u32::from(a[i] > 2.5) + 2 * u32::from(s > 20.0);
}

/// Labelled `break` and `continue` out of nested `for`, `loop` and `while`.
#[wave::kernel]
pub fn labels(a: &[u32], o: &mut [u32], n: u32) {
    let i = global_id(0) as usize;
    if i >= n as usize {
        return;
    }
    let mut count = 0u32;
    'rows: for r in 0..8u32 {
        let mut c = 0u32;
        'cols: loop {
            let mut k = 0u32;
            while k < 4 {
                k += 1;
                if (r + c + k) % 7 == a[i] {
                    continue 'rows;
                }
                if r * c * k > 20 + a[i] {
                    break 'rows;
                }
                if c > 3 {
                    break 'cols;
                }
                count += 1;
            }
            c += 1;
        }
        count += 100;
    }
    o[i] = count;
}

/// Iterators over slices, sub-slices and arrays.
#[wave::kernel]
pub fn iterators(a: &[f32], o: &mut [f32], n: u32) {
    let i = global_id(0) as usize;
    if i >= n as usize {
        return;
    }
    let mut acc = 0.0f32;
    for (j, v) in a[i..i + 4].iter().enumerate() {
        acc += *v * (j as f32 + 1.0);
    }
    for &v in &a[..2] {
        acc += v;
    }
    let t = [1.0f32, 2.0, 3.0];
    for v in t.iter() {
        acc += *v * 1000.0;
    }
    let s: f32 = a[i..].iter().sum();
    let s2 = a.iter().sum::<f32>();
    o[i] = acc + s * 10000.0 + s2;
}

/// rust-cuda style: raw pointers read and written in unsafe code.
#[wave::kernel]
pub fn saxpy_ptr(alpha: f32, x: *const f32, y: *mut f32, n: u32) {
    let i = global_id(0);
    if i < n {
        let i = i as usize;
        unsafe {
            *y.add(i) = alpha * *x.add(i) + *y.add(i);
        }
        let first = unsafe { *x };
        unsafe { *y.add(i) += first };
    }
}

/// # Safety
/// `x` and `y` hold a launch's worth of elements.
#[wave::kernel]
pub unsafe fn copy_ptr(x: *const f32, y: *mut f32) {
    let i = global_id(0) as usize;
    *y.add(i) = *x.add(i);
}

/// A loop bound computed into a temporary beside a compound store's index (mir/lower.py's
/// temporaries once shared a name with the frontend's).
#[wave::kernel]
pub fn bound(o: &mut [f32], n: u32) {
    for j in 0..(n + 1) {
        o[(j * 2 + 1) as usize] += 1.0;
    }
}
