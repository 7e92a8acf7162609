"""Per-thread arrays and unrolled loops in the language-free layers (HIR -> MIR -> .wbin), built
as HIR directly, as a frontend would: placement in registers or local memory, `Unroll.FULL`
refusals with the loop's place, `Unroll.HINT` falling back to a loop, triangular unrolling, a
counter the body assigns, and the HIR printer."""

from __future__ import annotations

import numpy as np
import pytest

import wavegpu as wg
from wavegpu.compiler import Options, compile_hir, hir
from wavegpu.compiler.mir.privates import MAX_UNROLLED
from wavegpu.compiler.types import F32, I32
from wavegpu.errors import CompileError, Span
from wavegpu.isa.vocabulary import Op
from wavegpu.wbin.program import Program

SP = Span("k.hir", 7, 3, 1, "")


def c(v: int) -> hir.Const:
    return hir.Const(I32, SP, v)


def var(name: str) -> hir.Var:
    return hir.Var(I32, SP, name)


def gid() -> hir.Expr:
    return hir.Call(I32, SP, "global_id", (), None, (("axis", 0),))


def f32(e: hir.Expr) -> hir.Expr:
    return hir.Cast(F32, SP, e)


def add(a: hir.Expr, b: hir.Expr) -> hir.Expr:
    return hir.Binary(a.type, SP, hir.BinaryOp.ADD, a, b)


def mul(a: hir.Expr, b: hir.Expr) -> hir.Expr:
    return hir.Binary(a.type, SP, hir.BinaryOp.MUL, a, b)


def loop(v: str, stop: hir.Expr, body: tuple[hir.Stmt, ...], unroll: hir.Unroll = hir.Unroll.FULL) -> hir.For:
    return hir.For(SP, v, c(0), stop, c(1), body, unroll)


def kernel(body: tuple[hir.Stmt, ...], privates: tuple[hir.PrivateArray, ...], *names: str) -> hir.Function:
    params = (hir.Param("out", F32[:]), hir.Param("n", I32))
    variables = tuple((v, I32) for v in names)
    return hir.Function("k", params, body, variables, privates=privates)


def run(fn: hir.Function, threads: int = 4, n: int = 3, opt: int = 2) -> tuple[np.ndarray, int]:
    """out (threads x 4 floats) after one run, and the kernel's local-memory rows."""
    k = compile_hir(fn, Options(opt=opt))
    rows = sum(1 for i in k.instructions if i.spec.space == "local" and i.spec.op in (Op.LD, Op.ST))
    res = wg.emulate(Program((k,)), grid=1, workgroup=threads, memory=threads * 16, args=[0, n])
    return res.memory.view(np.float32).reshape(threads, 4), rows


def store_out(j: hir.Expr, value: hir.Expr) -> hir.Store:
    return hir.Store(SP, "out", add(mul(gid(), c(4)), j), value)


def tile(shape: tuple[int, ...] = (4,)) -> tuple[hir.PrivateArray, ...]:
    return (hir.PrivateArray("t", F32, shape, SP),)


@pytest.mark.parametrize("opt", [0, 2, 3])
def test_a_fully_unrolled_loop_keeps_the_array_in_registers(opt: int) -> None:
    body = (
        hir.PrivateInit(SP, "t", (hir.Const(F32, SP, 9.0),)),
        loop(
            "j",
            c(4),
            (
                hir.PrivateStore(
                    SP, "t", (var("j"),), add(hir.PrivateLoad(F32, SP, "t", (var("j"),)), f32(add(gid(), var("j"))))
                ),
            ),
        ),
        loop("j", c(4), (store_out(var("j"), hir.PrivateLoad(F32, SP, "t", (var("j"),))),)),
    )
    out, rows = run(kernel(body, tile(), "j"), opt=opt)
    assert rows == 0
    want = np.arange(4)[:, None] + np.arange(4)[None, :] + np.array([9, 0, 0, 0])
    np.testing.assert_array_equal(out, want.astype(np.float32))


def test_a_triangular_nest_unrolls_with_the_outer_counter_known() -> None:
    """for i in static_range(4): for j in static_range(i + 1): t[i][j] = i * 10 + j; then the
    row sums: every index constant, so no local memory."""
    inner = loop(
        "j",
        add(var("i"), c(1)),
        (hir.PrivateStore(SP, "t", (var("i"), var("j")), f32(add(mul(var("i"), c(10)), var("j")))),),
    )
    total = (
        hir.Assign(SP, "s", hir.Const(F32, SP, 0.0)),
        loop(
            "j",
            c(4),
            (hir.Assign(SP, "s", add(hir.Var(F32, SP, "s"), hir.PrivateLoad(F32, SP, "t", (var("i"), var("j"))))),),
        ),
        store_out(var("i"), hir.Var(F32, SP, "s")),
    )
    body = (hir.PrivateInit(SP, "t"), loop("i", c(4), (inner,)), loop("i", c(4), total))
    fn = kernel(body, tile((4, 4)), "i", "j")
    fn = hir.Function(fn.name, fn.params, fn.body, (*fn.variables, ("s", F32)), privates=fn.privates)
    out, rows = run(fn)
    assert rows == 0
    want = [sum(i * 10 + j for j in range(i + 1)) for i in range(4)]
    np.testing.assert_array_equal(out, np.tile(np.array(want, np.float32), (4, 1)))


def test_a_counter_the_body_assigns_is_no_constant() -> None:
    """The copies still run in order, but t[j] after `j = j + 0` is a run-time index: memory."""
    body = (
        hir.PrivateInit(SP, "t"),
        loop(
            "j", c(4), (hir.Assign(SP, "j", add(var("j"), c(0))), hir.PrivateStore(SP, "t", (var("j"),), f32(var("j"))))
        ),
        loop("k", c(4), (store_out(var("k"), hir.PrivateLoad(F32, SP, "t", (var("k"),))),)),
    )
    out, rows = run(kernel(body, tile(), "j", "k"))
    assert rows > 0
    np.testing.assert_array_equal(out, np.tile(np.arange(4, dtype=np.float32), (4, 1)))


@pytest.mark.parametrize(
    ("stop", "step", "message"),
    [
        (hir.Var(I32, SP, "n"), c(1), "needs constant bounds, but its stop is known only at run time"),
        (c(4), c(0), "has a step of 0"),
        (c(MAX_UNROLLED + 1), c(1), f"more than {MAX_UNROLLED} operations"),
        (c(2000), c(1), f"more than {MAX_UNROLLED} operations"),  # 2000 copies of 3 operations
    ],
)
def test_a_loop_that_must_unroll_and_cannot_is_refused_at_its_place(
    stop: hir.Expr, step: hir.Expr, message: str
) -> None:
    body = (hir.For(SP, "j", c(0), stop, step, (store_out(c(0), f32(var("j"))),), hir.Unroll.FULL),)
    with pytest.raises(CompileError) as e:
        compile_hir(kernel(body, (), "j"), Options())
    assert message in str(e.value) and "k.hir:7:3" in str(e.value)


def test_a_hint_that_cannot_unroll_stays_a_loop() -> None:
    """Unroll.HINT (#pragma unroll) with a run-time bound: an ordinary loop, t[j] in memory."""
    body = (
        hir.PrivateInit(SP, "t"),
        loop("j", var("n"), (hir.PrivateStore(SP, "t", (var("j"),), f32(mul(var("j"), c(2)))),), hir.Unroll.HINT),
        loop("k", c(4), (store_out(var("k"), hir.PrivateLoad(F32, SP, "t", (var("k"),))),)),
    )
    out, rows = run(kernel(body, tile(), "j", "k"), n=3)
    assert rows > 0
    np.testing.assert_array_equal(out, np.tile(np.array([0, 2, 4, 0], np.float32), (4, 1)))


def test_the_hir_printer_shows_arrays_and_unrolling() -> None:
    body = (
        hir.PrivateInit(SP, "t", (hir.Const(F32, SP, 1.0),)),
        loop(
            "j", c(2), (hir.PrivateStore(SP, "t", (c(1), var("j")), hir.PrivateLoad(F32, SP, "t", (c(0), var("j")))),)
        ),
    )
    text = hir.dump(kernel(body, tile((2, 2)), "j"))
    assert "  private t: f32[2][2]\n" in text
    assert "  init t = [1.0:f32]\n" in text
    assert "  for j in static_range(0:i32, 2:i32, 1:i32):\n      t[1:i32, j] = t[0:i32, j]\n" in text


def test_fold_int_wraps_and_refuses_what_is_not_constant() -> None:
    big = hir.Binary(I32, SP, hir.BinaryOp.MUL, c(1 << 30), c(4))
    assert hir.fold_int(big) == 0  # wraps at 32 bits
    assert hir.fold_int(add(var("i"), c(1)), {"i": 2}) == 3
    assert hir.fold_int(add(var("i"), c(1))) is None
    assert hir.fold_int(hir.Binary(I32, SP, hir.BinaryOp.TRUNC_DIV, c(-7), c(2))) == -3
    assert hir.fold_int(hir.Binary(I32, SP, hir.BinaryOp.FLOOR_MOD, c(-7), c(2))) == 1
    assert hir.fold_int(hir.Binary(I32, SP, hir.BinaryOp.TRUNC_DIV, c(1), c(0))) is None
