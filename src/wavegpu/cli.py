"""The `wave` command line: the only place that prints for users or exits.

Exit status: 0 success, 1 bad input (a WaveError), 2 bad usage.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import time
from collections.abc import Callable
from functools import wraps
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from . import isa
from .asm import assemble
from .dis import disassemble
from .errors import Diagnostic, DiagnosticError, Span, WaveError
from .isa.capabilities import (
    CONSTANT_MINIMUMS,
    EMULATOR,
    MMA_CONSTANTS,
    OPTIONAL_CAPABILITIES,
    DeviceCaps,
    occupancy,
)
from .runtime.progress import RunProgress
from .wbin import Program
from .wbin.format import MAGIC

# Piped output is not squeezed to 80 columns (tables stay readable in logs and scripts).
out = Console(highlight=False, width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True, highlight=False, soft_wrap=True)


def _fail(e: WaveError) -> None:
    msg = str(e)
    first = msg.split("\n", 1)[0]
    if "error:" not in first and not first.startswith("trap:"):
        msg = "error: " + msg  # diagnostics and traps say what they are; a plain message gets the word
    err.print(msg, markup=False)
    sys.exit(1)


def user_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn WaveError (and OS errors on user files, and inputs too big for memory or too deeply
    nested for Python) into a message and exit status 1."""

    @wraps(fn)
    def wrapper(*a: Any, **kw: Any) -> Any:
        try:
            return fn(*a, **kw)
        except WaveError as e:
            _fail(e)
        except OSError as e:
            err.print(f"error: {e.filename or ''}: {e.strerror}", markup=False)
            sys.exit(1)
        except MemoryError:
            err.print("error: out of memory (an input or argument is too large)", markup=False)
            sys.exit(1)
        except RecursionError:
            err.print("error: the input nests too deeply to process", markup=False)
            sys.exit(1)

    return wrapper


def decode_text(data: bytes, path: str, what: str = "not UTF-8 text") -> str:
    """Source bytes as text; the first byte that is not UTF-8 is an error at its line and column."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        start = data.rfind(b"\n", 0, e.start) + 1
        end = data.find(b"\n", e.start)
        line = data[start : len(data) if end < 0 else end].decode("utf-8", errors="replace")
        col = len(data[start : e.start].decode("utf-8")) + 1  # the bytes before the first bad one decode
        span = Span(path, data.count(b"\n", 0, e.start) + 1, col, 1, line)
        raise DiagnosticError(Diagnostic(f"{what}: byte 0x{data[e.start]:02x} cannot be decoded", span)) from None


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
    return assemble(text, path, debug_lines=debug_lines)


def source_languages() -> dict[str, str]:
    """Kernel source suffixes the compiler reads (.py, .rs, .cpp, .ts) -> language."""
    from .runtime.kernel import LANGS

    return dict(LANGS)


def load_program(path: str, debug_lines: bool = False) -> Program:
    """A program from a .wbin file, assembly text, or a kernel source file (compiled)."""
    if os.path.splitext(path)[1] not in source_languages():
        return read_program(path, debug_lines)
    from .runtime.kernel import compile as compile_source

    read_text(path)  # bytes that are not UTF-8: a diagnostic with the place, before the compiler reads it
    return compile_source(path)


def check_output(path: str, what: str) -> None:
    """Fail now, before any work, if `path` cannot be written as an output file (`what` names the
    option in messages)."""
    if not path or "\0" in path:
        raise click.UsageError(f"{what}: not a file name")
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


def write_output(path: str, data: bytes | str, inputs: tuple[str, ...]) -> None:
    """Write an output file, refusing to overwrite an input.

    The bytes go to a fresh temporary file beside `path` (a unique name: no other file is
    touched, concurrent writers do not collide), which then replaces `path` in one step.
    """
    for i in inputs:
        if os.path.exists(path) and os.path.exists(i) and os.path.samefile(path, i):
            raise WaveError(f"{path}: refusing to overwrite the input file")
    raw = data.encode("utf-8") if isinstance(data, str) else data
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=d)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
        os.chmod(tmp, _new_file_mode(path))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="wavegpu")
def main() -> None:
    """WAVE: a vendor-neutral GPU ISA. Assemble, inspect, run and translate kernels."""


WBIN_OUTPUT = click.option(
    "-o", "--output", type=click.Path(dir_okay=False), help="output .wbin (default: SOURCE with .wbin)"
)


@main.command("asm")
@click.argument("source", type=click.Path(exists=True, dir_okay=False))
@WBIN_OUTPUT
@click.option("-g", "--debug-lines", is_flag=True, help="record assembly line numbers in the line table")
@user_errors
def asm_cmd(source: str, output: str | None, debug_lines: bool) -> None:
    """Assemble SOURCE (.wave, canonical or flat dialect) to a .wbin file."""
    dest = output or os.path.splitext(source)[0] + ".wbin"
    check_output(dest, f"-o {dest}")
    prog = assemble(read_text(source), source, debug_lines=debug_lines)
    data = prog.to_bytes()
    write_output(dest, data, (source,))
    out.print(f"{dest}: {len(prog.kernels)} kernel(s), {len(data)} bytes")


@main.command("dis")
@click.argument("binary", type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="write the text here instead of stdout")
@user_errors
def dis_cmd(binary: str, output: str | None) -> None:
    """Disassemble a .wbin file (or canonicalise a .wave file, or compile a kernel source file) to
    canonical text."""
    if output:
        check_output(output, f"-o {output}")
    text = disassemble(load_program(binary))
    if output:
        write_output(output, text, (binary,))
    else:
        click.echo(text, nl=False)


def _device_table(caps: DeviceCaps) -> Table:
    t = Table(title=f"device: {caps.name} (wave width {caps.constants['WAVE_WIDTH']})")
    t.add_column("capability")
    t.add_column("value", justify="right")
    t.add_column("spec minimum", justify="right")
    for name, minimum in CONSTANT_MINIMUMS.items():
        t.add_row(name, str(caps.value(name)), str(minimum))
    for name in OPTIONAL_CAPABILITIES:
        t.add_row(name, "yes" if caps.value(name) else "no", "optional")
    for name in MMA_CONSTANTS:
        if name in caps.constants:
            v = caps.constants[name]
            shown = (
                str(v)
                if not name.endswith("TYPES")
                else ", ".join(dt.text for dt in isa.DataType if v & dt.mask) + f" (0x{v:x})"
            )
            t.add_row(name, shown, "")
    return t


@main.command("info")
@click.argument("binary", required=False, type=click.Path(exists=True, dir_okay=False))
@click.option("--device", "show_device", is_flag=True, help="show the emulated device's capabilities")
@click.option("--wave-width", type=click.IntRange(1, 64), default=None, help="wave width of the device table")
@user_errors
def info_cmd(binary: str | None, show_device: bool, wave_width: int | None) -> None:
    """Show kernel metadata of BINARY, or the device capability table with --device."""
    caps = EMULATOR if wave_width is None else EMULATOR.with_wave_width(wave_width)
    if not binary and not show_device:
        raise click.UsageError("give a .wbin/.wave file, or --device")
    if show_device:
        out.print(_device_table(caps))
    if binary:
        prog = load_program(binary)
        data = prog.to_bytes()
        t = Table(title=f"{binary}: {len(prog.kernels)} kernel(s), {len(data)} bytes")
        for col in (
            "kernel",
            "instructions",
            "code bytes",
            "registers",
            "predicates",
            "local bytes",
            "workgroup hint",
            "waves/core",
            "lines",
        ):
            t.add_column(col, justify="left" if col == "kernel" else "right")
        from .encoding import encode

        for k in prog.kernels:
            nbytes = sum(4 * len(encode(i)) for i in k.instructions)
            wg = k.workgroup_size
            wg_threads = wg[0] * wg[1] * wg[2] if wg else caps.constants["WAVE_WIDTH"]
            t.add_row(
                k.name,
                str(len(k.instructions)),
                str(nbytes),
                str(k.registers),
                str(k.predicates),
                str(k.local_memory),
                "x".join(map(str, wg)) if wg else "-",
                str(occupancy(caps, k.registers, k.local_memory, wg_threads)),
                "yes" if k.lines else "no",
            )
        out.print(t)
        for k in prog.kernels:
            if not k.params:
                continue
            pt = Table(title=f"{k.name}: parameters (r0..r{len(k.params) - 1} at thread start)")
            pt.add_column("register")
            pt.add_column("name")
            pt.add_column("kind")
            pt.add_column("type")
            for i, p in enumerate(k.params):
                pt.add_row(f"r{i}", p.name, p.kind, p.dtype.text)
            out.print(pt)


# ----------------------------------------------------------------------------------------------
# running kernels


def _dims(text: str | None, what: str) -> tuple[int, ...] | None:
    if text is None:
        return None
    try:
        vals = tuple(int(x, 0) for x in text.replace("x", ",").split(","))
    except ValueError:
        raise click.BadParameter(f"expected X[,Y[,Z]] integers, got {text!r}", param_hint=what) from None
    if not 1 <= len(vals) <= 3 or min(vals) < 1:
        raise click.BadParameter(f"expected 1 to 3 positive integers, got {text!r}", param_hint=what)
    return vals


def _number(text: str) -> int | float:
    t = text.strip().replace("_", "")
    try:
        return int(t, 0)
    except ValueError:
        return float(t)


NO_PROGRESS = click.option(
    "--no-progress", is_flag=True, help="never show the progress bar (shown on a terminal for runs over a second)"
)


def _stats_table(stats: Any, seconds: float) -> Table:
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


def _which(kernel_name: str | None) -> int | str:
    return 0 if kernel_name is None else (int(kernel_name) if kernel_name.isdigit() else kernel_name)


def _count(text: str, what: str) -> int:
    if not text.isdigit():
        raise click.UsageError(f"{what}: expected a non-negative integer count, got {text!r}")
    return int(text)


def _npy_header(path: str, what: str) -> tuple[int, Any]:
    """(element count, dtype) of a .npy file, read without loading its data."""
    import numpy as np

    try:
        a = np.load(path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError, EOFError) as e:
        raise WaveError(f"{what}: cannot read {path}: {e}") from None
    if not isinstance(a, np.ndarray):
        raise WaveError(f"{what}: {path} is not a .npy array file")
    return int(a.size), a.dtype


def _npy_load(path: str, what: str) -> Any:
    import numpy as np

    try:
        return np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError) as e:
        raise WaveError(f"{what}: cannot read {path}: {e}") from None


@main.command("run", context_settings={"ignore_unknown_options": False})
@click.argument("source", type=click.Path(exists=True, dir_okay=False))
@click.argument("arguments", nargs=-1)
@click.option("--kernel", "-k", "kernel_name", default=None, help="kernel name or index (default: the first)")
@click.option("--grid", "-g", required=True, help="workgroups X[,Y[,Z]]")
@click.option(
    "--workgroup",
    "-w",
    default=None,
    help="threads per workgroup X[,Y[,Z]] (default: the kernel's hint)",
)
@click.option("--wave-width", type=click.IntRange(1, 64), default=32, show_default=True)
@click.option("--check", is_flag=True, help="report undefined behaviour (races, divergent barriers, ...)")
@click.option("--stats", "show_stats", is_flag=True, help="print execution statistics")
@click.option(
    "--out",
    "-o",
    "outs",
    multiple=True,
    metavar="PARAM=FILE.npy",
    help="save a buffer after the run",
)
@click.option("--print", "prints", multiple=True, metavar="PARAM[:COUNT]", help="print (part of) a buffer")
@click.option("--force", is_flag=True, help="let --out overwrite a .npy file this run reads")
@click.option("--max-instructions", type=click.IntRange(1), default=None, help="per-thread instruction budget")
@NO_PROGRESS
@user_errors
def run_cmd(
    source: str,
    arguments: tuple[str, ...],
    kernel_name: str | None,
    grid: str,
    workgroup: str | None,
    wave_width: int,
    check: bool,
    show_stats: bool,
    outs: tuple[str, ...],
    prints: tuple[str, ...],
    force: bool,
    max_instructions: int | None,
    no_progress: bool,
) -> None:
    """Run a kernel on the emulator with named arguments.

    SOURCE is a .wbin, a .wave file, or a kernel source file (.py, ...: compiled first).
    ARGUMENTS are PARAM=VALUE for every parameter of the kernel: a buffer takes FILE.npy,
    zeros:COUNT or iota:COUNT; a scalar takes a number. Every argument, --print and --out is
    checked before the kernel runs. Example:

        wave run vector_add.wave --grid 4 a=a.npy b=iota:1024 c=zeros:1024 n=1024 --out c=c.npy
    """
    import io

    import numpy as np

    from .emulator import DEFAULT_MAX_INSTRUCTIONS, BufferRegion, emulate
    from .runtime.buffers import ALIGN, GUARD, NUMPY_TYPES, pack, type_name

    grid_dims = _dims(grid, "--grid")
    wg_dims = _dims(workgroup, "--workgroup")
    prog = load_program(source, debug_lines=True)
    k = prog.kernel(_which(kernel_name))
    if not k.params:
        raise WaveError(f"kernel {k.name!r} declares no parameters (.param); use wave-emu with register presets")
    params = {p.name: p for p in k.params}
    buffers = [p.name for p in k.params if p.kind == "buffer"]

    # every argument, --print and --out is checked here: nothing is allocated or run yet
    given: dict[str, str] = {}
    for a in arguments:
        name, sep, val = a.partition("=")
        if not sep:
            raise click.UsageError(f"argument {a!r}: expected PARAM=VALUE")
        if name not in params:
            raise click.UsageError(f"kernel {k.name!r} has no parameter {name!r}; parameters: {', '.join(params)}")
        if name in given:
            raise click.UsageError(f"argument {name!r} given twice")
        given[name] = val
    missing = [n for n in params if n not in given]
    if missing:
        raise click.UsageError(f"missing argument(s) for {', '.join(missing)} (PARAM=VALUE each)")
    values: dict[str, object] = {}
    fills: dict[str, tuple[str, int]] = {}  # buffer -> (zeros|iota, count)
    files: dict[str, str] = {}  # buffer -> .npy path
    nbytes: dict[str, int] = {}
    for name, val in given.items():
        p = params[name]
        if p.kind == "scalar":
            try:
                values[name] = _number(val)
            except ValueError:
                raise click.UsageError(f"{name}: expected a number, got {val!r}") from None
            continue
        want = NUMPY_TYPES[p.dtype]
        kind, sep, cnt = val.partition(":")
        if sep and kind in ("zeros", "iota"):
            n = _count(cnt, f"{name}={kind}:COUNT")
            fills[name] = (kind, n)
        else:
            n, dtype = _npy_header(val, name)
            if dtype != want:  # converting could change values silently: the file must hold the type
                raise WaveError(
                    f"{name}={val}: an array of {dtype}, but parameter {name!r} is {type_name(p.dtype)}[] "
                    f"(NumPy {want}); save it with that type, e.g. np.save(path, x.astype(np.{want.name}))"
                )
            files[name] = val
        nbytes[name] = n * want.itemsize
    total = GUARD + sum(-(-(b + GUARD) // ALIGN) * ALIGN for b in nbytes.values())  # pack's layout
    if total > DEVICE_MEMORY_LIMIT:
        big = max(nbytes, key=lambda n: nbytes[n])
        raise WaveError(
            f"the buffers need {total:,} bytes of device memory ({big}: {nbytes[big]:,} bytes); "
            f"device addresses are 32-bit, so at most {DEVICE_MEMORY_LIMIT:,} bytes"
        )
    shows: list[tuple[str, int | None]] = []
    for spec in prints:
        name, sep, cnt = spec.partition(":")
        if name not in buffers:
            raise click.UsageError(
                f"--print {spec}: {name!r} is not a buffer parameter (buffers: {', '.join(buffers)})"
            )
        shows.append((name, _count(cnt, f"--print {spec}") if sep else None))
    saves: list[tuple[str, str]] = []
    for spec in outs:
        name, sep, path = spec.partition("=")
        if not sep or name not in buffers:
            raise click.UsageError(f"--out {spec}: expected BUFFER=FILE.npy (buffers: {', '.join(buffers)})")
        check_output(path, f"--out {spec}")
        if same_file(path, source):
            raise WaveError(f"--out {spec}: refusing to overwrite the kernel {source}")
        for other, earlier in saves:
            if same_file(path, earlier):
                raise click.UsageError(f"--out {spec}: {earlier} is already the output of {other}")
        for reader, inp in files.items():
            if same_file(path, inp) and not force:
                raise WaveError(
                    f"--out {spec}: {path} is the input of {reader}={inp}; "
                    "refusing to overwrite it (pass --force to allow)"
                )
        saves.append((name, path))

    for name, (kind, n) in fills.items():
        dt = NUMPY_TYPES[params[name].dtype]
        values[name] = np.zeros(n, dt) if kind == "zeros" else np.arange(n).astype(dt)
    for name, path in files.items():
        values[name] = _npy_load(path, name)
    layout = pack(k, values)
    n_wg = int(np.prod(grid_dims)) if grid_dims else 1
    t0 = time.perf_counter()
    with RunProgress(n_wg, err, enabled=not no_progress and err.is_terminal) as bar:
        res = emulate(
            k,
            grid=grid_dims,
            workgroup=wg_dims,
            memory=layout.memory,
            args=layout.args,
            wave_width=wave_width,
            check=check,
            max_instructions=max_instructions or DEFAULT_MAX_INSTRUCTIONS,
            progress=bar.callback,
            buffers=[BufferRegion(*r) for r in layout.regions()],  # an access outside every array traps
        )
    dt = time.perf_counter() - t0
    out.print(
        f"ran {k.name!r}: {res.stats.workgroups} workgroup(s) x {res.stats.threads // max(res.stats.workgroups, 1)}"
        f" threads in {dt * 1e3:.1f} ms"
    )
    for name, count in shows:
        arr = layout.read(res.memory, name)
        n = min(arr.size, 16) if count is None else count
        with np.printoptions(threshold=64, edgeitems=8):
            out.print(f"{name}[:{n}] = {arr[:n]}", markup=False)
    for name, path in saves:
        buf = io.BytesIO()
        np.save(buf, layout.read(res.memory, name))
        write_output(path, buf.getvalue(), (source,))
        out.print(f"wrote {path}")
    if show_stats:
        out.print(_stats_table(res.stats, dt))


# ----------------------------------------------------------------------------------------------
# wave-emu: the Rust emulator's command line


_EMU_TYPES = {
    "u8": "<u1",
    "i8": "<i1",
    "s8": "<i1",
    "u16": "<u2",
    "i16": "<i2",
    "s16": "<i2",
    "f16": "<f2",
    "u32": "<u4",
    "i32": "<i4",
    "s32": "<i4",
    "f32": "<f4",
    "u64": "<u8",
    "i64": "<i8",
    "f64": "<f8",
}


def _emu_offset(text: str, what: str) -> int:
    try:
        return int(text, 16) if text.lower().startswith("0x") else int(text)
    except ValueError:
        raise click.UsageError(f"{what}: invalid offset {text!r}") from None


def _emu_type(text: str, what: str) -> Any:
    import numpy as np

    if text not in _EMU_TYPES:
        raise click.UsageError(f"{what}: unknown type {text!r} (one of {', '.join(_EMU_TYPES)})")
    return np.dtype(_EMU_TYPES[text])


def _float_text(v: float) -> str:
    """A float32 printed as Python's repr prints the shortest decimal that reads back."""
    import numpy as np

    f = np.float32(v)
    if np.isnan(f):
        return "nan"
    return repr(float(str(f)))


# the Rust emulator's instruction categories, by our instruction classes
_RUST_CATEGORIES = {
    "Integer ops": ("int", "bit", "cmp", "select"),
    "Float ops": ("f32", "f16", "f64", "cvt"),
    "Memory ops": ("load", "store"),
    "Control ops": ("control", "sync", "move", "misc"),
    "Wave ops": ("wave", "mma"),
    "Atomic ops": ("atomic",),
}
_ACCESS_BYTES = {"8": 1, "16": 2, "32": 4, "64": 8}


def _access_width(name: str) -> int:
    """Bytes one lane moves with a load or store row (ld.global.v4.b32 -> 16)."""
    parts = name.split(".")
    lanes = int(parts[2][1:]) if parts[2].startswith("v") else 1
    return lanes * _ACCESS_BYTES[parts[-1][1:]]


def _lane_accesses(k: Any, stats: Any, cls: str, space: str, nbytes: int) -> tuple[int, bool]:
    """(lane-level `cls` accesses in `space`, exact?). Stats count lanes per class and bytes per
    space: exact when the kernel's `cls` rows touch only this space, or all have one width."""
    rows = [i.spec for i in k.instructions if i.spec.cls == cls]
    here = {_access_width(r.name) for r in rows if r.space == space}
    if not here:
        return 0, True
    if all(r.space == space for r in rows):
        c = stats.by_class.get(cls)
        return (c.lanes if c else 0), True
    if len(here) == 1:
        return nbytes // here.pop(), True
    return nbytes // min(here), False


def rust_stats_lines(k: Any, stats: Any) -> tuple[list[str], bool]:
    """The Rust wave-emu's --stats summary (its lines and labels, which scripts parse: `Loads:`,
    `Stores:` of device memory first) from our statistics, and whether every count is exact.

    Instruction counts are wave-level issues, as there; loads and stores count lanes (one per
    active lane and instruction) and their bytes, atomics excluded."""
    atomic_spaces = {i.spec.space for i in k.instructions if i.spec.cls == "atomic"}
    atomic_bytes = {sp: 4 * stats.atomics if atomic_spaces == {sp} else 0 for sp in ("global", "local")}
    exact = len(atomic_spaces) < 2
    dev_read = max(0, stats.device_bytes_read - atomic_bytes["global"])
    dev_written = max(0, stats.device_bytes_written - atomic_bytes["global"])
    loc_read = max(0, stats.local_bytes_read - atomic_bytes["local"])
    loc_written = max(0, stats.local_bytes_written - atomic_bytes["local"])
    counts = []
    for cls, space, nbytes in (
        ("load", "global", dev_read),
        ("store", "global", dev_written),
        ("load", "local", loc_read),
        ("store", "local", loc_written),
    ):
        n, ok = _lane_accesses(k, stats, cls, space, nbytes)
        counts.append((n, nbytes))
        exact = exact and ok
    waves = {
        name: sum(stats.by_class[c].waves for c in classes if c in stats.by_class)
        for name, classes in _RUST_CATEGORIES.items()
    }
    lines = ["Execution Statistics:", f"  Instructions executed: {stats.wave_instructions}"]
    lines += [f"    {name + ':':<21}{n}" for name, n in waves.items()]
    lines += ["", "  Device memory:"]
    lines += [
        f"    Loads:  {counts[0][0]} ({counts[0][1]} bytes)",
        f"    Stores: {counts[1][0]} ({counts[1][1]} bytes)",
    ]
    lines += ["", "  Local memory:"]
    lines += [
        f"    Loads:  {counts[2][0]} ({counts[2][1]} bytes)",
        f"    Stores: {counts[3][0]} ({counts[3][1]} bytes)",
    ]
    lines += ["", f"  Barriers: {stats.barriers}", f"  Divergent branches: {stats.divergent_branches}", ""]
    lines += [f"  Workgroups executed: {stats.workgroups}", f"  Waves executed: {stats.waves}"]
    return lines, exact


def _emu_region(spec: str, what: str, width: int, size: int) -> tuple[int, int]:
    """(byte offset, count) of a --dump-* OFFSET:COUNT, inside the device memory."""
    off_s, sep, cnt = spec.partition(":")
    if not sep:
        raise click.UsageError(f"{what} expects OFFSET:COUNT, got {spec!r}")
    off, n = _emu_offset(off_s, what), _count(cnt, what)
    if off + n * width > size:
        raise WaveError(f"{what} {spec}: beyond the device memory ({size} bytes)")
    return off, n


@click.command("wave-emu", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("binary", type=click.Path(exists=True, dir_okay=False))
@click.option("--grid", default="1,1,1", show_default=True, help="grid dimensions X,Y,Z")
@click.option("--workgroup", default="32,1,1", show_default=True, help="workgroup dimensions X,Y,Z")
@click.option(
    "--registers",
    type=click.IntRange(1, 256),
    default=32,
    show_default=True,
    help="registers per thread (a kernel's .registers takes precedence)",
)
@click.option(
    "--local-memory",
    type=click.IntRange(0),
    default=16384,
    show_default=True,
    help="local memory bytes (a kernel's .local_memory takes precedence)",
)
@click.option("--device-memory", type=click.IntRange(0, DEVICE_MEMORY_LIMIT), default=1048576, show_default=True)
@click.option("--wave-width", type=click.IntRange(1, 64), default=32, show_default=True)
@click.option("--kernel", "kernel_name", default=None, help="kernel name or index (default: the first)")
@click.option("--set-reg", multiple=True, metavar="REG:VALUE", help="initial register value for all threads")
@click.option("--arg", "args", multiple=True, metavar="OFFSET:FILE", help="load a file into device memory")
@click.option("--fill-zero", multiple=True, metavar="OFFSET:TYPE:COUNT")
@click.option("--fill-iota", multiple=True, metavar="OFFSET:TYPE:COUNT[:SCALE]")
@click.option("--dump-u32", multiple=True, metavar="OFFSET:COUNT", help="print u32 values, one per line")
@click.option("--dump-f32", multiple=True, metavar="OFFSET:COUNT", help="print f32 values, one per line")
@click.option("--dump-f16", multiple=True, metavar="OFFSET:COUNT", help="print f16 values, one per line")
@click.option("--dump-bf16", multiple=True, metavar="OFFSET:COUNT", help="print bfloat16 values, one per line")
@click.option("--dump-memory", default=None, metavar="START:END", help="hex dump of device memory")
@click.option("--stats", "show_stats", is_flag=True, help="print execution statistics (the Rust summary, then ours)")
@click.option("--check", is_flag=True, help="report undefined behaviour")
@click.option(
    "--max-instructions",
    type=click.IntRange(0),
    default=10_000_000,
    show_default=True,
    help="per-thread instruction budget (0 = unlimited)",
)
@NO_PROGRESS
def emu_main(**opts: Any) -> None:
    """Run a .wbin (or .wave, or kernel source) kernel with the Rust WAVE emulator's flags.

    Fills are applied before --arg files; dumps print after the run in this order:
    --dump-memory, --dump-f32, --dump-u32, --dump-f16, --dump-bf16 (one value per line),
    then --stats.
    """
    try:
        _emu(**opts)
    except WaveError as e:
        err.print(f"Error: {e}", markup=False)
        sys.exit(1)
    except OSError as e:
        err.print(f"Error: {e.filename or ''}: {e.strerror}", markup=False)
        sys.exit(1)
    except MemoryError:
        err.print("Error: out of memory (an input or argument is too large)", markup=False)
        sys.exit(1)


def _emu(
    binary: str,
    grid: str,
    workgroup: str,
    registers: int,
    local_memory: int,
    device_memory: int,
    wave_width: int,
    kernel_name: str | None,
    set_reg: tuple[str, ...],
    args: tuple[str, ...],
    fill_zero: tuple[str, ...],
    fill_iota: tuple[str, ...],
    dump_u32: tuple[str, ...],
    dump_f32: tuple[str, ...],
    dump_f16: tuple[str, ...],
    dump_bf16: tuple[str, ...],
    dump_memory: str | None,
    show_stats: bool,
    check: bool,
    max_instructions: int,
    no_progress: bool,
) -> None:
    import dataclasses

    import numpy as np

    from .emulator import emulate
    from .emulator.launch import arg_bits

    grid_dims = _dims(grid, "--grid")
    wg_launch = _dims(workgroup, "--workgroup")
    # every flag is checked before anything is allocated or run
    fills: list[tuple[int, np.dtype, int, int | float | None]] = []  # offset, type, count, iota scale
    for spec in fill_zero:  # fills first, then files
        parts = spec.split(":")
        if len(parts) != 3:
            raise click.UsageError(f"--fill-zero expects OFFSET:TYPE:COUNT, got {spec!r}")
        fills.append(
            (
                _emu_offset(parts[0], "--fill-zero"),
                _emu_type(parts[1], "--fill-zero"),
                _count(parts[2], "--fill-zero"),
                None,
            )
        )
    for spec in fill_iota:
        parts = spec.split(":")
        if not 3 <= len(parts) <= 4:
            raise click.UsageError(f"--fill-iota expects OFFSET:TYPE:COUNT[:SCALE], got {spec!r}")
        try:
            scale = _number(parts[3]) if len(parts) == 4 else 1
        except ValueError:
            raise click.UsageError(f"--fill-iota: invalid scale {parts[3]!r}") from None
        fills.append(
            (
                _emu_offset(parts[0], "--fill-iota"),
                _emu_type(parts[1], "--fill-iota"),
                _count(parts[2], "--fill-iota"),
                scale,
            )
        )
    for off, dt, n, _ in fills:
        if off + n * dt.itemsize > device_memory:
            raise WaveError(
                f"fill: {n * dt.itemsize} bytes at offset {off} exceed the device memory "
                f"({device_memory} bytes; see --device-memory)"
            )
    files: list[tuple[int, str]] = []
    for spec in args:
        off_s, sep, path = spec.partition(":")
        if not sep or not path or "\0" in path:
            raise click.UsageError(f"--arg expects OFFSET:FILE, got {spec!r}")
        files.append((_emu_offset(off_s, "--arg"), path))
    presets: dict[int, int] = {}
    for spec in set_reg:
        reg, sep, val = spec.partition(":")
        if not sep:
            raise click.UsageError(f"--set-reg expects REG:VALUE, got {spec!r}")
        r = reg.lstrip("r")
        if not r.isdigit() or int(r) > 255:
            raise click.UsageError(f"--set-reg: invalid register {reg!r}")
        try:
            presets[int(r)] = arg_bits(_number(val))
        except ValueError:
            raise click.UsageError(f"--set-reg: invalid value {val!r}") from None
    dumps = [
        (_emu_region(spec, what, width, device_memory), kind)
        for what, width, kind, specs in (
            ("--dump-f32", 4, "f32", dump_f32),
            ("--dump-u32", 4, "u32", dump_u32),
            ("--dump-f16", 2, "f16", dump_f16),
            ("--dump-bf16", 2, "bf16", dump_bf16),
        )
        for spec in specs
    ]
    hexdump: tuple[int, int] | None = None
    if dump_memory:
        s, sep, e = dump_memory.partition(":")
        start, end = _emu_offset(s, "--dump-memory"), (_emu_offset(e, "--dump-memory") if sep else -1)
        if end <= start or end > device_memory:
            raise click.UsageError("--dump-memory expects START:END with START < END <= device memory")
        hexdump = (start, end)

    prog = load_program(binary, debug_lines=True)
    k = prog.kernel(_which(kernel_name))
    mem = np.zeros(device_memory, dtype=np.uint8)

    def put(off: int, data: np.ndarray, what: str) -> None:
        raw = data.reshape(-1).view(np.uint8)
        if off + raw.size > mem.size:
            raise WaveError(
                f"{what}: {raw.size} bytes at offset {off} exceed the device memory "
                f"({mem.size} bytes; see --device-memory)"
            )
        mem[off : off + raw.size] = raw

    for off, dt, n, scale in fills:
        if scale is None:
            vals = np.zeros(n, dt)
        elif dt.kind == "f":
            vals = (np.arange(n, dtype=np.float32) * np.float32(scale)).astype(dt)
        else:
            vals = (np.arange(n, dtype=np.int64) * int(scale)).astype(dt)
        put(off, vals, "--fill-iota" if scale is not None else "--fill-zero")
    for off, path in files:
        if os.path.getsize(path) + off > mem.size:
            raise WaveError(
                f"--arg {path}: {os.path.getsize(path)} bytes at offset {off} exceed the device memory "
                f"({mem.size} bytes; see --device-memory)"
            )
        if path.endswith(".npy"):
            data = np.ascontiguousarray(_npy_load(path, f"--arg {path}"))
        else:
            with open(path, "rb") as f:
                data = np.frombuffer(f.read(), dtype=np.uint8)
        put(off, data, f"--arg {path}")
    # a kernel's own .workgroup_size, .registers and .local_memory win over the launch values;
    # registers grow to hold the presets
    regs = max(k.registers, max(presets, default=-1) + 1)
    k = dataclasses.replace(k, registers=regs, local_memory=k.local_memory or local_memory)
    wg_dims = k.workgroup_size or wg_launch
    k = dataclasses.replace(k, workgroup_size=None)
    preset_list = [presets.get(i, 0) for i in range(max(presets, default=-1) + 1)]
    t0 = time.perf_counter()
    with RunProgress(
        int(np.prod(grid_dims)) if grid_dims else 1, err, enabled=not no_progress and err.is_terminal
    ) as bar:
        res = emulate(
            k,
            grid=grid_dims,
            workgroup=wg_dims,
            memory=mem,
            args=preset_list,
            wave_width=wave_width,
            check=check,
            max_instructions=max_instructions or (1 << 62),
            progress=bar.callback,
        )
    dt = time.perf_counter() - t0
    m = res.memory
    if hexdump is not None:
        start, end = hexdump
        click.echo(f"Device memory 0x{start:08x}-0x{end:08x}:")
        data = m[start:end]
        for i in range(0, data.size, 16):
            chunk = data[i : i + 16]
            hexes = " ".join(f"{b:02x}" for b in chunk[:8]) + "  " + " ".join(f"{b:02x}" for b in chunk[8:])
            text = "".join(chr(b) if 32 <= b < 127 else "." for b in chunk)
            click.echo(f"{start + i:08x}: {hexes:<49} |{text}|")
    for (off, n), kind in dumps:
        if kind == "u32":
            for v in m[off : off + 4 * n].view(np.uint32):
                click.echo(str(int(v)))
            continue
        if kind == "f32":
            vals = m[off : off + 4 * n].view(np.float32)
        elif kind == "f16":
            vals = m[off : off + 2 * n].view(np.float16).astype(np.float32)
        else:  # bfloat16: the high half of a float32
            vals = (m[off : off + 2 * n].view(np.uint16).astype(np.uint32) << 16).view(np.float32)
        for v in vals:
            click.echo(_float_text(float(v)))
    if show_stats:
        lines, exact = rust_stats_lines(k, res.stats)
        click.echo("\n".join(lines))
        if not exact:
            err.print(
                "note: the Loads/Stores counts are estimated (this kernel mixes access widths across "
                "memory spaces or atomics across spaces; the byte counts are exact)",
                markup=False,
            )
        click.echo()
        out.print(_stats_table(res.stats, dt))


@main.command("compile")
@click.argument("source", type=click.Path(exists=True, dir_okay=False))
@WBIN_OUTPUT
@click.option("-O", "opt", type=click.IntRange(0, 3), default=2, show_default=True, help="optimisation level")
@click.option("--max-registers", type=click.IntRange(1, 256), default=None, help="force spilling above this")
@click.option(
    "--dump-after",
    "dump_after",
    multiple=True,
    metavar="STAGE",
    help="print the IR after a stage: hir, mir, a pass name, lir, regalloc, or all",
)
@click.option("--passes", default=None, metavar="P1,P2,...", help="run exactly these passes instead of -O's")
@user_errors
def compile_cmd(
    source: str,
    output: str | None,
    opt: int,
    max_registers: int | None,
    dump_after: tuple[str, ...],
    passes: str | None,
) -> None:
    """Compile a Python kernel file to .wbin."""
    from .compiler import STAGES
    from .runtime.kernel import compile as compile_source

    bad = [s for s in dump_after if s not in (*STAGES, "all")]
    if bad:
        raise click.UsageError(f"--dump-after {bad[0]}: stages are {', '.join(STAGES)}, all")
    langs = source_languages()
    if os.path.splitext(source)[1] not in langs:
        raise WaveError(
            f"{source}: wave compile reads kernel source files ({', '.join(langs)}); "
            "assemble .wave files with `wave asm`"
        )
    dest = output or os.path.splitext(source)[0] + ".wbin"
    check_output(dest, f"-o {dest}")
    read_text(source)  # bytes that are not UTF-8: a diagnostic with the place
    dumps: list[tuple[str, str]] = []
    plist = [p for p in passes.split(",") if p] if passes is not None else None
    prog = compile_source(
        source, opt=opt, max_registers=max_registers, dump_after=dump_after, dumps=dumps, passes=plist
    )
    for stage, text in dumps:
        click.echo(f";; ---- after {stage}")
        click.echo(text, nl=False)
    data = prog.to_bytes()
    write_output(dest, data, (source,))
    for k in prog.kernels:
        out.print(
            f"{dest}: kernel {k.name}: {len(k.instructions)} instructions, {k.registers} registers, "
            f"{k.predicates} predicates, {k.local_memory} B local memory"
        )


@main.command("translate")
@click.argument("source", type=click.Path(exists=True, dir_okay=False))
@click.option("--target", "-t", required=True, help="ptx, hip, metal, sycl, opencl or cuda (amdgcn: not yet)")
@click.option("--kernel", "-k", "kernel_name", default=None, help="kernel name or index (default: all)")
@click.option("--wave-width", type=click.IntRange(1, 64), default=32, show_default=True)
@click.option("--arch", default=None, help="PTX target architecture: sm_75 (default), sm_80, sm_86, sm_89 or sm_90")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="write here instead of stdout")
@user_errors
def translate_cmd(
    source: str, target: str, kernel_name: str | None, wave_width: int, arch: str | None, output: str | None
) -> None:
    """Translate a .wbin/.wave (or a Python kernel file) to vendor source."""
    from .backends import translate

    if output:
        check_output(output, f"-o {output}")
    prog = load_program(source)
    which = None if kernel_name is None else (int(kernel_name) if kernel_name.isdigit() else kernel_name)
    text = translate(prog, target, which, wave_width, arch)
    if output:
        write_output(output, text, (source,))
    else:
        click.echo(text, nl=False)


if __name__ == "__main__":  # pragma: no cover
    main()
