"""Device-resident arrays (runtime/device_arrays.py): the heap's sub-allocator, copies in and
out, kernel calls on the heap (no copies of device arrays; NumPy arguments beside them under the
calling convention's rules), DLPack, on the emulator and OpenCL; on a GPU, the same on "cuda"
with __cuda_array_interface__ and CuPy/PyTorch interop (skipped without one)."""

from __future__ import annotations

import numpy as np
import pytest

import wavegpu as wg
from wavegpu.runtime import canaries, cuda, dlpack, heap, opencl, sycl
from wavegpu.runtime.buffers import ALIGN, GUARD, slot_bytes
from wavegpu.runtime.device_arrays import device_array, to_device


@wg.kernel
def saxpy(a: wg.f32, x: wg.f32[:], y: wg.f32[:], n: wg.i32):
    i = wg.global_id()
    if i < n:
        y[i] = a * x[i] + y[i]


@wg.kernel
def scale_all(x: wg.f32[:], k: wg.f32):
    i = wg.global_id()
    if i < len(x):
        x[i] = x[i] * k


@wg.kernel
def overrun(x: wg.u32[:], n: wg.i32):
    i = wg.global_id()
    x[i + n] = 7


@wg.kernel
def add3(a: wg.f32[:], b: wg.f32[:], c: wg.f32[:]):
    c[0] = a[0] + b[0]


@wg.kernel
def add_past(x: wg.u32[:], y: wg.u32[:]):
    if wg.global_id() == 0:
        x[0] = y[0]
        x[64] = 1


HOST_DEVICES = [
    "emulator",
    pytest.param("opencl", marks=pytest.mark.skipif(not opencl.available()[0], reason="no OpenCL")),
]


def test_round_trip_and_zeros() -> None:
    a = np.arange(10, dtype=np.float32)
    d = to_device(a, "emulator")
    assert d.shape == (10,) and d.dtype == np.float32 and d.device == "emulator" and len(d) == 10
    assert d.address % ALIGN == 0 and d.address >= GUARD
    b = d.copy_to_host()
    assert np.array_equal(a, b) and b is not a
    a[0] = 99  # the device copy is its own
    assert d.copy_to_host()[0] == 0
    z = device_array((3, 4), np.int32)
    assert np.array_equal(z.copy_to_host(), np.zeros((3, 4), np.int32))
    out = np.empty((3, 4), np.int32)
    assert z.copy_to_host(out) is out
    z.copy_to_device(np.ones((3, 4), np.int32))
    assert (z.copy_to_host() == 1).all()


def test_refusals_name_the_problem() -> None:
    with pytest.raises(wg.WaveError, match="element types"):
        device_array(4, np.complex64)
    with pytest.raises(wg.WaveError, match="NumPy array"):
        to_device([1, 2, 3])
    with pytest.raises(wg.WaveError, match="shape"):
        device_array((-1,), np.float32)
    with pytest.raises(wg.WaveError, match="unknown device"):
        device_array(4, np.float32, device="tpu")
    d = device_array(4, np.float32)
    with pytest.raises(wg.WaveError, match=r"float32 array of shape \(4,\)"):
        d.copy_to_device(np.zeros(4, np.float64))
    with pytest.raises(AttributeError, match="host memory"):
        _ = d.__cuda_array_interface__


def test_the_sub_allocator_reuses_and_merges_slots() -> None:
    h = heap.Heap("emulator", 1 << 16)
    a = h.alloc(100)
    b = h.alloc(1000)
    c = h.alloc(10)
    assert a == GUARD and b == a + 512 and c == b + 1280  # each slot: data + guard gap, 256-aligned
    h.release(b, 1000)
    assert h.alloc(300) == b  # first fit in the freed slot
    h.release(c, 10)
    h.release(a, 100)
    assert h.free == [(a, 512)] and h.top == b + 768  # the end goes back to the top
    with pytest.raises(wg.WaveError, match="heap is full"):
        h.alloc(1 << 16)


def test_arrays_free_their_slot_when_dropped() -> None:
    h = heap.heap("emulator")
    d = device_array(5000, np.uint8)
    at = d.address
    del d
    again = device_array(5000, np.uint8)
    assert again.address == at and not any(again.copy_to_host())  # reused, and zeroed
    assert h.top >= at


@pytest.mark.parametrize("device", HOST_DEVICES)
def test_kernel_calls_on_device_arrays(device: str) -> None:
    n = 1000
    rng = np.random.default_rng(1)
    x, y = rng.random(n).astype(np.float32), rng.random(n).astype(np.float32)
    want = y.copy()
    saxpy(np.float32(2.5), x, want, n, grid=4, workgroup=256, device=device)
    dx, dy = to_device(x, device), to_device(y, device)
    saxpy(np.float32(2.5), dx, dy, n, grid=4, workgroup=256, device=device)
    assert np.array_equal(dy.copy_to_host(), want)
    assert np.array_equal(dx.copy_to_host(), x)
    # NumPy arrays beside device arrays: placed for the call, the written one copied back
    y2 = y.copy()
    saxpy(np.float32(2.5), dx, y2, n, grid=4, workgroup=256, device=device)
    assert np.array_equal(y2, want)
    # len() of a device array
    scale_all(dy, np.float32(2.0), grid=4, workgroup=256, device=device)
    assert np.array_equal(dy.copy_to_host(), want * np.float32(2.0))


def test_calls_keep_the_calling_conventions_rules() -> None:
    n = 64
    x = to_device(np.ones(n, np.float64))
    y = to_device(np.ones(n, np.float32))
    with pytest.raises(wg.WaveError, match="needs an array of float32, got a device array of float64"):
        saxpy(np.float32(1), x, y, n, grid=1, workgroup=64)
    with pytest.raises(wg.WaveError, match="out of range"):
        saxpy(np.float32(1), y, y, 2**40, grid=1, workgroup=64)
    big = np.zeros(n, np.float32)  # overlapping NumPy views beside a device array: refused
    with pytest.raises(wg.WaveError, match="share memory"):
        add3(big[:32], big[16:48], y, grid=1, workgroup=32)


@pytest.mark.skipif(not opencl.available()[0], reason=f"another device is needed: {opencl.available()[1]}")
def test_a_device_array_is_refused_on_another_device() -> None:
    """The device rule of the calling convention needs a second device: a GPU machine may have
    no pyopencl, so it is apart from the rules above, which run anywhere."""
    y = to_device(np.ones(64, np.float32))
    with pytest.raises(wg.WaveError, match="lives on 'emulator'; call the kernel with device='emulator'"):
        saxpy(np.float32(1), y, y, 64, grid=1, workgroup=64, device="opencl")


def test_an_overrun_traps_on_the_emulator_and_leaves_the_host_alone() -> None:
    d = device_array(64, np.uint32)
    with pytest.raises(wg.Trap):
        overrun(d, 64, grid=1, workgroup=32, check=True)


@pytest.mark.skipif(not opencl.available()[0], reason="no OpenCL")
def test_an_overrun_on_opencl_is_refused_and_changes_nothing() -> None:
    """The OpenCL kernel checks its accesses (runtime/faults.py): a write past an array is the
    emulator's trap, and the heap is not taken back (the device arrays keep their contents)."""
    d = to_device(np.arange(64, dtype=np.uint32), "opencl")
    other = to_device(np.full(64, 5, np.uint32), "opencl")
    with pytest.raises(wg.Trap, match=r"out-of-bounds store to x\[64\]: x has 64 element"):
        overrun(d, 64, grid=1, workgroup=32, device="opencl")
    assert np.array_equal(d.copy_to_host(), np.arange(64)) and (other.copy_to_host() == 5).all()
    overrun(d, 0, grid=1, workgroup=32, device="opencl")  # in bounds: taken
    assert (d.copy_to_host()[:32] == 7).all() and np.array_equal(d.copy_to_host()[32:], np.arange(32, 64))


@wg.kernel
def one_past(x: wg.u32[:], n: wg.u32):
    if wg.global_id() == 0:
        x[n] = 7


def test_the_gaps_between_arrays_hold_canaries() -> None:
    """Every byte from an array's end to its slot's end, and the heap's first GUARD bytes, hold
    the canary pattern; the array's own bytes are zero."""
    a = device_array(10, np.uint32)  # 40 bytes: 216 of padding and gap after it in its slot
    h = heap.heap("emulator")
    assert h.host is not None and h.live[a.address] == 40
    end = a.address + slot_bytes(40)
    assert np.array_equal(h.host[a.address + 40 : end], canaries.canary(a.address + 40, end - a.address - 40))
    assert np.array_equal(h.host[:GUARD], canaries.canary(0, GUARD))
    assert not h.host[a.address : a.address + 40].any() and h.damage([(a.address, 40)]) == []
    assert len(set(canaries.canary(0, 16).tolist())) == 16  # no byte repeats within a period
    gaps = h.gaps([(a.address, 40)])
    assert gaps == [(a.address - GUARD, a.address), (a.address + 40, end)]
    h.host[a.address + 40] ^= 1  # one byte past the end changed: found, and armed again
    assert h.damage([(a.address, 40)]) == [(a.address + 40, a.address + 40)]
    h.rearm([(a.address, 40)])
    assert h.damage([(a.address, 40)]) == []


@pytest.mark.parametrize(
    "device",
    [*HOST_DEVICES, pytest.param("sycl", marks=pytest.mark.skipif(not sycl.available()[0], reason="no SYCL"))],
)
def test_a_write_one_element_past_the_end_names_the_array_and_the_kernel(device: str) -> None:
    """The emulator traps the store (the call's arrays are its buffer regions), and OpenCL and
    SYCL, whose kernels check their accesses (runtime/faults.py), give the same trap, naming the
    array, the element and the kernel. Either way both arrays keep their contents."""
    d = to_device(np.arange(64, dtype=np.uint32), device)
    nxt = to_device(np.full(64, 5, np.uint32), device)
    with pytest.raises(wg.Trap, match=r"(?s)out-of-bounds store to x\[64\].*kernel 'one_past'"):
        one_past(d, 64, grid=1, workgroup=32, device=device)
    assert np.array_equal(d.copy_to_host(), np.arange(64)) and (nxt.copy_to_host() == 5).all()
    one_past(d, 63, grid=1, workgroup=32, device=device)  # the last element: in bounds
    assert d.copy_to_host()[63] == 7


class FakeGPU:
    """The CUDA device on fakecuda.FakeDriver (the driver module's stand-in, over simulated
    memory) with a 'GPU' that runs each launched kernel on the emulator without bounds checks
    (as a GPU would: nothing traps a write out of bounds), the canary check included; it counts
    the driver calls and the bytes copied back to the host."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, *kernels: wg.Program) -> None:
        from wavegpu.runtime.canary_check import canary_check
        from wavegpu.runtime.fakecuda import FakeDriver

        self.kernels = {p.kernels[0].name: p for p in (*kernels, canary_check.program)}
        self.driver = FakeDriver(launch=self.run)
        copy = self.driver.cuMemcpyDtoH

        def counted(dst: int, src: int, n: int) -> tuple:
            self.read += n
            return copy(dst, src, n)

        self.driver.cuMemcpyDtoH = counted  # type: ignore[method-assign]
        self.read = 0
        monkeypatch.setenv("WAVEGPU_HEAP_BYTES", str(1 << 20))
        self.using = cuda.use_driver(self.driver)

    def __enter__(self) -> FakeGPU:
        self.using.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.using.__exit__(None, None, None)

    @property
    def copies(self) -> list[str]:
        return [c for c in self.driver.calls if c.startswith("cuMemcpy")]

    def run(self, entry: str, ptx: str, grid: tuple, workgroup: tuple, values: tuple) -> None:
        assert f".entry {entry}(" in ptx
        mem = self.driver.view(values[0], 1 << 20)
        res = wg.launch(self.kernels[entry], grid=grid, workgroup=workgroup, memory=mem, args=list(values[2:]))
        mem[:] = res.memory


def test_on_cuda_an_overrun_is_found_by_its_canary(monkeypatch: pytest.MonkeyPatch) -> None:
    """device="cuda" runs the kernel where nothing traps; after the launch the canary check
    (runtime/canary_check.py) compares the canaries around the call's arrays on the device, and
    its block comes back in one small copy whatever the arrays' sizes; a changed canary is a
    WaveError naming the kernel, the array and the element; the canary is armed again, so the
    next call reports only its own writes. Runs without a GPU (fakecuda's driver over host
    memory, the kernels on the emulator: FakeGPU); test_an_overrun_on_the_gpu_is_reported
    checks the real thing."""
    with FakeGPU(monkeypatch, one_past.program, add_past.program) as gpu:
        d = to_device(np.arange(64, dtype=np.uint32), "cuda")
        nxt = to_device(np.full(64, 5, np.uint32), "cuda")
        one_past(d, 10, grid=1, workgroup=32, device="cuda")  # in bounds (the first call writes the table)
        assert d.copy_to_host()[10] == 7
        gpu.driver.calls.clear()
        gpu.read = 0
        one_past(d, 11, grid=1, workgroup=32, device="cuda")  # the same array: nothing copied in
        assert gpu.driver.calls == ["cuLaunchKernel", "cuLaunchKernel", "cuMemcpyDtoH"]
        assert gpu.read == 2 * 16  # the gap before x, the gap after it: two ranges of 16 bytes
        far = device_array(40000, np.uint32, "cuda")  # 160000 bytes: its two gaps far apart
        gpu.driver.calls.clear()
        gpu.read = 0
        one_past(far, 3, grid=1, workgroup=32, device="cuda")
        assert gpu.copies == ["cuMemcpyHtoD", "cuMemcpyDtoH"] and gpu.read == 2 * 16  # new ranges: table
        with pytest.raises(
            wg.WaveError,
            match=r"kernel 'one_past' wrote out of bounds on device 'cuda': heap address 0x[0-9a-f]+ is in the "
            r"guard gap after array 'x' \(the uint32 device array \(64,\) at 0x[0-9a-f]+\), 0 bytes past its "
            r"end \(element 64\)\. .*Run the call on device='emulator'",
        ):
            one_past(d, 64, grid=1, workgroup=32, device="cuda")
        assert (nxt.copy_to_host() == 5).all()
        one_past(d, 63, grid=1, workgroup=32, device="cuda")  # armed again: no stale report
        with pytest.raises(wg.WaveError, match=r"guard gap before array 'x' .* 4 bytes before its start"):
            one_past(d, 0xFFFFFFFF, grid=1, workgroup=32, device="cuda")  # x[-1]: the address wraps
        with pytest.raises(wg.WaveError, match=r"guard gap after array 'x' .* 252 bytes past its end \(element 127\)"):
            one_past(d, 127, grid=1, workgroup=32, device="cuda")  # the gap's last word
        with pytest.raises(wg.WaveError, match=r"guard gap after array 'x' \(the uint32 device array \(40000,\)"):
            one_past(far, 40000, grid=1, workgroup=32, device="cuda")  # the far gap of a large array
        one_past(far, 39999, grid=1, workgroup=32, device="cuda")
        block = heap.heap("cuda").block  # the check's own block: a write there is caught too
        at = f"heap address {block + 4:#x} is in memory that belongs to no array it was given"
        with pytest.raises(wg.WaveError, match=f"wrote out of bounds on device 'cuda': {at}"):
            one_past(d, ((block - d.address) // 4 + 1) & 0xFFFFFFFF, grid=1, workgroup=32, device="cuda")
        one_past(d, 1, grid=1, workgroup=32, device="cuda")  # the table is written afresh
        x = np.zeros(64, np.uint32)  # a NumPy argument beside device arrays: not copied back
        with pytest.raises(wg.WaveError, match="NumPy arguments were not copied back"):
            add_past(x, nxt, grid=1, workgroup=32, device="cuda")
        assert not x.any()


def test_on_cuda_cpp_an_overrun_is_found_by_its_canary(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CUDA C++ path (NVRTC, no GPU needed to compile) shares the heap and its canary check."""
    with FakeGPU(monkeypatch, one_past.program) as gpu:
        d = to_device(np.arange(64, dtype=np.uint32), "cuda-cpp")
        one_past(d, 5, grid=1, workgroup=32, device="cuda-cpp")
        assert d.copy_to_host()[5] == 7
        gpu.driver.calls.clear()
        with pytest.raises(wg.WaveError, match=r"'one_past' wrote out of bounds on device 'cuda-cpp'.* past its end"):
            one_past(d, 70, grid=1, workgroup=32, device="cuda-cpp")
        calls = gpu.driver.calls
        assert calls[:3] == ["cuLaunchKernel", "cuLaunchKernel", "cuMemcpyDtoH"]
        assert set(calls[3:]) == {"cuMemcpyHtoD"}  # the canaries armed again


def test_dlpack_views_the_heap_in_place() -> None:
    d = to_device(np.arange(6, dtype=np.float32).reshape(2, 3))
    v = np.from_dlpack(d)
    assert v.shape == (2, 3) and v.dtype == np.float32 and np.array_equal(v, np.arange(6).reshape(2, 3))
    scale_all(d, np.float32(3.0), grid=1, workgroup=32)  # the kernel's writes show through the view
    assert np.array_equal(v, np.arange(6, dtype=np.float32).reshape(2, 3) * 3)
    assert d.__dlpack_device__() == (1, 0)
    capsule = d.__dlpack__()  # a capsule no one takes frees what it holds
    n = len(dlpack._LIVE)
    del capsule
    assert len(dlpack._LIVE) == n - 1


# ------------------------------------------------------------------ on a GPU
OK, WHY = cuda.available()
needs_cuda = pytest.mark.skipif(not OK, reason=f"no CUDA device: {WHY}")


@pytest.mark.skipif(OK, reason="a GPU is here")
@pytest.mark.parametrize("device", ["cuda", "cuda-cpp"])
def test_without_a_gpu_cuda_arrays_are_refused(device: str) -> None:
    with pytest.raises(wg.WaveError, match=f"device '{device}' is not usable here"):
        wg.device_array(4, np.float32, device=device)


@needs_cuda
@pytest.mark.gpu
@pytest.mark.parametrize("path", ["cuda", "cuda-cpp"])
def test_cuda_device_arrays_copy_nothing_and_export_their_pointer(path: str) -> None:
    n = 1 << 16
    rng = np.random.default_rng(2)
    x, y = rng.random(n).astype(np.float32), rng.random(n).astype(np.float32)
    want = y.copy()
    saxpy(np.float32(1.5), x, want, n, grid=n // 256, workgroup=256)  # the emulator
    dx, dy = to_device(x, "cuda"), to_device(y, "cuda")
    saxpy(np.float32(1.5), dx, dy, n, grid=n // 256, workgroup=256, device=path)  # one GPU heap for both
    assert np.array_equal(dy.copy_to_host(), want)
    cai = dy.__cuda_array_interface__
    assert cai["shape"] == (n,) and cai["typestr"] == "<f4" and cai["data"][0] == dy.pointer
    assert dy.__dlpack_device__() == (2, 0)


@needs_cuda
@pytest.mark.gpu
def test_cupy_arrays_go_in_and_out_device_to_device() -> None:
    cp = pytest.importorskip("cupy")
    n = 4096
    x = cp.arange(n, dtype=cp.float32)
    y = cp.ones(n, dtype=cp.float32)
    saxpy(np.float32(2), x, y, n, grid=n // 256, workgroup=256, device="cuda")
    assert np.array_equal(cp.asnumpy(y), 2 * np.arange(n, dtype=np.float32) + 1)
    d = to_device(np.arange(n, dtype=np.float32), "cuda")
    assert np.array_equal(cp.asnumpy(cp.asarray(d)), np.arange(n, dtype=np.float32))  # zero copy
    assert np.array_equal(cp.asnumpy(cp.from_dlpack(d)), np.arange(n, dtype=np.float32))


@needs_cuda
@pytest.mark.gpu
@pytest.mark.parametrize("path", ["cuda", "cuda-cpp"])
def test_an_overrun_on_the_gpu_is_reported(path: str) -> None:
    """On the GPU nothing traps a write one element past a device array's end; the canary after
    it does: a WaveError naming the kernel, the array and the element, and the next array intact."""
    d = to_device(np.arange(64, dtype=np.uint32), "cuda")
    nxt = to_device(np.full(64, 5, np.uint32), "cuda")
    with pytest.raises(
        wg.WaveError, match=r"kernel 'one_past' wrote out of bounds .* guard gap after array 'x' .*\(element 64\)"
    ):
        one_past(d, 64, grid=1, workgroup=32, device=path)
    assert (nxt.copy_to_host() == 5).all()
    one_past(d, 63, grid=1, workgroup=32, device=path)  # in bounds, and no stale report
    assert d.copy_to_host()[63] == 7
