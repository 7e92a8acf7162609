"""Peak memory of emulator runs beside the device memory they emulate.

    python benchmarks/emulator_memory.py [--quick] [--engine ENGINE]

Each case runs in a fresh subprocess (so the peaks do not mix): the inputs are built first, then
one `wg.emulate` call is measured by the resident set size (peak RSS of the process during
the call minus the RSS before it, from /proc/self/status VmHWM after resetting it where the
kernel allows), then a second by tracemalloc (NumPy reports its buffers there; peak of the call
alone). Target (issue 16, point 4): peak at most 3x the device memory plus a constant (one
batch's working set).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _rss_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _reset_hwm() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def measure(case: str, log2: int, engine: str | None) -> dict[str, object]:
    """Run one case in this process; the figures as a dict."""
    import numpy as np

    import wavegpu as wg

    kw: dict[str, object] = {} if engine is None else {"engine": engine}
    if case == "vector add":
        prog = wg.assemble((ROOT / "examples" / "vector_add.wave").read_text())
        n = 1 << log2
        mem = np.concatenate([np.arange(n, dtype=np.float32), np.full(n, 2.0, np.float32), np.zeros(n, np.float32)])
        call = dict(grid=n // 256, memory=mem, args=[0, 4 * n, 8 * n, n])
        name = f"vector add 2^{log2}"
    elif case == "sgemm":
        prog = wg.assemble((ROOT / "examples" / "sgemm_tiled.wave").read_text())
        n = 1 << log2
        rng = np.random.default_rng(0)
        mem = rng.standard_normal(3 * n * n).astype(np.float32)
        call = dict(grid=(n // 16, n // 16), memory=mem, args=[0, 4 * n * n, 8 * n * n, n])
        name = f"SGEMM 16x16 tiles {n}^3"
    elif case == "reduction":
        prog = wg.assemble((ROOT / "examples" / "reduce.wave").read_text())
        n = 1 << log2
        x = np.random.default_rng(1).integers(0, 1000, n).astype(np.uint32)
        mem = np.concatenate([x, np.zeros(n // 256, np.uint32)])
        call = dict(grid=n // 256, memory=mem, args=[0, 4 * n])
        name = f"tree reduction 2^{log2}"
    else:
        raise SystemExit(f"unknown case {case!r}")
    device = mem.nbytes
    # resident set first, in this fresh process (a heap that earlier runs grew would hide it)
    exact = _reset_hwm()
    before = _rss_kb("VmRSS")
    base_peak = _rss_kb("VmHWM")
    wg.emulate(prog, **call, **kw)
    peak = _rss_kb("VmHWM")
    rss = (peak - before) * 1024 if exact or peak > base_peak else None
    tracemalloc.start()
    wg.emulate(prog, **call, **kw)
    traced = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {"name": name, "device": device, "traced": traced, "rss": rss}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="skip the largest sizes")
    ap.add_argument("--engine", default=None, help="emulate(engine=...) where the emulator offers engines")
    ap.add_argument("--one", nargs=2, metavar=("CASE", "LOG2"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(measure(args.one[0], int(args.one[1]), args.engine)))
        return
    cases = [("vector add", 20), ("vector add", 22)]
    if not args.quick:
        cases.append(("vector add", 24))
    cases += [("sgemm", 8), ("sgemm", 9), ("reduction", 20)]
    print(f"{'case':<28} {'device MB':>10} {'traced MB':>10} {'x dev':>6} {'RSS MB':>8} {'x dev':>6}")
    for case, log2 in cases:
        cmd = [sys.executable, __file__, "--one", case, str(log2)]
        if args.engine:
            cmd += ["--engine", args.engine]
        out = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if out.returncode:
            print(f"{case} 2^{log2}: failed\n{out.stderr}", file=sys.stderr)
            continue
        r = json.loads(out.stdout.strip().splitlines()[-1])
        dev = r["device"] / 2**20
        traced = r["traced"] / 2**20
        rss = "?" if r["rss"] is None else f"{r['rss'] / 2**20:8.1f}"
        rss_x = "?" if r["rss"] is None else f"{r['rss'] / r['device']:6.2f}"
        print(f"{r['name']:<28} {dev:10.1f} {traced:10.1f} {traced / dev:6.2f} {rss:>8} {rss_x:>6}", flush=True)


if __name__ == "__main__":
    main()
