"""Facts about instruction sequences: structured control-flow nesting and register footprint."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .instruction import Instruction, Mem, Pair, Pred, Reg, Vec


@dataclass(frozen=True)
class StructureIssue:
    index: int  # instruction index the problem is reported at
    message: str


def check_structure(insts: Sequence[Instruction]) -> list[StructureIssue]:
    """Balanced if/else/endif and loop/endloop; break/continue only inside a loop."""
    issues: list[StructureIssue] = []
    stack: list[tuple[str, int]] = []  # ("if"|"else"|"loop", index)
    for i, inst in enumerate(insts):
        n = inst.spec.name
        if n in ("if", "if.uniform"):
            stack.append(("if", i))
        elif n == "else":
            if not stack or stack[-1][0] != "if":
                issues.append(StructureIssue(i, "'else' without a matching 'if'"))
            else:
                stack[-1] = ("else", stack[-1][1])
        elif n == "endif":
            if not stack or stack[-1][0] not in ("if", "else"):
                issues.append(StructureIssue(i, "'endif' without a matching 'if'"))
            else:
                stack.pop()
        elif n == "loop":
            stack.append(("loop", i))
        elif n == "endloop":
            if not stack or stack[-1][0] != "loop":
                issues.append(StructureIssue(i, "'endloop' without a matching 'loop'"))
            else:
                stack.pop()
        elif n in ("break", "continue") and not any(k == "loop" for k, _ in stack):
            issues.append(StructureIssue(i, f"'{n}' outside of a loop"))
    for kind, i in stack:
        closer = "endloop" if kind == "loop" else "endif"
        issues.append(StructureIssue(i, f"'{'loop' if kind == 'loop' else 'if'}' is never closed by '{closer}'"))
    return issues


def matching(insts: Sequence[Instruction]) -> dict[int, tuple[int | None, int]]:
    """For each if/loop index: (else index or None, endif/endloop index). Assumes valid structure."""
    out: dict[int, tuple[int | None, int]] = {}
    stack: list[list[int | None]] = []
    for i, inst in enumerate(insts):
        n = inst.spec.name
        if n in ("if", "if.uniform", "loop"):
            stack.append([i, None])
        elif n == "else":
            stack[-1][1] = i
        elif n in ("endif", "endloop"):
            start, els = stack.pop()
            assert start is not None
            out[start] = (els, i)
    return out


def footprint(inst: Instruction) -> tuple[int, int]:
    """(highest GPR index used + 1, highest predicate index used + 1) by one instruction."""
    gpr = 0
    pred = 0
    for op in inst.operands:
        if isinstance(op, Reg):
            gpr = max(gpr, op.n + 1)
        elif isinstance(op, Pair):
            gpr = max(gpr, op.n + 2)
        elif isinstance(op, Vec):
            gpr = max(gpr, op.n + op.count)
        elif isinstance(op, Mem) and op.base is not None:
            gpr = max(gpr, op.base + 1)
        elif isinstance(op, Pred):
            pred = max(pred, op.n + 1)
    if inst.guard is not None:
        pred = max(pred, inst.guard.pred + 1)
    return gpr, pred
