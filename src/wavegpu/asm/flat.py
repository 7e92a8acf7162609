"""The flat dialect of the Rust WAVE toolchain (COMPAT.md), mapped onto canonical rows.

Each entry: dialect mnemonic -> forms by operand count: (row key, order, scope). `order`
lists, for each operand of the row, the index of the dialect operand that fills it (operand
kinds such as pairs, vectors and memory operands are made from bare registers by the row's
operand kinds). `scope` means a trailing scope operand is accepted and dropped.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FlatForm:
    key: str
    order: tuple[int, ...] | None = None  # None: identity
    scope: bool = False


FLAT: dict[str, dict[int, FlatForm]] = {}


def _f(mn: str, key: str, n: int, order: tuple[int, ...] | None = None, scope: bool = False) -> None:
    FLAT.setdefault(mn, {})[n + (1 if scope else 0)] = FlatForm(key, order, scope)


for _mn, _key, _n in (
    ("iadd", "add.s32", 3),
    ("isub", "sub.s32", 3),
    ("imul", "mul.lo.s32", 3),
    ("imul_hi", "mul.hi.u32", 3),
    ("imad", "mad.lo.s32", 4),
    ("idiv", "div.s32", 3),
    ("imod", "rem.s32", 3),
    ("ineg", "neg.s32", 2),
    ("iabs", "abs.s32", 2),
    ("imin", "min.s32", 3),
    ("imax", "max.s32", 3),
    ("iclamp", "clamp.s32", 4),
    ("fadd", "add.f32", 3),
    ("fsub", "sub.f32", 3),
    ("fmul", "mul.f32", 3),
    ("fdiv", "div.f32", 3),
    ("fmin", "min.f32", 3),
    ("fmax", "max.f32", 3),
    ("fma", "fma.f32", 4),
    ("fneg", "neg.f32", 2),
    ("fabs", "abs.f32", 2),
    ("fsqrt", "sqrt.f32", 2),
    ("frsqrt", "rsqrt.f32", 2),
    ("frcp", "rcp.f32", 2),
    ("fsin", "sin.f32", 2),
    ("fcos", "cos.f32", 2),
    ("fexp2", "exp2.f32", 2),
    ("flog2", "log2.f32", 2),
    ("ffloor", "cvt.rmi.f32.f32", 2),
    ("fceil", "cvt.rpi.f32.f32", 2),
    ("fround", "cvt.rni.f32.f32", 2),
    ("ftrunc", "cvt.rzi.f32.f32", 2),
    ("ffract", "fract.f32", 2),
    ("fsat", "sat.f32", 2),
    ("fclamp", "clamp.f32", 4),
    ("hadd", "add.f16", 3),
    ("hsub", "sub.f16", 3),
    ("hmul", "mul.f16", 3),
    ("hma", "fma.f16", 4),
    ("hadd2", "add.f16x2", 3),
    ("hmul2", "mul.f16x2", 3),
    ("hma2", "fma.f16x2", 4),
    ("badd", "add.bf16", 3),
    ("bsub", "sub.bf16", 3),
    ("bmul", "mul.bf16", 3),
    ("bma", "fma.bf16", 4),
    ("badd2", "add.bf16x2", 3),
    ("bmul2", "mul.bf16x2", 3),
    ("bma2", "fma.bf16x2", 4),
    ("dadd", "add.f64", 3),
    ("dsub", "sub.f64", 3),
    ("dmul", "mul.f64", 3),
    ("ddiv", "div.f64", 3),
    ("dma", "fma.f64", 4),
    ("dsqrt", "sqrt.f64", 2),
    ("and", "and.b32", 3),
    ("or", "or.b32", 3),
    ("xor", "xor.b32", 3),
    ("shl", "shl.b32", 3),
    ("not", "not.b32", 2),
    ("shr", "shr.u32", 3),
    ("sar", "shr.s32", 3),
    ("bitcount", "popc.b32", 2),
    ("bitfind", "clz.b32", 2),
    ("bitrev", "brev.b32", 2),
    ("bfe", "bfe.u32", 4),
    ("ucmp_lt", "setp.lt.u32", 3),
    ("ucmp_le", "setp.le.u32", 3),
    ("fcmp_ne", "setp.neu.f32", 3),
    ("fcmp_ord", "setp.num.f32", 3),
    ("fcmp_unord", "setp.nan.f32", 3),
    ("cvt_f32_i32", "cvt.f32.s32", 2),
    ("cvt_f32_u32", "cvt.f32.u32", 2),
    ("cvt_i32_f32", "cvt.s32.f32", 2),
    ("cvt_u32_f32", "cvt.u32.f32", 2),
    ("cvt_f32_f16", "cvt.f32.f16", 2),
    ("cvt_f16_f32", "cvt.f16.f32", 2),
    ("cvt_f32_f64", "cvt.f32.f64", 2),
    ("cvt_f64_f32", "cvt.f64.f32", 2),
    ("wave_shuffle", "wave.shuffle.b32", 3),
    ("wave_shuffle_up", "wave.shuffle.up.b32", 3),
    ("wave_shuffle_down", "wave.shuffle.down.b32", 3),
    ("wave_shuffle_xor", "wave.shuffle.xor.b32", 3),
    ("wave_broadcast", "wave.broadcast.b32", 3),
    ("wave_ballot", "wave.ballot.b32", 2),
    ("wave_any", "wave.any", 2),
    ("wave_all", "wave.all", 2),
    ("wave_prefix_sum", "wave.prefix.add.u32", 2),
    ("wave_reduce_add", "wave.reduce.add.u32", 2),
    ("wave_reduce_min", "wave.reduce.min.u32", 2),
    ("wave_reduce_max", "wave.reduce.max.u32", 2),
    ("return", "ret", 0),
    ("halt", "ret", 0),
    ("wait", "nop", 0),
    ("mov_imm", "mov.b32", 2),
    ("mov_sr", "mov.b32.sreg", 2),
):
    _f(_mn, _key, _n)

for _c in ("eq", "ne", "lt", "le", "gt", "ge"):
    _f(f"icmp_{_c}", f"setp.{_c}.s32", 3)
for _c in ("eq", "lt", "le", "gt", "ge"):
    _f(f"fcmp_{_c}", f"setp.{_c}.f32", 3)
_f("bfi", "bfi.b32", 5, (0, 2, 3, 4, 1))  # bfi rD, rBase, rInsert, rOffset, rWidth
_f("select", "selp.b32", 4, (0, 2, 3, 1))  # select rD, pS, rTrue, rFalse
for _w, _sfx in (("u8", "u8"), ("u16", "u16"), ("u32", "b32"), ("u64", "b64")):
    _f(f"local_load_{_w}", f"ld.local.{_sfx}", 2)
    _f(f"device_load_{_w}", f"ld.global.{_sfx}", 2)
for _w, _sfx in (("u8", "b8"), ("u16", "b16"), ("u32", "b32"), ("u64", "b64")):
    _f(f"local_store_{_w}", f"st.local.{_sfx}", 2)
    _f(f"device_store_{_w}", f"st.global.{_sfx}", 2)
_f("device_load_u128", "ld.global.v4.b32", 2)
_f("device_store_u128", "st.global.v4.b32", 2)
for _op, _sfx in (
    ("add", "add.u32"),
    ("sub", "sub.u32"),
    ("min", "min.u32"),
    ("max", "max.u32"),
    ("and", "and.b32"),
    ("or", "or.b32"),
    ("xor", "xor.b32"),
    ("exchange", "exch.b32"),
):
    _f(f"local_atomic_{_op}", f"atom.local.{_sfx}", 3)
    _f(f"local_atomic_{_op}", f"red.local.{_sfx}", 2)
    _f(f"atomic_{_op}", f"atom.global.{_sfx}", 3, scope=True)
    _f(f"atomic_{_op}", f"red.global.{_sfx}", 2, scope=True)
_f("local_atomic_cas", "atom.local.cas.b32", 4)
_f("local_atomic_cas", "red.local.cas.b32", 3)
_f("atomic_cas", "atom.global.cas.b32", 4, scope=True)
_f("atomic_cas", "red.global.cas.b32", 3, scope=True)
for _fence in ("fence_acquire", "fence_release", "fence_acq_rel"):
    FLAT[_fence] = {}  # handled by the assembler: the scope picks the row

# `mov rD, rA` / `mov rD, sr_X` are resolved by operand shape in the assembler; `if`, `else`,
# `endif`, `loop`, `endloop`, `break`, `continue`, `barrier` and `nop` are canonical mnemonics.

NOT_IN_WAVE = {
    "call": "'call' (subroutines) is not part of WAVE v0.1: kernels have no calls",
    "mma_load_a": "the Rust toolchain's 4x4 'mma_*' instructions are not part of WAVE v0.1; use mma.m16n8k8.f32.f16",
    "mma_load_b": "the Rust toolchain's 4x4 'mma_*' instructions are not part of WAVE v0.1; use mma.m16n8k8.f32.f16",
    "mma_compute": "the Rust toolchain's 4x4 'mma_*' instructions are not part of WAVE v0.1; use mma.m16n8k8.f32.f16",
    "mma_store_c": "the Rust toolchain's 4x4 'mma_*' instructions are not part of WAVE v0.1; use mma.m16n8k8.f32.f16",
}

SCOPES = {"wave": "wave", "workgroup": "workgroup", "device": "device", "system": "device"}
CACHE_HINTS = {".cached", ".uncached", ".streaming"}
