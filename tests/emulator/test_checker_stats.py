"""check=True reports undefined behaviour; statistics count what ran; traps name source lines."""

from __future__ import annotations

import numpy as np
import pytest
from kit import run

import wavegpu as wg


@pytest.mark.parametrize(
    "body, message",
    [
        (
            "mov.u32 r1, %tid.x\nsetp.lt.u32 p0, r1, 4\nif p0\nbarrier\nendif",
            "barrier in divergent control flow",
        ),
        (
            "mov.u32 r1, %tid.x\nsetp.lt.u32 p0, r1, 4\n@uniform if p0\nnop\nendif",
            "divergent @uniform branch",
        ),
        ("add.u32 r2, r3, 1", "read of r3 before any write"),
        (
            "mov.u32 r1, %tid.x\nshl.b32 r1, r1, 2\nst.local.b32 [0], r1",
            "local-memory race on byte 0",
        ),
        (
            "mov.u32 r1, %tid.x\nshl.b32 r2, r1, 2\nst.local.b32 [r2], r1\nld.local.b32 r3, [4]",
            "local-memory race on byte 4",
        ),
        (
            "mov.u32 r1, %tid.x\nsetp.lt.u32 p0, r1, 4\nif p0\nwave.shuffle.b32 r2, r1, 6\nendif",
            "reads lane 6, which is inactive",
        ),
        ("setp.lt.u32 p0, r4, 1", "read of r4 before any write"),
    ],
)
def test_checker_reports_undefined_behaviour(body: str, message: str) -> None:
    src = f".kernel ub\n.local_memory 64\n.registers 8\n{body}\nret\n.end"
    with pytest.raises(wg.UndefinedBehaviour, match=message) as ei:
        run(src, workgroup=8, wave_width=8, check=True)
    e = ei.value
    assert e.kernel == "ub" and e.pc >= 0 and e.instruction and e.workgroup == (0, 0, 0)
    assert e.thread is not None
    run(src, workgroup=8, wave_width=8, check=False)  # without checking: defined results, no report


def test_checker_accepts_correct_programs() -> None:
    src = """.kernel ok
    .local_memory 64
    mov.u32 r1, %tid.x
    shl.b32 r2, r1, 2
    st.local.b32 [r2], r1
    barrier
    ld.local.b32 r3, [0]            // everyone reads lane 0's word after the barrier
    atom.local.add.u32 r4, [4], r1  // atomics do not race
    setp.eq.u32 p0, r1, 0
    @uniform if p0
    endif
    .end"""
    with pytest.raises(wg.UndefinedBehaviour):  # the @uniform branch above diverges
        run(src, workgroup=8, wave_width=8, check=True)
    run(src.replace("@uniform if p0\n    endif", ""), workgroup=8, wave_width=8, check=True)


def test_trap_names_source_line_from_line_table() -> None:
    prog = wg.assemble(".kernel k\n  mov.b32 r1, 3\n  ld.global.b32 r2, [r1]\n.end", "kern.wave", debug_lines=True)
    with pytest.raises(wg.Trap) as ei:
        wg.emulate(prog, memory=16)
    assert ei.value.source == "kern.wave:3:3"
    assert "at kern.wave:3:3" in str(ei.value)


def test_statistics() -> None:
    src = """.kernel s
    .local_memory 256
    mov.u32 r1, %tid.x
    shl.b32 r2, r1, 2
    ld.global.b32 r3, [r2]
    st.local.b32 [r2], r3
    barrier
    setp.lt.u32 p0, r1, 12
    if p0
        add.u32 r3, r3, 1
    endif
    st.global.b32 [r2], r3
    mov.b32 r5, 1
    atom.global.add.u32 r4, [256], r5
    .end"""
    res = run(src, grid=2, workgroup=16, memory=260, wave_width=8)
    s = res.stats
    assert (s.workgroups, s.threads, s.waves) == (2, 32, 4)
    assert s.by_class["load"].lanes == 32 and s.by_class["load"].waves == 4
    assert s.by_class["bit"].lanes == 32  # shl
    assert s.by_class["int"].lanes == 24  # add.u32 in the 12 lanes of each workgroup that take the branch
    assert s.by_class["int"].waves == 4  # every wave has an active lane there (waves 1 and 3 in part)
    assert s.device_bytes_read == 32 * 4 + 32 * 4  # loads + atomic reads
    assert s.device_bytes_written == 32 * 4 + 32 * 4
    assert s.local_bytes_written == 32 * 4
    assert s.barriers == 2
    assert s.atomics == 32
    assert s.branches == 4 and s.divergent_branches == 2  # waves 1 and 3 hold lanes 8..15: 8..11 take it
    assert 0 < s.simd_efficiency < 1
    assert s.occupancy_waves == wg.isa.capabilities.occupancy(wg.EMULATOR.with_wave_width(8), 6, 256, 16)
    assert s.lane_instructions == sum(c.lanes for c in s.by_class.values())
    d = s.as_dict()
    assert d["lane_instructions"] == s.lane_instructions and "by_class" in d


def test_simd_efficiency_is_one_without_divergence() -> None:
    res = run(".kernel s\nmov.u32 r1, %tid.x\nadd.u32 r1, r1, 1\n.end", workgroup=64)
    assert res.stats.simd_efficiency == 1.0
    assert res.stats.wave_instructions == 2 * 2


def test_clock_counts_instructions() -> None:
    res = run(
        ".kernel c\nnop\nnop\nmov.u32 r1, %clock\nst.global.b32 [0], r1\n.end",
        workgroup=1,
        memory=4,
    )
    assert res.memory.view(np.uint32)[0] == 2  # instructions issued before the read
