"""Hypothesis strategies: random legal instructions, kernels and programs."""

from __future__ import annotations

from hypothesis import strategies as st

from wavegpu.isa import ROWS
from wavegpu.isa.instruction import Guard, Imm, Instruction, Mem, Pair, Pred, Reg, SReg, Vec
from wavegpu.isa.registers import SPECIAL_REGISTERS
from wavegpu.isa.structure import footprint
from wavegpu.isa.table import InstrSpec
from wavegpu.isa.types import DataType, Kind
from wavegpu.wbin import Kernel, Param, Program
from wavegpu.wbin.program import SourceLoc

PLAIN_ROWS = [r for r in ROWS if not r.control]
CONTROL_FREE = [r for r in PLAIN_ROWS]

imm32 = st.one_of(
    st.sampled_from(
        [
            0,
            1,
            2,
            0x7FFFFFFF,
            0x80000000,
            0xFFFFFFFF,
            0x3FC00000,
            0x7FC00000,
            0x7F800001,
            0xFF800000,
            0x80000001,
        ]
    ),
    st.integers(0, 0xFFFFFFFF),
)
imm64 = st.one_of(
    st.sampled_from(
        [
            0,
            1,
            0x3FF8000000000000,
            0x7FF8000000000000,
            0x7FF0000000000001,
            0xFFFFFFFFFFFFFFFF,
            0x8000000000000000,
        ]
    ),
    st.integers(0, (1 << 64) - 1),
)
offset32 = st.one_of(
    st.sampled_from([1, -1, 4, -4, 0x7FFFFFFF, -(1 << 31), 16]),
    st.integers(-(1 << 31), (1 << 31) - 1).filter(bool),
)


@st.composite
def instructions(draw: st.DrawFn, row: InstrSpec | None = None, max_reg: int = 256) -> Instruction:
    if row is None:
        row = draw(st.sampled_from(PLAIN_ROWS))
    choices: list[object] = [None]
    choices += [i for i, o in enumerate(row.operands) if o.accepts_immediate]
    if row.mem_index is not None:
        choices += ["offset", "absolute"]
    pick = draw(st.sampled_from(choices))
    ops = []
    for i, o in enumerate(row.operands):
        if pick == i:
            ops.append(Imm(draw(imm64 if o.imm_bits == 64 else imm32), o.imm_bits))
            continue
        k = o.kind
        if k is Kind.REG:
            ops.append(
                Reg(
                    draw(st.integers(0, max_reg - 1)),
                    draw(st.sampled_from([0, 0, 0, 1, 2, 3, 4, 5, 6])),
                )
            )
        elif k is Kind.PAIR:
            ops.append(Pair(2 * draw(st.integers(0, max_reg // 2 - 1))))
        elif k in (Kind.VEC1, Kind.VEC2, Kind.VEC4):
            n = k.vector_len
            ops.append(Vec(draw(st.integers(0, max_reg - n)), n))
        elif k is Kind.PRED:
            ops.append(Pred(draw(st.integers(0, 7))))
        elif k is Kind.SREG:
            ops.append(SReg(draw(st.sampled_from([s.id for s in SPECIAL_REGISTERS]))))
        elif k is Kind.MEM:
            if pick == "offset":
                ops.append(Mem(draw(st.integers(0, max_reg - 1)), draw(offset32)))
            elif pick == "absolute":
                ops.append(Mem(None, draw(st.integers(-(1 << 31), (1 << 31) - 1))))
            else:
                ops.append(Mem(draw(st.integers(0, max_reg - 1)), 0))
    guard = None
    if row.guardable and draw(st.booleans()):
        guard = Guard(draw(st.integers(0, 7)), draw(st.booleans()))
    return Instruction(row, tuple(ops), guard)


def _r(name: str) -> InstrSpec:
    from wavegpu.isa import row

    return row(name)


@st.composite
def bodies(draw: st.DrawFn, depth: int = 0, max_reg: int = 64) -> list[Instruction]:
    """A structured instruction list: straight-line code with nested if/else and loops."""
    out: list[Instruction] = []
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(["plain", "plain", "plain", "if", "loop"] if depth < 3 else ["plain"]))
        p = Pred(draw(st.integers(0, 7)))
        if kind == "plain":
            out.append(draw(instructions(max_reg=max_reg)))
        elif kind == "if":
            out.append(Instruction(_r(draw(st.sampled_from(["if", "if.uniform"]))), (p,)))
            out += draw(bodies(depth + 1, max_reg))
            if draw(st.booleans()):
                out.append(Instruction(_r("else")))
                out += draw(bodies(depth + 1, max_reg))
            out.append(Instruction(_r("endif")))
        else:
            out.append(Instruction(_r("loop")))
            inner = draw(bodies(depth + 1, max_reg))
            pos = draw(st.integers(0, len(inner)))
            inner.insert(pos, Instruction(_r(draw(st.sampled_from(["break", "continue"]))), (p,)))
            out += inner
            out.append(Instruction(_r("endloop")))
    return out


names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True)


@st.composite
def kernels(draw: st.DrawFn, name: str | None = None) -> Kernel:
    insts = draw(bodies())
    if draw(st.booleans()):
        insts.append(Instruction(_r("ret")))
    gmax = pmax = 0
    for i in insts:
        g, p = footprint(i)
        gmax, pmax = max(gmax, g), max(pmax, p)
    nparams = draw(st.integers(0, 4))
    params = tuple(
        Param(
            f"p{i}",
            draw(st.sampled_from(["buffer", "scalar"])),
            draw(st.sampled_from([DataType.F32, DataType.U32, DataType.S32, DataType.F16, DataType.F64])),
        )
        for i in range(nparams)
    )
    regs = max(gmax, nparams, 1) + draw(st.integers(0, 3))
    regs = min(regs, 256)
    preds = min(8, pmax + draw(st.integers(0, 2)))
    wg = draw(st.one_of(st.none(), st.tuples(st.integers(1, 64), st.integers(1, 4), st.integers(1, 4))))
    lines = None
    if insts and draw(st.booleans()):
        lines = tuple(
            draw(
                st.one_of(
                    st.none(),
                    st.builds(
                        SourceLoc,
                        st.sampled_from(["k.py", "dir/a b.py", 'q"x.rs']),
                        st.integers(1, 10000),
                        st.integers(0, 200),
                    ),
                )
            )
            for _ in insts
        )
        if all(x is None for x in lines):
            lines = None
    return Kernel(
        name or draw(names),
        tuple(insts),
        regs,
        preds,
        draw(st.integers(0, 4096)),
        wg,
        params,
        lines=lines,
    )


@st.composite
def programs(draw: st.DrawFn) -> Program:
    n = draw(st.integers(1, 3))
    ks = [draw(kernels(name=f"k{i}_{draw(names)}")) for i in range(n)]
    return Program(tuple(ks))
