"""The access table (Kernel.accesses) and read-only buffers (Param.writable): at every -O level the
tags agree with the source, and random kernels run under exact per-buffer bounds checking trap
exactly where (and on the array) the Python source goes out of bounds."""

from __future__ import annotations

import ast
import inspect
import textwrap
from pathlib import Path

import kernels as K
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import wavegpu as wg
from wavegpu.emulator import BufferRegion
from wavegpu.wbin.program import Kernel

OPTS = [0, 1, 2, 3]
EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples" / "kernels").glob("*.py"))
CORPUS = sorted(name for name, v in vars(K).items() if callable(v) and hasattr(v, "python"))


def source_accesses(fn: ast.FunctionDef, first_line: int) -> tuple[set[tuple[int, str]], set[str]]:
    """(line, buffer) of every global access the source writes, and the buffers stored or atomically
    updated. Lines are absolute (first_line is the def's line in the file)."""
    buffers = {a.arg for a in fn.args.args if isinstance(a.annotation, ast.Subscript)}
    seen: set[tuple[int, str]] = set()
    written: set[str] = set()
    for node in ast.walk(fn):
        line = first_line + getattr(node, "lineno", 1) - fn.lineno
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in buffers:
            seen.add((line, node.value.id))
            if isinstance(node.ctx, ast.Store):
                written.add(node.value.id)
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Name):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if name.startswith("atomic_") and node.args[0].id in buffers:
                seen.add((line, node.args[0].id))
                written.add(node.args[0].id)
    return seen, written


def tagged(k: Kernel) -> set[tuple[int, str]]:
    assert k.accesses is not None and len(k.accesses) == len(k.instructions)
    out = set()
    for pc, (inst, tag) in enumerate(zip(k.instructions, k.accesses)):
        if not inst.spec.is_global_access:
            assert tag is None, f"pc {pc}: a tag on {inst.spec.key}"
            continue
        assert tag is not None, f"pc {pc}: {inst.spec.key} has no tag"
        loc = k.loc(pc)
        assert loc is not None
        out.add((loc.line, k.params[tag].name))
    return out


def check_against_source(k: Kernel, fn: ast.FunctionDef, first_line: int, opt: int) -> None:
    want, written = source_accesses(fn, first_line)
    got = tagged(k)
    # every tag names an array the source indexes on that line; at -O0 nothing is removed or merged
    assert got <= want, f"-O{opt} {k.name}: tags not in the source: {sorted(got - want)}"
    if opt == 0:
        assert got == want, f"-O0 {k.name}: accesses without a tag: {sorted(want - got)}"
    for p in k.params:
        if p.kind == "buffer":
            assert p.writable == (p.name in written), f"-O{opt} {k.name}: {p.name} writable={p.writable}"


@pytest.mark.parametrize("opt", OPTS)
@pytest.mark.parametrize("name", CORPUS)
def test_corpus_tags_agree_with_the_source(name: str, opt: int) -> None:
    kern = getattr(K, name)
    k = wg.compile(kern, opt=opt).kernels[0]
    lines, first = inspect.getsourcelines(kern.python)
    tree = ast.parse(textwrap.dedent("".join(lines)))
    fn = tree.body[0]
    assert isinstance(fn, ast.FunctionDef)
    check_against_source(k, fn, first + fn.lineno - 1, opt)


@pytest.mark.parametrize("opt", OPTS)
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_tags_agree_with_the_source(path: Path, opt: int) -> None:
    prog = wg.compile(str(path), opt=opt)
    fns = {n.name: n for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.FunctionDef)}
    for k in prog.kernels:
        check_against_source(k, fns[k.name], fns[k.name].lineno, opt)


def test_read_only_buffers_and_untagged_stores() -> None:
    k = wg.compile(K.saxpy).kernels[0]
    assert [(p.name, p.writable) for p in k.params if p.kind == "buffer"] == [("x", False), ("y", True)]
    # without tags on stores nothing can be proved: every buffer stays writable
    from wavegpu.compiler.emit import mark_read_only

    acc = [None if inst.spec.cls == "store" else t for inst, t in zip(k.instructions, k.accesses or ())]
    params = mark_read_only([p.__class__(p.name, p.kind, p.dtype) for p in k.params], list(k.instructions), acc)
    assert all(p.writable for p in params)


def test_mir_text_carries_tags_through_parse() -> None:
    from wavegpu.compiler.mir import dump, parse, verify

    text = "\n".join(
        [
            "func @t(%0: u32 x[f32], %1: u32 y[f32]) {",
            "bb0:",
            "  %2 = load.global[y] %0 : f32",
            "  store.global[x] %1, %2",
            "  %3 = atomic.add.global[y] %1, 1.0:f32 : f32",
            "  ret",
            "}",
        ]
    )
    fn = parse(text + "\n")
    verify(fn)
    assert [i.buffer for i in fn.blocks[0].insts] == [1, 0, 1]
    assert dump(fn) == text + "\n"
    with pytest.raises(wg.CompileError, match="not a buffer parameter"):
        parse(text.replace("load.global[y]", "load.global[z]"))
    bad = parse(text.replace("load.global[y] %0", "load.local[y] %0"))
    with pytest.raises(wg.CompileError, match="no global access"):
        verify(bad)


# ---- random kernels, exact bounds: a wrong tag traps on an in-bounds access or names the wrong array
ARRAYS = ("a", "b", "c")


@st.composite
def index(draw: st.DrawFn, var: str = "i") -> tuple[str, object]:
    """An index expression and a function computing it from the thread index (and loop k)."""
    d = draw(st.integers(-3, 40))
    form = draw(st.integers(0, 3))
    if form == 0:
        return f"{var} + {d}", lambda i, k, d=d: (k if var == "k" else i) + d
    if form == 1:
        m = draw(st.integers(0, 3))
        return f"{var} * {m} + {d}", lambda i, k, d=d, m=m: (k if var == "k" else i) * m + d
    if form == 2:
        return f"{var} // 2 + {d}", lambda i, k, d=d: (k if var == "k" else i) // 2 + d
    return f"{d}", lambda i, k, d=d: np.full_like(i, d)


@st.composite
def statement(draw: st.DrawFn) -> tuple[list[str], list[tuple[str, object, bool]]]:
    """Source lines, and the accesses they make in order: (array, index function, even threads only)."""
    arr = draw(st.sampled_from(ARRAYS))
    kind = draw(st.sampled_from(["load", "store", "rmw", "atomic", "loop", "if"]))
    text, f = draw(index())
    if kind == "load":
        return [f"s += {arr}[{text}]"], [(arr, f, False)]
    if kind == "store":
        return [f"{arr}[{text}] = s + 1"], [(arr, f, False)]
    if kind == "rmw":  # load, then store, of the same element
        return [f"{arr}[{text}] += s"], [(arr, f, False), (arr, f, False)]
    if kind == "atomic":
        return [f"s += wg.atomic_add({arr}, {text}, 1)"], [(arr, f, False)]
    if kind == "if":
        return ["if i % 2 == 0:", f"    {arr}[{text}] = s"], [(arr, f, True)]
    trip = draw(st.integers(1, 4))
    ktext, kf = draw(index("k"))
    other = draw(st.sampled_from(ARRAYS))
    body = [f"for k in range({trip}):", f"    s += {arr}[{ktext}]", f"    {other}[{text}] = s"]
    acc = []
    for k in range(trip):
        acc += [(arr, lambda i, _k, k=k, kf=kf: kf(i, k), False), (other, f, False)]
    return body, acc


@st.composite
def random_kernel(draw: st.DrawFn) -> tuple[str, list[tuple[str, object, bool]]]:
    stmts = draw(st.lists(statement(), min_size=1, max_size=5))
    lines = [
        "import wavegpu as wg",
        "",
        "@wg.kernel",
        "def rnd(a: wg.i32[:], b: wg.i32[:], c: wg.i32[:], out: wg.i32[:]):",
        "    i = wg.global_id()",
        "    s = i",
    ]
    acc: list[tuple[str, object, bool]] = []
    for body, a in stmts:
        lines += ["    " + x for x in body]
        acc += a
    lines.append("    out[i] = s")  # keeps every load alive
    return "\n".join(lines) + "\n", acc


def first_violation(
    acc: list[tuple[str, object, bool]], sizes: dict[str, int], threads: int
) -> tuple[str, int, int] | None:
    """(array, element index, thread) of the first out-of-bounds access: statements run in order,
    all threads in lockstep, so the first statement with a bad lane traps at its lowest lane."""
    i = np.arange(threads)
    for arr, f, even in acc:
        idx = np.broadcast_to(f(i, 0), i.shape)  # type: ignore[operator]
        bad = (idx < 0) | (idx >= sizes[arr])
        if even:
            bad &= i % 2 == 0
        if bad.any():
            t = int(np.flatnonzero(bad)[0])
            return arr, int(idx[t]), t
    return None


@settings(max_examples=30, deadline=None)
@given(random_kernel(), st.lists(st.integers(0, 24), min_size=3, max_size=3), st.integers(1, 16))
def test_random_kernels_trap_on_the_array_the_source_names(
    kern: tuple[str, list[tuple[str, object, bool]]], sizes: list[int], threads: int
) -> None:
    text, acc = kern
    size = dict(zip(ARRAYS, sizes))
    size["out"] = threads
    want = first_violation(acc, size, threads)
    for opt in OPTS:
        k = wg.compile(text, opt=opt).kernels[0]
        # the arrays back to back: an access past one array's end lands in the next one, so only
        # exact checking (the tag) can tell
        regions, off = [], 0
        for p, name in enumerate((*ARRAYS, "out")):
            regions.append(BufferRegion(p, name, off, 4 * size[name], 4))
            off += 4 * size[name]
        args = [r.offset for r in regions]
        mem = np.zeros(off + 4, np.uint8)
        try:
            wg.emulate(k, grid=1, workgroup=threads, memory=mem, args=args, buffers=regions, boundscheck=True)
            got = None
        except wg.Trap as e:
            assert e.thread is not None, str(e)
            got = (e.array, e.index, e.thread[0])
            assert e.source is not None and e.source.startswith("<string>:"), str(e)
        assert got == want, f"-O{opt}\n{text}\nsizes {size}, {threads} threads"
