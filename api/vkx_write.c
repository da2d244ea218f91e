/*
 * Writing .vkx files (the format: api/vkx.h) from an executable compiled
 * (or loaded) on a context.  The SPIR-V comes from the kernels (the
 * compile keeps each module in exe_kernel_t after making its pipeline),
 * the constants are read back from their device allocations, and the
 * device requirements are the union of the modules' capabilities and the
 * program's limits (alignment, largest allocation, largest binding, group
 * counts).
 */
#define _POSIX_C_SOURCE 200809L
#include "api/vkx.h"
#include "support/file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct writer {
  vkx_bytes_t b;
  bool oom;
} writer_t;

static void reserve(writer_t *w, size_t n) {
  if (w->oom) return;
  if (w->b.size + n <= w->b.capacity) return;
  size_t cap = w->b.capacity ? w->b.capacity : 4096;
  while (cap < w->b.size + n) cap *= 2;
  uint8_t *p = realloc(w->b.data, cap);
  if (!p) {
    w->oom = true;
    return;
  }
  w->b.data = p;
  w->b.capacity = cap;
}
static void put(writer_t *w, const void *data, size_t n) {
  reserve(w, n);
  if (w->oom) return;
  if (n) memcpy(w->b.data + w->b.size, data, n);
  w->b.size += n;
}
static void put_u32(writer_t *w, uint32_t v) {
  uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
  put(w, b, 4);
}
static void put_u64(writer_t *w, uint64_t v) {
  put_u32(w, (uint32_t)v);
  put_u32(w, (uint32_t)(v >> 32));
}
static void put_i32(writer_t *w, int v) { put_u32(w, (uint32_t)v); }
static void put_str(writer_t *w, const char *s) {
  size_t n = s ? strlen(s) : 0;
  put_u32(w, (uint32_t)n);
  put(w, s, n);
}
static void put_type(writer_t *w, const vkhlo_tensor_type_t *t) {
  put_u32(w, (uint32_t)t->element_type);
  put_u32(w, (uint32_t)t->rank);
  for (int i = 0; i < t->rank; i++) put_u64(w, (uint64_t)t->dimensions[i]);
}
static void pad_to(writer_t *w, size_t alignment) {
  static const uint8_t zeros[64];
  while (!w->oom && w->b.size % alignment) put(w, zeros, alignment - w->b.size % alignment > 64 ? 64 : alignment - w->b.size % alignment);
}
static void patch_u64(writer_t *w, size_t at, uint64_t v) {
  if (w->oom) return;
  for (int i = 0; i < 8; i++) w->b.data[at + i] = (uint8_t)(v >> (8 * i));
}
/* Starts section |tag|; returns where its size goes. */
static size_t begin_section(writer_t *w, const char *tag) {
  put(w, tag, 4);
  put_u32(w, 0);
  size_t at = w->b.size;
  put_u64(w, 0);
  return at;
}
static void end_section(writer_t *w, size_t size_at) {
  patch_u64(w, size_at, w->b.size - (size_at + 8));
  pad_to(w, 8);
}

static void put_sequence(writer_t *w, const exe_sequence_t *seq) {
  put_u32(w, (uint32_t)seq->count);
  for (int i = 0; i < seq->count; i++) {
    const exe_thunk_t *t = &seq->thunks[i];
    put_u32(w, (uint32_t)t->kind);
    put_i32(w, t->position);
    switch (t->kind) {
      case EXE_THUNK_DISPATCH:
        put_i32(w, t->kernel);
        put_u32(w, (uint32_t)t->binding_count);
        put_u32(w, (uint32_t)t->input_count);
        put_u32(w, t->is_scatter);
        for (int b = 0; b < t->binding_count; b++) put_i32(w, t->bindings[b]);
        break;
      case EXE_THUNK_COPY:
        put_i32(w, t->src);
        put_i32(w, t->dst);
        put_u64(w, t->size_bytes);
        put_u64(w, t->src_stride);
        put_u64(w, t->dst_offset);
        break;
      case EXE_THUNK_WHILE:
        put_i32(w, t->pred_buffer);
        put_u64(w, t->has_trip_count ? (uint64_t)t->trip_count : ~0ull);
        put_u32(w, (uint32_t)t->rotate_count);
        for (int p = 0; p < 2 * t->rotate_count; p++) put_i32(w, t->rotate[p]);
        put_i32(w, t->gate_kernel);
        put_i32(w, t->copy_kernel);
        put_sequence(w, t->cond);
        put_sequence(w, t->body);
        break;
      case EXE_THUNK_CONDITIONAL:
        put_i32(w, t->selector_buffer);
        put_u32(w, t->selector_is_pred);
        put_u32(w, (uint32_t)t->branch_count);
        for (int b = 0; b < t->branch_count; b++) put_sequence(w, t->branches[b]);
        break;
      case EXE_THUNK_HOST:
        put_str(w, t->host_op);
        put_u64(w, (uint64_t)t->channel_id);
        put_str(w, t->host_config);
        put_u32(w, (uint32_t)t->binding_count);
        put_u32(w, (uint32_t)t->input_count);
        for (int b = 0; b < t->binding_count; b++) put_i32(w, t->bindings[b]);
        for (int b = 0; b < t->binding_count; b++) put_type(w, &t->host_types[b]);
        break;
    }
  }
}

static void binding_limits(const vkhlo_executable_t *exe, const exe_sequence_t *seq, vkx_requirements_t *req) {
  for (int i = 0; i < seq->count; i++) {
    const exe_thunk_t *t = &seq->thunks[i];
    if (t->kind == EXE_THUNK_DISPATCH)
      for (int b = 0; b < t->binding_count; b++)
        if (exe->buffers[t->bindings[b]].size_bytes > req->max_binding_bytes)
          req->max_binding_bytes = exe->buffers[t->bindings[b]].size_bytes;
    if (t->cond) binding_limits(exe, t->cond, req);
    if (t->body) binding_limits(exe, t->body, req);
    for (int b = 0; b < t->branch_count; b++) binding_limits(exe, t->branches[b], req);
  }
}

static vkhlo_status_t requirements(const vkhlo_executable_t *exe, vkx_requirements_t *req) {
  memset(req, 0, sizeof *req);
  req->subgroup_size = exe->context->target.subgroup_size;
  req->alignment = exe->alignment;
  for (int i = 0; i < exe->kernel_count; i++) {
    const exe_kernel_t *k = &exe->kernels[i];
    if (!k->spirv) return VKHLO_INTERNAL("kernel %s kept no SPIR-V", k->name);
    VKHLO_RETURN_IF_ERROR(vkx_scan_spirv(k->spirv, k->spirv_size_bytes, req));
    for (int a = 0; a < 3; a++)
      if (k->group_count[a] > req->max_group_count[a]) req->max_group_count[a] = k->group_count[a];
    if (k->binding_count > req->max_bindings) req->max_bindings = k->binding_count;
    if (k->has_push_constant) req->push_constant_bytes = 4;
  }
  for (int i = 0; i < exe->allocation_count; i++)
    if (exe->allocations[i].size > req->max_allocation_bytes) req->max_allocation_bytes = exe->allocations[i].size;
  binding_limits(exe, &exe->main, req);
  return NULL;
}

/* The bytes of the .vkx (|file|) and, with |side_weights|, of the weights
 * file (|weights|, named |weights_name| in the .vkx). */
static vkhlo_status_t serialize(const vkhlo_executable_t *exe, bool side_weights, const char *weights_name,
                                vkx_bytes_t *file, vkx_bytes_t *weights) {
  memset(file, 0, sizeof *file);
  memset(weights, 0, sizeof *weights);
  vkx_requirements_t req;
  VKHLO_RETURN_IF_ERROR(requirements(exe, &req));
  /* the constants, read back from the device, laid out at multiples of 64 */
  int nconst = 0;
  for (int i = 0; i < exe->allocation_count; i++)
    nconst += exe->allocations[i].kind == EXE_ALLOCATION_CONSTANT && exe->allocations[i].size > 0;
  vkx_constant_t *constants = calloc((size_t)nconst + 1, sizeof *constants);
  writer_t data = {{0}, false};
  if (!constants) return VKHLO_NO_MEMORY();
  vkhlo_status_t st = NULL;
  for (int i = 0, k = 0; i < exe->allocation_count && !st; i++) {
    const exe_buffer_allocation_t *a = &exe->allocations[i];
    if (a->kind != EXE_ALLOCATION_CONSTANT || a->size == 0) continue;
    pad_to(&data, VKX_DATA_ALIGNMENT);
    constants[k].allocation = i;
    constants[k].offset = data.b.size;
    constants[k].size = a->size;
    reserve(&data, (size_t)a->size);
    if (data.oom) break;
    if (!a->buffer) st = VKHLO_INTERNAL("constant allocation %d has no device buffer", i);
    else st = vkrt_buffer_download(a->buffer, 0, data.b.data + data.b.size, a->size);
    data.b.size += (size_t)a->size;
    k++;
  }
  if (!st && data.oom) st = VKHLO_NO_MEMORY();
  if (st) {
    free(constants);
    free(data.b.data);
    return st;
  }

  writer_t w = {{0}, false};
  put(&w, VKX_MAGIC, 8);
  put_u32(&w, VKX_VERSION);
  put_u32(&w, side_weights ? VKX_FLAG_SIDE_WEIGHTS : 0);
  put_u64(&w, 0); /* file size, patched */
  put_u64(&w, 0); /* checksum, patched */
  put_u32(&w, VKX_SECTION_COUNT);
  put_u32(&w, 0);
  put_u64(&w, 0);

  size_t at = begin_section(&w, "REQS");
  put_u32(&w, req.features);
  put_u32(&w, req.subgroup_size);
  for (int k = 0; k < 3; k++) put_u32(&w, req.local_size[k]);
  put_u32(&w, req.max_invocations);
  for (int k = 0; k < 3; k++) put_u32(&w, req.max_group_count[k]);
  put_u32(&w, req.max_bindings);
  put_u32(&w, req.push_constant_bytes);
  put_u32(&w, 0);
  put_u64(&w, req.alignment);
  put_u64(&w, req.max_allocation_bytes);
  put_u64(&w, req.max_binding_bytes);
  end_section(&w, at);

  at = begin_section(&w, "STAT");
  const vkhlo_executable_stats_t *s = &exe->stats;
  int64_t stats[8] = {s->instructions, s->fused_clusters, s->kernels, s->dispatches,
                      s->bytes_moved, s->peak_intermediate_bytes, s->liveness_lower_bound_bytes, s->barriers};
  for (int i = 0; i < 8; i++) put_u64(&w, (uint64_t)stats[i]);
  end_section(&w, at);

  at = begin_section(&w, "SIGN");
  put_u32(&w, (uint32_t)exe->parameter_count);
  put_u32(&w, (uint32_t)exe->result_count);
  for (int i = 0; i < exe->parameter_count; i++) put_type(&w, &exe->parameter_types[i]);
  for (int i = 0; i < exe->result_count; i++) put_type(&w, &exe->result_types[i]);
  for (int i = 0; i < exe->result_count; i++) put_i32(&w, exe->result_buffers[i]);
  end_section(&w, at);

  at = begin_section(&w, "BUFS");
  put_u32(&w, (uint32_t)exe->buffer_count);
  for (int i = 0; i < exe->buffer_count; i++) {
    const exe_buffer_t *b = &exe->buffers[i];
    put_u32(&w, (uint32_t)b->kind);
    put_i32(&w, b->parameter_number);
    put_u64(&w, b->size_bytes);
    put_i32(&w, b->def_position);
    put_i32(&w, b->last_use_position);
    put_i32(&w, b->inplace_of);
    put_i32(&w, b->allocation);
    put_u64(&w, b->offset_bytes);
    put_str(&w, b->name);
  }
  end_section(&w, at);

  at = begin_section(&w, "ALOC");
  put_u32(&w, (uint32_t)exe->allocation_count);
  for (int i = 0; i < exe->allocation_count; i++) {
    const exe_buffer_allocation_t *a = &exe->allocations[i];
    put_u32(&w, (uint32_t)a->kind);
    put_u32(&w, (a->is_entry_computation_parameter ? 1u : 0u) | (a->maybe_live_out ? 2u : 0u));
    put_i32(&w, a->parameter_number);
    put_i32(&w, a->result_number);
    put_u64(&w, a->size);
    put_u64(&w, a->constant_data_offset);
  }
  end_section(&w, at);

  at = begin_section(&w, "KERN");
  put_u32(&w, (uint32_t)exe->kernel_count);
  for (int i = 0; i < exe->kernel_count; i++) {
    const exe_kernel_t *k = &exe->kernels[i];
    put_str(&w, k->name);
    put_u32(&w, k->binding_count);
    for (int a = 0; a < 3; a++) put_u32(&w, k->group_count[a]);
    put_u32(&w, k->has_push_constant ? 1u : 0u);
    put_u32(&w, k->push_constant);
    put_u64(&w, k->texel_views);
    put_u64(&w, k->scalar_views);
    int spirv_of = -1;
    for (int j = 0; k->spirv_shared && j < i && spirv_of < 0; j++)
      if (exe->kernels[j].spirv == k->spirv && !exe->kernels[j].spirv_shared) spirv_of = j;
    put_i32(&w, spirv_of);
    if (spirv_of >= 0) continue;
    put_u64(&w, k->spirv_size_bytes);
    put(&w, k->spirv, k->spirv_size_bytes);
  }
  end_section(&w, at);

  at = begin_section(&w, "PROG");
  put_u32(&w, (uint32_t)exe->position_count);
  put_u32(&w, exe->straight_line ? 1u : 0u);
  put_sequence(&w, &exe->main);
  end_section(&w, at);

  at = begin_section(&w, "CHCK");
  put_u32(&w, (uint32_t)exe->check_count);
  for (int i = 0; i < exe->check_count; i++) {
    const exe_check_t *c = &exe->checks[i];
    put_u32(&w, (uint32_t)c->kind);
    put_str(&w, c->location);
    put_i32(&w, c->actual);
    put_i32(&w, c->expected);
    put_type(&w, &c->type);
    uint64_t bits;
    memcpy(&bits, &c->tolerance, sizeof bits);
    put_u64(&w, bits);
    put_u64(&w, (uint64_t)c->max_ulp_difference);
    put_u32(&w, c->f64_demoted ? 1u : 0u);
  }
  end_section(&w, at);

  at = begin_section(&w, "CNST");
  put_u64(&w, exe->constant_size_bytes);
  put_u32(&w, (uint32_t)nconst);
  put_u32(&w, 0);
  put_str(&w, side_weights ? weights_name : "");
  put_u64(&w, side_weights ? data.b.size : 0);
  put_u64(&w, side_weights ? vkx_checksum(data.b.data, data.b.size) : 0);
  for (int i = 0; i < nconst; i++) {
    put_i32(&w, constants[i].allocation);
    put_u32(&w, 0);
    put_u64(&w, constants[i].offset);
    put_u64(&w, constants[i].size);
  }
  end_section(&w, at);
  free(constants);

  at = begin_section(&w, "DATA");
  if (!side_weights) put(&w, data.b.data, data.b.size);
  end_section(&w, at);

  if (w.oom) {
    free(w.b.data);
    free(data.b.data);
    return VKHLO_NO_MEMORY();
  }
  patch_u64(&w, 16, w.b.size);
  patch_u64(&w, 24, vkx_checksum(w.b.data + VKX_HEADER_BYTES, w.b.size - VKX_HEADER_BYTES));
  *file = w.b;
  if (side_weights) *weights = data.b;
  else free(data.b.data);
  return NULL;
}

vkhlo_status_t vkhlo_executable_serialize(const vkhlo_executable_t *exe, void **out_data, size_t *out_size) {
  *out_data = NULL;
  *out_size = 0;
  vkx_bytes_t file, weights;
  VKHLO_RETURN_IF_ERROR(serialize(exe, false, NULL, &file, &weights));
  *out_data = file.data;
  *out_size = file.size;
  return NULL;
}

vkhlo_status_t vkhlo_executable_save(const vkhlo_executable_t *exe, const char *path, const char *weights_path) {
  if (!exe || !path) return VKHLO_INVALID("vkhlo_executable_save: executable or path is NULL");
  const char *base = NULL;
  if (weights_path) {
    base = strrchr(weights_path, '/');
    base = base ? base + 1 : weights_path;
    if (!*base) return VKHLO_INVALID("vkhlo_executable_save: weights path %s names no file", weights_path);
  }
  vkx_bytes_t file, weights;
  VKHLO_RETURN_IF_ERROR(serialize(exe, weights_path != NULL, base, &file, &weights));
  vkhlo_status_t st =
      weights_path ? support_write_file(exe->allocator, weights_path, weights.data, weights.size) : NULL;
  if (!st) st = support_write_file(exe->allocator, path, file.data, file.size);
  free(file.data);
  free(weights.data);
  return st;
}
