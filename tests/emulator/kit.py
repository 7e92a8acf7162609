"""Helpers for emulator tests: run one instruction lane by lane, run small kernels."""

from __future__ import annotations

import struct

import numpy as np

import wavegpu as wg


def f2b(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def b2f(b: int) -> float:
    return struct.unpack("<f", struct.pack("<I", int(b) & 0xFFFFFFFF))[0]


def d2b(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def b2d(b: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", int(b)))[0]


def lanewise(line: str, *inputs: list[int], wide: bool = False, wave_width: int = 32) -> list[int]:
    """Run `line` (sources r4, r5, r6; destination r7, or pairs r8:r9.. when wide) once per lane.

    inputs[k][i] is source k of lane i (32-bit values, or 64-bit values when wide). Returns the
    destination of every lane (64-bit when wide). A predicate destination p0 is returned as 0/1.
    """
    n = len(inputs[0])
    word = 8 if wide else 4
    arrays = [np.array(x, dtype=np.uint64 if wide else np.uint32) for x in inputs]
    mem = np.concatenate([a.view(np.uint8) for a in arrays] + [np.zeros(n * word, np.uint8)])
    ld = "ld.global.b64" if wide else "ld.global.b32"
    srcs = ["r8:r9", "r10:r11", "r12:r13"] if wide else ["r4", "r5", "r6"]
    lines = [
        ".kernel t",
        ".registers 20",
        ".predicates 2",
        "mov.u32 r1, %ctaid.x",
        "mov.u32 r2, %ntid.x",
        "mov.u32 r3, %tid.x",
        "mad.lo.s32 r1, r1, r2, r3",
        f"mul.lo.u32 r1, r1, {word}",
    ]
    for k in range(len(inputs)):
        lines.append(f"add.u32 r2, r1, {k * n * word}")
        lines.append(f"{ld} {srcs[k]}, [r2]")
    lines.append(line)
    lines.append("mov.b32 r3, 1")
    lines.append("selp.b32 r3, r3, 0, p0")
    out = "r14:r15" if wide else "r7"
    lines.append(f"add.u32 r2, r1, {len(inputs) * n * word}")
    if "p0," in line.split(None, 1)[1][:4]:
        lines.append("st.global.b32 [r2], r3")
    else:
        lines.append(f"{'st.global.b64' if wide else 'st.global.b32'} [r2], {out}")
    lines.append(".end")
    prog = wg.assemble("\n".join(lines))
    wg_size = min(n, wave_width) if n % min(n, wave_width) == 0 else 1
    res = wg.emulate(prog, grid=n // wg_size, workgroup=wg_size, memory=mem, wave_width=wave_width)
    off = len(inputs) * n * word
    if "p0," in line.split(None, 1)[1][:4]:
        return [int(v) for v in res.memory[off : off + 4 * n].view(np.uint32)]
    return [int(v) for v in res.memory[off : off + n * word].view(np.uint64 if wide else np.uint32)]


def run(
    src: str,
    *,
    grid: object = 1,
    workgroup: object = None,
    memory: object = 0,
    args: object = (),
    wave_width: int = 32,
    check: bool = False,
    **kw: object,
) -> wg.EmulationResult:
    return wg.emulate(
        wg.assemble(src, "test.wave"),
        grid=grid,
        workgroup=workgroup,
        memory=memory,  # type: ignore[arg-type]
        args=args,
        wave_width=wave_width,
        check=check,
        **kw,
    )  # type: ignore[arg-type]
