"""The Rust frontend: diagnostics with spans and carets (syntax errors from tree-sitter, type
errors as rustc gives them, unsupported constructs), Rust's arithmetic on the emulator (truncating
division, wrapping, shift counts modulo 32, `as` casts), every builtin under its Rust spelling,
and integer expression trees against a scalar reference of Rust's release-build rules.
"""

from __future__ import annotations

import math
import random
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import wavegpu as wg
from wavegpu.compiler import builtins, hir
from wavegpu.compiler.frontends import FRONTENDS
from wavegpu.compiler.frontends.rust import SPELLINGS

HERE = Path(__file__).parent
HEAD = "use wave::*;\n\n#[wave::kernel]\npub fn k(a: &[f32], o: &mut [f32], n: u32) {\n"


def _parse(text: str) -> list[hir.Function]:
    return FRONTENDS["rust"].parse(text, "k.rs")


def _kernels(text: str, opt: int = 2) -> wg.runtime.sources.Kernels:  # type: ignore[name-defined]
    return wg.load_kernels(text, lang="rust", opt=opt)


# ---- diagnostics ---------------------------------------------------------------------------------
# (body on line 5, the text the caret underlines (its n-th occurrence), a part of the message)
DIAGNOSTICS: list[tuple[str, str, int, str]] = [
    ("let x = 1 +;", ";", 0, "syntax error"),
    ("let b = n; let s: i32 = 1; o[0] = (s + b) as f32;", "s + b", 0, "mismatched types: i32 and u32"),
    ("let s: i32 = 1; o[0] = s;", "s", 1, "expected f32, found i32: convert it, `s as f32`"),
    ("o[0] = o[1] * 2;", "2", 0, "found an integer literal: write 2.0"),
    (
        "let x = 1.0; x = 2.0; o[0] = x;",
        "x",
        1,
        "cannot assign twice to immutable variable `x`: declare it `let mut x`",
    ),
    ("n = 3;", "n", 0, "immutable parameter `n`: declare it `mut n`"),
    ("a[0] = 1.0;", "a[0]", 0, "behind a `&` reference: declare `a: &mut [f32]`"),
    ("let i: i32 = 0; o[i] = 1.0;", "i", 2, "cannot be indexed by `i32`: slices and arrays are indexed by usize"),
    ("let i = global_id(0); o[i] = a[i];", "i", 2, "the type `[f32]` cannot be indexed by `u32`"),  # E0277
    ("let i = global_id(0); o[0] = a[i + 1];", "i + 1", 0, "convert it, `a[(i + 1) as usize]`"),
    ("k(a, o, n);", "k", 0, "recursion is not supported"),
    ("let v = vec![1.0f32; 4];", "vec![1.0f32; 4]", 0, "vec! allocates on the heap"),
    ("let b = Box::new(1.0f32);", "Box::new(1.0f32)", 0, "Box allocates on the heap"),
    ("let f = |v: f32| v * 2.0; let g = f; o[0] = g(1.0);", "f", 2, "is a closure: call it"),
    ("let m = -n;", "-n", 0, "cannot apply unary operator `-` to type `u32`"),
    ("let r = o[0] % 2.0;", "o[0] % 2.0", 0, "`%` of floats is not supported"),
    ("let q = n / 0;", "n / 0", 0, "attempt to divide by zero"),
    ("let s = n << 32;", "32", 0, "will overflow"),
    ("let x: i64 = 0;", "i64", 0, "i64 is not supported: kernel integers are 32-bit"),
    ("match n { 0 => {} 1 => {} }", "1 => {}", 0, "non-exhaustive patterns"),
    ("match n { x if x > 2 => {} _ => {} }", "x if x > 2", 0, "match guards"),
    ("loop { break 'outer; }", "break 'outer", 0, "use of undeclared label `'outer`"),
    ("let c = n as bool;", "n as bool", 0, "cannot cast u32 as bool"),
    ("let h = o[0] as f16;", "o[0] as f16", 0, "non-primitive cast"),
    ("let t = [0.0f32; 4]; t[0] = 1.0;", "t[0]", 0, "cannot assign to `t[..]`: declare it `let mut t`"),
    ("let t = [[0.0f32; 2]; 2]; o[0] = t[1];", "t[1]", 0, "`t` has 2 dimensions: index every one, t[i][j]"),
    ("let q = [0.0f32; 4]; o[0] = q[n];", "n", 0, "the type `[f32; 4]` cannot be indexed by `u32`"),
    ("let q = [0.0f32; 4]; let u = q;", "q", 1, "`q` is a per-thread array: use its elements, q[i]"),
    ("let mut q = [0.0f32; 4]; q += 1.0;", "q", 1, "`q` is an array: assign its elements, q[i] = ..."),
    ("let mut q = [0.0f32; 4]; q = 1.0;", "q", 1, "`q` is an array: assign its elements, q[i] = ..."),
    ('println!("{}", n);', 'println!("{}", n)', 0, "println! is not available in kernels"),
    ("break;", "break", 0, "`break` outside of a loop"),
    ("return 1;", "1", 0, "kernels return no value"),
    ("foo(1);", "foo", 0, "cannot find function `foo`"),
    ("o[0] = q;", "q", 0, "cannot find value `q` in this scope"),
    (
        "atomic_min(o, 0usize, 1.0);",
        "atomic_min(o, 0usize, 1.0)",
        0,
        "atomic_min on f32 arrays is not supported",
    ),  # the call's operation
    ("let w = wave_reduce_add(1.0f64);", "1.0f64", 0, "wave_reduce_add works on i32, u32 and f32 values, not f64"),
    ("let s = local_array::<f32, n>();", "n", 0, "a local_array count must be a constant positive integer"),
    ("fence(3);", "3", 0, "fence takes Scope::Wave, Scope::Workgroup or Scope::Device"),
    ("let x = thread_id(3);", "3", 0, "axis must be the constant 0, 1 or 2"),
    ("for i in (0..n).skip(1) {}", "(0..n).skip(1)", 0, "kernels loop over ranges"),
    ("if let Some(x) = 3 {}", "let Some(x) = 3", 0, "`if let` takes `Some(v) = x.get(i)`"),
    ("if let Some(x) = a.get(n) {}", "n", 0, "get takes a usize, not u32: convert it, `n as usize`"),
    ("let y = o[0].sin_cos();", "sin_cos", 0, "no method `sin_cos` for f32"),
]


def _place(body: str, snippet: str, nth: int) -> int:
    col = -1
    for _ in range(nth + 1):
        col = body.index(snippet, col + 1)
    return col + 4 + 1  # the body is indented by four spaces


@pytest.mark.parametrize(("body", "snippet", "nth", "message"), DIAGNOSTICS, ids=[d[3][:40] for d in DIAGNOSTICS])
def test_diagnostics_name_the_place_with_a_caret(body: str, snippet: str, nth: int, message: str) -> None:
    text = HEAD + f"    {body}\n}}\n"
    with pytest.raises(wg.CompileError) as ei:
        _parse(text)
    d = ei.value.diagnostics[0]
    col = _place(body, snippet, nth)
    rendered = d.render()
    head, shown, caret = rendered.splitlines()
    assert head.startswith(f"k.rs:5:{col}: error: "), rendered
    assert message in head, rendered
    assert shown == f"        {body}"
    width = 1 if message == "syntax error" else len(snippet)
    assert caret == "    " + " " * (col - 1) + "^" + "~" * (width - 1), rendered


def test_every_error_of_a_kernel_is_reported() -> None:
    text = HEAD + "    let m = -n;\n    let s: i32 = 1;\n    o[0] = s;\n    let v = vec![1];\n}\n"
    with pytest.raises(wg.CompileError) as ei:
        _parse(text)
    assert [(d.span.line, d.span.col) for d in ei.value.diagnostics if d.span] == [(5, 13), (7, 12), (8, 13)]


@pytest.mark.parametrize(
    ("source", "place", "message"),
    [
        ("struct P { x: f32 }\n#[wave::kernel]\nfn k(o: &mut [f32], p: P) {}\n", (3, 24), "structs are not supported"),
        ("static S: f32 = 1.0;\n#[wave::kernel]\nfn k(o: &mut [f32]) { o[0] = S; }\n", (3, 30), "static `S`"),
        ("trait T {}\n#[wave::kernel]\nfn k(o: &mut [f32], t: &T) {}\n", (3, 25), "traits are not supported"),
        ("#[wave::kernel]\nfn k(v: Vec<f32>) {}\n", (2, 9), "Vec<f32> needs heap allocation"),
        ("#[wave::kernel]\nfn k(f: &dyn Fn(f32) -> f32) {}\n", (2, 10), "trait objects (dyn) are not supported"),
        ("#[wave::kernel]\nfn k(o: &mut [f32]) -> f32 { 0.0 }\n", (2, 24), "kernels return nothing"),
        (
            "fn helper<T>(x: T) -> T { x }\n#[wave::kernel]\nfn k(o: &mut [f32]) { o[0] = helper(1.0); }\n",
            (1, 10),
            "generic functions are not supported",
        ),
        ("#[wave::kernel]\nfn k<T>(o: &mut [T]) {}\n", (2, 5), "kernels are not generic"),
        ("#[wave::kernel]\nfn k(o: &mut [f32]) {\n    let x = ;\n}\n", (3, 11), "syntax error"),
    ],
)
def test_item_level_diagnostics(source: str, place: tuple[int, int], message: str) -> None:
    with pytest.raises(wg.CompileError) as ei:
        _parse(source)
    d = ei.value.diagnostics[0]
    assert d.span is not None and (d.span.line, d.span.col) == place, d.render()
    assert message in d.message
    assert "^" in d.render().splitlines()[2]


def test_spellings_name_every_builtin() -> None:
    names = set(builtins.ROWS)
    assert names - set(SPELLINGS) == set()
    assert all(isinstance(v, str) and v for v in SPELLINGS.values())


# ---- what the frontend produces --------------------------------------------------------------------
def _vars(text: str) -> dict[str, str]:
    (fn,) = _parse(text)
    return {k: str(v) for k, v in fn.variables}


def test_unsuffixed_literals_are_typed_by_their_later_uses_as_rustc_does() -> None:
    body = (
        "    let mut s = 128;\n    let t = thread_id(0);\n    while s > 0 { if t < s { o[0] = 1.0; } s /= 2; }\n"
        "    let mut acc = 0.0;\n    acc = acc + o[1];\n    let d = 0.5;\n    let i = 3;\n"
        "    for j in 0..4 { o[j] = acc; }\n"
        "    let w = match n { 0 => 1.0, _ => 2.0 };\n    o[2] = w;\n"
        "    let q = 0;\n    if t < q + 1 { o[3] = 1.0; }\n"
    )
    v = _vars(HEAD + body + "}\n")
    assert (v["s"], v["acc"], v["d"], v["i"], v["j"]) == ("u32", "f32", "f64", "i32", "u32")
    assert (v["w"], v["q"]) == ("f32", "u32")


def test_shadowing_makes_a_new_variable() -> None:
    (fn,) = _parse(HEAD + "    let i = global_id(0);\n    let i = i as usize;\n    o[i] = 1.0;\n}\n")
    assert dict(fn.variables) == {"i": wg.u32, "i$2": wg.u32}
    assert "o[i$2] = 1.0:f32" in hir.dump(fn)


def test_a_match_on_integers_is_a_chain_of_conditional_branches() -> None:
    body = "    match n { 0 => o[0] = 1.0, 1 | 2 => { o[0] = 2.0; } 3..=5 => o[0] = 3.0, _ => {} }\n"
    (fn,) = _parse(HEAD + body + "}\n")
    text = hir.dump(fn)
    assert "if (n eq 0:u32):" in text and "((n eq 1:u32) or (n eq 2:u32))" in text
    assert "((n ge 3:u32) and (n le 5:u32))" in text


# ---- Rust's arithmetic on the emulator -------------------------------------------------------------
ARITH = """use wave::*;

#[wave::kernel]
pub fn arith(x: &[i32], y: &[u32], f: &[f32], oi: &mut [i32], ou: &mut [u32]) {
    let t = thread_id(0) as usize;
    if t > 0 {
        return;
    }
    oi[0] = x[0] / x[1];
    oi[1] = x[0] % x[1];
    oi[2] = x[2] % x[3];
    oi[3] = x[4] + 1;
    oi[4] = x[0] << y[2];
    oi[5] = x[0] >> y[2];
    oi[6] = f[0] as i32;
    oi[7] = f[1] as i32;
    oi[8] = f[2] as i32;
    oi[9] = f[3] as i32;
    oi[10] = y[0] as i32;
    oi[11] = (y[1] as i8) as i32;
    oi[12] = x[5].abs();
    oi[13] = x[0].min(x[1]).max(x[3]);
    oi[14] = (x[0] < x[1]) as i32 + 2 * (y[0] > y[1]) as i32;
    oi[15] = x[4].wrapping_mul(x[4]);
    ou[0] = y[0] / y[1];
    ou[1] = y[0] % y[1];
    ou[2] = x[0] as u32;
    ou[3] = f[0] as u32;
    ou[4] = f[1] as u32;
    ou[5] = (y[1] as u8) as u32;
    ou[6] = y[0] >> y[2];
    ou[7] = y[0].wrapping_shl(y[3]);
    ou[8] = (y[0] as f32) as u32;
    ou[9] = y[0].min(y[1]);
    ou[10] = !y[1];
    ou[11] = ((y[1] as u16) as u32) ^ 0xFFFF_0000;
    ou[12] = (f[4] as u32) + (f[3] as u32);
    let mut s = 0u32;
    for i in (1..=10).step_by(3) {
        s = s * 10 + i;
    }
    ou[13] = s;
    let mut c = 0u32;
    loop {
        c += 1;
        if c % 2 == 0 {
            continue;
        }
        if c > 6 {
            break;
        }
    }
    ou[14] = c;
    ou[15] = match y[2] { 0 => 10, 33 => 20, _ => 30 };
}
"""


def _rust_i32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >> 31 else v


@pytest.mark.parametrize("opt", [0, 2])
def test_rusts_arithmetic_rules_on_the_emulator(opt: int) -> None:
    x = np.array([-7, 2, 7, -2, 2**31 - 1, -(2**31)], np.int32)
    y = np.array([0xFFFFFFF0, 0x1234_56C7, 33, 35], np.uint32)
    f = np.array([3e9, -3e9, np.nan, -1.75, 5e9], np.float32)
    oi = np.zeros(16, np.int32)
    ou = np.zeros(16, np.uint32)
    _kernels(ARITH, opt).arith(x, y, f, oi, ou, grid=1, workgroup=32)
    want_i = [
        -3,  # / truncates
        -1,  # % takes the dividend's sign
        1,
        -(2**31),  # i32::MAX + 1 wraps (a release build)
        -14,  # the shift count 33 is taken modulo 32
        -4,
        2**31 - 1,  # float -> int saturates
        -(2**31),
        0,  # NaN -> 0
        -1,  # truncation toward zero
        -16,  # u32 -> i32 keeps the bits
        _rust_i32(0xC7 | ~0xFF),  # `as i8` keeps the low 8 bits, sign-extended
        -(2**31),  # i32::MIN.abs() wraps
        -2,
        1 + 2,
        1,  # MAX * MAX wraps to 1
    ]
    want_u = [
        0xFFFFFFF0 // 0x123456C7,
        0xFFFFFFF0 % 0x123456C7,
        0xFFFFFFF9,
        3_000_000_000,
        0,  # negative -> 0
        0xC7,
        0xFFFFFFF0 >> 1,
        (0xFFFFFFF0 << 3) & 0xFFFFFFFF,
        0xFFFFFFFF,  # 4294967280 rounds to 2**32 as f32, which saturates
        0x123456C7,
        ~0x123456C7 & 0xFFFFFFFF,
        0x56C7 ^ 0xFFFF0000,
        0xFFFFFFFF,  # 5e9 saturates; -1.75 -> 0
        ((1 * 10 + 4) * 10 + 7) * 10 + 10,
        7,
        20,
    ]
    assert oi.tolist() == want_i
    assert ou.tolist() == want_u


# ---- every builtin under its Rust spelling --------------------------------------------------------
def test_every_builtin_runs() -> None:
    ks = wg.load_kernels(HERE / "rust" / "every_builtin.rs")
    out = np.zeros(64 * 12, np.uint32)
    ks.ids(out, grid=2, workgroup=32)
    rows = out.reshape(64, 12)
    g = np.arange(64)
    assert np.array_equal(rows[:, 0], g % 32) and np.array_equal(rows[:, 2], g // 32)
    assert (rows[:, 3] == 32).all() and (rows[:, 4] == 2).all() and (rows[:, 5] == 64).all()
    assert np.array_equal(rows[:, 6], g % 32) and (rows[:, 8] == 32).all()
    assert (rows[:, 10] == 64 * 12).all() and (rows[:, 11] == 64).all()

    counts = np.array([0, 1000, 0, 99, 0, 0xFFFFFFFF, 0], np.uint32)
    vals = np.zeros(128, np.int32)
    fs = np.zeros(1, np.float32)
    ks.memory(counts, vals, fs, grid=1, workgroup=64)
    t = np.arange(64)
    assert counts[:4].tolist() == [64, 1000 - 64, 63, 0]
    assert counts[4] == 0xFFFFFFFF and counts[5] == 0
    assert counts[6] == np.bitwise_xor.reduce(t.astype(np.uint32))
    assert np.array_equal(vals[:64], -t) and np.array_equal(vals[64:], np.ones(64))
    assert fs[0] == 32.0

    xs = np.random.default_rng(3).integers(-100, 100, 32).astype(np.int32)
    o = np.zeros(32 * 9, np.int32)
    flags = np.zeros(32, np.uint32)
    ks.waves(xs, o, flags, grid=1, workgroup=32)
    r = o.reshape(32, 9)
    assert (r[:, 0] == xs.sum()).all() and (r[:, 1] == xs.min() + xs.max()).all()
    assert np.array_equal(r[:, 3], np.cumsum(xs) - xs)
    assert np.array_equal(r[:, 4], np.roll(xs, -1)) and np.array_equal(r[:, 6], xs[np.arange(32) ^ 3])
    assert (r[:, 7] == xs[0]).all()
    ballot = sum(1 << i for i in range(32) if xs[i] > 0)
    assert (r[:, 8].view(np.uint32) == ballot).all()
    assert (flags == int((xs < 0).any()) + 2 * int((xs != 0).all())).all()

    x = np.linspace(-3, 3, 40).astype(np.float32)
    out_f = np.zeros(40 * 16, np.float32)
    d = np.zeros(40)
    h = np.ones(40, np.float16)
    ks.math(x, out_f, d, h, 40, grid=1, workgroup=64)
    m = out_f.reshape(40, 16)
    a = np.abs(x) + 1
    np.testing.assert_allclose(m[:, 0], np.sqrt(a), rtol=1e-6)
    np.testing.assert_allclose(m[:, 2], np.sin(x), atol=1e-5)
    np.testing.assert_allclose(m[:, 6], np.log(a), rtol=1e-5)
    np.testing.assert_allclose(m[:, 9], x * 2 + 1, rtol=1e-6)
    assert np.array_equal(m[:, 10], np.clip(x, -0.5, 0.5))
    assert np.array_equal(m[:, 13], np.trunc(x) + np.maximum(np.trunc(x), 0))
    assert m[0, 14] == np.float32(math.pi * 0.5)
    with np.errstate(invalid="ignore"):  # sqrt of the negative inputs: NaN, as on the device
        want_d = np.floor(np.sqrt(x.astype(np.float64))) + np.ceil(x.astype(np.float64))
    assert np.array_equal(d, want_d, equal_nan=True)
    assert np.array_equal(h, (x.astype(np.float16) * np.float16(2) + np.float16(1)).astype(np.float16))


# ---- integer expression trees: the emulator against Rust's rules computed in Python -----------------
M32 = 0xFFFFFFFF


def _val(v: int, t: str) -> int:
    return _rust_i32(v) if t == "i32" else v & M32


def _tdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


# choices as data, so that hypothesis (draw) and a seeded random.Random (for rustc) make the trees
Choice = tuple[str, object]
Pick = Callable[[Choice], Any]
_BOOLS: Choice = ("bool", None)


def _ints(lo: int, hi: int) -> Choice:
    return ("int", (lo, hi))


def _among(xs: list[Any]) -> Choice:
    return ("among", xs)


def _hypothesis_pick(draw: st.DrawFn) -> Pick:
    def pick(c: Choice) -> Any:
        kind, arg = c
        if kind == "bool":
            return draw(st.booleans())
        if kind == "int":
            return draw(st.integers(*arg))  # type: ignore[misc]
        return draw(st.sampled_from(arg))  # type: ignore[arg-type]

    return pick


def _random_pick(rng: random.Random) -> Pick:
    def pick(c: Choice) -> Any:
        kind, arg = c
        if kind == "bool":
            return rng.random() < 0.5
        if kind == "int":
            lo, hi = arg  # type: ignore[misc]
            if hi - lo > 1000 and rng.random() < 0.3:  # the edges of the type
                return rng.choice([lo, hi, max(lo, 0), min(hi, 1)])
            return rng.randint(lo, hi)
        return rng.choice(arg)  # type: ignore[arg-type]

    return pick


def _expr(draw: Pick, t: str, depth: int) -> tuple[str, object]:
    """A Rust expression of type t and its value as a function of the inputs (Rust's release rules)."""
    if depth == 0 or draw(_ints(0, 3)) == 0:
        if draw(_BOOLS):
            k = draw(_ints(0, 2))
            return f"{'x' if t == 'i32' else 'y'}{k}", (lambda env, k=k, t=t: env[t][k])
        v = draw(_ints(-(2**31), 2**31 - 1) if t == "i32" else _ints(0, M32))
        text = f"{v}{t}" if v >= 0 else f"({v}{t})"
        return text, (lambda env, v=v: v)
    kind = draw(_among(["bin", "bin", "div", "shift", "cast", "un", "minmax"]))
    if kind == "cast":
        other = "u32" if t == "i32" else "i32"
        s, f = _expr(draw, other, depth - 1)
        return f"({s} as {t})", (lambda env, f=f, t=t: _val(f(env), t))
    a, fa = _expr(draw, t, depth - 1)
    if kind == "un":
        if t == "i32" and draw(_BOOLS):
            return f"{a}.wrapping_neg()", (lambda env, fa=fa: _val(-fa(env), "i32"))
        return f"(!{a})", (lambda env, fa=fa, t=t: _val(~fa(env), t))
    if kind == "shift":
        op = draw(_among(["<<", ">>", "wrapping_shl", "wrapping_shr"]))
        c, fc = _expr(draw, "u32", depth - 1)
        if op in ("<<", ">>"):
            k = draw(_ints(0, 31))
            text = f"({a} {op} {k})"

            def fc(env: dict[str, list[int]], k: int = k) -> int:
                return k

        else:
            text = f"{a}.{op}({c})"

        def shift(env: dict[str, list[int]], fa=fa, fc=fc, op=op, t=t) -> int:
            x, n = fa(env), fc(env) & 31
            return _val(x << n, t) if op in ("<<", "wrapping_shl") else _val(x >> n, t)

        return text, shift
    b, fb = _expr(draw, t, depth - 1)
    if kind == "minmax":
        op = draw(_among(["min", "max"]))
        return f"{a}.{op}({b})", (lambda env, fa=fa, fb=fb, op=op: (min if op == "min" else max)(fa(env), fb(env)))
    if kind == "div":
        op = draw(_among(["/", "%"]))
        if t == "i32":  # wrapping_div: i32::MIN / -1 gives i32::MIN (plain `/` panics there)
            meth = "wrapping_div" if op == "/" else "wrapping_rem"
            text = f"{a}.{meth}({b} | 1)"
        else:
            text = f"({a} {op} ({b} | 1))"

        def div(env: dict[str, list[int]], fa=fa, fb=fb, op=op, t=t) -> int:
            x, y = fa(env), _val(fb(env) | 1, t)
            q = _tdiv(x, y)
            return _val(q if op == "/" else x - q * y, t)

        return text, div
    op = draw(_among(["+", "-", "*", "&", "|", "^", "wrapping_add", "wrapping_sub", "wrapping_mul"]))
    fn = {
        "+": lambda p, q: p + q,
        "-": lambda p, q: p - q,
        "*": lambda p, q: p * q,
        "&": lambda p, q: p & q,
        "|": lambda p, q: p | q,
        "^": lambda p, q: p ^ q,
    }[op if len(op) == 1 else {"wrapping_add": "+", "wrapping_sub": "-", "wrapping_mul": "*"}[op]]
    text = f"({a} {op} {b})" if len(op) == 1 else f"{a}.{op}({b})"
    return text, (lambda env, fa=fa, fb=fb, fn=fn, t=t: _val(fn(fa(env), fb(env)), t))


@st.composite
def _programs(draw: st.DrawFn) -> tuple[str, object, object, int]:
    pick = _hypothesis_pick(draw)
    ei, fi = _expr(pick, "i32", 4)
    eu, fu = _expr(pick, "u32", 4)
    opt = draw(st.sampled_from([0, 1, 2, 3]))
    return ei, fi, eu, fu, opt  # type: ignore[return-value]


_EDGES_I = [0, 1, -1, 2**31 - 1, -(2**31), 7, -7, 12345]
_EDGES_U = [0, 1, M32, 2**31, 2**31 - 1, 33, 0xDEADBEEF, 5]


def _inputs(seed: int, lanes: int) -> tuple[np.ndarray, np.ndarray]:
    """Three i32 and three u32 inputs per lane: the types' edges first, then random values."""
    rng = np.random.default_rng(seed)
    xs = rng.integers(-(2**31), 2**31, 3 * lanes).astype(np.int32)
    ys = rng.integers(0, 2**32, 3 * lanes, dtype=np.uint64).astype(np.uint32)
    xs[:8], ys[:8] = _EDGES_I, _EDGES_U
    return xs, ys


def _kernel_of(pairs: list[tuple[str, str]]) -> str:
    """A kernel storing each (i32, u32) expression pair of every lane."""
    src = (
        "use wave::*;\n\n#[wave::kernel]\n"
        "pub fn k(xs: &[i32], ys: &[u32], oi: &mut [i32], ou: &mut [u32]) {\n"
        "    let t = thread_id(0) as usize;\n"
        "    let x0 = xs[t * 3];\n    let x1 = xs[t * 3 + 1];\n    let x2 = xs[t * 3 + 2];\n"
        "    let y0 = ys[t * 3];\n    let y1 = ys[t * 3 + 1];\n    let y2 = ys[t * 3 + 2];\n"
    )
    for k, (ei, eu) in enumerate(pairs):
        src += f"    oi[t * {len(pairs)} + {k}] = {ei};\n    ou[t * {len(pairs)} + {k}] = {eu};\n"
    return src + "}\n"


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck), database=None)
@given(_programs())
def test_integer_expressions_follow_rusts_wrapping_rules(prog: tuple) -> None:  # type: ignore[type-arg]
    ei, fi, eu, fu, opt = prog
    src = _kernel_of([(ei, eu)])
    lanes = 8
    xs, ys = _inputs(len(ei) + 7 * len(eu), lanes)
    oi = np.zeros(lanes, np.int32)
    ou = np.zeros(lanes, np.uint32)
    _kernels(src, opt).k(xs, ys, oi, ou, grid=1, workgroup=lanes)
    for lane in range(lanes):
        env = {
            "i32": [int(v) for v in xs[3 * lane : 3 * lane + 3]],
            "u32": [int(v) for v in ys[3 * lane : 3 * lane + 3]],
        }
        assert int(oi[lane]) == fi(env), f"-O{opt} lane {lane}: {ei}"  # type: ignore[operator]
        assert int(ou[lane]) == fu(env), f"-O{opt} lane {lane}: {eu}"  # type: ignore[operator]


# ---- the Rust toolchain's example (COMPAT.md), unchanged --------------------------------------------
COMPAT = HERE.parent / "languages" / "compat" / "vector_add.rs"


def test_the_rust_toolchains_vector_add_compiles_unchanged_and_gives_its_ci_results() -> None:
    """A bare #[kernel], `thread_id()` without an axis (the id within the workgroup) and slices
    indexed with the u32 directly; its CI launches the 256-thread workgroup its compiler records."""
    text = COMPAT.read_text()
    assert "#[kernel]" in text and "thread_id()" in text and "out[gid]" in text
    (fn,) = _parse(text)
    assert [p.name for p in fn.params] == ["a", "b", "out", "n"]
    ks = wg.load_kernels(COMPAT)
    a = np.arange(256, dtype=np.float32)
    b = np.full(256, 2.0, np.float32)
    out = np.zeros(256, np.float32)
    ks.vector_add(a, b, out, 200, grid=1, workgroup=256)
    assert np.array_equal(out[:200], a[:200] + 2) and not out[200:].any()
    out2 = np.zeros(256, np.float32)
    ks.vector_add(a, b, out2, 256, grid=2, workgroup=256)  # thread_id() is the local id: both groups write 0..255
    assert np.array_equal(out2, a + 2)


@pytest.mark.parametrize("opt", [0, 2])
def test_where_rust_panics_wave_gives_the_documented_values(opt: int) -> None:
    """docs/compiler.md: a division by zero gives quotient 0xFFFFFFFF and remainder the dividend;
    i32::MIN / -1 gives i32::MIN (what wrapping_div gives) with remainder 0."""
    src = HEAD.replace("a: &[f32], o: &mut [f32], n: u32", "x: &[i32], y: &[u32], oi: &mut [i32], ou: &mut [u32]")
    src += "    oi[0] = x[0] / x[1];\n    oi[1] = x[0] % x[1];\n    oi[2] = x[2] / x[3];\n    oi[3] = x[2] % x[3];\n"
    src += "    ou[0] = y[0] / y[1];\n    ou[1] = y[0] % y[1];\n}\n"
    oi = np.zeros(4, np.int32)
    ou = np.zeros(2, np.uint32)
    x = np.array([7, 0, -(2**31), -1], np.int32)
    _kernels(src, opt).k(x, np.array([9, 0], np.uint32), oi, ou, grid=1, workgroup=1)
    assert oi.tolist() == [-1, 7, -(2**31), 0] and ou.tolist() == [0xFFFFFFFF, 9]


def test_kernel_options_in_the_attribute_are_recorded() -> None:
    prog = wg.compile(str(HERE / "rust" / "options.rs"))
    (k,) = prog.kernels
    assert k.workgroup_size == (16, 16, 1)
    out = np.zeros(32 * 32, np.uint32)
    wg.load_kernels(HERE / "rust" / "options.rs").tiled(out, grid=(2, 2))  # the recorded workgroup
    assert (out == 16 * 100 + 16 + 1).all()
    with pytest.raises(wg.CompileError) as ei:
        _parse("#[wave::kernel(workgroups = 64)]\nfn k(o: &mut [f32]) {}\n")
    (d,) = ei.value.diagnostics
    assert d.span is not None and (d.span.line, d.span.col) == (1, 16)
    assert "unknown kernel option `workgroups`" in d.message


def test_the_line_table_points_into_the_rust_source() -> None:
    path = HERE.parents[2] / "examples" / "languages" / "rust" / "softmax_rows.rs"
    (k,) = wg.compile(str(path)).kernels
    assert k.lines is not None
    lines = {(loc.file, loc.line) for loc in k.lines if loc is not None}
    text = path.read_text().splitlines()
    store = next(i for i, x in enumerate(text, 1) if "y[base + j] = y[base + j] / s;" in x)
    assert all(f.endswith("softmax_rows.rs") for f, _ in lines)
    assert (str(path), store) in lines or any(f.endswith("softmax_rows.rs") and n == store for f, n in lines)


def test_float_literals_are_rounded_to_f32_once_as_rustc_does() -> None:
    """1.00000005960464477550 is just above the midpoint of 1 and the next f32; through a double it
    would become the midpoint and round to even (1.0); rustc rounds the decimal once."""
    text = HEAD + "    o[0] = 1.00000005960464477550;\n    o[1] = -0.1;\n    o[2] = 3.4028235e38_f32;\n}\n"
    out = np.zeros(3, np.float32)
    _kernels(text).k(np.zeros(1, np.float32), out, 1, grid=1, workgroup=1)
    assert out[0] == np.nextafter(np.float32(1), np.float32(2))
    assert out[1] == np.float32(-0.1) and out[2] == np.finfo(np.float32).max
    with pytest.raises(wg.CompileError, match="literal out of range for f32"):
        _parse(HEAD + "    o[0] = 1e39;\n}\n")


RUSTC = shutil.which("rustc")


@pytest.mark.skipif(RUSTC is None, reason="rustc is not installed: Rust's own answers come from it")
def test_integer_expressions_agree_with_rustc_natively(tmp_path: Path) -> None:
    """The same random expression trees compiled by rustc for the host (overflow checks off: a
    release build's wrapping) and run natively, against the emulator and the Python reference."""
    pick = _random_pick(random.Random(2026))
    trees = [(_expr(pick, "i32", 4), _expr(pick, "u32", 4)) for _ in range(30)]
    pairs = [(ei, eu) for (ei, _), (eu, _) in trees]
    lanes = 8
    xs, ys = _inputs(99, lanes)
    main = "#![allow(arithmetic_overflow, unused_parens)]\nfn main() {\n"
    main += f"    let xs: [i32; {3 * lanes}] = [{', '.join(map(str, xs.tolist()))}];\n"
    main += f"    let ys: [u32; {3 * lanes}] = [{', '.join(map(str, ys.tolist()))}];\n"
    main += f"    for t in 0..{lanes} {{\n"
    main += "        let (x0, x1, x2) = (xs[t * 3], xs[t * 3 + 1], xs[t * 3 + 2]);\n"
    main += "        let (y0, y1, y2) = (ys[t * 3], ys[t * 3 + 1], ys[t * 3 + 2]);\n"
    main += "        let _ = (x0, x1, x2, y0, y1, y2);\n"
    for ei, eu in pairs:
        main += f'        println!("{{}} {{}}", {ei}, {eu});\n'
    main += "    }\n}\n"
    (tmp_path / "main.rs").write_text(main)
    assert RUSTC is not None
    r = subprocess.run(
        [RUSTC, "--edition", "2021", "-C", "overflow-checks=off", "-C", "opt-level=0", "main.rs", "-o", "main"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    native = subprocess.run([str(tmp_path / "main")], capture_output=True, text=True, timeout=60, check=True)
    want = [tuple(int(v) for v in line.split()) for line in native.stdout.splitlines()]
    assert len(want) == lanes * len(pairs)
    oi = np.zeros(lanes * len(pairs), np.int32)
    ou = np.zeros(lanes * len(pairs), np.uint32)
    _kernels(_kernel_of(pairs), 2).k(xs, ys, oi, ou, grid=1, workgroup=lanes)
    got = list(zip(oi.tolist(), ou.tolist()))
    for n, ((ei, eu), w, g) in enumerate(zip(pairs * lanes, want, got)):
        assert g == w, f"lane {n // len(pairs)}: {ei} / {eu}: emulator {g}, rustc {w}"
    for lane in range(lanes):  # the Python reference agrees with rustc too
        env = {"i32": xs[3 * lane : 3 * lane + 3].tolist(), "u32": ys[3 * lane : 3 * lane + 3].tolist()}
        for k, ((_, fi), (_, fu)) in enumerate(trees):
            assert (fi(env), fu(env)) == want[lane * len(pairs) + k]  # type: ignore[operator]


CASTS = [  # (output type, expression of x: f32, d: f64, i: i32, u: u32)
    ("i32", "x as i32"),
    ("u32", "x as u32"),
    ("i32", "d as i32"),
    ("u32", "d as u32"),
    ("f32", "i as f32"),
    ("f32", "u as f32"),
    ("f64", "u as f64"),
    ("f64", "i as f64"),
    ("f32", "d as f32"),
    ("f64", "x as f64"),
    ("u32", "(x as u8) as u32"),
    ("i32", "(i as i8) as i32"),
    ("u32", "(i as u16) as u32"),
    ("i32", "(u as i16) as i32"),
    ("u32", "i as u32"),
    ("i32", "u as i32"),
    ("f32", "x.mul_add(x, -1.0)"),
    ("f32", "x.min(0.5).max(-0.5)"),
    ("f32", "(x * 3.0 - 1.0) / 7.0"),
    ("f64", "d * d + 1.0 / 3.0"),
]


@pytest.mark.skipif(RUSTC is None, reason="rustc is not installed: Rust's own answers come from it")
def test_casts_and_float_arithmetic_agree_with_rustc_natively(tmp_path: Path) -> None:
    """`as` casts (float to int saturating, NaN to 0, truncations to 8 and 16 bits) and a few f32/f64
    operations, bit for bit against rustc on the host."""
    xs = np.array(
        [np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -0.5, 2.0**31, 2.0**32, -(2.0**31) - 256, 1e10, 3e9, 16777217.0, -1.75,
         255.9, 256.0, -1.0, 0.1],
        np.float32,
    )  # fmt: skip
    ds = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -0.5, 2.0**31, 2.0**32, -(2.0**31) - 0.5, 1e10, 4294967295.5,
                   16777217.0, -1.75, 2147483647.9, -2147483648.9, 1e300, 0.1])  # fmt: skip
    ints = np.array([0, 1, -1, 2**31 - 1, -(2**31), 16777217, -16777217, 255, 256, 32767, -32769, 128, -129, 7, 8, 9,
                     123456789, -987654321], np.int32)  # fmt: skip
    us = ints.view(np.uint32)
    n = len(xs)
    lit = {"f32": lambda v: repr(float(v)) + "_f32" if np.isfinite(v) else ("f32::NAN" if np.isnan(v) else
           ("f32::INFINITY" if v > 0 else "f32::NEG_INFINITY")),
           "f64": lambda v: repr(float(v)) + "_f64" if np.isfinite(v) else ("f64::NAN" if np.isnan(v) else
           ("f64::INFINITY" if v > 0 else "f64::NEG_INFINITY"))}  # fmt: skip
    main = "fn main() {\n"
    main += f"    let xs: [f32; {n}] = [{', '.join(lit['f32'](v) for v in xs)}];\n"
    main += f"    let ds: [f64; {n}] = [{', '.join(lit['f64'](v) for v in ds)}];\n"
    main += f"    let is: [i32; {n}] = [{', '.join(map(str, ints.tolist()))}];\n"
    main += f"    let us: [u32; {n}] = [{', '.join(map(str, us.tolist()))}];\n"
    main += f"    for t in 0..{n} {{\n        let (x, d, i, u) = (xs[t], ds[t], is[t], us[t]);\n"
    main += "        let _ = (x, d, i, u);\n"
    bits = {"i32": "{} as u32 as u64", "u32": "{} as u64", "f32": "({}).to_bits() as u64", "f64": "({}).to_bits()"}
    for t, e in CASTS:
        main += f'        println!("{{}}", {bits[t].format(e)});\n'
    main += "    }\n}\n"
    (tmp_path / "main.rs").write_text(main)
    assert RUSTC is not None
    r = subprocess.run(
        [RUSTC, "--edition", "2021", "main.rs", "-o", "main"], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stderr
    out = subprocess.run(
        [str(tmp_path / "main")], capture_output=True, text=True, timeout=60, check=True
    ).stdout.split()
    want = np.array([int(v) for v in out], np.uint64).reshape(n, len(CASTS))

    src = "use wave::*;\n\n#[wave::kernel]\npub fn k(xs: &[f32], ds: &[f64], is: &[i32], us: &[u32],"
    src += " o32: &mut [u32], o64: &mut [f64]) {\n    let t = thread_id(0) as usize;\n"
    src += "    let x = xs[t];\n    let d = ds[t];\n    let i = is[t];\n    let u = us[t];\n"
    m = len(CASTS)
    for k, (t, e) in enumerate(CASTS):
        if t == "f64":
            src += f"    o64[t * {m} + {k}] = {e};\n"
        elif t == "f32":
            src += f"    o64[t * {m} + {k}] = ({e}) as f64;\n"
        else:
            src += f"    o32[t * {m} + {k}] = ({e}) as u32;\n"
    src += "}\n"
    o32 = np.zeros(n * m, np.uint32)
    o64 = np.zeros(n * m)
    _kernels(src, 2).k(xs, ds, ints, us, o32, o64, grid=1, workgroup=n)
    for row in range(n):
        for k, (t, e) in enumerate(CASTS):
            if t == "f64":
                got = int(o64[row * m + k : row * m + k + 1].view(np.uint64)[0])
            elif t == "f32":
                got = int(np.float32(o64[row * m + k]).view(np.uint32))
            else:
                got = int(o32[row * m + k])
            w = int(want[row, k])
            if t in ("f32", "f64") and _is_nan_bits(w, t) and _is_nan_bits(got, t):
                continue  # NaN payloads are not part of the semantics
            assert got == w, f"{e} with x={xs[row]!r}, d={ds[row]!r}, i={ints[row]}, u={us[row]}: {got:#x} != {w:#x}"


def _is_nan_bits(b: int, t: str) -> bool:
    return bool(
        np.isnan(
            np.array([b], np.uint32).view(np.float32)[0] if t == "f32" else np.array([b], np.uint64).view(np.float64)[0]
        )
    )


def test_host_code_beside_the_kernels_is_left_alone() -> None:
    """Structs, impls, statics and other functions of the same file are host code: only the
    marked kernels are compiled (a kernel that uses them is refused at the use)."""
    text = (
        "use wave::*;\n\nstruct Params { n: u32 }\nimpl Params { fn new() -> Self { Params { n: 1 } } }\n"
        'const NAME: &str = "saxpy";\nfn host() -> Vec<f32> { vec![1.0] }\n\n'
        "#[wave::kernel]\npub fn k(o: &mut [f32]) {\n    o[0] = 1.0;\n}\n"
    )
    (fn,) = _parse(text)
    assert fn.name == "k"
    with pytest.raises(wg.CompileError, match="the constant `NAME` is no kernel value"):
        _parse(text.replace("o[0] = 1.0;", "let s = NAME;"))
