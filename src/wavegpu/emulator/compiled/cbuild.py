"""Building and loading the C translation (ctrans.py): the system C compiler makes a shared object
of each kernel's C file, cached beside the numba modules, and ctypes calls it with the numba
driver's arrays.

The compiler is $CC when set, else the first of `cc`, `gcc`, `clang` on PATH. The flags
(`FLAGS`) keep IEEE semantics: C11, no fast-math, no contraction of a multiply and an add into
an fma the row did not ask for, wrapping int64 arithmetic (as numba's), `-march=native` (the
host's vector width and its fma and f16 instructions; the cache key names the host CPU). A
translation is cached in the engine's cache folder (cache.py: private, written through its
descriptor) as compiled/<key>/kernel.c and kernel.so, the key a hash of the C source (itself a
function of the kernel's instructions and launch shape), wavegpu's version and engine code, the
compiler's identity and the flags. With the disk cache off, the object is built in a temporary
folder, loaded, and the folder deleted.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import platform
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ...paths import disk_cache_off, open_private, proc_available
from .cache import Once, code_digest, on_disk
from .ctrans import ENTRY, PART, lane_mode

FLAGS = (
    "-std=c11", "-O2", "-fPIC", "-shared", "-ffp-contract=off", "-fno-fast-math", "-fwrapv",
    "-fno-strict-aliasing", "-fno-math-errno", "-march=native", "-w",
)  # fmt: skip
"""The compiler's flags. -O2: -O3, measured against it on the Rust toolchain's GEMM kernels
(docs/performance.md, "The C translation"), was no faster overall and no quicker to compile. -fno-math-errno changes no result (it lets sqrt be one
instruction instead of a call that may set errno)."""

_LOADED: Once[ctypes.CDLL] = Once()


class CompilerMissing(Exception):
    """No C compiler on PATH (nor $CC)."""


@functools.lru_cache(maxsize=1)
def compiler() -> tuple[str, str]:
    """(the compiler's path, its identity: the first line of `--version`); raises CompilerMissing."""
    names = [os.environ["CC"]] if os.environ.get("CC") else ["cc", "gcc", "clang"]
    for name in names:
        path = shutil.which(name)
        if path is None:
            continue
        try:
            out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30, check=True)
        except (OSError, subprocess.SubprocessError):
            continue
        first = next((ln for ln in out.stdout.splitlines() if ln.strip()), name)
        return path, f"{os.path.realpath(path)}: {first.strip()}"
    raise CompilerMissing(f"no C compiler found ({', '.join(names)} on PATH)")


def has_compiler() -> bool:
    try:
        compiler()
    except CompilerMissing:
        return False
    return True


@functools.lru_cache(maxsize=1)
def _host() -> str:
    """The host CPU as -march=native sees it (model and feature flags)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return platform.machine() + platform.processor()
    model = flags = ""
    for line in text.splitlines():
        if line.startswith(("model name", "Model")) and not model:
            model = line.split(":", 1)[1].strip()
        if line.startswith(("flags", "Features")) and not flags:
            flags = line.split(":", 1)[1].strip()
    return f"{platform.machine()}|{model}|{hashlib.sha256(flags.encode()).hexdigest()[:16]}"


@functools.lru_cache(maxsize=1)
def digest() -> str:
    """What a C translation depends on besides its source: wavegpu's version and engine code,
    the compiler, its flags, the host CPU."""
    from ...version import __version__

    return code_digest(f"{__version__}|{compiler()[1]}|{' '.join(FLAGS)}|{_host()}")


def key_of(source: str) -> str:
    return "c-" + hashlib.sha256(f"{digest()}|{lane_mode()}\n{source}".encode()).hexdigest()[:40]


def is_cached(key: str) -> bool:
    return key in _LOADED or on_disk(key, "kernel.so")


CC_TIMEOUT = 600
"""Seconds the compiler may take for one kernel (a few, measured: docs/performance.md)."""


class CCompileError(Exception):
    """The compiler rejected a C translation (its first error line)."""


def _parts(text: str) -> int:
    """How many parts the C file's functions are cut into (ctrans._file: `#define WAVE_PARTS n`)."""
    m = re.search(rf"^#define {PART}S (\d+)$", text, re.M)
    return int(m.group(1)) if m else 1


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _cc(src: str, obj: str, parts: int = 1) -> None:
    """Compile C file `src` into shared object `obj`: in one process, or (a file of several
    parts, on a host with more than one core) its parts at once, one process per part
    (`-DWAVE_PART=p`, objects beside `obj`), linked together: the same functions and flags,
    in a fraction of the wall time."""
    cc = compiler()[0]
    n = min(parts, _cores())
    if n <= 1:
        _run([[cc, *FLAGS, "-o", obj, src, "-lm"]])
        return
    objs = [f"{obj}.part{p}.o" for p in range(parts)]
    flags = [f for f in FLAGS if f != "-shared"]
    try:
        _run([[cc, *flags, f"-D{PART}={p}", "-c", "-o", o, src] for p, o in enumerate(objs)])
        _run([[cc, "-shared", "-fPIC", "-o", obj, *objs, "-lm"]])
    finally:
        for o in objs:
            Path(o).unlink(missing_ok=True)


def _run(commands: list[list[str]]) -> None:
    """Run the compiler commands at once; the first that fails raises CCompileError."""
    name = Path(commands[0][0]).name
    procs = [subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for c in commands]
    errors: list[str] = []
    try:
        for pr in procs:
            try:
                _, err = pr.communicate(timeout=CC_TIMEOUT)
            except subprocess.TimeoutExpired:
                raise CCompileError(f"{name} took more than {CC_TIMEOUT} s") from None
            if pr.returncode != 0:
                lines = [ln for ln in err.splitlines() if "error" in ln] or err.splitlines() or ["(no output)"]
                errors.append(f"{name} exited with {pr.returncode}: {lines[0].strip()}")
    finally:
        for pr in procs:
            if pr.poll() is None:
                pr.kill()
                pr.wait()
    if errors:
        raise CCompileError(errors[0])


def load(key: str, source: Callable[[], str]) -> ctypes.CDLL:
    """The shared object of C translation `key`: from the cache, else compiled from `source()`
    (and cached). The key determines the source (engine.py: a hash of the program it spells and
    of this package), so a cached object is loaded without spelling it again."""
    return _LOADED.get(key, lambda: _library(key, source))


def _library(key: str, source: Callable[[], str]) -> ctypes.CDLL:
    if disk_cache_off() or not proc_available():
        tmp = tempfile.mkdtemp(prefix="wavegpu-c-")
        try:
            text = source()
            Path(tmp, "kernel.c").write_text(text)
            _cc(f"{tmp}/kernel.c", f"{tmp}/kernel.so", _parts(text))
            lib = ctypes.CDLL(f"{tmp}/kernel.so")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    else:
        with open_private("compiled") as folder, folder.subdir(key) as sub:
            if not sub.exists("kernel.so"):  # renamed into place only once complete
                text = source()
                sub.write_bytes("kernel.c", text.encode())
                tmp = f".kernel.{os.urandom(6).hex()}.so"
                try:
                    _cc(
                        sub.fs_path("kernel.c", for_children=True),
                        sub.fs_path(tmp, for_children=True),
                        _parts(text),
                    )
                    sub.rename(tmp, "kernel.so")
                finally:
                    sub.unlink(tmp, missing_ok=True)
                    for p in range(_parts(text)):
                        sub.unlink(f"{tmp}.part{p}.o", missing_ok=True)
            # by a path naming the key: dlopen takes an object already loaded under the same
            # name for this one (/proc/self/fd/N is the same name for another folder later)
            lib = ctypes.CDLL(folder.fs_path(key) + "/kernel.so")
    fn = getattr(lib, ENTRY)
    fn.restype = ctypes.c_int64
    fn.argtypes = [ctypes.c_int64 if t == "i" else ctypes.c_void_p for t in _ARG_KINDS]
    return lib


_ARG_KINDS = "iiiiipipipippppppiiip"
"""ctrans.ENTRY_PARAMS: i an int64, p a pointer."""


class CRunner:
    """The C translation called as numba's `run_range` is (engine.execute): the same arguments,
    arrays passed as pointers (ctypes releases the GIL for the call, so workgroup ranges run on
    all threads)."""

    def __init__(self, lib: ctypes.CDLL):
        self.lib = lib
        self.fn = getattr(lib, ENTRY)

    def __call__(self, first, last, gx, gy, gz, args, gm8, gm16, gm32, dsize, cm8, cm16, cm32, csize,
                 rs, re, own_lo, own_hi, hint_lo, hint_hi, nb, budget, shared, status) -> None:  # fmt: skip
        for a in (args, gm8, cm8, rs, re, own_lo, own_hi, hint_lo, hint_hi, status):
            if not a.flags.c_contiguous:
                raise ValueError("the C translation takes contiguous arrays")
        assert args.dtype == np.int64 and status.dtype == np.int64
        rc = self.fn(
            first, last, gx, gy, gz, args.ctypes.data, args.size, gm8.ctypes.data, dsize, cm8.ctypes.data, csize,
            rs.ctypes.data, re.ctypes.data, own_lo.ctypes.data, own_hi.ctypes.data, hint_lo.ctypes.data,
            hint_hi.ctypes.data, nb, budget, 1 if shared else 0, status.ctypes.data,
        )  # fmt: skip
        if rc < 0:
            raise MemoryError("the C translation could not allocate its registers")
