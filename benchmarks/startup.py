"""Whole-process start-up of the commands on a small kernel, beside Python and NumPy alone.

    python benchmarks/startup.py [--runs N] [--no-bytecode-cache] [--importtime NAME] [--against SRC]

Each command runs N times in a fresh process, the commands interleaved round by round (so a
change of load on the machine hits all of them alike); printed: the median and the best wall
time, and the median CPU time (user + system of the child), in ms. The kernel is the 256-thread
vector add (examples/vector_add.wave, its .wbin, and the Python kernel
examples/kernels/vector_add.py), one workgroup.

Python's bytecode cache: an installed wavegpu has its .pyc files (pip writes them); a checkout
run with PYTHONDONTWRITEBYTECODE=1 compiles every module from source on every start. By default
the commands run with a private PYTHONPYCACHEPREFIX (filled by one warm-up run of each), so the
figures are an installed package's; --no-bytecode-cache keeps the environment as it is.
`--server` also runs every command with WAVEGPU_SERVER=1 (the resident process of cli/resident.py,
started by the warm-up, stopped at the end). `--importtime NAME` prints the modules that cost most in one run of that command
(`python -X importtime`, self time, best of 5 runs). `--against SRC` also runs every command
with PYTHONPATH=SRC (another checkout's `src`, e.g. from `git archive`), interleaved with this
tree's runs, and prints both: a before/after comparison under the same load.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EX = ROOT / "examples"


def _script(name: str) -> list[str]:
    """A console script of this environment (bin/wave-emu), else the same entry through -c."""
    exe = Path(sys.executable).parent / name
    if exe.exists():
        return [str(exe)]
    entry = {"wave": "main", "wave-emu": "emu_main"}[name]
    return [sys.executable, "-c", f"import sys; sys.argv[0] = {name!r}; from wavegpu.cli import {entry}; {entry}()"]


def commands(tmp: Path) -> dict[str, list[str]]:
    """name -> argv of every measured command (the .wbin is written into tmp)."""
    import wavegpu as wg

    wbin = tmp / "vector_add.wbin"
    wbin.write_bytes(wg.assemble((EX / "vector_add.wave").read_text()).to_bytes())
    py = sys.executable
    emu_flags = [
        "--grid", "1", "--workgroup", "256",
        "--set-reg", "r1:1024", "--set-reg", "r2:2048", "--set-reg", "r3:256",
        "--fill-iota", "0:f32:256", "--fill-iota", "1024:f32:256", "--dump-f32", "2048:4",
    ]  # fmt: skip
    n = 1 << 20
    big_flags = [
        "--device-memory", str(16 << 20), "--grid", str(n // 256), "--workgroup", "256",
        "--set-reg", f"r1:{4 * n}", "--set-reg", f"r2:{8 * n}", "--set-reg", f"r3:{n}",
        "--fill-iota", f"0:f32:{n}", "--fill-iota", f"{4 * n}:f32:{n}", "--dump-f32", f"{8 * n}:4",
    ]  # fmt: skip
    run_args = ["--grid", "1", "a=iota:256", "b=iota:256", "c=zeros:256", "n=256", "--print", "c:4"]
    return {
        "python -c pass": [py, "-c", "pass"],
        "python -c 'import numpy'": [py, "-c", "import numpy"],
        "python -c 'import wavegpu'": [py, "-c", "import wavegpu"],
        "wave-emu vector_add.wbin": [*_script("wave-emu"), str(wbin), *emu_flags],
        "wave-emu vector_add.wave": [*_script("wave-emu"), str(EX / "vector_add.wave"), *emu_flags],
        "wave run vector_add.wave": [*_script("wave"), "run", str(EX / "vector_add.wave"), *run_args],
        "wave run vector_add.py": [*_script("wave"), "run", str(EX / "kernels" / "vector_add.py"), *run_args],
        # issue 16's whole-process row (the Rust emulator: 95 ms on this machine, quoted)
        "wave-emu vector add 2^20": [*_script("wave-emu"), str(wbin), *big_flags],
    }


def run_once(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one run of argv to completion."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode:
        raise SystemExit(f"{' '.join(argv)} failed ({r.returncode}):\n{r.stderr.decode(errors='replace')}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def importtime(argv: list[str], env: dict[str, str], top: int = 30) -> list[tuple[float, str]]:
    """The `top` modules by self import time (ms), best of 5 runs of argv under -X importtime."""
    best: dict[str, int] = {}
    for _ in range(5):
        r = subprocess.run(
            argv, env={**env, "PYTHONPROFILEIMPORTTIME": "1"}, capture_output=True, text=True, check=False
        )
        for line in r.stderr.splitlines():
            m = re.match(r"import time:\s+(\d+) \|\s+\d+ \|\s*(\S+)", line)
            if m:
                best[m[2]] = min(best.get(m[2], 1 << 60), int(m[1]))
    total = sum(best.values()) / 1e3
    rows = sorted(((us / 1e3, name) for name, us in best.items()), reverse=True)
    return [(total, "(all modules)"), *rows[:top]]


def wait_for_server(env: dict[str, str]) -> str:
    """Wait until the server the first WAVEGPU_SERVER=1 run started listens; its lock file."""
    code = "from wavegpu.cli.resident import socket_path; print(socket_path())"
    path = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    path = path.strip()
    if path == "None":
        raise SystemExit("--server: the cache folder's path is too long for a Unix socket")
    deadline = time.monotonic() + 60
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            raise SystemExit(f"--server: no server on {path} after 60 s")
        time.sleep(0.2)
    return path + ".lock"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=15, help="runs of each command (default 15)")
    ap.add_argument("--no-bytecode-cache", action="store_true", help="run with the environment as it is")
    ap.add_argument("--importtime", metavar="NAME", help="print the costliest imports of this command")
    ap.add_argument("--against", metavar="SRC", help="also time another tree's src folder (PYTHONPATH)")
    ap.add_argument("--server", action="store_true", help="also time the commands with WAVEGPU_SERVER=1")
    args = ap.parse_args()
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        if not args.no_bytecode_cache:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
        cmds = commands(tmp)
        if args.importtime:
            if args.importtime not in cmds:
                raise SystemExit(f"--importtime: one of {', '.join(map(repr, cmds))}")
            run_once(cmds[args.importtime], env)  # bytecode cache
            for ms, name in importtime(cmds[args.importtime], env):
                print(f"{ms:8.2f} ms  {name}")
            return
        envs = {"": env}
        if args.against:
            other = str(Path(args.against).resolve())
            envs = {"this tree": env, other: {**env, "PYTHONPATH": other, "PYTHONPYCACHEPREFIX": str(tmp / "pyc2")}}
        if args.server:
            envs["WAVEGPU_SERVER=1"] = {**env, "WAVEGPU_SERVER": "1"}
        for e in envs.values():
            for argv in cmds.values():  # warm-up: bytecode cache, page cache (and a server started)
                run_once(argv, e)
        if args.server:
            lock = wait_for_server(envs["WAVEGPU_SERVER=1"])
            for argv in cmds.values():  # the server's first commands (its own imports)
                run_once(argv, envs["WAVEGPU_SERVER=1"])
        times: dict[tuple[str, str], list[tuple[float, float]]] = {(t, n): [] for n in cmds for t in envs}
        for _ in range(args.runs):
            for name, argv in cmds.items():
                for tree, e in envs.items():
                    times[tree, name].append(run_once(argv, e))
    if args.server:
        os.kill(int(Path(lock).read_text()), 15)
    import numpy as np

    load = os.getloadavg()
    print(
        f"# {platform.machine()}, {os.cpu_count()} CPUs, load {load[0]:.2f} {load[1]:.2f}; "
        f"CPython {platform.python_version()}, NumPy {np.__version__}; "
        f"{'bytecode cached' if not args.no_bytecode_cache else 'bytecode as the environment has it'}; "
        f"{time.strftime('%Y-%m-%d %H:%M %Z')}; {args.runs} runs each"
    )
    print(f"{'command':<30} {'median ms':>10} {'best ms':>8} {'CPU ms':>7}  tree")
    for (tree, name), ts in times.items():
        walls = [w for w, _ in ts]
        cpus = [c for _, c in ts]
        print(
            f"{name:<30} {statistics.median(walls) * 1e3:10.1f} {min(walls) * 1e3:8.1f} "
            f"{statistics.median(cpus) * 1e3:7.1f}  {tree}"
        )


if __name__ == "__main__":
    main()
