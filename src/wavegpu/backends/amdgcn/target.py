"""The target table: what differs between gfx90a, gfx942 and gfx950 (AMDGCN.md section 8.1).

Every target here is wave64 with the unified VGPR/AGPR file (up to 512, arch VGPRs first, then
AGPRs from `accum_offset`), VGPR allocation granule 8, at most 102 SGPRs in
`.amdhsa_next_free_sgpr`, even-aligned VGPR tuples and 4-aligned SGPR quads.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import WaveError


@dataclass(frozen=True)
class Target:
    name: str
    lds_bytes: int  # local memory per workgroup
    gfx940: bool  # the gfx940 family: sc0/sc1/nt cache bits, more VALU hazards, v_lshl_add_u64
    arch_flat_scratch: bool  # architected flat scratch (directive set of AMDGCN.md table 6.1)
    llvm: tuple[int, ...]  # LLVM releases (newest first) whose llvm-mc knows this processor

    @property
    def glc(self) -> str:
        """The cache bit that makes an atomic return the old value (and a load bypass L1)."""
        return "sc0" if self.gfx940 else "glc"

    def acquire(self, scope: str) -> list[str]:
        """Cache invalidation after a load-acquire at `scope` (LLVM's AMDGPU memory model)."""
        if scope == "workgroup":
            return []  # one CU: the L1 is shared by the workgroup's waves (threadgroup split off)
        return ["buffer_inv sc1"] if self.gfx940 else ["buffer_wbinvl1_vol"]

    def release(self, scope: str) -> list[str]:
        """Write-back before a store-release at `scope`."""
        if scope == "workgroup" or not self.gfx940:
            return []  # gfx90a's L2 is coherent for the device; its L1 is write-through
        return ["buffer_wbl2 sc1"]


TARGETS: dict[str, Target] = {
    "gfx90a": Target("gfx90a", 65536, False, False, (22, 19, 14)),
    "gfx942": Target("gfx942", 65536, True, True, (22, 19)),
    "gfx950": Target("gfx950", 163840, True, True, (22,)),
}
ARCHES = tuple(TARGETS)

MAX_SGPRS = 102  # .amdhsa_next_free_sgpr above 102 is rejected by the assembler
MAX_VGPRS = 256  # architectural VGPRs; AGPRs come after them (spill space here)
MAX_AGPRS = 256
WAVE = 64


def target(arch: str | None) -> Target:
    if arch is None:
        return TARGETS["gfx942"]
    if arch not in TARGETS:
        raise WaveError(f"unknown AMDGCN architecture {arch!r} (available: {', '.join(ARCHES)})")
    return TARGETS[arch]
