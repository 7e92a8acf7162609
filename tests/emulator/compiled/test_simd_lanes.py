"""The compiled engine's lane loops under masks, pinned to the NumPy engine bit for bit: every
value row on its special values inside a divergent `if` (mask patterns per chunk of 16 lanes),
`if`/`else` arms writing the same registers, loops run lane by lane with per-lane trip counts,
`break` and `continue`, loads out of bounds only in inactive lanes (no trap) or in one active
lane (the reference's trap), stores under partial masks (lanes colliding on one word), the
instruction budget at the reference's exact count, workgroups whose lane count is a multiple of
16, of 8 only, of neither, or under a chunk, and the kernels of benchmarks/kernels.

The lane loops (`for l in range(L): if act[l]: ...` in codegen's output) may run in chunks of
8 or 16 lanes with masks, blends and OR-reduced bounds checks, and a workgroup whose lane count
is no multiple of the chunk in a remainder: each test compares the whole device memory after a
run on both engines, and that the compiled run finished (`engine == "compiled"`: a trap or a
budget stop would hand the launch to the NumPy engine and hide a wrong stop); where the
reference traps, the same error with the same message.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_compiled_programs import both
from test_compiled_rows import LANE_SLOT, N, chunks, slots, specials

import wavegpu as wg
from wavegpu.emulator.compiled import available
from wavegpu.emulator.compiled.codegen import Shape, generate, unsupported_reason
from wavegpu.isa.table import InstrSpec
from wavegpu.isa.types import Kind, Role

if not available():
    pytest.skip("neither a C compiler nor numba: the compiled engine cannot run here", allow_module_level=True)

CHUNK = 16  # the widest lane chunk the translation may use; patterns repeat every 6 chunks


@pytest.fixture(autouse=True)
def every_lane_loop_chunked(monkeypatch: pytest.MonkeyPatch) -> None:
    """The C translation chunks every lane loop it can (WAVEGPU_C_LANES=chunked), not only the
    heavy ones of its default (`auto`, clanes.HEAVY): so these tests reach every chunked form."""
    monkeypatch.setenv("WAVEGPU_C_LANES", "chunked")


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
        *LANE_SLOT,
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
        o
        for i, (s, _, o) in enumerate(layout)
        if s.operands[s.dests[0]].kind is not Kind.PRED and i % 2 == 0  # unguarded, whole
    )
    off = (bits & np.uint64(1)) == 0
    old, new = mem[out * N : (out + 1) * N], g64[out * N : (out + 1) * N]
    assert np.array_equal(new[off], old[off]) and np.any(new[~off] != old[~off])


# ------------------------------------------- divergence, lane-by-lane loops, stores, lane counts
# One kernel for any workgroup shape. Arguments: r0 = the bytes of a slot (4 per lane of the
# launch), r1 = the start of the collision area (512 bytes per workgroup), r2 = the memory's
# size. Slot 0: a value A per lane (special values), slot 1: a control word C, slots 2 and 3:
# floats F and G; results go to slot 4 onwards (r9), one word per lane each. C's bits: 0 = p1
# (the `if` of most sections), 1 = p2 (guards, `else` arms), 2 = p3 (enters the loop run lane
# by lane), 7 = the lane returns at once, 8..11 = its trip count (0..15), 16..17 = the rounds of
# the loop run in lockstep; 12, 13, 14 put one active lane's load out of bounds (the trap tests).
def _slots(text: str) -> str:
    """A kernel's text with each `SLOTS rA, rB, ...` line written out: rA, rB, ... stored in turn
    to the result slots that r9 walks (r0 apart)."""

    def stores(m: re.Match[str]) -> str:
        return "".join(f"{m[1]}st.global.b32 [r9], {r}\n{m[1]}add.u32 r9, r9, r0\n" for r in m[2].split(", "))

    return re.sub(r"^( +)SLOTS (.*)\n", stores, text, flags=re.M)


LANES = _slots("""
.kernel lanes
.registers 64
.predicates 8
.local_memory 256
    mov.u32 r10, %tid.x
    mov.u32 r11, %tid.y
    mov.u32 r12, %ntid.x
    mov.u32 r13, %ntid.y
    mov.u32 r14, %ctaid.x
    mad.lo.u32 r15, r11, r12, r10       // the lane's linear id in its workgroup
    mul.lo.u32 r16, r12, r13
    mad.lo.u32 r17, r14, r16, r15       // its id in the launch
    shl.b32 r18, r17, 2                 // its word of slot 0
    mov.u32 r19, %lid
    mov.u32 r20, %wid
    ld.global.b32 r21, [r18]            // A
    add.u32 r9, r18, r0
    ld.global.b32 r22, [r9]             // C
    add.u32 r9, r9, r0
    ld.global.b32 r23, [r9]             // F
    add.u32 r9, r9, r0
    ld.global.b32 r24, [r9]             // G
    add.u32 r9, r9, r0                  // slot 4: the first result
    and.b32 r8, r22, 1
    setp.ne.u32 p1, r8, 0
    and.b32 r8, r22, 2
    setp.ne.u32 p2, r8, 0
    and.b32 r8, r22, 4
    setp.ne.u32 p3, r8, 0
    and.b32 r8, r22, 128
    setp.ne.u32 p7, r8, 0
    @p7 ret                             // exited: inactive in everything below
    // the lane's coordinates in computations
    mad.lo.u32 r25, r11, 1000, r10
    shl.b32 r26, r19, 8
    xor.b32 r25, r25, r26
    shl.b32 r26, r20, 16
    add.u32 r25, r25, r26
    mov.u32 r26, %nwaves
    mad.lo.u32 r25, r26, 0x1000000, r25
    SLOTS r25
    // if/else: both arms write the same registers (whole, sub-registers, a pair, a float)
    mov.b32 r26, r21
    mov.b32 r27, r17
    mov.b32 r28, r23
    mov.b32 r29, r24
    mov.b32 r30, r22
    mov.b32 r31, r21
    if p1
        mul.lo.u32 r26, r26, 0x9E3779B9
        @p2 add.u32 r27, r27, r19
        fma.f32 r28, r23, r24, r28
        add.u32 r29.hi, r29.lo, r15
        mul.wide.u32 r30:r31, r21, r17
    else
        xor.b32 r26, r26, 0x5A5A5A5A
        if p2
            sub.u32 r27, r27, r10
            mov.b32 r29.b1, r26
        else
            @!p3 min.f32 r28, r28, r24
            mul.wide.s32 r30:r31, r21, r25
        endif
        add.f32 r28, r28, r24
    endif
    SLOTS r26, r27, r28, r29, r30, r31
    // a loop run lane by lane: per-lane trip counts, continue, break, lanes that never enter
    mov.b32 r32, 0                      // an integer accumulator
    mov.b32 r33, r23                    // a float one (F's bits where no trip adds to it)
    mov.b32 r34, r21                    // written in some trips of some lanes
    mov.b32 r35, 0                      // the trip
    mov.b32 r38, r22
    mov.b32 r39, r21                    // a pair
    mov.b32 r44, r24
    shr.u32 r36, r22, 8
    and.b32 r36, r36, 15                // trips
    shl.b32 r37, r36, 2
    sub.u32 r37, r2, r37
    sub.u32 r37, r37, 4                 // trip i (1..trips) reads [r37 + 4i]: in bounds; trip trips+1 would not be
    and.b32 r8, r22, 0x4000
    setp.ne.u32 p6, r8, 0
    @p6 add.u32 r37, r37, 64            // (the trap tests: out of bounds from the first trip)
    selp.b32 r43, r18, r2, p2           // p2: the lane's word of slot 0, else out of bounds
    and.b32 r8, r22, 0x2000
    setp.ne.u32 p6, r8, 0
    @p6 mov.b32 r43, r2                 // (the trap tests)
    if p3
        loop
            setp.ge.u32 p4, r35, r36
            break p4
            add.u32 r35, r35, 1
            shl.b32 r8, r35, 2
            add.u32 r8, r37, r8
            ld.global.b32 r40, [r8]     // the memory's last 64 bytes
            @p2 ld.global.b32 r44, [r43]    // out of bounds where p2 is not set
            add.u32 r41, r35, r17
            and.b32 r41, r41, 3
            setp.eq.u32 p5, r41, 0
            continue p5
            fma.f32 r33, r40, r24, r33
            add.u32 r32, r32, r35
            xor.b32 r32, r32, r40
            xor.b32 r32, r32, r44
            @p2 mov.b32 r34, r35
            @!p2 add.u32 r34.hi, r34.hi, r35
            mul.wide.u32 r38:r39, r32, r40
            setp.gt.u32 p5, r32, r21
            if p5
                sub.u32 r32, r32, r21
                and.b32 r42, r40, 1
                setp.ne.u32 p6, r42, 0
                break p6
            else
                add.f32 r33, r33, r23
            endif
        endloop
    endif
    SLOTS r32, r33, r34, r35, r38, r39, r44
    // loads in an `if` and under a guard, out of bounds in the lanes they leave out
    selp.b32 r45, r18, r2, p1
    and.b32 r8, r22, 0x1000
    setp.ne.u32 p6, r8, 0
    @p6 mov.b32 r45, r2                 // (the trap tests)
    mov.b32 r46, r17
    mov.b32 r47, r17
    if p1
        ld.global.b32 r46, [r45]
        @p2 ld.global.u16 r47, [r43+2]
    endif
    SLOTS r46, r47
    // a loop run in lockstep (it stores): if/else, continue and break in it
    shr.u32 r48, r22, 16
    and.b32 r48, r48, 3
    mov.b32 r49, r21
    loop
        setp.eq.u32 p4, r48, 0
        break p4
        sub.u32 r48, r48, 1
        if p2
            mul.lo.u32 r49, r49, 3
        else
            add.u32 r49, r49, r17
        endif
        st.global.b32 [r9], r49
        and.b32 r8, r49, 4
        setp.ne.u32 p5, r8, 0
        continue p5
        xor.b32 r49, r49, r10
    endloop
    add.u32 r9, r9, r0
    // stores under partial masks, lanes colliding: the workgroup's 512 bytes of the area
    shl.b32 r50, r14, 9
    add.u32 r50, r50, r1
    and.b32 r51, r21, 63
    add.u32 r51, r50, r51
    and.b32 r52, r21, 62
    add.u32 r52, r50, r52
    and.b32 r53, r21, 60
    add.u32 r53, r50, r53
    and.b32 r54, r21, 56
    add.u32 r54, r50, r54
    and.b32 r55, r21, 240
    add.u32 r55, r50, r55
    selp.b32 r56, r9, r2, p1            // out of bounds where p1 is not set
    and.b32 r57, r21, 252               // a local word
    and.b32 r58, r21, 248
    and.b32 r59, r21, 240
    if p1
        st.global.b8 [r51], r17
        st.global.b16 [r52+64], r17
        @p2 st.global.b32 [r53+128], r21
        @!p2 st.global.v2.b32 [r54+192], {r30, r31}
        st.global.v4.b32 [r55+256], {r26, r27, r28, r29}
        st.global.b32 [r56], r25
        st.local.b32 [r57], r17
        @p2 st.local.b8 [r57+1], r21
        st.local.b16 [r57+2], r15
        @!p2 st.local.v2.b32 [r58], {r38, r39}
        @p3 st.local.v4.b32 [r59], {r26, r27, r28, r29}
    endif
    add.u32 r9, r9, r0
    barrier
    and.b32 r59, r15, 15
    shl.b32 r59, r59, 4
    ld.local.v4.b32 {r60, r61, r62, r63}, [r59]
    SLOTS r60, r61, r62
    st.global.b32 [r9], r63
    ret
.end
""")

N_SLOTS = 26  # slots 0..3 in, 4..25 results (r9 walks them)
SHAPES = [  # (workgroup, wave width): the lanes L of a workgroup, padded to whole waves
    ((256, 1), 32),  # L = 256: 16 chunks of 16
    ((64, 1), 64),  # 64
    ((48, 1), 16),  # 48: three chunks
    ((48, 1), 32),  # 64, the last 16 lanes padding
    ((24, 1), 8),  # 24: a multiple of 8 only
    ((20, 1), 4),  # 20: of neither
    ((20, 1), 8),  # 24, 4 lanes padding
    ((8, 1), 8),  # 8: under a chunk of 16
    ((1, 1), 4),  # 4, 3 of them padding
    ((1, 1), 64),  # 64, 63 of them padding
    ((8, 6), 16),  # 2-D: 48
    ((8, 6), 32),  # 2-D: 64, 16 padding
    ((3, 3), 4),  # 2-D: 9 threads in 12 lanes
]
SHAPE_IDS = [f"{x}x{y}-w{w}" for (x, y), w in SHAPES]


def lanes_launch(shape: tuple[int, int], w: int, grid: int, seed: int) -> dict[str, object]:
    """The arguments of a launch of LANES: its memory (slots, the collision area, 64 bytes of
    floats at the end) and arguments."""
    rng = np.random.default_rng(seed)
    t = shape[0] * shape[1]
    nt = grid * t
    stride = 4 * nt
    area = (N_SLOTS * stride + 15) & ~15
    size = area + 512 * grid + 64
    mem = np.zeros(size // 4, dtype=np.uint32)
    words = rng.integers(0, 1 << 32, mem.size, dtype=np.uint64).astype(np.uint32)
    mem[:] = words  # results not written keep these
    mem[:nt] = specials(rng, False)[:nt]  # A
    c = mask_bits(rng, nt, t).astype(np.uint32)  # p1: the chunk patterns
    c |= rng.integers(0, 2, nt).astype(np.uint32) << 1  # p2
    c |= (rng.integers(0, 4, nt) != 0).astype(np.uint32) << 2  # p3: three lanes in four enter
    c |= (rng.integers(0, 8, nt) == 0).astype(np.uint32) << 7  # one in eight returns at once
    c |= rng.integers(0, 16, nt).astype(np.uint32) << 8  # trips
    c |= rng.integers(0, 4, nt).astype(np.uint32) << 16  # rounds of the loop in lockstep
    mem[nt : 2 * nt] = c
    mem[2 * nt : 3 * nt] = specials(rng, False)[:nt]  # F
    mem[3 * nt : 4 * nt] = np.where(
        rng.integers(0, 2, nt) == 0, specials(rng, False)[:nt], np.float32(1.5).view(np.uint32)
    )  # G
    mem[-16:] = (rng.standard_normal(16) * 8).astype(np.float32).view(np.uint32)
    mem[-16:][rng.integers(0, 16, 3)] = [0x7FC00001, 0xFF800000, 0x00000001]
    return dict(
        grid=grid,
        workgroup=(shape[0], shape[1], 1),
        wave_width=w,
        memory=mem.view(np.uint8),
        args=[stride, area, size],
    )


def _control(kw: dict[str, object]) -> np.ndarray:
    mem = kw["memory"].view(np.uint32)  # type: ignore[union-attr]
    nt = kw["args"][0] // 4  # type: ignore[index]
    return mem[nt : 2 * nt]


TRAPS = {  # the load that traps: a poison bit, and the bits set and cleared so the lane reaches it
    "ld.global.b32 r46, [r45]": (0x1000, 0x1, 0x80),  # in an `if`
    "@p2 ld.global.u16 r47, [r43+2]": (0x2000, 0x3, 0x84),  # guarded, in an `if`
    "ld.global.b32 r40, [r8]": (0x4000, 0x104, 0x80),  # in the loop run lane by lane (3 trips)
    "@p2 ld.global.b32 r44, [r43]": (0x2000, 0x106, 0x81),  # guarded, in that loop
}


def check_lanes(shape: tuple[int, int], w: int, inline: bool = False) -> None:
    """LANES at one lane count: the same memory, the same traps, the same budget. `inline`: the
    whole kernel one function (codegen.OUTLINE_LINES raised by the caller), not a driver
    calling a function per lane loop."""
    prog = wg.assemble(LANES.replace(".kernel lanes", ".kernel lanes_inline") if inline else LANES)
    k = prog.kernels[0]
    src = generate(k, Shape(w, (shape[0], shape[1], 1)))
    assert "mx = 0" in src  # the loop with per-lane trip counts runs lane by lane
    assert ("def lanes_" not in src) == inline
    kw = lanes_launch(shape, w, 2, seed=shape[0] * 131 + shape[1] * 7 + w)
    got = compare(prog, f"{shape} w{w}: ", **kw)
    out = got.memory.view(np.uint32)
    nt = kw["args"][0] // 4  # type: ignore[index]
    t = shape[0] * shape[1]
    ctl = _control(kw)
    # the kernel is what it claims: some lanes were left out of the `if`, some ran trips (slot 14: r35)
    assert np.any(ctl & 1) and (np.any(~ctl & 1) or nt < 4)
    assert np.any(out[14 * nt : 15 * nt] > 0)
    # one active lane out of bounds: the reference's trap, with its message
    for what, (bit, on, off) in TRAPS.items():
        for lane in sorted({nt - 1, nt // 2 + 3 if nt > 8 else 0}):
            bad = lanes_launch(shape, w, 2, seed=lane)
            c = _control(bad)
            word = (int(c[lane]) | bit | on) & ~off
            c[lane] = word & ~0xF00 | 0x300 if on & 0x100 else word  # three trips
            errors = []
            for engine in ("numpy", "compiled"):
                with pytest.raises(wg.Trap) as e:
                    wg.emulate(prog, engine=engine, **bad)  # type: ignore[arg-type]
                errors.append(str(e.value))
            assert errors[0] == errors[1], f"{what}, lane {lane}"
            i = lane % t
            assert (
                f"{what}\n" in errors[0]
                and f"({lane // t}, 0, 0), thread ({i % shape[0]}, {i // shape[0]}, 0)" in errors[0]
            )
    # the budget: the reference's count exactly (one workgroup: a batch of several counts their longest)
    one = lanes_launch(shape, w, 1, seed=w)
    c = _control(one)
    c &= ~np.uint32(0x80)  # no lane returns at once; the first runs 15 trips
    c[0] |= 0xF05
    lo, hi = 1, 1 << 16
    while hi - lo > 1:
        mid = (lo + hi) // 2
        try:
            wg.emulate(prog, engine="numpy", max_instructions=mid, **one)  # type: ignore[arg-type]
            hi = mid
        except wg.Trap:
            lo = mid
    assert lo > 100
    errors = []
    for engine in ("numpy", "compiled"):
        with pytest.raises(wg.Trap) as e:
            wg.emulate(prog, engine=engine, max_instructions=lo, **one)  # type: ignore[arg-type]
        errors.append(str(e.value))
    assert errors[0] == errors[1] and "budget" in errors[0]
    # at the reference's exact count both finish (the compiled engine, whose count of a loop run
    # lane by lane is a bound, may hand the launch to the NumPy engine there: the same bytes)
    ref = wg.emulate(prog, engine="numpy", max_instructions=hi, **one)  # type: ignore[arg-type]
    got = wg.emulate(prog, engine="compiled", max_instructions=hi, **one)  # type: ignore[arg-type]
    assert np.array_equal(ref.memory, got.memory)


@pytest.mark.parametrize("translation", ["c"], indirect=True)
@pytest.mark.parametrize(("shape", "w"), SHAPES, ids=SHAPE_IDS)
def test_lanes(shape: tuple[int, int], w: int, translation: str) -> None:
    """Divergence, loops run lane by lane, loads out of bounds in inactive lanes only, stores
    under partial masks, at every lane count of SHAPES (C: its compile is the faster)."""
    check_lanes(shape, w)


@pytest.mark.parametrize("translation", ["c"], indirect=True)
@pytest.mark.parametrize(("shape", "w"), [SHAPES[i] for i in (0, 5, 8, 10)], ids=[SHAPE_IDS[i] for i in (0, 5, 8, 10)])
def test_lanes_in_one_function(
    shape: tuple[int, int], w: int, translation: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same, the kernel translated as one function (as a short kernel is) instead of a
    function per lane loop (a long kernel, as LANES is)."""
    from wavegpu.emulator.compiled import codegen

    monkeypatch.setattr(codegen, "OUTLINE_LINES", 1 << 30)
    check_lanes(shape, w, inline=True)


@pytest.mark.parametrize("translation", ["numba"], indirect=True)
@pytest.mark.parametrize(("shape", "w"), [SHAPES[6]], ids=[SHAPE_IDS[6]])
def test_lanes_numba(shape: tuple[int, int], w: int, translation: str) -> None:
    """The same under numba at one lane count (24 lanes, 20 threads), its compile being the slower."""
    check_lanes(shape, w)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
@pytest.mark.parametrize("translation", ["c"], indirect=True)
def test_lanes_under_drawn_masks(translation: str, data: st.DataObject) -> None:
    """LANES under masks hypothesis draws lane by lane (shrunk to the fewest lanes that differ
    when a mask or a remainder is wrong), at three lane counts: 48 lanes in chunks, 20 (no
    whole chunk) and 64 of which 63 are padding (C: each lane count is a compile)."""
    shape, w = data.draw(st.sampled_from([SHAPES[2], SHAPES[5], SHAPES[9]]))
    kw = lanes_launch(shape, w, 2, seed=data.draw(st.integers(0, 2**32 - 1)))
    c = _control(kw)
    bits = data.draw(st.lists(st.integers(0, 15), min_size=c.size, max_size=c.size))
    trips = data.draw(st.lists(st.integers(0, 15), min_size=c.size, max_size=c.size))
    # p1, p2, p3 and the early return (bit 7) from the draw, trips too; the rest as generated
    c[:] = (c & ~np.uint32(0xF87)) | (np.array(bits, np.uint32) & 7) | ((np.array(bits, np.uint32) & 8) << 4)
    c |= np.array(trips, np.uint32) << 8
    compare(wg.assemble(LANES), f"{shape} w{w}: ", **kw)


# ------------------------------------------------------------------- the benchmarks' own kernels
BENCH = Path(__file__).resolve().parents[3] / "benchmarks" / "kernels"


def _gemm_values(rng: np.random.Generator, count: int, dtype: type) -> np.ndarray:
    """Ordinary values with specials among them: NaNs, infinities, subnormals, -0.0."""
    x = rng.standard_normal(count).astype(dtype)
    sp = np.array([np.nan, np.inf, -np.inf, -0.0, 1e-41 if dtype is np.float32 else 1e-6, 65504.0], dtype)
    pick = rng.integers(0, 64, count) == 0
    x[pick] = sp[rng.integers(0, sp.size, int(pick.sum()))]
    return x


@pytest.mark.parametrize("translation", ["c"], indirect=True)
@pytest.mark.parametrize("name", ["sgemm_blocked", "gemm_bias_relu_f16", "histogram"])
def test_benchmark_kernels(name: str, translation: str) -> None:
    """The kernels of benchmarks/compiled_engine.py (a corpus the other tests do not compare):
    the GEMMs at 64^3 on values with specials among them, the histogram on two workgroups."""
    prog = wg.assemble((BENCH / f"{name}.wave").read_text(), f"{name}.wave")
    rng = np.random.default_rng(len(name))
    n = 64
    if name == "histogram":
        count = 2 * 4096
        mem = np.concatenate([rng.integers(0, 1 << 32, count, dtype=np.uint32), np.zeros(256, np.uint32)])
        compare(prog, grid=count // 4096, memory=mem.view(np.uint8), args=[0, 4 * count])
        return
    dtype = np.float16 if name.endswith("f16") else np.float32
    size = np.dtype(dtype).itemsize * n * n
    a, b = _gemm_values(rng, n * n, dtype), _gemm_values(rng, n * n, dtype)
    bias = _gemm_values(rng, n, np.float32)
    mem = np.concatenate([a.view(np.uint8), b.view(np.uint8), np.zeros(size, np.uint8), bias.view(np.uint8)])
    got = compare(prog, grid=(n // 64, n // 16), memory=mem, args=[0, size, 2 * size, n, 3 * size])
    assert np.any(got.memory[2 * size : 3 * size] != 0)
