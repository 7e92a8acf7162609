"""C-family renderers: one renderer, small dialect classes (OpenCL C, CUDA C++, HIP, SYCL and Metal)."""

from .cuda import CUDA
from .hip import HIP
from .metal import Metal
from .opencl import OpenCL
from .render import CRenderer, Dialect, Rendered, coverage
from .sycl import SYCL

__all__ = ["CUDA", "HIP", "SYCL", "CRenderer", "Dialect", "Metal", "OpenCL", "Rendered", "coverage"]
