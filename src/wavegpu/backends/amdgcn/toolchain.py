"""llvm-mc / ld.lld / llvm-objdump / llvm-readelf by explicit version, for `--hsaco` and the
tests: assemble a module for a target and link it into a code object.

A target is assembled with the newest LLVM whose llvm-mc knows the processor (target.llvm:
gfx950 needs LLVM 22, gfx942 LLVM 19 or 22, gfx90a any of 14/19/22). LLVM 14 gets code object
v4 (its ld.lld cannot link v5). The assembler's "is not a recognized processor" warning (it then
assembles for a generic target) is an error here, as is any other warning.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import tempfile
from pathlib import Path

from ...errors import WaveError
from .target import Target

TRIPLE = "amdgcn-amd-amdhsa"


class ToolchainError(WaveError):
    """llvm-mc or ld.lld is missing or rejected our output."""


@functools.cache
def tool(name: str, version: int) -> str | None:
    return shutil.which(f"{name}-{version}")


def llvm_for(t: Target, versions: tuple[int, ...] | None = None) -> int:
    for v in versions or t.llvm:
        if v in t.llvm and tool("llvm-mc", v) and tool("ld.lld", v):
            return v
    raise ToolchainError(
        f"no llvm-mc/ld.lld for {t.name}: install one of LLVM {', '.join(map(str, t.llvm))} "
        f"(Debian: apt-get install llvm-{t.llvm[0]} lld-{t.llvm[0]})"
    )


def cov_for(version: int) -> int:
    return 4 if version < 19 else 5


def _run(cmd: list[str], what: str) -> subprocess.CompletedProcess[str]:
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ToolchainError(f"{what}: {e}") from e
    if r.returncode != 0 or "warning" in r.stderr or "not a recognized processor" in r.stderr:
        raise ToolchainError(f"{what} failed:\n{r.stderr.strip()[:4000]}")
    return r


def assemble(text: str, t: Target, version: int, obj: Path) -> None:
    cmd = [tool("llvm-mc", version) or "llvm-mc", f"-triple={TRIPLE}", f"-mcpu={t.name}", "-filetype=obj"]
    if version < 19:
        cmd.append("--amdhsa-code-object-version=4")
    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "k.s"
        src.write_text(text)
        _run([*cmd, str(src), "-o", str(obj)], f"llvm-mc-{version} -mcpu={t.name}")


def link(obj: Path, out: Path, version: int) -> None:
    _run([tool("ld.lld", version) or "ld.lld", "-shared", str(obj), "-o", str(out)], f"ld.lld-{version}")


def hsaco(text_for_cov, t: Target, out: Path, versions: tuple[int, ...] | None = None) -> int:
    """Assemble and link; `text_for_cov(cov)` gives the module text for a code object version.
    Returns the LLVM version used."""
    v = llvm_for(t, versions)
    with tempfile.TemporaryDirectory() as d:
        obj = Path(d) / "k.o"
        assemble(text_for_cov(cov_for(v)), t, v, obj)
        link(obj, out, v)
    return v
