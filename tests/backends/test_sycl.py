"""The SYCL backend executed by Intel's run-time SYCL compiler (intel-sycl-rt, installed by
`make test-sycl`) on the CPU device: the emulator's results bit for bit, as for OpenCL."""

from __future__ import annotations

import dataclasses
import os
import stat
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import wavegpu as wg
from wavegpu.backends import render
from wavegpu.backends.cstyle import SYCL, coverage
from wavegpu.isa import ROWS
from wavegpu.isa.semantics import SEMANTICS
from wavegpu.runtime import sycl

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "emulator"))
import test_differential as D
import test_opencl as O

OK, WHY = sycl.available()
needs_sycl = pytest.mark.skipif(not OK, reason=f"no SYCL runtime: {WHY}")
NO_CONST = np.zeros(0, np.uint8)


def test_sub_group_sizes_it_lacks_are_refused() -> None:
    k = O._example("vector_add.wave").kernels[0]
    with pytest.raises(wg.WaveError, match="sub-groups of 12 lanes"):
        render(k, "sycl", wave_width=12)


@needs_sycl
def test_every_value_row_matches_the_emulator() -> None:
    """All value rows in one translation unit (one run-time compile), one launch each."""
    cov = coverage(SYCL())
    rows = [r for r in ROWS if r.key in SEMANTICS and not cov[r.key].startswith("unsupported")]
    prelude = SYCL().prelude()
    parts, launches, expect = [prelude], [], []
    for i, r in enumerate(rows):
        k = dataclasses.replace(D.row_kernel(r), name=f"row_{i}")
        parts.append(render(k, "sycl", wave_width=32).source[len(prelude) :])
        rng = np.random.default_rng(hash(r.key) & 0xFFFF)
        vals = np.array(O.SPECIALS * 13, np.uint32)[: 32 * 8]
        vals[::3] = rng.integers(0, 2**32, vals[::3].size, dtype=np.uint64).astype(np.uint32)
        mem = vals.view(np.uint8)
        launches.append((k.name, (1, 1, 1), (32, 1, 1), mem, NO_CONST, []))
        expect.append(wg.launch(k, workgroup=32, memory=mem).memory.view(np.uint32))
    outs = sycl.run_many("\n".join(parts), launches)
    bad = []
    for r, a, out in zip(rows, expect, outs):
        b = out.view(np.uint32)
        if r.key in O.APPROX:
            fa, fb = a[::8].view(np.float32), b[::8].view(np.float32)
            ulp = np.abs(a[::8].view(np.int32).astype(np.int64) - b[::8].view(np.int32).astype(np.int64))
            both = np.isfinite(fa) & np.isfinite(fb)
            if not ((ulp[both] <= 2).all() and (np.isnan(fa) == np.isnan(fb)).all()):
                bad.append(r.key)
        elif not np.array_equal(a, b):
            i = np.flatnonzero(a != b)[0]
            bad.append((r.key, hex(a[i]), hex(b[i])))
    assert not bad, bad


@needs_sycl
def test_wave_operations_match_the_emulator() -> None:
    """Every wave operation in divergent code (test_opencl.check_wave_ops) at W = 8 and 64."""
    O.check_wave_ops("sycl", (8, 64), range(2))


@needs_sycl
def test_examples_match_the_emulator() -> None:
    O.check_examples("sycl")


@needs_sycl
@settings(max_examples=8, deadline=None)
@given(st.data())
def test_random_structured_programs_match(data: st.DataObject) -> None:
    O.check_random_program("sycl", data)


@needs_sycl
@pytest.mark.parametrize("opt", [0, 3])
def test_compiled_kernels_match_the_emulator(opt: int) -> None:
    O.check_compiled_kernels("sycl", opt)


@needs_sycl
def test_kernel_functions_and_devices() -> None:
    assert "sycl" in wg.devices()
    n = 300
    a = np.arange(n, dtype=np.float32)
    outs = []
    for device in ("emulator", "sycl"):
        y = np.ones(n, np.float32)
        _saxpy()(np.float32(0.5), a, y, n, grid=2, workgroup=256, device=device)
        outs.append(y)
    assert np.array_equal(outs[0], outs[1])


def _saxpy():  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "compiler"))
    import kernels as K

    return K.saxpy


@needs_sycl
def test_a_compile_error_is_reported() -> None:
    with pytest.raises(wg.WaveError, match=r"(?s)SYCL device failed.*undeclared identifier"):
        sycl.run_many(SYCL().prelude() + "\nvoid f() { nope(); }\n", [])


def test_both_forms_share_one_body() -> None:
    """The classic form of the backends document (local_accessor, reqd_sub_group_size, a kernel
    lambda submitted by wv_launch_<name>) and the free-function form call the same body."""
    src = wg.translate(O._example("sgemm_tiled.wave"), "sycl", wave_width=16)
    assert "static inline void wv_body_sgemm_tiled(sycl::nd_item<3> it_, uchar* lmem," in src
    assert "inline sycl::event wv_launch_sgemm_tiled(sycl::queue& q, sycl::range<3> grid," in src
    assert "sycl::local_accessor<ulong, 1> lmem_(sycl::range<1>(256), h);" in src
    assert "[[sycl::reqd_sub_group_size(16)]]" in src and "syclex::sub_group_size<16>" in src
    assert "static syclex::work_group_static<ulong[256]> lmem_;" in src
    assert src.count("wv_body_sgemm_tiled(") == 3  # defined, called by each form
    assert "sycl::bit_cast<float>" in src and "sycl::atomic_ref<" in src
    no_local = wg.translate(O._example("vector_add.wave"), "sycl")
    assert "local_accessor" not in no_local and "wv_body_vector_add(it_, nullptr, mem, cmem" in no_local


@needs_sycl
def test_the_classic_form_is_compiled_as_a_device_kernel() -> None:
    """Every source the SYCL device builds holds both forms, so the run-time compiler checks the
    kernel lambda as device code: code a kernel may not contain, put in the lambda, is refused."""
    src = wg.translate(O._example("sgemm_tiled.wave"), "sycl")
    line = "            wv_body_sgemm_tiled(it_, (uchar*)&lmem_[0], mem, cmem, wv_glo, wv_glast, wv_clo, wv_clast, wv_err, a0, a1, a2, a3);\n"
    assert line in src
    bad = src.replace(line, line + "            if (a0 == 7u) throw 1;\n")
    with pytest.raises(wg.WaveError, match=r"(?s)SYCL kernel cannot use exceptions"):
        sycl.run_many(bad, [])


@needs_sycl
def test_atomics_give_the_same_totals() -> None:
    O.check_atomics("sycl")


@needs_sycl
def test_mma_matches_the_emulator() -> None:
    O.check_mma("sycl")


def _vector_add(tag: str) -> tuple[str, list[sycl.Launch], np.ndarray]:
    """A source of its own (tag keeps it apart from live host processes of other tests), its
    launch and the expected memory."""
    k = O._example("vector_add.wave").kernels[0]
    src = render(k, "sycl", wave_width=32)
    n = 300
    mem = np.zeros(3 * n, np.float32)
    mem[:n], mem[n : 2 * n] = np.arange(n), 2 * np.arange(n)
    u8 = mem.view(np.uint8)
    want = wg.launch(k, grid=2, workgroup=256, memory=u8, args=[0, 4 * n, 8 * n, n]).memory
    assert np.array_equal(want.view(np.float32)[2 * n :], 3 * np.arange(n))
    launch = (src.entry, (2, 1, 1), (256, 1, 1), u8, NO_CONST, [0, 4 * n, 8 * n, n])
    return f"{src.source}\n// {tag}\n", [launch], want


@needs_sycl
def test_the_host_program_lives_in_private_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "cache"
    monkeypatch.setenv("WAVEGPU_CACHE_DIR", str(root))
    exe = sycl.runner()
    folders = [root, *[p for p in exe.parents if root in p.parents]]
    assert {p: oct(stat.S_IMODE(os.stat(p).st_mode)) for p in folders} == dict.fromkeys(folders, "0o700")
    assert exe.parent.parent == root / "sycl"
    assert all(os.stat(p).st_uid == os.geteuid() for p in [*folders, exe])


@needs_sycl
def test_a_cache_others_may_write_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "cache"
    (root / "sycl").mkdir(parents=True)
    os.chmod(root / "sycl", 0o777)
    monkeypatch.setenv("WAVEGPU_CACHE_DIR", str(root))
    with pytest.raises(wg.WaveError, match=f"{root / 'sycl'}: writable by group or others"):
        sycl.runner()
    assert os.listdir(root / "sycl") == []


@needs_sycl
def test_a_program_planted_in_place_of_the_host_program_never_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Replacing the cached host program (as anything else running as the user could) makes the
    next start rebuild it: the bytes started are the bytes built."""
    monkeypatch.setenv("WAVEGPU_CACHE_DIR", str(tmp_path / "cache"))
    marker = tmp_path / "planted-ran"
    exe = sycl.runner()
    exe.write_text(f"#!/bin/sh\ntouch {marker}\necho ready\nexec cat >/dev/null\n")
    src, launches, want = _vector_add(str(tmp_path))
    try:
        (out,) = sycl.run_many(src, launches)
    finally:
        sycl._close_all()
    assert not marker.exists()
    assert np.array_equal(out, want)


@needs_sycl
def test_a_refused_host_program_is_rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A runner refused because its digest record may be written by others, or because another
    user owns it, is rebuilt in a fresh private folder (issue 28.6: device="sycl" stayed broken;
    each refusal alone: tests/runtime/test_files.py)."""
    monkeypatch.setenv("WAVEGPU_CACHE_DIR", str(tmp_path / "cache"))
    exe = sycl.runner()
    record = exe.parent / "sha256"
    os.chmod(record, 0o666)
    if os.geteuid() == 0:
        os.chown(exe, 65534, 65534)
    assert sycl.runner() == exe
    assert os.stat(exe).st_uid == os.geteuid() and stat.S_IMODE(os.stat(record).st_mode) == 0o600
    src, launches, want = _vector_add(str(tmp_path))
    try:
        (out,) = sycl.run_many(src, launches)
    finally:
        sycl._close_all()
    assert np.array_equal(out, want)


@needs_sycl
def test_the_host_program_finds_the_cpu_beside_the_users_icd_settings(tmp_path: Path) -> None:
    """The host process gets Intel's library through OCL_ICD_FILENAMES (added to the user's
    value); the user's OCL_ICD_VENDORS is passed on unchanged and no longer keeps the CPU away."""
    import subprocess

    probe = (
        "import sys, numpy as np; sys.path[:0] = sys.argv[1:]; import test_sycl as T, wavegpu.runtime.sycl as S\n"
        "src, launches, want = T._vector_add('user settings')\n"
        "(out,) = S.run_many(src, launches)\n"
        "print(np.array_equal(out, want))\n"
    )
    (tmp_path / "vendors").mkdir()
    env = {**os.environ, "OCL_ICD_VENDORS": str(tmp_path / "vendors"), "OCL_ICD_FILENAMES": "/opt/x/libtheirs.so"}
    here = str(Path(__file__).resolve().parent)
    r = subprocess.run(
        [sys.executable, "-c", probe, here, str(Path(here).parent)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0 and r.stdout.strip().endswith("True"), r.stderr[-3000:]


@needs_sycl
def test_the_host_program_is_verified_again_when_it_starts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A replacement made after runner() checked the file, just before the start, is caught by the
    check at the start itself: that start rebuilds instead of running it."""
    monkeypatch.setenv("WAVEGPU_CACHE_DIR", str(tmp_path / "cache"))
    marker = tmp_path / "planted-ran"
    real, calls = sycl.runner, []

    def runner_then_replaced() -> Path:
        exe = real()
        calls.append(exe)
        if len(calls) == 1:
            exe.write_text(f"#!/bin/sh\ntouch {marker}\necho ready\nexec cat >/dev/null\n")
        return exe

    monkeypatch.setattr(sycl, "runner", runner_then_replaced)
    src, launches, want = _vector_add(str(tmp_path))
    try:
        (out,) = sycl.run_many(src, launches)
    finally:
        sycl._close_all()
    assert len(calls) == 2 and not marker.exists()
    assert np.array_equal(out, want)
