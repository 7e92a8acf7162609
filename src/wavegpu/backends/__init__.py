"""Vendor backends: lift a .wbin kernel and render it for a target (registry: name -> renderer)."""

from __future__ import annotations

from ..errors import WaveError
from ..wbin.program import Kernel, Program
from . import amdgcn, ptx
from .base import Backend, Renderer
from .cstyle import CUDA, HIP, SYCL, CRenderer, Metal, OpenCL, Rendered

TARGETS = {"opencl": OpenCL, "cuda": CUDA, "hip": HIP, "sycl": SYCL, "metal": Metal}  # the C-family dialects


def _c(dialect: type) -> Backend:
    return Backend(lambda arch: CRenderer(dialect()))


# Target name -> its backend: the only place a new backend is plugged in.
BACKENDS: dict[str, Backend] = {
    **{name: _c(d) for name, d in TARGETS.items()},
    "ptx": Backend(lambda arch: ptx.PTXRenderer(arch=arch or ptx.ARCHES[0]), ptx.ARCHES),
    "amdgcn": Backend(lambda arch: amdgcn.AMDGCNRenderer(arch or amdgcn.ARCHES[1]), amdgcn.ARCHES),
}
NAMES = tuple(BACKENDS)  # every target `render` accepts
PLANNED: tuple[str, ...] = ()
# The wave width a target renders when none is given (amdgcn emits wave64 only).
DEFAULT_WIDTH = {"amdgcn": 64}


def renderer(target: str, arch: str | None = None, mma: str | None = None) -> Renderer:
    """The renderer for `target` (and `arch`, for the targets that pick one). `mma`: how
    mma.m16n8k8 renders, "exact" (bit for bit the emulator's) or "tensor" (the tensor cores,
    ptx only: docs/backends.md, MMA); None: the ptx.mma_path in effect ("exact" by default)."""
    if mma is not None:
        ptx.check_mma_path(mma)
        if mma != "exact" and target != "ptx":
            raise WaveError(
                f"mma={mma!r} applies to the ptx target only; the {target} target renders mma exactly (mma='exact')"
            )
    if arch is not None and not (target in BACKENDS and BACKENDS[target].arches):
        takes = " and ".join(n for n, b in BACKENDS.items() if b.arches)
        raise WaveError(f"an architecture (--arch {arch}) applies to the {takes} target only, not {target}")
    if target not in BACKENDS:
        if target in PLANNED:
            raise WaveError(f"the {target} backend is not available yet (available: {', '.join(NAMES)})")
        raise WaveError(f"unknown target {target!r} (available: {', '.join(NAMES)})")
    r = BACKENDS[target].make(arch)
    if mma is not None and isinstance(r, ptx.PTXRenderer):
        r.mma_policy = mma
    return r


def render(
    prog: Program | Kernel,
    target: str,
    kernel: int | str = 0,
    wave_width: int | None = None,
    nargs: int | None = None,
    arch: str | None = None,
    mma: str | None = None,
) -> Rendered:
    """One kernel for one target. `arch` picks the PTX `.target` (sm_75 by default; newer GPUs
    JIT it) or the AMDGCN processor (gfx942 by default, gfx90a, gfx950); the other targets have
    no architecture to pick. `wave_width` None: 64 for amdgcn, 32 for the others. `mma`: "exact"
    or "tensor" (ptx only), see `renderer`."""
    k = prog if isinstance(prog, Kernel) else prog.kernel(kernel)
    w = wave_width if wave_width is not None else DEFAULT_WIDTH.get(target, 32)
    return renderer(target, arch, mma).render(k, w, nargs)


def translate(
    prog: Program | Kernel,
    target: str,
    kernel: int | str | None = None,
    wave_width: int | None = None,
    arch: str | None = None,
    mma: str | None = None,
) -> str:
    """Vendor source (or assembly text) for one kernel, or every kernel of the program when kernel
    is None. `arch`: the PTX or AMDGCN architecture; `wave_width` None: the target's default;
    `mma`: "exact" (bit for bit the emulator's; every target) or "tensor" (the tensor cores'
    mma.sync, ptx only); None: the ptx.mma_path in effect, "exact" by default."""
    if isinstance(prog, Kernel):
        return render(prog, target, 0, wave_width, arch=arch, mma=mma).source
    if kernel is not None:
        return render(prog, target, kernel, wave_width, arch=arch, mma=mma).source
    w = wave_width if wave_width is not None else DEFAULT_WIDTH.get(target, 32)
    return renderer(target, arch, mma).render_module(list(prog.kernels), w)


__all__ = ["BACKENDS", "NAMES", "PLANNED", "TARGETS", "Backend", "Renderer", "render", "renderer", "translate"]
