"""The Rust toolchain's example kernels (COMPAT.md, end) compile unchanged, record the 256-thread
workgroup that toolchain records in every binary, and give its CI's answer through `wave-emu`
run on the binary alone (the workgroup coming from the binary, as that CI runs them)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import wavegpu as wg
from wavegpu.compiler.builtins import TOOLCHAIN_WORKGROUP
from wavegpu.compiler.frontends import FRONTENDS

HERE = Path(__file__).resolve().parent / "compat"
SOURCES = {"python": "vector_add.py", "rust": "vector_add.rs", "cpp": "vector_add.cpp", "typescript": "vector_add.ts"}


@pytest.mark.parametrize("lang", sorted(SOURCES))
def test_toolchain_kernel_records_its_workgroup_and_runs_from_the_binary(lang: str) -> None:
    if lang not in FRONTENDS:
        pytest.fail(f"no {lang} frontend registered: every language of LANGUAGES has one")
    prog = wg.compile(HERE / SOURCES[lang])
    (k,) = prog.kernels
    assert k.workgroup_size == TOOLCHAIN_WORKGROUP
    n = 300
    a = np.arange(512, dtype=np.float32)
    b = np.full(512, 0.5, np.float32)
    out = np.zeros(512, np.float32)
    # the toolchain's thread_id() is the id within the workgroup: two 256-thread groups write 0..255
    wg.load_kernels(HERE / SOURCES[lang]).vector_add(a, b, out, n, grid=2)
    assert np.array_equal(out[:256], a[:256] + 0.5) and not out[256:].any()


@pytest.mark.parametrize("lang", sorted(SOURCES))
def test_toolchain_ci_runs_the_binary_with_grid_1_and_the_recorded_workgroup(lang: str, tmp_path: Path) -> None:
    """That toolchain's CI: `wave compile` the example, then `wave-emu --grid 1,1,1` with no
    workgroup given (the binary's decides): all 256 outputs, not the default 32 threads' worth."""
    from cli_helpers import run_emu, run_wave

    wbin = tmp_path / "k.wbin"
    r = run_wave("compile", str(HERE / SOURCES[lang]), "-o", str(wbin))
    assert r.returncode == 0, r.stderr
    n = 256
    args = ["--grid", "1,1,1", "--fill-iota", "0:f32:256", "--fill-iota", "1024:f32:256:2"]
    args += ["--fill-zero", "2048:f32:256", "--set-reg", "r0:0", "--set-reg", "r1:1024", "--set-reg", "r2:2048"]
    args += ["--set-reg", f"r3:{n}", "--dump-f32", "2048:256"]
    r = run_emu(str(wbin), *args)
    assert r.returncode == 0, r.stderr
    got = np.array([float(x) for x in r.stdout.split()[:256]], np.float32)
    assert np.array_equal(got, np.arange(256, dtype=np.float32) * 3), got


def test_python_toolchain_dialect_is_only_the_bare_spelling() -> None:
    """`wg.thread_id()` is our own dialect's axis 0 (no workgroup recorded); the toolchain's bare
    `thread_id()` (or `wave.thread_id()`) records its 256, unless the kernel names its own."""
    ours = "import wavegpu as wg\n@wg.kernel\ndef k(o: wg.u32[:]):\n    o[wg.thread_id()] = 1\n"
    assert wg.compile(ours).kernels[0].workgroup_size is None
    theirs = "import wave\n@wave.kernel\ndef k(o: wave.u32[:]):\n    o[wave.thread_id()] = 1\n"
    assert wg.compile(theirs).kernels[0].workgroup_size == TOOLCHAIN_WORKGROUP
    own = "from wave import kernel, thread_id\n@kernel(workgroup=64)\ndef k(o: u32[:]):\n    o[thread_id()] = 1\n"
    assert wg.compile(own).kernels[0].workgroup_size == (64, 1, 1)


def test_thread_id_imported_from_wavegpu_is_ours(tmp_path: Path) -> None:
    """`from wavegpu import thread_id` binds our builtin: a bare call of it records nothing, in
    source text and in a decorated function alike."""
    text = "from wavegpu import kernel, thread_id, u32\n@kernel\ndef k(o: u32[:]):\n    o[thread_id()] = 1\n"
    assert wg.compile(text).kernels[0].workgroup_size is None
    p = tmp_path / "ours_mod.py"
    p.write_text(text)
    import importlib.util

    spec = importlib.util.spec_from_file_location("ours_mod", p)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.k.program.kernels[0].workgroup_size is None
    out = np.zeros(64, np.uint32)
    module.k(out, grid=1, workgroup=64)  # any workgroup: none was recorded
    assert out.all()


def test_axis_given_records_nothing() -> None:
    """A kernel that names the axis (`thread_id(0)`) is in our own dialect: no workgroup recorded."""
    if "rust" not in FRONTENDS:
        pytest.fail("no rust frontend registered")
    src = "#[kernel]\nfn k(out: &mut [u32]) {\n    let i = thread_id(0);\n    out[i as usize] = i;\n}\n"
    (k,) = wg.compile(src, lang="rust").kernels
    assert k.workgroup_size is None
