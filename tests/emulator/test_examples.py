"""The examples and flat-dialect kernels run and give the right answers."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import wavegpu as wg

EX = Path(__file__).resolve().parents[2] / "examples"


def prog(name: str) -> wg.Program:
    return wg.assemble((EX / name).read_text(), name)


def test_vector_add() -> None:
    n = 1000
    a = np.arange(n, dtype=np.float32)
    b = np.full(n, 0.5, np.float32)
    mem = np.concatenate([a, b, np.zeros(n, np.float32)])
    res = wg.emulate(
        prog("vector_add.wave"),
        grid=(n + 255) // 256,
        memory=mem,
        args=[0, 4 * n, 8 * n, n],
        check=True,
    )
    np.testing.assert_array_equal(res.view(np.float32, 8 * n, n), a + b)


def test_reduce() -> None:
    x = np.random.default_rng(0).integers(0, 1000, 256 * 8).astype(np.uint32)
    mem = np.concatenate([x, np.zeros(8, np.uint32)])
    res = wg.emulate(prog("reduce.wave"), grid=8, memory=mem, args=[0, 4 * x.size], check=True)
    assert list(res.view(np.uint32, 4 * x.size, 8)) == list(x.reshape(8, -1).sum(axis=1))


def test_wave_scan() -> None:
    n = 256
    x = np.random.default_rng(1).integers(0, 100, n).astype(np.uint32)
    mem = np.concatenate([x, np.zeros(n + n // 32, np.uint32)])
    res = wg.emulate(
        prog("wave_scan.wave"),
        grid=2,
        workgroup=128,
        memory=mem,
        args=[0, 4 * n, 8 * n],
        check=True,
    )
    scan = res.view(np.uint32, 4 * n, n)
    assert list(scan) == list(np.cumsum(x.reshape(-1, 32), axis=1).reshape(-1))
    assert list(res.view(np.uint32, 8 * n, n // 32)) == list(x.reshape(-1, 32).sum(axis=1))


def test_flat_saxpy() -> None:
    n = 300
    x = np.linspace(-1, 1, n).astype(np.float32)
    y = np.ones(n, np.float32)
    a = np.float32(2.5)
    mem = np.concatenate([x, y])
    res = wg.emulate(prog("flat_saxpy.wave"), grid=3, memory=mem, args=[0, 4 * n, a, n], check=True)
    expect = np.array([np.float32(np.float64(a) * xi + 1.0) for xi in x], np.float32)
    np.testing.assert_array_equal(res.view(np.float32, 4 * n, n), expect)


def test_sgemm_tiled() -> None:
    n = 64
    rng = np.random.default_rng(2)
    A = rng.standard_normal((n, n)).astype(np.float32)
    B = rng.standard_normal((n, n)).astype(np.float32)
    mem = np.concatenate([A.ravel(), B.ravel(), np.zeros(n * n, np.float32)])
    res = wg.emulate(
        prog("sgemm_tiled.wave"),
        grid=(n // 16, n // 16),
        memory=mem,
        args=[0, 4 * n * n, 8 * n * n, n],
        check=True,
    )
    C = res.view(np.float32, 8 * n * n, n * n).reshape(n, n)
    # the kernel accumulates with fma in k order: reproduce exactly
    ref = np.zeros((n, n), np.float32)
    for k in range(n):
        ref = (A[:, k : k + 1].astype(np.float64) * B[k : k + 1, :].astype(np.float64) + ref).astype(np.float32)
    np.testing.assert_array_equal(C, ref)


def test_flat_dialect_kernel_with_atomics_and_control_flow() -> None:
    src = """
; count values above a threshold, flat dialect
.kernel count_above
.registers 10
.workgroup_size 64, 1, 1
    mov_sr r3, sr_thread_id_x
    mov_sr r4, sr_workgroup_id_x
    mov_sr r5, sr_workgroup_size_x
    imad r3, r4, r5, r3
    mov_imm r6, 4
    imul r6, r3, r6
    iadd r6, r0, r6
    device_load_u32 r7, r6
    icmp_gt p0, r7, r2
    if p0
        mov_imm r8, 1
        atomic_add r1, r8, .device
    endif
    halt
.end
"""
    x = np.arange(256, dtype=np.uint32)
    res = wg.emulate(
        wg.assemble(src),
        grid=4,
        memory=np.concatenate([x, np.zeros(1, np.uint32)]),
        args=[0, 1024, 200],
    )
    assert res.view(np.uint32, 1024, 1)[0] == 55
