"""Kernels that do not fit the register file still run correctly through spilling."""

from __future__ import annotations

import numpy as np
import pytest
import spill_kernels as S

import wavegpu as wg


def run_pressure(max_registers: int | None, opt: int = 2) -> tuple[np.ndarray, wg.Program]:
    S.pressure.max_registers = max_registers
    S.pressure.opt = opt
    n = 5
    x = np.linspace(-1, 1, 128).astype(np.float32)
    out = np.zeros(128, np.float32)
    S.pressure(x, out, n, grid=2, check=True)
    return out, S.pressure.program


@pytest.mark.parametrize("opt", [0, 2, 3])
@pytest.mark.parametrize("limit", [9, 12, 16])
def test_gpr_spilling_gives_the_unspilled_result(opt: int, limit: int) -> None:
    ref, p0 = run_pressure(None, opt)
    got, p = run_pressure(limit, opt)
    k = p.kernels[0]
    assert k.registers <= limit
    assert k.local_memory > 0  # spill slots in local memory
    assert np.array_equal(got, ref)
    assert p0.kernels[0].registers > limit  # it really needed more


def test_impossible_limit_is_a_clear_error() -> None:
    S.pressure.max_registers = 3
    S.pressure.opt = 2
    with pytest.raises(wg.CompileError, match=r"max_registers|cannot be allocated"):
        S.pressure.program  # noqa: B018
    S.pressure.max_registers = None


@pytest.mark.parametrize("limit", [None, 10])
def test_f64_pairs_are_even_aligned_and_spill(limit: int | None) -> None:
    S.wide.max_registers = limit
    x = np.linspace(-3, 3, 64)
    out = np.zeros(64)
    S.wide(x, out, grid=1)
    a = x
    b = a * 2
    c = b + a
    d = c * c
    e = d - b
    assert np.array_equal(out, a + b + c + d + e)
    for inst in S.wide.program.kernels[0].instructions:
        for op in inst.operands:
            if isinstance(op, wg.isa.Pair):
                assert op.n % 2 == 0


def test_predicates_spill_to_registers() -> None:
    x = np.arange(-6, 58, dtype=np.int32)
    out = np.zeros(64, np.int32)
    S.many_flags(x, out, grid=1, check=True)
    exp = []
    for v in x.tolist():
        f = [v > k for k in range(10)] + [v < -3]
        r = f[0] * 1 + (f[1] and f[2]) * 2 + (f[3] or f[4]) * 4 + (f[5] != f[6]) * 8 + f[7] * 16
        r += (f[8] and not f[9]) * 32 + f[10] * 64 + all(f[:10]) * 128
        exp.append(r)
    assert list(out) == exp
    assert S.many_flags.program.kernels[0].predicates <= 8
