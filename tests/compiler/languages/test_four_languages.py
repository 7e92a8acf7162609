"""The same kernel in four languages (issue 13): each version gives NumPy's answer at -O0..-O3 on
the emulator, and all versions of a kernel give bit-identical memory.

A language whose frontend is registered must have every kernel of the corpus; one that is not
registered yet is skipped with the reason.
"""

from __future__ import annotations

import numpy as np
import pytest

from wavegpu.compiler.frontends import FRONTENDS
from wavegpu.runtime.sources import load_kernels

from .cases import CASES, SUFFIX, Case

LANGS = tuple(SUFFIX)
OPTS = (0, 1, 2, 3)


def _run(case: Case, lang: str, opt: int) -> dict[str, np.ndarray]:
    if lang not in FRONTENDS:
        pytest.fail(f"no {lang} frontend registered: every language of LANGUAGES has one")
    path = case.source(lang)
    assert path.exists(), f"{path} is missing: every registered language has every corpus kernel"
    kernels = load_kernels(path, opt=opt)
    args = case.make(np.random.default_rng(1234))
    k = kernels[case.name]
    k(**args, grid=case.grid, workgroup=case.workgroup, max_instructions=10_000_000)
    return {name: np.asarray(v) for name, v in args.items() if isinstance(v, np.ndarray)}


def _equal_bits(x: np.ndarray, y: np.ndarray) -> bool:
    return x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()


def _ulps(x: np.ndarray, y: np.ndarray) -> int:
    xi = x.view(np.int32).astype(np.int64)
    yi = y.view(np.int32).astype(np.int64)
    return int(np.abs(xi - yi).max()) if x.size else 0


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_numpy_answer_at_every_level(case: Case, lang: str) -> None:
    want = case.reference(case.make(np.random.default_rng(1234)))
    first = None
    for opt in OPTS:
        got = _run(case, lang, opt)
        for name, ref in want.items():
            ref = np.asarray(ref).astype(got[name].dtype)
            if name in case.ulps:
                assert _ulps(got[name], ref) <= case.ulps[name], f"{lang} -O{opt} {case.name}: {name}"
            else:
                bad = np.flatnonzero(got[name].view(np.uint8) != ref.view(np.uint8))
                assert bad.size == 0, (
                    f"{lang} -O{opt} {case.name}: {name} differs from NumPy at byte {bad[0]} "
                    f"(element {bad[0] // ref.itemsize}: {got[name].reshape(-1)[bad[0] // ref.itemsize]!r} "
                    f"!= {ref.reshape(-1)[bad[0] // ref.itemsize]!r})"
                )
        if first is None:
            first = got
        else:
            for name in got:
                assert _equal_bits(got[name], first[name]), f"{lang} {case.name}: -O{opt} differs from -O0 in {name}"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_languages_agree_bit_for_bit(case: Case) -> None:
    langs = [lang for lang in LANGS if lang in FRONTENDS]
    if len(langs) < 2:
        pytest.fail("only one frontend registered: all four languages have one")
    results = {lang: _run(case, lang, 2) for lang in langs}
    base = results[langs[0]]
    for lang in langs[1:]:
        for name, v in results[lang].items():
            assert _equal_bits(v, base[name]), f"{case.name}: {lang} and {langs[0]} differ in {name}"
