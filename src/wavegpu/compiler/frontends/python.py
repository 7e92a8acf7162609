"""The Python frontend: a decorated function's `ast` to typed HIR, with errors that name the place."""

from __future__ import annotations

import ast
import contextlib
import inspect
import itertools
import math
import os
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from ...errors import BOM, CompileError, Diagnostic, Span, decode_source
from .. import bind, builtins, hir
from ..builtins import CONSTANTS, NO_VALUE, NOT_AN_INDEX, ROWS, TOOLCHAIN_WORKGROUP, VOID, Arg, Builtin, Rule
from ..inline import HIDDEN_EXTENTS, HelperFailed, Helpers
from ..types import BOOL, F32, F64, I32, NARROW, SCALARS, U32, ArrayType, ScalarType, round_float
from .treesitter import param_errors

MODULES = {"wg", "wavegpu", "wave", "math"}  # "wave": the Rust toolchain's module name (COMPAT.md)

BinOp = hir.BinaryOp
Cmp = hir.CompareOp
BINOPS = {  # Python's operators and what they mean (/ divides truly; // and % round toward -inf)
    ast.Add: BinOp.ADD,
    ast.Sub: BinOp.SUB,
    ast.Mult: BinOp.MUL,
    ast.Div: BinOp.DIV,
    ast.FloorDiv: BinOp.FLOOR_DIV,
    ast.Mod: BinOp.FLOOR_MOD,
    ast.BitAnd: BinOp.AND,
    ast.BitOr: BinOp.OR,
    ast.BitXor: BinOp.XOR,
    ast.LShift: BinOp.SHL,
    ast.RShift: BinOp.SHR,
}
CMPOPS = {ast.Eq: Cmp.EQ, ast.NotEq: Cmp.NE, ast.Lt: Cmp.LT, ast.LtE: Cmp.LE, ast.Gt: Cmp.GT, ast.GtE: Cmp.GE}
BITWISE = (BinOp.AND, BinOp.OR, BinOp.XOR)
SAME_BITS = (BinOp.ADD, BinOp.SUB, BinOp.MUL, *BITWISE)  # i32 and u32 give the same bits
SHIFTS = (BinOp.SHL, BinOp.SHR)
SPELLING = {BinOp.FLOOR_DIV: "//", BinOp.FLOOR_MOD: "%"}  # the operators a refusal names
CASTS = {**builtins.CASTS, "int": I32, "float": F32}  # Python's int(x) and float(x) are casts too
# the calls of Python's own functions that fold when their arguments are constants
FOLDS: dict[str, Callable[..., Any]] = {"min": min, "max": max, "abs": abs, "int": int, "float": float}
VARIADIC = frozenset({"min", "max"})  # min(a, b, ...) and max(a, b, ...): the others take one


Constant = int | float | bool


@dataclass
class Source:
    text: str
    file: str
    line_offset: int = 0  # added to ast line numbers
    lines: list[str] = field(default_factory=list)
    consts: dict[str, Constant] = field(default_factory=dict)  # module-level int/float/bool names
    ours: set[str] = field(default_factory=set)  # names bound to wavegpu's builtins ("*": import *)
    scope: Namespace | None = None  # the module's functions, which kernels may call (helpers)

    def __post_init__(self) -> None:
        self.lines = self.text.splitlines()


# ---- helper functions: the functions a kernel's module defines or imports ----------------------
@dataclass(frozen=True)
class Callee:
    """A function a kernel calls by a name of its module: its source and definition, or why it
    cannot be called (`why`)."""

    name: str  # as the call spells it: `sq`, `mylib.sq`
    src: Source | None = None
    node: ast.FunctionDef | None = None
    why: str = ""

    @property
    def ident(self) -> str:
        """Which function it is (two modules may each define an `sq`)."""
        assert self.src is not None and self.node is not None
        return f"{self.src.file}:{self.node.lineno + self.src.line_offset}:{self.node.name}"


# modules whose functions are builtins (or not functions a kernel can run): never read as helpers
BUILTIN_MODULES = frozenset({"wavegpu", "wave", "math", "numpy", "builtins"})


class Namespace(Protocol):
    """The names of a kernel's module that are functions: a `def` of the module (Python's own
    rule: the last definition of a name counts), or one imported from another module
    (`from mylib import sq`, `import mylib` then `mylib.sq(x)`). None: the name is no such function
    (a builtin, or unknown)."""

    def function(self, name: str) -> Callee | None: ...

    def attribute(self, module: str, attr: str) -> Callee | None: ...


class RuntimeNamespace:
    """A decorated function's module, as Python sees it at run time: its globals."""

    def __init__(self, g: dict[str, object]):
        self.g = g
        self.read: dict[int, Callee] = {}

    def function(self, name: str) -> Callee | None:
        return self.callee(self.g.get(name), name)

    def attribute(self, module: str, attr: str) -> Callee | None:
        m = self.g.get(module)
        if not inspect.ismodule(m) or m.__name__.split(".")[0] in BUILTIN_MODULES:
            return None
        return self.callee(getattr(m, attr, None), f"{module}.{attr}")

    def callee(self, v: object, spelled: str) -> Callee | None:
        if type(v).__module__.split(".")[0] == "wavegpu" and inspect.isfunction(getattr(v, "python", None)):
            return Callee(spelled, why=_KERNEL_CALLED.format(spelled))
        if not inspect.isfunction(v) or (v.__module__ or "").split(".")[0] in BUILTIN_MODULES:
            return None
        if id(v) not in self.read:
            try:
                src, node = function_source(v)
                self.read[id(v)] = Callee(spelled, src, node)
            except CompileError as e:
                self.read[id(v)] = Callee(spelled, why=e.diagnostics[0].message if e.diagnostics else "no source")
        return replace(self.read[id(v)], name=spelled)


_KERNEL_CALLED = "{0!r} is a kernel: kernels cannot be called (put the shared code in a plain def, without @wg.kernel)"


class TextNamespace:
    """A module read as text (wg.compile of a file or text): its top-level defs and imports; an
    imported module is read from its .py file next to the importing file, or where Python's import
    system finds a top-level module (found without running it)."""

    def __init__(self, src: Source, tree: ast.Module, kernels: frozenset[str], cache: dict[str, TextNamespace]):
        self.src = src
        self.defs: dict[str, ast.FunctionDef] = {}
        self.froms: dict[str, tuple[str, str, int]] = {}  # alias -> (module, name, level)
        self.modules: dict[str, tuple[str, int]] = {}  # alias -> (module, level)
        self.kernels = kernels
        self.cache = cache
        self.lambdas: set[str] = set()
        for s in tree.body:
            if isinstance(s, ast.FunctionDef):
                self.defs[s.name] = s
                self.lambdas.discard(s.name)
            elif isinstance(s, ast.Assign) and isinstance(s.value, ast.Lambda):
                self.lambdas |= {t.id for t in s.targets if isinstance(t, ast.Name)}
            elif isinstance(s, ast.ImportFrom) and s.module is not None:
                for a in s.names:
                    self.froms[a.asname or a.name] = (s.module, a.name, s.level)
            elif isinstance(s, ast.Import):
                for a in s.names:
                    if a.asname is not None or "." not in a.name:
                        self.modules[a.asname or a.name] = (a.name, 0)

    def function(self, name: str) -> Callee | None:
        if name in self.lambdas:
            return Callee(name, why=f"{name!r} is a lambda: kernels call functions written with def")
        if name in self.defs:
            if name in self.kernels:
                return Callee(name, why=_KERNEL_CALLED.format(name))
            return Callee(name, self.src, self.defs[name])
        if name in self.froms:
            module, attr, level = self.froms[name]
            other = self.module(module, level)
            if other is None:
                return self.missing(module, level, name)
            got = other.function(attr)
            return None if got is None else replace(got, name=name)
        return None

    def attribute(self, module: str, attr: str) -> Callee | None:
        if module not in self.modules:
            return None
        mod, level = self.modules[module]
        other = self.module(mod, level)
        if other is None:
            return self.missing(mod, level, f"{module}.{attr}")
        got = other.function(attr)
        return None if got is None else replace(got, name=f"{module}.{attr}")

    def missing(self, module: str, level: int, spelled: str) -> Callee | None:
        if module.split(".")[0] in BUILTIN_MODULES:
            return None
        where = os.path.basename(self.src.file)
        return Callee(
            spelled,
            why=f"cannot read module {'.' * level + module!r}: no {module.replace('.', '/')}.py next to {where}",
        )

    def module(self, module: str, level: int) -> TextNamespace | None:
        if module.split(".")[0] in BUILTIN_MODULES:
            return None
        base = os.path.dirname(os.path.abspath(self.src.file)) if os.path.exists(self.src.file) else os.getcwd()
        for _ in range(max(level - 1, 0)):
            base = os.path.dirname(base)
        rel = module.replace(".", os.sep)
        paths = [os.path.join(base, rel + ".py"), os.path.join(base, rel, "__init__.py")]
        if level == 0 and "." not in module:
            import importlib.util

            with contextlib.suppress(ImportError, ValueError):
                spec = importlib.util.find_spec(module)  # a top-level module: found, not run
                if spec is not None and spec.origin and spec.origin.endswith(".py"):
                    paths.append(spec.origin)
        path = next((p for p in paths if os.path.isfile(p)), None)
        if path is None:
            return None
        path = os.path.abspath(path)
        if path not in self.cache:
            with open(path, "rb") as f:
                text = decode_source(f.read(), path, "not UTF-8 text", CompileError).removeprefix(BOM)
            src, tree = read_module(text, path)
            kernels = frozenset(f.name for f in tree.body if isinstance(f, ast.FunctionDef) and _decorated(f))
            self.cache[path] = TextNamespace(src, tree, kernels, self.cache)
            src.scope = self.cache[path]
        return self.cache[path]


def read_module(text: str, file: str) -> tuple[Source, ast.Module]:
    """A module's Source (its constants and the names it imports from wavegpu) and its ast."""
    src = Source(text, file)
    tree = parse_module(text, file)
    check_depth(src, tree)
    src.consts = constants_in_module(tree)
    for s in tree.body:  # `from wavegpu import thread_id`: our builtin, not the Rust toolchain's
        if isinstance(s, ast.ImportFrom) and (s.module or "").split(".")[0] == "wavegpu":
            src.ours |= {a.asname or a.name for a in s.names}
    return src, tree


def check_depth(src: Source, tree: ast.AST) -> None:
    """Refuse a tree deeper than hir.MAX_DEPTH (blocks and sub-expressions: `a + b + ... ` of
    20,000 terms) with the other frontends' message, at the first node too deep; counted without
    recursion, before anything recurses over it (constant folding, the frontend, later stages)."""
    stack: list[tuple[ast.AST, int]] = [(tree, 1)]
    while stack:
        n, d = stack.pop()
        if d > hir.MAX_DEPTH:
            line, col = getattr(n, "lineno", 1), getattr(n, "col_offset", 0) + 1
            text = src.lines[line - 1] if 0 < line <= len(src.lines) else ""
            span = Span(src.file, line + src.line_offset, col, 1, text)
            raise CompileError([Diagnostic(hir.too_deep_message(), span)])
        stack.extend((c, d + 1) for c in reversed(list(ast.iter_child_nodes(n))) if not isinstance(c, ast.expr_context))


def _deepest_line(text: str) -> tuple[int, str]:
    """(line, text) of the first logical line whose expression may nest beyond hir.MAX_DEPTH, read
    from its tokens (tokenize does not recurse): its operators and its deepest brackets, an upper
    bound of how deep its ast goes; line 1 when no line is that deep."""
    import io
    import tokenize

    brackets = {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}
    lines = text.splitlines()
    start, ops, depth, deepest = 1, 0, 0, 0
    with contextlib.suppress(tokenize.TokenError, SyntaxError):
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.NEWLINE:
                if ops + deepest > hir.MAX_DEPTH:
                    break
                start, ops, depth, deepest = tok.end[0] + 1, 0, 0, 0
            elif tok.type == tokenize.OP and tok.string in brackets:
                depth += brackets[tok.string]
                deepest = max(deepest, depth)
            elif tok.type == tokenize.OP and tok.string not in (",", ":", ".", "=", ";", "->", "@"):
                ops += 1
        else:
            start = 1
    return start, lines[start - 1] if 0 < start <= len(lines) else ""


def parse_module(text: str, file: str, line_offset: int = 0) -> ast.Module:
    """`ast.parse`, with a syntax error as a CompileError at its place. A source too deep for
    CPython to build its ast at the recursion limit is refused at the line its tokens show nesting
    beyond hir.MAX_DEPTH (no process-wide recursion limit or thread stack is changed)."""
    try:
        return ast.parse(text, filename=file)
    except SyntaxError as e:
        line = (e.text or "").rstrip("\n")
        raise CompileError(
            [Diagnostic(f"syntax error: {e.msg}", Span(file, e.lineno or 1, e.offset or 1, 1, line))]
        ) from None
    except (RecursionError, MemoryError):  # "maximum recursion depth exceeded during ast construction"
        line, shown = _deepest_line(text)
        col = len(shown) - len(shown.lstrip()) + 1
        span = Span(file, line + line_offset, col, 1, shown)
        raise CompileError([Diagnostic(hir.too_deep_message(), span)]) from None


def function_source(fn: Callable[..., object]) -> tuple[Source, ast.FunctionDef]:
    """The source and ast of a Python function (its decorators are ignored)."""
    try:
        lines, first = inspect.getsourcelines(fn)
        file = inspect.getsourcefile(fn) or "<kernel>"
    except (OSError, TypeError) as e:
        raise CompileError([Diagnostic(f"cannot read the source of {getattr(fn, '__name__', fn)!r}: {e}")]) from None
    text = textwrap.dedent("".join(lines))
    g = getattr(fn, "__globals__", {})
    ours = {k for k, v in g.items() if str(getattr(v, "__module__", "") or "").startswith("wavegpu")}
    src = Source(text, file, first - 1, consts=module_constants(g), ours=ours, scope=RuntimeNamespace(g))
    tree = parse_module(text, file, first - 1)
    check_depth(src, tree)
    node = tree.body[0] if tree.body else None
    if not isinstance(node, ast.FunctionDef):  # a lambda: its source is the line that holds it
        name = getattr(fn, "__name__", fn)
        raise CompileError([Diagnostic(f"{name!r} is a lambda: kernels call functions written with def")])
    return src, node


def kernels_in_text(text: str, file: str) -> list[tuple[Source, ast.FunctionDef]]:
    """Kernel functions of a module: those decorated with @kernel / @wg.kernel, else every function."""
    text = text.removeprefix(BOM)  # a byte order mark, as the other frontends skip it
    src, tree = read_module(text, file)
    fns = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    decorated = [f for f in fns if _decorated(f)]
    # without decorators every function is a kernel, except those the others call (helpers)
    called = {c.func.id for f in fns for c in ast.walk(f) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)}
    chosen = decorated or [f for f in fns if f.name not in called] or fns
    src.scope = TextNamespace(src, tree, frozenset(f.name for f in chosen), {})
    if not chosen:
        raise CompileError([Diagnostic(f"{file}: no kernel function found")])
    first: dict[str, ast.FunctionDef] = {}
    twice: list[Diagnostic] = []
    for f in chosen:  # Python would keep the last; a .wbin holds one kernel of a name
        if f.name in first:
            sp = Span(file, f.lineno, f.col_offset + 1, 3, src.lines[f.lineno - 1])
            twice.append(Diagnostic(f"kernel {f.name!r} is defined twice (first on line {first[f.name].lineno})", sp))
        else:
            first[f.name] = f
    if twice:
        raise CompileError(twice)
    return [(src, f) for f in chosen]


def module_constants(g: dict[str, object]) -> dict[str, Constant]:
    """The int/float/bool values of a module's namespace: the constants a kernel may name (the
    compile cache keys on them, runtime/cache.py's used_globals)."""
    out: dict[str, Constant] = {}
    for name, v in g.items():
        if isinstance(v, bool | int | float) and not name.startswith("__"):
            out[name] = v
    return out


def constants_in_module(tree: ast.Module) -> dict[str, Constant]:
    """Module-level `NAME = constant expression` of a source file, in order (a later non-constant
    assignment removes the name)."""
    out: dict[str, Constant] = {}
    for s in tree.body:
        targets: list[ast.expr] = []
        value: ast.expr | None = None
        if isinstance(s, ast.Assign):
            targets, value = s.targets, s.value
        elif isinstance(s, ast.AnnAssign) and s.value is not None:
            targets, value = [s.target], s.value
        for t in targets:
            if isinstance(t, ast.Name):
                try:
                    v = fold(value, out.get) if value is not None else None
                except (ArithmeticError, ValueError):
                    v = None
                if v is None:
                    out.pop(t.id, None)
                else:
                    out[t.id] = v
    return out


MAX_FOLD = 2**64  # constant expressions beyond this are refused (no 32-bit type holds them)


def fold(n: ast.expr, lookup: Callable[[str], Constant | None]) -> Constant | None:
    """The value of a constant expression, computed exactly as Python does, or None when `n` is
    not constant. `lookup` resolves names (module constants). Raises ZeroDivisionError (a
    division by zero) or ValueError (a value too large to be a kernel constant)."""
    if isinstance(n, ast.Constant):
        v = n.value
        return v if isinstance(v, bool | int | float) else None
    if isinstance(n, ast.Name):
        if n.id in ("True", "False"):
            return n.id == "True"
        return lookup(n.id)
    if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in MODULES:
        return CONSTANTS.get(n.attr)
    if isinstance(n, ast.UnaryOp):
        x = fold(n.operand, lookup)
        if x is None:
            return None
        if isinstance(n.op, ast.USub):
            return -x
        if isinstance(n.op, ast.UAdd):
            return +x
        if isinstance(n.op, ast.Not):
            return not x
        if isinstance(n.op, ast.Invert) and isinstance(x, int):
            return ~x
        return None
    if isinstance(n, ast.BinOp):
        a, b = fold(n.left, lookup), fold(n.right, lookup)
        if a is None or b is None:
            return None
        op = n.op
        if isinstance(op, ast.Pow):
            if isinstance(a, int) and isinstance(b, int) and abs(a) > 1 and b > 128:
                raise ValueError("too large")
            try:
                r = a**b
            except OverflowError:  # a float power beyond the double range: inf, as IEEE rounds it
                odd = float(b).is_integer() and int(b) % 2 == 1
                r = -math.inf if a < 0 and odd else math.inf
        elif isinstance(op, ast.LShift):
            if not (isinstance(a, int) and isinstance(b, int)) or b > 128 or b < 0:
                return None
            r = a << b
        else:
            fns: dict[type, Callable[[Constant, Constant], Constant]] = {
                ast.Add: lambda x, y: x + y,
                ast.Sub: lambda x, y: x - y,
                ast.Mult: lambda x, y: x * y,
                ast.Div: lambda x, y: x / y,
                ast.FloorDiv: lambda x, y: x // y,
                ast.Mod: lambda x, y: x % y,
                ast.BitAnd: lambda x, y: x & y,  # type: ignore[operator]
                ast.BitOr: lambda x, y: x | y,  # type: ignore[operator]
                ast.BitXor: lambda x, y: x ^ y,  # type: ignore[operator]
                ast.RShift: lambda x, y: x >> y,  # type: ignore[operator]
            }
            f = fns.get(type(op))
            if f is None:
                return None
            try:
                r = f(a, b)
            except TypeError:
                return None
        if isinstance(r, complex):
            return None
        if isinstance(r, int) and not isinstance(r, bool) and abs(r) > MAX_FOLD:
            raise ValueError("too large")
        return r
    if isinstance(n, ast.Call) and isinstance(n.func, ast.Name | ast.Attribute) and not n.keywords:
        name = n.func.id if isinstance(n.func, ast.Name) else n.func.attr
        if isinstance(n.func, ast.Attribute) and not (
            isinstance(n.func.value, ast.Name) and n.func.value.id in MODULES
        ):
            return None
        if name in FOLDS and n.args:
            xs = [fold(x, lookup) for x in n.args]
            if any(x is None for x in xs):
                return None
            if name in VARIADIC:
                return FOLDS[name](xs)
            if len(xs) != 1:
                return None
            if name == "int" and isinstance(xs[0], float) and not math.isfinite(xs[0]):
                return None  # int(inf), int(nan): the cast's saturating rule, as i32(x) (DESIGN section 3)
            return FOLDS[name](xs[0])
    return None


def _decorated(f: ast.FunctionDef) -> bool:
    return any(_is_kernel_decorator(d) for d in f.decorator_list)


def _is_kernel_decorator(d: ast.expr) -> bool:
    target = d.func if isinstance(d, ast.Call) else d
    if isinstance(target, ast.Attribute):
        return target.attr == "kernel"
    return isinstance(target, ast.Name) and target.id == "kernel"


def kernel_options(node: ast.FunctionDef, consts: dict[str, Constant] | None = None) -> dict[str, object]:
    """Keyword options of a @wg.kernel(...) decorator in source text: literals and constant
    expressions of module constants (`workgroup=(TILE, TILE)`)."""
    lookup = (consts or {}).get
    for d in node.decorator_list:
        if isinstance(d, ast.Call) and _is_kernel_decorator(d):
            out: dict[str, object] = {}
            for kw in d.keywords:
                with contextlib.suppress(ValueError, ArithmeticError):
                    if isinstance(kw.value, ast.Tuple | ast.List):
                        parts = [fold(x, lookup) for x in kw.value.elts]
                        if all(p is not None for p in parts):
                            out[kw.arg or ""] = tuple(parts)
                        continue
                    v = fold(kw.value, lookup)
                    out[kw.arg or ""] = v if v is not None else ast.literal_eval(kw.value)
            return out
    return {}


class KernelBuilder:
    """One kernel (or one instance of a helper function) from its `ast` to HIR."""

    def __init__(
        self,
        src: Source,
        node: ast.FunctionDef,
        shared: Shared | None = None,
        promote: dict[str, ScalarType] | None = None,
    ):
        self.src = src
        self.node = node
        self.promote = promote or {}  # float accumulators first assigned an integer constant (promotable)
        self.shared = shared or Shared(Helpers(node.name))  # the kernel's helper instances
        self.is_helper = False
        self.result: ScalarType | None = None  # a helper's annotated result type
        self.returned: list[tuple[hir.Expr, ast.Return]] = []  # a helper's returned values
        self.bare_returns: list[ast.Return] = []  # a helper's `return` without a value
        self.diags: list[Diagnostic] = []
        self.vars: dict[str, ScalarType] = {}
        self.arrays: dict[str, ArrayType] = {}
        self.scalars: dict[str, ScalarType] = {}
        self.locals: list[hir.LocalArray] = []
        self.privates: dict[str, hir.PrivateArray] = {}  # per-thread arrays (wg.private_array)
        self.loop_depth = 0
        self.tmp = 0
        self.poisoned: set[str] = set()  # names whose definition failed: their uses say nothing more
        self.hidden: set[str] = set()  # hidden parameters used: x__len, A__shape0, A__shape1
        # names the kernel assigns are its own, as in Python (a module constant of that name is hidden)
        self.assigned = {x.id for x in ast.walk(node) if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Store)}
        self.local_shapes: dict[str, tuple[int, ...]] = {}
        self.toolchain_dialect = False  # a bare thread_id(): the Rust toolchain's local id (COMPAT.md)
        self.first_value: dict[str, ast.expr] = {}  # a variable's first value (the fix-it of a type change)

    def hidden_param(self, array: str, suffix: str) -> hir.Var:
        """A hidden i32 argument of an array parameter (its length or a dimension), which the
        runtime passes from the array itself (runtime/buffers.py)."""
        name = array + suffix
        self.hidden.add(name)
        self.scalars[name] = I32
        self.vars[name] = I32
        return hir.Var(I32, None, name)

    def dim(self, array: str, axis: int, n: ast.AST) -> hir.Expr:
        """Extent of an array along an axis: a constant for local arrays, else a hidden argument."""
        t = self.arrays[array]
        if axis >= t.ndim:
            raise self.error(n, f"{array!r} has {t.ndim} dimension(s)")
        if t.space == "local":
            return hir.Const(I32, self.span(n), self.local_shapes[array][axis])
        if t.ndim == 1:
            return self.hidden_param(array, "__len")
        return self.hidden_param(array, f"__shape{axis}")

    def const_lookup(self, name: str) -> Constant | None:
        if name in self.vars or name in self.arrays or name in self.poisoned or name in self.assigned:
            return None
        return self.src.consts.get(name)

    def fold(self, n: ast.expr) -> Constant | None:
        """The value of `n` when it is a constant expression (literals, module constants, math.pi)."""
        try:
            return fold(n, self.const_lookup)
        except ZeroDivisionError:
            raise self.error(n, "division by zero in a constant expression") from None
        except (ValueError, OverflowError):
            raise self.error(n, "this constant expression is too large for a 32-bit type") from None

    def literal(self, v: Constant, hint: ScalarType | None, n: ast.AST) -> hir.Const:
        """A constant typed as the language says: ints take the operand's integer type when they
        fit it, else i32 when they fit, else u32 (up to 0xFFFFFFFF); floats the operand's float
        type, else f32; ints in a float context become floats of that type."""
        sp = self.span(n)
        if isinstance(v, bool):
            return hir.Const(BOOL, sp, v)
        if isinstance(v, int):
            if hint is not None and hint.is_float:
                return hir.Const(hint, sp, round_float(v, hint))
            if hint is not None and hint.is_int and _fits(v, hint):
                return hir.Const(hint, sp, v)
            if _fits(v, I32):
                return hir.Const(I32, sp, v)
            if _fits(v, U32):
                return hir.Const(U32, sp, v)
            raise self.error(n, f"{v} does not fit in 32 bits (i32 holds -2**31..2**31-1, u32 0..2**32-1)")
        t = hint if hint is not None and hint.is_float else F32
        return hir.Const(t, sp, round_float(v, t))  # beyond the type's range: inf, as in C

    def const_int(self, n: ast.expr, what: str, lo: int | None = None) -> int:
        """An integer constant expression where the language needs one (sizes, axes, offsets)."""
        if isinstance(n, ast.Name) and n.id in self.poisoned:
            raise _Bail()
        v = self.fold(n)
        if not isinstance(v, int) or isinstance(v, bool):
            hint = ""
            if isinstance(n, ast.Name) and n.id not in self.vars and n.id not in self.src.consts:
                hint = f"; make {n.id} a module-level constant ({n.id} = ...)"
            elif isinstance(n, ast.Name) and n.id in self.scalars:
                hint = f"; {n.id!r} is a parameter, known only at run time: use a module-level constant"
            elif isinstance(n, ast.Name):
                hint = f"; {n.id!r} is a variable: use a module-level constant instead"
            raise self.error(n, f"{what} must be a constant integer expression{hint}")
        if lo is not None and v < lo:
            raise self.error(n, f"{what} must be at least {lo}, not {v}")
        return v

    # -- diagnostics
    def span(self, n: ast.AST | Span) -> Span:
        if isinstance(n, Span):  # a place HIR already has (a return statement's)
            return n
        line = getattr(n, "lineno", 1)
        col = getattr(n, "col_offset", 0) + 1
        end = getattr(n, "end_col_offset", None)
        length = max(1, (end or col) - col + 1) if getattr(n, "end_lineno", line) == line else 1
        text = self.src.lines[line - 1] if 0 < line <= len(self.src.lines) else ""
        return Span(self.src.file, line + self.src.line_offset, col, length, text)

    def error(self, n: ast.AST | Span, msg: str) -> _Bail:
        self.diags.append(Diagnostic(msg, self.span(n)))
        return _Bail()

    # -- entry
    def run(self) -> hir.Function:
        node = self.node
        params = []
        a = node.args
        if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs or a.defaults:
            self.error(node, "kernel parameters must be plain positional parameters without defaults")
        for arg in a.args:
            if arg.arg.endswith(HIDDEN_SUFFIXES):
                self.error(
                    arg, f"parameter names ending in {', '.join(HIDDEN_SUFFIXES)} are reserved (hidden arguments)"
                )
                continue
            if arg.annotation is None:
                self.error(
                    arg,
                    f"parameter {arg.arg!r} needs a type annotation such as wg.f32 or wg.f32[:]",
                )
                continue
            t = self.annotation(arg.annotation)
            if t is None:
                continue
            if isinstance(t, ArrayType):
                self.arrays[arg.arg] = t
                if t.ndim == 2:  # the row length indexes it: always passed
                    self.hidden_param(arg.arg, "__shape1")
            else:
                if t is BOOL or t is VOID:
                    self.error(arg, "scalar parameters are i32, u32, f32, f16 or f64")
                self.scalars[arg.arg] = t
                self.vars[arg.arg] = t
            params.append(hir.Param(arg.arg, t, self.span(arg)))
        if node.returns is not None and not (isinstance(node.returns, ast.Constant) and node.returns.value is None):
            self.error(node.returns, "kernels return nothing")
        body = self.block(node.body)
        if self.diags:
            raise CompileError(self.diags)
        for p in list(params):  # hidden arguments after the user's, in parameter order
            for suffix in HIDDEN_SUFFIXES:
                if p.name + suffix in self.hidden:
                    params.append(hir.Param(p.name + suffix, I32, p.span))
        variables = tuple((k, v) for k, v in self.vars.items() if k not in self.scalars)
        return hir.Function(
            node.name,
            tuple(params),
            body,
            variables,
            tuple(self.locals),
            self.src.file,
            helpers=self.shared.helpers.built(),
            privates=tuple(self.privates.values()),
        )

    def annotation(self, n: ast.expr) -> ScalarType | ArrayType | None:
        if isinstance(n, ast.Subscript):
            base = self.type_name(n.value, elements=True)
            if base is None:
                self.error(n, "unknown type")
                return None

            def full(x: ast.expr) -> bool:
                return isinstance(x, ast.Slice) and x.lower is None and x.upper is None and x.step is None

            ndim = 1
            if isinstance(n.slice, ast.Tuple) and len(n.slice.elts) == 2 and all(full(x) for x in n.slice.elts):
                ndim = 2
            elif not full(n.slice):
                self.error(n, f"array types are written {base.name}[:] or {base.name}[:, :]")
                return None
            if base is BOOL:
                self.error(n, "arrays of bool are not supported; use u32")
                return None
            return ArrayType(base, "global", ndim)
        t = self.type_name(n)
        if t is None:
            if self.builtin_name(n) in NARROW:
                name = self.builtin_name(n)
                self.error(n, f"{name} is an array element type only (wg.{name}[:]); its values are i32 or u32")
            else:
                self.error(n, "unknown type: use i32, u32, f32, f16, f64 (wg.f32) or an array wg.f32[:]")
        return t

    def type_name(self, n: ast.expr, elements: bool = False) -> ScalarType | None:
        """A scalar type; with elements=True also the storage-only array element types u8 i8 u16 i16."""
        name = self.builtin_name(n)
        if name in SCALARS:
            return SCALARS[name]
        if elements and name in NARROW:
            return NARROW[name]
        if (isinstance(n, ast.Name) and n.id == "bool") or name == "bool_":  # wg.bool_: wavegpu's name of bool
            return BOOL
        return None

    def toolchain_spelling(self, f: ast.expr) -> bool:
        """Whether a builtin is called as the Rust toolchain's Python kernels call it: by its bare
        name (`from wave import thread_id`, not one imported from wavegpu) or through its module
        `wave`, not as `wg.thread_id`."""
        if isinstance(f, ast.Name):
            return f.id not in self.src.ours and "*" not in self.src.ours
        return isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "wave"

    def builtin_name(self, n: ast.expr) -> str | None:
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in MODULES:
            return n.attr
        if isinstance(n, ast.Name) and n.id not in self.vars and n.id not in self.arrays and n.id not in self.privates:
            return n.id
        return None

    # -- statements
    def block(self, stmts: list[ast.stmt]) -> tuple[hir.Stmt, ...]:
        out: list[hir.Stmt] = []
        for s in stmts:
            try:
                r = self.stmt(s)
            except _Bail:
                self.poison(s)
                continue
            if r is not None:
                out.extend(r if isinstance(r, list) else [r])
        return tuple(out)

    def poison(self, s: ast.stmt) -> None:
        """After a failed definition, later uses of its names report nothing (one mistake, one message)."""
        for x in ast.walk(s):  # a failed loop or if also leaves the names its body defines undefined
            stored = isinstance(x, ast.Name) and isinstance(x.ctx, ast.Store)
            known = self.vars.keys() | self.arrays.keys() | self.privates.keys()
            if stored and x.id not in known:  # type: ignore[attr-defined]
                self.poisoned.add(x.id)  # type: ignore[attr-defined]

    def stmt(self, s: ast.stmt) -> hir.Stmt | list[hir.Stmt] | None:
        sp = self.span(s)
        if isinstance(s, ast.Pass):
            return None
        if isinstance(s, ast.Expr):
            if isinstance(s.value, ast.Constant) and isinstance(s.value.value, str):
                return None  # a docstring
            e = self.expr(s.value)
            if isinstance(e, hir.Invoke):  # a helper's result may go unused, as in Python
                return hir.ExprStmt(sp, e)
            if not isinstance(e, hir.Call):
                raise self.error(s, "an expression statement must call barrier(), fence(), an atomic or a function")
            return hir.ExprStmt(sp, e)
        if isinstance(s, ast.AnnAssign):
            if not isinstance(s.target, ast.Name):
                raise self.error(s, "annotated assignment needs a plain name")
            t = self.annotation(s.annotation)
            if t is None:
                raise _Bail()  # annotation() said why
            if not isinstance(t, ScalarType):
                raise self.error(s.annotation, "local variables are scalars (arrays: wg.local_array(dtype, count))")
            if s.value is None:
                raise self.error(s, "give the variable a value")
            return self.assign_name(s.target, self.expr(s.value, t), s, declared=t)
        if isinstance(s, ast.Assign):
            if len(s.targets) != 1:
                raise self.error(s, "chained assignment (a = b = c) is not supported: assign one name at a time")
            tgt = s.targets[0]
            if isinstance(tgt, ast.Name) and self.is_call_to(s.value, "local_array"):
                return self.local_array(tgt, s.value)  # type: ignore[arg-type]
            if isinstance(tgt, ast.Name) and self.is_call_to(s.value, "private_array"):
                return self.private_array(tgt, s.value)  # type: ignore[arg-type]
            if isinstance(tgt, ast.Name):
                hint = self.vars.get(tgt.id)
                return self.assign_name(tgt, self.expr(s.value, hint), s)
            if isinstance(tgt, ast.Subscript) and (p := self.private_index(tgt)) is not None:
                pa, idxs = p
                return hir.PrivateStore(sp, pa.name, idxs, self.coerce(self.expr(s.value, pa.elem), pa.elem, s.value))
            if isinstance(tgt, ast.Subscript):
                arr, idx = self.subscript(tgt)
                v = self.store_value(arr, self.expr(s.value, self.elem_value(arr)), s.value)
                return hir.Store(sp, arr, idx, v)
            if isinstance(tgt, ast.Tuple | ast.List):
                return self.tuple_assign(tgt, s)
            raise self.error(tgt, "only names, array elements and tuples of them can be assigned")
        if isinstance(s, ast.AugAssign):
            op = BINOPS.get(type(s.op))
            if op is None:
                raise self.error(s, "unsupported augmented assignment")
            if isinstance(s.target, ast.Name):
                if s.target.id not in self.vars:
                    raise self.error(s.target, f"{s.target.id!r} is used before it is assigned")
                cur = hir.Var(self.vars[s.target.id], sp, s.target.id)
                val = self.same_bits(op, self.binary(op, cur, self.expr(s.value, cur.type), s), cur.type)
                return self.assign_name(s.target, val, s)
            if isinstance(s.target, ast.Subscript) and (p := self.private_index(s.target)) is not None:
                pa, idxs = p
                # the indices are read twice (load, store): Python evaluates them once, so any with a
                # call in it goes through a temporary (a pure one stays in place: unrolling folds it)
                pre2: list[hir.Stmt] = []
                kept: list[hir.Expr] = []
                for ix in idxs:
                    if _has_call(ix):
                        tmp = self.fresh("idx", ix.type)
                        pre2.append(hir.Assign(sp, tmp, ix))
                        ix = hir.Var(ix.type, sp, tmp)
                    kept.append(ix)
                cur_p = hir.PrivateLoad(pa.elem, sp, pa.name, tuple(kept))
                val = self.binary(op, cur_p, self.expr(s.value, pa.elem), s)
                val = self.coerce(self.same_bits(op, val, pa.elem), pa.elem, s)
                return [*pre2, hir.PrivateStore(sp, pa.name, tuple(kept), val)]
            if isinstance(s.target, ast.Subscript):
                arr, idx = self.subscript(s.target)
                elem = self.elem_value(arr)
                if not isinstance(idx, hir.Const | hir.Var):
                    tmp = self.fresh("idx", idx.type)
                    pre = hir.Assign(sp, tmp, idx)
                    idx = hir.Var(idx.type, sp, tmp)
                else:
                    pre = None
                cur2 = hir.Load(elem, sp, arr, idx)
                val = self.binary(op, cur2, self.expr(s.value, elem), s)
                val = self.coerce(self.same_bits(op, val, elem), elem, s)
                st = hir.Store(sp, arr, idx, val)
                return [pre, st] if pre else st
            raise self.error(s, "unsupported augmented assignment target")
        if isinstance(s, ast.If):
            cond = self.condition(s.test)
            return hir.If(sp, cond, self.block(s.body), self.block(s.orelse))
        if isinstance(s, ast.While):
            if s.orelse:
                raise self.error(s, "while ... else is not supported")
            cond = self.condition(s.test)
            self.loop_depth += 1
            body = self.block(s.body)
            self.loop_depth -= 1
            return hir.While(sp, cond, body)
        if isinstance(s, ast.For):
            return self.for_loop(s)
        if isinstance(s, ast.Break | ast.Continue):
            if not self.loop_depth:
                raise self.error(s, f"'{'break' if isinstance(s, ast.Break) else 'continue'}' outside a loop")
            return hir.Break(sp) if isinstance(s, ast.Break) else hir.Continue(sp)
        if isinstance(s, ast.Return) and self.is_helper:
            return self.helper_return(s)
        if isinstance(s, ast.Return):
            if s.value is not None and not (isinstance(s.value, ast.Constant) and s.value.value is None):
                raise self.error(s.value, "kernels return no value (write results to an array)")
            return hir.Return(sp)
        if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            raise self.error(
                s, "nested functions and classes are not supported in kernels: define the function at module level"
            )
        if isinstance(s, ast.Import | ast.ImportFrom | ast.Global | ast.Nonlocal):
            raise self.error(s, f"'{type(s).__name__.lower()}' is not supported in kernels")
        raise self.error(s, f"{type(s).__name__} statements are not supported in kernels")

    def same_bits(self, op: hir.BinaryOp, val: hir.Expr, t: ScalarType) -> hir.Expr:
        """`v op= w` keeps v's integer type where i32 and u32 give the same bits (+ - * & | ^ << >>)."""
        if val.type.is_int and t.is_int and val.type != t and op not in (BinOp.FLOOR_DIV, BinOp.FLOOR_MOD):
            return self.bits(val, t)
        return val

    def bits(self, e: hir.Expr, t: ScalarType) -> hir.Expr:
        """The same 32 bits read as the other integer type."""
        if e.type == t:
            return e
        if isinstance(e, hir.Const):
            v = int(e.value) & 0xFFFFFFFF
            return hir.Const(t, e.span, v if t is U32 else _wrap32(v))
        return hir.Cast(t, e.span, e)

    def tuple_assign(self, tgt: ast.Tuple | ast.List, s: ast.Assign) -> list[hir.Stmt]:
        """`a, b = b, a`: every value is computed first (into temporaries), then assigned in order."""
        if not isinstance(s.value, ast.Tuple | ast.List) or len(s.value.elts) != len(tgt.elts):
            raise self.error(s.value, f"assign a tuple of {len(tgt.elts)} values: a, b = x, y")
        sp = self.span(s)
        out: list[hir.Stmt] = []
        temps: list[hir.Expr] = []
        for t_node, v_node in zip(tgt.elts, s.value.elts):
            if isinstance(t_node, ast.Name):
                hint = self.vars.get(t_node.id)
            elif (
                isinstance(t_node, ast.Subscript)
                and isinstance(t_node.value, ast.Name)
                and t_node.value.id in self.privates
            ):
                hint = self.privates[t_node.value.id].elem
            elif (
                isinstance(t_node, ast.Subscript)
                and isinstance(t_node.value, ast.Name)
                and t_node.value.id in self.arrays
            ):
                hint = self.elem_value(t_node.value.id)
            else:
                raise self.error(t_node, "only names and array elements can be assigned")
            v = self.expr(v_node, hint)
            if v.type is VOID:
                raise self.error(v_node, NO_VALUE)
            if isinstance(v, hir.Const):
                temps.append(v)
                continue
            name = self.fresh("tup", v.type)
            out.append(hir.Assign(sp, name, v))
            temps.append(hir.Var(v.type, sp, name))
        for t_node, v in zip(tgt.elts, temps):
            if isinstance(t_node, ast.Name):
                out.append(self.assign_name(t_node, v, s))
            elif (p := self.private_index(t_node)) is not None:  # type: ignore[arg-type]
                out.append(hir.PrivateStore(sp, p[0].name, p[1], self.coerce(v, p[0].elem, t_node)))
            else:
                assert isinstance(t_node, ast.Subscript)
                arr, idx = self.subscript(t_node)
                out.append(hir.Store(sp, arr, idx, self.store_value(arr, v, t_node)))
        return out

    def fresh(self, hint: str, t: ScalarType) -> str:
        self.tmp += 1
        name = f"${hint}{self.tmp}"
        self.vars[name] = t
        return name

    def assign_name(self, tgt: ast.Name, value: hir.Expr, s: ast.stmt, declared: ScalarType | None = None) -> hir.Stmt:
        name = tgt.id
        if name in self.arrays or name in self.privates:
            raise self.error(tgt, f"{name!r} is an array; assign its elements: {name}[i] = ...")
        if name in self.scalars:
            raise self.error(tgt, f"parameter {name!r} is read-only; copy it to a variable first")
        if name in MODULES or name in CASTS:
            raise self.error(tgt, f"{name!r} is a builtin name")
        if value.type is VOID:
            raise self.error(s, NO_VALUE)
        want = declared or self.vars.get(name)
        if want is not None and declared is None and value.type != want:
            const_ok = isinstance(value, hir.Const) and (
                (want.is_float and value.type is not BOOL) or (want.is_int and _fits(value.value, want))
            )
            widening = want.is_float and (value.type.is_int or value.type.bits < want.bits)
            if not const_ok and not widening and self.promotable(name, value.type):
                raise _Restart({**self.promote, name: value.type})
            if not const_ok and not widening:
                first = self.first_value.get(name)
                where = f", line {first.lineno + self.src.line_offset}" if first is not None else ""
                better = self.first_in(name, value.type)
                if better:
                    fix = (
                        f"give {name!r} this type where it is first assigned, `{name} = {better}`, or use another name"
                    )
                else:
                    fix = f"use another name, or give {name!r} a type that holds both where it is first assigned"
                raise self.error(
                    s,
                    f"{name!r} is {want} (a variable keeps the type of its first assignment{where}), this "
                    f"value is {value.type}: {fix}",
                )
        if want is None and name in self.promote:  # `s = 0` of a float accumulator: 0.0
            value = self.coerce(value, self.promote[name], s)
        if want is not None:
            value = self.coerce(value, want, s)
        if name not in self.vars:
            self.vars[name] = value.type
            if isinstance(s, ast.Assign) and s.targets[0] is tgt and s.value is not None:
                self.first_value[name] = s.value  # (not a, b = ...: its values are temporaries)
        return hir.Assign(self.span(s), name, value)

    def promotable(self, name: str, t: ScalarType) -> bool:
        """Whether variable `name`, first assigned a number constant and now a value of the float
        type t, can be of type t from its first assignment without a change of meaning: the
        constant is exactly a t (`s = 0` then `s += x[j]`: Python's s becomes a float at the
        `+=`, and 0 and 0.0 are one number). Then the kernel is lowered again (`_Restart`)."""
        first = self.first_value.get(name)
        if first is None or not t.is_float or self.promote.get(name, t).bits > t.bits:
            return False
        v = None
        with contextlib.suppress(Exception):
            v = fold(first, self.const_lookup)
        if isinstance(v, bool) or not isinstance(v, int | float):
            return False
        return round_float(v, t) == v if t is not F64 or isinstance(v, int) else True

    def first_in(self, name: str, t: ScalarType) -> str | None:
        """A variable's first value written in type t, where that keeps its meaning: a constant that
        t holds exactly (`s = 0` -> `s = 0.0`), or an integer value widened to f64. None where no
        such form exists: then the message suggests nothing (a fix-it never changes a meaning)."""
        first = self.first_value.get(name)
        if first is None or t is BOOL or t is VOID:
            return None
        v = None
        with contextlib.suppress(Exception):
            v = fold(first, self.const_lookup)
        if isinstance(v, int) and not isinstance(v, bool):
            if t.is_float:
                exact = float(v) == v and (t is F64 or abs(v) <= 2 ** (11 if t.bits == 16 else 24))
                if not exact:
                    return None
                return repr(float(v)) if t is F32 else f"wg.{t}({float(v)!r})"
            return f"wg.{t}({v})" if _fits(v, t) else None
        if isinstance(v, float) and t.is_float:
            return f"wg.{t}({v!r})" if t is not F32 else repr(v)
        if v is None and t is F64:
            return f"wg.f64({ast.unparse(first)})"  # every i32, u32, f16 and f32 value is an f64
        return None

    def declaration(self, call: ast.Call, name: str, usage: str, what: str) -> dict[str, object]:
        """The attributes (dtype, shape) of a declaring call, `local_array` or `private_array`,
        bound by its row; `usage` completes an arity refusal, `what` names a count that is not a
        constant."""
        row = ROWS[CALLS[name]]
        kinds = bind.slots(row, len(call.args), [k.arg or "**" for k in call.keywords])
        if isinstance(kinds, bind.Refusal):
            raise self.error(call, f"{kinds.message}: {usage}")
        dims = call.args[1].elts if isinstance(call.args[1], ast.Tuple) else [call.args[1]]
        counts = [self.const_int(d, what, lo=1) if len(dims) <= 2 else self.fold(d) for d in dims]
        t = self.type_name(call.args[0], elements=True)
        r = bind.bind(row, self.span(call), [t, tuple(counts)])  # type: ignore[arg-type]
        if isinstance(r, bind.Refusal):
            raise self.error(call.args[r.arg] if isinstance(r.arg, int) else call, r.message)
        assert isinstance(r, hir.Call), "a declaration binds to a call"
        return dict(r.attrs)

    def local_array(self, tgt: ast.Name, call: ast.Call) -> hir.Stmt | None:
        usage = "local_array(dtype, count) takes a type and a constant count"
        attrs = self.declaration(call, "local_array", usage, "a local_array count (no dynamic allocation on a GPU)")
        shape: tuple[int, ...] = attrs["shape"]  # type: ignore[assignment]
        t: ScalarType = attrs["dtype"]  # type: ignore[assignment]
        cnt = math.prod(shape)
        if tgt.id in self.arrays or tgt.id in self.vars or tgt.id in self.privates:
            raise self.error(tgt, f"{tgt.id!r} is already defined")
        at = ArrayType(t, "local", len(shape))
        self.local_shapes[tgt.id] = shape
        self.arrays[tgt.id] = at
        self.locals.append(hir.LocalArray(tgt.id, at, cnt, self.span(call)))
        return None

    def private_array(self, tgt: ast.Name, call: ast.Call) -> hir.Stmt:
        """`t = wg.private_array(wg.f32, 8)` or `(rows, cols)`: a per-thread array of zeros
        (hir.PrivateArray), in registers when every index folds to a constant (docs/compiler.md)."""
        usage = "private_array(dtype, size) takes a type and a constant size or (rows, cols)"
        attrs = self.declaration(call, "private_array", usage, "a private_array size (no dynamic allocation on a GPU)")
        name = tgt.id
        if name in self.arrays or name in self.vars or name in self.privates:
            raise self.error(tgt, f"{name!r} is already defined")
        if name in MODULES or name in CASTS:
            raise self.error(tgt, f"{name!r} is a builtin name")
        sp = self.span(call)
        self.privates[name] = hir.PrivateArray(name, attrs["dtype"], attrs["shape"], sp)  # type: ignore[arg-type]
        return hir.PrivateInit(sp, name)

    def private_index(self, n: ast.Subscript) -> tuple[hir.PrivateArray, tuple[hir.Expr, ...]] | None:
        """A per-thread array's element `t[i]` / `t[i, j]`: the array and its indices (None when
        `n` indexes no per-thread array)."""
        if isinstance(n.value, ast.Subscript) and isinstance(n.value.value, ast.Name):
            inner = self.privates.get(n.value.value.id)
            if inner is not None and len(inner.shape) == 2:
                name = n.value.value.id
                raise self.error(n, f"index a 2-D per-thread array with one subscript: {name}[i, j]")
        if not isinstance(n.value, ast.Name) or n.value.id not in self.privates:
            return None
        pa = self.privates[n.value.id]
        return pa, tuple(self.indices(n, pa.name, len(pa.shape)))

    def indices(self, n: ast.Subscript, name: str, ndim: int) -> list[hir.Expr]:
        """The integer subscripts of `name[i]` / `name[i, j]`, one per dimension of the array."""
        parts = n.slice.elts if isinstance(n.slice, ast.Tuple) else [n.slice]
        if any(isinstance(p, ast.Slice) for p in parts):
            raise self.error(n.slice, "index arrays with integers (no slices)")
        if len(parts) != ndim:
            form = f"{name}[i]" if ndim == 1 else f"{name}[i, j]"
            raise self.error(n.slice, f"{name!r} has {ndim} dimension(s): index it {form}")
        idxs = []
        for p in parts:
            idx = self.expr(p, I32)
            if not idx.type.is_int:
                raise self.error(p, f"{NOT_AN_INDEX}, not {idx.type}")
            idxs.append(idx)
        return idxs

    def for_loop(self, s: ast.For) -> hir.Stmt:
        sp = self.span(s)
        if s.orelse:
            raise self.error(s, "for ... else is not supported")
        if not isinstance(s.target, ast.Name):
            raise self.error(s.target, "the loop variable must be a name")
        it = s.iter
        unroll = LOOPS.get(self.builtin_name(it.func) or "") if isinstance(it, ast.Call) else None
        if not (isinstance(it, ast.Call) and unroll is not None and not it.keywords and 1 <= len(it.args) <= 3):
            raise self.error(
                it, "kernels loop with for ... in range(start, stop, step) (or wg.static_range(...): unrolled)"
            )
        args = [self.expr(a) for a in it.args]
        for a_node, a in zip(it.args, args):
            if not a.type.is_int:
                raise self.error(a_node, f"range() takes integers, not {a.type}: convert it, int(...)")
        if len(args) == 1:
            args = [hir.Const(args[0].type, sp, 0), args[0]]
        if len(args) == 2:
            args.append(hir.Const(args[0].type, sp, 1))
        nodes: list[ast.AST] = list(it.args) if len(it.args) > 1 else [it, it.args[0]]
        nodes += [it] * (3 - len(nodes))
        t = self.vars.get(s.target.id)
        if t is None:
            t = next((a.type for a in args if not isinstance(a, hir.Const)), I32)
        if not t.is_int:
            raise self.error(it, "range() takes integers")
        start = self.coerce(args[0], t, nodes[0])
        stop, step = args[1], args[2]
        name = s.target.id
        if isinstance(stop, hir.Const) and stop.type != t:
            if not _fits(stop.value, t):
                other = "i32" if t is U32 else "u32"
                raise self.error(
                    nodes[1],
                    f"the range ends at {stop.value}, which is no {t}, the type of {name!r}; "
                    f"count with an {other}: range({other}(start), ...)",
                )
            stop = self.coerce(stop, t, nodes[1])
        # a stop of the other integer type is compared by mathematical value (as i < n is)
        if isinstance(step, hir.Const):
            sv = step.value
            if sv == 0:
                raise self.error(nodes[2], "range() step must not be zero")
            if step.type != t and _fits(sv, t):
                step = self.coerce(step, t, nodes[2])
            if t is U32 and sv < -1:
                raise self.error(
                    nodes[2],
                    f"{name!r} is u32 and would wrap around below 0 with a step of {sv}: "
                    "count down with an i32, range(i32(start), stop, step)",
                )
        self.vars.setdefault(s.target.id, t)
        if self.vars[s.target.id] != t:
            raise self.error(s.target, f"{s.target.id!r} is {self.vars[s.target.id]}, the range is {t}")
        self.loop_depth += 1
        body = self.block(s.body)
        self.loop_depth -= 1
        return hir.For(sp, s.target.id, start, stop, step, body, unroll)

    # -- expressions
    def condition(self, n: ast.expr) -> hir.Expr:
        e = self.expr(n)
        return self.truth(e, n)

    def truth(self, e: hir.Expr, n: ast.AST) -> hir.Expr:
        if e.type is BOOL:
            return e
        if e.type is VOID:
            raise self.error(n, NO_VALUE)
        return hir.Compare(BOOL, e.span, Cmp.NE, e, hir.Const(e.type, e.span, 0.0 if e.type.is_float else 0))

    def is_call_to(self, n: ast.expr, name: str) -> bool:
        return isinstance(n, ast.Call) and self.builtin_name(n.func) == name

    def subscript(self, n: ast.Subscript) -> tuple[str, hir.Expr]:
        if isinstance(n.value, ast.Name) and n.value.id in self.poisoned:
            raise _Bail()
        v = n.value
        if isinstance(v, ast.Attribute) and isinstance(v.value, ast.Name) and v.value.id in self.arrays:
            raise self.error(v, f"arrays have no attribute {v.attr!r} in kernels (len(x) and x.shape[k] exist)")
        if not isinstance(n.value, ast.Name) or n.value.id not in self.arrays:
            raise self.error(n.value, "only arrays (buffer parameters or local_array) can be indexed")
        name = n.value.id
        t = self.arrays[name]
        idxs = self.indices(n, name, t.ndim)
        if t.ndim == 1:
            return name, idxs[0]
        row = self.binary(BinOp.MUL, idxs[0], self.dim(name, 1, n), n.slice)  # row-major: i * shape[1] + j
        return name, self.binary(BinOp.ADD, row, idxs[1], n.slice)

    def expr(self, n: ast.expr, hint: ScalarType | None = None) -> hir.Expr:
        sp = self.span(n)
        if isinstance(n, ast.Constant) and not isinstance(n.value, bool | int | float):
            raise self.error(n, f"constants of type {type(n.value).__name__} are not supported")
        if isinstance(n, ast.Name) and n.id in self.poisoned:
            raise _Bail()
        if not isinstance(n, ast.Call) or self.builtin_name(n.func) in FOLDS:
            v = self.fold(n)
            if v is not None:
                return self.literal(v, hint, n)
        if isinstance(n, ast.Name):
            if n.id in self.vars:
                return hir.Var(self.vars[n.id], sp, n.id)
            if n.id in self.arrays or n.id in self.privates:
                raise self.error(n, f"{n.id!r} is an array: index it, {n.id}[i]")
            raise self.error(n, f"{n.id!r} is not defined (or is used before it is assigned)")
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Pow):
            return self.power(n, hint)
        if isinstance(n, ast.BinOp):
            op = BINOPS.get(type(n.op))
            if op is None:
                raise self.error(n, f"operator {type(n.op).__name__} is not supported")
            left = self.expr(n.left, hint)
            right = self.expr(n.right, left.type if not isinstance(left, hir.Const) else hint)
            if isinstance(left, hir.Const) and not isinstance(right, hir.Const):
                left = self.expr(n.left, right.type)
            return self.binary(op, left, right, n)
        if isinstance(n, ast.UnaryOp):
            e = self.expr(n.operand, hint)
            if isinstance(n.op, ast.Not):
                return hir.Unary(BOOL, sp, hir.UnaryOp.NOT, self.truth(e, n.operand))
            if isinstance(n.op, ast.USub):
                if e.type is BOOL:
                    raise self.error(n, "cannot negate a bool")
                if isinstance(e, hir.Const):
                    return self.expr(ast.copy_location(ast.Constant(-e.value), n), e.type)
                return hir.Unary(e.type, sp, hir.UnaryOp.NEG, e)
            if isinstance(n.op, ast.UAdd):
                return e
            if isinstance(n.op, ast.Invert):
                if not e.type.is_int:
                    raise self.error(n, "~ needs an integer")
                return hir.Unary(e.type, sp, hir.UnaryOp.BIT_NOT, e)
        if isinstance(n, ast.BoolOp):
            parts = [self.truth(self.expr(v), v) for v in n.values]
            op = hir.LogicalOp.AND if isinstance(n.op, ast.And) else hir.LogicalOp.OR
            acc = parts[0]
            for p in parts[1:]:
                acc = hir.Logical(BOOL, sp, op, acc, p)
            return acc
        if isinstance(n, ast.Compare):
            items = [n.left, *n.comparators]
            exprs = [self.expr(x) for x in items]
            for i, x in enumerate(exprs[1:-1], start=1):
                if isinstance(x, hir.Call):
                    raise self.error(items[i], "a call in the middle of a chained comparison; assign it first")
            result = None
            for (a_node, b_node), op, a, b in zip(itertools.pairwise(items), n.ops, exprs, exprs[1:]):
                c = self.compare(CMPOPS.get(type(op)), a, b, n, a_node, b_node)
                result = c if result is None else hir.Logical(BOOL, sp, hir.LogicalOp.AND, result, c)
            assert result is not None
            return result
        if isinstance(n, ast.IfExp):
            cond = self.condition(n.test)
            a = self.expr(n.body, hint)
            b = self.expr(n.orelse, a.type)
            t = self.unify(a, b, n)
            return hir.IfExpr(t, sp, cond, self.coerce(a, t, n), self.coerce(b, t, n))
        if isinstance(n, ast.Attribute):
            name = self.builtin_name(n)
            if name in CONSTANTS:
                t = hint if hint is not None and hint.is_float else F32
                return hir.Const(t, sp, CONSTANTS[name])
            if isinstance(n.value, ast.Name) and n.value.id in self.arrays:
                raise self.error(n, f"arrays have no attribute {n.attr!r} in kernels (len(x) and x.shape[k] exist)")
            raise self.error(n, f"unknown name {ast.unparse(n)!r}")
        if isinstance(n, ast.Subscript):
            if (
                isinstance(n.value, ast.Attribute)
                and n.value.attr == "shape"
                and isinstance(n.value.value, ast.Name)
                and n.value.value.id in self.arrays
            ):
                return self.dim(n.value.value.id, self.const_int(n.slice, "a shape index", lo=0), n)
            if (
                isinstance(n.value, ast.Attribute)
                and n.value.attr == "shape"
                and isinstance(n.value.value, ast.Name)
                and n.value.value.id in self.privates
            ):
                shape = self.privates[n.value.value.id].shape
                axis = self.const_int(n.slice, "a shape index", lo=0)
                if axis >= len(shape):
                    raise self.error(n, f"{n.value.value.id!r} has {len(shape)} dimension(s)")
                return hir.Const(I32, sp, shape[axis])
            p = self.private_index(n)
            if p is not None:
                return hir.PrivateLoad(p[0].elem, sp, p[0].name, p[1])
            arr, idx = self.subscript(n)
            return hir.Load(self.elem_value(arr), sp, arr, idx)
        if isinstance(n, ast.Call):
            return self.call(n, hint)
        raise self.error(n, f"{type(n).__name__} expressions are not supported in kernels")

    def power(self, n: ast.BinOp, hint: ScalarType | None) -> hir.Expr:
        """`x ** k` for a constant integer k (multiplications; a negative k gives 1 / x**-k as a
        float), `x ** 0.5` (sqrt) and `x ** -0.5` (1 / sqrt)."""
        sp = self.span(n)
        k = self.fold(n.right)
        base = self.expr(n.left, hint)
        if base.type is BOOL or base.type is VOID:
            raise self.error(n.left, builtins.POWER_OF_A_NUMBER)
        if isinstance(k, float) and k in (0.5, -0.5):
            x = base if base.type.is_float else hir.Cast(F32, sp, base)
            if x.type not in (F32, F64):
                raise self.error(n, f"x ** {k} takes f32 or f64, not {x.type}")
            r = hir.Call(x.type, sp, "sqrt", (x,))
            return r if k > 0 else hir.Binary(x.type, sp, BinOp.DIV, hir.Const(x.type, sp, 1.0), r)
        if isinstance(k, float) and k == int(k) and abs(k) < 2**31:
            k = int(k)
            if base.type.is_int:
                base = hir.Cast(F32, sp, base)
        if not isinstance(k, int) or isinstance(k, bool) or abs(k) >= 2**31:
            raise self.error(
                n.right,
                "** needs a constant integer exponent (x ** 3), or 0.5 for a square root; "
                "for other powers write math.pow(x, y), the float power (wg.exp2(y * wg.log2(x)) where x > 0)",
            )
        if k < 0:
            x = base if base.type.is_float else hir.Cast(F32, sp, base)
            one = hir.Const(x.type, sp, 1.0)
            return hir.Binary(x.type, sp, BinOp.DIV, one, self.powi(x, -k, n))
        if k == 0:
            return hir.Const(base.type, sp, 1.0 if base.type.is_float else 1)
        if k == 1:
            return base
        return self.powi(base, k, n)

    def powi(self, x: hir.Expr, k: int, n: ast.BinOp) -> hir.Expr:
        """x ** k for a constant k >= 2: the row `x ** 3` spells (SPELLINGS)."""
        r = bind.bind(ROWS[POWER], self.span(n), [x, k])
        if isinstance(r, bind.Refusal):
            raise self.error(n.left, r.message)
        return r

    def unify(self, a: hir.Expr, b: hir.Expr, n: ast.AST, what: str = "") -> ScalarType:
        ta, tb = a.type, b.type
        if ta == tb:
            return ta
        if VOID in (ta, tb):
            raise self.error(n, NO_VALUE)
        if BOOL in (ta, tb):
            raise self.error(n, f"cannot mix bool and {tb if ta is BOOL else ta}: convert the bool, e.g. i32(c)")
        if ta.is_float or tb.is_float:
            if ta.is_float and tb.is_float:
                return max(ta, tb, key=lambda t: t.bits)
            return ta if ta.is_float else tb
        if isinstance(a, hir.Const) and _fits(a.value, tb):
            return tb
        if isinstance(b, hir.Const) and _fits(b.value, ta):
            return ta
        raise self.error(n, self.mixed_message(n, ta, tb, what))

    def mixed_message(self, n: ast.AST, ta: ScalarType, tb: ScalarType, what: str) -> str:
        """The refusal of an i32/u32 mix whose value depends on the reading, with both rewrites."""
        head = f"{what or 'this operation'} of {ta} and {tb} depends on reading the operands as signed or unsigned"
        fix = "convert one operand explicitly: i32(x) reads a u32 as signed, u32(x) an i32 as unsigned"
        if isinstance(n, ast.BinOp | ast.AugAssign):
            left = n.left if isinstance(n, ast.BinOp) else n.target
            right = n.right if isinstance(n, ast.BinOp) else n.value
            sym = _OPSYM.get(type(n.op), "?") + ("=" if isinstance(n, ast.AugAssign) else "")
            ul, ur = ast.unparse(left), ast.unparse(right)
            signed = f"{ul} {sym} i32({ur})" if ta is I32 else f"i32({ul}) {sym} {ur}"
            unsigned = f"u32({ul}) {sym} {ur}" if ta is I32 else f"{ul} {sym} u32({ur})"
            fix = f"write `{signed}` (signed) or `{unsigned}` (unsigned)"
        elif isinstance(n, ast.Call) and len(n.args) >= 2:
            fn = ast.unparse(n.func)
            fix = f"convert the arguments to one type, e.g. {fn}(i32(a), b) or {fn}(a, u32(b))"
        return f"{head}: {fix}"

    def elem_value(self, arr: str) -> ScalarType:
        """The type of the values an array's elements read as (i32 or u32 for i8 i16 u8 u16)."""
        return self.arrays[arr].elem.value_type

    def store_value(self, arr: str, e: hir.Expr, n: ast.AST) -> hir.Expr:
        """The value stored into an element of `arr`: of the element's value type; an 8- or 16-bit
        element keeps its low bits (wrapping), but a constant must fit the element type."""
        elem = self.arrays[arr].elem
        if elem.narrow and isinstance(e, hir.Const) and e.type.is_int:
            if not _fits(e.value, elem):
                lo, hi = (
                    (-(1 << (elem.bits - 1)), (1 << (elem.bits - 1)) - 1) if elem.signed else (0, (1 << elem.bits) - 1)
                )
                raise self.error(n, f"{e.value} does not fit {elem} ({lo}..{hi}): write the value the element keeps")
            return hir.Const(elem.value_type, e.span, e.value)
        return self.coerce(e, elem.value_type, n)

    def coerce(self, e: hir.Expr, t: ScalarType, n: ast.AST | Span) -> hir.Expr:
        if e.type == t:
            return e
        if e.type is VOID:
            raise self.error(n, NO_VALUE)
        if isinstance(e, hir.Const) and e.type is not BOOL and t is not BOOL:
            if t.is_float:
                return hir.Const(t, e.span, round_float(e.value, t))
            if isinstance(e.value, int) and _fits(e.value, t):
                return hir.Const(t, e.span, e.value)
        if e.type.is_int and t.is_float:
            return hir.Cast(t, e.span, e)  # implicit int -> float, as Python promotes
        if e.type.is_float and t.is_float and e.type.bits < t.bits:
            return hir.Cast(t, e.span, e)
        if e.type.is_int and t.is_int:
            raise self.error(n, f"expected {t}, got {e.type}: convert explicitly, {t}(...) keeps the 32 bits")
        raise self.error(n, f"expected {t}, got {e.type}: convert explicitly, e.g. {t}(...)")

    def binary(self, op: hir.BinaryOp, a: hir.Expr, b: hir.Expr, n: ast.AST) -> hir.Expr:
        sp = self.span(n)
        if op in BITWISE and a.type is BOOL and b.type is BOOL:
            return hir.Binary(BOOL, sp, op, a, b)
        ta, tb = a.type, b.type
        if ta.is_int and tb.is_int and ta != tb:
            a, b = (self.coerce(a, tb, n), b) if isinstance(a, hir.Const) and _fits(a.value, tb) else (a, b)
            a, b = (a, self.coerce(b, a.type, n)) if isinstance(b, hir.Const) and _fits(b.value, a.type) else (a, b)
        ta, tb = a.type, b.type
        if ta.is_int and tb.is_int and ta != tb:
            # i32 with u32 (docs/compiler.md): the same bits either way -> u32, as in C; shifts keep
            # the left operand's type; / divides the two values; // and % are refused.
            if op in SAME_BITS:
                return hir.Binary(U32, sp, op, self.bits(a, U32), self.bits(b, U32))
            if op in SHIFTS:
                return hir.Binary(ta, sp, op, a, self.bits(b, ta))
            if op is BinOp.DIV:
                return hir.Binary(F32, sp, op, hir.Cast(F32, sp, a), hir.Cast(F32, sp, b))
            raise self.error(n, self.mixed_message(n, ta, tb, SPELLING.get(op, op.value)))
        t = self.unify(a, b, n)
        if t is BOOL:
            raise self.error(n, f"operator {op.value} does not take bools")
        if op in (*BITWISE, *SHIFTS) and not t.is_int:
            raise self.error(n, f"bitwise operators need integers, not {t}")
        if op is BinOp.DIV and t.is_int:
            t = F32
        return hir.Binary(t, sp, op, self.coerce(a, t, n), self.coerce(b, t, n))

    @staticmethod
    def adopts(c: hir.Const, t: ScalarType) -> bool:
        """Whether a constant compared with a value of type t takes t (a float constant stays a
        float against an integer; an integer constant takes an integer type only if it fits)."""
        if c.type.is_float and t.is_int:
            return False
        return not t.is_int or _fits(c.value, t)

    def compare(
        self, op: hir.CompareOp | None, a: hir.Expr, b: hir.Expr, n: ast.AST, an: ast.AST, bn: ast.AST
    ) -> hir.Expr:
        if op is None:
            raise self.error(n, "only ==, !=, <, <=, >, >= comparisons are supported (no 'is' or 'in')")
        if a.type is BOOL and b.type is BOOL:
            if op not in (Cmp.EQ, Cmp.NE):
                raise self.error(n, "bools compare with == and != only")
            return hir.Compare(BOOL, self.span(n), op, a, b)
        if isinstance(a, hir.Const) and not isinstance(b, hir.Const) and self.adopts(a, b.type):
            a = self.coerce(a, b.type, an)
        if isinstance(b, hir.Const) and not isinstance(a, hir.Const) and self.adopts(b, a.type):
            b = self.coerce(b, a.type, bn)
        if a.type.is_int and b.type.is_int and a.type != b.type:
            # i32 against u32 compares the mathematical values (mir/lower.py emits the sequence)
            return hir.Compare(BOOL, self.span(n), op, a, b)
        t = self.unify(a, b, n)
        return hir.Compare(BOOL, self.span(n), op, self.coerce(a, t, an), self.coerce(b, t, bn))

    def call(self, n: ast.Call, hint: ScalarType | None) -> hir.Expr:
        sp = self.span(n)
        callee = self.callee(n.func)
        if callee is not None:
            return self.invoke(n, callee)
        name = self.builtin_name(n.func)
        if name is None:
            raise self.error(
                n.func,
                f"{ast.unparse(n.func)!r} is not a builtin or a function of this module: kernels call builtins "
                "and the module's functions (defined in it or imported from another module)",
            )
        if name in CASTS:
            if len(n.args) != 1 or n.keywords:
                raise self.error(n, f"{name}(x) takes one argument")
            t = CASTS[name]
            e = self.expr(n.args[0], t)
            if t is BOOL:
                return self.truth(e, n)
            if e.type is t:
                return e
            if e.type is BOOL:
                return hir.IfExpr(
                    t,
                    sp,
                    e,
                    hir.Const(t, sp, 1 if t.is_int else 1.0),
                    hir.Const(t, sp, 0 if t.is_int else 0.0),
                )
            if isinstance(e, hir.Const) and (e.type.is_int and t.is_int):
                return hir.Const(t, sp, int(e.value) & 0xFFFFFFFF if t is U32 else _wrap32(int(e.value)))
            return hir.Cast(t, sp, e)
        if name in INF_TESTS and len(n.args) == 1 and not n.keywords:
            return self.inf_test(n, INF_TESTS[name])
        if name == "round" and len(n.args) == 2 and not n.keywords:
            raise self.error(
                n,
                "round(x, ndigits) rounds to decimal digits, which binary floats hold only approximately and "
                "the device has no instruction for; round(x) rounds to an integer",
            )
        row = ROWS.get(CALLS.get(name, ""))
        if row is not None and name in INT_RESULT and len(n.args) == 1 and not n.keywords:
            x = self.expr(n.args[0], hint)
            if x.type.is_int:
                return x  # round(k) of an integer is k
        if row is not None:
            r = self.builtin(row, n, hint, name)
            return hir.Cast(I32, sp, r) if name in INT_RESULT else r
        if name == "len" and len(n.args) == 1 and isinstance(n.args[0], ast.Name) and n.args[0].id in self.arrays:
            return self.dim(n.args[0].id, 0, n)
        if name == "len" and len(n.args) == 1 and isinstance(n.args[0], ast.Name) and n.args[0].id in self.privates:
            return hir.Const(I32, sp, self.privates[n.args[0].id].shape[0])
        if name in ("print", "len", "input", "open", "range"):
            why = {
                "print": "write the value to an array",
                "len": "len(x) takes an array, x",
                "range": "use it in for ... in range(...)",
            }.get(name, "kernels have no input or files")
            raise self.error(n, f"{name}() is not available in kernels: {why}")
        if name in NARROW:
            t = NARROW[name]
            raise self.error(
                n.func,
                f"{name} is an array element type only, there are no {name} values: a store into a {name} "
                f"array keeps the low {t.bits} bits of a {t.value_type} by itself; for the value, write "
                f"x & 0x{(1 << t.bits) - 1:X}" + (" (then subtract the sign)" if t.signed else ""),
            )
        if isinstance(n.func, ast.Name):
            raise self.error(
                n.func,
                f"{name!r} is not a builtin or a function of this module (kernels call builtins and the "
                "module's functions, defined in it or imported from another module)",
            )
        if isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name) and n.func.value.id == "math":
            raise self.error(
                n.func,
                f"math.{name} has no device instruction; kernels have math.{', math.'.join(MATH_MODULE)} "
                "(docs/compiler.md)",
            )
        raise self.error(n.func, f"unknown builtin {name!r}")

    def inf_test(self, n: ast.Call, op: hir.CompareOp) -> hir.Expr:
        """math.isinf(x) (|x| == inf) and math.isfinite(x) (|x| < inf: NaN is not), exactly;
        an integer is finite."""
        sp = self.span(n)
        x = self.expr(n.args[0], F32)
        if x.type is BOOL or x.type is VOID:
            raise self.error(n.args[0], "this takes a number")
        if x.type.is_int:
            return hir.Const(BOOL, sp, op is Cmp.LT)
        r = bind.bind(ROWS[CALLS["fabs"]], sp, [x])
        assert not isinstance(r, bind.Refusal)
        return hir.Compare(BOOL, sp, op, r, hir.Const(x.type, sp, math.inf))

    def builtin(self, row: Builtin, n: ast.Call, hint: ScalarType | None, name: str) -> hir.Expr:
        """A call of a builtin's row (called `name`: its spelling), bound by compiler/bind.py with
        Python's reading of the arguments (_Args), and the binder's refusal as a diagnostic with a
        fix-it."""
        if row.rule is Rule.LOCAL:
            raise self.error(n, "local_array(...) must be assigned to a name: s = wg.local_array(wg.f32, 256)")
        if row.rule is Rule.PRIVATE:
            raise self.error(n, "private_array(...) must be assigned to a name: t = wg.private_array(wg.f32, 8)")
        if bind.toolchain_id(row, len(n.args) + len(n.keywords)):
            self.toolchain_dialect |= self.toolchain_spelling(n.func)  # builtins.TOOLCHAIN_WORKGROUP
        keywords = [(k.arg or "**", k.value) for k in n.keywords]
        r = bind.call(row, self.span(n), _Args(self, row, n, hint), n.args, keywords, spelled=name)
        if not isinstance(r, bind.Refusal):
            return _device_rows(r)
        at = bind.at(r, n.args, keywords)
        msg = r.message
        if row.rule is Rule.MATH and at is not None:  # an f64 or f16 the device has no op for
            msg += f": {ast.unparse(n.func)}(wg.f32({ast.unparse(at)})) computes it in f32, if that is what you mean"
        raise self.error(at or n, msg)

    def numbers(self, row: Builtin, nodes: list[ast.expr], n: ast.Call, hint: ScalarType | None) -> list[hir.Expr]:
        """A builtin's VALUE arguments with Python's promotions for the row's rule."""
        sp = self.span(n)
        floats = hint if hint and hint.is_float else F32
        if row.rule in (Rule.MATH, Rule.PREDICATE):  # an integer argument computes in f32
            xs = [self.expr(a, floats) for a in nodes]
            return [hir.Cast(builtins.math_operand(x.type), sp, x) if x.type.is_int else x for x in xs]
        if row.rule is Rule.WAVE or len(nodes) == 1:
            return [self.expr(nodes[0], hint)]
        if row.rule is Rule.FLOAT_SAME:  # pow: math.pow's meaning, a float power
            xs = [self.expr(a, floats) for a in nodes]
            if isinstance(n.func, ast.Name) and all(x.type.is_int for x in xs):
                raise self.error(
                    n,
                    "pow() of two integers is an integer in Python, and the device's pow is a float "
                    "function: write x ** k for a constant k, or math.pow(x, y) for the float power",
                )
            xs = [hir.Cast(F32, sp, x) if x.type.is_int else x for x in xs]
            t = xs[0].type
            for x in xs[1:]:
                t = self.unify(hir.Var(t, sp, "_"), x, n, row.name)
            return [self.coerce(x, t, a) for x, a in zip(xs, nodes)]
        floats_only = not any(t.is_int for t in builtins.same_types(row.name))  # fma
        if floats_only:
            xs = [self.expr(a, floats) for a in nodes]
        else:
            xs = [self.expr(a, hint) for a in nodes]
            typed = [x for x in xs if not isinstance(x, hir.Const)]
            if typed:  # constants take the type of the first non-constant argument, as literals do
                xs = [self.expr(a, typed[0].type) if isinstance(x, hir.Const) else x for a, x in zip(nodes, xs)]
        t = xs[0].type
        for x in xs[1:]:
            t = self.unify(hir.Var(t, sp, "_"), x, n, "" if floats_only else BY_COMPARE.get(row.name, row.name))
        if floats_only and not t.is_float:
            t = F32
        if t is BOOL:
            raise self.error(n, f"{row.name} takes numbers")
        return [self.coerce(x, t, a) for x, a in zip(xs, nodes)]

    # -- helper functions: instances built by compiler/inline.py's Helpers, inlined before MIR
    def callee(self, f: ast.expr) -> Callee | None:
        """The function of the module a call names (`sq(x)`, `mylib.sq(x)`), or None (a builtin)."""
        scope = self.src.scope
        if scope is None:
            return None
        if isinstance(f, ast.Name) and f.id not in self.vars and f.id not in self.arrays:
            return scope.function(f.id)
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
            m = f.value.id
            if m not in self.vars and m not in self.arrays and m not in MODULES:
                return scope.attribute(m, f.attr)
        return None

    def invoke(self, n: ast.Call, callee: Callee) -> hir.Expr:
        """A call of a helper function: its arguments bound as Python binds them (positions,
        keywords, constant defaults), scalars by value and arrays by reference; one instance of
        the helper per argument types (an unannotated parameter takes its argument's type)."""
        if callee.why:
            raise self.error(n.func, callee.why)
        assert callee.src is not None and callee.node is not None
        src, node = callee.src, callee.node
        a = node.args
        if a.vararg or a.kwarg or a.kwonlyargs:
            raise self.error(
                n.func,
                f"{callee.name!r} takes *args, **kwargs or keyword-only parameters: "
                "a kernel's helper takes plain parameters",
            )
        names = [p.arg for p in (*a.posonlyargs, *a.args)]
        if len(n.args) > len(names) or any(isinstance(x, ast.Starred) for x in n.args):
            raise self.error(
                n, f"{callee.name}() takes {len(names)} positional argument(s) but {len(n.args)} were given"
            )
        given: dict[str, ast.expr] = dict(zip(names, n.args))
        for kw in n.keywords:
            if kw.arg is None:
                raise self.error(kw.value, "**kwargs are not supported in kernels")
            if kw.arg not in names or names.index(kw.arg) < len(a.posonlyargs):
                raise self.error(kw.value, f"{callee.name}() got an unexpected keyword argument {kw.arg!r}")
            if kw.arg in given:
                raise self.error(kw.value, f"{callee.name}() got multiple values for argument {kw.arg!r}")
            given[kw.arg] = kw.value
        defaults = dict(zip(names[len(names) - len(a.defaults) :], a.defaults))
        params = (*a.posonlyargs, *a.args)
        sub = KernelBuilder(src, node, self.shared)  # reads the helper's annotations in its own module
        actual: list[hir.Expr | hir.ArrayArg] = []
        kinds: list[tuple[str, ScalarType | ArrayType, tuple[int, ...]]] = []
        for p in params:
            want = sub.annotation(p.annotation) if p.annotation is not None else None
            if sub.diags:
                self.diags.extend(sub.diags)
                raise _Bail()
            if p.arg not in given:
                if p.arg not in defaults:
                    raise self.error(n, f"{callee.name}() missing required argument {p.arg!r}")
                v = None
                with contextlib.suppress(ArithmeticError, ValueError):
                    v = fold(defaults[p.arg], src.consts.get)
                if v is None:
                    raise self.error(n, f"the default of {p.arg!r} is not a constant: pass {p.arg} explicitly")
                e = self.literal(v, want if isinstance(want, ScalarType) else None, n)
                actual.append(self.coerce(e, want, n) if isinstance(want, ScalarType) else e)
                kinds.append((p.arg, actual[-1].type, ()))
                continue
            x = given[p.arg]
            if isinstance(want, ArrayType) or (want is None and isinstance(x, ast.Name) and x.id in self.arrays):
                if not isinstance(x, ast.Name) or x.id not in self.arrays:
                    raise self.error(x, f"{callee.name}() takes an array as {p.arg!r}: pass an array's name")
                if x.id in self.poisoned:
                    raise _Bail()
                t = self.arrays[x.id]
                if want is not None and (want.elem != t.elem or want.ndim != t.ndim):
                    raise self.error(
                        x, f"{callee.name}() takes {_spell(want)} as {p.arg!r}, and {x.id!r} is {_spell(t)}"
                    )
                actual.append(hir.ArrayArg(x.id, t))
                kinds.append((p.arg, t, self.local_shapes.get(x.id, ())))
                continue
            e = self.expr(x, want)
            if e.type is VOID:
                raise self.error(x, NO_VALUE)
            if want is not None:
                e = self.coerce(e, want, x)
            actual.append(e)
            kinds.append((p.arg, e.type, ()))
        sig = ",".join(f"{_spell(t)}{list(shape) if shape else ''}" for _, t, shape in kinds)
        key = f"{callee.ident}({sig})"
        try:
            h = self.shared.helpers.instance(key, callee.name, self.span(n), lambda: self.build_helper(sub, key, kinds))
        except HelperFailed:
            raise _Bail() from None
        except CompileError as e:
            self.diags.extend(e.diagnostics)
            raise _Bail() from None
        for p, arg in zip(h.params, actual):  # the extents of an array the helper reads: the kernel's
            if isinstance(arg, hir.ArrayArg) and arg.type.space != "local":
                for suffix in HIDDEN_SUFFIXES:
                    if self.shared.helpers.reads_length(h, p.name, suffix):
                        self.hidden_param(arg.name, suffix)
        return hir.Invoke(h.result or VOID, self.span(n), key, tuple(actual))

    def build_helper(
        self, sub: KernelBuilder, key: str, kinds: list[tuple[str, ScalarType | ArrayType, tuple[int, ...]]]
    ) -> hir.Helper:
        """The helper instance `sub` builds, lowered again while its variables' types change."""
        for _ in range(MAX_RESTARTS):
            try:
                h = sub.helper(key, kinds)
                self.shared.toolchain |= sub.toolchain_dialect
                return h
            except _Restart as r:
                sub = KernelBuilder(sub.src, sub.node, self.shared, r.promote)
        raise CompileError([Diagnostic("the variables' types did not settle", sub.span(sub.node))])

    def helper(self, key: str, kinds: list[tuple[str, ScalarType | ArrayType, tuple[int, ...]]]) -> hir.Helper:
        """This builder's function as a helper instance for these parameter types: its result
        type is its annotation, else the type its returns unify to (an int and a float: the float)."""
        node = self.node
        self.is_helper = True
        hparams: list[hir.Param] = []
        for (name, t, shape), p in zip(kinds, (*node.args.posonlyargs, *node.args.args)):
            if isinstance(t, ArrayType):
                self.arrays[name] = t
                if t.space == "local":
                    self.local_shapes[name] = shape
            else:
                self.vars[name] = t
            hparams.append(hir.Param(name, t, self.span(p)))
        ann = node.returns
        if ann is not None and not (isinstance(ann, ast.Constant) and ann.value is None):
            t = self.annotation(ann)
            if isinstance(t, ArrayType):
                self.error(ann, "a function returns a scalar (write results into an array parameter)")
            elif t is not None:
                self.result = t
        body = self.block(node.body)
        if self.locals:
            self.error(self.node, "workgroup arrays (local_array) are declared in kernels: pass one to the function")
        result = self.result_type()
        if self.diags:
            raise CompileError(self.diags)
        if result is not None:
            body = _returning(body, lambda v, r: self.coerce(v, result, r.span or self.node))
        own = {name for name, _, _ in kinds} | self.hidden
        variables = tuple((k, v) for k, v in self.vars.items() if k not in own)
        name = node.name
        # its per-thread arrays (wg.private_array in its body): one set per call (compiler/inline.py)
        privates = tuple(self.privates.values())
        return hir.Helper(key, name, tuple(hparams), result, body, variables, self.span(node), privates)

    def result_type(self) -> ScalarType | None:
        """A helper's result: its annotation, else its returned values' type (None: it returns
        nothing); refused where a path returns nothing and another a value (Python's None)."""
        if not self.returned:
            if self.result is not None and not self.diags:
                self.error(self.node, f"{self.node.name!r} is annotated -> {self.result} and returns no value")
            return None
        if self.bare_returns:
            first = self.returned[0][1]
            self.error(
                self.bare_returns[0],
                f"a bare return gives None, and line {first.lineno + self.src.line_offset} "
                "returns a value: return a value here too",
            )
            return None
        if not _always_returns(self.node.body):
            self.error(
                self.node,
                f"{self.node.name!r} can reach its end without returning a value (Python "
                "would return None there): end it with a return",
            )
            return None
        if self.result is not None:
            return self.result
        (v0, r0), *rest = self.returned
        t = v0.type
        for v, r in rest:
            if v.type != t:
                if (v.type.is_int and t.is_int) or BOOL in (t, v.type):
                    self.error(
                        r,
                        f"this returns {v.type}, and line {r0.lineno + self.src.line_offset} returns "
                        f"{t}: a function returns one type, so convert one of them explicitly",
                    )
                    return None
                t = self.unify(hir.Var(t, None, "_"), v, r)
        return t

    def helper_return(self, s: ast.Return) -> hir.Stmt:
        if s.value is None or (isinstance(s.value, ast.Constant) and s.value.value is None):
            self.bare_returns.append(s)
            return hir.Return(self.span(s))
        v = self.expr(s.value, self.result)
        if v.type is VOID:
            raise self.error(s.value, NO_VALUE)
        if self.result is not None:
            v = self.coerce(v, self.result, s.value)
        self.returned.append((v, s))
        return hir.Return(self.span(s), v)


_OPSYM = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.BitAnd: "&",
    ast.BitOr: "|",
    ast.BitXor: "^",
    ast.LShift: "<<",
    ast.RShift: ">>",
    ast.Pow: "**",
}


class _Args:
    """How Python reads a builtin call's arguments (a bind.Reader): integers become f32 where a
    float is computed (math), the numbers of one call unify as in arithmetic (Frontend.numbers)."""

    def __init__(self, front: KernelBuilder, row: Builtin, n: ast.Call, hint: ScalarType | None):
        self.front, self.row, self.n, self.hint = front, row, n, hint

    def constant(self, node: ast.expr, kind: Arg) -> bind.Actual:
        return self.front.fold(node)

    def scope(self, node: ast.expr) -> bind.Actual:
        return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None

    def type(self, node: ast.expr) -> bind.Actual:
        return self.front.type_name(node, elements=True)

    def array(self, node: ast.expr) -> bind.ArrayRef | None:
        if isinstance(node, ast.Name) and node.id in self.front.privates:
            raise self.front.error(
                node,
                f"{node.id!r} is a per-thread array: no other thread sees it, so it needs no atomic; "
                f"update its element directly ({node.id}[i] += v)",
            )
        arr = self.front.arrays.get(node.id) if isinstance(node, ast.Name) else None
        return bind.ArrayRef(node.id, arr.elem) if isinstance(node, ast.Name) and arr is not None else None

    def index(self, node: ast.expr) -> hir.Expr:
        return self.front.expr(node, I32)

    def condition(self, node: ast.expr) -> hir.Expr:
        return self.front.condition(node)

    def element(self, node: ast.expr, elem: ScalarType) -> hir.Expr:
        return self.front.coerce(self.front.expr(node, elem), elem, node)

    def value(self, node: ast.expr) -> ast.expr:
        return node  # read by values, together

    def values(self, read: list[ast.expr], nodes: list[ast.expr]) -> list[hir.Expr]:
        return self.front.numbers(self.row, nodes, self.n, self.hint)


def _device_rows(e: hir.Expr) -> hir.Expr:
    """A chain of min/max by comparison on integers as the device's min/max (the same values)."""
    if isinstance(e, hir.Call) and e.name in BY_COMPARE and e.type.is_int:
        return replace(e, name=BY_COMPARE[e.name], args=tuple(_device_rows(a) for a in e.args))
    return e


def _fits(v: object, t: ScalarType) -> bool:
    """Whether the number v is a value of the integer type t."""
    if isinstance(v, bool) or not isinstance(v, int | float):
        return False
    if isinstance(v, float) and (not math.isfinite(v) or v != int(v)):
        return False
    v = int(v)
    if t is I32:
        return -(2**31) <= v < 2**31
    if t is U32:
        return 0 <= v < 2**32
    if t.narrow:
        return -(1 << (t.bits - 1)) <= v < (1 << (t.bits - 1)) if t.signed else 0 <= v < (1 << t.bits)
    return False


HIDDEN_SUFFIXES = HIDDEN_EXTENTS  # compiler/inline.py renames them with the array


@dataclass
class Shared:
    """What a kernel's builder and the builders of the helpers it calls share."""

    helpers: Helpers
    toolchain: bool = False  # a helper called a builtin in the Rust toolchain's dialect


def _spell(t: ScalarType | ArrayType) -> str:
    if isinstance(t, ArrayType):
        return f"{'local ' if t.space == 'local' else ''}{t.elem}[{', '.join(':' * t.ndim)}]"
    return str(t)


def _always_returns(body: list[ast.stmt]) -> bool:
    """Whether every path through `body` ends in a return (`while True` without a break: yes)."""
    for s in body:
        if isinstance(s, ast.Return):
            return True
        if isinstance(s, ast.If) and _always_returns(s.body) and _always_returns(s.orelse):
            return True
        if isinstance(s, ast.While) and isinstance(s.test, ast.Constant) and s.test.value is True:
            inner = [x for x in ast.walk(s) if isinstance(x, ast.Break)]
            if not inner:
                return True
    return False


def _returning(body: tuple[hir.Stmt, ...], f: Callable[[hir.Expr, hir.Stmt], hir.Expr]) -> tuple[hir.Stmt, ...]:
    """The body with every returned value v replaced by f(v) (the result type's conversion)."""
    out: list[hir.Stmt] = []
    for s in body:
        if isinstance(s, hir.Return) and s.value is not None:
            s = replace(s, value=f(s.value, s))
        elif isinstance(s, hir.If):
            s = replace(s, then=_returning(s.then, f), other=_returning(s.other, f))
        elif isinstance(s, hir.While | hir.For):
            s = replace(s, body=_returning(s.body, f))
        out.append(s)
    return tuple(out)


class _Bail(Exception):
    """Abandon the current statement after recording a diagnostic."""


def _has_call(e: hir.Expr) -> bool:
    """Whether an expression calls anything (evaluating it twice might not be evaluating it once)."""
    stack: list[hir.Expr] = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, hir.Call | hir.Invoke):
            return True
        stack.extend(c for c in hir._children(x) if isinstance(c, hir.Expr))
    return False


class _Restart(Exception):
    """Lower the function again, with these variables of a float type from their first assignment."""

    def __init__(self, promote: dict[str, ScalarType]):
        super().__init__()
        self.promote = promote


MAX_RESTARTS = 64


def _wrap32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >> 31 else v


def frontend(src: Source, node: ast.FunctionDef) -> hir.Function:
    """The HIR of one kernel function (without its decorator's options)."""
    return _lower(src, node)[0]


def _lower(src: Source, node: ast.FunctionDef) -> tuple[hir.Function, bool]:
    """The HIR of one kernel function, and whether it is in the Rust toolchain's dialect."""
    promote: dict[str, ScalarType] = {}
    for _ in range(MAX_RESTARTS):
        fe = KernelBuilder(src, node, promote=promote)
        try:
            fn = fe.run()
            break
        except _Bail:
            raise CompileError(fe.diags) from None
        except _Restart as r:
            promote = r.promote
    else:
        raise CompileError([Diagnostic("the variables' types did not settle", fe.span(node))])
    dup = param_errors(fn)  # Python itself: "duplicate argument 'x' in function definition"
    if dup:
        raise CompileError(dup)
    return fn, fe.toolchain_dialect or fe.shared.toolchain


def kernel(src: Source, node: ast.FunctionDef) -> hir.Function:
    """One kernel function in HIR, with its decorator's options (max_registers, workgroup); a
    kernel in the Rust toolchain's dialect (a bare `thread_id()`) records the workgroup that
    toolchain records, builtins.TOOLCHAIN_WORKGROUP, unless it gives its own."""
    fn, toolchain = _lower(src, node)
    options = kernel_options(node, src.consts)
    if toolchain and "workgroup" not in options:
        options["workgroup"] = TOOLCHAIN_WORKGROUP
    return replace(fn, options=options)


class PythonFrontend:
    """The FRONTENDS entry for Python (compiler/frontends/__init__.py)."""

    name = "python"
    suffixes = (".py",)

    def parse(self, text: str, file: str) -> list[hir.Function]:
        return [kernel(src, node) for src, node in kernels_in_text(text, file)]

    def load(self, source: object, filename: str | None = None) -> list[hir.Function]:
        """Python source text, a path to a .py file, or a function (decorated or not)."""
        if callable(source):
            return [kernel(*function_source(source))]
        text = str(source)
        if filename is None and "\n" not in text and text.endswith(".py") and os.path.exists(text):
            filename = text
            with open(text, "rb") as f:
                text = decode_source(f.read(), filename, "not UTF-8 text", CompileError)
        return self.parse(text, filename or "<string>")


PYTHON = PythonFrontend()


# ---- the spelling table: how Python kernels write each builtin ---------------------------------
# builtin row -> a typical call (the docs' side-by-side table); `wg.NAME(...)` unless said
_ARGS = {Arg.AXIS: "0", Arg.SCOPE: '"workgroup"', Arg.TYPE: "wg.f32", Arg.COUNT: "256", Arg.ARRAY: "a"}
_ARGS |= {Arg.INDEX: "i", Arg.CONDITION: "c", Arg.VALUE: "x"}
SPELLINGS: dict[str, str] = {
    name: f"wg.{name}({', '.join(_ARGS[a] for a in b.args)})" for name, b in ROWS.items() if b.rule is not Rule.CAST
}
SPELLINGS |= {n: f"wg.{n}(x)" for n in builtins.CASTS} | {"bool": "bool(x)", "abs": "abs(x)"}
SPELLINGS |= {"min_first": "min(a, b)", "max_first": "max(a, b)", "fma": "wg.fma(a, b, c)", "powi": "x ** 3"}
SPELLINGS |= {"min": "wg.fmin(a, b)", "max": "wg.fmax(a, b)"}
SPELLINGS |= {"atomic_cas": "wg.atomic_cas(a, i, expected, desired)", "atomic_add": "wg.atomic_add(a, i, v)"}
SPELLINGS |= {f"atomic_{op}": f"wg.atomic_{op}(a, i, v)" for op in builtins.ATOMIC_OPS}
SPELLINGS |= {n: f"wg.{n}(x, lane)" for n, b in ROWS.items() if b.rule is Rule.WAVE and len(b.args) == 2}
SPELLINGS |= {"local_array": "wg.local_array(wg.f32, 256)", "pow": "math.pow(x, y)", "round_even": "round(x)"}
SPELLINGS |= {"private_array": "wg.private_array(wg.f32, (8, 8))"}
SPELLINGS |= {"clamp": "wg.clamp(x, lo, hi)", "trunc": "math.trunc(x)", "isnan": "math.isnan(x)"}
# a called name (bare, or an attribute of wg / math / wave) -> its row; a name not here is no builtin
CALLS: dict[str, str] = {n: n for n, b in ROWS.items() if b.rule is not Rule.POWI}  # powi: `x ** 3`
CALLS |= {"fabs": "abs", "round": "round_even"}
# Python's min and max compare left to right (CPython's meaning, also for NaN and -0.0: the
# same in a compiled kernel and in wg.python_thread); wg.fmin and wg.fmax are the device's
CALLS |= {"min": "min_first", "max": "max_first", "fmin": "min", "fmax": "max"}
INF_TESTS = {"isinf": Cmp.EQ, "isfinite": Cmp.LT}  # math.isinf(x): abs(x) == inf; isfinite: abs(x) < inf
# what `math.` offers in kernels (a refusal of another math function lists them)
MATH_MODULE = ("sqrt", "exp", "exp2", "log", "log2", "sin", "cos", "pow", "fma", "fabs", "floor", "ceil")
MATH_MODULE += ("trunc", "isnan", "isinf", "isfinite", "pi", "e", "tau", "inf", "nan")
BY_COMPARE = {"min_first": "min", "max_first": "max"}  # on integers: the same value as the device's
POWER = "powi"  # the row of `x ** k` for a constant k
INT_RESULT = frozenset({"round"})  # Python's round(x) is an int: the call gives i32(round_even(x))
# the loop forms: Python's range, and wg.static_range (Triton's tl.static_range), which unrolls fully
LOOPS = {"range": hir.Unroll.NO, "static_range": hir.Unroll.FULL}
