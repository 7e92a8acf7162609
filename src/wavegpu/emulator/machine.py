"""The vectorised SIMT machine: one batch of workgroups executes in lockstep under lane masks.

Every lane of the batch runs the same instruction stream; structured control flow keeps a
per-lane active mask (if/else/endif, loop/break/continue/endloop, ret). Since all lanes of a
workgroup execute each instruction together, barriers order memory trivially, wave
operations view the lanes as [waves, W], and atomics apply in ascending lane order, which
is ascending global thread order. Instructions are compiled once into closures.

Registers are immutable NumPy arrays ([N] uint32, or 0-d for a value uniform over the batch);
a write rebinds the register's entry (with np.where under a partial mask), so no register
file is copied or zero-filled and uniform values cost nothing until they meet per-lane data.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..dis import format_instruction
from ..errors import Trap, UndefinedBehaviour
from ..isa import semantics as sem
from ..isa.instruction import Imm, Instruction, Mem, Pair, Pred, Reg, SReg, Vec
from ..isa.registers import SReg as SR
from ..isa.structure import nesting
from ..isa.table import row
from ..isa.types import SUBREGS, Kind, Role
from ..isa.vocabulary import NEST_OF, Nest, ReduceOp, ShuffleMode
from ..isa.vocabulary import Op as VOp
from ..wbin.program import Kernel
from . import atomics
from .bounds import Bounds
from .checker import Checker
from .stats import Stats

U32 = np.uint32
U64 = np.uint64
M32 = U32(0xFFFFFFFF)
WATCH_FROM = 1 << 16  # issues before the endless-loop watch starts (no kernel of the tests gets there)

Op = Callable[[], "int | None"]
Reader = Callable[[], np.ndarray]
Writer = Callable[[np.ndarray, "np.ndarray | None"], None]


@dataclass
class Launch:
    """What every batch needs to know about the dispatch."""

    grid: tuple[int, int, int]
    workgroup: tuple[int, int, int]
    wave_width: int
    args: tuple[int, ...]
    max_instructions: int
    check: bool
    bounds: Bounds | None = None  # per-buffer regions: every global access stays inside one
    zero_division: bool = False  # trap an integer division by zero (defined in WAVE)


class Memory:
    """Byte-addressed memory with 16- and 32-bit views (buffer padded to 16 bytes)."""

    def __init__(self, data: np.ndarray, size: int, name: str):
        self.size = size
        self.name = name
        self.u8 = data
        self.u16 = data.view(np.uint16)
        self.u32 = data.view(U32)


def pad16(n: int) -> int:
    return max(16, (n + 15) & ~15)


_MOV = row("mov.b32")
_CTAID = {SR.CTAID_X: "ctaid.x", SR.CTAID_Y: "ctaid.y", SR.CTAID_Z: "ctaid.z"}
_PER_LANE_SREG = {
    SR.TID_X: "tid.x",
    SR.TID_Y: "tid.y",
    SR.TID_Z: "tid.z",
    SR.WID: "wid",
    SR.LID: "lid",
    **_CTAID,
}
_STAT = {"global": "device", "local": "local", "const": "constant"}


class Batch:
    """One batch of consecutive workgroups, executed to completion."""

    def __init__(
        self,
        kernel: Kernel,
        launch: Launch,
        first_wg: int,
        n_wg: int,
        device: Memory,
        constant: Memory,
        stats: Stats,
    ):
        self.k = kernel
        self.launch = launch
        self.device = device
        self.constant = constant
        self.stats = stats
        W = self.W = launch.wave_width
        wx, wy, wz = launch.workgroup
        self.T = T = wx * wy * wz
        self.waves_per_wg = -(-T // W)
        self.lanes_per_wg = self.waves_per_wg * W
        self.n_wg = n_wg
        self.N = N = n_wg * self.lanes_per_wg
        self.first_wg = first_wg
        self.padded = T % W != 0
        self.n_real = n_wg * T
        self.lazy: dict[str, np.ndarray] = {}
        zero = np.zeros((), dtype=U32)
        self.regs: list[np.ndarray] = [zero] * max(kernel.registers, 1)
        for i, a in enumerate(launch.args[: len(self.regs)]):
            self.regs[i] = np.asarray(a & 0xFFFFFFFF, dtype=U32)
        self.preds: list[np.ndarray] = [np.zeros((), dtype=bool)] * max(kernel.predicates, 1)
        self.local_stride = pad16(kernel.local_memory)
        local_bytes = n_wg * self.local_stride if kernel.local_memory else 16
        self.local = Memory(np.zeros(local_bytes, dtype=np.uint8), kernel.local_memory, "local")
        self.alive = self._get("real").copy() if self.padded else np.ones(N, dtype=bool)
        self.active = self.alive.copy()
        self.frames: list[list[object]] = []
        self.issued = 0
        self.clock_reads = 0
        # endless-loop watch: past watch_at issues, a snapshot at an endloop; if the loop comes back
        # to that endloop in the same state, having written no memory and read no %clock, it repeats
        # forever (the machine is deterministic)
        self.watch_at = WATCH_FROM
        self.snapshot: tuple[object, ...] | None = None
        self._mask_changed()
        self.checker = Checker(self) if launch.check else None
        self.nest = nesting(kernel.instructions)
        self.match = self.nest.match
        self.closer = self._closers()
        self.bounds = launch.bounds
        exact = self.bounds is not None and self.bounds.exact and kernel.accesses is not None
        self.tags: tuple[int | None, ...] = kernel.accesses if exact else (None,) * len(kernel.instructions)  # type: ignore[assignment]
        self.cls = [i.spec.cls for i in kernel.instructions]
        self.ops = [self.compile(i, pc) for pc, i in enumerate(kernel.instructions)]

    # ------------------------------------------------------------------ identities
    def _get(self, name: str) -> np.ndarray:
        v = self.lazy.get(name)
        if v is None:
            v = self.lazy[name] = self._make(name)
        return v

    def _make(self, name: str) -> np.ndarray:
        W, N = self.W, self.N
        wx, wy, _wz = self.launch.workgroup
        gx, gy, _gz = self.launch.grid
        if name == "lane_in_wg":
            return np.tile(np.arange(self.lanes_per_wg, dtype=U32), self.n_wg)
        if name == "wg_in_batch":
            return np.repeat(np.arange(self.n_wg, dtype=U32), self.lanes_per_wg)
        if name == "real":
            return self._get("lane_in_wg") < U32(self.T)
        if name == "real_idx":
            return np.flatnonzero(self._get("real"))
        if name == "local_base":
            return self._get("wg_in_batch").astype(np.int64) * self.local_stride
        if name == "lid":
            return np.tile(np.arange(W, dtype=U32), N // W)
        if name == "lane_index":
            return np.arange(N, dtype=np.int64)
        lin = self._get("lane_in_wg")
        if name == "tid.x":
            return lin if wx == self.lanes_per_wg else lin % U32(wx)
        if name == "tid.y":
            return (lin // U32(wx)) % U32(wy)
        if name == "tid.z":
            return lin // U32(wx * wy)
        if name == "wid":
            return lin // U32(W)
        wg_lin = self._get("wg_in_batch") + U32(self.first_wg)
        if name == "ctaid.x":
            return wg_lin if self.first_wg + self.n_wg <= gx else wg_lin % U32(gx)
        if name == "ctaid.y":
            return (wg_lin // U32(gx)) % U32(gy)
        if name == "ctaid.z":
            return wg_lin // U32(gx * gy)
        raise KeyError(name)

    @property
    def real(self) -> np.ndarray:
        return self._get("real")

    @property
    def local_base(self) -> np.ndarray:
        return self._get("local_base")

    def lane_ids(self, lane: int) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
        wg = tuple(int(self._get(f"ctaid.{a}")[lane]) for a in "xyz")
        th = tuple(int(self._get(f"tid.{a}")[lane]) for a in "xyz")
        return wg, th  # type: ignore[return-value]

    def sreg(self, sid: int) -> Reader:
        """A reader of special register `sid`; values uniform over the batch are 0-d arrays."""
        wx, wy, wz = self.launch.workgroup
        gx, gy, gz = self.launch.grid
        uniform = {
            SR.NTID_X: wx,
            SR.NTID_Y: wy,
            SR.NTID_Z: wz,
            SR.NCTAID_X: gx,
            SR.NCTAID_Y: gy,
            SR.NCTAID_Z: gz,
            SR.NWAVES: self.waves_per_wg,
            SR.WAVE_WIDTH: self.W,
        }
        if (sid == SR.TID_Y and wy == 1) or (sid == SR.TID_Z and wz == 1):
            uniform[sid] = 0
        if sid == SR.WID and self.waves_per_wg == 1:
            uniform[sid] = 0
        if sid in _CTAID and self.n_wg == 1:
            uniform[sid] = int(self._get(_CTAID[sid])[0])
        if sid in uniform:
            v = np.asarray(uniform[sid], dtype=U32)
            return lambda: v
        if sid == SR.CLOCK:

            def clock() -> np.ndarray:
                self.clock_reads += 1
                return np.asarray(self.issued & 0xFFFFFFFF, dtype=U32)

            return clock
        name = _PER_LANE_SREG[sid]
        return lambda: self._get(name)

    def lanes(self, x: np.ndarray) -> np.ndarray:
        """x as one value per lane."""
        return x if x.ndim else np.broadcast_to(x, (self.N,))

    def trap(
        self,
        pc: int,
        reason: str,
        lane: int | None = None,
        address: int | None = None,
        ub: bool = False,
        array: str | None = None,
        index: int | None = None,
    ) -> Trap:
        inst = self.k.instructions[pc]
        loc = self.k.loc(pc)
        wg = th = None
        if lane is not None:
            wg, th = self.lane_ids(lane)
        cls = UndefinedBehaviour if ub else Trap
        return cls(
            reason,
            self.k.name,
            pc,
            format_instruction(inst),
            wg,
            th,
            address,
            f"{loc.file}:{loc.line}:{loc.col}" if loc else None,
            array,
            index,
        )

    # ------------------------------------------------------------------ masks
    def _mask_changed(self) -> None:
        self.n_active = int(np.count_nonzero(self.active))
        self.full = self.n_active == self.n_real
        if self.full:
            self.n_active_waves = self.n_wg * self.waves_per_wg
        elif self.n_active:
            self.n_active_waves = int(np.count_nonzero(self.active.reshape(-1, self.W).any(axis=1)))
        else:
            self.n_active_waves = 0

    def exec_mask(self, guard: Reader | None) -> np.ndarray | None:
        """The executing lanes; None means every lane (the fast path)."""
        if guard is None:
            return None if self.full else self.active
        return self.active & guard()

    def _closers(self) -> list[int]:
        """For each pc, the control instruction closing the innermost construct around it.

        When no lane is left active, execution skips there (it recomputes the mask). For a
        closing instruction itself, the entry is the closer of the enclosing construct.
        """
        nest = self.nest
        out = [len(self.k.instructions)] * len(self.k.instructions)
        for pc, parent in enumerate(nest.enclosing):
            if parent is None:
                continue
            els, end = nest.match[parent]
            out[pc] = els if els is not None and pc <= els else end
        return out

    # ------------------------------------------------------------------ operands
    def reader(self, op: object) -> Reader:
        regs, preds = self.regs, self.preds
        if isinstance(op, Imm):
            v = np.asarray(op.bits, dtype=U64 if op.width == 64 else U32)
            return lambda: v
        if isinstance(op, Reg):
            n = op.n
            if op.sel == 0:
                return lambda: regs[n]
            _, off, width = SUBREGS[op.sel]
            mask = U32((1 << width) - 1)
            sh = U32(off)
            return lambda: (regs[n] >> sh) & mask
        if isinstance(op, Pair):
            n = op.n
            return lambda: regs[n].astype(U64) | (regs[n + 1].astype(U64) << U64(32))
        if isinstance(op, Pred):
            n = op.n
            return lambda: preds[n]
        if isinstance(op, SReg):
            return self.sreg(op.id)
        raise TypeError(op)

    def set_reg(self, n: int, v: np.ndarray, m: np.ndarray | None) -> None:
        if v.dtype != U32:
            v = v.astype(U32)
        self.regs[n] = v if m is None else np.where(m, v, self.regs[n])

    def writer(self, op: object) -> Writer:
        w = self._writer(op)
        chk = self.checker
        if chk is None:
            return w
        first, count, pred = (op.n, 2 if isinstance(op, Pair) else 1, isinstance(op, Pred))  # type: ignore[union-attr]

        def checked(v: np.ndarray, m: np.ndarray | None) -> None:
            w(v, m)
            chk.mark(first, count, m, pred)

        return checked

    def _writer(self, op: object) -> Writer:
        regs, preds, set_reg = self.regs, self.preds, self.set_reg
        if isinstance(op, Reg):
            n = op.n
            if op.sel == 0:
                return lambda v, m: set_reg(n, np.asarray(v), m)
            _, off, width = SUBREGS[op.sel]
            fmask = U32((1 << width) - 1)
            keep = ~U32(((1 << width) - 1) << off)
            sh = U32(off)

            def wsub(v: np.ndarray, m: np.ndarray | None) -> None:
                merged = (regs[n] & keep) | ((np.asarray(v).astype(U32) & fmask) << sh)
                set_reg(n, merged, m)

            return wsub
        if isinstance(op, Pair):
            n = op.n

            def wpair(v: np.ndarray, m: np.ndarray | None) -> None:
                v = np.asarray(v).astype(U64, copy=False)
                set_reg(n, (v & U64(0xFFFFFFFF)).astype(U32), m)
                set_reg(n + 1, (v >> U64(32)).astype(U32), m)

            return wpair
        if isinstance(op, Pred):
            n = op.n

            def wpred(v: np.ndarray, m: np.ndarray | None) -> None:
                v = np.asarray(v, dtype=bool)
                preds[n] = v if m is None else np.where(m, v, preds[n])

            return wpred
        raise TypeError(op)

    def guard_reader(self, inst: Instruction) -> Reader | None:
        g = inst.guard
        if g is None:
            return None
        preds, n = self.preds, g.pred
        if g.negated:
            return lambda: ~preds[n]
        return lambda: preds[n]

    def _count(self, pc: int, m: np.ndarray | None) -> None:
        lanes = self.n_active if m is None or m is self.active else int(np.count_nonzero(m))
        self.stats.add(self.cls[pc], self.n_active_waves, lanes)

    # ------------------------------------------------------------------ compile
    def compile(self, inst: Instruction, pc: int) -> Op:
        """The closure running one instruction: value rows through isa.semantics, every other
        row through the handler of its operation (HANDLERS)."""
        spec = inst.spec
        if spec.key in sem.SEMANTICS:
            return self.compile_alu(inst, pc, sem.SEMANTICS[spec.key])
        handler = HANDLERS.get(spec.op)
        if handler is None:
            raise NotImplementedError(f"no semantics for {spec.key}")  # tests/emulator forbid this
        return handler(self, inst, pc)

    def compile_sreg(self, inst: Instruction, pc: int) -> Op:
        """mov.b32.sreg: a move from the special register's reader."""
        return self.compile_alu(inst, pc, sem.SEMANTICS[_MOV.key])

    def compile_nop(self, pc: int) -> Op:
        def run() -> None:
            self._count(pc, None)

        return run

    def compile_alu(self, inst: Instruction, pc: int, f: Callable[..., np.ndarray]) -> Op:
        spec = inst.spec
        pairs = [(o, s) for o, s in zip(inst.operands, spec.operands) if s.role is Role.SRC]
        srcs = [self.reader(o) for o, _ in pairs]
        reads = [o for o, _ in pairs]
        dst = self.writer(inst.operands[spec.dests[0]])
        guard = self.guard_reader(inst)
        chk = self.checker
        exec_mask, count = self.exec_mask, self._count
        # an integer division by zero traps when asked (WAVE defines its value, DESIGN section 3;
        # in Python it is an error: kernel calls ask under check and boundscheck)
        divides = (
            self.launch.zero_division and spec.op in (VOp.DIV, VOp.REM) and not (spec.dtype and spec.dtype.is_float)
        )
        if len(srcs) == 2 and chk is None and not divides:
            s0, s1 = srcs

            def run2() -> None:
                m = exec_mask(guard)
                dst(f(s0(), s1()), m)
                count(pc, m)

            return run2

        def run() -> None:
            m = exec_mask(guard)
            if chk:
                chk.reads(pc, reads, m)
            vals = [s() for s in srcs]
            if divides:
                self.check_divisor(pc, vals[-1], m)
            dst(f(*vals), m)
            count(pc, m)

        return run

    def check_divisor(self, pc: int, divisor: np.ndarray, m: np.ndarray | None) -> None:
        lanes = self.active if m is None else m
        bad = lanes & (np.broadcast_to(divisor, lanes.shape) == 0)
        if bad.any():
            raise self.trap(
                pc,
                "integer division by zero (the run asked for this check: check=True or boundscheck; "
                "without it the result is the one DESIGN section 3 defines)",
                int(np.flatnonzero(bad)[0]),
            )

    # ------------------------------------------------------------------ memory
    def space(self, name: str) -> Memory:
        return {"global": self.device, "local": self.local, "const": self.constant}[name]

    def addresses(
        self, pc: int, mem: Mem, m: np.ndarray | None, width: int, space: str
    ) -> tuple[np.ndarray | None, np.ndarray]:
        """(executing lanes or None for all, their checked byte indices into the buffer)."""
        idx = m if m is None else np.flatnonzero(m)
        if idx is None and self.padded:
            idx = self._get("real_idx")
        if mem.base is None:
            n = self.N if idx is None else idx.size
            addr = np.full(n, mem.offset & 0xFFFFFFFF, dtype=U32)
        else:
            r = self.lanes(self.regs[mem.base])
            addr = r if idx is None else r[idx]
            if mem.offset:
                addr = addr + U32(mem.offset & 0xFFFFFFFF)
        if addr.size == 0:
            return idx, addr
        limit = self.space(space).size
        hi = int(addr.max())
        if self.bounds is not None and space == "global":
            pos = self.bounds.first_outside(addr, width, hi, self.tags[pc])
            if pos >= 0:
                a = int(addr[pos])
                named = self.k.accesses[pc] if self.k.accesses is not None else None
                why, region, index = self.bounds.describe(a, width, named, self.cls[pc])
                lane = int(idx[pos]) if idx is not None else pos
                raise self.trap(pc, why, lane, a, array=region.name if region else None, index=index)
        misaligned = width > 1 and int(np.bitwise_or.reduce(addr)) & (width - 1)
        if hi + width > limit or misaligned:
            a64 = addr.astype(np.int64)
            bad = (a64 + width > limit) | ((a64 & (width - 1)) != 0)
            first = int(np.flatnonzero(bad)[0])
            lane = int(idx[first]) if idx is not None else first
            a = int(a64[first])
            if a + width > limit:
                why = (
                    f"out-of-bounds {space} access of {width} byte(s) at address {a} ({space} memory has {limit} bytes)"
                )
            else:
                why = f"misaligned {space} access: address {a} is not a multiple of {width}"
            raise self.trap(pc, why, lane, a)
        if space == "local":
            base = self.local_base if idx is None else self.local_base[idx]
            addr = addr.astype(np.int64) + base
        return idx, addr

    def compile_memory(self, inst: Instruction, pc: int) -> Op:
        spec = inst.spec
        space = spec.space
        assert space is not None and spec.mem_index is not None
        width = spec.width
        mem = inst.operands[spec.mem_index]
        assert isinstance(mem, Mem)
        guard = self.guard_reader(inst)
        chk = self.checker
        stat = _STAT[space]
        buf = self.space(space)
        if spec.cls == "load":
            dst_op = inst.operands[0]
            kind = spec.operands[0].kind
            signed = spec.signed  # a sign-extending s8 or s16 load
            ncomp = {Kind.VEC2: 2, Kind.VEC4: 4, Kind.PAIR: 2}.get(kind, 1)
            reg0 = dst_op.n  # type: ignore[union-attr]
            sub_writer = self.writer(dst_op) if isinstance(dst_op, Reg) and dst_op.sel else None
            read_attr = f"{stat}_bytes_read"

            def load() -> None:
                m = self.exec_mask(guard)
                if m is not None and not m.any():
                    self._count(pc, m)
                    return
                if chk:
                    chk.reads(pc, [mem], m)
                idx, addr = self.addresses(pc, mem, m, width, space)
                if chk and space == "local":
                    chk.local_access(pc, idx, addr, width, write=False)
                if width == 1:
                    v = buf.u8[addr]
                    vals = [v.view(np.int8).astype(np.int32).view(U32) if signed else v.astype(U32)]
                elif width == 2:
                    v = buf.u16[addr >> 1]
                    vals = [v.view(np.int16).astype(np.int32).view(U32) if signed else v.astype(U32)]
                elif ncomp == 1:
                    vals = [buf.u32[addr >> 2]]
                else:
                    w = addr >> 2
                    vals = [buf.u32[w + i] for i in range(ncomp)]
                emask = None if idx is None else _mask_from(idx, self.N)
                for i, v in enumerate(vals):
                    if idx is not None:
                        full = np.zeros(self.N, dtype=U32)
                        full[idx] = v
                        v = full
                    if sub_writer is not None:
                        sub_writer(v, emask)
                    else:
                        self.set_reg(reg0 + i, v, emask)
                if chk and sub_writer is None:
                    chk.mark(reg0, len(vals), emask)
                n = self.n_real if idx is None else idx.size
                setattr(self.stats, read_attr, getattr(self.stats, read_attr) + width * n)
                self._count(pc, m)

            return load

        val_op = inst.operands[1]
        vkind = spec.operands[1].kind
        ncomp = {Kind.VEC2: 2, Kind.VEC4: 4, Kind.PAIR: 2}.get(vkind, 1)
        if isinstance(val_op, Imm):
            consts = [np.asarray((val_op.bits >> (32 * i)) & 0xFFFFFFFF, dtype=U32) for i in range(ncomp)]
            comps = [_constant(c) for c in consts]
        elif isinstance(val_op, Reg):
            comps = [self.reader(val_op)]
        else:
            base = val_op.n  # type: ignore[union-attr]
            comps = [(lambda i=i: self.regs[base + i]) for i in range(ncomp)]
        write_attr = f"{stat}_bytes_written"

        def store() -> None:
            m = self.exec_mask(guard)
            if m is not None and not m.any():
                self._count(pc, m)
                return
            if chk:
                chk.reads(pc, [mem, val_op], m)
            idx, addr = self.addresses(pc, mem, m, width, space)
            if chk and space == "local":
                chk.local_access(pc, idx, addr, width, write=True)
            w = addr if width == 1 else addr >> (1 if width == 2 else 2)
            for i, c in enumerate(comps):
                v = c()
                if v.ndim and idx is not None:
                    v = v[idx]
                if width == 1:
                    buf.u8[w] = v.astype(np.uint8)
                elif width == 2:
                    buf.u16[w] = v.astype(np.uint16)
                else:
                    buf.u32[w + i if i else w] = v
            n = self.n_real if idx is None else idx.size
            setattr(self.stats, write_attr, getattr(self.stats, write_attr) + width * n)
            self._count(pc, m)

        return store

    def compile_atomic(self, inst: Instruction, pc: int) -> Op:
        spec = inst.spec
        space = spec.space
        assert space is not None and spec.mem_index is not None
        returns = spec.op is VOp.ATOM
        atom = sem.atomic_of(spec)
        mi = spec.mem_index
        mem = inst.operands[mi]
        assert isinstance(mem, Mem)
        srcs = [self.reader(o) for o in inst.operands[mi + 1 :]]
        dst = self.writer(inst.operands[0]) if returns else None
        guard = self.guard_reader(inst)
        chk = self.checker
        stat = _STAT[space]
        reads = [mem, *inst.operands[mi + 1 :]]
        buf = self.space(space)

        def run() -> None:
            m = self.exec_mask(guard)
            if m is not None and not m.any():
                self._count(pc, m)
                return
            if chk:
                chk.reads(pc, reads, m)
            idx, addr = self.addresses(pc, mem, m, 4, space)
            vals = []
            for s in srcs:
                v = s()
                vals.append(v[idx] if v.ndim and idx is not None else v)
            old = atomics.apply(
                buf.u32,
                addr.astype(np.int64) >> 2,
                atom,
                vals[0],
                vals[1] if len(vals) > 1 else None,
            )
            if dst is not None:
                if idx is None:
                    dst(old, None)
                else:
                    full = np.zeros(self.N, dtype=U32)
                    full[idx] = old
                    dst(full, _mask_from(idx, self.N))
            n = old.size
            self.stats.atomics += n
            setattr(self.stats, f"{stat}_bytes_read", getattr(self.stats, f"{stat}_bytes_read") + 4 * n)
            setattr(
                self.stats,
                f"{stat}_bytes_written",
                getattr(self.stats, f"{stat}_bytes_written") + 4 * n,
            )
            self._count(pc, m)

        return run

    # ------------------------------------------------------------------ wave operations
    def compile_wave(self, inst: Instruction, pc: int) -> Op:
        spec = inst.spec
        W = self.W
        op = spec.op
        guard = self.guard_reader(inst)
        srcs = [self.reader(o) for o, s in zip(inst.operands, spec.operands) if s.role is Role.SRC]
        reads = [o for o, s in zip(inst.operands, spec.operands) if s.role is Role.SRC]
        dst = self.writer(inst.operands[0])
        chk = self.checker

        def spread(per_wave: np.ndarray) -> np.ndarray:
            return np.repeat(per_wave, W)

        def prologue() -> tuple[np.ndarray | None, np.ndarray]:
            m = self.exec_mask(guard)
            if chk:
                chk.reads(pc, reads, m)
            return m, (self.active if m is None else m)

        if op is VOp.REDUCE:
            red = sem.reduction_of(spec)

            def reduce() -> None:
                m, act = prologue()
                res = wave_reduce(red, self.lanes(srcs[0]()).reshape(-1, W), act.reshape(-1, W))
                dst(spread(res), m)
                self._count(pc, m)

            return reduce

        if op in (VOp.SHUFFLE, VOp.BROADCAST):
            mode = spec.variant

            def shuffle() -> None:
                m, _act = prologue()
                x = self.lanes(srcs[0]())
                b = self.lanes(srcs[1]()).astype(np.int64)
                ln = self._get("lid").astype(np.int64)
                if mode is ShuffleMode.IDX:
                    src = b % W
                    ok = np.ones(self.N, dtype=bool)
                else:
                    src = ln ^ b if mode is ShuffleMode.XOR else ln - b if mode is ShuffleMode.UP else ln + b
                    ok = (src >= 0) & (src < W)
                    src = np.where(ok, src, ln)
                gidx = self._get("lane_index") - ln + src
                if chk:
                    chk.shuffle_source(pc, m, gidx, ok)
                dst(x[gidx], m)
                self._count(pc, m)

            return shuffle

        if op is VOp.PREFIX and spec.variant is ReduceOp.ADD:

            def prefix() -> None:
                m, act = prologue()
                x = np.where(act, self.lanes(srcs[0]()), U32(0)).reshape(-1, W)
                incl = np.cumsum(x, axis=1, dtype=U32)
                dst((incl - x).reshape(-1), m)
                self._count(pc, m)

            return prefix

        if op is VOp.BALLOT:
            weights = (np.uint64(1) << np.arange(W, dtype=np.uint64)) & np.uint64(0xFFFFFFFF)

            def ballot() -> None:
                m, act = prologue()
                p = (self.lanes(srcs[0]()) & act).reshape(-1, W)
                bits = (p.astype(np.uint64) * weights).sum(axis=1, dtype=np.uint64).astype(U32)
                dst(spread(bits), m)
                self._count(pc, m)

            return ballot

        if op in (VOp.ANY, VOp.ALL):
            is_any = op is VOp.ANY

            def vote() -> None:
                m, act = prologue()
                p = self.lanes(srcs[0]()).reshape(-1, W)
                a = act.reshape(-1, W)
                r = (p & a).any(axis=1) if is_any else (p | ~a).all(axis=1)
                dst(spread(r), m)
                self._count(pc, m)

            return vote
        raise NotImplementedError(spec.name)

    # ------------------------------------------------------------------ mma
    def compile_mma(self, inst: Instruction, pc: int) -> Op:
        d, a, b, c = inst.operands
        assert isinstance(d, Vec) and isinstance(a, Vec) and isinstance(b, Vec) and isinstance(c, Vec)
        guard = self.guard_reader(inst)
        chk = self.checker
        lane = np.arange(32)
        group, tig = lane >> 2, lane & 3

        def halves(r: int) -> np.ndarray:  # [waves, 32, 2] float64
            v = self.lanes(self.regs[r]).reshape(-1, 32)
            lo = (v & U32(0xFFFF)).astype(np.uint16).view(np.float16).astype(np.float64)
            hi = (v >> U32(16)).astype(np.uint16).view(np.float16).astype(np.float64)
            return np.stack([lo, hi], axis=-1)

        def run() -> None:
            if self.W != 32:
                raise self.trap(pc, f"mma.m16n8k8 needs a wave width of 32 (this launch: {self.W})", 0)
            m = self.exec_mask(guard)
            act = (self.active if m is None else m).reshape(-1, 32)
            partial = act.any(axis=1) & ~act.all(axis=1)
            if partial.any():
                wave = int(np.flatnonzero(partial)[0])
                raise self.trap(
                    pc,
                    "mma needs every lane of the wave active",
                    wave * 32 + int(np.flatnonzero(~act[wave])[0]),
                )
            if chk:
                chk.reads(pc, [a, b, c], m)
            nw = self.N // 32
            A = np.zeros((nw, 16, 8))
            B = np.zeros((nw, 8, 8))
            C = np.zeros((nw, 16, 8))
            a0, a1, b0 = halves(a.n), halves(a.n + 1), halves(b.n)
            for i in range(2):
                A[:, group, tig * 2 + i] = a0[:, :, i]
                A[:, group + 8, tig * 2 + i] = a1[:, :, i]
                B[:, tig * 2 + i, group] = b0[:, :, i]
            for i in range(4):
                cv = self.lanes(self.regs[c.n + i]).reshape(-1, 32).view(np.float32)
                C[:, group + (8 if i >= 2 else 0), tig * 2 + (i & 1)] = cv
            # C, then the products in k order, in float64 (f16 products are exact), rounded once:
            # an order the C backends can reproduce exactly
            acc = C
            for kk in range(8):
                acc = acc + A[:, :, kk, None] * B[:, None, kk, :]
            D = sem.canon32(acc.astype(np.float32))
            for i in range(4):
                out = np.ascontiguousarray(D[:, group + (8 if i >= 2 else 0), tig * 2 + (i & 1)]).reshape(-1)
                self.set_reg(d.n + i, out.view(U32), m)
            if chk:
                chk.mark(d.n, 4, m)
            self._count(pc, m)

        return run

    # ------------------------------------------------------------------ barriers
    def compile_barrier(self, pc: int) -> Op:
        chk = self.checker

        def run() -> None:
            if chk:
                chk.barrier(pc)
            if self.full:
                self.stats.barriers += self.n_wg
            else:
                self.stats.barriers += int(np.count_nonzero(self.active.reshape(self.n_wg, -1).any(axis=1)))
            self._count(pc, None)

        return run

    # ------------------------------------------------------------------ control flow
    def _left(self) -> np.ndarray | None:
        """Lanes that left the innermost loop's current iteration (break or continue)."""
        for fr in reversed(self.frames):
            if fr[0] is Nest.OPEN_LOOP:
                return fr[2] | fr[3]  # type: ignore[operator]
        return None

    def _set_active(self, mask: np.ndarray) -> None:
        self.active = mask
        self._mask_changed()

    def compile_control(self, inst: Instruction, pc: int) -> Op:
        role = inst.spec.nest
        guard = self.guard_reader(inst)
        W = self.W
        closer = self.closer[pc]
        preds = self.preds

        if role is Nest.OPEN_IF:
            pn = inst.operands[0].n  # type: ignore[union-attr]
            els, end = self.match[pc]
            uniform = inst.spec.uniform
            chk = self.checker

            def run_if() -> int | None:
                entry = self.active
                p = self.lanes(preds[pn])
                then = entry & p
                if chk and uniform:
                    chk.uniform_branch(pc, then, entry)
                self.frames.append([Nest.OPEN_IF, entry, p])
                self._count(pc, None)
                self.stats.branches += self.n_active_waves
                n_then = int(np.count_nonzero(then))
                if 0 < n_then < self.n_active:
                    tw = then.reshape(-1, W).any(axis=1)
                    ew = (entry & ~p).reshape(-1, W).any(axis=1)
                    self.stats.divergent_branches += int(np.count_nonzero(tw & ew))
                self._set_active(then)
                if n_then == 0:
                    return els if els is not None else end
                return None

            return run_if

        if role is Nest.ELSE:
            end = self.nest.closer(self.nest.opener[pc])

            def run_else() -> int | None:
                fr = self.frames[-1]
                mask = fr[1] & ~fr[2] & self.alive  # type: ignore[operator]
                left = self._left()
                self._set_active(mask if left is None else mask & ~left)
                self._count(pc, None)
                return end if self.n_active == 0 else None

            return run_else

        if role is Nest.CLOSE and not self.nest.is_loop(self.nest.opener[pc]):

            def run_endif() -> int | None:
                fr = self.frames.pop()
                mask = fr[1] & self.alive  # type: ignore[operator]
                left = self._left()
                self._set_active(mask if left is None else mask & ~left)
                self._count(pc, None)
                return closer if self.n_active == 0 else None

            return run_endif

        if role is Nest.OPEN_LOOP:

            def run_loop() -> None:
                z = np.zeros(self.N, dtype=bool)
                self.frames.append([Nest.OPEN_LOOP, self.active, z, z])
                self._count(pc, None)

            return run_loop

        if role is Nest.CLOSE:
            start = self.nest.opener[pc]

            def run_endloop() -> int | None:
                fr = self.frames[-1]
                self._count(pc, None)
                nxt = fr[1] & self.alive & ~fr[2]  # type: ignore[operator]
                if nxt.any():
                    if self.issued >= self.watch_at:
                        self.watch(pc)
                    fr[3] = np.zeros(self.N, dtype=bool)
                    self._set_active(nxt)
                    return start + 1
                self.frames.pop()
                mask = fr[1] & self.alive  # type: ignore[operator]
                left = self._left()
                self._set_active(mask if left is None else mask & ~left)
                return closer if self.n_active == 0 else None

            return run_endloop

        if role in (Nest.BREAK, Nest.CONTINUE):
            pn = inst.operands[0].n  # type: ignore[union-attr]
            slot = 2 if role is Nest.BREAK else 3

            def run_jump() -> int | None:
                lanes = self.active & preds[pn]
                if guard is not None:
                    lanes &= guard()
                self._count(pc, None)
                if not lanes.any():
                    return None
                for fr in reversed(self.frames):
                    if fr[0] is Nest.OPEN_LOOP:
                        fr[slot] = fr[slot] | lanes  # type: ignore[operator]
                        break
                self._set_active(self.active & ~lanes)
                return closer if self.n_active == 0 else None

            return run_jump

        if role is Nest.RET:

            def run_ret() -> int | None:
                lanes = self.active if guard is None else self.active & guard()
                self._count(pc, None)
                self.alive = self.alive & ~lanes
                self._set_active(self.active & ~lanes)
                return closer if self.n_active == 0 else None

            return run_ret
        raise NotImplementedError(inst.spec.name)

    # ------------------------------------------------------------------ endless loops
    def _state(self, pc: int) -> tuple[object, ...]:
        s = self.stats
        writes = (s.device_bytes_written, s.local_bytes_written, s.atomics, self.clock_reads)
        # copies: register and mask arrays are also updated in place, and a snapshot holding the
        # live arrays would always equal the present (every loop would look endless)
        frames = [_copy(fr) for fr in self.frames]
        return (
            pc,
            writes,
            _copy(self.regs),
            _copy(self.preds),
            self.active.copy(),
            self.alive.copy(),
            frames,
            self.issued,
        )

    def watch(self, pc: int) -> None:
        """At an endloop whose loop goes on: snapshot the state, or compare with the snapshot.
        Snapshots are taken at doubling issue counts, so the watch costs nothing measurable."""
        now = self._state(pc)
        snap = self.snapshot
        if snap is not None and snap[0] == pc:
            if snap[1] == now[1] and all(_same(a, b) for a, b in zip(snap[2:7], now[2:7])):
                lane = int(np.flatnonzero(self.active)[0]) if self.n_active else None
                raise self.trap(
                    pc,
                    f"endless loop: after {self.issued:,} instructions the loop ending here came round to "
                    "exactly the state of its previous iteration (registers, predicates, active lanes; no "
                    "memory written, no %clock read), so it can never finish",
                    lane,
                )
            self.snapshot = None
            self.watch_at = 2 * self.issued
        elif snap is None or self.issued >= 2 * snap[7]:  # type: ignore[operator]
            self.snapshot = now  # (again, when the last snapshot's endloop is not coming back)

    # ------------------------------------------------------------------ run
    def run(self) -> None:
        ops = self.ops
        n = len(ops)
        insts = self.k.instructions
        closer = self.closer
        pc = 0
        budget = self.launch.max_instructions
        issued = 0
        with np.errstate(all="ignore"):
            while pc < n:
                nxt = ops[pc]()
                issued += 1
                self.issued = issued
                if issued > budget:
                    lane = int(np.flatnonzero(self.active)[0]) if self.n_active else None
                    raise self.trap(
                        pc,
                        f"instruction budget exhausted: a thread issued more than {budget:,} instructions "
                        f"(max_instructions={budget}); an endless loop? If the kernel needs more, raise "
                        "it: emulate(..., max_instructions=N), a kernel call's max_instructions=N, or "
                        "wave run --max-instructions N",
                        lane,
                    )
                pc = pc + 1 if nxt is None else nxt
                if self.n_active == 0 and pc < n and insts[pc].spec.cls != "control":
                    pc = closer[pc]


Handler = Callable[[Batch, Instruction, int], Op]

HANDLERS: dict[VOp, Handler] = {
    VOp.MOV: Batch.compile_sreg,  # the other moves are value rows
    VOp.LD: Batch.compile_memory,
    VOp.ST: Batch.compile_memory,
    VOp.ATOM: Batch.compile_atomic,
    VOp.RED: Batch.compile_atomic,
    **{o: Batch.compile_wave for o in (VOp.REDUCE, VOp.BROADCAST, VOp.SHUFFLE, VOp.PREFIX, VOp.BALLOT)},
    VOp.ANY: Batch.compile_wave,
    VOp.ALL: Batch.compile_wave,
    **{o: Batch.compile_control for o in NEST_OF},
    VOp.BARRIER: lambda b, inst, pc: b.compile_barrier(pc),
    VOp.NOP: lambda b, inst, pc: b.compile_nop(pc),
    VOp.FENCE: lambda b, inst, pc: b.compile_nop(pc),  # the machine is sequentially consistent
    VOp.MMA: Batch.compile_mma,
}
"""Operation -> the Batch method compiling its rows (rows with value semantics excepted)."""


def _copy(state: object) -> object:
    """A deep copy of machine state (lists of arrays and values)."""
    if isinstance(state, list):
        return [_copy(x) for x in state]
    if isinstance(state, np.ndarray):
        return state.copy()
    return state


def _same(a: object, b: object) -> bool:
    """Equal machine state: arrays by value, lists (registers, frames) element-wise."""
    if a is b:
        return True
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return a.shape == b.shape and a.dtype == b.dtype and bool(np.array_equal(a, b))
    return a == b


def _constant(c: np.ndarray) -> Reader:
    return lambda: c


def _mask_from(idx: np.ndarray, n: int) -> np.ndarray:
    m = np.zeros(n, dtype=bool)
    m[idx] = True
    return m


def wave_reduce(red: sem.Reduction, x: np.ndarray, a: np.ndarray) -> np.ndarray:
    """Reduce x [waves, W] over the active lanes a [waves, W]; one value per wave."""
    return red.fold(np.where(a, x, U32(red.identity)))
