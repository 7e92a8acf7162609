"""Lane loops of the C translation run in chunks of VL lanes, under masks (SIMD across lanes).

`codegen` writes each lane loop as `for l in range(L): if act[l]: BODY`, BODY the statements of
one lane: a fused straight-line run, or a whole innermost loop run lane by lane (`while True`
with per-lane `break`/`continue`, an iteration count `it`, the longest lane's count `mx`). Spelt
as written, the C compiler sees a branch per lane and a loop it cannot vectorise. Here BODY is
spelt for a chunk of VL consecutive lanes at a time, statement by statement: every per-lane
local is an array of VL (`V<name>`), and each run of straight statements becomes one
branch-free loop over the chunk (`for (j_ = 0; j_ < VL; j_++)`), which the compiler turns into
vector instructions. Control flow is the NumPy engine's, for the chunk:

- a lane-varying `if` computes the masks of its two arms once (`Mt`/`Me`) and runs each arm
  under its mask, if any lane takes it; inside, an assignment is a blend by bits (`blend_i`,
  `blend_f`: GCC made `x = m ? new : x` a masked store behind a branch on each mask), a store to
  memory is made only by the lanes of the mask;
- an `if` with a loop inside (the search of a global access for its buffer, under `buffers=`)
  runs lane after lane within the chunk, as written: it is rare, and compact code compiles
  faster;
- a loop (`while True`, or `for j in range(n)` with the same bounds in every lane) goes round
  while any lane of the chunk is still in it (`lv`, the lanes in the loop; `cv`, those still in
  this iteration); `break`/`continue` clear their lanes from the masks; the uniform iteration
  count `it` counts the chunk's rounds, which is the most any lane of the chunk goes round, so
  the budget bound `mx` is the same;
- a bounds check (`if cond: status...; return`) becomes an OR over the chunk's lanes, tested
  after the run; a lane that fails it does nothing more in the run (its loads read word 0, its
  stores are not made), and the launch stops as before (the NumPy engine then re-runs it from
  the caller's memory and reports the trap, docs/emulator.md);
- a load of a lane outside the mask reads word 0 of its memory (every memory the translation
  reads has at least one word: `codegen` allocates local memory of at least 16 bytes, and a
  launch's device and constant images are at least 16 bytes) and its value is not kept.

Order: lanes are still applied in ascending order within a statement, and a run holds per memory
space either loads or one store (codegen's segments; a lane-by-lane loop stores nothing), so
running a run statement by statement over a chunk leaves the memory and registers that running
it lane by lane leaves. A body with anything else (a call, a `return` outside a check) keeps
the scalar loop. Only the C translation is chunked; numba runs the lane loop as written.

Which lane loops are chunked is the lane mode's (ctrans.LANE_MODES, $WAVEGPU_C_LANES): by
default only the heavy ones (HEAVY: a loop run lane by lane with many statements a round), since
a chunk's fixed costs make a light body slower than its lane-by-lane loop.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .ctrans import Func

UNIFORM = frozenset(("it", "mx", "j"))
"""Locals of a lane body with one value for the whole chunk: the iteration count, the longest
lane's count, and the counter of the access-region search (`for j in range(nb)`)."""
MEMORY = frozenset(f"{p}{w}" for p in ("gm", "cm", "lm") for w in (8, 16, 32))
"""The memory views a lane reads and writes."""
_TWO_D_LANE = frozenset("RP")
CHUNKS = (16, 8)
"""Chunk widths tried in order: the first that divides the workgroup's lane count L (16 float32
lanes fill an AVX-512 register; 8 an AVX2 one). Other L keep the scalar loop."""


HEAVY = 8
"""What makes a lane loop worth chunking (lane mode `auto`): a loop inside it (run lane by lane:
an inner product) whose every round runs at least HEAVY statements per loop over the chunk.
Measured (docs/performance.md, "SIMD across lanes"): the Rust toolchain's 8x8 GEMM loop (204
statements in 5 loops over the chunk) ran 2.2 times as fast chunked; our 4-accumulator blocked
SGEMM's loop (23 in 8) 2.2 times slower, the tiled SGEMM's (13 in 5) 1.8 times slower; and the
straight lane loops of the vector add, reduction, scan and histogram 0.74-0.84 times as fast.
Every chunk has fixed costs (its masks, each loop's trip, the checks' flags) that a light body
does not pay back."""


def chunk_width(lanes: int) -> int | None:
    """VL for a workgroup of `lanes` lanes (L), or None to keep the scalar lane loop."""
    for vl in CHUNKS:
        if lanes % vl == 0:
            return vl
    return None


class Scalar(Exception):
    """A lane body this module does not chunk: the scalar loop is written instead."""


def lane_loop_body(s: ast.For) -> list[ast.stmt] | None:
    """BODY of `for l in range(L): if act[l]: BODY`, else None."""
    it = s.iter
    if not (
        isinstance(s.target, ast.Name)
        and s.target.id == "l"
        and isinstance(it, ast.Call)
        and isinstance(it.func, ast.Name)
        and it.func.id == "range"
        and len(it.args) == 1
        and isinstance(it.args[0], ast.Name)
        and it.args[0].id == "L"
        and len(s.body) == 1
        and not s.orelse
    ):
        return None
    inner = s.body[0]
    t = inner.test if isinstance(inner, ast.If) else None
    if not (
        isinstance(inner, ast.If)
        and not inner.orelse
        and isinstance(t, ast.Subscript)
        and isinstance(t.value, ast.Name)
        and t.value.id == "act"
        and isinstance(t.slice, ast.Name)
        and t.slice.id == "l"
    ):
        return None
    return inner.body


def lane_names(body: list[ast.stmt]) -> set[str]:
    """The per-lane locals of a lane body: every name it assigns but the uniform ones."""
    names: set[str] = set()
    for node in ast.walk(ast.Module(body=body, type_ignores=[])):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.For)):
            targets = [node.target]
        names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names - UNIFORM


def _is_trap(s: ast.stmt) -> bool:
    """`if cond: status[i] = ...; ...; return ...`: a check that stops the launch."""
    if not isinstance(s, ast.If) or s.orelse or not s.body or not isinstance(s.body[-1], ast.Return):
        return False
    for x in s.body[:-1]:
        if not (
            isinstance(x, ast.Assign)
            and isinstance(x.targets[0], ast.Subscript)
            and isinstance(x.targets[0].value, ast.Name)
            and x.targets[0].value.id == "status"
        ):
            return False
    return True


def _lane_type(name: str) -> str:
    """The C type of a per-lane local's array: float32 locals, and int64 for the rest, as in the
    scalar translation (bytes for the 0/1 flags `p_<n>` and `w_<n>` made blocked SGEMM 2.4 times
    slower: GCC then vectorises the long runs with narrower vectors)."""
    return "float" if name[:2] in ("f_", "x_") else "i64"


def _word_load(value: ast.expr) -> ast.Subscript | None:
    """The 32-bit load in a lane value (`np.int64(gm32[a >> 2])`), if there is exactly one."""
    subs = [
        n
        for n in ast.walk(value)
        if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and n.value.id in MEMORY
    ]
    if len(subs) != 1 or not subs[0].value.id.endswith("32"):  # type: ignore[attr-defined]
        return None
    return subs[0]


class _Replace(ast.NodeTransformer):
    """An expression with one subscript (by its text) read from a lane array instead."""

    def __init__(self, sub: ast.Subscript, name: str):
        self.text = ast.unparse(sub)
        self.name = name

    def visit_Subscript(self, node: ast.Subscript) -> ast.expr:
        if ast.unparse(node) == self.text:
            return ast.Name(id=self.name, ctx=ast.Load())
        return self.generic_visit(node)  # type: ignore[return-value]


def _jumps_out(stmts: list[ast.stmt]) -> bool:
    """Whether a `break` or `continue` among stmts (not inside a loop of their own) leaves a loop
    around them."""
    for x in stmts:
        if isinstance(x, (ast.Break, ast.Continue)):
            return True
        if isinstance(x, ast.If) and _jumps_out(x.body + x.orelse):
            return True
    return False


def _has_loop(s: ast.stmt) -> bool:
    return any(isinstance(x, (ast.For, ast.While)) for x in ast.walk(s))


@dataclass
class _Loop:
    lv: str  # the chunk's lanes still in the loop
    cv: str  # those still in this iteration
    stack: list[str] = field(default_factory=list)  # masks of the lane-varying ifs inside it


@dataclass
class _Run:
    """Straight statements under one mask, waiting to be written as one loop over the chunk."""

    mask: str
    lines: list[str] = field(default_factory=list)
    traps: list[ast.If] = field(default_factory=list)
    stores: list[tuple[str, str, str, str]] = field(default_factory=list)  # (memory, index, value, mask) arrays


class Chunked:
    """Writes one lane loop of function `f` chunked (raises Scalar when it cannot)."""

    def __init__(self, f: Func, body: list[ast.stmt], vl: int, heavy_only: bool = False):
        self.f = f
        self.heavy_only = heavy_only
        self.work = [0, 0]  # statements of runs: outside loops, inside (a chunk's loop goes round)
        self.passes = [0, 0]  # loops over the chunk: outside loops, inside
        self.body = body
        self.vl = vl
        self.lanes = lane_names(body)
        self.run: _Run | None = None
        self.loops: list[_Loop] = []
        self.top = True  # at the lane body's own level: lane locals need no blend
        self.divergent = 0  # lane-varying ifs around (a statement of the whole chunk is refused there)

    # ------------------------------------------------------------- helpers
    def varying(self, node: ast.AST) -> bool:
        return any(isinstance(n, ast.Name) and (n.id in self.lanes or n.id == "l") for n in ast.walk(node))

    def new(self, kind: str, ctype: str = "i64", array: bool = True) -> str:
        name = f"{kind}{len(self.f.vdecls)}_"
        self.f.vdecls[name] = (ctype, self.vl if array else 0)
        return name

    def chunk_loop(self, ind: int, lines: list[str], mask: str | None = None) -> None:
        self.passes[bool(self.loops)] += 1
        self.f.put(ind, "#pragma GCC ivdep")
        self.f.put(ind, "#pragma clang loop vectorize(assume_safety)")
        self.f.put(ind, f"for (j_ = 0; j_ < {self.vl}; j_++) {{")
        if mask is not None:
            self.f.put(ind + 1, f"i64 ok_ = {mask}[j_];")
        for x in lines:
            self.f.put(ind + 1, x)
        self.f.put(ind, "}")

    def flush(self, ind: int) -> None:
        """Write the pending run: one loop over the chunk; its checks leave a bit per check
        (`f_`, check k in bit min(k, 63)) in a lane array, ORed after the loop (a reduction
        inside it keeps GCC from vectorising a long run), and the first check that failed in
        any lane stops the launch."""
        run, self.run = self.run, None
        if run is None or not (run.lines or run.traps):
            return
        lines = run.lines
        if run.traps:
            flags, a = self.new("F"), self.new("A", array=False)
            lines = ["i64 f_ = 0;", *lines, f"{flags}[j_] = f_;"]
        self.chunk_loop(ind, lines, run.mask)
        for arr, si, sv, sm in run.stores:
            self.store(arr, si, sv, sm, ind)
        if not run.traps:
            return
        self.f.put(ind, f"{a} = 0;")
        self.chunk_loop(ind, [f"{a} |= {flags}[j_];"])
        self.f.put(ind, f"if ({a}) {{")
        for k, s in enumerate(run.traps):
            bit = f"({a} >> {min(k, 63)}) & 1"
            self.f.put(ind + 1, f"if ({bit}) {{" if k == 0 else f"}} else if ({bit}) {{")
            self.f.body(s.body, ind + 2)
        self.f.put(ind + 1, "}")
        self.f.put(ind, "}")

    def store(self, arr: str, si: str, sv: str, sm: str, ind: int) -> None:
        """A store of the run, made after its loop from the lanes' indices, values and masks: as
        one contiguous vector store where every lane of the chunk stores and lane j's element is
        the first lane's plus j (a coalesced access: x86's scatter is microcoded, a store of 16
        consecutive words one instruction), else lane after lane, in lane order. The run holds
        no other access to this memory (a segment holds one store per memory space, a loop run
        lane by lane none), so the store may move to the end of the run; the lanes' order within
        the store is kept."""
        f = self.f
        self.coalesced(si, sm, ind)
        self.chunk_loop(ind + 1, [f"{arr}[{si}[0] + j_] = {sv}[j_];"])
        f.put(ind, "} else {")
        f.put(ind + 1, f"for (j_ = 0; j_ < {self.vl}; j_++) if ({sm}[j_]) {arr}[{si}[j_]] = {sv}[j_];")
        f.put(ind, "}")

    def coalesced(self, index: str, mask: str, ind: int) -> None:
        """Open `if (<the chunk is coalesced>) {`: every lane of the chunk in `mask`, and lane j's
        element (`index`) the first lane's plus j. The caller writes the contiguous access, then
        `} else {`, the lane-by-lane one, and `}`."""
        a = self.new("A", array=False)
        self.f.put(ind, f"{a} = 1;")
        self.chunk_loop(ind, [f"{a} &= {mask}[j_] & ({index}[j_] == {index}[0] + j_);"])
        self.f.put(ind, f"if ({a}) {{")

    def load(self, sub: ast.Subscript, value: ast.expr, mask: str, ind: int) -> ast.expr:
        """A 32-bit load outside loops: the run so far is written with the lanes' indices and
        masks; then the load, as one contiguous vector load where every lane of the chunk loads
        and lane j's word is the first lane's plus j (a coalesced access), else as a gather;
        returns `value` reading the loaded words (a lane array) in place of the subscript, for the
        run that follows. Its bounds check is in the run before it: where a lane failed it, the
        run's end has stopped the launch."""
        f = self.f
        arr = sub.value.id  # type: ignore[attr-defined]
        li, lm, lv = self.new("L"), self.new("L"), self.new("L")
        self.add_to(mask, f"{li}[j_] = {f.ex(sub.slice)[0]}; {lm}[j_] = ok_;", ind)
        self.flush(ind)
        self.coalesced(li, lm, ind)
        self.chunk_loop(ind + 1, [f"{lv}[j_] = {arr}[{li}[0] + j_];"])
        f.put(ind, "} else {")
        self.chunk_loop(ind + 1, [f"{lv}[j_] = {arr}[(int)({li}[j_] & -{lm}[j_])];"])
        f.put(ind, "}")
        return _Replace(sub, lv).visit(ast.parse(ast.unparse(value), mode="eval")).body

    def add_to(self, mask: str, line: str, ind: int) -> None:
        if self.run is not None and self.run.mask != mask:
            self.flush(ind)
        self.add(mask, line)

    def add(self, mask: str, line: str) -> None:
        self.work[bool(self.loops)] += 1
        if self.run is None:
            self.run = _Run(mask)
        assert self.run.mask == mask
        self.run.lines.append(line)

    def typed(self, name: str, value: ast.expr) -> str:
        x, t = self.f.ex(value)
        want = "f" if name[:2] in ("f_", "x_") else "i"
        if want == "f" and t == "d":
            raise Scalar("a float64 value in a float32 local")
        return f"({'float' if want == 'f' else 'i64'})({x})"

    # ------------------------------------------------------------- the loop
    def write(self, ind: int) -> None:
        f = self.f
        f.lane = self.lanes
        try:
            for n in self.lanes:
                f.vdecls[f"V{n}"] = (_lane_type(n), self.vl)
            m0 = self.new("M")
            any0 = self.new("A", array=False)
            f.put(ind, f"for (c_ = 0; c_ < L; c_ += {self.vl}) {{")
            f.put(ind + 1, f"{any0} = 0;")
            self.chunk_loop(ind + 1, [f"{m0}[j_] = act[c_ + j_];", f"{any0} |= {m0}[j_];"])
            f.put(ind + 1, f"if (!{any0}) continue;")
            self.block(self.body, m0, ind + 1)
            self.flush(ind + 1)
            f.put(ind, "}")
            if self.heavy_only and self.work[1] < HEAVY * max(self.passes[1], 1):
                raise Scalar("a light lane loop (its lane-by-lane C is faster)")
        finally:
            f.lane = None

    def block(self, stmts: list[ast.stmt], mask: str, ind: int) -> None:
        for s in stmts:
            self.stmt(s, mask, ind)

    def stmt(self, s: ast.stmt, mask: str, ind: int) -> None:
        f = self.f
        if isinstance(s, ast.Pass) or (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)):
            return
        if isinstance(s, ast.If) and _is_trap(s) and self.varying(s.test):
            t = f.truth(s.test)
            if self.run is None or self.run.mask != mask:
                self.flush(ind)
            k = len(self.run.traps) if self.run is not None else 0
            self.add(mask, f"{{ i64 t_ = ok_ & !!({t}); f_ |= t_ << {min(k, 63)}; ok_ &= !t_; }}")
            assert self.run is not None
            self.run.traps.append(s)
            return
        if isinstance(s, (ast.Assign, ast.AugAssign)) and self.simple(s, mask, ind):
            return
        if not self.varying(s) and not isinstance(s, (ast.While, ast.For, ast.Break, ast.Continue)):
            # a statement of the whole chunk: `it += 1`, `if it > budget: <stop>`, `mx = it`
            if self.divergent:
                raise Scalar("a uniform statement under a lane-varying condition")
            self.flush(ind)
            if isinstance(s, ast.If):
                f.put(ind, f"if ({f.truth(s.test)}) {{")
                self.block(s.body, mask, ind + 1)
                self.flush(ind + 1)
                if s.orelse:
                    f.put(ind, "} else {")
                    self.block(s.orelse, mask, ind + 1)
                    self.flush(ind + 1)
                f.put(ind, "}")
            elif isinstance(s, (ast.Assign, ast.AugAssign, ast.Return)):
                f.stmt(s, ind)
            else:
                raise Scalar(f"a {type(s).__name__} of the whole chunk")
            return
        self.flush(ind)
        if isinstance(s, ast.If) and _has_loop(s):
            self.lane_by_lane(s, mask, ind)
        elif isinstance(s, ast.If):
            self.lane_if(s, mask, ind)
        elif isinstance(s, ast.While):
            if not (isinstance(s.test, ast.Constant) and s.test.value is True) or s.orelse:
                raise Scalar("a while loop other than `while True`")
            self.loop(s.body, mask, ind, "for (;;) {")
        elif isinstance(s, ast.For):
            it = s.iter
            if not (
                isinstance(s.target, ast.Name)
                and s.target.id in UNIFORM
                and isinstance(it, ast.Call)
                and isinstance(it.func, ast.Name)
                and it.func.id == "range"
                and 1 <= len(it.args) <= 2
                and not s.orelse
                and not any(self.varying(a) for a in it.args)
            ):
                raise Scalar("a for loop over lane-varying bounds")
            lo, hi = ("0LL", f.ex(it.args[0])[0]) if len(it.args) == 1 else (f.ex(a)[0] for a in it.args)
            v = s.target.id
            self.loop(s.body, mask, ind, f"for ({v} = {lo}; {v} < {hi}; {v}++) {{")
        elif isinstance(s, (ast.Break, ast.Continue)):
            self.jump(isinstance(s, ast.Break), mask, ind)
        else:
            raise Scalar(f"a {type(s).__name__} in a lane loop")

    def simple(self, s: ast.Assign | ast.AugAssign, mask: str, ind: int) -> bool:
        """Add an assignment of lane values to the pending run; False if it is not one."""
        f = self.f
        if isinstance(s, ast.Assign):
            if len(s.targets) != 1:
                raise Scalar("a multiple assignment")
            target, value = s.targets[0], s.value
        else:
            target = s.target
            value = ast.BinOp(left=ast.Name(id=target.id, ctx=ast.Load()), op=s.op, right=s.value)  # type: ignore[attr-defined]
            ast.copy_location(value, s)
        if isinstance(target, ast.Name):
            if target.id not in self.lanes:
                if self.varying(value):
                    raise Scalar(f"a lane value assigned to the chunk's {target.id}")
                return False
            load = _word_load(value) if not self.loops else None
            if load is not None:
                value = self.load(load, value, mask, ind)
            v = self.typed(target.id, value)
            name = f"V{target.id}[j_]"
            blend = "blend_f" if _lane_type(target.id) == "float" else "blend_i"
            line = f"{name} = {v};" if self.top and not self.divergent else f"{name} = {blend}(ok_, {v}, {name});"
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            arr = target.value.id
            sl = target.slice
            if arr in _TWO_D_LANE and isinstance(sl, ast.Tuple) and len(sl.elts) == 2:
                if not (isinstance(sl.elts[1], ast.Name) and sl.elts[1].id == "l") or self.varying(sl.elts[0]):
                    raise Scalar("a register array indexed other than [row, l]")
                cell = f"{arr}[({f.ex(sl.elts[0])[0]}) * L + c_ + j_]"
                line = f"{cell} = blend_i(ok_, (i64)({f.ex(value)[0]}), {cell});"
            elif arr in MEMORY:
                i, t = f.ex(sl)
                if t != "i":
                    raise Scalar("a float index")
                si, sv, sm = self.new("S"), self.new("S"), self.new("S")
                line = f"{si}[j_] = {i}; {sv}[j_] = {f.ex(value)[0]}; {sm}[j_] = ok_;"
                if self.run is None or self.run.mask != mask:
                    self.flush(ind)
                self.add(mask, line)
                assert self.run is not None
                self.run.stores.append((arr, si, sv, sm))
                return True
            elif not self.varying(s):
                return False
            else:
                raise Scalar(f"an assignment to {arr}")
        else:
            raise Scalar("an assignment target")
        if self.run is None or self.run.mask != mask:
            self.flush(ind)
        self.add(mask, line)
        return True

    def lane_by_lane(self, s: ast.If, mask: str, ind: int) -> None:
        """An `if` with a loop inside (the search of a global access for its array, run only
        when the launch names its buffers): lane after lane within the chunk, as written. It is
        rare, so compact code (one loop over the chunk) beats a vector form."""
        if (
            any(isinstance(x, ast.Return) for x in ast.walk(s))
            or any(not self.varying(x) for x in ast.walk(s) if isinstance(x, (ast.Assign, ast.AugAssign)))
            or _jumps_out(s.body + s.orelse)
        ):
            raise Scalar("a loop inside an if that stops the launch, sets a value of the chunk or leaves a loop")
        f = self.f
        # the test's terms that are the chunk's (`nb >= 0`: the launch names its buffers) are
        # tested once, before the loop over the chunk
        t = s.test
        terms = t.values if isinstance(t, ast.BoolOp) and isinstance(t.op, ast.And) else [t]
        whole = [x for x in terms if not self.varying(x)]
        if whole and s.orelse:
            whole = []
        if whole:
            f.put(ind, f"if ({' && '.join(f.truth(x) for x in whole)}) {{")
            ind += 1
            rest = [x for x in terms if x not in whole]
            test = rest[0] if len(rest) == 1 else ast.BoolOp(op=ast.And(), values=rest)
            s = (
                ast.If(test=test, body=s.body, orelse=[])
                if rest
                else ast.If(test=ast.Constant(True), body=s.body, orelse=[])
            )
        f.put(ind, f"for (j_ = 0; j_ < {self.vl}; j_++) {{")
        f.put(ind + 1, f"i64 ok_ = {mask}[j_];")
        f.put(ind + 1, "if (ok_) {")
        f.stmt(s, ind + 2)
        f.put(ind + 1, "}")
        f.put(ind, "}")
        if whole:
            f.put(ind - 1, "}")

    def lane_if(self, s: ast.If, mask: str, ind: int) -> None:
        f = self.f
        mt, me = self.new("M"), self.new("M")
        at, ae = self.new("A", array=False), self.new("A", array=False)
        f.put(ind, f"{at} = 0; {ae} = 0;")
        self.chunk_loop(
            ind,
            [
                f"i64 t_ = !!({f.truth(s.test)});",
                f"{mt}[j_] = ok_ & t_; {me}[j_] = ok_ & !t_;",
                f"{at} |= {mt}[j_]; {ae} |= {me}[j_];",
            ],
            mask,
        )
        for arm, m, a in ((s.body, mt, at), (s.orelse, me, ae)):
            if not arm:
                continue
            f.put(ind, f"if ({a}) {{")
            top, self.top = self.top, False
            self.divergent += 1
            if self.loops:
                self.loops[-1].stack.append(m)
            self.block(arm, m, ind + 1)
            self.flush(ind + 1)
            if self.loops:
                self.loops[-1].stack.pop()
            self.divergent -= 1
            self.top = top
            f.put(ind, "}")

    def loop(self, body: list[ast.stmt], mask: str, ind: int, head: str) -> None:
        f = self.f
        lv, cv = self.new("M"), self.new("M")
        a = self.new("A", array=False)
        self.chunk_loop(ind, [f"{lv}[j_] = {mask}[j_];"])
        f.put(ind, head)
        f.put(ind + 1, f"{a} = 0;")
        self.chunk_loop(ind + 1, [f"{cv}[j_] = {lv}[j_];", f"{a} |= {cv}[j_];"])
        f.put(ind + 1, f"if (!{a}) break;")
        top, self.top = self.top, False
        self.loops.append(_Loop(lv, cv))
        self.block(body, cv, ind + 1)
        self.flush(ind + 1)
        self.loops.pop()
        self.top = top
        f.put(ind, "}")

    def jump(self, brk: bool, mask: str, ind: int) -> None:
        """`break`/`continue` of the lanes of `mask`: cleared from the innermost loop's masks."""
        if not self.loops:
            raise Scalar("a break or continue outside a loop")
        lp = self.loops[-1]
        a = self.new("A", array=False)
        lines = ["i64 x_ = !" + f"{mask}[j_];"]
        if brk:
            lines.append(f"{lp.lv}[j_] &= x_;")
        lines += [f"{m}[j_] &= x_;" for m in dict.fromkeys([lp.cv, *lp.stack]) if m != mask]
        lines += [f"{a} |= {lp.cv}[j_];", f"{mask}[j_] = 0;"]
        self.f.put(ind, f"{a} = 0;")
        self.chunk_loop(ind, lines)
        self.f.put(ind, f"if (!{a}) continue;")
