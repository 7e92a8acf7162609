"""`wg.launch`: THE launch path. Every launch (wg.launch, kernel calls with host arrays or with
device arrays, `wave run`) comes here; the device table (runtime/devices.py) says what each
device takes and runs it."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..emulator import BufferRegion, EmulationResult
from ..emulator.launch import check_threads, dim3
from ..errors import WaveError
from ..wbin.program import Kernel, Program
from . import devices
from .devices import Resident


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
    k = prog if isinstance(prog, Kernel) else prog.kernel(kernel)
    res = run(
        k,
        device,
        grid,
        workgroup,
        memory,
        args,
        wave_width,
        constants=constants,
        buffers=buffers,
        check=check,
        boundscheck=boundscheck,
        zero_division=zero_division,
        max_instructions=max_instructions,
        progress=progress,
        engine=engine,
        donate=donate,
        restore=restore,
        arch=arch,
        mma=mma,
    )
    assert res is not None  # only a resident launch (device arrays on a GPU) returns nothing
    return res


def run(
    k: Kernel,
    device: str,
    grid: int | Sequence[int],
    workgroup: int | Sequence[int] | None,
    memory: int | bytes | np.ndarray | Resident | None,
    args: Sequence[object],
    wave_width: int | None = None,
    *,
    max_instructions: int | None = None,
    keep_code: bool = False,
    **options: object,
) -> EmulationResult | None:
    """One launch of kernel k on `device` (wg.launch's arguments; `memory` may also be device
    memory in place, a Resident: then nothing comes back). The device's row checks the options
    it is given, the launch's shape is checked before any memory image is built, and the row
    runs it (Device.launch). `keep_code`: keep the rendered code for the next call."""
    row = devices.device(device)
    if wave_width is None:
        wave_width = row.wave_width
    g = dim3(grid, "grid")
    wg = dim3(workgroup, "workgroup") if workgroup is not None else (k.workgroup_size or (wave_width, 1, 1))
    check_threads(g, wg, k)
    if max_instructions is not None and (not isinstance(max_instructions, int) or max_instructions < 1):
        raise WaveError(f"max_instructions must be a positive int, got {max_instructions!r}")
    job = devices.job(
        k, row, g, wg, wave_width, memory, args, max_instructions=max_instructions, keep_code=keep_code, **options
    )
    return row.launch(job)
