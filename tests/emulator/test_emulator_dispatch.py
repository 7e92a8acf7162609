"""The emulator's dispatch is total: every row runs by its value semantics or its operation's handler."""

from __future__ import annotations

from wavegpu.emulator.machine import HANDLERS
from wavegpu.isa.semantics import SEMANTICS
from wavegpu.isa.table import ROWS
from wavegpu.isa.vocabulary import Op


def test_every_row_has_semantics_or_a_handler() -> None:
    missing = [f"(emulator, {r.key})" for r in ROWS if r.key not in SEMANTICS and r.op not in HANDLERS]
    assert not missing, "rows the emulator cannot run: " + ", ".join(missing)


def test_every_handler_serves_rows() -> None:
    used = {r.op for r in ROWS if r.key not in SEMANTICS}
    assert set(HANDLERS) == used, set(HANDLERS) ^ used
    assert set(HANDLERS) <= set(Op)
