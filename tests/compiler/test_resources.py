"""Resource limits checked at compile time: the local arrays of a kernel, together, fit the
device's local memory (LOCAL_MEMORY_SIZE), or the local_array call that crosses it is an error."""

from __future__ import annotations

from pathlib import Path

import pytest

import wavegpu as wg
from cli_helpers import run_wave
from wavegpu.isa.capabilities import EMULATOR

LIMIT = EMULATOR.constants["LOCAL_MEMORY_SIZE"]


def kernel(*arrays: str) -> str:
    """A kernel declaring the local arrays (name, type, count) and using each one."""
    lines = ["import wavegpu as wg", "", "", "@wg.kernel", "def k(x: wg.f32[:]):", "    t = wg.thread_id()"]
    lines += [f"    {a}" for a in arrays]
    for a in arrays:
        name = a.split("=")[0].strip()
        lines.append(f"    {name}[t] = 1")
    lines.append("    x[t] = 2.0")
    return "\n".join(lines) + "\n"


def test_local_arrays_that_exceed_local_memory_together_are_an_error_at_the_crossing_call() -> None:
    half = LIMIT // 8  # f32 elements in half the local memory
    src = kernel(
        f"a = wg.local_array(wg.f32, {half})", f"b = wg.local_array(wg.f32, {half})", "c = wg.local_array(wg.u32, 1)"
    )
    with pytest.raises(wg.CompileError) as ei:
        wg.compile(src, lang="python")
    (d,) = ei.value.diagnostics
    assert d.span is not None and (d.span.line, d.span.col) == (9, 9)
    assert d.span.text.strip() == "c = wg.local_array(wg.u32, 1)"
    assert f"{LIMIT + 4} bytes" in d.message and f"{LIMIT} (LOCAL_MEMORY_SIZE)" in d.message
    assert "local_array 'c'" in d.message


def test_one_array_larger_than_local_memory_is_an_error() -> None:
    src = kernel("big = wg.local_array(wg.f64, 1000000000000)")
    with pytest.raises(wg.CompileError, match=r"local_array 'big' brings .* 8000000000000 bytes") as ei:
        wg.compile(src, lang="python")
    assert ei.value.diagnostics[0].span.line == 7


def test_the_total_counts_the_alignment_of_each_array() -> None:
    """Arrays start at multiples of 8 bytes: a 2-byte array then 65532 bytes need 65540 bytes,
    more than local memory though the sizes alone add up to 65534."""
    src = kernel("h = wg.local_array(wg.f16, 1)", f"a = wg.local_array(wg.f32, {(LIMIT - 4) // 4})")
    with pytest.raises(wg.CompileError, match=f"local_array 'a' brings the kernel's local memory to {LIMIT + 4} bytes"):
        wg.compile(src, lang="python")


def test_exactly_the_whole_local_memory_compiles_and_loads() -> None:
    src = kernel(f"a = wg.local_array(wg.f32, {LIMIT // 8})", f"b = wg.local_array(wg.u32, {LIMIT // 8})")
    prog = wg.compile(src, lang="python")
    assert prog.kernels[0].local_memory == LIMIT
    assert wg.Program.from_bytes(prog.to_bytes()).kernels[0].local_memory == LIMIT


def test_wave_compile_reports_it_with_the_source_line(tmp_path: Path) -> None:
    path = tmp_path / "k.py"
    path.write_text(kernel(f"a = wg.local_array(wg.f32, {LIMIT // 4 + 1})"))
    r = run_wave("compile", str(path), "-o", str(tmp_path / "k.wbin"))
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert f"{path}:7:9: error: local_array 'a' brings the kernel's local memory to {LIMIT + 4} bytes" in r.stderr
    assert f"a = wg.local_array(wg.f32, {LIMIT // 4 + 1})" in r.stderr
    assert not (tmp_path / "k.wbin").exists()
