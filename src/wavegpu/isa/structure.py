"""Facts about instruction sequences: structured control-flow nesting and register footprint."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from .instruction import Instruction, Mem, Pair, Pred, Reg, Vec
from .table import InstrSpec
from .vocabulary import Nest, Op


@dataclass(frozen=True)
class StructureIssue:
    index: int  # instruction index the problem is reported at
    message: str


class HasSpec(Protocol):
    """An instruction of any level that names its table row (Instruction, LIR's LInst)."""

    @property
    def spec(self) -> InstrSpec: ...


class Guarded(HasSpec, Protocol):
    @property
    def guard(self) -> object | None: ...


def check_structure(insts: Sequence[HasSpec]) -> list[StructureIssue]:
    """Balanced if/else/endif and loop/endloop; break/continue only inside a loop."""
    issues: list[StructureIssue] = []
    stack: list[tuple[str, int]] = []  # ("if"|"else"|"loop", index)
    for i, inst in enumerate(insts):
        spec = inst.spec
        role = spec.nest
        if role is Nest.OPEN_IF:
            stack.append(("if", i))
        elif role is Nest.ELSE:
            if not stack or stack[-1][0] != "if":
                issues.append(StructureIssue(i, "'else' without a matching 'if'"))
            else:
                stack[-1] = ("else", stack[-1][1])
        elif role is Nest.CLOSE and spec.op is Op.ENDIF:
            if not stack or stack[-1][0] not in ("if", "else"):
                issues.append(StructureIssue(i, "'endif' without a matching 'if'"))
            else:
                stack.pop()
        elif role is Nest.OPEN_LOOP:
            stack.append(("loop", i))
        elif role is Nest.CLOSE:
            if not stack or stack[-1][0] != "loop":
                issues.append(StructureIssue(i, "'endloop' without a matching 'loop'"))
            else:
                stack.pop()
        elif role in (Nest.BREAK, Nest.CONTINUE) and not any(k == "loop" for k, _ in stack):
            issues.append(StructureIssue(i, f"'{spec.name}' outside of a loop"))
    for kind, i in stack:
        closer = "endloop" if kind == "loop" else "endif"
        issues.append(StructureIssue(i, f"'{'loop' if kind == 'loop' else 'if'}' is never closed by '{closer}'"))
    return issues


@dataclass(frozen=True)
class Nesting:
    """The structure of a valid instruction sequence (see `nesting`)."""

    match: dict[int, tuple[int | None, int]]  # opener index -> (else index or None, closer index)
    opener: dict[int, int]  # else or closer index -> its opener's index
    loops: frozenset[int]  # the openers that are loops
    enclosing: tuple[int | None, ...]  # innermost construct around each index (an else is inside its if)
    loop: tuple[int | None, ...]  # innermost loop around each index (a loop's opener is inside it)
    depth: tuple[int, ...]  # constructs around each index (openers, elses and closers count outside)
    loop_depth: tuple[int, ...]  # loops around each index (a loop's opener and closer count outside)

    def is_loop(self, opener: int) -> bool:
        return opener in self.loops

    def closer(self, opener: int) -> int:
        return self.match[opener][1]


def nesting(insts: Sequence[HasSpec], *, strict: bool = True) -> Nesting:
    """Openers and closers matched, parents, loops and depths of a sequence that passed
    `check_structure` (the one walker every consumer uses: no one rediscovers nesting).

    With strict=False an unbalanced sequence is walked too (for printers): unmatched closers
    and elses are left out of `match` and `opener`, and `depth` counts down past them.
    """
    n = len(insts)
    match: dict[int, tuple[int | None, int]] = {}
    opener: dict[int, int] = {}
    loops: set[int] = set()
    enclosing: list[int | None] = [None] * n
    loop: list[int | None] = [None] * n
    depth = [0] * n
    loop_depth = [0] * n
    stack: list[list[int | None]] = []  # [opener, else]
    loop_stack: list[int] = []
    level = 0
    for i, inst in enumerate(insts):
        role = inst.spec.nest
        if role in (Nest.ELSE, Nest.CLOSE):
            level -= 1
        depth[i] = level
        if role is Nest.CLOSE and (stack or strict):
            start, els = stack.pop()
            assert start is not None
            match[start] = (els, i)
            opener[i] = start
            if start in loops:
                loop_stack.pop()
        if role is Nest.ELSE and (stack or strict):
            top = stack[-1]
            top[1] = i
            assert top[0] is not None
            opener[i] = top[0]
            enclosing[i] = top[0]
        else:
            enclosing[i] = stack[-1][0] if stack else None
        loop_depth[i] = len(loop_stack)
        if role is Nest.OPEN_IF:
            stack.append([i, None])
        elif role is Nest.OPEN_LOOP:
            stack.append([i, None])
            loops.add(i)
            loop_stack.append(i)
        if role in (Nest.OPEN_IF, Nest.OPEN_LOOP, Nest.ELSE):
            level += 1
        loop[i] = loop_stack[-1] if loop_stack else None
    assert not (stack and strict), "unbalanced structure (check_structure rejects this)"
    return Nesting(
        match=match,
        opener=opener,
        loops=frozenset(loops),
        enclosing=tuple(enclosing),
        loop=tuple(loop),
        depth=tuple(depth),
        loop_depth=tuple(loop_depth),
    )


def matching(insts: Sequence[HasSpec]) -> dict[int, tuple[int | None, int]]:
    """For each if/loop index: (else index or None, endif/endloop index). Assumes valid structure."""
    return nesting(insts).match


def successors(insts: Sequence[Guarded], nest: Nesting | None = None) -> list[list[int]]:
    """The control-flow successors of each index of a valid structured sequence: an if goes on
    or to its else arm (or past its endif), an else to its endif, an endloop back to the loop's
    first instruction or on, break past the endloop or on, continue to the loop's start or on,
    and an unguarded ret nowhere."""
    nest = nest or nesting(insts)
    n = len(insts)
    succ: list[list[int]] = [[] for _ in range(n)]
    for i, inst in enumerate(insts):
        role = inst.spec.nest
        nxt = [i + 1] if i + 1 < n else []
        if role is Nest.OPEN_IF:
            els, end = nest.match[i]
            succ[i] = [*nxt, els + 1 if els is not None else end]
        elif role is Nest.ELSE:
            succ[i] = [nest.match[nest.opener[i]][1]]
        elif role is Nest.CLOSE and nest.is_loop(nest.opener[i]):
            succ[i] = [nest.opener[i] + 1, *nxt]
        elif role is Nest.BREAK:
            lp = nest.loop[i]
            assert lp is not None
            end = nest.closer(lp)
            succ[i] = [end + 1, *nxt] if end + 1 < n else nxt
        elif role is Nest.CONTINUE:
            lp = nest.loop[i]
            assert lp is not None
            succ[i] = [lp + 1, *nxt]
        elif role is Nest.RET:
            succ[i] = nxt if inst.guard is not None else []
        else:
            succ[i] = nxt
    return succ


def operand_registers(o: object) -> tuple[int, ...]:
    """The general registers an operand names: a register, both of a pair, every one of a
    vector, a memory operand's base; none for the rest."""
    if isinstance(o, Reg):
        return (o.n,)
    if isinstance(o, Pair):
        return (o.n, o.n + 1)
    if isinstance(o, Vec):
        return tuple(range(o.n, o.n + o.count))
    if isinstance(o, Mem) and o.base is not None:
        return (o.base,)
    return ()


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
