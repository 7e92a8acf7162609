"""JavaScript's numbers in TypeScript kernels, checked against node itself: random expression trees
over Int32Array, Uint32Array, Float32Array and Float64Array elements (edge values included), each
stored into a Float64Array (which keeps the exact JavaScript number, -0 and all), compiled and run
on the emulator at -O0 and -O2, and evaluated by node on the same inputs. Every expression the
frontend accepts must give node's bits (any NaN matching any NaN); the ones it refuses must be
refused with a CompileError, and most must be accepted.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess

import numpy as np
import pytest

from wavegpu.compiler.frontends.typescript import TYPESCRIPT
from wavegpu.errors import CompileError
from wavegpu.runtime.sources import load_kernels

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed: JavaScript's answers come from it")

N = 32  # threads, one input element each

A = [-(2**31), 2**31 - 1, -1, 0, 1, 7, -7, 46341, -46341, 65536, 3, -100000]
U = [0, 2**32 - 1, 2**31, 2**31 - 1, 1, 7, 65535, 123456789, 3, 4000000000]
F = [0.0, -0.0, 1.5, -2.5, 0.1, 3e9, -3e9, 1e30, -1e-30, 16777217.0, 2.0**31, -(2.0**31), 0.75]
D = [0.0, -0.0, 0.1, -1e300, 2.0**53 + 2, 4294967296.5, -4294967297.25, 1e-320, 2.0**32, -7.5, 123.456]


def _inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(5)

    def fill(edge: list[float], make: object, dtype: type) -> np.ndarray:
        out = np.array(edge + list(make(N - len(edge))), dtype=dtype)  # type: ignore[operator]
        return out[:N]

    return {
        "a": fill(A, lambda k: rng.integers(-(2**31), 2**31, k), np.int32),
        "u": fill(U, lambda k: rng.integers(0, 2**32, k, dtype=np.uint64), np.uint32),
        "f": fill(F, lambda k: rng.uniform(-1e3, 1e3, k), np.float32),
        "d": fill(D, lambda k: rng.uniform(-1e6, 1e6, k), np.float64),
    }


LEAVES = ["a[i]", "u[i]", "f[i]", "d[i]", "3", "-5", "0", "0.5", "1e10", "2147483647", "4294967295"]


def _expr(r: random.Random, depth: int) -> str:
    if depth == 0 or r.random() < 0.2:
        return r.choice(LEAVES)
    x = _expr(r, depth - 1)
    y = _expr(r, depth - 1)
    k = r.randrange(25)
    forms = [
        f"({x} + {y})",
        f"({x} - {y})",
        f"({x} * {y})",
        f"({x} / {y})",
        f"({x} | 0)",
        f"({x} >>> 0)",
        f"({x} & {y})",
        f"({x} ^ {y})",
        f"({x} << {y})",
        f"({x} >> {y})",
        f"({x} >>> {y})",
        f"Math.fround({x})",
        f"Math.imul({x}, {y})",
        f"Math.max({x}, {y})",
        f"Math.min({x}, {y})",
        f"Math.abs({x})",
        f"Math.floor({x})",
        f"Math.ceil({x})",
        f"Math.trunc({x})",
        f"Math.sqrt({x})",
        f"(-{x})",
        f"(({x} | 0) % ({y} | 0))",
        f"(({x} >>> 0) % 7)",
        f"({x} < {y} ? {x} : {y})",
        f"(~{x})",
    ]
    return forms[k]


def _kernel(exprs: list[str]) -> str:
    body = "\n".join(f"    o[i * {len(exprs)} + {k}] = {e};" for k, e in enumerate(exprs))
    return (
        "/** @kernel */\n"
        "export function exprs(a: Int32Array, u: Uint32Array, f: Float32Array, d: Float64Array, o: Float64Array): void {\n"
        "  const i = wave.global_id(0);\n"
        f"  if (i < {N}) {{\n{body}\n  }}\n}}\n"
    )


def _accepted(e: str) -> bool:
    try:
        TYPESCRIPT.parse(_kernel([e]), "e.ts")
    except CompileError:
        return False
    return True


def _node(exprs: list[str], inputs: dict[str, np.ndarray]) -> np.ndarray:
    def arr(ctor: str, v: np.ndarray) -> str:
        vals = [repr(float(x)) if ctor.startswith("Float") else str(int(x)) for x in v]
        vals = ["-0" if s == "-0.0" else s for s in vals]
        return f"new {ctor}([{', '.join(vals)}])"

    body = "\n".join(f"  o[i * {len(exprs)} + {k}] = {e};" for k, e in enumerate(exprs))
    js = (
        f"const a = {arr('Int32Array', inputs['a'])};\n"
        f"const u = {arr('Uint32Array', inputs['u'])};\n"
        f"const f = {arr('Float32Array', inputs['f'])};\n"
        f"const d = {arr('Float64Array', inputs['d'])};\n"
        f"const o = new Float64Array({N * len(exprs)});\n"
        f"for (let i = 0; i < {N}; i++) {{\n{body}\n}}\n"
        "process.stdout.write(JSON.stringify(Buffer.from(o.buffer).toString('hex')));\n"
    )
    r = subprocess.run([NODE, "-e", js], capture_output=True, text=True, timeout=60, check=True)  # type: ignore[list-item]
    return np.frombuffer(bytes.fromhex(json.loads(r.stdout)), np.float64)


def _same(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return (x.view(np.uint64) == y.view(np.uint64)) | (np.isnan(x) & np.isnan(y))


@pytest.mark.parametrize("seed", [1, 2])
def test_random_expressions_match_node(seed: int) -> None:
    r = random.Random(seed)
    candidates = [_expr(r, r.randrange(1, 4)) for _ in range(70)]
    exprs = [e for e in candidates if _accepted(e)]
    assert len(exprs) >= len(candidates) * 0.6, f"only {len(exprs)} of {len(candidates)} accepted"
    inputs = _inputs()
    want = _node(exprs, inputs)
    for opt in (0, 2):
        k = load_kernels(_kernel(exprs), lang="typescript", opt=opt)["exprs"]
        o = np.zeros(N * len(exprs), np.float64)
        k(**{n: v.copy() for n, v in inputs.items()}, o=o, grid=1, workgroup=N)
        ok = _same(o, want)
        if not ok.all():
            bad = int(np.flatnonzero(~ok)[0])
            thread, which = divmod(bad, len(exprs))
            vals = {n: inputs[n][thread] for n in inputs}
            raise AssertionError(f"-O{opt}: {exprs[which]} with {vals}: got {o[bad]!r}, node says {want[bad]!r}")


# JavaScript's own spellings of the builtin rows and the idioms of issue 24, bit for bit with node
# (Math.hypot and non-integer powers are implementation-approximated: tests/compiler/frontends/
# test_typescript_idioms.py checks their bounds)
JS_SPELLINGS = [
    "Math.round(d[i])",
    "Math.round(f[i])",
    "Math.round(a[i] / 4)",
    "Math.trunc(d[i])",
    "Math.trunc(f[i])",
    "Math.sign(d[i])",
    "Math.sign(f[i])",
    "Math.sign(a[i])",
    "Math.clz32(a[i])",
    "Math.clz32(u[i])",
    "Math.clz32(d[i])",
    "Number.isNaN(d[i] * 0) ? 1 : 0",
    "isNaN(f[i] - f[i]) ? 1 : 0",
    "(a[i] * 7 + u[i] * 3) % 13",
    "(u[i] * 65536 + a[i]) % (a[i] | 1)",
    "(a[i] * 1048576) % u[i]",
    "a[i] ** 2",
    "f[i] ** 2",
    "u[i] ** 0",
    "(d[i] ?? 5) + (f[i + 40] ?? 7) + (a[i - 1] ?? -3)",
    "Math.min(d[i], f[i], a[i])",
    "Math.max(u[i], a[i])",
    "Math.abs(a[i]) + Math.sign(u[i])",
]


def test_javascript_spellings_match_node() -> None:
    inputs = _inputs()
    want = _node(JS_SPELLINGS, inputs)
    for opt in (0, 2):
        k = load_kernels(_kernel(JS_SPELLINGS), lang="typescript", opt=opt)["exprs"]
        o = np.zeros(N * len(JS_SPELLINGS), np.float64)
        k(**{n: v.copy() for n, v in inputs.items()}, o=o, grid=1, workgroup=N)
        ok = _same(o, want)
        bad = [(int(b) // len(JS_SPELLINGS), JS_SPELLINGS[int(b) % len(JS_SPELLINGS)]) for b in np.flatnonzero(~ok)]
        assert not bad, f"-O{opt}: {bad[:5]}"
