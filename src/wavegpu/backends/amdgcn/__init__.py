"""The direct AMDGCN backend: a `.wbin` kernel to gfx90a/gfx942/gfx950 assembly (and, with
llvm-mc and ld.lld, a code object).

Pipeline (each stage one module):

1. `lift` (backends/lift.py): the structured tree;
2. `uniform`: which WAVE registers and predicates are uniform (SGPRs) or divergent (VGPRs);
3. `select` + `rows`: kernel IR over virtual registers (`ir`), EXEC-mask control flow, legal
   VALU operand forms, the ABI of `abi`;
4. `peephole`: `v_lshl_add_u32`/`v_lshl_or_b32` fusion of single-use shifts;
5. `regalloc`: CFG liveness, graph colouring (`codegen`), spilling to AGPRs / VGPR lanes;
6. `waitcnt`: `s_waitcnt` from a scoreboard of physical registers;
7. `hazards`: `s_nop` for the per-target hazard table (`target`);
8. `emit`: assembly text with the AMDHSA descriptor and metadata.

`isa.EMITTED` lists every mnemonic the backend can emit with its operand form.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ...errors import WaveError
from ...wbin.program import Kernel
from ..base import Rendered
from . import emit, hazards, peephole, regalloc, rows, waitcnt
from .select import Selector
from .target import ARCHES, MAX_SGPRS, MAX_VGPRS, WAVE, Target, target

__all__ = ["ARCHES", "AMDGCNRenderer", "Compiled", "compile_kernel"]


@dataclass
class Compiled:
    info: emit.KernelInfo
    mis: list
    spilled_vgprs: int
    spilled_sgprs: int


def compile_kernel(
    k: Kernel, t: Target, nargs: int | None = None, max_vgprs: int = MAX_VGPRS, max_sgprs: int = MAX_SGPRS
) -> Compiled:
    sel = Selector(k, t, nargs)
    mis = sel.run()
    mis = peephole.fuse(mis)
    alloc = regalloc.allocate(mis, max_vgprs, max_sgprs)
    mis = waitcnt.insert_waits(alloc.mis)
    mis = hazards.mitigate(mis, t)
    if k.local_memory > t.lds_bytes:
        raise WaveError(f"kernel {k.name}: {k.local_memory} B of local memory; {t.name} has {t.lds_bytes}")
    wg = k.workgroup_size
    info = emit.KernelInfo(
        k.name,
        sel.nargs,
        k.local_memory,
        alloc.vgprs,
        alloc.sgprs,
        alloc.agprs,
        sel.wg_sgpr,
        sel.workitem_dims,
        wg[0] * wg[1] * wg[2] if wg else 1024,
    )
    return Compiled(info, mis, alloc.spilled_v, alloc.spilled_s)


class AMDGCNRenderer:
    """The `Renderer` of the amdgcn target (backends/base.py) for one architecture."""

    def __init__(
        self, arch: str | None = None, cov: int = 5, max_vgprs: int = MAX_VGPRS, max_sgprs: int = MAX_SGPRS
    ) -> None:
        self.t = target(arch)
        self.cov = cov
        self.max_vgprs = max_vgprs
        self.max_sgprs = max_sgprs

    def _check_width(self, wave_width: int | None) -> None:
        if wave_width not in (None, WAVE):
            raise WaveError(
                f"the amdgcn backend emits wave64 code for {self.t.name}; wave width {wave_width} is not "
                f"supported (translate with --wave-width 64; wave32 is an RDNA mode this backend does not target)"
            )

    def compile(self, k: Kernel, nargs: int | None = None) -> Compiled:
        return compile_kernel(k, self.t, nargs, self.max_vgprs, self.max_sgprs)

    def render(self, k: Kernel, wave_width: int | None = WAVE, nargs: int | None = None) -> Rendered:
        self._check_width(wave_width)
        c = self.compile(k, nargs)
        return Rendered(emit.module(self.t, [(c.info, c.mis)], self.cov), k.name, WAVE)

    def render_module(self, kernels: Sequence[Kernel], wave_width: int | None = WAVE) -> str:
        self._check_width(wave_width)
        bodies = []
        for k in kernels:
            c = self.compile(k)
            bodies.append((c.info, c.mis))
        return emit.module(self.t, bodies, self.cov)

    def coverage(self) -> dict[str, str]:
        return rows.coverage()
