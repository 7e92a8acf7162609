"""`make demo`: assemble SAXPY, run it on a million elements in the emulator, check it against
NumPy and print the statistics."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.syntax import Syntax
from rich.table import Table

import wavegpu as wg

HERE = Path(__file__).parent

SAXPY = """
// y[i] = a * x[i] + y[i]
.kernel saxpy
.param a, scalar, f32
.param x, buffer, f32
.param y, buffer, f32
.param n, scalar, u32
.workgroup_size 256, 1, 1
    mov.u32 r4, %tid.x
    mov.u32 r5, %ctaid.x
    mov.u32 r6, %ntid.x
    mad.lo.s32 r4, r5, r6, r4        // i
    setp.ge.u32 p0, r4, r3
    @p0 ret
    shl.b32 r5, r4, 2
    add.u32 r6, r1, r5
    ld.global.f32 r7, [r6]           // x[i]
    add.u32 r6, r2, r5
    ld.global.f32 r8, [r6]           // y[i]
    fma.f32 r8, r0, r7, r8           // fused, one rounding
    st.global.f32 [r6], r8
.end
"""


def main() -> None:
    con = Console()
    prog = wg.assemble(SAXPY, "saxpy.wave")
    data = prog.to_bytes()
    con.rule(f"[bold]saxpy[/]: {len(data)} bytes of .wbin")
    text = wg.disassemble(wg.Program.from_bytes(data))
    con.print(Syntax(text, "asm", theme="ansi_dark", line_numbers=True))
    assert wg.assemble(text).to_bytes() == data, "disassembly must reassemble to identical bytes"

    n = 1 << 20
    rng = np.random.default_rng(0)
    a = np.float32(2.5)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    # parameters: a (scalar bits in r0), x and y (byte addresses in r1, r2), n (r3)
    mem = np.concatenate([x, y])
    t0 = time.perf_counter()
    res = wg.emulate(prog, grid=(n + 255) // 256, memory=mem, args=[a, 0, 4 * n, n])
    dt = time.perf_counter() - t0
    got = res.view(np.float32, 4 * n, n)
    want = (np.float64(a) * x.astype(np.float64) + y.astype(np.float64)).astype(
        np.float32
    )  # fused: exact
    ok = np.array_equal(got, want)
    con.print(f"ran saxpy on {n:,} elements in {dt * 1e3:.1f} ms; first values {got[:4]}")
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
