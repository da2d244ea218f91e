/* The expand pass (being written; see codegen/passes.h).  For now it changes nothing. */
#include "codegen/passes.h"

vkhlo_status_t codegen_expand_pass(hlo_module_t *module, const codegen_target_t *target, bool *changed) {
  (void)module;
  (void)target;
  *changed = false;
  return NULL;
}
