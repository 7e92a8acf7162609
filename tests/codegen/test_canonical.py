"""codegen/canonical: where float results must be canonical NaNs, checked on the emulator.

The plan is proved by running each kernel twice on the emulator: as it is, and rewritten to act
like a backend that follows the plan on the worst hardware: every float row the plan leaves
bare turns a NaN result into a *non-canonical* NaN (a payload and sign the emulator never
makes), and the plan's canonicalisation points put the canonical NaN back. Memory must be
bit-identical: no payload the plan leaves in place is ever observed."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import wavegpu as wg
from wavegpu.codegen import canonical
from wavegpu.isa import Imm, Instruction, Pair, Reg, row
from wavegpu.wbin import Kernel

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "emulator"))
sys.path.insert(0, str(ROOT / "tests" / "backends"))
import test_differential as D  # noqa: E402  (the emulator's random structured programs)
from test_opencl import OK, compiled_cases, example_cases  # noqa: E402

PAYLOADS = (0x7FC0BEEF, 0xFF800001, 0x7F800123, 0xFFFFFFFF, 0x7FBFFFFF)


def _select_nan(guard: object, hi: int, t: int, c: int, writes: list[tuple[int, int]]) -> list[Instruction]:
    """Where register `hi` holds a NaN pattern (as f32; the high word of an f64 canonical NaN
    too), write each (register, bits) of `writes`; t and c are scratch registers."""

    def mk(key: str, *ops: object) -> Instruction:
        return Instruction(row(key), tuple(ops), guard)  # type: ignore[arg-type]

    lim = 0x7F800000 if len(writes) == 1 else 0x7FF00000
    out = [mk("and.b32", Reg(t), Reg(hi), Imm(0x7FFFFFFF)), mk("sub.s32", Reg(t), Imm(lim), Reg(t))]
    for r, bits in writes:  # t < 0 exactly where the pattern is a NaN
        out += [mk("mov.b32", Reg(c), Imm(bits)), mk("slct.b32.s32", Reg(r), Reg(r), Reg(c), Reg(t))]
    return out


def worst_case(k: Kernel, payload: int) -> Kernel:
    """k as a backend following canonical.plan(k) would run it on hardware whose bare float
    rows give the NaN `payload` (f32; f64: a payload NaN too)."""
    plan = canonical.plan(k.instructions)
    t, c = k.registers, k.registers + 1
    out: list[Instruction] = []
    acc: list[int | None] = []
    for pc, inst in enumerate(k.instructions):
        before = [x for r in plan.at_use.get(pc, ()) for x in _select_nan(None, r, t, c, [(r, 0x7FFFFFFF)])]
        after: list[Instruction] = []
        if plan.bare(pc, inst.spec.key):
            d = inst.operands[inst.spec.dests[0]]
            if isinstance(d, Pair):
                after = _select_nan(inst.guard, d.n + 1, t, c, [(d.n, 0x1234), (d.n + 1, payload | 0x7FF80000)])
            else:
                assert isinstance(d, Reg) and d.sel == 0
                after = _select_nan(inst.guard, d.n, t, c, [(d.n, payload)])
        out += [*before, inst, *after]
        a = None if k.accesses is None else k.accesses[pc]
        acc += [None] * len(before) + [a] + [None] * len(after)
    return dataclasses.replace(
        k,
        instructions=tuple(out),
        registers=k.registers + 2,
        lines=None,
        accesses=None if k.accesses is None else tuple(acc),
    )


def same_memory(k: Kernel, payload: int, **launch: object) -> None:
    a = wg.launch(k, device="emulator", **launch).memory  # type: ignore[arg-type]
    b = wg.launch(worst_case(k, payload), device="emulator", **launch).memory  # type: ignore[arg-type]
    assert np.array_equal(a, b), wg.disassemble(k)


def _k(src: str) -> Kernel:
    return wg.assemble(src, "t.wave").kernels[0]


# ------------------------------------------------------------------ the plan on small kernels
def test_an_accumulator_stored_after_its_loop_is_canonicalised_at_the_store() -> None:
    k = _k(
        """.kernel k
.registers 6
.predicates 1
    mov.b32 r2, 0
    mov.b32 r3, 0
    loop
        mov.b32 r4, r2
        setp.ge.u32 p0, r3, r1
        break p0
        ld.global.b32 r5, [r0]
        fma.f32 r2, r5, r5, r4
        add.u32 r3, r3, 1
    endloop
    st.global.b32 [r0], r4
"""
    )
    p = canonical.plan(k.instructions)
    fma = next(i for i, x in enumerate(k.instructions) if x.spec.key == "fma.f32")
    assert p.bare(fma, "fma.f32") and not p.at_def
    assert p.at_use == {len(k.instructions) - 1: (4,)}


def test_observations_and_mixed_origins() -> None:
    k = _k(
        """.kernel k
.registers 8
.predicates 1
    ld.global.b32 r1, [r0]
    add.f32 r2, r1, r1
    mul.f32 r3, r2, r2
    and.b32 r4, r3, 1
    sub.f32 r5, r1, r1
    setp.lt.f32 p0, r5, r1
    mov.b32 r6, r1
    @p0 div.f32 r6, r1, r1
    st.global.b32 [r0+4], r6
    neg.f32 r7, r2
    add.f64 r0:r1, r0:r1, r0:r1
    st.global.b64 [r0+8], r0:r1
    add.f32 r7, r7, r7
    st.global.b32 [r0+16], r7.lo
"""
    )
    p = canonical.plan(k.instructions)
    assert p.bare(1, "add.f32")  # read by the float mul only
    assert p.at_use[3] == (3,)  # the and observes the mul's bits: canonical there
    assert p.bare(4, "sub.f32")  # compared only
    assert 7 in p.at_def  # r6 is the loaded value or the div's: the div canonicalises
    assert p.at_use[9] == (2,)  # neg flips the bits of whatever NaN comes in
    assert 10 in p.at_def  # an observed f64 is canonical where it is made
    assert p.at_use[13] == (7,) and p.at_def == {7, 10}  # a sub-register read: the whole register


def test_a_value_from_the_previous_iteration() -> None:
    """r2 is observed at the top of the loop, before the add of this iteration writes it."""
    k = _k(
        """.kernel k
.registers 4
.predicates 1
    mov.b32 r3, 0
    ld.global.b32 r2, [r0]
    loop
        st.global.b32 [r0], r2
        setp.ge.u32 p0, r3, r1
        break p0
        add.f32 r2, r2, r2
        add.u32 r3, r3, 1
    endloop
"""
    )
    p = canonical.plan(k.instructions)
    assert 6 in p.at_def and not p.at_use  # the load is not a float: the add canonicalises


# ------------------------------------------------------------------ worst-case hardware on the emulator
@pytest.mark.parametrize("payload", PAYLOADS[:2])
def test_examples_and_compiled_corpus_are_bit_identical(payload: int) -> None:
    for prog, grid, wgs, mem, args in example_cases():
        m = mem.copy().view(np.uint32)
        m[::7] = payload  # NaN payloads among the inputs
        for k in prog.kernels:
            same_memory(k, payload, grid=grid, workgroup=wgs, memory=m, args=args)
    from wavegpu.runtime.kernel import run_kernel

    for fn, args, grid, wgs in compiled_cases():
        k = fn.program.kernels[0]  # type: ignore[attr-defined]
        outs = []
        for kk in (k, worst_case(k, payload)):
            run = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
            run_kernel(kk, fn.bind(tuple(run), {}), grid=grid, workgroup=wgs, device="emulator")  # type: ignore[attr-defined]
            outs.append([a for a in run if isinstance(a, np.ndarray)])
        for x, y in zip(*outs):
            assert np.array_equal(x.view(np.uint8), y.view(np.uint8)), k.name


def test_the_register_blocked_sgemm_is_bit_identical() -> None:
    prog = wg.assemble((ROOT / "examples" / "sgemm_blocked" / "sgemm_blocked.wave").read_text(), "s.wave")
    n = 64
    rng = np.random.default_rng(5)
    a = rng.standard_normal(n * n).astype(np.float32)
    b = rng.standard_normal(n * n).astype(np.float32)
    a.view(np.uint32)[::97] = 0x7FC0BEEF
    b.view(np.uint32)[5] = 0xFF800001
    mem = np.concatenate([a, b, np.zeros(n * n, np.float32)])
    same_memory(
        prog.kernels[0], 0xFFC00001, grid=(1, 1), workgroup=(16, 16), memory=mem, args=[0, 4 * n * n, 8 * n * n, n]
    )


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_random_structured_programs_are_bit_identical(data: st.DataObject) -> None:
    W = data.draw(st.sampled_from([4, 8]))
    threads = W * 2
    D.SHARED_BASE = threads * D.SLOT_WORDS * 4
    seeds = data.draw(st.lists(st.integers(0, 2**32 - 1) | st.sampled_from(PAYLOADS), min_size=24, max_size=24))
    body = data.draw(D.block())
    from wavegpu.isa.structure import check_structure

    assume(not check_structure(body))
    k = Kernel("rnd", tuple(D.prologue(seeds) + body + D.epilogue()), 19, 8)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31)))
    mem = rng.integers(0, 256, D.SHARED_BASE + 16, dtype=np.uint8)
    mem.view(np.uint32)[rng.integers(0, 2, mem.size // 4).astype(bool)] = data.draw(st.sampled_from(PAYLOADS))
    try:
        wg.launch(k, device="emulator", workgroup=threads, memory=mem, wave_width=W)
    except wg.Trap:
        assume(False)
    same_memory(k, data.draw(st.sampled_from(PAYLOADS)), workgroup=threads, memory=mem, wave_width=W)


def test_the_rewrite_catches_a_plan_that_leaves_an_observation_out() -> None:
    """The check is not vacuous: dropping the plan's canonicalisation before a store shows."""
    k = _k(
        """.kernel k
.registers 3
    ld.global.b32 r1, [r0]
    add.f32 r2, r1, r1
    st.global.b32 [r0+4], r2
"""
    )
    mem = np.array([0x7FC0BEEF, 0], np.uint32).view(np.uint8)
    real = canonical.plan
    try:
        canonical.plan = lambda insts: canonical.Plan(frozenset(), {})  # type: ignore[assignment]
        with pytest.raises(AssertionError):
            same_memory(k, 0xFFC00001, workgroup=1, memory=mem)
    finally:
        canonical.plan = real  # type: ignore[assignment]
    same_memory(k, 0xFFC00001, workgroup=1, memory=mem)


# ------------------------------------------------------------------ float-heavy programs on every target here
FLOATS = [0x7FC0BEEF, 0xFF800001, 0x7F800123, 0xFFC00000, 0x3FC00000, 0xC0000000, 0x7F800000, 0xFF800000, 0, 0x80000000]
FLOATS += [0x00000003, 0x40400000, 0x3F800000, 0x7F7FFFFF]
_R = st.integers(1, 8).map(lambda n: f"r{n}")


@st.composite
def float_body(draw: st.DrawFn, depth: int = 0) -> list[str]:
    """Float rows mixed with the places their bits show (bit ops, copies, selects, conversions)."""
    out: list[str] = []
    for _ in range(draw(st.integers(1, 6))):
        a, b, c, d = (draw(_R) for _ in range(4))
        pick = draw(st.integers(0, 15 if depth < 2 else 13))
        if pick == 14:
            out += ["mov.b32 r9, 2", "loop", "setp.eq.u32 p1, r9, 0", "break p1", "sub.u32 r9, r9, 1"]
            out += [*draw(float_body(depth + 1)), "endloop"]
        elif pick == 15:
            out += [f"setp.lt.f32 p0, {a}, {b}", "if p0", *draw(float_body(depth + 1)), "endif"]
        else:
            out += [
                [f"fma.f32 {a}, {b}, {c}, {d}"],
                [f"add.f32 {a}, {b}, {c}"],
                [f"mul.f32 {a}, {b}, {c}"],
                [f"sub.f32 {a}, {b}, {c}", f"div.f32 {d}, {a}, {b}"],
                [f"sqrt.f32 {a}, {b}", f"cvt.rni.f32.f32 {c}, {a}"],
                [f"neg.f32 {a}, {b}", f"abs.f32 {c}, {d}"],
                [f"min.f32 {a}, {b}, {c}"],
                [f"mov.b32 {a}, {b}"],
                [f"and.b32 {a}, {b}, 0xFFFFFFF7"],
                [f"setp.lt.f32 p0, {a}, {b}", f"selp.b32 {c}, {d}, {a}, p0"],
                [f"setp.gtu.f32 p0, {a}, {b}", f"@p0 mul.f32 {c}, {d}, {a}"],
                [f"cvt.f64.f32 r10:r11, {a}", "add.f64 r12:r13, r12:r13, r10:r11", f"cvt.f32.f64 {b}, r12:r13"],
                [f"cvt.rzi.s32.f32 {a}, {b}", f"slct.s32.f32 {c}, {d}, {a}, {b}"],
                [f"add.u32 {a}, {b}, 1"],
            ][pick]
    return out


def float_kernel(body: list[str]) -> Kernel:
    head = [".kernel fp", ".registers 16", ".predicates 2", "mov.b32 r0, %tid.x", "shl.b32 r0, r0, 6"]
    head += [f"ld.global.b32 r{i}, [r0+{4 * (i - 1)}]" for i in range(1, 9)]
    head += ["mov.b32 r9, 0", *(f"mov.b32 r{i}, 0" for i in range(10, 14))]
    tail = [f"st.global.b32 [r0+{4 * (i - 1)}], r{i}" for i in range(1, 9)]
    tail += ["st.global.b64 [r0+32], r10:r11", "st.global.b64 [r0+40], r12:r13", "ret", ".end"]
    return _k("\n".join(head + body + tail) + "\n")


def _targets() -> list[str]:
    return ["opencl", "amdgcn-sim"] if OK else ["amdgcn-sim"]


@settings(max_examples=12, deadline=None)
@given(float_body(), st.lists(st.sampled_from(FLOATS) | st.integers(0, 2**32 - 1), min_size=16, max_size=16))
def test_float_programs_with_nan_payloads_are_bit_identical_on_every_target(body: list[str], words: list[int]) -> None:
    """Float-heavy programs (loops, ifs, guarded rows, f64 through f32) fed NaNs of every kind:
    the worst-case rewrite on the emulator, and OpenCL and the AMDGCN interpreter, give the
    emulator's bits."""
    k = float_kernel(body)
    mem = np.zeros(32 * 16, np.uint32)
    mem[: 32 * 16] = np.resize(np.array(words, np.uint32), 32 * 16)
    mem = np.roll(mem, 3)  # lanes see different words
    launch = {"workgroup": 32, "memory": mem.view(np.uint8)}
    want = wg.launch(k, device="emulator", **launch).memory  # type: ignore[arg-type]
    same_memory(k, 0xFFC0BEEF, **launch)
    for device in _targets():
        got = wg.launch(k, device=device, **launch).memory  # type: ignore[arg-type]
        assert np.array_equal(want, got), f"{device}\n{wg.disassemble(k)}"


def test_amdgcn_sgemm_inner_loop_has_no_nan_checks() -> None:
    """The register-blocked SGEMM's K loop on AMDGCN: 256 v_fma_f32 and no v_cmp_u_f32 +
    v_cndmask_b32 after them (before the plan: 256 of each, and an s_nop hazard each; 15 % of
    the loop's instructions were FMAs, now 28 %: docs/performance.md)."""
    prog = wg.assemble((ROOT / "examples" / "sgemm_blocked" / "sgemm_blocked.wave").read_text(), "s.wave")
    lines = [x.split(";")[0].strip() for x in wg.translate(prog, "amdgcn").splitlines()]
    labels = {x[:-1]: i for i, x in enumerate(lines) if x.startswith(".L") and x.endswith(":")}
    back = [
        (labels[x.split()[1]], i)
        for i, x in enumerate(lines)
        if x.startswith(("s_branch", "s_cbranch")) and x.split()[1] in labels and labels[x.split()[1]] < i
    ]
    inner = [(a, b) for a, b in back if not any((c, d) != (a, b) and a <= c and d <= b for c, d in back)]
    assert len(inner) == 1, back
    ops = [x.split()[0] for x in lines[inner[0][0] + 1 : inner[0][1] + 1] if x and not x.endswith(":")]
    assert ops.count("v_fma_f32") + ops.count("v_fmac_f32") == 256
    assert "v_cmp_u_f32" not in ops and "v_cndmask_b32" not in ops


def test_a_value_checked_once_is_not_checked_again() -> None:
    """After the in-place check before the first store, the second store and the and read a
    canonical value; in the loop the check stays (the mul runs again), the last store needs none."""
    k = _k(
        """.kernel k
.registers 4
.predicates 1
    ld.global.b32 r1, [r0]
    add.f32 r2, r1, r1
    st.global.b32 [r0], r2
    st.global.b32 [r0+4], r2
    and.b32 r3, r2, 1
    loop
        setp.ge.u32 p0, r3, r1
        break p0
        mul.f32 r2, r2, r2
        st.global.b32 [r0+8], r2
        add.u32 r3, r3, 1
    endloop
    st.global.b32 [r0+12], r2
"""
    )
    p = canonical.plan(k.instructions)
    assert p.at_use == {2: (2,), 9: (2,)} and not p.at_def  # the last store: canonical either way
