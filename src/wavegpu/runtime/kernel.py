"""`@wg.kernel`: Python functions compiled for WAVE once (through the compile cache, runtime/cache.py)
and called with NumPy arrays and scalars under the calling convention (runtime/call.py).

The names other modules and tools imported from here before the runtime's split (run_kernel,
CALL_OPTIONS, DEFAULT_WORKGROUP, split_call, Configured from call.py; compile_cached from
cache.py; compile, read_source, is_path, LANGS from compile.py) still resolve here; LANGS and the
compile.py names on first use, so importing this module loads no frontend."""

from __future__ import annotations

import inspect
import os
import textwrap
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..errors import CompileError, Diagnostic, WaveError
from ..wbin.program import Program
from .cache import MISSING, compile_cached, helper_bindings, names_of, same_globals, same_helpers, used_globals
from .call import CALL_OPTIONS, DEFAULT_WORKGROUP, Configured, run_kernel, split_call


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
        # (stamp, options, globals seen, program, helper bindings) of the last compile: `program`
        self._hit: (
            tuple[
                tuple[int, ...] | None,
                tuple[object, ...],
                tuple[tuple[str, object], ...],
                Program,
                list[tuple[dict[str, Any], str, object]],
            ]
            | None
        ) = None
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

            # the compiler reads a workgroup of 1 to 3 sizes (`Options.workgroup` names 3)
            wgs: Any = self.workgroup
            return compile_python(self.python, Options(opt=self.opt, max_registers=self.max_registers, workgroup=wgs))

        stamp = self._stamp()
        hit = self._hit
        if (
            stamp is not None
            and hit is not None
            and hit[0] == stamp
            and hit[1] == (self.opt, self.max_registers, self.workgroup)
            and same_globals(self.python, hit[2])
            and same_helpers(hit[4])
        ):
            return hit[3]
        options = (self.opt, self.max_registers, self.workgroup)
        g = getattr(self.python, "__globals__", {})
        names = sorted(names_of(self.python.__code__)) if hasattr(self.python, "__code__") else []
        seen = tuple((n, g.get(n, MISSING)) for n in names)
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


__all__ = [
    "CALL_OPTIONS",
    "DEFAULT_WORKGROUP",
    "Configured",
    "KernelFunction",
    "compile_cached",
    "kernel",
    "run_kernel",
    "split_call",
]
