"""`wave-emu`: the Rust toolchain's emulator command line (flags of COMPAT.md), on our emulator."""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import time
from typing import TYPE_CHECKING, Any

from ..errors import WaveError
from ..wbin.format import MAX_LOCAL
from .common import (
    DEVICE_MEMORY_LIMIT,
    NO_PROGRESS_HELP,
    err,
    kernel_selector,
    load_npy,
    load_program,
    out,
    parse_count,
    parse_dims,
    parse_number,
    report_errors,
    startup_done,
    startup_gc,
    stats_table,
    stderr_may_be_terminal,
    usage_error,
)

if TYPE_CHECKING:
    import numpy as np

    from ..wbin.program import Kernel

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
        raise usage_error(f"{what}: invalid offset {text!r}") from None


def _emu_type(text: str, what: str) -> Any:
    import numpy as np

    if text not in _EMU_TYPES:
        raise usage_error(f"{what}: unknown type {text!r} (one of {', '.join(_EMU_TYPES)})")
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
        raise usage_error(f"{what} expects OFFSET:COUNT, got {spec!r}")
    off, n = _emu_offset(off_s, what), parse_count(cnt, what)
    if off + n * width > size:
        raise WaveError(f"{what} {spec}: beyond the device memory ({size} bytes)")
    return off, n


def _echo(text: str = "") -> None:
    """A line on stdout, flushed (as click.echo writes it; click is not loaded for a run)."""
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


class _Option:
    """One wave-emu option: the one table both the click command and the fast parser read."""

    __slots__ = ("choices", "default", "dest", "flag", "help", "hi", "is_flag", "lo", "metavar", "multiple")

    def __init__(
        self,
        flag: str,
        dest: str,
        default: Any = None,
        *,
        lo: int | None = None,
        hi: int | None = None,
        choices: tuple[str, ...] | None = None,
        multiple: bool = False,
        is_flag: bool = False,
        metavar: str | None = None,
        help: str | None = None,
    ):
        self.flag, self.dest, self.default = flag, dest, default
        self.lo, self.hi, self.choices = lo, hi, choices
        self.multiple, self.is_flag, self.metavar, self.help = multiple, is_flag, metavar, help

    def click_option(self) -> Any:
        import click

        kw: dict[str, Any] = {"help": self.help}
        if self.is_flag:
            kw["is_flag"] = True
        elif self.multiple:
            kw["multiple"] = True
        else:
            kw["default"] = self.default
            kw["show_default"] = self.default is not None
        if self.lo is not None:
            kw["type"] = click.IntRange(self.lo, self.hi)
        if self.choices is not None:
            kw["type"] = click.Choice(list(self.choices))
        if self.metavar is not None:
            kw["metavar"] = self.metavar
        decls = [self.flag] if self.flag[2:].replace("-", "_") == self.dest else [self.flag, self.dest]
        return click.option(*decls, **kw)

    def value(self, text: str) -> Any:
        """The parsed value as click's type gives it, or _DECLINE where click would refuse it."""
        if self.lo is not None:
            try:
                v = int(text)
            except ValueError:
                return _DECLINE
            return v if v >= self.lo and (self.hi is None or v <= self.hi) else _DECLINE
        if self.choices is not None:
            return text if text in self.choices else _DECLINE
        return text


_DECLINE = object()
OPTIONS = (
    _Option("--grid", "grid", "1,1,1", help="grid dimensions X,Y,Z"),
    _Option("--workgroup", "workgroup", "32,1,1", help="workgroup dimensions X,Y,Z"),
    _Option(
        "--registers",
        "registers",
        32,
        lo=1,
        hi=256,
        help="registers per thread (a kernel's .registers takes precedence)",
    ),
    _Option(
        "--local-memory",
        "local_memory",
        16384,
        lo=0,
        hi=MAX_LOCAL,
        help="local memory bytes (a kernel's .local_memory takes precedence)",
    ),
    _Option("--device-memory", "device_memory", 1048576, lo=0, hi=DEVICE_MEMORY_LIMIT),
    _Option("--wave-width", "wave_width", 32, lo=1, hi=64),
    _Option("--kernel", "kernel_name", help="kernel name or index (default: the first)"),
    _Option("--set-reg", "set_reg", multiple=True, metavar="REG:VALUE", help="initial register value for all threads"),
    _Option("--arg", "args", multiple=True, metavar="OFFSET:FILE", help="load a file into device memory"),
    _Option("--fill-zero", "fill_zero", multiple=True, metavar="OFFSET:TYPE:COUNT"),
    _Option("--fill-iota", "fill_iota", multiple=True, metavar="OFFSET:TYPE:COUNT[:SCALE]"),
    _Option("--dump-u32", "dump_u32", multiple=True, metavar="OFFSET:COUNT", help="print u32 values, one per line"),
    _Option("--dump-f32", "dump_f32", multiple=True, metavar="OFFSET:COUNT", help="print f32 values, one per line"),
    _Option("--dump-f16", "dump_f16", multiple=True, metavar="OFFSET:COUNT", help="print f16 values, one per line"),
    _Option(
        "--dump-bf16", "dump_bf16", multiple=True, metavar="OFFSET:COUNT", help="print bfloat16 values, one per line"
    ),
    _Option("--dump-memory", "dump_memory", metavar="START:END", help="hex dump of device memory"),
    _Option("--stats", "show_stats", is_flag=True, help="print execution statistics (the Rust summary, then ours)"),
    _Option("--check", "check", is_flag=True, help="report undefined behaviour"),
    _Option(
        "--engine",
        "engine",
        choices=("auto", "numpy", "compiled"),
        help="emulator engine (default: $WAVEGPU_ENGINE, else auto; --stats uses numpy): docs/emulator.md",
    ),
    _Option(
        "--max-instructions", "max_instructions", 10_000_000, lo=0, help="per-thread instruction budget (0 = unlimited)"
    ),
    _Option("--no-progress", "no_progress", is_flag=True, help=NO_PROGRESS_HELP),
)
_BY_FLAG = {o.flag: o for o in OPTIONS}


def fast_parse(argv: list[str]) -> dict[str, Any] | None:
    """wave-emu's parameters from a command line, exactly as its click command would parse them,
    or None for anything this parser does not decide (help, an unknown or malformed option, a
    value click would refuse, a value that starts with '-', `--`, shell completion): the click
    command then parses it and reports. Reading the command line without click saves loading it
    (start-up, docs/performance.md); tests/cli/test_startup.py compares both parsers."""
    if any(k.startswith("_") and k.endswith("_COMPLETE") for k in os.environ):
        return None
    opts: dict[str, Any] = {o.dest: [] if o.multiple else (False if o.is_flag else o.default) for o in OPTIONS}
    binary = None
    i = 0
    while i < len(argv):
        tok = argv[i]
        i += 1
        if tok.startswith("-") and tok != "-":
            name, eq, inline = tok.partition("=")
            o = _BY_FLAG.get(name)
            if o is None:
                return None
            if o.is_flag:
                if eq:
                    return None
                opts[o.dest] = True
                continue
            if eq:
                text = inline
            elif i < len(argv):
                text = argv[i]
                i += 1
            else:
                return None
            if text.startswith("-"):
                return None
            v = o.value(text)
            if v is _DECLINE:
                return None
            if o.multiple:
                opts[o.dest].append(v)
            else:
                opts[o.dest] = v
        elif binary is None:
            binary = tok
        else:
            return None
    if not binary:
        return None
    try:  # click.Path(exists=True, dir_okay=False), readable
        if stat.S_ISDIR(os.stat(binary).st_mode) or not os.access(binary, os.R_OK):
            return None
    except (OSError, ValueError):
        return None
    for o in OPTIONS:
        if o.multiple:
            opts[o.dest] = tuple(opts[o.dest])
    return {"binary": binary, **opts}


def _run(opts: dict[str, Any]) -> None:
    """The command's body, whichever parser read its flags."""
    startup_gc(lambda: report_errors(lambda: _emu(**opts), rust=True))()


def _command() -> Any:
    """The click command (help, errors, CliRunner), built on first use."""
    import click

    def emu_main(**opts: Any) -> None:
        """Run a .wbin (or .wave, or kernel source) kernel with the Rust WAVE emulator's flags.

        Fills are applied before --arg files; dumps print after the run in this order:
        --dump-memory, --dump-f32, --dump-u32, --dump-f16, --dump-bf16 (one value per line),
        then --stats.
        """
        _run(opts)

    f: Any = emu_main
    for o in reversed(OPTIONS):
        f = o.click_option()(f)
    f = click.argument("binary", type=click.Path(exists=True, dir_okay=False))(f)
    return click.command("wave-emu", context_settings={"help_option_names": ["-h", "--help"]})(f)


class EmuMain:
    """`wave-emu`'s entry point (wavegpu.cli.emu_main): called without arguments, as the console
    script calls it, it reads sys.argv with fast_parse and runs without loading click; anything
    fast_parse does not decide goes to the click command, which this object also stands for
    (`.main`, `.name`, ...: CliRunner and other callers get the click command's behaviour)."""

    _cmd: Any = None

    @property
    def command(self) -> Any:
        if EmuMain._cmd is None:
            EmuMain._cmd = _command()
        return EmuMain._cmd

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        opts = None if args or kwargs else fast_parse(sys.argv[1:])
        if opts is None:
            return self.command(*args, **kwargs)
        try:
            _run(opts)
        except KeyboardInterrupt:  # as click's standalone mode
            sys.stderr.write("\nAborted!\n")
            sys.exit(1)
        except Exception as e:
            click = sys.modules.get("click")
            if click is not None and isinstance(e, click.ClickException):
                return self.command()  # a usage error found while checking flags: click reports it
            raise
        sys.exit(0)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.command, name)


emu_main = EmuMain()


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
    engine: str | None,
    no_progress: bool,
) -> None:
    """The command: every flag is read and checked (in the order below) before anything is
    allocated or run; then the image is built, the kernel runs, and the dumps print."""
    import numpy as np

    from ..emulator import emulate
    from ..emulator.launch import check_threads, dim3

    grid_dims = parse_dims(grid, "--grid") or (1,)
    wg_launch = parse_dims(workgroup, "--workgroup")
    image = _EmuImage(_emu_fills(fill_zero, fill_iota, device_memory), _emu_files(args))
    presets = _emu_presets(set_reg)
    dumps = _emu_dumps(
        (("--dump-f32", dump_f32), ("--dump-u32", dump_u32), ("--dump-f16", dump_f16), ("--dump-bf16", dump_bf16)),
        device_memory,
    )
    hexdump = _emu_hexdump(dump_memory, device_memory)

    prog = load_program(binary, debug_lines=True)
    k = prog.kernel(kernel_selector(kernel_name))
    # the launch's size before the device memory is built (emulate checks it again)
    check_threads(dim3(grid_dims, "--grid"), dim3(k.workgroup_size or wg_launch or wave_width, "--workgroup"), k)
    mem = np.zeros(device_memory, dtype=np.uint8)
    image.write(mem)
    k, wg_dims, preset_list = _emu_kernel(k, presets, local_memory, wg_launch)
    show = not no_progress and stderr_may_be_terminal() and err.is_terminal
    bar: Any = None
    if show:
        from ..runtime.progress import RunProgress

        bar = RunProgress(int(np.prod(grid_dims)), err, enabled=True)
    startup_done()
    t0 = time.perf_counter()
    with bar if bar is not None else contextlib.nullcontext():
        res = emulate(
            k,
            grid=grid_dims,
            workgroup=wg_dims,
            memory=mem,
            args=preset_list,
            wave_width=wave_width,
            check=check,
            max_instructions=max_instructions or (1 << 62),
            progress=None if bar is None else bar.callback,
            engine="numpy" if show_stats and engine in (None, "auto") else engine,
            donate=True,  # the emulator runs in `mem` (held once; copied if not a multiple of 16 bytes)
            restore=lambda m: image.write(m, again=True),
        )
    del mem  # the result's memory is the one image held from here on
    dt = time.perf_counter() - t0
    if hexdump is not None:
        _print_hexdump(res.memory, *hexdump)
    _print_dumps(res.memory, dumps)
    if show_stats:
        _print_stats(k, res.stats, dt)


# a fill of the device memory: offset, element type, count, and the scale of an iota (None: zeros)
Fill = tuple[int, "np.dtype", int, "int | float | None"]


def _emu_fills(fill_zero: tuple[str, ...], fill_iota: tuple[str, ...], device_memory: int) -> list[Fill]:
    """--fill-zero OFFSET:TYPE:COUNT and --fill-iota OFFSET:TYPE:COUNT[:SCALE], in that order
    (fills are written before the --arg files), each inside the device memory."""
    fills: list[Fill] = []
    for spec in fill_zero:
        parts = spec.split(":")
        if len(parts) != 3:
            raise usage_error(f"--fill-zero expects OFFSET:TYPE:COUNT, got {spec!r}")
        fills.append(
            (
                _emu_offset(parts[0], "--fill-zero"),
                _emu_type(parts[1], "--fill-zero"),
                parse_count(parts[2], "--fill-zero"),
                None,
            )
        )
    for spec in fill_iota:
        parts = spec.split(":")
        if not 3 <= len(parts) <= 4:
            raise usage_error(f"--fill-iota expects OFFSET:TYPE:COUNT[:SCALE], got {spec!r}")
        try:
            scale = parse_number(parts[3]) if len(parts) == 4 else 1
        except ValueError:
            raise usage_error(f"--fill-iota: invalid scale {parts[3]!r}") from None
        fills.append(
            (
                _emu_offset(parts[0], "--fill-iota"),
                _emu_type(parts[1], "--fill-iota"),
                parse_count(parts[2], "--fill-iota"),
                scale,
            )
        )
    for off, dt, n, _ in fills:
        if off + n * dt.itemsize > device_memory:
            raise WaveError(
                f"fill: {n * dt.itemsize} bytes at offset {off} exceed the device memory "
                f"({device_memory} bytes; see --device-memory)"
            )
    return fills


def _emu_files(args: tuple[str, ...]) -> list[tuple[int, str]]:
    """--arg OFFSET:FILE: (offset, path) each."""
    files: list[tuple[int, str]] = []
    for spec in args:
        off_s, sep, path = spec.partition(":")
        if not sep or not path or "\0" in path:
            raise usage_error(f"--arg expects OFFSET:FILE, got {spec!r}")
        files.append((_emu_offset(off_s, "--arg"), path))
    return files


def _emu_presets(set_reg: tuple[str, ...]) -> dict[int, int]:
    """--set-reg REG:VALUE: register number -> its 32 bits."""
    from ..emulator.launch import arg_bits

    presets: dict[int, int] = {}
    for spec in set_reg:
        reg, sep, val = spec.partition(":")
        if not sep:
            raise usage_error(f"--set-reg expects REG:VALUE, got {spec!r}")
        r = reg.lstrip("r")
        if not r.isdigit() or int(r) > 255:
            raise usage_error(f"--set-reg: invalid register {reg!r}")
        try:
            presets[int(r)] = arg_bits(parse_number(val))
        except ValueError:
            raise usage_error(f"--set-reg: invalid value {val!r}") from None
    return presets


_DUMP_KINDS = {"--dump-f32": (4, "f32"), "--dump-u32": (4, "u32"), "--dump-f16": (2, "f16"), "--dump-bf16": (2, "bf16")}


def _emu_dumps(flags: tuple[tuple[str, tuple[str, ...]], ...], device_memory: int) -> list[tuple[tuple[int, int], str]]:
    """The value dumps ((offset, count), kind), in the order of `flags` (flag, its specs)."""
    return [
        (_emu_region(spec, what, _DUMP_KINDS[what][0], device_memory), _DUMP_KINDS[what][1])
        for what, specs in flags
        for spec in specs
    ]


def _emu_hexdump(dump_memory: str | None, device_memory: int) -> tuple[int, int] | None:
    """--dump-memory START[:END]: the bytes start..end, inside the device memory."""
    if not dump_memory:
        return None
    s, sep, e = dump_memory.partition(":")
    start, end = _emu_offset(s, "--dump-memory"), (_emu_offset(e, "--dump-memory") if sep else -1)
    if end <= start or end > device_memory:
        raise usage_error("--dump-memory expects START:END with START < END <= device memory")
    return start, end


class _EmuImage:
    """The input image: the fills, then the --arg files (a .npy file's data, else its bytes).
    Written again for the NumPy engine's re-run of a launch the compiled engine stopped (a trap
    or the budget) in the donated image: a file changed since the first writing is refused."""

    def __init__(self, fills: list[Fill], files: list[tuple[int, str]]):
        self.fills = fills
        self.files = files
        self.stamps: dict[str, tuple[int, int]] = {}

    def write(self, mem: np.ndarray, again: bool = False) -> None:
        import numpy as np

        if again:
            mem[:] = 0
        for off, dt, n, scale in self.fills:
            if scale is None:
                vals = np.zeros(n, dt)
            elif dt.kind == "f":
                vals = (np.arange(n, dtype=np.float32) * np.float32(scale)).astype(dt)
            else:
                vals = (np.arange(n, dtype=np.int64) * int(scale)).astype(dt)
            _put(mem, off, vals, "--fill-iota" if scale is not None else "--fill-zero")
        for off, path in self.files:
            st = os.stat(path)
            if again and (st.st_size, st.st_mtime_ns) != self.stamps[path]:
                raise WaveError(
                    f"--arg {path} changed while the kernel ran, which stopped at a trap or the "
                    "instruction budget; run it again to see the error"
                )
            self.stamps[path] = (st.st_size, st.st_mtime_ns)
            if os.path.getsize(path) + off > mem.size:
                raise WaveError(
                    f"--arg {path}: {os.path.getsize(path)} bytes at offset {off} exceed the device memory "
                    f"({mem.size} bytes; see --device-memory)"
                )
            if path.endswith(".npy"):
                data = np.ascontiguousarray(load_npy(path, f"--arg {path}"))
                _put(mem, off, data, f"--arg {path}")
                del data
            else:
                _read_into(mem, off, path)


def _read_into(mem: np.ndarray, off: int, path: str) -> None:
    """The bytes of the file `path` written into mem[off:] as they are read (no copy of the file
    in between: a 4 MiB input is 1,024 pages less to fault in); a file longer than the room left
    (one that grew since its size was checked, or a pipe) is refused."""
    room = mem.data[off:]  # (mem: contiguous uint8)
    with open(path, "rb", buffering=0) as f:
        n = 0
        while n < len(room) and (got := f.readinto(room[n:])):
            n += got
        if n == len(room) and f.read(1):
            raise WaveError(
                f"--arg {path}: more than {n} bytes at offset {off} exceed the device memory "
                f"({mem.size} bytes; see --device-memory)"
            )


def _put(mem: np.ndarray, off: int, data: np.ndarray, what: str) -> None:
    import numpy as np

    raw = data.reshape(-1).view(np.uint8)
    if off + raw.size > mem.size:
        raise WaveError(
            f"{what}: {raw.size} bytes at offset {off} exceed the device memory ({mem.size} bytes; see --device-memory)"
        )
    mem[off : off + raw.size] = raw


def _emu_kernel(
    k: Kernel, presets: dict[int, int], local_memory: int, wg_launch: tuple[int, ...] | None
) -> tuple[Kernel, tuple[int, ...] | None, list[int]]:
    """The kernel as launched, its workgroup and the register presets r0..: a kernel's own
    .workgroup_size, .registers and .local_memory win over the launch values; registers grow to
    hold the presets."""
    import dataclasses

    regs = max(k.registers, max(presets, default=-1) + 1)
    k = dataclasses.replace(k, registers=regs, local_memory=k.local_memory or local_memory)
    wg_dims = k.workgroup_size or wg_launch
    k = dataclasses.replace(k, workgroup_size=None)
    return k, wg_dims, [presets.get(i, 0) for i in range(max(presets, default=-1) + 1)]


def _print_hexdump(m: np.ndarray, start: int, end: int) -> None:
    """--dump-memory: 16 bytes a line, in hex and as text."""
    _echo(f"Device memory 0x{start:08x}-0x{end:08x}:")
    data = m[start:end]
    for i in range(0, data.size, 16):
        chunk = data[i : i + 16]
        hexes = " ".join(f"{b:02x}" for b in chunk[:8]) + "  " + " ".join(f"{b:02x}" for b in chunk[8:])
        text = "".join(chr(b) if 32 <= b < 127 else "." for b in chunk)
        _echo(f"{start + i:08x}: {hexes:<49} |{text}|")


def _print_dumps(m: np.ndarray, dumps: list[tuple[tuple[int, int], str]]) -> None:
    """The value dumps, one value a line."""
    import numpy as np

    for (off, n), kind in dumps:
        if kind == "u32":
            for v in m[off : off + 4 * n].view(np.uint32):
                _echo(str(int(v)))
            continue
        if kind == "f32":
            vals = m[off : off + 4 * n].view(np.float32)
        elif kind == "f16":
            vals = m[off : off + 2 * n].view(np.float16).astype(np.float32)
        else:  # bfloat16: the high half of a float32
            vals = (m[off : off + 2 * n].view(np.uint16).astype(np.uint32) << 16).view(np.float32)
        for v in vals:
            _echo(_float_text(float(v)))


def _print_stats(k: Kernel, stats: Any, dt: float) -> None:
    """--stats: the Rust emulator's summary, then our table."""
    lines, exact = rust_stats_lines(k, stats)
    _echo("\n".join(lines))
    if not exact:
        err.print(
            "note: the Loads/Stores counts are estimated (this kernel mixes access widths across "
            "memory spaces or atomics across spaces; the byte counts are exact)",
            markup=False,
        )
    _echo()
    out.print(stats_table(stats, dt))
