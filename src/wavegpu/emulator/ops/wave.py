"""Wave operations: reductions, shuffles and broadcasts, prefix sums, ballots and votes.

The arithmetic of each is a plain function of arrays shaped [waves, W] (lanes of one wave in a
row), so another engine can run or test against it; `compile_wave` applies them to a batch.
"""

from __future__ import annotations

import numpy as np

from ...isa import semantics as sem
from ...isa.instruction import Instruction
from ...isa.types import Role
from ...isa.vocabulary import Op as VOp
from ...isa.vocabulary import ReduceOp, ShuffleMode
from ..state import Op, State

U32 = np.uint32


def wave_reduce(red: sem.Reduction, x: np.ndarray, a: np.ndarray) -> np.ndarray:
    """Reduce x [waves, W] over the active lanes a [waves, W]; one value per wave."""
    return red.fold(np.where(a, x, U32(red.identity)))


def shuffle_source(mode: ShuffleMode, lid: np.ndarray, b: np.ndarray, W: int) -> tuple[np.ndarray, np.ndarray]:
    """(the source lane in its wave, whether it lies in the wave) for lanes lid reading with
    operand b (int64); a lane whose source lies outside the wave reads itself."""
    if mode is ShuffleMode.IDX:
        return b % W, np.ones(np.broadcast_shapes(lid.shape, b.shape), dtype=bool)
    src = lid ^ b if mode is ShuffleMode.XOR else lid - b if mode is ShuffleMode.UP else lid + b
    ok = (src >= 0) & (src < W)
    return np.where(ok, src, lid), ok


def prefix_sum(x: np.ndarray, a: np.ndarray) -> np.ndarray:
    """Exclusive prefix sums (uint32, wrapping) of x [waves, W] over the active lanes a."""
    x = np.where(a, x, U32(0))
    return np.cumsum(x, axis=1, dtype=U32) - x


def ballot(p: np.ndarray, a: np.ndarray) -> np.ndarray:
    """Per wave, bit i set where lane i (< 32) is active with p true ([waves, W] -> [waves])."""
    W = p.shape[1]
    weights = (np.uint64(1) << np.arange(W, dtype=np.uint64)) & np.uint64(0xFFFFFFFF)
    return ((p & a).astype(np.uint64) * weights).sum(axis=1, dtype=np.uint64).astype(U32)


def vote(p: np.ndarray, a: np.ndarray, any_: bool) -> np.ndarray:
    """Per wave, whether p holds for any (or every) active lane."""
    return np.asarray((p & a).any(axis=1) if any_ else (p | ~a).all(axis=1))  # (a 1-d array: one per wave)


def compile_wave(st: State, inst: Instruction, pc: int) -> Op:
    spec = inst.spec
    W = st.W
    op = spec.op
    guard = st.guard_reader(inst)
    srcs = [st.reader(o) for o, s in zip(inst.operands, spec.operands) if s.role is Role.SRC]
    reads = [o for o, s in zip(inst.operands, spec.operands) if s.role is Role.SRC]
    dst = st.writer(inst.operands[0])
    chk = st.checker

    def spread(per_wave: np.ndarray) -> np.ndarray:
        return np.repeat(per_wave, W)

    def prologue() -> tuple[np.ndarray | None, np.ndarray]:
        m = st.exec_mask(guard)
        if chk:
            chk.reads(pc, reads, m)  # type: ignore[attr-defined]
        return m, (st.active if m is None else m)

    if op is VOp.REDUCE:
        red = sem.reduction_of(spec)

        def reduce() -> None:
            m, act = prologue()
            res = wave_reduce(red, st.lanes(srcs[0]()).reshape(-1, W), act.reshape(-1, W))
            dst(spread(res), m)
            st.count(pc, m)

        return reduce

    if op in (VOp.SHUFFLE, VOp.BROADCAST):
        mode = spec.variant
        assert isinstance(mode, ShuffleMode)

        def shuffle() -> None:
            m, _act = prologue()
            x = st.lanes(srcs[0]())
            b = st.lanes(srcs[1]()).astype(np.int64)
            ln = st.identity("lid").astype(np.int64)
            src, ok = shuffle_source(mode, ln, b, W)
            gidx = st.identity("lane_index") - ln + src
            if chk:
                chk.shuffle_source(pc, m, gidx, ok)  # type: ignore[attr-defined]
            dst(x[gidx], m)
            st.count(pc, m)

        return shuffle

    if op is VOp.PREFIX and spec.variant is ReduceOp.ADD:

        def prefix() -> None:
            m, act = prologue()
            x = st.lanes(srcs[0]()).reshape(-1, W)
            dst(prefix_sum(x, act.reshape(-1, W)).reshape(-1), m)
            st.count(pc, m)

        return prefix

    if op is VOp.BALLOT:

        def run_ballot() -> None:
            m, act = prologue()
            bits = ballot(st.lanes(srcs[0]()).reshape(-1, W), act.reshape(-1, W))
            dst(spread(bits), m)
            st.count(pc, m)

        return run_ballot

    if op in (VOp.ANY, VOp.ALL):
        is_any = op is VOp.ANY

        def run_vote() -> None:
            m, act = prologue()
            r = vote(st.lanes(srcs[0]()).reshape(-1, W), act.reshape(-1, W), is_any)
            dst(spread(r), m)
            st.count(pc, m)

        return run_vote
    raise NotImplementedError(spec.name)
