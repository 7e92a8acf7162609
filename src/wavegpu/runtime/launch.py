"""`wg.launch`: run a program on a device ("emulator", "opencl", "sycl", "cuda" (the PTX backend) or
"cuda-cpp" (the CUDA C++ backend through NVRTC), "amdgcn-sim" (the AMDGCN backend's assembly run
by runtime/amdgcn_sim)); `wg.devices()` lists them."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence

import numpy as np

from ..emulator import BufferRegion, EmulationResult, Stats, emulate
from ..emulator.launch import DEFAULT_MAX_INSTRUCTIONS, arg_bits, check_threads, dim3
from ..errors import WaveError
from ..wbin.program import Kernel, Program


def devices() -> list[str]:
    """Devices that can run kernels here: always "emulator" and "amdgcn-sim"; "opencl", "sycl" and "cuda"
    when usable."""
    out = ["emulator", "amdgcn-sim"]
    from . import cuda, opencl, sycl

    if opencl.available()[0]:
        out.append("opencl")
    if sycl.available()[0]:
        out.append("sycl")
    if cuda.available()[0]:
        out += ["cuda", "cuda-cpp"]  # cuda-cpp: the CUDA C++ backend compiled by NVRTC
    return out


def check_mma(mma: object, device: str) -> None:
    """A WaveError unless `mma` is None or an mma path (naming the choices) that `device` has."""
    if mma is None:
        return
    from ..backends import ptx

    ptx.check_mma_path(mma)
    if mma != "exact" and device != "cuda":
        raise WaveError(
            f"mma={mma!r} runs on device='cuda' only (the PTX backend's tensor cores); "
            f"device {device!r} computes mma exactly (mma='exact')"
        )


def launch(
    prog: Program | Kernel,
    device: str = "emulator",
    kernel: int | str = 0,
    grid: int | Sequence[int] = 1,
    workgroup: int | Sequence[int] | None = None,
    memory: int | bytes | np.ndarray | None = 0,
    args: Sequence[object] = (),
    wave_width: int | None = None,
    check: bool = False,
    constants: bytes | np.ndarray | None = None,
    max_instructions: int | None = None,
    progress: bool = False,
    buffers: Sequence[BufferRegion] | None = None,
    boundscheck: bool = False,
    zero_division: bool = False,
    arch: str | None = None,
    engine: str | None = None,
    mma: str | None = None,
    donate: bool = False,
    restore: Callable[[np.ndarray], None] | None = None,
) -> EmulationResult:
    """Run on a device; the result has the emulator's form (`.memory`, `.stats`).

    `max_instructions` bounds the instructions each thread may execute (the emulator traps past
    it); `progress=True` shows a progress bar for runs longer than a second; `buffers` says
    where the arrays in `memory` live (emulator.BufferRegion; Layout.regions()): an access
    outside all of them traps, and with `check` or `boundscheck` an access outside its own;
    `zero_division=True` traps an integer division by zero; `engine` picks the emulator's engine
    ("numpy", "compiled", "auto"; None: $WAVEGPU_ENGINE, else "auto"; docs/emulator.md).
    `mma` picks how mma.m16n8k8 runs on device="cuda": "exact" (bit for bit the emulator's) or
    "tensor" (the tensor cores, within their measured bound: docs/backends.md); None: the
    ptx.mma_path in effect, "exact" by default. Every other device computes mma exactly, so it
    accepts "exact" and refuses "tensor". `donate` and `restore` hand `memory` to the emulator
    (`emulate(donate=True)`: it runs in that array, which it overwrites); other devices copy it."""
    check_mma(mma, device)
    k = prog if isinstance(prog, Kernel) else prog.kernel(kernel)
    if wave_width is None:  # amdgcn-sim runs wave64 code; the others default to 32
        wave_width = 64 if device == "amdgcn-sim" else 32
    if arch is not None and device != "amdgcn-sim":
        raise WaveError(f"arch={arch!r} applies to device='amdgcn-sim' only, not {device!r}")
    g = dim3(grid, "grid")
    wg = dim3(workgroup, "workgroup") if workgroup is not None else (k.workgroup_size or (wave_width, 1, 1))
    check_threads(g, wg, k)
    if max_instructions is not None and (not isinstance(max_instructions, int) or max_instructions < 1):
        raise WaveError(f"max_instructions must be a positive int, got {max_instructions!r}")
    if device == "emulator":
        bar = None
        if progress:  # rich loads only for a bar (start-up of `wave run`: docs/performance.md)
            from rich.console import Console

            from .progress import RunProgress

            bar = RunProgress(g[0] * g[1] * g[2], Console(stderr=True), enabled=True)
        with bar if bar is not None else contextlib.nullcontext():
            return emulate(
                k,
                grid=g,
                workgroup=wg,
                memory=memory,
                args=args,
                wave_width=wave_width,
                check=check,
                constants=constants,
                max_instructions=max_instructions or DEFAULT_MAX_INSTRUCTIONS,
                progress=None if bar is None else bar.callback,
                buffers=buffers,
                boundscheck=boundscheck,
                zero_division=zero_division,
                engine=engine,
                donate=donate,
                restore=restore,
            )
    if device not in ("opencl", "sycl", "cuda", "cuda-cpp", "amdgcn-sim"):
        raise WaveError(f"unknown device {device!r}; devices here: {', '.join(devices())}")
    for flag, given in (
        ("check=True", check),
        ("boundscheck=True", boundscheck),
        ("max_instructions", max_instructions),
        ("zero_division=True", zero_division),
    ):
        if given:
            raise WaveError(f"{flag} applies to the emulator only (device='emulator'); {device!r} cannot enforce it")
    if device == "amdgcn-sim":
        from .amdgcn_sim import launch_sim

        return launch_sim(k, g, wg, memory, constants, args, wave_width, arch)  # type: ignore[return-value]
    from ..backends import render
    from ..emulator.launch import new_memory
    from . import opencl

    bits = [arg_bits(a) for a in args]
    nargs = max(len(bits), len(k.params))
    bits += [0] * (nargs - len(bits))
    target = {"cuda": "ptx", "cuda-cpp": "cuda"}.get(device, device)
    src = render(k, target, wave_width=wave_width, nargs=nargs, mma=mma if device == "cuda" else None)
    dev = new_memory(memory, "global")
    const = new_memory(constants, "const")
    if device in ("cuda", "cuda-cpp"):
        from . import cuda

        text = src.source if device == "cuda" else cuda.nvrtc_ptx(src.source, cuda.arch())
        out = cuda.run(text, src.entry, g, wg, dev.u8[: dev.size], const.u8[: const.size], bits)
    else:
        from . import faults, sycl

        # with the arrays' places known, the kernel may touch only the bytes from the first to
        # the end of the last (the emulator traps anything outside every array)
        span = (min(r.offset for r in buffers), max(r.end for r in buffers)) if buffers else None
        job = (src.entry, g, wg, dev.u8[: dev.size], const.u8[: const.size], bits)
        try:
            if device == "opencl":
                out = opencl.run(src.source, *job, span=span)
            else:
                out = sycl.run_many(src.source, [job], span=span)[0]
        except faults.DeviceFault as f:
            limits = {"global": dev.size, "const": const.size, "local": k.local_memory}
            raise faults.trap_of(f, k, g, wg, limits, buffers) from None
    threads = wg[0] * wg[1] * wg[2]
    stats = Stats(
        wave_width=wave_width,
        workgroups=g[0] * g[1] * g[2],
        threads=g[0] * g[1] * g[2] * threads,
        registers=k.registers,
        local_memory=k.local_memory,
    )
    return EmulationResult(out, stats, k.name)
