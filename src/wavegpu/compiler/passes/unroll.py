"""Loop unrolling (-O3): counted loops (`for i in range(a, b, c)` with constant bounds and no
`break` or `return`) are fully unrolled when the trip count is small and the estimated register
pressure allows it.

It runs before mem2reg, while variables still live in slots: each copy of the loop is the
header's instructions followed by a clone of the body and latch."""

from __future__ import annotations

from collections.abc import Callable

from ..mir.edit import retarget
from ..mir.ir import Block, Br, CondBr, Const, Function, Inst, Operand, Ret, Value

MAX_TRIP = 16
MAX_INSTS = 400
MAX_PRESSURE = 24  # variables live in the loop; more would risk spilling at the default limit


def _counted(fn: Function) -> list[tuple[Block, int]]:
    """(header, trip count) of loops written `for ... in range(const, const, const)`."""
    out = []
    for h in fn.blocks:
        t = h.term
        if not (isinstance(t, CondBr) and len(h.insts) >= 2):
            continue
        get, cmp = h.insts[0], h.insts[-1]
        if get.op != "getvar" or cmp.op not in ("cmp.lt", "cmp.gt") or t.cond is not cmp.dst:
            continue
        if not (cmp.args[0] is get.dst and isinstance(cmp.args[1], Const)):
            continue
        counter = get.var
        sets = [(b, i) for b in fn.blocks for i in b.insts if i.op == "setvar" and i.var == counter]
        init = [(b, i) for b, i in sets if isinstance(i.args[0], Const)]
        steps = [(b, i) for b, i in sets if not isinstance(i.args[0], Const)]
        if len(init) != 1 or len(steps) != 1:
            continue
        lb, li = steps[0]
        add = next((x for x in lb.insts if x.dst is li.args[0]), None)
        if add is None or add.op != "add" or not isinstance(add.args[1], Const):
            continue
        first = init[0][1].args[0]
        assert isinstance(first, Const)  # init holds the setvars of a constant
        start, stop, step = (
            int(first.value),
            int(cmp.args[1].value),
            int(add.args[1].value),
        )
        if step == 0:
            continue
        trip = len(range(start, stop, step))
        if (step > 0) != (cmp.op == "cmp.lt"):
            continue
        out.append((h, trip))
    return out


def _loop_blocks(fn: Function, header: Block, exit_: Block) -> list[Block]:
    """Blocks reachable from the header's body without passing the header or the exit."""
    t = header.term
    assert isinstance(t, CondBr)
    seen: list[Block] = []
    work = [t.then]
    while work:
        b = work.pop()
        if b is header or b is exit_ or b in seen:
            continue
        seen.append(b)
        work.extend(b.succs)
    return [b for b in fn.blocks if b in seen]


def run(
    fn: Function,
    max_registers: int | None = None,
    max_trip: int = MAX_TRIP,
    max_insts: int = MAX_INSTS,
    max_pressure: int = MAX_PRESSURE,
) -> bool:
    changed = False
    for header, trip in _counted(fn):
        t = header.term
        assert isinstance(t, CondBr)
        exit_ = t.other
        body = _loop_blocks(fn, header, exit_)
        if any(isinstance(b.term, Ret) for b in body) or not body:
            continue
        if any(exit_ in b.succs for b in body):
            continue  # a break would become a jump past the later copies: not structured
        size = sum(len(b.insts) for b in body) + len(header.insts)
        vars_used = {i.var for b in [header, *body] for i in b.insts if i.var}
        limit = max_pressure if max_registers is None else min(max_pressure, max_registers // 2)
        if trip > max_trip or size * max(trip, 1) > max_insts or len(vars_used) > limit:
            continue
        preds = [p for p in fn.preds()[header] if p not in body]
        copies: list[Block] = []
        nxt: Block = exit_
        for _k in reversed(range(trip)):
            vmap: dict[int, Value] = {}
            bmap: dict[Block, Block] = {}
            head = Block(f"{header.name}.u{_k}")
            for b in body:
                bmap[b] = Block(f"{b.name}.u{_k}")

            def cl(o: Operand, vmap: dict[int, Value] = vmap) -> Operand:
                return vmap.get(o.id, o) if isinstance(o, Value) else o

            def clone_inst(i: Inst, vmap: dict[int, Value] = vmap, cl: Callable[[Operand], Operand] = cl) -> Inst:
                dst = None
                if i.dst is not None:
                    dst = fn.new_value(i.dst.type)
                    vmap[i.dst.id] = dst
                return Inst(i.op, dst, [cl(a) for a in i.args], i.var, i.span, i.buffer)

            head.insts = [clone_inst(i) for i in header.insts[:-1]]  # without the comparison
            for b in body:
                bmap[b].insts = [clone_inst(i) for i in b.insts]
            for b in [None, *body]:
                src_t = t if b is None else b.term
                dst_b = head if b is None else bmap[b]

                def tgt(
                    x: Block,
                    header: Block = header,
                    nxt: Block = nxt,
                    bmap: dict[Block, Block] = bmap,
                ) -> Block:
                    if x is header:
                        return nxt
                    return bmap.get(x, x)

                if b is None:
                    dst_b.term = Br(bmap[t.then])
                elif isinstance(src_t, Br):
                    dst_b.term = Br(tgt(src_t.target))
                elif isinstance(src_t, CondBr):
                    dst_b.term = CondBr(cl(src_t.cond), tgt(src_t.then), tgt(src_t.other))
            copies[:0] = [head, *[bmap[b] for b in body]]
            nxt = head
        for p in preds:
            retarget(p, header, nxt)
        pos = fn.blocks.index(header)
        fn.blocks = [b for b in fn.blocks if b is not header and b not in body]
        fn.blocks[pos:pos] = copies
        changed = True
        return changed or run(
            fn, max_registers, max_trip, max_insts, max_pressure
        )  # the CFG changed: find the next loop afresh
    return changed
