"""The AMDGCN backend's code against LLVM's: instructions per kernel and registers (VGPR, SGPR)
for the examples on gfx942, ours (`wg.translate(prog, "amdgcn", arch="gfx942")`) against
`llc-19 -mcpu=gfx942 -O2` on the OpenCL C of the same program (our OpenCL backend's output,
compiled to LLVM IR by `clang-15 -x cl -cl-std=CL3.0 -target amdgcn-amd-amdhsa -mcpu=gfx90a -O2`
with Debian's ROCm 5.2 device libraries linked in, whose newest processor is gfx90a; the IR's
`target-cpu`/`target-features` attributes are then dropped so that llc-19 compiles it for gfx942).
A reference, not a golden file: LLVM's numbers move with its release.

Instructions are the real instructions between the kernel's label and its end (no labels,
directives or comments; `s_nop` and `s_waitcnt` count). Registers: our allocator's VGPRs
(arch, plus AGPRs when spilling) and SGPRs; LLVM's `NumVgprs`/`NumSgprs` comments (its SGPR
count includes VCC and the other reserved registers, ours does not: the assembler adds 6).

    python benchmarks/amdgcn.py
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import wavegpu as wg
from wavegpu.backends.amdgcn import AMDGCNRenderer

EX = Path(__file__).resolve().parent.parent / "examples"
ARCH = "gfx942"


def count(asm: str, name: str) -> int:
    body = asm.split(f"\n{name}:", 1)[1].split(".Lfunc_end", 1)[0]
    n = 0
    for line in body.splitlines():
        s = line.strip()
        if not s or s.startswith((".", ";", "//")) or s.endswith(":"):
            continue
        n += 1
    return n


DEVICE_LIBS = Path("/usr/lib/x86_64-linux-gnu/amdgcn/bitcode")  # Debian's rocm-device-libs


def llvm(prog: wg.Program, name: str, tmp: Path) -> tuple[str, int, int] | None:
    clang, llc = shutil.which("clang-15"), shutil.which("llc-19")
    if clang is None or llc is None or not (DEVICE_LIBS / "ockl.bc").exists():
        return None
    (tmp / "k.cl").write_text(wg.translate(prog, "opencl", name))
    cl = [clang, "-x", "cl", "-cl-std=CL3.0", "-target", "amdgcn-amd-amdhsa", "-mcpu=gfx90a"]
    cl += [f"--rocm-device-lib-path={DEVICE_LIBS}", "-Xclang", "-finclude-default-header", "-O2"]
    cl += ["-Dcl_khr_subgroups", "-Dcl_khr_subgroup_non_uniform_arithmetic", "-D__opencl_subgroup_builtins"]
    cl += ["-emit-llvm", "-S", str(tmp / "k.cl"), "-o", str(tmp / "k.ll")]
    r = subprocess.run(cl, capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(f"clang-15 failed on {name}: {r.stderr[-2000:]}")
    ir = (tmp / "k.ll").read_text()
    ir = re.sub(r'"target-(cpu|features)"="[^"]*"', "", ir)
    (tmp / "k.ll").write_text(ir)
    subprocess.run(
        [llc, "-mtriple=amdgcn-amd-amdhsa", f"-mcpu={ARCH}", "-O2", str(tmp / "k.ll"), "-o", str(tmp / "k.s")],
        check=True,
        capture_output=True,
    )
    asm = (tmp / "k.s").read_text()
    vg = re.search(r"; NumVgprs: (\d+)", asm)
    sg = re.search(r"; NumSgprs: (\d+)", asm)
    assert vg and sg
    body = asm.split(f"\n{name}:", 1)[1].split(".Lfunc_end", 1)[0]
    calls = " (+ calls)" if "s_swappc_b64" in body else ""  # library functions the libraries lack
    return f"{count(asm, name)}{calls}", int(vg.group(1)), int(sg.group(1))


def main() -> None:
    r = AMDGCNRenderer(ARCH)
    print(f"# {ARCH}: ours vs llc-19 -O2 on our OpenCL C (clang-15)")
    print("| kernel | instructions (ours / LLVM) | VGPRs (ours / LLVM) | SGPRs (ours + 6 reserved / LLVM) |")
    print("| --- | ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory() as d:
        for p in sorted(EX.glob("*.wave")):
            prog = wg.assemble(p.read_text(), p.name)
            for k in prog.kernels:
                c = r.compile(k)
                text = r.render(k).source
                ours = (count(text, k.name), c.info.next_free_vgpr, c.info.next_free_sgpr + 6)
                ref = llvm(prog, k.name, Path(d))
                refs = ref if ref is not None else ("-", "-", "-")
                print(f"| {k.name} | {ours[0]} / {refs[0]} | {ours[1]} / {refs[1]} | {ours[2]} / {refs[2]} |")


if __name__ == "__main__":
    main()
