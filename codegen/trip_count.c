/*
 * Known trip counts (see codegen/passes.h): marks every while loop whose
 * body runs a number of times the program fixes (hlo_while_trip_count,
 * hlo/loops.c: fori_loop and scan as JAX exports them) with that number
 * in its attributes (has_known_trip_count, known_trip_count).
 *
 * It runs after simplify, CSE and DCE, which leave the loop's constants
 * as plain constant instructions, and before fusion, which moves the
 * cond's compare and the body's step into fused computations where the
 * pattern is no longer visible.  Lowering (api/lower.c) reads the mark:
 * such a loop runs its body that many times without reading the
 * predicate back on the host, so a program whose loops are all counted
 * is recorded once and replayed like a straight-line one.
 *
 * It changes no instruction, operand or result: only the two attributes.
 */
#include "codegen/passes.h"

#include <string.h>

vkhlo_status_t codegen_trip_count_pass(hlo_module_t *module, const codegen_target_t *target, bool *changed) {
  (void)target;
  *changed = false;
  for (int c = 0; c < module->computation_count; c++) {
    hlo_computation_t *comp = module->computations[c];
    for (int i = 0; i < comp->instruction_count; i++) {
      hlo_instruction_t *in = comp->instructions[i];
      if (in->opcode != HLO_OPCODE_WHILE) continue;
      hlo_trip_count_t tc;
      memset(&tc, 0, sizeof tc);
      bool known = hlo_while_trip_count(in, &tc);
      if (known != in->attrs.has_known_trip_count || (known && tc.count != in->attrs.known_trip_count)) *changed = true;
      in->attrs.has_known_trip_count = known;
      in->attrs.known_trip_count = known ? tc.count : 0;
      in->attrs.trip_counter = known ? tc.counter : 0;
      in->attrs.trip_init = known ? tc.init : 0;
      in->attrs.trip_step = known ? tc.step : 0;
    }
  }
  return NULL;
}
