"""The calling convention of `@wg.kernel` (docs/sdk.md): exact dtypes, copy back of written arrays
only, aliasing as on a GPU, strided views, scalar ranges, launch shapes, keywords, and nothing
changed when a run traps."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import wavegpu as wg
from wavegpu.runtime.buffers import pack


@wg.kernel
def axpy(a: wg.f32, x: wg.f32[:], y: wg.f32[:], n: wg.i32):
    i = wg.global_id()
    if i < n:
        y[i] = a * x[i] + y[i]


@wg.kernel
def scale_rev(out: wg.f32[:], inp: wg.f32[:], n: wg.i32):
    i = wg.global_id()
    if i < n:
        v = inp[n - 1 - i] * 2.0
        wg.barrier()
        out[n - 1 - i] = v


@wg.kernel
def double(x: wg.f32[:], y: wg.f32[:], n: wg.i32):
    i = wg.global_id()
    if i < n:
        y[i] = x[i] * 2.0


@wg.kernel(boundscheck=True)
def double_checked(x: wg.f32[:], y: wg.f32[:], n: wg.i32):
    i = wg.global_id()
    if i < n:
        y[i] = x[i] * 2.0


@wg.kernel
def ints(x: wg.i32[:], y: wg.i32[:], k: wg.i32, u: wg.u32):
    i = wg.global_id()
    y[i] = x[i] + k + wg.i32(u)


@wg.kernel
def fill(y: wg.f32[:], n: wg.i32):
    i = wg.global_id()
    if i < n:
        y[i] = 7.0


@wg.kernel
def write_then_trap(y: wg.f32[:], idx: wg.i32[:], n: wg.i32):
    i = wg.global_id()
    if i < n:
        y[i] = 5.0
        y[idx[i]] = 1.0


def test_float64_array_for_f32_is_refused_and_unchanged() -> None:
    x = np.array([0.1, 1e300, 3.0])
    y = np.zeros(3, np.float32)
    before = x.copy()
    with pytest.raises(wg.WaveError, match=r"'x' \(f32\[\]\).*float32.*got float64") as ei:
        axpy(2.0, x, y, 3, grid=1, workgroup=32)
    assert "astype" in str(ei.value)
    assert np.array_equal(x, before) and not y.any()


def test_int64_array_for_i32_is_refused() -> None:
    x = np.array([2**40, 1, 2])
    y = np.zeros(3, np.int32)
    with pytest.raises(wg.WaveError, match=r"'x' \(i32\[\]\).*int32.*got int64"):
        ints(x, y, 0, 0, grid=1, workgroup=3)
    assert x[0] == 2**40


def test_read_only_array_where_the_kernel_writes_is_refused() -> None:
    x = np.ones(4, np.float32)
    y = np.zeros(4, np.float32)
    y.setflags(write=False)
    with pytest.raises(wg.WaveError, match=r"'y'.*read-only"):
        axpy(1.0, x, y, 4, grid=1, workgroup=32)


def test_read_only_array_that_is_only_read_works() -> None:
    x = np.arange(4, dtype=np.float32)
    x.setflags(write=False)
    y = np.zeros(4, np.float32)
    double(x, y, 4, grid=1, workgroup=32)
    assert np.array_equal(y, 2 * np.arange(4, dtype=np.float32))


def test_only_changed_written_arrays_are_copied_back() -> None:
    k = double.program.kernels[0]
    assert [p.writable for p in k.params if p.kind == "buffer"] == [False, True]
    x = np.arange(8, dtype=np.float32)
    y = np.zeros(8, np.float32)
    layout = pack(k, [x, y, 0])
    res = wg.launch(double.program, grid=1, workgroup=32, memory=layout.memory, args=layout.args)
    assert layout.write_back(res.memory) == []  # n = 0: nothing changed, nothing written
    layout = pack(k, [x, y, 8])
    res = wg.launch(double.program, grid=1, workgroup=32, memory=layout.memory, args=layout.args)
    assert layout.write_back(res.memory) == ["y"]  # x is never written back


def test_same_array_twice_is_one_buffer() -> None:
    w = np.arange(64, dtype=np.float32)
    scale_rev(w, w, 64, grid=1, workgroup=64)
    assert np.array_equal(w, 2 * np.arange(64, dtype=np.float32))


def test_overlapping_views_share_one_buffer() -> None:
    base = np.arange(16, dtype=np.float32)
    layout = pack(double.program.kernels[0], [base[0:12], base[4:16], 12])
    assert layout.args[1] - layout.args[0] == 16  # y's address is x's plus 4 elements
    w = np.arange(16, dtype=np.float32)
    double(w[4:12], w[4:12], 8, grid=1, workgroup=32)  # two distinct view objects of the same range
    assert np.array_equal(w, np.r_[np.arange(4), 2 * np.arange(4, 12), np.arange(12, 16)].astype(np.float32))


def test_strided_views_read_and_write_back() -> None:
    big = np.arange(40, dtype=np.float32)
    out = np.full(30, -1.0, np.float32)
    double(big[::2], out[::3], 10, grid=1, workgroup=32)
    expect = np.full(30, -1.0, np.float32)
    expect[::3] = 2 * big[::2][:10]
    assert np.array_equal(out, expect)
    m = np.zeros((4, 6), np.float32)
    double(np.ones((3, 4), np.float32), m[:, 1:4], 12, grid=1, workgroup=32)  # a 2-D non-contiguous view
    assert np.array_equal(m[:, 1:4], np.full((4, 3), 2.0)) and not m[:, 0].any() and not m[:, 4:].any()


def test_non_contiguous_overlapping_views_are_refused() -> None:
    w = np.arange(16, dtype=np.float32)
    with pytest.raises(wg.WaveError, match="non-contiguous view that overlaps"):
        double(w[::2], w[:8], 8, grid=1, workgroup=32)


@pytest.mark.parametrize("value", [[1.0, 2.0], (1.0, 2.0), 4])
def test_a_list_tuple_or_count_for_an_array_is_refused(value: object) -> None:
    with pytest.raises(wg.WaveError, match=r"'y' \(f32\[\]\) needs a NumPy array"):
        fill(value, 2, grid=1, workgroup=32)


@pytest.mark.parametrize(
    ("k", "u", "match"),
    [(2**32 - 1, 0, r"'k' \(i32\): 4294967295 is out of range"), (0, -1, r"'u' \(u32\): -1 is out of range"),
     (0, 2**32, "out of range"), (1.5, 0, "needs an integer"), (np.ones(2), 0, "needs a number")],
)  # fmt: skip
def test_scalars_out_of_range_are_refused(k: object, u: object, match: str) -> None:
    x = np.zeros(4, np.int32)
    with pytest.raises(wg.WaveError, match=match):
        ints(x, x.copy(), k, u, grid=1, workgroup=4)


def test_float_scalar_out_of_range_is_refused() -> None:
    with pytest.raises(wg.WaveError, match=r"'a' \(f32\): 1e\+300 is out of range"):
        axpy(1e300, np.zeros(2, np.float32), np.zeros(2, np.float32), 2, grid=1)
    y = np.zeros(2, np.float32)
    axpy(float("inf"), np.ones(2, np.float32), y, 2, grid=1)  # infinities are values of f32
    assert np.isinf(y).all()


@pytest.mark.parametrize(
    ("grid", "workgroup"),
    [("4", 32), (2.5, 32), ((1, 2, 3, 4), 32), ((), 32), (0, 32), (1, (32, -1)), (1, 1.0), (True, 32), (None, 32)],
)
def test_launch_shapes_say_what_is_expected(grid: object, workgroup: object) -> None:
    with pytest.raises(wg.WaveError, match="must be a positive int or a tuple of 1 to 3 positive ints"):
        fill(np.zeros(4, np.float32), 4, grid=grid, workgroup=workgroup)


def test_more_than_2_to_the_32_threads_is_refused() -> None:
    with pytest.raises(wg.WaveError, match="more than 2\\*\\*32"):
        fill(np.zeros(4, np.float32), 4, grid=(1 << 23, 1, 1), workgroup=1024)
    with pytest.raises(wg.WaveError, match="more than 2\\*\\*32"):
        fill(np.zeros(4, np.float32), 4, grid=(1 << 16, 1 << 16, 2), workgroup=1)


def test_keyword_arguments() -> None:
    x = np.arange(8, dtype=np.float32)
    y = np.ones(8, np.float32)
    axpy(a=2.0, x=x, y=y, n=8, grid=1, workgroup=32)
    assert np.array_equal(y, 2 * x + 1)
    axpy(1.0, x, n=8, y=y, grid=1, workgroup=32)
    assert np.array_equal(y, 3 * x + 1)
    with pytest.raises(wg.WaveError, match=r"axpy.*missing a required argument: 'n'"):
        axpy(1.0, x, y, grid=1)
    with pytest.raises(wg.WaveError, match="unexpected keyword argument 'z'"):
        axpy(1.0, x, y, 8, z=1, grid=1)


def test_a_trap_changes_no_array() -> None:
    y = np.zeros(8, np.float32)
    idx = np.array([0, 1, 2, 3, 4, 5, 6, 1000], np.int32)
    with pytest.raises(wg.Trap):
        write_then_trap(y, idx, 8, grid=1, workgroup=32)
    assert not y.any()


def test_max_instructions_on_calls_and_launch() -> None:
    y = np.zeros(64, np.float32)
    with pytest.raises(wg.Trap, match="max_instructions"):
        fill(y, 64, grid=1, workgroup=64, max_instructions=3)
    assert not y.any()
    with pytest.raises(wg.Trap, match="max_instructions"):
        wg.launch(fill.program, grid=1, workgroup=64, memory=1024, args=[0, 64], max_instructions=3)
    with pytest.raises(wg.WaveError, match="emulator only"):
        wg.launch(fill.program, device="opencl", grid=1, memory=1024, args=[0, 4], max_instructions=3)


# --- random dtype/shape/stride/alias combinations against NumPy --------------------------------

DTYPES = [np.float32, np.float64, np.int32, np.float16]


@st.composite
def calls(draw: st.DrawFn) -> tuple[str, int, tuple[object, ...], tuple[object, ...], tuple[bool, bool], int]:
    size = draw(st.integers(1, 40))
    xdt = draw(st.sampled_from(DTYPES))
    ydt = draw(st.sampled_from(DTYPES))
    alias = draw(st.sampled_from(["separate", "same", "same-range", "disjoint", "overlap", "interleaved"]))
    xs = (draw(st.integers(0, 3)), draw(st.integers(1, 3)))  # start, step
    ys = (draw(st.integers(0, 3)), draw(st.integers(1, 3)))
    ro = (draw(st.booleans()), draw(st.booleans()))
    n = draw(st.integers(0, size + 2))
    return alias, size, (xdt, *xs), (ydt, *ys), ro, n


def _key(a: np.ndarray) -> tuple[object, ...]:
    return (a.__array_interface__["data"][0], a.shape, a.strides)


def _make(alias: str, size: int, xp: tuple[object, ...], yp: tuple[object, ...], ro: tuple[bool, bool]):
    xdt, xa, xb = xp
    ydt, ya, yb = yp
    rng = np.random.default_rng(size)
    base = (rng.standard_normal(4 * size + 16) * 100).astype(xdt)
    other = (rng.standard_normal(4 * size + 16) * 100).astype(ydt)
    x = base[xa : xa + size] if alias == "overlap" else base[xa : xa + xb * size : xb]
    y = {
        "separate": other[ya : ya + yb * size : yb],
        "same": x,
        "same-range": base[xa : xa + xb * size : xb],
        "disjoint": base[2 * size + 8 :][ya : ya + size],
        "overlap": base[xa : xa + size + 3],  # the same start, longer: overlapping, race-free
        "interleaved": base[xa + 1 : xa + 1 + 2 * size : 2],
    }[alias]
    if ro[0]:
        x.setflags(write=False)
    if ro[1] and y is not x:
        y.setflags(write=False)
    return [base, other], x, y


@settings(max_examples=60, deadline=None)
@given(calls())
def test_random_calls_match_numpy_or_refuse_with_nothing_changed(case) -> None:  # type: ignore[no-untyped-def]
    alias, size, xp, yp, ro, n = case
    owners, x, y = _make(alias, size, xp, yp, ro)
    before = [a.copy() for a in owners]
    try:
        double_checked(x, y, n, grid=2, workgroup=32)
    except wg.Trap:
        assert n > min(x.size, y.size)  # an access past an array's end
        assert all(np.array_equal(a, b) for a, b in zip(owners, before))
        return
    except wg.WaveError:
        refused = (
            x.dtype != np.float32
            or y.dtype != np.float32
            or not y.flags.writeable
            or (np.shares_memory(x, y) and not (x.flags.c_contiguous and y.flags.c_contiguous)
                and _key(x) != _key(y))
        )  # fmt: skip
        assert refused
        assert all(np.array_equal(a, b) for a, b in zip(owners, before))
        return
    assert n <= min(x.size, y.size) and x.dtype == y.dtype == np.float32
    ref_owners, rx, ry = _make(alias, size, xp, yp, (False, False))
    if n:
        ry[:n] = rx[:n] * np.float32(2.0)
    for a, r in zip(owners, ref_owners):
        assert np.array_equal(a, r, equal_nan=True)


def test_progress_bar_is_opt_in_from_python(monkeypatch: pytest.MonkeyPatch) -> None:
    from wavegpu.runtime import devices as launch_mod

    seen: list[object] = []
    real = launch_mod.emulate

    def spy(*a, **kw):  # type: ignore[no-untyped-def]
        seen.append(kw["progress"])
        return real(*a, **kw)

    monkeypatch.setattr(launch_mod, "emulate", spy)
    y = np.zeros(256, np.float32)
    fill(y, y.size, grid=8, workgroup=32)
    fill(y, y.size, grid=8, workgroup=32, progress=True)
    assert seen[0] is None and callable(seen[1]) and (y == 7.0).all()


def test_the_default_workgroup_is_256() -> None:
    @wg.kernel
    def size(out: wg.i32[:]):
        out[wg.global_id()] = wg.workgroup_size()

    out = np.zeros(512, np.int32)
    size(out, grid=2)
    assert (out == 256).all()
    out[:] = 0
    size(out, grid=4, workgroup=128)  # a call's workgroup= is used as given
    assert (out == 128).all()


@wg.kernel
def divide(a: wg.i32[:], b: wg.i32[:], q: wg.i32[:], r: wg.u32[:]):
    i = wg.global_id()
    q[i] = a[i] // b[i]
    r[i] = wg.u32(a[i]) % wg.u32(b[i])


def test_integer_division_by_zero_traps_with_check_naming_the_line() -> None:
    a = np.array([7, -7, 5, 9], np.int32)
    b = np.array([2, 2, 0, 3], np.int32)
    q = np.zeros(4, np.int32)
    r = np.zeros(4, np.uint32)
    with pytest.raises(wg.Trap, match="integer division by zero") as ei:
        divide(a, b, q, r, grid=1, workgroup=4, check=True)
    assert ei.value.thread == (2, 0, 0) and ei.value.source is not None
    assert ei.value.source.split(":")[-2] == str(divide.python.__code__.co_firstlineno + 3)
    assert not q.any() and not r.any()
    with pytest.raises(wg.Trap, match="integer division by zero"):
        wg.kernel(boundscheck=True)(divide.python)(a, b, q, r, grid=1, workgroup=4)
    divide(a, b, q, r, grid=1, workgroup=4)  # without check: the values DESIGN section 3 defines
    assert list(q[[0, 1, 3]]) == [3, -4, 3] and r[2] == 5


def test_a_write_into_a_guard_gap_copies_nothing_back() -> None:
    """On a device that cannot trap (here: the memory after a run, changed by hand), a change
    outside every array is refused and no array is written."""
    k = double.program.kernels[0]
    x = np.arange(8, dtype=np.float32)
    y = np.zeros(8, np.float32)
    layout = pack(k, [x, y, 8])
    res = wg.launch(double.program, grid=1, workgroup=32, memory=layout.memory, args=layout.args)
    after = res.memory.copy()
    after[layout.buffers["y"].offset + 32 + 4] ^= 1  # a byte of y's guard gap
    with pytest.raises(wg.WaveError, match="belongs to no array"):
        layout.write_back(after)
    assert not y.any()
    assert layout.write_back(res.memory) == ["y"] and np.array_equal(y, 2 * x)


def _write_back_reference(layout: object, after: np.ndarray) -> tuple[str, object]:
    """What write_back must do, by its definition byte by byte: ("gap", address) for the first
    changed byte outside every buffer, else ("array", address) for the first changed byte of a
    buffer (groups in layout order) that no writable array covers, else ("ok", names written)."""
    before = layout.memory  # type: ignore[attr-defined]
    groups = layout.groups  # type: ignore[attr-defined]
    diff = [int(i) for i in np.flatnonzero(before != after)]
    in_group = {b for g in groups for b in range(g.offset, g.offset + g.nbytes)}
    gaps = [i for i in diff if i not in in_group]
    if gaps:
        return "gap", gaps[0]
    written: list[str] = []
    for g in groups:
        allowed = {
            b for p, s, a in g.members if p.writable and a is not None for b in range(s.offset, s.offset + s.nbytes)
        }
        stray = [i for i in diff if g.offset <= i < g.offset + g.nbytes and i not in allowed]
        if stray:
            return "array", stray[0]
    for g in groups:
        for p, s, a in g.members:
            if p.writable and a is not None and any(s.offset <= i < s.offset + s.nbytes for i in diff):
                written.append(s.name)
    return "ok", written


@pytest.mark.parametrize("chunk", [1, 5, 64, 1 << 22])
def test_write_back_in_chunks_matches_its_byte_by_byte_definition(monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    """write_back compares in chunks (bounded temporaries, docs/performance.md): every chunk size
    finds the same first stray byte and copies back the same arrays as the definition."""
    import re

    from wavegpu.runtime import buffers

    monkeypatch.setattr(buffers, "COMPARE_CHUNK", chunk)
    k = double.program.kernels[0]
    rng = np.random.default_rng(chunk)
    for case in range(3):
        base = np.arange(24, dtype=np.float32)
        if case == 1:  # overlapping views: one buffer, x's bytes outside y are not writable
            x, y = base[0:12], base[6:18]
        elif case == 2:  # the same, x's unwritable bytes after y's
            x, y = base[6:18], base[0:12]
        else:
            x, y = np.arange(12, dtype=np.float32), np.zeros(12, np.float32)
        x0, y0 = x.copy(), y.copy()
        layout = pack(k, [x, y, 12])
        lo = min(g.offset for g in layout.groups)
        hi = max(g.offset + g.nbytes for g in layout.groups)
        # every single changed byte around the buffers, then random sets of changes anywhere
        flips = [[at] for at in range(lo - 8, hi + 8)]
        flips += [list(rng.integers(0, layout.memory.size, rng.integers(2, 5))) for _ in range(30)]
        for where in flips:
            x[...], y[...] = x0, y0
            layout = pack(k, [x, y, 12])
            after = layout.memory.copy()
            for at in where:
                after[at] ^= 1 << int(rng.integers(0, 8))
            want_kind, want = _write_back_reference(layout, after)
            try:
                got: tuple[str, object] = ("ok", layout.write_back(after))
            except wg.WaveError as e:
                m = re.search(r"device address (\d+)", str(e))
                assert m is not None, str(e)
                got = ("gap" if "belongs to no array" in str(e) else "array", int(m[1]))
                assert np.array_equal(x, x0) and np.array_equal(y, y0)  # nothing copied back
            assert got == (want_kind, want), (case, where, chunk)
            if want_kind == "ok" and want:
                s = layout.buffers["y"]
                assert np.array_equal(y.view(np.uint8), after[s.offset : s.offset + s.nbytes])


def test_write_back_temporaries_stay_chunk_sized() -> None:
    """write_back's comparisons need a few chunks of memory, not a multiple of the arrays (a
    kernel call's peak memory: docs/performance.md, emulator memory)."""
    import tracemalloc

    from wavegpu.runtime import buffers

    n = 1 << 22  # 16 MiB per array, four times the chunk
    x = np.arange(n, dtype=np.float32)
    y = np.zeros(n, np.float32)
    layout = pack(double.program.kernels[0], [x, y, n])
    after = layout.memory.copy()
    s = layout.buffers["y"]
    after[s.offset : s.offset + s.nbytes] = (2 * x).view(np.uint8)
    tracemalloc.start()
    try:
        assert layout.write_back(after) == ["y"]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert np.array_equal(y, 2 * x)
    assert peak < 3 * buffers.COMPARE_CHUNK, peak  # whole-buffer bool arrays were 4 x 16 MiB


def test_a_huge_broadcast_argument_is_refused_before_anything_is_copied() -> None:
    """8 GiB of a broadcast scalar (4 bytes of memory) is refused from its shape and dtype: no
    copy is made first (issue 28.6: it took 38 s and 8 GiB)."""
    import time
    import tracemalloc

    x = np.broadcast_to(np.float32(1), (2**31,))
    y = np.zeros(4, np.float32)
    tracemalloc.start()
    t = time.perf_counter()
    try:
        with pytest.raises(wg.WaveError, match="more than the 32-bit address space"):
            double(x, y, 4, grid=1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20 and time.perf_counter() - t < 5


def test_strided_and_broadcast_arguments_are_packed_as_their_values() -> None:
    x = np.broadcast_to(np.arange(3, dtype=np.float32), (4, 3))
    strided = np.arange(20, dtype=np.float32)[::-3]
    y = np.zeros(12, np.float32)
    double(x, y, 12, grid=1)  # a read-only view whose rows share memory
    assert np.array_equal(y, 2 * np.tile(np.arange(3, dtype=np.float32), 4))
    y = np.zeros(7, np.float32)
    double(strided, y, 7, grid=1)
    assert np.array_equal(y, 2 * strided)
