"""rustc accepts our Rust kernels: every example and test kernel type-checks against the `wave`
declaration crate (src/wavegpu/compiler/frontends/support/rust), offline, with no dependencies;
and what our frontend refuses for breaking Rust's rules, rustc refuses too.

The Rust toolchain's compat vector_add.rs (tests/compiler/languages/compat) is exempt: it calls
`thread_id()` without an axis and indexes slices with a u32, which rustc rejects; our frontend
accepts it unchanged (COMPAT.md), and the last test here records that rustc does not.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from languages.cases import ROOT

import wavegpu as wg
from wavegpu.compiler import builtins
from wavegpu.compiler.frontends import treesitter

RUSTC = shutil.which("rustc")
CARGO = shutil.which("cargo")
SUPPORT = Path(wg.__file__).parent / "compiler" / "frontends" / "support" / "rust"
HERE = Path(__file__).parent
KERNELS = sorted((ROOT / "rust").glob("*.rs")) + sorted((HERE / "rust").glob("*.rs"))
COMPAT = HERE.parent / "languages" / "compat" / "vector_add.rs"

# kernels that break Rust's own rules: rustc and our frontend both refuse them
BOTH_REFUSE = {
    "i32 + u32": "let a: i32 = 1; let b: u32 = 2; o[0] = (a + b) as f32;",
    "int into f32": "let a: i32 = 1; o[0] = a;",
    "int literal in f32 context": "o[0] = o[1] * 2;",
    "immutable variable": "let x = 1.0; x = 2.0; o[0] = x;",
    "store into &[f32]": "r[0] = 1.0;",
    "negated u32": "let n: u32 = 3; o[0] = (-n) as f32;",
    "f32 as bool": "let c = o[0] as bool; if c { o[1] = 0.0; }",
    "u32 vs i32 compare": "let a: i32 = 1; if a < global_id(0) { o[0] = 1.0; }",
    "f64 literal into f16": "h[0] = 1.0;",
    "shift overflow": "let x: u32 = 1; o[0] = (x << 40) as f32;",
    "u32 step": "let s: u32 = 2; for i in (0..8).step_by(s) { o[i] = 1.0; }",
    "bool as f32": "o[0] = (o[1] > 0.0) as f32;",
    "f32 literal out of range": "o[0] = 1e39;",
    "i32 atomic index": "let i: i32 = 0; atomic_add(o, i, 1.0);",
    "u32 slice index": "let i = global_id(0); o[i] = r[i];",  # E0277; the compat file alone is exempt
    "u32 from f32": "o[0] = u32::from(r[0]) as f32;",
    "method on an ambiguous literal": "o[0] = 2.0.sqrt();",
}


def _rustc(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    assert RUSTC is not None
    return subprocess.run([RUSTC, "--edition", "2021", *args], capture_output=True, text=True, cwd=cwd, timeout=120)


@pytest.fixture(scope="module")
def wave_crate(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built wave crate (and its attribute macro) in a temporary directory."""
    if RUSTC is None:
        pytest.skip("rustc is not installed (https://rustup.rs): the Rust kernels are not checked by rustc")
    out = tmp_path_factory.mktemp("wave_crate")
    r = _rustc(["--crate-type", "proc-macro", "--crate-name", "wave_macros",
                str(SUPPORT / "wave-macros" / "src" / "lib.rs"), "--out-dir", str(out)], out)  # fmt: skip
    assert r.returncode == 0, r.stderr
    (macros,) = out.glob("libwave_macros.*")
    r = _rustc(["--crate-type", "lib", "--crate-name", "wave", str(SUPPORT / "wave" / "src" / "lib.rs"),
                "--extern", f"wave_macros={macros}", "-L", str(out), "--out-dir", str(out)], out)  # fmt: skip
    assert r.returncode == 0, r.stderr
    return out


def _check(path: Path, crate: Path) -> subprocess.CompletedProcess[str]:
    """rustc's check of one kernel file against the wave crate: analysis and MIR, whose lints (arithmetic_overflow) a full build also runs; no code generated."""
    return _rustc(["--crate-type", "lib", "--emit=mir", "--extern", f"wave={crate / 'libwave.rlib'}",
                   "-L", str(crate), "--out-dir", str(crate / "out"), str(path)], crate)  # fmt: skip


def test_there_are_kernels_to_check() -> None:
    names = {p.stem for p in KERNELS}
    assert len(KERNELS) >= 13 and {"vector_add", "sgemm_tiled", "every_builtin"} <= names


@pytest.mark.parametrize("path", KERNELS, ids=[f"{p.parent.name}/{p.name}" for p in KERNELS])
def test_rustc_accepts_every_kernel(path: Path, wave_crate: Path) -> None:
    r = _check(path, wave_crate)
    assert r.returncode == 0, f"rustc rejects {path}:\n{r.stderr}"
    assert wg.compile(str(path)).kernels  # and so does our frontend


@pytest.mark.parametrize("case", sorted(BOTH_REFUSE))
def test_rustc_and_our_frontend_refuse_the_same_kernels(case: str, wave_crate: Path, tmp_path: Path) -> None:
    body = BOTH_REFUSE[case]
    src = f"use wave::*;\n\n#[wave::kernel]\npub fn k(r: &[f32], o: &mut [f32], h: &mut [f16]) {{\n    {body}\n}}\n"
    path = tmp_path / "k.rs"
    path.write_text(src)
    with pytest.raises(wg.CompileError):
        wg.compile(str(path))
    r = _check(path, wave_crate)
    assert r.returncode != 0, f"rustc accepts {case!r}, which our frontend refuses"


def test_the_compat_kernel_is_exempt_because_rustc_rejects_it(wave_crate: Path, tmp_path: Path) -> None:
    text = COMPAT.read_text()
    path = tmp_path / "vector_add.rs"
    path.write_text("use wave::*;\n" + text)  # even with the builtins in scope
    r = _check(path, wave_crate)
    assert r.returncode != 0
    assert "cannot be indexed by `u32`" in r.stderr or "argument" in r.stderr


def test_cargo_check_offline_accepts_the_crate(tmp_path: Path) -> None:
    if CARGO is None:
        pytest.skip("cargo is not installed (https://rustup.rs)")
    env = {**os.environ, "CARGO_TARGET_DIR": str(tmp_path / "target"), "CARGO_NET_OFFLINE": "true"}
    r = subprocess.run(
        [CARGO, "check", "--offline", "--locked", "--quiet"],
        cwd=SUPPORT,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr


def test_the_crate_declares_every_builtin() -> None:
    src, root = treesitter.parse("rust", (SUPPORT / "wave" / "src" / "lib.rs").read_text(), "lib.rs")
    declared = set()
    for n in treesitter.walk(root):
        if n.type == "function_item":
            declared.add(src.node_text(n.child_by_field_name("name")))
        if n.type == "token_tree":  # the names listed to the declaring macros
            declared |= {src.node_text(c) for c in n.named_children if c.type == "identifier"}
    # every row of the table but the casts (`x as f32`) and per-thread arrays (`[0.0f32; N]`)
    wanted = {b for b in builtins.ROWS if b not in builtins.CASTS and b != "private_array"}
    assert wanted - declared == set()


DOC = HERE.parents[2] / "docs" / "compiler.md"
DOC_BLOCKS = re.findall(r"```rust\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


@pytest.mark.parametrize("block", DOC_BLOCKS, ids=[f"block{i}" for i in range(len(DOC_BLOCKS))])
def test_the_rust_examples_of_the_docs_compile_with_both(block: str, wave_crate: Path, tmp_path: Path) -> None:
    assert wg.compile(block, lang="rust").kernels
    path = tmp_path / "doc.rs"
    path.write_text(block)
    r = _check(path, wave_crate)
    assert r.returncode == 0, r.stderr


def test_rustc_agrees_with_the_accumulator_fix_it(wave_crate: Path, tmp_path: Path) -> None:
    """The integer accumulator of floats (test_fixits): rustc refuses it as our frontend does, and
    accepts the fixed kernel (`let mut s = 0.0;`), which our frontend compiles too."""
    from frontends.test_fixits import ACCUMULATORS

    src, _, (old, new) = ACCUMULATORS["rust"]
    for text, ok in ((src, False), (src.replace(old, new), True)):
        path = tmp_path / "k.rs"
        path.write_text(text)
        assert (_check(path, wave_crate).returncode == 0) is ok, text


POINTER_REFUSALS = ["*y = *x;", "unsafe { *x = 1.0; }", "unsafe { *y = x[0]; }", "unsafe { *y.add(1u32) = 1.0; }"]


@pytest.mark.parametrize("body", POINTER_REFUSALS)
def test_rustc_and_our_frontend_refuse_the_same_pointer_code(body: str, wave_crate: Path, tmp_path: Path) -> None:
    src = f"use wave::*;\n\n#[wave::kernel]\npub fn k(x: *const f32, y: *mut f32) {{\n    {body}\n}}\n"
    path = tmp_path / "k.rs"
    path.write_text(src)
    with pytest.raises(wg.CompileError):
        wg.compile(str(path))
    assert _check(path, wave_crate).returncode != 0, f"rustc accepts {body!r}, which our frontend refuses"


def _array_refusals() -> list[str]:
    from frontends.test_rust_array_helpers import REFUSED

    return sorted(REFUSED)


@pytest.mark.parametrize("body", _array_refusals())
def test_rustc_refuses_the_wrong_array_arguments_our_frontend_refuses(
    body: str, wave_crate: Path, tmp_path: Path
) -> None:
    """Per-thread arrays given to helpers of another shape, element type or mutability, unborrowed,
    or written through `&` (test_rust_array_helpers.py): rustc refuses each as well."""
    from frontends.test_rust_array_helpers import refused_kernel

    path = tmp_path / "k.rs"
    path.write_text(refused_kernel(body))
    with pytest.raises(wg.CompileError):
        wg.compile(str(path))
    r = _check(path, wave_crate)
    assert r.returncode != 0 and "error[E0" in r.stderr, f"rustc accepts {body!r}, which our frontend refuses"


def _iterator_refusals() -> list[str]:
    from frontends.test_rust_iterators import NEEDS_TYPE, REFUSED

    return [*NEEDS_TYPE, *sorted(REFUSED)]


@pytest.mark.parametrize("body", _iterator_refusals())
def test_rustc_refuses_the_iterator_chains_our_frontend_refuses(body: str, wave_crate: Path, tmp_path: Path) -> None:
    """A sum whose type rustc cannot infer, a sum of pairs or of another type, a zip bound to three
    names (test_rust_iterators.py): rustc refuses each as well."""
    from frontends.test_rust_iterators import kernel

    path = tmp_path / "k.rs"
    path.write_text(kernel(body))
    with pytest.raises(wg.CompileError):
        wg.compile(str(path))
    r = _check(path, wave_crate)
    assert r.returncode != 0 and "error[E0" in r.stderr, f"rustc accepts {body!r}, which our frontend refuses"
