"""Machine state of one batch: registers, predicates, lane masks, control frames, lane identities.

Every lane of a batch of workgroups runs the same instruction stream. Registers are immutable
NumPy arrays ([N] uint32, or 0-d for a value uniform over the batch); a write rebinds the
register's entry (with np.where under a partial mask), so no register file is copied or
zero-filled and uniform values cost nothing until they meet per-lane data.

The operations (emulator/ops) are plain functions of (state, instruction, pc); this module owns
what they share: operand readers and writers, the executing-lane mask, statistics and traps.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeGuard

import numpy as np

from ..errors import Trap, UndefinedBehaviour
from ..isa.instruction import Imm, Instruction, Pair, Pred, Reg, SReg
from ..isa.registers import SReg as SR
from ..isa.structure import nesting
from ..isa.types import SUBREGS
from ..wbin.program import Kernel
from .bounds import Bounds
from .memory import Memory, pad16
from .stats import Stats

U32 = np.uint32
U64 = np.uint64

WATCH_FROM = 1 << 16  # issues before the endless-loop watch starts (no kernel of the tests gets there)

Op = Callable[[], "int | None"]
"""One compiled instruction: runs it, returns the next pc or None for pc + 1."""
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


@dataclass
class IfFrame:
    """An open `if`: the lanes that entered it and the condition (per lane, or 0-d if uniform)."""

    entry: np.ndarray
    cond: np.ndarray


@dataclass
class LoopFrame:
    """An open `loop`: the lanes that entered it, those that broke out, and those that continued
    in the current iteration."""

    entry: np.ndarray
    broke: np.ndarray
    continued: np.ndarray


Frame = IfFrame | LoopFrame

_CTAID = {SR.CTAID_X: "ctaid.x", SR.CTAID_Y: "ctaid.y", SR.CTAID_Z: "ctaid.z"}
_PER_LANE_SREG = {
    SR.TID_X: "tid.x",
    SR.TID_Y: "tid.y",
    SR.TID_Z: "tid.z",
    SR.WID: "wid",
    SR.LID: "lid",
    **_CTAID,
}


class State:
    """The state of one batch of consecutive workgroups (n_wg of them, from first_wg)."""

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
        self.bounds = launch.bounds
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
        self.alive = self.identity("real").copy() if self.padded else np.ones(N, dtype=bool)
        self.active = self.alive.copy()
        self.frames: list[Frame] = []
        self.issued = 0
        self.clock_reads = 0
        self.cls = [i.spec.cls for i in kernel.instructions]
        exact = self.bounds is not None and self.bounds.exact and kernel.accesses is not None
        # per pc, the buffer parameter an access must stay inside (exact bounds), else None
        self.tags: tuple[int | None, ...] = kernel.accesses if exact else (None,) * len(kernel.instructions)  # type: ignore[assignment]
        self.nest = nesting(kernel.instructions)
        self.closer = self._closers()
        # endless-loop watch (emulator.watch): past watch_at issues, a snapshot at an endloop
        self.watch_at = WATCH_FROM
        self.snapshot: tuple[object, ...] | None = None
        self.mask_changed()
        self.checker: object | None = None  # a checker.Checker under check=True (set by the machine)

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

    # ------------------------------------------------------------------ identities
    def identity(self, name: str) -> np.ndarray:
        """A per-lane identity array (tid.x, ctaid.y, lane_index, real, ...), made once."""
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
            return self.identity("lane_in_wg") < U32(self.T)
        if name == "real_idx":
            return np.flatnonzero(self.identity("real"))
        if name == "local_base":
            return self.identity("wg_in_batch").astype(np.int64) * self.local_stride
        if name == "lid":
            return np.tile(np.arange(W, dtype=U32), N // W)
        if name == "lane_index":
            return np.arange(N, dtype=np.int64)
        if name == "none":
            return np.zeros(N, dtype=bool)
        lin = self.identity("lane_in_wg")
        if name == "tid.x":
            return lin if wx == self.lanes_per_wg else lin % U32(wx)
        if name == "tid.y":
            return (lin // U32(wx)) % U32(wy)
        if name == "tid.z":
            return lin // U32(wx * wy)
        if name == "wid":
            return lin // U32(W)
        wg_lin = self.identity("wg_in_batch") + U32(self.first_wg)
        if name == "ctaid.x":
            return wg_lin if self.first_wg + self.n_wg <= gx else wg_lin % U32(gx)
        if name == "ctaid.y":
            return (wg_lin // U32(gx)) % U32(gy)
        if name == "ctaid.z":
            return wg_lin // U32(gx * gy)
        raise KeyError(name)

    @property
    def real(self) -> np.ndarray:
        return self.identity("real")

    @property
    def local_base(self) -> np.ndarray:
        return self.identity("local_base")

    def lane_ids(self, lane: int) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
        wg = tuple(int(self.identity(f"ctaid.{a}")[lane]) for a in "xyz")
        th = tuple(int(self.identity(f"tid.{a}")[lane]) for a in "xyz")
        return wg, th  # type: ignore[return-value]

    def lanes(self, x: np.ndarray) -> np.ndarray:
        """x as one value per lane."""
        return x if x.ndim else np.broadcast_to(x, (self.N,))

    # ------------------------------------------------------------------ traps and statistics
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
        from ..dis import format_instruction  # traps only: the disassembler is not needed to run

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

    def first_active_lane(self) -> int | None:
        return int(np.flatnonzero(self.active)[0]) if self.n_active else None

    def count(self, pc: int, m: np.ndarray | None) -> None:
        """Statistics of one issue of instruction pc by the lanes m (None: the active lanes)."""
        lanes = self.n_active if m is None or m is self.active else int(np.count_nonzero(m))
        self.stats.add(self.cls[pc], self.n_active_waves, lanes)

    # ------------------------------------------------------------------ masks
    def mask_changed(self) -> None:
        self.n_active = int(np.count_nonzero(self.active))
        self.full = self.n_active == self.n_real
        if self.full:
            self.n_active_waves = self.n_wg * self.waves_per_wg
        elif self.n_active:
            self.n_active_waves = int(np.count_nonzero(self.active.reshape(-1, self.W).any(axis=1)))
        else:
            self.n_active_waves = 0

    def set_active(self, mask: np.ndarray) -> None:
        self.active = mask
        self.mask_changed()

    def restrict(self, mask: np.ndarray, cond: np.ndarray) -> np.ndarray:
        """mask & cond; a condition uniform over the batch (0-d) costs no pass over the lanes."""
        if cond.ndim == 0:
            return mask if bool(cond) else self.identity("none")
        return mask & cond

    def exec_mask(self, guard: Reader | None) -> np.ndarray | None:
        """The executing lanes; None means every lane (the fast path)."""
        if guard is None:
            return None if self.full else self.active
        g = guard()
        if g.ndim == 0:
            if bool(g):
                return None if self.full else self.active
            return self.identity("none")
        return self.active & g

    def left_loop(self) -> np.ndarray | None:
        """Lanes that left the innermost loop's current iteration (break or continue)."""
        for fr in reversed(self.frames):
            if isinstance(fr, LoopFrame):
                return fr.broke | fr.continued
        return None

    def innermost_loop(self) -> LoopFrame:
        for fr in reversed(self.frames):
            if isinstance(fr, LoopFrame):
                return fr
        raise AssertionError("break or continue outside a loop (the structure check forbids it)")

    # ------------------------------------------------------------------ operands
    def sreg(self, sid: SR) -> Reader:
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
            uniform[sid] = int(self.identity(_CTAID[sid])[0])
        if sid in uniform:
            v = np.asarray(uniform[sid], dtype=U32)
            return lambda: v
        if sid == SR.CLOCK:

            def clock() -> np.ndarray:
                self.clock_reads += 1
                return np.asarray(self.issued & 0xFFFFFFFF, dtype=U32)

            return clock
        name = _PER_LANE_SREG[sid]
        return lambda: self.identity(name)

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
            return self.sreg(SR(op.id))
        raise TypeError(op)

    def set_reg(self, n: int, v: np.ndarray, m: np.ndarray | None) -> None:
        if v.dtype != U32:
            v = v.astype(U32)
        self.regs[n] = v if m is None else np.where(m, v, self.regs[n])

    def scatterer(self, op: object) -> Callable[[np.ndarray, np.ndarray], None] | None:
        """For a whole register or a predicate (and no checker): a writer of values computed on
        the executing lanes idx only (a copy and a scatter instead of np.where over every lane);
        None for other destinations."""
        if self.checker is not None:
            return None
        regs, preds, lanes = self.regs, self.preds, self.lanes
        if isinstance(op, Reg) and op.sel == 0:
            n = op.n

            def scatter_reg(idx: np.ndarray, v: np.ndarray) -> None:
                new = np.array(lanes(regs[n]))
                new[idx] = v if v.dtype == U32 else v.astype(U32)
                regs[n] = new

            return scatter_reg
        if isinstance(op, Pred):
            n = op.n

            def scatter_pred(idx: np.ndarray, v: np.ndarray) -> None:
                new = np.array(lanes(preds[n]))
                new[idx] = np.asarray(v, dtype=bool)
                preds[n] = new

            return scatter_pred
        return None

    def sparse(self, m: np.ndarray | None) -> TypeGuard[np.ndarray]:
        """Whether the executing lanes m are few enough (a quarter of the batch at most) that
        computing on them alone beats computing on every lane and merging (never for m None:
        every lane executes)."""
        return m is not None and self.n_active * 4 <= self.N

    def writer(self, op: object) -> Writer:
        w = self._writer(op)
        chk = self.checker
        if chk is None:
            return w
        first, count, pred = (op.n, 2 if isinstance(op, Pair) else 1, isinstance(op, Pred))  # type: ignore[union-attr]

        def checked(v: np.ndarray, m: np.ndarray | None) -> None:
            w(v, m)
            chk.mark(first, count, m, pred)  # type: ignore[attr-defined]

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
