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


@main.command("asm")
@click.argument("source", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    help="output .wbin (default: SOURCE with .wbin)",
)
@click.option(
    "-g", "--debug-lines", is_flag=True, help="record assembly line numbers in the line table"
)
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
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False), help="write the text here instead of stdout"
)
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
@click.option(
    "--device", "show_device", is_flag=True, help="show the emulated device's capabilities"
)
@click.option(
    "--wave-width", type=click.IntRange(1, 64), default=None, help="wave width of the device table"
)
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


if __name__ == "__main__":  # pragma: no cover
    main()
