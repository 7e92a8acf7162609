"""Canonical assembly text for instructions, operands and whole programs."""

from __future__ import annotations

import struct

import numpy as np

from ..isa.instruction import Guard, Imm, Instruction, Mem, Operand, Pair, Pred, Reg, SReg, Vec
from ..isa.registers import SREG_BY_ID
from ..isa.structure import nesting
from ..isa.types import SUBREGS, DataType, OperandSpec
from ..wbin.program import Kernel, Program


def float_slot(os: OperandSpec) -> bool:
    """Slots where a decimal integer literal means a float value (f32 and f64 operands)."""
    return os.dtype in (DataType.F32, DataType.F64)


def format_f32(bits: int) -> str:
    """Shortest text that reads back to exactly these binary32 bits."""
    v = np.frombuffer(struct.pack("<I", bits), dtype=np.float32)[0]
    if np.isnan(v):
        return "nan" if bits == 0x7FC00000 else f"0f{bits:08X}"
    text = str(v)
    if text in ("inf", "-inf"):
        return text
    if "." not in text and "e" not in text:
        text += ".0"
    back = struct.unpack("<I", np.float32(float(text)).tobytes())[0]
    return text if back == bits else f"0f{bits:08X}"


def format_f64(bits: int) -> str:
    v = struct.unpack("<d", struct.pack("<Q", bits))[0]
    if v != v:
        return "nan" if bits == 0x7FF8000000000000 else f"0d{bits:016X}"
    text = repr(v)
    back = struct.unpack("<Q", struct.pack("<d", float(text)))[0]
    return text if back == bits else f"0d{bits:016X}"


def format_imm(imm: Imm, os: OperandSpec) -> str:
    if os.dtype is DataType.F32 and imm.width == 32:
        return format_f32(imm.bits)
    if os.dtype is DataType.F64 and imm.width == 64:
        return format_f64(imm.bits)
    if os.dtype.is_signed:
        v = imm.bits - (1 << imm.width) if imm.bits >> (imm.width - 1) else imm.bits
        return str(v)
    if os.dtype.text.startswith("u"):
        return str(imm.bits)
    return str(imm.bits) if imm.bits < 10 else f"0x{imm.bits:x}"


def format_reg(n: int, sel: int = 0) -> str:
    return f"r{n}" + (f".{SUBREGS[sel][0]}" if sel else "")


def format_operand(op: Operand, os: OperandSpec) -> str:
    if isinstance(op, Reg):
        return format_reg(op.n, op.sel)
    if isinstance(op, Pair):
        return f"r{op.n}:r{op.n + 1}"
    if isinstance(op, Vec):
        return "{" + ", ".join(f"r{op.n + i}" for i in range(op.count)) + "}"
    if isinstance(op, Pred):
        return f"p{op.n}"
    if isinstance(op, SReg):
        return SREG_BY_ID[op.id].name
    if isinstance(op, Imm):
        return format_imm(op, os)
    if isinstance(op, Mem):
        if op.base is None:
            a = op.offset & 0xFFFFFFFF
            return f"[{a}]" if a < 10 else f"[0x{a:x}]"
        if op.offset > 0:
            return f"[r{op.base}+{op.offset}]"
        if op.offset < 0:
            return f"[r{op.base}-{-op.offset}]"
        return f"[r{op.base}]"
    raise TypeError(op)


def format_guard(g: Guard | None) -> str:
    if g is None:
        return ""
    return f"@{'!' if g.negated else ''}p{g.pred} "


def format_instruction(inst: Instruction) -> str:
    spec = inst.spec
    head = format_guard(inst.guard)
    name = spec.name
    if spec.uniform:
        head += "@uniform "
        name = name.rsplit(".", 1)[0]
    ops = ", ".join(format_operand(o, s) for o, s in zip(inst.operands, spec.operands))
    return f"{head}{name} {ops}".rstrip() if ops else f"{head}{name}"


def format_kernel(k: Kernel) -> str:
    out = [f".kernel {k.name}", f".registers {k.registers}", f".predicates {k.predicates}"]
    if k.local_memory:
        out.append(f".local_memory {k.local_memory}")
    if k.workgroup_size is not None:
        out.append(".workgroup_size " + ", ".join(map(str, k.workgroup_size)))
    if k.max_global_size is not None:
        out.append(f".max_global_size {k.max_global_size}")
    for p in k.params:
        out.append(f".param {p.name}, {p.kind}, {p.dtype.text}" + ("" if p.writable else ", readonly"))
    depths = nesting(k.instructions, strict=False).depth
    shown = None
    for i, inst in enumerate(k.instructions):
        depth = 1 + depths[i]
        loc = k.loc(i)
        if loc != shown and k.lines is not None:  # .loc is sticky: print it when it changes
            import json  # kernels with a line table only (start-up of the commands)

            text = "none" if loc is None else f"{json.dumps(loc.file)} {loc.line} {loc.col}"
            out.append(f"{'    ' * depth}.loc {text}")
            shown = loc
        access = k.accesses[i] if k.accesses is not None and i < len(k.accesses) else None
        if access is not None:  # `.access` annotates the next instruction only
            name = k.params[access].name if 0 <= access < len(k.params) else str(access)
            out.append(f"{'    ' * depth}.access {name}")
        out.append("    " * depth + format_instruction(inst))
    out.append(".end")
    return "\n".join(out) + "\n"


def disassemble(prog: Program | Kernel) -> str:
    """Canonical assembly text; assembling it gives back identical bytes."""
    if isinstance(prog, Kernel):
        return format_kernel(prog)
    return "\n".join(format_kernel(k) for k in prog.kernels)
