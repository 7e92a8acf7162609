"""A ptxas miscompile our PTX must not trigger (issue 22; docs/backends.md, "A ptxas miscompile of
mixed-signedness branches"). ptxas 13.0 threads a branch on a signed integer ordering under an
earlier branch on the unsigned ordering of the same operands (or the reverse) when both are the
same comparison of the same operands, so the second test is skipped for every lane where the
first one failed. The PTX backend writes unsigned orderings non-strict (le/ge) and signed ones
strict (lt/gt), the others as complements (ptx.int_setp), so the two never share a shape, even
after ptxas moves a constant operand to the right and flips the comparison.

Checked without a GPU: the rendered PTX holds no other shape, and the SASS of a user's mixed
i32/u32 flags kernel (in the four languages) performs every comparison on every path: ptxas -O3
for sm_75 and sm_90, nvdisasm, and the fewest signed and unsigned ISETPs on any path from the
entry to the store, which must be all of them. The raw reproducer shows the check sees the bug.
"""

from __future__ import annotations

import collections
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import wavegpu as wg
from wavegpu.backends import ptx, render
from wavegpu.isa import ROWS
from wavegpu.isa.vocabulary import Op

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script too
from test_sass import nvdisasm, parse  # nvdisasm's listing as (address, instruction), branches resolved

import toolchains

ARCHES = ("sm_75", "sm_90")

# A user's flags kernel: a signed and an unsigned test of the same two values (then of a value and
# a constant) in consecutive ifs, for each ordering, the unsigned one first for < and >, second
# for <= and >=.
FLAGS = {
    "python": """
import wavegpu as wg


@wg.kernel
def flags(v: wg.i32[:], out: wg.u32[:]):
    i = wg.global_id(0)
    a = v[8 * i]
    b = v[8 * i + 1]
    c = v[8 * i + 2]
    d = v[8 * i + 3]
    e = v[8 * i + 4]
    g = v[8 * i + 5]
    h = v[8 * i + 6]
    k = v[8 * i + 7]
    f = wg.u32(0)
    if wg.u32(a) < wg.u32(b):
        f |= 1
    if a < b:
        f |= 2
    if c <= d:
        f |= 4
    if wg.u32(c) <= wg.u32(d):
        f |= 8
    if wg.u32(e) > wg.u32(g):
        f |= 16
    if e > g:
        f |= 32
    if h >= k:
        f |= 64
    if wg.u32(h) >= wg.u32(k):
        f |= 128
    if wg.u32(a) < 5:
        f |= 256
    if a < 5:
        f |= 512
    if c <= 7:
        f |= 1024
    if wg.u32(c) <= 7:
        f |= 2048
    if wg.u32(e) > 9:
        f |= 4096
    if e > 9:
        f |= 8192
    if h >= 2:
        f |= 16384
    if wg.u32(h) >= 2:
        f |= 32768
    out[i] = f
""",
    "rust": """
use wave::*;

#[wave::kernel]
pub fn flags(v: &[i32], out: &mut [u32]) {
    let i = global_id(0) as usize;
    let a = v[8 * i];
    let b = v[8 * i + 1];
    let c = v[8 * i + 2];
    let d = v[8 * i + 3];
    let e = v[8 * i + 4];
    let g = v[8 * i + 5];
    let h = v[8 * i + 6];
    let k = v[8 * i + 7];
    let mut f: u32 = 0;
    if (a as u32) < (b as u32) {
        f |= 1;
    }
    if a < b {
        f |= 2;
    }
    if c <= d {
        f |= 4;
    }
    if (c as u32) <= (d as u32) {
        f |= 8;
    }
    if (e as u32) > (g as u32) {
        f |= 16;
    }
    if e > g {
        f |= 32;
    }
    if h >= k {
        f |= 64;
    }
    if (h as u32) >= (k as u32) {
        f |= 128;
    }
    if (a as u32) < 5 {
        f |= 256;
    }
    if a < 5 {
        f |= 512;
    }
    if c <= 7 {
        f |= 1024;
    }
    if (c as u32) <= 7 {
        f |= 2048;
    }
    if (e as u32) > 9 {
        f |= 4096;
    }
    if e > 9 {
        f |= 8192;
    }
    if h >= 2 {
        f |= 16384;
    }
    if (h as u32) >= 2 {
        f |= 32768;
    }
    out[i] = f;
}
""",
    "cpp": """
#include "wave.hpp"

[[wave::kernel]] void flags(const int32_t* v, uint32_t* out) {
    uint32_t i = wave::global_id(0);
    int32_t a = v[8 * i], b = v[8 * i + 1], c = v[8 * i + 2], d = v[8 * i + 3];
    int32_t e = v[8 * i + 4], g = v[8 * i + 5], h = v[8 * i + 6], k = v[8 * i + 7];
    uint32_t f = 0;
    if (static_cast<uint32_t>(a) < static_cast<uint32_t>(b)) { f |= 1u; }
    if (a < b) { f |= 2u; }
    if (c <= d) { f |= 4u; }
    if (static_cast<uint32_t>(c) <= static_cast<uint32_t>(d)) { f |= 8u; }
    if (static_cast<uint32_t>(e) > static_cast<uint32_t>(g)) { f |= 16u; }
    if (e > g) { f |= 32u; }
    if (h >= k) { f |= 64u; }
    if (static_cast<uint32_t>(h) >= static_cast<uint32_t>(k)) { f |= 128u; }
    if (static_cast<uint32_t>(a) < 5u) { f |= 256u; }
    if (a < 5) { f |= 512u; }
    if (c <= 7) { f |= 1024u; }
    if (static_cast<uint32_t>(c) <= 7u) { f |= 2048u; }
    if (static_cast<uint32_t>(e) > 9u) { f |= 4096u; }
    if (e > 9) { f |= 8192u; }
    if (h >= 2) { f |= 16384u; }
    if (static_cast<uint32_t>(h) >= 2u) { f |= 32768u; }
    out[i] = f;
}
""",
    "typescript": """
/** @kernel */
export function flags(v: Int32Array, out: Uint32Array): void {
  const i = wave.global_id(0);
  const a = v[8 * i], b = v[8 * i + 1], c = v[8 * i + 2], d = v[8 * i + 3];
  const e = v[8 * i + 4], g = v[8 * i + 5], h = v[8 * i + 6], k = v[8 * i + 7];
  let f = 0;
  if (a >>> 0 < b >>> 0) { f |= 1; }
  if (a < b) { f |= 2; }
  if (c <= d) { f |= 4; }
  if (c >>> 0 <= d >>> 0) { f |= 8; }
  if (e >>> 0 > g >>> 0) { f |= 16; }
  if (e > g) { f |= 32; }
  if (h >= k) { f |= 64; }
  if (h >>> 0 >= k >>> 0) { f |= 128; }
  if (a >>> 0 < 5) { f |= 256; }
  if (a < 5) { f |= 512; }
  if (c <= 7) { f |= 1024; }
  if (c >>> 0 <= 7) { f |= 2048; }
  if (e >>> 0 > 9) { f |= 4096; }
  if (e > 9) { f |= 8192; }
  if (h >= 2) { f |= 16384; }
  if (h >>> 0 >= 2) { f |= 32768; }
  out[i] = f;
}
""",
}
PAIRS = 8  # signed and unsigned tests in FLAGS, each

# The minimal reproducer of docs/backends.md: flag 1 when a <u b, flag 2 when a <s b.
REPRODUCER = """.version 7.8
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{{
	.reg .b32 %r<5>;
	.reg .pred %p<4>;
	.reg .b64 %rd<6>;
	ld.param.u64 %rd1, [out];
	ld.param.u64 %rd2, [in];
	mov.u32 %r1, %tid.x;
	mul.wide.u32 %rd3, %r1, 8;
	add.s64 %rd4, %rd2, %rd3;
	ld.global.u32 %r2, [%rd4];
	ld.global.u32 %r3, [%rd4+4];
	mov.b32 %r4, 0;
	mov.b32 %r0, 5;
	{first}
	@!%p1 bra L1;
	or.b32 %r4, %r4, 1;
L1:
	{second}
	@!%p2 bra L2;
	or.b32 %r4, %r4, 2;
L2:
	mul.wide.u32 %rd3, %r1, 4;
	add.s64 %rd5, %rd1, %rd3;
	st.global.u32 [%rd5], %r4;
	ret;
}}
"""

# A kernel of loads of %r2 and %r3 for a {body} of tests and stores to [%rd4 + 4i].
COMPARE = """.version 7.8
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{{
	.reg .b32 %r<5>;
	.reg .pred %p<8>;
	.reg .b64 %rd<5>;
	ld.param.u64 %rd1, [out];
	ld.param.u64 %rd2, [in];
	mov.u32 %r1, %tid.x;
	mul.wide.u32 %rd3, %r1, 8;
	add.s64 %rd2, %rd2, %rd3;
	ld.global.u32 %r2, [%rd2];
	ld.global.u32 %r3, [%rd2+4];
	mul.wide.u32 %rd3, %r1, 16;
	add.s64 %rd4, %rd1, %rd3;
{body}	ret;
}}
"""

_OTHER_SHAPE = re.compile(r"^\s*setp\.(?:(?:lt|gt)\.u|(?:le|ge)\.s)(?:32|64)\s")


def _flags_reference(v: np.ndarray) -> np.ndarray:
    a, b, c, d, e, g, h, k = (v[j::8] for j in range(8))
    u = lambda x: x.view(np.uint32)  # noqa: E731
    bits = [u(a) < u(b), a < b, c <= d, u(c) <= u(d), u(e) > u(g), e > g, h >= k, u(h) >= u(k)]
    bits += [u(a) < 5, a < 5, c <= 7, u(c) <= 7, u(e) > 9, e > 9, h >= 2, u(h) >= 2]
    return sum((x.astype(np.uint32) << j for j, x in enumerate(bits)), np.zeros(len(a), np.uint32))


def _ptx(lang: str, arch: str) -> str:
    prog = wg.compile(FLAGS[lang], lang=lang, opt=3)
    return render(prog, "ptx", "flags", arch=arch).source


# ------------------------------------------------------------------ the SASS path count
_ORDERING = re.compile(r"^ISETP\.(?:LT|LE|GT|GE)(\.U32)?\.(?:AND|OR|XOR)(?!\.EX)\b")


def _successors(body: list[tuple[int, str]]) -> list[list[int]]:
    """Each instruction's successors in the listing's control flow (BRA, EXIT, fall-through)."""
    index = {a: i for i, (a, _) in enumerate(body)}
    out = []
    for i, (_, text) in enumerate(body):
        guarded = text.startswith("@")
        op = text.split(None, 1)[1] if guarded else text
        after = [i + 1] if i + 1 < len(body) else []
        if op.startswith("EXIT"):
            out.append(after if guarded else [])
        elif re.match(r"BRA\b", op):
            m = re.search(r"@(-?\d+)", op)
            assert m and int(m.group(1)) in index, text
            out.append([index[int(m.group(1))], *(after if guarded else [])])
        else:
            assert not op.startswith(("BRX", "JMX", "RET", "CALL")), f"no control flow model for {text}"
            out.append(after)
    return out


def fewest_tests(body: list[tuple[int, str]]) -> dict[str, int]:
    """The fewest unguarded signed ("s") and unsigned ("u") 32-bit integer ordering ISETPs on any
    path from the entry to the last global store of the listing (a 0-1 breadth-first search)."""
    succ = _successors(body)
    stores = [i for i, (_, t) in enumerate(body) if re.match(r"(@!?U?P\w+\s+)?STG\b", t)][-1:]
    assert stores, "no global store in the listing"
    out = {}
    for kind in ("s", "u"):
        w = []
        for _, t in body:
            m = _ORDERING.match(t)
            w.append(int(m is not None and ("u" if m.group(1) else "s") == kind))
        far = len(body) + 1
        dist = [far] * len(body)
        dist[0] = w[0]
        todo = collections.deque([0])
        while todo:
            i = todo.popleft()
            for j in succ[i]:
                if dist[i] + w[j] < dist[j]:
                    dist[j] = dist[i] + w[j]
                    (todo.append if w[j] else todo.appendleft)(j)
        out[kind] = min(dist[i] for i in stores)
    return out


def _sass(text: str, arch: str, kernel: str, tmp: Path) -> list[tuple[int, str]]:
    tool, nvd = toolchains.ptxas(), nvdisasm()
    if tool.path is None:
        pytest.skip(tool.reason)
    if nvd is None:
        pytest.skip("nvdisasm is not installed (pip install nvidia-cuda-nvdisasm, or the CUDA toolkit)")
    src, cubin = tmp / f"{kernel}.{arch}.ptx", tmp / f"{kernel}.{arch}.cubin"
    src.write_text(text)
    subprocess.run([tool.path, f"-arch={arch}", "-O3", str(src), "-o", str(cubin)], check=True)
    listing = subprocess.run([nvd, "-c", str(cubin)], check=True, capture_output=True, text=True).stdout
    return parse(listing, kernel)


# ------------------------------------------------------------------ tests
def test_int_setp_shapes() -> None:
    c = ptx.int_setp
    assert c("lt", "u32", "%q0", "%r1", "%r2", "%q1") == "setp.ge.u32 %q1|%q0, %r1, %r2;"
    assert c("gt", "u32", "%q0", "%r1", "32", "%q1") == "setp.le.u32 %q1|%q0, %r1, 32;"
    assert c("le", "s32", "%q0", "%r1", "%r2", "%q1") == "setp.gt.s32 %q1|%q0, %r1, %r2;"
    assert c("ge", "s64", "%q0", "%rd1", "%rd2", "%q1") == "setp.lt.s64 %q1|%q0, %rd1, %rd2;"
    for cmp, ty in (("le", "u32"), ("ge", "u32"), ("lt", "s32"), ("gt", "s32"), ("eq", "s32"), ("ne", "u32")):
        assert c(cmp, ty, "%q0", "%r1", "%r2", "") == f"setp.{cmp}.{ty} %q0, %r1, %r2;"


def test_no_integer_ordering_in_a_shared_shape() -> None:
    """Every integer ordering row and the flags kernels in the four languages render unsigned
    orderings only as le/ge and signed ones only as lt/gt (the backend's own tests of its lane
    loops' counters and shuffle bounds keep their shapes: see ptx.int_setp's comment)."""
    rows = [r for r in ROWS if r.op is Op.SETP and r.dtype is not None and r.dtype.name in ("S32", "U32")]
    assert len(rows) == 12
    complements = 0
    for r in rows:
        text = ptx.NATIVE[r.key][2]
        assert not _OTHER_SHAPE.match(text), text
        if not text.startswith(r.name + " "):
            cmp, ty = r.name.split(".")[1:3]
            assert text == f"setp.{ptx._COMPLEMENT[cmp]}.{ty} {{q}}|{{d}}, {{a}}, {{b}};", text
            complements += 1
    assert complements == 4  # unsigned lt/gt, signed le/ge
    texts = {f"{lang} {arch}": _ptx(lang, arch) for lang in FLAGS for arch in ARCHES}
    for name, text in texts.items():
        entries = text[text.index(".entry") :]  # the helpers are nvcc's: see the next test
        assert not [line for line in entries.splitlines() if _OTHER_SHAPE.match(line)], name
        assert len(re.findall(r"setp\.(?:le|ge)\.u32", entries)) >= PAIRS, name
        assert len(re.findall(r"setp\.(?:lt|gt)\.s32", entries)) >= PAIRS, name


def test_no_helper_tests_the_same_operands_with_both_signednesses() -> None:
    """The `.func` helpers (nvcc's PTX, called, never inlined by ptxas) are left as nvcc wrote
    them: none of them has the same ordering of the same operands in both signednesses."""
    items, _ = ptx._library()
    setp = re.compile(r"setp\.(lt|le|gt|ge)\.([su])(32|64)\s+[^,]+,\s*([^,]+),\s*([^;]+);")
    orderings = 0
    for item in items.values():
        seen: dict[tuple[str, ...], set[str]] = {}
        for m in setp.finditer(item.text):
            cmp, sign, width, a, b = m.groups()
            seen.setdefault((cmp, width, a.strip(), b.strip()), set()).add(sign)
            orderings += 1
        assert all(len(signs) == 1 for signs in seen.values()), item.name
    assert orderings > 100  # the check read them


def _renumbered(listing: str) -> str:
    """A SASS listing with its predicate registers renamed in the order of their first use."""
    names: dict[str, str] = {}
    return re.sub(r"\bP\d\b", lambda m: names.setdefault(m.group(), f"P{len(names)}"), listing)


@pytest.mark.toolchain
def test_a_complement_compiles_to_the_comparison(tmp_path: Path) -> None:
    """`setp.ge.u32 t|d, a, b` is `setp.lt.u32 d, a, b` to ptxas: the four complemented rows give
    the SASS the plain forms give (up to the numbering of the predicate registers)."""
    rows = ("lt.u32", "gt.u32", "le.s32", "ge.s32")
    plain = [f"setp.{r} %p{i}, %r2, %r3;" for i, r in enumerate(rows)]
    ours = [ptx.int_setp(*r.split("."), f"%p{i}", "%r2", "%r3", f"%p{i + 4}") for i, r in enumerate(rows)]
    assert all("|" in line for line in ours)
    listings = []
    for n, lines in enumerate((plain, ours)):
        body = "".join(
            f"\t{s}\n\tselp.b32 %r4, 1, 0, %p{i};\n\tst.global.u32 [%rd4+{4 * i}], %r4;\n" for i, s in enumerate(lines)
        )
        text = COMPARE.format(arch="sm_90", body=body)
        (tmp_path / str(n)).mkdir()
        listings.append(_renumbered("\n".join(t for _, t in _sass(text, "sm_90", "k", tmp_path / str(n)))))
    assert listings[0] == listings[1]
    assert listings[0].count("ISETP") == 4


@pytest.mark.parametrize("lang", FLAGS)
def test_the_flags_kernel_is_right_on_the_emulator(lang: str) -> None:
    """The kernel the SASS test reads computes NumPy's flags (-7 < 5 signed, not unsigned)."""
    rng = np.random.default_rng(22)
    v = rng.integers(-10, 10, 8 * 64).astype(np.int32)
    v[:8] = [-7, 5, -7, 5, 5, -7, 5, -7]
    out = np.zeros(64, np.uint32)
    wg.load_kernels(FLAGS[lang], lang=lang, opt=3)["flags"](v, out, grid=(1,), workgroup=(64,))
    np.testing.assert_array_equal(out, _flags_reference(v))
    assert out[0] & 0xFF == 2 | 4 | 32 | 64  # the signed flags only: the ones the miscompile loses


@pytest.mark.toolchain
@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("lang", FLAGS)
def test_every_comparison_runs_on_every_path_in_sass(lang: str, arch: str, tmp_path: Path) -> None:
    """ptxas -O3's SASS of the flags kernel tests each of the 4 signed and 4 unsigned orderings on
    every path to the store: no test is threaded under the other signedness's branch."""
    body = _sass(_ptx(lang, arch), arch, "flags", tmp_path)
    got = fewest_tests(body)
    assert got == {"s": PAIRS, "u": PAIRS}, f"fewest tests on a path to the store: {got}\n" + "\n".join(
        t for _, t in body
    )


@pytest.mark.toolchain
@pytest.mark.parametrize("arch", ARCHES)
def test_the_reproducer_still_miscompiles(arch: str, tmp_path: Path) -> None:
    """The check sees the bug: ptxas 13.0 skips the signed test of the raw reproducer on the
    paths where the unsigned one failed, also when the signed test's operands are swapped and one
    is a constant (%r0 = 5); int_setp's shapes keep both tests. When the first assertion fails,
    ptxas is fixed: see docs/backends.md for when the workaround can go."""

    def fewest(first: str, second: str) -> dict[str, int]:
        text = REPRODUCER.format(arch=arch, first=first, second=second)
        return fewest_tests(_sass(text, arch, "k", tmp_path))

    assert fewest("setp.lt.u32 %p1, %r2, %r3;", "setp.lt.s32 %p2, %r2, %r3;") == {"s": 0, "u": 1}
    assert fewest("setp.lt.u32 %p1, %r2, %r3;", "setp.gt.s32 %p2, %r3, %r2;") == {"s": 1, "u": 1}
    assert fewest("setp.lt.u32 %p1, %r2, %r0;", "setp.gt.s32 %p2, %r0, %r2;") == {"s": 0, "u": 1}
    for b in ("%r3", "%r0"):
        first = ptx.int_setp("lt", "u32", "%p1", "%r2", b, "%p3")
        assert fewest(first, ptx.int_setp("lt", "s32", "%p2", "%r2", b, "")) == {"s": 1, "u": 1}


def test_the_path_count_on_a_known_listing() -> None:
    sass = """
.text.k:
        /*0000*/                   LDG.E R0, desc[UR4][R2.64] ;
        /*0010*/                   ISETP.GE.U32.AND P0, PT, R0, R7, PT ;
        /*0020*/               @P0 BRA `(.L_x_1) ;
        /*0030*/                   ISETP.GE.AND P0, PT, R0, R7, PT ;
        /*0040*/              @!P0 LOP3.LUT R9, R9, 0x2, RZ, 0xfc, !PT ;
.L_x_1:
        /*0050*/                   ISETP.GT.AND.EX P1, PT, R0, R7, PT, P0 ;
        /*0060*/               @P1 ISETP.LT.AND P2, PT, R0, R7, PT ;
        /*0070*/                   STG.E desc[UR4][R4.64], R9 ;
        /*0080*/                   EXIT ;
.L_x_2:
        /*0090*/                   BRA `(.L_x_2);
"""
    body = parse(sass, "k")
    # the signed test at 0x30 is skipped by the branch; .EX (a 64-bit high half) and a guarded
    # ISETP are not counted
    assert fewest_tests(body) == {"s": 0, "u": 1}
    assert _successors(body)[2] == [5, 3]
    loop = [(0, "ISETP.LT.AND P0, PT, R0, R1, PT"), (16, "@P0 BRA @0"), (32, "STG.E [R2], R0"), (48, "EXIT")]
    assert fewest_tests(loop) == {"s": 1, "u": 0}


# ------------------------------------------------------------------ the characterisation
# Run as a script to test every pair of a signed and an unsigned ordering through ptxas, as
# written (`raw`) or in int_setp's shapes (`ours`), of two registers or of a register and a
# constant, in straight code, apart (other code between), in a loop, or with the branches taken on
# true (docs/backends.md lists what it printed):
#     .venv/bin/python tests/backends/test_ptxas_signedness.py sm_90 raw const loop -O3
PROBE = """.version 7.8
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{{
	.reg .b32 %r<16>;
	.reg .pred %p<8>;
	.reg .b64 %rd<6>;
	ld.param.u64 %rd1, [out];
	ld.param.u64 %rd2, [in];
	mov.u32 %r1, %tid.x;
	mul.wide.u32 %rd3, %r1, 8;
	add.s64 %rd4, %rd2, %rd3;
	ld.global.u32 %r2, [%rd4];
	ld.global.u32 %r3, [%rd4+4];
	mul.wide.u32 %rd3, %r1, 4;
	add.s64 %rd5, %rd1, %rd3;
	mov.b32 %r4, 0;
	mov.b32 %r5, 0;
	mov.b32 %r6, 5;
{body}	st.global.u32 [%rd5], %r4;
	ret;
}}
"""
_SWAP = {"lt": "gt", "gt": "lt", "le": "ge", "ge": "le"}


def _probe_body(pair: tuple[tuple[str, str, bool], ...], shapes: str, operand: str, context: str) -> str:
    out = ""
    for n, (sign, cmp, swapped) in enumerate(pair, 1):
        a, b = "%r2", "%r3" if operand == "reg" else "%r6"
        x, y = (b, a) if swapped else (a, b)
        ty = f"{sign}32"
        line = (
            f"setp.{cmp}.{ty} %p{n}, {x}, {y};"
            if shapes == "raw"
            else ptx.int_setp(cmp, ty, f"%p{n}", x, y, f"%p{n + 4}")
        )
        branch = f"@%p{n} bra L{n};\n\tbra S{n};\nL{n}:\n" if context == "taken" else f"@!%p{n} bra S{n};\n"
        out += f"\t{line}\n\t{branch}\tor.b32 %r4, %r4, {n};\nS{n}:\n"
        if context == "apart" and n == 1:
            out += "\tmul.lo.u32 %r7, %r2, %r3;\n\tadd.u32 %r7, %r7, 0x1234;\n\txor.b32 %r4, %r4, %r7;\n"
    if context == "loop":  # ten rounds, the values stepped: both tests in every round
        out = f"LOOP:\n{out}\tadd.u32 %r2, %r2, 3;\n\tadd.u32 %r5, %r5, 1;\n\tsetp.ne.u32 %p3, %r5, 10;\n\t@%p3 bra LOOP;\n"
    return out


def characterise(arch: str, shapes: str, operand: str, context: str, opt: str) -> tuple[int, list[str]]:
    """(pairs tried, the pairs whose SASS skips a test on some path to the store)."""
    import itertools
    import tempfile

    seen: dict[str, dict[str, int]] = {}
    bad = []
    cmps = ("lt", "le", "gt", "ge")
    pairs = [
        ((s1, c1, w1), (s2, c2, w2))
        for s1, s2 in (("u", "s"), ("s", "u"))
        for c1, c2, w1, w2 in itertools.product(cmps, cmps, (False, True), (False, True))
    ]
    with tempfile.TemporaryDirectory() as d:
        for pair in pairs:
            text = PROBE.format(arch=arch, body=_probe_body(pair, shapes, operand, context))
            if text not in seen:
                tool = toolchains.ptxas().path
                assert tool
                (Path(d) / "k.ptx").write_text(text)
                subprocess.run([tool, f"-arch={arch}", opt, f"{d}/k.ptx", "-o", f"{d}/k.cubin"], check=True)
                listing = subprocess.run(
                    [nvdisasm() or "nvdisasm", "-c", f"{d}/k.cubin"], capture_output=True, text=True
                )
                seen[text] = fewest_tests(parse(listing.stdout, "k"))
            if min(seen[text].values()) < 1:
                bad.append(" ; ".join(f"{s}.{c}({'b,a' if w else 'a,b'})" for s, c, w in pair) + f"  {seen[text]}")
    return len(pairs), bad


if __name__ == "__main__":
    if toolchains.ptxas().path is None or nvdisasm() is None:
        sys.exit("needs ptxas (CUDA 13.0) and nvdisasm")
    arch, shapes, operand, context, opt = (sys.argv[1:] + ["sm_90", "raw", "reg", "plain", "-O3"][len(sys.argv) - 1 :])[
        :5
    ]
    n, bad = characterise(arch, shapes, operand, context, opt)
    print(f"{arch} {shapes} {operand} {context} {opt}: {len(bad)} of {n} pairs skip a test")
    print("\n".join("  " + b for b in bad))
