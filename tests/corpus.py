"""The assembly test corpus: the examples plus hand-written programs covering every feature."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.wave"))
ASM_DIR = Path(__file__).resolve().parent / "data" / "asm"


def corpus_files() -> list[Path]:
    return EXAMPLES + sorted(ASM_DIR.glob("*.wave"))
