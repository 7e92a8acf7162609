"""The interfaces of issue 13 for every registered non-Python frontend: `wave compile k.rs -o k.wbin`,
`wave run k.rs --grid ... name=file.npy ...`, `wg.compile(path or text, lang=...)` and
`wg.load_kernels(path or text)`, each on the corpus's vector_add of that language, plus a syntax
error through the command line (file:line:col, the source line and a caret, no traceback).

A language whose frontend is not registered yet is skipped with the reason; the C++ and
TypeScript frontends add their broken source to BROKEN.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from languages.cases import ROOT, SUFFIX

import wavegpu as wg
from wavegpu.cli import main
from wavegpu.compiler.frontends import FRONTENDS

LANGS = tuple(lang for lang in SUFFIX if lang != "python")

# a source with one syntax error per language, and where the error is (line, column)
BROKEN: dict[str, tuple[str, tuple[int, int]]] = {
    "rust": ("#[wave::kernel]\nfn k(a: &mut [f32]) {\n    let x = 1 +;\n}\n", (3, 16)),
    "cpp": ("[[wave::kernel]] void k(float* a) {\n    float x = 1 +;\n}\n", (2, 17)),
    "typescript": ("/** @kernel */\nfunction k(a: Float32Array) {\n    const x = 1 +;\n}\n", (3, 17)),
}

N = 1000


def _source(lang: str) -> Path:
    if lang not in FRONTENDS:
        pytest.fail(f"no {lang} frontend registered: every language of LANGUAGES has one")
    return ROOT / lang / f"vector_add{SUFFIX[lang]}"


def _inputs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    return rng.uniform(-4, 4, N).astype(np.float32), rng.uniform(-4, 4, N).astype(np.float32)


@pytest.mark.parametrize("lang", LANGS)
def test_wave_compile_writes_a_wbin(lang: str, tmp_path: Path) -> None:
    src = _source(lang)
    out = tmp_path / "k.wbin"
    r = CliRunner().invoke(main, ["compile", str(src), "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert "kernel vector_add" in r.output
    prog = wg.load(str(out))
    (k,) = prog.kernels
    assert k.name == "vector_add"
    assert [p.name for p in k.params][:4] == ["a", "b", "out", "n"]
    assert prog.to_bytes() == wg.compile(str(src)).to_bytes()  # the same binary as wg.compile


@pytest.mark.parametrize("lang", LANGS)
def test_wave_run_reads_and_writes_npy_files(lang: str, tmp_path: Path) -> None:
    src = _source(lang)
    a, b = _inputs()
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    out = tmp_path / "out.npy"
    args = ["run", str(src), "--grid", "4", f"a={tmp_path / 'a.npy'}", f"b={tmp_path / 'b.npy'}"]
    args += [f"out=zeros:{N}", f"n={N - 3}", "--out", f"out={out}"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    got = np.load(out)
    want = np.r_[a[: N - 3] + b[: N - 3], np.zeros(3, np.float32)]
    assert got.dtype == np.float32 and np.array_equal(got, want)


@pytest.mark.parametrize("lang", LANGS)
def test_wg_compile_by_path_and_by_text(lang: str) -> None:
    src = _source(lang)
    by_path = wg.compile(str(src))
    by_text = wg.compile(src.read_text(), lang=lang)
    assert [k.name for k in by_path.kernels] == ["vector_add"]
    assert by_path.kernels[0].instructions == by_text.kernels[0].instructions  # the file name aside, the same


@pytest.mark.parametrize("lang", LANGS)
def test_load_kernels_calls_with_numpy_arrays(lang: str) -> None:
    src = _source(lang)
    a, b = _inputs()
    for ks in (wg.load_kernels(str(src)), wg.load_kernels(src), wg.load_kernels(src.read_text(), lang=lang)):
        out = np.zeros(N, np.float32)
        ks.vector_add(a, b, out, N, grid=4)
        assert np.array_equal(out, a + b)
        out2 = np.zeros(N, np.float32)
        ks["vector_add"](a=a, b=b, out=out2, n=10, grid=4)  # by keyword, as the source names them
        assert np.array_equal(out2[:10], (a + b)[:10]) and not out2[10:].any()


@pytest.mark.parametrize("lang", LANGS)
def test_a_syntax_error_on_the_command_line(lang: str, tmp_path: Path) -> None:
    if lang not in FRONTENDS:
        pytest.fail(f"no {lang} frontend registered: every language of LANGUAGES has one")
    if lang not in BROKEN:
        pytest.skip(f"no broken {lang} source listed")
    text, (line, col) = BROKEN[lang]
    bad = tmp_path / f"bad{SUFFIX[lang]}"
    bad.write_text(text)
    r = CliRunner().invoke(main, ["compile", str(bad), "-o", str(tmp_path / "bad.wbin")])
    assert r.exit_code != 0
    assert ("Traceback" not in r.output and r.exception is None) or isinstance(r.exception, SystemExit)
    assert f"{bad}:{line}:{col}: error: syntax error" in r.output
    lines = r.output.splitlines()
    at = next(i for i, x in enumerate(lines) if f":{line}:{col}: error" in x)
    assert lines[at + 1].strip() == text.splitlines()[line - 1].strip()
    caret = lines[at + 2]
    shown = lines[at + 1]
    assert caret.strip().startswith("^")
    offset = (
        len(shown)
        - len(shown.lstrip())
        - (len(text.splitlines()[line - 1]) - len(text.splitlines()[line - 1].lstrip()))
    )
    assert caret.index("^") - offset == col - 1
    assert not (tmp_path / "bad.wbin").exists()
