"""`emulate(donate=True)` runs in the caller's buffer (issue 28.6: one device image in host memory,
not two) and gives the memory and trap reports of a run without it, on both engines, including a
compiled-engine trap that the NumPy engine re-runs (from a kept copy, or after `restore`); without
`donate` the caller's memory is never written."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import wavegpu as wg
from wavegpu.emulator.launch import donatable

ENGINES = ["numpy"] + (["compiled"] if importlib.util.find_spec("numba") else [])

CHASE = (Path(__file__).parents[1] / "data" / "chase.wave").read_text()


def image(trap: bool) -> np.ndarray:
    x = (np.arange(256, dtype=np.uint32) * 7) % 256
    if trap:
        x[200] = 0x10000  # thread 200 reads x[65536], beyond the 1 KiB image
    return x.view(np.uint8).copy()


def run(engine: str, memory: object, **kw: object) -> tuple[str, np.ndarray | None]:
    try:
        res = wg.emulate(wg.assemble(CHASE), grid=4, workgroup=64, memory=memory, args=[0], engine=engine, **kw)
    except wg.Trap as e:
        return str(e), None
    assert res.engine == engine
    return "", res.memory


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("trap", [False, True])
def test_donated_run_is_the_plain_run(engine: str, trap: bool) -> None:
    img = image(trap)
    caller = img.copy()
    ref_err, ref_mem = run(engine, caller)
    assert np.array_equal(caller, img)  # (b) a plain call leaves the caller's array alone
    assert (ref_err != "") == trap and (not trap or "out-of-bounds" in ref_err)
    numpy_err, numpy_mem = run("numpy", img.copy())
    assert ref_err == numpy_err  # the compiled engine's trap is the reference's
    if not trap:
        assert np.array_equal(ref_mem, numpy_mem)  # type: ignore[arg-type]
    restores: list[int] = []

    def restore(m: np.ndarray) -> None:
        restores.append(1)
        m[:] = img

    for kw in ({}, {"restore": restore}):
        buf = img.copy()
        assert donatable(buf)
        err, mem = run(engine, buf, donate=True, **kw)  # type: ignore[arg-type]
        assert err == ref_err
        if not trap:
            assert np.array_equal(mem, ref_mem) and np.shares_memory(mem, buf)  # ran in the donated buffer
    # the NumPy engine never needs the input again; a compiled run that stops restores it once
    assert len(restores) == (1 if trap and engine == "compiled" else 0)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("trap", [False, True])
@pytest.mark.parametrize(
    "make",
    [
        lambda b: b,
        lambda b: b.view(np.uint32),  # not uint8: copied even when donated
        lambda b: np.concatenate([b, b[:3]]),  # not a multiple of 16 bytes: copied
        lambda b: bytearray(b.tobytes()),
        lambda b: bytes(b.tobytes()),
    ],
)
def test_the_caller_array_is_never_written_unless_donated(
    engine: str, trap: bool, make: Callable[[np.ndarray], object]
) -> None:
    src = make(image(trap))
    before = bytes(src) if not isinstance(src, np.ndarray) else src.copy()
    run(engine, src)
    assert (bytes(src) == before) if not isinstance(src, np.ndarray) else np.array_equal(src, before)
    if isinstance(src, np.ndarray) and not donatable(src):
        run(engine, src, donate=True)  # an array that cannot be donated is copied
        assert np.array_equal(src, before)


def test_what_can_be_donated() -> None:
    buf = np.zeros(64, np.uint8)
    assert donatable(buf)
    assert not donatable(buf[1:17]) and not donatable(buf[::2]) and not donatable(buf[:20])
    assert not donatable(buf.view(np.uint32)) and not donatable(bytearray(64))
    ro = buf.copy()
    ro.flags.writeable = False
    assert not donatable(ro)
