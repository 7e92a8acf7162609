"""wavegpu: the WAVE GPU ISA with assembler, .wbin container, emulator, compiler and backends.

Imports are lazy: `import wavegpu` loads nothing else (not even `typing`: the resident
command client, cli/resident.py, starts from here); every public name, the error classes too, is
looked up in `_EXPORTS` (name -> (module, attribute)) on first use, so a command that only
emulates never imports the compiler, the backends, rich or a GPU runtime. To export a new name,
add one line to `_EXPORTS` (tests/emulator/test_lazy_imports.py checks that every entry
resolves and that the kernel builtins of runtime.pyexec are all listed).
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (type checkers read it as True)
if TYPE_CHECKING:
    from typing import Any

_ERRORS = (
    "AsmError CapabilityError CompileError Diagnostic EncodingError EngineWarning Span Trap UndefinedBehaviour "
    "WaveError WaveWarning WbinError"
)

# runtime/pyexec.__all__: the rows of compiler/builtins.py, python_thread and static_range
# (tests/compiler/test_builtin_table.py checks it)
_PYEXEC = (
    "atomic_add atomic_and atomic_cas atomic_exchange atomic_max atomic_min atomic_or atomic_sub "
    "atomic_xor barrier ceil clamp clamp_keep_nan clz cos ctz exp exp2 fence floor fma fmax fmin "
    "global_id global_size grid_size isnan lane_id local_array log log2 popcount pow "
    "private_array python_thread round_away round_even round_half_up rsqrt sign signum sin sqrt "
    "static_range thread_id trunc wave_all wave_any wave_ballot wave_broadcast wave_id "
    "wave_prefix_add wave_reduce_add wave_reduce_and wave_reduce_max wave_reduce_min "
    "wave_reduce_or wave_shuffle wave_shuffle_down wave_shuffle_up wave_shuffle_xor wave_width "
    "workgroup_id workgroup_size"
)

_EXPORTS: dict[str, tuple[str, str]] = {
    **{name: (".errors", name) for name in _ERRORS.split()},
    "__version__": (".version", "__version__"),
    "assemble": (".asm", "assemble"),
    "translate": (".backends", "translate"),
    "bool_": (".compiler.types", "BOOL"),
    "f16": (".compiler.types", "F16"),
    "f32": (".compiler.types", "F32"),
    "f64": (".compiler.types", "F64"),
    "i8": (".compiler.types", "I8"),
    "i16": (".compiler.types", "I16"),
    "i32": (".compiler.types", "I32"),
    "u8": (".compiler.types", "U8"),
    "u16": (".compiler.types", "U16"),
    "u32": (".compiler.types", "U32"),
    "disassemble": (".dis", "disassemble"),
    "EmulationResult": (".emulator", "EmulationResult"),
    "Stats": (".emulator", "Stats"),
    "emulate": (".emulator", "emulate"),
    "ISA_VERSION": (".isa", "ISA_VERSION"),
    "DataType": (".isa", "DataType"),
    "get_capability": (".isa", "get_capability"),
    "EMULATOR": (".isa.capabilities", "EMULATOR"),
    "DeviceCaps": (".isa.capabilities", "DeviceCaps"),
    "KernelFunction": (".runtime.kernel", "KernelFunction"),
    "compile": (".runtime.compile", "compile"),
    "kernel": (".runtime.kernel", "kernel"),
    "devices": (".runtime.devices", "devices"),
    "launch": (".runtime.launch", "launch"),
    "launch_many": (".runtime.cluster", "launch_many"),
    "load_kernels": (".runtime.sources", "load_kernels"),
    "DeviceArray": (".runtime.device_arrays", "DeviceArray"),
    "device_array": (".runtime.device_arrays", "device_array"),
    "to_device": (".runtime.device_arrays", "to_device"),
    "Kernel": (".wbin", "Kernel"),
    "Param": (".wbin", "Param"),
    "Program": (".wbin", "Program"),
    "load": (".wbin", "load"),
    **{name: (".runtime.pyexec", name) for name in _PYEXEC.split()},
}
"""Public name -> (module relative to wavegpu, attribute): resolved on first use."""

_SUBMODULES = frozenset(
    (
        "asm",
        "backends",
        "cli",
        "codegen",
        "compiler",
        "dis",
        "emulator",
        "encoding",
        "errors",
        "isa",
        "paths",
        "runtime",
        "wbin",
    )
)


def __getattr__(name: str) -> Any:
    target = _EXPORTS.get(name)
    if target is None:
        if name in _SUBMODULES:  # wg.isa, wg.emulator, ... as attributes, imported on first use
            return importlib.import_module(f".{name}", __name__)
        raise AttributeError(f"module 'wavegpu' has no attribute {name!r}")
    value = getattr(importlib.import_module(target[0], __name__), target[1])
    globals()[name] = value  # later lookups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


__all__ = [name for name in _EXPORTS if not name.startswith("_")]

if TYPE_CHECKING:  # what type checkers and editors see (explicit re-exports)
    from .asm import assemble as assemble
    from .backends import translate as translate
    from .compiler.types import BOOL as bool_  # noqa: F401
    from .compiler.types import F16 as f16  # noqa: F401
    from .compiler.types import F32 as f32  # noqa: F401
    from .compiler.types import F64 as f64  # noqa: F401
    from .compiler.types import I8 as i8  # noqa: F401
    from .compiler.types import I16 as i16  # noqa: F401
    from .compiler.types import I32 as i32  # noqa: F401
    from .compiler.types import U8 as u8  # noqa: F401
    from .compiler.types import U16 as u16  # noqa: F401
    from .compiler.types import U32 as u32  # noqa: F401
    from .dis import disassemble as disassemble
    from .emulator import EmulationResult as EmulationResult
    from .emulator import Stats as Stats
    from .emulator import emulate as emulate
    from .errors import AsmError as AsmError
    from .errors import CapabilityError as CapabilityError
    from .errors import CompileError as CompileError
    from .errors import Diagnostic as Diagnostic
    from .errors import EncodingError as EncodingError
    from .errors import EngineWarning as EngineWarning
    from .errors import Span as Span
    from .errors import Trap as Trap
    from .errors import UndefinedBehaviour as UndefinedBehaviour
    from .errors import WaveError as WaveError
    from .errors import WaveWarning as WaveWarning
    from .errors import WbinError as WbinError
    from .isa import ISA_VERSION as ISA_VERSION
    from .isa import DataType as DataType
    from .isa import get_capability as get_capability
    from .isa.capabilities import EMULATOR as EMULATOR
    from .isa.capabilities import DeviceCaps as DeviceCaps
    from .runtime.cluster import launch_many as launch_many
    from .runtime.compile import compile as compile
    from .runtime.device_arrays import DeviceArray as DeviceArray
    from .runtime.device_arrays import device_array as device_array
    from .runtime.device_arrays import to_device as to_device
    from .runtime.devices import devices as devices
    from .runtime.kernel import KernelFunction as KernelFunction
    from .runtime.kernel import kernel as kernel
    from .runtime.launch import launch as launch
    from .runtime.pyexec import *  # noqa: F403
    from .runtime.pyexec import python_thread as python_thread
    from .runtime.sources import load_kernels as load_kernels
    from .wbin import Kernel as Kernel
    from .wbin import Param as Param
    from .wbin import Program as Program
    from .wbin import load as load
