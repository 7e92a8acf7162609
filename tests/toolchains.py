"""The external tools the tests call, each found by an explicit version (never an unversioned
name that resolves to another release on a fresh machine), with the reason when one is absent.

| tool    | version required               | where it comes from                                  |
| ------- | ------------------------------ | ---------------------------------------------------- |
| clang++ | 15 or newer, by versioned name | Debian `clang-15` (tools/system-tools.sh; hipcc needs it too) |
| hipcc   | HIP 5.2 (Debian's ROCm 5.2)    | Debian `hipcc` (tools/system-tools.sh)               |
| nvcc    | CUDA 13.0                      | the CUDA toolkit (not in Debian; tests skip without) |
| ptxas   | CUDA 13.0                      | the CUDA toolkit                                     |
| llvm-mc, ld.lld, llvm-objdump, llvm-readelf | 14, 19, 22 by versioned name (`llvm-mc-19`) | Debian `llvm-N`/`lld-N` (tools/system-tools.sh installs all three; clang brings llvm-14, not lld-14) |

The AMDGCN backend's tests assemble for gfx90a with LLVM 14 and 22, gfx942 with 19 and 22, and
gfx950 with 22 (`AMDGCN_LLVM`): the first LLVM that knew each processor and the newest.

clang 14 (Debian's default `clang++`) rejects `_Float16` on x86, which the Metal shim uses.
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
from dataclasses import dataclass

CLANG_NAMES = ("clang++-22", "clang++-19", "clang++-16", "clang++-15")  # newest first; never bare clang++
CLANG_MIN = 15
CUDA_RELEASE = "13.0"
HIP_RELEASE = "5.2"


@dataclass(frozen=True)
class Tool:
    """A tool's path, or None with the reason it cannot be used."""

    path: str | None
    reason: str = ""


def _version_text(path: str, *args: str) -> str:
    try:
        r = subprocess.run([path, *args], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"<{e}>"
    return r.stdout + r.stderr


@functools.cache
def clang() -> Tool:
    """A clang++ of version 15 or newer, by its versioned name."""
    for name in CLANG_NAMES:
        path = shutil.which(name)
        if path is None:
            continue
        m = re.search(r"clang version (\d+)", _version_text(path, "--version"))
        if m and int(m.group(1)) >= CLANG_MIN:
            return Tool(path)
    return Tool(None, f"no clang++ {CLANG_MIN} or newer ({', '.join(CLANG_NAMES)}); make test installs clang-15")


def _cuda(name: str) -> Tool:
    path = shutil.which(name)
    if path is None:
        return Tool(None, f"{name} is not installed (it comes with CUDA {CUDA_RELEASE}, not in Debian)")
    text = _version_text(path, "--version")
    if f"cuda_{CUDA_RELEASE}" not in text and f"release {CUDA_RELEASE}" not in text:
        first = text.strip().splitlines()[-1] if text.strip() else "?"
        return Tool(None, f"{path} is not CUDA {CUDA_RELEASE} ({first})")
    return Tool(path)


@functools.cache
def nvcc() -> Tool:
    return _cuda("nvcc")


@functools.cache
def ptxas() -> Tool:
    return _cuda("ptxas")


@functools.cache
def hipcc() -> Tool:
    path = shutil.which("hipcc")
    if path is None:
        return Tool(None, f"hipcc is not installed (make test installs Debian's hipcc, HIP {HIP_RELEASE})")
    text = _version_text(path, "--version")
    if f"HIP version: {HIP_RELEASE}" not in text:
        m = re.search(r"HIP version: (\S+)", text)
        return Tool(None, f"{path} is HIP {m.group(1) if m else '?'}, the tests expect HIP {HIP_RELEASE}")
    return Tool(path)


LLVM_VERSIONS = (14, 19, 22)
# AMDGCN processor -> the LLVM releases the tests assemble it with (each must know it)
AMDGCN_LLVM = {"gfx90a": (14, 22), "gfx942": (19, 22), "gfx950": (22,)}


@functools.cache
def llvm(version: int) -> Tool:
    """llvm-mc, ld.lld, llvm-objdump and llvm-readelf of one LLVM release, by versioned names;
    `path` is the llvm-mc (the others sit beside it under the same suffix)."""
    names = [f"llvm-mc-{version}", f"ld.lld-{version}", f"llvm-objdump-{version}", f"llvm-readelf-{version}"]
    missing = [n for n in names if shutil.which(n) is None]
    if missing:
        return Tool(None, f"{', '.join(missing)} not installed (make test installs llvm-{version} and lld-{version})")
    text = _version_text(shutil.which(names[0]) or names[0], "--version")
    if f"LLVM version {version}." not in text:
        return Tool(None, f"{names[0]} is not LLVM {version}")
    return Tool(shutil.which(names[0]))
