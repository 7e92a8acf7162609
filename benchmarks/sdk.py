"""What the calling convention costs: a `@wg.kernel` call (binding, dtype and alias checks,
layout with guard gaps, bounds regions, copy back of changed written arrays) against
`wg.emulate` of the same program on a memory image built beforehand, in the same run.

    python benchmarks/sdk.py [--repeat N]
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np

import wavegpu as wg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples" / "kernels"))
from saxpy import saxpy  # the example kernel


def best(fn, repeat: int) -> float:  # type: ignore[no-untyped-def]
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times) * 1e3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    print(f"# {platform.machine()}, CPython {platform.python_version()}, NumPy {np.__version__}")
    print(f"{'case':<28}{'emulate ms':>12}{'call ms':>10}{'overhead ms':>13}{'ratio':>8}")
    prog = saxpy.program
    for log in (10, 16, 20, 22):
        n = 1 << log
        x = np.arange(n, dtype=np.float32)
        y = np.ones(n, np.float32)
        grid = -(-n // 256)
        image = np.concatenate([x, y]).view(np.uint8)

        def raw_run(image: np.ndarray = image, grid: int = grid, n: int = n) -> None:
            wg.emulate(prog, grid=grid, workgroup=256, memory=image, args=[2.0, 0, 4 * n, n])

        def call_run(x: np.ndarray = x, y: np.ndarray = y, grid: int = grid, n: int = n) -> None:
            saxpy(2.0, x, y, n, grid=grid, workgroup=256)

        raw = best(raw_run, args.repeat)
        call = best(call_run, args.repeat)
        print(f"{f'saxpy 2^{log}':<28}{raw:>12.2f}{call:>10.2f}{call - raw:>13.2f}{call / raw:>8.2f}")


if __name__ == "__main__":
    main()
