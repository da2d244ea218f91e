/*
 * Inlining: copying one computation's instructions into another.
 *
 * The parser turns every `func.call` into an inline copy of the callee, so
 * the entry computation never contains calls.  The callee has been parsed
 * (and its own calls inlined) before the caller reaches the call, so one
 * level of copying is enough.
 *
 * Invariants kept: the copies are appended in the callee's order, which is
 * def-before-use, and every operand of a copy is either an argument (an
 * instruction of the caller) or an earlier copy.  Region computations of
 * copied instructions (reduce bodies, while conditions...) are shared with
 * the callee's instructions: they are immutable after parsing, and sharing
 * keeps inlining linear in the size of the inlined code.
 */
#include "hlo/hlo.h"

#include <string.h>

hlo_instruction_t *hlo_instruction_clone(hlo_module_t *m, const hlo_instruction_t *instr,
                                         hlo_instruction_t *const *operands) {
  hlo_instruction_t *copy =
      hlo_instruction_create(m, instr->opcode, &instr->shape, instr->operand_count, operands);
  if (!copy) return NULL;
  copy->attrs = instr->attrs;
  copy->literal = instr->literal;
  copy->parameter_number = instr->parameter_number;
  copy->loc = instr->loc;
  if (!hlo_instruction_set_called(m, copy, instr->called_count, instr->called_computations))
    return NULL;
  return copy;
}

bool hlo_computation_inline(hlo_module_t *m, hlo_computation_t *caller,
                            const hlo_computation_t *callee, hlo_instruction_t *const *args,
                            bool root_is_result_tuple, hlo_instruction_t **out_results) {
  const hlo_instruction_t *root = callee->root;
  bool skip_root = root_is_result_tuple && root && root->opcode == HLO_OPCODE_TUPLE;
  for (int i = 0; i < callee->parameter_count; i++) callee->parameters[i]->scratch = args[i];

  /* Operand arrays of copies are built here; instructions rarely have many
   * operands, larger ones use the arena. */
  hlo_instruction_t *small[16];
  for (int i = 0; i < callee->instruction_count; i++) {
    hlo_instruction_t *in = callee->instructions[i];
    if (in->opcode == HLO_OPCODE_PARAMETER) continue;
    if (skip_root && in == root) continue;
    hlo_instruction_t **ops = small;
    if (in->operand_count > 16) {
      ops = arena_alloc(&m->arena, sizeof(void *) * (size_t)in->operand_count);
      if (!ops) return false;
    }
    for (int k = 0; k < in->operand_count; k++) ops[k] = in->operands[k]->scratch;
    hlo_instruction_t *copy = hlo_instruction_clone(m, in, ops);
    if (!copy || !hlo_computation_append(m, caller, copy)) return false;
    in->scratch = copy;
  }

  if (skip_root) {
    for (int k = 0; k < root->operand_count; k++) out_results[k] = root->operands[k]->scratch;
  } else {
    out_results[0] = root ? root->scratch : NULL;
  }
  return true;
}
