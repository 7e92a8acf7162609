"""The OpenCL C backend executed on a real OpenCL runtime (Intel's CPU runtime from PyPI) gives
the emulator's results bit for bit (approximate ops within their documented bound; atomics by
their order-independent results)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import wavegpu as wg
from cli_helpers import run_emu, run_wave
from wavegpu.isa import ROWS
from wavegpu.runtime import opencl
from wavegpu.wbin import Kernel

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "emulator"))
import test_differential as D

OK, WHY = opencl.available()
needs_opencl = pytest.mark.skipif(not OK, reason=f"no OpenCL device: {WHY}")
EX = Path(__file__).resolve().parents[2] / "examples"
APPROX = {"rcp.f32", "rsqrt.f32", "sin.f32", "cos.f32", "exp2.f32", "log2.f32"}
SPECIALS = [
    0,
    1,
    0x80000000,
    0x7FFFFFFF,
    0xFFFFFFFF,
    0x7F800000,
    0xFF800000,
    0x7FC00000,
    0x3F800000,
    0xBF800000,
    0x4F000000,
    0xCF000000,
    0x00800000,
    0x3C003C00,
    0x7C00FC00,
    0x00010001,
    0x3FC00000,
    0x40490FDB,
    31,
    32,
]


VALUE_ROWS = [r for r in ROWS if r.key in __import__("wavegpu.isa.semantics", fromlist=["x"]).SEMANTICS]


@needs_opencl
@pytest.mark.parametrize("r", VALUE_ROWS, ids=lambda r: r.key)
def test_every_value_row_matches_the_emulator(r) -> None:  # type: ignore[no-untyped-def]
    check_value_row("opencl", r)


def check_value_row(device: str, r) -> None:  # type: ignore[no-untyped-def]
    """Row r on 256 operand slots (specials and random bits) on device against the emulator;
    the approximate rows within 2 ulp (docs/backends.md)."""
    k = D.row_kernel(r)
    rng = np.random.default_rng(hash(r.key) & 0xFFFF)
    vals = np.array(SPECIALS * 13, np.uint32)[: 32 * 8]
    vals[::3] = rng.integers(0, 2**32, vals[::3].size, dtype=np.uint64).astype(np.uint32)
    mem = vals.view(np.uint8)
    a = wg.launch(k, device="emulator", workgroup=32, memory=mem).memory.view(np.uint32)
    b = wg.launch(k, device=device, workgroup=32, memory=mem).memory.view(np.uint32)
    if r.key in APPROX:
        fa = a[::8].view(np.float32).astype(np.float64)
        fb = b[::8].view(np.float32).astype(np.float64)
        both = np.isfinite(fa) & np.isfinite(fb)
        ulp = np.abs(a[::8].view(np.int32).astype(np.int64) - b[::8].view(np.int32).astype(np.int64))
        assert (ulp[both] <= 2).all() and (np.isnan(fa) == np.isnan(fb)).all(), r.key
    else:
        bad = np.flatnonzero(a != b)
        assert not bad.size, (r.key, [(hex(vals[i]), hex(a[i]), hex(b[i])) for i in bad[:5]])


def _example(name: str) -> wg.Program:
    return wg.assemble((EX / name).read_text(), name)


def example_cases() -> list[tuple[wg.Program, object, object, np.ndarray, list[object]]]:
    """(program, grid, workgroup, memory, args) for every example (also used by test_sycl)."""
    n = 1000
    f = np.random.default_rng(0).random(n).astype(np.float32)
    cases = [
        (_example("vector_add.wave"), 4, None, np.concatenate([f, f, np.zeros(n, np.float32)]), [0, 4 * n, 8 * n, n]),
        (
            _example("reduce.wave"),
            8,
            None,
            np.concatenate([np.arange(2048, dtype=np.uint32), np.zeros(8, np.uint32)]),
            [0, 8192],
        ),
        (
            _example("wave_scan.wave"),
            2,
            128,
            np.concatenate([np.arange(256, dtype=np.uint32), np.zeros(264, np.uint32)]),
            [0, 1024, 2048],
        ),
        (_example("flat_saxpy.wave"), 3, None, np.concatenate([f[:300], f[:300]]), [0, 1200, 2.5, 300]),
        (
            _example("sgemm_tiled.wave"),
            (2, 2),
            None,
            np.concatenate([np.resize(f, 1024), np.resize(f, 1024), np.zeros(1024, np.float32)]),
            [0, 4096, 8192, 32],
        ),
    ]
    return cases


@needs_opencl
def test_examples_match_the_emulator() -> None:
    check_examples("opencl")


def check_examples(device: str) -> None:
    """Every example on device against the emulator, bit for bit."""
    for prog, grid, wgs, mem, args in example_cases():
        a = wg.launch(prog, device="emulator", grid=grid, workgroup=wgs, memory=mem, args=args).memory
        b = wg.launch(prog, device=device, grid=grid, workgroup=wgs, memory=mem, args=args).memory
        assert np.array_equal(a, b), prog.kernels[0].name


def compiled_cases() -> list[tuple[object, list[object], object, object]]:
    """(kernel function, args, grid, workgroup) from the compiler's corpus (also used by test_sycl)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "compiler"))
    import kernels as K  # the compiler's corpus

    n = 200
    out = np.zeros(256, np.int32)
    return [
        (K.loops, [out, n], 1, 256),
        (
            K.floor_ops,
            [
                np.arange(-50, 50, dtype=np.int32),
                np.arange(1, 101, dtype=np.int32) * -3,
                np.zeros(100, np.int32),
                np.zeros(100, np.int32),
                np.zeros(100, np.float32),
                100,
            ],
            1,
            128,
        ),
        (K.scan, [np.arange(128, dtype=np.uint32), np.zeros(128, np.uint32), np.zeros(4, np.uint32)], 1, 128),
        (
            K.matmul,
            [np.ones(1024, np.float32), np.arange(1024, dtype=np.float32), np.zeros(1024, np.float32), 32],
            (2, 2),
            None,
        ),
    ]


def check_compiled_kernels(device: str, opt: int) -> None:
    from wavegpu.runtime.buffers import pack

    for kf, args, grid, wgs in compiled_cases():
        prog = wg.compile(kf.python, opt=opt)  # type: ignore[attr-defined]
        layout = pack(prog.kernels[0], args)
        a = wg.launch(prog, device="emulator", grid=grid, workgroup=wgs, memory=layout.memory, args=layout.args)
        b = wg.launch(prog, device=device, grid=grid, workgroup=wgs, memory=layout.memory, args=layout.args)
        assert np.array_equal(a.memory, b.memory), kf.__name__  # type: ignore[attr-defined]


@needs_opencl
@pytest.mark.parametrize("opt", [0, 3])
def test_compiled_kernels_match_the_emulator(opt: int) -> None:
    check_compiled_kernels("opencl", opt)


@needs_opencl
def test_atomics_give_the_same_totals() -> None:
    check_atomics("opencl")


# every atomic whose final memory does not depend on the order (exch and cas do)
ATOMIC_OPS = [
    r.name.split(".", 2)[2]
    for r in ROWS
    if r.name.startswith("red.global.") and r.name.split(".")[2] not in ("exch", "cas")
]


def _atomics_kernel() -> str:
    """Every order-independent global and local atomic; memory: 10 global slots, 10 local
    results per workgroup (2 groups), then per-thread u32 operands and f32 operands (128 each)."""
    n = len(ATOMIC_OPS)
    lines = [
        ".kernel atoms",
        ".local_memory 64",
        ".workgroup_size 64, 1, 1",
        "    mov.u32 r1, %tid.x",
        "    mov.u32 r2, %ctaid.x",
        "    mov.u32 r3, %ntid.x",
        "    mad.lo.s32 r4, r2, r3, r1",
        "    shl.b32 r4, r4, 2",
        f"    add.u32 r5, r4, {4 * 3 * n}",
        "    ld.global.u32 r6, [r5]",
        "    add.u32 r5, r5, 512",
        "    ld.global.u32 r7, [r5]",
        "    setp.eq.u32 p0, r1, 0",
        "    if p0, L_a, L_b",
    ]
    for i in range(n):
        lines += [
            f"        mov.u32 r9, {4 * i}",
            f"        ld.global.u32 r8, [r9+{4 * (3 * n + 256)}]",
            "        st.local.u32 [r9], r8",
        ]
    lines += ["    L_a:", "    L_b: endif", "    barrier"]
    for i, op in enumerate(ATOMIC_OPS):
        v = "r7" if op.endswith("f32") else "r6"
        lines += [f"    mov.u32 r9, {4 * i}", f"    red.global.{op} [r9], {v}", f"    red.local.{op} [r9], {v}"]
    lines += [
        "    barrier",
        "    if p0, L_c, L_d",
        f"        mul.lo.u32 r10, r2, {4 * n}",
        f"        add.u32 r10, r10, {4 * n}",
    ]
    for i in range(n):
        lines += [
            f"        mov.u32 r9, {4 * i}",
            "        ld.local.u32 r8, [r9]",
            f"        st.global.u32 [r10+{4 * i}], r8",
        ]
    lines += ["    L_c:", "    L_d: endif", "    ret", ".end"]
    return "\n".join(lines)


def check_atomics(device: str) -> None:
    """Every order-independent global and local atomic, and the histogram kernel: same totals."""
    rng = np.random.default_rng(0)
    init = np.array([5, 1000, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0, 0xFFFFFFFF, 0, 0x12345678, 0], np.uint32)
    init[9] = np.float32(1.5).view(np.uint32)
    mem = np.zeros(10 + 20 + 128 + 128 + 10, np.uint32)
    mem[:10] = init
    mem[30:158] = rng.integers(0, 2**32, 128, dtype=np.uint64).astype(np.uint32)
    mem[158:286] = (rng.integers(-8, 8, 128) * 0.5).astype(np.float32).view(np.uint32)  # exact sums
    mem[286:295] = init[:9][::-1]  # the local slots' first values
    mem[295] = init[9]
    prog = wg.assemble(_atomics_kernel(), "atoms.wave")
    a = wg.launch(prog, grid=2, memory=mem).memory
    b = wg.launch(prog, device=device, grid=2, memory=mem).memory
    assert np.array_equal(a, b), np.flatnonzero(a.view(np.uint32) != b.view(np.uint32))

    # the compiled histogram: integer and float global atomics from many workgroups
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "compiler"))
    import kernels as K

    from wavegpu.runtime.buffers import pack

    data = np.random.default_rng(1).integers(0, 1 << 20, 3000).astype(np.uint32)
    prog = wg.compile(K.histogram.python)
    layout = pack(prog.kernels[0], [data, np.zeros(16, np.uint32), np.zeros(16, np.float32), 3000])
    a = wg.launch(prog, device="emulator", grid=12, workgroup=256, memory=layout.memory, args=layout.args)
    b = wg.launch(prog, device=device, grid=12, workgroup=256, memory=layout.memory, args=layout.args)
    assert np.array_equal(layout.read(a.memory, "bins"), layout.read(b.memory, "bins"))
    assert np.array_equal(layout.read(a.memory, "fbins"), layout.read(b.memory, "fbins"))  # exact: halves


@needs_opencl
@settings(max_examples=15, deadline=None)
@given(st.data())
def test_random_structured_programs_match(data: st.DataObject) -> None:
    """The emulator's differential generator (tests/emulator) on OpenCL, with W = 8 or 16."""
    check_random_program("opencl", data)


def check_random_program(device: str, data: st.DataObject, widths: tuple[int, ...] = (8, 16)) -> None:
    """A random structured program (no atomics) on device against the emulator, W from widths."""
    W = data.draw(st.sampled_from(widths))
    threads = W * 2
    D.SHARED_BASE = threads * D.SLOT_WORDS * 4
    seed_vals = data.draw(st.lists(st.integers(0, 2**32 - 1), min_size=24, max_size=24))
    body = [i for i in data.draw(D.block()) if i.spec.cls not in ("atomic",) and i.spec.name != "ret"]
    if any(i.spec.cls == "control" for i in body):
        from wavegpu.isa.structure import check_structure

        if check_structure(body):
            return
    k = Kernel("rnd", tuple(D.prologue(seed_vals) + body + D.epilogue()), 19, 8)
    mem = np.random.default_rng(data.draw(st.integers(0, 2**31))).integers(0, 256, D.SHARED_BASE + 16, dtype=np.uint8)
    try:  # programs with undefined behaviour (inactive shuffle sources, ...) may differ: skip them
        a = wg.launch(k, device="emulator", workgroup=threads, memory=mem, wave_width=W, check=True).memory
    except wg.UndefinedBehaviour:
        assume(False)
    except wg.Trap as e:  # a lane that never leaves a loop (`continue p` with p invariant): nothing to compare
        assume(not e.reason.startswith(("endless loop", "instruction budget")))
        raise
    b = wg.launch(k, device=device, workgroup=threads, memory=mem, wave_width=W).memory
    assert np.array_equal(a, b), wg.disassemble(k)


def test_translate_cli_and_unknown_targets(tmp_path: Path) -> None:
    r = run_wave("translate", str(EX / "vector_add.wave"), "--target", "opencl")
    assert r.returncode == 0 and "__kernel void vector_add" in r.stdout
    r = run_wave("translate", str(EX / "vector_add.wave"), "--target", "amdgcn")
    assert r.returncode == 0 and ".amdhsa_kernel vector_add" in r.stdout
    r = run_wave("translate", str(EX / "vector_add.wave"), "--target", "vulkan")
    assert r.returncode == 1 and "unknown target 'vulkan'" in r.stderr and "Traceback" not in r.stderr
    with pytest.raises(wg.WaveError, match="unknown device"):
        wg.launch(_example("vector_add.wave"), device="tpu")


@needs_opencl
def test_kernel_functions_take_a_device() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "compiler"))
    import kernels as K

    n = 1000
    a = np.random.default_rng(3).random(n).astype(np.float32)
    b = np.random.default_rng(4).random(n).astype(np.float32)
    outs = []
    for device in ("emulator", "opencl"):
        y = b.copy()
        K.saxpy(np.float32(2.5), a, y, n, grid=4, workgroup=256, device=device)
        outs.append(y)
    assert np.array_equal(outs[0], outs[1]) and np.allclose(outs[0], 2.5 * a + b, rtol=1e-6)
    with pytest.raises(wg.WaveError, match="emulator only"):
        K.saxpy(np.float32(2.5), a, b, n, grid=4, workgroup=256, device="opencl", check=True)


MMA = """
.kernel mma
.workgroup_size 64, 1, 1
    mov.u32 r20, %tid.x
    shl.b32 r20, r20, 5
    ld.global.v4.b32 {r0, r1, r2, r3}, [r20]
    ld.global.v4.b32 {r4, r5, r6, r7}, [r20+16]
    mma.m16n8k8.f32.f16 {r8, r9, r10, r11}, {r0, r1}, {r2}, {r4, r5, r6, r7}
    st.global.v4.b32 [r20], {r8, r9, r10, r11}
    ret
.end
"""


def check_mma(device: str) -> None:
    """mma.m16n8k8 (two waves of 32) with random f16 fragments and f32 accumulators, some
    overflowing to inf and NaN, against the emulator bit for bit."""
    rng = np.random.default_rng(7)
    mem = np.zeros((64, 8), np.uint32)
    halves = rng.normal(0, 4, (64, 3, 2)).astype(np.float16)
    halves[5, 0, 0] = np.float16(60000)  # the largest products f16 allows
    halves[9, 1, 1] = np.float16(np.inf)
    mem[:, :3] = halves.view(np.uint32).reshape(64, 3)
    mem[:, 4:] = rng.normal(0, 100, (64, 4)).astype(np.float32).view(np.uint32)
    prog = wg.assemble(MMA, "mma.wave")
    a = wg.launch(prog, memory=mem.view(np.uint8).reshape(-1)).memory
    b = wg.launch(prog, device=device, memory=mem.view(np.uint8).reshape(-1)).memory
    assert np.array_equal(a, b), np.flatnonzero(a.view(np.uint32) != b.view(np.uint32))[:8]


@needs_opencl
def test_mma_matches_the_emulator() -> None:
    check_mma("opencl")


FAKE_ICD = r"""
/* The smallest OpenCL ICD: one platform, "wavegpu test platform", with no devices. */
#include <stddef.h>
#include <string.h>
typedef int cl_int;
typedef unsigned int cl_uint;
struct _cl_platform_id { void* dispatch; };
static void* table[256];
static struct _cl_platform_id platform = {table};
cl_int clGetPlatformInfo(struct _cl_platform_id* p, cl_uint what, size_t size, void* value, size_t* size_ret) {
    const char* s = what == 0x0902 ? "wavegpu test platform" : what == 0x0904 ? "cl_khr_icd"
                  : what == 0x0920 ? "WGT" : what == 0x0901 ? "OpenCL 1.2 test" : "";
    size_t n = strlen(s) + 1;
    if (size_ret) *size_ret = n;
    if (value) { if (size < n) return -30; memcpy(value, s, n); }
    return 0;
}
cl_int clGetDeviceIDs(void* p, unsigned long type, cl_uint n, void** devices, cl_uint* count) {
    if (count) *count = 0;
    return -1;
}
cl_int clIcdGetPlatformIDsKHR(cl_uint n, struct _cl_platform_id** platforms, cl_uint* count) {
    table[1] = (void*)clGetPlatformInfo;
    table[2] = (void*)clGetDeviceIDs;
    if (count) *count = 1;
    if (platforms && n) platforms[0] = &platform;
    return 0;
}
void* clGetExtensionFunctionAddress(const char* name) {
    return strcmp(name, "clIcdGetPlatformIDsKHR") == 0 ? (void*)clIcdGetPlatformIDsKHR : NULL;
}
"""

ICD_KEYS = ("OCL_ICD_VENDORS", "OCL_ICD_FILENAMES", "OPENCL_VENDOR_PATH")
PROBE = """
import json, os, subprocess, sys
import wavegpu as wg
keys = sys.argv[1:]
devices = wg.devices()
import pyopencl as cl
show = "import json, os, sys; print(json.dumps({k: os.environ.get(k) for k in sys.argv[1:]}))"
child = subprocess.run([sys.executable, "-c", show, *keys], capture_output=True, text=True, check=True)
env = {k: os.environ.get(k) for k in keys}
names = [p.name for p in cl.get_platforms()]
print(json.dumps({"devices": devices, "env": env, "child": json.loads(child.stdout), "platforms": names}))
"""


@pytest.fixture(scope="module")
def user_vendors(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A user's own vendors folder holding one ICD (a platform without devices)."""
    import shutil
    import subprocess

    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("needs a C compiler to build a test ICD")
    d = tmp_path_factory.mktemp("icd")
    (d / "fake.c").write_text(FAKE_ICD)
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(d / "libfake.so"), str(d / "fake.c")], check=True)
    (d / "vendors").mkdir()
    (d / "vendors" / "wavegpu-test.icd").write_text(f"{d / 'libfake.so'}\n")
    return d


def probe(env: dict[str, str]) -> dict:  # type: ignore[type-arg]
    """wg.devices() in a fresh interpreter (the ICD loader reads its settings once per process) under env."""
    import json
    import os
    import subprocess

    full = {k: v for k, v in os.environ.items() if k not in ICD_KEYS} | env
    r = subprocess.run([sys.executable, "-c", PROBE, *ICD_KEYS], capture_output=True, text=True, env=full, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.splitlines()[-1])


def intel(platforms: list[str]) -> bool:
    return any("Intel" in p for p in platforms)


@needs_opencl
def test_the_users_vendors_folder_stays_in_effect_beside_intels(user_vendors: Path) -> None:
    env = {"OCL_ICD_VENDORS": str(user_vendors / "vendors")}
    out = probe(env)
    assert "opencl" in out["devices"]
    assert "wavegpu test platform" in out["platforms"] and intel(out["platforms"])
    assert out["env"] == out["child"] == {**dict.fromkeys(ICD_KEYS), **env}


@needs_opencl
def test_the_systems_platforms_are_not_hidden(user_vendors: Path) -> None:
    """With no loader settings of the user's, the platforms of the system's vendors folder (here
    OPENCL_VENDOR_PATH stands for /etc/OpenCL/vendors) stay listed, and nothing is left set."""
    env = {"OPENCL_VENDOR_PATH": str(user_vendors / "vendors")}
    out = probe(env)
    assert "opencl" in out["devices"]
    assert "wavegpu test platform" in out["platforms"] and intel(out["platforms"])
    assert out["env"] == out["child"] == {**dict.fromkeys(ICD_KEYS), **env}


@needs_opencl
def test_the_users_icd_filenames_survive(user_vendors: Path) -> None:
    env = {"OCL_ICD_FILENAMES": f"{user_vendors / 'libfake.so'}:/opt/vendor/lib/libtheirs.so"}
    out = probe(env)
    assert "opencl" in out["devices"] and intel(out["platforms"])
    assert out["env"] == out["child"] == {**dict.fromkeys(ICD_KEYS), **env}


def test_child_processes_get_intels_library_added_to_the_users_filenames() -> None:
    lib = opencl.intel_library()
    if lib is None:
        pytest.skip("intel-opencl-rt is not installed")
    user = {"OCL_ICD_FILENAMES": "/a/libone.so:/b/libtwo.so", "OCL_ICD_VENDORS": "/their/vendors", "X": "1"}
    env = opencl.loader_env(user)
    assert env == {**user, "OCL_ICD_FILENAMES": f"/a/libone.so:/b/libtwo.so:{lib}"}
    assert opencl.loader_env(env) == env  # added once
    assert opencl.loader_env({})["OCL_ICD_FILENAMES"] == str(lib)
    assert "OCL_ICD_VENDORS" not in opencl.loader_env({})


def test_the_entries_copied_are_those_ocl_icd_would_read(tmp_path: Path) -> None:
    vendors = tmp_path / "vendors"
    vendors.mkdir()
    (vendors / "a.icd").write_text("/lib/liba.so\n")
    (vendors / "b.icd").write_text("libb.so\n")
    (vendors / "notes.txt").write_text("not an entry")
    (tmp_path / "one.icd").write_text("/lib/libone.so\n")
    both = {"a.icd": b"/lib/liba.so\n", "b.icd": b"libb.so\n"}
    assert opencl.vendor_entries({"OCL_ICD_VENDORS": str(vendors)}) == both
    assert opencl.vendor_entries({"OPENCL_VENDOR_PATH": str(vendors)}) == both
    assert opencl.vendor_entries({"OCL_ICD_VENDORS": "", "OPENCL_VENDOR_PATH": str(vendors)}) == both
    assert opencl.vendor_entries({"OCL_ICD_VENDORS": str(tmp_path / "one.icd")}) == {"one.icd": b"/lib/libone.so\n"}
    bare = {"OCL_ICD_VENDORS": "a.icd", "OPENCL_VENDOR_PATH": str(vendors)}  # looked up in the vendors folder
    assert opencl.vendor_entries(bare) == {"a.icd": b"/lib/liba.so\n"}
    assert opencl.vendor_entries({"OCL_ICD_VENDORS": "/opt/x/libx.so"}) == {"user-library.icd": b"/opt/x/libx.so\n"}
    assert opencl.vendor_entries({"OCL_ICD_VENDORS": str(tmp_path / "missing")}) == {
        "user-library.icd": f"{tmp_path / 'missing'}\n".encode()
    }


@needs_opencl
@pytest.mark.parametrize("op", ["min", "max"])
def test_a_wave_of_nans_reduces_to_nan(op: str) -> None:
    """min/max skip NaN, so their identity is NaN: a wave whose lanes are all NaN gives NaN (the
    runtimes' reductions gave +-inf; found by the random programs)."""
    k = wg.assemble(
        f".kernel k\n.registers 8\n    mov.b32 r2, %tid.x\n    mul.lo.u32 r0, r2, 4\n"
        f"    ld.global.b32 r6, [r0]\n    wave.reduce.{op}.f32 r1, r6\n    st.global.b32 [r0+64], r1\n.end\n"
    )
    mem = np.zeros(128, np.uint8)
    lanes = np.array([0x7F800001 + i for i in range(8)] + [0x3F800000 + i for i in range(8)], np.uint32)
    lanes[12] = 0xFFC00000  # a NaN among numbers is skipped
    mem[:64] = lanes.view(np.uint8)
    a = wg.launch(k, grid=1, workgroup=16, memory=mem, wave_width=8).memory
    b = wg.launch(k, device="opencl", grid=1, workgroup=16, memory=mem, wave_width=8).memory
    out = a[64:].view(np.uint32)
    assert (out[:8] == 0x7FFFFFFF).all() and out[8] == (0x3F800000 if op == "min" else 0x3F800007)
    assert np.array_equal(a, b)


@needs_opencl
def test_a_kernel_without_params_takes_its_preset_registers_as_arguments(tmp_path: Path) -> None:
    """The flat dialect's kernels declare no .param: their inputs are register presets (r0 = x,
    r1 = y, r2 = a, r3 = n for flat_saxpy). `wave translate` infers them from the registers read
    before written, so the OpenCL entry point takes a0..a3; run on the CPU runtime with the inputs
    as arguments it matches wave-emu given the same values with --set-reg."""
    n = 300  # not a multiple of the workgroup: the bound check matters
    r = run_wave("translate", str(EX / "flat_saxpy.wave"), "--target", "opencl")
    assert r.returncode == 0, r.stderr
    assert "uint a0, uint a1, uint a2, uint a3)" in r.stdout and "r3 = a3;" in r.stdout
    x = np.arange(n, dtype=np.float32) * np.float32(0.25)
    y = np.linspace(-3, 3, 384).astype(np.float32)
    mem = np.concatenate([x, np.zeros(4, np.float32), y]).view(np.uint8)
    a = np.float32(1.5)
    args = [0, 4 * (n + 4), int(a.view(np.uint32)), n]
    got = opencl.run(r.stdout, "flat_saxpy", (3, 1, 1), (128, 1, 1), mem, np.zeros(16, np.uint8), args)
    (tmp_path / "mem.bin").write_bytes(mem.tobytes())
    emu = run_emu(
        str(EX / "flat_saxpy.wave"),
        "--grid", "3,1,1", "--workgroup", "128,1,1", "--device-memory", str(mem.size),
        "--arg", f"0:{tmp_path / 'mem.bin'}",
        *(f"--set-reg=r{i}:{v}" for i, v in enumerate(args)),
        "--dump-u32", f"{4 * (n + 4)}:384",
    )  # fmt: skip
    assert emu.returncode == 0, emu.stderr
    want = np.array([int(v) for v in emu.stdout.split()], np.uint32)
    out = got[4 * (n + 4) :].view(np.uint32)
    assert np.array_equal(out, want)
    assert np.array_equal(out[:n].view(np.float32), (np.float64(a) * x + y[:n]).astype(np.float32))
    assert np.array_equal(out[n:], y[n:].view(np.uint32))  # past n: untouched


def _sgemm_blocked():  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(EX / "sgemm_blocked"))
    import sgemm_blocked as S

    return S


@needs_opencl
def test_the_register_blocked_sgemm_is_bit_identical_on_opencl() -> None:
    """examples/sgemm_blocked: 4 x 4 outputs per thread, double-buffered tiles in local memory;
    bit for bit between the emulator and OpenCL (n = 128: 2 x 2 workgroups, 8 K steps), close to
    NumPy's product; the checked-in assembly computes the same bits as the Python kernel."""
    S = _sgemm_blocked()
    n = 128
    rng = np.random.default_rng(11)
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    outs = {}
    for device in ("emulator", "opencl"):
        c = np.zeros((n, n), np.float32)
        S.sgemm_blocked(a.reshape(-1), b.reshape(-1), c.reshape(-1), n, grid=(2, 2), device=device)
        outs[device] = c
    assert np.array_equal(outs["emulator"].view(np.uint32), outs["opencl"].view(np.uint32))
    assert np.allclose(outs["emulator"], a.astype(np.float64) @ b.astype(np.float64), rtol=1e-4, atol=1e-4)
    asm = wg.assemble((EX / "sgemm_blocked" / "sgemm_blocked.wave").read_text(), "sgemm_blocked.wave")
    c = np.zeros((n, n), np.float32)
    from wavegpu.runtime.kernel import run_kernel  # the calling convention, for an assembled kernel

    run_kernel(asm.kernels[0], [a.reshape(-1), b.reshape(-1), c.reshape(-1), n], grid=(2, 2))
    assert np.array_equal(c.view(np.uint32), outs["emulator"].view(np.uint32))


# ---- wave operations on every host: exact whatever the runtime's vector width and ISA ---------
WAVE_REDUCTIONS = [r.name for r in ROWS if r.name.startswith(("wave.reduce.", "wave.prefix."))]
WAVE_SHUFFLES = [r.name for r in ROWS if r.name.startswith(("wave.shuffle", "wave.broadcast"))]
WAVE_FLOATS = [
    0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFFFFFFF, 0x7FFFFFFF,  # NaNs, payloads and signs
    0x00000000, 0x80000000, 0x7F800000, 0xFF800000,  # zeros and infinities
    0x00000001, 0x807FFFFF, 0x00800000, 0x3F800000, 0x3F800001, 0xBF800000, 0x7F7FFFFF,
]  # fmt: skip


def wave_ops_kernel(threads: int) -> wg.Program:
    """Every wave reduction, the prefix sum and the votes inside an `if` that leaves a chosen set
    of lanes active; every shuffle and broadcast with all lanes active. Memory per thread t:
    x at 4t, the active flag at 4(T+t), a shuffle lane or amount at 4(2T+t), then one output
    column of T words per operation."""
    T = 4 * threads
    lines = [
        ".kernel waves",
        ".registers 12",
        "    mov.u32 r0, %tid.x",
        "    shl.b32 r1, r0, 2",
        "    ld.global.b32 r2, [r1]",
        f"    ld.global.b32 r3, [r1+{T}]",
        f"    ld.global.b32 r4, [r1+{2 * T}]",
        "    and.b32 r5, r2, 1",
        "    setp.ne.u32 p1, r5, 0",
        "    setp.ne.u32 p0, r3, 0",
        "    mov.u32 r7, 1",
        "    if p0, L_else, L_end",
    ]
    col = 3
    for name in WAVE_REDUCTIONS:
        lines += [f"        {name} r6, r2", f"        st.global.b32 [r1+{col * T}], r6"]
        col += 1
    lines += ["        wave.ballot.b32 r6, p1", f"        st.global.b32 [r1+{col * T}], r6"]
    col += 1
    for vote in ("any", "all"):
        lines += [
            f"        wave.{vote} p2, p1",
            "        selp.b32 r6, r7, 0, p2",
            f"        st.global.b32 [r1+{col * T}], r6",
        ]
        col += 1
    lines += ["    L_else:", "    L_end: endif"]
    for name in WAVE_SHUFFLES:
        lines += [f"    {name} r6, r2, r4", f"    st.global.b32 [r1+{col * T}], r6"]
        col += 1
    lines += ["    ret", ".end"]
    return wg.assemble("\n".join(lines), "waves.wave")


def wave_ops_memory(threads: int, w: int, seed: int) -> np.ndarray:
    """Values (float specials, ints of both signs, random bits) and per wave an active set: all,
    one lane, alternate lanes, the upper half or random lanes."""
    rng = np.random.default_rng(seed)
    ncols = 3 + len(WAVE_REDUCTIONS) + 3 + len(WAVE_SHUFFLES)
    mem = np.zeros((ncols, threads), np.uint32)
    x = rng.choice(np.array(WAVE_FLOATS, np.uint32), threads)
    ints = rng.integers(-(2**31), 2**31, threads).astype(np.int64).astype(np.uint32)
    x = np.where(rng.random(threads) < 0.3, ints, x)
    x[:: max(1, w // 2)] = rng.choice(np.array([0x7FC00000, 0x80000000, 0], np.uint32), x[:: max(1, w // 2)].size)
    mem[0] = x
    for base in range(0, threads, w):
        kind = (base // w + seed) % 5
        lanes = np.arange(w)
        on = [lanes >= 0, lanes == rng.integers(w), lanes % 2 == 1, lanes >= w // 2, rng.random(w) < 0.5][kind]
        mem[1, base : base + w] = on
    mem[2] = rng.integers(0, w + 3, threads)
    return mem.view(np.uint8).reshape(-1)


def check_wave_ops(device: str, widths: tuple[int, ...] = (8, 16, 32), seeds: range = range(3)) -> None:
    """The wave operations on device against the emulator (check=True: no undefined behaviour),
    bit for bit, at each W, one workgroup of two waves per launch, several data seeds."""
    for w in widths:
        threads = 2 * w
        prog = wave_ops_kernel(threads)
        for seed in seeds:
            mem = wave_ops_memory(threads, w, seed)
            a = wg.launch(prog, workgroup=threads, memory=mem, wave_width=w, check=True).memory.view(np.uint32)
            b = wg.launch(prog, device=device, workgroup=threads, memory=mem, wave_width=w).memory.view(np.uint32)
            bad = np.flatnonzero(a != b)
            names = ["x", "on", "src", *WAVE_REDUCTIONS, "ballot", "any", "all", *WAVE_SHUFFLES]
            where = [(names[i // threads], i % threads, hex(a[i]), hex(b[i])) for i in bad[:6]]
            assert not bad.size, (device, w, seed, where)


@needs_opencl
def test_wave_operations_match_the_emulator() -> None:
    check_wave_ops("opencl")
