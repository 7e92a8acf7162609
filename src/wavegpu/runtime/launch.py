"""`wg.launch`: THE launch path. Every launch (wg.launch, kernel calls with host arrays or with
device arrays, `wave run`) comes here; the device table (runtime/devices.py) says what each
device takes and runs it."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..emulator import BufferRegion, EmulationResult
from ..emulator.launch import arg_bits, check_threads, dim3
from ..errors import WaveError
from ..wbin.program import Kernel, Program
from . import devices
from .devices import Dim3, Job, Resident


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
    client: Any = None,
    shards: int | None = None,
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
    accepts "exact" and refuses "tensor". `client` (a dask.distributed.Client; device="emulator")
    runs the launch's workgroups in `shards` tasks on its cluster (runtime/cluster.py,
    docs/cluster.md). `donate` and `restore` hand `memory` to the emulator
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
        client=client,
        shards=shards,
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
    buffers: Sequence[BufferRegion] | None = None,
    **options: object,
) -> EmulationResult | None:
    """One launch of kernel k on `device` with wg.launch's arguments: the device's row, the
    launch's shape checked (before any memory image is built), then `start`."""
    row = devices.device(device)
    if wave_width is None:
        wave_width = row.wave_width
    g = dim3(grid, "grid")
    wg = dim3(workgroup, "workgroup") if workgroup is not None else (k.workgroup_size or (wave_width, 1, 1))
    check_threads(g, wg, k)
    return start(k, row, g, wg, wave_width, memory, args, options, buffers)


def start(
    k: Kernel,
    row: devices.Device,
    grid: Dim3,
    workgroup: Dim3,
    wave_width: int,
    memory: int | bytes | np.ndarray | Resident | None,
    args: Sequence[object],
    options: Mapping[str, Any],
    buffers: Sequence[BufferRegion] | None = None,
    keep_code: bool = False,
    bits: list[int] | None = None,
) -> EmulationResult | None:
    """THE launch path, for a launch whose shape is checked (`run`, kernel calls): the device's
    row checks the options it is given (Device.refuse), the arguments become their 32 bits (one
    per parameter at least) for a device that renders the kernel, and the row runs the job
    (Device.launch). `options`: Job's fields by name (check, max_instructions, mma, ...);
    `buffers`: where the arrays live; `keep_code`: keep the rendered code for the next call with
    this kernel; `bits`: the arguments already as 32-bit ints, one per parameter (a call on
    device arrays). `memory` may also be device memory in place, a Resident: then nothing comes
    back. Job's fields are given by position: a kernel call makes one per call, and its host
    overhead is measured (docs/performance.md)."""
    row.refuse(options)
    get = options.get
    budget = get("max_instructions")
    if budget is not None and (not isinstance(budget, int) or budget < 1):
        raise WaveError(f"max_instructions must be a positive int, got {budget!r}")
    if row.target is None:  # the emulator: it reads the arguments and takes every option itself
        job = Job(
            k,
            grid,
            workgroup,
            wave_width,
            memory,
            args,
            get("constants"),
            buffers,
            get("check", False),
            get("boundscheck", False),
            get("zero_division", False),
            budget,
            get("progress", False),
            get("engine"),
            get("donate", False),
            get("restore"),
            get("arch"),
            get("mma"),
            keep_code,
            [],
        )
        job.client, job.shards = get("client"), get("shards")
        return row.launch(job)
    if bits is None:
        bits = [a if type(a) is int and 0 <= a <= 0xFFFFFFFF else arg_bits(a) for a in args]
        bits += [0] * (max(len(bits), len(k.params)) - len(bits))
    # a rendered kernel: the options it cannot enforce were refused, the emulator's hints do not apply
    job = Job(
        k,
        grid,
        workgroup,
        wave_width,
        memory,
        args,
        get("constants"),
        buffers,
        False,
        False,
        False,
        None,
        False,
        None,
        False,
        None,
        get("arch"),
        get("mma"),
        keep_code,
        bits,
    )
    return row.launch(job)
