/*
 * The pass pipeline (see codegen/passes.h): runs the passes in order,
 * re-verifies between passes when asked (always in debug builds), and
 * dumps the module after each pass into the dump directory.
 */
#define _POSIX_C_SOURCE 200809L
#include "codegen/passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t count_instructions(const hlo_module_t *m) {
  int64_t n = 0;
  for (int i = 0; i < m->computation_count; i++) n += m->computations[i]->instruction_count;
  return n;
}

static vkhlo_status_t dump(const hlo_module_t *m, const codegen_pass_options_t *o, int step,
                           const char *name) {
  if (!o->dump_dir || (o->dump_after && strcmp(o->dump_after, name) != 0)) return NULL;
  char path[4096];
  snprintf(path, sizeof path, "%s/module.%02d.%s.mlir", o->dump_dir, step, name);
  char *text = hlo_module_to_string(m);
  if (!text) return VKHLO_NO_MEMORY();
  FILE *f = fopen(path, "w");
  if (!f) {
    vkhlo_free(m->arena.allocator, text);
    return vkhlo_status_make(VKHLO_STATUS_NOT_FOUND, "cannot write %s", path);
  }
  fputs(text, f);
  fclose(f);
  vkhlo_free(m->arena.allocator, text);
  return NULL;
}

/* A module that fails verification after a pass is the pass's bug:
 * INTERNAL, with the verifier's message (out-of-memory stays as it is). */
static vkhlo_status_t broken_by_pass(vkhlo_status_t st, const char *pass) {
  if (vkhlo_status_code(st) == VKHLO_STATUS_RESOURCE_EXHAUSTED)
    return vkhlo_status_annotate(st, "verifying after pass %s", pass);
  vkhlo_status_t internal =
      VKHLO_INTERNAL("internal error: the module does not verify after pass %s: %s", pass, vkhlo_status_message(st));
  vkhlo_status_free(st);
  return internal;
}

vkhlo_status_t codegen_run_passes(hlo_module_t *module, const codegen_pass_options_t *options,
                                  codegen_pass_stats_t *stats) {
  static const codegen_pass_t passes[] = {
      {"expand", codegen_expand_pass, false},
      {"simplify", codegen_simplify_pass, false},
      {"cse", codegen_cse_pass, false},
      {"dce", codegen_dce_pass, false},
      {"trip_count", codegen_trip_count_pass, false},
      {"fusion", codegen_fusion_pass, true},
      {"dce", codegen_dce_pass, false},
  };
  return codegen_run_pass_list(module, passes, (int)(sizeof passes / sizeof passes[0]), options, stats);
}

vkhlo_status_t codegen_run_pass_list(hlo_module_t *module, const codegen_pass_t *passes, int pass_count,
                                     const codegen_pass_options_t *options, codegen_pass_stats_t *stats) {
  bool verify = options->verify_between;
#ifndef NDEBUG
  verify = true;
#endif
  memset(stats, 0, sizeof *stats);
  stats->instructions_before = count_instructions(module);
  int step = 0;
  VKHLO_RETURN_IF_ERROR(dump(module, options, step++, "input"));
  for (int i = 0; i < pass_count; i++) {
    if (passes[i].is_fusion && options->no_fusion) continue;
    bool changed = false;
    vkhlo_status_t st = passes[i].run(module, options->target, &changed);
    if (st) return vkhlo_status_annotate(st, "pass %s", passes[i].name);
    if (verify && changed) {
      st = hlo_verify(module);
      if (st) return broken_by_pass(st, passes[i].name);
    }
    VKHLO_RETURN_IF_ERROR(dump(module, options, step++, passes[i].name));
  }
  stats->instructions_after = count_instructions(module);
  for (int c = 0; c < module->computation_count; c++) {
    const hlo_computation_t *comp = module->computations[c];
    for (int i = 0; i < comp->instruction_count; i++) {
      const hlo_instruction_t *in = comp->instructions[i];
      if (in->opcode == HLO_OPCODE_FUSION) {
        stats->fused_clusters++;
        stats->fused_instructions += in->called_computations[0]->instruction_count;
      }
    }
  }
  return NULL;
}
