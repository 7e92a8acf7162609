"""Read MIR text (the form `ir.dump` prints), so passes can be tested text to text."""

from __future__ import annotations

import re

from ...errors import CompileError, Diagnostic, Span
from .ir import (
    TYPE_BY_NAME,
    Block,
    Br,
    CondBr,
    Const,
    Function,
    Inst,
    LocalArray,
    Operand,
    Param,
    Phi,
    Ret,
    Value,
    Vector,
)

_VAL = re.compile(r"%(\d+)")


def parse(text: str, filename: str = "<mir>") -> Function:
    lines = text.splitlines()
    values: dict[int, Value] = {}
    blocks: dict[str, Block] = {}
    fn: Function | None = None
    cur: Block | None = None
    pending: list[tuple[int, str]] = []  # (line number, text) of instructions, parsed after all blocks exist

    def fail(ln: int, msg: str) -> CompileError:
        return CompileError([Diagnostic(msg, Span(filename, ln, 1, 1, lines[ln - 1] if ln <= len(lines) else ""))])

    def block(name: str) -> Block:
        if name not in blocks:
            blocks[name] = Block(name)
        return blocks[name]

    order: list[str] = []
    line_block: dict[int, Block] = {}
    for ln, raw in enumerate(lines, start=1):
        line = raw.split("//", 1)[0].strip()
        if not line:
            continue
        m = re.fullmatch(r"func @([\w$.]+)\((.*)\) \{", line)
        if m:
            params = []
            if m.group(2).strip():
                for part in m.group(2).split(","):
                    pm = re.fullmatch(r"%(\d+): (\w+) ([\w$]+)(?:\[(\w+)\])?", part.strip())
                    if not pm:
                        raise fail(ln, f"bad parameter {part.strip()!r}")
                    t = TYPE_BY_NAME[pm.group(2)]
                    v = values.setdefault(int(pm.group(1)), Value(int(pm.group(1)), t))
                    elem = TYPE_BY_NAME[pm.group(4)] if pm.group(4) else None
                    params.append(Param(pm.group(3), t, "buffer" if elem else "scalar", elem, v))
            fn = Function(m.group(1), params, [])
            continue
        if fn is None:
            raise fail(ln, "expected 'func @name(...) {'")
        if line == "}":
            break
        m = re.fullmatch(r"var ([\w$]+): (\w+)", line)
        if m:
            fn.vars[m.group(1)] = TYPE_BY_NAME[m.group(2)]
            continue
        m = re.fullmatch(r"local ([\w$]+): (\w+)\[(\d+)\] @(\d+)", line)
        if m:
            fn.locals.append(LocalArray(m.group(1), TYPE_BY_NAME[m.group(2)], int(m.group(3)), int(m.group(4))))
            continue
        m = re.fullmatch(r"workgroup (\d+), (\d+), (\d+)", line)
        if m:
            fn.workgroup_size = (int(m.group(1)), int(m.group(2)), int(m.group(3)))
            continue
        m = re.fullmatch(r"([\w$.]+):", line)
        if m:
            cur = block(m.group(1))
            order.append(cur.name)
            continue
        if cur is None:
            raise fail(ln, "instruction outside a block")
        pending.append((ln, line))
        line_block[ln] = cur
    if fn is None:
        raise CompileError([Diagnostic("no function", Span(filename, 1, 1))])

    def val(tok: str, ln: int, t: str | None = None) -> Operand:
        tok = tok.strip()
        m = _VAL.fullmatch(tok)
        if m:
            i = int(m.group(1))
            if i not in values:
                raise fail(ln, f"%{i} is used before it is defined")
            return values[i]
        m = re.fullmatch(r"(.+):(\w+)", tok)
        if not m or m.group(2) not in TYPE_BY_NAME:
            raise fail(ln, f"bad operand {tok!r}")
        ty = TYPE_BY_NAME[m.group(2)]
        s = m.group(1)
        if ty.kind == "bool":
            return Const(s == "true", ty)
        return Const(float(s), ty) if ty.is_float else Const(int(s), ty)

    # define every result first (phis may refer forward)
    for ln, line in pending:
        m = re.match(r"%(\d+) = .* : (\w+)$", line)
        if m:
            i = int(m.group(1))
            if i in values:
                raise fail(ln, f"%{i} is defined twice")
            values[i] = Value(i, TYPE_BY_NAME[m.group(2)])
    group: tuple[int, int, list[Inst]] | None = None  # an open `vector N`: (line, N, members so far)
    for ln, line in pending:
        b = line_block[ln]
        if group is not None and len(group[2]) == group[1]:
            v = Vector(group[2])
            for x in group[2]:
                x.vector = v
            group = None
        m = re.fullmatch(r"vector (\d+)", line)
        if m:
            if group is not None or int(m.group(1)) not in (2, 4):
                raise fail(ln, "a `vector` line takes 2 or 4 and its members follow it")
            group = (ln, int(m.group(1)), [])
            continue
        # terminators (MIR's own keywords, not instruction rows): ret, br, condbr
        if re.fullmatch(r"ret", line):
            b.term = Ret()
            continue
        m = re.fullmatch(r"br ([\w$.]+)", line)
        if m:
            b.term = Br(block(m.group(1)))
            continue
        m = re.fullmatch(r"condbr (\S+), ([\w$.]+), ([\w$.]+)", line)
        if m:
            b.term = CondBr(val(m.group(1), ln), block(m.group(2)), block(m.group(3)))
            continue
        m = re.fullmatch(r"setvar ([\w$]+), (.+)", line)
        if m:
            b.insts.append(Inst("setvar", None, [val(m.group(2), ln)], m.group(1)))
            continue
        m = re.fullmatch(r"%(\d+) = phi (.*) : (\w+)", line)
        if m:
            inc = [
                (block(bm.group(1)), val(bm.group(2), ln)) for bm in re.finditer(r"\[([\w$.]+), ([^\]]+)\]", m.group(2))
            ]
            b.phis.append(Phi(values[int(m.group(1))], inc))
            continue
        m = re.fullmatch(r"%(\d+) = getvar ([\w$]+) : (\w+)", line)
        if m:
            b.insts.append(Inst("getvar", values[int(m.group(1))], [], m.group(2)))
            continue
        body, _, _ty = line.rpartition(" : ") if re.match(r"%\d+ = ", line) else (line, "", "")
        m = re.fullmatch(r"(?:%(\d+) = )?([\w.]+)(?:\[([\w$]+)\])?(?: (.*))?", body)
        if not m:
            raise fail(ln, f"cannot read {line!r}")
        args = [val(a, ln) for a in _split_args(m.group(4) or "")]
        dst = values[int(m.group(1))] if m.group(1) else None
        buffer = None
        if m.group(3) is not None:
            names = [p.name if p.kind == "buffer" else None for p in fn.params]
            if m.group(3) not in names:
                raise fail(ln, f"{m.group(3)!r} is not a buffer parameter")
            buffer = names.index(m.group(3))
        b.insts.append(Inst(m.group(2), dst, args, buffer=buffer))
        if group is not None:
            if m.group(2).split(".")[0] not in ("load", "store") or b is not line_block[group[0]]:
                raise fail(ln, f"the members of a `vector {group[1]}` are loads or stores of its block")
            group[2].append(b.insts[-1])
    if group is not None:
        if len(group[2]) != group[1]:
            raise fail(group[0], f"`vector {group[1]}` has {len(group[2])} member(s)")
        v = Vector(group[2])
        for x in group[2]:
            x.vector = v
    fn.blocks = [blocks[n] for n in order]
    missing = [n for n in blocks if n not in order]
    if missing:
        raise CompileError([Diagnostic(f"branch to undefined block {missing[0]}", Span(filename, 1, 1))])
    fn.next_id = max(values, default=-1) + 1
    return fn


def _split_args(s: str) -> list[str]:
    return [a for a in (x.strip() for x in s.split(",")) if a]
