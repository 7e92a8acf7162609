"""The TypeScript frontend: diagnostics with a span and a caret (syntax errors from tree-sitter, type
errors, constructs outside the kernel language), the Rust toolchain's vector_add.ts unchanged,
kernel markers, and JavaScript's numeric rules where they differ from a naive f32/i32 reading
(JavaScript's own answers for random expressions: test_typescript_numbers.py, against node).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import wavegpu as wg
from wavegpu.compiler import hir
from wavegpu.compiler.frontends.typescript import TYPESCRIPT
from wavegpu.errors import CompileError
from wavegpu.runtime.sources import load_kernels

COMPAT = Path(__file__).resolve().parents[1] / "languages" / "compat" / "vector_add.ts"
HEAD = "/** @kernel */\nfunction k(a: Float32Array, b: Int32Array, n: u32): void {\n"


def _errors(body: str) -> str:
    with pytest.raises(CompileError) as e:
        TYPESCRIPT.parse(HEAD + body + "}\n", "k.ts")
    return "\n".join(d.render() for d in e.value.diagnostics)


# body -> (message fragment, line, column, caret length): the first diagnostic
DIAGNOSTICS = {
    "syntax error": ("  const x = (1 + ;\n", "syntax error", 3, 11, 6),
    "missing brace": ("  if (n > 1) {\n", "syntax error", 4, 2, 1),
    "recursion": ("  k(a, b, n);\n", "recursion is not supported", 3, 3, 1),
    "user function": ("  foo(1);\n", "'foo' is not a builtin", 3, 3, 3),
    "new": ("  const t = new Array(4);\n", "`new` allocates on the heap", 3, 13, 12),
    "per-thread array length": (
        "  const t = new Float32Array(n);\n",
        "per-thread Float32Array must be a constant",
        3,
        30,
        1,
    ),
    "array literal": ("  const t = [1, 2];\n", "array literal allocates", 3, 13, 6),
    "object literal": ("  const t = {x: 1};\n", "object literal allocates", 3, 13, 6),
    "class": ("  class C {}\n", "classes are not supported", 3, 3, 10),
    "method call": ("  a.fill(0);\n", "method calls are not supported", 3, 3, 6),
    "closure passed on": ("  const f = () => 1;\n  a[0] = f;\n", "'f' is an arrow function: call it", 4, 10, 1),
    "string": ('  const s = "x";\n', "strings are not supported", 3, 13, 3),
    "any": ("  let q: any = 1;\n", "`any` has no machine type", 3, 10, 3),
    "a boolean into a number": ("  let j = 0;\n  j = n > 1;\n", "'j' holds numbers, and this is a boolean", 4, 3, 9),
    "float index": ("  a[0.5] = 1;\n", "an array index is an integer value", 3, 5, 3),
    "float remainder": ("  a[0] = a[1] % 2;\n", "% is supported on integer values", 3, 10, 8),
    "var redeclaring a parameter": ("  { var n = 1; }\n", "`var n` redeclares the visible 'n'", 3, 9, 1),
    "var read outside its block": ("  { var v = 1; }\n  a[0] = v;\n", "'v' is a var of an inner block", 4, 10, 1),
    "undeclared": ("  a[0] = zz;\n", "'zz' is not declared", 3, 10, 2),
    "const assigned": ("  const c = 1;\n  c = 2;\n", "'c' is a const", 4, 3, 1),
    "parameter assigned": ("  n = 3;\n", "parameter 'n' is read-only", 3, 3, 1),
    "boolean arithmetic": ("  a[0] = (n > 1) + 1;\n", "a boolean is not a number", 3, 10, 11),
    "Math.exp in f64": ("  a[0] = Math.exp(a[1]) + 1;\n", "Math.exp is computed by the device's f32", 3, 10, 18),
    "type assertion": ("  a[0] = n as f32;\n", "a type assertion converts nothing", 3, 10, 8),
    "f64 to f16": ("  const h: f16 = a[0] * 0.1 + a[1];\n", "rounding an f64 value to f16", 3, 18, 17),
    "atomic inside an expression": ("  a[0] = wave.atomic_add(b, 0, 1) + 1;\n", "an atomic's old value", 3, 10, 24),
    "f32 atomic_min": ("  wave.atomic_min(a, 0, 1);\n", "atomic_min on f32 arrays", 3, 19, 1),
    "axis not constant": ("  const t = wave.thread_id(n);\n", "axis must be the constant 0, 1 or 2", 3, 28, 1),
    "local array count": (
        "  const t = wave.local_array(Float32Array, n);\n",
        "must be a constant positive integer",
        3,
        44,
        1,
    ),
    "continue in do-while": ("  do { continue; } while (n > 1);\n", "'continue' in do ... while", 3, 8, 9),
    "&& of numbers": ("  const q = n && 1;\n", "&& gives one of its operands", 3, 13, 6),
    "wave op of an f64": ("  const q = wave.wave_reduce_add(a[0] * 2);\n", "works on i32, u32 and f32", 3, 34, 8),
    "negative zero in an integer": ("  let q = -n;\n  b[0] = q;\n", "may be -0", 3, 11, 2),
    "non-void return": ("  return 1;\n", "kernels return no value", 3, 10, 1),
}


@pytest.mark.parametrize("name", sorted(DIAGNOSTICS))
def test_diagnostics_name_the_place_with_a_caret(name: str) -> None:
    body, fragment, line, col, length = DIAGNOSTICS[name]
    text = _errors(body)
    first = text.split("\n")
    assert first[0].startswith(f"k.ts:{line}:{col}: error: "), text
    assert fragment in first[0], text
    src_line = (HEAD + body + "}\n").splitlines()[line - 1]
    assert first[1] == "    " + src_line, text
    assert first[2] == "    " + " " * (col - 1) + "^" + "~" * (length - 1), text


def test_one_mistake_one_message() -> None:
    text = _errors("  let q = -n;\n  b[0] = q;\n  b[1] = q + 1;\n")
    assert text.count("error:") == 1, text


def test_parameter_types_are_checked() -> None:
    for ann, fragment in (
        ("any", "`any` has no machine type"),
        ("string", "strings are not supported"),
        ("Uint8ClampedArray", "Uint8ClampedArray clamps"),
        ("Map<number, number>", "unknown parameter type"),
        ("f64", "pass it in a Float64Array"),
    ):
        with pytest.raises(CompileError, match=fragment) as e:
            TYPESCRIPT.parse(f"/** @kernel */\nfunction k(x: {ann}): void {{}}\n", "p.ts")
        assert e.value.diagnostics[0].span.line == 2  # type: ignore[union-attr]
    with pytest.raises(CompileError, match="kernels return nothing"):
        TYPESCRIPT.parse("/** @kernel */\nfunction k(x: Float32Array): number { return 1; }\n", "p.ts")


def test_the_rust_toolchains_vector_add_ts_runs_unchanged() -> None:
    """COMPAT.md: no marker, no import, `f32[]` arrays, a bare thread_id() (the local id) and the
    256-thread workgroup its compiler records."""
    text = COMPAT.read_text()
    assert "@kernel" not in text and "import" not in text
    prog = wg.compile(str(COMPAT))
    (kern,) = prog.kernels
    assert kern.name == "vector_add" and [p.name for p in kern.params] == ["a", "b", "out", "n"]
    assert kern.workgroup_size == (256, 1, 1)
    a = np.arange(256, dtype=np.float32)
    b = np.full(256, 2.0, np.float32)
    out = np.zeros(256, np.float32)
    load_kernels(COMPAT)["vector_add"](a, b, out, 200, grid=1)
    assert np.array_equal(out[:200], a[:200] + 2) and not out[200:].any()


def test_marked_kernels_only_when_a_file_marks_any() -> None:
    text = (
        "function helper_like(a: Float32Array): void {}\n"
        "// @wave.kernel\n"
        "function one(a: Float32Array): void { a[0] = 1; }\n"
        "/** A kernel.\n * @kernel\n * @workgroup 16 16\n */\n"
        "export function two(a: Float32Array): void { a[0] = 2; }\n"
    )
    fns = TYPESCRIPT.parse(text, "m.ts")
    assert [f.name for f in fns] == ["one", "two"]
    assert fns[0].options == {} and fns[1].options == {"workgroup": (16, 16)}
    assert wg.compile(text, lang="typescript").kernels[1].workgroup_size == (16, 16, 1)


def _run(body: str, params: str, **arrays: np.ndarray) -> dict[str, np.ndarray]:
    src = f"/** @kernel */\nfunction t({params}): void {{\n{body}\n}}\n"
    for opt in (0, 2):
        args = {k: v.copy() for k, v in arrays.items()}
        load_kernels(src, lang="typescript", opt=opt)["t"](**args, grid=1, workgroup=1)
        if opt == 0:
            first = args
        else:
            for k in args:
                assert args[k].tobytes() == first[k].tobytes(), f"-O2 differs from -O0 in {k}"
    return first


def test_number_is_f64_until_narrowed() -> None:
    """a + b + c of f32 elements is one f64 sum rounded once; Math.fround rounds each step."""
    x = np.array([1.0, 2.0**-24, 2.0**-24, 0.0], np.float32)
    o = np.zeros(2, np.float32)
    r = _run(
        "  o[0] = x[0] + x[1] + x[2];\n  o[1] = Math.fround(x[0] + x[1]) + x[2];",
        "x: Float32Array, o: Float32Array",
        x=x,
        o=o,
    )
    assert r["o"][0] == np.float32(1.0 + 2.0**-23)  # exact in f64, then rounded
    assert r["o"][1] == np.float32(1.0)  # 1 + 2**-24 rounds to 1 in f32 (ties to even), twice


def test_integer_rules() -> None:
    """| 0 wraps, >>> 0 reads unsigned, Math.imul multiplies modulo 2**32 (an f64 product of two
    large i32 does not), % takes the dividend's sign, / is float division."""
    a = np.array([2**31 - 1, -7, 3, 123456789], np.int32)
    o = np.zeros(6, np.float64)
    body = (
        "  o[0] = (a[0] + 1) | 0;\n"
        "  o[1] = a[1] >>> 0;\n"
        "  o[2] = Math.imul(a[3], a[3]);\n"
        "  o[3] = (a[3] * a[3]) | 0;\n"
        "  o[4] = a[1] % a[2];\n"
        "  o[5] = a[1] / a[2];"
    )
    r = _run(body, "a: Int32Array, o: Float64Array", a=a, o=o)["o"]
    sq = 123456789 * 123456789
    wrapped = (sq + 2**31) % 2**32 - 2**31
    f64sq = int(float(sq))  # what JavaScript's * gives, then ToInt32
    assert r[0] == -(2**31) and r[1] == 2**32 - 7 and r[2] == wrapped
    assert r[3] == (f64sq + 2**31) % 2**32 - 2**31 and r[3] != wrapped
    assert r[4] == -1 and r[5] == -7 / 3


def test_declared_aliases_convert_on_assignment() -> None:
    """A variable declared i32 or f32 holds that type: assignments convert as a typed array store."""
    o = np.zeros(3, np.float64)
    body = "  let i: i32 = 2147483647;\n  i += 1;\n  let f: f32 = 0.1;\n  let u: u32 = -1;\n  o[0] = i;\n  o[1] = f;\n  o[2] = u;"
    r = _run(body, "o: Float64Array", o=o)["o"]
    assert r[0] == -(2**31) and r[1] == float(np.float32(0.1)) and r[2] == 2**32 - 1


def test_negative_zero_survives() -> None:
    a = np.array([0, -3], np.int32)
    o = np.ones(3, np.float64)
    r = _run(
        "  o[0] = a[0] * a[1];\n  o[1] = -a[0];\n  o[2] = (a[1] * 0) | 0;", "a: Int32Array, o: Float64Array", a=a, o=o
    )["o"]
    assert np.signbit(r[0]) and np.signbit(r[1]) and not np.signbit(r[2])


def test_remainder_by_zero_is_nan() -> None:
    a = np.array([7, 0], np.int32)
    o = np.zeros(2, np.float64)
    b = np.zeros(1, np.int32)
    r = _run(
        "  o[0] = a[0] % a[1];\n  o[1] = (a[0] % a[1]) | 0;\n  b[0] = a[0] % a[1];",
        "a: Int32Array, o: Float64Array, b: Int32Array",
        a=a,
        o=o,
        b=b,
    )
    assert np.isnan(r["o"][0]) and r["o"][1] == 0 and r["b"][0] == 0


def test_for_loops_become_hir_for_loops() -> None:
    (fn,) = TYPESCRIPT.parse(
        "/** @kernel */\nfunction f(o: Float32Array, n: u32): void {\n"
        "  for (let i = 0; i < n; i += 2) { o[i] = 1; }\n"
        "  for (let j = 0; j <= 9; j++) { o[j] = 2; }\n"
        "  for (let k: i32 = 0; k < n; k++) { k = k + 1; }\n}\n",
        "f.ts",
    )
    loops = [s for s in fn.body if isinstance(s, hir.For)]
    assert len(loops) == 2 and [lp.var for lp in loops] == ["i", "j"]
    assert dict(fn.variables)["i"].name == "u32" and dict(fn.variables)["j"].name == "i32"
    assert any(isinstance(s, hir.While) for s in fn.body)  # k is assigned in its body: a while loop


def test_length_is_a_hidden_argument() -> None:
    x = np.arange(5, dtype=np.float32)
    ks = load_kernels(
        "/** @kernel */\nfunction s(x: Float32Array): void {\n"
        "  for (let i = 0; i < x.length; i++) { x[i] = x[i] * 2; }\n}\n",
        lang="typescript",
    )
    ks["s"](x, grid=1, workgroup=1)
    assert x.tolist() == [0, 2, 4, 6, 8]


def test_loops_count_exactly() -> None:
    """Counted loops up, down (a u32 down to 0), by steps, and a grid-stride loop."""
    o = np.zeros(8, np.int32)
    body = (
        "  let s: i32 = 0;\n"
        "  for (let i = n; i > 0; i--) { s += i; }\n"
        "  o[0] = s;\n"
        "  s = 0;\n"
        "  for (let i = 0; i <= 10; i += 3) { s += i; }\n"
        "  o[1] = s;\n"
        "  s = 0;\n"
        "  for (let i = 10; i >= -2; i -= 4) { s += i; }\n"
        "  o[2] = s;\n"
        "  for (let i = wave.global_id(0); i < n; i += wave.global_size(0)) { o[3 + (i & 3)] += 1; }\n"
        "  let k = 0;\n"
        "  while (true) { k = (k + 1) | 0; if (k === 5) { break; } }\n"
        "  o[7] = k;"
    )
    r = _run(body, "o: Int32Array, n: u32", o=o, n=np.uint32(9))["o"]
    assert r.tolist() == [45, 0 + 3 + 6 + 9, 10 + 6 + 2 - 2, 3, 2, 2, 2, 5]


def test_bigint_is_refused_with_its_place() -> None:
    text = _errors("  a[0] = 10n;\n")
    assert text.startswith("k.ts:3:10: error: BigInt literals are not supported"), text


def test_stores_convert_as_typed_arrays_do() -> None:
    """A Float32Array store rounds an f64 once; 8- and 16-bit stores keep the low bits (ToUint8,
    ToInt16, ...); a Float16Array store rounds an f32 value to f16."""
    d = np.array([0.1, 1e300, -2.5, 300.7], np.float64)
    f = np.zeros(4, np.float32)
    u8 = np.zeros(4, np.uint8)
    i16 = np.zeros(4, np.int16)
    h = np.zeros(4, np.float16)
    body = (
        "  for (let i = 0; i < 4; i++) {\n"
        "    f[i] = d[i];\n"
        "    u8[i] = d[i];\n"
        "    i16[i] = d[i] * 200;\n"
        "    h[i] = f[i];\n"
        "  }"
    )
    r = _run(
        body,
        "d: Float64Array, f: Float32Array, u8: Uint8Array, i16: Int16Array, h: Float16Array",
        d=d,
        f=f,
        u8=u8,
        i16=i16,
        h=h,
    )
    with np.errstate(over="ignore"):  # 1e300 rounds to inf in f32, as in JavaScript
        d32 = d.astype(np.float32)
    assert r["f"].tolist() == d32.tolist()

    def to_int(x: float, bits: int, signed: bool) -> int:  # ECMAScript ToInt8/ToUint8/ToInt16...
        if not np.isfinite(x):
            return 0
        v = int(np.trunc(x)) % (1 << bits)
        return v - (1 << bits) if signed and v >= 1 << (bits - 1) else v

    assert r["u8"].tolist() == [to_int(x, 8, False) for x in d]
    assert r["i16"].tolist() == [to_int(x * 200, 16, True) for x in d]
    with np.errstate(over="ignore"):
        assert r["h"].tolist() == d32.astype(np.float16).tolist()


def test_function_forms_outside_the_language() -> None:
    with pytest.raises(CompileError) as e:
        TYPESCRIPT.parse(
            "/** @kernel */\nasync function k(a: Float32Array, n: u32 = 3, m?: u32, ...r: number[]): void {}\n", "f.ts"
        )
    text = "\n".join(d.render() for d in e.value.diagnostics)
    assert "f.ts:2:1: error: kernels are not async functions" in text
    assert "f.ts:2:35: error: kernel parameters are plain" in text  # n: u32 = 3
    assert "f.ts:2:47: error: kernel parameters are plain" in text  # m?: u32
    assert "f.ts:2:56: error: a kernel parameter is a plain name" in text  # ...r


def test_the_marker_may_sit_among_other_comments() -> None:
    fns = TYPESCRIPT.parse(
        "/** @kernel */\n// the first kernel\nfunction k(a: Float32Array): void { a[0] = 1; }\n", "c.ts"
    )
    assert [f.name for f in fns] == ["k"] and fns[0].options == {}


def test_names_with_dollars_and_hidden_suffixes_are_kept_apart() -> None:
    """TypeScript names may contain $ (HIR's temporaries) or end in __len (hidden arguments)."""
    a = np.array([1.5, 2.5], np.float32)
    o = np.zeros(1, np.int32)
    body = (
        "  let a__len = 5;\n  let $t1 = 2;\n  let $ts1 = 3;\n  const x = Math.max(a[0], a[1]);\n"
        "  o[0] = a__len + $t1 + $ts1 + a.length + (x | 0);"
    )
    assert _run(body, "a: Float32Array, o: Int32Array", a=a, o=o)["o"][0] == 5 + 2 + 3 + 2 + 2


def test_switch_falls_through_as_javascript_does() -> None:
    """Constant labels, a default in the middle, fall-through and break; node gives
    [1110, 1, 1, 1100, 1110, 5, 1000, 1110] for this switch on these values."""
    xs = np.array([0, 1, 2, 3, 4, 7, 2**32 - 1, 5], np.uint32)
    o = np.zeros(8, np.int32)
    body = (
        "  for (let i = 0; i < 8; i++) {\n"
        "    let y: i32 = 0;\n"
        "    switch (xs[i]) {\n"
        "      case 1:\n      case 2:\n        y += 1;\n        break;\n"
        "      default:\n        y += 10;\n"
        "      case 3: {\n        y += 100;\n      }\n"
        "      case -1 >>> 0:\n        y += 1000;\n        break;\n"
        "      case 7:\n        y = 5;\n"
        "    }\n"
        "    o[i] = y;\n"
        "  }"
    )
    r = _run(body, "xs: Uint32Array, o: Int32Array", xs=xs, o=o)["o"]
    assert r.tolist() == [1110, 1, 1, 1100, 1110, 5, 1000, 1110]
    text = _errors("  for (let j = 0; j < 3; j++) {\n    switch (j) { case 1: continue; }\n  }\n")
    assert "k.ts:4:26: error: 'continue' inside a switch" in text, text
    text = _errors("  switch (n) { case b[0]: break; }\n")
    assert "k.ts:3:21: error: case labels are constant expressions" in text, text
