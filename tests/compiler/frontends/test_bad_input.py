"""Bad input the frontends and `wg.compile` refuse at its place (issue 28.5): names defined twice
in all four languages, builtin calls that do not fit their row of the table, a path string that
names no file or no kernel source, bytes that are not UTF-8; and a byte order mark accepted in
every source and in `.wave` files."""

from __future__ import annotations

from pathlib import Path

import pytest

import wavegpu as wg
from wavegpu.compiler.builtins import ROWS, Arg, Kind, Rule

DUP_PARAM = {
    "python": "import wavegpu as wg\n@wg.kernel\ndef k(x: wg.f32[:], x: wg.f32[:]):\n    x[0] = 1.0\n",
    "rust": "use wave::*;\n\n#[wave::kernel]\npub fn k(x: &mut [f32], x: &mut [f32]) {\n    x[0] = 1.0;\n}\n",
    "cpp": "[[wave::kernel]] void k(float* x, float* x) { x[0] = 1.0f; }\n",
    "typescript": "export function k(x: Float32Array, x: Float32Array) { x[0] = 1; }\n",
}
DUP_KERNEL = {
    "python": "import wavegpu as wg\n@wg.kernel\ndef k(x: wg.f32[:]):\n    x[0] = 1.0\n"
    "@wg.kernel\ndef k(y: wg.f32[:]):\n    y[0] = 2.0\n",
    "rust": (
        "use wave::*;\n\n#[wave::kernel]\npub fn k(x: &mut [f32]) {\n    x[0] = 1.0;\n}\n"
        "#[wave::kernel]\npub fn k(y: &mut [f32]) {\n    y[0] = 2.0;\n}\n"
    ),
    "cpp": "[[wave::kernel]] void k(float* x) { x[0] = 1.0f; }\n[[wave::kernel]] void k(float* y) { y[0] = 2.0f; }\n",
    "typescript": "export function k(x: Float32Array) { x[0] = 1; }\nexport function k(y: Float32Array) { y[0] = 2; }\n",
}
SUFFIX = {"python": ".py", "rust": ".rs", "cpp": ".cpp", "typescript": ".ts"}


@pytest.mark.parametrize("lang", sorted(DUP_PARAM))
def test_a_parameter_defined_twice_is_refused_at_the_second(lang: str) -> None:
    with pytest.raises(wg.CompileError, match=r"parameter 'x' is defined twice") as e:
        wg.compile(DUP_PARAM[lang], lang=lang)
    span = e.value.diagnostics[0].span
    assert span is not None and span.col > DUP_PARAM[lang].splitlines()[span.line - 1].index("x")


@pytest.mark.parametrize("lang", sorted(DUP_KERNEL))
def test_a_kernel_defined_twice_is_refused_at_the_second(lang: str) -> None:
    with pytest.raises(wg.CompileError, match=r"'k' is defined twice") as e:
        wg.compile(DUP_KERNEL[lang], lang=lang)
    span = e.value.diagnostics[0].span
    assert span is not None and "y" in span.text


def _kernel(call: str, statement: bool = False) -> str:
    line = call if statement else f"v = {call}"
    return f"import wavegpu as wg\n@wg.kernel\ndef k(x: wg.f32[:], i: wg.i32[:]):\n    {line}\n"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ("wg.global_id(0, 1, 2)", r"global_id\(\) takes at most 1 argument, 3 given"),
        ("wg.thread_id(foo=7)", r"thread_id\(\) has no keyword 'foo' \(it takes axis=\)"),
        ("wg.grid_size(0, 0)", r"grid_size\(\) takes at most 1 argument, 2 given"),
        ("wg.grid_size(0, axis=1)", r"'axis' both by position and by keyword"),
        ("wg.lane_id(0)", r"lane_id\(\) takes no arguments, 1 given"),
        ("wg.fma(x[0], x[1], c=x[2])", r"fma\(\) has no keyword 'c'"),
        ("abs(x[0], x[1])", r"abs\(\) takes 1 argument, 2 given"),
        ("wg.sqrt(x=x[0])", r"sqrt\(\) has no keyword 'x'"),
        ("wg.wave_reduce_add(x[0], 1)", r"wave_reduce_add\(\) takes 1 argument, 2 given"),
        ("max(x[0])", r"max\(a, b, \.\.\.\) takes two or more numbers, 1 given"),
    ],
)
def test_a_builtin_call_that_does_not_fit_its_row_is_refused(call: str, message: str) -> None:
    with pytest.raises(wg.CompileError, match=message) as e:
        wg.compile(_kernel(call))
    span = e.value.diagnostics[0].span
    assert span is not None and span.line == 4


SAMPLE = {Arg.VALUE: "i[0]", Arg.INDEX: "0", Arg.CONDITION: "x[0] > 0.0", Arg.ARRAY: "i", Arg.AXIS: "0"}
SAMPLE |= {Arg.SCOPE: "'wave'", Arg.TYPE: "wg.f32", Arg.COUNT: "4"}


@pytest.mark.parametrize(
    "name", sorted(n for n, b in ROWS.items() if b.kind not in (Kind.LOCAL, Kind.CAST) and b.rule is not Rule.POWI)
)
def test_every_builtin_refuses_an_extra_argument_and_an_unknown_keyword(name: str) -> None:
    """The check is the table's (builtins.arity), so every builtin has it: one argument too many,
    or a keyword no position has, is refused; the call as the table writes it compiles."""
    b = ROWS[name]
    args = [SAMPLE[a] for a in b.args]
    spelled = name if name in ("abs", "min", "max") else f"wg.{name}"  # (x ** k spells powi)
    stmt = b.kind is Kind.SYNC
    wg.compile(_kernel(f"{spelled}({', '.join(args)})", stmt))
    if b.kind is not Kind.MINMAX:
        with pytest.raises(wg.CompileError, match=r"takes .*given"):
            wg.compile(_kernel(f"{spelled}({', '.join([*args, 'i[0]'])})", stmt))
    with pytest.raises(wg.CompileError, match="no keyword"):
        wg.compile(_kernel(f"{spelled}({', '.join([*args, 'bogus=1'])})", stmt))


def test_a_one_line_file_name_is_a_path(tmp_path: Path) -> None:
    """wg.compile("k.txt") is a path, never Python source: no such file, by name."""
    with pytest.raises(wg.CompileError, match=r"no such file: .*nothere\.txt"):
        wg.compile(str(tmp_path / "nothere.txt"))
    with pytest.raises(wg.CompileError, match=r"no such file: .*nothere\.py"):
        wg.compile(str(tmp_path / "nothere.py"))
    with pytest.raises(wg.CompileError, match=r"no such file: kernels/k\.rs"):
        wg.compile("kernels/k.rs")


def test_wave_and_wbin_paths_say_how_to_read_them(tmp_path: Path) -> None:
    (tmp_path / "k.wave").write_text(".kernel k\nhalt\n.end\n")
    with pytest.raises(wg.CompileError, match=r"WAVE assembly, not kernel source.*wg\.assemble"):
        wg.compile(str(tmp_path / "k.wave"))
    with pytest.raises(wg.CompileError, match=r"compiled binary.*wg\.load"):
        wg.compile(tmp_path / "k.wbin")


def test_an_unknown_suffix_needs_lang(tmp_path: Path) -> None:
    p = tmp_path / "k.txt"
    p.write_text(DUP_PARAM["rust"].replace("x: &mut [f32], x:", "x:"))
    with pytest.raises(wg.CompileError, match=r"no kernel language has the suffix '\.txt'.*give lang="):
        wg.compile(str(p))
    assert wg.compile(str(p), lang="rust").kernels[0].name == "k"


def test_one_line_source_text_is_still_source() -> None:
    prog = wg.compile("def k(x: wg.f32[:]): x[0] = 1.0")
    assert prog.kernels[0].name == "k"


@pytest.mark.parametrize("how", ["path", "str", "bytes"])
def test_bytes_that_are_not_utf8_are_named_with_line_and_column(tmp_path: Path, how: str) -> None:
    data = b"import wavegpu as wg\n@wg.kernel\ndef k(o: wg.f32[:]):\n    o[0] = 1.0  # \xff\n"
    p = tmp_path / "bad.py"
    p.write_bytes(data)
    source: object = {"path": p, "str": str(p), "bytes": data}[how]
    with pytest.raises(wg.CompileError, match=r"byte 0xff") as e:
        wg.compile(source)
    span = e.value.diagnostics[0].span
    assert span is not None and (span.line, span.col) == (4, 19)


@pytest.mark.parametrize("lang", sorted(SUFFIX))
def test_a_byte_order_mark_is_skipped_in_every_language(tmp_path: Path, lang: str) -> None:
    src = DUP_KERNEL[lang].split("\n@wg.kernel\ndef k(y")[0] + "\n" if lang == "python" else None
    src = src or DUP_KERNEL[lang][: DUP_KERNEL[lang].index("\n", DUP_KERNEL[lang].index("1")) + 1]
    if lang == "rust":
        src += "}\n"
    p = tmp_path / f"k{SUFFIX[lang]}"
    p.write_bytes(b"\xef\xbb\xbf" + src.encode())
    assert wg.compile(p).kernels[0].name == "k"
    assert wg.compile("\ufeff" + src, lang=lang).kernels[0].name == "k"


def test_a_byte_order_mark_is_skipped_in_assembly(tmp_path: Path) -> None:
    from cli_helpers import run_wave

    text = ".kernel k\n.param o, buffer, u32\n    halt\n.end\n"
    assert wg.assemble("\ufeff" + text).kernels[0].name == "k"
    p = tmp_path / "k.wave"
    p.write_bytes(b"\xef\xbb\xbf" + text.encode())
    r = run_wave("asm", str(p), "-o", str(tmp_path / "k.wbin"))
    assert r.returncode == 0, r.stderr


def test_the_python_frontends_own_path_reader_names_line_and_column(tmp_path: Path) -> None:
    from wavegpu.compiler import Options, compile_python

    p = tmp_path / "bad.py"
    p.write_bytes(b"import wavegpu as wg\n\xfe\n")
    with pytest.raises(wg.CompileError, match="byte 0xfe") as e:
        compile_python(str(p), Options())
    span = e.value.diagnostics[0].span
    assert span is not None and (span.line, span.col) == (2, 1)
