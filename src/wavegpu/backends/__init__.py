"""Vendor backends: lift a .wbin kernel and render it for a target (registry: name -> renderer)."""

from __future__ import annotations

from ..errors import WaveError
from ..wbin.program import Kernel, Program
from . import ptx
from .cstyle import CUDA, HIP, SYCL, CRenderer, Metal, OpenCL, Rendered

TARGETS = {"opencl": OpenCL, "cuda": CUDA, "hip": HIP, "sycl": SYCL, "metal": Metal}  # the C-family dialects
NAMES = (*TARGETS, "ptx")  # every target `render` accepts
PLANNED = ("amdgcn",)


def render(
    prog: Program | Kernel,
    target: str,
    kernel: int | str = 0,
    wave_width: int = 32,
    nargs: int | None = None,
    arch: str | None = None,
) -> Rendered:
    """One kernel for one target. `arch` picks the PTX `.target` (sm_75 by default; newer GPUs
    JIT it); the other targets have no architecture to pick."""
    k = prog if isinstance(prog, Kernel) else prog.kernel(kernel)
    if arch is not None and target != "ptx":
        raise WaveError(f"an architecture (--arch {arch}) applies to the ptx target only, not {target}")
    if target == "ptx":
        return ptx.PTXRenderer(arch=arch or ptx.ARCHES[0]).render(k, wave_width, nargs)
    if target not in TARGETS:
        if target in PLANNED:
            raise WaveError(f"the {target} backend is not available yet (available: {', '.join(NAMES)})")
        raise WaveError(f"unknown target {target!r} (available: {', '.join(NAMES)})")
    return CRenderer(TARGETS[target]()).render(k, wave_width, nargs)


def translate(
    prog: Program | Kernel,
    target: str,
    kernel: int | str | None = None,
    wave_width: int = 32,
    arch: str | None = None,
) -> str:
    """Vendor source for one kernel (or every kernel of the program when kernel is None)."""
    if isinstance(prog, Kernel):
        return render(prog, target, 0, wave_width, arch=arch).source
    if kernel is not None:
        return render(prog, target, kernel, wave_width, arch=arch).source
    if target == "ptx":  # one module: one header, the helpers once
        return ptx.render_module(list(prog.kernels), arch=arch or ptx.ARCHES[0], wave_width=wave_width)
    parts = [render(prog, target, i, wave_width, arch=arch).source for i in range(len(prog.kernels))]
    prelude = TARGETS[target]().prelude()  # once: every kernel's source starts with it
    return prelude + "\n".join(p[len(prelude) :] for p in parts)


__all__ = ["NAMES", "PLANNED", "TARGETS", "render", "translate"]
