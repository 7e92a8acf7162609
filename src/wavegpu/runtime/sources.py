"""Kernels of any source language called from Python: `wg.load_kernels("k.rs")`.

The callables take NumPy arrays and scalars exactly as `@wg.kernel` functions do (docs/sdk.md:
exact dtypes, hidden length arguments filled in, only changed writable arrays copied back), bound
by the parameter names of the source, positionally or by keyword.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ..errors import CompileError, Diagnostic, WaveError
from ..wbin.program import Kernel, Program
from .buffers import hidden_of
from .cache import compile_cached
from .call import Configured, run_kernel, split_call
from .compile import read_source


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

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Run with `grid=` (and `workgroup=`, `device=`, `engine=`, `check=`, ...: every call option
        of `@wg.kernel` functions, kernel.CALL_OPTIONS); a keyword that names a parameter is an
        argument, and an option of that name is given through `configure(...)`."""
        return self.call(args, kwargs, {})

    def configure(self, **options: Any) -> Configured:
        """This kernel with call options given ahead: `k.configure(grid=4, device="cuda")(x, y)`."""
        return Configured(self, options)

    def call(self, args: tuple[Any, ...], kwargs: dict[str, Any], preset: Mapping[str, Any]) -> Any:
        arguments, options = split_call(self.__name__, list(self.params), args, kwargs, preset)
        return run_kernel(self.kernel, self.bind(args, arguments), boundscheck=self.boundscheck, **options)

    def __repr__(self) -> str:
        return f"<wavegpu kernel {self.__name__} ({', '.join(self.params)})>"


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

    text, filename, lang = read_source(source, lang)
    if filename is not None:
        filename = str(Path(filename).resolve())
    elif lang is None:
        raise CompileError([Diagnostic("load_kernels of source text needs lang= (python, rust, cpp, typescript)")])
    name = frontend(lang).name
    options = {"opt": opt, "max_registers": max_registers, "lang": name}

    def build() -> Program:
        return compile_source(text, Options(opt=opt, max_registers=max_registers), filename, name)

    context: dict[str, object] = {"file": filename, **options}
    dependencies = getattr(frontend(lang), "dependencies", None)  # C++: the headers it includes
    if dependencies is not None and filename is not None:
        context["headers"] = [(p, hashlib.sha256(t.encode()).hexdigest()) for p, t in dependencies(text, filename)]
    program = compile_cached(text, context, build)
    return Kernels(program, boundscheck)


__all__ = ["Kernels", "SourceKernel", "load_kernels"]
