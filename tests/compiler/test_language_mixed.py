"""Signed and unsigned together (docs/compiler.md, "Mixing types"): every operator on every pair of
i32/u32/f32 operands against a Python reference that applies the documented rule, and random
mixed-type integer expressions against the same rules."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import wavegpu as wg
from wavegpu.runtime.buffers import pack

M = 0xFFFFFFFF
TYPES = ("i32", "u32", "f32")
OPS = ["+", "-", "*", "/", "//", "%", "&", "|", "^", "<<", ">>", "<", "<=", ">", ">=", "==", "!=", "min", "max"]
N = 64


def wrap(v: int, t: str) -> int:
    v &= M
    return v - (1 << 32) if t == "i32" and v >> 31 else v


def result_type(op: str, ta: str, tb: str) -> str | None:
    """The documented result type of `a op b`, or None where the compiler refuses the mix."""
    if op in ("<", "<=", ">", ">=", "==", "!="):
        return "bool"
    if "f32" in (ta, tb):
        return None if op in ("&", "|", "^", "<<", ">>") else "f32"
    if op == "/":
        return "f32"
    if ta == tb:
        return ta
    if op in ("+", "-", "*", "&", "|", "^"):
        return "u32"
    if op in ("<<", ">>"):
        return ta
    return None  # // % min max: the reading changes the value


def reference(op: str, ta: str, tb: str, a: int | float, b: int | float) -> int | float | bool:
    """The value the documented rules give (Python numbers; f32 arithmetic through NumPy)."""
    if op in ("<<", ">>"):
        b = int(b) & 31
    if "f32" in (ta, tb) or op == "/":
        x, y = np.float32(a), np.float32(b)
        with np.errstate(all="ignore"):
            r = {
                "+": lambda: x + y,
                "-": lambda: x - y,
                "*": lambda: x * y,
                "/": lambda: x / y,
                "//": lambda: np.floor(x / y),
                "%": lambda: x - np.floor(x / y) * y,
                "min": lambda: np.fmin(x, y),
                "max": lambda: np.fmax(x, y),
                "<": lambda: x < y,
                "<=": lambda: x <= y,
                ">": lambda: x > y,
                ">=": lambda: x >= y,
                "==": lambda: x == y,
                "!=": lambda: x != y,
            }[op]()
        return bool(r) if isinstance(r, np.bool_) else np.float32(r)
    a, b = int(a), int(b)  # the mathematical values of each operand in its own type
    if op in ("<", "<=", ">", ">=", "==", "!="):
        return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b, "!=": a != b}[op]
    t = result_type(op, ta, tb)
    assert t is not None
    v = {
        "+": lambda: a + b,
        "-": lambda: a - b,
        "*": lambda: a * b,
        "//": lambda: a // b,
        "%": lambda: a % b,
        "&": lambda: a & b,
        "|": lambda: a | b,
        "^": lambda: a ^ b,
        "<<": lambda: a << b,
        ">>": lambda: a >> b,
        "min": lambda: min(a, b),
        "max": lambda: max(a, b),
    }[op]()
    return wrap(v, t)


INTS = [0, 1, 2, 3, -1, -2, -7, 31, 32, 100, -(2**31), 2**31 - 1, 2**31, 2**32 - 1, 2**32 - 7, 0x80000001]
FLOATS = [0.0, 1.0, -1.0, 0.5, -2.5, 3.75, 1e9, -1e9, 4294967296.0, 2147483648.0, 7.0, -0.0]


def values(t: str, seed: int, nonzero: bool = False) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if t == "f32":
        pool = np.array(FLOATS + list(rng.uniform(-1e4, 1e4, N)), np.float64)
        out = rng.choice(pool, N).astype(np.float32)
        out[: len(FLOATS)] = np.array(FLOATS, np.float32)[:N]
    else:
        lo, hi = (-(2**31), 2**31 - 1) if t == "i32" else (0, 2**32 - 1)
        pool = [v for v in INTS if lo <= v <= hi]
        rand = [int(x) for x in rng.integers(lo, hi, N, dtype=np.int64)]
        vals = (pool + rand)[:N]
        rng.shuffle(vals)
        out = np.array(vals, np.int64).astype(np.int32 if t == "i32" else np.uint32)
    if nonzero:
        out[out == 0] = 3
    return out


def expr_text(op: str) -> str:
    if op in ("min", "max"):
        return f"{op}(x, y)"
    if op in ("<<", ">>"):
        return f"x {op} (y & 31)"
    return f"x {op} y"


def kernel_text(ta: str, tb: str, ops: list[str]) -> str:
    lines = [
        "import wavegpu as wg",
        "",
        "@wg.kernel",
        f"def k(a: wg.{ta}[:], b: wg.{tb}[:], oi: wg.i32[:], of: wg.f32[:], n: wg.i32):",
        "    i = wg.global_id()",
        "    x = a[i]",
        "    y = b[i]",
    ]
    for j, op in enumerate(ops):
        rt = result_type(op, ta, tb)
        e = expr_text(op)
        if rt == "f32":
            lines.append(f"    of[{j} * n + i] = {e}")
        elif rt in ("bool", "u32"):
            lines.append(f"    oi[{j} * n + i] = wg.i32({e})")
        else:
            lines.append(f"    oi[{j} * n + i] = {e}")
    return "\n".join(lines) + "\n"


PAIRS = [(ta, tb) for ta in TYPES for tb in TYPES]


@pytest.mark.parametrize("ta, tb", PAIRS)
def test_every_operator_on_every_pair_follows_the_documented_rule(ta: str, tb: str) -> None:
    ops = [op for op in OPS if result_type(op, ta, tb) is not None]
    prog = wg.compile(kernel_text(ta, tb, ops))
    a = values(ta, 1)
    b = values(tb, 2, nonzero=True)  # division by zero: tests/compiler/test_language_literals.py
    oi = np.zeros(len(ops) * N, np.int32)
    of = np.zeros(len(ops) * N, np.float32)
    layout = pack(prog.kernels[0], [a, b, oi, of, N])
    res = wg.emulate(prog, grid=1, workgroup=N, memory=layout.memory, args=layout.args)
    got_i, got_f = layout.read(res.memory, "oi"), layout.read(res.memory, "of")
    for j, op in enumerate(ops):
        rt = result_type(op, ta, tb)
        for i in range(N):
            want = reference(op, ta, tb, a[i].item(), b[i].item())
            if rt == "f32":
                got = got_f[j * N + i]
                ok = (np.isnan(got) and np.isnan(want)) or got == want
            else:
                got = int(got_i[j * N + i])
                ok = got == wrap(int(want), "i32")
            assert ok, f"{ta} {op} {tb}: {a[i]!r} {op} {b[i]!r} gave {got!r}, the rule says {want!r}"


@pytest.mark.parametrize(
    "ta, tb, op",
    [(ta, tb, op) for ta, tb in PAIRS for op in OPS if result_type(op, ta, tb) is None],
)
def test_mixes_whose_value_depends_on_the_reading_are_refused_with_the_casts(ta: str, tb: str, op: str) -> None:
    with pytest.raises(wg.CompileError) as ei:
        wg.compile(kernel_text(ta, tb, [op]))
    (d,) = ei.value.diagnostics  # one mistake, one message
    if "f32" in (ta, tb):
        assert "need integers" in d.message
    else:
        assert "signed or unsigned" in d.message and "i32(" in d.message and "u32(" in d.message


def test_the_fix_it_shows_both_rewrites() -> None:
    with pytest.raises(wg.CompileError) as ei:
        wg.compile(kernel_text("i32", "u32", ["//"]))
    msg = ei.value.diagnostics[0].message
    assert "`x // i32(y)` (signed)" in msg and "`u32(x) // y` (unsigned)" in msg


@wg.kernel
def vector_add(a: wg.f32[:], b: wg.f32[:], c: wg.f32[:], n: wg.u32):
    """The shape of the Rust toolchain's examples/vector_add.py: a u32 size against the thread id."""
    i = wg.global_id(0)
    if i < n:
        c[i] = a[i] + b[i]


def test_vector_add_with_a_u32_size_compiles_and_runs() -> None:
    a = np.arange(300, dtype=np.float32)
    b = np.full(300, 0.5, np.float32)
    c = np.zeros(300, np.float32)
    vector_add(a, b, c, 250, grid=2, workgroup=256)
    assert np.array_equal(c[:250], a[:250] + b[:250]) and not c[250:].any()


@wg.kernel
def compare_mixed(s: wg.i32[:], u: wg.u32[:], out: wg.i32[:]):
    i = wg.global_id()
    x = s[i]
    y = u[i]
    out[6 * i] = wg.i32(x < y)
    out[6 * i + 1] = wg.i32(y <= x)
    out[6 * i + 2] = wg.i32(x > y)
    out[6 * i + 3] = wg.i32(y >= x)
    out[6 * i + 4] = wg.i32(x == y)
    out[6 * i + 5] = wg.i32(-1 < y < 4294967295)


def test_comparisons_between_i32_and_u32_compare_mathematical_values() -> None:
    s = np.array([-1, -1, 0, 5, 2**31 - 1, 2**31 - 1, -(2**31), 7], np.int32)
    u = np.array([5, 2**32 - 1, 0, 5, 2**31, 2**31 - 1, 2**31, 2**32 - 1], np.uint32)
    out = np.zeros(6 * len(s), np.int32)
    compare_mixed(s, u, out, grid=1, workgroup=len(s))
    for i, (x, y) in enumerate(zip(s.tolist(), u.tolist())):
        want = [x < y, y <= x, x > y, y >= x, x == y, -1 < y < 4294967295]
        assert out[6 * i : 6 * i + 6].tolist() == [int(w) for w in want], (x, y)


def test_augmented_assignment_keeps_the_target_type() -> None:
    src = "import wavegpu as wg\n@wg.kernel\ndef k(o: wg.i32[:], n: wg.u32):\n    i = wg.global_id()\n"
    src += "    i += n\n    i -= 3\n    o[0] = i\n"
    prog = wg.compile(src)
    o = np.zeros(1, np.int32)
    layout = pack(prog.kernels[0], [o, 10])
    res = wg.emulate(prog, grid=1, workgroup=1, memory=layout.memory, args=layout.args)
    assert layout.read(res.memory, "o")[0] == 7


# ---- random mixed-type integer expressions -------------------------------------------------
VARS = {"p": "i32", "q": "i32", "u": "u32", "v": "u32"}


@st.composite
def int_expr(draw: st.DrawFn, depth: int = 0) -> tuple[str, tuple]:
    """(text, tree): trees are ("var", name) | ("const", v) | (op, left, right) | ("cmp", op, l, r)."""
    if depth >= 3 or draw(st.integers(0, 3)) == 0:
        name = draw(st.sampled_from(sorted(VARS)))
        return name, ("var", name)
    lt, ltree = draw(int_expr(depth + 1))
    kind = draw(st.integers(0, 5))
    if kind == 0:
        c = draw(st.sampled_from([0, 1, 3, 7, 40, -1, -40, 0xFFFF0000, 0x80000000, 2**31 - 1, -(2**31)]))
        op = draw(st.sampled_from(["+", "-", "*", "&", "|", "^"]))
        return f"({lt} {op} {c})", (op, ltree, ("const", c))
    rt, rtree = draw(int_expr(depth + 1))
    if kind == 1:
        op = draw(st.sampled_from(["<<", ">>"]))
        return f"({lt} {op} ({rt} & 31))", (op, ltree, ("&", rtree, ("const", 31)))
    if kind == 2:
        op = draw(st.sampled_from(["<", "<=", ">", ">=", "==", "!="]))
        return f"wg.i32({lt} {op} {rt})", ("cmp", op, ltree, rtree)
    if kind == 3 and typeof(ltree) == typeof(rtree):
        op = draw(st.sampled_from(["//", "%", "min", "max"]))
        if op in ("min", "max"):
            return f"{op}({lt}, {rt})", (op, ltree, rtree)
        return f"({lt} {op} ({rt} | 1))", (op, ltree, ("|", rtree, ("const", 1)))
    op = draw(st.sampled_from(["+", "-", "*", "&", "|", "^"]))
    return f"({lt} {op} {rt})", (op, ltree, rtree)


def const_type(c: int, other: str) -> str:
    lo, hi = (-(2**31), 2**31 - 1) if other == "i32" else (0, 2**32 - 1)
    if lo <= c <= hi:
        return other
    return "i32" if -(2**31) <= c < 2**31 else "u32"


def typeof(tree: tuple) -> str:
    if tree[0] == "var":
        return VARS[tree[1]]
    if tree[0] == "cmp":
        return "i32"
    if tree[0] == "const":
        raise AssertionError("constants are typed by their operand")
    ta = typeof(tree[1])
    tb = const_type(tree[2][1], ta) if tree[2][0] == "const" else typeof(tree[2])
    t = result_type(tree[0], ta, tb)
    assert t is not None
    return t


def evaluate(tree: tuple, env: dict[str, int]) -> int:
    if tree[0] == "var":
        return env[tree[1]]
    if tree[0] == "cmp":
        a, b = evaluate(tree[2], env), evaluate(tree[3], env)
        return int(reference(tree[1], "i32", "u32", a, b))
    ta = typeof(tree[1])
    a = evaluate(tree[1], env)
    if tree[2][0] == "const":
        c = tree[2][1]
        tb, b = const_type(c, ta), c
    else:
        tb, b = typeof(tree[2]), evaluate(tree[2], env)
    return int(reference(tree[0], ta, tb, a, b))


@settings(deadline=None)
@given(
    int_expr(),
    st.lists(st.integers(-(2**31), 2**31 - 1), min_size=2, max_size=2),
    st.lists(st.integers(0, 2**32 - 1), min_size=2, max_size=2),
)
def test_random_mixed_integer_expressions_match_the_rules(expr: tuple[str, tuple], s: list[int], u: list[int]) -> None:
    text, tree = expr
    t = typeof(tree)
    body = f"wg.i32({text})" if t == "u32" else text
    src = (
        "import wavegpu as wg\n@wg.kernel\n"
        "def k(o: wg.i32[:], p: wg.i32, q: wg.i32, u: wg.u32, v: wg.u32):\n"
        f"    o[0] = {body}\n"
    )
    env = {"p": s[0], "q": s[1], "u": u[0], "v": u[1]}
    want = wrap(evaluate(tree, env), "i32")
    for opt in (0, 2):
        prog = wg.compile(src, opt=opt)
        o = np.zeros(1, np.int32)
        layout = pack(prog.kernels[0], [o, s[0], s[1], u[0], u[1]])
        res = wg.emulate(prog, grid=1, workgroup=1, memory=layout.memory, args=layout.args)
        got = int(layout.read(res.memory, "o")[0])
        assert got == want, f"-O{opt}: {text} with {env}: got {got}, want {want}"


RUST_TOOLCHAIN_VECTOR_ADD = """from wave import kernel, f32, thread_id, barrier

@kernel
def vector_add(a: f32[:], b: f32[:], out: f32[:], n: u32):
    gid = thread_id()
    if gid < n:
        out[gid] = a[gid] + b[gid]
"""


def test_the_rust_toolchains_vector_add_example_compiles_and_runs_unchanged() -> None:
    """COMPAT.md: its Python example, text unchanged (an i32 thread id against the u32 n)."""
    prog = wg.compile(RUST_TOOLCHAIN_VECTOR_ADD)
    a = np.arange(256, dtype=np.float32)
    b = np.full(256, 2.0, np.float32)
    out = np.zeros(256, np.float32)
    layout = pack(prog.kernels[0], [a, b, out, 200])
    res = wg.emulate(prog, grid=1, workgroup=256, memory=layout.memory, args=layout.args)
    got = layout.read(res.memory, "out")
    assert np.array_equal(got[:200], a[:200] + 2) and not got[200:].any()


@wg.kernel
def mixed_loops(x: wg.f32[:], sums: wg.u32[:], n: wg.u32, m: wg.i32):
    for k in range(wg.global_id(), n, wg.global_size()):  # i32 start, u32 stop: a grid-stride loop
        x[k] = x[k] + 1.0
    if wg.global_id() == 0:
        s = wg.u32(0)
        for j in range(n, 0, -1):  # a u32 counting down to its stop
            s += j
        sums[0] = s
        t = wg.u32(0)
        for q in range(m, n):  # i32 from a negative start up to a u32 stop
            t += wg.u32(q - q + 1)
        sums[1] = t


def test_ranges_mixing_i32_and_u32() -> None:
    x = np.zeros(1000, np.float32)
    sums = np.zeros(2, np.uint32)
    mixed_loops(x, sums, 700, -5, grid=2, workgroup=64)
    assert np.array_equal(x, np.r_[np.ones(700), np.zeros(300)].astype(np.float32))
    assert sums.tolist() == [sum(range(700, 0, -1)), len(range(-5, 700))]


@pytest.mark.parametrize(
    "loop, message",
    [
        ("for j in range(u, -1, -1):", "the range ends at -1, which is no u32, the type of 'j'; count with an i32"),
        ("for j in range(u, 0, -2):", "'j' is u32 and would wrap around below 0 with a step of -2"),
    ],
)
def test_ranges_that_would_wrap_are_refused(loop: str, message: str) -> None:
    src = f"import wavegpu as wg\n@wg.kernel\ndef k(o: wg.u32[:], u: wg.u32):\n    {loop}\n        o[j] = j\n"
    with pytest.raises(wg.CompileError) as ei:
        wg.compile(src)
    (d,) = ei.value.diagnostics
    assert message in d.message and "range(i32(" in d.message
