"""Loop unrolling (-O3): counted loops (`for i in range(a, b, c)` with constant bounds and no
`break` or `return`; `continue` is fine) are fully unrolled when the trip count is small, the
unrolled code stays small and the loop's register pressure fits the kernel's budget.

It runs before mem2reg, while variables still live in slots: each copy of the loop is the
header's instructions followed by a clone of the body and latches.

Register pressure: unrolling creates no variables. Every copy reads and writes the same slots
the rolled loop does (mem2reg gives each copy's definitions their own SSA values, but a copy's
temporaries die within it, and the loop-carried ones, such as accumulators, are as many as
before), and no later pass moves instructions from one copy into another. So the estimate is
the rolled loop's own: the variables it uses, against half the kernel's register budget
(`max_registers`, or the allocator's 256 when none is set; the other half is left for the
values of the rest of the kernel and the addresses unrolling folds into constants).
`max_pressure`, when spelled, is a stricter cap."""

from __future__ import annotations

from collections.abc import Callable

from ..mir.edit import retarget
from ..mir.ir import Block, Br, CondBr, Const, Function, Inst, Operand, Ret, Value

MAX_TRIP = 16
MAX_INSTS = 1024  # instructions once unrolled, not counting variable slot accesses (mem2reg removes them)
REGISTERS = 256  # the allocator's budget when the kernel sets no max_registers
SLOTS = ("getvar", "setvar")


def _step(fn: Function, blk: Block, set_: Inst, counter: str) -> int | None:
    """The constant c when set_ (in blk) is `setvar counter, add(getvar counter, c)` with the
    getvar earlier in blk, blk's only write of the counter, and blk ends in a jump (a latch)."""
    if not isinstance(blk.term, Br):
        return None
    if sum(1 for i in blk.insts if i.op == "setvar" and i.var == counter) != 1:
        return None
    add = next((x for x in blk.insts if x.dst is set_.args[0]), None)
    if add is None or add.op != "add" or not isinstance(add.args[1], Const):
        return None
    get = next((x for x in blk.insts if x.dst is add.args[0]), None)
    if get is None or get.op != "getvar" or get.var != counter:
        return None
    if blk.insts.index(get) > blk.insts.index(set_):
        return None
    return int(add.args[1].value)


def _counted(fn: Function) -> list[tuple[Block, int]]:
    """(header, trip count) of loops written `for ... in range(const, const, const)`.

    Proved from the instructions: the header reads the counter and compares it with a constant;
    the counter is written once with a constant, in the block that enters the loop (its only
    way in from outside), and otherwise only by latches, each of which adds the same constant
    step and jumps back to the header (a `continue` lowers to a second latch); and no step wraps
    the counter around."""
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
        assert counter is not None
        if any(i.op == "setvar" and i.var == counter for i in h.insts):
            continue
        body = _loop_blocks(fn, h, t.other)
        sets = [(b, i) for b in fn.blocks for i in b.insts if i.op == "setvar" and i.var == counter]
        init = [(b, i) for b, i in sets if b not in body]
        steps = [(b, i) for b, i in sets if b in body]
        if len(init) != 1 or not isinstance(init[0][1].args[0], Const) or not steps:
            continue
        entry = [p for p in fn.preds()[h] if p not in body]
        if entry != [init[0][0]] or not (isinstance(entry[0].term, Br) and entry[0].term.target is h):
            continue  # the loop is entered only right after the counter's initialisation
        incs = {_step(fn, b, i, counter) for b, i in steps}
        latches = {b for b in body if h in b.succs}
        if len(incs) != 1 or None in incs or latches != {b for b, _ in steps}:
            continue
        if not all(b.term.target is h for b, _ in steps if isinstance(b.term, Br)):
            continue
        first = init[0][1].args[0]
        assert isinstance(first, Const)
        (step,) = incs
        assert step is not None
        start, stop = int(first.value), int(cmp.args[1].value)
        if step == 0 or (step > 0) != (cmp.op == "cmp.lt"):
            continue
        trip = len(range(start, stop, step))
        if get.dst is None:
            continue
        ty = get.dst.type
        if not ty.is_int:
            continue
        lo, hi = (-(1 << (ty.bits - 1)), 1 << (ty.bits - 1)) if ty.signed else (0, 1 << ty.bits)
        if not all(lo <= start + n * step < hi for n in (0, trip)):
            continue  # the last step would wrap around: the loop would not stop where range says
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
    max_pressure: int | None = None,
) -> bool:
    for header, trip in _counted(fn):
        t = header.term
        assert isinstance(t, CondBr)
        exit_ = t.other
        body = _loop_blocks(fn, header, exit_)
        if any(isinstance(b.term, Ret) for b in body) or not body:
            continue
        if any(exit_ in b.succs for b in body):
            continue  # a break would become a jump past the later copies: not structured
        size = sum(1 for b in [header, *body] for i in b.insts if i.op not in SLOTS)
        vars_used = {i.var for b in [header, *body] for i in b.insts if i.var}
        limit = (REGISTERS if max_registers is None else max_registers) // 2
        if max_pressure is not None:
            limit = min(limit, max_pressure)
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
        # the CFG changed: find the next loop afresh (`changed or run(...)` stopped after the first)
        run(fn, max_registers, max_trip, max_insts, max_pressure)
        return True
    return False
