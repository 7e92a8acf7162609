"""DLPack export of device arrays (`DeviceArray.__dlpack__`): a legacy "dltensor" capsule over the
array's memory, in place, that keeps the array alive until its consumer lets go."""

from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .device_arrays import DeviceArray


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class _DLManagedTensor(ctypes.Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensor))
_DLManagedTensor._fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _DELETER)]
_LIVE: dict[int, tuple[Any, ...]] = {}  # managed tensor address -> what must outlive it


@_DELETER
def _delete(p: Any) -> None:
    _LIVE.pop(ctypes.addressof(p.contents), None)


_CAPSULE_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)  # the capsule, raw: it is being freed


@_CAPSULE_DESTRUCTOR
def _capsule_gone(capsule: Any) -> None:
    """A capsule no consumer took (still named "dltensor"): free what it holds (a consumer renames
    it "used_dltensor" and calls the deleter itself)."""
    api = _PY
    if api.PyCapsule_IsValid(capsule, b"dltensor"):
        p = api.PyCapsule_GetPointer(capsule, b"dltensor")
        _LIVE.pop(p, None)


_PY = ctypes.PyDLL(ctypes.pythonapi._name)  # own function objects: their signatures stay ours
_PY.PyCapsule_New.restype = ctypes.py_object
_PY.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, _CAPSULE_DESTRUCTOR]
_PY.PyCapsule_IsValid.restype = ctypes.c_int
_PY.PyCapsule_IsValid.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_PY.PyCapsule_GetPointer.restype = ctypes.c_void_p
_PY.PyCapsule_GetPointer.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_DL_CODE = {"i": 0, "u": 1, "f": 2}


def dlpack_capsule(a: DeviceArray) -> Any:
    """A legacy ("dltensor") DLPack capsule over a's memory, keeping a alive until the consumer
    (or the capsule, when none takes it) lets go."""
    m = _DLManagedTensor()
    shape = (ctypes.c_int64 * max(a.ndim, 1))(*a.shape)
    t = m.dl_tensor
    t.data = a.pointer
    t.device = _DLDevice(*a.__dlpack_device__())
    t.ndim = a.ndim
    t.dtype = _DLDataType(_DL_CODE[a.dtype.kind], a.dtype.itemsize * 8, 1)
    t.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
    t.strides = ctypes.POINTER(ctypes.c_int64)()  # NULL: C-contiguous
    t.byte_offset = 0
    m.deleter = _delete
    _LIVE[ctypes.addressof(m)] = (m, shape, a)
    return _PY.PyCapsule_New(ctypes.addressof(m), b"dltensor", _capsule_gone)
