"""The rules on access entries and read-only marks that the writer, reader and assembler share."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..isa.instruction import Instruction
from .program import Param

# Kernel and parameter names: what the assembler reads, so every name prints as assembly.
NAME = re.compile(r"[A-Za-z_$][\w$.]*")


def is_identifier(name: str) -> bool:
    return NAME.fullmatch(name) is not None


def readonly_problem(p: Param) -> str | None:
    """Why this parameter cannot carry the read-only mark, or None."""
    if not p.writable and p.kind != "buffer":
        return f"parameter {p.name!r} is a scalar; only a buffer can be read-only"
    return None


def access_problem(inst: Instruction, param: int, params: Sequence[Param]) -> str | None:
    """Why `param` cannot be the buffer that `inst` accesses, or None when it can."""
    name = inst.spec.name
    if not inst.spec.is_global_access:
        return f"{name} does not access global memory; only global loads, stores and atomics have an access entry"
    if not 0 <= param < len(params):
        return f"parameter index {param} is out of range (the kernel has {len(params)} parameters)"
    p = params[param]
    if p.kind != "buffer":
        return f"parameter {p.name!r} is a scalar, not a buffer"
    if inst.spec.side_effects and not p.writable:
        return f"{name} writes memory, but buffer {p.name!r} is read-only"
    return None
