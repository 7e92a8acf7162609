"""The AMDGCN subset this backend emits: every mnemonic with its encoding family and operand
form (llvm-mc syntax), for the assembler checks and for an interpreter of our output.

Operand forms: `vD`/`sD` a VGPR/SGPR destination (`v[D:D+n]` tuples, even-aligned), `src` any of
VGPR, SGPR, inline constant or (VOP1/VOP2 src0 only) a literal, `vsrc` a VGPR, `ssrc` an SGPR or
constant, `sP` an SGPR pair (lane mask), `lbl` a label, `addr` a VGPR address, `mods`:
`offset:N` (DS: 0..65535; global: -4096..4095), `glc` (gfx90a) / `sc0` (gfx942, gfx950) on
returning atomics, `clamp`. `_e64` names the VOP3 encoding of a VOP1/VOP2/VOPC instruction.
"""

from __future__ import annotations

from ...isa.types import DataType
from ...isa.vocabulary import AtomOp

_T = DataType

ATOMICS: dict[tuple[AtomOp, DataType], tuple[str, str]] = {
    # WAVE operator and type: (DS operation_type, FLAT global_atomic_ operation)
    (AtomOp.ADD, _T.U32): ("add_u32", "add"),
    (AtomOp.SUB, _T.U32): ("sub_u32", "sub"),
    (AtomOp.MIN, _T.S32): ("min_i32", "smin"),
    (AtomOp.MAX, _T.S32): ("max_i32", "smax"),
    (AtomOp.MIN, _T.U32): ("min_u32", "umin"),
    (AtomOp.MAX, _T.U32): ("max_u32", "umax"),
    (AtomOp.AND, _T.B32): ("and_b32", "and"),
    (AtomOp.OR, _T.B32): ("or_b32", "or"),
    (AtomOp.XOR, _T.B32): ("xor_b32", "xor"),
    (AtomOp.EXCH, _T.B32): ("wrxchg_b32", "swap"),
    (AtomOp.CAS, _T.B32): ("cmpst_b32", "cmpswap"),
    (AtomOp.ADD, _T.F32): ("add_f32", "add_f32"),
}
"""The atomic instructions of every WAVE atomic operator, in LDS (DS) and global memory (FLAT)."""


def ds_atomic(op: AtomOp, t: DataType, returns: bool) -> str:
    """The DS instruction of a local atomic: `ds_<op>[_rtn]_<type>` (exchange has only the
    returning form)."""
    stem, ty = ATOMICS[(op, t)][0].rsplit("_", 1)
    return f"ds_{stem}_rtn_{ty}" if returns or op is AtomOp.EXCH else f"ds_{stem}_{ty}"


def global_atomic(op: AtomOp, t: DataType) -> str:
    """The FLAT instruction of a global atomic (returning with glc/sc0)."""
    return f"global_atomic_{ATOMICS[(op, t)][1]}"


def _ds_form(op: AtomOp, name: str) -> str:
    data = "vcmp, vnew" if op is AtomOp.CAS else "vdata"
    return ("vD, " if "_rtn_" in name else "") + f"addr, {data} [offset:N]"


DS_ATOMICS = frozenset(ds_atomic(op, t, r) for op, t in ATOMICS for r in (False, True))
GLOBAL_ATOMICS = frozenset(global_atomic(op, t) for op, t in ATOMICS)

_CMP_INT = [f"v_cmp_{c}_{t}" for c in ("eq", "ne", "lt", "le", "gt", "ge") for t in ("i32", "u32")]
_CMP_F = [
    f"v_cmp_{c}_{t}"
    for c in ("eq", "lg", "lt", "le", "gt", "ge", "nlg", "neq", "nge", "ngt", "nle", "nlt", "o", "u", "class")
    for t in ("f32", "f64")
]
_SCMP = [f"s_cmp_{c}_{t}" for c in ("eq", "lg", "lt", "le", "gt", "ge") for t in ("i32", "u32")] + [
    "s_cmp_eq_u64",
    "s_cmp_lg_u64",
]

# mnemonic -> (family, operand form)
EMITTED: dict[str, tuple[str, str]] = {
    # VOP1
    **{
        m: ("VOP1", "vD, src")
        for m in (
            "v_mov_b32",
            "v_not_b32",
            "v_bfrev_b32",
            "v_ffbh_u32",
            "v_cvt_f32_u32",
            "v_cvt_f32_i32",
            "v_cvt_u32_f32",
            "v_cvt_i32_f32",
            "v_cvt_f16_f32",
            "v_cvt_f32_f16",
            "v_rcp_f32",
            "v_rcp_iflag_f32",
            "v_rsq_f32",
            "v_sqrt_f32",
            "v_exp_f32",
            "v_log_f32",
            "v_fract_f32",
            "v_rndne_f32",
            "v_trunc_f32",
            "v_floor_f32",
            "v_ceil_f32",
        )
    },
    **{
        m: ("VOP1", "v[D:D+1], src64 | vD, src64")
        for m in (
            "v_cvt_f64_f32",
            "v_cvt_f64_i32",
            "v_cvt_f64_u32",
            "v_cvt_f32_f64",
            "v_cvt_i32_f64",
            "v_cvt_u32_f64",
            "v_rndne_f64",
            "v_trunc_f64",
            "v_floor_f64",
            "v_ceil_f64",
        )
    },
    "v_readfirstlane_b32": ("VOP1", "sD, vsrc"),
    # VOP2
    **{
        m: ("VOP2", "vD, src, vsrc")
        for m in (
            "v_add_u32",
            "v_sub_u32",
            "v_and_b32",
            "v_or_b32",
            "v_xor_b32",
            "v_min_i32",
            "v_max_i32",
            "v_min_u32",
            "v_max_u32",
            "v_lshlrev_b32",
            "v_lshrrev_b32",
            "v_ashrrev_i32",
            "v_add_f32",
            "v_sub_f32",
            "v_mul_f32",
            "v_min_f32",
            "v_max_f32",
        )
    },
    **{
        m + "_dpp": ("VOP2_DPP", "vD, vsrc0 (permuted), vsrc1 dpp_ctrl row_mask:M bank_mask:0xf")
        for m in (
            "v_add_u32",
            "v_min_i32",
            "v_max_i32",
            "v_min_u32",
            "v_max_u32",
            "v_and_b32",
            "v_or_b32",
            "v_xor_b32",
            "v_min_f32",
            "v_max_f32",
        )
    },
    "v_cndmask_b32": ("VOP2", "vD, src(false), vsrc(true), vcc | _e64: vD, src, src, sP"),
    # VOP3
    **{
        m: ("VOP3", "vD, src, src[, src] (no literal, one SGPR)")
        for m in (
            "v_mul_lo_u32",
            "v_mul_hi_u32",
            "v_mul_hi_i32",
            "v_mad_u32_u24",
            "v_bfe_u32",
            "v_bfi_b32",
            "v_bcnt_u32_b32",
            "v_add3_u32",
            "v_or3_b32",
            "v_lshl_add_u32",
            "v_lshl_or_b32",
            "v_fma_f32",
            "v_div_fmas_f32",
            "v_div_fixup_f32",
            "v_mbcnt_lo_u32_b32",
            "v_mbcnt_hi_u32_b32",
            "v_add_f64",
            "v_mul_f64",
            "v_fma_f64",
            "v_min_f64",
            "v_max_f64",
        )
    },
    "v_div_scale_f32": ("VOP3", "vD, sP|vcc, src, src, src"),
    "v_div_scale_f64": ("VOP3", "v[D:D+1], sP|vcc, src64, src64, src64"),
    "v_div_fmas_f64": ("VOP3", "v[D:D+1], src64, src64, src64 (reads vcc)"),
    "v_div_fixup_f64": ("VOP3", "v[D:D+1], src64, src64, src64"),
    "v_rcp_f64": ("VOP1", "v[D:D+1], src64"),
    "v_rsq_f64": ("VOP1", "v[D:D+1], src64"),
    "v_ldexp_f64": ("VOP3", "v[D:D+1], src64, src(i32 exponent)"),
    "v_add_f16": ("VOP2", "vD, src, vsrc (low halves; we clear the high half)"),
    "v_sub_f16": ("VOP2", "vD, src, vsrc"),
    "v_mul_f16": ("VOP2", "vD, src, vsrc"),
    "v_fma_f16": ("VOP3", "vD, src, src, src"),
    "v_pk_add_f16": ("VOP3P", "vD, vsrc, vsrc"),
    "v_pk_mul_f16": ("VOP3P", "vD, vsrc, vsrc"),
    "v_pk_fma_f16": ("VOP3P", "vD, vsrc, vsrc, vsrc"),
    "v_cmp_u_f16": ("VOPC", "vcc, src, vsrc"),
    "s_setreg_imm32_b32": ("SOPK", "hwreg(HW_REG_MODE, 0, 2), imm (f32 rounding mode)"),
    "v_readlane_b32": ("VOP3", "sD, vsrc, ssrc(lane)"),
    "v_writelane_b32": ("VOP3", "vD, ssrc, ssrc(lane)"),
    "v_accvgpr_write_b32": ("VOP3P", "aD, vsrc"),
    "v_accvgpr_read_b32": ("VOP3P", "vD, aS"),
    "v_dot4_i32_i8": ("VOP3P", "vD, src, src, src"),
    "v_dot4_u32_u8": ("VOP3P", "vD, src, src, src"),
    # VOPC (vcc, or _e64 into an SGPR pair)
    **{m: ("VOPC", "vcc, src, vsrc | _e64: sP, src, src") for m in _CMP_INT + _CMP_F},
    # SALU
    **{
        m: ("SOP2", "sD, ssrc, ssrc")
        for m in (
            "s_add_u32",
            "s_sub_u32",
            "s_mul_i32",
            "s_mul_hi_u32",
            "s_mul_hi_i32",
            "s_and_b32",
            "s_or_b32",
            "s_xor_b32",
            "s_andn2_b32",
            "s_min_i32",
            "s_max_i32",
            "s_min_u32",
            "s_max_u32",
            "s_lshl_b32",
            "s_lshr_b32",
            "s_ashr_i32",
            "s_bfe_u32",
            "s_cselect_b32",
            "s_and_b64",
            "s_or_b64",
            "s_xor_b64",
            "s_andn2_b64",
            "s_cselect_b64",
        )
    },
    **{
        m: ("SOP1", "sD, ssrc")
        for m in (
            "s_mov_b32",
            "s_mov_b64",
            "s_not_b32",
            "s_not_b64",
            "s_abs_i32",
            "s_brev_b32",
            "s_bcnt1_i32_b32",
            "s_flbit_i32_b32",
            "s_or_saveexec_b64",
        )
    },
    **{m: ("SOPC", "ssrc, ssrc") for m in _SCMP},
    **{
        m: ("SOPP", "lbl")
        for m in ("s_branch", "s_cbranch_scc0", "s_cbranch_scc1", "s_cbranch_execz", "s_cbranch_execnz")
    },
    "s_nop": ("SOPP", "N (N+1 wait states)"),
    "s_endpgm": ("SOPP", ""),
    "s_barrier": ("SOPP", ""),
    "s_waitcnt": ("SOPP", "vmcnt(N) lgkmcnt(N)"),
    # SMEM
    "s_load_dword": ("SMEM", "sD, s[base:base+1], ssrc|imm"),
    "s_load_dwordx2": ("SMEM", "s[D:D+1], s[base:base+1], ssrc|imm"),
    "s_load_dwordx4": ("SMEM", "s[D:D+3], s[base:base+1], ssrc|imm"),
    # DS
    **{
        m: ("DS", "vD, addr [offset:N]")
        for m in (
            "ds_read_u8",
            "ds_read_i8",
            "ds_read_u16",
            "ds_read_i16",
            "ds_read_b32",
            "ds_read_b64",
            "ds_read_b128",
        )
    },
    **{
        m: ("DS", "addr, vdata [offset:N]")
        for m in ("ds_write_b8", "ds_write_b16", "ds_write_b32", "ds_write_b64", "ds_write_b128")
    },
    **{ds_atomic(op, t, r): ("DS", _ds_form(op, ds_atomic(op, t, r))) for op, t in ATOMICS for r in (False, True)},
    "ds_bpermute_b32": ("DS", "vD, addr(lane*4), vdata"),
    "ds_swizzle_b32": ("DS", 'vD, vdata offset:swizzle(SWAP,n | REVERSE,n | BITMASK_PERM,"xxxxx")'),
    # FLAT global (saddr form)
    **{
        f"global_load_{w}": ("FLAT", "vD, vaddr, s[base:base+1] [offset:N]")
        for w in ("ubyte", "sbyte", "ushort", "sshort", "dword", "dwordx2", "dwordx4")
    },
    **{
        f"global_store_{w}": ("FLAT", "vaddr, vdata, s[base:base+1] [offset:N]")
        for w in ("byte", "short", "dword", "dwordx2", "dwordx4")
    },
    **{
        m: ("FLAT", "[vD,] vaddr, vdata, s[base:base+1] [offset:N] [glc|sc0]")
        for m in (global_atomic(op, t) for op, t in ATOMICS)
    },
    # memory model (per target, see target.py)
    "buffer_wbinvl1_vol": ("MUBUF", ""),
    "buffer_inv": ("MUBUF", "sc0|sc1"),
    "buffer_wbl2": ("MUBUF", "sc0|sc1"),
}

FAMILY: dict[str, str] = {m: fam for m, (fam, _) in EMITTED.items()}
COMMUTATIVE = frozenset(
    {
        "v_add_u32",
        "v_and_b32",
        "v_or_b32",
        "v_xor_b32",
        "v_min_i32",
        "v_max_i32",
        "v_min_u32",
        "v_max_u32",
        "v_add_f32",
        "v_mul_f32",
        "v_min_f32",
        "v_max_f32",
    }
)
# Transcendental VALU ops (the gfx940 trans -> use hazard).
# transcendental VALU ops we emit (the f64 ones too: the gfx940 family's trans hazard covers them)
TRANS = frozenset(
    {"v_rcp_f32", "v_rcp_iflag_f32", "v_rsq_f32", "v_sqrt_f32", "v_exp_f32", "v_log_f32", "v_rcp_f64", "v_rsq_f64"}
)
SMEM = frozenset(m for m, f in FAMILY.items() if f == "SMEM")
VMEM = frozenset(m for m, f in FAMILY.items() if f in ("FLAT", "MUBUF"))
LDS = frozenset(m for m, f in FAMILY.items() if f == "DS")


def is_valu(op: str) -> bool:
    return FAMILY.get(op.removesuffix("_e64"), "").startswith("V")
