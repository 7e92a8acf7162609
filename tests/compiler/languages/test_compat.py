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
SOURCES = {"rust": "vector_add.rs", "cpp": "vector_add.cpp", "typescript": "vector_add.ts"}


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


def test_axis_given_records_nothing() -> None:
    """A kernel that names the axis (`thread_id(0)`) is in our own dialect: no workgroup recorded."""
    if "rust" not in FRONTENDS:
        pytest.fail("no rust frontend registered")
    src = "#[kernel]\nfn k(out: &mut [u32]) {\n    let i = thread_id(0);\n    out[i as usize] = i;\n}\n"
    (k,) = wg.compile(src, lang="rust").kernels
    assert k.workgroup_size is None
