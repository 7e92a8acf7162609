"""Compiler tests: a private compile cache per session."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
os.environ.setdefault("WAVEGPU_CACHE_DIR", tempfile.mkdtemp(prefix="wavegpu-cache-"))
