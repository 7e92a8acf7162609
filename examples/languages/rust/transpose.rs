//! out (cols x rows) = transpose of a (rows x cols) through a 16 x 17 local tile; 16 x 16 workgroups.

use wave::*;

#[wave::kernel]
pub fn transpose(a: &[f32], out: &mut [f32], rows: u32, cols: u32) {
    let tile = local_array::<f32, { 16 * 17 }>();
    let tx = thread_id(0);
    let ty = thread_id(1);
    let bx = workgroup_id(0) * 16;
    let by = workgroup_id(1) * 16;
    if by + ty < rows && bx + tx < cols {
        tile[(ty * 17 + tx) as usize] = a[((by + ty) * cols + bx + tx) as usize];
    }
    barrier();
    if bx + ty < cols && by + tx < rows {
        out[((bx + ty) * rows + by + tx) as usize] = tile[(tx * 17 + ty) as usize];
    }
}
