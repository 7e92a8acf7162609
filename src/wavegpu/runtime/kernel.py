"""The Python SDK: `@wg.kernel` functions that compile once (cached in memory and on disk) and run
with NumPy arrays and scalars; `wg.compile` for sources, paths and functions."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import inspect
import os
import textwrap
import types
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import CompileError, Diagnostic, WaveError
from ..wbin.program import Kernel, Program
from . import files
from .buffers import pack

_MEMORY_CACHE: dict[str, Program] = {}
# a call's workgroup when neither the call nor the kernel gives one: the size the Rust
# toolchain's compiler records in every binary, so its kernels that assume 256 run unchanged
DEFAULT_WORKGROUP = 256
SIMPLE_VALUES = (int, float, bool, str, complex, bytes, np.generic)


def cache_dir() -> files.PrivateDir | None:
    """The folder of compiled kernels (cache root/kernels, private: 0700 and owned by the user),
    open (close it), or None: the disk cache is off (WAVEGPU_CACHE_DIR set empty) or its folder
    is refused (a warning)."""
    if files.disk_cache_off():
        return None
    try:
        return files.open_private("kernels")
    except WaveError as e:
        warnings.warn(f"wavegpu: compile cache off: {e}", stacklevel=3)
        return None


@functools.cache
def compiler_version() -> str:
    """The package's version and a hash of its own source: an upgraded or edited wavegpu never
    serves binaries an older one compiled."""
    import importlib.metadata  # here: it loads email, zipfile, csv (start-up of `wave run k.py`)

    h = hashlib.sha256()
    try:
        h.update(importlib.metadata.version("wavegpu").encode())
    except importlib.metadata.PackageNotFoundError:
        h.update(b"unknown")
    root = Path(__file__).resolve().parents[1]
    for f in sorted(root.rglob("*.py")):
        h.update(str(f.relative_to(root)).encode() + b"\0")
        h.update(f.read_bytes())
    return h.hexdigest()


def _names(code: types.CodeType) -> set[str]:
    out = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            out |= _names(c)
    return out


def used_globals(fn: Callable[..., Any]) -> dict[str, str]:
    """The module-level values a function refers to (constants, by repr; others by type and id)."""
    g = getattr(fn, "__globals__", {})
    out: dict[str, str] = {}
    for name in sorted(_names(fn.__code__)) if hasattr(fn, "__code__") else ():
        if name in g:
            v = g[name]
            simple = isinstance(v, SIMPLE_VALUES) or (
                isinstance(v, tuple) and all(isinstance(x, SIMPLE_VALUES) for x in v)
            )
            out[name] = repr(v) if simple else type(v).__qualname__
    return out


def _cache_key(source: str, context: dict[str, object]) -> str:
    h = hashlib.sha256()
    h.update(compiler_version().encode())
    h.update(source.encode())
    h.update(repr(sorted(context.items())).encode())
    return h.hexdigest()


def compile_cached(source_key: str, context: dict[str, object], build: Callable[[], Program]) -> Program:
    """A program from the memory cache, the disk cache, or `build` (then stored in both).

    `context` holds everything besides the text that the binary depends on: the file and first
    line (the line table), the module-level values used, and the options. An entry that cannot
    be read for any reason is rebuilt; entries are written through unique temporary names."""
    key = _cache_key(source_key, context)
    prog = _MEMORY_CACHE.get(key)
    if prog is not None:
        return prog
    d = cache_dir()
    try:
        name = f"{key}.wbin"
        if d is not None:
            try:  # read through the folder's descriptor: the file checked is the file read
                prog = Program.from_bytes(d.read_bytes(name), d.where(name))
            except Exception:
                prog = None
        if prog is None:
            prog = build()
            if d is not None:
                with contextlib.suppress(OSError):  # the cache is an optimisation; a read-only home still compiles
                    d.write_bytes(name, prog.to_bytes())
    finally:
        if d is not None:
            d.close()
    _MEMORY_CACHE[key] = prog
    return prog


def run_kernel(
    k: Kernel,
    values: Sequence[object] | Mapping[str, object],
    *,
    grid: int | Sequence[int],
    workgroup: int | Sequence[int] | None = None,
    device: str = "emulator",
    wave_width: int | None = None,
    check: bool = False,
    max_instructions: int | None = None,
    progress: bool = False,
    boundscheck: bool = False,
    arch: str | None = None,
    engine: str | None = None,
    mma: str | None = None,
) -> Any:
    """One kernel call with the calling convention of docs/sdk.md, whatever the source language:
    pack the arguments (by parameter position or name), launch, copy changed writable arrays back.
    `mma`: the mma path on device="cuda" (wg.launch)."""
    from .device_arrays import has_device_arrays, run_resident
    from .launch import check_mma, launch

    check_mma(mma, device)

    if wave_width is None:  # device="amdgcn-sim" runs wave64 code; the others default to 32
        wave_width = 64 if device == "amdgcn-sim" else 32

    if has_device_arrays(values):  # arrays in a device's heap: launch there (docs/sdk.md, device arrays)
        return run_resident(
            k,
            values,
            grid=grid,
            workgroup=workgroup if workgroup is not None else (k.workgroup_size or DEFAULT_WORKGROUP),
            device=device,
            wave_width=wave_width,
            check=check,
            max_instructions=max_instructions,
            progress=progress,
            boundscheck=boundscheck,
            mma=mma,
        )
    layout = pack(k, values, counts=False)
    res = launch(
        k,
        device=device,
        grid=grid,
        workgroup=workgroup if workgroup is not None else (k.workgroup_size or DEFAULT_WORKGROUP),
        memory=layout.memory,
        args=layout.args,
        wave_width=wave_width,
        check=check,
        max_instructions=max_instructions,
        progress=progress,
        buffers=layout.regions(),
        boundscheck=boundscheck,
        zero_division=check or boundscheck,
        arch=arch,
        engine=engine,
        mma=mma,
    )
    layout.write_back(res.memory)
    return res


class KernelFunction:
    """A Python function compiled for WAVE; call it with grid= (and workgroup=) to run it."""

    def __init__(
        self,
        fn: Callable[..., Any],
        opt: int = 2,
        max_registers: int | None = None,
        workgroup: int | Sequence[int] | None = None,
        boundscheck: bool = False,
    ):
        self.python = fn
        self.boundscheck = boundscheck
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn
        self.opt = opt
        self.max_registers = max_registers
        self.workgroup = None if workgroup is None else tuple([workgroup] if isinstance(workgroup, int) else workgroup)

    @property
    def source(self) -> str:
        try:
            return textwrap.dedent(inspect.getsource(self.python))
        except (OSError, TypeError) as e:
            raise CompileError(
                [Diagnostic(f"cannot read the source of {self.__name__!r}: {e} (kernels must be defined in a file)")]
            ) from None

    def options(self) -> dict[str, object]:
        return {"opt": self.opt, "max_registers": self.max_registers, "workgroup": self.workgroup}

    def context(self) -> dict[str, object]:
        """What the binary depends on besides the text: where it is, the values it uses, options."""
        code = getattr(self.python, "__code__", None)
        try:
            file = inspect.getsourcefile(self.python)
        except TypeError:
            file = None
        return {
            "file": os.path.abspath(file) if file else None,
            "line": code.co_firstlineno if code is not None else None,
            "globals": used_globals(self.python),
            **self.options(),
        }

    @property
    def program(self) -> Program:
        from ..compiler import Options, compile_python

        def build() -> Program:
            return compile_python(
                self.python,
                Options(opt=self.opt, max_registers=self.max_registers, workgroup=self.workgroup),
            )  # type: ignore[arg-type]

        return compile_cached(self.source, self.context(), build)

    def bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        """Positional and keyword arguments by parameter name, as Python binds them."""
        try:
            bound = inspect.signature(self.python).bind(*args, **kwargs)
        except TypeError as e:
            raise WaveError(f"kernel {self.__name__!r}: {e}") from None
        bound.apply_defaults()
        return dict(bound.arguments)

    def __call__(
        self,
        *args: Any,
        grid: int | Sequence[int],
        workgroup: int | Sequence[int] | None = None,
        device: str = "emulator",
        wave_width: int | None = None,
        check: bool = False,
        max_instructions: int | None = None,
        progress: bool = False,
        arch: str | None = None,
        engine: str | None = None,
        mma: str | None = None,
        **kwargs: Any,
    ) -> Any:
        """Run on `device` with NumPy arrays and scalars (docs/sdk.md: the calling convention).

        Arrays must have exactly the parameters' element types; only arrays the kernel may write
        are copied back, where they changed; nothing is copied back when the run traps."""
        return run_kernel(
            self.program.kernels[0],
            self.bind(args, kwargs),
            grid=grid,
            workgroup=workgroup,
            device=device,
            wave_width=wave_width,
            check=check,
            max_instructions=max_instructions,
            progress=progress,
            boundscheck=self.boundscheck,
            arch=arch,
            engine=engine,
            mma=mma,
        )

    def __repr__(self) -> str:
        return f"<wavegpu kernel {self.__name__}>"


def kernel(
    fn: Callable[..., Any] | None = None,
    *,
    opt: int = 2,
    max_registers: int | None = None,
    workgroup: int | Sequence[int] | None = None,
    boundscheck: bool = False,
) -> Any:
    """Decorator: `@wg.kernel` or `@wg.kernel(max_registers=16, opt=3, workgroup=(256, 1, 1))`.

    `boundscheck=True` checks every array access against its own array on every call (as
    `check=True` does), not only against the gaps between arrays."""
    if fn is None:
        return lambda f: KernelFunction(f, opt, max_registers, workgroup, boundscheck)
    return KernelFunction(fn, opt, max_registers, workgroup, boundscheck)


def _languages() -> dict[str, str]:
    from ..compiler.frontends import suffixes

    return suffixes()


LANGS = _languages()  # source suffix -> language (compiler/frontends: FRONTENDS and LANGUAGES)


def compile(
    source: object,
    lang: str | None = None,
    opt: int = 2,
    max_registers: int | None = None,
    dump_after: Sequence[str] = (),
    dumps: list[tuple[str, str]] | None = None,
    passes: list[str] | None = None,
) -> Program:
    """Compile source text, a path, or a (decorated) function to a Program.

    `passes` replaces the -O pipeline by an explicit list of pass names."""
    from ..compiler import Options, compile_source
    from ..compiler.frontends import frontend

    options = Options(opt=opt, max_registers=max_registers, dump_after=set(dump_after), passes=passes)
    filename = None
    if isinstance(source, bytes | bytearray):
        try:
            source = bytes(source).decode("utf-8")
        except UnicodeDecodeError as e:
            raise CompileError([Diagnostic(f"source bytes are not UTF-8 text (byte {e.start}: {e.reason})")]) from None
    if isinstance(source, KernelFunction):
        source = source.python
    elif isinstance(source, os.PathLike) or (
        isinstance(source, str) and "\n" not in source and Path(source.strip()).suffix in LANGS
    ):
        path = Path(source)  # type: ignore[arg-type]
        lang = lang or LANGS.get(path.suffix)
        filename = str(path)
        try:
            source = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise CompileError([Diagnostic(f"no such file: {filename}")]) from None
        except UnicodeDecodeError as e:
            raise CompileError([Diagnostic(f"{filename}: not UTF-8 text (byte {e.start}: {e.reason})")]) from None
        except OSError as e:
            raise CompileError([Diagnostic(f"cannot read {filename}: {e.strerror or e}")]) from None
    lang = frontend(lang or "python").name  # CompileError naming the available frontends
    prog = compile_source(source, options, filename, lang)
    if dumps is not None:
        dumps.extend(options.dumps)
    return prog
