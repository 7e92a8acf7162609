"""`wg.compile`: source text, a path or a decorated function to a Program; the reading of
kernel source (paths, bytes, languages by suffix) that `wg.load_kernels` shares."""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import BOM, CompileError, Diagnostic
from ..wbin.program import Program
from .kernel import KernelFunction


@functools.cache
def languages() -> dict[str, str]:
    """Kernel source suffix -> language (compiler/frontends: FRONTENDS and LANGUAGES), read from
    the frontends' registry on first use: importing this module loads no frontend."""
    from ..compiler.frontends import suffixes

    return suffixes()


def __getattr__(name: str) -> Any:
    if name == "LANGS":  # the table as a module attribute, computed on first use
        return languages()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def is_path(source: object) -> bool:
    """Whether wg.compile and wg.load_kernels read `source` as a path: an os.PathLike, or a string
    of one line that names an existing file or whose last component is a file name with a suffix
    (`k.txt`, `dir/k.wave`: no space, no parenthesis; source text is never one)."""
    if isinstance(source, os.PathLike):
        return True
    if not isinstance(source, str) or "\n" in source or not source.strip():
        return False
    return (
        os.path.isfile(source) or re.fullmatch(r"[^\s()]*\.[A-Za-z][A-Za-z0-9_]*", os.path.basename(source)) is not None
    )


def read_source(
    source: str | bytes | bytearray | os.PathLike[str], lang: str | None
) -> tuple[str, str | None, str | None]:
    """Source text, its file name (None for text) and its language (None: not known) from source
    text, bytes or a path (is_path); a path's language comes from its suffix unless `lang` names
    it. Refused with a message: a path to no file, a .wave or .wbin path (not kernel source), a
    suffix of no language without lang=, bytes that are not UTF-8 (with their line and column).
    A leading byte order mark is skipped."""
    from ..errors import decode_source

    if isinstance(source, bytes | bytearray):
        return decode_source(bytes(source), "<bytes>", "source bytes are not UTF-8 text", CompileError), None, lang
    if not is_path(source):
        return str(source).removeprefix(BOM), None, lang
    path = Path(source)
    filename = str(path)
    suffix = path.suffix
    if suffix in (".wave", ".wbin"):
        how = "wg.assemble(text, path) or `wave asm`" if suffix == ".wave" else "wg.load(path)"
        kind = "WAVE assembly" if suffix == ".wave" else "a compiled binary"
        raise CompileError([Diagnostic(f"{filename} is {kind}, not kernel source: read it with {how}")])
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise CompileError([Diagnostic(f"no such file: {filename}")]) from None
    except OSError as e:
        raise CompileError([Diagnostic(f"cannot read {filename}: {e.strerror or e}")]) from None
    langs = languages()
    lang = lang or langs.get(suffix)
    if lang is None:
        known = ", ".join(sorted(langs))
        raise CompileError(
            [Diagnostic(f"{filename}: no kernel language has the suffix {suffix or '(none)'!r} ({known}): give lang=")]
        )
    return decode_source(data, filename, "not UTF-8 text", CompileError), filename, lang


def compile(
    source: object,
    lang: str | None = None,
    opt: int = 2,
    max_registers: int | None = None,
    dump_after: Sequence[str] = (),
    dumps: list[tuple[str, str]] | None = None,
    passes: list[str] | None = None,
) -> Program:
    """Compile source text, a path, or a (decorated) function to a Program.

    A string of one line that looks like a file name is a path (is_path); its suffix names the
    language unless `lang=` does. `passes` replaces the -O pipeline by an explicit list of pass names."""
    from ..compiler import Options, compile_source
    from ..compiler.frontends import frontend

    options = Options(opt=opt, max_registers=max_registers, dump_after=set(dump_after), passes=passes)
    filename = None
    if isinstance(source, KernelFunction):
        source = source.python
    elif isinstance(source, str | bytes | bytearray | os.PathLike):
        source, filename, lang = read_source(source, lang)
    lang = frontend(lang or "python").name  # CompileError naming the available frontends
    prog = compile_source(source, options, filename, lang)
    if dumps is not None:
        dumps.extend(options.dumps)
    return prog
