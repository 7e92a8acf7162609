// Closures that capture the kernel's variables (one by `&mut`) and slices, one typed by its first call.
use wave::*;

#[wave::kernel]
pub fn k(x: &[u32], o: &mut [u32]) {
    let mut total = 0u32;
    let mut add = |d: u32| total += d;
    add(2);
    add(x[0]);
    let last = || x[x.len() - 1];
    let pick = |a, b| if a > b { a } else { b };
    o[0] = total;
    o[1] = pick(last(), 7u32);
    o[2] = pick(3, 9);
}
