"""The CUDA device (device="cuda"): the PTX backend's output loaded by the driver API and run on
an NVIDIA GPU, against the emulator on the conformance corpus (value rows, examples, compiled
kernels, atomics, random structured programs). Skipped with the reason when no GPU is here;
without one, the device must say so clearly."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import wavegpu as wg
from wavegpu.runtime import cuda

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_opencl import (
    VALUE_ROWS,
    _example,
    check_atomics,
    check_compiled_kernels,
    check_examples,
    check_mma,
    check_random_program,
    check_value_row,
)

OK, WHY = cuda.available()
needs_cuda = pytest.mark.skipif(not OK, reason=f"no CUDA device: {WHY}")
pytestmark = pytest.mark.gpu


@pytest.mark.skipif(OK, reason="a GPU is here")
def test_without_a_gpu_the_device_says_why() -> None:
    assert "cuda" not in wg.devices()
    with pytest.raises(wg.WaveError, match="cuda"):
        wg.launch(_example("vector_add.wave"), device="cuda", memory=64, args=[0, 16, 32, 4])


@needs_cuda
@pytest.mark.parametrize("r", VALUE_ROWS, ids=lambda r: r.key)
def test_every_value_row_matches_the_emulator(r) -> None:  # type: ignore[no-untyped-def]
    check_value_row("cuda", r)


@needs_cuda
def test_examples_match_the_emulator() -> None:
    assert "cuda" in wg.devices()
    check_examples("cuda")


@needs_cuda
def test_mma_matches_the_emulator() -> None:
    check_mma("cuda")


@needs_cuda
@pytest.mark.parametrize("opt", [0, 3])
def test_compiled_kernels_match_the_emulator(opt: int) -> None:
    check_compiled_kernels("cuda", opt)


@needs_cuda
def test_atomics_give_the_same_totals() -> None:
    check_atomics("cuda")


@needs_cuda
@settings(max_examples=30, deadline=None)
@given(st.data())
def test_random_structured_programs_match(data: st.DataObject) -> None:
    check_random_program("cuda", data, widths=(32,))
