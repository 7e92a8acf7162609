"""Strength reduction: multiplication by powers of two becomes a shift, division and remainder by
constants become multiply-high and shift sequences (exact for every 32-bit input), identities go."""

from __future__ import annotations

from ..mir.edit import Builder, expand
from ..mir.ir import Const, Function, Inst, Operand
from ..types import I32, U32

M32 = 0xFFFFFFFF


def magic_unsigned(d: int) -> tuple[int, int]:
    """(m, l) with q = (((x - h) >> 1) + h) >> (l - 1), h = mulhi(x, m), for 2 <= d < 2^32."""
    lg = (d - 1).bit_length()
    m = ((1 << 32) * ((1 << lg) - d)) // d + 1
    return m & M32, lg


def magic_signed(d: int) -> tuple[int, int]:
    """(M, s) for truncating signed division by d, |d| >= 2 (Hacker's Delight, figure 10-1)."""
    two31 = 1 << 31
    ad = abs(d)
    t = two31 + ((d & M32) >> 31)
    anc = t - 1 - t % ad
    p = 31
    q1, r1 = two31 // anc, two31 - (two31 // anc) * anc
    q2, r2 = two31 // ad, two31 - (two31 // ad) * ad
    while True:
        p += 1
        q1, r1 = 2 * q1, 2 * r1
        if r1 >= anc:
            q1, r1 = q1 + 1, r1 - anc
        q2, r2 = 2 * q2, 2 * r2
        if r2 >= ad:
            q2, r2 = q2 + 1, r2 - ad
        delta = ad - r2
        if not (q1 < delta or (q1 == delta and r1 == 0)):
            break
    m = (q2 + 1) & M32
    if d < 0:
        m = (-m) & M32
    return (m - (1 << 32) if m >> 31 else m), p - 32


def _pow2(c: Operand) -> int | None:
    if isinstance(c, Const) and c.type.is_int:
        v = int(c.value) & M32
        if v and v & (v - 1) == 0 and (c.type is U32 or v < (1 << 31)):
            return v.bit_length() - 1
    return None


def _reduce(fn: Function, i: Inst) -> tuple[list[Inst], Operand] | None:
    if i.dst is None or not i.pure or len(i.args) != 2:
        return None
    t = i.dst.type
    if not t.is_int:
        return None
    a, c = i.args
    if i.op in ("add", "or", "xor", "sub", "shl", "shr") and isinstance(c, Const) and c.value == 0:
        return [], a
    if i.op == "mul" and isinstance(a, Const) and not isinstance(c, Const):
        a, c = c, a
    if i.op == "mul" and isinstance(c, Const) and c.value == 1:
        return [], a
    b = Builder(fn, i)
    k = _pow2(c)
    if i.op in ("floordiv", "floormod") and k is not None and t is I32:
        # Python rounds toward -inf: an arithmetic shift; the remainder takes the divisor's sign
        if i.op == "floordiv":
            return [Inst("shr", i.dst, [a, Const(k, I32)], None, i.span)], i.dst
        return [Inst("and", i.dst, [a, Const((1 << k) - 1, I32)], None, i.span)], i.dst
    if i.op == "mul" and k is not None:
        return [*b.out, Inst("shl", i.dst, [a, Const(k, t)], None, i.span)], i.dst
    if i.op not in ("div", "rem") or not isinstance(c, Const):
        return None
    d = int(c.value)
    if t is U32:
        d &= M32
        if d <= 1:
            return None
        if k is not None:
            name, arg = ("shr", Const(k, U32)) if i.op == "div" else ("and", Const(d - 1, U32))
            return [Inst(name, i.dst, [a, arg], None, i.span)], i.dst
        m, lg = magic_unsigned(d)
        h = b.op("mulhi", [a, Const(m, U32)], U32)
        s = b.op("sub", [a, h], U32)
        s = b.op("shr", [s, Const(1, U32)], U32)
        s = b.op("add", [s, h], U32)
        q = b.op("shr", [s, Const(lg - 1, U32)], U32) if lg > 1 else s
    else:
        if d in (0, 1, -1) or d == -(1 << 31):
            return None
        if k is not None:
            # truncating division by 2^k: bias negative dividends by 2^k - 1
            sign = b.op("shr", [a, Const(31, I32)], I32)
            bias = b.op("shr", [b.op("cvt", [sign], U32), Const(32 - k, U32)], U32)
            q = b.op("shr", [b.op("add", [a, b.op("cvt", [bias], I32)], I32), Const(k, I32)], I32)
        else:
            m, s_ = magic_signed(d)
            h = b.op("mulhi", [a, Const(m, I32)], I32)
            if d > 0 and m < 0:
                h = b.op("add", [h, a], I32)
            elif d < 0 and m > 0:
                h = b.op("sub", [h, a], I32)
            if s_:
                h = b.op("shr", [h, Const(s_, I32)], I32)
            sign = b.op("cvt", [b.op("shr", [b.op("cvt", [h], U32), Const(31, U32)], U32)], I32)
            q = b.op("add", [h, sign], I32)
    if i.op == "div":
        return b.out, q
    prod = b.op("mul", [q, Const(d if t is I32 else d & M32, t)], t)
    r = b.op("sub", [a, prod], t)
    return b.out, r


def run(fn: Function) -> bool:
    return expand(fn, _reduce)
