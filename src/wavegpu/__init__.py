"""wavegpu: the WAVE GPU ISA with assembler, .wbin container, emulator, compiler and backends."""

from __future__ import annotations

from .asm import assemble
from .backends import translate
from .compiler.types import BOOL as bool_
from .compiler.types import F16 as f16
from .compiler.types import F32 as f32
from .compiler.types import F64 as f64
from .compiler.types import I8 as i8
from .compiler.types import I16 as i16
from .compiler.types import I32 as i32
from .compiler.types import U8 as u8
from .compiler.types import U16 as u16
from .compiler.types import U32 as u32
from .dis import disassemble
from .emulator import EmulationResult, Stats, emulate
from .errors import (
    AsmError,
    CapabilityError,
    CompileError,
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
from .runtime.kernel import KernelFunction, compile, kernel
from .runtime.launch import devices, launch
from .runtime.pyexec import *  # noqa: F403 - the kernel builtins, for plain-Python runs
from .runtime.pyexec import python_thread
from .runtime.sources import load_kernels
from .wbin import Kernel, Param, Program, load

__version__ = "0.1.0"

__all__ = [
    "EMULATOR",
    "ISA_VERSION",
    "AsmError",
    "CapabilityError",
    "CompileError",
    "DataType",
    "DeviceCaps",
    "Diagnostic",
    "EmulationResult",
    "EncodingError",
    "Kernel",
    "KernelFunction",
    "Param",
    "Program",
    "Span",
    "Stats",
    "Trap",
    "UndefinedBehaviour",
    "WaveError",
    "WbinError",
    "assemble",
    "bool_",
    "compile",
    "devices",
    "disassemble",
    "emulate",
    "f16",
    "f32",
    "f64",
    "get_capability",
    "i8",
    "i16",
    "i32",
    "kernel",
    "launch",
    "load",
    "load_kernels",
    "python_thread",
    "translate",
    "u8",
    "u16",
    "u32",
]
