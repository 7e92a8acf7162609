"""The compiled engine's lane loops under masks, pinned to the NumPy engine bit for bit: every
value row on its special values inside a divergent `if` (mask patterns per chunk of 16 lanes),
`if`/`else` arms writing the same registers, loops run lane by lane with per-lane trip counts,
`break` and `continue`, loads out of bounds only in inactive lanes (no trap) or in one active
lane (the reference's trap), stores under partial masks (lanes colliding on one word), and
workgroups whose lane count is a multiple of 16, of 8 only, of neither, or under a chunk.

The lane loops (`for l in range(L): if act[l]: ...` in codegen's output) may run in chunks of
8 or 16 lanes with masks, blends and OR-reduced bounds checks, and a workgroup whose lane count
is no multiple of the chunk in a remainder: each test compares the whole device memory after a
run on both engines, and that the compiled run finished (`engine == "compiled"`: a trap or a
budget stop would hand the launch to the NumPy engine and hide a wrong stop).
"""

from __future__ import annotations

import numpy as np
import pytest

import wavegpu as wg
from test_compiled_programs import both
from test_compiled_rows import N, chunks, slots, specials
from wavegpu.emulator.compiled import available
from wavegpu.emulator.compiled.codegen import unsupported_reason
from wavegpu.isa.table import InstrSpec
from wavegpu.isa.types import Kind, Role

if not available():
    pytest.skip("neither a C compiler nor numba: the compiled engine cannot run here", allow_module_level=True)

CHUNK = 16  # the widest lane chunk the translation may use; patterns repeat every 6 chunks


def mask_bits(rng: np.random.Generator, n: int, group: int) -> np.ndarray:
    """n lanes' mask bits, one pattern per chunk of 16 lanes of each workgroup of `group`:
    all on, all off, one lane, alternating, the first half, random (shifted per workgroup)."""
    out = np.zeros(n, dtype=bool)
    for lane in range(n):
        wg_id, i = divmod(lane, group)
        c, j = divmod(i, CHUNK)
        pattern = (c + wg_id) % 6
        out[lane] = (
            True if pattern == 0 else
            False if pattern == 1 else
            j == (5 * c + 3) % CHUNK if pattern == 2 else
            j % 2 == 1 if pattern == 3 else
            j < CHUNK // 2 if pattern == 4 else
            bool(rng.integers(0, 2))
        )  # fmt: skip
    return out


def compare(prog: wg.Program, where: str = "", **kw: object) -> wg.EmulationResult:
    """Both engines, the compiled one to the end; the same bytes everywhere."""
    assert unsupported_reason(prog.kernels[0]) is None
    ref, got = both(prog, **kw)
    bad = np.flatnonzero(ref.memory != got.memory)
    assert not bad.size, (
        f"{where}{bad.size} bytes differ, the first at {bad[0]}: numpy {ref.memory[bad[0]]:#04x}, "
        f"compiled {got.memory[bad[0]]:#04x}"
    )
    return got


# --------------------------------------------------------------- every value row under a mask
GROUP = 6  # rows per `if`: their destinations are distinct registers, live across the `endif`
SRC0, DST0 = 40, 140  # each row of a group: sources from r40 + 8k, destination r140 + 2k
PRED_DST = (0, 4, 5)  # predicate destinations of a group's rows; p1..p3 its (single) predicate-source row


def _groups(rows: list[InstrSpec]) -> list[list[int]]:
    """Row indices cut into groups of at most GROUP rows, one of them with predicate sources and
    at most three with a predicate destination."""
    out: list[list[int]] = [[]]
    for i, spec in enumerate(rows):
        g = [rows[j] for j in out[-1]]
        psrc = any(o.kind is Kind.PRED and o.role is Role.SRC for o in spec.operands)
        pdst = spec.operands[spec.dests[0]].kind is Kind.PRED
        full = len(g) == GROUP
        full |= psrc and any(any(o.kind is Kind.PRED and o.role is Role.SRC for o in r.operands) for r in g)
        full |= pdst and sum(r.operands[r.dests[0]].kind is Kind.PRED for r in g) == len(PRED_DST)
        if full:
            out.append([])
        out[-1].append(i)
    return out


SUBREG = ("", ".hi", "", ".b1", "", ".lo")  # a plain register's destination, by its place in the kernel


def masked_row_kernel(rows: list[InstrSpec]) -> str:
    """Each row once per lane, inside `if p7` (p7: bit 0 of the lane's mask word); every other
    row guarded by p6 (bit 1) or its negation; the destination loaded beforehand with the
    lane's old value from its output slot and stored back after the `endif`, for all lanes."""
    layout = slots(rows)
    mask_slot = layout[-1][2] + 1
    lines = [
        ".kernel masked_rows",
        ".registers 256",
        ".predicates 8",
        "mov.u32 r1, %tid.x",
        "mov.u32 r2, %ctaid.x",
        "mov.u32 r3, %ntid.x",
        "mad.lo.s32 r1, r2, r3, r1",
        "shl.b32 r1, r1, 3",
        "add.u32 r4, r0, r1",  # this lane's 8 bytes of slot 0
        "mov.b32 r38, 1",
        "mov.b32 r39, 0",
        f"ld.global.b32 r5, [r4+{mask_slot * N * 8}]",
        "and.b32 r6, r5, 1",
        "setp.ne.u32 p7, r6, 0",
        "and.b32 r6, r5, 2",
        "setp.ne.u32 p6, r6, 0",
    ]
    for group in _groups(rows):
        body, after = [], []
        npd = 0
        for k, i in enumerate(group):
            spec, ins, out = layout[i]
            srcs = [o for o in spec.operands if o.role is Role.SRC]
            names, np_ = [], 0
            for j, (o, s) in enumerate(zip(srcs, ins)):
                r = SRC0 + 8 * k + 2 * j
                if o.kind is Kind.PAIR:
                    lines.append(f"ld.global.b64 r{r}:r{r + 1}, [r4+{s * N * 8}]")
                    names.append(f"r{r}:r{r + 1}")
                else:
                    lines.append(f"ld.global.b32 r{r}, [r4+{s * N * 8}]")
                    names.append(f"r{r}")
                    if o.kind is Kind.PRED:
                        np_ += 1
                        lines.append(f"setp.ne.u32 p{np_}, r{r}, 0")
                        names[-1] = f"p{np_}"
            d = spec.operands[spec.dests[0]]
            r = DST0 + 2 * k
            addr = f"[r4+{out * N * 8}]"
            if d.kind is Kind.PAIR:
                lines.append(f"ld.global.b64 r{r}:r{r + 1}, {addr}")
                dst = f"r{r}:r{r + 1}"
                after.append(f"st.global.b64 {addr}, r{r}:r{r + 1}")
            elif d.kind is Kind.PRED:
                p = PRED_DST[npd]
                npd += 1
                lines += [f"ld.global.b32 r{r}, {addr}", f"and.b32 r{r}, r{r}, 1", f"setp.ne.u32 p{p}, r{r}, 0"]
                dst = f"p{p}"
                after += [f"selp.b32 r{r}, r38, r39, p{p}", f"st.global.b32 {addr}, r{r}"]
            else:
                lines.append(f"ld.global.b32 r{r}, {addr}")
                dst = f"r{r}{SUBREG[i % len(SUBREG)]}"
                after.append(f"st.global.b32 {addr}, r{r}")
            guard = ("", "@p6 ", "", "@!p6 ")[i % 4]
            body.append(f"{guard}{spec.name} {', '.join([dst, *names])}")
        lines += ["if p7", *body, "endif", *after]
    lines += ["ret", ".end"]
    return "\n".join(lines)


@pytest.mark.parametrize(
    ("part", "translation"), [(0, "c"), (1, "c"), (2, "c"), (3, "c"), (1, "numba")], indirect=["translation"]
)
def test_value_rows_under_a_mask(part: int, translation: str) -> None:
    """Every value row (test_compiled_rows' chunks) on special values, under the mask patterns
    of `mask_bits` and a random guard: inactive lanes keep their destinations' old bits (numba:
    one chunk, its compile being the slower)."""
    rows = chunks()[part]
    rng = np.random.default_rng(100 + part)
    layout = slots(rows)
    mask_slot = layout[-1][2] + 1
    mem = np.zeros((mask_slot + 1) * N, dtype=np.uint64)
    for spec, ins, out in layout:
        kinds = [o.kind for o in spec.operands if o.role is Role.SRC]
        for s, kind in zip(ins, kinds):
            mem[s * N : (s + 1) * N] = specials(rng, kind is Kind.PAIR)
        mem[out * N : (out + 1) * N] = specials(rng, spec.operands[spec.dests[0]].kind is Kind.PAIR)
    bits = mask_bits(rng, N, 256).astype(np.uint64) | (rng.integers(0, 2, N).astype(np.uint64) << np.uint64(1))
    mem[mask_slot * N :] = bits
    prog = wg.assemble(masked_row_kernel(rows))
    kw = dict(grid=N // 256, workgroup=256, memory=mem.view(np.uint8), args=[0])
    ref, got = both(prog, **kw)
    r64, g64 = ref.memory.view(np.uint64), got.memory.view(np.uint64)
    bad = []
    for spec, ins, out in layout:
        diff = np.flatnonzero(r64[out * N : (out + 1) * N] != g64[out * N : (out + 1) * N])
        if diff.size:
            i = int(diff[0])
            args = ", ".join(hex(int(mem[s * N + i])) for s in ins)
            bad.append(
                f"{spec.key}({args}) lane {i} mask {int(bits[i]):#x}: old {int(mem[out * N + i]):#x}, "
                f"numpy {int(r64[out * N + i]):#x}, compiled {int(g64[out * N + i]):#x} ({diff.size} lanes)"
            )
    assert not bad, "\n".join(bad)
    assert np.array_equal(ref.memory, got.memory)
    # the kernel is what it claims: lanes outside the mask keep the old bits, others do not
    out = next(
        o for i, (s, _, o) in enumerate(layout) if s.operands[s.dests[0]].kind is not Kind.PRED and i % 2 == 0  # unguarded, whole
    )
    off = (bits & np.uint64(1)) == 0
    old, new = mem[out * N : (out + 1) * N], g64[out * N : (out + 1) * N]
    assert np.array_equal(new[off], old[off]) and np.any(new[~off] != old[~off])
