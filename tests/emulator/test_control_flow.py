"""Spec sections 2 and 5: execution model, special registers, structured control flow."""

from __future__ import annotations

import numpy as np
import pytest
from kit import run

import wavegpu as wg

STORE_TID = """
    mov.u32 r20, %tid.x
    mov.u32 r21, %tid.y
    mov.u32 r22, %tid.z
    mov.u32 r23, %ntid.x
    mov.u32 r24, %ntid.y
    mad.lo.s32 r25, r22, r24, r21
    mad.lo.s32 r25, r25, r23, r20      // linear tid
    mov.u32 r26, %ctaid.x
    mov.u32 r27, %ctaid.y
    mov.u32 r28, %nctaid.x
    mad.lo.s32 r26, r27, r28, r26      // linear workgroup (grid z = 1 here)
    mov.u32 r27, %ntid.z
    mul.lo.u32 r27, r27, r24
    mul.lo.u32 r27, r27, r23
    mad.lo.s32 r29, r26, r27, r25      // global linear id
    shl.b32 r29, r29, 2
"""


def per_thread(body: str, grid: tuple[int, ...], wgs: tuple[int, ...], W: int = 32, **kw: object) -> np.ndarray:
    n = int(np.prod(grid) * np.prod(wgs))
    src = f".kernel t\n.registers 32\n{STORE_TID}\n{body}\n    st.global.b32 [r29], r1\n.end"
    return run(src, grid=grid, workgroup=wgs, memory=4 * n, wave_width=W, **kw).memory.view(np.uint32)


@pytest.mark.parametrize(
    "sreg",
    [
        "%tid.x",
        "%tid.y",
        "%tid.z",
        "%ctaid.x",
        "%ctaid.y",
        "%ntid.x",
        "%ntid.y",
        "%ntid.z",
        "%nctaid.x",
        "%nctaid.y",
        "%nctaid.z",
        "%wid",
        "%lid",
        "%nwaves",
        "%wave_width",
    ],
)
def test_special_registers(sreg: str) -> None:
    grid, wgs, W = (3, 2, 1), (4, 3, 2), 8
    got = per_thread(f"    mov.u32 r1, {sreg}", grid, wgs, W)
    exp = []
    for gy in range(2):
        for gx in range(3):
            for tz in range(2):
                for ty in range(3):
                    for tx in range(4):
                        t = tx + 4 * (ty + 3 * tz)
                        exp.append(
                            {
                                "%tid.x": tx,
                                "%tid.y": ty,
                                "%tid.z": tz,
                                "%ctaid.x": gx,
                                "%ctaid.y": gy,
                                "%ntid.x": 4,
                                "%ntid.y": 3,
                                "%ntid.z": 2,
                                "%nctaid.x": 3,
                                "%nctaid.y": 2,
                                "%nctaid.z": 1,
                                "%wid": t // W,
                                "%lid": t % W,
                                "%nwaves": 3,
                                "%wave_width": W,
                            }[sreg]
                        )
    assert list(got) == exp


def test_registers_start_at_zero_and_args_preset() -> None:
    src = ".kernel t\n.registers 8\nadd.u32 r5, r0, r1\nadd.u32 r5, r5, r6\nst.global.b32 [0], r5\n.end"
    assert run(src, workgroup=1, memory=4, args=[40, 2]).memory.view(np.uint32)[0] == 42
    assert run(src, workgroup=1, memory=4, args=[1.5, 0]).memory.view(np.uint32)[0] == 0x3FC00000


def test_sub_registers() -> None:
    body = """
    mov.b32 r1, 0x11223344
    mov.b32 r2, 0xAABBCCDD
    mov.b32 r1.hi, r2.lo          // writes keep the other half
    mov.b32 r1.b0, r2.b3
    add.u32 r1.b1, r1.b1, 1       // reads the byte zero-extended, writes back the low 8 bits
"""
    got = per_thread(body, (1, 1, 1), (1, 1, 1))
    assert got[0] == 0xCCDD34AA


def test_if_else_divergence_and_nesting() -> None:
    body = """
    and.b32 r2, r20, 3
    mov.b32 r1, 0
    setp.lt.u32 p0, r2, 2
    if p0
        setp.eq.u32 p1, r2, 0
        if p1
            mov.b32 r1, 10
        else
            mov.b32 r1, 11
        endif
    else
        @uniform if p2
            mov.b32 r1, 99
        endif
        add.u32 r1, r2, 20
    endif
"""
    got = per_thread(body, (1, 1, 1), (16, 1, 1))
    assert list(got) == [10, 11, 22, 23] * 4


def test_break_inside_if_leaves_the_loop_at_once() -> None:
    # the Rust emulator's bug: `break` inside `if` leaks. Lane i counts i iterations.
    body = """
    mov.b32 r1, 0
    loop
        setp.ge.u32 p0, r1, r20
        if p0
            break p0
            mov.b32 r1, 1000          // never executed: those lanes left the loop
        endif
        add.u32 r1, r1, 1
    endloop
"""
    got = per_thread(body, (1, 1, 1), (8, 1, 1))
    assert list(got) == list(range(8))


def test_continue_skips_to_next_iteration() -> None:
    body = """
    mov.b32 r1, 0
    mov.b32 r3, 0
    loop
        add.u32 r3, r3, 1
        setp.gt.u32 p0, r3, 6
        break p0
        and.b32 r4, r3, 1
        setp.eq.u32 p1, r4, r20       // lanes 0/1 skip even/odd iterations
        continue p1
        add.u32 r1, r1, r3
    endloop
"""
    got = per_thread(body, (1, 1, 1), (4, 1, 1))
    assert list(got[:2]) == [1 + 3 + 5, 2 + 4 + 6] and list(got[2:]) == [21, 21]


def test_nested_loops_and_ret_per_thread() -> None:
    body = """
    mov.b32 r1, 0
    mov.b32 r2, 0
    loop
        setp.ge.u32 p0, r2, 3
        break p0
        mov.b32 r3, 0
        loop
            setp.ge.u32 p1, r3, r20
            break p1
            add.u32 r1, r1, 1
            setp.eq.u32 p2, r1, 5
            @p2 st.global.b32 [r29], r1
            @p2 ret                   // this lane ends; the others go on
            add.u32 r3, r3, 1
        endloop
        add.u32 r2, r2, 1
    endloop
"""
    got = per_thread(body, (1, 1, 1), (4, 1, 1))
    assert list(got) == [0, 3, 5, 5]  # lane 2 and 3 reach r1 = 5 and return (stored 5)


def test_exited_threads_do_not_hold_up_barriers() -> None:
    src = """.kernel t
    .local_memory 64
    mov.u32 r1, %tid.x
    shl.b32 r2, r1, 2
    setp.ge.u32 p0, r1, 8
    @p0 ret
    st.local.b32 [r2], r1
    barrier
    xor.b32 r3, r2, 4
    ld.local.b32 r4, [r3]
    st.global.b32 [r2], r4
    .end"""
    w = run(src, workgroup=16, memory=64, wave_width=4, check=True).memory.view(np.uint32)
    assert list(w[:8]) == [1, 0, 3, 2, 5, 4, 7, 6] and list(w[8:]) == [0] * 8


def test_partial_last_wave() -> None:
    got = per_thread("    mov.u32 r1, %lid\n    wave.reduce.add.u32 r1, r1", (2, 1, 1), (5, 1, 1), W=4)
    assert list(got) == [6, 6, 6, 6, 0] * 2  # the fifth thread is alone in its wave


def test_instruction_budget_traps_endless_loops() -> None:
    src = ".kernel spin\nmov.b32 r1, 0\nloop\nadd.u32 r1, r1, 1\nendloop\n.end"
    with pytest.raises(
        wg.Trap, match=r"instruction budget exhausted: .* more than 1,000 instructions \(max_instructions=1000\)"
    ) as ei:
        run(src, workgroup=2, max_instructions=1000)
    assert ei.value.kernel == "spin" and ei.value.thread == (0, 0, 0)


def test_huge_grids_run_in_batches_with_identical_results() -> None:
    src = ".kernel t\n.registers 32\n" + STORE_TID + "    mul.lo.u32 r1, r29, 3\n    st.global.b32 [r29], r1\n.end"
    prog = wg.assemble(src)
    a = wg.emulate(prog, grid=(20, 3), workgroup=(8, 2), memory=4 * 960, wave_width=8)
    b = wg.emulate(prog, grid=(20, 3), workgroup=(8, 2), memory=4 * 960, wave_width=8, batch_lanes=32)
    assert a.stats.batches == 1 and b.stats.batches == 30
    assert np.array_equal(a.memory, b.memory)
    assert list(a.memory.view(np.uint32)) == [12 * i for i in range(960)]


def test_wave_width_must_be_power_of_two() -> None:
    with pytest.raises(wg.WaveError):
        run(".kernel t\nret\n.end", wave_width=48)


def test_workgroup_hint_is_enforced() -> None:
    src = ".kernel t\n.workgroup_size 64\nret\n.end"
    assert run(src, grid=2).stats.threads == 128
    with pytest.raises(wg.WaveError, match="requires workgroup size"):
        run(src, workgroup=32)
