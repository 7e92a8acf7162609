"""Rust's own spellings on the emulator against NumPy: the std methods of f32, i32 and u32 that are
builtins of the table (rust/std_methods.rs, which rustc also checks: test_rust_rustc.py), with
Rust's meanings where they differ from another row's (f32::signum of zeros, f32::clamp of NaN)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import wavegpu as wg

HERE = Path(__file__).parent
ENGINES = ("numpy", "compiled")  # the emulator's two engines: each idiom runs on both
SPECIAL = [0.0, -0.0, np.nan, np.inf, -np.inf, 0.5, -0.5, 1.5, 2.5, -2.5, 0.49999997, -0.49999997, 3.0, -1e-30]


@pytest.fixture(scope="module")
def kernels() -> object:
    return wg.load_kernels(HERE / "rust" / "std_methods.rs")


def _round_away(v: np.ndarray) -> np.ndarray:
    t = np.trunc(v)
    up = np.abs(v.astype(np.float64) - t) >= 0.5  # exact in f64
    return np.where(up, t + np.copysign(np.float32(1), v), t).astype(np.float32)


def _floats(ks: object, x: np.ndarray, y: np.ndarray, engine: str) -> None:
    n = len(x)
    o = np.zeros(n * 12, np.float32)
    nan = np.zeros(n, np.uint32)
    ks.floats(x, y, o, nan, n, grid=(n + 31) // 32, workgroup=32, engine=engine)  # type: ignore[attr-defined]
    r = o.reshape(n, 12)
    f = np.float32
    with np.errstate(all="ignore"):
        exact = {
            1: x * (x * x),  # square and multiply
            2: _round_away(x),
            3: np.rint(x),
            4: np.trunc(x),
            5: np.where(x < f(-1.5), f(-1.5), np.where(x > f(2.5), f(2.5), x)),  # a NaN stays
            6: np.where(np.isnan(x), x, np.copysign(f(1), x)),  # +-0.0 -> +-1.0
            7: np.fmin(x, y),
            8: np.fmax(x, y),
            10: np.fmin(np.fmax(x, f(-1.5)), f(2.5)),  # the row clamp: a NaN x gives lo
            11: np.trunc(x) + _round_away(y),
        }
        for col, want in exact.items():
            np.testing.assert_array_equal(r[:, col], want.astype(np.float32), err_msg=f"column {col}")
        np.testing.assert_array_equal(np.signbit(r[:, 6]), np.signbit(exact[6]))  # -0.0 gives -1.0
        assert nan.tolist() == np.isnan(x).astype(int).tolist()
        ok = np.isfinite(x) & np.isfinite(y) & (np.abs(y) < 8) & (np.abs(x) > 1e-3) & (np.abs(x) < 1e3)
        _within_the_pow_bound(r[ok, 0], np.abs(x[ok]), y[ok])
        ok = np.isfinite(y) & (y != 0)
        _within_the_pow_bound(r[ok, 9], np.abs(y[ok]), np.full(ok.sum(), 0.5, np.float32))


def _within_the_pow_bound(got: np.ndarray, x: np.ndarray, y: np.ndarray) -> None:
    """pow's documented error bound (docs/compiler.md): 2 + 1.5 * |y * log2|x|| ulps of the
    correctly rounded result."""
    want = (x.astype(np.float64) ** y.astype(np.float64)).astype(np.float32)
    ulp = np.spacing(np.abs(want)).astype(np.float64)
    err = np.abs(got.astype(np.float64) - want.astype(np.float64)) / ulp
    bound = 2 + 1.5 * np.abs(y.astype(np.float64) * np.log2(x.astype(np.float64)))
    assert (err <= bound).all(), (got[err > bound], want[err > bound])


@pytest.mark.parametrize("engine", ENGINES)
def test_float_methods_against_numpy_on_the_special_values(kernels: object, engine: str) -> None:
    x = np.array(SPECIAL, np.float32)
    y = np.array(SPECIAL[::-1], np.float32)
    _floats(kernels, x, y, engine)


@pytest.mark.parametrize("engine", ENGINES)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    hnp.arrays(np.float32, 40, elements=st.floats(width=32, allow_nan=True, allow_infinity=True)),
    hnp.arrays(np.float32, 40, elements=st.floats(-6, 6, width=32)),
)
def test_float_methods_against_numpy(kernels: object, engine: str, x: np.ndarray, y: np.ndarray) -> None:
    _floats(kernels, x, y, engine)


def _ints(ks: object, k: np.ndarray, u: np.ndarray, engine: str) -> None:
    n = len(k)
    oi = np.zeros(n * 6, np.int32)
    ou = np.zeros(n * 6, np.uint32)
    ks.ints(k, u, oi, ou, n, grid=(n + 31) // 32, workgroup=32, engine=engine)  # type: ignore[attr-defined]
    ri, ru = oi.reshape(n, 6), ou.reshape(n, 6)
    k64, u64 = k.astype(np.int64), u.astype(np.int64)

    def wrap_i(v: np.ndarray) -> np.ndarray:
        return (v & 0xFFFFFFFF).astype(np.uint32).view(np.int32)

    def bits(v: np.ndarray) -> tuple[list[int], list[int], list[int]]:
        w = [int(x) & 0xFFFFFFFF for x in v]
        ones = [bin(x).count("1") for x in w]
        lead = [32 - x.bit_length() for x in w]
        trail = [32 if x == 0 else (x & -x).bit_length() - 1 for x in w]
        return ones, lead, trail

    assert ri[:, 0].tolist() == np.sign(k).tolist()
    assert ri[:, 1].tolist() == np.clip(k, -100, 100).tolist()
    assert ri[:, 2].tolist() == wrap_i(k64 * ((k64 * k64) & 0xFFFFFFFF)).tolist()  # wrapping, as release builds
    assert ri[:, 3].tolist() == np.minimum(k, 7).tolist()
    assert ri[:, 4].tolist() == np.maximum(k, -7).tolist()
    assert ri[:, 5].tolist() == wrap_i(np.abs(k64)).tolist()  # i32::MIN.abs() wraps in release builds
    ones, lead, trail = bits(u)
    assert (ru[:, 0].tolist(), ru[:, 1].tolist(), ru[:, 2].tolist()) == (ones, lead, trail)
    ko, kl, kt = bits(k)
    assert ru[:, 3].tolist() == [a + b + c for a, b, c in zip(ko, kl, kt)]
    assert ru[:, 4].tolist() == ((u64 * u64) & 0xFFFFFFFF).tolist()
    assert ru[:, 5].tolist() == np.clip(u, 10, 1000).tolist()


@pytest.mark.parametrize("engine", ENGINES)
def test_int_methods_against_numpy_on_the_edges(kernels: object, engine: str) -> None:
    k = np.array([0, 1, -1, 7, -7, 100, -101, 2**31 - 1, -(2**31), 1290, -1291, 16], np.int32)
    u = np.array([0, 1, 2**32 - 1, 2**31, 8, 9, 10, 1000, 1001, 65536, 0x00F0_0000, 3], np.uint32)
    _ints(kernels, k, u, engine)


@pytest.mark.parametrize("engine", ENGINES)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(hnp.arrays(np.int32, 33), hnp.arrays(np.uint32, 33))
def test_int_methods_against_numpy(kernels: object, engine: str, k: np.ndarray, u: np.ndarray) -> None:
    _ints(kernels, k, u, engine)


# ---- Rust idioms (rust/idioms.rs, which rustc checks too) -------------------------------------------
@pytest.fixture(scope="module")
def idioms() -> object:
    return wg.load_kernels(HERE / "rust" / "idioms.rs")


@pytest.mark.parametrize("engine", ENGINES)
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(hnp.arrays(np.float32, 40, elements=st.floats(-100, 100, width=32)))
def test_per_thread_arrays_unroll_and_rev_against_numpy(idioms: object, engine: str, a: np.ndarray) -> None:
    n = 8
    o = np.zeros(n, np.float32)
    idioms.tiles(a, o, n, grid=1, workgroup=32, engine=engine)  # type: ignore[attr-defined]
    f = np.float32
    i = np.arange(n)
    t = a[(i * 4)[:, None] + np.arange(4)] * np.array([1, 2, 3, 4], f)
    s = np.zeros(n, f)
    for j in (3, 2, 1, 0):
        s = s * f(10) + t[:, j]
    np.testing.assert_array_equal(o, s + (a[3] + t[:, 2]) + f(4))


def _private_kernel(rng: str) -> str:
    return (
        "use wave::*;\n#[wave::kernel]\npub fn k(a: &[f32], o: &mut [f32]) {\n"
        "    let i = global_id(0) as usize;\n    let mut t = [0.0f32; 4];\n"
        f"    for j in {rng} {{ t[j] = a[i * 4 + j]; }}\n    let mut s = 0.0;\n"
        f"    for j in {rng} {{ s += t[j] * (j as f32); }}\n    o[i] = s;\n}}\n"
    )


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("rng", "registers"), [("unroll(0..4)", True), ("0..4", False)])
def test_unroll_keeps_a_per_thread_array_in_registers(rng: str, registers: bool, engine: str) -> None:
    prog = wg.compile(_private_kernel(rng), lang="rust", opt=2)
    local = [line for line in wg.disassemble(prog).splitlines() if ".local" in line]
    assert (prog.kernels[0].local_memory == 0 and not local) is registers
    a = np.arange(32, dtype=np.float32)
    o = np.zeros(8, np.float32)
    wg.load_kernels(_private_kernel(rng), lang="rust").k(a, o, grid=1, workgroup=8, engine=engine)
    np.testing.assert_array_equal(o, a.reshape(8, 4) @ np.arange(4, dtype=np.float32))


def test_unroll_needs_constant_bounds() -> None:
    with pytest.raises(wg.CompileError):
        wg.compile(_private_kernel("unroll(0..4)").replace("unroll(0..4)", "unroll(0..a.len())", 1), lang="rust")


@pytest.mark.parametrize("engine", ENGINES)
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(hnp.arrays(np.float32, 11, elements=st.floats(-10, 10, width=32)))
def test_tuple_let_block_values_if_let_and_from_against_numpy(idioms: object, engine: str, a: np.ndarray) -> None:
    n = 11
    o = np.zeros(n, np.float32)
    flags = np.zeros(n, np.uint32)
    idioms["values"](a, o, flags, n, grid=1, workgroup=32, engine=engine)  # type: ignore[index]
    f = np.float32
    x, y = a * f(2), (a + f(1)) + f(1)
    s = x - y + (x * y + f(1))
    ahead = np.concatenate([a[3:], np.zeros(3, f)])
    s = np.where(np.arange(n) + 3 < n, s + ahead, s - a * f(100))
    np.testing.assert_array_equal(o, s)
    assert flags.tolist() == ((a > 2.5).astype(int) + 2 * (s > 20).astype(int)).tolist()


def _labels_reference(ai: int) -> int:
    count = 0
    for r in range(8):
        c, exit_rows, next_row = 0, False, False
        while True:
            k, exit_cols = 0, False
            while k < 4:
                k += 1
                if (r + c + k) % 7 == ai:
                    next_row = True
                    break
                if r * c * k > 20 + ai:
                    exit_rows = True
                    break
                if c > 3:
                    exit_cols = True
                    break
                count += 1
            if next_row or exit_rows or exit_cols:
                break
            c += 1
        if exit_rows:
            break
        if next_row:
            continue
        count += 100
    return count


@pytest.mark.parametrize("engine", ENGINES)
def test_labelled_break_and_continue_against_a_reference(idioms: object, engine: str) -> None:
    a = np.arange(12, dtype=np.uint32)
    o = np.zeros(12, np.uint32)
    idioms.labels(a, o, 12, grid=1, workgroup=32, engine=engine)  # type: ignore[attr-defined]
    assert o.tolist() == [_labels_reference(int(x)) for x in a]


@pytest.mark.parametrize("engine", ENGINES)
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(hnp.arrays(np.float32, 12, elements=st.integers(-50, 50).map(float)))
def test_iterators_over_slices_and_arrays_against_numpy(idioms: object, engine: str, a: np.ndarray) -> None:
    n = 8  # integers: every sum is exact, in any order
    o = np.zeros(n, np.float32)
    idioms.iterators(a, o, n, grid=1, workgroup=32, engine=engine)  # type: ignore[attr-defined]
    want = [
        sum(a[i + j] * (j + 1) for j in range(4)) + a[0] + a[1] + 6000 + a[i:].sum() * 10000 + a.sum() for i in range(n)
    ]
    np.testing.assert_array_equal(o, np.array(want, np.float32))


@pytest.mark.parametrize("engine", ENGINES)
def test_raw_pointer_kernels_against_numpy(idioms: object, engine: str) -> None:
    x = np.arange(8, dtype=np.float32) - 3
    y = np.linspace(0, 1, 8, dtype=np.float32)
    want = y.copy()
    want[:6] = np.float32(2.5) * x[:6] + y[:6] + x[0]
    idioms.saxpy_ptr(2.5, x, y, 6, grid=1, workgroup=8, engine=engine)  # type: ignore[attr-defined]
    np.testing.assert_array_equal(y, want)
    z = np.zeros(8, np.float32)
    idioms.copy_ptr(x, z, grid=1, workgroup=8, engine=engine)  # type: ignore[attr-defined]
    np.testing.assert_array_equal(z, x)


@pytest.mark.parametrize("opt", [0, 2])
def test_a_loop_bound_temporary_is_not_shared_with_a_store_index(opt: int) -> None:
    o = np.zeros(16, np.float32)
    wg.load_kernels(HERE / "rust" / "idioms.rs", opt=opt).bound(o, 4, grid=1, workgroup=1)
    assert np.flatnonzero(o).tolist() == [1, 3, 5, 7, 9]


REFUSED_ONCE = {  # a refused declaration, then uses of its names: one diagnostic, at the declaration
    "let mut t = [0.0f32; 0]; t[0] = 1.0; o[0] = t[1];": "an array length is a positive constant",
    "let (p, q) = 3; o[0] = p + q;": "a tuple `let` takes a tuple of 2 values",
    "let mut t: [i64; 4] = [0; 4]; t[0] = 1; o[0] = t[0] as f32;": "i64 is not supported",
    "let t = [f16::from_f32(1.0); 4]; o[0] = t[0].to_f32();": "per-thread arrays hold i32, u32, f32 or f64",
    "let (p, q) = (1.0, o[9] + true); o[0] = p + q;": "mismatched types: f32 and bool",
    "let v = { let z = 1.0; z; }; o[0] = v;": "this block has no value",
    "let s = a[1..].iter().sum(); o[0] = s * 2.0;": "type annotations needed",
    "let mut u = 0.0; for v in o.iter() { u += *v; } let w = u32::from(u); o[0] = w as f32;": "From<f32>",
}


@pytest.mark.parametrize("body", sorted(REFUSED_ONCE))
def test_a_refused_declaration_is_reported_once(body: str) -> None:
    src = "use wave::*;\n#[wave::kernel]\npub fn k(a: &[f32], o: &mut [f32], n: u32) {\n    " + body + "\n}\n"
    with pytest.raises(wg.CompileError) as e:
        wg.compile(src, lang="rust")
    assert [d.message for d in e.value.diagnostics if REFUSED_ONCE[body] in d.message]
    assert len(e.value.diagnostics) == 1, [d.message for d in e.value.diagnostics]


def test_raw_pointers_need_unsafe_code_as_rustc_says() -> None:
    src = "use wave::*;\n#[wave::kernel]\npub fn k(x: *const f32, y: *mut f32) {\n    BODY\n}\n"
    for body, message in (
        ("*y = *x;", "dereference of raw pointer is unsafe and requires an unsafe block"),
        ("unsafe { *x = 1.0; }", "cannot assign through a `*const` pointer"),
        ("unsafe { *y = x[0]; }", "cannot index into a value of type `*const f32`"),
        ("unsafe { *y.add(1u32) = 1.0; }", "add takes a usize, not u32"),
    ):
        with pytest.raises(wg.CompileError) as e:
            wg.compile(src.replace("BODY", body), lang="rust")
        assert message in e.value.diagnostics[0].message, e.value.diagnostics[0].message


@pytest.mark.parametrize("engine", ENGINES)
def test_helpers_and_closures_meet_per_thread_arrays(engine: str) -> None:
    """A helper's result stored into, initialising and indexing a per-thread array, and closures
    reading and writing the kernel's array (captured by reference): compiler/inline.py."""
    src = (
        "use wave::*;\nfn sq(v: f32) -> f32 { v * v }\n#[wave::kernel]\npub fn k(a: &[f32], o: &mut [f32]) {\n"
        "    let i = global_id(0) as usize;\n    let mut t = [sq(a[i]); 4];\n"
        "    t[1] = sq(a[i]) + t[sq(1.0) as usize + 1];\n    let get = |j: usize| t[j] * 2.0;\n"
        "    let mut put = |j: usize, v: f32| t[j] = v;\n    put(3, 5.0);\n    o[i] = t[1] + get(3);\n}\n"
    )
    a = np.arange(8, dtype=np.float32) - 2
    o = np.zeros(8, np.float32)
    wg.load_kernels(src, lang="rust").k(a, o, grid=1, workgroup=8, engine=engine)
    np.testing.assert_array_equal(o, 2 * a * a + 10)


def test_a_closure_needs_the_element_type_of_a_captured_array() -> None:
    src = (
        "use wave::*;\n#[wave::kernel]\npub fn k(a: &[f32], o: &mut [f32]) {\n    let i = global_id(0) as usize;\n"
        "    let mut t = [0.0; 4];\n    let get = |j: usize| t[j] * 2.0;\n"
        "    o[i] = get(1) + get(2);\n}\n"
    )
    with pytest.raises(wg.CompileError) as e:
        wg.compile(src, lang="rust")
    (d,) = [d for d in e.value.diagnostics if "error" in d.render().splitlines()[0]]
    assert "a closure uses `t` before the kernel gives its elements a type" in d.message and d.span.line == 6


def test_the_rows_rust_added_run_in_plain_python_as_on_the_device() -> None:
    """signum and clamp_keep_nan (rows added for Rust's meanings): their Python implementations
    (runtime/pyexec.py, wg.python_thread) against the same NumPy reference as the kernels."""
    f = np.float32
    for v in SPECIAL:
        x = f(v)
        s = wg.signum(x)  # type: ignore[attr-defined]
        want = x if np.isnan(x) else np.copysign(f(1), x)
        assert (np.isnan(s) and np.isnan(want)) or (s == want and np.signbit(s) == np.signbit(want)), v
        c = wg.clamp_keep_nan(x, f(-1.5), f(2.5))  # type: ignore[attr-defined]
        want = f(-1.5) if x < -1.5 else f(2.5) if x > 2.5 else x
        assert (np.isnan(c) and np.isnan(want)) or c == want, v
