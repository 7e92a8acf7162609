"""Which engine runs a launch: `engine="numpy"` (the reference, with checker and statistics),
`"compiled"` (this package; a clear WaveError when it cannot), or `"auto"` (compiled where it
can run the launch and it pays: the translation is cached, or the launch is large enough to
repay a first compile; the NumPy engine otherwise, and also, with an EngineWarning, when the
translation fails to compile)."""

from __future__ import annotations

import os
import sys
import warnings
from typing import TYPE_CHECKING

from ...errors import EngineWarning, WaveError
from ...isa.vocabulary import Op
from . import available

if TYPE_CHECKING:
    from collections.abc import Callable

    from ...wbin.program import Kernel
    from ..machine import Launch, Memory

ENGINES = ("numpy", "compiled", "auto")

AUTO_MIN_WORK = 1 << 26
"""Under "auto", a kernel not yet translated is translated when its work (`work`) reaches this:
a first translation costs seconds (docs/emulator.md), in which the NumPy engine runs about
2**26 lane-instructions."""
AUTO_MIN_CACHED = 1 << 20
"""Under "auto", a kernel already translated runs compiled from this much work on, in a process
that has loaded numba or a C translation already (`warm`; smaller launches take less on NumPy)."""
AUTO_MIN_COLD = 1 << 28
"""The same in a process that has not: importing numba and loading a translation from disk
take 0.35-0.45 s, in which the NumPy engine runs 2**28 lane-instructions or so (`wave-emu` on
vector add 2^20 took 0.45 s compiled and 0.14 s on NumPy, whole process)."""
LOOP_WEIGHT = 16
"""How often `work` counts an instruction inside a loop per level of nesting (trip counts are
run-time values; a GEMM's inner loop would otherwise count once)."""


def warm() -> bool:
    """Whether this process has the compiled engine loaded already: numba imported, or a C
    translation loaded (looked up without importing anything)."""
    if "numba" in sys.modules:
        return True
    cbuild = sys.modules.get("wavegpu.emulator.compiled.cbuild")
    return cbuild is not None and bool(getattr(cbuild, "_LOADED", None))


def default_engine() -> str:
    """$WAVEGPU_ENGINE when set to one of ENGINES, else "auto"."""
    env = os.environ.get("WAVEGPU_ENGINE", "").strip().lower()
    return env if env in ENGINES else "auto"


def work(k: Kernel, launch: Launch) -> int:
    """An estimate of a launch's lane-instructions: threads times the kernel's instructions,
    each counted LOOP_WEIGHT times per loop around it."""
    depth = total = 0
    for inst in k.instructions:
        op = inst.spec.op
        if op is Op.ENDLOOP:
            depth -= 1
        total += LOOP_WEIGHT ** max(depth, 0)
        if op is Op.LOOP:
            depth += 1
    g, w = launch.grid, launch.workgroup
    return g[0] * g[1] * g[2] * w[0] * w[1] * w[2] * total


def why_not(k: Kernel, launch: Launch) -> str | None:
    """Why the compiled engine cannot run this launch, or None."""
    if launch.check:
        return "check=True runs the checker, which is part of the NumPy engine"
    if launch.zero_division:
        return "zero_division=True (trapping integer division by zero) is checked by the NumPy engine"
    if not available():
        return (
            "neither a C compiler (cc, gcc or clang on PATH) nor numba (pip install 'wavegpu[compiled]') is "
            "available"
            + (f" for WAVEGPU_COMPILED={os.environ['WAVEGPU_COMPILED']}" if os.environ.get("WAVEGPU_COMPILED") else "")
        )
    from .codegen import unsupported_reason

    return unsupported_reason(k)


def try_compiled(
    engine: str | None,
    k: Kernel,
    launch: Launch,
    dev: Memory,
    const: Memory,
    progress: Callable[[int, int], None] | None,
    keep_input: bool = False,
    span: tuple[int, int] | None = None,
) -> bool | None:
    """Run the launch on the compiled engine when `engine` asks for it: None when it did not run
    (device memory untouched), True when it finished, False when it stopped at a trap or the
    instruction budget (device memory is then undefined: the caller re-runs on the NumPy
    engine, which reports the error exactly). With `keep_input` (a donated image with no way to
    restore it), a copy of device memory is taken just before the compiled engine runs and
    written back when it stops, so the re-run starts from the input."""
    engine = default_engine() if engine is None else engine
    if engine not in ENGINES:
        raise WaveError(f"engine must be one of {', '.join(map(repr, ENGINES))}, not {engine!r}")
    if engine == "numpy":
        return None
    n = 0
    if engine == "auto":
        n = work(k, launch)
        # decided before anything imports the translator or numba (start-up)
        if n < AUTO_MIN_CACHED or (n < AUTO_MIN_COLD and not warm()):
            return None
    reason = why_not(k, launch)
    if reason is not None:
        if engine == "compiled":
            raise WaveError(f"engine='compiled' cannot run kernel {k.name!r}: {reason}")
        return None
    from .codegen import Shape
    from .engine import CompileFailed, cached, execute

    shape = Shape(launch.wave_width, launch.workgroup)
    try:
        if engine == "auto" and n < AUTO_MIN_WORK and not cached(k, shape):
            return None
        saved = dev.u8.copy() if keep_input else None
        ok = execute(k, shape, launch.grid, launch.args, dev, const, launch.bounds, launch.max_instructions, span)
        if not ok and saved is not None:
            dev.u8[:] = saved
        del saved
    except CompileFailed as e:  # before any workgroup ran: device memory untouched
        if engine == "compiled":
            raise WaveError(
                f"engine='compiled' cannot run kernel {k.name!r}: its translation failed to compile ({e})"
            ) from None
        warnings.warn(
            f"kernel {k.name!r}: the compiled engine failed to compile it ({e}); running it on the NumPy engine",
            EngineWarning,
            stacklevel=2,
        )
        return None
    if ok and progress is not None:  # one report, at the end (the workgroups ran on all cores)
        n_wg = launch.grid[0] * launch.grid[1] * launch.grid[2]
        progress(n_wg, n_wg)
    return ok
