"""Part-aware coalescing (compiler/regalloc/parts.py): a `.v2`/`.v4` access's words are read and
written in the tuple's own registers, so the `.wbin` has no move next to a vector access; the
rewrite never costs a spill the plain allocation would not have, and the results are the same
bits at every register limit."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import wavegpu as wg
from wavegpu.compiler.frontends import FRONTENDS
from wavegpu.compiler.lir.lower import lower as lower_lir
from wavegpu.compiler.mir.lower import lower
from wavegpu.compiler.passes import pipeline, run_passes
from wavegpu.compiler.regalloc import chaitin, parts
from wavegpu.isa.instruction import Reg, Vec
from wavegpu.isa.vocabulary import Op

SRC = """
import wavegpu as wg
@wg.kernel(workgroup=16)
def k(a: wg.f32[:], c: wg.f32[:]):
    t = wg.u32(wg.thread_id())
    s = wg.local_array(wg.f32, 256)
    for q in wg.static_range(4):
        s[t * 4 + q] = a[t * 4 + q] * 2.0
    wg.barrier()
    x0 = s[t * 4]
    x1 = s[t * 4 + 1]
    x2 = s[t * 4 + 2]
    x3 = s[t * 4 + 3]
    y0 = a[64 + t * 4]
    y1 = a[64 + t * 4 + 1]
    y2 = a[64 + t * 4 + 2]
    y3 = a[64 + t * 4 + 3]
    c[t * 4] = x0 * y3 + x1
    c[t * 4 + 1] = x1 * y2 + x2
    c[t * 4 + 2] = x2 * y1 + x3
    c[t * 4 + 3] = x3 * y0 + x0
    c[64 + t * 4] = y0
    c[64 + t * 4 + 1] = y1
    c[64 + t * 4 + 2] = y2
    c[64 + t * 4 + 3] = y3
"""


def run(prog: wg.Program) -> np.ndarray:
    mem = np.zeros(2048, np.uint8)
    mem[:512] = np.arange(128, dtype=np.float32).view(np.uint8)
    return wg.emulate(prog, grid=1, workgroup=16, memory=mem, args=[0, 1024]).memory


def moves_after_vectors(prog: wg.Program) -> int:
    """Moves that copy a word out of the tuple a .v4 load just wrote, or into the tuple a .v4
    store is about to write."""
    insts = prog.kernels[0].instructions
    n = 0
    for i, x in enumerate(insts):
        v = next((o for o in x.operands if isinstance(o, Vec) and o.count > 1), None)
        if v is None:
            continue
        near = insts[i + 1 : i + 1 + v.count] if x.spec.op is Op.LD else insts[max(0, i - v.count) : i]
        for m in near:
            if m.spec.op is Op.MOV and any(isinstance(o, Reg) and v.n <= o.n < v.n + v.count for o in m.operands):
                n += 1
    return n


def test_the_wbin_has_no_move_next_to_a_vector_access() -> None:
    prog = wg.compile(SRC, lang="python", opt=3)
    text = wg.disassemble(prog)
    assert text.count(".v4.") >= 4, text  # the local and global reads, the two global writes
    assert moves_after_vectors(prog) == 0, text
    assert np.array_equal(run(prog), run(wg.compile(SRC, lang="python", opt=0)))


def _lir(max_registers: int) -> object:
    (hfn,) = FRONTENDS["python"].parse(SRC, "k.py")
    from wavegpu.compiler.inline import expand

    fn = lower(expand(hfn))
    run_passes(fn, pipeline(3), settings={"max_registers": max_registers})
    return lower_lir(fn, True)


@pytest.mark.parametrize("limit", [8, 10, 12, 16, 24, 64])
def test_folding_never_costs_a_spill_and_keeps_the_bits(limit: int) -> None:
    lf = _lir(limit)
    plain = copy.deepcopy(lf)
    try:
        want = chaitin._allocate(plain, limit).spilled
    except wg.WaveError:
        want = None  # the tuples do not fit at all: the compiler dissolves the accesses
    try:
        got = chaitin.allocate(lf, limit).spilled
    except wg.WaveError:
        assert want is None
        return
    assert want is None or got <= want
    prog = wg.compile(SRC, lang="python", opt=3, max_registers=limit)
    assert np.array_equal(run(prog), run(wg.compile(SRC, lang="python", opt=0)))


def test_fold_reports_what_it_removed() -> None:
    lf = _lir(256)
    before = sum(1 for i in lf.insts if i.key.startswith("mov"))
    removed = parts.fold(lf)
    assert removed >= 8  # 4 after each .v4 read at least
    assert sum(1 for i in lf.insts if i.key.startswith("mov")) == before - removed
