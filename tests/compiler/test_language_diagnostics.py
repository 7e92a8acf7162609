"""Diagnostics of the Python frontend: one mistake, one message, at the construct, with a caret,
and the rewrite where one exists (docs/compiler.md, "What is refused")."""

from __future__ import annotations

import pytest

import wavegpu as wg


def diagnostics(body: str) -> list[wg.Diagnostic]:
    text = "import wavegpu as wg\n\n@wg.kernel\ndef k(x: wg.f32[:], n: wg.i32, u: wg.u32):\n" + "".join(
        "    " + line + "\n" for line in body.strip("\n").splitlines()
    )
    with pytest.raises(wg.CompileError) as ei:
        wg.compile(text)
    return ei.value.diagnostics


# (kernel body: a mistake followed by uses of what it defines, message, fix-it, line, column)
CASES = [
    (
        "s = wg.local_array(wg.f32, n)\ns[0] = 1.0\nx[0] = s[0] + s[1]",
        "local_array count",
        "module-level constant",
        5,
        32,
    ),
    ("s = wg.local_array(wg.f32, TILE)\ns[0] = 1.0", "local_array count", "make TILE a module-level constant", 5, 32),
    ("for k in range(1.5):\n    x[k] = 1.0\ny = k + 1", "range() takes integers", "int(...)", 5, 20),
    ("for k in range(1.5):\n    acc = k * 2\ny = acc + k", "range() takes integers", "int(...)", 5, 20),
    ("if x:\n    acc = 1.0\nelse:\n    acc = 2.0\nx[0] = acc", "'x' is an array", "x[i]", 5, 8),
    ("y = undefined + 1\nz = y * 2\nx[0] = z", "'undefined' is not defined", "", 5, 9),
    ("y: wg.bogus = 3\nz = y", "unknown type", "wg.f32", 5, 8),
    ("i = wg.global_id()\nv = i // u\nx[v] = 1.0", "// of i32 and u32", "`i // i32(u)` (signed)", 6, 9),
    ("i = wg.global_id()\nv = i % u", "% of i32 and u32", "`u32(i) % u` (unsigned)", 6, 9),
    ("v = min(n, u)", "min of i32 and u32", "min(i32(a), b)", 5, 9),
    ("i = wg.global_id()\ni = 1.5", "'i' is i32", "use another name", 6, 5),  # i32(1.5) would change it
    ("y = wg.sin(wg.f64(1.0))\nz = y", "sin takes f32, not f64", "wg.sin(wg.f32(wg.f64(1.0)))", 5, 16),
    ("y = n ** n\nz = y + 1", "constant integer exponent", "wg.exp2(y * wg.log2(x))", 5, 14),
    ("a = b = 1", "chained assignment", "assign one name at a time", 5, 5),
    ("x = 3", "'x' is an array", "x[i] = ...", 5, 5),
    ("y = x", "'x' is an array", "x[i]", 5, 9),
    ("y = x.size", "arrays have no attribute 'size'", "len(x) and x.shape[k] exist", 5, 9),
    ("print(n)", "print() is not available", "write the value to an array", 5, 5),
    ("y = len(n)", "len() is not available", "len(x) takes an array", 5, 9),
    ("a, b = wg.global_id()\nc = a + b", "assign a tuple of 2 values", "a, b = x, y", 5, 12),
    ("n = 3", "parameter 'n' is read-only", "copy it to a variable first", 5, 5),
    ("y = 1 // 0\nz = y", "division by zero in a constant expression", "", 5, 9),
    ("y = n + 0x100000000", "does not fit in 32 bits", "", 5, 13),
    ("y = wg.u32(n)\nw: wg.i32 = y", "expected i32, got u32", "i32(...) keeps the 32 bits", 6, 5),
    ("y = x[0] & 1", "bitwise operators need integers", "", 5, 9),
    ("b = n > 0\nc = b + 1", "cannot mix bool and i32", "i32(c)", 6, 9),
]


@pytest.mark.parametrize("body, message, fix, line, col", CASES)
def test_one_mistake_one_message_with_a_caret_and_the_fix(
    body: str, message: str, fix: str, line: int, col: int
) -> None:
    d = diagnostics(body)
    assert len(d) == 1, [x.render() for x in d]
    assert message in d[0].message and fix in d[0].message, d[0].message
    assert (d[0].span.line, d[0].span.col) == (line, col), d[0].render()
    text = d[0].render()
    assert "^" in text.splitlines()[-1], text


def test_independent_mistakes_are_each_reported_once() -> None:
    d = diagnostics("y = a1 + 1\nz = y * 2\nw = wg.local_array(wg.f32, n)\nw[0] = 1.0\nq = a3")
    assert [(x.span.line, x.message.split(":")[0]) for x in d] == [
        (5, "'a1' is not defined (or is used before it is assigned)"),
        (
            7,
            "a local_array count (no dynamic allocation on a GPU) must be a constant integer expression; 'n' is a parameter, known only at run time",
        ),
        (9, "'a3' is not defined (or is used before it is assigned)"),
    ]
