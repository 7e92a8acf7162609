"""Frontends: each turns one source language into HIR; FRONTENDS names them (only Python so far)."""

from __future__ import annotations

from typing import Protocol

from ...errors import CompileError, Diagnostic
from .. import hir


class Frontend(Protocol):
    """One source language: its name, the file suffixes it reads, and its parser to HIR.

    A frontend that takes more than text may also offer `load(source, filename) -> [hir.Function]`
    (Python: a path or a function object); `compiler.compile_source` prefers it when present."""

    name: str
    suffixes: tuple[str, ...]

    def parse(self, text: str, file: str) -> list[hir.Function]:
        """The kernels of a source text (CompileError with spans for anything outside the language)."""
        ...


# The languages of DESIGN section 5 and their suffixes, registered or not yet: a file of a
# language without a frontend is recognised as kernel source and refused by name.
LANGUAGES: dict[str, tuple[str, ...]] = {
    "python": (".py",),
    "rust": (".rs",),
    "cpp": (".cpp", ".cc", ".cu"),
    "typescript": (".ts",),
}


def _registry() -> dict[str, Frontend]:
    from .python import PYTHON

    return {PYTHON.name: PYTHON}


FRONTENDS: dict[str, Frontend] = _registry()


def suffixes() -> dict[str, str]:
    """Kernel source suffix -> language, for every language of LANGUAGES and every frontend."""
    out = {s: lang for lang, sfx in LANGUAGES.items() for s in sfx}
    for fe in FRONTENDS.values():
        out.update(dict.fromkeys(fe.suffixes, fe.name))
    return out


def frontend(lang: str | None) -> Frontend:
    """The frontend of a language; CompileError naming the available ones when there is none."""
    fe = FRONTENDS.get(lang or "")
    if fe is not None:
        return fe
    available = ", ".join(FRONTENDS)
    if lang in LANGUAGES:
        msg = f"the {lang} frontend is not available yet (available: {available})"
    else:
        msg = f"unknown source language {lang!r} (available: {available})"
    raise CompileError([Diagnostic(msg)])


__all__ = ["FRONTENDS", "LANGUAGES", "Frontend", "frontend", "suffixes"]
