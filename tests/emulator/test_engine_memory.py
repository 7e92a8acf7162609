"""The NumPy engine frees each batch when it finishes and keeps a run's peak memory near the
device memory; its operations are plain functions usable outside the interpreter."""

from __future__ import annotations

import gc
import tracemalloc
import weakref
from pathlib import Path

import numpy as np
import pytest

import wavegpu as wg
from wavegpu.emulator import launch as L
from wavegpu.emulator.machine import Batch
from wavegpu.emulator.memory import Memory
from wavegpu.emulator.ops import execute
from wavegpu.emulator.state import IfFrame, Lanes, Launch, LoopFrame, State
from wavegpu.emulator.stats import Stats
from wavegpu.isa import Instruction, Reg, row

EX = Path(__file__).resolve().parents[2] / "examples"


def _vadd(n: int) -> tuple[wg.Program, np.ndarray, dict[str, object]]:
    prog = wg.assemble((EX / "vector_add.wave").read_text())
    mem = np.concatenate([np.arange(n, dtype=np.float32), np.full(n, 2.0, np.float32), np.zeros(n, np.float32)])
    return prog, mem, {"grid": n // 256, "memory": mem, "args": [0, 4 * n, 8 * n, n]}


def test_batches_are_freed_when_they_finish_without_a_garbage_collection(monkeypatch: pytest.MonkeyPatch) -> None:
    refs: list[weakref.ref[Batch]] = []

    class Recorded(Batch):
        def run(self) -> None:
            refs.append(weakref.ref(self))
            super().run()

    monkeypatch.setattr(L, "Batch", Recorded)
    prog, _mem, call = _vadd(1 << 12)
    loop = wg.assemble(".kernel k\n.registers 3\nmov.u32 r1, 0\nloop\nadd.u32 r1, r1, 1\nsetp.ge.u32 p0, r1, 3\n"
                       "break p0\nendloop\nst.global.b32 [0], r1\n.end")  # fmt: skip
    gc.collect()
    gc.disable()
    try:
        wg.emulate(prog, **call, batch_lanes=1024)  # 4 batches
        wg.emulate(loop, grid=8, workgroup=32, memory=16, batch_lanes=64, check=True)
        with pytest.raises(wg.Trap):  # a trapping batch is freed too, once the trap is dropped
            wg.emulate(prog, grid=16, memory=16, args=[0, 0, 0, 4096], batch_lanes=1024)
        assert len(refs) == 4 + 4 + 1
        alive = [i for i, r in enumerate(refs) if r() is not None]
        assert not alive, f"batches {alive} are kept alive by reference cycles"
    finally:
        gc.enable()


def test_peak_memory_is_near_the_device_memory() -> None:
    """Peak (tracemalloc) of a run: at most 3x the device memory plus one batch's working set."""
    prog, _mem, call = _vadd(1 << 20)  # 12 MiB of device memory, 16 batches of 2^16 lanes
    device = 12 << 20
    wg.emulate(prog, **call, batch_lanes=1 << 16)
    gc.collect()
    tracemalloc.start()
    try:
        res = wg.emulate(prog, **call, batch_lanes=1 << 16)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert res.view(np.float32, 8 << 20, 1 << 20)[5] == 7.0
    batch_set = (1 << 16) * 4 * 24  # 2^16 lanes, a dozen registers and as many temporaries
    assert peak <= 3 * device + batch_set, (peak / 2**20, device / 2**20)


def test_kernels_with_loops_run_in_cache_sized_batches() -> None:
    loop = wg.assemble(".kernel k\n.registers 3\nmov.u32 r1, 0\nloop\nadd.u32 r1, r1, 1\nsetp.ge.u32 p0, r1, 2\n"
                       "break p0\nendloop\n.end")  # fmt: skip
    straight = wg.assemble(".kernel k\n.registers 2\nmov.u32 r1, %tid.x\n.end")
    grid = L.BATCH_LANES // 256  # one batch of a kernel without loops
    assert L.BATCH_LANES > L.LOOP_BATCH_LANES
    assert wg.emulate(loop, grid=grid, workgroup=256).stats.batches == L.BATCH_LANES // L.LOOP_BATCH_LANES
    assert wg.emulate(straight, grid=grid, workgroup=256).stats.batches == 1


def _state(n_wg: int = 1) -> State:
    k = wg.assemble(".kernel k\n.registers 8\n.predicates 2\nret\n.end").kernel(0)
    mem = Memory(np.zeros(64, np.uint8), 64, "global")
    return State(k, Launch((n_wg, 1, 1), (32, 1, 1), 32, (), 100, False), 0, n_wg, mem, mem, Stats())


def test_operations_run_outside_the_interpreter() -> None:
    st = _state()
    st.regs[1] = np.arange(32, dtype=np.uint32)
    st.regs[2] = np.asarray(5, dtype=np.uint32)  # uniform
    assert execute(st, Instruction(row("add.u32"), (Reg(3), Reg(1), Reg(2))), 0) is None
    np.testing.assert_array_equal(st.regs[3], np.arange(32) + 5)
    execute(st, Instruction(row("shl.b32"), (Reg(4), Reg(1), Reg(2))), 0)
    store = Instruction(row("st.global.b32"), (wg.isa.Mem(4, 0), Reg(3)))  # to address 32 * lane
    st.set_active(np.arange(32) < 2)  # lanes 0 and 1 store inside the 64 bytes
    execute(st, store, 0)
    assert list(st.device.u32[[0, 8]]) == [5, 6]
    st.set_active(np.ones(32, dtype=bool))  # lane 2 is the first to leave them
    with pytest.raises(wg.Trap, match="out-of-bounds global access") as ei:
        execute(st, store, 0)
    assert ei.value.thread == (2, 0, 0)


def test_uniform_conditions_and_typed_frames() -> None:
    st = _state()
    st.preds[0] = np.asarray(True)
    before = st.active
    assert st.restrict(st.active, st.preds[0]) is before  # no pass over the lanes
    assert not st.restrict(st.active, np.asarray(False)).any()
    st.frames.append(IfFrame(st.active, st.preds[0]))
    st.frames.append(LoopFrame(st.active, st.per_lane(Lanes.NONE), st.per_lane(Lanes.NONE)))
    assert st.innermost_loop() is st.frames[-1] and not st.left_loop().any()


DIVERGENT = """
.kernel d
.param x, buffer, f32
.param out, buffer, u32
.param k, scalar, u32
.workgroup_size 256, 1, 1
    mov.u32 r3, %tid.x
    shl.b32 r4, r3, 2
    add.u32 r5, r0, r4
    ld.global.f32 r6, [r5]
    mov.b32 r7, 7
    mov.b32 r8, 9
    setp.lt.u32 p0, r3, r2
    setp.ge.u32 p1, r3, 1000
    if p0
        fma.f32 r7, r6, r6, r6
        mul.lo.u32 r8, r3, 3
        setp.lt.u32 p1, r3, 2
        ld.global.u32 r9, [r5]
        add.u32 r8, r8, r9
    endif
    mov.b32 r10, 1
    selp.b32 r10, r10, 0, p1
    add.u32 r11, r1, r4
    st.global.b32 [r11], r7
    add.u32 r11, r11, 1024
    st.global.b32 [r11], r8
    add.u32 r11, r11, 1024
    st.global.b32 [r11], r10
.end
"""


@pytest.mark.parametrize("k", [0, 3, 40, 64, 65, 200, 256])
def test_divergent_regions_compute_on_their_lanes_only_with_the_same_results(k: int) -> None:
    """Below a quarter of the lanes active, value rows and loads run on the active lanes alone
    (a gather, the operation, a scatter); the results equal the per-lane definition."""
    prog = wg.assemble(DIVERGENT)
    x = np.random.default_rng(k).standard_normal(256).astype(np.float32)
    mem = np.concatenate([x.view(np.uint32), np.zeros(3 * 256, np.uint32)])
    for check in (False, True):  # the checker takes the dense path: both must agree
        res = wg.emulate(prog, grid=1, memory=mem, args=[0, 1024, k], check=check)
        out = res.view(np.uint32, 1024, 3 * 256).reshape(3, 256)
        lane = np.arange(256)
        act = lane < k
        want_mul = np.where(act, (lane * 3 + x.view(np.uint32)).astype(np.uint32), 9)
        want_p = np.where(act, lane < 2, False).astype(np.uint32)
        np.testing.assert_array_equal(out[1], want_mul)
        np.testing.assert_array_equal(out[2], want_p)
        # fma against the emulator's own dense path (a run with every lane active)
        dense = wg.emulate(prog, grid=1, memory=mem, args=[0, 1024, 256]).view(np.uint32, 1024, 256)
        np.testing.assert_array_equal(out[0], np.where(act, dense, 7))
