"""The OpenCL device: runs the OpenCL C backend's output on any OpenCL 3.0 device with
sub-groups (Intel's CPU runtime from PyPI is found and added to the platforms the loader would
list anyway, without hiding any)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import warnings
from collections.abc import Iterator, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import WaveError, usable
from . import faults, files

_STATE: dict[str, Any] = {}


def intel_library() -> Path | None:
    """libintelocl.so of intel-opencl-rt when that wheel is installed (its own .icd names a path
    from Intel's build machine, so the loaders are pointed at the library itself)."""
    try:
        dist = metadata.distribution("intel-opencl-rt")
    except metadata.PackageNotFoundError:
        return None
    lib = next((f for f in dist.files or [] if f.name == "libintelocl.so"), None)
    return None if lib is None else Path(str(dist.locate_file(lib))).resolve()


def loader_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """env (default os.environ) for a child process whose OpenCL loader should also find Intel's
    CPU runtime: its library appended to OCL_ICD_FILENAMES, which the Khronos loader (the one
    intel-sycl-rt ships) reads in addition to the vendors folder. Nothing else changes, so the
    user's OCL_ICD_VENDORS and their own OCL_ICD_FILENAMES entries stay in effect."""
    out = dict(os.environ if env is None else env)
    lib = intel_library()
    if lib is None:
        return out
    have = [f for f in out.get("OCL_ICD_FILENAMES", "").split(":") if f]
    if str(lib) not in have:
        out["OCL_ICD_FILENAMES"] = ":".join([*have, str(lib)])
    return out


def vendor_entries(env: Mapping[str, str]) -> dict[str, bytes]:
    """The ICDs that ocl-icd (the loader bundled with pyopencl's wheels) loads under env: .icd
    file name -> contents (a library name), read as ocl-icd reads OCL_ICD_VENDORS (a folder of
    .icd files, one .icd file, or a library) and OPENCL_VENDOR_PATH (the folder it defaults to)."""
    vendor_path = env.get("OPENCL_VENDOR_PATH") or "/etc/OpenCL/vendors"
    target = env.get("OCL_ICD_VENDORS") or vendor_path
    out: dict[str, bytes] = {}
    if os.path.isdir(target):
        for name in sorted(os.listdir(target)):
            p = os.path.join(target, name)
            if name.endswith(".icd") and os.path.isfile(p):
                with contextlib.suppress(OSError):
                    out[name] = Path(p).read_bytes()
    elif target.endswith(".icd"):
        p = os.path.join(vendor_path, target)  # a bare name is looked up in the vendors folder first
        if "/" in target or not os.path.isfile(p):
            p = target
        with contextlib.suppress(OSError):
            out[os.path.basename(target)] = Path(p).read_bytes()
    else:
        out["user-library.icd"] = target.encode() + b"\n"
    return out


@contextlib.contextmanager
def _intel_visible() -> Iterator[None]:
    """While pyopencl's loader starts (it reads the environment once, at its first call), point
    OCL_ICD_VENDORS at a private temporary folder holding every ICD it would load anyway plus
    Intel's; then the user's value is put back, so nothing else in the process sees a change."""
    lib = intel_library()
    entries = vendor_entries(os.environ)
    names = {e.split(b"\n", 1)[0].strip().decode(errors="replace") for e in entries.values()}
    if lib is None or str(lib) in names:
        yield
        return
    with files.open_private("opencl") as parent:
        tmp = parent.mkdtemp("icd-")
        try:
            with parent.subdir(tmp, create=False) as folder:  # written and read through its descriptor
                for name, text in entries.items():
                    folder.write_bytes(name, text)
                folder.write_bytes("wavegpu-intel-cpu.icd", f"{lib}\n".encode())
                before = os.environ.get("OCL_ICD_VENDORS")
                os.environ["OCL_ICD_VENDORS"] = folder.fs_path()
                try:
                    yield
                finally:
                    if before is None:
                        del os.environ["OCL_ICD_VENDORS"]
                    else:
                        os.environ["OCL_ICD_VENDORS"] = before
        finally:
            parent.rmtree(tmp)


def available() -> tuple[bool, str]:
    """(is an OpenCL device usable, why not)."""
    return usable(ctx)


def ctx() -> tuple[Any, Any, Any]:
    if "ctx" in _STATE:
        return _STATE["ctx"]
    try:
        import pyopencl as cl
    except ImportError:
        raise WaveError("OpenCL needs pyopencl (pip install 'wavegpu[opencl]')") from None
    try:
        with _intel_visible():
            platforms = cl.get_platforms()
    except cl.Error as e:
        raise WaveError(f"no OpenCL platform: {e}") from None
    devices = []
    for p in platforms:
        with contextlib.suppress(cl.Error):  # a platform without devices does not hide the others
            devices += p.get_devices()
    devices = [d for d in devices if all(x in d.extensions for x in NEEDED_EXTENSIONS)]
    if not devices:
        raise WaveError(f"no OpenCL device with {', '.join(NEEDED_EXTENSIONS)}")
    try:
        context = cl.Context([devices[0]])
        queue = cl.CommandQueue(context)
    except cl.Error as e:
        raise WaveError(f"the OpenCL device {devices[0].name.strip()!r} cannot start: {e}{_settings_note()}") from None
    _STATE["ctx"] = (cl, context, queue)
    return _STATE["ctx"]


def device_name() -> str:
    _cl, context, _queue = ctx()
    return str(context.devices[0].name).strip()


def runtime_settings(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The settings of Intel's CPU runtime in env (default os.environ): its CL_CONFIG_* variables
    (target ISA, vectoriser, ...), which change the code it generates for the same source."""
    return {k: v for k, v in sorted((os.environ if env is None else env).items()) if k.startswith("CL_CONFIG_")}


def _settings_note() -> str:
    s = runtime_settings()
    return f" (runtime settings: {', '.join(f'{k}={v}' for k, v in s.items())})" if s else ""


def build_options(env: Mapping[str, str] | None = None) -> str:
    """The compiler options: OpenCL C 3.0, and under runtime settings a define naming them, so
    that pyopencl's binary cache (keyed by device, options and source, not the environment)
    never hands back a binary the runtime built for another ISA (it refuses it as INVALID_BINARY
    and pyopencl 2026.1 then fails with a KeyError)."""
    s = runtime_settings(env)
    if not s:
        return "-cl-std=CL3.0"
    tag = hashlib.sha256(repr(sorted(s.items())).encode()).hexdigest()[:16]
    return f"-cl-std=CL3.0 -D WV_RUNTIME_SETTINGS=0x{tag}"


def build(source: str) -> Any:
    cl, context, _ = ctx()
    key = hashlib.sha256(source.encode()).hexdigest()
    cache = _STATE.setdefault("programs", {})
    if key not in cache:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the compiler's notes on unused helpers
                cache[key] = cl.Program(context, source).build(options=build_options())
        except cl.RuntimeError as e:
            raise WaveError(f"the OpenCL compiler rejected the generated source{_settings_note()}:\n{e}") from None
    return cache[key]


# what the OpenCL backend's output uses: non-uniform sub-group reductions, ballots (votes and
# the active set), 64-bit atomic min (the fault slot: the lowest faulting thread wins)
NEEDED_EXTENSIONS = (
    "cl_khr_subgroup_non_uniform_arithmetic",
    "cl_khr_subgroup_ballot",
    "cl_khr_int64_extended_atomics",
)


def run(
    source: str,
    entry: str,
    grid: tuple[int, int, int],
    workgroup: tuple[int, int, int],
    memory: np.ndarray,
    constants: np.ndarray,
    args: list[int],
    span: tuple[int, int] | None = None,
    checked: bool = True,
) -> np.ndarray:
    """Run one kernel; returns the device memory afterwards. A kernel the OpenCL backend wrote
    checks its accesses (`checked`, runtime/faults.py): it gets the allowed bytes (`span` of device
    memory, default all of it) and a fault slot, and a fault it records is a DeviceFault.
    `checked=False` runs a hand-written kernel taking (mem, cmem, args...)."""
    cl, context, queue = ctx()
    prg = build(source)
    mf = cl.mem_flags
    image = np.ascontiguousarray(memory, dtype=np.uint8)
    if checked:
        mem, bounds, slot = faults.arm(image, np.asarray(constants).size, span)
        args = [*bounds, *args]
    else:
        mem = image.copy()
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
    if checked:
        faults.check(entry, mem, slot)
    return mem[: image.size]
