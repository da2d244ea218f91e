/*
 * Lowering: HloModule -> executable program.
 *
 * Each computation lowered as a sequence (the entry, and the regions of
 * while, if and case) is lowered in the order the scheduler chose
 * (api/schedule.c); the IR itself is not reordered.  Each instruction, in
 * that order, becomes thunks over logical buffers:
 *   - parameter, constant, get_tuple_element, tuple, optimization_barrier
 *     produce no thunk: they name buffers (a constant's bytes go to the
 *     constant data);
 *   - reshape, a bitcast_convert between types of the same byte width, and
 *     a fusion that only does those, produce no thunk either: the result IS
 *     the operand's buffer (see "Layout" below);
 *   - while becomes a WHILE thunk with a cond and a body sequence over
 *     loop-state buffers (operands copied in first; body results copied
 *     back, through a temporary when a result is another loop-state buffer,
 *     so that swaps stay correct);
 *   - if / case become a CONDITIONAL thunk whose branches copy their
 *     results into the op's result buffers;
 *   - check.* ops become checks evaluated after the execution;
 *   - every other instruction (fusions included, multi-output ones with a
 *     tuple shape giving one buffer per element) becomes one DISPATCH of a
 *     kernel emitted by codegen (scatter first copies its inputs into its
 *     results).
 *
 * Layout.  Every buffer is dense row-major (minor_to_major = rank-1..0),
 * the layout of the caller's buffers; no pass changes it.  So a reshape,
 * which keeps the row-major linear order of the elements, is the same
 * bytes and is lowered as an alias, and transposes and broadcasts are
 * index arithmetic that the fusion pass folds into their consumers'
 * kernels.  This is the whole of layout assignment today.  A physical
 * layout change (e.g. a transposed copy of a matmul operand for coalesced
 * reads, or tiled layouts) would be inserted here, between scheduling and
 * lowering: give the value a layout, emit one transpose dispatch into a
 * buffer of that layout, and have the kernels that read it index it
 * accordingly (codegen would need the layout in the shape it sees).
 *
 * Live ranges.  Each thunk gets a position (1, 2, ...; a number can also
 * mark a moment without a thunk, e.g. the host reading a loop predicate);
 * each buffer records the position of the thunk that first writes it and of
 * its last use.  A buffer defined outside a loop and used inside it stays
 * live to the loop's end.  Results and checked values live to the end.
 * Buffer assignment (api/buffer_assignment.c) shares temp storage between
 * buffers whose ranges do not intersect.
 *
 * In-place reuse.  Lowering records, per dispatch input, whether the
 * output may be written over it (exe_inplace_candidate, api/inplace.c);
 * whether it is decided later, once every live range is final
 * (exe_decide_inplace).
 *
 * Regions may be shared by several ops (a callee inlined twice), so the
 * value -> buffer map is per lowering of a computation, indexed by
 * instruction id, never stored on the IR.
 */
#include "api/lowering.h"
#include "support/array.h"
#include "support/hash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>





static int new_buffer(lowering_t *l, exe_buffer_kind_t kind, uint64_t size_bytes, const char *name) {
  vkhlo_executable_t *exe = l->exe;
  if (exe->buffer_count == exe->buffer_capacity) {
    int cap = exe->buffer_capacity ? exe->buffer_capacity * 2 : 64;
    exe_buffer_t *p = vkhlo_realloc(l->exe->allocator, exe->buffers, sizeof *p * (size_t)cap);
    if (!p) return -1;
    exe->buffers = p;
    exe->buffer_capacity = cap;
  }
  char *copy = vkhlo_malloc(l->exe->allocator, strlen(name ? name : "") + 1);
  if (!copy) return -1;
  strcpy(copy, name ? name : "");
  exe_buffer_t *b = &exe->buffers[exe->buffer_count];
  memset(b, 0, sizeof *b);
  b->kind = kind;
  b->size_bytes = size_bytes < 16 ? 16 : align_up(size_bytes, 16);
  b->data_bytes = size_bytes;
  /* first written by the next thunk (callers lower it to the exact one) */
  b->def_position = l->position + 1;
  b->last_use_position = l->position + 1;
  b->inplace_of = -1;
  b->allocation = -1;
  b->name = copy;
  return exe->buffer_count++;
}

void lowering_use_buffer(lowering_t *l, int id) {
  exe_buffer_t *b = &l->exe->buffers[id];
  if (b->last_use_position < l->position) b->last_use_position = l->position;
}

exe_thunk_t *lowering_add_thunk(lowering_t *l, exe_sequence_t *seq, exe_thunk_kind_t kind) {
  if (seq->count == seq->capacity) {
    int cap = seq->capacity ? seq->capacity * 2 : 16;
    exe_thunk_t *p = vkhlo_realloc(l->exe->allocator, seq->thunks, sizeof *p * (size_t)cap);
    if (!p) return NULL;
    seq->thunks = p;
    seq->capacity = cap;
  }
  exe_thunk_t *t = &seq->thunks[seq->count++];
  memset(t, 0, sizeof *t);
  t->kind = kind;
  t->position = ++l->position;
  return t;
}

static vkhlo_status_t add_copy(lowering_t *l, exe_sequence_t *seq, int src, int dst) {
  exe_thunk_t *t = lowering_add_thunk(l, seq, EXE_THUNK_COPY);
  if (!t) return VKHLO_NO_MEMORY();
  t->src = src;
  t->dst = dst;
  uint64_t a = l->exe->buffers[src].size_bytes, b = l->exe->buffers[dst].size_bytes;
  t->size_bytes = a < b ? a : b;
  lowering_use_buffer(l, src);
  lowering_use_buffer(l, dst);
  return NULL;
}

/* A fresh temp buffer for each array element of |shape| (one for arrays). */
vkhlo_status_t lowering_new_value(lowering_t *l, const hlo_shape_t *shape, const char *name,
                                value_bufs_t *out) {
  int n = hlo_shape_is_tuple(shape) ? shape->tuple_count : 1;
  out->count = n;
  out->ids = vkhlo_calloc(l->exe->allocator, (size_t)(n ? n : 1), sizeof(int));
  if (!out->ids) return VKHLO_NO_MEMORY();
  for (int i = 0; i < n; i++) {
    const hlo_shape_t *s = hlo_shape_is_tuple(shape) ? &shape->tuple_shapes[i] : shape;
    if (hlo_shape_is_tuple(s))
      return VKHLO_UNIMPLEMENTED("%s: nested tuples are not supported", name);
    out->ids[i] = new_buffer(l, EXE_BUFFER_TEMP, hlo_shape_size_bytes(s), name);
    if (out->ids[i] < 0) return VKHLO_NO_MEMORY();
  }
  return NULL;
}

static vkhlo_status_t alias_value(const vkhlo_allocator_t *allocator, value_bufs_t *out, int count, const int *ids) {
  out->count = count;
  out->ids = vkhlo_calloc(allocator, (size_t)(count ? count : 1), sizeof(int));
  if (!out->ids) return VKHLO_NO_MEMORY();
  if (count) memcpy(out->ids, ids, sizeof(int) * (size_t)count);
  return NULL;
}

static vkhlo_status_t add_kernel(lowering_t *l, codegen_kernel_t *k, int *out_index) {
  vkhlo_executable_t *exe = l->exe;
  uint64_t h = fnv1a(FNV1A_BASIS, k->glsl, strlen(k->glsl));
  for (int i = 0; i < exe->kernel_count; i++) {
    if (l->kernel_hashes[i] == h && strcmp(exe->kernels[i].glsl, k->glsl) == 0) {
      *out_index = i;
      codegen_kernel_free(k);
      return NULL;
    }
  }
  if (exe->kernel_count == exe->kernel_capacity) {
    int cap = exe->kernel_capacity ? exe->kernel_capacity * 2 : 32;
    exe_kernel_t *p = vkhlo_realloc(l->exe->allocator, exe->kernels, sizeof *p * (size_t)cap);
    uint64_t *hp = vkhlo_realloc(l->exe->allocator, l->kernel_hashes, sizeof *hp * (size_t)cap);
    if (hp) l->kernel_hashes = hp;
    if (!p || !hp) {
      if (p) exe->kernels = p;
      codegen_kernel_free(k);
      return VKHLO_NO_MEMORY();
    }
    exe->kernels = p;
    exe->kernel_capacity = cap;
  }
  exe_kernel_t *e = &exe->kernels[exe->kernel_count];
  memset(e, 0, sizeof *e);
  e->name = k->name;
  e->glsl = k->glsl;
  e->binding_count = (uint32_t)(k->input_count + k->output_count);
  e->texel_views = k->texel_inputs;
  e->scalar_views = k->scalar_inputs;
  if (k->tune_key[0]) {
    size_t n = strlen(k->tune_key) + 1;
    e->tune_key = vkhlo_malloc(l->exe->allocator, n);
    if (!e->tune_key) {
      codegen_kernel_free(k);
      return VKHLO_NO_MEMORY();
    }
    memcpy(e->tune_key, k->tune_key, n);
    e->tune_a = k->tune_a;
    e->tune_b = k->tune_b;
    e->tune_candidates = k->tune_candidates;
  }
  memcpy(e->group_count, k->group_count, sizeof e->group_count);
  l->kernel_hashes[exe->kernel_count] = h;
  *out_index = exe->kernel_count++;
  k->name = k->glsl = NULL;
  return NULL;
}

/* Batched iterations (api/execute.c): a while loop without a trip count
 * whose cond and body hold only dispatches and copies of whole buffers
 * (no nested control flow, host call or per-iteration offset) gets the
 * gate and word-copy kernels the executor records them with where the
 * device has conditional rendering. */
static bool batchable_sequence(const exe_sequence_t *seq) {
  for (int i = 0; seq && i < seq->count; i++) {
    const exe_thunk_t *t = &seq->thunks[i];
    if (t->kind != EXE_THUNK_DISPATCH && !(t->kind == EXE_THUNK_COPY && !t->src_stride && !t->dst_offset)) return false;
  }
  return true;
}

static vkhlo_status_t add_loop_kernels(lowering_t *l, exe_thunk_t *loop) {
  if (!batchable_sequence(loop->cond) || !batchable_sequence(loop->body)) return NULL;
  codegen_kernel_t k;
  VKHLO_RETURN_IF_ERROR(codegen_emit_library_kernel(CODEGEN_LOOP_GATE, l->exe->allocator, &k));
  VKHLO_RETURN_IF_ERROR(add_kernel(l, &k, &loop->gate_kernel));
  l->exe->kernels[loop->gate_kernel].has_push_constant = true; /* the iteration, per dispatch */
  VKHLO_RETURN_IF_ERROR(codegen_emit_library_kernel(CODEGEN_COPY_WORDS, l->exe->allocator, &k));
  return add_kernel(l, &k, &loop->copy_kernel);
}

/* A constant buffer of |size| bytes holding |data| (zeros when NULL). */
static vkhlo_status_t add_constant_bytes(lowering_t *l, const char *name, const void *data, size_t data_size,
                                         size_t size, int *out_id) {
  int id = new_buffer(l, EXE_BUFFER_CONSTANT, size, name);
  if (id < 0) return VKHLO_NO_MEMORY();
  exe_buffer_t *b = &l->exe->buffers[id];
  uint64_t offset = align_up(l->constant_size, l->alignment);
  uint64_t end = offset + b->size_bytes;
  if (end > l->constant_capacity) {
    uint64_t cap = l->constant_capacity ? l->constant_capacity : 65536;
    while (cap < end) cap *= 2;
    unsigned char *p = vkhlo_realloc(l->exe->allocator, l->constant_data, cap);
    if (!p) return VKHLO_NO_MEMORY();
    memset(p + l->constant_capacity, 0, cap - l->constant_capacity);
    l->constant_data = p;
    l->constant_capacity = cap;
  }
  if (data) memcpy(l->constant_data + offset, data, data_size < size ? data_size : size);
  b->offset_bytes = offset;
  l->constant_size = end;
  *out_id = id;
  return NULL;
}

static vkhlo_status_t add_constant(lowering_t *l, const hlo_instruction_t *instr, int *out_id) {
  const hlo_literal_t *lit = instr->literal;
  return add_constant_bytes(l, instr->name, lit ? lit->data : NULL, lit ? lit->size_bytes : 0,
                            hlo_shape_size_bytes(&instr->shape), out_id);
}

static void location_string(const hlo_location_t *loc, char *buf, size_t size) {
  snprintf(buf, size, "%s:%d:%d", loc->file ? loc->file : "<input>", loc->line, loc->col);
}

vkhlo_status_t lowering_instr_error(const hlo_instruction_t *instr, vkhlo_status_code_t code,
                                  const char *what) {
  char loc[256];
  location_string(&instr->loc, loc, sizeof loc);
  return vkhlo_status_make(code, "%s: stablehlo.%s: %s", loc, hlo_opcode_name(instr->opcode), what);
}

static vkhlo_status_t lower_computation(lowering_t *l, const hlo_computation_t *c,
                                        const value_bufs_t *params, exe_sequence_t *seq,
                                        value_bufs_t *out_root, bool is_entry);


value_bufs_t *lowering_lookup(env_t *env, const hlo_instruction_t *instr) {
  return instr->id < env->size ? &env->vals[instr->id] : NULL;
}

vkhlo_status_t lowering_single_buffer(env_t *env, const hlo_instruction_t *user,
                                    const hlo_instruction_t *operand, int *out) {
  value_bufs_t *v = lowering_lookup(env, operand);
  if (!v || !v->ids) return lowering_instr_error(user, VKHLO_STATUS_INTERNAL, "operand not lowered");
  if (v->count != 1)
    return lowering_instr_error(user, VKHLO_STATUS_UNIMPLEMENTED, "tuple-typed operands are not supported");
  *out = v->ids[0];
  return NULL;
}

/* Lowers a region with |params| bound, as a fresh sequence. */
static vkhlo_status_t lower_region(lowering_t *l, const hlo_computation_t *c, int param_count,
                                   const int *param_ids, exe_sequence_t **out_seq,
                                   value_bufs_t *out_root) {
  exe_sequence_t *seq = vkhlo_calloc(l->exe->allocator, 1, sizeof *seq);
  if (!seq) return VKHLO_NO_MEMORY();
  *out_seq = seq;
  value_bufs_t *params = vkhlo_calloc(l->exe->allocator, (size_t)(param_count ? param_count : 1), sizeof *params);
  if (!params) return VKHLO_NO_MEMORY();
  int *storage = vkhlo_calloc(l->exe->allocator, (size_t)(param_count ? param_count : 1), sizeof(int));
  if (!storage) {
    vkhlo_free(l->exe->allocator, params);
    return VKHLO_NO_MEMORY();
  }
  for (int i = 0; i < param_count; i++) {
    storage[i] = param_ids[i];
    params[i].count = 1;
    params[i].ids = &storage[i];
  }
  vkhlo_status_t st = lower_computation(l, c, params, seq, out_root, false);
  vkhlo_free(l->exe->allocator, storage);
  vkhlo_free(l->exe->allocator, params);
  return st;
}

/* Extends every buffer defined before |start| and used in [start, end] to |end|. */
static void extend_loop_live_ranges(lowering_t *l, int start, int end) {
  for (int i = 0; i < l->exe->buffer_count; i++) {
    exe_buffer_t *b = &l->exe->buffers[i];
    if (b->def_position < start && b->last_use_position >= start && b->last_use_position < end)
      b->last_use_position = end;
  }
}

/* Counter table.  A counted loop's counter (attrs trip_counter, from
 * init by step: codegen/trip_count.c) takes, after iteration t, the value
 * init + (t + 1) * step, known before the program runs.  Where the body
 * computes it with an instruction nothing else in the body reads, that
 * instruction is not lowered (no dispatch each iteration, most of a small
 * body's cost on lavapipe, where a dispatch is a thread-pool round trip):
 * a constant table holds the trip_count next values, and the copy into
 * the counter's state reads entry t (exe_thunk_t.src_stride; the executor
 * knows t).  Loops of at most COUNTER_TABLE_MAX trips. */
#define COUNTER_TABLE_MAX 65536

/* The counted loop |w|'s counter step instruction that a table may
 * replace (see "Counter table"), or NULL. */
static const hlo_instruction_t *counter_step(const hlo_instruction_t *w, int n) {
  const hlo_attrs_t *a = &w->attrs;
  const hlo_computation_t *body = w->called_computations[1];
  if (!a->has_known_trip_count || a->known_trip_count < 1 || a->known_trip_count > COUNTER_TABLE_MAX ||
      a->trip_counter < 0 || a->trip_counter >= n || !body->root)
    return NULL;
  const hlo_shape_t *s = &w->operands[a->trip_counter]->shape;
  size_t bytes = hlo_element_type_size_bytes(s->element_type);
  if (s->rank != 0 || (bytes != 4 && bytes != 8) || !hlo_element_type_is_integer(s->element_type)) return NULL;
  const hlo_instruction_t *root = body->root, *x = root;
  if (root->opcode == HLO_OPCODE_TUPLE) {
    if (root->operand_count != n) return NULL;
    x = root->operands[a->trip_counter];
  } else if (n != 1) {
    return NULL;
  }
  if (x->opcode == HLO_OPCODE_PARAMETER || x->opcode == HLO_OPCODE_CONSTANT || x->opcode == HLO_OPCODE_TUPLE ||
      hlo_shape_is_tuple(&x->shape) || hlo_instruction_has_side_effect(x))
    return NULL;
  int uses = x == root; /* read by the root alone, once */
  for (int i = 0; i < body->instruction_count; i++)
    for (int k = 0; k < body->instructions[i]->operand_count; k++) uses += body->instructions[i]->operands[k] == x;
  return uses == 1 ? x : NULL;
}

/* The table of the counter's next values (see "Counter table"). */
static vkhlo_status_t add_counter_table(lowering_t *l, const hlo_instruction_t *w, int *out_id) {
  const hlo_attrs_t *a = &w->attrs;
  size_t bytes = hlo_element_type_size_bytes(w->operands[a->trip_counter]->shape.element_type);
  size_t size = (size_t)a->known_trip_count * bytes;
  unsigned char *data = vkhlo_malloc(l->exe->allocator, size + 1);
  if (!data) return VKHLO_NO_MEMORY();
  uint64_t v = a->trip_init;
  for (int64_t t = 0; t < a->known_trip_count; t++) { /* wrapping, as the body's add would */
    v += a->trip_step;
    if (bytes == 4) {
      uint32_t v32 = (uint32_t)v;
      memcpy(data + t * 4, &v32, 4);
    } else {
      memcpy(data + t * 8, &v, 8);
    }
  }
  vkhlo_status_t st = add_constant_bytes(l, w->name, data, size, size, out_id);
  vkhlo_free(l->exe->allocator, data);
  return st;
}

static vkhlo_status_t lower_while(lowering_t *l, env_t *env, const hlo_instruction_t *instr,
                                  exe_sequence_t *seq, value_bufs_t *out) {
  if (instr->called_count != 2) return lowering_instr_error(instr, VKHLO_STATUS_INTERNAL, "needs cond and body");
  const hlo_computation_t *cond = instr->called_computations[0];
  const hlo_computation_t *body = instr->called_computations[1];
  int n = hlo_shape_is_tuple(&instr->shape) ? instr->shape.tuple_count : 1;
  int total = instr->operand_count; /* n loop values + captures */
  if (total < n || cond->parameter_count != total || body->parameter_count != total)
    return lowering_instr_error(instr, VKHLO_STATUS_INTERNAL, "region parameter counts do not match");
  int *ids = vkhlo_calloc(l->exe->allocator, (size_t)(total ? total : 1), sizeof(int));
  if (!ids) return VKHLO_NO_MEMORY();
  vkhlo_status_t st = NULL;
  int start = l->position + 1;
  /* Loop state: fresh buffers, initialised from the operands. */
  if ((st = lowering_new_value(l, &instr->shape, instr->name, out))) goto done;
  for (int i = 0; i < total && !st; i++) {
    int src;
    if ((st = lowering_single_buffer(env, instr, instr->operands[i], &src))) break;
    if (i < n) {
      ids[i] = out->ids[i];
      st = add_copy(l, seq, src, ids[i]);
    } else {
      ids[i] = src; /* captured value, read in place */
    }
  }
  if (st) goto done;
  exe_thunk_t tmp;
  memset(&tmp, 0, sizeof tmp);
  tmp.kind = EXE_THUNK_WHILE;
  tmp.gate_kernel = tmp.copy_kernel = -1;
  tmp.has_trip_count = instr->attrs.has_known_trip_count;
  tmp.trip_count = instr->attrs.known_trip_count;
  value_bufs_t cond_root = {0, NULL}, body_root = {0, NULL};
  if ((st = lower_region(l, cond, total, ids, &tmp.cond, &cond_root))) goto loop_done;
  if (cond_root.count != 1) {
    st = lowering_instr_error(instr, VKHLO_STATUS_INVALID_ARGUMENT, "cond must return one tensor<i1>");
    goto loop_done;
  }
  tmp.pred_buffer = cond_root.ids[0];
  /* The host reads the predicate after the cond's last thunk: a moment of
   * its own, so that no thunk of the cond may reuse its storage. */
  l->position++;
  lowering_use_buffer(l, tmp.pred_buffer);
  const hlo_instruction_t *step = counter_step(instr, n); /* see "Counter table" */
  {
    const hlo_instruction_t *saved_step = l->counter_step;
    int saved_table = l->counter_table;
    l->counter_step = step;
    if (step) st = add_counter_table(l, instr, &l->counter_table);
    if (!st) st = lower_region(l, body, total, ids, &tmp.body, &body_root);
    l->counter_step = saved_step;
    l->counter_table = saved_table;
    if (st) goto loop_done;
  }
  if (body_root.count != n) {
    st = lowering_instr_error(instr, VKHLO_STATUS_INVALID_ARGUMENT, "body must return the loop values");
    goto loop_done;
  }
  /* Copy the body's results back into the loop state.  A result that is
   * another loop-state buffer goes through a temporary first. */
  int *staged = vkhlo_calloc(l->exe->allocator, (size_t)(n ? n : 1), sizeof(int));
  if (!staged) {
    st = VKHLO_NO_MEMORY();
    goto loop_done;
  }
  for (int i = 0; i < n && !st; i++) {
    staged[i] = body_root.ids[i];
    bool is_state = false;
    for (int j = 0; j < n; j++)
      if (j != i && body_root.ids[i] == ids[j]) is_state = true;
    if (is_state) {
      int t = new_buffer(l, EXE_BUFFER_TEMP, l->exe->buffers[ids[i]].size_bytes, instr->name);
      if (t < 0) st = VKHLO_NO_MEMORY();
      else {
        staged[i] = t;
        st = add_copy(l, tmp.body, body_root.ids[i], t);
      }
    }
  }
  for (int i = 0; i < n && !st; i++)
    if (staged[i] != ids[i]) st = add_copy(l, tmp.body, staged[i], ids[i]);
  vkhlo_free(l->exe->allocator, staged);
  if (st) goto loop_done;
  if (step) { /* the counter's copy reads the table's entry for the iteration */
    int k = (int)instr->attrs.trip_counter;
    exe_thunk_t *copy = NULL;
    for (int i = tmp.body->count - 1; i >= 0 && !copy; i--)
      if (tmp.body->thunks[i].kind == EXE_THUNK_COPY && tmp.body->thunks[i].dst == ids[k]) copy = &tmp.body->thunks[i];
    if (!copy || l->exe->buffers[copy->src].kind != EXE_BUFFER_CONSTANT) {
      st = lowering_instr_error(instr, VKHLO_STATUS_INTERNAL, "the counter table's copy is missing");
      goto loop_done;
    }
    copy->size_bytes = hlo_element_type_size_bytes(instr->operands[k]->shape.element_type);
    copy->src_stride = copy->size_bytes;
  }
  if (!tmp.has_trip_count && (st = add_loop_kernels(l, &tmp))) goto loop_done;
  {
    exe_thunk_t *t = lowering_add_thunk(l, seq, EXE_THUNK_WHILE);
    if (!t) {
      st = VKHLO_NO_MEMORY();
      goto loop_done;
    }
    int pos = t->position;
    *t = tmp;
    t->position = pos;
    tmp.cond = tmp.body = NULL;
    extend_loop_live_ranges(l, start, l->position);
    for (int i = 0; i < n; i++) lowering_use_buffer(l, out->ids[i]);
  }
loop_done:
  if (tmp.cond) { exe_free_sequence(l->exe->allocator, tmp.cond); vkhlo_free(l->exe->allocator, tmp.cond); }
  if (tmp.body) { exe_free_sequence(l->exe->allocator, tmp.body); vkhlo_free(l->exe->allocator, tmp.body); }
  vkhlo_free(l->exe->allocator, cond_root.ids);
  vkhlo_free(l->exe->allocator, body_root.ids);
done:
  vkhlo_free(l->exe->allocator, ids);
  return st;
}

static vkhlo_status_t lower_conditional(lowering_t *l, env_t *env, const hlo_instruction_t *instr,
                                        exe_sequence_t *seq, value_bufs_t *out) {
  int captures = instr->operand_count - 1;
  int branch_count = instr->called_count;
  if (branch_count < 1) return lowering_instr_error(instr, VKHLO_STATUS_INVALID_ARGUMENT, "needs branches");
  int *ids = vkhlo_calloc(l->exe->allocator, (size_t)(captures > 0 ? captures : 1), sizeof(int));
  if (!ids) return VKHLO_NO_MEMORY();
  vkhlo_status_t st = NULL;
  int selector;
  if ((st = lowering_single_buffer(env, instr, instr->operands[0], &selector))) goto done;
  for (int i = 0; i < captures && !st; i++)
    st = lowering_single_buffer(env, instr, instr->operands[1 + i], &ids[i]);
  if (st) goto done;
  if ((st = lowering_new_value(l, &instr->shape, instr->name, out))) goto done;
  exe_sequence_t **branches = vkhlo_calloc(l->exe->allocator, (size_t)branch_count, sizeof *branches);
  if (!branches) {
    st = VKHLO_NO_MEMORY();
    goto done;
  }
  for (int b = 0; b < branch_count && !st; b++) {
    const hlo_computation_t *c = instr->called_computations[b];
    if (c->parameter_count != captures) {
      st = lowering_instr_error(instr, VKHLO_STATUS_INTERNAL, "branch parameter count does not match");
      break;
    }
    value_bufs_t root = {0, NULL};
    st = lower_region(l, c, captures, ids, &branches[b], &root);
    if (!st && root.count != out->count)
      st = lowering_instr_error(instr, VKHLO_STATUS_INVALID_ARGUMENT, "branch result count does not match");
    for (int i = 0; !st && i < out->count; i++) st = add_copy(l, branches[b], root.ids[i], out->ids[i]);
    vkhlo_free(l->exe->allocator, root.ids);
  }
  exe_thunk_t *t = st ? NULL : lowering_add_thunk(l, seq, EXE_THUNK_CONDITIONAL);
  if (!st && !t) st = VKHLO_NO_MEMORY();
  if (st) {
    for (int b = 0; b < branch_count; b++)
      if (branches[b]) {
        exe_free_sequence(l->exe->allocator, branches[b]);
        vkhlo_free(l->exe->allocator, branches[b]);
      }
    vkhlo_free(l->exe->allocator, branches);
    goto done;
  }
  t->selector_buffer = selector;
  t->selector_is_pred = instr->opcode == HLO_OPCODE_IF;
  t->branch_count = branch_count;
  t->branches = branches;
  lowering_use_buffer(l, selector);
  for (int i = 0; i < out->count; i++) lowering_use_buffer(l, out->ids[i]);
done:
  vkhlo_free(l->exe->allocator, ids);
  return st;
}

static vkhlo_status_t lower_check(lowering_t *l, env_t *env, const hlo_instruction_t *instr) {
  vkhlo_executable_t *exe = l->exe;
  if (instr->operand_count != 2) return lowering_instr_error(instr, VKHLO_STATUS_INVALID_ARGUMENT, "check needs two operands");
  if (exe->check_count == exe->check_capacity) {
    int cap = exe->check_capacity ? exe->check_capacity * 2 : 8;
    exe_check_t *p = vkhlo_realloc(l->exe->allocator, exe->checks, sizeof *p * (size_t)cap);
    if (!p) return VKHLO_NO_MEMORY();
    exe->checks = p;
    exe->check_capacity = cap;
  }
  exe_check_t *c = &exe->checks[exe->check_count];
  memset(c, 0, sizeof *c);
  VKHLO_RETURN_IF_ERROR(lowering_single_buffer(env, instr, instr->operands[0], &c->actual));
  VKHLO_RETURN_IF_ERROR(lowering_single_buffer(env, instr, instr->operands[1], &c->expected));
  c->kind = instr->attrs.check_kind;
  c->tolerance = instr->attrs.tolerance;
  c->max_ulp_difference = instr->attrs.max_ulp_difference;
  location_string(&instr->loc, c->location, sizeof c->location);
  exe_tensor_type_from_shape(&instr->operands[0]->shape, &c->type);
  c->f64_demoted = l->target->demote_f64 && !l->target->shader_float64 &&
                   (c->type.element_type == VKHLO_F64 || c->type.element_type == VKHLO_C128);
  l->exe->buffers[c->actual].last_use_position = LIVE_TO_END;
  l->exe->buffers[c->expected].last_use_position = LIVE_TO_END;
  exe->check_count++;
  return NULL;
}

static vkhlo_status_t lower_kernel(lowering_t *l, env_t *env, const hlo_instruction_t *instr,
                                   exe_sequence_t *seq, value_bufs_t *out) {
  codegen_kernel_t k;
  memset(&k, 0, sizeof k);
  VKHLO_RETURN_IF_ERROR(codegen_emit_instruction(l->target, l->exe->allocator, instr, &k));
  vkhlo_status_t limits = codegen_target_check_kernel(l->target, instr, &k);
  if (limits) {
    codegen_kernel_free(&k);
    return limits;
  }
  int *bindings = vkhlo_calloc(l->exe->allocator, (size_t)(k.input_count + k.output_count + 1), sizeof(int));
  bool *inplace_ok = vkhlo_calloc(l->exe->allocator, (size_t)(k.input_count + 1), sizeof(bool));
  if (!bindings || !inplace_ok) {
    vkhlo_free(l->exe->allocator, bindings);
    vkhlo_free(l->exe->allocator, inplace_ok);
    codegen_kernel_free(&k);
    return VKHLO_NO_MEMORY();
  }
  vkhlo_status_t st = NULL;
  bool any_inplace = false;
  for (int i = 0; i < k.input_count && !st; i++) {
    if (i >= instr->operand_count) {
      st = lowering_instr_error(instr, VKHLO_STATUS_INTERNAL, "kernel has more inputs than operands");
      break;
    }
    st = lowering_single_buffer(env, instr, instr->operands[i], &bindings[i]);
    if (!st && k.output_count == 1 && k.input_count == instr->operand_count &&
        exe_inplace_candidate(l->module, l->marks, instr, i))
      any_inplace = inplace_ok[i] = true;
  }
  /* a dynamic_update_slice that may write over its operand: also the
   * kernel of that case, over the update only (exe_select_inplace_kernels
   * takes it where the decision falls so) */
  int window_kernel = -1, dus_operand = codegen_dus_in_place_operand(instr);
  if (!st && dus_operand >= 0 && dus_operand < k.input_count && inplace_ok[dus_operand]) {
    codegen_kernel_t wk;
    bool handled = false;
    st = codegen_emit_dus_in_place(l->target, l->exe->allocator, instr, &wk, &handled);
    if (!st && handled) {
      vkhlo_status_t limits = codegen_target_check_kernel(l->target, instr, &wk);
      bool none = wk.group_count[0] == 0 || wk.group_count[1] == 0 || wk.group_count[2] == 0;
      if (limits || none || wk.input_count != k.input_count || wk.output_count != k.output_count) {
        vkhlo_status_free(limits); /* the whole kernel stays */
        codegen_kernel_free(&wk);
      } else {
        st = add_kernel(l, &wk, &window_kernel);
      }
    }
  }
  if (!st) st = lowering_new_value(l, &instr->shape, instr->name, out);
  if (!st && out->count != k.output_count)
    st = lowering_instr_error(instr, VKHLO_STATUS_INTERNAL, "kernel output count does not match the result");
  bool is_scatter = instr->opcode == HLO_OPCODE_SCATTER;
  if (!st && is_scatter) {
    /* The scatter kernel updates its results in place: start from the
     * inputs (exe_decide_inplace drops a copy whose input dies here). */
    if (k.input_count < out->count)
      st = lowering_instr_error(instr, VKHLO_STATUS_INTERNAL, "scatter kernel has fewer inputs than results");
    for (int i = 0; i < out->count && !st; i++) {
      st = add_copy(l, seq, bindings[i], out->ids[i]);
      l->exe->buffers[out->ids[i]].def_position = l->position;
    }
  }
  int kernel = -1;
  bool empty = k.group_count[0] == 0 || k.group_count[1] == 0 || k.group_count[2] == 0;
  int input_count = k.input_count;
  if (!st) st = add_kernel(l, &k, &kernel);
  else codegen_kernel_free(&k);
  if (st || empty) { /* empty: zero-element result, nothing to run */
    vkhlo_free(l->exe->allocator, bindings);
    vkhlo_free(l->exe->allocator, inplace_ok);
    return st;
  }
  for (int i = 0; i < out->count; i++) bindings[input_count + i] = out->ids[i];
  exe_thunk_t *t = lowering_add_thunk(l, seq, EXE_THUNK_DISPATCH);
  if (!t) {
    vkhlo_free(l->exe->allocator, bindings);
    vkhlo_free(l->exe->allocator, inplace_ok);
    return VKHLO_NO_MEMORY();
  }
  t->kernel = kernel;
  t->bindings = bindings;
  t->binding_count = input_count + out->count;
  t->input_count = input_count;
  t->is_scatter = is_scatter;
  if (any_inplace) t->inplace_ok = inplace_ok;
  else vkhlo_free(l->exe->allocator, inplace_ok);
  t->has_window_kernel = window_kernel >= 0;
  t->window_kernel = window_kernel;
  t->window_input = dus_operand;
  for (int i = 0; i < t->binding_count; i++) lowering_use_buffer(l, bindings[i]);
  for (int i = 0; i < out->count && !is_scatter; i++) {
    exe_buffer_t *b = &l->exe->buffers[out->ids[i]];
    if (b->def_position > t->position) b->def_position = t->position;
  }
  return NULL;
}

/* A concatenate larger than one binding may be (maxStorageBufferRange)
 * whose operands are consecutive byte ranges of it (every dimension before
 * the concatenated one of extent 1): no kernel could bind it, so each
 * operand is copied into its place (the pieces a value too large for a
 * binding is computed in, codegen/expand.c, "values larger than a
 * binding").  False for any other instruction. */
static bool is_split_concatenate(const lowering_t *l, const hlo_instruction_t *instr) {
  if (instr->opcode != HLO_OPCODE_CONCATENATE || !codegen_target_exceeds_binding(l->target, &instr->shape))
    return false;
  const hlo_shape_t *s = &instr->shape;
  size_t es = hlo_element_type_size_bytes(s->element_type);
  if (es == 0 || (int)(8 * es) != hlo_element_type_bit_width(s->element_type)) return false;
  for (int d = 0; d < instr->attrs.dimension && d < s->rank; d++)
    if (s->dimensions[d] != 1) return false;
  return true;
}

static vkhlo_status_t lower_split_concatenate(lowering_t *l, env_t *env, const hlo_instruction_t *instr,
                                              exe_sequence_t *seq, value_bufs_t *out) {
  VKHLO_RETURN_IF_ERROR(lowering_new_value(l, &instr->shape, instr->name, out));
  uint64_t at = 0;
  for (int k = 0; k < instr->operand_count; k++) {
    int src = -1;
    VKHLO_RETURN_IF_ERROR(lowering_single_buffer(env, instr, instr->operands[k], &src));
    uint64_t bytes = hlo_shape_size_bytes(&instr->operands[k]->shape);
    if (bytes) {
      VKHLO_RETURN_IF_ERROR(add_copy(l, seq, src, out->ids[0]));
      exe_thunk_t *t = &seq->thunks[seq->count - 1];
      t->size_bytes = bytes;
      t->dst_offset = at;
    }
    at += bytes;
  }
  return NULL;
}

static vkhlo_status_t lower_instruction(lowering_t *l, env_t *env, const hlo_instruction_t *instr,
                                        const value_bufs_t *params, exe_sequence_t *seq,
                                        bool is_entry) {
  value_bufs_t *out = lowering_lookup(env, instr);
  if (!out) return lowering_instr_error(instr, VKHLO_STATUS_INTERNAL, "instruction id out of range");
  if (instr == l->counter_step) /* a counted loop's counter: its next value is read from the table */
    return alias_value(l->exe->allocator, out, 1, &l->counter_table);
  switch (instr->opcode) {
    case HLO_OPCODE_PARAMETER: {
      const value_bufs_t *p = &params[instr->parameter_number];
      return alias_value(l->exe->allocator, out, p->count, p->ids);
    }
    case HLO_OPCODE_CONSTANT: {
      int id = -1;
      VKHLO_RETURN_IF_ERROR(add_constant(l, instr, &id));
      return alias_value(l->exe->allocator, out, 1, &id);
    }
    case HLO_OPCODE_GET_TUPLE_ELEMENT: {
      value_bufs_t *t = lowering_lookup(env, instr->operands[0]);
      if (!t || instr->attrs.index < 0 || instr->attrs.index >= t->count)
        return lowering_instr_error(instr, VKHLO_STATUS_INVALID_ARGUMENT, "tuple index out of range");
      return alias_value(l->exe->allocator, out, 1, &t->ids[instr->attrs.index]);
    }
    case HLO_OPCODE_TUPLE:
    case HLO_OPCODE_OPTIMIZATION_BARRIER: {
      int *ids = vkhlo_calloc(l->exe->allocator, (size_t)(instr->operand_count + 1), sizeof(int));
      if (!ids) return VKHLO_NO_MEMORY();
      vkhlo_status_t st = NULL;
      for (int i = 0; i < instr->operand_count && !st; i++)
        st = lowering_single_buffer(env, instr, instr->operands[i], &ids[i]);
      if (!st) st = alias_value(l->exe->allocator, out, instr->operand_count, ids);
      vkhlo_free(l->exe->allocator, ids);
      return st;
    }
    case HLO_OPCODE_AFTER_ALL:
    case HLO_OPCODE_CREATE_TOKEN: {
      int id = new_buffer(l, EXE_BUFFER_TEMP, 16, instr->name);
      if (id < 0) return VKHLO_NO_MEMORY();
      return alias_value(l->exe->allocator, out, 1, &id);
    }
    case HLO_OPCODE_CHECK:
      if (!is_entry)
        return lowering_instr_error(instr, VKHLO_STATUS_UNIMPLEMENTED, "checks inside regions are not supported");
      VKHLO_RETURN_IF_ERROR(lower_check(l, env, instr));
      return alias_value(l->exe->allocator, out, 0, NULL);
    case HLO_OPCODE_WHILE:
      return lower_while(l, env, instr, seq, out);
    case HLO_OPCODE_IF:
    case HLO_OPCODE_CASE:
      return lower_conditional(l, env, instr, seq, out);
    case HLO_OPCODE_CUSTOM_CALL:
      return lowering_custom_call(l, env, instr, seq, out);
    case HLO_OPCODE_INFEED:
    case HLO_OPCODE_OUTFEED:
    case HLO_OPCODE_SEND:
    case HLO_OPCODE_RECV:
      return lowering_host_call(l, env, instr, seq, out);
    default: {
      uint64_t view = 0;
      if (exe_view_offset(instr, &view)) { /* part of an argument: a view of it */
        int id = -1;
        VKHLO_RETURN_IF_ERROR(lowering_single_buffer(env, instr, instr->operands[0], &id));
        uint64_t at = l->exe->buffers[id].offset_bytes + view;
        if (l->exe->buffers[id].kind == EXE_BUFFER_PARAMETER && at % EXE_VIEW_ALIGNMENT == 0) {
          int v = new_buffer(l, EXE_BUFFER_PARAMETER, hlo_shape_size_bytes(&instr->shape), instr->name);
          if (v < 0) return VKHLO_NO_MEMORY();
          l->exe->buffers[v].parameter_number = l->exe->buffers[id].parameter_number;
          l->exe->buffers[v].offset_bytes = at;
          return alias_value(l->exe->allocator, out, 1, &v);
        }
      }
      if (is_split_concatenate(l, instr)) return lower_split_concatenate(l, env, instr, seq, out);
      int a = exe_alias_operand(instr);
      if (a >= 0) { /* the same bytes: no dispatch, the operand's buffer */
        int id = -1;
        VKHLO_RETURN_IF_ERROR(lowering_single_buffer(env, instr, instr->operands[a], &id));
        return alias_value(l->exe->allocator, out, 1, &id);
      }
      return lower_kernel(l, env, instr, seq, out);
    }
  }
}

static vkhlo_status_t lower_computation(lowering_t *l, const hlo_computation_t *c,
                                        const value_bufs_t *params, exe_sequence_t *seq,
                                        value_bufs_t *out_root, bool is_entry) {
  const hlo_instruction_t *const *order = exe_schedule_sequence(l->schedule, c);
  if (!order) return VKHLO_INTERNAL("computation %s has no schedule", c->name);
  env_t env;
  env.size = l->module->next_instruction_id;
  env.vals = vkhlo_calloc(l->exe->allocator, (size_t)(env.size ? env.size : 1), sizeof *env.vals);
  if (!env.vals) return VKHLO_NO_MEMORY();
  vkhlo_status_t st = NULL;
  for (int i = 0; i < c->instruction_count && !st; i++)
    st = lower_instruction(l, &env, order[i], params, seq, is_entry);
  if (!st) {
    value_bufs_t *root = c->root ? lowering_lookup(&env, c->root) : NULL;
    if (!root) st = VKHLO_INTERNAL("computation %s has no root", c->name);
    else st = alias_value(l->exe->allocator, out_root, root->count, root->ids);
  }
  for (int i = 0; i < env.size; i++) vkhlo_free(l->exe->allocator, env.vals[i].ids);
  vkhlo_free(l->exe->allocator, env.vals);
  return st;
}

void exe_tensor_type_from_shape(const hlo_shape_t *shape, vkhlo_tensor_type_t *out) {
  memset(out, 0, sizeof *out);
  out->element_type = (vkhlo_element_type_t)shape->element_type;
  out->rank = shape->rank;
  for (int i = 0; i < shape->rank; i++) out->dimensions[i] = shape->dimensions[i];
}

vkhlo_status_t exe_lower_module(vkhlo_executable_t *exe, const hlo_module_t *module,
                                const exe_schedule_t *schedule, const codegen_target_t *target,
                                uint64_t alignment,
                                void **out_constant_data) {
  *out_constant_data = NULL;
  const hlo_computation_t *entry = module->entry_computation;
  if (!entry) return VKHLO_INVALID("module has no entry computation");
  lowering_t l;
  memset(&l, 0, sizeof l);
  l.exe = exe;
  l.module = module;
  l.schedule = schedule;
  l.target = target;
  l.alignment = alignment ? alignment : 16;
  l.marks = vkhlo_calloc(exe->allocator, (size_t)module->next_instruction_id + 1, sizeof(bool));
  if (!l.marks) return VKHLO_NO_MEMORY();

  exe->parameter_count = entry->parameter_count;
  exe->parameter_types = vkhlo_calloc(exe->allocator, (size_t)(entry->parameter_count + 1), sizeof(vkhlo_tensor_type_t));
  value_bufs_t *params = vkhlo_calloc(exe->allocator, (size_t)(entry->parameter_count + 1), sizeof *params);
  int *param_ids = vkhlo_calloc(exe->allocator, (size_t)(entry->parameter_count + 1), sizeof(int));
  vkhlo_status_t st = NULL;
  if (!exe->parameter_types || !params || !param_ids) st = VKHLO_NO_MEMORY();
  for (int i = 0; i < entry->parameter_count && !st; i++) {
    const hlo_instruction_t *p = entry->parameters[i];
    if (hlo_shape_is_tuple(&p->shape)) {
      st = lowering_instr_error(p, VKHLO_STATUS_UNIMPLEMENTED, "tuple parameters are not supported");
      break;
    }
    exe_tensor_type_from_shape(&p->shape, &exe->parameter_types[i]);
    param_ids[i] = new_buffer(&l, EXE_BUFFER_PARAMETER, hlo_shape_size_bytes(&p->shape), p->name);
    if (param_ids[i] < 0) {
      st = VKHLO_NO_MEMORY();
      break;
    }
    exe->buffers[param_ids[i]].parameter_number = i;
    params[i].count = 1;
    params[i].ids = &param_ids[i];
  }
  value_bufs_t root = {0, NULL};
  if (!st) st = lower_computation(&l, entry, params, &exe->main, &root, true);
  if (!st) {
    const hlo_shape_t *rs = &entry->root->shape;
    exe->result_count = root.count;
    exe->result_buffers = vkhlo_calloc(exe->allocator, (size_t)(root.count + 1), sizeof(int));
    exe->result_types = vkhlo_calloc(exe->allocator, (size_t)(root.count + 1), sizeof(vkhlo_tensor_type_t));
    if (!exe->result_buffers || !exe->result_types) st = VKHLO_NO_MEMORY();
    for (int i = 0; i < root.count && !st; i++) {
      exe->result_buffers[i] = root.ids[i];
      exe->buffers[root.ids[i]].last_use_position = LIVE_TO_END;
      exe_tensor_type_from_shape(hlo_shape_is_tuple(rs) ? &rs->tuple_shapes[i] : rs,
                                 &exe->result_types[i]);
    }
  }
  vkhlo_free(exe->allocator, root.ids);
  vkhlo_free(exe->allocator, params);
  vkhlo_free(exe->allocator, param_ids);
  vkhlo_free(exe->allocator, l.kernel_hashes);
  vkhlo_free(exe->allocator, l.marks);
  /* The end: results are copied out and checks read at position + 1. */
  for (int i = 0; i < exe->buffer_count; i++)
    if (exe->buffers[i].last_use_position > l.position + 1) exe->buffers[i].last_use_position = l.position + 1;
  exe->position_count = l.position + 2;
  exe->constant_size_bytes = l.constant_size;
  if (!st) exe->straight_line = exe_sequence_recorded_thunks(&exe->main, NULL) >= 0;
  if (st) {
    vkhlo_free(exe->allocator, l.constant_data);
    return st;
  }
  *out_constant_data = l.constant_data;
  return NULL;
}
