"""Quoted `#include "helpers.hpp"` of C++ kernel files: the header's text read at the include's place.

The frontend does not run the preprocessor. A quoted include at file scope names a header next to
the including file (the path is relative to that file's folder; there are no -I search paths); its
text is spliced in after the `#include` line, so that its functions, templates, constants and
`#define` constants are visible below it as if written there. `#pragma once` and a classic include
guard around the whole header (`#ifndef X` / `#define X` / ... / `#endif`, nothing else outside it
but comments) make a second include of the header empty, as in C++. Ignored, as angle includes
are: `"wave.hpp"` (the kernel language's declarations for g++ and editors) wherever it is, and a
standard or GPU runtime header (`"cstdint"`, `"cuda_runtime.h"`) that is not next to the file.
Refused at the `#include`: a header that is not there, one that cannot be read, an include cycle
(a header without a guard that includes itself, directly or through others: g++ fails too), and
any such include in source text compiled without a file (nothing to be next to).

Every byte of the spliced text maps back to its file: `Spliced.span` gives a header's node its
header's path, line and column, so diagnostics name the place where the user wrote the code.
"""

from __future__ import annotations

import bisect
import contextlib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import CompileError, Diagnostic, Span, decode_source
from .treesitter import Node, Source, parse, parser, syntax_errors, too_deep

# quoted names that mean a header of the C/C++ standard library or a GPU runtime: ignored (as an
# angle include is) when no file of that name is next to the including file
STANDARD = frozenset(
    {
        *("algorithm", "array", "bit", "cassert", "cfloat", "climits", "cmath", "cstddef", "cstdint", "cstdio"),
        *("cstdlib", "cstring", "functional", "limits", "numeric", "type_traits", "utility", "iostream"),
        *("assert.h", "float.h", "limits.h", "math.h", "stdbool.h", "stddef.h", "stdint.h", "stdio.h"),
        *("stdlib.h", "string.h", "cuda_runtime.h", "cuda_fp16.h", "cuda.h", "hip/hip_runtime.h"),
        *("hip/hip_fp16.h", "sycl/sycl.hpp", "CL/sycl.hpp", "metal_stdlib"),
    }
)
QUOTED = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"', re.MULTILINE)  # a file without one is read as it is
DECLARATIONS = "wave.hpp"  # support/cpp/wave.hpp: the builtins' declarations, never read


@dataclass
class File:
    """One file of the spliced text: its name as diagnostics show it, its text and line starts."""

    name: str
    text: str
    data: bytes = b""
    lines: list[str] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)  # the byte offset of each line

    def __post_init__(self) -> None:
        self.data = self.text.encode("utf-8")
        self.lines = self.text.splitlines()
        self.starts = [0] + [i + 1 for i, b in enumerate(self.data) if b == 0x0A]


@dataclass(frozen=True)
class Piece:
    """Bytes [start, start + length) of `file` at byte `at` of the spliced text."""

    at: int
    file: File
    start: int
    length: int


class Spliced(Source):
    """The spliced text of a kernel file and its headers; spans name each byte's own file."""

    def __init__(self, text: str, file: str, pieces: list[Piece], main: File):
        super().__init__(text, file)
        self.pieces = pieces or [Piece(0, main, 0, len(main.data))]
        self.ats = [p.at for p in self.pieces]
        self.lines = main.lines  # file_start: the kernel file's first line

    def span(self, node: Node) -> Span:
        return self.span_at(node.start_byte, node.end_byte)

    def span_at(self, start: int, end: int) -> Span:
        """The place of bytes [start, end) of the spliced text, in the file they come from."""
        p = self.pieces[max(0, bisect.bisect_right(self.ats, start) - 1)]
        f = p.file
        b = p.start + min(max(start - p.at, 0), p.length)
        row = max(0, bisect.bisect_right(f.starts, b) - 1)
        line = f.lines[row] if row < len(f.lines) else ""
        col = len(f.data[f.starts[row] : b].decode("utf-8", errors="replace")) + 1
        seg = self.data[start:end]
        length = max(1, len(seg.decode("utf-8", errors="replace"))) if b"\n" not in seg else max(1, len(line) - col + 1)
        return Span(f.name, row + 1, col, length, line)


def _quoted(src: Source, n: Node) -> str | None:
    """The name of a `#include "name"`; None for an angle include."""
    path = n.child_by_field_name("path")
    if path is None or path.type != "string_literal":
        return None
    return src.node_text(path)[1:-1]


def _guard(src: Source, root: Node) -> tuple[str, Node, int, int] | None:
    """A classic include guard around the whole file: (its macro, the #ifndef node, the body's
    first and end byte); None when the file is not exactly of that form."""
    outer = [c for c in root.named_children if c.type != "comment"]
    if len(outer) != 1 or outer[0].type != "preproc_ifdef" or src.node_text(outer[0]).split(None, 1)[0] != "#ifndef":
        return None
    g = outer[0]
    name = g.child_by_field_name("name")
    inner = [c for c in g.named_children if c != name and c.type != "comment"]
    if name is None or not inner or inner[0].type != "preproc_def" or g.child_by_field_name("alternative"):
        return None
    d = inner[0]
    dname, dvalue = d.child_by_field_name("name"), d.child_by_field_name("value")
    if dname is None or src.node_text(dname) != src.node_text(name) or (dvalue and src.node_text(dvalue).strip()):
        return None
    end = next((c for c in g.children if c.type == "#endif"), None)
    if end is None:
        return None
    return src.node_text(name), g, d.end_byte, end.start_byte


class _Splicer:
    def __init__(self, blank: Callable[[str], str]):
        self.blank = blank
        self.out: list[bytes] = []
        self.at = 0
        self.pieces: list[Piece] = []
        self.once: set[Path] = set()  # headers with #pragma once, read already
        self.guards: set[str] = set()  # include guard macros defined
        self.stack: list[tuple[Path | None, str]] = []  # the files being read: (path, name)
        self.read: list[tuple[str, str]] = []  # every header read: (resolved path, text)

    def emit(self, f: File, start: int, end: int) -> None:
        if end > start:
            self.pieces.append(Piece(self.at, f, start, end - start))
            self.out.append(f.data[start:end])
            self.at += end - start

    def file(self, text: str, name: str, path: Path | None, site: tuple[Source, Node] | None) -> None:
        f = File(name, text)
        src, root = parse("cpp", self.blank(text), name)  # a header's syntax errors at its own places
        src.text, src.lines = text, f.lines
        guard = _guard(src, root)
        if guard is not None and guard[0] in self.guards:
            return  # included already: the guard makes it empty
        if path is not None and any(p == path for p, _ in self.stack):
            assert site is not None
            chain = " -> ".join([*(n for _, n in self.stack), name])
            raise site[0].error(
                site[1],
                f"#include cycle: {chain} (g++ fails here too): include the header once, or give it "
                f"#pragma once or an include guard",
            )
        container, start, end = root, 0, len(f.data)
        if guard is not None:
            self.guards.add(guard[0])
            container, start, end = guard[1], guard[2], guard[3]
        if path is not None and any(
            c.type == "preproc_call" and src.node_text(c).split() == ["#pragma", "once"]
            for c in container.named_children
        ):
            self.once.add(path)
        self.stack.append((path, name))
        try:
            top = {c.id for c in container.named_children}
            cursor = start
            stack = [root]
            while stack:  # every quoted include, in source order
                n = stack.pop()
                stack.extend(reversed(n.named_children))
                if n.type != "preproc_include":
                    continue
                header = _quoted(src, n)
                if header is None or os.path.basename(header) == DECLARATIONS:
                    continue
                if n.id not in top:
                    raise src.error(
                        n, 'a header is included at file scope (not inside a function, a block or extern "C")'
                    )
                target = self.resolve(src, n, header, path)
                if target is None:
                    continue
                self.emit(f, cursor, n.end_byte)
                cursor = n.end_byte
                if not f.data[:cursor].endswith(b"\n"):
                    self.out.append(b"\n")
                    self.pieces.append(Piece(self.at, f, cursor, 0))
                    self.at += 1
                self.header(src, n, header, target, path)
            self.emit(f, cursor, end)
            if self.out and not self.out[-1].endswith(b"\n"):
                self.out.append(b"\n")
                self.pieces.append(Piece(self.at, f, end, 0))
                self.at += 1
        finally:
            self.stack.pop()

    def resolve(self, src: Source, n: Node, header: str, path: Path | None) -> Path | None:
        """The file a quoted include reads (None: ignored, a standard header), or a CompileError."""
        if path is None:
            if header in STANDARD:
                return None
            raise src.error(
                n,
                f'#include "{header}" is read next to the kernel file, and this source text has no file: '
                f"compile the file by its path (wg.compile('kernel.cpp'), wg.load_kernels), or put the "
                f"header's functions into the text",
            )
        target = path.parent / header
        if target.is_file():
            return target
        if header in STANDARD:
            return None
        raise src.error(
            n,
            f"cannot find {header!r}: a quoted #include is read relative to the including file's folder "
            f"({path.parent}; there are no -I search paths)",
        )

    def header(self, src: Source, n: Node, header: str, target: Path, including: Path | None) -> None:
        key = target.resolve()
        if key in self.once:
            return
        try:
            data = target.read_bytes()
        except OSError as e:
            raise src.error(n, f"cannot read {header!r}: {e.strerror or e}") from None
        name = os.path.normpath(str(Path(src.file).parent / header)) if including is not None else header
        text = decode_source(data, name, "not UTF-8 text", CompileError)
        self.read.append((str(key), text))
        self.file(text, name, key, (src, n))


def splice(text: str, file: str, blank: Callable[[str], str]) -> tuple[str, list[Piece], File, list[tuple[str, str]]]:
    """The text of a kernel file with its quoted includes read in (module docstring), the pieces
    mapping its bytes to their files, the kernel file, and the headers read (path, text).
    `file` is the kernel file's name; `<string>` (any `<...>`) means text without a file."""
    main = File(file, text)
    if not QUOTED.search(text):
        return text, [Piece(0, main, 0, len(main.data))], main, []
    path = None if file.startswith("<") and file.endswith(">") else Path(file).resolve()
    s = _Splicer(blank)
    s.file(text, file, path, None)
    if not s.read:  # no header: the text as it is
        return text, [Piece(0, main, 0, len(main.data))], main, []
    return b"".join(s.out).decode("utf-8"), s.pieces, main, s.read


def headers(text: str, file: str, blank: Callable[[str], str]) -> list[tuple[str, str]]:
    """The headers a kernel file reads (path, text), for the compile cache's key; those found
    before a refusal when it has one (the compile reports it)."""
    if not QUOTED.search(text):
        return []
    path = None if file.startswith("<") and file.endswith(">") else Path(file).resolve()
    s = _Splicer(blank)
    with contextlib.suppress(CompileError):
        s.file(text, file, path, None)
    return s.read


def parse_spliced(text: str, blanked: str, file: str, pieces: list[Piece], main: File) -> tuple[Spliced, Node]:
    """Parse the spliced (and blanked) text: the source and its root, or a CompileError listing
    the syntax errors, each at its own file's place."""
    src = Spliced(blanked, file, pieces, main)
    root = parser("cpp").parse(src.data).root_node
    if root.has_error:
        errors = syntax_errors(src, root)
        raise CompileError(errors or [Diagnostic("syntax error", src.span(root))])
    deep = too_deep(src, root)
    if deep is not None:
        raise CompileError([deep])
    src.text = text
    return src, root


__all__ = ["DECLARATIONS", "STANDARD", "File", "Piece", "Spliced", "headers", "parse_spliced", "splice"]
