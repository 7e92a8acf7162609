"""Differential check: random structured programs give bit-identical memory on the emulator
and on the scalar reference interpreter (tests/reference.py)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import wavegpu as wg
from reference import RefTrap, run
from wavegpu.isa import ROWS, Imm, Instruction, Mem, Pair, Pred, Reg, SReg, Vec, row
from wavegpu.isa.instruction import Guard
from wavegpu.isa.semantics import SEMANTICS
from wavegpu.isa.types import Kind, Role
from wavegpu.wbin import Kernel

WORK = list(range(1, 13))  # r1..r12 are freely used; r0 is the thread's slot address
COUNTERS = [13, 14, 15]  # loop counters by depth
PRED_FREE = [0, 1, 2, 3, 4, 5]  # p6, p7 are loop exits
SLOT_WORDS = 16
VALUE = [r for r in ROWS if r.key in SEMANTICS]
WAVE_ROWS = [r for r in ROWS if r.cls == "wave"]
ATOMS = [r for r in ROWS if r.cls == "atomic" and r.space == "global"]


def R(n: int, sel: int = 0) -> Reg:
    return Reg(n, sel)


@st.composite
def operand(draw: st.DrawFn, kind: Kind, role: Role, imm_ok: bool, bits: int) -> object:
    if kind is Kind.REG:
        if imm_ok and role is Role.SRC and draw(st.integers(0, 4)) == 0:
            return Imm(
                draw(
                    st.sampled_from([0, 1, 31, 32, 0x80000000, 0xFFFFFFFF, 0x3F800000, 0x7F800000])
                    | st.integers(0, 2**32 - 1)
                )
            )
        return R(draw(st.sampled_from(WORK)), draw(st.sampled_from([0, 0, 0, 0, 1, 2, 3, 6])))
    if kind is Kind.PAIR:
        if imm_ok and role is Role.SRC and draw(st.integers(0, 5)) == 0:
            return Imm(draw(st.integers(0, 2**64 - 1)), 64)
        return Pair(draw(st.sampled_from([w for w in WORK if w % 2 == 0 and w + 1 in WORK])))
    if kind is Kind.PRED:
        return Pred(draw(st.sampled_from(PRED_FREE)))
    if kind is Kind.SREG:
        return SReg(draw(st.sampled_from([0, 1, 3, 4, 5, 8, 11, 14, 16])))
    raise AssertionError(kind)


@st.composite
def alu(draw: st.DrawFn, rows: list = VALUE) -> Instruction:  # type: ignore[type-arg]
    r = draw(st.sampled_from([*rows, row("mov.b32.sreg")]))
    ops = []
    imm_used = False
    for o in r.operands:
        op = draw(operand(o.kind, o.role, not imm_used, o.imm_bits))
        imm_used |= isinstance(op, Imm)
        ops.append(op)
    guard = Guard(draw(st.sampled_from(PRED_FREE)), draw(st.booleans())) if draw(st.integers(0, 5)) == 0 else None
    return Instruction(r, tuple(ops), guard)


@st.composite
def memory_op(draw: st.DrawFn) -> list[Instruction]:
    """A store or load of the thread's own slot, or an atomic on shared counters."""
    kind = draw(st.sampled_from(["st", "ld", "atom"]))
    word = draw(st.integers(0, SLOT_WORDS - 4))
    if kind == "st":
        w = draw(st.sampled_from(["b8", "b16", "b32", "b64", "v2.b32"]))
        r = row(f"st.global.{w}")
        off = {
            "b8": word * 4 + draw(st.integers(0, 3)),
            "b16": word * 4 + 2 * draw(st.integers(0, 1)),
        }.get(w, word * 4)
        if w in ("b64", "v2.b32"):
            off = (word // 2) * 8
        val = (
            draw(operand(r.operands[1].kind, Role.SRC, False, 32))
            if r.operands[1].kind in (Kind.REG, Kind.PAIR)
            else Vec(draw(st.sampled_from([2, 4, 6, 8])), 2)
        )
        return [Instruction(r, (Mem(0, off), val))]
    if kind == "ld":
        w = draw(st.sampled_from(["u8", "s8", "u16", "s16", "b32", "b64", "v2.b32", "v4.b32"]))
        r = row(f"ld.global.{w}")
        width = r.width
        off = (word * 4 // width) * width
        k = r.operands[0].kind
        if k is Kind.REG:
            dst = R(draw(st.sampled_from(WORK)), draw(st.sampled_from([0, 0, 1, 2, 4])))
        elif k is Kind.PAIR:
            dst = Pair(draw(st.sampled_from([2, 4, 6, 8, 10])))
        else:
            dst = Vec(draw(st.sampled_from([2, 4, 6, 8])), k.vector_len)
        return [Instruction(r, (dst, Mem(0, off)))]
    r = draw(st.sampled_from(ATOMS))
    # shared counters live after all slots, at absolute addresses
    addr = Mem(None, SHARED_BASE + 4 * draw(st.integers(0, 3)))
    vals = [R(draw(st.sampled_from(WORK))) for _ in r.operands[r.mem_index + 1 :]]
    lead = [R(draw(st.sampled_from(WORK)))] if r.name.startswith("atom.") else []
    return [Instruction(r, (*lead, addr, *vals))]


SHARED_BASE = 0  # patched per example


@st.composite
def wave_op(draw: st.DrawFn) -> Instruction:
    r = draw(st.sampled_from(WAVE_ROWS))
    ops = []
    for o in r.operands:
        if o.kind is Kind.PRED:
            ops.append(Pred(draw(st.sampled_from(PRED_FREE))))
        elif o.role is Role.SRC and r.name.startswith(("wave.shuffle", "wave.broadcast")) and len(ops) == 2:
            ops.append(Imm(draw(st.integers(0, 40))) if draw(st.booleans()) else R(draw(st.sampled_from(WORK))))
        else:
            ops.append(R(draw(st.sampled_from(WORK))))
    return Instruction(r, tuple(ops))


@st.composite
def block(draw: st.DrawFn, depth: int = 0) -> list[Instruction]:
    out: list[Instruction] = []
    for _ in range(draw(st.integers(1, 7))):
        choice = draw(
            st.sampled_from(
                ["alu"] * 6 + ["mem", "wave", "setp"] + (["if", "loop"] if depth < 2 else []) + ["ret"] * (depth > 0)
            )
        )
        if choice == "alu":
            out.append(draw(alu()))
        elif choice == "setp":
            out.append(draw(alu([r for r in VALUE if r.name.startswith("setp.") and r.name.endswith(("s32", "u32"))])))
        elif choice == "mem":
            out += draw(memory_op())
        elif choice == "wave":
            out.append(draw(wave_op()))
        elif choice == "ret":
            out.append(Instruction(row("ret"), (), Guard(draw(st.sampled_from(PRED_FREE)), draw(st.booleans()))))
        elif choice == "if":
            out.append(Instruction(row("if"), (Pred(draw(st.sampled_from(PRED_FREE))),)))
            out += draw(block(depth + 1))
            if draw(st.booleans()):
                out.append(Instruction(row("else")))
                out += draw(block(depth + 1))
            out.append(Instruction(row("endif")))
        else:
            c = COUNTERS[depth]
            exitp = Pred(6 + (depth % 2))
            out.append(Instruction(row("mov.b32"), (R(c), Imm(draw(st.integers(0, 3))))))
            out.append(Instruction(row("loop")))
            out.append(Instruction(row("setp.eq.u32"), (exitp, R(c), Imm(0))))
            out.append(Instruction(row("break"), (exitp,)))
            out.append(Instruction(row("sub.u32"), (R(c), R(c), Imm(1))))
            body = draw(block(depth + 1))
            if draw(st.booleans()):
                body.insert(
                    draw(st.integers(0, len(body))),
                    Instruction(row("continue"), (Pred(draw(st.sampled_from(PRED_FREE))),)),
                )
            if draw(st.booleans()):
                body.insert(
                    draw(st.integers(0, len(body))),
                    Instruction(row("break"), (Pred(draw(st.sampled_from(PRED_FREE))),)),
                )
            out += body
            out.append(Instruction(row("endloop")))
    return out


def prologue(seed_vals: list[int]) -> list[Instruction]:
    """r0 = this thread's slot address; r1..r12 = per-lane varied values; p0..p5 set."""
    out = [
        Instruction(row("mov.b32.sreg"), (R(16), SReg(5))),
        Instruction(row("mov.b32.sreg"), (R(17), SReg(8))),
        Instruction(row("mov.b32.sreg"), (R(18), SReg(0))),
        Instruction(row("mad.lo.s32"), (R(16), R(16), R(17), R(18))),  # global id
        Instruction(row("mul.lo.u32"), (R(0), R(16), Imm(SLOT_WORDS * 4))),
    ]
    for i, w in enumerate(WORK):
        out.append(Instruction(row("mul.lo.u32"), (R(w), R(16), Imm(seed_vals[i] | 1))))
        out.append(Instruction(row("xor.b32"), (R(w), R(w), Imm(seed_vals[i + 12]))))
        out.append(
            Instruction(row("ld.global.b32"), (R(w), Mem(0, 4 * (i % SLOT_WORDS))))
            if i % 3 == 0
            else Instruction(row("nop"))
        )
    for p in PRED_FREE:
        out.append(Instruction(row("setp.lt.u32"), (Pred(p), R(WORK[p]), R(WORK[p + 6]))))
    return out


def epilogue() -> list[Instruction]:
    out = [Instruction(row("st.global.b32"), (Mem(0, 4 * i), R(w))) for i, w in enumerate(WORK)]
    for i, p in enumerate(PRED_FREE[:4]):
        out.append(Instruction(row("mov.b32"), (R(2), Imm(1 << i))))
        out.append(Instruction(row("selp.b32"), (R(1), R(2), Imm(0), Pred(p))))
        out.append(Instruction(row("st.global.b8"), (Mem(0, 4 * 12 + i), R(1))))
    return out


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_random_programs_match_reference(data: st.DataObject) -> None:
    global SHARED_BASE
    W = data.draw(st.sampled_from([4, 8, 16, 32]))
    waves = data.draw(st.integers(1, 2))
    groups = data.draw(st.integers(1, 3))
    threads = W * waves * groups
    SHARED_BASE = threads * SLOT_WORDS * 4
    seed_vals = data.draw(st.lists(st.integers(0, 2**32 - 1), min_size=24, max_size=24))
    body = data.draw(block())
    insts = prologue(seed_vals) + body + epilogue()
    k = Kernel("rnd", tuple(insts), 19, 8)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    mem = rng.integers(0, 256, SHARED_BASE + 16, dtype=np.uint8)
    try:
        ref = run(k, (groups, 1, 1), (W * waves, 1, 1), mem.tobytes(), [], W)
    except RefTrap:
        with pytest.raises(wg.Trap):
            wg.emulate(k, grid=groups, workgroup=W * waves, memory=mem, wave_width=W)
        return
    res = wg.emulate(k, grid=groups, workgroup=W * waves, memory=mem, wave_width=W)
    got = res.memory.tobytes()
    if got != bytes(ref):
        a = np.frombuffer(got, dtype=np.uint32)
        b = np.frombuffer(bytes(ref), dtype=np.uint32)
        bad = np.flatnonzero(a != b)
        raise AssertionError(
            f"first difference at word {bad[0]}: emulator 0x{a[bad[0]]:08x}, reference "
            f"0x{b[bad[0]]:08x}\n" + wg.disassemble(k)
        )


@pytest.mark.parametrize("r", VALUE, ids=lambda r: r.key)
def test_every_value_row_matches_reference_on_edge_values(r) -> None:  # type: ignore[no-untyped-def]
    """One instruction of each value row on special and random values, lane by lane."""

    @settings(max_examples=12, deadline=None)
    @given(st.data())
    def check(data: st.DataObject) -> None:
        _one_row(r, data)

    check()


def _one_row(r, data: st.DataObject) -> None:  # type: ignore[no-untyped-def]
    specials = [
        0,
        1,
        0x80000000,
        0x7FFFFFFF,
        0xFFFFFFFF,
        0x7F800000,
        0xFF800000,
        0x7FC00000,
        0x00000001,
        0x3F800000,
        0xBF800000,
        0x4F000000,
        0xCF000000,
        0x4F800000,
        0x00800000,
        0x3F000000,
        0x3C003C00,
        0x7C00FC00,
        0x00010001,
        0x3FC00000,
        0x40490FDB,
    ]
    vals = data.draw(st.lists(st.sampled_from(specials) | st.integers(0, 2**32 - 1), min_size=32 * 8, max_size=32 * 8))
    mem = np.array(vals, dtype=np.uint32).view(np.uint8)
    k = row_kernel(r)
    ref = run(k, (1, 1, 1), (8, 1, 1), mem.tobytes(), [], 8)
    res = wg.emulate(k, grid=1, workgroup=8, memory=mem, wave_width=8)
    a = np.frombuffer(res.memory.tobytes(), dtype=np.uint32)
    b = np.frombuffer(bytes(ref), dtype=np.uint32)
    assert (a == b).all(), (r.key, [(hex(v), hex(w)) for v, w in zip(a[::8], b[::8])])


def row_kernel(r) -> Kernel:  # type: ignore[no-untyped-def]
    """A kernel in which each lane loads row r's operands from its 32-byte slot, runs r and
    stores the result at the slot's start (also used by the backend tests)."""
    insts = [
        Instruction(row("mov.b32.sreg"), (R(20), SReg(0))),
        Instruction(row("shl.b32"), (R(20), R(20), Imm(5))),
    ]
    ops: list[object] = []
    reg = 0
    for o in r.operands:
        if o.role is Role.DST:
            ops.append(Pair(8) if o.kind is Kind.PAIR else Pred(0) if o.kind is Kind.PRED else R(8))
            continue
        if o.kind is Kind.PAIR:
            insts.append(Instruction(row("ld.global.b64"), (Pair(2 * reg), Mem(20, 8 * reg))))
            ops.append(Pair(2 * reg))
        elif o.kind is Kind.PRED:
            insts.append(Instruction(row("ld.global.b32"), (R(2 * reg), Mem(20, 8 * reg))))
            insts.append(Instruction(row("setp.lt.u32"), (Pred(1), R(2 * reg), Imm(0x80000000))))
            ops.append(Pred(1))
        else:
            insts.append(Instruction(row("ld.global.b32"), (R(2 * reg), Mem(20, 8 * reg))))
            ops.append(R(2 * reg))
        reg += 1
    insts.append(Instruction(r, tuple(ops)))
    dk = r.operands[0].kind
    if dk is Kind.PRED:
        insts.append(Instruction(row("mov.b32"), (R(9), Imm(1))))
        insts.append(Instruction(row("selp.b32"), (R(8), R(9), Imm(0), Pred(0))))
    insts.append(
        Instruction(
            row("st.global.b64" if dk is Kind.PAIR else "st.global.b32"),
            (Mem(20, 0), Pair(8) if dk is Kind.PAIR else R(8)),
        )
    )
    return Kernel("one", tuple(insts), 21, 2)
