"""The PTX renderer: one lifted program to PTX assembly for sm_75 and newer.

WAVE registers become `.b32` virtual registers `%r<n>` and predicates `%p<n>`; each instruction
works on typed temporaries (`%f` f32, `%fd` f64, `%rd` b64, `%t` b32, `%q` pred) reached by
`mov` bitcasts, and float results are canonicalised (NaN -> 0x7FFFFFFF) before they land in a
register. Rows whose PTX instruction has exactly the emulator's semantics are emitted inline
(integer arithmetic with PTX's shift clamping, `.rn` float arithmetic, which never contracts
into fma, `div.rn`/`sqrt.rn`, comparisons with PTX's ordered/unordered forms, integer orderings
in `int_setp`'s shapes). The other rows (integer division rules, transcendentals, f16/bf16
arithmetic, saturating conversions) call `.func` helpers generated once from the C prelude by
nvcc (`ptx_helpers.ptx`, rebuilt by `tools/gen_ptx_helpers.py`), so they compute what the C
backends compute.

Control flow: structured regions become labels and branches. Each region keeps its own active
mask (WAVE's active set for the threads in it): an `if` splits the mask by `vote.sync.ballot`,
`break`/`continue` remove lanes (the leavers pass through every enclosing join, where the mask
of the region they leave is recomputed), and `ret` is `exit` (the `.sync` instructions ignore
exited threads). Wave operations therefore run on exactly the lanes the emulator runs them on.
Kernels take one `.param .u64` device-memory base, one for constant memory, and a `.u32` per
register preset (DESIGN section 4): a new argument value never needs a new translation.
"""

from __future__ import annotations

import contextlib
import contextvars
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

from ..codegen import canonical
from ..errors import WaveError
from ..isa import semantics as sem
from ..isa.instruction import Imm, Instruction, Mem, Pair, Pred, Reg, SReg, Vec
from ..isa.registers import SRegId as SR
from ..isa.table import ROWS
from ..isa.types import SUBREGS, DataType, Kind, Role
from ..isa.vocabulary import NEST_OF, AtomOp, InstrClass, Nest, Op, ReduceOp, Scope, ShuffleMode
from ..wbin.program import Kernel
from .base import Rendered
from .lift import If, Loop, MaskPlan, Node, Stmt, lift, mask_plan, preset_count

PTX_VERSION = "7.8"  # sm_90 needs 7.8; everything emitted here exists since 7.0
ARCHES = ("sm_75", "sm_80", "sm_86", "sm_89", "sm_90")

# Inline rows: key -> (destination type, source types, PTX lines). Types: b32 f32 b64 f64 pred.
# {d} is the destination temporary, {a} {b} {c} the typed sources.
_B, _F, _L, _D, _P = "b32", "f32", "b64", "f64", "pred"
NATIVE: dict[str, tuple[str, tuple[str, ...], str]] = {
    "mov.b32": (_B, (_B,), "mov.b32 {d}, {a};"),
    "mov.b64": (_L, (_L,), "mov.b64 {d}, {a};"),
    "mov.pred": (_P, (_P,), "mov.pred {d}, {a};"),
    "mov.b32.sreg": (_B, (_B,), "mov.b32 {d}, {a};"),
    "add.s32": (_B, (_B, _B), "add.s32 {d}, {a}, {b};"),
    "add.u32": (_B, (_B, _B), "add.u32 {d}, {a}, {b};"),
    "sub.s32": (_B, (_B, _B), "sub.s32 {d}, {a}, {b};"),
    "sub.u32": (_B, (_B, _B), "sub.u32 {d}, {a}, {b};"),
    "mul.lo.s32": (_B, (_B, _B), "mul.lo.s32 {d}, {a}, {b};"),
    "mul.lo.u32": (_B, (_B, _B), "mul.lo.u32 {d}, {a}, {b};"),
    "mul.hi.s32": (_B, (_B, _B), "mul.hi.s32 {d}, {a}, {b};"),
    "mul.hi.u32": (_B, (_B, _B), "mul.hi.u32 {d}, {a}, {b};"),
    "mul.wide.s32": (_L, (_B, _B), "mul.wide.s32 {d}, {a}, {b};"),
    "mul.wide.u32": (_L, (_B, _B), "mul.wide.u32 {d}, {a}, {b};"),
    "mad.lo.s32": (_B, (_B, _B, _B), "mad.lo.s32 {d}, {a}, {b}, {c};"),
    # division with WAVE's rules (DESIGN section 3): x / 0 = 0xFFFFFFFF, x % 0 = x; signed
    # INT_MIN / -1 = INT_MIN and x % -1 = 0. A safe divisor keeps the hardware's division defined.
    "div.u32": (
        _B,
        (_B, _B),
        "setp.eq.u32 {q}, {b}, 0;\nselp.b32 {t}, 1, {b}, {q};\ndiv.u32 {d}, {a}, {t};\nselp.b32 {d}, 0xFFFFFFFF, {d}, {q};",
    ),
    "rem.u32": (
        _B,
        (_B, _B),
        "setp.eq.u32 {q}, {b}, 0;\nselp.b32 {t}, 1, {b}, {q};\nrem.u32 {d}, {a}, {t};\nselp.b32 {d}, {a}, {d}, {q};",
    ),
    "div.s32": (
        _B,
        (_B, _B),
        "setp.eq.s32 {q}, {b}, 0;\nsetp.eq.s32 {q2}, {b}, -1;\nselp.b32 {t}, 1, {b}, {q};\n"
        "selp.b32 {t}, 1, {t}, {q2};\ndiv.s32 {d}, {a}, {t};\nneg.s32 {t}, {a};\n"
        "selp.b32 {d}, {t}, {d}, {q2};\nselp.b32 {d}, 0xFFFFFFFF, {d}, {q};",
    ),
    "rem.s32": (
        _B,
        (_B, _B),
        "setp.eq.s32 {q}, {b}, 0;\nsetp.eq.s32 {q2}, {b}, -1;\nselp.b32 {t}, 1, {b}, {q};\n"
        "selp.b32 {t}, 1, {t}, {q2};\nrem.s32 {d}, {a}, {t};\nselp.b32 {d}, 0, {d}, {q2};\n"
        "selp.b32 {d}, {a}, {d}, {q};",
    ),
    "mad.lo.u32": (_B, (_B, _B, _B), "mad.lo.u32 {d}, {a}, {b}, {c};"),
    "neg.s32": (_B, (_B,), "neg.s32 {d}, {a};"),
    "abs.s32": (_B, (_B,), "abs.s32 {d}, {a};"),
    "min.s32": (_B, (_B, _B), "min.s32 {d}, {a}, {b};"),
    "max.s32": (_B, (_B, _B), "max.s32 {d}, {a}, {b};"),
    "min.u32": (_B, (_B, _B), "min.u32 {d}, {a}, {b};"),
    "max.u32": (_B, (_B, _B), "max.u32 {d}, {a}, {b};"),
    "clamp.s32": (_B, (_B, _B, _B), "max.s32 {d}, {a}, {b};\nmin.s32 {d}, {d}, {c};"),
    "clamp.u32": (_B, (_B, _B, _B), "max.u32 {d}, {a}, {b};\nmin.u32 {d}, {d}, {c};"),
    "and.b32": (_B, (_B, _B), "and.b32 {d}, {a}, {b};"),
    "or.b32": (_B, (_B, _B), "or.b32 {d}, {a}, {b};"),
    "xor.b32": (_B, (_B, _B), "xor.b32 {d}, {a}, {b};"),
    "not.b32": (_B, (_B,), "not.b32 {d}, {a};"),
    "and.pred": (_P, (_P, _P), "and.pred {d}, {a}, {b};"),
    "or.pred": (_P, (_P, _P), "or.pred {d}, {a}, {b};"),
    "xor.pred": (_P, (_P, _P), "xor.pred {d}, {a}, {b};"),
    "not.pred": (_P, (_P,), "not.pred {d}, {a};"),
    # PTX clamps shift amounts above 32 to 32: 0, or sign fill for shr.s32 (DESIGN section 3)
    "shl.b32": (_B, (_B, _B), "shl.b32 {d}, {a}, {b};"),
    "shr.u32": (_B, (_B, _B), "shr.u32 {d}, {a}, {b};"),
    "shr.s32": (_B, (_B, _B), "shr.s32 {d}, {a}, {b};"),
    "popc.b32": (_B, (_B,), "popc.b32 {d}, {a};"),
    "clz.b32": (_B, (_B,), "clz.b32 {d}, {a};"),
    "brev.b32": (_B, (_B,), "brev.b32 {d}, {a};"),
    # f32: .rn forms are correctly rounded and never contracted into fma
    "add.f32": (_F, (_F, _F), "add.rn.f32 {d}, {a}, {b};"),
    "sub.f32": (_F, (_F, _F), "sub.rn.f32 {d}, {a}, {b};"),
    "mul.f32": (_F, (_F, _F), "mul.rn.f32 {d}, {a}, {b};"),
    "fma.f32": (_F, (_F, _F, _F), "fma.rn.f32 {d}, {a}, {b}, {c};"),
    "div.f32": (_F, (_F, _F), "div.rn.f32 {d}, {a}, {b};"),
    "sqrt.f32": (_F, (_F,), "sqrt.rn.f32 {d}, {a};"),
    "neg.f32": (_B, (_B,), "xor.b32 {d}, {a}, 0x80000000;"),
    "abs.f32": (_B, (_B,), "and.b32 {d}, {a}, 0x7FFFFFFF;"),
    "add.f64": (_D, (_D, _D), "add.rn.f64 {d}, {a}, {b};"),
    "sub.f64": (_D, (_D, _D), "sub.rn.f64 {d}, {a}, {b};"),
    "mul.f64": (_D, (_D, _D), "mul.rn.f64 {d}, {a}, {b};"),
    "div.f64": (_D, (_D, _D), "div.rn.f64 {d}, {a}, {b};"),
    "fma.f64": (_D, (_D, _D, _D), "fma.rn.f64 {d}, {a}, {b}, {c};"),
    "sqrt.f64": (_D, (_D,), "sqrt.rn.f64 {d}, {a};"),
    "neg.f64": (_L, (_L,), "xor.b64 {d}, {a}, 0x8000000000000000;"),
    "abs.f64": (_L, (_L,), "and.b64 {d}, {a}, 0x7FFFFFFFFFFFFFFF;"),
    # exact conversions and rounding to integral values (ties to even for .rni)
    "cvt.f32.s32": (_F, (_B,), "cvt.rn.f32.s32 {d}, {a};"),
    "cvt.f32.u32": (_F, (_B,), "cvt.rn.f32.u32 {d}, {a};"),
    "cvt.f64.s32": (_D, (_B,), "cvt.rn.f64.s32 {d}, {a};"),
    "cvt.f64.u32": (_D, (_B,), "cvt.rn.f64.u32 {d}, {a};"),
    "cvt.f64.f32": (_D, (_F,), "cvt.f64.f32 {d}, {a};"),
    "cvt.f32.f64": (_F, (_D,), "cvt.rn.f32.f64 {d}, {a};"),
    "cvt.rni.f32.f32": (_F, (_F,), "cvt.rni.f32.f32 {d}, {a};"),
    "cvt.rzi.f32.f32": (_F, (_F,), "cvt.rzi.f32.f32 {d}, {a};"),
    "cvt.rmi.f32.f32": (_F, (_F,), "cvt.rmi.f32.f32 {d}, {a};"),
    "cvt.rpi.f32.f32": (_F, (_F,), "cvt.rpi.f32.f32 {d}, {a};"),
    "cvt.rni.f64.f64": (_D, (_D,), "cvt.rni.f64.f64 {d}, {a};"),
    "cvt.rzi.f64.f64": (_D, (_D,), "cvt.rzi.f64.f64 {d}, {a};"),
    "cvt.rmi.f64.f64": (_D, (_D,), "cvt.rmi.f64.f64 {d}, {a};"),
    "cvt.rpi.f64.f64": (_D, (_D,), "cvt.rpi.f64.f64 {d}, {a};"),
    "selp.b32": (_B, (_B, _B, _P), "selp.b32 {d}, {a}, {b}, {c};"),
    "selp.b64": (_L, (_L, _L, _P), "selp.b64 {d}, {a}, {b}, {c};"),
    # slct picks a when c >= 0; an ordered compare makes a NaN c pick b ({q}: a predicate temporary)
    "slct.s32.f32": (_B, (_B, _B, _F), "setp.ge.f32 {q}, {c}, 0f00000000;\nselp.b32 {d}, {a}, {b}, {q};"),
    "slct.b32.s32": (_B, (_B, _B, _B), "slct.b32.s32 {d}, {a}, {b}, {c};"),
}
# Rows whose float result is never a NaN (conversions from integers): nothing to canonicalise.
NEVER_NAN = frozenset({"cvt.f32.s32", "cvt.f32.u32", "cvt.f64.s32", "cvt.f64.u32"})


# ptxas (CUDA 13.0.88, -O1 and above, sm_75 to sm_90) miscompiles two branches on the same integer
# ordering of the same operands that differ only in signedness (`setp.lt.u32 p, a, b; @!p bra L;
# ... L: setp.lt.s32 q, a, b; @!q bra M`): it threads the second branch under the first, so the
# second test is skipped wherever the first one failed (a = -7, b = 5 loses its signed flag).
# Swapping the operands of one of them (`setp.gt.s32 q, b, a`) avoids it only for two registers:
# ptxas moves a constant to the second operand itself. So the workaround is in the strictness,
# which no swap changes: unsigned orderings are written non-strict (le/ge), signed ones strict
# (lt/gt), a comparison of the other strictness as its complement through setp's second
# destination (docs/backends.md, "A ptxas miscompile of mixed-signedness branches"). The
# backend's own tests keep their shapes: the shuffles' bounds feed a selp, not a branch, and the
# lane loops test their own counter, which no user comparison reads (ptxas unrolls those loops
# only as `setp.lt.u32 p, i, 32; @p bra`: a complement there kept them rolled).
_COMPLEMENT = {"lt": "ge", "ge": "lt", "le": "gt", "gt": "le"}


def int_setp(cmp: str, ty: str, d: str, a: str, b: str, spare: str) -> str:
    """`setp.{cmp}.{ty} d, a, b` (ty an integer type: u32, s32, u64, s64) in the shape of its
    signedness: an unsigned lt/gt or a signed le/ge as `setp.{complement}.{ty} spare|d, a, b`
    (spare, a predicate, receives `a complement b` and d its negation, the comparison asked for)."""
    if cmp in _COMPLEMENT and (cmp in ("lt", "gt")) != ty.startswith("s"):
        return f"setp.{_COMPLEMENT[cmp]}.{ty} {spare}|{d}, {a}, {b};"
    return f"setp.{cmp}.{ty} {d}, {a}, {b};"


for _r in ROWS:  # PTX spells every condition as WAVE does: plain forms ordered, u forms unordered
    if _r.op is Op.SETP:
        assert _r.dtype is not None
        _k = {DataType.F32: _F, DataType.F64: _D}.get(_r.dtype, _B)
        assert _r.variant is not None
        _cmp, _ty = _r.variant.value, _r.dtype.text
        _text = f"{_r.name} {{d}}, {{a}}, {{b}};" if _k != _B else int_setp(_cmp, _ty, "{d}", "{a}", "{b}", "{q}")
        NATIVE[_r.key] = (_P, (_k, _k), _text)

# The value rows (isa.table.VALUE_ROWS) not inline: each calls a helper generated from the C prelude
# (see the module docstring), listed in the order tools/gen_ptx_helpers.py writes the helper
# library in. NATIVE and HELPER_ROWS split VALUE_ROWS between them (tests/backends/test_coverage.py).
HELPER_ROWS: tuple[str, ...] = (
    "dp4a.s32.s32",
    "dp4a.u32.u32",
    "bfe.u32",
    "bfe.s32",
    "bfi.b32",
    "rcp.f32",
    "rsqrt.f32",
    "min.f32",
    "max.f32",
    "sin.f32",
    "cos.f32",
    "exp2.f32",
    "log2.f32",
    "fract.f32",
    "sat.f32",
    "clamp.f32",
    "min.f64",
    "max.f64",
    "add.f16x2",
    "mul.f16x2",
    "fma.f16x2",
    "add.f16",
    "sub.f16",
    "mul.f16",
    "fma.f16",
    "add.bf16x2",
    "mul.bf16x2",
    "fma.bf16x2",
    "add.bf16",
    "sub.bf16",
    "mul.bf16",
    "fma.bf16",
    "cvt.s32.f32",
    "cvt.rni.s32.f32",
    "cvt.rmi.s32.f32",
    "cvt.rpi.s32.f32",
    "cvt.u32.f32",
    "cvt.rni.u32.f32",
    "cvt.rmi.u32.f32",
    "cvt.rpi.u32.f32",
    "cvt.f16.f32",
    "cvt.f32.f16",
    "cvt.s32.f64",
    "cvt.u32.f64",
    "cvt.bf16.f32",
    "cvt.f32.bf16",
    "cvt.rz.f32.f64",
)

_REG_PREFIX = {_B: "%t", _F: "%f", _L: "%rd", _D: "%fd", _P: "%q"}
_SREG: dict[int, str] = {
    SR.TID_X: "%tid.x",
    SR.TID_Y: "%tid.y",
    SR.TID_Z: "%tid.z",
    SR.CTAID_X: "%ctaid.x",
    SR.CTAID_Y: "%ctaid.y",
    SR.CTAID_Z: "%ctaid.z",
}
_SREG |= {
    SR.NTID_X: "%ntid.x",
    SR.NTID_Y: "%ntid.y",
    SR.NTID_Z: "%ntid.z",
    SR.NCTAID_X: "%nctaid.x",
    SR.NCTAID_Y: "%nctaid.y",
    SR.NCTAID_Z: "%nctaid.z",
}
_ATOM = {AtomOp.ADD: "add.u32", AtomOp.AND: "and.b32", AtomOp.OR: "or.b32", AtomOp.XOR: "xor.b32"}
_ATOM |= {AtomOp.EXCH: "exch.b32", AtomOp.CAS: "cas.b32"}
_FLOAT_COMBINE = {ReduceOp.MIN: "min.f32", ReduceOp.MAX: "max.f32"}  # the ALU rows whose helper combines f32
_SCOPE = {Scope.WAVE: "cta", Scope.WORKGROUP: "cta", Scope.DEVICE: "gpu"}


def helper_name(key: str) -> str:
    return "wvp_" + re.sub(r"[^0-9a-zA-Z]", "_", key)


# ------------------------------------------------------------------ the helper library
@dataclass
class _Item:
    name: str
    text: str
    proto: str = ""  # a .func's prototype (declaration), empty for data


@cache
def _library() -> tuple[dict[str, _Item], dict[str, set[str]]]:
    """The generated helpers split into top-level items, with what each one references."""
    text = resources.files("wavegpu.backends").joinpath("ptx_helpers.ptx").read_text()
    items: dict[str, _Item] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith(".global") or line.startswith(".const"):
            m = re.search(r"(\w+)\s*(\[[^\]]*\])?\s*(=|;)", line)
            assert m, line
            items[m.group(1)] = _Item(m.group(1), line)
            i += 1
            continue
        if line.startswith((".func", ".visible .func")):
            j = i
            while not lines[j].startswith(("{", ";")) and not lines[j].rstrip().endswith(";"):
                j += 1
            head = "\n".join(lines[i:j]).replace(".visible ", "")
            m = re.search(r"\.func\s+(?:\([^)]*\)\s*)?(\w+)", head)
            assert m, head
            name = m.group(1)
            if lines[j].startswith("{"):
                k = j
                while lines[k] != "}":
                    k += 1
                items[name] = _Item(name, head + "\n" + "\n".join(lines[j : k + 1]), head + ";")
                i = k + 1
            else:
                i = j + 1
            continue
        i += 1
    deps = {
        n: {m for m in re.findall(r"\b(\w+)\b", it.text.split("\n", 1)[-1]) if m in items and m != n}
        for n, it in items.items()
    }
    return items, deps


def helper_text(used: set[str]) -> str:
    """The helper functions (and their data) that `used` needs, with prototypes first."""
    items, deps = _library()
    missing = sorted(u for u in used if u not in items)
    if missing:
        raise WaveError(f"ptx: the helper library lacks {', '.join(missing)} (run tools/gen_ptx_helpers.py)")
    need: set[str] = set()
    todo = list(used)
    while todo:
        n = todo.pop()
        if n not in need:
            need.add(n)
            todo += deps[n]
    order = [n for n in items if n in need]
    data = [items[n].text for n in order if not items[n].proto]
    funcs = [items[n] for n in order if items[n].proto]
    return "\n".join([f.proto for f in funcs] + data + [f.text for f in funcs])


# ------------------------------------------------------------------ the renderer
@dataclass
class _Region:
    cur: str | None  # the mask of the lanes in this region now; None: no mask kept (lift.MaskPlan)
    exit: str  # where a lane leaving by break/continue goes next (tracked) or the loop's exit (plain)
    leaves: bool = False  # a break/continue happens inside
    head: str = ""  # a plain region in a plain loop: the loop's head, where continue goes


# How mma.m16n8k8.f32.f16 renders (docs/backends.md, "MMA"): "exact" gives the emulator's bits
# through shuffles; "tensor" uses the tensor cores (mma.sync), within a measured bound of them.
MMA_PATHS = ("exact", "tensor")
MMA_PATH: contextvars.ContextVar[str] = contextvars.ContextVar("wavegpu_mma_path", default="exact")


def check_mma_path(path: object) -> str:
    """`path` when it is one of MMA_PATHS; else a WaveError naming the choices."""
    if not isinstance(path, str) or path not in MMA_PATHS:
        raise WaveError(f"ptx: unknown mma path {path!r} (one of {', '.join(MMA_PATHS)})")
    return path


@contextlib.contextmanager
def mma_path(path: str) -> Iterator[None]:
    """Render mma with `path` ("exact" or "tensor") inside the block: wg.translate(..., "ptx") and
    kernels launched on device="cuda" (`with ptx.mma_path("tensor"): ...`). The keyword
    `mma=` of wg.translate and wg.launch picks the path for one call and wins over the block."""
    token = MMA_PATH.set(check_mma_path(path))
    try:
        yield
    finally:
        MMA_PATH.reset(token)


# One item of the renderer's work stack: a node in its region, or a step that closes an if/loop.
_Step = tuple[Node, _Region] | Callable[[], None]


@dataclass
class PTXRenderer:
    arch: str = "sm_75"
    lines: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    helpers: set[str] = field(default_factory=set)
    label_n: int = 0
    entry: str = ""
    plan: MaskPlan = field(default_factory=lambda: MaskPlan(False, frozenset(), frozenset()))
    mma_policy: str = field(default_factory=MMA_PATH.get)
    nan: canonical.Plan = field(default_factory=lambda: canonical.Plan.off())
    pc: int = 0  # the pc of the instruction being rendered

    # -- registers and labels
    def tmp(self, ty: str) -> str:
        p = _REG_PREFIX.get(ty, ty)
        n = self.counts.get(p, 0)
        self.counts[p] = n + 1
        return f"{p}{n}"

    def label(self, what: str) -> str:
        self.label_n += 1
        return f"$L_{what}_{self.label_n}"

    def emit(self, *lines: str) -> None:
        for block in lines:
            for line in block.split("\n"):
                self.lines.append(line if line.endswith(":") else "\t" + line)

    # -- operands
    def b32(self, op: object) -> str:
        """A .b32 register holding a 32-bit source operand."""
        if isinstance(op, Imm):
            t = self.tmp(_B)
            self.emit(f"mov.b32 {t}, 0x{op.bits & 0xFFFFFFFF:08X};")
            return t
        if isinstance(op, Reg):
            if op.sel == 0:
                return f"%r{op.n}"
            _, off, width = SUBREGS[op.sel]
            t = self.tmp(_B)
            self.emit(f"bfe.u32 {t}, %r{op.n}, {off}, {width};")
            return t
        if isinstance(op, SReg):
            return self.sreg(op.id)
        raise TypeError(op)

    def b64(self, op: object) -> str:
        t = self.tmp(_L)
        if isinstance(op, Imm):
            self.emit(f"mov.b64 {t}, 0x{op.bits & 0xFFFFFFFFFFFFFFFF:016X};")
        else:
            assert isinstance(op, Pair)
            self.emit(f"mov.b64 {t}, {{%r{op.n}, %r{op.n + 1}}};")
        return t

    def typed(self, op: object, ty: str) -> str:
        if ty == _P:
            assert isinstance(op, Pred)
            return f"%p{op.n}"
        if ty == _B:
            return self.b32(op)
        if ty == _F:
            t = self.tmp(_F)
            self.emit(f"mov.b32 {t}, {self.b32(op)};")
            return t
        if ty == _L:
            return self.b64(op)
        t = self.tmp(_D)
        self.emit(f"mov.b64 {t}, {self.b64(op)};")
        return t

    def store(self, op: object, ty: str, value: str, *, canonical: bool = False) -> None:
        """Write a typed value to a WAVE destination (float results canonicalised unless the
        value cannot be a NaN: `canonical`).

        The check stays on every float row: the PTX ISA promises no canonical NaN (section 9.7.3,
        Floating-Point Instructions: "Single-precision instructions return an unspecified NaN",
        payloads are "supported for double-precision instructions"; 9.7.4: half precision
        "unspecified"). The CUDA programming guide's 0x7fffffff for f32 operations on NaN inputs
        is not the PTX contract and does not cover NaNs made from non-NaNs (docs/backends.md,
        "NaN results in PTX")."""
        if canonical:
            pass
        elif ty == _F:  # an unordered self-compare and a float select: what ptxas folds best
            q, t = self.tmp(_P), self.tmp(_F)
            self.emit(f"setp.nan.f32 {q}, {value}, {value};", f"selp.f32 {t}, 0f7FFFFFFF, {value}, {q};")
            value = t
        elif ty == _D:
            q, t = self.tmp(_P), self.tmp(_D)
            self.emit(f"setp.nan.f64 {q}, {value}, {value};", f"selp.f64 {t}, 0d7FFFFFFFFFFFFFFF, {value}, {q};")
            value = t
        if isinstance(op, Pred):
            self.emit(f"mov.pred %p{op.n}, {value};")
        elif isinstance(op, Pair):
            self.emit(f"mov.b64 {{%r{op.n}, %r{op.n + 1}}}, {value};")
        elif isinstance(op, Reg):
            if op.sel == 0:
                self.emit(f"mov.b32 %r{op.n}, {value};")
            else:
                _, off, width = SUBREGS[op.sel]
                self.emit(f"bfi.b32 %r{op.n}, {value}, %r{op.n}, {off}, {width};")
        else:
            raise TypeError(op)

    def sreg(self, sid: int) -> str:
        if sid in _SREG:
            t = self.tmp(_B)
            self.emit(f"mov.u32 {t}, {_SREG[sid]};")
            return t
        return {SR.WID: "%wv_wid", SR.LID: "%wv_lane", SR.NWAVES: "%wv_nwaves", SR.WAVE_WIDTH: "%wv_w"}[sid]

    # -- addresses
    def address(self, space: str, m: Mem) -> str:
        """The PTX address of a memory operand: 32-bit WAVE address (wrapping) into the space."""
        if m.base is None:
            a = self.tmp(_B)
            self.emit(f"mov.b32 {a}, 0x{m.offset & 0xFFFFFFFF:08X};")
        elif m.offset & 0xFFFFFFFF:
            a = self.tmp(_B)
            self.emit(f"add.u32 {a}, %r{m.base}, 0x{m.offset & 0xFFFFFFFF:08X};")
        else:
            a = f"%r{m.base}"
        if space == "local":
            s = self.tmp(_B)
            self.emit(f"add.u32 {s}, %wv_lbase, {a};")
            return s
        d = self.tmp(_L)
        self.emit(f"cvt.u64.u32 {d}, {a};", f"add.s64 {d}, {d}, {'%wv_mem' if space == 'global' else '%wv_cmem'};")
        return d

    # -- instructions
    def inst(self, inst: Instruction, region: _Region, pc: int = -1) -> None:
        spec = inst.spec
        key = spec.key
        self.pc = pc
        for r in self.nan.at_use.get(pc, ()):  # the canonicalisation plan: bits observed here
            f, q = self.tmp(_F), self.tmp(_P)
            self.emit(
                f"mov.b32 {f}, %r{r};", f"setp.nan.f32 {q}, {f}, {f};", f"selp.b32 %r{r}, 0x7FFFFFFF, %r{r}, {q};"
            )
        in_region = IN_REGION.get(spec.op)
        if in_region is not None:  # these handle the guard and the region themselves
            in_region(self, inst, region)
            return
        skip = None
        if inst.guard is not None and spec.nest is not Nest.RET:
            skip = self.label("skip")
            self.emit(f"@{'' if inst.guard.negated else '!'}%p{inst.guard.pred} bra {skip};")
        ops = inst.operands
        if key in NATIVE:
            dty, stys, text = NATIVE[key]
            srcs = [o for o, s in zip(ops, spec.operands) if s.role is Role.SRC]
            names = {n: self.typed(o, t) for n, o, t in zip("abc", srcs, stys)}
            d = self.tmp(dty)
            for t, ty in (("q", _P), ("q2", _P), ("t", _B)):  # temporaries a sequence needs
                if "{" + t + "}" in text:
                    names[t] = self.tmp(ty)
            self.emit(text.format(d=d, **names))
            bare = key in NEVER_NAN or self.nan.bare(pc, key)
            self.store(ops[spec.dests[0]], dty, d, canonical=bare)
        elif key in HELPER_ROWS:
            self.call_helper(inst)
        elif spec.op in STATEMENTS:
            STATEMENTS[spec.op](self, inst)
        else:
            raise WaveError(f"ptx: no rendering for {spec.name}")
        if skip:
            self.emit(f"{skip}:")

    def fence(self, inst: Instruction) -> None:
        scope = inst.spec.variant
        assert isinstance(scope, Scope)
        self.emit(f"fence.sc.{_SCOPE[scope]};")

    def ret(self, inst: Instruction) -> None:
        g = inst.guard
        self.emit("exit;" if g is None else f"@{'!' if g.negated else ''}%p{g.pred} exit;")

    def call_helper(self, inst: Instruction) -> None:
        spec = inst.spec
        fn = helper_name(spec.key)
        self.helpers.add(fn)
        args = []
        for o, s in zip(inst.operands, spec.operands):
            if s.role is not Role.SRC:
                continue
            wide = s.kind is Kind.PAIR or (isinstance(o, Imm) and o.width == 64)
            args.append(("b64", self.b64(o)) if wide else ("b32", self.b32(o)))
        dst = inst.operands[spec.dests[0]]
        rty = "b64" if isinstance(dst, Pair) else "b32"
        out = self.tmp(_L if rty == "b64" else _B)
        body = [f".param .{t} wv_a{i};" for i, (t, _) in enumerate(args)]
        body += [f"st.param.{t} [wv_a{i}], {v};" for i, (t, v) in enumerate(args)]
        body += [f".param .{rty} wv_ret;", f"call (wv_ret), {fn}, ({', '.join(f'wv_a{i}' for i in range(len(args)))});"]
        body += [f"ld.param.{rty} {out}, [wv_ret];"]
        self.emit("{", *body, "}")
        self.store(dst, _L if rty == "b64" else _B, out)

    def memory(self, inst: Instruction) -> None:
        spec = inst.spec
        space = spec.space
        assert space is not None and spec.mem_index is not None
        m = inst.operands[spec.mem_index]
        assert isinstance(m, Mem)
        ss = {"global": "global", "local": "shared", "const": "global.nc"}[space]
        a = self.address(space, m)
        vec = any(o.kind in (Kind.VEC2, Kind.VEC4) for o in spec.operands)
        if spec.cls is InstrClass.LOAD:
            dst = inst.operands[0]
            if spec.width <= 4:
                t = self.tmp(_B)
                self.emit(
                    f"ld.{ss}.{'u32' if spec.width == 4 else spec.operands[spec.mem_index].dtype.text} {t}, [{a}];"
                )
                self.store(dst, _B, t)
            elif not vec:
                t = self.tmp(_L)
                self.emit(f"ld.{ss}.u64 {t}, [{a}];")
                self.store(dst, _L, t)
            else:
                assert isinstance(dst, Vec)
                # WAVE's .v2/.v4 accesses are naturally aligned (the emulator traps otherwise):
                # one 64- or 128-bit access (LDG.E.64/.128, LDS.64/.128 in the SASS)
                regs = ", ".join(f"%r{dst.n + i}" for i in range(dst.count))
                self.emit(f"ld.{ss}.v{dst.count}.u32 {{{regs}}}, [{a}];")
            return
        val = inst.operands[1]
        if spec.width <= 4:
            self.emit(
                f"st.{ss}.{'u8' if spec.width == 1 else 'u16' if spec.width == 2 else 'u32'} [{a}], {self.b32(val)};"
            )
        elif not vec:
            self.emit(f"st.{ss}.u64 [{a}], {self.b64(val)};")
        else:
            n = spec.width // 4
            parts = []
            for i in range(n):
                if isinstance(val, Imm):
                    parts.append(self.b32(Imm((val.bits >> (32 * i)) & 0xFFFFFFFF)))
                else:
                    assert isinstance(val, Vec)
                    parts.append(f"%r{val.n + i}")
            self.emit(f"st.{ss}.v{n}.u32 [{a}], {{{', '.join(parts)}}};")

    def atomic(self, inst: Instruction) -> None:
        spec = inst.spec
        space = spec.space
        assert space is not None and spec.mem_index is not None
        op = spec.variant
        assert isinstance(op, AtomOp) and spec.dtype is not None
        mi = spec.mem_index
        m = inst.operands[mi]
        assert isinstance(m, Mem)
        args = [self.b32(o) for o in inst.operands[mi + 1 :]]
        ss = "global" if space == "global" else "shared"
        scope = "gpu" if space == "global" else "cta"
        a = self.address(space, m)
        old = self.tmp(_B)
        if op is AtomOp.ADD and spec.dtype is DataType.F32:  # a CAS loop keeps subnormals and canonical NaNs
            top, prev, new = self.label("atomf"), self.tmp(_B), self.tmp(_B)
            fa, fb, fs, q, nq = self.tmp(_F), self.tmp(_F), self.tmp(_F), self.tmp(_P), self.tmp(_P)
            self.emit(f"ld.volatile.{ss}.u32 {old}, [{a}];", f"{top}:", f"mov.b32 {prev}, {old};")
            self.emit(f"mov.b32 {fa}, {prev};", f"mov.b32 {fb}, {args[0]};", f"add.rn.f32 {fs}, {fa}, {fb};")
            self.emit(f"setp.nan.f32 {nq}, {fs}, {fs};", f"selp.f32 {fs}, 0f7FFFFFFF, {fs}, {nq};")
            self.emit(f"mov.b32 {new}, {fs};")
            self.emit(f"atom.relaxed.{scope}.{ss}.cas.b32 {old}, [{a}], {prev}, {new};")
            self.emit(f"setp.ne.u32 {q}, {old}, {prev};", f"@{q} bra {top};")
        elif op is AtomOp.SUB:  # PTX has no atom.sub: negate, then add
            n = self.tmp(_B)
            self.emit(f"neg.s32 {n}, {args[0]};", f"atom.relaxed.{scope}.{ss}.add.u32 {old}, [{a}], {n};")
        else:
            ty = _ATOM[op] if op not in (AtomOp.MIN, AtomOp.MAX) else f"{op.value}.{spec.dtype.text}"
            self.emit(f"atom.relaxed.{scope}.{ss}.{ty} {old}, [{a}], {', '.join(args)};")
        if spec.op is Op.ATOM:
            self.store(inst.operands[0], _B, old)

    def mma(self, inst: Instruction, region: _Region) -> None:
        """mma.m16n8k8.f32.f16 by the renderer's MMA policy (mma_path): "exact" computes what the
        emulator computes, through shuffles among the active lanes as the C dialects do (the
        lane holding D[g][2t+j], g = lane / 4, t = lane % 4, reads row g of A from lanes
        4g..4g+3 and column 2t+j of B from lanes 4(2t+j)..4(2t+j)+3, and sums C and the eight
        exact products in k order in double, one rounding to f32); "tensor" is the hardware's
        `mma.sync`, whose accumulation order and rounding differ (docs/backends.md: its bound)."""
        d, a, b, c = inst.operands
        assert isinstance(d, Vec) and isinstance(a, Vec) and isinstance(b, Vec) and isinstance(c, Vec)
        assert region.cur is not None, "mma reads the active set (lift.MASK_USERS)"
        g = inst.guard
        skip = None
        if g is not None:
            skip = self.label("skip")
            self.emit(f"@{'' if g.negated else '!'}%p{g.pred} bra {skip};")
        if self.mma_policy == "tensor":
            cf = [self.typed(Reg(c.n + i), _F) for i in range(4)]
            df = [self.tmp(_F) for _ in range(4)]
            self.emit(
                "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 "
                f"{{{', '.join(df)}}}, {{%r{a.n}, %r{a.n + 1}}}, {{%r{b.n}}}, {{{', '.join(cf)}}};"
            )
            for i in range(4):
                self.store(Reg(d.n + i), _F, df[i])
        else:
            act, grp, t4 = self.tmp(_B), self.tmp(_B), self.tmp(_B)
            self.emit(f"vote.sync.ballot.b32 {act}, 1, {region.cur};")
            self.emit(f"shr.u32 {grp}, %wv_lane, 2;", f"and.b32 {t4}, %wv_lane, 3;")
            acc = []
            for i in range(4):
                f, x = self.tmp(_F), self.tmp(_D)
                self.emit(f"mov.b32 {f}, %r{c.n + i};", f"cvt.f64.f32 {x}, {f};")
                acc.append(x)
            src = [self.tmp(_B) for _ in range(3)]
            self.emit(f"shl.b32 {src[0]}, {grp}, 2;", f"shl.b32 {src[1]}, {t4}, 3;", f"add.u32 {src[2]}, {src[1]}, 4;")
            for k in range(4):
                lanes = []
                for base in src:
                    ln = self.tmp(_B)
                    self.emit(f"add.u32 {ln}, {base}, {k};")
                    lanes.append(ln)
                words = []
                for reg, ln in ((a.n, lanes[0]), (a.n + 1, lanes[0]), (b.n, lanes[1]), (b.n, lanes[2])):
                    w = self.tmp(_B)
                    self.emit(f"shfl.sync.idx.b32 {w}, %r{reg}, {ln}, 31, {act};")
                    words.append(w)
                halves = []  # [word][h] as f64
                for w in words:
                    lo, hi = self.tmp("%h"), self.tmp("%h")
                    self.emit(f"mov.b32 {{{lo}, {hi}}}, {w};")
                    pair = []
                    for h in (lo, hi):
                        x = self.tmp(_D)
                        self.emit(f"cvt.f64.f16 {x}, {h};")
                        pair.append(x)
                    halves.append(pair)
                for h in range(2):
                    x0, x1, y0, y1 = (halves[i][h] for i in range(4))
                    for out, (u, v) in zip(acc, ((x0, y0), (x0, y1), (x1, y0), (x1, y1))):
                        self.emit(f"fma.rn.f64 {out}, {u}, {v}, {out};")  # the product is exact
            for i in range(4):
                r = self.tmp(_F)
                self.emit(f"cvt.rn.f32.f64 {r}, {acc[i]};")
                self.store(Reg(d.n + i), _F, r)
        if skip:
            self.emit(f"{skip}:")

    # -- wave operations (on the exact active set of the current region)
    def wave(self, inst: Instruction, region: _Region) -> None:
        spec = inst.spec
        op = spec.op
        act = self.tmp(_B)
        g = inst.guard
        gp = "1" if g is None else f"{'!' if g.negated else ''}%p{g.pred}"
        self.emit(f"vote.sync.ballot.b32 {act}, {gp}, {region.cur};")
        skip = None
        if g is not None:
            skip = self.label("skip")
            self.emit(f"@{'' if g.negated else '!'}%p{g.pred} bra {skip};")
        dst = inst.operands[0]
        srcs = [o for o, s in zip(inst.operands, spec.operands) if s.role is Role.SRC]
        if op in (Op.BALLOT, Op.ANY, Op.ALL):
            assert isinstance(srcs[0], Pred)
            p = f"%p{srcs[0].n}"
            if op is Op.BALLOT:
                t = self.tmp(_B)
                self.emit(f"vote.sync.ballot.b32 {t}, {p}, {act};")
                self.store(dst, _B, t)
            else:
                q = self.tmp(_P)
                self.emit(f"vote.sync.{'any' if op is Op.ANY else 'all'}.pred {q}, {p}, {act};")
                self.store(dst, _P, q)
        elif op in (Op.SHUFFLE, Op.BROADCAST):
            x, b = self.b32(srcs[0]), self.b32(srcs[1])
            src = self.tmp(_B)
            lane = "%wv_lane"
            mode = spec.variant
            if mode is ShuffleMode.IDX:
                self.emit(f"and.b32 {src}, {b}, 31;")
            else:  # out of the wave: the lane's own value (the full b, unlike shfl's 5 bits)
                q, t = self.tmp(_P), self.tmp(_B)
                if mode is ShuffleMode.XOR:
                    self.emit(f"xor.b32 {t}, {lane}, {b};", f"setp.lt.u32 {q}, {t}, 32;")
                elif mode is ShuffleMode.UP:
                    self.emit(f"sub.u32 {t}, {lane}, {b};", f"setp.le.u32 {q}, {b}, {lane};")
                else:
                    r = self.tmp(_B)
                    self.emit(f"add.u32 {t}, {lane}, {b};", f"sub.u32 {r}, 32, {lane};", f"setp.lt.u32 {q}, {b}, {r};")
                self.emit(f"selp.b32 {src}, {t}, {lane}, {q};")
            out = self.tmp(_B)
            self.emit(f"shfl.sync.idx.b32 {out}, {x}, {src}, 31, {act};")
            self.store(dst, _B, out)
        else:  # wave.reduce, wave.prefix
            red = sem.reduction_of(spec)
            self.store(dst, _B, self.lane_loop(act, self.b32(srcs[0]), red, prefix=op is Op.PREFIX))
        if skip:
            self.emit(f"{skip}:")

    def combine(self, red: sem.Reduction, acc: str, v: str) -> None:
        if red.dtype is DataType.F32:
            fn = helper_name(_FLOAT_COMBINE[red.op])
            self.helpers.add(fn)
            self.emit(
                "{",
                ".param .b32 wv_a0;",
                ".param .b32 wv_a1;",
                ".param .b32 wv_ret;",
                f"st.param.b32 [wv_a0], {acc};",
                f"st.param.b32 [wv_a1], {v};",
                f"call (wv_ret), {fn}, (wv_a0, wv_a1);",
                f"ld.param.b32 {acc}, [wv_ret];",
                "}",
            )
        elif red.op in (ReduceOp.MIN, ReduceOp.MAX):
            self.emit(f"{red.op.value}.{red.dtype.text} {acc}, {acc}, {v};")
        elif red.op in (ReduceOp.AND, ReduceOp.OR, ReduceOp.XOR):
            self.emit(f"{red.op.value}.b32 {acc}, {acc}, {v};")
        else:
            self.emit(f"add.u32 {acc}, {acc}, {v};")

    def lane_loop(self, act: str, x: str, red: sem.Reduction, *, prefix: bool = False) -> str:
        """A reduction (or the exclusive prefix sum) over the lanes in act: every lane of act
        runs the same 32 steps and combines the values of the lanes in act (of the lanes
        below it, for the prefix sum). The combinations are order-independent."""
        acc, i, v, bit = self.tmp(_B), self.tmp(_B), self.tmp(_B), self.tmp(_B)
        q, done = self.tmp(_P), self.tmp(_P)
        top, nxt = self.label("lanes"), self.label("lanes_next")
        self.emit(f"mov.b32 {acc}, 0x{red.identity:08X};", f"mov.b32 {i}, 0;", f"{top}:")
        self.emit(f"shfl.sync.idx.b32 {v}, {x}, {i}, 31, {act};")
        self.emit(f"shr.b32 {bit}, {act}, {i};", f"and.b32 {bit}, {bit}, 1;", f"setp.eq.u32 {q}, {bit}, 0;")
        if prefix:
            lt = self.tmp(_P)
            self.emit(f"setp.ge.u32 {lt}, {i}, %wv_lane;", f"or.pred {q}, {q}, {lt};")
        self.emit(f"@{q} bra {nxt};")
        self.combine(red, acc, v)
        self.emit(f"{nxt}:", f"add.u32 {i}, {i}, 1;", f"setp.lt.u32 {done}, {i}, 32;", f"@{done} bra {top};")
        return acc

    # -- structure
    def leave(self, inst: Instruction, role: Nest, region: _Region) -> None:
        """break/continue p: the lanes where p holds (and the guard) leave the region."""
        p = inst.operands[0]
        assert isinstance(p, Pred)
        cond = f"%p{p.n}"
        if inst.guard is not None:
            cond = self.tmp(_P)
            g = inst.guard
            self.emit(f"and.pred {cond}, %p{p.n}, {'!' if g.negated else ''}%p{g.pred};")
        if region.cur is None:  # a loop no wave operation reads the lanes of: a plain branch
            self.emit(f"@{cond} bra {region.exit if role is Nest.BREAK else region.head};")
            return
        flag = "%wv_brk" if role is Nest.BREAK else "%wv_cnt"
        self.emit(f"vote.sync.ballot.b32 {region.cur}, !{cond}, {region.cur};")
        self.emit(f"or.pred {flag}, {flag}, {cond};", f"@{cond} bra {region.exit};")
        region.leaves = True

    def nodes(self, ns: list[Node], region: _Region) -> None:
        """The tree in order. A work stack of (node, region) pairs and of the steps that close an
        if or a loop (run after its children) replaces recursion, so any nesting depth renders."""
        work: list[_Step] = [(n, region) for n in reversed(ns)]
        while work:
            item = work.pop()
            if callable(item):
                item()
                continue
            n, r = item
            if isinstance(n, Stmt):
                self.inst(n.inst, r, n.pc)
            elif not self.plan.tracks(n):
                work.extend(reversed(self.plain_if(n, r) if isinstance(n, If) else self.plain_loop(n)))
            else:
                assert r.cur is not None, "a tracked region's parent is tracked (MaskPlan)"
                work.extend(reversed(self.if_(n, r) if isinstance(n, If) else self.loop(n, r)))

    def plain_if(self, n: If, region: _Region) -> list[_Step]:
        """An if no wave operation reads the lanes of (lift.MaskPlan): a branch and a join. Its
        breaks and continues leave a plain loop, so they branch straight to that loop's labels."""
        join, other = self.label("endif"), self.label("else")
        self.emit(f"@!%p{n.pred} bra {other if n.other else join};")
        inner = _Region(None, region.exit, head=region.head)
        steps: list[_Step] = [(c, inner) for c in n.then]
        if n.other:
            steps.append(lambda: self.emit(f"bra {join};", f"{other}:"))
            steps += [(c, inner) for c in n.other]
        steps.append(lambda: self.emit(f"{join}:"))
        return steps

    def plain_loop(self, n: Loop) -> list[_Step]:
        """A loop no wave operation reads the lanes of: a head, a back branch and an exit."""
        head, out = self.label("loop"), self.label("endloop")
        self.emit(f"{head}:")
        body = _Region(None, out, head=head)
        return [*((c, body) for c in n.body), lambda: self.emit(f"bra {head};", f"{out}:")]

    def if_(self, n: If, region: _Region) -> list[_Step]:
        """Emit the head of an if; return its children and the steps that follow them."""
        join, other = self.label("endif"), self.label("else")
        then_m, else_m, t = self.tmp("%m"), self.tmp("%m"), self.tmp(_B)
        self.emit(f"vote.sync.ballot.b32 {then_m}, %p{n.pred}, {region.cur};")
        self.emit(f"not.b32 {t}, {then_m};", f"and.b32 {else_m}, {region.cur}, {t};")
        self.emit(f"@!%p{n.pred} bra {other if n.other else join};")
        then_r, else_r = _Region(then_m, join), _Region(else_m, join)

        def close() -> None:
            self.emit(f"{join}:")
            if then_r.leaves or else_r.leaves:  # lanes that left pass through: recompute and go on
                lv = self.tmp(_P)
                self.emit(f"or.pred {lv}, %wv_brk, %wv_cnt;")
                self.emit(f"vote.sync.ballot.b32 {region.cur}, !{lv}, {region.cur};", f"@{lv} bra {region.exit};")
                region.leaves = True

        steps: list[_Step] = [(c, then_r) for c in n.then]
        if n.other:
            steps.append(lambda: self.emit(f"bra {join};", f"{other}:"))
            steps += [(c, else_r) for c in n.other]
        steps.append(close)
        return steps

    def loop(self, n: Loop, region: _Region) -> list[_Step]:
        """Emit the head of a loop; return its body and the step that closes it."""
        head, latch, out = self.label("loop"), self.label("latch"), self.label("endloop")
        entry, cur = self.tmp("%m"), self.tmp("%m")
        self.emit(f"mov.b32 {entry}, {region.cur};", f"{head}:", f"mov.b32 {cur}, {entry};")

        def close() -> None:
            self.emit(f"{latch}:", f"vote.sync.ballot.b32 {entry}, !%wv_brk, {entry};")
            self.emit("mov.pred %wv_cnt, 0;", f"@!%wv_brk bra {head};", f"{out}:", "mov.pred %wv_brk, 0;")

        body = _Region(cur, latch)
        return [*((c, body) for c in n.body), close]

    def render(self, k: Kernel, wave_width: int = 32, nargs: int | None = None) -> Rendered:
        if wave_width != 32:
            raise WaveError(f"ptx: NVIDIA warps have 32 lanes; cannot render for a wave width of {wave_width}")
        if self.arch not in ARCHES:
            raise WaveError(f"ptx: unknown architecture {self.arch!r} (sm_75 or newer: {', '.join(ARCHES)})")
        for inst in k.instructions:
            for o in inst.operands:
                if isinstance(o, SReg) and o.id == SR.CLOCK:
                    raise WaveError(f"ptx: kernel {k.name!r} reads %clock, which has no ptx equivalent")
        self.lines, self.counts, self.helpers, self.label_n = [], {}, set(), 0
        tree = lift(k)
        params = preset_count(k, tree) if nargs is None else nargs
        nregs = max(k.registers, params, 1)
        self.emit("ld.param.u64 %wv_mem, [wv_mem_param];", "cvta.to.global.u64 %wv_mem, %wv_mem;")
        self.emit("ld.param.u64 %wv_cmem, [wv_cmem_param];", "cvta.to.global.u64 %wv_cmem, %wv_cmem;")
        for i in range(nregs):
            self.emit(f"ld.param.u32 %r{i}, [a{i}];" if i < params else f"mov.b32 %r{i}, 0;")
        self.emit("mov.u32 %wv_w, 32;")
        for i in range(max(k.predicates, 1)):
            self.emit(f"setp.ne.u32 %p{i}, %wv_w, %wv_w;")
        self.emit("mov.pred %wv_brk, 0;", "mov.pred %wv_cnt, 0;")
        # lane, wave, waves and the entry mask from the linear thread index (x fastest)
        self.emit(
            "mov.u32 %wv_lin, %ntid.y;",
            "mov.u32 %wv_n, %tid.z;",
            "mov.u32 %wv_lane, %tid.y;",
            "mad.lo.u32 %wv_lin, %wv_lin, %wv_n, %wv_lane;",
            "mov.u32 %wv_n, %ntid.x;",
            "mov.u32 %wv_lane, %tid.x;",
            "mad.lo.u32 %wv_lin, %wv_lin, %wv_n, %wv_lane;",
            "and.b32 %wv_lane, %wv_lin, 31;",
            "shr.u32 %wv_wid, %wv_lin, 5;",
            "mov.u32 %wv_n, %ntid.y;",
            "mov.u32 %wv_nwaves, %ntid.x;",
            "mul.lo.u32 %wv_n, %wv_n, %wv_nwaves;",
            "mov.u32 %wv_nwaves, %ntid.z;",
            "mul.lo.u32 %wv_n, %wv_n, %wv_nwaves;",
            "add.u32 %wv_nwaves, %wv_n, 31;",
            "shr.u32 %wv_nwaves, %wv_nwaves, 5;",
            "sub.u32 %wv_n, %wv_n, %wv_lin;",
            "add.u32 %wv_n, %wv_n, %wv_lane;",
            "min.u32 %wv_n, %wv_n, 32;",
            "setp.eq.u32 %wv_full, %wv_n, 32;",
            "shl.b32 %wv_m0, 1, %wv_n;",
            "sub.u32 %wv_m0, %wv_m0, 1;",
            "selp.b32 %wv_m0, 0xFFFFFFFF, %wv_m0, %wv_full;",
        )
        if k.local_memory:
            self.emit("mov.u32 %wv_lbase, wv_lmem;")
        self.plan = mask_plan(tree)
        self.nan = canonical.plan(k.instructions)
        top = _Region("%wv_m0" if self.plan.root else None, "$L_end")
        self.nodes(tree, top)
        self.emit("$L_end:", "exit;")
        body = self.lines
        decl = [
            f"\t.reg .b32 %r<{nregs}>;",
            f"\t.reg .pred %p<{max(k.predicates, 1)}>;",
            "\t.reg .b64 %wv_mem, %wv_cmem;",
            "\t.reg .b32 %wv_w, %wv_lin, %wv_n, %wv_lane, %wv_wid, %wv_nwaves, %wv_m0, %wv_lbase;",
            "\t.reg .pred %wv_brk, %wv_cnt, %wv_full;",
        ]
        kinds = {"%t": "b32", "%f": "f32", "%rd": "b64", "%fd": "f64", "%q": "pred", "%m": "b32", "%h": "b16"}
        decl += [f"\t.reg .{kinds[p]} {p}<{n}>;" for p, n in sorted(self.counts.items())]
        if k.local_memory:
            decl.append(f"\t.shared .align 16 .b8 wv_lmem[{k.local_memory}];")
        plist = ["\t.param .u64 wv_mem_param", "\t.param .u64 wv_cmem_param"]
        plist += [f"\t.param .u32 a{i}" for i in range(params)]
        bounds = ""
        if k.workgroup_size is not None:
            bounds = f".maxntid {k.workgroup_size[0]}, {k.workgroup_size[1]}, {k.workgroup_size[2]}\n"
        self.entry = "\n".join(
            [f".visible .entry {k.name}(", ",\n".join(plist), f")\n{bounds}{{", *decl, "", *body, "}", ""]
        )
        return Rendered(module(self.arch, [self.entry], self.helpers), k.name, wave_width)

    def render_module(self, kernels: Sequence[Kernel], wave_width: int = 32) -> str:
        return render_module(list(kernels), arch=self.arch, wave_width=wave_width, mma=self.mma_policy)

    def coverage(self) -> dict[str, str]:
        return coverage()


def module(arch: str, entries: list[str], helpers: set[str]) -> str:
    """A PTX module: header, the helpers the entries call, the entries."""
    head = [f".version {PTX_VERSION}", f".target {arch}", ".address_size 64", ""]
    if helpers:
        head += [helper_text(helpers), ""]
    return "\n".join(head + entries)


def render_module(kernels: list[Kernel], arch: str = "sm_75", wave_width: int = 32, mma: str | None = None) -> str:
    """One PTX module holding every kernel (the helpers once); `mma` None: the mma_path in effect."""
    entries: list[str] = []
    helpers: set[str] = set()
    policy = check_mma_path(mma) if mma is not None else MMA_PATH.get()
    for k in kernels:
        r = PTXRenderer(arch=arch, mma_policy=policy)
        r.render(k, wave_width)
        entries.append(r.entry)
        helpers |= r.helpers
    return module(arch, entries, helpers)


# Operation -> the PTXRenderer method writing its rows (rows neither inline nor helpers), after
# the guard's skip; IN_REGION's take the current region and handle the guard themselves.
STATEMENTS: dict[Op, Callable[[PTXRenderer, Instruction], None]] = {
    Op.LD: PTXRenderer.memory,
    Op.ST: PTXRenderer.memory,
    Op.ATOM: PTXRenderer.atomic,
    Op.RED: PTXRenderer.atomic,
    Op.BARRIER: lambda r, inst: r.emit("barrier.sync 0;"),
    Op.FENCE: PTXRenderer.fence,
    Op.NOP: lambda r, inst: None,
    Op.RET: PTXRenderer.ret,
}
IN_REGION: dict[Op, Callable[[PTXRenderer, Instruction, _Region], None]] = {
    **{o: PTXRenderer.wave for o in (Op.REDUCE, Op.BROADCAST, Op.SHUFFLE, Op.PREFIX, Op.BALLOT)},
    Op.ANY: PTXRenderer.wave,
    Op.ALL: PTXRenderer.wave,
    Op.MMA: PTXRenderer.mma,
    Op.BREAK: lambda r, inst, region: r.leave(inst, Nest.BREAK, region),
    Op.CONTINUE: lambda r, inst, region: r.leave(inst, Nest.CONTINUE, region),
}
# Operations the tree walk renders (if/else/endif, loop/endloop).
TREE = frozenset(o for o, n in NEST_OF.items() if n in (Nest.OPEN_IF, Nest.ELSE, Nest.CLOSE, Nest.OPEN_LOOP))


def coverage() -> dict[str, str]:
    """(row key -> how the PTX renderer does it) for every row."""
    out = {}
    for r in ROWS:
        if r.key in NATIVE:
            out[r.key] = "inline"
        elif r.key in HELPER_ROWS:
            out[r.key] = "helper " + helper_name(r.key)
        elif r.op in STATEMENTS or r.op in IN_REGION or r.op in TREE:
            out[r.key] = "statement"
        else:
            out[r.key] = "missing"
    return out
