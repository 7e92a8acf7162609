"""Emulator speed and memory: prints one table row per case (wall time, lane-instructions/s, peak MB).

    python benchmarks/emulator.py [--quick] [--repeat N]
    python benchmarks/emulator.py --compiled [--quick] [--repeat N] [--big]   (both engines, issue 16)

Each case runs once to warm up, then `--repeat` times; the best time is reported, measured around
`wg.emulate` only (inputs are built beforehand; the copy of the memory image is included). Peak
memory is measured in a separate run with tracemalloc (NumPy reports its buffers there).
"""

from __future__ import annotations

import argparse
import platform
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import numpy as np

import wavegpu as wg

EX = Path(__file__).resolve().parent.parent / "examples"

HISTOGRAM = """
.kernel histogram
.param data, buffer, u32
.param bins, buffer, u32
.param n, scalar, u32
.workgroup_size 256, 1, 1
    mov.u32 r3, %ctaid.x
    mov.u32 r4, %ntid.x
    mov.u32 r5, %tid.x
    mad.lo.s32 r3, r3, r4, r5
    setp.ge.u32 p0, r3, r2
    @p0 ret
    shl.b32 r3, r3, 2
    add.u32 r3, r0, r3
    ld.global.u32 r6, [r3]
    and.b32 r6, r6, 255
    shl.b32 r6, r6, 2
    add.u32 r6, r1, r6
    mov.b32 r7, 1
    red.global.add.u32 [r6], r7
.end
"""

Case = tuple[str, Callable[[], wg.EmulationResult], Callable[[wg.EmulationResult], bool]]


def vector_add(n: int) -> Case:
    prog = wg.assemble((EX / "vector_add.wave").read_text())
    a = np.arange(n, dtype=np.float32)
    b = np.full(n, 2.0, np.float32)
    mem = np.concatenate([a, b, np.zeros(n, np.float32)])
    run = lambda: wg.emulate(prog, grid=n // 256, memory=mem, args=[0, 4 * n, 8 * n, n])  # noqa: E731
    return (
        f"vector add 2^{n.bit_length() - 1}",
        run,
        lambda r: np.array_equal(r.view(np.float32, 8 * n, n), a + b),
    )


def sgemm(n: int) -> Case:
    prog = wg.assemble((EX / "sgemm_tiled.wave").read_text())
    rng = np.random.default_rng(0)
    A = rng.standard_normal((n, n)).astype(np.float32)
    B = rng.standard_normal((n, n)).astype(np.float32)
    mem = np.concatenate([A.ravel(), B.ravel(), np.zeros(n * n, np.float32)])

    def run() -> wg.EmulationResult:
        return wg.emulate(prog, grid=(n // 16, n // 16), memory=mem, args=[0, 4 * n * n, 8 * n * n, n])

    ref = A.astype(np.float64) @ B.astype(np.float64)

    def ok(r: wg.EmulationResult) -> bool:
        return bool(np.allclose(r.view(np.float32, 8 * n * n, n * n).reshape(n, n), ref, rtol=1e-3, atol=1e-3))

    return f"SGEMM 16x16 tiles {n}^3", run, ok


def reduction(n: int) -> Case:
    prog = wg.assemble((EX / "reduce.wave").read_text())
    x = np.random.default_rng(1).integers(0, 1000, n).astype(np.uint32)
    mem = np.concatenate([x, np.zeros(n // 256, np.uint32)])
    run = lambda: wg.emulate(prog, grid=n // 256, memory=mem, args=[0, 4 * n])  # noqa: E731
    return (
        f"tree reduction 2^{n.bit_length() - 1}",
        run,
        lambda r: np.array_equal(r.view(np.uint32, 4 * n, n // 256), x.reshape(-1, 256).sum(axis=1)),
    )


def histogram(n: int) -> Case:
    prog = wg.assemble(HISTOGRAM)
    x = np.random.default_rng(2).integers(0, 1 << 20, n).astype(np.uint32)
    mem = np.concatenate([x, np.zeros(256, np.uint32)])
    run = lambda: wg.emulate(prog, grid=n // 256, memory=mem, args=[0, 4 * n, n])  # noqa: E731
    return (
        f"histogram 256 bins, 2^{n.bit_length() - 1} atomics",
        run,
        lambda r: np.array_equal(r.view(np.uint32, 4 * n, 256), np.bincount(x & 255, minlength=256)),
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="skip the largest sizes")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument(
        "--compiled", action="store_true", help="the two engines side by side (benchmarks/compiled_engine.py)"
    )
    args, rest = ap.parse_known_args()
    if args.compiled:  # issue 16's table: NumPy engine, compiled engine, NumPy, OpenCL, the Rust emulator
        import compiled_engine

        compiled_engine.main([*(["--quick"] if args.quick else []), "--repeat", str(args.repeat), *rest])
        return
    if rest:
        ap.error(f"unrecognized arguments: {' '.join(rest)}")
    makers: list[Callable[[], Case]] = [lambda: vector_add(1 << 16), lambda: vector_add(1 << 20)]
    if not args.quick:
        makers.append(lambda: vector_add(1 << 24))
    makers += [lambda: sgemm(128), lambda: sgemm(256)]
    if not args.quick:
        makers.append(lambda: sgemm(512))
    makers += [lambda: reduction(1 << 20), lambda: histogram(1 << 20)]
    print(
        f"# {platform.processor() or platform.machine()}, {platform.python_implementation()} "
        f"{platform.python_version()}, NumPy {np.__version__}, wavegpu {wg.__version__}"
    )
    print(f"{'case':<38} {'best ms':>9} {'lane-instr':>12} {'M lane-instr/s':>15} {'peak MB':>8}  check")
    for make in makers:
        name, run, ok = make()  # inputs are built per case, so earlier cases leave no large arrays behind
        res = run()  # warm-up
        best = float("inf")
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            res = run()
            best = min(best, time.perf_counter() - t0)
        tracemalloc.start()
        run()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        li = res.stats.lane_instructions
        print(
            f"{name:<38} {best * 1e3:9.1f} {li / 1e6:11.1f}M {li / best / 1e6:15.1f} {peak / 2**20:8.1f}  "
            f"{'ok' if ok(res) else 'WRONG'}",
            flush=True,
        )
        del res, run, ok


if __name__ == "__main__":
    main()
