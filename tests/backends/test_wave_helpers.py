"""The wave-operation helpers of the CUDA, HIP and Metal dialects (cstyle.cuda.LaneLoops and the
WV_* primitives of each header) must call every sync primitive uniformly: a `__shfl_sync(m, ..)`
is undefined unless every lane m names executes that same call (independent thread scheduling),
an AMD shuffle reads 0 from a lane a divergent branch switched off, a Metal one undefined bits.
The H200 showed it: CUDA C++'s exclusive prefix sum over a partial mask shuffled under
`i < me`. No GPU runs here, so two checks that fail on such a helper:

1. statically, over the rendered preludes: no wave primitive (or helper calling one) under an
   `if`/`?:`/loop/`&&`/`||` whose condition is lane-dependent, or after a lane-dependent return;
2. by execution, under a host model of independent thread scheduling (its_shim/its.h): each lane
   a thread, each primitive a rendezvous of exactly the lanes its mask names, compiled with g++;
   helper results against the semantics table, and whole CUDA kernels against the emulator."""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import wavegpu as wg
from wavegpu.backends.cstyle import CRenderer
from wavegpu.backends.cstyle import cuda as cuda_dialect
from wavegpu.backends.cstyle import hip as hip_dialect
from wavegpu.backends.cstyle import metal as metal_dialect
from wavegpu.backends.cstyle.prelude import CORE, HELPERS
from wavegpu.isa import semantics as sem
from wavegpu.wbin import Kernel

sys.path.insert(0, str(Path(__file__).resolve().parent))
import wave_sync_check as W

SHIM = Path(__file__).resolve().parent / "its_shim"
GXX = shutil.which("g++")
needs_gxx = pytest.mark.skipif(GXX is None, reason="g++ is not installed (the host model of the wave primitives)")
DIALECTS = {
    "cuda": (cuda_dialect.CUDA, cuda_dialect.HEADER),
    "hip": (hip_dialect.HIP, hip_dialect.HEADER),
    "metal": (metal_dialect.Metal, metal_dialect.HEADER),
}
# the scan helper as it was rendered before issue 22 (a shuffle under `i < me`)
OLD_SCAN = """
WV_FN uint wv_prefix_add_u32(wv_mask m, uint x, uint me) {
    uint acc = 0x0u;
    for (int i = 0; i < WV_LANES; i++)
        if (((m >> i) & 1u) && (uint)i < me) { uint a = acc, b = WV_SHFL(m, x, i); acc = (a + b); }
    return acc;
}
"""


# ------------------------------------------------------------------ 1. the static check
@pytest.mark.parametrize("target", list(DIALECTS))
def test_no_wave_primitive_sits_under_a_lane_dependent_condition(target: str) -> None:
    dialect, _ = DIALECTS[target]
    src = dialect().prelude()
    found = W.check(src)
    assert found.calls > 20, found  # the checker saw the helpers' primitives
    assert not found.problems, "\n".join(found.problems)


def test_the_check_finds_the_old_scan_and_other_divergent_calls() -> None:
    head = cuda_dialect.HEADER
    bad = {
        "old scan": OLD_SCAN,
        "?:": "WV_FN uint f(wv_mask m, uint x) { return x > 3u ? WV_SHFL(m, x, 0) : x; }",
        "&&": "WV_FN bool f(wv_mask m, uint x) { return (x & 1u) && WV_ANY(m, x > 2u); }",
        "||": "WV_FN bool f(wv_mask m, uint x, uint me) { return me == 0u || WV_ALL(m, x > 2u); }",
        "early return": "WV_FN uint f(wv_mask m, uint x) { if (wv_lane() == 3u) return x; return WV_SHFL(m, x, 0); }",
        "loop bound": "WV_FN uint f(wv_mask m, uint x) { for (uint k = 0; k < x; k++) x = WV_SHFL(m, x, k); return x; }",
        "taint by assignment": "WV_FN uint f(wv_mask m, uint x) { uint n = x & 7u; while (n) { x = WV_SHFL_XOR(m, x, 1); n--; } return x; }",
        "implicit flow": "WV_FN uint f(wv_mask m, uint x) { int go = 0; if (x) go = 1; if (go) x = WV_SHFL(m, x, 0); return x; }",
        "lane-dependent break": "WV_FN uint f(wv_mask m, uint x) { for (int i = 0; i < 32; i++) { if (x == (uint)i) break; x = WV_SHFL(m, x, i); } return x; }",
        "per-lane mask": "WV_FN uint f(wv_mask m, uint x) { return WV_SHFL(m & x, x, 0); }",
        "through a helper": "WV_FN uint g(wv_mask m, uint x) { return WV_SHFL(m, x, 0); }\n"
        "WV_FN uint f(wv_mask m, uint x) { if (x) x = g(m, x); return x; }",
    }
    for why, fn in bad.items():
        found = W.check(head + fn)
        assert found.problems, why
    good = [
        "WV_FN uint f(wv_mask m, uint x, uint me) { uint b = WV_SHFL(m, x, me > 0u ? me - 1u : 0u); return me > 0u ? b : 0u; }",
        "WV_FN uint f(wv_mask m, uint x) { for (int i = 0; i < WV_LANES; i++) if ((m >> i) & 1u) x += WV_SHFL(m, x, i); return x; }",
        "WV_FN uint f(wv_mask m, uint x) { uint b = WV_BALLOT(m, x > 3u); if (b) x = WV_SHFL(m, x, 0); return x; }",
    ]
    for fn in good:
        found = W.check(head + fn)
        assert found.calls and not found.problems, (fn, found.problems)


# ------------------------------------------------------------------ 2. the execution model
def _primitives(header: str) -> str:
    """The header's wave-primitive lines: the mask type and the WV_* macros over the vendor calls."""
    keep = [
        ln
        for ln in header.splitlines()
        if re.match(r"#define WV_(LANES|SHFL|SHFL_XOR|FULL|BALLOT|ANY|ALL)\b", ln)
        or re.match(r"typedef .* wv_mask;", ln)
    ]
    return "\n".join(keep) + "\n"


HOST = r"""
#include "its.h"
typedef unsigned int uint;
typedef unsigned long long wv_ulong;
#define ulong wv_ulong
typedef unsigned char uchar;
typedef unsigned short ushort;
#define WV_FN static inline
#define warpSize ((int)its::W)
template <class T, class S> static inline T its_bits(S s) { T t; memcpy(&t, &s, sizeof t); return t; }
#define F(x) its_bits<float>((uint)(x))
#define U(x) its_bits<uint>((float)(x))
#define POPC(x) ((uint)__builtin_popcount(x))
#define CLZ(x) ((uint)__builtin_clz(x))
"""
DRIVER = r"""
#include <iostream>
int main() {
    unsigned w, n;
    std::cin >> w >> n;
    its::W = w;
    std::vector<uint> x(n), on(n), out(n * 16);
    for (auto& v : x) std::cin >> v;
    for (auto& v : on) std::cin >> v;
    std::vector<wv_mask> side(2 * (n / w));
    for (unsigned t = 0; t < n; t++) side[2 * (t / w) + on[t]] |= (wv_mask)1 << (t % w);
    its::run(n, [&](unsigned t) {
        uint me = t % w, v = x[t], *o = &out[16 * t];
        wv_mask m = side[2 * (t / w) + on[t]];
        its::exec_mask = m;
        if (on[t]) {  /* the two sides of a divergent branch run their wave operations at once */
            o[0] = wv_prefix_add_u32(m, v, me);
            o[1] = wv_reduce_add_u32(m, v);
            o[2] = wv_reduce_min_u32(m, v); o[3] = wv_reduce_max_u32(m, v);
            o[4] = wv_reduce_min_s32(m, v); o[5] = wv_reduce_max_s32(m, v);
            o[6] = wv_reduce_and_b32(m, v); o[7] = wv_reduce_or_b32(m, v); o[8] = wv_reduce_xor_b32(m, v);
            o[9] = wv_reduce_min_f32(m, v); o[10] = wv_reduce_max_f32(m, v);
        } else {
            o[10] = wv_reduce_max_f32(m, v); o[9] = wv_reduce_min_f32(m, v);
            o[8] = wv_reduce_xor_b32(m, v); o[7] = wv_reduce_or_b32(m, v); o[6] = wv_reduce_and_b32(m, v);
            o[5] = wv_reduce_max_s32(m, v); o[4] = wv_reduce_min_s32(m, v);
            o[3] = wv_reduce_max_u32(m, v); o[2] = wv_reduce_min_u32(m, v);
            o[1] = wv_reduce_add_u32(m, v);
            o[0] = wv_prefix_add_u32(m, v, me);
        }
        uint top = 63u - (uint)__builtin_clzll((unsigned long long)m);
        o[11] = (uint)WV_BALLOT(m, v & 1u);
        o[12] = WV_ANY(m, (v & 3u) == 3u) ? 1u : 0u;
        o[13] = WV_ALL(m, (v & 3u) != 0u) ? 1u : 0u;
        o[14] = WV_SHFL(m, v, top);
    });
    for (auto v : out) std::cout << v << "\n";
}
"""


def _compile(src: str, tmp: Path, name: str) -> Path:
    (tmp / f"{name}.cpp").write_text(src)
    exe = tmp / name
    r = subprocess.run(
        [GXX or "g++", "-std=c++20", "-O1", "-pthread", "-ffp-contract=off", "-w", f"-I{SHIM}", str(tmp / f"{name}.cpp"), "-o", str(exe)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    return exe


@functools.cache
def _helper_exe(target: str, old_scan: bool, tmp: Path) -> Path:
    dialect, header = DIALECTS[target]
    loops = dialect().loops()
    if old_scan:  # the partial-mask loop of the prefix sum as it was
        start = loops.index("WV_FN uint wv_prefix_add_u32")
        body = re.compile(r"\n        if \(\(m >> i\) & 1u\) \{.*?\n        \}\n", re.S)
        part = body.search(loops, start)
        assert part is not None
        old = "\n" + OLD_SCAN.strip().splitlines()[3] + "\n"
        loops = loops[: part.start()] + old + loops[part.end() :]
    return _compile(HOST + _primitives(header) + CORE + loops + DRIVER, tmp, f"{target}{'_old' if old_scan else ''}")


def _run_helpers(exe: Path, w: int, x: list[int], on: list[bool]) -> subprocess.CompletedProcess[str]:
    text = f"{w} {len(x)}\n{' '.join(map(str, x))}\n{' '.join(str(int(b)) for b in on)}\n"
    return subprocess.run([str(exe)], input=text, capture_output=True, text=True, timeout=120)


def _want(w: int, x: list[int], on: list[bool]) -> np.ndarray:
    """[lane, 15] from the semantics table: each side of each wave reduced over its own lanes."""
    red = [sem.REDUCTIONS[k] for k in sem.REDUCTIONS]
    order = [
        "add.u32",
        "min.u32",
        "max.u32",
        "min.s32",
        "max.s32",
        "and.b32",
        "or.b32",
        "xor.b32",
        "min.f32",
        "max.f32",
    ]
    by = {f"{r.op.value}.{r.dtype.text}": r for r in red}
    n = len(x)
    out = np.zeros((n, 15), np.uint32)
    for t in range(n):
        lanes = [j for j in range(t - t % w, t - t % w + w) if on[j] == on[t]]
        vals = np.array([x[j] for j in lanes], np.uint32)

        def fold(r: sem.Reduction, v: np.ndarray) -> int:
            acc = np.array([r.identity], np.uint32)
            for e in v:
                acc = np.asarray(r.combine(acc, np.array([e], np.uint32)), np.uint32)
            return int(acc[0])

        with np.errstate(all="ignore"):
            out[t, 0] = fold(by["add.u32"], vals[[j < t for j in lanes]])
            for i, key in enumerate(order):
                out[t, 1 + i] = fold(by[key], vals)
        out[t, 11] = sum(1 << (j % w) for j in lanes if x[j] & 1) & 0xFFFFFFFF
        out[t, 12] = any(x[j] & 3 == 3 for j in lanes)
        out[t, 13] = all(x[j] & 3 for j in lanes)
        out[t, 14] = x[max(lanes)]
    return out


VALUES = st.one_of(
    st.sampled_from([0x7FC00000, 0xFFC00001, 0, 0x80000000, 0x7F800000, 0xFF800000, 0x3F800000, 0xBF800000, 1, 3]),
    st.integers(0, 0xFFFFFFFF),
)


@needs_gxx
@pytest.mark.parametrize("target", list(DIALECTS))
def test_helpers_under_independent_thread_scheduling(target: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Every helper on both sides of a divergent branch at once, each side with its own mask,
    random values and lane sets (whole waves take the butterfly and Kogge-Stone paths)."""
    exe = _helper_exe(target, False, tmp_path_factory.mktemp(target))
    widths = [32, 64] if target == "hip" else [32]

    @settings(max_examples=12, deadline=None, database=None)
    @given(w=st.sampled_from(widths), waves=st.integers(1, 2), data=st.data())
    def check(w: int, waves: int, data: st.DataObject) -> None:
        n = w * waves
        x = data.draw(st.lists(VALUES, min_size=n, max_size=n))
        on = data.draw(st.one_of(st.just([True] * n), st.lists(st.booleans(), min_size=n, max_size=n)))
        r = _run_helpers(exe, w, x, on)
        assert r.returncode == 0, r.stderr[:3000]
        got = np.array(r.stdout.split(), np.uint64).astype(np.uint32).reshape(n, 16)[:, :15]
        want = _want(w, x, on)
        bad = np.argwhere(got != want)
        assert bad.size == 0, [(int(t), int(c), hex(got[t, c]), hex(want[t, c])) for t, c in bad[:8]]

    check()


@needs_gxx
def test_the_model_rejects_the_old_scan(tmp_path: Path) -> None:
    """The prefix sum as rendered before: its shuffle under `i < me` never meets (exit status 3)."""
    exe = _helper_exe("cuda", True, tmp_path)
    on = [i % 3 != 0 for i in range(32)]
    r = _run_helpers(exe, 32, list(range(32)), on)
    assert r.returncode == 3 and "ITS:" in r.stderr, (r.returncode, r.stderr[-500:])
    r = _run_helpers(exe, 32, list(range(32)), [True] * 32)  # a whole wave takes the scan, fine
    assert r.returncode == 0, r.stderr[-500:]


# ------------------------------------------------------------------ whole CUDA kernels
KDRIVER = r"""
#include <iostream>
int main() {
    unsigned threads, nargs, size;
    std::cin >> threads >> nargs;
    std::vector<uint> args(nargs + 1);
    for (unsigned i = 0; i < nargs; i++) std::cin >> args[i];
    std::cin >> size;
    std::vector<uchar> mem(size), cmem(16);
    for (auto& b : mem) { unsigned v; std::cin >> v; b = (uchar)v; }
    blockDim = {threads, 1, 1}; gridDim = {1, 1, 1}; blockIdx = {0, 0, 0};
    its::exit_arrives = true;  /* a lane that returned from the kernel: the .sync calls ignore it */
    its::run(threads, [&](unsigned t) { threadIdx = {t, 0, 0}; KERNEL_CALL; });
    for (auto b : mem) std::cout << (unsigned)b << "\n";
}
"""
F16 = """
WV_FN uint D2H_BITS(double x) { return (uint)__builtin_bit_cast(unsigned short, (_Float16)x); }
WV_FN float H2F_BITS(uint u) { return (float)__builtin_bit_cast(_Float16, (unsigned short)u); }
"""


def run_cuda_on_model(k: Kernel, threads: int, mem: np.ndarray, args: list[int], tmp: Path) -> np.ndarray:
    """Kernel k as the CUDA backend renders it, compiled for the host model (one workgroup)."""
    d = cuda_dialect.CUDA()
    r = CRenderer(d).render(k, 32, nargs=len(args))
    assert r.source.startswith(d.prelude())
    header = "\n".join(ln for ln in cuda_dialect.HEADER.splitlines() if "asm(" not in ln)  # PTX cvt: F16 below
    call = f"{r.entry}(mem.data(), cmem.data(){''.join(f', args[{i}]' for i in range(len(args)))})"
    src = '#include "cuda_host.h"\n' + header + F16 + HELPERS + d.loops() + r.source[len(d.prelude()) :]
    exe = _compile(src + KDRIVER.replace("KERNEL_CALL", call), tmp, r.entry)
    u8 = np.ascontiguousarray(mem).view(np.uint8).reshape(-1)
    text = f"{threads} {len(args)} {' '.join(map(str, args))}\n{u8.size}\n{' '.join(map(str, u8.tolist()))}\n"
    out = subprocess.run([str(exe)], input=text, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[:3000]
    return np.array(out.stdout.split(), np.uint8)


WAVES_IN_BRANCHES = """
.kernel waves_in_branches
    mov.u32 r1, %tid.x
    shl.b32 r2, r1, 2
    ld.global.u32 r3, [r2]
    sub.u32 r4, r1, 56
    setp.lt.u32 p0, r4, 4
    @p0 ret
    and.b32 r4, r1, 4
    setp.eq.u32 p1, r4, 0
    and.b32 r10, r3, 3
    setp.ne.u32 p4, r10, 0
    setp.gt.u32 p5, r3, 500
    mov.u32 r7, 7
    mov.u32 r8, 8
    mov.u32 r9, 9
    if p1
        wave.shuffle.b32 r5, r3, r1
        wave.shuffle.xor.b32 r6, r3, 3
        wave.broadcast.b32 r7, r3, 0
        if p4
            wave.reduce.min.f32 r8, r3
            wave.any p2, p5
            selp.b32 r9, r4, r1, p2
        endif
    else
        wave.shuffle.up.b32 r5, r3, 16
        wave.shuffle.down.b32 r6, r3, 16
        if p4
            wave.prefix.add.u32 r7, r3
            wave.reduce.max.s32 r8, r3
            wave.all p2, p5
            wave.ballot.b32 r9, p5
            @p2 add.u32 r9, r9, 1
        endif
    endif
    xor.b32 r5, r5, r6
    xor.b32 r5, r5, r7
    add.u32 r5, r5, r8
    add.u32 r5, r5, r9
    st.global.u32 [r2+256], r5
    ret
.end
"""


@needs_gxx
def test_cuda_kernels_with_divergent_wave_operations_on_the_model(tmp_path: Path) -> None:
    """The kernels the H200 got wrong through CUDA C++ (a prefix sum in a divergent if; the flat
    dialect's wave kernel, a loop lanes leave at different trips behind an early return), and
    shuffles (sources in the same branch), broadcasts, votes and reductions on both sides of an if
    and in data-dependent ifs within them, behind an early return:
    the CUDA backend's whole output under the model, against the emulator."""
    from test_lane_loops import DIVERGENT_SCAN, FLAT_WAVES

    rng = np.random.default_rng(22)
    for text, args in ((DIVERGENT_SCAN, []), (FLAT_WAVES, [0, 256]), (WAVES_IN_BRANCHES, [])):
        k = wg.assemble(text, "k.wave").kernels[0]
        mem = np.zeros(128, np.uint32)
        mem[:64] = rng.integers(0, 1000, 64)
        mem[3] = 0  # an early return before any wave operation (FLAT_WAVES: a trip count of 0)
        want = wg.launch(k, workgroup=64, memory=mem.view(np.uint8), args=args, check=True).memory  # no UB
        got = run_cuda_on_model(k, 64, mem, args, tmp_path)
        assert np.array_equal(want, got), (k.name, np.nonzero(want != got)[0][:8])
