"""The .wbin container: round trips, strict validation with byte offsets, and fuzzing."""

from __future__ import annotations

import contextlib
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

import wavegpu as wg
from corpus import corpus_files
from strategies import programs
from wavegpu.wbin.format import HEADER, HEADER_FIELDS, KERNEL, KERNEL_FIELDS, _field_offset, seal

SRC = """
.kernel k
.param a, buffer, f32
.workgroup_size 64
    mov.u32 r1, %tid.x
    add.u32 r1, r1, r0
    ret
.end
"""


def good() -> bytes:
    return wg.assemble(SRC).to_bytes()


def hfield(name: str) -> int:
    return _field_offset(0, HEADER_FIELDS, HEADER, name)


def kfield(name: str) -> int:
    return _field_offset(HEADER.size, KERNEL_FIELDS, KERNEL, name)


def patch(data: bytes, off: int, fmt: str, value: int) -> bytes:
    """Change one field and recompute the checksum: what the strict reader sees behind it."""
    b = bytearray(data)
    struct.pack_into(fmt, b, off, value)
    return seal(b)


@given(programs())
def test_programs_round_trip(prog: wg.Program) -> None:
    data = prog.to_bytes()
    back = wg.Program.from_bytes(data)
    assert back == prog
    assert back.to_bytes() == data


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name)
def test_corpus_round_trips(path) -> None:  # type: ignore[no-untyped-def]
    prog = wg.assemble(path.read_text(), str(path))
    data = prog.to_bytes()
    assert wg.Program.from_bytes(data) == prog


def test_load_and_save(tmp_path) -> None:  # type: ignore[no-untyped-def]
    p = wg.assemble(SRC)
    f = tmp_path / "k.wbin"
    p.save(str(f))
    assert wg.load(f) == p
    with pytest.raises(wg.WbinError, match="cannot read"):
        wg.load(tmp_path / "missing.wbin")


@pytest.mark.parametrize(
    "mutate, message, offset",
    [
        (lambda d: b"WBIX" + d[4:], "bad magic", 0),
        (lambda d: d[:10], "truncated", None),
        (lambda d: d[:-4], "truncated", hfield("file_size")),
        (
            lambda d: patch(d, hfield("major"), "<H", 9),
            "unsupported format version",
            hfield("major"),
        ),
        (lambda d: patch(d, hfield("flags"), "<I", 0x80), "unknown flags", hfield("flags")),
        (
            lambda d: patch(d, hfield("kernel_off"), "<I", 4000),
            "outside the file",
            hfield("kernel_off"),
        ),
        (
            lambda d: patch(d, hfield("kernel_off"), "<I", 66),
            "not 4-byte aligned",
            hfield("kernel_off"),
        ),
        (
            lambda d: patch(d, hfield("code_size"), "<I", 4000),
            "outside the file",
            hfield("code_off"),
        ),
        (
            lambda d: patch(d, hfield("string_size"), "<I", 4000),
            "outside the file",
            hfield("string_off"),
        ),
        (lambda d: patch(d, hfield("kernel_count"), "<I", 0), "no kernels", hfield("kernel_count")),
        (lambda d: patch(d, kfield("name"), "<I", 999), "string offset", kfield("name")),
        (lambda d: patch(d, kfield("registers"), "<H", 300), "register count", kfield("registers")),
        (lambda d: patch(d, kfield("registers"), "<H", 1), "uses r1", None),
        (
            lambda d: patch(d, kfield("predicates"), "<B", 9),
            "predicate count",
            kfield("predicates"),
        ),
        (
            lambda d: patch(d, kfield("local_memory"), "<I", 1 << 20),
            "local memory",
            kfield("local_memory"),
        ),
        (lambda d: patch(d, kfield("wg_x"), "<I", 5000), "workgroup size hint", kfield("wg_x")),
        (lambda d: patch(d, kfield("isa_major"), "<H", 3), "ISA version", kfield("isa_major")),
        (
            lambda d: patch(d, kfield("code_size"), "<I", 400),
            "outside the code section",
            kfield("code_start"),
        ),
        (lambda d: patch(d, kfield("code_start"), "<I", 2), "aligned", kfield("code_start")),
        (lambda d: patch(d, kfield("reserved0"), "<B", 1), "reserved", kfield("reserved0")),
        (
            lambda d: patch(d, kfield("param_count"), "<I", 7),
            "parameter range",
            kfield("param_first"),
        ),
    ],
)
def test_malformed_files_name_the_offset(mutate, message, offset) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(wg.WbinError, match=message) as ei:
        wg.Program.from_bytes(mutate(good()))
    if offset is not None:
        assert ei.value.offset == offset
    else:
        assert ei.value.offset is not None
    assert "byte offset" in str(ei.value)


def test_unknown_opcode_names_its_offset() -> None:
    d = good()
    code_off = struct.unpack_from("<I", d, hfield("code_off"))[0]
    bad = bytearray(d)
    bad[code_off] = 0xFE  # opcode byte of the first instruction
    with pytest.raises(wg.WbinError, match="unknown opcode") as ei:
        wg.Program.from_bytes(seal(bad))
    assert ei.value.offset == code_off


def test_unbalanced_control_flow_is_rejected() -> None:
    from wavegpu.isa import Instruction, Pred, row
    from wavegpu.wbin import Kernel, Program

    k = Kernel("k", (Instruction(row("if"), (Pred(0),)),), 1, 1)
    data = Program((k,)).to_bytes()
    with pytest.raises(wg.WbinError, match="never closed"):
        wg.Program.from_bytes(data)


def test_param_fields_validated() -> None:
    d = good()
    poff = struct.unpack_from("<I", d, hfield("param_off"))[0]
    with pytest.raises(wg.WbinError, match="kind") as ei:
        wg.Program.from_bytes(patch(d, poff + 4, "<B", 7))
    assert ei.value.offset == poff + 4
    with pytest.raises(wg.WbinError, match="element type"):
        wg.Program.from_bytes(patch(d, poff + 5, "<B", 200))


@given(st.data())
def test_random_corruption_raises_only_wbin_error(data) -> None:  # type: ignore[no-untyped-def]
    base = bytearray(wg.assemble((corpus_files()[-1]).read_text()).to_bytes())
    n = data.draw(st.integers(1, 8))
    for _ in range(n):
        kind = data.draw(st.sampled_from(["flip", "byte", "truncate", "extend"]))
        if kind == "flip" and base:
            i = data.draw(st.integers(0, len(base) - 1))
            base[i] ^= 1 << data.draw(st.integers(0, 7))
        elif kind == "byte" and base:
            i = data.draw(st.integers(0, len(base) - 1))
            base[i] = data.draw(st.integers(0, 255))
        elif kind == "truncate":
            del base[data.draw(st.integers(0, len(base))) :]
        else:
            base += bytes(data.draw(st.lists(st.integers(0, 255), max_size=8)))
    try:
        prog = wg.Program.from_bytes(bytes(base))
    except wg.WbinError as e:
        assert isinstance(e, wg.WaveError)
        return
    # a corruption that still parses must describe itself exactly
    assert wg.Program.from_bytes(prog.to_bytes()) == prog


@given(st.binary(max_size=200))
def test_random_bytes_raise_only_wbin_error(blob: bytes) -> None:
    for data in (blob, b"WBIN" + blob):
        with contextlib.suppress(wg.WbinError):
            wg.Program.from_bytes(data)
