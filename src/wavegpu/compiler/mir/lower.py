"""HIR -> MIR: a CFG of basic blocks, variables in slots (setvar/getvar), explicit addresses."""

from __future__ import annotations

import math
from collections.abc import Callable

from ...errors import CompileError, Diagnostic, Span
from ...isa.capabilities import EMULATOR
from .. import builtins, hir
from ..builtins import Via
from ..types import BOOL, F32, F64, I32, U32, ScalarType, round_float
from .analysis import rpo
from .ir import Block, Br, CondBr, Const, Function, Inst, LocalArray, Operand, Param, Ret, Value
from .privates import DEFAULT_THREADS, MAX_REGISTER_WORDS, jumps, register_words, substitutable, trips, without_jumps

# HIR operations -> the MIR op that computes them on the result type (the others below)
BINARY = {
    hir.BinaryOp.ADD: "add",
    hir.BinaryOp.SUB: "sub",
    hir.BinaryOp.MUL: "mul",
    hir.BinaryOp.AND: "and",
    hir.BinaryOp.OR: "or",
    hir.BinaryOp.XOR: "xor",
    hir.BinaryOp.SHL: "shl",
    hir.BinaryOp.SHR: "shr",
}
UNARY = {hir.UnaryOp.NEG: "neg", hir.UnaryOp.NOT: "not", hir.UnaryOp.BIT_NOT: "not"}  # not: of a bool or bits


MAX_LOCAL = EMULATOR.constants["LOCAL_MEMORY_SIZE"]


class Lowerer:
    def __init__(self, f: hir.Function, in_memory: frozenset[str] = frozenset()):
        """`in_memory`: the per-thread arrays to keep in local memory (`lower` finds them)."""
        self.h = f
        params = []
        self.fn = Function(f.name, params, [], source_file=f.source_file, workgroup_size=f.workgroup_size)
        self.scalar: dict[str, Value] = {}
        self.buffers: dict[str, tuple[Value, ScalarType]] = {}
        self.buffer_params: dict[str, int] = {}
        for p in f.params:
            if isinstance(p.type, ScalarType):
                v = self.fn.new_value(p.type)
                params.append(Param(p.name, p.type, "scalar", None, v))
                self.scalar[p.name] = v
            else:
                v = self.fn.new_value(U32)
                self.buffer_params[p.name] = len(params)
                params.append(Param(p.name, U32, "buffer", p.type.elem, v))
                self.buffers[p.name] = (v, p.type.elem)
        self.locals: dict[str, LocalArray] = {}
        off = 0
        for la in f.locals:
            size = la.type.elem.size
            off = (off + 7) // 8 * 8
            arr = LocalArray(la.name, la.type.elem, la.count, off)
            self.fn.locals.append(arr)
            self.locals[la.name] = arr
            off += size * la.count
            if off > MAX_LOCAL:  # the total is known only here, where the arrays are laid out
                msg = f"local_array {la.name!r} brings the kernel's local memory to {off} bytes"
                raise CompileError([Diagnostic(f"{msg}; the device has {MAX_LOCAL} (LOCAL_MEMORY_SIZE)", la.span)])
        for name, t in f.variables:
            self.fn.vars[name] = t
        # per-thread arrays: in registers (a variable per element), or a slice of local memory per
        # thread, element k of thread t at word k * threads + t (consecutive threads, consecutive words)
        self.privates = {pa.name: pa for pa in f.privates}
        self.in_memory = set(in_memory)
        self.dynamic: set[str] = set()  # register arrays met with a run-time index: lowered again
        self.range_errors: list[Diagnostic] = []
        self.threads = DEFAULT_THREADS
        if f.workgroup_size is not None:
            self.threads = f.workgroup_size[0] * f.workgroup_size[1] * f.workgroup_size[2]
        for pa in f.privates:
            if pa.name not in self.in_memory:
                # element k is the variable `name$$k`: frontends rename a repeated name `name$2`
                for k in range(pa.count):
                    self.fn.vars[f"{pa.name}$${k}"] = pa.elem
                continue
            elem = _in_memory(pa.elem)
            off = (off + 7) // 8 * 8
            arr = LocalArray(pa.name, elem, pa.count * self.threads, off)
            self.fn.locals.append(arr)
            self.locals[pa.name] = arr
            off += elem.size * arr.count
            if off > MAX_LOCAL:
                raise CompileError([self.too_large(pa, elem, off)])
        self.consts: dict[str, int] = {}  # the counters of the unrolled copies being lowered
        # integer variables whose value is known here (straight-line code since a constant
        # assignment): they fold in array indices and unrolled bounds, nowhere else
        self.known: dict[str, int] = {}
        self.nblocks = 0
        self.cur = self.new_block()
        # (continue target, break target, code run before continuing: a for loop's increment)
        self.loops: list[tuple[Block, Block, object]] = []
        self.span: Span | None = None
        self.tmp = 0

    def too_large(self, pa: hir.PrivateArray, elem: ScalarType, off: int) -> Diagnostic:
        """The refusal of a per-thread array in local memory that does not fit the device's, with
        why it is in local memory and the remedies that would make it fit."""
        f = self.h
        words = register_words(pa)
        if words > MAX_REGISTER_WORDS:
            why = (
                f"would take {words} registers, more than the {MAX_REGISTER_WORDS} a per-thread array may keep "
                "in registers (MAX_REGISTER_WORDS), so it lives in local memory"
            )
        else:
            why = "has an index known only at run time, so it lives in local memory"
        sized = "its workgroup size" if f.workgroup_size is not None else f"up to {self.threads} threads"
        msg = (
            f"per-thread array {pa.name!r} {why}: {pa.count} elements for {sized} bring the kernel's local "
            f"memory to {off} bytes, and the device has {MAX_LOCAL} (LOCAL_MEMORY_SIZE)"
        )
        per_thread = pa.count * elem.size
        if per_thread > MAX_LOCAL:  # no workgroup size makes it fit
            most = MAX_LOCAL // elem.size
            return Diagnostic(
                f"{msg}; a per-thread array holds at most {most} {pa.elem.name} elements "
                f"({MAX_LOCAL} bytes, for a workgroup of one thread): make it smaller",
                pa.span,
            )
        fixes = []
        if words <= MAX_REGISTER_WORDS:
            fixes.append("make every index constant (unroll the loops that index it)")
        else:
            fixes.append("make it smaller")
        fits = MAX_LOCAL // per_thread
        if f.workgroup_size is None:
            fixes.append(f"fix the kernel's workgroup size (at most {fits} threads fit)")
        else:
            fixes.append(f"a smaller workgroup size (at most {fits} threads fit)")
        return Diagnostic(f"{msg}; {', or '.join(fixes)}", pa.span)

    # -- building
    def new_block(self) -> Block:
        b = Block(f"bb{self.nblocks}")
        self.nblocks += 1
        self.fn.blocks.append(b)
        return b

    def emit(
        self, op: str, args: list[Operand], t: ScalarType | None, var: str | None = None, buffer: int | None = None
    ) -> Value:
        dst = self.fn.new_value(t) if t is not None else None
        self.cur.insts.append(Inst(op, dst, args, var, self.span, buffer))
        return dst  # type: ignore[return-value]

    def term(self, t: Br | CondBr | Ret) -> None:
        if self.cur.term is None:
            self.cur.term = t

    def jump(self, target: Block) -> None:
        self.term(Br(target))

    def fresh_var(self, t: ScalarType) -> str:
        self.tmp += 1
        name = f"$t{self.tmp}"
        while name in self.fn.vars:  # a frontend's own temporary ($t1 of the Rust frontend)
            self.tmp += 1
            name = f"$t{self.tmp}"
        self.fn.vars[name] = t
        return name

    # -- statements
    def body(self, stmts: tuple[hir.Stmt, ...]) -> None:
        for s in stmts:
            if self.cur.term is not None:  # code after break/continue/return: unreachable
                self.cur = self.new_block()
            self.stmt(s)

    def stmt(self, s: hir.Stmt) -> None:
        self.span = s.span
        if isinstance(s, hir.Assign):
            v = self.expr(s.value)
            self.emit("setvar", [v], None, s.name)
            k = hir.fold_int(s.value, self.env()) if s.value.type.is_int else None
            if k is None:
                self.known.pop(s.name, None)
            else:
                self.known[s.name] = k
        elif isinstance(s, hir.Store):
            addr, space, elem = self.address(s.array, s.index)
            v = self.expr(s.value)
            self.emit(f"store.{space}{_narrow(elem)}", [addr, v], None, buffer=self.buffer_index(s.array))
        elif isinstance(s, hir.PrivateStore):
            v = self.expr(s.value)
            self.private_store(s.array, s.indices, v)
        elif isinstance(s, hir.PrivateInit):
            pa = self.privates[s.array]
            zero = Const(0.0 if pa.elem.is_float else (False if pa.elem.kind == "bool" else 0), pa.elem)
            given = min(len(s.values), pa.count)
            run = _repeated_tail(s.values[:given], pa.count, zero)
            fill = pa.name in self.in_memory and pa.count - run > FILL_LOOP
            for k in range(run if fill else pa.count):
                v = self.expr(s.values[k]) if k < given else zero
                self.private_element_store(pa.name, k, v)
            if fill:
                self.fill(pa.name, run, self.expr(s.values[run]) if run < given else zero)
        elif isinstance(s, hir.ExprStmt):
            self.expr(s.expr)
        elif isinstance(s, hir.If):
            c = self.expr(s.cond)
            then, join = self.new_block(), self.new_block()
            other = self.new_block() if s.other else join
            self.term(CondBr(c, then, other))
            self.cur = then
            before = dict(self.known)
            self.body(s.then)
            self.jump(join)
            if s.other:
                self.cur = other
                self.known = dict(before)
                self.body(s.other)
                self.jump(join)
            self.cur = join
            self.known = before
            self.forget(s.then + s.other)
        elif isinstance(s, hir.While):
            self.forget(s.body)
            header, body, exit_ = self.new_block(), self.new_block(), self.new_block()
            self.jump(header)
            self.cur = header
            self.span = s.span
            c = self.expr(s.cond)
            self.term(CondBr(c, body, exit_))
            self.loops.append((header, exit_, None))
            self.cur = body
            self.body(s.body)
            self.jump(header)
            self.loops.pop()
            self.cur = exit_
        elif isinstance(s, hir.For):
            self.forget(s.body, s.var)
            values = trips(s, self.env())
            if values is not None:
                self.unrolled(s, values)
            else:
                self.for_loop(s)
            self.forget(s.body, s.var)
        elif isinstance(s, hir.Break):
            self.jump(self.loops[-1][1])
        elif isinstance(s, hir.Continue):
            target, _exit, step = self.loops[-1]
            if step is not None:
                step()  # type: ignore[operator]  # the increment, so continue goes to the loop's start
            self.jump(target)
        elif isinstance(s, hir.Return):
            self.term(Ret())
        else:
            raise TypeError(s)

    def env(self) -> dict[str, int]:
        """The integer variables known here: what array indices and unrolled bounds fold with."""
        return {**self.known, **self.consts}

    def forget(self, body: tuple[hir.Stmt, ...], *names: str) -> None:
        """The variables a block (or a loop's counter) writes are no longer known: after an `if`,
        and around and in a loop (a later trip, or a copy reached by `continue`, sees them)."""
        gone = hir.assigned(body) | set(names)
        self.known = {n: v for n, v in self.known.items() if n not in gone}

    def unrolled(self, s: hir.For, values: range) -> None:
        """A loop marked for unrolling: one copy of the body per trip, the counter a constant in
        each (when the body never writes it). The body's own `continue` and `break` become flags
        that guard the rest of the copy (and, for `break`, the later copies): structured control
        flow, as LIR needs (`privates.without_jumps`)."""
        t = s.start.type
        has_cont, has_brk = jumps(s.body)
        self.span = s.span
        cont = self.fresh_var(BOOL) if has_cont else None
        brk = self.fresh_var(BOOL) if has_brk else None
        body = without_jumps(s.body, cont, brk)
        if brk is not None:
            self.emit("setvar", [Const(False, BOOL)], None, brk)
        inner = substitutable(s)
        saved = self.consts
        try:
            for n, k in enumerate(values):
                if self.cur.term is not None:  # after a `return` in the last copy: unreachable
                    self.cur = self.new_block()
                self.span = s.span
                self.emit("setvar", [self.convert(Const(k, I32 if k < 0 else U32), t)], None, s.var)
                if cont is not None:
                    self.emit("setvar", [Const(False, BOOL)], None, cont)
                self.consts = {**saved, s.var: k} if inner else saved
                self.forget(body, s.var)
                if brk is not None and n:
                    self.stmt(
                        hir.If(s.span, hir.Unary(BOOL, s.span, hir.UnaryOp.NOT, hir.Var(BOOL, s.span, brk)), body, ())
                    )
                else:
                    self.body(body)
        finally:
            self.consts = saved

    def for_loop(self, s: hir.For) -> None:
        """The loop variable has the start's type; a stop of the other integer type is compared by
        mathematical value, a step of the other type is added as its bits (its sign decides)."""
        t = s.start.type
        counter = self.fresh_var(t)
        self.emit("setvar", [self.expr(s.start)], None, counter)
        stop = self.expr(s.stop)
        step = self.expr(s.step)
        if isinstance(stop, Value):
            sv = self.fresh_var(stop.type)
            self.emit("setvar", [stop], None, sv)
        if isinstance(step, Value):
            st = self.fresh_var(step.type)
            self.emit("setvar", [step], None, st)

        def less(a: Operand, b: Operand) -> Operand:
            return self.mixed_compare("lt", a, b) if a.type != b.type else self.emit("cmp.lt", [a, b], BOOL)

        def greater(a: Operand, b: Operand) -> Operand:
            return self.mixed_compare("gt", a, b) if a.type != b.type else self.emit("cmp.gt", [a, b], BOOL)

        header, body, latch, exit_ = (
            self.new_block(),
            self.new_block(),
            self.new_block(),
            self.new_block(),
        )
        self.jump(header)
        self.cur = header
        self.span = s.span
        i = self.emit("getvar", [], t, counter)
        stop_v = stop if isinstance(stop, Const) else self.emit("getvar", [], stop.type, sv)
        if isinstance(step, Const):
            cond = less(i, stop_v) if step.value > 0 else greater(i, stop_v)
        else:
            step_v = self.emit("getvar", [], step.type, st)
            up = less(i, stop_v)
            down = greater(i, stop_v)
            pos = self.emit("cmp.gt", [step_v, Const(0, step.type)], BOOL)
            cond = self.emit("select", [pos, up, down], BOOL)
        self.term(CondBr(cond, body, exit_))
        self.cur = body
        self.emit("setvar", [i], None, s.var)

        def increment() -> None:
            self.span = s.span
            i2 = self.emit("getvar", [], t, counter)
            step_l = step if isinstance(step, Const) else self.emit("getvar", [], step.type, st)
            self.emit("setvar", [self.emit("add", [i2, self.convert(step_l, t)], t)], None, counter)

        self.loops.append((header, exit_, increment))
        self.body(s.body)
        self.loops.pop()
        self.jump(latch)
        self.cur = latch
        increment()
        self.jump(header)
        self.cur = exit_

    # -- expressions
    def address(self, array: str, index: hir.Expr) -> tuple[Operand, str, ScalarType]:
        idx = self.expr(index)
        if idx.type is not U32:
            idx = self.convert(idx, U32)
        if array in self.buffers:
            base, elem = self.buffers[array]
            space = "global"
            base_op: Operand = base
        else:
            la = self.locals[array]
            elem, space, base_op = la.elem, "local", Const(la.offset, U32)
        scaled = idx if elem.size == 1 else self.binop("mul", idx, Const(elem.size, U32), U32)
        if isinstance(base_op, Const) and base_op.value == 0:
            return scaled, space, elem
        return self.binop("add", base_op, scaled, U32), space, elem

    def buffer_index(self, array: str) -> int | None:
        """The parameter index of a buffer (the tag of a global access); None for local arrays."""
        return self.buffer_params.get(array)

    def binop(self, op: str, a: Operand, b: Operand, t: ScalarType) -> Value:
        return self.emit(op, [a, b], t)

    def convert(self, v: Operand, t: ScalarType) -> Operand:
        if v.type == t:
            return v
        if isinstance(v, Const) and v.type.is_int and t.is_int:
            x = int(v.value) & 0xFFFFFFFF
            return Const(x if t is U32 else (x - (1 << 32) if x >> 31 else x), t)
        return self.emit("cvt", [v], t)

    def expr(self, e: hir.Expr) -> Operand:
        span, self.span = self.span, e.span or self.span
        try:
            return self._expr(e)
        finally:
            self.span = span

    def _expr(self, e: hir.Expr) -> Operand:
        t = e.type
        if isinstance(e, hir.Const):
            v = e.value
            if t.is_int:
                x = int(v) & 0xFFFFFFFF
                v = x if t is U32 else (x - (1 << 32) if x >> 31 else x)
            elif t.is_float:
                v = round_float(float(v), t)  # one rounding to the type: 1.0e39 in f32 is inf
            return Const(v, t)
        if isinstance(e, hir.Var):
            if e.name in self.consts:
                return self.convert(Const(self.consts[e.name], I32 if self.consts[e.name] < 0 else U32), t)
            if e.name in self.scalar:
                return self.scalar[e.name]
            return self.emit("getvar", [], t, e.name)
        if isinstance(e, hir.Unary):
            x = self.expr(e.operand)
            return self.emit(UNARY[e.op], [x], t)
        if isinstance(e, hir.Binary):
            a, b = self.expr(e.left), self.expr(e.right)
            if e.op is hir.BinaryOp.DIV:
                return self.emit("div", [self.convert(a, t), self.convert(b, t)], t)
            if e.op is hir.BinaryOp.FLOOR_DIV:
                return self.floordiv(a, b, t)
            if e.op is hir.BinaryOp.FLOOR_MOD:
                return self.floormod(a, b, t)
            if e.op in (hir.BinaryOp.TRUNC_DIV, hir.BinaryOp.TRUNC_REM):
                if not t.is_int:
                    raise TypeError(f"{e.op} takes integers, not {t}")  # frontends refuse it with a span
                return self.emit("div" if e.op is hir.BinaryOp.TRUNC_DIV else "rem", [a, b], t)
            return self.emit(BINARY[e.op], [a, b], t)
        if isinstance(e, hir.Compare):
            a, b = self.expr(e.left), self.expr(e.right)
            if a.type.is_int and b.type.is_int and a.type != b.type:
                return self.mixed_compare(e.op.value, a, b)
            return self.emit(f"cmp.{e.op.value}", [a, b], BOOL)
        if isinstance(e, hir.Logical):
            res = self.fresh_var(BOOL)
            a = self.expr(e.left)
            self.emit("setvar", [a], None, res)
            rhs, join = self.new_block(), self.new_block()
            self.term(CondBr(a, rhs, join) if e.op is hir.LogicalOp.AND else CondBr(a, join, rhs))
            self.cur = rhs
            self.emit("setvar", [self.expr(e.right)], None, res)
            self.jump(join)
            self.cur = join
            return self.emit("getvar", [], BOOL, res)
        if isinstance(e, hir.IfExpr):
            res = self.fresh_var(t)
            c = self.expr(e.cond)
            then, other, join = self.new_block(), self.new_block(), self.new_block()
            self.term(CondBr(c, then, other))
            for blk, val in ((then, e.then), (other, e.other)):
                self.cur = blk
                self.emit("setvar", [self.expr(val)], None, res)
                self.jump(join)
            self.cur = join
            return self.emit("getvar", [], t, res)
        if isinstance(e, hir.Cast):
            return self.convert(self.expr(e.operand), t)
        if isinstance(e, hir.Load):
            addr, space, elem = self.address(e.array, e.index)
            return self.emit(f"load.{space}{_narrow(elem)}", [addr], t, buffer=self.buffer_index(e.array))
        if isinstance(e, hir.PrivateLoad):
            return self.private_load(e.array, e.indices, t)
        if isinstance(e, hir.Call):
            return self.call(e)
        raise TypeError(e)

    # -- per-thread arrays
    def private_flat(self, array: str, indices: tuple[hir.Expr, ...]) -> int | None:
        """The element's row-major number when every index is a constant here (None: a run-time
        index, which sends a register array to local memory: `lower`). A constant outside its
        dimension is recorded as an error."""
        pa = self.privates[array]
        env = self.env()
        ks = [hir.fold_int(ix, env) for ix in indices]
        if any(k is None for k in ks):
            if array not in self.in_memory:
                self.dynamic.add(array)
            return None
        flat = 0
        for dim, (k, n, ix) in enumerate(zip(ks, pa.shape, indices)):
            assert k is not None
            if not 0 <= k < n:
                where = f" in dimension {dim + 1}" if len(pa.shape) > 1 else ""
                d = Diagnostic(f"index {k} is out of range for per-thread array {array!r}{where} (size {n})", ix.span)
                if d not in self.range_errors:
                    self.range_errors.append(d)
                k = 0  # the kernel is refused: lowering goes on to find the other errors
            flat = flat * n + k
        return flat

    def private_address(self, array: str, indices: tuple[hir.Expr, ...]) -> Operand:
        """The local-memory address of an element: (flat * threads + thread) * size; an index
        outside its dimension makes the address one past every local array, so the access traps
        (as it does on an out-of-range local access) instead of reaching another thread's slice."""
        pa, la = self.privates[array], self.locals[array]
        flat = self.private_flat(array, indices)
        ok: Operand | None = None
        if flat is None:
            idx: Operand = Const(0, U32)
            for ix, n in zip(indices, pa.shape):
                i = self.convert(self.expr(ix), U32)  # a negative index is a huge u32: out of range too
                inside = self.emit("cmp.lt", [i, Const(n, U32)], BOOL)
                ok = inside if ok is None else self.emit("and", [ok, inside], BOOL)
                scaled = (
                    idx if isinstance(idx, Const) and idx.value == 0 else self.binop("mul", idx, Const(n, U32), U32)
                )
                idx = i if isinstance(scaled, Const) else self.binop("add", scaled, i, U32)
        else:
            idx = Const(flat, U32)
        tid = self.flat_thread()
        size = la.elem.size
        if isinstance(idx, Const):
            first = int(idx.value) * self.threads + la.offset // size
            slot = self.binop("add", tid, Const(first, U32), U32) if first else tid
        else:
            slot = self.emit("mad", [idx, Const(self.threads, U32), tid], U32)
            if la.offset:
                slot = self.binop("add", slot, Const(la.offset // size, U32), U32)
        addr: Operand = self.binop("mul", slot, Const(size, U32), U32) if size > 1 else slot
        if ok is not None:
            addr = self.emit("select", [ok, addr, Const(OUT_OF_RANGE, U32)], U32)
        return addr

    def flat_thread(self) -> Operand:
        """The thread's number in its workgroup: tid.x + ntid.x * (tid.y + ntid.y * tid.z)."""
        x = self.sreg("tid", 0)
        w = self.fn.workgroup_size
        if w is not None and w[1] == 1 and w[2] == 1:
            return x
        yz = self.emit("mad", [self.sreg("tid", 2), self.sreg("ntid", 1), self.sreg("tid", 1)], U32)
        return self.emit("mad", [yz, self.sreg("ntid", 0), x], U32)

    def private_load(self, array: str, indices: tuple[hir.Expr, ...], t: ScalarType) -> Operand:
        if array not in self.in_memory:
            flat = self.private_flat(array, indices)
            if flat is None:  # this lowering is discarded: `lower` puts the array in memory
                return Const(0.0 if t.is_float else (False if t is BOOL else 0), t)
            return self.emit("getvar", [], t, f"{array}$${flat}")
        elem = self.locals[array].elem
        v = self.emit(f"load.local{_narrow(elem)}", [self.private_address(array, indices)], elem)
        if t is BOOL:
            return self.emit("cmp.ne", [v, Const(0, U32)], BOOL)
        return v

    def private_store(self, array: str, indices: tuple[hir.Expr, ...], v: Operand) -> None:
        if array not in self.in_memory:
            flat = self.private_flat(array, indices)
            if flat is not None:  # else this lowering is discarded
                self.emit("setvar", [v], None, f"{array}$${flat}")
            return
        self.private_memory_store(array, self.private_address(array, indices), v)

    def private_element_store(self, array: str, flat: int, v: Operand) -> None:
        """Element `flat` (row-major) of a per-thread array takes v: the declaration's values."""
        if array not in self.in_memory:
            self.emit("setvar", [v], None, f"{array}$${flat}")
            return
        pa = self.privates[array]
        ks: list[hir.Expr] = []
        rest = flat
        for n in reversed(pa.shape):
            ks.insert(0, hir.Const(U32, None, rest % n))
            rest //= n
        self.private_memory_store(array, self.private_address(array, tuple(ks)), v)

    def fill(self, array: str, first: int, v: Operand) -> None:
        """Elements `first`.. of a per-thread array in local memory take v (the declaration's zeros,
        or the repeated value of `[v; N]` / `.fill(v)`), by a loop over this thread's words
        (element k at slot k * threads + thread): code of constant size, where a store per element
        would grow with the array."""
        pa, la = self.privates[array], self.locals[array]
        size = la.elem.size
        tid = self.flat_thread()
        base = la.offset // size
        slot = self.fresh_var(U32)
        self.emit("setvar", [self.binop("add", tid, Const(first * self.threads + base, U32), U32)], None, slot)
        end = self.binop("add", tid, Const(pa.count * self.threads + base, U32), U32)
        header, body, exit_ = self.new_block(), self.new_block(), self.new_block()
        self.jump(header)
        self.cur = header
        k = self.emit("getvar", [], U32, slot)
        self.term(CondBr(self.emit("cmp.lt", [k, end], BOOL), body, exit_))
        self.cur = body
        addr: Operand = self.binop("mul", k, Const(size, U32), U32) if size > 1 else k
        self.private_memory_store(array, addr, v)
        self.emit("setvar", [self.binop("add", k, Const(self.threads, U32), U32)], None, slot)
        self.jump(header)
        self.cur = exit_

    def private_memory_store(self, array: str, addr: Operand, v: Operand) -> None:
        if v.type is BOOL:
            v = self.emit("select", [v, Const(1, U32), Const(0, U32)], U32)
        self.emit(f"store.local{_narrow(self.locals[array].elem)}", [addr, v], None)

    def mixed_compare(self, op: str, a: Operand, b: Operand) -> Operand:
        """An i32 against a u32 by mathematical value: `s <= u` and `s > u` compare s with
        min(u, 2**31-1) as signed (one extra instruction); the others test the sign of s and
        compare the bits as unsigned (two extra)."""
        flip = {"lt": "gt", "gt": "lt", "le": "ge", "ge": "le", "eq": "eq", "ne": "ne"}
        if a.type is U32:
            a, b, op = b, a, flip[op]
        s, u = a, b  # s: i32, u: u32
        if op in ("le", "gt"):
            clamped = self.emit("min", [u, Const(0x7FFFFFFF, U32)], U32)
            return self.emit(f"cmp.{op}", [s, self.convert(clamped, I32)], BOOL)
        bits = self.emit(f"cmp.{op}", [self.convert(s, U32), u], BOOL)
        if op in ("lt", "ne"):  # a negative s is below every u
            return self.emit("or", [self.emit("cmp.lt", [s, Const(0, I32)], BOOL), bits], BOOL)
        return self.emit("and", [self.emit("cmp.ge", [s, Const(0, I32)], BOOL), bits], BOOL)

    def powi(self, x: Operand, k: int, t: ScalarType) -> Operand:
        """x ** k for a constant k >= 1: square and multiply (x is evaluated once)."""
        result: Operand | None = None
        square = x
        while True:
            if k & 1:
                result = square if result is None else self.emit("mul", [result, square], t)
            k >>= 1
            if not k:
                break
            square = self.emit("mul", [square, square], t)
        assert result is not None
        return result

    def floordiv(self, a: Operand, b: Operand, t: ScalarType) -> Operand:
        if t.is_float:
            return self.emit("floor", [self.emit("div", [a, b], t)], t)
        # integers stay `floordiv` (Python rounding) until legalisation, so passes see the intent
        return self.emit("div" if t is U32 else "floordiv", [a, b], t)

    def floormod(self, a: Operand, b: Operand, t: ScalarType) -> Operand:
        if t.is_float:
            q = self.emit("floor", [self.emit("div", [a, b], t)], t)
            return self.emit("sub", [a, self.emit("mul", [q, b], t)], t)
        return self.emit("rem" if t is U32 else "floormod", [a, b], t)

    def sreg(self, name: str, axis: int) -> Operand:
        v = self.emit(
            f"sreg.{name}" + (f".{'xyz'[axis]}" if name in ("tid", "ctaid", "ntid", "nctaid") else ""),
            [],
            U32,
        )
        return v

    def call(self, e: hir.Call) -> Operand:
        """A builtin's call, lowered as its row of compiler/builtins.py says."""
        row = builtins.ROWS.get(e.name)
        if row is None:
            raise CompileError([Diagnostic(f"no lowering for {e.name}", e.span)])
        low, t, attrs = row.lowering, e.type, dict(e.attrs)
        via = low.via
        if via is Via.SREG:
            return self.convert(self.sreg(low.op, int(attrs.get("axis", 0))), I32)  # type: ignore[arg-type]
        if via is Via.EFFECT:
            self.emit(low.op, [], None)
            return Const(0, I32)
        if via is Via.FENCE:
            self.emit(f"{low.op}.{attrs['scope']}", [], None)
            return Const(0, I32)
        if via is Via.ATOMIC:
            assert e.array is not None
            addr, space, _ = self.address(e.array, e.args[0])
            vals = [self.expr(a) for a in e.args[1:]]
            return self.emit(f"atomic.{low.op}.{space}", [addr, *vals], t, buffer=self.buffer_index(e.array))
        if via is Via.COMPOSITE:
            return COMPOSITES[low.op](self, e)
        args = [self.expr(a) for a in e.args]
        if via is Via.WAVE:
            if low.op == "wave.reduce.add" and t is F32:
                return self.butterfly(args[0])
            if len(args) == 2:
                args[1] = self.convert(args[1], U32)
            return self.emit(low.op, args, t)
        if via is Via.OP:
            return self.emit(low.op, args, t)
        raise CompileError([Diagnostic(f"no lowering for {e.name} ({via.value})", e.span)])

    # ---- the composite lowerings the rows name (COMPOSITES below) --------------------------------
    def global_id(self, e: hir.Call) -> Operand:
        axis = int(dict(e.attrs)["axis"])  # type: ignore[arg-type]
        g = self.emit("mad", [self.sreg("ctaid", axis), self.sreg("ntid", axis), self.sreg("tid", axis)], U32)
        return self.convert(g, I32)

    def global_size(self, e: hir.Call) -> Operand:
        axis = int(dict(e.attrs)["axis"])  # type: ignore[arg-type]
        return self.convert(self.emit("mul", [self.sreg("nctaid", axis), self.sreg("ntid", axis)], U32), I32)

    def exp(self, e: hir.Call) -> Operand:
        """exp(x) = 2**(x * log2(e)), with the rounding error of the product (the product's own,
        exact through fma, and that of log2(e) in the type) put back: 2**p = 2**u * (1 + d * ln 2)
        for p = u + d. Where u >= 64 the power is taken of u - 1 and doubled at the end, so a result
        just below the type's largest value does not overflow on the way; x = +-inf and NaN take
        exp2's own answer (the correction is NaN there). Error: docs/compiler.md, "Accuracy"."""
        t, x = e.type, self.expr(e.args[0])
        c = 1 / math.log(2)
        hi = round_float(c, t)
        u = self.emit("mul", [x, Const(hi, t)], t)
        d = self.emit("fma", [x, Const(hi, t), self.emit("neg", [u], t)], t)
        d = self.emit("fma", [x, Const(round_float(c - hi, t), t), d], t)
        big = self.emit("cmp.ge", [u, Const(64.0, t)], BOOL)
        r = self.emit(
            "exp2", [self.emit("sub", [u, self.emit("select", [big, Const(1.0, t), Const(0.0, t)], t)], t)], t
        )
        fixed = self.emit("fma", [r, self.emit("mul", [d, Const(math.log(2), t)], t), r], t)
        fixed = self.emit("select", [self.emit("cmp.ne", [fixed, fixed], BOOL), r, fixed], t)
        return self.emit("mul", [fixed, self.emit("select", [big, Const(2.0, t), Const(1.0, t)], t)], t)

    def log(self, e: hir.Call) -> Operand:
        t, x = e.type, self.expr(e.args[0])
        return self.emit("mul", [self.emit("log2", [x], t), Const(math.log(2), t)], t)

    def powi_call(self, e: hir.Call) -> Operand:
        return self.powi(self.expr(e.args[0]), int(dict(e.attrs)["n"]), e.type)  # type: ignore[arg-type]

    # the builtins added with the binder: exact sequences of MIR ops (docs/compiler.md, "Math")
    def clamp(self, e: hir.Call) -> Operand:
        t = e.type
        x, lo, hi = (self.expr(a) for a in e.args)
        return self.emit("min", [self.emit("max", [x, lo], t), hi], t)

    def min_first(self, e: hir.Call) -> Operand:
        """min(a, b, ...) as CPython computes it: left to right, the next argument where it
        compares less (a NaN keeps its place; of two zeros the first)."""
        return self._by_compare(e, "cmp.lt", "min")

    def max_first(self, e: hir.Call) -> Operand:
        return self._by_compare(e, "cmp.gt", "max")

    def _by_compare(self, e: hir.Call, cmp: str, same: str) -> Operand:
        t = e.type
        args = [self.expr(a) for a in e.args]
        r = args[0]
        for b in args[1:]:
            if t.is_int:  # integers: the ISA's min and max give the same value
                r = self.emit(same, [r, b], t)
            else:
                r = self.emit("select", [self.emit(cmp, [b, r], BOOL), b, r], t)
        return r

    def sign(self, e: hir.Call) -> Operand:
        """1, -1, or x itself (a zero keeps its sign; a NaN stays NaN)."""
        t = e.type
        x = self.expr(e.args[0])
        one = Const(1.0 if t.is_float else 1, t)
        r = x
        if t is not U32:
            below = self.emit("cmp.lt", [x, Const(0.0 if t.is_float else 0, t)], BOOL)
            r = self.emit("select", [below, Const(-1.0 if t.is_float else -1, t), x], t)
        above = self.emit("cmp.gt", [x, Const(0.0 if t.is_float else 0, t)], BOOL)
        return self.emit("select", [above, one, r], t)

    def clamp_keep_nan(self, e: hir.Call) -> Operand:
        """x < lo ? lo : x > hi ? hi : x (a NaN x fails both compares and stays)."""
        t = e.type
        x, lo, hi = (self.expr(a) for a in e.args)
        r = self.emit("select", [self.emit("cmp.gt", [x, hi], BOOL), hi, x], t)
        return self.emit("select", [self.emit("cmp.lt", [x, lo], BOOL), lo, r], t)

    def signum(self, e: hir.Call) -> Operand:
        """Rust's f32::signum: -1.0 where x is negative or -0.0 (1 / -0.0 is -inf), else 1.0; NaN stays."""
        t = e.type
        x = self.expr(e.args[0])
        zero = Const(0.0, t)
        neg_zero = self.emit("cmp.lt", [self.emit("div", [Const(1.0, t), x], t), zero], BOOL)
        neg = self.emit("or", [self.emit("cmp.lt", [x, zero], BOOL), neg_zero], BOOL)
        r = self.emit("select", [neg, Const(-1.0, t), Const(1.0, t)], t)
        return self.emit("select", [self.emit("cmp.ne", [x, x], BOOL), x, r], t)

    def isnan(self, e: hir.Call) -> Operand:
        x = self.expr(e.args[0])
        return self.emit("cmp.ne", [x, x], BOOL)  # NaN != NaN (an unordered compare)

    def _trunc(self, x: Operand, t: ScalarType) -> Operand:
        below = self.emit("cmp.lt", [x, Const(0.0, t)], BOOL)
        return self.emit("select", [below, self.emit("ceil", [x], t), self.emit("floor", [x], t)], t)

    def trunc(self, e: hir.Call) -> Operand:
        return self._trunc(self.expr(e.args[0]), e.type)

    def round_even(self, e: hir.Call) -> Operand:
        """floor(x), plus 1 where the rest (exact: x - floor(x)) is above one half, or one half
        and floor(x) odd; a zero result of a negative x is -0.0."""
        t = e.type
        x = self.expr(e.args[0])
        fl = self.emit("floor", [x], t)
        rest = self.emit("sub", [x, fl], t)
        half = self.emit("mul", [fl, Const(0.5, t)], t)
        odd = self.emit("cmp.ne", [self.emit("floor", [half], t), half], BOOL)
        tie = self.emit("and", [self.emit("cmp.eq", [rest, Const(0.5, t)], BOOL), odd], BOOL)
        up = self.emit("or", [self.emit("cmp.gt", [rest, Const(0.5, t)], BOOL), tie], BOOL)
        r = self.emit("select", [up, self.emit("add", [fl, Const(1.0, t)], t), fl], t)
        return self._negative_zero(x, r, t)

    def _negative_zero(self, x: Operand, r: Operand, t: ScalarType) -> Operand:
        """r, or -0.0 where r is zero and x negative (rounding keeps the sign)."""
        zero = self.emit("cmp.eq", [r, Const(0.0, t)], BOOL)
        neg = self.emit("and", [zero, self.emit("cmp.lt", [x, Const(0.0, t)], BOOL)], BOOL)
        return self.emit("select", [neg, Const(-0.0, t), r], t)

    def round_away(self, e: hir.Call) -> Operand:
        """trunc(x), moved one away from zero where the rest |x - trunc(x)| (exact) is at least one half."""
        t = e.type
        x = self.expr(e.args[0])
        tr = self._trunc(x, t)
        rest = self.emit("abs", [self.emit("sub", [x, tr], t)], t)
        up = self.emit("cmp.ge", [rest, Const(0.5, t)], BOOL)
        below = self.emit("cmp.lt", [x, Const(0.0, t)], BOOL)
        step = self.emit("select", [below, Const(-1.0, t), Const(1.0, t)], t)
        return self.emit("select", [up, self.emit("add", [tr, step], t), tr], t)

    def round_half_up(self, e: hir.Call) -> Operand:
        """JavaScript's Math.round: floor(x), plus 1 where the rest (exact: x - floor(x)) is at least
        one half; a zero result of a negative x is -0.0."""
        t = e.type
        x = self.expr(e.args[0])
        fl = self.emit("floor", [x], t)
        up = self.emit("cmp.ge", [self.emit("sub", [x, fl], t), Const(0.5, t)], BOOL)
        r = self.emit("select", [up, self.emit("add", [fl, Const(1.0, t)], t), fl], t)
        return self._negative_zero(x, r, t)

    def popcount(self, e: hir.Call) -> Operand:
        return self.convert(self.emit("popc", [self.convert(self.expr(e.args[0]), U32)], U32), I32)

    def clz(self, e: hir.Call) -> Operand:
        return self.convert(self.emit("clz", [self.convert(self.expr(e.args[0]), U32)], U32), I32)

    def ctz(self, e: hir.Call) -> Operand:
        """popc((v & -v) - 1): the ones below the lowest set bit (32 for v = 0)."""
        v = self.convert(self.expr(e.args[0]), U32)
        low = self.emit("and", [v, self.emit("sub", [Const(0, U32), v], U32)], U32)
        return self.convert(self.emit("popc", [self.emit("sub", [low, Const(1, U32)], U32)], U32), I32)

    def pow(self, e: hir.Call) -> Operand:
        """x ** y in f32 as exp2(y * log2|x|), with the sign of an odd integer power of a negative
        x and C's special cases (pow(x, 0) = pow(1, y) = pow(-1, +-inf) = 1; a negative finite x
        and a non-integer y: NaN). The relative error grows with |y * log2|x||, the exponent's
        rounding: docs/compiler.md states the bound the tests check."""
        t = e.type
        x, y = (self.expr(a) for a in e.args)
        ax = self.emit("abs", [x], t)
        r = self.emit("exp2", [self.emit("mul", [y, self.emit("log2", [ax], t)], t)], t)
        whole = self.emit("cmp.eq", [self._trunc(y, t), y], BOOL)
        hy = self.emit("mul", [y, Const(0.5, t)], t)
        odd = self.emit("and", [whole, self.emit("cmp.ne", [self._trunc(hy, t), hy], BOOL)], BOOL)
        below = self.emit("cmp.lt", [x, Const(0.0, t)], BOOL)
        recip = self.emit("div", [Const(1.0, t), x], t)  # -inf for -0.0: its sign
        negative = self.emit("or", [below, self.emit("cmp.lt", [recip, Const(0.0, t)], BOOL)], BOOL)
        flip = self.emit("and", [negative, odd], BOOL)
        r = self.emit("select", [flip, self.emit("neg", [r], t), r], t)
        finite_below = self.emit("and", [below, self.emit("cmp.gt", [x, Const(-math.inf, t)], BOOL)], BOOL)
        nan = self.emit("and", [finite_below, self.emit("not", [whole], BOOL)], BOOL)
        r = self.emit("select", [nan, Const(math.nan, t), r], t)
        y0 = self.emit("cmp.eq", [y, Const(0.0, t)], BOOL)
        x1 = self.emit("cmp.eq", [x, Const(1.0, t)], BOOL)
        y_inf = self.emit("cmp.eq", [self.emit("abs", [y], t), Const(math.inf, t)], BOOL)
        minus1 = self.emit("and", [self.emit("cmp.eq", [ax, Const(1.0, t)], BOOL), y_inf], BOOL)
        one = self.emit("or", [y0, self.emit("or", [x1, minus1], BOOL)], BOOL)
        return self.emit("select", [one, Const(1.0, t), r], t)

    def butterfly(self, x: Operand) -> Operand:
        """f32 sum over the wave: x += shuffle_xor(x, d) for d = W/2, W/4, ..., 1 (all lanes active)."""
        acc, dist = self.fresh_var(F32), self.fresh_var(U32)
        self.emit("setvar", [x], None, acc)
        w = self.sreg("wave_width", 0)
        self.emit("setvar", [self.emit("shr", [w, Const(1, U32)], U32)], None, dist)
        header, body, exit_ = self.new_block(), self.new_block(), self.new_block()
        self.jump(header)
        self.cur = header
        d = self.emit("getvar", [], U32, dist)
        self.term(CondBr(self.emit("cmp.ne", [d, Const(0, U32)], BOOL), body, exit_))
        self.cur = body
        a = self.emit("getvar", [], F32, acc)
        d2 = self.emit("getvar", [], U32, dist)
        other = self.emit("wave.shuffle.xor", [a, d2], F32)
        self.emit("setvar", [self.emit("add", [a, other], F32)], None, acc)
        self.emit("setvar", [self.emit("shr", [d2, Const(1, U32)], U32)], None, dist)
        self.jump(header)
        self.cur = exit_
        return self.emit("getvar", [], F32, acc)

    def finish(self) -> Function:
        self.term(Ret())
        for b in self.fn.blocks:
            if b.term is None:
                b.term = Ret()
        reachable = set(rpo(self.fn.entry, lambda b: b.succs))
        self.fn.blocks = [b for b in self.fn.blocks if b in reachable]
        return self.fn


COMPOSITES: dict[str, Callable[[Lowerer, hir.Call], Operand]] = {
    "global_id": Lowerer.global_id,
    "global_size": Lowerer.global_size,
    "exp": Lowerer.exp,
    "log": Lowerer.log,
    "powi": Lowerer.powi_call,
    "pow": Lowerer.pow,
    "clamp": Lowerer.clamp,
    "min_first": Lowerer.min_first,
    "max_first": Lowerer.max_first,
    "sign": Lowerer.sign,
    "isnan": Lowerer.isnan,
    "signum": Lowerer.signum,
    "clamp_keep_nan": Lowerer.clamp_keep_nan,
    "trunc": Lowerer.trunc,
    "round_even": Lowerer.round_even,
    "round_away": Lowerer.round_away,
    "round_half_up": Lowerer.round_half_up,
    "popcount": Lowerer.popcount,
    "clz": Lowerer.clz,
    "ctz": Lowerer.ctz,
}
"""A row's named composite lowering (builtins.Lowering.op of Via.COMPOSITE) -> its method."""


def lower(f: hir.Function) -> Function:
    """Per-thread arrays of up to MAX_REGISTER_WORDS registers start in registers, larger ones in
    local memory; one met with an index known only at run time puts the kernel through lowering
    again with that array in local memory too (lowering is deterministic, so the second finds no
    other)."""
    large = frozenset(pa.name for pa in f.privates if register_words(pa) > MAX_REGISTER_WORDS)
    lo = Lowerer(f, large)
    lo.body(f.body)
    if lo.range_errors:
        raise CompileError(lo.range_errors)
    if lo.dynamic:
        lo = Lowerer(f, large | lo.dynamic)
        lo.body(f.body)
        assert not lo.dynamic and not lo.range_errors
    return lo.finish()


__all__ = ["F64", "lower"]


def _in_memory(elem: ScalarType) -> ScalarType:
    """How a per-thread array's element is kept in local memory: a bool as a u32 0 or 1."""
    return U32 if elem is BOOL else elem


# The most elements of one repeated value (zeros, `[v; N]`) at the end of the initialiser of a
# per-thread array in local memory that are stored one by one; more are stored by a loop
# (`Lowerer.fill`), so the code does not grow with the array.
FILL_LOOP = 16


def _repeated_tail(values: tuple[hir.Expr, ...], count: int, zero: Const) -> int:
    """Where the run of one repeated value that ends a per-thread array's initialiser starts (the
    values given, then zeros up to `count`): a constant of the same bits, or the same variable,
    evaluated once for the whole run."""

    def key(e: hir.Expr) -> tuple[object, ...] | None:
        if isinstance(e, hir.Const):
            return ("const", e.type, repr(e.value))
        if isinstance(e, hir.Var):
            return ("var", e.type, e.name)
        return None

    if len(values) < count:
        last: tuple[object, ...] | None = ("const", zero.type, repr(zero.value))
        start = len(values)
    elif values:
        last, start = key(values[-1]), len(values) - 1
    else:
        return count
    if last is None:
        return count
    while start > 0 and key(values[start - 1]) == last:
        start -= 1
    return start


# The address an out-of-range dynamic index of a per-thread array in local memory gives: past
# the device's local memory (LOCAL_MEMORY_SIZE), so the access traps; 16-byte aligned, so the trap
# names the range, not the alignment.
OUT_OF_RANGE = 0xFFFFFFF0


def _narrow(elem: ScalarType) -> str:
    """The op suffix of an access to an 8- or 16-bit element (`load.global.u8`, `store.local.i16`):
    part of the op so that every pass that copies or compares instructions keeps it."""
    return f".{elem.name}" if elem.narrow else ""
