"""Launches on a Dask cluster (runtime/cluster.py): the same bits as one process on the corpus
and with any shard sizes, order-free atomics merged exactly, order-dependent ones run in order,
races across shards reported, traps as locally, a worker killed mid-launch, many launches."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import wavegpu as wg
from corpus import corpus_files
from wavegpu.isa.vocabulary import Op

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "emulator"))
import test_differential as D

# r3 = the thread's global id times 4 (its word's byte offset); r4 is scratch
BYTE_OFFSET = """\
  mov.u32 r3, %ctaid.x
  mov.u32 r4, %ntid.x
  mul.lo.u32 r3, r3, r4
  mov.u32 r4, %tid.x
  add.u32 r3, r3, r4
  shl.b32 r3, r3, 2"""

ADD_ONE = f"""
.kernel add_one
.registers 8
{BYTE_OFFSET}
  add.u32 r5, r0, r3
  ld.global.b32 r6, [r5]
  add.u32 r6, r6, 1
  st.global.b32 [r5], r6
  ret
.end
"""

# r0: bins (16 words), r1: values; every thread folds its value into bin value % 16 with OP
HISTOGRAM = f"""
.kernel hist
.registers 10
{BYTE_OFFSET}
  add.u32 r5, r1, r3
  ld.global.b32 r6, [r5]
  and.b32 r7, r6, 15
  shl.b32 r7, r7, 2
  add.u32 r7, r0, r7
  red.global.OP [r7], r6
  ret
.end
"""

# every workgroup stores its id at address r0 (a race across workgroups)
RACE = """
.kernel race
.registers 4
  mov.u32 r1, %ctaid.x
  st.global.b32 [r0], r1
  ret
.end
"""

# workgroup 3 reads past the end of memory
TRAPS = """
.kernel traps
.registers 4
  mov.u32 r1, %ctaid.x
  setp.eq.u32 p1, r1, 3
  @p1 mov.u32 r0, 0x7ffffff0
  ld.global.b32 r2, [r0]
  ret
.end
"""

# r1 = trip count: a loop that keeps a worker busy (the fault test)
SLOW = """
.kernel slow
.registers 8
  mov.u32 r3, %ctaid.x
  mov.u32 r4, %ntid.x
  mul.lo.u32 r3, r3, r4
  mov.u32 r4, %tid.x
  add.u32 r3, r3, r4
  mov.u32 r6, r3
  mov.u32 r7, 0
  loop L_end
    setp.ge.u32 p1, r7, r1
    break p1
    mul.lo.u32 r6, r6, 1664525
    add.u32 r6, r6, 1013904223
    add.u32 r7, r7, 1
  L_end: endloop
  shl.b32 r3, r3, 2
  add.u32 r5, r0, r3
  st.global.b32 [r5], r6
  ret
.end
"""


def _cluster(n: int = 2):  # type: ignore[no-untyped-def]
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(
        processes=True, n_workers=n, threads_per_worker=1, dashboard_address=":0", silence_logs=50
    )
    return cluster, distributed.Client(cluster)


@pytest.fixture(scope="module")
def client():  # type: ignore[no-untyped-def]
    cluster, cl = _cluster()
    yield cl
    cl.close()
    cluster.close()


def test_without_dask_the_keyword_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    prog = wg.assemble(ADD_ONE)
    with pytest.raises(wg.WaveError, match=r"pip install 'wavegpu\[dask\]'"):
        wg.launch(prog, grid=1, workgroup=32, memory=128, client=object())


def test_client_is_refused_by_a_rendered_device() -> None:
    prog = wg.assemble(ADD_ONE)
    with pytest.raises(wg.WaveError, match="client="):
        wg.launch(prog, device="amdgcn-sim", grid=1, workgroup=64, memory=256, client=object())


def test_corpus_is_bit_identical(client) -> None:  # type: ignore[no-untyped-def]
    """Every corpus kernel on 4 workgroups in 3 shards: the memory of a one-process run, or its trap."""
    rng = np.random.default_rng(27)
    ran = 0
    for path in corpus_files():
        prog = wg.assemble(path.read_text(), path.name)
        for k in prog.kernels:
            mem = rng.integers(0, 1 << 32, (1 << 16) // 4, dtype=np.uint32)
            args = [16384 * i for i in range(min(len(k.params) or 3, k.registers, 4))]
            kw = dict(grid=4, workgroup=k.workgroup_size or (64, 1, 1), memory=mem, args=args, engine="numpy")
            try:
                ref = wg.emulate(k, **kw)  # type: ignore[arg-type]
            except wg.WaveError as e:
                with pytest.raises(type(e)) as got:
                    wg.launch(k, client=client, shards=3, **kw)  # type: ignore[arg-type]
                assert str(got.value) == str(e), f"{path.name}: {k.name}"
                continue
            res = wg.launch(k, client=client, shards=3, **kw)  # type: ignore[arg-type]
            assert np.array_equal(ref.memory, res.memory), f"{path.name}: {k.name}"
            ran += 1
    assert ran >= 5  # the corpus's kernels that do not trap on these arguments


@settings(max_examples=10, deadline=None)
@given(st.data())
def test_random_programs_are_bit_identical(client, data: st.DataObject) -> None:  # type: ignore[no-untyped-def]
    """The emulator's random structured programs (tests/emulator/test_differential.py) on 1 to 4
    workgroups in hypothesis-chosen shards: the memory (or the trap) of a one-process run."""
    W = data.draw(st.sampled_from([4, 8, 32]))
    waves = data.draw(st.integers(1, 2))
    groups = data.draw(st.integers(1, 4))
    D.SHARED_BASE = groups * W * waves * D.SLOT_WORDS * 4
    seed_vals = data.draw(st.lists(st.integers(0, 2**32 - 1), min_size=24, max_size=24))
    body = data.draw(D.block())
    if any(i.spec.op is Op.ATOM for i in body):  # old values follow the order of workgroups
        groups = 1
        D.SHARED_BASE = W * waves * D.SLOT_WORDS * 4
    k = wg.Kernel("rnd", tuple(D.prologue(seed_vals) + body + D.epilogue()), 19, 8)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    mem = rng.integers(0, 256, D.SHARED_BASE + 16, dtype=np.uint8)
    kw = dict(grid=groups, workgroup=W * waves, memory=mem, wave_width=W, engine="numpy")
    shards = data.draw(st.integers(1, 4))
    try:
        ref = wg.emulate(k, **kw)  # type: ignore[arg-type]
    except wg.WaveError as e:
        with pytest.raises(type(e)) as got:
            wg.launch(k, client=client, shards=shards, **kw)  # type: ignore[arg-type]
        assert str(got.value) == str(e)
        return
    res = wg.launch(k, client=client, shards=shards, **kw)  # type: ignore[arg-type]
    assert np.array_equal(ref.memory, res.memory), wg.disassemble(k)


@settings(max_examples=8, deadline=None)
@given(grid=st.integers(1, 40), shards=st.integers(1, 12), engine=st.sampled_from(["numpy", "compiled"]))
def test_any_shard_sizes_give_the_same_bits(client, grid: int, shards: int, engine: str) -> None:  # type: ignore[no-untyped-def]
    if engine == "compiled":
        pytest.importorskip("numba")
    prog = wg.assemble(ADD_ONE)
    mem = np.random.default_rng(grid).integers(0, 1 << 32, grid * 32 + 8, dtype=np.uint32)
    kw = dict(grid=grid, workgroup=32, memory=mem, args=[16], engine=engine)
    ref = wg.launch(prog, **kw)  # type: ignore[arg-type]
    res = wg.launch(prog, client=client, shards=shards, **kw)  # type: ignore[arg-type]
    assert np.array_equal(ref.memory, res.memory)
    assert res.shards == min(shards, grid) and res.engine == "cluster"


@pytest.mark.parametrize("op", ["add.u32", "min.s32", "max.u32", "and.b32", "or.b32", "xor.b32"])
def test_order_free_atomics_merge_exactly(client, op: str) -> None:  # type: ignore[no-untyped-def]
    prog = wg.assemble(HISTOGRAM.replace("OP", op))
    rng = np.random.default_rng(3)
    mem = rng.integers(0, 1 << 32, 64 + 8 * 64, dtype=np.uint32)
    kw = dict(grid=8, workgroup=64, memory=mem, args=[0, 256], engine="numpy")
    ref = wg.launch(prog, **kw)  # type: ignore[arg-type]
    res = wg.launch(prog, client=client, shards=5, **kw)  # type: ignore[arg-type]
    assert np.array_equal(ref.memory, res.memory)
    assert res.ordered is None and res.atomic is not None and op.split(".")[0] in res.atomic
    assert res.shards == 5


def test_order_dependent_atomics_run_in_workgroup_order(client) -> None:  # type: ignore[no-untyped-def]
    src = HISTOGRAM.replace("red.global.OP [r7], r6", "atom.global.exch.b32 r8, [r7], r6")
    prog = wg.assemble(src)
    mem = np.random.default_rng(4).integers(0, 1 << 32, 64 + 8 * 64, dtype=np.uint32)
    kw = dict(grid=8, workgroup=64, memory=mem, args=[0, 256], engine="numpy")
    ref = wg.launch(prog, **kw)  # type: ignore[arg-type]
    res = wg.launch(prog, client=client, shards=5, **kw)  # type: ignore[arg-type]
    assert np.array_equal(ref.memory, res.memory)
    assert res.shards == 1 and res.ordered is not None and "order" in res.ordered


def test_a_race_across_shards_is_reported_under_check(client) -> None:  # type: ignore[no-untyped-def]
    prog = wg.assemble(RACE)
    kw = dict(grid=6, workgroup=32, memory=64, args=[8])
    with pytest.raises(wg.Trap, match=r"data race across workgroups: workgroups \(\d, 0, 0\) and \(\d, 0, 0\)") as e:
        wg.launch(prog, client=client, shards=3, check=True, **kw)  # type: ignore[arg-type]
    assert e.value.kernel == "race" and e.value.address == 8
    # without check: the later shard in workgroup order wins, as in the one-process run
    res = wg.launch(prog, client=client, shards=3, **kw)  # type: ignore[arg-type]
    assert np.array_equal(res.memory, wg.launch(prog, engine="numpy", **kw).memory)  # type: ignore[arg-type]
    assert res.view(np.uint32, 8, 1)[0] == 5


def test_a_trap_comes_back_as_the_local_trap(client) -> None:  # type: ignore[no-untyped-def]
    prog = wg.assemble(TRAPS)
    kw = dict(grid=6, workgroup=32, memory=64, args=[0], engine="numpy")
    with pytest.raises(wg.Trap) as local:
        wg.launch(prog, **kw)  # type: ignore[arg-type]
    with pytest.raises(wg.Trap) as remote:
        wg.launch(prog, client=client, shards=4, **kw)  # type: ignore[arg-type]
    assert str(remote.value) == str(local.value) and remote.value.workgroup == (3, 0, 0)


def test_the_budget_holds_on_the_cluster(client) -> None:  # type: ignore[no-untyped-def]
    prog = wg.assemble(SLOW)
    kw = dict(grid=4, workgroup=32, memory=4 * 128, args=[0, 10_000], engine="numpy", max_instructions=500)
    with pytest.raises(wg.Trap) as local:
        wg.launch(prog, **kw)  # type: ignore[arg-type]
    with pytest.raises(wg.Trap) as remote:
        wg.launch(prog, client=client, shards=2, **kw)  # type: ignore[arg-type]
    assert str(remote.value) == str(local.value)


def test_kernel_calls_take_client(client) -> None:  # type: ignore[no-untyped-def]
    @wg.kernel
    def scale(x: wg.f32[:], n: wg.u32) -> None:
        i = wg.global_id()
        if i < n:
            x[i] = x[i] * 3.0 + 1.0

    x = np.arange(1000, dtype=np.float32)
    y = x.copy()
    scale(x, 1000, grid=8, workgroup=128, client=client)
    scale(y, 1000, grid=8, workgroup=128)
    assert np.array_equal(x, y)
    # checked (bounds per array, division by zero), with a progress bar over the shards
    scale(x, 1000, grid=8, workgroup=128, client=client, check=True, progress=True)
    scale(y, 1000, grid=8, workgroup=128, check=True)
    assert np.array_equal(x, y)


def test_launch_many_streams_results(client) -> None:  # type: ignore[no-untyped-def]
    prog = wg.assemble(ADD_ONE)
    runs = [dict(prog=prog, grid=g, workgroup=32, memory=np.full(g * 32, g, np.uint32), args=[0]) for g in range(1, 13)]
    seen = {}
    for i, res in wg.launch_many(client, runs):
        seen[i] = res
    assert sorted(seen) == list(range(12))
    for i, kw in enumerate(runs):
        assert np.array_equal(seen[i].memory, wg.launch(**kw).memory)  # type: ignore[arg-type]
    with pytest.raises(wg.WaveError, match="no prog="):
        list(wg.launch_many(client, [dict(grid=1)]))


def test_a_worker_killed_mid_launch_leaves_the_result_identical() -> None:
    """A worker process killed (SIGKILL) while its shards run: Dask runs them again elsewhere
    (the tasks are pure), and the merged memory is that of an undisturbed run."""
    prog = wg.assemble(SLOW)
    kw = dict(grid=16, workgroup=64, memory=16 * 64 * 4, args=[0, 30_000], engine="numpy")
    ref = wg.launch(prog, **kw)  # type: ignore[arg-type]
    cluster, cl = _cluster()
    try:
        victim, pid = sorted(cl.run(os.getpid).items())[0]
        out: dict[str, object] = {}

        def go() -> None:
            try:
                out["res"] = wg.launch(prog, client=cl, shards=16, **kw)  # type: ignore[arg-type]
            except BaseException as e:  # reported below
                out["err"] = e

        t = threading.Thread(target=go)
        t.start()
        deadline = time.monotonic() + 60
        while not cl.processing().get(victim) and time.monotonic() < deadline:
            time.sleep(0.01)  # until the victim runs a shard of the launch
        assert t.is_alive(), "the launch finished before the kill: make it longer"
        os.kill(pid, signal.SIGKILL)
        t.join(120)
        assert "err" not in out, out.get("err")
        assert np.array_equal(out["res"].memory, ref.memory)  # type: ignore[attr-defined]
    finally:
        cl.close()
        cluster.close()


def test_wave_run_takes_a_scheduler_address(client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    from click.testing import CliRunner

    from wavegpu.cli import main
    from wavegpu.runtime import cluster

    monkeypatch.setattr(cluster.connect, "__defaults__", (1.0,))  # the unreachable address: 1 s, not 10

    src = tmp_path / "add_one.wave"
    src.write_text(ADD_ONE.replace(".registers 8", ".registers 8\n.param x, buffer, u32"))
    address = client.scheduler.address
    line = [str(src), "--grid", "4", "--workgroup", "32", "x=iota:128", "--print", "x:4"]
    runner = CliRunner()
    local = runner.invoke(main, ["run", *line])
    remote = runner.invoke(main, ["run", *line, "--scheduler", address])
    assert local.exit_code == 0 and remote.exit_code == 0, remote.output
    assert local.output.splitlines()[1:] == remote.output.splitlines()[1:] == ["x[:4] = [1 2 3 4]"]
    bad = runner.invoke(main, ["run", *line, "--scheduler", "tcp://127.0.0.1:9"])
    assert bad.exit_code != 0 and "cannot reach the Dask scheduler at 'tcp://127.0.0.1:9'" in bad.output
    assert "Traceback" not in bad.output


def test_emulate_runs_a_range_of_workgroups() -> None:
    """The shard primitive: workgroups=(first, last) runs exactly those, each with its own ids."""
    prog = wg.assemble(ADD_ONE)
    mem = np.zeros(8 * 32, np.uint32)
    res = wg.emulate(prog, grid=8, workgroup=32, memory=mem, args=[0], workgroups=(2, 5))
    got = res.view(np.uint32).reshape(8, 32)
    assert (got[2:5] == 1).all() and not got[:2].any() and not got[5:].any()
    with pytest.raises(wg.WaveError, match=r"workgroups=\(3, 9\)"):
        wg.emulate(prog, grid=8, workgroup=32, memory=mem, args=[0], workgroups=(3, 9))
