"""The compiler's test corpus: Python kernels covering the kernel language."""

import sys
from pathlib import Path

import wavegpu as wg

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "kernels"))
from matmul import sgemm_tiled as matmul  # noqa: F401 - the example's tiled matmul is in the corpus too


@wg.kernel
def saxpy(a: wg.f32, x: wg.f32[:], y: wg.f32[:], n: wg.i32):
    i = wg.global_id()
    if i < n:
        y[i] = a * x[i] + y[i]


@wg.kernel(workgroup=256)
def reduce_sum(data: wg.f32[:], out: wg.f32[:], n: wg.i32):
    s = wg.local_array(wg.f32, 256)
    t = wg.thread_id()
    i = wg.global_id()
    s[t] = data[i] if i < n else 0.0
    wg.barrier()
    stride = 128
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        wg.barrier()
        stride //= 2
    if t == 0:
        out[wg.workgroup_id()] = s[0]


@wg.kernel
def histogram(data: wg.u32[:], bins: wg.u32[:], fbins: wg.f32[:], n: wg.i32):
    i = wg.global_id()
    if i >= n:
        return
    b = data[i] % 16
    wg.atomic_add(bins, b, 1)
    wg.atomic_add(fbins, b, 0.5)


@wg.kernel
def scan(x: wg.u32[:], out: wg.u32[:], totals: wg.u32[:]):
    i = wg.global_id()
    v = x[i]
    out[i] = wg.wave_prefix_add(v) + v
    total = wg.wave_reduce_add(v)
    if wg.lane_id() == 0:
        totals[i // wg.wave_width()] = total
    lanes = wg.wave_ballot(v % 2 == 1)
    if wg.wave_all(v < 1000) and wg.wave_any(v > 0):
        x[i] = lanes
    x[i] += wg.u32(wg.wave_shuffle_xor(wg.i32(v), 1)) + wg.wave_broadcast(v, 3)


@wg.kernel
def loops(out: wg.i32[:], n: wg.i32):
    i = wg.global_id()
    if i >= n:
        return
    acc = 0
    for k in range(10, -4, -3):
        if k == 4:
            continue
        acc += k * i
    j = i
    while True:
        j = j // 2
        if j < 3:
            break
        acc -= j % 7
    for k in range(i % 5):
        for m in range(k, 6):
            if m == 4:
                break
            acc += m
    if acc > 1000:
        out[i] = -1
        return
    out[i] = acc


@wg.kernel
def floor_ops(a: wg.i32[:], b: wg.i32[:], q: wg.i32[:], r: wg.i32[:], fq: wg.f32[:], n: wg.i32):
    i = wg.global_id()
    if i < n:
        x = a[i]
        y = b[i]
        q[i] = x // y
        r[i] = x % y
        fq[i] = wg.f32(x) / wg.f32(y) + (x // 7) + (x % -6) + (x // 8) + (x % 16)


@wg.kernel
def math_fns(x: wg.f32[:], out: wg.f32[:], n: wg.i32):
    i = wg.global_id()
    if i < n:
        v = x[i]
        o = i * 8
        out[o] = wg.sqrt(v)
        out[o + 1] = wg.sin(v) + wg.cos(v)
        out[o + 2] = wg.exp(v * 0.1) + wg.log2(v + 1.0)
        out[o + 3] = wg.floor(v * 1.5) - wg.ceil(v * 0.3)
        out[o + 4] = wg.fma(v, v, -1.0)
        out[o + 5] = max(v, 2.5) - min(v, 1.5) + abs(v - 3.0)
        out[o + 6] = wg.f32(wg.i32(v * 10.0)) + wg.f32(wg.u32(v))
        out[o + 7] = wg.rsqrt(v + 1.0) + wg.exp2(v * 0.25) + wg.log(v + 1.0)


TILE = 8


@wg.kernel(workgroup=(TILE, TILE))
def language(a: wg.f32[:, :], out: wg.f32[:, :], counts: wg.u32[:], n: wg.u32):
    """The idioms of docs/compiler.md together: a u32 size against i32 ids, module constants and
    folded sizes, a 2-D local tile, **, tuple swaps, n-ary min/max, len and shapes."""
    tile = wg.local_array(wg.f32, (TILE, TILE + 1))
    tx, ty = wg.thread_id(0), wg.thread_id(1)
    x = wg.workgroup_id(0) * TILE + tx
    y = wg.workgroup_id(1) * TILE + ty
    inside = y < a.shape[0] and x < a.shape[1]
    tile[ty, tx] = a[y, x] if inside else 0.0
    wg.barrier()
    if inside:
        lo, hi = tile[ty, tx], tile[tx, ty]
        if lo > hi:
            lo, hi = hi, lo
        out[y, x] = hi**2 - lo**0.5 * 2.0**-1 + max(lo, hi, 1.0) + min(abs(lo), 0.5, hi)
    g = wg.global_id(1) * wg.global_size(0) + wg.global_id(0)
    if g < n and g < len(counts):
        counts[g] += wg.u32(g) * 3 + 0xFFFFFFFF  # wraps: 3g - 1
