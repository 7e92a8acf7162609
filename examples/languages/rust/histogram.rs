//! bins[data[i] % nbins] += 1 by atomics.

use wave::*;

#[wave::kernel]
pub fn histogram(data: &[u32], bins: &mut [u32], n: u32, nbins: u32) {
    let i = global_id(0);
    if i < n {
        atomic_add(bins, (data[i as usize] % nbins) as usize, 1);
    }
}
