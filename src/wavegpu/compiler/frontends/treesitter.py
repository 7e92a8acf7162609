"""What the tree-sitter frontends (Rust, C++, TypeScript) share: the grammars, syntax errors with
spans and carets, and node text and places.

Each grammar comes from its PyPI wheel (`tree-sitter-rust`, `tree-sitter-cpp`,
`tree-sitter-typescript`); parsers are made once per process. A tree with error or missing nodes
is refused here, with every error node reported as `file:line:col` and a caret under it, before a
frontend looks at it, so frontends only ever walk well-formed trees.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any

from ...errors import CompileError, Diagnostic, Span
from ...isa.capabilities import EMULATOR
from .. import hir

Node = Any  # tree_sitter.Node (the bindings carry no type stubs)


def _grammar(lang: str) -> object:
    """The tree-sitter language object of `lang` ('rust', 'cpp', 'typescript')."""
    try:
        if lang == "rust":
            import tree_sitter_rust as g

            return g.language()
        if lang == "cpp":
            import tree_sitter_cpp as g

            return g.language()
        if lang == "typescript":
            import tree_sitter_typescript as g

            return g.language_typescript()
    except ImportError as e:
        raise CompileError(
            [Diagnostic(f"the {lang} frontend needs the {e.name} package: pip install 'wavegpu' reinstalls it")]
        ) from None
    raise KeyError(lang)


@functools.cache
def parser(lang: str) -> Any:
    """A tree-sitter parser for `lang`, made once per process."""
    try:
        import tree_sitter
    except ImportError:
        raise CompileError(
            [Diagnostic(f"the {lang} frontend needs the tree-sitter package: pip install 'wavegpu' reinstalls it")]
        ) from None
    return tree_sitter.Parser(tree_sitter.Language(_grammar(lang)))


class Source:
    """One source text with its file name: node text and spans in 1-based lines and columns."""

    def __init__(self, text: str, file: str):
        self.text = text
        self.file = file
        self.data = text.encode("utf-8")
        self.lines = text.splitlines()

    def node_text(self, node: Node) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8")

    def span(self, node: Node) -> Span:
        """The place of a node: its first line, the column in characters, its length on that line."""
        row, col_bytes = node.start_point
        line = self.lines[row] if row < len(self.lines) else ""
        col = len(line.encode("utf-8")[:col_bytes].decode("utf-8", errors="replace")) + 1
        if node.end_point[0] == row:
            length = max(1, len(self.node_text(node)))
        else:
            length = max(1, len(line) - col + 1)
        return Span(self.file, row + 1, col, length, line)

    def error(self, node: Node, message: str) -> CompileError:
        """A CompileError at `node` (raise it)."""
        return CompileError([Diagnostic(message, self.span(node))])


def walk(node: Node) -> Iterator[Node]:
    """Every node below and including `node`, in source order."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def syntax_errors(src: Source, root: Node, describe: Callable[[Node], str | None] | None = None) -> list[Diagnostic]:
    """One diagnostic per error or missing node of a tree (outermost errors only)."""
    out: list[Diagnostic] = []
    stack = [root]
    while stack:
        n = stack.pop()
        if n.is_missing:
            out.append(Diagnostic(f"syntax error: expected {n.type!r} here", src.span(n)))
            continue
        if n.type == "ERROR":
            what = describe(n) if describe else None
            if what is None:
                bad = src.node_text(n).strip().splitlines()
                shown = bad[0][:40] if bad else ""
                what = f"syntax error: unexpected {shown!r}" if shown else "syntax error"
            out.append(Diagnostic(what, src.span(n)))
            continue
        if n.has_error:
            stack.extend(reversed(n.children))
    out.sort(key=lambda d: (d.span.line, d.span.col) if d.span else (0, 0))
    return out


# The deepest syntax tree the frontends and the compiler's recursive stages lower within Python's
# recursion limit, with a margin (a 64-term sum is about 70 levels, a block about 2 per nesting;
# measured: the first failures were near 200 levels of nested TypeScript blocks). One limit and one
# message for every frontend (hir.py; the Python frontend counts its ast the same way).
MAX_DEPTH = hir.MAX_DEPTH


def too_deep(src: Source, root: Node, limit: int = MAX_DEPTH) -> Diagnostic | None:
    """A diagnostic at the first node (in source order) deeper than `limit` levels, if any."""
    stack = [(root, 1)]
    while stack:
        n, d = stack.pop()
        if d > limit:
            return Diagnostic(hir.too_deep_message(limit), src.span(n))
        stack.extend((c, d + 1) for c in reversed(n.children))
    return None


def parse(lang: str, text: str, file: str, describe: Callable[[Node], str | None] | None = None) -> tuple[Source, Node]:
    """Parse `text` with `lang`'s grammar: the source and the root node, or a CompileError that
    lists every syntax error with its place (also a tree nested too deeply to lower)."""
    src = Source(text, file)
    tree = parser(lang).parse(src.data)
    root = tree.root_node
    if root.has_error:
        errors = syntax_errors(src, root, describe)
        raise CompileError(errors or [Diagnostic("syntax error", src.span(root))])
    deep = too_deep(src, root)
    if deep is not None:
        raise CompileError([deep])
    return src, root


def file_start(src: Source) -> Span:
    """The first column of the first line: where a message about the whole file points."""
    return Span(src.file, 1, 1, 1, src.lines[0] if src.lines else "")


def duplicates(src: Source, named: list[tuple[str, Node]], what: str) -> list[Diagnostic]:
    """A diagnostic at every later definition of a name already defined (two kernels, or two
    parameters of one kernel, of one name: each language's own compiler refuses them)."""
    first: dict[str, Node] = {}
    out: list[Diagnostic] = []
    for name, node in named:
        if name in first:
            line = first[name].start_point[0] + 1
            out.append(Diagnostic(f"{what} {name!r} is defined twice (first on line {line})", src.span(node)))
        else:
            first[name] = node
    return out


def param_errors(fn: hir.Function) -> list[Diagnostic]:
    """A diagnostic at every parameter of `fn` whose name an earlier parameter has, and at the first
    parameter beyond the device's registers (parameter i arrives in r(i), DESIGN section 4)."""
    seen: dict[str, hir.Param] = {}
    out: list[Diagnostic] = []
    limit = EMULATOR.constants["MAX_REGISTERS"]
    if len(fn.params) > limit:
        p = fn.params[limit]
        out.append(
            Diagnostic(
                f"kernel {fn.name!r} has {len(fn.params)} parameters (hidden lengths included), more than the "
                f"{limit} registers they arrive in: pass values in an array",
                p.span,
            )
        )
    for p in fn.params:
        if p.name in seen:
            first = seen[p.name].span
            where = f" (first on line {first.line})" if first is not None else ""
            out.append(Diagnostic(f"parameter {p.name!r} is defined twice{where}", p.span))
        else:
            seen[p.name] = p
    return out


__all__ = ["Node", "Source", "duplicates", "file_start", "param_errors", "parse", "parser", "syntax_errors", "walk"]
