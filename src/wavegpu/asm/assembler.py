"""Assembler: canonical WAVE assembly (and the flat Rust dialect) to a Program.

Every error of a file is collected and reported together as one AsmError whose diagnostics
read `file:line:col: error: message` with the source line and a caret.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

from ..encoding import check_operands
from ..errors import BOM, AsmError, Diagnostic, EncodingError, Span
from ..isa import table
from ..isa.capabilities import EMULATOR
from ..isa.instruction import Guard, Imm, Instruction, Mem, Operand, Pair, Pred, Reg, SReg, Vec
from ..isa.registers import NUM_GPRS, NUM_PREDS, SREG_BY_FLAT, SREG_BY_NAME
from ..isa.structure import check_structure, footprint, matching
from ..isa.table import InstrSpec
from ..isa.types import SUBREG_INDEX, DataType, Kind, OperandSpec
from ..wbin.checks import NAME, access_problem
from ..wbin.program import Kernel, Param, Program, SourceLoc
from .flat import CACHE_HINTS, FLAT, NOT_IN_WAVE, SCOPES
from .syntax import (
    Literal,
    Statement,
    SyntaxProblem,
    Token,
    literal_bits,
    parse_literal,
    split_statement,
)

MAX_WORKGROUP = EMULATOR.constants["MAX_WORKGROUP_SIZE"]
MAX_LOCAL = EMULATOR.constants["LOCAL_MEMORY_SIZE"]

_REG = re.compile(r"r(\d+)(?:\.(lo|hi|b[0-3]))?")
_PAIR = re.compile(r"r(\d+)\s*:\s*r(\d+)")
_PRED = re.compile(r"p(\d+)")
_NAME = NAME


# ---- parsed operand shapes ---------------------------------------------------------------------


@dataclass(frozen=True)
class POp:
    """A parsed operand before it is fitted to a row's operand kind."""

    shape: str  # reg pair vec pred sreg mem lit name scope
    tok: Token
    n: int = 0
    sel: int = 0
    count: int = 0
    base: int | None = None
    lit: Literal | None = None


def parse_operand(tok: Token) -> POp:
    t = tok.text
    if t.startswith("{"):
        if not t.endswith("}"):
            raise SyntaxProblem("unterminated '{'", tok.col, len(t))
        inner = [x.strip() for x in t[1:-1].split(",")]
        regs = []
        for x in inner:
            m = re.fullmatch(r"r(\d+)", x)
            if not m:
                raise SyntaxProblem(f"a vector holds plain registers, not {x!r}", tok.col, len(t))
            regs.append(int(m.group(1)))
        if not regs or any(b != a + 1 for a, b in itertools.pairwise(regs)):
            raise SyntaxProblem("vector registers must be consecutive ({rN, rN+1, ...})", tok.col, len(t))
        return POp("vec", tok, n=regs[0], count=len(regs))
    if t.startswith("["):
        if not t.endswith("]"):
            raise SyntaxProblem("unterminated '['", tok.col, len(t))
        inner = t[1:-1].replace(" ", "")
        m = re.fullmatch(r"r(\d+)(?:([+-])(.+))?", inner)
        if m:
            off = 0
            if m.group(2):
                lit = parse_literal(m.group(3))
                if lit is None or lit.kind != "int":
                    raise SyntaxProblem(f"bad memory offset {m.group(3)!r}", tok.col, len(t))
                off = int(lit.value) * (-1 if m.group(2) == "-" else 1)
            if not -(1 << 31) <= off < (1 << 31):
                raise SyntaxProblem("memory offset does not fit in 32 signed bits", tok.col, len(t))
            return POp("mem", tok, base=int(m.group(1)), n=off)
        lit = parse_literal(inner)
        if lit is None or lit.kind != "int":
            raise SyntaxProblem(f"bad memory operand {t!r}: expected [rN], [rN+off] or [address]", tok.col, len(t))
        a = int(lit.value)
        if not -(1 << 31) <= a < (1 << 32):
            raise SyntaxProblem("address does not fit in 32 bits", tok.col, len(t))
        a &= 0xFFFFFFFF
        return POp("mem", tok, base=None, n=a - (1 << 32) if a >> 31 else a)
    m = _PAIR.fullmatch(t)
    if m:
        a, b = int(m.group(1)), int(m.group(2))
        if b != a + 1 or a % 2:
            raise SyntaxProblem(f"a register pair is rN:rN+1 with N even, not {t}", tok.col, len(t))
        return POp("pair", tok, n=a)
    m = _REG.fullmatch(t)
    if m:
        return POp("reg", tok, n=int(m.group(1)), sel=SUBREG_INDEX[m.group(2)] if m.group(2) else 0)
    m = _PRED.fullmatch(t)
    if m:
        return POp("pred", tok, n=int(m.group(1)))
    if t.startswith("%"):
        sreg = SREG_BY_NAME.get(t)
        if sreg is None:
            raise SyntaxProblem(f"unknown special register {t}", tok.col, len(t))
        return POp("sreg", tok, n=sreg.id)
    if t.startswith("sr_"):
        sreg = SREG_BY_FLAT.get(t)
        if sreg is None:
            raise SyntaxProblem(f"unknown special register {t}", tok.col, len(t))
        return POp("sreg", tok, n=sreg.id)
    scope = t[1:] if t.startswith(".") else t
    if scope in SCOPES:
        return POp("scope", tok)
    lit = parse_literal(t)
    if lit is not None:
        return POp("lit", tok, lit=lit)
    if _NAME.fullmatch(t):
        return POp("name", tok)
    raise SyntaxProblem(f"cannot read operand {t!r}", tok.col, len(t))


# ---- kernel under construction ----------------------------------------------------------------


@dataclass
class _Inst:
    inst: Instruction
    span: Span
    label_refs: list[tuple[Token, str]] = field(default_factory=list)  # (label token, role)
    loc: SourceLoc | None = None
    access: _Access | None = None


@dataclass(frozen=True)
class _Access:
    """A `.access NAME` directive: the buffer parameter the next instruction addresses."""

    name: str
    span: Span  # of NAME
    directive: Span  # of `.access`


@dataclass
class _Kernel:
    name: str
    span: Span
    registers: int | None = None
    predicates: int | None = None
    local_memory: int = 0
    workgroup_size: tuple[int, int, int] | None = None
    max_global_size: int | None = None
    params: list[Param] = field(default_factory=list)
    insts: list[_Inst] = field(default_factory=list)
    labels: dict[str, tuple[int, Span]] = field(default_factory=dict)
    directive_spans: dict[str, Span] = field(default_factory=dict)
    pending_loc: SourceLoc | None = None
    has_loc: bool = False
    pending_access: _Access | None = None


class Assembler:
    def __init__(self, text: str, filename: str, debug_lines: bool = False):
        self.text = text
        self.filename = filename
        self.debug_lines = debug_lines
        self.diags: list[Diagnostic] = []
        self.kernels: list[_Kernel] = []
        self.cur: _Kernel | None = None
        self.lines = text.splitlines()
        self.lineno = 0

    # -- diagnostics
    def span(self, col: int, length: int = 1, line: int | None = None) -> Span:
        ln = self.lineno if line is None else line
        return Span(
            self.filename,
            ln,
            max(1, col),
            max(1, length),
            self.lines[ln - 1] if 0 < ln <= len(self.lines) else "",
        )

    def error(self, msg: str, col: int = 1, length: int = 1) -> None:
        self.diags.append(Diagnostic(msg, self.span(col, length)))

    def error_at(self, msg: str, span: Span) -> None:
        self.diags.append(Diagnostic(msg, span))

    # -- driver
    def run(self) -> Program:
        for lineno, line in enumerate(self.lines, start=1):
            self.lineno = lineno
            try:
                st = split_statement(line)
                self.statement(st)
            except SyntaxProblem as p:
                self.error(p.message, p.col, p.length)
        if self.cur is not None:
            self.finish_kernel()
        if not self.kernels and not self.diags:
            self.diags.append(
                Diagnostic(
                    "no kernels: expected '.kernel NAME'",
                    Span(self.filename, 1, 1, 1, self.lines[0] if self.lines else ""),
                )
            )
        built = [self.build(k) for k in self.kernels]
        names: dict[str, _Kernel] = {}
        for k in self.kernels:
            if k.name in names:
                self.error_at(f"kernel {k.name!r} is defined twice", k.span)
            names[k.name] = k
        if self.diags:
            self.diags.sort(key=lambda d: (d.span.line, d.span.col) if d.span else (0, 0))
            raise AsmError(self.diags)
        return Program(tuple(k for k in built if k is not None))

    def statement(self, st: Statement) -> None:
        for lab in st.labels:
            if self.cur is None:
                self.error("label outside a .kernel", lab.col, len(lab.text))
                continue
            if lab.text in self.cur.labels:
                self.error(f"label {lab.text!r} is already defined", lab.col, len(lab.text))
            else:
                self.cur.labels[lab.text] = (len(self.cur.insts), self.span(lab.col, len(lab.text)))
        if st.head is None:
            if st.guard is not None:
                raise SyntaxProblem("a guard must precede an instruction", st.guard.col)
            return
        if st.head.text.startswith(".") and st.guard is None:
            self.directive(st.head, st.operands)
            return
        if self.cur is None:
            self.error(
                "instruction outside a kernel: start one with '.kernel NAME'",
                st.head.col,
                len(st.head.text),
            )
            return
        self.instruction(st)

    # -- directives
    def directive(self, head: Token, ops: tuple[Token, ...]) -> None:
        name = head.text
        hspan = self.span(head.col, len(name))
        if name == ".kernel":
            if len(ops) != 1 or not _NAME.fullmatch(ops[0].text):
                raise SyntaxProblem("expected '.kernel NAME'", head.col, len(name))
            if self.cur is not None:
                self.finish_kernel()
            self.cur = _Kernel(ops[0].text, self.span(ops[0].col, len(ops[0].text)))
            return
        if self.cur is None:
            raise SyntaxProblem(f"directive {name} outside a kernel", head.col, len(name))
        k = self.cur
        if name == ".end":
            if ops:
                raise SyntaxProblem("'.end' takes no operands", ops[0].col)
            self.finish_kernel()
            return
        if name in (".registers", ".predicates", ".local_memory"):
            v = self.int_operands(head, ops, 1, 1)[0]
            k.directive_spans[name] = hspan
            if name == ".registers":
                if not 1 <= v <= NUM_GPRS:
                    raise SyntaxProblem(
                        f".registers must be 1..{NUM_GPRS} (MAX_REGISTERS)",
                        ops[0].col,
                        len(ops[0].text),
                    )
                k.registers = v
            elif name == ".predicates":
                if not 0 <= v <= NUM_PREDS:
                    raise SyntaxProblem(f".predicates must be 0..{NUM_PREDS}", ops[0].col, len(ops[0].text))
                k.predicates = v
            else:
                if not 0 <= v <= MAX_LOCAL:
                    raise SyntaxProblem(
                        f".local_memory must be 0..{MAX_LOCAL} bytes (LOCAL_MEMORY_SIZE)",
                        ops[0].col,
                        len(ops[0].text),
                    )
                k.local_memory = v
            return
        if name == ".max_global_size":
            v = self.int_operands(head, ops, 1, 1)[0]
            if not 1 <= v <= 0xFFFFFFFF:
                raise SyntaxProblem(
                    ".max_global_size must be 1..4294967295 threads along one axis", ops[0].col, len(ops[0].text)
                )
            k.max_global_size = v
            return
        if name == ".workgroup_size":
            vals = self.int_operands(head, ops, 1, 3)
            vals += [1] * (3 - len(vals))
            if min(vals) < 1:
                raise SyntaxProblem("workgroup dimensions must be at least 1", ops[0].col)
            total = vals[0] * vals[1] * vals[2]
            if total > MAX_WORKGROUP:
                raise SyntaxProblem(
                    f"workgroup size {vals[0]}x{vals[1]}x{vals[2]} = {total} threads exceeds "
                    f"MAX_WORKGROUP_SIZE ({MAX_WORKGROUP})",
                    head.col,
                    len(name),
                )
            k.workgroup_size = (vals[0], vals[1], vals[2])
            return
        if name == ".param":
            if len(ops) not in (3, 4):
                raise SyntaxProblem("expected '.param NAME, buffer|scalar, TYPE[, readonly]'", head.col, len(name))
            pname, kind, ty = (o.text for o in ops[:3])
            if not _NAME.fullmatch(pname):
                raise SyntaxProblem(f"bad parameter name {pname!r}", ops[0].col, len(pname))
            if kind not in ("buffer", "scalar"):
                raise SyntaxProblem("parameter kind must be 'buffer' or 'scalar'", ops[1].col, len(kind))
            try:
                dt = DataType.from_text(ty)
            except KeyError:
                raise SyntaxProblem(f"unknown type {ty!r}", ops[2].col, len(ty)) from None
            if any(p.name == pname for p in k.params):
                raise SyntaxProblem(f"parameter {pname!r} declared twice", ops[0].col, len(pname))
            writable = True
            if len(ops) == 4:
                mark = ops[3]
                if mark.text != "readonly":
                    raise SyntaxProblem(f"expected 'readonly', not {mark.text!r}", mark.col, len(mark.text))
                if kind != "buffer":
                    raise SyntaxProblem(f"'readonly' marks a buffer; {pname!r} is a scalar", mark.col, len(mark.text))
                writable = False
            k.params.append(Param(pname, kind, dt, writable))
            return
        if name == ".access":
            if len(ops) != 1 or not _NAME.fullmatch(ops[0].text):
                raise SyntaxProblem("expected '.access PARAM' (a buffer parameter's name)", head.col, len(name))
            if k.pending_access is not None:
                raise SyntaxProblem(
                    "a second '.access' before the instruction the first one annotates", head.col, len(name)
                )
            k.pending_access = _Access(ops[0].text, self.span(ops[0].col, len(ops[0].text)), hspan)
            return
        if name == ".loc":
            if len(ops) == 1 and ops[0].text == "none":
                k.pending_loc = None
                k.has_loc = True
                return
            if len(ops) != 1:
                raise SyntaxProblem("expected '.loc \"FILE\" LINE [COL]'", head.col, len(name))
            m = re.fullmatch(r'("(?:[^"\\]|\\.)*")\s+(\d+)(?:\s+(\d+))?', ops[0].text)
            if not m:
                raise SyntaxProblem("expected '.loc \"FILE\" LINE [COL]'", ops[0].col, len(ops[0].text))
            import json  # .loc lines only: json stays out of a plain assembly's start-up

            try:
                fname = json.loads(m.group(1))
            except ValueError:
                raise SyntaxProblem("bad file name string", ops[0].col) from None
            k.pending_loc = SourceLoc(fname, int(m.group(2)), int(m.group(3) or 0))
            k.has_loc = True
            return
        raise SyntaxProblem(f"unknown directive {name}", head.col, len(name))

    def int_operands(self, head: Token, ops: tuple[Token, ...], lo: int, hi: int) -> list[int]:
        if not lo <= len(ops) <= hi:
            want = str(lo) if lo == hi else f"{lo} to {hi}"
            raise SyntaxProblem(f"{head.text} takes {want} integer operand(s)", head.col, len(head.text))
        out = []
        for o in ops:
            lit = parse_literal(o.text)
            if lit is None or lit.kind != "int":
                raise SyntaxProblem(f"expected an integer, not {o.text!r}", o.col, len(o.text))
            out.append(int(lit.value))
        return out

    def finish_kernel(self) -> None:
        assert self.cur is not None
        if self.cur.pending_access is not None:
            self.error_at(
                "'.access' must be followed by the instruction it annotates", self.cur.pending_access.directive
            )
        self.kernels.append(self.cur)
        self.cur = None

    # -- instructions
    def instruction(self, st: Statement) -> None:
        k = self.cur
        assert k is not None and st.head is not None
        head = st.head
        mn = head.text
        ops_tok = list(st.operands)
        # cache hints of the flat dialect
        for hint in CACHE_HINTS:
            if mn.endswith(hint):
                mn = mn[: -len(hint)]
        if ops_tok:
            first = ops_tok[0].text.split(None, 1)
            if first[0] in CACHE_HINTS:
                if len(first) == 1:
                    ops_tok.pop(0)
                else:
                    skip = ops_tok[0].text.index(first[1])
                    ops_tok[0] = Token(first[1], ops_tok[0].col + skip)
        guard: Guard | None = None
        uniform = False
        if st.guard is not None:
            g = st.guard.text
            if g == "@uniform":
                uniform = True
            else:
                m = re.fullmatch(r"@(!?)p(\d+)", g)
                if not m:
                    raise SyntaxProblem(f"bad guard {g!r}: expected @pN, @!pN or @uniform", st.guard.col, len(g))
                pn = int(m.group(2))
                if pn >= NUM_PREDS:
                    raise SyntaxProblem(
                        f"predicate p{pn} does not exist (p0..p{NUM_PREDS - 1})",
                        st.guard.col,
                        len(g),
                    )
                guard = Guard(pn, m.group(1) == "!")
        ops = [parse_operand(t) for t in ops_tok]
        span = self.span(head.col, len(head.text))
        if mn in NOT_IN_WAVE:
            raise SyntaxProblem(NOT_IN_WAVE[mn], head.col, len(head.text))
        label_refs: list[tuple[Token, str]] = []
        if uniform:
            if mn != "if":
                raise SyntaxProblem("@uniform annotates an 'if' only", st.guard.col if st.guard else head.col)
            mn = "if.uniform"
        if mn in ("if", "if.uniform", "loop"):
            # trailing label operands: if p, else_label, endif_label / loop end_label
            while ops and ops[-1].shape == "name":
                label_refs.insert(0, (ops[-1].tok, ""))
                ops.pop()
            want = 2 if mn != "loop" else 1
            if label_refs and len(label_refs) != want:
                raise SyntaxProblem(
                    "expected 'if pN, ELSE_LABEL, ENDIF_LABEL'" if mn != "loop" else "expected 'loop END_LABEL'",
                    head.col,
                    len(head.text),
                )
            roles = ("else", "endif") if mn != "loop" else ("endloop",)
            label_refs = [(t, r) for (t, _), r in zip(label_refs, roles)]
        inst = self.resolve(mn, head, ops, guard)
        loc = k.pending_loc  # sticky: applies until the next .loc (or `.loc none`)
        if self.debug_lines and loc is None:
            loc = SourceLoc(self.filename, self.lineno, head.col)
        k.insts.append(_Inst(inst, span, label_refs, loc, k.pending_access))
        k.pending_access = None  # `.access` annotates the next instruction only

    def resolve(self, mn: str, head: Token, ops: list[POp], guard: Guard | None) -> Instruction:
        rows = table.BY_MNEMONIC.get(mn)
        if rows is not None:
            return self.fit_rows(mn, rows, head, ops, guard, None)
        return self.resolve_flat(mn, head, ops, guard)

    def resolve_flat(self, mn: str, head: Token, ops: list[POp], guard: Guard | None) -> Instruction:
        if mn == "mov":
            if len(ops) == 2 and ops[1].shape == "sreg":
                return self.fit_rows(mn, [table.row("mov.b32.sreg")], head, ops, guard, None)
            return self.fit_rows(mn, [table.row("mov.b32")], head, ops, guard, None)
        if mn in ("fence_acquire", "fence_release", "fence_acq_rel"):
            if len(ops) != 1 or ops[0].shape != "scope":
                raise SyntaxProblem(f"expected '{mn} SCOPE' (wave, workgroup, device or system)", head.col, len(mn))
            scope = SCOPES[ops[0].tok.text.lstrip(".")]
            return self.fit_rows(mn, [table.row(f"fence.{scope}")], head, [], guard, None)
        forms = FLAT.get(mn)
        if forms is None:
            raise SyntaxProblem(f"unknown instruction {mn!r}", head.col, len(head.text))
        form = forms.get(len(ops))
        if form is None:
            counts = sorted(forms)
            raise SyntaxProblem(
                f"'{mn}' takes {' or '.join(map(str, counts))} operands, not {len(ops)}",
                head.col,
                len(head.text),
            )
        if form.scope:
            if ops[-1].shape != "scope":
                raise SyntaxProblem(
                    f"'{mn}' ends with a scope (wave, workgroup, device or system)",
                    ops[-1].tok.col,
                    len(ops[-1].tok.text),
                )
            ops = ops[:-1]
        if form.order is not None:
            ops = [ops[i] for i in form.order]
        return self.fit_rows(mn, [table.row(form.key)], head, ops, guard, True)

    def fit_rows(
        self,
        mn: str,
        rows: list[InstrSpec],
        head: Token,
        ops: list[POp],
        guard: Guard | None,
        flat: bool | None,
    ) -> Instruction:
        problems: list[tuple[int, SyntaxProblem]] = []
        for row in rows:
            try:
                return self.fit(mn, row, head, ops, guard, bool(flat))
            except _FitProblem as p:
                problems.append((p.progress, p.problem))
        best = max(pr for pr, _ in problems)
        top = [p for pr, p in problems if pr == best]
        if len(top) == 1 or len({p.message for p in top}) == 1:
            raise top[0]
        raise SyntaxProblem(
            f"operands do not match any form of '{mn}': " + "; ".join(f"{r.name} {r.format}" for r in rows),
            head.col,
            len(head.text),
        )

    def fit(self, mn: str, row: InstrSpec, head: Token, ops: list[POp], guard: Guard | None, flat: bool) -> Instruction:
        if len(ops) != len(row.operands):
            raise _FitProblem(
                0,
                SyntaxProblem(
                    f"'{mn}' takes {len(row.operands)} operand(s), got {len(ops)}",
                    head.col,
                    len(head.text),
                ),
            )
        if guard is not None and not row.guardable:
            raise _FitProblem(1, SyntaxProblem(f"'{row.name}' cannot be guarded", head.col, len(head.text)))
        float_mn = _alias_is_float(mn, row)
        out: list[Operand] = []
        for i, (p, os) in enumerate(zip(ops, row.operands)):
            try:
                out.append(self.fit_operand(p, os, flat, float_mn))
            except SyntaxProblem as e:
                # a wrong kind of operand is a weaker match than a right kind with a bad value
                raise _FitProblem(2 + 2 * i + (0 if e.message.startswith("expected") else 1), e) from None
        inst = Instruction(row, tuple(out), guard)
        try:
            check_operands(inst)
        except EncodingError as e:
            raise _FitProblem(100, SyntaxProblem(e.reason, head.col, len(head.text))) from None
        return inst

    def fit_operand(self, p: POp, os: OperandSpec, flat: bool, float_mn: bool) -> Operand:
        tok = p.tok
        k = os.kind

        def bad(what: str) -> SyntaxProblem:
            return SyntaxProblem(f"expected {what}, not {tok.text!r}", tok.col, len(tok.text))

        def reg_range(n: int, span: int = 1) -> None:
            if n + span > NUM_GPRS:
                raise SyntaxProblem(
                    f"register r{n + span - 1} does not exist (r0..r{NUM_GPRS - 1})",
                    tok.col,
                    len(tok.text),
                )

        if p.shape == "lit":
            if not os.accepts_immediate:
                raise bad(_KIND_TEXT[k])
            assert p.lit is not None
            fs = os.dtype in (DataType.F32, DataType.F64) or (float_mn and os.dtype.text.startswith("b"))
            try:
                bits = literal_bits(p.lit, os.imm_bits, fs)
            except ValueError as e:
                raise SyntaxProblem(str(e), tok.col, len(tok.text)) from None
            return Imm(bits, os.imm_bits)
        if k is Kind.REG:
            if p.shape != "reg":
                raise bad("a register")
            reg_range(p.n)
            return Reg(p.n, p.sel)
        if k is Kind.PAIR:
            if p.shape == "pair" or (flat and p.shape == "reg" and not p.sel):
                if p.n % 2:
                    raise SyntaxProblem(
                        f"a 64-bit value needs an even register pair; r{p.n} is odd",
                        tok.col,
                        len(tok.text),
                    )
                reg_range(p.n, 2)
                return Pair(p.n)
            raise bad("a register pair rN:rN+1")
        if k in (Kind.VEC1, Kind.VEC2, Kind.VEC4):
            want = k.vector_len
            if p.shape == "vec" or (flat and p.shape == "reg" and not p.sel):
                cnt = p.count if p.shape == "vec" else want
                if cnt != want:
                    raise bad(f"{want} consecutive registers in braces")
                reg_range(p.n, want)
                return Vec(p.n, want)
            raise bad(f"{want} consecutive registers in braces")
        if k is Kind.PRED:
            if p.shape != "pred":
                raise bad("a predicate p0..p7")
            if p.n >= NUM_PREDS:
                raise SyntaxProblem(
                    f"predicate p{p.n} does not exist (p0..p{NUM_PREDS - 1})",
                    tok.col,
                    len(tok.text),
                )
            return Pred(p.n)
        if k is Kind.SREG:
            if p.shape != "sreg":
                raise bad("a special register")
            return SReg(p.n)
        if k is Kind.MEM:
            if p.shape == "mem":
                if p.base is not None:
                    reg_range(p.base)
                return Mem(p.base, p.n)
            if flat and p.shape == "reg" and not p.sel:
                reg_range(p.n)
                return Mem(p.n, 0)
            raise bad("a memory operand [rN+offset]")
        raise bad(_KIND_TEXT[k])

    # -- kernel checks
    def build(self, k: _Kernel) -> Kernel | None:
        insts = [x.inst for x in k.insts]
        ok = True
        for issue in check_structure(insts):
            self.error_at(issue.message, k.insts[issue.index].span)
            ok = False
        if ok:
            self.check_labels(k, insts)
        gmax = pmax = 0
        for x in k.insts:
            g, p = footprint(x.inst)
            gmax, pmax = max(gmax, g), max(pmax, p)
            if k.registers is not None and g > k.registers:
                self.error_at(
                    f"register r{g - 1} is beyond the kernel's {k.registers} registers (.registers)",
                    x.span,
                )
            if k.predicates is not None and p > k.predicates:
                self.error_at(
                    f"predicate p{p - 1} is beyond the kernel's {k.predicates} predicates (.predicates)",
                    x.span,
                )
        regs = k.registers if k.registers is not None else max(gmax, len(k.params), 1)
        preds = k.predicates if k.predicates is not None else pmax
        if len(k.params) > regs:
            self.error_at(
                f"{len(k.params)} parameters are preset in r0..r{len(k.params) - 1}, but the kernel "
                f"declares {regs} registers",
                k.directive_spans.get(".registers", k.span),
            )
        lines = tuple(x.loc for x in k.insts) if any(x.loc is not None for x in k.insts) else None
        accesses = self.accesses(k)
        return Kernel(
            k.name,
            tuple(insts),
            regs,
            preds,
            k.local_memory,
            k.workgroup_size,
            tuple(k.params),
            lines=lines,
            accesses=accesses,
            max_global_size=k.max_global_size,
        )

    def accesses(self, k: _Kernel) -> tuple[int | None, ...] | None:
        """The access table from `.access` directives (None when the kernel has none)."""
        out: list[int | None] = []
        for x in k.insts:
            a = x.access
            if a is None:
                out.append(None)
                continue
            index = next((i for i, p in enumerate(k.params) if p.name == a.name), None)
            if index is None:
                known = ", ".join(p.name for p in k.params) or "none declared"
                self.error_at(f"'.access {a.name}': no parameter named {a.name!r} (parameters: {known})", a.span)
            else:
                problem = access_problem(x.inst, index, k.params)
                if problem:
                    self.error_at(problem, a.span if x.inst.spec.is_global_access else a.directive)
            out.append(index)
        return tuple(out) if any(i is not None for i in out) else None

    def check_labels(self, k: _Kernel, insts: list[Instruction]) -> None:
        match = matching(insts)
        for i, x in enumerate(k.insts):
            if not x.label_refs:
                continue
            els, end = match[i]
            for tok, role in x.label_refs:
                sp = Span(x.span.file, x.span.line, tok.col, len(tok.text), x.span.text)
                if tok.text not in k.labels:
                    self.error_at(f"undefined label {tok.text!r}", sp)
                    continue
                pos, _ = k.labels[tok.text]
                if role == "else":
                    target = els if els is not None else end
                    what = "its 'else'" if els is not None else "its 'endif' (the if has no else)"
                elif role == "endif":
                    target, what = end, "its 'endif'"
                else:
                    target, what = end, "its 'endloop'"
                allowed = (target,) if role == "else" else (target, target + 1)
                if pos not in allowed:
                    self.error_at(f"label {tok.text!r} does not mark {what}", sp)


class _FitProblem(Exception):
    """Why a row did not fit, with how far the match got (to pick the best message)."""

    def __init__(self, progress: int, problem: SyntaxProblem):
        super().__init__(problem.message)
        self.progress = progress
        self.problem = problem


def _alias_is_float(mn: str, row: InstrSpec) -> bool:
    """An alias such as `mov.f32` or `selp.f64` makes decimal literals in untyped slots floats."""
    if mn == row.name:
        return False
    for a, b in zip(mn.split("."), row.name.split(".")):
        if a != b:
            return a in ("f32", "f64")
    return False


_KIND_TEXT = {
    Kind.REG: "a register",
    Kind.PAIR: "a register pair rN:rN+1",
    Kind.VEC1: "{rN}",
    Kind.VEC2: "{rN, rN+1}",
    Kind.VEC4: "{rN, ..., rN+3}",
    Kind.PRED: "a predicate",
    Kind.SREG: "a special register",
    Kind.MEM: "a memory operand",
}


def assemble(text: str, filename: str = "<input>", debug_lines: bool = False) -> Program:
    """Assemble WAVE text (canonical or flat dialect) to a Program; AsmError lists every error.

    With `debug_lines`, instructions without a `.loc` record their place in this text, so an
    emulator trap can name the assembly line.
    """
    return Assembler(text.removeprefix(BOM), filename, debug_lines).run()  # a byte order mark: skipped
