"""Rust iterator chains (issue 24): `.sum()` / `.product()` in any expression position, after
`.map(closure)`, `.copied()` and `.zip(..)`, and `for (a, b) in x.iter().zip(..)`, on the emulator's
two engines against NumPy (rust/iterators.rs, which rustc also checks: test_rust_rustc.py). A sum
is a loop in the elements' order from std's neutral element (-0.0 for floats: the empty sum is
-0.0, as rustc's std gives); where rustc cannot infer the sum's type (an operand of `*`, `+=`, a
comparison) the turbofish is needed here too."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import wavegpu as wg

HERE = Path(__file__).parent
ENGINES = ("numpy", "compiled")


@pytest.fixture(scope="module")
def kernels() -> object:
    return wg.load_kernels(HERE / "rust" / "iterators.rs")


def reference(x: np.ndarray, y: np.ndarray, n: int) -> np.ndarray:
    f = np.float32
    out = np.zeros((n, 12), f)
    for i in range(n):
        t = x[i : i + 4]
        k = min(len(x) - i, len(y) - 1)
        out[i] = [
            x[i:].sum(),
            x[:i].sum() ** 2,
            f(2) * x.sum() + f(1),
            f(1) + (y * f(2)).sum(),
            (x * y).sum(),
            np.prod(x[i : i + 3] + f(1)),
            f(1) if x[:i].sum() > 10 else f(0),
            x.sum() + ((y[i:] * f(0.5)).sum() + (y[0] + y[i + 1])),
            (t * f(3) - f(1)).sum() + t.sum(),
            (x[i:][:k] - y[1:][:k]).sum(),
            f(-0.0),
            np.sqrt((y * y).sum()),
        ]
    return out


@pytest.mark.parametrize("engine", ENGINES)
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_sums_products_maps_and_zips_against_numpy(kernels: object, engine: str, data: st.DataObject) -> None:
    n = data.draw(st.integers(1, 8))
    small = st.integers(-4, 4).map(float)  # small integers: every sum and product is exact, in any order
    x = data.draw(hnp.arrays(np.float32, n + 4, elements=small))
    y = data.draw(hnp.arrays(np.float32, n + 4, elements=small))
    o = np.zeros(n * 12, np.float32)
    kernels.sums(x, y, o, n, grid=1, workgroup=8, engine=engine)  # type: ignore[attr-defined]
    got, want = o.reshape(n, 12), reference(x, y, n)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))  # -0.0: the empty sum, a product with -0.0


NEEDS_TYPE = ["o[0] = 2.0 * x.iter().sum();", "let mut s = 0.0f32; s += x.iter().sum(); o[0] = s;",
              "if x.iter().sum() > 0.0 { o[0] = 1.0; }", "let s = x.iter().map(|v| v * 2.0).sum(); o[0] = s * 2.0;"]  # fmt: skip


def kernel(body: str) -> str:
    return "use wave::*;\n#[wave::kernel]\npub fn k(x: &[f32], y: &[f32], o: &mut [f32]) {\n    " + body + "\n}\n"


@pytest.mark.parametrize("body", NEEDS_TYPE)
def test_a_sum_whose_type_rustc_cannot_infer_needs_the_turbofish(body: str) -> None:
    with pytest.raises(wg.CompileError) as e:
        wg.compile(kernel(body), lang="rust")
    (d,) = e.value.diagnostics
    assert d.message.startswith("type annotations needed") and d.span.line == 4
    fixed = body.replace(".sum()", ".sum::<f32>()")
    assert wg.compile(kernel(fixed), lang="rust").kernels


@pytest.mark.parametrize("use", ["o[0] = s;", "let t: f32 = s; o[0] = t;"])
def test_an_unannotated_sum_takes_the_type_its_later_use_gives(use: str) -> None:
    """`let s = x.iter().sum(); o[0] = s;`: rustc infers `s: f32` from the assignment (so do we)."""
    x = np.arange(5, dtype=np.float32)
    o = np.zeros(1, np.float32)
    src = kernel("let s = x.iter().map(|v| v * 2.0).sum();\n    " + use)
    wg.load_kernels(src, lang="rust").k(x, x, o, grid=1, workgroup=1)
    assert o[0] == 20.0


REFUSED = {
    "o[0] = x.iter().zip(y.iter()).sum::<f32>();": "a sum of pairs: `.map(|(a, b)| a * b)` first",
    "o[0] = x.iter().map(|v| *v as u32).sum::<f32>() as f32;": "a sum of u32 values is a u32",
    "o[0] = x.iter().sum::<u32>() as f32;": "a sum of &f32 values is a f32",
    "for (a, b, c) in x.iter().zip(y.iter()) { o[0] = *a + *b + *c; }": "each trip gives a pair `(a, b)`",
}


@pytest.mark.parametrize("body", sorted(REFUSED))
def test_refused_chains_say_why_once(body: str) -> None:
    with pytest.raises(wg.CompileError) as e:
        wg.compile(kernel(body), lang="rust")
    (d,) = e.value.diagnostics
    assert REFUSED[body] in d.message, d.message


@pytest.mark.parametrize("engine", ENGINES)
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_sums_over_ranges_against_numpy(kernels: object, engine: str, data: st.DataObject) -> None:
    n = data.draw(st.integers(1, 6))
    small = st.integers(-4, 4).map(float)
    a = data.draw(hnp.arrays(np.float32, (n, n), elements=small))
    b = data.draw(hnp.arrays(np.float32, (n, n), elements=small))
    c = np.zeros((n, n), np.float32)
    ints = np.zeros(3, np.int32)
    kernels.matmul(a, b, c, ints, n, grid=(1, 1), workgroup=(n, n), engine=engine)  # type: ignore[attr-defined]
    np.testing.assert_array_equal(c, a @ b)
    assert ints.tolist() == [120, 18, int(a.reshape(-1)[:n].astype(np.int32).sum())]
