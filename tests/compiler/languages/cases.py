"""The four-language corpus: one kernel, written idiomatically in Python, Rust, C++ and TypeScript
(examples/languages/<lang>/<name>.<suffix>), with its launch, its inputs and NumPy's answer.

Every version of a kernel has the same name and the same parameters in the same order; each must
give NumPy's answer at -O0..-O3, and the four versions must give bit-identical memory.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3] / "examples" / "languages"
SUFFIX = {"python": ".py", "rust": ".rs", "cpp": ".cpp", "typescript": ".ts"}

Args = dict[str, object]


@dataclass(frozen=True)
class Case:
    name: str
    grid: tuple[int, ...]
    workgroup: tuple[int, ...]
    make: Callable[[np.random.Generator], Args]  # the arguments by parameter name, in order
    reference: Callable[[Args], dict[str, np.ndarray]]  # the outputs NumPy computes
    ulps: dict[str, int] = field(default_factory=dict)  # outputs compared within ulps (math functions)

    def source(self, lang: str) -> Path:
        return ROOT / lang / f"{self.name}{SUFFIX[lang]}"


def _f32(rng: np.random.Generator, n: int, lo: float = -4.0, hi: float = 4.0) -> np.ndarray:
    return rng.uniform(lo, hi, n).astype(np.float32)


N = 1000


def _vector_add(rng: np.random.Generator) -> Args:
    return {"a": _f32(rng, N), "b": _f32(rng, N), "out": np.zeros(N, np.float32), "n": np.uint32(N)}


def _saxpy(rng: np.random.Generator) -> Args:
    return {"alpha": np.float32(1.75), "x": _f32(rng, N), "y": _f32(rng, N), "n": np.uint32(N)}


def _reduce(rng: np.random.Generator) -> Args:
    return {"data": _f32(rng, N), "partial": np.zeros(4, np.float32), "n": np.uint32(N)}


def _reduce_ref(a: Args) -> dict[str, np.ndarray]:
    data = np.zeros(4 * 256, np.float32)
    data[:N] = a["data"]
    buf = data.reshape(4, 256).copy()
    s = 128
    while s > 0:
        buf[:, :s] = buf[:, :s] + buf[:, s : 2 * s]
        s //= 2
    return {"partial": buf[:, 0].copy()}


def _scan(rng: np.random.Generator) -> Args:
    x = rng.integers(0, 2**32, N, dtype=np.uint64).astype(np.uint32)
    return {"x": x, "out": np.zeros(N, np.uint32), "n": np.uint32(N)}


def _scan_ref(a: Args) -> dict[str, np.ndarray]:
    x = np.zeros(1024, np.uint64)
    x[:N] = a["x"]
    waves = x.reshape(-1, 32)
    inclusive = np.cumsum(waves, axis=1) & 0xFFFFFFFF
    exclusive = (inclusive - waves) & 0xFFFFFFFF
    return {"out": exclusive.reshape(-1)[:N].astype(np.uint32)}


def _histogram(rng: np.random.Generator) -> Args:
    return {
        "data": rng.integers(0, 1 << 20, N).astype(np.uint32),
        "bins": np.zeros(37, np.uint32),
        "n": np.uint32(N),
        "nbins": np.uint32(37),
    }


M = 48  # the SGEMM's n (three 16 x 16 tiles)


def _sgemm(rng: np.random.Generator) -> Args:
    return {"a": _f32(rng, M * M), "b": _f32(rng, M * M), "c": np.zeros(M * M, np.float32), "n": np.uint32(M)}


def _sgemm_ref(a: Args) -> dict[str, np.ndarray]:
    A = a["a"].reshape(M, M)  # type: ignore[union-attr]
    B = a["b"].reshape(M, M)  # type: ignore[union-attr]
    acc = np.zeros((M, M), np.float32)
    for k in range(M):  # k ascending, a multiply then an add, each rounded to f32
        acc = acc + A[:, k : k + 1] * B[k : k + 1, :]
    return {"c": acc.reshape(-1)}


W, H = 37, 21


def _stencil(rng: np.random.Generator) -> Args:
    return {"inp": _f32(rng, W * H), "out": np.zeros(W * H, np.float32), "w": np.uint32(W), "h": np.uint32(H)}


def _stencil_ref(a: Args) -> dict[str, np.ndarray]:
    g = a["inp"].reshape(H, W)  # type: ignore[union-attr]
    out = np.zeros((H, W), np.float32)
    s = ((g[:-2, 1:-1] + g[2:, 1:-1]) + g[1:-1, :-2]) + g[1:-1, 2:]
    out[1:-1, 1:-1] = s * np.float32(0.25)
    return {"out": out.reshape(-1)}


R, C = 40, 23


def _transpose(rng: np.random.Generator) -> Args:
    return {"a": _f32(rng, R * C), "out": np.zeros(R * C, np.float32), "rows": np.uint32(R), "cols": np.uint32(C)}


SR, SC = 50, 17


def _softmax(rng: np.random.Generator) -> Args:
    return {"x": _f32(rng, SR * SC), "y": np.zeros(SR * SC, np.float32), "rows": np.uint32(SR), "cols": np.uint32(SC)}


def _softmax_ref(a: Args) -> dict[str, np.ndarray]:
    x = a["x"].reshape(SR, SC)  # type: ignore[union-attr]
    e = np.exp(x - x.max(axis=1, keepdims=True)).astype(np.float32)
    s = np.zeros(SR, np.float32)
    for j in range(SC):  # the kernel's order of additions
        s = s + e[:, j]
    return {"y": (e / s[:, None]).astype(np.float32).reshape(-1)}


CF = 300


def _control(rng: np.random.Generator) -> Args:
    return {"out": np.full(CF + 20, 7, np.int32), "n": np.uint32(CF)}


def _control_ref(a: Args) -> dict[str, np.ndarray]:
    out = np.full(CF + 20, 7, np.int32)
    for i in range(CF):
        acc = 0
        for k in range(64):
            if k % 3 == 0:
                continue
            if acc > i * 5:
                break
            acc += k * (i % 7)
        out[i] = -acc if acc % 2 == 1 else acc
    return {"out": out}


def _mixed(rng: np.random.Generator) -> Args:
    a = rng.integers(-(2**31), 2**31, N, dtype=np.int64).astype(np.int32)
    a[:4] = [-(2**31), 2**31 - 1, -1, 0]
    return {
        "a": a,
        "b": rng.integers(0, 2**32, N, dtype=np.uint64).astype(np.uint32),
        "out_i": np.zeros(N, np.int32),
        "out_u": np.zeros(N, np.uint32),
        "n": np.uint32(N),
    }


def _mixed_ref(x: Args) -> dict[str, np.ndarray]:
    a = x["a"].astype(np.int64)  # type: ignore[union-attr]
    b = x["b"].astype(np.int64)  # type: ignore[union-attr]
    m = 0xFFFFFFFF
    h = ((a & m) * 2654435761 + b) & m
    out_u = ((h >> 7) ^ (h << 3)) & m
    s = (a >> 3) ^ (b & 255)
    s = np.where(a < 0, s - 1000, s)
    out_i = ((s * -3) & m).astype(np.uint32).view(np.int32)
    return {"out_i": out_i, "out_u": out_u.astype(np.uint32)}


def _precision(rng: np.random.Generator) -> Args:
    return {
        "h": rng.uniform(-8, 8, N).astype(np.float16),
        "d": rng.uniform(-1e3, 1e3, N),
        "out_h": np.zeros(N, np.float16),
        "out_d": np.zeros(N, np.float64),
        "n": np.uint32(N),
    }


def _grid(n: int, wg: int = 256) -> tuple[int, ...]:
    return ((n + wg - 1) // wg,)


CASES: tuple[Case, ...] = (
    Case("vector_add", _grid(N), (256,), _vector_add, lambda a: {"out": a["a"] + a["b"]}),  # type: ignore[operator]
    Case("saxpy", _grid(N), (256,), _saxpy, lambda a: {"y": a["alpha"] * a["x"] + a["y"]}),  # type: ignore[operator]
    Case("reduce_sum", (4,), (256,), _reduce, _reduce_ref),
    Case("wave_scan", _grid(N), (256,), _scan, _scan_ref),
    Case(
        "histogram",
        _grid(N),
        (256,),
        _histogram,
        lambda a: {"bins": np.bincount(a["data"] % 37, minlength=37).astype(np.uint32)},  # type: ignore[operator]
    ),
    Case("sgemm_tiled", (M // 16, M // 16), (16, 16), _sgemm, _sgemm_ref),
    Case("stencil2d", (3, 2), (16, 16), _stencil, _stencil_ref),
    Case(
        "transpose",
        (2, 3),
        (16, 16),
        _transpose,
        lambda a: {"out": a["a"].reshape(R, C).T.reshape(-1).copy()},  # type: ignore[union-attr]
    ),
    Case(
        "softmax_rows", (1,), (64,), _softmax, _softmax_ref, ulps={"y": 16}
    ),  # WAVE exp is exp2(x * log2(e)): a few ulps from NumPy
    Case("control_flow", (2,), (256,), _control, _control_ref),
    Case("mixed_ints", _grid(N), (256,), _mixed, _mixed_ref),
    Case(
        "precision",
        _grid(N),
        (256,),
        _precision,
        lambda a: {
            "out_h": (a["h"] * a["h"] + a["h"]).astype(np.float16),  # type: ignore[operator]
            "out_d": a["d"] * a["d"] + 1.0 / 3.0,  # type: ignore[operator]
        },
    ),
)

BY_NAME = {c.name: c for c in CASES}
