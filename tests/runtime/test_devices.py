"""The device table (runtime/devices.py): every row runs a corpus kernel through each way in (wg.launch,
a kernel call with NumPy arrays, a kernel call with device arrays where the device has a heap) or
skips with the device's own availability reason; the rows are consistent with the backends; the
refusals of options a device does not take are derived from the table."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import wavegpu as wg
from wavegpu.backends import NAMES as TARGETS
from wavegpu.backends.ptx import MMA_PATHS
from wavegpu.runtime import devices
from wavegpu.runtime.call import run_kernel
from wavegpu.runtime.devices import ENFORCED, HINTS, ROWS

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from cli_helpers import run_wave
from corpus import EXAMPLES

VECTOR_ADD = next(p for p in EXAMPLES if p.name == "vector_add.wave")
N = 300  # not a multiple of the workgroup: the bounds check of the kernel matters


def _usable(name: str) -> devices.Device:
    row = devices.DEVICES[name]
    ok, why = row.available()
    if not ok:
        pytest.skip(f"device {name!r} is not usable here: {why}")
    return row


def _inputs(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.normal(size=N).astype(np.float32), rng.normal(size=N).astype(np.float32)


@pytest.mark.parametrize("name", devices.names())
def test_a_corpus_kernel_runs_on_every_device_of_the_table(name: str) -> None:
    """vector_add.wave through wg.launch (an image and buffer addresses) and through a kernel call
    (NumPy arrays, the calling convention), on the device's own default wave width."""
    row = _usable(name)
    prog = wg.assemble(VECTOR_ADD.read_text(), str(VECTOR_ADD))
    k = prog.kernels[0]
    a, b = _inputs(1)
    image = np.concatenate([a, b, np.zeros(N, np.float32)]).view(np.uint8)
    res = wg.launch(prog, device=name, grid=2, workgroup=256, memory=image, args=[0, 4 * N, 8 * N, N])
    assert res.stats.wave_width == row.wave_width and res.kernel == k.name
    assert np.array_equal(res.view(np.float32, 8 * N, N), a + b)
    assert np.array_equal(res.view(np.float32, 0, N), a)  # the inputs are left as they were
    c = np.zeros(N, np.float32)
    run_kernel(k, [a, b, c, N], grid=2, workgroup=256, device=name)
    assert np.array_equal(c, a + b)


@pytest.mark.parametrize("name", [d.name for d in ROWS if d.heap is not None])
def test_every_device_with_a_heap_runs_a_call_on_device_arrays(name: str) -> None:
    _usable(name)
    k = wg.assemble(VECTOR_ADD.read_text(), str(VECTOR_ADD)).kernels[0]
    a, b = _inputs(2)
    da, db, dc = wg.to_device(a, name), wg.to_device(b, name), wg.device_array(N, np.float32, name)
    assert dc.device == devices.heap_device(name).name
    run_kernel(k, [da, db, dc, N], grid=2, workgroup=256, device=name)
    assert np.array_equal(dc.copy_to_host(), a + b) and np.array_equal(da.copy_to_host(), a)


def test_devices_lists_the_usable_rows_in_table_order() -> None:
    here = wg.devices()
    assert here == [d.name for d in ROWS if d.available()[0]]
    assert here[0] == "emulator" == devices.DEFAULT.name  # the default always runs


@pytest.mark.parametrize("row", ROWS, ids=lambda d: d.name)
def test_every_row_is_consistent_with_the_backends(row: devices.Device) -> None:
    assert row.target is None or row.target in TARGETS, f"{row.name}: no backend renders {row.target!r}"
    assert row.wave_width in (1, 2, 4, 8, 16, 32, 64)
    assert row.takes <= set(ENFORCED) | set(HINTS)
    assert "exact" in row.mma_paths and set(row.mma_paths) <= set(MMA_PATHS)
    assert (len(row.mma_paths) > 1) == ("mma" in row.takes)  # a second mma path is a device's choice to take
    if row.heap is not None:
        owner = devices.DEVICES[row.heap]
        assert owner.heap == owner.name and owner.gpu_heap == row.gpu_heap
    assert row.about and row.available is not None
    assert devices.device(row.name) is row
    if row.target is None:
        assert row.finish is None  # a device that runs the binary renders nothing to finish


def test_unknown_names_are_refused_by_name() -> None:
    for bad in ("tpu", "CUDA", "", None, 3):
        with pytest.raises(wg.WaveError, match="unknown device"):
            devices.device(bad)
        with pytest.raises(wg.WaveError, match="unknown device"):
            devices.heap_device(bad)
    no_heap = [d.name for d in ROWS if d.heap is None]
    for name in no_heap:
        with pytest.raises(wg.WaveError, match="device arrays live on: " + ", ".join(d.name for d in ROWS if d.heap)):
            wg.device_array(4, np.float32, device=name)


OPTION_VALUES = {
    "check": True,
    "boundscheck": True,
    "max_instructions": 5,
    "zero_division": True,
    "arch": "gfx942",
    "engine": "numpy",
    "progress": True,
    "donate": True,
    "mma": "exact",
}


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(ROWS), st.sets(st.sampled_from(sorted(OPTION_VALUES))))
def test_a_row_refuses_exactly_the_enforced_options_it_does_not_take(row: devices.Device, given_: set[str]) -> None:
    """Derived from the table: an enforced option a device does not take is refused, naming the
    devices that take it; a hint is never refused; mma="exact" runs everywhere."""
    options = {o: OPTION_VALUES[o] for o in given_}
    refused = [o for o in ENFORCED if o in given_ and o not in row.takes]
    if not refused:
        row.refuse(options)
        return
    with pytest.raises(wg.WaveError) as e:
        row.refuse(options)
    first = refused[0]
    takers = [d.name for d in ROWS if first in d.takes]
    assert all(f"device={n!r}" in str(e.value) for n in takers) and repr(row.name) in str(e.value)


def test_mma_tensor_runs_only_where_a_row_says_so() -> None:
    for row in ROWS:
        if "tensor" in row.mma_paths:
            row.check_mma("tensor")
        else:
            with pytest.raises(wg.WaveError, match="mma='tensor' runs on device="):
                row.check_mma("tensor")
        with pytest.raises(wg.WaveError, match="unknown mma path"):
            row.check_mma("fast")


def test_the_default_wave_width_comes_from_the_row() -> None:
    k = wg.assemble(".kernel k\n.registers 1\n    ret\n.end\n").kernels[0]
    for row in (d for d in ROWS if d.available()[0]):
        assert wg.launch(k, device=row.name, memory=16).stats.wave_width == row.wave_width


def test_wave_info_lists_the_device_table() -> None:
    r = run_wave("info", "--devices")
    assert r.returncode == 0, r.stderr
    for row in ROWS:
        assert row.name in r.stdout
    assert "yes" in r.stdout  # the emulator runs everywhere
