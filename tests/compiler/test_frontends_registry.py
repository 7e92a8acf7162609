"""The FRONTENDS registry: every language, the suffixes the SDK and the CLI read, and refusals."""

from __future__ import annotations

import pytest

import wavegpu as wg
from wavegpu.cli.common import source_languages
from wavegpu.compiler import hir
from wavegpu.compiler.frontends import FRONTENDS, LANGUAGES, frontend, suffixes
from wavegpu.runtime.compile import LANGS

SAXPY = """
import wavegpu as wg

@wg.kernel(workgroup=64)
def saxpy(a: wg.f32, x: wg.f32[:], y: wg.f32[:]):
    i = wg.global_id()
    y[i] = a * x[i] + y[i]
"""


def test_every_frontend_parses_to_hir_functions() -> None:
    for name, fe in FRONTENDS.items():
        assert fe.name == name and fe.suffixes and all(s.startswith(".") for s in fe.suffixes)
    fns = FRONTENDS["python"].parse(SAXPY, "k.py")
    assert [f.name for f in fns] == ["saxpy"] and all(isinstance(f, hir.Function) for f in fns)
    assert fns[0].options == {"workgroup": 64}


def test_suffixes_cover_every_language_and_frontend() -> None:
    table = suffixes()
    assert set(table.values()) == set(LANGUAGES) | set(FRONTENDS)
    for fe in FRONTENDS.values():
        assert all(table[s] == fe.name for s in fe.suffixes)
    assert table == LANGS and source_languages() == table


UNREGISTERED = next((lang for lang in LANGUAGES if lang not in FRONTENDS), None)  # a language of no frontend yet


@pytest.mark.parametrize(
    "lang, message", [(UNREGISTERED, f"the {UNREGISTERED} frontend is not available yet"), ("cobol", "unknown")]
)
def test_a_language_without_a_frontend_is_refused_naming_the_available(lang: str | None, message: str) -> None:
    if lang is None:
        pytest.skip("every language of LANGUAGES has a frontend")
    with pytest.raises(wg.CompileError, match=message) as ei:
        frontend(lang)
    assert "available: python" in str(ei.value)
    with pytest.raises(wg.CompileError, match=message):
        wg.compile("fn k() {}", lang=lang)


def test_the_compiler_entry_dispatches_by_language() -> None:
    from wavegpu.compiler import Options, compile_python, compile_source
    from wavegpu.compiler.frontends import python as py

    a = compile_source(SAXPY, Options(), "k.py", "python")
    b = compile_python(SAXPY, Options(), "k.py")
    assert a.to_bytes() == b.to_bytes()
    assert not hasattr(py, "compile_python")  # the package's entry is the one way in (issue 23)
    assert a.kernels[0].workgroup_size == (64, 1, 1)


def test_the_builtin_catalogue_is_what_the_python_frontend_and_plain_python_offer() -> None:
    from wavegpu.compiler import builtins
    from wavegpu.compiler.frontends import python as py
    from wavegpu.runtime import pyexec

    kinds = {builtins.Kind.CAST, builtins.Kind.ABS, builtins.Kind.MINMAX}  # Python's own names run as they are
    offered = {n for n, b in builtins.ROWS.items() if b.kind not in kinds} - {"powi"}  # x ** k: Python's **
    # the device's min and max run as wg.fmin and wg.fmax (Python's min and max compare)
    offered |= {b.implementation[1] for b in builtins.ROWS.values() if b.kind is builtins.Kind.MINMAX} - {"min", "max"}
    assert offered == set(pyexec.__all__) - {"python_thread", "static_range"}  # static_range: a loop form
    assert set(builtins.CASTS) <= set(py.CASTS) and set(py.CALLS.values()) == set(builtins.ROWS) - {"powi"}
    assert all(len(b.args) == 4 for b in builtins.ROWS.values() if b.name == "atomic_cas")
    assert builtins.vote_result("wave_ballot").name == "u32" and builtins.vote_result("wave_any").name == "bool"
    assert builtins.wave_operand("wave_prefix_add", builtins.F32) == "wave_prefix_add needs an integer"
    assert builtins.math_types("sqrt") == (builtins.F32, builtins.F64) and builtins.math_types("sin") == (builtins.F32,)
