"""Instruction selection: the lifted WAVE kernel to kernel IR over virtual registers.

WAVE registers become virtual registers: SGPRs when the uniformity analysis proves them
uniform, VGPRs otherwise; registers used together as pairs or vectors share one aligned range
(`Sub` slices of it). Predicates are 64-bit lane masks in SGPR pairs: a uniform predicate is all
ones or zero (`s_cselect_b64`), a divergent one holds a bit per active lane (`v_cmp_*_e64`).

Control flow (structured, from `lift`): a divergent `if` saves EXEC, runs the then-part under
`exec & p` and the else-part under the saved `exec & ~p`, each skipped by `s_cbranch_execz`
when empty, and restores the mask; a divergent loop keeps a break mask (lanes that left) and a
continue mask (lanes waiting for the next iteration) and runs while any lane is left; `ret`
removes lanes for good (a kernel-wide `dead` mask). Uniform conditions branch on SCC. Every mask
restore removes the lanes that left through break, continue or ret.

VALU operands are legalised here (`_valu`): inline constants anywhere; a literal only as VOP1 or
VOP2 src0; VOP2 src1 a VGPR (commutative operands swapped, else the VOP3 `_e64` form); at most
one SGPR or literal per instruction (the gfx9 constant-bus limit); the rest is copied to VGPRs.
"""

from __future__ import annotations

from collections.abc import Callable

from ...codegen import canonical
from ...isa.instruction import Imm as WImm
from ...isa.instruction import Instruction, Pair, Pred, Reg, SReg, Vec
from ...isa.registers import SRegId as SR
from ...isa.types import SUBREGS, DataType, Role
from ...isa.vocabulary import Nest, Op
from ...wbin.program import Kernel
from ..lift import If, Loop, Node, Stmt, lift, preset_count, walk
from . import abi, rows, webs
from .ir import EXEC, MI, SCC, VCC, VR, Imm, Label, Operand, Phys, Special, Sub, label
from .isa import COMMUTATIVE, FAMILY
from .operands import SWAP_CMP, Unsupported, inline32, inline_int, is_s, is_v
from .target import WAVE, Target
from .uniform import analyse

T = DataType
# encoding families whose vector results are written per lane under EXEC (loads and returning
# atomics of LDS, FLAT/global and buffer/scratch memory)
LANE_MEM = frozenset({"DS", "FLAT", "MUBUF", "MTBUF", "SCRATCH"})


class Selector:
    def __init__(self, k: Kernel, tgt: Target, nargs: int | None = None) -> None:
        k = webs.split(k)  # one register per value, so that uniformity is decided per value
        self.k = k
        self.t = tgt
        self.tree = lift(k)
        # register presets: the parameters, or for a kernel without any the registers it reads
        # before writing them (lift.preset_count, as every backend)
        self.nargs = preset_count(k, self.tree) if nargs is None else nargs
        self.u = analyse(self.tree)
        self.nan = canonical.plan(k.instructions)  # where float results must be canonical NaNs
        self.mis: list[MI] = []
        self.nlabel = 0
        self.div = False  # emitting under a partial EXEC (divergent region)
        self.loops: list[dict] = []  # innermost last: {"div": bool, "brk", "cont", "save", "exit", "latch"}
        self.pc = 0
        # Where to go when EXEC becomes empty inside a divergent region (its else part, join or
        # loop latch), and whether lanes may have left inside each open region: code run with
        # no lane is skipped, so that a uniform loop on the way cannot spin with nobody in it.
        self.empty_exit: list[str] = []
        self.lanes_left: list[bool] = []
        self.uses_sreg: set[SR] = set()
        self.lds = k.local_memory
        self._groups()
        self._scan()

    # ---- registers --------------------------------------------------------------------------
    def _groups(self) -> None:
        """WAVE registers read or written together (pairs, vectors) share one aligned range."""
        spans: list[tuple[int, int]] = []
        for inst in self.k.instructions:
            for o in inst.operands:
                if isinstance(o, Pair):
                    spans.append((o.n, 2))
                elif isinstance(o, Vec) and o.count > 1:
                    spans.append((o.n, o.count))
        spans.sort()
        groups: list[list[int]] = []  # [lo, hi(excl), parity of tuple starts or -1 conflict]
        for lo, n in spans:
            if groups and lo < groups[-1][1]:
                g = groups[-1]
                g[1] = max(g[1], lo + n)
                if g[2] != lo % 2:
                    g[2] = -1
            else:
                groups.append([lo, lo + n, lo % 2])
        self.group_of: dict[int, tuple[VR, int]] = {}
        for lo, hi, par in groups:
            if par == -1:
                raise Unsupported(
                    f"kernel {self.k.name}: register tuples starting at r{lo}..r{hi - 1} mix even and odd starts"
                )
            base = lo if lo % 2 == par else lo - 1
            base = max(base, 0)
            if base % 2 != par:  # lo == 0 with odd tuples: cannot happen (par == lo % 2 then)
                base = lo
            regs = range(base, hi)
            rc = "v" if any(not self.u.reg_uniform(r) for r in regs) else "s"
            vr = VR(rc, hi - base, 2, name=f"r{base}..r{hi - 1}")
            for r in regs:
                self.group_of[r] = (vr, r - base)
        # uniform register presets next to each other share SGPR ranges of up to 4 (one
        # s_load_dwordx4, or x2 + x1 pieces, from the kernarg segment; 4-aligned)
        self.param_runs: list[tuple[int, VR]] = []
        run: list[int] = []
        for i in [*range(min(self.nargs, 256)), -1]:
            if i >= 0 and i not in self.group_of and self.u.reg_uniform(i) and len(run) < 4:
                run.append(i)
                continue
            if len(run) >= 2:
                vr = VR("s", len(run), 4, name=f"presets r{run[0]}..r{run[-1]}")
                for j, r in enumerate(run):
                    self.group_of[r] = (vr, j)
                self.param_runs.append((run[0], vr))
            run = [i] if i >= 0 and i not in self.group_of and self.u.reg_uniform(i) else []
        self.single: dict[int, VR] = {}
        self.preds: dict[int, VR] = {}

    def _scan(self) -> None:
        for inst in self.k.instructions:
            for o in inst.operands:
                if isinstance(o, SReg):
                    self.uses_sreg.add(SR(o.id))

    def reg(self, n: int) -> VR | Sub:
        if n in self.group_of:
            vr, i = self.group_of[n]
            return Sub(vr, i)
        if n not in self.single:
            self.single[n] = VR("s" if self.u.reg_uniform(n) else "v", name=f"r{n}")
        return self.single[n]

    def canon_in_place(self, n: int) -> None:
        """WAVE register n as f32: a NaN becomes 0x7FFFFFFF (codegen/canonical's plan: its bits
        are observed next). A uniform register by scalar integer compares (SCC), a VGPR by
        v_cmp_u_f32 on the active lanes."""
        x = self.reg(n)
        if is_v(x):
            self._valu("v_cmp_u_f32", None, [x, x])
            self._valu("v_cndmask_b32", x, [x, self.const_v(0x7FFFFFFF)])
            return
        t = self.stmp()
        self.emit("s_and_b32", t, x, Imm(0x7FFFFFFF))
        self.emit("s_cmp_gt_u32", t, Imm(0x7F800000), ndefs=0)
        self.emit("s_cselect_b32", x, Imm(0x7FFFFFFF), x)

    def reg_range(self, n: int, count: int) -> VR | Sub:
        vr, i = self.group_of[n]
        return Sub(vr, i, count) if (i, count) != (0, vr.size) else vr

    def pred(self, n: int) -> VR:
        if n not in self.preds:
            self.preds[n] = VR("s", 2, 2, name=f"p{n}")
        return self.preds[n]

    def cls(self, o: Operand) -> str:
        if isinstance(o, VR):
            return o.rc
        if isinstance(o, Sub):
            return o.vr.rc
        if isinstance(o, Phys):
            return o.rc
        return "i"

    def vtmp(self, size: int = 1) -> VR:
        return VR("v", size, 2 if size > 1 else 1, temp=True)

    def stmp(self, size: int = 1) -> VR:
        return VR("s", size, {1: 1, 2: 2}.get(size, 4), temp=True)

    def newlabel(self, what: str) -> str:
        self.nlabel += 1
        return f".L{self.k.name}_{what}_{self.nlabel}"

    # ---- emission ---------------------------------------------------------------------------
    def emit(self, op: str, *ops: Operand, ndefs: int = 1, mods: str = "", **kw: object) -> MI:
        fam = FAMILY.get(op.removesuffix("_e64").removesuffix("_e32"))
        if fam is None:
            raise AssertionError(f"{op} missing from isa.FAMILY")
        mi = MI(op, list(ops), ndefs, mods, **kw)  # type: ignore[arg-type]
        if fam.startswith("V") and op not in ("v_readlane_b32", "v_readfirstlane_b32"):
            mi.imp_uses = (*mi.imp_uses, EXEC)
            mi.partial = self.div
        elif fam in LANE_MEM and ndefs:
            # a load or returning atomic (LDS, global, buffer/scratch) writes only the lanes EXEC
            # enables: under a partial EXEC the other lanes keep the register's value
            mi.partial = self.div
        if op.startswith("s_") and fam in ("SOP1", "SOP2", "SOPC", "SOPK"):
            if (
                fam == "SOPC"
                or any(
                    op.startswith(p) for p in ("s_add", "s_sub", "s_and", "s_or", "s_xor", "s_andn2", "s_orn2", "s_not")
                )
                or any(
                    op.startswith(p)
                    for p in ("s_lshl", "s_lshr", "s_ashr", "s_bfe", "s_min", "s_max", "s_abs", "s_bcnt")
                )
            ):
                mi.imp_defs = (*mi.imp_defs, SCC)
            if op in ("s_cselect_b32", "s_cselect_b64", "s_addc_u32", "s_cbranch_scc0", "s_cbranch_scc1"):
                mi.imp_uses = (*mi.imp_uses, SCC)
        self.mis.append(mi)
        return mi

    def lbl(self, name: str) -> None:
        self.mis.append(label(name))

    def imm(self, v: int) -> Imm:
        v &= 0xFFFFFFFF
        return Imm(v - (1 << 32) if v >= 1 << 31 and inline_int(v) else v)

    def const_v(self, value: int) -> VR:
        """A VGPR holding `value` in every lane, set once at the end of the prologue (full EXEC)."""
        value &= 0xFFFFFFFF
        if value not in self.consts:
            vr = VR("v", name=f"const {value:#x}")
            mi = MI("v_mov_b32", [vr, Imm(value)], 1, imp_uses=(EXEC,))
            self.mis.insert(self.prologue_end, mi)
            self.prologue_end += 1
            self.consts[value] = vr
        return self.consts[value]

    def to_v(self, o: Operand) -> Operand:
        """o in a VGPR (copies SGPRs and immediates)."""
        if is_v(o):
            return o
        t = self.vtmp()
        self.emit("v_mov_b32", t, o)
        return t

    def to_s(self, o: Operand) -> Operand:
        if is_s(o):
            return o
        if is_v(o):
            raise AssertionError("VGPR where an SGPR is needed (uniformity analysis)")
        t = self.stmp()
        self.emit("s_mov_b32", t, o)
        return t

    def _valu(self, op: str, dst: Operand | None, srcs: list[Operand], mods: str = "", extra_defs: tuple = ()) -> MI:
        """Emit a VALU instruction with legal operands (the rules in the module docstring)."""
        fam = FAMILY[op]
        srcs = list(srcs)
        implicit_vcc = op in ("v_cndmask_b32", "v_addc_co_u32", "v_subb_co_u32") or fam == "VOPC"
        e64 = fam in ("VOP3", "VOP3P")
        if fam in ("VOP2", "VOPC") and len(srcs) >= 2 and not is_v(srcs[1]):
            if op in COMMUTATIVE and is_v(srcs[0]):
                srcs[0], srcs[1] = srcs[1], srcs[0]
            elif fam == "VOPC" and is_v(srcs[0]) and op.split("_")[2] in SWAP_CMP:
                parts = op.split("_")
                parts[2] = SWAP_CMP[parts[2]]
                op = "_".join(parts)
                srcs[0], srcs[1] = srcs[1], srcs[0]
            else:
                srcs[1] = self.to_v(srcs[1])
        bus: list[Operand] = []
        for i, s in enumerate(srcs):
            lit = isinstance(s, Imm) and not inline32(s.value)
            sg = is_s(s) or isinstance(s, Special)
            if not (lit or sg):
                continue
            key = s if not isinstance(s, Sub) else (s.vr, s.i)
            if lit and (e64 or i != 0):
                srcs[i] = self.to_v(s)
                continue
            if key in [b if not isinstance(b, Sub) else (b.vr, b.i) for b in bus]:
                continue
            limit = 0 if (implicit_vcc and fam != "VOPC" and not e64) else 1
            if len(bus) >= limit:
                srcs[i] = self.to_v(s)
            else:
                bus.append(s)
        ops = ([dst] if dst is not None else []) + srcs
        kw: dict = {}
        if op in ("v_cndmask_b32", "v_addc_co_u32") and not e64:
            kw["imp_uses"] = (VCC,)
        if fam == "VOPC" and dst is None:
            ops = [VCC, *srcs]
        if "imp_uses" in kw:  # the VOP2 carry-in/select operand is written out
            ops.append(VCC)
            kw = {}
        mi = self.emit(op, *ops, ndefs=1, mods=mods, **kw)
        if extra_defs:
            mi.defs_extra = extra_defs
        return mi

    # ---- operands ---------------------------------------------------------------------------
    def src(self, o: object, bits: int = 32) -> Operand:
        if isinstance(o, WImm):
            return self.imm(o.bits)
        if isinstance(o, Reg):
            r = self.reg(o.n)
            if o.sel == 0:
                return r
            _, off, width = SUBREGS[o.sel]
            if is_s(r):
                t = self.stmp()
                self.emit("s_bfe_u32", t, r, self.imm(off | (width << 16)))
                return t
            t = self.vtmp()
            self.emit("v_bfe_u32", t, r, self.imm(off), self.imm(width))
            return t
        raise AssertionError(f"operand {o}")

    def pair_src(self, o: object) -> Operand:
        """A 64-bit source as an aligned register pair (or an immediate's halves in a pair)."""
        if isinstance(o, Pair):
            return self.reg_range(o.n, 2)
        if isinstance(o, WImm):
            t = self.stmp(2)
            self.emit("s_mov_b32", Sub(t, 0), self.imm(o.bits & 0xFFFFFFFF))
            self.emit("s_mov_b32", Sub(t, 1), self.imm(o.bits >> 32))
            return t
        raise AssertionError(f"pair operand {o}")

    def write(self, o: object, value_fn: Callable[[Operand], None], want: str = "") -> None:
        """Define WAVE register `o` (a whole register or a sub-register) by value_fn(dest)."""
        assert isinstance(o, Reg)
        r = self.reg(o.n)
        if o.sel == 0:
            value_fn(r)
            return
        _, off, width = SUBREGS[o.sel]
        mask = ((1 << width) - 1) << off
        if is_s(r):
            t = self.stmp()
            value_fn(t)
            self.emit("s_lshl_b32", t, t, self.imm(off))
            self.emit("s_and_b32", t, t, self.imm(mask))
            self.emit("s_andn2_b32", r, r, self.imm(mask))
            self.emit("s_or_b32", r, r, t)
            return
        t = self.vtmp()
        value_fn(t)
        self.emit("v_lshlrev_b32", t, self.imm(off), t)
        m = self.to_v(self.imm(mask))
        self.emit("v_bfi_b32", r, m, t, r)

    def dst_is_s(self, o: object) -> bool:
        if isinstance(o, Reg):
            return is_s(self.reg(o.n))
        if isinstance(o, Pair):
            return is_s(self.reg_range(o.n, 2))
        return False

    # ---- entry ------------------------------------------------------------------------------
    def run(self) -> list[MI]:
        self._prologue()
        self.prologue_end = len(self.mis)
        self.consts: dict[int, VR] = {}
        self._nodes(self.tree)
        if not self.mis or self.mis[-1].op != "s_endpgm":
            self.emit("s_endpgm", ndefs=0)
        return self.mis

    def _prologue(self) -> None:
        kp = Phys("s", abi.KERNARG_PTR, 2)
        self.kernarg = kp
        self.mem = VR("s", 2, 2, name="mem")
        self.cmem = VR("s", 2, 2, name="cmem")
        self.emit("s_load_dwordx4", Sub(self.mem, 0, 2), kp, Imm(abi.MEM_OFFSET), ndefs=1)
        # s_load_dwordx4 needs one 4-aligned quad: load mem and cmem together, then split
        self.mis.pop()
        quad = VR("s", 4, 4, name="mem+cmem")
        self.emit("s_load_dwordx4", quad, kp, Imm(abi.MEM_OFFSET))
        self.emit("s_mov_b64", self.mem, Sub(quad, 0, 2))
        self.emit("s_mov_b64", self.cmem, Sub(quad, 2, 2))
        self.dead: VR | None = None
        if any(
            isinstance(n, Stmt) and n.inst.spec.nest is Nest.RET
            for n in _all_ops(self.tree)
            if n is not _last_op(self.tree)
        ):
            self.dead = VR("s", 2, 2, name="dead")
            self.live0 = VR("s", 2, 2, name="live0")
            self.emit("s_mov_b64", self.dead, Imm(0))
            self.emit("s_mov_b64", self.live0, EXEC)
        in_runs: set[int] = set()
        for first, vr in self.param_runs:
            j = 0
            while j < vr.size:
                n = 4 if vr.size - j >= 4 and j % 4 == 0 else (2 if vr.size - j >= 2 and j % 2 == 0 else 1)
                dst = vr if n == vr.size else Sub(vr, j, n)
                op = {4: "s_load_dwordx4", 2: "s_load_dwordx2", 1: "s_load_dword"}[n]
                self.emit(op, dst, kp, Imm(abi.preset_offset(first + j)))
                j += n
            in_runs.update(range(first, first + vr.size))
        for i in range(min(self.nargs, 256)):
            if i in in_runs:
                continue
            r = self.reg(i)
            if is_s(r):
                self.emit("s_load_dword", r, kp, Imm(abi.preset_offset(i)))
            else:
                t = self.stmp()
                self.emit("s_load_dword", t, kp, Imm(abi.preset_offset(i)))
                self.emit("v_mov_b32", r, t)
        self.sregs: dict[SR, Operand] = {}
        used = self.uses_sreg
        wg_used = (SR.CTAID_X in used, SR.CTAID_Y in used, SR.CTAID_Z in used)
        self.wg_sgpr = abi.workgroup_id_sgprs(wg_used)
        dims = [SR.TID_Y in used or SR.WID in used or SR.LID in used, SR.TID_Z in used or SR.WID in used]
        self.workitem_dims = 2 if dims[1] else (1 if dims[0] else 0)
        ntid_needed = used & {SR.NWAVES, SR.WID}
        for j, s in enumerate((SR.NTID_X, SR.NTID_Y, SR.NTID_Z, SR.NCTAID_X, SR.NCTAID_Y, SR.NCTAID_Z)):
            if s in used or (j < 3 and ntid_needed):
                t = self.stmp()
                self.emit("s_load_dword", t, kp, Imm(abi.grid_offset(self.nargs, j)))
                self.sregs[s] = t
        for dim, s in enumerate((SR.CTAID_X, SR.CTAID_Y, SR.CTAID_Z)):
            if s in used:
                t = self.stmp()
                self.emit("s_mov_b32", t, Phys("s", self.wg_sgpr[dim]))
                self.sregs[s] = t
        v0 = Phys("v", abi.WORKITEM_VGPR)
        for dim, s in enumerate((SR.TID_X, SR.TID_Y, SR.TID_Z)):
            if s in used or SR.WID in used:
                t = self.vtmp()
                self.emit("v_bfe_u32", t, v0, Imm(10 * dim), Imm(10))
                self.sregs[s] = t
        if SR.LID in used:
            t = self.vtmp()
            self.emit("v_mbcnt_lo_u32_b32", t, Imm(-1), Imm(0))
            self.emit("v_mbcnt_hi_u32_b32", t, Imm(-1), t)
            self.sregs[SR.LID] = t
        if SR.WID in used:  # (tid.x + ntid.x * (tid.y + ntid.y * tid.z)) / 64, uniform
            f = self.vtmp()
            self._valu("v_mad_u32_u24", f, [self.sregs[SR.NTID_Y], self.sregs[SR.TID_Z], self.sregs[SR.TID_Y]])
            self._valu("v_mad_u32_u24", f, [self.sregs[SR.NTID_X], f, self.sregs[SR.TID_X]])
            self.emit("v_lshrrev_b32", f, Imm(6), f)
            w = self.stmp()
            self.emit("v_readfirstlane_b32", w, f)
            self.sregs[SR.WID] = w
        if SR.NWAVES in used:
            t = self.stmp()
            self.emit("s_mul_i32", t, self.sregs[SR.NTID_X], self.sregs[SR.NTID_Y])
            self.emit("s_mul_i32", t, t, self.sregs[SR.NTID_Z])
            self.emit("s_add_u32", t, t, Imm(63))
            self.emit("s_lshr_b32", t, t, Imm(6))
            self.sregs[SR.NWAVES] = t
        if SR.WAVE_WIDTH in used:
            self.sregs[SR.WAVE_WIDTH] = Imm(WAVE)
        if SR.CLOCK in used:
            raise Unsupported(
                f"kernel {self.k.name}: %clock counts executed instructions in WAVE; AMDGCN has no equivalent"
            )

    # ---- structure --------------------------------------------------------------------------
    def _nodes(self, nodes: list[Node]) -> None:
        # explicit work stack: ("node", n) or ("call", fn)
        todo: list[tuple[str, object]] = [("node", n) for n in reversed(nodes)]
        while todo:
            kind, x = todo.pop()
            if kind == "call":
                x()  # type: ignore[operator]
                continue
            if isinstance(x, Stmt):
                self.pc = x.pc
                for r in self.nan.at_use.get(x.pc, ()):
                    self.canon_in_place(r)
                self._op(x.inst)
            elif isinstance(x, If):
                todo.extend(reversed(self._if(x)))
            else:
                assert isinstance(x, Loop)
                todo.extend(reversed(self._loop(x)))

    def _restore(self, save: VR) -> None:
        """EXEC = save minus every lane that left (ret, and the innermost loop's break/continue)."""
        self.emit("s_mov_b64", EXEC, save)
        if self.dead is not None:
            self.emit("s_andn2_b64", EXEC, EXEC, self.dead)
        if self.loops and self.loops[-1]["div"]:
            lp = self.loops[-1]
            self.emit("s_andn2_b64", EXEC, EXEC, lp["brk"])
            self.emit("s_andn2_b64", EXEC, EXEC, lp["cont"])

    def _if(self, n: If) -> list[tuple[str, object]]:
        p = self.pred(n.pred)
        els, end = self.newlabel("else"), self.newlabel("endif")
        if n.uniform or self.u.pred_uniform(n.pred):
            if self.u.pred_uniform(n.pred):  # all ones or zero
                self.emit("s_cmp_lg_u64", p, Imm(0), ndefs=0)
            else:  # @uniform on a lane mask: branch on any active lane
                t = self.stmp(2)
                self.emit("s_and_b64", t, p, EXEC)
                self.emit("s_cmp_lg_u64", t, Imm(0), ndefs=0)
            self.emit("s_cbranch_scc0", Label(els), ndefs=0)
            out: list[tuple[str, object]] = [("node", c) for c in n.then]
            if n.other:
                out.append(("call", lambda: self.emit("s_branch", Label(end), ndefs=0)))
            out.append(("call", lambda: self.lbl(els)))
            out += [("node", c) for c in n.other]
            out.append(("call", lambda: self.lbl(end)))
            return out
        save, rest = self.stmp(2), self.stmp(2)
        outer = self.div
        self.emit("s_mov_b64", save, EXEC)
        if n.other:
            self.emit("s_andn2_b64", rest, EXEC, p)  # the else lanes
        self.emit("s_and_b64", EXEC, EXEC, p)
        self.emit("s_cbranch_execz", Label(els if n.other else end), ndefs=0)
        self.div = True
        self.empty_exit.append(els if n.other else end)
        self.lanes_left.append(False)

        def to_else() -> None:
            self.empty_exit[-1] = end
            self.lbl(els)
            self.emit("s_mov_b64", EXEC, rest)
            self.emit("s_cbranch_execz", Label(end), ndefs=0)

        def finish() -> None:
            self.empty_exit.pop()
            left = self.lanes_left.pop()
            self.lbl(end)
            self._restore(save)
            self.div = outer
            if left:
                self._skip_if_empty()

        out = [("node", c) for c in n.then]
        if n.other:
            out.append(("call", to_else))
            out += [("node", c) for c in n.other]
        out.append(("call", finish))
        return out

    def _loop(self, n: Loop) -> list[tuple[str, object]]:
        head, exit_ = self.newlabel("loop"), self.newlabel("endloop")
        div = n.pc in self.u.div_loops
        lp: dict = {"div": div, "exit": exit_, "head": head}
        outer = self.div
        if div:
            lp["save"], lp["brk"], lp["cont"] = self.stmp(2), self.stmp(2), self.stmp(2)
            self.emit("s_mov_b64", lp["save"], EXEC)
            self.emit("s_mov_b64", lp["brk"], Imm(0))
        self.loops.append(lp)
        self.lbl(head)
        if div:
            self.emit("s_mov_b64", lp["cont"], Imm(0))
            self.div = True
            lp["latch"] = self.newlabel("latch")
            self.empty_exit.append(lp["latch"])
            self.lanes_left.append(False)

        def latch() -> None:
            if div:
                self.empty_exit.pop()
                left = self.lanes_left.pop()
                self.lbl(lp["latch"])
                # continuing lanes come back for the next iteration; broken and dead lanes stay out
                self.emit("s_mov_b64", EXEC, lp["save"])
                if self.dead is not None:
                    self.emit("s_andn2_b64", EXEC, EXEC, self.dead)
                self.emit("s_andn2_b64", EXEC, EXEC, lp["brk"])
                self.emit("s_cbranch_execnz", Label(head), ndefs=0)
                self.lbl(exit_)
                self.loops.pop()
                self.emit("s_mov_b64", EXEC, lp["save"])
                if self.dead is not None:
                    self.emit("s_andn2_b64", EXEC, EXEC, self.dead)
                if self.loops and self.loops[-1]["div"]:
                    self.emit("s_andn2_b64", EXEC, EXEC, self.loops[-1]["brk"])
                    self.emit("s_andn2_b64", EXEC, EXEC, self.loops[-1]["cont"])
                self.div = outer
                if left and self.dead is not None:  # only ret lanes stay gone after the loop
                    self._skip_if_empty()
            else:
                self.emit("s_branch", Label(head), ndefs=0)
                self.lbl(exit_)
                self.loops.pop()

        return [*(("node", c) for c in n.body), ("call", latch)]

    def _skip_if_empty(self) -> None:
        """Lanes may have left: when none is running, go to the innermost divergent region's
        next mask change instead of running code for nobody."""
        for i in range(len(self.lanes_left)):
            self.lanes_left[i] = True
        if self.empty_exit:
            self.emit("s_cbranch_execz", Label(self.empty_exit[-1]), ndefs=0)

    # ---- instructions -----------------------------------------------------------------------
    def _op(self, inst: Instruction) -> None:
        spec = inst.spec
        g = inst.guard
        nest = spec.nest
        if nest is Nest.RET:
            self._ret(g)
            return
        if nest in (Nest.BREAK, Nest.CONTINUE):
            self._break(inst, nest is Nest.BREAK)
            return
        if g is None:
            self._inst(inst)
            return
        gp = self.pred(g.pred)
        if self._scalar_inst(inst) and self.u.pred_uniform(g.pred):
            skip = self.newlabel("skip")
            self.emit("s_cmp_lg_u64" if not g.negated else "s_cmp_eq_u64", gp, Imm(0), ndefs=0)
            self.emit("s_cbranch_scc0", Label(skip), ndefs=0)
            self._inst(inst)
            self.lbl(skip)
            return
        save = self.stmp(2)
        self.emit("s_mov_b64", save, EXEC)
        self.emit("s_andn2_b64" if g.negated else "s_and_b64", EXEC, EXEC, gp)
        outer, self.div = self.div, True
        self._inst(inst)
        self.div = outer
        self.emit("s_mov_b64", EXEC, save)

    def _scalar_inst(self, inst: Instruction) -> bool:
        """Does the instruction define only SGPR values (or nothing lane-wise)?"""
        for spec, o in zip(inst.spec.operands, inst.operands, strict=False):
            if spec.role is Role.DST:
                if isinstance(o, Pred):
                    if not self.u.pred_uniform(o.n):
                        return False
                elif not self.dst_is_s(o):
                    return False
        return inst.spec.op not in (Op.ST, Op.ATOM, Op.RED, Op.BARRIER, Op.FENCE)

    def _ret(self, g: object) -> None:
        if g is None:
            if self.dead is None or (not self.div and not any(lp["div"] for lp in self.loops)):
                self.emit("s_endpgm", ndefs=0)  # every lane still running ends here
                return
            self.emit("s_or_b64", self.dead, self.dead, EXEC)
            self.emit("s_mov_b64", EXEC, Imm(0))
            done = self.newlabel("alive")
            self.emit("s_cmp_eq_u64", self.dead, self.live0, ndefs=0)
            self.emit("s_cbranch_scc0", Label(done), ndefs=0)
            self.emit("s_endpgm", ndefs=0)
            self.lbl(done)
            self._skip_if_empty()
            return
        p = self.pred(g.pred)  # type: ignore[attr-defined]
        neg = g.negated  # type: ignore[attr-defined]
        t = self.stmp(2)
        self.emit("s_andn2_b64" if neg else "s_and_b64", t, EXEC, p)
        assert self.dead is not None
        self.emit("s_or_b64", self.dead, self.dead, t)
        self.emit("s_andn2_b64", EXEC, EXEC, t)
        done = self.newlabel("alive")
        if not self.loops and not self.div:
            self.emit("s_cbranch_execnz", Label(done), ndefs=0)
        else:  # the wave ends when every lane it started with has returned
            self.emit("s_cmp_eq_u64", self.dead, self.live0, ndefs=0)
            self.emit("s_cbranch_scc0", Label(done), ndefs=0)
        self.emit("s_endpgm", ndefs=0)
        self.lbl(done)
        if self.loops or self.div:
            self._skip_if_empty()

    def _break(self, inst: Instruction, brk: bool) -> None:
        lp = self.loops[-1]
        p = self.pred(inst.operands[0].n) if inst.operands else None  # type: ignore[attr-defined]
        g = inst.guard
        if not lp["div"]:
            target = lp["exit"] if brk else lp["head"]
            conds: list[tuple[VR, bool]] = []
            if p is not None:
                conds.append((p, False))
            if g is not None:
                conds.append((self.pred(g.pred), g.negated))
            if not conds:
                self.emit("s_branch", Label(target), ndefs=0)
                return
            # uniform predicates are all ones or zero: no AND with EXEC (which may be empty)
            if len(conds) == 1 and not conds[0][1]:
                self.emit("s_cmp_lg_u64", conds[0][0], Imm(0), ndefs=0)
                self.emit("s_cbranch_scc1", Label(target), ndefs=0)
                return
            t = self.stmp(2)
            self.emit("s_mov_b64", t, Imm(-1))
            for q, neg in conds:
                self.emit("s_andn2_b64" if neg else "s_and_b64", t, t, q)
            self.emit("s_cmp_lg_u64", t, Imm(0), ndefs=0)
            self.emit("s_cbranch_scc1", Label(target), ndefs=0)
            return
        t = self.stmp(2)
        self.emit("s_mov_b64", t, EXEC)
        if p is not None:
            self.emit("s_and_b64", t, t, p)
        if g is not None:
            self.emit("s_andn2_b64" if g.negated else "s_and_b64", t, t, self.pred(g.pred))
        mask = lp["brk"] if brk else lp["cont"]
        self.emit("s_or_b64", mask, mask, t)
        self.emit("s_andn2_b64", EXEC, EXEC, t)
        self._skip_if_empty()

    def _inst(self, inst: Instruction) -> None:
        rows.select(self, inst)


def _all_ops(tree: list[Node]) -> list[Stmt]:
    return walk(tree)


def _last_op(tree: list[Node]) -> Stmt | None:
    return tree[-1] if tree and isinstance(tree[-1], Stmt) else None


__all__ = ["Selector"]
