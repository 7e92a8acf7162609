"""C-family renderers: one renderer, small dialect classes (OpenCL C, CUDA C++ and HIP so far)."""

from .cuda import CUDA
from .hip import HIP
from .opencl import OpenCL
from .render import CRenderer, Dialect, Rendered, coverage

__all__ = ["CUDA", "HIP", "CRenderer", "Dialect", "OpenCL", "Rendered", "coverage"]
