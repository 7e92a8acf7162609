"""The per-row machine code shared by every kernel for atomics and wave operations: one numba
function per row, running it over all lanes of one workgroup in ascending lane order under the
execution mask (active lanes, guard applied), with register numbers as arguments; compiled once
(on first use, then cached on disk with the module), called by every kernel's driver. Sources
are registers (immediates and special registers are preloaded into constant registers by the
driver; sub-registers are extracted into a scratch register first). Value rows, loads and
stores are not here: the driver writes them inline into its lane loops (codegen.Gen.inline)
from the same expressions (rows.EXPR).
"""

from __future__ import annotations

from ...isa.table import ROWS, InstrSpec
from ...isa.types import DataType
from ...isa.vocabulary import AtomOp, Op, ReduceOp, ShuffleMode
from .rows import EXPR, HELPERS

M32 = 0xFFFFFFFF
DECO = "@njit(cache=True, nogil=True, error_model='numpy', boundscheck=False)"
GUARD = "act[l] and (g < 0 or P[g, l] == gp)"
MEM_ARGS = "m8, m16, m32, size, rs, re, own_lo, own_hi, pc, nb"

MEMORY_AND_WAVE_OPS = frozenset(
    {Op.LD, Op.ST, Op.ATOM, Op.RED, Op.REDUCE, Op.BROADCAST, Op.SHUFFLE, Op.PREFIX, Op.BALLOT, Op.ANY, Op.ALL}
)
"""Rows with a generated function of their own kind (memory, atomics, wave operations)."""
VALUE_OPS = frozenset(Op) - MEMORY_AND_WAVE_OPS


def fname(spec: InstrSpec) -> str:
    return f"row_{ROWS.index(spec)}"


def _check(width: int, space: str) -> list[str]:
    cond = f"a + {width} > size"
    if width > 1:
        cond += f" or (a & {width - 1}) != 0"
    if space == "global":
        cond += f" or (nb >= 0 and not inside(a, {width}, rs, re, own_lo, own_hi, pc, nb))"
    return ["a = off if base < 0 else (R[base, l] + off) & 0xFFFFFFFF", f"if {cond}:", "    return 1"]


_RMW = {AtomOp.ADD: "add", AtomOp.SUB: "sub", AtomOp.AND: "and", AtomOp.OR: "or", AtomOp.XOR: "xor"}


def rmw(spec: InstrSpec) -> str | None:
    """The atomic instruction (an `intrinsics.rmw_*`) of a global atomic whose memory result does
    not depend on the order in which lanes and workgroups apply it, else None (exchange,
    compare-and-swap and f32 add, whose rounding depends on the order)."""
    op, t = spec.variant, spec.dtype
    if spec.space != "global" or t is DataType.F32:
        return None
    if op in (AtomOp.MIN, AtomOp.MAX):
        return f"rmw_{'min' if op is AtomOp.MIN else 'max'}_{'s' if t is DataType.S32 else 'u'}"
    return f"rmw_{_RMW[op]}" if op in _RMW else None


def _atomic(spec: InstrSpec) -> list[str]:
    op, t = spec.variant, spec.dtype
    ret = ["            if d >= 0:", "                R[d, l] = o"]
    head = [
        f"def {fname(spec)}(R, P, act, g, gp, d, base, off, s0, s1, L, shared, {MEM_ARGS}):",
        "    for l in range(L):",
        f"        if {GUARD}:",
        *("            " + x for x in _check(4, spec.space or "global")),
    ]
    atomic = rmw(spec)
    if op is AtomOp.ADD:
        new = "c32(f32(o) + f32(v))" if t is DataType.F32 else f"(o + v) & {M32}"
    elif op is AtomOp.SUB:
        new = f"(o - v) & {M32}"
    elif op in (AtomOp.MIN, AtomOp.MAX):
        fn = "min" if op is AtomOp.MIN else "max"
        new = f"{fn}_s(o, v)" if t is DataType.S32 else f"{fn}(o, v)"
    elif op is AtomOp.AND:
        new = "o & v"
    elif op is AtomOp.OR:
        new = "o | v"
    elif op is AtomOp.XOR:
        new = "o ^ v"
    elif op is AtomOp.EXCH:
        new = "v"
    else:
        new = "(R[s1, l] if o == v else o)"
    plain = ["o = np.int64(m32[a >> 2])", "v = R[s0, l]", f"m32[a >> 2] = {new}"]
    if atomic is not None:  # with workgroups on other threads (`shared`), one atomic instruction:
        # a lock-prefixed one costs about 1.5x a plain read-modify-write alone, more when cores contend
        plain = ["if shared:", f"    o = {atomic}(m32, a >> 2, R[s0, l])", "else:", *("    " + x for x in plain)]
    return [*head, *("            " + x for x in plain), *ret, "    return 0"]


def _reduction(op: ReduceOp, t: DataType) -> tuple[str, int]:
    """(combine expression over acc and v, identity bits) of a wave reduction or prefix."""
    if op is ReduceOp.ADD:
        return f"(acc + v) & {M32}", 0
    if op in (ReduceOp.MIN, ReduceOp.MAX):
        is_min = op is ReduceOp.MIN
        if t is DataType.F32:
            return f"fold_minmax_f32(acc, v, {is_min})", 0x7FFFFFFF
        if t is DataType.S32:
            return ("min_s(acc, v)", 0x7FFFFFFF) if is_min else ("max_s(acc, v)", 0x80000000)
        return ("min(acc, v)", M32) if is_min else ("max(acc, v)", 0)
    if op is ReduceOp.AND:
        return "acc & v", M32
    if op is ReduceOp.OR:
        return "acc | v", 0
    return "acc ^ v", 0


def _wave(spec: InstrSpec) -> list[str]:
    op = spec.op
    head = f"def {fname(spec)}(R, P, act, g, gp, d, s0, s1, W, L, TMP):"
    if op in (Op.SHUFFLE, Op.BROADCAST):
        mode = spec.variant
        if mode is ShuffleMode.IDX:
            pick = ["s = b % W"]
        else:
            expr = {ShuffleMode.XOR: "ln ^ b", ShuffleMode.UP: "ln - b", ShuffleMode.DOWN: "ln + b"}[mode]  # type: ignore[index]
            pick = [f"s = {expr}", "if s < 0 or s >= W:", "    s = ln"]
        return [
            head,
            "    for l in range(L):",
            "        TMP[l] = R[s0, l]",
            "    for l in range(L):",
            f"        if {GUARD}:",
            "            b = R[s1, l]",
            "            ln = l % W",
            *("            " + x for x in pick),
            "            R[d, l] = TMP[l - ln + s]",
        ]
    lines = [head, "    for w in range(L // W):"]
    if op in (Op.REDUCE, Op.PREFIX):
        combine, identity = _reduction(spec.variant, spec.dtype)  # type: ignore[arg-type]
        lines += [
            f"        acc = {identity}",
            "        for l in range(w * W, w * W + W):",
            f"            if {GUARD}:",
            "                v = R[s0, l]",
        ]
        if op is Op.PREFIX:
            return [*lines, "                R[d, l] = acc", f"                acc = {combine}"]
        lines.append(f"                acc = {combine}")
        write = "R[d, l] = acc"
    elif op is Op.BALLOT:
        lines += [
            "        acc = 0",
            "        for l in range(w * W, w * W + W):",
            f"            if {GUARD} and P[s0, l] and l - w * W < 32:",
            "                acc |= 1 << (l - w * W)",
        ]
        write = "R[d, l] = acc"
    elif op is Op.ANY:
        lines += [
            "        acc = False",
            "        for l in range(w * W, w * W + W):",
            f"            if {GUARD} and P[s0, l]:",
            "                acc = True",
        ]
        write = "P[d, l] = acc"
    else:  # ALL
        lines += [
            "        acc = True",
            "        for l in range(w * W, w * W + W):",
            f"            if ({GUARD}) and not P[s0, l]:",
            "                acc = False",
        ]
        write = "P[d, l] = acc"
    return [*lines, "        for l in range(w * W, w * W + W):", f"            if {GUARD}:", f"                {write}"]


def kind_of(spec: InstrSpec) -> str | None:
    """'value', 'memory', 'atomic', 'wave', or None (control flow and rows run by the driver)."""
    if spec.op in (Op.LD, Op.ST):
        return "memory"
    if spec.op in (Op.ATOM, Op.RED):
        return "atomic"
    if spec.op in (Op.REDUCE, Op.BROADCAST, Op.SHUFFLE, Op.PREFIX, Op.BALLOT, Op.ANY, Op.ALL):
        return "wave"
    if spec.key in EXPR or (spec.op is Op.MOV and not spec.control):
        return "value"
    return None


def module() -> str:
    """The source of the shared row module."""
    out = [
        '"""Generated by wavegpu.emulator.compiled.opsgen: one function per row. Do not edit."""',
        "import numpy as np",
        "from numba import njit",
        f"from wavegpu.emulator.compiled.scalar import inside, {', '.join(HELPERS)}",
        f"from wavegpu.emulator.compiled.intrinsics import {', '.join(sorted({rmw(r) for r in ROWS} - {None}))}",  # type: ignore[type-var]
        "",
    ]
    for spec in ROWS:
        kind = kind_of(spec)
        if kind not in ("atomic", "wave"):  # value rows and loads and stores are written inline
            continue
        body = (_atomic if kind == "atomic" else _wave)(spec)
        out += ["", DECO, *body, ""]
    return "\n".join(out)
