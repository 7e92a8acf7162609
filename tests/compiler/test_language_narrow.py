"""8- and 16-bit array elements (u8 i8 u16 i16, docs/compiler.md "Arrays"): storage-only types read
as zero- or sign-extended u32/i32 values and written wrapping (the low bits), through the ISA's
byte-addressed ld.u8/.s8/.u16/.s16 and st.b8/.b16; 1-D, 2-D and local arrays, -O0 and -O3, the
MIR text round trip, the access table, refused atomics, the OpenCL backend bit for bit."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import wavegpu as wg
from wavegpu.compiler.frontends.python import frontend, function_source
from wavegpu.compiler.mir import dump, parse, verify
from wavegpu.compiler.mir.lower import lower
from wavegpu.errors import CompileError, WaveError
from wavegpu.runtime import opencl

OPTS = [0, 3]


def at(kernel, opt):  # type: ignore[no-untyped-def]
    kernel.opt = opt
    return kernel


@wg.kernel
def widen(a8: wg.u8[:], b8: wg.i8[:], a16: wg.u16[:], b16: wg.i16[:], u: wg.u32[:], s: wg.i32[:], n: wg.i32):
    i = wg.global_id()
    if i < n:
        u[4 * i] = a8[i]
        s[4 * i] = b8[i]
        u[4 * i + 1] = a16[i]
        s[4 * i + 1] = b16[i]
        u[4 * i + 2] = a8[i] + a16[i]  # u32 arithmetic: no 8-bit wrap
        s[4 * i + 2] = b8[i] * b16[i]  # i32 arithmetic
        u[4 * i + 3] = a8[i] >> 1
        s[4 * i + 3] = b16[i] >> 1  # arithmetic shift of the sign-extended value


EXTREMES8 = np.array([0, 1, 127, 128, 254, 255, 7, 200], np.uint8)
EXTREMES8S = np.array([0, 1, 127, -128, -1, -127, 7, -56], np.int8)
EXTREMES16 = np.array([0, 1, 32767, 32768, 65534, 65535, 300, 40000], np.uint16)
EXTREMES16S = np.array([0, 1, 32767, -32768, -1, -32767, 300, -25536], np.int16)


def widen_ref(a8, b8, a16, b16):  # type: ignore[no-untyped-def]
    n = len(a8)
    u, s = np.zeros(4 * n, np.uint32), np.zeros(4 * n, np.int32)
    u[0::4] = a8
    s[0::4] = b8
    u[1::4] = a16
    s[1::4] = b16
    u[2::4] = a8.astype(np.uint32) + a16
    s[2::4] = b8.astype(np.int32) * b16
    u[3::4] = a8 >> 1
    s[3::4] = b16.astype(np.int32) >> 1
    return u, s


@pytest.mark.parametrize("opt", OPTS)
def test_loads_zero_and_sign_extend_at_the_extremes(opt: int) -> None:
    n = len(EXTREMES8)
    u, s = np.zeros(4 * n, np.uint32), np.zeros(4 * n, np.int32)
    at(widen, opt)(EXTREMES8, EXTREMES8S, EXTREMES16, EXTREMES16S, u, s, n, grid=1, workgroup=32, check=True)
    ru, rs = widen_ref(EXTREMES8, EXTREMES8S, EXTREMES16, EXTREMES16S)
    np.testing.assert_array_equal(u, ru)
    np.testing.assert_array_equal(s, rs)
    assert u[0 * 4 + 0] == 0 and u[5 * 4] == 255 and s[3 * 4] == -128 and s[3 * 4 + 1] == -32768
    assert u[5 * 4 + 1] == 65535 and s[4 * 4] == -1 and s[4 * 4 + 1] == -1


@wg.kernel
def narrow_store(x: wg.i32[:], u8: wg.u8[:], i8: wg.i8[:], u16: wg.u16[:], i16: wg.i16[:], n: wg.i32):
    i = wg.global_id()
    if i < n:
        v = x[i]
        u8[i] = wg.u32(v)
        i8[i] = v
        u16[i] = wg.u32(v)
        i16[i] = v


@pytest.mark.parametrize("opt", OPTS)
def test_stores_keep_the_low_bits(opt: int) -> None:
    x = np.array([0, 255, 256, -1, -128, 128, 65535, 65536, -32768, 32768, 2**31 - 1, -(2**31), 0x12345678], np.int32)
    n = len(x)
    outs = [np.full(n + 3, 0x5A, t) for t in (np.uint8, np.int8, np.uint16, np.int16)]
    at(narrow_store, opt)(x, *outs, n, grid=1, workgroup=32, check=True)
    for o in outs:
        np.testing.assert_array_equal(o[:n], x.astype(o.dtype))  # NumPy's astype wraps like C
        assert (o[n:] == 0x5A).all()  # neighbours untouched: byte and halfword stores


@wg.kernel
def histogram(img: wg.u8[:, :], hist: wg.u32[:]):
    y = wg.global_id(1)
    x = wg.global_id(0)
    if y < img.shape[0] and x < img.shape[1]:
        wg.atomic_add(hist, img[y, x], 1)


@pytest.mark.parametrize("opt", OPTS)
def test_8bit_image_histogram(opt: int) -> None:
    img = np.random.default_rng(1).integers(0, 256, (37, 53), dtype=np.uint8)
    img[0, 0], img[0, 1] = 0, 255
    hist = np.zeros(256, np.uint32)
    at(histogram, opt)(img, hist, grid=(4, 5), workgroup=(16, 8), check=True)
    np.testing.assert_array_equal(hist, np.bincount(img.ravel(), minlength=256))


@wg.kernel
def threshold(img: wg.u8[:, :], out: wg.u8[:, :], t: wg.u32):
    y = wg.global_id(1)
    x = wg.global_id(0)
    if y < img.shape[0] and x < img.shape[1]:
        out[y, x] = 255 if img[y, x] > t else 0


@pytest.mark.parametrize("opt", OPTS)
def test_threshold_2d(opt: int) -> None:
    img = np.random.default_rng(2).integers(0, 256, (19, 45), dtype=np.uint8)
    out = np.full_like(img, 7)
    at(threshold, opt)(img, out, 127, grid=(3, 3), workgroup=(16, 8), check=True)
    np.testing.assert_array_equal(out, np.where(img > 127, 255, 0).astype(np.uint8))


@wg.kernel
def widening_sum(x: wg.i16[:], out: wg.i32[:], n: wg.i32):
    i = wg.global_id()
    acc = 0
    for k in range(i, n, wg.global_size()):
        acc += x[k]
    wg.atomic_add(out, 0, acc)


@pytest.mark.parametrize("opt", OPTS)
def test_widening_sum_of_i16(opt: int) -> None:
    x = np.full(1000, -32768, np.int16)
    x[::3] = 32767
    out = np.zeros(1, np.int32)
    at(widening_sum, opt)(x, out, len(x), grid=2, workgroup=64, check=True)
    assert out[0] == int(x.astype(np.int64).sum())  # no 16-bit wrap in the sum


@wg.kernel(workgroup=64)
def local_bytes(x: wg.u8[:], out: wg.u16[:], n: wg.i32):
    tile = wg.local_array(wg.u8, 64)
    wide = wg.local_array(wg.i16, (2, 64))
    t = wg.thread_id()
    i = wg.global_id()
    tile[t] = x[i] if i < n else 0
    wide[1, t] = -wg.i32(tile[t])
    wg.barrier()
    if i < n:
        out[i] = tile[63 - t] + wg.u32(wide[1, t] + 1000)


@pytest.mark.parametrize("opt", OPTS)
def test_local_u8_and_i16_arrays(opt: int) -> None:
    n = 128
    x = np.arange(n, dtype=np.uint8) * 2 + 1
    out = np.zeros(n, np.uint16)
    at(local_bytes, opt)(x, out, n, grid=2, workgroup=64, check=True)
    rev = x.reshape(2, 64)[:, ::-1].ravel().astype(np.int64)
    np.testing.assert_array_equal(out, (rev + 1000 - x).astype(np.uint16))


@wg.kernel
def augmented(a: wg.u8[:], b: wg.i8[:], n: wg.i32):
    i = wg.global_id()
    if i < n:
        a[i] += 200  # u32 arithmetic, then the low 8 bits
        b[i] -= 100


@pytest.mark.parametrize("opt", OPTS)
def test_augmented_assignment_wraps(opt: int) -> None:
    a = np.array([0, 55, 56, 255], np.uint8)
    b = np.array([-128, 27, 28, 127], np.int8)
    at(augmented, opt)(a, b, 4, grid=1, workgroup=32, check=True)
    np.testing.assert_array_equal(a, [200, 255, 0, 199])
    np.testing.assert_array_equal(b, [28, -73, -72, 27])


@settings(max_examples=15, deadline=None)
@given(
    hnp.arrays(np.uint8, st.integers(1, 70)),
    st.sampled_from(OPTS),
    st.data(),
)
def test_random_arrays_widen_like_numpy(a8: np.ndarray, opt: int, data: st.DataObject) -> None:
    n = len(a8)
    b8 = data.draw(hnp.arrays(np.int8, n))
    a16 = data.draw(hnp.arrays(np.uint16, n))
    b16 = data.draw(hnp.arrays(np.int16, n))
    u, s = np.zeros(4 * n, np.uint32), np.zeros(4 * n, np.int32)
    at(widen, opt)(a8, b8, a16, b16, u, s, n, grid=3, workgroup=32, check=True)
    ru, rs = widen_ref(a8, b8, a16, b16)
    np.testing.assert_array_equal(u, ru)
    np.testing.assert_array_equal(s, rs)


@settings(max_examples=15, deadline=None)
@given(hnp.arrays(np.int32, st.integers(1, 70)), st.sampled_from(OPTS))
def test_random_wrapping_stores(x: np.ndarray, opt: int) -> None:
    n = len(x)
    outs = [np.zeros(n, t) for t in (np.uint8, np.int8, np.uint16, np.int16)]
    at(narrow_store, opt)(x, *outs, n, grid=3, workgroup=32, check=True)
    for o in outs:
        np.testing.assert_array_equal(o, x.astype(o.dtype))


# -- the compiler's view


def mir_of(kf) -> str:  # type: ignore[no-untyped-def]
    src, node = function_source(kf.python)
    return dump(lower(frontend(src, node)))


def test_mir_names_the_element_type_and_round_trips() -> None:
    for kf in (widen, narrow_store, local_bytes, threshold):
        text = mir_of(kf)
        fn = parse(text)
        verify(fn)
        assert dump(fn) == text
    text = mir_of(widen)
    assert "load.global.u8[a8]" in text and "load.global.i16[b16]" in text and "a8[u8]" in text
    assert "store.local.i16" in mir_of(local_bytes) and "store.global.u8[i8]" not in mir_of(narrow_store)
    assert "store.global.i8[i8]" in mir_of(narrow_store)


def test_verifier_refuses_a_narrow_load_of_the_wrong_type() -> None:
    bad = """func @k(%0: u32 a[u8]) {
entry:
  %1 = load.global.u8[a] %0 : i32
  ret
}
"""
    with pytest.raises(CompileError, match="yields u32"):
        verify(parse(bad))


@pytest.mark.parametrize("opt", [0, 1, 2, 3])
def test_byte_accesses_select_byte_rows_and_are_tagged(opt: int) -> None:
    prog = wg.compile(local_bytes.python, opt=opt)
    k = prog.kernels[0]
    names = [i.spec.name for i in k.instructions]  # type: ignore[attr-defined]
    assert "ld.global.u8" in names and "st.global.b16" in names
    assert "st.local.b8" in names and "ld.local.u8" in names and "ld.local.s16" in names
    assert "ld.global.b32" not in names and "st.global.b32" not in names
    params = [p.name for p in k.params]
    tags = {params[t] for t in k.accesses if t is not None}
    assert tags == {"x", "out"}


def test_bounds_checking_sees_one_byte_elements() -> None:
    """check=True traps exactly one element past the end of an u8 array (1-byte accesses)."""

    @wg.kernel
    def poke(a: wg.u8[:], i: wg.i32):
        a[i] = 1

    a = np.zeros(5, np.uint8)
    poke(a, 4, grid=1, workgroup=1, check=True)
    assert a[4] == 1
    with pytest.raises(WaveError):
        poke(a, 5, grid=1, workgroup=1, check=True)


@pytest.mark.parametrize(
    "body, message",
    [
        ("wg.atomic_add(a, 0, 1)", "32- and 64-bit atomics only"),
        ("a[0] = 256", "256 does not fit u8"),
        ("a[0] = -1", "-1 does not fit u8"),
        ("a[0] = 1.5", "expected u32, got f32"),
        ("a[0] = wg.i32(x)", "expected u32, got i32"),
        ("b[0] = wg.u32(x)", "expected i32, got u32"),
        ("b[0] = 128", "128 does not fit i8"),
        ("y: wg.u8 = 3", "array element type only"),
        ("a[0] = wg.u8(x)", "no u8 values.*0xFF"),
        ("a[0], b[0] = b[0], a[0]", "expected u32, got i32"),
        ("b[0] = a[1]", "expected i32, got u32"),
        ("b[0] = wg.i16(x)", "no i16 values.*0xFFFF"),
    ],
)
def test_refused_with_a_message(body: str, message: str) -> None:
    src = f"""
def k(a: wg.u8[:], b: wg.i8[:], x: wg.u32):
    {body}
"""
    with pytest.raises(CompileError, match=message):
        wg.compile(src)


def test_numpy_dtypes_are_checked_with_language_names() -> None:
    a = np.zeros(4, np.int8)
    with pytest.raises(WaveError, match=r"\(u8\[\]\).*uint8"):
        threshold(a.reshape(2, 2), np.zeros((2, 2), np.uint8), 1, grid=1, workgroup=(16, 8))
    with pytest.raises(WaveError, match=r"\(i16\[\]\)"):
        widening_sum(np.zeros(4, np.uint16), np.zeros(1, np.int32), 4, grid=1, workgroup=32)


def test_plain_python_run_matches() -> None:
    """runtime/pyexec: local_array(wg.u8, n) and the histogram run as Python; atomics on byte arrays
    are refused there as well."""
    img = np.random.default_rng(5).integers(0, 256, (3, 4), dtype=np.uint8)
    hist = np.zeros(256, np.uint32)
    for y in range(3):
        for x in range(4):
            with wg.python_thread(thread=(x, y, 0), workgroup_size=(4, 3, 1)):
                histogram.python(img, hist)
    np.testing.assert_array_equal(hist, np.bincount(img.ravel(), minlength=256))
    with wg.python_thread(global_id=0):
        t = wg.local_array(wg.u8, 4)
        assert t.dtype == np.uint8
        with pytest.raises(WaveError, match="atomics"):
            wg.atomic_add(t, 0, 1)


OK, WHY = opencl.available()


@pytest.mark.skipif(not OK, reason=f"no OpenCL device: {WHY}")
@pytest.mark.parametrize("opt", OPTS)
def test_opencl_renders_byte_accesses_bit_exactly(opt: int) -> None:
    from wavegpu.runtime.buffers import pack

    rng = np.random.default_rng(9)
    x = rng.integers(-(2**31), 2**31, 64, dtype=np.int64).astype(np.int32)
    x[:6] = [255, 256, -1, -128, 65535, -32768]
    cases = [
        (
            widen,
            [EXTREMES8, EXTREMES8S, EXTREMES16, EXTREMES16S, np.zeros(32, np.uint32), np.zeros(32, np.int32), 8],
            1,
            32,
        ),
        (
            narrow_store,
            [x, np.zeros(64, np.uint8), np.zeros(64, np.int8), np.zeros(64, np.uint16), np.zeros(64, np.int16), 64],
            2,
            32,
        ),
        (local_bytes, [np.arange(128, dtype=np.uint8), np.zeros(128, np.uint16), 128], 2, 64),
    ]
    for kf, args, grid, wgs in cases:
        prog = wg.compile(kf.python, opt=opt)  # type: ignore[attr-defined]
        layout = pack(prog.kernels[0], args)
        a = wg.launch(prog, device="emulator", grid=grid, workgroup=wgs, memory=layout.memory, args=layout.args)
        b = wg.launch(prog, device="opencl", grid=grid, workgroup=wgs, memory=layout.memory, args=layout.args)
        assert np.array_equal(a.memory, b.memory), kf.__name__  # type: ignore[attr-defined]


def test_the_doc_example_is_the_tested_histogram() -> None:
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "compiler.md").read_text(encoding="utf-8")
    body = inspect.getsource(histogram.python)
    assert body in doc


@wg.kernel
def row_sums(m: wg.i16[:, :], out: wg.i32[:], neg: wg.i8[:, :]):
    r = wg.global_id()
    if r < m.shape[0]:
        acc = 0
        for c in range(m.shape[1]):
            acc += m[r, c]
            neg[r, c] = -m[r, c]  # the low 8 bits of the negated i32
        out[r] = acc


@settings(max_examples=15, deadline=None)
@given(hnp.arrays(np.int16, hnp.array_shapes(min_dims=2, max_dims=2, max_side=20)), st.sampled_from(OPTS))
def test_random_2d_i16_rows_sum_without_wrapping(m: np.ndarray, opt: int) -> None:
    out = np.zeros(m.shape[0], np.int32)
    neg = np.zeros(m.shape, np.int8)
    at(row_sums, opt)(m, out, neg, grid=1, workgroup=32, check=True)
    np.testing.assert_array_equal(out, m.astype(np.int64).sum(axis=1))
    np.testing.assert_array_equal(neg, (-m.astype(np.int32)).astype(np.int8))


def test_a_scalar_parameter_cannot_be_narrow() -> None:
    with pytest.raises(CompileError, match="u16 is an array element type only"):
        wg.compile("def k(a: wg.u32[:], x: wg.u16):\n    a[0] = x\n")


@wg.kernel
def swap_halves(a: wg.u8[:], n: wg.i32):
    i = wg.global_id()
    if i < n // 2:
        a[i], a[n - 1 - i] = a[n - 1 - i], a[i]


@pytest.mark.parametrize("opt", OPTS)
def test_tuple_swap_of_bytes(opt: int) -> None:
    a = np.arange(250, 255, dtype=np.uint8)
    a = np.concatenate([a, np.arange(5, dtype=np.uint8)])
    want = a[::-1].copy()
    at(swap_halves, opt)(a, len(a), grid=1, workgroup=32, check=True)
    np.testing.assert_array_equal(a, want)
