"""`emulate`: run a kernel of a Program on the reference emulator."""

from __future__ import annotations

import functools
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..encoding import check_operands
from ..errors import EncodingError, Trap, WaveError
from ..isa.capabilities import EMULATOR, occupancy
from ..isa.structure import check_structure, footprint
from ..isa.vocabulary import Op
from ..wbin.program import Kernel, Program
from .bounds import Bounds, BufferRegion
from .machine import Batch, Launch, Memory, pad16
from .malloc import malloc_tuned
from .stats import Stats

# per thread: stops endless loops the watch in machine.Batch cannot prove endless (~3 s for a few
# waves); 1000 times what the longest test kernel issues
DEFAULT_MAX_INSTRUCTIONS = 1_000_000
# lanes per batch of a kernel without loops: bounds the register file's memory, and keeps each
# instruction's arrays (512 KiB per 32-bit register) small enough that glibc reuses the freed ones
# instead of page-faulting fresh ones: in a fresh process vector add 2^20 runs with 2.2 thousand
# page faults instead of 6.7, in half the CPU time (docs/performance.md, "Start-up against the
# Rust emulator")
BATCH_LANES = 1 << 17
# lanes per batch for kernels with loops: each instruction's arrays (256 KiB per 32-bit register)
# stay in the cache across the iterations (one batch of the whole grid streams them from memory)
LOOP_BATCH_LANES = 1 << 16
MAX_BATCH_BYTES = 256 << 20  # register file of one batch


@dataclass
class EmulationResult:
    """Device memory after the run (NumPy uint8) and the run's statistics."""

    memory: np.ndarray
    stats: Stats
    kernel: str
    engine: str = "numpy"  # which engine ran it: "numpy" (statistics complete) or "compiled"

    def view(self, dtype: np.dtype | type, offset: int = 0, count: int | None = None) -> np.ndarray:
        """A typed copy of part of device memory."""
        dt = np.dtype(dtype)
        end = self.memory.size if count is None else offset + count * dt.itemsize
        return self.memory[offset:end].view(dt).copy()


def dim3(value: object, what: str) -> tuple[int, int, int]:
    """A grid or workgroup size: an int or 1 to 3 positive ints; anything else says what is expected."""
    if type(value) is int and value >= 1:
        return value, 1, 1
    expected = f"{what} must be a positive int or a tuple of 1 to 3 positive ints (x, y, z)"
    items = [value] if isinstance(value, int | np.integer) else value
    if not isinstance(items, list | tuple) or not 1 <= len(items) <= 3:
        raise WaveError(f"{expected}; got {value!r:.80}")
    if not all(isinstance(x, int | np.integer) and not isinstance(x, bool | np.bool_) for x in items):
        raise WaveError(f"{expected}; got {value!r:.80} (not all ints)")
    t = tuple(int(x) for x in items) + (1,) * (3 - len(items))
    if min(t) < 1:
        raise WaveError(f"{expected}; got {value!r:.80}")
    return t[0], t[1], t[2]


def check_threads(grid: tuple[int, int, int], workgroup: tuple[int, int, int], kernel: Kernel | None = None) -> None:
    """More than 2**32 threads in a launch (or along one axis) would wrap the 32-bit global ids;
    more than `kernel.max_global_size` along an axis would make the ids it reads as i32 negative."""
    x, y, z = grid[0] * workgroup[0], grid[1] * workgroup[1], grid[2] * workgroup[2]
    limit = None if kernel is None else kernel.max_global_size
    if x * y * z <= 1 << 32 and max(x, y, z) <= (1 << 32 if limit is None else min(limit, 1 << 32)):
        return  # the common case: every limit below holds
    for axis, (g, w) in enumerate(zip(grid, workgroup)):
        if g * w > 1 << 32:
            raise WaveError(
                f"grid {grid} x workgroup {workgroup}: {g * w} threads along axis {'xyz'[axis]}, "
                "more than 2**32 (global ids are 32 bits and would wrap)"
            )
    total = grid[0] * grid[1] * grid[2] * workgroup[0] * workgroup[1] * workgroup[2]
    if total > 1 << 32:
        raise WaveError(f"grid {grid} x workgroup {workgroup}: {total} threads, more than 2**32 in one launch")
    if kernel is None or kernel.max_global_size is None:
        return
    limit = kernel.max_global_size
    for axis, (g, w) in enumerate(zip(grid, workgroup)):
        if g * w > limit:
            raise WaveError(
                f"kernel {kernel.name!r}: grid {grid} x workgroup {workgroup} launches {g * w} threads along "
                f"axis {'xyz'[axis]}, more than the {limit} its ids are correct for (it reads a global id, "
                f"workgroup id or size as i32, which would turn negative): launch at most {limit} threads "
                f"along an axis, or read the ids as u32 (Python: wg.u32(wg.global_id()))"
            )


def arg_bits(a: object) -> int:
    """A kernel argument as 32 register bits (ints wrap; floats are binary32)."""
    if isinstance(a, bool | np.bool_):
        return int(a)
    if isinstance(a, int | np.integer):
        v = int(a)
        if not -(1 << 31) <= v < (1 << 32):
            raise WaveError(f"argument {v} does not fit in 32 bits")
        return v & 0xFFFFFFFF
    if isinstance(a, float | np.floating):
        if isinstance(a, np.floating) and a.dtype.itemsize == 4:
            return int(np.asarray(a).view(np.uint32))
        return struct.unpack("<I", struct.pack("<f", float(a)))[0]
    raise WaveError(f"argument {a!r}: expected an int or a float")


def new_memory(memory: int | bytes | bytearray | np.ndarray | None, name: str) -> Memory:
    """A private copy of a memory image (a size, bytes or a NumPy array), padded to 16 bytes."""
    if memory is None:
        memory = 0
    if isinstance(memory, int | np.integer):
        size = int(memory)
        if not 0 <= size <= (1 << 32):
            raise WaveError(f"{name} memory size {size} out of range (0 .. 4 GiB)")
        return Memory(np.zeros(pad16(size), dtype=np.uint8), size, name)
    if isinstance(memory, bytes | bytearray | memoryview):
        src = np.frombuffer(memory, dtype=np.uint8)
    elif isinstance(memory, np.ndarray):
        src = np.ascontiguousarray(memory).reshape(-1).view(np.uint8)
    else:
        raise WaveError(f"{name} memory: expected a size, bytes or a NumPy array, not {type(memory).__name__}")
    if src.size > (1 << 32):
        raise WaveError(f"{name} memory of {src.size} bytes exceeds the 32-bit address space")
    buf = np.empty(pad16(src.size), dtype=np.uint8)
    buf[: src.size] = src
    buf[src.size :] = 0
    return Memory(buf, src.size, name)


def donatable(memory: object) -> bool:
    """Whether `emulate(donate=True)` can run in `memory` itself: a writable, C-contiguous,
    16-byte aligned uint8 array whose length is a positive multiple of 16 (the engines' padding)."""
    return (
        isinstance(memory, np.ndarray)
        and memory.dtype == np.uint8
        and memory.ndim == 1
        and memory.flags.c_contiguous
        and memory.flags.writeable
        and memory.size >= 16
        and memory.size % 16 == 0
        and memory.size <= (1 << 32)
        and memory.ctypes.data % 16 == 0
    )


def format_instruction(inst: object) -> str:
    from ..dis import format_instruction as fmt  # messages only: the disassembler loads on demand

    return fmt(inst)  # type: ignore[arg-type]


@functools.lru_cache(maxsize=256)
def _validate(k: Kernel) -> None:
    """What the .wbin reader guarantees, for kernels built in memory: legal operands, balanced
    control flow, and no register beyond the declared counts. Remembered for the kernels that
    pass (a refusal raises, and is not cached): a repeated launch does not check again."""
    for issue in check_structure(k.instructions):
        inst = k.instructions[issue.index]
        raise Trap(issue.message, k.name, issue.index, format_instruction(inst))
    for pc, inst in enumerate(k.instructions):
        try:
            check_operands(inst)
        except EncodingError as e:
            raise Trap(f"illegal instruction: {e.reason}", k.name, pc, inst.spec.name) from None
        g, p = footprint(inst)
        if g > k.registers or p > k.predicates:
            what = f"r{g - 1}" if g > k.registers else f"p{p - 1}"
            raise Trap(
                f"{what} is beyond the kernel's declared {k.registers} registers and {k.predicates} predicates",
                k.name,
                pc,
                format_instruction(inst),
            )
    if k.accesses is not None:
        if len(k.accesses) != len(k.instructions):
            raise WaveError(
                f"kernel {k.name!r}: its access table has {len(k.accesses)} entries for {len(k.instructions)} instructions"
            )
        for pc, (inst, tag) in enumerate(zip(k.instructions, k.accesses)):
            if tag is None:
                continue
            if not inst.spec.is_global_access:
                raise Trap(
                    "the access table names a buffer for an instruction that is no global access",
                    k.name,
                    pc,
                    format_instruction(inst),
                )
            if tag < 0 or (k.params and (tag >= len(k.params) or k.params[tag].kind != "buffer")):
                raise Trap(
                    f"the access table names parameter {tag}, not a buffer", k.name, pc, format_instruction(inst)
                )


def emulate(
    prog: Program | Kernel,
    kernel: int | str = 0,
    grid: int | Sequence[int] = (1, 1, 1),
    workgroup: int | Sequence[int] | None = None,
    memory: int | bytes | bytearray | np.ndarray | None = 0,
    args: Sequence[object] = (),
    wave_width: int = 32,
    check: bool = False,
    constants: bytes | np.ndarray | None = None,
    max_instructions: int = DEFAULT_MAX_INSTRUCTIONS,
    progress: Callable[[int, int], None] | None = None,
    batch_lanes: int | None = None,
    buffers: Sequence[BufferRegion] | None = None,
    boundscheck: bool = False,
    zero_division: bool = False,
    engine: str | None = "numpy",
    donate: bool = False,
    restore: Callable[[np.ndarray], None] | None = None,
    workgroups: tuple[int, int] | None = None,
) -> EmulationResult:
    """Run one kernel on the reference emulator.

    `workgroups=(first, last)` runs only the workgroups with linear ids first..last-1 of the
    grid (x fastest), each with its own ids: one shard of a launch (runtime/cluster.py).

    `memory` is the device memory (a size, bytes or a uint8 image, copied); `args` preset r0, r1,
    ... (buffer addresses or scalars; floats become binary32 bits); `constants` is the
    constant-memory image read by `ld.const`. `workgroup` defaults to the kernel's
    `.workgroup_size` hint, and must equal it when both are given. `progress(done, total)` is
    called after each batch of workgroups.

    `buffers` says where each buffer argument's array lives (BufferRegion: parameter index, name,
    byte offset, size, item size). Given it, a global access that leaves every array traps,
    naming the array and element; with `boundscheck=True` (or `check=True`) and a kernel whose
    access table tags its accesses, each tagged access must stay inside its own array, even
    where it would land in another one. A trap leaves device memory undefined: do not use it.

    `zero_division=True` traps an integer division or remainder by zero, whose result WAVE
    defines (DESIGN section 3): Python kernel calls ask for it under check or boundscheck.

    `engine` picks the engine (docs/emulator.md, "The compiled engine"): "numpy" (the
    reference, full statistics), "compiled" (kernels as machine code; a WaveError where it
    cannot run the launch), "auto" (compiled where it can and it pays), None ($WAVEGPU_ENGINE,
    else "auto"). Both give identical memory; a compiled run's statistics hold only the launch's
    shape (res.engine says which ran).

    `donate=True` hands `memory` to the emulator, which then runs in it instead of a private
    copy (one device image in host memory, not two): the array is overwritten, holds the result
    (`res.memory` is a view of it), and is undefined after a trap. Without it the caller's
    memory is never written. Only a writable, C-contiguous uint8 array of a multiple of 16 bytes
    (16-byte aligned) can be donated; anything else is copied as without `donate`. The compiled
    engine re-runs a launch that stops at a trap or the budget on the NumPy engine from the
    untouched input: given `restore(buf)`, which writes the input into `buf` again, the donated
    buffer is restored in place for that re-run; without it the compiled engine keeps a copy of
    the input while it runs (two images, as without `donate`). The NumPy engine runs in the
    donated buffer directly. Results and trap reports are those of a run without `donate`.
    """
    k = prog if isinstance(prog, Kernel) else prog.kernel(kernel)
    if wave_width < 1 or wave_width > 64 or wave_width & (wave_width - 1):
        raise WaveError(f"wave width must be a power of two from 1 to 64, not {wave_width}")
    g = dim3(grid, "grid")
    if workgroup is None:
        wg = k.workgroup_size or (wave_width, 1, 1)
    else:
        wg = dim3(workgroup, "workgroup")
        if k.workgroup_size is not None and wg != k.workgroup_size:
            raise WaveError(
                f"kernel {k.name!r} requires workgroup size {k.workgroup_size} (.workgroup_size), launched with {wg}"
            )
    check_threads(g, wg, k)
    caps = EMULATOR.with_wave_width(wave_width)
    threads = wg[0] * wg[1] * wg[2]
    if threads > caps.constants["MAX_WORKGROUP_SIZE"]:
        raise WaveError(
            f"workgroup of {threads} threads exceeds MAX_WORKGROUP_SIZE ({caps.constants['MAX_WORKGROUP_SIZE']})"
        )
    if max_instructions < 1:
        raise WaveError("max_instructions must be positive")
    bits = tuple(arg_bits(a) for a in args)
    if len(bits) > k.registers:
        raise WaveError(f"{len(bits)} arguments but kernel {k.name!r} has {k.registers} registers")
    _validate(k)
    owned = donate and donatable(memory)
    dev = Memory(memory, memory.size, "global") if owned else new_memory(memory, "global")  # type: ignore[union-attr]
    const = new_memory(constants, "const")
    if boundscheck and buffers is None:
        raise WaveError("boundscheck=True needs buffers= (where each array lives)")
    bounds = None if buffers is None else Bounds(buffers, dev.size, k, exact=check or boundscheck)
    launch = Launch(g, wg, wave_width, bits, max_instructions, check, bounds, zero_division)
    n_wg = g[0] * g[1] * g[2]
    first, last = (0, n_wg) if workgroups is None else workgroups
    if not 0 <= first <= last <= n_wg:
        raise WaveError(f"workgroups={workgroups!r}: expected 0 <= first <= last <= {n_wg} (the grid's workgroups)")
    stats = Stats(
        wave_width=wave_width,
        workgroups=n_wg,
        threads=n_wg * threads,
        registers=k.registers,
        local_memory=k.local_memory,
    )
    waves_per_wg = -(-threads // wave_width)
    stats.waves = n_wg * waves_per_wg
    stats.occupancy_waves = occupancy(caps, k.registers, k.local_memory, threads)
    lanes_per_wg = waves_per_wg * wave_width
    if batch_lanes is None:
        batch_lanes = LOOP_BATCH_LANES if any(i.spec.op is Op.LOOP for i in k.instructions) else BATCH_LANES
    by_regs = MAX_BATCH_BYTES // (4 * max(k.registers, 1) * lanes_per_wg)
    per_batch = max(1, min(n_wg, batch_lanes // lanes_per_wg, by_regs))
    from .compiled.choice import try_compiled

    # a donated image the compiled engine may leave undefined: kept (a copy) unless `restore` can rewrite it
    keep = owned and restore is None
    span = None if workgroups is None else (first, last)
    ran = try_compiled(engine, k, launch, dev, const, progress, keep_input=keep, span=span)
    if ran:
        return EmulationResult(dev.u8[: dev.size], stats, k.name, "compiled")
    if ran is not None:  # stopped at a trap or the budget: the reference names it
        if not owned:
            del dev  # undefined now: freed before the fresh copy, so the two never coexist (peak memory)
            dev = new_memory(memory, "global")
        elif not keep:  # (a kept copy is already back in the buffer)
            restore(dev.u8)  # type: ignore[misc]
    done = first
    with malloc_tuned():
        while done < last:
            cnt = min(per_batch, last - done)
            Batch(k, launch, done, cnt, dev, const, stats).run()  # freed here: run() breaks its cycles
            stats.batches += 1
            done += cnt
            if progress is not None:
                progress(done - first, last - first)
    return EmulationResult(dev.u8[: dev.size], stats, k.name)
