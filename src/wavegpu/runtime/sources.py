"""Kernels of any source language called from Python: `wg.load_kernels("k.rs")`.

The callables take NumPy arrays and scalars exactly as `@wg.kernel` functions do (docs/sdk.md:
exact dtypes, hidden length arguments filled in, only changed writable arrays copied back), bound
by the parameter names of the source, positionally or by keyword.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import CompileError, Diagnostic, WaveError
from ..wbin.program import Kernel, Program
from .buffers import hidden_of
from .kernel import LANGS, compile_cached, run_kernel


class SourceKernel:
    """One kernel of a compiled program, callable with NumPy arrays (like a `@wg.kernel` function)."""

    def __init__(self, program: Program, kernel: Kernel, boundscheck: bool = False):
        self.program = program
        self.kernel = kernel
        self.boundscheck = boundscheck
        self.__name__ = kernel.name
        hidden = hidden_of(kernel)
        self.params = tuple(p.name for p in kernel.params if p.name not in hidden)

    def bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        """Arguments by parameter name, from positions and keywords, as Python binds them."""
        if len(args) > len(self.params):
            raise WaveError(f"kernel {self.__name__!r} takes {len(self.params)} arguments, got {len(args)}")
        out = dict(zip(self.params, args))
        for name, v in kwargs.items():
            if name not in self.params:
                raise WaveError(
                    f"kernel {self.__name__!r} has no parameter {name!r} (parameters: {', '.join(self.params)})"
                )
            if name in out:
                raise WaveError(f"kernel {self.__name__!r}: argument {name!r} given twice")
            out[name] = v
        missing = [p for p in self.params if p not in out]
        if missing:
            raise WaveError(f"kernel {self.__name__!r}: missing argument(s) {', '.join(missing)}")
        return out

    def __call__(self, *args: Any, grid: int | Sequence[int], **options: Any) -> Any:
        """Run with `grid=` (and `workgroup=`, `device=`, `check=`, `max_instructions=`, ... as
        for `@wg.kernel` functions); keyword arguments that name parameters are arguments."""
        run_options = {k: options.pop(k) for k in list(options) if k in _RUN_OPTIONS}
        return run_kernel(self.kernel, self.bind(args, options), grid=grid, boundscheck=self.boundscheck, **run_options)

    def __repr__(self) -> str:
        return f"<wavegpu kernel {self.__name__} ({', '.join(self.params)})>"


_RUN_OPTIONS = ("workgroup", "device", "wave_width", "check", "max_instructions", "progress", "arch")


class Kernels(Mapping[str, SourceKernel]):
    """The kernels of one source, by name (`ks["vector_add"]` or `ks.vector_add`)."""

    def __init__(self, program: Program, boundscheck: bool = False):
        self.program = program
        self._by_name = {k.name: SourceKernel(program, k, boundscheck) for k in program.kernels}

    def __getitem__(self, name: str) -> SourceKernel:
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"no kernel {name!r} (kernels: {', '.join(self._by_name)})") from None

    def __getattr__(self, name: str) -> SourceKernel:
        by_name = self.__dict__.get("_by_name", {})
        if name in by_name:
            return by_name[name]
        raise AttributeError(f"no kernel {name!r} (kernels: {', '.join(by_name)})")

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_name)

    def __len__(self) -> int:
        return len(self._by_name)

    def __repr__(self) -> str:
        return f"<wavegpu kernels {', '.join(self._by_name)}>"


def load_kernels(
    source: str | os.PathLike[str],
    lang: str | None = None,
    opt: int = 2,
    max_registers: int | None = None,
    boundscheck: bool = False,
) -> Kernels:
    """Compile a kernel source file (or text, with `lang=`) of any language once (cached like
    `@wg.kernel` functions) and return its kernels as callables taking NumPy arrays."""
    from ..compiler import Options, compile_source
    from ..compiler.frontends import frontend

    filename: str | None = None
    if isinstance(source, os.PathLike) or ("\n" not in str(source) and Path(str(source)).suffix in LANGS):
        path = Path(source)
        filename = str(path.resolve())
        lang = lang or LANGS.get(path.suffix)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as e:
            raise CompileError([Diagnostic(f"cannot read {path}: {e.strerror or e}")]) from None
        except UnicodeDecodeError as e:
            raise CompileError([Diagnostic(f"{path}: not UTF-8 text (byte {e.start}: {e.reason})")]) from None
    else:
        text = str(source)
        if lang is None:
            raise CompileError([Diagnostic("load_kernels of source text needs lang= (python, rust, cpp, typescript)")])
    name = frontend(lang).name
    options = {"opt": opt, "max_registers": max_registers, "lang": name}

    def build() -> Program:
        return compile_source(text, Options(opt=opt, max_registers=max_registers), filename, name)

    program = compile_cached(text, {"file": filename, **options}, build)
    return Kernels(program, boundscheck)


__all__ = ["Kernels", "SourceKernel", "load_kernels"]
