"""wavegpu: the WAVE GPU ISA with assembler, .wbin container, emulator, compiler and backends."""

from __future__ import annotations

from .asm import assemble
from .dis import disassemble
from .errors import AsmError, CapabilityError, Diagnostic, EncodingError, Span, WaveError, WbinError
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
    "EncodingError",
    "Kernel",
    "Param",
    "Program",
    "Span",
    "WaveError",
    "WbinError",
    "assemble",
    "disassemble",
    "get_capability",
    "load",
]
