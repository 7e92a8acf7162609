"""`make demo`: compile a Python kernel (SAXPY), run it on a million elements in the emulator,
check it against NumPy and print the statistics."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.syntax import Syntax
from rich.table import Table

import wavegpu as wg

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE / "kernels"))

from saxpy import saxpy  # noqa: E402 - the kernel module lives in examples/kernels


def main() -> None:
    con = Console()
    t0 = time.perf_counter()
    prog = saxpy.program  # compiled once: Python -> HIR -> SSA MIR -> passes -> LIR -> registers -> .wbin
    dt_compile = time.perf_counter() - t0
    data = prog.to_bytes()
    k = prog.kernels[0]
    con.rule(
        f"[bold]saxpy[/] compiled in {dt_compile * 1e3:.1f} ms: {len(k.instructions)} instructions, "
        f"{k.registers} registers, {len(data)} bytes of .wbin"
    )
    con.print(Syntax(wg.disassemble(prog), "asm", theme="ansi_dark", line_numbers=True))

    n = 1 << 20
    rng = np.random.default_rng(0)
    a = np.float32(2.5)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    want = (np.float64(a) * x.astype(np.float64) + y.astype(np.float64)).astype(np.float32)  # fma: one rounding
    t0 = time.perf_counter()
    res = saxpy(a, x, y, n, grid=(n + 255) // 256, workgroup=256)  # y is updated in place
    dt = time.perf_counter() - t0
    ok = np.array_equal(y, want)
    con.print(f"ran saxpy on {n:,} elements in {dt * 1e3:.1f} ms; y[:4] = {y[:4]}")
    con.print(f"check against NumPy: {'[green]bit-identical[/]' if ok else '[red]MISMATCH[/]'}")
    s = res.stats
    t = Table(title="statistics")
    t.add_column("class")
    t.add_column("wave instructions", justify="right")
    t.add_column("lane instructions", justify="right")
    for cls, c in sorted(s.by_class.items()):
        t.add_row(cls, f"{c.waves:,}", f"{c.lanes:,}")
    con.print(t)
    con.print(
        f"SIMD efficiency {s.simd_efficiency:.1%}; device memory {s.device_bytes_read:,} B read, "
        f"{s.device_bytes_written:,} B written; {s.lane_instructions / dt / 1e6:,.0f} M lane-instructions/s; "
        f"occupancy {s.occupancy_waves} waves/core"
    )
    if not ok:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
