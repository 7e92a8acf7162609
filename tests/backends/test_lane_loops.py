"""The wave reductions and prefix sum that the CUDA, HIP and Metal dialects share (cstyle.cuda.LOOPS),
executed: no GPU runs here, so the loops run on the OpenCL CPU runtime with the WV_* primitives
spelled in OpenCL (ballot, shuffle, shuffle-xor on a sub-group of W lanes), on random values and
random sets of active lanes. The whole-wave path (butterfly, Kogge-Stone scan) and the
active-lane loop must both give WAVE's result (DESIGN section 3: over the active lanes only,
f32 min/max ignore NaN and order -0 below +0)."""

from __future__ import annotations

import math
import struct
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import wavegpu as wg
from wavegpu.backends.cstyle import CRenderer, OpenCL
from wavegpu.backends.cstyle.cuda import LaneLoops, lane_loops
from wavegpu.backends.cstyle.render import EXPR
from wavegpu.backends.lift import If, Loop, Stmt, lift, mask_plan
from wavegpu.runtime import opencl
from wavegpu.wbin import Kernel

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "emulator"))
import test_differential as D

EX = Path(__file__).resolve().parents[2] / "examples"
OK, WHY = opencl.available()
pytestmark = pytest.mark.skipif(not OK, reason=f"no OpenCL device: {WHY}")

SHIM = r"""
typedef uint wv_mask;
#define WV_LANES {w}
#define WV_ENTRY() sub_group_ballot(1).x
#define WV_BALLOT(m, p) (sub_group_ballot(p).x & (m))
#define WV_SHFL(m, x, i) sub_group_shuffle(x, (uint)(i))
#define WV_SHFL_XOR(m, x, k) sub_group_shuffle_xor(x, (uint)(k))
#define WV_FULL(m) ((m) == {full}u)
#define WV_ANY(m, p) (WV_BALLOT(m, p) != 0u)
#define WV_ALL(m, p) (WV_BALLOT(m, p) == (m))
"""
KERNEL = r"""
__attribute__((intel_reqd_sub_group_size({w})))
__kernel void loops(__global uchar* mem, __global const uchar* cmem, uint op) {{
    uint n = get_global_size(0), g = get_global_id(0);
    __global uint* m = (__global uint*)mem;
    uint x = m[g];
    if (m[n + g]) {{
        wv_mask a = WV_BALLOT(WV_ENTRY(), 1);
        m[2 * n + g] = op == 0 ? wv_reduce_add_u32(a, x) : op == 1 ? wv_reduce_min_u32(a, x)
            : op == 2 ? wv_reduce_max_u32(a, x) : op == 3 ? wv_reduce_and_b32(a, x)
            : op == 4 ? wv_reduce_or_b32(a, x) : wv_reduce_xor_b32(a, x);
        m[3 * n + g] = (op & 1) ? wv_reduce_min_s32(a, x) : wv_reduce_max_s32(a, x);
        m[4 * n + g] = (op & 1) ? wv_reduce_min_f32(a, x) : wv_reduce_max_f32(a, x);
        m[5 * n + g] = wv_prefix_add_u32(a, x, get_sub_group_local_id());
    }}
}}
"""
OPS = ["add", "min", "max", "and", "or", "xor"]
FLOATS = [0x7FC00000, 0xFFC00001, 0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x3F800000, 0xBF800000, 1]


def _f(u: int) -> float:
    return float(struct.unpack("<f", struct.pack("<I", u))[0])


def _reference(w: int, x: list[int], on: list[bool], op: int) -> list[tuple[int, int, int, int] | None]:
    out: list[tuple[int, int, int, int] | None] = []
    for base in range(0, len(x), w):
        lanes = [i for i in range(base, base + w) if on[i]]
        if not lanes:
            out += [None] * w
            continue
        us = [x[i] for i in lanes]
        ss = [v - (1 << 32) if v >> 31 else v for v in us]
        acc = {0: sum(us) & 0xFFFFFFFF, 1: min(us), 2: max(us), 3: 0xFFFFFFFF}.get(op, 0)
        for v in us if op >= 3 else []:
            acc = acc & v if op == 3 else acc | v if op == 4 else acc ^ v
        si = (min(ss) if op & 1 else max(ss)) & 0xFFFFFFFF
        nums = [v for v in us if not math.isnan(_f(v))]
        pick = min if op & 1 else max
        fr = pick(nums, key=lambda v: (_f(v), 0 if v == 0x80000000 else 1)) if nums else 0x7FFFFFFF
        for i in range(base, base + w):
            if on[i]:
                pre = sum(x[j] for j in lanes if j < i) & 0xFFFFFFFF
                out.append((acc, si, fr, pre))
            else:
                out.append(None)
    return out


@settings(max_examples=30, deadline=None)
@given(
    w=st.sampled_from([8, 16, 32]),
    groups=st.integers(1, 3),
    op=st.integers(0, 5),
    data=st.data(),
)
def test_lane_loops_reduce_and_scan_over_the_active_lanes(w: int, groups: int, op: int, data: st.DataObject) -> None:
    n = w * groups
    values = st.one_of(st.sampled_from(FLOATS), st.integers(0, 0xFFFFFFFF))
    x = data.draw(st.lists(values, min_size=n, max_size=n))
    # whole waves take the butterfly path, the others the loop over their active lanes
    on = data.draw(st.one_of(st.just([True] * n), st.lists(st.booleans(), min_size=n, max_size=n)))
    full = (1 << w) - 1
    src = OpenCL().prelude() + SHIM.format(w=w, full=full) + lane_loops(EXPR) + KERNEL.format(w=w)
    mem = np.zeros(6 * n, np.uint32)
    mem[:n] = x
    mem[n : 2 * n] = on
    got = opencl.run(
        src, "loops", (groups, 1, 1), (w, 1, 1), mem.view(np.uint8), np.zeros(16, np.uint8), [op], checked=False
    )
    res = got.view(np.uint32).reshape(6, n)
    for i, want in enumerate(_reference(w, x, on, op)):
        if want is None:
            continue
        # min.f32 and max.f32 combine: a wave of NaNs gives the canonical NaN
        assert (int(res[2, i]), int(res[3, i]), int(res[4, i]), int(res[5, i])) == want, (OPS[op], i)


# ---------------------------------------------------------------- WAVE's active set, tracked
# The CUDA, HIP and Metal dialects track WAVE's active set in wv_mask variables (lift.MaskPlan)
# instead of asking the hardware which lanes run. The same rendering, with the WV_* primitives
# spelled in OpenCL, runs here on the CPU runtime against the emulator: masks split at ifs,
# break/continue deferred to the latch, lanes that return dropping out.
class _Lanes(LaneLoops, OpenCL):
    name = "opencl-lanes"

    def __init__(self, w: int) -> None:
        self.w = w

    def prelude(self) -> str:
        full = (1 << self.w) - 1
        return OpenCL().prelude() + SHIM.format(w=self.w, full=full) + self.loops()


def run_tracked(k: Kernel, w: int, threads: int, mem: np.ndarray, args: list[int]) -> np.ndarray:
    r = CRenderer(_Lanes(w)).render(k, w, nargs=len(args))
    assert "WV_ACTIVE" not in r.source
    return opencl.run(r.source, r.entry, (1, 1, 1), (threads, 1, 1), mem, np.zeros(16, np.uint8), args)


DIVERGENT_SCAN = """
.kernel scan_in_if
    mov.u32 r1, %tid.x
    shl.b32 r2, r1, 2
    ld.global.u32 r3, [r2]
    and.b32 r4, r3, 1
    setp.ne.u32 p0, r4, 0
    mov.u32 r5, 0xDEAD
    if p0
        wave.prefix.add.u32 r5, r3
        wave.reduce.max.u32 r6, r3
        add.u32 r5, r5, r6
    else
        wave.ballot.b32 r5, p0
        wave.reduce.add.u32 r6, r3
        xor.b32 r5, r5, r6
    endif
    st.global.u32 [r2+256], r5
    ret
.end
"""

# the Rust toolchain's flat dialect: inputs preset in r0.. (no .param), wave operations inside a
# loop that lanes leave at different trips, behind an early return of some lanes
FLAT_WAVES = """
.kernel flat_waves
.registers 16
    mov_sr r2, sr_thread_id_x
    mov_imm r3, 4
    imul r4, r2, r3
    iadd r5, r0, r4
    device_load_u32 r6, r5
    mov_imm r7, 7
    and r8, r6, r7
    mov_imm r9, 0
    icmp_eq p1, r8, r9
    @p1 return
    mov_imm r10, 0
    mov_imm r13, 0
    loop
        icmp_ge p2, r10, r8
        break p2
        wave_prefix_sum r11, r6
        wave_reduce_add r12, r11
        iadd r13, r13, r12
        mov_imm r14, 3
        and r14, r10, r14
        icmp_eq p3, r14, r9
        mov_imm r15, 1
        iadd r10, r10, r15
        continue p3
        wave_reduce_max r12, r6
        icmp_lt p0, r12, r11
        wave_ballot r15, p0
        iadd r13, r13, r15
    endloop
    iadd r5, r1, r4
    device_store_u32 r5, r13
    halt
.end
"""


@pytest.mark.parametrize("w", [8, 16, 32])
def test_prefix_sum_in_a_divergent_if_on_the_tracked_set(w: int) -> None:
    k = wg.assemble(DIVERGENT_SCAN, "scan.wave").kernels[0]
    mem = np.zeros(128, np.uint32)
    mem[:64] = np.random.default_rng(w).integers(0, 1000, 64)
    want = wg.launch(k, workgroup=64, memory=mem.view(np.uint8), wave_width=w).memory
    got = run_tracked(k, w, 64, mem.view(np.uint8), [])
    assert np.array_equal(want, got)
    for device in ("opencl", "sycl"):  # the sub-group built-ins of those backends, on the same program
        if device in wg.devices():
            out = wg.launch(k, device=device, workgroup=64, memory=mem.view(np.uint8), wave_width=w).memory
            assert np.array_equal(want, out), device


def test_the_flat_dialects_wave_kernel_on_the_tracked_set() -> None:
    k = wg.assemble(FLAT_WAVES, "flat.wave").kernels[0]
    n = 64
    mem = np.zeros(2 * n, np.uint32)
    mem[:n] = np.random.default_rng(5).integers(0, 1 << 20, n)
    # a trip count of 0 makes a lane return early (before any wave operation)
    mem[3] = int(mem[3]) & 0xFFFFFFF8
    args = [0, 4 * n]
    want = wg.launch(k, workgroup=n, memory=mem.view(np.uint8), args=args, wave_width=32).memory
    got = run_tracked(k, 32, n, mem.view(np.uint8), args)
    assert np.array_equal(want, got)


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_random_structured_programs_on_the_tracked_set(data: st.DataObject) -> None:
    W = data.draw(st.sampled_from([8, 16]))
    threads = W * 2
    D.SHARED_BASE = threads * D.SLOT_WORDS * 4
    seed_vals = data.draw(st.lists(st.integers(0, 2**32 - 1), min_size=24, max_size=24))
    body = [i for i in data.draw(D.block()) if i.spec.cls != "atomic"]
    if any(i.spec.cls == "control" for i in body):
        from wavegpu.isa.structure import check_structure

        if check_structure(body):
            return
    k = Kernel("rnd", tuple(D.prologue(seed_vals) + body + D.epilogue()), 19, 8)
    mem = np.random.default_rng(data.draw(st.integers(0, 2**31))).integers(0, 256, D.SHARED_BASE + 16, dtype=np.uint8)
    try:  # programs with undefined behaviour (inactive shuffle sources, ...) may differ: skip them
        want = wg.launch(k, workgroup=threads, memory=mem, wave_width=W, check=True).memory
    except wg.UndefinedBehaviour:
        assume(False)
    except wg.Trap as e:
        assume(not e.reason.startswith(("endless loop", "instruction budget")))
        raise
    got = run_tracked(k, W, threads, mem, [])
    assert np.array_equal(want, got), wg.disassemble(k)


def _tree(text: str) -> list:  # type: ignore[type-arg]
    return lift(wg.assemble(text, "t.wave").kernels[0])


def test_mask_plan_tracks_only_regions_that_read_the_active_set() -> None:
    body = """
.kernel k
    mov.u32 r1, %tid.x
    setp.lt.u32 p0, r1, 5
    mov.u32 r2, 0
    loop
        setp.ge.u32 p1, r2, 10
        break p1
        if p0
            add.u32 r3, r3, r2
        endif
        add.u32 r2, r2, 1
    endloop
    {tail}
    ret
.end
"""
    plan = mask_plan(_tree(body.format(tail="")))  # no wave operation: nothing keeps a mask
    assert not plan.root and not plan.tracked
    plan = mask_plan(_tree(body.format(tail="wave.reduce.add.u32 r4, r3")))  # at the top only
    assert plan.root and not plan.tracked
    tree = _tree(body.replace("add.u32 r3, r3, r2", "wave.reduce.add.u32 r3, r2").format(tail=""))
    plan = mask_plan(tree)
    loop = next(n for n in tree if isinstance(n, Loop))
    inner_if = next(n for n in loop.body if isinstance(n, If))
    assert plan.root and plan.tracks(loop) and plan.tracks(inner_if) and not plan.escaping
    brk = next(n for n in loop.body if isinstance(n, Stmt) and plan.leaves(n))
    assert brk.inst.spec.nest.name == "BREAK"


def test_mask_plan_an_if_that_leaves_a_tracked_loop_is_tracked() -> None:
    text = """
.kernel k
    mov.u32 r1, %tid.x
    setp.lt.u32 p0, r1, 5
    loop
        if p0
            if p0
                break p0
            endif
        endif
        wave.reduce.add.u32 r3, r1
        loop
            break p0
        endloop
    endloop
    ret
.end
"""
    tree = _tree(text)
    plan = mask_plan(tree)
    outer = tree[-2] if isinstance(tree[-2], Loop) else next(n for n in tree if isinstance(n, Loop))
    if1 = next(n for n in outer.body if isinstance(n, If))
    if2 = if1.then[0]
    inner = next(n for n in outer.body if isinstance(n, Loop))
    assert plan.tracks(outer) and plan.tracks(if1) and plan.tracks(if2)
    assert plan.leaves(if1) and plan.leaves(if2)
    assert not plan.tracks(inner)  # its break leaves a loop that reads no active set


@pytest.mark.parametrize("target", ["cuda", "hip", "metal"])
def test_c_dialects_never_ask_the_hardware_for_the_active_set(target: str) -> None:
    from wavegpu.backends import translate

    k = wg.assemble(DIVERGENT_SCAN, "scan.wave").kernels[0]
    src = translate(k, target)
    body = src[src.index("scan_in_if(") :]
    assert "__activemask" not in src and "WV_ACTIVE" not in src and "simd_active_threads_mask() " not in body
    # the then-mask is the ballot of p0 among the entry mask; wave operations ballot within it
    assert "wv_mask wv_m1 = WV_BALLOT(wv_m0, p0);" in body and "wv_mask wv_m2 = wv_m0 & ~wv_m1;" in body
    assert body.count("WV_BALLOT(wv_m1, true)") == 2 and body.count("WV_BALLOT(wv_m2, true)") == 2


def test_loops_without_wave_operations_render_plain() -> None:
    from wavegpu.backends import translate

    src = translate(wg.assemble((EX / "sgemm_tiled.wave").read_text(), "s.wave"), "cuda", kernel=0)
    body = src[src.index('extern "C"') :]
    assert "wv_mask" not in body and "WV_BALLOT" not in body and "wv_brk" not in body


def test_lane_loops_and_atomics_combine_as_the_semantics_table_says() -> None:
    """The C dialects derive each reduction's combine (and the f32 atomic add's) from the ALU row
    computing the same operator (render.alu_row): that row's semantics must be the table's
    combine, on specials and random bits; and the identity must leave every value unchanged."""
    from wavegpu.backends.cstyle.render import alu_row
    from wavegpu.isa import semantics as sem
    from wavegpu.isa.types import DataType
    from wavegpu.isa.vocabulary import AtomOp

    rng = np.random.default_rng(3)
    vals = np.array([*FLOATS, 0x7FFFFFFF, 0xFFFFFFFF, 5, 0x80000001], np.uint32)
    a = np.concatenate([np.repeat(vals, vals.size), rng.integers(0, 2**32, 200, dtype=np.uint64).astype(np.uint32)])
    b = np.concatenate([np.tile(vals, vals.size), rng.integers(0, 2**32, 200, dtype=np.uint64).astype(np.uint32)])
    ops = [(red.op, red.dtype, red.combine, red.identity) for red in sem.REDUCTIONS.values()]
    add = sem.ATOMICS[(AtomOp.ADD, DataType.F32)]
    ops.append((add.op, add.dtype, add.combine, None))
    for op, dtype, comb, identity in ops:
        row = sem.SEMANTICS[alu_row(op, dtype)]
        with np.errstate(invalid="ignore", over="ignore"):  # inf - inf and overflow are values here
            assert np.array_equal(row(a, b), comb(a, b)), (op, dtype)
        if identity is not None:
            x = np.array([v for v in vals if not (dtype is DataType.F32 and math.isnan(_f(int(v))))], np.uint32)
            assert np.array_equal(comb(np.full_like(x, identity), x), x), (op, dtype)
