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
  if (instr->opcode == HLO_OPCODE_DYNAMIC_UPDATE_SLICE) return k == 0;
  if (instr->opcode != HLO_OPCODE_FUSION)
    return hlo_opcode_is_elementwise(instr->opcode);
  if (instr->called_count < 1) return false;
  const hlo_computation_t *f = instr->called_computations[0];
  const hlo_instruction_t *param = NULL;
  for (int i = 0; i < f->parameter_count; i++)
    if (f->parameters[i]->parameter_number == k) param = f->parameters[i];
  if (!param || !f->root || param->id >= module->next_instruction_id) return false;
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

void exe_decide_inplace(vkhlo_executable_t *exe) { decide_inplace(exe, &exe->main); }
