"""LIR: structured, non-SSA instructions over virtual registers, ready for allocation."""
