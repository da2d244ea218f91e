/*
 * Lowering the calls out of the program (see api/lower.c for the rest):
 * custom_call targets with a kernel the embedder registered on the
 * context, and infeed / outfeed / send / recv, which become HOST thunks
 * that the executor hands to the context's host callback.
 */
#include "api/lowering.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* custom_call @TARGET with a kernel registered on the context
 * (vkhlo_context_register_custom_call): one dispatch of the user's SPIR-V,
 * bindings = operands then results, push constant = result 0's element
 * count.  Unregistered targets are UNIMPLEMENTED. */
vkhlo_status_t lowering_custom_call(lowering_t *l, env_t *env, const hlo_instruction_t *instr,
                                        exe_sequence_t *seq, value_bufs_t *out) {
  const char *target = instr->attrs.call_target_name ? instr->attrs.call_target_name : "";
  const vkhlo_context_t *ctx = l->exe->context;
  const custom_kernel_t *ck = NULL;
  for (int i = 0; i < ctx->custom_kernel_count; i++)
    if (strcmp(ctx->custom_kernels[i].target_name, target) == 0) ck = &ctx->custom_kernels[i];
  if (!ck) {
    char what[300];
    snprintf(what, sizeof what,
             "unsupported custom_call target @%s (register a kernel with vkhlo_context_register_custom_call)",
             target);
    return lowering_instr_error(instr, VKHLO_STATUS_UNIMPLEMENTED, what);
  }
  VKHLO_RETURN_IF_ERROR(lowering_new_value(l, &instr->shape, instr->name, out));
  int n_in = instr->operand_count, n = n_in + out->count;
  const hlo_shape_t *r0 = out->count ? (hlo_shape_is_tuple(&instr->shape) ? &instr->shape.tuple_shapes[0]
                                                                          : &instr->shape)
                                     : NULL;
  int64_t count = r0 ? hlo_shape_element_count(r0) : 0;
  uint64_t groups = count ? ((uint64_t)count + ck->local_size_x - 1) / ck->local_size_x : 1;
  if (groups > l->target->max_workgroup_count[0] || count > 0xFFFFFFFFll)
    return lowering_instr_error(instr, VKHLO_STATUS_UNIMPLEMENTED, "custom_call result too large for one dispatch");
  vkhlo_executable_t *exe = l->exe;
  if (exe->kernel_count == exe->kernel_capacity) {
    int cap = exe->kernel_capacity ? exe->kernel_capacity * 2 : 32;
    exe_kernel_t *p = vkhlo_realloc(l->exe->allocator, exe->kernels, sizeof *p * (size_t)cap);
    uint64_t *hp = vkhlo_realloc(l->exe->allocator, l->kernel_hashes, sizeof *hp * (size_t)cap);
    if (p) exe->kernels = p;
    if (hp) l->kernel_hashes = hp;
    if (!p || !hp) return VKHLO_NO_MEMORY();
    exe->kernel_capacity = cap;
  }
  exe_kernel_t *k = &exe->kernels[exe->kernel_count];
  memset(k, 0, sizeof *k);
  size_t name_len = strlen(target);
  k->name = vkhlo_malloc(l->exe->allocator, name_len + 1);
  k->spirv = vkhlo_malloc(l->exe->allocator, ck->spirv_size_bytes);
  if (!k->name || !k->spirv) {
    vkhlo_free(l->exe->allocator, k->name);
    vkhlo_free(l->exe->allocator, k->spirv);
    return VKHLO_NO_MEMORY();
  }
  for (size_t i = 0; i <= name_len; i++) /* a file-name-safe kernel name */
    k->name[i] = (target[i] == '.' || target[i] == '/') ? '_' : target[i];
  memcpy(k->spirv, ck->spirv, ck->spirv_size_bytes);
  k->spirv_size_bytes = ck->spirv_size_bytes;
  k->binding_count = (uint32_t)n;
  k->group_count[0] = (uint32_t)groups;
  k->group_count[1] = k->group_count[2] = 1;
  k->push_constant = (uint32_t)count;
  k->has_push_constant = true;
  l->kernel_hashes[exe->kernel_count] = 0;
  int kernel = exe->kernel_count++;
  int *bindings = vkhlo_calloc(l->exe->allocator, (size_t)n + 1, sizeof(int));
  if (!bindings) return VKHLO_NO_MEMORY();
  vkhlo_status_t st = NULL;
  for (int i = 0; i < n_in && !st; i++) st = lowering_single_buffer(env, instr, instr->operands[i], &bindings[i]);
  for (int i = 0; i < out->count; i++) bindings[n_in + i] = out->ids[i];
  exe_thunk_t *t = st ? NULL : lowering_add_thunk(l, seq, EXE_THUNK_DISPATCH);
  if (!t) {
    vkhlo_free(l->exe->allocator, bindings);
    return st ? st : VKHLO_NO_MEMORY();
  }
  t->kernel = kernel;
  t->bindings = bindings;
  t->binding_count = n;
  t->input_count = n_in;
  for (int i = 0; i < n; i++) lowering_use_buffer(l, bindings[i]);
  return NULL;
}

/* infeed / outfeed / send / recv: a HOST thunk; its bindings are the data
 * operands (outfeed, send) or the data results (infeed, recv); tokens get
 * 16-byte placeholder buffers and are not passed to the callback. */
vkhlo_status_t lowering_host_call(lowering_t *l, env_t *env, const hlo_instruction_t *instr,
                                      exe_sequence_t *seq, value_bufs_t *out) {
  VKHLO_RETURN_IF_ERROR(lowering_new_value(l, &instr->shape, instr->name, out));
  bool reads = instr->opcode == HLO_OPCODE_OUTFEED || instr->opcode == HLO_OPCODE_SEND;
  int cap = instr->operand_count + out->count + 1, n = 0;
  int *bindings = vkhlo_calloc(l->exe->allocator, (size_t)cap, sizeof(int));
  vkhlo_tensor_type_t *types = vkhlo_calloc(l->exe->allocator, (size_t)cap, sizeof *types);
  if (!bindings || !types) {
    vkhlo_free(l->exe->allocator, bindings);
    vkhlo_free(l->exe->allocator, types);
    return VKHLO_NO_MEMORY();
  }
  vkhlo_status_t st = NULL;
  if (reads) {
    for (int i = 0; i < instr->operand_count && !st; i++)
      if (instr->operands[i]->shape.element_type != HLO_TOKEN) {
        exe_tensor_type_from_shape(&instr->operands[i]->shape, &types[n]);
        st = lowering_single_buffer(env, instr, instr->operands[i], &bindings[n++]);
      }
  } else {
    for (int i = 0; i < out->count; i++) {
      const hlo_shape_t *s = hlo_shape_is_tuple(&instr->shape) ? &instr->shape.tuple_shapes[i] : &instr->shape;
      if (s->element_type != HLO_TOKEN) {
        exe_tensor_type_from_shape(s, &types[n]);
        bindings[n++] = out->ids[i];
      }
    }
  }
  char *config = NULL;
  if (!st) {
    const char *c = instr->attrs.backend_config ? instr->attrs.backend_config : "";
    config = vkhlo_malloc(l->exe->allocator, strlen(c) + 1);
    if (!config) st = VKHLO_NO_MEMORY();
    else strcpy(config, c);
  }
  exe_thunk_t *t = st ? NULL : lowering_add_thunk(l, seq, EXE_THUNK_HOST);
  if (!t) {
    vkhlo_free(l->exe->allocator, bindings);
    vkhlo_free(l->exe->allocator, types);
    vkhlo_free(l->exe->allocator, config);
    return st ? st : VKHLO_NO_MEMORY();
  }
  t->host_types = types;
  t->bindings = bindings;
  t->binding_count = n;
  t->input_count = reads ? n : 0;
  t->host_op = hlo_opcode_name(instr->opcode);
  t->channel_id = instr->attrs.channel_id;
  t->host_config = config;
  for (int i = 0; i < n; i++) lowering_use_buffer(l, bindings[i]);
  for (int i = 0; i < out->count; i++) lowering_use_buffer(l, out->ids[i]);
  return NULL;
}
