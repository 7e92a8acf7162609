"""A deliberately simple scalar reference interpreter for differential tests.

One thread at a time, plain Python integers and floats, with its own semantics written from
DESIGN section 3 (it shares nothing with wavegpu.isa.semantics or the emulator). Like the
emulator, every thread of the grid steps through the structured program together (lockstep),
so atomics and stores apply in ascending global thread order; wave operations see the active
threads of each wave.
"""

from __future__ import annotations

import math
import struct
from fractions import Fraction

import numpy as np

from wavegpu.isa.instruction import Imm, Instruction, Mem, Pair, Pred, Reg, SReg, Vec
from wavegpu.isa.types import SUBREGS
from wavegpu.wbin.program import Kernel

M32 = 0xFFFFFFFF


class RefTrap(Exception):
    pass


# ---- float helpers ----------------------------------------------------------------------------
def f32(b: int) -> float:
    return struct.unpack("<f", struct.pack("<I", b & M32))[0]


def f64(b: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", b))[0]


def bits64(x: float) -> int:
    if math.isnan(x):
        return 0x7FFFFFFFFFFFFFFF
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def round_fraction(x: Fraction, mant: int, emin: int, emax: int) -> float:
    """Round an exact rational to the nearest (ties to even) binary float with `mant` bits of
    precision (implicit bit included), minimum normal exponent emin, maximum exponent emax."""
    if x == 0:
        return 0.0
    sign = -1.0 if x < 0 else 1.0
    a = abs(x)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    e = max(e, emin)
    scale = Fraction(2) ** (mant - 1 - e)
    q = a * scale
    n = q.numerator // q.denominator
    rem = q - n
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and n % 2 == 1):
        n += 1
    val = Fraction(n) / scale
    if val >= Fraction(2) ** (emax + 1):
        return sign * math.inf
    return sign * float(val)


def to_f32(x: float) -> int:
    """float64 -> binary32 bits, round to nearest even (correct for single-rounded inputs)."""
    if math.isnan(x):
        return 0x7FFFFFFF
    with np.errstate(over="ignore"):
        return struct.unpack("<I", np.float32(x).tobytes())[0]


def frac_to_f32(x: Fraction) -> int:
    return to_f32(round_fraction(x, 24, -126, 127))


def f16v(h: int) -> float:
    return float(np.frombuffer(struct.pack("<H", h & 0xFFFF), dtype=np.float16)[0])


def to_f16(x: float) -> int:
    if x == 0:
        return 0x8000 if math.copysign(1.0, x) < 0 else 0
    if math.isnan(x):
        return 0x7FFF
    r = round_fraction(Fraction(x), 11, -14, 15) if math.isfinite(x) else x
    return struct.unpack("<H", np.float16(r).tobytes())[0]


def frac_to_f16(x: Fraction) -> int:
    return struct.unpack("<H", np.float16(round_fraction(x, 11, -14, 15)).tobytes())[0]


def bf16v(h: int) -> float:
    return f32((h & 0xFFFF) << 16)


def to_bf16(x: float) -> int:
    if x == 0:
        return 0x8000 if math.copysign(1.0, x) < 0 else 0
    if math.isnan(x):
        return 0x7FFF
    if math.isinf(x):
        return to_f32(x) >> 16
    return to_f32(round_fraction(Fraction(x), 8, -126, 127)) >> 16


def frac_to_bf16(x: Fraction) -> int:
    return to_f32(round_fraction(x, 8, -126, 127)) >> 16


def sx(v: int, bits: int = 32) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def fmin(a: float, b: float) -> float:
    if math.isnan(a):
        return b
    if math.isnan(b):
        return a
    if a == 0 and b == 0:
        return -0.0 if (math.copysign(1, a) < 0 or math.copysign(1, b) < 0) else 0.0
    return min(a, b)


def fmax(a: float, b: float) -> float:
    if math.isnan(a):
        return b
    if math.isnan(b):
        return a
    if a == 0 and b == 0:
        return -0.0 if (math.copysign(1, a) < 0 and math.copysign(1, b) < 0) else 0.0
    return max(a, b)


def fma_exact(a: float, b: float, c: float) -> Fraction | float:
    """The exact a*b+c, or an IEEE special value (nan, inf, or a signed zero)."""
    if not (math.isfinite(a) and math.isfinite(b) and math.isfinite(c)):
        return a * b + c if not (math.isinf(c) and math.isfinite(a * b)) else c
    ex = Fraction(a) * Fraction(b) + Fraction(c)
    if ex == 0:
        p = a * b
        return p + c  # signed zero by IEEE rules
    return ex


def cvt_int(x: float, mode: str, signed: bool) -> int:
    if math.isnan(x):
        return 0
    if math.isinf(x):
        v = x
    else:
        v = {
            "": math.trunc,
            "rzi": math.trunc,
            "rni": lambda t: round(t),
            "rmi": math.floor,
            "rpi": math.ceil,
        }[mode](x)
    lo, hi = (-(2**31), 2**31 - 1) if signed else (0, 2**32 - 1)
    v = lo if v < lo else hi if v > hi else int(v)
    return v & M32


def fround(x: float, mode: str) -> float:
    if not math.isfinite(x):
        return x
    r = {
        "rni": lambda t: float(round(t)),
        "rzi": float.__trunc__,
        "rmi": math.floor,
        "rpi": math.ceil,
    }[mode](x)
    r = float(r)
    return math.copysign(r, x) if r == 0 else r


# ---- scalar ALU semantics on raw bits -----------------------------------------------------------
def alu(name: str, a: list[int]) -> int | bool:
    parts = name.split(".")
    op = parts[0]
    if name in ("mov.b32", "mov.b64", "mov.pred"):
        return a[0]
    if name in ("and.pred", "or.pred", "xor.pred"):
        return {"and": a[0] and a[1], "or": a[0] or a[1], "xor": a[0] != a[1]}[op]
    if name == "not.pred":
        return not a[0]
    if (
        name.endswith((".s32", ".u32"))
        and op in ("add", "sub", "mul", "mad", "div", "rem", "neg", "abs", "min", "max", "clamp")
        and "f" not in parts[-1]
    ):
        s = parts[-1] == "s32"
        x = [sx(v) if s else v & M32 for v in a]
        if op == "add":
            return (x[0] + x[1]) & M32
        if op == "sub":
            return (x[0] - x[1]) & M32
        if name.startswith("mul.lo") or name.startswith("mad.lo"):
            r = x[0] * x[1] + (x[2] if op == "mad" else 0)
            return r & M32
        if name.startswith("mul.hi"):
            return ((x[0] * x[1]) >> 32) & M32
        if op == "div":
            if x[1] == 0:
                return M32
            q = abs(x[0]) // abs(x[1]) * (1 if (x[0] >= 0) == (x[1] >= 0) else -1)
            return q & M32
        if op == "rem":
            if x[1] == 0:
                return x[0] & M32
            q = abs(x[0]) // abs(x[1]) * (1 if (x[0] >= 0) == (x[1] >= 0) else -1)
            return (x[0] - q * x[1]) & M32
        if op == "neg":
            return (-x[0]) & M32
        if op == "abs":
            return abs(x[0]) & M32
        if op == "min":
            return min(x[0], x[1]) & M32
        if op == "max":
            return max(x[0], x[1]) & M32
        if op == "clamp":
            return min(max(x[0], x[1]), x[2]) & M32
    if name == "mul.wide.s32":
        return (sx(a[0]) * sx(a[1])) & ((1 << 64) - 1)
    if name == "mul.wide.u32":
        return a[0] * a[1]
    if op == "dp4a":
        s = name == "dp4a.s32.s32"
        acc = sx(a[2]) if s else a[2]
        for i in range(4):
            x, y = (a[0] >> (8 * i)) & 0xFF, (a[1] >> (8 * i)) & 0xFF
            if s:
                x, y = sx(x, 8), sx(y, 8)
            acc += x * y
        return acc & M32
    if name in ("and.b32", "or.b32", "xor.b32"):
        return {"and": a[0] & a[1], "or": a[0] | a[1], "xor": a[0] ^ a[1]}[op]
    if name == "not.b32":
        return ~a[0] & M32
    if name == "shl.b32":
        return 0 if a[1] > 31 else (a[0] << a[1]) & M32
    if name == "shr.u32":
        return 0 if a[1] > 31 else a[0] >> a[1]
    if name == "shr.s32":
        return (sx(a[0]) >> min(a[1], 31)) & M32
    if name == "popc.b32":
        return bin(a[0]).count("1")
    if name == "clz.b32":
        return 32 - a[0].bit_length()
    if name == "brev.b32":
        return int(f"{a[0]:032b}"[::-1], 2)
    if op == "bfe":
        pos, ln = a[1] & 0xFF, a[2] & 0xFF
        out = 0
        sbit = 0
        if name == "bfe.s32" and ln:
            sbit = (a[0] >> min(pos + ln - 1, 31)) & 1
        for i in range(32):
            bit = (a[0] >> (pos + i)) & 1 if (i < ln and pos + i <= 31) else sbit
            out |= bit << i
        return out
    if name == "bfi.b32":
        ins, pos, ln, base = a[0], a[1] & 0xFF, a[2] & 0xFF, a[3]
        out = base
        for i in range(ln):
            if pos + i > 31:
                break
            out = (out & ~(1 << (pos + i))) | (((ins >> i) & 1) << (pos + i))
        return out & M32
    t = parts[-1]
    if t == "f32" and op in (
        "add",
        "sub",
        "mul",
        "div",
        "sqrt",
        "fma",
        "neg",
        "abs",
        "min",
        "max",
        "rcp",
        "rsqrt",
        "sin",
        "cos",
        "exp2",
        "log2",
        "fract",
        "sat",
        "clamp",
    ):
        x = [f32(v) for v in a]
        if op == "neg":
            return a[0] ^ 0x80000000
        if op == "abs":
            return a[0] & 0x7FFFFFFF
        if op == "fma":
            ex = fma_exact(*x)
            return frac_to_f32(ex) if isinstance(ex, Fraction) else to_f32(ex)
        if op == "min":
            return to_f32(fmin(x[0], x[1]))
        if op == "max":
            return to_f32(fmax(x[0], x[1]))
        if op == "clamp":
            return to_f32(fmin(fmax(x[0], x[1]), x[2]))
        if op == "sat":
            return 0 if math.isnan(x[0]) else to_f32(min(max(x[0], 0.0), 1.0))
        if op == "fract":
            if math.isinf(x[0]):
                return 0x7FFFFFFF
            if math.isnan(x[0]):
                return 0x7FFFFFFF
            fl = math.copysign(float(math.floor(x[0])), x[0]) if math.floor(x[0]) == 0 else float(math.floor(x[0]))
            return to_f32(min(x[0] - fl, f32(0x3F7FFFFF)))
        return to_f32(_float_op(op, x))
    if t == "f64" and op in ("add", "sub", "mul", "div", "sqrt", "fma", "neg", "abs", "min", "max"):
        x = [f64(v) for v in a]
        if op == "neg":
            return a[0] ^ (1 << 63)
        if op == "abs":
            return a[0] & ((1 << 63) - 1)
        if op == "fma":
            ex = fma_exact(*x)
            if isinstance(ex, Fraction):
                return bits64(round_fraction(ex, 53, -1022, 1023))
            return bits64(ex)
        if op == "min":
            return bits64(fmin(x[0], x[1]))
        if op == "max":
            return bits64(fmax(x[0], x[1]))
        return bits64(_float_op(op, x))
    if t in ("f16x2", "f16", "bf16x2", "bf16") and op in ("add", "sub", "mul", "fma"):
        half = t.startswith("f16")
        val, rnd, frnd = (f16v, to_f16, frac_to_f16) if half else (bf16v, to_bf16, frac_to_bf16)
        lanes = 2 if t.endswith("x2") else 1
        out = 0
        for h in range(lanes):
            x = [val(v >> (16 * h)) for v in a]
            if op == "fma":
                ex = fma_exact(*x)
                r = frnd(ex) if isinstance(ex, Fraction) else rnd(ex)
            else:
                r = rnd({"add": x[0] + x[1], "sub": x[0] - x[1], "mul": x[0] * x[1]}[op])
            out |= (r & 0xFFFF) << (16 * h)
        return out
    if op == "cvt":
        return _cvt(parts[1:], a[0])
    if op == "setp":
        return _setp(parts[1], parts[2], a[0], a[1])
    if op == "selp":
        return a[0] if a[2] else a[1]
    if name == "slct.s32.f32":
        return a[0] if f32(a[2]) >= 0 else a[1]
    if name == "slct.b32.s32":
        return a[0] if sx(a[2]) >= 0 else a[1]
    raise NotImplementedError(name)


def _float_op(op: str, x: list[float]) -> float:
    try:
        if op == "add":
            return x[0] + x[1]
        if op == "sub":
            return x[0] - x[1]
        if op == "mul":
            return x[0] * x[1]
        if op == "div":
            if x[1] == 0:
                if math.isnan(x[0]) or x[0] == 0:
                    return math.nan
                return math.copysign(math.inf, x[0]) * math.copysign(1, x[1])
            return x[0] / x[1]
        if op == "sqrt":
            if x[0] < 0:
                return math.nan
            return math.sqrt(x[0]) if not math.isinf(x[0]) else x[0]
        if op == "rcp":
            return math.copysign(math.inf, x[0]) if x[0] == 0 else 1.0 / x[0]
        if op == "rsqrt":
            if x[0] < 0 or math.isnan(x[0]):
                return math.nan
            if x[0] == 0:
                return math.copysign(math.inf, x[0])
            return 1.0 / math.sqrt(x[0])
        if op == "sin":
            return math.sin(x[0]) if math.isfinite(x[0]) else math.nan
        if op == "cos":
            return math.cos(x[0]) if math.isfinite(x[0]) else math.nan
        if op == "exp2":
            try:
                return 2.0 ** x[0]
            except OverflowError:
                return math.inf
        if op == "log2":
            if x[0] < 0 or math.isnan(x[0]):
                return math.nan
            if x[0] == 0:
                return -math.inf
            return math.log2(x[0])
    except OverflowError:
        return math.inf
    raise NotImplementedError(op)


def _cvt(parts: list[str], v: int) -> int:
    mode = parts[0] if parts[0] in ("rni", "rzi", "rmi", "rpi", "rn", "rz") else ""
    if mode:
        parts = parts[1:]
    dt, st = parts
    if st == "f32":
        x = f32(v)
    elif st == "f64":
        x = f64(v)
    elif st == "f16":
        x = f16v(v)
    elif st == "bf16":
        x = bf16v(v)
    elif st == "s32":
        x = sx(v)
    else:
        x = v & M32
    if dt in ("s32", "u32"):
        return cvt_int(float(x), mode, dt == "s32")
    if dt == "f32":
        if st == "f32":
            return to_f32(fround(x, mode))
        if st in ("s32", "u32"):
            return frac_to_f32(Fraction(int(x))) if x else 0
        if st == "f64" and mode == "rz":
            if not math.isfinite(x):
                return to_f32(x)
            r = to_f32(x)
            if abs(f32(r)) > abs(x):
                r -= 1  # one ulp toward zero (bits of a same-sign float)
            return r
        return to_f32(x)  # f64, f16, bf16 -> f32
    if dt == "f64":
        if st == "f64":
            return bits64(fround(x, mode))
        return bits64(float(x))
    if dt == "f16":
        return to_f16(x)
    if dt == "bf16":
        return to_bf16(x)
    raise NotImplementedError(parts)


def _setp(cmp: str, t: str, a: int, b: int) -> bool:
    if t == "s32":
        x, y = sx(a), sx(b)
    elif t == "u32":
        x, y = a, b
    else:
        x, y = (f32(a), f32(b)) if t == "f32" else (f64(a), f64(b))
        nan = math.isnan(x) or math.isnan(y)
        if cmp == "num":
            return not nan
        if cmp == "nan":
            return nan
        if cmp.endswith("u"):
            return nan or _cmp(cmp[:-1], x, y)
        return (not nan) and _cmp(cmp, x, y)
    return _cmp(cmp, x, y)


def _cmp(c: str, x: float, y: float) -> bool:
    return {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}[c]


# ---- the machine ------------------------------------------------------------------------------
class Thread:
    def __init__(self, regs: int, preds: int):
        self.r = [0] * regs
        self.p = [False] * preds
        self.alive = True


def run(
    kernel: Kernel,
    grid: tuple[int, int, int],
    workgroup: tuple[int, int, int],
    memory: bytes,
    args: list[int],
    wave_width: int = 32,
    constants: bytes = b"",
) -> bytearray:
    """Run a kernel; returns device memory. Raises RefTrap where the emulator traps."""
    W = wave_width
    mem = bytearray(memory)
    const = bytes(constants)
    wx, wy, wz = workgroup
    T = wx * wy * wz
    gx, gy, gz = grid
    nwg = gx * gy * gz
    waves = -(-T // W)
    threads: list[Thread] = []
    info = []  # (wg linear, tid linear, wave index within grid)
    for g in range(nwg):
        for t in range(T):
            th = Thread(max(kernel.registers, 1), max(kernel.predicates, 1))
            for i, a in enumerate(args[: kernel.registers]):
                th.r[i] = a & M32
            threads.append(th)
            info.append((g, t, g * waves + t // W))
    locals_ = [bytearray(kernel.local_memory) for _ in range(nwg)]
    insts = kernel.instructions

    def sreg(i: int, sid: int) -> int:
        g, t, _ = info[i]
        return [
            t % wx,
            (t // wx) % wy,
            t // (wx * wy),
            t // W,
            t % W,
            g % gx,
            (g // gx) % gy,
            g // (gx * gy),
            wx,
            wy,
            wz,
            gx,
            gy,
            gz,
            waves,
            0,
            W,
        ][sid]

    def read(i: int, op: object) -> int | bool:
        th = threads[i]
        if isinstance(op, Imm):
            return op.bits
        if isinstance(op, Reg):
            _, off, width = SUBREGS[op.sel]
            return (th.r[op.n] >> off) & ((1 << width) - 1)
        if isinstance(op, Pair):
            return th.r[op.n] | (th.r[op.n + 1] << 32)
        if isinstance(op, Pred):
            return th.p[op.n]
        if isinstance(op, SReg):
            return steps if op.id == 15 else sreg(i, op.id)
        raise TypeError(op)

    def write(i: int, op: object, v: int | bool) -> None:
        th = threads[i]
        if isinstance(op, Reg):
            _, off, width = SUBREGS[op.sel]
            m = ((1 << width) - 1) << off
            th.r[op.n] = (th.r[op.n] & ~m & M32) | ((int(v) << off) & m)
        elif isinstance(op, Pair):
            th.r[op.n] = int(v) & M32
            th.r[op.n + 1] = (int(v) >> 32) & M32
        elif isinstance(op, Pred):
            th.p[op.n] = bool(v)

    def address(i: int, m: Mem, width: int, space: str) -> tuple[bytearray | bytes, int]:
        a = ((read(i, Reg(m.base)) if m.base is not None else 0) + m.offset) & M32
        buf: bytearray | bytes = mem if space == "global" else const if space == "const" else locals_[info[i][0]]
        if a + width > len(buf) or a % width:
            raise RefTrap(f"bad {space} access at {a}")
        return buf, a

    def guard_ok(i: int, inst: Instruction) -> bool:
        g = inst.guard
        return g is None or threads[i].p[g.pred] != g.negated

    # structured execution: active set + frames, like any SIMT machine, but scalar
    active = [True] * len(threads)
    frames: list[list[object]] = []
    match = {}
    stack: list[int] = []
    else_of: dict[int, int] = {}
    for pc, inst in enumerate(insts):
        n = inst.spec.name
        if n in ("if", "if.uniform", "loop"):
            stack.append(pc)
        elif n == "else":
            else_of[stack[-1]] = pc
        elif n in ("endif", "endloop"):
            match[stack.pop()] = pc
    loop_start = {v: k for k, v in match.items() if insts[k].spec.name == "loop"}
    pc = 0
    steps = 0

    def left() -> list[bool]:
        for fr in reversed(frames):
            if fr[0] == "loop":
                return [b or c for b, c in zip(fr[2], fr[3])]  # type: ignore[arg-type]
        return [False] * len(threads)

    while pc < len(insts):
        steps += 1
        if steps > 100000:
            raise RefTrap("budget")
        inst = insts[pc]
        spec = inst.spec
        name = spec.name
        nxt = pc + 1
        if spec.cls == "control":
            if name in ("if", "if.uniform"):
                p = inst.operands[0].n  # type: ignore[union-attr]
                cond = [threads[i].p[p] for i in range(len(threads))]
                frames.append(["if", active[:], cond])
                active = [a and c for a, c in zip(active, cond)]
            elif name == "else":
                fr = frames[-1]
                lf = left()
                active = [e and not c and threads[i].alive and not lf[i] for i, (e, c) in enumerate(zip(fr[1], fr[2]))]  # type: ignore[arg-type]
            elif name == "endif":
                fr = frames.pop()
                lf = left()
                active = [e and threads[i].alive and not lf[i] for i, e in enumerate(fr[1])]  # type: ignore[arg-type]
            elif name == "loop":
                frames.append(["loop", active[:], [False] * len(threads), [False] * len(threads)])
            elif name == "endloop":
                fr = frames[-1]
                again = [e and threads[i].alive and not b for i, (e, b) in enumerate(zip(fr[1], fr[2]))]  # type: ignore[arg-type]
                if any(again):
                    fr[3] = [False] * len(threads)
                    active = again
                    nxt = loop_start[pc] + 1
                else:
                    frames.pop()
                    lf = left()
                    active = [e and threads[i].alive and not lf[i] for i, e in enumerate(fr[1])]  # type: ignore[arg-type]
            elif name in ("break", "continue"):
                p = inst.operands[0].n  # type: ignore[union-attr]
                for fr in reversed(frames):
                    if fr[0] == "loop":
                        slot = 2 if name == "break" else 3
                        for i in range(len(threads)):
                            if active[i] and threads[i].p[p] and guard_ok(i, inst):
                                fr[slot][i] = True  # type: ignore[index]
                                active[i] = False
                        break
            elif name == "ret":
                for i in range(len(threads)):
                    if active[i] and guard_ok(i, inst):
                        threads[i].alive = False
                        active[i] = False
            pc = nxt
            continue
        execs = [i for i in range(len(threads)) if active[i] and guard_ok(i, inst)]
        ops = inst.operands
        if spec.cls in ("load", "store"):
            mi = spec.mem_index
            assert mi is not None and spec.space is not None
            width = spec.width
            for i in execs:
                buf, a = address(i, ops[mi], width, spec.space)  # type: ignore[arg-type]
                if spec.cls == "load":
                    raw = int.from_bytes(buf[a : a + width], "little")
                    if width <= 2 or isinstance(ops[0], Reg):
                        v = raw
                        if spec.name.endswith((".s8", ".s16")):
                            v = sx(raw, 8 * width) & M32
                        write(i, ops[0], v)
                    else:
                        dst = ops[0]
                        n = dst.n  # type: ignore[union-attr]
                        for w in range(width // 4):
                            threads[i].r[n + w] = (raw >> (32 * w)) & M32
                else:
                    val = ops[1]
                    if isinstance(val, Vec):
                        raw = sum(threads[i].r[val.n + w] << (32 * w) for w in range(val.count))
                    else:
                        raw = int(read(i, val))
                    raw &= (1 << (8 * width)) - 1
                    buf[a : a + width] = raw.to_bytes(width, "little")  # type: ignore[index]
        elif spec.cls == "atomic":
            mi = spec.mem_index
            assert mi is not None and spec.space is not None
            opn = spec.name.split(".", 2)[2]
            for i in execs:
                buf, a = address(i, ops[mi], 4, spec.space)  # type: ignore[arg-type]
                old = int.from_bytes(buf[a : a + 4], "little")
                v = [int(read(i, o)) for o in ops[mi + 1 :]]
                new = _atomic(opn, old, v)
                buf[a : a + 4] = new.to_bytes(4, "little")  # type: ignore[index]
                if spec.name.startswith("atom."):
                    write(i, ops[0], old)
        elif spec.cls == "wave":
            _wave(spec.name, inst, execs, threads, info, W, read, write, active)
        elif spec.cls in ("sync", "misc"):
            pass
        elif spec.cls == "mma":
            raise NotImplementedError("mma is tested separately")
        else:
            srcs = [o for o, s in zip(ops, spec.operands) if s.role.value == "s"]
            key = spec.key if spec.key != "mov.b32.sreg" else "mov.b32"
            results = [
                (
                    i,
                    alu(
                        key,
                        [int(read(i, o)) if not isinstance(o, Pred) else read(i, o) for o in srcs],
                    ),
                )
                for i in execs
            ]
            for i, v in results:
                write(i, ops[spec.dests[0]], v)
        pc = nxt
        if not any(active):
            # skip forward to the closing instruction of the innermost construct
            depth = 0
            while pc < len(insts) and not (insts[pc].spec.name in ("else", "endif", "endloop") and depth == 0):
                n = insts[pc].spec.name
                if n in ("if", "if.uniform", "loop"):
                    depth += 1
                elif n in ("endif", "endloop"):
                    depth -= 1
                pc += 1
    return mem


def _atomic(op: str, old: int, v: list[int]) -> int:
    if op == "add.u32":
        return (old + v[0]) & M32
    if op == "sub.u32":
        return (old - v[0]) & M32
    if op == "min.s32":
        return min(sx(old), sx(v[0])) & M32
    if op == "max.s32":
        return max(sx(old), sx(v[0])) & M32
    if op == "min.u32":
        return min(old, v[0])
    if op == "max.u32":
        return max(old, v[0])
    if op == "and.b32":
        return old & v[0]
    if op == "or.b32":
        return old | v[0]
    if op == "xor.b32":
        return old ^ v[0]
    if op == "exch.b32":
        return v[0]
    if op == "cas.b32":
        return v[1] if old == v[0] else old
    if op == "add.f32":
        return to_f32(f32(old) + f32(v[0]))
    raise NotImplementedError(op)


def _wave(
    name: str,
    inst: Instruction,
    execs: list[int],
    threads: list[Thread],
    info: list[tuple[int, int, int]],
    W: int,
    read,
    write,
    active: list[bool],
) -> None:  # type: ignore[no-untyped-def]
    ops = inst.operands
    by_wave: dict[int, list[int]] = {}
    for i in range(len(threads)):
        by_wave.setdefault(info[i][2], []).append(i)
    results: list[tuple[int, int | bool]] = []
    for _wv, members in by_wave.items():
        ex = [i for i in members if i in set(execs)]
        if not ex:
            continue
        lane_of = {i: info[i][1] % W for i in members}
        by_lane = {info[i][1] % W: i for i in members}
        if name.startswith("wave.reduce."):
            op = name.split(".", 2)[2]
            vals = [int(read(i, ops[1])) for i in ex]
            if op == "add.u32":
                r = sum(vals) & M32
            elif op == "min.s32":
                r = min(sx(v) for v in vals) & M32
            elif op == "max.s32":
                r = max(sx(v) for v in vals) & M32
            elif op == "min.u32":
                r = min(vals)
            elif op == "max.u32":
                r = max(vals)
            elif op in ("and.b32", "or.b32", "xor.b32"):
                r = vals[0]
                for v in vals[1:]:
                    r = r & v if op == "and.b32" else r | v if op == "or.b32" else r ^ v
            else:
                fs = [f32(v) for v in vals]
                acc = fs[0]
                for x in fs[1:]:
                    acc = fmin(acc, x) if op == "min.f32" else fmax(acc, x)
                r = to_f32(acc)
            results += [(i, r) for i in ex]
        elif name.startswith(("wave.shuffle", "wave.broadcast")):
            mode = "idx" if name in ("wave.shuffle.b32", "wave.broadcast.b32") else name.split(".")[2]
            for i in ex:
                ln = lane_of[i]
                b = int(read(i, ops[2]))
                if mode == "idx":
                    src = b % W
                else:
                    src = ln ^ b if mode == "xor" else ln - b if mode == "up" else ln + b
                    if not 0 <= src < W:
                        src = ln
                j = by_lane.get(src)
                results.append((i, int(read(j, ops[1])) if j is not None else 0))
        elif name == "wave.prefix.add.u32":
            acc = 0
            for i in sorted(ex, key=lambda i: lane_of[i]):
                results.append((i, acc & M32))
                acc += int(read(i, ops[1]))
        elif name == "wave.ballot.b32":
            bits = sum(1 << lane_of[i] for i in ex if read(i, ops[1]) and lane_of[i] < 32)
            results += [(i, bits) for i in ex]
        elif name in ("wave.any", "wave.all"):
            vals = [bool(read(i, ops[1])) for i in ex]
            r = any(vals) if name == "wave.any" else all(vals)
            results += [(i, r) for i in ex]
        else:
            raise NotImplementedError(name)
    for i, v in results:
        write(i, ops[0], v)
