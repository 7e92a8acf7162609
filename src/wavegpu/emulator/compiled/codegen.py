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

from ...isa.instruction import Imm, Instruction, Mem, Pair, Pred, Reg, SReg, Vec
from ...isa.registers import SReg as SR
from ...isa.structure import Nesting, nesting
from ...isa.types import SUBREGS, Role
from ...isa.vocabulary import Nest, Op
from ...wbin.program import Kernel
from .opsgen import MEMORY_AND_WAVE_OPS, fname, kind_of
from .rows import EXPR

M32 = 0xFFFFFFFF

TRAP, BUDGET = 1, 2
OPS_MODULE = "_wavegpu_compiled_rows"  # the shared row module (cache.load_rows)
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
            return f"instruction {pc} ({inst.spec.key}): {why}"
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


_HANDLED = MEMORY_AND_WAVE_OPS | {  # and what the driver itself does (control flow, no-ops)
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
    """Emits the driver of one kernel and shape: control flow and one call per instruction."""

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
        self.nregs = max(k.registers, 1)
        self.extra: list[tuple[str, str]] = []  # (when: "once"|"wg", statement) filling constant registers
        self.consts: dict[tuple[str, int], int] = {}
        self.used: set[str] = set()
        # scratch registers: one per sub-register source of an instruction, then the destination's
        self.scratch = self.reg_for(("scratch", 0), None)
        for i in range(1, 5):
            self.reg_for(("scratch", i), None)
        self.n_extracted = 0
        self.pending = 0

    # ------------------------------------------------------------------ text
    def put(self, text: str) -> None:
        self.lines.append("    " * self.ind + text)

    def fresh(self) -> str:
        self.tmp += 1
        return f"n{self.tmp}"

    def count(self) -> None:
        if self.pending:
            self.put(f"issued += {self.pending}")
            self.pending = 0

    # ------------------------------------------------------------------ operands
    def reg_for(self, key: tuple[str, int], fill: tuple[str, str] | None) -> int:
        """A constant register beyond the kernel's (an immediate, a special register)."""
        r = self.consts.get(key)
        if r is None:
            r = self.consts[key] = self.nregs + len(self.consts)
            if fill is not None:
                when, value = fill
                self.extra.append((when, f"R[{r}, :] = {value}" if when != "lanes" else value.format(r=r)))
        return r

    def source(self, op: object) -> int:
        """The register number holding source `op` for every lane (constants preloaded)."""
        if isinstance(op, Imm):
            bits = op.bits & ((1 << op.width) - 1)
            if op.width == 64:  # a pair source: two adjacent constant registers
                r = self.consts.get(("imm64", bits))
                if r is None:
                    r = self.consts[("imm64", bits)] = self.nregs + len(self.consts)
                    self.consts[("imm64-high", bits)] = r + 1
                    self.extra.append(("once", f"R[{r}, :] = {bits & M32}"))
                    self.extra.append(("once", f"R[{r + 1}, :] = {bits >> 32}"))
                return r
            return self.reg_for(("imm", bits), ("once", str(bits)))
        if isinstance(op, SReg):
            return self.sreg(op.id)
        if isinstance(op, Reg):
            if op.sel == 0:
                return op.n
            _, off, width = SUBREGS[op.sel]
            t = self.scratch + self.n_extracted  # each source its own: two may be sub-registers
            self.n_extracted += 1
            self.put(f"extract(R, {t}, {op.n}, {off}, {(1 << width) - 1}, L)")
            return t
        if isinstance(op, (Pair, Pred, Vec)):
            return op.n
        raise TypeError(op)

    def sreg(self, sid: int) -> int:
        s = SR(sid)
        lane = {
            SR.TID_X: f"l % {self.wx}",
            SR.TID_Y: f"(l // {self.wx}) % {self.wy}",
            SR.TID_Z: f"l // {self.wx * self.wy}",
            SR.WID: f"l // {self.W}",
            SR.LID: f"l % {self.W}",
        }
        if s in lane:
            return self.reg_for(("sreg", sid), ("lanes", "for l in range(L):\n            R[{r}, l] = " + lane[s]))
        per_wg = {SR.CTAID_X: "cx", SR.CTAID_Y: "cy", SR.CTAID_Z: "cz"}
        if s in per_wg:
            return self.reg_for(("sreg", sid), ("wg", per_wg[s]))
        once = {
            SR.NTID_X: str(self.wx),
            SR.NTID_Y: str(self.wy),
            SR.NTID_Z: str(self.wz),
            SR.NCTAID_X: "gx",
            SR.NCTAID_Y: "gy",
            SR.NCTAID_Z: "gz",
            SR.NWAVES: str(self.NW),
            SR.WAVE_WIDTH: str(self.W),
        }
        return self.reg_for(("sreg", sid), ("once", once[s]))

    def guard(self, inst: Instruction) -> str:
        g = inst.guard
        return "-1, True" if g is None else f"{g.pred}, {not g.negated}"

    def dest(self, op: object) -> tuple[int, tuple[int, int, int] | None]:
        """(register the row writes, (register, offset, mask) to merge into after) ."""
        if isinstance(op, Reg) and op.sel:
            _, off, width = SUBREGS[op.sel]
            return self.scratch + 4, (op.n, off, (1 << width) - 1)
        return op.n, None  # type: ignore[union-attr]

    def merge(self, inst: Instruction, t: int, sub: tuple[int, int, int] | None) -> None:
        if sub is not None:
            n, off, mask = sub
            self.put(f"insert(R, P, act, {self.guard(inst)}, {n}, {t}, {off}, {mask}, L)")

    # ------------------------------------------------------------------ module
    def module(self) -> str:
        body_start = len(self.lines)
        self.block(0, len(self.k.instructions), None)
        self.count()
        body = self.lines[body_start:]
        self.lines = self.lines[:body_start]
        k = self.k
        nr = self.nregs + len(self.consts)
        npreds = max(k.predicates, 1)
        loc = max(16, (k.local_memory + 15) & ~15)
        depth = self.depth_max + 1
        once = [st for when, st in self.extra if when in ("once", "lanes")]
        per_wg = [st for when, st in self.extra if when == "wg"]
        names = sorted(self.used)
        out = [
            f'"""Generated by wavegpu.emulator.compiled for kernel {k.name!r} (W={self.W}, '
            f'workgroup {self.wx}x{self.wy}x{self.wz}). Do not edit."""',
            "import numpy as np",
            "from numba import njit",
            "from wavegpu.emulator.compiled.control import start, if_open, if_else, close, loop_open, "
            "loop_next, jump, ret, extract, insert, trap",
            *(f"from {OPS_MODULE} import {n}" for n in names),
            "",
            "",
            "@njit(cache=True, nogil=True, error_model='numpy', boundscheck=False)",
            "def run_range(first, last, gx, gy, gz, args, gm8, gm16, gm32, dsize, cm8, cm16, cm32, csize,",
            "              rs, re, own_lo, own_hi, nb, budget, status):",
            f"    W = {self.W}",
            f"    L = {self.L}",
            f"    R = np.zeros(({nr}, L), np.int64)",
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
            *("    " + st for st in once),
            "    for wg in range(first, last):",
            f"        R[:{self.nregs}] = 0",
            "        P[:] = False",
            f"        for i in range(min(args.size, {self.nregs})):",
            "            R[i, :] = args[i]",
            "        lm8[:] = 0",
            "        cx = wg % gx",
            "        cy = (wg // gx) % gy",
            "        cz = wg // (gx * gy)",
            *("        " + st for st in per_wg),
            f"        nact = start(act, alive, {self.T}, L)",
            "        issued = 0",
            *body,
            "        if issued > budget:",
            f"            trap(status, {BUDGET}, wg, 0)",
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
        lp = -1 if loop is None else loop
        pc = start
        while pc < end:
            inst = insts[pc]
            spec = inst.spec
            role = spec.nest
            kind = kind_of(spec)
            self.pending += 1
            if kind is not None:
                self.emit_row(inst, pc, kind)
                pc += 1
            elif role is Nest.OPEN_IF:
                self.emit_if(pc, lp, depth)
                pc = self.nest.match[pc][1] + 1
            elif role is Nest.OPEN_LOOP:
                self.emit_loop(pc, lp, depth)
                pc = self.nest.match[pc][1] + 1
            elif role in (Nest.BREAK, Nest.CONTINUE):
                assert loop is not None
                arr = "B" if role is Nest.BREAK else "C"
                pn = inst.operands[0].n  # type: ignore[union-attr]
                self.put(f"nact = jump(act, P, {arr}, {loop}, {pn}, {self.guard(inst)}, L)")
                pc += 1
            elif role is Nest.RET:
                self.put(f"nact = ret(act, alive, P, {self.guard(inst)}, L)")
                pc += 1
            else:  # barrier, fence, nop: lockstep makes them no-ops
                pc += 1

    def emit_row(self, inst: Instruction, pc: int, kind: str) -> None:
        spec = inst.spec
        fn = fname(spec)
        self.used.add(fn)
        self.n_extracted = 0
        g = self.guard(inst)
        if kind == "value":
            srcs = [self.source(o) for o, s in zip(inst.operands, spec.operands) if s.role is Role.SRC]
            srcs += [0] * (4 - len(srcs))
            d, sub = self.dest(inst.operands[spec.dests[0]])
            self.put(f"{fn}(R, P, act, {g}, {d}, {', '.join(map(str, srcs))}, L, nact == L)")
            self.merge(inst, d, sub)
            return
        if kind == "wave":
            srcs = [self.source(o) for o, s in zip(inst.operands, spec.operands) if s.role is Role.SRC]
            srcs += [0] * (2 - len(srcs))
            d, sub = self.dest(inst.operands[0])
            self.put(f"{fn}(R, P, act, {g}, {d}, {srcs[0]}, {srcs[1]}, W, L, TMP)")
            self.merge(inst, d, sub)
            return
        space = spec.space
        assert space is not None and spec.mem_index is not None
        mem = inst.operands[spec.mem_index]
        assert isinstance(mem, Mem)
        base = -1 if mem.base is None else mem.base
        off = mem.offset & M32
        pre = {"global": "gm", "local": "lm", "const": "cm"}[space]
        size = {"global": "dsize", "local": str(self.k.local_memory), "const": "csize"}[space]
        margs = f"{pre}8, {pre}16, {pre}32, {size}, rs, re, own_lo, own_hi, {pc}, nb"
        sub = None
        if kind == "memory":
            if spec.cls == "load":
                d, sub = self.dest(inst.operands[0])
            else:
                d = self.source(inst.operands[1])
            call = f"{fn}(R, P, act, {g}, {d}, {base}, {off}, L, {margs})"
        else:
            mi = spec.mem_index
            vals = [self.source(o) for o in inst.operands[mi + 1 :]] + [0]
            d = inst.operands[0].n if spec.op is Op.ATOM else -1  # type: ignore[union-attr]
            if spec.op is Op.ATOM:
                d, sub = self.dest(inst.operands[0])
            call = f"{fn}(R, P, act, {g}, {d}, {base}, {off}, {vals[0]}, {vals[1]}, L, {margs})"
        self.put(f"if {call}:")
        self.put(f"    trap(status, {TRAP}, wg, {pc})")
        self.put("    return")
        self.merge(inst, d, sub)

    def emit_if(self, pc: int, lp: int, d: int) -> None:
        inst = self.k.instructions[pc]
        els, end = self.nest.match[pc]
        pn = inst.operands[0].n  # type: ignore[union-attr]
        self.count()
        self.put(f"nact = if_open(act, E, Q, P, {d}, {pn}, L)")
        self.put("if nact > 0:")
        self.ind += 1
        self.put("pass")
        self.block(pc + 1, els if els is not None else end, None if lp < 0 else lp, d + 1)
        self.count()
        self.ind -= 1
        if els is not None:
            self.pending += 1
            self.count()
            self.put(f"nact = if_else(act, E, Q, alive, B, C, {d}, {lp}, L)")
            self.put("if nact > 0:")
            self.ind += 1
            self.put("pass")
            self.block(els + 1, end, None if lp < 0 else lp, d + 1)
            self.count()
            self.ind -= 1
        self.pending += 1
        self.put(f"nact = close(act, E, alive, B, C, {d}, {lp}, L)")

    def emit_loop(self, pc: int, lp: int, d: int) -> None:
        end = self.nest.match[pc][1]
        self.count()
        self.put(f"loop_open(act, E, B, C, {d}, L)")
        self.put("while True:")
        self.ind += 1
        self.block(pc + 1, end, d, d + 1)
        self.pending += 1
        self.count()
        self.put(f"nact = loop_next(act, E, alive, B, C, {d}, L)")
        self.put("if nact == 0:")
        self.put("    break")
        self.put("if issued > budget:")
        self.put(f"    trap(status, {BUDGET}, wg, {pc})")
        self.put("    return")
        self.ind -= 1
        self.put(f"nact = close(act, E, alive, B, C, {d}, {lp}, L)")


def generate(k: Kernel, shape: Shape) -> str:
    """The module source for kernel k launched with `shape` (raises Unsupported)."""
    return Gen(k, shape).module()
