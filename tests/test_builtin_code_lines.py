"""tools/builtin_code_lines.py counts the lines of a frontend that serve builtin calls (issue 23):
its definition on a small module, and on the four frontends of the working tree."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _tool():
    spec = importlib.util.spec_from_file_location("builtin_code_lines", ROOT / "tools" / "builtin_code_lines.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, mod)  # (its dataclasses look their module up)
    spec.loader.exec_module(sys.modules[spec.name])
    return sys.modules[spec.name]


MODULE = '''
SPELLINGS = {"sqrt": "sqrt(x)"}
FUNCTIONS = {"sqrt": "sqrt"}  # read by builtin code only
SHARED = ("x",)  # read by builtin code and by stmt


class Reader:
    def __init__(self, k):
        self.k = k

    def value(self, node):
        return self.k.convert(node)


class Builder:
    def stmt(self, s):
        """A statement."""
        # a comment
        return self.expr(s) + len(SHARED)

    def expr(self, e):
        return self.call(e)

    def call(self, n):
        if n in FUNCTIONS:
            return self.builtin(n)
        return self.invoke(n)

    def builtin(self, n):
        r = Reader(self)

        return r.value(n) + len(SHARED)

    def convert(self, node):
        return node

    def invoke(self, n):
        return self.helper_body(n)

    def helper_body(self, n):
        return self.expr(n)
'''


def test_the_definition_on_a_small_module() -> None:
    tool = _tool()
    c = tool.count(MODULE)
    # call, builtin, convert (called by the reader only) and the reader class (whole); not expr or
    # stmt (shared), not invoke or helper_body (a helper call's entry and what only it reaches)
    assert c.names == ("Builder.builtin", "Builder.call", "Builder.convert", "Reader")
    assert c.functions == 4 + 3 + 2 + 5  # code lines: no blank line, comment or docstring
    assert c.table_names == ("FUNCTIONS", "SPELLINGS") and c.tables == 2


@pytest.mark.parametrize("lang", ["python", "rust", "cpp", "typescript"])
def test_every_frontend_is_measured_with_its_reader(lang: str) -> None:
    tool = _tool()
    text = (ROOT / "src" / "wavegpu" / "compiler" / "frontends" / f"{lang}.py").read_text()
    c = tool.count(text)
    assert "KernelBuilder.call" in c.names and "_Args" in c.names, c.names
    assert "KernelBuilder.expr" not in c.names and "SPELLINGS" in c.table_names
    assert 0 < c.functions < tool.code_lines(text)
