"""SYCL 2020 dialect: `sycl::bit_cast`, `atomic_ref`, sub-group shuffles, an opportunistic group
(the active lanes) for reductions, prefix sums and votes, and each kernel in two forms that share
one body function `wv_body_<name>(nd_item, local memory, mem, cmem, a0..)`:

- the classic form the backends document describes, `wv_launch_<name>(queue, grid, workgroup, mem,
  cmem, a0..)`: a command group that binds a `local_accessor` and submits a kernel lambda with
  `[[sycl::reqd_sub_group_size(W)]]` (for a program built with a SYCL compiler such as icpx);
- a free-function kernel `<name>(mem, cmem, a0..)` with the `nd_range_kernel<3>` and
  `sub_group_size<W>` properties and `work_group_static` local memory, which Intel's run-time
  compiler (`intel-sycl-rt`'s kernel_compiler) builds and launches by name."""

from __future__ import annotations

from ...errors import WaveError
from ...isa.registers import SRegId
from ...isa.vocabulary import AtomOp, Op, ReduceOp, Scope
from ...wbin.program import Kernel
from .prelude import CHECKS, FLOAT_KEYS, HELPERS
from .render import BOUND_ARGS, GenericPointers

HEADER = r"""
#include <sycl/sycl.hpp>
namespace syclex = sycl::ext::oneapi::experimental;
using namespace sycl;
typedef unsigned int uint;
typedef unsigned long long wv_ulong;
#define ulong wv_ulong
typedef unsigned char uchar;
typedef unsigned short ushort;
#define WV_FN static inline
#define F(x) sycl::bit_cast<float>((uint)(x))
#define U(x) sycl::bit_cast<uint>((float)(x))
#define D(x) sycl::bit_cast<double>((ulong)(x))
#define UL(x) sycl::bit_cast<ulong>((double)(x))
#define POPC(x) ((uint)sycl::popcount((uint)(x)))
#define CLZ(x) ((uint)sycl::clz((uint)(x)))
/* the swap form becomes llvm.bitreverse, which Intel's run-time compiler cannot lower */
static inline uint wv_brev_loop(uint v) { uint r = 0u; for (int i = 0; i < 32; i++) { r = (r << 1) | (v & 1u); v >>= 1; } return r; }
#define BREV(x) wv_brev_loop(x)
#define NEXT_F(a, b) sycl::nextafter((float)(a), (float)(b))
#define NEXT_D(a, b) sycl::nextafter((double)(a), (double)(b))
#define WV_INF sycl::bit_cast<double>(0x7FF0000000000000ull)
#define GLOBAL_ATOMIC_PTR uint*
#define LOCAL_ATOMIC_PTR uint*
#define WV_ATOMIC(T, p) sycl::atomic_ref<T, sycl::memory_order::relaxed, sycl::memory_scope::device>(*(p))
WV_FN uint ATOMIC_CAS(uint* p, uint c, uint v) { WV_ATOMIC(uint, p).compare_exchange_strong(c, v); return c; }
/* and/or/xor over the active lanes (the opportunistic group), one lane's value at a time:
   Intel's CPU runtime has no sub_group_non_uniform_reduce_and/or/xor for sub-groups of 32 or 64
   on SSE4.2 hosts, which reduce_over_group with bit_and/bit_or/bit_xor becomes */
static inline uint wv_sg_bits(int op, uint x) {
    auto g = syclex::this_work_item::get_opportunistic_group();
    uint r = op == 0 ? 0xFFFFFFFFu : 0u, n = (uint)g.get_local_linear_range();
    for (uint i = 0u; i < n; i++) {
        uint v = sycl::select_from_group(g, x, i);
        r = op == 0 ? (r & v) : op == 1 ? (r | v) : (r ^ v);
    }
    return r;
}
/* the thread's first out-of-bounds or misaligned access (once per thread, at its end: out of
   line, so the checks add little code to each kernel and the run-time compile stays short): the minima of (thread << 32 | address)
   and (thread << 32 | pc) in the fault slot, 64-bit word err of mem (runtime/faults.py) */
__attribute__((noinline)) static void wv_fault(sycl::nd_item<3> it, uchar* mem, uint err, uint a, uint pc) {
    ulong t = (ulong)it.get_group_linear_id() * (ulong)it.get_local_range().size() + (ulong)it.get_local_linear_id();
    ulong* e = (ulong*)mem + err;
    sycl::atomic_ref<ulong, sycl::memory_order::relaxed, sycl::memory_scope::device,
                     sycl::access::address_space::global_space>(e[0]).fetch_min((t << 32) | a);
    sycl::atomic_ref<ulong, sycl::memory_order::relaxed, sycl::memory_scope::device,
                     sycl::access::address_space::global_space>(e[1]).fetch_min((t << 32) | pc);
}
#define WV_REPORT() if (wv_bad) wv_fault(it_, mem, wv_err, wv_fa, wv_fpc)
WV_FN uint D2H_BITS(double x) { return (uint)sycl::bit_cast<ushort>((_Float16)x); }
WV_FN float H2F_BITS(uint u) { return (float)sycl::bit_cast<_Float16>((ushort)u); }
"""

_SREG: dict[int, str] = {
    SRegId.TID_X: "it_.get_local_id(2)",
    SRegId.TID_Y: "it_.get_local_id(1)",
    SRegId.TID_Z: "it_.get_local_id(0)",
    SRegId.WID: "sg_.get_group_linear_id()",
    SRegId.LID: "sg_.get_local_linear_id()",
    SRegId.CTAID_X: "it_.get_group(2)",
    SRegId.CTAID_Y: "it_.get_group(1)",
    SRegId.CTAID_Z: "it_.get_group(0)",
    SRegId.NTID_X: "it_.get_local_range(2)",
    SRegId.NTID_Y: "it_.get_local_range(1)",
    SRegId.NTID_Z: "it_.get_local_range(0)",
    SRegId.NCTAID_X: "it_.get_group_range(2)",
    SRegId.NCTAID_Y: "it_.get_group_range(1)",
    SRegId.NCTAID_Z: "it_.get_group_range(0)",
    SRegId.NWAVES: "sg_.get_group_linear_range()",
}
_ATOM = {
    AtomOp.ADD: "fetch_add",
    AtomOp.SUB: "fetch_sub",
    AtomOp.MIN: "fetch_min",
    AtomOp.MAX: "fetch_max",
    AtomOp.AND: "fetch_and",
    AtomOp.OR: "fetch_or",
    AtomOp.XOR: "fetch_xor",
    AtomOp.EXCH: "exchange",
}
_GROUP_OP = {
    ReduceOp.ADD: "plus",
    ReduceOp.MIN: "minimum",
    ReduceOp.MAX: "maximum",
    ReduceOp.AND: "bit_and",
    ReduceOp.OR: "bit_or",
    ReduceOp.XOR: "bit_xor",
}

_BITS = {ReduceOp.AND: 0, ReduceOp.OR: 1, ReduceOp.XOR: 2}  # wv_sg_bits's operators


class SYCL(GenericPointers):
    # sycl::vec: one 64- or 128-bit access; components by index (SYCL 2020's operator[])
    vector_types = {2: "sycl::vec<uint, 2>", 4: "sycl::vec<uint, 4>"}

    def vector_part(self, var: str, i: int) -> str:
        return f"{var}[{i}]"

    name = "sycl"
    # the SYCL device compiler may contract a * b + c across statements (clang's default for
    # offload languages) and we set no pragma for it here: every float row keeps its NaN check,
    # which also stands between a product and a sum (docs/backends.md, "Where NaNs are canonicalised")
    nan_plan = False
    opaque_at_barrier = True  # Intel's CPU runtime: render.Dialect.opaque_at_barrier

    def prelude(self) -> str:
        return HEADER + HELPERS + FLOAT_KEYS + CHECKS

    def kernel_open(self, k: Kernel, params: list[str], wave_width: int) -> str:
        if wave_width not in (8, 16, 32, 64):
            raise WaveError(f"sycl: sub-groups of {wave_width} lanes are not offered; use 8, 16, 32 or 64")
        args = [
            "sycl::nd_item<3> it_",
            "uchar* lmem",
            "uchar* mem",
            "const uchar* cmem",
            *(f"uint {b}" for b in BOUND_ARGS),
            *(f"uint {p}" for p in params),
        ]
        return f"static inline void wv_body_{k.name}({', '.join(args)}) {{\n    auto sg_ = it_.get_sub_group();"

    def kernel_close(self, k: Kernel, params: list[str], wave_width: int) -> str:
        words = (k.local_memory + 7) // 8
        uargs = "".join(f", uint {p}" for p in (*BOUND_ARGS, *params))
        pargs = "".join(f", {p}" for p in (*BOUND_ARGS, *params))
        accessor, lmem = "", "nullptr"
        if k.local_memory:
            accessor = f"        sycl::local_accessor<ulong, 1> lmem_(sycl::range<1>({words}), h);\n"
            lmem = "(uchar*)&lmem_[0]"
        classic = (
            f"/* {k.name}, classic form: grid and workgroup in WAVE's (x, y, z) order; SYCL's last dimension is x */\n"
            f"inline sycl::event wv_launch_{k.name}(sycl::queue& q, sycl::range<3> grid, sycl::range<3> workgroup, "
            f"uchar* mem, const uchar* cmem{uargs}) {{\n"
            "    return q.submit([&](sycl::handler& h) {\n"
            f"{accessor}"
            "        sycl::range<3> l(workgroup[2], workgroup[1], workgroup[0]);\n"
            "        sycl::range<3> g(grid[2] * l[0], grid[1] * l[1], grid[0] * l[2]);\n"
            f"        h.parallel_for(sycl::nd_range<3>(g, l), [=](sycl::nd_item<3> it_) "
            f"[[sycl::reqd_sub_group_size({wave_width})]] {{\n"
            f"            wv_body_{k.name}(it_, {lmem}, mem, cmem{pargs});\n"
            "        });\n"
            "    });\n"
            "}\n"
        )
        props = "SYCL_EXT_ONEAPI_FUNCTION_PROPERTY((syclex::nd_range_kernel<3>))"
        props += f"\nSYCL_EXT_ONEAPI_FUNCTION_PROPERTY((syclex::sub_group_size<{wave_width}>))"
        static = ""
        if k.local_memory:
            # work_group_static: group_local_memory_for_overwrite crashes Intel's run-time compiler here
            static = f"    static syclex::work_group_static<ulong[{words}]> lmem_;\n"
        free = (
            f"/* {k.name}, free-function form (Intel's run-time compiler launches it by name) */\n"
            f'extern "C" {props}\nvoid {k.name}(uchar* mem, const uchar* cmem{uargs}) {{\n'
            f"{static}"
            f"    wv_body_{k.name}(sycl::ext::oneapi::this_work_item::get_nd_item<3>(), {lmem}, mem, cmem{pargs});\n"
            "}\n"
        )
        return classic + free

    def sreg(self, sid: int, wave_width: int) -> str:
        if sid == SRegId.WAVE_WIDTH:
            return f"{wave_width}u"
        return f"(uint){_SREG[sid]}"

    def int_atomic(self, op: AtomOp, ctype: str, p: str, args: list[str]) -> str:
        if op is AtomOp.CAS:
            return f"ATOMIC_CAS((uint*){p}, (uint){args[0]}, (uint){args[1]})"
        return f"WV_ATOMIC({ctype}, {p}).{_ATOM[op]}(({ctype}){args[0]})"

    lane = "(uint)sg_.get_local_linear_id()"
    checks_bounds = True

    def shuffle(self, x: str, src: str) -> str:
        return f"sycl::select_from_group(sg_, (uint)({x}), (uint)({src}))"

    def group_reduce(self, op: ReduceOp, ctype: str, x: str) -> str:
        if op in _BITS:
            return f"({ctype})wv_sg_bits({_BITS[op]}, (uint)({x}))"
        return (
            f"sycl::reduce_over_group(syclex::this_work_item::get_opportunistic_group(), {x}, "
            f"sycl::{_GROUP_OP[op]}<{ctype}>())"
        )

    def prefix_add(self, x: str) -> str:
        return (
            "sycl::exclusive_scan_over_group(syclex::this_work_item::get_opportunistic_group(), "
            f"(uint)({x}), sycl::plus<uint>())"
        )

    def vote(self, op: Op, p: str) -> str:
        """Votes through add, max and min (built-ins every host has): a ballot sums distinct bits."""
        if op is Op.BALLOT:
            lane = self.lane
            return self.group_reduce(ReduceOp.ADD, "uint", f"((({p}) && {lane} < 32u) ? (1u << {lane}) : 0u)")
        combine = ReduceOp.MAX if op is Op.ANY else ReduceOp.MIN
        return f"({self.group_reduce(combine, 'uint', f'(({p}) ? 1u : 0u)')} != 0u)"

    def barrier(self) -> str:
        return "sycl::group_barrier(it_.get_group());"

    def fence(self, scope: Scope) -> str:
        s = "work_group" if scope in (Scope.WAVE, Scope.WORKGROUP) else "device"
        return f"sycl::atomic_fence(sycl::memory_order::acq_rel, sycl::memory_scope::{s});"

    def local_decl(self, nbytes: int) -> str:
        return "/* local memory: lmem, bound by the entry point (local_accessor or work_group_static) */"
