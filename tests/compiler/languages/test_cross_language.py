"""Random straight-line kernels rendered into Python, Rust, C++ and TypeScript give identical memory
(DESIGN section 5: "the same meaning in all four frontends").

Hypothesis draws a few typed temporaries and three stores built from operations whose meaning is
the same in all four languages: `+ - *` of two values of one type (integers wrap: `wrapping_*` in
Rust, `| 0`, `>>> 0` and `Math.imul` in TypeScript), comparisons of one type choosing between two
values, `min`/`max`, `& | ^ ~` and constant shifts of integers, `abs`, and explicit casts between
i32, u32 and f32 (a float is converted to an integer only where its value is in range, where the
languages agree: Rust and the device saturate, JavaScript wraps, C++ leaves it undefined). Every
float value stays finite (the generator bounds magnitudes), and `min`/`max` of floats take array
elements, which are non-zero: the languages' rules for NaN and for -0 against +0 differ by design
(docs/compiler.md).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from wavegpu.compiler.frontends import FRONTENDS
from wavegpu.runtime.sources import load_kernels

LANGS = ("python", "rust", "cpp", "typescript")
SUFFIX = {"python": ".py", "rust": ".rs", "cpp": ".cpp", "typescript": ".ts"}
N = 64
F_LEAF = 8.0  # |fa|, |fb| <= 8
F_LIMIT = 2.0**100  # float values stay finite
F_LITERALS = (0.5, 1.5, 2.0, -3.25, 0.75, -1.0)
I_LITERALS = (0, 1, -1, 7, -3, 255, 2147483647, -2147483648)
U_LITERALS = (0, 1, 7, 255, 65535, 2147483648, 4294967295)

ARRAYS = {"f32": ("fa", "fb"), "i32": ("ia", "ib"), "u32": ("ua", "ub")}
OUTS = {"f32": "fo", "i32": "io", "u32": "uo"}


class E:
    """One expression, spelled in each language, with its type and (floats) a bound on its magnitude."""

    def __init__(self, t: str, spell: dict[str, str], bound: float = 0.0, leaf: bool = False, lit: bool = False):
        self.t, self.spell, self.bound, self.leaf, self.lit = t, spell, bound, leaf, lit


def _all(text: str) -> dict[str, str]:
    return {lang: text for lang in LANGS}


def _load(t: str, name: str) -> E:
    return E(
        t,
        {"python": f"{name}[i]", "rust": f"{name}[i]", "cpp": f"{name}[i]", "typescript": f"{name}[i]"},
        bound=F_LEAF,
        leaf=True,
    )


def _literal(t: str, v: float | int) -> E:
    if t == "f32":
        s = repr(float(v))
        return E(t, {"python": s, "rust": s, "cpp": f"{s}f", "typescript": s}, bound=abs(float(v)), lit=True)
    if t == "u32":
        return E(t, {"python": str(v), "rust": str(v), "cpp": f"{v}u", "typescript": str(v)}, lit=True)
    if v == -(2**31):  # no literal spells it in C++ (2147483648 is a long there)
        return E(
            t,
            {
                "python": "(-2147483647 - 1)",
                "rust": "i32::MIN",
                "cpp": "(-2147483647 - 1)",
                "typescript": "(-2147483647 - 1)",
            },
            lit=True,
        )
    return E(t, {lang: (f"({v})" if v < 0 else str(v)) for lang in LANGS}, lit=True)


def _arith(op: str, a: E, b: E) -> E:
    t = a.t
    sp: dict[str, str] = {}
    name = {"+": "add", "-": "sub", "*": "mul"}[op]
    sp["python"] = f"({a.spell['python']} {op} {b.spell['python']})"
    sp["cpp"] = f"({a.spell['cpp']} {op} {b.spell['cpp']})"
    if t == "f32":
        sp["rust"] = f"({a.spell['rust']} {op} {b.spell['rust']})"
        sp["typescript"] = f"Math.fround({a.spell['typescript']} {op} {b.spell['typescript']})"
        bound = a.bound * b.bound if op == "*" else a.bound + b.bound
        return E(t, sp, bound=bound)
    sp["rust"] = f"{a.spell['rust']}.wrapping_{name}({b.spell['rust']})"
    narrow = "| 0" if t == "i32" else ">>> 0"
    ta, tb = a.spell["typescript"], b.spell["typescript"]
    sp["typescript"] = f"(Math.imul({ta}, {tb}) {narrow})" if op == "*" else f"(({ta} {op} {tb}) {narrow})"
    return E(t, sp)


def _bits(op: str, a: E, b: E) -> E:
    sp = {lang: f"({a.spell[lang]} {op} {b.spell[lang]})" for lang in LANGS}
    if a.t == "u32":
        sp["typescript"] = f"(({a.spell['typescript']} {op} {b.spell['typescript']}) >>> 0)"
    return E(a.t, sp)


def _shift(op: str, a: E, k: int) -> E:
    sp = {lang: f"({a.spell[lang]} {op} {k})" for lang in LANGS}
    if a.t == "u32":
        sp["typescript"] = (
            f"(({a.spell['typescript']} << {k}) >>> 0)" if op == "<<" else f"({a.spell['typescript']} >>> {k})"
        )
    return E(a.t, sp)


def _not(a: E) -> E:
    sp = {lang: f"(~{a.spell[lang]})" for lang in LANGS}
    sp["rust"] = f"(!{a.spell['rust']})"
    if a.t == "u32":
        sp["typescript"] = f"(~{a.spell['typescript']} >>> 0)"
    return E(a.t, sp)


def _neg(a: E) -> E:
    if a.t == "f32":
        return E("f32", {lang: f"(-{a.spell[lang]})" for lang in LANGS}, bound=a.bound)
    return E(
        "i32",
        {
            "python": f"(-{a.spell['python']})",
            "rust": f"{a.spell['rust']}.wrapping_neg()",
            "cpp": f"(-{a.spell['cpp']})",
            "typescript": f"((-{a.spell['typescript']}) | 0)",
        },
    )


def _minmax(op: str, a: E, b: E) -> E:
    sp = {
        "python": f"{op}({a.spell['python']}, {b.spell['python']})",
        "rust": f"{a.spell['rust']}.{op}({b.spell['rust']})",
        "cpp": f"wave::{op}({a.spell['cpp']}, {b.spell['cpp']})",
        "typescript": f"Math.{op}({a.spell['typescript']}, {b.spell['typescript']})",
    }
    if a.t == "f32":
        sp["typescript"] = f"Math.fround({sp['typescript']})"
    return E(a.t, sp, bound=max(a.bound, b.bound))


def _abs(a: E) -> E:
    return E(
        a.t,
        {
            "python": f"abs({a.spell['python']})",
            "rust": f"{a.spell['rust']}.abs()",
            "cpp": f"wave::abs({a.spell['cpp']})",
            "typescript": f"Math.fround(Math.abs({a.spell['typescript']}))",
        },
        bound=a.bound,
    )


def _cast(t: str, a: E) -> E:
    """An explicit conversion of `a` to `t` (a float to an integer only where the caller bounds it)."""
    py = {"i32": "wg.i32", "u32": "wg.u32", "f32": "wg.f32"}[t]
    cpp = {"i32": "int32_t", "u32": "uint32_t", "f32": "float"}[t]
    ts = a.spell["typescript"]
    tsx = {"i32": f"({ts} | 0)", "u32": f"({ts} >>> 0)", "f32": f"Math.fround({ts})"}[t]
    sp = {
        "python": f"{py}({a.spell['python']})",
        "rust": f"({a.spell['rust']} as {t})",
        "cpp": f"static_cast<{cpp}>({a.spell['cpp']})",
        "typescript": tsx,
    }
    return E(t, sp, bound=2.0**32 if t == "f32" else 0.0)


def _select(cmp: str, a: E, b: E, x: E, y: E) -> E:
    tb = b.spell["typescript"]
    if b.lit and tb.startswith("(-"):  # tree-sitter-typescript misreads `a < (-1) ? x : y`; tsc does not
        tb = tb[1:-1]
    sp = {
        "python": f"({x.spell['python']} if {a.spell['python']} {cmp} {b.spell['python']} else {y.spell['python']})",
        "rust": f"(if {a.spell['rust']} {cmp} {b.spell['rust']} {{ {x.spell['rust']} }} else {{ {y.spell['rust']} }})",
        "cpp": f"({a.spell['cpp']} {cmp} {b.spell['cpp']} ? {x.spell['cpp']} : {y.spell['cpp']})",
        "typescript": (
            f"({a.spell['typescript']} {'===' if cmp == '==' else '!==' if cmp == '!=' else cmp} "
            f"{tb} ? {x.spell['typescript']} : {y.spell['typescript']})"
        ),
    }
    return E(x.t, sp, bound=max(x.bound, y.bound))


class Gen:
    def __init__(self, data: st.DataObject):
        self.data = data
        self.temps: dict[str, list[tuple[str, float]]] = {"f32": [], "i32": [], "u32": []}

    def draw(self, s):  # type: ignore[no-untyped-def]
        return self.data.draw(s)

    def leaf(self, t: str, literal_ok: bool) -> E:
        choices = ["load"] + (["temp"] if self.temps[t] else []) + (["lit"] if literal_ok else [])
        kind = self.draw(st.sampled_from(choices))
        if kind == "load":
            return _load(t, self.draw(st.sampled_from(ARRAYS[t])))
        if kind == "temp":
            name, bound = self.draw(st.sampled_from(self.temps[t]))
            return E(t, _all(name), bound=bound, leaf=True)
        lits = F_LITERALS if t == "f32" else I_LITERALS if t == "i32" else U_LITERALS
        return _literal(t, self.draw(st.sampled_from(lits)))

    def expr(self, t: str, depth: int, literal_ok: bool = False, small: bool = False) -> E:
        """A value of type t; `small`: a float whose magnitude stays below 2**24 (no casts inside)."""
        if depth <= 0:
            e = self.leaf(t, literal_ok)
            if small and e.bound > 64:
                return _load(t, ARRAYS[t][0])
            return e
        ops = ["leaf", "arith", "select", "minmax"]
        if t == "f32":
            ops += ["abs", "neg"] + ([] if small else ["cast"])
        else:
            ops += ["bits", "shift", "not", "cast"] + (["neg"] if t == "i32" else [])
        op = self.draw(st.sampled_from(ops))
        d = depth - 1
        if op == "leaf":
            return self.expr(t, 0, literal_ok, small)
        if op == "arith":
            a = self.expr(t, d, small=small)
            b = self.expr(t, d, literal_ok=True, small=small)
            e = _arith(self.draw(st.sampled_from("+-*")), a, b)
            return e if e.bound < (2.0**12 if small else F_LIMIT) else a
        if op == "select":
            ct = self.draw(st.sampled_from(("f32", "i32", "u32")))
            a = self.expr(ct, d, small=True)
            b = self.expr(ct, d, literal_ok=True, small=True)
            x = self.expr(t, d, small=small)
            y = self.expr(t, d, literal_ok=True, small=small)
            return _select(self.draw(st.sampled_from(("<", "<=", ">", ">=", "==", "!="))), a, b, x, y)
        if op == "minmax":
            if t == "f32":  # array elements: non-zero and finite (the NaN and -0 rules differ by language)
                a, b = _load(t, "fa"), _load(t, self.draw(st.sampled_from(("fa", "fb"))))
            else:
                a, b = self.expr(t, d), self.expr(t, d, literal_ok=True)
            return _minmax(self.draw(st.sampled_from(("min", "max"))), a, b)
        if op == "abs":
            return _abs(self.expr(t, d, small=small))
        if op == "neg":
            return _neg(self.expr(t, d, small=small))
        if op == "bits":
            return _bits(self.draw(st.sampled_from("&|^")), self.expr(t, d), self.expr(t, d, literal_ok=True))
        if op == "shift":
            return _shift(self.draw(st.sampled_from(("<<", ">>"))), self.expr(t, d), self.draw(st.integers(0, 31)))
        if op == "not":
            return _not(self.expr(t, d))
        # a cast
        if t == "f32":
            return _cast("f32", self.expr(self.draw(st.sampled_from(("i32", "u32"))), d))
        src = self.draw(st.sampled_from(("f32", "i32" if t == "u32" else "u32")))
        if src == "f32":
            f = self.expr("f32", d, small=True)
            return _cast(t, _abs(f) if t == "u32" else f)
        return _cast(t, self.expr(src, d))


TYPES = {
    "python": {"f32": "wg.f32", "i32": "wg.i32", "u32": "wg.u32"},
    "rust": {"f32": "f32", "i32": "i32", "u32": "u32"},
    "cpp": {"f32": "float", "i32": "int32_t", "u32": "uint32_t"},
    "typescript": {"f32": "f32", "i32": "i32", "u32": "u32"},
}


def _render(lang: str, temps: list[tuple[str, str, E]], stores: list[tuple[str, E]]) -> str:
    ty = TYPES[lang]
    if lang == "python":
        params = ", ".join(f"{a}: {ty[t]}[:]" for t, names in ARRAYS.items() for a in names)
        outs = ", ".join(f"{OUTS[t]}: {ty[t]}[:]" for t in OUTS)
        head = ["import wavegpu as wg", "", "", "@wg.kernel", f"def k({params}, {outs}):", "    i = wg.global_id(0)"]
        body = [f"    {n}: {ty[t]} = {e.spell[lang]}" for n, t, e in temps]
        body += [f"    {OUTS[t]}[i] = {e.spell[lang]}" for t, e in stores]
        return "\n".join(head + body) + "\n"
    if lang == "rust":
        params = ", ".join(f"{a}: &[{t}]" for t, names in ARRAYS.items() for a in names)
        outs = ", ".join(f"{OUTS[t]}: &mut [{t}]" for t in OUTS)
        head = [
            "use wave::*;",
            "",
            "#[wave::kernel]",
            f"pub fn k({params}, {outs}) {{",
            "    let i = global_id(0) as usize;",
        ]
        body = [f"    let {n}: {t} = {e.spell[lang]};" for n, t, e in temps]
        body += [f"    {OUTS[t]}[i] = {e.spell[lang]};" for t, e in stores]
        return "\n".join(head + body) + "\n}\n"
    if lang == "cpp":
        params = ", ".join(f"const {ty[t]}* {a}" for t, names in ARRAYS.items() for a in names)
        outs = ", ".join(f"{ty[t]}* {OUTS[t]}" for t in OUTS)
        head = [
            '#include "wave.hpp"',
            "",
            f"[[wave::kernel]] void k({params}, {outs}) {{",
            "    uint32_t i = wave::global_id(0);",
        ]
        body = [f"    const {ty[t]} {n} = {e.spell[lang]};" for n, t, e in temps]
        body += [f"    {OUTS[t]}[i] = {e.spell[lang]};" for t, e in stores]
        return "\n".join(head + body) + "\n}\n"
    arr = {"f32": "Float32Array", "i32": "Int32Array", "u32": "Uint32Array"}
    params = ", ".join(f"{a}: {arr[t]}" for t, names in ARRAYS.items() for a in names)
    outs = ", ".join(f"{OUTS[t]}: {arr[t]}" for t in OUTS)
    head = ["/** @kernel */", f"export function k({params}, {outs}): void {{", "  const i = wave.global_id(0);"]
    body = [f"  const {n}: {ty[t]} = {e.spell[lang]};" for n, t, e in temps]
    body += [f"  {OUTS[t]}[i] = {e.spell[lang]};" for t, e in stores]
    return "\n".join(head + body) + "\n}\n"


@st.composite
def kernels(draw: st.DrawFn) -> dict[str, str]:
    g = Gen(draw(st.data()))
    temps: list[tuple[str, str, E]] = []
    for k in range(draw(st.integers(0, 3))):
        t = draw(st.sampled_from(("f32", "i32", "u32")))
        e = g.expr(t, draw(st.integers(1, 3)))
        temps.append((f"t{k}", t, e))
        g.temps[t].append((f"t{k}", e.bound))
    stores = [(t, g.expr(t, draw(st.integers(1, 3)))) for t in OUTS]
    return {lang: _render(lang, temps, stores) for lang in LANGS}


def _inputs(seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    f = rng.uniform(-F_LEAF, F_LEAF, (2, N)).astype(np.float32)
    f[f == 0] = 0.5
    f[:, :4] = [[1.0, -2.5, 8.0, 0.125], [1.0, 2.5, -8.0, 3.0]]  # equal, opposite, extreme elements
    i = rng.integers(-(2**31), 2**31, (2, N), dtype=np.int64).astype(np.int32)
    i[:, :6] = [[0, -1, 2**31 - 1, -(2**31), 5, -7], [0, 1, -1, -(2**31), 5, 3]]
    u = rng.integers(0, 2**32, (2, N), dtype=np.uint64).astype(np.uint32)
    u[:, :5] = [[0, 1, 2**32 - 1, 2**31, 9], [0, 2**32 - 1, 2**32 - 1, 1, 9]]
    return {
        "fa": f[0],
        "fb": f[1],
        "ia": i[0],
        "ib": i[1],
        "ua": u[0],
        "ub": u[1],
        "fo": np.zeros(N, np.float32),
        "io": np.zeros(N, np.int32),
        "uo": np.zeros(N, np.uint32),
    }


@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    phases=(Phase.explicit, Phase.generate),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(src=kernels())
def test_four_languages_identical_memory(src: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> None:
    d = tmp_path_factory.mktemp("k")
    results = {}
    for lang in LANGS:
        path = d / f"k{SUFFIX[lang]}"
        path.write_text(src[lang])
        args = _inputs(7)
        load_kernels(path)["k"](**args, grid=1, workgroup=N)
        results[lang] = {name: args[name] for name in OUTS.values()}
    for lang in LANGS[1:]:
        for name in OUTS.values():
            a, b = results["python"][name], results[lang][name]
            bad = np.flatnonzero(a.view(np.uint32) != b.view(np.uint32))
            assert bad.size == 0, (
                f"{lang} differs from python in {name}[{bad[0]}]: {b[bad[0]]!r} != {a[bad[0]]!r}\n"
                + "\n".join(f"--- {x}\n{src[x]}" for x in ("python", lang))
            )


def test_every_language_is_registered() -> None:
    """The cross-language test above needs all four frontends: a missing one fails here, not silently."""
    missing = [lang for lang in LANGS if lang not in FRONTENDS]
    assert not missing, f"no frontend registered for {missing}"
