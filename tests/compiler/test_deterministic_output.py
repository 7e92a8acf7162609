"""The compiler's output does not depend on the process: the same source gives the same .wbin bytes
under every PYTHONHASHSEED (string sets and dicts iterate in hash order; an id() in a sort key
follows memory layout). Found by tests/test_wbin_digests.py: the Rust frontend ordered the flag
tests after a labelled break by a set of (id(loop), keyword), so the order of two `break`s varied
from process to process."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FILES = [
    "tests/compiler/frontends/rust/idioms.rs",
    "tests/compiler/frontends/rust/helpers.rs",
    "examples/languages/cpp/softmax_rows.cpp",
    "examples/languages/typescript/stencil2d.ts",
    "examples/languages/python/wave_scan.py",
]
SCRIPT = """
import hashlib, sys
import wavegpu as wg
for f in sys.argv[1:]:
    for opt in (0, 3):
        print(f, opt, hashlib.sha256(wg.compile(f, opt=opt).to_bytes()).hexdigest())
"""


def _digests(seed: int) -> str:
    env = {**os.environ, "PYTHONHASHSEED": str(seed), "WAVEGPU_CACHE_DIR": ""}
    files = [f for f in FILES if (ROOT / f).is_file()]
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, *files], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    return out.stdout


def test_same_bytes_under_every_hash_seed() -> None:
    runs = {seed: _digests(seed) for seed in (1, 2, 3, 4)}
    assert len(set(runs.values())) == 1, {s: hashlib.sha256(r.encode()).hexdigest()[:8] for s, r in runs.items()}
    assert runs[1].count("\n") >= 2 * 4
