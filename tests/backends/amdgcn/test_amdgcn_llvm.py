"""The AMDGCN backend validated by LLVM: every program of the corpus (the examples, the assembler
corpus, the compiler corpus at -O0 and -O3, one kernel per selected value row) and random
structured programs assemble with llvm-mc for gfx90a, gfx942 and gfx950 (no warning: "not a
recognized processor" would mean a generic target), link with ld.lld, and disassemble with
llvm-objdump back to the instructions we emitted; the kernel descriptors and the metadata notes
say what the backend computed (register counts, LDS size, kernarg size, enabled ids).

The corpus goes through llvm-mc as one module per target and LLVM release (a few seconds).
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toolchains
import wavegpu as wg
from corpus import corpus_files
from wavegpu.backends.amdgcn import ARCHES, AMDGCNRenderer, abi, compile_kernel, emit, rows
from wavegpu.backends.amdgcn.isa import EMITTED
from wavegpu.backends.amdgcn.target import target
from wavegpu.isa import ROWS
from wavegpu.isa.semantics import SEMANTICS
from wavegpu.wbin import Kernel

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "emulator"))
sys.path.insert(0, str(ROOT / "tests" / "compiler"))
import test_differential as D  # noqa: E402

PAIRS = [(a, v) for a in ARCHES for v in toolchains.AMDGCN_LLVM[a]]


@cache
def corpus() -> tuple[Kernel, ...]:
    import kernels as K

    ks = [k for p in corpus_files() for k in wg.assemble(p.read_text(), p.name).kernels]
    for opt in (0, 3):
        for kf in (K.loops, K.floor_ops, K.scan, K.matmul, K.histogram):
            k = wg.compile(kf.python, opt=opt).kernels[0]
            ks.append(dataclasses.replace(k, name=f"{k.name}_O{opt}"))
    ks += [
        dataclasses.replace(D.row_kernel(r), name=f"row_{i}")
        for i, r in enumerate(ROWS)
        if r.key in SEMANTICS and r.key not in rows.UNSUPPORTED
    ]
    names = [k.name for k in ks]
    ks = [dataclasses.replace(k, name=f"{k.name}_{i}") if names.count(k.name) > 1 else k for i, k in enumerate(ks)]
    # kernels with a refused row (the mma of the W = 32 fragment layout) or reading %clock are
    # refused with a message (test_refusals_name_the_kernel_and_the_reason)
    return tuple(k for k in ks if not any(_refused(i) for i in k.instructions))


def _refused(inst: object) -> bool:
    from wavegpu.isa.instruction import SReg
    from wavegpu.isa.registers import SRegId as SR

    return inst.spec.key in rows.UNSUPPORTED or any(  # type: ignore[attr-defined]
        isinstance(o, SReg) and o.id == SR.CLOCK
        for o in inst.operands  # type: ignore[attr-defined]
    )


def _need(version: int, link: bool = True) -> dict[str, str]:
    """The versioned tool names of one LLVM release; skip when they are missing (without `link`,
    a missing ld.lld alone does not skip: the caller assembles and then skips the link)."""
    tool = toolchains.llvm(version)
    names = {n: f"{n}-{version}" for n in ("llvm-mc", "ld.lld", "llvm-objdump", "llvm-readelf")}
    if tool.path is None and (link or any(shutil.which(v) is None for n, v in names.items() if n != "ld.lld")):
        pytest.skip(tool.reason)
    return names


def _run(cmd: list[str]) -> str:
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"{' '.join(cmd[:3])}: {r.stderr[-4000:]}"
    assert "warning" not in r.stderr and "not a recognized processor" not in r.stderr, r.stderr[-4000:]
    return r.stdout


def build(text: str, arch: str, version: int, tmp: Path) -> tuple[Path, Path | None]:
    """Assemble and link; returns (object, code object), the code object None when this
    release's ld.lld is missing (the caller checks what it can and then skips, naming it)."""
    t = _need(version, link=False)
    src, obj, out = tmp / f"{arch}-{version}.s", tmp / f"{arch}-{version}.o", tmp / f"{arch}-{version}.hsaco"
    src.write_text(text)
    cmd = [t["llvm-mc"], "-triple=amdgcn-amd-amdhsa", f"-mcpu={arch}", "-filetype=obj", str(src), "-o", str(obj)]
    if version < 19:
        cmd.append("--amdhsa-code-object-version=4")
    _run(cmd)
    if shutil.which(t["ld.lld"]) is None:
        return obj, None
    _run([t["ld.lld"], "-shared", str(obj), "-o", str(out)])
    return obj, out


def module(kernels: tuple[Kernel, ...] | list[Kernel], arch: str, version: int) -> tuple[str, list]:
    r = AMDGCNRenderer(arch, cov=4 if version < 19 else 5)
    compiled = [r.compile(k) for k in kernels]
    return emit.module(r.t, [(c.info, c.mis) for c in compiled], r.cov), compiled


_NUM = re.compile(r"^-?(0x[0-9a-fA-F]+|\d+)$")


def _norm_tok(tok: str) -> str:
    tok = tok.strip()
    if _NUM.match(tok):
        return str(int(tok, 0) & 0xFFFFFFFF)
    m = re.match(r"^(offset):(.*)$", tok)
    if m and _NUM.match(m.group(2)):
        return f"offset:{int(m.group(2), 0)}"
    return tok


def normalise(line: str) -> tuple[str, ...]:
    """An instruction as (mnemonic without _e32/_e64, operands...) with numbers in one base and
    branch targets dropped (the disassembler prints offsets, we print labels)."""
    line = line.split("//")[0].split(";")[0].strip()
    mn, _, rest = line.partition(" ")
    mn = re.sub(r"_e(32|64)$", "", mn)
    if mn.startswith(("s_branch", "s_cbranch")):
        return (mn,)
    toks = [t for t in re.split(r",\s*|\s+(?=[a-z_]+:|glc|sc0|clamp)", rest) if t.strip()]
    return (mn, *(_norm_tok(t) for t in toks))


def emitted_instructions(text: str) -> dict[str, list[tuple[str, ...]]]:
    """Kernel -> its instructions as written (labels, directives and comments left out)."""
    out: dict[str, list[tuple[str, ...]]] = {}
    cur: list[tuple[str, ...]] | None = None
    for line in text.splitlines():
        m = re.match(r"^([A-Za-z_]\w*):$", line)
        if m:
            cur = out.setdefault(m.group(1), [])
            continue
        s = line.strip()
        if cur is None or not s or s.startswith((".", ";")) or s.endswith(":"):
            continue
        if line.startswith("  ") and not line.startswith("    ") and re.match(r"^[sv]_|^ds_|^global_|^buffer_", s):
            cur.append(normalise(s))
    return out


def disassembled(objdump: str, hsaco: Path, arch: str) -> dict[str, list[tuple[str, ...]]]:
    text = _run([objdump, "-d", f"--mcpu={arch}", str(hsaco)])
    out: dict[str, list[tuple[str, ...]]] = {}
    cur: list[tuple[str, ...]] = []
    for line in text.splitlines():
        m = re.match(r"^[0-9a-f]+ <(\w+)>:$", line)
        if m:
            cur = out.setdefault(m.group(1), [])
        elif line.startswith("\t") and line.strip():
            cur.append(normalise(line))
    return out


def descriptors(objdump: str, obj: Path) -> bytes:
    text = _run([objdump, "-s", "-j", ".rodata", str(obj)])
    data = bytearray()
    for line in text.splitlines()[2:]:
        parts = line.split()
        if parts and re.fullmatch(r"[0-9a-f]{4,}", parts[0]):
            for w in parts[1:5]:
                if re.fullmatch(r"[0-9a-f]{2,8}", w):
                    data += bytes.fromhex(w)
    return bytes(data)


def check_descriptor(d: bytes, info: emit.KernelInfo) -> None:
    u32 = [int.from_bytes(d[i : i + 4], "little") for i in range(0, 64, 4)]
    assert u32[0] == info.lds  # group_segment_fixed_size
    assert u32[2] == abi.kernarg_size(info.nargs)  # presets + grid arguments, 8-aligned
    rsrc3, rsrc1, rsrc2 = u32[11], u32[12], u32[13]
    assert rsrc1 & 0x3F == (info.next_free_vgpr + 7) // 8 - 1
    assert (rsrc1 >> 6) & 0xF == (info.next_free_sgpr + 6 + 7) // 8 - 1
    assert (rsrc2 >> 1) & 0x1F == 2  # user SGPRs: the kernarg pointer
    assert [(rsrc2 >> (7 + i)) & 1 for i in range(3)] == [int(i in info.workgroup_ids) for i in range(3)]
    assert (rsrc2 >> 11) & 3 == info.workitem_dims
    assert rsrc3 & 0x3F == info.accum_offset // 4 - 1


@pytest.mark.parametrize(("arch", "version"), PAIRS)
def test_the_whole_corpus_assembles_links_and_disassembles_back(arch: str, version: int, tmp_path: Path) -> None:
    ks = corpus()
    assert len(ks) > 150
    text, compiled = module(ks, arch, version)
    obj, hsaco = build(text, arch, version, tmp_path)
    tools = {n: f"{n}-{version}" for n in ("llvm-objdump", "llvm-readelf")}
    # kernel descriptors: one 64-byte block per kernel, in order
    rod = descriptors(tools["llvm-objdump"], obj)
    assert len(rod) >= 64 * len(compiled)
    for i, c in enumerate(compiled):
        check_descriptor(rod[64 * i : 64 * i + 64], c.info)
    if hsaco is None:
        pytest.skip(f"assembled and descriptors checked; not linked: {toolchains.llvm(version).reason}")
    # the disassembly is the instruction stream we wrote (no silent re-encoding)
    ours = emitted_instructions(text)
    theirs = disassembled(tools["llvm-objdump"], hsaco, arch)
    assert set(ours) == set(theirs) == {c.info.name for c in compiled}
    for name, mine in ours.items():
        got = theirs[name]
        assert mine and len(got) >= len(mine), name
        bad = [(a, b) for a, b in zip(mine, got, strict=False) if a != b]
        assert not bad, (name, bad[:10])
        assert all(x[0] in ("s_nop", "s_code_end") for x in got[len(mine) :]), (name, got[len(mine) :][:5])
    # the metadata note: counts and sizes per kernel
    notes = _run([tools["llvm-readelf"], "--notes", str(hsaco)])
    for c in compiled:
        i = c.info
        m = re.search(rf"\.name:\s+{re.escape(i.name)}\n(.*?)\.wavefront_size:\s+64", notes, re.S)
        assert m, i.name
        block = notes[notes.rfind("- .agpr_count", 0, m.start()) : m.end()]
        assert f".group_segment_fixed_size: {i.lds}" in re.sub(r"\s+", " ", block)
        assert f".kernarg_segment_size: {abi.kernarg_size(i.nargs)}" in re.sub(r"\s+", " ", block)
        assert f".sgpr_count: {i.next_free_sgpr}" in re.sub(r"\s+", " ", block)
        assert f".vgpr_count: {i.next_free_vgpr}" in re.sub(r"\s+", " ", block)


def test_every_emitted_mnemonic_is_in_the_documented_subset() -> None:
    from test_amdgcn_passes import _many_sgprs, _many_vgprs

    text, _ = module(corpus(), "gfx942", 22)
    texts = [text]
    shuffles = ".kernel s\n    mov.u32 r0, %tid.x\n" + "".join(
        f"    wave.shuffle{m}.b32 r1, r0, {b}\n" for m in ("", ".up", ".down", ".xor") for b in ("r0", "3", "40")
    )
    shuffles += "    st.global.b32 [r0], r1\n    ret\n.end\n"
    for src, kw in ((_many_vgprs(), {"max_vgprs": 8}), (_many_sgprs(), {"max_sgprs": 16}), (shuffles, {})):
        texts.append(AMDGCNRenderer("gfx942", **kw).render(wg.assemble(src, "m.wave").kernels[0]).source)
    seen = {ins[0] for t in texts for k in emitted_instructions(t).values() for ins in k}
    undocumented = {m for m in seen if m not in EMITTED}
    assert not undocumented, undocumented
    assert {"v_accvgpr_write_b32", "v_writelane_b32", "v_add_u32_dpp", "ds_bpermute_b32", "ds_swizzle_b32"} <= seen


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_structured_programs_assemble(tmp_path: Path, data: st.DataObject) -> None:
    seed_vals = data.draw(st.lists(st.integers(0, 2**32 - 1), min_size=24, max_size=24))
    body = list(data.draw(D.block()))
    if any(i.spec.cls == "control" for i in body):
        from wavegpu.isa.structure import check_structure

        if check_structure(body):
            return
    if any(i.spec.key in rows.UNSUPPORTED for i in body):
        return
    k = Kernel("rnd", tuple(D.prologue(seed_vals) + body + D.epilogue()), 19, 8)
    arch = data.draw(st.sampled_from(ARCHES))
    version = toolchains.AMDGCN_LLVM[arch][-1]
    text, _ = module([k], arch, version)
    build(text, arch, version, tmp_path)


def test_make_test_installs_every_llvm_release_the_tests_use() -> None:
    """tools/system-tools.sh (run by `make test` and CI) installs llvm-N and lld-N for every release
    in toolchains.AMDGCN_LLVM, so "assembled, linked and disassembled by LLVM 14/19/22" is what a
    fresh machine checks (lld-14 was missing: LLVM 14 assembled but never linked)."""
    script = (ROOT / "tools" / "system-tools.sh").read_text()
    m = re.search(r"^for v in ([\d ]+); do\n(.*?)^done", script, re.M | re.S)
    assert m, "system-tools.sh: no `for v in ...; do` loop over LLVM releases"
    versions = {int(v) for v in m.group(1).split()}
    assert versions == {v for vs in toolchains.AMDGCN_LLVM.values() for v in vs}
    assert "want+=(llvm-$v)" in m.group(2) and "want+=(lld-$v)" in m.group(2)
    assert "command -v ld.lld-$v" in m.group(2) and "command -v llvm-mc-$v" in m.group(2)


def test_wave32_gets_a_clear_diagnostic() -> None:
    prog = wg.assemble((ROOT / "examples" / "vector_add.wave").read_text(), "vector_add.wave")
    with pytest.raises(wg.WaveError, match="wave64"):
        wg.translate(prog, "amdgcn", wave_width=32)
    assert ".amdhsa_kernel vector_add" in wg.translate(prog, "amdgcn", arch="gfx950")
    with pytest.raises(wg.WaveError, match="unknown AMDGCN architecture"):
        wg.translate(prog, "amdgcn", arch="gfx1100")


def test_refusals_name_the_kernel_and_the_reason() -> None:
    k = wg.assemble(
        ".kernel s\n    mov.u32 r0, %tid.x\n    sin.f32 r1, r0\n    st.global.b32 [r0], r1\n    ret\n.end\n", "s.wave"
    ).kernels[0]
    with pytest.raises(wg.WaveError, match=r"kernel s, pc 1: sin\.f32: .*range reduction"):
        compile_kernel(k, target("gfx942"))
    k = wg.assemble(".kernel c\n    mov.u32 r0, %clock\n    st.global.b32 [r0], r0\n    ret\n.end\n", "c.wave").kernels[
        0
    ]
    with pytest.raises(wg.WaveError, match=r"kernel c: %clock"):
        compile_kernel(k, target("gfx90a"))
