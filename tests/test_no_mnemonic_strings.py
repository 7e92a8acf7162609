"""No module outside isa/ and the text parsers (asm/) reads an instruction's mnemonic: they switch
on the rows' typed vocabulary (op, variant, nest, signed, width) instead (issue 12, point 1).

A module may key its own target tables by row key (`EXPR["add.s32"]`, `table.row("...")`), as
DESIGN section 7 asks; what this test forbids is comparing a string with a mnemonic or row key
(`name == "endif"`, `key in ("break", "continue")`), testing a mnemonic's prefix or suffix
(`name.startswith("atom.")`) and splitting a name or key (`spec.name.split(".")`).
"""

from __future__ import annotations

import ast
from pathlib import Path

from wavegpu.isa.table import ROWS

SRC = Path(__file__).resolve().parents[1] / "src" / "wavegpu"

# Parts of the tree that own mnemonic text: the table itself and the text parsers.
OWNERS = ("isa/", "asm/")

# Modules not yet moved to the vocabulary (edited by other work at the time of issue 12, or
# comparing MIR operation names that coincide with mnemonics). This list only shrinks: a module
# leaves it once it has no mnemonic comparison left (test_the_allow_list_only_shrinks).
ALLOWED = {
    "compiler/frontends/python.py",  # the builtin named "barrier"
    "compiler/mir/lower.py",  # the MIR op "barrier"
}

MNEMONICS = frozenset({r.name for r in ROWS} | {r.key for r in ROWS} | {a for r in ROWS for a in r.aliases})
STEMS = frozenset(".".join(m.split(".")[:i]) + "." for m in MNEMONICS for i in range(1, m.count(".") + 1)) | frozenset(
    "." + ".".join(m.split(".")[i:]) for m in MNEMONICS for i in range(1, m.count(".") + 1)
)
NAME_ATTRS = {"name", "key", "mnemonic"}


def _strings(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [s for e in node.elts for s in _strings(e)]
    return []


def _is_name(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr in NAME_ATTRS


def problems(tree: ast.AST) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for s in (s for side in (node.left, *node.comparators) for s in _strings(side)):
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
