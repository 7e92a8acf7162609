"""The SDK: @wg.kernel calls, the compile cache (memory and disk), wg.compile, wave compile."""

from __future__ import annotations

from pathlib import Path

import kernels as K
import numpy as np
import pytest

import wavegpu as wg
from cli_helpers import run_wave
from wavegpu.runtime import cache
from wavegpu.runtime import kernel as sdk

EX = Path(__file__).resolve().parents[2] / "examples" / "kernels"


def test_call_copies_written_arrays_back_and_leaves_inputs() -> None:
    x = np.arange(300, dtype=np.float32)
    x.setflags(write=False)  # read-only inputs are fine: only changed arrays are copied back
    y = np.zeros(300, np.float32)
    res = K.saxpy(2.0, x, y, 300, grid=2, workgroup=256)
    assert np.array_equal(y, 2 * x)
    assert res.stats.lane_instructions > 0


def test_arguments_are_checked() -> None:
    with pytest.raises(wg.WaveError, match="missing a required argument"):
        K.saxpy(1.0, np.zeros(4, np.float32), grid=1)
    with pytest.raises(wg.WaveError, match="never converts arrays"):
        K.saxpy(1.0, np.zeros(4, np.complex64), np.zeros(4, np.float32), 4, grid=1)


def test_compile_cache_memory_and_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WAVEGPU_CACHE_DIR", str(tmp_path))

    def forget() -> None:  # the memory cache, and the kernel's own last hit (its file-stamp path)
        cache._MEMORY_CACHE.clear()
        monkeypatch.setattr(K.math_fns, "_hit", None)

    forget()
    calls = []
    real = sdk.compile_cached

    def counting(source: str, options: dict[str, object], build):  # type: ignore[no-untyped-def]
        def b():  # type: ignore[no-untyped-def]
            calls.append(1)
            return build()

        return real(source, options, b)

    monkeypatch.setattr(sdk, "compile_cached", counting)
    p1 = K.math_fns.program
    p2 = K.math_fns.program
    assert p1 is p2 and len(calls) == 1  # memory
    assert len(list(tmp_path.glob("kernels/*.wbin"))) == 1
    forget()
    p3 = K.math_fns.program
    assert len(calls) == 1 and p3 == p1  # disk
    K.math_fns.opt = 0
    try:
        K.math_fns.program  # noqa: B018 - other options, another entry
        assert len(calls) == 2
    finally:
        K.math_fns.opt = 2
    (next(tmp_path.glob("kernels/*.wbin"))).write_bytes(b"garbage")
    forget()
    assert K.math_fns.program == p1  # a damaged entry is rebuilt


def test_compile_sources_paths_and_functions() -> None:
    path = EX / "saxpy.py"
    a = wg.compile(str(path))
    b = wg.compile(path.read_text())
    c = wg.compile(K.saxpy)
    assert a.kernels[0].name == b.kernels[0].name == "saxpy"
    assert c.kernels[0].params[1].kind == "buffer"
    assert a.kernels[0].lines is not None and a.kernels[0].lines[0].file.endswith("saxpy.py")
    with pytest.raises(wg.CompileError, match="unknown source language 'fortran'"):
        wg.compile("subroutine k\nend", lang="fortran")


def test_trap_names_the_python_line() -> None:
    out = np.zeros(4, np.int32)
    x = np.zeros(4, np.int32)
    with pytest.raises(wg.Trap) as ei:
        K.loops(out, 100, grid=1, workgroup=128)  # threads 64.. store past the end of device memory
    assert ei.value.source is not None and "kernels.py:" in ei.value.source
    del x


def test_wave_compile_cli(tmp_path: Path) -> None:
    out = tmp_path / "s.wbin"
    r = run_wave(
        "compile", str(EX / "saxpy.py"), "-o", str(out), "-O3", "--dump-after", "sccp", "--dump-after", "regalloc"
    )
    assert r.returncode == 0, r.stderr
    assert ";; ---- after sccp" in r.stdout and ";; ---- after regalloc" in r.stdout
    assert wg.load(out).kernels[0].name == "saxpy"
    bad = tmp_path / "bad.py"
    bad.write_text("import wavegpu as wg\n\n@wg.kernel\ndef k(x: wg.f32[:]):\n    x[0] = nope\n")
    r = run_wave("compile", str(bad))
    assert r.returncode == 1 and f"{bad}:5:12: error:" in r.stderr and "Traceback" not in r.stderr


def test_passes_are_selectable_by_name(tmp_path: Path) -> None:
    out = tmp_path / "s.wbin"
    r = run_wave("compile", str(EX / "saxpy.py"), "-o", str(out), "--passes", "mem2reg,sccp,dce", "--dump-after", "all")
    assert r.returncode == 0, r.stderr
    stages = [line.split()[-1] for line in r.stdout.splitlines() if line.startswith(";; ---- after")]
    assert stages == ["hir", "mir", "mem2reg", "sccp", "dce", "lir", "regalloc"]
    r = run_wave("compile", str(EX / "saxpy.py"), "-o", str(out), "--passes", "nope")
    assert r.returncode == 1 and "unknown pass" in r.stderr


def test_every_compiler_builtin_also_runs_as_plain_python() -> None:
    """The kernel corpus runs each kernel as Python for its reference (runtime/pyexec.py): every
    name the frontend accepts must exist there, and the other way round."""
    from wavegpu.compiler.builtins import ROWS
    from wavegpu.compiler.frontends import python as fe
    from wavegpu.runtime import pyexec

    rows = [ROWS[name] for name in set(fe.CALLS.values()) | {"powi"}]  # every row the frontend accepts
    accepted = {b.implementation[1] for b in rows if b.implementation[0] == "pyexec"}
    exported = set(pyexec.__all__) - {"python_thread", "static_range"}  # static_range: a loop form
    assert accepted == exported, (accepted - exported, exported - accepted)
    assert all(callable(getattr(pyexec, n)) for n in exported)
