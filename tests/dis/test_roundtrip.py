"""Disassembly is canonical and reassembles to identical bytes."""

from __future__ import annotations

import pytest
from hypothesis import given

import wavegpu as wg
from corpus import corpus_files
from strategies import instructions, programs
from wavegpu.dis import format_instruction
from wavegpu.isa import Instruction
from wavegpu.wbin import Kernel, Program
from wbin.wbin_cases import annotated_programs, corpus_images


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name)
def test_corpus_reassembles_byte_for_byte(path) -> None:  # type: ignore[no-untyped-def]
    data = wg.assemble(path.read_text(), str(path)).to_bytes()
    text = wg.disassemble(wg.Program.from_bytes(data))
    assert wg.assemble(text).to_bytes() == data
    assert wg.disassemble(wg.assemble(text)) == text  # disassembly is a fixed point


@given(programs())
def test_random_programs_reassemble_byte_for_byte(prog: Program) -> None:
    data = prog.to_bytes()
    text = wg.disassemble(prog)
    assert wg.assemble(text, "dis.wave").to_bytes() == data


@given(instructions())
def test_random_instructions_reassemble(inst: Instruction) -> None:
    k = Kernel("k", (inst,), 256, 8)
    text = wg.disassemble(k)
    assert wg.assemble(text).kernels[0].instructions == (inst,)


def test_canonical_spellings() -> None:
    text = wg.disassemble(
        wg.assemble(
            ".kernel k\nmov.f32 r1, 1.5\nadd.f32 r1, r1, 0f7FC00001\n@!p2 ld.global.f32 r2, [r1-4]\n"
            "@uniform if p1\nendif\nmov.u32 r3, %ctaid.y\nld.const.b32 r4, [0x100]\n.end"
        )
    )
    assert "mov.b32 r1, 0x3fc00000" in text
    assert "add.f32 r1, r1, 0f7FC00001" in text
    assert "@!p2 ld.global.b32 r2, [r1-4]" in text
    assert "@uniform if p1" in text
    assert "mov.b32 r3, %ctaid.y" in text
    assert "ld.const.b32 r4, [0x100]" in text


def test_format_instruction() -> None:
    p = wg.assemble(".kernel k\nfma.f32 r1, r2, -0.5, r3\nsetp.lt.s32 p0, r1, -7\n.end")
    assert [format_instruction(i) for i in p.kernels[0].instructions] == [
        "fma.f32 r1, r2, -0.5, r3",
        "setp.lt.s32 p0, r1, -7",
    ]


@given(annotated_programs())
def test_read_only_buffers_and_access_tables_reassemble_byte_for_byte(prog: Program) -> None:
    data = prog.to_bytes()
    text = wg.disassemble(wg.Program.from_bytes(data))
    assert wg.assemble(text, "dis.wave").to_bytes() == data


@pytest.mark.parametrize("name", sorted(corpus_images()))
def test_compiled_and_annotated_corpus_reassembles(name: str) -> None:
    data = corpus_images()[name]
    text = wg.disassemble(wg.Program.from_bytes(data))
    assert wg.assemble(text).to_bytes() == data
    assert wg.disassemble(wg.assemble(text)) == text


def test_access_and_readonly_spelling() -> None:
    src = (
        ".kernel k\n.param a, buffer, f32, readonly\n.param c, buffer, f32\n"
        '.loc "k.py" 3 5\n.access a\nld.global.b32 r2, [r0]\nif p0\n.access c\nst.global.b32 [r1], r2\nendif\n.end\n'
    )
    text = wg.disassemble(wg.assemble(src))
    assert text.splitlines() == [
        ".kernel k",
        ".registers 3",
        ".predicates 1",
        ".param a, buffer, f32, readonly",
        ".param c, buffer, f32",
        '    .loc "k.py" 3 5',
        "    .access a",
        "    ld.global.b32 r2, [r0]",
        "    if p0",
        "        .access c",
        "        st.global.b32 [r1], r2",
        "    endif",
        ".end",
    ]
