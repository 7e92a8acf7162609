"""The .wbin container: writer and strict reader (every problem is a WbinError with its offset).

Layout (little-endian; every section 4-byte aligned; see docs/wbin.md):
header | kernel table | parameter table | line table | access table | string table | code

Format 1.1 (written) adds the access table, read-only parameter flags and a CRC-32 of the whole
file; format 1.0 (no access table, no checksum) is still read.
"""

from __future__ import annotations

import itertools
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass

from ..encoding import decode_all, encode_bytes
from ..errors import EncodingError, WbinError
from ..isa.capabilities import EMULATOR
from ..isa.instruction import Instruction
from ..isa.registers import NUM_GPRS, NUM_PREDS
from ..isa.structure import check_structure, footprint
from ..isa.types import DataType
from .checks import access_problem, is_identifier, readonly_problem
from .program import Kernel, Param, Program, SourceLoc

MAGIC = b"WBIN"
FORMAT_VERSION = (1, 1)  # what `write` produces
READABLE_VERSIONS = ((1, 0), (1, 1))
FLAG_LINES = 1  # header flags: a line table is present
FLAG_ACCESSES = 2  # (1.1) an access table is present
PARAM_READONLY = 1  # parameter flags (1.1): the kernel never writes this buffer

# name, struct format, field names: the one description of each record.
HEADER_V10_FIELDS = (
    "magic",
    "major",
    "minor",
    "flags",
    "header_size",
    "kernel_count",
    "kernel_off",
    "param_off",
    "param_count",
    "line_off",
    "line_count",
    "string_off",
    "string_size",
    "code_off",
    "code_size",
    "file_size",
)
HEADER_V10 = struct.Struct("<4sHHIIIIIIIIIIIII")
# 1.1: the 1.0 header, then the access table and the checksum.
HEADER_FIELDS = (*HEADER_V10_FIELDS, "access_off", "access_count", "checksum")
HEADER = struct.Struct(HEADER_V10.format + "III")
KERNEL_V10_FIELDS = (
    "name",
    "code_start",
    "code_size",
    "registers",
    "predicates",
    "reserved0",
    "local_memory",
    "wg_x",
    "wg_y",
    "wg_z",
    "isa_major",
    "isa_minor",
    "param_first",
    "param_count",
    "line_first",
    "line_count",
    "max_global_size",  # 1.1: Kernel.max_global_size (0: none); 1.0: reserved, 0
)
KERNEL_V10 = struct.Struct("<IIIHBBIIIIHHIIIII")
KERNEL_FIELDS = (*KERNEL_V10_FIELDS, "access_first", "access_count")
KERNEL = struct.Struct(KERNEL_V10.format + "II")
PARAM = struct.Struct("<IBBH")
PARAM_FIELDS = ("name", "kind", "dtype", "flags")  # flags: 1.0 reserved (0); 1.1 bit 0 read-only
LINE = struct.Struct("<IIII")
LINE_FIELDS = ("pc", "file", "line", "col")
ACCESS = struct.Struct("<II")
ACCESS_FIELDS = ("pc", "param")

PARAM_KINDS = ("buffer", "scalar")
MAX_WORKGROUP = EMULATOR.constants["MAX_WORKGROUP_SIZE"]
MAX_LOCAL = EMULATOR.constants["LOCAL_MEMORY_SIZE"]


@dataclass(frozen=True)
class _Layout:
    """The record shapes of one format version."""

    version: tuple[int, int]
    header: struct.Struct
    header_fields: tuple[str, ...]
    kernel: struct.Struct
    kernel_fields: tuple[str, ...]

    @property
    def v11(self) -> bool:
        return self.version >= (1, 1)


LAYOUTS = {
    (1, 0): _Layout((1, 0), HEADER_V10, HEADER_V10_FIELDS, KERNEL_V10, KERNEL_V10_FIELDS),
    (1, 1): _Layout((1, 1), HEADER, HEADER_FIELDS, KERNEL, KERNEL_FIELDS),
}


def _field_offset(base: int, st_fields: tuple[str, ...], st: struct.Struct, name: str) -> int:
    """Byte offset of one field inside a packed record (for error messages)."""
    fmt = st.format[1:] if isinstance(st.format, str) else st.format.decode()[1:]
    off = base
    i = 0
    for ch in fmt:
        if ch.isdigit():
            continue
        if st_fields[i] == name:
            return off
        off += struct.calcsize("<" + ch) if ch != "s" else 4
        i += 1
    return base


CHECKSUM_OFFSET = _field_offset(0, HEADER_FIELDS, HEADER, "checksum")


def checksum(data: bytes | bytearray) -> int:
    """CRC-32 (zlib) of a 1.1 image, its checksum field read as zero."""
    crc = zlib.crc32(data[:CHECKSUM_OFFSET])
    crc = zlib.crc32(b"\0\0\0\0", crc)
    return zlib.crc32(data[CHECKSUM_OFFSET + 4 :], crc)


def seal(data: bytes | bytearray) -> bytes:
    """The image with its checksum field set to its checksum (for tools that patch a file)."""
    b = bytearray(data)
    struct.pack_into("<I", b, CHECKSUM_OFFSET, checksum(b))
    return bytes(b)


def _align4(n: int) -> int:
    return (n + 3) & ~3


class _Strings:
    def __init__(self) -> None:
        self.data = bytearray()
        self.index: dict[str, int] = {}

    def add(self, s: str) -> int:
        if s not in self.index:
            self.index[s] = len(self.data)
            self.data += s.encode("utf-8") + b"\0"
        return self.index[s]


def write(prog: Program, version: tuple[int, int] = FORMAT_VERSION) -> bytes:
    """The .wbin image of a program (format 1.1; `version=(1, 0)` for readers of 1.0)."""
    if version not in LAYOUTS:
        raise WbinError(f"cannot write format version {version[0]}.{version[1]}")
    lay = LAYOUTS[version]
    strings = _Strings()
    code = bytearray()
    kernels = bytearray()
    params = bytearray()
    lines = bytearray()
    accesses = bytearray()
    nparams = nlines = naccesses = 0
    for k in prog.kernels:
        start = len(code)
        pcs = []
        for inst in k.instructions:
            pcs.append(len(code) - start)
            try:
                code += encode_bytes(inst)
            except EncodingError as e:
                raise WbinError(f"kernel {k.name!r}: cannot encode {inst.spec.name}: {e.reason}") from None
        p_first = nparams
        for p in k.params:
            problem = readonly_problem(p)
            if problem:
                raise WbinError(f"kernel {k.name!r}: {problem}")
            if not p.writable and not lay.v11:
                raise WbinError(f"kernel {k.name!r}: format 1.0 cannot mark parameter {p.name!r} read-only")
            flags = 0 if p.writable else PARAM_READONLY
            params += PARAM.pack(strings.add(p.name), PARAM_KINDS.index(p.kind), p.dtype.code, flags)
            nparams += 1
        l_first = nlines
        if k.lines is not None:
            for pc, loc in zip(pcs, k.lines):
                if loc is None:
                    continue
                lines += LINE.pack(pc, strings.add(loc.file), loc.line, loc.col)
                nlines += 1
        a_first = naccesses
        if k.accesses is not None:
            if len(k.accesses) != len(k.instructions):
                raise WbinError(
                    f"kernel {k.name!r}: {len(k.accesses)} access entries for {len(k.instructions)} instructions"
                )
            for i, (pc, a) in enumerate(zip(pcs, k.accesses)):
                if a is None:
                    continue
                problem = access_problem(k.instructions[i], a, k.params)
                if problem:
                    raise WbinError(f"kernel {k.name!r}: instruction {i}: {problem}")
                if not lay.v11:
                    raise WbinError(f"kernel {k.name!r}: format 1.0 has no access table")
                accesses += ACCESS.pack(pc, a)
                naccesses += 1
        wg = k.workgroup_size or (0, 0, 0)
        limit = k.max_global_size or 0
        if not 0 <= limit <= 0xFFFFFFFF:
            raise WbinError(f"kernel {k.name!r}: max_global_size {limit} does not fit 32 bits")
        if limit and not lay.v11:
            raise WbinError(f"kernel {k.name!r}: format 1.0 cannot record a largest global size")
        entry = [
            strings.add(k.name),
            start,
            len(code) - start,
            k.registers,
            k.predicates,
            0,
            k.local_memory,
            *wg,
            *k.isa_version,
            p_first if k.params else 0,
            len(k.params),
            l_first if nlines > l_first else 0,
            nlines - l_first,
            limit,
        ]
        if lay.v11:
            entry += [a_first if naccesses > a_first else 0, naccesses - a_first]
        kernels += lay.kernel.pack(*entry)
    header_size = lay.header.size
    kernel_off = header_size
    param_off = kernel_off + len(kernels)
    line_off = param_off + len(params)
    access_off = line_off + len(lines)
    string_off = access_off + len(accesses)
    code_off = _align4(string_off + len(strings.data))
    file_size = code_off + len(code)
    flags = (FLAG_LINES if nlines else 0) | (FLAG_ACCESSES if naccesses else 0)
    fields = [
        MAGIC,
        *version,
        flags,
        header_size,
        len(prog.kernels),
        kernel_off,
        param_off,
        nparams,
        line_off,
        nlines,
        string_off,
        len(strings.data),
        code_off,
        len(code),
        file_size,
    ]
    if lay.v11:
        fields += [access_off, naccesses, 0]
    pad = b"\0" * (code_off - string_off - len(strings.data))
    image = lay.header.pack(*fields) + kernels + params + lines + accesses + strings.data + pad + code
    return seal(image) if lay.v11 else bytes(image)


@dataclass
class _Reader:
    data: bytes
    path: str | None

    def fail(self, reason: str, offset: int | None) -> WbinError:
        return WbinError(reason, offset, self.path)

    def unpack(self, st: struct.Struct, names: tuple[str, ...], off: int, what: str) -> dict[str, int]:
        if off < 0 or off + st.size > len(self.data):
            raise self.fail(
                f"truncated file: {what} needs {st.size} bytes at offset {off}",
                min(off, len(self.data)),
            )
        return dict(zip(names, st.unpack_from(self.data, off)))

    def section(self, name: str, off: int, size: int, field_off: int, header_size: int) -> None:
        if off % 4 and name != "string table":
            raise self.fail(f"{name} offset {off} is not 4-byte aligned", field_off)
        if off < header_size or off + size > len(self.data):
            raise self.fail(
                f"{name} [{off}, {off + size}) lies outside the file (size {len(self.data)})",
                field_off,
            )

    def string(self, h: dict[str, int], ref: int, field_off: int, what: str) -> str:
        if ref >= h["string_size"]:
            raise self.fail(
                f"{what}: string offset {ref} out of range (table size {h['string_size']})",
                field_off,
            )
        start = h["string_off"] + ref
        end = self.data.find(b"\0", start, h["string_off"] + h["string_size"])
        if end < 0:
            raise self.fail(f"{what}: string is not NUL-terminated inside the string table", start)
        try:
            return self.data[start:end].decode("utf-8")
        except UnicodeDecodeError as e:
            raise self.fail(f"{what}: string is not valid UTF-8", start + e.start) from None


def read(data: bytes | bytearray | memoryview, path: str | None = None) -> Program:
    """Parse and validate a .wbin image; any problem raises WbinError naming the byte offset."""
    image = bytes(data)
    try:
        return _read(image, path)
    except WbinError:
        raise
    except Exception as e:  # a reader bug must still not escape as anything but WbinError
        raise WbinError(f"malformed file (internal reader error {type(e).__name__}: {e})", None, path) from e


def _read(data: bytes, path: str | None) -> Program:
    r = _Reader(data, path)
    lay, h = _read_header(r)
    _check_sections(r, lay, h)
    _check_code_ranges(r, lay, h)
    names: set[str] = set()
    return Program(tuple(_read_kernel(r, lay, h, ki, names) for ki in range(h["kernel_count"])))


def _header_offset(lay: _Layout, name: str) -> int:
    return _field_offset(0, lay.header_fields, lay.header, name)


def _read_header(r: _Reader) -> tuple[_Layout, dict[str, int]]:
    """Magic, version, the version's header; its sizes, checksum (1.1) and flags."""
    data = r.data
    if len(data) < 4 or data[:4] != MAGIC:
        raise r.fail(f"bad magic {data[:4]!r}, expected {MAGIC!r} (not a .wbin file)", 0)
    if len(data) < 8:
        raise r.fail("truncated file: no format version", len(data))
    version = struct.unpack_from("<HH", data, 4)
    lay = LAYOUTS.get(version)
    if lay is None:
        readable = ", ".join(f"{a}.{b}" for a, b in READABLE_VERSIONS)
        raise r.fail(f"unsupported format version {version[0]}.{version[1]} (this reader: {readable})", 4)
    h = r.unpack(lay.header, lay.header_fields, 0, f"the format-{version[0]}.{version[1]} header")
    # Header size and file size tie the version to its layout (a 1.1 file whose version reads
    # 1.0, or the reverse, fails here); the checksum then covers every other byte.
    if h["header_size"] != lay.header.size:
        raise r.fail(
            f"header size {h['header_size']}, but a format-{version[0]}.{version[1]} header has {lay.header.size} bytes",
            _header_offset(lay, "header_size"),
        )
    if h["file_size"] != len(data):
        raise r.fail(
            f"header says the file has {h['file_size']} bytes, but it has {len(data)}"
            + (" (truncated)" if len(data) < h["file_size"] else ""),
            _header_offset(lay, "file_size"),
        )
    if lay.v11:
        crc = checksum(data)
        if h["checksum"] != crc:
            raise r.fail(
                f"checksum mismatch: the file records CRC-32 0x{h['checksum']:08x}, its bytes give "
                f"0x{crc:08x} (the file is damaged)",
                _header_offset(lay, "checksum"),
            )
    known = FLAG_LINES | (FLAG_ACCESSES if lay.v11 else 0)
    if h["flags"] & ~known:
        raise r.fail(f"unknown flags 0x{h['flags']:x}", _header_offset(lay, "flags"))
    return lay, h


def _check_sections(r: _Reader, lay: _Layout, h: dict[str, int]) -> None:
    """Every section inside the file, after the header, aligned and disjoint; the counts agree
    with the flags; at least one kernel."""

    def hoff(name: str) -> int:
        return _header_offset(lay, name)

    secs = [
        ("kernel table", h["kernel_off"], h["kernel_count"] * lay.kernel.size, hoff("kernel_off")),
        ("parameter table", h["param_off"], h["param_count"] * PARAM.size, hoff("param_off")),
        ("line table", h["line_off"], h["line_count"] * LINE.size, hoff("line_off")),
        ("string table", h["string_off"], h["string_size"], hoff("string_off")),
        ("code", h["code_off"], h["code_size"], hoff("code_off")),
    ]
    if lay.v11:
        secs.insert(3, ("access table", h["access_off"], h["access_count"] * ACCESS.size, hoff("access_off")))
    for name, off, size, fo in secs:
        r.section(name, off, size, fo, lay.header.size)
    spans = sorted((off, off + size, name, fo) for name, off, size, fo in secs if size)
    for (_a0, a1, an, _), (b0, _b1, bn, bfo) in itertools.pairwise(spans):
        if b0 < a1:
            raise r.fail(f"{bn} overlaps the {an}", bfo)
    if h["code_size"] % 4:
        raise r.fail("code size is not a multiple of 4", hoff("code_size"))
    if lay.v11:
        for flag, count, what in ((FLAG_LINES, "line_count", "line"), (FLAG_ACCESSES, "access_count", "access")):
            if bool(h["flags"] & flag) != bool(h[count]):
                state = "set" if h["flags"] & flag else "clear"
                raise r.fail(
                    f"the {what}-table flag is {state} but the file has {h[count]} {what} entries", hoff("flags")
                )
    elif not h["flags"] & FLAG_LINES and h["line_count"]:
        raise r.fail("line entries present but the line-table flag is clear", hoff("flags"))
    if h["kernel_count"] == 0:
        raise r.fail("the file has no kernels", hoff("kernel_count"))


def _check_code_ranges(r: _Reader, lay: _Layout, h: dict[str, int]) -> None:
    """Kernels own disjoint code (so the work of reading a file grows with its size, not with
    the number of kernels times the code each one claims)."""
    ranges = []
    for ki in range(h["kernel_count"]):
        at = _field_offset(h["kernel_off"] + ki * lay.kernel.size, lay.kernel_fields, lay.kernel, "code_start")
        start, size = struct.unpack_from("<II", r.data, at)
        if size:
            ranges.append((start, start + size, ki, at))
    ranges.sort()
    for (_, a_end, ka, _), (b_start, _, kb, b_field) in itertools.pairwise(ranges):
        if b_start < a_end:
            raise r.fail(f"kernel {kb}'s code overlaps the code of kernel {ka}", b_field)


def _read_kernel(r: _Reader, lay: _Layout, h: dict[str, int], ki: int, names: set[str]) -> Kernel:
    """Kernel entry `ki`: its fields, parameters, code, and line and access entries."""
    base = h["kernel_off"] + ki * lay.kernel.size
    k = r.unpack(lay.kernel, lay.kernel_fields, base, f"kernel entry {ki}")

    def koff(name: str) -> int:
        return _field_offset(base, lay.kernel_fields, lay.kernel, name)

    name = _kernel_name(r, h, k, ki, names, koff)
    wgs = _check_kernel_fields(r, lay, h, k, name, koff)
    params = _read_params(r, lay, h, k, name, koff)
    insts, pcs = _read_code(r, h, k, name)
    index = {pc: i for i, pc in enumerate(pcs)}
    lines = _read_lines(r, h, k, name, len(insts), index, koff)
    accesses = _read_accesses(r, lay, h, k, name, insts, index, params, koff) if lay.v11 else None
    return Kernel(
        name,
        insts,
        k["registers"],
        k["predicates"],
        k["local_memory"],
        wgs,
        params,
        (k["isa_major"], k["isa_minor"]),
        lines,
        accesses,
        k["max_global_size"] or None,
    )


def _kernel_name(
    r: _Reader, h: dict[str, int], k: dict[str, int], ki: int, names: set[str], koff: Callable[[str], int]
) -> str:
    """The kernel's name: a valid identifier, not seen before in the file (added to `names`)."""
    name = r.string(h, k["name"], koff("name"), f"kernel {ki} name")
    if not is_identifier(name):
        raise r.fail(f"kernel {ki}: invalid name {name!r}", koff("name"))
    if name in names:
        raise r.fail(f"duplicate kernel name {name!r}", koff("name"))
    names.add(name)
    return name


def _check_kernel_fields(
    r: _Reader, lay: _Layout, h: dict[str, int], k: dict[str, int], name: str, koff: Callable[[str], int]
) -> tuple[int, int, int] | None:
    """Reserved fields, the code range, resource limits and the ISA version; returns the
    workgroup size hint (None when absent)."""
    if k["reserved0"]:
        raise r.fail(f"kernel {name!r}: reserved field is not zero", koff("reserved0"))
    if k["max_global_size"] and not lay.v11:  # 1.1: the largest global size (any value; 0: none)
        raise r.fail(f"kernel {name!r}: reserved field is not zero", koff("max_global_size"))
    if k["code_start"] % 4 or k["code_size"] % 4:
        raise r.fail(f"kernel {name!r}: code range is not 4-byte aligned", koff("code_start"))
    if k["code_start"] + k["code_size"] > h["code_size"]:
        raise r.fail(
            f"kernel {name!r}: code range [{k['code_start']}, {k['code_start'] + k['code_size']}) "
            f"outside the code section (size {h['code_size']})",
            koff("code_start"),
        )
    if k["registers"] > NUM_GPRS:
        raise r.fail(f"kernel {name!r}: register count {k['registers']} exceeds {NUM_GPRS}", koff("registers"))
    if k["predicates"] > NUM_PREDS:
        raise r.fail(f"kernel {name!r}: predicate count {k['predicates']} exceeds {NUM_PREDS}", koff("predicates"))
    if k["local_memory"] > MAX_LOCAL:
        raise r.fail(
            f"kernel {name!r}: local memory {k['local_memory']} exceeds {MAX_LOCAL} bytes", koff("local_memory")
        )
    wg = (k["wg_x"], k["wg_y"], k["wg_z"])
    wgs: tuple[int, int, int] | None = None
    if wg != (0, 0, 0):
        if min(wg) < 1 or wg[0] * wg[1] * wg[2] > MAX_WORKGROUP:
            raise r.fail(
                f"kernel {name!r}: workgroup size hint {wg} invalid (each >= 1, product <= {MAX_WORKGROUP})",
                koff("wg_x"),
            )
        wgs = wg
    if (k["isa_major"], k["isa_minor"]) != (0, 1):
        raise r.fail(f"kernel {name!r}: unsupported ISA version {k['isa_major']}.{k['isa_minor']}", koff("isa_major"))
    return wgs


def _read_code(
    r: _Reader, h: dict[str, int], k: dict[str, int], name: str
) -> tuple[tuple[Instruction, ...], list[int]]:
    """The kernel's instructions and their pcs: decoded, structured, within its declared registers
    and predicates."""
    cstart = h["code_off"] + k["code_start"]
    try:
        decoded = decode_all(r.data[cstart : cstart + k["code_size"]], cstart)
    except EncodingError as e:
        raise r.fail(f"kernel {name!r}: {e.reason}", e.offset) from None
    insts = tuple(inst for _, inst in decoded)
    pcs = [pc for pc, _ in decoded]
    for issue in check_structure(insts):
        raise r.fail(f"kernel {name!r}: {issue.message}", cstart + pcs[issue.index])
    for pc, inst in decoded:
        g, pr = footprint(inst)
        if g > k["registers"]:
            raise r.fail(
                f"kernel {name!r}: {inst.spec.name} uses r{g - 1} but the kernel declares {k['registers']} registers",
                cstart + pc,
            )
        if pr > k["predicates"]:
            raise r.fail(
                f"kernel {name!r}: {inst.spec.name} uses p{pr - 1} but the kernel declares "
                f"{k['predicates']} predicates",
                cstart + pc,
            )
    return insts, pcs


def _read_lines(
    r: _Reader,
    h: dict[str, int],
    k: dict[str, int],
    name: str,
    count: int,
    index: dict[int, int],
    koff: Callable[[str], int],
) -> tuple[SourceLoc | None, ...] | None:
    """The kernel's line entries: at increasing instruction boundaries, inside the line table."""
    if not k["line_count"]:
        if k["line_first"]:
            raise r.fail(f"kernel {name!r}: line index set without line entries", koff("line_first"))
        return None
    if k["line_first"] + k["line_count"] > h["line_count"]:
        raise r.fail(f"kernel {name!r}: line range out of the line table", koff("line_first"))
    locs: list[SourceLoc | None] = [None] * count
    last = -1
    for li in range(k["line_first"], k["line_first"] + k["line_count"]):
        lbase = h["line_off"] + li * LINE.size
        e = r.unpack(LINE, LINE_FIELDS, lbase, f"line entry {li}")
        if e["pc"] not in index or e["pc"] <= last:
            raise r.fail(
                f"line entry {li}: pc {e['pc']} is not an increasing instruction boundary of kernel {name!r}",
                lbase,
            )
        last = e["pc"]
        fname = r.string(h, e["file"], lbase + 4, f"line entry {li} file")
        locs[index[e["pc"]]] = SourceLoc(fname, e["line"], e["col"])
    return tuple(locs)


def _read_accesses(
    r: _Reader,
    lay: _Layout,
    h: dict[str, int],
    k: dict[str, int],
    name: str,
    insts: tuple[Instruction, ...],
    index: dict[int, int],
    params: tuple[Param, ...],
    koff: Callable[[str], int],
) -> tuple[int | None, ...] | None:
    """The kernel's access entries (format 1.1): at increasing instruction boundaries, each
    naming a buffer parameter that its global access may address."""
    if not k["access_count"]:
        if k["access_first"]:
            raise r.fail(f"kernel {name!r}: access index set without access entries", koff("access_first"))
        return None
    if k["access_first"] + k["access_count"] > h["access_count"]:
        raise r.fail(f"kernel {name!r}: access range out of the access table", koff("access_first"))
    which: list[int | None] = [None] * len(insts)
    last = -1
    for ai in range(k["access_first"], k["access_first"] + k["access_count"]):
        abase = h["access_off"] + ai * ACCESS.size
        e = r.unpack(ACCESS, ACCESS_FIELDS, abase, f"access entry {ai}")
        if e["pc"] not in index or e["pc"] <= last:
            raise r.fail(
                f"access entry {ai}: pc {e['pc']} is not an increasing instruction boundary of kernel {name!r}",
                abase,
            )
        last = e["pc"]
        inst = insts[index[e["pc"]]]
        problem = access_problem(inst, e["param"], params)
        if problem:
            at = abase + 4 if inst.spec.is_global_access else abase
            raise r.fail(f"access entry {ai} (kernel {name!r}, pc {e['pc']}): {problem}", at)
        which[index[e["pc"]]] = e["param"]
    return tuple(which)


def _read_params(
    r: _Reader, lay: _Layout, h: dict[str, int], k: dict[str, int], name: str, koff: Callable[[str], int]
) -> tuple[Param, ...]:
    if k["param_first"] + k["param_count"] > h["param_count"]:
        raise r.fail(f"kernel {name!r}: parameter range out of the parameter table", koff("param_first"))
    if k["param_count"] > k["registers"]:
        raise r.fail(
            f"kernel {name!r}: {k['param_count']} parameters need at least as many registers",
            koff("param_count"),
        )
    params: list[Param] = []
    for pi in range(k["param_first"], k["param_first"] + k["param_count"]):
        pbase = h["param_off"] + pi * PARAM.size
        p = r.unpack(PARAM, PARAM_FIELDS, pbase, f"parameter {pi}")
        pname = r.string(h, p["name"], pbase, f"parameter {pi} name")
        if not is_identifier(pname):
            raise r.fail(f"parameter {pi}: invalid name {pname!r}", pbase)
        if any(q.name == pname for q in params):
            raise r.fail(f"kernel {name!r}: parameter {pname!r} appears twice", pbase)
        if p["kind"] >= len(PARAM_KINDS):
            raise r.fail(f"parameter {pname!r}: kind {p['kind']} is neither buffer (0) nor scalar (1)", pbase + 4)
        try:
            dt = DataType.from_code(p["dtype"])
        except KeyError:
            raise r.fail(f"parameter {pname!r}: unknown element type code {p['dtype']}", pbase + 5) from None
        if not lay.v11 and p["flags"]:
            raise r.fail(f"parameter {pname!r}: reserved field is not zero", pbase + 6)
        if p["flags"] & ~PARAM_READONLY:
            raise r.fail(f"parameter {pname!r}: unknown flags 0x{p['flags']:x}", pbase + 6)
        param = Param(pname, PARAM_KINDS[p["kind"]], dt, writable=not p["flags"] & PARAM_READONLY)
        problem = readonly_problem(param)
        if problem:
            raise r.fail(problem, pbase + 6)
        params.append(param)
    return tuple(params)
