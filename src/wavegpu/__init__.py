"""wavegpu: the WAVE GPU ISA with assembler, .wbin container, emulator, compiler and backends."""

from __future__ import annotations

from .asm import assemble
from .dis import disassemble
from .emulator import EmulationResult, Stats, emulate
from .errors import (
    AsmError,
    CapabilityError,
    Diagnostic,
    EncodingError,
    Span,
    Trap,
    UndefinedBehaviour,
    WaveError,
    WbinError,
)
from .isa import ISA_VERSION, DataType, get_capability
from .isa.capabilities import EMULATOR, DeviceCaps
from .wbin import Kernel, Param, Program, load

__version__ = "0.1.0"

__all__ = [
    "EMULATOR",
    "ISA_VERSION",
    "AsmError",
    "CapabilityError",
    "DataType",
    "DeviceCaps",
    "Diagnostic",
    "EmulationResult",
    "EncodingError",
    "Kernel",
    "Param",
    "Program",
    "Span",
    "Stats",
    "Trap",
    "UndefinedBehaviour",
    "WaveError",
    "WbinError",
    "assemble",
    "disassemble",
    "emulate",
    "get_capability",
    "load",
]
