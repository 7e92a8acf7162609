"""Assembler: canonical WAVE assembly and the flat Rust dialect to programs."""

from .assembler import assemble

__all__ = ["assemble"]
