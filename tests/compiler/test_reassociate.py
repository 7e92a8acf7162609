"""passes/reassociate.py: integer constants move out of shifts, products and casts, and local
accesses read `[x+c]` (compiler/lir/selection.py).

- Differential: random integer index expressions (adds, subtractions, shifts and products by
  constants, i32/u32 casts, wrapping past 2^31 and 2^32), stored through a computed index, give
  the same memory with the -O2 pipeline and with the same pipeline less `reassociate`.
- The pass never adds an instruction, and on `s[p + k]` reads it leaves one shift and one base
  register: each read is `[r+4k]`.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import wavegpu as wg
from wavegpu.compiler import Options, compile_source
from wavegpu.compiler.mir import dump, parse
from wavegpu.compiler.passes import pipeline, reassociate, run_passes
from wavegpu.isa.instruction import Mem
from wavegpu.isa.vocabulary import Op

WITHOUT = [p for p in pipeline(2) if p != "reassociate"]


def _expr(draw: st.DrawFn, depth: int) -> str:
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from(["t", "u", "v"]))
    kind = draw(st.sampled_from(["add", "sub", "shl", "mul", "u32", "i32", "addv"]))
    inner = _expr(draw, depth - 1)
    c = draw(st.sampled_from([0, 1, 3, 7, 64, 1000, 65535, 2**31 - 1, -1, -5, -(2**31)]))
    if kind == "add":
        return f"({inner} + {c})"
    if kind == "sub":
        return f"({inner} - {c})"
    if kind == "shl":
        return f"({inner} << {draw(st.integers(0, 31))})"
    if kind == "mul":
        return f"({inner} * {c})"
    if kind == "addv":
        return f"({inner} + {_expr(draw, depth - 1)})"
    return f"wg.{kind}({inner})"


@st.composite
def expressions(draw: st.DrawFn) -> str:
    return _expr(draw, 4)


def kernel(expr: str) -> str:
    return "\n".join(
        [
            "import wavegpu as wg",
            "@wg.kernel(workgroup=16)",
            "def k(out: wg.u32[:], s0: wg.i32):",
            "    t = wg.i32(wg.thread_id())",
            "    u = wg.u32(t) * 3",
            "    v = s0 - t",
            f"    x = wg.u32({expr})",
            "    out[t] = x",
            "    out[16 + (x & 15)] = x >> 7",
        ]
    )


def run(prog: wg.Program, s0: int) -> np.ndarray:
    mem = np.zeros(512, np.uint8)
    return wg.emulate(prog, grid=1, workgroup=16, memory=mem, args=[0, s0]).memory


@settings(max_examples=40, deadline=None)
@given(expressions(), st.sampled_from([0, 5, -7, 2**31 - 1, -(2**31)]))
def test_reassociation_keeps_every_bit(expr: str, s0: int) -> None:
    src = kernel(expr)
    try:
        with_pass = compile_source(src, Options(opt=2), lang="python")
    except wg.WaveError:  # outside the language (e.g. a signed/unsigned mix): both refuse it
        with pytest.raises(wg.WaveError):
            compile_source(src, Options(passes=WITHOUT), lang="python")
        return
    without = compile_source(src, Options(passes=WITHOUT), lang="python")
    assert np.array_equal(run(with_pass, s0), run(without, s0)), expr
    n_with = len(with_pass.kernels[0].instructions)
    assert n_with <= len(without.kernels[0].instructions), expr  # never an instruction more


def test_constants_leave_shifts_and_products() -> None:
    fn = parse(
        """
func @f(%0: u32 out[u32], %1: u32 x) {
bb0:
  %2 = add %1, 3:u32 : u32
  %3 = shl %2, 2:u32 : u32
  %4 = add %0, %3 : u32
  %5 = mul %2, 5:u32 : u32
  store.global %4, %5
  %6 = add %1, 7:u32 : u32
  %7 = shl %6, 2:u32 : u32
  %8 = add %0, %7 : u32
  store.global %8, %1
  ret
}
"""
    )
    assert reassociate.run(fn)
    run_passes(fn, ["cse", "dce"])
    text = dump(fn)
    # the add of 3 has two uses (a shift and a product): it stays, nothing is duplicated; the add
    # of 7 (one use) leaves its shift and then the buffer address: %0 + (%1 << 2) + 28
    assert "add %1, 3:u32" in text and "add %1, 7:u32" not in text
    assert text.count("shl") == 2 and text.count("mul") == 1
    assert "28:u32" in text


def test_local_reads_of_one_row_share_a_base_register() -> None:
    src = "\n".join(
        [
            "import wavegpu as wg",
            "@wg.kernel(workgroup=64)",
            "def k(a: wg.f32[:], out: wg.f32[:], p: wg.u32):",
            "    t = wg.u32(wg.thread_id())",
            "    s = wg.local_array(wg.f32, 1024)",
            "    for j in range(16):",
            "        s[t + 64 * j] = a[t + 64 * j]",
            "    wg.barrier()",
            "    r = p + t",
            "    out[t] = s[r + 1] + s[r + 66] * s[r + 131] - s[r + 197]",
        ]
    )
    prog = wg.compile(src, lang="python", opt=2)
    loads = [i for i in prog.kernels[0].instructions if i.spec.op is Op.LD and i.spec.space == "local"]
    assert len(loads) == 4
    mems = [next(o for o in i.operands if isinstance(o, Mem)) for i in loads]
    assert len({m.base for m in mems}) == 1  # one address register
    assert sorted(m.offset for m in mems) == [4, 264, 524, 788]  # the element offsets, in bytes
    mem = np.zeros(4096 * 4, np.uint8)
    mem[:4096] = np.arange(1024, dtype=np.float32).view(np.uint8)
    want = wg.emulate(wg.compile(src, lang="python", opt=0), grid=1, workgroup=64, memory=mem, args=[0, 4096, 100])
    got = wg.emulate(prog, grid=1, workgroup=64, memory=mem, args=[0, 4096, 100])
    assert np.array_equal(got.memory, want.memory)
