"""Kernel -> C: the second spelling of the compiled engine's translation.

The structured program is walked once, by `codegen.Gen` (masks, segments of fused lanes,
liveness, lane-by-lane loops, outlined lane loops, the row expressions of `rows.EXPR`), which
writes it as a small typed subset of Python; `opsgen` writes the atomic and wave rows in the
same subset. This module is the C emitter of that subset: it reads the generated text's syntax
tree and writes each statement and expression in C, typed as numba types it (an integer local
is int64, `f_<n>`/`x_<n>` float32 locals, float64 where a helper returns one, numba's promotions
made explicit), calling the runtime of `cruntime` where the Python calls `scalar`, `control`
and `intrinsics`. So a value row's C form is its `rows.EXPR` entry spelled in C, and a row the
emitter cannot spell raises `CUntranslatable`, which sends the kernel to numba
(engine.py). `L` and `W` become compile-time constants, the driver's arrays one allocation
each, and a `return` of the driver a jump to the code that frees them.
"""

from __future__ import annotations

import ast
import functools
import os

from ...wbin.program import Kernel
from .clanes import MEMORY, Chunked, Scalar, chunk_width, lane_loop_body
from .codegen import Shape, generate
from .cruntime import ARGS, POLYMORPHIC, RETURNS, SOURCE
from .opsgen import module as rows_module

ENTRY = "wavegpu_run_range"
"""The exported C function; `cbuild` calls it with the arrays of the numba driver."""

ENTRY_PARAMS = (
    "first", "last", "gx", "gy", "gz", "args", "nargs", "gm8", "dsize", "cm8", "csize", "rs", "re", "own_lo",
    "own_hi", "hint_lo", "hint_hi", "nb", "budget", "shared", "status",
)  # fmt: skip
"""Its parameters, in order (`cbuild.CRunner` passes them)."""

_CT = {"i": "i64", "f": "float", "d": "double"}
_POINTER = {
    "R": "i64 *restrict",
    "TMP": "i64 *restrict",
    "P": "u8 *restrict",
    "act": "u8 *restrict",
    "alive": "u8 *restrict",
    "E": "u8 *restrict",
    "Q": "u8 *restrict",
    "B": "u8 *restrict",
    "C": "u8 *restrict",
    "args": "const i64 *",
    "rs": "const i64 *",
    "re": "const i64 *",
    "own_lo": "const i64 *",
    "own_hi": "const i64 *",
    "hint_lo": "const i64 *",
    "hint_hi": "const i64 *",
    "status": "i64 *",
    **{f"{p}8": "u8 *" for p in ("gm", "cm", "lm", "m")},
    **{f"{p}16": "u16 *" for p in ("gm", "cm", "lm", "m")},
    **{f"{p}32": "u32 *" for p in ("gm", "cm", "lm", "m")},
}
"""Parameters and locals that are arrays (views of one memory alias each other: no restrict)."""
_TWO_D = frozenset("RPEQBC")  # arrays indexed [row, lane]: row * L + lane
_DTYPE = {"int64": "i64", "bool_": "u8", "uint8": "u8", "uint16": "u16", "uint32": "u32"}
_CONSTS = ("L", "W")
_NP_CAST = {"int64": ("i", "(i64)"), "float32": ("f", "(float)"), "float64": ("d", "(double)")}
_CHUNK_FORM = {"half_f32": "half_f32_bits"}
"""Helpers spelt otherwise inside a chunked lane loop (clanes.py): the same value, in a form the
compiler vectorises (the F16C conversion is a scalar intrinsic)."""
_LIBM = {"sqrt", "sin", "cos", "exp2", "log2", "floor", "trunc", "ceil", "rint"}


class CUntranslatable(Exception):
    """Generated code the C emitter does not spell (the construct named); the kernel runs on numba."""


def _bad(node: ast.AST, what: str) -> CUntranslatable:
    return CUntranslatable(f"{what} (generated line {getattr(node, 'lineno', '?')}: {ast.unparse(node)[:80]})")


def _int(v: int) -> str:
    if v >= 1 << 63:
        return f"((i64)0x{v:X}ULL)"
    return f"{v}LL" if v < 1 << 31 else f"0x{v:X}LL"


class Func:
    """One generated function written in C."""

    def __init__(
        self,
        fn: ast.FunctionDef,
        sigs: dict[str, list[str]],
        entry: bool = False,
        chunk: int | None = None,
        every: bool = False,
    ):
        self.fn = fn
        self.chunk = chunk  # VL of the chunked lane loops (clanes), None: lane by lane
        self.every = every  # chunk every lane loop that can be, not only the heavy ones
        self.lane: set[str] | None = None  # inside a chunked lane loop: its per-lane locals
        self.vdecls: dict[str, tuple[str, int]] = {}  # the chunked loops' locals: name -> (type, VL or 0)
        self.sigs = sigs  # name -> parameter names of the module's other functions
        self.entry = entry
        self.params = [a.arg for a in fn.args.args]
        self.arrays: dict[str, tuple[str, str]] = {}  # driver's local arrays: name -> (C type, size)
        self.views: dict[str, str] = {}
        self.lines: list[str] = []

    # ---------------------------------------------------------------- expressions
    def ex(self, n: ast.expr) -> tuple[str, str]:
        """(C text, type "i"/"f"/"d") of an expression."""
        if isinstance(n, ast.Constant):
            v = n.value
            if isinstance(v, bool):
                return ("1" if v else "0"), "i"
            if isinstance(v, int):
                return _int(v), "i"
            if isinstance(v, float):
                return repr(v) if v == v and abs(v) != float("inf") else "NAN", "d"
            raise _bad(n, "a constant")
        if isinstance(n, ast.Name):
            if n.id in ("True", "False"):
                return ("1" if n.id == "True" else "0"), "i"
            t = "f" if n.id[:2] in ("f_", "x_") else "i"
            if self.lane is not None:
                if n.id == "l":
                    return "(c_ + j_)", "i"
                if n.id in self.lane:
                    return f"V{n.id}[j_]", t
                if self.vdecls.get(n.id, ("", 0))[1]:  # a chunk's own lane array (clanes: loaded words)
                    return f"{n.id}[j_]", "i"
            return n.id, t
        if isinstance(n, ast.BinOp):
            return self.binop(n)
        if isinstance(n, ast.UnaryOp):
            x, t = self.ex(n.operand)
            if isinstance(n.op, ast.USub):
                return f"(-{x})", t
            if isinstance(n.op, ast.Invert) and t == "i":
                return f"(~{x})", t
            if isinstance(n.op, ast.Not):
                return f"(!{x})", "i"
            raise _bad(n, "a unary operator")
        if isinstance(n, ast.BoolOp):
            op = " && " if isinstance(n.op, ast.And) else " || "
            return "(" + op.join(self.truth(v) for v in n.values) + ")", "i"
        if isinstance(n, ast.Compare):
            odd = self.odd_test(n)
            if odd is not None:
                return odd, "i"
            parts = []
            left = n.left
            for op, right in zip(n.ops, n.comparators):
                a, b = self.promote(left, right)
                sym = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}.get(
                    type(op)
                )
                if sym is None:
                    raise _bad(n, "a comparison")
                parts.append(f"({a} {sym} {b})")
                left = right
            return ("(" + " && ".join(parts) + ")" if len(parts) > 1 else parts[0]), "i"
        if isinstance(n, ast.IfExp):
            a, b = self.promote(n.body, n.orelse)
            t = self.joint(self.ex(n.body)[1], self.ex(n.orelse)[1])
            return f"({self.truth(n.test)} ? {a} : {b})", t
        if isinstance(n, ast.Call):
            return self.call(n)
        if isinstance(n, ast.Subscript):
            return self.subscript(n), "i"
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "args" and n.attr == "size":
            return "nargs", "i"
        raise _bad(n, "an expression")

    def odd_test(self, n: ast.Compare) -> str | None:
        """`(x & 1) != 0` (or `== 0`) in a chunked lane loop, spelt so that GCC does not fold it
        into a 1-bit conversion, which its vectoriser refuses ("bit-precision arithmetic")."""
        if self.lane is None or len(n.ops) != 1 or not isinstance(n.ops[0], (ast.Eq, ast.NotEq)):
            return None
        left, right = n.left, n.comparators[0]
        if not (
            isinstance(right, ast.Constant)
            and right.value == 0
            and isinstance(left, ast.BinOp)
            and isinstance(left.op, ast.BitAnd)
            and isinstance(left.right, ast.Constant)
            and left.right.value == 1
        ):
            return None
        x, t = self.ex(left.left)
        if t != "i":
            return None
        return f"((({x} + 1) & -2LL) {'!=' if isinstance(n.ops[0], ast.NotEq) else '=='} ({x}))"

    def truth(self, n: ast.expr) -> str:
        x, t = self.ex(n)
        return x if t == "i" else f"({x} != 0)"

    @staticmethod
    def joint(a: str, b: str) -> str:
        """numba's type of an operation on types a and b (float32 with an integer is float64)."""
        if a == b:
            return a
        return "d"

    def promote(self, x: ast.expr, y: ast.expr) -> tuple[str, str]:
        (a, ta), (b, tb) = self.ex(x), self.ex(y)
        t = self.joint(ta, tb)
        return (a if ta == t else f"(({_CT[t]}){a})"), (b if tb == t else f"(({_CT[t]}){b})")

    def binop(self, n: ast.BinOp) -> tuple[str, str]:
        op = type(n.op)
        (a, ta), (b, tb) = self.ex(n.left), self.ex(n.right)
        if op is ast.Div:
            t = "f" if ta == tb == "f" else "d"
            a, b = self.promote(n.left, n.right) if t == "f" else (f"((double){a})", f"((double){b})")
            return f"({a} / {b})", t
        ints = {
            ast.BitAnd: "&",
            ast.BitOr: "|",
            ast.BitXor: "^",
            ast.LShift: "<<",
            ast.RShift: ">>",
            ast.FloorDiv: "/",
            ast.Mod: "%",
        }
        if op in ints:
            if ta != "i" or tb != "i":
                raise _bad(n, "an integer operator on floats")
            # // and % only ever see non-negative operands here (lane ids, workgroup ids)
            return f"({a} {ints[op]} {b})", "i"
        arith = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*"}
        if op in arith:
            t = self.joint(ta, tb)
            a, b = self.promote(n.left, n.right)
            return f"({a} {arith[op]} {b})", t
        raise _bad(n, "a binary operator")

    def call(self, n: ast.Call) -> tuple[str, str]:
        f = n.func
        if n.keywords:
            raise _bad(n, "keyword arguments")
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "np":
            (x, t) = self.ex(n.args[0])
            if f.attr in _NP_CAST:
                rt, cast = _NP_CAST[f.attr]
                return (x if t == rt else f"({cast}{x})"), rt
            if f.attr in _LIBM:
                if t == "f":
                    return f"{f.attr}f({x})", "f"
                return f"{f.attr}({x if t == 'd' else f'(double){x}'})", "d"
            raise _bad(n, f"np.{f.attr}")
        if not isinstance(f, ast.Name):
            raise _bad(n, "a call")
        name = f.id
        if name == "bool":
            return f"({self.truth(n.args[0])} != 0)", "i"
        if name in ("min", "max", "abs"):
            args = [self.ex(a) for a in n.args]
            if any(t != "i" for _, t in args):
                raise _bad(n, f"{name} of floats")
            c = {"min": "imin", "max": "imax", "abs": "iabs"}[name]
            return f"{c}({', '.join(x for x, _ in args)})", "i"
        if name in self.sigs:  # a function of this module: L and W are constants, not passed
            params = self.sigs[name]
            args = [self.ex(a)[0] for p, a in zip(params, n.args) if p not in _CONSTS]
            return f"{name}({', '.join(args)})", "i"
        args = [self.ex(a) for a in n.args]
        if name in POLYMORPHIC:
            t = "d" if any(t == "d" for _, t in args) else "f"
            name = POLYMORPHIC[name][t == "d"]
            args = [(x if tx == t else f"(({_CT[t]}){x})", t) for x, tx in args]
        want = ARGS.get(name)
        if want is not None:
            args = [(x if tx == want else f"(({_CT[want]}){x})", want) for x, tx in args]
        spelt = _CHUNK_FORM.get(name, name) if self.lane is not None else name
        return f"{spelt}({', '.join(x for x, _ in args)})", RETURNS.get(name, "i")

    def subscript(self, n: ast.Subscript) -> str:
        if not isinstance(n.value, ast.Name):
            raise _bad(n, "a subscript")
        arr = n.value.id
        s = n.slice
        if isinstance(s, ast.Tuple):
            if arr not in _TWO_D or len(s.elts) != 2 or any(isinstance(e, ast.Slice) for e in s.elts):
                raise _bad(n, "a two-dimensional subscript")
            return f"{arr}[({self.ex(s.elts[0])[0]}) * L + ({self.ex(s.elts[1])[0]})]"
        if isinstance(s, ast.Slice):
            raise _bad(n, "a slice")
        i, t = self.ex(s)
        if t != "i":
            raise _bad(n, "a float index")
        if self.lane is not None and arr in MEMORY:
            # a lane outside the mask reads word 0 (clanes: its index ANDed with -ok_, not
            # `ok_ ? i : 0`, which GCC made a masked load of word 0 it cannot vectorise in a
            # loop of several loads); 8- and 16-bit loads read their
            # 32-bit word and shift (x86 has no 8- or 16-bit gather: GCC would keep the loop
            # scalar); a memory's buffer is a whole number of 16-byte lines (memory.pad16)
            width = int(arr[2:])
            if width == 32:
                return f"{arr}[(int)(({i}) & -ok_)]"
            per = 32 // width
            word = f"((const u32 *)(const void *){arr})[(int)((({i}) >> {per.bit_length() - 1}) & -ok_)]"
            return f"(({word} >> WAVE_SUB_SHIFT({i}, {per}, {width})) & {(1 << width) - 1})"
        return f"{arr}[{i}]"

    # ---------------------------------------------------------------- statements
    def put(self, ind: int, text: str) -> None:
        self.lines.append("    " * ind + text)

    def body(self, stmts: list[ast.stmt], ind: int) -> None:
        for s in stmts:
            self.stmt(s, ind)

    def stmt(self, s: ast.stmt, ind: int) -> None:
        if isinstance(s, ast.Assign):
            if len(s.targets) != 1:
                raise _bad(s, "a multiple assignment")
            self.assign(s.targets[0], s.value, ind)
        elif isinstance(s, ast.AugAssign):
            op = {ast.Add: "+=", ast.Sub: "-=", ast.BitOr: "|=", ast.BitAnd: "&=", ast.BitXor: "^=", ast.LShift: "<<="}
            sym = op.get(type(s.op))
            if sym is None or not isinstance(s.target, ast.Name):
                raise _bad(s, "an augmented assignment")
            x, _ = self.ex(s.value)
            self.put(ind, f"{self.ex(s.target)[0]} {sym} {x};")
        elif isinstance(s, ast.If):
            self.put(ind, f"if ({self.truth(s.test)}) {{")
            self.body(s.body, ind + 1)
            orelse = s.orelse
            while len(orelse) == 1 and isinstance(orelse[0], ast.If):
                e = orelse[0]
                self.put(ind, f"}} else if ({self.truth(e.test)}) {{")
                self.body(e.body, ind + 1)
                orelse = e.orelse
            if orelse:
                self.put(ind, "} else {")
                self.body(orelse, ind + 1)
            self.put(ind, "}")
        elif isinstance(s, ast.While):
            if s.orelse:
                raise _bad(s, "while-else")
            test = s.test
            cond = "" if isinstance(test, ast.Constant) and test.value is True else self.truth(test)
            self.put(ind, f"for (; {cond};) {{" if cond else "for (;;) {")
            self.body(s.body, ind + 1)
            self.put(ind, "}")
        elif isinstance(s, ast.For):
            self.for_range(s, ind)
        elif isinstance(s, ast.Break):
            self.put(ind, "break;")
        elif isinstance(s, ast.Continue):
            self.put(ind, "continue;")
        elif isinstance(s, ast.Pass):
            pass
        elif isinstance(s, ast.Return):
            if self.entry:
                self.put(ind, "goto out;")
            elif s.value is None:
                self.put(ind, "return 0;")
            else:
                self.put(ind, f"return {self.ex(s.value)[0]};")
        elif isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
            self.put(ind, self.call(s.value)[0] + ";")
        elif isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant):
            pass  # a docstring
        else:
            raise _bad(s, "a statement")

    def for_range(self, s: ast.For, ind: int) -> None:
        body = lane_loop_body(s) if self.chunk else None
        if body is not None and self.chunk:
            mark, decls = len(self.lines), dict(self.vdecls)
            try:
                Chunked(self, body, self.chunk, heavy_only=not self.every).write(ind)
                return
            except Scalar:
                del self.lines[mark:]
                self.vdecls = decls
        it = s.iter
        if not (
            isinstance(s.target, ast.Name)
            and isinstance(it, ast.Call)
            and isinstance(it.func, ast.Name)
            and it.func.id == "range"
            and 1 <= len(it.args) <= 2
            and not s.orelse
        ):
            raise _bad(s, "a loop other than over a range")
        lo, hi = ("0LL", self.ex(it.args[0])[0]) if len(it.args) == 1 else (self.ex(a)[0] for a in it.args)
        v = s.target.id
        self.put(ind, f"for ({v} = {lo}; {v} < {hi}; {v}++) {{")
        self.body(s.body, ind + 1)
        self.put(ind, "}")

    def assign(self, target: ast.expr, value: ast.expr, ind: int) -> None:
        if isinstance(target, ast.Name) and target.id in _CONSTS:
            return  # `L = 256`: a constant of the file
        if isinstance(target, ast.Name) and self.entry and self.allocation(target.id, value):
            return
        if isinstance(target, ast.Subscript) and isinstance(target.slice, (ast.Slice, ast.Tuple)):
            s = target.slice
            arr = target.value.id  # type: ignore[attr-defined]
            if isinstance(s, ast.Slice) and s.lower is None and s.upper is None and arr in self.arrays:
                self.put(ind, f"memset({arr}, 0, sizeof(*{arr}) * ({self.arrays[arr][1]}));")
                if not (isinstance(value, ast.Constant) and value.value in (0, False)):
                    raise _bad(target, "a whole-array fill other than zero")
                return
            if isinstance(s, ast.Tuple) and len(s.elts) == 2 and isinstance(s.elts[1], ast.Slice):
                row = self.ex(s.elts[0])[0]
                x, _ = self.ex(value)
                self.put(ind, f"for (i64 i_ = 0; i_ < L; i_++) {arr}[({row}) * L + i_] = {x};")
                return
        if isinstance(target, ast.Subscript):
            x, _ = self.ex(value)
            self.put(ind, f"{self.subscript(target)} = {x};")
            return
        if not isinstance(target, ast.Name):
            raise _bad(target, "an assignment target")
        x, t = self.ex(value)
        want = "f" if target.id[:2] in ("f_", "x_") else "i"
        if t != want and want == "f" and t == "d":
            raise _bad(value, "a float64 value in a float32 local")
        self.put(ind, f"{self.ex(target)[0]} = {x};")

    def allocation(self, name: str, value: ast.expr) -> bool:
        """The driver's `np.zeros(shape, dtype)` and `.view(dtype)`: C arrays."""
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
            f = value.func
            if f.attr == "zeros" and len(value.args) == 2:
                shape, dtype = value.args
                dims = shape.elts if isinstance(shape, ast.Tuple) else [shape]
                size = " * ".join(f"({self.ex(d)[0]})" for d in dims)
                ct = _DTYPE[dtype.attr]  # type: ignore[attr-defined]
                self.arrays[name] = (ct, size)
                return True
            if f.attr == "view" and isinstance(f.value, ast.Name):
                ct = _DTYPE[value.args[0].attr]  # type: ignore[attr-defined]
                self.views[name] = f"{ct} *{name} = ({ct} *){f.value.id};"
                return True
        return False

    # ---------------------------------------------------------------- the function
    def locals_(self) -> list[str]:
        names: dict[str, None] = {}
        for node in ast.walk(self.fn):
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.For)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    if isinstance(t, ast.Name) and t.id not in self.params and t.id not in _CONSTS:
                        names[t.id] = None
        return list(names)

    def text(self) -> list[str]:
        self.body(self.fn.body, 1)
        body = self.lines
        decls = [n for n in self.locals_() if n not in self.arrays and n not in self.views]
        ints = [n for n in decls if n[:2] not in ("f_", "x_")]
        floats = [n for n in decls if n[:2] in ("f_", "x_")]
        head: list[str] = []
        for i in range(0, len(ints), 12):
            head.append("    i64 " + ", ".join(f"{n} = 0" for n in ints[i : i + 12]) + ";")
        for i in range(0, len(floats), 12):
            head.append("    float " + ", ".join(f"{n} = 0" for n in floats[i : i + 12]) + ";")
        if self.vdecls:
            head.append("    i64 c_ = 0, j_ = 0;")
            for n, (ct, vl) in self.vdecls.items():
                head.append(f"    {ct} {n}[{vl}] __attribute__((aligned(64)));" if vl else f"    {ct} {n} = 0;")
        name = self.fn.name
        if self.entry:
            sig = [f"{_POINTER.get(p, 'i64 ').rstrip()} {p}".replace("* ", "*") for p in ENTRY_PARAMS]
            out = [f"i64 {ENTRY}({', '.join(sig)}) {{", "    i64 fail_ = 0;"]
            out += [f"    u16 *{p}16 = (u16 *){p}8;" for p in ("gm", "cm")]
            out += [f"    u32 *{p}32 = (u32 *){p}8;" for p in ("gm", "cm")]
            for arr, (ct, size) in self.arrays.items():
                # restrict: nothing else reaches these (local memory's views do alias lm8)
                q = "" if any(v.endswith(f"*){arr};") for v in self.views.values()) else "restrict "
                out.append(f"    {ct} *{q}{arr} = ({ct} *)calloc({size}, sizeof({ct}));")
            ok = " && ".join(self.arrays) or "1"
            out.append(f"    if (!({ok})) {{ fail_ = -1; goto out; }}")
            out += ["    " + v for v in self.views.values()]
            out += head + body + ["out:", *(f"    free({a});" for a in self.arrays), "    return fail_;", "}"]
            return out
        params = [p for p in self.params if p not in _CONSTS]
        sig = [f"{_POINTER.get(p, 'i64 ').rstrip()} {p}".replace("* ", "*") for p in params]
        return [f"static i64 {name}({', '.join(sig)}) {{", *head, *body, "    return 0;", "}"]


@functools.lru_cache(maxsize=1)
def _rows() -> dict[str, ast.FunctionDef]:
    tree = ast.parse(rows_module())
    return {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}


LANE_MODES = ("auto", "chunked", "scalar")
"""Which lane loops the C translation writes in chunks of lanes (clanes.py): `auto` (the
default) the heavy lane-by-lane loops (clanes.HEAVY), `chunked` every lane loop it can (the
tests of the chunks run this way), `scalar` none (the C before the chunks, to compare)."""


def lane_mode() -> str:
    """$WAVEGPU_C_LANES when it names one of LANE_MODES, else `auto` (part of the cache key,
    cbuild.key_of)."""
    env = os.environ.get("WAVEGPU_C_LANES", "").strip().lower()
    return env if env in LANE_MODES else "auto"


def translate(source: str, mode: str | None = None) -> str:
    """The C file of a generated module's source (`codegen.generate`; raises CUntranslatable),
    its lane loops written as lane mode `mode` says (LANE_MODES; None: `lane_mode()`)."""
    if mode is None:
        mode = lane_mode()
    tree = ast.parse(source)
    funcs = [f for f in tree.body if isinstance(f, ast.FunctionDef)]
    used: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("_wavegpu_compiled_rows"):
            used += [a.name for a in node.names]
    rows = _rows()
    row_defs = [rows[n] for n in used]
    sigs = {f.name: [a.arg for a in f.args.args] for f in [*row_defs, *funcs]}
    consts: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            t = node.targets[0]
            if isinstance(t, ast.Name) and t.id in _CONSTS and isinstance(node.value, ast.Constant):
                consts[t.id] = str(node.value.value)
    missing = [c for c in _CONSTS if c not in consts]
    if missing:
        raise CUntranslatable(f"the driver does not set {', '.join(missing)}")
    chunk = chunk_width(int(consts["L"])) if mode != "scalar" else None
    # atomics and wave operations: lanes in order, one at a time (never chunked)
    texts = [Func(f, sigs).text() for f in row_defs]
    texts += [Func(f, sigs, entry=f.name == "run_range", chunk=chunk, every=mode == "chunked").text() for f in funcs]
    return _file(texts, consts)


PART = "WAVE_PART"
"""The macro that selects one part of a C file's functions (`cbuild` compiles the parts in
parallel: `-DWAVE_PART=p` for p < the file's PARTS); without it the file is one whole unit."""


def _file(texts: list[list[str]], consts: dict[str, str]) -> str:
    """One C file of the functions' texts: the runtime, the constants, a declaration of every
    function, then each definition in its part (`#if` on PART): the functions are spread over
    parts of about equal length, the entry point (last) in the part with the fewest lines. The
    functions other than the entry point have hidden visibility, so the parts link into one
    object that exports only the entry point."""
    n = max(1, min(PARTS_MAX, sum(len(t) for t in texts) // PART_LINES))
    sizes = [0] * n
    where: list[int] = []
    for t in texts:
        p = sizes.index(min(sizes))
        where.append(p)
        sizes[p] += len(t)
    out = [SOURCE, *(f"#define {c} {consts[c]}LL" for c in _CONSTS), f"#define {PART}S {n}", ""]
    hidden = "static" if n == 1 else '__attribute__((visibility("hidden")))'
    for t in texts:
        head = t[0]
        if head.startswith("static "):
            out.append(f"{hidden} {head[len('static ') :].rstrip(' {')};")
    out.append("")
    for t, p in zip(texts, where):
        head = t[0]
        if head.startswith("static "):
            head = f"{hidden} {head[len('static ') :]}"
        out += [f"#if !defined({PART}) || {PART} == {p}", head, *t[1:], "#endif", ""]
    return "\n".join(out)


PARTS_MAX = 4
"""The most parts a C file is cut into (cbuild compiles at most one per available core)."""
PART_LINES = 1200
"""Lines of functions per part, at least (a second compiler process reads the runtime again).
Measured on 2 cores, cold first calls (docs/performance.md, "SIMD across lanes"): 2,500 lines a
part left the Rust toolchain's GEMM files in one part (gemm_bias_relu_f16 3.85 s wall), 1,200
cut them in two (2.29 s wall, the same CPU time); examples/sgemm_8x8 5.59 -> 4.47 s."""


def generate_c(k: Kernel, shape: Shape) -> str:
    """The C translation of kernel k launched with `shape` (raises codegen.Unsupported, or
    CUntranslatable)."""
    return translate(generate(k, shape))
