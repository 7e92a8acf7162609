"""The undefined-behaviour checker (check=True): reports what the spec leaves undefined."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from ..errors import Trap
from ..isa.instruction import Mem, Pair, Pred, Reg, Vec


class _Local(Protocol):
    u8: np.ndarray


class _Launch(Protocol):
    args: tuple[int, ...]


class Machine(Protocol):
    """What the checker reads of a batch (emulator.state.State provides it)."""

    regs: list[np.ndarray]
    preds: list[np.ndarray]
    N: int
    W: int
    n_wg: int
    lanes_per_wg: int
    active: np.ndarray
    alive: np.ndarray

    @property  # read-only here: a property lets State's own Launch and Memory stand for them
    def launch(self) -> _Launch: ...

    @property
    def local(self) -> _Local: ...

    @property
    def local_base(self) -> np.ndarray: ...

    def lane_ids(self, lane: int) -> tuple[tuple[int, int, int], tuple[int, int, int]]: ...

    def trap(
        self,
        pc: int,
        reason: str,
        lane: int | None = None,
        address: int | None = None,
        ub: bool = False,
        array: str | None = None,
        index: int | None = None,
    ) -> Trap: ...


class Checker:
    """Tracks register initialisation and local-memory accesses between barriers of one batch."""

    def __init__(self, batch: Machine):
        self.b = batch
        R, N = len(batch.regs), batch.N
        self.written = np.zeros((R, N), dtype=bool)
        self.written[: min(len(batch.launch.args), R)] = True
        self.pwritten = np.zeros((len(batch.preds), N), dtype=bool)
        size = batch.local.u8.size
        self.writer = np.full(size, -1, dtype=np.int64)
        self.reader = np.full(size, -1, dtype=np.int64)

    # -- registers
    def mark(self, first: int, count: int, m: np.ndarray | None, pred: bool = False) -> None:
        arr = self.pwritten if pred else self.written
        for r in range(first, first + count):
            if m is None:
                arr[r] = True
            else:
                arr[r] |= m

    def reads(self, pc: int, operands: list[object], m: np.ndarray | None) -> None:
        lanes = self.b.active if m is None else m
        for op in operands:
            if isinstance(op, Reg):
                regs = [op.n]
            elif isinstance(op, Pair):
                regs = [op.n, op.n + 1]
            elif isinstance(op, Vec):
                regs = list(range(op.n, op.n + op.count))
            elif isinstance(op, Mem) and op.base is not None:
                regs = [op.base]
            elif isinstance(op, Pred):
                bad = lanes & ~self.pwritten[op.n]
                if bad.any():
                    lane = int(np.flatnonzero(bad)[0])
                    raise self.b.trap(pc, f"read of p{op.n} before any write", lane, ub=True)
                continue
            else:
                continue
            for r in regs:
                bad = lanes & ~self.written[r]
                if bad.any():
                    lane = int(np.flatnonzero(bad)[0])
                    raise self.b.trap(
                        pc,
                        f"read of r{r} before any write (registers start undefined)",
                        lane,
                        ub=True,
                    )

    # -- control flow
    def barrier(self, pc: int) -> None:
        b = self.b
        act = b.active.reshape(b.n_wg, -1)
        alive = b.alive.reshape(b.n_wg, -1)
        divergent = act.any(axis=1) & (alive & ~act).any(axis=1)
        if divergent.any():
            wg = int(np.flatnonzero(divergent)[0])
            lane_in = int(np.flatnonzero(alive[wg] & ~act[wg])[0])
            raise b.trap(
                pc,
                "barrier in divergent control flow: a thread of this workgroup that has not "
                "exited does not reach this barrier",
                wg * b.lanes_per_wg + lane_in,
                ub=True,
            )
        self.writer[:] = -1
        self.reader[:] = -1

    def uniform_branch(self, pc: int, then: np.ndarray, entry: np.ndarray) -> None:
        W = self.b.W
        t = then.reshape(-1, W).any(axis=1)
        e = (entry & ~then).reshape(-1, W).any(axis=1)
        bad = t & e
        if bad.any():
            wave = int(np.flatnonzero(bad)[0])
            lane = wave * W + int(np.flatnonzero((entry & ~then).reshape(-1, W)[wave])[0])
            raise self.b.trap(
                pc,
                "divergent @uniform branch: the condition differs between active lanes of a wave",
                lane,
                ub=True,
            )

    def shuffle_source(self, pc: int, m: np.ndarray | None, src: np.ndarray, in_range: np.ndarray) -> None:
        lanes = self.b.active if m is None else m
        bad = lanes & in_range & ~self.b.active[src]
        bad &= self.b.alive[src] | True  # an exited or inactive source lane is equally undefined
        if bad.any():
            lane = int(np.flatnonzero(bad)[0])
            raise self.b.trap(
                pc,
                f"wave operation reads lane {int(src[lane]) % self.b.W}, which is inactive",
                lane,
                ub=True,
            )

    # -- local memory races
    def local_access(self, pc: int, idx: np.ndarray | None, addr: np.ndarray, width: int, write: bool) -> None:
        b = self.b
        lanes = np.arange(b.N) if idx is None else idx
        if lanes.size == 0:
            return
        byte = (addr[:, None] + np.arange(width)).reshape(-1)
        who = np.repeat(lanes.astype(np.int64), width)
        w = self.writer[byte]
        other_w = (w != -1) & (w != who)
        if write:
            r = self.reader[byte]
            other_r = (r == -2) | ((r != -1) & (r != who))
            order = np.argsort(byte, kind="stable")
            sb, sw = byte[order], who[order]
            dup = np.zeros(byte.size, dtype=bool)
            dup[order[1:]] = (sb[1:] == sb[:-1]) & (sw[1:] != sw[:-1])
            bad = other_w | other_r | dup
        else:
            bad = other_w
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            a = int(byte[i] - b.local_base[who[i]])
            first = int(w[i]) if w[i] >= 0 else int(self.reader[byte[i]])
            other = ""
            if first >= 0:
                _wg, th = b.lane_ids(first)
                other = f" (thread {th} touched it before, no barrier between)"
            raise b.trap(
                pc,
                f"local-memory race on byte {a}: one access writes{other}",
                int(who[i]),
                a,
                ub=True,
            )
        if write:
            self.writer[byte] = who
        else:
            r = self.reader[byte]
            self.reader[byte] = np.where((r == -1) | (r == who), who, -2)

    def finish(self) -> None:
        """Nothing is pending at the end of a batch."""
