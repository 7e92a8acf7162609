  .amdhsa_code_object_version 5
  .amdgcn_target "amdgcn-amd-amdhsa--gfx950"
  .text
  .globl wave_scan
  .p2align 8
  .type wave_scan,@function
wave_scan:
  s_mov_b32 s8, 0  ; registers start at zero
  s_mov_b32 s9, 0  ; registers start at zero
  s_mov_b32 s10, 0  ; registers start at zero
  v_mov_b32 v9, 0  ; registers start at zero
  v_mov_b32 v8, 0  ; registers start at zero
  v_mov_b32 v7, 0  ; registers start at zero
  v_mov_b32 v6, 0  ; registers start at zero
  s_load_dwordx4 s[4:7], s[0:1], 0
  s_waitcnt lgkmcnt(0)
  s_mov_b64 s[6:7], s[4:5]
  s_load_dwordx2 s[8:9], s[0:1], 16
  s_load_dword s10, s[0:1], 24
  s_load_dword s0, s[0:1], 28
  s_mov_b32 s1, s2
  v_bfe_u32 v2, v0, 0, 10
  v_mbcnt_lo_u32_b32 v0, -1, 0
  v_mbcnt_hi_u32_b32 v0, -1, v0
  s_waitcnt lgkmcnt(0)
  v_mov_b32 v1, s0
  v_mul_lo_u32 v1, s1, v1
  v_add_u32 v5, v1, v2
  v_lshlrev_b32 v4, 2, v5
  v_add_u32 v1, s8, v4
  global_load_dword v3, v1, s[6:7]
  s_or_saveexec_b64 s[0:1], -1
  v_mov_b32 v1, 0
  s_waitcnt vmcnt(0)
  v_cndmask_b32_e64 v2, v1, v3, s[0:1]
  v_mov_b32 v1, v2
  s_nop 1  ; hazard
  v_add_u32_dpp v1, v1, v1 row_shr:1 row_mask:0xf bank_mask:0xf bound_ctrl:1
  s_nop 1  ; hazard
  v_add_u32_dpp v1, v1, v1 row_shr:2 row_mask:0xf bank_mask:0xf bound_ctrl:1
  s_nop 1  ; hazard
  v_add_u32_dpp v1, v1, v1 row_shr:4 row_mask:0xf bank_mask:0xf bound_ctrl:1
  s_nop 1  ; hazard
  v_add_u32_dpp v1, v1, v1 row_shr:8 row_mask:0xf bank_mask:0xf bound_ctrl:1
  s_nop 1  ; hazard
  v_add_u32_dpp v1, v1, v1 row_bcast:15 row_mask:0xa bank_mask:0xf
  s_nop 1  ; hazard
  v_add_u32_dpp v1, v1, v1 row_bcast:31 row_mask:0xc bank_mask:0xf
  s_mov_b64 exec, s[0:1]
  v_sub_u32 v1, v1, v2
  v_add_u32 v2, v1, v3
  v_add_u32 v1, s9, v4
  global_store_dword v1, v2, s[6:7]
  s_or_saveexec_b64 s[0:1], -1
  v_mov_b32 v1, 0
  v_cndmask_b32_e64 v1, v1, v3, s[0:1]
  s_nop 1  ; hazard
  v_add_u32_dpp v1, v1, v1 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf
  s_nop 1  ; hazard
  v_add_u32_dpp v1, v1, v1 quad_perm:[2,3,0,1] row_mask:0xf bank_mask:0xf
  s_nop 1  ; hazard
  v_add_u32_dpp v1, v1, v1 row_half_mirror row_mask:0xf bank_mask:0xf
  s_nop 1  ; hazard
  v_add_u32_dpp v1, v1, v1 row_mirror row_mask:0xf bank_mask:0xf
  s_nop 1  ; hazard
  v_add_u32_dpp v1, v1, v1 row_bcast:15 row_mask:0xa bank_mask:0xf
  s_nop 1  ; hazard
  v_add_u32_dpp v1, v1, v1 row_bcast:31 row_mask:0xc bank_mask:0xf
  s_nop 0  ; hazard
  v_readlane_b32 s4, v1, 63
  s_mov_b64 exec, s[0:1]
  v_cmp_eq_u32_e64 s[2:3], v0, 0
  s_mov_b64 s[0:1], exec
  s_and_b64 exec, exec, s[2:3]
  s_cbranch_execz .Lwave_scan_endif_2
  v_mov_b32 v9, 64
  v_cvt_f32_u32 v0, v9
  v_rcp_iflag_f32 v0, v0
  s_nop 0  ; hazard
  v_mul_f32 v0, 0x4f7ffffe, v0
  v_cvt_u32_f32 v1, v0
  v_sub_u32 v0, 0, v9
  v_mul_lo_u32 v0, v0, v1
  v_mul_hi_u32 v0, v1, v0
  v_add_u32 v1, v1, v0
  v_mul_hi_u32 v3, v5, v1
  v_mul_lo_u32 v0, v3, v9
  v_sub_u32 v2, v5, v0
  v_add_u32 v1, 1, v3
  v_sub_u32 v0, v2, v9
  v_cmp_ge_u32 vcc, v2, v9
  s_nop 1  ; hazard
  v_cndmask_b32 v3, v3, v1, vcc
  v_cndmask_b32 v2, v2, v0, vcc
  v_add_u32 v1, 1, v3
  v_sub_u32 v0, v2, v9
  v_cmp_ge_u32 vcc, v2, v9
  s_nop 1  ; hazard
  v_cndmask_b32 v3, v3, v1, vcc
  v_cndmask_b32 v2, v2, v0, vcc
  v_cmp_eq_u32 vcc, 0, v9
  v_mov_b32 v0, -1
  s_nop 0  ; hazard
  v_cndmask_b32 v8, v3, v0, vcc
  v_lshlrev_b32 v7, 2, v8
  v_add_u32 v6, s10, v7
  v_mov_b32 v0, s4
  global_store_dword v6, v0, s[6:7]
.Lwave_scan_endif_2:
  s_mov_b64 exec, s[0:1]
  s_endpgm
.Lfunc_end_wave_scan:
  .size wave_scan, .Lfunc_end_wave_scan-wave_scan

  .rodata
  .p2align 6
  .amdhsa_kernel wave_scan
    .amdhsa_user_sgpr_count 2
    .amdhsa_user_sgpr_kernarg_segment_ptr 1
    .amdhsa_kernarg_size 56
    .amdhsa_group_segment_fixed_size 0
    .amdhsa_private_segment_fixed_size 0
    .amdhsa_system_sgpr_workgroup_id_x 1
    .amdhsa_system_sgpr_workgroup_id_y 0
    .amdhsa_system_sgpr_workgroup_id_z 0
    .amdhsa_system_vgpr_workitem_id 1
    .amdhsa_next_free_vgpr 10
    .amdhsa_next_free_sgpr 11
    .amdhsa_accum_offset 12
    .amdhsa_float_denorm_mode_32 3
    .amdhsa_float_denorm_mode_16_64 3
  .end_amdhsa_kernel
  .text
  .amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.kernels:
  - .name: wave_scan
    .symbol: wave_scan.kd
    .kernarg_segment_size: 56
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 11
    .vgpr_count: 10
    .agpr_count: 0
    .max_flat_workgroup_size: 1024
    .args:
      - { .name: !str mem, .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global }
      - { .name: !str cmem, .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: constant }
      - { .name: !str a0, .size: 4, .offset: 16, .value_kind: by_value }
      - { .name: !str a1, .size: 4, .offset: 20, .value_kind: by_value }
      - { .name: !str a2, .size: 4, .offset: 24, .value_kind: by_value }
      - { .name: !str ntid_x, .size: 4, .offset: 28, .value_kind: by_value }
      - { .name: !str ntid_y, .size: 4, .offset: 32, .value_kind: by_value }
      - { .name: !str ntid_z, .size: 4, .offset: 36, .value_kind: by_value }
      - { .name: !str nctaid_x, .size: 4, .offset: 40, .value_kind: by_value }
      - { .name: !str nctaid_y, .size: 4, .offset: 44, .value_kind: by_value }
      - { .name: !str nctaid_z, .size: 4, .offset: 48, .value_kind: by_value }
...
  .end_amdgpu_metadata
