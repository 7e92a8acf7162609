"""No module compares a builtin's name as a string outside compiler/builtins.py (issue 23): the
binder, mir/lower.py and the runtime read the row's fields (rule, lowering, python), and a
frontend keeps its names in its spelling tables (module-level dicts and sets, which this test
does not count as comparisons), as tests/test_no_mnemonic_strings.py does for mnemonics.

A comparison counts when one side is a string literal (or a tuple, list or set of them) that is
a builtin's name (`name == "sqrt"`, `n in ("min", "max")`, `match name: case "fence"`), or when a
string method tests a builtin's name as a prefix or suffix (`name.startswith("atomic_")`).
"""

from __future__ import annotations

import ast
from pathlib import Path

from wavegpu.compiler.builtins import ROWS, Kind

SRC = Path(__file__).resolve().parents[1] / "src" / "wavegpu"

OWNERS = {"compiler/builtins.py"}  # the table itself
# The modules that handle builtin calls: frontends, binder, HIR, HIR -> MIR, the Python runtime.
# Below HIR -> MIR the words are MIR's own (`min`, `abs`, `fma` are MIR ops: mir/ops.py).
SCOPE = ("compiler/frontends/", "compiler/bind.py", "compiler/hir.py", "compiler/mir/lower.py", "compiler/__init__.py")
SCOPE += ("runtime/pyexec.py", "runtime/kernel.py")

# The frontends not yet ported to the binder (compiler/bind.py): each porter removes its file,
# and this set only shrinks (test_the_not_yet_ported_set_only_names_offenders).
NOT_YET_PORTED: set[str] = set()  # all four frontends bind through compiler/bind.py

NAMES = frozenset(n for n, b in ROWS.items() if b.kind is not Kind.CAST)  # casts are type names
PREFIXES = frozenset(n.split("_")[0] + "_" for n in NAMES if "_" in n)


def _strings(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [s for e in node.elts for s in _strings(e)]
    return []


def offences(tree: ast.AST) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for side in [node.left, *node.comparators]:
                out += [(node.lineno, s) for s in _strings(side) if s in NAMES]
        elif isinstance(node, ast.match_case) and isinstance(node.pattern, ast.MatchValue):
            out += [(node.pattern.lineno, s) for s in _strings(node.pattern.value) if s in NAMES]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("startswith", "endswith", "removeprefix", "removesuffix")
        ):
            out += [(node.lineno, s) for a in node.args for s in _strings(a) if s in NAMES or s in PREFIXES]
    return out


def _modules() -> dict[str, list[tuple[int, str]]]:
    found = {}
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel in OWNERS or not rel.startswith(SCOPE):
            continue
        bad = offences(ast.parse(path.read_text(), str(path)))
        if bad:
            found[rel] = bad
    return found


def test_no_builtin_name_is_compared_as_a_string() -> None:
    found = {rel: bad for rel, bad in _modules().items() if rel not in NOT_YET_PORTED}
    assert not found, "compare the row's fields, not its name:\n" + "\n".join(
        f"  {rel}:{line}: {name!r}" for rel, bad in found.items() for line, name in bad
    )


def test_the_not_yet_ported_set_only_names_offenders() -> None:
    """A ported frontend leaves the set: one that no longer compares names is removed."""
    clean = sorted(NOT_YET_PORTED - set(_modules()))
    assert not clean, f"these frontends compare no builtin name any more: remove them from NOT_YET_PORTED: {clean}"


def test_the_check_sees_the_forms_it_forbids() -> None:
    src = (
        "a = name == 'sqrt'\nb = n in ('min', 'max')\nc = s.startswith('atomic_')\n"
        "match k:\n    case 'fence':\n        pass\nd = x == 'hello'\ne = {'sqrt': 1}\n"
    )
    assert [n for _, n in offences(ast.parse(src))] == ["sqrt", "min", "max", "atomic_", "fence"]
