"""Kernel -> Python source for numba: the structured program as nested loops over one
workgroup's lanes, under explicit masks.

The generated `run_range(first, last, ...)` runs workgroups first..last-1 one after the other.
A workgroup's lanes (its waves side by side, padded to whole waves) execute each instruction
in lockstep, exactly as the NumPy engine executes a batch (DESIGN section 3): runs of value
instructions are fused into one loop over lanes (they touch only the lane's own registers, so
the order of lanes cannot matter), memory, atomics and wave operations get a loop of their own
in ascending lane order, and structured control flow keeps the masks the NumPy engine keeps
(entry, break and continue masks per construct). A trap or an exhausted instruction budget
stores a code in `status` and returns; the launcher then asks the NumPy engine for the error.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...isa.instruction import Imm, Instruction, Mem, Pair, Pred, Reg, SReg
from ...isa.registers import SReg as SR
from ...isa.structure import Nesting, nesting
from ...isa.types import SUBREGS, DataType, Kind, Role
from ...isa.vocabulary import AtomOp, Nest, Op, ReduceOp, ShuffleMode
from ...wbin.program import Kernel
from .rows import EXPR, HELPERS

M32 = 0xFFFFFFFF

TRAP, BUDGET = 1, 2
"""status[0] codes: an access outside memory or its buffer, or the instruction budget."""


class Unsupported(Exception):
    """A kernel the compiled engine does not translate (the row or feature named)."""


@dataclass(frozen=True)
class Shape:
    """What a translation is specialised on (grid and arguments are run-time values)."""

    wave_width: int
    workgroup: tuple[int, int, int]


def unsupported_reason(k: Kernel) -> str | None:
    """Why the compiled engine cannot run kernel k, or None."""
    for pc, inst in enumerate(k.instructions):
        why = _unsupported(inst)
        if why:
            return f"instruction {pc} ({inst.spec.name}): {why}"
    return None


def _unsupported(inst: Instruction) -> str | None:
    spec = inst.spec
    if spec.op is Op.MMA:
        return "mma is not translated by the compiled engine"
    if spec.op is Op.MOV and spec.key not in EXPR:
        if any(isinstance(o, SReg) and o.id == SR.CLOCK for o in inst.operands):
            return "%clock counts the NumPy engine's issues, which the compiled engine does not reproduce"
        return None
    if spec.key in EXPR or spec.op in _HANDLED:
        return None
    return "no compiled semantics for this row"


_HANDLED = {
    Op.LD,
    Op.ST,
    Op.ATOM,
    Op.RED,
    Op.REDUCE,
    Op.BROADCAST,
    Op.SHUFFLE,
    Op.PREFIX,
    Op.BALLOT,
    Op.ANY,
    Op.ALL,
    Op.BARRIER,
    Op.FENCE,
    Op.NOP,
    Op.IF,
    Op.ELSE,
    Op.ENDIF,
    Op.LOOP,
    Op.ENDLOOP,
    Op.BREAK,
    Op.CONTINUE,
    Op.RET,
}


def has_global_atomics(k: Kernel) -> bool:
    return any(i.spec.op in (Op.ATOM, Op.RED) and i.spec.space == "global" for i in k.instructions)


class Gen:
    """Emits the module for one kernel and shape."""

    def __init__(self, k: Kernel, shape: Shape):
        reason = unsupported_reason(k)
        if reason:
            raise Unsupported(reason)
        self.k = k
        self.W = shape.wave_width
        self.wx, self.wy, self.wz = shape.workgroup
        self.T = self.wx * self.wy * self.wz
        self.NW = -(-self.T // self.W)
        self.L = self.NW * self.W
        self.nest: Nesting = nesting(k.instructions)
        self.lines: list[str] = []
        self.ind = 2
        self.depth_max = 0
        self.tmp = 0

    # ------------------------------------------------------------------ text
    def put(self, text: str) -> None:
        self.lines.append("    " * self.ind + text)

    def fresh(self) -> str:
        self.tmp += 1
        return f"t{self.tmp}"

    # ------------------------------------------------------------------ operands
    def read(self, op: object) -> str:
        """A source operand of the lane `l`: int64 bits, or a bool for a predicate."""
        if isinstance(op, Imm):
            bits = op.bits & ((1 << op.width) - 1)
            if op.width == 64 and bits >= 1 << 63:
                bits -= 1 << 64
            return str(bits)
        if isinstance(op, Reg):
            if op.sel == 0:
                return f"R[{op.n}, l]"
            _, off, width = SUBREGS[op.sel]
            return f"((R[{op.n}, l] >> {off}) & {(1 << width) - 1})"
        if isinstance(op, Pair):
            return f"(R[{op.n}, l] | (R[{op.n + 1}, l] << 32))"
        if isinstance(op, Pred):
            return f"P[{op.n}, l]"
        if isinstance(op, SReg):
            return self.sreg(op.id)
        raise TypeError(op)

    def sreg(self, sid: int) -> str:
        return {
            SR.TID_X: "TX[l]",
            SR.TID_Y: "TY[l]",
            SR.TID_Z: "TZ[l]",
            SR.WID: "(l // W)",
            SR.LID: "(l % W)",
            SR.CTAID_X: "cx",
            SR.CTAID_Y: "cy",
            SR.CTAID_Z: "cz",
            SR.NTID_X: str(self.wx),
            SR.NTID_Y: str(self.wy),
            SR.NTID_Z: str(self.wz),
            SR.NCTAID_X: "gx",
            SR.NCTAID_Y: "gy",
            SR.NCTAID_Z: "gz",
            SR.NWAVES: str(self.NW),
            SR.WAVE_WIDTH: str(self.W),
        }[SR(sid)]

    def write(self, op: object, value: str) -> None:
        """Statements writing `value` (already a local name or expression) to a destination."""
        if isinstance(op, Reg):
            if op.sel == 0:
                self.put(f"R[{op.n}, l] = {value}")
                return
            _, off, width = SUBREGS[op.sel]
            fmask = (1 << width) - 1
            keep = ~(fmask << off) & M32
            self.put(f"R[{op.n}, l] = (R[{op.n}, l] & {keep}) | (({value} & {fmask}) << {off})")
            return
        if isinstance(op, Pair):
            v = self.fresh()
            self.put(f"{v} = {value}")
            self.put(f"R[{op.n}, l] = {v} & {M32}")
            self.put(f"R[{op.n + 1}, l] = ({v} >> 32) & {M32}")
            return
        if isinstance(op, Pred):
            self.put(f"P[{op.n}, l] = {value}")
            return
        raise TypeError(op)

    def guard(self, inst: Instruction) -> str:
        g = inst.guard
        if g is None:
            return "act[l]"
        return f"act[l] and {'not ' if g.negated else ''}P[{g.pred}, l]"

    # ------------------------------------------------------------------ module
    def module(self) -> str:
        body_start = len(self.lines)
        self.block(0, len(self.k.instructions), None)
        body = self.lines[body_start:]
        self.lines = self.lines[:body_start]
        k = self.k
        nregs = max(k.registers, 1)
        npreds = max(k.predicates, 1)
        loc = max(16, (k.local_memory + 15) & ~15)
        depth = self.depth_max + 1
        out = [
            f'"""Generated by wavegpu.emulator.compiled for kernel {k.name!r} (W={self.W}, '
            f'workgroup {self.wx}x{self.wy}x{self.wz}). Do not edit."""',
            "import numpy as np",
            "from numba import njit",
            f"from wavegpu.emulator.compiled.scalar import {', '.join(HELPERS)}",
            "",
            "",
            "@njit(cache=True, nogil=True, error_model='numpy', boundscheck=False)",
            "def inside(a, w, rs, re, own_lo, own_hi, pc, nb):",
            "    if own_lo[pc] >= 0:",
            "        return own_lo[pc] <= a and a + w <= own_hi[pc]",
            "    for i in range(nb):",
            "        if rs[i] <= a and a + w <= re[i]:",
            "            return True",
            "    return False",
            "",
            "",
            "@njit(cache=True, nogil=True, error_model='numpy', boundscheck=False)",
            "def run_range(first, last, gx, gy, gz, args, gm8, gm16, gm32, dsize, cm8, cm16, cm32, csize,",
            "              rs, re, own_lo, own_hi, nb, budget, status):",
            f"    W = {self.W}",
            f"    L = {self.L}",
            f"    R = np.zeros(({nregs}, L), np.int64)",
            f"    P = np.zeros(({npreds}, L), np.bool_)",
            "    act = np.zeros(L, np.bool_)",
            "    alive = np.zeros(L, np.bool_)",
            "    TMP = np.zeros(L, np.int64)",
            f"    E = np.zeros(({depth}, L), np.bool_)",
            f"    Q = np.zeros(({depth}, L), np.bool_)",
            f"    B = np.zeros(({depth}, L), np.bool_)",
            f"    C = np.zeros(({depth}, L), np.bool_)",
            f"    lm8 = np.zeros({loc}, np.uint8)",
            "    lm16 = lm8.view(np.uint16)",
            "    lm32 = lm8.view(np.uint32)",
            "    TX = np.empty(L, np.int64)",
            "    TY = np.empty(L, np.int64)",
            "    TZ = np.empty(L, np.int64)",
            "    for l in range(L):",
            f"        TX[l] = l % {self.wx}",
            f"        TY[l] = (l // {self.wx}) % {self.wy}",
            f"        TZ[l] = l // {self.wx * self.wy}",
            "    for wg in range(first, last):",
            "        R[:] = 0",
            "        P[:] = False",
            f"        for i in range(min(args.size, {nregs})):",
            "            R[i, :] = args[i]",
            "        lm8[:] = 0",
            "        cx = wg % gx",
            "        cy = (wg // gx) % gy",
            "        cz = wg // (gx * gy)",
            "        for l in range(L):",
            f"            alive[l] = l < {self.T}",
            "            act[l] = alive[l]",
            "        issued = 0",
            *body,
            "        if issued > budget:",
            f"            status[0] = {BUDGET}",
            "            status[1] = wg",
            "            return",
            "    return",
            "",
        ]
        return "\n".join(out)

    # ------------------------------------------------------------------ structure
    def block(self, start: int, end: int, loop: int | None, depth: int = 0) -> None:
        """Instructions start..end-1 at nesting depth `depth`; `loop` is the depth index of the
        innermost loop around them (its break and continue masks), or None."""
        self.depth_max = max(self.depth_max, depth)
        insts = self.k.instructions
        pc = start
        run: list[int] = []
        while pc < end:
            inst = insts[pc]
            spec = inst.spec
            if spec.key in EXPR or (spec.op is Op.MOV and not spec.control):
                run.append(pc)
                pc += 1
                continue
            self.flush(run)
            run = []
            role = spec.nest
            if role is Nest.OPEN_IF:
                self.emit_if(pc, loop, depth)
                pc = self.nest.match[pc][1] + 1
            elif role is Nest.OPEN_LOOP:
                self.emit_loop(pc, loop, depth)
                pc = self.nest.match[pc][1] + 1
            elif role in (Nest.BREAK, Nest.CONTINUE):
                assert loop is not None
                arr = "B" if role is Nest.BREAK else "C"
                self.put("issued += 1")
                self.put("for l in range(L):")
                self.ind += 1
                self.put(f"if {self.guard(inst)} and P[{inst.operands[0].n}, l]:")  # type: ignore[union-attr]
                self.put(f"    {arr}[{loop}, l] = True")
                self.put("    act[l] = False")
                self.ind -= 1
                pc += 1
            elif role is Nest.RET:
                self.put("issued += 1")
                self.put("for l in range(L):")
                self.put(f"    if {self.guard(inst)}:")
                self.put("        alive[l] = False")
                self.put("        act[l] = False")
                pc += 1
            elif spec.op in (Op.LD, Op.ST):
                self.emit_memory(inst, pc)
                pc += 1
            elif spec.op in (Op.ATOM, Op.RED):
                self.emit_atomic(inst, pc)
                pc += 1
            elif spec.op in (Op.BARRIER, Op.FENCE, Op.NOP):
                self.put("issued += 1")  # lockstep: every lane of the workgroup is here
                pc += 1
            else:
                self.emit_wave(inst)
                pc += 1
        self.flush(run)

    def left(self, loop: int | None) -> str:
        return "" if loop is None else f" and not (B[{loop}, l] or C[{loop}, l])"

    def emit_if(self, pc: int, loop: int | None, d: int) -> None:
        inst = self.k.instructions[pc]
        els, end = self.nest.match[pc]
        pn = inst.operands[0].n  # type: ignore[union-attr]
        n = self.fresh()
        self.put("issued += 1")
        self.put(f"{n} = 0")
        self.put("for l in range(L):")
        self.put(f"    E[{d}, l] = act[l]")
        self.put(f"    Q[{d}, l] = P[{pn}, l]")
        self.put(f"    act[l] = act[l] and P[{pn}, l]")
        self.put(f"    {n} += act[l]")
        self.put(f"if {n} > 0:")
        self.ind += 1
        self.put("pass")
        self.block(pc + 1, els if els is not None else end, loop, d + 1)
        self.ind -= 1
        if els is not None:
            self.put("issued += 1")
            self.put(f"{n} = 0")
            self.put("for l in range(L):")
            self.put(f"    act[l] = E[{d}, l] and not Q[{d}, l] and alive[l]{self.left(loop)}")
            self.put(f"    {n} += act[l]")
            self.put(f"if {n} > 0:")
            self.ind += 1
            self.put("pass")
            self.block(els + 1, end, loop, d + 1)
            self.ind -= 1
        self.put("issued += 1")
        self.put("for l in range(L):")
        self.put(f"    act[l] = E[{d}, l] and alive[l]{self.left(loop)}")

    def emit_loop(self, pc: int, loop: int | None, d: int) -> None:
        end = self.nest.match[pc][1]
        n = self.fresh()
        self.put("issued += 1")
        self.put("for l in range(L):")
        self.put(f"    E[{d}, l] = act[l]")
        self.put(f"    B[{d}, l] = False")
        self.put(f"    C[{d}, l] = False")
        self.put("while True:")
        self.ind += 1
        self.block(pc + 1, end, d, d + 1)
        self.put("issued += 1")
        self.put(f"{n} = 0")
        self.put("for l in range(L):")
        self.put(f"    act[l] = E[{d}, l] and alive[l] and not B[{d}, l]")
        self.put(f"    {n} += act[l]")
        self.put(f"if {n} == 0:")
        self.put("    break")
        self.put("for l in range(L):")
        self.put(f"    C[{d}, l] = False")
        self.put("if issued > budget:")
        self.put(f"    status[0] = {BUDGET}")
        self.put("    status[1] = wg")
        self.put("    return")
        self.ind -= 1
        self.put("for l in range(L):")
        self.put(f"    act[l] = E[{d}, l] and alive[l]{self.left(loop)}")

    # ------------------------------------------------------------------ value rows
    def flush(self, run: list[int]) -> None:
        if not run:
            return
        insts = self.k.instructions
        self.put(f"issued += {len(run)}")
        self.put("for l in range(L):")
        self.ind += 1
        self.put("if act[l]:")
        self.ind += 1
        for pc in run:
            inst = insts[pc]
            spec = inst.spec
            srcs = [self.read(o) for o, s in zip(inst.operands, spec.operands) if s.role is Role.SRC]
            template = EXPR.get(spec.key, "{0}")  # mov.b32.sreg: the special register
            value = template.format(*srcs)
            dst = inst.operands[spec.dests[0]]
            if inst.guard is not None:
                g = inst.guard
                self.put(f"if {'not ' if g.negated else ''}P[{g.pred}, l]:")
                self.ind += 1
            if isinstance(dst, Reg) and dst.sel == 0:
                self.put(f"R[{dst.n}, l] = {value}")
            else:
                v = self.fresh()
                self.put(f"{v} = {value}")
                self.write(dst, v)
            if inst.guard is not None:
                self.ind -= 1
        self.ind -= 2

    # ------------------------------------------------------------------ memory
    def address(self, mem: Mem, width: int, space: str, pc: int) -> None:
        """Statements: `a` = the lane's byte address, checked (a trap returns)."""
        off = mem.offset & M32
        if mem.base is None:
            self.put(f"a = {off}")
        elif off:
            self.put(f"a = (R[{mem.base}, l] + {off}) & {M32}")
        else:
            self.put(f"a = R[{mem.base}, l]")
        size = {"global": "dsize", "local": str(self.k.local_memory), "const": "csize"}[space]
        cond = f"a + {width} > {size}"
        if width > 1:
            cond += f" or (a & {width - 1}) != 0"
        if space == "global":
            cond += f" or (nb >= 0 and not inside(a, {width}, rs, re, own_lo, own_hi, {pc}, nb))"
        self.put(f"if {cond}:")
        self.put(f"    status[0] = {TRAP}")
        self.put("    status[1] = wg")
        self.put(f"    status[2] = {pc}")
        self.put("    return")

    def emit_memory(self, inst: Instruction, pc: int) -> None:
        spec = inst.spec
        space = spec.space
        assert space is not None and spec.mem_index is not None
        width = spec.width
        mem = inst.operands[spec.mem_index]
        assert isinstance(mem, Mem)
        pre = {"global": "gm", "local": "lm", "const": "cm"}[space]
        self.put("issued += 1")
        if spec.cls == "load":
            dst = inst.operands[0]
            kind = spec.operands[0].kind
            ncomp = {Kind.VEC2: 2, Kind.VEC4: 4, Kind.PAIR: 2}.get(kind, 1)
            self.put("for l in range(L):")
            self.ind += 1
            self.put(f"if {self.guard(inst)}:")
            self.ind += 1
            self.address(mem, width, space, pc)
            if width == 1:
                v = f"np.int64({pre}8[a])"
                if spec.signed:
                    v = f"(({v} ^ 0x80) - 0x80) & {M32}"
            elif width == 2:
                v = f"np.int64({pre}16[a >> 1])"
                if spec.signed:
                    v = f"(({v} ^ 0x8000) - 0x8000) & {M32}"
            else:
                v = f"{pre}32[a >> 2]"
            if ncomp == 1:
                if isinstance(dst, Reg):
                    self.write(dst, v)
                else:
                    self.put(f"R[{dst.n}, l] = {v}")  # type: ignore[union-attr]
            else:
                base = dst.n  # type: ignore[union-attr]
                for i in range(ncomp):
                    self.put(f"R[{base + i}, l] = {pre}32[(a >> 2) + {i}]")
            self.ind -= 2
            return
        val = inst.operands[1]
        ncomp = {Kind.VEC2: 2, Kind.VEC4: 4, Kind.PAIR: 2}.get(spec.operands[1].kind, 1)
        for i in range(ncomp):
            if isinstance(val, Imm):
                v = str((val.bits >> (32 * i)) & M32)
            elif isinstance(val, Reg):
                v = self.read(val)
            else:
                v = f"R[{val.n + i}, l]"  # type: ignore[union-attr]
            self.put("for l in range(L):")
            self.ind += 1
            self.put(f"if {self.guard(inst)}:")
            self.ind += 1
            self.address(mem, width, space, pc)
            if width == 1:
                self.put(f"{pre}8[a] = {v} & 0xFF")
            elif width == 2:
                self.put(f"{pre}16[a >> 1] = {v} & 0xFFFF")
            else:
                self.put(f"{pre}32[(a >> 2) + {i}] = {v}")
            self.ind -= 2

    def emit_atomic(self, inst: Instruction, pc: int) -> None:
        spec = inst.spec
        space = spec.space
        assert space is not None and spec.mem_index is not None
        mi = spec.mem_index
        mem = inst.operands[mi]
        assert isinstance(mem, Mem)
        pre = {"global": "gm", "local": "lm"}[space]
        vals = [self.read(o) for o in inst.operands[mi + 1 :]]
        op, t = spec.variant, spec.dtype
        self.put("issued += 1")
        self.put("for l in range(L):")
        self.ind += 1
        self.put(f"if {self.guard(inst)}:")
        self.ind += 1
        self.address(mem, 4, space, pc)
        self.put(f"o = np.int64({pre}32[a >> 2])")
        self.put(f"v = {vals[0]}")
        if op is AtomOp.ADD:
            new = "c32(f32(o) + f32(v))" if t is DataType.F32 else f"(o + v) & {M32}"
        elif op is AtomOp.SUB:
            new = f"(o - v) & {M32}"
        elif op in (AtomOp.MIN, AtomOp.MAX):
            fn = "min" if op is AtomOp.MIN else "max"
            new = f"{fn}_s(o, v)" if t is DataType.S32 else f"{fn}(o, v)"
        elif op is AtomOp.AND:
            new = "o & v"
        elif op is AtomOp.OR:
            new = "o | v"
        elif op is AtomOp.XOR:
            new = "o ^ v"
        elif op is AtomOp.EXCH:
            new = "v"
        else:
            new = f"({vals[1]} if o == v else o)"
        self.put(f"{pre}32[a >> 2] = {new}")
        if spec.op is Op.ATOM:
            self.write(inst.operands[0], "o")
        self.ind -= 2

    # ------------------------------------------------------------------ wave operations
    def emit_wave(self, inst: Instruction) -> None:
        spec = inst.spec
        op = spec.op
        srcs = [self.read(o) for o, s in zip(inst.operands, spec.operands) if s.role is Role.SRC]
        dst = inst.operands[0]
        g = self.guard(inst)
        self.put("issued += 1")
        if op in (Op.SHUFFLE, Op.BROADCAST):
            mode = spec.variant
            self.put("for l in range(L):")
            self.put(f"    TMP[l] = {srcs[0]}")
            self.put("for l in range(L):")
            self.ind += 1
            self.put(f"if {g}:")
            self.ind += 1
            self.put(f"b = {srcs[1]}")
            self.put("ln = l % W")
            if mode is ShuffleMode.IDX:
                self.put("s = b % W")
            else:
                expr = {ShuffleMode.XOR: "ln ^ b", ShuffleMode.UP: "ln - b", ShuffleMode.DOWN: "ln + b"}[mode]  # type: ignore[index]
                self.put(f"s = {expr}")
                self.put("if s < 0 or s >= W:")
                self.put("    s = ln")
            self.write(dst, "TMP[l - ln + s]")
            self.ind -= 2
            return
        acc = self.fresh()
        self.put("for w in range(L // W):")
        self.ind += 1
        if op in (Op.REDUCE, Op.PREFIX):
            combine, identity = _reduction(spec.variant, spec.dtype)  # type: ignore[arg-type]
            self.put(f"{acc} = {identity}")
            self.put("for l in range(w * W, w * W + W):")
            self.ind += 1
            self.put(f"if {g}:")
            self.ind += 1
            self.put(f"v = {srcs[0]}")
            if op is Op.PREFIX:
                self.write(dst, acc)
            self.put(f"{acc} = {combine.replace('acc', acc)}")
            self.ind -= 2
            if op is Op.PREFIX:
                self.ind -= 1
                return
            value = acc
        elif op is Op.BALLOT:
            self.put(f"{acc} = 0")
            self.put("for l in range(w * W, w * W + W):")
            self.put(f"    if {g} and {srcs[0]} and l - w * W < 32:")
            self.put(f"        {acc} |= 1 << (l - w * W)")
            value = acc
        elif op is Op.ANY:
            self.put(f"{acc} = False")
            self.put("for l in range(w * W, w * W + W):")
            self.put(f"    if {g} and {srcs[0]}:")
            self.put(f"        {acc} = True")
            value = acc
        else:  # ALL
            self.put(f"{acc} = True")
            self.put("for l in range(w * W, w * W + W):")
            self.put(f"    if ({g}) and not {srcs[0]}:")
            self.put(f"        {acc} = False")
            value = acc
        self.put("for l in range(w * W, w * W + W):")
        self.ind += 1
        self.put(f"if {g}:")
        self.ind += 1
        self.write(dst, value)
        self.ind -= 3


def _reduction(op: ReduceOp, t: DataType) -> tuple[str, int]:
    """(combine expression over acc and v, identity bits) of a wave reduction or prefix."""
    if op is ReduceOp.ADD:
        return f"(acc + v) & {M32}", 0
    if op in (ReduceOp.MIN, ReduceOp.MAX):
        is_min = op is ReduceOp.MIN
        if t is DataType.F32:
            return f"fold_minmax_f32(acc, v, {is_min})", 0x7FFFFFFF
        if t is DataType.S32:
            return ("min_s(acc, v)", 0x7FFFFFFF) if is_min else ("max_s(acc, v)", 0x80000000)
        return ("min(acc, v)", M32) if is_min else ("max(acc, v)", 0)
    if op is ReduceOp.AND:
        return "acc & v", M32
    if op is ReduceOp.OR:
        return "acc | v", 0
    return "acc ^ v", 0


def generate(k: Kernel, shape: Shape) -> str:
    """The module source for kernel k launched with `shape` (raises Unsupported)."""
    return Gen(k, shape).module()
