"""Kernel calls: every call option of a `@wg.kernel` function is accepted by `wg.load_kernels`
kernels of the four languages, and parameters named like call options bind as Python binds them
(issues 22.8 and 28.5; docs/sdk.md)."""

from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np
import pytest

import wavegpu as wg
from wavegpu.runtime.kernel import CALL_OPTIONS, run_kernel

COMPAT = Path(__file__).resolve().parents[1] / "compiler" / "languages" / "compat"
SOURCES = {"python": "vector_add.py", "rust": "vector_add.rs", "cpp": "vector_add.cpp", "typescript": "vector_add.ts"}
# a value for each option that changes nothing of the vector add's result
OPTION_VALUES = {
    "workgroup": 256,
    "device": "emulator",
    "wave_width": 32,
    "check": True,
    "max_instructions": 10_000,
    "progress": False,
    "arch": None,
    "engine": "numpy",
    "mma": None,
    "client": None,
}


def test_call_options_are_run_kernels_options() -> None:
    """One list of call options, the one run_kernel takes (boundscheck is a kernel's own)."""
    kw = [p.name for p in inspect.signature(run_kernel).parameters.values() if p.kind is p.KEYWORD_ONLY]
    assert sorted(CALL_OPTIONS) == sorted(set(kw) - {"boundscheck"})
    assert sorted(OPTION_VALUES) == sorted(set(CALL_OPTIONS) - {"grid"})


@pytest.mark.parametrize("option", sorted(OPTION_VALUES))
@pytest.mark.parametrize("lang", sorted(SOURCES))
def test_load_kernels_take_every_call_option(lang: str, option: str) -> None:
    k = wg.load_kernels(COMPAT / SOURCES[lang]).vector_add
    a = np.arange(256, dtype=np.float32)
    out = np.zeros(256, np.float32)
    k(a, a, out, 200, grid=1, **{option: OPTION_VALUES[option]})
    assert np.array_equal(out[:200], 2 * a[:200]) and not out[200:].any()


@pytest.mark.parametrize("lang", sorted(SOURCES))
def test_an_unknown_option_names_the_parameters(lang: str) -> None:
    k = wg.load_kernels(COMPAT / SOURCES[lang]).vector_add
    a = np.zeros(4, np.float32)
    with pytest.raises(wg.WaveError, match="no parameter 'engin'"):
        k(a, a, a, 4, grid=1, engin="numpy")


@wg.kernel
def named_like_options(out: wg.i32[:], grid: wg.i32, device: wg.i32, check: wg.i32, engine: wg.i32):
    if wg.global_id() == 0:
        out[0] = grid
        out[1] = device
        out[2] = check
        out[3] = engine


def test_parameters_named_like_options_bind_by_keyword() -> None:
    """Python binds `grid=7` to the parameter `grid`; the launch's grid then comes from configure()."""
    out = np.zeros(4, np.int32)
    named_like_options.configure(grid=1, engine="numpy")(out, grid=7, device=8, check=9, engine=10)
    assert out.tolist() == [7, 8, 9, 10]
    out[:] = 0
    named_like_options.configure(grid=1)(out, 1, 2, 3, 4)
    assert out.tolist() == [1, 2, 3, 4]


def test_a_grid_parameter_without_a_launch_grid_says_how_to_give_it() -> None:
    out = np.zeros(4, np.int32)
    with pytest.raises(wg.WaveError, match=r"parameter named 'grid'.*configure\(grid=\.\.\.\)"):
        named_like_options(out, grid=7, device=8, check=9, engine=10)
    assert not out.any()


def test_an_option_named_like_a_parameter_given_by_position_is_refused() -> None:
    """`k(out, 1, 2, 3, 4, device="cuda")`: device is both the 3rd argument and an option: refused,
    never silently one of them."""
    out = np.zeros(4, np.int32)
    with pytest.raises(wg.WaveError, match=r"'device' is a parameter.*configure\(device=\.\.\.\)"):
        named_like_options.configure(grid=1)(out, 1, 2, 3, 4, device=5)


def test_configure_refuses_what_is_not_an_option() -> None:
    with pytest.raises(wg.WaveError, match="'gird' is not a call option"):
        named_like_options.configure(gird=1)


def test_load_kernels_parameters_named_like_options() -> None:
    src = "fn k(out: &mut [i32], grid: i32, engine: i32) {\n    out[0] = grid;\n    out[1] = engine;\n}\n"
    k = wg.load_kernels(src, lang="rust").k
    out = np.zeros(2, np.int32)
    k.configure(grid=1, workgroup=1, engine="numpy")(out, grid=5, engine=6)
    assert out.tolist() == [5, 6]
