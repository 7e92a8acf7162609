"""The compiled engine against the NumPy engine, NumPy itself and our OpenCL output on the host's
OpenCL CPU runtime (issue 16), with the Rust emulator's figures quoted from the issue.

    python benchmarks/compiled_engine.py [--quick] [--repeat N] [--big]
    python benchmarks/emulator.py --compiled ...   (the same table)

Times are the best of `--repeat` runs after a warm-up (which also translates the kernel), around
`wg.emulate` (memory copy included) or the NumPy expression; OpenCL is kernel time: enqueue to
finish with the buffers already on the device, measured after all emulator figures (Intel's runtime
leaves worker threads spinning after a kernel). `--big` adds SGEMM 1024^3 (minutes on NumPy).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

import wavegpu as wg

HERE = Path(__file__).resolve().parent
EX = HERE.parent / "examples"
KERNELS = HERE / "kernels"

# wave-emu (the Rust emulator) on this 2-core machine, from issue 16's table: the Rust toolchain
# cannot be built here, so these are quoted, not measured
RUST = {
    "vector add 2^20": 0.095,
    "vector add 2^24": 1.52,
    "blocked SGEMM 256^3": 0.120,
    "blocked SGEMM 1024^3": 7.08,
    "GEMM+bias+ReLU f16 256^3": 0.135,
}


def best(fn: Callable[[], object], repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


class Case:
    def __init__(
        self,
        name: str,
        prog: wg.Program,
        grid: tuple[int, ...],
        mem: np.ndarray,
        args: list[object],
        numpy: Callable[[], object] | None = None,
        check: Callable[[np.ndarray], bool] | None = None,
        workgroup: tuple[int, ...] | None = None,
    ):
        self.name, self.prog, self.grid, self.mem, self.args = name, prog, grid, mem, args
        self.numpy, self.check, self.workgroup = numpy, check, workgroup

    def emulate(self, engine: str) -> wg.EmulationResult:
        return wg.emulate(
            self.prog, grid=self.grid, workgroup=self.workgroup, memory=self.mem, args=self.args, engine=engine
        )


def vector_add(n: int) -> Case:
    prog = wg.assemble((EX / "vector_add.wave").read_text())
    a = np.arange(n, dtype=np.float32)
    b = np.full(n, 2.0, np.float32)
    mem = np.concatenate([a, b, np.zeros(n, np.float32)])
    return Case(
        f"vector add 2^{n.bit_length() - 1}",
        prog,
        (n // 256,),
        mem,
        [0, 4 * n, 8 * n, n],
        numpy=lambda: a + b,
        check=lambda m: np.array_equal(m.view(np.float32)[2 * n : 3 * n], a + b),
    )


def _gemm_inputs(n: int, dtype: type = np.float32) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.standard_normal((n, n)).astype(dtype), rng.standard_normal((n, n)).astype(dtype)


def sgemm_tiled(n: int) -> Case:
    A, B = _gemm_inputs(n)
    mem = np.concatenate([A.ravel(), B.ravel(), np.zeros(n * n, np.float32)])
    ref = A.astype(np.float64) @ B.astype(np.float64)
    return Case(
        f"tiled SGEMM {n}^3",
        wg.assemble((EX / "sgemm_tiled.wave").read_text()),
        (n // 16, n // 16),
        mem,
        [0, 4 * n * n, 8 * n * n, n],
        numpy=lambda: A @ B,
        check=lambda m: bool(np.allclose(m.view(np.float32)[2 * n * n :].reshape(n, n), ref, rtol=1e-3, atol=1e-3)),
    )


def blocked(n: int, bias_relu: bool = False) -> Case:
    text = (KERNELS / "sgemm_blocked.wave").read_text()
    if bias_relu:
        text = text.replace(
            "//EPILOGUE",
            "    shl.b32 r25, r7, 4\n    add.u32 r25, r4, r25\n    ld.global.v4.b32 {r20, r21, r22, r23}, [r25]\n"
            + "".join(
                f"    add.f32 r{13 + i}, r{13 + i}, r{20 + i}\n    max.f32 r{13 + i}, r{13 + i}, 0.0\n"
                for i in range(4)
            ),
        )
    A, B = _gemm_inputs(n)
    bias = np.linspace(-1, 1, n).astype(np.float32)
    mem = np.concatenate([A.ravel(), B.ravel(), np.zeros(n * n, np.float32), bias])
    ref = A.astype(np.float64) @ B.astype(np.float64)
    if bias_relu:
        ref = np.maximum(ref + bias, 0)
    name = f"GEMM+bias+ReLU f32 {n}^3" if bias_relu else f"blocked SGEMM {n}^3"
    return Case(
        name,
        wg.assemble(text),
        (n // 64, n // 16),
        mem,
        [0, 4 * n * n, 8 * n * n, n, 12 * n * n],
        numpy=(lambda: np.maximum(A @ B + bias, 0)) if bias_relu else (lambda: A @ B),
        check=lambda m: bool(
            np.allclose(m.view(np.float32)[2 * n * n : 3 * n * n].reshape(n, n), ref, rtol=1e-3, atol=1e-3)
        ),
    )


def gemm_f16(n: int) -> Case:
    A, B = _gemm_inputs(n, np.float16)
    bias = np.linspace(-1, 1, n).astype(np.float32)
    mem = np.concatenate(
        [A.ravel().view(np.uint8), B.ravel().view(np.uint8), np.zeros(2 * n * n, np.uint8), bias.view(np.uint8)]
    )
    ref = np.maximum(A.astype(np.float64) @ B.astype(np.float64) + bias, 0)
    return Case(
        f"GEMM+bias+ReLU f16 {n}^3",
        wg.assemble((KERNELS / "gemm_bias_relu_f16.wave").read_text()),
        (n // 64, n // 16),
        mem,
        [0, 2 * n * n, 4 * n * n, n, 6 * n * n],
        numpy=lambda: np.maximum(A.astype(np.float32) @ B.astype(np.float32) + bias, 0).astype(np.float16),
        check=lambda m: bool(
            np.allclose(m[4 * n * n : 6 * n * n].view(np.float16).reshape(n, n), ref, rtol=2e-2, atol=2e-2)
        ),
    )


def histogram(n: int) -> Case:
    x = np.random.default_rng(2).integers(0, 1 << 32, n, dtype=np.uint32)
    mem = np.concatenate([x, np.zeros(256, np.uint32)])
    ref = np.bincount(x & 255, minlength=256).astype(np.uint32)
    return Case(
        f"histogram 2^{n.bit_length() - 1}",
        wg.assemble((KERNELS / "histogram.wave").read_text()),
        (n // 4096,),
        mem,
        [0, 4 * n],
        numpy=lambda: np.bincount(x & 255, minlength=256),
        check=lambda m: np.array_equal(m.view(np.uint32)[n:], ref),
    )


def reduction(n: int) -> Case:
    x = np.random.default_rng(0).integers(0, 1000, n).astype(np.uint32)
    mem = np.concatenate([x, np.zeros(n // 256, np.uint32)])
    return Case(
        f"reduction 2^{n.bit_length() - 1}",
        wg.assemble((EX / "reduce.wave").read_text()),
        (n // 256,),
        mem,
        [0, 4 * n],
        numpy=lambda: x.reshape(-1, 256).sum(axis=1, dtype=np.uint32),
        check=lambda m: np.array_equal(m.view(np.uint32)[n:], x.reshape(-1, 256).sum(axis=1, dtype=np.uint32)),
    )


def scan(n: int) -> Case:
    x = np.random.default_rng(1).integers(0, 100, n).astype(np.uint32)
    mem = np.concatenate([x, np.zeros(n + n // 32, np.uint32)])
    return Case(
        f"wave scan 2^{n.bit_length() - 1}",
        wg.assemble((EX / "wave_scan.wave").read_text()),
        (n // 128,),
        mem,
        [0, 4 * n, 8 * n],
        numpy=lambda: np.cumsum(x.reshape(-1, 32), axis=1),
        check=lambda m: np.array_equal(m.view(np.uint32)[n : 2 * n], np.cumsum(x.reshape(-1, 32), axis=1).reshape(-1)),
        workgroup=(128, 1, 1),
    )


def saxpy(n: int) -> Case:
    @wg.kernel
    def saxpy(a: wg.f32, x: wg.f32[:], y: wg.f32[:], n: wg.i32):  # type: ignore[no-untyped-def]
        i = wg.global_id()
        if i < n:
            y[i] = a * x[i] + y[i]

    x = np.linspace(-1, 1, n).astype(np.float32)
    y = np.ones(n, np.float32)
    mem = np.concatenate([x, y])
    a = np.float32(2.5)
    return Case(
        f"compiled SAXPY 2^{n.bit_length() - 1}",
        saxpy.program,
        (n // 256,),
        mem,
        [a, 0, 4 * n, n],
        numpy=lambda: a * x + y,
        check=lambda m: np.allclose(m.view(np.float32)[n:], a * x + y),
        workgroup=(256, 1, 1),
    )


def opencl_time(case: Case, repeat: int) -> float | None:
    """Kernel time of our OpenCL output on the host's OpenCL runtime (None when there is none)."""
    try:
        from wavegpu.runtime import opencl

        ok, _why = opencl.available()
        if not ok:
            return None
        cl, context, queue = opencl.ctx()
        k = case.prog.kernels[0]
        prg = opencl.build(wg.translate(case.prog, "opencl", k.name))
        kern = cl.Kernel(prg, k.name)
        mf = cl.mem_flags
        mem = np.ascontiguousarray(case.mem).view(np.uint8).copy()
        dbuf = cl.Buffer(context, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=mem)
        cbuf = cl.Buffer(context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.zeros(16, np.uint8))
        wgs = case.workgroup or k.workgroup_size or (256, 1, 1)
        grid = tuple(case.grid) + (1,) * (3 - len(case.grid))
        gsize = tuple(g * w for g, w in zip(grid, wgs))
        from wavegpu.emulator.launch import arg_bits

        args = [np.uint32(arg_bits(a)) for a in case.args]

        def run() -> None:
            kern(queue, gsize, tuple(wgs), dbuf, cbuf, *args)
            queue.finish()

        return best(run, repeat)
    except Exception as e:  # a benchmark column, not a failure
        print(f"  (OpenCL: {type(e).__name__}: {e})")
        return None


def latency() -> None:
    """First-call and cached-call cost of a small kernel, in fresh processes with an empty cache."""
    import subprocess
    import sys

    path = str(EX / "vector_add.wave")
    code = (
        "import time, numpy as np, wavegpu as wg\n"
        f"p = wg.assemble(open({path!r}).read())\n"
        "t = time.perf_counter()\n"
        "wg.emulate(p, grid=1, memory=np.zeros(3072, np.uint8), args=[0, 1024, 2048, 256], engine='compiled')\n"
        "print(time.perf_counter() - t)\n"
    )
    tmp = tempfile.mkdtemp()
    try:
        env = dict(os.environ, WAVEGPU_CACHE_DIR=tmp)
        runs = [
            float(
                subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
            )
            for _ in range(3)
        ]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(
        f"\nvector add, 256 threads, engine='compiled', empty cache: first call {runs[0]:.2f} s "
        f"(row functions and driver compiled), then in fresh processes {runs[1]:.2f} s and {runs[2]:.2f} s "
        "(numba import and cache load)"
    )


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes only")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--big", action="store_true", help="add the 1024^3 GEMMs (slow on the NumPy engine)")
    ap.add_argument("--no-latency", action="store_true")
    opts = ap.parse_args(argv)
    sizes = [16, 20] if opts.quick else [16, 20, 24]
    gemm = [128, 256] if opts.quick else [128, 256, 512] + ([1024] if opts.big else [])
    cases = [vector_add(1 << s) for s in sizes]
    cases += [sgemm_tiled(n) for n in gemm] + [blocked(n) for n in gemm]
    cases += [blocked(256, bias_relu=True), gemm_f16(256), reduction(1 << 20), scan(1 << 20), saxpy(1 << 20)]
    cases.append(histogram(1 << 22))
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores; best of {opts.repeat}")
    head = f"{'kernel':28} {'numpy eng':>10} {'compiled':>10} {'speedup':>8} {'NumPy':>9} {'OpenCL':>9} {'cl/comp':>8} {'Rust':>8} {'Rust/comp':>9}"
    print(head)
    print("-" * len(head))
    rows = []
    for c in cases:
        ref = c.emulate("numpy")
        got = c.emulate("compiled")
        same = np.array_equal(ref.memory, got.memory)
        ok = c.check(got.memory) if c.check else True
        t_np = best(lambda c=c: c.emulate("numpy"), opts.repeat)
        t_c = best(lambda c=c: c.emulate("compiled"), opts.repeat)
        rows.append((c, same, ok, t_np, t_c))
    # NumPy and OpenCL after every emulator figure: a matrix product leaves OpenBLAS's threads
    # spinning for a while, and Intel's runtime its workers, which would take a core from
    # whatever runs next in this process (a compiled GEMM timed after NumPy's took 1.8x as long)
    for c, same, ok, t_np, t_c in rows:
        t_numpy = best(c.numpy, opts.repeat) if c.numpy else None
        t_cl = opencl_time(c, opts.repeat)
        rust = RUST.get(c.name)
        cols = [
            f"{c.name:28}",
            f"{t_np * 1e3:9.1f}ms",
            f"{t_c * 1e3:9.1f}ms",
            f"{t_np / t_c:7.1f}x",
            f"{t_numpy * 1e3:8.2f}ms" if t_numpy is not None else f"{'-':>9}",
            f"{t_cl * 1e3:8.2f}ms" if t_cl is not None else f"{'-':>9}",
            f"{t_c / t_cl:7.1f}x" if t_cl else f"{'-':>8}",
            f"{rust * 1e3:7.0f}ms" if rust else f"{'-':>8}",
            f"{rust / t_c:8.1f}x" if rust else f"{'-':>9}",
        ]
        flag = "" if same and ok else "  MISMATCH" if not same else "  WRONG"
        print(" ".join(cols) + flag)
    if not opts.no_latency:
        latency()


if __name__ == "__main__":
    main()
