"""Peak memory of emulator runs beside the device memory they emulate, on both engines.

    python benchmarks/emulator_memory.py [--quick] [--engines numpy,compiled]

Each case runs in a fresh subprocess per engine (so the peaks do not mix): the inputs are built
first, then one small launch of the same kernel warms the engine up (the compiled engine
translates the kernel there, or loads it from its cache; numba's compiler is not part of a
run's memory), then one `wg.emulate(..., engine=E)` call is measured by the resident set: peak
RSS during the call (VmHWM, reset before the call through /proc/self/clear_refs, which also
resets `getrusage().ru_maxrss`) minus the RSS before it. A second call is measured by
tracemalloc (NumPy reports its buffers there; numba's own allocations are not traced, so only
the RSS column is comparable across engines). Target (issue 16, point 4): a run's peak at most
3x the device memory plus a constant (one batch's working set); `x dev` is the ratio.
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import resource
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
ENGINES = ("numpy", "compiled")


def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"/proc/self/status has no {field}")


def _reset_hwm() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def build(case: str, log2: int) -> tuple[Any, Any, dict[str, Any], str]:
    """(program, memory image, emulate keywords, name) of one case at size 2**log2."""
    import numpy as np

    import wavegpu as wg

    n = 1 << log2
    if case == "vector add":
        prog = wg.assemble((ROOT / "examples" / "vector_add.wave").read_text())
        mem = np.concatenate([np.arange(n, dtype=np.float32), np.full(n, 2.0, np.float32), np.zeros(n, np.float32)])
        return prog, mem, dict(grid=n // 256, args=[0, 4 * n, 8 * n, n]), f"vector add 2^{log2}"
    if case == "sgemm":
        prog = wg.assemble((ROOT / "examples" / "sgemm_tiled.wave").read_text())
        mem = np.random.default_rng(0).standard_normal(3 * n * n).astype(np.float32)
        return prog, mem, dict(grid=(n // 16, n // 16), args=[0, 4 * n * n, 8 * n * n, n]), f"SGEMM 16x16 tiles {n}^3"
    if case == "reduction":
        prog = wg.assemble((ROOT / "examples" / "reduce.wave").read_text())
        x = np.random.default_rng(1).integers(0, 1000, n).astype(np.uint32)
        mem = np.concatenate([x, np.zeros(n // 256, np.uint32)])
        return prog, mem, dict(grid=n // 256, args=[0, 4 * n]), f"tree reduction 2^{log2}"
    raise SystemExit(f"unknown case {case!r}")


def build_call(log2: int) -> tuple[Any, tuple[Any, ...], dict[str, Any], str]:
    """A `@wg.kernel` call (examples/kernels/vector_add.py): packing, the run and the copy back."""
    import runpy

    import numpy as np

    fn = runpy.run_path(str(ROOT / "examples" / "kernels" / "vector_add.py"))["vector_add"]
    n = 1 << log2
    # np.full, not np.zeros: the caller's arrays are resident before the call (a calloc'd array
    # would become resident when the result is copied into it, and count as the run's)
    a, b, c = np.arange(n, dtype=np.float32), np.full(n, 2.0, np.float32), np.full(n, 0.0, np.float32)
    return fn, (a, b, c, n), dict(grid=n // 256), f"kernel call vector add 2^{log2}"


WARM_LOG2 = {"vector add": 8, "sgemm": 4, "reduction": 8, "call": 8}  # one workgroup: same driver


def measure(case: str, log2: int, engine: str) -> dict[str, object]:
    """Run one case in this (fresh) process; the figures as a dict."""
    import wavegpu as wg

    if case == "call":  # the SDK's path: device memory is the packed arrays (guard gaps aside)
        fn, fargs, call, name = build_call(log2)
        wfn, wargs, wcall, _ = build_call(WARM_LOG2[case])
        device = sum(x.nbytes for x in fargs if hasattr(x, "nbytes"))

        def run() -> Any:
            return fn(*fargs, engine=engine, **call)

        def warm_up() -> Any:
            return wfn(*wargs, engine=engine, **wcall)

    else:
        prog, mem, call, name = build(case, log2)
        wprog, wmem, wcall, _ = build(case, WARM_LOG2[case])
        device = int(mem.nbytes)

        def run() -> Any:
            return wg.emulate(prog, memory=mem, engine=engine, **call)

        def warm_up() -> Any:
            return wg.emulate(wprog, memory=wmem, engine=engine, **wcall)

    t0 = time.perf_counter()
    warm_up()
    warm = time.perf_counter() - t0
    gc.collect()
    exact = _reset_hwm()
    before = _status_kb("VmRSS")
    maxrss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    res = run()
    seconds = time.perf_counter() - t0
    peak = _status_kb("VmHWM")
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    ran = res.engine
    del res
    gc.collect()
    tracemalloc.start()
    run()
    traced = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {
        "name": name,
        "engine": ran,
        "device": device,
        "rss": (peak - before) * 1024 if exact else None,
        # ru_maxrss is reset with VmHWM; without the reset it only counts if the call set a new peak
        "maxrss": (maxrss - before) * 1024 if exact or maxrss > maxrss0 else None,
        "traced": traced,
        "seconds": seconds,
        "warm_seconds": warm,
    }


def run_case(case: str, log2: int, engine: str) -> dict[str, Any] | None:
    cmd = [sys.executable, __file__, "--one", case, str(log2), "--engines", engine]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if out.returncode:
        print(f"{case} 2^{log2} on {engine}: failed\n{out.stderr[-4000:]}", file=sys.stderr)
        return None
    r: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return r


def _mb(nbytes: int | None) -> str:
    return "?" if nbytes is None else f"{nbytes / 2**20:.1f}"


def _x(nbytes: int | None, device: int) -> str:
    return "?" if nbytes is None else f"{nbytes / device:.2f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="skip the largest sizes")
    ap.add_argument("--engines", default=",".join(ENGINES), help="comma-separated engines (default: both)")
    ap.add_argument("--cases", default=None, help="comma-separated CASE:LOG2 (default: the table of the docs)")
    ap.add_argument("--one", nargs=2, metavar=("CASE", "LOG2"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    engines = [e for e in args.engines.split(",") if e]
    if args.one:
        print(json.dumps(measure(args.one[0], int(args.one[1]), engines[0])))
        return
    if args.cases:
        cases = [(c.rpartition(":")[0], int(c.rpartition(":")[2])) for c in args.cases.split(",")]
    else:
        cases = [("vector add", 20), ("vector add", 22)]
        if not args.quick:
            cases.append(("vector add", 24))
        cases += [("sgemm", 8), ("sgemm", 9), ("reduction", 20), ("call", 22 if args.quick else 24)]
    print(
        f"# {platform.machine()}, {platform.python_implementation()} {platform.python_version()}, "
        f"{time.strftime('%Y-%m-%d %H:%M %Z')}; MB = 2^20 bytes; x dev = peak / device memory"
    )
    head = f"{'case':<26} {'device MB':>9}"
    for e in engines:
        head += f" | {e + ' RSS MB':>16} {'x dev':>5} {'maxrss':>7} {'traced MB':>9} {'x dev':>5} {'s':>6}"
    print(head)
    for case, log2 in cases:
        row = ""
        device = 0
        name = f"{case} 2^{log2}"
        for e in engines:
            r = run_case(case, log2, e)
            if r is None:
                row += f" | {'failed':>16} {'':>5} {'':>7} {'':>9} {'':>5} {'':>6}"
                continue
            device, name = r["device"], r["name"]
            ran = "" if r["engine"] == e else f" (ran {r['engine']})"
            row += (
                f" | {_mb(r['rss']) + ran:>16} {_x(r['rss'], device):>5} {_mb(r['maxrss']):>7} "
                f"{_mb(r['traced']):>9} {_x(r['traced'], device):>5} {r['seconds']:6.2f}"
            )
        print(f"{name:<26} {device / 2**20:9.1f}{row}", flush=True)


if __name__ == "__main__":
    main()
