/*
 * The executor: runs an executable's thunk program on the device.
 *
 * Straight-line thunks are recorded into one command buffer with a
 * memory barrier between consecutive thunks.  Control flow is decided on
 * the host: before a while or conditional the recorded work is submitted
 * and waited for, the predicate (or case index) is read back, and the
 * chosen sequence is recorded next — one submission per loop iteration.
 * Results are copied into fresh buffers owned by the caller; then the
 * check buffers are read back and compared (api/check.c).
 */
#include "api/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct run {
  vkhlo_executable_t *exe;
  vkhlo_buffer_t *const *args;
  bool recording;
  bool need_barrier;
} run_t;

static void resolve(run_t *r, int id, vkrt_buffer_t **out_buffer, uint64_t *out_offset,
                    uint64_t *out_size) {
  const exe_buffer_t *b = &r->exe->buffers[id];
  switch (b->kind) {
    case EXE_BUFFER_PARAMETER:
      *out_buffer = r->args[b->parameter_number]->buffer;
      *out_offset = 0;
      *out_size = vkrt_buffer_size(*out_buffer);
      if (*out_size > b->size_bytes) *out_size = b->size_bytes;
      return;
    case EXE_BUFFER_CONSTANT:
      *out_buffer = r->exe->constant_pool;
      break;
    case EXE_BUFFER_TEMP:
      *out_buffer = r->exe->temp_pool;
      break;
  }
  *out_offset = b->offset_bytes;
  *out_size = b->size_bytes;
}

static vkhlo_status_t ensure_recording(run_t *r) {
  if (r->recording) {
    if (r->need_barrier) vkrt_cmd_barrier(r->exe->cmd);
    r->need_barrier = true;
    return NULL;
  }
  VKHLO_RETURN_IF_ERROR(vkrt_cmd_begin(r->exe->cmd));
  r->recording = true;
  r->need_barrier = true;
  return NULL;
}

static vkhlo_status_t flush(run_t *r) {
  if (!r->recording) return NULL;
  r->recording = false;
  r->need_barrier = false;
  return vkrt_cmd_submit_and_wait(r->exe->cmd);
}

static vkhlo_status_t read_scalar(run_t *r, int id, int64_t *out) {
  vkrt_buffer_t *buf;
  uint64_t off, size;
  resolve(r, id, &buf, &off, &size);
  int32_t v = 0;
  VKHLO_RETURN_IF_ERROR(vkrt_buffer_download(buf, off, &v, 4));
  *out = v;
  return NULL;
}

static vkhlo_status_t run_sequence(run_t *r, const exe_sequence_t *seq) {
  vkhlo_executable_t *exe = r->exe;
  for (int i = 0; i < seq->count; i++) {
    const exe_thunk_t *t = &seq->thunks[i];
    switch (t->kind) {
      case EXE_THUNK_DISPATCH: {
        exe_kernel_t *k = &exe->kernels[t->kernel];
        vkrt_binding_t bindings[64];
        if (t->binding_count > 64) return VKHLO_UNIMPLEMENTED("kernel %s has too many bindings", k->name);
        for (int b = 0; b < t->binding_count; b++)
          resolve(r, t->bindings[b], &bindings[b].buffer, &bindings[b].offset_bytes, &bindings[b].size_bytes);
        VKHLO_RETURN_IF_ERROR(ensure_recording(r));
        VKHLO_RETURN_IF_ERROR(vkrt_cmd_dispatch(exe->cmd, k->pipeline, (uint32_t)t->binding_count,
                                                bindings, NULL, 0, k->group_count));
        break;
      }
      case EXE_THUNK_COPY: {
        vkrt_buffer_t *sb, *db;
        uint64_t so, ss, dof, ds;
        resolve(r, t->src, &sb, &so, &ss);
        resolve(r, t->dst, &db, &dof, &ds);
        uint64_t size = t->size_bytes;
        if (size > ss) size = ss;
        if (size > ds) size = ds;
        VKHLO_RETURN_IF_ERROR(ensure_recording(r));
        VKHLO_RETURN_IF_ERROR(vkrt_cmd_copy(exe->cmd, sb, so, db, dof, size));
        break;
      }
      case EXE_THUNK_WHILE: {
        uint64_t iterations = 0;
        for (;;) {
          VKHLO_RETURN_IF_ERROR(run_sequence(r, t->cond));
          VKHLO_RETURN_IF_ERROR(flush(r));
          int64_t pred;
          VKHLO_RETURN_IF_ERROR(read_scalar(r, t->pred_buffer, &pred));
          if (!(pred & 0xff)) break;
          if (++iterations > exe->max_loop_iterations)
            return vkhlo_make_status(VKHLO_STATUS_DEADLINE_EXCEEDED,
                                     "while loop ran more than %llu iterations (VKHLO_MAX_LOOP_ITERATIONS)",
                                     (unsigned long long)exe->max_loop_iterations);
          VKHLO_RETURN_IF_ERROR(run_sequence(r, t->body));
        }
        break;
      }
      case EXE_THUNK_CONDITIONAL: {
        VKHLO_RETURN_IF_ERROR(flush(r));
        int64_t sel;
        VKHLO_RETURN_IF_ERROR(read_scalar(r, t->selector_buffer, &sel));
        int branch;
        if (t->selector_is_pred) branch = (sel & 0xff) ? 0 : 1;
        else branch = (sel < 0 || sel >= t->branch_count) ? t->branch_count - 1 : (int)sel;
        VKHLO_RETURN_IF_ERROR(run_sequence(r, t->branches[branch]));
        break;
      }
    }
  }
  return NULL;
}

static bool same_type(const vkhlo_tensor_type_t *a, const vkhlo_tensor_type_t *b) {
  if (a->element_type != b->element_type || a->rank != b->rank) return false;
  for (int i = 0; i < a->rank; i++)
    if (a->dimensions[i] != b->dimensions[i]) return false;
  return true;
}

static vkhlo_status_t evaluate_checks(run_t *r) {
  vkhlo_executable_t *exe = r->exe;
  for (int i = 0; i < exe->check_count; i++) {
    exe_check_t *c = &exe->checks[i];
    size_t size = vkhlo_tensor_type_size_bytes(&c->type);
    unsigned char *a = malloc(size + 1), *e = malloc(size + 1);
    vkhlo_status_t st = (!a || !e) ? VKHLO_NO_MEMORY() : NULL;
    vkrt_buffer_t *buf;
    uint64_t off, bsize;
    if (!st && size) {
      resolve(r, c->actual, &buf, &off, &bsize);
      st = vkrt_buffer_download(buf, off, a, size);
    }
    if (!st && size) {
      resolve(r, c->expected, &buf, &off, &bsize);
      st = vkrt_buffer_download(buf, off, e, size);
    }
    if (!st) exe_check_evaluate(c, a, e);
    free(a);
    free(e);
    if (st) return st;
  }
  return NULL;
}

vkhlo_status_t vkhlo_executable_execute(vkhlo_executable_t *exe, int arg_count,
                                        vkhlo_buffer_t *const *args, int result_count,
                                        vkhlo_buffer_t **out_results) {
  for (int i = 0; i < result_count && out_results; i++) out_results[i] = NULL;
  if (arg_count != exe->parameter_count)
    return VKHLO_INVALID("executable takes %d arguments, %d given", exe->parameter_count, arg_count);
  if (result_count != exe->result_count || (result_count && !out_results))
    return VKHLO_INVALID("executable returns %d results, room for %d given", exe->result_count, result_count);
  for (int i = 0; i < arg_count; i++) {
    if (!args[i]) return VKHLO_INVALID("argument %d is NULL", i);
    if (!same_type(&args[i]->type, &exe->parameter_types[i])) {
      char want[64], got[64];
      snprintf(want, sizeof want, "%s rank %d", vkhlo_element_type_name(exe->parameter_types[i].element_type),
               exe->parameter_types[i].rank);
      snprintf(got, sizeof got, "%s rank %d", vkhlo_element_type_name(args[i]->type.element_type),
               args[i]->type.rank);
      return VKHLO_INVALID("argument %d has type %s, the program expects %s (or dimensions differ)", i, got, want);
    }
  }
  for (int i = 0; i < exe->check_count; i++) {
    memset(&exe->checks[i].result, 0, sizeof exe->checks[i].result);
  }
  run_t r = {exe, args, false, false};
  vkhlo_status_t st = run_sequence(&r, &exe->main);
  for (int i = 0; i < result_count && !st; i++) {
    st = vkhlo_buffer_create(exe->context, &exe->result_types[i], NULL, &out_results[i]);
    if (st) break;
    vkrt_buffer_t *src;
    uint64_t off, size;
    resolve(&r, exe->result_buffers[i], &src, &off, &size);
    uint64_t n = vkhlo_tensor_type_size_bytes(&exe->result_types[i]);
    if (n) {
      st = ensure_recording(&r);
      if (!st) st = vkrt_cmd_copy(exe->cmd, src, off, out_results[i]->buffer, 0, n);
    }
  }
  vkhlo_status_t fst = flush(&r);
  if (!st) st = fst;
  else vkhlo_status_free(fst);
  if (!st) st = evaluate_checks(&r);
  if (st) {
    for (int i = 0; i < result_count; i++) {
      vkhlo_buffer_destroy(out_results[i]);
      out_results[i] = NULL;
    }
  }
  return st;
}
