"""Instruction <-> 32-bit words, derived from the table and the layout.

Fields are given to an instruction's operands in order, skipping the one operand written as
an immediate. Without an operand word, an immediate is the memory offset (if the row has a
memory operand) or else the last operand. Every instruction has exactly one encoding: the
decoder re-encodes what it read and rejects anything that differs (non-canonical forms).
"""

from __future__ import annotations

import functools
import struct

from ..errors import EncodingError
from ..isa import table
from ..isa.instruction import Guard, Imm, Instruction, Mem, Operand, Pair, Pred, Reg, SReg, Vec
from ..isa.registers import NUM_GPRS, NUM_PREDS, SREG_BY_ID
from ..isa.table import InstrSpec
from ..isa.types import SUBREGS, Kind, Role
from .layout import AUX, BASE, MAX_FIELDS, OPW, SLOT_MEM_ABSOLUTE, SLOT_MEM_OFFSET

_M32 = 0xFFFFFFFF


def _implicit_slot(spec: InstrSpec) -> int:
    mi = spec.mem_index
    if mi is not None:
        return SLOT_MEM_OFFSET
    return len(spec.operands)  # operand index len-1, as slot value len


def _guard_bits(g: Guard | None) -> int:
    if g is None:
        return 0
    return 1 | (int(g.negated) << 1) | (g.pred << 2)


def check_operands(inst: Instruction) -> None:
    """Raise EncodingError unless the operands are legal for the row."""
    spec = inst.spec
    if len(inst.operands) != len(spec.operands):
        raise EncodingError(f"{spec.name}: expected {len(spec.operands)} operands, got {len(inst.operands)}")
    if inst.guard is not None:
        if not spec.guardable:
            raise EncodingError(f"{spec.name} cannot be guarded")
        if not 0 <= inst.guard.pred < NUM_PREDS:
            raise EncodingError(f"guard predicate p{inst.guard.pred} out of range")
    imms = 0
    for i, (op, os) in enumerate(zip(inst.operands, spec.operands)):
        where = f"{spec.name} operand {i}"
        if isinstance(op, Imm):
            imms += 1
            if not os.accepts_immediate:
                raise EncodingError(f"{where}: an immediate is not allowed here")
            if op.width != os.imm_bits or not 0 <= op.bits < (1 << op.width):
                raise EncodingError(f"{where}: immediate must be {os.imm_bits} bits")
            continue
        k = os.kind
        if k is Kind.REG:
            if not isinstance(op, Reg) or not 0 <= op.n < NUM_GPRS or not 0 <= op.sel < len(SUBREGS):
                raise EncodingError(f"{where}: expected a register r0..r{NUM_GPRS - 1}")
        elif k is Kind.PAIR:
            if not isinstance(op, Pair) or not 0 <= op.n < NUM_GPRS - 1 or op.n % 2:
                raise EncodingError(f"{where}: expected an even register pair")
        elif k in (Kind.VEC1, Kind.VEC2, Kind.VEC4):
            if not isinstance(op, Vec) or op.count != k.vector_len or not 0 <= op.n <= NUM_GPRS - op.count:
                raise EncodingError(f"{where}: expected {k.vector_len} consecutive registers")
        elif k is Kind.PRED:
            if not isinstance(op, Pred) or not 0 <= op.n < NUM_PREDS:
                raise EncodingError(f"{where}: expected a predicate p0..p{NUM_PREDS - 1}")
        elif k is Kind.SREG:
            if not isinstance(op, SReg) or op.id not in SREG_BY_ID:
                raise EncodingError(f"{where}: expected a special register")
        elif k is Kind.MEM:
            if not isinstance(op, Mem) or not -(1 << 31) <= op.offset < (1 << 31):
                raise EncodingError(f"{where}: expected a memory operand with a 32-bit offset")
            if op.base is None:
                imms += 1
            else:
                if not 0 <= op.base < NUM_GPRS:
                    raise EncodingError(f"{where}: base register out of range")
                if op.offset:
                    imms += 1
    if imms > 1:
        raise EncodingError(f"{spec.name}: at most one immediate (or memory offset) per instruction")


def encode(inst: Instruction) -> list[int]:
    """The instruction's 32-bit words."""
    check_operands(inst)
    spec = inst.spec
    fields: list[int] = []
    sels: list[int] = []
    slot = 0
    imm: Imm | None = None
    for i, op in enumerate(inst.operands):
        if isinstance(op, Imm):
            slot, imm = i + 1, op
            continue
        if isinstance(op, Mem):
            if op.base is None:
                slot, imm = SLOT_MEM_ABSOLUTE, Imm(op.offset & _M32)
                continue
            if op.offset:
                slot, imm = SLOT_MEM_OFFSET, Imm(op.offset & _M32)
            fields.append(op.base)
            sels.append(0)
            continue
        if isinstance(op, Reg):
            fields.append(op.n)
            sels.append(op.sel)
        elif isinstance(op, (Pair | Vec, Pred)):
            fields.append(op.n)
            sels.append(0)
        elif isinstance(op, SReg):
            fields.append(op.id)
            sels.append(0)
    assert len(fields) <= MAX_FIELDS
    need_aux = len(fields) > 4 or any(sels)
    need_op = (
        need_aux or len(fields) > 2 or inst.guard is not None or (imm is not None and slot != _implicit_slot(spec))
    )
    f = fields + [0] * (MAX_FIELDS - len(fields))
    w0 = (
        BASE["opcode"].put(spec.opcode)
        | BASE["mod"].put(spec.mod)
        | BASE["O"].put(int(need_op))
        | BASE["I"].put(int(imm is not None))
        | BASE["F0"].put(f[0])
        | BASE["F1"].put(f[1])
    )
    words = [w0]
    if need_op:
        words.append(
            OPW["F2"].put(f[2])
            | OPW["F3"].put(f[3])
            | OPW["guard"].put(_guard_bits(inst.guard))
            | OPW["slot"].put(slot if imm is not None else 0)
            | OPW["A"].put(int(need_aux))
        )
    if need_aux:
        aux = AUX["F4"].put(f[4])
        sels_full = sels + [0] * (MAX_FIELDS - len(sels))
        # selectors are per operand index, not per field: map back
        per_operand = [0] * MAX_FIELDS
        k = 0
        for i, op in enumerate(inst.operands):
            if isinstance(op, Imm) or (isinstance(op, Mem) and op.base is None):
                continue
            per_operand[i] = sels_full[k]
            k += 1
        for i in range(MAX_FIELDS):
            aux |= AUX[f"sel{i}"].put(per_operand[i])
        words.append(aux)
    if imm is not None:
        words.append(imm.bits & _M32)
        if imm.width == 64:
            words.append(imm.bits >> 32)
    return words


def encode_bytes(inst: Instruction) -> bytes:
    return b"".join(w.to_bytes(4, "little") for w in encode(inst))


def decode(words: list[int] | tuple[int, ...], pos: int = 0, base_offset: int = 0) -> tuple[Instruction, int]:
    """Decode one instruction at words[pos]; returns it and the number of words used.

    Raises EncodingError naming the byte offset (base_offset + 4 * pos) on bad input.
    """
    off = base_offset + 4 * pos

    def fail(msg: str) -> EncodingError:
        return EncodingError(msg, off)

    if pos >= len(words):
        raise fail("truncated instruction")
    w0 = words[pos]
    code = (BASE["opcode"].get(w0), BASE["mod"].get(w0))
    spec = table.BY_CODE.get(code)
    if spec is None:
        raise fail(f"unknown opcode 0x{code[0]:02x} modifier {code[1]}")
    has_op, has_imm = BASE["O"].get(w0), BASE["I"].get(w0)
    n = 1
    fields = [BASE["F0"].get(w0), BASE["F1"].get(w0), 0, 0, 0]
    guard: Guard | None = None
    slot = _implicit_slot(spec) if has_imm else 0
    sels = [0] * MAX_FIELDS
    if has_op:
        if pos + n >= len(words):
            raise fail("truncated instruction: operand word missing")
        wo = words[pos + n]
        n += 1
        if OPW["reserved"].get(wo):
            raise fail("reserved bits set in the operand word")
        fields[2], fields[3] = OPW["F2"].get(wo), OPW["F3"].get(wo)
        g = OPW["guard"].get(wo)
        if g & 1:
            guard = Guard(g >> 2, bool(g & 2))
        slot = OPW["slot"].get(wo)
        if bool(slot) != bool(has_imm):
            raise fail("immediate slot and immediate flag disagree")
        if OPW["A"].get(wo):
            if pos + n >= len(words):
                raise fail("truncated instruction: auxiliary word missing")
            wa = words[pos + n]
            n += 1
            if AUX["reserved"].get(wa):
                raise fail("reserved bits set in the auxiliary word")
            fields[4] = AUX["F4"].get(wa)
            sels = [AUX[f"sel{i}"].get(wa) for i in range(MAX_FIELDS)]
    nops = len(spec.operands)
    imm_index: int | None = None
    if slot:
        if slot in (SLOT_MEM_OFFSET, SLOT_MEM_ABSOLUTE):
            imm_index = spec.mem_index
            if imm_index is None:
                raise fail(f"{spec.name} has no memory operand for a memory immediate")
        else:
            imm_index = slot - 1
            if imm_index >= nops or not spec.operands[imm_index].accepts_immediate:
                raise fail(f"{spec.name}: operand {imm_index} cannot be an immediate")
    imm_bits = 0
    if has_imm and imm_index is None:
        raise fail(f"{spec.name} takes no immediate, but the immediate flag is set")
    if has_imm:
        assert imm_index is not None  # refused just above
        width = spec.operands[imm_index].imm_bits if slot < SLOT_MEM_OFFSET else 32
        nw = width // 32
        if pos + n + nw > len(words):
            raise fail("truncated instruction: immediate missing")
        imm_bits = words[pos + n]
        if nw == 2:
            imm_bits |= words[pos + n + 1] << 32
        n += nw
    ops: list[Operand] = []
    k = 0
    for i, os in enumerate(spec.operands):
        if i == imm_index and slot < SLOT_MEM_OFFSET:
            ops.append(Imm(imm_bits, os.imm_bits))
            continue
        if os.kind is Kind.MEM:
            if slot == SLOT_MEM_ABSOLUTE:
                ops.append(Mem(None, _signed(imm_bits)))
                continue
            ops.append(Mem(fields[k], _signed(imm_bits) if slot == SLOT_MEM_OFFSET else 0))
            k += 1
            continue
        v = fields[k]
        k += 1
        if os.kind is Kind.REG:
            ops.append(Reg(v, sels[i]))
        elif os.kind is Kind.PAIR:
            ops.append(Pair(v))
        elif os.kind in (Kind.VEC1, Kind.VEC2, Kind.VEC4):
            ops.append(Vec(v, os.kind.vector_len))
        elif os.kind is Kind.PRED:
            ops.append(Pred(v))
        elif os.kind is Kind.SREG:
            ops.append(SReg(v))
    inst = Instruction(spec, tuple(ops), guard)
    try:
        again = encode(inst)
    except EncodingError as e:
        raise fail(e.reason) from None
    if again != list(words[pos : pos + n]):
        raise fail(f"non-canonical encoding of {spec.name} (fields out of range or unused bits set)")
    return inst, n


def _signed(v: int) -> int:
    v &= _M32
    return v - (1 << 32) if v & 0x80000000 else v


MAX_WORDS = 5  # base, operand, auxiliary and a 64-bit immediate


@functools.lru_cache(maxsize=4096)
def _decode_window(window: tuple[int, ...]) -> tuple[Instruction, int] | str:
    """decode() of the instruction that starts a window of MAX_WORDS words (or the reason it fails)."""
    try:
        return decode(window)
    except EncodingError as e:
        return e.reason


def decode_all(data: bytes, base_offset: int = 0) -> list[tuple[int, Instruction]]:
    """Decode a code section; returns (byte offset within data, instruction) pairs.

    An instruction depends only on its own words, so decodings are memoised by those words
    (reading the same code again, as a runtime and a fuzzer do, costs a lookup per instruction).
    """
    if len(data) % 4:
        raise EncodingError("code size is not a multiple of 4 bytes", base_offset + len(data) // 4 * 4)
    words = struct.unpack(f"<{len(data) // 4}I", data)
    out = []
    pos = 0
    while pos < len(words):
        got = _decode_window(words[pos : pos + MAX_WORDS])
        if isinstance(got, str):
            raise EncodingError(got, base_offset + 4 * pos)
        inst, n = got
        out.append((4 * pos, inst))
        pos += n
    return out


# Immediates must be Imm with width matching; Role kept for callers building operands.
__all__ = ["Role", "check_operands", "decode", "decode_all", "encode", "encode_bytes"]
