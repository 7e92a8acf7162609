"""Disassembler: programs to canonical assembly text."""

from .text import disassemble, format_instruction, format_operand

__all__ = ["disassemble", "format_instruction", "format_operand"]
