"""The host side of a kernel call (issue 25): the compile-cache key without reading the source on
every call (a changed file still recompiles), the precomputed binder (Python's binding and its
messages), and the driver calls a call with device arrays makes on device="cuda", counted on
fakecuda's stand-in for the driver module (the whole call path minus the GPU)."""

from __future__ import annotations

import importlib.util
import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import wavegpu as wg
from wavegpu.runtime import canaries, cuda, heap
from wavegpu.runtime.device_arrays import to_device
from wavegpu.runtime.fakecuda import FakeDriver

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import toolchains


@wg.kernel
def saxpy(a: wg.f32, x: wg.f32[:], y: wg.f32[:], n: wg.i32):
    i = wg.global_id()
    if i < n:
        y[i] = a * x[i] + y[i]


@wg.kernel
def copy_n(x: wg.u32[:], y: wg.u32[:]):
    i = wg.global_id()
    if i < len(x):
        y[i] = x[i]


MODULE = """import wavegpu as wg


@wg.kernel
def fill(x: wg.u32[:]):
    x[wg.global_id()] = {value}
"""


def _load(path: Path, name: str):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_a_call_does_not_read_the_source_again_and_an_edited_file_recompiles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second call finds the program by the file's stamp (inspect.getsource is not called);
    editing the file (same length, same line count) makes the next call compile the new text."""
    path = tmp_path / "fill_kernel.py"
    path.write_text(MODULE.format(value=5))
    fill = _load(path, "fill_kernel").fill
    x = np.zeros(32, np.uint32)
    fill(x, grid=1, workgroup=32)
    assert (x == 5).all()
    real = inspect.getsource
    reads: list[object] = []
    monkeypatch.setattr(inspect, "getsource", lambda obj: reads.append(obj) or real(obj))
    fill(x, grid=1, workgroup=32)
    assert reads == []  # the fast key: no source read
    path.write_text(MODULE.format(value=6))
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    fill(x, grid=1, workgroup=32)
    assert (x == 6).all() and len(reads) == 1  # the full key read the new text
    fill(x, grid=1, workgroup=32)
    assert len(reads) == 1


def test_a_changed_module_value_recompiles(tmp_path: Path) -> None:
    """A module-level constant the kernel uses is part of the key: rebinding it recompiles."""
    path = tmp_path / "scaled_kernel.py"
    path.write_text("import wavegpu as wg\n\nK = 3\n\n\n@wg.kernel\ndef put(x: wg.u32[:]):\n    x[0] = K\n")
    mod = _load(path, "scaled_kernel")
    x = np.zeros(1, np.uint32)
    mod.put(x, grid=1, workgroup=32)
    assert x[0] == 3
    mod.K = 4
    mod.put(x, grid=1, workgroup=32)
    assert x[0] == 4


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        ((1.0, 2, 3), {}),
        ((1.0, 2, 3, 4, 5), {}),
        ((1.0, 2, 3), {"a": 1.0}),
        ((1.0,), {"x": 1, "y": 2, "m": 4}),
        ((1.0,), {"x": 1, "y": 2}),
        ((), {"a": 1.0, "x": 1, "y": 2, "n": 3, "z": 0}),
    ],
)
def test_the_binder_refuses_as_python_does(args: tuple, kwargs: dict) -> None:
    """Bad calls give Python's own binding message, as before the binder was precomputed."""
    with pytest.raises(TypeError) as want:
        inspect.signature(saxpy.python).bind(*args, **kwargs)
    with pytest.raises(wg.WaveError) as got:
        saxpy.bind(args, kwargs)
    assert str(got.value) == f"kernel 'saxpy': {want.value}"


def test_the_binder_binds_as_python_does() -> None:
    for args, kwargs in [((1, 2, 3, 4), {}), ((1, 2), {"n": 4, "y": 3}), ((), {"n": 4, "y": 3, "x": 2, "a": 1})]:
        bound = inspect.signature(saxpy.python).bind(*args, **kwargs)
        assert saxpy.bind(args, kwargs) == dict(bound.arguments)
        assert list(saxpy.bind(args, kwargs)) == ["a", "x", "y", "n"]


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("WAVEGPU_HEAP_BYTES", str(64 << 20))
    with cuda.use_driver(FakeDriver()) as drv:
        yield drv


def test_a_device_array_call_makes_two_launches_and_one_copy(fake: FakeDriver) -> None:
    """Steady state on device="cuda": the kernel's launch, the canary check's launch, one small
    copy of the check's block; no module look-up, no synchronise, no allocation. New arrays
    (other canary ranges) add one small copy to the device; a NumPy argument beside device
    arrays adds its own copies in and out."""
    n = 1 << 20
    dx, dy = to_device(np.ones(n, np.float32), "cuda"), to_device(np.ones(n, np.float32), "cuda")
    saxpy(np.float32(2), dx, dy, n, grid=n // 256, workgroup=256, device="cuda")
    assert fake.calls.count("cuModuleLoadData") == 2  # the kernel and the canary check, loaded once
    for _ in range(3):
        fake.calls.clear()
        saxpy(np.float32(2), dx, dy, n, grid=n // 256, workgroup=256, device="cuda")
        assert fake.calls == ["cuLaunchKernel", "cuLaunchKernel", "cuMemcpyDtoH"]
    dz = to_device(np.ones(n, np.float32), "cuda")
    fake.calls.clear()
    saxpy(np.float32(2), dx, dz, n, grid=n // 256, workgroup=256, device="cuda")
    assert fake.calls == ["cuMemcpyHtoD", "cuLaunchKernel", "cuLaunchKernel", "cuMemcpyDtoH"]
    x = np.arange(64, dtype=np.uint32)
    d = wg.device_array(64, np.uint32, "cuda")
    copy_n(x, d, grid=1, workgroup=64, device="cuda")
    fake.calls.clear()
    copy_n(x, d, grid=1, workgroup=64, device="cuda")
    # x's slot for the call: zeroed, its canary armed, its data copied in; x is read-only: no copy back
    assert fake.calls == [
        "cuMemsetD8",
        "cuMemcpyHtoD",
        "cuMemcpyHtoD",
        "cuLaunchKernel",
        "cuLaunchKernel",
        "cuMemcpyDtoH",
    ]  # x in (zeroed slot, its data), the check's block


def test_a_fault_is_reported_as_the_kernels(fake: FakeDriver, monkeypatch: pytest.MonkeyPatch) -> None:
    """A kernel that faults shows in the next driver call (here the check's copy): the WaveError
    names the kernel and what a fault there means."""
    from wavegpu.runtime.fakecuda import CUresult

    d = wg.device_array(64, np.uint32, "cuda")
    copy_n(d, d, grid=1, workgroup=64, device="cuda")
    monkeypatch.setattr(fake, "cuMemcpyDtoH", lambda *a: (CUresult.CUDA_ERROR_ILLEGAL_ADDRESS,))
    with pytest.raises(
        wg.WaveError, match=r"cuda: running copy_n \(a fault here is an out-of-bounds .*CUDA_ERROR_ILLEGAL"
    ):
        copy_n(d, d, grid=1, workgroup=64, device="cuda")


def test_the_canary_check_kernel_assembles(tmp_path: Path) -> None:
    """The PTX the canary check launches is accepted by ptxas (sm_75 and sm_90)."""
    tool = toolchains.ptxas().path
    if tool is None:
        pytest.skip(toolchains.ptxas().reason)
    text, entry = canaries.check_kernel()
    src = tmp_path / "check.ptx"
    for arch in ("sm_75", "sm_90"):
        src.write_text(text.replace(".target sm_75", f".target {arch}", 1))
        r = subprocess.run([tool, f"-arch={arch}", str(src), "-o", str(tmp_path / f"c.{arch}.cubin")],
                           capture_output=True, text=True, timeout=600)  # fmt: skip
        assert r.returncode == 0 and not r.stderr.strip(), r.stderr[-2000:]
    assert f".entry {entry}(" in text


def test_scalar_bits_fast_paths_give_the_general_results() -> None:
    """The f32 and int shortcuts of scalar_bits give NumPy's conversion bits, and out-of-range
    values still get the general path's messages."""
    from wavegpu.isa.types import DataType
    from wavegpu.runtime.buffers import scalar_bits
    from wavegpu.wbin.program import Param

    f = Param("a", "scalar", DataType.F32)
    floats = [0.0, -0.0, 1.0, 0.1, 1e-40, -1e-45, 3.4028235e38, 3.4028235677973362e38, float("inf"), 2.0**-149]
    floats += [np.float32(0.3), np.float64(1 / 3), 1.0000000596046448]  # a tie: rounds to even
    for v in floats:
        assert scalar_bits(v, f) == int(np.array(np.float32(float(v))).view(np.uint32)), v
    with pytest.raises(wg.WaveError, match=r"parameter 'a' \(f32\): 1e\+39 is out of range"):
        scalar_bits(1e39, f)
    for dt, good, bad in [
        (DataType.S32, [-(1 << 31), -1, 0, (1 << 31) - 1], [1 << 31]),
        (DataType.U32, [0, (1 << 32) - 1], [-1]),
    ]:
        p = Param("n", "scalar", dt)
        for v in good:
            assert scalar_bits(v, p) == v & 0xFFFFFFFF
        for v in bad:
            with pytest.raises(wg.WaveError, match=r"parameter 'n' .* is out of range"):
                scalar_bits(v, p)


def test_the_benchmark_prints_the_fake_driver_row(capsys: pytest.CaptureFixture[str]) -> None:
    """benchmarks/gpu.py's call-overhead rows run on every machine: the fake driver's figure, with
    its driver calls per call; the real driver's only where a GPU is (here: "not measured")."""
    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location("gpu_benchmark", root / "benchmarks" / "gpu.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    before = heap._HEAPS.get("cuda")
    bench.host_overhead(5, None)
    out = capsys.readouterr().out
    assert re.search(r"fake CUDA driver \(runtime/fakecuda\.py\) +\d+\.\d us .*; 3 driver calls per call\)", out), out
    assert re.search(r"real driver +not measured", out), out
    assert heap._HEAPS.get("cuda") is before  # the fake's heap is gone with it
