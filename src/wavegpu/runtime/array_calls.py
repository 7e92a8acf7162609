"""Kernel calls with device arrays (docs/sdk.md, device arrays): the call's arrays are placed in
their device's heap (NumPy arguments copied in for the call, CuPy/PyTorch CUDA arrays device to
device), the kernel launches on the heap through the one launch path (launch.start: in place on a
GPU heap, on the heap's host image elsewhere), the canaries around the arrays are checked, and
NumPy arguments the kernel may write are copied back where they changed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..emulator import BufferRegion
from ..errors import WaveError
from ..wbin.program import Kernel, Param
from . import cuda, devices
from .buffers import NUMPY_TYPES, _array, bind, scalar_bits, type_name
from .canaries import CHECK_THREADS, CHECK_WORDS, adopt, check_canaries, check_kernel
from .device_arrays import DeviceArray, to_device
from .devices import Dim3, Resident
from .heap import heap
from .launch import start


def has_device_arrays(values: Sequence[object] | Mapping[str, object]) -> bool:
    """A call to run on a device's heap: it passes a device array, or a CuPy/PyTorch CUDA array."""
    seq = values.values() if isinstance(values, Mapping) else values
    return any(isinstance(v, DeviceArray) or _foreign(v) is not None for v in seq)


_PLAIN = (DeviceArray, np.ndarray, int, float, np.generic)  # values that are never a CUDA array


def _foreign(v: object) -> dict[str, Any] | None:
    """The __cuda_array_interface__ of a CuPy array or PyTorch CUDA tensor, else None."""
    if isinstance(v, _PLAIN):
        return None
    try:
        return getattr(v, "__cuda_array_interface__", None)
    except Exception:  # torch raises for tensors that are not on a GPU
        return None


def _check_device_array(p: Param, v: DeviceArray, device: str, home: str) -> None:
    """A WaveError unless device array v may be parameter p's argument on `device`, whose arrays
    live on heap `home`."""
    dt = NUMPY_TYPES[p.dtype]
    if v.device == home and v.dtype == dt:
        return
    where = f"parameter {p.name!r} ({type_name(p.dtype)}[])"
    if v.device != home:
        raise WaveError(f"{where}: the device array lives on {v.device!r}; call the kernel with device={v.device!r}")
    if v.dtype != dt:
        raise WaveError(
            f"{where} needs an array of {dt}, got a device array of {v.dtype}; wavegpu never converts arrays"
        )


def run_on_heap(
    k: Kernel,
    values: Sequence[object] | Mapping[str, object],
    row: devices.Device,
    g: Dim3,
    wg: Dim3,
    wave_width: int,
    options: Mapping[str, Any],
) -> Any:
    """One kernel call on the device's heap (docs/sdk.md, device arrays): the launch result on a
    host heap (its memory is the heap's image); None on a GPU heap, where nothing comes back to
    the host. The launch's shape is checked (run_kernel); `options`: the call options of
    launch.start (check, boundscheck, ...)."""
    device = row.name
    seq = bind(k, values)
    h = heap(device)
    home = h.device  # the device whose heap it is ("cuda" for "cuda-cpp")
    args: list[int] = []
    regions: list[BufferRegion] = []
    temps: list[tuple[Param, Any, DeviceArray, bool]] = []  # (param, caller's array, its copy, foreign)
    named: list[tuple[str, DeviceArray]] = []  # the call's arrays in the heap, by parameter name
    try:
        for i, (p, v) in enumerate(zip(k.params, seq)):
            if p.kind == "scalar":
                args.append(scalar_bits(v, p))
                continue
            if isinstance(v, DeviceArray):
                _check_device_array(p, v, device, home)
                d = v
            elif (cai := _foreign(v)) is not None:
                d = _from_foreign(p, v, cai, device)
                temps.append((p, v, d, True))
            else:
                a = _array(p, v, counts=False)
                assert isinstance(a, np.ndarray)
                for q, other, _, foreign in temps:
                    if not foreign and np.shares_memory(a, other):
                        raise WaveError(
                            f"parameters {q.name!r} and {p.name!r} share memory: with device arrays in the call, "
                            "NumPy arguments are copied one by one; pass one device array for both"
                        )
                d = to_device(a, device)
                temps.append((p, a, d, False))
            args.append(d.address)
            regions.append(BufferRegion(i, p.name, d.address, d.nbytes, d.dtype.itemsize))
            named.append((p.name, d))
        if h.host is None:  # a GPU heap: the kernel runs on it in place, the canary check right after
            spans = [(d.address, d.nbytes) for _, d in named]
            if not spans:
                res = start(k, row, g, wg, wave_width, Resident(h.ptr), args, options, None, True, args)
            else:  # the canary check runs after the kernel; its block comes back in one copy
                ranges, check_args = h.prepare_check(spans)
                got = np.empty(len(ranges) * CHECK_WORDS, np.uint32)
                verify = (*check_kernel(), CHECK_THREADS, check_args, got, h.block)
                res = start(k, row, g, wg, wave_width, Resident(h.ptr, verify), args, options, None, True, args)
                check_canaries(h, k, device, named, h.check_result(ranges, got))
        else:
            res = start(k, row, g, wg, wave_width, h.host[: h.top], args, options, regions, True, args)
            assert res is not None
            arrays = [(p, r) for p, r in zip((q for q in k.params if q.kind != "scalar"), regions)]
            adopt(h, res.memory, arrays, k.name)
        for p, a, d, foreign in temps:
            if not p.writable:
                continue
            if foreign:
                cuda.copy_device(int(_foreign(a)["data"][0]), h.ptr + d.address, d.nbytes)  # type: ignore[index]
            else:
                new = d.copy_to_host()
                old = np.ascontiguousarray(a).reshape(-1).view(np.uint8)
                if not np.array_equal(new.reshape(-1).view(np.uint8), old):  # bit for bit: NaNs too
                    np.copyto(a, new)
        return res
    finally:
        temps.clear()


def _from_foreign(p: Param, v: object, cai: dict[str, Any], device: str) -> DeviceArray:
    """A heap copy of a CuPy array or PyTorch CUDA tensor (device to device)."""
    dt = NUMPY_TYPES[p.dtype]
    where = f"parameter {p.name!r} ({type_name(p.dtype)}[])"
    if not devices.device(device).gpu_heap:
        on = " or ".join(repr(d.name) for d in devices.ROWS if d.gpu_heap)
        raise WaveError(f"{where}: a CUDA array ({type(v).__name__}) can only be passed to a kernel on device={on}")
    got = np.dtype(cai["typestr"])
    if got != dt:
        raise WaveError(f"{where} needs an array of {dt}, got a {type(v).__name__} of {got}; wavegpu never converts")
    shape = tuple(cai["shape"])
    strides = cai.get("strides")
    if strides is not None and tuple(strides) != tuple(np.empty(shape, dt).strides):
        raise WaveError(
            f"{where}: a non-contiguous {type(v).__name__} cannot be copied as one block; pass a contiguous one"
        )
    if p.writable and cai["data"][1]:
        raise WaveError(f"{where}: the kernel may write this array, but the array passed is read-only")
    d = DeviceArray(shape, dt, device)
    cuda.copy_device(d.pointer, int(cai["data"][0]), d.nbytes)
    return d
