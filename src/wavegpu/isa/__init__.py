"""The WAVE instruction set: the instruction table, types, registers and capabilities."""

from .capabilities import EMULATOR, DeviceCaps, get_capability
from .instruction import Guard, Imm, Instruction, Mem, Operand, Pair, Pred, Reg, SReg, Vec
from .registers import NUM_GPRS, NUM_PREDS, SPECIAL_REGISTERS, SpecialRegister
from .table import BY_CODE, BY_KEY, BY_MNEMONIC, ROWS, InstrSpec, row
from .types import SUBREGS, DataType, Kind, OperandSpec, Role

ISA_VERSION = (0, 1)

__all__ = [
    "BY_CODE",
    "BY_KEY",
    "BY_MNEMONIC",
    "EMULATOR",
    "ISA_VERSION",
    "NUM_GPRS",
    "NUM_PREDS",
    "ROWS",
    "SPECIAL_REGISTERS",
    "SUBREGS",
    "DataType",
    "DeviceCaps",
    "Guard",
    "Imm",
    "InstrSpec",
    "Instruction",
    "Kind",
    "Mem",
    "Operand",
    "OperandSpec",
    "Pair",
    "Pred",
    "Reg",
    "Role",
    "SReg",
    "SpecialRegister",
    "Vec",
    "get_capability",
    "row",
]
