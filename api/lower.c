/*
 * Lowering: HloModule -> executable program.
 *
 * Scheduling.  Each computation (the entry and every region lowered as a
 * sequence) is first put in an order that keeps memory low: a list
 * scheduler over the instruction DAG (schedule_computation) that always
 * runs the ready instruction that frees the most bytes net of what it
 * allocates, ties going to the earlier instruction; instructions that only
 * rename bytes (parameter, constant, tuple, get_tuple_element, reshape...)
 * run as soon as they are ready, and side-effecting ones (check, rng,
 * custom_call...) keep their relative order.  The peak of that order is
 * simulated and compared with the original order's; the lower wins.  The
 * IR itself is not reordered: the order is an array local to the lowering.
 *
 * Then each instruction, in that order, becomes thunks over logical
 * buffers:
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
 * In-place reuse.  Once all live ranges are known (after the whole module
 * is lowered), decide_inplace lets a dispatch write its output into the
 * storage of an input that dies at that dispatch when that is safe:
 *   - an elementwise op, or a fusion whose root is reached from that
 *     parameter through elementwise ops (and reshapes) only, with one
 *     output of the input's element width (>= 4 bytes): out[i] depends on
 *     in[i] alone and is written by the invocation that read in[i];
 *   - dynamic_update_slice (alone or as a fusion root) on its operand 0;
 *   - scatter: the copy of the input into the result is dropped.
 * Parameter and constant buffers are never written.
 *
 * Regions may be shared by several ops (a callee inlined twice), so the
 * value -> buffer map is per lowering of a computation, indexed by
 * instruction id, never stored on the IR.
 */
#include "api/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIVE_TO_END 0x3fffffff

typedef struct value_bufs {
  int count;
  int *ids;
} value_bufs_t;

typedef struct lowering {
  vkhlo_executable_t *exe;
  const hlo_module_t *module;
  const codegen_target_t *target;
  int position;
  /* constant data, laid out at the constant buffers' offsets */
  unsigned char *constant_data;
  uint64_t constant_size, constant_capacity;
  uint64_t alignment;
  /* kernel dedup: hash of GLSL per kernel */
  uint64_t *kernel_hashes;
  /* scratch marks indexed by instruction id (all false between uses) */
  bool *marks;
} lowering_t;

static uint64_t fnv1a(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

static int new_buffer(lowering_t *l, exe_buffer_kind_t kind, uint64_t size_bytes, const char *name) {
  vkhlo_executable_t *exe = l->exe;
  if (exe->buffer_count == exe->buffer_capacity) {
    int cap = exe->buffer_capacity ? exe->buffer_capacity * 2 : 64;
    exe_buffer_t *p = realloc(exe->buffers, sizeof *p * (size_t)cap);
    if (!p) return -1;
    exe->buffers = p;
    exe->buffer_capacity = cap;
  }
  char *copy = malloc(strlen(name ? name : "") + 1);
  if (!copy) return -1;
  strcpy(copy, name ? name : "");
  exe_buffer_t *b = &exe->buffers[exe->buffer_count];
  memset(b, 0, sizeof *b);
  b->kind = kind;
  b->size_bytes = size_bytes < 16 ? 16 : align_up(size_bytes, 16);
  /* first written by the next thunk (callers lower it to the exact one) */
  b->def_position = l->position + 1;
  b->last_use_position = l->position + 1;
  b->inplace_of = -1;
  b->allocation = -1;
  b->name = copy;
  return exe->buffer_count++;
}

static void use_buffer(lowering_t *l, int id) {
  exe_buffer_t *b = &l->exe->buffers[id];
  if (b->last_use_position < l->position) b->last_use_position = l->position;
}

static exe_thunk_t *add_thunk(lowering_t *l, exe_sequence_t *seq, exe_thunk_kind_t kind) {
  if (seq->count == seq->capacity) {
    int cap = seq->capacity ? seq->capacity * 2 : 16;
    exe_thunk_t *p = realloc(seq->thunks, sizeof *p * (size_t)cap);
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
  exe_thunk_t *t = add_thunk(l, seq, EXE_THUNK_COPY);
  if (!t) return VKHLO_NO_MEMORY();
  t->src = src;
  t->dst = dst;
  uint64_t a = l->exe->buffers[src].size_bytes, b = l->exe->buffers[dst].size_bytes;
  t->size_bytes = a < b ? a : b;
  use_buffer(l, src);
  use_buffer(l, dst);
  return NULL;
}

/* A fresh temp buffer for each array element of |shape| (one for arrays). */
static vkhlo_status_t new_value(lowering_t *l, const hlo_shape_t *shape, const char *name,
                                value_bufs_t *out) {
  int n = hlo_shape_is_tuple(shape) ? shape->tuple_count : 1;
  out->count = n;
  out->ids = calloc((size_t)(n ? n : 1), sizeof(int));
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

static vkhlo_status_t alias_value(value_bufs_t *out, int count, const int *ids) {
  out->count = count;
  out->ids = calloc((size_t)(count ? count : 1), sizeof(int));
  if (!out->ids) return VKHLO_NO_MEMORY();
  if (count) memcpy(out->ids, ids, sizeof(int) * (size_t)count);
  return NULL;
}

static vkhlo_status_t add_kernel(lowering_t *l, codegen_kernel_t *k, int *out_index) {
  vkhlo_executable_t *exe = l->exe;
  uint64_t h = fnv1a(k->glsl);
  for (int i = 0; i < exe->kernel_count; i++) {
    if (l->kernel_hashes[i] == h && strcmp(exe->kernels[i].glsl, k->glsl) == 0) {
      *out_index = i;
      codegen_kernel_free(k);
      return NULL;
    }
  }
  if (exe->kernel_count == exe->kernel_capacity) {
    int cap = exe->kernel_capacity ? exe->kernel_capacity * 2 : 32;
    exe_kernel_t *p = realloc(exe->kernels, sizeof *p * (size_t)cap);
    uint64_t *hp = realloc(l->kernel_hashes, sizeof *hp * (size_t)cap);
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
  memcpy(e->group_count, k->group_count, sizeof e->group_count);
  l->kernel_hashes[exe->kernel_count] = h;
  *out_index = exe->kernel_count++;
  k->name = k->glsl = NULL;
  return NULL;
}

static vkhlo_status_t add_constant(lowering_t *l, const hlo_instruction_t *instr, int *out_id) {
  const hlo_literal_t *lit = instr->literal;
  size_t size = hlo_shape_size_bytes(&instr->shape);
  int id = new_buffer(l, EXE_BUFFER_CONSTANT, size, instr->name);
  if (id < 0) return VKHLO_NO_MEMORY();
  exe_buffer_t *b = &l->exe->buffers[id];
  uint64_t offset = align_up(l->constant_size, l->alignment);
  uint64_t end = offset + b->size_bytes;
  if (end > l->constant_capacity) {
    uint64_t cap = l->constant_capacity ? l->constant_capacity : 65536;
    while (cap < end) cap *= 2;
    unsigned char *p = realloc(l->constant_data, cap);
    if (!p) return VKHLO_NO_MEMORY();
    memset(p + l->constant_capacity, 0, cap - l->constant_capacity);
    l->constant_data = p;
    l->constant_capacity = cap;
  }
  if (lit && lit->data) {
    size_t n = lit->size_bytes < size ? lit->size_bytes : size;
    memcpy(l->constant_data + offset, lit->data, n);
  }
  b->offset_bytes = offset;
  l->constant_size = end;
  *out_id = id;
  return NULL;
}

static void location_string(const hlo_location_t *loc, char *buf, size_t size) {
  snprintf(buf, size, "%s:%d:%d", loc->file ? loc->file : "<input>", loc->line, loc->col);
}

static vkhlo_status_t instr_error(const hlo_instruction_t *instr, vkhlo_status_code_t code,
                                  const char *what) {
  char loc[256];
  location_string(&instr->loc, loc, sizeof loc);
  return vkhlo_make_status(code, "%s: stablehlo.%s: %s", loc, hlo_opcode_name(instr->opcode), what);
}

static vkhlo_status_t lower_computation(lowering_t *l, const hlo_computation_t *c,
                                        const value_bufs_t *params, exe_sequence_t *seq,
                                        value_bufs_t *out_root, bool is_entry);

typedef struct env {
  value_bufs_t *vals; /* indexed by instruction id */
  int size;
} env_t;

static value_bufs_t *lookup(env_t *env, const hlo_instruction_t *instr) {
  return instr->id < env->size ? &env->vals[instr->id] : NULL;
}

static vkhlo_status_t single_buffer(env_t *env, const hlo_instruction_t *user,
                                    const hlo_instruction_t *operand, int *out) {
  value_bufs_t *v = lookup(env, operand);
  if (!v || !v->ids) return instr_error(user, VKHLO_STATUS_INTERNAL, "operand not lowered");
  if (v->count != 1)
    return instr_error(user, VKHLO_STATUS_UNIMPLEMENTED, "tuple-typed operands are not supported");
  *out = v->ids[0];
  return NULL;
}

/* Lowers a region with |params| bound, as a fresh sequence. */
static vkhlo_status_t lower_region(lowering_t *l, const hlo_computation_t *c, int param_count,
                                   const int *param_ids, exe_sequence_t **out_seq,
                                   value_bufs_t *out_root) {
  exe_sequence_t *seq = calloc(1, sizeof *seq);
  if (!seq) return VKHLO_NO_MEMORY();
  *out_seq = seq;
  value_bufs_t *params = calloc((size_t)(param_count ? param_count : 1), sizeof *params);
  if (!params) return VKHLO_NO_MEMORY();
  int *storage = calloc((size_t)(param_count ? param_count : 1), sizeof(int));
  if (!storage) {
    free(params);
    return VKHLO_NO_MEMORY();
  }
  for (int i = 0; i < param_count; i++) {
    storage[i] = param_ids[i];
    params[i].count = 1;
    params[i].ids = &storage[i];
  }
  vkhlo_status_t st = lower_computation(l, c, params, seq, out_root, false);
  free(storage);
  free(params);
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

static vkhlo_status_t lower_while(lowering_t *l, env_t *env, const hlo_instruction_t *instr,
                                  exe_sequence_t *seq, value_bufs_t *out) {
  if (instr->called_count != 2) return instr_error(instr, VKHLO_STATUS_INTERNAL, "needs cond and body");
  const hlo_computation_t *cond = instr->called_computations[0];
  const hlo_computation_t *body = instr->called_computations[1];
  int n = hlo_shape_is_tuple(&instr->shape) ? instr->shape.tuple_count : 1;
  int total = instr->operand_count; /* n loop values + captures */
  if (total < n || cond->parameter_count != total || body->parameter_count != total)
    return instr_error(instr, VKHLO_STATUS_INTERNAL, "region parameter counts do not match");
  int *ids = calloc((size_t)(total ? total : 1), sizeof(int));
  if (!ids) return VKHLO_NO_MEMORY();
  vkhlo_status_t st = NULL;
  int start = l->position + 1;
  /* Loop state: fresh buffers, initialised from the operands. */
  if ((st = new_value(l, &instr->shape, instr->name, out))) goto done;
  for (int i = 0; i < total && !st; i++) {
    int src;
    if ((st = single_buffer(env, instr, instr->operands[i], &src))) break;
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
  value_bufs_t cond_root = {0, NULL}, body_root = {0, NULL};
  if ((st = lower_region(l, cond, total, ids, &tmp.cond, &cond_root))) goto loop_done;
  if (cond_root.count != 1) {
    st = instr_error(instr, VKHLO_STATUS_INVALID_ARGUMENT, "cond must return one tensor<i1>");
    goto loop_done;
  }
  tmp.pred_buffer = cond_root.ids[0];
  /* The host reads the predicate after the cond's last thunk: a moment of
   * its own, so that no thunk of the cond may reuse its storage. */
  l->position++;
  use_buffer(l, tmp.pred_buffer);
  if ((st = lower_region(l, body, total, ids, &tmp.body, &body_root))) goto loop_done;
  if (body_root.count != n) {
    st = instr_error(instr, VKHLO_STATUS_INVALID_ARGUMENT, "body must return the loop values");
    goto loop_done;
  }
  /* Copy the body's results back into the loop state.  A result that is
   * another loop-state buffer goes through a temporary first. */
  int *staged = calloc((size_t)(n ? n : 1), sizeof(int));
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
  free(staged);
  if (st) goto loop_done;
  {
    exe_thunk_t *t = add_thunk(l, seq, EXE_THUNK_WHILE);
    if (!t) {
      st = VKHLO_NO_MEMORY();
      goto loop_done;
    }
    int pos = t->position;
    *t = tmp;
    t->position = pos;
    tmp.cond = tmp.body = NULL;
    extend_loop_live_ranges(l, start, l->position);
    for (int i = 0; i < n; i++) use_buffer(l, out->ids[i]);
  }
loop_done:
  if (tmp.cond) { exe_free_sequence(tmp.cond); free(tmp.cond); }
  if (tmp.body) { exe_free_sequence(tmp.body); free(tmp.body); }
  free(cond_root.ids);
  free(body_root.ids);
done:
  free(ids);
  return st;
}

static vkhlo_status_t lower_conditional(lowering_t *l, env_t *env, const hlo_instruction_t *instr,
                                        exe_sequence_t *seq, value_bufs_t *out) {
  int captures = instr->operand_count - 1;
  int branch_count = instr->called_count;
  if (branch_count < 1) return instr_error(instr, VKHLO_STATUS_INVALID_ARGUMENT, "needs branches");
  int *ids = calloc((size_t)(captures > 0 ? captures : 1), sizeof(int));
  if (!ids) return VKHLO_NO_MEMORY();
  vkhlo_status_t st = NULL;
  int selector;
  if ((st = single_buffer(env, instr, instr->operands[0], &selector))) goto done;
  for (int i = 0; i < captures && !st; i++)
    st = single_buffer(env, instr, instr->operands[1 + i], &ids[i]);
  if (st) goto done;
  if ((st = new_value(l, &instr->shape, instr->name, out))) goto done;
  exe_sequence_t **branches = calloc((size_t)branch_count, sizeof *branches);
  if (!branches) {
    st = VKHLO_NO_MEMORY();
    goto done;
  }
  for (int b = 0; b < branch_count && !st; b++) {
    const hlo_computation_t *c = instr->called_computations[b];
    if (c->parameter_count != captures) {
      st = instr_error(instr, VKHLO_STATUS_INTERNAL, "branch parameter count does not match");
      break;
    }
    value_bufs_t root = {0, NULL};
    st = lower_region(l, c, captures, ids, &branches[b], &root);
    if (!st && root.count != out->count)
      st = instr_error(instr, VKHLO_STATUS_INVALID_ARGUMENT, "branch result count does not match");
    for (int i = 0; !st && i < out->count; i++) st = add_copy(l, branches[b], root.ids[i], out->ids[i]);
    free(root.ids);
  }
  exe_thunk_t *t = st ? NULL : add_thunk(l, seq, EXE_THUNK_CONDITIONAL);
  if (!st && !t) st = VKHLO_NO_MEMORY();
  if (st) {
    for (int b = 0; b < branch_count; b++)
      if (branches[b]) {
        exe_free_sequence(branches[b]);
        free(branches[b]);
      }
    free(branches);
    goto done;
  }
  t->selector_buffer = selector;
  t->selector_is_pred = instr->opcode == HLO_OPCODE_IF;
  t->branch_count = branch_count;
  t->branches = branches;
  use_buffer(l, selector);
  for (int i = 0; i < out->count; i++) use_buffer(l, out->ids[i]);
done:
  free(ids);
  return st;
}

static vkhlo_status_t lower_check(lowering_t *l, env_t *env, const hlo_instruction_t *instr) {
  vkhlo_executable_t *exe = l->exe;
  if (instr->operand_count != 2) return instr_error(instr, VKHLO_STATUS_INVALID_ARGUMENT, "check needs two operands");
  if (exe->check_count == exe->check_capacity) {
    int cap = exe->check_capacity ? exe->check_capacity * 2 : 8;
    exe_check_t *p = realloc(exe->checks, sizeof *p * (size_t)cap);
    if (!p) return VKHLO_NO_MEMORY();
    exe->checks = p;
    exe->check_capacity = cap;
  }
  exe_check_t *c = &exe->checks[exe->check_count];
  memset(c, 0, sizeof *c);
  VKHLO_RETURN_IF_ERROR(single_buffer(env, instr, instr->operands[0], &c->actual));
  VKHLO_RETURN_IF_ERROR(single_buffer(env, instr, instr->operands[1], &c->expected));
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

/* ------------------------------------------------ aliases and in-place */

/* True when elements of types |a| and |b| are the same bytes in storage:
 * the same whole-byte width, no sub-byte or predicate packing, no complex. */
static bool same_bytes_type(hlo_element_type_t a, hlo_element_type_t b) {
  if (a == HLO_TUPLE || b == HLO_TUPLE || a == HLO_TOKEN || b == HLO_TOKEN) return false;
  if (hlo_element_type_is_complex(a) || hlo_element_type_is_complex(b)) return false;
  size_t sa = hlo_element_type_size_bytes(a), sb = hlo_element_type_size_bytes(b);
  return sa == sb && hlo_element_type_bit_width(a) == (int)(8 * sa) &&
         hlo_element_type_bit_width(b) == (int)(8 * sb);
}

/* An instruction whose result has the operand's bytes: reshape (row-major
 * order is kept) or bitcast_convert between same-width types. */
static bool is_byte_preserving(const hlo_instruction_t *instr) {
  if (instr->operand_count != 1 || hlo_shape_is_tuple(&instr->shape) ||
      hlo_shape_is_tuple(&instr->operands[0]->shape))
    return false;
  if (hlo_shape_element_count(&instr->shape) != hlo_shape_element_count(&instr->operands[0]->shape))
    return false;
  if (instr->opcode == HLO_OPCODE_RESHAPE)
    return instr->shape.element_type == instr->operands[0]->shape.element_type;
  if (instr->opcode == HLO_OPCODE_BITCAST_CONVERT)
    return same_bytes_type(instr->shape.element_type, instr->operands[0]->shape.element_type);
  return false;
}

/* The operand whose buffer |instr|'s result is, or -1: a byte-preserving
 * instruction, or a fusion whose root is a chain of them over a parameter. */
static int alias_operand(const hlo_instruction_t *instr) {
  if (is_byte_preserving(instr)) return 0;
  if (instr->opcode != HLO_OPCODE_FUSION || instr->called_count < 1 || hlo_shape_is_tuple(&instr->shape))
    return -1;
  const hlo_instruction_t *r = instr->called_computations[0]->root;
  while (r && is_byte_preserving(r)) r = r->operands[0];
  if (!r || r->opcode != HLO_OPCODE_PARAMETER || r == instr->called_computations[0]->root) return -1;
  if (r->parameter_number < 0 || r->parameter_number >= instr->operand_count) return -1;
  if (hlo_shape_size_bytes(&instr->operands[r->parameter_number]->shape) != hlo_shape_size_bytes(&instr->shape))
    return -1;
  return r->parameter_number;
}

/* An op reading its operands at the output's index only. */
static bool is_identity_indexed(const hlo_instruction_t *instr, int64_t count) {
  if (hlo_shape_is_tuple(&instr->shape) || hlo_shape_element_count(&instr->shape) != count) return false;
  return hlo_opcode_is_elementwise(instr->opcode) || is_byte_preserving(instr);
}

static bool inplace_width_ok(const hlo_shape_t *in, const hlo_shape_t *out) {
  if (hlo_shape_is_tuple(in) || hlo_shape_is_tuple(out)) return false;
  size_t s = hlo_element_type_size_bytes(out->element_type);
  return s >= 4 && s == hlo_element_type_size_bytes(in->element_type) &&
         hlo_shape_element_count(in) == hlo_shape_element_count(out);
}

/* May the single output of |instr| be written into operand |k|'s storage?
 * (Whether that operand dies here is decided later, by decide_inplace.) */
static bool inplace_candidate(lowering_t *l, const hlo_instruction_t *instr, int k) {
  const hlo_instruction_t *operand = instr->operands[k];
  if (!inplace_width_ok(&operand->shape, &instr->shape)) return false;
  if (instr->opcode == HLO_OPCODE_DYNAMIC_UPDATE_SLICE) return k == 0;
  if (instr->opcode != HLO_OPCODE_FUSION)
    return hlo_opcode_is_elementwise(instr->opcode);
  if (instr->called_count < 1) return false;
  const hlo_computation_t *f = instr->called_computations[0];
  const hlo_instruction_t *param = NULL;
  for (int i = 0; i < f->parameter_count; i++)
    if (f->parameters[i]->parameter_number == k) param = f->parameters[i];
  if (!param || !f->root || param->id >= l->module->next_instruction_id) return false;
  /* dynamic_update_slice root updating the parameter, its only use */
  if (f->root->opcode == HLO_OPCODE_DYNAMIC_UPDATE_SLICE && f->root->operands[0] == param) {
    int uses = 0;
    for (int i = 0; i < f->instruction_count; i++) {
      const hlo_instruction_t *x = f->instructions[i];
      for (int j = 0; j < x->operand_count; j++) uses += x->operands[j] == param;
    }
    return uses == 1;
  }
  /* every instruction that depends on the parameter is identity-indexed */
  int64_t count = hlo_shape_element_count(&operand->shape);
  bool ok = true;
  bool *mark = l->marks;
  mark[param->id] = true;
  for (int i = 0; i < f->instruction_count; i++) {
    const hlo_instruction_t *x = f->instructions[i];
    if (x == param || x->id >= l->module->next_instruction_id) continue;
    bool depends = false;
    for (int j = 0; j < x->operand_count && !depends; j++)
      depends = x->operands[j]->id < l->module->next_instruction_id && mark[x->operands[j]->id];
    if (!depends) continue;
    mark[x->id] = true;
    if (!is_identity_indexed(x, count)) ok = false;
  }
  for (int i = 0; i < f->instruction_count; i++)
    if (f->instructions[i]->id < l->module->next_instruction_id) mark[f->instructions[i]->id] = false;
  mark[param->id] = false;
  return ok && f->root->id < l->module->next_instruction_id;
}

static vkhlo_status_t lower_kernel(lowering_t *l, env_t *env, const hlo_instruction_t *instr,
                                   exe_sequence_t *seq, value_bufs_t *out) {
  codegen_kernel_t k;
  memset(&k, 0, sizeof k);
  VKHLO_RETURN_IF_ERROR(codegen_emit_instruction(l->target, instr, &k));
  int *bindings = calloc((size_t)(k.input_count + k.output_count + 1), sizeof(int));
  bool *inplace_ok = calloc((size_t)(k.input_count + 1), sizeof(bool));
  if (!bindings || !inplace_ok) {
    free(bindings);
    free(inplace_ok);
    codegen_kernel_free(&k);
    return VKHLO_NO_MEMORY();
  }
  vkhlo_status_t st = NULL;
  bool any_inplace = false;
  for (int i = 0; i < k.input_count && !st; i++) {
    if (i >= instr->operand_count) {
      st = instr_error(instr, VKHLO_STATUS_INTERNAL, "kernel has more inputs than operands");
      break;
    }
    st = single_buffer(env, instr, instr->operands[i], &bindings[i]);
    if (!st && k.output_count == 1 && k.input_count == instr->operand_count &&
        inplace_candidate(l, instr, i))
      any_inplace = inplace_ok[i] = true;
  }
  if (!st) st = new_value(l, &instr->shape, instr->name, out);
  if (!st && out->count != k.output_count)
    st = instr_error(instr, VKHLO_STATUS_INTERNAL, "kernel output count does not match the result");
  bool is_scatter = instr->opcode == HLO_OPCODE_SCATTER;
  if (!st && is_scatter) {
    /* The scatter kernel updates its results in place: start from the
     * inputs (decide_inplace drops a copy whose input dies here). */
    if (k.input_count < out->count)
      st = instr_error(instr, VKHLO_STATUS_INTERNAL, "scatter kernel has fewer inputs than results");
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
    free(bindings);
    free(inplace_ok);
    return st;
  }
  for (int i = 0; i < out->count; i++) bindings[input_count + i] = out->ids[i];
  exe_thunk_t *t = add_thunk(l, seq, EXE_THUNK_DISPATCH);
  if (!t) {
    free(bindings);
    free(inplace_ok);
    return VKHLO_NO_MEMORY();
  }
  t->kernel = kernel;
  t->bindings = bindings;
  t->binding_count = input_count + out->count;
  t->input_count = input_count;
  t->is_scatter = is_scatter;
  if (any_inplace) t->inplace_ok = inplace_ok;
  else free(inplace_ok);
  for (int i = 0; i < t->binding_count; i++) use_buffer(l, bindings[i]);
  for (int i = 0; i < out->count && !is_scatter; i++) {
    exe_buffer_t *b = &l->exe->buffers[out->ids[i]];
    if (b->def_position > t->position) b->def_position = t->position;
  }
  return NULL;
}

/* custom_call @TARGET with a kernel registered on the context
 * (vkhlo_context_register_custom_call): one dispatch of the user's SPIR-V,
 * bindings = operands then results, push constant = result 0's element
 * count.  Unregistered targets are UNIMPLEMENTED. */
static vkhlo_status_t lower_custom_call(lowering_t *l, env_t *env, const hlo_instruction_t *instr,
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
    return instr_error(instr, VKHLO_STATUS_UNIMPLEMENTED, what);
  }
  VKHLO_RETURN_IF_ERROR(new_value(l, &instr->shape, instr->name, out));
  int n_in = instr->operand_count, n = n_in + out->count;
  const hlo_shape_t *r0 = out->count ? (hlo_shape_is_tuple(&instr->shape) ? &instr->shape.tuple_shapes[0]
                                                                          : &instr->shape)
                                     : NULL;
  int64_t count = r0 ? hlo_shape_element_count(r0) : 0;
  uint64_t groups = count ? ((uint64_t)count + ck->local_size_x - 1) / ck->local_size_x : 1;
  if (groups > l->target->max_workgroup_count[0] || count > 0xFFFFFFFFll)
    return instr_error(instr, VKHLO_STATUS_UNIMPLEMENTED, "custom_call result too large for one dispatch");
  vkhlo_executable_t *exe = l->exe;
  if (exe->kernel_count == exe->kernel_capacity) {
    int cap = exe->kernel_capacity ? exe->kernel_capacity * 2 : 32;
    exe_kernel_t *p = realloc(exe->kernels, sizeof *p * (size_t)cap);
    uint64_t *hp = realloc(l->kernel_hashes, sizeof *hp * (size_t)cap);
    if (p) exe->kernels = p;
    if (hp) l->kernel_hashes = hp;
    if (!p || !hp) return VKHLO_NO_MEMORY();
    exe->kernel_capacity = cap;
  }
  exe_kernel_t *k = &exe->kernels[exe->kernel_count];
  memset(k, 0, sizeof *k);
  size_t name_len = strlen(target);
  k->name = malloc(name_len + 1);
  k->spirv = malloc(ck->spirv_size_bytes);
  if (!k->name || !k->spirv) {
    free(k->name);
    free(k->spirv);
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
  int *bindings = calloc((size_t)n + 1, sizeof(int));
  if (!bindings) return VKHLO_NO_MEMORY();
  vkhlo_status_t st = NULL;
  for (int i = 0; i < n_in && !st; i++) st = single_buffer(env, instr, instr->operands[i], &bindings[i]);
  for (int i = 0; i < out->count; i++) bindings[n_in + i] = out->ids[i];
  exe_thunk_t *t = st ? NULL : add_thunk(l, seq, EXE_THUNK_DISPATCH);
  if (!t) {
    free(bindings);
    return st ? st : VKHLO_NO_MEMORY();
  }
  t->kernel = kernel;
  t->bindings = bindings;
  t->binding_count = n;
  t->input_count = n_in;
  for (int i = 0; i < n; i++) use_buffer(l, bindings[i]);
  return NULL;
}

/* infeed / outfeed / send / recv: a HOST thunk; its bindings are the data
 * operands (outfeed, send) or the data results (infeed, recv); tokens get
 * 16-byte placeholder buffers and are not passed to the callback. */
static vkhlo_status_t lower_host_call(lowering_t *l, env_t *env, const hlo_instruction_t *instr,
                                      exe_sequence_t *seq, value_bufs_t *out) {
  VKHLO_RETURN_IF_ERROR(new_value(l, &instr->shape, instr->name, out));
  bool reads = instr->opcode == HLO_OPCODE_OUTFEED || instr->opcode == HLO_OPCODE_SEND;
  int cap = instr->operand_count + out->count + 1, n = 0;
  int *bindings = calloc((size_t)cap, sizeof(int));
  vkhlo_tensor_type_t *types = calloc((size_t)cap, sizeof *types);
  if (!bindings || !types) {
    free(bindings);
    free(types);
    return VKHLO_NO_MEMORY();
  }
  vkhlo_status_t st = NULL;
  if (reads) {
    for (int i = 0; i < instr->operand_count && !st; i++)
      if (instr->operands[i]->shape.element_type != HLO_TOKEN) {
        exe_tensor_type_from_shape(&instr->operands[i]->shape, &types[n]);
        st = single_buffer(env, instr, instr->operands[i], &bindings[n++]);
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
    config = malloc(strlen(c) + 1);
    if (!config) st = VKHLO_NO_MEMORY();
    else strcpy(config, c);
  }
  exe_thunk_t *t = st ? NULL : add_thunk(l, seq, EXE_THUNK_HOST);
  if (!t) {
    free(bindings);
    free(types);
    free(config);
    return st ? st : VKHLO_NO_MEMORY();
  }
  t->host_types = types;
  t->bindings = bindings;
  t->binding_count = n;
  t->input_count = reads ? n : 0;
  t->host_op = hlo_opcode_name(instr->opcode);
  t->channel_id = instr->attrs.channel_id;
  t->host_config = config;
  for (int i = 0; i < n; i++) use_buffer(l, bindings[i]);
  for (int i = 0; i < out->count; i++) use_buffer(l, out->ids[i]);
  return NULL;
}

static vkhlo_status_t lower_instruction(lowering_t *l, env_t *env, const hlo_instruction_t *instr,
                                        const value_bufs_t *params, exe_sequence_t *seq,
                                        bool is_entry) {
  value_bufs_t *out = lookup(env, instr);
  if (!out) return instr_error(instr, VKHLO_STATUS_INTERNAL, "instruction id out of range");
  switch (instr->opcode) {
    case HLO_OPCODE_PARAMETER: {
      const value_bufs_t *p = &params[instr->parameter_number];
      return alias_value(out, p->count, p->ids);
    }
    case HLO_OPCODE_CONSTANT: {
      int id = -1;
      VKHLO_RETURN_IF_ERROR(add_constant(l, instr, &id));
      return alias_value(out, 1, &id);
    }
    case HLO_OPCODE_GET_TUPLE_ELEMENT: {
      value_bufs_t *t = lookup(env, instr->operands[0]);
      if (!t || instr->attrs.index < 0 || instr->attrs.index >= t->count)
        return instr_error(instr, VKHLO_STATUS_INVALID_ARGUMENT, "tuple index out of range");
      return alias_value(out, 1, &t->ids[instr->attrs.index]);
    }
    case HLO_OPCODE_TUPLE:
    case HLO_OPCODE_OPTIMIZATION_BARRIER: {
      int *ids = calloc((size_t)(instr->operand_count + 1), sizeof(int));
      if (!ids) return VKHLO_NO_MEMORY();
      vkhlo_status_t st = NULL;
      for (int i = 0; i < instr->operand_count && !st; i++)
        st = single_buffer(env, instr, instr->operands[i], &ids[i]);
      if (!st) st = alias_value(out, instr->operand_count, ids);
      free(ids);
      return st;
    }
    case HLO_OPCODE_AFTER_ALL:
    case HLO_OPCODE_CREATE_TOKEN: {
      int id = new_buffer(l, EXE_BUFFER_TEMP, 16, instr->name);
      if (id < 0) return VKHLO_NO_MEMORY();
      return alias_value(out, 1, &id);
    }
    case HLO_OPCODE_CHECK:
      if (!is_entry)
        return instr_error(instr, VKHLO_STATUS_UNIMPLEMENTED, "checks inside regions are not supported");
      VKHLO_RETURN_IF_ERROR(lower_check(l, env, instr));
      return alias_value(out, 0, NULL);
    case HLO_OPCODE_WHILE:
      return lower_while(l, env, instr, seq, out);
    case HLO_OPCODE_IF:
    case HLO_OPCODE_CASE:
      return lower_conditional(l, env, instr, seq, out);
    case HLO_OPCODE_CUSTOM_CALL:
      return lower_custom_call(l, env, instr, seq, out);
    case HLO_OPCODE_INFEED:
    case HLO_OPCODE_OUTFEED:
    case HLO_OPCODE_SEND:
    case HLO_OPCODE_RECV:
      return lower_host_call(l, env, instr, seq, out);
    default: {
      int a = alias_operand(instr);
      if (a >= 0) { /* the same bytes: no dispatch, the operand's buffer */
        int id = -1;
        VKHLO_RETURN_IF_ERROR(single_buffer(env, instr, instr->operands[a], &id));
        return alias_value(out, 1, &id);
      }
      return lower_kernel(l, env, instr, seq, out);
    }
  }
}

/* ------------------------------------------------------------ scheduling */

typedef struct sched_node {
  bool renames;      /* produces no new bytes: scheduled as soon as ready */
  bool effect;       /* keeps its order relative to other effects */
  bool pinned;       /* its bytes live to the end (returned or checked) */
  uint64_t alloc;    /* bytes of new buffers (0 when |renames|) */
  int *sources;      /* the allocating nodes whose bytes this value is */
  int source_count;
  int *consumed;     /* allocating nodes whose bytes this node reads */
  int consumed_count;
  int *dependents;   /* nodes with this one among their dependencies */
  int dependent_count, dependent_capacity;
  int deps_left;
  int remaining;     /* consumers of this node's bytes not yet scheduled */
} sched_node_t;

static bool push_int(int **array, int *count, int *capacity, int v) {
  if (*count == *capacity) {
    int cap = *capacity ? *capacity * 2 : 4;
    int *p = realloc(*array, sizeof *p * (size_t)cap);
    if (!p) return false;
    *array = p;
    *capacity = cap;
  }
  (*array)[(*count)++] = v;
  return true;
}

static bool add_unique(int **array, int *count, int *capacity, int v) {
  for (int i = 0; i < *count; i++)
    if ((*array)[i] == v) return true;
  return push_int(array, count, capacity, v);
}

static bool is_effect(hlo_opcode_t op) {
  switch (op) {
    case HLO_OPCODE_CHECK: case HLO_OPCODE_RNG: case HLO_OPCODE_CUSTOM_CALL:
    case HLO_OPCODE_INFEED: case HLO_OPCODE_OUTFEED: case HLO_OPCODE_SEND: case HLO_OPCODE_RECV:
      return true;
    default:
      return false;
  }
}

static bool renames_bytes(const hlo_instruction_t *x) {
  switch (x->opcode) {
    case HLO_OPCODE_PARAMETER: case HLO_OPCODE_CONSTANT: case HLO_OPCODE_GET_TUPLE_ELEMENT:
    case HLO_OPCODE_TUPLE: case HLO_OPCODE_OPTIMIZATION_BARRIER: case HLO_OPCODE_CHECK:
    case HLO_OPCODE_AFTER_ALL: case HLO_OPCODE_CREATE_TOKEN:
      return true;
    default:
      return alias_operand(x) >= 0;
  }
}

static uint64_t shape_bytes(const hlo_shape_t *shape) {
  if (!hlo_shape_is_tuple(shape)) return hlo_shape_size_bytes(shape);
  uint64_t n = 0;
  for (int i = 0; i < shape->tuple_count; i++) n += shape_bytes(&shape->tuple_shapes[i]);
  return n;
}

/* Peak bytes of |order| under the model of schedule_computation. */
static uint64_t simulate_peak(sched_node_t *nodes, int n, const int *order) {
  int *remaining = malloc(sizeof(int) * (size_t)(n + 1));
  if (!remaining) return UINT64_MAX;
  for (int i = 0; i < n; i++) remaining[i] = nodes[i].remaining;
  uint64_t live = 0, peak = 0;
  for (int k = 0; k < n; k++) {
    sched_node_t *u = &nodes[order[k]];
    live += u->alloc;
    if (live > peak) peak = live;
    for (int j = 0; j < u->consumed_count; j++) {
      int s = u->consumed[j];
      if (--remaining[s] == 0 && !nodes[s].pinned) live -= nodes[s].alloc;
    }
    if (u->alloc && remaining[order[k]] == 0 && !u->pinned) live -= u->alloc;
  }
  free(remaining);
  return peak;
}

/* The order in which to lower |c|'s instructions (see the essay): a list
 * schedule preferring the instruction that frees the most bytes, or the
 * original order when that peaks lower.  *out_order: heap, caller frees. */
static vkhlo_status_t schedule_computation(lowering_t *l, const hlo_computation_t *c,
                                           const hlo_instruction_t ***out_order) {
  int n = c->instruction_count;
  *out_order = NULL;
  const hlo_instruction_t **result = calloc((size_t)(n + 1), sizeof *result);
  sched_node_t *nodes = calloc((size_t)(n + 1), sizeof *nodes);
  int *index = malloc(sizeof(int) * (size_t)(l->module->next_instruction_id + 1));
  int *order = calloc((size_t)(n + 1), sizeof(int));
  bool *done = calloc((size_t)(n + 1), sizeof(bool));
  vkhlo_status_t st = NULL;
  if (!result || !nodes || !index || !order || !done) {
    st = VKHLO_NO_MEMORY();
    goto out;
  }
  for (int i = 0; i < l->module->next_instruction_id; i++) index[i] = -1;
  for (int i = 0; i < n; i++)
    if (c->instructions[i]->id < l->module->next_instruction_id) index[c->instructions[i]->id] = i;
  int last_effect = -1;
  for (int i = 0; i < n && !st; i++) {
    const hlo_instruction_t *x = c->instructions[i];
    sched_node_t *u = &nodes[i];
    u->renames = renames_bytes(x);
    u->effect = is_effect(x->opcode);
    u->alloc = u->renames ? 0 : shape_bytes(&x->shape);
    int cap = 0, ccap = 0;
    if (!u->renames && !push_int(&u->sources, &u->source_count, &cap, i)) st = VKHLO_NO_MEMORY();
    /* dependencies: operands and the previous effect */
    for (int j = 0; j <= x->operand_count && !st; j++) {
      int d;
      if (j < x->operand_count) {
        const hlo_instruction_t *o = x->operands[j];
        d = o->id < l->module->next_instruction_id ? index[o->id] : -1;
        if (d < 0 || d >= i) continue; /* not in this computation: no edge */
        sched_node_t *v = &nodes[d];
        for (int k = 0; k < v->source_count && !st; k++) {
          if (u->renames && !add_unique(&u->sources, &u->source_count, &cap, v->sources[k])) st = VKHLO_NO_MEMORY();
          if (!u->renames && !add_unique(&u->consumed, &u->consumed_count, &ccap, v->sources[k]))
            st = VKHLO_NO_MEMORY();
          if (x->opcode == HLO_OPCODE_CHECK) nodes[v->sources[k]].pinned = true;
        }
      } else {
        if (!u->effect || last_effect < 0) continue;
        d = last_effect;
      }
      sched_node_t *v = &nodes[d];
      bool seen = false;
      for (int k = 0; k < v->dependent_count; k++) seen |= v->dependents[k] == i;
      if (!seen) {
        if (!push_int(&v->dependents, &v->dependent_count, &v->dependent_capacity, i)) st = VKHLO_NO_MEMORY();
        else u->deps_left++;
      }
    }
    if (u->effect) last_effect = i;
    for (int k = 0; k < u->consumed_count; k++) nodes[u->consumed[k]].remaining++;
  }
  if (st) goto out;
  if (c->root && c->root->id < l->module->next_instruction_id && index[c->root->id] >= 0) {
    sched_node_t *r = &nodes[index[c->root->id]];
    for (int k = 0; k < r->source_count; k++) nodes[r->sources[k]].pinned = true;
  }
  /* the list schedule */
  int *remaining = malloc(sizeof(int) * (size_t)(n + 1));
  if (!remaining) {
    st = VKHLO_NO_MEMORY();
    goto out;
  }
  for (int i = 0; i < n; i++) remaining[i] = nodes[i].remaining;
  for (int k = 0; k < n; k++) {
    int pick = -1;
    int64_t best = 0;
    for (int i = 0; i < n; i++) {
      if (done[i] || nodes[i].deps_left) continue;
      if (nodes[i].renames) {
        pick = i;
        break;
      }
      int64_t score = -(int64_t)nodes[i].alloc;
      for (int j = 0; j < nodes[i].consumed_count; j++) {
        int s = nodes[i].consumed[j];
        if (remaining[s] == 1 && !nodes[s].pinned) score += (int64_t)nodes[s].alloc;
      }
      if (remaining[i] == 0 && !nodes[i].pinned) score += (int64_t)nodes[i].alloc;
      if (pick < 0 || score > best) {
        pick = i;
        best = score;
      }
    }
    if (pick < 0) { /* a cycle cannot happen in verified IR; keep the original order */
      for (int i = 0; i < n; i++) order[i] = i;
      break;
    }
    done[pick] = true;
    order[k] = pick;
    for (int j = 0; j < nodes[pick].consumed_count; j++) remaining[nodes[pick].consumed[j]]--;
    for (int j = 0; j < nodes[pick].dependent_count; j++) nodes[nodes[pick].dependents[j]].deps_left--;
  }
  free(remaining);
  {
    int *identity = calloc((size_t)(n + 1), sizeof(int));
    if (!identity) {
      st = VKHLO_NO_MEMORY();
      goto out;
    }
    for (int i = 0; i < n; i++) identity[i] = i;
    uint64_t listed = simulate_peak(nodes, n, order), kept = simulate_peak(nodes, n, identity);
    const int *chosen = listed < kept ? order : identity;
    for (int i = 0; i < n; i++) result[i] = c->instructions[chosen[i]];
    free(identity);
  }
  *out_order = result;
  result = NULL;
out:
  for (int i = 0; nodes && i < n; i++) {
    free(nodes[i].sources);
    free(nodes[i].consumed);
    free(nodes[i].dependents);
  }
  free(nodes);
  free(index);
  free(order);
  free(done);
  free(result);
  return st;
}

static vkhlo_status_t lower_computation(lowering_t *l, const hlo_computation_t *c,
                                        const value_bufs_t *params, exe_sequence_t *seq,
                                        value_bufs_t *out_root, bool is_entry) {
  const hlo_instruction_t **order = NULL;
  VKHLO_RETURN_IF_ERROR(schedule_computation(l, c, &order));
  env_t env;
  env.size = l->module->next_instruction_id;
  env.vals = calloc((size_t)(env.size ? env.size : 1), sizeof *env.vals);
  if (!env.vals) {
    free(order);
    return VKHLO_NO_MEMORY();
  }
  vkhlo_status_t st = NULL;
  for (int i = 0; i < c->instruction_count && !st; i++)
    st = lower_instruction(l, &env, order[i], params, seq, is_entry);
  if (!st) {
    value_bufs_t *root = c->root ? lookup(&env, c->root) : NULL;
    if (!root) st = VKHLO_INTERNAL("computation %s has no root", c->name);
    else st = alias_value(out_root, root->count, root->ids);
  }
  for (int i = 0; i < env.size; i++) free(env.vals[i].ids);
  free(env.vals);
  free(order);
  return st;
}

/* ----------------------------------------------------------- in-place */

/* Decides in-place reuse for the dispatches of |seq| (see the essay); live
 * ranges are final.  Drops the copies of scatters whose input dies. */
static void decide_inplace(vkhlo_executable_t *exe, exe_sequence_t *seq) {
  for (int i = 0; i < seq->count; i++) {
    exe_thunk_t *t = &seq->thunks[i];
    if (t->cond) decide_inplace(exe, t->cond);
    if (t->body) decide_inplace(exe, t->body);
    for (int b = 0; b < t->branch_count; b++) decide_inplace(exe, t->branches[b]);
    if (t->kind != EXE_THUNK_DISPATCH) continue;
    int outputs = t->binding_count - t->input_count;
    if (t->is_scatter) {
      /* copies bindings[j] -> bindings[input_count + j] just before */
      if (i < outputs) continue;
      for (int j = 0; j < outputs; j++) {
        exe_thunk_t *copy = &seq->thunks[i - outputs + j];
        int a = t->bindings[j], b = t->bindings[t->input_count + j];
        exe_buffer_t *ab = &exe->buffers[a], *bb = &exe->buffers[b];
        bool only_here = true;
        for (int k = 0; k < t->input_count; k++) only_here &= k == j || t->bindings[k] != a;
        for (int k = 0; k < outputs; k++) only_here &= k == j || t->bindings[t->input_count + k] != b;
        if (copy->kind != EXE_THUNK_COPY || copy->src != a || copy->dst != b || !only_here ||
            ab->kind != EXE_BUFFER_TEMP || bb->kind != EXE_BUFFER_TEMP || bb->inplace_of >= 0 ||
            ab->last_use_position != t->position || ab->size_bytes != bb->size_bytes ||
            bb->def_position != copy->position)
          continue;
        bb->inplace_of = a;
        bb->def_position = t->position;
        copy->kind = EXE_THUNK_COPY;
        copy->size_bytes = 0; /* dropped below */
        copy->src = copy->dst = -1;
      }
      continue;
    }
    if (!t->inplace_ok || outputs != 1) continue;
    int b = t->bindings[t->input_count];
    exe_buffer_t *bb = &exe->buffers[b];
    if (bb->kind != EXE_BUFFER_TEMP || bb->def_position != t->position || bb->inplace_of >= 0) continue;
    for (int k = 0; k < t->input_count; k++) {
      if (!t->inplace_ok[k]) continue;
      int a = t->bindings[k];
      exe_buffer_t *ab = &exe->buffers[a];
      if (ab->kind != EXE_BUFFER_TEMP || a == b || ab->last_use_position != t->position ||
          ab->size_bytes != bb->size_bytes)
        continue;
      bool all_ok = true;
      for (int m = 0; m < t->input_count; m++)
        if (t->bindings[m] == a && !t->inplace_ok[m]) all_ok = false;
      if (!all_ok) continue;
      bb->inplace_of = a;
      break;
    }
  }
  /* compact away dropped copies */
  int k = 0;
  for (int i = 0; i < seq->count; i++) {
    exe_thunk_t *t = &seq->thunks[i];
    if (t->kind == EXE_THUNK_COPY && t->src < 0) continue;
    seq->thunks[k++] = *t;
  }
  seq->count = k;
}

void exe_tensor_type_from_shape(const hlo_shape_t *shape, vkhlo_tensor_type_t *out) {
  memset(out, 0, sizeof *out);
  out->element_type = (vkhlo_element_type_t)shape->element_type;
  out->rank = shape->rank;
  for (int i = 0; i < shape->rank; i++) out->dimensions[i] = shape->dimensions[i];
}

static bool has_control_flow(const exe_sequence_t *seq) {
  for (int i = 0; i < seq->count; i++)
    if (seq->thunks[i].kind == EXE_THUNK_WHILE || seq->thunks[i].kind == EXE_THUNK_CONDITIONAL ||
        seq->thunks[i].kind == EXE_THUNK_HOST)
      return true;
  return false;
}

vkhlo_status_t exe_lower_module(vkhlo_executable_t *exe, const hlo_module_t *module,
                                const codegen_target_t *target, uint64_t alignment,
                                void **out_constant_data) {
  *out_constant_data = NULL;
  const hlo_computation_t *entry = module->entry_computation;
  if (!entry) return VKHLO_INVALID("module has no entry computation");
  lowering_t l;
  memset(&l, 0, sizeof l);
  l.exe = exe;
  l.module = module;
  l.target = target;
  l.alignment = alignment ? alignment : 16;
  l.marks = calloc((size_t)module->next_instruction_id + 1, sizeof(bool));
  if (!l.marks) return VKHLO_NO_MEMORY();

  exe->parameter_count = entry->parameter_count;
  exe->parameter_types = calloc((size_t)(entry->parameter_count + 1), sizeof(vkhlo_tensor_type_t));
  value_bufs_t *params = calloc((size_t)(entry->parameter_count + 1), sizeof *params);
  int *param_ids = calloc((size_t)(entry->parameter_count + 1), sizeof(int));
  vkhlo_status_t st = NULL;
  if (!exe->parameter_types || !params || !param_ids) st = VKHLO_NO_MEMORY();
  for (int i = 0; i < entry->parameter_count && !st; i++) {
    const hlo_instruction_t *p = entry->parameters[i];
    if (hlo_shape_is_tuple(&p->shape)) {
      st = instr_error(p, VKHLO_STATUS_UNIMPLEMENTED, "tuple parameters are not supported");
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
    exe->result_buffers = calloc((size_t)(root.count + 1), sizeof(int));
    exe->result_types = calloc((size_t)(root.count + 1), sizeof(vkhlo_tensor_type_t));
    if (!exe->result_buffers || !exe->result_types) st = VKHLO_NO_MEMORY();
    for (int i = 0; i < root.count && !st; i++) {
      exe->result_buffers[i] = root.ids[i];
      exe->buffers[root.ids[i]].last_use_position = LIVE_TO_END;
      exe_tensor_type_from_shape(hlo_shape_is_tuple(rs) ? &rs->tuple_shapes[i] : rs,
                                 &exe->result_types[i]);
    }
  }
  free(root.ids);
  free(params);
  free(param_ids);
  free(l.kernel_hashes);
  free(l.marks);
  /* The end: results are copied out and checks read at position + 1. */
  for (int i = 0; i < exe->buffer_count; i++)
    if (exe->buffers[i].last_use_position > l.position + 1) exe->buffers[i].last_use_position = l.position + 1;
  exe->position_count = l.position + 2;
  exe->constant_size_bytes = l.constant_size;
  if (!st) {
    decide_inplace(exe, &exe->main);
    exe->straight_line = !has_control_flow(&exe->main);
  }
  if (st) {
    free(l.constant_data);
    return st;
  }
  *out_constant_data = l.constant_data;
  return NULL;
}
