// out (cols x rows) = transpose of a (rows x cols) through a 16 x 17 local tile; 16 x 16 workgroups.

/** @kernel */
export function transpose(a: Float32Array, out: Float32Array, rows: u32, cols: u32): void {
  const tile = wave.local_array(Float32Array, 16 * 17);
  const tx = wave.thread_id(0);
  const ty = wave.thread_id(1);
  const bx = wave.workgroup_id(0) * 16;
  const by = wave.workgroup_id(1) * 16;
  if (by + ty < rows && bx + tx < cols) {
    tile[ty * 17 + tx] = a[(by + ty) * cols + bx + tx];
  }
  wave.barrier();
  if (bx + ty < cols && by + tx < rows) {
    out[(bx + ty) * rows + by + tx] = tile[tx * 17 + ty];
  }
}
