"""Golden MIR text before and after each pass (`pytest --update-golden` rewrites them), the MIR
parser and verifier, and the out-of-SSA copies."""

from __future__ import annotations

from pathlib import Path

import kernels as K
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import wavegpu as wg
from wavegpu.compiler.frontends import FRONTENDS
from wavegpu.compiler.frontends.python import frontend, function_source
from wavegpu.compiler.mir import dump, parse, verify
from wavegpu.compiler.mir.ir import Function, Operand, Value
from wavegpu.compiler.mir.lower import lower
from wavegpu.compiler.passes import PASSES, pipeline, run_passes
from wavegpu.runtime.kernel import run_kernel

GOLDEN = Path(__file__).parent / "golden"
CASES = {"saxpy": K.saxpy, "reduce_sum": K.reduce_sum, "loops": K.loops, "floor_ops": K.floor_ops}


def lowered(kf) -> str:  # type: ignore[no-untyped-def]
    src, node = function_source(kf.python)
    return dump(lower(frontend(src, node)))


def check_golden(path: Path, text: str, update: bool) -> None:
    if update or not path.exists():
        path.write_text(text)
    assert path.read_text() == text, f"{path.name} differs; rerun with --update-golden and review the diff"


@pytest.mark.parametrize("name", CASES)
def test_pipeline_golden(name: str, request: pytest.FixtureRequest) -> None:
    update = request.config.getoption("--update-golden")
    text = lowered(CASES[name]).replace(str(Path(__file__).parent), ".")
    check_golden(GOLDEN / f"{name}.mir", text, update)
    fn = parse(text)
    verify(fn)
    assert dump(fn) == text  # the parser reads what the printer writes
    for step, pass_name in enumerate(pipeline(3)):
        run_passes(fn, [pass_name])
        out = dump(fn)
        check_golden(GOLDEN / f"{name}.{step:02d}-{pass_name}.mir", out, update)
        assert dump(parse(out)) == out


@pytest.mark.parametrize("name", CASES)
def test_lir_golden(name: str, request: pytest.FixtureRequest) -> None:
    """LIR after structuring and after register allocation (-O2)."""
    from wavegpu.compiler import Options, compile_python

    opts = Options(opt=2, dump_after={"lir", "regalloc"})
    compile_python(CASES[name].python, opts)
    update = request.config.getoption("--update-golden")
    for stage, text in opts.dumps:
        check_golden(GOLDEN / f"{name}.{stage}.lir", text, update)


@pytest.mark.parametrize("pass_name", sorted(PASSES))
def test_every_pass_preserves_meaning(pass_name: str) -> None:
    """Each pass alone (after mem2reg where it needs SSA) keeps the corpus kernel's results."""
    from wavegpu.compiler import Options, compile_python

    n = 200
    out = np.zeros(256, np.int32)
    passes = ["mem2reg", pass_name] if pass_name not in ("mem2reg", "unroll") else [pass_name]
    prog = compile_python(K.loops.python, Options(passes=passes))
    res = wg.emulate(
        prog,
        grid=1,
        workgroup=256,
        memory=np.concatenate([out, np.zeros(0, np.int32)]),
        args=[0, n],
    )
    from test_corpus import loops_ref

    assert list(res.memory.view(np.int32)[:n]) == [loops_ref(i) for i in range(n)]


SWAP = """
func @swap(%0: u32 out[i32], %1: i32 n) {
bb0:
  br bb1
bb1:
  %2 = phi [bb0, 1:i32], [bb2, %3] : i32
  %3 = phi [bb0, 2:i32], [bb2, %2] : i32
  %4 = phi [bb0, 0:i32], [bb2, %5] : i32
  %6 = cmp.lt %4, %1 : bool
  condbr %6, bb2, bb3
bb2:
  %5 = add %4, 1:i32 : i32
  br bb1
bb3:
  store.global %0, %2
  %7 = add %0, 4:u32 : u32
  store.global %7, %3
  ret
}
"""


@pytest.mark.parametrize("n, want", [(0, (1, 2)), (1, (2, 1)), (2, (1, 2)), (5, (2, 1))])
def test_out_of_ssa_handles_the_swap_problem(n: int, want: tuple[int, int]) -> None:
    from wavegpu.compiler.emit import emit
    from wavegpu.compiler.lir.lower import lower as lower_lir
    from wavegpu.compiler.regalloc import allocate
    from wavegpu.wbin import Param

    fn = parse(SWAP)
    verify(fn)
    lf = lower_lir(fn)
    alloc = allocate(lf)
    k = emit(lf, alloc, [Param("out", "buffer", wg.DataType.S32), Param("n", "scalar", wg.DataType.S32)])
    res = wg.emulate(k, grid=1, workgroup=1, memory=8, args=[0, n])
    assert tuple(res.memory.view(np.int32)) == want


@pytest.mark.parametrize(
    "text, message",
    [
        ("func @f() {\nbb0:\n  %1 = add %0, 1:i32 : i32\n  ret\n}\n", "used before it is defined"),
        ("func @f() {\nbb0:\n  br bb9\n}\n", "undefined block"),
        (
            "func @f() {\nbb0:\n  %1 = add 1:i32, 2:i32 : i32\n  %1 = add 1:i32, 2:i32 : i32\n  ret\n}\n",
            "defined twice",
        ),
        ("func @f() {\nbb0:\n  wibble\n", "cannot read|no terminator"),
    ],
)
def test_mir_parser_and_verifier_errors(text: str, message: str) -> None:
    with pytest.raises(wg.CompileError, match=message):
        verify(parse(text))


def test_verifier_catches_dominance_and_phi_errors() -> None:
    bad = """func @f(%0: i32 a) {
bb0:
  %1 = cmp.lt %0, 0:i32 : bool
  condbr %1, bb1, bb2
bb1:
  %2 = add %0, 1:i32 : i32
  br bb2
bb2:
  %3 = add %2, 1:i32 : i32
  ret
}
"""
    with pytest.raises(wg.CompileError, match="does not dominate"):
        verify(parse(bad))
    badphi = bad.replace("  %3 = add %2, 1:i32 : i32", "  %3 = phi [bb1, %2] : i32")
    with pytest.raises(wg.CompileError, match="predecessors"):
        verify(parse(badphi))


# ---- the pass registry ------------------------------------------------------------------------
UNROLLABLE = """
import wavegpu as wg

@wg.kernel
def sums(out: wg.i32[:]):
    i = wg.global_id()
    acc = 0
    for k in range(4):
        acc += k * i
    out[i] = acc
"""


def test_every_pipeline_names_registered_passes() -> None:
    """Totality: every (pipeline, pass) pair names a registered pass, and every registered pass
    runs in some pipeline or says why it is opt-in only."""
    from wavegpu.compiler import STAGES
    from wavegpu.compiler.passes import AFTER_LEGALIZE, PIPELINES

    lists = {**{f"-O{k}": v for k, v in PIPELINES.items()}, "after legalisation": AFTER_LEGALIZE}
    missing = [f"({where}, {name})" for where, names in lists.items() for name in names if name not in PASSES]
    assert not missing, "pipelines name unregistered passes: " + ", ".join(missing)
    used = {name for names in lists.values() for name in names}
    idle = [p.name for p in PASSES.values() if p.name not in used and not p.opt_in]
    assert not idle, f"passes in no pipeline and not marked opt_in: {idle}"
    for p in PASSES.values():
        assert p.name in STAGES and p.doc and callable(p.run)
        for o in p.options:  # defaults have the declared type (None: filled by the compiler)
            assert o.default is None or isinstance(o.default, o.type), (p.name, o.name)


def unrolled_blocks(passes: list[str], max_registers: int | None = None) -> int:
    from wavegpu.compiler.frontends import FRONTENDS

    (hfn,) = FRONTENDS["python"].parse(UNROLLABLE, "sums.py")
    fn = lower(hfn)
    run_passes(fn, passes, settings={"max_registers": max_registers})
    return dump(fn).count(".u")


def test_pass_options_are_spelled_in_the_pass_list() -> None:
    assert unrolled_blocks(["unroll"]) > 0
    assert unrolled_blocks(["unroll:max_trip=3"]) == 0  # four iterations: too many
    assert unrolled_blocks(["unroll:max_trip=4:max_insts=1000"]) > 0
    # the kernel's register limit reaches the option of that name, unless the spelling sets it
    assert unrolled_blocks(["unroll"], max_registers=2) == 0
    assert unrolled_blocks(["unroll:max_pressure=1"], max_registers=255) == 0


@pytest.mark.parametrize(
    "spec, message",
    [
        ("unroll:max_trip", "cannot read option 'max_trip' \\(write max_trip=value"),
        ("unroll:bogus=1", "has no option 'bogus' .its options: max_registers, max_trip"),
        ("unroll:max_trip=many", "option max_trip wants int, not 'many'"),
        ("dce:x=1", "its options: none"),
        ("nope", "unknown pass.*nope; passes: unroll, mem2reg"),
    ],
)
def test_bad_pass_spellings_are_refused(spec: str, message: str) -> None:
    from wavegpu.compiler import Options, compile_python

    with pytest.raises(wg.CompileError, match=message):
        compile_python(UNROLLABLE, Options(passes=[spec]))


# ---- MIR's op table ---------------------------------------------------------------------------
SRC = Path(wg.__file__).parent / "compiler"
EMITTERS = [SRC / "mir" / "lower.py", SRC / "mir" / "legalize.py", *sorted((SRC / "passes").glob("*.py"))]


def emitted_ops(path: Path) -> list[tuple[int, str, bool]]:
    """(line, op or its constant prefix, is_prefix) of every op a module spells where it makes an
    instruction: emit(op, ...), b.op(op, ...), Inst(op, ...), and the values of op tables
    (dicts mapping names to op strings, such as lower.py's BINARY)."""
    import ast

    tree = ast.parse(path.read_text())
    out: list[tuple[int, str, bool]] = []

    def first(node: ast.expr) -> None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.append((node.lineno, node.value, False))
        elif isinstance(node, ast.JoinedStr):
            head = node.values[0]
            prefix = head.value if isinstance(head, ast.Constant) and isinstance(head.value, str) else ""
            out.append((node.lineno, prefix, True))
        elif isinstance(node, ast.IfExp):
            first(node.body)
            first(node.orelse)
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Dict):
            for v in node.value.values:
                first(v)

    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["op"]:
            first(node.value)  # op = {...}[name]; then emit(op, ...)
        if isinstance(node, ast.Call) and node.args:
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if name in ("emit", "op", "Inst", "binop"):
                first(node.args[0])
    return out


def test_every_op_the_compiler_emits_is_in_the_table() -> None:
    from wavegpu.compiler.mir.ops import OPS

    bad = []
    seen = 0
    for path in EMITTERS:
        for line, op, prefix in emitted_ops(path):
            seen += 1
            ok = any(o.startswith(op) for o in OPS) if prefix else op in OPS
            if not ok:
                bad.append(f"{path.relative_to(SRC)}:{line}: {op}{'...' if prefix else ''}")
    assert seen > 100, "the scan found too few ops: has the emitting code changed shape?"
    assert not bad, "ops missing from mir/ops.py OPS:\n" + "\n".join(bad)


def test_the_lowering_tables_name_table_ops() -> None:
    from wavegpu.compiler.builtins import ROWS, Via
    from wavegpu.compiler.mir import lower as mir_lower
    from wavegpu.compiler.mir.ops import OPS

    for table in (mir_lower.BINARY, mir_lower.UNARY):
        assert set(table.values()) <= set(OPS)
    lows = [r.lowering for r in ROWS.values()]  # the builtins' lowerings (compiler/builtins.py)
    assert {f"atomic.{lo.op}.{s}" for lo in lows if lo.via is Via.ATOMIC for s in ("global", "local")} <= set(OPS)
    assert {lo.op for lo in lows if lo.via in (Via.OP, Via.WAVE, Via.EFFECT)} <= set(OPS)
    assert {f"fence.{s}" for lo in lows if lo.via is Via.FENCE for s in ("wave", "workgroup", "device")} <= set(OPS)
    assert all(any(o.startswith(f"sreg.{lo.op}") for o in OPS) for lo in lows if lo.via is Via.SREG)


def test_the_table_matches_what_selection_reads() -> None:
    """Every arithmetic op of the table has a row (select.py) or is legalised away first; every
    suffixed family is one selection handles."""
    from wavegpu.compiler.mir.ops import OPS, Sig
    from wavegpu.compiler.rowmap import _ARITH

    arith = {o.name for o in OPS.values() if o.sig in (Sig.SAME, Sig.SHIFT)}
    assert arith - set(_ARITH) == {"floordiv", "floormod"}  # legalize.py rewrites them
    families = {o.name.split(".")[0] for o in OPS.values() if "." in o.name}
    assert families == {"cmp", "load", "store", "atomic", "fence", "sreg", "wave"}


VERIFY_BAD = {
    "unknown": ("%2 = frobnicate %0 : i32", "unknown operation 'frobnicate'"),
    "arity": ("%2 = add %0 : i32", "add takes 2 operands, not 1"),
    "arity3": ("%2 = add %0, %0, %0 : i32", "add takes 2 operands, not 3"),
    "mixed": ("%2 = add %0, 1.0:f32 : i32", "add operand types i32, f32 do not fit"),
    "result": ("%2 = add %0, %0 : f32", "add operand types i32, i32 do not fit"),
    "float-only": ("%2 = sqrt %0 : i32", "sqrt does not take i32"),
    "compare": ("%2 = cmp.lt %0, %0 : i32", "cmp.lt yields bool, not i32"),
    "select": ("%2 = select %0, %0, %0 : i32", "select operand types"),
    "address": ("%2 = load.global %0 : i32", "addresses with u32, not i32"),
    "no-result": ("%2 = store.global %1, %0 : i32", "store.global has no result"),
    "needs-result": ("atomic.add.global %1, %0", "atomic.add.global needs a result"),
    "lane": ("%2 = wave.shuffle.xor %0, %0 : i32", "takes its lane as u32, not i32"),
    "setvar": ("setvar v, 1.0:f32", "setvar of a i32 variable with f32"),
    "vote": ("%2 = wave.any %0 : bool", "wave.any operand types i32 do not fit"),
}


@pytest.mark.parametrize("case", VERIFY_BAD)
def test_verifier_checks_ops_against_the_table(case: str) -> None:
    line, message = VERIFY_BAD[case]
    text = f"func @f(%0: i32 a, %1: u32 b) {{\n  var v: i32\nbb0:\n  {line}\n  ret\n}}\n"
    fn = parse(text)
    with pytest.raises(wg.CompileError, match=message):
        verify(fn)


def test_effects_come_from_the_table() -> None:
    from wavegpu.compiler.mir.ir import Inst

    def inst(op: str) -> Inst:
        return Inst(op, None, [])

    assert inst("store.global.u8").has_effects and not inst("store.global.u8").pure
    assert inst("barrier").convergent and inst("wave.reduce.add").convergent
    assert not inst("load.local").has_effects and not inst("load.local").pure and not inst("getvar").pure
    assert inst("sreg.tid.x").pure and not inst("sreg.clock").pure and inst("add").pure
    assert inst("no.such.op").has_effects and not inst("no.such.op").pure  # refused by verify anyway


def one_op_function(op: str, t: str) -> Function | None:
    """A MIR function computing `op` once on values of type t (read from variables, the result
    written to one), or None for the variable ops themselves."""
    from wavegpu.compiler.mir.ir import Block, Function, Inst, Ret
    from wavegpu.compiler.mir.ops import OPS, Sig
    from wavegpu.compiler.types import ELEMENTS

    spec = OPS[op]
    fn = Function("f", [], [Block("bb0")])
    b = fn.blocks[0]

    def val(tn: str) -> Value:
        fn.vars[f"v_{tn}"] = ELEMENTS[tn]
        v = fn.new_value(ELEMENTS[tn])
        b.insts.append(Inst("getvar", v, [], f"v_{tn}"))
        return v

    n = spec.arity[-1]
    shapes: dict[Sig, tuple[list[str], str | None]] = {
        Sig.SAME: ([t] * n, t),
        Sig.SHIFT: ([t, "u32"], t),
        Sig.COMPARE: ([t, t], "bool"),
        Sig.SELECT: (["bool", t, t], t),
        Sig.CONVERT: (["f32" if t != "f32" else "i32"], t),
        Sig.LOAD: (["u32"], t),
        Sig.STORE: (["u32", t], None),
        Sig.ATOMIC: (["u32"] + [t] * (n - 1), t),
        Sig.WAVE: ([t], t),
        Sig.WAVE_LANE: ([t, "u32"], t),
        Sig.VOTE: (["bool"], t),
        Sig.SREG: ([], "u32"),
        Sig.NONE: ([], None),
    }
    if spec.sig not in shapes:
        return None
    arg_types, dst_type = shapes[spec.sig]
    args: list[Operand] = [val(a) for a in arg_types]
    dst = fn.new_value(ELEMENTS[dst_type]) if dst_type else None
    b.insts.append(Inst(op, dst, args))
    if dst is not None:
        fn.vars["out"] = dst.type
        b.insts.append(Inst("setvar", None, [dst], "out"))
    b.term = Ret()
    return fn


def test_every_op_of_the_table_is_selected() -> None:
    """Totality of the table against selection: every (op, type) the verifier accepts becomes
    LIR, except the ops legalisation rewrites first."""
    from wavegpu.compiler.lir.lower import lower as lower_lir
    from wavegpu.compiler.mir.legalize import legalize
    from wavegpu.compiler.mir.ops import OPS

    missing = []
    for op, spec in OPS.items():
        for t in sorted(spec.types or {"u32"}):
            fn = one_op_function(op, t)
            if fn is None:
                continue
            verify(fn)
            legalize(fn)
            try:
                lower_lir(fn)
            except (wg.CompileError, LookupError) as e:
                missing.append(f"{op} on {t}: {e}")
    assert not missing, "ops the verifier accepts but selection cannot implement:\n" + "\n".join(missing)


UNROLL_CASES = """
import wavegpu as wg

@wg.kernel
def skips(out: wg.i32[:]):
    i = wg.global_id()
    acc = 0
    for k in range(10, -4, -3):  # a continue: a second latch
        if k == 4:
            continue
        acc += k * i
    for k in range(3):  # a second counted loop in the same function
        acc = acc * 3 + k
    out[i] = acc

@wg.kernel
def reentered(out: wg.i32[:], n: wg.i32):
    i = wg.global_id()
    acc = 0
    k = 0
    for r in range(n):
        while k < 4:  # counter set once before the outer loop: 4 trips, then none
            acc += k + r * i
            k += 1
    out[i] = acc

@wg.kernel
def accumulators(out: wg.f32[:], x: wg.f32[:]):
    i = wg.global_id()
    c0 = 0.0
    c1 = 0.0
    c2 = 0.0
    c3 = 0.0
    c4 = 0.0
    c5 = 0.0
    c6 = 0.0
    c7 = 0.0
    for k in range(8):
        a0 = x[k * 4]
        a1 = x[k * 4 + 1]
        a2 = x[k * 4 + 2]
        a3 = x[k * 4 + 3]
        c0 = wg.fma(a0, a1, c0)
        c1 = wg.fma(a0, a2, c1)
        c2 = wg.fma(a0, a3, c2)
        c3 = wg.fma(a1, a2, c3)
        c4 = wg.fma(a1, a3, c4)
        c5 = wg.fma(a2, a3, c5)
        c6 = wg.fma(a3, a3, c6)
        c7 = wg.fma(a0, a0, c7)
    out[i] = c0 + c1 + c2 + c3 + c4 + c5 + c6 + c7
"""


def unroll_case(name: str, passes: list[str], max_registers: int | None = None) -> Function:
    from wavegpu.compiler.frontends import FRONTENDS

    fns = {f.name: f for f in FRONTENDS["python"].parse(UNROLL_CASES, "cases.py")}
    fn = lower(fns[name])
    run_passes(fn, passes, settings={"max_registers": max_registers})
    verify(fn)
    return fn


def has_back_edge(fn: Function) -> bool:
    """Whether the CFG has a cycle (a depth-first search meets a block still on its path)."""
    state: dict[int, int] = {}  # id(block): 1 on the path, 2 done
    stack = [(fn.blocks[0], iter(fn.blocks[0].succs))]
    state[id(fn.blocks[0])] = 1
    while stack:
        b, it = stack[-1]
        s = next(it, None)
        if s is None:
            state[id(b)] = 2
            stack.pop()
        elif state.get(id(s)) == 1:
            return True
        elif id(s) not in state:
            state[id(s)] = 1
            stack.append((s, iter(s.succs)))
    return False


def test_unroll_takes_continue_and_every_counted_loop_of_a_function() -> None:
    """A `continue` lowers to a second latch stepping the counter: still a counted loop. The
    pass goes on to the next loop after unrolling one (it used to stop at the first)."""
    fn = unroll_case("skips", ["unroll"])
    assert not has_back_edge(fn)
    text = dump(fn)
    assert ".u4:" in text and ".u5:" not in text  # five copies (k = 10, 7, 4, 1, -2), numbered from 0


def test_unroll_refuses_a_counter_not_initialised_on_entry() -> None:
    """The while loop's counter is set once, before the outer loop: only its first run makes
    four trips, so it is no constant-trip loop; it stays, and -O3 agrees with -O0."""
    fn = unroll_case("reentered", ["unroll"])
    assert ".u" not in dump(fn)
    from wavegpu.runtime.kernel import run_kernel

    outs = []
    for opt in (0, 3):
        prog = wg.compile(UNROLL_CASES, opt=opt)
        out = np.zeros(64, np.int32)
        run_kernel(next(k for k in prog.kernels if k.name == "reentered"), [out, 3], grid=1, workgroup=64)
        outs.append(out)
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_array_equal(outs[1], np.full(64, 0 + 1 + 2 + 3, np.int32))


def test_unroll_pressure_is_the_rolled_loop_against_the_register_budget() -> None:
    """Unrolling adds no variables: the 8 accumulators and 4 temporaries (with the counter and
    the slot of range, 14 variables) unroll under a 128-register budget or none, not under 24 (12)."""
    assert not has_back_edge(unroll_case("accumulators", ["unroll"]))
    assert not has_back_edge(unroll_case("accumulators", ["unroll"], max_registers=128))
    assert has_back_edge(unroll_case("accumulators", ["unroll"], max_registers=24))
    assert has_back_edge(unroll_case("accumulators", ["unroll:max_pressure=8"], max_registers=128))


WRAPS = """
import wavegpu as wg

@wg.kernel
def wraps(out: wg.i32[:]):
    i = wg.global_id()
    acc = 0
    for k in range(2147483645, 2147483647, 3):  # one trip, then k + 3 wraps to a negative k < stop
        acc += 1
        if acc > 5:
            break
    out[i] = acc
"""


def test_unroll_refuses_a_counter_whose_last_step_wraps() -> None:
    """range says one trip, but the 32-bit counter wraps past the bound and the loop goes on."""
    from wavegpu.compiler.frontends import FRONTENDS
    from wavegpu.compiler.passes import unroll

    (hfn,) = FRONTENDS["python"].parse(WRAPS, "wraps.py")
    fn = lower(hfn)
    assert unroll._counted(fn) == []


# -- licm across nested loops (issue 28): an inner loop's new preheader lies inside the outer loop
NESTED_LICM = """
import wavegpu as wg

@wg.kernel
def nested(a: wg.i32[:], b: wg.u32[:], out: wg.i32[:], n: wg.i32):
    i = wg.global_id()
    v = 1
    for k in range(i):
        c = 0
        while c < a[i % n]:
            c += 1
        v *= wg.i32(b[i % n])
    out[i] = v
"""


def test_licm_keeps_an_inner_preheader_inside_the_outer_loop() -> None:
    """The while loop's header needs a new preheader (its outside predecessor also branches to the
    exit); what licm hoists there (the address of a[i % n]) is defined inside the for loop, so the
    outer loop must not treat a use of it (the address of b[i % n]) as invariant and hoist that use
    above its definition. Both now leave the loops, and the kernel's results match -O0."""
    n = 3
    a = np.array([2, 0, 1], np.int32)
    b = np.array([3, 5, 7], np.uint32)
    outs = []
    for opt in (0, 2, 3):
        prog = wg.compile(NESTED_LICM, opt=opt)
        out = np.zeros(16, np.int32)
        run_kernel(prog.kernels[0], [a, b, out, n], grid=1, workgroup=16)
        outs.append(out)
    want = [int(np.uint32(pow(int(b[i % n]), i, 2**32)).view(np.int32)) for i in range(16)]
    for out in outs:
        assert list(out) == want
    fn = lower(FRONTENDS["python"].parse(NESTED_LICM, "nested.py")[0])
    run_passes(fn, pipeline(2)[: pipeline(2).index("licm") + 1])  # verified after each pass
    body = [i for blk in fn.blocks if blk is not fn.entry for i in blk.insts]
    assert not any(i.op == "floormod" for i in body), dump(fn)  # i % n left both loops


INVARIANT = ["i % n", "(i + n) & 15", "(i * 3) % n", "n & 7", "(i ^ n) & 15"]


@st.composite
def nested_loops(draw: st.DrawFn) -> str:
    """Two or three nested loops (for over a bound, while over a loaded bound) whose headers and
    bodies compute the same invariant indices and loads as the code after the inner loops."""
    base, other = draw(st.sampled_from(INVARIANT)), draw(st.sampled_from(INVARIANT))
    idx = [draw(st.sampled_from([base, base, other])) for _ in range(3)]  # mostly one: shared addresses
    bound = draw(st.sampled_from(["i", "n", "i % 4", "3", "a[{0}] & 3"])).format(idx[0])

    def inner(ind: str, depth: int) -> list[str]:
        c = f"c{depth}"
        kind = draw(st.sampled_from(["while", "while", "for", "while-and"]))
        if kind == "for":
            out = [f"{ind}for {c} in range(a[{idx[1]}] & 3):"]
        else:
            out = [f"{ind}{c} = 0"]
            cond = f"{c} < a[{idx[1]}]" + (f" and {c} < {idx[2]} + 2" if kind == "while-and" else "")
            out += [f"{ind}while {cond}:", f"{ind}    {c} += 1"]
        out.append(f"{ind}    v += {draw(st.sampled_from([f'a[{idx[2]}]', idx[0], f'wg.i32(b[{idx[1]}])', c]))}")
        if draw(st.booleans()):
            out += [
                f"{ind}    if {c} > {draw(st.integers(0, 3))}:",
                f"{ind}        {draw(st.sampled_from(['break', 'continue']))}",
            ]
        if depth < 2 and draw(st.booleans()):
            out += inner(ind + "    ", depth + 1)
        return out

    after = draw(st.sampled_from([f"v *= wg.i32(b[{idx[0]}])", f"v = v * 3 + a[{idx[2]}]", f"v ^= {idx[1]} + k"]))
    counted = draw(st.booleans())  # for k in range(bound), or while k < bound with k += 1 last
    outer = [f"    for k in range({bound}):"] if counted else ["    k = 0", f"    while k < {bound}:"]
    return "\n".join(
        [
            "import wavegpu as wg",
            "",
            "@wg.kernel",
            "def shape(a: wg.i32[:], b: wg.u32[:], out: wg.i32[:], n: wg.i32):",
            "    i = wg.global_id()",
            "    v = 1",
            *outer,
            *inner("        ", 1),
            f"        {after}",
            *([] if counted else ["        k += 1"]),
            "    out[i] = v",
            "",
        ]
    )


@settings(max_examples=25, deadline=None)
@given(nested_loops(), st.integers(1, 16), st.lists(st.integers(-1, 4), min_size=16, max_size=16))
def test_nested_loop_shapes_agree_at_o0_and_o3(text: str, n: int, avals: list[int]) -> None:
    """Loop-invariant code in nested loops (the shapes of issue 28's licm failure): -O3 compiles
    (MIR verifies after every pass) and computes what -O0 computes, bit for bit."""
    a = np.array(avals, np.int32)
    b = (np.arange(16, dtype=np.uint32) * 2654435761) & 0xFF
    outs = []
    for opt in (0, 3):
        prog = wg.compile(text, opt=opt)
        out = np.zeros(32, np.int32)
        run_kernel(prog.kernels[0], [a, b.astype(np.uint32), out, n], grid=1, workgroup=32)
        outs.append(out)
    assert list(outs[0]) == list(outs[1]), text
