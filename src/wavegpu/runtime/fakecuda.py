"""A stand-in for cuda-bindings' driver module (`cuda.bindings.driver`): the functions the CUDA
device calls, with their signatures and return conventions (a tuple of a CUresult and the
values), over device memory simulated in host memory. It records every call by name, and a
launch runs `launch(entry, ptx, grid, block, values)` when one is given (a test can run the
kernel on the emulator over the simulated memory) and does nothing otherwise.

`cuda.use_driver(FakeDriver())` puts it where the runtime imports the driver, so a kernel call
on device="cuda" runs its whole path (binding, the compile cache, rendering, the heap, the
canary check, argument packing for cuLaunchKernel) minus the GPU: `benchmarks/gpu.py` times
that path's host overhead on every machine, and tests count the driver calls a call makes."""

from __future__ import annotations

import ctypes
import enum
from collections.abc import Callable
from typing import Any

import numpy as np


class CUresult(enum.IntEnum):
    CUDA_SUCCESS = 0
    CUDA_ERROR_INVALID_VALUE = 1
    CUDA_ERROR_OUT_OF_MEMORY = 2
    CUDA_ERROR_ILLEGAL_ADDRESS = 700


class CUdevice_attribute(enum.IntEnum):
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76


class _Function:
    def __init__(self, ptx: str, entry: str) -> None:
        self.ptx, self.entry = ptx, entry


OK = CUresult.CUDA_SUCCESS
Launch = Callable[[str, str, tuple[int, int, int], tuple[int, int, int], tuple[Any, ...]], None]


class FakeDriver:
    """cuda.bindings.driver's calls over simulated memory (see the module's docstring).

    `calls` lists the name of every call made, in order; `launch` runs a launched kernel (None:
    a launch changes nothing); `capability` is the GPU's (major, minor)."""

    CUresult = CUresult
    CUdevice_attribute = CUdevice_attribute
    BASE = 0x7F00_0000_0000  # the first simulated device address

    def __init__(self, launch: Launch | None = None, capability: tuple[int, int] = (9, 0)) -> None:
        self.calls: list[str] = []
        self.launch = launch
        self.capability = capability
        self.allocations: dict[int, np.ndarray] = {}  # device address -> its memory
        self.top = self.BASE

    # -- simulated memory
    def view(self, ptr: int, nbytes: int) -> np.ndarray:
        """The simulated device bytes ptr .. ptr+nbytes-1 (a writable view)."""
        ptr = int(ptr)
        for base, mem in self.allocations.items():
            if base <= ptr and ptr + nbytes <= base + mem.size:
                return mem[ptr - base : ptr - base + nbytes]
        raise AssertionError(f"fake CUDA driver: {nbytes} bytes at {ptr:#x} are in no allocation")

    @staticmethod
    def _host(ptr: int, nbytes: int) -> np.ndarray:
        return np.ctypeslib.as_array((ctypes.c_uint8 * nbytes).from_address(int(ptr)))

    # -- set-up
    def cuInit(self, flags: int) -> tuple[CUresult]:
        self.calls.append("cuInit")
        return (OK,)

    def cuDeviceGetCount(self) -> tuple[CUresult, int]:
        self.calls.append("cuDeviceGetCount")
        return OK, 1

    def cuDeviceGet(self, ordinal: int) -> tuple[CUresult, int]:
        self.calls.append("cuDeviceGet")
        return OK, ordinal

    def cuDevicePrimaryCtxRetain(self, dev: int) -> tuple[CUresult, object]:
        self.calls.append("cuDevicePrimaryCtxRetain")
        return OK, object()

    def cuCtxSetCurrent(self, ctx: object) -> tuple[CUresult]:
        self.calls.append("cuCtxSetCurrent")
        return (OK,)

    def cuDeviceGetName(self, length: int, dev: int) -> tuple[CUresult, bytes]:
        self.calls.append("cuDeviceGetName")
        return OK, b"wavegpu fake CUDA driver".ljust(length, b"\0")

    def cuDeviceGetAttribute(self, attrib: CUdevice_attribute, dev: int) -> tuple[CUresult, int]:
        self.calls.append("cuDeviceGetAttribute")
        major = attrib == CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
        return OK, self.capability[0 if major else 1]

    def cuGetErrorName(self, err: CUresult) -> tuple[CUresult, bytes]:
        return OK, CUresult(err).name.encode()

    def cuGetErrorString(self, err: CUresult) -> tuple[CUresult, bytes]:
        return OK, b"fake driver error"

    # -- modules and launches
    def cuModuleLoadData(self, image: bytes) -> tuple[CUresult, str]:
        self.calls.append("cuModuleLoadData")
        return OK, bytes(image).rstrip(b"\0").decode()

    def cuModuleGetFunction(self, module: str, name: bytes) -> tuple[CUresult, _Function]:
        self.calls.append("cuModuleGetFunction")
        entry = name.decode()
        if f".entry {entry}(" not in module:
            return (CUresult.CUDA_ERROR_INVALID_VALUE, None)  # type: ignore[return-value]
        return OK, _Function(module, entry)

    def cuLaunchKernel(
        self,
        f: _Function,
        gx: int,
        gy: int,
        gz: int,
        bx: int,
        by: int,
        bz: int,
        shared: int,
        stream: int,
        params: tuple[tuple[Any, ...], tuple[Any, ...]],
        extra: int,
    ) -> tuple[CUresult]:
        self.calls.append("cuLaunchKernel")
        values, types = params
        if len(values) != len(types) or not isinstance(f, _Function):
            return (CUresult.CUDA_ERROR_INVALID_VALUE,)
        if self.launch is not None:
            self.launch(f.entry, f.ptx, (gx, gy, gz), (bx, by, bz), values)
        return (OK,)

    def cuCtxSynchronize(self) -> tuple[CUresult]:
        self.calls.append("cuCtxSynchronize")
        return (OK,)

    # -- memory
    def cuMemAlloc(self, nbytes: int) -> tuple[CUresult, int]:
        self.calls.append("cuMemAlloc")
        ptr = self.top
        self.allocations[ptr] = np.zeros(nbytes, np.uint8)  # pages mapped lazily by the OS
        self.top += -(-nbytes // 4096) * 4096 + 4096
        return OK, ptr

    def cuMemFree(self, ptr: int) -> tuple[CUresult]:
        self.calls.append("cuMemFree")
        self.allocations.pop(int(ptr), None)
        return (OK,)

    def cuMemsetD8(self, ptr: int, value: int, nbytes: int) -> tuple[CUresult]:
        self.calls.append("cuMemsetD8")
        self.view(ptr, nbytes)[:] = value
        return (OK,)

    def cuMemcpyHtoD(self, dst: int, src: int, nbytes: int) -> tuple[CUresult]:
        self.calls.append("cuMemcpyHtoD")
        self.view(dst, nbytes)[:] = self._host(src, nbytes)
        return (OK,)

    def cuMemcpyDtoH(self, dst: int, src: int, nbytes: int) -> tuple[CUresult]:
        self.calls.append("cuMemcpyDtoH")
        self._host(dst, nbytes)[:] = self.view(src, nbytes)
        return (OK,)

    def cuMemcpyDtoD(self, dst: int, src: int, nbytes: int) -> tuple[CUresult]:
        self.calls.append("cuMemcpyDtoD")
        self.view(dst, nbytes)[:] = self.view(src, nbytes).copy()
        return (OK,)

    # -- events (cuda.run's timing)
    def cuEventCreate(self, flags: int) -> tuple[CUresult, object]:
        self.calls.append("cuEventCreate")
        return OK, object()

    def cuEventRecord(self, event: object, stream: int) -> tuple[CUresult]:
        self.calls.append("cuEventRecord")
        return (OK,)

    def cuEventElapsedTime(self, start: object, stop: object) -> tuple[CUresult, float]:
        self.calls.append("cuEventElapsedTime")
        return OK, 0.0

    def cuEventDestroy(self, event: object) -> tuple[CUresult]:
        self.calls.append("cuEventDestroy")
        return (OK,)
