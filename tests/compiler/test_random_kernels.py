"""Random kernels compiled at -O0 and -O3 agree with running the same Python function directly."""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import wavegpu as wg
from wavegpu.runtime.buffers import pack

VARS = ["a", "b", "c"]
OPS = ["+", "-", "*", "&", "|", "^"]


@st.composite
def expr(draw: st.DrawFn, depth: int = 0) -> str:
    choice = draw(st.integers(0, 9 if depth < 2 else 3))
    v = draw(st.sampled_from([*VARS, "i", "p0", "p1"]))
    if choice <= 1:
        return v
    if choice <= 3:
        return str(draw(st.integers(-40, 40)))
    a = draw(expr(depth + 1))
    b = draw(expr(depth + 1))
    if choice <= 6:
        return f"({a} {draw(st.sampled_from(OPS))} {b})"
    if choice == 7:
        op = draw(st.sampled_from(["<<", ">>"]))
        return f"({a} {op} ({b} & 15))"
    if choice == 8:
        op = draw(st.sampled_from(["//", "%"]))
        d = draw(st.sampled_from(["3", "-5", "7", "8", "-16", "1", f"(({b} & 7) + 1)"]))
        return f"({a} {op} {d})"
    return f"{draw(st.sampled_from(['min', 'max']))}({a}, {b})"


@st.composite
def cond(draw: st.DrawFn) -> str:
    a, b = draw(expr(1)), draw(expr(1))
    c = f"{a} {draw(st.sampled_from(['<', '<=', '>', '>=', '==', '!=']))} {b}"
    if draw(st.integers(0, 3)) == 0:
        c = f"({c}) {draw(st.sampled_from(['and', 'or']))} {draw(expr(1))} > {draw(st.integers(-20, 20))}"
    return c


@st.composite
def block(draw: st.DrawFn, ind: str, depth: int, in_loop: bool) -> list[str]:
    out = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(
            st.sampled_from(
                ["set"] * 4
                + (["if", "for", "while"] if depth < 2 else [])
                + (["brk"] if in_loop else [])
                + (["ret"] if depth > 0 else [])
            )
        )
        if kind == "set":
            v = draw(st.sampled_from(VARS))
            op = draw(st.sampled_from(["=", "+=", "-=", "^="]))
            out.append(f"{ind}{v} {op} {draw(expr())}")
        elif kind == "if":
            out.append(f"{ind}if {draw(cond())}:")
            out += draw(block(ind + "    ", depth + 1, in_loop))
            if draw(st.booleans()):
                out.append(f"{ind}else:")
                out += draw(block(ind + "    ", depth + 1, in_loop))
        elif kind == "for":
            k = f"k{depth}"
            lo, hi = draw(st.integers(-3, 3)), draw(st.integers(-3, 6))
            step = draw(st.sampled_from([1, 2, -1, -2]))
            out.append(f"{ind}for {k} in range({lo}, {hi}, {step}):")
            out.append(f"{ind}    a += {k}")
            out += draw(block(ind + "    ", depth + 1, True))
        elif kind == "while":
            t = f"t{depth}"
            out.append(f"{ind}{t} = 0")
            out.append(f"{ind}while {t} < {draw(st.integers(0, 5))}:")
            out.append(f"{ind}    {t} += 1")
            out += draw(block(ind + "    ", depth + 1, True))
        elif kind == "brk":
            out.append(f"{ind}if {draw(cond())}:")
            out.append(f"{ind}    {draw(st.sampled_from(['break', 'continue']))}")
        else:
            out.append(f"{ind}if {draw(cond())}:")
            out.append(f"{ind}    return")
    return out


@st.composite
def kernels(draw: st.DrawFn) -> str:
    body = draw(block("    ", 0, False))
    return "\n".join(
        [
            "import wavegpu as wg",
            "",
            "@wg.kernel",
            "def rnd(out: wg.i32[:], x: wg.i32[:], p0: wg.i32, p1: wg.i32):",
            "    i = wg.global_id()",
            "    a = x[i]",
            "    b = a * 3 + p0",
            "    c = p1 - i",
            *body,
            "    out[i] = (a ^ b) + c",
            "",
        ]
    )


def run_python(text: str, x: np.ndarray, p0: int, p1: int) -> np.ndarray:
    ns: dict[str, object] = {}
    exec(compile(text, "<random kernel>", "exec"), ns)
    fn = ns["rnd"].python  # type: ignore[attr-defined]
    out = np.zeros(x.size, np.int32)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for i in range(x.size):
            with wg.python_thread(global_id=i):
                fn(out, x, np.int32(p0), np.int32(p1))
    return out


def run_compiled(text: str, opt: int, x: np.ndarray, p0: int, p1: int) -> np.ndarray:
    prog = wg.compile(text, opt=opt)
    k = prog.kernels[0]
    out = np.zeros(x.size, np.int32)
    layout = pack(k, [out, x, p0, p1])
    res = wg.emulate(prog, grid=1, workgroup=x.size, memory=layout.memory, args=layout.args)
    return layout.read(res.memory, "out")


@settings(max_examples=40, deadline=None)
@given(
    kernels(),
    st.lists(st.integers(-(2**31), 2**31 - 1), min_size=32, max_size=32),
    st.integers(-100, 100),
    st.integers(-(2**31), 2**31 - 1),
)
def test_random_kernels_match_python(text: str, xs: list[int], p0: int, p1: int) -> None:
    x = np.array(xs, np.int32)
    want = run_python(text, x, p0, p1)
    for opt in (0, 3):
        got = run_compiled(text, opt, x, p0, p1)
        assert np.array_equal(got, want), f"-O{opt}\n{text}\ngot  {list(got)}\nwant {list(want)}"
