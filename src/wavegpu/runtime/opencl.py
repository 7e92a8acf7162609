"""The OpenCL device: runs the OpenCL C backend's output on any OpenCL 3.0 device with
sub-groups (Intel's CPU runtime from PyPI is found, and its ICD entry written, automatically)."""

from __future__ import annotations

import hashlib
import os
import warnings
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import WaveError, usable

_STATE: dict[str, Any] = {}


def use_intel_icd() -> None:
    """Point the ICD loader at intel-opencl-rt's library (its shipped .icd names a build path)."""
    if os.environ.get("OCL_ICD_VENDORS") or os.environ.get("OCL_ICD_FILENAMES"):
        return
    try:
        dist = metadata.distribution("intel-opencl-rt")
    except metadata.PackageNotFoundError:
        return
    lib = next((f for f in dist.files or [] if f.name == "libintelocl.so"), None)
    if lib is None:
        return
    path = Path(dist.locate_file(lib)).resolve()
    vend = Path(os.environ.get("WAVEGPU_CACHE_DIR") or Path.home() / ".cache" / "wavegpu") / "OpenCL" / "vendors"
    try:
        vend.mkdir(parents=True, exist_ok=True)
        (vend / "intel-cpu.icd").write_text(str(path) + "\n")
    except OSError:
        return
    os.environ["OCL_ICD_VENDORS"] = str(vend)


def available() -> tuple[bool, str]:
    """(is an OpenCL device usable, why not)."""
    return usable(ctx)


def ctx() -> tuple[Any, Any, Any]:
    if "ctx" in _STATE:
        return _STATE["ctx"]
    use_intel_icd()
    try:
        import pyopencl as cl
    except ImportError:
        raise WaveError("OpenCL needs pyopencl (pip install 'wavegpu[opencl]')") from None
    try:
        devices = [d for p in cl.get_platforms() for d in p.get_devices()]
    except cl.Error as e:
        raise WaveError(f"no OpenCL platform: {e}") from None
    devices = [d for d in devices if "cl_khr_subgroup_non_uniform_arithmetic" in d.extensions]
    if not devices:
        raise WaveError("no OpenCL device with non-uniform sub-group operations")
    context = cl.Context([devices[0]])
    queue = cl.CommandQueue(context)
    _STATE["ctx"] = (cl, context, queue)
    return _STATE["ctx"]


def device_name() -> str:
    _cl, context, _queue = ctx()
    return str(context.devices[0].name).strip()


def build(source: str) -> Any:
    cl, context, _ = ctx()
    key = hashlib.sha256(source.encode()).hexdigest()
    cache = _STATE.setdefault("programs", {})
    if key not in cache:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the compiler's notes on unused helpers
                cache[key] = cl.Program(context, source).build(options="-cl-std=CL3.0")
        except cl.RuntimeError as e:
            raise WaveError(f"the OpenCL compiler rejected the generated source:\n{e}") from None
    return cache[key]


def run(
    source: str,
    entry: str,
    grid: tuple[int, int, int],
    workgroup: tuple[int, int, int],
    memory: np.ndarray,
    constants: np.ndarray,
    args: list[int],
) -> np.ndarray:
    """Run one kernel; returns the device memory afterwards."""
    cl, context, queue = ctx()
    prg = build(source)
    mf = cl.mem_flags
    mem = np.ascontiguousarray(memory, dtype=np.uint8).copy()
    if mem.size == 0:
        mem = np.zeros(16, np.uint8)
    cmem = np.ascontiguousarray(constants, dtype=np.uint8)
    if cmem.size == 0:
        cmem = np.zeros(16, np.uint8)
    dbuf = cl.Buffer(context, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=mem)
    cbuf = cl.Buffer(context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=cmem)
    kernels = _STATE.setdefault("kernels", {})
    kern = kernels.get((id(prg), entry))
    if kern is None:
        kern = kernels[(id(prg), entry)] = cl.Kernel(prg, entry)
    global_size = tuple(g * w for g, w in zip(grid, workgroup))
    kern(queue, global_size, workgroup, dbuf, cbuf, *[np.uint32(a & 0xFFFFFFFF) for a in args])
    cl.enqueue_copy(queue, mem, dbuf)
    queue.finish()
    return mem[: memory.size]
