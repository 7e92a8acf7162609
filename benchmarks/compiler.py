"""Compiler quality and speed: instructions executed per thread of compiled kernels against
hand-written assembly of the same kernels, and compile time per kernel.

    python benchmarks/compiler.py
"""

from __future__ import annotations

import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np

import wavegpu as wg
from wavegpu.runtime.buffers import pack

ROOT = Path(__file__).resolve().parent.parent
EX = ROOT / "examples"


def per_thread(prog: wg.Program, args: list[object], grid: object) -> tuple[float, int]:
    k = prog.kernels[0]
    layout = pack(k, args)
    res = wg.emulate(prog, grid=grid, memory=layout.memory, args=layout.args)
    return res.stats.lane_instructions / res.stats.threads, k.registers


def main() -> None:
    os.environ["WAVEGPU_CACHE_DIR"] = tempfile.mkdtemp()  # measure real compiles, not cache hits
    n = 1 << 14
    rng = np.random.default_rng(0)
    f = rng.random(n).astype(np.float32)
    u = rng.integers(0, 100, n).astype(np.uint32)
    m = 64
    A = rng.random(m * m).astype(np.float32)
    cases = [
        (
            "vector add",
            "vector_add.wave",
            "kernels/vector_add.py",
            [f, f, np.zeros(n, np.float32), n],
            n // 256,
        ),
        (
            "tree reduction",
            "reduce.wave",
            "kernels/reduce.py",
            [u, np.zeros(n // 256, np.uint32)],
            n // 256,
        ),
        (
            "tiled matmul 64^3",
            "sgemm_tiled.wave",
            "kernels/matmul.py",
            [A, A, np.zeros(m * m, np.float32), m],
            (m // 16, m // 16),
        ),
    ]
    print(f"# {platform.machine()}, CPython {platform.python_version()}, wavegpu {wg.__version__}")
    print(
        f"{'kernel':<20} {'hand asm':>9} {'-O0':>8} {'-O1':>8} {'-O2':>8} {'-O3':>8}   {'regs asm/O2':>11}  "
        f"{'compile ms (O0/O2/O3)':>22}"
    )
    for name, asm, py, args, grid in cases:
        hand = wg.assemble((EX / asm).read_text())
        hand_ipt, hand_regs = per_thread(hand, args, grid)
        row = []
        times = []
        regs2 = 0
        for opt in (0, 1, 2, 3):
            t0 = time.perf_counter()
            prog = wg.compile(str(EX / py), opt=opt)
            dt = time.perf_counter() - t0
            ipt, regs = per_thread(prog, args, grid)
            row.append(ipt)
            if opt in (0, 2, 3):
                times.append(dt * 1e3)
            if opt == 2:
                regs2 = regs
        print(
            f"{name:<20} {hand_ipt:9.1f} "
            + " ".join(f"{x:8.1f}" for x in row)
            + f"   {hand_regs:>5}/{regs2:<5}  "
            + "/".join(f"{t:.0f}" for t in times)
        )


if __name__ == "__main__":
    main()
