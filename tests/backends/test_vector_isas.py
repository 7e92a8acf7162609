"""The OpenCL (and SYCL) wave operations on every host: Intel's CPU runtime compiles sub-groups
for the host's vector ISA (SSE4.2: 4 f32 lanes, AVX2: 8, AVX-512: 16), and its float
reductions, missing built-ins and denormal handling differed by ISA, so `make test` was green on
one CI machine and red on another (issue 22: a wave's f32 min gave 0x3F800001 on an AVX-512
Xeon; forcing `CL_CONFIG_CPU_TARGET_ARCH=core-avx2` reproduces it on any x86 host). The runtime
reads its settings when the device starts, so each ISA runs in a fresh interpreter with the
setting in its environment: every CI machine, of either vendor, runs every behaviour."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from wavegpu.runtime import opencl, sycl

OK, WHY = opencl.available()
needs_opencl = pytest.mark.skipif(
    not OK or opencl.intel_library() is None, reason=f"no Intel OpenCL CPU runtime: {WHY}"
)
HERE = Path(__file__).resolve().parent

# (CL_CONFIG_CPU_TARGET_ARCH, what it stands for): the ISAs the runtime generates code for
HOSTS = [("corei7", "SSE4.2"), ("core-avx2", "AVX2"), ("skx", "AVX-512")]

SCRIPT = r"""
import json, sys
sys.path[:0] = sys.argv[1:4]
import numpy as np
import test_opencl as O
out = {}
def run(name, f):
    try:
        f()
        out[name] = "ok"
    except AssertionError as e:
        out[name] = "wrong: " + str(e)[:400]
    except Exception as e:
        out[name] = f"{type(e).__name__}: " + str(e)[-400:]
for op in ("min", "max"):
    run(f"nans {op}", lambda: O.test_a_wave_of_nans_reduces_to_nan(op))
run("wave operations", lambda: O.check_wave_ops("opencl", (8, 16, 32, 64), range(2)))
if sys.argv[4] == "sycl":
    run("sycl wave operations", lambda: O.check_wave_ops("sycl", (32,), range(1)))
print(json.dumps(out))
"""


def run_forced(arch: str, with_sycl: bool) -> dict[str, str]:
    """The wave checks in a fresh interpreter with the runtime's target ISA forced."""
    env = {**os.environ, "CL_CONFIG_CPU_TARGET_ARCH": arch}
    args = [str(HERE), str(HERE.parent / "emulator"), str(HERE.parent), "sycl" if with_sycl else "-"]
    r = subprocess.run([sys.executable, "-c", SCRIPT, *args], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@needs_opencl
@pytest.mark.parametrize("arch", [h[0] for h in HOSTS], ids=[h[1] for h in HOSTS])
def test_wave_operations_are_exact_on_every_vector_isa(arch: str) -> None:
    """NaN-skipping f32 min/max (-0 below +0, denormals kept), integer reductions, the prefix
    sum, votes and shuffles, in divergent code, at W = 8 to 64, bit for bit with the emulator
    under each ISA the runtime can target. SYCL (where it runs) at W = 32 on SSE4.2, where the
    runtime lacks the bitwise sub-group reductions: about 10 s of run-time compilation."""
    out = run_forced(arch, with_sycl=arch == "corei7" and sycl.available()[0])
    assert out and all(v == "ok" for v in out.values()), out


@needs_opencl
def test_the_forced_setting_reaches_the_runtime() -> None:
    """The runtime reads the variable at start-up (so the forced runs above are not the default
    ISA again): an ISA it does not know leaves no usable device, reported as a WaveError that
    names the setting, not a traceback."""
    env = {**os.environ, "CL_CONFIG_CPU_TARGET_ARCH": "no-such-cpu"}
    probe = "import wavegpu.runtime.opencl as o; print(o.available())"
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0 and "False" in r.stdout and "CL_CONFIG_CPU_TARGET_ARCH=no-such-cpu" in r.stdout, r


def test_binaries_built_under_other_settings_are_never_reused() -> None:
    """pyopencl's binary cache keys on device, options and source: the options name the runtime's
    settings, so a binary built for another ISA is never handed back (INVALID_BINARY, then a
    KeyError inside pyopencl 2026.1)."""
    plain = opencl.build_options({})
    avx2 = opencl.build_options({"CL_CONFIG_CPU_TARGET_ARCH": "core-avx2", "PATH": "/bin"})
    sse = opencl.build_options({"CL_CONFIG_CPU_TARGET_ARCH": "corei7"})
    assert plain == "-cl-std=CL3.0" and len({plain, avx2, sse}) == 3
    assert opencl.build_options({"CL_CONFIG_CPU_TARGET_ARCH": "corei7", "HOME": "/x"}) == sse
