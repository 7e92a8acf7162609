"""Start-up: `import wavegpu` and the `wave-emu` command load neither the compiler, the backends,
rich nor a GPU runtime (checked in fresh interpreters through sys.modules, not timed)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import wavegpu as wg

EX = Path(__file__).resolve().parents[2] / "examples"
HEAVY = ("wavegpu.compiler", "wavegpu.backends", "wavegpu.codegen", "rich", "pyopencl", "numba", "cupy", "pycuda")


def _loaded(code: str) -> list[str]:
    """The heavy modules loaded after running `code` in a fresh interpreter."""
    probe = (
        f"{code}\nimport json, sys\n"
        f"print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r} "
        f"or m.startswith({HEAVY!r}))))"
    )
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_import_wavegpu_is_light() -> None:
    assert _loaded("import wavegpu") == []


def test_wave_emu_runs_a_kernel_without_the_compiler_backends_or_rich(tmp_path: Path) -> None:
    wbin = tmp_path / "vadd.wbin"
    wbin.write_bytes(wg.assemble((EX / "vector_add.wave").read_text()).to_bytes())
    argv = ["wave-emu", str(wbin), "--grid", "1", "--workgroup", "256", "--set-reg", "r3:256", "--dump-u32", "0:2"]
    code = (
        f"import sys\nsys.argv = {argv!r}\nfrom wavegpu.cli import emu_main\n"
        "try:\n    emu_main()\nexcept SystemExit as e:\n    assert not e.code, e.code"
    )
    assert _loaded(code) == []


def test_every_lazy_export_resolves() -> None:
    from wavegpu.runtime import pyexec

    missing = sorted(set(pyexec.__all__) - set(wg._EXPORTS))
    assert not missing, f"kernel builtins missing from wavegpu._EXPORTS: {missing}"
    for name in wg.__all__:
        assert getattr(wg, name) is not None, name
    assert wg.emulate is wg.emulator.emulate and wg.isa.ISA_VERSION == wg.ISA_VERSION
    assert set(wg.__all__) <= set(dir(wg))
    try:
        wg.no_such_name  # noqa: B018
    except AttributeError as e:
        assert "no_such_name" in str(e)
    else:
        raise AssertionError("a missing name must raise AttributeError")
