/*
 * Kernels for fusion instructions (see codegen/fusion.c for how clusters
 * are chosen): one GLSL compute shader per fused computation.
 *
 * Bindings follow codegen/kernel.h: the fusion's operands (= the fused
 * computation's parameters, in order) then one output per root (the root,
 * or each operand of a root tuple, or each result of a variadic reduce).
 * One invocation per element of the output dimensions, which all roots
 * share.  main() delinearizes gid into the output index and asks the
 * elemental emitter for every root's value there.  The emitter calls back
 * here (fused_operand) for each operand value:
 *   - a fused parameter loads from its binding at the row-major linear
 *     index of the requested index (at "idx" itself when the index is the
 *     output index and the shapes agree: elementwise chains then need no
 *     index arithmetic at all);
 *   - any other fused instruction is emitted by recursing into el_emit at
 *     the requested index, so a producer runs inline inside its consumer's
 *     loop (reduce input, dot epilogue...).
 *
 * Memoization.  The same (instruction, index expressions) asked twice is
 * emitted once, but only while the first definition is still in scope:
 * values defined inside a loop or branch body (a reduce's or dot's loop, a
 * pad's branch) are not visible after the block closes, nor in the next
 * branch of an if.  Each entry records the scope it was defined in (the
 * innermost open block of the emitter's GLSL builder, glsl_builder.h) and
 * is valid while that scope is open.  Entries form a stack whose scopes
 * nest (each is defined in the innermost scope, which lies inside the
 * scopes of all valid entries), so the entries of closed scopes are always
 * on top: memo_drop_closed pops them before every lookup and insertion.
 *
 * Row kernels (emit_rows; elemental.h, "Row fusions"): one row per
 * invocation on CPU devices, unrolled along the row, the row reduces
 * computed once per row at the top level and every value along the row
 * kept in the memo for the outputs' elements.
 *
 * Loop shape.  One element per loop iteration; on CPU devices the common
 * kernel driver (emit.c) wraps the body in a grid-stride loop.
 *
 * Wide kernels (CPU devices with shaderInt64).  lavapipe runs the
 * invocations of a workgroup as SIMD lanes, but a storage-buffer access
 * is a loop over the lanes, one scalar load or store per lane and vector
 * component; the cost is per access, not per byte.  So a loop fusion of
 * cheap elementwise and data-movement ops whose results are 32-bit gives
 * each invocation W = 8 (or 4, 2: what divides the element count)
 * consecutive elements: one 64-bit-word vector load (u64vec4 = 8 floats)
 * per operand read at the output's own position, the fused expression
 * emitted once per element in its own block, and one u64vec4 store per
 * result, through second views ("in<k>w", "out<r>w") of the same bindings.
 * Operands read elsewhere (broadcasts, transposes) still load per element.
 * Measured on lavapipe over 16M f32 (elementwise8): 75 ms one element per
 * invocation, 12-19 ms wide.  GPUs keep one element per invocation
 * (coalescing is per-lane there).
 *
 * Dots in wide kernels.  A dot whose value is only asked for at the
 * lanes' own indices (an output fusion's dot, lane_dot_ok) is computed
 * before the lanes for all of them in one loop (el_emit_dot_lanes): the 8
 * results along the last (rhs free) dimension share each lhs element, and
 * their 8 rhs elements come as one word when they are consecutive in a
 * parameter (fused_operand_run).  Without batch dimensions the invocation
 * takes 4 rows x 8 (CODEGEN_CPU_DOT_ROWS): each rhs word then serves 4
 * rows; rows past the end (the row count need not divide) repeat the last
 * row and are not stored.  Chess-9M's device time: 55 s one output per
 * invocation, 13 s with 8 lanes, 8-10 s with 4 x 8 tiles.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/emit_internal.h"
#include "support/array.h"
#include "support/status.h"

typedef struct memo_entry {
  const hlo_instruction_t *instr;
  char *key; /* the index expressions, comma-separated (heap) */
  int result_count;
  int out_first; /* its result_count names from fusion_ctx_t.memo_names[out_first] */
  glsl_scope_t scope; /* the block the values are defined in */
  unsigned hash;      /* of instr and key (memo_hash) */
  int prev;           /* the next older entry of the same bucket, -1: none */
} memo_entry_t;

/* Lookups go through MEMO_BUCKETS chains of the entries of one hash,
 * newest first (a row kernel of 768 elements holds some 15000 entries).
 * Entries leave only from the top of the stack, and the top entry is the
 * newest of its bucket, so popping it is restoring its bucket's head. */
#define MEMO_BUCKETS 4096

typedef struct fusion_ctx {
  const hlo_instruction_t *fusion;
  const hlo_shape_t *out_shape; /* dims shared by every output */
  const el_name_t *out_index;   /* the output index (delinearized idx) */
  const char *linear;           /* GLSL int expression for the output position */
  memo_entry_t *memo;
  int memo_count, memo_capacity;
  int *memo_heads; /* MEMO_BUCKETS newest entries, -1: none (NULL: not allocated) */
  /* the entries' value names, a stack as they are (most have one result:
   * a name array per entry made row kernels' memos megabytes) */
  el_name_t *memo_names;
  int memo_name_count, memo_name_capacity;
  /* Wide kernels: lanes per invocation (0: not wide), the lane being
   * emitted, and the operands loaded as words (bit k). */
  int wide, rows, lane; /* lane = row * wide + column */
  uint64_t wide_inputs;
  char lane_linear[32];
  /* Row kernels (emit_rows): the row's index (the output index without
   * its last dimension); row_pack: results collected as bits "o<r>_<lane>"
   * (lane = position in the block) and stored by words. */
  const el_name_t *row_index;
  bool row_pack;
  /* dots computed for all lanes at once (lane_dot_out[i][lane]) */
  int lane_dot_count;
  const hlo_instruction_t *lane_dot[EL_MAX_RESULTS];
  el_name_t lane_dot_out[EL_MAX_RESULTS][EL_MAX_LANES];
} fusion_ctx_t;

/* Pops the entries whose scope has closed (see the essay). */
static void memo_drop_closed(fusion_ctx_t *ctx, const elemental_emitter_t *E) {
  while (ctx->memo_count > 0 && !glsl_scope_open(&E->glsl, ctx->memo[ctx->memo_count - 1].scope)) {
    memo_entry_t *m = &ctx->memo[--ctx->memo_count];
    if (ctx->memo_heads) ctx->memo_heads[m->hash % MEMO_BUCKETS] = m->prev;
    ctx->memo_name_count = m->out_first;
    vkhlo_free(E->allocator, m->key);
  }
}

/* FNV-1a of the instruction's address and the key. */
static unsigned memo_hash(const hlo_instruction_t *instr, const char *key) {
  uint32_t h = 2166136261u;
  uintptr_t a = (uintptr_t)instr;
  for (size_t i = 0; i < sizeof a; i++, a >>= 8) h = (h ^ (uint32_t)(a & 0xFF)) * 16777619u;
  for (const char *c = key; *c; c++) h = (h ^ (uint8_t)*c) * 16777619u;
  return h;
}

static char *index_key(const vkhlo_allocator_t *allocator, const el_name_t *index, int rank) {
  strbuf_t sb;
  strbuf_init(&sb, allocator);
  strbuf_append(&sb, "@");
  for (int d = 0; index && d < rank; d++) strbuf_printf(&sb, "%s,", index[d].s);
  return strbuf_take(&sb);
}

static const memo_entry_t *memo_find(fusion_ctx_t *ctx, const elemental_emitter_t *E,
                                     const hlo_instruction_t *instr, const char *key) {
  memo_drop_closed(ctx, E);
  if (!ctx->memo_heads) return NULL; /* nothing added yet */
  for (int i = ctx->memo_heads[memo_hash(instr, key) % MEMO_BUCKETS]; i >= 0; i = ctx->memo[i].prev) {
    const memo_entry_t *m = &ctx->memo[i];
    if (m->instr != instr || strcmp(m->key, key) != 0) continue;
    if (glsl_scope_visible(&E->glsl, m->scope)) return m;
  }
  return NULL;
}

static void memo_add(fusion_ctx_t *ctx, const elemental_emitter_t *E,
                     const hlo_instruction_t *instr, char *key, int result_count,
                     const el_name_t *out) {
  memo_drop_closed(ctx, E);
  if (!ctx->memo_heads) {
    ctx->memo_heads = vkhlo_malloc(E->allocator, sizeof(int) * MEMO_BUCKETS);
    if (!ctx->memo_heads) {
      vkhlo_free(E->allocator, key); /* memoization is an optimization: go on without it */
      return;
    }
    for (int b = 0; b < MEMO_BUCKETS; b++) ctx->memo_heads[b] = -1;
  }
  void *entries = ctx->memo, *names = ctx->memo_names;
  bool room = array_reserve(E->allocator, &entries, &ctx->memo_capacity, ctx->memo_count + 1, sizeof *ctx->memo);
  ctx->memo = entries;
  room = room && array_reserve(E->allocator, &names, &ctx->memo_name_capacity, ctx->memo_name_count + result_count,
                               sizeof *ctx->memo_names);
  ctx->memo_names = names;
  if (!room) {
    vkhlo_free(E->allocator, key); /* memoization is an optimization: go on without it */
    return;
  }
  memo_entry_t *m = &ctx->memo[ctx->memo_count++];
  m->instr = instr;
  m->key = key;
  m->result_count = result_count;
  m->out_first = ctx->memo_name_count;
  for (int r = 0; r < result_count; r++) ctx->memo_names[ctx->memo_name_count++] = out[r];
  m->scope = glsl_innermost(&E->glsl);
  m->hash = memo_hash(instr, key);
  m->prev = ctx->memo_heads[m->hash % MEMO_BUCKETS];
  ctx->memo_heads[m->hash % MEMO_BUCKETS] = ctx->memo_count - 1;
}

/* Appends the row-major position in |s| of |index| as an int expression.
 * When |index| is the output index restricted to a run of consecutive
 * output dimensions (a row or column broadcast, or the output itself),
 * that is (linear / stride) % size, without per-dimension arithmetic. */
static void append_position(strbuf_t *sb, const fusion_ctx_t *ctx, const hlo_shape_t *s,
                            const el_name_t *index) {
  const hlo_shape_t *o = ctx->out_shape;
  int first = -1, last = -1;
  /* (row kernels: the row's positions are literals, el_append_linear's
   * expressions fold) */
  bool ok = ctx->out_index != NULL && !ctx->row_index;
  for (int d = 0; d < s->rank && ok; d++) {
    if (s->dimensions[d] == 1) continue;
    int od = -1;
    for (int e = last + 1; e < o->rank && od < 0; e++)
      if (o->dimensions[e] != 1 && strcmp(ctx->out_index[e].s, index[d].s) == 0) od = e;
    if (od < 0 || o->dimensions[od] != s->dimensions[d]) ok = false;
    for (int e = last + 1; ok && last >= 0 && e < od; e++)
      if (o->dimensions[e] != 1) ok = false; /* a gap */
    if (first < 0) first = od;
    last = od;
  }
  if (!ok || first < 0) {
    el_append_linear(sb, s, index);
    return;
  }
  int64_t after = 1, range = 1;
  bool before = false;
  for (int e = 0; e < o->rank; e++) {
    if (e < first && o->dimensions[e] != 1) before = true;
    if (e >= first && e <= last) range *= o->dimensions[e];
    if (e > last) after *= o->dimensions[e];
  }
  if (after == 1 && !before) strbuf_printf(sb, "%s", ctx->linear);
  else if (after == 1) strbuf_printf(sb, "%s %% %lld", ctx->linear, (long long)range);
  else if (!before) strbuf_printf(sb, "%s / %lld", ctx->linear, (long long)after);
  else strbuf_printf(sb, "(%s / %lld) %% %lld", ctx->linear, (long long)after, (long long)range);
}

/* In a wide kernel, operand |k| at the current lane's own position is the
 * lane's part of the word loaded up front ("p<k>_<lane>"). */
static bool wide_value(const fusion_ctx_t *ctx, int k, const char *position, el_name_t *out) {
  if (!ctx->wide || k < 0 || k >= 64 || !(ctx->wide_inputs >> k & 1) || strcmp(position, ctx->linear) != 0)
    return false;
  snprintf(out->s, sizeof out->s, "p%d_%d", k, ctx->lane);
  return true;
}

/* Operand |k|'s element at |position|: on CPU devices with texel views
 * an f32, s32 or u32 element comes through one (codegen_load_element_at). */
static vkhlo_status_t load_element(elemental_emitter_t *E, const hlo_instruction_t *x, hlo_element_type_t t, int k,
                                   const char *position, el_name_t *out) {
  if (E->target->is_cpu && E->target->texel_words)
    return codegen_load_element_at(E, x, t, k, position, &E->element_reads, out);
  char buffer[16];
  snprintf(buffer, sizeof buffer, "in%d", k);
  return codegen_load_element(E, x, t, buffer, position, out);
}

/* A fused parameter's element at row-major position |linear| (reshapes of
 * parameters load this way; see el_operand_linear_fn). */
static vkhlo_status_t fused_operand_linear(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                           int k, const char *linear, el_name_t *out,
                                           bool *handled) {
  fusion_ctx_t *ctx = E->user;
  const hlo_instruction_t *x = instr->operands[k];
  *handled = false;
  if (x->opcode != HLO_OPCODE_PARAMETER || x->parameter_number < 0 ||
      x->parameter_number >= ctx->fusion->operand_count)
    return NULL;
  if (wide_value(ctx, x->parameter_number, linear, out)) {
    *handled = true;
    return NULL;
  }
  const hlo_shape_t *s = &ctx->fusion->operands[x->parameter_number]->shape;
  char buffer[16];
  snprintf(buffer, sizeof buffer, "in%d", x->parameter_number);
  VKHLO_RETURN_IF_ERROR(load_element(E, x, s->element_type, x->parameter_number,
                                     hlo_shape_element_count(s) == 1 ? "0" : linear, out));
  *handled = true;
  return NULL;
}

/* A fused parameter's value: a load from its binding. */
static vkhlo_status_t load_parameter(elemental_emitter_t *E, fusion_ctx_t *ctx,
                                     const hlo_instruction_t *param, const el_name_t *index,
                                     el_name_t *out) {
  int k = param->parameter_number;
  if (k < 0 || k >= ctx->fusion->operand_count)
    return VKHLO_INTERNAL("fused parameter %s out of range", param->name);
  const hlo_shape_t *s = &ctx->fusion->operands[k]->shape;
  strbuf_t ref;
  strbuf_init(&ref, E->allocator);
  char buffer[16];
  snprintf(buffer, sizeof buffer, "in%d", k);
  if (s->rank == 0 || hlo_shape_element_count(s) == 1) strbuf_append(&ref, "0");
  else append_position(&ref, ctx, s, index);
  vkhlo_status_t st = NULL;
  if (ref.failed) st = VKHLO_NO_MEMORY();
  else if (!wide_value(ctx, k, ref.data ? ref.data : "0", out))
    st = load_element(E, param, s->element_type, k, ref.data ? ref.data : "0", out);
  strbuf_free(&ref);
  return st;
}

/* A constant whose elements are all equal (a splat; the pass fuses only
 * those): its first element as a literal. */
static vkhlo_status_t splat_constant(elemental_emitter_t *E, const hlo_instruction_t *x,
                                     el_name_t *out) {
  if (!x->literal || !x->literal->data || hlo_shape_is_tuple(&x->shape))
    return el_unimplemented(x, "constant without a value inside a fusion");
  strbuf_t sb;
  strbuf_init(&sb, E->allocator);
  glsl_append_literal_on(&sb, E->target, x->shape.element_type, x->literal->data);
  el_def(E, x, x->shape.element_type, false, out, "%s", sb.data ? sb.data : "0");
  bool failed = sb.failed;
  strbuf_free(&sb);
  return failed ? VKHLO_NO_MEMORY() : NULL;
}

static bool same_index(const el_name_t *a, const el_name_t *b, int rank) {
  if (!a || !b) return false;
  for (int d = 0; d < rank; d++)
    if (strcmp(a[d].s, b[d].s) != 0) return false;
  return true;
}

/* The value(s) of fused instruction |x| at |index| (memoized). */
static vkhlo_status_t value_of(elemental_emitter_t *E, fusion_ctx_t *ctx,
                               const hlo_instruction_t *x, const el_name_t *index,
                               el_name_t *out) {
  int nres = el_result_count(x);
  if (nres < 1 || nres > EL_MAX_RESULTS)
    return el_unimplemented(x, "fused value with %d results", nres);
  for (int i = 0; i < ctx->lane_dot_count; i++) {
    if (ctx->lane_dot[i] != x || !same_index(index, ctx->out_index, x->shape.rank)) continue;
    out[0] = ctx->lane_dot_out[i][ctx->lane];
    return NULL;
  }
  /* a row kernel's row reduce is only ever read at the row (fusion.c):
   * whatever index names it, it is the one computed for the row */
  if (ctx->row_index && el_is_row_reduce(x, ctx->out_shape)) index = ctx->row_index;
  char *key = index_key(E->allocator, index, el_result_shape(x, 0)->rank);
  if (!key) return VKHLO_NO_MEMORY();
  const memo_entry_t *hit = memo_find(ctx, E, x, key);
  if (hit) {
    for (int r = 0; r < hit->result_count; r++) out[r] = ctx->memo_names[hit->out_first + r];
    vkhlo_free(E->allocator, key);
    return NULL;
  }
  vkhlo_status_t st;
  if (x->opcode == HLO_OPCODE_PARAMETER) st = load_parameter(E, ctx, x, index, out);
  else if (x->opcode == HLO_OPCODE_CONSTANT) st = splat_constant(E, x, out);
  else st = el_emit(E, x, index, out);
  if (st) {
    vkhlo_free(E->allocator, key);
    return st;
  }
  memo_add(ctx, E, x, key, nres, out);
  return NULL;
}

static vkhlo_status_t fused_operand(elemental_emitter_t *E, const hlo_instruction_t *instr, int k,
                                    const el_name_t *index, el_name_t *out) {
  fusion_ctx_t *ctx = E->user;
  const hlo_instruction_t *x = instr->operands[k];
  el_name_t vals[EL_MAX_RESULTS];
  VKHLO_RETURN_IF_ERROR(value_of(E, ctx, x, index, vals));
  *out = vals[0];
  return NULL;
}

static bool is_plain32(hlo_element_type_t t) { return t == HLO_F32 || t == HLO_S32 || t == HLO_U32; }

/* Stores result |r|'s lanes |first| .. |first| + |W| - 1 (the bits in
 * "o<r>_<lane>") as one word at word index |at| of "out<r>w", after
 * |guard| (a condition's "if (...) ", or ""). */
static void store_word(elemental_emitter_t *E, const hlo_instruction_t *fusion, int r, const char *at, int W,
                       long long first, const char *guard) {
  strbuf_t sb;
  strbuf_init(&sb, E->allocator);
  strbuf_printf(&sb, "%sout%dw.data[%s] = %s(", guard, r, at, W == 8 ? "u64vec4" : W == 4 ? "u64vec2" : "uint64_t");
  for (int j = 0; j < W; j += 2)
    strbuf_printf(&sb, "%spackUint2x32(uvec2(o%d_%lld, o%d_%lld))", j ? ", " : "", r, first + j, r, first + j + 1);
  strbuf_append(&sb, ");");
  if (sb.failed) E->body.failed = true;
  else el_line(E, fusion, "%s", sb.data);
  strbuf_free(&sb);
}

/* el_operand_run_fn: |lanes| consecutive elements of a fused parameter
 * along its minor-most dimension, from one 64-bit-word load (wide kernels;
 * the first position is a multiple of |lanes|, see lane_dot_ok). */
static vkhlo_status_t fused_operand_run(elemental_emitter_t *E, const hlo_instruction_t *instr, int k,
                                        const el_name_t *index, int dim, int lanes, el_name_t *out,
                                        bool *handled) {
  fusion_ctx_t *ctx = E->user;
  const hlo_instruction_t *x = instr->operands[k];
  *handled = false;
  if (!ctx->wide || lanes != ctx->wide || lanes < 4 || x->opcode != HLO_OPCODE_PARAMETER ||
      x->parameter_number < 0 || x->parameter_number >= ctx->fusion->operand_count || x->parameter_number >= 64)
    return NULL;
  const hlo_shape_t *s = &ctx->fusion->operands[x->parameter_number]->shape;
  if (!is_plain32(s->element_type) || dim != s->rank - 1 || s->dimensions[dim] % lanes != 0) return NULL;
  int p = x->parameter_number;
  strbuf_t pos;
  strbuf_init(&pos, E->allocator);
  el_append_linear(&pos, s, index);
  if (pos.failed) {
    strbuf_free(&pos);
    return VKHLO_NO_MEMORY();
  }
  el_name_t w;
  el_fresh(E, "w", &w);
  el_line(E, instr, "%s %s = in%dw_at((%s) / %d);", lanes == 8 ? "u64vec4" : "u64vec2", w.s, p,
          pos.data ? pos.data : "0", lanes);
  strbuf_free(&pos);
  for (int j = 0; j < lanes; j++) {
    char v[96];
    el_word_element(v, sizeof v, s->element_type, w.s, j, false);
    el_def(E, x, s->element_type, false, &out[j], "%s", v);
  }
  E->wide_inputs |= 1ull << p;
  E->features |= GLSL_FEATURE_INT64;
  *handled = true;
  return NULL;
}

/* What a reduce's input |x| of shape |s| reads along its row (dimension
 * |dim|) through elementwise ops of that shape: the fused parameters read
 * at its own index (into |params|), and the broadcast_in_dims whose value
 * does not change along the row (into |fixed|: a softmax's row maximum).
 * Each once, at most ROW_MAX of each; |budget| bounds the walk. */
#define ROW_MAX 4
typedef struct row_reads {
  const hlo_instruction_t *params[ROW_MAX], *fixed[ROW_MAX];
  int param_count, fixed_count;
} row_reads_t;

static void add_once(const hlo_instruction_t **list, int *count, const hlo_instruction_t *x) {
  for (int i = 0; i < *count; i++)
    if (list[i] == x) return;
  if (*count < ROW_MAX) list[(*count)++] = x;
}

static void row_reads(const hlo_instruction_t *x, const hlo_shape_t *s, int dim, row_reads_t *r, int *budget) {
  if (--*budget < 0 || !hlo_shape_compatible_dims(&x->shape, s) || hlo_shape_is_tuple(&x->shape)) return;
  if (x->opcode == HLO_OPCODE_PARAMETER) {
    add_once(r->params, &r->param_count, x);
    return;
  }
  if (x->opcode == HLO_OPCODE_BROADCAST_IN_DIM) {
    const hlo_shape_t *os = &x->operands[0]->shape;
    bool along = false;
    for (int d = 0; d < os->rank; d++)
      along |= os->dimensions[d] != 1 &&
               (d < x->attrs.broadcast_dimensions.count ? x->attrs.broadcast_dimensions.data[d] : d) == dim;
    if (!along) add_once(r->fixed, &r->fixed_count, x);
    return;
  }
  if (!hlo_opcode_is_elementwise(x->opcode)) return;
  for (int k = 0; k < x->operand_count; k++) row_reads(x->operands[k], s, dim, r, budget);
}

/* Keeps in |r|'s params (in place; returns how many) the fused parameters
 * a kernel can read by 64-bit words at the reduce input's index: 32-bit,
 * of the input's shape |is|, their element count a multiple of |multiple|,
 * among the first 64 operands. */
static int word_params(const fusion_ctx_t *ctx, row_reads_t *r, const hlo_shape_t *is, int64_t multiple) {
  int np = 0;
  for (int i = 0; i < r->param_count; i++) {
    int p = r->params[i]->parameter_number;
    if (p < 0 || p >= ctx->fusion->operand_count || p >= 64) continue;
    const hlo_shape_t *ps = &ctx->fusion->operands[p]->shape;
    if (!is_plain32(ps->element_type) || !hlo_shape_compatible_dims(ps, is) ||
        hlo_shape_element_count(ps) % multiple != 0)
      continue;
    r->params[np++] = r->params[i];
  }
  return np;
}

/* Element |j| of each word |word[i]| into the memo, as the value of fused
 * parameter |params[i]| at |index| (|rank| names), for the producers of
 * the element's reduce step to find. */
static vkhlo_status_t memo_word_elements(elemental_emitter_t *E, fusion_ctx_t *ctx,
                                         const hlo_instruction_t *const *params, const el_name_t *word, int np,
                                         int j, const el_name_t *index, int rank) {
  for (int i = 0; i < np; i++) {
    hlo_element_type_t t = ctx->fusion->operands[params[i]->parameter_number]->shape.element_type;
    char text[96];
    el_word_element(text, sizeof text, t, word[i].s, j, false);
    el_name_t v;
    el_def(E, params[i], t, false, &v, "%s", text);
    char *key = index_key(E->allocator, index, rank);
    if (!key) return VKHLO_NO_MEMORY();
    memo_add(ctx, E, params[i], key, 1, &v);
  }
  return NULL;
}

/* el_reduce_row_fn (CPU devices with shaderInt64, not in wide kernels).
 * On lavapipe every storage-buffer load is a loop over the SIMD lanes, so
 * a reduce that walks its row one element per iteration pays a load per
 * element.  Here the row [base, base + len) of each fused parameter that
 * the reduce's input reads at its own index is read as the 64-bit words
 * that cover it (u64vec4, 8 elements: the first and last words may stick
 * out of the row, never out of the buffer: element counts are multiples
 * of 8), and the elements are given to the reduce in their order, each in
 * its own block, through the memo: the input's producers then find the
 * parameter's value at that index already defined.  Results are those of
 * the per-element loop, bit for bit. */
static vkhlo_status_t fused_reduce_row(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                       el_name_t *index, int dim, int64_t len, el_name_t *acc,
                                       bool *handled) {
  fusion_ctx_t *ctx = E->user;
  *handled = false;
  if (ctx->wide || !E->target->is_cpu || !E->target->shader_int64 || len < 8 || instr->operand_count != 2)
    return NULL;
  const hlo_shape_t *is = &instr->operands[0]->shape;
  row_reads_t reads;
  memset(&reads, 0, sizeof reads);
  int budget = 256;
  row_reads(instr->operands[0], is, dim, &reads, &budget);
  const hlo_instruction_t **params = reads.params;
  int np = word_params(ctx, &reads, is, 8);
  if (np == 0) return NULL;

  strbuf_t pos;
  strbuf_init(&pos, E->allocator);
  el_append_linear(&pos, is, index); /* index[dim] is "0": the row's first element */
  if (pos.failed) {
    strbuf_free(&pos);
    return VKHLO_NO_MEMORY();
  }
  /* the row's fixed values before the loop (their memo entries name no
   * row position, so every element finds them) */
  for (int i = 0; i < reads.fixed_count; i++) {
    el_name_t unused[EL_MAX_RESULTS];
    VKHLO_RETURN_IF_ERROR(value_of(E, ctx, reads.fixed[i], index, unused));
  }
  el_name_t base, w, word[ROW_MAX];
  el_fresh(E, "rb", &base);
  el_line(E, instr, "int %s = %s;", base.s, pos.data ? pos.data : "0");
  strbuf_free(&pos);
  el_fresh(E, "rw", &w);
  glsl_scope_t loop = el_open(E, instr, "for (int %s = %s / 8; %s <= (%s + %lld) / 8; %s++) {", w.s, base.s, w.s,
                              base.s, (long long)(len - 1), w.s);
  for (int i = 0; i < np; i++) {
    el_fresh(E, "q", &word[i]);
    el_line(E, instr, "u64vec4 %s = in%dw_at(%s);", word[i].s, params[i]->parameter_number, w.s);
    E->word_inputs |= 1ull << params[i]->parameter_number;
  }
  E->features |= GLSL_FEATURE_INT64;
  vkhlo_status_t st = NULL;
  for (int j = 0; j < 8 && !st; j++) {
    el_name_t e;
    el_fresh(E, "re", &e);
    el_line(E, instr, "int %s = %s * 8 + %d - %s;", e.s, w.s, j, base.s);
    glsl_scope_t in_row = el_open(E, instr, "if (%s >= 0 && %s < %lld) {", e.s, e.s, (long long)len);
    index[dim] = e;
    st = memo_word_elements(E, ctx, params, word, np, j, index, is->rank);
    if (!st) st = el_reduce_step(E, instr, index, acc);
    el_close(E, NULL, in_row);
  }
  el_close(E, NULL, loop);
  *handled = st == NULL;
  return st;
}

/* Does reducer |body| over element type |t| give the same value whatever
 * the order of its steps?  A maximum or minimum of its two parameters
 * (up to which NaN, where several are: a NaN-propagating one keeps the
 * first as long as the steps' pieces combine left before right), or an
 * integer or boolean sum, product, and, or, xor (exact, wrapping). */
static bool order_free(const hlo_computation_t *body, hlo_element_type_t t) {
  const hlo_instruction_t *r = body->root;
  if (!r || r->operand_count != 2 || r->operands[0]->opcode != HLO_OPCODE_PARAMETER ||
      r->operands[1]->opcode != HLO_OPCODE_PARAMETER || r->operands[0] == r->operands[1])
    return false;
  if (r->opcode == HLO_OPCODE_MAXIMUM || r->opcode == HLO_OPCODE_MINIMUM) return true;
  bool integer = t == HLO_PRED || hlo_element_type_is_integer(t);
  return integer && (r->opcode == HLO_OPCODE_ADD || r->opcode == HLO_OPCODE_MULTIPLY || r->opcode == HLO_OPCODE_AND ||
                     r->opcode == HLO_OPCODE_OR || r->opcode == HLO_OPCODE_XOR);
}

/* el_reduce_row_fn of row kernels (emit_rows): a row reduce at the row's
 * index, unrolled along the row.  One chain of steps makes each step wait
 * for the one before (a NaN-propagating maximum is about ten dependent
 * SIMD instructions on lavapipe), so a reduce that gives the same value in
 * any order (order_free: a softmax's max) and a row of C >=
 * 2 * ROW_CHAIN_MIN elements is cut into up to ROW_CHAINS consecutive
 * pieces, each folded by its own chain (the first from the init values,
 * the others from their first element), the chains' steps interleaved,
 * and the pieces combined pairwise, left before right: a schedule whose
 * in-order traversal is the init values and the row in order (spec
 * 'reduce').  Other reduces (floating-point sums) keep the row loop's
 * order, so that every result is the unfused kernel's bit for bit.  The
 * input's values at each position of the row are defined at the kernel's
 * top level, where the memo keeps them for the outputs' elements at the
 * same positions. */
#define ROW_CHAINS 4
#define ROW_CHAIN_MIN 8
static vkhlo_status_t row_reduce_steps(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                       el_name_t *index, int dim, int64_t len, el_name_t *acc,
                                       bool *handled) {
  fusion_ctx_t *ctx = E->user;
  *handled = false;
  const hlo_shape_t *o = ctx->out_shape;
  if (!ctx->row_index || dim != o->rank - 1 || len != o->dimensions[o->rank - 1] ||
      !same_index(index, ctx->row_index, dim))
    return NULL;
  /* one input and init (el_is_row_reduce), so one accumulator per chain */
  int64_t chains = len / ROW_CHAIN_MIN < ROW_CHAINS ? len / ROW_CHAIN_MIN : ROW_CHAINS;
  if (chains < 1 || !order_free(instr->called_computations[0], instr->shape.element_type)) chains = 1;
  int64_t piece = (len + chains - 1) / chains;
  el_name_t part[ROW_CHAINS];
  part[0] = acc[0];
  for (int64_t s = 0; s < piece; s++) {
    for (int64_t c = 0; c < chains; c++) {
      int64_t j = c * piece + s;
      if (j >= len) continue;
      el_const_index(&index[dim], j);
      if (c == 0 || s > 0) {
        VKHLO_RETURN_IF_ERROR(el_reduce_step(E, instr, index, &part[c]));
        continue;
      }
      el_name_t v; /* a piece's chain starts from its first element */
      VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 0, index, &v));
      el_fresh(E, "pc", &part[c]);
      el_line(E, instr, "%s %s = %s;", glsl_compute_type_on(E->target, instr->shape.element_type), part[c].s, v.s);
    }
  }
  /* every piece has elements: (chains - 1) * piece < len as chains <= len / 8 */
  for (int64_t w = 1; w < chains; w *= 2)
    for (int64_t c = 0; c + w < chains; c += 2 * w)
      VKHLO_RETURN_IF_ERROR(el_reduce_combine(E, instr, &part[c], &part[c + w]));
  *handled = true;
  return NULL;
}

static void store_output(elemental_emitter_t *E, const fusion_ctx_t *ctx,
                         const hlo_instruction_t *root, int r, const char *v) {
  const hlo_shape_t *s = el_result_shape(ctx->fusion, r);
  if (ctx->wide || ctx->row_pack) { /* the lane's bits, stored with the others after the lanes */
    hlo_element_type_t t = s->element_type;
    el_line(E, root, "o%d_%d = %s(%s);", r, ctx->lane, t == HLO_F32 ? "floatBitsToUint" : "uint", v);
    return;
  }
  strbuf_t line;
  strbuf_init(&line, E->allocator);
  char buffer[16];
  snprintf(buffer, sizeof buffer, "out%d", r);
  glsl_append_store_element(&line, E->target, s->element_type, buffer, ctx->linear, v);
  if (line.failed) E->body.failed = true;
  else el_line(E, root, "%s", line.data);
  strbuf_free(&line);
}

/* The roots of the fused computation: the operands of a root tuple, or the root. */
static int fused_roots(const hlo_computation_t *fc, const hlo_instruction_t **roots) {
  if (fc->root->opcode == HLO_OPCODE_TUPLE) {
    int n = fc->root->operand_count < EL_MAX_RESULTS ? fc->root->operand_count : EL_MAX_RESULTS;
    for (int i = 0; i < n; i++) roots[i] = fc->root->operands[i];
    return n;
  }
  roots[0] = fc->root;
  return 1;
}

/* Ops a wide kernel may contain: cheap per element, no loops (dots only
 * as lane_dot_ok allows). */
static bool wide_op(hlo_opcode_t op) {
  return hlo_opcode_is_elementwise(op) || el_is_data_movement(op) || op == HLO_OPCODE_PARAMETER ||
         op == HLO_OPCODE_CONSTANT || op == HLO_OPCODE_TUPLE;
}

static bool is_dot(hlo_opcode_t op) { return op == HLO_OPCODE_DOT || op == HLO_OPCODE_DOT_GENERAL; }

/* True when every use of |x| in |fc| is an elementwise op over the
 * result's dimensions |dims| (or the root, or the root tuple), so that it
 * is only ever asked for at each lane's own output index. */
static bool lane_indexed(const hlo_computation_t *fc, const hlo_instruction_t *x, const hlo_shape_t *dims,
                         int depth) {
  if (depth > 64) return false;
  if (x == fc->root) return true;
  for (int i = 0; i < fc->instruction_count; i++) {
    const hlo_instruction_t *u = fc->instructions[i];
    for (int k = 0; k < u->operand_count; k++) {
      if (u->operands[k] != x) continue;
      if (u->opcode == HLO_OPCODE_TUPLE && u == fc->root) continue;
      if (!hlo_opcode_is_elementwise(u->opcode) || !hlo_shape_compatible_dims(&u->shape, dims) ||
          !lane_indexed(fc, u, dims, depth + 1))
        return false;
    }
  }
  return true;
}

/* A dot a wide kernel computes for all lanes in one loop: f32, its result
 * the kernel's output shape with a rhs free dimension last, used only at
 * each lane's own index. */
static bool lane_dot_ok(const hlo_computation_t *fc, const hlo_instruction_t *d, const hlo_shape_t *out) {
  const hlo_shape_t *ls = &d->operands[0]->shape, *rs = &d->operands[1]->shape;
  if (d->shape.element_type != HLO_F32 || ls->element_type != HLO_F32 || rs->element_type != HLO_F32) return false;
  if (d->shape.rank != out->rank || !hlo_shape_compatible_dims(&d->shape, out) || out->rank < 1) return false;
  int rhs_free = d->opcode == HLO_OPCODE_DOT ? rs->rank - 1
                                             : rs->rank - d->attrs.rhs_batching_dimensions.count -
                                                   d->attrs.rhs_contracting_dimensions.count;
  return rhs_free >= 1 && lane_indexed(fc, d, out, 0);
}

/* Rows of lanes a dot can take: every result dimension but the last is a
 * lhs free one (no batch dimensions, one rhs free dimension), so a row of
 * the result is a row of lhs free indices times the rhs. */
static bool dot_rows_ok(const hlo_instruction_t *d) {
  const hlo_shape_t *ls = &d->operands[0]->shape, *rs = &d->operands[1]->shape;
  int nb = d->opcode == HLO_OPCODE_DOT ? 0 : d->attrs.lhs_batching_dimensions.count;
  int nc = d->opcode == HLO_OPCODE_DOT ? 1 : d->attrs.lhs_contracting_dimensions.count;
  return nb == 0 && rs->rank - nc == 1 && ls->rank - nc >= 1 && d->shape.rank >= 2;
}

/* A reduce a wide kernel computes for all lanes in one loop (a column
 * reduction): one 32-bit input whose minor-most dimension is not reduced,
 * its result the kernel's output shape, used only at each lane's own
 * index.  The lanes' inputs at one step are then consecutive elements. */
static bool lane_reduce_ok(const hlo_computation_t *fc, const hlo_instruction_t *x, const hlo_shape_t *out) {
  if (x->opcode != HLO_OPCODE_REDUCE || x->operand_count != 2 || x->called_count < 1) return false;
  const hlo_shape_t *is = &x->operands[0]->shape;
  return is->rank >= 2 && !hlo_dims_contains(x->attrs.dimensions, is->rank - 1) &&
         is_plain32(x->shape.element_type) && hlo_shape_compatible_dims(&x->shape, out) &&
         lane_indexed(fc, x, out, 0);
}

static int wide_lanes(const codegen_target_t *target, const hlo_instruction_t *fusion,
                      const hlo_computation_t *fc, int nout, int64_t total, int *out_rows) {
  *out_rows = 1;
  if (!target->is_cpu || !target->shader_int64 || fusion->operand_count > 64 || fc->instruction_count > 48)
    return 0;
  for (int r = 0; r < nout; r++)
    if (!is_plain32(el_result_shape(fusion, r)->element_type)) return 0;
  const hlo_shape_t *out = el_result_shape(fusion, 0);
  int dots = 0, reduces = 0;
  bool rows_ok = true;
  for (int i = 0; i < fc->instruction_count; i++) {
    const hlo_instruction_t *x = fc->instructions[i];
    if (is_dot(x->opcode) && lane_dot_ok(fc, x, out) && dots + reduces < EL_MAX_RESULTS) {
      dots++;
      rows_ok = rows_ok && dot_rows_ok(x);
      continue;
    }
    if (lane_reduce_ok(fc, x, out) && dots + reduces < EL_MAX_RESULTS) {
      reduces++;
      rows_ok = false;
      continue;
    }
    if (!wide_op(x->opcode)) return 0;
  }
  /* with dots or reduces, lanes must stay in one row of the last dimension */
  int64_t n = dots || reduces ? out->dimensions[out->rank - 1] : total;
  int w = n % 8 == 0 ? 8 : n % 4 == 0 ? 4 : n % 2 == 0 ? 2 : 0;
  if ((dots || reduces) && w < 4) return 0;
  /* at least a workgroup of invocations; column reductions also with
   * fewer (their loops are long, and one word load replaces 8: 16384 x 256
   * summed over the rows, 32 invocations on lavapipe, 0.9 ms instead of
   * 4.3) */
  if (!w || total % w != 0 || total < (reduces && !dots ? 8 : 64) * w) return 0;
  /* dots: several rows per invocation share each rhs load (register
   * blocking); the last invocation's rows past the end repeat the last
   * row and are not stored */
  if (dots && rows_ok && total / n >= CODEGEN_CPU_DOT_ROWS && total >= 64 * w * CODEGEN_CPU_DOT_ROWS)
    *out_rows = CODEGEN_CPU_DOT_ROWS;
  return w;
}

/* The value of every root at ctx->out_index, stored into the outputs. */
static vkhlo_status_t emit_roots(elemental_emitter_t *E, fusion_ctx_t *ctx, const hlo_instruction_t *const *roots,
                                 int nroots, int nout) {
  int r = 0;
  /* subgroup reductions: every value first (the reduces' shuffles need
   * every lane), then one lane stores */
  el_name_t all[EL_MAX_RESULTS];
  const hlo_instruction_t *root_of[EL_MAX_RESULTS];
  for (int i = 0; i < nroots; i++) {
    el_name_t vals[EL_MAX_RESULTS];
    VKHLO_RETURN_IF_ERROR(value_of(E, ctx, roots[i], ctx->out_index, vals));
    for (int k = 0; k < el_result_count(roots[i]) && r < nout; k++, r++) {
      if (E->subgroup_reduce) all[r] = vals[k], root_of[r] = roots[i];
      else store_output(E, ctx, roots[i], r, vals[k].s);
    }
  }
  if (r != nout) return VKHLO_INTERNAL("fusion %s: %d outputs for %d results", ctx->fusion->name, r, nout);
  if (E->subgroup_reduce) {
    glsl_scope_t one = el_open(E, ctx->fusion, "if (gl_SubgroupInvocationID == 0u) {");
    for (r = 0; r < nout; r++) store_output(E, ctx, root_of[r], r, all[r].s);
    el_close(E, ctx->fusion, one);
  }
  return NULL;
}

/* Subgroup reductions (GPUs, codegen_target_t.subgroup_reduce).  One
 * invocation per output element leaves a row reduce (a softmax's max and
 * sum, a layer norm's moments over 768 features) to one thread per row,
 * which on a GPU means few threads, each walking its row alone with
 * loads no neighbour shares.  A fusion whose reduces fold at least
 * EL_LANES_REDUCE_MIN elements per result, and which holds no
 * contraction or window (those would run once per lane), instead gives
 * each output element a subgroup (codegen_assemble loops the subgroups
 * over the elements): lane l folds elements l, l + S, ... of each reduce,
 * so neighbouring lanes load neighbouring elements of a row, the lanes'
 * partials combine by butterfly (reduce_lanes in elemental.c), every
 * lane computes the epilogue and lane 0 stores it.  A reduce that keeps
 * its input's minor dimension (a column sum) takes the lanes only for
 * fewer than SUBGROUP_COLUMN_OUTPUTS outputs: with more, neighbouring
 * invocations already load neighbouring columns, and lanes would stride
 * down a column instead. */
#define SUBGROUP_COLUMN_OUTPUTS 8192
static bool subgroup_fusion(const codegen_target_t *target, const hlo_computation_t *fc, int64_t outputs) {
  /* full subgroups of a power of two lanes within the workgroup */
  uint32_t sg = target->subgroup_size;
  if (!target->subgroup_reduce || sg < 2 || sg > CODEGEN_LOCAL_SIZE_X || (sg & (sg - 1))) return false;
  bool lanes = false;
  for (int i = 0; i < fc->instruction_count; i++) {
    const hlo_instruction_t *x = fc->instructions[i];
    switch (x->opcode) {
      case HLO_OPCODE_DOT: case HLO_OPCODE_DOT_GENERAL: case HLO_OPCODE_CONVOLUTION:
      case HLO_OPCODE_REDUCE_WINDOW: case HLO_OPCODE_SELECT_AND_SCATTER:
        return false;
      case HLO_OPCODE_REDUCE: {
        int minor = x->operands[0]->shape.rank - 1;
        bool row = minor >= 0 && hlo_dims_contains(x->attrs.dimensions, minor);
        lanes |= el_reduce_lanes_ok(target, x) && (row || outputs < SUBGROUP_COLUMN_OUTPUTS);
        break;
      }
      default: break;
    }
  }
  return lanes;
}

/* Does |fc| make a row kernel (elemental.h, "Row fusions")? */
static bool has_row_reduce(const hlo_computation_t *fc, const hlo_shape_t *out) {
  for (int i = 0; i < fc->instruction_count; i++)
    if (el_is_row_reduce(fc->instructions[i], out)) return true;
  return false;
}

/* Rows per invocation of a row kernel: G consecutive rows make a block of
 * G * C elements, a whole number of 64-bit words (C = 79: 8 rows, 79
 * words), so that rows whose length is not a multiple of 8 are still read
 * and written by words; 1 where that does not fit (no 64-bit words, a row
 * count G does not divide, blocks past EL_ROW_BLOCK_MAX elements). */
#define EL_ROW_BLOCK_MAX 1024
static int64_t row_block(const codegen_target_t *target, int64_t C, int64_t rows) {
  if (!target->shader_int64 || C % 8 == 0) return 1;
  int64_t g = C % 2 ? 8 : C % 4 ? 4 : 2; /* 8 / gcd(C, 8) */
  return rows % g == 0 && g * C <= EL_ROW_BLOCK_MAX ? g : 1;
}

/* A row kernel's [C] operand |k| (parameter |x|; a layer norm's scale or
 * shift), read the same for every row: in E->preamble, before the
 * grid-stride loop, lane l of each subgroup loads words l, l + SG, .. and
 * each element comes to every lane by a subgroupShuffle (one vector
 * permute on lavapipe), instead of every lane fetching every word for
 * every row; the elements enter the memo like the row loads'.  False
 * (nothing emitted) without subgroup shuffles. */
static bool shared_vector(elemental_emitter_t *E, fusion_ctx_t *ctx, const hlo_instruction_t *x, int k,
                          hlo_element_type_t t, int64_t C) {
  int sg = (int)E->target->subgroup_size;
  int64_t nw = C / 8, per = sg ? (nw + sg - 1) / sg : 0;
  if (!E->target->subgroup_shuffle || sg < 2 || sg > 64 || (sg & (sg - 1)) || per > EL_ROW_MAX / 8) return false;
  el_name_t cw[EL_ROW_MAX / 8];
  for (int64_t s = 0; s < per; s++) {
    el_fresh(E, "cw", &cw[s]);
    strbuf_printf(&E->preamble, "  u64vec4 %s = in%dw_at(min(%lld + int(gl_SubgroupInvocationID), %lld));\n",
                  cw[s].s, k, (long long)(s * sg), (long long)(nw - 1));
  }
  for (int64_t e = 0; e < C; e++) {
    el_name_t v, at;
    char text[96];
    el_word_element(text, sizeof text, t, cw[e / 8 / sg].s, (int)(e % 8), false);
    el_fresh(E, "cv", &v);
    strbuf_printf(&E->preamble, "  %s %s = subgroupShuffle(%s, %uu);\n", glsl_compute_type_on(E->target, t), v.s,
                  text, (unsigned)(e / 8 % sg));
    el_const_index(&at, e);
    char *key = index_key(E->allocator, &at, 1);
    if (!key) {
      E->preamble.failed = true;
      return true;
    }
    memo_add(ctx, E, x, key, 1, &v);
  }
  E->features |= GLSL_FEATURE_SUBGROUP_SHUFFLE;
  return true;
}

/* A row kernel's body (elemental.h, "Row fusions"): G rows of the outputs
 * per invocation (row_block), |total| elements in rows of C.  The rows'
 * indices come from gid; with 64-bit words (G * C % 8 == 0) the inputs of
 * the outputs' dimensions are loaded along the block, and those of
 * dimensions [C] whole (C % 8 == 0), as u64vec4 each (before the row
 * loop and shared by subgroup shuffles where the target has them:
 * shared_vector), and their elements entered in the memo; then, row by
 * row, the row reduces run, unrolled (row_reduce_steps), and the
 * outputs' C elements are emitted in order at
 * the top level, so every value defined along the way (x - max, exp of
 * it) is computed once and reused.  Outputs go out by words when the block
 * is a whole number of them, else per element.  lavapipe keeps the rows in
 * SIMD registers (spilled to the stack as whole vectors), while every
 * storage-buffer access is a loop over the lanes: the rows are read from
 * memory once instead of once per pass, 8 elements per access. */
static vkhlo_status_t emit_rows(elemental_emitter_t *E, fusion_ctx_t *ctx, const hlo_instruction_t *const *roots,
                                int nroots, int nout, int64_t total, int64_t G) {
  const hlo_instruction_t *fusion = ctx->fusion;
  const hlo_computation_t *fc = fusion->called_computations[0];
  const hlo_shape_t *o = ctx->out_shape;
  int rank = o->rank;
  int64_t C = o->dimensions[rank - 1], B = G * C; /* elements per block */
  hlo_shape_t rs = *o;
  rs.rank = rank - 1;
  el_name_t index[8][HLO_MAX_RANK];
  if (G == 1) {
    el_delinearize(E, fusion, &rs, "int(gid)", index[0]);
  } else {
    for (int64_t q = 0; q < G; q++) {
      char row[32];
      snprintf(row, sizeof row, "row%lld", (long long)q);
      el_line(E, fusion, "int %s = int(gid) * %lld + %lld;", row, (long long)G, (long long)q);
      el_delinearize(E, fusion, &rs, row, index[q]);
    }
  }
  el_line(E, fusion, "int rb = int(gid) * %lld;", (long long)B);
  bool words = E->target->shader_int64 && B % 8 == 0;
  for (int i = 0; words && i < fc->instruction_count; i++) {
    const hlo_instruction_t *x = fc->instructions[i];
    int k = x->parameter_number;
    if (x->opcode != HLO_OPCODE_PARAMETER || k < 0 || k >= fusion->operand_count || k >= 64) continue;
    const hlo_shape_t *ps = &fusion->operands[k]->shape;
    bool full = hlo_shape_compatible_dims(ps, o);
    if (!is_plain32(ps->element_type) || !(full || (ps->rank == 1 && ps->dimensions[0] == C && C % 8 == 0)))
      continue;
    int64_t n = full ? B : C;
    if (!full && shared_vector(E, ctx, x, k, ps->element_type, C)) n = 0; /* in E->preamble */
    for (int64_t w = 0; w < n / 8; w++) {
      el_name_t q;
      el_fresh(E, "q", &q);
      if (full)
        el_line(E, x, "u64vec4 %s = in%dw_at(int(gid) * %lld + %lld);", q.s, k, (long long)(B / 8), (long long)w);
      else el_line(E, x, "u64vec4 %s = in%dw_at(%lld);", q.s, k, (long long)w);
      for (int j = 0; j < 8; j++) {
        el_name_t v, at[HLO_MAX_RANK];
        char text[96];
        el_word_element(text, sizeof text, ps->element_type, q.s, j, false);
        el_def(E, x, ps->element_type, false, &v, "%s", text);
        int64_t e = w * 8 + j; /* row e / C of the block, element e % C */
        if (full) {
          for (int d = 0; d < rank - 1; d++) at[d] = index[e / C][d];
          el_const_index(&at[rank - 1], e % C);
        } else {
          el_const_index(&at[0], e);
        }
        char *key = index_key(E->allocator, at, full ? rank : 1);
        if (!key) return VKHLO_NO_MEMORY();
        memo_add(ctx, E, x, key, 1, &v);
      }
    }
    E->word_inputs |= 1ull << k;
    E->features |= GLSL_FEATURE_INT64;
  }
  bool pack = words;
  for (int r = 0; r < nout; r++) pack = pack && is_plain32(el_result_shape(fusion, r)->element_type);
  ctx->row_pack = pack;
  if (pack) {
    E->word_outputs = true;
    E->features |= GLSL_FEATURE_INT64;
    for (int r = 0; r < nout; r++)
      for (int64_t e = 0; e < B; e++) el_line(E, fusion, "uint o%d_%lld;", r, (long long)e);
  }
  for (int64_t q = 0; q < G; q++) {
    /* the row's reduces first, at the top level (the memo keeps their
     * values and their inputs' for the elements below) */
    ctx->row_index = index[q];
    ctx->out_index = NULL;
    for (int i = 0; i < fc->instruction_count; i++) {
      const hlo_instruction_t *x = fc->instructions[i];
      if (!el_is_row_reduce(x, o)) continue;
      el_name_t vals[EL_MAX_RESULTS];
      VKHLO_RETURN_IF_ERROR(value_of(E, ctx, x, index[q], vals));
    }
    el_name_t full[HLO_MAX_RANK];
    for (int d = 0; d < rank - 1; d++) full[d] = index[q][d];
    for (int64_t c = 0; c < C; c++) {
      int64_t e = q * C + c;
      el_const_index(&full[rank - 1], c);
      snprintf(ctx->lane_linear, sizeof ctx->lane_linear, "(rb + %lld)", (long long)e);
      ctx->linear = ctx->lane_linear;
      ctx->out_index = full;
      ctx->lane = (int)e;
      VKHLO_RETURN_IF_ERROR(emit_roots(E, ctx, roots, nroots, nout));
      if (!pack || e % 8 != 7) continue;
      char at[64];
      snprintf(at, sizeof at, "int(gid) * %lld + %lld", (long long)(B / 8), (long long)(e / 8));
      for (int r = 0; r < nout; r++) store_word(E, fusion, r, at, 8, (long long)(e - 7), "");
    }
  }
  return NULL;
}

/* A column reduction's W lanes in one loop (lane_reduce_ok): at each step
 * of the reduced dimensions, the fused parameters that the reduce's input
 * reads at its own index (32-bit, of the input's shape) are read as one
 * word holding the W lanes' elements, which the memo gives to the input's
 * producers; each lane then takes its reduce step in its own block, in the
 * per-element loop's order (results bit for bit the same).  |index| is
 * lane 0's output index; the lanes' accumulators go to |out|. */
static vkhlo_status_t emit_reduce_lanes(elemental_emitter_t *E, fusion_ctx_t *ctx, const hlo_instruction_t *x,
                                        const el_name_t *index, int W, el_name_t *out) {
  const hlo_shape_t *is = &x->operands[0]->shape;
  hlo_element_type_t t = x->shape.element_type;
  el_name_t init;
  VKHLO_RETURN_IF_ERROR(el_operand(E, x, 1, NULL, &init));
  el_use_type(E, t);
  for (int l = 0; l < W; l++) {
    el_fresh(E, "v", &out[l]);
    el_line(E, x, "%s %s = %s;", glsl_compute_type_on(E->target, t), out[l].s, init.s);
  }
  el_name_t ii[HLO_MAX_RANK], vars[HLO_MAX_RANK];
  glsl_scope_t loops[HLO_MAX_RANK];
  int64_t rdims[HLO_MAX_RANK];
  int nr = 0, ri = 0, oi = 0;
  for (int d = 0; d < is->rank; d++)
    if (hlo_dims_contains(x->attrs.dimensions, d)) rdims[nr++] = is->dimensions[d];
  el_open_loops(E, x, 1, nr, rdims, vars, loops);
  for (int d = 0; d < is->rank; d++) ii[d] = hlo_dims_contains(x->attrs.dimensions, d) ? vars[ri++] : index[oi++];
  row_reads_t reads;
  memset(&reads, 0, sizeof reads);
  int budget = 256;
  row_reads(x->operands[0], is, is->rank - 1, &reads, &budget);
  strbuf_t pos;
  strbuf_init(&pos, E->allocator);
  el_append_linear(&pos, is, ii);
  el_name_t word[ROW_MAX];
  int np = word_params(ctx, &reads, is, W);
  for (int i = 0; i < np && !pos.failed; i++) {
    int p = reads.params[i]->parameter_number;
    el_fresh(E, "q", &word[i]);
    el_line(E, x, "%s %s = in%dw_at((%s) / %d);", W == 8 ? "u64vec4" : "u64vec2", word[i].s, p, pos.data, W);
    E->wide_inputs |= 1ull << p;
  }
  vkhlo_status_t st = pos.failed ? VKHLO_NO_MEMORY() : NULL;
  strbuf_free(&pos);
  el_name_t column = ii[is->rank - 1];
  for (int l = 0; l < W && !st; l++) {
    glsl_scope_t lane = el_open(E, x, "{");
    el_name_t c;
    el_fresh(E, "i", &c);
    el_line(E, x, "int %s = %s + %d;", c.s, column.s, l);
    ii[is->rank - 1] = c;
    st = memo_word_elements(E, ctx, reads.params, word, np, l, ii, is->rank);
    if (!st) st = el_reduce_step(E, x, ii, &out[l]);
    el_close(E, x, lane);
  }
  el_close_loops(E, nr, loops);
  E->features |= GLSL_FEATURE_INT64;
  return st;
}

/* A wide kernel's body: word loads, one block per lane, word stores.  An
 * invocation handles rows x W elements: W consecutive ones in the last
 * dimension, in |rows| consecutive rows (rows > 1 only with dots). */
static vkhlo_status_t emit_wide(elemental_emitter_t *E, fusion_ctx_t *ctx, const hlo_instruction_t *const *roots,
                                int nroots, int nout, int64_t total) {
  const hlo_instruction_t *fusion = ctx->fusion;
  int W = ctx->wide, R = ctx->rows;
  int64_t N = ctx->out_shape->dimensions[ctx->out_shape->rank - 1], NW = N / W, M = total / N;
  const char *word = W == 8 ? "u64vec4" : W == 4 ? "u64vec2" : "uint64_t";
  E->features |= GLSL_FEATURE_INT64;
  E->wide_lanes = W;
  /* word index of row q, and the first element of row q */
  char word_of[EL_MAX_LANES][96], first_of[EL_MAX_LANES][96];
  if (R > 1) { /* rows rb * R + q of M, clamped to the last row */
    el_line(E, fusion, "int cb = int(gid) %% %lld;", (long long)NW);
    el_line(E, fusion, "int rb = int(gid) / %lld;", (long long)NW);
    for (int q = 0; q < R; q++) el_line(E, fusion, "int row%d = min(rb * %d + %d, %lld);", q, R, q, (long long)M - 1);
  }
  for (int q = 0; q < R; q++) {
    if (R == 1) {
      snprintf(word_of[q], sizeof word_of[q], "gid");
      snprintf(first_of[q], sizeof first_of[q], "int(gid) * %d", W);
    } else {
      snprintf(word_of[q], sizeof word_of[q], "row%d * %lld + cb", q, (long long)NW);
      snprintf(first_of[q], sizeof first_of[q], "row%d * %lld + cb * %d", q, (long long)N, W);
    }
  }
  for (int k = 0; k < fusion->operand_count; k++) {
    const hlo_shape_t *s = &fusion->operands[k]->shape;
    if (!is_plain32(s->element_type) || hlo_shape_element_count(s) != total) continue;
    ctx->wide_inputs |= 1ull << k;
    for (int q = 0; q < R; q++) {
      el_line(E, fusion, "%s w%d_%d = in%dw_at(%s);", word, k, q, k, word_of[q]);
      char w[32], v[96];
      snprintf(w, sizeof w, "w%d_%d", k, q);
      for (int j = 0; j < W; j++) {
        el_word_element(v, sizeof v, s->element_type, w, j, W == 2);
        el_line(E, fusion, "%s p%d_%d = %s;", glsl_compute_type_on(E->target, s->element_type), k, q * W + j, v);
      }
    }
  }
  E->wide_inputs = ctx->wide_inputs;
  el_name_t index[HLO_MAX_RANK], row_index[EL_MAX_LANES][HLO_MAX_RANK];
  const el_name_t *rows_of[EL_MAX_LANES];
  const hlo_computation_t *fc = fusion->called_computations[0];
  for (int i = 0; i < fc->instruction_count; i++) {
    const hlo_instruction_t *d = fc->instructions[i];
    if (!is_dot(d->opcode) && d->opcode != HLO_OPCODE_REDUCE) continue;
    if (ctx->lane_dot_count == EL_MAX_RESULTS) return el_unimplemented(d, "too many dots in a wide kernel");
    if (ctx->lane_dot_count == 0) {
      for (int q = 0; q < R; q++) {
        el_line(E, fusion, "int idxb%d = %s;", q, first_of[q]);
        char name[16];
        snprintf(name, sizeof name, "idxb%d", q);
        el_delinearize(E, fusion, ctx->out_shape, name, row_index[q]);
        rows_of[q] = row_index[q];
      }
      ctx->linear = "idxb0";
      ctx->lane = 0;
      ctx->out_index = row_index[0];
    }
    el_name_t outs[EL_MAX_LANES];
    if (is_dot(d->opcode)) VKHLO_RETURN_IF_ERROR(el_emit_dot_lanes(E, d, rows_of, R, W, outs));
    else VKHLO_RETURN_IF_ERROR(emit_reduce_lanes(E, ctx, d, row_index[0], W, outs));
    ctx->lane_dot[ctx->lane_dot_count] = d;
    memcpy(ctx->lane_dot_out[ctx->lane_dot_count++], outs, sizeof outs);
  }
  for (int r = 0; r < nout; r++)
    for (int l = 0; l < R * W; l++) el_line(E, fusion, "uint o%d_%d;", r, l);
  /* Where W divides the last dimension the lanes of a word share every
   * other index component: their indices are made from the word's first
   * position (elemental_emitter_t.lanes), in one scope, so what does not
   * depend on the last dimension is computed once for all lanes (the
   * memo); otherwise each lane has its own index and block. */
  bool share = N % W == 0 && R * W <= EL_MAX_LANES;
  if (share) {
    if (ctx->lane_dot_count == 0)
      for (int q = 0; q < R; q++) el_line(E, fusion, "int idxb%d = %s;", q, first_of[q]);
    for (int l = 0; l < R * W; l++) {
      el_lane_position_t *p = &E->lanes[l];
      snprintf(p->linear.s, sizeof p->linear.s, "idx%d", l);
      snprintf(p->base.s, sizeof p->base.s, "idxb%d", l / W);
      p->offset = l % W;
    }
    E->lane_count = R * W;
  }
  for (int l = 0; l < R * W; l++) {
    ctx->lane = l;
    snprintf(ctx->lane_linear, sizeof ctx->lane_linear, "idx%d", l);
    ctx->linear = ctx->lane_linear;
    glsl_scope_t block = {0};
    if (!share) block = el_open(E, fusion, "{");
    el_line(E, fusion, "int idx%d = %s + %d;", l, first_of[l / W], l % W);
    el_delinearize(E, fusion, ctx->out_shape, ctx->linear, index);
    ctx->out_index = index;
    vkhlo_status_t st = emit_roots(E, ctx, roots, nroots, nout);
    if (st) return st;
    if (!share) el_close(E, fusion, block);
  }
  E->lane_count = 0;
  for (int r = 0; r < nout; r++)
    for (int q = 0; q < R; q++) {
      char guard[64] = "";
      if (R > 1 && q > 0 && M % R != 0) snprintf(guard, sizeof guard, "if (rb * %d + %d < %lld) ", R, q, (long long)M);
      store_word(E, fusion, r, word_of[q], W, (long long)q * W, guard);
    }
  return NULL;
}

/* ------------------------------------------------------- attention */

bool codegen_attention_fusion(const codegen_target_t *target, const hlo_instruction_t *fusion, el_attention_t *a) {
  if (fusion->opcode != HLO_OPCODE_FUSION || fusion->called_count < 1 || !fusion->called_computations[0]->root)
    return false;
  const hlo_computation_t *fc = fusion->called_computations[0];
  const hlo_instruction_t *values = fc->root, *scores = NULL;
  if (values->opcode != HLO_OPCODE_DOT_GENERAL) return false;
  for (int i = 0; i < fc->instruction_count; i++) {
    const hlo_instruction_t *x = fc->instructions[i];
    if (x == values || !is_dot(x->opcode)) continue;
    if (scores) return false; /* two dots besides the root */
    scores = x;
  }
  return scores && el_attention_match(target, values, scores, (const hlo_instruction_t *const *)fc->instructions,
                                      fc->instruction_count, a);
}

/* The index of a dot_general operand |k| (0 lhs, 1 rhs) with one free and
 * one contracting dimension: the batch dimensions from |batch| (in the
 * dot's batch order), the free one |free|, the contracting one |contr|. */
static void dot_operand_index(const hlo_instruction_t *dot, int k, const el_name_t *batch, const el_name_t *free,
                              const el_name_t *contr, el_name_t *out) {
  const hlo_dims_t *bd = k ? &dot->attrs.rhs_batching_dimensions : &dot->attrs.lhs_batching_dimensions;
  const hlo_dims_t *cd = k ? &dot->attrs.rhs_contracting_dimensions : &dot->attrs.lhs_contracting_dimensions;
  int rank = dot->operands[k]->shape.rank;
  for (int d = 0; d < rank; d++) out[d] = *free;
  for (int i = 0; i < bd->count; i++) out[bd->data[i]] = batch[i];
  out[cd->data[0]] = *contr;
}

/* An attention operand (operand |k| of |dot|) read by 64-bit words: a
 * strided view of binding *binding whose dimension |along| has stride 1
 * and whose other strides are multiples of 8, so that a run of |run|
 * elements along it (run | 8 or 8 | run) starting at an index multiple
 * of |run| lies in whole u64vec4 words; its strides in |stride|. */
static bool attention_words(const elemental_emitter_t *E, const fusion_ctx_t *ctx, const hlo_instruction_t *dot,
                            int k, int along, int64_t run, int *binding, int64_t *stride) {
  const hlo_instruction_t *x = dot->operands[k];
  if (!E->target->shader_int64 || !(run % 8 == 0 || 8 % run == 0) ||
      !codegen_strided_view(ctx->fusion->called_computations[0], x, binding, stride) || *binding < 0 ||
      *binding >= 64 || *binding >= ctx->fusion->operand_count || stride[along] != 1)
    return false;
  for (int d = 0; d < x->shape.rank; d++)
    if (d != along && x->shape.dimensions[d] != 1 && stride[d] % 8 != 0) return false;
  return true;
}

/* Appends sum(index[d] * stride[d]) over the dimensions of |x| whose
 * index is not |skip| (-1: none). */
static void append_offset(strbuf_t *sb, const hlo_instruction_t *x, const el_name_t *index, const int64_t *stride,
                          int skip) {
  strbuf_append(sb, "0");
  for (int d = 0; d < x->shape.rank; d++)
    if (d != skip && x->shape.dimensions[d] != 1 && stride[d] != 0)
      strbuf_printf(sb, " + %s * %lld", index[d].s, (long long)stride[d]);
}

/* The next query row's scores (emit_attention's software pipeline):
 * next[t] += q[k] * kc[t * K + k] for step t * K + k, |done| of |steps|
 * emitted; attention_fill emits up to |n| more. */
typedef struct att_fill {
  const hlo_instruction_t *dot;
  const el_name_t *next, *q, *kc;
  int64_t K, steps, done;
} att_fill_t;

static void attention_fill(elemental_emitter_t *E, att_fill_t *f, int64_t n) {
  for (; n > 0 && f->done < f->steps; n--, f->done++)
    el_line(E, f->dot, "%s += %s * %s;", f->next[f->done / f->K].s, f->q[f->done % f->K].s, f->kc[f->done].s);
}

/* A row reduce of an attention kernel: |xv| holds the lane's keys'
 * inputs (key t * SG + l in lane l's xv[t]; "ok<t>" says whether it is
 * below L).  Every lane folds all L keys in order, init first, each input
 * brought from its lane by a subgroupShuffle of a constant lane (one
 * vector permute on lavapipe): the same steps in the same order as the
 * reduce's row loop, so the result is the unfused kernel's bit for bit.
 * A maximum or minimum (a softmax's max) folds each lane's keys as a tree,
 * then the lanes' values by butterfly, then init: the same value in fewer
 * dependent steps (up to the sign of a zero maximum, which x - max cannot
 * tell; and which NaN, where several are), chess-9M's attention kernel
 * 3.3 -> 3.05 ms on lavapipe (README).  A sum keeps the row loop's order;
 * |fill| (NULL: none) adds |fill_per_step| steps of the next row's scores
 * after each of its steps. */
static vkhlo_status_t lanes_reduce(elemental_emitter_t *E, fusion_ctx_t *ctx, const hlo_instruction_t *x,
                                   const el_name_t *xv, int T, int64_t L, att_fill_t *fill, int64_t fill_per_step,
                                   el_name_t *out) {
  el_name_t fn, acc, part;
  const hlo_computation_t *body = x->called_computations[0];
  VKHLO_RETURN_IF_ERROR(el_function(E, x, body, &fn));
  VKHLO_RETURN_IF_ERROR(value_of(E, ctx, x->operands[1], NULL, &acc));
  const char *ty = glsl_compute_type_on(E->target, x->shape.element_type);
  int SG = (int)E->target->subgroup_size;
  if (order_free(body, x->shape.element_type)) {
    /* the lane's keys pairwise (a tree: key t + w joins key t when it is
     * below L, and keys below L come first), then the lanes' values by
     * butterfly (subgroupShuffleXor; a lane past L holds key L - 1, which
     * a maximum may take twice), then init: the same value in 4 + 3 + 1
     * dependent steps instead of 9 + 8 for 79 keys on 8 lanes */
    el_name_t lv[EL_ATTENTION_MAX_KEYS_PER_LANE];
    for (int t = 0; t < T; t++) lv[t] = xv[t];
    for (int w = 1; w < T; w *= 2)
      for (int t = 0; t + w < T; t += 2 * w) {
        el_name_t r, m;
        el_fresh(E, "rr", &r);
        el_fresh(E, "rp", &m);
        el_line(E, x, "%s %s;", ty, r.s);
        el_line(E, x, "%s(%s, %s, %s);", fn.s, lv[t].s, lv[t + w].s, r.s);
        el_line(E, x, "%s %s = ok%d ? %s : %s;", ty, m.s, t + w, r.s, lv[t].s);
        lv[t] = m;
      }
    part = lv[0];
    for (int w = 1; w < SG; w *= 2) {
      el_name_t r;
      el_fresh(E, "rr", &r);
      el_line(E, x, "%s %s;", ty, r.s);
      el_line(E, x, "%s(%s, subgroupShuffleXor(%s, %uu), %s);", fn.s, part.s, part.s, (unsigned)w, r.s);
      part = r;
    }
    el_name_t r;
    el_fresh(E, "rr", &r);
    el_line(E, x, "%s %s;", ty, r.s);
    el_line(E, x, "%s(%s, %s, %s);", fn.s, acc.s, part.s, r.s);
    *out = r;
    return NULL;
  }
  for (int64_t j = 0; j < L; j++) {
    el_name_t r;
    el_fresh(E, "rr", &r);
    el_line(E, x, "%s %s;", ty, r.s);
    el_line(E, x, "%s(%s, subgroupShuffle(%s, %uu), %s);", fn.s, acc.s, xv[j / SG].s, (unsigned)(j % SG), r.s);
    acc = r;
    if (fill) attention_fill(E, fill, fill_per_step);
  }
  *out = acc;
  return NULL;
}

/* Q's row at index |rw| (nb batch names, then the row) into q[0..K), by
 * words where they are whole words (lane l loads word l, element k comes
 * from lane k / 8), else part u of it in lane l is element u * SG + l
 * (element loads cost a loop over the lanes or a gather on lavapipe: 4 of
 * them per row took ~15% of the attention kernel). */
static vkhlo_status_t attention_q_row(elemental_emitter_t *E, const hlo_instruction_t *d1, const el_name_t *rw,
                                      int nb, int64_t K, bool qwords, int qb, const int64_t *qs, int qdim,
                                      el_name_t *q) {
  int SG = (int)E->target->subgroup_size;
  el_name_t at[HLO_MAX_RANK];
  if (qwords) {
    el_name_t zero, word, qe[8];
    el_const_index(&zero, 0);
    dot_operand_index(d1, 0, rw, &rw[nb], &zero, at);
    strbuf_t sb;
    strbuf_init(&sb, E->allocator);
    append_offset(&sb, d1->operands[0], at, qs, qdim);
    el_fresh(E, "qw", &word);
    el_line(E, d1, "u64vec4 %s = in%dw_at(((%s) >> 3) + min(lane, %lld));", word.s, qb, sb.data ? sb.data : "0",
            (long long)(K / 8 - 1));
    bool failed = sb.failed;
    strbuf_free(&sb);
    if (failed) return VKHLO_NO_MEMORY();
    for (int j = 0; j < 8; j++) {
      char text[96];
      el_word_element(text, sizeof text, HLO_F32, word.s, j, false);
      el_def(E, d1, HLO_F32, false, &qe[j], "%s", text);
    }
    for (int64_t k = 0; k < K; k++)
      el_def(E, d1, HLO_F32, false, &q[k], "subgroupShuffle(%s, %uu)", qe[k % 8].s, (unsigned)(k / 8));
    E->word_inputs |= 1ull << qb;
    E->features |= GLSL_FEATURE_INT64;
    return NULL;
  }
  int U = (int)((K + SG - 1) / SG);
  el_name_t qp[EL_ATTENTION_MAX_HEAD];
  for (int u = 0; u < U; u++) {
    el_name_t qk;
    el_fresh(E, "qk", &qk);
    el_line(E, d1, "int %s = min(lane + %d, %lld);", qk.s, u * SG, (long long)(K - 1));
    dot_operand_index(d1, 0, rw, &rw[nb], &qk, at);
    VKHLO_RETURN_IF_ERROR(el_operand(E, d1, 0, at, &qp[u]));
  }
  for (int64_t k = 0; k < K; k++)
    el_def(E, d1, HLO_F32, false, &q[k], "subgroupShuffle(%s, %uu)", qp[k / SG].s, (unsigned)(k % SG));
  return NULL;
}

/* An attention kernel (elemental.h, el_attention_match).  A subgroup of
 * SG lanes takes one batch index and a block of query rows (blocks only
 * where there are fewer than 64 batch indices).  Lane l owns keys l,
 * l + SG, .. (T = ceil(L / SG); past L they repeat the last key and are
 * masked out) and keeps their rows of K, and columns l * C .. l * C + C - 1
 * (C = ceil(E / SG)) of every key's row of V, loaded once, by 64-bit
 * words where the views allow (attention_words).  Per query row: the row
 * of Q comes as one word per lane (lane l word l) where the views allow,
 * else in SG-element parts, one per lane, each element reaching every
 * lane by a subgroupShuffle of a constant lane; each lane computes
 * its keys' scores (entered in the memo at the keys' positions), the row
 * reduces fold every key in order on every lane (lanes_reduce) and are
 * entered at the row, and P at each key comes from the elemental emitter
 * over the fused softmax like any fused value; then each lane sums P x V
 * for its C columns over the keys in order, each key's P shuffled from
 * the lane that owns it, and stores them.  Scores and P never reach
 * memory.  The loop is software pipelined: row m + 1's scores are
 * computed during row m's in-order sums, whose dependent adds leave the
 * adder idle otherwise (attention_fill; 264 heads of 79 x 32, 3.3 -> 2.5
 * ms with the maximum's butterfly of lanes_reduce; taking two rows per
 * iteration instead, which doubles the loop's code, was 10% slower than
 * one).  Measured on lavapipe (2 cores, 256-bit lanes, README):
 * chess-9M's attention per layer 3.5-4.1 ms against 15 ms for its
 * scores, softmax and values kernels (lane-first row sums; in the exact
 * order, 3.2 ms against 3.0 for 264 heads of 79 x 32).  Loading V per
 * query row instead of once (fewer live values) measured 12.5 ms against
 * 3.2: lavapipe's loads cost more than its spills. */
static vkhlo_status_t emit_attention(elemental_emitter_t *E, fusion_ctx_t *ctx, const el_attention_t *a,
                                     int64_t *out_total) {
  const hlo_instruction_t *fusion = ctx->fusion, *d1 = a->scores, *d2 = a->values;
  const hlo_computation_t *fc = fusion->called_computations[0];
  const hlo_shape_t *ps = &d2->operands[0]->shape;
  int nb = a->batch_rank, SG = (int)E->target->subgroup_size, T = a->keys_per_lane;
  int64_t M = a->M, L = a->L, K = a->K, EV = a->E, C = (EV + SG - 1) / SG; /* columns per lane */
  int64_t batches = 1;
  for (int d = 0; d < nb; d++) batches *= ps->dimensions[d];
  /* enough subgroups to keep the cores busy: query blocks where the batch is small */
  int64_t blocks = batches >= 64 ? 1 : (64 + batches - 1) / batches;
  if (blocks > M) blocks = M;
  int64_t MB = (M + blocks - 1) / blocks;
  blocks = (M + MB - 1) / MB;
  size_t cache = sizeof(el_name_t) * ((size_t)T * (size_t)K + (size_t)L * (size_t)C);
  el_name_t *kc = vkhlo_malloc(E->allocator, cache), *vc = kc ? kc + (size_t)T * (size_t)K : NULL;
  el_name_t *o = vkhlo_malloc(E->allocator, sizeof(el_name_t) * (size_t)(C + K));
  el_name_t *q = o ? o + C : NULL;
  if (!kc || !o) {
    vkhlo_free(E->allocator, kc);
    vkhlo_free(E->allocator, o);
    return VKHLO_NO_MEMORY();
  }
  vkhlo_status_t st = NULL;
  el_name_t row[HLO_MAX_RANK], kk[EL_ATTENTION_MAX_KEYS_PER_LANE], at[HLO_MAX_RANK], c;
  el_line(E, fusion, "int lane = int(gl_SubgroupInvocationID);");
  el_line(E, fusion, "int prob = int(gid) / %d;", SG);
  el_line(E, fusion, "int bflat = prob / %lld;", (long long)blocks);
  el_line(E, fusion, "int m0 = (prob %% %lld) * %lld;", (long long)blocks, (long long)MB);
  hlo_shape_t bs = *ps;
  bs.rank = nb;
  el_delinearize(E, fusion, &bs, "bflat", row);
  snprintf(row[nb].s, sizeof row[nb].s, "m");
  ctx->out_shape = ps;
  ctx->out_index = NULL;
  ctx->row_index = row;
  for (int t = 0; t < T; t++) {
    snprintf(kk[t].s, sizeof kk[t].s, "kk%d", t);
    el_line(E, fusion, "int kk%d = min(lane + %d, %lld);", t, t * SG, (long long)(L - 1));
    el_line(E, fusion, "bool ok%d = lane + %d < %lld;", t, t * SG, (long long)L);
  }
  /* the lane's keys' rows of K, by words where they are whole words */
  int kb, vb;
  int64_t ks[HLO_MAX_RANK], vs[HLO_MAX_RANK];
  int kdim = (int)d1->attrs.rhs_contracting_dimensions.data[0], vdim = 0;
  for (int d = 0; d < d2->operands[1]->shape.rank; d++)
    if (!hlo_dims_contains(d2->attrs.rhs_batching_dimensions, d) &&
        !hlo_dims_contains(d2->attrs.rhs_contracting_dimensions, d))
      vdim = d; /* V's free dimension */
  bool kwords = K % 8 == 0 && attention_words(E, ctx, d1, 1, kdim, K, &kb, ks);
  bool vwords = EV % SG == 0 && attention_words(E, ctx, d2, 1, vdim, C, &vb, vs);
  strbuf_t sb;
  strbuf_init(&sb, E->allocator);
  for (int t = 0; t < T && !st; t++) {
    if (kwords) {
      el_const_index(&c, 0);
      dot_operand_index(d1, 1, row, &kk[t], &c, at);
      strbuf_free(&sb);
      strbuf_init(&sb, E->allocator);
      append_offset(&sb, d1->operands[1], at, ks, kdim);
      el_name_t base;
      el_fresh(E, "kb", &base);
      el_line(E, d1, "int %s = (%s) >> 3;", base.s, sb.data ? sb.data : "0");
      for (int64_t w = 0; w < K / 8; w++) {
        el_name_t word;
        el_fresh(E, "kw", &word);
        el_line(E, d1, "u64vec4 %s = in%dw_at(%s + %lld);", word.s, kb, base.s, (long long)w);
        for (int j = 0; j < 8; j++) {
          char text[96];
          el_word_element(text, sizeof text, HLO_F32, word.s, j, false);
          el_def(E, d1, HLO_F32, false, &kc[t * K + w * 8 + j], "%s", text);
        }
      }
      continue;
    }
    for (int64_t k = 0; k < K && !st; k++) {
      el_const_index(&c, k);
      dot_operand_index(d1, 1, row, &kk[t], &c, at);
      st = el_operand(E, d1, 1, at, &kc[t * K + k]);
    }
  }
  if (kwords) E->word_inputs |= 1ull << kb;
  /* the lane's C columns of V, every key's (their indices only where
   * V is not read by words) */
  el_name_t col[EL_ATTENTION_MAX_HEAD];
  for (int64_t j = 0; j < C && !vwords; j++) {
    el_fresh(E, "vcol", &col[j]);
    el_line(E, d2, "int %s = min(lane * %lld + %lld, %lld);", col[j].s, (long long)C, (long long)j,
            (long long)(EV - 1));
  }
  if (vwords) el_line(E, d2, "int voff = (lane * %lld) & 7;", (long long)C);
  for (int64_t key = 0; key < L && !st; key++) {
    el_const_index(&c, key);
    if (vwords) { /* the word holding the lane's C columns (C | 8), at voff */
      el_name_t zero, word;
      el_const_index(&zero, 0);
      dot_operand_index(d2, 1, row, &zero, &c, at);
      strbuf_free(&sb);
      strbuf_init(&sb, E->allocator);
      append_offset(&sb, d2->operands[1], at, vs, vdim);
      el_fresh(E, "vw", &word);
      el_line(E, d2, "u64vec4 %s = in%dw_at((%s + lane * %lld) >> 3);", word.s, vb, sb.data ? sb.data : "0",
              (long long)C);
      for (int64_t j = 0; j < C; j++)
        el_def(E, d2, HLO_F32, false, &vc[key * C + j],
               "uintBitsToFloat(unpackUint2x32(%s[(voff + %lld) >> 1])[(voff + %lld) & 1])", word.s, (long long)j,
               (long long)j);
      continue;
    }
    for (int64_t j = 0; j < C && !st; j++) {
      dot_operand_index(d2, 1, row, &col[j], &c, at);
      st = el_operand(E, d2, 1, at, &vc[key * C + j]);
    }
  }
  if (vwords) E->word_inputs |= 1ull << vb;
  if (kwords || vwords) E->features |= GLSL_FEATURE_INT64;
  if (sb.failed) st = VKHLO_NO_MEMORY();
  strbuf_free(&sb);
  /* Software pipelined: the scores of row m + 1 (next[t]) are computed
   * in row m's iteration, their steps interleaved with row m's in-order
   * sums (the softmax's L dependent adds, then the C P x V columns of L
   * steps each), which would otherwise wait on their own latency; the
   * block's first row's scores come before the loop, its last row's
   * twice.  Each score still sums its K products in order. */
  int qb = 0, qdim = (int)d1->attrs.lhs_contracting_dimensions.data[0];
  int64_t qs[HLO_MAX_RANK];
  bool qwords = !st && K % 8 == 0 && K / 8 <= SG && attention_words(E, ctx, d1, 0, qdim, K, &qb, qs);
  el_name_t next[EL_ATTENTION_MAX_KEYS_PER_LANE], rown[HLO_MAX_RANK];
  for (int d = 0; d < nb; d++) rown[d] = row[d];
  snprintf(rown[nb].s, sizeof rown[nb].s, "m0");
  if (!st) st = attention_q_row(E, d1, rown, nb, K, qwords, qb, qs, qdim, q);
  for (int t = 0; t < T && !st; t++) {
    el_fresh(E, "sn", &next[t]);
    el_line(E, d1, "float %s = 0.0;", next[t].s);
  }
  att_fill_t fill = {.dot = d1, .next = next, .q = q, .kc = kc, .K = K, .steps = (int64_t)T * K};
  if (!st) attention_fill(E, &fill, fill.steps);
  glsl_scope_t loop = el_open(E, fusion, "for (int m = m0; m < min(m0 + %lld, %lld); m++) {", (long long)MB,
                              (long long)M);
  el_line(E, fusion, "int mn = min(m + 1, min(m0 + %lld, %lld) - 1);", (long long)MB, (long long)M);
  snprintf(rown[nb].s, sizeof rown[nb].s, "mn");
  /* this row's scores, in the memo at their positions */
  el_name_t xv[EL_ATTENTION_MAX_KEYS_PER_LANE], pz[EL_ATTENTION_MAX_KEYS_PER_LANE];
  for (int t = 0; t < T && !st; t++) {
    el_name_t sc;
    el_fresh(E, "s", &sc);
    el_line(E, d1, "float %s = %s;", sc.s, next[t].s);
    for (int d = 0; d <= nb; d++) at[d] = row[d];
    at[nb + 1] = kk[t];
    char *key = index_key(E->allocator, at, nb + 2);
    if (!key) st = VKHLO_NO_MEMORY();
    else memo_add(ctx, E, d1, key, 1, &sc);
  }
  /* the next row's Q; its scores' steps go between the steps of this
   * row's in-order row reduces (a softmax's sum: L dependent adds) and
   * of its P x V sums, about two thirds into the former */
  if (!st) st = attention_q_row(E, d1, rown, nb, K, qwords, qb, qs, qdim, q);
  for (int t = 0; t < T && !st; t++) el_line(E, d1, "%s = 0.0;", next[t].s);
  fill.done = 0;
  int64_t fill_per_step = (fill.steps * 2 / 3 + L - 1) / L;
  /* the row reduces, in order (a softmax's sum reads its max) */
  for (int i = 0; i < fc->instruction_count && !st; i++) {
    const hlo_instruction_t *x = fc->instructions[i];
    if (!el_is_row_reduce(x, ps)) continue;
    for (int t = 0; t < T && !st; t++) {
      for (int d = 0; d <= nb; d++) at[d] = row[d];
      at[nb + 1] = kk[t];
      st = value_of(E, ctx, x->operands[0], at, &xv[t]);
    }
    el_name_t r;
    if (!st) st = lanes_reduce(E, ctx, x, xv, T, L, &fill, fill_per_step, &r);
    if (st) break;
    char *key = index_key(E->allocator, row, nb + 1);
    if (!key) st = VKHLO_NO_MEMORY();
    else memo_add(ctx, E, x, key, 1, &r);
  }
  /* P at the lane's keys (0 past L) */
  for (int t = 0; t < T && !st; t++) {
    el_name_t p;
    for (int d = 0; d <= nb; d++) at[d] = row[d];
    at[nb + 1] = kk[t];
    st = value_of(E, ctx, d2->operands[0], at, &p);
    if (!st) el_def(E, d2, HLO_F32, false, &pz[t], "ok%d ? %s : 0.0", t, p.s);
  }
  /* the lane's columns of P x V, over the keys in order, each key's P
   * from the lane that owns it */
  for (int64_t j = 0; j < C && !st; j++) {
    el_fresh(E, "o", &o[j]);
    el_line(E, d2, "float %s = 0.0;", o[j].s);
  }
  int64_t per_key = (fill.steps - fill.done + L - 1) / L;
  for (int64_t key = 0; key < L && !st; key++) {
    el_name_t pk;
    el_def(E, d2, HLO_F32, false, &pk, "subgroupShuffle(%s, %uu)", pz[key / SG].s, (unsigned)(key % SG));
    for (int64_t j = 0; j < C; j++) el_line(E, d2, "%s += %s * %s;", o[j].s, pk.s, vc[key * C + j].s);
    attention_fill(E, &fill, per_key);
  }
  attention_fill(E, &fill, fill.steps);
  /* the lane's C columns as one word where they fill one (C = 2, 4 or 8,
   * f32, every lane's columns inside the row): lavapipe stores lane by
   * lane, component by component, so 4 floats cost twice the 2 64-bit
   * components of a u64vec2 */
  const hlo_shape_t *rs = el_result_shape(fusion, 0);
  bool stored = false;
  if (!st && EV % SG == 0 && (C == 2 || C == 4 || C == 8) && rs->element_type == HLO_F32 &&
      E->target->shader_int64 && !glsl_type_is_packed(E->target, HLO_F32) &&
      !glsl_type_is_demoted(E->target, HLO_F32)) {
    el_name_t e;
    el_fresh(E, "e", &e);
    el_line(E, d2, "int %s = lane * %lld;", e.s, (long long)C);
    for (int d = 0; d <= nb; d++) at[d] = row[d];
    at[nb + 1] = e;
    strbuf_init(&sb, E->allocator);
    strbuf_append(&sb, "(");
    el_append_linear(&sb, rs, at);
    strbuf_printf(&sb, ") >> %d] = %s(", C == 8 ? 3 : C == 4 ? 2 : 1,
                  C == 8 ? "u64vec4" : C == 4 ? "u64vec2" : "uint64_t");
    for (int64_t j = 0; j < C; j += 2)
      strbuf_printf(&sb, "%spackUint2x32(floatBitsToUint(vec2(%s, %s)))", j ? ", " : "", o[j].s, o[j + 1].s);
    strbuf_append(&sb, ");");
    if (sb.failed) st = VKHLO_NO_MEMORY();
    else el_line(E, d2, "out0w.data[%s", sb.data);
    strbuf_free(&sb);
    E->word_outputs = true;
    E->word_output_lanes = (int)C;
    E->features |= GLSL_FEATURE_INT64;
    stored = true;
  }
  for (int64_t j = 0; j < C && !st && !stored; j++) {
    el_name_t e;
    el_fresh(E, "e", &e);
    el_line(E, d2, "int %s = lane * %lld + %lld;", e.s, (long long)C, (long long)j);
    for (int d = 0; d <= nb; d++) at[d] = row[d];
    at[nb + 1] = e;
    if (EV % SG) {
      glsl_scope_t guard = el_open(E, d2, "if (%s < %lld) {", e.s, (long long)EV);
      codegen_store_result(E, fusion, 0, at, o[j].s);
      el_close(E, d2, guard);
    } else {
      codegen_store_result(E, fusion, 0, at, o[j].s);
    }
  }
  el_close(E, fusion, loop);
  E->features |= GLSL_FEATURE_SUBGROUP_SHUFFLE;
  vkhlo_free(E->allocator, kc);
  vkhlo_free(E->allocator, o);
  *out_total = batches * blocks * SG;
  return st;
}

/* In-place dynamic_update_slice root |dus| (E->dus_window): one
 * invocation per element of the update, which it writes at the window of
 * the result, whose storage already holds the operand. */
static vkhlo_status_t emit_dus_window(elemental_emitter_t *E, fusion_ctx_t *ctx, const hlo_instruction_t *dus,
                                      int64_t *out_total) {
  const hlo_shape_t *us = &dus->operands[1]->shape, *result = ctx->out_shape;
  el_name_t ui[HLO_MAX_RANK], oi[HLO_MAX_RANK], v;
  el_line(E, ctx->fusion, "int idx = int(gid);");
  el_delinearize(E, ctx->fusion, us, "idx", ui);
  /* the fused values are computed at the update's index: positions
   * relative to the "output" (append_position) are the update's */
  ctx->out_shape = us;
  ctx->out_index = ui;
  VKHLO_RETURN_IF_ERROR(el_dus_window(E, dus, ui, oi, &v));
  ctx->out_shape = result;
  ctx->out_index = NULL;
  strbuf_t ref;
  strbuf_init(&ref, E->allocator);
  el_append_linear(&ref, result, oi);
  if (ref.failed) E->body.failed = true;
  else el_line(E, dus, "int oidx = %s;", ref.data);
  strbuf_free(&ref);
  ctx->linear = "oidx";
  store_output(E, ctx, dus, 0, v.s);
  *out_total = hlo_shape_element_count(us);
  return NULL;
}

vkhlo_status_t codegen_emit_fusion(elemental_emitter_t *E, const hlo_instruction_t *fusion,
                                   int64_t *out_total) {
  if (fusion->called_count < 1 || !fusion->called_computations[0]->root)
    return el_unimplemented(fusion, "fusion without a fused computation");
  const hlo_computation_t *fc = fusion->called_computations[0];
  for (int i = 0; i < fc->instruction_count; i++)
    VKHLO_RETURN_IF_ERROR(codegen_check_element_types(E->target, fc->instructions[i]));
  const hlo_instruction_t *roots[EL_MAX_RESULTS];
  int nroots = fused_roots(fc, roots);
  int nout = el_result_count(fusion);
  const hlo_shape_t *s0 = el_result_shape(fusion, 0);
  for (int r = 1; r < nout; r++)
    if (!hlo_shape_compatible_dims(s0, el_result_shape(fusion, r)))
      return el_unimplemented(fusion, "fusion outputs of different shapes");
  int64_t total = hlo_shape_element_count(s0);

  fusion_ctx_t ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.fusion = fusion;
  ctx.out_shape = s0;
  ctx.linear = "idx";
  E->operand_value = fused_operand;
  E->operand_linear = fused_operand_linear;
  E->operand_run = fused_operand_run;
  E->reduce_row = fused_reduce_row;
  E->user = &ctx;

  vkhlo_status_t st;
  el_attention_t attention;
  bool window = E->dus_window; /* over the update only, in place (codegen_emit_dus_in_place) */
  bool attention_kernel = !window && nout == 1 && codegen_attention_fusion(E->target, fusion, &attention);
  bool row_kernel = !window && !attention_kernel && s0->rank >= 1 && has_row_reduce(fc, s0);
  if (!window && !row_kernel && !attention_kernel) ctx.wide = wide_lanes(E->target, fusion, fc, nout, total, &ctx.rows);
  if (window) {
    st = nout == 1 && fc->root->opcode == HLO_OPCODE_DYNAMIC_UPDATE_SLICE
             ? emit_dus_window(E, &ctx, fc->root, &total)
             : VKHLO_INTERNAL("fusion %s: an in-place kernel needs a dynamic_update_slice root", fusion->name);
  } else if (attention_kernel) {
    E->reduce_row = NULL;
    st = emit_attention(E, &ctx, &attention, &total);
  } else if (row_kernel) {
    int64_t C = s0->dimensions[s0->rank - 1], G = row_block(E->target, C, total / C);
    E->reduce_row = row_reduce_steps;
    st = emit_rows(E, &ctx, roots, nroots, nout, total, G);
    total /= G * C;
  } else if (ctx.wide) {
    st = emit_wide(E, &ctx, roots, nroots, nout, total);
    int64_t n = s0->dimensions[s0->rank - 1], rows = total / n;
    total = ctx.rows > 1 ? (rows + ctx.rows - 1) / ctx.rows * (n / ctx.wide) : total / ctx.wide;
  } else {
    el_name_t index[HLO_MAX_RANK];
    if (subgroup_fusion(E->target, fc, total)) {
      E->subgroup_reduce = true; /* codegen_assemble: a subgroup per element */
      E->features |= GLSL_FEATURE_SUBGROUP_SHUFFLE;
    }
    el_line(E, fusion, "int idx = int(gid);");
    el_delinearize(E, fusion, s0, "idx", index);
    ctx.out_index = index;
    st = emit_roots(E, &ctx, roots, nroots, nout);
  }
  for (int i = 0; i < ctx.memo_count; i++) vkhlo_free(E->allocator, ctx.memo[i].key);
  vkhlo_free(E->allocator, ctx.memo);
  vkhlo_free(E->allocator, ctx.memo_heads);
  vkhlo_free(E->allocator, ctx.memo_names);
  E->operand_value = codegen_load_operand;
  E->operand_linear = NULL;
  E->operand_run = NULL;
  E->reduce_row = NULL;
  E->user = NULL;
  if (st) return st;
  *out_total = total;
  return NULL;
}
