"""What the `wave` and `wave-emu` commands share: consoles, error reporting, reading sources and
programs, writing outputs, launch-shape and number parsing, the statistics table."""

from __future__ import annotations

import atexit
import contextlib
import gc
import os
import sys
import warnings
from collections.abc import Callable
from functools import wraps
from typing import TYPE_CHECKING, Any

from ..errors import DiagnosticError, WaveError, WaveWarning, decode_source
from ..wbin import Program
from ..wbin.format import MAGIC

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table


class _LazyConsole:
    """A rich Console made on first use (importing rich costs start-up time that a command
    printing with click.echo does not need)."""

    def __init__(self, **options: Any):
        self._options = options
        self._console: Console | None = None

    def get(self) -> Console:
        if self._console is None:
            from rich.console import Console

            options = dict(self._options)
            if options.pop("_width_from_stdout", False):
                options["width"] = None if sys.stdout.isatty() else 160
            self._console = Console(**options)
        return self._console

    def __getattr__(self, name: str) -> Any:
        return getattr(self.get(), name)

    def __enter__(self) -> Console:  # `with console:` (rich's Live uses it) looks these up on the type
        return self.get().__enter__()

    def __exit__(self, *exc: Any) -> None:
        self.get().__exit__(*exc)


def stderr_may_be_terminal() -> bool:
    """Whether rich could treat stderr as a terminal (a tty, or a variable that makes it one):
    asked before `err.is_terminal`, so that rich is imported only where a progress bar can show."""
    return sys.stderr.isatty() or any(v in os.environ for v in ("TTY_COMPATIBLE", "FORCE_COLOR"))


# Piped output is not squeezed to 80 columns (tables stay readable in logs and scripts).
out: Console = _LazyConsole(highlight=False, _width_from_stdout=True)  # type: ignore[assignment]
err: Console = _LazyConsole(stderr=True, highlight=False, soft_wrap=True)  # type: ignore[assignment]


def report_errors(call: Callable[[], Any], rust: bool = False) -> Any:
    """call(), with WaveError (and OS errors on user files, and inputs too big for memory or too
    deeply nested for Python) turned into a message and exit status 1; `rust`: the Rust
    emulator's `Error: ...` form, which its scripts read. wavegpu's own warnings (WaveWarning)
    are printed as one `warning: ...` line each on stderr, without Python's source line."""
    shown = warnings.showwarning

    def show(message: Warning | str, category: type[Warning], *rest: Any, **kw: Any) -> None:
        if issubclass(category, WaveWarning):
            err.print(f"warning: {message}", markup=False)
        else:
            shown(message, category, *rest, **kw)

    warnings.showwarning = show
    try:
        return call()
    except WaveError as e:
        msg = str(e)
    except OSError as e:
        msg = f"{e.filename or ''}: {e.strerror}"
    except MemoryError:
        msg = "out of memory (an input or argument is too large)"
    except RecursionError:
        msg = "the input nests too deeply to process"
    finally:
        warnings.showwarning = shown
    first = msg.split("\n", 1)[0]
    if rust:
        msg = "Error: " + msg
    elif "error:" not in first and not first.startswith("trap:"):
        msg = "error: " + msg  # diagnostics and traps say what they are; a plain message gets the word
    err.print(msg, markup=False)
    sys.exit(1)


_STARTUP: list[bool] = []  # per running command (innermost last): did it pause the collector?
_EXIT_FREEZE: list[bool] = []  # the atexit freeze is registered (once)


def startup_gc(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A command whose start-up runs without passes of Python's cyclic garbage collector.

    Importing NumPy and wavegpu and loading the kernel allocate objects that live until the
    process exits; the collector would traverse them some fifty times on the way (12-20 ms of a
    0.2 s `wave-emu` run on the 2-core VM) and once more at exit (about 30 ms). So: collection is
    paused from the command's start until it calls `startup_done()` (imports and inputs
    loaded), which freezes what exists (`gc.freeze`: never traversed again) and resumes
    collection for the run. When the command returns, the frozen objects go back to the
    collector (`gc.unfreeze`), so a process that runs commands in-process (tests) collects as
    before; at exit (atexit) everything is frozen again, so interpreter shutdown does not
    traverse it. Nothing is frozen where something else already froze objects."""

    @wraps(fn)
    def wrapper(*a: Any, **kw: Any) -> Any:
        if not _EXIT_FREEZE:
            atexit.register(gc.freeze)
            _EXIT_FREEZE.append(True)
        paused = gc.isenabled() and gc.get_freeze_count() == 0
        if paused:
            gc.disable()
        _STARTUP.append(paused)
        try:
            return fn(*a, **kw)
        finally:
            _STARTUP.pop()
            if paused:
                gc.unfreeze()
                gc.enable()

    return wrapper


def startup_done() -> None:
    """The running command has loaded what it needs (see startup_gc): freeze and collect again."""
    if _STARTUP and _STARTUP[-1] and not gc.isenabled():
        gc.freeze()
        gc.enable()


def usage_error(message: str) -> Exception:
    """click.UsageError(message) (exit status 2), with click loaded only on this path."""
    import click

    return click.UsageError(message)


def bad_parameter(message: str, what: str) -> Exception:
    """click.BadParameter for the option `what` (exit status 2), click loaded on this path only."""
    import click

    return click.BadParameter(message, param_hint=what)


def user_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A command whose errors report_errors turns into messages."""

    @wraps(fn)
    def wrapper(*a: Any, **kw: Any) -> Any:
        return report_errors(lambda: fn(*a, **kw))

    return wrapper


def decode_text(data: bytes, path: str, what: str = "not UTF-8 text") -> str:
    """Source bytes as text (a leading byte order mark skipped); the first byte that is not UTF-8
    is an error at its line and column (errors.decode_source)."""
    return decode_source(data, path, what, DiagnosticError)


def read_text(path: str) -> str:
    """A source file's text (UTF-8)."""
    with open(path, "rb") as f:
        return decode_text(f.read(), path)


def read_program(path: str, debug_lines: bool = False) -> Program:
    """A program from a .wbin file or assembly text (chosen by content, not by name)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] == MAGIC or path.endswith(".wbin"):
        return Program.from_bytes(data, path)
    text = decode_text(data, path, "not a .wbin file and not UTF-8 text")
    from ..asm import assemble

    return assemble(text, path, debug_lines=debug_lines)


def source_languages() -> dict[str, str]:
    """Kernel source suffixes the compiler reads (.py, .rs, .cpp, .ts) -> language."""
    from ..runtime.compile import LANGS

    return dict(LANGS)


def load_program(path: str, debug_lines: bool = False) -> Program:
    """A program from a .wbin file, assembly text, or a kernel source file (compiled)."""
    suffix = os.path.splitext(path)[1]
    if suffix in (".wbin", ".wave") or suffix not in source_languages():  # no compiler import for these
        return read_program(path, debug_lines)
    from ..runtime.compile import compile as compile_source

    read_text(path)  # bytes that are not UTF-8: a diagnostic with the place, before the compiler reads it
    return compile_source(path)


def check_output(path: str, what: str) -> None:
    """Fail now, before any work, if `path` cannot be written as an output file (`what` names the
    option in messages)."""
    if not path or "\0" in path:
        raise usage_error(f"{what}: not a file name")
    if os.path.isdir(path):
        raise WaveError(f"{what}: {path} is a directory")
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        raise WaveError(f"{what}: the directory {d} does not exist")
    if not os.access(d, os.W_OK | os.X_OK):
        raise WaveError(f"{what}: the directory {d} is not writable")


def same_file(a: str, b: str) -> bool:
    """Whether two paths name one file (an existing file by identity, else by absolute path)."""
    if os.path.exists(a) and os.path.exists(b):
        return os.path.samefile(a, b)
    return os.path.abspath(a) == os.path.abspath(b)


def _new_file_mode(path: str) -> int:
    """The permissions a plain open() would give path: its current mode, or 0666 less the umask."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


def write_output(path: str, data: bytes | memoryview | str | Callable[[Any], None], inputs: tuple[str, ...]) -> None:
    """Write an output file, refusing to overwrite an input. `data` is the bytes, or a function
    that writes them to the file object it is given (no copy of them in memory).

    The bytes go to a fresh temporary file beside `path` (a unique name: no other file is
    touched, concurrent writers do not collide), which then replaces `path` in one step.
    """
    for i in inputs:
        if os.path.exists(path) and os.path.exists(i) and os.path.samefile(path, i):
            raise WaveError(f"{path}: refusing to overwrite the input file")
    raw = data.encode("utf-8") if isinstance(data, str) else data
    d = os.path.dirname(os.path.abspath(path))
    import tempfile

    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=d)
    try:
        with os.fdopen(fd, "wb") as f:
            if callable(raw):
                raw(f)
            else:
                f.write(raw)
        os.chmod(tmp, _new_file_mode(path))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


# ----------------------------------------------------------------------------------------------
# running kernels


def parse_dims(text: str | None, what: str) -> tuple[int, ...] | None:
    if text is None:
        return None
    try:
        vals = tuple(int(x, 0) for x in text.replace("x", ",").split(","))
    except ValueError:
        raise bad_parameter(f"expected X[,Y[,Z]] integers, got {text!r}", what) from None
    if not 1 <= len(vals) <= 3 or min(vals) < 1:
        raise bad_parameter(f"expected 1 to 3 positive integers, got {text!r}", what)
    return vals


def parse_number(text: str) -> int | float:
    t = text.strip().replace("_", "")
    try:
        return int(t, 0)
    except ValueError:
        return float(t)


NO_PROGRESS_HELP = "never show the progress bar (shown on a terminal for runs over a second)"


def stats_table(stats: Any, seconds: float) -> Table:
    from rich.table import Table

    t = Table(title=f"statistics ({seconds * 1e3:.1f} ms wall)")
    t.add_column("class")
    t.add_column("wave instructions", justify="right")
    t.add_column("lane instructions", justify="right")
    for cls, c in sorted(stats.by_class.items()):
        t.add_row(cls, f"{c.waves:,}", f"{c.lanes:,}")
    t.add_row("[bold]total[/]", f"{stats.wave_instructions:,}", f"{stats.lane_instructions:,}")
    rows = [
        (
            "grid",
            f"{stats.workgroups:,} workgroups, {stats.threads:,} threads, {stats.waves:,} waves "
            f"(W = {stats.wave_width})",
        ),
        ("SIMD efficiency", f"{stats.simd_efficiency:.1%}"),
        (
            "device memory",
            f"{stats.device_bytes_read:,} B read, {stats.device_bytes_written:,} B written",
        ),
        (
            "local memory",
            f"{stats.local_bytes_read:,} B read, {stats.local_bytes_written:,} B written",
        ),
        ("constant memory", f"{stats.constant_bytes_read:,} B read"),
        ("atomics", f"{stats.atomics:,} lane operations"),
        ("barriers", f"{stats.barriers:,} (workgroup level)"),
        ("branches", f"{stats.branches:,} wave-level ifs, {stats.divergent_branches:,} divergent"),
        (
            "occupancy",
            f"{stats.occupancy_waves} resident waves per core ({stats.registers} registers, "
            f"{stats.local_memory} B local memory)",
        ),
        (
            "throughput",
            f"{stats.lane_instructions / seconds / 1e6:,.1f} M lane-instructions/s" if seconds else "-",
        ),
    ]
    t2 = Table.grid(padding=(0, 2))
    t2.add_column(style="bold")
    t2.add_column()
    for k, v in rows:
        t2.add_row(k, v)
    outer = Table.grid()
    outer.add_row(t)
    outer.add_row(t2)
    return outer


DEVICE_MEMORY_LIMIT = 1 << 32  # bytes a 32-bit device address reaches


def kernel_selector(kernel_name: str | None) -> int | str:
    return 0 if kernel_name is None else (int(kernel_name) if kernel_name.isdigit() else kernel_name)


def parse_count(text: str, what: str) -> int:
    if not text.isdigit():
        raise usage_error(f"{what}: expected a non-negative integer count, got {text!r}")
    return int(text)


def npy_header(path: str, what: str) -> tuple[int, Any]:
    """(element count, dtype) of a .npy file, read without loading its data."""
    import numpy as np

    try:
        a = np.load(path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError, EOFError) as e:
        raise WaveError(f"{what}: cannot read {path}: {e}") from None
    if not isinstance(a, np.ndarray):
        raise WaveError(f"{what}: {path} is not a .npy array file")
    return int(a.size), a.dtype


def load_npy(path: str, what: str, mmap: bool = False) -> Any:
    """The array in a .npy file; mmap: mapped copy-on-write (read as it is copied, never held twice)."""
    import numpy as np

    try:
        return np.load(path, allow_pickle=False, mmap_mode="c" if mmap else None)
    except (OSError, ValueError, EOFError) as e:
        raise WaveError(f"{what}: cannot read {path}: {e}") from None
