"""C-family renderers: one renderer, small dialect classes (OpenCL C, CUDA C++, HIP and SYCL so far)."""

from .cuda import CUDA
from .hip import HIP
from .opencl import OpenCL
from .render import CRenderer, Dialect, Rendered, coverage
from .sycl import SYCL

__all__ = ["CUDA", "HIP", "SYCL", "CRenderer", "Dialect", "OpenCL", "Rendered", "coverage"]
