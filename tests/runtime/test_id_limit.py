"""Kernels whose ids are i32 (Python, TypeScript) are correct for at most 2**31 - 1 threads along
an axis: the compiler records it (Kernel.max_global_size, the .wbin kernel entry at offset 52) and
every launch path refuses a larger launch before it builds any memory image (issue 28.3). Nothing
here runs a large launch: the grids are huge, the arrays tiny, and the refusal comes first."""

from __future__ import annotations

import dataclasses
import re
import struct
from pathlib import Path

import numpy as np
import pytest

import wavegpu as wg
from cli_helpers import run_emu, run_wave
from wavegpu.emulator.launch import check_threads
from wavegpu.wbin import write
from wavegpu.wbin.format import HEADER, KERNEL, KERNEL_FIELDS, _field_offset

LIMIT = 2**31 - 1
HUGE = (1 << 31) // 256 + 1  # workgroups of 256: 2**31 + 256 threads along x
REFUSED = re.compile(
    r"kernel 'fill': grid \(8388609, 1, 1\) x workgroup \(256, 1, 1\) launches 2147483904 threads "
    r"along axis x, more than the 2147483647 its ids are correct for"
)

PY_FILL = """
import wavegpu as wg

def fill(out: wg.f32[:], n: wg.u32):
    i = wg.global_id()
    if i < n:
        out[i] = 1.0
"""

SOURCES = {
    "python": (PY_FILL, LIMIT),
    "cpp": (
        "__global__ void fill(float* out, uint32_t n) { uint32_t i = wave::global_id(0); if (i < n) out[i] = 1.0f; }",
        None,
    ),
    "rust": (
        "#[kernel]\npub fn fill(out: &mut [f32], n: u32) { let i = global_id(0); if i < n { out[i as usize] = 1.0; } }",
        None,
    ),
    "typescript": (
        "/** @kernel */\nfunction fill(out: Float32Array, n: u32): void { const i = wave.global_id(0); if (i < n) out[i] = 1.0; }",
        LIMIT,
    ),
}


@wg.kernel
def fill(out: wg.f32[:], n: wg.u32) -> None:
    i = wg.global_id()
    if i < n:
        out[i] = 1.0


@wg.kernel
def fill_u32(out: wg.f32[:], n: wg.u32) -> None:
    i = wg.u32(wg.global_id())  # read unsigned: correct up to the ISA's own limit
    if i < n:
        out[i] = 1.0


@wg.kernel
def local_only(out: wg.f32[:]) -> None:
    out[wg.thread_id()] = wg.f32(wg.workgroup_size())


def kernel_entry_field(image: bytes, index: int = 0) -> int:
    off = _field_offset(HEADER.size + index * KERNEL.size, KERNEL_FIELDS, KERNEL, "max_global_size")
    return struct.unpack_from("<I", image, off)[0]


@pytest.mark.parametrize("lang", sorted(SOURCES))
def test_each_frontend_records_the_limit_of_its_ids(lang: str) -> None:
    src, want = SOURCES[lang]
    k = wg.compile(src, lang=lang).kernel("fill")
    assert k.max_global_size == want
    image = wg.Program((k,)).to_bytes()
    assert kernel_entry_field(image) == (want or 0)
    assert wg.Program.from_bytes(image).kernels[0].max_global_size == want


def test_only_ids_read_as_i32_that_grow_with_the_launch_set_it() -> None:
    from wavegpu.compiler.builtins import I32_ID_LIMIT

    assert I32_ID_LIMIT == LIMIT
    assert fill.program.kernels[0].max_global_size == LIMIT
    assert fill_u32.program.kernels[0].max_global_size is None
    assert local_only.program.kernels[0].max_global_size is None  # bounded by the workgroup
    for name in ("workgroup_id", "grid_size", "global_size"):
        src = f"import wavegpu as wg\ndef k(out: wg.i32[:]):\n    out[0] = wg.{name}(1)\n"
        assert wg.compile(src).kernels[0].max_global_size == LIMIT, name


def test_a_kernel_without_the_limit_writes_the_same_bytes_as_before() -> None:
    k = local_only.program.kernels[0]
    image = wg.Program((k,)).to_bytes()
    assert kernel_entry_field(image) == 0  # the field that was reserved (0) stays 0


def test_the_limit_survives_the_container_and_the_text_round_trip() -> None:
    k = fill.program.kernels[0]
    image = wg.Program((k,)).to_bytes()
    text = wg.disassemble(wg.Program.from_bytes(image))
    assert f".max_global_size {LIMIT}" in text
    assert wg.assemble(text).to_bytes() == image
    # format 1.0 has no such field: its writer refuses the limit, its reader a nonzero value there
    plain = dataclasses.replace(k, accesses=None, params=tuple(dataclasses.replace(p, writable=True) for p in k.params))
    with pytest.raises(wg.WbinError, match=re.escape("format 1.0 cannot record a largest global size")):
        write(wg.Program((plain,)), (1, 0))
    old = bytearray(write(wg.Program((dataclasses.replace(plain, max_global_size=None),)), (1, 0)))
    struct.pack_into("<I", old, 60 + 52, 5)
    with pytest.raises(wg.WbinError, match="reserved field is not zero") as ei:
        wg.Program.from_bytes(bytes(old))
    assert ei.value.offset == 60 + 52
    with pytest.raises(wg.AsmError, match=re.escape("max_global_size must be 1..4294967295")):
        wg.assemble(".kernel k\n.max_global_size 0\n    ret\n")


def test_check_threads_names_the_kernel_the_launch_and_the_limit() -> None:
    k = fill.program.kernels[0]
    check_threads((LIMIT, 1, 1), (1, 1, 1), k)  # the largest launch it is correct for
    check_threads((1, 1, 1), (1, 1, 1), k)
    with pytest.raises(wg.WaveError, match=REFUSED):
        check_threads((HUGE, 1, 1), (256, 1, 1), k)
    with pytest.raises(wg.WaveError, match="2147483648 threads along axis y"):
        check_threads((1, 1 << 31, 1), (1, 1, 1), k)
    # unsigned ids: only the ISA's limit
    check_threads((HUGE, 1, 1), (256, 1, 1), fill_u32.program.kernels[0])
    with pytest.raises(wg.WaveError, match="more than 2\\*\\*32"):
        check_threads((1 << 32, 1, 1), (2, 1, 1), fill_u32.program.kernels[0])


@pytest.fixture
def no_memory_image(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if a launch gets as far as building a memory image."""
    import wavegpu.emulator.launch as emu_launch
    import wavegpu.runtime.call as rk

    def refuse(*a: object, **kw: object) -> None:
        raise AssertionError("a memory image was built before the launch was refused")

    monkeypatch.setattr(emu_launch, "new_memory", refuse)
    monkeypatch.setattr(rk, "pack", refuse)


@pytest.mark.parametrize("device", ["emulator", "opencl", "sycl", "cuda", "amdgcn-sim"])
def test_wg_launch_refuses_on_every_device(device: str, no_memory_image: None) -> None:
    k = fill.program.kernels[0]
    with pytest.raises(wg.WaveError, match=REFUSED):
        wg.launch(k, device=device, grid=HUGE, workgroup=256, memory=64, args=(0, 0))


def test_emulate_refuses_before_building_memory(no_memory_image: None) -> None:
    with pytest.raises(wg.WaveError, match=REFUSED):
        wg.emulate(fill.program, grid=HUGE, workgroup=256, memory=64, args=(0, 0))


def test_kernel_calls_refuse_with_host_and_device_arrays(no_memory_image: None) -> None:
    out = np.zeros(16, np.float32)
    with pytest.raises(wg.WaveError, match=REFUSED):
        fill(out, 0, grid=HUGE, workgroup=256)
    with pytest.raises(wg.WaveError, match=REFUSED):
        fill.configure(grid=HUGE, workgroup=256, device="opencl")(out, 0)
    d = wg.to_device(out)
    with pytest.raises(wg.WaveError, match=REFUSED):
        fill(d, 0, grid=HUGE, workgroup=256)
    assert not out.any() and not d.copy_to_host().any()
    ts = wg.load_kernels(SOURCES["typescript"][0], lang="typescript")
    with pytest.raises(wg.WaveError, match=REFUSED):
        ts.fill(out, 0, grid=HUGE, workgroup=256)


def test_the_command_line_refuses(tmp_path: Path) -> None:
    src = tmp_path / "fill.py"
    src.write_text(PY_FILL)
    binary = tmp_path / "fill.wbin"
    assert run_wave("compile", str(src), "-o", str(binary)).returncode == 0
    for r in (
        run_wave("run", str(binary), "--grid", str(HUGE), "--workgroup", "256", "out=zeros:16", "n=0"),
        run_wave("run", str(src), "--grid", str(HUGE), "--workgroup", "256", "out=zeros:16", "n=0"),
        run_emu(str(binary), "--grid", str(HUGE), "--workgroup", "256", "--device-memory", "64"),
    ):
        assert r.returncode != 0
        assert REFUSED.search(" ".join(r.stderr.split())), r.stderr
        assert "Traceback" not in r.stderr
