"""The endless-loop watch: past WATCH_FROM issues, the state at an `endloop` is compared with
the state there at a doubling issue count. A loop that comes back to the same registers,
predicates and lane masks, having written no memory and read no %clock, can never finish (the
machine is deterministic) and traps at once, long before the instruction budget."""

from __future__ import annotations

import dataclasses

import numpy as np

from .state import State


def _copy(state: object) -> object:
    """A deep copy of machine state (lists of arrays, frames and values)."""
    if isinstance(state, list):
        return [_copy(x) for x in state]
    if isinstance(state, np.ndarray):
        return state.copy()
    if dataclasses.is_dataclass(state) and not isinstance(state, type):
        return dataclasses.replace(state, **{f.name: _copy(getattr(state, f.name)) for f in dataclasses.fields(state)})
    return state


def same(a: object, b: object) -> bool:
    """Equal machine state: arrays by value, lists (registers) and frames element-wise."""
    if a is b:
        return True
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return a.shape == b.shape and a.dtype == b.dtype and bool(np.array_equal(a, b))
    if dataclasses.is_dataclass(a) and type(a) is type(b):
        return all(same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    return a == b


def _state(st: State, pc: int) -> tuple[object, ...]:
    s = st.stats
    writes = (s.device_bytes_written, s.local_bytes_written, s.atomics, st.clock_reads)
    # copies: a snapshot holding the live arrays could share them with the present state
    return (
        pc,
        writes,
        _copy(st.regs),
        _copy(st.preds),
        st.active.copy(),
        st.alive.copy(),
        _copy(st.frames),
        st.issued,
    )


def watch(st: State, pc: int) -> None:
    """At an endloop whose loop goes on: snapshot the state, or compare with the snapshot.
    Snapshots are taken at doubling issue counts, so the watch costs nothing measurable."""
    now = _state(st, pc)
    snap = st.snapshot
    if snap is not None and snap[0] == pc:
        if snap[1] == now[1] and all(same(a, b) for a, b in zip(snap[2:7], now[2:7])):
            raise st.trap(
                pc,
                f"endless loop: after {st.issued:,} instructions the loop ending here came round to "
                "exactly the state of its previous iteration (registers, predicates, active lanes; no "
                "memory written, no %clock read), so it can never finish",
                st.first_active_lane(),
            )
        st.snapshot = None
        st.watch_at = 2 * st.issued
    elif snap is None or st.issued >= 2 * snap[7]:  # type: ignore[operator]
        st.snapshot = now  # (again, when the last snapshot's endloop is not coming back)
