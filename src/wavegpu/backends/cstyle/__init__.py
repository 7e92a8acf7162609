"""C-family renderers: one renderer, small dialect classes (OpenCL C and CUDA C++ so far)."""

from .cuda import CUDA
from .opencl import OpenCL
from .render import CRenderer, Dialect, Rendered, coverage

__all__ = ["CUDA", "CRenderer", "Dialect", "OpenCL", "Rendered", "coverage"]
