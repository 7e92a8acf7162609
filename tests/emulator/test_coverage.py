"""Every row of the instruction table executes in the emulator; malformed kernels trap."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import wavegpu as wg
from strategies import instructions
from wavegpu.emulator.machine import Batch, Launch, Memory
from wavegpu.emulator.stats import Stats
from wavegpu.isa import ROWS, Instruction, Pred, Reg, row
from wavegpu.wbin import Kernel


@pytest.mark.parametrize("spec", ROWS, ids=lambda r: r.key)
def test_every_row_compiles_to_an_operation(spec) -> None:  # type: ignore[no-untyped-def]
    @settings(max_examples=3, deadline=None)
    @given(instructions(spec, max_reg=64))
    def check(inst: Instruction) -> None:
        insts = [inst]
        if spec.name in ("if", "if.uniform"):
            insts += [Instruction(row("endif"))]
        elif spec.name in ("else", "endif"):
            insts = [
                Instruction(row("if"), (Pred(0),)),
                *([inst] if spec.name == "else" else []),
                Instruction(row("endif")),
            ]
        elif spec.name == "loop":
            insts += [Instruction(row("endloop"))]
        elif spec.name == "endloop":
            insts = [Instruction(row("loop")), inst]
        elif spec.name in ("break", "continue"):
            insts = [Instruction(row("loop")), inst, Instruction(row("endloop"))]
        k = Kernel("k", tuple(insts), 64, 8)
        mem = Memory(np.zeros(16, np.uint8), 16, "global")
        b = Batch(k, Launch((1, 1, 1), (32, 1, 1), 32, (), 100, False), 0, 1, mem, mem, Stats())
        assert len(b.ops) == len(insts) and all(callable(op) for op in b.ops)

    check()


def test_register_beyond_declared_count_traps() -> None:
    k = Kernel("small", (Instruction(row("add.u32"), (Reg(5), Reg(1), Reg(2))),), 4, 0)
    with pytest.raises(wg.Trap, match="r5 is beyond the kernel's declared 4 registers") as ei:
        wg.emulate(k)
    assert ei.value.kernel == "small" and ei.value.pc == 0


def test_illegal_hand_built_instructions_trap() -> None:
    k = Kernel("k", (Instruction(row("if"), (Pred(0),)),), 1, 1)
    with pytest.raises(wg.Trap, match="never closed"):
        wg.emulate(k)


def test_progress_is_reported_per_batch() -> None:
    prog = wg.assemble(".kernel k\nmov.u32 r1, %tid.x\n.end")
    seen: list[tuple[int, int]] = []
    wg.emulate(prog, grid=10, workgroup=32, batch_lanes=96, progress=lambda d, t: seen.append((d, t)))
    assert seen == [(3, 10), (6, 10), (9, 10), (10, 10)]


def test_bad_launch_arguments() -> None:
    prog = wg.assemble(".kernel k\n.registers 2\nret\n.end")
    for kw in (
        {"grid": (0, 1)},
        {"grid": (1, 2, 3, 4)},
        {"workgroup": 2048},
        {"args": [1, 2, 3]},
        {"args": [1 << 40]},
        {"args": ["x"]},
        {"memory": "lots"},
        {"kernel": "nope"},
        {"kernel": 3},
    ):
        with pytest.raises(wg.WaveError):
            wg.emulate(prog, **kw)  # type: ignore[arg-type]


@given(st.integers(1, 6))
def test_memory_forms(size: int) -> None:
    prog = wg.assemble(".kernel k\nret\n.end")
    for mem in (size, bytes(size), np.zeros(size, np.uint8), bytearray(size)):
        assert wg.emulate(prog, memory=mem).memory.size == size


def test_a_kernel_is_checked_once_and_a_refusal_every_time() -> None:
    """emulate remembers the kernels that passed its checks (a repeated launch of a long kernel
    spent most of its time checking and hashing it again); a refused kernel is refused on every
    launch, since a refusal is not remembered."""
    from wavegpu.emulator import launch

    good = Kernel("good", (Instruction(row("add.u32"), (Reg(3), Reg(1), Reg(2))),), 4, 0)
    launch._validate.cache_clear()
    before = launch._validate.cache_info()
    for _ in range(3):
        wg.emulate(good, grid=1, workgroup=32, memory=16)
    after = launch._validate.cache_info()
    assert after.misses - before.misses == 1 and after.hits - before.hits == 2
    bad = Kernel("bad", (Instruction(row("add.u32"), (Reg(5), Reg(1), Reg(2))),), 4, 0)
    for _ in range(2):
        with pytest.raises(wg.Trap, match="r5 is beyond"):
            wg.emulate(bad, grid=1, workgroup=32, memory=16)
