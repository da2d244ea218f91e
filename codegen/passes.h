/*
 * The pass pipeline between the verifier and lowering, one pass per file,
 * run in order by codegen_run_passes (codegen/passes.c):
 *
 *   expand      (codegen/expand.c)    ops rewritten into simpler StableHLO:
 *                                     batch_norm_*, single-replica collectives...,
 *                                     long reduces split into chains, long
 *                                     sorts into merge passes (sort_runs),
 *                                     skinny dots split along k on GPUs,
 *                                     small conditionals into selects
 *   simplify    (codegen/simplify.c)  constant folding of small constants,
 *                                     algebraic simplification
 *   cse         (codegen/cse.c)       common-subexpression elimination
 *   dce         (codegen/dce.c)       dead-code elimination
 *   trip_count  (codegen/trip_count.c) while loops whose trip count the
 *                                     program fixes, marked with it
 *   fusion      (codegen/fusion.c)    op clusters -> fusion instructions
 *   dce
 *
 * Each pass keeps the program's meaning exactly (floating point included)
 * and reports whether it changed the module; the one latitude taken is the
 * spec's own: expand gives long reductions (and skinny dots, whose
 * elements are reduces) another reduction tree (see codegen/expand.c,
 * "long reductions", "split-K").  In debug builds (and when
 * options->verify_between is set) the verifier runs after every pass.
 */
#ifndef VKHLO_CODEGEN_PASSES_H
#define VKHLO_CODEGEN_PASSES_H

#include <stdbool.h>

#include "codegen/target.h"
#include "hlo/hlo.h"

typedef struct codegen_pass_options {
  const codegen_target_t *target;
  bool no_fusion;       /* skip the fusion pass: one kernel per instruction */
  bool verify_between;  /* run hlo_verify after every pass */
  const char *dump_dir; /* write module.<NN>.<pass>.mlir after every pass */
  const char *dump_after; /* only this pass (NULL = all) */
} codegen_pass_options_t;

typedef struct codegen_pass_stats {
  int64_t instructions_before; /* after inlining, before the passes */
  int64_t instructions_after;
  int64_t fused_clusters;       /* fusion instructions created */
  int64_t fused_instructions;   /* instructions moved into fusions */
} codegen_pass_stats_t;

/* Runs the pipeline above on |module| (verified), filling |stats|.
 * Errors: the failing pass's status, annotated with its name; INTERNAL
 * (with the verifier's message) when the module no longer verifies after
 * a pass: that is a bug in the pass, not in the program. */
vkhlo_status_t codegen_run_passes(hlo_module_t *module, const codegen_pass_options_t *options,
                                  codegen_pass_stats_t *stats);

/* One pass: rewrites |module| in place, sets *changed. */
typedef vkhlo_status_t (*codegen_pass_fn)(hlo_module_t *module, const codegen_target_t *target, bool *changed);
typedef struct codegen_pass {
  const char *name; /* for --dump-after and messages */
  codegen_pass_fn run;
  bool is_fusion;   /* skipped when options->no_fusion */
} codegen_pass_t;
/* codegen_run_passes over the list |passes| instead of the pipeline above
 * (tests run their own lists, e.g. with a pass that breaks the module). */
vkhlo_status_t codegen_run_pass_list(hlo_module_t *module, const codegen_pass_t *passes, int pass_count,
                                     const codegen_pass_options_t *options, codegen_pass_stats_t *stats);

/* The passes.  Each may be run alone (tests do). */
vkhlo_status_t codegen_expand_pass(hlo_module_t *module, const codegen_target_t *target, bool *changed);
vkhlo_status_t codegen_simplify_pass(hlo_module_t *module, const codegen_target_t *target, bool *changed);
vkhlo_status_t codegen_cse_pass(hlo_module_t *module, const codegen_target_t *target, bool *changed);
vkhlo_status_t codegen_dce_pass(hlo_module_t *module, const codegen_target_t *target, bool *changed);
vkhlo_status_t codegen_trip_count_pass(hlo_module_t *module, const codegen_target_t *target, bool *changed);
vkhlo_status_t codegen_fusion_pass(hlo_module_t *module, const codegen_target_t *target, bool *changed);

/* The fusion plan as a Graphviz DOT graph (clusters = fusions).  Caller frees
 * (vkhlo_free with module->arena.allocator); NULL on out-of-memory. */
char *codegen_fusion_dot(const hlo_module_t *module);

#endif
