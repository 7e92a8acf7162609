"""numba's compiler pipeline for generated kernel functions: its default one without SSA.

Generated code assigns each per-register local one type everywhere (int64 bits, a bool
predicate, a float32 accumulator: codegen.Gen), so typing it without SSA gives the same types,
and LLVM's mem2reg builds the SSA form that the optimiser needs. numba's pass
(`reconstruct_ssa`) runs once per local that is assigned more than once, over every block of
the function: on the Rust toolchain's GEMM kernels it took about a fifth of the compile time
(docs/performance.md, "First compile"). tests/emulator/compiled check the results, bit for bit,
against the NumPy engine.
"""

from __future__ import annotations

from numba.core.compiler import Compiler


class KernelCompiler(Compiler):  # numba is untyped
    """numba's default nopython pipeline with `enable_ssa` off (set per compilation: the flags
    object is this compilation's own)."""

    def define_pipelines(self):
        self.state.flags.enable_ssa = False
        return super().define_pipelines()
