"""The calling convention of kernel calls (docs/sdk.md): call options, the binding of a call's
keywords to arguments and options, and `run_kernel`, one call with NumPy arrays and scalars."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import WaveError
from ..wbin.program import Kernel
from .buffers import pack

# a call's workgroup when neither the call nor the kernel gives one: the size the Rust
# toolchain's compiler records in every binary, so its kernels that assume 256 run unchanged
DEFAULT_WORKGROUP = 256


_CALL: list[Any] = []  # run_kernel's helpers from the launch path and array_calls, imported on its first call


def run_kernel(
    k: Kernel,
    values: Sequence[object] | Mapping[str, object],
    *,
    grid: int | Sequence[int],
    workgroup: int | Sequence[int] | None = None,
    device: str = "emulator",
    wave_width: int | None = None,
    check: bool = False,
    max_instructions: int | None = None,
    progress: bool = False,
    boundscheck: bool = False,
    arch: str | None = None,
    engine: str | None = None,
    mma: str | None = None,
    client: Any = None,
) -> Any:
    """One kernel call with the calling convention of docs/sdk.md, whatever the source language:
    pack the arguments (by parameter position or name), launch, copy changed writable arrays back.
    `mma`: the mma path on device="cuda" (wg.launch); `client`: a dask.distributed.Client whose
    cluster runs the launch (wg.launch, docs/cluster.md). A call passing device arrays runs on their
    device's heap (runtime/array_calls.py); both go through the one launch path (launch.start)."""
    if not _CALL:
        from ..emulator.launch import check_threads, dim3
        from .array_calls import has_device_arrays, run_on_heap
        from .devices import device as row_of
        from .launch import start

        _CALL.extend((has_device_arrays, run_on_heap, row_of, start, check_threads, dim3))
    has_device_arrays, run_on_heap, row_of, start, check_threads, dim3 = _CALL

    row = row_of(device)
    if mma is not None:
        row.check_mma(mma)
    if wave_width is None:
        wave_width = row.wave_width
    # the launch's size first: a refused launch builds no memory image of the arrays
    g = dim3(grid, "grid")
    wg = dim3(workgroup if workgroup is not None else (k.workgroup_size or DEFAULT_WORKGROUP), "workgroup")
    check_threads(g, wg, k)
    options = {
        "check": check,
        "max_instructions": max_instructions,
        "progress": progress,
        "boundscheck": boundscheck,
        "zero_division": check or boundscheck,
        "arch": arch,
        "engine": engine,
        "mma": mma,
        "client": client,
    }
    if has_device_arrays(values):  # arrays in a device's heap: launch there (docs/sdk.md, device arrays)
        return run_on_heap(k, values, row, g, wg, wave_width, options)
    layout = pack(k, values, counts=False)
    res = start(k, row, g, wg, wave_width, layout.memory, layout.args, options, layout.regions())
    layout.write_back(res.memory)
    return res


CALL_OPTIONS = (
    "grid",
    "workgroup",
    "device",
    "wave_width",
    "check",
    "max_instructions",
    "progress",
    "arch",
    "engine",
    "mma",
    "client",
)
"""The keyword options of a kernel call, the same for `@wg.kernel` and `wg.load_kernels` kernels:
run_kernel's keyword parameters but `boundscheck` (a kernel's own; a test checks they agree)."""


def split_call(
    name: str, params: Sequence[str], args: tuple[Any, ...], kwargs: dict[str, Any], preset: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A call's keywords as (arguments, options). A keyword that names a kernel parameter is an
    argument, as Python binds it, even where a call option has that name; such an option is given
    through `kernel.configure(option=...)` (`preset`) instead (docs/sdk.md)."""
    arguments: dict[str, Any] = {}
    options = dict(preset)
    for k, v in kwargs.items():
        if k in params:
            if k in CALL_OPTIONS and params.index(k) < len(args):
                raise WaveError(
                    f"kernel {name!r}: {k!r} is a parameter of the kernel, given by position, and a call "
                    f"option: give the option with {name}.configure({k}=...)(...)"
                )
            arguments[k] = v
        elif k in CALL_OPTIONS:
            options[k] = v
        else:
            arguments[k] = v  # the binding names the unknown parameter
    if "grid" not in options:
        if "grid" in params:
            raise WaveError(
                f"kernel {name!r} has a parameter named 'grid' (grid= is its argument): give the launch's "
                f"grid with {name}.configure(grid=...)(...)"
            )
        raise WaveError(f"kernel {name!r}: give the launch's grid, grid=N (workgroups)")
    return arguments, options


def check_options(name: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """The options of `kernel.configure(...)`, each a call option."""
    for k in options:
        if k not in CALL_OPTIONS:
            raise WaveError(f"kernel {name!r}: {k!r} is not a call option ({', '.join(CALL_OPTIONS)})")
    return dict(options)


class Configured:
    """A kernel with call options given ahead (`kernel.configure(grid=4)`): calling it binds every
    keyword that names a parameter to that parameter."""

    def __init__(self, kernel: Any, options: Mapping[str, Any]):
        self.kernel = kernel
        self.options = check_options(kernel.__name__, options)

    def configure(self, **options: Any) -> Configured:
        return Configured(self.kernel, {**self.options, **options})

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.kernel.call(args, kwargs, self.options)

    def __repr__(self) -> str:
        opts = ", ".join(f"{k}={v!r}" for k, v in self.options.items())
        return f"{self.kernel!r}.configure({opts})"
