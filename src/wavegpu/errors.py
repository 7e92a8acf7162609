"""Source spans, diagnostics, and the WaveError hierarchy raised for bad input."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Span:
    """A place in a source text: 1-based line and column, with the line's text for carets."""

    file: str
    line: int
    col: int
    length: int = 1
    text: str = ""
    # a place inside an inlined helper: the calls that brought it into the kernel, innermost first
    # (helper name, call site); set by compiler/inline.py, read where a later stage's diagnostic
    # gets its notes; not part of the place (equality, hashing, repr and line tables ignore it)
    calls: tuple[tuple[str, Span], ...] = field(default=(), compare=False, repr=False)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


@dataclass(frozen=True)
class Diagnostic:
    """One error (or warning) with its place, rendered as `file:line:col: error: message`."""

    message: str
    span: Span | None = None
    severity: str = "error"
    notes: tuple[Diagnostic, ...] = ()  # places that explain it (`note:`), e.g. an inlined call's site

    def render(self) -> str:
        return "\n".join([self._render_one(), *(n.render() for n in self.notes)])

    def _render_one(self) -> str:
        if self.span is None:
            return f"{self.severity}: {self.message}"
        head = f"{self.span}: {self.severity}: {self.message}"
        if not self.span.text:
            return head
        line = self.span.text.rstrip("\n").expandtabs(1)
        caret = " " * (self.span.col - 1) + "^" + "~" * max(0, min(self.span.length, len(line) - self.span.col + 1) - 1)
        return f"{head}\n    {line}\n    {caret}"


class WaveError(Exception):
    """Root of every error wavegpu raises for bad input."""


class DiagnosticError(WaveError):
    """An error carrying one or more source diagnostics (all errors of a file, not only the first)."""

    def __init__(self, diagnostics: list[Diagnostic] | Diagnostic | str):
        if isinstance(diagnostics, str):
            diagnostics = [Diagnostic(diagnostics)]
        elif isinstance(diagnostics, Diagnostic):
            diagnostics = [diagnostics]
        self.diagnostics: list[Diagnostic] = list(diagnostics)
        super().__init__("\n".join(d.render() for d in self.diagnostics))


class AsmError(DiagnosticError):
    """Bad assembly text."""


class EncodingError(WaveError):
    """An instruction that cannot be encoded, or words that do not decode."""

    def __init__(self, message: str, offset: int | None = None):
        self.offset = offset
        self.reason = message
        super().__init__(message if offset is None else f"byte offset {offset}: {message}")


@dataclass
class WbinError(WaveError):
    """A malformed .wbin file; names the byte offset where the problem lies."""

    reason: str
    offset: int | None = None
    path: str | None = field(default=None)

    def __post_init__(self) -> None:
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.path or "<wbin>"
        if self.offset is not None:
            where += f": byte offset {self.offset} (0x{self.offset:x})"
        return f"{where}: error: {self.reason}"


class WaveWarning(UserWarning):
    """Root of the warnings wavegpu gives (the CLI prints each as one `warning:` line)."""


class EngineWarning(WaveWarning):
    """engine="auto" could not use the compiled engine for a kernel it chose it for (its
    translation failed to compile) and ran the launch on the NumPy engine instead."""


class CapabilityError(WaveError):
    """An unknown capability name or device."""


@dataclass
class Trap(WaveError):
    """A run-time trap: names kernel, pc, instruction, workgroup, thread and (if any) address."""

    reason: str
    kernel: str = ""
    pc: int = -1
    instruction: str = ""
    workgroup: tuple[int, int, int] | None = None
    thread: tuple[int, int, int] | None = None
    address: int | None = None
    source: str | None = None  # "file:line:col" from the kernel's line table
    array: str | None = None  # an out-of-bounds access: the array (buffer) it belongs to
    index: int | None = None  # ... and the element index it addresses (negative below the array)

    def __post_init__(self) -> None:
        super().__init__(str(self))

    def __str__(self) -> str:
        parts = [
            f"trap: {self.reason}",
            f"  kernel {self.kernel!r}, pc {self.pc}: {self.instruction}",
        ]
        if self.workgroup is not None:
            parts.append(f"  workgroup {self.workgroup}, thread {self.thread}")
        if self.address is not None:
            parts.append(f"  address 0x{self.address:x} ({self.address})")
        if self.source:
            parts.append(f"  at {self.source}")
        return "\n".join(parts)


class UndefinedBehaviour(Trap):
    """Undefined behaviour found by the emulator's checking mode (check=True)."""


class CompileError(DiagnosticError):
    """A kernel outside the kernel language, or ill-typed; diagnostics carry source spans."""


def usable(setup: Callable[[], object]) -> tuple[bool, str]:
    """(does setup() succeed, the WaveError's message when it does not): a device's availability."""
    try:
        setup()
        return True, ""
    except WaveError as e:
        return False, str(e)


BOM = "\ufeff"  # a UTF-8 byte order mark: editors write it, every reader of source text skips it


def decode_source(
    data: bytes, path: str, what: str = "not UTF-8 text", error: type[DiagnosticError] | None = None
) -> str:
    """Source bytes as text, without a leading byte order mark; the first byte that is not UTF-8
    is an `error` (DiagnosticError unless given) at its line and column."""
    try:
        return data.decode("utf-8").removeprefix(BOM)
    except UnicodeDecodeError as e:
        start = data.rfind(b"\n", 0, e.start) + 1
        end = data.find(b"\n", e.start)
        line = data[start : len(data) if end < 0 else end].decode("utf-8", errors="replace")
        col = len(data[start : e.start].decode("utf-8", errors="replace").removeprefix(BOM)) + 1
        span = Span(path, data.count(b"\n", 0, e.start) + 1, col, 1, line.removeprefix(BOM))
        diag = Diagnostic(f"{what}: byte 0x{data[e.start]:02x} cannot be decoded", span)
        raise (error or DiagnosticError)([diag]) from None
