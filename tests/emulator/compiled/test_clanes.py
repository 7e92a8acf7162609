"""The C translation's chunked lane loops (compiled/clanes.py): which loops are chunked, that a
chunked run does not fall back to the NumPy engine where the lane-by-lane C would not, and that
both spellings of the C (WAVEGPU_C_LANES) leave the same memory as the NumPy engine.

The lane-by-lane comparison against the NumPy engine on every row, under partial masks and
divergence, is tests/emulator/compiled/test_simd_lanes.py; these tests pin the mechanism."""

from __future__ import annotations

import pickle
import re
from pathlib import Path

import numpy as np
import pytest
from test_compiled_programs import WORD_OFFSET

import wavegpu as wg
from wavegpu.emulator import BufferRegion
from wavegpu.emulator.compiled.cbuild import has_compiler
from wavegpu.emulator.compiled.clanes import chunk_width

if not has_compiler():
    pytest.skip("no C compiler on PATH (cc, gcc, clang): the C translation cannot run here", allow_module_level=True)

# A global access of an assembly kernel names no array (no access table): with `buffers=` each
# access searches the regions for its own (`for j in range(nb)` inside the lane loop).
SEARCH = f"""
.kernel search
.registers 12
{WORD_OFFSET}
    add.u32 r4, r0, r1
    ld.global.b32 r5, [r4]
    and.b32 r6, r1, 12
    setp.ne.u32 p1, r6, 0
    @p1 add.u32 r5, r5, 7
    add.u32 r7, r4, 1024
    st.global.b32 [r7], r5
    ret
.end
"""


def test_chunk_width() -> None:
    assert [chunk_width(n) for n in (256, 48, 24, 8, 20, 4, 1)] == [16, 16, 8, 8, None, None, None]


def _run(lanes: str, monkeypatch: pytest.MonkeyPatch, **kw: object) -> wg.EmulationResult:
    monkeypatch.setenv("WAVEGPU_COMPILED", "c")
    monkeypatch.setenv("WAVEGPU_C_LANES", lanes)
    return wg.emulate(wg.assemble(SEARCH), engine="compiled", **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("lanes", ["chunked", "scalar"])
def test_a_searched_access_runs_compiled(lanes: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """With `buffers=`, every access finds its region inside the chunk: the launch finishes on
    the compiled engine (a search that failed would stop it and hand it to the NumPy engine,
    with the same memory: only `res.engine` tells)."""
    mem = np.arange(512, dtype=np.uint32)
    regions = [BufferRegion(0, "x", 0, 1024, 4), BufferRegion(1, "y", 1024, 1024, 4)]
    kw = dict(grid=2, workgroup=128, memory=mem.view(np.uint8), args=[0], buffers=regions)
    got = _run(lanes, monkeypatch, **kw)
    ref = wg.emulate(wg.assemble(SEARCH), engine="numpy", **kw)  # type: ignore[arg-type]
    assert got.engine == "compiled"
    assert np.array_equal(got.memory, ref.memory)
    out = got.memory.view(np.uint32)[256:]
    i = np.arange(256, dtype=np.uint32)
    assert np.array_equal(out, i + np.where((i * 4) & 12, 7, 0).astype(np.uint32))


@pytest.mark.parametrize("lanes", ["chunked", "scalar"])
def test_an_access_outside_its_buffers_traps_as_the_numpy_engine(lanes: str, monkeypatch: pytest.MonkeyPatch) -> None:
    regions = [BufferRegion(0, "x", 0, 1024, 4), BufferRegion(1, "y", 1024, 512, 4)]
    kw = dict(grid=2, workgroup=128, memory=2048, args=[0], buffers=regions, boundscheck=True)
    errors = []
    for engine in ("numpy", "compiled"):
        monkeypatch.setenv("WAVEGPU_C_LANES", lanes)
        with pytest.raises(wg.Trap) as e:
            wg.emulate(wg.assemble(SEARCH), engine=engine, **kw)  # type: ignore[arg-type]
        errors.append(str(e.value))
    assert errors[0] == errors[1] and "y[128]" in errors[0]


def _heavy(accumulators: int) -> str:
    """A kernel whose loop, run lane by lane, makes `accumulators` fmas a round."""
    fmas = "".join(f"        fma.f32 r{10 + i}, r3, r4, r{10 + i}\n" for i in range(accumulators))
    stores = "".join(f"    st.global.b32 [r2+{4 * i}], r{10 + i}\n" for i in range(accumulators))
    return (
        f".kernel heavy\n.registers {12 + accumulators}\n"
        "    mov.u32 r1, %tid.x\n    shl.b32 r2, r1, 8\n    add.u32 r2, r0, r2\n"
        "    cvt.f32.u32 r3, r1\n    mov.b32 r4, 0x3f000000\n    mov.b32 r5, 0\n"
        + "".join(f"    mov.b32 r{10 + i}, 0\n" for i in range(accumulators))
        + "    loop\n        setp.ge.u32 p0, r5, r1\n        break p0\n"
        + fmas
        + "        add.u32 r5, r5, 1\n    endloop\n"
        + stores
        + "    ret\n.end\n"
    )


def test_the_c_is_chunked_where_it_pays(monkeypatch: pytest.MonkeyPatch) -> None:
    """`auto` (the default) chunks a lane-by-lane loop with a heavy round and leaves straight
    lane loops and light loops lane by lane; `chunked` chunks every lane loop it can; `scalar`
    none; a workgroup whose lane count no chunk width divides stays lane by lane."""
    from wavegpu.emulator.compiled.codegen import Shape
    from wavegpu.emulator.compiled.ctrans import generate_c

    def chunked(src: str, mode: str | None, shape: Shape | None = None) -> bool:
        shape = shape or Shape(32, (128, 1, 1))
        if mode is None:
            monkeypatch.delenv("WAVEGPU_C_LANES", raising=False)
        else:
            monkeypatch.setenv("WAVEGPU_C_LANES", mode)
        text = generate_c(wg.assemble(src).kernels[0], shape)
        return "c_ +=" in text and "#pragma GCC ivdep" in text

    heavy, light = _heavy(48), _heavy(4)
    assert chunked(heavy, None) and chunked(heavy, "auto")
    assert not chunked(light, None) and not chunked(SEARCH, None)
    assert chunked(light, "chunked") and chunked(SEARCH, "chunked")
    assert not chunked(heavy, "scalar") and not chunked(SEARCH, "scalar")
    assert not chunked(heavy, "chunked", Shape(4, (20, 1, 1)))  # 20 lanes: no chunk width divides them


@pytest.mark.parametrize("mode", ["auto", "chunked", "scalar"])
def test_a_heavy_loop_matches_the_numpy_engine(mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The heavy loop of the test above (per-lane trip counts 0..127), each lane mode, against
    the NumPy engine; the launch finishes compiled."""
    monkeypatch.setenv("WAVEGPU_COMPILED", "c")
    monkeypatch.setenv("WAVEGPU_C_LANES", mode)
    p = wg.assemble(_heavy(48))
    kw = dict(grid=1, workgroup=128, memory=128 * 256, args=[0])
    got = wg.emulate(p, engine="compiled", **kw)  # type: ignore[arg-type]
    ref = wg.emulate(p, engine="numpy", **kw)  # type: ignore[arg-type]
    assert got.engine == "compiled" and np.array_equal(got.memory, ref.memory)
    assert ref.memory.view(np.float32)[64 * 64 + 5] == np.float32(64 * 64 * 0.5)  # lane 64: 64 rounds of 64 * 0.5


def test_the_lane_mode_is_part_of_the_cache_key(monkeypatch: pytest.MonkeyPatch) -> None:
    from wavegpu.emulator.compiled.cbuild import key_of

    monkeypatch.delenv("WAVEGPU_C_LANES", raising=False)
    a = key_of("source")
    monkeypatch.setenv("WAVEGPU_C_LANES", "scalar")
    assert key_of("source") != a


def test_a_kernel_hashes_once_and_pickles_without_its_hash() -> None:
    """Kernel.__hash__ keeps its value (a launch looks its translations up by kernel); a pickle
    leaves it out, since a string's hash differs between processes."""
    k = wg.assemble(SEARCH).kernels[0]
    h = hash(k)
    assert hash(k) == h and k.__dict__["_hash"] == h
    state = pickle.loads(pickle.dumps(k))
    assert "_hash" not in state.__dict__ and state == k and hash(state) == h


def test_a_c_file_in_parts_compiles_in_parallel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A long C file is cut into parts (ctrans._file) that cbuild compiles at once and links:
    forced here on a short kernel (a part per few lines), same memory as the NumPy engine."""
    from wavegpu.emulator.compiled import cbuild, ctrans
    from wavegpu.emulator.compiled import engine as E

    monkeypatch.setattr(ctrans, "PART_LINES", 20)
    monkeypatch.setenv("WAVEGPU_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("WAVEGPU_COMPILED", "c")
    monkeypatch.setattr(cbuild, "_cores", lambda: 2)
    runs: list[int] = []
    real = cbuild._run

    def counted(commands: list[list[str]]) -> None:
        runs.append(len(commands))
        real(commands)

    monkeypatch.setattr(cbuild, "_run", counted)
    E._c_spelt.cache_clear()
    src = SEARCH.replace("add.u32 r5, r5, 7", "add.u32 r5, r5, 9")  # a kernel no other test compiled
    mem = np.arange(512, dtype=np.uint32).view(np.uint8)
    kw = dict(grid=2, workgroup=128, memory=mem, args=[0])
    try:
        got = wg.emulate(wg.assemble(src), engine="compiled", **kw)  # type: ignore[arg-type]
    finally:
        E._c_spelt.cache_clear()
    ref = wg.emulate(wg.assemble(src), engine="numpy", **kw)  # type: ignore[arg-type]
    assert got.engine == "compiled" and np.array_equal(got.memory, ref.memory)
    assert runs and runs[0] >= 2 and runs[1] == 1  # the parts at once, then one link
    c_files = list(tmp_path.rglob("kernel.c"))
    assert c_files and int(re.search(r"#define WAVE_PARTS (\d+)", c_files[0].read_text()).group(1)) >= 2  # type: ignore[union-attr]
    assert not list(tmp_path.rglob("*.o"))  # the parts' objects are gone


def test_a_loop_inside_an_if_that_leaves_the_loop_around_it_stays_scalar() -> None:
    """The lane-by-lane form of an `if` with a loop inside (`Chunked.lane_by_lane`) writes the
    `if` inside a loop over the chunk, where a `break` of the loop around the `if` would leave
    that loop instead: such a body keeps the scalar lane loop."""
    import ast

    from wavegpu.emulator.compiled.clanes import Chunked, Scalar, lane_loop_body
    from wavegpu.emulator.compiled.ctrans import Func

    def chunk(inner: str) -> None:
        src = "def lanes(R, act, L, rs, re, nb):\n    for l in range(L):\n        if act[l]:" + inner
        fn = ast.parse(src).body[0]
        assert isinstance(fn, ast.FunctionDef) and isinstance(fn.body[0], ast.For)
        body = lane_loop_body(fn.body[0])
        assert body is not None
        Chunked(Func(fn, {}), body, 16).write(1)

    loop = """
            a = R[1, l]
            while True:
                if a > 3:
                    break
                a = a + 1
                bad = True
                if a > 2:
                    for j in range(nb):
                        if rs[j] <= a:
                            bad = False
                            break
"""
    chunk(loop)  # the search's own break: chunked
    with pytest.raises(Scalar):
        chunk(loop + "                    break\n")  # a break of the while, inside the if
