"""Structuring of loops whose break or continue sits inside nested ifs (compiler/lir/structure.py):
a loop whose body always ends in break (no back edge: the CFG is acyclic, and the inner break
jumps past the end of the ifs around it), and unrolled copies of a continue inside nested ifs
(passes/unroll.py). Every -O level gives the same bits as NumPy and as -O0."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import wavegpu as wg
from wavegpu.runtime.buffers import pack

X = ((np.arange(64, dtype=np.int64) * 37) % 41 - 12).astype(np.int32)

BREAK_PY = """
import wavegpu as wg

@wg.kernel
def k(out: wg.i32[:], x: wg.i32[:]):
    i = wg.global_id()
    a = x[i]
    while a < 100:
        if a > 5:
            if a > 10:
                break
        a += 1
        break
    out[i] = a
"""

BREAK_RS = """
#[kernel]
fn k(out: &mut [i32], x: &[i32]) {
    let i = global_id(0) as usize;
    let mut a = x[i];
    while a < 100 {
        if a > 5 {
            if a > 10 {
                break;
            }
        }
        a += 1;
        break;
    }
    out[i] = a;
}
"""

CONTINUE_PY = """
import wavegpu as wg

@wg.kernel
def k(out: wg.i32[:], x: wg.i32[:]):
    i = wg.global_id()
    a = x[i]
    for j in range(4):
        if a > j:
            if a > 10:
                continue
            a += 3
        a += j
    out[i] = a
"""


def break_numpy(x: np.ndarray) -> np.ndarray:
    return np.where((x < 100) & ~(x > 10), x + 1, x).astype(np.int32)


def continue_numpy(x: np.ndarray, trip: int = 4) -> np.ndarray:
    a = x.astype(np.int64)
    for j in range(trip):
        skip = (a > j) & (a > 10)
        a = np.where((a > j) & ~skip, a + 3, a)
        a = np.where(skip, a, a + j)
    return a.astype(np.int32)


def run(text: str, lang: str, opt: int, x: np.ndarray, *scalars: int) -> np.ndarray:
    prog = wg.compile(text, lang=lang, opt=opt)
    k = prog.kernels[0]
    out = np.zeros(x.size, np.int32)
    layout = pack(k, [out, x, *scalars])
    res = wg.emulate(prog, grid=1, workgroup=x.size, memory=layout.memory, args=layout.args)
    return layout.read(res.memory, "out")


@pytest.mark.parametrize("opt", [0, 1, 2, 3])
@pytest.mark.parametrize(
    ("text", "lang", "want"),
    [
        (BREAK_PY, "python", break_numpy),
        (BREAK_RS, "rust", break_numpy),
        (CONTINUE_PY, "python", continue_numpy),
    ],
    ids=["break-python", "break-rust", "unrolled-continue-python"],
)
def test_jump_out_of_nested_ifs(text: str, lang: str, want: object, opt: int) -> None:
    got = run(text, lang, opt, X)
    assert callable(want)
    assert np.array_equal(got, want(X)), f"-O{opt}: {list(got)}"


def test_a_jump_past_the_ifs_is_a_flag_not_a_copy() -> None:
    """The lanes that jump out of the nested ifs are flagged and the code up to the jump's
    target is guarded against them: nothing is emitted twice (one ret), and the unrolled copies
    of a continue grow the kernel linearly with the trip count, not exponentially."""
    text = wg.disassemble(wg.compile(BREAK_PY, lang="python", opt=0))
    assert text.count("ret") == 1, text
    sizes = {}
    for trip in (4, 8, 16):
        prog = wg.compile(CONTINUE_PY.replace("range(4)", f"range({trip})"), lang="python", opt=3)
        text = wg.disassemble(prog)
        assert "loop" not in text  # unrolled
        sizes[trip] = len(text.splitlines())
        got = run(CONTINUE_PY.replace("range(4)", f"range({trip})"), "python", 3, X)
        assert np.array_equal(got, continue_numpy(X, trip)), trip
    assert sizes[16] - sizes[8] <= 1.2 * (sizes[8] - sizes[4]) * 2, sizes


LOOP_ON_BREAK_PATH = """
import wavegpu as wg

@wg.kernel
def k(out: wg.i32[:], x: wg.i32[:], p: wg.i32):
    i = wg.global_id()
    a = x[i]
    b = p - i
    if a == 7:
        if a < 1:
            a += a + 1
    else:
        for k1 in range(0, 2):
            if b < -6:
                for k3 in range(0, 0):
                    continue
                break
    a += a + 2
    t0 = 0
    while t0 < 0:
        a += a + 3
    out[i] = a * 7 + b
"""


@pytest.mark.parametrize("opt", [0, 1, 2, 3])
def test_a_loop_on_a_break_path_that_leaves_the_outer_loop_too(opt: int) -> None:
    """The inner loop lies on the outer loop's break path (it moves inside the outer loop), and
    at -O1 its exit is the outer loop's exit: leaving it leaves the outer loop too (found by the
    random test below: -O1 ran the code after the loops inside the outer loop)."""
    x = X[:32]
    for p in (-3, 2, 40):
        want = run_python(LOOP_ON_BREAK_PATH, x, p)
        assert np.array_equal(run(LOOP_ON_BREAK_PATH, "python", opt, x, p), want), (opt, p)


MERGE_ON_THE_WAY_OUT = """
import wavegpu as wg

@wg.kernel
def k(out: wg.i32[:], x: wg.i32[:]):
    i = wg.global_id()
    a = x[i]
    for j in range(2):
        while a < 50:
            if a < 0:
                a += 5
                if a < 0:
                    continue
            else:
                a += 1
            break
    out[i] = a
"""
# the same with the outer loop a while: the inner loop's follow jumps straight to its header
MERGE_AT_THE_OUTER_HEADER = MERGE_ON_THE_WAY_OUT.replace(
    "    for j in range(2):", "    j = 0\n    while j < 2:\n        j += 1"
)


def merge_on_the_way_out_reference(x: np.ndarray) -> np.ndarray:
    out = []
    for a in x.tolist():
        for _ in range(2):
            if a < 0:
                a -= 5 * (a // 5)  # the retries: up to the first a + 5n >= 0
            elif a < 50:
                a += 1
        out.append(a)
    return np.array(out, np.int32)


@pytest.mark.parametrize("opt", [0, 1, 2, 3])
@pytest.mark.parametrize("text", [MERGE_ON_THE_WAY_OUT, MERGE_AT_THE_OUTER_HEADER], ids=["for", "while"])
def test_ifs_that_meet_on_the_way_out_of_a_loop_break(text: str, opt: int) -> None:
    """The arms of the if/else meet at an empty block that only jumps on, past the inner loop's
    follow, to the outer loop's latch or header: meeting there leaves the inner loop (a break).
    Found by the random test below: -O0 ran the outer `for`'s latch inside the inner loop as well
    (j += 1 twice, the outer loop ran once), and nested the outer `while` inside the inner loop
    again and again (RecursionError)."""
    got = run(text, "python", opt, X)
    want = merge_on_the_way_out_reference(X)
    assert np.array_equal(got, want), f"-O{opt}: {list(got)}"
    if opt == 0:
        dis = wg.disassemble(wg.compile(text, lang="python", opt=0))
        assert dis.count("add.s32") == 3, dis  # a += 5, a += 1 and j += 1, each emitted once
        assert dis.count("endloop") == 2, dis


# -- random loops with break and continue inside nested ifs
VARS = ("a", "b")


@st.composite
def cond(draw: st.DrawFn) -> str:
    v = draw(st.sampled_from([*VARS, "i"]))
    return f"{v} {draw(st.sampled_from(['<', '>', '==', '!=']))} {draw(st.integers(-8, 12))}"


@st.composite
def body(draw: st.DrawFn, ind: str, depth: int, loops: int) -> list[str]:
    out: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        kinds = ["set", "set"]
        if depth < 4:
            kinds += ["if", "if"]
        if loops < 2 and depth < 4:
            kinds += ["for", "while", "retry"]
        if loops:
            kinds += ["jump", "jump"]
        kind = draw(st.sampled_from(kinds))
        if kind == "set":
            v = draw(st.sampled_from(VARS))
            op = draw(st.sampled_from(["+=", "-=", "^=", "="]))
            out.append(f"{ind}{v} {op} {draw(st.sampled_from([*VARS, 'i']))} + {draw(st.integers(-5, 5))}")
        elif kind == "if":
            out.append(f"{ind}if {draw(cond())}:")
            out += draw(body(ind + "    ", depth + 1, loops))
            if draw(st.booleans()):
                out.append(f"{ind}else:")
                out += draw(body(ind + "    ", depth + 1, loops))
        elif kind == "jump":
            out.append(f"{ind}{draw(st.sampled_from(['break', 'continue']))}")
            break  # nothing after a jump in the same block
        elif kind == "for":
            k = f"k{depth}"
            out.append(f"{ind}for {k} in range({draw(st.integers(0, 2))}, {draw(st.integers(0, 5))}):")
            out.append(f"{ind}    b += {k}")
            out += draw(body(ind + "    ", depth + 1, loops + 1))
            if draw(st.booleans()):
                out.append(f"{ind}    break")
        elif kind == "retry":
            # a loop that runs its body again only on a continue inside a nested if, and whose
            # if/else arms meet at its closing break
            t = f"t{depth}"
            out.append(f"{ind}{t} = 0")
            out.append(f"{ind}while {t} < {draw(st.integers(1, 4))}:")
            out.append(f"{ind}    {t} += 1")
            out.append(f"{ind}    if {draw(cond())}:")
            out += draw(body(ind + "        ", depth + 2, loops + 1))
            if out[-1] not in (f"{ind}        break", f"{ind}        continue"):  # nothing after a jump
                out.append(f"{ind}        if {draw(cond())}:")
                out.append(f"{ind}            continue")
            out.append(f"{ind}    else:")
            out += draw(body(ind + "        ", depth + 2, loops + 1))
            out.append(f"{ind}    break")
        else:
            t = f"t{depth}"
            out.append(f"{ind}{t} = 0")
            out.append(f"{ind}while {t} < {draw(st.integers(0, 4))}:")
            out.append(f"{ind}    {t} += 1")
            out += draw(body(ind + "    ", depth + 1, loops + 1))
            if draw(st.booleans()):
                out.append(f"{ind}    break")
    return out


@st.composite
def kernels(draw: st.DrawFn) -> str:
    lines = draw(body("    ", 0, 0))
    return "\n".join(
        [
            "import wavegpu as wg",
            "",
            "@wg.kernel",
            "def k(out: wg.i32[:], x: wg.i32[:], p: wg.i32):",
            "    i = wg.global_id()",
            "    a = x[i]",
            "    b = p - i",
            *lines,
            "    out[i] = a * 7 + b",
            "",
        ]
    )


def run_python(text: str, x: np.ndarray, p: int) -> np.ndarray:
    ns: dict[str, object] = {}
    exec(compile(text, "<random loop kernel>", "exec"), ns)
    fn = ns["k"].python  # type: ignore[attr-defined]
    out = np.zeros(x.size, np.int32)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for i in range(x.size):
            with wg.python_thread(global_id=i):
                fn(out, x, np.int32(p))
    return out


@settings(max_examples=60, deadline=None)
@given(kernels(), st.integers(-20, 20))
def test_random_nested_jumps_every_level(text: str, p: int) -> None:
    x = X[:32]
    want = run_python(text, x, p)
    for opt in (0, 1, 2, 3):
        got = run(text, "python", opt, x, p)
        assert np.array_equal(got, want), f"-O{opt}\n{text}\ngot  {list(got)}\nwant {list(want)}"


@pytest.mark.parametrize("device", ["amdgcn-sim", "opencl", "sycl"])
def test_the_flags_run_the_same_on_other_devices(device: str) -> None:
    """The guarded code and its flag predicates, translated: the same memory as the emulator."""
    from wavegpu.runtime import devices

    ok, why = devices.device(device).available()
    if not ok:
        pytest.skip(f"{device}: {why}")
    cases = [(BREAK_PY, []), (CONTINUE_PY.replace("range(4)", "range(8)"), []), (LOOP_ON_BREAK_PATH, [2])]
    for text, scalars in cases:
        for opt in (0, 3):
            prog = wg.compile(text, lang="python", opt=opt)
            layout = pack(prog.kernels[0], [np.zeros(64, np.int32), X, *scalars])
            ref = wg.emulate(prog, grid=1, workgroup=64, memory=layout.memory, args=layout.args).memory
            got = wg.launch(prog, device=device, grid=1, workgroup=64, memory=layout.memory, args=layout.args)
            assert np.array_equal(np.asarray(got.memory)[: ref.size], ref), (device, opt, text)
