"""Lift and the renderers' tree walks: any nesting depth the container holds, without recursion."""

from __future__ import annotations

import sys

import pytest

import wavegpu as wg
from wavegpu.backends import NAMES, translate
from wavegpu.backends.lift import If, Loop, Stmt, lift, walk

# deeper than Python's default recursion limit, so a recursive walk anywhere fails
DEPTH = max(3000, sys.getrecursionlimit() + 500)


def deep_kernel(depth: int) -> wg.Program:
    """`depth` nested structures alternating if/else and loop (with a break), one add innermost."""
    head, tail = [], []
    for i in range(depth):
        if i % 2 == 0:
            head.append("  if p0")
            tail.append("  else\n    add.u32 r2, r2, 1\n  endif")
        else:
            head.append("  loop")
            tail.append("    break p0\n  endloop")
    text = "\n".join(
        [
            ".kernel deep",
            ".param n, scalar, u32",
            "  setp.eq.u32 p0, r0, 0",
            *head,
            "    add.u32 r1, r1, 1",
            *reversed(tail),
            "  ret",
            ".end",
        ]
    )
    return wg.assemble(text + "\n", "deep.wave")


@pytest.fixture(scope="module")
def deep() -> wg.Program:
    return deep_kernel(DEPTH)


def test_lift_and_walk_any_depth(deep: wg.Program) -> None:
    k = deep.kernels[0]
    tree = lift(k)
    depth, node = 0, tree[1]
    while isinstance(node, If | Loop):
        depth += 1
        inner = node.then if isinstance(node, If) else node.body
        node = inner[0]
    assert depth == DEPTH and isinstance(node, Stmt) and node.inst.spec.name == "add.u32"
    structure = {"if", "else", "endif", "loop", "endloop"}
    flat = [pc for pc, inst in enumerate(k.instructions) if inst.spec.name not in structure]
    assert [op.pc for op in walk(tree)] == flat  # every instruction, in program order


@pytest.mark.parametrize("target", NAMES)
def test_every_renderer_translates_any_depth(deep: wg.Program, target: str) -> None:
    text = translate(deep, target)
    if target == "ptx":
        assert "vote.sync" not in text  # no wave operation reads the active set (lift.mask_plan): no masks
        assert sum(line.startswith("$L_endloop") for line in text.splitlines()) == DEPTH // 2
        assert sum(line.startswith("$L_endif") for line in text.splitlines()) == (DEPTH + 1) // 2
    elif target == "amdgcn":  # one join label per if and per loop
        labels = [line for line in text.splitlines() if line.startswith(".L") and line.endswith(":")]
        assert sum("_endloop_" in line for line in labels) == DEPTH // 2
        assert sum("_endif_" in line for line in labels) == (DEPTH + 1) // 2
    else:
        body = text[text.index("r0 = a0;") :]
        assert body.count("if (p0) {") == (DEPTH + 1) // 2
        assert body.count("for (;;) {") == DEPTH // 2
        assert body.count("{") == body.count("}") - 1  # balanced, plus the kernel's closing brace
        inner = next(line for line in body.splitlines() if "r1 = (r1 + 0x1u);" in line)
        assert inner.startswith("    " * (DEPTH + 1))  # indented once per level
