"""The `wave` command line: the only place that prints for users or exits.

Exit status: 0 success, 1 bad input (a WaveError), 2 bad usage.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from functools import wraps
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from . import isa
from .asm import assemble
from .dis import disassemble
from .errors import WaveError
from .isa.capabilities import (
    CONSTANT_MINIMUMS,
    EMULATOR,
    MMA_CONSTANTS,
    OPTIONAL_CAPABILITIES,
    DeviceCaps,
    occupancy,
)
from .wbin import Program
from .wbin.format import MAGIC

# Piped output is not squeezed to 80 columns (tables stay readable in logs and scripts).
out = Console(highlight=False, width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True, highlight=False, soft_wrap=True)


def _fail(e: WaveError) -> None:
    err.print(str(e), markup=False)
    sys.exit(1)


def user_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn WaveError (and OS errors on user files) into a message and exit status 1."""

    @wraps(fn)
    def wrapper(*a: Any, **kw: Any) -> Any:
        try:
            return fn(*a, **kw)
        except WaveError as e:
            _fail(e)
        except OSError as e:
            err.print(f"error: {e.filename or ''}: {e.strerror}", markup=False)
            sys.exit(1)

    return wrapper


def read_program(path: str, debug_lines: bool = False) -> Program:
    """A program from a .wbin file or assembly text (chosen by content, not by name)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] == MAGIC or path.endswith(".wbin"):
        return Program.from_bytes(data, path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise WaveError(f"{path}: not a .wbin file and not UTF-8 text (byte {e.start})") from None
    return assemble(text, path, debug_lines=debug_lines)


def write_output(path: str, data: bytes | str, inputs: tuple[str, ...]) -> None:
    """Write an output file, refusing to overwrite an input."""
    for i in inputs:
        if os.path.exists(path) and os.path.exists(i) and os.path.samefile(path, i):
            raise WaveError(f"{path}: refusing to overwrite the input file")
    mode = "wb" if isinstance(data, bytes) else "w"
    tmp = path + ".tmp"
    with open(tmp, mode) as f:
        f.write(data)
    os.replace(tmp, path)


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
    with open(source, encoding="utf-8", errors="strict") as f:
        text = f.read()
    prog = assemble(text, source, debug_lines=debug_lines)
    dest = output or os.path.splitext(source)[0] + ".wbin"
    data = prog.to_bytes()
    write_output(dest, data, (source,))
    out.print(f"{dest}: {len(prog.kernels)} kernel(s), {len(data)} bytes")


@main.command("dis")
@click.argument("binary", type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="write the text here instead of stdout")
@user_errors
def dis_cmd(binary: str, output: str | None) -> None:
    """Disassemble a .wbin file (or canonicalise a .wave file) to canonical text."""
    text = disassemble(read_program(binary))
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
        prog = read_program(binary)
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


def _progress_runner() -> tuple[Any, Any]:
    """A rich progress bar for long runs (on a terminal), and the callback that drives it."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    if not err.is_terminal:
        return None, None
    prog = Progress(
        TextColumn("workgroups"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    )
    task: list[Any] = []

    def cb(done: int, total: int) -> None:
        if not task:
            if done >= total:
                return
            prog.start()
            task.append(prog.add_task("run", total=total))
        prog.update(task[0], completed=done)

    return prog, cb


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
@click.option("--max-instructions", type=click.IntRange(1), default=None, help="per-thread instruction budget")
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
    max_instructions: int | None,
) -> None:
    """Run a kernel on the emulator with named arguments.

    ARGUMENTS are PARAM=VALUE for every `.param` of the kernel: a buffer takes FILE.npy,
    zeros:COUNT or iota:COUNT; a scalar takes a number. Example:

        wave run vector_add.wave --grid 4 a=a.npy b=iota:1024 c=zeros:1024 n=1024 --out c=c.npy
    """
    import time

    import numpy as np

    from .emulator import DEFAULT_MAX_INSTRUCTIONS, emulate
    from .runtime.buffers import NUMPY_TYPES, pack

    prog = read_program(source, debug_lines=True)
    which: int | str = 0 if kernel_name is None else (int(kernel_name) if kernel_name.isdigit() else kernel_name)
    k = prog.kernel(which)
    if not k.params:
        raise WaveError(f"kernel {k.name!r} declares no parameters (.param); use wave-emu with register presets")
    params = {p.name: p for p in k.params}
    values: dict[str, object] = {}
    for a in arguments:
        if "=" not in a:
            raise click.UsageError(f"argument {a!r}: expected PARAM=VALUE")
        name, val = a.split("=", 1)
        if name not in params:
            raise click.UsageError(f"kernel {k.name!r} has no parameter {name!r}; parameters: {', '.join(params)}")
        p = params[name]
        if p.kind == "scalar":
            try:
                values[name] = _number(val)
            except ValueError:
                raise click.UsageError(f"{name}: expected a number, got {val!r}") from None
        elif val.startswith(("zeros:", "iota:")):
            kind, cnt = val.split(":", 1)
            if not cnt.isdigit():
                raise click.UsageError(f"{name}: expected {kind}:COUNT")
            dt = NUMPY_TYPES[p.dtype]
            values[name] = np.zeros(int(cnt), dt) if kind == "zeros" else np.arange(int(cnt)).astype(dt)
        else:
            try:
                values[name] = np.load(val, allow_pickle=False)
            except (OSError, ValueError) as e:
                raise WaveError(f"{name}: cannot read {val}: {e}") from None
    layout = pack(k, values)
    prog_bar, cb = _progress_runner()
    t0 = time.perf_counter()
    try:
        res = emulate(
            k,
            grid=_dims(grid, "--grid"),
            workgroup=_dims(workgroup, "--workgroup"),
            memory=layout.memory,
            args=layout.args,
            wave_width=wave_width,
            check=check,
            max_instructions=max_instructions or DEFAULT_MAX_INSTRUCTIONS,
            progress=cb,
        )
    finally:
        if prog_bar is not None:
            prog_bar.stop()
    dt = time.perf_counter() - t0
    out.print(
        f"ran {k.name!r}: {res.stats.workgroups} workgroup(s) x {res.stats.threads // max(res.stats.workgroups, 1)}"
        f" threads in {dt * 1e3:.1f} ms"
    )
    for spec in prints:
        name, _, cnt = spec.partition(":")
        if name not in layout.buffers:
            raise click.UsageError(f"--print {name}: not a buffer parameter")
        arr = layout.read(res.memory, name)
        n = int(cnt) if cnt else min(arr.size, 16)
        with np.printoptions(threshold=64, edgeitems=8):
            out.print(f"{name}[:{n}] = {arr[:n]}", markup=False)
    for spec in outs:
        name, sep, path = spec.partition("=")
        if not sep or name not in layout.buffers:
            raise click.UsageError(f"--out {spec}: expected BUFFER=FILE.npy")
        import io

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
@click.option("--device-memory", type=click.IntRange(0, 1 << 32), default=1048576, show_default=True)
@click.option("--wave-width", type=click.IntRange(1, 64), default=32, show_default=True)
@click.option("--kernel", "kernel_name", default=None, help="kernel name or index (default: the first)")
@click.option("--set-reg", multiple=True, metavar="REG:VALUE", help="initial register value for all threads")
@click.option("--arg", "args", multiple=True, metavar="OFFSET:FILE", help="load a file into device memory")
@click.option("--fill-zero", multiple=True, metavar="OFFSET:TYPE:COUNT")
@click.option("--fill-iota", multiple=True, metavar="OFFSET:TYPE:COUNT[:SCALE]")
@click.option("--dump-u32", multiple=True, metavar="OFFSET:COUNT", help="print u32 values, one per line")
@click.option("--dump-f32", multiple=True, metavar="OFFSET:COUNT", help="print f32 values, one per line")
@click.option("--dump-f16", multiple=True, metavar="OFFSET:COUNT", help="print f16 values, one per line")
@click.option("--dump-memory", default=None, metavar="START:END", help="hex dump of device memory")
@click.option("--stats", "show_stats", is_flag=True, help="print execution statistics")
@click.option("--check", is_flag=True, help="report undefined behaviour")
@click.option(
    "--max-instructions",
    type=click.IntRange(0),
    default=10_000_000,
    show_default=True,
    help="per-thread instruction budget (0 = unlimited)",
)
def emu_main(
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
    dump_memory: str | None,
    show_stats: bool,
    check: bool,
    max_instructions: int,
) -> None:
    """Run a .wbin (or .wave) kernel with the Rust WAVE emulator's flags.

    Fills are applied before --arg files; dumps print after the run in this order:
    --dump-memory, --dump-f32, --dump-u32, --dump-f16 (one value per line).
    """
    import dataclasses
    import time

    import numpy as np

    from .emulator import emulate

    try:
        prog = read_program(binary, debug_lines=True)
        which: int | str = 0 if kernel_name is None else (int(kernel_name) if kernel_name.isdigit() else kernel_name)
        k = prog.kernel(which)
        mem = np.zeros(device_memory, dtype=np.uint8)

        def put(off: int, data: bytes | np.ndarray, what: str) -> None:
            raw = np.frombuffer(bytes(data), dtype=np.uint8) if isinstance(data, bytes) else data.view(np.uint8)
            if off + raw.size > mem.size:
                raise WaveError(
                    f"{what}: {raw.size} bytes at offset {off} exceed the device memory "
                    f"({mem.size} bytes; see --device-memory)"
                )
            mem[off : off + raw.size] = raw

        for spec in fill_zero:  # fills first, then files
            parts = spec.split(":")
            if len(parts) != 3:
                raise click.UsageError(f"--fill-zero expects OFFSET:TYPE:COUNT, got {spec!r}")
            dt = _emu_type(parts[1], "--fill-zero")
            put(_emu_offset(parts[0], "--fill-zero"), np.zeros(int(parts[2]), dt), "--fill-zero")
        for spec in fill_iota:
            parts = spec.split(":")
            if not 3 <= len(parts) <= 4:
                raise click.UsageError(f"--fill-iota expects OFFSET:TYPE:COUNT[:SCALE], got {spec!r}")
            dt = _emu_type(parts[1], "--fill-iota")
            scale = _number(parts[3]) if len(parts) == 4 else 1
            n = int(parts[2])
            vals = (
                (np.arange(n, dtype=np.float32) * np.float32(scale))
                if dt.kind == "f"
                else (np.arange(n, dtype=np.int64) * int(scale))
            )
            put(_emu_offset(parts[0], "--fill-iota"), vals.astype(dt), "--fill-iota")
        for spec in args:
            off, sep, path = spec.partition(":")
            if not sep:
                raise click.UsageError(f"--arg expects OFFSET:FILE, got {spec!r}")
            with open(path, "rb") as f:
                data = f.read()
            if path.endswith(".npy"):
                import io

                data = np.load(io.BytesIO(data), allow_pickle=False).tobytes()
            put(_emu_offset(off, "--arg"), data, f"--arg {path}")
        presets: dict[int, int] = {}
        for spec in set_reg:
            reg, sep, val = spec.partition(":")
            if not sep:
                raise click.UsageError(f"--set-reg expects REG:VALUE, got {spec!r}")
            r = reg.lstrip("r")
            if not r.isdigit() or int(r) > 255:
                raise click.UsageError(f"--set-reg: invalid register {reg!r}")
            try:
                num = _number(val)
            except ValueError:
                raise click.UsageError(f"--set-reg: invalid value {val!r}") from None
            from .emulator.launch import arg_bits

            presets[int(r)] = arg_bits(num)
        # a kernel's own .workgroup_size, .registers and .local_memory win over the launch values;
        # registers grow to hold the presets
        regs = max(k.registers, max(presets, default=-1) + 1)
        k = dataclasses.replace(k, registers=regs, local_memory=k.local_memory or local_memory)
        wg_dims = k.workgroup_size or _dims(workgroup, "--workgroup")
        k = dataclasses.replace(k, workgroup_size=None)
        preset_list = [presets.get(i, 0) for i in range(max(presets, default=-1) + 1)]
        prog_bar, cb = _progress_runner()
        t0 = time.perf_counter()
        try:
            res = emulate(
                k,
                grid=_dims(grid, "--grid"),
                workgroup=wg_dims,
                memory=mem,
                args=preset_list,
                wave_width=wave_width,
                check=check,
                max_instructions=max_instructions or (1 << 62),
                progress=cb,
            )
        finally:
            if prog_bar is not None:
                prog_bar.stop()
        dt = time.perf_counter() - t0
        m = res.memory

        def region(spec: str, what: str, width: int) -> np.ndarray:
            off_s, sep, cnt = spec.partition(":")
            if not sep or not cnt.isdigit():
                raise click.UsageError(f"{what} expects OFFSET:COUNT, got {spec!r}")
            off = _emu_offset(off_s, what)
            n = int(cnt)
            if off + n * width > m.size:
                raise WaveError(f"{what} {spec}: beyond the device memory ({m.size} bytes)")
            return m[off : off + n * width]

        if dump_memory:
            s, sep, e = dump_memory.partition(":")
            start, end = (
                _emu_offset(s, "--dump-memory"),
                _emu_offset(e, "--dump-memory") if sep else -1,
            )
            if end <= start or end > m.size:
                raise click.UsageError("--dump-memory expects START:END with START < END <= device memory")
            click.echo(f"Device memory 0x{start:08x}-0x{end:08x}:")
            data = m[start:end]
            for i in range(0, data.size, 16):
                chunk = data[i : i + 16]
                hexes = " ".join(f"{b:02x}" for b in chunk[:8]) + "  " + " ".join(f"{b:02x}" for b in chunk[8:])
                text = "".join(chr(b) if 32 <= b < 127 else "." for b in chunk)
                click.echo(f"{start + i:08x}: {hexes:<49} |{text}|")
        for spec in dump_f32:
            for v in region(spec, "--dump-f32", 4).view(np.float32):
                click.echo(_float_text(v))
        for spec in dump_u32:
            for v in region(spec, "--dump-u32", 4).view(np.uint32):
                click.echo(str(int(v)))
        for spec in dump_f16:
            for v in region(spec, "--dump-f16", 2).view(np.float16):
                click.echo(_float_text(float(v)))
        if show_stats:
            out.print(_stats_table(res.stats, dt))
    except WaveError as e:
        err.print(f"Error: {e}", markup=False)
        sys.exit(1)
    except OSError as e:
        err.print(f"Error: {e.filename or ''}: {e.strerror}", markup=False)
        sys.exit(1)


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
    dumps: list[tuple[str, str]] = []
    plist = [p for p in passes.split(",") if p] if passes is not None else None
    prog = compile_source(
        source, opt=opt, max_registers=max_registers, dump_after=dump_after, dumps=dumps, passes=plist
    )
    for stage, text in dumps:
        click.echo(f";; ---- after {stage}")
        click.echo(text, nl=False)
    dest = output or os.path.splitext(source)[0] + ".wbin"
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

    if source.endswith(".py"):
        from .runtime.kernel import compile as compile_source

        prog = compile_source(source)
    else:
        prog = read_program(source)
    which = None if kernel_name is None else (int(kernel_name) if kernel_name.isdigit() else kernel_name)
    text = translate(prog, target, which, wave_width, arch)
    if output:
        write_output(output, text, (source,))
    else:
        click.echo(text, nl=False)


if __name__ == "__main__":  # pragma: no cover
    main()
