"""Where a float result's NaN payload can be seen: the canonicalisation plan of a kernel.

WAVE's NaN result is the canonical NaN (DESIGN section 3), but a payload is observable only where
a value's bits leave float arithmetic. The float rows in `FLOAT_ROWS` read their float sources as
values: a NaN source gives a NaN result and a non-NaN result never depends on a NaN's payload
(IEEE arithmetic, conversions between float formats, rounding to integral values, comparisons),
so such a row fed a non-canonical NaN computes what it computes from the canonical one, up to the
payload of its own result. Every other read of a register observes its bits: a store, an integer
or bit operation (neg/abs of a float flip or clear the sign bit of whatever NaN comes in, so they
are bit operations here), a shuffle, an atomic, a conversion done by a helper, a sub-register
access, a helper call. Copies (`mov`, the data operands of `selp`/`slct`) only move bits: where
the copy is observed, what it copies is.

`plan(instructions)` runs a forward dataflow over the structured program (loops to the fixpoint)
that tracks, for every register at every instruction, the *origins* of its bits (the defining
instructions, copies looked through; the kernel's entry for presets) and classifies each origin:
a float row whose canonicalisation a backend may leave out (f32 or f64), a value whose bits
already are what canonicalisation would give (an immediate that is no non-canonical NaN), or
anything else. At every observing read of a register:

- when every origin is an f32 float row or such a stable value, the backend canonicalises the
  register in place just before the read (`Plan.at_use`): an f32 NaN test and select, which is
  the identity on stable values and on results already canonical. A loop's accumulator stored
  after the loop is canonicalised once, at the store, not on every iteration; the register is
  then a stable value for the reads after it (a value stored twice is checked once);
- otherwise every float-row origin of the register is canonicalised where it is defined
  (`Plan.at_def`).

A float row in neither set is never observed before it is overwritten or read by float rows only:
the backend emits it bare. The control flow graph over-approximates the program's paths (a loop
may also leave at its end, a `ret` may fall through), which can only add canonicalisation.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass

from ..isa.instruction import Imm, Instruction, Mem, Pair, Reg
from ..isa.structure import footprint, operand_registers, successors
from ..isa.types import DataType, Role
from ..isa.vocabulary import Op as VOp

_ARITH = ("add", "sub", "mul", "fma", "div", "sqrt")
_ROUND = ("rni", "rzi", "rmi", "rpi")
F32_ROWS = frozenset([f"{o}.f32" for o in _ARITH] + [f"cvt.{r}.f32.f32" for r in _ROUND] + ["cvt.f32.f64"])
"""Float rows with an f32 result that read their sources as float values (see the docstring)."""
F64_ROWS = frozenset([f"{o}.f64" for o in _ARITH] + [f"cvt.{r}.f64.f64" for r in _ROUND] + ["cvt.f64.f32"])
"""The same with an f64 (register pair) result."""
FLOAT_ROWS = F32_ROWS | F64_ROWS
"""The rows a backend may leave uncanonicalised (their result's canonicalisation is planned)."""

COPIES = frozenset({"mov.b32", "mov.b64", "selp.b32", "selp.b64", "slct.s32.f32", "slct.b32.s32"})
"""Rows whose data sources only move into the destination (selp/slct: the first two sources)."""

_ENTRY, _F32, _F64, _STABLE, _OTHER = range(5)


def _stable_imm(o: object) -> bool:
    """An immediate whose bits canonicalisation leaves alone: 64-bit ones count as unknown."""
    if not isinstance(o, Imm) or o.width != 32:
        return False
    b = o.bits & 0xFFFFFFFF
    return (b & 0x7F800000) != 0x7F800000 or (b & 0x007FFFFF) == 0 or b == 0x7FFFFFFF


def _transparent(inst: Instruction, slot: int) -> bool:
    """Whether source operand `slot` of inst is read as a float value (no bits observed)."""
    spec = inst.spec
    if spec.key in FLOAT_ROWS:
        return True
    if spec.op is VOp.SETP and spec.dtype in (DataType.F32, DataType.F64):
        return True
    # slct's comparand (compared with 0, never moved) when it is a float
    return spec.op is VOp.SLCT and slot == 3 and spec.operands[slot].dtype is DataType.F32


@dataclass(frozen=True)
class Plan:
    """Where a backend canonicalises float results (see the module docstring).

    `at_def`: the pcs of FLOAT_ROWS instructions whose result is canonicalised when written.
    `at_use`: pc -> the registers to canonicalise (f32 NaN test, in place) before instruction pc.
    A FLOAT_ROWS instruction whose pc is not in `at_def` is emitted without canonicalisation."""

    at_def: frozenset[int]
    at_use: dict[int, tuple[int, ...]]
    active: bool = True  # False: no plan, every float row canonicalises its result (`Plan.off`)

    @classmethod
    def off(cls) -> Plan:
        """The plan of a backend that canonicalises every float result where it is made."""
        return cls(frozenset(), {}, False)

    def bare(self, pc: int, key: str) -> bool:
        """The float row `key` at pc (an index into the plan's instructions) may skip
        canonicalising its result."""
        return self.active and pc >= 0 and key in FLOAT_ROWS and pc not in self.at_def


def _observed(inst: Instruction) -> list[int]:
    """The registers whose bits inst observes (see the module docstring), each once."""
    spec = inst.spec
    out: list[int] = []
    copy_srcs = 0
    if spec.key in COPIES:
        d = inst.operands[spec.dests[0]]
        if not (isinstance(d, Reg) and d.sel):
            copy_srcs = 2 if spec.key[0] == "s" else 1
    nsrc = 0
    for slot, (o, s) in enumerate(zip(inst.operands, spec.operands)):
        if s.role is Role.SRC and not isinstance(o, Mem):
            nsrc += 1
            whole = not isinstance(o, Reg) or o.sel == 0
            if whole and (nsrc <= copy_srcs or _transparent(inst, slot)):
                continue
            out += operand_registers(o)
        elif isinstance(o, Mem) or (isinstance(o, Reg) and o.sel):
            out += operand_registers(o)
    return list(dict.fromkeys(out))


def plan(insts: Sequence[Instruction]) -> Plan:
    """The canonicalisation plan of a kernel's instruction list (structured, as in a .wbin)."""
    n = len(insts)
    nregs = max([footprint(i)[0] for i in insts] + [1])
    succ = successors(insts)  # an unguarded ret goes nowhere; the last instruction to no pc
    cls: list[int] = [_OTHER] * n  # the class of pc's own origin (bit pc + 1); bit 0 is the entry
    for pc, inst in enumerate(insts):
        key = inst.spec.key
        if key in F32_ROWS:
            cls[pc] = _F32
        elif key in F64_ROWS:
            cls[pc] = _F64
        elif key in COPIES and all(
            _stable_imm(o) if isinstance(o, Imm) else not (isinstance(o, Reg) and o.sel) for o in inst.operands
        ):
            cls[pc] = _STABLE  # immediates that are no non-canonical NaN, whole registers copied

    f32_bits = f64_bits = stable_bits = 0
    for pc, c in enumerate(cls):
        if c == _F32:
            f32_bits |= 1 << (pc + 1)
        elif c == _F64:
            f64_bits |= 1 << (pc + 1)
        elif c == _STABLE:
            stable_bits |= 1 << (pc + 1)
    floats = f32_bits | f64_bits
    if not floats:  # no float row: nothing to place (and no dataflow, quadratic in loop nesting)
        return Plan(frozenset(), {})
    # bit n + 1 + pc: "made canonical in place before pc" (a stable origin for later reads)
    stable_bits |= ((1 << n) - 1) << (n + 1)
    observed = [_observed(inst) for inst in insts]

    def in_place(origins: int) -> bool:
        """A read with these origins is canonicalised in place (else: at the float defs)."""
        return bool(origins & floats) and origins & ~(f32_bits | stable_bits) == 0

    def transfer(pc: int, state: list[int]) -> list[int]:
        inst = insts[pc]
        spec = inst.spec
        out = list(state)
        for r in observed[pc]:
            if in_place(state[r]):
                out[r] = state[r] = 1 << (n + 1 + pc)
        own = 1 << (pc + 1)
        dests = spec.dests
        if not dests:
            return out
        if spec.key in COPIES:
            d = inst.operands[dests[0]]
            srcs = [o for o, s in zip(inst.operands, spec.operands) if s.role is Role.SRC]
            srcs = srcs[: 2 if spec.key[0] == "s" else 1]
            width = 2 if isinstance(d, Pair) else 1
            if isinstance(d, (Reg, Pair)) and not (isinstance(d, Reg) and d.sel):
                for h in range(width):
                    o = 0
                    for s in srcs:
                        if isinstance(s, Reg) and s.sel == 0:
                            o |= state[s.n]
                        elif isinstance(s, Pair):
                            o |= state[s.n + h]
                        else:
                            o |= own
                    out[d.n + h] = o | (state[d.n + h] if inst.guard is not None else 0)
                return out
        for j in dests:
            o = inst.operands[j]
            if isinstance(o, Mem):
                continue
            for r in operand_registers(o):
                keep = inst.guard is not None or (isinstance(o, Reg) and o.sel != 0)
                out[r] = own | (state[r] if keep else 0)
        return out

    ins: list[list[int] | None] = [None] * (n + 1)
    ins[0] = [1] * nregs
    work = [0]
    queued = {0}
    while work:  # the sets only grow: a fixpoint
        pc = heapq.heappop(work)  # forward order keeps the sweep short
        queued.discard(pc)
        st = ins[pc]
        assert st is not None
        out = transfer(pc, list(st))
        for s in succ[pc]:
            cur = ins[s]
            if cur is None:
                ins[s] = list(out)
            else:
                merged = [a | b for a, b in zip(cur, out)]
                if merged == cur:
                    continue
                ins[s] = merged
            if s not in queued:
                queued.add(s)
                heapq.heappush(work, s)

    at_def = 0
    for pc, inst in enumerate(insts):  # a float row writing part of a register: canonical there
        if cls[pc] in (_F32, _F64) and any(isinstance(op := inst.operands[j], Reg) and op.sel for j in inst.spec.dests):
            at_def |= 1 << (pc + 1)
    at_use: dict[int, tuple[int, ...]] = {}
    for pc in range(n):
        st = ins[pc]
        if st is None:  # unreachable
            continue
        here: list[int] = []
        for r in observed[pc]:
            if in_place(st[r]):
                here.append(r)
            else:
                at_def |= st[r] & floats
        if here:
            at_use[pc] = tuple(here)
    return Plan(frozenset(pc for pc in range(n) if at_def >> (pc + 1) & 1), at_use)
