"""The Python frontend: types, the language's limits, and diagnostics with source spans."""

from __future__ import annotations

import pytest

import wavegpu as wg
from wavegpu.compiler import hir
from wavegpu.compiler.frontends.python import frontend, kernels_in_text


def build(body: str, params: str = "x: wg.f32[:], n: wg.i32") -> hir.Function:
    text = f"import wavegpu as wg\n\n@wg.kernel\ndef k({params}):\n" + "".join(
        "    " + line + "\n" for line in body.strip("\n").splitlines()
    )
    src, node = kernels_in_text(text, "k.py")[0]
    return frontend(src, node)


def errors(body: str, params: str = "x: wg.f32[:], n: wg.i32") -> list[wg.Diagnostic]:
    with pytest.raises(wg.CompileError) as ei:
        build(body, params)
    return ei.value.diagnostics


def test_types_are_inferred() -> None:
    f = build("i = wg.global_id()\ny = x[i] * 2\nz = i // 2\nw = i / 2\nb = i < n and n > 3\n")
    types = dict(f.variables)
    assert {k: str(v) for k, v in types.items()} == {
        "i": "i32",
        "y": "f32",
        "z": "i32",
        "w": "f32",
        "b": "bool",
    }
    text = hir.dump(f)
    assert "kernel k(x: f32[:], n: i32)" in text and "z = (i floor_div 2:i32)" in text


@pytest.mark.parametrize(
    "body, message, line, col",
    [
        ("y = undefined_thing + 1", "'undefined_thing' is not defined", 5, 9),
        ("i = wg.global_id()\nu = wg.u32(3)\nv = i // u", "// of i32 and u32 depends on", 7, 9),
        ("x = 3", "'x' is an array", 5, 5),
        ("n = 3", "parameter 'n' is read-only", 5, 5),
        ("print(1)", "not available in kernels", 5, 5),
        ("k()", "'k' is a kernel: kernels cannot be called", 5, 5),
        ("y = [1, 2]", "List expressions are not supported", 5, 9),
        ("a, b = 1", "assign a tuple of 2 values", 5, 12),
        ("for q in [1, 2]:\n    pass", "for ... in range", 5, 14),
        ("s = wg.local_array(wg.f32, n)", "local_array count", 5, 32),
        ("break", "'break' outside a loop", 5, 5),
        ("return 3", "kernels return no value", 5, 12),
        ("with open('f') as f:\n    pass", "With statements are not supported", 5, 5),
        ("y = x[0:2]", "no slices", 5, 11),
        ("y = n ** n", "** needs a constant integer exponent", 5, 14),
        ("y = wg.atomic_add(x, 0, 1.0)\nz = wg.atomic_min(x, 0, 1.0)", "atomic_min on f32", 6, 9),
        ("y = wg.sin(wg.f64(1.0))", "sin takes f32", 5, 16),
        ("y = x[1.5]", "array index is an integer", 5, 11),
        ("y = wg.thread_id(n)", "axis must be the constant", 5, 22),
        ("lambda: 1", "Lambda expressions are not supported", 5, 5),
    ],
)
def test_errors_name_the_place(body: str, message: str, line: int, col: int) -> None:
    d = errors(body)
    hit = [x for x in d if message in x.message]
    assert hit, [x.render() for x in d]
    assert (hit[0].span.line, hit[0].span.col) == (line, col), hit[0].render()
    text = hit[0].render()
    assert text.startswith(f"k.py:{line}:{col}: error:") and "^" in text


def test_every_error_is_reported() -> None:
    d = errors("y = a1\nz = a2\nw = a3")
    assert [x.span.line for x in d] == [5, 6, 7]


def test_parameter_annotations() -> None:
    d = errors("pass", params="x, n: wg.i32")
    assert "needs a type annotation" in d[0].message
    d = errors("pass", params="x: wg.bool_[:]")
    assert "arrays of bool" in d[0].message or "unknown type" in d[0].message


def test_syntax_errors_have_a_place() -> None:
    with pytest.raises(wg.CompileError) as ei:
        wg.compile("def k(x: wg.f32[:]):\n    x[0] = = 1\n")
    assert ei.value.diagnostics[0].span.line == 2


def test_math_constants() -> None:
    f = build("y = math.pi * 2.0\nz = wg.inf\nw = wg.f64(1.0) * math.e")
    assert {k: str(v) for k, v in f.variables} == {"y": "f32", "z": "f32", "w": "f64"}
