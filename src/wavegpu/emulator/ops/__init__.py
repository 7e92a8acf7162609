"""The emulator's operations by class, dispatched through the typed instruction vocabulary.

Each handler is a plain function `(state, instruction, pc) -> Step`: it resolves the operands once
and returns the closure that executes the instruction on the batch `state` (emulator.state).
Value rows (integer, float, conversion, compare, moves) go through their isa.semantics function
(`ops.alu`); every other row through the handler of its operation (HANDLERS). `execute` runs one
instruction outside the interpreter, for another engine's tests.
"""

from __future__ import annotations

from collections.abc import Callable

from ...isa import semantics as sem
from ...isa.instruction import Instruction
from ...isa.vocabulary import ATOMIC_OPS, MEMORY_OPS, NEST_OF, WAVE_OPS, Op
from ..state import State, Step
from .alu import compile_nop, compile_sreg, compile_value, value_function
from .atomic import compile_atomic
from .control import compile_barrier, compile_control
from .memory import compile_memory
from .mma import compile_mma
from .wave import compile_wave

Handler = Callable[[State, Instruction, int], Step]

HANDLERS: dict[Op, Handler] = {
    Op.MOV: compile_sreg,  # the other moves are value rows
    **{o: compile_memory for o in MEMORY_OPS},
    **{o: compile_atomic for o in ATOMIC_OPS},
    **{o: compile_wave for o in WAVE_OPS},
    **{o: compile_control for o in NEST_OF},
    Op.BARRIER: compile_barrier,
    Op.NOP: compile_nop,
    Op.FENCE: compile_nop,  # the machine is sequentially consistent
    Op.MMA: compile_mma,
}
"""Operation -> the function compiling its rows (rows with value semantics excepted)."""


def compile_instruction(st: State, inst: Instruction, pc: int) -> Step:
    """The closure running one instruction on the batch `st`."""
    spec = inst.spec
    if spec.key in sem.SEMANTICS:
        return compile_value(st, inst, pc, value_function(spec.key))
    handler = HANDLERS.get(spec.op)
    if handler is None:
        raise NotImplementedError(f"no semantics for {spec.key}")  # tests/emulator forbid this
    return handler(st, inst, pc)


def execute(st: State, inst: Instruction, pc: int) -> int | None:
    """Run one instruction on `st` (compiled afresh); the next pc, or None for pc + 1."""
    return compile_instruction(st, inst, pc)()


__all__ = ["HANDLERS", "Handler", "compile_instruction", "execute"]
