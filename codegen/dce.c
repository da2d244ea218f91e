/*
 * Dead-code elimination (see codegen/passes.h).
 *
 * An instruction is live when it is its computation's root, a parameter,
 * has a side effect (hlo_instruction_has_side_effect: checks, host
 * communication, rng, side-effecting custom calls, and ops whose called
 * computations contain one of those), or is an operand of a live
 * instruction.  Everything else is removed from its computation's
 * instruction list.  Tokens need no special case: an after_all feeding an
 * outfeed is the operand of a live instruction.
 *
 * Then computations that no live instruction reachable from the entry
 * computation calls are dropped from module->computations (the entry and
 * everything it reaches stay, in their callee-before-caller order).
 *
 * Invariants: parameters, roots and the order of the instructions kept are
 * untouched, so def-before-use order holds.  Region computations are
 * shared between callers (hlo/inline.c); removing dead code inside one is
 * valid for every caller because the root and parameters stay.
 *
 * What it does not do: it does not remove unused parameters or unused
 * elements of a tuple (that would change signatures), nor while loops whose
 * results are unused but whose bodies have side effects.
 */
#include "codegen/passes.h"

vkhlo_status_t codegen_dce_pass(hlo_module_t *module, const codegen_target_t *target, bool *changed) {
  (void)target;
  *changed = false;
  bool entry_listed = false;
  for (int i = 0; i < module->computation_count; i++) {
    hlo_computation_t *c = module->computations[i];
    entry_listed |= c == module->entry_computation;
    if (hlo_computation_remove_dead(c) > 0) *changed = true;
  }
  if (!entry_listed && module->entry_computation &&
      hlo_computation_remove_dead(module->entry_computation) > 0)
    *changed = true;
  int removed = 0;
  VKHLO_RETURN_IF_ERROR(hlo_module_remove_unreachable_computations(module, &removed));
  if (removed) *changed = true;
  return NULL;
}
