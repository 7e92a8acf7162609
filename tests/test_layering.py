"""DESIGN section 6: imports point downward only; backends and the compiler never meet."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "wavegpu"

LAYERS = {
    "errors": 0,
    "paths": 0,
    "version": 0,
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


def imports(path: Path, src: Path = SRC, typing_too: bool = True) -> list[tuple[str, int]]:
    """(module, line) of every import in the file (with typing_too=False, not those under `if
    TYPE_CHECKING:`). `from <package> import name` names the submodule `<package>.name` where
    there is one; an import of the top package itself is "wavegpu" (its facade, see
    test_no_module_imports_the_package_facade)."""
    rel = path.relative_to(src.parent).with_suffix("")
    pkg = list(rel.parts[:-1])
    out = []
    tree = ast.parse(path.read_text())
    typing_only = set()
    if not typing_too:
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                typing_only |= {id(n) for n in ast.walk(node)}
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg[: len(pkg) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            folder = src.parent.joinpath(*mod.split("."))
            subs = [a.name for a in node.names if (folder / a.name).is_dir() or (folder / f"{a.name}.py").is_file()]
            out += [(f"{mod}.{name}", node.lineno) for name in subs]
            if len(subs) < len(node.names):
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


# Modules written in the kernel language, as its users write it (`import wavegpu as wg`,
# `@wg.kernel`): the Python frontend reads their source, so they import the facade on purpose.
KERNEL_SOURCES = {"runtime/canary_check.py"}


def test_no_module_imports_the_package_facade() -> None:
    """The facade (wavegpu/__init__.py) re-exports every layer, so a module importing a name from
    it (`from ... import __version__`, `import wavegpu`) imports upward whatever its layer."""
    bad = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel in ("__init__.py", "__main__.py") or rel in KERNEL_SOURCES:
            continue
        bad += [f"{rel}:{line}: imports the package facade" for mod, line in imports(path) if mod == "wavegpu"]
    assert not bad, "\n".join(bad)
    assert all((SRC / k).is_file() for k in KERNEL_SOURCES)


def test_checker_sees_facade_imports(tmp_path: Path) -> None:
    src = tmp_path / "wavegpu"
    (src / "emulator").mkdir(parents=True)
    (src / "isa").mkdir()
    (src / "errors.py").write_text("")
    cases = {
        "from .. import __version__": ["wavegpu"],
        "from .. import isa": ["wavegpu.isa"],
        "from .. import errors, __version__": ["wavegpu.errors", "wavegpu"],
        "import wavegpu as wg": ["wavegpu"],
        "from ..isa import table": ["wavegpu.isa"],
        "from . import state": ["wavegpu.emulator"],
    }
    f = src / "emulator" / "m.py"
    for text, want in cases.items():
        f.write_text(text + "\n")
        assert [m for m, _ in imports(f, src)] == want, text


# Modules that import each other (one of them in a function), each a known debt: the list only
# shrinks. Program.to_bytes/from_bytes are the public face of the wbin writer and reader.
MUTUAL = {
    ("runtime/canaries.py", "runtime/canary_check.py"),  # was device_arrays.py <-> canary_check.py
    ("wbin/format.py", "wbin/program.py"),
}


def _module_file(mod: str) -> str | None:
    path = SRC.parent.joinpath(*mod.split("."))
    if path.with_suffix(".py").is_file():
        return path.with_suffix(".py").relative_to(SRC).as_posix()
    return None  # a package (its facade re-exports its modules) or outside wavegpu


def test_no_two_modules_import_each_other() -> None:
    """Two modules that import each other have no order to be read or tested in (the AMDGCN
    selector and its row rules did, through their shared operand helpers; operands.py is now
    below both). Imports for type checking only do not count."""
    graph: dict[str, set[str]] = {}
    for path in SRC.rglob("*.py"):
        rel = path.relative_to(SRC).as_posix()
        graph[rel] = {f for m, _ in imports(path, typing_too=False) if (f := _module_file(m)) and f != rel}
    pairs = {(a, b) for a, deps in graph.items() for b in deps if a < b and a in graph.get(b, ())}
    assert pairs <= MUTUAL, sorted(pairs - MUTUAL)
    assert pairs == MUTUAL, f"no longer mutual, take them off MUTUAL: {sorted(MUTUAL - pairs)}"


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
