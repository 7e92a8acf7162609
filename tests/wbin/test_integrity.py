"""Damage to a .wbin is always a WbinError naming a byte offset: the checksum catches every
single-bit flip of a format-1.1 file, and behind it (a recomputed checksum, or a 1.0 file) the
strict reader lets nothing but WbinError escape."""

from __future__ import annotations

import struct
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

import wavegpu as wg
from wavegpu.wbin import write
from wavegpu.wbin.format import CHECKSUM_OFFSET, HEADER, HEADER_FIELDS, HEADER_V10, _field_offset, checksum, seal
from wbin.wbin_cases import OLD_FILES, annotate, compiled, corpus_images


def hfield(name: str) -> int:
    return _field_offset(0, HEADER_FIELDS, HEADER, name)


# Where a single flipped bit of a 1.1 file is reported: the magic, the version, the header size
# (a 1.1 file whose minor version reads 0 has a 72-byte header where 1.0 has 60), the file
# size, and for every other byte the checksum.
FLIP_OFFSETS = {0, hfield("major"), hfield("header_size"), hfield("file_size"), CHECKSUM_OFFSET}


def load_outcome(data: bytes) -> wg.Program | wg.WbinError:
    """The program, or the WbinError; any other exception fails the test."""
    try:
        return wg.Program.from_bytes(data)
    except wg.WbinError as e:
        assert e.offset is not None, f"no byte offset: {e}"  # the reader's internal-error net was hit
        assert 0 <= e.offset <= len(data), e
        return e


def test_every_single_bit_flip_is_detected() -> None:
    images = corpus_images()
    assert "sgemm_tiled" in images and "sgemm_tiled+accesses" in images  # the compiled SGEMM
    start = time.perf_counter()
    flips = 0
    for name, data in images.items():
        assert wg.Program.from_bytes(data).kernels, name
        buf = bytearray(data)
        for i in range(len(buf)):
            for bit in range(8):
                buf[i] ^= 1 << bit
                try:
                    wg.Program.from_bytes(buf)
                except wg.WbinError as e:
                    if e.offset not in FLIP_OFFSETS:
                        pytest.fail(f"{name}: flip of bit {bit} at byte {i}: {e}")
                else:
                    pytest.fail(f"{name}: flip of bit {bit} at byte {i} was read as a valid program")
                buf[i] ^= 1 << bit
                flips += 1
    elapsed = time.perf_counter() - start
    assert flips == 8 * sum(map(len, images.values())) > 50_000
    print(f"{flips} single-bit flips of {len(images)} files, all detected, in {elapsed:.2f} s")


def test_flip_reports_name_the_field() -> None:
    data = corpus_images()["sgemm_tiled"]

    def flipped(byte: int, bit: int = 0) -> wg.WbinError:
        b = bytearray(data)
        b[byte] ^= 1 << bit
        with pytest.raises(wg.WbinError) as ei:
            wg.Program.from_bytes(bytes(b))
        return ei.value

    assert "bad magic" in flipped(0).reason
    assert "unsupported format version" in flipped(hfield("major")).reason
    assert "unsupported format version 1.3" in flipped(hfield("minor"), 1).reason
    # 1.1 -> 1.0: the version no longer matches the header's layout
    e = flipped(hfield("minor"), 0)
    assert e.offset == hfield("header_size") and "format-1.0 header has 60 bytes" in e.reason
    assert flipped(hfield("file_size"), 3).offset == hfield("file_size")
    for at in (hfield("flags"), CHECKSUM_OFFSET + 3, HEADER.size, len(data) // 2, len(data) - 1):
        e = flipped(at)
        assert e.offset == CHECKSUM_OFFSET and "checksum mismatch" in e.reason, e
    assert "byte offset 68 (0x44)" in str(e)


def test_a_1_0_file_is_not_read_as_1_1() -> None:
    old = OLD_FILES[0].read_bytes()
    b = bytearray(old)
    struct.pack_into("<H", b, hfield("minor"), 1)
    with pytest.raises(wg.WbinError, match=r"format-1\.1 header has 72 bytes") as ei:
        wg.Program.from_bytes(bytes(b))
    assert ei.value.offset == hfield("header_size")


def test_checksum_covers_the_whole_file() -> None:
    data = corpus_images()["reduce_sum"]
    (stored,) = struct.unpack_from("<I", data, CHECKSUM_OFFSET)
    assert stored == checksum(data) != 0
    assert seal(data) == data
    b = bytearray(data)
    b[-1] ^= 0x80
    assert seal(b) != bytes(b)
    with pytest.raises(wg.WbinError, match="checksum mismatch"):
        wg.Program.from_bytes(bytes(b))


@pytest.mark.parametrize("path", OLD_FILES, ids=lambda p: p.name)
def test_format_1_0_files_still_read(path) -> None:  # type: ignore[no-untyped-def]
    old = path.read_bytes()
    assert struct.unpack_from("<HH", old, 4) == (1, 0) and len(old) > HEADER_V10.size
    prog = wg.Program.from_bytes(old)
    assert all(p.writable for k in prog.kernels for p in k.params)  # 1.0 knows no read-only buffers
    assert all(k.accesses is None for k in prog.kernels)
    assert write(prog, (1, 0)) == old  # the 1.0 writer's bytes, exactly
    new = prog.to_bytes()
    assert struct.unpack_from("<HH", new, 4) == (1, 1)
    assert wg.Program.from_bytes(new) == prog


def test_format_1_0_golden_matches_its_source() -> None:
    from corpus import ASM_DIR

    (path,) = [p for p in OLD_FILES if p.name == "features-1.0.wbin"]
    src = (ASM_DIR / "features.wave").read_text()
    assert wg.Program.from_bytes(path.read_bytes()) == wg.assemble(src, "features.wave")
    sgemm = wg.Program.from_bytes((path.parent / "sgemm_tiled-1.0.wbin").read_bytes())
    assert sgemm.kernels[0].name == "sgemm_tiled" and sgemm.kernels[0].lines is not None


@pytest.mark.parametrize("path", OLD_FILES, ids=lambda p: p.name)
def test_single_bit_flips_of_1_0_files_raise_only_wbin_error(path) -> None:  # type: ignore[no-untyped-def]
    """1.0 has no checksum: a flip may load as another program, but never escapes as a crash
    (a flip at byte 1248 of the SGEMM once raised TypeError from the decoder)."""
    data = path.read_bytes()
    buf = bytearray(data)
    for i in range(len(buf)):
        for bit in range(8):
            buf[i] ^= 1 << bit
            load_outcome(bytes(buf))
            buf[i] ^= 1 << bit


def test_single_bit_flips_behind_a_recomputed_checksum() -> None:
    """Every flip of a compiled SAXPY with its checksum made to match: the strict reader alone."""
    data = corpus_images()["saxpy+accesses"]
    buf = bytearray(data)
    loaded = 0
    for i in range(len(buf)):
        if CHECKSUM_OFFSET <= i < CHECKSUM_OFFSET + 4:
            continue
        for bit in range(8):
            buf[i] ^= 1 << bit
            out = load_outcome(seal(buf))
            if isinstance(out, wg.Program):  # then it must describe itself exactly
                assert wg.Program.from_bytes(out.to_bytes()) == out
                loaded += 1
            buf[i] ^= 1 << bit
    assert loaded < 8 * len(data) // 2


DAMAGE = st.lists(
    st.tuples(st.sampled_from(["flip", "byte", "word", "truncate", "extend", "zero"]), st.integers(0, 1 << 16)),
    min_size=1,
    max_size=8,
)


def damage(data: bytes, steps: list[tuple[str, int]], extra: bytes) -> bytes:
    b = bytearray(data)
    for kind, n in steps:
        if not b:
            break
        i = n % len(b)
        if kind == "flip":
            b[i] ^= 1 << (n % 8)
        elif kind == "byte":
            b[i] = n & 0xFF
        elif kind == "word":
            b[i & ~3 : (i & ~3) + 4] = (n * 2654435761 & 0xFFFFFFFF).to_bytes(4, "little")
        elif kind == "truncate":
            del b[i:]
        elif kind == "extend":
            b += extra
        else:
            b[i : i + 16] = bytes(len(b[i : i + 16]))
    return bytes(b)


@given(st.sampled_from(sorted(corpus_images())), DAMAGE, st.binary(max_size=8))
def test_random_damage_is_detected(name: str, steps, extra: bytes) -> None:  # type: ignore[no-untyped-def]
    data = corpus_images()[name]
    bad = damage(data, steps, extra)
    out = load_outcome(bad)
    if isinstance(out, wg.Program):
        assert bad == data  # only damage that undoes itself loads


@given(st.sampled_from(sorted(corpus_images())), DAMAGE, st.binary(max_size=8))
def test_random_damage_behind_a_recomputed_checksum(name: str, steps, extra: bytes) -> None:  # type: ignore[no-untyped-def]
    bad = damage(corpus_images()[name], steps, extra)
    if len(bad) >= HEADER.size:
        bad = seal(bad)
    out = load_outcome(bad)
    if isinstance(out, wg.Program):
        assert wg.Program.from_bytes(out.to_bytes()) == out


@given(st.sampled_from(OLD_FILES), DAMAGE, st.binary(max_size=8))
def test_random_damage_to_1_0_files(path, steps, extra: bytes) -> None:  # type: ignore[no-untyped-def]
    out = load_outcome(damage(path.read_bytes(), steps, extra))
    if isinstance(out, wg.Program):
        assert wg.Program.from_bytes(out.to_bytes()) == out


@given(st.binary(min_size=0, max_size=400))
def test_arbitrary_bytes_after_a_valid_header(tail: bytes) -> None:
    """A plausible 1.1 header (right sizes, sealed) over random tables."""
    head = bytearray(corpus_images()["saxpy"][: HEADER.size])
    b = head + tail
    struct.pack_into("<I", b, hfield("file_size"), len(b))
    load_outcome(seal(b))


def test_compiled_sgemm_round_trips() -> None:
    prog = annotate(compiled("sgemm_tiled"))
    assert prog.kernels[0].accesses is not None
    assert wg.Program.from_bytes(prog.to_bytes()) == prog
