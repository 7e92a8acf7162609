"""Reassociation of 32-bit integer constants outward: `(x + c) << s` becomes `(x << s) + (c << s)`.

Addresses are written as `base + (index << 2)` with an index such as `row + k * 132 + i`: each
constant part of the index then costs its own add and shift, and the shifted values differ. With
the constants moved to the outside, the shifts of one row are one value (cse) and every access
is that value plus a constant, which a backend folds into the access's immediate offset (AMDGCN's
`ds_read_b128 ... offset:528`, ptxas's `[R+0x210]`).

Rules, on i32/u32 values, where every operation wraps modulo 2^32 (so both sides have the same
bits for every input; `cvt` between i32 and u32 keeps the bits):

- `add(add(x, c1), c2)` -> `add(x, c1 + c2)` (also `sub(x, c)` as `add(x, -c)` inside);
- `shl(add(x, c), s)` -> `add(shl(x, s), c << s)` for a constant s < 32;
- `mul(add(x, c), k)` -> `add(mul(x, k), c * k)` for a constant k;
- `cvt(add(x, c))` between i32 and u32 -> `add(cvt(x), c)`;
- `add(y, add(x, c))` -> `add(add(y, x), c)` for a non-constant y.

A rule that would keep the inner `add` alive (it has another use) applies only when it saves
an instruction anyway (the first rule); the others need the inner `add` to have this use alone,
so the pass never adds an instruction. It runs to a fixed point (each rewrite moves a constant
one step outward, so it terminates).
"""

from __future__ import annotations

from ..mir.edit import use_counts
from ..mir.ir import Const, Function, Inst, Operand, Value
from ..types import I32, U32, ScalarType

M32 = 0xFFFFFFFF
INT32 = (I32, U32)


def _const(v: int, t: ScalarType) -> Const:
    v &= M32
    return Const(v - (1 << 32) if t is I32 and v >> 31 else v, t)


def _int_const(o: Operand) -> int | None:
    if isinstance(o, Const) and o.type in INT32 and not isinstance(o.value, bool):
        return int(o.value) & M32
    return None


def run(fn: Function) -> bool:
    changed = False
    for _round in range(64):
        if not _round_once(fn):
            break
        changed = True
    return changed


def _round_once(fn: Function) -> bool:
    defs: dict[int, Inst] = {}
    for b in fn.blocks:
        for i in b.insts:
            if i.dst is not None:
                defs[i.dst.id] = i
    uses = use_counts(fn)

    def plus_const(o: Operand) -> tuple[Value, int, Inst] | None:
        """o = add(x, c) / add(c, x) / sub(x, c) with x a value: (x, c, the add)."""
        if not isinstance(o, Value):
            return None
        d = defs.get(o.id)
        if d is None or d.dst is None or d.dst.type not in INT32 or len(d.args) != 2:
            return None
        a, b = d.args
        if d.op == "add":
            if isinstance(a, Value) and _int_const(b) is not None:
                return a, _int_const(b), d  # type: ignore[return-value]
            if isinstance(b, Value) and _int_const(a) is not None:
                return b, _int_const(a), d  # type: ignore[return-value]
        if d.op == "sub" and isinstance(a, Value) and _int_const(b) is not None:
            return a, (-_int_const(b)) & M32, d  # type: ignore[operator]
        return None

    changed = False
    for blk in fn.blocks:
        out: list[Inst] = []
        for i in blk.insts:
            new = _rewrite(fn, i, plus_const, uses)
            if new is None:
                out.append(i)
                continue
            for n in new:
                if n.dst is not None:
                    defs[n.dst.id] = n
                for a in n.args:
                    if isinstance(a, Value):
                        uses[a] = uses.get(a, 0) + 1
            out.extend(new)
            changed = True
        blk.insts = out
    return changed


def _rewrite(fn: Function, i: Inst, plus_const, uses: dict[Value, int]) -> list[Inst] | None:  # type: ignore[no-untyped-def]
    """The instructions that replace i (the last defines i's destination), or None."""
    if i.dst is None or i.dst.type not in INT32 or len(i.args) not in (1, 2) or i.vector is not None:
        return None
    t = i.dst.type

    def single(inner: Inst) -> bool:
        return inner.dst is not None and uses.get(inner.dst, 0) == 1

    def drop(inner: Inst) -> None:
        assert inner.dst is not None
        uses[inner.dst] = uses.get(inner.dst, 0) - 1

    def tmp(op: str, args: list[Operand]) -> tuple[Inst, Value]:
        v = fn.new_value(t)
        return Inst(op, v, args, None, i.span), v

    if i.op in ("add", "sub") and len(i.args) == 2:
        a, b = i.args
        c2 = _int_const(b)
        if c2 is not None:
            inner = plus_const(a)
            if inner is not None and inner[2].dst.type is t:
                x, c1, d = inner
                drop(d)
                c = (c1 + c2) if i.op == "add" else (c1 - c2)
                return [Inst("add", i.dst, [x, _const(c, t)], None, i.span)]
            return None
        if i.op == "add" and _int_const(a) is None:
            for y, z in ((a, b), (b, a)):
                inner = plus_const(z)
                if inner is not None and single(inner[2]) and inner[2].dst.type is t and isinstance(y, Value):
                    x, c, d = inner
                    drop(d)
                    s, sv = tmp("add", [y, x])
                    return [s, Inst("add", i.dst, [sv, _const(c, t)], None, i.span)]
        return None
    if i.op in ("shl", "mul") and len(i.args) == 2:
        a, b = i.args
        k = _int_const(b)
        if k is None and i.op == "mul" and _int_const(a) is not None:
            a, k = b, _int_const(a)
        if k is None or (i.op == "shl" and k >= 32):
            return None
        inner = plus_const(a)
        if inner is None or not single(inner[2]) or inner[2].dst.type is not t:
            return None
        x, c, d = inner
        drop(d)
        s, sv = tmp(i.op, [x, _const(k, t)])
        c = (c << k) if i.op == "shl" else (c * k)
        return [s, Inst("add", i.dst, [sv, _const(c, t)], None, i.span)]
    if i.op == "cvt" and len(i.args) == 1:
        (a,) = i.args
        if not isinstance(a, Value) or a.type not in INT32 or a.type is t:
            return None
        inner = plus_const(a)
        if inner is None or not single(inner[2]):
            return None
        x, c, d = inner
        drop(d)
        s, sv = tmp("cvt", [x])
        return [s, Inst("add", i.dst, [sv, _const(c, t)], None, i.span)]
    return None


__all__ = ["run"]
