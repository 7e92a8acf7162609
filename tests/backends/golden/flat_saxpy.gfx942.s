  .amdhsa_code_object_version 5
  .amdgcn_target "amdgcn-amd-amdhsa--gfx942"
  .text
  .globl flat_saxpy
  .p2align 8
  .type flat_saxpy,@function
flat_saxpy:
  v_mov_b32 v9, 0  ; registers start at zero
  v_mov_b32 v8, 0  ; registers start at zero
  v_mov_b32 v7, 0  ; registers start at zero
  v_mov_b32 v6, 0  ; registers start at zero
  v_mov_b32 v5, 0  ; registers start at zero
  v_mov_b32 v4, 0  ; registers start at zero
  v_mov_b32 v3, 0  ; registers start at zero
  s_load_dwordx4 s[4:7], s[0:1], 0
  s_waitcnt lgkmcnt(0)
  s_mov_b64 s[8:9], s[4:5]
  s_load_dwordx4 s[4:7], s[0:1], 16
  s_load_dword s0, s[0:1], 32
  s_mov_b32 s1, s2
  v_bfe_u32 v1, v0, 0, 10
  v_mov_b32 v2, 0x7fffffff
  s_waitcnt lgkmcnt(0)
  v_mov_b32 v0, s0
  v_mul_lo_u32 v0, s1, v0
  v_add_u32 v0, v0, v1
  v_cmp_lt_u32_e64 s[2:3], v0, s7
  s_mov_b64 s[0:1], exec
  s_and_b64 exec, exec, s[2:3]
  s_cbranch_execz .Lflat_saxpy_endif_2
  v_mov_b32 v9, 4
  v_mul_lo_u32 v8, v0, v9
  v_add_u32 v7, s4, v8
  global_load_dword v6, v7, s[8:9]
  v_add_u32 v5, s5, v8
  global_load_dword v4, v5, s[8:9]
  s_waitcnt vmcnt(0)
  v_fma_f32 v3, s6, v6, v4
  v_cmp_u_f32 vcc, v3, v3
  s_nop 1  ; hazard
  v_cndmask_b32 v3, v3, v2, vcc
  global_store_dword v5, v3, s[8:9]
.Lflat_saxpy_endif_2:
  s_mov_b64 exec, s[0:1]
  s_endpgm
.Lfunc_end_flat_saxpy:
  .size flat_saxpy, .Lfunc_end_flat_saxpy-flat_saxpy

  .rodata
  .p2align 6
  .amdhsa_kernel flat_saxpy
    .amdhsa_user_sgpr_count 2
    .amdhsa_user_sgpr_kernarg_segment_ptr 1
    .amdhsa_kernarg_size 56
    .amdhsa_group_segment_fixed_size 0
    .amdhsa_private_segment_fixed_size 0
    .amdhsa_system_sgpr_workgroup_id_x 1
    .amdhsa_system_sgpr_workgroup_id_y 0
    .amdhsa_system_sgpr_workgroup_id_z 0
    .amdhsa_system_vgpr_workitem_id 0
    .amdhsa_next_free_vgpr 10
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
  - .name: flat_saxpy
    .symbol: flat_saxpy.kd
    .kernarg_segment_size: 56
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 10
    .vgpr_count: 10
    .agpr_count: 0
    .max_flat_workgroup_size: 128
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
