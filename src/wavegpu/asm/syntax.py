"""Lexing of assembly lines: comments, labels, statements, operands and literals."""

from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass

import numpy as np


class SyntaxProblem(Exception):
    """A problem at a column of the current line (converted to a Diagnostic by the assembler)."""

    def __init__(self, message: str, col: int, length: int = 1):
        super().__init__(message)
        self.message = message
        self.col = col
        self.length = length


@dataclass(frozen=True)
class Token:
    text: str
    col: int  # 1-based


@dataclass(frozen=True)
class Statement:
    labels: tuple[Token, ...]
    guard: Token | None  # "@p1", "@!p1", "@uniform"
    head: Token | None  # mnemonic or directive
    operands: tuple[Token, ...]


def strip_comment(line: str) -> str:
    """Cut `//`, `;` or `#` comments, respecting double-quoted strings."""
    in_str = False
    i = 0
    while i < len(line):
        c = line[i]
        if in_str:
            if c == "\\":
                i += 2
                continue
            if c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        elif c in ";#" or line.startswith("//", i):
            return line[:i]
        i += 1
    return line


_LABEL = re.compile(r"\s*([A-Za-z_$][\w.$]*)\s*:")


def split_statement(line: str) -> Statement:
    code = strip_comment(line)
    pos = 0
    labels = []
    while True:
        m = _LABEL.match(code, pos)
        if not m:
            break
        labels.append(Token(m.group(1), m.start(1) + 1))
        pos = m.end()
    rest = code[pos:]
    stripped = rest.lstrip()
    if not stripped:
        return Statement(tuple(labels), None, None, ())
    col = pos + len(rest) - len(stripped) + 1
    guard = None
    if stripped.startswith("@"):
        m = re.match(r"@\S*", stripped)
        assert m
        guard = Token(m.group(0), col)
        after = stripped[m.end() :]
        s2 = after.lstrip()
        col += m.end() + len(after) - len(s2)
        stripped = s2
        if not stripped:
            raise SyntaxProblem("a guard must precede an instruction", guard.col, len(guard.text))
    m = re.match(r"\S+", stripped)
    assert m
    head = Token(m.group(0), col)
    ops_text = stripped[m.end() :]
    ops_col = col + m.end()
    return Statement(tuple(labels), guard, head, tuple(split_operands(ops_text, ops_col)))


def split_operands(text: str, col0: int) -> list[Token]:
    """Split on top-level commas (not inside [] or {} or strings)."""
    out: list[Token] = []
    depth = 0
    in_str = False
    start = 0
    for i, c in enumerate(text + ","):
        if in_str:
            if c == '"' and text[i - 1] != "\\":
                in_str = False
            continue
        if c == '"':
            in_str = True
        elif c in "[{":
            depth += 1
        elif c in "]}":
            depth -= 1
        elif c == "," and depth <= 0:
            piece = text[start:i]
            s = piece.strip()
            lead = len(piece) - len(piece.lstrip())
            if s:
                out.append(Token(s, col0 + start + lead))
            elif i < len(text) or out:
                raise SyntaxProblem("empty operand", col0 + start)
            start = i + 1
    if depth > 0:
        raise SyntaxProblem("unbalanced bracket", col0)
    return out


# ---- literals ---------------------------------------------------------------------------------

_INT = re.compile(r"[-+]?(0[xX][0-9a-fA-F_]+|0[bB][01_]+|[0-9][0-9_]*)")
_FLOAT = re.compile(
    r"[-+]?(([0-9][0-9_]*)?\.[0-9_]*([eE][-+]?[0-9]+)?|[0-9][0-9_]*[eE][-+]?[0-9]+|inf|nan|infinity)",
    re.IGNORECASE,
)
_HEXF = re.compile(r"0[fF]([0-9a-fA-F]{8})|0[dD]([0-9a-fA-F]{16})")


@dataclass(frozen=True)
class Literal:
    """A parsed numeric literal: either an integer (`raw` if written in hex/binary) or a float."""

    kind: str  # "int", "float", "hexf32", "hexf64"
    value: int | float
    raw: bool = False  # an integer written in hex or binary: always raw bits


def parse_literal(text: str) -> Literal | None:
    t = text.strip()
    m = _HEXF.fullmatch(t)
    if m:
        return Literal("hexf32", int(m.group(1), 16)) if m.group(1) else Literal("hexf64", int(m.group(2), 16))
    m = _INT.fullmatch(t)
    if m:
        body = t.lstrip("+-").replace("_", "")
        if not body or body.lower() in ("0x", "0b"):
            return None
        v = int(body, 0) if body[:2].lower() in ("0x", "0b") else int(body, 10)
        raw = body[:2].lower() in ("0x", "0b")
        return Literal("int", -v if t.startswith("-") else v, raw)
    m = _FLOAT.fullmatch(t)
    if m:
        body = t.replace("_", "")
        if body.strip("+-.") == "" or body.lower().lstrip("+-") == "e":
            return None
        try:
            return Literal("float", float(body))
        except ValueError:
            return None
    return None


def f32_bits(v: float) -> int:
    if math.isnan(v):
        return 0x7FC00000 if math.copysign(1.0, v) > 0 else 0xFFC00000
    with np.errstate(over="ignore"):
        return struct.unpack("<I", np.float32(v).tobytes())[0]


def f64_bits(v: float) -> int:
    if math.isnan(v):
        return 0x7FF8000000000000 if math.copysign(1.0, v) > 0 else 0xFFF8000000000000
    return struct.unpack("<Q", struct.pack("<d", v))[0]


def literal_bits(lit: Literal, width: int, float_slot: bool) -> int:
    """The literal's bits in a 32- or 64-bit slot; raises ValueError when it does not fit."""
    if lit.kind == "hexf32":
        if width != 32:
            raise ValueError("a 0f hex float is a 32-bit value; use 0d for a 64-bit slot")
        return int(lit.value)
    if lit.kind == "hexf64":
        if width != 64:
            raise ValueError("a 0d hex float is a 64-bit value; use 0f for a 32-bit slot")
        return int(lit.value)
    if lit.kind == "float" or (float_slot and not lit.raw):
        v = float(lit.value)
        return f32_bits(v) if width == 32 else f64_bits(v)
    v = int(lit.value)
    if not -(1 << (width - 1)) <= v < (1 << width):
        raise ValueError(f"integer {v} does not fit in {width} bits")
    return v & ((1 << width) - 1)
