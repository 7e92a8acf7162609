"""Part-aware coalescing: a `.v2`/`.v4` access's registers become the values' own registers.

LIR selection writes a merged access (passes/vectorize.py) as one vector row and a move per
member between the vector register (class x2/x4, an aligned tuple) and the member's value:

    ld.local.v4 x, [a]          mov x.0, v0
    mov v0, x.0                 ...
    ...                         mov x.3, v3
    mov v3, x.3                 st.local.v4 [a], x

The colouring cannot coalesce such a move (its ends have different sizes), so without this step
every merged access costs up to four register moves in the `.wbin`, and a backend without a
copy-propagating assembler (AMDGCN) executes them all. Two rewrites remove them:

- **load**: a member value `v` defined only by its move `mov v, x.k` (one definition, no guard)
  and read only as an ordinary register operand (not as an address base or a guard) is replaced
  by the part `x.k` wherever it is read, and the move goes. `x` is defined once (by the load), so
  every read of `x.k` sees the loaded word, exactly as every read of `v` saw it; in SSA-derived
  LIR every read of a single-definition value follows its definition.
- **store**: a vector store whose moves copy the parts of one loaded vector register in order
  (`mov y.k, x.k` for every k, which the load rewrite leaves when a loaded word is stored unchanged)
  stores `x` itself, when `x` has exactly one definition: the moves go. A store of computed words
  (`mov y.k, v`, each v defined once in the straight-line code before the store, part 0's first)
  has each v computed into `y.k` directly (`_fold_store_values`).

Both make a vector register live as long as its longest-lived part, and such registers are
never spilled; `chaitin.allocate` keeps the rewrite only when the colouring then needs no more
spills than without it.
"""

from __future__ import annotations

from ...isa.vocabulary import Op
from ..lir import rows
from ..lir.ir import Address, LFunction, LInst, Part, VReg

VECTOR = ("x2", "x4")


def _definitions(lf: LFunction) -> dict[int, int]:
    """How many instructions write each virtual register (a guarded write counts twice: it keeps
    the other lanes' value, so it is never the only definition)."""
    count: dict[int, int] = {}
    for ins in lf.insts:
        for v in ins.defs():
            count[v.id] = count.get(v.id, 0) + (2 if ins.guard is not None else 1)
    return count


def _readers(lf: LFunction) -> dict[int, list[tuple[LInst, int]]]:
    """Where each register is read as an ordinary operand: (instruction, operand index). A read
    as an address base or a guard is recorded with index -1 (a part cannot stand there)."""
    out: dict[int, list[tuple[LInst, int]]] = {}
    for ins in lf.insts:
        spec = ins.spec
        for n, (o, s) in enumerate(zip(ins.operands, spec.operands)):
            if isinstance(o, Address) and o.base is not None:
                out.setdefault(o.base.id, []).append((ins, -1))
            elif isinstance(o, VReg) and s.role.value == "s":
                out.setdefault(o.id, []).append((ins, n))
        if ins.guard is not None:
            out.setdefault(ins.guard[0].id, []).append((ins, -1))
    return out


def _is_part_move(ins: LInst) -> bool:
    return ins.key == rows.MOVE["r"] and ins.guard is None and len(ins.operands) == 2


def _fold_store_values(
    lf: LFunction, defs: dict[int, int], readers: dict[int, list[tuple[LInst, int]]], dead: set[int]
) -> None:
    """The store rewrite for computed words: `mov y.k, v` for every k right before `st.vN y`,
    each v a register written once (unguarded) by an instruction of the same straight-line code
    (no if, loop, break, continue or ret between it and the store) and read only as an ordinary
    register operand: v's definition writes `y.k` and its readers read `y.k`, in place of the
    moves. Only when every part folds and the word of part 0 is defined first (writing a later
    part keeps the others, so the tuple's value must start before it: nothing of it is then live
    earlier)."""
    where = {id(ins): n for n, ins in enumerate(lf.insts)}
    writer: dict[int, LInst] = {}
    for ins in lf.insts:
        for o, spec in zip(ins.operands, ins.spec.operands):
            if spec.role.value == "d" and isinstance(o, VReg):
                writer[o.id] = ins
    for i, st in enumerate(lf.insts):
        if st.spec.op is not Op.ST or len(st.operands) != 2 or not isinstance(st.operands[1], VReg):
            continue
        y = st.operands[1]
        if y.cls not in VECTOR or i < y.width or defs.get(y.id) != y.width or st.guard is not None:
            continue
        moves = lf.insts[i - y.width : i]
        values: list[VReg] = []
        for k, mv in enumerate(moves):
            if not _is_part_move(mv) or id(mv) in dead:
                break
            d, v = mv.operands
            if not (isinstance(d, Part) and d.reg is y and d.index == k and isinstance(v, VReg) and v.cls == "r"):
                break
            if v.phys is not None or defs.get(v.id) != 1 or v.id not in writer or writer[v.id].guard is not None:
                break
            if any(n < 0 for _, n in readers.get(v.id, [])) or v in values:
                break
            values.append(v)
        if len(values) != y.width:
            continue
        first = [where[id(writer[v.id])] for v in values]
        if (
            min(first) != first[0]
            or max(first) >= i
            or any(lf.insts[n].spec.nest is not None for n in range(first[0], i))
        ):
            continue
        for k, v in enumerate(values):
            p = Part(y, k)
            w = writer[v.id]
            w.operands = [p if o is v else o for o in w.operands]
            for reader, n in readers.get(v.id, []):
                reader.operands[n] = p
            dead.add(id(moves[k]))


def fold(lf: LFunction) -> int:
    """Apply both rewrites to `lf` in place; how many moves were removed."""
    defs = _definitions(lf)
    readers = _readers(lf)
    dead: set[int] = set()  # ids of removed moves
    for i, ins in enumerate(lf.insts):
        if ins.spec.op is not Op.LD or not ins.operands or not isinstance(ins.operands[0], VReg):
            continue
        x = ins.operands[0]
        if x.cls not in VECTOR or ins.guard is not None:
            continue
        for mv in lf.insts[i + 1 : i + 1 + x.width]:
            if not _is_part_move(mv):
                break
            v, p = mv.operands
            if not (isinstance(p, Part) and p.reg is x and isinstance(v, VReg) and v.cls == "r"):
                break
            if v.phys is not None or defs.get(v.id) != 1:
                continue
            reads = readers.get(v.id, [])
            if any(n < 0 for _, n in reads):
                continue
            for reader, n in reads:
                reader.operands[n] = p
            dead.add(id(mv))
    _fold_store_values(lf, defs, readers, dead)
    # stores of loaded words, unchanged and in order
    for i, ins in enumerate(lf.insts):
        if ins.spec.op is not Op.ST or len(ins.operands) != 2 or not isinstance(ins.operands[1], VReg):
            continue
        y = ins.operands[1]
        if y.cls not in VECTOR or i < y.width:
            continue
        moves = lf.insts[i - y.width : i]
        srcs = []
        for k, mv in enumerate(moves):
            if not _is_part_move(mv) or id(mv) in dead:
                break
            d, s = mv.operands
            if not (isinstance(d, Part) and d.reg is y and d.index == k and isinstance(s, Part) and s.index == k):
                break
            srcs.append(s.reg)
        if len(srcs) != y.width or any(s is not srcs[0] for s in srcs):
            continue
        x = srcs[0]
        if x.cls != y.cls or defs.get(x.id) != 1 or defs.get(y.id) != y.width:
            continue
        ins.operands[1] = x
        dead.update(id(mv) for mv in moves)
    if dead:
        lf.insts[:] = [ins for ins in lf.insts if id(ins) not in dead]
    return len(dead)


__all__ = ["fold"]
