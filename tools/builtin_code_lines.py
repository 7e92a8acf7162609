"""How many lines of each frontend handle builtin calls (issue 23: "the frontends shrink by the
builtin code they no longer need; say by how much").

    python tools/builtin_code_lines.py [REV ...]     (no REV: the working tree)

What is counted, per frontend module (compiler/frontends/{python,rust,cpp,typescript}.py):

- builtin functions: the call-dispatch entries (`call`, the method the expression walker hands a
  call node to, and Rust's `method`, a method call's; the declaration of the local_array row:
  ENTRIES) and every function reachable from them
  whose callers are all builtin functions (it serves builtin calls only). The call graph is read
  from the source: `self.m` (called or passed on) reaches the class's own method m, `self.x.m` a
  method m of another class of the module (a helper object calling its owner: a bind.Reader
  calling its frontend), `f` a module function, `C(...)` every method of class C (a class whose
  methods all serve builtins, such as a frontend's bind.Reader, counts whole). The
  entries of calls of the kernel's own functions (helpers, closures, lambdas, arrow functions:
  HELPER_ENTRIES) are not followed: that code serves helper calls, not builtins. A function
  shared with the rest of the frontend (expr, error, span, ...) is not counted.
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
# a function call; a method call (Rust: x.sqrt()); the declaration of a local array (the row
# local_array: a declaring call, or the declaration a language spells it with). Per-thread arrays
# (private_array) are left out: in Rust, C++ and TypeScript they are the language's own arrays.
ENTRIES = ("call", "method", "local_array", "make_local")
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
    units: dict[str, ast.AST]  # "f" (a module function) or "Class.m" (a method) -> its definition
    classes: dict[str, list[str]]  # class name -> its methods' units
    calls: dict[str, set[str]]  # unit -> the units it calls or passes on
    reads: dict[str, set[str]]  # unit -> every name it reads
    tables: dict[str, list[ast.stmt]]  # module-level name -> the statements that bind it
    table_refs: dict[str, set[str]]  # module-level name -> the names its statements read


def _calls(fn: ast.AST, cls: str | None, m_units: dict[str, ast.AST], classes: dict[str, list[str]]) -> set[str]:
    """The units fn calls or passes on: `self.m` (its own class's method m), `self.x.m` in a helper
    class (a method m of a builder, the class of the entries: a reader calling its frontend), `f` (a module function),
    `C(...)` (an object of a class of the module: every method of it, called through the object,
    unless it is the class of the call-dispatch entries)."""
    out: set[str] = set()
    builders = {c for c, methods in classes.items() if any(_is(u, ENTRIES) for u in methods)}
    for n in ast.walk(fn):
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self" and cls:
            if f"{cls}.{n.attr}" in m_units:
                out.add(f"{cls}.{n.attr}")
        elif isinstance(n, ast.Attribute) and isinstance(n.value, ast.Attribute) and cls not in builders:
            inner = n.value
            if isinstance(inner.value, ast.Name) and inner.value.id == "self":
                out |= {f"{c}.{n.attr}" for c in builders if f"{c}.{n.attr}" in m_units}
        elif isinstance(n, ast.Name) and n.id in m_units and "." not in n.id:
            out.add(n.id)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in classes.keys() - builders:
            out |= set(classes[n.func.id])  # (not the frontend's own builder: a helper object)
    return out


def read(text: str) -> Module:
    tree = ast.parse(text)
    units: dict[str, ast.AST] = {}
    owner: dict[str, str | None] = {}
    classes: dict[str, list[str]] = {}
    tables: dict[str, list[ast.stmt]] = {}
    for s in tree.body:
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
            units[s.name], owner[s.name] = s, None
        elif isinstance(s, ast.ClassDef):
            classes[s.name] = []
            for f in s.body:
                if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    key = f"{s.name}.{f.name}"
                    units[key], owner[key] = f, s.name
                    classes[s.name].append(key)
        elif isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        tables.setdefault(n.id, []).append(s)
    calls = {u: _calls(d, owner[u], units, classes) - {u} for u, d in units.items()}
    reads = {u: {n.id for n in ast.walk(d) if isinstance(n, ast.Name)} for u, d in units.items()}
    table_refs: dict[str, set[str]] = {}
    for name, stmts in tables.items():
        refs: set[str] = set()
        for s in stmts:
            value = s.value if isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign)) else None
            if value is not None:
                refs |= {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
        table_refs[name] = refs - {name}
    return Module(units, classes, calls, reads, tables, table_refs)


def _is(unit: str, names: frozenset[str] | tuple[str, ...]) -> bool:
    return unit.rpartition(".")[2] in names


def builtin_functions(m: Module) -> set[str]:
    """The units that serve builtin calls only (see the module docstring)."""
    entries = {u for u in m.units if _is(u, ENTRIES) and "." in u}
    reach: set[str] = set()
    todo = sorted(entries)
    while todo:
        f = todo.pop()
        if f in reach:
            continue
        reach.add(f)
        todo += [g for g in m.calls[f] if not _is(g, HELPER_ENTRIES) and g not in reach]
    callers: dict[str, set[str]] = {u: set() for u in m.units}
    for f, gs in m.calls.items():
        for g in gs:
            callers[g].add(f)
    keep = set(reach)
    changed = True
    while changed:
        changed = False
        for f in sorted(keep):
            if f not in entries and not callers[f] <= keep:
                keep.discard(f)
                changed = True
    return keep


def spelling_tables(m: Module, funcs: set[str]) -> set[str]:
    """The module-level names only the builtin functions and other such tables read."""
    read_by_funcs: dict[str, set[str]] = {t: set() for t in m.tables}
    for f, names in m.reads.items():
        for n in names:
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
    tree = ast.parse(text)
    whole = {
        c.name: c
        for c in tree.body
        if isinstance(c, ast.ClassDef) and m.classes[c.name] and set(m.classes[c.name]) <= funcs
    }
    nodes: list[ast.AST] = list(whole.values())  # a class that only serves builtins counts whole
    nodes += [m.units[u] for u in funcs if u.partition(".")[0] not in whole or "." not in u]
    f_lines = sum(code_lines(text, d) for d in nodes)
    stmts = {id(s): s for t in tables for s in m.tables[t]}
    t_lines = sum(code_lines(text, s) for s in stmts.values())
    names = sorted({*whole, *(u for u in funcs if u.partition(".")[0] not in whole or "." not in u)})
    return Count(f_lines, t_lines, tuple(names), tuple(sorted(tables)))


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
