"""No module outside isa/ and the text parsers (asm/) reads an instruction's mnemonic: they switch
on the rows' typed vocabulary (op, variant, nest, signed, width) instead (issue 12, point 1).

A module may key its own target tables by row key (`EXPR["add.s32"]`, `table.row("...")`), as
DESIGN section 7 asks; what this test forbids is comparing a row's name or key with a mnemonic
(`spec.name == "endif"`, `key in ("break", "continue")`), testing a mnemonic's prefix or suffix
(`name.startswith("atom.")`) and splitting a name or key (`spec.name.split(".")`).

Precisely, a comparison counts when one side is a string that is some row's mnemonic, key or
alias and the other side is a row's name: an attribute `.key` or `.mnemonic`, the `.name` of a row
(`spec.name`, `row.name`, `inst.spec.name`), a variable conventionally holding one (`key`,
`mnemonic`, `row_key`), or a variable assigned from any of these in the same module. Words that merely coincide with mnemonics are other vocabularies and pass: MIR's
operations (`Inst.op`, such as "barrier" or "select", are MIR's own names, tabled in
compiler/mir/ops.py), a source language's keywords and builtins (a frontend's `word == "break"`,
`name == "barrier"`), and a module's own markers (`item[0] == "else"`).
"""

from __future__ import annotations

import ast
from pathlib import Path

from wavegpu.isa.table import ROWS

SRC = Path(__file__).resolve().parents[1] / "src" / "wavegpu"

# Parts of the tree that own mnemonic text: the table itself and the text parsers.
OWNERS = ("isa/", "asm/")

# Modules not yet moved to the vocabulary. Empty since the test tells a row's name from words
# of other vocabularies; it only shrinks (test_the_allow_list_only_shrinks) and should stay empty.
ALLOWED: set[str] = set()

MNEMONICS = frozenset({r.name for r in ROWS} | {r.key for r in ROWS} | {a for r in ROWS for a in r.aliases})
STEMS = frozenset(".".join(m.split(".")[:i]) + "." for m in MNEMONICS for i in range(1, m.count(".") + 1)) | frozenset(
    "." + ".".join(m.split(".")[i:]) for m in MNEMONICS for i in range(1, m.count(".") + 1)
)
NAME_ATTRS = {"name", "key", "mnemonic"}
NAME_VARS = {"key", "mnemonic", "row_key"}
ROWS_NAMED = {"spec", "row", "r", "s"}  # what a row is called when its `.name` is read


def _strings(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [s for e in node.elts for s in _strings(e)]
    return []


def _is_name(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr in NAME_ATTRS


def _is_row_name_attr(node: ast.AST) -> bool:
    """`x.key`, `x.mnemonic`, or the `.name` of a row (`spec.name`, `row.name`, `inst.spec.name`);
    other `.name`s (a call's, a parameter's) are other vocabularies."""
    if not _is_name(node):
        return False
    assert isinstance(node, ast.Attribute)
    if node.attr != "name":
        return True
    base = node.value
    return (isinstance(base, ast.Name) and base.id in ROWS_NAMED) or (
        isinstance(base, ast.Attribute) and base.attr in ("spec", "row")
    )


def _row_name_vars(tree: ast.AST) -> set[str]:
    """Variables that hold a row's name: the conventional ones, and those assigned from a
    `.name`/`.key`/`.mnemonic` attribute (or from another such variable) anywhere in the module."""
    names = set(NAME_VARS)
    changed = True
    while changed:
        changed = False
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and (
                _is_row_name_attr(node.value) or (isinstance(node.value, ast.Name) and node.value.id in names)
            ):
                for t in node.targets:
                    if isinstance(t, ast.Name) and t.id not in names:
                        names.add(t.id)
                        changed = True
    return names


def _is_row_name(node: ast.AST, holders: set[str]) -> bool:
    return _is_row_name_attr(node) or (isinstance(node, ast.Name) and node.id in holders)


def problems(tree: ast.AST) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    holders = _row_name_vars(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = (node.left, *node.comparators)
            if not any(_is_row_name(side, holders) for side in sides):
                continue  # a MIR op, a source language's word, a module's own marker
            for s in (s for side in sides for s in _strings(side)):
                if s in MNEMONICS:
                    out.append((node.lineno, f"compares with the mnemonic {s!r}"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            method = node.func.attr
            if method in ("startswith", "endswith"):
                for s in (s for a in node.args for s in _strings(a)):
                    if s in STEMS or s in MNEMONICS:
                        out.append((node.lineno, f"tests a mnemonic's {method[:-4]} {s!r}"))
            elif method in ("split", "rsplit", "partition", "rpartition") and _is_name(node.func.value):
                out.append((node.lineno, f"splits a name ({method})"))
    return out


def test_no_module_outside_the_isa_reads_mnemonics() -> None:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel.startswith(OWNERS) or rel in ALLOWED:
            continue
        for line, what in problems(ast.parse(path.read_text(), rel)):
            found.append(f"{rel}:{line}: {what}")
    assert not found, "use the rows' op/variant/nest/signed/width instead:\n" + "\n".join(found)


def test_the_allow_list_only_shrinks() -> None:
    """Every allowed module still exists and still needs its place on the list."""
    for rel in sorted(ALLOWED):
        path = SRC / rel
        assert path.exists(), f"{rel} is gone: take it off ALLOWED"
        assert problems(ast.parse(path.read_text(), rel)), f"{rel} reads no mnemonic now: take it off ALLOWED"


def test_the_detector_sees_the_patterns() -> None:
    code = """
if spec.name == "endif": pass
if key in ("break", "continue"): pass
if name.startswith("wave.reduce."): pass
op = spec.name.split(".")[2]
"""
    assert len(problems(ast.parse(code))) == 5  # one per mnemonic compared
    assert not problems(ast.parse('if spec.space == "global" and ctype == "float": pass'))
    # a variable holding a row's name is a row's name
    assert len(problems(ast.parse('n = ins.spec.name\nm = n\nif m == "barrier": pass'))) == 1
    # other vocabularies that coincide with mnemonics: a builtin's name, a keyword, a MIR op, a marker
    other = """
if name == "barrier": pass
n = call.name
if n == "barrier": pass
if word in ("break", "continue"): pass
if i.op == "select": pass
if item[0] == "endif": pass
"""
    assert not problems(ast.parse(other))
