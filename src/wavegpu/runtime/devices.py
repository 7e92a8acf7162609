"""THE device table: one row per device that runs kernels (its backend target, default wave width,
heap, the options it takes, its availability and its run function behind one protocol).

`wg.launch`, kernel calls with host arrays (runtime/call.py), kernel calls with device arrays
(runtime/array_calls.py) and the CLI read this table; no other module compares a device's name
(tests/test_no_device_strings.py). A device is one `Device` row in ROWS: its `run` function gets
a checked `Job` and the `Code` rendered for it by its target, and returns the device memory after
the run; `Device.launch` is the one tail every launch goes through (rendering, a device's fault
turned into the emulator's Trap, the result in the emulator's form). Adding a device is one row
here, one run function, and (for a new target) a backend in backends/ (docs/sdk.md, devices).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

import numpy as np

from ..emulator import BufferRegion, EmulationResult, Stats, emulate
from ..emulator.launch import DEFAULT_MAX_INSTRUCTIONS, new_memory
from ..emulator.machine import Memory
from ..errors import WaveError
from ..wbin.program import Kernel
from . import cuda, faults

Dim3 = tuple[int, int, int]

# The options a device may take. The enforced ones are refused by a device that does not take
# them (it could not keep their promise); the hints only change how a run goes, and a device
# that does not take one runs without it. `mma` picks a path among the row's `mma_paths`
# ("exact" everywhere): a device that takes it renders with the path asked for.
ENFORCED = ("check", "boundscheck", "max_instructions", "zero_division", "arch", "client")
HINTS = ("engine", "progress", "donate", "mma", "shards")
FLAGS = {
    "check": "check=True",
    "boundscheck": "boundscheck=True",
    "max_instructions": "max_instructions",
    "zero_division": "zero_division=True",
    "client": "client= (a Dask cluster)",
}
"""How a refusal names an enforced flag (as the caller wrote it)."""


class Resident(NamedTuple):
    """Device memory already in place on a GPU (a device-array heap at `base`): the kernel runs on
    it without a copy. `check`: a second kernel run right after it on the same memory, then a
    small copy back (cuda.run_resident: the device arrays' canary check)."""

    base: int
    check: tuple[str, str, int, list[int], np.ndarray, int] | None = None


@dataclass(slots=True)
class Job:
    """One launch, checked against its device (launch.start): what every run function gets."""

    kernel: Kernel
    grid: Dim3
    workgroup: Dim3
    wave_width: int
    memory: int | bytes | np.ndarray | Resident | None = 0
    args: Sequence[object] = ()
    constants: bytes | np.ndarray | None = None
    buffers: Sequence[BufferRegion] | None = None
    check: bool = False
    boundscheck: bool = False
    zero_division: bool = False
    max_instructions: int | None = None
    progress: bool = False
    engine: str | None = None
    donate: bool = False
    restore: Callable[[np.ndarray], None] | None = None
    arch: str | None = None
    mma: str | None = None
    keep_code: bool = False  # keep the rendered code for the next call with this kernel (device arrays)
    bits: list[int] = field(default_factory=list)  # a rendered kernel's arguments: 32 bits, one per parameter at least
    image: Memory | None = None  # a rendered kernel's private copies of memory and constants (Device.launch)
    const_image: Memory | None = None
    client: Any = None  # a dask.distributed.Client: the emulator runs the launch on its cluster (runtime/cluster.py)
    shards: int | None = None  # ... in this many tasks (None: cluster.SHARDS_PER_WORKER per worker)

    def global_bytes(self) -> np.ndarray:
        assert self.image is not None
        return self.image.u8[: self.image.size]

    def const_bytes(self) -> np.ndarray:
        assert self.const_image is not None
        return self.const_image.u8[: self.const_image.size]


@dataclass(frozen=True)
class Code:
    """What a device loads: the text its target rendered (after the device's own step, such as
    NVRTC for "cuda-cpp") and the kernel's entry point."""

    text: str
    entry: str


class Run(Protocol):
    """A device's run function: the device memory after the run (a new array, or the image it
    ran in), or None for a resident launch (nothing comes back to the host). `code` is None for
    a device that runs the binary itself (the emulator, whose result comes whole)."""

    def __call__(self, job: Job, code: Code | None) -> np.ndarray | EmulationResult | None: ...


@dataclass(frozen=True)
class Device:
    """One device: `name` (what device= takes), `target` (the backend rendering its code; None:
    it runs the binary), `wave_width` (the default W), `heap` (the device whose heap its device
    arrays share; None: no device arrays), `gpu_heap` (its heap is GPU memory: calls run on it
    in place), `takes` (the options of ENFORCED and HINTS it honours), `mma_paths` (the mma paths
    it runs: every device computes mma exactly), `available` ((usable here, why not)), `run`,
    `finish` (the device's own step from rendered source to what it loads), `about` (one line)."""

    name: str
    target: str | None
    wave_width: int
    heap: str | None
    takes: frozenset[str]
    available: Callable[[], tuple[bool, str]]
    run: Run
    about: str
    mma_paths: tuple[str, ...] = ("exact",)
    gpu_heap: bool = False
    finish: Callable[[str], str] | None = None
    refused: tuple[str, ...] = field(init=False)  # the enforced options it does not take, in order

    def __post_init__(self) -> None:
        object.__setattr__(self, "refused", tuple(o for o in ENFORCED if o not in self.takes))

    # -- the options
    def refuse(self, options: Mapping[str, object]) -> None:
        """A WaveError for the first enforced option given that this device does not take."""
        for opt in self.refused:
            value = options.get(opt)
            if value is None or value is False:
                continue
            takers = [d.name for d in ROWS if opt in d.takes]
            where = " or ".join(f"device={n!r}" for n in takers)
            if opt == "arch":
                raise WaveError(f"arch={value!r} applies to {where} only, not {self.name!r}")
            names = " or ".join(f"the {n}" for n in takers)
            raise WaveError(f"{FLAGS[opt]} applies to {names} only ({where}); {self.name!r} cannot enforce it")
        mma = options.get("mma")
        if mma is not None:
            self.check_mma(mma)

    def check_mma(self, mma: object) -> None:
        """A WaveError unless `mma` is None or an mma path (naming the choices) this device runs."""
        if mma is None:
            return
        from ..backends import ptx

        ptx.check_mma_path(mma)
        if mma not in self.mma_paths:
            runs = [d.name for d in ROWS if mma in d.mma_paths]
            where = " or ".join(f"device={n!r}" for n in runs)
            raise WaveError(
                f"mma={mma!r} runs on {where} only (the PTX backend's tensor cores); "
                f"device {self.name!r} computes mma exactly (mma='exact')"
            )

    # -- a launch
    def code(self, job: Job) -> Code | None:
        """The code this device loads for the job (None: it runs the binary itself). With
        `job.keep_code` the text is kept for the next job with the same kernel, wave width,
        argument count and mma path (a kernel call on device arrays renders once)."""
        if self.target is None:
            return None
        render, mma_path = _backends()
        mma = None
        if "mma" in self.takes:
            mma = job.mma if job.mma is not None else mma_path.get()
        key = (id(job.kernel), self.name, job.wave_width, len(job.bits), mma, job.arch)
        if job.keep_code:
            hit = _CODE.get(key)
            if hit is not None and hit[0] is job.kernel:
                return hit[1]
        extra: dict[str, Any] = {"arch": job.arch} if "arch" in self.takes else {}
        r = render(job.kernel, self.target, wave_width=job.wave_width, nargs=len(job.bits), mma=mma, **extra)
        code = Code(r.source if self.finish is None else self.finish(r.source), r.entry)
        if job.keep_code:
            _CODE[key] = (job.kernel, code)
        return code

    def launch(self, job: Job) -> EmulationResult | None:
        """THE tail of every launch: render, run, a device's recorded fault as the Trap the
        emulator gives (runtime/faults.py), the memory in the emulator's result form."""
        code = self.code(job)
        if code is not None and not isinstance(job.memory, Resident):
            job.image = new_memory(job.memory, "global")
            job.const_image = new_memory(job.constants, "const")
        try:
            out = self.run(job, code)
        except faults.DeviceFault as f:
            assert job.image is not None and job.const_image is not None
            limits = {"global": job.image.size, "const": job.const_image.size, "local": job.kernel.local_memory}
            raise faults.trap_of(f, job.kernel, job.grid, job.workgroup, limits, job.buffers) from None
        if out is None or isinstance(out, EmulationResult):
            return out
        g, wg, k = job.grid, job.workgroup, job.kernel
        stats = Stats(
            wave_width=job.wave_width,
            workgroups=g[0] * g[1] * g[2],
            threads=g[0] * g[1] * g[2] * wg[0] * wg[1] * wg[2],
            registers=k.registers,
            local_memory=k.local_memory,
        )
        return EmulationResult(out, stats, k.name)


_CODE: dict[tuple[object, ...], tuple[Kernel, Code]] = {}  # Device.code's kept texts
_BACKENDS: list[Any] = []  # backends.render and ptx.MMA_PATH, imported on the first rendered launch


def _backends() -> list[Any]:
    if not _BACKENDS:
        from ..backends import render
        from ..backends.ptx import MMA_PATH

        _BACKENDS.extend((render, MMA_PATH))
    return _BACKENDS


def _span(job: Job) -> tuple[int, int] | None:
    """With the arrays' places known, the bytes a checked kernel may touch: from the first array
    to the end of the last (the emulator traps anything outside every array)."""
    b = job.buffers
    return (min(r.offset for r in b), max(r.end for r in b)) if b else None


# ------------------------------------------------------------------ the run functions
def _run_emulator(job: Job, code: Code | None) -> EmulationResult:
    if job.client is not None:
        from .cluster import run_job

        return run_job(job)
    g = job.grid
    bar = None
    if job.progress:  # rich loads only for a bar (start-up of `wave run`: docs/performance.md)
        from rich.console import Console

        from .progress import RunProgress

        bar = RunProgress(g[0] * g[1] * g[2], Console(stderr=True), enabled=True)
    assert not isinstance(job.memory, Resident)
    with bar if bar is not None else contextlib.nullcontext():
        return emulate(
            job.kernel,
            grid=g,
            workgroup=job.workgroup,
            memory=job.memory,
            args=job.args,
            wave_width=job.wave_width,
            check=job.check,
            constants=job.constants,
            max_instructions=job.max_instructions or DEFAULT_MAX_INSTRUCTIONS,
            progress=None if bar is None else bar.callback,
            buffers=job.buffers,
            boundscheck=job.boundscheck,
            zero_division=job.zero_division,
            engine=job.engine,
            donate=job.donate,
            restore=job.restore,
        )


def _run_opencl(job: Job, code: Code | None) -> np.ndarray:
    from . import opencl

    assert code is not None
    return opencl.run(
        code.text, code.entry, job.grid, job.workgroup, job.global_bytes(), job.const_bytes(), job.bits, span=_span(job)
    )


def _run_sycl(job: Job, code: Code | None) -> np.ndarray:
    from . import sycl

    assert code is not None
    launch = (code.entry, job.grid, job.workgroup, job.global_bytes(), job.const_bytes(), job.bits)
    return sycl.run_many(code.text, [launch], span=_span(job))[0]


def _run_cuda(job: Job, code: Code | None) -> np.ndarray | None:
    assert code is not None
    if isinstance(job.memory, Resident):
        r = job.memory
        cuda.run_resident(code.text, code.entry, job.grid, job.workgroup, r.base, job.bits, check=r.check)
        return None
    return cuda.run(code.text, code.entry, job.grid, job.workgroup, job.global_bytes(), job.const_bytes(), job.bits)


def _run_amdgcn_sim(job: Job, code: Code | None) -> np.ndarray:
    from . import amdgcn_sim

    assert code is not None and job.image is not None and job.const_image is not None
    out = amdgcn_sim.run(
        code.text, code.entry, job.grid, job.workgroup, job.image.u8, job.const_image.u8, job.bits, job.arch
    )
    return out[: job.image.size].copy()


def _nvrtc(source: str) -> str:
    return cuda.nvrtc_ptx(source, cuda.arch())


def _always() -> tuple[bool, str]:
    return True, ""


def _opencl_available() -> tuple[bool, str]:
    from . import opencl

    return opencl.available()


def _sycl_available() -> tuple[bool, str]:
    from . import sycl

    return sycl.available()


def _cuda_available() -> tuple[bool, str]:
    return cuda.available()


_EMULATOR_TAKES = frozenset(
    {"check", "boundscheck", "max_instructions", "zero_division", "engine", "progress", "donate", "client", "shards"}
)

ROWS: tuple[Device, ...] = (
    Device(
        "emulator", None, 32, "emulator", _EMULATOR_TAKES, _always, _run_emulator,
        "the reference emulator (the default): traps every bad access, checks undefined behaviour",
    ),
    Device(
        "amdgcn-sim", "amdgcn", 64, None, frozenset({"arch"}), _always, _run_amdgcn_sim,
        "the AMDGCN backend's assembly run by runtime/amdgcn_sim (wave64; arch= picks the GPU)",
    ),
    Device(
        "opencl", "opencl", 32, "opencl", frozenset(), _opencl_available, _run_opencl,
        "the OpenCL backend on the first OpenCL platform (pip: intel-opencl-rt)",
    ),
    Device(
        "sycl", "sycl", 32, "sycl", frozenset(), _sycl_available, _run_sycl,
        "the SYCL backend built with a SYCL compiler and run on its host device",
    ),
    Device(
        "cuda", "ptx", 32, "cuda", frozenset({"mma"}), _cuda_available, _run_cuda,
        "the PTX backend on an NVIDIA GPU (mma='tensor': the tensor cores)",
        mma_paths=("exact", "tensor"), gpu_heap=True,
    ),
    Device(
        "cuda-cpp", "cuda", 32, "cuda", frozenset(), _cuda_available, _run_cuda,
        "the CUDA C++ backend compiled by NVRTC, on an NVIDIA GPU",
        gpu_heap=True, finish=_nvrtc,
    ),
)  # fmt: skip
"""The devices, in the order wg.devices() lists them."""

DEVICES: dict[str, Device] = {d.name: d for d in ROWS}
DEFAULT = ROWS[0]


def names() -> tuple[str, ...]:
    """Every device's name, usable here or not."""
    return tuple(DEVICES)


def devices() -> list[str]:
    """`wg.devices()`: the devices that can run kernels here, in table order."""
    return [d.name for d in ROWS if d.available()[0]]


def device(name: object) -> Device:
    """The row of a device name; a WaveError naming the devices here for anything else."""
    row = DEVICES.get(name) if isinstance(name, str) else None
    if row is None:
        raise WaveError(f"unknown device {name!r}; devices here: {', '.join(devices())}")
    return row


def heap_device(name: object) -> Device:
    """The row owning the heap of device `name`'s arrays ("cuda-cpp" shares the GPU's with
    "cuda"); a WaveError for a device without device arrays."""
    row = DEVICES.get(name) if isinstance(name, str) else None
    if row is None or row.heap is None:
        homes = [d.name for d in ROWS if d.heap is not None]
        raise WaveError(f"unknown device {name!r}; device arrays live on: {', '.join(homes)}")
    return DEVICES[row.heap]


__all__ = ["DEVICES", "ROWS", "Code", "Device", "Job", "Resident", "Run", "device", "devices", "names"]
