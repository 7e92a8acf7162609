"""A program's kernels as one AMDGPU code object (`.hsaco`): our assembly, assembled by
llvm-mc and linked by ld.lld of the newest LLVM that knows the processor (toolchain.py)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from ...wbin.program import Kernel, Program
from . import toolchain
from .target import target


def code_object(
    prog: Program | Kernel, kernel: int | str | None = None, arch: str | None = None, wave_width: int | None = None
) -> bytes:
    from . import AMDGCNRenderer

    if isinstance(prog, Kernel):
        kernels = [prog]
    elif kernel is not None:
        kernels = [prog.kernel(kernel)]
    else:
        kernels = list(prog.kernels)
    t = target(arch)

    def text(cov: int) -> str:
        return AMDGCNRenderer(t.name, cov=cov).render_module(kernels, 64 if wave_width is None else wave_width)

    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "k.hsaco"
        toolchain.hsaco(text, t, out)
        return out.read_bytes()
