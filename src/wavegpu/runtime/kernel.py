"""The Python SDK: `@wg.kernel` functions that compile once (cached in memory and on disk) and run
with NumPy arrays and scalars; `wg.compile` for sources, paths and functions."""

from __future__ import annotations

import hashlib
import inspect
import os
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import CompileError, Diagnostic, WaveError
from ..wbin.program import Program
from .buffers import pack

COMPILER_VERSION = "1"
_MEMORY_CACHE: dict[str, Program] = {}


def cache_dir() -> Path | None:
    d = os.environ.get("WAVEGPU_CACHE_DIR")
    if d == "":
        return None
    return Path(d) if d else Path.home() / ".cache" / "wavegpu"


def _cache_key(source: str, options: dict[str, object]) -> str:
    h = hashlib.sha256()
    h.update(COMPILER_VERSION.encode())
    h.update(source.encode())
    h.update(repr(sorted(options.items())).encode())
    return h.hexdigest()


def compile_cached(source_key: str, options: dict[str, object], build: Callable[[], Program]) -> Program:
    key = _cache_key(source_key, options)
    prog = _MEMORY_CACHE.get(key)
    if prog is not None:
        return prog
    d = cache_dir()
    path = d / f"{key}.wbin" if d is not None else None
    if path is not None and path.exists():
        try:
            prog = Program.from_bytes(path.read_bytes(), str(path))
        except (WaveError, OSError):
            prog = None  # a damaged cache entry is rebuilt
    if prog is None:
        prog = build()
        if path is not None:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                tmp = path.with_suffix(f".{os.getpid()}.tmp")
                tmp.write_bytes(prog.to_bytes())
                os.replace(tmp, path)
            except OSError:
                pass  # the cache is an optimisation; a read-only home still compiles
    _MEMORY_CACHE[key] = prog
    return prog


class KernelFunction:
    """A Python function compiled for WAVE; call it with grid= (and workgroup=) to run it."""

    def __init__(
        self,
        fn: Callable[..., Any],
        opt: int = 2,
        max_registers: int | None = None,
        workgroup: int | Sequence[int] | None = None,
    ):
        self.python = fn
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

    @property
    def program(self) -> Program:
        from ..compiler import Options, compile_python

        def build() -> Program:
            return compile_python(
                self.python,
                Options(opt=self.opt, max_registers=self.max_registers, workgroup=self.workgroup),
            )  # type: ignore[arg-type]

        return compile_cached(self.source, self.options(), build)

    def __call__(
        self,
        *args: Any,
        grid: int | Sequence[int],
        workgroup: int | Sequence[int] | None = None,
        device: str = "emulator",
        wave_width: int = 32,
        check: bool = False,
    ) -> Any:
        from .launch import launch

        prog = self.program
        k = prog.kernels[0]
        layout = pack(k, list(args))
        res = launch(
            prog,
            device=device,
            grid=grid,
            workgroup=workgroup or k.workgroup_size,
            memory=layout.memory,
            args=layout.args,
            wave_width=wave_width,
            check=check,
        )
        for p, a in zip(k.params, args):
            if p.kind == "buffer" and isinstance(a, np.ndarray):
                new = layout.read(res.memory, p.name)
                if not np.array_equal(new.view(np.uint8), np.ascontiguousarray(a).reshape(-1).view(np.uint8)):
                    np.copyto(a, new.reshape(a.shape).astype(a.dtype, copy=False))
        return res

    def __repr__(self) -> str:
        return f"<wavegpu kernel {self.__name__}>"


def kernel(
    fn: Callable[..., Any] | None = None,
    *,
    opt: int = 2,
    max_registers: int | None = None,
    workgroup: int | Sequence[int] | None = None,
) -> Any:
    """Decorator: `@wg.kernel` or `@wg.kernel(max_registers=16, opt=3, workgroup=(256, 1, 1))`."""
    if fn is None:
        return lambda f: KernelFunction(f, opt, max_registers, workgroup)
    return KernelFunction(fn, opt, max_registers, workgroup)


LANGS = {
    ".py": "python",
    ".rs": "rust",
    ".cpp": "cpp",
    ".cc": "cpp",
    ".cu": "cpp",
    ".ts": "typescript",
}


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
    from ..compiler import Options, compile_python

    options = Options(opt=opt, max_registers=max_registers, dump_after=set(dump_after), passes=passes)
    filename = None
    if isinstance(source, KernelFunction):
        source = source.python
    elif isinstance(source, os.PathLike) or (
        isinstance(source, str) and "\n" not in source and Path(source).suffix in LANGS and Path(source).exists()
    ):
        path = Path(source)  # type: ignore[arg-type]
        lang = lang or LANGS[path.suffix]
        filename = str(path)
        source = path.read_text(encoding="utf-8")
    lang = lang or "python"
    if lang != "python":
        raise CompileError([Diagnostic(f"the {lang} frontend is not available yet (only python)")])
    prog = compile_python(source, options, filename)
    if dumps is not None:
        dumps.extend(options.dumps)
    return prog
