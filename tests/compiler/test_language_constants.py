"""Module-level constants, constant folding where a constant is required, and literals
(docs/compiler.md, "Constants and literals")."""

from __future__ import annotations

import numpy as np
import pytest

import wavegpu as wg
from wavegpu.compiler import hir
from wavegpu.compiler.frontends.python import frontend, kernels_in_text

TILE = 16
SCALE = 4
HALF = 0.5
FLAG = True
STEP = 3
NAME = "not a number"


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


@wg.kernel(workgroup=32)
def tiled(x: wg.f32[:], out: wg.f32[:]):
    s = wg.local_array(wg.f32, TILE * TILE + 1)
    t = wg.thread_id()
    s[t] = x[t] * SCALE
    wg.barrier()
    acc = 0.0
    for k in range(0, 32, STEP * 2):  # a folded step: the loop counts up
        acc += s[k]
    if FLAG:
        acc += HALF
    out[t] = acc + wg.wave_shuffle_xor(s[t], 2**3 // 4)


def test_module_constants_and_folded_sizes_steps_and_offsets() -> None:
    x = np.arange(32, dtype=np.float32)
    out = np.zeros(32, np.float32)
    tiled(x, out, grid=1)
    s = x * SCALE
    want = s[0:32:6].sum() + HALF + s[np.arange(32) ^ 2]
    assert np.array_equal(out, want.astype(np.float32))
    f = tiled.program.kernels[0]
    assert f.local_memory >= (TILE * TILE + 1) * 4


@wg.kernel
def scaled(x: wg.i32[:]):
    i = wg.global_id()
    x[i] = x[i] * SCALE


def test_a_changed_constant_recompiles(monkeypatch: pytest.MonkeyPatch) -> None:
    """Module constants are part of the compile-cache key (runtime/kernel.py used_globals)."""
    x = np.ones(4, np.int32)
    scaled(x, grid=1, workgroup=4)
    assert x.tolist() == [4] * 4
    monkeypatch.setitem(globals(), "SCALE", 5)
    scaled(x, grid=1, workgroup=4)
    assert x.tolist() == [20] * 4


def test_constants_of_a_source_file_fold_too() -> None:
    src = (
        "import wavegpu as wg\nN = 8\nM = N * 2 + 1\nB = 2 ** 10\nX = [1]\nN2 = N\nN2 = len(X)\n"
        "@wg.kernel\ndef k(o: wg.i32[:]):\n    s = wg.local_array(wg.i32, M)\n    s[0] = B\n    o[0] = s[0] + M\n"
    )
    prog = wg.compile(src)
    assert prog.kernels[0].local_memory >= 17 * 4
    res = wg.emulate(prog, grid=1, workgroup=1, memory=4096, args=[1024])
    assert int(res.memory[1024:1028].view(np.int32)[0]) == 1024 + 17
    # a name reassigned to something that is not a constant is no constant
    d = wg_errors(src.replace("s[0] = B", "s[0] = N2"))
    assert len(d) == 1 and "'N2' is not defined" in d[0].message


def wg_errors(src: str) -> list[wg.Diagnostic]:
    with pytest.raises(wg.CompileError) as ei:
        wg.compile(src)
    return ei.value.diagnostics


def test_a_bad_local_array_size_is_one_message_with_a_fix() -> None:
    d = errors("s = wg.local_array(wg.f32, n)\ns[0] = 1.0\ny = s[1] + 2.0\nx[0] = y")
    assert len(d) == 1, [x.render() for x in d]
    assert "local_array count" in d[0].message and "'n' is a parameter" in d[0].message
    d = errors("s = wg.local_array(wg.f32, SIZE)\ns[0] = 1.0")
    assert len(d) == 1 and "make SIZE a module-level constant (SIZE = ...)" in d[0].message
    d = errors("s = wg.local_array(wg.f32, 16 - 16)")
    assert len(d) == 1 and "at least 1" in d[0].message
    d = errors("y = 1 // 0")
    assert len(d) == 1 and "division by zero in a constant expression" in d[0].message


def test_a_failed_definition_does_not_cascade() -> None:
    d = errors("y = undefined_thing + 1\nz = y * 2\nx[0] = z + y")
    assert len(d) == 1 and "undefined_thing" in d[0].message


def test_constant_expressions_fold_to_literals() -> None:
    f = build("a = 16 * 17\nb = 2 ** 10 - 1\nc = -2147483648\nd = 0xFFFFFFFF\ne = 7 // 2 + 7 % 2\ng = 1 / 4")
    consts = {s.name: s.value for s in f.body if isinstance(s, hir.Assign)}
    assert {k: (v.value, str(v.type)) for k, v in consts.items()} == {  # type: ignore[attr-defined]
        "a": (272, "i32"),
        "b": (1023, "i32"),
        "c": (-2147483648, "i32"),
        "d": (0xFFFFFFFF, "u32"),
        "e": (4, "i32"),
        "g": (0.25, "f32"),
    }


def test_literals_follow_the_operand_type() -> None:
    f = build("h = wg.f16(x[0])\nh2 = h * 0.5\nd = wg.f64(x[0]) * 0.1\nu = wg.u32(n) & 0x80000000\nw = n & 0x80000000")
    types = {k: str(v) for k, v in f.variables}
    assert types["h2"] == "f16" and types["d"] == "f64" and types["u"] == "u32"
    assert types["w"] == "u32"  # 0x80000000 is no i32: i32 & u32 is u32
    d = errors("y = n + 0x100000000")
    assert len(d) == 1 and "does not fit in 32 bits" in d[0].message
    d = errors("y: wg.i32 = 0xFFFFFFFF")
    assert len(d) == 1 and "expected i32, got u32" in d[0].message


@wg.kernel
def literal_values(o: wg.i32[:], u: wg.u32[:]):
    o[0] = -2147483648
    o[1] = 2**31 - 1
    o[2] = o[0] // -1  # INT_MIN // -1 wraps at run time (DESIGN section 3)
    u[0] = 0xFFFFFFFF
    u[1] = 0xFFFFFFFF + 0  # folded in Python's exact arithmetic, then typed


@wg.kernel
def exact_constant(o: wg.i32[:]):
    o[0] = -2147483648 // -1  # exactly 2**31: no i32


def test_literal_values_run() -> None:
    o = np.zeros(3, np.int32)
    u = np.zeros(2, np.uint32)
    literal_values(o, u, grid=1, workgroup=1)
    assert o.tolist() == [-(2**31), 2**31 - 1, -(2**31)] and u.tolist() == [2**32 - 1] * 2
    with pytest.raises(wg.CompileError) as ei:
        exact_constant(o, grid=1, workgroup=1)
    (d,) = ei.value.diagnostics
    assert "expected i32, got u32" in d.message
    assert d.span.line == exact_constant.python.__code__.co_firstlineno + 2


def test_non_numeric_module_values_are_not_constants() -> None:
    d = errors("y = NAME")
    assert len(d) == 1 and "'NAME' is not defined" in d[0].message


def test_a_name_the_kernel_assigns_is_local_as_in_python() -> None:
    src = "import wavegpu as wg\nK = 5\n@wg.kernel\ndef k(o: wg.i32[:]):\n    o[0] = K\n    K = 3\n    o[1] = K\n"
    with pytest.raises(wg.CompileError) as ei:
        wg.compile(src)
    (d,) = ei.value.diagnostics
    assert "'K' is not defined (or is used before it is assigned)" in d.message and d.span.line == 5
