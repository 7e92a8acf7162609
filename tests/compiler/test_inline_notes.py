"""Diagnostics found after inlining (issue 24 point 1): a constant per-thread-array index out of
range, known only once a helper's parameter is a constant at its call, is reported in MIR at the
helper's line with a note at every call that led there, innermost first, in all four languages
(Span.calls, set by compiler/inline.py); and a Python helper's own wg.private_array is its own
per call."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import wavegpu as wg
from wavegpu.runtime.sources import load_kernels

SOURCES = {
    "k.py": """import wavegpu as wg


def pick(v: wg.f32, k: wg.u32) -> wg.f32:
    t = wg.private_array(wg.f32, 4)
    t[k] = v
    return t[0]


def outer(v: wg.f32) -> wg.f32:
    return pick(v, K)


@wg.kernel
def k(o: wg.f32[:]):
    o[0] = outer(o[1])
""",
    "k.rs": """fn pick(v: f32, k: usize) -> f32 {
    let mut t = [0.0f32; 4];
    t[k] = v;
    t[0]
}

fn outer(v: f32) -> f32 {
    pick(v, K)
}

#[wave::kernel]
pub fn k(o: &mut [f32]) {
    o[0] = outer(o[1]);
}
""",
    "k.cpp": """#include "wave.hpp"
inline float pick(float v, uint32_t k) {
    float t[4] = {};
    t[k] = v;
    return t[0];
}
inline float outer(float v) {
    return pick(v, K);
}
[[wave::kernel]] void k(float* o) {
    o[0] = outer(o[1]);
}
""",
    "k.ts": """function pick(v: number, k: number): number {
    const t = new Float32Array(4);
    t[k] = v;
    return t[0];
}
function outer(v: number): number {
    return pick(v, K);
}
/** @kernel */
export function k(o: Float32Array): void {
    o[0] = outer(o[1]);
}
""",
}


def _write(tmp_path: Path, name: str, k: int) -> Path:
    p = tmp_path / name
    p.write_text(SOURCES[name].replace("pick(v, K)", f"pick(v, {k})"))
    return p


def _line(text: str, part: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if part in line)


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_an_error_found_after_inlining_has_notes_at_the_calls(tmp_path: Path, name: str) -> None:
    p = _write(tmp_path, name, 5)
    text = p.read_text()
    with pytest.raises(wg.CompileError) as e:
        wg.compile(str(p))
    (d,) = e.value.diagnostics
    assert "index 5 is out of range for per-thread array" in d.message
    assert d.span is not None and (d.span.line, d.span.col) == (_line(text, "t[k] = v"), 7)
    notes = [(n.severity, n.message, n.span.line if n.span else 0) for n in d.notes]
    assert notes == [
        ("note", "in `pick`, inlined from this call", _line(text, "pick(v, 5)")),
        ("note", "in `outer`, inlined from this call", _line(text, "outer(o[1])")),
    ]
    assert str(e.value).count("note: in `") == 2  # the rendered message shows them


@pytest.mark.parametrize("name", sorted(SOURCES))
@pytest.mark.parametrize("k", [0, 2])
def test_the_same_kernels_in_range_run(tmp_path: Path, name: str, k: int) -> None:
    """In range, each call's per-thread array is its own (zeros): t[0] is the value or 0."""
    o = np.array([0.0, 3.5], np.float32)
    load_kernels(_write(tmp_path, name, k)).k(o, grid=(1,), workgroup=(1,))
    assert o[0] == (3.5 if k == 0 else 0.0)


def test_a_python_helper_private_array_is_its_own_per_call(tmp_path: Path) -> None:
    p = tmp_path / "k2.py"
    p.write_text(
        """import wavegpu as wg


def acc(v: wg.f32) -> wg.f32:
    t = wg.private_array(wg.f32, 2)
    t[0] = t[0] + v
    t[1] = t[1] + t[0]
    return t[1]


@wg.kernel
def k(o: wg.f32[:]):
    o[0] = acc(o[1]) + acc(o[1])
"""
    )
    o = np.array([0.0, 2.0], np.float32)
    load_kernels(p).k(o, grid=(1,), workgroup=(1,))
    assert o[0] == 4.0  # 2 + 2: the second call starts from zeros again
