"""Runtime: device-memory layout of kernel arguments and launching on devices."""

from .buffers import Layout, Slot, pack, scalar_bits

__all__ = ["Layout", "Slot", "pack", "scalar_bits"]
