"""Why gemm_bias_gelu differs from the Rust emulator, word by word (docs/performance.md).

    WAVEGPU_RUST_WAVE=/path/to/wave python benchmarks/rust_gelu_words.py [--big] [--n 256]

The Rust toolchain's CI kernel `gemm_bias_gelu` (its tests/ci/kernels) on the inputs that
`benchmarks/compiled_engine.py --rust-only --quick` gives it (`--big`: those of `--rust-only
--big`), run by its `wave-emu` and by ours (NumPy engine; the compiled engine is bit-identical
to it). For each output word that differs: the matrix product plus bias `x` (from the same
kernel with its GELU epilogue cut out, which both emulators compute alike), the epilogue's rows
replayed on `x` (mul, neg, exp2, add, rcp, mul: ours as the emulator computes them, Rust's as
its executor does, `f32::exp2` being the C library's `exp2f`), and the error of each exp2
result in ulps against 2^t computed to 60 digits (decimal). Prints which row makes the
difference.
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import decimal
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compiled_engine import RUST_ENV, RustCase, rust_binaries, rust_cases, ulps

import wavegpu as wg

F32 = np.float32
decimal.getcontext().prec = 60
LN2 = decimal.Decimal(2).ln()


def exp2_error(value: np.float32, t: np.float32) -> float:
    """(value - 2^t) in ulps of value's binade, 2^t to 60 digits."""
    exact = (decimal.Decimal(float(t)) * LN2).exp()
    return float((decimal.Decimal(float(value)) - exact) / decimal.Decimal(float(np.spacing(value))))


def without_gelu(source: str) -> str:
    """The kernel with its GELU epilogue cut out: C = A * B + bias."""
    lines = source.splitlines()
    start = next(i for i, line in enumerate(lines) if "Apply GELU" in line)
    end = next(i for i, line in enumerate(lines) if "=== STORE C ===" in line)
    return "\n".join(lines[:start] + lines[end:]) + "\n"


def ours(case: RustCase, source: str) -> np.ndarray:
    prog = wg.assemble(source, "gemm_bias_gelu.wave")
    res = wg.emulate(prog.kernels[0], grid=case.grid, workgroup=case.workgroup, memory=case.memory(),
                     args=case.regs, engine="numpy")  # fmt: skip
    off, nbytes = case.out
    return res.memory[off : off + nbytes].view(np.uint32).copy()


def rust(case: RustCase, source: str, bins: tuple[Path, Path], tmp: Path) -> np.ndarray:
    src, wbin = tmp / "k.wave", tmp / "k.wbin"
    src.write_text(source)
    subprocess.run([str(bins[0]), str(src), "-o", str(wbin)], check=True, capture_output=True)
    cmd = [str(bins[1]), str(wbin), "--grid", ",".join(map(str, case.grid)),
           "--workgroup", ",".join(map(str, case.workgroup)), "--device-memory", str(case.size)]  # fmt: skip
    for i, (off, data) in enumerate(case.inputs):
        np.ascontiguousarray(data).tofile(tmp / f"in{i}.bin")
        cmd += ["--arg", f"{off}:{tmp / f'in{i}.bin'}"]
    for i, v in enumerate(case.regs):
        cmd += ["--set-reg", f"{i}:{v}"]
    off, nbytes = case.out
    r = subprocess.run([*cmd, "--dump-u32", f"{off}:{nbytes // 4}"], check=True, capture_output=True, text=True)
    return np.array(r.stdout.split(), dtype=np.uint64).astype(np.uint32)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--big", action="store_true", help="the inputs of compiled_engine.py --rust-only --big")
    ap.add_argument("--n", type=int, default=256, help="the GEMM size (256, or 1024 with --big)")
    opts = ap.parse_args()
    root = Path(os.environ.get(RUST_ENV, ""))
    bins = rust_binaries(root) if os.environ.get(RUST_ENV) else None
    if bins is None:
        print(f"not measured: set {RUST_ENV} to a built checkout of the Rust toolchain (docs/performance.md)")
        return
    gemm, vadd = ([256, 1024], [1 << 20, 1 << 24]) if opts.big else ([256], [1 << 20])
    case = next(c for c in rust_cases(root, gemm, vadd) if c.name == f"gemm_bias_gelu {opts.n}^3")
    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    libm.exp2f.restype, libm.exp2f.argtypes = ctypes.c_float, [ctypes.c_float]
    with tempfile.TemporaryDirectory(prefix="wave-gelu-") as t:
        tmp = Path(t)
        x_ours, x_rust = ours(case, without_gelu(case.source)), rust(case, without_gelu(case.source), bins, tmp)
        y_ours, y_rust = ours(case, case.source), rust(case, case.source, bins, tmp)
    print(f"{case.name}: A * B + bias (GELU cut out): {int(np.count_nonzero(x_ours != x_rust))} words differ")
    words = np.flatnonzero(y_ours != y_rust)
    print(f"gemm_bias_gelu: {words.size} of {y_ours.size:,} words differ")
    coef = np.uint32(0x401D1463).view(F32)  # the kernel's 1.702 * log2(e)
    one = F32(1)
    by_row: dict[str, int] = {}
    print(f"{'word':>6} {'x':>15} {'exp2 argument t':>24} {'ours exp2(t)':>23} {'Rust exp2(t)':>23} "
          f"{'ours out':>10} {'Rust out':>10}  ulps apart")  # fmt: skip
    for w in words:
        x = x_ours[w].view(F32)
        t = -(x * coef)  # mul.f32, neg.f32: exact IEEE rows in both
        e_ours = F32(np.exp2(np.float64(t)))  # ours: in float64, rounded once (semantics.py)
        e_rust = F32(libm.exp2f(float(t)))  # Rust: f32::exp2, the C library's exp2f
        for name, e, rcp in (("ours", e_ours, lambda d: F32(1.0 / np.float64(d))), ("Rust", e_rust, lambda d: one / d)):
            got = (x * rcp(one + e)).view(np.uint32)
            want = (y_ours if name == "ours" else y_rust)[w]
            assert got == want, f"word {w}: the {name} replay gives {got:#x}, the run {want:#x}"
        # the rows where the two differ, replayed with the other emulator's exp2 / rcp
        swap_exp2 = (x * F32(1.0 / np.float64(one + e_rust))).view(np.uint32) == y_rust[w]
        row = "exp2" if e_ours != e_rust and swap_exp2 else "rcp" if e_ours == e_rust else "exp2 and rcp"
        by_row[row] = by_row.get(row, 0) + 1
        apart = int(ulps(y_ours[w : w + 1].view(F32), y_rust[w : w + 1].view(F32))[0])
        print(f"{w:6d} {x:+.8e} ({x_ours[w]:#010x}) {t:+.9g} ({t.view(np.uint32):#010x}) "
              f"{e_ours.view(np.uint32):#010x} ({exp2_error(e_ours, t):+.6f}) "
              f"{e_rust.view(np.uint32):#010x} ({exp2_error(e_rust, t):+.6f}) "
              f"{y_ours[w]:#010x} {y_rust[w]:#010x}  {apart}")  # fmt: skip
    print("the row that makes each difference:", ", ".join(f"{k}: {v} words" for k, v in by_row.items()) or "none")
    print("(the exp2 columns: the result's bits and, in brackets, its error in ulps against 2^t to 60 digits)")


if __name__ == "__main__":
    main()
