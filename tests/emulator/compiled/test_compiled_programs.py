"""Whole programs give identical memory on the NumPy and compiled engines: the conformance
corpus, the compiler corpus at -O0..-O3, generated structured programs, control flow (break
inside if, continue, exited lanes), traps and the budget, and the engine selection."""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import wavegpu as wg
from corpus import corpus_files
from wavegpu.emulator import BufferRegion
from wavegpu.emulator.compiled import available
from wavegpu.emulator.compiled.codegen import Shape, generate, unsupported_reason
from wavegpu.isa import Imm, Instruction, Pred, Reg, row
from wavegpu.isa.registers import NUM_GPRS
from wavegpu.isa.vocabulary import Op

if not available():
    pytest.skip("neither a C compiler nor numba: the compiled engine cannot run here", allow_module_level=True)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "compiler"))
import kernels as K
import test_differential as D


def both(p: wg.Program | wg.Kernel, **kw: object) -> tuple[wg.EmulationResult, wg.EmulationResult]:
    from wavegpu.emulator.compiled import engine as E

    ref = wg.emulate(p, engine="numpy", **kw)  # type: ignore[arg-type]
    got = wg.emulate(p, engine="compiled", **kw)  # type: ignore[arg-type]
    assert got.engine == "compiled"
    if E.forced():  # the translation the test asked for (the `translation` fixture) ran it
        assert E.last_used() == E.translation()
    return ref, got


def same(p: wg.Program | wg.Kernel, **kw: object) -> wg.EmulationResult:
    ref, got = both(p, **kw)
    if not np.array_equal(ref.memory, got.memory):
        bad = np.flatnonzero(ref.memory != got.memory)
        raise AssertionError(
            f"first different byte {bad[0]}: numpy {ref.memory[bad[0]]}, compiled {got.memory[bad[0]]}"
        )
    return got


# ---------------------------------------------------------------------------------- the corpus
def test_conformance_corpus(translation: str) -> None:
    """Every kernel of the assembly corpus, on memory full of varied words, with varied args
    (numba: every third kernel, its compile being the slower)."""
    rng = np.random.default_rng(5)
    ran = 0
    eligible = 0
    for path in corpus_files():
        prog = wg.assemble(path.read_text(), path.name)
        for k in prog.kernels:
            size = 1 << 16
            mem = rng.integers(0, 1 << 32, size // 4, dtype=np.uint32)
            # buffers 16 KiB apart: no workgroup reads what another writes (a race whose outcome
            # depends on the order of workgroups, which neither engine promises)
            args = [16384 * i for i in range(min(len(k.params) or 3, k.registers, 4))]
            wgs = k.workgroup_size or (64, 1, 1)
            try:
                ref = wg.emulate(k, grid=2, workgroup=wgs, memory=mem, args=args, engine="numpy")
            except wg.WaveError as e:  # a corpus kernel that traps on these arguments: both must
                with pytest.raises(type(e)) as got:
                    wg.emulate(k, grid=2, workgroup=wgs, memory=mem, args=args, engine="auto")
                assert str(got.value) == str(e)
                continue
            why = unsupported_reason(k)
            if why is not None:  # mma, %clock: not translated (docs/emulator.md); "compiled" says why
                with pytest.raises(wg.WaveError, match=re.escape(why)):
                    wg.emulate(k, grid=2, workgroup=wgs, memory=mem, args=args, engine="compiled")
                continue
            eligible += 1
            if translation == "numba" and eligible % 3 != 1:
                continue
            got = wg.emulate(k, grid=2, workgroup=wgs, memory=mem, args=args, engine="compiled")
            assert np.array_equal(ref.memory, got.memory), f"{path.name}: {k.name}"
            ran += 1
    assert eligible >= len(corpus_files()) - 1
    assert ran == (eligible if translation == "c" else (eligible + 2) // 3)


# ------------------------------------------------------------------------ the compiler corpus
@pytest.mark.parametrize(
    ("opt", "translation"), [(0, "c"), (1, "c"), (2, "c"), (3, "c"), (2, "numba")], indirect=["translation"]
)
def test_compiler_corpus(opt: int, translation: str) -> None:
    """The compiler's kernels at every -O level (numba: at -O2 only, its compile being the slower)."""
    rng = np.random.default_rng(opt)
    n = 300

    def run(fn, make, **kw):  # type: ignore[no-untyped-def]
        fn.opt = opt
        out = []
        for engine in ("numpy", "compiled"):
            arrays = make()
            fn(*arrays, engine=engine, **kw)
            out.append([a.copy() for a in arrays if isinstance(a, np.ndarray)])
        for a, b in zip(*out):
            assert np.array_equal(a.view(np.uint8), b.view(np.uint8)), f"{fn.__name__} at -O{opt}"

    x = np.linspace(-2, 2, n).astype(np.float32)
    run(K.saxpy, lambda: (np.float32(1.5), x.copy(), np.ones(n, np.float32), n), grid=2, workgroup=256)
    data = rng.random(n).astype(np.float32)
    run(K.reduce_sum, lambda: (data.copy(), np.zeros(2, np.float32), n), grid=2)
    h = rng.integers(0, 1 << 20, n).astype(np.uint32)
    run(K.histogram, lambda: (h.copy(), np.zeros(16, np.uint32), np.zeros(16, np.float32), n), grid=2, workgroup=256)
    m = 32
    a = rng.standard_normal((m, m)).astype(np.float32)
    b = rng.standard_normal((m, m)).astype(np.float32)
    run(K.matmul, lambda: (a.copy(), b.copy(), np.zeros((m, m), np.float32), m), grid=(2, 2))
    s = rng.integers(0, 100, 128).astype(np.uint32)
    run(K.scan, lambda: (s.copy(), np.zeros(128, np.uint32), np.zeros(4, np.uint32)), grid=1, workgroup=128)
    run(K.loops, lambda: (np.zeros(200, np.int32), 200), grid=1, workgroup=256)


# ------------------------------------------------------------------ generated structured programs
def same_or_same_error(k: wg.Kernel, **kw: object) -> None:
    """Both engines leave the same memory, or raise the same error with the same message."""
    try:
        ref = wg.emulate(k, engine="numpy", **kw)  # type: ignore[arg-type]
    except wg.WaveError as e:
        with pytest.raises(type(e)) as got:
            wg.emulate(k, engine="compiled", **kw)  # type: ignore[arg-type]
        assert str(got.value) == str(e)
        return
    got = wg.emulate(k, engine="compiled", **kw)  # type: ignore[arg-type]
    assert np.array_equal(ref.memory, got.memory), wg.disassemble(k)


@settings(max_examples=12, deadline=None)
@given(st.data())
def test_generated_programs(data: st.DataObject) -> None:
    """Under the default translation (C where a compiler is found)."""
    generated_program(data)


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
@pytest.mark.parametrize("translation", ["numba"], indirect=True)
def test_generated_programs_numba(translation: str, data: st.DataObject) -> None:
    """The same under numba, 3 examples instead of 12 (its compile being the slower)."""
    generated_program(data)


def generated_program(data: st.DataObject) -> None:
    W = data.draw(st.sampled_from([4, 8, 32]))
    waves = data.draw(st.integers(1, 2))
    groups = data.draw(st.integers(1, 3))
    D.SHARED_BASE = groups * W * waves * D.SLOT_WORDS * 4
    seed_vals = data.draw(st.lists(st.integers(0, 2**32 - 1), min_size=24, max_size=24))
    body = data.draw(D.block())
    if any(i.spec.op is Op.ATOM for i in body):
        # the old values a global atomic returns follow workgroup order on the compiled engine
        # and batch order on the NumPy engine (docs/emulator.md): compared within one workgroup
        groups = 1
        D.SHARED_BASE = W * waves * D.SLOT_WORDS * 4
    k = wg.Kernel("rnd", tuple(D.prologue(seed_vals) + body + D.epilogue()), 19, 8)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    mem = rng.integers(0, 256, D.SHARED_BASE + 16, dtype=np.uint8)
    kw = dict(grid=groups, workgroup=W * waves, memory=mem, wave_width=W)
    same_or_same_error(k, **kw)


# ------------------------------------------------------------------------------- control flow
CONTROL = """
.kernel control
.registers 12
.predicates 4
    mov.u32 r1, %tid.x
    mov.u32 r2, %ctaid.x
    mov.u32 r3, %ntid.x
    mad.lo.s32 r4, r2, r3, r1
    shl.b32 r5, r4, 2
    add.u32 r5, r5, r0
    mov.b32 r6, 0
    mov.b32 r7, 0
    and.b32 r8, r1, 7
    setp.eq.u32 p3, r8, 5
    @p3 ret
    loop
        add.u32 r7, r7, 1
        setp.gt.u32 p0, r7, r8
        if p0
            setp.lt.u32 p1, r1, 13
            break p1
            add.u32 r6, r6, 100
        else
            rem.u32 r9, r7, 3
            setp.eq.u32 p2, r9, 0
            continue p2
            add.u32 r6, r6, r7
        endif
        setp.gt.u32 p1, r7, 20
        break p1
        add.u32.lo r6.lo, r6.lo, 3
    endloop
    wave.reduce.add.u32 r10, r6
    wave.prefix.add.u32 r11, r7
    barrier
    st.global.b32 [r5], r6
    st.global.b16 [r5+2], r10
    @!p3 st.global.b8 [r5+1], r11
    ret
.end
"""


@pytest.mark.parametrize("wave_width", [8, 32])
def test_control_flow_and_exited_lanes(wave_width: int, translation: str) -> None:
    p = wg.assemble(CONTROL.replace("add.u32.lo r6.lo, r6.lo, 3", "add.u32 r6.lo, r6.lo, 3"))
    same(p, grid=3, workgroup=40, memory=4 * 3 * 40, args=[0], wave_width=wave_width)


SUBREGS = """
.kernel subregs
.registers 10
    mov.u32 r1, %tid.x
    shl.b32 r2, r1, 2
    add.u32 r2, r2, r0
    mul.lo.u32 r3, r1, 0x9E3779B9
    mul.lo.u32 r4, r1, 0x85EBCA6B
    mul.lo.u32 r5, r1, 0xC2B2AE35
    fma.f32 r3.b0, r5, r4.hi, r3.hi
    add.u32 r6.hi, r4.lo, r5.b2
    st.global.b32 [r2], r3
    st.global.b32 [r2+256], r6
    ret
.end
"""


def test_two_sub_register_sources(translation: str) -> None:
    """Found by test_generated_programs: two sub-register sources of one instruction."""
    same(wg.assemble(SUBREGS), grid=1, workgroup=64, memory=512, args=[0])


# --------------------------------------------------------------------------- traps and budget
WORD_OFFSET = """\
    mov.u32 r1, %tid.x
    mov.u32 r2, %ctaid.x
    mov.u32 r3, %ntid.x
    mad.lo.s32 r1, r2, r3, r1
    shl.b32 r1, r1, 2"""
"""r1: the thread's global id times 4 (its word's byte offset); r2, r3 scratch."""

OOB = f"""
.kernel oob
.registers 6
{WORD_OFFSET}
    add.u32 r1, r1, r0
    ld.global.b32 r4, [r1]
    st.global.b32 [r1], r4
    ret
.end
"""


def test_traps_are_the_reference_traps(translation: str) -> None:
    p = wg.assemble(OOB)
    errors = []
    for engine in ("numpy", "compiled"):
        with pytest.raises(wg.Trap) as e:
            wg.emulate(p, grid=4, workgroup=64, memory=900, args=[0], engine=engine)
        errors.append(str(e.value))
    assert errors[0] == errors[1] and "out-of-bounds" in errors[0]
    regions = [BufferRegion(0, "x", 0, 512, 4)]
    errors = []
    for engine in ("numpy", "compiled"):
        with pytest.raises(wg.Trap) as e:
            wg.emulate(p, grid=4, workgroup=64, memory=1024, args=[0], engine=engine, buffers=regions)
        errors.append(str(e.value))
    assert errors[0] == errors[1] and "x[128]" in errors[0]


SPIN = """
.kernel spin
.registers 4
    mov.b32 r1, 0
    loop
        add.u32 r1, r1, 1
        setp.eq.u32 p0, r1, 0
        break p0
    endloop
    ret
.end
"""


def test_budget_is_the_reference_budget(translation: str) -> None:
    p = wg.assemble(SPIN)
    errors = []
    for engine in ("numpy", "compiled"):
        with pytest.raises(wg.Trap) as e:
            wg.emulate(p, grid=2, workgroup=32, memory=16, max_instructions=5000, engine=engine)
        errors.append(str(e.value))
    assert errors[0] == errors[1] and "budget" in errors[0]


# ------------------------------------------------------------------------------ engine selection
def test_compiled_names_what_it_cannot_run() -> None:
    p = wg.assemble(".kernel c\n.registers 2\n mov.u32 r1, %clock\n st.global.b32 [r0], r1\n ret\n.end\n")
    with pytest.raises(wg.WaveError, match=r"instruction 0 \(mov.b32.sreg\): %clock"):
        wg.emulate(p, memory=16, engine="compiled")
    assert wg.emulate(p, memory=16, engine="auto").engine == "numpy"
    with pytest.raises(wg.WaveError, match="check=True"):
        wg.emulate(p, memory=16, engine="compiled", check=True)
    with pytest.raises(wg.WaveError, match="engine must be one of"):
        wg.emulate(p, memory=16, engine="fast")


def test_auto_stays_on_numpy_for_small_launches(monkeypatch: pytest.MonkeyPatch) -> None:
    from wavegpu.emulator.compiled import choice
    from wavegpu.emulator.state import Launch

    p = wg.assemble(OOB)
    assert wg.emulate(p, grid=1, workgroup=32, memory=1024, args=[0], engine="auto").engine == "numpy"
    # the work estimate counts an instruction 16 times per loop around it
    gemm = wg.assemble(
        Path(__file__).resolve().parents[3].joinpath("benchmarks/kernels/sgemm_blocked.wave").read_text()
    )
    k = gemm.kernels[0]
    depth = [0]
    for inst in k.instructions:
        depth.append(depth[-1] + (inst.spec.op is Op.LOOP) - (inst.spec.op is Op.ENDLOOP))
    inside = sum(1 for i, inst in enumerate(k.instructions) if depth[i] > 0 and inst.spec.op is not Op.ENDLOOP)
    launch = Launch((4, 16, 1), (16, 16, 1), 32, (), 1 << 20, False)
    assert choice.work(k, launch) == 64 * 256 * (len(k.instructions) - inside + 16 * inside)
    # a translated kernel, a launch worth it once numba is loaded, not in a fresh process (whose
    # numba import and cache load would cost more than the NumPy engine's run)
    n = 1 << 20
    va = wg.assemble((Path(__file__).resolve().parents[3] / "examples" / "vector_add.wave").read_text())
    kw = dict(grid=n // 256, memory=np.zeros(3 * n, np.float32), args=[0, 4 * n, 8 * n, n])
    assert wg.emulate(va, engine="compiled", **kw).engine == "compiled"  # translated now
    assert wg.emulate(va, engine="auto", **kw).engine == "compiled"
    monkeypatch.delitem(sys.modules, "numba", raising=False)
    from wavegpu.emulator.compiled import cbuild

    monkeypatch.setattr(cbuild, "_LOADED", cbuild.Once())  # as in a process that has loaded no translation
    assert wg.emulate(va, engine="auto", **kw).engine == "numpy"


def test_kernel_calls_and_launch_pass_the_engine() -> None:
    n = 300
    x = np.linspace(-2, 2, n).astype(np.float32)
    y = np.ones(n, np.float32)
    res = K.saxpy(np.float32(2), x, y, n, grid=2, workgroup=256, engine="compiled")
    assert res.engine == "compiled"
    np.testing.assert_array_equal(y, np.float32(2) * x + np.float32(1))
    prog = wg.assemble(OOB)
    assert wg.launch(prog, grid=1, workgroup=32, memory=256, args=[0], engine="compiled").engine == "compiled"


# ------------------------------------------------------------------ loops run lane by lane
@st.composite
def lane_loop_body(draw: st.DrawFn, depth: int = 0) -> list[Instruction]:
    """What a loop run lane by lane may hold: value rows (float ones included), loads, ifs,
    breaks and continues (no store, atomic, wave operation, barrier or ret)."""
    out: list[Instruction] = []
    for _ in range(draw(st.integers(1, 6))):
        choice = draw(st.sampled_from(["alu"] * 5 + ["setp", "ld", "break", "continue"] + ["if"] * (depth < 2)))
        if choice == "alu":
            out.append(draw(D.alu()))
        elif choice == "setp":
            out.append(draw(D.alu([r for r in D.VALUE if r.name.startswith("setp.")])))
        elif choice == "ld":
            out += [i for i in draw(D.memory_op()) if i.spec.cls == "load"]
        elif choice in ("break", "continue"):
            out.append(Instruction(row(choice), (Pred(draw(st.sampled_from(D.PRED_FREE))),)))
        else:
            out.append(Instruction(row("if"), (Pred(draw(st.sampled_from(D.PRED_FREE))),)))
            out += draw(lane_loop_body(depth + 1))
            if draw(st.booleans()):
                out.append(Instruction(row("else")))
                out += draw(lane_loop_body(depth + 1))
            out.append(Instruction(row("endif")))
    return out


@settings(max_examples=10, deadline=None)
@given(st.data())
def test_loops_run_lane_by_lane(data: st.DataObject) -> None:
    """Innermost loops without stores run each lane round on its own: the same memory, traps
    and budget as the lockstep reference, with per-lane trip counts, divergent ifs, breaks and
    continues, float accumulators and loads (the generated code is checked to take that path)."""
    W = data.draw(st.sampled_from([8, 32]))
    groups = data.draw(st.integers(1, 2))
    D.SHARED_BASE = groups * W * 2 * D.SLOT_WORDS * 4
    seed_vals = data.draw(st.lists(st.integers(0, 2**32 - 1), min_size=24, max_size=24))
    c = D.COUNTERS[0]
    trips = [
        Instruction(row("and.b32"), (Reg(c), Reg(data.draw(st.sampled_from(D.WORK))), Imm(15))),  # 0..15 per lane
        Instruction(row("loop")),
        Instruction(row("setp.eq.u32"), (Pred(6), Reg(c), Imm(0))),
        Instruction(row("break"), (Pred(6),)),
        Instruction(row("sub.u32"), (Reg(c), Reg(c), Imm(1))),
        *data.draw(lane_loop_body()),
        Instruction(row("endloop")),
    ]
    k = wg.Kernel("lanes", tuple(D.prologue(seed_vals) + trips + D.epilogue()), 19, 8)
    assert "mx = 0" in generate(k, Shape(W, (2 * W, 1, 1)))  # the loop runs lane by lane
    mem = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))).integers(0, 256, D.SHARED_BASE + 16, np.uint8)
    budget = data.draw(st.sampled_from([1_000_000, 60, 200]))
    kw = dict(grid=groups, workgroup=2 * W, memory=mem, wave_width=W, max_instructions=budget)
    same_or_same_error(k, **kw)


NAN_PAYLOADS = """
.kernel nan_payloads
.param data, buffer, u32
.workgroup_size 64, 1, 1
    mov.u32 r5, %tid.x
    shl.b32 r6, r5, 2
    add.u32 r6, r0, r6
    ld.global.u32 r7, [r6]              // accumulator's bits on entry
    and.b32 r8, r5, 3                   // 0..3 trips: a lane with none keeps r7's bits
    ld.global.u32 r9, [r6+256]
    ld.global.u16 r10, [r6+512]
    loop
        setp.eq.u32 p0, r8, 0
        break p0
        sub.u32 r8, r8, 1
        cvt.f32.f16 r11, r10
        fma.f32 r7, r11, r9, r7
        add.f32 r12, r11, r9
    endloop
    cvt.f32.f16 r13, r10                // a float result read by a float row and stored
    add.f32 r14, r13, r9
    mul.f32 r15, r14, r13
    st.global.u32 [r6+768], r7
    st.global.u32 [r6+1024], r12
    st.global.u32 [r6+1280], r13
    st.global.u32 [r6+1536], r15
    ret
.end
"""


def test_nan_payloads_inside_and_out_of_float_locals(translation: str) -> None:
    """Float locals and float twins let NaN payloads differ inside a run (every reader is a
    float row); what leaves it is the reference's bits: canonical NaNs for results, and a
    register's entry bits, payload and all, where the loop never wrote it."""
    prog = wg.assemble(NAN_PAYLOADS)
    src = generate(prog.kernels[0], Shape(32, (64, 1, 1)))
    assert "f_7 = fma32(" in src and "x_14 = x_13 + " in src  # a float local and a float twin
    acc = [0x7FA00001, 0xFFC00000, 0x7F800000, 0x3F800000, 0xFF800001, 0x00000001, 0x80000000, 0x7FFFFFFF]
    add = [0x7F800000, 0xFF800000, 0x7FC12345, 0x3F800000, 0xFFFFFFFF, 0x00400000, 0x40000000, 0x80000000]
    half = [0x7E01, 0xFC00, 0x3C00, 0x7D00, 0x0001, 0x8000, 0x7C00, 0xFE7F]
    rng = np.random.default_rng(3)
    mem = np.zeros(448, np.uint32)
    mem[:64] = rng.choice(acc, 64)
    mem[64:128] = rng.choice(add, 64)
    mem[128:160] = np.asarray(rng.choice(half, 64), np.uint16).view(np.uint32)
    got = same(prog, grid=1, memory=mem, args=[0])
    out = got.memory.view(np.uint32)
    # a lane with no trip stores its entry bits untouched (a payload NaN among them)
    keep = np.arange(64) % 4 == 0
    assert np.array_equal(out[192:256][keep], mem[:64][keep])
    floats = out[192:]
    nans = np.isnan(floats.view(np.float32))
    assert np.all(floats[nans & ~np.repeat(keep[None], 4, 0).ravel()] == 0x7FFFFFFF)


def test_every_half_to_f32(translation: str) -> None:
    """cvt.f32.f16's conversion on all 65536 halves, both ways the engine has (the host's
    instruction where it has one, and bits): NumPy's exact widening, NaNs canonical."""
    from numba import njit

    from wavegpu.emulator.compiled.intrinsics import native_half
    from wavegpu.emulator.compiled.scalar import c32, half_f32_bits, half_f32_native

    h = np.arange(1 << 16, dtype=np.int64)
    v = h.astype(np.uint16).view(np.float16).astype(np.float32)
    ref = v.view(np.uint32).astype(np.int64)
    ref[np.isnan(v)] = 0x7FFFFFFF
    ways = [half_f32_bits] + ([half_f32_native] if native_half() else [])
    for fn in ways:

        @njit
        def every(h: np.ndarray, fn=fn) -> np.ndarray:  # type: ignore[no-untyped-def]
            out = np.empty_like(h)
            for i in range(h.size):
                out[i] = c32(fn(h[i]))
            return out

        got = every(h)
        bad = np.flatnonzero(got != ref)
        assert not bad.size, f"{fn.__name__}: {bad.size} halves, first {int(h[bad[0]]):#06x}: {int(got[bad[0]]):#x}"


ATOMICS = """
.kernel bins
.param data, buffer, u32
.param bins, buffer, u32
.workgroup_size 256, 1, 1
    mov.u32 r5, %tid.x
    mov.u32 r6, %ctaid.x
    shl.b32 r7, r6, 8
    add.u32 r7, r7, r5
    shl.b32 r7, r7, 2
    add.u32 r7, r0, r7
    ld.global.u32 r8, [r7]
    and.b32 r9, r8, 7
    shl.b32 r9, r9, 2
    add.u32 r9, r1, r9
    mov.u32 r11, 32
    loop                                // 32 rounds: the threads overlap for long enough
        setp.eq.u32 p0, r11, 0
        break p0
        sub.u32 r11, r11, 1
        atom.global.OP r10, [r9], r8
    endloop
    st.global.u32 [r7], STORED
    ret
.end
"""


@pytest.mark.parametrize("op", ["add.u32", "sub.u32", "min.s32", "max.u32", "and.b32", "or.b32", "xor.b32"])
def test_atomics_on_all_cores(op: str, translation: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Workgroups on two threads updating the same eight words at once (1024 workgroups of 256
    lanes, 32 rounds): one atomic instruction each, so no update is lost and the memory is the reference's;
    a kernel that reads the old values, or whose result depends on the order, runs in order."""
    from wavegpu.emulator.compiled import engine
    from wavegpu.emulator.compiled.engine import threads_for

    monkeypatch.setenv("WAVEGPU_THREADS", "2")
    # no probe (one piece alone, then some together, the rest the faster way): all together, so
    # that the threads contend on every word (the probe itself is run by the other kernel tests)
    monkeypatch.setattr(engine, "_atomic", lambda k: False)
    n_wg = 1024
    prog = wg.assemble(ATOMICS.replace("OP", op).replace("STORED", "r8"))
    assert threads_for(prog.kernels[0], n_wg) == 2
    rng = np.random.default_rng(11)
    data = rng.integers(0, 1 << 32, n_wg * 256, dtype=np.uint32)
    bins = rng.integers(0, 1 << 32, 8, dtype=np.uint32)
    mem = np.concatenate([data, bins])
    got = same(prog, grid=n_wg, memory=mem, args=[0, 4 * data.size])
    out = got.memory.view(np.uint32)[data.size :]
    lanes = data.astype(np.int64)
    for b in range(8):
        v = np.repeat(lanes[(data & 7) == b], 32)
        word = np.int64(bins[b])
        if op == "add.u32":
            word = (word + v.sum()) & 0xFFFFFFFF
        elif op == "sub.u32":
            word = (word - v.sum()) & 0xFFFFFFFF
        elif op == "min.s32":
            word = min(word - (word >> 31 << 32), *(v - (v >> 31 << 32))) & 0xFFFFFFFF
        elif op == "max.u32":
            word = max(word, *v)
        elif op == "and.b32":
            word = np.bitwise_and.reduce(v, initial=word)
        elif op == "or.b32":
            word = np.bitwise_or.reduce(v, initial=word)
        else:
            word = np.bitwise_xor.reduce(v, initial=word)
        assert out[b] == word, f"bin {b}"
    monkeypatch.undo()  # and with the probe: the same memory whichever way the rest runs
    monkeypatch.setenv("WAVEGPU_THREADS", "2")
    assert np.array_equal(same(prog, grid=n_wg, memory=mem, args=[0, 4 * data.size]).memory, got.memory)
    reads_old = wg.assemble(ATOMICS.replace("OP", op).replace("STORED", "r10")).kernels[0]
    assert threads_for(reads_old, n_wg) == 1
    for ordered in ("exch.b32", "add.f32"):
        assert threads_for(wg.assemble(ATOMICS.replace("OP", ordered).replace("STORED", "r8")).kernels[0], n_wg) == 1


# ----------------------------------------------- the Rust toolchain's GEMM shapes: accumulators
def accumulators(t: str, nregs: int = NUM_GPRS, group: int = 32, trips: int = 3) -> str:
    """The Rust toolchain's GEMM kernels' shape, for every register: each register from r4 up to
    nregs - 1 (pairs for f64) is a loop accumulator of type t (f32, f16 or f64), `group` of them
    per loop (one kernel, its compile bounded); the f32 form also takes `rcp.f32` (the `r32()`
    helper) of r32 and r64 after the loops. Inputs from `inp`, results to `out`, nregs words per
    thread."""
    first = 4
    accs = list(range(first, nregs - 1, 2)) if t == "f64" else list(range(first, nregs))
    lines = [
        f".kernel acc_{t}", f".registers {nregs}", ".predicates 1", ".param inp, buffer, u32, readonly",
        ".param out, buffer, u32", ".workgroup_size 32, 1, 1", "    mov.b32 r2, %tid.x",
        f"    mul.lo.u32 r2, r2, {4 * nregs}", "    add.u32 r3, r0, r2",
    ]  # fmt: skip
    for i in range(first, nregs, 4):
        lines += [".access inp", f"    ld.global.v4.b32 {{r{i}, r{i + 1}, r{i + 2}, r{i + 3}}}, [r3+{4 * i}]"]
    lines += ["    cvt.f32.u32 r2, r2", "    mul.f32 r2, r2, 0.375"]
    if t == "f64":
        lines += ["    cvt.f64.f32 r2:r3, r2"]
        ops = ["add.f64 r{0}:r{1}, r{0}:r{1}, r2:r3", "fma.f64 r{0}:r{1}, r2:r3, r2:r3, r{0}:r{1}"]
    elif t == "f32":
        ops = ["add.f32 r{0}, r{0}, r2", "fma.f32 r{0}, r2, r2, r{0}", "mul.f32 r{0}, r{0}, r2"]
    else:
        lines += ["    cvt.f16.f32 r2, r2"]
        ops = ["add.f16 r{0}, r{0}, r2", "fma.f16 r{0}, r2, r2, r{0}", "mul.f16 r{0}, r{0}, r2"]
    counter = 1  # r1 (the out address) is recomputed after the loops
    for g in range(0, len(accs), group):
        lines += [f"    mov.b32 r{counter}, 0", "    loop"]
        lines += ["    " + ops[i % len(ops)].format(i, i + 1) for i in accs[g : g + group]]
        lines += [f"    add.u32 r{counter}, r{counter}, 1", f"    setp.ge.u32 p0, r{counter}, {trips}"]
        lines += ["    break p0", "    endloop"]
    lines += ["    mov.b32 r1, %ntid.x", f"    mul.lo.u32 r1, r1, {4 * nregs}", "    mov.b32 r3, %tid.x"]
    lines += [f"    mul.lo.u32 r3, r3, {4 * nregs}", "    add.u32 r1, r1, r3", "    add.u32 r1, r0, r1"]
    if t == "f32":
        lines += ["    rcp.f32 r32, r32", "    rcp.f32 r64, r64"]
    for i in range(first, nregs, 4):
        lines += [".access out", f"    st.global.v4.b32 [r1+{4 * i}], {{r{i}, r{i + 1}, r{i + 2}, r{i + 3}}}"]
    return "\n".join([*lines, "    ret", ".end", ""])


@pytest.mark.parametrize(
    ("t", "translation"),
    [("f32", "c"), ("f16", "c"), ("f64", "c"), ("f32", "numba")],  # numba (slow to compile): f32's float locals
    indirect=["translation"],
)
def test_every_register_as_a_loop_accumulator(t: str, translation: str) -> None:
    """Every register number up to the kernel's limit (all 256, which holds the Rust toolchain's
    GEMM kernels' r4-r79) as a loop accumulator (f32 ones as float locals: r32's was named `f32`
    and shadowed the conversion helper), bit-identical to the NumPy engine."""
    nregs = NUM_GPRS
    k = wg.assemble(accumulators(t, nregs), f"acc_{t}.wave").kernels[0]
    n = 32 * nregs
    rng = np.random.default_rng(7)
    if t == "f32":
        inp = rng.normal(size=n).astype(np.float32).view(np.uint32)
    elif t == "f16":
        inp = rng.normal(size=n).astype(np.float16).view(np.uint16).astype(np.uint32)
    else:
        inp = rng.normal(size=n // 2).view(np.uint32)
    res = same(k, grid=1, memory=np.concatenate([inp, np.zeros(n, np.uint32)]), args=[0])
    assert np.count_nonzero(res.view(np.uint32, 4 * n, n)) > n // 2  # the results were written


def test_an_f32_accumulator_in_r32(translation: str) -> None:
    """The minimal form of the defect: `add.f32 r32, r32, 1.5` ten times in a loop, then a store."""
    src = """
.kernel k
.param out, buffer, f32
.workgroup_size 32, 1, 1
    mov.b32 r32, 0
    mov.b32 r33, 0
    loop
    add.f32 r32, r32, 1.5
    add.u32 r33, r33, 1
    setp.ge.u32 p0, r33, 10
    break p0
    endloop
    mov.b32 r34, %tid.x
    shl.b32 r34, r34, 2
    add.u32 r34, r0, r34
    st.global.f32 [r34], r32
    ret
"""
    res = same(wg.assemble(src, "r32.wave"), grid=1, memory=np.zeros(32, np.float32), args=[0])
    assert list(res.view(np.float32, 0, 32)) == [15.0] * 32


# ------------------------------------------------------------ a translation that fails to compile
def _fresh_kernel() -> wg.Program:
    """A small kernel no earlier run has translated (its constant is new), so numba compiles it."""
    return wg.assemble(f"""
.kernel fresh
.param out, buffer, u32
.workgroup_size 32, 1, 1
    mov.b32 r1, %tid.x
    shl.b32 r1, r1, 2
    add.u32 r1, r0, r1
    mov.b32 r2, {time.time_ns() & 0xFFFFFFF}
    st.global.b32 [r1], r2
    ret
""")


def _auto_always(monkeypatch: pytest.MonkeyPatch) -> None:
    from wavegpu.emulator.compiled import choice

    for name in ("AUTO_MIN_WORK", "AUTO_MIN_CACHED", "AUTO_MIN_COLD"):
        monkeypatch.setattr(choice, name, 0)


def test_a_compile_that_really_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    """numba really failing (a RecursionError in its passes: Python's recursion limit set just
    above the caller's depth, lower than any numba compile needs, warm or cold): "compiled" is a
    WaveError naming the kernel and the reason in one line; then, at the normal limit, "auto"
    (which remembers the failure and does not compile again) warns in one line and runs the
    launch on the NumPy engine, bit-identical to it; never a traceback."""
    pytest.importorskip("numba")
    monkeypatch.setenv("WAVEGPU_COMPILED", "numba")
    _auto_always(monkeypatch)
    p = _fresh_kernel()
    kw = dict(grid=1, memory=np.zeros(32, np.uint32), args=[0])
    ref = wg.emulate(p, engine="numpy", **kw)  # type: ignore[arg-type]
    from wavegpu.emulator.compiled import engine as _  # noqa: F401  imported at the normal limit
    from wavegpu.emulator.compiled.cache import load_rows

    load_rows()  # the shared row module too (its functions compile lazily)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack()) + 40)
    try:
        # the reason is numba's (its own error type where it wraps the RecursionError)
        with pytest.raises(wg.WaveError, match=r"kernel 'fresh': its translation failed to compile \(.+\)$") as e:
            wg.emulate(p, engine="compiled", **kw)  # type: ignore[arg-type]
    finally:
        sys.setrecursionlimit(limit)
    assert "\n" not in str(e.value)
    with pytest.warns(
        wg.EngineWarning, match=r"kernel 'fresh': the compiled engine failed to compile it \(.+\); running"
    ):
        got = wg.emulate(p, engine="auto", **kw)  # type: ignore[arg-type]
    assert got.engine == "numpy" and np.array_equal(got.memory, ref.memory)


class _Odd(Exception):
    pass


def test_any_compile_failure_falls_back(translation: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever the compile raises (here an exception of no known kind from loading the module
    or the shared object), with the translation forced (WAVEGPU_COMPILED)."""
    from wavegpu.emulator.compiled import cbuild
    from wavegpu.emulator.compiled import engine as E

    def boom(*a: object, **kw: object) -> None:
        raise _Odd("the loader\nsaid no")

    _auto_always(monkeypatch)
    monkeypatch.setattr(E if translation == "numba" else cbuild, "load", boom)
    p = _fresh_kernel()
    with pytest.warns(wg.EngineWarning, match=r"\(_Odd: the loader\); running it on the NumPy engine"):
        assert wg.emulate(p, grid=1, memory=np.zeros(32, np.uint32), args=[0], engine="auto").engine == "numpy"
    with pytest.raises(wg.WaveError, match=r"engine='compiled' cannot run kernel 'fresh': .*_Odd: the loader"):
        wg.emulate(p, grid=1, memory=np.zeros(32, np.uint32), args=[0], engine="compiled")


@pytest.mark.parametrize("engine", ["auto", "compiled"])
def test_wave_emu_says_it_in_one_line(engine: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`wave-emu`: a one-line warning and the NumPy engine's run under --engine auto, a one-line
    error and status 1 under --engine compiled; no traceback either way."""
    src = tmp_path / "k.wave"
    src.write_text(
        ".kernel k\n.param out, buffer, u32\n.workgroup_size 32, 1, 1\n    mov.b32 r1, %tid.x\n"
        "    shl.b32 r1, r1, 2\n    add.u32 r1, r0, r1\n    st.global.b32 [r1], r1\n    ret\n"
    )
    code = (
        "import sys; import wavegpu.emulator.compiled.engine as E; import wavegpu.emulator.compiled.choice as S\n"
        "def boom(*a, **k): raise RecursionError('maximum recursion depth exceeded')\n"
        "E.load = boom; S.AUTO_MIN_WORK = S.AUTO_MIN_CACHED = S.AUTO_MIN_COLD = 0\n"
        "from wavegpu.cli import emu_main; sys.argv[0] = 'wave-emu'; emu_main()"
    )
    args = [str(src), "--grid", "1,1,1", "--device-memory", "4096", "--engine", engine, "--dump-u32", "0:4"]
    pytest.importorskip("numba")
    monkeypatch.setenv("WAVEGPU_COMPILED", "numba")  # the loader replaced is numba's
    r = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120)
    assert "Traceback" not in r.stderr, r.stderr
    if engine == "compiled":
        assert r.returncode == 1 and r.stderr.count("\n") == 1, r.stderr
        assert "kernel 'k'" in r.stderr and "RecursionError" in r.stderr
    else:
        assert r.returncode == 0, r.stderr
        assert r.stderr.startswith("warning: kernel 'k': ") and r.stderr.count("\n") == 1, r.stderr
        assert r.stdout.split()[:4] == ["0", "4", "8", "12"]


# -------------------------------------------------------------- the C translation and its fallbacks
FAILING_CC = """#!/bin/sh
if [ "$1" = "--version" ]; then echo "failing-cc 1.0 (a test's compiler)"; exit 0; fi
echo "kernel.c:1:1: error: this compiler refuses everything" >&2
exit 1
"""


def _with_compiler(monkeypatch: pytest.MonkeyPatch, path: str) -> None:
    from wavegpu.emulator.compiled import cbuild

    monkeypatch.setenv("CC", path)
    for f in (cbuild.compiler, cbuild.digest):
        f.cache_clear()
    monkeypatch.setattr(cbuild, "_LOADED", cbuild.Once())


def test_a_c_compiler_that_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A C compiler that really fails (a script on $CC exiting 1 with an error): by default the
    launch runs on numba after a one-line EngineWarning naming the compiler's error, bit-identical;
    with WAVEGPU_COMPILED=c, "compiled" is a one-line WaveError and "auto" warns and runs on NumPy."""
    from wavegpu.emulator.compiled import cbuild
    from wavegpu.emulator.compiled import engine as E

    pytest.importorskip("numba")
    cc = tmp_path / "failing-cc"
    cc.write_text(FAILING_CC)
    cc.chmod(0o755)
    _with_compiler(monkeypatch, str(cc))
    monkeypatch.setenv("WAVEGPU_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("WAVEGPU_COMPILED", raising=False)
    _auto_always(monkeypatch)
    try:
        p = _fresh_kernel()
        kw = dict(grid=1, memory=np.zeros(32, np.uint32), args=[0])
        ref = wg.emulate(p, engine="numpy", **kw)  # type: ignore[arg-type]
        assert E.translation() == "c"
        warn = r"kernel 'fresh': the C translation failed to compile \(CCompileError: failing-cc exited with 1: .*refuses everything\); running it on numba$"
        with pytest.warns(wg.EngineWarning, match=warn):
            got = wg.emulate(p, engine="compiled", **kw)  # type: ignore[arg-type]
        assert got.engine == "compiled" and E.last_used() == "numba"
        assert np.array_equal(got.memory, ref.memory)
        monkeypatch.setenv("WAVEGPU_COMPILED", "c")
        with pytest.raises(
            wg.WaveError, match=r"kernel 'fresh': its translation failed to compile \(CCompileError"
        ) as e:
            wg.emulate(p, engine="compiled", **kw)  # type: ignore[arg-type]
        assert "\n" not in str(e.value)
        with pytest.warns(
            wg.EngineWarning, match=r"\(CCompileError: failing-cc exited with 1: .*\); running it on the NumPy"
        ):
            got = wg.emulate(p, engine="auto", **kw)  # type: ignore[arg-type]
        assert got.engine == "numpy" and np.array_equal(got.memory, ref.memory)
    finally:
        for f in (cbuild.compiler, cbuild.digest):
            f.cache_clear()


def test_no_c_compiler_means_numba(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a C compiler ($CC naming none) the compiled engine is numba's, silently."""
    from wavegpu.emulator.compiled import cbuild
    from wavegpu.emulator.compiled import engine as E

    pytest.importorskip("numba")
    _with_compiler(monkeypatch, str(tmp_path / "no-such-cc"))
    monkeypatch.delenv("WAVEGPU_COMPILED", raising=False)
    try:
        assert not cbuild.has_compiler() and E.translation() == "numba"
        same(_fresh_kernel(), grid=1, memory=np.zeros(32, np.uint32), args=[0])
        assert E.last_used() == "numba"
        monkeypatch.setenv("WAVEGPU_COMPILED", "c")
        with pytest.raises(wg.WaveError, match=r"neither a C compiler .* is available for WAVEGPU_COMPILED=c"):
            wg.emulate(_fresh_kernel(), grid=1, memory=np.zeros(32, np.uint32), args=[0], engine="compiled")
    finally:
        for f in (cbuild.compiler, cbuild.digest):
            f.cache_clear()


def test_what_c_cannot_spell_runs_on_numba(monkeypatch: pytest.MonkeyPatch) -> None:
    """A kernel whose generated program the C emitter cannot spell (CUntranslatable: here every
    shift, as if `shl` had no C form) runs on numba without a warning, bit-identical; one it can
    spell still runs in C."""
    from wavegpu.emulator.compiled import ctrans
    from wavegpu.emulator.compiled import engine as E

    pytest.importorskip("numba")
    from wavegpu.emulator.compiled.cbuild import has_compiler

    if not has_compiler():
        pytest.skip("no C compiler on PATH (cc, gcc, clang)")
    monkeypatch.delenv("WAVEGPU_COMPILED", raising=False)
    real = ctrans.translate

    def no_shifts(source: str, chunked: bool | None = None) -> str:
        if "shl(" in source:
            raise ctrans.CUntranslatable("shl has no C form (generated line 1: shl(r_1, 2))")
        return real(source, chunked)

    monkeypatch.setattr(ctrans, "translate", no_shifts)
    E._c_spelt.cache_clear()
    try:
        p = _fresh_kernel()  # shifts the thread id
        from wavegpu.emulator.compiled.codegen import Shape

        assert E.c_reason(p.kernels[0], Shape(32, (32, 1, 1))) is not None
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("error")
            same(p, grid=1, memory=np.zeros(32, np.uint32), args=[0])
        assert E.last_used() == "numba"
        q = wg.assemble(
            CONTROL.replace("shl.b32 r5, r4, 2", "mul.lo.u32 r5, r4, 4").replace("add.u32.lo r6.lo", "add.u32 r6.lo")
        )
        got = wg.emulate(q, grid=1, workgroup=40, memory=4 * 40, args=[0], engine="compiled")
        assert got.engine == "compiled" and E.last_used() == "c"
    finally:
        E._c_spelt.cache_clear()


C_CACHE_PROBE = r"""
import sys
import numpy as np
import wavegpu as wg
from wavegpu.emulator.compiled import cbuild, engine as E
from wavegpu.emulator.compiled.codegen import Shape
if sys.argv[1:] == ["no-cc"]:  # a second process must not need the compiler
    def refuse(*a, **k):
        raise AssertionError("compiled again")
    cbuild._cc = refuse
p = wg.assemble(open(%r).read())
k = p.kernels[0]
shape = Shape(32, (32, 1, 1))
print(E.cached(k, shape), E.translation_key(k, shape))
r = wg.emulate(p, grid=1, memory=np.zeros(32, np.uint32), args=[0], engine="compiled")
print(E.last_used(), r.memory.view(np.uint32)[:4].tolist())
"""


def test_c_objects_are_cached_privately(tmp_path: Path) -> None:
    """The C translation is compiled once: the first process writes compiled/<key>/kernel.c and
    kernel.so (private folders), a second one loads the object without calling the compiler."""
    from wavegpu.emulator.compiled.cbuild import has_compiler

    if not has_compiler():
        pytest.skip("no C compiler on PATH (cc, gcc, clang)")
    src = tmp_path / "k.wave"
    src.write_text(
        ".kernel k\n.param out, buffer, u32\n.workgroup_size 32, 1, 1\n    mov.b32 r1, %tid.x\n"
        "    shl.b32 r1, r1, 2\n    add.u32 r1, r0, r1\n    st.global.b32 [r1], r1\n    ret\n"
    )
    root = tmp_path / "cache"
    env = {**os.environ, "WAVEGPU_CACHE_DIR": str(root), "WAVEGPU_COMPILED": "c"}
    code = C_CACHE_PROBE % str(src)
    runs = []
    for extra in ([], ["no-cc"]):
        r = subprocess.run([sys.executable, "-c", code, *extra], env=env, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr[-2000:]
        runs.append(r.stdout.split("\n"))
    first, second = runs
    assert first[0].startswith("False c-") and second[0].startswith("True c-")
    assert first[1] == second[1] == "c [0, 4, 8, 12]"
    key = first[0].split()[1]
    folder = root / "compiled" / key
    assert sorted(f.name for f in folder.iterdir()) == ["kernel.c", "kernel.so"]
    modes = {p.stat().st_mode & 0o777 for p in [root / "compiled", folder]}
    assert modes == {0o700}
