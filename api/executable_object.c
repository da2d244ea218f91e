/*
 * The executable object, runtime side (library vkhlo_runtime): its device
 * objects, destruction and accessors.  Compilation (api/executable.c,
 * library vkhlo) and loading build the program and call
 * exe_create_device_objects; executing it is api/execute.c.
 */
#include "api/internal.h"
#include "support/hash.h"

#include <stdlib.h>
#include <string.h>

void exe_free_sequence(const vkhlo_allocator_t *allocator, exe_sequence_t *seq) {
  if (!seq) return;
  for (int i = 0; i < seq->count; i++) {
    exe_thunk_t *t = &seq->thunks[i];
    vkhlo_free(allocator, t->bindings);
    vkhlo_free(allocator, t->host_config);
    vkhlo_free(allocator, t->host_types);
    vkhlo_free(allocator, t->inplace_ok);
    vkhlo_free(allocator, t->rotate);
    if (t->cond) { exe_free_sequence(allocator, t->cond); vkhlo_free(allocator, t->cond); }
    if (t->body) { exe_free_sequence(allocator, t->body); vkhlo_free(allocator, t->body); }
    for (int b = 0; b < t->branch_count; b++) {
      exe_free_sequence(allocator, t->branches[b]);
      vkhlo_free(allocator, t->branches[b]);
    }
    vkhlo_free(allocator, t->branches);
  }
  vkhlo_free(allocator, seq->thunks);
  memset(seq, 0, sizeof *seq);
}

void vkhlo_executable_destroy(vkhlo_executable_t *exe) {
  if (!exe) return;
  vkrt_cmd_destroy(exe->cmd);
  vkrt_cmd_destroy(exe->copy_cmd);
  vkrt_cmd_destroy(exe->record_cmd); /* embedding: vkhlo_executable_record */
  vkrt_buffer_destroy(exe->readback);
  vkrt_buffer_destroy(exe->loop_gates);
  vkrt_buffer_destroy(exe->loop_gates_readback);
  vkhlo_free(exe->allocator, exe->recorded_serials);
  vkhlo_free(exe->allocator, exe->profile_dispatches);
  vkhlo_free(exe->allocator, exe->profile_ms);
  for (int i = 0; i < exe->kernel_count; i++) {
    if (!exe->kernels[i].pipeline_shared) vkrt_pipeline_destroy(exe->kernels[i].pipeline);
    vkhlo_free(exe->allocator, exe->kernels[i].name);
    vkhlo_free(exe->allocator, exe->kernels[i].glsl);
    if (!exe->kernels[i].spirv_shared) vkhlo_free(exe->allocator, exe->kernels[i].spirv);
    vkhlo_free(exe->allocator, exe->kernels[i].tune_key);
  }
  vkhlo_free(exe->allocator, exe->tuning);
  vkhlo_free(exe->allocator, exe->kernels);
  exe_free_sequence(exe->allocator, &exe->main);
  for (int i = 0; i < exe->allocation_count; i++) vkrt_buffer_destroy(exe->allocations[i].buffer);
  vkhlo_free(exe->allocator, exe->allocations);
  for (int i = 0; i < exe->buffer_count; i++) vkhlo_free(exe->allocator, exe->buffers[i].name);
  vkhlo_free(exe->allocator, exe->buffers);
  vkhlo_free(exe->allocator, exe->parameter_types);
  vkhlo_free(exe->allocator, exe->result_types);
  vkhlo_free(exe->allocator, exe->result_buffers);
  vkhlo_free(exe->allocator, exe->checks);
  vkhlo_free(exe->allocator, exe);
}

/* A kernel's layout and SPIR-V words, hashed. */
static uint64_t kernel_code_hash(const exe_kernel_t *k, const uint32_t *words, size_t size_bytes) {
  const uint64_t layout[4] = {k->binding_count, k->texel_views, k->scalar_views, k->has_push_constant};
  return fnv1a(fnv1a(FNV1A_BASIS, layout, sizeof layout), words, size_bytes);
}

static bool same_code(const exe_kernel_t *a, const uint32_t *a_words, size_t a_size, const exe_kernel_t *b,
                      const uint32_t *b_words, size_t b_size) {
  return a->binding_count == b->binding_count && a->texel_views == b->texel_views &&
         a->scalar_views == b->scalar_views && a->has_push_constant == b->has_push_constant && a_size == b_size &&
         (a_words == b_words || memcmp(a_words, b_words, a_size) == 0);
}

vkhlo_status_t exe_create_pipelines(vkhlo_executable_t *exe, uint32_t *const *spirv, const size_t *spirv_size_bytes) {
  vkrt_device_t *device = exe->context->device;
  int n = exe->kernel_count, slots = 1;
  while (slots < 2 * n) slots *= 2;
  /* open addressing on the code hash: kernel index + 1, 0 for empty */
  int *table = vkhlo_calloc(exe->allocator, (size_t)slots, sizeof *table);
  uint64_t *hashes = vkhlo_calloc(exe->allocator, (size_t)n + 1, sizeof *hashes);
  vkhlo_status_t st = table && hashes ? NULL : VKHLO_NO_MEMORY();
  exe->stats.pipelines = 0;
  for (int i = 0; i < n && !st; i++) {
    exe_kernel_t *k = &exe->kernels[i];
    const uint32_t *words = spirv ? spirv[i] : k->spirv;
    size_t size = spirv ? spirv_size_bytes[i] : k->spirv_size_bytes;
    hashes[i] = kernel_code_hash(k, words, size);
    int slot = (int)(hashes[i] & (uint64_t)(slots - 1));
    for (; table[slot]; slot = (slot + 1) & (slots - 1)) {
      int j = table[slot] - 1;
      const exe_kernel_t *o = &exe->kernels[j];
      if (hashes[j] == hashes[i] && same_code(k, words, size, o, spirv ? spirv[j] : o->spirv,
                                              spirv ? spirv_size_bytes[j] : o->spirv_size_bytes))
        break;
    }
    if (table[slot]) {
      k->pipeline = exe->kernels[table[slot] - 1].pipeline;
      k->pipeline_shared = true;
      continue;
    }
    st = vkrt_pipeline_create(device, words, size, k->binding_count, k->texel_views, k->scalar_views,
                              k->has_push_constant ? 4 : 0, &k->pipeline);
    if (st) {
      st = vkhlo_status_annotate(st, "kernel %s", k->name);
    } else {
      table[slot] = i + 1;
      exe->stats.pipelines++;
    }
  }
  vkhlo_free(exe->allocator, table);
  vkhlo_free(exe->allocator, hashes);
  return st;
}

vkhlo_status_t exe_create_device_objects(vkhlo_executable_t *exe, uint32_t *const *spirv,
                                         const size_t *spirv_size_bytes, const void *constant_data) {
  vkrt_device_t *device = exe->context->device;
  VKHLO_RETURN_IF_ERROR(exe_create_pipelines(exe, spirv, spirv_size_bytes));
  for (int i = 0; i < exe->allocation_count; i++) {
    exe_buffer_allocation_t *a = &exe->allocations[i];
    if (a->kind == EXE_ALLOCATION_PARAMETER || a->kind == EXE_ALLOCATION_RESULT || a->size == 0) continue;
    VKHLO_RETURN_IF_ERROR(vkrt_buffer_create(device, a->size, &a->buffer));
    if (a->kind == EXE_ALLOCATION_CONSTANT)
      VKHLO_RETURN_IF_ERROR(vkrt_buffer_upload(
          a->buffer, 0, (const unsigned char *)constant_data + a->constant_data_offset, a->size));
  }
  if (exe->straight_line) VKHLO_RETURN_IF_ERROR(vkrt_cmd_create(device, &exe->copy_cmd));
  return vkrt_cmd_create(device, &exe->cmd);
}

int vkhlo_executable_parameter_count(const vkhlo_executable_t *exe) { return exe->parameter_count; }
int vkhlo_executable_result_count(const vkhlo_executable_t *exe) { return exe->result_count; }

vkhlo_status_t vkhlo_executable_parameter_type(const vkhlo_executable_t *exe, int index,
                                               vkhlo_tensor_type_t *out_type) {
  if (index < 0 || index >= exe->parameter_count)
    return VKHLO_INVALID("parameter index %d out of range [0, %d)", index, exe->parameter_count);
  *out_type = exe->parameter_types[index];
  return NULL;
}

vkhlo_status_t vkhlo_executable_result_type(const vkhlo_executable_t *exe, int index,
                                            vkhlo_tensor_type_t *out_type) {
  if (index < 0 || index >= exe->result_count)
    return VKHLO_INVALID("result index %d out of range [0, %d)", index, exe->result_count);
  *out_type = exe->result_types[index];
  return NULL;
}

void vkhlo_executable_stats(const vkhlo_executable_t *exe, vkhlo_executable_stats_t *out) {
  *out = exe->stats;
}

int vkhlo_executable_check_count(const vkhlo_executable_t *exe) { return exe->check_count; }

vkhlo_status_t vkhlo_executable_check_result(const vkhlo_executable_t *exe, int index,
                                             vkhlo_check_result_t *out) {
  if (index < 0 || index >= exe->check_count)
    return VKHLO_INVALID("check index %d out of range [0, %d)", index, exe->check_count);
  *out = exe->checks[index].result;
  return NULL;
}

int vkhlo_executable_tuning(const vkhlo_executable_t *exe, vkhlo_kernel_tuning_t *out, int capacity) {
  for (int i = 0; i < exe->tuning_count && i < capacity; i++) out[i] = exe->tuning[i];
  return exe->tuning_count;
}
