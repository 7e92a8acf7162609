"""Constant folding of float operations at compile time gives the emulator's run-time bits, silently
(issue 28.7): inf * 0, inf - inf, 0 / 0, overflow, sqrt(-1), NaN and inf converted to integers.
-O0 runs no pass (the emulator computes each operation); -O2 folds them (sccp)."""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from wavegpu.compiler import Options, compile_python
from wavegpu.runtime.kernel import run_kernel

VALUES = ["wg.inf", "-wg.inf", "wg.nan", "0.0", "-0.0", "3.4028234663852886e38", "1e-45", "1.5", "-2.5", "4.0"]
# (expression of a and b, result array): each written into a variable first, so that only the
# MIR passes (not the frontend) can fold it
F32_OPS = [
    "a * b",
    "a + b",
    "a - b",
    "a / b",
    "wg.sqrt(a)",
    "wg.rsqrt(a)",
    "wg.fma(a, b, a)",
    "min(a, b)",
    "max(a, b)",
    "wg.floor(a)",
    "abs(a)",
    "-a",
    "wg.exp2(a)",
    "wg.log2(a)",
]
INT_OPS = ["wg.i32(a)", "int(a * b)", "wg.i32(a + b)"]
UINT_OPS = ["wg.u32(a)", "wg.u32(a * b)"]
F16_OPS = ["wg.f16(a)", "wg.f16(a * b)"]
F64_OPS = ["wg.f64(a) * wg.f64(b)", "wg.f64(a) - wg.f64(b)", "wg.sqrt(wg.f64(a))"]


def kernel(a: str, b: str, f: str, i: str, u: str, h: str, d: str) -> str:
    return f"""import wavegpu as wg

@wg.kernel
def k(fo: wg.f32[:], io: wg.i32[:], uo: wg.u32[:], ho: wg.f16[:], do: wg.f64[:]):
    a = wg.f32({a})
    b = wg.f32({b})
    fo[0] = {f}
    io[0] = {i}
    uo[0] = {u}
    ho[0] = {h}
    do[0] = {d}
"""


def run(text: str, opt: int) -> bytes:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a NumPy RuntimeWarning while folding fails the test
        opts = Options(opt=opt, dump_after={"sccp"})
        prog = compile_python(text, opts)
    if opt:
        folded = opts.dumps[-1][1]  # every float operation and conversion was folded
        assert not [
            x for x in folded.splitlines() if " = " in x and (" cvt " in x or x.endswith(("f32", "f16", "f64")))
        ]
    outs = [np.zeros(1, t) for t in (np.float32, np.int32, np.uint32, np.float16, np.float64)]
    run_kernel(prog.kernels[0], outs, grid=1, workgroup=1)
    return b"".join(o.tobytes() for o in outs)


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(VALUES),
    st.sampled_from(VALUES),
    st.sampled_from(F32_OPS),
    st.sampled_from(INT_OPS),
    st.sampled_from(UINT_OPS),
    st.sampled_from(F16_OPS),
    st.sampled_from(F64_OPS),
)
def test_folded_floats_match_the_run_time_bits(a: str, b: str, f: str, i: str, u: str, h: str, d: str) -> None:
    text = kernel(a, b, f, i, u, h, d)
    assert run(text, 2) == run(text, 0), text


def test_inf_times_zero_folds_silently_to_the_canonical_nan() -> None:
    text = kernel("wg.inf", "0.0", "a * b", "wg.i32(a * b)", "wg.u32(a)", "wg.f16(a * b)", "wg.f64(a) - wg.f64(a)")
    got = run(text, 2)
    fo, io, uo, ho, do = (
        np.frombuffer(got[0:4], np.uint32)[0],
        np.frombuffer(got[4:8], np.int32)[0],
        np.frombuffer(got[8:12], np.uint32)[0],
        np.frombuffer(got[12:14], np.uint16)[0],
        np.frombuffer(got[14:22], np.uint64)[0],
    )
    assert (fo, io, uo, ho, do) == (0x7FFFFFFF, 0, 0xFFFFFFFF, 0x7FFF, 0x7FFFFFFFFFFFFFFF)
