"""Launches on a Dask cluster (issue 27; docs/cluster.md): one launch's workgroups in shards on
the workers, merged into the bits of a one-process run, and many launches as tasks whose
results stream back as they finish.

A shard is a pure task (kernel, the scattered input image, a range of workgroups -> the bytes
it changed), so Dask may run it again on another worker when one is lost: the merged result is
the same. The merge, in workgroup order: a byte changed by one shard takes that shard's value;
a byte two shards changed to different values is a data race across workgroups (a Trap naming
the kernel, both workgroups and the address under check=True; otherwise the later shard in
workgroup order wins). A kernel whose global atomics are all of one order-free kind (integer
add, sub, min, max, and, or, xor with the old value unread: `codegen.ordered_reason`, `opsgen.rmw`)
has the words several shards changed merged by that operation (sum of deltas, min, max, ...),
which is exactly the one-process result; any other global atomic runs the launch as one task on
one worker in workgroup order (`ClusterResult.ordered` says why)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..emulator import EmulationResult, Stats, emulate
from ..emulator.compiled.codegen import ordered_reason
from ..emulator.compiled.opsgen import rmw
from ..emulator.launch import DEFAULT_MAX_INSTRUCTIONS, new_memory
from ..errors import Trap, WaveError
from ..isa.table import InstrSpec
from ..isa.types import DataType
from ..isa.vocabulary import AtomOp, Op
from ..wbin.program import Kernel

INSTALL = "pip install 'wavegpu[dask]'"
SHARDS_PER_WORKER = 4
"""Shards per worker when `shards` is not given: a lost worker costs a quarter of its share, and
a slow one is balanced by the others."""


@dataclass
class ClusterResult(EmulationResult):
    """An EmulationResult from a cluster: `shards` (tasks the launch ran as), `ordered` (why it
    ran as one task in workgroup order, or None), `atomic` (the order-free atomic whose words the
    merge combined, e.g. "atom.global.add.u32", or None)."""

    shards: int = 1
    ordered: str | None = None
    atomic: str | None = None


def distributed() -> Any:
    """The `distributed` module, or a WaveError saying how to install it."""
    try:
        import distributed as dist
    except ImportError:
        raise WaveError(f"client= runs on a Dask cluster, and Dask is not installed: {INSTALL}") from None
    return dist


def connect(address: str, timeout: float = 10.0) -> Any:
    """A Client of the scheduler at `address` (`wave run --scheduler`), or a WaveError naming it."""
    dist = distributed()
    try:
        return dist.Client(address, timeout=timeout)
    except (OSError, TimeoutError, ValueError) as e:
        raise WaveError(f"cannot reach the Dask scheduler at {address!r}: {e}") from None


def _check_client(client: object) -> Any:
    dist = distributed()
    if not isinstance(client, dist.Client):
        raise WaveError(f"client= takes a dask.distributed.Client, not {type(client).__name__}")
    return dist


# ------------------------------------------------------------------ worker side (pure functions)
def _trap_fields(t: Trap) -> tuple[type[Trap], dict[str, Any]]:
    return type(t), {f.name: getattr(t, f.name) for f in dataclasses.fields(t)}


def _shard(k: Kernel, image: np.ndarray, first: int, last: int, opts: dict[str, Any]) -> tuple[Any, ...]:
    """Run workgroups first..last-1 on the image: ("ok", changed byte addresses, their values) or
    ("trap", Trap class, its fields) (a Trap is rebuilt whole on the client)."""
    try:
        res = emulate(k, memory=image, workgroups=(first, last), **opts)
    except Trap as t:
        return ("trap", *_trap_fields(t))
    m = res.memory
    idx = np.flatnonzero(m != image)
    return ("ok", idx.astype(np.int64), m[idx].copy())


def _whole(k: Kernel, image: np.ndarray, opts: dict[str, Any]) -> tuple[Any, ...]:
    """The whole launch in workgroup order: ("ok", memory) or ("trap", ...)."""
    try:
        return ("ok", emulate(k, memory=image, **opts).memory.copy())
    except Trap as t:
        return ("trap", *_trap_fields(t))


def _writer(k: Kernel, image: np.ndarray, first: int, last: int, addr: int, opts: dict[str, Any]) -> int:
    """The first workgroup of first..last-1 that, run alone on the image, changes byte addr."""
    for w in range(first, last):
        res = emulate(k, memory=image, workgroups=(w, w + 1), **opts)
        if res.memory[addr] != image[addr]:
            return w
    return first


def _launch_one(kw: dict[str, Any]) -> tuple[Any, ...]:
    from .launch import launch

    try:
        return ("ok", launch(**kw))
    except Trap as t:
        return ("trap", *_trap_fields(t))


def _unwrap(out: tuple[Any, ...]) -> Any:
    if out[0] == "trap":
        raise out[1](**out[2])
    return out[1] if len(out) == 2 else out[1:]


# ------------------------------------------------------------------ the client side
def atomic_kind(k: Kernel) -> tuple[InstrSpec | None, str | None]:
    """(the one order-free global atomic the merge combines, or None; why the launch must run in
    workgroup order, or None)."""
    reason = ordered_reason(k)
    if reason is not None:
        return None, reason
    rows = {i.spec.key: i.spec for i in k.instructions if i.spec.op in (Op.ATOM, Op.RED) and rmw(i.spec) is not None}
    kinds = {(r.variant, r.dtype is DataType.S32) for r in rows.values()}
    if len(kinds) > 1:
        return None, f"global atomics of several kinds ({', '.join(sorted(rows))}): their words cannot be told apart"
    return (next(iter(rows.values())) if rows else None), None


def _linear_to_xyz(w: int, grid: tuple[int, int, int]) -> tuple[int, int, int]:
    return w % grid[0], w // grid[0] % grid[1], w // (grid[0] * grid[1])


def _fold(spec: InstrSpec, acc: np.ndarray, base: np.ndarray, final: np.ndarray) -> np.ndarray:
    """Words as merged so far (`acc`), folded with one more shard's final values of them (that
    shard started from `base`) as the order-free atomic `spec` combines: sum of deltas for add
    and sub, xor of changes for xor, and, or, min, max of the values (exactly the one-process
    result, whatever the order of the shards)."""
    op = spec.variant
    if op in (AtomOp.ADD, AtomOp.SUB):
        return acc + (final - base)  # uint32: wraps
    if op is AtomOp.XOR:
        return acc ^ (final ^ base)
    if op is AtomOp.AND:
        return acc & final
    if op is AtomOp.OR:
        return acc | final
    if op in (AtomOp.MIN, AtomOp.MAX):
        signed = spec.dtype is DataType.S32
        a, b = (acc.view(np.int32), final.view(np.int32)) if signed else (acc, final)
        return (np.minimum(a, b) if op is AtomOp.MIN else np.maximum(a, b)).view(np.uint32)
    raise AssertionError(spec.key)  # atomic_kind names rmw rows only


def _merge(
    k: Kernel,
    image: np.ndarray,
    parts: list[tuple[int, int, np.ndarray, np.ndarray]],
    atomic: InstrSpec | None,
    check: bool,
    race: Any,
) -> np.ndarray:
    """The shards' writes on the image, in workgroup order (module docstring)."""
    out = image.copy()
    owner = np.full(image.size, -1, dtype=np.int32)
    for s, (_, _, idx, vals) in enumerate(parts):
        prev = owner[idx]
        clash = (prev >= 0) & (out[idx] != vals)
        if check and atomic is None and clash.any():
            at = int(np.flatnonzero(clash)[0])
            race(int(prev[at]), s, int(idx[at]), int(out[idx[at]]), int(vals[at]))
        out[idx] = vals
        owner[idx] = s
    if atomic is None or not parts:
        return out
    # the words that several shards changed: folded as the atomic does
    changed = [np.unique(idx // 4) for _, _, idx, _ in parts]
    words, count = np.unique(np.concatenate(changed), return_counts=True)
    multi = words[count > 1]
    if not multi.size:
        return out
    padded = np.zeros(-(-image.size // 4) * 4, dtype=np.uint8)
    padded[: image.size] = image
    base32 = padded.view(np.uint32)
    acc = base32[multi].copy()
    for mine, (_, _, idx, vals) in zip(changed, parts):
        final = base32[mine].copy()
        final.view(np.uint8)[np.searchsorted(mine, idx // 4) * 4 + idx % 4] = vals
        keep = np.isin(mine, multi)
        at = np.searchsorted(multi, mine[keep])
        acc[at] = _fold(atomic, acc[at], base32[mine[keep]], final[keep])
    merged = np.zeros_like(padded)
    merged[: image.size] = out
    merged.view(np.uint32)[multi] = acc
    return merged[: image.size].copy()


def shard_bounds(n_wg: int, shards: int) -> list[tuple[int, int]]:
    """`shards` ranges of consecutive workgroups (as even as can be), none empty."""
    n = max(1, min(shards, n_wg))
    cut = [n_wg * i // n for i in range(n + 1)]
    return [(cut[i], cut[i + 1]) for i in range(n)]


def run_job(job: Any) -> ClusterResult:
    """THE emulator's launch on the cluster `job.client` (devices._run_emulator with client=):
    the image scattered to the workers once, the shards as tasks, their writes merged."""
    client = job.client
    dist = _check_client(client)
    if job.donate:
        raise WaveError("donate=True runs in the caller's array, which a cluster cannot: leave it out with client=")
    k: Kernel = job.kernel
    g = job.grid
    n_wg = g[0] * g[1] * g[2]
    mem = new_memory(job.memory, "global")
    image = mem.u8[: mem.size]
    opts = {
        "grid": g,
        "workgroup": job.workgroup,
        "args": list(job.args),
        "wave_width": job.wave_width,
        "check": job.check,
        "constants": job.constants,
        "max_instructions": job.max_instructions or DEFAULT_MAX_INSTRUCTIONS,
        "buffers": job.buffers,
        "boundscheck": job.boundscheck,
        "zero_division": job.zero_division,
        "engine": job.engine,
    }
    # the argument and shape errors of a local run, here, before anything is sent
    emulate(k, memory=0, workgroups=(0, 0), **{**opts, "buffers": None, "boundscheck": False, "engine": "numpy"})
    atomic, ordered = atomic_kind(k)
    shards = job.shards
    if shards is None:
        shards = SHARDS_PER_WORKER * max(1, len(client.scheduler_info()["workers"]))
    elif not isinstance(shards, int) or isinstance(shards, bool) or shards < 1:
        raise WaveError(f"shards must be a positive int, not {shards!r}")
    bounds = [(0, n_wg)] if ordered is not None else shard_bounds(n_wg, shards)
    [img] = client.scatter([image], broadcast=True, hash=False)
    stats = Stats(
        wave_width=job.wave_width,
        workgroups=n_wg,
        threads=n_wg * job.workgroup[0] * job.workgroup[1] * job.workgroup[2],
        registers=k.registers,
        local_memory=k.local_memory,
    )
    bar = None
    if job.progress:
        from rich.console import Console

        from .progress import RunProgress

        bar = RunProgress(n_wg, Console(stderr=True), enabled=True)
    report = None if bar is None else bar.callback
    try:
        if bar is not None:
            bar.__enter__()
        if ordered is not None:
            out = _unwrap(client.submit(_whole, k, img, opts, pure=False).result())
            if report is not None:
                report(n_wg, n_wg)
            return ClusterResult(np.asarray(out), stats, k.name, "cluster", 1, ordered, None)
        futures = [client.submit(_shard, k, img, a, b, opts, pure=False) for a, b in bounds]
        which = {f.key: i for i, f in enumerate(futures)}
        got: list[tuple[Any, ...] | None] = [None] * len(futures)
        done = 0
        traps: list[tuple[int, tuple[Any, ...]]] = []
        for f in dist.as_completed(futures):
            i = which[f.key]
            got[i] = f.result()
            if got[i][0] == "trap":  # type: ignore[index]
                traps.append((i, got[i]))  # type: ignore[arg-type]
            done += bounds[i][1] - bounds[i][0]
            if report is not None:
                report(done, n_wg)
        if traps:  # the first in workgroup order: the one a one-process run reports
            for f in futures:
                f.cancel()
            _unwrap(min(traps, key=lambda t: t[0])[1])
        parts = [(a, b, r[1], r[2]) for (a, b), r in zip(bounds, got)]  # type: ignore[index]

        def race(s0: int, s1: int, addr: int, v0: int, v1: int) -> None:
            w0 = client.submit(_writer, k, img, *bounds[s0], addr, opts, pure=False)
            w1 = client.submit(_writer, k, img, *bounds[s1], addr, opts, pure=False)
            a, b = _linear_to_xyz(w0.result(), g), _linear_to_xyz(w1.result(), g)
            raise Trap(
                f"data race across workgroups: workgroups {a} and {b} write byte 0x{addr:x} "
                f"with different values (0x{v0:02x}, 0x{v1:02x})",
                k.name,
                -1,
                "",
                a,
                None,
                addr,
            )

        out = _merge(k, image, parts, atomic, job.check, race)
        return ClusterResult(out, stats, k.name, "cluster", len(bounds), None, None if atomic is None else atomic.key)
    finally:
        if bar is not None:
            bar.__exit__(None, None, None)


def launch_many(client: Any, launches: Iterable[Mapping[str, Any]]) -> Iterator[tuple[int, EmulationResult]]:
    """Many launches on the cluster, one task each (`wg.launch`'s keywords, a `prog` among them),
    their results yielded as (index in `launches`, result) as they finish, not in order. A trap
    is raised when its launch's result comes back. Kernels are compiled once per worker (the
    compiled engine's caches live in the worker processes)."""
    dist = _check_client(client)
    kws = [dict(kw) for kw in launches]
    for i, kw in enumerate(kws):
        if "prog" not in kw:
            raise WaveError(f"launch_many: launch {i} has no prog= (the Program or Kernel to run)")
        if kw.get("client") is not None:
            raise WaveError(f"launch_many: launch {i} names client=; each launch already runs on one worker")
    progs: dict[int, Any] = {}  # each program sent to the workers once, not in every task
    for kw in kws:
        p = kw["prog"]
        if id(p) not in progs:
            [progs[id(p)]] = client.scatter([p], broadcast=True, hash=False)
    futures = [client.submit(_launch_one, {**kw, "prog": progs[id(kw["prog"])]}, pure=False) for kw in kws]
    which = {f.key: i for i, f in enumerate(futures)}
    for f in dist.as_completed(futures):
        yield which[f.key], _unwrap(f.result())
