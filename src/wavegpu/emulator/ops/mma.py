"""The matrix instruction mma.m16n8k8.f32.f16 (one 16x8x8 product per wave of 32 lanes)."""

from __future__ import annotations

import numpy as np

from ...isa import semantics as sem
from ...isa.instruction import Instruction, Vec
from ..state import State, Step

U32 = np.uint32
_LANE = np.arange(32)
_GROUP, _TIG = _LANE >> 2, _LANE & 3


def _halves(v: np.ndarray) -> np.ndarray:
    """[waves, 32] registers of two f16 halves -> [waves, 32, 2] float64."""
    lo = (v & U32(0xFFFF)).astype(np.uint16).view(np.float16).astype(np.float64)
    hi = (v >> U32(16)).astype(np.uint16).view(np.float16).astype(np.float64)
    return np.stack([lo, hi], axis=-1)


def mma_m16n8k8(a: list[np.ndarray], b: np.ndarray, c: list[np.ndarray]) -> list[np.ndarray]:
    """D = A B + C per wave from the fragments: a = 2 registers, b = 1, c = 4, each [waves, 32]
    uint32; returns the 4 registers of D ([waves, 32] uint32 bits of f32). C, then the eight
    exact f16 products in k order, summed in float64 and rounded once (canonical NaN)."""
    nw = b.shape[0]
    group, tig = _GROUP, _TIG
    A = np.zeros((nw, 16, 8))
    B = np.zeros((nw, 8, 8))
    C = np.zeros((nw, 16, 8))
    a0, a1, b0 = _halves(a[0]), _halves(a[1]), _halves(b)
    for i in range(2):
        A[:, group, tig * 2 + i] = a0[:, :, i]
        A[:, group + 8, tig * 2 + i] = a1[:, :, i]
        B[:, tig * 2 + i, group] = b0[:, :, i]
    for i in range(4):
        C[:, group + (8 if i >= 2 else 0), tig * 2 + (i & 1)] = c[i].view(np.float32)
    acc = C
    for kk in range(8):
        acc = acc + A[:, :, kk, None] * B[:, None, kk, :]
    D = sem.canon32(acc.astype(np.float32))
    return [np.ascontiguousarray(D[:, group + (8 if i >= 2 else 0), tig * 2 + (i & 1)]) for i in range(4)]


def compile_mma(st: State, inst: Instruction, pc: int) -> Step:
    d, a, b, c = inst.operands
    assert isinstance(d, Vec) and isinstance(a, Vec) and isinstance(b, Vec) and isinstance(c, Vec)
    guard = st.guard_reader(inst)
    chk = st.checker

    def frag(r: int) -> np.ndarray:
        return st.lanes(st.regs[r]).reshape(-1, 32)

    def run() -> None:
        if st.W != 32:
            raise st.trap(pc, f"mma.m16n8k8 needs a wave width of 32 (this launch: {st.W})", 0)
        m = st.exec_mask(guard)
        act = (st.active if m is None else m).reshape(-1, 32)
        partial = act.any(axis=1) & ~act.all(axis=1)
        if partial.any():
            wave = int(np.flatnonzero(partial)[0])
            raise st.trap(pc, "mma needs every lane of the wave active", wave * 32 + int(np.flatnonzero(~act[wave])[0]))
        if chk:
            chk.reads(pc, [a, b, c], m)  # type: ignore[attr-defined]
        out = mma_m16n8k8([frag(a.n), frag(a.n + 1)], frag(b.n), [frag(c.n + i) for i in range(4)])
        for i in range(4):
            st.set_reg(d.n + i, out[i].reshape(-1).view(U32), m)
        if chk:
            chk.mark(d.n, 4, m)  # type: ignore[attr-defined]
        st.count(pc, m)

    return run
