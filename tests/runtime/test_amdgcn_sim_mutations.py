"""Mutation tests of the AMDGCN interpreter's checks: the backend's kernels for the examples and the
compiler's corpus (-O0 and -O3), each
with one `s_waitcnt` dropped or weakened (its count one higher) or one hazard `s_nop` dropped or
shortened, are reported by the interpreter (a register read before its covering wait, a hazard
distance below the table's); the unmutated kernels run clean and give the emulator's memory."""

from __future__ import annotations

import re
import sys
from functools import cache
from pathlib import Path

import numpy as np
import pytest

import wavegpu as wg
from wavegpu.backends import render
from wavegpu.emulator.launch import arg_bits
from wavegpu.runtime.amdgcn_sim import AmdgcnSimError, run

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backends"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "emulator"))
from test_opencl import compiled_cases, example_cases

ARCHES = ["gfx942", "gfx90a"]
WAIT = re.compile(r"^\s*s_waitcnt\s")
HAZARD = re.compile(r"^\s*s_nop\s+(\d+)\s*;\s*hazard")


@cache
def cases(arch: str) -> list[tuple[str, str, tuple, tuple, np.ndarray, list[int], np.ndarray]]:
    """(name, assembly, grid, workgroup, memory, presets, emulator's memory) per example."""
    out = []
    for prog, grid, wgs, mem, args in example_cases():
        k = prog.kernels[0]
        g = (grid, 1, 1) if isinstance(grid, int) else (*grid, 1)
        w = wgs or k.workgroup_size
        w = (w, 1, 1) if isinstance(w, int) else tuple(w)
        bits = [arg_bits(a) for a in args]
        bits += [0] * (max(len(bits), len(k.params)) - len(bits))
        text = render(k, "amdgcn", wave_width=64, nargs=len(bits), arch=arch).source
        m8 = np.ascontiguousarray(mem).reshape(-1).view(np.uint8)
        want = wg.launch(prog, grid=grid, workgroup=wgs, memory=mem, args=args, wave_width=64).memory
        out.append((k.name, text, g, w, m8, bits, want))
    from wavegpu.runtime.buffers import pack

    for opt in (0, 3):
        for kf, args, grid, wgs in compiled_cases():
            prog = wg.compile(kf.python, opt=opt)  # type: ignore[attr-defined]
            k = prog.kernels[0]
            layout = pack(k, args)
            g = (grid, 1, 1) if isinstance(grid, int) else (*grid, 1)
            w = wgs or k.workgroup_size
            w = (w, 1, 1) if isinstance(w, int) else tuple(w)
            bits = [arg_bits(a) for a in layout.args]
            bits += [0] * (max(len(bits), len(k.params)) - len(bits))
            text = render(k, "amdgcn", wave_width=64, nargs=len(bits), arch=arch).source
            m8 = np.ascontiguousarray(layout.memory).reshape(-1).view(np.uint8)
            want = wg.launch(prog, grid=grid, workgroup=wgs, memory=layout.memory, args=layout.args, wave_width=64)
            out.append((k.name, text, g, w, m8, bits, want.memory))
    return out


def _run(text: str, name: str, g: tuple, w: tuple, m8: np.ndarray, bits: list[int], arch: str) -> np.ndarray:
    return run(text, name, g, w, m8.copy(), np.zeros(16, np.uint8), bits, arch)


def _mutants(text: str, pattern: re.Pattern[str], weaken: bool) -> list[tuple[int, str]]:
    """(line number, mutated text) for every line matching pattern: dropped, or weakened by one."""
    lines = text.splitlines()
    out = []
    for i, line in enumerate(lines):
        if not pattern.match(line):
            continue
        if not weaken:
            new = None
        elif pattern is WAIT:
            new = re.sub(r"(vmcnt|lgkmcnt)\((\d+)\)", lambda m: f"{m.group(1)}({int(m.group(2)) + 1})", line)
        else:
            n = int(HAZARD.match(line).group(1))  # type: ignore[union-attr]
            new = f"  s_nop {n - 1}" if n else None
        mutated = lines[:i] + ([new] if new is not None else []) + lines[i + 1 :]
        out.append((i + 1, "\n".join(mutated)))
    return out


@pytest.mark.parametrize("arch", ARCHES)
def test_unmutated_kernels_run_clean_and_match(arch: str) -> None:
    for name, text, g, w, m8, bits, want in cases(arch):
        assert np.array_equal(_run(text, name, g, w, m8, bits, arch)[: want.size], want), name


@pytest.mark.parametrize("weaken", [False, True], ids=["dropped", "weakened"])
@pytest.mark.parametrize("arch", ARCHES)
def test_every_missing_or_weakened_waitcnt_is_reported(arch: str, weaken: bool) -> None:
    seen = 0
    for name, text, g, w, m8, bits, _ in cases(arch):
        for line, mutated in _mutants(text, WAIT, weaken):
            with pytest.raises(AmdgcnSimError, match=r"before the s_waitcnt that covers|s_barrier while") as e:
                _run(mutated, name, g, w, m8, bits, arch)
            assert f"kernel {name}, pc" in str(e.value), (name, line)
            seen += 1
    assert seen >= 60


@pytest.mark.parametrize("weaken", [False, True], ids=["dropped", "shortened"])
@pytest.mark.parametrize("arch", ARCHES)
def test_every_missing_or_short_hazard_nop_is_reported(arch: str, weaken: bool) -> None:
    seen = 0
    for name, text, g, w, m8, bits, _ in cases(arch):
        for _line, mutated in _mutants(text, HAZARD, weaken):
            with pytest.raises(AmdgcnSimError, match=r"hazard: .* needs \d wait state\(s\) before it on " + arch):
                _run(mutated, name, g, w, m8, bits, arch)
            seen += 1
    # gfx942 needs more hazard nops than gfx90a (VALU-written VCC/SGPR, readlane, transcendentals)
    assert seen >= (100 if arch == "gfx942" else 30), seen
