"""An interpreter of the AMDGCN assembly our backend emits (`wg.launch(..., device="amdgcn-sim",
arch=...)`): the text is parsed (parse.py), each workgroup's wave64 waves run with their SGPRs,
VGPRs, AGPRs, EXEC/VCC/SCC/M0, the workgroup's LDS and the dispatch's memory (machine.py,
semantics.py, execute.py), memory operations complete asynchronously (a register read before
the `s_waitcnt` that covers its load is an error) and the hazards of the ISA documents (the
interpreter's own table, hazards.py) are checked on the executed instruction stream (a shorter
distance is an error).

The dispatch follows the backend's ABI (backends/amdgcn/abi.py) and the module's own descriptor
and metadata: the kernarg segment is built from the metadata's `.args` (mem and cmem: the bases
of global and constant memory; a<i>: register presets; ntid/nctaid: the launch shape), `s[0:1]`
points at it, the enabled workgroup ids follow densely from `.amdhsa_user_sgpr_count`, and `v0`
holds the packed work-item ids.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...backends.amdgcn.ir import Neg, Phys
from ...backends.amdgcn.target import target
from .execute import BRANCHES, Ctx, H, Ulp, branch_target
from .machine import JUNK, Memory, Segment, W, Wave
from .parse import AmdgcnSimError, KernelCode, parse_module

__all__ = ["CMEM_BASE", "KERNARG_BASE", "MEM_BASE", "AmdgcnSimError", "parse_module", "run"]

MEM_BASE = 0x0000_1000_0000_0000
CMEM_BASE = 0x0000_2000_0000_0000
KERNARG_BASE = 0x0000_3000_0000_0000
DEFAULT_BUDGET = 50_000_000  # instructions per wave


def kernarg(k: KernelCode, grid: tuple[int, int, int], wg: tuple[int, int, int], bits: Sequence[int]) -> np.ndarray:
    size = k.directives.get("kernarg_size")
    if size is None:
        raise AmdgcnSimError(f"kernel {k.name}: no .amdhsa_kernarg_size")
    seg = np.zeros(max(size, 8), np.uint8)
    grid_args = {
        "ntid_x": wg[0],
        "ntid_y": wg[1],
        "ntid_z": wg[2],
        "nctaid_x": grid[0],
        "nctaid_y": grid[1],
        "nctaid_z": grid[2],
    }
    for name, off, n in k.args:
        if name == "mem":
            v = MEM_BASE
        elif name == "cmem":
            v = CMEM_BASE
        elif name in grid_args:
            v = grid_args[name]
        elif name.startswith("a") and name[1:].isdigit():
            i = int(name[1:])
            v = bits[i] if i < len(bits) else 0
        else:
            raise AmdgcnSimError(f"kernel {k.name}: kernel argument {name!r} is not one of the backend's ABI")
        if off + n > seg.size:
            raise AmdgcnSimError(f"kernel {k.name}: argument {name} at {off} beyond .amdhsa_kernarg_size {size}")
        seg[off : off + n] = np.frombuffer(int(v & ((1 << (8 * n)) - 1)).to_bytes(n, "little"), np.uint8)
    return seg


MAX_SGPRS = 102  # the most `.amdhsa_next_free_sgpr` can say on gfx9 (VCC and the rest are extra)


def check_registers(k: KernelCode, vgprs: int, agprs: int, sgprs: int = MAX_SGPRS) -> None:
    """Every register operand within what the descriptor allocates (VGPRs below
    `.amdhsa_next_free_vgpr` / `.amdhsa_accum_offset`, AGPRs after it, SGPRs below
    `.amdhsa_next_free_sgpr`: the hardware grants only those, so a higher one is another wave's)."""
    limit = {"v": vgprs, "a": agprs, "s": sgprs}
    what = {"v": "VGPRs (.amdhsa_next_free_vgpr)", "a": "AGPRs", "s": "SGPRs (.amdhsa_next_free_sgpr)"}
    for pc, inst in enumerate(k.insts):
        for o in inst.ops:
            r = o.o if isinstance(o, Neg) else o
            if isinstance(r, Phys) and r.idx + r.size > limit[r.rc]:
                raise AmdgcnSimError(f"{inst.where(k.name, pc)}: {r} is beyond the kernel's {limit[r.rc]} {what[r.rc]}")


def run(
    text: str,
    entry: str,
    grid: tuple[int, int, int],
    wg: tuple[int, int, int],
    memory: np.ndarray,
    constants: np.ndarray,
    bits: Sequence[int],
    arch: str | None = None,
    max_instructions: int = DEFAULT_BUDGET,
    approx: str | None = None,
    seed: int = 0,
) -> np.ndarray:
    """Run kernel `entry` of the assembly module `text`; returns global memory afterwards
    (`memory`, a uint8 array, is updated in place and returned).

    `approx` is a test mode for the hardware's approximate instructions (`v_rcp/v_rsq/v_sqrt/
    v_exp/v_log_f32`, `v_rcp_iflag_f32`, `v_rcp/v_rsq_f64`, 1 ulp by the ISA documents): None
    models them correctly rounded; "down", "up" or "random" (seeded by `seed`) move each result
    by one ulp (execute.Ulp), to show which of the backend's sequences stay exact."""
    ulp = Ulp(approx, seed) if approx is not None else None
    t = target(arch)
    kernels = parse_module(text)
    if entry not in kernels:
        raise AmdgcnSimError(f"no kernel {entry!r} in the module (kernels: {', '.join(kernels)})")
    k = kernels[entry]
    d = k.directives
    lds_size = d.get("group_segment_fixed_size", 0)
    if lds_size > t.lds_bytes:
        raise AmdgcnSimError(f"kernel {k.name}: {lds_size} B of LDS; {t.name} has {t.lds_bytes}")
    threads = wg[0] * wg[1] * wg[2]
    if threads > 1024:
        raise AmdgcnSimError(f"a workgroup of {threads} work-items; the hardware takes at most 1024")
    nfv = d.get("next_free_vgpr", 0)
    acc = d.get("accum_offset", 4)
    arch_v = min(nfv, acc) if nfv > acc else nfv
    n_agpr = nfv - acc if nfv > acc else 0
    nfs = d.get("next_free_sgpr")
    if nfs is None:
        raise AmdgcnSimError(f"kernel {k.name}: no .amdhsa_next_free_sgpr")
    if not 0 <= nfs <= MAX_SGPRS:
        raise AmdgcnSimError(f"kernel {k.name}: .amdhsa_next_free_sgpr {nfs} is outside 0..{MAX_SGPRS}")
    check_registers(k, max(arch_v, 1), n_agpr, nfs)
    ka = kernarg(k, grid, wg, bits)
    mem = Memory(
        [
            Segment("global", MEM_BASE, memory),
            Segment("constant", CMEM_BASE, constants),
            Segment("kernarg", KERNARG_BASE, ka),
        ]
    )
    user = d.get("user_sgpr_count", 2)
    if d.get("user_sgpr_kernarg_segment_ptr", 0) != 1 or user != 2:
        raise AmdgcnSimError(
            f"kernel {k.name}: the interpreter launches kernels whose only user SGPRs are the kernarg pointer"
        )
    ids_on = [d.get(f"system_sgpr_workgroup_id_{a}", 1 if a == "x" else 0) for a in "xyz"]
    item_dims = d.get("system_vgpr_workitem_id", 0)
    nwaves = (threads + W - 1) // W
    flat = np.arange(nwaves * W)
    tx, ty, tz = flat % wg[0], (flat // wg[0]) % wg[1], flat // (wg[0] * wg[1])
    packed = (tx | ((ty if item_dims >= 1 else 0) << 10) | ((tz if item_dims >= 2 else 0) << 20)).astype(np.uint32)
    hz_cache: dict[tuple[int, int], tuple[int, str]] = {}
    for gz in range(grid[2]):
        for gy in range(grid[1]):
            for gx in range(grid[0]):
                lds = np.zeros(lds_size, np.uint8)
                ctx = Ctx(mem, lds, ulp)
                waves = []
                for wi in range(nwaves):
                    live = min(W, threads - wi * W)
                    w = Wave(k, t, max(arch_v, 1), (1 << live) - 1)
                    if n_agpr:
                        w.a = np.full((n_agpr, W), JUNK, dtype=np.uint32)
                    w.s[0], w.s[1] = KERNARG_BASE & 0xFFFFFFFF, KERNARG_BASE >> 32
                    nxt = user
                    for dim, g in enumerate((gx, gy, gz)):
                        if ids_on[dim]:
                            w.s[nxt] = g
                            nxt += 1
                    w.v[0] = np.where(np.arange(W) < live, packed[wi * W : wi * W + W], np.uint32(JUNK))
                    waves.append(w)
                _run_group(waves, ctx, hz_cache, max_instructions)
    return memory


def _run_group(waves: list[Wave], ctx: Ctx, hz: dict[tuple[int, int], tuple[int, str]], budget: int) -> None:
    while True:
        for w in waves:
            if not w.done and not w.at_barrier:
                _run_wave(w, ctx, hz, budget)
        live = [w for w in waves if not w.done]
        if not live:
            return
        for w in live:  # every live wave waits at the barrier: release them
            w.at_barrier = False


def _run_wave(w: Wave, ctx: Ctx, hz: dict[tuple[int, int], tuple[int, str]], budget: int) -> None:
    insts = w.k.insts
    n = len(insts)
    while True:
        if w.pc >= n:
            raise AmdgcnSimError(f"kernel {w.k.name}: execution ran past the last instruction (no s_endpgm)")
        inst = insts[w.pc]
        w.executed += 1
        if w.executed > budget:
            raise AmdgcnSimError(f"kernel {w.k.name}: more than {budget} instructions in one wave (an endless loop?)")
        w.check_operands(inst)
        w.hazard(inst, hz)
        b = inst.base
        if b in BRANCHES:
            tgt = branch_target(w, inst)
            w.pc = w.pc + 1 if tgt is None else tgt
            continue
        if b == "s_waitcnt":
            w.waitcnt(inst.mods)
        elif b == "s_endpgm":
            w.done = True
            return
        elif b == "s_barrier":
            w.barrier_check(inst)
            w.at_barrier = True
            w.pc += 1
            return
        elif b != "s_nop":
            h = H.get(b)
            if h is None:
                raise AmdgcnSimError(f"{w.where(inst)}: {inst.op} is not modelled by the interpreter")
            h(w, inst, ctx)
        w.pc += 1
