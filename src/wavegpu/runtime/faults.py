"""Out-of-bounds and misaligned accesses on the devices that cannot trap (OpenCL and SYCL on
Intel's CPU runtime: a store past the buffer was lost or crashed the process with SIGSEGV).

The C-style renderer checks every load, store and atomic of those dialects (`wv_in`): an access
outside its space's allowed bytes, or not naturally aligned, does not happen (a load gives 0),
and the thread's first such access is recorded in a fault slot of two 64-bit words after the
memory image: the minimum over faulting threads of (linear thread id << 32 | address) and of
(linear thread id << 32 | pc), so the lowest-numbered thread's first fault is what comes back,
whatever order the threads ran in. The kernel takes, before the register presets, the allowed
bytes of device memory (`wv_glo`, `wv_glast`: first and last byte; an empty range is 1, 0) and
of constant memory (`wv_clo`, `wv_clast`), and the slot's index in 64-bit words (`wv_err`).
`launch` turns a recorded fault into the emulator's Trap (same reason, kernel, pc,
instruction, workgroup, thread, address, array and index)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..emulator.bounds import Bounds, BufferRegion
from ..emulator.memory import access_reason
from ..errors import Trap, WaveError
from ..wbin.program import Kernel

SLOT_BYTES = 16
NO_FAULT = 0xFFFFFFFFFFFFFFFF


class DeviceFault(WaveError):
    """A fault recorded by a kernel on OpenCL or SYCL: the kernel's first out-of-bounds or
    misaligned access of its lowest-numbered faulting thread (launch() reports it as a Trap)."""

    def __init__(self, entry: str, thread: int, address: int, pc: int):
        self.entry, self.thread, self.address, self.pc = entry, thread, address, pc
        super().__init__(
            f"kernel {entry!r}: an out-of-bounds or misaligned access at address {address} "
            f"(pc {pc}, thread {thread} in launch order); it did not happen"
        )


def _span(lo: int, hi: int) -> tuple[int, int]:
    """(first, last) byte of [lo, hi) as kernel arguments; an empty range is (1, 0)."""
    return (1, 0) if hi <= lo else (lo, hi - 1)


def arm(memory: np.ndarray, const_size: int, span: tuple[int, int] | None = None) -> tuple[np.ndarray, list[int], int]:
    """(the memory image with the fault slot after it, the kernel's bound arguments, the slot's
    byte offset). `span`: the bytes of device memory the kernel may access (default all)."""
    size = memory.size
    off = -(-size // 8) * 8
    image = np.empty(off + SLOT_BYTES, np.uint8)
    image[:size] = memory
    image[size:off] = 0
    image[off:] = 0xFF
    lo, hi = (0, size) if span is None else span
    return image, [*_span(max(lo, 0), min(hi, size)), *_span(0, const_size), off // 8], off


def check(entry: str, image: np.ndarray, off: int) -> None:
    """A DeviceFault when the kernel recorded one in the slot at off."""
    words = image[off : off + SLOT_BYTES].view(np.uint64)
    if int(words[0]) == NO_FAULT:
        return
    key, pc = int(words[0]), int(words[1])
    raise DeviceFault(entry, key >> 32, key & 0xFFFFFFFF, pc & 0xFFFFFFFF)


def trap_of(
    f: DeviceFault,
    k: Kernel,
    grid: tuple[int, int, int],
    workgroup: tuple[int, int, int],
    limits: dict[str, int],
    buffers: Sequence[BufferRegion] | None,
) -> Trap:
    """The Trap the emulator gives for the access f recorded: the reason in its words (the array
    and element index when the launch says where its arrays live), kernel, pc, instruction,
    workgroup and thread, address. `limits`: each space's size in bytes."""
    from ..dis import format_instruction

    inst = k.instructions[f.pc]
    spec = inst.spec
    assert spec.space is not None
    a, width = f.address, spec.width
    reason, array, index = "", None, None
    if spec.is_global_access and buffers:
        b = Bounds(buffers, limits["global"], k, exact=False)
        if b.first_outside(np.array([a], np.uint32), width, a, None) >= 0:
            named = k.accesses[f.pc] if k.accesses is not None else None
            reason, region, index = b.describe(a, width, named, spec.cls)
            array = region.name if region is not None else None
    if not reason:
        reason = access_reason(spec.space, width, a, limits[spec.space])
    n = workgroup[0] * workgroup[1] * workgroup[2]
    g, t = divmod(f.thread, n)
    group = (g % grid[0], g // grid[0] % grid[1], g // (grid[0] * grid[1]))
    thread = (t % workgroup[0], t // workgroup[0] % workgroup[1], t // (workgroup[0] * workgroup[1]))
    loc = k.loc(f.pc)
    where = f"{loc.file}:{loc.line}:{loc.col}" if loc else None
    return Trap(reason, k.name, f.pc, format_instruction(inst), group, thread, a, where, array, index)
