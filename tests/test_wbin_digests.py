"""The corpus compiles to the same .wbin bytes as recorded: a refactor that is meant to change no
output proves it here. Every kernel file of the corpus (the examples in all four languages and in
assembly, the test kernels the other tests compile from files and from `@wg.kernel` functions) is
compiled in this process, without the compile cache, at -O0 and at the default level; the SHA-256
of each program's bytes and of each of its kernels alone is compared with tests/data/wbin_digests.json.

A deliberate change of output is recorded with `pytest tests/test_wbin_digests.py
--update-wbin-digests`; the diff of the manifest then shows which kernels changed, for review."""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest

import wavegpu as wg

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = Path(__file__).resolve().parent / "data" / "wbin_digests.json"
LEVELS = (0, inspect.signature(wg.compile).parameters["opt"].default)  # -O0 and the default level

# Kernel source files, compiled from their paths.
SOURCE_GLOBS = (
    "examples/kernels/*.py",
    "examples/sgemm_blocked/*.py",
    "examples/languages/*/*.*",
    "tests/compiler/languages/compat/*.*",
    "tests/compiler/frontends/rust/*.rs",
    "tests/compiler/frontends/cpp/*.cpp",
)
# Assembly: the examples and the assembler's test programs.
ASM_GLOBS = ("examples/*.wave", "examples/*/*.wave", "tests/data/*.wave", "tests/data/asm/*.wave")
# Modules of `@wg.kernel` functions that tests import and call: compiled function by function.
KERNEL_MODULES = ("tests/compiler/kernels.py", "tests/compiler/spill_kernels.py", "tests/backends/oob_kernels.py")


def _files(globs: tuple[str, ...]) -> list[str]:
    return sorted({p.relative_to(ROOT).as_posix() for g in globs for p in ROOT.glob(g)})


def _relative(prog: wg.Program) -> wg.Program:
    """The program with its line table's paths under the root made relative to it: the digests do
    not depend on where the checkout lies."""
    prefix = str(ROOT) + os.sep

    def rel(loc):  # type: ignore[no-untyped-def]
        if loc is None or not loc.file.startswith(prefix):
            return loc
        return replace(loc, file=Path(loc.file[len(prefix) :]).as_posix())

    kernels = tuple(k if k.lines is None else replace(k, lines=tuple(rel(x) for x in k.lines)) for k in prog.kernels)
    return wg.Program(kernels)


def _kernel_functions(module: str) -> list[tuple[str, wg.KernelFunction]]:
    spec = importlib.util.spec_from_file_location(f"_wbin_digests_{Path(module).stem}", ROOT / module)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    own = [(n, v) for n, v in vars(mod).items() if isinstance(v, wg.KernelFunction)]
    return sorted((f"{module}::{n}", v) for n, v in own if v.python.__module__ == mod.__name__)


def corpus() -> Iterator[tuple[str, Callable[[int], wg.Program]]]:
    """(name, compile at a level) for every program of the corpus; assembly has no levels."""
    for f in _files(ASM_GLOBS):
        yield f, lambda _opt, f=f: wg.assemble((ROOT / f).read_text(), filename=f)
    for f in _files(SOURCE_GLOBS):
        yield f, lambda opt, f=f: _relative(wg.compile(ROOT / f, opt=opt))
    for module in KERNEL_MODULES:
        for name, fn in _kernel_functions(module):
            yield name, lambda opt, fn=fn: _relative(wg.compile(fn, opt=opt))


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def digests() -> dict[str, dict[str, object]]:
    """name@-On -> {"wbin": digest of the program's bytes, "kernels": {kernel: digest of a program
    of that kernel alone}}."""
    out: dict[str, dict[str, object]] = {}
    for name, build in corpus():
        levels = (None,) if name.endswith(".wave") else LEVELS
        for opt in levels:
            prog = build(opt if opt is not None else 0)
            files = {x.file for k in prog.kernels for x in k.lines or () if x is not None}
            assert not any(os.path.isabs(f) for f in files), f"{name}: the line table names {files}"
            key = name if opt is None else f"{name}@-O{opt}"
            kernels = {k.name: _sha(wg.Program((k,)).to_bytes()) for k in prog.kernels}
            out[key] = {"wbin": _sha(prog.to_bytes()), "kernels": kernels}
    return out


def differences(want: dict[str, dict[str, object]], have: dict[str, dict[str, object]]) -> list[str]:
    """One line per program that is new, gone or changed, naming the kernels whose bytes changed."""
    lines = [f"{k}: not in the manifest" for k in sorted(have.keys() - want.keys())]
    lines += [f"{k}: in the manifest but no longer in the corpus" for k in sorted(want.keys() - have.keys())]
    for key in sorted(want.keys() & have.keys()):
        w, h = want[key], have[key]
        if w == h:
            continue
        wk, hk = w["kernels"], h["kernels"]
        assert isinstance(wk, dict) and isinstance(hk, dict)
        changed = [n for n in hk if n in wk and wk[n] != hk[n]]
        parts = [f"kernel {n!r} changed" for n in changed]
        parts += [f"kernel {n!r} is new" for n in hk if n not in wk]
        parts += [f"kernel {n!r} is gone" for n in wk if n not in hk]
        if not parts:  # (the manifest keeps kernels sorted by name: their order is in the program's digest)
            parts.append("the program's bytes changed (its container, or the order of its kernels)")
        lines.append(f"{key}: {'; '.join(parts)}")
    return lines


def test_wbin_bytes_match_the_manifest(request: pytest.FixtureRequest) -> None:
    have = digests()
    if request.config.getoption("--update-wbin-digests"):
        MANIFEST.write_text(json.dumps(have, indent=1, sort_keys=True) + "\n")
    assert MANIFEST.exists(), f"{MANIFEST.name} is missing; run pytest {__file__} --update-wbin-digests"
    want = json.loads(MANIFEST.read_text())
    diff = differences(want, have)
    assert not diff, (
        "compiled .wbin bytes differ from tests/data/wbin_digests.json (compare `wave dis` of a kernel before and "
        "after; if the change is meant, rerun with --update-wbin-digests and review the diff):\n  " + "\n  ".join(diff)
    )


def test_the_corpus_covers_every_language_and_both_routes() -> None:
    """The globs still find what they are meant to (a moved folder would otherwise shrink the check)."""
    names = [n for n, _ in corpus()]
    for suffix in (".wave", ".py", ".rs", ".cpp", ".ts"):
        assert sum(n.endswith(suffix) for n in names) >= 3, suffix
    assert sum("::" in n for n in names) >= 10  # @wg.kernel functions
    assert len(names) == len(set(names))


def test_differences_name_the_kernel() -> None:
    want: dict[str, dict[str, object]] = {
        "a.rs@-O0": {"wbin": "1", "kernels": {"k": "x", "m": "y"}},
        "b.rs@-O0": {"wbin": "2", "kernels": {"k": "z"}},
    }
    have: dict[str, dict[str, object]] = {
        "a.rs@-O0": {"wbin": "3", "kernels": {"k": "x", "m": "w"}},
        "c.rs@-O0": {"wbin": "4", "kernels": {}},
    }
    assert differences(want, have) == [
        "c.rs@-O0: not in the manifest",
        "b.rs@-O0: in the manifest but no longer in the corpus",
        "a.rs@-O0: kernel 'm' changed",
    ]
    have["a.rs@-O0"] = {"wbin": "5", "kernels": {"k": "x", "m": "y"}}
    assert differences(want, have)[-1] == (
        "a.rs@-O0: the program's bytes changed (its container, or the order of its kernels)"
    )
    have["a.rs@-O0"] = {"wbin": "7", "kernels": {"n": "v", "k": "x"}}
    assert differences(want, have)[-1] == "a.rs@-O0: kernel 'n' is new; kernel 'm' is gone"
    assert differences(want, want) == []
