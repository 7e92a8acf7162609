"""The compiled engine's generated code: no local it can make shadows a name the module sees
(a float local `f32` once hid the `f32()` helper, `r32` and `f64` others), checked on the
generated modules of the corpus and of long kernels, and against every helper module."""

from __future__ import annotations

import ast
import builtins
from pathlib import Path

import pytest

import wavegpu as wg
from corpus import corpus_files
from wavegpu.emulator.compiled import codegen
from wavegpu.emulator.compiled.codegen import Shape, generate, is_local, unsupported_reason

pytest.importorskip("numba")

EX = Path(__file__).resolve().parents[3] / "examples"


def _kernels() -> list[wg.Kernel]:
    ks = [k for p in corpus_files() for k in wg.assemble(p.read_text(), p.name).kernels]
    ks += wg.assemble((EX / "sgemm_blocked" / "sgemm_blocked.wave").read_text(), "sgemm_blocked.wave").kernels
    return [k for k in ks if unsupported_reason(k) is None]


def _module_globals(tree: ast.Module) -> set[str]:
    """Names bound at a module's top level: imports, functions, assignments."""
    out: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.Assign):
            out.update(n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return out


def _function_locals(tree: ast.Module) -> set[str]:
    """Parameters and assigned names of every function of a module."""
    out: set[str] = set()
    for fn in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
        out.update(a.arg for a in fn.args.args)
        out.update(n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
    return out


def _helper_globals() -> set[str]:
    """Everything a generated module could import: the helper modules' top-level names and the
    shared row module's functions."""
    from wavegpu.emulator.compiled import control, intrinsics, opsgen, scalar

    names = {n for m in (control, intrinsics, scalar) for n in vars(m) if not n.startswith("__")}
    return names | _module_globals(ast.parse(opsgen.module()))


def test_the_name_check_sees_the_old_collision() -> None:
    """The scheme's check would have caught the defect: `f32`, `r32`, `f64` as locals."""
    for name in ("f32", "r32", "f64"):
        assert name in _helper_globals()
    assert not any(is_local(n) for n in ("f32", "r32", "f64", "c32", "s32", "c64"))
    assert all(is_local(n) for n in ("f_32", "r_32", "f_64", "x_32", "w_255", "p_7"))


def test_no_local_shadows_a_global() -> None:
    """Every local of every generated module is one `is_local` admits, and no global the module
    sees (its imports, its functions, any helper module's names, the builtins) is one."""
    seen_locals: set[str] = set()
    seen_globals = _helper_globals() | set(dir(builtins))
    outlined = 0
    for k in _kernels():
        for shape in (Shape(32, (64, 1, 1)), Shape(8, (16, 4, 1))):
            src = generate(k, shape)
            tree = ast.parse(src)
            outlined += "def lanes_" in src
            locs = _function_locals(tree)
            assert all(is_local(n) for n in locs), (k.name, sorted(n for n in locs if not is_local(n)))
            seen_locals |= locs
            seen_globals |= _module_globals(tree)
    assert outlined, "no kernel was outlined (a driver and lane functions)"
    assert not sorted(n for n in seen_globals if is_local(n))
    # the check is not vacuous: register locals of high numbers and the fixed ones were made
    assert {"r_32", "f_32"} & seen_locals and len(seen_locals & codegen.OTHER_LOCALS) > 20


def test_the_rows_use_no_local_names() -> None:
    """A row expression names only helpers and its operands (`{0}`...), never a local's form."""
    from wavegpu.emulator.compiled.rows import EXPR

    for key, expr in EXPR.items():
        names = {n.id for n in ast.walk(ast.parse(expr.format("a0", "a1", "a2", "a3"))) if isinstance(n, ast.Name)}
        assert not {n for n in names if is_local(n)}, key


def test_long_loop_bodies_run_in_lockstep() -> None:
    """A loop body longer than LANE_LOOP_MAX (unrolled loads and arithmetic, no store) is not one
    lane-by-lane function (numba's SSA lookups would walk all its blocks, as in SEGMENT_MAX's
    RecursionError); a short one still is."""
    from wavegpu.emulator.compiled.codegen import LANE_LOOP_MAX

    def kernel(n: int) -> wg.Kernel:
        body = []
        for i in range(n // 2):
            body += [f"    ld.global.b32 r3, [r0+{4 * (i % 64)}]", "    add.u32 r2, r2, r3"]
        src = "\n".join(
            [".kernel k", ".param a, buffer, u32", ".workgroup_size 32, 1, 1", "    mov.b32 r1, 0",
             "    mov.b32 r2, 0", "    loop", *body, "    add.u32 r1, r1, 1", "    setp.ge.u32 p0, r1, 4",
             "    break p0", "    endloop", "    st.global.b32 [r0], r2", "    ret"]
        )  # fmt: skip
        return wg.assemble(src).kernels[0]

    assert "it = 0" in generate(kernel(LANE_LOOP_MAX - 8), Shape(32, (32, 1, 1)))
    assert "it = 0" not in generate(kernel(LANE_LOOP_MAX + 8), Shape(32, (32, 1, 1)))
