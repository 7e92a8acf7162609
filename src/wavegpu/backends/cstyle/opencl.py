"""OpenCL C 3.0 dialect: sub-group built-ins (non-uniform, so only active lanes take part),
`intel_reqd_sub_group_size` to set W, one device-memory buffer plus the register arguments."""

from __future__ import annotations

from ...isa.registers import SRegId
from ...isa.vocabulary import AtomOp, Op, ReduceOp, Scope
from ...wbin.program import Kernel
from .prelude import CHECKS, FLOAT_KEYS, HELPERS
from .render import BOUND_ARGS, Dialect

HEADER = r"""
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable
#define F(x) as_float((uint)(x))
#define U(x) as_uint(x)
#define D(x) as_double((ulong)(x))
#define UL(x) as_ulong(x)

#define WV_FN static inline
#define POPC(x) popcount(x)
#define CLZ(x) clz(x)
#define NEXT_F(a, b) nextafter((float)(a), (float)(b))
#define NEXT_D(a, b) nextafter((double)(a), (double)(b))
#define WV_INF ((double)INFINITY)
#define GLOBAL_ATOMIC_PTR volatile __global uint*
#define LOCAL_ATOMIC_PTR volatile __local uint*
#define ATOMIC_CAS(p, c, v) atomic_cmpxchg(p, c, v)
/* and/or/xor over the active lanes, in lane order: Intel's CPU runtime has no
   sub_group_non_uniform_reduce_and/or/xor for sub-groups of 32 or 64 on SSE4.2 hosts (the JIT
   fails on the missing symbols), so these never depend on the host's vector ISA */
WV_FN uint wv_sg_bits(int op, uint x) {
    uint4 b = sub_group_ballot(1);
    ulong m = (ulong)b.x | ((ulong)b.y << 32);
    uint r = op == 0 ? 0xFFFFFFFFu : 0u;
    for (uint i = 0u; m != 0ul; i++, m >>= 1) {
        if (m & 1ul) {
            uint v = sub_group_non_uniform_broadcast(x, i);
            r = op == 0 ? (r & v) : op == 1 ? (r | v) : (r ^ v);
        }
    }
    return r;
}
/* the thread's first out-of-bounds or misaligned access (once per thread, at its end): the minima of (thread << 32 | address)
   and (thread << 32 | pc) in the fault slot, 64-bit word err of mem (runtime/faults.py) */
WV_FN void wv_fault(__global uchar* mem, uint err, uint a, uint pc) {
    ulong g = ((ulong)get_group_id(2) * get_num_groups(1) + get_group_id(1)) * get_num_groups(0) + get_group_id(0);
    ulong t = g * (get_local_size(0) * get_local_size(1) * get_local_size(2)) + get_local_linear_id();
    volatile __global ulong* e = (volatile __global ulong*)mem + err;
    atom_min(e, (t << 32) | a);
    atom_min(e + 1, (t << 32) | pc);
}
#define WV_REPORT() if (wv_bad) wv_fault(mem, wv_err, wv_fa, wv_fpc)
WV_FN uint D2H_BITS(double x) { ushort h; vstore_half_rte(x, 0, (__private half*)&h); return (uint)h; }
WV_FN float H2F_BITS(uint u) { ushort s = (ushort)u; return vload_half(0, (__private const half*)&s); }
"""

_SREG: dict[int, str] = {
    SRegId.TID_X: "get_local_id(0)",
    SRegId.TID_Y: "get_local_id(1)",
    SRegId.TID_Z: "get_local_id(2)",
    SRegId.WID: "get_sub_group_id()",
    SRegId.LID: "get_sub_group_local_id()",
    SRegId.CTAID_X: "get_group_id(0)",
    SRegId.CTAID_Y: "get_group_id(1)",
    SRegId.CTAID_Z: "get_group_id(2)",
    SRegId.NTID_X: "get_local_size(0)",
    SRegId.NTID_Y: "get_local_size(1)",
    SRegId.NTID_Z: "get_local_size(2)",
    SRegId.NCTAID_X: "get_num_groups(0)",
    SRegId.NCTAID_Y: "get_num_groups(1)",
    SRegId.NCTAID_Z: "get_num_groups(2)",
    SRegId.NWAVES: "get_num_sub_groups()",
}

_ATOM = {
    AtomOp.ADD: "atomic_add",
    AtomOp.SUB: "atomic_sub",
    AtomOp.MIN: "atomic_min",
    AtomOp.MAX: "atomic_max",
    AtomOp.AND: "atomic_and",
    AtomOp.OR: "atomic_or",
    AtomOp.XOR: "atomic_xor",
    AtomOp.EXCH: "atomic_xchg",
}

_BITS = {ReduceOp.AND: 0, ReduceOp.OR: 1, ReduceOp.XOR: 2}  # wv_sg_bits's operators


class OpenCL(Dialect):
    vector_types = {2: "uint2", 4: "uint4"}  # the built-in vector types: one 64- or 128-bit access
    name = "opencl"
    opaque_at_barrier = True  # Intel's CPU runtime: render.Dialect.opaque_at_barrier

    def prelude(self) -> str:
        return HEADER + HELPERS + FLOAT_KEYS + CHECKS

    def kernel_open(self, k: Kernel, params: list[str], wave_width: int) -> str:
        attrs = [f"__attribute__((intel_reqd_sub_group_size({wave_width})))"]
        if k.workgroup_size is not None:
            attrs.append("__attribute__((reqd_work_group_size({}, {}, {})))".format(*k.workgroup_size))
        args = [
            "__global uchar* restrict mem",
            "__global const uchar* restrict cmem",
            *(f"uint {b}" for b in BOUND_ARGS),
            *(f"uint {p}" for p in params),
        ]
        return f"{' '.join(attrs)}\n__kernel void {k.name}({', '.join(args)}) {{"

    def sreg(self, sid: int, wave_width: int) -> str:
        if sid == SRegId.WAVE_WIDTH:
            return f"{wave_width}u"
        return f"(uint){_SREG[sid]}"

    def _base(self, space: str) -> str:
        return {"global": "mem", "local": "lmem", "const": "cmem"}[space]

    def ptr(self, space: str, ctype: str, addr: str) -> str:
        q = {"global": "__global", "local": "__local", "const": "__global const"}[space]
        return f"(({q} {ctype}*)({self._base(space)} + ({addr})))"

    def load(self, space: str, ctype: str, addr: str) -> str:
        return f"(*{self.ptr(space, ctype, addr)})"

    def atomic(self, space: str, op: AtomOp, ctype: str, addr: str, args: list[str]) -> str:
        q = "__global" if space == "global" else "__local"
        p = f"((volatile {q} {ctype}*)({self._base(space)} + ({addr})))"
        if ctype == "float":
            return (
                f"wv_atomic_addf_{'g' if space == 'global' else 'l'}(((volatile {q} uint*)({self._base(space)} + "
                f"({addr}))), {args[0]})"
            )
        if op is AtomOp.CAS:
            return f"atomic_cmpxchg({p}, ({ctype}){args[0]}, ({ctype}){args[1]})"
        return f"{_ATOM[op]}({p}, ({ctype}){args[0]})"

    lane = "get_sub_group_local_id()"
    checks_bounds = True

    def shuffle(self, x: str, src: str) -> str:
        return f"sub_group_shuffle({x}, {src})"

    def group_reduce(self, op: ReduceOp, ctype: str, x: str) -> str:
        if op in _BITS:
            return f"({ctype})wv_sg_bits({_BITS[op]}, (uint)({x}))"
        return f"sub_group_non_uniform_reduce_{op.value}({x})"

    def prefix_add(self, x: str) -> str:
        return f"sub_group_non_uniform_scan_exclusive_add({x})"

    def vote(self, op: Op, p: str) -> str:
        if op is Op.BALLOT:
            return f"sub_group_ballot({p}).x"
        return f"(bool)sub_group_non_uniform_{op.name.lower()}({p})"

    def barrier(self) -> str:
        return "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);"

    def fence(self, scope: Scope) -> str:
        return "mem_fence(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);"

    def local_decl(self, nbytes: int) -> str:
        words = (nbytes + 7) // 8
        return f"__local ulong lmem_[{words}]; __local uchar* lmem = (__local uchar*)lmem_;"
