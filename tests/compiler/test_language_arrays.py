"""Arrays: len(x) of an array parameter, 2-D arrays A[i, j] (shapes passed as hidden arguments),
2-D local arrays, f16 arrays (docs/compiler.md, "Arrays")."""

from __future__ import annotations

import numpy as np
import pytest

import wavegpu as wg
from wavegpu.runtime.buffers import hidden_of, pack

T = 16


@wg.kernel
def stencil(a: wg.f32[:, :], b: wg.f32[:, :]):
    i = wg.global_id(1)
    j = wg.global_id(0)
    if 0 < i < a.shape[0] - 1 and 0 < j < a.shape[1] - 1:
        b[i, j] = 0.25 * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])


def test_2d_stencil_matches_numpy() -> None:
    rng = np.random.default_rng(0)
    a = rng.random((21, 37), dtype=np.float32)
    b = np.zeros_like(a)
    stencil(a, b, grid=(3, 3), workgroup=(16, 8))
    want = np.zeros_like(a)
    want[1:-1, 1:-1] = np.float32(0.25) * (((a[:-2, 1:-1] + a[2:, 1:-1]) + a[1:-1, :-2]) + a[1:-1, 2:])
    assert np.array_equal(b, want)


@wg.kernel(workgroup=(T, T))
def transpose(a: wg.f32[:, :], out: wg.f32[:, :]):
    tile = wg.local_array(wg.f32, (T, T + 1))
    tx = wg.thread_id(0)
    ty = wg.thread_id(1)
    bx = wg.workgroup_id(0) * T
    by = wg.workgroup_id(1) * T
    if by + ty < a.shape[0] and bx + tx < a.shape[1]:
        tile[ty, tx] = a[by + ty, bx + tx]
    wg.barrier()
    if bx + ty < out.shape[0] and by + tx < out.shape[1]:
        out[bx + ty, by + tx] = tile[tx, ty]


def test_transpose_through_a_2d_local_array_matches_numpy() -> None:
    a = np.arange(40 * 23, dtype=np.float32).reshape(40, 23)
    out = np.zeros((23, 40), np.float32)
    transpose(a, out, grid=(2, 3))
    assert np.array_equal(out, a.T)
    k = transpose.program.kernels[0]
    assert k.local_memory >= T * (T + 1) * 4
    assert [p.name for p in k.params] == ["a", "out", "a__shape0", "a__shape1", "out__shape0", "out__shape1"]


@wg.kernel
def scale_all(x: wg.f32[:], y: wg.i32[:]):
    i = wg.global_id()
    if i < len(x):
        x[i] *= 2.0
    if i == 0:
        y[0] = len(y) + len(x)


def test_len_of_an_array_parameter_is_a_hidden_argument() -> None:
    x = np.arange(50, dtype=np.float32)
    y = np.zeros(3, np.int32)
    scale_all(x, y, grid=1, workgroup=64)
    assert np.array_equal(x, np.arange(50, dtype=np.float32) * 2) and y[0] == 53
    k = scale_all.program.kernels[0]
    assert hidden_of(k) == {"x__len": ("x", "__len"), "y__len": ("y", "__len")}
    # the low-level path fills them too, by position or by name, from arrays or counts
    layout = pack(k, {"x": x, "y": 7})
    assert layout.args[2:] == [50, 7]
    with pytest.raises(wg.WaveError, match="takes 2 argument"):
        pack(k, [x, y, 50, 3])


def test_a_2d_parameter_needs_a_2d_array() -> None:
    with pytest.raises(wg.WaveError, match="2-D array"):
        stencil(np.zeros(10, np.float32), np.zeros((2, 5), np.float32), grid=1)


@wg.kernel
def halves(x: wg.f16[:], y: wg.f16[:]):
    i = wg.global_id()
    y[i] = x[i] * 0.5 + x[i]


def test_f16_arrays_stay_f16() -> None:
    x = np.linspace(-4, 4, 32).astype(np.float16)
    y = np.zeros(32, np.float16)
    halves(x, y, grid=1, workgroup=32)
    assert np.array_equal(y, x * np.float16(0.5) + x)


def test_array_diagnostics() -> None:
    src = "import wavegpu as wg\n@wg.kernel\ndef k(a: wg.f32[:, :], x: wg.f32[:]):\n    {}\n"
    for body, msg in (
        ("a[0] = 1.0", "'a' has 2 dimension(s): index it a[i, j]"),
        ("x[0, 1] = 1.0", "'x' has 1 dimension(s): index it x[i]"),
        ("y = x.size", "arrays have no attribute 'size'"),
        ("y = a.shape[2]", "'a' has 2 dimension(s)"),
        ("s = wg.local_array(wg.f32, (2, 3, 4))", "one or two dimensions"),
    ):
        with pytest.raises(wg.CompileError) as ei:
            wg.compile(src.format(body))
        assert [d.message for d in ei.value.diagnostics] == [msg] or msg in ei.value.diagnostics[0].message
        assert len(ei.value.diagnostics) == 1
    with pytest.raises(wg.CompileError, match="reserved"):
        wg.compile("import wavegpu as wg\n@wg.kernel\ndef k(x__len: wg.i32):\n    pass\n")
