"""C-family renderers: one renderer, small dialect classes (OpenCL C so far)."""

from .opencl import OpenCL
from .render import CRenderer, Dialect, Rendered, coverage

__all__ = ["CRenderer", "Dialect", "OpenCL", "Rendered", "coverage"]
