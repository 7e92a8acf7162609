"""No module outside the device table (runtime/devices.py) and the CLI's option parsing (cli/) compares
a device's name: they read the table's rows instead (a row's target, wave width, heap, options,
`gpu_heap`), issue 23 point 2.

Precisely, a comparison counts when one side is a string that names a device of the table and the
other side holds a device's name: a variable `device` (or `home`, `device_name`), an attribute
`.device`, a call of `home(...)` or `device_name(...)`, or a variable assigned from any of these in
the same module. A look-up in a literal dict keyed by device names with such a holder
(`{"cuda": "ptx"}.get(device)`, `{...}[device]`) counts too, and so does `match device:` with a
device name as a case. Restating the table counts: a literal tuple, list, set or dict of two or
more device names, one of them a name that is no backend target ("emulator", "cuda-cpp",
"amdgcn-sim"). Words that merely coincide with device names are other vocabularies and pass: a
backend's target (`target == "cuda"`), a memory scope ("device").
"""

from __future__ import annotations

import ast
from pathlib import Path

from wavegpu.backends import NAMES as TARGETS
from wavegpu.runtime.devices import names

SRC = Path(__file__).resolve().parents[1] / "src" / "wavegpu"

OWNERS = ("runtime/devices.py", "cli/")  # the table itself, and the CLI's option parsing

DEVICES = frozenset(names())
DEVICE_ONLY = DEVICES - set(TARGETS)  # names no backend target shares
HOLDER_VARS = {"device", "home", "device_name"}
HOLDER_ATTRS = {"device"}
HOLDER_CALLS = {"home", "device_name"}


def _strings(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [s for e in node.elts for s in _strings(e)]
    return []


def _is_holder_expr(node: ast.AST, holders: set[str]) -> bool:
    if isinstance(node, ast.Name):
        return node.id in holders
    if isinstance(node, ast.Attribute):
        return node.attr in HOLDER_ATTRS
    if isinstance(node, ast.Call):
        f = node.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
        return name in HOLDER_CALLS
    return False


def _holders(tree: ast.AST) -> set[str]:
    """The conventional holder names and every variable assigned from a holder in the module."""
    names_ = set(HOLDER_VARS)
    changed = True
    while changed:
        changed = False
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and _is_holder_expr(node.value, names_):
                for t in node.targets:
                    if isinstance(t, ast.Name) and t.id not in names_:
                        names_.add(t.id)
                        changed = True
    return names_


def _device_keyed(node: ast.AST) -> bool:
    return isinstance(node, ast.Dict) and any(_strings(k) and _strings(k)[0] in DEVICES for k in node.keys if k)


def problems(tree: ast.AST) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    holders = _holders(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = (node.left, *node.comparators)
            if any(_is_holder_expr(s, holders) for s in sides):
                for s in (s for side in sides for s in _strings(side)):
                    if s in DEVICES:
                        out.append((node.lineno, f"compares a device with the name {s!r}"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            if _device_keyed(node.func.value) and node.args and _is_holder_expr(node.args[0], holders):
                out.append((node.lineno, "looks a device up in a table of device names"))
        elif isinstance(node, ast.Subscript) and _device_keyed(node.value) and _is_holder_expr(node.slice, holders):
            out.append((node.lineno, "looks a device up in a table of device names"))
        elif isinstance(node, ast.Match) and _is_holder_expr(node.subject, holders):
            for case in node.cases:
                for sub in ast.walk(case.pattern):
                    if isinstance(sub, ast.MatchValue) and set(_strings(sub.value)) & DEVICES:
                        out.append((case.pattern.lineno, "matches a device against its name"))
        if isinstance(node, (ast.Tuple, ast.List, ast.Set, ast.Dict)):
            items = node.keys if isinstance(node, ast.Dict) else node.elts
            found = {s for e in items if e is not None for s in _strings(e)} & DEVICES
            if len(found) >= 2 and found & DEVICE_ONLY:
                out.append((node.lineno, f"restates the device table ({', '.join(sorted(found))})"))
    return out


def test_no_module_outside_the_table_compares_device_names() -> None:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel.startswith(OWNERS):
            continue
        for line, what in problems(ast.parse(path.read_text(), rel)):
            found.append(f"{rel}:{line}: {what}")
    assert not found, "device names compared outside runtime/devices.py:\n" + "\n".join(found)


# The forms the runtime used before the table (issue 23 counted 18 of them): each is found.
BEFORE = '''
DEVICES = ("emulator", "opencl", "sycl", "cuda", "cuda-cpp")
def launch(device, mma, self, k):
    if mma != "exact" and device != "cuda":
        pass
    wave_width = 64 if device == "amdgcn-sim" else 32
    if device not in ("opencl", "sycl", "cuda", "cuda-cpp", "amdgcn-sim"):
        pass
    target = {"cuda": "ptx", "cuda-cpp": "cuda"}.get(device, device)
    if home(device) == "cuda":
        pass
    if self.device != "cuda":
        pass
    key = home(device)
    if key == "cuda":
        pass
    match device:
        case "emulator":
            pass
'''

# Other vocabularies that coincide with device names: none is found.
OTHER = '''
TARGETS = {"opencl": 1, "cuda": 2, "hip": 3, "sycl": 4, "metal": 5}
def render(target, scope, spec):
    if target == "cuda":
        pass
    s = "work_group" if scope in ("wave", "workgroup") else "device"
    if spec.name == "opencl":
        pass
'''


def test_the_check_finds_the_old_forms_and_passes_other_vocabularies() -> None:
    got = problems(ast.parse(BEFORE))
    assert sorted({line for line, _ in got}) == [2, 4, 6, 7, 9, 10, 12, 15, 18], got
    assert problems(ast.parse(OTHER)) == []
