"""tsc accepts our TypeScript kernels: every example (examples/languages/typescript), the Rust
toolchain's compat vector_add.ts and the test kernels here type-check with `tsc --noEmit --strict`
against wave.d.ts (src/wavegpu/compiler/frontends/support/typescript), and every builtin's
TypeScript spelling (typescript.SPELLINGS) compiles in our frontend.

tsc is npm's `typescript`, pinned in tools/node-tools.sh and installed into .tools/node by
`make test`; without it the tsc test skips with the reason.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from languages.cases import ROOT

import wavegpu as wg
from wavegpu.compiler.builtins import ROWS
from wavegpu.compiler.frontends.typescript import BARE, SPELLINGS, WAVE_CALLS

REPO = Path(__file__).resolve().parents[3]
DTS = Path(wg.__file__).parent / "compiler" / "frontends" / "support" / "typescript" / "wave.d.ts"
COMPAT = REPO / "tests" / "compiler" / "languages" / "compat" / "vector_add.ts"


def _tsc() -> str | None:
    local = REPO / ".tools" / "node" / "node_modules" / ".bin" / "tsc"
    if local.exists() and shutil.which("node"):
        return str(local)
    return shutil.which("tsc")


# every builtin under its TypeScript spelling
EVERY_BUILTIN = """// Every builtin of the kernel language under its TypeScript spelling.
const N = 64;

/** @kernel @workgroup 64 */
export function every_builtin(fa: Float32Array, ia: Int32Array, ua: Uint32Array, da: Float64Array, ha: Float16Array,
                              ba: Uint8Array, sa: Int8Array, wa: Uint16Array, qa: Int16Array, x: f32, k: i32, m: u32): void {
  const z = da[1];
  const t = wave.thread_id(0) + wave.thread_id(1) + wave.thread_id(2);
  const g = wave.global_id(0);
  const sizes = wave.workgroup_id(0) + wave.workgroup_size(0) + wave.grid_size(0) + wave.global_size(0);
  const lanes = wave.lane_id() + wave.wave_id() + wave.wave_width();
  const buf = wave.local_array(Float32Array, N);
  const cnt = wave.local_array(Uint32Array, N);
  buf[t] = fa[g];
  cnt[t] = 0;
  wave.barrier();
  wave.fence("workgroup");
  wave.fence();
  const o1 = wave.atomic_add(ua, 0, 1);
  wave.atomic_sub(ua, 1, 1);
  wave.atomic_min(ia, 2, k);
  wave.atomic_max(ia, 3, k);
  wave.atomic_and(ua, 4, m);
  wave.atomic_or(ua, 5, m);
  wave.atomic_xor(ua, 6, m);
  wave.atomic_exchange(fa, 7, x);
  wave.atomic_cas(ia, 8, 0, k);
  Atomics.add(cnt, t, 1);
  Atomics.sub(ua, 9, 1);
  Atomics.and(ua, 10, 3);
  Atomics.or(ua, 11, 3);
  Atomics.xor(ua, 12, 3);
  Atomics.exchange(ia, 13, 5);
  Atomics.compareExchange(ia, 14, 0, 1);
  const r1 = wave.wave_reduce_add(k) + wave.wave_reduce_min(k) + wave.wave_reduce_max(k);
  const r2 = wave.wave_reduce_and(m) ^ wave.wave_reduce_or(m) ^ wave.wave_prefix_add(m);
  const s1 = wave.wave_shuffle(x, 0) + wave.wave_shuffle_up(x, 1) + wave.wave_shuffle_down(x, 1);
  const s2 = wave.wave_shuffle_xor(k, 1) + wave.wave_broadcast(k, 0);
  const v1 = wave.wave_ballot(k > 0);
  const v2 = wave.wave_any(x > 0) && wave.wave_all(m > 0);
  const f1: f32 = wave.sqrt(x) + wave.rsqrt(x) + wave.sin(x) + wave.cos(x);
  const f2: f32 = wave.exp(x) + wave.exp2(x) + wave.log(x) + wave.log2(x) + wave.fma(x, x, x);
  const f3: f32 = Math.fround(Math.exp(x)) + Math.fround(Math.log(x)) + Math.fround(Math.sin(x)) + Math.fround(Math.cos(x));
  const d1 = Math.sqrt(z) + Math.floor(z) + Math.ceil(z) + Math.abs(z) + Math.min(z, 1) + Math.max(z, 2);
  const c1 = (z | 0) + (z >>> 0) + Math.fround(z) + Math.f16round(x) + wave.f64(x) + wave.i32(z) + wave.u32(z);
  const c2: f32 = wave.f32(z);
  const c3: f16 = wave.f16(x);
  const b1 = wave.bool(k) ? 1 : 0;
  const w1 = wave.floor(x) + wave.ceil(x) + wave.abs(k) + wave.min(k, 3) + wave.max(k, 4);
  const h1 = Math.imul(k, k);
  const n1 = Math.trunc(z) + Math.round(z) + Math.sign(z) + Math.clz32(k) + (Number.isNaN(z) ? 1 : 0) + (isNaN(x) ? 1 : 0) + z ** 3;
  const n2: f32 = Math.fround(Math.pow(x, x)) + Math.fround(Math.log2(x)) + Math.fround(x ** 0.5) + x ** 3 + Math.hypot(x, z);
  const n3 = wave.clamp(k, 0, 9) + wave.sign(x) + wave.pow(x, 2) + wave.trunc(z) + wave.round_even(z) + wave.round_away(z);
  const n4 = wave.round_half_up(z) + wave.popcount(m) + wave.clz(m) + wave.ctz(m) + (wave.isnan(z) ? 1 : 0);
  const p = new Float32Array(8);
  p[k & 7] = wave.signum(x) + wave.min_first(x, z) + wave.max_first(k, 2) + wave.clamp_keep_nan(x, 0, 1);
  ba[g] = sa[g] + wa[g] + qa[g];
  ha[g] = c3;
  da[g] = d1 + c1 + c2 + b1 + w1 + h1 + n1 + n2 + n3 + n4 + o1 + p[1] + r1 + r2 + s1 + s2 + v1 + (v2 ? 1 : 0) + f1 + f2 + f3 + sizes + lanes + t + buf[0] + cnt[0];
}
"""

# more test kernels: the language's statements and numbers as the docs show them
STATEMENTS = """/** @kernel */
export function statements(x: Float32Array, y: Int32Array, n: u32): void {
  const i = wave.global_id(0);
  if (i >= n) {
    return;
  }
  let k = 0;
  let acc: i32 = 0;
  while (k < 10) {
    acc += k;
    k = (k + 1) | 0;
  }
  do {
    acc = (acc - 1) | 0;
  } while (acc > 100);
  for (let j = 9; j >= 0; j--) {
    if (j === 3) {
      continue;
    } else if (j === 7) {
      break;
    }
    acc ^= j << 2;
  }
  switch (acc & 3) {
    case 0:
      acc = (acc + 1) | 0;
      break;
    default:
      acc ^= 5;
    case 2:
      acc = (acc - 2) | 0;
  }
  let s: f32 = x[i];
  s = s * 0.5 + 1;
  x[i] = i % 2 === 0 ? s : -s;
  y[i] = acc;
}
"""

KERNELS = {"every_builtin.ts": EVERY_BUILTIN, "statements.ts": STATEMENTS}


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_our_frontend_compiles_the_test_kernels(name: str) -> None:
    prog = wg.compile(KERNELS[name], lang="typescript")
    assert [k.name for k in prog.kernels] == [name[:-3]]


def test_every_builtin_has_a_spelling_that_compiles() -> None:
    assert set(ROWS) <= set(SPELLINGS), set(ROWS) - set(SPELLINGS)
    for name, spelling in SPELLINGS.items():
        callee = spelling.split("(")[0].split(" or ")[0] + "(" if "(" in spelling else spelling.replace("x", "z")
        assert callee in EVERY_BUILTIN, f"{name}: {spelling!r} is not used by the every-builtin kernel"


def test_wave_d_ts_declares_exactly_the_rows_the_frontend_takes() -> None:
    """wave.d.ts is checked against the table: `wave.NAME` for every row the frontend calls by
    that name (every row but powi, which is `x ** k`), and a bare global for each of BARE."""
    text = DTS.read_text()
    ns = text[text.index("declare namespace wave {") : text.index("\n}\n")]
    declared = set(re.findall(r"^  function (\w+)[<(]", ns, re.M))
    assert declared == set(WAVE_CALLS), (set(WAVE_CALLS) - declared, declared - set(WAVE_CALLS))
    assert set(WAVE_CALLS) == set(ROWS) - {"powi", "private_array"}
    bare = set(re.findall(r"^declare const (\w+): typeof wave\.(\w+);", text, re.M))
    assert {a for a, b in bare if a == b} == set(BARE) and all(a == b for a, b in bare)


def test_tsc_accepts_every_example_and_test_kernel(tmp_path: Path) -> None:
    tsc = _tsc()
    if tsc is None:
        pytest.skip("tsc is not installed (tools/node-tools.sh installs npm's typescript into .tools/node)")
    files = [str(DTS)]
    files += [str(p) for p in sorted((ROOT / "typescript").glob("*.ts"))]
    files.append(str(COMPAT))
    for name, text in KERNELS.items():
        (tmp_path / name).write_text(text)
        files.append(str(tmp_path / name))
    assert len(files) >= 16
    args = [tsc, "--noEmit", "--strict", "--target", "es2022", "--lib", "esnext", "--pretty", "false", *files]
    r = subprocess.run(args, capture_output=True, text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"})
    assert r.returncode == 0, r.stdout + r.stderr


def test_tsc_rejects_what_breaks_typescript(tmp_path: Path) -> None:
    """The check can fail: a kernel calling an undeclared builtin is refused by tsc too."""
    tsc = _tsc()
    if tsc is None:
        pytest.skip("tsc is not installed (tools/node-tools.sh installs npm's typescript into .tools/node)")
    bad = tmp_path / "bad.ts"
    bad.write_text("/** @kernel */\nexport function k(a: Float32Array): void {\n  a[0] = wave.no_such(1);\n}\n")
    r = subprocess.run(
        [tsc, "--noEmit", "--strict", "--lib", "esnext", str(DTS), str(bad)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode != 0 and "no_such" in r.stdout
    with pytest.raises(wg.WaveError, match="unknown builtin 'no_such'"):
        wg.compile(bad.read_text(), lang="typescript")
