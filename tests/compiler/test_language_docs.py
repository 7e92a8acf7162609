"""The Python examples of docs/compiler.md compile as written, and each runs as its twin in the
language tests (the twins are the same text)."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest
import test_language_arrays as arrays
import test_language_mixed as mixed

import wavegpu as wg

DOC = Path(__file__).resolve().parents[2] / "docs" / "compiler.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def test_the_doc_has_examples() -> None:
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("block", BLOCKS)
def test_every_example_compiles(block: str) -> None:
    prog = wg.compile("import wavegpu as wg\n\n" + block)
    assert prog.kernels


@pytest.mark.parametrize("twin", [mixed.vector_add, arrays.transpose])
def test_the_examples_are_the_tested_kernels(twin: wg.KernelFunction) -> None:
    body = inspect.getsource(twin.python).split("\n", 1)[1]  # without the decorator line
    code = [line.split("  #")[0].rstrip() for line in body.splitlines()]
    code = [line for line in code if line.strip() and not line.strip().startswith('"""')]
    assert any(all(line in [x.split("  #")[0].rstrip() for x in b.splitlines()] for line in code) for b in BLOCKS), (
        twin.__name__
    )
