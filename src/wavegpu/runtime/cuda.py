"""The CUDA device: loads the PTX backend's output through the driver API (cuda-bindings) and
launches it on an NVIDIA GPU with one device heap (the WAVE device memory), one constant image
and the register arguments (DESIGN section 4). Modules are cached per PTX text, so a new
argument value reuses the loaded module."""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import importlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..errors import WaveError, usable

_STATE: dict[str, Any] = {}
_MODULES: dict[str, Any] = {}
_FUNCTIONS: dict[tuple[str, str], Any] = {}  # (PTX text, entry) -> its loaded function
_INJECTED: list[Any] = []  # a stand-in for cuda.bindings.driver (use_driver), innermost last
# What other modules keep per driver (heap.py: the GPU's device-array heap), as (save, restore):
# use_driver calls save() (which also clears it) on entry and restore(its token) on exit; a
# module first imported inside the block is saved (cleared) on exit.
DRIVER_STATE: list[tuple[Any, Any]] = []


def _bindings(name: str) -> Any:
    """A module of cuda-bindings (`driver`, `nvrtc`): compiled extensions without type stubs, so
    their attributes are typed Any here rather than guessed."""
    return importlib.import_module(f"cuda.bindings.{name}")


def _driver() -> Any:
    """The driver module every call goes through: cuda.bindings.driver, or the stand-in that
    use_driver put in its place."""
    if _INJECTED:
        return _INJECTED[-1]
    try:
        driver = _bindings("driver")
    except ImportError:
        raise WaveError("the CUDA device needs cuda-bindings (pip install 'wavegpu[cuda]')") from None
    return driver


@contextlib.contextmanager
def use_driver(driver: Any) -> Iterator[Any]:
    """Run the CUDA device on `driver`, an object with cuda.bindings.driver's functions and
    return conventions (runtime/fakecuda.py's FakeDriver: the whole call path without a GPU).
    What was set up on one driver (the context, loaded modules, the device-array heap) is put
    aside for the block and comes back after it, so the two never mix."""
    saved = (dict(_STATE), dict(_MODULES), dict(_FUNCTIONS))
    hooks = list(DRIVER_STATE)
    extra = [save() for save, _ in hooks]
    _STATE.clear()
    _MODULES.clear()
    _FUNCTIONS.clear()
    _INJECTED.append(driver)
    try:
        yield driver
    finally:
        _INJECTED.pop()
        for table, old in zip((_STATE, _MODULES, _FUNCTIONS), saved):
            table.clear()
            table.update(old)  # type: ignore[attr-defined]
        for save, _ in DRIVER_STATE[len(hooks) :]:  # a module first imported inside the block
            save()  # drops what it made on `driver`
        for (_, restore), token in zip(hooks, extra):
            restore(token)


def _check(res: Any, what: str) -> Any:
    """Unpack a driver call's (error, values...) tuple; a failure becomes a WaveError naming the call."""
    drv = _driver()
    ok = drv.CUresult.CUDA_SUCCESS
    if type(res) is tuple and len(res) == 1 and res[0] == ok:  # the common case: success, no value
        return ()
    err, *vals = res if isinstance(res, tuple) else (res,)
    if err != ok:
        name = drv.cuGetErrorName(err)[1]
        text = drv.cuGetErrorString(err)[1]
        name = name.decode() if isinstance(name, bytes) else str(err)
        text = text.decode() if isinstance(text, bytes) else ""
        raise WaveError(f"cuda: {what} failed: {name} ({text})")
    return vals[0] if len(vals) == 1 else tuple(vals)


def context() -> Any:
    """The primary context of GPU 0 (created once)."""
    if "ctx" in _STATE:
        return _STATE["ctx"]
    drv = _driver()
    try:
        _check(drv.cuInit(0), "cuInit")
    except RuntimeError as e:  # no libcuda.so: no NVIDIA driver on this machine
        raise WaveError(f"cuda: no NVIDIA driver here ({e})") from None
    if _check(drv.cuDeviceGetCount(), "cuDeviceGetCount") == 0:
        raise WaveError("cuda: the NVIDIA driver reports no GPU")
    dev = _check(drv.cuDeviceGet(0), "cuDeviceGet")
    ctx = _check(drv.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
    _check(drv.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    name = _check(drv.cuDeviceGetName(64, dev), "cuDeviceGetName")
    major = _check(
        drv.cuDeviceGetAttribute(drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev), "attribute"
    )
    minor = _check(
        drv.cuDeviceGetAttribute(drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev), "attribute"
    )
    if (major, minor) < (7, 5):
        raise WaveError(f"cuda: the PTX backend needs sm_75 or newer; this GPU is sm_{major}{minor}")
    _STATE["ctx"] = ctx
    _STATE["name"] = name.split(b"\0", 1)[0].decode(errors="replace") if isinstance(name, bytes) else str(name)
    _STATE["arch"] = f"sm_{major}{minor}"
    return ctx


def available() -> tuple[bool, str]:
    """(is an NVIDIA GPU usable, why not)."""
    return usable(context)


def device_name() -> str:
    context()
    return f"{_STATE['name']} ({_STATE['arch']})"


def _function(ptx: str, entry: str) -> Any:
    """The loaded function `entry` of `ptx`: loaded and looked up once, then found by the text
    itself (a string caches its hash, so a call with the same text costs one dictionary look-up)."""
    fn = _FUNCTIONS.get((ptx, entry))
    if fn is not None:
        return fn
    drv = _driver()
    context()
    key = hashlib.sha256(ptx.encode()).hexdigest()
    if key not in _MODULES:
        data = ptx.encode() + b"\0"
        _MODULES[key] = _check(drv.cuModuleLoadData(data), f"loading the PTX of {entry} (cuModuleLoadData)")
    fn = _check(drv.cuModuleGetFunction(_MODULES[key], entry.encode()), f"cuModuleGetFunction({entry})")
    _FUNCTIONS[(ptx, entry)] = fn
    return fn


def run(
    ptx: str,
    entry: str,
    grid: tuple[int, int, int],
    workgroup: tuple[int, int, int],
    mem: np.ndarray,
    const: np.ndarray,
    args: list[int],
    timing: dict[str, float] | None = None,
) -> np.ndarray:
    """Launch entry once; returns the device memory afterwards (a new array). `timing`, when
    given, receives the kernel's GPU time in seconds under "kernel_s"."""
    drv = _driver()
    context()
    fn = _function(ptx, entry)
    bufs: list[Any] = []
    events: list[Any] = []
    try:
        for host in (mem, const):
            n = max(int(host.nbytes), 16)
            d = _check(drv.cuMemAlloc(n), "cuMemAlloc")
            bufs.append(d)
            if host.nbytes:
                _check(drv.cuMemcpyHtoD(d, np.ascontiguousarray(host).ctypes.data, host.nbytes), "cuMemcpyHtoD")
        values = (int(bufs[0]), int(bufs[1]), *(int(a) & 0xFFFFFFFF for a in args))
        types = (ctypes.c_void_p, ctypes.c_void_p, *([ctypes.c_uint32] * len(args)))
        start = _check(drv.cuEventCreate(0), "cuEventCreate")
        events.append(start)
        stop = _check(drv.cuEventCreate(0), "cuEventCreate")
        events.append(stop)
        _check(drv.cuEventRecord(start, 0), "cuEventRecord")
        _check(drv.cuLaunchKernel(fn, *grid, *workgroup, 0, 0, (values, types), 0), f"launching {entry}")
        _check(drv.cuEventRecord(stop, 0), "cuEventRecord")
        _check(drv.cuCtxSynchronize(), f"running {entry} (a fault here is an out-of-bounds or misaligned access)")
        if timing is not None:
            timing["kernel_s"] = _check(drv.cuEventElapsedTime(start, stop), "cuEventElapsedTime") / 1000.0
        out = np.empty(mem.nbytes, dtype=np.uint8)
        if mem.nbytes:
            _check(drv.cuMemcpyDtoH(out.ctypes.data, bufs[0], mem.nbytes), "cuMemcpyDtoH")
        return out
    finally:
        for e in events:
            drv.cuEventDestroy(e)
        for d in bufs:
            drv.cuMemFree(d)


# ------------------------------------------------------------------ device arrays (runtime/heap.py)
def heap_alloc(nbytes: int) -> int:
    """One device allocation for a device-array heap (never moved, freed at exit); its address."""
    drv = _driver()
    context()
    ptr = _check(drv.cuMemAlloc(nbytes), f"cuMemAlloc({nbytes}) for the device-array heap")
    _STATE.setdefault("heaps", []).append(ptr)
    return int(ptr)


def memset(ptr: int, nbytes: int) -> None:
    if nbytes:
        _check(_driver().cuMemsetD8(ptr, 0, nbytes), "cuMemsetD8")


def copy_in(ptr: int, data: np.ndarray) -> None:
    _check(_driver().cuMemcpyHtoD(ptr, data.ctypes.data, data.nbytes), "cuMemcpyHtoD")


def copy_out(out: np.ndarray, ptr: int) -> None:
    _check(_driver().cuMemcpyDtoH(out.ctypes.data, ptr, out.nbytes), "cuMemcpyDtoH")


def copy_device(dst: int, src: int, nbytes: int) -> None:
    if nbytes:
        _check(_driver().cuMemcpyDtoD(dst, src, nbytes), "cuMemcpyDtoD")
        _check(_driver().cuCtxSynchronize(), "cuMemcpyDtoD")


def _constants() -> int:
    """An empty constant image shared by the launches on device arrays."""
    if "cmem" not in _STATE:
        _STATE["cmem"] = heap_alloc(256)
        memset(_STATE["cmem"], 256)
    return int(_STATE["cmem"])


def _params(base: int, cmem: int, args: list[int]) -> tuple[tuple[int, ...], tuple[Any, ...]]:
    """cuLaunchKernel's (values, types) of a launch on device memory: the global and constant
    images, then the kernel's 32-bit arguments."""
    values = (base, cmem, *[int(a) & 0xFFFFFFFF for a in args])
    types = _PARAM_TYPES.get(len(args))
    if types is None:
        types = _PARAM_TYPES[len(args)] = (ctypes.c_void_p, ctypes.c_void_p, *([ctypes.c_uint32] * len(args)))
    return values, types


_PARAM_TYPES: dict[int, tuple[Any, ...]] = {}  # argument count -> cuLaunchKernel's parameter types


def run_resident(
    ptx: str,
    entry: str,
    grid: tuple[int, int, int],
    workgroup: tuple[int, int, int],
    base: int,
    args: list[int],
    check: tuple[str, str, int, list[int], np.ndarray, int] | None = None,
) -> None:
    """Launch entry on device memory already in place (a device-array heap at `base`): no
    allocation and no copy; returns when the kernel has finished (a fault is a WaveError).

    `check` = (ptx, entry, threads, args, out, at): a second kernel (device_arrays' canary
    check) launched as one workgroup of `threads` after the first on the same memory, then
    `out.nbytes` bytes at heap address `at` copied into `out`. The copy waits for both kernels,
    so a call makes two launches and one small copy, and no other driver call."""
    drv = _driver()
    fn = _function(ptx, entry)
    cmem = _constants()
    says = _SAYS.get(entry) or _says(entry)
    _check(drv.cuLaunchKernel(fn, *grid, *workgroup, 0, 0, _params(base, cmem, args), 0), says[0])
    if check is None:
        _check(drv.cuCtxSynchronize(), says[1])
        return
    cptx, centry, threads, cargs, out, at = check
    cfn = _function(cptx, centry)
    _check(drv.cuLaunchKernel(cfn, 1, 1, 1, threads, 1, 1, 0, 0, _params(base, cmem, cargs), 0), says[2])
    _check(drv.cuMemcpyDtoH(_address(out), base + at, out.nbytes), says[3])


_LAST_OUT: list[Any] = [None, 0]  # the last array run_resident copied into, and its address


def _address(out: np.ndarray) -> int:
    """out's data address (kept for the last array: a caller that reuses its array pays once)."""
    if _LAST_OUT[0] is not out:
        _LAST_OUT[:] = [out, out.ctypes.data]
    return int(_LAST_OUT[1])


_SAYS: dict[str, tuple[str, str, str, str]] = {}  # entry -> what run_resident's failures say


def _says(entry: str) -> tuple[str, str, str, str]:
    """What a failure of each of run_resident's driver calls says (made once per entry)."""
    fault = f"running {entry} (a fault here is an out-of-bounds or misaligned access)"
    _SAYS[entry] = says = (
        f"launching {entry}",
        fault,
        fault + " (or launching the canary check after it)",
        fault + " (or the canary check after it)",
    )
    return says


# ------------------------------------------------------------------ the CUDA C++ backend through NVRTC
_NVRTC_PTX: dict[str, str] = {}


def nvrtc_ptx(source: str, arch: str) -> str:
    """PTX for the CUDA C++ backend's `source`, compiled by NVRTC (the nvidia-cuda-nvrtc wheel,
    found by cuda-bindings) for `arch` (sm_XX): what device="cuda-cpp" loads. No GPU is needed
    to compile. -fmad=false keeps a multiply and an add two roundings, as WAVE computes them."""
    key = hashlib.sha256(f"{arch}\0{source}".encode()).hexdigest()
    if key in _NVRTC_PTX:
        return _NVRTC_PTX[key]
    try:
        nvrtc = _bindings("nvrtc")
    except ImportError:
        raise WaveError(
            "cuda-cpp: NVRTC needs cuda-bindings and nvidia-cuda-nvrtc (pip install 'wavegpu[cuda]')"
        ) from None
    if not arch.startswith("sm_") or not arch[3:].isdigit():
        raise WaveError(f"cuda-cpp: architecture {arch!r} is not of the form sm_XX")

    def call(res: Any, what: str) -> Any:
        err, *vals = res
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise WaveError(f"cuda-cpp: {what} failed: {nvrtc.nvrtcGetErrorString(err)[1]!r}")
        return vals[0] if len(vals) == 1 else tuple(vals)

    try:
        prog = call(nvrtc.nvrtcCreateProgram(source.encode(), b"wave.cu", 0, [], []), "nvrtcCreateProgram")
    except RuntimeError as e:  # no libnvrtc.so
        raise WaveError(f"cuda-cpp: NVRTC is not usable here ({e}); pip install nvidia-cuda-nvrtc") from None
    try:
        opts = [f"-arch=compute_{arch[3:]}".encode(), b"-fmad=false", b"-std=c++17"]
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            size = call(nvrtc.nvrtcGetProgramLogSize(prog), "nvrtcGetProgramLogSize")
            log = b" " * size
            call(nvrtc.nvrtcGetProgramLog(prog, log), "nvrtcGetProgramLog")
            raise WaveError("cuda-cpp: NVRTC rejected the generated source:\n" + log.decode(errors="replace").strip())
        size = call(nvrtc.nvrtcGetPTXSize(prog), "nvrtcGetPTXSize")
        buf = b" " * size
        call(nvrtc.nvrtcGetPTX(prog, buf), "nvrtcGetPTX")
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
    _NVRTC_PTX[key] = buf.rstrip(b"\0").decode()
    return _NVRTC_PTX[key]


def arch() -> str:
    """The GPU's architecture (sm_XX)."""
    context()
    return str(_STATE["arch"])
