"""LLVM intrinsics for the compiled engine: bit casts between integers and floats, the fused
multiply-add (`llvm.fma`, one rounding, as DESIGN section 3 asks), the host's f16-to-f32
conversion, and the atomic read-modify-writes of workgroups that share memory across threads."""

from __future__ import annotations

import platform
from collections.abc import Callable
from typing import cast

import numpy as np
from llvmlite import binding, ir
from numba import types
from numba.core import cgutils
from numba.core.extending import intrinsic

# Each intrinsic is cast to how jitted code calls it (the function given to numba's `intrinsic`
# takes numba's typing context and returns a signature and a code generator): an integer holds
# raw bits, a float is a float32 or a float64.
Bits = int | np.integer
Float = float | np.floating


def _fma(builder: ir.IRBuilder, t: ir.Type, name: str) -> ir.Function:
    return cgutils.get_or_insert_function(builder.module, ir.FunctionType(t, [t, t, t]), name)


def _f32_of(typingctx, bits):
    """The float32 whose bits are the low 32 bits of an integer."""
    sig = types.float32(bits)

    def codegen(context, builder, signature, args):
        low = builder.trunc(args[0], ir.IntType(32)) if bits.bitwidth > 32 else args[0]
        return builder.bitcast(low, ir.FloatType())

    return sig, codegen


f32_of = cast("Callable[[Bits], float]", intrinsic(_f32_of))


def _bits_of_f32(typingctx, x):
    """The bits of a float32, zero-extended to int64."""
    sig = types.int64(x)

    def codegen(context, builder, signature, args):
        return builder.zext(builder.bitcast(args[0], ir.IntType(32)), ir.IntType(64))

    return sig, codegen


bits_of_f32 = cast("Callable[[Float], int]", intrinsic(_bits_of_f32))


def _f64_of(typingctx, bits):
    """The float64 whose bits are a 64-bit integer."""
    sig = types.float64(bits)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return sig, codegen


f64_of = cast("Callable[[Bits], float]", intrinsic(_f64_of))


def _bits_of_f64(typingctx, x):
    """The bits of a float64 as int64."""
    sig = types.int64(x)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))

    return sig, codegen


bits_of_f64 = cast("Callable[[Float], int]", intrinsic(_bits_of_f64))


_X86 = platform.machine().lower() in ("x86_64", "amd64")
if _X86:  # numba's JIT reads inline assembly only with the host's parser loaded
    binding.initialize_native_asmparser()


def _f32_of_f16(typingctx, bits):
    """The float32 value of the f16 in the low 16 bits of an integer (`fpext half`: one
    vcvtph2ps with F16C, one fcvt on AArch64; a NaN keeps its payload, quieted)."""
    sig = types.float32(bits)

    def codegen(context, builder, signature, args):
        i32 = ir.IntType(32)
        low = builder.trunc(args[0], i32) if bits.bitwidth > 32 else args[0]
        if _X86:  # vmovd zeroes the register first: LLVM would insert the half into whatever it
            # held (vpinsrw), a false dependency on, often, a loop's float accumulator
            asm = ir.InlineAsm(ir.FunctionType(ir.FloatType(), [i32]), "vmovd $1, $0\n\tvcvtph2ps $0, $0", "=x,r")
            return builder.call(asm, [builder.and_(low, ir.Constant(i32, 0xFFFF))])
        half = builder.bitcast(builder.trunc(low, ir.IntType(16)), ir.HalfType())
        return builder.fpext(half, ir.FloatType())

    return sig, codegen


f32_of_f16 = cast("Callable[[Bits], float]", intrinsic(_f32_of_f16))


def native_half() -> bool:
    """Whether the host converts f16 to f32 in hardware (x86 with F16C, or AArch64): without,
    LLVM lowers `fpext half` to a runtime call that numba's JIT may not link."""
    if platform.machine().lower() in ("arm64", "aarch64"):
        return True
    return bool(binding.get_host_cpu_features().get("f16c"))


def _fma32(typingctx, a, b, c):
    """a * b + c for float32 with one rounding (llvm.fma.f32)."""
    sig = types.float32(types.float32, types.float32, types.float32)

    def codegen(context, builder, signature, args):
        return builder.call(_fma(builder, ir.FloatType(), "llvm.fma.f32"), args)

    return sig, codegen


fma32 = cast("Callable[[Float, Float, Float], float]", intrinsic(_fma32))


def _fma64(typingctx, a, b, c):
    """a * b + c for float64 with one rounding (llvm.fma.f64)."""
    sig = types.float64(types.float64, types.float64, types.float64)

    def codegen(context, builder, signature, args):
        return builder.call(_fma(builder, ir.DoubleType(), "llvm.fma.f64"), args)

    return sig, codegen


fma64 = cast("Callable[[Float, Float, Float], float]", intrinsic(_fma64))


def _rmw(op: str) -> Callable[[np.ndarray, Bits, Bits], int]:
    def rmw(typingctx, m32, index, value):
        sig = types.int64(m32, index, value)

        def codegen(context, builder, signature, args):
            aryty = signature.args[0]
            ary = context.make_array(aryty)(context, builder, args[0])
            ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]])
            v = builder.trunc(args[2], ir.IntType(32))
            old = builder.atomic_rmw(op, ptr, v, "monotonic")
            return builder.zext(old, ir.IntType(64))

        return sig, codegen

    rmw.__doc__ = f"m32[index] {op}= value as one atomic instruction (`atomicrmw {op}`); the old word."
    return cast("Callable[[np.ndarray, Bits, Bits], int]", intrinsic(rmw))


# the atomics whose memory result does not depend on the order of the operations: with these,
# workgroups on other threads may update one word at once (docs/emulator.md, "Parallel workgroups")
rmw_add = _rmw("add")
rmw_sub = _rmw("sub")
rmw_and = _rmw("and")
rmw_or = _rmw("or")
rmw_xor = _rmw("xor")
rmw_min_s = _rmw("min")
rmw_max_s = _rmw("max")
rmw_min_u = _rmw("umin")
rmw_max_u = _rmw("umax")

__all__ = [
    "bits_of_f32",
    "bits_of_f64",
    "f32_of",
    "f32_of_f16",
    "f64_of",
    "fma32",
    "fma64",
    "native_half",
    "rmw_add",
    "rmw_and",
    "rmw_max_s",
    "rmw_max_u",
    "rmw_min_s",
    "rmw_min_u",
    "rmw_or",
    "rmw_sub",
    "rmw_xor",
]
