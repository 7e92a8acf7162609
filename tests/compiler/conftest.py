"""Compiler tests: their helpers importable (the run's private compile cache is set in tests/conftest.py)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
