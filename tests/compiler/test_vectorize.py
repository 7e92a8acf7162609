"""Vector access (passes/vectorize.py): aligned runs of 2 or 4 consecutive 32-bit accesses become
one .v2/.v4 row at -O2 and up, never at -O0, and the two give bit-identical memory."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import wavegpu as wg

ROOT = Path(__file__).resolve().parents[2]
A, C = 256, 256 + 8192  # buffer addresses: multiples of 16 (the ABI of docs/compiler.md)


def kernel_source(mul: int, off: int, count: int, space: str, store_between: bool = False) -> str:
    loads = []
    for k in range(count):
        if space == "global":
            loads.append(f"    x{k} = a[i + {k}]")
        else:
            loads.append(f"    x{k} = s[i + {k}]")
        if store_between and k == 0:
            loads.append("    c[i + 64] = x0")
    stores = [f"    c[i + {k}] = x{k} * 2.0 + {k}.0" for k in range(count)]
    fill = (
        # every word of s is written before the barrier: local memory is undefined at a workgroup's
        # start (OpenCL's holds the previous workgroup's words; the emulator's starts at zero)
        [
            "    s = wg.local_array(wg.f32, 1024)",
            "    for j in range(64):",
            "        s[t + 16 * j] = a[t + 16 * j]",
            "    wg.barrier()",
        ]
        if space == "local"
        else []
    )
    return "\n".join(
        [
            "import wavegpu as wg",
            "@wg.kernel(workgroup=16)",
            "def k(a: wg.f32[:], c: wg.f32[:]):",
            "    t = wg.u32(wg.thread_id())",
            *fill,
            f"    i = t * {mul} + {off}",
            *loads,
            *stores,
        ]
    )


def run(prog: wg.Program) -> np.ndarray:
    mem = np.zeros(C + 8192, np.uint8)
    mem[A : A + 8192] = np.arange(2048, dtype=np.float32).view(np.uint8)
    return wg.emulate(prog, grid=1, workgroup=16, memory=mem, args=[A, C]).memory


def vectors(prog: wg.Program) -> tuple[int, int]:
    text = wg.disassemble(prog)
    return text.count(".v4.b32"), text.count(".v2.b32")


@settings(max_examples=25, deadline=None)
@given(
    mul=st.sampled_from([1, 2, 3, 4, 8]),
    off=st.integers(0, 7),
    count=st.sampled_from([2, 3, 4]),
    space=st.sampled_from(["global", "local"]),
)
def test_merged_equals_unmerged(mul: int, off: int, count: int, space: str) -> None:
    src = kernel_source(mul, off, count, space)
    o0, o2 = wg.compile(src, lang="python", opt=0), wg.compile(src, lang="python", opt=2)
    assert vectors(o0) == (0, 0)
    v4, v2 = vectors(o2)
    if mul % 2:  # the index's parity is unknown: nothing is provably aligned
        assert (v4, v2) == (0, 0)
    if mul % 4 == 0 and off % 4 == 0 and count == 4:
        assert v4 == 2  # the loads and the stores
    if mul % 2 == 0 and off % 2 == 0 and count >= 2:
        assert v4 + v2 > 0
    assert np.array_equal(run(o0), run(o2))


def test_no_merge_across_a_store() -> None:
    """A store between the loads may alias them (two parameters may be one array): not merged."""
    src = kernel_source(4, 0, 4, "global", store_between=True)
    v4, _ = vectors(wg.compile(src, lang="python", opt=2))
    assert v4 == 1  # the stores only
    assert np.array_equal(run(wg.compile(src, lang="python", opt=0)), run(wg.compile(src, lang="python", opt=2)))


def _load(path: Path, name: str) -> object:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_example_vector_add4_has_v4_rows() -> None:
    path = ROOT / "examples" / "kernels" / "vector_add4.py"
    text = wg.disassemble(wg.compile(str(path)))
    assert text.count("ld.global.v4.b32") == 2 and text.count("st.global.v4.b32") == 1
    assert ".v4." not in wg.disassemble(wg.compile(str(path), opt=0))
    mod = _load(path, "vector_add4_example")
    n = 4096
    rng = np.random.default_rng(1)
    a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    c = np.zeros(n, np.float32)
    mod.vector_add4(a, b, c, n, grid=n // 4 // 256, workgroup=256)  # type: ignore[attr-defined]
    assert np.array_equal(c, a + b)


def test_sgemm_blocked_reads_local_tiles_with_v4() -> None:
    text = wg.disassemble(wg.compile(str(ROOT / "examples" / "sgemm_blocked" / "sgemm_blocked.py")))
    assert text.count("ld.local.v4.b32") >= 2


def _write_reversing_kernels(f: Path) -> None:
    """k0 (-O0) and k2 (-O2): each thread reverses 4 consecutive elements of a into c."""
    f.write_text(
        "import wavegpu as wg\n"
        + "\n".join(
            f"@wg.kernel(workgroup=8, opt={o})\n"
            f"def k{o}(a: wg.f32[:], c: wg.f32[:]):\n"
            "    i = wg.u32(wg.global_id()) * 4\n"
            "    x0 = a[i]\n    x1 = a[i + 1]\n    x2 = a[i + 2]\n    x3 = a[i + 3]\n"
            "    c[i] = x3\n    c[i + 1] = x2\n    c[i + 2] = x1\n    c[i + 3] = x0\n"
            for o in (0, 2)
        )
    )


def test_overlapping_views_keep_their_meaning(tmp_path: Path) -> None:
    """One array passed as two offset views (the loads may read what a store wrote): -O0 and -O2
    agree; views at an offset that is not a multiple of 16 bytes would make the .v4 access
    misaligned, which the emulator traps (never a wrong answer)."""
    f = tmp_path / "alias_kernel.py"
    _write_reversing_kernels(f)
    mod = _load(f, "alias_kernel")
    out = []
    for o in (0, 2):
        x = np.arange(64, dtype=np.float32)
        getattr(mod, f"k{o}")(x[4:36], x[:32], grid=1, workgroup=8)
        out.append(x)
    assert np.array_equal(out[0], out[1])


def test_boundscheck_names_the_element(tmp_path: Path) -> None:
    """A merged load past the end of its array reports the first element out of range, as the
    single loads do."""
    f = tmp_path / "bounds_kernel.py"
    f.write_text(
        "import wavegpu as wg\n"
        + "\n".join(
            f"@wg.kernel(workgroup=4, boundscheck=True, opt={o})\n"
            f"def k{o}(a: wg.f32[:], c: wg.f32[:]):\n"
            "    i = wg.u32(wg.global_id()) * 4\n"
            "    x0 = a[i]\n    x1 = a[i + 1]\n    x2 = a[i + 2]\n    x3 = a[i + 3]\n"
            "    c[i] = x0 + x1 + x2 + x3\n"
            for o in (0, 2)
        )
    )
    mod = _load(f, "bounds_kernel")
    firsts = []
    for o in (0, 2):
        with pytest.raises(wg.WaveError) as e:
            getattr(mod, f"k{o}")(np.ones(14, np.float32), np.zeros(16, np.float32), grid=1, workgroup=4)
        firsts.append(str(e.value).splitlines()[0])
    assert firsts[0] == firsts[1]
    assert "a[14]" in firsts[1]


def _devices() -> list[tuple[str, str | None]]:
    """(device, AMDGCN processor) of the targets this machine runs."""
    from wavegpu.runtime import opencl, sycl

    out: list[tuple[str, str | None]] = [("amdgcn-sim", "gfx942"), ("amdgcn-sim", "gfx90a")]
    if opencl.available()[0]:
        out.append(("opencl", None))
    if sycl.available()[0]:
        out.append(("sycl", None))
    return out


@pytest.mark.parametrize(
    ("mul", "off", "count", "space"),
    [(4, 0, 4, "global"), (4, 4, 4, "local"), (2, 0, 2, "global"), (8, 2, 4, "local")],
)
def test_merged_kernels_on_other_targets(mul: int, off: int, count: int, space: str) -> None:
    """The merged rows on the compiled engine, OpenCL, SYCL (where installed) and the AMDGCN
    interpreter (always): the emulator's memory bit for bit."""
    prog = wg.compile(kernel_source(mul, off, count, space), lang="python", opt=2)
    assert sum(vectors(prog)) > 0
    mem = np.zeros(C + 8192, np.uint8)
    mem[A : A + 8192] = np.arange(2048, dtype=np.float32).view(np.uint8)
    ref = wg.emulate(prog, grid=2, workgroup=16, memory=mem, args=[A, C]).memory
    compiled = wg.emulate(prog, grid=2, workgroup=16, memory=mem, args=[A, C], engine="compiled")
    assert compiled.engine == "compiled" and np.array_equal(compiled.memory, ref)
    for device, arch in _devices():
        got = wg.launch(prog, device=device, arch=arch, grid=2, workgroup=16, memory=mem, args=[A, C]).memory
        assert np.array_equal(got, ref), (device, arch)


LOOP_SUM = """
import wavegpu as wg
@wg.kernel(workgroup=32)
def k(x: wg.f32[:], out: wg.f32[:], n: wg.u32):
    t = wg.u32(wg.thread_id())
    s = 0.0
    for j in range(0, n, 4):
        s += x[t * n + j] * x[t * n + j + 1] + x[t * n + j + 2] - x[t * n + j + 3]
    out[t] = s
"""


def test_loop_counter_alignment_through_phis() -> None:
    """`j` steps by 4 from 0 (a phi), but `t * n` is unknown: no merge; with n a multiple of 4
    spelled into the index (`t * 4 * m`) the loads merge although each value is used at once."""
    prog = wg.compile(LOOP_SUM, lang="python", opt=2)
    assert vectors(prog) == (0, 0)
    src = LOOP_SUM.replace("t * n + j", "t * 4 * n + j")
    o0, o2 = wg.compile(src, lang="python", opt=0), wg.compile(src, lang="python", opt=2)
    assert vectors(o2) == (1, 0)
    n = 16
    mem = np.zeros(A + 4 * 32 * 4 * n + 1024, np.uint8)
    vals = np.random.default_rng(3).random(32 * 4 * n, dtype=np.float32)
    mem[A : A + vals.nbytes] = vals.view(np.uint8)
    out = A + vals.nbytes + 256
    r0 = wg.emulate(o0, grid=1, workgroup=32, memory=mem, args=[A, out, n]).memory
    r2 = wg.emulate(o2, grid=1, workgroup=32, memory=mem, args=[A, out, n]).memory
    assert np.array_equal(r0, r2)


MIR_FOUR_LOADS = """func @k(%0: u32 x[f32], %1: u32 y[f32]) {
bb0:
  %2 = sreg.tid.x : u32
  %3 = shl %2, 4:u32 : u32
  %4 = add %0, %3 : u32
  %5 = load.global[x] %4 : f32
  %6 = add %4, 4:u32 : u32
  %7 = load.global[x] %6 : f32
  %8 = add %5, %7 : f32
  %9 = add %4, 8:u32 : u32
  %10 = load.global[x] %9 : f32
  %11 = add %4, 12:u32 : u32
  %12 = load.global[x] %11 : f32
  %13 = add %10, %12 : f32
  %14 = add %8, %13 : f32
  %15 = add %1, %3 : u32
  store.global[y] %15, %14
  ret
}
"""


def test_pass_text_to_text() -> None:
    """The pass on MIR text: the four loads stand together after a `vector 4` line, the add that
    used two of them moves after them; the printed form parses back to the same text."""
    from wavegpu.compiler.mir import dump
    from wavegpu.compiler.mir.parse import parse
    from wavegpu.compiler.passes import vectorize

    fn = parse(MIR_FOUR_LOADS)
    assert vectorize.run(fn)
    text = dump(fn)
    body = [ln.strip() for ln in text.splitlines()]
    at = body.index("vector 4")
    assert [ln.split(" = ")[1].split()[0] for ln in body[at + 1 : at + 5]] == ["load.global[x]"] * 4
    assert body[at + 5] == "%8 = add %5, %7 : f32"
    assert dump(parse(text)) == text
    assert not vectorize.run(parse(text))  # nothing left to merge


def test_misaligned_overlapping_views_are_refused(tmp_path: Path) -> None:
    """Two views of one array 4 bytes apart: the merged kernel cannot take them (its 16-byte
    access would be misaligned), and says so before running; at -O0 the call runs."""
    f = tmp_path / "views_kernel.py"
    _write_reversing_kernels(f)
    mod = _load(f, "views_kernel")
    x = np.arange(64, dtype=np.float32)
    with pytest.raises(
        wg.WaveError, match=r"parameter 'a' overlaps another argument at byte offset 4, not a multiple of 16"
    ):
        mod.k2(x[1:33], x[:32], grid=1, workgroup=8)  # type: ignore[attr-defined]
    assert np.array_equal(x, np.arange(64, dtype=np.float32))
    mod.k0(x[1:33], x[:32], grid=1, workgroup=8)  # type: ignore[attr-defined]
