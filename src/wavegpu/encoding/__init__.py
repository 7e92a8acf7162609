"""Instruction <-> bits, derived from the ISA table."""

from .codec import check_operands, decode, decode_all, encode, encode_bytes

__all__ = ["check_operands", "decode", "decode_all", "encode", "encode_bytes"]
