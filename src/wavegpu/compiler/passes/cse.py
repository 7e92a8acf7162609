"""Common subexpression elimination, local and global: a scoped table over the dominator tree.

Only pure instructions take part; lane-dependent (wave) operations and memory reads do not.
"""

from __future__ import annotations

from ..mir.analysis import dominator_tree, idoms
from ..mir.edit import replace_uses
from ..mir.ir import Block, Const, Function, Operand, Value


def _key(op: str, args: list[Operand], t: object) -> tuple[object, ...]:
    ks = tuple(("v", a.id) if isinstance(a, Value) else ("c", a.type.name, repr(a.value)) for a in args)
    if op in ("add", "mul", "and", "or", "xor", "min", "max") or op in ("cmp.eq", "cmp.ne"):
        ks = tuple(sorted(ks, key=repr))
    return (op, t, ks)


def run(fn: Function, global_: bool = True) -> bool:
    idom = idoms(fn.entry, lambda b: b.succs)
    children = dominator_tree(idom)  # the walk from the entry meets only reachable blocks
    mapping: dict[Value, Operand] = {}
    changed = False

    def walk(b: Block, table: dict[tuple[object, ...], Value]) -> None:
        nonlocal changed
        local = dict(table) if global_ else {}
        keep = []
        for i in b.insts:
            i.args = [mapping.get(a, a) if isinstance(a, Value) else a for a in i.args]
            if i.dst is not None and i.pure:
                k = _key(i.op, i.args, i.dst.type.name)
                if k in local:
                    mapping[i.dst] = local[k]
                    changed = True
                    continue
                local[k] = i.dst
            keep.append(i)
        b.insts = keep
        for c in children[b]:
            walk(c, local)

    import sys

    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 10 * len(fn.blocks) + 1000))
    try:
        walk(fn.entry, {})
    finally:
        sys.setrecursionlimit(old)
    replace_uses(fn, mapping)
    return changed


def run_local(fn: Function) -> bool:
    return run(fn, global_=False)


__all__ = ["Const", "run", "run_local"]
