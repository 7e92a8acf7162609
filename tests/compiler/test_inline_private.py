"""compiler/inline.py with per-thread arrays (hir.PrivateArray): a helper that takes the caller's
per-thread array (by reference, as an ArrayType of space "private"), a helper that declares its
own (one set per call, renamed so calls never share it), and helper calls inside per-thread array
stores, loads and initialisers (their evaluation order kept), on hand-built HIR against the
emulator, at -O0 and -O2 (in registers where the indices fold, in local memory where they do not)."""

from __future__ import annotations

import numpy as np
import pytest

import wavegpu as wg
from wavegpu.compiler import Options, compile_functions, hir
from wavegpu.compiler.builtins import VOID
from wavegpu.compiler.inline import Helpers, expand
from wavegpu.compiler.types import I32, U32, ArrayType
from wavegpu.errors import Span

SP = Span("<hir>", 1, 1, 1, "")
OUT = ArrayType(U32, "global")
PRIV = ArrayType(U32, "private")
Add, Mul = hir.BinaryOp.ADD, hir.BinaryOp.MUL


def v(name: str) -> hir.Var:
    return hir.Var(U32, SP, name)


def c(x: int) -> hir.Const:
    return hir.Const(U32, SP, x)


def b(op: hir.BinaryOp, x: hir.Expr, y: hir.Expr) -> hir.Expr:
    return hir.Binary(U32, SP, op, x, y)


def tid() -> hir.Expr:
    return hir.Cast(U32, SP, hir.Call(I32, SP, "thread_id", (), None, (("axis", 0),)))


# fill(a, s): a[i] = s * i + 1 for i in 0..4 (writes the caller's per-thread array)
FILL = hir.Helper(
    "fill",
    "fill",
    (hir.Param("a", PRIV), hir.Param("s", U32)),
    None,
    (
        hir.For(
            SP, "i", c(0), c(4), c(1), (hir.PrivateStore(SP, "a", (v("i"),), b(Add, b(Mul, v("s"), v("i")), c(1))),)
        ),
    ),
    (("i", U32),),
)
# pair(x): its own t[2] = {x, x + 1}; returns t[0] * t[1] (a fresh t per call)
PAIR = hir.Helper(
    "pair",
    "pair",
    (hir.Param("x", U32),),
    U32,
    (
        hir.PrivateInit(SP, "t", (v("x"), b(Add, v("x"), c(1)))),
        hir.Return(SP, b(Mul, hir.PrivateLoad(U32, SP, "t", (c(0),)), hir.PrivateLoad(U32, SP, "t", (c(1),)))),
    ),
    (),
    privates=(hir.PrivateArray("t", U32, (2,), SP),),
)


def kernel(dynamic: bool) -> hir.Function:
    """t[4]; fill(t, tid); t[k] = t[k] + pair(t[k]) (k = 1, or tid % 4 when dynamic); then
    o[tid] = t[0] + t[1] + t[2] + t[3] + pair(tid)."""
    k: hir.Expr = b(hir.BinaryOp.TRUNC_REM, v("j"), c(4)) if dynamic else c(1)
    total: hir.Expr = hir.PrivateLoad(U32, SP, "t", (c(0),))
    for i in (1, 2, 3):
        total = b(Add, total, hir.PrivateLoad(U32, SP, "t", (c(i),)))
    body = (
        hir.Assign(SP, "j", tid()),
        hir.PrivateInit(SP, "t", ()),
        hir.ExprStmt(SP, hir.Invoke(VOID, SP, "fill", (hir.ArrayArg("t", PRIV), v("j")))),
        hir.PrivateStore(
            SP,
            "t",
            (k,),
            b(
                Add,
                hir.PrivateLoad(U32, SP, "t", (k,)),
                hir.Invoke(U32, SP, "pair", (hir.PrivateLoad(U32, SP, "t", (k,)),)),
            ),
        ),
        hir.Store(SP, "o", v("j"), b(Add, total, hir.Invoke(U32, SP, "pair", (v("j"),)))),
    )
    return hir.Function(
        "k",
        (hir.Param("o", OUT),),
        body,
        (("j", U32),),
        helpers=(FILL, PAIR),
        privates=(hir.PrivateArray("t", U32, (4,), SP),),
    )


def reference(j: int, dynamic: bool) -> int:
    t = [j * i + 1 for i in range(4)]
    k = j % 4 if dynamic else 1
    t[k] = (t[k] + t[k] * (t[k] + 1)) & 0xFFFFFFFF
    return (sum(t) + j * (j + 1)) & 0xFFFFFFFF


@pytest.mark.parametrize("opt", [0, 2])
@pytest.mark.parametrize("dynamic", [False, True])
def test_helpers_take_declare_and_are_called_inside_per_thread_arrays(opt: int, dynamic: bool) -> None:
    fn = kernel(dynamic)
    flat = expand(fn)
    names = [pa.name for pa in flat.privates]
    assert names[0] == "t" and len(names) == 3 and len(set(names)) == 3  # one t per call of pair
    assert not any(isinstance(e, hir.Invoke) for s in flat.body for e in _exprs(s))
    prog = compile_functions([fn], Options(opt=opt))
    res = wg.emulate(prog, grid=(1, 1, 1), workgroup=(32, 1, 1), memory=128, args=[0])
    got = res.memory.view(np.uint32)[:32].tolist()
    assert got == [reference(j, dynamic) for j in range(32)]


def test_a_helper_writing_a_passed_per_thread_array_is_not_pure() -> None:
    h = Helpers("k")
    assert not h.pure(FILL)
    h.instances["pair"] = PAIR
    assert h.pure(PAIR)  # writes only its own array


def _exprs(s: hir.Stmt | hir.Expr):  # type: ignore[no-untyped-def]
    stack = [s]
    while stack:
        x = stack.pop()
        if isinstance(x, hir.Expr):
            yield x
        stack.extend(hir._children(x))


# set_row(a, x): a[0] = x; a[1] = x + 1 (a row of the caller's 2-D per-thread array); pass_on(a) calls
# set_row(a, 5): the row passed on keeps its leading index
SET_ROW = hir.Helper(
    "set_row",
    "set_row",
    (hir.Param("a", PRIV), hir.Param("x", U32)),
    None,
    (hir.PrivateStore(SP, "a", (c(0),), v("x")), hir.PrivateStore(SP, "a", (c(1),), b(Add, v("x"), c(1)))),
    (),
)
PASS_ON = hir.Helper(
    "pass_on", "pass_on", (hir.Param("a", PRIV),), None,
    (hir.ExprStmt(SP, hir.Invoke(VOID, SP, "set_row", (hir.ArrayArg("a", PRIV), c(5)))),), (),
)  # fmt: skip


@pytest.mark.parametrize("opt", [0, 2])
@pytest.mark.parametrize("dynamic", [False, True])
def test_a_row_of_a_2d_per_thread_array_is_passed_by_reference(opt: int, dynamic: bool) -> None:
    """ArrayArg.index: set_row(t[r], bump()) writes t[r][0..1] with r taken where the argument
    stands (bump() assigns r = 1 before set_row runs: the row stays r's value before it);
    pass_on(t[1 - r0]) passes its row on to set_row, which writes it."""
    r: hir.Expr = b(hir.BinaryOp.TRUNC_REM, v("j"), c(2)) if dynamic else c(0)
    bump = hir.Helper("bump", "bump", (), U32, (hir.Assign(SP, "r", c(1)), hir.Return(SP, v("j"))), ())
    other = b(hir.BinaryOp.SUB, c(1), v("r0"))
    body = (
        hir.Assign(SP, "j", tid()),
        hir.Assign(SP, "r", r),
        hir.Assign(SP, "r0", r),
        hir.PrivateInit(SP, "t", ()),
        hir.ExprStmt(
            SP, hir.Invoke(VOID, SP, "set_row", (hir.ArrayArg("t", PRIV, (v("r"),)), hir.Invoke(U32, SP, "bump", ())))
        ),
        hir.ExprStmt(SP, hir.Invoke(VOID, SP, "pass_on", (hir.ArrayArg("t", PRIV, (other,)),))),
        *(
            hir.Store(SP, "o", b(Add, b(Mul, v("j"), c(4)), c(2 * p + q)), hir.PrivateLoad(U32, SP, "t", (c(p), c(q))))
            for p in (0, 1)
            for q in (0, 1)
        ),
    )
    fn = hir.Function(
        "k", (hir.Param("o", OUT),), body, (("j", U32), ("r", U32), ("r0", U32)),
        helpers=(SET_ROW, PASS_ON, bump), privates=(hir.PrivateArray("t", U32, (2, 2), SP),),
    )  # fmt: skip
    text = hir.dump(fn)
    assert "call set_row(t[r], call bump():u32)" in text and "call pass_on(t[(1:u32 sub r0)])" in text
    prog = compile_functions([fn], Options(opt=opt))
    assert dynamic or prog.kernels[0].local_memory == 0  # constant rows: registers
    res = wg.emulate(prog, grid=(1, 1, 1), workgroup=(32, 1, 1), memory=512, args=[0])
    got = res.memory.view(np.uint32)[:128].reshape(32, 4)
    for j in range(32):
        t = [[0, 0], [0, 0]]
        r0 = j % 2 if dynamic else 0
        t[r0] = [j, j + 1]
        t[1 - r0] = [5, 6]
        assert got[j].tolist() == [*t[0], *t[1]], j


def test_a_helper_writing_only_its_own_per_thread_array_is_pure() -> None:
    own = hir.Helper(
        "own", "own", (hir.Param("x", U32),), U32,
        (hir.PrivateInit(SP, "s", ()), hir.PrivateStore(SP, "s", (c(0),), v("x")),
         hir.Return(SP, hir.PrivateLoad(U32, SP, "s", (c(0),)))),
        (), privates=(hir.PrivateArray("s", U32, (1,), SP),),
    )  # fmt: skip
    h = Helpers("k")
    assert h.pure(own) and not h.pure(SET_ROW)
    init_param = hir.Helper("ip", "ip", (hir.Param("a", PRIV),), None, (hir.PrivateInit(SP, "a", (c(1),)),), ())
    assert not h.pure(init_param)


# outer(a, s): k = s + 1; return peek() where the closure peek (defined inside outer) reads outer's
# array a and its variable k and parameter s: peek's body is renamed with outer's at each call
PEEK = hir.Helper(
    "peek",
    "peek",
    (),
    U32,
    (hir.Return(SP, b(Add, hir.PrivateLoad(U32, SP, "a", (c(1),)), b(Mul, v("k"), v("s")))),),
    (),
)
OUTER = hir.Helper(
    "outer",
    "outer",
    (hir.Param("a", PRIV), hir.Param("s", U32)),
    U32,
    (hir.Assign(SP, "k", b(Add, v("s"), c(1))), hir.Return(SP, hir.Invoke(U32, SP, "peek", ()))),
    (("k", U32),),
)


@pytest.mark.parametrize("opt", [0, 2])
def test_a_closure_inside_a_helper_reads_the_helpers_names_at_each_call(opt: int) -> None:
    """A nested helper that captures its enclosing helper's parameters, variables and array
    parameter is called as a copy renamed as the enclosing body is (one per call site), while the
    kernel's own names of the same spelling (`k`, `s`, `a`) stay the kernel's."""
    body = (
        hir.Assign(SP, "j", tid()),
        hir.Assign(SP, "k", c(100)),
        hir.Assign(SP, "s", c(7)),
        hir.PrivateInit(SP, "t", (c(5), v("j"))),
        hir.PrivateInit(SP, "a", (c(9), b(Add, v("j"), c(2)))),
        hir.Store(
            SP,
            "o",
            v("j"),
            b(
                Add,
                b(
                    Add,
                    hir.Invoke(U32, SP, "outer", (hir.ArrayArg("t", PRIV), v("j"))),
                    hir.Invoke(U32, SP, "outer", (hir.ArrayArg("a", PRIV), c(3))),
                ),
                b(Add, v("k"), v("s")),
            ),
        ),
    )
    fn = hir.Function(
        "k",
        (hir.Param("o", OUT),),
        body,
        (("j", U32), ("k", U32), ("s", U32)),
        helpers=(OUTER, PEEK),
        privates=(hir.PrivateArray("t", U32, (2,), SP), hir.PrivateArray("a", U32, (2,), SP)),
    )
    prog = compile_functions([fn], Options(opt=opt))
    res = wg.emulate(prog, grid=(1, 1, 1), workgroup=(32, 1, 1), memory=128, args=[0])
    got = res.memory.view(np.uint32)[:32].tolist()
    assert got == [(j + (j + 1) * j) + ((j + 2) + 4 * 3) + 107 for j in range(32)]
