"""The Python SDK: `@wg.kernel` functions that compile once (cached in memory and on disk) and run
with NumPy arrays and scalars; `wg.compile` for sources, paths and functions."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import inspect
import os
import re
import textwrap
import types
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import BOM, CompileError, Diagnostic, WaveError
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


def used_globals(fn: Callable[..., Any], _seen: set[int] | None = None) -> dict[str, str]:
    """The module-level values a function refers to (constants, by repr; others by type), and
    for the functions it may call as helpers (a def of a user module, by name or as a module's
    attribute) their source and the values they use in turn: a helper edited in another module
    is a new binary."""
    seen = set() if _seen is None else _seen
    seen.add(id(fn))
    g = getattr(fn, "__globals__", {})
    out: dict[str, str] = {}
    names = sorted(_names(fn.__code__)) if hasattr(fn, "__code__") else []
    for name in names:
        if name in g:
            v = g[name]
            simple = isinstance(v, SIMPLE_VALUES) or (
                isinstance(v, tuple) and all(isinstance(x, SIMPLE_VALUES) for x in v)
            )
            out[name] = repr(v) if simple else type(v).__qualname__
            if inspect.ismodule(v) and not v.__name__.startswith(("wavegpu", "math", "numpy")):
                for attr in names:  # `mylib.sq(x)`: the attribute's name is among the code's names
                    out |= _helper_key(f"{name}.{attr}", getattr(v, attr, None), seen)
            else:
                out |= _helper_key(name, v, seen)
    return out


def _helper_key(name: str, v: object, seen: set[int]) -> dict[str, str]:
    """A user function's source and used values, as cache-key entries (nothing for other values)."""
    if not inspect.isfunction(v) or id(v) in seen or (v.__module__ or "").startswith("wavegpu"):
        return {}
    try:
        text = inspect.getsource(v)
    except (OSError, TypeError):
        text = "<no source>"
    digest = hashlib.sha256(text.encode()).hexdigest()
    inner = used_globals(v, seen)
    return {f"{name}()": digest, **{f"{name}().{k}": x for k, x in inner.items()}}


_MISSING = object()


def helper_bindings(fn: Callable[..., Any], _seen: set[int] | None = None) -> list[tuple[dict[str, Any], str, object]]:
    """(namespace, name, function) of every user function a kernel may call as a helper, directly
    or through others (`sq` of its globals, `mylib.sq` of a module it uses): a later call compiles
    again when one of these names is bound to another function (a helper redefined)."""
    seen = set() if _seen is None else _seen
    seen.add(id(fn))
    g = getattr(fn, "__globals__", {})
    names = _names(fn.__code__) if hasattr(fn, "__code__") else set()
    out: list[tuple[dict[str, Any], str, object]] = []
    for name in names:
        v = g.get(name)
        places: list[tuple[dict[str, Any], str, object]] = [(g, name, v)]
        if inspect.ismodule(v) and not v.__name__.startswith(("wavegpu", "math", "numpy")):
            places = [(vars(v), a, getattr(v, a, None)) for a in names]
        for d, n, w in places:
            if inspect.isfunction(w) and not (w.__module__ or "").startswith("wavegpu"):
                out.append((d, n, w))  # every binding, also of a function met before
                if id(w) not in seen:
                    out += helper_bindings(w, seen)
    return out


def _same_globals(fn: Callable[..., Any], seen: tuple[tuple[str, object], ...]) -> bool:
    """Whether every module-level name the function uses still holds the very object it held
    (an identical object has the repr and type used_globals gave the full key)."""
    g = getattr(fn, "__globals__", {})
    return all(g.get(n, _MISSING) is v for n, v in seen)


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


_CALL: list[Any] = []  # run_kernel's functions from device_arrays and launch, imported on its first call


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
    if not _CALL:
        from .device_arrays import has_device_arrays, run_resident
        from .launch import check_mma, launch

        _CALL.extend((has_device_arrays, run_resident, check_mma, launch))
    has_device_arrays, run_resident, check_mma, launch = _CALL

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
    from ..emulator.launch import check_threads, dim3

    # the launch's size first: a refused launch builds no memory image of the arrays
    wg_size = workgroup if workgroup is not None else (k.workgroup_size or DEFAULT_WORKGROUP)
    check_threads(dim3(grid, "grid"), dim3(wg_size, "workgroup"), k)
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


CALL_OPTIONS = (
    "grid",
    "workgroup",
    "device",
    "wave_width",
    "check",
    "max_instructions",
    "progress",
    "arch",
    "engine",
    "mma",
)
"""The keyword options of a kernel call, the same for `@wg.kernel` and `wg.load_kernels` kernels:
run_kernel's keyword parameters but `boundscheck` (a kernel's own; a test checks they agree)."""


def split_call(
    name: str, params: Sequence[str], args: tuple[Any, ...], kwargs: dict[str, Any], preset: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A call's keywords as (arguments, options). A keyword that names a kernel parameter is an
    argument, as Python binds it, even where a call option has that name; such an option is given
    through `kernel.configure(option=...)` (`preset`) instead (docs/sdk.md)."""
    arguments: dict[str, Any] = {}
    options = dict(preset)
    for k, v in kwargs.items():
        if k in params:
            if k in CALL_OPTIONS and params.index(k) < len(args):
                raise WaveError(
                    f"kernel {name!r}: {k!r} is a parameter of the kernel, given by position, and a call "
                    f"option: give the option with {name}.configure({k}=...)(...)"
                )
            arguments[k] = v
        elif k in CALL_OPTIONS:
            options[k] = v
        else:
            arguments[k] = v  # the binding names the unknown parameter
    if "grid" not in options:
        if "grid" in params:
            raise WaveError(
                f"kernel {name!r} has a parameter named 'grid' (grid= is its argument): give the launch's "
                f"grid with {name}.configure(grid=...)(...)"
            )
        raise WaveError(f"kernel {name!r}: give the launch's grid, grid=N (workgroups)")
    return arguments, options


def check_options(name: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """The options of `kernel.configure(...)`, each a call option."""
    for k in options:
        if k not in CALL_OPTIONS:
            raise WaveError(f"kernel {name!r}: {k!r} is not a call option ({', '.join(CALL_OPTIONS)})")
    return dict(options)


class Configured:
    """A kernel with call options given ahead (`kernel.configure(grid=4)`): calling it binds every
    keyword that names a parameter to that parameter."""

    def __init__(self, kernel: Any, options: Mapping[str, Any]):
        self.kernel = kernel
        self.options = check_options(kernel.__name__, options)

    def configure(self, **options: Any) -> Configured:
        return Configured(self.kernel, {**self.options, **options})

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.kernel.call(args, kwargs, self.options)

    def __repr__(self) -> str:
        opts = ", ".join(f"{k}={v!r}" for k, v in self.options.items())
        return f"{self.kernel!r}.configure({opts})"


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
        self._file: str | None = None  # the source file (abspath), found on the first compile
        # (stamp, options, globals seen, program, helper bindings): `program`
        self._hit: tuple[object, ...] | None = None
        self._signature: inspect.Signature | None = None  # read on the first call (`_binder`)
        self._params: tuple[str, ...] = ()
        self._plain = False  # every parameter positional-or-keyword without a default: bound by zip

    def _binder(self) -> inspect.Signature:
        """The function's signature, read once (on the first call, as before: an object whose
        signature cannot be read fails there)."""
        if self._signature is None:
            sig = inspect.signature(self.python)
            self._params = tuple(sig.parameters)
            self._plain = all(
                p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD and p.default is inspect.Parameter.empty
                for p in sig.parameters.values()
            )
            self._signature = sig
        return self._signature

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
        def build() -> Program:
            from ..compiler import Options, compile_python

            return compile_python(
                self.python,
                Options(opt=self.opt, max_registers=self.max_registers, workgroup=self.workgroup),
            )  # type: ignore[arg-type]

        stamp = self._stamp()
        hit = self._hit
        if (
            stamp is not None
            and hit is not None
            and hit[0] == stamp
            and hit[1] == (self.opt, self.max_registers, self.workgroup)
            and _same_globals(self.python, hit[2])
            and all(d.get(n, _MISSING) is w for d, n, w in hit[4])  # type: ignore[attr-defined]
        ):
            return hit[3]  # type: ignore[return-value]
        options = (self.opt, self.max_registers, self.workgroup)
        g = getattr(self.python, "__globals__", {})
        names = sorted(_names(self.python.__code__)) if hasattr(self.python, "__code__") else []
        seen = tuple((n, g.get(n, _MISSING)) for n in names)
        context = self.context()
        file = context["file"]
        self._file = file if isinstance(file, str) else None
        stamp = self._stamp()  # before the text is read: a file edited meanwhile misses next time
        prog = compile_cached(self.source, context, build)
        self._hit = (stamp, options, seen, prog, helper_bindings(self.python))
        return prog

    def _stamp(self) -> tuple[int, ...] | None:
        """The identity of the source file as the file system sees it (device, inode, size,
        modification time in ns, change time in ns), or None (no file: every call takes the full
        key). A program compiled from a file with the same stamp, the same options and the same
        module-level objects is the one the full key would find: the text was not read again."""
        if self._file is None:
            return None
        try:
            st = os.stat(self._file)
        except OSError:
            return None
        return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)

    def bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        """Positional and keyword arguments by parameter name, as Python binds them (the
        signature is read once; the plain case, every argument given once, binds by zip, and
        anything else goes through inspect's binding for its exact messages)."""
        sig = self._binder()
        params = self._params
        if self._plain and len(args) + len(kwargs) == len(params):
            if not kwargs:
                return dict(zip(params, args))
            out = dict(zip(params, args))
            rest = params[len(args) :]
            if all(k in kwargs for k in rest):
                for k in rest:
                    out[k] = kwargs[k]
                return out
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as e:
            raise WaveError(f"kernel {self.__name__!r}: {e}") from None
        bound.apply_defaults()
        return dict(bound.arguments)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Run on a device with NumPy arrays and scalars (docs/sdk.md: the calling convention):
        keywords `grid=` (required), `workgroup=`, `device=`, `wave_width=`, `check=`,
        `max_instructions=`, `progress=`, `arch=`, `engine=`, `mma=` (CALL_OPTIONS) unless the
        kernel has a parameter of that name (then `configure(...)` gives the option).

        Arrays must have exactly the parameters' element types; only arrays the kernel may write
        are copied back, where they changed; nothing is copied back when the run traps."""
        return self.call(args, kwargs, {})

    def configure(self, **options: Any) -> Configured:
        """This kernel with call options given ahead: `k.configure(grid=4, device="cuda")(x, y)`."""
        return Configured(self, options)

    def call(self, args: tuple[Any, ...], kwargs: dict[str, Any], preset: Mapping[str, Any]) -> Any:
        self._binder()
        arguments, options = split_call(self.__name__, self._params, args, kwargs, preset)
        return run_kernel(self.program.kernels[0], self.bind(args, arguments), boundscheck=self.boundscheck, **options)

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


def is_path(source: object) -> bool:
    """Whether wg.compile and wg.load_kernels read `source` as a path: an os.PathLike, or a string
    of one line that names an existing file or whose last component is a file name with a suffix
    (`k.txt`, `dir/k.wave`: no space, no parenthesis; source text is never one)."""
    if isinstance(source, os.PathLike):
        return True
    if not isinstance(source, str) or "\n" in source or not source.strip():
        return False
    return (
        os.path.isfile(source) or re.fullmatch(r"[^\s()]*\.[A-Za-z][A-Za-z0-9_]*", os.path.basename(source)) is not None
    )


def read_source(
    source: str | bytes | bytearray | os.PathLike[str], lang: str | None
) -> tuple[str, str | None, str | None]:
    """Source text, its file name (None for text) and its language (None: not known) from source
    text, bytes or a path (is_path); a path's language comes from its suffix unless `lang` names
    it. Refused with a message: a path to no file, a .wave or .wbin path (not kernel source), a
    suffix of no language without lang=, bytes that are not UTF-8 (with their line and column).
    A leading byte order mark is skipped."""
    from ..errors import decode_source

    if isinstance(source, bytes | bytearray):
        return decode_source(bytes(source), "<bytes>", "source bytes are not UTF-8 text", CompileError), None, lang
    if not is_path(source):
        return str(source).removeprefix(BOM), None, lang
    path = Path(source)
    filename = str(path)
    suffix = path.suffix
    if suffix in (".wave", ".wbin"):
        how = "wg.assemble(text, path) or `wave asm`" if suffix == ".wave" else "wg.load(path)"
        kind = "WAVE assembly" if suffix == ".wave" else "a compiled binary"
        raise CompileError([Diagnostic(f"{filename} is {kind}, not kernel source: read it with {how}")])
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise CompileError([Diagnostic(f"no such file: {filename}")]) from None
    except OSError as e:
        raise CompileError([Diagnostic(f"cannot read {filename}: {e.strerror or e}")]) from None
    lang = lang or LANGS.get(suffix)
    if lang is None:
        known = ", ".join(sorted(LANGS))
        raise CompileError(
            [Diagnostic(f"{filename}: no kernel language has the suffix {suffix or '(none)'!r} ({known}): give lang=")]
        )
    return decode_source(data, filename, "not UTF-8 text", CompileError), filename, lang


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

    A string of one line that looks like a file name is a path (is_path); its suffix names the
    language unless `lang=` does. `passes` replaces the -O pipeline by an explicit list of pass names."""
    from ..compiler import Options, compile_source
    from ..compiler.frontends import frontend

    options = Options(opt=opt, max_registers=max_registers, dump_after=set(dump_after), passes=passes)
    filename = None
    if isinstance(source, KernelFunction):
        source = source.python
    elif isinstance(source, str | bytes | bytearray | os.PathLike):
        source, filename, lang = read_source(source, lang)
    lang = frontend(lang or "python").name  # CompileError naming the available frontends
    prog = compile_source(source, options, filename, lang)
    if dumps is not None:
        dumps.extend(options.dumps)
    return prog
