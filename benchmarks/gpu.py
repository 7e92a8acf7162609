"""NVIDIA GPU figures (issue 15): every backend path against CuPy/cuBLAS, on the GPU it finds.

    python benchmarks/gpu.py [--n 4096] [--repeat 5]

Kernel times are CUDA events around the launch (runtime/cuda.run's timing), best of --repeat
after one warm-up; the SDK rows are host wall time of a whole `@wg.kernel` call. Printed:

- SGEMM n^3, the 16x16 tiled kernel (examples/sgemm_tiled.wave) and the register-blocked ones
  (examples/sgemm_blocked: 4x4 per thread; examples/sgemm_8x8: 8x8 per thread, 128-bit tile
  loads, n a multiple of 128), each through the PTX backend (device="cuda"), the CUDA C++
  backend through NVRTC (device="cuda-cpp") and with the PTX backend's tensor-core-free
  defaults; against cuBLAS FP32 (CuPy, TF32 off), with the ratio to it;
- vector add of 2^26 f32 through both paths, in TB/s of the 12 bytes per element moved;
- a @wg.kernel SAXPY of 2^20 elements on device="cuda": the whole call with NumPy arrays
  (copies in and out) and with device arrays (no copy);
- the host overhead of that call with device arrays (issue 25: target under 20 us), median of
  --calls calls: on fakecuda's stand-in for the driver module (the whole call path, the canary
  check included, minus the GPU: measured on every machine) and on the real driver when a GPU
  is here (host wall time, which includes waiting for the kernel; "not measured" otherwise).

Without an NVIDIA GPU (or cuda-bindings) it prints the fake-driver row and the SGEMM rows as
"not measured", and exits with status 0.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples" / "sgemm_blocked"))
sys.path.insert(0, str(ROOT / "examples" / "sgemm_8x8"))
sys.path.insert(0, str(ROOT / "examples" / "kernels"))

import wavegpu as wg  # noqa: E402
from wavegpu.backends import render  # noqa: E402
from wavegpu.runtime import cuda  # noqa: E402
from wavegpu.runtime.buffers import pack  # noqa: E402
from wavegpu.runtime.device_arrays import to_device  # noqa: E402

# the SGEMM rows: (name, the C tile a 16 x 16 workgroup computes); sgemm_kernels() loads them
SGEMMS = (
    ("tiled 16x16 (sgemm_tiled.wave)", 16),
    ("register-blocked 4x4 (sgemm_blocked)", 64),
    ("register-blocked 8x8 (sgemm_8x8)", 128),
)


def sgemm_kernels() -> list[wg.Kernel]:
    """The kernels of SGEMMS, in order."""
    import sgemm_8x8
    import sgemm_blocked

    tiled = wg.assemble((ROOT / "examples" / "sgemm_tiled.wave").read_text(), "sgemm_tiled.wave").kernels[0]
    return [tiled, sgemm_blocked.sgemm_blocked.program.kernels[0], sgemm_8x8.sgemm_8x8.program.kernels[0]]


def kernel_seconds(k: wg.Kernel, path: str, grid: tuple[int, int, int], wgs: tuple[int, int, int],
                   memory: np.ndarray, args: list[int], repeat: int) -> tuple[float, np.ndarray]:  # fmt: skip
    """Best kernel time (CUDA events) of k through path ("cuda": PTX, "cuda-cpp": NVRTC), and the memory after."""
    src = render(k, "ptx" if path == "cuda" else "cuda", nargs=len(args))
    text = src.source if path == "cuda" else cuda.nvrtc_ptx(src.source, cuda.arch())
    const = np.zeros(16, np.uint8)
    best, out = float("inf"), memory
    for _ in range(repeat + 1):
        t: dict[str, float] = {}
        out = cuda.run(text, src.entry, grid, wgs, memory, const, args, timing=t)
        best = min(best, t["kernel_s"])
    return best, out


def sgemm_case(k: wg.Kernel, n: int, grid: tuple[int, int, int], wgs: tuple[int, int, int], repeat: int,
               a: np.ndarray, b: np.ndarray) -> dict[str, tuple[float, np.ndarray]]:  # fmt: skip
    layout = pack(k, [a.reshape(-1), b.reshape(-1), n * n, n])
    out = {}
    for path in ("cuda", "cuda-cpp"):
        s, mem = kernel_seconds(k, path, grid, wgs, layout.memory, layout.args, repeat)
        out[path] = (s, layout.read(mem, k.params[2].name).reshape(n, n))
    return out


def cublas_seconds(a: np.ndarray, b: np.ndarray, repeat: int) -> tuple[float | None, str]:
    os.environ.setdefault("CUPY_TF32", "0")  # FP32 proper: no TF32 tensor cores
    try:
        import cupy as cp
    except ImportError:
        return None, "CuPy is not installed (pip install cupy-cuda13x)"
    da, db = cp.asarray(a), cp.asarray(b)
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    best = float("inf")
    for _ in range(repeat + 1):
        start.record()
        da @ db
        stop.record()
        stop.synchronize()
        best = min(best, cp.cuda.get_elapsed_time(start, stop) / 1e3)
    return best, "cuBLAS (CuPy), TF32 off"


def call_times(calls: int, warm: Any = None) -> list[float]:
    """Host wall time of each of `calls` @wg.kernel SAXPY 2^20 calls with device arrays on
    device="cuda", after one warm-up call (compiling, loading, writing the canary table)."""
    from saxpy import saxpy

    m = 1 << 20
    rng = np.random.default_rng(1)
    dx, dy = to_device(rng.random(m, dtype=np.float32), "cuda"), to_device(rng.random(m, dtype=np.float32), "cuda")
    a = np.float32(2)
    saxpy(a, dx, dy, m, grid=m // 256, workgroup=256, device="cuda")
    if warm is not None:
        warm()
    out = []
    clock = time.perf_counter
    for _ in range(calls):
        t = clock()
        saxpy(a, dx, dy, m, grid=m // 256, workgroup=256, device="cuda")
        out.append(clock() - t)
    return out


def host_overhead(calls: int, gpu: str | None) -> None:
    """The call-overhead rows: the fake driver always, the real one when `gpu` names it."""
    from wavegpu.runtime.fakecuda import FakeDriver

    print(f"\n## @wg.kernel SAXPY 2^20 call with device arrays, host time per call (median of {calls}; target < 20 us)")
    fake = FakeDriver()
    with cuda.use_driver(fake):
        ts = call_times(calls, fake.calls.clear)
        per_call = len(fake.calls) / calls
    print(f"{'fake CUDA driver (runtime/fakecuda.py)':<44}{np.median(ts) * 1e6:>10.1f} us   "
          f"(min {min(ts) * 1e6:.1f} us; {per_call:.0f} driver calls per call)")  # fmt: skip
    if gpu is None:
        print(f"{'real driver':<44}{'not measured':>13}   (no GPU here)")
        return
    ts = call_times(calls)
    print(f"{'real driver (' + gpu + ')':<44}{np.median(ts) * 1e6:>10.1f} us   (min {min(ts) * 1e6:.1f} us; "
          "includes waiting for the kernel)")  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=4096, help="SGEMM size (a multiple of 64)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--calls", type=int, default=500, help="calls timed for the call-overhead rows")
    ap.add_argument("--overhead-only", action="store_true", help="only the call-overhead rows")
    opts = ap.parse_args()
    ok, why = cuda.available()
    if not ok or opts.overhead_only:
        host_overhead(opts.calls, cuda.device_name() if ok else None)
        if not ok:
            print(f"\n## SGEMM {opts.n}^3 (TFLOP/s)")
            for name, _ in SGEMMS:
                for path in ("cuda", "cuda-cpp"):
                    print(f"{name:<40}{path:<10}{'not measured':>14}")
            print(f"\nbenchmarks/gpu.py: no NVIDIA GPU here ({why}); nothing else measured.")
        return 0
    n, rep = opts.n, opts.repeat
    if n % 64:
        print("--n must be a multiple of 64", file=sys.stderr)
        return 2
    print(f"# device: {cuda.device_name()}; wavegpu {wg.__version__}; NumPy {np.__version__}")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    flops = 2.0 * n**3
    blas, blas_what = cublas_seconds(a, b, rep)
    print(f"\n## SGEMM {n}^3 (TFLOP/s; ratio to {blas_what if blas else 'cuBLAS: ' + blas_what})")
    print(f"{'kernel':<34}{'path':<10}{'ms':>10}{'TFLOP/s':>10}{'vs cuBLAS':>11}")
    if blas:
        print(f"{'cuBLAS FP32':<34}{'cupy':<10}{blas * 1e3:>10.3f}{flops / blas / 1e12:>10.2f}{1.0:>11.2f}")
    results = {}
    for (name, tile), k in zip(SGEMMS, sgemm_kernels()):
        if n % tile:
            print(f"{name:<34}{'':<10}{'not measured':>20}   (n is not a multiple of {tile})")
            continue
        res = sgemm_case(k, n, (n // tile, n // tile, 1), (16, 16, 1), rep, a, b)
        results[name] = res
        for path, (s, _) in res.items():
            ratio = f"{blas / s:>11.2f}" if blas else f"{'-':>11}"
            print(f"{name:<34}{path:<10}{s * 1e3:>10.3f}{flops / s / 1e12:>10.2f}{ratio}")
    for name, res in results.items():  # both paths give the same bits (the same WAVE program)
        same = np.array_equal(res["cuda"][1].view(np.uint32), res["cuda-cpp"][1].view(np.uint32))
        print(f"# {name}: PTX and CUDA C++ results bit-identical: {same}")
    ref = a.astype(np.float64) @ b.astype(np.float64)
    for name, res in results.items():
        err = float(np.abs(res["cuda"][1] - ref).max() / np.abs(ref).max())
        print(f"# {name}: max error relative to the largest |C| (f64 reference): {err:.2e}")

    print("\n## vector add 2^26 f32 (TB/s of 12 bytes per element)")
    vadd = wg.assemble((ROOT / "examples" / "vector_add.wave").read_text(), "vector_add.wave").kernels[0]
    m = 1 << 26
    x = rng.random(m, dtype=np.float32)
    mem = np.concatenate([x, x, np.zeros(m, np.float32)]).view(np.uint8)
    for path in ("cuda", "cuda-cpp"):
        s, _ = kernel_seconds(vadd, path, (m // 256, 1, 1), (256, 1, 1), mem, [0, 4 * m, 8 * m, m], rep)
        print(f"{'vector_add.wave':<34}{path:<10}{s * 1e3:>10.3f}{12 * m / s / 1e12:>10.2f} TB/s")

    print("\n## @wg.kernel SAXPY 2^20 on device='cuda', whole call (host wall time)")
    from saxpy import saxpy

    m = 1 << 20
    x, y = rng.random(m, dtype=np.float32), rng.random(m, dtype=np.float32)

    def timed(fn) -> float:  # type: ignore[no-untyped-def]
        fn()
        ts = []
        for _ in range(max(rep, 20)):
            t = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t)
        return float(np.median(ts))

    t_np = timed(lambda: saxpy(np.float32(2), x, y, m, grid=m // 256, workgroup=256, device="cuda"))
    dx, dy = to_device(x, "cuda"), to_device(y, "cuda")
    t_dev = timed(lambda: saxpy(np.float32(2), dx, dy, m, grid=m // 256, workgroup=256, device="cuda"))
    print(f"{'NumPy arrays (copies in and out)':<44}{t_np * 1e3:>10.3f} ms")
    print(f"{'device arrays (no copy)':<44}{t_dev * 1e6:>10.1f} us")
    host_overhead(opts.calls, cuda.device_name())
    return 0


if __name__ == "__main__":
    sys.exit(main())
