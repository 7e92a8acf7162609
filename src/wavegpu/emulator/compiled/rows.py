"""The compiled engine's spelling of every value row: a scalar expression per row key.

`EXPR[key]` is a format string over the sources' values (`{0}`, `{1}`, ...: int64 raw bits for
registers and pairs, bool for predicates) built from the helpers in `scalar` (and the fma32
intrinsic); the result is raw bits of the destination (a bool for a predicate). The kernel's
driver writes them inline (codegen.Gen.inline). `isa.semantics` is the reference these
expressions must match bit for bit: tests/emulator/compiled/test_compiled_rows.py compares
every row on random and special values.
"""

from __future__ import annotations

from ...isa.table import ROWS
from ...isa.types import DataType
from ...isa.vocabulary import Cmp, Op, Rounding

M = "0xFFFFFFFF"

EXPR: dict[str, str] = {
    "mov.b32": "{0}",
    "mov.b64": "{0}",
    "mov.pred": "{0}",
    "add.s32": f"(({{0}} + {{1}}) & {M})",
    "add.u32": f"(({{0}} + {{1}}) & {M})",
    "sub.s32": f"(({{0}} - {{1}}) & {M})",
    "sub.u32": f"(({{0}} - {{1}}) & {M})",
    "mul.lo.s32": f"(({{0}} * {{1}}) & {M})",
    "mul.lo.u32": f"(({{0}} * {{1}}) & {M})",
    "mul.hi.s32": "mulhi_s({0}, {1})",
    "mul.hi.u32": "mulhi_u({0}, {1})",
    "mul.wide.s32": "(s32({0}) * s32({1}))",
    "mul.wide.u32": "({0} * {1})",
    "mad.lo.s32": f"(({{0}} * {{1}} + {{2}}) & {M})",
    "mad.lo.u32": f"(({{0}} * {{1}} + {{2}}) & {M})",
    "div.s32": "div_s({0}, {1})",
    "div.u32": "div_u({0}, {1})",
    "rem.s32": "rem_s({0}, {1})",
    "rem.u32": "rem_u({0}, {1})",
    "neg.s32": f"((-{{0}}) & {M})",
    "abs.s32": "abs_s({0})",
    "min.s32": "min_s({0}, {1})",
    "max.s32": "max_s({0}, {1})",
    "min.u32": "min({0}, {1})",
    "max.u32": "max({0}, {1})",
    "clamp.s32": "clamp_s({0}, {1}, {2})",
    "clamp.u32": "clamp_u({0}, {1}, {2})",
    "dp4a.s32.s32": "dp4a({0}, {1}, {2}, True)",
    "dp4a.u32.u32": "dp4a({0}, {1}, {2}, False)",
    "and.b32": "({0} & {1})",
    "or.b32": "({0} | {1})",
    "xor.b32": "({0} ^ {1})",
    "not.b32": f"((~{{0}}) & {M})",
    "and.pred": "({0} and {1})",
    "or.pred": "({0} or {1})",
    "xor.pred": "({0} != {1})",
    "not.pred": "(not {0})",
    "shl.b32": "shl({0}, {1})",
    "shr.u32": "shr_u({0}, {1})",
    "shr.s32": "shr_s({0}, {1})",
    "popc.b32": "popc({0})",
    "clz.b32": "clz({0})",
    "brev.b32": "brev({0})",
    "bfe.u32": "bfe({0}, {1}, {2}, False)",
    "bfe.s32": "bfe({0}, {1}, {2}, True)",
    "bfi.b32": "bfi({0}, {1}, {2}, {3})",
    # f32
    "add.f32": "c32(f32({0}) + f32({1}))",
    "sub.f32": "c32(f32({0}) - f32({1}))",
    "mul.f32": "c32(f32({0}) * f32({1}))",
    "fma.f32": "c32(fma32(f32({0}), f32({1}), f32({2})))",
    "div.f32": "c32(f32({0}) / f32({1}))",
    "sqrt.f32": "c32(np.sqrt(f32({0})))",
    "rcp.f32": "r32(1.0 / f32w({0}))",
    "rsqrt.f32": "r32(1.0 / np.sqrt(f32w({0})))",
    "neg.f32": "({0} ^ 0x80000000)",
    "abs.f32": "({0} & 0x7FFFFFFF)",
    "min.f32": "c32(fmin(f32({0}), f32({1})))",
    "max.f32": "c32(fmax(f32({0}), f32({1})))",
    "sin.f32": "r32(np.sin(f32w({0})))",
    "cos.f32": "r32(np.cos(f32w({0})))",
    "exp2.f32": "r32(np.exp2(f32w({0})))",
    "log2.f32": "r32(np.log2(f32w({0})))",
    "fract.f32": "fract({0})",
    "sat.f32": "sat({0})",
    "clamp.f32": "c32(fmin(fmax(f32({0}), f32({1})), f32({2})))",
    # f64 on pairs
    "add.f64": "c64(f64({0}) + f64({1}))",
    "sub.f64": "c64(f64({0}) - f64({1}))",
    "mul.f64": "c64(f64({0}) * f64({1}))",
    "div.f64": "c64(f64({0}) / f64({1}))",
    "fma.f64": "fma_f64({0}, {1}, {2})",
    "sqrt.f64": "c64(np.sqrt(f64({0})))",
    "neg.f64": "({0} ^ -0x8000000000000000)",
    "abs.f64": "({0} & 0x7FFFFFFFFFFFFFFF)",
    "min.f64": "c64(fmin(f64({0}), f64({1})))",
    "max.f64": "c64(fmax(f64({0}), f64({1})))",
    # conversions
    "cvt.f32.s32": "c32(np.float32(s32({0})))",
    "cvt.f32.u32": "c32(np.float32({0}))",
    "cvt.s32.f64": "to_int(f64({0}), 0, True)",
    "cvt.u32.f64": "to_int(f64({0}), 0, False)",
    "cvt.f64.s32": "c64(np.float64(s32({0})))",
    "cvt.f64.u32": "c64(np.float64({0}))",
    "cvt.f16.f32": "f16_from64(f32w({0}))",
    "cvt.f32.f16": "c32(half_f32({0} & 0xFFFF))",
    "cvt.bf16.f32": "bf16_from32({0})",
    "cvt.f32.bf16": "c32(f32(({0} & 0xFFFF) << 16))",
    "cvt.f64.f32": "c64(f32w({0}))",
    "cvt.f32.f64": "c32(np.float32(f64({0})))",
    "cvt.rz.f32.f64": "cvt_rz_f32_f64({0})",
    # selects
    "selp.b32": "({0} if {2} else {1})",
    "selp.b64": "({0} if {2} else {1})",
    "slct.s32.f32": "({0} if f32({2}) >= 0 else {1})",
    "slct.b32.s32": "({0} if s32({2}) >= 0 else {1})",
}

_MODE = {None: 0, Rounding.RZI: 0, Rounding.RNI: 1, Rounding.RMI: 2, Rounding.RPI: 3}
_CONDS = tuple(Cmp)
_HALF = {
    DataType.F16: ("f16_to64", "f16_from64", False),
    DataType.F16X2: ("f16_to64", "f16_from64", True),
    DataType.BF16: ("bf16_to64", "bf16_from64", False),
    DataType.BF16X2: ("bf16_to64", "bf16_from64", True),
}
_HALF_OP = {Op.ADD: ("half_add", 2), Op.SUB: ("half_sub", 2), Op.MUL: ("half_mul", 2), Op.FMA: ("half_fma", 3)}

for _r in ROWS:
    _t = _r.dtype
    if _r.op is Op.SETP and _t is not None:
        c = _CONDS.index(_r.variant)
        if _t is DataType.F32:
            EXPR[_r.key] = f"fcmp(f32({{0}}), f32({{1}}), {c})"
        elif _t is DataType.F64:
            EXPR[_r.key] = f"fcmp(f64({{0}}), f64({{1}}), {c})"
        elif _t is DataType.S32:
            EXPR[_r.key] = f"icmp(s32({{0}}), s32({{1}}), {c})"
        else:
            EXPR[_r.key] = f"icmp({{0}}, {{1}}, {c})"
    elif _r.op is Op.CVT and _r.key not in EXPR and _t is not None:
        dst = _r.operands[0].dtype
        mode = _MODE.get(_r.variant)
        if mode is None:
            continue
        if _t is DataType.F32 and dst in (DataType.S32, DataType.U32):
            EXPR[_r.key] = f"to_int(f32w({{0}}), {mode}, {dst is DataType.S32})"
        elif _t is DataType.F32 and dst is DataType.F32:
            EXPR[_r.key] = f"round_f32({{0}}, {mode})"
        elif _t is DataType.F64 and dst is DataType.F64:
            EXPR[_r.key] = f"round_f64({{0}}, {mode})"
    elif _t in _HALF and _r.op in _HALF_OP:
        to, frm, packed = _HALF[_t]
        fn, n = _HALF_OP[_r.op]
        lo = f"{frm}({fn}({', '.join(f'{to}({{{i}}} & 0xFFFF)' for i in range(n))}))"
        if packed:
            hi = f"{frm}({fn}({', '.join(f'{to}(({{{i}}} >> 16) & 0xFFFF)' for i in range(n))}))"
            EXPR[_r.key] = f"({lo} | ({hi} << 16))"
        else:
            EXPR[_r.key] = lo

HELPERS = [
    "s32",
    "c32",
    "c64",
    "r32",
    "f32",
    "f64",
    "f32w",
    "mulhi_s",
    "mulhi_u",
    "div_u",
    "rem_u",
    "div_s",
    "rem_s",
    "abs_s",
    "min_s",
    "max_s",
    "clamp_s",
    "clamp_u",
    "dp4a",
    "shl",
    "shr_u",
    "shr_s",
    "popc",
    "clz",
    "brev",
    "bfe",
    "bfi",
    "fmin",
    "fmax",
    "fma_f64",
    "fract",
    "sat",
    "to_int",
    "round_f32",
    "round_f64",
    "cvt_rz_f32_f64",
    "f16_to64",
    "half_f32",
    "f16_from64",
    "bf16_to64",
    "bf16_from32",
    "bf16_from64",
    "half_add",
    "half_sub",
    "half_mul",
    "half_fma",
    "fcmp",
    "icmp",
    "fold_minmax_f32",
]
"""The names of `scalar` a generated module imports."""
