"""Kernel -> Python source for numba: the structured program as nested loops over one
workgroup's lanes, under explicit masks.

The generated `run_range(first, last, ...)` runs workgroups first..last-1 one after the other.
A workgroup's lanes (its waves side by side, padded to whole waves) execute in lockstep, as the
NumPy engine executes a batch (DESIGN section 3). Runs of value instructions, loads and stores
are fused into one loop over lanes with the registers in locals (per memory space any number of
loads or one store, so the order of lanes cannot matter); atomics and wave operations call their
row function (opsgen), in ascending lane order; structured control flow keeps the masks the
NumPy engine keeps (entry, break and continue masks per construct). An innermost loop without
stores, barriers, wave operations, atomics or `ret` runs lane by lane (`Gen.emit_lane_loop`).
A trap or an exhausted instruction budget stores a code in `status` and returns; the launcher
then asks the NumPy engine for the error. docs/emulator.md describes the engine.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from ...codegen import instruction_liveness
from ...isa.instruction import Imm, Instruction, Mem, Pair, Pred, Reg, SReg, Vec
from ...isa.registers import SRegId as SR
from ...isa.structure import Nesting, nesting, operand_registers, successors
from ...isa.types import SUBREGS, Kind, Role
from ...isa.vocabulary import Nest, Op, Unit
from ...wbin.program import Kernel
from .opsgen import fname, rmw
from .rows import EXPR, HELPERS

M32 = 0xFFFFFFFF

TRAP, BUDGET = 1, 2
OPS_MODULE = "_wavegpu_compiled_rows"  # the shared row module (cache.load_rows)
"""status[0] codes: an access outside memory or its buffer, or the instruction budget."""


JIT = "@njit(cache=True, nogil=True, error_model='numpy', boundscheck=False, pipeline_class=KernelCompiler)"
"""The decorator of generated functions (pipeline.KernelCompiler: numba's pipeline without its
SSA pass, about a fifth of a long kernel's compile time)."""
OUTLINE_LINES = 700
"""A kernel whose single-function translation is longer than this many lines is translated as a
driver and one function per lane loop (numba compiles a 2000-line function in about a minute,
the same code in short functions in a fraction of that)."""
SEGMENT_MAX = 48
"""The most instructions one straight-line lane loop runs. numba's SSA pass looks a variable's
definition up block by block, recursively, and runs once over the whole function per local that
is assigned more than once: a long unrolled body (examples/sgemm_blocked: 1,000 instructions, an
`if` per access) made it recurse past Python's limit after minutes (RecursionError). Cut into
lane loops of bounded length (each its own function in an outlined kernel), the depth and the
cost per function are bounded."""
LANE_LOOP_MAX = 4 * SEGMENT_MAX
"""The longest loop body run lane by lane (`Gen.lane_by_lane`): its locals live across the whole
body, so numba's SSA lookups walk all of its blocks (see SEGMENT_MAX)."""
OUTLINE_ARGS = (
    "R", "P", "act", "L", "W", "gm8", "gm16", "gm32", "dsize", "cm8", "cm16", "cm32", "csize", "lm8", "lm16",
    "lm32", "rs", "re", "own_lo", "own_hi", "hint_lo", "hint_hi", "nb", "budget", "status", "wg", "cx", "cy",
    "cz", "gx", "gy", "gz",
)  # fmt: skip
"""What a lane loop may use of the driver's variables, passed to its function when outlined."""


REGISTER_LOCAL = re.compile(r"[rpfxw]_[0-9]+")
"""The names of the per-register locals of generated code: r_<n> (register n's bits), p_<n>
(predicate n), f_<n> (register n as a float32 local) with w_<n> (whether it was written), x_<n>
(a float twin). No name that the generated module imports or defines has this form, so a local
never shadows a helper (`f32`, `r32` and `f64` are helpers; tests/emulator/compiled/
test_compiled_names.py checks every global against `is_local`)."""
OTHER_LOCALS = frozenset((
    "B", "C", "E", "L", "P", "Q", "R", "TMP", "W", "a", "act", "alive", "args", "bad", "budget", "cm16", "cm32",
    "cm8", "csize", "cx", "cy", "cz", "dsize", "first", "gm16", "gm32", "gm8", "gx", "gy", "gz", "hint_hi",
    "hint_lo", "i", "issued", "it", "j", "l", "last", "lm16", "lm32", "lm8", "mx", "nact", "nb", "own_hi", "own_lo",
    "rc", "re", "rs", "shared", "status", "v", "wg",
))  # fmt: skip
"""Every other local or parameter name the generated functions use."""


def is_local(name: str) -> bool:
    """Whether generated code may use `name` for a local variable or parameter."""
    return name in OTHER_LOCALS or REGISTER_LOCAL.fullmatch(name) is not None


class Unsupported(Exception):
    """A kernel the compiled engine does not translate (the row or feature named)."""


@dataclass(frozen=True)
class Shape:
    """What a translation is specialised on (grid and arguments are run-time values)."""

    wave_width: int
    workgroup: tuple[int, int, int]


@functools.lru_cache(maxsize=256)
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
    if spec.key in EXPR or spec.unit in _HANDLED:
        return None
    return "no compiled semantics for this row"


_HANDLED = frozenset(Unit) - {Unit.VALUE, Unit.MMA}  # rows of their own (opsgen) or the driver's


def ordered_reason(k: Kernel) -> str | None:
    """Why kernel k's workgroups must run in order on one thread, or None when they may run on
    all cores: a global atomic whose memory result depends on the order of the operations
    (exchange, compare-and-swap, f32 add), or whose returned old value is read (it would depend
    on which thread came first). The others are single atomic instructions (`opsgen.rmw`), so
    the memory is the reference's whatever the threads' timing (docs/emulator.md, "Parallel workgroups")."""
    live_out: list[int] | None = None
    for pc, inst in enumerate(k.instructions):
        spec = inst.spec
        if spec.op not in (Op.ATOM, Op.RED) or spec.space != "global":
            continue
        if rmw(spec) is None:
            return f"instruction {pc} ({spec.key}) gives a result that depends on the order of the workgroups"
        if spec.op is Op.ATOM:
            if live_out is None:
                live_out = _liveness(k, nesting(k.instructions), max(k.registers, 1))[1]
            dst = inst.operands[spec.dests[0]]
            if any(live_out[pc] >> r & 1 for r in operand_registers(dst)):
                return f"instruction {pc} ({spec.key}) returns old values that the kernel reads"
    return None


class Gen:
    """Emits the driver of one kernel and shape.

    Runs of value instructions and loads and stores are fused into one loop over the lanes with
    the registers in local variables (`emit_segment`); wave operations and atomics call their row
    function; structured control flow keeps the NumPy engine's masks. An innermost loop that
    neither stores, synchronises nor talks across lanes runs lane by lane (`emit_lane_loop`):
    each lane goes round on its own with its registers in machine registers, which gives the
    same memory because nothing inside writes memory or reads another lane."""

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
        self.nregs = max(k.registers, 1)
        self.npreds = max(k.predicates, 1)
        self.extra: list[tuple[str, str]] = []  # (when: "once"|"wg"|"lanes", statement) filling constant registers
        self.consts: dict[tuple[str, int], int] = {}
        self.used: set[str] = set()
        self.scratch = self.reg_for(("scratch", 0), None)  # sub-register operands of row calls
        for i in range(1, 5):
            self.reg_for(("scratch", i), None)
        self.n_extracted = 0
        self.pending = 0
        self.live_in0, self.live_out = _liveness(k, self.nest, self.nregs)
        self.floats: frozenset[int] = frozenset()  # float32 locals of the lane loop being emitted
        # registers whose value was just written by a float32 row, that value also held (NaN
        # payload unsettled) in the float local x<n>: a later float32 reader in the same
        # straight-line run takes x<n>, and LLVM drops the canonical bits when nothing else reads them
        self.twins: set[int] = set()
        self.outline = False  # lane loops as functions of their own (a long kernel: generate())
        self.funcs: list[list[str]] = []
        self.merge_into = -1  # len(self.lines) right after the call of a segment's function

    # ------------------------------------------------------------------ text
    def put(self, text: str) -> None:
        self.lines.append("    " * self.ind + text)

    def count(self) -> None:
        if self.pending:
            self.put(f"issued += {self.pending}")
            self.pending = 0

    def trap_here(self, code: int, pc: int) -> None:
        for x in _trap(code, pc):
            self.put(x)

    # ------------------------------------------------------------------ operands of row calls
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
        """The register number holding source `op` for every lane, for a row call (constants
        preloaded, a sub-register extracted into a scratch register)."""
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
            return self.reg_for(("sreg", op.id), self.sreg_fill(op.id))
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

    def sreg_fill(self, sid: int) -> tuple[str, str]:
        value, when = self.sreg_value(sid)
        if when == "lanes":
            return "lanes", "for l in range(L):\n            R[{r}, l] = " + value
        return when, value

    def sreg_value(self, sid: int) -> tuple[str, str]:
        """(expression, when it changes: "lanes" over lane `l`, "wg" per workgroup, "once")."""
        s = SR(sid)
        lane = {
            SR.TID_X: f"(l % {self.wx})",
            SR.TID_Y: f"((l // {self.wx}) % {self.wy})",
            SR.TID_Z: f"(l // {self.wx * self.wy})",
            SR.WID: f"(l // {self.W})",
            SR.LID: f"(l % {self.W})",
        }
        if s in lane:
            return lane[s], "lanes"
        per_wg = {SR.CTAID_X: "cx", SR.CTAID_Y: "cy", SR.CTAID_Z: "cz"}
        if s in per_wg:
            return per_wg[s], "wg"
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
        return once[s], "once"

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

    # ------------------------------------------------------------------ operands of inline code
    def value(self, op: object, kind: Kind) -> str:
        """Source `op` as a scalar expression over the lane's locals (lane `l`)."""
        if isinstance(op, Imm):
            bits = op.bits & ((1 << op.width) - 1)
            if kind is Kind.PRED:
                return "True" if bits else "False"
            if op.width == 64 and bits >= 1 << 63:
                bits -= 1 << 64  # a pair holds the 64-bit pattern as an int64
            return str(bits)
        if isinstance(op, SReg):
            return self.sreg_value(op.id)[0]
        if isinstance(op, Reg):
            if op.sel == 0:
                return f"r_{op.n}"
            _, off, width = SUBREGS[op.sel]
            return f"((r_{op.n} >> {off}) & {(1 << width) - 1})"
        if isinstance(op, Pair):
            return f"(r_{op.n} | (r_{op.n + 1} << 32))"
        if isinstance(op, Pred):
            return f"p_{op.n}"
        raise TypeError(op)

    def assign(self, op: object, kind: Kind, expr: str, out: list[str]) -> None:
        """Statements writing `expr` (raw bits, or a bool for a predicate) to destination op."""
        if kind is Kind.PRED:
            out.append(f"p_{op.n} = bool({expr})")  # type: ignore[union-attr]
        elif kind is Kind.PAIR:
            n = op.n  # type: ignore[union-attr]
            out += [f"v = np.int64({expr})", f"r_{n} = v & {M32}", f"r_{n + 1} = (v >> 32) & {M32}"]
        elif isinstance(op, Reg) and op.sel:
            _, off, width = SUBREGS[op.sel]
            mask = (1 << width) - 1
            keep = M32 & ~(mask << off)
            out.append(f"r_{op.n} = (r_{op.n} & {keep}) | ((np.int64({expr}) & {mask}) << {off})")
        else:
            out.append(f"r_{op.n} = np.int64({expr})")  # type: ignore[union-attr]

    def inline(self, pc: int, out: list[str]) -> None:
        """The statements of one value, load or store instruction for lane `l` (guard included)."""
        inst = self.k.instructions[pc]
        spec = inst.spec
        body: list[str] = []
        if spec.op in (Op.LD, Op.ST):
            if spec.cls == "load":
                self.twins.difference_update(operand_registers(inst.operands[0]))
            self.inline_memory(pc, body)
        else:
            expr = self.row_expr(inst)
            d = spec.dests[0]
            dst = inst.operands[d]
            inner = _c32_inner(expr)
            self.twins.difference_update(operand_registers(dst))
            if isinstance(dst, Reg) and dst.n in self.floats:
                # NaN payloads may differ inside the loop (every reader is a float row, whose
                # result does not depend on them); the store after the loop makes them canonical
                assert inner is not None, "float_registers admits only c32 rows as writers"
                body += [f"f_{dst.n} = {inner}", f"w_{dst.n} = True"]
            elif inner is not None and isinstance(dst, Reg) and dst.sel == 0 and inst.guard is None:
                body += [f"x_{dst.n} = {inner}", f"r_{dst.n} = c32(x_{dst.n})"]
                self.twins.add(dst.n)
            else:
                self.assign(dst, spec.operands[d].kind, expr, body)
        g = inst.guard
        if g is None:
            out += body
        else:
            out.append(f"if {'not ' if g.negated else ''}p_{g.pred}:")
            out += ["    " + x for x in body]

    def row_expr(self, inst: Instruction) -> str:
        """The row's expression over this lane's values: an operand the row reads as a float32
        comes from a float-typed register's float local when it has one (`self.floats`)."""
        spec = inst.spec
        text = EXPR.get(spec.key, "{0}")
        srcs = [(o, s) for o, s in zip(inst.operands, spec.operands) if s.role is Role.SRC]
        fl = FLOAT_SOURCES.get(spec.key, frozenset())
        for i, (o, s) in enumerate(srcs):
            if i in fl:
                if isinstance(o, Reg) and o.sel == 0 and o.n in self.floats:
                    fv = f"f_{o.n}"
                elif isinstance(o, Reg) and o.sel == 0 and o.n in self.twins:
                    fv = f"x_{o.n}"
                else:
                    fv = f"f32({self.value(o, s.kind)})"
                text = text.replace(f"f32({{{i}}})", fv)
        for i, (o, s) in enumerate(srcs):
            if i not in fl:
                text = text.replace(f"{{{i}}}", self.value(o, s.kind))
        return text

    def inline_memory(self, pc: int, out: list[str]) -> None:
        inst = self.k.instructions[pc]
        spec = inst.spec
        space, width = spec.space, spec.width
        assert space is not None and spec.mem_index is not None
        mem = inst.operands[spec.mem_index]
        assert isinstance(mem, Mem)
        off = mem.offset & M32
        out.append(f"a = {off}" if mem.base is None else f"a = (r_{mem.base} + {off}) & {M32}")
        pre = {"global": "gm", "local": "lm", "const": "cm"}[space]
        size = {"global": "dsize", "local": str(self.k.local_memory), "const": "csize"}[space]
        # `|` of bools, not `or`: no branch per term (numba makes a block of each, see SEGMENT_MAX)
        cond = f"(a + {width} > {size})"
        if width > 1:
            cond += f" | ((a & {width - 1}) != 0)"
        if space == "global":
            acc = self.k.accesses
            if acc is not None and pc < len(acc) and acc[pc] is not None:
                # the compiler named the array: its region (hint_lo/hint_hi), inline; an access
                # outside it stops the launch, and the NumPy engine decides (another array may
                # allow it when checking is not exact)
                cond += f" | ((nb >= 0) & ((a < hint_lo[{pc}]) | (a + {width} > hint_hi[{pc}])))"
            else:  # no array named: any will do, the search written out here (a call in a
                # loop makes LLVM keep the loop's values on the stack)
                out += [
                    f"bad = {cond}",
                    "if not bad and nb >= 0:",
                    "    bad = True",
                    "    for j in range(nb):",
                    f"        if rs[j] <= a and a + {width} <= re[j]:",
                    "            bad = False",
                    "            break",
                ]
                cond = "bad"
        out += [f"if {cond}:", *_trap(TRAP, pc)]
        if spec.cls == "load":
            d = inst.operands[0]
            if width == 1:
                v = f"np.int64({pre}8[a])"
                if spec.signed:
                    v = f"(({v} ^ 0x80) - 0x80) & {M32}"
            elif width == 2:
                v = f"np.int64({pre}16[a >> 1])"
                if spec.signed:
                    v = f"(({v} ^ 0x8000) - 0x8000) & {M32}"
            else:
                v = f"np.int64({pre}32[a >> 2])"
            if isinstance(d, (Pair, Vec)):  # (a load never writes a float local: float_registers)
                out += [f"r_{d.n + i} = np.int64({pre}32[(a >> 2) + {i}])" for i in range(width // 4)]
            else:
                self.assign(d, Kind.REG, v, out)
        else:
            s = inst.operands[1]
            if isinstance(s, (Pair, Vec)):
                out += [f"{pre}32[(a >> 2) + {i}] = r_{s.n + i}" for i in range(width // 4)]
            else:
                v = self.value(s, Kind.REG)
                if width == 1:
                    out.append(f"{pre}8[a] = {v} & 0xFF")
                elif width == 2:
                    out.append(f"{pre}16[a >> 1] = {v} & 0xFFFF")
                else:
                    out.append(f"{pre}32[a >> 2] = {v}")

    def lane_body(self, pcs: list[int], body: list[str], live: int) -> None:
        """Wrap per-lane statements of instructions `pcs`: load the registers they touch from R
        and P, run them, store back what they write and is live afterwards (bitset `live`)."""
        regs, preds, wregs, wpreds = _touched([self.k.instructions[pc] for pc in pcs])
        fl = self.floats
        head: list[str] = []
        first = _first_mentions(body)
        for n in sorted(regs):
            if n in fl:
                head += [f"f_{n} = f32(R[{n}, l])", f"w_{n} = False"]
            elif not _plain_write(first.get(f"r_{n}"), f"r_{n}"):  # else written before any read
                head.append(f"r_{n} = R[{n}, l]")
        head += [f"p_{n} = P[{n}, l]" for n in sorted(preds)]
        tail = [
            f"R[{n}, l] = c32(f_{n}) if w_{n} else bits_of_f32(f_{n})" if n in fl else f"R[{n}, l] = r_{n}"
            for n in sorted(wregs)
            if live >> n & 1
        ]
        tail += [f"P[{n}, l] = p_{n}" for n in sorted(wpreds) if live >> (self.nregs + n) & 1]
        body[:0] = head
        body += tail

    # ------------------------------------------------------------------ module
    def module(self) -> str:
        body_start = len(self.lines)
        self.block(0, len(self.k.instructions), None)
        self.count()
        body = self.lines[body_start:]
        self.lines = self.lines[:body_start]
        k = self.k
        nr = self.nregs + len(self.consts)
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
            f"from wavegpu.emulator.compiled.scalar import cf32, {', '.join(HELPERS)}",
            "from wavegpu.emulator.compiled.intrinsics import bits_of_f32, fma32",
            "from wavegpu.emulator.compiled.pipeline import KernelCompiler",
            *(f"from {OPS_MODULE} import {n}" for n in names),
            "",
            *(line for f in self.funcs for line in ["", *f, ""]),
            "",
            JIT,
            "def run_range(first, last, gx, gy, gz, args, gm8, gm16, gm32, dsize, cm8, cm16, cm32, csize,",
            "              rs, re, own_lo, own_hi, hint_lo, hint_hi, nb, budget, shared, status):",
            f"    W = {self.W}",
            f"    L = {self.L}",
            f"    R = np.zeros(({nr}, L), np.int64)",
            f"    P = np.zeros(({self.npreds}, L), np.bool_)",
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
            *(f"        R[{n}, :] = 0" for n in range(self.nregs) if self.live_in0 >> n & 1),
            *(f"        P[{n}, :] = False" for n in range(self.npreds) if self.live_in0 >> (self.nregs + n) & 1),
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
            unit = spec.unit
            if unit in (Unit.VALUE, Unit.MEMORY):
                last = self.segment_end(pc, end)
                self.emit_segment(pc, last)
                pc = last
            elif unit in (Unit.ATOMIC, Unit.WAVE):
                self.pending += 1
                self.emit_row(inst, pc, unit)
                pc += 1
            elif role is Nest.OPEN_IF:
                self.pending += 1
                self.emit_if(pc, lp, depth)
                pc = self.nest.match[pc][1] + 1
            elif role is Nest.OPEN_LOOP:
                self.pending += 1
                if self.lane_by_lane(pc):
                    self.emit_lane_loop(pc)
                else:
                    self.emit_loop(pc, lp, depth)
                pc = self.nest.match[pc][1] + 1
            elif role in (Nest.BREAK, Nest.CONTINUE):
                self.pending += 1
                assert loop is not None
                arr = "B" if role is Nest.BREAK else "C"
                pn = inst.operands[0].n  # type: ignore[union-attr]
                self.put(f"nact = jump(act, P, {arr}, {loop}, {pn}, {self.guard(inst)}, L)")
                pc += 1
            elif role is Nest.RET:
                self.pending += 1
                self.put(f"nact = ret(act, alive, P, {self.guard(inst)}, L)")
                pc += 1
            else:  # barrier, fence, nop: lockstep makes them no-ops
                self.pending += 1
                pc += 1

    def segment_end(self, start: int, end: int) -> int:
        """One past the last instruction of the lane loop starting at `start`: value rows, loads
        and stores, as long as running them lane after lane leaves memory as running each for
        all lanes would: per memory space, any number of loads, or a single store (two accesses
        of one space with a store among them could see another lane's store in the other order),
        and at most SEGMENT_MAX of them (a shorter lane loop is always as exact)."""
        insts = self.k.instructions
        loads: set[str] = set()
        stores: set[str] = set()
        pc = start
        while pc < end and pc - start < SEGMENT_MAX:
            spec = insts[pc].spec
            if spec.op in (Op.LD, Op.ST):
                space = spec.space or ""
                if space in stores or (spec.op is Op.ST and space in loads):
                    break
                (loads if spec.op is Op.LD else stores).add(space)
            elif spec.unit is not Unit.VALUE:
                break
            pc += 1
        return pc

    def emit_segment(self, start: int, end: int) -> None:
        pcs = list(range(start, end))
        body: list[str] = []
        self.twins.clear()
        for pc in pcs:
            self.inline(pc, body)
        self.twins.clear()
        self.lane_body(pcs, body, self.live_out[end - 1])
        self.pending += len(pcs)
        self.lanes(["for l in range(L):", "    if act[l]:", *("        " + x for x in body)], False)

    def lanes(self, loop: list[str], lane_by_lane: bool) -> None:
        """Emit a loop over the lanes: inline, or (`self.outline`, a long kernel) as a function of
        its own that the driver calls, so that numba, whose compile time grows faster than the
        length of a function, compiles many short functions (a call per workgroup, not per lane:
        nothing is called inside a lane loop). A lane-by-lane loop leaves its longest lane's trip
        count in `mx`; a trap returns from the driver (status written)."""
        if not self.outline:
            if lane_by_lane:
                self.put("mx = 0")
            for x in loop:
                self.put(x)
            return
        body = ["    " + (x.replace("return", "return -1") if x.strip() == "return" else x) for x in loop]
        if not lane_by_lane and self.merge_into == len(self.lines) and len(self.funcs[-1]) + len(body) < 200:
            # straight after the previous lane loop's call: one function runs both, in order
            body = self.funcs[-1][2:-1] + body
            self.funcs.pop()
            del self.lines[-3:]
        name = f"lanes_{len(self.funcs)}"
        args = [a for a in OUTLINE_ARGS if re.search(rf"\b{a}\b", "\n".join(body))]
        self.funcs.append(
            [
                JIT,
                f"def {name}({', '.join(args)}):",
                *(["    mx = 0"] if lane_by_lane else []),
                *body,
                "    return mx" if lane_by_lane else "    return 0",
            ]
        )
        res = "mx" if lane_by_lane else "rc"
        self.put(f"{res} = {name}({', '.join(args)})")
        self.put(f"if {res} < 0:")
        self.put("    return")
        self.merge_into = -1 if lane_by_lane else len(self.lines)

    def emit_row(self, inst: Instruction, pc: int, unit: Unit) -> None:
        spec = inst.spec
        fn = fname(spec)
        self.used.add(fn)
        self.n_extracted = 0
        g = self.guard(inst)
        if unit is Unit.WAVE:
            srcs = [self.source(o) for o, s in zip(inst.operands, spec.operands) if s.role is Role.SRC]
            srcs += [0] * (2 - len(srcs))
            d, sub = self.dest(inst.operands[0])
            self.put(f"{fn}(R, P, act, {g}, {d}, {srcs[0]}, {srcs[1]}, W, L, TMP)")
            self.merge(inst, d, sub)
            return
        assert unit is Unit.ATOMIC
        space = spec.space
        assert space is not None and spec.mem_index is not None
        mem = inst.operands[spec.mem_index]
        assert isinstance(mem, Mem)
        base = -1 if mem.base is None else mem.base
        off = mem.offset & M32
        pre = {"global": "gm", "local": "lm", "const": "cm"}[space]
        size = {"global": "dsize", "local": str(self.k.local_memory), "const": "csize"}[space]
        margs = f"{pre}8, {pre}16, {pre}32, {size}, rs, re, own_lo, own_hi, {pc}, nb"
        mi = spec.mem_index
        vals = [self.source(o) for o in inst.operands[mi + 1 :]] + [0]
        d, sub = (-1, None)
        if spec.op is Op.ATOM:
            d, sub = self.dest(inst.operands[0])
        self.put(f"if {fn}(R, P, act, {g}, {d}, {base}, {off}, {vals[0]}, {vals[1]}, L, shared, {margs}):")
        self.trap_here(TRAP, pc)
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
        self.trap_here(BUDGET, pc)
        self.ind -= 1
        self.put(f"nact = close(act, E, alive, B, C, {d}, {lp}, L)")

    # ------------------------------------------------------------------ loops lane by lane
    def lane_by_lane(self, pc: int) -> bool:
        """Whether loop `pc` can run each lane round on its own: an innermost loop of value
        rows, loads, ifs, breaks and continues (no store, atomic, wave operation, barrier or ret:
        nothing that writes memory, reads another lane, or depends on the lanes' order), of at
        most LANE_LOOP_MAX instructions (its body is one function numba cannot cut: a longer one
        runs in lockstep, cut into lane loops of SEGMENT_MAX)."""
        end = self.nest.match[pc][1]
        if end - pc - 1 > LANE_LOOP_MAX:
            return False
        for inst in self.k.instructions[pc + 1 : end]:
            spec = inst.spec
            if spec.op is Op.LD or spec.unit is Unit.VALUE:
                continue
            if spec.nest in (Nest.OPEN_IF, Nest.ELSE, Nest.CLOSE, Nest.BREAK, Nest.CONTINUE):
                continue
            if spec.op in (Op.NOP, Op.FENCE):
                continue
            return False
        return True

    def emit_lane_loop(self, pc: int) -> None:
        """Loop `pc` lane by lane. The lanes' issue count is bounded, not counted: the loop goes
        round at most as often as its longest-running lane (`mx`), each time issuing at most its
        S instructions, so `issued` grows by at most (mx + 1) * (S + 1); above the budget the
        launch stops and the NumPy engine, which counts exactly, runs it (docs/emulator.md)."""
        end = self.nest.match[pc][1]
        self.count()
        body: list[str] = ["it = 0", "while True:", "    it += 1", "    if it > budget:"]
        body += ["    " + x for x in _trap(BUDGET, pc)]
        inner: list[str] = []
        self.floats = self.float_registers(pc + 1, end)
        self.lane_block(pc + 1, end, inner)
        body += ["    " + x for x in inner]
        body += ["if it > mx:", "    mx = it"]
        self.lane_body(list(range(pc + 1, end)), body, self.live_out[end])
        self.floats = frozenset()
        self.lanes(["for l in range(L):", "    if act[l]:", *("        " + x for x in body)], True)
        self.put(f"issued += (mx + 1) * {end - pc + 1}")
        self.put("if issued > budget:")
        self.trap_here(BUDGET, pc)

    def float_registers(self, start: int, end: int) -> frozenset[int]:
        """Registers of instructions start..end-1 kept as float32 locals: written by a row whose
        result is a float32 and read only as float32 operands (a loop's accumulators), so that
        LLVM keeps them in float registers across iterations instead of converting bits."""
        written: set[int] = set()
        other: set[int] = set()
        for inst in self.k.instructions[start:end]:
            spec = inst.spec
            fl = FLOAT_SOURCES.get(spec.key, frozenset()) if spec.unit is Unit.VALUE else frozenset()
            i = 0
            for o, sp in zip(inst.operands, spec.operands):
                if sp.role is Role.SRC:
                    if not (isinstance(o, Reg) and o.sel == 0 and i in fl):
                        other.update(operand_registers(o))
                    i += 1
                elif isinstance(o, Reg) and o.sel == 0 and spec.key in EXPR and _c32_inner(EXPR[spec.key]):
                    written.add(o.n)
                else:
                    other.update(operand_registers(o))
        return frozenset(written - other)

    def lane_block(self, start: int, end: int, out: list[str]) -> None:
        insts = self.k.instructions
        n0 = len(out)
        pc = start
        self.twins.clear()  # a float twin lives within one straight-line run
        while pc < end:
            inst = insts[pc]
            role = inst.spec.nest
            if role is Nest.OPEN_IF:
                els, close = self.nest.match[pc]
                out.append(f"if p_{inst.operands[0].n}:")  # type: ignore[union-attr]
                then: list[str] = []
                self.lane_block(pc + 1, els if els is not None else close, then)
                out += ["    " + x for x in then]
                if els is not None:
                    other: list[str] = []
                    self.lane_block(els + 1, close, other)
                    out.append("else:")
                    out += ["    " + x for x in other]
                self.twins.clear()
                pc = close + 1
            elif role in (Nest.BREAK, Nest.CONTINUE):
                cond = f"p_{inst.operands[0].n}"  # type: ignore[union-attr]
                g = inst.guard
                if g is not None:
                    cond = f"({'not ' if g.negated else ''}p_{g.pred}) and {cond}"
                out += [f"if {cond}:", "    break" if role is Nest.BREAK else "    continue"]
                pc += 1
            elif inst.spec.op in (Op.NOP, Op.FENCE):
                pc += 1
            else:
                self.inline(pc, out)
                pc += 1
        if len(out) == n0:
            out.append("pass")


_LOCAL_NAME = re.compile(rf"\b{REGISTER_LOCAL.pattern}\b")


def _first_mentions(body: list[str]) -> dict[str, str]:
    """The first line of `body` that names each per-register local."""
    first: dict[str, str] = {}
    for line in body:
        for name in _LOCAL_NAME.findall(line):
            first.setdefault(name, line)
    return first


def _plain_write(line: str | None, name: str) -> bool:
    """Whether `line` (the first to name local `name`) assigns it unconditionally (no indent: not
    under a guard or inside a loop) without reading it: its value before is dead."""
    if line is None or not line.startswith(name + " = "):
        return False
    return re.search(rf"\b{name}\b", line[len(name) + 3 :]) is None


def _c32_inner(expr: str) -> str | None:
    """The float32 expression x of a row expression `c32(x)` (a float32 result), else None."""
    if not (expr.startswith("c32(") and expr.endswith(")")):
        return None
    inner = expr[4:-1]
    depth = 0
    for ch in inner:  # the parentheses must match inside: c32(a) + c32(b) is not one call
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth < 0:
            return None
    return inner


def _float_sources(expr: str) -> frozenset[int]:
    """The operands an expression reads only as float32 (`f32({i})` each time it names them)."""
    out = set()
    for i in range(4):
        n = expr.count(f"{{{i}}}")
        if n and n == expr.count(f"f32({{{i}}})"):
            out.add(i)
    return frozenset(out)


FLOAT_SOURCES = {key: _float_sources(e) for key, e in EXPR.items()}


def _trap(code: int, pc: int) -> list[str]:
    """Stop the launch: status (code, workgroup, pc), written inline (no call in a hot loop)."""
    return [f"    status[0] = {code}", "    status[1] = wg", f"    status[2] = {pc}", "    return"]


def _touched(insts: list[Instruction]) -> tuple[set[int], set[int], set[int], set[int]]:
    """(registers, predicates) read or written, then those written, by the instructions."""
    regs: set[int] = set()
    preds: set[int] = set()
    wregs: set[int] = set()
    wpreds: set[int] = set()
    for inst in insts:
        if inst.guard is not None:
            preds.add(inst.guard.pred)
        for o, s in zip(inst.operands, inst.spec.operands):
            w = s.role is not Role.SRC and not isinstance(o, Mem)
            if isinstance(o, Pred):
                preds.add(o.n)
                if w:
                    wpreds.add(o.n)
                continue
            rs = operand_registers(o)
            regs.update(rs)
            if w:
                wregs.update(rs)
    return regs, preds, wregs, wpreds


def _liveness(k: Kernel, nest: Nesting, nregs: int) -> tuple[int, list[int]]:
    """(what the kernel may read before writing it, and per instruction what some later
    instruction may read before writing it): registers as bits 0.., predicates as bits nregs..
    The first is what a workgroup must start with zeroed; the second, what a lane loop must
    store back. A guarded or partial write keeps the old value, so it is a read too."""
    defs: list[int] = []
    uses: list[int] = []
    for inst in k.instructions:
        d = u = 0
        if inst.guard is not None:
            u |= 1 << (nregs + inst.guard.pred)
        for o, s in zip(inst.operands, inst.spec.operands):
            bits = 0
            if isinstance(o, Pred):
                bits = 1 << (nregs + o.n)
            else:
                for r in operand_registers(o):
                    bits |= 1 << r
            if s.role is Role.SRC or isinstance(o, Mem) or (isinstance(o, Reg) and o.sel):
                u |= bits
            else:
                d |= bits
        if inst.guard is not None:
            d = 0
        defs.append(d)
        uses.append(u)
    if not k.instructions:
        return 0, []
    live_in, live_out = instruction_liveness(successors(k.instructions, nest), defs, uses)
    # a shuffle or broadcast reads other lanes' registers, including lanes that left by paths
    # where the register is dead: what it reads is kept everywhere, as the NumPy engine keeps it
    shared = 0
    for inst, u in zip(k.instructions, uses):
        if inst.spec.op in (Op.SHUFFLE, Op.BROADCAST):
            shared |= u
    return live_in[0] | shared, [x | shared for x in live_out]


def generate(k: Kernel, shape: Shape) -> str:
    """The module source for kernel k launched with `shape` (raises Unsupported): one function,
    or for a long kernel a driver calling a function per lane loop (Gen.lanes)."""
    src = Gen(k, shape).module()
    if src.count("\n") <= OUTLINE_LINES:
        return src
    g = Gen(k, shape)
    g.outline = True
    return g.module()
