"""The assembler: canonical syntax, directives, validation and diagnostics with carets."""

from __future__ import annotations

import pytest

import wavegpu as wg
from wavegpu.isa import Imm, Mem, Pair, Reg, Vec


def one(src: str):  # type: ignore[no-untyped-def]
    return wg.assemble(f".kernel k\n{src}\n.end\n").kernels[0]


def errors(src: str, filename: str = "bad.wave") -> list[wg.Diagnostic]:
    with pytest.raises(wg.AsmError) as ei:
        wg.assemble(src, filename)
    return ei.value.diagnostics


def test_operand_forms() -> None:
    k = one(
        "add.s32 r1.lo, r2.hi, r3.b3\nld.global.b32 r1, [r2-16]\nld.global.b64 r2:r3, [0x40]\n"
        "ld.global.v4.b32 {r4, r5, r6, r7}, [r8+4]\nadd.f64 r0:r1, r2:r3, 1.5"
    )
    i0, i1, i2, i3, i4 = k.instructions
    assert i0.operands == (Reg(1, 1), Reg(2, 2), Reg(3, 6))
    assert i1.operands[1] == Mem(2, -16)
    assert i2.operands == (Pair(2), Mem(None, 0x40))
    assert i3.operands == (Vec(4, 4), Mem(8, 4))
    assert i4.operands[2] == Imm(0x3FF8000000000000, 64)


@pytest.mark.parametrize(
    "text, bits",
    [
        ("42", 42),
        ("-1", 0xFFFFFFFF),
        ("0x10", 16),
        ("0b101", 5),
        ("1_000", 1000),
        ("1.5", 0x3FC00000),
        ("-2e3", 0xC4FA0000),
        ("inf", 0x7F800000),
        ("-inf", 0xFF800000),
        ("nan", 0x7FC00000),
        ("0f3FC00000", 0x3FC00000),
        ("4294967295", 0xFFFFFFFF),
    ],
)
def test_immediates_in_untyped_slots(text: str, bits: int) -> None:
    assert one(f"mov.b32 r1, {text}").instructions[0].operands[1] == Imm(bits)


def test_decimal_integers_in_float_slots_are_floats() -> None:
    assert one("add.f32 r1, r2, 2").instructions[0].operands[2] == Imm(0x40000000)
    assert one("add.f32 r1, r2, 0x2").instructions[0].operands[2] == Imm(2)  # hex is raw bits
    assert one("mov.f32 r1, 1").instructions[0].operands[1] == Imm(0x3F800000)
    assert one("mul.f64 r0:r1, r2:r3, 2").instructions[0].operands[2] == Imm(0x4000000000000000, 64)


def test_register_inference_and_declaration() -> None:
    k = one("mov.b32 r9, 1\nsetp.eq.s32 p3, r9, 1")
    assert (k.registers, k.predicates) == (10, 4)
    k2 = wg.assemble(".kernel k\n.registers 32\n.predicates 8\nret\n.end").kernels[0]
    assert (k2.registers, k2.predicates) == (32, 8)


def test_aliases_map_to_canonical_rows() -> None:
    k = one("ld.global.f32 r1, [r2]\nmov.u32 r3, %tid.x\nselp.s32 r1, r2, r3, p0\ncvt.rzi.s32.f32 r1, r2")
    assert [i.spec.name for i in k.instructions] == [
        "ld.global.b32",
        "mov.b32",
        "selp.b32",
        "cvt.s32.f32",
    ]


def test_if_labels_are_checked() -> None:
    ok = "setp.eq.s32 p0, r0, 0\nif p0, E, X\nnop\nE: else\nnop\nX: endif"
    assert len(one(ok).instructions) == 6
    no_else = "if p0, X, X\nnop\nX: endif"
    assert len(one(no_else).instructions) == 3
    after = "loop END\nbreak p0\nendloop\nEND: ret"
    assert len(one(after).instructions) == 4
    d = errors(".kernel k\nif p0, X, E\nnop\nE: else\nX: endif\n.end")
    assert any("does not mark its 'else'" in x.message for x in d)
    d = errors(".kernel k\nloop NOWHERE\nendloop\n.end")
    assert any("undefined label 'NOWHERE'" in x.message for x in d)


def test_diagnostics_have_place_line_and_caret() -> None:
    src = ".kernel k\n    add.s32 r1, r2, q7\n.end\n"
    (d,) = errors(src, "k.wave")
    text = d.render()
    assert text.startswith("k.wave:2:21: error: ")
    lines = text.splitlines()
    assert lines[1].strip() == "add.s32 r1, r2, q7"
    assert lines[2].index("^") == lines[1].index("q7")


def test_every_error_of_a_file_is_reported() -> None:
    src = "\n".join(
        [
            ".kernel k",
            ".registers 4",
            "    frobnicate r1",  # 3: unknown instruction
            "    add.s32 r1, r2",  # 4: operand count
            "    mov.b32 r9, 1",  # 5: register beyond .registers
            "    add.f64 r1:r2, r2:r3, r4:r5",  # 6: odd pair
            "    setp.lt.s32 p9, r1, r2",  # 7: predicate range
            "    break p0",  # 8: break outside loop
            "    else",  # 9: else without if
            "    ld.global.b32 r1, [r2+oops]",  # 10: bad offset
            "    @p0 barrier",  # 11: unguardable
            "    call foo",  # 12: not in WAVE
            "    mma_compute r1",  # 13
            "    loop",  # 14: never closed
            ".end",
        ]
    )
    d = errors(src)
    lines = sorted({x.span.line for x in d if x.span})
    assert lines == [3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14], [x.render() for x in d]
    msgs = " | ".join(x.message for x in d)
    assert "unknown instruction 'frobnicate'" in msgs
    assert "not part of WAVE v0.1" in msgs
    assert "never closed" in msgs


@pytest.mark.parametrize(
    "src, message",
    [
        (".kernel k\n.workgroup_size 64, 32, 1\n.end", "exceeds MAX_WORKGROUP_SIZE"),
        (".kernel k\n.workgroup_size 0\n.end", "at least 1"),
        (".kernel k\n.registers 300\n.end", "MAX_REGISTERS"),
        (".kernel k\n.local_memory 70000\n.end", "LOCAL_MEMORY_SIZE"),
        (".kernel k\n.param a, pointer, f32\n.end", "buffer' or 'scalar"),
        (".kernel k\n.param a, buffer, f99\n.end", "unknown type"),
        (".kernel k\n.frob 1\n.end", "unknown directive"),
        ("add.s32 r1, r2, r3", "outside a kernel"),
        ("", "no kernels"),
        (
            ".kernel k\n.registers 1\n.param a, buffer, u32\n.param b, buffer, u32\nret\n.end",
            "parameters",
        ),
        (".kernel k\nret\n.end\n.kernel k\nret\n.end", "defined twice"),
        (".kernel k\nadd.s32 r1, 1, 2\n.end", "one immediate"),
        (".kernel k\nmov.b32 r1, 99999999999\n.end", "does not fit"),
        (".kernel k\nld.global.b32 r1, [r2\n.end", "unbalanced"),
        (".kernel k\nld.global.v2.b32 {r1, r3}, [r2]\n.end", "consecutive"),
        (".kernel k\nmov.b32 r1, %bogus\n.end", "unknown special register"),
        (".kernel k\n@p9 ret\n.end", "does not exist"),
        (".kernel k\n@uniform ret\n.end", "@uniform annotates an 'if'"),
        (".kernel k\nL: ret\nL: ret\n.end", "already defined"),
        (".kernel k\nadd.s32 r1, r2, r3, r4\n.end", "takes 3 operand"),
        (".kernel k\nld.global.b32 r1, r2\n.end", "memory operand"),
        (".kernel k\nst.const.b32 [r1], r2\n.end", "unknown instruction"),
    ],
)
def test_bad_input(src: str, message: str) -> None:
    d = errors(src)
    assert any(message in x.message for x in d), [x.render() for x in d]
    assert all(x.span is not None and x.span.line >= 1 for x in d)


def test_several_kernels_and_comments() -> None:
    p = wg.assemble("# one\n.kernel a ; c\n ret // c\n.end\n.kernel b\nret\n")
    assert [k.name for k in p.kernels] == ["a", "b"]
    assert p.kernel("b") is p.kernels[1]
    with pytest.raises(wg.WaveError):
        p.kernel("c")


def test_debug_lines_record_assembly_positions() -> None:
    p = wg.assemble(".kernel k\n  nop\n  ret\n.end", "x.wave", debug_lines=True)
    assert [(loc.line, loc.col) for loc in p.kernels[0].lines] == [(2, 3), (3, 3)]
    back = wg.Program.from_bytes(p.to_bytes())
    assert back.kernels[0].lines == p.kernels[0].lines


ANNOTATED = """\
.kernel k
.param a, buffer, f32, readonly
.param n, scalar, u32
.param c, buffer, f32
    mov.u32 r3, %tid.x
.access a
    ld.global.b32 r4, [r0]
    ld.global.b32 r5, [r2]
    .access c
    L: st.global.b32 [r2], r4
.end
"""


def test_readonly_buffers_and_access_directives() -> None:
    k = wg.assemble(ANNOTATED).kernels[0]
    assert [(p.name, p.writable) for p in k.params] == [("a", False), ("n", True), ("c", True)]
    assert k.accesses == (None, 0, None, 2)  # `.access` annotates the next instruction only
    plain = wg.assemble(ANNOTATED.replace(", readonly", "").replace(".access a\n", "").replace(".access c\n", ""))
    assert all(p.writable for p in plain.kernels[0].params)
    assert plain.kernels[0].accesses is None


def test_readonly_on_a_scalar_is_an_error_with_a_caret() -> None:
    (d,) = errors(".kernel k\n.param n, scalar, u32, readonly\nret\n.end\n", "k.wave")
    text = d.render()
    assert text.startswith("k.wave:2:24: error: 'readonly' marks a buffer; 'n' is a scalar")
    lines = text.splitlines()
    assert lines[2].index("^") == lines[1].index("readonly")


@pytest.mark.parametrize(
    "src, message, line, col",
    [
        (".param a, buffer, f32, rw\nret", "expected 'readonly', not 'rw'", 2, 24),
        (".param a, buffer, f32\n.access b\nld.global.b32 r1, [r0]", "no parameter named 'b'", 3, 9),
        (".param n, scalar, u32\n.access n\nld.global.b32 r1, [r0]", "'n' is a scalar, not a buffer", 3, 9),
        (".param a, buffer, f32\n.access a\nadd.u32 r1, r1, 1", "add.u32 does not access global memory", 3, 1),
        (".param a, buffer, f32\n.access a\nld.local.b32 r1, [r0]", "does not access global memory", 3, 1),
        (
            ".param a, buffer, f32, readonly\n.access a\nst.global.b32 [r0], r1",
            "st.global.b32 writes memory, but buffer 'a' is read-only",
            3,
            9,
        ),
        (
            ".param a, buffer, u32, readonly\n.access a\natom.global.add.u32 r1, [r0], 1",
            "writes memory, but buffer 'a' is read-only",
            3,
            9,
        ),
        (".param a, buffer, f32\n.access a\n.access a\nld.global.b32 r1, [r0]", "a second '.access'", 4, 1),
        (".param a, buffer, f32\nret\n.access a", "must be followed by the instruction", 4, 1),
        (".param a, buffer, f32\n.access", "expected '.access PARAM'", 3, 1),
        (".param a, buffer, f32\n.access a, a", "expected '.access PARAM'", 3, 1),
    ],
)
def test_bad_access_and_readonly(src: str, message: str, line: int, col: int) -> None:
    d = errors(f".kernel k\n{src}\n.end\n")
    assert any(message in x.message for x in d), [x.render() for x in d]
    hit = next(x for x in d if message in x.message)
    assert (hit.span.line, hit.span.col) == (line, col), hit.render()


def test_dangling_access_before_the_next_kernel() -> None:
    d = errors(".kernel a\n.param p, buffer, f32\n.access p\n.kernel b\nret\n")
    assert [(x.span.line, x.message) for x in d] == [(3, "'.access' must be followed by the instruction it annotates")]
