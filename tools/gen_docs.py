"""Regenerate the generated documentation: docs/encoding.md, and the table of builtin spellings
per language in docs/compiler.md (between its markers)."""

from __future__ import annotations

from pathlib import Path

from wavegpu.compiler.frontends import TABLE_END, TABLE_START, builtin_table
from wavegpu.encoding.docgen import render

ROOT = Path(__file__).resolve().parent.parent


def compiler_doc(text: str) -> str:
    """docs/compiler.md with its builtins table replaced by the current one."""
    start = text.index(TABLE_START)
    end = text.index(TABLE_END) + len(TABLE_END)
    return text[:start] + builtin_table() + text[end:]


if __name__ == "__main__":
    (ROOT / "docs" / "encoding.md").write_text(render())
    print("wrote docs/encoding.md")
    path = ROOT / "docs" / "compiler.md"
    path.write_text(compiler_doc(path.read_text()))
    print("wrote the builtins table of docs/compiler.md")
