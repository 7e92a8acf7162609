"""Peephole fusions on the kernel IR before allocation (virtual registers, so "single use" is
exact): a shift whose result is read once, by the next instruction, fuses into it:

* `v_lshlrev_b32 t, k, a` + `v_add_u32 d, t, b` -> `v_lshl_add_u32 d, a, k, b`
* `v_lshlrev_b32 t, k, a` + `v_or_b32 d, t, b` -> `v_lshl_or_b32 d, a, k, b`

("read once" also covers `shl r, r, k; add r, x, r`: the add overwrites the shifted value)

both under the same EXEC (adjacent instructions) and only when the fused VOP3 form is legal (no
literal, at most one SGPR). Address offsets are folded into the `ds_*`/`global_*` immediates by
the selector (`rows._addr`), where the WAVE memory operand carries them.

`fold_offsets` then folds an address computation into the memory instruction's immediate:
`v_add_u32 t, K, base` right before a `ds_*`/`global_*` instruction whose address is t, when t
dies there (liveness) and the sum of offsets fits (DS 0..65535, global -4096..0: see GLOBAL_OFFSETS).

Two clean-ups run first: `s_cmp_lg_u64 P, 0` right after `s_cselect_b64 P, -1, 0` only recomputes
SCC and goes; an ALU instruction whose results (virtual registers) nobody reads goes too
(repeatedly: removing one reader can leave its sources unread), and so does a scalar load of
an argument nobody reads.
"""

from __future__ import annotations

from collections import Counter

from .ir import MI, VR, Imm, Neg, Operand, Sub
from .operands import inline32, is_s

FUSE = {"v_add_u32": "v_lshl_add_u32", "v_or_b32": "v_lshl_or_b32"}


def _reads(mis: list[MI]) -> Counter[int]:
    c: Counter[int] = Counter()
    for mi in mis:
        for o in mi.uses:
            if isinstance(o, Neg):
                o = o.o
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


PURE = ("v_", "s_")
IMPURE = frozenset({"s_waitcnt", "s_barrier", "s_endpgm", "s_nop", "s_branch", "v_writelane_b32", "s_or_saveexec_b64"})


def _removable(mi: MI, reads: Counter[int]) -> bool:
    if mi.op in IMPURE or not mi.op.startswith(PURE) or mi.op.startswith(("s_cbranch", "s_cmp")):
        return False
    if mi.ndefs == 0 or mi.defs_extra or mi.partial:
        return False
    for o in mi.defs:
        vr = o.vr if isinstance(o, Sub) else o
        if not isinstance(vr, VR) or reads[vr.id]:
            return False
    return True


def clean(mis: list[MI]) -> list[MI]:
    out: list[MI] = []
    for mi in mis:
        prev = out[-1] if out else None
        if (
            mi.op == "s_cmp_lg_u64"
            and prev is not None
            and prev.op == "s_cselect_b64"
            and prev.ops[0] is mi.ops[0]
            and [str(o) for o in prev.ops[1:]] == ["-1", "0"]
            and isinstance(mi.ops[1], Imm)
            and mi.ops[1].value == 0
        ):
            continue
        out.append(mi)
    while True:
        reads = _reads(out)
        kept = [mi for mi in out if not _removable(mi, reads)]
        if len(kept) == len(out):
            return kept
        out = kept


# The offsets folded: DS adds its 16-bit offset to the 32-bit address (wrapping, as WAVE does);
# a global access adds its offset to the 64-bit sum of the SGPR base and the 32-bit VGPR offset,
# so a positive offset that carries the WAVE address past 2^32 (a negative index plus a constant:
# `inp[t - n + 64]`) would leave memory instead of wrapping: only offsets <= 0 fold (a negative
# one that wraps was out of bounds anyway).
GLOBAL_OFFSETS = (-4096, 0)
OFFSET_RANGE = {"ds_": (0, 65535), "global_": GLOBAL_OFFSETS}


def _offset(mods: str) -> tuple[int, str]:
    rest = []
    off = 0
    for part in mods.split():
        if part.startswith("offset:"):
            off = int(part.split(":", 1)[1], 0)
        else:
            rest.append(part)
    return off, " ".join(rest)


def fold_offsets(mis: list[MI]) -> list[MI]:
    from ...codegen import instruction_liveness
    from .regalloc import def_use, successors

    nodes: dict[int, int] = {}
    dl, ul = [], []
    for mi in mis:
        d, u = def_use(mi)
        dl.append(sum(1 << nodes.setdefault(id(r), len(nodes)) for r in d))
        ul.append(sum(1 << nodes.setdefault(id(r), len(nodes)) for r in u))
    _, live_out = instruction_liveness(successors(mis), dl, ul)
    drop: set[int] = set()
    for i in range(len(mis) - 1):
        a, b = mis[i], mis[i + 1]
        prefix = next((p for p in OFFSET_RANGE if b.op.startswith(p)), None)
        if a.op != "v_add_u32" or a.partial or prefix is None or b.op == "ds_bpermute_b32":
            continue
        t = a.ops[0]
        k_op, base = a.ops[1], a.ops[2]
        if not isinstance(t, VR) or not isinstance(k_op, Imm) or not (isinstance(base, VR | Sub) and not is_s(base)):
            continue
        at = 1 if b.ndefs else 0
        if len(b.ops) <= at or b.ops[at] is not t or sum(1 for o in b.ops if o is t) != 1:
            continue
        if (live_out[i + 1] >> nodes[id(t)]) & 1:
            continue
        k = k_op.value - (1 << 32) if k_op.value >= 1 << 31 else k_op.value
        off, rest = _offset(b.mods)
        lo, hi = OFFSET_RANGE[prefix]
        if not lo <= off + k <= hi:
            continue
        b.ops[at] = base
        b.mods = (f"offset:{off + k} " + rest).strip() if off + k else rest
        drop.add(i)
    return [mi for j, mi in enumerate(mis) if j not in drop]


def fuse(mis: list[MI]) -> list[MI]:
    mis = clean(mis)
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
            and a.partial == b.partial
            and sum(1 for o in b.ops[1:] if o is a.ops[0]) == 1
            # the shift's value dies at b: read nowhere else, or b writes the register again
            and (reads[a.ops[0].id] == 1 or b.ops[0] is a.ops[0])
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
    return fold_offsets(out)
