"""The compiled engine against the NumPy engine, NumPy itself and our OpenCL output on the host's
OpenCL CPU runtime (issue 16), and side by side with the Rust toolchain's emulator on its own CI
kernels when the Rust toolchain is present.

    python benchmarks/compiled_engine.py [--quick] [--repeat N] [--big] [--rust-only]
    python benchmarks/compiled_engine.py --startup [--startup-runs N] [--startup-against SRC]
    python benchmarks/emulator.py --compiled ...   (the first table)

Times are the best of `--repeat` runs after a warm-up (which also translates the kernel), around
`wg.emulate` (memory copy included) or the NumPy expression; OpenCL is kernel time: enqueue to
finish with the buffers already on the device, measured after all emulator figures (Intel's runtime
leaves worker threads spinning after a kernel). `--big` adds SGEMM 1024^3 (minutes on NumPy).

The Rust table (`rust_side_by_side`): WAVEGPU_RUST_WAVE names a checkout of the Rust toolchain
(github.com/Oabraham1/wave, built as docs/performance.md says; never part of this repository).
Its `wave-asm` assembles each kernel of its `tests/ci/kernels` to a `.wbin`; its `wave-emu` runs
that file as a whole process, and ours runs the same kernel in this process (its `.wbin`, or,
where that is in the Rust toolchain's own format, the same source by our assembler;
`engine="compiled"` under each translation of `TRANSLATIONS` (`--translations`), one thread and
all threads), in the same sitting, with the same inputs, and the results are compared (words that
differ, and by how many ulps at most); each kernel's first call is also timed in a fresh process
with an empty cache under each translation ("cold 1st"), and so is the first call of
examples/sgemm_8x8. Whatever cannot be run is printed as "not measured": no figure here is
quoted from anywhere. `--startup` (also part of `--rust-only`): `wave-emu` against the Rust
`wave-emu` as whole processes on vector add 2^20 (`rust_startup`), then where ours spends its
start-up (`startup_phases`).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

import wavegpu as wg

HERE = Path(__file__).resolve().parent
EX = HERE.parent / "examples"
KERNELS = HERE / "kernels"


def best(fn: Callable[[], object], repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


class Case:
    def __init__(
        self,
        name: str,
        prog: wg.Program,
        grid: tuple[int, ...],
        mem: np.ndarray,
        args: list[object],
        numpy: Callable[[], object] | None = None,
        check: Callable[[np.ndarray], bool] | None = None,
        workgroup: tuple[int, ...] | None = None,
    ):
        self.name, self.prog, self.grid, self.mem, self.args = name, prog, grid, mem, args
        self.numpy, self.check, self.workgroup = numpy, check, workgroup

    def emulate(self, engine: str) -> wg.EmulationResult:
        return wg.emulate(
            self.prog, grid=self.grid, workgroup=self.workgroup, memory=self.mem, args=self.args, engine=engine
        )


def vector_add(n: int) -> Case:
    prog = wg.assemble((EX / "vector_add.wave").read_text())
    a = np.arange(n, dtype=np.float32)
    b = np.full(n, 2.0, np.float32)
    mem = np.concatenate([a, b, np.zeros(n, np.float32)])
    return Case(
        f"vector add 2^{n.bit_length() - 1}",
        prog,
        (n // 256,),
        mem,
        [0, 4 * n, 8 * n, n],
        numpy=lambda: a + b,
        check=lambda m: np.array_equal(m.view(np.float32)[2 * n : 3 * n], a + b),
    )


def _gemm_inputs(n: int, dtype: type = np.float32) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.standard_normal((n, n)).astype(dtype), rng.standard_normal((n, n)).astype(dtype)


def sgemm_tiled(n: int) -> Case:
    A, B = _gemm_inputs(n)
    mem = np.concatenate([A.ravel(), B.ravel(), np.zeros(n * n, np.float32)])
    ref = A.astype(np.float64) @ B.astype(np.float64)
    return Case(
        f"tiled SGEMM {n}^3",
        wg.assemble((EX / "sgemm_tiled.wave").read_text()),
        (n // 16, n // 16),
        mem,
        [0, 4 * n * n, 8 * n * n, n],
        numpy=lambda: A @ B,
        check=lambda m: bool(np.allclose(m.view(np.float32)[2 * n * n :].reshape(n, n), ref, rtol=1e-3, atol=1e-3)),
    )


def blocked(n: int, bias_relu: bool = False) -> Case:
    text = (KERNELS / "sgemm_blocked.wave").read_text()
    if bias_relu:
        text = text.replace(
            "//EPILOGUE",
            "    shl.b32 r25, r7, 4\n    add.u32 r25, r4, r25\n    ld.global.v4.b32 {r20, r21, r22, r23}, [r25]\n"
            + "".join(
                f"    add.f32 r{13 + i}, r{13 + i}, r{20 + i}\n    max.f32 r{13 + i}, r{13 + i}, 0.0\n"
                for i in range(4)
            ),
        )
    A, B = _gemm_inputs(n)
    bias = np.linspace(-1, 1, n).astype(np.float32)
    mem = np.concatenate([A.ravel(), B.ravel(), np.zeros(n * n, np.float32), bias])
    ref = A.astype(np.float64) @ B.astype(np.float64)
    if bias_relu:
        ref = np.maximum(ref + bias, 0)
    name = f"GEMM+bias+ReLU f32 {n}^3" if bias_relu else f"blocked SGEMM {n}^3"
    return Case(
        name,
        wg.assemble(text),
        (n // 64, n // 16),
        mem,
        [0, 4 * n * n, 8 * n * n, n, 12 * n * n],
        numpy=(lambda: np.maximum(A @ B + bias, 0)) if bias_relu else (lambda: A @ B),
        check=lambda m: bool(
            np.allclose(m.view(np.float32)[2 * n * n : 3 * n * n].reshape(n, n), ref, rtol=1e-3, atol=1e-3)
        ),
    )


def gemm_f16(n: int) -> Case:
    A, B = _gemm_inputs(n, np.float16)
    bias = np.linspace(-1, 1, n).astype(np.float32)
    mem = np.concatenate(
        [A.ravel().view(np.uint8), B.ravel().view(np.uint8), np.zeros(2 * n * n, np.uint8), bias.view(np.uint8)]
    )
    ref = np.maximum(A.astype(np.float64) @ B.astype(np.float64) + bias, 0)
    return Case(
        f"GEMM+bias+ReLU f16 {n}^3",
        wg.assemble((KERNELS / "gemm_bias_relu_f16.wave").read_text()),
        (n // 64, n // 16),
        mem,
        [0, 2 * n * n, 4 * n * n, n, 6 * n * n],
        numpy=lambda: np.maximum(A.astype(np.float32) @ B.astype(np.float32) + bias, 0).astype(np.float16),
        check=lambda m: bool(
            np.allclose(m[4 * n * n : 6 * n * n].view(np.float16).reshape(n, n), ref, rtol=2e-2, atol=2e-2)
        ),
    )


def histogram(n: int) -> Case:
    x = np.random.default_rng(2).integers(0, 1 << 32, n, dtype=np.uint32)
    mem = np.concatenate([x, np.zeros(256, np.uint32)])
    ref = np.bincount(x & 255, minlength=256).astype(np.uint32)
    return Case(
        f"histogram 2^{n.bit_length() - 1}",
        wg.assemble((KERNELS / "histogram.wave").read_text()),
        (n // 4096,),
        mem,
        [0, 4 * n],
        numpy=lambda: np.bincount(x & 255, minlength=256),
        check=lambda m: np.array_equal(m.view(np.uint32)[n:], ref),
    )


def reduction(n: int) -> Case:
    x = np.random.default_rng(0).integers(0, 1000, n).astype(np.uint32)
    mem = np.concatenate([x, np.zeros(n // 256, np.uint32)])
    return Case(
        f"reduction 2^{n.bit_length() - 1}",
        wg.assemble((EX / "reduce.wave").read_text()),
        (n // 256,),
        mem,
        [0, 4 * n],
        numpy=lambda: x.reshape(-1, 256).sum(axis=1, dtype=np.uint32),
        check=lambda m: np.array_equal(m.view(np.uint32)[n:], x.reshape(-1, 256).sum(axis=1, dtype=np.uint32)),
    )


def scan(n: int) -> Case:
    x = np.random.default_rng(1).integers(0, 100, n).astype(np.uint32)
    mem = np.concatenate([x, np.zeros(n + n // 32, np.uint32)])
    return Case(
        f"wave scan 2^{n.bit_length() - 1}",
        wg.assemble((EX / "wave_scan.wave").read_text()),
        (n // 128,),
        mem,
        [0, 4 * n, 8 * n],
        numpy=lambda: np.cumsum(x.reshape(-1, 32), axis=1),
        check=lambda m: np.array_equal(m.view(np.uint32)[n : 2 * n], np.cumsum(x.reshape(-1, 32), axis=1).reshape(-1)),
        workgroup=(128, 1, 1),
    )


def saxpy(n: int) -> Case:
    @wg.kernel
    def saxpy(a: wg.f32, x: wg.f32[:], y: wg.f32[:], n: wg.i32):  # type: ignore[no-untyped-def]
        i = wg.global_id()
        if i < n:
            y[i] = a * x[i] + y[i]

    x = np.linspace(-1, 1, n).astype(np.float32)
    y = np.ones(n, np.float32)
    mem = np.concatenate([x, y])
    a = np.float32(2.5)
    return Case(
        f"compiled SAXPY 2^{n.bit_length() - 1}",
        saxpy.program,
        (n // 256,),
        mem,
        [a, 0, 4 * n, n],
        numpy=lambda: a * x + y,
        check=lambda m: np.allclose(m.view(np.float32)[n:], a * x + y),
        workgroup=(256, 1, 1),
    )


def opencl_time(case: Case, repeat: int) -> float | None:
    """Kernel time of our OpenCL output on the host's OpenCL runtime (None when there is none)."""
    try:
        from wavegpu.runtime import opencl

        ok, _why = opencl.available()
        if not ok:
            return None
        cl, context, queue = opencl.ctx()
        k = case.prog.kernels[0]
        prg = opencl.build(wg.translate(case.prog, "opencl", k.name))
        kern = cl.Kernel(prg, k.name)
        mf = cl.mem_flags
        mem = np.ascontiguousarray(case.mem).view(np.uint8).copy()
        dbuf = cl.Buffer(context, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=mem)
        cbuf = cl.Buffer(context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.zeros(16, np.uint8))
        wgs = case.workgroup or k.workgroup_size or (256, 1, 1)
        grid = tuple(case.grid) + (1,) * (3 - len(case.grid))
        gsize = tuple(g * w for g, w in zip(grid, wgs))
        from wavegpu.emulator.launch import arg_bits

        args = [np.uint32(arg_bits(a)) for a in case.args]

        def run() -> None:
            kern(queue, gsize, tuple(wgs), dbuf, cbuf, *args)
            queue.finish()

        return best(run, repeat)
    except Exception as e:  # a benchmark column, not a failure
        print(f"  (OpenCL: {type(e).__name__}: {e})")
        return None


def latency() -> None:
    """First-call and cached-call cost of a small kernel, in fresh processes with an empty cache."""
    import subprocess
    import sys

    path = str(EX / "vector_add.wave")
    code = (
        "import time, numpy as np, wavegpu as wg\n"
        f"p = wg.assemble(open({path!r}).read())\n"
        "t = time.perf_counter()\n"
        "wg.emulate(p, grid=1, memory=np.zeros(3072, np.uint8), args=[0, 1024, 2048, 256], engine='compiled')\n"
        "print(time.perf_counter() - t)\n"
    )
    tmp = tempfile.mkdtemp()
    try:
        env = dict(os.environ, WAVEGPU_CACHE_DIR=tmp)
        runs = [
            float(
                subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
            )
            for _ in range(3)
        ]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(
        f"\nvector add, 256 threads, engine='compiled', empty cache: first call {runs[0]:.2f} s "
        f"(row functions and driver compiled), then in fresh processes {runs[1]:.2f} s and {runs[2]:.2f} s "
        "(numba import and cache load)"
    )


# ------------------------------------------------------------------ side by side with the Rust emulator
RUST_ENV = "WAVEGPU_RUST_WAVE"
RUST_GEMMS = ("gemm_blocked", "gemm_bias_relu", "gemm_bias_gelu", "gemm_blocked_f16", "gemm_bias_relu_f16")
VADD_N = """; c[i] = a[i] + b[i], one element per thread (r0 = a, r1 = b, r2 = c: byte offsets)
.kernel vadd_n
.registers 16
.workgroup_size 256, 1, 1
    mov_sr r4, sr_thread_id_x
    mov_sr r5, sr_workgroup_id_x
    mov_sr r6, sr_workgroup_size_x
    imul r7, r5, r6
    iadd r7, r7, r4
    mov_imm r8, 4
    imul r7, r7, r8
    iadd r9, r7, r0
    device_load_u32 r10, r9
    iadd r9, r7, r1
    device_load_u32 r11, r9
    fadd r10, r10, r11
    iadd r9, r7, r2
    device_store_u32 r9, r10
    halt
.end
"""
"""A vector add in the Rust toolchain's flat dialect (its CI's vector adds have fixed sizes)."""


class RustCase:
    """A kernel in the Rust toolchain's dialect with its launch: both emulators get the same."""

    def __init__(
        self,
        name: str,
        source: str,
        grid: tuple[int, int, int],
        workgroup: tuple[int, int, int],
        regs: list[int],
        size: int,
        inputs: list[tuple[int, np.ndarray]],
        out: tuple[int, int],
    ):
        self.name, self.source, self.grid, self.workgroup = name, source, grid, workgroup
        self.regs, self.size, self.inputs, self.out = regs, size, inputs, out

    def memory(self) -> np.ndarray:
        mem = np.zeros(self.size, np.uint8)
        for off, data in self.inputs:
            raw = np.ascontiguousarray(data).view(np.uint8).ravel()
            mem[off : off + raw.size] = raw
        return mem


def rust_cases(root: Path, gemm_sizes: list[int], vadd_sizes: list[int]) -> list[RustCase]:
    """The Rust toolchain's CI GEMM kernels (its tests/ci/kernels, launched as its CI script
    launches them: 16x16 threads per 128x128 tile, arguments in r0-r5) and a vector add."""
    rng = np.random.default_rng(42)
    cases = []
    for n in vadd_sizes:
        a = rng.uniform(-1, 1, n).astype(np.float32)
        b = rng.uniform(-1, 1, n).astype(np.float32)
        cases.append(
            RustCase(
                f"vadd_n 2^{n.bit_length() - 1}",
                VADD_N,
                (n // 256, 1, 1),
                (256, 1, 1),
                [0, 4 * n, 8 * n],
                12 * n,
                [(0, a), (4 * n, b)],
                (8 * n, 4 * n),
            )
        )
    for name in RUST_GEMMS:
        path = root / "tests" / "ci" / "kernels" / f"{name}.wave"
        if not path.is_file():
            continue
        f16 = name.endswith("_f16")
        bias = "bias" in name
        for n in gemm_sizes:
            elt = 2 if f16 else 4
            dt = np.float16 if f16 else np.float32
            a = rng.uniform(-1, 1, (n, n)).astype(dt)
            b = rng.uniform(-1, 1, (n, n)).astype(dt)
            off_b = n * n * elt
            inputs = [(0, a), (off_b, b)]
            if bias:
                off_bias = 2 * n * n * elt
                off_c = off_bias + 4 * n
                inputs.append((off_bias, rng.uniform(-1, 1, n).astype(np.float32)))
                regs = [0, off_b, off_bias, off_c, n, n]
            else:
                off_c = 2 * n * n * elt
                regs = [0, off_b, off_c, n, n, n]
            size = off_c + n * n * elt + 4096
            cases.append(
                RustCase(
                    f"{name} {n}^3",
                    path.read_text(),
                    (n // 128, n // 128, 1),
                    (16, 16, 1),
                    regs,
                    size,
                    inputs,
                    (off_c, n * n * elt),
                )
            )
    return cases


def rust_binaries(root: Path) -> tuple[Path, Path] | None:
    """(wave-asm, wave-emu) of a built checkout (each crate's target/release), or in `root` itself."""
    for asm, emu in (
        (root / "wave-asm" / "target" / "release" / "wave-asm", root / "wave-emu" / "target" / "release" / "wave-emu"),
        (root / "wave-asm", root / "wave-emu"),
    ):
        if asm.is_file() and emu.is_file() and os.access(emu, os.X_OK):
            return asm, emu
    return None


def _median(xs: list[float]) -> float:
    return sorted(xs)[len(xs) // 2]


def ulps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """How many representable values lie between the floats a and b (same dtype, float16 or
    float32; +0 and -0 count as one value apart), element by element."""
    bits = np.dtype(f"u{a.dtype.itemsize}")
    sign = 1 << (8 * a.dtype.itemsize - 1)

    def ordered(x: np.ndarray) -> np.ndarray:
        u = x.view(bits).astype(np.int64)
        return np.where(u & sign, -(u & (sign - 1)) - 1, u)

    return np.abs(ordered(a) - ordered(b))


def agreement(mine: np.ndarray, theirs: np.ndarray, elem: type) -> str:
    """'bit-identical', or how many 32-bit words differ and by how many ulps at most (the output's
    elements as `elem`, float32 or float16)."""
    if theirs.size != mine.size:
        return f"Rust printed {theirs.size} words for {mine.size}"
    diff = int(np.count_nonzero(theirs != mine))
    if diff == 0:
        return "bit-identical"
    far = int(ulps(mine.view(elem), theirs.view(elem)).max())
    return f"{diff} of {mine.size:,} words differ (at most {far} ulp)"


TRANSLATIONS = ("c", "c-lanes", "c-chunks", "numba")
"""The compiled engine's translations (WAVEGPU_COMPILED): generated C by the system compiler as
it runs by default (its heavy lane-by-lane loops in chunks of 16 lanes: SIMD across lanes;
WAVEGPU_C_LANES=auto); the same C with every lane loop lane by lane (`c-lanes`: =scalar, the C
before the chunks); with every lane loop it can chunk in chunks (`c-chunks`: =chunked); and
generated Python by numba. Each is timed on its own (`--translations` picks some)."""


def translation_env(t: str) -> dict[str, str]:
    """The environment that selects translation t."""
    if t == "c-lanes":
        return {"WAVEGPU_COMPILED": "c", "WAVEGPU_C_LANES": "scalar"}
    if t == "c-chunks":
        return {"WAVEGPU_COMPILED": "c", "WAVEGPU_C_LANES": "chunked"}
    return {"WAVEGPU_COMPILED": t, "WAVEGPU_C_LANES": "auto"}


_FIRST_CALL = """
import os, resource, sys, time
sys.path.insert(0, {bench!r})
from pathlib import Path
import wavegpu as wg
import compiled_engine as B
c = [x for x in B.rust_cases(Path({root!r}), [{n}], [{v}]) if x.name == {name!r}][0]
prog = wg.load({wbin!r}) if {wbin!r} else wg.assemble(c.source)
kw = dict(grid=c.grid, workgroup=c.workgroup, memory=c.memory(), args=c.regs, engine="compiled")
cpu = time.process_time(); t = time.perf_counter()
wg.emulate(prog.kernels[0], **kw)
wall = time.perf_counter() - t
ch = resource.getrusage(resource.RUSAGE_CHILDREN)
print(wall, time.process_time() - cpu + ch.ru_utime + ch.ru_stime)
"""


_PICKED: list[str] = list(TRANSLATIONS)


def translations() -> list[str]:
    """The translations picked (`--translations`) that this machine can run (C needs a compiler
    on PATH, numba its package)."""
    from wavegpu.emulator.compiled import numba_available
    from wavegpu.emulator.compiled.cbuild import has_compiler

    def can(t: str) -> bool:
        return numba_available() if t == "numba" else has_compiler()

    return [t for t in _PICKED if can(t)]


def cold_first_call(code: str, translation: str) -> tuple[float, float] | str:
    """(wall, CPU seconds) of a first call in a fresh process with an empty cache folder
    (WAVEGPU_CACHE_DIR), under WAVEGPU_COMPILED=translation; or why it failed."""
    import subprocess

    cache = tempfile.mkdtemp(prefix="wave-cold-")
    try:
        env = dict(os.environ, WAVEGPU_CACHE_DIR=cache, **translation_env(translation))
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=1800)
        if r.returncode != 0:
            return (r.stderr.strip().splitlines() or ["failed"])[-1][:60]
        wall, cpu = map(float, r.stdout.split()[-2:])
        return wall, cpu
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def rust_side_by_side(gemm_sizes: list[int], vadd_sizes: list[int], repeat: int, only: str = "") -> None:
    """The Rust emulator and ours (each translation) on the same .wbin, same inputs, this sitting
    (module docstring)."""
    import subprocess

    env_root = os.environ.get(RUST_ENV)
    root = Path(env_root) if env_root else None
    bins = rust_binaries(root) if root else None
    print(f"\nSide by side with the Rust toolchain's emulator ({RUST_ENV}={env_root or '(unset)'})")
    if root is None or not root.is_dir():
        print(f"  not measured: set {RUST_ENV} to a checkout of github.com/Oabraham1/wave (docs/performance.md)")
        return
    if bins is None:
        print(f"  Rust: not measured (no built wave-asm and wave-emu under {root}); ours on its kernels only")
    cases = rust_cases(root, gemm_sizes, vadd_sizes)
    if only:
        cases = [c for c in cases if c.name.split()[0] in only.split(",")]
    cores = os.cpu_count() or 1
    trans = translations()
    wbin_from = "the .wbin its wave-asm wrote" if bins else "its source, by our assembler"
    print(f"  Rust: wave-emu as a whole process, median of {repeat}; ours: wg.emulate(engine='compiled') in "
          f"process on {wbin_from}, best of {repeat}, under each translation ({', '.join(trans)}); 'cold 1st': the first "
          "call in a fresh process with an empty cache (translation, compile and one run), wall / CPU seconds, "
          "once per kernel (every size runs the same translation)")  # fmt: skip
    tcols = " ".join(f"{f'{t} {th}thr':>10} {'Rust/' + t:>8}" for th in (1, cores) for t in trans)
    head = f"{'kernel':26} {'Rust':>9} {tcols} " + " ".join(f"{f'cold 1st {t}':>17}" for t in trans) + "  same result"
    print(head)
    print("-" * len(head))
    tmp = Path(tempfile.mkdtemp(prefix="wave-rust-"))
    refused = 0
    first_done: set[str] = set()
    saved = {v: os.environ.get(v) for v in ("WAVEGPU_COMPILED", "WAVEGPU_C_LANES")}
    try:
        for c in cases:
            kname = c.name.split()[0]
            src = tmp / f"{kname}.wave"
            src.write_text(c.source)
            note = ""
            prog = None
            wbin = tmp / f"{kname}.wbin"
            if bins is not None:
                r = subprocess.run([str(bins[0]), str(src), "-o", str(wbin)], capture_output=True, text=True)
                if r.returncode == 0:
                    try:
                        prog = wg.load(wbin)
                    except wg.WaveError:  # its own binary format (magic WAVE): the same source, ours assembled
                        refused += 1
                else:
                    note = f"  (its wave-asm failed: {r.stderr.strip()[:80]})"
            wbin_ours = str(wbin) if prog is not None else ""
            if prog is None:
                prog = wg.assemble(c.source, src.name)
            mem = c.memory()
            k = prog.kernels[0]
            kw = dict(grid=c.grid, workgroup=c.workgroup, memory=mem, args=c.regs, engine="compiled")
            firsts: dict[str, str] = {}
            for t in trans:
                if kname in first_done:
                    firsts[t] = "(same)"
                    continue
                n = c.grid[0] * 128 if "gemm" in kname else 256
                v = c.grid[0] * 256 if kname == "vadd_n" else 256
                code = _FIRST_CALL.format(bench=str(HERE), root=str(root), n=n, v=v, name=c.name, wbin=wbin_ours)
                got = cold_first_call(code, t)
                firsts[t] = f"{got[0]:6.2f}s/{got[1]:5.2f}s" if isinstance(got, tuple) else f"failed: {got}"
            first_done.add(kname)
            times: dict[tuple[str, int], float] = {}
            results: dict[str, np.ndarray] = {}
            for t in trans:
                os.environ.update(translation_env(t))
                try:
                    results[t] = wg.emulate(k, **kw).memory  # type: ignore[arg-type]
                except wg.WaveError as e:
                    print(f"{c.name:26} ours ({t}): not measured ({e})")
                    continue
                for th in (1, cores):
                    os.environ["WAVEGPU_THREADS"] = str(th)
                    try:
                        times[t, th] = best(lambda k=k, kw=kw: wg.emulate(k, **kw), repeat)  # type: ignore[arg-type,misc]
                    finally:
                        del os.environ["WAVEGPU_THREADS"]
            for v, was in saved.items():
                if was is None:
                    os.environ.pop(v, None)
                else:
                    os.environ[v] = was
            rust_t: float | None = None
            same = "not compared"
            if bins is not None and wbin.is_file():
                cmd = [str(bins[1]), str(wbin), "--grid", ",".join(map(str, c.grid)),
                       "--workgroup", ",".join(map(str, c.workgroup)), "--device-memory", str(c.size)]  # fmt: skip
                for i, (off, data) in enumerate(c.inputs):
                    f = tmp / f"in{i}.bin"
                    np.ascontiguousarray(data).tofile(f)
                    cmd += ["--arg", f"{off}:{f}"]
                for i, v in enumerate(c.regs):
                    cmd += ["--set-reg", f"{i}:{v}"]
                off, nbytes = c.out
                r = subprocess.run([*cmd, "--dump-u32", f"{off}:{nbytes // 4}"], capture_output=True, text=True)
                if r.returncode != 0:
                    same = f"Rust failed: {r.stderr.strip()[:60]}"
                else:
                    theirs = np.array([int(float(x)) for x in r.stdout.split()], dtype=np.uint64).astype(np.uint32)
                    parts = []
                    elem = np.float16 if c.name.split()[0].endswith("_f16") else np.float32
                    for t, m in results.items():
                        mine = m[off : off + nbytes].view(np.uint32)
                        parts.append(f"{t}: " + agreement(mine, theirs, elem))
                    same = ", ".join(parts)
                    rts = []
                    for _ in range(repeat):
                        t0 = time.perf_counter()
                        subprocess.run(cmd, capture_output=True, check=True)
                        rts.append(time.perf_counter() - t0)
                    rust_t = _median(rts)
            if len(results) > 1:
                a, *others = results.values()
                agree = all(np.array_equal(a, b) for b in others)
                same += f"; {' = '.join(results)}" if agree else f"; {', '.join(results).upper()} DIFFER"
            ms = lambda x: f"{x * 1e3:8.1f}ms"  # noqa: E731
            nm = f"{'-':>8}"
            cols = [f"{c.name:26}", ms(rust_t) if rust_t else f"{'not meas.':>10}"]
            for th in (1, cores):
                for t in trans:
                    x = times.get((t, th))
                    cols.append(f"{ms(x) if x else '-':>10}")
                    cols.append(f"{rust_t / x:7.1f}x" if rust_t and x else nm)
            cols += [f"{firsts[t]:>17}" for t in trans]
            print(" ".join(cols) + f"  {same}{note}")
        if refused:
            print(f"  ({refused} of its .wbin files are in its own format, which our reader refuses: ours ran the same")
            print("  source assembled by our assembler, which reads its dialect; both ran the same kernel and launch)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


_FIRST_8X8 = """
import os, resource, runpy, sys, time
import numpy as np
mod = runpy.run_path({path!r}, run_name="bench")
n = 128
rng = np.random.default_rng(0)
x, y = rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)
out = np.zeros((n, n), np.float32)
cpu = time.process_time(); t = time.perf_counter()
mod["sgemm_8x8"](x.reshape(-1), y.reshape(-1), out.reshape(-1), n, grid=(1, 1))
wall = time.perf_counter() - t
ch = resource.getrusage(resource.RUSAGE_CHILDREN)
assert np.abs(out - x.astype(np.float64) @ y.astype(np.float64)).max() < 1e-3
print(wall, time.process_time() - cpu + ch.ru_utime + ch.ru_stime)
"""


def first_compile_8x8() -> None:
    """examples/sgemm_8x8 at n = 128 (frontend, compiler, translation, one run) in a fresh process
    with an empty cache, under each translation (WAVEGPU_ENGINE=compiled)."""
    print("\nFirst call of examples/sgemm_8x8 (n = 128), fresh process, empty cache: wall / CPU seconds")
    code = _FIRST_8X8.format(path=str(EX / "sgemm_8x8" / "sgemm_8x8.py"))
    os.environ["WAVEGPU_ENGINE"] = "compiled"
    try:
        for t in translations():
            got = cold_first_call(code, t)
            print(f"  {t:6} " + (f"{got[0]:7.2f} s / {got[1]:6.2f} s" if isinstance(got, tuple) else f"failed: {got}"))
    finally:
        del os.environ["WAVEGPU_ENGINE"]


def _peak_rss(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float] | None:
    """(seconds, peak resident MiB) of one whole process under GNU time (`/usr/bin/time -f %M`),
    or None when it failed. Not os.wait4 on our own child: Linux carries the high-water mark of
    the process that forked it across exec, so every child of this (large) process would report
    at least this process's own resident memory."""
    import subprocess

    gnu_time = shutil.which("time", path="/usr/bin:/bin")
    if gnu_time is None:
        print("  (no /usr/bin/time: peak memory not measured)")
        return None
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as out:
        t = time.perf_counter()
        r = subprocess.run([gnu_time, "-f", "%M", "-o", out.name, *cmd], capture_output=True, env=env)
        wall = time.perf_counter() - t
        if r.returncode != 0:
            print(f"  ({Path(cmd[0]).name} failed: {r.stderr.decode(errors='replace').strip()[:100]})")
            return None
        return wall, int(out.read().split()[-1]) / 1024


def _vadd_files(tmp: Path, n: int) -> Path:
    """The whole-process vector add's files in `tmp`: inputs a.bin and b.bin (n floats each, the
    same every run), the kernel's source vadd_n.wave (returned) and our ours.wbin of it."""
    rng = np.random.default_rng(7)
    rng.uniform(-1, 1, n).astype(np.float32).tofile(tmp / "a.bin")
    rng.uniform(-1, 1, n).astype(np.float32).tofile(tmp / "b.bin")
    src = tmp / "vadd_n.wave"
    src.write_text(VADD_N)
    (tmp / "ours.wbin").write_bytes(wg.assemble(VADD_N, src.name).to_bytes())
    return src


def rust_memory(log2n: int = 24) -> None:
    """Peak resident memory and wall time of the Rust `wave-emu` and ours (`wave-emu`, as
    installed beside this Python, on the NumPy engine and on the compiled one) as whole
    processes on vector add 2^log2n (after a warm-up run), against the device memory; and the
    same on 256 elements (3 KiB of device memory), which is the interpreter's share (issue 26 points 3 and 4)."""
    import subprocess
    import sys

    env_root = os.environ.get(RUST_ENV)
    bins = rust_binaries(Path(env_root)) if env_root else None
    ours = Path(sys.executable).parent / "wave-emu"
    n = 1 << log2n
    print(f"\nWhole processes, vector add 2^{log2n} ({12 * n / 2**20:.0f} MiB of device memory): "
          "wall time and peak resident memory (GNU time's %M)")  # fmt: skip
    if not ours.is_file():
        print(f"  not measured: no {ours}")
        return
    tmp = Path(tempfile.mkdtemp(prefix="wave-rss-"))
    try:
        src = _vadd_files(tmp, n)
        rust_wbin = tmp / "rust.wbin"
        if bins is not None:
            r = subprocess.run([str(bins[0]), str(src), "-o", str(rust_wbin)], capture_output=True)
            if r.returncode != 0:
                bins = None

        def flags(m: int, inputs: bool) -> list[str]:
            """A launch over m elements (a, b, c of 4m bytes each)."""
            out = ["--grid", f"{m // 256},1,1", "--workgroup", "256,1,1", "--device-memory", str(12 * m)]
            if inputs:
                out += ["--arg", f"0:{tmp / 'a.bin'}", "--arg", f"{4 * m}:{tmp / 'b.bin'}"]
            return [*out, "--set-reg", "0:0", "--set-reg", f"1:{4 * m}", "--set-reg", f"2:{8 * m}"]

        runs: list[tuple[str, list[str], dict[str, str] | None]] = []
        if bins is not None:
            runs.append(("Rust wave-emu", [str(bins[1]), str(rust_wbin)], None))
        else:
            print(f"  Rust: not measured ({RUST_ENV} does not name a built checkout)")
        for engine in ("numpy", "compiled"):
            runs.append((f"ours, engine={engine}", [str(ours), str(tmp / "ours.wbin")],
                         dict(os.environ, WAVEGPU_ENGINE=engine)))  # fmt: skip
        head = f"{'':24} {'time':>8} {'peak RSS':>9} {'3 KiB run':>9} {'(RSS - 3 KiB run) / device':>27}"
        print(head)
        print("-" * len(head))
        device = 12 * n / 2**20
        for label, cmd, env in runs:
            _peak_rss([*cmd, *flags(n, True)], env)  # warm-up: a first compile is the latency table's
            times = [_peak_rss([*cmd, *flags(n, True)], env) for _ in range(3)]
            small = _peak_rss([*cmd, *flags(256, False)], env)  # after: a first compile would count
            if small is None or any(x is None for x in times):
                print(f"{label:24} not measured")
                continue
            t = _median([x[0] for x in times if x])
            rss = max(x[1] for x in times if x)
            print(f"{label:24} {t * 1e3:6.0f}ms {rss:7.0f}MiB {small[1]:7.0f}MiB {(rss - small[1]) / device:26.2f}x")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def rust_startup(repeat: int = 11, log2n: int = 20, against: str | None = None) -> None:
    """Issue 26 point 4: `wave-emu` as a whole process against the Rust `wave-emu`, vector add
    2^log2n (vadd_n, each assembled by its own toolchain, the same inputs by --arg files and the
    same flags), the two run alternately, median and best wall time and median CPU time (of the
    child, by os.wait4) of `repeat` runs each, after one warm-up run each; and the two outputs
    compared word for word. Ours runs as installed: the console script beside this Python, its
    bytecode cached (a private PYTHONPYCACHEPREFIX, written by the warm-up); and, as a checkout
    runs under PYTHONDONTWRITEBYTECODE=1 (this repository's shells), with wavegpu compiled from
    source at every start (a copy without __pycache__ folders, by PYTHONPATH). `against`: the `src` folder of another tree of wavegpu (an older commit,
    unpacked with `git archive`), timed the same way beside ours (by PYTHONPATH)."""
    import subprocess
    import sys

    env_root = os.environ.get(RUST_ENV)
    bins = rust_binaries(Path(env_root)) if env_root else None
    ours = Path(sys.executable).parent / "wave-emu"
    n = 1 << log2n
    print(f"\nStart-up: wave-emu as a whole process, vector add 2^{log2n}, median of {repeat} (ms)")
    if not ours.is_file():
        print(f"  not measured: no {ours}")
        return
    if bins is None:
        print(f"  Rust: not measured ({RUST_ENV} does not name a built checkout); ours alone below")
    tmp = Path(tempfile.mkdtemp(prefix="wave-startup-"))
    try:
        src = _vadd_files(tmp, n)
        flags = ["--grid", f"{n // 256},1,1", "--workgroup", "256,1,1", "--device-memory", str(12 * n),
                 "--arg", f"0:{tmp / 'a.bin'}", "--arg", f"{4 * n}:{tmp / 'b.bin'}",
                 "--set-reg", "0:0", "--set-reg", f"1:{4 * n}", "--set-reg", f"2:{8 * n}"]  # fmt: skip
        installed = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "WAVEGPU_SERVER")}
        installed["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
        runs: list[tuple[str, list[str], dict[str, str] | None]] = []
        if bins is not None:
            r = subprocess.run([str(bins[0]), str(src), "-o", str(tmp / "rust.wbin")], capture_output=True, text=True)
            if r.returncode == 0:
                runs.append(("Rust wave-emu", [str(bins[1]), str(tmp / "rust.wbin")], None))
            else:
                print(f"  Rust: not measured (its wave-asm failed: {r.stderr.strip()[:80]})")
        runs.append(("ours, bytecode cached", [str(ours), str(tmp / "ours.wbin")], installed))
        if against:
            older = dict(installed, PYTHONPATH=against, PYTHONPYCACHEPREFIX=str(tmp / "pycache-against"))
            runs.append((f"{Path(against).parent.name}, bytecode cached", [str(ours), str(tmp / "ours.wbin")], older))
        # wavegpu without bytecode, as a checkout runs under PYTHONDONTWRITEBYTECODE=1 (NumPy as installed)
        shutil.copytree(Path(wg.__file__).parent, tmp / "src" / "wavegpu", ignore=shutil.ignore_patterns("__pycache__"))
        plain = dict(installed, PYTHONPATH=str(tmp / "src"), PYTHONDONTWRITEBYTECODE="1")
        del plain["PYTHONPYCACHEPREFIX"]
        runs.append(("ours, wavegpu without bytecode", [str(ours), str(tmp / "ours.wbin")], plain))
        # the floors under ours: the interpreter alone, and with NumPy imported (no flags: they take none)
        floors = [("python -c pass", [sys.executable, "-c", "pass"], installed),
                  ("python -c 'import numpy'", [sys.executable, "-c", "import numpy"], installed)]  # fmt: skip
        dump = ["--dump-u32", f"{8 * n}:{n}"]
        for _label, cmd, env in floors:  # warm-up
            subprocess.run(cmd, env=env, check=True)
        outs = {}
        for label, cmd, env in runs:  # warm-up (writes our bytecode), and each one's output
            r = subprocess.run([*cmd, *flags, *dump], capture_output=True, env=env)
            if r.returncode != 0:
                print(f"  {label}: failed: {r.stderr.decode(errors='replace').strip()[:100]}")
                return
            outs[label] = np.array(r.stdout.split(), dtype=np.uint64).astype(np.uint32)
        everything = runs + floors
        walls: dict[str, list[float]] = {label: [] for label, _, _ in everything}
        cpus: dict[str, list[float]] = {label: [] for label, _, _ in everything}
        for _ in range(repeat):
            for label, cmd, env in everything:
                args = cmd if (label, cmd, env) in floors else [*cmd, *flags]
                t = time.perf_counter()
                p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
                _, status, usage = os.wait4(p.pid, 0)
                walls[label].append(time.perf_counter() - t)
                cpus[label].append(usage.ru_utime + usage.ru_stime)
                p.returncode = os.waitstatus_to_exitcode(status)
                if p.returncode != 0:
                    print(
                        f"  {label}: failed: {p.stderr.read().decode(errors='replace').strip()[:100] if p.stderr else ''}"
                    )
                    return
                if p.stderr:
                    p.stderr.close()
        rust = _median(walls["Rust wave-emu"]) if "Rust wave-emu" in walls else None
        ref = outs.get("Rust wave-emu")
        head = f"{'':30} {'median':>8} {'best':>8} {'CPU':>8} {'/ Rust':>7}  output"
        print(head)
        print("-" * len(head))
        for label, _, _ in everything:
            med = _median(walls[label])
            ratio = f"{med / rust:6.2f}x" if rust else f"{'-':>7}"
            same = (
                ""
                if ref is None or label not in outs or label.startswith("Rust")
                else agreement(outs[label], ref, np.float32)
            )
            print(f"{label:30} {med * 1e3:8.1f} {min(walls[label]) * 1e3:8.1f} "
                  f"{_median(cpus[label]) * 1e3:8.1f} {ratio}  {same}")  # fmt: skip
        print(f"  load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} at the end")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


_PHASES = r"""
import resource, sys, time, atexit
def mark(): r = resource.getrusage(resource.RUSAGE_SELF); return r.ru_utime + r.ru_stime, r.ru_minflt
m0 = mark()
from wavegpu.cli import resident
getattr(resident, "one_blas_thread", lambda: None)()  # as the entry does before NumPy (older trees: nothing)
import numpy
m1 = mark()
import wavegpu.cli.emu, wavegpu.emulator, wavegpu.emulator.launch, wavegpu.wbin.format
m2 = mark()
def report():
    m3 = mark()
    pairs = (((0, 0), m0), (m0, m1), (m1, m2), (m2, m3))
    print(*(b[i] - a[i] for a, b in pairs for i in (0, 1)), repr(time.time()), file=sys.stderr)
atexit.register(report)
sys.argv = ["wave-emu", *sys.argv[1:]]
from wavegpu.cli.resident import emu_entry
emu_entry()
"""
"""`wave-emu` run by its console script's entry, each phase's CPU time and minor page faults
printed by its last atexit handler (with the time then, for the exit's share)."""


def startup_phases(repeat: int = 7, log2n: int = 20, against: str | None = None) -> None:
    """Where `wave-emu` spends its start-up (issue 26 point 4): vector add 2^log2n as in
    rust_startup, bytecode cached; per phase the median CPU time and minor page faults inside the
    process (getrusage), and the wall time from its last atexit handler until this process sees
    it exit (interpreter teardown and process exit); `against` as in rust_startup, alternately."""
    import statistics
    import subprocess
    import sys

    n = 1 << log2n
    tmp = Path(tempfile.mkdtemp(prefix="wave-phases-"))
    try:
        rng = np.random.default_rng(7)
        rng.uniform(-1, 1, n).astype(np.float32).tofile(tmp / "a.bin")
        rng.uniform(-1, 1, n).astype(np.float32).tofile(tmp / "b.bin")
        (tmp / "ours.wbin").write_bytes(wg.assemble(VADD_N, "vadd_n.wave").to_bytes())
        flags = ["--grid", f"{n // 256},1,1", "--workgroup", "256,1,1", "--device-memory", str(12 * n),
                 "--arg", f"0:{tmp / 'a.bin'}", "--arg", f"{4 * n}:{tmp / 'b.bin'}",
                 "--set-reg", "0:0", "--set-reg", f"1:{4 * n}", "--set-reg", f"2:{8 * n}"]  # fmt: skip
        trees = {"this tree": str(Path(wg.__file__).parent.parent)}
        if against:
            trees[Path(against).parent.name] = against
        got: dict[str, list[list[float]]] = {k: [] for k in trees}
        for i in range(repeat + 1):  # the first round writes the bytecode
            for label, src in trees.items():
                env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "WAVEGPU_SERVER")}
                env.update(PYTHONPATH=src, PYTHONPYCACHEPREFIX=str(tmp / ("pycache-" + label.replace(" ", "-"))))
                cmd = [sys.executable, "-c", _PHASES, str(tmp / "ours.wbin"), *flags]
                r = subprocess.run(cmd, capture_output=True, text=True, env=env)
                end = time.time()
                if r.returncode != 0:
                    print(f"  {label}: failed: {r.stderr.strip()[:100]}")
                    return
                *vals, stamp = r.stderr.split()
                if i:
                    got[label].append([float(v) for v in vals] + [end - float(stamp)])
        print(f"\nWhere wave-emu's start-up goes: vector add 2^{log2n}, bytecode cached, median of {repeat}")
        names = (
            "interpreter start",
            "import numpy",
            "import wavegpu (wave-emu's modules)",
            "the command (flags, files, run)",
        )
        for label, rows in got.items():
            print(f"  {label}")
            for j, name in enumerate(names):
                cpu = statistics.median(r[2 * j] for r in rows) * 1e3
                faults = statistics.median(r[2 * j + 1] for r in rows)
                print(f"    {name:38} CPU {cpu:6.1f} ms   page faults {faults:6.0f}")
            print(
                f"    {'exit (after the last atexit handler)':38} wall {statistics.median(r[8] for r in rows) * 1e3:5.1f} ms"
            )
        print(f"  load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} at the end")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def dataclasses_replace_none(k: wg.Kernel) -> wg.Kernel:
    """The kernel as `emulate` translates it when the launch gives the workgroup (no hint)."""
    import dataclasses

    return dataclasses.replace(k, workgroup_size=None)


LANE_MODES = ("scalar", "auto", "chunked")
"""WAVEGPU_C_LANES: the C translation's lane loops lane by lane, its heavy ones in chunks (the
default), every one in chunks (docs/emulator.md, "Which lane loops are chunked")."""


def lane_modes(repeat: int) -> None:
    """Our own kernels (the cases of the main table) under the C translation's lane modes, one
    thread, best of `repeat`, the modes run alternately twice (the best kept); the memory of the
    three compared."""
    print(f"\nThe C translation's lane modes on our kernels (WAVEGPU_C_LANES; one thread, best of {repeat}, twice)")
    cases = [vector_add(1 << 20), sgemm_tiled(256), blocked(256), blocked(256, bias_relu=True), gemm_f16(256)]
    cases += [reduction(1 << 20), scan(1 << 20), saxpy(1 << 20), histogram(1 << 22)]
    saved = {v: os.environ.get(v) for v in ("WAVEGPU_COMPILED", "WAVEGPU_C_LANES", "WAVEGPU_THREADS")}
    os.environ.update(WAVEGPU_COMPILED="c", WAVEGPU_THREADS="1")
    head = f"{'kernel':28} " + " ".join(f"{m:>18}" for m in LANE_MODES) + "  memory"
    print(head)
    print("-" * len(head))
    try:
        for c in cases:
            mem, times = {}, {}
            for m in LANE_MODES:
                os.environ["WAVEGPU_C_LANES"] = m
                mem[m] = c.emulate("compiled").memory
            for m in LANE_MODES + LANE_MODES:
                os.environ["WAVEGPU_C_LANES"] = m
                t = best(lambda c=c: c.emulate("compiled"), repeat)
                times[m] = min(times.get(m, t), t)
            base = times["scalar"]
            cols = [f"{times[m] * 1e3:8.2f}ms ({base / times[m]:4.2f}x)" for m in LANE_MODES]
            same = all(np.array_equal(mem["scalar"], mem[m]) for m in LANE_MODES)
            print(f"{c.name:28} " + " ".join(f"{x:>18}" for x in cols) + ("  same" if same else "  DIFFER"))
    finally:
        for v, was in saved.items():
            if was is None:
                os.environ.pop(v, None)
            else:
                os.environ[v] = was
    print(f"  load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} at the end")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes only")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--big", action="store_true", help="add the 1024^3 GEMMs (slow on the NumPy engine)")
    ap.add_argument("--no-latency", action="store_true")
    ap.add_argument("--rust-only", action="store_true", help="only the side-by-side table with the Rust emulator")
    ap.add_argument("--rust-kernels", default="", help="comma-separated kernel names for that table (default: all)")
    ap.add_argument("--memory", action="store_true", help="only the whole-process time and peak memory table")
    ap.add_argument("--startup", action="store_true", help="only the start-up table (wave-emu against Rust's)")
    ap.add_argument("--startup-runs", type=int, default=11, help="runs of each command in the start-up table")
    ap.add_argument("--startup-against", metavar="SRC", help="also time wave-emu with this wavegpu src folder")
    ap.add_argument("--no-memory", action="store_true", help="leave out the peak memory table")
    ap.add_argument("--no-8x8", action="store_true", help="leave out the first call of examples/sgemm_8x8")
    ap.add_argument(
        "--translations", default=",".join(TRANSLATIONS), help=f"comma-separated, of {', '.join(TRANSLATIONS)}"
    )
    ap.add_argument("--lane-modes", action="store_true", help="only our kernels under the C lane modes")
    opts = ap.parse_args(argv)
    picked = [t for t in opts.translations.split(",") if t]
    unknown = [t for t in picked if t not in TRANSLATIONS]
    if unknown:
        ap.error(f"unknown translation {unknown[0]!r} (known: {', '.join(TRANSLATIONS)})")
    _PICKED[:] = picked
    rust_gemm = [256] if opts.quick else [256] + ([1024] if opts.big else [])
    rust_vadd = [1 << 20] if opts.quick else [1 << 20, 1 << 24]
    if opts.lane_modes:
        lane_modes(opts.repeat)
        return
    if opts.memory:
        rust_memory(20 if opts.quick else 24)
        return
    if opts.startup:
        rust_startup(opts.startup_runs, against=opts.startup_against)
        startup_phases(against=opts.startup_against)
        return
    if opts.rust_only:
        rust_side_by_side(rust_gemm, rust_vadd, opts.repeat, opts.rust_kernels)
        if not opts.no_8x8:
            first_compile_8x8()
        if not opts.no_memory:
            rust_memory(20 if opts.quick else 24)
        rust_startup(opts.startup_runs)
        return
    sizes = [16, 20] if opts.quick else [16, 20, 24]
    gemm = [128, 256] if opts.quick else [128, 256, 512] + ([1024] if opts.big else [])
    cases = [vector_add(1 << s) for s in sizes]
    cases += [sgemm_tiled(n) for n in gemm] + [blocked(n) for n in gemm]
    cases += [blocked(256, bias_relu=True), gemm_f16(256), reduction(1 << 20), scan(1 << 20), saxpy(1 << 20)]
    cases.append(histogram(1 << 22))
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores; best of {opts.repeat}")
    head = f"{'kernel':28} {'numpy eng':>10} {'compiled':>10} {'speedup':>8} {'NumPy':>9} {'OpenCL':>9} {'cl/comp':>8}"
    print(head)
    print("-" * len(head))
    rows = []
    for c in cases:
        ref = c.emulate("numpy")
        got = c.emulate("compiled")
        same = np.array_equal(ref.memory, got.memory)
        ok = c.check(got.memory) if c.check else True
        t_np = best(lambda c=c: c.emulate("numpy"), opts.repeat)
        t_c = best(lambda c=c: c.emulate("compiled"), opts.repeat)
        rows.append((c, same, ok, t_np, t_c))
    # NumPy and OpenCL after every emulator figure: a matrix product leaves OpenBLAS's threads
    # spinning for a while, and Intel's runtime its workers, which would take a core from
    # whatever runs next in this process (a compiled GEMM timed after NumPy's took 1.8x as long)
    for c, same, ok, t_np, t_c in rows:
        t_numpy = best(c.numpy, opts.repeat) if c.numpy else None
        t_cl = opencl_time(c, opts.repeat)
        cols = [
            f"{c.name:28}",
            f"{t_np * 1e3:9.1f}ms",
            f"{t_c * 1e3:9.1f}ms",
            f"{t_np / t_c:7.1f}x",
            f"{t_numpy * 1e3:8.2f}ms" if t_numpy is not None else f"{'-':>9}",
            f"{t_cl * 1e3:8.2f}ms" if t_cl is not None else f"{'-':>9}",
            f"{t_c / t_cl:7.1f}x" if t_cl else f"{'-':>8}",
        ]
        flag = "" if same and ok else "  MISMATCH" if not same else "  WRONG"
        print(" ".join(cols) + flag)
    rust_side_by_side(rust_gemm, rust_vadd, opts.repeat, opts.rust_kernels)
    rust_memory(20 if opts.quick else 24)
    rust_startup(opts.startup_runs)
    if not opts.no_latency:
        latency()


if __name__ == "__main__":
    main()
