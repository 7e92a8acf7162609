"""The `wave` command: asm, dis, info, run, compile, translate."""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

import click

from .. import isa
from ..errors import WaveError
from ..isa.capabilities import (
    CONSTANT_MINIMUMS,
    EMULATOR,
    MMA_CONSTANTS,
    OPTIONAL_CAPABILITIES,
    DeviceCaps,
    occupancy,
)
from .common import (
    DEVICE_MEMORY_LIMIT,
    NO_PROGRESS_HELP,
    check_output,
    err,
    kernel_selector,
    load_npy,
    load_program,
    npy_header,
    out,
    parse_count,
    parse_dims,
    parse_number,
    read_text,
    same_file,
    source_languages,
    startup_done,
    startup_gc,
    stats_table,
    stderr_may_be_terminal,
    user_errors,
    write_output,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    import numpy as np
    from rich.table import Table

    from ..emulator.launch import EmulationResult
    from ..runtime.buffers import Layout, Slot
    from ..wbin.program import Kernel


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="wavegpu")
def main() -> None:
    """WAVE: a vendor-neutral GPU ISA. Assemble, inspect, run and translate kernels."""


NO_PROGRESS = click.option("--no-progress", is_flag=True, help=NO_PROGRESS_HELP)
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
    from ..asm import assemble

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
    from ..dis import disassemble

    text = disassemble(load_program(binary))
    if output:
        write_output(output, text, (binary,))
    else:
        click.echo(text, nl=False)


def _device_table(caps: DeviceCaps) -> Table:
    from rich.table import Table

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


def _runtime_devices() -> Table:
    """The runtime's device table (runtime/devices.py): each device, what it takes, and whether it
    runs here (with the reason when not)."""
    from rich.table import Table

    from ..runtime.devices import ROWS

    t = Table(title="devices (wg.launch(device=...), kernel calls' device=)")
    for col in ("device", "target", "wave width", "heap", "options", "here", "what it is"):
        t.add_column(col, no_wrap=col == "device")
    for d in ROWS:
        ok, why = d.available()
        options = sorted(d.takes - {"mma"}) + (["mma=" + "|".join(d.mma_paths)] if "mma" in d.takes else [])
        here = "yes" if ok else f"no: {why}"
        t.add_row(d.name, d.target or "-", str(d.wave_width), d.heap or "-", ", ".join(options) or "-", here, d.about)
    return t


@main.command("info")
@click.argument("binary", required=False, type=click.Path(exists=True, dir_okay=False))
@click.option("--device", "show_device", is_flag=True, help="show the emulated device's capabilities")
@click.option("--devices", "show_devices", is_flag=True, help="list the runtime's devices and which run here")
@click.option("--wave-width", type=click.IntRange(1, 64), default=None, help="wave width of the device table")
@user_errors
def info_cmd(binary: str | None, show_device: bool, show_devices: bool, wave_width: int | None) -> None:
    """Show kernel metadata of BINARY, the device capability table with --device, or the
    runtime's devices with --devices."""
    caps = EMULATOR if wave_width is None else EMULATOR.with_wave_width(wave_width)
    if not binary and not show_device and not show_devices:
        raise click.UsageError("give a .wbin/.wave file, --device or --devices")
    if show_device:
        out.print(_device_table(caps))
    if show_devices:
        out.print(_runtime_devices())
    if binary:
        from rich.table import Table

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
        from ..encoding import encode

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
            if k.max_global_size is not None:
                out.print(f"{k.name}: at most {k.max_global_size} threads along an axis (ids read as i32)")
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


@main.command("run", context_settings={"ignore_unknown_options": False})
@click.argument("source", type=click.Path(exists=True, dir_okay=False))
@click.argument("arguments", nargs=-1)
@click.option("--kernel", "-k", "kernel_name", default=None, help="kernel name or index (default: the first)")
@click.option("--grid", "-g", required=True, help="workgroups X[,Y[,Z]]")
@click.option(
    "--workgroup",
    "-w",
    default=None,
    help="threads per workgroup X[,Y[,Z]] (default: the kernel's hint; for a kernel source without one, 256)",
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
@click.option(
    "--engine",
    type=click.Choice(["auto", "numpy", "compiled"]),
    default=None,
    help="emulator engine (default: $WAVEGPU_ENGINE, else auto; --stats uses numpy): docs/emulator.md",
)
@click.option(
    "--scheduler",
    metavar="ADDRESS",
    default=None,
    help="run the launch's workgroups on the Dask cluster of this scheduler (tcp://HOST:8786): docs/cluster.md",
)
@NO_PROGRESS
@user_errors
@startup_gc
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
    engine: str | None,
    scheduler: str | None,
    no_progress: bool,
) -> None:
    """Run a kernel on the emulator with named arguments.

    SOURCE is a .wbin, a .wave file, or a kernel source file (.py, ...: compiled first).
    ARGUMENTS are PARAM=VALUE for every parameter of the kernel: a buffer takes FILE.npy,
    zeros:COUNT or iota:COUNT; a scalar takes a number. Every argument, --print and --out is
    checked before the kernel runs. Example:

        wave run vector_add.wave --grid 4 a=a.npy b=iota:1024 c=zeros:1024 n=1024 --out c=c.npy
    """
    from ..runtime.launch import launch

    k, grid_dims, wg_dims = _run_kernel(source, kernel_name, grid, workgroup, wave_width)
    # every argument, --print and --out is checked here: nothing is allocated or run yet
    inputs = _RunInputs(k, _named_arguments(k, arguments))
    shows = _run_prints(k, prints)
    saves = _run_outs(k, outs, source, inputs.files, force)
    layout, restore = _run_image(k, inputs)
    slots = layout.buffers
    client = None
    if scheduler is not None:
        from ..runtime.cluster import connect

        client = connect(scheduler)

    startup_done()
    t0 = time.perf_counter()
    res = launch(
        k,
        grid=grid_dims,
        workgroup=wg_dims,
        memory=layout.memory,
        args=layout.args,
        wave_width=wave_width,
        check=check,
        max_instructions=max_instructions,
        progress=not no_progress and stderr_may_be_terminal() and err.is_terminal,
        buffers=layout.regions(),  # an access outside every array traps
        engine="numpy" if show_stats and engine in (None, "auto") else engine,
        donate=client is None,  # the emulator runs in the image itself: it is held once (issue 28.6)
        restore=restore if client is None else None,
        client=client,
    )
    if client is not None:
        client.close()
    dt = time.perf_counter() - t0
    del layout  # the input image: from here on only the result's memory is held
    _run_report(k, res, slots, shows, saves, source, dt, show_stats)


def _run_kernel(
    source: str, kernel_name: str | None, grid: str, workgroup: str | None, wave_width: int
) -> tuple[Kernel, tuple[int, ...], tuple[int, ...] | None]:
    """The kernel `wave run` launches, its grid and its workgroup (None: the kernel's hint),
    checked for size before any argument is read or built (launch checks it again)."""
    from ..emulator.launch import check_threads, dim3

    grid_dims = parse_dims(grid, "--grid")
    assert grid_dims is not None  # --grid is required
    wg_dims = parse_dims(workgroup, "--workgroup")
    prog = load_program(source, debug_lines=True)
    k = prog.kernel(kernel_selector(kernel_name))
    if wg_dims is None and k.workgroup_size is None and os.path.splitext(source)[1] in source_languages():
        from ..runtime.kernel import DEFAULT_WORKGROUP

        wg_dims = (DEFAULT_WORKGROUP,)  # a kernel source runs as a kernel call does (docs/sdk.md)
    check_threads(dim3(grid_dims, "--grid"), dim3(wg_dims or k.workgroup_size or wave_width, "--workgroup"), k)
    if not k.params:
        raise WaveError(f"kernel {k.name!r} declares no parameters (.param); use wave-emu with register presets")
    return k, grid_dims, wg_dims


def _named_arguments(k: Kernel, arguments: tuple[str, ...]) -> dict[str, str]:
    """PARAM=VALUE arguments: parameter -> its text, one for every parameter that is not hidden."""
    from ..runtime.buffers import hidden_of

    params = [p.name for p in k.params]
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
    hidden = hidden_of(k)  # lengths and shapes of arrays: computed by pack, never given
    for name in given:
        if name in hidden:
            raise click.UsageError(f"{name} is computed from {hidden[name][0]}: do not pass it")
    missing = [p.name for p in k.params if p.name not in given and p.name not in hidden]
    if missing:
        raise click.UsageError(f"missing argument(s) for {', '.join(missing)} (PARAM=VALUE each)")
    return given


class _RunInputs:
    """The arguments read: scalar values, buffers to fill (zeros:N or iota:N) and .npy files (their
    headers read and their element types checked), within the device memory's 32-bit addresses."""

    def __init__(self, k: Kernel, given: dict[str, str]):
        from ..runtime.buffers import NUMPY_TYPES, device_bytes, type_name

        params = {p.name: p for p in k.params}
        self.values: dict[str, object] = {}
        self.fills: dict[str, tuple[str, int]] = {}  # buffer -> (zeros|iota, count)
        self.files: dict[str, str] = {}  # buffer -> .npy path
        nbytes: dict[str, int] = {}
        for name, val in given.items():
            p = params[name]
            if p.kind == "scalar":
                try:
                    self.values[name] = parse_number(val)
                except ValueError:
                    raise click.UsageError(f"{name}: expected a number, got {val!r}") from None
                continue
            want = NUMPY_TYPES[p.dtype]
            kind, sep, cnt = val.partition(":")
            if sep and kind in ("zeros", "iota"):
                n = parse_count(cnt, f"{name}={kind}:COUNT")
                self.fills[name] = (kind, n)
            else:
                n, dtype = npy_header(val, name)
                if dtype != want:  # converting could change values silently: the file must hold the type
                    raise WaveError(
                        f"{name}={val}: an array of {dtype}, but parameter {name!r} is {type_name(p.dtype)}[] "
                        f"(NumPy {want}); save it with that type, e.g. np.save(path, x.astype(np.{want.name}))"
                    )
                self.files[name] = val
            nbytes[name] = n * want.itemsize
        total = device_bytes(nbytes.values())
        if total > DEVICE_MEMORY_LIMIT:
            big = max(nbytes, key=lambda n: nbytes[n])
            raise WaveError(
                f"the buffers need {total:,} bytes of device memory ({big}: {nbytes[big]:,} bytes); "
                f"device addresses are 32-bit, so at most {DEVICE_MEMORY_LIMIT:,} bytes"
            )


def _buffer_names(k: Kernel) -> list[str]:
    return [p.name for p in k.params if p.kind == "buffer"]


def _run_prints(k: Kernel, prints: tuple[str, ...]) -> list[tuple[str, int | None]]:
    """--print BUFFER[:COUNT]: (buffer, count; None: up to 16)."""
    buffers = _buffer_names(k)
    shows: list[tuple[str, int | None]] = []
    for spec in prints:
        name, sep, cnt = spec.partition(":")
        if name not in buffers:
            raise click.UsageError(
                f"--print {spec}: {name!r} is not a buffer parameter (buffers: {', '.join(buffers)})"
            )
        shows.append((name, parse_count(cnt, f"--print {spec}") if sep else None))
    return shows


def _run_outs(
    k: Kernel, outs: tuple[str, ...], source: str, files: dict[str, str], force: bool
) -> list[tuple[str, str]]:
    """--out BUFFER=FILE.npy: (buffer, path), refused where it would overwrite the kernel, another
    output, or (without --force) an input."""
    buffers = _buffer_names(k)
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
    return saves


def _run_image(k: Kernel, inputs: _RunInputs) -> tuple[Layout, Callable[[np.ndarray], None]]:
    """The device image and the function that writes the input into a donated image again.

    The image is the only copy of the buffers this process makes: zeros and iota are written
    into it, a .npy file is mapped and copied straight into it (no host array each)."""
    import numpy as np

    from ..runtime.buffers import pack

    values = dict(inputs.values)
    fills, files = inputs.fills, inputs.files
    for name, (_kind, n) in fills.items():
        values[name] = n  # n zeros (pack)
    stamps = {}
    for name, path in files.items():
        values[name] = load_npy(path, name, mmap=True)
        st = os.stat(path)
        stamps[name] = (st.st_size, st.st_mtime_ns)
    layout = pack(k, values)
    values.clear()  # the mapped files: unmapped once the layout lets go of them too
    layout.groups.clear()  # (they serve write_back, which `wave run` does not use)
    for name, (kind, n) in fills.items():
        if kind == "iota":
            _iota_into(layout.memory, layout.buffers[name], n)
    slots = layout.buffers

    def restore(memory: np.ndarray) -> None:
        # the input written into the donated image again, for the NumPy engine's re-run of a
        # launch the compiled engine stopped (a trap or the budget): what pack and the fills wrote
        memory[:] = 0
        for name, path in files.items():
            st = os.stat(path)
            if (st.st_size, st.st_mtime_ns) != stamps[name]:
                raise WaveError(
                    f"{name}={path} changed while the kernel ran, which stopped at a trap or the "
                    "instruction budget; run it again to see the error"
                )
            s = slots[name]
            memory[s.offset : s.offset + s.nbytes] = load_npy(path, name, mmap=True).reshape(-1).view(np.uint8)
        for name, (kind, n) in fills.items():
            if kind == "iota":
                _iota_into(memory, slots[name], n)

    return layout, restore


def _run_report(
    k: Kernel,
    res: EmulationResult,
    slots: dict[str, Slot],
    shows: list[tuple[str, int | None]],
    saves: list[tuple[str, str]],
    source: str,
    dt: float,
    show_stats: bool,
) -> None:
    """What `wave run` prints and writes after the launch: a summary line, --print, --out, --stats."""
    import numpy as np

    # plain lines through click.echo: rich (out) loads only for the --stats table
    click.echo(
        f"ran {k.name!r}: {res.stats.workgroups} workgroup(s) x {res.stats.threads // max(res.stats.workgroups, 1)}"
        f" threads in {dt * 1e3:.1f} ms"
    )

    def result(name: str) -> np.ndarray:  # a view of a buffer in the result (no copy)
        s = slots[name]
        return res.memory[s.offset : s.offset + s.nbytes].view(s.dtype)

    for name, count in shows:
        arr = result(name)
        n = min(arr.size, 16) if count is None else count
        with np.printoptions(threshold=64, edgeitems=8):
            click.echo(f"{name}[:{n}] = {arr[:n]}")
    for name, path in saves:
        write_output(path, lambda f, name=name: np.save(f, result(name)), (source,))  # straight from the image
        click.echo(f"wrote {path}")
    if show_stats:
        out.print(stats_table(res.stats, dt))


def _iota_into(memory: np.ndarray, slot: Slot, n: int) -> None:
    """0, 1, .., n - 1 (converted to the buffer's type) into the buffer's place in the image."""
    import numpy as np

    image = memory[slot.offset : slot.offset + slot.nbytes].view(slot.dtype)
    for lo in range(0, n, 1 << 16):  # in chunks: small temporaries
        image[lo : lo + (1 << 16)] = np.arange(lo, min(n, lo + (1 << 16))).astype(slot.dtype)


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
@click.option(
    "--passes",
    default=None,
    metavar="P1,P2,...",
    help="run exactly these passes instead of -O's; options as name:option=value (unroll:max_trip=32)",
)
@click.option(
    "--lang",
    default=None,
    type=click.Choice(["python", "rust", "cpp", "typescript"]),
    help="source language (default: from the file suffix: .py .rs .cpp/.cc/.cu/.hpp .ts)",
)
@user_errors
def compile_cmd(
    source: str,
    output: str | None,
    opt: int,
    max_registers: int | None,
    dump_after: tuple[str, ...],
    passes: str | None,
    lang: str | None,
) -> None:
    """Compile a kernel source file (Python, Rust, C++ or TypeScript) to .wbin."""
    from ..compiler import STAGES
    from ..runtime.compile import compile as compile_source

    bad = [s for s in dump_after if s not in (*STAGES, "all")]
    if bad:
        raise click.UsageError(f"--dump-after {bad[0]}: stages are {', '.join(STAGES)}, all")
    langs = source_languages()
    if lang is None and os.path.splitext(source)[1] not in langs:
        raise WaveError(
            f"{source}: wave compile reads kernel source files ({', '.join(langs)}); "
            "assemble .wave files with `wave asm`"
        )
    dest = output or os.path.splitext(source)[0] + ".wbin"
    check_output(dest, f"-o {dest}")
    read_text(source)  # bytes that are not UTF-8: a diagnostic with the place
    dumps: list[tuple[str, str]] = []
    plist = [p for p in passes.split(",") if p] if passes is not None else None
    from pathlib import Path  # the compiler loads pathlib anyway; `wave run` of a .wbin need not

    prog = compile_source(
        Path(source), lang=lang, opt=opt, max_registers=max_registers, dump_after=dump_after, dumps=dumps, passes=plist
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
@click.option("--target", "-t", required=True, help="ptx, amdgcn, hip, metal, sycl, opencl or cuda")
@click.option("--kernel", "-k", "kernel_name", default=None, help="kernel name or index (default: all)")
@click.option("--wave-width", type=click.IntRange(1, 64), default=None, help="default: 64 for amdgcn, else 32")
@click.option(
    "--arch",
    default=None,
    help="ptx: sm_75 (default), sm_80, sm_86, sm_89, sm_90; amdgcn: gfx942 (default), gfx90a, gfx950",
)
@click.option("--hsaco", is_flag=True, help="amdgcn: assemble and link a code object (llvm-mc, ld.lld) into -o")
@click.option(
    "--mma",
    type=click.Choice(["exact", "tensor"]),
    default=None,
    help="ptx: mma.m16n8k8 computed exactly (default: the emulator's bits) or on tensor cores (mma.sync)",
)
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="write here instead of stdout")
@user_errors
def translate_cmd(
    source: str,
    target: str,
    kernel_name: str | None,
    wave_width: int | None,
    arch: str | None,
    hsaco: bool,
    mma: str | None,
    output: str | None,
) -> None:
    """Translate a .wbin/.wave (or a Python kernel file) to vendor source."""
    from ..backends import translate

    if output:
        check_output(output, f"-o {output}")
    prog = load_program(source)
    which = None if kernel_name is None else (int(kernel_name) if kernel_name.isdigit() else kernel_name)
    if hsaco:
        from ..backends.amdgcn.hsaco import code_object

        if target != "amdgcn":
            raise WaveError(f"--hsaco applies to the amdgcn target only, not {target}")
        if not output:
            raise WaveError("--hsaco writes a binary code object: give -o FILE")
        write_output(output, code_object(prog, which, arch, wave_width), (source,))
        return
    text = translate(prog, target, which, wave_width, arch, mma=mma)
    if output:
        write_output(output, text, (source,))
    else:
        click.echo(text, nl=False)
