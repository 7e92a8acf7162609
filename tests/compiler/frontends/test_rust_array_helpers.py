"""Rust per-thread arrays passed to helpers and closures by reference (issue 24): `&mut [f32; N]`,
`&[f32; N]`, `&mut [[f32; N]; M]`, a slice parameter given an array, on the emulator's two engines
against NumPy (rust/array_helpers.rs, which rustc also checks: test_rust_rustc.py). The helper
reads and writes the caller's array: registers when every index folds after inlining and
unrolling (no local-memory row in the .wbin), local memory with the range check otherwise. Wrong
array arguments are refused at the place as rustc refuses them (test_rust_rustc.py runs rustc on
the same kernels)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import wavegpu as wg
from wavegpu.isa.vocabulary import Op

HERE = Path(__file__).parent
FILE = HERE / "rust" / "array_helpers.rs"
ENGINES = ("numpy", "compiled")


def local_rows(prog: wg.Program, kernel: str) -> int:
    """Local-memory loads and stores in the kernel's code (read from the ISA rows, not text)."""
    k = next(k for k in prog.kernels if k.name == kernel)
    return sum(1 for i in k.instructions if i.spec.space == "local" and i.spec.op in (Op.LD, Op.ST))


@pytest.fixture(scope="module")
def kernels() -> object:
    return wg.load_kernels(FILE)


@pytest.mark.parametrize("opt", [0, 2])
def test_a_tile_passed_to_helpers_stays_in_registers(opt: int) -> None:
    prog = wg.compile(str(FILE), opt=opt)
    assert local_rows(prog, "tile") == 0 and prog.kernels[0].local_memory == 0
    pick = next(k for k in prog.kernels if k.name == "pick")
    assert local_rows(prog, "pick") > 0 and pick.local_memory > 0  # `twice(&mut t, sel[i])`: a run-time index


@pytest.mark.parametrize("engine", ENGINES)
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_the_register_tile_against_numpy(kernels: object, engine: str, data: st.DataObject) -> None:
    m, k, n = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 6)), data.draw(st.integers(1, 3))
    floats = st.integers(-8, 8).map(float)  # small integers: every sum is exact, in any order
    a = data.draw(hnp.arrays(np.float32, (4 * m, k), elements=floats))
    b = data.draw(hnp.arrays(np.float32, (k, 4 * n), elements=floats))
    c = np.zeros((4 * m, 4 * n), np.float32)
    kernels.tile(a, b, c, k, n, grid=(1, m), workgroup=(n, 1), engine=engine)  # type: ignore[attr-defined]
    np.testing.assert_array_equal(c, a @ b)


def _pick_reference(x: np.ndarray, sel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    f = np.float32
    t = x.reshape(-1, 4).copy()
    whole = x.sum(dtype=f) + t.sum(axis=1, dtype=f)
    t[np.arange(len(sel)), sel] += f(3)
    t *= f(10)
    return t.sum(axis=1, dtype=f) + t[:, 0], whole


@pytest.mark.parametrize("engine", ENGINES)
def test_helpers_and_closures_write_the_callers_array(kernels: object, engine: str) -> None:
    x = np.arange(32, dtype=np.float32) - 7
    sel = np.array([0, 1, 2, 3, 3, 2, 1, 0], np.uint32)
    o, whole = np.zeros(8, np.float32), np.zeros(8, np.float32)
    kernels.pick(x, sel, o, whole, grid=1, workgroup=8, engine=engine)  # type: ignore[attr-defined]
    want_o, want_whole = _pick_reference(x, sel)
    np.testing.assert_array_equal(o, want_o)
    np.testing.assert_array_equal(whole, want_whole)


@pytest.mark.parametrize("engine", ENGINES)
def test_an_out_of_range_index_in_a_helper_traps(kernels: object, engine: str) -> None:
    x = np.zeros(32, np.float32)
    sel = np.array([0, 1, 2, 3, 4, 2, 1, 0], np.uint32)  # t[4] of a [f32; 4], inside `bump` (line 57)
    o, whole = np.zeros(8, np.float32), np.zeros(8, np.float32)
    with pytest.raises(wg.WaveError) as e:
        kernels.pick(x, sel, o, whole, grid=1, workgroup=8, engine=engine)  # type: ignore[attr-defined]
    assert "thread (4, 0, 0)" in str(e.value) and "array_helpers.rs:57:5" in str(e.value)
    assert not o.any()  # the run trapped: nothing was copied back


def test_a_constant_index_out_of_range_in_a_helper_is_a_compile_error() -> None:
    src = FILE.read_text().replace("twice(&mut t, sel[i] as usize)", "twice(&mut t, 5)")
    with pytest.raises(wg.CompileError) as e:
        wg.compile(src, lang="rust")
    (d,) = e.value.diagnostics
    assert (
        "index 5 is out of range for per-thread array" in d.message and d.span.line == 57
    )  # in `bump`, with notes at the calls


REFUSED = {  # the body of a kernel `k(o: &mut [f32])` -> (line, column, message); rustc refuses each too
    "let mut t = [0.0f32; 4]; acc(&mut t, 1.0); o[0] = t[0];": (
        9, 34, "mismatched types: expected `&mut [f32; 8]`, found `&mut [f32; 4]`"),
    "let t = [0.0f32; 8]; acc(&mut t, 1.0); o[0] = t[0];": (
        9, 30, "cannot borrow `t` as mutable, as it is not declared as mutable"),
    "let mut t = [0.0f32; 8]; acc(&t, 1.0); o[0] = t[0];": (
        9, 34, "types differ in mutability: expected `&mut [f32; 8]`, found `&[f32; 8]`"),
    "let mut t = [0.0f32; 8]; acc(t, 1.0); o[0] = t[0];": (
        9, 34, "mismatched types: expected `&mut [f32; 8]`, found `[f32; 8]`: borrow it, `&mut t`"),
    "let mut t = [0u32; 8]; acc(&mut t, 1.0); o[0] = t[0] as f32;": (
        9, 32, "mismatched types: expected `&mut [f32; 8]`, found `&mut [u32; 8]`"),
    "acc(o, 1.0);": (9, 9, "`acc` takes `&mut [f32; 8]`, found a slice `&mut [f32]`"),
    "let mut t = [[0.0f32; 8]; 2]; o[0] = sum(&t);": (
        9, 46, "mismatched types: expected `&[f32]`, found `&[[f32; 8]; 2]`"),
    "let mut t = [0.0f32; 8]; w(&t); o[0] = t[0];": (
        5, 22, "cannot assign to `t[0]`, which is behind a `&` reference"),
    "let mut t = [0.0f32; 8]; p(&t); o[0] = t[0];": (
        6, 26, "types differ in mutability: expected `&mut [f32; 8]`, found `&[f32; 8]`"),
}  # fmt: skip
HEAD = (
    "use wave::*;\nfn acc(t: &mut [f32; 8], v: f32) { t[0] += v; }\nfn sum(t: &[f32]) -> f32 { t[1] }\n"
    "fn r(t: &[f32; 8]) -> f32 { t[1] }\nfn w(t: &[f32; 8]) { t[0] = 1.0; }\nfn p(t: &[f32; 8]) { acc(t, 1.0); }\n"
)


def refused_kernel(body: str) -> str:
    return HEAD + "#[wave::kernel]\npub fn k(o: &mut [f32]) {\n    " + body + "\n}\n"


@pytest.mark.parametrize("body", sorted(REFUSED))
def test_wrong_array_arguments_are_refused_at_the_place_once(body: str) -> None:
    line, col, message = REFUSED[body]
    with pytest.raises(wg.CompileError) as e:
        wg.compile(refused_kernel(body), lang="rust")
    (d,) = e.value.diagnostics
    assert message in d.message and (d.span.line, d.span.col) == (line, col), (d.message, d.span)


@pytest.mark.parametrize("engine", ENGINES)
def test_helpers_and_closures_declare_their_own_arrays(kernels: object, engine: str) -> None:
    """Each call of `weighted` has its own `t` (and the closure its own `u`), in registers."""
    prog = wg.compile(str(FILE))
    assert local_rows(prog, "own") == 0 and next(k for k in prog.kernels if k.name == "own").local_memory == 0
    x = np.arange(32, dtype=np.float32) - 5
    o = np.zeros(8, np.float32)
    kernels.own(x, o, grid=1, workgroup=8, engine=engine)  # type: ignore[attr-defined]
    w = np.arange(1, 5, dtype=np.float32)
    np.testing.assert_array_equal(o, (x.reshape(8, 4) * w).sum(1) + (x[:4] * w).sum() + np.float32(12))


def test_another_name_for_a_per_thread_array_is_refused_once() -> None:
    """`let u = &mut t;` (rustc accepts it) is refused here with the reason, once: its uses add nothing."""
    body = "let mut t = [0.0f32; 8]; let u = &mut t; u[0] = 1.0; o[0] = u[1] + t[1];"
    with pytest.raises(wg.CompileError) as e:
        wg.compile(refused_kernel(body), lang="rust")
    (d,) = e.value.diagnostics
    assert "a reference to a per-thread array is passed to a helper (`acc(&mut t)`)" in d.message
    assert (d.span.line, d.span.col) == (9, 38)
