//! Each 256-thread workgroup sums its 256 elements by a tree in local memory: partial[g].

use wave::*;

#[wave::kernel]
pub fn reduce_sum(data: &[f32], partial: &mut [f32], n: u32) {
    let buf = local_array::<f32, 256>();
    let t = thread_id(0);
    let i = global_id(0);
    buf[t as usize] = if i < n { data[i as usize] } else { 0.0 };
    barrier();
    let mut s = 128;
    while s > 0 {
        if t < s {
            buf[t as usize] = buf[t as usize] + buf[(t + s) as usize];
        }
        barrier();
        s /= 2;
    }
    if t == 0 {
        partial[workgroup_id(0) as usize] = buf[0];
    }
}
