"""The renderers' dispatch is total: every (backend, row) pair is rendered or listed as unsupported."""

from __future__ import annotations

from wavegpu.backends import TARGETS, ptx
from wavegpu.backends.cstyle import coverage
from wavegpu.backends.cstyle import render as c
from wavegpu.isa.table import ROWS


def test_every_backend_renders_every_row_or_says_why_not() -> None:
    missing = [
        f"({name}, {key})" for name, d in TARGETS.items() for key, how in coverage(d()).items() if how == "missing"
    ]
    missing += [f"(ptx, {key})" for key, how in ptx.coverage().items() if how == "missing"]
    assert not missing, "rows no renderer handles: " + ", ".join(missing)


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
