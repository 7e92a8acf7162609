"""Assembly text: the kernel's code, its AMDHSA kernel descriptor and the code-object metadata.

The directives follow AMDGCN.md section 6: `.amdhsa_next_free_vgpr` covers the arch VGPRs plus
the AGPRs (unified file) and `.amdhsa_accum_offset` (required; a multiple of 4 in [4, 256]) is
where the AGPRs start; `.amdhsa_next_free_sgpr` is our count (the assembler adds VCC and its
reservations itself, and rejects more than 102); f32 and f16/f64 denormals are kept (mode 3),
IEEE mode and DX10 clamp are the hardware defaults. Argument names carry `!str` (LLVM 19 and
older type YAML scalars by their content). The code object version is pinned to 5 for LLVM 19
and newer (the `.amdhsa_code_object_version` directive); LLVM 14 gets
`--amdhsa-code-object-version=4` on its command line instead (toolchain.py) and the `[1, 1]`
metadata version, so `emit(..., cov=4)` leaves the directive out.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import abi
from .ir import MI
from .target import WAVE, Target


@dataclass
class KernelInfo:
    name: str
    nargs: int
    lds: int
    vgprs: int
    sgprs: int
    agprs: int
    workgroup_ids: dict[int, int]
    workitem_dims: int
    max_workgroup: int

    @property
    def accum_offset(self) -> int:
        return max(4, (self.vgprs + 3) // 4 * 4)

    @property
    def next_free_vgpr(self) -> int:
        total = self.accum_offset + self.agprs if self.agprs else self.vgprs
        return max(1, (total + 7) // 8 * 8) if self.agprs else max(1, total)

    @property
    def next_free_sgpr(self) -> int:
        return max(self.sgprs, abi.USER_SGPRS + len(self.workgroup_ids))


def symbol(name: str) -> str:
    """A kernel name as an assembler symbol (WAVE names are identifiers already)."""
    return name


def kernel_text(t: Target, info: KernelInfo, mis: list[MI]) -> str:
    lines = [
        "  .text",
        f"  .globl {info.name}",
        "  .p2align 8",
        f"  .type {info.name},@function",
        f"{info.name}:",
    ]
    lines += [mi.text() for mi in mis]
    lines += [f".Lfunc_end_{info.name}:", f"  .size {info.name}, .Lfunc_end_{info.name}-{info.name}", ""]
    d = [
        "  .rodata",
        "  .p2align 6",
        f"  .amdhsa_kernel {info.name}",
        f"    .amdhsa_user_sgpr_count {abi.USER_SGPRS}",
        "    .amdhsa_user_sgpr_kernarg_segment_ptr 1",
        f"    .amdhsa_kernarg_size {abi.kernarg_size(info.nargs)}",
        f"    .amdhsa_group_segment_fixed_size {info.lds}",
        "    .amdhsa_private_segment_fixed_size 0",
    ]
    for dim, axis in enumerate("xyz"):
        d.append(f"    .amdhsa_system_sgpr_workgroup_id_{axis} {1 if dim in info.workgroup_ids else 0}")
    d += [
        f"    .amdhsa_system_vgpr_workitem_id {info.workitem_dims}",
        f"    .amdhsa_next_free_vgpr {info.next_free_vgpr}",
        f"    .amdhsa_next_free_sgpr {info.next_free_sgpr}",
        f"    .amdhsa_accum_offset {info.accum_offset}",
        "    .amdhsa_float_denorm_mode_32 3",
        "    .amdhsa_float_denorm_mode_16_64 3",
        "  .end_amdhsa_kernel",
        "  .text",
        "",
    ]
    return "\n".join(lines + d)


def metadata(infos: list[KernelInfo], cov: int) -> str:
    out = [
        "  .amdgpu_metadata",
        "---",
        f"amdhsa.version: [ 1, {2 if cov >= 5 else 1} ]",
        "amdhsa.kernels:",
    ]
    for k in infos:
        out += [
            f"  - .name: {k.name}",
            f"    .symbol: {k.name}.kd",
            f"    .kernarg_segment_size: {abi.kernarg_size(k.nargs)}",
            "    .kernarg_segment_align: 8",
            f"    .group_segment_fixed_size: {k.lds}",
            "    .private_segment_fixed_size: 0",
            f"    .wavefront_size: {WAVE}",
            f"    .sgpr_count: {k.next_free_sgpr}",
            f"    .vgpr_count: {k.next_free_vgpr}",
            f"    .agpr_count: {k.agprs}",
            f"    .max_flat_workgroup_size: {k.max_workgroup}",
            "    .args:",
            "      - { .name: !str mem, .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global }",
            "      - { .name: !str cmem, .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: constant }",
        ]
        for i in range(k.nargs):
            out.append(
                f"      - {{ .name: !str a{i}, .size: 4, .offset: {abi.preset_offset(i)}, .value_kind: by_value }}"
            )
        for j, g in enumerate(abi.GRID_ARGS):
            nm = g.replace(".", "_")
            out.append(
                f"      - {{ .name: !str {nm}, .size: 4, .offset: {abi.grid_offset(k.nargs, j)}, .value_kind: by_value }}"
            )
    out += ["...", "  .end_amdgpu_metadata", ""]
    return "\n".join(out)


def module(t: Target, bodies: list[tuple[KernelInfo, list[MI]]], cov: int = 5) -> str:
    head = [f'  .amdgcn_target "amdgcn-amd-amdhsa--{t.name}"']
    if cov >= 5:
        head.insert(0, f"  .amdhsa_code_object_version {cov}")
    text = "\n".join(head) + "\n" + "".join(kernel_text(t, i, m) for i, m in bodies)
    return text + metadata([i for i, _ in bodies], cov)
