"""MIR operation + types -> the ISA row that implements it (one table for folding and selection)."""

from __future__ import annotations

from ..isa.table import BY_KEY
from .types import BOOL, F16, F32, F64, I32, U32, ScalarType

_SFX = {"i32": "s32", "u32": "u32", "f32": "f32", "f64": "f64", "f16": "f16"}

# op -> {type suffix: row key}, where the suffix is of the operand type
_ARITH = {
    "add": {
        "i32": "add.s32",
        "u32": "add.u32",
        "f32": "add.f32",
        "f64": "add.f64",
        "f16": "add.f16",
    },
    "sub": {
        "i32": "sub.s32",
        "u32": "sub.u32",
        "f32": "sub.f32",
        "f64": "sub.f64",
        "f16": "sub.f16",
    },
    "mul": {
        "i32": "mul.lo.s32",
        "u32": "mul.lo.u32",
        "f32": "mul.f32",
        "f64": "mul.f64",
        "f16": "mul.f16",
    },
    "div": {"i32": "div.s32", "u32": "div.u32", "f32": "div.f32", "f64": "div.f64"},
    "rem": {"i32": "rem.s32", "u32": "rem.u32"},
    "mulhi": {"i32": "mul.hi.s32", "u32": "mul.hi.u32"},
    "mad": {"i32": "mad.lo.s32", "u32": "mad.lo.u32"},
    "and": {"i32": "and.b32", "u32": "and.b32", "bool": "and.pred"},
    "or": {"i32": "or.b32", "u32": "or.b32", "bool": "or.pred"},
    "xor": {"i32": "xor.b32", "u32": "xor.b32", "bool": "xor.pred"},
    "not": {"i32": "not.b32", "u32": "not.b32", "bool": "not.pred"},
    "shl": {"i32": "shl.b32", "u32": "shl.b32"},
    "shr": {"i32": "shr.s32", "u32": "shr.u32"},
    "neg": {"i32": "neg.s32", "f32": "neg.f32", "f64": "neg.f64"},
    "abs": {"i32": "abs.s32", "f32": "abs.f32", "f64": "abs.f64"},
    "min": {"i32": "min.s32", "u32": "min.u32", "f32": "min.f32", "f64": "min.f64"},
    "max": {"i32": "max.s32", "u32": "max.u32", "f32": "max.f32", "f64": "max.f64"},
    "fma": {"f32": "fma.f32", "f64": "fma.f64", "f16": "fma.f16"},
    "sqrt": {"f32": "sqrt.f32", "f64": "sqrt.f64"},
    "rsqrt": {"f32": "rsqrt.f32"},
    "sin": {"f32": "sin.f32"},
    "cos": {"f32": "cos.f32"},
    "exp2": {"f32": "exp2.f32"},
    "log2": {"f32": "log2.f32"},
    "floor": {"f32": "cvt.rmi.f32.f32", "f64": "cvt.rmi.f64.f64"},
    "ceil": {"f32": "cvt.rpi.f32.f32", "f64": "cvt.rpi.f64.f64"},
}

_CMP = {"eq": "eq", "ne": "ne", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge"}

_CVT = {
    ("f32", "i32"): "cvt.f32.s32",
    ("f32", "u32"): "cvt.f32.u32",
    ("i32", "f32"): "cvt.s32.f32",
    ("u32", "f32"): "cvt.u32.f32",
    ("f64", "f32"): "cvt.f64.f32",
    ("f32", "f64"): "cvt.f32.f64",
    ("f64", "i32"): "cvt.f64.s32",
    ("f64", "u32"): "cvt.f64.u32",
    ("i32", "f64"): "cvt.s32.f64",
    ("u32", "f64"): "cvt.u32.f64",
    ("f16", "f32"): "cvt.f16.f32",
    ("f32", "f16"): "cvt.f32.f16",
    ("i32", "u32"): "mov.b32",
    ("u32", "i32"): "mov.b32",
}


def row_for(op: str, dst: ScalarType | None, args: list[ScalarType]) -> str | None:
    """The row key computing this value op, or None (no single row: handled by selection)."""
    t = args[0] if args else dst
    assert t is not None
    if op in _ARITH:
        key = _ARITH[op].get(t.name)
        if op == "abs" and t is U32:
            return "mov.b32"
        return key
    if op.startswith("cmp."):
        cc = op[4:]
        if t is BOOL:
            return None  # eq/ne on bools: xor.pred / not
        if t.is_float:
            cc = {"ne": "neu"}.get(cc, cc)  # Python: nan != nan is True
        return f"setp.{_CMP.get(cc, cc)}.{_SFX[t.name]}" if t.name in _SFX and t is not F16 else None
    if op == "cvt":
        assert dst is not None
        return _CVT.get((dst.name, t.name))
    if op == "select":
        assert dst is not None
        if dst is BOOL:
            return None
        return "selp.b64" if dst is F64 else "selp.b32"
    return None


def check_rows() -> None:
    """Every row named above exists (a test calls this)."""
    keys = [k for d in _ARITH.values() for k in d.values()] + list(_CVT.values())
    missing = [k for k in keys if k not in BY_KEY]
    if missing:
        raise AssertionError(f"select.py names missing rows: {missing}")


__all__ = ["F16", "F32", "F64", "I32", "U32", "check_rows", "row_for"]
