"""The .wbin container: writer and strict reader (every problem is a WbinError with its offset).

Layout (little-endian; every section 4-byte aligned; see docs/wbin.md):
header | kernel table | parameter table | line table | string table | code
"""

from __future__ import annotations

import itertools
import struct
from dataclasses import dataclass

from ..encoding import decode_all, encode_bytes
from ..errors import EncodingError, WbinError
from ..isa.capabilities import EMULATOR
from ..isa.registers import NUM_GPRS, NUM_PREDS
from ..isa.structure import check_structure, footprint
from ..isa.types import DataType
from .program import Kernel, Param, Program, SourceLoc

MAGIC = b"WBIN"
FORMAT_VERSION = (1, 0)
FLAG_LINES = 1

# name, struct format, field names: the one description of each record.
HEADER = struct.Struct("<4sHHIIIIIIIIIIIII")
HEADER_FIELDS = (
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
KERNEL = struct.Struct("<IIIHBBIIIIHHIIIII")
KERNEL_FIELDS = (
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
    "reserved1",
)
PARAM = struct.Struct("<IBBH")
PARAM_FIELDS = ("name", "kind", "dtype", "reserved")
LINE = struct.Struct("<IIII")
LINE_FIELDS = ("pc", "file", "line", "col")

PARAM_KINDS = ("buffer", "scalar")
MAX_WORKGROUP = EMULATOR.constants["MAX_WORKGROUP_SIZE"]
MAX_LOCAL = EMULATOR.constants["LOCAL_MEMORY_SIZE"]


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


def write(prog: Program) -> bytes:
    strings = _Strings()
    code = bytearray()
    kernels = bytearray()
    params = bytearray()
    lines = bytearray()
    nparams = nlines = 0
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
            params += PARAM.pack(strings.add(p.name), PARAM_KINDS.index(p.kind), p.dtype.code, 0)
            nparams += 1
        l_first = nlines
        if k.lines is not None:
            for pc, loc in zip(pcs, k.lines):
                if loc is None:
                    continue
                lines += LINE.pack(pc, strings.add(loc.file), loc.line, loc.col)
                nlines += 1
        wg = k.workgroup_size or (0, 0, 0)
        kernels += KERNEL.pack(
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
            0,
        )
    has_lines = nlines > 0
    kernel_off = HEADER.size
    param_off = kernel_off + len(kernels)
    line_off = param_off + len(params)
    string_off = line_off + len(lines)
    code_off = _align4(string_off + len(strings.data))
    file_size = code_off + len(code)
    header = HEADER.pack(
        MAGIC,
        *FORMAT_VERSION,
        FLAG_LINES if has_lines else 0,
        HEADER.size,
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
    )
    pad = b"\0" * (code_off - string_off - len(strings.data))
    return bytes(header + kernels + params + lines + strings.data + pad + code)


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

    def section(self, name: str, off: int, size: int, field_off: int) -> None:
        if off % 4:
            raise self.fail(f"{name} offset {off} is not 4-byte aligned", field_off)
        if off < HEADER.size or off + size > len(self.data):
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


def read(data: bytes, path: str | None = None) -> Program:
    """Parse and validate a .wbin image; any problem raises WbinError naming the byte offset."""
    try:
        return _read(bytes(data), path)
    except WbinError:
        raise
    except (struct.error, ValueError, IndexError, KeyError, OverflowError) as e:  # defensive net
        raise WbinError(f"malformed file: {e}", None, path) from None


def _read(data: bytes, path: str | None) -> Program:
    r = _Reader(data, path)
    if len(data) < 4 or data[:4] != MAGIC:
        raise r.fail(f"bad magic {data[:4]!r}, expected {MAGIC!r} (not a .wbin file)", 0)
    h = r.unpack(HEADER, HEADER_FIELDS, 0, "header")

    def hoff(name: str) -> int:
        return _field_offset(0, HEADER_FIELDS, HEADER, name)

    if (h["major"], h["minor"]) != FORMAT_VERSION:
        raise r.fail(
            f"unsupported format version {h['major']}.{h['minor']} (this reader: 1.0)",
            hoff("major"),
        )
    if h["flags"] & ~FLAG_LINES:
        raise r.fail(f"unknown flags 0x{h['flags']:x}", hoff("flags"))
    if h["header_size"] != HEADER.size:
        raise r.fail(f"header size {h['header_size']}, expected {HEADER.size}", hoff("header_size"))
    if h["file_size"] != len(data):
        raise r.fail(
            f"header says the file has {h['file_size']} bytes, but it has {len(data)}"
            + (" (truncated)" if len(data) < h["file_size"] else ""),
            hoff("file_size"),
        )
    secs = [
        ("kernel table", h["kernel_off"], h["kernel_count"] * KERNEL.size, hoff("kernel_off")),
        ("parameter table", h["param_off"], h["param_count"] * PARAM.size, hoff("param_off")),
        ("line table", h["line_off"], h["line_count"] * LINE.size, hoff("line_off")),
        ("string table", h["string_off"], h["string_size"], hoff("string_off")),
        ("code", h["code_off"], h["code_size"], hoff("code_off")),
    ]
    for name, off, size, fo in secs:
        if name == "string table":
            if off < HEADER.size or off + size > len(data):
                raise r.fail(f"{name} [{off}, {off + size}) lies outside the file (size {len(data)})", fo)
        else:
            r.section(name, off, size, fo)
    spans = sorted((off, off + size, name, fo) for name, off, size, fo in secs if size)
    for (_a0, a1, an, _), (b0, _b1, bn, bfo) in itertools.pairwise(spans):
        if b0 < a1:
            raise r.fail(f"{bn} overlaps the {an}", bfo)
    if h["code_size"] % 4:
        raise r.fail("code size is not a multiple of 4", hoff("code_size"))
    if bool(h["flags"] & FLAG_LINES) != bool(h["line_count"]) and h["line_count"]:
        raise r.fail("line entries present but the line-table flag is clear", hoff("flags"))
    if h["kernel_count"] == 0:
        raise r.fail("the file has no kernels", hoff("kernel_count"))

    code_base = h["code_off"]
    kernels: list[Kernel] = []
    names: set[str] = set()
    for ki in range(h["kernel_count"]):
        base = h["kernel_off"] + ki * KERNEL.size
        k = r.unpack(KERNEL, KERNEL_FIELDS, base, f"kernel entry {ki}")

        def koff(name: str, base: int = base) -> int:
            return _field_offset(base, KERNEL_FIELDS, KERNEL, name)

        name = r.string(h, k["name"], koff("name"), f"kernel {ki} name")
        if not name or not (name.replace("_", "a").replace(".", "a").replace("$", "a").isalnum()):
            raise r.fail(f"kernel {ki}: invalid name {name!r}", koff("name"))
        if name in names:
            raise r.fail(f"duplicate kernel name {name!r}", koff("name"))
        names.add(name)
        if k["reserved0"] or k["reserved1"]:
            raise r.fail(f"kernel {name!r}: reserved field is not zero", koff("reserved0"))
        if k["code_start"] % 4 or k["code_size"] % 4:
            raise r.fail(f"kernel {name!r}: code range is not 4-byte aligned", koff("code_start"))
        if k["code_start"] + k["code_size"] > h["code_size"]:
            raise r.fail(
                f"kernel {name!r}: code range [{k['code_start']}, {k['code_start'] + k['code_size']}) "
                f"outside the code section (size {h['code_size']})",
                koff("code_start"),
            )
        if k["registers"] > NUM_GPRS:
            raise r.fail(
                f"kernel {name!r}: register count {k['registers']} exceeds {NUM_GPRS}",
                koff("registers"),
            )
        if k["predicates"] > NUM_PREDS:
            raise r.fail(
                f"kernel {name!r}: predicate count {k['predicates']} exceeds {NUM_PREDS}",
                koff("predicates"),
            )
        if k["local_memory"] > MAX_LOCAL:
            raise r.fail(
                f"kernel {name!r}: local memory {k['local_memory']} exceeds {MAX_LOCAL} bytes",
                koff("local_memory"),
            )
        wg = (k["wg_x"], k["wg_y"], k["wg_z"])
        if wg == (0, 0, 0):
            wgs = None
        else:
            if min(wg) < 1 or wg[0] * wg[1] * wg[2] > MAX_WORKGROUP:
                raise r.fail(
                    f"kernel {name!r}: workgroup size hint {wg} invalid (each >= 1, product <= {MAX_WORKGROUP})",
                    koff("wg_x"),
                )
            wgs = wg
        if (k["isa_major"], k["isa_minor"]) != (0, 1):
            raise r.fail(
                f"kernel {name!r}: unsupported ISA version {k['isa_major']}.{k['isa_minor']}",
                koff("isa_major"),
            )
        # parameters
        if k["param_first"] + k["param_count"] > h["param_count"]:
            raise r.fail(f"kernel {name!r}: parameter range out of the parameter table", koff("param_first"))
        params = []
        for pi in range(k["param_first"], k["param_first"] + k["param_count"]):
            pbase = h["param_off"] + pi * PARAM.size
            p = r.unpack(PARAM, PARAM_FIELDS, pbase, f"parameter {pi}")
            pname = r.string(h, p["name"], pbase, f"parameter {pi} name")
            if not pname:
                raise r.fail(f"parameter {pi}: empty name", pbase)
            if p["kind"] >= len(PARAM_KINDS):
                raise r.fail(
                    f"parameter {pname!r}: kind {p['kind']} is neither buffer (0) nor scalar (1)",
                    pbase + 4,
                )
            try:
                dt = DataType.from_code(p["dtype"])
            except KeyError:
                raise r.fail(f"parameter {pname!r}: unknown element type code {p['dtype']}", pbase + 5) from None
            if p["reserved"]:
                raise r.fail(f"parameter {pname!r}: reserved field is not zero", pbase + 6)
            params.append(Param(pname, PARAM_KINDS[p["kind"]], dt))
        # code
        cstart = code_base + k["code_start"]
        try:
            decoded = decode_all(data[cstart : cstart + k["code_size"]], cstart)
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
                    f"kernel {name!r}: {inst.spec.name} uses r{g - 1} but the kernel declares "
                    f"{k['registers']} registers",
                    cstart + pc,
                )
            if pr > k["predicates"]:
                raise r.fail(
                    f"kernel {name!r}: {inst.spec.name} uses p{pr - 1} but the kernel declares "
                    f"{k['predicates']} predicates",
                    cstart + pc,
                )
        if len(params) > k["registers"] and params:
            raise r.fail(
                f"kernel {name!r}: {len(params)} parameters need at least as many registers",
                koff("param_count"),
            )
        # lines
        lines: tuple[SourceLoc | None, ...] | None = None
        if k["line_count"]:
            if k["line_first"] + k["line_count"] > h["line_count"]:
                raise r.fail(f"kernel {name!r}: line range out of the line table", koff("line_first"))
            index = {pc: i for i, pc in enumerate(pcs)}
            locs: list[SourceLoc | None] = [None] * len(insts)
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
            lines = tuple(locs)
        elif k["line_first"]:
            raise r.fail(f"kernel {name!r}: line index set without line entries", koff("line_first"))
        kernels.append(
            Kernel(
                name,
                insts,
                k["registers"],
                k["predicates"],
                k["local_memory"],
                wgs,
                tuple(params),
                (k["isa_major"], k["isa_minor"]),
                lines,
            )
        )
    return Program(tuple(kernels))
