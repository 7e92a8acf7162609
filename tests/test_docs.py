"""Generated documentation is current."""

from __future__ import annotations

from pathlib import Path

from wavegpu.encoding.docgen import render

DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_encoding_doc_is_current() -> None:
    assert (DOCS / "encoding.md").read_text() == render(), "docs/encoding.md is stale: run `make docs`"


def test_hand_written_docs_exist() -> None:
    for name in ("spec-errata.md", "wbin.md", "assembly.md"):
        assert (DOCS / name).stat().st_size > 500, name
