"""The wave reductions and prefix sum that the CUDA, HIP and Metal dialects share (cstyle.cuda.LOOPS),
executed: no GPU runs here, so the loops run on the OpenCL CPU runtime with the WV_* primitives
spelled in OpenCL (ballot, shuffle, shuffle-xor on a sub-group of W lanes), on random values and
random sets of active lanes. The whole-wave path (butterfly, Kogge-Stone scan) and the
active-lane loop must both give WAVE's result (DESIGN section 3: over the active lanes only,
f32 min/max ignore NaN and order -0 below +0)."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wavegpu.backends.cstyle import OpenCL
from wavegpu.backends.cstyle.cuda import LOOPS
from wavegpu.runtime import opencl

OK, WHY = opencl.available()
pytestmark = pytest.mark.skipif(not OK, reason=f"no OpenCL device: {WHY}")

SHIM = r"""
typedef uint wv_mask;
#define WV_LANES {w}
#define WV_ACTIVE() sub_group_ballot(1).x
#define WV_SHFL(m, x, i) sub_group_shuffle(x, (uint)(i))
#define WV_SHFL_XOR(m, x, k) sub_group_shuffle_xor(x, (uint)(k))
#define WV_FULL(m) ((m) == {full}u)
"""
KERNEL = r"""
__attribute__((intel_reqd_sub_group_size({w})))
__kernel void loops(__global uchar* mem, __global const uchar* cmem, uint op) {{
    uint n = get_global_size(0), g = get_global_id(0);
    __global uint* m = (__global uint*)mem;
    uint x = m[g];
    if (m[n + g]) {{
        wv_mask a = WV_ACTIVE();
        m[2 * n + g] = wv_reduce_u(a, x, (int)op);
        m[3 * n + g] = (uint)wv_reduce_i(a, (int)x, (op & 1) ? 1 : 2);
        m[4 * n + g] = as_uint(wv_reduce_f(a, as_float(x), (op & 1) ? 1 : 2));
        m[5 * n + g] = wv_prefix(a, x, get_sub_group_local_id());
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
        fr = pick(nums, key=lambda v: (_f(v), 0 if v == 0x80000000 else 1)) if nums else 0x7FC00000
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
    src = OpenCL().prelude() + SHIM.format(w=w, full=full) + LOOPS + KERNEL.format(w=w)
    mem = np.zeros(6 * n, np.uint32)
    mem[:n] = x
    mem[n : 2 * n] = on
    got = opencl.run(src, "loops", (groups, 1, 1), (w, 1, 1), mem.view(np.uint8), np.zeros(16, np.uint8), [op])
    res = got.view(np.uint32).reshape(6, n)
    for i, want in enumerate(_reference(w, x, on, op)):
        if want is None:
            continue
        f = int(res[4, i])
        f = 0x7FC00000 if math.isnan(_f(f)) else f  # the renderer canonicalises (wv_c32)
        assert (int(res[2, i]), int(res[3, i]), f, int(res[5, i])) == want, (OPS[op], i)
