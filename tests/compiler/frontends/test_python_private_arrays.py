"""Python per-thread arrays and unrolled loops (issue 24, points 2 and 3): `wg.private_array(dtype,
n)` and `wg.private_array(dtype, (rows, cols))`, indexed `t[i]` / `t[i, j]`, and
`for i in wg.static_range(...)` (Triton's `tl.static_range`), fully unrolled. An array whose
indices all fold to constants once unrolled stays in registers (no local-memory row in the
.wbin); otherwise it lives in the thread's slice of local memory, where an out-of-range index
traps at its source line. Every kernel runs on the emulator's two engines against the same
function run as plain Python under `wg.python_thread` (NumPy arrays and Python's range)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import wavegpu as wg
from wavegpu.compiler import hir
from wavegpu.compiler.frontends.python import PYTHON
from wavegpu.errors import CompileError
from wavegpu.isa.vocabulary import Op
from wavegpu.runtime.sources import load_kernels

ENGINES = ("numpy", "compiled")


def local_rows(prog: wg.Program) -> int:
    """Local-memory loads and stores in the kernel's code (read from the ISA rows, not text)."""
    return sum(1 for i in prog.kernels[0].instructions if i.spec.space == "local" and i.spec.op in (Op.LD, Op.ST))


def run_python(fn, args: list, threads: int, workgroup: int) -> None:  # type: ignore[no-untyped-def]
    """The kernel as plain Python, one thread after the other (1-D launches)."""
    for g in range(threads):
        ctx = {"thread": (g % workgroup,), "workgroup": (g // workgroup,), "workgroup_size": (workgroup,)}
        with wg.python_thread(**ctx, grid=(threads // workgroup,)):
            fn(*args)


# ---- registers: every index constant once unrolled ---------------------------------------------
@wg.kernel(workgroup=(16,))
def tile(a: wg.f32[:], b: wg.f32[:], c: wg.f32[:], k: wg.i32):
    """C (2m x 4) = A (2m x k) B (k x 4): each thread a 2 x 4 tile, kept in registers."""
    row = wg.global_id(0)
    acc = wg.private_array(wg.f32, (2, 4))
    av = wg.private_array(wg.f32, 2)
    for p in range(k):
        for r in wg.static_range(2):
            av[r] = a[(row * 2 + r) * k + p]
        for r in wg.static_range(2):
            for j in wg.static_range(4):
                acc[r, j] = wg.fma(av[r], b[p * 4 + j], acc[r, j])
    for r in wg.static_range(2):
        for j in wg.static_range(4):
            c[(row * 2 + r) * 4 + j] = acc[r, j]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_register_tile_has_no_local_memory_traffic(engine: str) -> None:
    prog = tile.program
    assert local_rows(prog) == 0 and prog.kernels[0].local_memory == 0
    rng = np.random.default_rng(1)
    m, k = 32, 5
    a = rng.standard_normal(2 * m * k).astype(np.float32)
    b = rng.standard_normal(k * 4).astype(np.float32)
    c = np.zeros(2 * m * 4, np.float32)
    tile(a, b, c, k, grid=(m // 16,), engine=engine)
    want = np.zeros_like(c)
    run_python(tile.python, [a, b, want, np.int32(k)], m, 16)
    np.testing.assert_array_equal(c, want)
    np.testing.assert_allclose(c.reshape(-1, 4), a.reshape(-1, k) @ b.reshape(k, 4), rtol=1e-5, atol=1e-5)


# ---- static_range: bounds, steps, triangles, control flow ---------------------------------------
@wg.kernel(workgroup=(8,))
def ranges(x: wg.f32[:], out: wg.f32[:]):
    i = wg.global_id(0)
    t = wg.private_array(wg.f32, 10)
    for j in wg.static_range(len(t)):
        t[j] = x[i] + j
    for j in wg.static_range(9, -1, -3):  # 9, 6, 3, 0: a negative step
        t[j] *= 2.0
    s = 0.0
    for p in wg.static_range(4):
        for q in wg.static_range(p + 1):  # a triangle: the bound is an enclosing counter
            s += t[p * 2 + q]
    for j in wg.static_range(1, 10, 2):
        if x[i] > 2.0 and j > 5:
            break  # leaves the unrolled loop, in the copy it is in
        if j == 3:
            continue
        s += t[j]
    out[i] = s


@pytest.mark.parametrize("engine", ENGINES)
def test_static_range_takes_python_ranges_and_control_flow(engine: str) -> None:
    x = np.linspace(-1, 4, 16).astype(np.float32)
    out = np.zeros(16, np.float32)
    ranges(x, out, grid=(2,), engine=engine)
    want = np.zeros_like(out)
    run_python(ranges.python, [x, want], 16, 8)
    np.testing.assert_array_equal(out, want)
    assert local_rows(ranges.program) == 0
    text = hir.dump(PYTHON.load(ranges.python)[0])
    assert "for j in static_range(9:i32, -1:i32, -3:i32)" in text, text


# ---- local memory: a run-time index -------------------------------------------------------------
@wg.kernel(workgroup=(32,))
def hist(x: wg.i32[:], out: wg.i32[:], n: wg.i32):
    """Per-thread histogram of 8 bins over a slice of x: the bin index is data."""
    i = wg.global_id(0)
    h = wg.private_array(wg.i32, 8)
    for p in range(n):
        h[x[i * n + p] % 8] += 1
    for b in wg.static_range(8):
        out[i * 8 + b] = h[b]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_dynamic_index_puts_the_array_in_local_memory(engine: str) -> None:
    prog = hist.program
    assert local_rows(prog) > 0
    assert prog.kernels[0].local_memory == 8 * 4 * 32  # word k of thread t at k * 32 + t
    rng = np.random.default_rng(2)
    n = 9
    x = rng.integers(-50, 50, 64 * n).astype(np.int32)
    out = np.zeros(64 * 8, np.int32)
    hist(x, out, n, grid=(2,), engine=engine)
    want = np.stack([np.bincount(x[i * n : (i + 1) * n] % 8, minlength=8) for i in range(64)]).reshape(-1)
    np.testing.assert_array_equal(out, want)


@wg.kernel(workgroup=(16,))
def pick(idx: wg.i32[:], out: wg.f32[:]):
    i = wg.global_id(0)
    t = wg.private_array(wg.f32, (2, 4))
    for r in wg.static_range(t.shape[0]):
        for j in wg.static_range(t.shape[1]):
            t[r, j] = r * 10.0 + j
    out[i] = t[idx[i] // 4, idx[i] % 4]
    out[i + 16] = t[1, idx[i]]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("bad", [4, -1, 1 << 20])
def test_an_out_of_range_dynamic_index_traps_at_its_line(engine: str, bad: int) -> None:
    idx = np.arange(16, dtype=np.int32) % 4
    out = np.zeros(32, np.float32)
    pick(idx, out, grid=(1,), engine=engine)
    np.testing.assert_array_equal(out[:16], [float(j) for j in idx])
    np.testing.assert_array_equal(out[16:], [10.0 + j for j in idx])
    idx[5] = bad
    out2 = np.zeros(32, np.float32)
    with pytest.raises(wg.Trap) as e:
        pick(idx, out2, grid=(1,), engine=engine)
    text = str(e.value)
    assert "thread (5, 0, 0)" in text and "test_python_private_arrays.py" in text, text
    assert not out2.any()  # a trapped run leaves the caller's arrays untouched


# ---- element types and evaluation order ---------------------------------------------------------
@wg.kernel(workgroup=(8,))
def kinds(x: wg.f64[:], cnt: wg.u32[:], out: wg.f64[:], flags: wg.u32[:]):
    i = wg.global_id(0)
    d = wg.private_array(wg.f64, 3)
    u = wg.private_array(wg.u32, 2)
    f = wg.private_array(wg.bool_, 2)
    d[0] = x[i]
    d[1] = d[0] * d[0]
    u[1] = wg.u32(i) * 3
    u[0] -= 1  # wraps
    f[0] = x[i] > 0.5
    f[1] = not f[0]
    # the index has a call: evaluated once, as Python does (one atomic per thread)
    d[wg.atomic_add(cnt, 0, 1) % 1 + 2] += x[i] + 1.0
    out[i * 3] = d[0]
    out[i * 3 + 1] = d[1]
    out[i * 3 + 2] = d[2]
    flags[i * 3] = u[0]
    flags[i * 3 + 1] = u[1]
    flags[i * 3 + 2] = wg.u32(f[0]) * 2 + wg.u32(f[1])


@pytest.mark.parametrize("engine", ENGINES)
def test_element_types_and_an_index_evaluated_once(engine: str) -> None:
    x = np.linspace(0, 1, 8)
    cnt = np.zeros(1, np.uint32)
    out = np.zeros(24)
    flags = np.zeros(24, np.uint32)
    kinds(x, cnt, out, flags, grid=(1,), engine=engine)
    assert cnt[0] == 8
    np.testing.assert_array_equal(out.reshape(8, 3), np.stack([x, x * x, x + 1.0], axis=1))
    f = (x > 0.5).astype(np.uint32)
    want = np.stack([np.full(8, 0xFFFFFFFF, np.uint32), np.arange(8, dtype=np.uint32) * 3, f * 2 + (1 - f)], axis=1)
    np.testing.assert_array_equal(flags.reshape(8, 3), want)


def test_python_thread_gives_numpy_arrays_and_ranges() -> None:
    with wg.python_thread(global_id=0):
        t = wg.private_array(wg.f32, (2, 3))
        assert t.shape == (2, 3) and t.dtype == np.float32 and not t.any()
        assert wg.private_array(bool, 4).dtype == np.bool_
        assert list(wg.static_range(9, -1, -3)) == [9, 6, 3, 0]


# ---- refusals: each names its place ------------------------------------------------------------
def _compile(body: str) -> CompileError:
    src = "import wavegpu as wg\nN = 4\n\n@wg.kernel\ndef k(x: wg.f32[:], n: wg.i32):\n" + body
    with pytest.raises(CompileError) as e:
        wg.compile(src, lang="python")
    return e.value


@pytest.mark.parametrize(
    ("body", "where", "message"),
    [
        ("    t = wg.private_array(wg.f32, n)\n", ":6:", "must be a constant integer expression"),
        ("    t = wg.private_array(wg.f32, (2, 2, 2))\n", ":6:", "per-thread arrays have one or two dimensions"),
        ("    t = wg.private_array(wg.u8, 4)\n", ":6:", "private_array element type must be i32, u32, f32, f16, f64"),
        ("    t = wg.private_array(wg.f32, 0)\n", ":6:", "must be at least 1"),
        ("    wg.private_array(wg.f32, 4)\n", ":6:5", "private_array(...) must be assigned to a name"),
        ("    x[0] = wg.private_array(wg.f32, 4)\n", ":6:", "must be assigned to a name"),
        ("    t = wg.private_array(wg.f32, (2, 2))\n    x[0] = t[1][0]\n", ":7:12", "t[i, j]"),
        ("    t = wg.private_array(wg.f32, (2, 2))\n    x[0] = t[1]\n", ":7:", "'t' has 2 dimension(s)"),
        ("    t = wg.private_array(wg.f32, 4)\n    t = 1.0\n", ":7:5", "'t' is an array; assign its elements"),
        ("    t = wg.private_array(wg.f32, 4)\n    t = wg.private_array(wg.f32, 4)\n", ":7:5", "already defined"),
        ("    t = wg.private_array(wg.f32, 4)\n    x[0] = t[4]\n", ":7:", "index 4 is out of range"),
        ("    t = wg.private_array(wg.f32, 4)\n    x[0] = t[1.0]\n", ":7:", "an array index is an integer"),
        ("    t = wg.private_array(wg.f32, 4)\n    x[0] = t[0:2]\n", ":7:", "no slices"),
        ("    t = wg.private_array(wg.f32, 4)\n    wg.atomic_add(t, 0, 1.0)\n", ":7:19", "needs no atomic"),
        ("    t = wg.private_array(wg.f32, 4)\n    x[0] = t.shape[1]\n", ":7:12", "'t' has 1 dimension(s)"),
        (
            "    t = wg.private_array(wg.f32, 4)\n    for i in wg.static_range(n):\n        t[0] = 1.0\n",
            ":7:5",
            "needs constant bounds, but its stop is known only at run time",
        ),
        (
            "    for i in wg.static_range(100000):\n        x[i] = 1.0\n",
            ":6:5",
            "makes more than 4096 operations",
        ),
        ("    for i in wg.static_range(0, 4, 0):\n        x[i] = 1.0\n", ":6:", "step must not be zero"),
    ],
)
def test_refusals_name_the_place(body: str, where: str, message: str) -> None:
    e = _compile(body)
    text = str(e)
    assert message in text and where in text, text


# ---- random index mixes against plain Python ----------------------------------------------------
N = 5


@st.composite
def programs(draw: st.DrawFn) -> list[tuple[str, int, int, int]]:
    """Statements `t[d] = / += t[s] * c + x[i]`; an index of -1 is the run-time (i + 1) % N or
    (i + 2) % N, a constant one any element."""
    ops = st.tuples(st.sampled_from(["=", "+="]), st.integers(-1, N - 1), st.integers(-1, N - 1), st.integers(-3, 3))
    return draw(st.lists(ops, min_size=1, max_size=6))


def _index(v: int, shift: int) -> str:
    return f"(i + {shift}) % {N}" if v < 0 else str(v)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_random_index_mixes_match_plain_python(ops: list[tuple[str, int, int, int]]) -> None:
    lines = [f"    t[{_index(d, 1)}] {kind} t[{_index(s, 2)}] * {c}.0 + x[i]" for kind, d, s, c in ops]
    src = (
        "import wavegpu as wg\n\n@wg.kernel(workgroup=(16,))\ndef mix(x: wg.f32[:], out: wg.f32[:]):\n"
        f"    i = wg.global_id(0)\n    t = wg.private_array(wg.f32, {N})\n    t[0] = 1.0\n    t[2] = 3.0\n"
        + "\n".join(lines)
        + f"\n    for k in wg.static_range({N}):\n        out[i * {N} + k] = t[k]\n"
    )
    x = np.linspace(-2, 3, 16).astype(np.float32)
    namespace: dict[str, object] = {}
    exec(compile(src, "<mix>", "exec"), namespace)  # the same function as plain Python
    want = np.zeros(16 * N, np.float32)
    run_python(namespace["mix"].python, [x, want], 16, 16)  # type: ignore[attr-defined]
    prog = wg.compile(src, lang="python")
    assert (local_rows(prog) > 0) == any(d < 0 or s < 0 for _, d, s, _ in ops)
    for engine in ENGINES:
        out = np.zeros(16 * N, np.float32)
        load_kernels(src, lang="python").mix(x, out, grid=1, engine=engine)
        np.testing.assert_array_equal(out, want)
