// C = A @ B for n x n row-major matrices, n a multiple of 16: 16 x 16 tiles in local memory,
// one output per thread, launched with 16 x 16 workgroups on an (n/16, n/16) grid.
// acc is an f32 variable (each assignment rounds to f32); Math.fround rounds the product first.

const TILE = 16;

/** @kernel */
export function sgemm_tiled(a: Float32Array, b: Float32Array, c: Float32Array, n: u32): void {
  const a_tile = wave.local_array(Float32Array, TILE * TILE);
  const b_tile = wave.local_array(Float32Array, TILE * TILE);
  const tx = wave.thread_id(0);
  const ty = wave.thread_id(1);
  const col = wave.workgroup_id(0) * TILE + tx;
  const row = wave.workgroup_id(1) * TILE + ty;
  let acc: f32 = 0;
  for (let t = 0; t < n; t += TILE) {
    a_tile[ty * TILE + tx] = a[row * n + t + tx];
    b_tile[ty * TILE + tx] = b[(t + ty) * n + col];
    wave.barrier();
    for (let k = 0; k < TILE; k++) {
      acc = acc + Math.fround(a_tile[ty * TILE + k] * b_tile[k * TILE + tx]);
    }
    wave.barrier();
  }
  c[row * n + col] = acc;
}
