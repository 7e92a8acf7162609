"""Structured control flow (if/else/endif, loop/break/continue/endloop, ret) and barriers.

Control rows change the lane masks and return the next pc (None: the next instruction). When
no lane is left in a construct, execution jumps to its closer (the run loop does it for the
other rows, with State's `closer` table)."""

from __future__ import annotations

import numpy as np

from ...isa.instruction import Instruction
from ...isa.vocabulary import Nest
from ..state import IfFrame, Lanes, LoopFrame, State, Step
from ..watch import watch


def leave_construct(st: State, entry: np.ndarray) -> None:
    """After a construct: its entry lanes that are still alive and did not leave the enclosing
    loop's iteration are active again."""
    mask = entry & st.alive
    left = st.left_loop()
    st.set_active(mask if left is None else mask & ~left)


def compile_control(st: State, inst: Instruction, pc: int) -> Step:
    role = inst.spec.nest
    guard = st.guard_reader(inst)
    W = st.W
    nest = st.nest
    closer = st.closer[pc]
    preds = st.preds
    stats = st.stats

    if role is Nest.OPEN_IF:
        pn = inst.operands[0].n  # type: ignore[union-attr]
        els, end = nest.match[pc]
        uniform = inst.spec.uniform
        chk = st.checker

        def run_if() -> int | None:
            entry = st.active
            p = preds[pn]
            then = st.restrict(entry, p)
            if chk and uniform:
                chk.uniform_branch(pc, then, entry)  # type: ignore[attr-defined]
            st.frames.append(IfFrame(entry, p))
            st.count(pc, None)
            stats.branches += st.n_active_waves
            n_then = (st.n_active if bool(p) else 0) if p.ndim == 0 else int(np.count_nonzero(then))
            if then is entry and n_then:  # a uniform condition: every active lane takes the then side
                return None
            if 0 < n_then < st.n_active:
                tw = then.reshape(-1, W).any(axis=1)
                ew = (entry & ~p).reshape(-1, W).any(axis=1)
                stats.divergent_branches += int(np.count_nonzero(tw & ew))
            st.set_active(then)
            if n_then == 0:
                return els if els is not None else end
            return None

        return run_if

    if role is Nest.ELSE:
        end = nest.closer(nest.opener[pc])

        def run_else() -> int | None:
            fr = st.frames[-1]
            assert isinstance(fr, IfFrame)
            cond = fr.cond
            mask = st.restrict(fr.entry, ~cond) & st.alive
            left = st.left_loop()
            st.set_active(mask if left is None else mask & ~left)
            st.count(pc, None)
            return end if st.n_active == 0 else None

        return run_else

    if role is Nest.CLOSE and not nest.is_loop(nest.opener[pc]):

        def run_endif() -> int | None:
            fr = st.frames.pop()
            leave_construct(st, fr.entry)
            st.count(pc, None)
            return closer if st.n_active == 0 else None

        return run_endif

    if role is Nest.OPEN_LOOP:

        def run_loop() -> None:
            z = st.per_lane(Lanes.NONE)
            st.frames.append(LoopFrame(st.active, z, z))
            st.count(pc, None)

        return run_loop

    if role is Nest.CLOSE:
        start = nest.opener[pc]

        def run_endloop() -> int | None:
            fr = st.frames[-1]
            assert isinstance(fr, LoopFrame)
            st.count(pc, None)
            nxt = fr.entry & st.alive & ~fr.broke
            if nxt.any():
                if st.issued >= st.watch_at:
                    watch(st, pc)
                fr.continued = st.per_lane(Lanes.NONE)
                st.set_active(nxt)
                return start + 1
            st.frames.pop()
            leave_construct(st, fr.entry)
            return closer if st.n_active == 0 else None

        return run_endloop

    if role in (Nest.BREAK, Nest.CONTINUE):
        pn = inst.operands[0].n  # type: ignore[union-attr]
        brk = role is Nest.BREAK

        def run_jump() -> int | None:
            lanes = st.restrict(st.active, preds[pn])
            if guard is not None:
                lanes = st.restrict(lanes, guard())
            st.count(pc, None)
            if not (st.n_active if lanes is st.active else lanes.any()):
                return None
            fr = st.innermost_loop()
            if brk:
                fr.broke = fr.broke | lanes
            else:
                fr.continued = fr.continued | lanes
            st.set_active(st.active & ~lanes)
            return closer if st.n_active == 0 else None

        return run_jump

    if role is Nest.RET:

        def run_ret() -> int | None:
            lanes = st.active if guard is None else st.restrict(st.active, guard())
            st.count(pc, None)
            st.alive = st.alive & ~lanes
            st.set_active(st.active & ~lanes)
            return closer if st.n_active == 0 else None

        return run_ret
    raise NotImplementedError(inst.spec.name)


def compile_barrier(st: State, inst: Instruction, pc: int) -> Step:
    chk = st.checker
    stats = st.stats

    def run() -> None:
        if chk:
            chk.barrier(pc)  # type: ignore[attr-defined]
        if st.full:
            stats.barriers += st.n_wg
        else:
            stats.barriers += int(np.count_nonzero(st.active.reshape(st.n_wg, -1).any(axis=1)))
        st.count(pc, None)

    return run
