"""Register file facts: GPR and predicate limits, and the special registers of spec section 3."""

from __future__ import annotations

from dataclasses import dataclass

NUM_GPRS = 256  # 8-bit register fields (spec erratum 1)
NUM_PREDS = 8  # p0..p7, each usable as a guard (spec erratum 2)


@dataclass(frozen=True)
class SpecialRegister:
    """A hardware-populated read-only register."""

    id: int
    name: str  # canonical spelling, e.g. "%tid.x"
    flat: str  # the Rust dialect's spelling, e.g. "sr_thread_id_x"
    doc: str
    ext: bool = False


SPECIAL_REGISTERS: tuple[SpecialRegister, ...] = (
    SpecialRegister(0, "%tid.x", "sr_thread_id_x", "thread id within the workgroup, x"),
    SpecialRegister(1, "%tid.y", "sr_thread_id_y", "thread id within the workgroup, y"),
    SpecialRegister(2, "%tid.z", "sr_thread_id_z", "thread id within the workgroup, z"),
    SpecialRegister(3, "%wid", "sr_wave_id", "wave index within the workgroup"),
    SpecialRegister(4, "%lid", "sr_lane_id", "lane index within the wave (0..W-1)"),
    SpecialRegister(5, "%ctaid.x", "sr_workgroup_id_x", "workgroup id within the grid, x"),
    SpecialRegister(6, "%ctaid.y", "sr_workgroup_id_y", "workgroup id within the grid, y"),
    SpecialRegister(7, "%ctaid.z", "sr_workgroup_id_z", "workgroup id within the grid, z"),
    SpecialRegister(8, "%ntid.x", "sr_workgroup_size_x", "workgroup size, x"),
    SpecialRegister(9, "%ntid.y", "sr_workgroup_size_y", "workgroup size, y"),
    SpecialRegister(10, "%ntid.z", "sr_workgroup_size_z", "workgroup size, z"),
    SpecialRegister(11, "%nctaid.x", "sr_grid_size_x", "grid size in workgroups, x"),
    SpecialRegister(12, "%nctaid.y", "sr_grid_size_y", "grid size in workgroups, y"),
    SpecialRegister(13, "%nctaid.z", "sr_grid_size_z", "grid size in workgroups, z"),
    SpecialRegister(14, "%nwaves", "sr_num_waves", "number of waves in the workgroup"),
    SpecialRegister(15, "%clock", "sr_clock", "cycle counter (the emulator counts instructions)"),
    SpecialRegister(16, "%wave_width", "sr_wave_width", "the wave width W", ext=True),
)

SREG_BY_NAME = {s.name: s for s in SPECIAL_REGISTERS}
SREG_BY_FLAT = {s.flat: s for s in SPECIAL_REGISTERS}
SREG_BY_ID = {s.id: s for s in SPECIAL_REGISTERS}
