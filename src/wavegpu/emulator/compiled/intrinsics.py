"""LLVM intrinsics for the compiled engine: bit casts between integers and floats, and the
fused multiply-add (`llvm.fma`, one rounding, as DESIGN section 3 asks)."""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.core.extending import intrinsic


def _fma(builder: ir.IRBuilder, t: ir.Type, name: str) -> ir.Function:
    return cgutils.get_or_insert_function(builder.module, ir.FunctionType(t, [t, t, t]), name)


@intrinsic
def f32_of(typingctx, bits):  # type: ignore[no-untyped-def]
    """The float32 whose bits are the low 32 bits of an integer."""
    sig = types.float32(bits)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        low = builder.trunc(args[0], ir.IntType(32)) if bits.bitwidth > 32 else args[0]
        return builder.bitcast(low, ir.FloatType())

    return sig, codegen


@intrinsic
def bits_of_f32(typingctx, x):  # type: ignore[no-untyped-def]
    """The bits of a float32, zero-extended to int64."""
    sig = types.int64(x)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.zext(builder.bitcast(args[0], ir.IntType(32)), ir.IntType(64))

    return sig, codegen


@intrinsic
def f64_of(typingctx, bits):  # type: ignore[no-untyped-def]
    """The float64 whose bits are a 64-bit integer."""
    sig = types.float64(bits)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.bitcast(args[0], ir.DoubleType())

    return sig, codegen


@intrinsic
def bits_of_f64(typingctx, x):  # type: ignore[no-untyped-def]
    """The bits of a float64 as int64."""
    sig = types.int64(x)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.bitcast(args[0], ir.IntType(64))

    return sig, codegen


@intrinsic
def fma32(typingctx, a, b, c):  # type: ignore[no-untyped-def]
    """a * b + c for float32 with one rounding (llvm.fma.f32)."""
    sig = types.float32(types.float32, types.float32, types.float32)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.call(_fma(builder, ir.FloatType(), "llvm.fma.f32"), args)

    return sig, codegen


@intrinsic
def fma64(typingctx, a, b, c):  # type: ignore[no-untyped-def]
    """a * b + c for float64 with one rounding (llvm.fma.f64)."""
    sig = types.float64(types.float64, types.float64, types.float64)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.call(_fma(builder, ir.DoubleType(), "llvm.fma.f64"), args)

    return sig, codegen


__all__ = ["bits_of_f32", "bits_of_f64", "f32_of", "f64_of", "fma32", "fma64"]
