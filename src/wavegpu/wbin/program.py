"""The program model: kernels with instructions and metadata, as a .wbin file holds them."""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from ..isa import ISA_VERSION
from ..isa.instruction import Instruction
from ..isa.types import DataType


@dataclass(frozen=True)
class Param:
    """A kernel parameter: at launch its 32-bit value (a buffer's address, or a scalar) is in r(i)."""

    name: str
    kind: str  # "buffer" or "scalar"
    dtype: DataType
    # A buffer the kernel may store to or use atomically (a runtime copies back only these).
    # True when unknown (assembled without the `readonly` mark, or a file of format 1.0).
    writable: bool = True


@dataclass(frozen=True)
class SourceLoc:
    file: str
    line: int
    col: int = 0


@dataclass(frozen=True)
class Kernel:
    name: str
    instructions: tuple[Instruction, ...]
    registers: int
    predicates: int
    local_memory: int = 0
    workgroup_size: tuple[int, int, int] | None = None
    params: tuple[Param, ...] = ()
    isa_version: tuple[int, int] = ISA_VERSION
    lines: tuple[SourceLoc | None, ...] | None = None  # one per instruction, or no line table
    # One per instruction: for a global-memory access, the index of the buffer parameter whose
    # array it addresses (known to the compiler), else None; None as a whole: no access table.
    accesses: tuple[int | None, ...] | None = None
    # The most threads along any one axis (grid x workgroup) the kernel's id arithmetic is correct
    # for: 2**31 - 1 where it reads a global id, workgroup id or size as i32 (the Python and
    # TypeScript frontends); None: only the ISA's own limit (emulator.launch.check_threads).
    max_global_size: int | None = None

    def __hash__(self) -> int:
        """The fields' hash, computed once (a kernel of a few thousand instructions took
        milliseconds to hash, and every launch looks its translations up by kernel)."""
        h = self.__dict__.get("_hash")
        if h is None:
            h = hash(tuple(getattr(self, f.name) for f in fields(self)))
            object.__setattr__(self, "_hash", h)
        return h

    def __getstate__(self) -> dict[str, object]:
        """Pickled without the cached hash: a string's hash differs from process to process."""
        state = dict(self.__dict__)
        state.pop("_hash", None)
        return state

    def loc(self, index: int) -> SourceLoc | None:
        if self.lines is None or not 0 <= index < len(self.lines):
            return None
        return self.lines[index]


@dataclass(frozen=True)
class Program:
    kernels: tuple[Kernel, ...] = field(default_factory=tuple)

    def kernel(self, which: int | str = 0) -> Kernel:
        """A kernel by index or name."""
        from ..errors import WaveError

        if isinstance(which, str):
            for k in self.kernels:
                if k.name == which:
                    return k
            raise WaveError(f"no kernel named {which!r}; kernels: {', '.join(k.name for k in self.kernels)}")
        if not -len(self.kernels) <= which < len(self.kernels) or not self.kernels:
            raise WaveError(f"kernel index {which} out of range ({len(self.kernels)} kernel(s))")
        return self.kernels[which]

    def to_bytes(self) -> bytes:
        from .format import write

        return write(self)

    @classmethod
    def from_bytes(cls, data: bytes, path: str | None = None) -> Program:
        from .format import read

        return read(data, path)

    def save(self, path: str) -> None:
        with open(path, "wb") as f:
            f.write(self.to_bytes())
