"""Helper functions (compiler/inline.py): Rust `fn` helpers and closures, TypeScript functions and
arrow functions, written as their users write them and run on the emulator against NumPy (rustc
checks tests/compiler/frontends/rust/helpers.rs in test_rust_rustc.py, tsc the TypeScript file
here); recursion refused with its call chain; an error inside a helper names the helper's line and
the call's; and the inliner itself on hand-built HIR (early returns, short-circuits, renaming).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hir_build import OUT, SP
from hir_build import const as _c
from hir_build import tid as _tid
from hir_build import var as _v
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import wavegpu as wg
from wavegpu.compiler import Options, compile_functions, hir
from wavegpu.compiler.builtins import VOID
from wavegpu.compiler.inline import expand
from wavegpu.compiler.types import BOOL, U32

HERE = Path(__file__).parent / "frontends"
FILES = {"rust": HERE / "rust" / "helpers.rs", "typescript": HERE / "typescript" / "helpers.ts"}
REPO = Path(__file__).resolve().parents[2]
DTS = REPO / "src" / "wavegpu" / "compiler" / "frontends" / "support" / "typescript" / "wave.d.ts"
f32 = np.float32


def _reference(lang: str, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What helpers.rs (f32 arithmetic) and helpers.ts (JavaScript's f64 numbers, rounded where the
    kernel rounds) compute, one thread at a time."""
    n = len(x)
    out = np.zeros(n, np.float32)
    for i in range(n):
        s = f32(0)
        for k in range(4):
            if i + k >= n:
                break
            s = f32(s + x[i + k])
        if lang == "rust":
            r = f32(f32(x[i] * x[i]) + f32(y[i] * y[i])) * f32(0.5)
            out[i] = f32(min(max(r, f32(0.25)), f32(8.0)) + s) + f32(3.0)
        else:
            xd, yd = float(x[i]), float(y[i])
            h = float(f32(xd * xd + yd * yd)) * 0.5
            h = 0.25 if h < 0.25 else 8.0 if h > 8.0 else h
            out[i] = f32(float(f32(h + float(s))) + 3.0)
    pos = np.array([next((j for j in range(i, n) if x[j] > 0.75), n) for i in range(n)], np.uint32)
    counts = np.zeros(4, np.uint32)
    for i in range(1, n, 2):
        if (f32(x[i] * x[i]) if lang == "rust" else float(x[i]) ** 2) > 0.25:
            counts[i % 4] += 1
    return out, pos, counts


def _run(lang: str, x: np.ndarray, y: np.ndarray, opt: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = len(x)
    out, pos, counts = np.zeros(n, np.float32), np.zeros(n, np.uint32), np.zeros(4, np.uint32)
    wg.load_kernels(FILES[lang], opt=opt).helpers(
        x, y, out, pos, counts, np.uint32(n), grid=(1, 1, 1), workgroup=(128, 1, 1)
    )
    return out, pos, counts


@pytest.mark.parametrize("opt", [0, 2])
@pytest.mark.parametrize("lang", sorted(FILES))
def test_helpers_as_users_write_them_give_numpys_answer(lang: str, opt: int) -> None:
    rng = np.random.default_rng(7)
    x, y = rng.random(100, dtype=np.float32), rng.random(100, dtype=np.float32) * np.float32(5)
    x[-1] = 0.5  # the last threads find no element above 0.75: the helper's loop ends, no early return
    got, want = _run(lang, x, y, opt), _reference(lang, x, y)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    r = (x * x + y * y) * np.float32(0.5)
    assert want[2].sum() > 0 and (want[1] < 100).any() and (want[1] == 100).any()  # every path taken
    assert (r < 0.25).any() and (r > 8).any() and ((r >= 0.25) & (r <= 8)).any()


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    lang=st.sampled_from(sorted(FILES)),
    data=st.lists(st.floats(0, 1, width=32), min_size=1, max_size=70).flatmap(
        lambda xs: st.tuples(st.just(xs), st.lists(st.floats(0, 4, width=32), min_size=len(xs), max_size=len(xs)))
    ),
)
def test_helpers_agree_with_numpy_on_any_data(lang: str, data: tuple[list[float], list[float]]) -> None:
    x, y = np.array(data[0], np.float32), np.array(data[1], np.float32)
    for g, w in zip(_run(lang, x, y, 2), _reference(lang, x, y)):
        np.testing.assert_array_equal(g, w)


def test_tsc_accepts_the_typescript_helpers() -> None:
    local = REPO / ".tools" / "node" / "node_modules" / ".bin" / "tsc"
    tsc = str(local) if local.exists() and shutil.which("node") else shutil.which("tsc")
    if tsc is None:
        pytest.skip("tsc is not installed (tools/node-tools.sh installs npm's typescript into .tools/node)")
    args = [tsc, "--noEmit", "--strict", "--target", "es2022", "--lib", "esnext", "--pretty", "false"]
    r = subprocess.run(
        [*args, str(DTS), str(FILES["typescript"])],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert r.returncode == 0, r.stdout + r.stderr


def test_rust_closures_capture_the_callers_variables_and_slices() -> None:
    """rustc accepts the file (test_rust_rustc.py): `pick` is typed by its first call, as rustc types it."""
    x = np.array([5, 1, 11], np.uint32)
    o = np.zeros(3, np.uint32)
    wg.load_kernels(HERE / "rust" / "closures.rs").k(x, o, grid=(1, 1, 1), workgroup=(1, 1, 1))
    assert o.tolist() == [7, 11, 9]


# ---- refusals ------------------------------------------------------------------------------------
RECURSION = {
    ("rust", "direct"): (
        "fn f(v: u32) -> u32 {\n    if v == 0 { 0 } else { f(v - 1) + 1 }\n}\n"
        "#[wave::kernel]\npub fn k(o: &mut [u32]) {\n    o[0] = f(3);\n}\n",
        "k -> f (line 6) -> f (line 2)",
    ),
    ("rust", "mutual"): (
        "fn a(v: u32) -> u32 {\n    b(v) + 1\n}\nfn b(v: u32) -> u32 {\n    if v > 0 { a(v - 1) } else { 0 }\n}\n"
        "#[wave::kernel]\npub fn k(o: &mut [u32]) {\n    o[0] = a(3);\n}\n",
        "k -> a (line 9) -> b (line 2) -> a (line 5)",
    ),
    ("typescript", "direct"): (
        "function f(v: number): number {\n  return v <= 0 ? 0 : f(v - 1) + 1;\n}\n"
        "/** @kernel */\nexport function k(o: Uint32Array): void {\n  o[0] = f(3);\n}\n",
        "k -> f (line 6) -> f (line 2)",
    ),
    ("typescript", "mutual"): (
        "function a(v: number): number {\n  return b(v) + 1;\n}\nfunction b(v: number): number {\n"
        "  if (v > 0) {\n    return a(v - 1);\n  }\n  return 0;\n}\n"
        "/** @kernel */\nexport function k(o: Uint32Array): void {\n  o[0] = a(3);\n}\n",
        "k -> a (line 12) -> b (line 2) -> a (line 6)",
    ),
    ("cpp", "mutual"): (
        "#include <cstdint>\nuint32_t b(uint32_t v);\nuint32_t a(uint32_t v) {\n    return b(v) + 1;\n}\n"
        "uint32_t b(uint32_t v) {\n    return v > 0 ? a(v - 1) : 0;\n}\n"
        "[[wave::kernel]] void k(uint32_t* o) {\n    o[0] = a(3);\n}\n",
        "k -> a (line 10) -> b (line 4) -> a (line 7)",
    ),
}


@pytest.mark.parametrize(("lang", "case"), sorted(RECURSION))
def test_recursion_is_refused_with_its_call_chain(lang: str, case: str) -> None:
    text, chain = RECURSION[lang, case]
    with pytest.raises(wg.CompileError) as ei:
        wg.compile(text, lang=lang)
    (d,) = ei.value.diagnostics
    assert "recursion is not supported" in d.message and d.message.endswith(chain), d.render()
    last = int(chain.rsplit("line ", 1)[1].rstrip(")"))
    assert d.span is not None and d.span.line == last  # the recursive call itself
    # each call of the chain is shown as a note, innermost first, ending at the kernel's call
    lines = [int(p.split("line ")[1].rstrip(")")) for p in chain.split(" -> ")[1:-1]]
    assert [n.span.line for n in d.notes if n.span is not None] == lines[::-1]


ERRORS = {
    "rust": (
        "use wave::*;\nfn g(v: f32) -> f32 {\n    let q: u32 = v;\n    v\n}\n"
        "#[wave::kernel]\npub fn k(o: &mut [f32]) {\n    o[0] = g(1.0);\n    o[1] = g(2.0);\n}\n",
        3,
        8,
        "expected u32, found f32",
    ),
    "typescript": (
        "function inner(v: number): number {\n  return v.foo;\n}\nfunction outer(v: number): number {\n"
        "  return inner(v) + 1;\n}\n/** @kernel */\nexport function k(o: Float32Array): void {\n"
        "  o[0] = outer(1);\n  o[1] = outer(2.5);\n}\n",
        2,
        9,
        "objects and properties are not supported",
    ),
    "cpp": (
        "float g(float v) {\n    return v + zz;\n}\n[[wave::kernel]] void k(float* o) {\n"
        "    o[0] = g(1.0f);\n    o[1] = g(2.0f);\n}\n",
        2,
        5,
        "'zz' is not declared",
    ),
}


@pytest.mark.parametrize("lang", sorted(ERRORS))
def test_an_error_inside_a_helper_names_its_line_and_the_calls_line_once(lang: str) -> None:
    text, line, call_line, message = ERRORS[lang]
    with pytest.raises(wg.CompileError) as ei:
        wg.compile(text, lang=lang)
    (d,) = ei.value.diagnostics  # once, though two calls (two instances, for TypeScript) reach it
    assert message in d.message and d.span is not None and d.span.line == line
    assert d.notes and d.notes[-1].span is not None and d.notes[-1].span.line == call_line
    rendered = d.render()
    assert f"<string>:{call_line}:" in rendered and "note: in `" in rendered and rendered.count("^") == 1 + len(d.notes)


def test_a_typescript_helper_with_effects_is_called_as_its_own_statement() -> None:
    text = (
        "function put(o: Float32Array, i: number): number {\n  o[i] = 1;\n  return 2;\n}\n"
        "/** @kernel */\nexport function k(o: Float32Array): void {\n  o[0] = put(o, 1) + 1;\n}\n"
    )
    with pytest.raises(wg.CompileError, match="'put' writes memory or synchronises"):
        wg.compile(text, lang="typescript")
    ok = text.replace("o[0] = put(o, 1) + 1;", "const r = put(o, 1);\n  o[0] = r + 1;")
    o = np.zeros(2, np.float32)
    wg.load_kernels(ok, lang="typescript").k(o, grid=(1, 1, 1), workgroup=(1, 1, 1))
    assert o.tolist() == [3.0, 1.0]


# ---- the inliner on hand-built HIR ---------------------------------------------------------------


# mark(o, i): o[i] = o[i] + 1, then returns i > 2 (a helper with an effect)
MARK = hir.Helper(
    "mark",
    "mark",
    (hir.Param("o", OUT), hir.Param("i", U32)),
    BOOL,
    (
        hir.Store(SP, "o", _v("i"), hir.Binary(U32, SP, hir.BinaryOp.ADD, hir.Load(U32, SP, "o", _v("i")), _c(1))),
        hir.Return(SP, hir.Compare(BOOL, SP, hir.CompareOp.GT, _v("i"), _c(2))),
    ),
    (),
)
# first(o, from, n): the first index >= from with o[index] == 0, returned from inside the loop; n if none
FIRST = hir.Helper(
    "first",
    "first",
    (hir.Param("o", OUT), hir.Param("from", U32), hir.Param("n", U32)),
    U32,
    (
        hir.For(
            SP,
            "j",
            _v("from"),
            _v("n"),
            _c(1),
            (
                hir.If(
                    SP,
                    hir.Compare(BOOL, SP, hir.CompareOp.EQ, hir.Load(U32, SP, "o", _v("j")), _c(0)),
                    (hir.Return(SP, _v("j")),),
                    (),
                ),
            ),
        ),
        hir.Return(SP, _v("n")),
    ),
    (("j", U32),),
)


def _kernel(body: tuple[hir.Stmt, ...], variables: tuple[tuple[str, object], ...]) -> hir.Function:
    return hir.Function("k", (hir.Param("o", OUT), hir.Param("r", OUT)), body, variables, helpers=(MARK, FIRST))  # type: ignore[arg-type]


def test_a_short_circuit_calls_its_right_helper_only_when_the_left_does_not_decide() -> None:
    # j (the kernel's own name, also FIRST's local) = tid; c = (j % 2 == 1) && mark(o, j); r[j] = c
    j = _v("j")
    odd = hir.Compare(BOOL, SP, hir.CompareOp.EQ, hir.Binary(U32, SP, hir.BinaryOp.TRUNC_REM, j, _c(2)), _c(1))
    call = hir.Invoke(BOOL, SP, "mark", (hir.ArrayArg("o", OUT), j))
    body = (
        hir.Assign(SP, "j", _tid()),
        hir.Assign(SP, "c", hir.Logical(BOOL, SP, hir.LogicalOp.AND, odd, call)),
        hir.Store(SP, "r", j, hir.IfExpr(U32, SP, _v("c", BOOL), _c(1), _c(0))),
    )
    fn = _kernel(body, (("j", U32), ("c", BOOL)))
    assert not any(isinstance(s, hir.Assign) and isinstance(s.value, hir.Invoke) for s in expand(fn).body)
    prog = compile_functions([fn], Options())
    res = wg.emulate(prog, grid=(1, 1, 1), workgroup=(8, 1, 1), memory=64, args=[0, 32])
    words = res.memory.view(np.uint32)
    assert words[:8].tolist() == [0, 1, 0, 1, 0, 1, 0, 1]  # only odd threads marked
    assert words[8:16].tolist() == [0, 0, 0, 1, 0, 1, 0, 1]  # mark's result: i > 2


@pytest.mark.parametrize("opt", [0, 2])
def test_a_return_inside_a_loop_leaves_the_helper_and_its_names_never_clash(opt: int) -> None:
    # r[tid] = first(o, tid, 8) + first(o, 0, tid): o holds 0 at even indices below 8
    a = hir.Invoke(U32, SP, "first", (hir.ArrayArg("o", OUT), _v("j"), _c(8)))
    b = hir.Invoke(U32, SP, "first", (hir.ArrayArg("o", OUT), _c(0), _v("j")))
    body = (hir.Assign(SP, "j", _tid()), hir.Store(SP, "r", _v("j"), hir.Binary(U32, SP, hir.BinaryOp.ADD, a, b)))
    fn = _kernel(body, (("j", U32),))
    mem = np.zeros(16, np.uint32)
    mem[:8] = [0, 5, 0, 5, 0, 5, 0, 5]
    prog = compile_functions([fn], Options(opt=opt))
    res = wg.emulate(prog, grid=(1, 1, 1), workgroup=(8, 1, 1), memory=mem.view(np.uint8), args=[0, 32])
    got = res.memory.view(np.uint32)[8:16]
    want = [t if t % 2 == 0 else t + 1 for t in range(8)]  # first(o, 0, tid) is 0: o[0] == 0, or tid == 0
    assert got.tolist() == want
    text = hir.dump(expand(fn))
    assert "first$j" in text and "first$returned" in text and "call " not in text


def test_a_void_helper_as_a_statement() -> None:
    call = hir.ExprStmt(SP, hir.Invoke(VOID, SP, "bump", (hir.ArrayArg("o", OUT),)))
    bump = hir.Helper(
        "bump", "bump", (hir.Param("o", OUT),), None, (hir.Store(SP, "o", _c(0), _c(9)), hir.Return(SP)), ()
    )
    fn = hir.Function("k", (hir.Param("o", OUT),), (call,), (), helpers=(bump,))
    assert hir.dump(fn).startswith("helper bump(o: ") and "call bump(o)" in hir.dump(fn)
    res = wg.emulate(compile_functions([fn], Options()), grid=(1, 1, 1), workgroup=(1, 1, 1), memory=16, args=[0])
    assert res.memory.view(np.uint32)[0] == 9


# ---- random helpers against a reference interpreter ------------------------------------------------
M32 = 0xFFFFFFFF


class _Ret(Exception):
    def __init__(self, value: int) -> None:
        self.value = value


class _Brk(Exception):
    pass


def _eval(e: hir.Expr, env: dict[str, int]) -> int:
    if isinstance(e, hir.Const):
        return int(e.value)
    if isinstance(e, hir.Var):
        return env[e.name]
    assert isinstance(e, hir.Binary | hir.Compare)
    a, b = _eval(e.left, env), _eval(e.right, env)
    ops = {
        hir.BinaryOp.ADD: lambda: (a + b) & M32,
        hir.BinaryOp.MUL: lambda: (a * b) & M32,
        hir.BinaryOp.XOR: lambda: a ^ b,
        hir.CompareOp.LT: lambda: int(a < b),
        hir.CompareOp.GT: lambda: int(a > b),
    }
    return ops[e.op]()


def _exec(body: tuple[hir.Stmt, ...], env: dict[str, int]) -> None:
    for s in body:
        if isinstance(s, hir.Assign):
            env[s.name] = _eval(s.value, env)
        elif isinstance(s, hir.Return):
            assert s.value is not None
            raise _Ret(_eval(s.value, env))
        elif isinstance(s, hir.Break):
            raise _Brk()
        elif isinstance(s, hir.If):
            _exec(s.then if _eval(s.cond, env) else s.other, env)
        else:
            assert isinstance(s, hir.For)
            for j in range(_eval(s.start, env), _eval(s.stop, env)):
                env[s.var] = j
                try:
                    _exec(s.body, env)
                except _Brk:
                    break


def _stmts(draw: st.DrawFn, depth: int, loops: list[str]) -> tuple[hir.Stmt, ...]:
    acc, p = _v("acc"), _v("p")
    out: list[hir.Stmt] = []
    for _ in range(draw(st.integers(1, 3))):
        kinds = ["add", "mul", "xor", "ret"] + (["if", "for"] if depth < 2 else []) + (["break"] if loops else [])
        kind = draw(st.sampled_from(kinds))
        c = _c(draw(st.integers(0, 9)))
        if kind in ("add", "mul", "xor"):
            op = {"add": hir.BinaryOp.ADD, "mul": hir.BinaryOp.MUL, "xor": hir.BinaryOp.XOR}[kind]
            other = _v(loops[-1]) if loops and draw(st.booleans()) else p if kind == "xor" else c
            out.append(hir.Assign(SP, "acc", hir.Binary(U32, SP, op, acc, other)))
        elif kind == "ret":
            out.append(hir.Return(SP, hir.Binary(U32, SP, hir.BinaryOp.ADD, acc, c)))
        elif kind == "break":
            out.append(hir.If(SP, hir.Compare(BOOL, SP, hir.CompareOp.GT, acc, c), (hir.Break(SP),), ()))
        elif kind == "if":
            cond = hir.Compare(
                BOOL,
                SP,
                draw(st.sampled_from([hir.CompareOp.LT, hir.CompareOp.GT])),
                draw(st.sampled_from([acc, p])),
                c,
            )
            out.append(
                hir.If(
                    SP,
                    cond,
                    _stmts(draw, depth + 1, loops),
                    _stmts(draw, depth + 1, loops) if draw(st.booleans()) else (),
                )
            )
        else:
            j = f"j{len(loops)}"
            body = _stmts(draw, depth + 1, [*loops, j])
            out.append(hir.For(SP, j, _c(0), _c(draw(st.integers(0, 4))), _c(1), body))
    return tuple(out)


@st.composite
def _helpers(draw: st.DrawFn) -> hir.Helper:
    body = (hir.Assign(SP, "acc", _v("p")), *_stmts(draw, 0, []), hir.Return(SP, _v("acc")))
    return hir.Helper("h", "h", (hir.Param("p", U32),), U32, body, (("acc", U32), ("j0", U32), ("j1", U32)))


def _call_h(p: int, h: hir.Helper) -> int:
    try:
        _exec(h.body, {"p": p})
    except _Ret as r:
        return r.value
    raise AssertionError("the helper ends with a return")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(h=_helpers(), context=st.sampled_from(["plain", "sum", "and", "select"]), opt=st.sampled_from([0, 2]))
def test_random_helpers_inlined_agree_with_a_reference_interpreter(h: hir.Helper, context: str, opt: int) -> None:
    """Returns from loops and branches, breaks, the helper's names shared with the kernel's (`acc`,
    `j0`: also kernel variables), and calls in a sum, a short-circuit and a conditional."""
    t = _v("j0")
    call = hir.Invoke(U32, SP, "h", (t,))
    call2 = hir.Invoke(U32, SP, "h", (hir.Binary(U32, SP, hir.BinaryOp.ADD, t, _c(1)),))
    odd = hir.Compare(BOOL, SP, hir.CompareOp.GT, hir.Binary(U32, SP, hir.BinaryOp.XOR, t, _c(5)), t)
    value: hir.Expr = {
        "plain": call,
        "sum": hir.Binary(U32, SP, hir.BinaryOp.ADD, call, call2),
        "and": hir.IfExpr(
            U32,
            SP,
            hir.Logical(BOOL, SP, hir.LogicalOp.AND, odd, hir.Compare(BOOL, SP, hir.CompareOp.GT, call, _c(9))),
            _c(1),
            _c(2),
        ),
        "select": hir.IfExpr(U32, SP, odd, call, _v("acc")),
    }[context]
    body = (hir.Assign(SP, "j0", _tid()), hir.Assign(SP, "acc", _c(77)), hir.Store(SP, "o", t, value))
    fn = hir.Function("k", (hir.Param("o", OUT),), body, (("j0", U32), ("acc", U32)), helpers=(h,))
    res = wg.emulate(
        compile_functions([fn], Options(opt=opt)), grid=(1, 1, 1), workgroup=(16, 1, 1), memory=64, args=[0]
    )
    want = [_context(context, i, h) for i in range(16)]
    assert res.memory.view(np.uint32).tolist() == want


def _context(context: str, i: int, h: hir.Helper) -> int:
    odd = (i ^ 5) > i
    if context == "plain":
        return _call_h(i, h)
    if context == "sum":
        return (_call_h(i, h) + _call_h(i + 1, h)) & M32
    if context == "and":
        return 1 if odd and _call_h(i, h) > 9 else 2
    return _call_h(i, h) if odd else 77


def test_rust_helpers_take_and_return_every_kernel_type() -> None:
    d, h = np.array([3.0], np.float64), np.array([1.5, -2.0, 0.0], np.float16)
    b, o = np.array([7, 9], np.uint8), np.zeros(2, np.int32)
    wg.load_kernels(HERE / "rust" / "helper_types.rs").k(d, h, b, o, grid=(1, 1, 1), workgroup=(1, 1, 1))
    assert d.tolist() == [1.5] and h.tolist() == [1.5, -2.0, 1.5] and o.tolist() == [2, -15 + 9]


def test_a_typescript_helper_takes_a_local_array_and_an_arrow_reads_a_captured_length() -> None:
    x, o = np.arange(8, dtype=np.float32) * np.float32(1.25), np.zeros(8, np.float32)
    wg.load_kernels(FILES["typescript"]).tiles(x, o, grid=(1, 1, 1))
    acc = np.float32(0)
    for v in x:
        acc = np.float32(acc + v)
    np.testing.assert_array_equal(o, np.full(8, np.float32(acc + x[-1]), np.float32))
