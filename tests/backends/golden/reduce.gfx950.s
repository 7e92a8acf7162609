  .amdhsa_code_object_version 5
  .amdgcn_target "amdgcn-amd-amdhsa--gfx950"
  .text
  .globl reduce_sum
  .p2align 8
  .type reduce_sum,@function
reduce_sum:
  v_mov_b32 v10, 0  ; registers start at zero
  v_mov_b32 v9, 0  ; registers start at zero
  v_mov_b32 v8, 0  ; registers start at zero
  v_mov_b32 v7, 0  ; registers start at zero
  v_mov_b32 v6, 0  ; registers start at zero
  v_mov_b32 v5, 0  ; registers start at zero
  v_mov_b32 v4, 0  ; registers start at zero
  v_mov_b32 v3, 0  ; registers start at zero
  s_load_dwordx4 s[4:7], s[0:1], 0
  s_waitcnt lgkmcnt(0)
  s_mov_b64 s[6:7], s[4:5]
  s_load_dwordx2 s[8:9], s[0:1], 16
  s_load_dword s0, s[0:1], 24
  s_mov_b32 s5, s2
  v_bfe_u32 v2, v0, 0, 10
  s_waitcnt lgkmcnt(0)
  v_mov_b32 v0, s0
  v_mul_lo_u32 v0, s5, v0
  v_add_u32 v0, v0, v2
  v_lshl_add_u32 v0, v0, 2, s8
  global_load_dword v0, v0, s[6:7]
  v_lshlrev_b32 v1, 2, v2
  s_waitcnt vmcnt(0)
  ds_write_b32 v1, v0
  s_waitcnt lgkmcnt(0)
  s_barrier
  s_lshr_b32 s4, s0, 1
.Lreduce_sum_loop_1:
  s_cmp_eq_u32 s4, 0
  s_cbranch_scc1 .Lreduce_sum_endloop_2
  v_cmp_lt_u32_e64 s[2:3], v2, s4
  s_mov_b64 s[0:1], exec
  s_and_b64 exec, exec, s[2:3]
  s_cbranch_execz .Lreduce_sum_endif_4
  v_mov_b32 v0, s4
  v_lshlrev_b32 v10, 2, v0
  v_add_u32 v9, v1, v10
  ds_read_b32 v8, v9
  ds_read_b32 v7, v1
  s_waitcnt lgkmcnt(0)
  v_add_u32 v6, v7, v8
  ds_write_b32 v1, v6
.Lreduce_sum_endif_4:
  s_mov_b64 exec, s[0:1]
  s_waitcnt lgkmcnt(0)
  s_barrier
  s_lshr_b32 s4, s4, 1
  s_branch .Lreduce_sum_loop_1
.Lreduce_sum_endloop_2:
  v_cmp_eq_u32_e64 s[2:3], v2, 0
  s_mov_b64 s[0:1], exec
  s_and_b64 exec, exec, s[2:3]
  s_cbranch_execz .Lreduce_sum_endif_6
  v_mov_b32 v0, 0
  ds_read_b32 v5, v0
  v_mov_b32 v0, s5
  v_lshlrev_b32 v4, 2, v0
  v_add_u32 v3, s9, v4
  s_waitcnt lgkmcnt(0)
  global_store_dword v3, v5, s[6:7]
.Lreduce_sum_endif_6:
  s_mov_b64 exec, s[0:1]
  s_endpgm
.Lfunc_end_reduce_sum:
  .size reduce_sum, .Lfunc_end_reduce_sum-reduce_sum

  .rodata
  .p2align 6
  .amdhsa_kernel reduce_sum
    .amdhsa_user_sgpr_count 2
    .amdhsa_user_sgpr_kernarg_segment_ptr 1
    .amdhsa_kernarg_size 48
    .amdhsa_group_segment_fixed_size 1024
    .amdhsa_private_segment_fixed_size 0
    .amdhsa_system_sgpr_workgroup_id_x 1
    .amdhsa_system_sgpr_workgroup_id_y 0
    .amdhsa_system_sgpr_workgroup_id_z 0
    .amdhsa_system_vgpr_workitem_id 0
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
  - .name: reduce_sum
    .symbol: reduce_sum.kd
    .kernarg_segment_size: 48
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 1024
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
      - { .name: !str ntid_x, .size: 4, .offset: 24, .value_kind: by_value }
      - { .name: !str ntid_y, .size: 4, .offset: 28, .value_kind: by_value }
      - { .name: !str ntid_z, .size: 4, .offset: 32, .value_kind: by_value }
      - { .name: !str nctaid_x, .size: 4, .offset: 36, .value_kind: by_value }
      - { .name: !str nctaid_y, .size: 4, .offset: 40, .value_kind: by_value }
      - { .name: !str nctaid_z, .size: 4, .offset: 44, .value_kind: by_value }
...
  .end_amdgpu_metadata
