"""Vendor backends: lift a .wbin kernel and render it for a target (registry: name -> renderer)."""

from __future__ import annotations

from ..errors import WaveError
from ..wbin.program import Kernel, Program
from . import ptx
from .base import Backend, Renderer
from .cstyle import CUDA, HIP, SYCL, CRenderer, Metal, OpenCL, Rendered

TARGETS = {"opencl": OpenCL, "cuda": CUDA, "hip": HIP, "sycl": SYCL, "metal": Metal}  # the C-family dialects


def _c(dialect: type) -> Backend:
    return Backend(lambda arch: CRenderer(dialect()))


# Target name -> its backend: the only place a new backend is plugged in.
BACKENDS: dict[str, Backend] = {
    **{name: _c(d) for name, d in TARGETS.items()},
    "ptx": Backend(lambda arch: ptx.PTXRenderer(arch=arch or ptx.ARCHES[0]), ptx.ARCHES),
}
NAMES = tuple(BACKENDS)  # every target `render` accepts
PLANNED = ("amdgcn",)


def renderer(target: str, arch: str | None = None) -> Renderer:
    """The renderer for `target` (and `arch`, for the targets that pick one)."""
    if arch is not None and not (target in BACKENDS and BACKENDS[target].arches):
        takes = " and ".join(n for n, b in BACKENDS.items() if b.arches)
        raise WaveError(f"an architecture (--arch {arch}) applies to the {takes} target only, not {target}")
    if target not in BACKENDS:
        if target in PLANNED:
            raise WaveError(f"the {target} backend is not available yet (available: {', '.join(NAMES)})")
        raise WaveError(f"unknown target {target!r} (available: {', '.join(NAMES)})")
    return BACKENDS[target].make(arch)


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
    return renderer(target, arch).render(k, wave_width, nargs)


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
    return renderer(target, arch).render_module(list(prog.kernels), wave_width)


__all__ = ["BACKENDS", "NAMES", "PLANNED", "TARGETS", "Backend", "Renderer", "render", "renderer", "translate"]
