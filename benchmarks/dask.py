"""A launch and a sweep on a Dask cluster (issue 27; docs/cluster.md) against one process: the
register-blocked SGEMM n^3 on the one-process compiled engine (all cores) and on a LocalCluster
of 1 and 2 single-threaded worker processes (WAVEGPU_THREADS=1) with several shard counts (the
overhead per shard), then a sweep of small launches (vector add) as wg.launch_many tasks against
a local loop. Every figure is the best of --repeat runs, measured in this run; the first launch
on a cluster (compiling the kernel in each worker) is reported apart.

    .venv/bin/python benchmarks/dask.py [--n 1024] [--sweep 1000] [--repeat 3]
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
# this file is named dask.py: the `import distributed` below must not find it
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]

import argparse  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402

import numpy as np  # noqa: E402

import wavegpu as wg  # noqa: E402

VECTOR_ADD = """
.kernel vadd
.registers 8
  mov.u32 r3, %ctaid.x
  mov.u32 r4, %ntid.x
  mul.lo.u32 r3, r3, r4
  mov.u32 r4, %tid.x
  add.u32 r3, r3, r4
  shl.b32 r3, r3, 2
  add.u32 r5, r0, r3
  ld.global.b32 r6, [r5]
  add.u32 r5, r1, r3
  ld.global.b32 r7, [r5]
  add.f32 r6, r6, r7
  add.u32 r5, r2, r3
  st.global.b32 [r5], r6
  ret
.end
"""


def best(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    out, times = None, []
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1024, help="SGEMM size (a multiple of 64)")
    ap.add_argument("--sweep", type=int, default=1000, help="small launches in the sweep")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    from distributed import Client, LocalCluster

    n = a.n
    text = (HERE / "kernels" / "sgemm_blocked.wave").read_text()
    prog = wg.assemble(text)
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((n, n)).astype(np.float32), rng.standard_normal((n, n)).astype(np.float32)
    mem = np.concatenate([A.ravel(), B.ravel(), np.zeros(n * n, np.float32), np.zeros(n, np.float32)])
    kw = dict(grid=(n // 64, n // 16), memory=mem, args=[0, 4 * n * n, 8 * n * n, n, 12 * n * n], engine="compiled")
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, load average {os.getloadavg()} at start")
    print(f"command: {' '.join(sys.argv)}")
    wg.launch(prog, **kw)  # type: ignore[arg-type]  # compiled and cached here
    t_local, ref = best(lambda: wg.launch(prog, **kw), a.repeat)  # type: ignore[arg-type]
    print(f"\nblocked SGEMM {n}^3 ({kw['grid'][0] * kw['grid'][1]} workgroups)")
    print(f"  one process, compiled engine, all cores: {t_local * 1e3:8.1f} ms")
    for workers in (1, 2):
        with (
            LocalCluster(
                processes=True,
                n_workers=workers,
                threads_per_worker=1,
                dashboard_address=":0",
                silence_logs=50,
                env={"WAVEGPU_THREADS": "1"},
            ) as cluster,
            Client(cluster) as client,
        ):
            t = time.perf_counter()
            wg.launch(prog, client=client, shards=workers, **kw)  # type: ignore[arg-type]
            print(
                f"  {workers} worker(s): first launch (compiles in each worker) {(time.perf_counter() - t) * 1e3:8.1f} ms"
            )
            for shards in sorted({workers, 4 * workers, 16 * workers, 64 * workers}):
                t_c, res = best(lambda s=shards: wg.launch(prog, client=client, shards=s, **kw), a.repeat)  # type: ignore[arg-type]
                same = np.array_equal(res.memory, ref.memory)  # type: ignore[attr-defined]
                print(
                    f"  {workers} worker(s) x 1 thread, {shards:3d} shards: {t_c * 1e3:8.1f} ms "
                    f"({t_local / t_c:4.2f}x the one-process run; bit-identical: {same})"
                )
            if workers == 2:
                small = wg.assemble(VECTOR_ADD)
                m = 4096
                runs = []
                for i in range(a.sweep):
                    x = np.full(m, i, np.float32)
                    runs.append(
                        dict(
                            prog=small,
                            grid=m // 64,
                            workgroup=64,
                            memory=np.concatenate([x, x, x]),
                            args=[0, 4 * m, 8 * m],
                            engine="numpy",
                        )
                    )
                t = time.perf_counter()
                local = [wg.launch(**r) for r in runs]  # type: ignore[arg-type]
                t_loop = time.perf_counter() - t
                t = time.perf_counter()
                got = dict(wg.launch_many(client, runs))
                t_many = time.perf_counter() - t
                same = all(np.array_equal(got[i].memory, local[i].memory) for i in range(a.sweep))
                print(f"\nsweep of {a.sweep} vector adds of {m} floats (NumPy engine)")
                print(f"  local loop:                        {t_loop * 1e3:8.1f} ms")
                print(
                    f"  launch_many on 2 workers x 1 thread: {t_many * 1e3:8.1f} ms ({t_loop / t_many:4.2f}x; bit-identical: {same})"
                )
    print(f"\nload average {os.getloadavg()} at the end")


if __name__ == "__main__":
    main()
