//! Kernel options in the attribute (the workgroup size recorded in the binary) and the f16 methods.

use wave::*;

pub const TILE: u32 = 16;

#[wave::kernel(workgroup = (TILE, TILE), max_registers = 32)]
pub fn tiled(o: &mut [u32]) {
    let x = global_id(0);
    let y = global_id(1);
    let h = f16::from_f32(1.0);
    let m = h.min(h).max(h.abs());
    o[(y * 32 + x) as usize] = workgroup_size(0) * 100 + workgroup_size(1) + m.to_f32() as u32;
}
