"""Backends against the emulator: vector add 2^24 and 16x16-tiled SGEMM 512^3 on the OpenCL
runtime (Intel's CPU runtime here), on the SYCL device, on an NVIDIA GPU through the PTX backend
(device="cuda", when one is here) and on the emulator, best of 3 after a
warm-up. The OpenCL time includes the transfers, not the one-time build (cached); the SYCL time
includes the transfers through files, not the one-time run-time compile (a live host process keeps it);
the CUDA time includes allocation and transfers, not the one-time module load (cached).

    python benchmarks/backends.py
"""

from __future__ import annotations

import platform
import time
from pathlib import Path

import numpy as np

import wavegpu as wg
from wavegpu.runtime import cuda, opencl, sycl

EX = Path(__file__).resolve().parent.parent / "examples"


def best(fn, repeat: int = 3) -> float:  # type: ignore[no-untyped-def]
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ok, why = opencl.available()
    print(
        f"# {platform.machine()}, CPython {platform.python_version()}, wavegpu {wg.__version__}; "
        f"OpenCL: {opencl.device_name() if ok else why}"
    )
    n = 1 << 24
    vadd = wg.assemble((EX / "vector_add.wave").read_text())
    a = np.arange(n, dtype=np.float32)
    mem = np.concatenate([a, a, np.zeros(n, np.float32)])
    m = 512
    sg = wg.assemble((EX / "sgemm_tiled.wave").read_text())
    A = np.random.default_rng(0).random(m * m).astype(np.float32)
    mem2 = np.concatenate([A, A, np.zeros(m * m, np.float32)])
    cases = [
        ("vector add 2^24", vadd, dict(grid=n // 256, memory=mem, args=[0, 4 * n, 8 * n, n])),
        ("SGEMM 16x16 tiles 512^3", sg, dict(grid=(m // 16, m // 16), memory=mem2, args=[0, 4 * m * m, 8 * m * m, m])),
    ]
    usable = (("opencl", ok), ("sycl", sycl.available()[0]), ("cuda", cuda.available()[0]))
    devs = [d for d, here in usable if here]
    if "cuda" in devs:
        print(f"# CUDA: {cuda.device_name()}")
    print(f"{'case':<26} {'emulator ms':>12}" + "".join(f" {d + ' ms':>10}" for d in devs) + "  same result")
    for name, prog, kw in cases:
        ref = wg.launch(prog, device="emulator", **kw).memory
        te = best(lambda prog=prog, kw=kw: wg.launch(prog, device="emulator", **kw))  # type: ignore[misc]
        row, same = f"{name:<26} {te * 1e3:12.1f}", True
        for d in devs:
            td = best(lambda prog=prog, kw=kw, d=d: wg.launch(prog, device=d, **kw))  # type: ignore[misc]
            same &= np.array_equal(ref, wg.launch(prog, device=d, **kw).memory)
            row += f" {td * 1e3:10.1f}"
        print(row + f"  {'yes' if same else 'NO'}", flush=True)


if __name__ == "__main__":
    main()
