"""Reading the assembly text the AMDGCN backend emits (llvm-mc syntax): kernels, their code,
labels, AMDHSA directives and code-object metadata.

Only the subset the backend emits is understood (`backends/amdgcn/isa.EMITTED`); any other
mnemonic, operand or directive inside a kernel is refused with an `AmdgcnSimError` naming the
line. Operands become the backend's own IR operand classes (`Phys`, `Special`, `Imm`, `Neg`,
`Label`, `Raw`), so that the interpreter's own hazard table (hazards.py) can be compared with the
backend's on the same parsed instructions.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field
from typing import cast

from ...backends.amdgcn.ir import MI, VCC, Imm, Label, Neg, Operand, Phys, Raw, Special
from ...backends.amdgcn.isa import EMITTED, LDS, SMEM, VMEM
from ...errors import WaveError


class AmdgcnSimError(WaveError):
    """An error of the AMDGCN interpreter: unreadable assembly, or a kernel that breaks a rule the
    hardware relies on (a read before the covering s_waitcnt, a hazard without its wait states)."""


@dataclass(frozen=True)
class FConst:
    """A floating-point inline constant (`0.5`, `-1.0`, ...): its value depends on the operand type."""

    value: float

    def __str__(self) -> str:
        return repr(self.value)

    def bits(self, width: int) -> int:
        if width == 16:
            return int.from_bytes(struct.pack("<e", self.value), "little")
        if width == 64:
            return int.from_bytes(struct.pack("<d", self.value), "little")
        return int.from_bytes(struct.pack("<f", self.value), "little")


FLOAT_INLINE = {0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 4.0, -4.0}


@dataclass
class Inst:
    """One instruction of a kernel."""

    op: str  # mnemonic as written (with _e64 / _dpp)
    base: str  # mnemonic without _e64 (the handler key)
    ops: list[object]
    mods: dict[str, object]
    ndefs: int
    line: int
    text: str
    mi: MI = field(repr=False, default=None)  # type: ignore[assignment]
    counter: str | None = None  # "vm" / "lgkm" for memory operations
    states: int = 1  # wait states this instruction accounts for (s_nop N: N+1)

    def where(self, kernel: str, pc: int) -> str:
        return f"kernel {kernel}, pc {pc} (line {self.line}: `{self.text}`)"


@dataclass
class KernelCode:
    name: str
    insts: list[Inst]
    labels: dict[str, int]
    directives: dict[str, int]
    args: list[tuple[str, int, int]]  # metadata .args: (name, offset, size)


_REG = re.compile(r"^([vsa])(\d+)$")
_RANGE = re.compile(r"^([vsa])\[(\d+):(\d+)\]$")
_SPECIAL = {"vcc", "exec", "scc", "m0", "vcc_lo", "vcc_hi", "exec_lo", "exec_hi"}
_INT = re.compile(r"^-?(0x[0-9a-fA-F]+|\d+)$")
_FLOAT = re.compile(r"^-?\d+\.\d+$")
_LABEL = re.compile(r"^\.?[A-Za-z_][\w.$]*$")

# instructions that define nothing (their first operand is read)
_NO_DEF_PREFIX = ("s_cmp_", "global_store_", "ds_write_", "buffer_", "s_cbranch_")
_NO_DEF = {"s_branch", "s_nop", "s_endpgm", "s_barrier", "s_waitcnt", "s_setreg_imm32_b32", "ds_cmpst_b32"}


def _split_top(s: str) -> list[str]:
    """Split on commas outside brackets and parentheses."""
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def operand(tok: str, where: str, label_ok: bool = False) -> object:
    neg = False
    t = tok
    if t.startswith("-") and not _INT.match(t) and not _FLOAT.match(t):
        neg, t = True, t[1:]
    o: object
    if m := _REG.match(t):
        o = Phys(m.group(1), int(m.group(2)))
    elif m := _RANGE.match(t):
        lo, hi = int(m.group(2)), int(m.group(3))
        if hi < lo:
            raise AmdgcnSimError(f"{where}: bad register range {tok}")
        o = Phys(m.group(1), lo, hi - lo + 1)
    elif t in _SPECIAL:
        o = Special(t)
    elif _INT.match(t):
        o = Imm(int(t, 0))
    elif _FLOAT.match(t):
        v = float(t)
        if v not in FLOAT_INLINE:
            raise AmdgcnSimError(f"{where}: {tok} is not an inline floating-point constant")
        o = FConst(v)
    elif t.startswith("hwreg("):
        o = Raw(t)
    elif label_ok and _LABEL.match(t):
        o = Label(t)
    else:
        raise AmdgcnSimError(f"{where}: operand {tok!r} is not one the backend emits")
    if neg:
        if not isinstance(o, Phys):
            raise AmdgcnSimError(f"{where}: negation of {tok!r}")
        return Neg(o)
    return o


_MOD = re.compile(r"^([a-z_0-9]+)(?::(.*))?$")


def _mods(words: list[str], where: str) -> dict[str, object]:
    out: dict[str, object] = {}
    for w in words:
        m = _MOD.match(w)
        if not m:
            raise AmdgcnSimError(f"{where}: modifier {w!r} is not one the backend emits")
        name, val = m.group(1), m.group(2)
        if val is None:
            out[name] = True
        elif val.startswith("swizzle("):
            out[name] = swizzle(val, where)
        elif val.startswith("["):
            out[name] = [int(x, 0) for x in val.strip("[]").split(",")]
        else:
            try:
                out[name] = int(val, 0)
            except ValueError:
                raise AmdgcnSimError(f"{where}: modifier {w!r} is not one the backend emits") from None
    return out


def swizzle(text: str, where: str) -> int:
    """The 16-bit ds_swizzle offset of a `swizzle(...)` macro (bitmask mode: and, or, xor masks in
    bits 4:0, 9:5, 14:10; QUAD_PERM: bit 15 and four 2-bit selectors)."""
    m = re.match(r"^swizzle\((\w+)((?:,[^,)]+)*)\)$", text)
    if not m:
        raise AmdgcnSimError(f"{where}: {text!r} is not a swizzle the backend emits")
    mode, args = m.group(1), [a.strip() for a in m.group(2).split(",")[1:]]
    try:
        if mode == "SWAP" and len(args) == 1:
            return 0x1F | (int(args[0]) << 10)
        if mode == "REVERSE" and len(args) == 1:
            return 0x1F | ((int(args[0]) - 1) << 10)
        if mode == "BROADCAST" and len(args) == 2:
            return (0x1F & ~(int(args[0]) - 1)) | (int(args[1]) << 5)
        if mode == "QUAD_PERM" and len(args) == 4:
            return 0x8000 | sum(int(a) << (2 * i) for i, a in enumerate(args))
        if mode == "BITMASK_PERM" and len(args) == 1 and len(args[0].strip('"')) == 5:
            and_m = or_m = xor_m = 0
            for i, ch in enumerate(args[0].strip('"')):
                bit = 1 << (4 - i)
                if ch in "pi":
                    and_m |= bit
                if ch == "1":
                    or_m |= bit
                if ch == "i":
                    xor_m |= bit
                if ch not in "01pi":
                    raise ValueError(ch)
            return and_m | (or_m << 5) | (xor_m << 10)
    except ValueError:
        pass
    raise AmdgcnSimError(f"{where}: {text!r} is not a swizzle the backend emits")


def _waitcnt(rest: str, where: str) -> dict[str, object]:
    out: dict[str, object] = {}
    for part in rest.split():
        m = re.match(r"^(vmcnt|lgkmcnt|expcnt)\((\d+)\)$", part)
        if not m:
            raise AmdgcnSimError(f"{where}: s_waitcnt operand {part!r} is not one the backend emits")
        out[m.group(1)] = int(m.group(2))
    return out


def parse_inst(line: str, lineno: int) -> Inst:
    text = line.split(";")[0].strip()
    where = f"line {lineno}: `{text}`"
    op, _, rest = text.partition(" ")
    rest = rest.strip()
    base = op.removesuffix("_e64")
    if base not in EMITTED:
        raise AmdgcnSimError(f"{where}: {op} is not an instruction the AMDGCN backend emits")
    if op.endswith("_e64") and not (base.startswith(("v_cmp_", "v_cndmask")) or base in _E64_OK):
        raise AmdgcnSimError(
            f"{where}: {op}: this interpreter models the _e64 form of compares, v_cndmask and {sorted(_E64_OK)}"
        )
    mods: dict[str, object] = {}
    ops: list[object] = []
    if base == "s_waitcnt":
        mods = _waitcnt(rest, where)
    elif base in CACHE_OPS:  # no operands: only the cache-policy bits (sc0 / sc1)
        mods = _mods(rest.split(), where)
    elif rest:
        pieces = _split_top(rest)
        last = pieces[-1].split()
        pieces[-1] = last[0]
        mods = _mods(last[1:], where)
        branch = base == "s_branch" or base.startswith("s_cbranch_")
        ops = [operand(p, where, branch) for p in pieces]
    if (base == "s_branch" or base.startswith("s_cbranch_")) and (len(ops) != 1 or not isinstance(ops[0], Label)):
        raise AmdgcnSimError(f"{where}: {op} takes one label")
    if base in _NO_DEF or base.startswith(_NO_DEF_PREFIX):
        ndefs = 0
    elif base.startswith("global_atomic_"):
        ndefs = 1 if ("glc" in mods or "sc0" in mods) else 0
    elif (base.startswith("ds_") and base not in LDS) or (
        base.startswith("ds_") and "_rtn_" not in base and not base.startswith(("ds_read", "ds_bpermute"))
    ):
        ndefs = 0
    elif base.startswith("v_div_scale"):
        ndefs = 2
    else:
        ndefs = 1
    imp_uses: tuple[Special, ...] = ()
    if base.startswith("v_div_fmas"):
        imp_uses = (VCC,)
    mi = MI(base if not op.endswith("_e64") else op, cast("list[Operand]", ops), ndefs, "", (), imp_uses)
    counter = "vm" if base in VMEM else "lgkm" if (base in LDS or base in SMEM) else None
    states = 1
    if base == "s_nop":
        if len(ops) != 1 or not isinstance(ops[0], Imm) or not 0 <= ops[0].value <= 15:
            raise AmdgcnSimError(f"{where}: s_nop takes one immediate 0..15")
        states = ops[0].value + 1
    return Inst(op, base, ops, mods, ndefs, lineno, text, mi, counter, states)


# cache write-back / invalidation: operand-less MUBUF instructions whose words are cache-policy bits
CACHE_OPS = frozenset({"buffer_wbinvl1_vol", "buffer_inv", "buffer_wbl2"})

# VOP3-only instructions written with an explicit _e64 (none today besides compares / cndmask)
_E64_OK = {"v_max_f32", "v_min_f32", "v_add_f32", "v_mul_f32"}

_DIRECTIVE = re.compile(r"^\s*\.amdhsa_(\w+)\s+(\S+)\s*$")
_ARG = re.compile(r"\.name:\s*(?:!str\s+)?(\w+),\s*\.size:\s*(\d+),\s*\.offset:\s*(\d+)")


def parse_module(text: str) -> dict[str, KernelCode]:
    """Every kernel of an assembly module (as `emit.module` writes it)."""
    lines = text.splitlines()
    kernels: dict[str, KernelCode] = {}
    cur: KernelCode | None = None
    dcur: KernelCode | None = None
    in_meta = False
    mcur: KernelCode | None = None
    for n, raw in enumerate(lines, 1):
        s = raw.split(";")[0].strip()
        if not s:
            continue
        if s == ".amdgpu_metadata":
            in_meta = True
            continue
        if in_meta:
            if s == ".end_amdgpu_metadata":
                in_meta = False
            elif m := re.match(r"^- \.name:\s*(?:!str\s+)?(\w+)$", s):
                mcur = kernels.get(m.group(1))
            elif mcur is not None and (m := _ARG.search(s)):
                mcur.args.append((m.group(1), int(m.group(3)), int(m.group(2))))
            continue
        if m := re.match(r"^\.amdhsa_kernel\s+(\w+)$", s):
            dcur = kernels.get(m.group(1))
            if dcur is None:
                raise AmdgcnSimError(f"line {n}: descriptor for unknown kernel {m.group(1)}")
            cur = None
            continue
        if s == ".end_amdhsa_kernel":
            dcur = None
            continue
        if dcur is not None:
            m = _DIRECTIVE.match(s)
            if not m:
                raise AmdgcnSimError(f"line {n}: directive {s!r} is not one the backend emits")
            dcur.directives[m.group(1)] = int(m.group(2), 0)
            continue
        if s.startswith("."):
            if m := re.match(r"^(\.L[\w.$]*):$", s):
                if cur is None:
                    raise AmdgcnSimError(f"line {n}: label {m.group(1)} outside a kernel")
                if s.startswith(".Lfunc_end_"):
                    cur = None
                    continue
                cur.labels[m.group(1)] = len(cur.insts)
                continue
            if s.startswith(
                (
                    ".size",
                    ".text",
                    ".globl",
                    ".p2align",
                    ".type",
                    ".rodata",
                    ".amdgcn_target",
                    ".amdhsa_code_object_version",
                )
            ):
                if s.startswith(".size"):
                    cur = None
                continue
            raise AmdgcnSimError(f"line {n}: directive {s!r} is not one the backend emits")
        if m := re.match(r"^([A-Za-z_]\w*):$", s):
            cur = KernelCode(m.group(1), [], {}, {}, [])
            kernels[cur.name] = cur
            continue
        if cur is None:
            raise AmdgcnSimError(f"line {n}: instruction {s!r} outside a kernel")
        cur.insts.append(parse_inst(raw, n))
    for k in kernels.values():
        for pc, i in enumerate(k.insts):
            for o in i.ops:
                if isinstance(o, Label) and o.name not in k.labels:
                    raise AmdgcnSimError(f"{i.where(k.name, pc)}: label {o.name} is not defined in the kernel")
    return kernels
