"""The AMDGCN interpreter's machine: wave64 state, memory, asynchronous memory counters, the
dynamic hazard check, and the execution of one workgroup's waves with `s_barrier`.

Memory operations complete asynchronously. Each VMEM (global) operation takes a place in the
wave's in-order `vmcnt` queue and each LDS or SMEM operation in its `lgkmcnt` queue; the
registers a load (or a returning atomic) writes stay *pending* until an `s_waitcnt` guarantees
its completion: `vmcnt(N)` completes all but the N newest VMEM operations; `lgkmcnt(N)`
completes an LDS operation when fewer than N+1 LDS operations are at or after it in issue order
(LDS returns in order) and a scalar load only at `lgkmcnt(0)` (SMEM returns out of order).
Reading or overwriting a pending register is an error, as is an `s_barrier` while a store or
atomic of the wave is still counted (its data would not be visible to the workgroup).
Memory itself is read and written when the operation issues; only its register results wait.

Hazards: every executed instruction is checked against the wave's last instructions with the
interpreter's own table of the ISA documents' rules (hazards.py, independent of the backend's
table); fewer wait states between producer and consumer than a rule asks for is an error.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...backends.amdgcn.ir import Imm, Label, Neg, Phys, Raw, Special
from ...backends.amdgcn.target import Target
from . import hazards as HZ
from .parse import AmdgcnSimError, FConst, Inst, KernelCode

W = 64
U32, U64 = np.uint32, np.uint64
MASK64 = (1 << 64) - 1
LANES = np.arange(W, dtype=np.int64)
JUNK = 0xBADC0DE5  # registers the ABI does not initialise


class Segment:
    def __init__(self, name: str, base: int, data: np.ndarray) -> None:
        self.name, self.base, self.data = name, base, data


class Memory:
    """The flat address space of a dispatch: global memory, constant memory and the kernarg segment
    at the bases the launcher wrote into the kernel arguments."""

    def __init__(self, segments: list[Segment]) -> None:
        self.segments = segments

    def locate(self, addr: np.ndarray, n: int, where: str) -> tuple[Segment, np.ndarray]:
        a = np.asarray(addr, dtype=np.int64)
        for seg in self.segments:
            lo = a.min()
            if seg.base <= lo and a.max() + n <= seg.base + seg.data.size:
                return seg, a - seg.base
        bad = [int(x) for x in a if not any(s.base <= x and x + n <= s.base + s.data.size for s in self.segments)]
        raise AmdgcnSimError(
            f"{where}: access of {n} bytes at address {hex(bad[0] if bad else int(a[0]))} outside every buffer"
        )

    def load(self, addr: np.ndarray, n: int, where: str) -> np.ndarray:
        """n bytes (1, 2, 4, 8, 16) little-endian per address -> uint32 dwords [ndw, lanes]."""
        seg, off = self.locate(addr, n, where)
        return gather(seg.data, off, n)

    def store(self, addr: np.ndarray, n: int, dwords: np.ndarray, where: str) -> None:
        seg, off = self.locate(addr, n, where)
        scatter(seg.data, off, n, dwords)


def gather(data: np.ndarray, off: np.ndarray, n: int) -> np.ndarray:
    ndw = max(1, n // 4)
    out = np.zeros((ndw, off.size), dtype=U32)
    for b in range(n):
        out[b // 4] |= data[off + b].astype(U32) << U32(8 * (b % 4))
    return out


def scatter(data: np.ndarray, off: np.ndarray, n: int, dwords: np.ndarray) -> None:
    for i in range(off.size):  # lane order: the highest lane's store to an address is the last
        for b in range(n):
            data[off[i] + b] = (int(dwords[b // 4][i]) >> (8 * (b % 4))) & 0xFF


class Pending:
    """An issued memory operation whose register results are not yet written."""

    __slots__ = ("inst", "pc", "smem", "stores", "units", "writes")

    def __init__(self, inst: Inst, pc: int, smem: bool, stores: bool) -> None:
        self.inst, self.pc, self.smem, self.stores = inst, pc, smem, stores
        self.writes: list[tuple[str, int, Any, int]] = []  # (class, index, value, lane mask)
        self.units: set[tuple[str, int]] = set()


def units_of(o: object) -> tuple[tuple[str, int], ...]:
    if isinstance(o, Neg):
        o = o.o
    if isinstance(o, Phys):
        return o.units()
    if isinstance(o, Special):
        return o.units()
    return ()


def reg_name(u: tuple[str, int]) -> str:
    c, i = u
    if c in ("v", "s", "a"):
        return f"{c}{i}"
    return c if c in ("scc", "m0") else f"{c}_{'lo' if i == 0 else 'hi'}"


class Wave:
    def __init__(self, k: KernelCode, t: Target, nvgpr: int, exec_mask: int) -> None:
        self.k, self.t = k, t
        self.v = np.full((max(nvgpr, 1), W), JUNK, dtype=U32)
        self.a = np.full((256, W), JUNK, dtype=U32)
        self.s = [JUNK] * 128
        self.exec = exec_mask
        self.vcc = 0
        self.scc = 0
        self.m0 = JUNK
        self.mode_round = 0  # MODE.FP_ROUND single-precision bits (0: nearest even, 3: toward zero)
        self.pc = 0
        self.done = False
        self.at_barrier = False
        self.queues: dict[str, list[Pending]] = {"vm": [], "lgkm": []}
        self.pending: dict[tuple[str, int], Pending] = {}
        self.history: list[Inst] = []  # most recent last (hazard distances)
        self.executed = 0

    # ---- errors --------------------------------------------------------------------------
    def where(self, inst: Inst) -> str:
        return inst.where(self.k.name, self.pc)

    def check_unit(self, inst: Inst, u: tuple[str, int], write: bool) -> None:
        p = self.pending.get(u)
        if p is not None:
            verb = "overwrites" if write else "reads"
            raise AmdgcnSimError(
                f"{self.where(inst)} {verb} {reg_name(u)} before the s_waitcnt that covers "
                f"`{p.inst.text}` (pc {p.pc}, line {p.inst.line}, {'vmcnt' if p.inst.counter == 'vm' else 'lgkmcnt'})"
            )

    def check_operands(self, inst: Inst) -> None:
        if not self.pending:
            return
        for j, o in enumerate(inst.ops):
            for u in units_of(o):
                self.check_unit(inst, u, j < inst.ndefs)
        if inst.base.startswith("v_div_fmas") or (inst.op == "v_cndmask_b32"):
            for u in (("vcc", 0), ("vcc", 1)):
                self.check_unit(inst, u, False)

    # ---- counters ------------------------------------------------------------------------
    def issue(self, p: Pending) -> None:
        c = p.inst.counter
        assert c is not None
        self.queues[c].append(p)
        for u in p.units:
            self.pending[u] = p

    def complete(self, p: Pending) -> None:
        for rc, idx, val, mask in p.writes:
            if rc == "v":
                self.v[idx] = np.where(lane_bits(mask), val, self.v[idx])
            elif rc == "s":
                self.s[idx] = int(val) & 0xFFFFFFFF
        for u in p.units:
            if self.pending.get(u) is p:
                del self.pending[u]

    def waitcnt(self, counts: dict[str, object]) -> None:
        if "vmcnt" in counts:
            n = int(counts["vmcnt"])  # type: ignore[call-overload]
            q = self.queues["vm"]
            while len(q) > n:
                self.complete(q.pop(0))
        if "lgkmcnt" in counts:
            n = int(counts["lgkmcnt"])  # type: ignore[call-overload]
            q = self.queues["lgkm"]
            keep: list[Pending] = []
            younger_lds = 0
            for p in reversed(q):
                # an LDS op is done once more than n ops are guaranteed to be at or after it;
                # only the LDS ops younger than it are ordered after it (SMEM may overtake)
                if p.smem:
                    done = n == 0
                else:
                    done = younger_lds + 1 > n
                    younger_lds += 1
                if not done:
                    keep.append(p)
            keep.reverse()
            for p in q:
                if p not in keep:
                    self.complete(p)
            self.queues["lgkm"] = keep

    def barrier_check(self, inst: Inst) -> None:
        for c in ("vm", "lgkm"):
            for p in self.queues[c]:
                if p.stores:
                    raise AmdgcnSimError(
                        f"{self.where(inst)}: s_barrier while `{p.inst.text}` (pc {p.pc}) is still counted on "
                        f"{'vmcnt' if c == 'vm' else 'lgkmcnt'}: its memory effect is not visible to the workgroup"
                    )

    # ---- hazards -------------------------------------------------------------------------
    def hazard(self, inst: Inst, cache: dict[tuple[int, int], tuple[int, str]]) -> None:
        dist = 0
        for p in reversed(self.history):
            if dist >= HZ.MAXDIST:
                break
            key = (id(p), id(inst))
            hit = cache.get(key)
            if hit is None:
                hit = cache[key] = HZ.required(self.t, p, inst)
            req, rule = hit
            if req > dist:
                raise AmdgcnSimError(
                    f"{self.where(inst)}: hazard: `{p.text}` (line {p.line}) "
                    f"needs {req} wait state(s) before it on {self.t.name}; there are {dist} (ISA rule {rule})"
                )
            dist += p.states
        self.history.append(inst)
        if len(self.history) > 8:
            del self.history[0]


def lane_bits(mask: int) -> np.ndarray:
    return ((np.uint64(mask) >> LANES.astype(U64)) & U64(1)).astype(bool)


def bits_to_mask(b: np.ndarray) -> int:
    return int(np.packbits(b.astype(np.uint8), bitorder="little").view("<u8")[0])


def inline_int(o: Imm) -> int:
    return o.value & 0xFFFFFFFF


__all__ = [
    "FConst",
    "Imm",
    "Label",
    "Memory",
    "Pending",
    "Raw",
    "Segment",
    "W",
    "Wave",
    "bits_to_mask",
    "lane_bits",
    "reg_name",
    "units_of",
]
