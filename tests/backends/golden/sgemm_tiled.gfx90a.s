  .amdhsa_code_object_version 5
  .amdgcn_target "amdgcn-amd-amdhsa--gfx90a"
  .text
  .globl sgemm_tiled
  .p2align 8
  .type sgemm_tiled,@function
sgemm_tiled:
  s_load_dwordx4 s[4:7], s[0:1], 0
  s_waitcnt lgkmcnt(0)
  s_mov_b64 s[8:9], s[4:5]
  s_load_dwordx4 s[4:7], s[0:1], 16
  s_mov_b32 s0, s2
  s_mov_b32 s1, s3
  v_bfe_u32 v2, v0, 0, 10
  v_bfe_u32 v1, v0, 10, 10
  v_mov_b32 v10, 0x7fffffff
  s_lshl_b32 s0, s0, 4
  v_add_u32 v9, s0, v2
  s_lshl_b32 s0, s1, 4
  v_add_u32 v8, s0, v1
  v_mov_b32 v7, 0
  v_lshlrev_b32 v6, 6, v1
  v_lshlrev_b32 v5, 2, v2
  v_add_u32 v4, v6, v5
  s_waitcnt lgkmcnt(0)
  v_mul_lo_u32 v0, v8, s7
  v_add_u32 v0, v0, v2
  v_lshl_add_u32 v3, v0, 2, s4
  v_mul_lo_u32 v0, v1, s7
  v_add_u32 v0, v0, v9
  v_lshl_add_u32 v2, v0, 2, s5
  s_lshl_b32 s3, s7, 6
  s_lshr_b32 s2, s7, 4
.Lsgemm_tiled_loop_1:
  s_cmp_eq_u32 s2, 0
  s_cbranch_scc1 .Lsgemm_tiled_endloop_2
  global_load_dword v0, v3, s[8:9]
  s_waitcnt vmcnt(0)
  ds_write_b32 v4, v0
  global_load_dword v0, v2, s[8:9]
  s_waitcnt vmcnt(0)
  ds_write_b32 v4, v0 offset:1024
  s_waitcnt lgkmcnt(0)
  s_barrier
  s_mov_b32 s1, 0
  s_mov_b32 s0, 0x400
.Lsgemm_tiled_loop_3:
  s_cmp_ge_u32 s1, 64
  s_cbranch_scc1 .Lsgemm_tiled_endloop_4
  v_add_u32 v0, s1, v6
  ds_read_b32 v1, v0
  v_add_u32 v0, s0, v5
  ds_read_b32 v0, v0
  s_waitcnt lgkmcnt(0)
  v_fma_f32 v7, v1, v0, v7
  s_add_u32 s1, s1, 4
  s_add_u32 s0, s0, 64
  s_branch .Lsgemm_tiled_loop_3
.Lsgemm_tiled_endloop_4:
  s_barrier
  v_add_u32 v3, 64, v3
  v_add_u32 v2, s3, v2
  s_sub_u32 s2, s2, 1
  s_branch .Lsgemm_tiled_loop_1
.Lsgemm_tiled_endloop_2:
  v_mul_lo_u32 v0, v8, s7
  v_add_u32 v0, v0, v9
  v_lshl_add_u32 v0, v0, 2, s6
  v_cmp_u_f32 vcc, v7, v7
  v_cndmask_b32 v7, v7, v10, vcc
  global_store_dword v0, v7, s[8:9]
  s_endpgm
.Lfunc_end_sgemm_tiled:
  .size sgemm_tiled, .Lfunc_end_sgemm_tiled-sgemm_tiled

  .rodata
  .p2align 6
  .amdhsa_kernel sgemm_tiled
    .amdhsa_user_sgpr_count 2
    .amdhsa_user_sgpr_kernarg_segment_ptr 1
    .amdhsa_kernarg_size 56
    .amdhsa_group_segment_fixed_size 2048
    .amdhsa_private_segment_fixed_size 0
    .amdhsa_system_sgpr_workgroup_id_x 1
    .amdhsa_system_sgpr_workgroup_id_y 1
    .amdhsa_system_sgpr_workgroup_id_z 0
    .amdhsa_system_vgpr_workitem_id 1
    .amdhsa_next_free_vgpr 11
    .amdhsa_next_free_sgpr 10
    .amdhsa_accum_offset 12
    .amdhsa_float_denorm_mode_32 3
    .amdhsa_float_denorm_mode_16_64 3
  .end_amdhsa_kernel
  .text
  .amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.kernels:
  - .name: sgemm_tiled
    .symbol: sgemm_tiled.kd
    .kernarg_segment_size: 56
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 2048
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 10
    .vgpr_count: 11
    .agpr_count: 0
    .max_flat_workgroup_size: 256
    .args:
      - { .name: !str mem, .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global }
      - { .name: !str cmem, .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: constant }
      - { .name: !str a0, .size: 4, .offset: 16, .value_kind: by_value }
      - { .name: !str a1, .size: 4, .offset: 20, .value_kind: by_value }
      - { .name: !str a2, .size: 4, .offset: 24, .value_kind: by_value }
      - { .name: !str a3, .size: 4, .offset: 28, .value_kind: by_value }
      - { .name: !str ntid_x, .size: 4, .offset: 32, .value_kind: by_value }
      - { .name: !str ntid_y, .size: 4, .offset: 36, .value_kind: by_value }
      - { .name: !str ntid_z, .size: 4, .offset: 40, .value_kind: by_value }
      - { .name: !str nctaid_x, .size: 4, .offset: 44, .value_kind: by_value }
      - { .name: !str nctaid_y, .size: 4, .offset: 48, .value_kind: by_value }
      - { .name: !str nctaid_z, .size: 4, .offset: 52, .value_kind: by_value }
...
  .end_amdgpu_metadata
