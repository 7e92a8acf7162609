"""Register file facts: GPR and predicate limits, and the special registers of spec section 3."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

NUM_GPRS = 256  # 8-bit register fields (spec erratum 1)
NUM_PREDS = 8  # p0..p7, each usable as a guard (spec erratum 2)


class SRegId(IntEnum):
    """The special-register numbers of spec section 3 (the 5-bit field of `mov.b32.sreg`)."""

    TID_X = 0
    TID_Y = 1
    TID_Z = 2
    WID = 3
    LID = 4
    CTAID_X = 5
    CTAID_Y = 6
    CTAID_Z = 7
    NTID_X = 8
    NTID_Y = 9
    NTID_Z = 10
    NCTAID_X = 11
    NCTAID_Y = 12
    NCTAID_Z = 13
    NWAVES = 14
    CLOCK = 15
    WAVE_WIDTH = 16


@dataclass(frozen=True)
class SpecialRegister:
    """A hardware-populated read-only register."""

    id: SRegId
    name: str  # canonical spelling, e.g. "%tid.x"
    flat: str  # the Rust dialect's spelling, e.g. "sr_thread_id_x"
    doc: str
    ext: bool = False


SPECIAL_REGISTERS: tuple[SpecialRegister, ...] = (
    SpecialRegister(SRegId.TID_X, "%tid.x", "sr_thread_id_x", "thread id within the workgroup, x"),
    SpecialRegister(SRegId.TID_Y, "%tid.y", "sr_thread_id_y", "thread id within the workgroup, y"),
    SpecialRegister(SRegId.TID_Z, "%tid.z", "sr_thread_id_z", "thread id within the workgroup, z"),
    SpecialRegister(SRegId.WID, "%wid", "sr_wave_id", "wave index within the workgroup"),
    SpecialRegister(SRegId.LID, "%lid", "sr_lane_id", "lane index within the wave (0..W-1)"),
    SpecialRegister(SRegId.CTAID_X, "%ctaid.x", "sr_workgroup_id_x", "workgroup id within the grid, x"),
    SpecialRegister(SRegId.CTAID_Y, "%ctaid.y", "sr_workgroup_id_y", "workgroup id within the grid, y"),
    SpecialRegister(SRegId.CTAID_Z, "%ctaid.z", "sr_workgroup_id_z", "workgroup id within the grid, z"),
    SpecialRegister(SRegId.NTID_X, "%ntid.x", "sr_workgroup_size_x", "workgroup size, x"),
    SpecialRegister(SRegId.NTID_Y, "%ntid.y", "sr_workgroup_size_y", "workgroup size, y"),
    SpecialRegister(SRegId.NTID_Z, "%ntid.z", "sr_workgroup_size_z", "workgroup size, z"),
    SpecialRegister(SRegId.NCTAID_X, "%nctaid.x", "sr_grid_size_x", "grid size in workgroups, x"),
    SpecialRegister(SRegId.NCTAID_Y, "%nctaid.y", "sr_grid_size_y", "grid size in workgroups, y"),
    SpecialRegister(SRegId.NCTAID_Z, "%nctaid.z", "sr_grid_size_z", "grid size in workgroups, z"),
    SpecialRegister(SRegId.NWAVES, "%nwaves", "sr_num_waves", "number of waves in the workgroup"),
    SpecialRegister(SRegId.CLOCK, "%clock", "sr_clock", "cycle counter (the emulator counts instructions)"),
    SpecialRegister(SRegId.WAVE_WIDTH, "%wave_width", "sr_wave_width", "the wave width W", ext=True),
)

SREG_BY_NAME = {s.name: s for s in SPECIAL_REGISTERS}
SREG_BY_FLAT = {s.flat: s for s in SPECIAL_REGISTERS}
SREG_BY_ID: dict[int, SpecialRegister] = {s.id: s for s in SPECIAL_REGISTERS}  # SRegId keys: plain ints find them too
