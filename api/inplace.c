/*
 * Aliases and in-place reuse: which results are the same bytes as an
 * operand (no dispatch at all), and which dispatches may write their
 * output over an input that dies there.
 *
 * Aliases (exe_alias_operand, asked by the scheduler and by lowering).
 * Every buffer is dense row-major, so a reshape, a bitcast_convert between
 * types of the same byte width, and a fusion whose root is a chain of
 * those over a parameter, are the operand's bytes: lowering gives the
 * result the operand's logical buffer and emits nothing.
 *
 * In-place reuse, in two steps.  While lowering a dispatch (the IR is
 * still there), exe_inplace_candidate says per input whether the output
 * may be written into that input's storage:
 *   - an elementwise op, or a fusion whose root is reached from that
 *     parameter through elementwise ops (and reshapes) only, with one
 *     output of the input's element width (>= 4 bytes): out[i] depends on
 *     in[i] alone and is written by the invocation that read in[i];
 *   - dynamic_update_slice (alone or as a fusion root) on its operand 0;
 *   - scatter: its results start as copies of its inputs.
 * Once every live range is final (after the whole module is lowered),
 * exe_decide_inplace takes the candidates whose input dies at that
 * dispatch, and drops the copy of a scatter's input that dies there.
 * Parameter and constant buffers are never written.
 *
 * Loop state (exe_alias_loop_state, first).  Lowering gives a while loop
 * one buffer per loop value, its state, which the cond and the body read;
 * the body computes the next values into buffers of their own and copies
 * them into the state at its end (api/lower.c).  XLA writes the body's
 * results into the state instead, and so does this, per loop value, where
 * that is safe: the value V copied into state S is written by one
 * dispatch D of the body (not nested in a conditional or inner loop),
 * every other thunk of the body that touches S comes before D, and D
 * itself reads S only through inputs it may write in place (out[i] from
 * in[i] alone, or a dynamic_update_slice's operand; a scatter, whose
 * result starts as a copy of S, updates S itself).  Then D writes S, the
 * thunks after it read S where they read V, and the copy goes.  A scan's
 * carry and its dynamic_update_slice'd outputs then cost no copy per step.
 * Where D must read S whole while it writes V (an RNN's h = tanh(W h + x),
 * a layer's h = f(h W)) but nothing after the copy touches S or V, the two
 * trade storage instead: the copy goes, V lives across the loop like S,
 * and the executor swaps which storage each names after every iteration
 * (the while thunk's rotate pairs), copying the state into S once after
 * the loop when it ended in V's.
 */
#include "api/internal.h"

#include <stdlib.h>
#include <string.h>

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
int exe_alias_operand(const hlo_instruction_t *instr) {
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

bool exe_view_offset(const hlo_instruction_t *instr, uint64_t *offset_bytes) {
  if (instr->opcode != HLO_OPCODE_SLICE || instr->operand_count != 1 || hlo_shape_is_tuple(&instr->shape))
    return false;
  const hlo_shape_t *s = &instr->operands[0]->shape;
  const hlo_attrs_t *a = &instr->attrs;
  size_t es = hlo_element_type_size_bytes(s->element_type);
  if (hlo_shape_is_tuple(s) || s->rank < 1 || a->start_indices.count != s->rank || es == 0 ||
      (int)(8 * es) != hlo_element_type_bit_width(s->element_type))
    return false;
  /* contiguous: full dimensions after some k, extent 1 before it */
  int k = 0;
  for (int d = s->rank - 1; d >= 0; d--) {
    int64_t step = a->strides.count ? a->strides.data[d] : 1;
    if (step != 1 && instr->shape.dimensions[d] > 1) return false;
    if (instr->shape.dimensions[d] != s->dimensions[d]) {
      k = d;
      break;
    }
  }
  for (int d = 0; d < k; d++)
    if (instr->shape.dimensions[d] != 1) return false;
  uint64_t linear = 0;
  for (int d = 0; d < s->rank; d++) linear = linear * (uint64_t)s->dimensions[d] + (uint64_t)a->start_indices.data[d];
  *offset_bytes = linear * es;
  return true;
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
bool exe_inplace_candidate(const hlo_module_t *module, bool *marks, const hlo_instruction_t *instr, int k) {
  const hlo_instruction_t *operand = instr->operands[k];
  if (!inplace_width_ok(&operand->shape, &instr->shape)) return false;
  /* dynamic_update_slice (alone, or a fusion's root updating a parameter
   * read by nothing else) on the operand it updates */
  int dus = codegen_dus_in_place_operand(instr);
  if (dus >= 0 || instr->opcode == HLO_OPCODE_DYNAMIC_UPDATE_SLICE) return k == dus;
  if (instr->opcode != HLO_OPCODE_FUSION)
    return hlo_opcode_is_elementwise(instr->opcode);
  if (instr->called_count < 1) return false;
  const hlo_computation_t *f = instr->called_computations[0];
  const hlo_instruction_t *param = NULL;
  for (int i = 0; i < f->parameter_count; i++)
    if (f->parameters[i]->parameter_number == k) param = f->parameters[i];
  if (!param || !f->root || param->id >= module->next_instruction_id) return false;
  /* every instruction that depends on the parameter is identity-indexed */
  int64_t count = hlo_shape_element_count(&operand->shape);
  bool ok = true;
  bool *mark = marks;
  mark[param->id] = true;
  for (int i = 0; i < f->instruction_count; i++) {
    const hlo_instruction_t *x = f->instructions[i];
    if (x == param || x->id >= module->next_instruction_id) continue;
    bool depends = false;
    for (int j = 0; j < x->operand_count && !depends; j++)
      depends = x->operands[j]->id < module->next_instruction_id && mark[x->operands[j]->id];
    if (!depends) continue;
    mark[x->id] = true;
    if (!is_identity_indexed(x, count)) ok = false;
  }
  for (int i = 0; i < f->instruction_count; i++)
    if (f->instructions[i]->id < module->next_instruction_id) mark[f->instructions[i]->id] = false;
  mark[param->id] = false;
  return ok && f->root->id < module->next_instruction_id;
}

/* Removes the copies of |seq| marked dropped (src -1). */
static void drop_marked_copies(exe_sequence_t *seq) {
  int k = 0;
  for (int i = 0; i < seq->count; i++) {
    exe_thunk_t *t = &seq->thunks[i];
    if (t->kind == EXE_THUNK_COPY && t->src < 0) continue;
    seq->thunks[k++] = *t;
  }
  seq->count = k;
}

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
  drop_marked_copies(seq);
}

void exe_decide_inplace(vkhlo_executable_t *exe) { decide_inplace(exe, &exe->main); }

/* --------------------------------------------------------- loop state */

static bool binds(const int *ids, int count, int id) {
  for (int i = 0; i < count; i++)
    if (ids[i] == id) return true;
  return false;
}

static bool sequence_touches(const exe_sequence_t *seq, int id);

/* Whether thunk |t|, or a thunk nested in it, reads or writes buffer |id|. */
static bool thunk_touches(const exe_thunk_t *t, int id) {
  switch (t->kind) {
    case EXE_THUNK_DISPATCH:
    case EXE_THUNK_HOST: return binds(t->bindings, t->binding_count, id);
    case EXE_THUNK_COPY: return t->src == id || t->dst == id;
    case EXE_THUNK_WHILE: return t->pred_buffer == id || sequence_touches(t->cond, id) || sequence_touches(t->body, id);
    case EXE_THUNK_CONDITIONAL: {
      if (t->selector_buffer == id) return true;
      for (int b = 0; b < t->branch_count; b++)
        if (sequence_touches(t->branches[b], id)) return true;
      return false;
    }
  }
  return false;
}

static bool sequence_touches(const exe_sequence_t *seq, int id) {
  for (int i = 0; seq && i < seq->count; i++)
    if (thunk_touches(&seq->thunks[i], id)) return true;
  return false;
}

/* Buffer |from| becomes |to| in every thunk of |seq|. */
static void substitute(exe_sequence_t *seq, int from, int to) {
  for (int i = 0; seq && i < seq->count; i++) {
    exe_thunk_t *t = &seq->thunks[i];
    for (int b = 0; b < t->binding_count; b++)
      if (t->bindings[b] == from) t->bindings[b] = to;
    if (t->kind == EXE_THUNK_COPY) {
      if (t->src == from) t->src = to;
      if (t->dst == from) t->dst = to;
    }
    if (t->kind == EXE_THUNK_WHILE && t->pred_buffer == from) t->pred_buffer = to;
    if (t->kind == EXE_THUNK_CONDITIONAL && t->selector_buffer == from) t->selector_buffer = to;
    substitute(t->cond, from, to);
    substitute(t->body, from, to);
    for (int b = 0; b < t->branch_count; b++) substitute(t->branches[b], from, to);
  }
}

/* Copy |c| of |body| writes V into state S (defined before the loop,
 * which starts at position |lo|), V written by one dispatch of the body at
 * its top level: *out_writer (and for a scatter *out_start, the copy S -> V
 * it starts from; -1: none). */
static bool state_copy(const vkhlo_executable_t *exe, const exe_sequence_t *body, int c, int lo, int *out_writer,
                       int *out_start) {
  const exe_thunk_t *copy = &body->thunks[c];
  int S = copy->dst, V = copy->src;
  const exe_buffer_t *sb = &exe->buffers[S], *vb = &exe->buffers[V];
  if (S == V || sb->kind != EXE_BUFFER_TEMP || vb->kind != EXE_BUFFER_TEMP || sb->def_position >= lo ||
      vb->def_position < lo || vb->size_bytes != sb->size_bytes || vb->inplace_of >= 0 || sb->inplace_of >= 0)
    return false;
  int d = -1, start = -1;
  for (int i = 0; i < body->count; i++) { /* V's one writer, a dispatch at this level */
    const exe_thunk_t *x = &body->thunks[i];
    if (x->kind == EXE_THUNK_DISPATCH) {
      if (!binds(x->bindings + x->input_count, x->binding_count - x->input_count, V)) continue;
      if (d >= 0) return false;
      d = i;
    } else if (x->kind == EXE_THUNK_COPY && x->dst == V) {
      if (start >= 0 || x->src != S) return false;
      start = i;
    } else if (x->kind != EXE_THUNK_COPY && thunk_touches(x, V) && d < 0) {
      return false; /* V written inside a region */
    }
  }
  if (d < 0 || d > c) return false;
  const exe_thunk_t *D = &body->thunks[d];
  if (start >= 0 && (!D->is_scatter || start > d)) return false;
  if (D->is_scatter && start < 0) return false;
  *out_writer = d;
  *out_start = start;
  return true;
}

/* May V's dispatch write state S itself (state_copy's copy |c|; see the
 * essay)? */
static bool state_can_take(const vkhlo_executable_t *exe, const exe_sequence_t *body, int c, int lo,
                           int *out_writer, int *out_start) {
  int d, start;
  if (!state_copy(exe, body, c, lo, &d, &start)) return false;
  int S = body->thunks[c].dst;
  for (int i = 0; i < body->count; i++) {
    const exe_thunk_t *x = &body->thunks[i];
    if (i == c || i == start) continue;
    if (i == d) {
      for (int m = 0; m < x->binding_count; m++) {
        if (x->bindings[m] != S) continue;
        bool in_place_input = m < x->input_count && (x->is_scatter || (x->inplace_ok && x->inplace_ok[m]));
        if (!in_place_input) return false;
      }
      continue;
    }
    if (i > d && thunk_touches(x, S)) return false;
  }
  *out_writer = d;
  *out_start = start;
  return true;
}

/* May S and V of state_copy's copy |c| trade storage (see the essay):
 * nothing after the copy touches either, and V is no scatter's result
 * (which starts as a copy of S: that copy would read the wrong storage). */
static bool state_can_rotate(const vkhlo_executable_t *exe, const exe_sequence_t *body, int c, int lo) {
  int d, start;
  if (!state_copy(exe, body, c, lo, &d, &start) || start >= 0) return false;
  int S = body->thunks[c].dst, V = body->thunks[c].src;
  for (int i = c + 1; i < body->count; i++)
    if (thunk_touches(&body->thunks[i], S) || thunk_touches(&body->thunks[i], V)) return false;
  return true;
}

static void alias_loop_state(vkhlo_executable_t *exe, exe_sequence_t *seq) {
  for (int i = 0; seq && i < seq->count; i++) {
    exe_thunk_t *t = &seq->thunks[i];
    alias_loop_state(exe, t->cond);
    alias_loop_state(exe, t->body);
    for (int b = 0; b < t->branch_count; b++) alias_loop_state(exe, t->branches[b]);
    if (t->kind != EXE_THUNK_WHILE || !t->body) continue;
    exe_sequence_t *body = t->body;
    int lo = t->position, hi = t->position;
    exe_sequence_span(t->cond, &lo, &hi);
    exe_sequence_span(body, &lo, &hi);
    bool dropped = false;
    for (int c = 0; c < body->count; c++) {
      int d, start;
      if (body->thunks[c].kind != EXE_THUNK_COPY || body->thunks[c].src < 0 ||
          !state_can_take(exe, body, c, lo, &d, &start))
        continue;
      int S = body->thunks[c].dst, V = body->thunks[c].src;
      substitute(body, V, S);
      body->thunks[c].src = body->thunks[c].dst = -1; /* dropped below */
      if (start >= 0) body->thunks[start].src = body->thunks[start].dst = -1;
      dropped = true;
      /* V is no longer bound anywhere: no storage of its own */
      exe_buffer_t *vb = &exe->buffers[V];
      vb->size_bytes = 16;
      vb->data_bytes = 0;
      vb->last_use_position = vb->def_position;
    }
    /* the others, where they may, trade storage with their state */
    for (int c = 0; c < body->count; c++) {
      exe_thunk_t *copy = &body->thunks[c];
      if (copy->kind != EXE_THUNK_COPY || copy->src < 0 || !state_can_rotate(exe, body, c, lo)) continue;
      int *pairs = vkhlo_realloc(exe->allocator, t->rotate, sizeof *pairs * (size_t)(2 * t->rotate_count + 2));
      if (!pairs) continue; /* out of memory: the copy stays */
      t->rotate = pairs;
      pairs[2 * t->rotate_count] = copy->dst;
      pairs[2 * t->rotate_count + 1] = copy->src;
      t->rotate_count++;
      /* V holds the state every other iteration: it lives as long as S */
      exe_buffer_t *vb = &exe->buffers[copy->src];
      vb->def_position = lo;
      if (vb->last_use_position < t->position) vb->last_use_position = t->position;
      copy->src = copy->dst = -1; /* dropped below */
      dropped = true;
    }
    if (dropped) drop_marked_copies(body);
  }
}

void exe_alias_loop_state(vkhlo_executable_t *exe) { alias_loop_state(exe, &exe->main); }

/* ------------------------------------------- in-place update kernels */

static void select_window_kernels(vkhlo_executable_t *exe, exe_sequence_t *seq, bool *used) {
  for (int i = 0; seq && i < seq->count; i++) {
    exe_thunk_t *t = &seq->thunks[i];
    select_window_kernels(exe, t->cond, used);
    select_window_kernels(exe, t->body, used);
    for (int b = 0; b < t->branch_count; b++) select_window_kernels(exe, t->branches[b], used);
    if (t->kind == EXE_THUNK_WHILE && t->gate_kernel >= 0) used[t->gate_kernel] = used[t->copy_kernel] = true;
    if (t->kind != EXE_THUNK_DISPATCH) continue;
    if (t->has_window_kernel && t->window_input >= 0 && t->window_input < t->input_count &&
        t->binding_count == t->input_count + 1) {
      int out = t->bindings[t->input_count], in = t->bindings[t->window_input];
      if (out == in || exe_storage_buffer(exe, out) == exe_storage_buffer(exe, in)) t->kernel = t->window_kernel;
    }
    t->has_window_kernel = false;
    used[t->kernel] = true;
  }
}

static void renumber_kernels(exe_sequence_t *seq, const int *index) {
  for (int i = 0; seq && i < seq->count; i++) {
    exe_thunk_t *t = &seq->thunks[i];
    renumber_kernels(t->cond, index);
    renumber_kernels(t->body, index);
    for (int b = 0; b < t->branch_count; b++) renumber_kernels(t->branches[b], index);
    if (t->kind == EXE_THUNK_DISPATCH) t->kernel = index[t->kernel];
    if (t->kind == EXE_THUNK_WHILE && t->gate_kernel >= 0) {
      t->gate_kernel = index[t->gate_kernel];
      t->copy_kernel = index[t->copy_kernel];
    }
  }
}

vkhlo_status_t exe_select_inplace_kernels(vkhlo_executable_t *exe) {
  int n = exe->kernel_count;
  bool *used = vkhlo_calloc(exe->allocator, (size_t)n + 1, sizeof *used);
  int *index = vkhlo_calloc(exe->allocator, (size_t)n + 1, sizeof *index);
  if (!used || !index) {
    vkhlo_free(exe->allocator, used);
    vkhlo_free(exe->allocator, index);
    return VKHLO_NO_MEMORY();
  }
  select_window_kernels(exe, &exe->main, used);
  int kept = 0;
  for (int k = 0; k < n; k++) {
    exe_kernel_t *e = &exe->kernels[k];
    if (!used[k]) { /* not compiled yet: its name and source only */
      vkhlo_free(exe->allocator, e->name);
      vkhlo_free(exe->allocator, e->glsl);
      vkhlo_free(exe->allocator, e->spirv);
      vkhlo_free(exe->allocator, e->tune_key);
      continue;
    }
    index[k] = kept;
    exe->kernels[kept++] = *e;
  }
  exe->kernel_count = kept;
  renumber_kernels(&exe->main, index);
  vkhlo_free(exe->allocator, used);
  vkhlo_free(exe->allocator, index);
  return NULL;
}
