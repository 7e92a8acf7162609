"""out (cols x rows) = transpose of a (rows x cols) through a 16 x 17 local tile; 16 x 16 workgroups."""

import wavegpu as wg


@wg.kernel
def transpose(a: wg.f32[:], out: wg.f32[:], rows: wg.u32, cols: wg.u32):
    tile = wg.local_array(wg.f32, 16 * 17)
    tx = wg.thread_id(0)
    ty = wg.thread_id(1)
    bx = wg.workgroup_id(0) * 16
    by = wg.workgroup_id(1) * 16
    if by + ty < rows and bx + tx < cols:
        tile[ty * 17 + tx] = a[(by + ty) * cols + bx + tx]
    wg.barrier()
    if bx + ty < cols and by + tx < rows:
        out[(bx + ty) * rows + by + tx] = tile[tx * 17 + ty]
