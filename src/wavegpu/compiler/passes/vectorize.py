"""Vector access: 2 or 4 accesses of consecutive 32-bit elements merged into one `.v2`/`.v4` access.

A group is 2 or 4 loads (or stores) of i32/u32/f32 values in one block (so under one guard), in
one space and, for global memory, through one buffer parameter, whose addresses are one linear
expression plus 0, 4, 8 (and 12): the same SSA values with the same coefficients, modulo 2^32.
The group's lowest address must be provably a multiple of the access width (8 or 16 bytes):
`Alignment` follows the address's low bits through additions, multiplications, shifts, masks,
selects and phis (loops included), starting from the ABI's facts: a buffer argument is 16-byte
aligned (the runtime places every array at a multiple of 256 bytes; docs/compiler.md, "Vector
access"), a local array sits at its layout's constant offset.

Stores of a group move down to the last of them, only when no other memory operation, barrier,
fence or variable slot access lies between the first and the last. Loads stand together where
the last was, only when no store, atomic, barrier, fence or slot access lies between (so no write
that may alias one of them is jumped over: two buffer parameters may be one array); what uses a
loaded value in between moves after them. Every member ran unconditionally in the block before,
so the merged access touches exactly the bytes the separate ones did; a bounds check reports the
first element out of range (emulator/bounds.py).

The pass only marks groups (`Inst.vector`) and puts their members next to each other in
address order; LIR selection emits the vector row for the first member. A later pass that
removes or separates a member leaves the group to be selected as single accesses.
"""

from __future__ import annotations

from ..mir.ir import Block, Const, Function, Inst, Phi, Value, Vector

WORD = frozenset({"i32", "u32", "f32"})
MASK = 0xFFFFFFFF
BITS = 4  # low address bits the alignment analysis follows (16 bytes: a .v4 access)


# ---- known low bits of 32-bit values --------------------------------------------------------------
Known = tuple[int, int]  # (k, r): the value's low k bits (k <= BITS) are r; None in a map: not yet known (top)


def _meet(a: Known | None, b: Known | None) -> Known | None:
    if a is None:
        return b
    if b is None:
        return a
    k = min(a[0], b[0])
    while k and (a[1] ^ b[1]) & ((1 << k) - 1):
        k -= 1
    return k, a[1] & ((1 << k) - 1)


def _const_known(v: int) -> Known:
    return BITS, v & ((1 << BITS) - 1)


def _zeros(x: Known) -> int:
    """How many low bits are known to be zero."""
    k, r = x
    if r == 0:
        return k
    return (r & -r).bit_length() - 1


def _by_bits(known: list[bool], vals: list[int]) -> Known:
    """The longest run of known bits from bit 0."""
    k = 0
    while k < BITS and known[k]:
        k += 1
    return k, sum(vals[j] << j for j in range(k))


def _bitwise(op: str, a: Known, b: Known) -> Known:
    ka, ra = a
    kb, rb = b
    known, vals = [], []
    for j in range(BITS):
        ha, hb = j < ka, j < kb
        ba, bb = (ra >> j) & 1, (rb >> j) & 1
        if op == "and":
            zero = (ha and not ba) or (hb and not bb)
            known.append((ha and hb) or zero)
            vals.append(0 if zero else ba & bb)
        else:  # or
            one = (ha and ba) or (hb and bb)
            known.append((ha and hb) or one)
            vals.append(1 if one else ba | bb)
    return _by_bits(known, vals)


class Alignment:
    """Known low bits of every 32-bit integer value (an optimistic fixpoint over the CFG)."""

    def __init__(self, fn: Function):
        self.known: dict[int, Known | None] = {}
        defs: list[Inst | Phi] = []
        for p in fn.params:
            # the ABI: a buffer's address is a multiple of 16 bytes; a scalar is anything
            self.known[p.value.id] = (BITS, 0) if p.kind == "buffer" else (0, 0)
        for b in fn.blocks:
            for phi in b.phis:
                self.known[phi.dst.id] = None
                defs.append(phi)
            for i in b.insts:
                if i.dst is not None:
                    self.known[i.dst.id] = None
                    defs.append(i)
        changed = True
        for _ in range((BITS + 2) * len(defs) + 2):  # each value falls through at most BITS + 2 levels
            changed = False
            for d in defs:
                new = self._phi(d) if isinstance(d, Phi) else self._inst(d)
                dst = d.dst
                assert dst is not None
                if new != self.known[dst.id]:
                    self.known[dst.id] = new
                    changed = True
            if not changed:
                break
        if changed:  # no fixpoint (cannot happen for a monotone transfer): claim nothing
            self.known = {k: (0, 0) for k in self.known}

    def of(self, o: object) -> Known | None:
        if isinstance(o, Const):
            if isinstance(o.value, bool) or not isinstance(o.value, int):
                return (0, 0)
            return _const_known(o.value)
        if isinstance(o, Value):
            return self.known.get(o.id, (0, 0))
        return (0, 0)

    def _phi(self, phi: Phi) -> Known | None:
        out: Known | None = None
        for _, x in phi.incoming:
            out = _meet(out, self.of(x))
        return out

    def _inst(self, i: Inst) -> Known | None:
        assert i.dst is not None
        if i.dst.type.name not in ("i32", "u32"):
            return (0, 0)
        args = [self.of(a) for a in i.args]
        if any(a is None for a in args) and i.op != "select":
            return None
        op = i.op
        if op in ("add", "sub"):
            (ka, ra), (kb, rb) = args  # type: ignore[misc]
            k = min(ka, kb)
            r = (ra + rb) if op == "add" else (ra - rb)
            return k, r & ((1 << k) - 1)
        if op == "mul":
            a, b = args[0], args[1]
            assert a is not None and b is not None
            k1 = min(a[0], b[0])
            k2 = min(BITS, _zeros(a) + _zeros(b))
            return (k1, (a[1] * b[1]) & ((1 << k1) - 1)) if k1 >= k2 else (k2, 0)
        if op == "mad":
            a, b, c = args
            assert a is not None and b is not None and c is not None
            k1 = min(a[0], b[0])
            prod = (k1, (a[1] * b[1]) & ((1 << k1) - 1))
            k2 = min(BITS, _zeros(a) + _zeros(b))
            if k2 > k1:
                prod = (k2, 0)
            k = min(prod[0], c[0])
            return k, (prod[1] + c[1]) & ((1 << k) - 1)
        if op == "shl" and isinstance(i.args[1], Const):
            a = args[0]
            assert a is not None
            s = int(i.args[1].value)
            if s >= 32:
                return BITS, 0
            k = min(BITS, a[0] + s)
            return k, (a[1] << s) & ((1 << k) - 1)
        if op in ("and", "or"):
            a, b = args
            assert a is not None and b is not None
            return _bitwise(op, a, b)
        if op == "neg":
            a = args[0]
            assert a is not None
            return a[0], (-a[1]) & ((1 << a[0]) - 1)
        if op == "cvt" and i.args[0].type.name in ("i32", "u32"):  # the same 32 bits
            return args[0]
        if op == "select":
            return _meet(args[1], args[2]) if args[1] is not None or args[2] is not None else None
        return (0, 0)


# ---- addresses as linear forms ----------------------------------------------------------------
Linear = tuple[frozenset[tuple[int, int]], int]  # ({(value id, coefficient)}, constant), modulo 2^32


class Addresses:
    """Each 32-bit integer value as a sum of coefficient * value plus a constant, modulo 2^32,
    seen through add, sub, shifts and multiplications by constants and 32-bit integer casts."""

    def __init__(self, fn: Function):
        self.defs: dict[int, Inst] = {}
        for b in fn.blocks:
            for i in b.insts:
                if i.dst is not None:
                    self.defs[i.dst.id] = i
        self.memo: dict[int, dict[int, int]] = {}
        self.consts: dict[int, int] = {}

    def linear(self, o: object) -> Linear:
        terms, c = self._lin(o, 0)
        return frozenset((k, v) for k, v in terms.items() if v), c

    def _lin(self, o: object, depth: int) -> tuple[dict[int, int], int]:
        if isinstance(o, Const):
            return {}, int(o.value) & MASK if isinstance(o.value, int) and not isinstance(o.value, bool) else 0
        assert isinstance(o, Value)
        if o.id in self.memo:
            return self.memo[o.id], self.consts[o.id]
        out = self._expand(o, depth)
        if out is None:
            out = ({o.id: 1}, 0)
        self.memo[o.id], self.consts[o.id] = out
        return out

    def _expand(self, o: Value, depth: int) -> tuple[dict[int, int], int] | None:
        i = self.defs.get(o.id)
        if i is None or depth > 64 or o.type.name not in ("i32", "u32"):
            return None
        a = i.args

        def scale(x: tuple[dict[int, int], int], f: int) -> tuple[dict[int, int], int]:
            return {k: (v * f) & MASK for k, v in x[0].items()}, (x[1] * f) & MASK

        def plus(x: tuple[dict[int, int], int], y: tuple[dict[int, int], int]) -> tuple[dict[int, int], int]:
            t = dict(x[0])
            for k, v in y[0].items():
                t[k] = (t.get(k, 0) + v) & MASK
            return t, (x[1] + y[1]) & MASK

        if i.op == "add":
            return plus(self._lin(a[0], depth + 1), self._lin(a[1], depth + 1))
        if i.op == "sub":
            return plus(self._lin(a[0], depth + 1), scale(self._lin(a[1], depth + 1), MASK))
        if i.op == "mul" and isinstance(a[1], Const):
            return scale(self._lin(a[0], depth + 1), int(a[1].value))
        if i.op == "mul" and isinstance(a[0], Const):
            return scale(self._lin(a[1], depth + 1), int(a[0].value))
        if i.op == "shl" and isinstance(a[1], Const) and int(a[1].value) < 32:
            return scale(self._lin(a[0], depth + 1), 1 << int(a[1].value))
        if i.op == "mad" and isinstance(a[1], Const):
            return plus(scale(self._lin(a[0], depth + 1), int(a[1].value)), self._lin(a[2], depth + 1))
        if i.op == "cvt" and a[0].type.name in ("i32", "u32"):
            return self._lin(a[0], depth + 1)
        return None


# ---- the pass ---------------------------------------------------------------------------------
_BARRIERS = ("barrier", "fence.")


def _kind(i: Inst) -> str | None:
    """'load' / 'store' for a candidate (a 32-bit word access), 'mem' for another memory access or
    synchronisation, None for the rest."""
    spec = i.spec
    if spec is None:
        return "mem"
    fam = spec.family.value
    if fam in ("load", "store"):
        t = i.dst.type.name if i.dst is not None else i.args[1].type.name
        if spec.elem is None and t in WORD:
            return fam
        return "mem"
    if fam in ("atomic", "barrier", "fence", "getvar", "setvar"):  # slots keep their order too
        return "mem"
    return None


def dissolve(fn: Function) -> bool:
    """Undo every merged access (they stay next to each other, selected one by one); whether
    there was one."""
    found = False
    for b in fn.blocks:
        for i in b.insts:
            if i.vector is not None:
                i.vector = None
                found = True
    return found


def run(fn: Function) -> bool:
    align = Alignment(fn)
    lin = Addresses(fn)
    changed = False
    for b in fn.blocks:
        changed |= _block(b, align, lin)
    return changed


def _block(b: Block, align: Alignment, lin: Addresses) -> bool:
    changed = False
    while _merge_one(b.insts, align, lin):  # one group at a time: each move changes the positions
        changed = True
    return changed


def _merge_one(insts: list[Inst], align: Alignment, lin: Addresses) -> bool:
    """Find a group, mark it and reorder the block around it; whether one was found."""
    for kind in ("load", "store"):
        # candidates by (op, buffer, linear terms) -> {constant: [positions]}
        cands: dict[tuple[object, ...], dict[int, list[int]]] = {}
        for pos, i in enumerate(insts):
            if i.vector is not None or _kind(i) != kind:
                continue
            terms, c = lin.linear(i.args[0])
            cands.setdefault((i.op, i.buffer, terms), {}).setdefault(c, []).append(pos)
        for by_const in cands.values():
            for c in sorted(by_const):
                for n in (4, 2):
                    members = [by_const.get((c + 4 * k) & MASK, []) for k in range(n)]
                    if any(len(m) != 1 for m in members):
                        continue
                    pos = [m[0] for m in members]
                    known = align.of(insts[pos[0]].args[0])
                    if known is None or _zeros(known) < (4 if n == 4 else 3):
                        continue
                    order = _reorder(insts, pos, kind)
                    if order is None:
                        continue
                    group = [insts[p] for p in pos]
                    v = Vector(group)
                    for m in group:
                        m.vector = v
                    lo, hi = min(pos), max(pos)
                    insts[lo : hi + 1] = order
                    return True
    return False


def _reorder(insts: list[Inst], pos: list[int], kind: str) -> list[Inst] | None:
    """The instructions from the group's first member to its last, reordered so that the members
    stand together (in address order), or None when no order keeps the block's meaning.

    Stores: no other memory access may lie between the first and the last; the stores move down
    to the last. Loads: no store, atomic, barrier or fence may lie between; the instructions that
    use a member's value (directly or through each other) move after the group, the others
    before it; a member whose address is such an instruction's result cannot be merged."""
    lo, hi = min(pos), max(pos)
    members = set(pos)
    for p in range(lo + 1, hi):
        if p in members:
            continue
        k = _kind(insts[p])
        if k is not None and not (kind == "load" and k == "load"):
            return None
    group = [insts[p] for p in pos]
    others = [insts[p] for p in range(lo, hi + 1) if p not in members]
    if kind == "store":
        return others + group
    tainted: set[int] = {m.dst.id for m in group if m.dst is not None}
    after: list[Inst] = []
    before: list[Inst] = []
    for i in others:
        if any(isinstance(a, Value) and a.id in tainted for a in i.args) or i.vector is not None:
            after.append(i)
            if i.dst is not None:
                tainted.add(i.dst.id)
        else:
            before.append(i)
    if any(isinstance(m.args[0], Value) and m.args[0].id in tainted for m in group):
        return None
    return before + group + after


__all__ = ["Addresses", "Alignment", "Vector", "dissolve", "run"]
