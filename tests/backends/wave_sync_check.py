"""A static check over C-family helper source (the CUDA, HIP and Metal preludes): every wave
primitive must be executed by every lane that entered the helper, so none may sit under a
condition that depends on the lane.

What counts as lane-dependent (a taint analysis over each function, to a fixed point):
- the function's parameters, except those of type `wv_mask` (the active set, the same in every
  lane of it by the helpers' contract);
- the lane's position (`wv_lane`, `__lane_id`, `threadIdx`, `get_sub_group_local_id`, ...);
- the result of a shuffle (per-lane data); not that of a ballot/any/all (the same in the mask);
- a variable assigned from a lane-dependent value, or assigned under a lane-dependent condition
  (an implicit flow), or in a loop that lanes may leave at different trips.
A primitive (after macro expansion: `__shfl*`, `__ballot*`, `__any*`, `__all*`, `__syncwarp`,
`__reduce_*`, `__match_*`, `simd_*`, `quad_*`, `__builtin_amdgcn_*`, `sub_group_*`), or a call of a
function that executes one, is reported when an enclosing `if`, loop condition, `?:` condition or
left operand of `&&`/`||` is lane-dependent, when it follows a `return` (or comes in a loop after
a `break`/`continue`) taken under such a condition, or when its mask argument is lane-dependent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

SYNC = re.compile(
    r"^(__shfl\w*|__ballot\w*|__any\w*|__all\w*|__syncwarp|__reduce_\w+|__match_\w+|simd_\w+|quad_\w+"
    r"|__builtin_amdgcn_\w+|sub_group_\w+)$"
)
# results that are the same in every lane of the mask
UNIFORM_RESULT = re.compile(
    r"^(__ballot\w*|__any\w*|__all\w*|simd_ballot|simd_any|simd_all|simd_active_threads_mask|sub_group_ballot|sub_group_any|sub_group_all|__activemask)$"
)
LANE = {"wv_lane", "__lane_id", "threadIdx", "get_sub_group_local_id", "get_local_id", "get_global_id", "me_"}
MASK_TYPES = {"wv_mask"}
TYPE_WORDS = {
    "uint", "int", "unsigned", "signed", "short", "long", "char", "float", "double", "bool", "void", "const",
    "ushort", "uchar", "ulong", "wv_ulong", "wv_mask", "wv_wide", "static", "inline", "volatile", "size_t",
}  # fmt: skip

TOKEN = re.compile(
    r"\s+|//[^\n]*|/\*.*?\*/|(?P<tok>[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*|0[xX][0-9a-fA-F]*\.?[0-9a-fA-F]*(?:[pP][-+]?\d+)?[fFuUlL]*"
    r"|\d+\.?\d*(?:[eE][-+]?\d+)?[fFuUlL]*|\.\d+(?:[eE][-+]?\d+)?[fF]?|\"(?:\\.|[^\"])*\"|'(?:\\.|[^'])*'"
    r"|<<=|>>=|->|\+\+|--|&&|\|\||==|!=|<=|>=|<<|>>|[-+*/%&|^]=|[-+*/%&|^~!<>=?:;,.(){}\[\]#])",
    re.S,
)


def tokens(text: str) -> list[str]:
    out, pos = [], 0
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if m is None:
            raise ValueError(f"cannot tokenise at {text[pos : pos + 40]!r}")
        if m.group("tok"):
            out.append(m.group("tok"))
        pos = m.end()
    # C++ template casts (as_type<float>(...)) become one name
    merged: list[str] = []
    i = 0
    while i < len(out):
        if out[i] in ("as_type", "static_cast", "reinterpret_cast") and i + 1 < len(out) and out[i + 1] == "<":
            j = out.index(">", i)
            merged.append(out[i] + "<" + " ".join(out[i + 2 : j]) + ">")
            i = j + 1
            continue
        merged.append(out[i])
        i += 1
    return merged


def preprocess(text: str) -> list[str]:
    """The source's tokens with every #define expanded (other directives dropped)."""
    macros: dict[str, tuple[list[str] | None, list[str]]] = {}
    body: list[str] = []
    lines = text.replace("\\\n", " ").splitlines()
    for ln in lines:
        s = ln.strip()
        if s.startswith("#"):
            m = re.match(r"#\s*define\s+(\w+)(\(([^)]*)\))?\s*(.*)", s)
            if m:
                params = [p.strip() for p in m.group(3).split(",")] if m.group(2) else None
                macros[m.group(1)] = (params if params != [""] else [], tokens(re.sub(r"/\*.*?\*/", "", m.group(4))))
            continue
        body.append(ln)
    return expand(tokens("\n".join(body)), macros, frozenset())


def _args(toks: list[str], i: int) -> tuple[list[list[str]], int]:
    """The comma-separated arguments of the call whose '(' is at toks[i]; the index after ')'."""
    depth, cur, args = 0, [], []
    j = i
    while True:
        t = toks[j]
        if t in "([{" and len(t) == 1:
            depth += 1
            if depth > 1:
                cur.append(t)
        elif t in ")]}" and len(t) == 1:
            depth -= 1
            if depth == 0:
                args.append(cur)
                return args, j + 1
            cur.append(t)
        elif t == "," and depth == 1:
            args.append(cur)
            cur = []
        else:
            cur.append(t)
        j += 1


def expand(toks: list[str], macros: dict[str, tuple[list[str] | None, list[str]]], hide: frozenset[str]) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(toks):
        t = toks[i]
        if t in macros and t not in hide:
            params, repl = macros[t]
            if params is None:
                out += expand(repl, macros, hide | {t})
                i += 1
                continue
            if i + 1 < len(toks) and toks[i + 1] == "(":
                args, nxt = _args(toks, i + 1)
                args = [expand(a, macros, hide) for a in args]
                sub: list[str] = []
                for r in repl:
                    if r in params and params.index(r) < len(args):
                        sub += ["(", *args[params.index(r)], ")"]
                    else:
                        sub.append(r)
                out += expand(sub, macros, hide | {t})
                i = nxt
                continue
        out.append(t)
        i += 1
    return out


# ------------------------------------------------------------------ parsing
@dataclass
class Node:
    kind: str
    kids: list[object] = field(default_factory=list)
    name: str = ""


PREC = [
    ["|"], ["^"], ["&"], ["==", "!="], ["<", ">", "<=", ">="], ["<<", ">>"], ["+", "-"], ["*", "/", "%"],
]  # fmt: skip
ASSIGN = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="}


class Expr:
    def __init__(self, toks: list[str]):
        self.t, self.i = toks, 0

    def peek(self, k: int = 0) -> str:
        return self.t[self.i + k] if self.i + k < len(self.t) else ""

    def take(self) -> str:
        self.i += 1
        return self.t[self.i - 1]

    def parse(self) -> Node:
        n = self.comma()
        if self.i != len(self.t):
            raise ValueError(f"unparsed: {' '.join(self.t[self.i : self.i + 12])}")
        return n

    def comma(self) -> Node:
        items = [self.assign()]
        while self.peek() == ",":
            self.take()
            items.append(self.assign())
        return items[0] if len(items) == 1 else Node("seq", items)

    def assign(self) -> Node:
        lhs = self.ternary()
        if self.peek() in ASSIGN:
            op = self.take()
            return Node("assign", [lhs, self.assign()], op)
        return lhs

    def ternary(self) -> Node:
        c = self.logical("||")
        if self.peek() == "?":
            self.take()
            a = self.assign()
            assert self.take() == ":"
            b = self.assign()
            return Node("?:", [c, a, b])
        return c

    def logical(self, op: str) -> Node:
        sub = (lambda: self.logical("&&")) if op == "||" else (lambda: self.binary(0))
        n = sub()
        while self.peek() == op:
            self.take()
            n = Node(op, [n, sub()])
        return n

    def binary(self, level: int) -> Node:
        if level == len(PREC):
            return self.unary()
        n = self.binary(level + 1)
        while self.peek() in PREC[level]:
            op = self.take()
            n = Node("bin", [n, self.binary(level + 1)], op)
        return n

    def is_cast(self) -> bool:
        if self.peek() != "(":
            return False
        j = self.i + 1
        while j < len(self.t) and (self.t[j] == "*" or re.match(r"[A-Za-z_]", self.t[j])):
            j += 1
        if j == self.i + 1 or j >= len(self.t) or self.t[j] != ")":
            return False
        nxt = self.t[j + 1] if j + 1 < len(self.t) else ""
        return bool(nxt) and (nxt in ("(", "!", "~") or bool(re.match(r"[A-Za-z_0-9.]", nxt)))

    def unary(self) -> Node:
        t = self.peek()
        if t in ("!", "~", "-", "+", "*", "&", "++", "--"):
            self.take()
            return Node("un", [self.unary()], t)
        if self.is_cast():
            while self.take() != ")":
                pass
            return Node("cast", [self.unary()])
        return self.postfix(self.primary())

    def primary(self) -> Node:
        t = self.take()
        if t == "(":
            n = self.comma()
            assert self.take() == ")"
            return n
        if re.match(r"[0-9.'\"]", t):
            return Node("num")
        if not re.match(r"[A-Za-z_]", t):
            raise ValueError(f"unexpected {t!r}")
        name = t
        while re.match(r"[A-Za-z_]", self.peek()) and self.peek(1) not in ("",):  # `unsigned short`
            if self.peek(1) in (")", ",", "(") and name in TYPE_WORDS:
                name = self.take()
            else:
                break
        return Node("id", name=name)

    def postfix(self, n: Node) -> Node:
        while True:
            t = self.peek()
            if t == "(":
                self.take()
                args = []
                if self.peek() != ")":
                    args.append(self.assign())
                    while self.peek() == ",":
                        self.take()
                        args.append(self.assign())
                assert self.take() == ")"
                n = Node("call", args, n.name if n.kind == "id" else "")
            elif t == "[":
                self.take()
                idx = self.comma()
                assert self.take() == "]"
                n = Node("index", [n, idx])
            elif t in (".", "->"):
                self.take()
                field_ = self.take()
                n = Node("id", name=n.name) if n.kind == "id" and n.name in LANE else Node("member", [n], field_)
            elif t in ("++", "--"):
                self.take()
                n = Node("un", [n], t)
            else:
                return n


class Stmts:
    """Statements of a function body: block, if, for, while, do, return, break, continue, expr
    (a declaration becomes its initialising assignments)."""

    def __init__(self, toks: list[str]):
        self.t, self.i = toks, 0

    def until(self, stop: str) -> list[str]:
        depth, out = 0, []
        while True:
            t = self.t[self.i]
            if depth == 0 and t == stop:
                self.i += 1
                return out
            if t in ("(", "[", "{"):
                depth += 1
            elif t in (")", "]", "}"):
                depth -= 1
            out.append(t)
            self.i += 1

    def paren(self) -> Node:
        assert self.t[self.i] == "("
        self.i += 1
        return expr(self.until(")"))

    def stmt(self) -> Node:
        t = self.t[self.i]
        if t == "{":
            self.i += 1
            body = []
            while self.t[self.i] != "}":
                body.append(self.stmt())
            self.i += 1
            return Node("block", body)
        if t == "if":
            self.i += 1
            c = self.paren()
            then = self.stmt()
            other = Node("block")
            if self.i < len(self.t) and self.t[self.i] == "else":
                self.i += 1
                other = self.stmt()
            return Node("if", [c, then, other])
        if t == "for":
            self.i += 2
            init = decl_or_expr(self.until(";"))
            cond = expr(self.until(";")) if self.t[self.i] != ";" else Node("num")
            if self.t[self.i - 1] != ";":
                pass
            step = expr(self.until(")"))
            return Node("loop", [init, cond, self.stmt(), step])
        if t == "while":
            self.i += 1
            c = self.paren()
            return Node("loop", [Node("num"), c, self.stmt(), Node("num")])
        if t == "do":
            self.i += 1
            body = self.stmt()
            assert self.t[self.i] == "while"
            self.i += 1
            c = self.paren()
            assert self.t[self.i] == ";"
            self.i += 1
            return Node("loop", [Node("num"), c, body, Node("num")])
        if t in ("return", "break", "continue"):
            self.i += 1
            rest = self.until(";")
            return Node(t, [expr(rest)] if rest else [])
        return decl_or_expr(self.until(";"))


def expr(toks: list[str]) -> Node:
    if not toks or toks[0] in ("asm", "__asm__"):  # inline assembly: no wave primitive (checked below)
        if any(SYNC.match(t) for t in toks):
            raise ValueError(f"a wave primitive in inline assembly: {' '.join(toks)}")
        return Node("num")
    try:
        return Expr(toks).parse()
    except (AssertionError, IndexError, ValueError) as e:
        raise ValueError(f"cannot parse {' '.join(toks)!r}: {e}") from None


def decl_or_expr(toks: list[str]) -> Node:
    """`type a = e, b = f` -> the assignments; anything else an expression."""
    j = 0
    while j < len(toks) and (toks[j] in TYPE_WORDS or toks[j] == "*"):
        j += 1
    if j and j < len(toks) and re.match(r"[A-Za-z_]", toks[j]):
        parts, depth, cur = [], 0, []
        for t in toks[j:]:
            if t in ("(", "[", "{"):
                depth += 1
            elif t in (")", "]", "}"):
                depth -= 1
            if t == "," and depth == 0:
                parts.append(cur)
                cur = []
            else:
                cur.append(t)
        parts.append(cur)
        out = []
        for p in parts:
            while p and p[0] == "*":
                p = p[1:]
            if "=" in p:
                k = p.index("=")
                out.append(Node("assign", [Node("id", name=p[0]), expr(p[k + 1 :])], "="))
            else:
                out.append(Node("assign", [Node("id", name=p[0]), Node("num")], "="))
        return Node("block", out)
    return expr(toks)


@dataclass
class Function:
    name: str
    params: list[tuple[str, bool]]  # (name, uniform)
    body: Node


def functions(toks: list[str]) -> list[Function]:
    """Top-level function definitions: `... name ( params ) { body }`."""
    out, i = [], 0
    while i < len(toks):
        if toks[i] == "(" and i > 0 and re.match(r"[A-Za-z_]", toks[i - 1]):
            args, j = _args(toks, i)
            if j < len(toks) and toks[j] == "{":
                params = []
                for a in args:
                    a = [t for t in a if t not in ("*", "&")]
                    if a and a != ["void"]:
                        params.append((a[-1], any(t in MASK_TYPES for t in a[:-1])))
                s = Stmts(toks)
                s.i = j
                body = s.stmt()
                out.append(Function(toks[i - 1], params, body))
                i = s.i
                continue
        i += 1
    return out


# ------------------------------------------------------------------ the analysis
@dataclass
class Found:
    calls: int = 0
    problems: list[str] = field(default_factory=list)


class Analysis:
    def __init__(self, fn: Function, syncing: set[str], tainted_results: dict[str, bool]):
        self.fn, self.syncing, self.results = fn, syncing, tainted_results
        self.tainted = {p for p, uniform in fn.params if not uniform}
        self.problems: list[str] = []
        self.calls = 0
        self.has_sync = False
        self.returns_tainted = False

    def run(self) -> None:
        while True:  # to a fixed point of the tainted set
            before = (set(self.tainted), self.returns_tainted)
            self.problems, self.calls, self.diverged = [], 0, False
            self.stmt(self.fn.body, [], [])
            if (self.tainted, self.returns_tainted) == before:
                return

    # expressions: (tainted?), reporting sync calls under guards
    def ex(self, n: object, guards: list[str]) -> bool:
        assert isinstance(n, Node)
        k = n.kind
        if k == "num":
            return False
        if k == "id":
            return n.name in self.tainted or n.name in LANE
        if k == "call":
            args = [self.ex(a, guards) for a in n.kids]
            if SYNC.match(n.name) or n.name in self.syncing:
                self.calls += 1
                self.has_sync = True
                bad = [g for g in guards if g]
                if self.diverged:
                    bad.append("after a lane-dependent return")
                if bad:
                    self.problems.append(f"{self.fn.name}: {n.name} under {bad[0]}")
                if n.name.endswith("_sync") and n.kids and args[0]:
                    self.problems.append(f"{self.fn.name}: {n.name} with a lane-dependent mask")
                if UNIFORM_RESULT.match(n.name):
                    return False
                if SYNC.match(n.name):
                    return True
            if n.name in LANE:
                return True
            return self.results.get(n.name, False) or any(args)
        if k == "?:":
            c = self.ex(n.kids[0], guards)
            g = [*guards, "a lane-dependent ?:" if c else ""]
            return self.ex(n.kids[1], g) | self.ex(n.kids[2], g) | c
        if k in ("&&", "||"):
            a = self.ex(n.kids[0], guards)
            b = self.ex(n.kids[1], [*guards, f"a lane-dependent {k}" if a else ""])
            return a or b
        if k == "assign":
            rhs = self.ex(n.kids[1], guards)
            target = n.kids[0]
            assert isinstance(target, Node)
            lhs = self.ex(target, guards) if target.kind != "id" else False
            while isinstance(target, Node) and target.kind in ("index", "member", "un") and target.kids:
                target = target.kids[0]
            if isinstance(target, Node) and target.kind == "id" and (rhs or lhs or any(guards)):
                self.tainted.add(target.name)
            return rhs or (isinstance(target, Node) and target.name in self.tainted)
        if k == "un" and n.name in ("++", "--"):
            t = self.ex(n.kids[0], guards)
            target = n.kids[0]
            if isinstance(target, Node) and target.kind == "id" and any(guards):
                self.tainted.add(target.name)
            return t
        return any([self.ex(c, guards) for c in n.kids])

    def stmt(self, n: Node, guards: list[str], loops: list[Node]) -> None:
        k = n.kind
        if k == "block":
            for c in n.kids:
                assert isinstance(c, Node)
                self.stmt(c, guards, loops)
        elif k == "if":
            c = self.ex(n.kids[0], guards)
            g = [*guards, "a lane-dependent if" if c else ""]
            for c2 in n.kids[1:]:
                assert isinstance(c2, Node)
                self.stmt(c2, g, loops)
        elif k == "loop":
            init, cond, body, step = n.kids
            assert isinstance(body, Node)
            self.ex(init, guards)
            # a loop some lanes leave early (lane-dependent bound, break, continue, return) diverges
            c = self.ex(cond, guards) or getattr(n, "divergent", False)
            g = [*guards, "a lane-dependent loop" if c else ""]
            self.ex(cond, g)
            self.stmt(body, g, [*loops, n])
            self.ex(step, g)
        elif k == "return":
            if n.kids and self.ex(n.kids[0], guards):
                self.returns_tainted = True
            if any(guards):
                self.diverged = True
                for lp in loops:
                    lp.divergent = True  # type: ignore[attr-defined]
        elif k in ("break", "continue"):
            if any(guards[: len(guards)]) and loops:
                loops[-1].divergent = True  # type: ignore[attr-defined]
        else:
            self.ex(n, guards)


def check(source: str) -> Found:
    """The wave primitives of every function in source, and those under lane-dependent conditions."""
    toks = preprocess(source)
    fns = functions(toks)
    syncing: set[str] = set()
    results: dict[str, bool] = {}
    found = Found()
    for _ in range(len(fns) + 1):  # callers after callees: iterate the summaries to a fixed point
        found = Found()
        changed = False
        for f in fns:
            a = Analysis(f, syncing, results)
            a.run()
            a.run()  # loops marked divergent on the first pass
            found.calls += a.calls
            found.problems += a.problems
            if a.has_sync and f.name not in syncing:
                syncing.add(f.name)
                changed = True
            if results.get(f.name) != a.returns_tainted:
                results[f.name] = a.returns_tainted
                changed = True
        if not changed:
            break
    return found
