"""Device-resident arrays: `wg.to_device`, `wg.device_array`, `.copy_to_host()` (numba's names).

Each device with device arrays has one heap (heap.py): a range of WAVE's 32-bit device memory
that kernels address with byte addresses, carved into slots (256-byte aligned, each followed by a
guard gap that belongs to no array, as in a call's layout: docs/sdk.md) whose bytes outside the
arrays hold a canary pattern (canaries.py). A kernel call whose arrays are device arrays
launches on the heap itself (array_calls.py): on a GPU heap ("cuda") nothing is copied at all; on
the emulator and the OpenCL and SYCL devices the heap is host memory, which the launch hands to
the device as its memory image.

Device arrays on a GPU heap export `__cuda_array_interface__` and DLPack (`__dlpack__`,
dlpack.py), so CuPy and PyTorch use them without a copy; the heap's base address never moves (its
size is fixed when it is first used: WAVEGPU_HEAP_BYTES, default 1 GiB), so exported pointers
stay valid while the array lives.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import WaveError
from . import devices
from .buffers import NUMPY_TYPES
from .heap import heap


class DeviceArray:
    """An array living in a device's heap: `shape`, `dtype`, `device`, `address` (its WAVE byte
    address, what a kernel receives), `.copy_to_host()`, `.copy_to_device(array)`."""

    def __init__(self, shape: int | Sequence[int], dtype: Any, device: str) -> None:
        dims = (shape,) if isinstance(shape, int | np.integer) else tuple(shape)
        if not all(isinstance(n, int | np.integer) and n >= 0 for n in dims):
            raise WaveError(f"device array shape must be non-negative ints, got {shape!r}")
        try:
            dt = np.dtype(dtype)
        except TypeError as e:
            raise WaveError(f"device array dtype {dtype!r}: {e}") from None
        if dt not in set(NUMPY_TYPES.values()):
            names = sorted({str(t) for t in NUMPY_TYPES.values()})
            raise WaveError(f"device arrays hold WAVE's element types ({', '.join(names)}), not {dt}")
        self.shape = tuple(int(n) for n in dims)
        self.dtype = dt
        self.device = devices.heap_device(device).name  # "cuda-cpp"'s arrays live on the GPU's heap
        self.size = int(np.prod(self.shape, dtype=np.int64))
        self.ndim = len(self.shape)
        self.nbytes = self.size * dt.itemsize
        self._heap = heap(device)
        self.address = self._heap.alloc(self.nbytes)
        weakref.finalize(self, self._heap.release, self.address, self.nbytes)

    def __repr__(self) -> str:
        return f"<wavegpu device array {self.shape} {self.dtype} on {self.device} at {self.address:#x}>"

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d device array")
        return self.shape[0]

    def copy_to_host(self, out: np.ndarray | None = None) -> np.ndarray:
        """The array's contents as a new NumPy array (or into `out`, of the same shape and dtype)."""
        data = self._heap.read(self.address, self.nbytes).view(self.dtype).reshape(self.shape)
        if out is None:
            return data
        if not isinstance(out, np.ndarray) or out.shape != self.shape or out.dtype != self.dtype:
            raise WaveError(f"copy_to_host(out=...) needs a {self.dtype} array of shape {self.shape}")
        np.copyto(out, data)
        return out

    def copy_to_device(self, array: np.ndarray) -> None:
        """Overwrite the contents from a NumPy array of exactly this shape and dtype."""
        if not isinstance(array, np.ndarray) or array.shape != self.shape or array.dtype != self.dtype:
            got = f"{array.dtype} {array.shape}" if isinstance(array, np.ndarray) else type(array).__name__
            raise WaveError(f"copy_to_device needs a {self.dtype} array of shape {self.shape}, got {got}")
        self._heap.write(self.address, array)

    @property
    def pointer(self) -> int:
        """The array's address in the process: the device pointer on "cuda", host memory elsewhere."""
        if self._heap.host is not None:
            return int(self._heap.host.ctypes.data) + self.address
        return self._heap.ptr + self.address

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        if self._heap.host is not None:
            raise AttributeError(f"a device array on {self.device!r} is host memory: use copy_to_host()")
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.pointer, False), "version": 3}

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0) if self._heap.host is not None else (2, 0)  # kDLCPU, kDLCUDA

    def __dlpack__(self, *, stream: Any = None, **kwargs: Any) -> Any:
        """A DLPack capsule viewing the array in place (the producer's stream: the default one,
        synchronised after every launch, so no stream handshake is needed)."""
        if kwargs.get("copy") is True:
            raise BufferError("wavegpu device arrays export without copies only")
        from .dlpack import dlpack_capsule

        return dlpack_capsule(self)


def to_device(array: Any, device: str = "emulator") -> DeviceArray:
    """A device array with a copy of `array` (a NumPy array of one of WAVE's element types)."""
    if not isinstance(array, np.ndarray):
        raise WaveError(
            f"to_device needs a NumPy array, got {type(array).__name__} (pass np.asarray(value, dtype=...))"
        )
    d = DeviceArray(array.shape, array.dtype, device)
    d.copy_to_device(array)
    return d


def device_array(shape: int | Sequence[int], dtype: Any = np.float32, device: str = "emulator") -> DeviceArray:
    """A zero-filled device array."""
    return DeviceArray(shape, dtype, device)
