"""The reference emulator: vectorised SIMT execution of WAVE kernels in NumPy."""

from .bounds import BufferRegion
from .launch import DEFAULT_MAX_INSTRUCTIONS, EmulationResult, emulate
from .stats import Stats

__all__ = ["DEFAULT_MAX_INSTRUCTIONS", "BufferRegion", "EmulationResult", "Stats", "emulate"]
