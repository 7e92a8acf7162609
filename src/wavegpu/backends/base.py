"""What every backend shares: the `Renderer` protocol and its result.

A backend is one `Backend` entry in `backends.BACKENDS` (name -> how to build its renderer and
the architectures it may target); `backends.render` and `backends.translate` dispatch through
that registry only. Backends import this module and `lift`, never each other.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from ..wbin.program import Kernel


@dataclass
class Rendered:
    """One kernel rendered for one target: the source and the entry point to launch."""

    source: str
    entry: str
    wave_width: int


class Renderer(Protocol):
    """A target's renderer, built with that target's options (an architecture for ptx)."""

    def render(self, k: Kernel, wave_width: int = 32, nargs: int | None = None) -> Rendered:
        """Kernel k as a complete source; `nargs` register presets become kernel arguments
        (default: the kernel's parameters)."""
        ...

    def render_module(self, kernels: Sequence[Kernel], wave_width: int = 32) -> str:
        """Every kernel in one source (shared preludes and helpers once)."""
        ...

    def coverage(self) -> dict[str, str]:
        """Row key -> how this renderer renders the row, 'unsupported: <why>', or 'missing'."""
        ...


@dataclass(frozen=True)
class Backend:
    """A registry entry: build the renderer for an architecture (None: the default)."""

    make: Callable[[str | None], Renderer]
    arches: tuple[str, ...] = ()  # the architectures `arch` may pick; empty: none to pick
