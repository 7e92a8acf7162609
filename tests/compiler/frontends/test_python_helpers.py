"""Python helper functions (compiler/frontends/python.py through compiler/inline.py): plain defs of
the kernel's module and of an imported module, as `@wg.kernel` reads them (the function's globals)
and as `wg.load_kernels` / `wg.compile` read a file (its imports, found next to it), against NumPy
and against the same kernel run as plain Python (`wg.python_thread`); recursion refused with its
call chain; an error inside a helper names the helper's line and the call's, once; the refusals
of what Python would do differently (None results, lambdas, calling a kernel)."""

from __future__ import annotations

import importlib
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import wavegpu as wg
from wavegpu.runtime.cache import used_globals

HERE = Path(__file__).parent / "python"
f32 = np.float32


@pytest.fixture(scope="module")
def kernels():  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(HERE))
    try:
        yield importlib.import_module("helper_kernels")
    finally:
        sys.path.remove(str(HERE))


def _data(n: int, seed: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    x, y = rng.random(n, dtype=f32), rng.random(n, dtype=f32) * f32(5)
    m = rng.random((3, 5), dtype=f32)
    return x, y, m


def _reference(x: np.ndarray, y: np.ndarray, m: np.ndarray) -> tuple[np.ndarray, ...]:
    """What helper_kernels.helpers computes, in f32 as the kernel does, one thread at a time."""
    n = len(x)
    out, pos, counts = np.zeros(n, f32), np.zeros(n, np.int32), np.zeros(4, np.uint32)
    t = [x[i % n] for i in range(64)]
    half = f32(0)
    for j in range(4):
        half = f32(half + t[j])
    half = f32(half * f32(0.5))
    for i in range(n):
        r = f32(f32(f32(x[i] * x[i]) + f32(y[i] * y[i])) * f32(0.5))
        r = f32(0.25) if r < 0.25 else f32(6.0) if r > 6.0 else r
        s = f32(0)
        for c in range(m.shape[1]):
            s = f32(s + m[i % m.shape[0], c])
        out[i] = f32(f32(f32(f32(r * f32(3.0)) + f32(9.0)) + half) + s)
        pos[i] = next((j for j in range(i, n) if x[j] > 0.75), n)
        if f32(x[i] * x[i]) > 0.25:
            counts[i % 4] += 1
    return out, pos, counts


def _outputs(n: int) -> tuple[np.ndarray, ...]:
    return np.zeros(n, f32), np.zeros(n, np.int32), np.zeros(4, np.uint32)


@pytest.mark.parametrize("opt", [0, 2])
def test_helpers_of_the_module_and_an_imported_one_give_numpys_answer(kernels, opt: int) -> None:  # type: ignore[no-untyped-def]
    x, y, m = _data(60, 7)
    x[-1] = 0.5  # the last threads find nothing above 0.75: the helper's loop ends without its return
    want = _reference(x, y, m)
    assert (want[1] < 60).any() and (want[1] == 60).any() and want[2].sum() > 0  # every path taken
    got = _outputs(60)
    k = wg.kernel(kernels.helpers.python, opt=opt)
    k(x, y, m, *got, grid=1, workgroup=64)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    # the same file read as text: its imports are found next to it
    got = _outputs(60)
    wg.load_kernels(HERE / "helper_kernels.py", opt=opt).helpers(x, y, m, *got, grid=1, workgroup=64)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_load_kernels_takes_engine_like_decorated_kernels(engine: str) -> None:
    x, y, m = _data(20, 3)
    got = _outputs(20)
    wg.load_kernels(HERE / "helper_kernels.py").helpers(x, y, m, *got, grid=1, workgroup=64, engine=engine)
    for g, w in zip(got, _reference(x, y, m)):
        np.testing.assert_array_equal(g, w)


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(
    xs=st.lists(st.floats(0, 1, width=32), min_size=4, max_size=64),
    scale=st.floats(0, 4, width=32),
)
def test_compiled_helpers_agree_with_the_kernel_run_as_plain_python(kernels, xs: list[float], scale: float) -> None:  # type: ignore[no-untyped-def]
    x = np.array(xs, f32)
    y = (x[::-1] * f32(scale)).astype(f32)
    m = np.outer(np.arange(3, dtype=f32), x[:5]).astype(f32)
    got = _outputs(len(x))
    kernels.helpers(x, y, m, *got, grid=1, workgroup=64)
    ref = _outputs(len(x))
    with np.errstate(all="ignore"):  # the plain-Python run: one thread at a time, its helpers Python's own
        for i in range(64):
            with wg.python_thread(global_id=i):
                _python_thread(kernels, x, y, m, ref, i)
    for g, w in zip(got, ref):
        np.testing.assert_array_equal(g, w)


def _python_thread(kernels, x, y, m, ref, i):  # type: ignore[no-untyped-def]
    """helpers() of one thread in plain Python: its local array is the workgroup's, filled first."""
    n = len(x)
    if i >= n:
        return
    t = np.array([x[j % n] for j in range(64)], f32)
    import helper_kernels as hk
    import wavehelpers as wh

    out, pos, counts = ref
    r = hk.clip(hk.norm2(x[i], y[i]) * f32(0.5), hi=f32(6.0))
    out[i] = wh.scaled(r, f32(wh.SCALE)) + f32(hk.sq(3)) + hk.halve_sum(t, 4) + wh.row_sum(m, i % m.shape[0])
    pos[i] = wh.first_above(x, i, 0.75)
    hk.count_into(counts, x[i] * x[i])


RECURSION = {
    "direct": (
        "import wavegpu as wg\ndef f(v):\n    return f(v - 1) if v > 0 else 0\n"
        "@wg.kernel\ndef k(o: wg.i32[:]):\n    o[0] = f(3)\n",
        "k -> f (line 6) -> f (line 3)",
    ),
    "mutual": (
        "import wavegpu as wg\ndef a(v):\n    if v > 0:\n        return b(v - 1)\n    return 0\n"
        "def b(v):\n    return a(v) + 1\n@wg.kernel\ndef k(o: wg.i32[:]):\n    o[0] = a(3)\n",
        "k -> a (line 10) -> b (line 4) -> a (line 7)",
    ),
    "kernel": (
        "import wavegpu as wg\ndef f(v):\n    return k2(v)\ndef k2(v):\n    return f(v)\n"
        "def k(o: wg.i32[:]):\n    o[0] = f(1)\n",
        "k -> f (line 7) -> k2 (line 3) -> f (line 5)",
    ),
}


@pytest.mark.parametrize("case", sorted(RECURSION))
def test_recursion_is_refused_with_its_call_chain(case: str) -> None:
    text, chain = RECURSION[case]
    with pytest.raises(wg.CompileError) as ei:
        wg.compile(text, lang="python")
    (d,) = ei.value.diagnostics
    assert "recursion is not supported" in d.message and d.message.endswith(chain), d.render()
    last = int(chain.rsplit("line ", 1)[1].rstrip(")"))
    assert d.span is not None and d.span.line == last
    lines = [int(p.split("line ")[1].rstrip(")")) for p in chain.split(" -> ")[1:-1]]
    assert [n.span.line for n in d.notes if n.span is not None] == lines[::-1]


def test_an_error_inside_a_helper_names_its_line_and_the_calls_line_once() -> None:
    text = (
        "import wavegpu as wg\ndef g(v):\n    q = v + zz\n    return q\n"
        "@wg.kernel\ndef k(o: wg.f32[:]):\n    o[0] = g(1.0)\n    o[1] = g(2.0)\n"
    )
    with pytest.raises(wg.CompileError) as ei:
        wg.compile(text, lang="python")
    (d,) = ei.value.diagnostics  # once, though two calls reach it
    assert "'zz' is not defined" in d.message and d.span is not None and d.span.line == 3
    assert d.notes and d.notes[-1].span is not None and d.notes[-1].span.line == 7
    assert "note: in `g`, inlined from this call" in d.render()


def test_an_error_inside_an_imported_helper_names_its_file(tmp_path: Path) -> None:
    (tmp_path / "lib.py").write_text("def g(v):\n    return v + zz\n")
    k = tmp_path / "k.py"
    k.write_text("import wavegpu as wg\nimport lib\n@wg.kernel\ndef k(o: wg.f32[:]):\n    o[0] = lib.g(1.0)\n")
    with pytest.raises(wg.CompileError) as ei:
        wg.compile(str(k))
    (d,) = ei.value.diagnostics
    assert d.span is not None and d.span.file.endswith("lib.py") and d.span.line == 2
    assert d.notes[-1].span is not None and d.notes[-1].span.file.endswith("k.py") and d.notes[-1].span.line == 5


def _refusal(body: str, helpers: str = "") -> wg.Diagnostic:
    text = f"import wavegpu as wg\n{textwrap.dedent(helpers)}\n@wg.kernel\ndef k(o: wg.f32[:], n: wg.i32[:]):\n"
    text += textwrap.indent(textwrap.dedent(body), "    ")
    with pytest.raises(wg.CompileError) as ei:
        wg.compile(text, lang="python")
    return ei.value.diagnostics[0]


REFUSED = {
    "None on a path": ("def f(v):\n    if v > 0:\n        return v\n", "o[0] = f(o[1])", "can reach its end without"),
    "bare return": (
        "def f(v):\n    if v > 0:\n        return\n    return v\n",
        "o[0] = f(o[1])",
        "a bare return gives None",
    ),
    "i32 or u32": (
        "def f(a: wg.i32, b: wg.u32):\n    if a > 0:\n        return a\n    return b\n",
        "o[0] = f(1, 2)",
        "this returns u32, and line 4 returns i32",
    ),
    "no value": ("def f(a):\n    a[0] = 1.0\n", "o[1] = f(o)", "this call has no value"),
    "lambda": ("sq = lambda v: v * v\n", "o[0] = sq(o[1])", "'sq' is a lambda"),
    "a kernel": ("", "k(o, n)", "'k' is a kernel: kernels cannot be called"),
    "keyword": ("def f(v, w=2.0):\n    return v * w\n", "o[0] = f(o[1], u=1.0)", "unexpected keyword argument 'u'"),
    "twice": ("def f(v, w=2.0):\n    return v * w\n", "o[0] = f(o[1], v=1.0)", "multiple values for argument 'v'"),
    "missing": ("def f(v, w):\n    return v * w\n", "o[0] = f(o[1])", "missing required argument 'w'"),
    "too many": ("def f(v):\n    return v\n", "o[0] = f(o[1], 2.0)", "takes 1 positional argument(s) but 2"),
    "array type": (
        "def f(a: wg.i32[:]):\n    return a[0]\n",
        "o[0] = f(o)",
        "f() takes i32[:] as 'a', and 'o' is f32[:]",
    ),
    "scalar for array": ("def f(a: wg.f32[:]):\n    return a[0]\n", "o[0] = f(o[1])", "takes an array as 'a'"),
    "varargs": ("def f(*v):\n    return 1.0\n", "o[0] = f(o[1])", "*args"),
    "local array": (
        "def f(v):\n    t = wg.local_array(wg.f32, 4)\n    return v\n",
        "o[0] = f(o[1])",
        "workgroup arrays (local_array) are declared in kernels",
    ),
    "unknown module": (
        "import nosuchmodule_wg\n",
        "o[0] = nosuchmodule_wg.f(o[1])",
        "cannot read module 'nosuchmodule_wg'",
    ),
    "nested def": ("", "def f(v):\n    return v\no[0] = f(o[1])", "define the function at module level"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_what_python_would_do_differently_is_refused_at_its_place(case: str) -> None:
    helpers, body, message = REFUSED[case]
    d = _refusal(body, helpers)
    assert message in d.message, d.render()
    assert d.span is not None and d.span.line > 1


def test_result_types_unify_as_python_computes_them() -> None:
    """An int on one path and a float on another: the float (the int's value, exactly); an
    annotated result converts; a helper's result may go unused as a statement."""
    src = textwrap.dedent(
        """
        import wavegpu as wg
        def f(v):
            if v > 0.5:
                return 1
            return v * 0.5
        def g(v) -> wg.f64:
            return v
        def h(o, v):
            o[1] = v
            return v
        @wg.kernel
        def k(o: wg.f32[:], d: wg.f64[:]):
            i = wg.global_id()
            h(o, o[0])
            o[2] = f(o[0])
            o[3] = f(0.25)
            d[0] = g(3)
        """
    )
    o, d = np.array([0.75, 0, 0, 0], f32), np.zeros(1)
    wg.load_kernels(src, lang="python").k(o, d, grid=1, workgroup=1)
    assert o.tolist() == [0.75, 0.75, 1.0, 0.125] and d.tolist() == [3.0]


def _module(tmp_path: Path, name: str, text: str):  # type: ignore[no-untyped-def]
    (tmp_path / f"{name}.py").write_text(text)
    spec = importlib.util.spec_from_file_location(name, tmp_path / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_the_compile_cache_keys_on_the_helpers_sources(tmp_path: Path) -> None:
    """A helper edited in another module is a new binary (the disk cache must not give the old)."""
    kernel = "import wavegpu as wg\nimport {lib}\ndef k(o: wg.f32[:]):\n    o[0] = {lib}.g(o[0])\n"
    keys = []
    for k, body in enumerate(["v * 2.0", "v * 3.0"]):
        lib = f"cachelib{k}"
        _module(tmp_path, lib, f"def g(v):\n    return {body}\n")
        mod = _module(tmp_path, f"cachek{k}", kernel.format(lib=lib))
        g = used_globals(mod.k)
        keys.append({n.replace(lib, "lib"): v for n, v in g.items()})
        o = np.ones(1, f32)
        wg.kernel(mod.k)(o, grid=1, workgroup=1)
        assert o[0] == 2.0 + k
    assert keys[0]["lib.g()"] != keys[1]["lib.g()"]


def test_without_decorators_the_functions_others_call_are_helpers(tmp_path: Path) -> None:
    """A file of plain defs: every function is a kernel except those the others call."""
    k = tmp_path / "plain.py"
    k.write_text(
        "import wavegpu as wg\n\ndef twice(v):\n    return v + v\n\n"
        "def k(o: wg.f32[:]):\n    o[0] = twice(o[0])\n\ndef j(o: wg.f32[:]):\n    o[1] = twice(twice(o[1]))\n"
    )
    prog = wg.compile(str(k))
    assert sorted(kn.name for kn in prog.kernels) == ["j", "k"]
    o = np.array([1.5, 2.0], f32)
    ks = wg.load_kernels(k)
    ks.k(o, grid=1, workgroup=1)
    ks.j(o, grid=1, workgroup=1)
    assert o.tolist() == [3.0, 8.0]


def test_a_module_def_shadows_a_builtin_of_its_bare_name() -> None:
    """As in Python: `def clamp` of the module is called; `wg.clamp` stays the builtin."""
    src = (
        "import wavegpu as wg\ndef clamp(v, lo, hi):\n    return lo + hi\n"
        "@wg.kernel\ndef k(o: wg.f32[:]):\n    o[0] = clamp(o[0], 1.0, 2.0)\n    o[1] = wg.clamp(o[1], 1.0, 2.0)\n"
    )
    o = np.array([9.0, 9.0], f32)
    wg.load_kernels(src, lang="python").k(o, grid=1, workgroup=1)
    assert o.tolist() == [3.0, 2.0]


def test_a_helper_bound_to_another_function_is_compiled_again(tmp_path: Path) -> None:
    """Rebinding a helper's name (a module attribute, or a name of the kernel's module) between two
    calls of one kernel object runs the new helper, as Python would call it."""
    lib = _module(tmp_path, "rebindlib", "def g(v):\n    return v * 2.0\n\ndef h(v):\n    return v * 5.0\n")
    mod = _module(
        tmp_path,
        "rebindk",
        "import wavegpu as wg\nimport rebindlib\nfrom rebindlib import g as local\n\n"
        "def k(o: wg.f32[:]):\n    o[0] = rebindlib.g(o[0]) + local(o[1])\n",
    )
    k = wg.kernel(mod.k)
    o = np.ones(2, f32)
    k(o, grid=1, workgroup=1)
    assert o[0] == 4.0
    lib.g = lib.h
    o = np.ones(2, f32)
    k(o, grid=1, workgroup=1)
    assert o[0] == 7.0
    mod.local = lib.h
    o = np.ones(2, f32)
    k(o, grid=1, workgroup=1)
    assert o[0] == 10.0
