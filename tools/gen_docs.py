"""Regenerate the generated documentation (docs/encoding.md)."""

from __future__ import annotations

from pathlib import Path

from wavegpu.encoding.docgen import render

ROOT = Path(__file__).resolve().parent.parent

if __name__ == "__main__":
    (ROOT / "docs" / "encoding.md").write_text(render())
    print("wrote docs/encoding.md")
