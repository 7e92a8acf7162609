// A loop with continue and break, and two returns: odd sums are stored negated.

/** @kernel */
export function control_flow(out: Int32Array, n: u32): void {
  const i = wave.global_id(0);
  if (i >= n) {
    return;
  }
  let acc: i32 = 0;
  for (let k = 0; k < 64; k++) {
    if (k % 3 === 0) {
      continue;
    }
    if (acc > i * 5) {
      break;
    }
    acc += k * (i % 7);
  }
  if (acc % 2 === 1) {
    out[i] = -acc;
    return;
  }
  out[i] = acc;
}
