"""Encoding: every row, modifier, operand kind and immediate range encodes and decodes back."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from strategies import instructions
from wavegpu.encoding import decode, encode
from wavegpu.encoding.layout import AUX, BASE, OPW
from wavegpu.errors import EncodingError
from wavegpu.isa import ROWS, Imm, Instruction, Mem, Pair, Pred, Reg, row
from wavegpu.isa.instruction import Guard


def roundtrip(inst: Instruction) -> None:
    words = encode(inst)
    assert 1 <= len(words) <= 5
    assert all(0 <= w < 2**32 for w in words)
    back, n = decode(words)
    assert n == len(words)
    assert back == inst


@pytest.mark.parametrize("spec", ROWS, ids=lambda r: r.key)
def test_every_row_round_trips(spec) -> None:  # type: ignore[no-untyped-def]
    @given(instructions(spec))
    def check(inst: Instruction) -> None:
        roundtrip(inst)

    check()


@given(instructions())
def test_random_instructions_round_trip(inst: Instruction) -> None:
    roundtrip(inst)


def test_field_extremes() -> None:
    add = row("add.s32")
    for n in (0, 1, 127, 128, 254, 255):
        for sel in range(7):
            roundtrip(Instruction(add, (Reg(n, sel), Reg(255 - n), Reg(n))))
    for bits in (0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF):
        roundtrip(Instruction(add, (Reg(1), Reg(2), Imm(bits))))
        roundtrip(Instruction(add, (Reg(1), Imm(bits), Reg(2))))
    for p in range(8):
        for neg in (False, True):
            roundtrip(Instruction(add, (Reg(1), Reg(2), Reg(3)), Guard(p, neg)))
    ld = row("ld.global.b32")
    for off in (0, 1, -1, 2**31 - 1, -(2**31)):
        roundtrip(Instruction(ld, (Reg(3), Mem(4, off))))
        roundtrip(Instruction(ld, (Reg(3), Mem(None, off))))
    fma = row("fma.f64")
    for bits in (0, 1 << 63, (1 << 64) - 1):
        roundtrip(Instruction(fma, (Pair(0), Pair(254), Imm(bits, 64), Pair(2))))


def test_sizes_follow_the_layout() -> None:
    assert len(encode(Instruction(row("not.b32"), (Reg(1), Reg(2))))) == 1  # base word only
    assert len(encode(Instruction(row("add.s32"), (Reg(1), Reg(2), Imm(5))))) == 2  # base + immediate
    assert len(encode(Instruction(row("add.s32"), (Reg(1), Reg(2), Reg(3))))) == 2  # base + operand word
    assert len(encode(Instruction(row("ld.global.b32"), (Reg(1), Mem(2, 16))))) == 2
    assert len(encode(Instruction(row("bfi.b32"), (Reg(1), Reg(2), Reg(3), Reg(4), Reg(5))))) == 3
    assert len(encode(Instruction(row("add.f64"), (Pair(0), Pair(2), Imm(1, 64))))) == 3


def test_illegal_instructions_are_rejected() -> None:
    add = row("add.s32")
    bad = [
        Instruction(add, (Reg(1), Reg(2))),  # operand count
        Instruction(add, (Reg(256), Reg(2), Reg(3))),  # register range
        Instruction(add, (Reg(1), Imm(1), Imm(2))),  # two immediates
        Instruction(add, (Imm(1), Reg(2), Reg(3))),  # immediate destination
        Instruction(add, (Reg(1), Reg(2), Imm(1 << 32))),  # immediate range
        Instruction(add, (Reg(1), Reg(2), Reg(3)), Guard(8)),  # guard range
        Instruction(row("add.f64"), (Pair(1), Pair(2), Pair(4))),  # odd pair
        Instruction(row("barrier"), (), Guard(0)),  # unguardable
        Instruction(row("setp.lt.s32"), (Pred(8), Reg(1), Reg(2))),
        Instruction(row("st.global.b32"), (Mem(1, 4), Imm(3))),  # offset and immediate
    ]
    for inst in bad:
        with pytest.raises(EncodingError):
            encode(inst)


def test_decoder_rejects_unknown_and_non_canonical_words() -> None:
    with pytest.raises(EncodingError, match="unknown opcode"):
        decode([BASE["opcode"].put(0xFF)])
    add = row("not.b32")
    w0 = encode(Instruction(add, (Reg(1), Reg(2))))[0]
    # an operand word that is not needed is non-canonical
    with pytest.raises(EncodingError, match="non-canonical"):
        decode([w0 | BASE["O"].put(1), 0])
    # reserved bits
    with pytest.raises(EncodingError, match="reserved"):
        decode([w0 | BASE["O"].put(1), OPW["reserved"].put(1)])
    with pytest.raises(EncodingError, match="reserved"):
        decode([w0 | BASE["O"].put(1), OPW["A"].put(1), AUX["reserved"].put(3)])
    # truncations
    full = encode(Instruction(row("bfi.b32"), (Reg(1), Reg(2), Reg(3), Reg(4), Imm(9))))
    for cut in range(1, len(full)):
        with pytest.raises(EncodingError, match="truncated"):
            decode(full[:cut], 0, 100)
    # predicate field out of range
    setp = encode(Instruction(row("setp.lt.s32"), (Pred(1), Reg(1), Reg(2))))
    bad = [setp[0] | BASE["F0"].put(9), setp[1]]
    with pytest.raises(EncodingError):
        decode(bad)


@given(st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=6))
def test_decoder_never_crashes(words: list[int]) -> None:
    try:
        inst, n = decode(words)
    except EncodingError as e:
        assert e.offset is not None
        return
    assert encode(inst) == words[:n]


def test_immediate_flag_on_a_row_without_operands() -> None:
    """Once a TypeError from the decoder (a flipped I bit of `ret` in a compiled SGEMM)."""
    for key in ("ret", "barrier", "nop"):
        (w0,) = encode(Instruction(row(key), ()))
        with pytest.raises(EncodingError, match="takes no immediate") as ei:
            decode([w0 | BASE["I"].put(1), 0, 0], 0, 400)
        assert ei.value.offset == 400


@given(
    st.sampled_from(ROWS),
    st.integers(0, 3),
    st.integers(0, 0xFFFF),
    st.lists(st.integers(0, 2**32 - 1), max_size=5),
)
def test_decoder_never_crashes_on_damaged_valid_opcodes(spec, flags: int, fields: int, rest: list[int]) -> None:  # type: ignore[no-untyped-def]
    """Random operand fields and extension words behind every real opcode (random 32-bit words
    almost never hit one)."""
    w0 = (
        BASE["opcode"].put(spec.opcode)
        | BASE["mod"].put(spec.mod)
        | BASE["O"].put(flags & 1)
        | BASE["I"].put(flags >> 1)
        | fields << 16
    )
    words = [w0, *rest]
    try:
        inst, n = decode(words)
    except EncodingError as e:
        assert e.offset == 0
        return
    assert encode(inst) == words[:n]


@pytest.mark.parametrize("ext", [0, 0xFFFFFFFF, 0x00200000], ids=["zeros", "ones", "slot1"])
def test_every_opcode_with_every_flag_combination(ext: int) -> None:
    """Each real opcode with O and I in all four combinations: EncodingError or a canonical decode."""
    for spec in ROWS:
        for flags in range(4):
            w0 = BASE["opcode"].put(spec.opcode) | BASE["mod"].put(spec.mod) | BASE["O"].put(flags & 1)
            words = [w0 | BASE["I"].put(flags >> 1), ext, ext, ext, ext]
            try:
                inst, n = decode(words)
            except EncodingError as e:
                assert e.offset == 0
                continue
            assert encode(inst) == words[:n]
