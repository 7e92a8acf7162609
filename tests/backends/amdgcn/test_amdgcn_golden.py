"""Golden AMDGCN assembly per example and target (tests/backends/golden/<example>.<gfx>.s): a
change in selection, allocation, waitcnt or hazard placement shows up as a diff to review;
`pytest --update-golden` rewrites them."""

from __future__ import annotations

from pathlib import Path

import pytest

import wavegpu as wg
from wavegpu.backends.amdgcn import ARCHES

ROOT = Path(__file__).resolve().parents[3]
EX = ROOT / "examples"
GOLDEN = ROOT / "tests" / "backends" / "golden"
EXAMPLES = sorted(p.name for p in EX.glob("*.wave"))


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("example", EXAMPLES)
def test_amdgcn_golden(example: str, arch: str, request: pytest.FixtureRequest) -> None:
    prog = wg.assemble((EX / example).read_text(), example)
    text = wg.translate(prog, "amdgcn", arch=arch)
    path = GOLDEN / f"{example.removesuffix('.wave')}.{arch}.s"
    if request.config.getoption("--update-golden"):
        path.write_text(text)
    assert path.exists(), f"{path.name} is missing; run pytest --update-golden and review it"
    assert path.read_text() == text, f"{path.name} differs; rerun with --update-golden and review the diff"


def test_every_example_and_target_has_a_golden_file() -> None:
    have = {p.name for p in GOLDEN.glob("*.gfx*.s")}
    assert have == {f"{e.removesuffix('.wave')}.{a}.s" for e in EXAMPLES for a in ARCHES}
