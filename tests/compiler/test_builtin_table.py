"""compiler/builtins.py drives the kernel language (issue 23): every row has a typing rule, a MIR
lowering, a plain-Python implementation and a spelling in every frontend ported to the binder;
every argument kind has a binder case; `wg.*` and runtime/pyexec.py export exactly the rows."""

from __future__ import annotations

import builtins as py_builtins
import importlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import wavegpu
from wavegpu.compiler import bind, hir
from wavegpu.compiler import builtins as B
from wavegpu.compiler.builtins import ROWS, Arg, Rule, Via
from wavegpu.compiler.mir import lower
from wavegpu.compiler.types import F32, I32, U32
from wavegpu.runtime import pyexec

# The frontends that bind every call through compiler/bind.py. Porting rust, cpp or typescript
# adds it here (and removes it from tests/test_no_builtin_strings.py's NOT_YET_PORTED).
PORTED = ("python", "rust", "cpp", "typescript")


@pytest.mark.parametrize("name", sorted(ROWS))
def test_every_row_has_a_rule_a_lowering_and_a_python_implementation(name: str) -> None:
    row = ROWS[name]
    assert row.rule in bind.RULES, f"{name}: no binder rule for {row.rule}"
    low = row.lowering
    if low.via is Via.COMPOSITE:
        assert low.op in lower.COMPOSITES, f"{name}: mir/lower.py has no composite {low.op!r}"
    elif low.via in (Via.OP, Via.SREG, Via.EFFECT, Via.FENCE, Via.ATOMIC, Via.WAVE):
        assert low.op, f"{name}: a {low.via.value} lowering names its op"
    where, attr = row.implementation
    module = {"pyexec": pyexec, "python": py_builtins, "types": importlib.import_module("wavegpu.compiler.types")}
    assert callable(getattr(module[where], attr)), f"{name}: no plain-Python {where}:{attr}"


def test_every_composite_lowering_belongs_to_a_row() -> None:
    named = {r.lowering.op for r in ROWS.values() if r.lowering.via is Via.COMPOSITE}
    assert set(lower.COMPOSITES) == named


def test_every_argument_kind_has_a_binder_case_and_every_rule_a_typing() -> None:
    assert set(bind.ARG_CASES) == set(Arg)
    assert set(bind.RULES) == set(Rule)


@pytest.mark.parametrize("lang", PORTED)
def test_every_row_has_a_spelling_in_every_ported_frontend(lang: str) -> None:
    from wavegpu.compiler.frontends import spellings

    missing = sorted(set(ROWS) - set(spellings()[lang]))
    assert not missing, f"{lang} spells no {missing}"


def test_pyexec_and_the_package_export_exactly_the_rows() -> None:
    rows = {r.implementation[1] for r in ROWS.values() if r.implementation[0] == "pyexec"}
    assert set(pyexec.__all__) == rows | {"python_thread", "static_range"}  # static_range: a loop form
    assert set(wavegpu._PYEXEC.split()) == set(pyexec.__all__), "wavegpu/__init__.py's _PYEXEC is stale"
    for name in rows:
        assert getattr(wavegpu, name) is getattr(pyexec, name)


def test_the_axis_message_exists_once() -> None:
    """Once in the binder, besides the frontends not yet ported (each still has its copy)."""
    from test_no_builtin_strings import NOT_YET_PORTED, SRC

    text = "axis must be the constant 0, 1 or 2"
    files = [p for p in SRC.rglob("*.py") if p.relative_to(SRC).as_posix() not in NOT_YET_PORTED]
    assert [p.name for p in files if text in p.read_text()] == ["bind.py"]
    assert sum(p.read_text().count(text) for p in files) == 1


# ---- the binder's refusals say which argument they are about -----------------------------------
SP = None


def _v(t: object = I32) -> hir.Expr:
    return hir.Var(t, SP, "v")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("name", "args", "kw", "message", "arg"),
    [
        ("thread_id", [5], {}, "axis must be the constant 0, 1 or 2", 0),
        ("thread_id", [], {"axis": None}, "axis must be the constant 0, 1 or 2", "axis"),
        ("thread_id", [True], {}, "axis must be the constant", 0),
        ("fence", ["gpu"], {}, "fence(scope) takes 'wave', 'workgroup' or 'device'", 0),
        ("atomic_add", [None, _v(), _v()], {}, "the first argument of an atomic is an array", 0),
        ("atomic_min", [bind.ArrayRef("a", F32), _v(), _v(F32)], {}, "atomic_min on f32 arrays", None),
        ("atomic_add", [bind.ArrayRef("a", U32), _v(F32), _v(U32)], {}, "an array index is an integer", 1),
        ("atomic_add", [bind.ArrayRef("a", U32), _v(), _v(I32)], {}, "takes u32 values, not i32", 2),
        ("wave_shuffle", [_v(), _v(F32)], {}, "a lane or distance is an integer", 1),
        ("wave_reduce_and", [_v(F32)], {}, "wave_reduce_and needs an integer", 0),
        ("wave_any", [_v()], {}, "takes a condition", 0),
        ("sin", [_v(B.CASTS["f64"])], {}, "sin takes f32, not f64", 0),
        ("local_array", [B.CASTS["bool"], 4], {}, "local_array element type must be", 0),
        ("local_array", [F32, (2, 3, 4)], {}, "one or two dimensions", 1),
        ("local_array", [F32, None], {}, "count must be a constant positive integer", 1),
        ("powi", [_v(), (2, 3)], {}, "count must be a constant positive integer", 1),  # a shape: local_array only
        ("min", [_v(), _v(U32)], {}, "one type", 1),
        ("popcount", [_v(F32)], {}, "popcount takes an i32 or u32, not f32", 0),
        ("pow", [_v(), _v()], {}, "pow takes f32, not i32", 0),
        ("lane_id", [0], {}, "lane_id() takes no arguments, 1 given", None),
        ("sqrt", [], {"x": _v(F32)}, "sqrt() has no keyword 'x'", None),
    ],
)
def test_a_refusal_names_its_argument(name: str, args: list, kw: dict, message: str, arg: object) -> None:
    r = bind.bind(ROWS[name], SP, args, kw)
    assert isinstance(r, bind.Refusal), r
    assert message in r.message and r.arg == arg, r


def test_binding_types_the_call() -> None:
    r = bind.bind(ROWS["global_id"], SP, [], {"axis": 1})
    assert r == hir.Call(I32, SP, "global_id", (), None, (("axis", 1),))
    r = bind.bind(ROWS["fence"], SP, [])
    assert r == hir.Call(B.VOID, SP, "fence", (), None, (("scope", "device"),))
    r = bind.bind(ROWS["max"], SP, [_v(F32), _v(F32), _v(F32)])
    assert isinstance(r, hir.Call) and isinstance(r.args[0], hir.Call) and r.type is F32
    r = bind.bind(ROWS["wave_ballot"], SP, [_v(B.CASTS["bool"])])
    assert isinstance(r, hir.Call) and r.type is U32
    r = bind.bind(ROWS["atomic_cas"], SP, [bind.ArrayRef("a", F32), _v(), _v(F32), _v(F32)])
    assert isinstance(r, hir.Call) and r.array == "a" and r.type is F32 and len(r.args) == 3
    r = bind.bind(ROWS["isnan"], SP, [_v(F32)])
    assert isinstance(r, hir.Call) and r.type is B.CASTS["bool"]


# ---- the binder never raises: whatever a frontend hands it, a typed call or a refusal ---------
_POOL: list[bind.Actual] = [_v(t) for t in (I32, U32, F32, B.CASTS["f64"], B.CASTS["f16"], B.CASTS["bool"], B.VOID)]
_POOL += [0, 1, 2, 3, -1, True, 1.0, 2.5, "wave", "device", "gpu", None, (2, 3), (1, 2, 3), (0,), F32, B.CASTS["bool"]]
_POOL += [bind.ArrayRef("a", t) for t in (I32, U32, F32, B.CASTS["f16"])]


@settings(max_examples=400, deadline=None)
@given(
    st.sampled_from(sorted(ROWS)),
    st.lists(st.sampled_from(range(len(_POOL))), max_size=5),
    st.dictionaries(st.sampled_from(["axis", "scope", "x"]), st.sampled_from(range(len(_POOL))), max_size=2),
)
def test_the_binder_answers_every_call(name: str, args: list[int], kw: dict[str, int]) -> None:
    r = bind.bind(ROWS[name], SP, [_POOL[i] for i in args], {k: _POOL[i] for k, i in kw.items()})
    assert isinstance(r, bind.Refusal | hir.Expr)
    if isinstance(r, bind.Refusal):
        assert r.message and (r.arg is None or r.arg in range(len(args)) or r.arg in kw)


# ---- bind.call: one driver of a call's arguments for every frontend ----------------------------
class _ToyReader:
    """A bind.Reader over ready-made actuals (a node is the actual itself), recording what it read."""

    def __init__(self) -> None:
        self.log: list[tuple[str, object]] = []

    def _read(self, kind: str, node: object) -> bind.Actual:
        self.log.append((kind, node))
        return node  # type: ignore[return-value]

    def constant(self, node: object, kind: Arg) -> bind.Actual:
        return self._read(kind.value, node)

    def scope(self, node: object) -> bind.Actual:
        return self._read("scope", node)

    def type(self, node: object) -> bind.Actual:
        return self._read("type", node)

    def array(self, node: object) -> bind.ArrayRef | None:
        self.log.append(("array", node))
        return node if isinstance(node, bind.ArrayRef) else None

    def index(self, node: object) -> hir.Expr:
        return self._read("index", node)  # type: ignore[return-value]

    def condition(self, node: object) -> hir.Expr:
        return self._read("condition", node)  # type: ignore[return-value]

    def element(self, node: object, elem: object) -> hir.Expr:
        return self._read(f"element {elem}", node)  # type: ignore[return-value]

    def value(self, node: object) -> object:
        self.log.append(("value", node))
        return node

    def values(self, read: list[object], nodes: list[object]) -> list[hir.Expr]:
        self.log.append(("values", tuple(nodes)))
        return read  # type: ignore[return-value]


def _c(t, v=1):
    return hir.Const(t, None, v)


def test_call_reads_every_kind_in_order_and_the_values_together() -> None:
    r = _ToyReader()
    x, lane = _c(F32, 1.0), _c(I32, 3)
    e = bind.call(ROWS["wave_shuffle"], None, r, [x, lane])
    assert isinstance(e, hir.Call) and e.args == (x, lane) and e.type is F32
    assert r.log == [("value", x), ("index", lane), ("values", (x,))]


def test_call_checks_an_atomic_array_before_reading_its_values() -> None:
    r = _ToyReader()
    bad = bind.ArrayRef("a", F32)  # f32 has atomic add, exchange and cas only
    refused = bind.call(ROWS["atomic_min"], None, r, [bad, _c(I32), _c(F32, 1.0)])
    assert isinstance(refused, bind.Refusal) and refused.arg is None and not refused.arity
    assert "atomic_min on f32 arrays" in refused.message
    assert r.log == [("array", bad)], "nothing after a refused array is read"
    r = _ToyReader()
    ok = bind.ArrayRef("a", U32)
    e = bind.call(ROWS["atomic_add"], None, r, [ok, _c(I32), _c(U32)])
    assert isinstance(e, hir.Call) and e.type is U32
    assert [k for k, _ in r.log] == ["array", "index", f"element {U32}"]
    refused = bind.call(ROWS["atomic_add"], None, _ToyReader(), ["not an array", _c(I32), _c(U32)])
    assert isinstance(refused, bind.Refusal) and refused.arg == 0


def test_call_names_the_spelling_in_an_arity_refusal_and_reads_nothing() -> None:
    r = _ToyReader()
    refused = bind.call(ROWS["round_even"], None, r, [_c(F32), _c(F32)], spelled="rintf")
    assert refused == bind.Refusal("rintf() takes 1 argument, 2 given", None, True)
    assert r.log == []
    two = bind.call(ROWS["min"], None, r, [_c(F32), _c(F32), _c(F32)], spelled="fminf", variadic=False)
    assert two == bind.Refusal("fminf() takes 2 arguments, 3 given", None, True)
    assert isinstance(bind.call(ROWS["min"], None, r, [_c(F32), _c(F32), _c(F32)]), hir.Call)


def test_call_reads_keywords_and_places_a_refusal_at_them() -> None:
    r = _ToyReader()
    refused = bind.call(ROWS["thread_id"], None, r, [], [("axis", 3)])
    assert isinstance(refused, bind.Refusal) and refused.arg == "axis"
    assert bind.at(refused, [], [("axis", "the node")]) == "the node"
    assert bind.at(bind.Refusal("whole call"), ["a"]) is None
    e = bind.call(ROWS["fence"], None, r, [], [("scope", "wave")])
    assert isinstance(e, hir.Call) and dict(e.attrs) == {"scope": "wave"}


def test_the_toolchain_dialect_is_an_axisless_thread_id() -> None:
    assert bind.toolchain_id(ROWS["thread_id"], 0)
    assert not bind.toolchain_id(ROWS["thread_id"], 1)
    assert not bind.toolchain_id(ROWS["lane_id"], 0)


# ---- each message once: a frontend names a refusal of bind.py / builtins.py, never restates it --
def _literals(path) -> list[str]:
    """The string constants of a module and the constant parts of its f-strings, docstrings left out."""
    import ast

    tree = ast.parse(path.read_text())
    docs = {
        id(body[0].value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef) and (body := n.body)
        if isinstance(body[0], ast.Expr)
    }
    out: list[str] = []
    for n in ast.walk(tree):
        if isinstance(n, ast.JoinedStr):
            out += [v.value for v in n.values if isinstance(v, ast.Constant) and isinstance(v.value, str)]
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs:
            out.append(n.value)
    return out


def test_no_frontend_restates_a_message_of_the_binder() -> None:
    """A text of four or more words in bind.py or builtins.py (a refusal or a part of one) appears in
    no frontend as a clause of its own messages: a frontend imports it (builtins.NO_VALUE, ...)."""
    import re
    from pathlib import Path

    root = Path(B.__file__).parent
    shared = {s.strip() for f in ("bind.py", "builtins.py") for s in _literals(root / f) if len(s.split()) >= 4}
    assert "axis must be the constant 0, 1 or 2" in shared and B.NO_VALUE in shared
    found = []
    for fe in PORTED:
        for lit in _literals(root / "frontends" / f"{fe}.py"):
            for m in shared:
                if re.search(re.escape(m) + r"(?=$|[,:;.)]| \()", lit):
                    found.append(f"{fe}.py restates {m!r} in {lit!r}")
    assert not found, "\n".join(found)
