"""How many lines of each frontend handle builtin calls (issue 23: "the frontends shrink by the
builtin code they no longer need; say by how much").

    python tools/builtin_code_lines.py [REV ...]     (no REV: the working tree)

What is counted, per frontend module (compiler/frontends/{python,rust,cpp,typescript}.py):

- builtin functions: the call-dispatch entries (`call`, the method the expression walker hands a
  call node to, and Rust's `method`, a method call's) and every function reachable from it whose callers are all builtin functions
  (it serves builtin calls only). The call graph is read from the source: `self.m(...)` (and a
  bound method `self.m` passed on) reaches the class's method m, `f(...)` a module function f.
  The entries of calls of the kernel's own functions (helpers, closures, lambdas, arrow
  functions: HELPER_ENTRIES) are not followed: that code serves helper calls, not builtins. A
  function shared with the rest of the frontend (expr, error, span, ...) is not counted.
- spelling tables: the module-level statements that bind a name which builtin functions or other
  spelling tables read, or `SPELLINGS`, and which nothing else in the module reads.

A line is counted when it is not blank, not only a comment and not part of a docstring. Nested
functions count with the function that holds them. The same definition applies to every revision,
so the numbers of two revisions compare. bind.py and builtins.py (shared by all four) are shown
beside them, by total code lines.
"""

from __future__ import annotations

import argparse
import ast
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FRONTENDS = ("python", "rust", "cpp", "typescript")
ENTRIES = ("call", "method")  # a function call; a method call (Rust: x.sqrt())
# the call-dispatch branches for the kernel's own functions (not builtins), in every revision
HELPER_ENTRIES = frozenset(
    {"invoke", "callee", "function_call", "closure_call", "inline", "helper_call", "build_helper"}
)
SHARED = ("compiler/bind.py", "compiler/builtins.py")


def source(rev: str | None, rel: str) -> str | None:
    """The text of src/wavegpu/<rel> at git revision rev (None: the working tree), or None."""
    path = f"src/wavegpu/{rel}"
    if rev is None:
        p = ROOT / path
        return p.read_text() if p.exists() else None
    r = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{path}"], capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else None


def code_lines(text: str, node: ast.AST | None = None) -> int:
    """The counted lines of text (or of node's lines in it): not blank, not only a comment, not a
    docstring."""
    tree = ast.parse(text) if node is None else node
    lines = text.splitlines()
    first, last = (1, len(lines)) if node is None else (node.lineno, node.end_lineno or node.lineno)  # type: ignore[attr-defined]
    docs: set[int] = set()
    for n in ast.walk(tree):
        if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and n.body:
            d = n.body[0]
            if isinstance(d, ast.Expr) and isinstance(d.value, ast.Constant) and isinstance(d.value.value, str):
                docs.update(range(d.lineno, (d.end_lineno or d.lineno) + 1))
    return sum(
        1
        for i in range(first, last + 1)
        if i not in docs and lines[i - 1].strip() and not lines[i - 1].strip().startswith("#")
    )


@dataclass
class Module:
    text: str
    functions: dict[str, list[ast.AST]]  # name -> its definitions (methods of every class, functions)
    calls: dict[int, set[str]]  # id(definition) -> the functions it calls or passes on
    reads: dict[int, set[str]]  # id(definition) -> every name it reads
    tables: dict[str, list[ast.stmt]]  # module-level name -> the statements that bind it
    table_refs: dict[str, set[str]]  # module-level name -> the names its statements read


def _names_called(fn: ast.AST, methods: set[str], functions: set[str]) -> set[str]:
    """The methods (`self.m`) and module functions (`f`) fn calls or passes on."""
    out: set[str] = set()
    for n in ast.walk(fn):
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self":
            if n.attr in methods:
                out.add(n.attr)
        elif isinstance(n, ast.Name) and n.id in functions:
            out.add(n.id)
    return out


def _names_read(fn: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}


def read(text: str) -> Module:
    tree = ast.parse(text)
    functions: dict[str, list[ast.AST]] = {}
    tables: dict[str, list[ast.stmt]] = {}
    methods: set[str] = set()
    module_functions: set[str] = set()
    for s in tree.body:
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.setdefault(s.name, []).append(s)
            module_functions.add(s.name)
        elif isinstance(s, ast.ClassDef):
            for m in s.body:
                if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    functions.setdefault(m.name, []).append(m)
                    methods.add(m.name)
        elif isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        tables.setdefault(n.id, []).append(s)
    calls = {id(d): _names_called(d, methods, module_functions) for ds in functions.values() for d in ds}
    reads = {id(d): _names_read(d) for ds in functions.values() for d in ds}
    table_refs: dict[str, set[str]] = {}
    for name, stmts in tables.items():
        refs: set[str] = set()
        for s in stmts:
            value = s.value if isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign)) else None
            if value is not None:
                refs |= {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
        table_refs[name] = refs - {name}
    return Module(text, functions, calls, reads, tables, table_refs)


def builtin_functions(m: Module) -> set[str]:
    """The names of the functions that serve builtin calls only (see the module docstring)."""
    reach: set[str] = set()
    todo = [e for e in ENTRIES if e in m.functions]
    while todo:
        f = todo.pop()
        if f in reach:
            continue
        reach.add(f)
        for d in m.functions[f]:
            todo += [g for g in m.calls[id(d)] if g in m.functions and g not in HELPER_ENTRIES and g not in reach]
    callers: dict[str, set[str]] = {f: set() for f in m.functions}
    for f, ds in m.functions.items():
        for d in ds:
            for g in m.calls[id(d)]:
                if g in callers and g != f:
                    callers[g].add(f)
    keep = set(reach)
    changed = True
    while changed:
        changed = False
        for f in sorted(keep):
            if f not in ENTRIES and not callers[f] <= keep:
                keep.discard(f)
                changed = True
    return keep


def spelling_tables(m: Module, funcs: set[str]) -> set[str]:
    """The module-level names only the builtin functions and other such tables read."""
    read_by_funcs: dict[str, set[str]] = {t: set() for t in m.tables}
    for f, ds in m.functions.items():
        for d in ds:
            for n in m.reads[id(d)]:
                if n in read_by_funcs:
                    read_by_funcs[n].add(f)
    tables = {t for t, fs in read_by_funcs.items() if fs & funcs} | ({"SPELLINGS"} & set(m.tables))
    todo = list(tables)
    while todo:  # what the tables are built from
        t = todo.pop()
        for r in m.table_refs[t]:
            if r in m.tables and r not in tables:
                tables.add(r)
                todo.append(r)
    changed = True
    while changed:  # keep only what nothing else reads
        changed = False
        for t in sorted(tables):
            other_tables = {u for u, refs in m.table_refs.items() if t in refs and u not in tables}
            if not read_by_funcs[t] <= funcs or other_tables:
                tables.discard(t)
                changed = True
    return tables


@dataclass(frozen=True)
class Count:
    functions: int
    tables: int
    names: tuple[str, ...]
    table_names: tuple[str, ...]


def count(text: str) -> Count:
    m = read(text)
    funcs = builtin_functions(m)
    tables = spelling_tables(m, funcs)
    f_lines = sum(code_lines(text, d) for f in funcs for d in m.functions[f])
    stmts = {id(s): s for t in tables for s in m.tables[t]}
    t_lines = sum(code_lines(text, s) for s in stmts.values())
    return Count(f_lines, t_lines, tuple(sorted(funcs)), tuple(sorted(tables)))


def report(rev: str | None, verbose: bool) -> None:
    label = rev or "working tree"
    print(f"{label}:")
    print(f"  {'frontend':<11} {'functions':>9} {'tables':>7} {'file':>6}")
    for fe in FRONTENDS:
        text = source(rev, f"compiler/frontends/{fe}.py")
        if text is None:
            print(f"  {fe:<11} (absent)")
            continue
        c = count(text)
        print(f"  {fe:<11} {c.functions:>9} {c.tables:>7} {code_lines(text):>6}")
        if verbose:
            print(f"    functions: {' '.join(c.names)}")
            print(f"    tables: {' '.join(c.table_names)}")
    for rel in SHARED:
        text = source(rev, rel)
        print(f"  {rel:<23} {'-' if text is None else code_lines(text):>5} code lines")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("revs", nargs="*", help="git revisions (default: the working tree)")
    ap.add_argument("-v", "--verbose", action="store_true", help="name the functions and tables counted")
    args = ap.parse_args(argv)
    for rev in args.revs or [None]:
        report(rev, args.verbose)
    return 0


if __name__ == "__main__":
    sys.exit(main())
