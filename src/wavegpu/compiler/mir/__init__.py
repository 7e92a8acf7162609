"""MIR: the SSA control-flow-graph IR the optimiser works on."""

from .ir import Block, Br, CondBr, Const, Function, Inst, Phi, Ret, Value, dump
from .parse import parse
from .verify import verify

__all__ = [
    "Block",
    "Br",
    "CondBr",
    "Const",
    "Function",
    "Inst",
    "Phi",
    "Ret",
    "Value",
    "dump",
    "parse",
    "verify",
]
