"""Peephole fusions on the kernel IR before allocation (virtual registers, so "single use" is
exact): a shift whose result is read once, by the next instruction, fuses into it:

* `v_lshlrev_b32 t, k, a` + `v_add_u32 d, t, b` -> `v_lshl_add_u32 d, a, k, b`
* `v_lshlrev_b32 t, k, a` + `v_or_b32 d, t, b` -> `v_lshl_or_b32 d, a, k, b`

both under the same EXEC (adjacent instructions) and only when the fused VOP3 form is legal (no
literal, at most one SGPR). Address offsets are folded into the `ds_*`/`global_*` immediates by
the selector (`rows._addr`), where the WAVE memory operand carries them.
"""

from __future__ import annotations

from collections import Counter

from .ir import MI, VR, Imm, Operand, Sub
from .select import inline32, is_s

FUSE = {"v_add_u32": "v_lshl_add_u32", "v_or_b32": "v_lshl_or_b32"}


def _reads(mis: list[MI]) -> Counter[int]:
    c: Counter[int] = Counter()
    for mi in mis:
        for o in mi.uses:
            if isinstance(o, VR):
                c[o.id] += 1
            elif isinstance(o, Sub):
                c[o.vr.id] += 1
        if mi.partial:
            for o in mi.defs:
                if isinstance(o, VR):
                    c[o.id] += 1
    return c


def _legal(ops: list[Operand]) -> bool:
    if any(isinstance(o, Imm) and not inline32(o.value) for o in ops):
        return False
    return len({(o.vr.id, o.i) if isinstance(o, Sub) else id(o) for o in ops if is_s(o)}) <= 1


def fuse(mis: list[MI]) -> list[MI]:
    reads = _reads(mis)
    out: list[MI] = []
    i = 0
    while i < len(mis):
        a = mis[i]
        b = mis[i + 1] if i + 1 < len(mis) else None
        if (
            b is not None
            and a.op == "v_lshlrev_b32"
            and b.op in FUSE
            and isinstance(a.ops[0], VR)
            and reads[a.ops[0].id] == 1
            and a.partial == b.partial
            and a.ops[0] in b.ops[1:]
            and a.ops[0] is not b.ops[0]
        ):
            t = a.ops[0]
            other = b.ops[2] if b.ops[1] is t else b.ops[1]
            new = [a.ops[2], a.ops[1], other]
            if _legal(new) and other is not t:
                out.append(MI(FUSE[b.op], [b.ops[0], *new], 1, imp_uses=b.imp_uses, partial=b.partial))
                i += 2
                continue
        out.append(a)
        i += 1
    return out
