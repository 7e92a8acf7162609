"""The kernel ABI of the AMDGCN backend: what the hardware and the launcher put where.

This module is the one place these conventions live; the selector, the emitter and any runtime
or interpreter that launches our code objects read them from here.

Kernel arguments (the kernarg segment, 8-byte aligned, pointed to by `s[0:1]`), DESIGN section 4:

    offset 0   mem     u64  device-memory base: WAVE address A is byte mem + A (global memory)
    offset 8   cmem    u64  constant-memory base: WAVE constant address A is byte cmem + A
    offset 16  a0..    u32  one per register preset (r0, r1, ...: buffer addresses, scalar bits)
    then       ntid.x, ntid.y, ntid.z, nctaid.x, nctaid.y, nctaid.z   u32 each (`GRID_ARGS`)

The presets are the kernel's parameters, or, for a kernel that declares none, the registers it
reads before writing them (`lift.preset_count`, as in every backend; `render(..., nargs=)`
overrides). The workgroup and grid sizes are explicit arguments (not read from the HSA dispatch packet),
so a launcher fills them like any other argument; a new argument value never needs a new
translation.

Registers at wave start (`.amdhsa_*` directives written by emit.py):

* `s[0:1]`: the kernarg segment pointer (the only user SGPR: `.amdhsa_user_sgpr_count 2`).
* `s2, s3, s4`: workgroup ids x, y, z, *densely* after the user SGPRs and only those enabled.
  We always enable x, and y (z) only when the kernel reads `%ctaid.y` (`%ctaid.z`); with y
  disabled z arrives in s3 (`workgroup_id_sgprs` computes the positions).
* `v0`: the work-item ids, packed: x in bits 9:0, y in 19:10, z in 29:20
  (`.amdhsa_system_vgpr_workitem_id` 0, 1 or 2 = the highest dimension the kernel reads).
* EXEC holds the lanes of the wave that exist (a partial last wave has fewer).

Memory access forms:

* global: `global_load_* vdst, vaddr, s[mem:mem+1] offset:imm` (the saddr form: the 32-bit VGPR
  `vaddr` is the WAVE address, zero-extended; `imm` a folded non-negative offset below 4096);
* constant: the same form on `cmem`, or `s_load_dword*` from `cmem` for uniform addresses;
* local: `ds_*` with the WAVE local address in a VGPR and a folded offset below 65536.

Lane id = `v_mbcnt_lo_u32_b32` / `v_mbcnt_hi_u32_b32` of all ones (equal to the flat work-item
id modulo 64, as the hardware packs work-items into waves in x, y, z order); the wave index
is the flat id divided by 64.
"""

from __future__ import annotations

KERNARG_PTR = 0  # s[0:1]
USER_SGPRS = 2
MEM_OFFSET = 0
CMEM_OFFSET = 8
PRESET_OFFSET = 16
GRID_ARGS = ("ntid.x", "ntid.y", "ntid.z", "nctaid.x", "nctaid.y", "nctaid.z")
WORKITEM_VGPR = 0  # v0: packed work-item ids
WORKITEM_BITS = 10


def preset_offset(i: int) -> int:
    """Byte offset of register preset a<i> in the kernarg segment."""
    return PRESET_OFFSET + 4 * i


def grid_offset(nargs: int, which: int) -> int:
    """Byte offset of GRID_ARGS[which] for a kernel with `nargs` presets."""
    return PRESET_OFFSET + 4 * nargs + 4 * which


def kernarg_size(nargs: int) -> int:
    return (grid_offset(nargs, len(GRID_ARGS)) + 7) // 8 * 8


def workgroup_id_sgprs(used: tuple[bool, bool, bool]) -> dict[int, int]:
    """Dimension -> SGPR holding that workgroup id. x is always enabled (LLVM's default bit);
    y and z only when used, assigned densely after the user SGPRs."""
    out: dict[int, int] = {}
    nxt = USER_SGPRS
    for dim in range(3):
        if dim == 0 or used[dim]:
            out[dim] = nxt
            nxt += 1
    return out


def first_free_sgpr(used: tuple[bool, bool, bool]) -> int:
    return USER_SGPRS + len(workgroup_id_sgprs(used))
