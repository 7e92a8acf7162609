"""Execution statistics: instruction counts by class, SIMD efficiency, memory traffic, occupancy."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ClassCount:
    waves: int = 0  # wave-level issues (waves with at least one active lane)
    lanes: int = 0  # lane-level executions (active lanes, guard applied)


@dataclass
class Stats:
    """What one launch did. Wave counts are issues by waves with at least one active lane."""

    wave_width: int = 32
    workgroups: int = 0
    threads: int = 0
    waves: int = 0
    by_class: dict[str, ClassCount] = field(default_factory=dict)
    device_bytes_read: int = 0
    device_bytes_written: int = 0
    local_bytes_read: int = 0
    local_bytes_written: int = 0
    constant_bytes_read: int = 0
    atomics: int = 0  # lane-level atomic operations
    barriers: int = 0  # workgroup-level barrier completions
    branches: int = 0  # wave-level `if` executions
    divergent_branches: int = 0  # wave-level `if`s whose active lanes disagreed
    occupancy_waves: int = 0  # resident waves per core by the spec's occupancy equation
    registers: int = 0
    local_memory: int = 0
    batches: int = 0

    @property
    def wave_instructions(self) -> int:
        return sum(c.waves for c in self.by_class.values())

    @property
    def lane_instructions(self) -> int:
        return sum(c.lanes for c in self.by_class.values())

    @property
    def simd_efficiency(self) -> float:
        w = self.wave_instructions
        return self.lane_instructions / (w * self.wave_width) if w else 0.0

    def add(self, cls: str, waves: int, lanes: int) -> None:
        c = self.by_class.get(cls)
        if c is None:
            c = self.by_class[cls] = ClassCount()
        c.waves += waves
        c.lanes += lanes

    def as_dict(self) -> dict[str, object]:
        return {
            "wave_width": self.wave_width,
            "workgroups": self.workgroups,
            "threads": self.threads,
            "waves": self.waves,
            "wave_instructions": self.wave_instructions,
            "lane_instructions": self.lane_instructions,
            "simd_efficiency": self.simd_efficiency,
            "by_class": {k: {"waves": v.waves, "lanes": v.lanes} for k, v in sorted(self.by_class.items())},
            "device_bytes_read": self.device_bytes_read,
            "device_bytes_written": self.device_bytes_written,
            "local_bytes_read": self.local_bytes_read,
            "local_bytes_written": self.local_bytes_written,
            "constant_bytes_read": self.constant_bytes_read,
            "atomics": self.atomics,
            "barriers": self.barriers,
            "branches": self.branches,
            "divergent_branches": self.divergent_branches,
            "occupancy_waves": self.occupancy_waves,
            "registers": self.registers,
            "local_memory": self.local_memory,
        }
