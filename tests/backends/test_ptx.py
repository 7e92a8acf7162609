"""The PTX backend: every row is rendered (inline, through a generated helper, or as a statement),
and every program of the test corpus (value rows, examples, the assembler corpus, the compiler
corpus at -O0 and -O3, random structured programs) is accepted by ptxas for sm_75 and sm_90
without a warning. Running the PTX needs an NVIDIA GPU (runtime/cuda.py, device="cuda")."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import wavegpu as wg
from cli_helpers import run_wave
from wavegpu.backends import ptx, render
from wavegpu.isa import ROWS
from wavegpu.isa.semantics import SEMANTICS
from wavegpu.wbin import Kernel

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "emulator"))
import test_differential as D

import toolchains

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_toolchains import MULADD  # a mul and a dependent add

ROOT = Path(__file__).resolve().parents[2]
EX = ROOT / "examples"
PTXAS = toolchains.ptxas().path  # CUDA 13.0 by its --version
NVCC = toolchains.nvcc().path
ARCHES = ("sm_75", "sm_90")


def _ptxas(text: str, tmp_path: Path, name: str = "m") -> None:
    if PTXAS is None:
        pytest.skip(toolchains.ptxas().reason)
    src = tmp_path / f"{name}.ptx"
    for arch in ARCHES:
        src.write_text(text.replace(".target sm_75", f".target {arch}", 1))
        r = subprocess.run([PTXAS, f"-arch={arch}", str(src), "-o", str(tmp_path / f"{name}.{arch}.cubin")],
                           capture_output=True, text=True, timeout=600)  # fmt: skip
        assert r.returncode == 0 and not r.stderr.strip(), f"{arch}: {r.stderr[-4000:]}"


def _corpus() -> list[Kernel]:
    sys.path.insert(0, str(ROOT / "tests" / "compiler"))
    import kernels as K

    ks = [k for p in sorted(EX.glob("*.wave")) for k in wg.assemble(p.read_text(), p.name).kernels]
    for p in sorted((ROOT / "tests" / "data" / "asm").glob("*.wave")):
        ks += list(wg.assemble(p.read_text(), p.name).kernels)
    for opt in (0, 3):
        for kf in (K.loops, K.floor_ops, K.scan, K.matmul, K.histogram):
            k = wg.compile(kf.python, opt=opt).kernels[0]
            ks.append(dataclasses.replace(k, name=f"{k.name}_O{opt}"))
    return ks


def test_every_value_row_assembles(tmp_path: Path) -> None:
    kernels = [dataclasses.replace(D.row_kernel(r), name=f"row_{i}") for i, r in enumerate(ROWS) if r.key in SEMANTICS]
    text = ptx.render_module(kernels)
    assert text.count(".visible .entry row_") == len(kernels) > 150
    _ptxas(text, tmp_path)


def test_the_whole_corpus_assembles(tmp_path: Path) -> None:
    ks = _corpus()
    names = [k.name for k in ks]
    ks = [dataclasses.replace(k, name=f"{k.name}_{i}") if names.count(k.name) > 1 else k for i, k in enumerate(ks)]
    text = ptx.render_module(ks)  # mma by the exact path (the default)
    assert "cvt.f64.f16" in text and "mma.sync" not in text
    _ptxas(text, tmp_path)
    with ptx.mma_path("tensor"):
        text = ptx.render_module(ks)
    assert "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32" in text
    _ptxas(text, tmp_path)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_structured_programs_assemble(tmp_path: Path, data: st.DataObject) -> None:
    seed_vals = data.draw(st.lists(st.integers(0, 2**32 - 1), min_size=24, max_size=24))
    body = list(data.draw(D.block()))
    if any(i.spec.cls == "control" for i in body):
        from wavegpu.isa.structure import check_structure

        if check_structure(body):
            return
    _ptxas(render(Kernel("rnd", tuple(D.prologue(seed_vals) + body + D.epilogue()), 19, 8), "ptx").source, tmp_path)


def test_abi_is_one_memory_base_plus_the_registers() -> None:
    prog = wg.assemble((EX / "vector_add.wave").read_text(), "vector_add.wave")
    text = wg.translate(prog, "ptx")
    params = re.search(r"\.entry vector_add\(([^)]*)\)", text)
    assert params is not None
    assert [p.split()[1:] for p in params.group(1).split(",")] == [
        [".u64", "wv_mem_param"],
        [".u64", "wv_cmem_param"],
        *([".u32", f"a{i}"] for i in range(4)),
    ]
    assert ".maxntid 256, 1, 1" in text and ".target sm_75" in text


WAVE_OPS = """
.kernel w
    mov.u32 r0, %lid
    setp.lt.u32 p0, r0, 5
    @p0 ret
    atom.global.sub.u32 r1, [r0], 3
    setp.lt.u32 p1, r0, 20
    if p1
        wave.reduce.add.u32 r2, r0
        wave.shuffle.down.b32 r3, r0, r2
    else
        wave.prefix.add.u32 r2, r0
    endif
    loop
        add.u32 r0, r0, 1
        setp.gt.u32 p2, r0, 40
        break p2
        wave.ballot.b32 r4, p2
    endloop
    barrier
    ret
.end
"""


def test_control_flow_and_wave_ops_use_explicit_masks(tmp_path: Path) -> None:
    text = render(wg.assemble(WAVE_OPS, "w.wave"), "ptx").source
    assert "@%p0 exit;" in text  # ret ends the threads; .sync instructions ignore exited ones
    assert "atom.relaxed.gpu.global.add.u32" in text and ".sub." not in text  # atom.sub emulated
    assert re.search(r"neg\.s32 (%t\d+), %t\d+;\n\tatom\.relaxed\.gpu\.global\.add\.u32 %t\d+, \[%rd\d+\], \1;", text)
    assert "vote.sync.ballot.b32" in text and "shfl.sync.idx.b32" in text and "barrier.sync 0;" in text
    # the mask of each region comes from the one around it; a break updates the loop's mask
    assert re.search(r"vote\.sync\.ballot\.b32 %m\d+, %p1, %wv_m0;", text)
    assert re.search(r"vote\.sync\.ballot\.b32 (%m\d+), !%p2, \1;", text)
    _ptxas(text, tmp_path)


PLAIN = """
.kernel plain
    mov.u32 r0, %tid.x
    mov.u32 r1, 0
    setp.lt.u32 p0, r0, 7
    loop
        setp.ge.u32 p1, r1, 10
        break p1
        add.u32 r1, r1, 1
        if p0
            add.u32 r2, r2, r1
            continue p0
        endif
        add.u32 r2, r2, 3
    endloop
    {tail}
    st.global.u32 [r0], r2
    ret
.end
"""


def test_regions_no_wave_operation_reads_keep_no_mask(tmp_path: Path) -> None:
    """lift.mask_plan: without a wave operation no region keeps a mask (no vote.sync at all);
    with one after the loop, only the top region does: the loop and its if stay plain branches."""
    for tail, votes in (("", 0), ("wave.reduce.add.u32 r2, r2", 1)):
        text = render(wg.assemble(PLAIN.format(tail=tail), "p.wave"), "ptx").source
        assert text.count("vote.sync") == votes, tail
        assert "%wv_brk, %wv_brk" not in text and "or.pred %wv_cnt" not in text
        _ptxas(text, tmp_path)
    # the wave operation inside the loop: the loop, and the if a lane continues from, keep masks
    inside = PLAIN.format(tail="").replace("add.u32 r2, r2, 3", "wave.reduce.add.u32 r2, r2")
    text = render(wg.assemble(inside, "p.wave"), "ptx").source
    assert re.search(r"vote\.sync\.ballot\.b32 %m\d+, %p0, %m\d+;", text) and "or.pred %wv_cnt" in text
    _ptxas(text, tmp_path)


def test_kernels_without_params_take_the_registers_they_read_first() -> None:
    """lift.preset_registers: reads before any sure write are inputs. A write in only one branch
    of an if, in a loop body, under a guard or of a sub-register does not count as sure."""
    from wavegpu.backends.lift import lift, preset_registers

    text = """
.kernel k
    mov.u32 r1, %tid.x
    add.u32 r2, r1, r0
    setp.lt.u32 p0, r1, 3
    if p0
        mov.u32 r3, 1
        mov.u32 r4, 1
    else
        mov.u32 r4, 2
    endif
    add.u32 r5, r3, r4
    loop
        mov.u32 r6, 1
        break p0
    endloop
    add.u32 r5, r5, r6
    @p0 mov.u32 r7, 1
    add.u32 r5, r5, r7
    mov.b32 r8.lo, 1
    add.u32 r5, r5, r8
    ld.global.v2.b32 {r10, r11}, [r9]
    st.global.u32 [r10+4], r11
    ret
.end
"""
    k = wg.assemble(text, "k.wave").kernels[0]
    assert sorted(preset_registers(lift(k))) == [0, 3, 6, 7, 8, 9]
    head = render(k, "ptx").source.split(")")[0]
    assert head.count(".param .u32") == 10  # one past the highest: r0..r9
    flat = wg.assemble((EX / "flat_saxpy.wave").read_text(), "f.wave")
    assert render(flat, "ptx").source.split(")")[0].count(".param .u32") == 4


def test_mma_has_an_exact_path_and_a_tensor_core_path(tmp_path: Path) -> None:
    """ptx.mma_path: "exact" (the default) shuffles the fragments among the active lanes and sums
    in double as the emulator does; "tensor" is mma.sync. Both assemble; an unknown path is refused."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from test_opencl import MMA

    prog = wg.assemble(MMA, "mma.wave")
    exact = render(prog, "ptx").source
    assert "mma.sync" not in exact and exact.count("shfl.sync.idx.b32") == 16 and exact.count("fma.rn.f64") == 32
    assert exact.count("cvt.rn.f32.f64") == 4
    with ptx.mma_path("tensor"):
        tensor = render(prog, "ptx").source
    assert "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32" in tensor and "shfl.sync" not in tensor
    assert render(prog, "ptx").source == exact  # the block ended: back to the default
    with pytest.raises(wg.WaveError, match="unknown mma path 'fast'"), ptx.mma_path("fast"):
        pass
    _ptxas(exact, tmp_path)
    _ptxas(tensor, tmp_path)


def test_mma_path_as_a_keyword_of_translate_and_launch(tmp_path: Path) -> None:
    """wg.translate(..., mma=) picks the path for one call (one kernel or the whole module) and
    wins over an enclosing ptx.mma_path block; both texts pass ptxas; a bad value names the
    choices; "tensor" is refused where there are no tensor cores to use (other targets, and
    devices other than "cuda"), "exact" accepted everywhere (every target computes mma exactly)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from test_opencl import MMA

    prog = wg.assemble(MMA, "mma.wave")
    exact = wg.translate(prog, "ptx", kernel=0, mma="exact")
    tensor = wg.translate(prog, "ptx", kernel=0, mma="tensor")
    assert exact == render(prog, "ptx").source  # the default path is the exact one
    assert "mma.sync" not in exact and exact.count("shfl.sync.idx.b32") == 16 and exact.count("fma.rn.f64") == 32
    assert "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32" in tensor and "shfl.sync" not in tensor
    assert "fma.rn.f64" not in tensor
    module = wg.translate(prog, "ptx", mma="tensor")  # every kernel: the module renderer too
    assert "mma.sync.aligned" in module and "shfl.sync" not in module
    with ptx.mma_path("tensor"):
        assert wg.translate(prog, "ptx", kernel=0, mma="exact") == exact  # the keyword wins
        assert wg.translate(prog, "ptx", kernel=0) == tensor  # no keyword: the block's path
        assert wg.translate(prog, "ptx") == module
    _ptxas(exact, tmp_path, "exact")
    _ptxas(tensor, tmp_path, "tensor")
    for bad in ("fast", "", "Tensor", 1):
        with pytest.raises(wg.WaveError, match=r"unknown mma path .* \(one of exact, tensor\)"):
            wg.translate(prog, "ptx", mma=bad)  # type: ignore[arg-type]
    assert wg.translate(prog, "cuda", mma="exact") == wg.translate(prog, "cuda")
    with pytest.raises(wg.WaveError, match="mma='tensor' applies to the ptx target only"):
        wg.translate(prog, "cuda", mma="tensor")
    with pytest.raises(wg.WaveError, match="unknown mma path 'fast'"):
        wg.launch(prog, memory=2048, mma="fast")
    with pytest.raises(wg.WaveError, match="mma='tensor' runs on device='cuda' only"):
        wg.launch(prog, memory=2048, mma="tensor")
    img = np.random.default_rng(2).normal(0, 2, 1024).astype(np.float16).view(np.uint8)  # 2048 bytes: A, B, C, D
    want = wg.launch(prog, memory=img).memory
    assert (wg.launch(prog, memory=img, mma="exact").memory == want).all() and (want != img).any()


def test_float_results_are_canonical_and_never_contracted() -> None:
    text = render(wg.assemble(MULADD, "m.wave"), "ptx").source
    assert "mul.rn.f32" in text and "add.rn.f32" in text and "fma" not in text
    # the mul's result is read by the add only: no check; the add's is stored: canonicalised in
    # place just before the store (codegen/canonical), an unordered self-compare and a select
    assert "selp.f32" not in text
    at_use = re.findall(
        r"mov\.b32 (%f\d+), %r2;\n\tsetp\.nan\.f32 (%q\d+), \1, \1;\n\tselp\.b32 %r2, 0x7FFFFFFF, %r2, \2;", text
    )
    assert len(at_use) == 1 and text.index("selp.b32 %r2") < text.index("st.global.u32")


_AT_DEF = r"setp\.nan\.{ty} (%q\d+), (%fd?\d+), \2;\n\tselp\.{ty} %fd?\d+, {nan}, \2, \1;"
_AT_USE = r"setp\.nan\.f32 (%q\d+), (%f\d+), \2;\n\tselp\.b32 %r\d+, 0x7FFFFFFF, %r\d+, \1;"


def test_every_float_row_that_can_give_a_nan_canonicalises_it() -> None:
    """The PTX ISA leaves the NaN of every f32 and f16 instruction unspecified and propagates
    f64 payloads (section 9.7.3; docs/backends.md, "NaN results"), so each inline row with a
    float result is canonicalised where its bits are observed (here: the store of the row's
    result): f32 results by an in-place setp.nan + selp before the store, f64 results where they
    are made; only conversions from integers, which cannot give a NaN, are exempt. Dropping a
    row's check needs the ISA to promise its NaN first, and this test, the docs and
    tests/backends/test_cuda.py to change."""
    assert {"cvt.f32.s32", "cvt.f32.u32", "cvt.f64.s32", "cvt.f64.u32"} == ptx.NEVER_NAN
    rows = [r for r in ROWS if r.key in ptx.NATIVE and ptx.NATIVE[r.key][0] in ("f32", "f64")]
    assert len(rows) >= 20
    for r in rows:
        text = render(D.row_kernel(r), "ptx").source
        ty = ptx.NATIVE[r.key][0]
        nan = "0f7FFFFFFF" if ty == "f32" else "0d7FFFFFFFFFFFFFFF"
        at_def = re.findall(_AT_DEF.format(ty=ty, nan=nan), text)
        at_use = re.findall(_AT_USE, text)
        want = 0 if r.key in ptx.NEVER_NAN else 1
        assert (len(at_def), len(at_use)) == ((0, want) if ty == "f32" else (want, 0)), r.key


def test_refusals_name_the_reason() -> None:
    k = wg.assemble((EX / "vector_add.wave").read_text(), "vector_add.wave").kernels[0]
    with pytest.raises(wg.WaveError, match="32 lanes; cannot render for a wave width of 64"):
        render(k, "ptx", wave_width=64)
    clock = wg.assemble(".kernel c\n    mov.u32 r0, %clock\n    ret\n.end\n", "c.wave")
    with pytest.raises(wg.WaveError, match="reads %clock"):
        render(clock, "ptx")


def test_helpers_are_only_those_a_kernel_calls() -> None:
    k = wg.assemble(
        ".kernel s\n    sin.f32 r0, r0\n    bfe.u32 r1, r1, r0, r0\n    div.s32 r2, r1, r0\n    ret\n.end\n", "s.wave"
    )
    text = render(k, "ptx").source
    called = set(re.findall(r"call \(wv_ret\), (\w+),", text))
    assert called == {"wvp_sin_f32", "wvp_bfe_u32"}  # division is inline (ptx.NATIVE)
    defined = set(re.findall(r"^\.func\s+\([^)]*\)\s*(\w+)\($", text, re.M))
    assert {"wvp_sin_f32", "wvp_bfe_u32"} <= defined and not any(d.startswith("wvp_") for d in defined - called)
    assert "wvp_cos_f32" not in text


def test_translate_cli_writes_ptx(tmp_path: Path) -> None:
    out = tmp_path / "f.ptx"
    r = run_wave("translate", str(ROOT / "tests/data/asm/features.wave"), "-t", "ptx", "-o", str(out))
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    assert text.count(".version") == 1 and ".entry features(" in text and ".entry second(" in text
    _ptxas(text, tmp_path)


def test_translate_cli_picks_the_architecture(tmp_path: Path) -> None:
    src = str(ROOT / "tests/data/asm/features.wave")
    out = tmp_path / "f90.ptx"
    r = run_wave("translate", src, "-t", "ptx", "--arch", "sm_90", "-o", str(out))
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    assert ".target sm_90\n" in text and wg.translate(wg.assemble(Path(src).read_text(), src), "ptx") == text.replace(
        ".target sm_90", ".target sm_75", 1
    )
    r = run_wave("translate", src, "-t", "ptx", "--arch", "sm_70")
    assert (
        r.returncode != 0 and "unknown architecture 'sm_70' (sm_75 or newer" in r.stderr and "Traceback" not in r.stderr
    )
    r = run_wave("translate", src, "-t", "opencl", "--arch", "sm_90")
    assert r.returncode != 0 and re.search(r"applies to the ptx( and \w+)* targets? only, not opencl", r.stderr)
    if PTXAS is not None:
        r = subprocess.run([PTXAS, "-arch=sm_90", str(out), "-o", str(tmp_path / "f90.cubin")],
                           capture_output=True, text=True, timeout=600)  # fmt: skip
        assert r.returncode == 0 and not r.stderr.strip(), r.stderr


@pytest.mark.skipif(NVCC is None, reason=toolchains.nvcc().reason or "nvcc")
def test_generated_helpers_are_up_to_date() -> None:
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_ptx_helpers.py"), "--check"],
                       capture_output=True, text=True, timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
