"""The fast paths of a kernel call (docs/performance.md, call overhead) take exactly the calls
their general paths take and refuse nothing less: the launch-size check, binding by name, the
device-array check and a driver failure."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import wavegpu as wg
from wavegpu.emulator.launch import check_threads
from wavegpu.errors import WaveError
from wavegpu.runtime import cuda
from wavegpu.runtime.buffers import bind
from wavegpu.runtime.device_arrays import to_device
from wavegpu.runtime.fakecuda import FakeDriver
from wavegpu.wbin.program import Param


@wg.kernel
def axpy(a: wg.f32, x: wg.f32[:], y: wg.f32[:], n: wg.i32):
    i = wg.global_id()
    if i < n:
        y[i] = a * x[i] + y[i]


def too_many(grid: tuple[int, int, int], wgs: tuple[int, int, int], limit: int | None) -> bool:
    """check_threads' rule, written out: per axis and in all at most 2**32 threads, per axis at
    most the kernel's limit."""
    axes = [g * w for g, w in zip(grid, wgs)]
    total = axes[0] * axes[1] * axes[2]
    return any(a > 1 << 32 for a in axes) or total > 1 << 32 or (limit is not None and any(a > limit for a in axes))


class _Limited:
    name = "k"

    def __init__(self, limit: int | None):
        self.max_global_size = limit


dims = st.tuples(*[st.sampled_from([0, 1, 2, 3, 255, 256, 1 << 16, (1 << 16) + 1, 1 << 31, 1 << 33])] * 3)


@given(dims, dims, st.sampled_from([None, 1, 1000, (1 << 31) - 1, 1 << 40]))
def test_check_threads_refuses_exactly_what_its_rule_says(grid, wgs, limit) -> None:  # type: ignore[no-untyped-def]
    k = _Limited(limit)
    if too_many(grid, wgs, limit):
        with pytest.raises(WaveError, match="threads"):
            check_threads(grid, wgs, k)  # type: ignore[arg-type]
    else:
        check_threads(grid, wgs, k)  # type: ignore[arg-type]


def test_binding_by_name_with_as_many_names_as_parameters() -> None:
    k = axpy.program.kernels[0]
    names = [p.name for p in k.params]
    values = {n: i for i, n in enumerate(names)}
    assert bind(k, dict(reversed(values.items()))) == list(range(len(names)))
    wrong = dict(values)
    del wrong[names[1]]
    wrong["nope"] = 1  # as many names as parameters, one of them unknown
    with pytest.raises(WaveError, match=r"no parameter.*nope"):
        bind(k, wrong)
    del wrong["nope"]
    with pytest.raises(WaveError, match=rf"missing argument.*{names[1]}"):
        bind(k, wrong)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("WAVEGPU_HEAP_BYTES", str(64 << 20))
    with cuda.use_driver(FakeDriver()) as drv:
        yield drv


def test_device_arrays_of_another_type_or_device_are_still_refused(fake: FakeDriver) -> None:
    x = to_device(np.ones(64, np.float32), "cuda")
    y64 = to_device(np.ones(64, np.float64), "cuda")
    y = to_device(np.zeros(64, np.float32), "cuda")
    e = to_device(np.zeros(64, np.float32))  # the emulator's heap
    with pytest.raises(WaveError, match="needs an array of float32"):
        axpy(np.float32(2), x, y64, 64, grid=1, workgroup=64, device="cuda")
    with pytest.raises(WaveError, match="lives on 'emulator'"):
        axpy(np.float32(2), x, e, 64, grid=1, workgroup=64, device="cuda")
    axpy(np.float32(2), x, y, 64, grid=1, workgroup=64, device="cuda")  # the fake driver runs nothing
    assert fake.calls.count("cuLaunchKernel") == 2  # the kernel and the canary check, nothing refused


def test_a_failed_driver_call_is_still_a_wave_error() -> None:
    drv = FakeDriver()
    bad = (drv.CUresult.CUDA_ERROR_INVALID_VALUE,)
    with cuda.use_driver(drv):
        assert cuda._check((drv.CUresult.CUDA_SUCCESS,), "x") == ()
        assert cuda._check((drv.CUresult.CUDA_SUCCESS, 7), "x") == 7
        with pytest.raises(WaveError, match="cuda: launching k failed"):
            cuda._check(bad, "launching k")


def test_param_kinds_are_read_once_per_kernel_object() -> None:
    """The per-kernel table of element types follows the kernel object, not a reused id."""
    from wavegpu.runtime.array_calls import _dtypes

    k = axpy.program.kernels[0]
    assert _dtypes(k) == [None, np.dtype(np.float32), np.dtype(np.float32), None]
    assert all(isinstance(p, Param) for p in k.params)
