"""`wg.launch`: run a program on a device ("emulator", "opencl", "sycl" or "cuda"); `wg.devices()` lists them."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..emulator import EmulationResult, Stats, emulate
from ..emulator.launch import arg_bits, dim3
from ..errors import WaveError
from ..wbin.program import Kernel, Program


def devices() -> list[str]:
    """Devices that can run kernels here: always "emulator"; "opencl", "sycl" and "cuda" when usable."""
    out = ["emulator"]
    from . import cuda, opencl, sycl

    if opencl.available()[0]:
        out.append("opencl")
    if sycl.available()[0]:
        out.append("sycl")
    if cuda.available()[0]:
        out.append("cuda")
    return out


def launch(
    prog: Program | Kernel,
    device: str = "emulator",
    kernel: int | str = 0,
    grid: int | Sequence[int] = 1,
    workgroup: int | Sequence[int] | None = None,
    memory: int | bytes | np.ndarray | None = 0,
    args: Sequence[object] = (),
    wave_width: int = 32,
    check: bool = False,
    constants: bytes | np.ndarray | None = None,
) -> EmulationResult:
    """Run on a device; the result has the emulator's form (`.memory`, `.stats`)."""
    if device == "emulator":
        return emulate(
            prog,
            kernel=kernel,
            grid=grid,
            workgroup=workgroup,
            memory=memory,
            args=args,
            wave_width=wave_width,
            check=check,
            constants=constants,
        )
    if device not in ("opencl", "sycl", "cuda"):
        raise WaveError(f"unknown device {device!r}; devices here: {', '.join(devices())}")
    if check:
        raise WaveError("check=True (the undefined-behaviour checker) runs on the emulator only; use device='emulator'")
    from ..backends import render
    from ..emulator.launch import new_memory
    from . import opencl

    k = prog if isinstance(prog, Kernel) else prog.kernel(kernel)
    g = dim3(grid, "grid")
    wg = dim3(workgroup, "workgroup") if workgroup is not None else (k.workgroup_size or (wave_width, 1, 1))
    bits = [arg_bits(a) for a in args]
    nargs = max(len(bits), len(k.params))
    bits += [0] * (nargs - len(bits))
    src = render(k, "ptx" if device == "cuda" else device, wave_width=wave_width, nargs=nargs)
    dev = new_memory(memory, "global")
    const = new_memory(constants, "const")
    if device == "cuda":
        from . import cuda

        out = cuda.run(src.source, src.entry, g, wg, dev.u8[: dev.size], const.u8[: const.size], bits)
    elif device == "opencl":
        out = opencl.run(src.source, src.entry, g, wg, dev.u8[: dev.size], const.u8[: const.size], bits)
    else:
        from . import sycl

        out = sycl.run_many(src.source, [(src.entry, g, wg, dev.u8[: dev.size], const.u8[: const.size], bits)])[0]
    threads = wg[0] * wg[1] * wg[2]
    stats = Stats(
        wave_width=wave_width,
        workgroups=g[0] * g[1] * g[2],
        threads=g[0] * g[1] * g[2] * threads,
        registers=k.registers,
        local_memory=k.local_memory,
    )
    return EmulationResult(out, stats, k.name)
