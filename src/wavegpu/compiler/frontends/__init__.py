"""Frontends: each turns one source language into HIR (only Python so far)."""
