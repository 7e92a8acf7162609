"""DESIGN section 6: imports point downward only; backends and the compiler never meet."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "wavegpu"

LAYERS = {
    "errors": 0,
    "paths": 0,
    "isa": 1,
    "encoding": 2,
    "wbin": 3,
    "asm": 4,
    "dis": 4,
    "emulator": 5,
    "codegen": 5,
    "compiler": 6,
    "backends": 6,
    "runtime": 7,
    "cli": 8,
}
FORBIDDEN_PAIRS = {("compiler", "backends"), ("backends", "compiler")}


def part_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "wavegpu" or len(parts) < 2:
        return None
    return parts[1]


def imports(path: Path) -> list[tuple[str, int]]:
    rel = path.relative_to(SRC.parent).with_suffix("")
    pkg = list(rel.parts[:-1])
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg[: len(pkg) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.append((mod, node.lineno))
    return out


def test_no_upward_imports() -> None:
    bad = []
    for path in SRC.rglob("*.py"):
        rel = path.relative_to(SRC)
        me = rel.parts[0].removesuffix(".py")
        if me == "__init__" or me == "__main__":
            continue  # the package facade re-exports every layer
        assert me in LAYERS, f"{rel}: module not placed in a layer of DESIGN section 6"
        for mod, line in imports(path):
            other = part_of(mod)
            if other is None or other == me or other == "__init__":
                continue
            if other not in LAYERS:
                continue
            if LAYERS[other] > LAYERS[me] or (me, other) in FORBIDDEN_PAIRS:
                bad.append(f"{rel}:{line}: {me} imports {mod}")
    assert not bad, "\n".join(bad)


# codegen/ is the neutral floor under both the compiler and the backends: plain analyses over
# plain data, so it needs nothing above the ISA (and the emulator, on its floor, is no part of it).
CODEGEN_MAY_IMPORT = {"errors", "isa", "codegen"}


def test_codegen_imports_only_errors_and_isa() -> None:
    bad = []
    for path in sorted((SRC / "codegen").rglob("*.py")):
        for mod, line in imports(path):
            other = part_of(mod)
            if other is not None and other not in CODEGEN_MAY_IMPORT:
                bad.append(f"codegen/{path.name}:{line}: imports {mod}")
    assert not bad, "\n".join(bad)


def test_checker_sees_relative_imports(tmp_path: Path) -> None:
    # the checker must resolve `from ..x import y` to the right layer
    p = SRC / "isa" / "table.py"
    mods = [m for m, _ in imports(p)]
    assert "wavegpu.isa.types" in mods


# Inside isa/: the vocabulary and the plain facts first, the table on them, then what reads rows.
ISA_LAYERS = {
    "types": 0,
    "vocabulary": 0,
    "registers": 0,
    "capabilities": 1,
    "table": 1,
    "instruction": 2,
    "semantics": 2,
    "structure": 3,
}


def test_isa_modules_import_downward() -> None:
    bad = []
    for path in sorted((SRC / "isa").glob("*.py")):
        me = path.stem
        if me == "__init__":
            continue
        assert me in ISA_LAYERS, f"isa/{path.name}: not placed in ISA_LAYERS"
        for mod, line in imports(path):
            parts = mod.split(".")
            if parts[:2] != ["wavegpu", "isa"] or len(parts) < 3:
                continue
            if ISA_LAYERS[parts[2]] >= ISA_LAYERS[me] and parts[2] != me:
                bad.append(f"isa/{path.name}:{line}: {me} imports {mod}")
    assert not bad, "\n".join(bad)


# Inside backends/: each backend imports the shared floor (base, lift), never another backend;
# the package facade (backends/__init__.py) is the registry and imports them all.
BACKEND_SHARED = {"base", "lift"}


def test_backends_import_only_the_shared_floor() -> None:
    root = SRC / "backends"
    bad = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if rel.parts == ("__init__.py",):
            continue
        me = rel.parts[0].removesuffix(".py")
        for mod, line in imports(path):
            parts = mod.split(".")
            if parts[:2] != ["wavegpu", "backends"] or len(parts) < 3:
                continue
            if parts[2] != me and parts[2] not in BACKEND_SHARED:
                bad.append(f"backends/{rel}:{line}: {me} imports {mod}")
    assert not bad, "\n".join(bad)
