"""Start-up of the commands (issue 16, item 3; docs/performance.md "Start-up"): what `wave-emu` and
`wave run` import for a small kernel, checked through sys.modules in fresh interpreters (not
timed: benchmarks/startup.py times them), and the collector state the commands leave behind."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import wavegpu as wg

EX = Path(__file__).resolve().parents[2] / "examples"

# never loaded by a small run of a .wbin: the compiled engine's translator and numba ("auto"
# decides a small launch before importing them), the compiler, the backends, rich (no terminal,
# no --stats), click (wave-emu reads its flags with cli.emu.fast_parse), the runtime and the text
# tools, and standard modules nothing on the path needs
NOT_FOR_A_WBIN = (
    "click",
    "numba",
    "llvmlite",
    "wavegpu.emulator.compiled.codegen",
    "wavegpu.emulator.compiled.engine",
    "wavegpu.emulator.compiled.cache",
    "wavegpu.emulator.compiled.opsgen",
    "wavegpu.compiler",
    "wavegpu.backends",
    "wavegpu.codegen",
    "wavegpu.runtime",
    "wavegpu.asm",
    "wavegpu.dis",
    "rich",
    "json",
    "fractions",
    "importlib.metadata",
    "concurrent.futures",
    "pathlib",
)
EMU_FLAGS = [
    "--grid", "1", "--workgroup", "256",
    "--set-reg", "r1:1024", "--set-reg", "r2:2048", "--set-reg", "r3:256",
    "--fill-iota", "0:f32:256", "--fill-iota", "1024:f32:256", "--dump-f32", "2048:3",
]  # fmt: skip
RUN_ARGS = ["--grid", "1", "a=iota:256", "b=iota:256", "c=zeros:256", "n=256", "--print", "c:3"]


def _run(entry: str, argv: list[str], module: str = "wavegpu.cli") -> tuple[set[str], str]:
    """(modules loaded, stdout) after running a command's entry point in a fresh interpreter
    with stderr a pipe (no terminal) and the default engine ("auto")."""
    code = (  # the modules are listed at exit (the console scripts end the process: cli.resident.exit_now)
        "import atexit, sys\n"
        "def report():\n    loaded = sorted(sys.modules)\n    import json\n    print(json.dumps(loaded))\n"
        f"atexit.register(report)\nsys.argv = {argv!r}\nfrom {module} import {entry}\n"
        f"try:\n    {entry}()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
    )
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("WAVEGPU_ENGINE", "WAVEGPU_SERVER", "FORCE_COLOR", "TTY_COMPATIBLE")
    }
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert r.returncode == 0, r.stderr
    *out, modules = r.stdout.strip().splitlines()
    return set(json.loads(modules)), "\n".join(out)


def _offending(modules: set[str], banned: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == b or m.startswith(b + ".") for b in banned))


@pytest.fixture(scope="module")
def wbin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("startup") / "vector_add.wbin"
    path.write_bytes(wg.assemble((EX / "vector_add.wave").read_text()).to_bytes())
    return path


def test_wave_emu_on_a_wbin_loads_the_emulator_only(wbin: Path) -> None:
    modules, out = _run("emu_main", ["wave-emu", str(wbin), *EMU_FLAGS])
    assert out.split() == ["0.0", "2.0", "4.0"]  # it ran: c = a + b
    assert {"numpy", "wavegpu.emulator.machine", "wavegpu.emulator.compiled.choice"} <= modules  # the probe sees
    assert _offending(modules, NOT_FOR_A_WBIN) == []


# what neither `wave-emu --help` nor a small run of a .wbin on the NumPy engine may load (issue 26
# point 4): numba, rich, the frontends (the compiler) and the backends
HEAVY = ("numba", "llvmlite", "rich", "wavegpu.compiler", "wavegpu.backends", "wavegpu.emulator.compiled.engine")


def test_wave_emu_help_loads_neither_numpy_nor_anything_heavy() -> None:
    """The console script (cli.resident.emu_entry, as installed) with --help: click writes the
    help; not even NumPy or the emulator is loaded."""
    modules, out = _run("emu_entry", ["wave-emu", "--help"], module="wavegpu.cli.resident")
    assert "--dump-u32" in out and "--set-reg" in out
    assert "click" in modules
    assert _offending(modules, (*HEAVY, "numpy", "wavegpu.emulator", "wavegpu.runtime", "wavegpu.asm")) == []


@pytest.mark.parametrize("engine", [None, "numpy"])
def test_wave_emu_console_script_on_a_wbin_loads_nothing_heavy(wbin: Path, engine: str | None) -> None:
    """The console script's own path (cli.resident.emu_entry, no WAVEGPU_SERVER) on a small .wbin,
    with the default engine and with --engine numpy."""
    flags = [*EMU_FLAGS, "--engine", engine] if engine else EMU_FLAGS
    modules, out = _run("emu_entry", ["wave-emu", str(wbin), *flags], module="wavegpu.cli.resident")
    assert out.split() == ["0.0", "2.0", "4.0"]
    assert "wavegpu.emulator.machine" in modules
    assert _offending(modules, (*HEAVY, *NOT_FOR_A_WBIN)) == []


def test_wave_emu_on_assembly_adds_only_the_assembler() -> None:
    modules, out = _run("emu_main", ["wave-emu", str(EX / "vector_add.wave"), *EMU_FLAGS])
    assert out.split() == ["0.0", "2.0", "4.0"]
    assert "wavegpu.asm.assembler" in modules
    assert _offending(modules, tuple(b for b in NOT_FOR_A_WBIN if b != "wavegpu.asm")) == []


def test_wave_run_on_assembly_loads_neither_the_compiler_nor_rich_nor_numba() -> None:
    modules, out = _run("main", ["wave", "run", str(EX / "vector_add.wave"), *RUN_ARGS])
    assert out.splitlines()[-1] == "c[:3] = [0. 2. 4.]"
    allowed = ("wavegpu.asm", "wavegpu.runtime", "click")  # the assembler; pack and launch; the wave group
    assert {"wavegpu.runtime.launch", "wavegpu.runtime.buffers"} <= modules
    assert _offending(modules, tuple(b for b in NOT_FOR_A_WBIN if b not in allowed)) == []
    assert not _offending(modules, ("wavegpu.runtime.kernel", "wavegpu.runtime.progress"))


def test_wave_run_on_a_python_kernel_loads_the_compiler_but_not_rich_numba_or_the_backends() -> None:
    modules, out = _run("main", ["wave", "run", str(EX / "kernels" / "vector_add.py"), *RUN_ARGS])
    assert out.splitlines()[-1] == "c[:3] = [0. 2. 4.]"
    assert "wavegpu.compiler.frontends.python" in modules
    banned = ("numba", "llvmlite", "rich", "wavegpu.backends", "wavegpu.emulator.compiled.engine", "importlib.metadata")
    assert _offending(modules, banned) == []


def _state() -> tuple[bool, int]:
    return gc.isenabled(), gc.get_freeze_count()


@pytest.mark.parametrize("enabled", [True, False])
def test_commands_leave_the_collector_as_they_found_it(wbin: Path, enabled: bool) -> None:
    """The commands pause the collector for their start-up and freeze what it loaded for the run
    (cli.common.startup_gc); run in-process, they restore both, on success and on errors."""
    from click.testing import CliRunner

    from wavegpu.cli import emu_main, main

    runner = CliRunner()
    was = gc.isenabled()
    try:
        if not enabled:
            gc.disable()
        before = _state()
        assert before == (enabled, 0)
        cases = (
            (emu_main.command, [str(wbin), *EMU_FLAGS], 0),
            (emu_main.command, [str(wbin), "--grid", "x"], 2),  # usage error
            (emu_main.command, [str(wbin), "--device-memory", "16", "--fill-zero", "0:f32:8"], 1),  # too big
            (main, ["run", str(EX / "vector_add.wave"), *RUN_ARGS], 0),
            (main, ["run", str(EX / "vector_add.wave"), "--grid", "1", "a=iota:256"], 2),
        )
        for cmd, args, status in cases:
            r = runner.invoke(cmd, args)
            assert r.exit_code == status, (args, r.output)
            assert _state() == before, args
        for _, args, status in cases[:3]:  # the console script's path: emu_main() reads sys.argv
            with pytest.MonkeyPatch.context() as mp, runner.isolation(), pytest.raises(SystemExit) as e:
                mp.setattr(sys, "argv", ["wave-emu", *args])
                emu_main()
            assert (e.value.code or 0) == status, args
            assert _state() == before, args
    finally:
        gc.unfreeze()
        if was:
            gc.enable()


def test_the_run_itself_sees_the_start_up_frozen(wbin: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the start-up loaded is frozen and the collector is on while the kernel runs."""
    from click.testing import CliRunner

    import wavegpu.emulator
    from wavegpu.cli import emu_main

    seen: list[tuple[bool, int]] = []
    real = wavegpu.emulator.emulate

    def spy(*a: object, **kw: object) -> object:
        seen.append(_state())
        return real(*a, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(wavegpu.emulator, "emulate", spy)
    assert gc.isenabled() and gc.get_freeze_count() == 0
    r = CliRunner().invoke(emu_main.command, [str(wbin), *EMU_FLAGS])
    assert r.exit_code == 0, r.output
    assert len(seen) == 1 and seen[0][0] and seen[0][1] > 0
    assert _state() == (True, 0)


def _click_params(argv: list[str]) -> dict[str, object] | None:
    """wave-emu's parameters as its click command parses argv, None where click refuses it."""
    import click

    from wavegpu.cli.emu import emu_main

    try:
        with emu_main.command.make_context("wave-emu", list(argv)) as ctx:
            return dict(ctx.params)
    except (click.ClickException, click.exceptions.Exit):
        return None


def test_fast_parse_reads_every_command_line_as_click_or_declines(wbin: Path, tmp_path: Path) -> None:
    """wave-emu reads its flags without click (start-up); on every generated command line the
    fast parser either gives exactly click's parameters (defaults, types, ranges, repeats, the
    last of a repeated option, flags, `--opt=value`, the binary anywhere) or declines, and it
    never accepts what click refuses."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from wavegpu.cli.emu import OPTIONS, fast_parse

    folder = tmp_path / "folder"
    folder.mkdir()
    good_path = st.just(str(wbin))
    odd_path = st.sampled_from([str(EX / "vector_add.wave"), str(folder), str(tmp_path / "missing"), "", "-"])
    junk = st.one_of(
        st.sampled_from(["-1", "+3", " 7", "1_0", "0x10", "4294967296", "Auto", "", "--grid"]),
        st.text(alphabet="0123456789abxr:,=-_ ", max_size=8),
    )

    def good(o: object) -> st.SearchStrategy[str]:
        lo, hi, choices = o.lo, o.hi, o.choices  # type: ignore[attr-defined]
        if lo is not None:
            return st.integers(lo - 2, (hi if hi is not None else 1 << 33) + 2).map(str)
        if choices is not None:
            return st.sampled_from(choices)
        return st.sampled_from(["1,1,1", "4", "r3:256", "0:f32:4", "0:2", "x"])

    def option(o: object) -> st.SearchStrategy[list[str]]:
        flag = o.flag  # type: ignore[attr-defined]
        if o.is_flag:  # type: ignore[attr-defined]
            return st.sampled_from([[flag], [flag], [f"{flag}=1"]])
        value = st.one_of(good(o), good(o), good(o), junk)
        return st.one_of(value.map(lambda v: [flag, v]), value.map(lambda v: [f"{flag}={v}"]), st.just([flag]))

    odd = st.sampled_from([["--help"], ["-h"], ["--"], ["--gri", "1"], ["-x"]])
    options = st.lists(st.one_of(*(option(o) for o in OPTIONS), odd), max_size=6)
    paths = st.one_of(
        good_path.map(lambda p: [p]), good_path.map(lambda p: [p]), st.lists(st.one_of(good_path, odd_path), max_size=2)
    )
    line = st.tuples(options, paths, st.integers(0, 6)).map(
        lambda t: [x for o in t[0][: t[2]] for x in o] + t[1] + [x for o in t[0][t[2] :] for x in o]
    )
    accepted = [0]

    @settings(max_examples=400, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck), database=None)
    @given(line)
    def check(argv: list[str]) -> None:
        fast = fast_parse(argv)
        if fast is None:
            return
        accepted[0] += 1
        assert fast == _click_params(argv), argv

    check()
    assert accepted[0] > 50  # the generator reaches the fast parser's accepting paths
    # the decided cases, explicitly: defaults, repeats, the last value of a single option
    argv = [
        str(wbin),
        "--grid",
        "2",
        "--grid=4,1",
        "--set-reg",
        "r1:1",
        "--set-reg=r2:2",
        "--stats",
        "--registers",
        "8",
    ]
    assert fast_parse(argv) == _click_params(argv) is not None
    assert fast_parse([str(wbin)]) == _click_params([str(wbin)]) is not None
    for refused in ([str(wbin), "--registers", "0"], [str(wbin), "--engine", "jit"], [str(folder)], [str(wbin), "-h"]):
        assert fast_parse(refused) is None and _click_params(refused) is None, refused


# ---------------------------------------------------------------------------------------------
# the console script's exit (cli.resident.exit_now): as a normal exit, without the teardown
def _entry(code: str, argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run `code`, then the wave-emu console script's entry with argv, in a fresh interpreter."""
    env = {k: v for k, v in os.environ.items() if k not in ("WAVEGPU_SERVER", "WAVEGPU_ENGINE")}
    prog = f"import sys\nsys.argv = ['wave-emu', *sys.argv[1:]]\n{code}\nfrom wavegpu.cli.resident import emu_entry\nemu_entry()"
    return subprocess.run([sys.executable, "-c", prog, *argv], capture_output=True, text=True, env=env, cwd=cwd)


def test_the_console_script_exit_runs_atexit_handlers_and_delivers_all_output(wbin: Path, tmp_path: Path) -> None:
    flags = [f for f in EMU_FLAGS if f not in ("--dump-f32", "2048:3")]
    r = _entry(
        "import atexit\natexit.register(lambda: print('handler ran'))",
        [str(wbin), *flags, "--dump-u32", "0:768"],
        tmp_path,
    )
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 769 and lines[-1] == "handler ran"  # 768 words (a and b: iota, c = a + b), then the handler
    assert [float(np.uint32(int(v)).view(np.float32)) for v in lines[512:515]] == [0.0, 2.0, 4.0]


@pytest.mark.parametrize(
    "argv, status, needle",
    [
        (["--grid", "1,x"], 2, "--grid"),  # click's usage error
        (["--set-reg", "r2:2000000", "--set-reg", "r3:256", "--dump-u32", "0:1"], 1, "trap: out-of-bounds"),  # a trap
    ],
)
def test_the_console_script_exit_keeps_the_exit_status(
    wbin: Path, tmp_path: Path, argv: list[str], status: int, needle: str
) -> None:
    r = _entry("", [str(wbin), "--workgroup", "256", *argv], tmp_path)
    assert r.returncode == status and needle in r.stderr, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr


def test_the_console_script_exit_waits_for_a_running_thread(wbin: Path, tmp_path: Path) -> None:
    """A thread that is not a daemon still running at the end: Python's own exit, which waits."""
    code = (
        "import threading, time, pathlib\n"
        "def late():\n    time.sleep(2)\n    pathlib.Path('late.txt').write_text('done')\n"
        "threading.Thread(target=late).start()"
    )
    r = _entry(code, [str(wbin), *EMU_FLAGS], tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["0.0", "2.0", "4.0"]
    assert (tmp_path / "late.txt").read_text() == "done"


@pytest.mark.parametrize("chosen", [None, ("OPENBLAS_NUM_THREADS", "2"), ("OMP_NUM_THREADS", "3")])
def test_the_console_script_starts_no_blas_threads_unless_asked(
    wbin: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chosen: tuple[str, str] | None
) -> None:
    """cli.resident.one_blas_thread: OPENBLAS_NUM_THREADS=1 before NumPy is imported, unless
    the user set a thread count for OpenBLAS; seen from inside the command's process."""
    for variable in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS"):
        monkeypatch.delenv(variable, raising=False)
    if chosen:
        monkeypatch.setenv(*chosen)
    code = (
        "import atexit, os\n"
        "show = lambda: print('blas', os.environ.get('OPENBLAS_NUM_THREADS'), os.environ.get('OMP_NUM_THREADS'))\n"
        "atexit.register(show)\n"
        "import wavegpu.cli.resident\n"
        "assert 'numpy' not in sys.modules  # so the entry sets the variable before NumPy reads it"
    )
    r = _entry(code, [str(wbin), *EMU_FLAGS], tmp_path)
    assert r.returncode == 0, r.stderr
    *out, last = r.stdout.splitlines()
    assert out == ["0.0", "2.0", "4.0"]
    expect = {None: "blas 1 None", "OPENBLAS_NUM_THREADS": "blas 2 None", "OMP_NUM_THREADS": "blas None 3"}
    assert last == expect[chosen[0] if chosen else None]
