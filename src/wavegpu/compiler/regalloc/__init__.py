"""Register allocation: Chaitin-Briggs graph colouring of LIR virtual registers."""

from .chaitin import allocate

__all__ = ["allocate"]
