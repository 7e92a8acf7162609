"""Memory of the emulated machine: device, local and constant buffers, addresses and their checks.

Addresses are checked on the values the access computes anyway: an address uniform over the
executing lanes is checked once; per-lane addresses cost one OR-reduction (which bounds the
maximum from above and gives the alignment) and a maximum only when the OR does not already
prove every access in range. Gathers and scatters index with 64-bit integers (NumPy's fast path).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..isa.instruction import Mem

if TYPE_CHECKING:
    from .state import State

U32 = np.uint32
I64 = np.int64


class Memory:
    """Byte-addressed memory with 16- and 32-bit views (buffer padded to 16 bytes)."""

    def __init__(self, data: np.ndarray, size: int, name: str):
        self.size = size
        self.name = name
        self.u8 = data
        self.u16 = data.view(np.uint16)
        self.u32 = data.view(U32)

    def view(self, width: int) -> np.ndarray:
        """The view whose elements are `width` bytes (1, 2 or 4)."""
        return self.u8 if width == 1 else self.u16 if width == 2 else self.u32


def pad16(n: int) -> int:
    return max(16, (n + 15) & ~15)


_SHIFT = {1: 0, 2: 1, 4: 2, 8: 2, 16: 2}


def element_index(addr: np.ndarray, width: int) -> np.ndarray:
    """Byte addresses (uint32 or int64, checked) as 64-bit indices into the view of `width`
    (vectors and pairs index 32-bit words), in one pass."""
    sh = _SHIFT[width]
    if sh == 0:
        return addr.astype(I64, copy=False)
    return np.right_shift(addr, sh, dtype=I64)


def space_of(st: State, name: str) -> Memory:
    return {"global": st.device, "local": st.local, "const": st.constant}[name]


def addresses(
    st: State, pc: int, mem: Mem, m: np.ndarray | None, width: int, space: str
) -> tuple[np.ndarray | None, np.ndarray]:
    """(the executing lanes as indices, or None for every lane; their checked byte addresses).

    The addresses are one per executing lane (uint32 for device and constant memory, int64 for
    local memory, where each workgroup's base is added), or a 0-d uint32 when the address is
    the same for every lane (device and constant memory only)."""
    idx = m if m is None else np.flatnonzero(m)
    if idx is None and st.padded:
        idx = st.real_idx
    n = st.N if idx is None else idx.size
    if mem.base is None:
        addr = np.asarray(mem.offset & 0xFFFFFFFF, dtype=U32)
    else:
        r = st.regs[mem.base]
        addr = r if r.ndim == 0 or idx is None else r[idx]
        if mem.offset:
            addr = addr + U32(mem.offset & 0xFFFFFFFF)
    if n == 0:
        return idx, np.zeros(0, dtype=U32)
    if addr.ndim == 0:
        _check(st, pc, idx, addr.reshape(1), width, space, uniform=True)
        if space == "local":
            addr = np.broadcast_to(addr, (n,))
        else:
            return idx, addr
    else:
        _check(st, pc, idx, addr, width, space, uniform=False)
    if space == "local":
        base = st.local_base if idx is None else st.local_base[idx]
        addr = addr.astype(I64) + base
    return idx, addr


def _check(st: State, pc: int, idx: np.ndarray | None, addr: np.ndarray, width: int, space: str, uniform: bool) -> None:
    """Trap the first lane whose access leaves its memory (or its array) or is misaligned."""
    limit = space_of(st, space).size
    ored = int(np.bitwise_or.reduce(addr))
    bounds = st.bounds if space == "global" else None
    if bounds is None and ored + width <= limit and not (ored & (width - 1) and width > 1):
        return  # the OR bounds the maximum: every access is in range and aligned
    hi = int(addr.max())
    if bounds is not None:
        pos = bounds.first_outside(addr, width, hi, st.tags[pc])
        if pos >= 0:
            a = int(addr[pos])
            named = st.k.accesses[pc] if st.k.accesses is not None else None
            why, region, index = bounds.describe(a, width, named, st.cls[pc])
            lane = _lane(st, idx, pos, uniform)
            raise st.trap(pc, why, lane, a, array=region.name if region else None, index=index)
    misaligned = width > 1 and ored & (width - 1)
    if hi + width > limit or misaligned:
        a64 = addr.astype(I64)
        bad = (a64 + width > limit) | ((a64 & (width - 1)) != 0)
        first = int(np.flatnonzero(bad)[0])
        lane = _lane(st, idx, first, uniform)
        a = int(a64[first])
        raise st.trap(pc, access_reason(space, width, a, limit), lane, a)


def access_reason(space: str, width: int, a: int, limit: int) -> str:
    """Why an access of `width` bytes at a, in a space of `limit` bytes, traps (out of bounds,
    else misaligned); also the devices' reports (runtime/faults.py)."""
    if a + width > limit:
        return f"out-of-bounds {space} access of {width} byte(s) at address {a} ({space} memory has {limit} bytes)"
    return f"misaligned {space} access: address {a} is not a multiple of {width}"


def _lane(st: State, idx: np.ndarray | None, pos: int, uniform: bool) -> int:
    """The lane of the pos-th executing lane (the first executing one for a uniform address)."""
    if uniform:
        pos = 0
    return int(idx[pos]) if idx is not None else pos


def load_words(buf: Memory, addr: np.ndarray, width: int, signed: bool, ncomp: int) -> list[np.ndarray]:
    """The values a load of `width` bytes (ncomp 32-bit components for vectors and pairs) reads
    at the checked byte addresses, zero- or sign-extended to uint32."""
    w = element_index(addr, width)
    if width == 1:
        v = buf.u8[w]
        return [v.view(np.int8).astype(np.int32).view(U32) if signed else v.astype(U32)]
    if width == 2:
        v = buf.u16[w]
        return [v.view(np.int16).astype(np.int32).view(U32) if signed else v.astype(U32)]
    if ncomp == 1:
        return [buf.u32[w]]
    return [buf.u32[w + i] for i in range(ncomp)]


def store_words(buf: Memory, addr: np.ndarray, width: int, values: list[np.ndarray]) -> None:
    """Store `values` (one array, or a scalar, per 32-bit component) at the checked byte
    addresses; lanes writing one address apply in ascending lane order (the last one stays)."""
    if addr.ndim == 0:  # one address: the last executing lane's value stays
        values = [v[-1] if v.ndim else v for v in values]
    w = element_index(addr, width)
    view = buf.view(width)
    dt = view.dtype
    for i, v in enumerate(values):
        view[w + i if i else w] = v if v.dtype == dt else v.astype(dt)
