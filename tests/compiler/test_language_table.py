"""Every registered language spells every builtin (issue 13: all of DESIGN section 5 is reachable
from every frontend), and docs/compiler.md's side-by-side table is the generated one."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from wavegpu.compiler.builtins import ROWS
from wavegpu.compiler.frontends import FRONTENDS, spellings

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("lang", sorted(FRONTENDS))
def test_every_builtin_has_a_spelling(lang: str) -> None:
    table = spellings()[lang]
    missing = [name for name in ROWS if name not in table]
    assert not missing, f"{lang}: SPELLINGS lacks {missing}"
    unknown = [name for name in table if name not in ROWS]
    assert not unknown, f"{lang}: SPELLINGS names builtins that do not exist: {unknown}"


def test_docs_table_is_current() -> None:
    spec = importlib.util.spec_from_file_location("gen_docs", ROOT / "tools" / "gen_docs.py")
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    text = (ROOT / "docs" / "compiler.md").read_text()
    assert gen.compiler_doc(text) == text, "docs/compiler.md's builtins table is stale: run `make docs`"
