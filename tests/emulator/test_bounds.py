"""Per-buffer bounds (emulate(buffers=..., boundscheck=...)) and the instruction budget's traps."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kit import run

import wavegpu as wg
from wavegpu.emulator import BufferRegion
from wavegpu.emulator.bounds import Bounds
from wavegpu.wbin.program import Kernel, Param

VECTOR_ADD = """.kernel vector_add
.param a, buffer, f32
.param b, buffer, f32
.param c, buffer, f32
.param n, scalar, u32
    mov.u32 r4, %tid.x
    setp.ge.u32 p0, r4, r3
    @p0 ret
    shl.b32 r5, r4, 2
    add.u32 r6, r0, r5
    ld.global.f32 r7, [r6]
    add.u32 r6, r1, r5
    ld.global.f32 r8, [r6]
    add.f32 r7, r7, r8
    add.u32 r6, r2, r5
    st.global.f32 [r6], r7
    ret
.end"""
GLOBAL_PCS = (5, 7, 10)  # the two loads and the store


def regions(size: int, gap: int) -> list[BufferRegion]:
    """a, b, c of `size` f32 elements each, `gap` bytes apart."""
    step = 4 * size + gap
    return [BufferRegion(p, name, p * step, 4 * size, 4) for p, name in enumerate("abc")]


def vector_add(tagged: bool) -> Kernel:
    k = wg.assemble(VECTOR_ADD, "va.wave").kernels[0]
    if not tagged:
        return k
    acc = [None] * len(k.instructions)
    for p, pc in enumerate(GLOBAL_PCS):
        acc[pc] = p
    return dataclasses.replace(k, accesses=tuple(acc))


def launch(k: Kernel, n: int, regs: list[BufferRegion], **kw: object) -> wg.EmulationResult:
    mem = np.zeros(regs[-1].end + 64, np.uint8)
    return wg.emulate(k, workgroup=64, memory=mem, args=[r.offset for r in regs] + [n], buffers=regs, **kw)


def test_in_bounds_runs_and_an_overflow_into_a_gap_traps_naming_the_array() -> None:
    regs = regions(10, 64)
    res = launch(vector_add(False), 10, regs)
    assert res.memory.size == regs[-1].end + 64
    with pytest.raises(wg.Trap) as ei:
        launch(vector_add(False), 14, regs)  # 70 elements in a 10-element array, before: filled b
    e = ei.value
    assert (e.array, e.index, e.pc, e.thread, e.workgroup, e.address) == ("a", 10, 5, (10, 0, 0), (0, 0, 0), 40)
    assert "out-of-bounds load from a[10]: a has 10 element(s) of 4 byte(s) at addresses 0..39" in str(e)


def test_without_buffers_an_overflow_is_silent_as_before() -> None:
    regs = regions(10, 0)
    mem = np.zeros(regs[-1].end + 64, np.uint8)
    res = wg.emulate(vector_add(True), workgroup=64, memory=mem, args=[0, 40, 80, 12], boundscheck=False)
    assert res.view(np.float32, 120, 2).tolist() == [0.0, 0.0]  # c[10], c[11] written past c's end


def test_exact_checking_needs_tags_and_boundscheck_or_check() -> None:
    regs = regions(10, 0)  # back to back: a[10] is b[0]
    launch(vector_add(True), 10, regs, boundscheck=True)
    # a[10] lies inside b: fine for the any-array check, a trap for the exact one
    with pytest.raises(wg.Trap) as ei:
        launch(vector_add(False), 12, regs)
    assert ei.value.array == "c" and ei.value.index == 10  # only c's overflow leaves every array
    for kw in ({"boundscheck": True}, {"check": True}):
        with pytest.raises(wg.Trap, match=r"load from a\[10\].*the address lies inside b") as ei:
            launch(vector_add(True), 12, regs, **kw)
        assert (ei.value.array, ei.value.index, ei.value.pc) == ("a", 10, 5)
    with pytest.raises(wg.Trap) as ei:  # untagged kernel: boundscheck cannot be exact
        launch(vector_add(False), 12, regs, boundscheck=True)
    assert ei.value.array == "c"


def test_negative_index_and_the_access_table_names_the_array() -> None:
    regs = regions(10, 64)
    k = vector_add(True)
    src = VECTOR_ADD.replace("shl.b32 r5, r4, 2", "shl.b32 r5, r4, 2\n    sub.u32 r5, r5, 8")
    k = dataclasses.replace(k, instructions=wg.assemble(src).kernels[0].instructions)
    acc = [None] * len(k.instructions)
    for p, pc in enumerate((6, 8, 11)):
        acc[pc] = p
    k = dataclasses.replace(k, accesses=tuple(acc))
    with pytest.raises(wg.Trap) as ei:  # a[-2] wraps below address 0
        launch(k, 4, regs)
    assert (ei.value.array, ei.value.index, ei.value.thread) == ("a", -2, (0, 0, 0))
    # b[-2] lies just past a's end: the access table names b, though a is nearer
    src = ".kernel t\n.param a, buffer, f32\n.param b, buffer, f32\n    sub.u32 r3, r1, 8\n    ld.global.b32 r2, [r3]\n.end"
    k2 = wg.assemble(src).kernels[0]
    regs2 = [BufferRegion(0, "a", 0, 40, 4), BufferRegion(1, "b", 48, 40, 4)]
    for accesses, want in (((None, 1), ("b", -2)), (None, ("a", 10))):
        kk = dataclasses.replace(k2, accesses=accesses)
        with pytest.raises(wg.Trap) as ei:
            wg.emulate(kk, workgroup=1, memory=96, args=[0, 48], buffers=regs2)
        assert (ei.value.array, ei.value.index) == want


@pytest.mark.parametrize(
    ("op", "width"),
    [
        ("ld.global.u8 r1, [r0]", 1),
        ("ld.global.s16 r1, [r0]", 2),
        ("ld.global.b32 r1, [r0]", 4),
        ("ld.global.b64 r2:r3, [r0]", 8),
        ("ld.global.v2.b32 {r2, r3}, [r0]", 8),
        ("ld.global.v4.b32 {r4, r5, r6, r7}, [r0]", 16),
        ("st.global.b8 [r0], r1", 1),
        ("st.global.b16 [r0], r1", 2),
        ("st.global.b32 [r0], r1", 4),
        ("st.global.b64 [r0], r2:r3", 8),
        ("st.global.v4.b32 [r0], {r4, r5, r6, r7}", 16),
        ("atom.global.add.u32 r1, [r0], r1", 4),
        ("red.global.cas.b32 [r0], r1, r2", 4),
    ],
)
def test_every_width_and_kind_is_checked(op: str, width: int) -> None:
    src = f".kernel t\n.param x, buffer, u8\n.registers 8\n    {op}\n.end"
    mem = np.zeros(256, np.uint8)
    for off, ok in ((64 - width, True), (64, False), (16 - width, False)):
        reg = [BufferRegion(0, "x", 16, 48, 1)]
        if ok:
            run(src, workgroup=1, memory=mem, args=[off], buffers=reg)
            continue
        with pytest.raises(wg.Trap, match="out-of-bounds") as ei:
            run(src, workgroup=1, memory=mem, args=[off], buffers=reg)
        assert ei.value.array == "x" and ei.value.index == off - 16


def test_trap_names_the_python_source_line(tmp_path: object) -> None:
    path = tmp_path / "k.py"  # type: ignore[operator]
    path.write_text(
        "import wavegpu as wg\n\n@wg.kernel\ndef k(x: wg.f32[:], y: wg.f32[:]):\n"
        "    i = wg.global_id()\n    y[i] = x[i] * 2.0\n"
    )
    k = wg.compile(str(path)).kernels[0]
    regs = [BufferRegion(0, "x", 0, 40, 4), BufferRegion(1, "y", 64, 40, 4)]
    mem = np.zeros(128, np.uint8)
    with pytest.raises(wg.Trap) as ei:
        wg.emulate(k, workgroup=12, memory=mem, args=[0, 64], buffers=regs, boundscheck=True)
    e = ei.value
    assert (e.array, e.index, e.thread, e.source) == ("x", 10, (10, 0, 0), f"{path}:6:12")
    assert f"at {path}:6:12" in str(e) and "kernel 'k'" in str(e)


def test_bad_buffer_descriptions_are_errors() -> None:
    k = vector_add(True)
    good = regions(4, 0)
    mem = np.zeros(64, np.uint8)
    cases = [
        ([dataclasses.replace(good[0], nbytes=100)], "beyond device memory"),
        ([good[0], dataclasses.replace(good[1], param=0)], "described twice"),
        ([BufferRegion(3, "n", 0, 4, 4)], "not a buffer"),
        ([BufferRegion(7, "z", 0, 4, 4)], "names parameter 7"),
        ([BufferRegion(0, "a", -4, 4, 4)], "offset -4"),
        ([(0, "a", 0, 4, 4)], "expected BufferRegion"),
    ]
    for regs, msg in cases:
        with pytest.raises(wg.WaveError, match=msg):
            wg.emulate(k, workgroup=1, memory=mem, args=[0, 16, 32, 1], buffers=regs)  # type: ignore[arg-type]
    with pytest.raises(wg.WaveError, match="needs buffers="):
        wg.emulate(k, workgroup=1, memory=mem, args=[0, 16, 32, 1], boundscheck=True)
    bad = dataclasses.replace(k, accesses=(None,) * 3)
    with pytest.raises(wg.WaveError, match="access table has 3 entries"):
        wg.emulate(bad, workgroup=1, memory=mem, args=[0, 16, 32, 1])
    bad = dataclasses.replace(k, accesses=(0,) + (None,) * (len(k.instructions) - 1))
    with pytest.raises(wg.Trap, match="no global access"):
        wg.emulate(bad, workgroup=1, memory=mem, args=[0, 16, 32, 1])


@st.composite
def layouts(draw: st.DrawFn) -> tuple[list[BufferRegion], np.ndarray, int, int | None]:
    n = draw(st.integers(0, 4))
    regs = []
    for p in range(n):
        off = draw(st.integers(0, 200))
        regs.append(BufferRegion(p, f"r{p}", off, draw(st.integers(0, 60)), draw(st.sampled_from([1, 2, 4]))))
    width = draw(st.sampled_from([1, 2, 4, 8, 16]))
    addrs = draw(st.lists(st.integers(0, 280), min_size=1, max_size=40))
    tag = draw(st.one_of(st.none(), st.integers(0, max(n - 1, 0)))) if n else None
    return regs, np.array(addrs, np.uint32), width, tag


@settings(max_examples=300, deadline=None)
@given(layouts(), st.booleans())
def test_vectorised_check_matches_a_lane_by_lane_reference(
    case: tuple[list[BufferRegion], np.ndarray, int, int | None], exact: bool
) -> None:
    regs, addr, width, tag = case
    k = Kernel("k", (), 1, 1, params=tuple(Param(r.name, "buffer", wg.isa.types.DataType.U8) for r in regs))
    b = Bounds(regs, 1000, k, exact)

    def inside(a: int) -> bool:
        if exact and tag is not None:
            r = regs[tag]
            return r.offset <= a and a + width <= r.end
        return any(r.offset <= a and a + width <= r.end for r in regs)

    bad = [i for i, a in enumerate(addr.tolist()) if not inside(a)]
    assert b.first_outside(addr, width, int(addr.max()), tag) == (bad[0] if bad else -1)


# ---- the instruction budget and endless loops
def test_an_endless_loop_without_progress_stops_long_before_the_budget() -> None:
    src = ".kernel spin\nmov.b32 r1, 0\nloop\nadd.u32 r1, r1, 0\nendloop\n.end"
    with pytest.raises(wg.Trap, match="endless loop: after") as ei:
        run(src, workgroup=64, grid=4)
    assert ei.value.pc == 3 and ei.value.thread == (0, 0, 0)
    issued = int(str(ei.value).split("after ")[1].split(" ")[0].replace(",", ""))
    assert issued < 4 * (1 << 16) < wg.emulator.DEFAULT_MAX_INSTRUCTIONS


def test_loops_reading_the_clock_or_writing_memory_are_not_called_endless() -> None:
    # the same registers at every endloop, but %clock decides when it ends: it finishes
    src = """.kernel wait
    loop
    mov.u32 r1, %clock
    setp.gt.u32 p0, r1, 300000
    break p0
    mov.b32 r1, 0
    endloop
    mov.b32 r2, 7
    st.global.b32 [0], r2
    .end"""
    assert run(src, workgroup=1, memory=16).memory.view(np.uint32)[0] == 7
    # an iteration that stores is not proved endless; the budget stops it, and says how to raise it
    src = ".kernel w\nmov.b32 r1, 0\nloop\nst.global.b32 [0], r1\nendloop\n.end"
    with pytest.raises(wg.Trap, match=r"instruction budget exhausted.*max_instructions=200000.*max_instructions=N"):
        run(src, workgroup=1, memory=16, max_instructions=200_000)


# ---- malloc tuning is scoped to the run
class FakeLibc:
    def __init__(self) -> None:
        self.calls: list[tuple[str, int, int]] = []

    def mallopt(self, param: int, value: int) -> int:
        self.calls.append(("mallopt", param, value))
        return 1

    def malloc_trim(self, pad: int) -> int:
        self.calls.append(("trim", pad, 0))
        return 1


def _settle(L: object) -> None:
    """Wait for the pending malloc_trim timer (and any it re-arms) to finish."""
    while (t := L._TRIM_TIMER) is not None:  # type: ignore[attr-defined]
        t.join(5)
        assert not t.is_alive()


def test_malloc_settings_are_restored_after_a_run_and_after_a_trap(monkeypatch: pytest.MonkeyPatch) -> None:
    from wavegpu.emulator import malloc as L

    _settle(L)
    fake = FakeLibc()
    monkeypatch.setattr(L, "_libc", lambda: fake)
    monkeypatch.setattr(L, "TRIM_DELAY", 0.05)
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "65536")
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    tuned = [("mallopt", -3, 32 << 20), ("mallopt", -1, 512 << 20)]
    restored = [("mallopt", -3, 128 * 1024), ("mallopt", -1, 65536)]
    run(".kernel t\n    mov.u32 r1, %tid.x\n    st.global.b32 [0], r1\n.end", workgroup=1, memory=16)
    # the thresholds are back at once; the heap is trimmed when no run follows within TRIM_DELAY
    assert fake.calls[:4] == tuned + restored and L._MALLOC_DEPTH == 0
    _settle(L)
    assert fake.calls == [*tuned, *restored, ("trim", 0, 0)]
    fake.calls.clear()
    with pytest.raises(wg.Trap):
        run(".kernel t\n    mov.u32 r1, %tid.x\n    st.global.b32 [64], r1\n.end", workgroup=1, memory=16)
    _settle(L)
    assert fake.calls == [*tuned, *restored, ("trim", 0, 0)] and L._MALLOC_DEPTH == 0


def test_back_to_back_runs_trim_once_after_the_last(monkeypatch: pytest.MonkeyPatch) -> None:
    """Repeated short runs keep the retained heap between them (the trim waits for a pause)."""
    from wavegpu.emulator import malloc as L

    _settle(L)
    fake = FakeLibc()
    monkeypatch.setattr(L, "_libc", lambda: fake)
    monkeypatch.setattr(L, "TRIM_DELAY", 0.3)
    for _ in range(3):
        run(".kernel t\n    mov.u32 r1, %tid.x\n    st.global.b32 [0], r1\n.end", workgroup=1, memory=16)
    assert [c for c in fake.calls if c[0] == "trim"] == []
    _settle(L)
    assert [c for c in fake.calls if c[0] == "trim"] == [("trim", 0, 0)]
    assert fake.calls[-3][0] == "mallopt" and fake.calls[-3][2] != 32 << 20  # restored before the trim


@pytest.mark.parametrize(("grid", "workgroup"), [(2.5, 32), ("4", 32), ((1, 2, 3, 4), 32), (True, 32), (1, (32, 0))])
def test_emulate_checks_launch_shapes_like_launch(grid: object, workgroup: object) -> None:
    prog = wg.assemble(".kernel k\n.registers 1\n    ret\n.end\n")
    with pytest.raises(wg.WaveError, match="must be a positive int or a tuple of 1 to 3 positive ints"):
        wg.emulate(prog, grid=grid, workgroup=workgroup)


def test_emulate_refuses_more_than_2_to_the_32_threads() -> None:
    prog = wg.assemble(".kernel k\n.registers 1\n    ret\n.end\n")
    with pytest.raises(wg.WaveError, match=r"more than 2\*\*32"):
        wg.emulate(prog, grid=(1 << 23, 1, 1), workgroup=1024)
