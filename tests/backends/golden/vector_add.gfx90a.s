  .amdhsa_code_object_version 5
  .amdgcn_target "amdgcn-amd-amdhsa--gfx90a"
  .text
  .globl vector_add
  .p2align 8
  .type vector_add,@function
vector_add:
  s_load_dwordx4 s[4:7], s[0:1], 0
  s_waitcnt lgkmcnt(0)
  s_mov_b64 s[10:11], s[4:5]
  s_mov_b64 s[8:9], 0
  s_load_dwordx4 s[4:7], s[0:1], 16
  s_load_dword s0, s[0:1], 32
  s_mov_b32 s1, s2
  v_bfe_u32 v1, v0, 0, 10
  v_mov_b32 v3, 0x7fffffff
  s_waitcnt lgkmcnt(0)
  v_mov_b32 v0, s0
  v_mul_lo_u32 v0, s1, v0
  v_add_u32 v0, v0, v1
  v_cmp_ge_u32_e64 s[0:1], v0, s7
  s_and_b64 s[0:1], exec, s[0:1]
  s_or_b64 s[8:9], s[8:9], s[0:1]
  s_andn2_b64 exec, exec, s[0:1]
  s_cbranch_execnz .Lvector_add_alive_1
  s_endpgm
.Lvector_add_alive_1:
  v_lshlrev_b32 v2, 2, v0
  v_add_u32 v0, s4, v2
  global_load_dword v1, v0, s[10:11]
  v_add_u32 v0, s5, v2
  global_load_dword v0, v0, s[10:11]
  s_waitcnt vmcnt(0)
  v_add_f32 v1, v1, v0
  v_add_u32 v0, s6, v2
  v_cmp_u_f32 vcc, v1, v1
  v_cndmask_b32 v1, v1, v3, vcc
  global_store_dword v0, v1, s[10:11]
  s_endpgm
.Lfunc_end_vector_add:
  .size vector_add, .Lfunc_end_vector_add-vector_add

  .rodata
  .p2align 6
  .amdhsa_kernel vector_add
    .amdhsa_user_sgpr_count 2
    .amdhsa_user_sgpr_kernarg_segment_ptr 1
    .amdhsa_kernarg_size 56
    .amdhsa_group_segment_fixed_size 0
    .amdhsa_private_segment_fixed_size 0
    .amdhsa_system_sgpr_workgroup_id_x 1
    .amdhsa_system_sgpr_workgroup_id_y 0
    .amdhsa_system_sgpr_workgroup_id_z 0
    .amdhsa_system_vgpr_workitem_id 0
    .amdhsa_next_free_vgpr 4
    .amdhsa_next_free_sgpr 12
    .amdhsa_accum_offset 4
    .amdhsa_float_denorm_mode_32 3
    .amdhsa_float_denorm_mode_16_64 3
  .end_amdhsa_kernel
  .text
  .amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.kernels:
  - .name: vector_add
    .symbol: vector_add.kd
    .kernarg_segment_size: 56
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 12
    .vgpr_count: 4
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
