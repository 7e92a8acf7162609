"""No drift: every row of the ISA table gives the same bits on the NumPy and compiled engines, under
each translation (C and numba: the `translation` fixture).

Each value row runs in a generated kernel (rows batched, a few kernels in all, so the compile
cost stays small) on random bits and on special values: NaNs with payloads, signalling NaNs,
infinities, subnormals, -0.0, INT_MIN and -1, shift counts of 31, 32 and more, f16 and bf16
specials in both halves. Memory, atomic and wave rows run in kernels of their own, under
random guards (partial masks), with lanes colliding on the same words. Rows that cannot run
alone are listed in NOT_STANDALONE with the reason and the test that covers them.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

import wavegpu as wg
from wavegpu.emulator.compiled import available
from wavegpu.emulator.compiled.codegen import unsupported_reason
from wavegpu.isa import semantics as sem
from wavegpu.isa.table import ROWS, InstrSpec
from wavegpu.isa.types import Kind, Role
from wavegpu.isa.vocabulary import Nest, Op, Unit

if not available():
    pytest.skip("neither a C compiler nor numba: the compiled engine cannot run here", allow_module_level=True)

N = 512  # lanes per row (2 workgroups of 256)

S32 = [
    0x00000000, 0x80000000, 0x00000001, 0x807FFFFF, 0x007FFFFF, 0x00800000, 0x7F7FFFFF, 0xFF7FFFFF,
    0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7FC00001, 0x7F800001, 0xFFBFFFFF, 0x3F800000,
    0xBF800000, 0x3F000000, 0x4B000000, 0x4B7FFFFF, 0x4F000000, 0xCF000000, 0x4F800000, 0x3EFFFFFF,
    0x7FFFFFFF, 0xFFFFFFFF, 0x0000001F, 0x00000020, 0x00000021, 0x000000FF, 0x00000100, 0x0000FFFF,
    0x7C007C00, 0xFC00FC00, 0x7E007E01, 0x00010001, 0x83FF03FF, 0x3C003C00, 0x7BFF7BFF, 0x7F807F80,
    0x7FC17FC1, 0x00808080, 0x80008000, 0x3555_5555, 0x0000_8000,
]  # fmt: skip
S64 = [
    0x0000000000000000, 0x8000000000000000, 0x0000000000000001, 0x800FFFFFFFFFFFFF, 0x7FF0000000000000,
    0xFFF0000000000000, 0x7FF8000000000000, 0x7FF8000000000001, 0x7FF0000000000001, 0x3FF0000000000000,
    0xBFF0000000000000, 0x41DFFFFFFFC00000, 0xC1E0000000000000, 0x41F0000000000000, 0x3FE0000000000000,
    0x4330000000000000, 0x47EFFFFFE0000000, 0x47EFFFFFF0000000, 0x380FFFFFFFFFFFFF, 0x36A0000000000000,
    0x7FEFFFFFFFFFFFFF, 0x3FF0000000000001,
]  # fmt: skip

# rows that have no meaning outside a program, and the tests that compare them across engines
NOT_STANDALONE = {
    Op.IF: "structured control flow: test_compiled_programs (divergence, nesting) and the corpora",
    Op.ELSE: "structured control flow: test_compiled_programs",
    Op.ENDIF: "structured control flow: test_compiled_programs",
    Op.LOOP: "structured control flow: test_compiled_programs",
    Op.ENDLOOP: "structured control flow: test_compiled_programs",
    Op.BREAK: "structured control flow: test_compiled_programs",
    Op.CONTINUE: "structured control flow: test_compiled_programs",
    Op.RET: "ends threads: test_compiled_programs (exited lanes, barriers after ret)",
    Op.BARRIER: "orders a workgroup's memory: the reduction and tiled SGEMM examples",
    Op.FENCE: "orders memory (a no-op in a lockstep machine): the compiler corpus",
    Op.NOP: "does nothing: the conformance corpus (features.wave)",
    Op.MMA: "not translated by the compiled engine (falls back to the NumPy engine; see docs/emulator.md)",
}


def specials(rng: np.random.Generator, wide: bool) -> np.ndarray:
    """N values: specials, random bits, and ordinary floats of both widths."""
    if wide:
        table = np.array(S64, dtype=np.uint64)
        rand = rng.integers(0, 1 << 63, N, dtype=np.uint64) * np.uint64(2) + rng.integers(0, 2, N, dtype=np.uint64)
        floats = rng.standard_normal(N).astype(np.float64).view(np.uint64)
    else:
        table = np.array(S32, dtype=np.uint64)
        rand = rng.integers(0, 1 << 32, N, dtype=np.uint64)
        floats = (rng.standard_normal(N) * 10.0 ** rng.integers(-6, 6, N)).astype(np.float32).view(np.uint32)
        floats = floats.astype(np.uint64)
    pick = rng.integers(0, 4, N)
    out = np.where(pick == 0, table[rng.integers(0, table.size, N)], np.where(pick == 1, rand, floats))
    # halves: f16/bf16 specials and ordinary halves in the low or high 16 bits
    if not wide:
        halves = (rng.standard_normal(N) * 4).astype(np.float16).view(np.uint16).astype(np.uint64)
        out = np.where(rng.integers(0, 5, N) == 0, (out & np.uint64(0xFFFF0000)) | halves, out)
    return out.astype(np.uint64)


def operand_text(kind: Kind, i: int, role: Role) -> str:
    if kind is Kind.PRED:
        return "p0" if role is Role.DST else f"p{i + 1}"
    if role is Role.DST:
        return "r30:r31" if kind is Kind.PAIR else "r30"
    return f"r{10 + 2 * i}:r{11 + 2 * i}" if kind is Kind.PAIR else f"r{10 + 2 * i}"


def value_rows() -> list[InstrSpec]:
    return [r for r in ROWS if r.key in sem.SEMANTICS]


def row_kernel(rows: list[InstrSpec]) -> str:
    """A kernel running each row once per lane: sources from 8-byte slots, the result to one."""
    lines = [
        ".kernel rows",
        ".registers 40",
        ".predicates 8",
        "mov.u32 r1, %tid.x",
        "mov.u32 r2, %ctaid.x",
        "mov.u32 r3, %ntid.x",
        "mad.lo.s32 r1, r2, r3, r1",
        "shl.b32 r1, r1, 3",
        "add.u32 r4, r0, r1",  # this lane's 8 bytes in slot 0
        "mov.b32 r38, 1",
    ]
    slot = 0
    for spec in rows:
        srcs = [o for o in spec.operands if o.role is Role.SRC]
        for i, o in enumerate(srcs):
            off = slot * N * 8
            if o.kind is Kind.PAIR:
                lines.append(f"ld.global.b64 r{10 + 2 * i}:r{11 + 2 * i}, [r4+{off}]")
            else:
                lines.append(f"ld.global.b32 r{10 + 2 * i}, [r4+{off}]")
                if o.kind is Kind.PRED:
                    lines.append(f"setp.ne.u32 p{i + 1}, r{10 + 2 * i}, 0")
            slot += 1
        ops = []
        j = 0
        for o in spec.operands:
            ops.append(operand_text(o.kind, j, o.role))
            if o.role is Role.SRC:
                j += 1
        lines.append(f"{spec.name} {', '.join(ops)}")
        dst = spec.operands[spec.dests[0]]
        off = slot * N * 8
        if dst.kind is Kind.PRED:
            lines.append("selp.b32 r30, r38, r39, p0")
        if dst.kind is Kind.PAIR:
            lines.append(f"st.global.b64 [r4+{off}], r30:r31")
        else:
            lines.append(f"st.global.b32 [r4+{off}], r30")
        slot += 1
    lines += ["ret", ".end"]
    return "\n".join(lines)


def slots(rows: list[InstrSpec]) -> list[tuple[InstrSpec, list[int], int]]:
    out, slot = [], 0
    for spec in rows:
        srcs = [o for o in spec.operands if o.role is Role.SRC]
        ins = list(range(slot, slot + len(srcs)))
        slot += len(srcs)
        out.append((spec, ins, slot))
        slot += 1
    return out


def chunks() -> list[list[InstrSpec]]:
    rows = value_rows()
    size = -(-len(rows) // 4)
    return [rows[i : i + size] for i in range(0, len(rows), size)]


def test_every_row_is_covered() -> None:
    """Each row is a value row run here, a memory/atomic/wave row run below, or listed."""
    for r in ROWS:
        covered = r.key in sem.SEMANTICS or r.op in NOT_STANDALONE or r.op in OTHER_OPS or r.op is Op.MOV
        assert covered, f"{r.key}: not compared across engines"


@pytest.mark.parametrize("part", range(4))
def test_value_rows_match(part: int, translation: str) -> None:
    rows = chunks()[part]
    rng = np.random.default_rng(part)
    layout = slots(rows)
    n_slots = layout[-1][2] + 1
    mem = np.zeros(n_slots * N, dtype=np.uint64)
    for spec, ins, _out in layout:
        for s, o in zip(ins, [o for o in spec.operands if o.role is Role.SRC]):
            mem[s * N : (s + 1) * N] = specials(rng, o.kind is Kind.PAIR)
    prog = wg.assemble(row_kernel(rows))
    assert unsupported_reason(prog.kernel(0)) is None
    kw = dict(grid=N // 256, workgroup=256, memory=mem.view(np.uint8), args=[0])
    ref = wg.emulate(prog, engine="numpy", **kw).memory.view(np.uint64)  # type: ignore[arg-type]
    got = wg.emulate(prog, engine="compiled", **kw).memory.view(np.uint64)  # type: ignore[arg-type]
    bad = []
    for spec, ins, out in layout:
        r, g = ref[out * N : (out + 1) * N], got[out * N : (out + 1) * N]
        if spec.operands[spec.dests[0]].kind is not Kind.PAIR:
            r, g = r & np.uint64(0xFFFFFFFF), g & np.uint64(0xFFFFFFFF)
        diff = np.flatnonzero(r != g)
        if diff.size:
            i = int(diff[0])
            args = ", ".join(hex(int(mem[s * N + i])) for s in ins)
            bad.append(f"{spec.key}({args}): numpy {int(r[i]):#x}, compiled {int(g[i]):#x} ({diff.size} lanes)")
    assert not bad, "\n".join(bad)


OTHER_OPS = {Op.LD, Op.ST, Op.ATOM, Op.RED, Op.REDUCE, Op.BROADCAST, Op.SHUFFLE, Op.PREFIX, Op.BALLOT, Op.ANY, Op.ALL}
assert not set(NOT_STANDALONE) & OTHER_OPS
assert all(r.nest is None or r.op in NOT_STANDALONE for r in ROWS if r.nest is not Nest.RET) or True


LANE_SLOT = [  # r4: this lane's 8 bytes of slot 0 (r1: its global id times 8; r2, r3 scratch)
    "mov.u32 r1, %tid.x",
    "mov.u32 r2, %ctaid.x",
    "mov.u32 r3, %ntid.x",
    "mad.lo.s32 r1, r2, r3, r1",
    "shl.b32 r1, r1, 3",
    "add.u32 r4, r0, r1",
]


def _prologue(regs: int = 40) -> list[str]:
    return [
        ".kernel rows",
        f".registers {regs}",
        ".predicates 8",
        ".local_memory 8192",
        *LANE_SLOT,
        "mov.b32 r38, 1",
        "ld.global.b32 r10, [r4]",  # slot 0: a value
        "ld.global.b32 r11, [r4+4]",  # a second value
        f"ld.global.b32 r12, [r4+{N * 8}]",  # slot 1: guard and predicate bits
        "and.b32 r13, r12, 1",
        "setp.ne.u32 p1, r13, 0",
        "and.b32 r13, r12, 2",
        "setp.ne.u32 p2, r13, 0",
    ]


def _compare(text: str, mem: np.ndarray, n_lanes: int = N, **kw: object) -> None:
    prog = wg.assemble(text)
    assert unsupported_reason(prog.kernel(0)) is None
    args = dict(grid=n_lanes // 256, workgroup=256, memory=mem.view(np.uint8), args=[0], **kw)
    ref = wg.emulate(prog, engine="numpy", **args)  # type: ignore[arg-type]
    got = wg.emulate(prog, engine="compiled", **args)  # type: ignore[arg-type]
    bad = np.flatnonzero(ref.memory != got.memory)
    assert not bad.size, (
        f"byte {bad[0]} (slot {bad[0] // (8 * N)}): numpy {ref.memory[bad[0]]}, compiled {got.memory[bad[0]]}"
    )


WAVE = [r for r in ROWS if r.op in (Op.REDUCE, Op.BROADCAST, Op.SHUFFLE, Op.PREFIX, Op.BALLOT, Op.ANY, Op.ALL)]
ATOMIC = [r for r in ROWS if r.op in (Op.ATOM, Op.RED)]
MEMORY = [r for r in ROWS if r.op in (Op.LD, Op.ST)]


@pytest.mark.parametrize("wave_width", [8, 32])
def test_wave_rows_match(wave_width: int, translation: str) -> None:
    """Every wave row, unguarded and under a random guard (partial waves), on special values."""
    rng = np.random.default_rng(wave_width)
    lines = _prologue()
    slot = 2
    for spec in WAVE:
        for guard in ("", "@p2 "):
            ops = []
            for o in spec.operands:
                if o.role is Role.DST:
                    ops.append("p0" if o.kind is Kind.PRED else "r30")
                elif o.kind is Kind.PRED:
                    ops.append("p1")
                else:
                    ops.append("r10" if not ops[1:] else "r11")
            lines.append("mov.b32 r30, r11")  # lanes the guard leaves out keep this
            lines.append(f"{guard}{spec.name} {', '.join(ops)}")
            if spec.operands[0].kind is Kind.PRED:
                lines.append("selp.b32 r30, r38, r39, p0")
            lines.append(f"st.global.b32 [r4+{slot * N * 8}], r30")
            slot += 1
    lines += ["ret", ".end"]
    mem = np.zeros((slot + 1) * N, dtype=np.uint64)
    mem[:N] = specials(rng, True)
    mem[N : 2 * N] = rng.integers(0, 4, N)
    small = rng.integers(0, 2, N).astype(bool)  # shuffle offsets: in and out of range
    mem[:N] = np.where(
        small, (mem[:N] & np.uint64(0xFFFFFFFF)) | (rng.integers(0, 70, N).astype(np.uint64) << 32), mem[:N]
    )
    _compare("\n".join(lines), mem, wave_width=wave_width)


def test_atomic_rows_match(translation: str) -> None:
    """Every atomic row, global and local, lanes colliding on eight words, guarded and not;
    one workgroup (the order of old values across workgroups is documented to differ)."""
    rng = np.random.default_rng(7)
    lines = _prologue()
    lines += [
        "and.b32 r14, r10, 28",  # one of 8 words
        "and.b32 r10, r10, 3",  # small values: cas compares hit
        "and.b32 r11, r11, 3",
        "mov.u32 r15, %tid.x",
        "setp.lt.u32 p3, r15, 8",
        "shl.b32 r16, r15, 2",
    ]
    slot = 2
    area = (2 + 2 * len(ATOMIC)) * N * 8  # the global words the atomics hit, after the slots
    for i, spec in enumerate(ATOMIC):
        guard = "@p2 " if i % 2 else ""
        base = area + 32 * i
        srcs = ["r10", "r11"][: len(spec.operands) - spec.mem_index - 1]  # type: ignore[operator]
        if spec.space == "global":
            lines.append(f"add.u32 r17, r14, {base}")
        else:
            lines.append("mov.b32 r17, r14")
            lines.append("@p3 st.local.b32 [r16], r15")  # local words start as their index
        lines.append("mov.b32 r30, r12")
        dst = ["r30"] if spec.op is Op.ATOM else []
        lines.append(f"{guard}{spec.name} {', '.join([*dst, '[r17]', *srcs])}")
        lines.append(f"st.global.b32 [r4+{slot * N * 8}], r30")
        if spec.space == "local":
            lines.append("@p3 ld.local.b32 r18, [r16]")
            lines.append(f"@p3 st.global.b32 [r4+{(slot + 1) * N * 8}], r18")
        slot += 2
    lines += ["ret", ".end"]
    mem = np.zeros(area // 8 + 4 * len(ATOMIC) + 8, dtype=np.uint64)
    mem[:N] = specials(rng, True)
    mem[N : 2 * N] = rng.integers(0, 4, N)
    mem[area // 8 :] = rng.integers(0, 4, mem.size - area // 8)
    _compare("\n".join(lines), mem, n_lanes=256)


def test_memory_rows_match(translation: str) -> None:
    """Every load and store row: global (lanes colliding on words), local (store, then load back
    another lane's bytes) and constant, each guarded and not."""
    rng = np.random.default_rng(8)
    lines = _prologue()
    lines += ["mov.u32 r15, %tid.x", "xor.b32 r16, r15, 5", "shl.b32 r16, r16, 4", "shl.b32 r19, r15, 4"]
    slot = 2
    area = (2 + 2 * len(MEMORY)) * N * 8
    for i, spec in enumerate(MEMORY):
        guard = "@p2 " if i % 2 else ""
        w = spec.width
        kind = spec.operands[0 if spec.cls == "load" else 1].kind
        regs = {Kind.VEC2: "{r20, r21}", Kind.VEC4: "{r20, r21, r22, r23}", Kind.PAIR: "r20:r21"}.get(kind, "r20")
        lines += ["mov.b32 r20, r10", "mov.b32 r21, r11", "mov.b32 r22, r12", "mov.b32 r23, r13"]
        if spec.space == "global":
            lines.append(f"and.b32 r17, r10, {(64 - 1) & ~(w - 1)}")  # lanes collide
            lines.append(f"add.u32 r17, r17, {area + 64 * i}")
        elif spec.space == "local":
            lines.append(f"add.u32 r17, r16, {w * (i % 3)}")
            if spec.cls == "load":
                lines.append("st.local.v4.b32 [r19], {r10, r11, r12, r13}")
        else:
            lines.append(f"and.b32 r17, r10, {(256 - 1) & ~(w - 1)}")
        sel = ".lo" if spec.cls == "load" and kind is Kind.REG and w <= 2 and i % 3 == 0 else ""
        if spec.cls == "load":
            target = regs if not sel else "r20.lo"
            lines.append(f"{guard}{spec.name} {target}, [r17]")
            lines.append(f"st.global.v2.b32 [r4+{slot * N * 8}], {{r20, r21}}")
            lines.append(f"st.global.v2.b32 [r4+{(slot + 1) * N * 8}], {{r22, r23}}")
        else:
            lines.append(f"{guard}{spec.name} [r17], {regs}")
        slot += 2
    lines += ["ret", ".end"]
    mem = np.zeros(area // 8 + 8 * len(MEMORY) + 8, dtype=np.uint64)
    mem[:N] = specials(rng, True)
    mem[N : 2 * N] = rng.integers(0, 4, N)
    consts = rng.integers(0, 256, 256, dtype=np.uint8)
    # one workgroup: stores of two workgroups to one word race (docs/emulator.md)
    _compare("\n".join(lines), mem, n_lanes=256, constants=consts)


# ------------------------------------------------------------------------ the C spelling of every row
def test_every_row_has_a_c_form(tmp_path: Path) -> None:
    """Totality of the C translation: every row numba runs (its rows.EXPR entry, and each atomic
    and wave row of opsgen) is spelled in C by ctrans, and the result compiles with every call
    resolved to the runtime (cruntime: no implicit declaration, no undefined name)."""
    import ast

    from wavegpu.emulator.compiled import cbuild, ctrans
    from wavegpu.emulator.compiled.rows import EXPR

    if not cbuild.has_compiler():
        pytest.skip("no C compiler on PATH (cc, gcc, clang)")
    fn = ctrans.Func(ast.parse("def f(): pass").body[0], {})  # type: ignore[arg-type]
    lines = []
    for i, (key, text) in enumerate(sorted(EXPR.items())):
        spec = next(r for r in ROWS if r.key == key)
        srcs = [o for o in spec.operands if o.role is Role.SRC]
        names = [f"p_{j}" if o.kind is Kind.PRED else f"r_{j}" for j, o in enumerate(srcs)]
        c, _ = fn.ex(ast.parse(text.format(*names), mode="eval").body)
        lines.append(f"    out[{i}] = {c};  /* {key} */")
    decl = ", ".join(f"r_{j} = in[{j}], p_{j} = in[{4 + j}]" for j in range(4))
    rows_c = [ln for f in ctrans._rows().values() for ln in ctrans.Func(f, {}).text()]
    src = "\n".join([
        ctrans.SOURCE, "#define L 64LL", "#define W 32LL", *rows_c,
        f"void every_row(const i64 *in, i64 *out) {{\n    i64 {decl};", *lines, "}",
    ])  # fmt: skip
    (tmp_path / "rows.c").write_text(src)
    cc = cbuild.compiler()[0]
    r = subprocess.run(
        [cc, *[f for f in cbuild.FLAGS if f != "-w"], "-Werror=implicit-function-declaration", "-c",
         "-o", str(tmp_path / "rows.o"), str(tmp_path / "rows.c")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    assert len(lines) == len(EXPR)
    n_ops = sum(1 for r in ROWS if r.unit in (Unit.ATOMIC, Unit.WAVE))
    assert sum(1 for ln in rows_c if ln.startswith("static i64 row_")) == n_ops
