"""The compiled engine's two translations (WAVEGPU_COMPILED): `translation` runs a test under
each, skipped with the reason where this machine lacks one. Tests that do not ask for it run
under the default, C where a C compiler is on PATH (engine.translation)."""

from __future__ import annotations

import pytest


def skip_reason(t: str) -> str | None:
    from wavegpu.emulator.compiled import numba_available
    from wavegpu.emulator.compiled.cbuild import has_compiler

    if t == "c" and not has_compiler():
        return "no C compiler on PATH (cc, gcc, clang): the C translation cannot run here"
    if t == "numba" and not numba_available():
        return "numba is not installed: the numba translation cannot run here"
    return None


@pytest.fixture(params=["c", "numba"])
def translation(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The translation a test runs under (WAVEGPU_COMPILED set for its duration)."""
    t = str(request.param)
    why = skip_reason(t)
    if why:
        pytest.skip(why)
    monkeypatch.setenv("WAVEGPU_COMPILED", t)
    return t
