"""compiler/inline.py with per-thread arrays (hir.PrivateArray): a helper call in a per-thread
array's index, stored value or initialiser is inlined before the access, in evaluation order; a
helper body (a closure) that reads and writes its caller's per-thread array keeps the array and
renames its own names inside the indices and values. Hand-built HIR, run on the emulator."""

from __future__ import annotations

import numpy as np
import pytest
from hir_build import OUT, SP
from hir_build import const as _c
from hir_build import tid as _tid
from hir_build import var as _v

import wavegpu as wg
from wavegpu.compiler import Options, compile_functions, hir
from wavegpu.compiler.inline import expand
from wavegpu.compiler.types import U32

ADD = hir.BinaryOp.ADD


# twice(p) = p + p
TWICE = hir.Helper(
    "twice", "twice", (hir.Param("p", U32),), U32, (hir.Return(SP, hir.Binary(U32, SP, ADD, _v("p"), _v("p"))),), ()
)
# put(p): t[p % 2] = t[0] + p (a closure over the kernel's per-thread array t), then returns 1
PUT = hir.Helper(
    "put",
    "put",
    (hir.Param("p", U32),),
    U32,
    (
        hir.PrivateStore(
            SP,
            "t",
            (hir.Binary(U32, SP, hir.BinaryOp.TRUNC_REM, _v("p"), _c(2)),),
            hir.Binary(U32, SP, ADD, hir.PrivateLoad(U32, SP, "t", (_c(0),)), _v("p")),
        ),
        hir.Return(SP, _c(1)),
    ),
    (),
)


@pytest.mark.parametrize("opt", [0, 2])
def test_helpers_in_per_thread_array_accesses(opt: int) -> None:
    j = _v("j")
    body = (
        hir.Assign(SP, "j", _tid()),
        # t = {twice(j), 0}; t[1] = twice(j + 1); t[put(j)] += ... through a load indexed by a call
        hir.PrivateInit(SP, "t", (hir.Invoke(U32, SP, "twice", (j,)),)),
        hir.PrivateStore(SP, "t", (_c(1),), hir.Invoke(U32, SP, "twice", (hir.Binary(U32, SP, ADD, j, _c(1)),))),
        hir.Assign(SP, "x", hir.PrivateLoad(U32, SP, "t", (hir.Invoke(U32, SP, "put", (j,)),))),
        hir.Store(SP, "o", j, hir.PrivateLoad(U32, SP, "t", (_c(0),))),
        hir.Store(SP, "o", hir.Binary(U32, SP, ADD, j, _c(8)), hir.PrivateLoad(U32, SP, "t", (_c(1),))),
        hir.Store(SP, "o", hir.Binary(U32, SP, ADD, j, _c(16)), _v("x")),
    )
    fn = hir.Function(
        "k", (hir.Param("o", OUT),), body, (("j", U32), ("x", U32)), helpers=(TWICE, PUT),
        privates=(hir.PrivateArray("t", U32, (2,), SP),),
    )  # fmt: skip
    text = hir.dump(expand(fn))
    assert "call " not in text and "put$p" in text and "twice$p" in text
    prog = compile_functions([fn], Options(opt=opt))
    res = wg.emulate(prog, grid=(1, 1, 1), workgroup=(8, 1, 1), memory=96, args=[0])
    got = res.memory.view(np.uint32).reshape(3, 8)
    t0, t1 = [], []
    for k in range(8):
        t = [2 * k, 2 * (k + 1)]
        t[k % 2] = t[0] + k  # put(k), before the load it indexes
        t0.append(t[0])
        t1.append(t[1])
    assert got[0].tolist() == t0
    assert got[1].tolist() == t1
    assert got[2].tolist() == t1  # x = t[put(j)] = t[1]: put returns 1
