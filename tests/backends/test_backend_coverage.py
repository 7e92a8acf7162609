"""Every backend in the registry renders every row or says why not (DESIGN section 7).

One test over `backends.BACKENDS` names each (backend, row) pair that is neither rendered nor
listed as unsupported; the others pin what each backend refuses, how it renders the rest, and
that its value table covers exactly the value rows (isa.table.VALUE_ROWS).
"""

from __future__ import annotations

import pytest

from wavegpu.backends import BACKENDS, NAMES, ptx
from wavegpu.backends.amdgcn import rows as amdgcn_rows
from wavegpu.backends.cstyle import render as c
from wavegpu.isa.semantics import SEMANTICS
from wavegpu.isa.table import ROWS, VALUE_ROWS

F64 = frozenset(r.key for r in ROWS if "f64" in r.key.split("."))
# What each backend refuses (every other row it renders); a backend absent here refuses nothing.
UNSUPPORTED = {"metal": F64 | {"mma.m16n8k8.f32.f16"}, "amdgcn": frozenset(amdgcn_rows.UNSUPPORTED)}
REASON = {
    "metal": {k: "double precision" for k in F64},
    "amdgcn": {"mma.m16n8k8.f32.f16": "W = 32", "sin.f32": "range reduction", "fma.bf16": "rounded twice"},
}
# The rows the amdgcn backend refuses, pinned (the list only shrinks as selection widens).
AMDGCN_REFUSED = {"sin.f32", "cos.f32", "mma.m16n8k8.f32.f16", "fma.bf16", "fma.bf16x2"}
# How each kind of backend says it renders a row.
HOW = {name: ("expr", "statement") for name in NAMES} | {
    "ptx": ("inline", "helper wvp_", "statement"),
    "amdgcn": ("inline", "statement"),
}


def _coverage(name: str) -> dict[str, str]:
    return BACKENDS[name].make(None).coverage()


def test_every_backend_renders_every_row_or_says_why_not() -> None:
    missing = [f"({name}, {key})" for name in NAMES for key, how in _coverage(name).items() if how == "missing"]
    assert not missing, "rows no renderer handles: " + ", ".join(missing)


def test_the_registry_holds_every_target() -> None:
    assert set(NAMES) == {"opencl", "cuda", "hip", "sycl", "metal", "ptx", "amdgcn"}
    assert set(HOW) == set(NAMES) and set(UNSUPPORTED) <= set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_each_backend_covers_every_row_the_way_it_says(name: str) -> None:
    cov = _coverage(name)
    assert set(cov) == {r.key for r in ROWS}
    refused = {k for k, v in cov.items() if v.startswith("unsupported: ")}
    assert refused == UNSUPPORTED.get(name, frozenset())
    assert F64 and all(words in cov[k] for k, words in REASON.get(name, {}).items())
    bad = {k: v for k, v in cov.items() if k not in refused and not v.startswith(HOW[name])}
    assert not bad, bad


@pytest.mark.parametrize("name", NAMES)
def test_each_value_table_covers_exactly_the_value_rows(name: str) -> None:
    cov = _coverage(name)
    values = {k for k, v in cov.items() if v.startswith(("expr", "inline", "helper"))}
    assert values == VALUE_ROWS - UNSUPPORTED.get(name, frozenset())


def test_amdgcn_refusals_are_the_listed_rows() -> None:
    assert set(amdgcn_rows.UNSUPPORTED) == AMDGCN_REFUSED


def test_value_rows_are_the_emulator_semantics_and_the_special_register_move() -> None:
    assert set(SEMANTICS) | {"mov.b32.sreg"} == VALUE_ROWS
    assert set(c.EXPR) == VALUE_ROWS
    assert set(ptx.NATIVE) | set(ptx.HELPER_ROWS) == VALUE_ROWS
    assert not set(ptx.NATIVE) & set(ptx.HELPER_ROWS)
    assert len(set(ptx.HELPER_ROWS)) == len(ptx.HELPER_ROWS)


def test_statement_registries_serve_rows_outside_the_expression_tables() -> None:
    ops = {r.op for r in ROWS}
    for registry in (c.STATEMENTS, c.TREE, ptx.STATEMENTS, ptx.IN_REGION, ptx.TREE):
        assert set(registry) <= ops
    assert not set(c.STATEMENTS) & c.TREE
    assert not set(ptx.STATEMENTS) & (set(ptx.IN_REGION) | ptx.TREE)
    for r in ROWS:
        if r.key not in c.EXPR:
            assert r.op in c.STATEMENTS or r.op in c.TREE, f"(c, {r.key})"
        if r.key not in ptx.NATIVE and r.key not in ptx.HELPER_ROWS:
            assert r.op in ptx.STATEMENTS or r.op in ptx.IN_REGION or r.op in ptx.TREE, f"(ptx, {r.key})"
