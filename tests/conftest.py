"""Shared test setup: make tests/ importable (strategies, corpus) and set hypothesis profiles."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from hypothesis import HealthCheck, settings

sys.path.insert(0, str(Path(__file__).parent))

settings.register_profile("ci", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "dev"))


def pytest_addoption(parser):  # type: ignore[no-untyped-def]
    parser.addoption("--update-golden", action="store_true", help="rewrite golden files for review")


def pytest_collection_modifyitems(config, items):  # type: ignore[no-untyped-def]
    """Tests marked `slow` (minutes each) run only with WAVEGPU_SLOW=1."""
    if os.environ.get("WAVEGPU_SLOW") == "1":
        return
    import pytest

    skip = pytest.mark.skip(reason="slow (minutes): run with WAVEGPU_SLOW=1")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
