"""The `wave` command line: exit codes, outputs, and no tracebacks for bad input."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from cli_helpers import WAVE, WAVE_EMU, run_with_terminal_stderr
from cli_helpers import run_emu as _emu
from cli_helpers import run_wave as run
from corpus import EXAMPLES, ROOT


def test_asm_dis_info(tmp_path: Path) -> None:
    src = next(p for p in EXAMPLES if p.name == "vector_add.wave")
    out = tmp_path / "k.wbin"
    r = run("asm", str(src), "-o", str(out))
    assert r.returncode == 0, r.stderr
    r = run("dis", str(out))
    assert r.returncode == 0 and ".kernel" in r.stdout
    (tmp_path / "again.wave").write_text(r.stdout)
    assert run("asm", str(tmp_path / "again.wave"), "-o", str(tmp_path / "b.wbin")).returncode == 0
    assert (tmp_path / "b.wbin").read_bytes() == out.read_bytes()
    r = run("info", str(out))
    assert r.returncode == 0 and "instructions" in r.stdout and "parameters" in r.stdout
    r = run("info", "--device")
    assert r.returncode == 0 and "WAVE_WIDTH" in r.stdout and "CAP_MMA" in r.stdout


def test_default_output_name(tmp_path: Path) -> None:
    src = tmp_path / "v.wave"
    src.write_text(EXAMPLES[0].read_text())
    assert run("asm", str(src)).returncode == 0
    assert (tmp_path / "v.wbin").exists()


@pytest.mark.parametrize(
    "content, needle",
    [
        (".kernel k\n  add.s32 r1, r2\n.end\n", "k.wave:2:3: error:"),
        (".kernel k\n  frob\n  bar r1\n.end\n", "k.wave:3:"),
    ],
)
def test_bad_assembly_exits_1_with_diagnostics(tmp_path: Path, content: str, needle: str) -> None:
    f = tmp_path / "k.wave"
    f.write_text(content)
    r = run("asm", str(f), "-o", str(tmp_path / "o.wbin"))
    assert r.returncode == 1
    assert needle in r.stderr
    assert "Traceback" not in r.stderr + r.stdout
    assert "^" in r.stderr
    assert not (tmp_path / "o.wbin").exists()


def test_bad_wbin_exits_1(tmp_path: Path) -> None:
    f = tmp_path / "bad.wbin"
    f.write_bytes(b"WBIN" + b"\x01" * 40)
    for cmd in ("dis", "info"):
        r = run(cmd, str(f))
        assert r.returncode == 1
        assert "byte offset" in r.stderr
        assert "Traceback" not in r.stderr


def test_bad_usage_exits_2(tmp_path: Path) -> None:
    assert run("asm").returncode == 2
    assert run("asm", str(tmp_path / "missing.wave")).returncode == 2
    assert run("frobnicate").returncode == 2
    assert run("info").returncode == 2


def test_refuses_to_overwrite_input(tmp_path: Path) -> None:
    f = tmp_path / "k.wave"
    f.write_text(EXAMPLES[0].read_text())
    r = run("asm", str(f), "-o", str(f))
    assert r.returncode == 1
    assert "refusing to overwrite" in r.stderr
    assert f.read_text() == EXAMPLES[0].read_text()


def test_binary_garbage_as_text(tmp_path: Path) -> None:
    f = tmp_path / "junk.wave"
    f.write_bytes(b"\xff\xfe\x00garbage")
    r = run("dis", str(f))
    assert r.returncode == 1 and "Traceback" not in r.stderr


VADD = str(next(p for p in EXAMPLES if p.name == "vector_add.wave"))


def test_wave_emu_runs_rust_style_scripts(tmp_path: Path) -> None:
    wbin = tmp_path / "v.wbin"
    assert run("asm", VADD, "-o", str(wbin)).returncode == 0
    r = _emu(
        str(wbin),
        "--grid",
        "1,1,1",
        "--workgroup",
        "256,1,1",
        "--fill-iota",
        "0:f32:256:1",
        "--fill-iota",
        "1024:f32:256:2",
        "--fill-zero",
        "2048:f32:256",
        "--set-reg",
        "0:0",
        "--set-reg",
        "1:1024",
        "--set-reg",
        "2:0x800",
        "--set-reg",
        "3:256",
        "--dump-f32",
        "2048:4",
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["0.0", "3.0", "6.0", "9.0"]


def test_wave_emu_files_after_fills_and_dumps(tmp_path: Path) -> None:
    import numpy as np

    data = tmp_path / "in.bin"
    data.write_bytes(np.array([1.5, 2.5], np.float32).tobytes())
    r = _emu(
        VADD,
        "--fill-iota",
        "0:f32:4:10",
        "--arg",
        f"0:{data}",
        "--fill-zero",
        "64:u32:4",
        "--set-reg",
        "0:0",
        "--set-reg",
        "1:0",
        "--set-reg",
        "2:64",
        "--set-reg",
        "3:4",
        "--dump-f32",
        "64:4",
        "--dump-u32",
        "0:1",
        "--dump-f16",
        "0:2",
        "--stats",
    )
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[:4] == [
        "3.0",
        "5.0",
        "40.0",
        "60.0",
    ]  # a + a, with the file over the first two iota values
    assert lines[4] == str(np.array([1.5], np.float32).view(np.uint32)[0])
    assert lines[5:7] == ["0.0", "1.9375"]  # the halves of 1.5f (0x3FC00000) as f16
    assert "SIMD efficiency" in r.stdout


def test_wave_emu_reads_an_arg_file_into_the_image_up_to_its_last_byte(tmp_path: Path) -> None:
    """--arg files are read straight into the device memory (cli.emu._read_into): one that ends at
    the memory's last byte is whole there; a pipe that holds more than the room left is refused."""
    import contextlib
    import os
    import threading

    import numpy as np

    data = tmp_path / "tail.bin"
    data.write_bytes(np.arange(3, 7, dtype=np.float32).tobytes())  # bytes 48..63 of a 64-byte memory
    flags = ("--device-memory", "64", "--set-reg", "0:48", "--set-reg", "1:48", "--set-reg", "2:0", "--set-reg", "3:4")
    r = _emu(VADD, *flags, "--arg", f"48:{data}", "--dump-f32", "0:4")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["6.0", "8.0", "10.0", "12.0"]
    fifo = tmp_path / "long.fifo"
    os.mkfifo(fifo)

    def write() -> None:  # 64 bytes for 16 of room; the command stops reading after 17
        with contextlib.suppress(BrokenPipeError):
            fifo.write_bytes(bytes(64))

    writer = threading.Thread(target=write)
    writer.start()
    try:
        r = _emu(VADD, *flags, "--arg", f"48:{fifo}")
    finally:  # a reader that needs no writer, so a writer still waiting to open the pipe finishes
        fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        writer.join(timeout=30)
        os.close(fd)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert f"--arg {fifo}: more than 16 bytes at offset 48 exceed the device memory (64 bytes" in r.stderr


def test_wave_emu_errors(tmp_path: Path) -> None:
    r = _emu(VADD, "--fill-zero", "2000000:u32:4")
    assert r.returncode == 1 and r.stderr.startswith("Error:") and "device memory" in r.stderr
    r = _emu(VADD, "--set-reg", "0:5", "--set-reg", "3:64", "--dump-u32", "0:1")
    assert r.returncode == 1 and "out-of-bounds" not in r.stdout and "Error:" in r.stderr
    assert "Traceback" not in r.stderr


def test_wave_run_with_npy_buffers(tmp_path: Path) -> None:
    import numpy as np

    a = tmp_path / "a.npy"
    np.save(a, np.arange(300, dtype=np.float32))
    out = tmp_path / "c.npy"
    r = run(
        "run",
        VADD,
        "--grid",
        "2",
        f"a={a}",
        "b=iota:300",
        "c=zeros:300",
        "n=300",
        "--out",
        f"c={out}",
        "--print",
        "c:3",
        "--stats",
        "--check",
    )
    assert r.returncode == 0, r.stderr
    assert np.array_equal(np.load(out), 2 * np.arange(300, dtype=np.float32))
    assert "c[:3] = [0. 2. 4.]" in r.stdout and "lane instructions" in r.stdout


def test_wave_run_reports_traps_with_place(tmp_path: Path) -> None:
    r = run("run", VADD, "--grid", "2", "a=zeros:10", "b=zeros:10", "c=zeros:10", "n=512")
    assert r.returncode == 1
    assert "trap: out-of-bounds" in r.stderr and "kernel 'vector_add'" in r.stderr
    assert "workgroup (" in r.stderr and "vector_add.wave:" in r.stderr  # the assembly line
    assert "Traceback" not in r.stderr


def test_wave_run_usage_errors() -> None:
    assert run("run", VADD, "--grid", "1", "x=1").returncode == 2
    assert run("run", VADD, "a=zeros:4").returncode == 2  # --grid missing
    r = run("run", VADD, "--grid", "1", "a=zeros:4", "b=zeros:4", "c=zeros:4", "n=abc")
    assert r.returncode == 2


# ----------------------------------------------------------------------------------------------
# bad input never shows a traceback; everything is checked before a run

SPIN = """\
.kernel spin
.param out, buffer, u32
.param n, scalar, u32
    mov.b32 r2, 0
    loop
        add.u32 r2, r2, 1
        setp.ge.u32 p0, r2, r1
        break p0
    endloop
    ret
.end
"""

TRAPPING = ("a=zeros:10", "b=zeros:10", "c=zeros:10", "n=512")  # vector_add reading past its arrays


@pytest.fixture
def bad_files(tmp_path: Path) -> Path:
    (tmp_path / "latin1.wave").write_bytes(b".kernel k\n  ret \xe9t\xe9\n.end\n")
    (tmp_path / "latin1.py").write_bytes(b"import wavegpu as wg\n# caf\xe9\n")
    (tmp_path / "garbage.npy").write_bytes(b"\x93NUMPY garbage")
    (tmp_path / "k.wave").write_text(EXAMPLES[0].read_text())
    return tmp_path


# (arguments with {d} for the folder of bad_files, exit status, text stderr must hold)
MALFORMED = [
    (("asm", "{d}/latin1.wave", "-o", "{d}/o.wbin"), 1, "latin1.wave:2:7: error: not UTF-8 text: byte 0xe9"),
    (("compile", "{d}/latin1.py", "-o", "{d}/o.wbin"), 1, "latin1.py:2:6: error: not UTF-8 text"),
    (("translate", "{d}/latin1.py", "-t", "opencl"), 1, "latin1.py:2:6: error:"),
    (("run", "{d}/latin1.py", "-g", "1"), 1, "latin1.py:2:6: error:"),
    (("dis", "{d}/latin1.wave"), 1, "latin1.wave:2:7: error: not a .wbin file and not UTF-8 text"),
    (("compile", "{d}/k.wave"), 1, "wave compile reads kernel source files"),
    (("run", VADD, "-g", "1", "a=zeros:4", "b=zeros:4", "c=zeros:4", "n=4", "--print", "c:abc"), 2, "--print c:abc"),
    (("run", VADD, "-g", "1", "a=zeros:4", "b=zeros:4", "c=zeros:99999999999", "n=4"), 1, "32-bit"),
    (("run", VADD, "-g", "1", "a=zeros:4", "b=iota:2000000000", "c=zeros:4", "n=4"), 1, "32-bit"),
    (("run", VADD, "-g", "1", "a={d}/garbage.npy", "b=zeros:4", "c=zeros:4", "n=4"), 1, "a: cannot read"),
    (("run", VADD, "-g", "1", "a=zeros:4", "a=zeros:4", "b=zeros:4", "c=zeros:4", "n=4"), 2, "given twice"),
    (("run", VADD, "-g", "1", "a=zeros:4", "b=zeros:4", "n=4"), 2, "missing argument(s) for c"),
    (("run", VADD, "-g", "1", "a=zeros:-4", "b=zeros:4", "c=zeros:4", "n=4"), 2, "a=zeros:COUNT"),
    # checked before the kernel runs: these arguments would trap
    (("run", VADD, "-g", "2", *TRAPPING, "--out", "c={d}/missing/c.npy"), 1, "does not exist"),
    (("run", VADD, "-g", "2", *TRAPPING, "--out", "c={d}"), 1, "is a directory"),
    (("run", VADD, "-g", "2", *TRAPPING, "--out", "n={d}/n.npy"), 2, "expected BUFFER=FILE.npy"),
    (("run", VADD, "-g", "2", *TRAPPING, "--print", "n"), 2, "'n' is not a buffer parameter"),
    (("run", VADD, "-g", "2", *TRAPPING, "--out", "a={d}/x.npy", "--out", "c={d}/x.npy"), 2, "already the output"),
    (("translate", VADD, "-t", "opencl", "-o", "{d}/missing/k.cl"), 1, "does not exist"),
]

MALFORMED_EMU = [
    (("--fill-zero", "0:u32:abc"), 2, "--fill-zero"),
    (("--fill-zero", "0:u32:99999999999"), 1, "exceed the device memory"),
    (("--fill-iota", "0:f32:4:fast"), 2, "invalid scale"),
    (("--fill-iota", "0:q32:4"), 2, "unknown type"),
    (("--dump-f32", "0:abc"), 2, "--dump-f32"),
    (("--dump-bf16", "2000000:4"), 1, "beyond the device memory"),
    (("--set-reg", "r9x:1"), 2, "invalid register"),
    (("--arg", "0:{d}/missing.bin"), 1, "missing.bin"),
    (("--arg", "0:{d}/garbage.npy"), 1, "cannot read"),
    (("--grid", "1,x"), 2, "--grid"),
    (("--device-memory", "99999999999"), 2, "--device-memory"),
    (("--local-memory", "65537"), 2, "65537 is not in the range 0<=x<=65536"),  # the reader's limit
]


@pytest.mark.parametrize("args, status, needle", MALFORMED, ids=[" ".join(c[0][:1] + c[0][-2:]) for c in MALFORMED])
def test_malformed_input_is_a_message_not_a_traceback(
    bad_files: Path, args: tuple[str, ...], status: int, needle: str
) -> None:
    r = run(*(a.format(d=bad_files) for a in args))
    assert "Traceback" not in r.stderr + r.stdout
    assert r.returncode == status, r.stderr
    assert needle in r.stderr
    assert "trap:" not in r.stderr  # nothing ran
    assert not list(bad_files.glob("*.npy*"))[1:] and not list(bad_files.glob("**/*.tmp"))


def test_wave_emu_accepts_local_memory_up_to_the_limit() -> None:
    r = _emu(VADD, "--set-reg", "3:0", "--local-memory", "65536")
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("args, status, needle", MALFORMED_EMU, ids=[c[0][0] for c in MALFORMED_EMU])
def test_wave_emu_malformed_input(bad_files: Path, args: tuple[str, ...], status: int, needle: str) -> None:
    r = _emu(VADD, "--set-reg", "3:0", *(a.format(d=bad_files) for a in args))
    assert "Traceback" not in r.stderr + r.stdout
    assert r.returncode == status, r.stderr
    assert needle in r.stderr


def test_wave_run_compiles_kernel_sources(tmp_path: Path) -> None:
    import numpy as np

    src = ROOT / "examples" / "kernels" / "saxpy.py"
    out = tmp_path / "y.npy"
    r = run("run", str(src), "-g", "2", "a=2", "x=iota:40", "y=iota:40", "n=40", "--out", f"y={out}")
    assert r.returncode == 0, r.stderr
    assert np.array_equal(np.load(out), 3 * np.arange(40, dtype=np.float32))
    assert "x 256 thread" in r.stdout + r.stderr  # a kernel source runs 256-thread workgroups, as a call does


def test_translate_deeply_nested_kernel(tmp_path: Path) -> None:
    depth = 1000
    src = tmp_path / "deep.wave"
    src.write_text(
        ".kernel deep\n.param n, scalar, u32\n  setp.eq.u32 p0, r0, 0\n"
        + "  if p0\n" * depth
        + "  add.u32 r1, r1, 1\n"
        + "  endif\n" * depth
        + "  ret\n.end\n"
    )
    for target in ("opencl", "ptx"):
        r = run("translate", str(src), "-t", target, "-o", str(tmp_path / f"deep.{target}"))
        assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert (tmp_path / "deep.opencl").read_text().count("if (p0) {") == depth


# ----------------------------------------------------------------------------------------------
# random malformed command lines, in process: every one ends in a message and status 1 or 2


def _fuzz_files(root: Path) -> dict[str, str]:
    import numpy as np

    files = {
        "good.wave": EXAMPLES[0].read_text().encode(),
        "spin.wave": SPIN.encode(),
        "latin1.wave": b".kernel k\n  ret \xe9\n.end\n",
        "empty.wave": b"",
        "junk.wbin": b"WBIN" + bytes(range(60)),
        "junk.py": b"def f(:\n",
        "latin1.py": b"\xff\xfe",
        "garbage.npy": b"\x93NUMPY\x01\x00garbage",
        "text.npy": b"hello",
    }
    for name, data in files.items():
        (root / name).write_bytes(data)
    np.save(root / "f32.npy", np.arange(8, dtype=np.float32))
    np.save(root / "c64.npy", np.arange(8, dtype=np.complex64))
    np.save(root / "matrix.npy", np.ones((3, 3), dtype=np.int64))
    return {n: str(root / n) for n in [*files, "f32.npy", "c64.npy", "matrix.npy", "missing.wave"]}


def test_random_command_lines_never_raise(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from wavegpu.cli import emu_main, main

    paths = _fuzz_files(tmp_path)
    monkeypatch.chdir(tmp_path)  # outputs with generated relative names land here
    path = st.sampled_from(sorted(paths.values()))
    small = st.integers(0, 300).map(str)
    huge = st.integers(1 << 32, 1 << 80).map(str)
    # no NUL: a real command line cannot carry one (argv strings end at it)
    junk = st.text(alphabet="0123456789abcxyz:=,.-_/%\\é \t", max_size=12)
    number = st.one_of(small, huge, junk, st.sampled_from(["0x10", "-1", "1e9", "nan", "inf", ""]))
    count = st.one_of(small, huge, junk)
    name = st.sampled_from(["a", "b", "c", "n", "out", "x", ""])
    buffer_value = st.one_of(
        st.builds(lambda k, c: f"{k}:{c}", st.sampled_from(["zeros", "iota", "ones", ""]), count), path, junk
    )
    argument = st.one_of(
        st.builds(lambda n, v: f"{n}={v}", name, st.one_of(buffer_value, number)),
        junk,
    )
    option = st.one_of(
        st.tuples(st.sampled_from(["-g", "--grid", "-w", "--workgroup"]), st.one_of(small, junk, huge)),
        st.tuples(st.sampled_from(["--print"]), st.builds(lambda n, c: f"{n}:{c}", name, count)),
        st.tuples(st.sampled_from(["--out", "-o"]), st.builds(lambda n, p: f"{n}={p}", name, st.one_of(path, junk))),
        st.tuples(st.sampled_from(["--max-instructions", "--wave-width", "-k"]), number),
        st.tuples(st.sampled_from(["--stats", "--check", "--force", "--no-progress"])),
    ).map(list)
    wave_line = st.tuples(
        st.sampled_from(["run", "asm", "dis", "info", "translate", "compile"]),
        path,
        st.lists(argument, max_size=5),
        st.lists(option, max_size=5),
    ).map(lambda t: [t[0], t[1], *t[2], *(x for o in t[3] for x in o)])
    # runs of vector_add with every parameter given, each value well-formed or not, so that many
    # reach the emulator (or its last checks)
    vadd_run = st.tuples(
        st.tuples(*(st.one_of(buffer_value, st.sampled_from(["zeros:64", "iota:64"])) for _ in "abc")),
        st.one_of(number, st.just("64")),
        st.lists(option, max_size=4),
    ).map(
        lambda t: [
            "run",
            paths["good.wave"],
            "-g",
            "1",
            *(f"{n}={v}" for n, v in zip("abc", t[0])),
            f"n={t[1]}",
            *(x for o in t[2] for x in o),
        ]
    )
    emu_option = st.one_of(
        st.tuples(st.sampled_from(["--fill-zero", "--fill-iota"]), st.builds(":".join, st.lists(count, max_size=4))),
        st.tuples(
            st.sampled_from(["--dump-f32", "--dump-u32", "--dump-f16", "--dump-bf16", "--dump-memory", "--set-reg"]),
            st.builds(lambda a, b: f"{a}:{b}", count, number),
        ),
        st.tuples(st.just("--arg"), st.builds(lambda o, p: f"{o}:{p}", count, path)),
        st.tuples(st.sampled_from(["--grid", "--workgroup", "--device-memory", "--kernel"]), st.one_of(small, junk)),
    ).map(list)
    emu_line = st.tuples(path, st.lists(emu_option, max_size=6)).map(lambda t: [t[0], *(x for o in t[1] for x in o)])

    runner = CliRunner()

    @settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck), database=None)
    @given(
        st.one_of(
            wave_line.map(lambda a: (main, a)),
            vadd_run.map(lambda a: (main, a)),
            emu_line.map(lambda a: (emu_main, a)),
        )
    )
    def check(case: tuple[object, list[str]]) -> None:
        cmd, args = case
        result = runner.invoke(cmd, args, catch_exceptions=True)  # type: ignore[arg-type]
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise AssertionError(f"{args}: {result.exception!r}") from result.exception
        assert result.exit_code in (0, 1, 2), (args, result.exit_code, result.output)
        assert "Traceback" not in result.output
        statuses[result.exit_code] = statuses.get(result.exit_code, 0) + 1

    statuses: dict[int, int] = {}
    check()
    assert statuses.get(1) and statuses.get(2), statuses  # both kinds of bad input were generated


# ----------------------------------------------------------------------------------------------
# output files


def test_outputs_go_through_unique_temporaries(tmp_path: Path) -> None:
    import os

    src = tmp_path / "k.wave"
    src.write_text(EXAMPLES[0].read_text())
    users = tmp_path / "k.wbin.tmp"  # a file of the user's that a fixed temporary name would clobber
    users.write_text("mine")
    assert run("asm", str(src), "-o", str(tmp_path / "k.wbin")).returncode == 0
    assert users.read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.wave", "k.wbin", "k.wbin.tmp"]
    mask = os.umask(0)
    os.umask(mask)
    assert (tmp_path / "k.wbin").stat().st_mode & 0o777 == 0o666 & ~mask  # as open() would create it


def test_concurrent_writers_do_not_collide(tmp_path: Path) -> None:
    src = tmp_path / "k.wave"
    src.write_text(EXAMPLES[0].read_text())
    dest = tmp_path / "k.wbin"
    procs = [
        subprocess.Popen([*WAVE, "asm", str(src), "-o", str(dest)], stderr=subprocess.PIPE, text=True) for _ in range(4)
    ]
    for p in procs:
        _, e = p.communicate(timeout=120)
        assert p.returncode == 0, e
    ref = tmp_path / "ref.wbin"
    assert run("asm", str(src), "-o", str(ref)).returncode == 0
    assert dest.read_bytes() == ref.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.wave", "k.wbin", "ref.wbin"]


def test_out_refuses_to_overwrite_an_input_npy_without_force(tmp_path: Path) -> None:
    import numpy as np

    a = tmp_path / "a.npy"
    np.save(a, np.arange(64, dtype=np.float32))
    args = ("run", VADD, "-g", "1", f"a={a}", "b=iota:64", "c=zeros:64", "n=64", "--out", f"c={a}")
    r = run(*args)
    assert r.returncode == 1 and "--force" in r.stderr and "a=" in r.stderr
    assert "ran " not in r.stdout  # refused before the run
    assert np.array_equal(np.load(a), np.arange(64, dtype=np.float32))
    r = run(*args, "--force")
    assert r.returncode == 0, r.stderr
    assert np.array_equal(np.load(a), 2 * np.arange(64, dtype=np.float32))


# ----------------------------------------------------------------------------------------------
# progress and instruction budgets


@pytest.fixture(scope="module")
def spin(tmp_path_factory: pytest.TempPathFactory) -> str:
    p = tmp_path_factory.mktemp("spin") / "spin.wave"
    p.write_text(SPIN)
    return str(p)


# A few seconds on the NumPy engine whatever the cache holds (a bar appears after PROGRESS_DELAY,
# 1 s; 120,000 trips took 1.1 s on a quiet 2-core EPYC, too close to it). Four instructions a
# trip: past the default budget of a million a thread, so the budget is raised.
SPIN_LONG = ("--engine", "numpy", "--max-instructions", "2000000")
LONG = ("-g", "64", "-w", "256", "out=zeros:1", "n=400000", *SPIN_LONG)


def test_progress_bar_only_on_a_terminal(spin: str) -> None:
    rc, stdout, tty = run_with_terminal_stderr([*WAVE, "run", spin, *LONG])
    assert rc == 0 and "ran 'spin'" in stdout
    assert "workgroups" in tty and "0/64" in tty  # the bar, drawn while the first batch runs
    assert "workgroups" not in stdout
    rc, _, tty = run_with_terminal_stderr([*WAVE, "run", spin, *LONG, "--no-progress"])
    assert rc == 0 and "workgroups" not in tty
    r = run("run", spin, *LONG)  # captured output: never a bar
    assert r.returncode == 0 and r.stderr == ""


def test_short_runs_show_no_progress(spin: str) -> None:
    rc, _, tty = run_with_terminal_stderr([*WAVE, "run", spin, "-g", "1", "out=zeros:1", "n=10"])
    assert rc == 0 and "workgroups" not in tty


def test_wave_emu_progress_and_budget(spin: str) -> None:
    emu_long = ["--grid", "64,1,1", "--workgroup", "256,1,1", *SPIN_LONG, "--set-reg", "1:400000"]
    rc, _, tty = run_with_terminal_stderr([*WAVE_EMU, spin, *emu_long])
    assert rc == 0 and "workgroups" in tty
    rc, _, tty = run_with_terminal_stderr([*WAVE_EMU, spin, *emu_long[:8], "--set-reg", "1:10", "--no-progress"])
    assert rc == 0 and "workgroups" not in tty
    r = _emu(spin, "--set-reg", "1:5000", "--max-instructions", "100")
    assert r.returncode == 1 and "instruction budget" in r.stderr and "100 instructions" in r.stderr


def test_wave_run_max_instructions(spin: str) -> None:
    r = run("run", spin, "-g", "1", "out=zeros:1", "n=5000", "--max-instructions", "100")
    assert (
        r.returncode == 1
        and "instruction budget" in r.stderr
        and "100 instructions" in r.stderr
        and "spin.wave:" in r.stderr
    )
    assert run("run", spin, "-g", "1", "out=zeros:1", "n=5000", "--max-instructions", "60000").returncode == 0


# ----------------------------------------------------------------------------------------------
# wave-emu: the rest of the Rust emulator's flags


def test_wave_emu_dump_bf16(tmp_path: Path) -> None:
    import numpy as np

    vals = np.array([1.5, -2.25, 2.0**100, 0.0078125], np.float32)
    data = tmp_path / "bf16.bin"
    data.write_bytes((vals.view(np.uint32) >> 16).astype(np.uint16).tobytes())  # exact in bfloat16
    r = _emu(VADD, "--set-reg", "3:0", "--arg", f"64:{data}", "--dump-bf16", "64:4", "--dump-f16", "64:1")
    assert r.returncode == 0, r.stderr
    # --dump-f16 first (the documented order): 0x3FC0 as f16, then the four bfloat16 values
    assert r.stdout.split() == ["1.9375", "1.5", "-2.25", _f32_text(2.0**100), "0.0078125"]


def _f32_text(v: float) -> str:
    import numpy as np

    return repr(float(str(np.float32(v))))


def _rust_counts(stdout: str) -> tuple[int, int]:
    """What the Rust toolchain's CI scripts read from --stats: the first Loads: and Stores: numbers."""
    loads = next(line for line in stdout.splitlines() if "Loads:" in line)
    stores = next(line for line in stdout.splitlines() if "Stores:" in line)
    return int(loads.split("Loads:")[1].split()[0]), int(stores.split("Stores:")[1].split()[0])


def test_wave_emu_stats_print_the_rust_summary() -> None:
    r = _emu(
        VADD,
        "--workgroup",
        "256,1,1",
        "--fill-iota",
        "0:f32:256",
        "--set-reg",
        "1:1024",
        "--set-reg",
        "2:2048",
        "--set-reg",
        "3:200",
        "--stats",
    )
    assert r.returncode == 0, r.stderr
    assert _rust_counts(r.stdout) == (400, 200)  # 200 active threads: two loads and a store each
    lines = r.stdout.splitlines()
    assert "    Loads:  400 (1600 bytes)" in lines and "    Stores: 200 (800 bytes)" in lines
    assert lines.index("  Device memory:") < lines.index("  Local memory:")
    assert "Execution Statistics:" in lines and "  Workgroups executed: 1" in lines and "  Waves executed: 8" in lines
    assert "SIMD efficiency" in r.stdout  # our own table follows


def test_wave_emu_stats_count_local_memory_apart() -> None:
    reduce = str(next(p for p in EXAMPLES if p.name == "reduce.wave"))
    r = _emu(reduce, "--grid", "2,1,1", "--fill-iota", "0:u32:512", "--set-reg", "1:4096", "--stats")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    local = lines[lines.index("  Local memory:") + 1 : lines.index("  Local memory:") + 3]
    assert _rust_counts(r.stdout) == (512, 2)  # each thread loads its input; one sum per workgroup
    loads, stores = (int(x.split(":")[1].split()[0]) for x in local)
    # per workgroup: 256 first stores, then at each halving the lower half reads two slots and
    # stores one (255 in all), and thread 0 reads the sum
    assert (loads, stores) == (2 * (2 * 255 + 1), 2 * (256 + 255))
    assert "note:" not in r.stderr  # exact: one access width per memory space


def test_wave_run_traps_past_a_too_small_npy_input(tmp_path: Path) -> None:
    import numpy as np

    a = tmp_path / "a.npy"
    np.save(a, np.arange(10, dtype=np.float32))  # the kernel reads 300 elements
    r = run("run", VADD, "-g", "2", f"a={a}", "b=zeros:300", "c=zeros:300", "n=300", "--out", f"c={tmp_path / 'c.npy'}")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "out-of-bounds load from a[10]" in r.stderr and "a has 10 element(s)" in r.stderr
    assert "vector_add.wave:" in r.stderr and not (tmp_path / "c.npy").exists()


def test_wave_run_refuses_npy_of_another_type(tmp_path: Path) -> None:
    import numpy as np

    a = tmp_path / "a.npy"
    np.save(a, np.arange(300.0))  # float64 for an f32 parameter: converting could change values
    r = run("run", VADD, "-g", "2", f"a={a}", "b=zeros:300", "c=zeros:300", "n=300")
    assert r.returncode == 1 and "float64" in r.stderr and "f32[]" in r.stderr and "ran " not in r.stdout


def test_wave_run_fills_hidden_lengths_and_refuses_them_given(tmp_path: Path) -> None:
    import numpy as np

    src = tmp_path / "k.py"
    src.write_text(
        "import wavegpu as wg\n\n\n@wg.kernel\ndef k(x: wg.f32[:], y: wg.f32[:]):\n"
        "    i = wg.global_id()\n    if i < len(x):\n        y[i] = x[i] + 1.0\n"
    )
    out = tmp_path / "y.npy"
    r = run("run", str(src), "-g", "1", "x=iota:10", "y=zeros:10", "--out", f"y={out}")
    assert r.returncode == 0, r.stderr
    assert np.array_equal(np.load(out), np.arange(1, 11, dtype=np.float32))
    r = run("run", str(src), "-g", "1", "x=iota:10", "y=zeros:10", "x__len=10")
    assert r.returncode == 2 and "x__len is computed from x" in r.stderr and "Traceback" not in r.stderr


def test_translate_mma_path(tmp_path: Path) -> None:
    """`wave translate --mma`: the tensor-core path on ptx only; exact (the default) everywhere."""
    src = tmp_path / "m.wave"
    src.write_text(
        ".kernel m\n.registers 16\n"
        "    mma.m16n8k8.f32.f16 {r0, r1, r2, r3}, {r4, r5}, {r6}, {r8, r9, r10, r11}\n    ret\n.end\n"
    )
    tensor = run("translate", str(src), "-t", "ptx", "--mma", "tensor")
    exact = run("translate", str(src), "-t", "ptx", "--mma", "exact")
    assert tensor.returncode == 0 and exact.returncode == 0, tensor.stderr + exact.stderr
    assert "mma.sync" in tensor.stdout and "mma.sync" not in exact.stdout
    assert exact.stdout == run("translate", str(src), "-t", "ptx").stdout
    bad = run("translate", str(src), "-t", "opencl", "--mma", "tensor")
    assert bad.returncode != 0 and "ptx target only" in bad.stderr and "Traceback" not in bad.stderr


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_wave_run_makes_no_host_copy_of_the_buffers(tmp_path: Path, engine: str) -> None:
    """The device image is the one copy `wave run` holds of its buffers: zeros, iota and a .npy
    file are written straight into it, the emulator runs in it (emulate(donate=True)) and --out
    writes from it (issue 28.6: the buffers were held two and three times)."""
    import tracemalloc

    import numpy as np
    from click.testing import CliRunner

    from wavegpu.cli.wave import main

    if engine == "compiled":
        pytest.importorskip("numba")
    n = 1 << 20
    a = np.arange(n, dtype=np.float32)
    np.save(tmp_path / "a.npy", a)
    args = ["run", str(ROOT / "examples" / "vector_add.wave"), "--grid", "1", f"a={tmp_path / 'a.npy'}", f"b=iota:{n}"]
    args += [f"c=zeros:{n}", "n=256", "--engine", engine, "--out", f"c={tmp_path / 'c.npy'}", "--print", "b:3"]
    if engine == "compiled":  # the translation first (its compile is not what is measured)
        assert CliRunner().invoke(main, args).exit_code == 0
    tracemalloc.start()
    try:
        r = CliRunner().invoke(main, args)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert r.exit_code == 0, r.output
    assert "b[:3] = [0. 1. 2.]" in r.output
    c = np.load(tmp_path / "c.npy")
    assert np.array_equal(c[:256], 2 * a[:256]) and not c[256:].any()
    image = 3 * 4 * n  # three buffers of n floats
    # one image plus small temporaries (imports, 64 Ki-element iota chunks): 1.15x here, 1.02x with a
    # 64 MiB image; two images (a private copy in the emulator) would be 2.0x
    assert peak < image + (3 << 20), f"peak {peak / image:.2f} x the device image"


CHASE = (Path(__file__).resolve().parents[1] / "data" / "chase.wave").read_text()


def test_wave_run_and_wave_emu_trap_alike_on_both_engines(tmp_path: Path) -> None:
    """The emulator runs in the commands' device image (donated); a compiled run that stops at a
    trap is re-run on the NumPy engine from the input, which the commands write into the image
    again: the trap is the NumPy engine's, at thread 200 (x[i] = i * 7 % 256, x[200] = 65536; each
    thread reads x[x[i]], then adds 1,000,000 to x[i]: a re-run from the stopped run's memory
    would trap at thread 0)."""
    import numpy as np

    pytest.importorskip("numba")
    src = tmp_path / "chase.wave"
    src.write_text(CHASE)
    x = (np.arange(256, dtype=np.uint32) * 7) % 256
    x[200] = 0x10000
    np.save(tmp_path / "x.npy", x)
    x.tofile(tmp_path / "x.bin")
    wbin = tmp_path / "chase.wbin"
    assert run("asm", str(src), "-o", str(wbin)).returncode == 0
    errs = {}
    for engine in ("numpy", "compiled"):
        r = run("run", str(src), "-g", "4", "--workgroup", "64", f"x={tmp_path / 'x.npy'}", "--engine", engine)
        assert r.returncode == 1 and "thread (8, 0, 0)" in r.stderr and "workgroup (3, 0, 0)" in r.stderr, r.stderr
        e = _emu(
            str(wbin),
            "--grid",
            "4",
            "--workgroup",
            "64",
            "--device-memory",
            "1024",
            "--arg",
            f"0:{tmp_path / 'x.bin'}",
            "--set-reg",
            "0:0",
            "--engine",
            engine,
        )
        assert e.returncode == 1 and "thread (8, 0, 0)" in e.stderr and "workgroup (3, 0, 0)" in e.stderr, e.stderr
        errs[engine] = (r.stderr, e.stderr)
    assert errs["numpy"] == errs["compiled"]
    assert np.array_equal(np.load(tmp_path / "x.npy"), x)  # the input file is untouched
