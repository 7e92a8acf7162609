"""pyrightconfig.json (run by `make lint`): its ignore list names existing modules only, so the
list of modules excused from type checking can only shrink as they are fixed or removed."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def config() -> dict[str, object]:
    text = (ROOT / "pyrightconfig.json").read_text()
    return json.loads("\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//")))


def test_pyright_checks_src_in_basic_mode() -> None:
    cfg = config()
    assert cfg["include"] == ["src"] and cfg["typeCheckingMode"] == "basic"


def test_the_ignore_list_names_existing_modules() -> None:
    ignored = config().get("ignore", [])
    assert isinstance(ignored, list)
    missing = [p for p in ignored if not (ROOT / str(p)).is_file()]
    assert not missing, f"take these off pyrightconfig.json's ignore list: {missing}"
    assert len(ignored) == len(set(ignored))
