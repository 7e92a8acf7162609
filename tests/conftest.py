"""Shared test setup: make tests/ importable (strategies, corpus) and set hypothesis profiles."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, settings

sys.path.insert(0, str(Path(__file__).parent))

# One private cache folder for the whole run (compiled .wbin entries, the compiled engine's modules
# and numba's machine code for them). It is made here, in the process that starts the run, before
# pytest-xdist starts its workers: they inherit it, so a kernel that one worker compiled with numba
# is loaded by the others instead of compiled again. A user's own WAVEGPU_CACHE_DIR is kept.
if "WAVEGPU_CACHE_DIR" not in os.environ:
    os.environ["WAVEGPU_CACHE_DIR"] = tempfile.mkdtemp(prefix="wavegpu-cache-")
    os.environ["WAVEGPU_TEST_CACHE_OWNER"] = str(os.getpid())

settings.register_profile("ci", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "dev"))


def pytest_addoption(parser):  # type: ignore[no-untyped-def]
    parser.addoption("--update-golden", action="store_true", help="rewrite golden files for review")


def pytest_unconfigure(config):  # type: ignore[no-untyped-def]
    """The run's cache folder goes with the process that made it (the last to finish)."""
    if os.environ.get("WAVEGPU_TEST_CACHE_OWNER") == str(os.getpid()):
        shutil.rmtree(os.environ["WAVEGPU_CACHE_DIR"], ignore_errors=True)
