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

import pytest

import wavegpu as wg

EX = Path(__file__).resolve().parents[1] / "examples"

# never loaded by a small run of a .wbin: the compiled engine's translator and numba ("auto"
# decides a small launch before importing them), the compiler, the backends, rich (no terminal,
# no --stats), the runtime and the text tools, and standard modules nothing on the path needs
NOT_FOR_A_WBIN = (
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


def _run(entry: str, argv: list[str]) -> tuple[set[str], str]:
    """(modules loaded, stdout) after running a command's entry point in a fresh interpreter
    with stderr a pipe (no terminal) and the default engine ("auto")."""
    code = (
        f"import sys\nsys.argv = {argv!r}\nfrom wavegpu.cli import {entry}\n"
        f"try:\n    {entry}()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
        "loaded = sorted(sys.modules)\nimport json\nprint(json.dumps(loaded))"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("WAVEGPU_ENGINE", "FORCE_COLOR", "TTY_COMPATIBLE")}
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
    assert {"numpy", "wavegpu.emulator.machine", "wavegpu.emulator.compiled.select"} <= modules  # the probe sees
    assert _offending(modules, NOT_FOR_A_WBIN) == []


def test_wave_emu_on_assembly_adds_only_the_assembler() -> None:
    modules, out = _run("emu_main", ["wave-emu", str(EX / "vector_add.wave"), *EMU_FLAGS])
    assert out.split() == ["0.0", "2.0", "4.0"]
    assert "wavegpu.asm.assembler" in modules
    assert _offending(modules, tuple(b for b in NOT_FOR_A_WBIN if b != "wavegpu.asm")) == []


def test_wave_run_on_assembly_loads_neither_the_compiler_nor_rich_nor_numba() -> None:
    modules, out = _run("main", ["wave", "run", str(EX / "vector_add.wave"), *RUN_ARGS])
    assert out.splitlines()[-1] == "c[:3] = [0. 2. 4.]"
    allowed = ("wavegpu.asm", "wavegpu.runtime")  # the assembler; pack and launch
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
        for cmd, args, status in (
            (emu_main, [str(wbin), *EMU_FLAGS], 0),
            (emu_main, [str(wbin), "--grid", "x"], 2),  # usage error
            (emu_main, [str(wbin), "--device-memory", "16", "--fill-zero", "0:f32:8"], 1),  # too big
            (main, ["run", str(EX / "vector_add.wave"), *RUN_ARGS], 0),
            (main, ["run", str(EX / "vector_add.wave"), "--grid", "1", "a=iota:256"], 2),
        ):
            r = runner.invoke(cmd, args)
            assert r.exit_code == status, (args, r.output)
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
    r = CliRunner().invoke(emu_main, [str(wbin), *EMU_FLAGS])
    assert r.exit_code == 0, r.output
    assert len(seen) == 1 and seen[0][0] and seen[0][1] > 0
    assert _state() == (True, 0)
