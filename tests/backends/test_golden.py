"""Golden output per backend: each dialect's prelude once, and each example's kernel after it.
A change in rendering shows up as a diff to review; `pytest --update-golden` rewrites them."""

from __future__ import annotations

from pathlib import Path

import pytest

import wavegpu as wg
from wavegpu.backends import NAMES, TARGETS, render

EX = Path(__file__).resolve().parents[2] / "examples"
GOLDEN = Path(__file__).parent / "golden"
WIDTH = {"opencl": 32, "cuda": 32, "hip": 64, "sycl": 32, "metal": 32}
EXAMPLES = sorted(p.name for p in EX.glob("*.wave"))


def _check(path: Path, text: str, update: bool) -> None:
    if update:
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"{path.name} is missing; run pytest --update-golden and review it"
    assert path.read_text() == text, f"{path.name} differs; rerun with --update-golden and review the diff"


def test_every_target_has_golden_files() -> None:
    assert set(WIDTH) == set(TARGETS)
    assert set(NAMES) == {*TARGETS, "ptx", "amdgcn"}  # PTX modules below; AMDGCN: amdgcn/test_amdgcn_golden.py


@pytest.mark.parametrize("example", EXAMPLES)
def test_ptx_golden(example: str, request: pytest.FixtureRequest) -> None:
    prog = wg.assemble((EX / example).read_text(), example)
    name = f"{example.removesuffix('.wave')}.ptx"
    _check(GOLDEN / name, wg.translate(prog, "ptx"), request.config.getoption("--update-golden"))


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_prelude_golden(target: str, request: pytest.FixtureRequest) -> None:
    _check(GOLDEN / f"prelude.{target}", TARGETS[target]().prelude(), request.config.getoption("--update-golden"))


@pytest.mark.parametrize("target", sorted(TARGETS))
@pytest.mark.parametrize("example", EXAMPLES)
def test_example_golden(example: str, target: str, request: pytest.FixtureRequest) -> None:
    prog = wg.assemble((EX / example).read_text(), example)
    prelude = TARGETS[target]().prelude()
    out = []
    for k in prog.kernels:
        src = render(k, target, wave_width=WIDTH[target]).source
        assert src.startswith(prelude)
        out.append(src[len(prelude) :])
    name = f"{example.removesuffix('.wave')}.{target}"
    _check(GOLDEN / name, "\n".join(out), request.config.getoption("--update-golden"))
