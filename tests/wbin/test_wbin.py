"""The .wbin container: round trips, strict validation with byte offsets, and fuzzing."""

from __future__ import annotations

import contextlib
import dataclasses
import re
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

import wavegpu as wg
from corpus import corpus_files
from strategies import programs
from wavegpu.wbin import write
from wavegpu.wbin.format import (
    ACCESS,
    FLAG_ACCESSES,
    HEADER,
    HEADER_FIELDS,
    KERNEL,
    KERNEL_FIELDS,
    PARAM,
    PARAM_READONLY,
    _field_offset,
    seal,
)
from wbin.wbin_cases import annotated_programs

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


# ---- format 1.1: read-only buffers and the access table ----------------------------------------

ACCESS_SRC = """
.kernel k
.param a, buffer, f32, readonly
.param n, scalar, u32
.param c, buffer, f32
    mov.u32 r3, %tid.x
.access a
    ld.global.b32 r4, [r0]
    add.u32 r4, r4, r1
    ld.global.b32 r5, [r2]
.access c
    st.global.b32 [r2], r4
    ret
.end
"""


def annotated() -> bytes:
    return wg.assemble(ACCESS_SRC).to_bytes()


def section(data: bytes, name: str) -> int:
    return struct.unpack_from("<I", data, hfield(name))[0]


def test_readonly_and_accesses_round_trip() -> None:
    prog = wg.assemble(ACCESS_SRC)
    k = prog.kernels[0]
    assert [p.writable for p in k.params] == [False, True, True]
    assert k.accesses == (None, 0, None, None, 2, None)
    data = prog.to_bytes()
    assert struct.unpack_from("<HH", data, 4) == (1, 1)
    assert section(data, "access_count") == 2
    assert section(data, "flags") == FLAG_ACCESSES  # and no line table
    assert wg.Program.from_bytes(data) == prog


@given(annotated_programs())
def test_annotated_programs_round_trip(prog: wg.Program) -> None:
    data = prog.to_bytes()
    back = wg.Program.from_bytes(data)
    assert back == prog
    assert back.to_bytes() == data


def test_no_access_entries_means_no_access_table() -> None:
    prog = wg.assemble(SRC)
    k = prog.kernels[0]
    unknown = wg.Program((dataclasses.replace(k, accesses=(None,) * len(k.instructions)),))
    data = unknown.to_bytes()
    assert section(data, "access_count") == 0 and not section(data, "flags") & FLAG_ACCESSES
    assert wg.Program.from_bytes(data).kernels[0].accesses is None  # like the line table


def access_entry(data: bytes, i: int) -> int:
    return section(data, "access_off") + i * ACCESS.size


def pfield(data: bytes, i: int) -> int:
    return section(data, "param_off") + i * PARAM.size


@pytest.mark.parametrize(
    "entry, field, value, message",
    [
        (0, 4, 7, "parameter index 7 is out of range"),
        (0, 4, 1, "'n' is a scalar, not a buffer"),
        (1, 4, 0, "writes memory, but buffer 'a' is read-only"),
        (0, 0, 6, "not an increasing instruction boundary"),  # inside an instruction
        (0, 0, 8, "add.u32 does not access global memory"),
        (1, 0, 4, "not an increasing instruction boundary"),  # before the entry ahead of it
        (0, 0, 4000, "not an increasing instruction boundary"),  # beyond the kernel
    ],
)
def test_bad_access_entries_name_their_offset(entry: int, field: int, value: int, message: str) -> None:
    d = annotated()
    at = access_entry(d, entry)
    with pytest.raises(wg.WbinError, match=re.escape(message)) as ei:
        wg.Program.from_bytes(patch(d, at + field, "<I", value))
    assert ei.value.offset == at + field


@pytest.mark.parametrize(
    "mutate, message, field",
    [
        (lambda d: patch(d, kfield11("access_count"), "<I", 3), "access range out of the access table", "access_first"),
        (lambda d: patch(d, kfield11("access_first"), "<I", 1), "access range out of the access table", "access_first"),
        (lambda d: patch(d, hfield("flags"), "<I", 0), "access-table flag is clear", "flags"),
        (lambda d: patch(d, hfield("flags"), "<I", 3), "line-table flag is set", "flags"),
        (lambda d: patch(d, hfield("flags"), "<I", 6), "unknown flags", "flags"),
        (lambda d: patch(d, hfield("access_off"), "<I", 2), "not 4-byte aligned", "access_off"),
        (lambda d: patch(d, hfield("access_count"), "<I", 1 << 20), "outside the file", "access_off"),
    ],
)
def test_bad_access_table_fields(mutate, message, field) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(wg.WbinError, match=message) as ei:
        wg.Program.from_bytes(mutate(annotated()))
    assert ei.value.offset in (hfield(field), kfield11(field))


def test_access_index_without_entries_is_rejected() -> None:
    d = wg.assemble(SRC).to_bytes()
    with pytest.raises(wg.WbinError, match="access index set without access entries") as ei:
        wg.Program.from_bytes(patch(d, kfield11("access_first"), "<I", 1))
    assert ei.value.offset == kfield11("access_first")


def kfield11(name: str) -> int:
    return _field_offset(HEADER.size, KERNEL_FIELDS, KERNEL, name)


def test_param_flags_are_validated() -> None:
    d = annotated()
    with pytest.raises(wg.WbinError, match="only a buffer can be read-only") as ei:
        wg.Program.from_bytes(patch(d, pfield(d, 1) + 6, "<H", PARAM_READONLY))
    assert ei.value.offset == pfield(d, 1) + 6
    with pytest.raises(wg.WbinError, match="unknown flags 0x2") as ei:
        wg.Program.from_bytes(patch(d, pfield(d, 0) + 6, "<H", 2))
    assert ei.value.offset == pfield(d, 0) + 6
    # clearing the mark of 'a' is a valid (more cautious) file
    assert wg.Program.from_bytes(patch(d, pfield(d, 0) + 6, "<H", 0)).kernels[0].params[0].writable
    # a 1.0 file has no flags there: the field is reserved
    old = write(wg.assemble(SRC), (1, 0))
    b = bytearray(old)
    struct.pack_into("<H", b, struct.unpack_from("<I", old, 24)[0] + 6, PARAM_READONLY)
    with pytest.raises(wg.WbinError, match="reserved field is not zero"):
        wg.Program.from_bytes(bytes(b))


def test_param_names_are_unique_identifiers() -> None:
    d = annotated()
    name_of_n = struct.unpack_from("<I", d, pfield(d, 1))[0]
    with pytest.raises(wg.WbinError, match="parameter 'a' appears twice") as ei:
        wg.Program.from_bytes(patch(d, pfield(d, 2), "<I", struct.unpack_from("<I", d, pfield(d, 0))[0]))
    assert ei.value.offset == pfield(d, 2)
    strings = section(d, "string_off")
    b = bytearray(d)
    b[strings + name_of_n] = ord("-")
    with pytest.raises(wg.WbinError, match="invalid name '-'"):
        wg.Program.from_bytes(seal(b))


def test_writer_refuses_what_the_reader_would_reject() -> None:
    prog = wg.assemble(ACCESS_SRC)
    k = prog.kernels[0]

    def with_(**kw: object) -> wg.Program:
        return wg.Program((dataclasses.replace(k, **kw),))

    with pytest.raises(wg.WbinError, match="5 access entries for 6 instructions"):
        with_(accesses=k.accesses[:5]).to_bytes()  # type: ignore[index]
    with pytest.raises(wg.WbinError, match="instruction 1: parameter 'n' is a scalar"):
        with_(accesses=(None, 1, None, None, 2, None)).to_bytes()
    with pytest.raises(wg.WbinError, match=re.escape("instruction 0: mov.b32 does not access global memory")):
        with_(accesses=(0, 0, None, None, 2, None)).to_bytes()
    with pytest.raises(wg.WbinError, match=re.escape("st.global.b32 writes memory, but buffer 'a' is read-only")):
        with_(accesses=(None, 0, None, None, 0, None)).to_bytes()
    scalar_ro = tuple(dataclasses.replace(p, writable=p.kind == "buffer" and p.writable) for p in k.params)
    with pytest.raises(wg.WbinError, match="'n' is a scalar; only a buffer can be read-only"):
        with_(params=scalar_ro).to_bytes()
    with pytest.raises(wg.WbinError, match=re.escape("format 1.0 cannot mark parameter 'a' read-only")):
        write(prog, (1, 0))
    with pytest.raises(wg.WbinError, match=re.escape("format 1.0 has no access table")):
        write(with_(params=tuple(dataclasses.replace(p, writable=True) for p in k.params)), (1, 0))
    with pytest.raises(wg.WbinError, match=re.escape("cannot write format version 2.0")):
        write(prog, (2, 0))


def test_kernels_own_disjoint_code() -> None:
    two = wg.assemble(SRC + ".kernel other\n    nop\n    nop\n    ret\n.end\n").to_bytes()
    second = HEADER.size + KERNEL.size
    start = _field_offset(second, KERNEL_FIELDS, KERNEL, "code_start")
    with pytest.raises(wg.WbinError, match="kernel 1's code overlaps the code of kernel 0") as ei:
        wg.Program.from_bytes(patch(two, start, "<I", 4))
    assert ei.value.offset == start
    # an empty kernel may sit anywhere
    empty = patch(patch(two, start, "<I", 4), start + 4, "<I", 0)
    assert wg.Program.from_bytes(empty).kernels[1].instructions == ()
