"""Capability constants and optional capabilities of spec section 7, and their query function."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..errors import CapabilityError
from .types import DataType

# Queryable constants with the spec's mandatory minimums.
CONSTANT_MINIMUMS: dict[str, int] = {
    "WAVE_WIDTH": 16,
    "MAX_WORKGROUP_SIZE": 256,
    "MAX_REGISTERS": 64,
    "LOCAL_MEMORY_SIZE": 16384,
    "MAX_WAVES_PER_CORE": 16,
    "PREDICATE_REGISTERS": 8,
    "CLUSTER_SIZE": 1,
}

OPTIONAL_CAPABILITIES: tuple[str, ...] = (
    "CAP_F16",
    "CAP_F64",
    "CAP_ATOMIC64",
    "CAP_MMA",
    "CAP_DP4A",
    "CAP_SUBGROUPS",
    "CAP_CLUSTER",
    "CAP_BF16",  # extension: bfloat16 scalar and packed rows
)

MMA_CONSTANTS: tuple[str, ...] = ("MMA_M", "MMA_N", "MMA_K", "MMA_INPUT_TYPES", "MMA_OUTPUT_TYPES")

# Extra facts an implementation reports (not in the spec's list, but needed for occupancy).
EXTRA_CONSTANTS: tuple[str, ...] = ("REGISTER_FILE_SIZE",)


@dataclass(frozen=True)
class DeviceCaps:
    """What a device reports through get_capability."""

    name: str
    constants: dict[str, int] = field(default_factory=dict)
    capabilities: frozenset[str] = frozenset()

    def value(self, key: str) -> int | bool:
        key = normalise_name(key)
        if key in self.constants:
            return self.constants[key]
        if key in OPTIONAL_CAPABILITIES:
            return key in self.capabilities
        raise CapabilityError(f"device {self.name!r} does not report {key!r}")

    def with_wave_width(self, w: int) -> DeviceCaps:
        """The same device with another wave width (MMA needs W = 32)."""
        caps = set(self.capabilities)
        consts = dict(self.constants)
        consts["WAVE_WIDTH"] = w
        if w != 32:
            caps.discard("CAP_MMA")
            for k in MMA_CONSTANTS:
                consts.pop(k, None)
        return replace(self, constants=consts, capabilities=frozenset(caps))


def normalise_name(name: str) -> str:
    key = name.strip().upper()
    if key.startswith("WAVE_CAP_"):
        key = key[len("WAVE_CAP_") :]
        if key in {c[len("CAP_") :] for c in OPTIONAL_CAPABILITIES}:
            key = "CAP_" + key
    return key


def all_names() -> tuple[str, ...]:
    return (*CONSTANT_MINIMUMS, *OPTIONAL_CAPABILITIES, *MMA_CONSTANTS, *EXTRA_CONSTANTS)


EMULATOR = DeviceCaps(
    name="emulator",
    constants={
        "WAVE_WIDTH": 32,
        "MAX_WORKGROUP_SIZE": 1024,
        "MAX_REGISTERS": 256,
        "LOCAL_MEMORY_SIZE": 65536,
        "MAX_WAVES_PER_CORE": 64,
        "PREDICATE_REGISTERS": 8,
        "CLUSTER_SIZE": 1,
        "REGISTER_FILE_SIZE": 256 * 1024,
        "MMA_M": 16,
        "MMA_N": 8,
        "MMA_K": 8,
        "MMA_INPUT_TYPES": DataType.F16.mask,
        "MMA_OUTPUT_TYPES": DataType.F32.mask,
    },
    capabilities=frozenset({"CAP_F16", "CAP_F64", "CAP_MMA", "CAP_DP4A", "CAP_BF16"}),
)

_DEVICES: dict[str, DeviceCaps] = {"emulator": EMULATOR}


def get_capability(device: object, name: str) -> int | bool:
    """Mirror of `wave_get_capability`: the value of one constant or optional capability.

    `device` is a device name ("emulator"), a DeviceCaps, or any object with a `caps` attribute.
    """
    caps: DeviceCaps
    attr = getattr(device, "caps", None)
    if isinstance(device, DeviceCaps):
        caps = device
    elif isinstance(device, str):
        if device not in _DEVICES:
            raise CapabilityError(f"unknown device {device!r}; known: {', '.join(_DEVICES)}")
        caps = _DEVICES[device]
    elif isinstance(attr, DeviceCaps):
        caps = attr
    else:
        raise CapabilityError(f"not a device: {device!r}")
    return caps.value(name)


def occupancy(caps: DeviceCaps, registers: int, local_memory: int, workgroup_threads: int) -> int:
    """Resident waves per core by the spec's occupancy equation (section 3).

    min(MAX_WAVES_PER_CORE, floor(F / (R * W * 4)), floor(S / local_per_workgroup) * waves per
    workgroup). The spec's third term counts workgroups; it is scaled to waves here so the three
    terms share a unit (docs/spec-errata.md).
    """
    w = caps.constants["WAVE_WIDTH"]
    by_regs = caps.constants["REGISTER_FILE_SIZE"] // (max(registers, 1) * w * 4)
    waves_per_wg = max(1, -(-workgroup_threads // w))
    terms = [caps.constants["MAX_WAVES_PER_CORE"], by_regs]
    if local_memory:
        terms.append((caps.constants["LOCAL_MEMORY_SIZE"] // local_memory) * waves_per_wg)
    return min(terms)
