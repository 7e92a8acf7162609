"""The compiled output of the corpus stays byte-identical through refactors: the .wbin bytes of
every example kernel (each language at -O0 and -O2, and every assembly file of the corpus) and
each backend's text for it, as SHA-256 digests (tests/data/corpus_digests.json). A change shows
up as the (file, artifact) that changed; a change of meaning is reviewed and recorded with
`pytest --update-golden`. The compiled engine's generated Python is not pinned: it is tuned on
its own (emulator/compiled/), and tests/emulator/compiled checks it against the reference."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

import wavegpu as wg
from corpus import ROOT, corpus_files
from wavegpu.backends import NAMES
from wavegpu.errors import WaveError

GOLDEN = Path(__file__).parent / "data" / "corpus_digests.json"
LANGUAGES = sorted((ROOT / "examples" / "languages").glob("*/*")) + sorted((ROOT / "examples" / "kernels").glob("*.py"))


def _digest(data: bytes | str) -> str:
    return hashlib.sha256(data if isinstance(data, bytes) else data.encode()).hexdigest()[:24]


def _programs() -> dict[str, wg.Program]:
    """Every program, its files named relative to the repository (line tables record the name)."""
    progs = {}
    for p in corpus_files():
        name = p.relative_to(ROOT).as_posix()
        progs[name] = wg.assemble(p.read_text(), name)
    for p in LANGUAGES:
        for opt in (0, 2):
            name = p.relative_to(ROOT).as_posix()
            progs[f"{name}@O{opt}"] = wg.compile(name, opt=opt)
    return progs


def digests() -> dict[str, str]:
    """Run in the repository's root (compile reads the relative paths)."""
    out = {}
    for name, prog in _programs().items():
        out[f"{name}:wbin"] = _digest(prog.to_bytes())
        for target in NAMES:
            texts = []
            for k in prog.kernels:
                try:
                    texts.append(wg.translate(k, target))
                except WaveError as e:  # a refusal is output too: it must stay the same refusal
                    texts.append(f"refused: {e}")
            out[f"{name}:{target}"] = _digest("\n".join(texts))
    return out


def test_corpus_output_is_unchanged(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    now = digests()
    if request.config.getoption("--update-golden"):
        GOLDEN.write_text(json.dumps(now, indent=0, sort_keys=True) + "\n")
    assert GOLDEN.exists(), f"{GOLDEN.name} is missing; run pytest --update-golden and review it"
    want = json.loads(GOLDEN.read_text())
    changed = sorted(k for k in want.keys() & now.keys() if want[k] != now[k])
    assert not changed, f"compiled output changed: {changed[:20]}"
    assert now.keys() == want.keys(), sorted(now.keys() ^ want.keys())
    assert len({k.rsplit(":", 1)[0] for k in now}) == len(corpus_files()) + 2 * len(LANGUAGES)
