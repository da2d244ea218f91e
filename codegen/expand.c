/*
 * The expand pass: ops that have an exact decomposition into simpler
 * StableHLO are rewritten into it, so codegen only sees the core op set.
 *
 *   composite                    its decomposition, inlined
 *   batch_norm_inference/        the spec's decompositions (broadcast_in_dim,
 *   _training/_grad              elementwise ops, reduce over all dimensions
 *                                but feature_index)
 *   chlo.mulhi                   a widening multiply and a shift (<= 32 bits)
 *                                or a 32x32-bit schoolbook product (64 bits)
 *   chlo.ragged_dot              dot_general of every group, the group's own
 *                                part kept by select (see "ragged dot"),
 *                                unless the CPU GEMM kernel takes it
 *   chlo.scan                    a while loop over the scan dimension's
 *                                positions (see "scan")
 *   dynamic_broadcast_in_dim,    the static op: the result type is static,
 *   dynamic_iota, dynamic_reshape  so the shape operand only restates it
 *   dynamic_pad, dynamic_gather, the static op, when the operands holding
 *   dynamic_conv,                padding / slice sizes / bounds are constants
 *   real_dynamic_slice           (UNIMPLEMENTED otherwise)
 *   reduce of more than 32768    a chain of reduces of at most 8192 (see
 *   elements per result          "long reductions": another schedule the
 *                                spec allows, not an exact rewrite)
 *   reduce_window spanning a     blocks of 64 scanned, their totals scanned
 *   dimension of more than 256   and combined (see "prefix scans": JAX's
 *   (a prefix or suffix scan)    cumsum, cummax; integer and max/min
 *                                results exact, float sums reordered)
 *   reduce_window of more than   a reduce_window per group of window
 *   32768 elements per window    dimensions (see "large windows")
 *   sort, chlo.top_k of rows     merge passes (sort_runs; see "long
 *   longer than 1024             sorts"): the stable sort
 *   fft of more than 64 terms    one 1-D transform per dimension, long
 *   per element                  ones four-step Cooley-Tukey (see "fft":
 *                                another order of the same sums)
 *   convolution: lhs-dilated,    per output phase / stacked windows and
 *   wide-window (weight          one dot_general / per position a product
 *   gradients), depthwise        reduced over the window / per depth tap
 *   weight gradients, 3-D;       (see "wide-window convolutions" and the
 *   on CPU devices NHWC 1x1 and  sections after it) / a dot_general per
 *   small-window ones            tap, summed ("convolutions as products")
 *   entry parameters larger      a concatenate of views of their pieces
 *   than a binding               (see "arguments larger than a binding")
 *   scatter looping more than    a chain of scatters of consecutive chunks
 *   32768 times per invocation   of its positions (see "long scatters")
 *   select_and_scatter          select_window (each window's selection
 *                                once), then scatter_selected
 *   cholesky, triangular_solve   64 x 64 blocks of the op, triangular
 *   larger than 64 x 64          solves and dot_generals (see "blocked
 *                                linear algebra": the same sums in another
 *                                order)
 *   custom_call @Sharding,       its operand (see "sharding annotations":
 *   @SPMD*, @MoveTo*             one device), where the type is unchanged
 *   custom_call @lapack_?potrf_  cholesky, triangular_solve, the internal
 *   ffi, ?trsm, ?getrf, ?geqrf,  lu, qr, householder_product and eigh
 *   ?orgqr, ?syevd, cuSOLVER /   (see "solver custom calls": JAX's linear
 *   hipSOLVER potrf, getrf, ...  algebra exported for CPUs or GPUs)
 *   cu_lu_pivots_to_permutation
 *   dot_general, dot with few    split-K on GPUs: reduce of a dot_general
 *   result tiles and a long k    over S parts of k (see "split-K": another
 *                                order of the same sums)
 *   custom_call @ApproxTopK      the exact top k: a stable sort by its
 *                                comparator, sliced (see "long sorts")
 *   if, case whose branches are  every branch inlined and the results
 *   all small and cheap          picked by select (see "conditionals as
 *                                selects")
 *   get_dimension_size           a constant
 *   replica_id, partition_id     constant 0
 *   all_gather, all_reduce,      single-process semantics (vkhlo runs one
 *   all_to_all, reduce_scatter,  replica of one partition): every group has
 *   collective_broadcast,        exactly one member, so these return their
 *   collective_permute           operand; collective_broadcast and
 *                                collective_permute return zeros when process
 *                                0 receives nothing.  Programs written for
 *                                more processes (replica ids > 0 in
 *                                replica_groups, split_count > 1, a gathered
 *                                or scattered shape) are UNIMPLEMENTED.
 *
 * Mechanics: each computation's instruction list is rebuilt in order.  An
 * expanded instruction is replaced by the instructions of its expansion,
 * appended where it stood, and every later use of it is redirected to the
 * replacement (instr->scratch holds the replacement while the computation
 * is processed).  Ops with several results are replaced by a tuple of the
 * new values, so their get_tuple_element users keep working.  Helper
 * computations (the add bodies of reductions) are put in front of the
 * module's computation list, keeping callees before callers.
 *
 * Every other rewrite (all but the long reductions, the prefix scans, the
 * fft, the blocked linear algebra, split-K, large windows, arguments split
 * for their bindings and the wide-window, depthwise gradient and 3-D
 * convolutions, which sum in another order) is exact: the decompositions
 * are the spec's own, and the arithmetic happens in the op's element type
 * as the spec's pseudocode does.
 */
#include "codegen/passes.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/elemental.h"
#include "codegen/emit_internal.h"
#include "codegen/glsl_types.h"
#include "hlo/literal.h"
#include "support/status.h"

/* ------------------------------------------------------------ builder */

typedef struct expand_ctx {
  hlo_module_t *m;
  const codegen_target_t *target;
  hlo_computation_t *c;  /* computation being rebuilt */
  hlo_location_t loc;    /* of the instruction being expanded */
  bool failed;           /* out of memory */
  /* the second round: only values larger than a binding that the first
   * round's expansions made (codegen_expand_pass) */
  bool oversized_only;
  /* add bodies for reductions, one per element type */
  hlo_computation_t *add_body[HLO_ELEMENT_TYPE_COUNT];
  /* descending comparators for long chlo.top_k, one per element type */
  hlo_computation_t *greater_body[HLO_ELEMENT_TYPE_COUNT];
} expand_ctx_t;

static hlo_shape_t array_shape(hlo_element_type_t t, int rank, const int64_t *dims) {
  hlo_shape_t s;
  memset(&s, 0, sizeof s);
  hlo_shape_init(&s, t, rank, dims);
  return s;
}

static hlo_shape_t with_type(const hlo_shape_t *s, hlo_element_type_t t) {
  return array_shape(t, s->rank, s->dimensions);
}

/* Appends a new instruction to the computation being rebuilt. */
static hlo_instruction_t *emit(expand_ctx_t *x, hlo_opcode_t op, const hlo_shape_t *shape, int n,
                               hlo_instruction_t *const *operands) {
  if (x->failed) return NULL;
  for (int k = 0; k < n; k++)
    if (!operands[k]) return NULL;
  hlo_instruction_t *in = hlo_instruction_create(x->m, op, shape, n, operands);
  if (!in || !hlo_computation_append(x->m, x->c, in)) {
    x->failed = true;
    return NULL;
  }
  in->loc = x->loc;
  return in;
}

static hlo_instruction_t *unary(expand_ctx_t *x, hlo_opcode_t op, hlo_instruction_t *a) {
  if (!a) return NULL;
  return emit(x, op, &a->shape, 1, &a);
}

static hlo_instruction_t *binary(expand_ctx_t *x, hlo_opcode_t op, hlo_instruction_t *a,
                                 hlo_instruction_t *b) {
  if (!a || !b) return NULL;
  hlo_instruction_t *ops[2] = {a, b};
  return emit(x, op, &a->shape, 2, ops);
}

static hlo_instruction_t *convert(expand_ctx_t *x, hlo_instruction_t *a, hlo_element_type_t t) {
  if (!a) return NULL;
  hlo_shape_t s = with_type(&a->shape, t);
  return emit(x, HLO_OPCODE_CONVERT, &s, 1, &a);
}

/* compare(a, b, direction) with the compare type derived from the operands. */
static hlo_instruction_t *compare(expand_ctx_t *x, hlo_instruction_t *a, hlo_instruction_t *b,
                                  hlo_comparison_direction_t dir) {
  if (!a || !b) return NULL;
  hlo_shape_t s = with_type(&a->shape, HLO_PRED);
  hlo_instruction_t *ops[2] = {a, b};
  hlo_instruction_t *in = emit(x, HLO_OPCODE_COMPARE, &s, 2, ops);
  if (in) {
    in->attrs.comparison_direction = dir;
    hlo_element_type_t t = a->shape.element_type;
    in->attrs.compare_type = hlo_element_type_is_float(t) ? HLO_CMP_TYPE_FLOAT
                             : hlo_element_type_is_signed_int(t) ? HLO_CMP_TYPE_SIGNED
                                                                 : HLO_CMP_TYPE_UNSIGNED;
  }
  return in;
}

static hlo_instruction_t *select_(expand_ctx_t *x, hlo_instruction_t *p, hlo_instruction_t *a,
                                  hlo_instruction_t *b) {
  if (!p || !a || !b) return NULL;
  hlo_instruction_t *ops[3] = {p, a, b};
  return emit(x, HLO_OPCODE_SELECT, &a->shape, 3, ops);
}

/* iota along |dim| of shape |s| */
static hlo_instruction_t *iota(expand_ctx_t *x, const hlo_shape_t *s, int64_t dim) {
  hlo_instruction_t *in = emit(x, HLO_OPCODE_IOTA, s, 0, NULL);
  if (in) in->attrs.dimension = dim;
  return in;
}

/* broadcast_in_dim(a, dims) -> |shape| */
static hlo_instruction_t *broadcast(expand_ctx_t *x, hlo_instruction_t *a, const hlo_shape_t *shape,
                                   int ndims, const int64_t *dims) {
  if (!a) return NULL;
  hlo_instruction_t *in = emit(x, HLO_OPCODE_BROADCAST_IN_DIM, shape, 1, &a);
  if (in && ndims) {
    in->attrs.broadcast_dimensions = hlo_dims_make(x->m, dims, ndims);
    if (!in->attrs.broadcast_dimensions.data) x->failed = true;
  }
  return in;
}

/* A scalar constant of type |t| (|value| for floats and complex real
 * parts, |ivalue| for integers and i1). */
static hlo_instruction_t *scalar(expand_ctx_t *x, hlo_element_type_t t, double value,
                                 uint64_t ivalue) {
  if (x->failed) return NULL;
  hlo_literal_t *lit = arena_alloc(&x->m->arena, sizeof *lit);
  size_t size = hlo_element_type_size_bytes(t);
  unsigned char *data = arena_alloc(&x->m->arena, size ? size : 1);
  if (!lit || !data) {
    x->failed = true;
    return NULL;
  }
  memset(data, 0, size);
  if (hlo_element_type_is_complex(t)) {
    if (t == HLO_C64) {
      float f = (float)value;
      memcpy(data, &f, sizeof f);
    } else {
      memcpy(data, &value, sizeof value);
    }
  } else if (hlo_element_type_is_float(t)) {
    uint64_t bits = 0;
    hlo_float_encode(t, value, &bits);
    memcpy(data, &bits, size); /* little-endian: the low bytes */
  } else {
    memcpy(data, &ivalue, size);
  }
  lit->shape = array_shape(t, 0, NULL);
  lit->data = data;
  lit->size_bytes = size;
  hlo_instruction_t *in = emit(x, HLO_OPCODE_CONSTANT, &lit->shape, 0, NULL);
  if (in) in->literal = lit;
  return in;
}

/* |value| broadcast to |shape| (same element type as |shape|). */
static hlo_instruction_t *splat(expand_ctx_t *x, const hlo_shape_t *shape, double value,
                                uint64_t ivalue) {
  hlo_instruction_t *s = scalar(x, shape->element_type, value, ivalue);
  if (shape->rank == 0) return s;
  return broadcast(x, s, shape, 0, NULL);
}

/* The value of |key| in the backend_config dictionary "{k = v : type, ...}"
 * (an integer, or true / false as 1 / 0); false when absent. */
static bool config_value(const hlo_instruction_t *in, const char *key, int64_t *out) {
  const char *c = in->attrs.backend_config;
  size_t len = strlen(key);
  for (const char *p = c ? strstr(c, key) : NULL; p; p = strstr(p + 1, key)) {
    if (p > c && (isalnum((unsigned char)p[-1]) || p[-1] == '_')) continue;
    const char *v = p + len;
    while (*v == ' ') v++;
    if (*v != '=') continue;
    for (v++; *v == ' '; v++) {}
    if (strncmp(v, "true", 4) == 0) *out = 1;
    else if (strncmp(v, "false", 5) == 0) *out = 0;
    else if (isdigit((unsigned char)*v) || *v == '-') *out = strtoll(v, NULL, 10);
    else return false;
    return true;
  }
  return false;
}

static hlo_dims_t dims_of(expand_ctx_t *x, const int64_t *v, int n) {
  hlo_dims_t d = hlo_dims_make(x->m, v, n);
  if (n && !d.data) x->failed = true;
  return d;
}

/* slice(a, start, limit, strides) (|step| NULL: steps of 1); |a| itself
 * when that is all of it. */
static hlo_instruction_t *slice_steps(expand_ctx_t *x, hlo_instruction_t *a, const int64_t *start,
                                      const int64_t *limit, const int64_t *step) {
  if (!a) return NULL;
  int r = a->shape.rank;
  int64_t dims[HLO_MAX_RANK], steps[HLO_MAX_RANK];
  bool all = true;
  for (int d = 0; d < r; d++) {
    steps[d] = step ? step[d] : 1;
    dims[d] = (limit[d] - start[d] + steps[d] - 1) / steps[d];
    all = all && dims[d] == a->shape.dimensions[d];
  }
  if (all) return a;
  hlo_shape_t s = array_shape(a->shape.element_type, r, dims);
  hlo_instruction_t *in = emit(x, HLO_OPCODE_SLICE, &s, 1, &a);
  if (!in) return NULL;
  in->attrs.start_indices = dims_of(x, start, r);
  in->attrs.limit_indices = dims_of(x, limit, r);
  in->attrs.strides = dims_of(x, steps, r);
  return in;
}

static hlo_instruction_t *slice_(expand_ctx_t *x, hlo_instruction_t *a, const int64_t *start, const int64_t *limit) {
  return slice_steps(x, a, start, limit, NULL);
}

/* a[start:limit] along dimension |d|, all of the others. */
static hlo_instruction_t *slice_dim(expand_ctx_t *x, hlo_instruction_t *a, int d, int64_t start, int64_t limit) {
  if (!a) return NULL;
  int64_t lo[HLO_MAX_RANK] = {0}, hi[HLO_MAX_RANK];
  for (int i = 0; i < a->shape.rank; i++) hi[i] = a->shape.dimensions[i];
  lo[d] = start, hi[d] = limit;
  return slice_(x, a, lo, hi);
}

/* a padded with |low[d]| and |high[d]| copies of the scalar |value| before
 * and after each dimension d (no interior padding). */
static hlo_instruction_t *pad_(expand_ctx_t *x, hlo_instruction_t *a, const int64_t *low, const int64_t *high,
                               hlo_instruction_t *value) {
  if (!a || !value) return NULL;
  int r = a->shape.rank;
  int64_t none[HLO_MAX_RANK] = {0};
  hlo_shape_t s = a->shape;
  for (int d = 0; d < r; d++) s.dimensions[d] += low[d] + high[d];
  s = array_shape(s.element_type, r, s.dimensions);
  hlo_instruction_t *ops[2] = {a, value};
  hlo_instruction_t *in = emit(x, HLO_OPCODE_PAD, &s, 2, ops);
  if (!in) return NULL;
  in->attrs.edge_padding_low = dims_of(x, low, r);
  in->attrs.edge_padding_high = dims_of(x, high, r);
  in->attrs.interior_padding = dims_of(x, none, r);
  return in;
}

/* a padded along dimension |d| only (|a| itself when by nothing). */
static hlo_instruction_t *pad_dim(expand_ctx_t *x, hlo_instruction_t *a, int d, int64_t low, int64_t high,
                                  hlo_instruction_t *value) {
  if (low == 0 && high == 0) return a;
  int64_t lo[HLO_MAX_RANK] = {0}, hi[HLO_MAX_RANK] = {0};
  lo[d] = low, hi[d] = high;
  return pad_(x, a, lo, hi, value);
}

/* transpose(a, permutation = perm): result dimension i is a's perm[i]. */
static hlo_instruction_t *permute(expand_ctx_t *x, hlo_instruction_t *a, const int64_t *perm) {
  if (!a) return NULL;
  int r = a->shape.rank;
  int64_t dims[HLO_MAX_RANK];
  for (int i = 0; i < r; i++) dims[i] = a->shape.dimensions[perm[i]];
  hlo_shape_t s = array_shape(a->shape.element_type, r, dims);
  hlo_instruction_t *in = emit(x, HLO_OPCODE_TRANSPOSE, &s, 1, &a);
  if (in) in->attrs.permutation = dims_of(x, perm, r);
  return in;
}

/* a with dimensions |d0| and |d1| swapped (a transpose, its own inverse). */
static hlo_instruction_t *swap_dims(expand_ctx_t *x, hlo_instruction_t *a, int d0, int d1) {
  if (!a || d0 == d1) return a;
  int64_t perm[HLO_MAX_RANK];
  for (int i = 0; i < a->shape.rank; i++) perm[i] = i;
  perm[d0] = d1, perm[d1] = d0;
  return permute(x, a, perm);
}

static hlo_instruction_t *reshape_to(expand_ctx_t *x, hlo_instruction_t *a, int rank, const int64_t *dims) {
  if (!a) return NULL;
  hlo_shape_t s = array_shape(a->shape.element_type, rank, dims);
  return emit(x, HLO_OPCODE_RESHAPE, &s, 1, &a);
}

/* The tuple shape of |values| into *s; false when one is missing or out
 * of memory. */
static bool tuple_shape(expand_ctx_t *x, int n, hlo_instruction_t *const *values, hlo_shape_t *s) {
  if (x->failed) return false;
  hlo_shape_t *elems = arena_alloc(&x->m->arena, sizeof *elems * (size_t)(n ? n : 1));
  if (!elems) {
    x->failed = true;
    return false;
  }
  for (int i = 0; i < n; i++) {
    if (!values[i]) return false;
    elems[i] = values[i]->shape;
  }
  if (!hlo_shape_make_tuple(x->m, s, n, elems)) {
    x->failed = true;
    return false;
  }
  return true;
}

static hlo_instruction_t *tuple(expand_ctx_t *x, int n, hlo_instruction_t *const *values) {
  hlo_shape_t s;
  return tuple_shape(x, n, values, &s) ? emit(x, HLO_OPCODE_TUPLE, &s, n, values) : NULL;
}

/* A helper computation |name| with parameters of shapes |shapes| (into
 * |params|) and no root yet, placed first in the module (callees before
 * callers); NULL when out of memory. */
static hlo_computation_t *helper_computation(expand_ctx_t *x, const char *name, int count,
                                             const hlo_shape_t *shapes, hlo_instruction_t **params) {
  hlo_module_t *m = x->m;
  hlo_computation_t *c = hlo_computation_create(m, name);
  if (!c) return NULL;
  c->loc = x->loc;
  for (int i = 0; i < count; i++) {
    params[i] = hlo_instruction_create(m, HLO_OPCODE_PARAMETER, &shapes[i], 0, NULL);
    if (!params[i]) return NULL;
    params[i]->parameter_number = i;
    params[i]->loc = x->loc;
    if (!hlo_computation_append(m, c, params[i])) return NULL;
  }
  if (!hlo_module_add_computation(m, c)) return NULL;
  memmove(m->computations + 1, m->computations, sizeof(void *) * (size_t)(m->computation_count - 1));
  m->computations[0] = c;
  return c;
}

/* A helper computation |name| of parameters of types |types| (scalars, at
 * most 4) whose root is |op| of the first two, of type |result|; NULL when
 * out of memory. */
static hlo_computation_t *scalar_body(expand_ctx_t *x, const char *name, int count,
                                      const hlo_element_type_t *types, hlo_opcode_t op,
                                      hlo_element_type_t result, hlo_instruction_t **out_root) {
  hlo_shape_t shapes[4];
  hlo_instruction_t *p[4];
  for (int i = 0; i < count; i++) shapes[i] = array_shape(types[i], 0, NULL);
  hlo_computation_t *c = helper_computation(x, name, count, shapes, p);
  if (!c) return NULL;
  hlo_shape_t rs = array_shape(result, 0, NULL);
  hlo_instruction_t *root = hlo_instruction_create(x->m, op, &rs, 2, p);
  if (!root || !hlo_computation_append(x->m, c, root)) return NULL;
  root->loc = x->loc;
  c->root = root;
  *out_root = root;
  return c;
}

/* The scalar add computation for reductions of type |t|, created once. */
static hlo_computation_t *add_body(expand_ctx_t *x, hlo_element_type_t t) {
  if (x->add_body[t]) return x->add_body[t];
  char name[64];
  snprintf(name, sizeof name, "expand_add_%s", hlo_element_type_name(t));
  hlo_element_type_t types[2] = {t, t};
  hlo_instruction_t *root;
  x->add_body[t] = scalar_body(x, name, 2, types, HLO_OPCODE_ADD, t, &root);
  return x->add_body[t];
}

/* reduce(a, 0, dimensions = |dims| (ascending), add). */
static hlo_instruction_t *sum_over(expand_ctx_t *x, hlo_instruction_t *a, int n, const int64_t *dims) {
  if (!a) return NULL;
  hlo_element_type_t t = a->shape.element_type;
  hlo_computation_t *body = add_body(x, t);
  if (!body) {
    x->failed = true;
    return NULL;
  }
  int64_t kept[HLO_MAX_RANK];
  int rank = 0;
  for (int d = 0, i = 0; d < a->shape.rank; d++) {
    if (i < n && dims[i] == d) i++;
    else kept[rank++] = a->shape.dimensions[d];
  }
  hlo_shape_t s = array_shape(t, rank, kept);
  hlo_instruction_t *ops[2] = {a, scalar(x, t, 0, 0)};
  hlo_instruction_t *in = emit(x, HLO_OPCODE_REDUCE, &s, 2, ops);
  if (!in) return NULL;
  in->attrs.dimensions = hlo_dims_make(x->m, dims, n);
  if ((n && !in->attrs.dimensions.data) || !hlo_instruction_set_called(x->m, in, 1, &body)) {
    x->failed = true;
    return NULL;
  }
  return in;
}

/* reduce(a, 0, dimensions = all but |keep|, add): the per-feature sums. */
static hlo_instruction_t *sum_except(expand_ctx_t *x, hlo_instruction_t *a, int64_t keep) {
  if (!a) return NULL;
  int64_t dims[HLO_MAX_RANK];
  int n = 0;
  for (int d = 0; d < a->shape.rank; d++)
    if (d != keep) dims[n++] = d;
  return sum_over(x, a, n, dims);
}

/* ---------------------------------------------------- long reductions */

/* A reduce whose results each combine more than REDUCE_SPLIT_ABOVE
 * elements becomes a chain of reduces of at most REDUCE_SPLIT_MAX each:
 * reduced dimensions longer than that are reshaped into factors of at most
 * REDUCE_SPLIT_MAX (padded at the end with the init values where no exact
 * factors are near), and the reduced dimensions are reduced in groups from
 * the innermost outwards.  The spec ('reduce') leaves the schedule to the
 * implementation: any tree whose in-order traversal is the elements in
 * ascending index order, with any number of init values interspersed.
 * Reducing the inner group first keeps that order, so the result is one
 * of the spec's results, though not the same rounding as one serial loop.
 *
 * Why: a kernel computes each result with one invocation's loop, so a long
 * reduction is one invocation's serial work (a 16M-element sum: one thread
 * of a GPU), and lavapipe ends every invocation's loops after 65535
 * iterations in all (gallivm's loop limiter), which cut such sums short.
 * Split, the first reduce has P results per original result computed in
 * parallel, and no loop runs more than REDUCE_SPLIT_MAX times.
 *
 * The same rewrite on every device, fused or not: results do not depend on
 * the device or on --no-fusion.  Up to 32768 elements stay one reduce:
 * that fits lavapipe's loop limit with room for a kernel's other loops,
 * and a split costs a second dispatch (64 row sums of 50000, which the
 * fused kernel's 64-bit word loop could still do in one: 0.7 -> 1.1 ms
 * on lavapipe). */
#define REDUCE_SPLIT_ABOVE 32768
#define REDUCE_SPLIT_MAX 8192

static int64_t reduce_extent(const hlo_instruction_t *in) {
  const hlo_shape_t *s = &in->operands[0]->shape;
  int64_t r = 1;
  for (int i = 0; i < in->attrs.dimensions.count; i++) r *= s->dimensions[in->attrs.dimensions.data[i]];
  return r;
}

static bool is_long_reduce(const hlo_instruction_t *in) {
  return in->opcode == HLO_OPCODE_REDUCE && in->operand_count >= 2 && in->operand_count % 2 == 0 &&
         in->called_count == 1 && reduce_extent(in) > REDUCE_SPLIT_ABOVE;
}

/* The factors (outermost first) of a reduced dimension of size |s|, each at
 * most REDUCE_SPLIT_MAX, their product at least |s|; returns their count,
 * 0 when more than |max| are needed.  Each split takes p = ceil(s / MAX)
 * rows, or the first p below 2 ceil(s / MAX) that divides s (no padding). */
static int split_factors(int64_t s, int64_t *f, int max) {
  int64_t inner[HLO_MAX_RANK];
  int n = 0;
  while (s > REDUCE_SPLIT_MAX) {
    if (n + 1 >= max) return 0;
    int64_t p = (s + REDUCE_SPLIT_MAX - 1) / REDUCE_SPLIT_MAX;
    for (int64_t q = p; q < 2 * p; q++)
      if (s % q == 0) {
        p = q;
        break;
      }
    inner[n++] = (s + p - 1) / p;
    s = p;
  }
  f[0] = s;
  for (int i = 0; i < n; i++) f[1 + i] = inner[n - 1 - i];
  return n + 1;
}

/* get_tuple_element(t, i) */
static hlo_instruction_t *tuple_element(expand_ctx_t *x, hlo_instruction_t *t, int i) {
  if (!t) return NULL;
  hlo_instruction_t *in = emit(x, HLO_OPCODE_GET_TUPLE_ELEMENT, &t->shape.tuple_shapes[i], 1, &t);
  if (in) in->attrs.index = i;
  return in;
}

/* |in| itself, back in its place: not expanded after all. */
static hlo_instruction_t *keep(expand_ctx_t *x, hlo_instruction_t *in) {
  if (!x->failed && !hlo_computation_append(x->m, x->c, in)) x->failed = true;
  return x->failed ? NULL : in;
}

/* The chain of reduces replacing |in| (see above); |in| itself (kept) when
 * it cannot be split: the factors exceed the rank limit, or padding is
 * needed where an input's element type differs from its init's. */
static hlo_instruction_t *split_reduce(expand_ctx_t *x, hlo_instruction_t *in) {
  int n = in->operand_count / 2;
  const hlo_shape_t *s = &in->operands[0]->shape;
  int64_t dims[HLO_MAX_RANK], padded[HLO_MAX_RANK];
  bool reduced[HLO_MAX_RANK], pad = false;
  int rank = 0;
  for (int d = 0; d < s->rank; d++) {
    bool r = hlo_dims_contains(in->attrs.dimensions, d);
    int64_t f[HLO_MAX_RANK];
    int k = r ? split_factors(s->dimensions[d], f, HLO_MAX_RANK - rank - (s->rank - 1 - d)) : 1;
    if (!r) f[0] = s->dimensions[d];
    if (k == 0) return keep(x, in);
    padded[d] = 1;
    for (int i = 0; i < k; i++) {
      padded[d] *= f[i];
      dims[rank] = f[i];
      reduced[rank++] = r;
    }
    pad |= padded[d] != s->dimensions[d];
  }
  for (int k = 0; pad && k < n; k++)
    if (in->operands[k]->shape.element_type != in->operands[n + k]->shape.element_type) return keep(x, in);

  hlo_instruction_t *cur[EL_MAX_RESULTS];
  if (n > EL_MAX_RESULTS) return keep(x, in);
  int64_t zero[HLO_MAX_RANK] = {0}, high[HLO_MAX_RANK];
  for (int d = 0; d < s->rank; d++) high[d] = padded[d] - s->dimensions[d];
  for (int k = 0; k < n; k++) {
    hlo_instruction_t *v = in->operands[k];
    if (pad) v = pad_(x, v, zero, high, in->operands[n + k]);
    cur[k] = rank == s->rank ? v : reshape_to(x, v, rank, dims);
  }
  /* groups of reduced dimensions from the innermost: removing a group
   * leaves the numbering of the dimensions before it unchanged */
  hlo_computation_t *body = in->called_computations[0];
  int hi = rank;
  int64_t cur_dims[HLO_MAX_RANK];
  int cur_rank = rank;
  memcpy(cur_dims, dims, sizeof dims);
  hlo_instruction_t *result = NULL;
  while (!x->failed) {
    int64_t group[HLO_MAX_RANK], size = 1;
    int g = 0;
    int d = hi - 1;
    for (; d >= 0; d--) {
      if (!reduced[d]) continue;
      if (g && size * dims[d] > REDUCE_SPLIT_MAX) break;
      size *= dims[d];
      group[g++] = d;
    }
    hi = d + 1;
    bool last = true;
    for (int e = 0; e < hi; e++) last &= !reduced[e];
    /* the group in ascending order; its dimensions leave the shape */
    int64_t sorted[HLO_MAX_RANK], out_dims[HLO_MAX_RANK];
    for (int i = 0; i < g; i++) sorted[i] = group[g - 1 - i];
    int out_rank = 0;
    for (int e = 0; e < cur_rank; e++)
      if (!hlo_dims_contains((hlo_dims_t){.data = sorted, .count = g}, e)) out_dims[out_rank++] = cur_dims[e];
    hlo_shape_t rs[EL_MAX_RESULTS];
    for (int k = 0; k < n; k++) rs[k] = array_shape(in->operands[n + k]->shape.element_type, out_rank, out_dims);
    hlo_shape_t shape = rs[0];
    if (last) shape = in->shape;
    else if (n > 1 && !hlo_shape_make_tuple(x->m, &shape, n, rs)) x->failed = true;
    hlo_instruction_t *ops[2 * EL_MAX_RESULTS];
    for (int k = 0; k < n; k++) {
      ops[k] = cur[k];
      ops[n + k] = in->operands[n + k];
    }
    hlo_instruction_t *r = emit(x, HLO_OPCODE_REDUCE, &shape, 2 * n, ops);
    if (!r) break;
    r->attrs.dimensions = hlo_dims_make(x->m, sorted, g);
    if (!r->attrs.dimensions.data || !hlo_instruction_set_called(x->m, r, 1, &body)) x->failed = true;
    if (last) {
      result = r;
      break;
    }
    for (int k = 0; k < n; k++) cur[k] = n > 1 ? tuple_element(x, r, k) : r;
    memcpy(cur_dims, out_dims, sizeof out_dims);
    cur_rank = out_rank;
  }
  return x->failed ? NULL : result;
}

/* ------------------------------------------------------------ prefix scans */

/*
 * A reduce_window whose window spans one whole dimension, padded by n - 1
 * in front (behind), is an inclusive prefix (suffix) scan: JAX's cumsum,
 * cumprod, cummax and cummin on CPUs and GPUs.  One invocation per result
 * element walks its window, n / 2 steps on average (n^2 / 2 per row; on
 * lavapipe windows past 65535 are refused).  Past SCAN_DIRECT elements it
 * runs blocked: the dimension padded to SCAN_BLOCK-element blocks
 * (reshaped [.., blocks, SCAN_BLOCK, ..]), each block scanned on its own
 * (a reduce_window of SCAN_BLOCK), the blocks' totals scanned (the same
 * way, recursively), shifted by one block (exclusive) and combined with
 * every element of the next block by the body's op: about
 * SCAN_BLOCK / 2 + 2 steps per element.  A suffix scan is the prefix scan
 * of the reversed dimension, reversed.
 *
 * Only where that is the same computation: the body one of add, multiply,
 * maximum, minimum, and, or of its two parameters, and the init value that
 * op's identity (0, 1, -inf / the type's lowest, +inf / its highest, all
 * ones, 0), so the padding and the extra combines change nothing.
 * Integer results are exactly the same; float sums and products are
 * summed in another order (a schedule the spec leaves to the
 * implementation, as for long reductions), maximum and minimum exact.
 */
#define SCAN_BLOCK 64
#define SCAN_DIRECT 256

/* The op of a body "return op(p0, p1)" (either order), or HLO_OPCODE_COUNT. */
static hlo_opcode_t scan_op(const hlo_computation_t *c) {
  const hlo_instruction_t *r = c->root;
  if (c->parameter_count != 2 || !r || r->operand_count != 2) return HLO_OPCODE_COUNT;
  const hlo_instruction_t *p0 = c->parameters[0], *p1 = c->parameters[1];
  if (!((r->operands[0] == p0 && r->operands[1] == p1) || (r->operands[0] == p1 && r->operands[1] == p0)))
    return HLO_OPCODE_COUNT;
  switch (r->opcode) {
    case HLO_OPCODE_ADD: case HLO_OPCODE_MULTIPLY: case HLO_OPCODE_MAXIMUM: case HLO_OPCODE_MINIMUM:
    case HLO_OPCODE_AND: case HLO_OPCODE_OR: return r->opcode;
    default: return HLO_OPCODE_COUNT;
  }
}

/* Whether scalar constant |c| is the identity of |op| on its type. */
static bool is_identity(const hlo_instruction_t *c, hlo_opcode_t op) {
  hlo_element_type_t t = c->shape.element_type;
  if (c->opcode != HLO_OPCODE_CONSTANT || !c->literal || c->shape.rank != 0) return false;
  if (hlo_element_type_is_float(t)) {
    uint64_t bits = 0;
    memcpy(&bits, c->literal->data, hlo_element_type_size_bytes(t));
    double v = hlo_float_decode(t, bits);
    switch (op) {
      case HLO_OPCODE_ADD: return v == 0;
      case HLO_OPCODE_MULTIPLY: return v == 1;
      case HLO_OPCODE_MAXIMUM: return v == -INFINITY;
      case HLO_OPCODE_MINIMUM: return v == INFINITY;
      default: return false;
    }
  }
  bool pred = t == HLO_PRED;
  if (!pred && !hlo_element_type_is_integer(t)) return false;
  int bits = pred ? 1 : hlo_element_type_bit_width(t);
  uint64_t u = 0, mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
  memcpy(&u, c->literal->data, hlo_element_type_size_bytes(t));
  u &= mask;
  uint64_t sign = hlo_element_type_is_signed_int(t) ? 1ull << (bits - 1) : 0;
  switch (op) {
    case HLO_OPCODE_ADD: return !pred && u == 0;
    case HLO_OPCODE_MULTIPLY: return !pred && u == 1;
    case HLO_OPCODE_MAXIMUM: return u == sign;                 /* the lowest value */
    case HLO_OPCODE_MINIMUM: return u == (mask ^ sign);        /* the highest */
    case HLO_OPCODE_AND: return u == mask;
    case HLO_OPCODE_OR: return u == 0;
    default: return false;
  }
}

static int64_t dim_or(hlo_dims_t d, int i, int64_t dflt) { return i < d.count ? d.data[i] : dflt; }

/* The dimension a long prefix (*reverse: suffix) scan runs along, or -1. */
static int scan_dimension(const hlo_instruction_t *in, bool *reverse) {
  if (in->opcode != HLO_OPCODE_REDUCE_WINDOW || in->operand_count != 2 || in->called_count != 1 ||
      hlo_shape_is_tuple(&in->shape))
    return -1;
  const hlo_shape_t *s = &in->operands[0]->shape;
  const hlo_attrs_t *a = &in->attrs;
  if (s->rank >= HLO_MAX_RANK || a->window_dimensions.count != s->rank) return -1;
  int dim = -1;
  for (int d = 0; d < s->rank; d++) {
    int64_t w = a->window_dimensions.data[d], lo = dim_or(a->padding, 2 * d, 0), hi = dim_or(a->padding, 2 * d + 1, 0);
    if (dim_or(a->window_strides, d, 1) != 1 || dim_or(a->base_dilations, d, 1) != 1 ||
        dim_or(a->window_dilations, d, 1) != 1)
      return -1;
    if (w == 1 && lo == 0 && hi == 0) continue;
    int64_t n = s->dimensions[d];
    if (dim >= 0 || w != n || n <= SCAN_DIRECT || !((lo == n - 1 && hi == 0) || (lo == 0 && hi == n - 1))) return -1;
    dim = d;
    *reverse = hi != 0;
  }
  hlo_opcode_t op = scan_op(in->called_computations[0]);
  if (dim < 0 || op == HLO_OPCODE_COUNT || !is_identity(in->operands[1], op)) return -1;
  return dim;
}

/* reduce_window(a, init) with body |body| over all of dimension |d| padded
 * by its length - 1 in front: the direct inclusive prefix scan. */
static hlo_instruction_t *direct_scan(expand_ctx_t *x, hlo_instruction_t *a, int d, hlo_instruction_t *init,
                                      hlo_computation_t *body) {
  if (!a || !init) return NULL;
  if (!body) { /* add_body out of memory */
    x->failed = true;
    return NULL;
  }
  hlo_instruction_t *ops[2] = {a, init};
  hlo_instruction_t *in = emit(x, HLO_OPCODE_REDUCE_WINDOW, &a->shape, 2, ops);
  if (!in) return NULL;
  int rank = a->shape.rank;
  int64_t window[HLO_MAX_RANK], ones[HLO_MAX_RANK], padding[2 * HLO_MAX_RANK];
  for (int i = 0; i < rank; i++) {
    window[i] = i == d ? a->shape.dimensions[i] : 1;
    ones[i] = 1;
    padding[2 * i] = i == d ? a->shape.dimensions[i] - 1 : 0;
    padding[2 * i + 1] = 0;
  }
  hlo_attrs_t *at = &in->attrs;
  at->window_dimensions = dims_of(x, window, rank);
  at->window_strides = at->base_dilations = at->window_dilations = dims_of(x, ones, rank);
  at->padding = dims_of(x, padding, 2 * rank);
  if (!hlo_instruction_set_called(x->m, in, 1, &body)) x->failed = true;
  return in;
}

/* The inclusive prefix scan of |a| along |d| by |op| (body |body|, whose
 * identity is |init|), blocked past SCAN_DIRECT elements. */
static hlo_instruction_t *prefix_scan(expand_ctx_t *x, hlo_instruction_t *a, int d, hlo_opcode_t op,
                                      hlo_instruction_t *init, hlo_computation_t *body) {
  if (!a) return NULL;
  int64_t n = a->shape.dimensions[d];
  int rank = a->shape.rank;
  if (n <= SCAN_DIRECT || rank >= HLO_MAX_RANK) return direct_scan(x, a, d, init, body);
  int64_t nb = (n + SCAN_BLOCK - 1) / SCAN_BLOCK, split[HLO_MAX_RANK], totals[HLO_MAX_RANK];
  for (int i = 0, j = 0; i < rank; i++) {
    totals[i] = a->shape.dimensions[i];
    if (i == d) split[j++] = nb, split[j++] = SCAN_BLOCK, totals[i] = nb;
    else split[j++] = a->shape.dimensions[i];
  }
  /* [.., nb, SCAN_BLOCK, ..], each block scanned */
  hlo_instruction_t *blocks = reshape_to(x, pad_dim(x, a, d, 0, nb * SCAN_BLOCK - n, init), rank + 1, split);
  hlo_instruction_t *local = direct_scan(x, blocks, d + 1, init, body);
  /* every block's total, scanned, shifted one block down: the combined
   * value of all blocks before each */
  hlo_instruction_t *last = reshape_to(x, slice_dim(x, local, d + 1, SCAN_BLOCK - 1, SCAN_BLOCK), rank, totals);
  hlo_instruction_t *before = slice_dim(x, pad_dim(x, prefix_scan(x, last, d, op, init, body), d, 1, 0, init), d, 0, nb);
  int64_t map[HLO_MAX_RANK];
  for (int i = 0; i < rank; i++) map[i] = i <= d ? i : i + 1;
  hlo_instruction_t *carry = before ? broadcast(x, before, &blocks->shape, rank, map) : NULL;
  hlo_instruction_t *sum = binary(x, op, carry, local);
  hlo_shape_t ps = a->shape;
  ps.dimensions[d] = nb * SCAN_BLOCK;
  return slice_dim(x, reshape_to(x, sum, rank, ps.dimensions), d, 0, n);
}

static hlo_instruction_t *reverse_dim(expand_ctx_t *x, hlo_instruction_t *a, int64_t d) {
  hlo_instruction_t *in = unary(x, HLO_OPCODE_REVERSE, a);
  if (in) in->attrs.dimensions = dims_of(x, &d, 1);
  return in;
}

static hlo_instruction_t *expand_scan_window(expand_ctx_t *x, hlo_instruction_t *in) {
  bool reverse = false;
  int d = scan_dimension(in, &reverse);
  hlo_computation_t *body = in->called_computations[0];
  hlo_opcode_t op = scan_op(body);
  hlo_instruction_t *a = in->operands[0];
  if (reverse) a = reverse_dim(x, a, d);
  hlo_instruction_t *r = prefix_scan(x, a, d, op, in->operands[1], body);
  return reverse ? reverse_dim(x, r, d) : r;
}

/* ---------------------------------------------------------- large windows */

/* A reduce_window whose window holds more than REDUCE_SPLIT_ABOVE
 * elements (global pooling written as a window, 256 x 256) loops that
 * often per result (lavapipe refuses past 65535 per invocation).  Where
 * its body is one of the scans' ops with that op's identity as init (so
 * padding and regrouping change nothing), the window is separable: a
 * reduce_window per group of window dimensions, in order, each with their
 * windows, strides and padding and 1 elsewhere, each group at most
 * REDUCE_SPLIT_MAX elements; a dimension whose window alone is larger and
 * equals its stride, unpadded, goes in two stages of factors a x b
 * (window and stride a, then b: the same blocks).  Single operand, no
 * dilations.  Maximum and minimum exact; sums in another order (as for
 * long reductions). */
typedef struct window_stage {
  int dim;
  int64_t w, s, lo, hi;
} window_stage_t;

/* The stages of |in| (at most 2 per dimension) into st[], their count, or
 * 0 when |in| is not split. */
static int window_stages(const hlo_instruction_t *in, window_stage_t *st) {
  bool reverse;
  if (in->opcode != HLO_OPCODE_REDUCE_WINDOW || in->operand_count != 2 || in->called_count != 1 ||
      hlo_shape_is_tuple(&in->shape) || scan_dimension(in, &reverse) >= 0)
    return 0;
  const hlo_shape_t *s = &in->operands[0]->shape;
  const hlo_attrs_t *a = &in->attrs;
  if (s->rank >= HLO_MAX_RANK || a->window_dimensions.count != s->rank) return 0;
  hlo_opcode_t op = scan_op(in->called_computations[0]);
  if (op == HLO_OPCODE_COUNT || !is_identity(in->operands[1], op)) return 0;
  int64_t total = 1;
  int n = 0;
  for (int d = 0; d < s->rank; d++) {
    int64_t w = a->window_dimensions.data[d], str = dim_or(a->window_strides, d, 1);
    int64_t lo = dim_or(a->padding, 2 * d, 0), hi = dim_or(a->padding, 2 * d + 1, 0);
    if (dim_or(a->base_dilations, d, 1) != 1 || dim_or(a->window_dilations, d, 1) != 1 || w < 1) return 0;
    total = total > INT64_MAX / w ? INT64_MAX : total * w;
    if (w == 1 && str == 1 && lo == 0 && hi == 0) continue;
    if (w <= REDUCE_SPLIT_MAX) {
      st[n++] = (window_stage_t){d, w, str, lo, hi};
      continue;
    }
    int64_t f = 0; /* w = f * (w / f), both at most REDUCE_SPLIT_MAX */
    for (int64_t c = REDUCE_SPLIT_MAX; c >= 2 && !f; c--)
      if (w % c == 0 && w / c <= REDUCE_SPLIT_MAX) f = c;
    if (!f || str != w || lo != 0 || hi != 0) return 0;
    st[n++] = (window_stage_t){d, f, f, 0, 0};
    st[n++] = (window_stage_t){d, w / f, w / f, 0, 0};
  }
  return total > REDUCE_SPLIT_ABOVE && n >= 2 ? n : 0;
}

static bool is_large_window(const hlo_instruction_t *in) {
  window_stage_t st[2 * HLO_MAX_RANK];
  return window_stages(in, st) > 0;
}

static hlo_instruction_t *expand_large_window(expand_ctx_t *x, hlo_instruction_t *in) {
  window_stage_t st[2 * HLO_MAX_RANK];
  int n = window_stages(in, st), rank = in->shape.rank;
  hlo_instruction_t *v = in->operands[0];
  for (int i = 0; i < n && v;) {
    /* a group: consecutive stages on distinct dimensions, at most
     * REDUCE_SPLIT_MAX elements */
    int64_t w[HLO_MAX_RANK], str[HLO_MAX_RANK], pad[2 * HLO_MAX_RANK], dims[HLO_MAX_RANK], size = 1;
    bool used[HLO_MAX_RANK] = {false};
    for (int d = 0; d < rank; d++) w[d] = str[d] = 1, pad[2 * d] = pad[2 * d + 1] = 0;
    for (; i < n && !used[st[i].dim] && size * st[i].w <= REDUCE_SPLIT_MAX; i++) {
      int d = st[i].dim;
      used[d] = true;
      size *= st[i].w;
      w[d] = st[i].w, str[d] = st[i].s, pad[2 * d] = st[i].lo, pad[2 * d + 1] = st[i].hi;
    }
    for (int d = 0; d < rank; d++) dims[d] = (v->shape.dimensions[d] + pad[2 * d] + pad[2 * d + 1] - w[d]) / str[d] + 1;
    hlo_shape_t s = array_shape(in->shape.element_type, rank, dims);
    hlo_instruction_t *ops[2] = {v, in->operands[1]};
    v = emit(x, HLO_OPCODE_REDUCE_WINDOW, &s, 2, ops);
    if (!v) return NULL;
    v->attrs.window_dimensions = dims_of(x, w, rank);
    v->attrs.window_strides = dims_of(x, str, rank);
    v->attrs.padding = dims_of(x, pad, 2 * rank);
    if (!hlo_instruction_set_called(x->m, v, 1, &in->called_computations[0])) {
      x->failed = true;
      return NULL;
    }
  }
  return v;
}

/* --------------------------------------------------------- long sorts */

/* A sort whose rows (along its dimension) are longer than
 * SORT_MERGE_ABOVE becomes a merge sort: sort_runs passes (an internal op,
 * codegen/emit_sort.c), the first sorting groups of SORT_FIRST_RUN
 * elements by rank, each next one merging SORT_MERGE_FANOUT runs of the
 * last into one, until one run holds the row.  Every pass is stable, so
 * the result is the stable sort, which is always one of the results the
 * spec allows (and the one a sort with is_stable must give).
 *
 * Why: sort's own kernel ranks each element against the whole row, n
 * comparisons per element; a row of 65536 took 2 s on lavapipe, and
 * lavapipe stops loops past 65535 iterations (see long reductions).  The
 * passes cost O(log^2 n) comparisons per element (a binary search in each
 * of the other runs of a group per pass) and one dispatch per pass.
 *
 * chlo.top_k of rows longer than that is a sort of (operand, iota) in
 * descending total order (ties stay in index order) of which only the
 * first k are wanted: once the merged runs are k long, each pass keeps the
 * first k of each (the top k of a row are the top k of its groups' top k),
 * so the rows shrink by SORT_MERGE_FANOUT per pass, and the last pass
 * leaves the k of each row. */
#define SORT_MERGE_ABOVE 1024
#define SORT_FIRST_RUN 8
#define SORT_MERGE_FANOUT 4

/* The dimension a sort (or chlo.top_k: the last) orders, counted from 0
 * (sort's may be negative, from the end); -1 when out of range. */
static int64_t sort_dimension(const hlo_instruction_t *in) {
  const hlo_shape_t *s = &in->operands[0]->shape;
  int64_t d = in->opcode == HLO_OPCODE_SORT ? in->attrs.dimension : s->rank - 1;
  if (d < 0) d += s->rank;
  return d >= 0 && d < s->rank ? d : -1;
}

static int64_t sort_row_length(const hlo_instruction_t *in) {
  int64_t d = sort_dimension(in);
  return d >= 0 ? in->operands[0]->shape.dimensions[d] : 1;
}

static bool is_long_sort(const hlo_instruction_t *in) {
  if (in->operand_count < 1 || in->operand_count > EL_MAX_RESULTS / 2) return false;
  if (in->opcode == HLO_OPCODE_SORT)
    return in->called_count == 1 && sort_row_length(in) > SORT_MERGE_ABOVE;
  return in->opcode == HLO_OPCODE_CHLO_TOP_K && el_result_count(in) == 2 &&
         sort_row_length(in) > SORT_MERGE_ABOVE;
}

/* The sort_runs passes sorting |n| values |v| (one shape) along |dim|
 * with |comparator|; with |keep| > 0 only the first |keep| of each row
 * are wanted, and a pass whose merged runs are at least that long keeps
 * only their first |keep| (the next pass merges runs of |keep|).  The last
 * pass replaces the sort. */
static hlo_instruction_t *merge_sort(expand_ctx_t *x, int n, hlo_instruction_t **v, int64_t dim,
                                     hlo_computation_t *comparator, int64_t keep) {
  int64_t len = v[0]->shape.dimensions[dim];
  for (int64_t run = 1; !x->failed;) {
    int64_t merged = run == 1 ? SORT_FIRST_RUN : run * SORT_MERGE_FANOUT;
    bool last = merged >= len, cut = keep > 0 && merged >= keep;
    int64_t out_len = hlo_sort_runs_length(len, merged, cut ? keep : 0);
    hlo_shape_t shapes[EL_MAX_RESULTS], shape;
    for (int k = 0; k < n; k++) {
      shapes[k] = v[k]->shape;
      shapes[k].dimensions[dim] = out_len;
    }
    shape = shapes[0];
    if (n > 1 && !hlo_shape_make_tuple(x->m, &shape, n, shapes)) x->failed = true;
    hlo_instruction_t *r = emit(x, HLO_OPCODE_SORT_RUNS, &shape, n, v);
    if (!r) break;
    r->attrs.dimension = dim;
    r->attrs.run_length = run;
    r->attrs.merged_run_length = last ? len : merged;
    r->attrs.k = cut ? keep : 0;
    if (!hlo_instruction_set_called(x->m, r, 1, &comparator)) x->failed = true;
    if (last) return x->failed ? NULL : r;
    for (int k = 0; k < n; k++) v[k] = n > 1 ? tuple_element(x, r, k) : r;
    run = cut ? keep : merged;
    len = out_len;
  }
  return NULL;
}

/* The descending comparator for long chlo.top_k of type |t| (indices of
 * type |it|): compare GT, total order for floats. */
static hlo_computation_t *greater_body(expand_ctx_t *x, hlo_element_type_t t, hlo_element_type_t it) {
  if (x->greater_body[t]) return x->greater_body[t];
  char name[64];
  snprintf(name, sizeof name, "expand_greater_%s", hlo_element_type_name(t));
  hlo_element_type_t types[4] = {t, t, it, it};
  hlo_instruction_t *root = NULL;
  hlo_computation_t *c = scalar_body(x, name, 4, types, HLO_OPCODE_COMPARE, HLO_PRED, &root);
  if (!c) return NULL;
  root->attrs.comparison_direction = HLO_CMP_GT;
  root->attrs.compare_type = hlo_element_type_is_float(t)         ? HLO_CMP_TYPE_TOTALORDER
                             : hlo_element_type_is_signed_int(t) ? HLO_CMP_TYPE_SIGNED
                                                                 : HLO_CMP_TYPE_UNSIGNED;
  x->greater_body[t] = c;
  return c;
}

static hlo_instruction_t *expand_long_sort(expand_ctx_t *x, hlo_instruction_t *in) {
  hlo_instruction_t *v[EL_MAX_RESULTS];
  if (in->opcode == HLO_OPCODE_SORT) {
    for (int k = 0; k < in->operand_count; k++) v[k] = in->operands[k];
    return merge_sort(x, in->operand_count, v, sort_dimension(in), in->called_computations[0], 0);
  }
  /* chlo.top_k: the first k of (operand, iota) sorted descending, which
   * the last pass leaves in the shape of top_k's results */
  const hlo_shape_t *s = &in->operands[0]->shape;
  int last = s->rank - 1;
  hlo_element_type_t it = in->shape.tuple_shapes[1].element_type;
  hlo_computation_t *cmp = greater_body(x, s->element_type, it);
  if (!cmp) {
    x->failed = true;
    return NULL;
  }
  hlo_shape_t is = with_type(s, it);
  v[0] = in->operands[0];
  v[1] = iota(x, &is, last);
  return merge_sort(x, 2, v, last, cmp, in->shape.tuple_shapes[0].dimensions[last]);
}

/* custom_call @ApproxTopK (jax.lax.approx_max_k / approx_min_k, exported
 * so for every platform; XLA's CPU and GPU backends answer it exactly):
 * operands (operand, its iota along reduction_dim, two init values), the
 * comparator (value, value, index, index) -> i1 as its called computation,
 * results (values, indices) of N along reduction_dim (N = top_k, or more
 * when aggregate_to_topk is false).  Here the exact answer, which every
 * recall_target allows: the stable sort of (operand, indices) by the
 * comparator, its first N (merge passes that keep N for rows longer than
 * SORT_MERGE_ABOVE, as chlo.top_k). */
static bool is_approx_top_k(const hlo_instruction_t *in) {
  return in->opcode == HLO_OPCODE_CUSTOM_CALL && in->attrs.call_target_name &&
         strcmp(in->attrs.call_target_name, "ApproxTopK") == 0;
}

static vkhlo_status_t expand_approx_top_k(expand_ctx_t *x, hlo_instruction_t *in, hlo_instruction_t **out) {
  int64_t dim = -1;
  config_value(in, "reduction_dim", &dim);
  const hlo_shape_t *s = &in->shape, *a = in->operand_count == 4 ? &in->operands[0]->shape : NULL;
  bool ok = a && in->called_count == 1 && hlo_shape_is_tuple(s) && s->tuple_count == 2 && a->rank > 0 &&
            dim >= 0 && dim < a->rank && hlo_shape_compatible_dims(a, &in->operands[1]->shape);
  for (int r = 0; ok && r < 2; r++) {
    const hlo_shape_t *rs = &s->tuple_shapes[r];
    ok = rs->rank == a->rank && rs->element_type == in->operands[r]->shape.element_type &&
         rs->dimensions[dim] <= a->dimensions[dim];
    for (int d = 0; ok && d < a->rank; d++) ok = d == dim || rs->dimensions[d] == a->dimensions[d];
  }
  if (!ok)
    return hlo_error_at(in->loc, "custom_call @ApproxTopK: expected (operand, indices of its shape, two init "
                        "values) with a comparator and reduction_dim, -> (values, indices) no longer than the "
                        "operand along reduction_dim");
  int64_t len = a->dimensions[dim], keep = s->tuple_shapes[0].dimensions[dim];
  hlo_instruction_t *v[2] = {in->operands[0], in->operands[1]};
  if (len > SORT_MERGE_ABOVE) {
    *out = merge_sort(x, 2, v, dim, in->called_computations[0], keep);
    return NULL;
  }
  hlo_shape_t sorted;
  hlo_shape_t parts[2] = {v[0]->shape, v[1]->shape};
  if (!hlo_shape_make_tuple(x->m, &sorted, 2, parts)) {
    x->failed = true;
    return NULL;
  }
  hlo_instruction_t *t = emit(x, HLO_OPCODE_SORT, &sorted, 2, v);
  if (t) {
    t->attrs.dimension = dim;
    t->attrs.is_stable = true;
    if (!hlo_instruction_set_called(x->m, t, 1, &in->called_computations[0])) x->failed = true;
  }
  for (int r = 0; r < 2; r++) {
    v[r] = tuple_element(x, t, r);
    if (keep < len) v[r] = slice_dim(x, v[r], (int)dim, 0, keep);
  }
  *out = tuple(x, 2, v);
  return NULL;
}

/* ------------------------------------------------------ constant reads */

/* Element |i| of integer constant |in|; false if |in| is not an integer
 * constant with that many elements. */
static bool constant_int(const hlo_instruction_t *in, int64_t i, int64_t *out) {
  if (in->opcode != HLO_OPCODE_CONSTANT || !in->literal) return false;
  hlo_element_type_t t = in->shape.element_type;
  if (!hlo_element_type_is_integer(t) || i >= hlo_shape_element_count(&in->shape)) return false;
  size_t size = hlo_element_type_size_bytes(t);
  const unsigned char *p = (const unsigned char *)in->literal->data + (size_t)i * size;
  uint64_t u = 0;
  memcpy(&u, p, size);
  if (hlo_element_type_is_signed_int(t) && size < 8 && (u >> (size * 8 - 1)) & 1)
    u |= ~0ull << (size * 8);
  *out = (int64_t)u;
  return true;
}

/* All elements of integer constant operand |k| of |instr| as dims. */
static vkhlo_status_t constant_dims(expand_ctx_t *x, const hlo_instruction_t *instr, int k,
                                    const char *what, hlo_dims_t *out) {
  const hlo_instruction_t *c = instr->operands[k];
  int64_t n = hlo_shape_element_count(&c->shape), v[2 * HLO_MAX_RANK];
  if (n > 2 * HLO_MAX_RANK) n = 2 * HLO_MAX_RANK + 1;
  for (int64_t i = 0; i < n; i++)
    if (n > 2 * HLO_MAX_RANK || !constant_int(c, i, &v[i]))
      return VKHLO_UNIMPLEMENTED("%s:%d:%d: stablehlo.%s with non-constant %s",
                                 instr->loc.file ? instr->loc.file : "<input>", instr->loc.line,
                                 instr->loc.col, hlo_opcode_name(instr->opcode), what);
  *out = hlo_dims_make(x->m, v, (int)n);
  if (n && !out->data) x->failed = true;
  return NULL;
}


/* --------------------------------------------------------- batch norm */

/* spec 'batch_norm_inference' (also the last step of batch_norm_training). */
static hlo_instruction_t *batch_norm_normalize(expand_ctx_t *x, hlo_instruction_t *operand,
                                               hlo_instruction_t *scale, hlo_instruction_t *offset,
                                               hlo_instruction_t *mean,
                                               hlo_instruction_t *variance, double epsilon,
                                               int64_t fi) {
  const hlo_shape_t *s = &operand->shape;
  hlo_instruction_t *scale_b = broadcast(x, scale, s, 1, &fi);
  hlo_instruction_t *offset_b = broadcast(x, offset, s, 1, &fi);
  hlo_instruction_t *mean_b = broadcast(x, mean, s, 1, &fi);
  hlo_instruction_t *var_b = broadcast(x, variance, s, 1, &fi);
  hlo_instruction_t *eps_b = splat(x, s, (double)(float)epsilon, 0);
  hlo_instruction_t *centered = binary(x, HLO_OPCODE_SUBTRACT, operand, mean_b);
  hlo_instruction_t *stddev = unary(x, HLO_OPCODE_SQRT, binary(x, HLO_OPCODE_ADD, var_b, eps_b));
  hlo_instruction_t *normalized = binary(x, HLO_OPCODE_DIVIDE, centered, stddev);
  return binary(x, HLO_OPCODE_ADD, binary(x, HLO_OPCODE_MULTIPLY, scale_b, normalized), offset_b);
}

/* compute_mean of the spec: per-feature sum / (size(operand) / dim(fi)). */
static hlo_instruction_t *feature_mean(expand_ctx_t *x, hlo_instruction_t *a, int64_t fi) {
  hlo_instruction_t *sum = sum_except(x, a, fi);
  if (!sum) return NULL;
  double n = (double)hlo_shape_element_count(&a->shape) / (double)a->shape.dimensions[fi];
  return binary(x, HLO_OPCODE_DIVIDE, sum, splat(x, &sum->shape, n, 0));
}

/* spec 'batch_norm_training': (output, batch_mean, batch_var). */
static hlo_instruction_t *expand_batch_norm_training(expand_ctx_t *x, hlo_instruction_t *in) {
  hlo_instruction_t *operand = in->operands[0];
  int64_t fi = in->attrs.feature_index;
  hlo_instruction_t *mean = feature_mean(x, operand, fi);
  hlo_instruction_t *centered =
      binary(x, HLO_OPCODE_SUBTRACT, operand, broadcast(x, mean, &operand->shape, 1, &fi));
  hlo_instruction_t *var = feature_mean(x, binary(x, HLO_OPCODE_MULTIPLY, centered, centered), fi);
  hlo_instruction_t *out[3] = {
      batch_norm_normalize(x, operand, in->operands[1], in->operands[2], mean, var,
                           in->attrs.epsilon, fi),
      mean, var};
  return tuple(x, 3, out);
}

/* spec 'batch_norm_grad': (grad_operand, grad_scale, grad_offset), with
 * the temporaries named as in the spec (after XLA's batchnorm_expander). */
static hlo_instruction_t *expand_batch_norm_grad(expand_ctx_t *x, hlo_instruction_t *in) {
  hlo_instruction_t *operand = in->operands[0], *scale = in->operands[1], *mean = in->operands[2],
                    *variance = in->operands[3], *grad_output = in->operands[4];
  int64_t fi = in->attrs.feature_index;
  const hlo_shape_t *s = &operand->shape;
  hlo_instruction_t *scale_b = broadcast(x, scale, s, 1, &fi);
  hlo_instruction_t *mean_b = broadcast(x, mean, s, 1, &fi);
  hlo_instruction_t *var_b = broadcast(x, variance, s, 1, &fi);
  hlo_instruction_t *eps_b = splat(x, s, (double)(float)in->attrs.epsilon, 0);
  hlo_instruction_t *centered = binary(x, HLO_OPCODE_SUBTRACT, operand, mean_b);
  hlo_instruction_t *var_eps = binary(x, HLO_OPCODE_ADD, var_b, eps_b);
  hlo_instruction_t *stddev = unary(x, HLO_OPCODE_SQRT, var_eps);
  hlo_instruction_t *normalized = binary(x, HLO_OPCODE_DIVIDE, centered, stddev);
  double n = (double)hlo_shape_element_count(s) / (double)s->dimensions[fi];
  hlo_instruction_t *per_feature = splat(x, s, n, 0);
  hlo_instruction_t *i1 = binary(x, HLO_OPCODE_MULTIPLY, grad_output, per_feature);
  hlo_instruction_t *i2 = broadcast(x, sum_except(x, grad_output, fi), s, 1, &fi);
  hlo_instruction_t *i3 = broadcast(
      x, sum_except(x, binary(x, HLO_OPCODE_MULTIPLY, grad_output, centered), fi), s, 1, &fi);
  hlo_instruction_t *i4 = binary(x, HLO_OPCODE_MULTIPLY, i3, centered);
  hlo_instruction_t *i5 = binary(x, HLO_OPCODE_DIVIDE, i4, var_eps);
  hlo_instruction_t *i6 =
      binary(x, HLO_OPCODE_SUBTRACT, binary(x, HLO_OPCODE_SUBTRACT, i1, i2), i5);
  hlo_instruction_t *out[3];
  out[0] = binary(x, HLO_OPCODE_MULTIPLY,
                  binary(x, HLO_OPCODE_DIVIDE, binary(x, HLO_OPCODE_DIVIDE, scale_b, stddev),
                         per_feature),
                  i6);
  out[1] = sum_except(x, binary(x, HLO_OPCODE_MULTIPLY, grad_output, normalized), fi);
  out[2] = sum_except(x, grad_output, fi);
  return tuple(x, 3, out);
}

/* ------------------------------------------------------------- mulhi */

/* chlo.mulhi: the high half of the double-width product of two integers.
 * Up to 32 bits: convert to the double-width type, multiply, shift right
 * by the width and convert back.  64 bits: split each operand (as ui64)
 * into 32-bit halves, form the four partial products and add up the high
 * half with its carries; for signed operands subtract b (a < 0) and a
 * (b < 0) modulo 2^64 (the two's complement correction). */
static hlo_instruction_t *expand_mulhi(expand_ctx_t *x, hlo_instruction_t *in) {
  hlo_instruction_t *a = in->operands[0], *b = in->operands[1];
  hlo_element_type_t t = in->shape.element_type;
  bool is_signed = hlo_element_type_is_signed_int(t);
  int w = hlo_element_type_bit_width(t);
  const hlo_shape_t *s = &in->shape;
  if (w <= 32) {
    hlo_element_type_t wide = w <= 16 ? (is_signed ? HLO_S32 : HLO_U32)
                                      : (is_signed ? HLO_S64 : HLO_U64);
    hlo_instruction_t *p = binary(x, HLO_OPCODE_MULTIPLY, convert(x, a, wide), convert(x, b, wide));
    hlo_shape_t ws = with_type(s, wide);
    hlo_instruction_t *hi =
        binary(x, is_signed ? HLO_OPCODE_SHIFT_RIGHT_ARITHMETIC : HLO_OPCODE_SHIFT_RIGHT_LOGICAL,
               p, splat(x, &ws, 0, (uint64_t)w));
    return convert(x, hi, t);
  }
  hlo_shape_t us = with_type(s, HLO_U64);
  hlo_instruction_t *ua = is_signed ? convert(x, a, HLO_U64) : a;
  hlo_instruction_t *ub = is_signed ? convert(x, b, HLO_U64) : b;
  hlo_instruction_t *mask = splat(x, &us, 0, 0xFFFFFFFFull), *c32 = splat(x, &us, 0, 32);
  hlo_instruction_t *a_lo = binary(x, HLO_OPCODE_AND, ua, mask);
  hlo_instruction_t *a_hi = binary(x, HLO_OPCODE_SHIFT_RIGHT_LOGICAL, ua, c32);
  hlo_instruction_t *b_lo = binary(x, HLO_OPCODE_AND, ub, mask);
  hlo_instruction_t *b_hi = binary(x, HLO_OPCODE_SHIFT_RIGHT_LOGICAL, ub, c32);
  hlo_instruction_t *ll = binary(x, HLO_OPCODE_MULTIPLY, a_lo, b_lo);
  hlo_instruction_t *lh = binary(x, HLO_OPCODE_MULTIPLY, a_lo, b_hi);
  hlo_instruction_t *hl = binary(x, HLO_OPCODE_MULTIPLY, a_hi, b_lo);
  hlo_instruction_t *hh = binary(x, HLO_OPCODE_MULTIPLY, a_hi, b_hi);
  /* cross < 3 * 2^32: the middle column with the carry out of ll */
  hlo_instruction_t *cross = binary(
      x, HLO_OPCODE_ADD,
      binary(x, HLO_OPCODE_ADD, binary(x, HLO_OPCODE_SHIFT_RIGHT_LOGICAL, ll, c32),
             binary(x, HLO_OPCODE_AND, lh, mask)),
      binary(x, HLO_OPCODE_AND, hl, mask));
  hlo_instruction_t *hi = binary(
      x, HLO_OPCODE_ADD,
      binary(x, HLO_OPCODE_ADD,
             binary(x, HLO_OPCODE_ADD, hh, binary(x, HLO_OPCODE_SHIFT_RIGHT_LOGICAL, lh, c32)),
             binary(x, HLO_OPCODE_SHIFT_RIGHT_LOGICAL, hl, c32)),
      binary(x, HLO_OPCODE_SHIFT_RIGHT_LOGICAL, cross, c32));
  if (!is_signed) return hi;
  hlo_instruction_t *zero = splat(x, s, 0, 0), *uzero = splat(x, &us, 0, 0);
  hlo_instruction_t *fix_a = select_(x, compare(x, a, zero, HLO_CMP_LT), ub, uzero);
  hlo_instruction_t *fix_b = select_(x, compare(x, b, zero, HLO_CMP_LT), ua, uzero);
  hi = binary(x, HLO_OPCODE_SUBTRACT, binary(x, HLO_OPCODE_SUBTRACT, hi, fix_a), fix_b);
  return convert(x, hi, t);
}

/* -------------------------------------------------------- collectives */

/* The largest process id in replica_groups (-1 when there are none). */
static int64_t max_group_id(const hlo_instruction_t *in) {
  int64_t m = -1;
  for (int i = 0; i < in->attrs.replica_groups.count; i++)
    if (in->attrs.replica_groups.data[i] > m) m = in->attrs.replica_groups.data[i];
  return m;
}

/* all_gather, all_reduce, all_to_all, reduce_scatter with one process:
 * each group is {0}, so every operand is its own result. */
static vkhlo_status_t expand_identity_collective(expand_ctx_t *x, hlo_instruction_t *in,
                                                 hlo_instruction_t **out) {
  if (max_group_id(in) > 0)
    return el_unimplemented(in, "stablehlo.%s across several processes (vkhlo runs one replica of "
                         "one partition)", hlo_opcode_name(in->opcode));
  if (in->opcode == HLO_OPCODE_ALL_TO_ALL && in->attrs.split_count > 1)
    return el_unimplemented(in, "stablehlo.all_to_all with split_count %lld (vkhlo runs one process)",
                         (long long)in->attrs.split_count);
  int n = in->operand_count;
  for (int k = 0; k < n; k++) {
    const hlo_shape_t *rs = hlo_shape_is_tuple(&in->shape) ? &in->shape.tuple_shapes[k] : &in->shape;
    if (!hlo_shape_equal(rs, &in->operands[k]->shape))
      return el_unimplemented(in, "stablehlo.%s whose result shape differs from its operand's "
                           "(needs several processes)", hlo_opcode_name(in->opcode));
  }
  if (!hlo_shape_is_tuple(&in->shape)) {
    *out = in->operands[0];
    return NULL;
  }
  *out = tuple(x, n, in->operands);
  return NULL;
}

/* collective_broadcast / collective_reduce / collective_permute: process 0
 * receives its own operand when it is in a group (broadcast; reduce: the
 * fold of its one member) or 0 -> 0 is a pair (permute), and zeros
 * otherwise. */
static hlo_instruction_t *expand_receive_or_zero(expand_ctx_t *x, hlo_instruction_t *in) {
  bool receives = false;
  int n = in->operand_count - (in->attrs.has_dynamic_root ? 1 : 0); /* a dynamic root can only be 0 */
  if (in->opcode == HLO_OPCODE_COLLECTIVE_PERMUTE) {
    const hlo_dims_t *p = &in->attrs.source_target_pairs;
    for (int i = 0; i + 1 < p->count; i += 2) receives |= p->data[i] == 0 && p->data[i + 1] == 0;
  } else {
    const hlo_dims_t *g = &in->attrs.replica_groups;
    for (int i = 0; i < g->count; i++) receives |= g->data[i] == 0;
  }
  if (!hlo_shape_is_tuple(&in->shape)) return receives ? in->operands[0] : splat(x, &in->shape, 0, 0);
  hlo_instruction_t **v = arena_alloc(&x->m->arena, sizeof(void *) * (size_t)(n ? n : 1));
  if (!v) {
    x->failed = true;
    return NULL;
  }
  for (int k = 0; k < n; k++) v[k] = receives ? in->operands[k] : splat(x, &in->shape.tuple_shapes[k], 0, 0);
  return tuple(x, n, v);
}

/* ------------------------------------------------------ dynamic shapes */

/* dynamic_* ops -> their static forms (see the file comment). */
static vkhlo_status_t expand_dynamic(expand_ctx_t *x, hlo_instruction_t *in,
                                     hlo_instruction_t **out) {
  hlo_instruction_t *r = NULL;
  switch (in->opcode) {
    case HLO_OPCODE_DYNAMIC_BROADCAST_IN_DIM:
      r = emit(x, HLO_OPCODE_BROADCAST_IN_DIM, &in->shape, 1, in->operands);
      if (r) r->attrs.broadcast_dimensions = in->attrs.broadcast_dimensions;
      break;
    case HLO_OPCODE_DYNAMIC_IOTA:
      r = iota(x, &in->shape, in->attrs.dimension);
      break;
    case HLO_OPCODE_DYNAMIC_RESHAPE:
      r = emit(x, HLO_OPCODE_RESHAPE, &in->shape, 1, in->operands);
      break;
    case HLO_OPCODE_DYNAMIC_PAD: { /* (operand, padding_value, low, high, interior) */
      hlo_dims_t lo, hi, interior;
      VKHLO_RETURN_IF_ERROR(constant_dims(x, in, 2, "edge_padding_low", &lo));
      VKHLO_RETURN_IF_ERROR(constant_dims(x, in, 3, "edge_padding_high", &hi));
      VKHLO_RETURN_IF_ERROR(constant_dims(x, in, 4, "interior_padding", &interior));
      r = emit(x, HLO_OPCODE_PAD, &in->shape, 2, in->operands);
      if (r) {
        r->attrs.edge_padding_low = lo;
        r->attrs.edge_padding_high = hi;
        r->attrs.interior_padding = interior;
      }
      break;
    }
    case HLO_OPCODE_DYNAMIC_GATHER: { /* (operand, start_indices, slice_sizes) */
      hlo_dims_t sizes;
      VKHLO_RETURN_IF_ERROR(constant_dims(x, in, 2, "slice_sizes", &sizes));
      r = emit(x, HLO_OPCODE_GATHER, &in->shape, 2, in->operands);
      if (r) {
        r->attrs = in->attrs;
        r->attrs.slice_sizes = sizes;
      }
      break;
    }
    case HLO_OPCODE_DYNAMIC_CONV: { /* (lhs, rhs, padding) */
      hlo_dims_t padding;
      VKHLO_RETURN_IF_ERROR(constant_dims(x, in, 2, "padding", &padding));
      r = emit(x, HLO_OPCODE_CONVOLUTION, &in->shape, 2, in->operands);
      if (!r) break;
      r->attrs = in->attrs;
      r->attrs.padding = padding;
      /* the defaults the parser gives stablehlo.convolution */
      int n = in->attrs.input_spatial_dimensions.count;
      int64_t ones[HLO_MAX_RANK], zeros[HLO_MAX_RANK];
      for (int i = 0; i < n; i++) ones[i] = 1, zeros[i] = 0;
      if (!r->attrs.window_strides.data) r->attrs.window_strides = hlo_dims_make(x->m, ones, n);
      if (!r->attrs.lhs_dilation.data) r->attrs.lhs_dilation = hlo_dims_make(x->m, ones, n);
      if (!r->attrs.rhs_dilation.data) r->attrs.rhs_dilation = hlo_dims_make(x->m, ones, n);
      if (!r->attrs.window_reversal.data) r->attrs.window_reversal = hlo_dims_make(x->m, zeros, n);
      break;
    }
    case HLO_OPCODE_REAL_DYNAMIC_SLICE: { /* (operand, start, limit, strides) */
      hlo_dims_t start, limit, strides;
      VKHLO_RETURN_IF_ERROR(constant_dims(x, in, 1, "start_indices", &start));
      VKHLO_RETURN_IF_ERROR(constant_dims(x, in, 2, "limit_indices", &limit));
      VKHLO_RETURN_IF_ERROR(constant_dims(x, in, 3, "strides", &strides));
      r = emit(x, HLO_OPCODE_SLICE, &in->shape, 1, in->operands);
      if (r) {
        r->attrs.start_indices = start;
        r->attrs.limit_indices = limit;
        r->attrs.strides = strides;
      }
      break;
    }
    default: return VKHLO_INTERNAL("expand_dynamic: unexpected %s", hlo_opcode_name(in->opcode));
  }
  /* the operands' values were the verifier's blind spot: the static op
   * meets the spec's constraints or the program is in error */
  if (r) VKHLO_RETURN_IF_ERROR(hlo_verify_instruction(r));
  *out = r;
  return NULL;
}

/* -------------------------------------------------------- ragged dot */

/* chlo.ragged_dot (verifier.c gives the three modes) as dot_general: the
 * groups of the lhs ragged dimension are contiguous, group j covering
 * positions [start_j, end_j) with end = the inclusive prefix sum of
 * group_sizes and start = end - group_sizes; positions past the last end
 * belong to no group (their results are 0).
 *   mode 1 (ragged non-contracting m): the product with every rhs group
 *     (its group dimension a free dimension), then per position of m only
 *     its own group's column kept (select) and the group dimension summed
 *     away: exactly one nonzero term;
 *   mode 2 (ragged contracting k): the lhs copied once per group with the
 *     k positions of other groups zeroed (select), its group dimension a
 *     free one of the product, moved to the front;
 *   mode 3 (ragged batch): the product itself (the rhs has no groups).
 * The product is computed for every group (g times a plain product's
 * work): a correct decomposition from the core ops.  Where the CPU GEMM
 * kernel computes the op as a grouped product (mode 1 as jax.lax.ragged_dot
 * makes it: codegen_ragged_dot_gemm, emit_gemm.c) it is not expanded. */

/* The inclusive prefix sums of |a| along its last dimension. */
static hlo_instruction_t *prefix_sums(expand_ctx_t *x, hlo_instruction_t *a) {
  if (!a) return NULL;
  hlo_element_type_t t = a->shape.element_type;
  return prefix_scan(x, a, a->shape.rank - 1, HLO_OPCODE_ADD, scalar(x, t, 0, 0), add_body(x, t));
}

/* The predicate [prefix..., n, g]: position i of the ragged dimension (n
 * long) is in group j, for group_sizes |gs| of shape [prefix..., g]. */
static hlo_instruction_t *group_mask(expand_ctx_t *x, hlo_instruction_t *gs, int64_t n) {
  if (!gs) return NULL;
  int np = gs->shape.rank - 1;
  int64_t dims[HLO_MAX_RANK + 1], keep[HLO_MAX_RANK];
  for (int d = 0; d < np; d++) dims[d] = gs->shape.dimensions[d], keep[d] = d;
  dims[np] = n;
  dims[np + 1] = gs->shape.dimensions[np];
  keep[np] = np + 1;
  hlo_shape_t ms = array_shape(gs->shape.element_type, np + 2, dims);
  hlo_instruction_t *end = prefix_sums(x, gs);
  hlo_instruction_t *start = binary(x, HLO_OPCODE_SUBTRACT, end, gs);
  hlo_instruction_t *pos = iota(x, &ms, np);
  hlo_instruction_t *after_start = compare(x, broadcast(x, start, &ms, np + 1, keep), pos, HLO_CMP_LE);
  hlo_instruction_t *before_end = compare(x, pos, broadcast(x, end, &ms, np + 1, keep), HLO_CMP_LT);
  return binary(x, HLO_OPCODE_AND, after_start, before_end);
}

static hlo_dims_t shifted_dims(expand_ctx_t *x, hlo_dims_t d, int64_t by) {
  int64_t v[HLO_MAX_RANK];
  for (int i = 0; i < d.count; i++) v[i] = d.data[i] + by;
  hlo_dims_t r = hlo_dims_make(x->m, v, d.count);
  if (d.count && !r.data) x->failed = true;
  return r;
}

/* dot_general(l, r) with |like|'s dimension numbers, the lhs ones moved by
 * |lhs_shift|, of element type |t| and the dimensions dot_general gives. */
static hlo_instruction_t *plain_dot(expand_ctx_t *x, hlo_instruction_t *l, hlo_instruction_t *r,
                                    const hlo_attrs_t *like, int lhs_shift, hlo_element_type_t t) {
  if (!l || !r) return NULL;
  hlo_dims_t lb = shifted_dims(x, like->lhs_batching_dimensions, lhs_shift),
             lc = shifted_dims(x, like->lhs_contracting_dimensions, lhs_shift);
  int64_t dims[HLO_MAX_RANK];
  int rank = hlo_dot_result_dimensions(&l->shape, &r->shape, lb, lc, like->rhs_batching_dimensions,
                                       like->rhs_contracting_dimensions, (hlo_dims_t){0}, dims);
  hlo_shape_t s = array_shape(t, rank, dims);
  hlo_instruction_t *ops[2] = {l, r};
  hlo_instruction_t *d = emit(x, HLO_OPCODE_DOT_GENERAL, &s, 2, ops);
  if (!d) return NULL;
  d->attrs.lhs_batching_dimensions = lb;
  d->attrs.lhs_contracting_dimensions = lc;
  d->attrs.rhs_batching_dimensions = like->rhs_batching_dimensions;
  d->attrs.rhs_contracting_dimensions = like->rhs_contracting_dimensions;
  return d;
}

static hlo_instruction_t *expand_ragged_dot(expand_ctx_t *x, hlo_instruction_t *in) {
  hlo_instruction_t *l = in->operands[0], *r = in->operands[1], *gs = in->operands[2];
  const hlo_attrs_t *a = &in->attrs;
  const hlo_dims_t *lb = &a->lhs_batching_dimensions, *lc = &a->lhs_contracting_dimensions;
  int64_t ragged = a->lhs_ragged_dimensions.data[0];
  hlo_element_type_t t = in->shape.element_type;
  int nb = lb->count;
  if (hlo_dims_contains(*lb, ragged)) return plain_dot(x, l, r, a, 0, t); /* mode 3 */
  /* group_sizes' prefix dimensions, as lhs dimensions (rank 1: none) */
  bool contracting = hlo_dims_contains(*lc, ragged);
  int64_t prefix[HLO_MAX_RANK];
  int np = gs->shape.rank > 1 ? hlo_ragged_dot_prefix_dimensions(a, l->shape.rank, prefix) : 0;
  hlo_instruction_t *mask = group_mask(x, gs, l->shape.dimensions[ragged]);
  int64_t groups = gs->shape.dimensions[gs->shape.rank - 1];
  int64_t map[HLO_MAX_RANK + 1];
  if (contracting) { /* mode 2: l' = [g, lhs...] */
    int64_t dims[HLO_MAX_RANK + 1], all[HLO_MAX_RANK];
    dims[0] = groups;
    for (int d = 0; d < l->shape.rank; d++) dims[d + 1] = l->shape.dimensions[d], all[d] = d + 1;
    hlo_shape_t ls = array_shape(l->shape.element_type, l->shape.rank + 1, dims);
    for (int i = 0; i < np; i++) map[i] = prefix[i] + 1;
    map[np] = ragged + 1;
    map[np + 1] = 0;
    hlo_shape_t ps = with_type(&ls, HLO_PRED);
    hlo_instruction_t *lg = select_(x, broadcast(x, mask, &ps, np + 2, map),
                                    broadcast(x, l, &ls, l->shape.rank, all), splat(x, &ls, 0, 0));
    hlo_instruction_t *d = plain_dot(x, lg, r, a, 1, t); /* [batch, g, lhs free, rhs free] */
    if (!d || nb == 0) return d;
    int64_t perm[HLO_MAX_RANK];
    perm[0] = nb;
    for (int i = 0; i < nb; i++) perm[i + 1] = i;
    for (int i = nb + 1; i < d->shape.rank; i++) perm[i] = i;
    return permute(x, d, perm);
  }
  /* mode 1: d = [batch, lhs free, rhs free with g] */
  hlo_instruction_t *d = plain_dot(x, l, r, a, 0, t);
  if (!d) return NULL;
  int64_t lhs_free_at[HLO_MAX_RANK]; /* lhs dimension -> its dimension of d */
  int pos = nb;
  for (int i = 0; i < nb; i++) lhs_free_at[lb->data[i]] = i;
  for (int i = 0; i < l->shape.rank; i++)
    if (!hlo_dims_contains(*lb, i) && !hlo_dims_contains(*lc, i)) lhs_free_at[i] = pos++;
  int64_t gdim = pos;
  for (int i = 0; i < r->shape.rank; i++) {
    if (i == a->rhs_group_dimensions.data[0]) break;
    if (!hlo_dims_contains(a->rhs_batching_dimensions, i) && !hlo_dims_contains(a->rhs_contracting_dimensions, i))
      gdim++;
  }
  for (int i = 0; i < np; i++) map[i] = lhs_free_at[prefix[i]];
  map[np] = lhs_free_at[ragged];
  map[np + 1] = gdim;
  hlo_shape_t ps = with_type(&d->shape, HLO_PRED);
  hlo_instruction_t *kept = select_(x, broadcast(x, mask, &ps, np + 2, map), d,
                                    splat(x, &d->shape, 0, 0));
  return sum_over(x, kept, 1, &gdim);
}

/* ----------------------------------------------------------- split-K */

/*
 * Skinny products on GPUs (split-K).  gemm_gpu.comp gives each 64 x 64
 * tile (16 x 256 for 16 rows or fewer, codegen_gemm_gpu_rows) of a
 * product's result one workgroup, which walks all of k: a
 * product of few tiles (M = 1..64 rows: a decoding step's projections, a
 * classifier head) keeps a few of a GPU's cores busy however long k is.
 * Where the GPU kernel computes such a dot_general (or dot) it becomes
 *
 *   reduce(dot_general(lhs', rhs'), dimensions = [nb], add)
 *
 * lhs' and rhs' the operands with their contracting dimension of size K
 * reshaped into S x K / S (S outer: a view, no copy) and S made their last
 * batching dimension, so that S workgroups share each tile, each summing
 * K / S products into the partial results [batch, S, free...] in f32; the
 * reduce adds the S partials (the dot's epilogue fuses into the reduce's
 * kernel then).  16-bit products take f32 partials and are rounded once
 * after the reduce, as the kernel rounds them; integer products take
 * partials of their own type (wrapping sums: exact in any order).  The spec defines each
 * element of dot_general as a reduce over its products (spec
 * 'dot_general'), and a reduce's order as implementation-defined (spec
 * 'reduce'): the same sums in another order, as XLA's GPU backend splits k.
 *
 * S: the smallest power of two giving SPLIT_K_WORKGROUPS workgroups, then
 * halved until it divides K, leaves each workgroup at least SPLIT_K_MIN_K
 * of k and the partials at most SPLIT_K_MAX_PARTIALS elements; below 2 the
 * dot stays whole.  Not tuned: no GPU was lent when this was written, so
 * these are what keeps a GPU of ~130 cores busy (4 workgroups of 256
 * invocations each), not measured optima.  CPU devices never split (their
 * kernel, gemm_cpu.comp, tiles down to a row; lavapipe runs 2 threads).
 */
#define SPLIT_K_WORKGROUPS 512
#define SPLIT_K_MIN_K 256
#define SPLIT_K_MAX_PARTIALS ((int64_t)1 << 24)

/* A dot's dimension numbers with one contracting dimension per operand. */
typedef struct dot_numbers {
  int nb;
  int64_t lb[HLO_MAX_RANK], rb[HLO_MAX_RANK], lc, rc;
} dot_numbers_t;

/* The number of parts S >= 2 the GPU GEMM splits |in|'s k into (filling
 * |dn|), or 0: not a dot the GPU kernel takes with one contracting
 * dimension, or busy enough whole. */
static int64_t split_k_parts(const expand_ctx_t *x, const hlo_instruction_t *in, dot_numbers_t *dn) {
  const codegen_target_t *t = x->target;
  if (!t || !codegen_target_gemm_gpu(t) || t->no_split_k || !codegen_gemm_types(in)) return 0;
  const hlo_shape_t *ls = &in->operands[0]->shape, *rs = &in->operands[1]->shape;
  if (in->shape.rank >= HLO_MAX_RANK || ls->rank >= HLO_MAX_RANK || rs->rank >= HLO_MAX_RANK ||
      glsl_type_is_packed(t, ls->element_type) || glsl_type_is_packed(t, rs->element_type))
    return 0;
  for (int d = 0; d < in->shape.rank; d++) /* a result layout of its own stays with the dot */
    if (in->shape.minor_to_major[d] != in->shape.rank - 1 - d) return 0;
  if (in->opcode == HLO_OPCODE_DOT) {
    if (ls->rank < 1 || ls->rank > 2 || rs->rank < 1 || rs->rank > 2) return 0;
    dn->nb = 0;
    dn->lc = ls->rank - 1;
    dn->rc = 0;
  } else if (in->opcode == HLO_OPCODE_DOT_GENERAL) {
    const hlo_attrs_t *a = &in->attrs;
    if (a->lhs_contracting_dimensions.count != 1 || a->rhs_contracting_dimensions.count != 1 ||
        a->rhs_batching_dimensions.count != a->lhs_batching_dimensions.count)
      return 0;
    dn->nb = a->lhs_batching_dimensions.count;
    for (int i = 0; i < dn->nb; i++) {
      dn->lb[i] = a->lhs_batching_dimensions.data[i];
      dn->rb[i] = a->rhs_batching_dimensions.data[i];
    }
    dn->lc = a->lhs_contracting_dimensions.data[0];
    dn->rc = a->rhs_contracting_dimensions.data[0];
  } else {
    return 0;
  }
  int64_t k = ls->dimensions[dn->lc], batch = 1, m = 1, outputs = hlo_shape_element_count(&in->shape);
  for (int i = 0; i < dn->nb; i++) batch *= ls->dimensions[dn->lb[i]];
  for (int d = 0; d < ls->rank; d++) {
    bool batching = false;
    for (int i = 0; i < dn->nb; i++) batching |= dn->lb[i] == d;
    if (!batching && d != dn->lc) m *= ls->dimensions[d];
  }
  if (outputs == 0 || k < 2 * SPLIT_K_MIN_K) return 0;
  int64_t n = outputs / (batch * m);
  int64_t bm = codegen_gemm_gpu_rows(t, m), bn = 4096 / bm;
  int64_t tiles = batch * ((m + bm - 1) / bm) * ((n + bn - 1) / bn);
  int64_t s = 1;
  while (s * tiles < SPLIT_K_WORKGROUPS) s *= 2;
  while (s > 1 && (k % s != 0 || k / s < SPLIT_K_MIN_K || s * outputs > SPLIT_K_MAX_PARTIALS)) s /= 2;
  return s >= 2 ? s : 0;
}

/* |a| with dimension |c| (of size K) reshaped into s x K / s. */
static hlo_instruction_t *split_dimension(expand_ctx_t *x, hlo_instruction_t *a, int64_t c, int64_t s) {
  int64_t dims[HLO_MAX_RANK];
  int rank = 0;
  for (int d = 0; d < a->shape.rank; d++) {
    if (d == c) dims[rank++] = s;
    dims[rank++] = d == c ? a->shape.dimensions[d] / s : a->shape.dimensions[d];
  }
  return reshape_to(x, a, rank, dims);
}

static hlo_instruction_t *expand_split_k(expand_ctx_t *x, hlo_instruction_t *in) {
  dot_numbers_t dn;
  int64_t s = split_k_parts(x, in, &dn);
  hlo_instruction_t *ops[2] = {split_dimension(x, in->operands[0], dn.lc, s),
                               split_dimension(x, in->operands[1], dn.rc, s)};
  int64_t lb[HLO_MAX_RANK], rb[HLO_MAX_RANK], lc = dn.lc + 1, rc = dn.rc + 1;
  for (int i = 0; i < dn.nb; i++) { /* dimensions past the split one move by one */
    lb[i] = dn.lb[i] + (dn.lb[i] > dn.lc);
    rb[i] = dn.rb[i] + (dn.rb[i] > dn.rc);
  }
  lb[dn.nb] = dn.lc;
  rb[dn.nb] = dn.rc;
  int64_t dims[HLO_MAX_RANK], nb = dn.nb;
  for (int d = 0, r = 0; d <= in->shape.rank; d++) dims[d] = d == nb ? s : in->shape.dimensions[r++];
  /* float partials in f32; integer ones in the product's own type, whose
   * sums wrap: the partial sums' sum modulo 2^w is the whole sum's */
  hlo_element_type_t pt = hlo_element_type_is_integer(in->shape.element_type) ? in->shape.element_type : HLO_F32;
  hlo_shape_t ps = array_shape(pt, in->shape.rank + 1, dims);
  hlo_instruction_t *d = emit(x, HLO_OPCODE_DOT_GENERAL, &ps, 2, ops);
  if (!d) return NULL;
  if (in->opcode == HLO_OPCODE_DOT_GENERAL) d->attrs = in->attrs; /* precision_config, algorithm */
  d->attrs.lhs_batching_dimensions = dims_of(x, lb, dn.nb + 1);
  d->attrs.rhs_batching_dimensions = dims_of(x, rb, dn.nb + 1);
  d->attrs.lhs_contracting_dimensions = dims_of(x, &lc, 1);
  d->attrs.rhs_contracting_dimensions = dims_of(x, &rc, 1);
  hlo_instruction_t *sum = sum_over(x, d, 1, &nb);
  return in->shape.element_type == pt ? sum : convert(x, sum, in->shape.element_type);
}

/* -------------------------------------------------------------- scan */

/* chlo.scan as a while loop over the positions of the scan dimension, the
 * loop values being (i, the inputs, the carries, the outputs so far):
 * each step slices the inputs at position p (i, or n - 1 - i with
 * is_reverse), runs a copy of the scan's body on the slices and the
 * carries, and writes the output slices at p (dynamic_update_slice); the
 * outputs start as zeros, every position is written once.  This is the
 * op's definition step by step: one iteration per position, each a few
 * dispatches. */

/* |a| with dimension |d| (of size 1) removed, or inserted with size 1. */
static hlo_instruction_t *reshape_dim(expand_ctx_t *x, hlo_instruction_t *a, int64_t d, bool insert) {
  if (!a) return NULL;
  int64_t dims[HLO_MAX_RANK];
  int rank = 0;
  for (int k = 0; k <= a->shape.rank; k++) {
    if (k == d && insert) dims[rank++] = 1;
    if (k < a->shape.rank && !(k == d && !insert)) dims[rank++] = a->shape.dimensions[k];
  }
  return reshape_to(x, a, rank, dims);
}

/* The cond and body computations of a while loop over the |n| values
 * |init| (parameters into |cp| and |bp|, no roots yet), named |prefix|
 * and |suffix| _cond and _step; false when out of memory. */
static bool loop_computations(expand_ctx_t *x, const char *prefix, int suffix, int n, hlo_instruction_t *const *init,
                              hlo_computation_t **cond, hlo_computation_t **body, hlo_instruction_t **cp,
                              hlo_instruction_t **bp) {
  hlo_shape_t *shapes = arena_alloc(&x->m->arena, sizeof *shapes * (size_t)n);
  for (int i = 0; shapes && i < n; i++) {
    if (!init[i]) return false;
    shapes[i] = init[i]->shape;
  }
  char name[96];
  snprintf(name, sizeof name, suffix >= 0 ? "%s_%d_cond" : "%s_cond", prefix, suffix);
  *cond = shapes ? helper_computation(x, name, n, shapes, cp) : NULL;
  snprintf(name, sizeof name, suffix >= 0 ? "%s_%d_step" : "%s_step", prefix, suffix);
  *body = *cond ? helper_computation(x, name, n, shapes, bp) : NULL;
  if (!*body) x->failed = true;
  return *body != NULL;
}

/* while(init) over the |n| values, calling |cond| and |body| (their roots
 * set); NULL when one is missing or out of memory. */
static hlo_instruction_t *while_loop(expand_ctx_t *x, int n, hlo_instruction_t *const *init, hlo_computation_t *cond,
                                     hlo_computation_t *body) {
  hlo_shape_t ts;
  if (!cond->root || !body->root || !tuple_shape(x, n, init, &ts)) return NULL;
  hlo_instruction_t *loop = emit(x, HLO_OPCODE_WHILE, &ts, n, init);
  hlo_computation_t *called[2] = {cond, body};
  if (!loop || !hlo_instruction_set_called(x->m, loop, 2, called)) {
    x->failed = true;
    return NULL;
  }
  return loop;
}

static hlo_instruction_t *expand_scan(expand_ctx_t *x, hlo_instruction_t *in) {
  const hlo_attrs_t *a = &in->attrs;
  int ni = (int)a->scan_inputs, nc = in->operand_count - ni;
  int nr = hlo_shape_is_tuple(&in->shape) ? in->shape.tuple_count : 1, no = nr - nc;
  int64_t d = a->dimension;
  const hlo_shape_t *first = ni ? &in->operands[0]->shape : &in->shape.tuple_shapes[0];
  int64_t n = first->dimensions[d];
  int nv = 1 + ni + nc + no;
  hlo_computation_t *outer = x->c;
  /* the loop values (init, cond's and step's parameters, step's results),
   * the body's arguments and results, the op's results */
  hlo_instruction_t **init = arena_alloc(&x->m->arena, sizeof(void *) * (size_t)(6 * nv + 1));
  if (!init) {
    x->failed = true;
    return NULL;
  }
  hlo_instruction_t **cp = init + nv, **bp = cp + nv, **next = bp + nv, **args = next + nv,
                    **results = args + nv, **out = results + nv + 1;
  init[0] = scalar(x, HLO_S32, 0, 0);
  for (int i = 0; i < ni + nc; i++) init[1 + i] = in->operands[i];
  for (int o = 0; o < no; o++) {
    const hlo_shape_t *os = hlo_shape_is_tuple(&in->shape) ? &in->shape.tuple_shapes[o] : &in->shape;
    init[1 + ni + nc + o] = splat(x, os, 0, 0);
  }
  hlo_computation_t *cond, *step;
  if (!loop_computations(x, in->name, -1, nv, init, &cond, &step, cp, bp)) return NULL;
  /* cond: i < n */
  x->c = cond;
  cond->root = compare(x, cp[0], scalar(x, HLO_S32, 0, (uint64_t)n), HLO_CMP_LT);
  /* step */
  x->c = step;
  hlo_instruction_t *i = bp[0], *pos = i;
  if (a->is_reverse)
    pos = binary(x, HLO_OPCODE_SUBTRACT, scalar(x, HLO_S32, 0, (uint64_t)(n - 1)), i);
  hlo_instruction_t *zero = scalar(x, HLO_S32, 0, 0);
  for (int k = 0; k < ni; k++) {
    hlo_instruction_t *v = bp[1 + k], *ops[1 + HLO_MAX_RANK];
    int64_t sizes[HLO_MAX_RANK];
    ops[0] = v;
    for (int e = 0; e < v->shape.rank; e++) {
      ops[1 + e] = e == d ? pos : zero;
      sizes[e] = e == d ? 1 : v->shape.dimensions[e];
    }
    hlo_shape_t ss = array_shape(v->shape.element_type, v->shape.rank, sizes);
    hlo_instruction_t *ds = emit(x, HLO_OPCODE_DYNAMIC_SLICE, &ss, 1 + v->shape.rank, ops);
    if (ds) {
      ds->attrs.slice_sizes = hlo_dims_make(x->m, sizes, v->shape.rank);
      if (!ds->attrs.slice_sizes.data) x->failed = true;
    }
    args[k] = reshape_dim(x, ds, d, false);
  }
  for (int k = 0; k < nc; k++) args[ni + k] = bp[1 + ni + k];
  for (int k = 0; k < ni + nc; k++)
    if (!args[k]) return NULL;
  if (!hlo_computation_inline(x->m, step, in->called_computations[0], args, nr > 1, results)) {
    x->failed = true;
    return NULL;
  }
  next[0] = binary(x, HLO_OPCODE_ADD, i, scalar(x, HLO_S32, 0, 1));
  for (int k = 0; k < ni; k++) next[1 + k] = bp[1 + k];
  for (int k = 0; k < nc; k++) next[1 + ni + k] = results[no + k];
  for (int o = 0; o < no; o++) {
    hlo_instruction_t *buf = bp[1 + ni + nc + o], *ops[2 + HLO_MAX_RANK];
    ops[0] = buf;
    ops[1] = reshape_dim(x, results[o], d, true);
    for (int e = 0; e < buf->shape.rank; e++) ops[2 + e] = e == d ? pos : zero;
    next[1 + ni + nc + o] = ops[1] ? emit(x, HLO_OPCODE_DYNAMIC_UPDATE_SLICE, &buf->shape, 2 + buf->shape.rank, ops)
                                   : NULL;
  }
  step->root = tuple(x, nv, next);
  x->c = outer;
  hlo_instruction_t *loop = while_loop(x, nv, init, cond, step);
  if (!loop) return NULL;
  for (int o = 0; o < no; o++) out[o] = tuple_element(x, loop, 1 + ni + nc + o);
  for (int k = 0; k < nc; k++) out[no + k] = tuple_element(x, loop, 1 + ni + k);
  return nr > 1 ? tuple(x, nr, out) : out[0];
}

/* ------------------------------------------------ blocked linear algebra */

/*
 * cholesky and triangular_solve of matrices larger than LINALG_BLOCK are
 * rewritten into LINALG_BLOCK-sized problems for their kernels
 * (codegen/emit_linalg.c, one invocation per matrix or right-hand side)
 * and dot_generals for everything between the blocks, the blocked
 * algorithms of LAPACK (potrf, trsm):
 *
 *   cholesky, left-looking, one block column [j0, j1) at a time:
 *     P    = A[j0:n, j0:j1] - L[j0:n, 0:j0] * L[j0:j1, 0:j0]^H
 *     Ljj  = cholesky(P[0:w])                      (a block kernel)
 *     Lbelow = P[w:] * Ljj^-H                      (triangular_solve, right side)
 *   triangular_solve as "M X = B" with M = op(a) (or op(a)^T for the right
 *   side, whose X and B are transposed): one block row [i0, i1) at a time
 *   in the order the substitution goes (down for a lower M, up for upper):
 *     X[i0:i1] = M[I,I]^-1 (B[i0:i1] - M[I, solved] * X[solved])
 *
 * So the n^3 / 3 (k^2 per right-hand side) products become GEMMs, each
 * kernel's serial loop stays at a block's size (lavapipe stops loops
 * after 65535 iterations: an unblocked cholesky runs ~n^3 / 6 of them, so
 * past 71 x 71 it was refused), and a GPU gets parallel work instead of
 * one invocation walking the whole matrix.  Only the triangle the op reads
 * is read: the products take blocks strictly inside it and each diagonal
 * block goes to a kernel that reads its own triangle.  The sums are the
 * same sums in another order (the spec fixes none; the result is the same
 * up to rounding).  A non-positive pivot gives NaNs from its block on, as
 * before.
 */
#define LINALG_BLOCK 64

static bool is_blocked_linalg(const hlo_instruction_t *in) {
  const hlo_shape_t *s = in->opcode == HLO_OPCODE_CHOLESKY ? &in->shape : &in->operands[0]->shape;
  return s->rank >= 2 && s->dimensions[s->rank - 1] > LINALG_BLOCK;
}

/* a[..., r0:r1, c0:c1]: a slice of the two minor dimensions. */
static hlo_instruction_t *slice_minor(expand_ctx_t *x, hlo_instruction_t *a, int64_t r0, int64_t r1,
                                      int64_t c0, int64_t c1) {
  if (!a) return NULL;
  int r = a->shape.rank;
  int64_t start[HLO_MAX_RANK] = {0}, limit[HLO_MAX_RANK];
  for (int d = 0; d < r; d++) limit[d] = a->shape.dimensions[d];
  start[r - 2] = r0, limit[r - 2] = r1, start[r - 1] = c0, limit[r - 1] = c1;
  return slice_(x, a, start, limit);
}

/* a with a[..., r0:, c0:] replaced by |piece| (a dynamic_update_slice at
 * constant starts: in place where a's buffer may be reused). */
static hlo_instruction_t *update_minor(expand_ctx_t *x, hlo_instruction_t *a, hlo_instruction_t *piece, int64_t r0,
                                       int64_t c0) {
  if (!a || !piece) return NULL;
  int r = a->shape.rank;
  hlo_instruction_t *ops[2 + HLO_MAX_RANK] = {a, piece};
  for (int d = 0; d < r; d++)
    ops[2 + d] = scalar(x, HLO_S32, 0, (uint64_t)(d == r - 2 ? r0 : d == r - 1 ? c0 : 0));
  return emit(x, HLO_OPCODE_DYNAMIC_UPDATE_SLICE, &a->shape, 2 + r, ops);
}

/* a with its two minor dimensions swapped. */
static hlo_instruction_t *transpose_minor(expand_ctx_t *x, hlo_instruction_t *a) {
  return a ? swap_dims(x, a, a->shape.rank - 2, a->shape.rank - 1) : NULL;
}

/* The real part of a (a itself for real types). */
static hlo_instruction_t *real_part(expand_ctx_t *x, hlo_instruction_t *a) {
  if (!a || !hlo_element_type_is_complex(a->shape.element_type)) return a;
  hlo_shape_t ps = with_type(&a->shape, hlo_element_type_real(a->shape.element_type));
  return emit(x, HLO_OPCODE_REAL, &ps, 1, &a);
}

/* The real v as a value of type |t|: complex(v, 0) for a complex t, v
 * itself otherwise. */
static hlo_instruction_t *real_as(expand_ctx_t *x, hlo_instruction_t *v, hlo_element_type_t t) {
  if (!v || !hlo_element_type_is_complex(t)) return v;
  hlo_shape_t cs = with_type(&v->shape, t);
  hlo_instruction_t *ops[2] = {v, splat(x, &v->shape, 0, 0)};
  return emit(x, HLO_OPCODE_COMPLEX, &cs, 2, ops);
}

/* The complex conjugate of a (a itself for real types). */
static hlo_instruction_t *conjugate(expand_ctx_t *x, hlo_instruction_t *a) {
  if (!a || !hlo_element_type_is_complex(a->shape.element_type)) return a;
  hlo_shape_t ps = with_type(&a->shape, hlo_element_type_real(a->shape.element_type));
  hlo_instruction_t *ops[2] = {real_part(x, a), unary(x, HLO_OPCODE_NEGATE, emit(x, HLO_OPCODE_IMAG, &ps, 1, &a))};
  return emit(x, HLO_OPCODE_COMPLEX, &a->shape, 2, ops);
}

/* The most operands of one concatenate built here: its kernel binds each
 * (lavapipe offers 32 storage buffers per stage, most GPUs more). */
#define CONCAT_MAX 16

/* concatenate(v[0..n), dimension = dim) (v[0] alone when n is 1); past
 * CONCAT_MAX operands, concatenations of concatenations. */
static hlo_instruction_t *concat(expand_ctx_t *x, int n, hlo_instruction_t *const *v, int dim) {
  if (n == 1) return v[0];
  if (n > CONCAT_MAX) {
    int groups = (n + CONCAT_MAX - 1) / CONCAT_MAX;
    hlo_instruction_t **parts = arena_alloc(&x->m->arena, sizeof(void *) * (size_t)groups);
    if (!parts) {
      x->failed = true;
      return NULL;
    }
    for (int g = 0; g < groups; g++)
      parts[g] = concat(x, n - g * CONCAT_MAX < CONCAT_MAX ? n - g * CONCAT_MAX : CONCAT_MAX, v + g * CONCAT_MAX, dim);
    return concat(x, groups, parts, dim);
  }
  for (int i = 0; i < n; i++)
    if (!v[i]) return NULL;
  hlo_shape_t s = v[0]->shape;
  for (int i = 1; i < n; i++) s.dimensions[dim] += v[i]->shape.dimensions[dim];
  s = array_shape(s.element_type, s.rank, s.dimensions);
  hlo_instruction_t *in = emit(x, HLO_OPCODE_CONCATENATE, &s, n, v);
  if (in) in->attrs.dimension = dim;
  return in;
}

/* ------------------------------------------ lhs-dilated convolutions */

/* A convolution with lhs dilation s > 1 (a transposed convolution, or the
 * input gradient of a strided one) reads zeros at s - 1 of every s input
 * positions: its kernel would spend (s - 1) / s of its taps (per dilated
 * dimension) on them.  Split by output phase instead: output o = s q + r
 * reads, of the taps k, only those with (r + k - lo) % s == 0, i.e. k =
 * k0 + s j, k0 = (lo - r) mod s, at input q + j + c, c = (r + k0 - lo) /
 * s.  So phase r is a plain convolution (no dilation) of the input with the
 * kernel's taps k0, k0 + s, .. (a strided slice), padded by -c below (a
 * slice of the input where negative) and enough above for its
 * ceil((OH - r) / s) outputs; the phases' outputs are interleaved along
 * each dimension (a concatenate on a new minor dimension, reshaped into
 * it).  The same products in the same order, without the zero ones.  Only
 * for window strides and rhs dilations of 1 and no reversal, at most
 * CONV_MAX_PHASES phases. */
#define CONV_MAX_PHASES 16

static bool is_lhs_dilated_conv(const hlo_instruction_t *in) {
  const hlo_attrs_t *a = &in->attrs;
  int n = a->input_spatial_dimensions.count;
  if (in->opcode != HLO_OPCODE_CONVOLUTION || hlo_shape_is_tuple(&in->shape) || a->lhs_dilation.count != n ||
      a->padding.count != 2 * n)
    return false;
  int64_t phases = 1;
  for (int i = 0; i < n; i++) {
    if ((a->window_strides.count && a->window_strides.data[i] != 1) ||
        (a->rhs_dilation.count && a->rhs_dilation.data[i] != 1) ||
        (a->window_reversal.count && a->window_reversal.data[i] != 0) || a->lhs_dilation.data[i] < 1)
      return false;
    phases *= a->lhs_dilation.data[i];
    if (phases > CONV_MAX_PHASES) return false;
  }
  return phases > 1;
}

/* a[start:limit:step] along dimension |d| */
static hlo_instruction_t *slice_step(expand_ctx_t *x, hlo_instruction_t *a, int d, int64_t start, int64_t limit,
                                     int64_t step) {
  if (!a) return NULL;
  int64_t lo[HLO_MAX_RANK] = {0}, hi[HLO_MAX_RANK], st[HLO_MAX_RANK];
  for (int i = 0; i < a->shape.rank; i++) hi[i] = a->shape.dimensions[i], st[i] = 1;
  lo[d] = start, hi[d] = limit, st[d] = step;
  return slice_steps(x, a, lo, hi, st);
}

/* Phase |phase| (its r per spatial dimension, row-major over them) of
 * the lhs-dilated convolution |in|: the plain convolution of its outputs
 * s q + r, or zeros where no tap reaches an input. */
static hlo_instruction_t *conv_phase(expand_ctx_t *x, hlo_instruction_t *in, int64_t phase) {
  const hlo_attrs_t *a = &in->attrs;
  int n = a->input_spatial_dimensions.count;
  hlo_instruction_t *lhs = in->operands[0], *rhs = in->operands[1];
  hlo_shape_t out = in->shape;
  int64_t pad[2 * HLO_MAX_RANK], ones[HLO_MAX_RANK], rs[HLO_MAX_RANK];
  bool empty = false;
  for (int i = n - 1; i >= 0; i--) {
    int64_t sd = a->lhs_dilation.data[i];
    rs[i] = phase % sd;
    phase /= sd;
  }
  for (int i = 0; i < n; i++) {
    int64_t sd = a->lhs_dilation.data[i], r = rs[i], lo = a->padding.data[2 * i];
    int64_t ld = a->input_spatial_dimensions.data[i], kd = a->kernel_spatial_dimensions.data[i];
    int64_t od = a->output_spatial_dimensions.data[i];
    int64_t h = lhs->shape.dimensions[ld], k = rhs->shape.dimensions[kd], oh = in->shape.dimensions[od];
    int64_t k0 = ((lo - r) % sd + sd) % sd, taps = k > k0 ? (k - k0 + sd - 1) / sd : 0;
    int64_t q = oh > r ? (oh - r + sd - 1) / sd : 0, plo = -((r + k0 - lo) / sd);
    int64_t phi = q - h - plo + taps - 1;
    out.dimensions[od] = q;
    ones[i] = 1;
    /* negative padding: the input cropped instead */
    int64_t from = plo < 0 ? -plo : 0, to = h - (phi < 0 ? -phi : 0);
    if (taps == 0 || q == 0 || to <= from) {
      empty = true;
      continue;
    }
    if (from > 0 || to < h) lhs = slice_dim(x, lhs, (int)ld, from, to);
    pad[2 * i] = plo > 0 ? plo : 0, pad[2 * i + 1] = phi > 0 ? phi : 0;
    if (taps < k || k0 > 0) rhs = slice_step(x, rhs, (int)kd, k0, k0 + (taps - 1) * sd + 1, sd);
  }
  out = array_shape(out.element_type, out.rank, out.dimensions);
  if (empty) return splat(x, &out, 0, 0);
  hlo_instruction_t *ops[2] = {lhs, rhs};
  hlo_instruction_t *c = emit(x, HLO_OPCODE_CONVOLUTION, &out, 2, ops);
  if (!c) return NULL;
  c->attrs = in->attrs;
  c->attrs.padding = dims_of(x, pad, 2 * n);
  c->attrs.lhs_dilation = dims_of(x, ones, n);
  return c;
}

/* v[0..s) (phases r of output dimension |d|, sizes ceil((oh - r) / s))
 * interleaved into one of size oh: element s q + r from v[r][q]. */
static hlo_instruction_t *interleave(expand_ctx_t *x, hlo_instruction_t **v, int64_t s, int d, int64_t oh) {
  int64_t q = (oh + s - 1) / s;
  hlo_instruction_t *parts[CONV_MAX_PHASES] = {0};
  int r = v[0] ? v[0]->shape.rank : 0;
  for (int64_t i = 0; i < s; i++) {
    if (!v[i]) return NULL;
    hlo_instruction_t *p = pad_dim(x, v[i], d, 0, q - v[i]->shape.dimensions[d], scalar(x, v[i]->shape.element_type, 0, 0));
    int64_t dims[HLO_MAX_RANK];
    for (int j = 0, o = 0; j < r; j++) {
      dims[o++] = v[i]->shape.dimensions[j];
      if (j == d) dims[o - 1] = q, dims[o++] = 1;
    }
    parts[i] = reshape_to(x, p, r + 1, dims);
  }
  hlo_instruction_t *c = concat(x, (int)s, parts, d + 1);
  int64_t dims[HLO_MAX_RANK];
  for (int j = 0; j < r; j++) dims[j] = v[0]->shape.dimensions[j];
  dims[d] = q * s;
  return slice_dim(x, reshape_to(x, c, r, dims), d, 0, oh);
}

static hlo_instruction_t *expand_lhs_dilated_conv(expand_ctx_t *x, hlo_instruction_t *in) {
  const hlo_attrs_t *a = &in->attrs;
  int n = a->input_spatial_dimensions.count;
  int64_t count = 1;
  for (int i = 0; i < n; i++) count *= a->lhs_dilation.data[i];
  hlo_instruction_t *v[CONV_MAX_PHASES];
  for (int64_t p = 0; p < count; p++) v[p] = conv_phase(x, in, p);
  /* the last dimension's phases are neighbours in v: interleave them,
   * then the one before's */
  for (int i = n - 1; i >= 0; i--) {
    int64_t sd = a->lhs_dilation.data[i];
    if (sd == 1) continue;
    int od = (int)a->output_spatial_dimensions.data[i];
    for (int64_t g = 0; g < count / sd; g++) v[g] = interleave(x, v + g * sd, sd, od, in->shape.dimensions[od]);
    count /= sd;
  }
  return v[0];
}

/* --------------------------------------- wide-window convolutions */

/* A convolution with few output positions and a window much larger (a
 * weight gradient: JAX's transpose of a convolution in its rhs slides the
 * output gradient over the whole input, 3 x 3 positions of a 56 x 56
 * window) gives the conv kernels a few outputs of very long sums: ~5
 * GFLOP/s on lavapipe.  Instead the lhs windows of the P positions are
 * stacked (im2col: a concatenate of strided slices of the padded lhs, P
 * windows) and contracted with the rhs in one dot_general, [P, batch] x
 * [out features], which the GEMM kernels run; then reshaped and
 * transposed into the output's layout.  For feature and batch groups of
 * 1, no lhs dilation or reversal, at most CONV_IM2COL_POSITIONS positions,
 * the window at least twice their count, and the stacked windows within
 * CONV_IM2COL_ELEMENTS. */
#define CONV_IM2COL_POSITIONS 64
#define CONV_IM2COL_ELEMENTS (32ll << 20)

/* Few output positions (at most CONV_IM2COL_POSITIONS), the window at
 * least twice their count, no lhs dilation or reversal; feature groups of
 * 1.  The stacked windows' element count into *stacked. */
static bool wide_window(const hlo_instruction_t *in, int64_t *stacked) {
  const hlo_attrs_t *a = &in->attrs;
  int n = a->input_spatial_dimensions.count;
  if (in->opcode != HLO_OPCODE_CONVOLUTION || hlo_shape_is_tuple(&in->shape) || n < 1 ||
      a->padding.count != 2 * n || a->feature_group_count > 1)
    return false;
  const hlo_shape_t *ls = &in->operands[0]->shape, *ks = &in->operands[1]->shape;
  int64_t positions = 1, window = 1;
  for (int i = 0; i < n; i++) {
    if ((a->lhs_dilation.count && a->lhs_dilation.data[i] != 1) ||
        (a->window_reversal.count && a->window_reversal.data[i] != 0))
      return false;
    positions *= in->shape.dimensions[a->output_spatial_dimensions.data[i]];
    window *= ks->dimensions[a->kernel_spatial_dimensions.data[i]];
  }
  int64_t per_window = hlo_shape_element_count(ls);
  for (int i = 0; i < n; i++) {
    int64_t h = ls->dimensions[a->input_spatial_dimensions.data[i]];
    int64_t k = ks->dimensions[a->kernel_spatial_dimensions.data[i]];
    per_window = h ? per_window / h * k : 0;
  }
  *stacked = positions * per_window;
  return positions >= 1 && positions <= CONV_IM2COL_POSITIONS && window >= 2 * positions;
}

static bool is_wide_window_conv(const hlo_instruction_t *in) {
  int64_t stacked;
  return wide_window(in, &stacked) && in->attrs.batch_group_count <= 1 && stacked <= CONV_IM2COL_ELEMENTS;
}

/* The lhs window of output position |p| (row-major over the output's
 * spatial dimensions |oh|) in the padded lhs: strided slices. */
static hlo_instruction_t *window_at(expand_ctx_t *x, const hlo_instruction_t *in, hlo_instruction_t *padded,
                                    const int64_t *oh, int64_t p) {
  const hlo_attrs_t *a = &in->attrs;
  hlo_instruction_t *w = padded;
  for (int64_t i = a->input_spatial_dimensions.count - 1, rest = p; i >= 0; i--) {
    int64_t o = rest % oh[i], st = a->window_strides.count ? a->window_strides.data[i] : 1;
    int64_t d = a->rhs_dilation.count ? a->rhs_dilation.data[i] : 1;
    int64_t k = in->operands[1]->shape.dimensions[a->kernel_spatial_dimensions.data[i]];
    rest /= oh[i];
    w = slice_step(x, w, (int)a->input_spatial_dimensions.data[i], o * st, o * st + (k - 1) * d + 1, d);
  }
  return w;
}

/* The padded lhs of |in|, its output's spatial sizes into oh[] and their
 * product (the positions) into *positions. */
static hlo_instruction_t *padded_lhs(expand_ctx_t *x, const hlo_instruction_t *in, int64_t *oh, int64_t *positions) {
  const hlo_attrs_t *a = &in->attrs;
  hlo_instruction_t *lhs = in->operands[0];
  int64_t lo[HLO_MAX_RANK] = {0}, hi[HLO_MAX_RANK] = {0};
  *positions = 1;
  for (int i = 0; i < a->input_spatial_dimensions.count; i++) {
    lo[a->input_spatial_dimensions.data[i]] = a->padding.data[2 * i];
    hi[a->input_spatial_dimensions.data[i]] = a->padding.data[2 * i + 1];
    oh[i] = in->shape.dimensions[a->output_spatial_dimensions.data[i]];
    *positions *= oh[i];
  }
  return pad_(x, lhs, lo, hi, scalar(x, lhs->shape.element_type, 0, 0));
}

/* [spatial..., batch, features] (a reshape of the P positions' results)
 * permuted into the output's order. */
static hlo_instruction_t *to_output_order(expand_ctx_t *x, const hlo_instruction_t *in, hlo_instruction_t *v,
                                          const int64_t *oh) {
  const hlo_attrs_t *a = &in->attrs;
  int n = a->input_spatial_dimensions.count;
  int64_t sd[HLO_MAX_RANK], perm[HLO_MAX_RANK];
  for (int i = 0; i < n; i++) sd[i] = oh[i], perm[a->output_spatial_dimensions.data[i]] = i;
  sd[n] = in->shape.dimensions[a->output_batch_dimension];
  sd[n + 1] = in->shape.dimensions[a->output_feature_dimension];
  perm[a->output_batch_dimension] = n, perm[a->output_feature_dimension] = n + 1;
  return permute(x, reshape_to(x, v, n + 2, sd), perm);
}

static hlo_instruction_t *expand_wide_window_conv(expand_ctx_t *x, hlo_instruction_t *in) {
  const hlo_attrs_t *a = &in->attrs;
  int n = a->input_spatial_dimensions.count;
  hlo_instruction_t *lhs = in->operands[0], *rhs = in->operands[1];
  int64_t oh[HLO_MAX_RANK], positions;
  hlo_instruction_t *padded = padded_lhs(x, in, oh, &positions);
  hlo_instruction_t **windows = arena_alloc(&x->m->arena, sizeof(void *) * (size_t)positions);
  if (!windows || !padded) {
    x->failed = true;
    return NULL;
  }
  for (int64_t p = 0; p < positions; p++) {
    hlo_instruction_t *w = window_at(x, in, padded, oh, p);
    if (!w) return NULL;
    int64_t dims[HLO_MAX_RANK];
    dims[0] = 1;
    for (int j = 0; j < w->shape.rank; j++) dims[1 + j] = w->shape.dimensions[j];
    windows[p] = reshape_to(x, w, w->shape.rank + 1, dims);
  }
  hlo_instruction_t *cols = concat(x, (int)positions, windows, 0);
  /* [P, lhs dims] x rhs: the lhs feature and window dimensions against the
   * kernel's input feature and window dimensions -> [P, batch, out features] */
  int64_t lc[HLO_MAX_RANK], rc[HLO_MAX_RANK];
  lc[0] = 1 + a->input_feature_dimension, rc[0] = a->kernel_input_feature_dimension;
  for (int i = 0; i < n; i++)
    lc[1 + i] = 1 + a->input_spatial_dimensions.data[i], rc[1 + i] = a->kernel_spatial_dimensions.data[i];
  int64_t dd[3] = {positions, lhs->shape.dimensions[a->input_batch_dimension],
                   rhs->shape.dimensions[a->kernel_output_feature_dimension]};
  hlo_shape_t ds = array_shape(in->shape.element_type, 3, dd);
  hlo_instruction_t *ops[2] = {cols, rhs};
  hlo_instruction_t *dot = cols ? emit(x, HLO_OPCODE_DOT_GENERAL, &ds, 2, ops) : NULL;
  if (!dot) return NULL;
  dot->attrs.lhs_contracting_dimensions = dims_of(x, lc, 1 + n);
  dot->attrs.rhs_contracting_dimensions = dims_of(x, rc, 1 + n);
  return to_output_order(x, in, dot, oh);
}

/* Depthwise weight gradients.  JAX's transpose of a depthwise convolution
 * (feature_group_count C) in its rhs is a wide-window convolution with
 * batch_group_count C, where each of the C lhs "batches" (the input's
 * channels) meets one output feature: out[p, c] = sum over the lhs
 * features f (the forward batch) and the window w of
 * lhs[c, f, window p + w] * rhs[f, w, c].  The conv kernels do not take
 * batch groups; per element it ran 0.1 GMAC/s on lavapipe (8 x 56 x 56 x
 * 128, 3 x 3 taps: 273 ms).  Instead, per position, the window's slice of
 * the padded lhs, transposed into the rhs's order, is multiplied by the
 * rhs and reduced over the window, keeping f and c (parallel over f x c;
 * the lanes of a column reduction share word loads), the P results
 * stacked and reduced over f.  16-bit floats are summed in f32 and
 * rounded once, as the conv kernels do; the sums run in another order
 * (the spec leaves it to the implementation).  For batch groups whose
 * lhs batch and kernel output features both equal the group count, float
 * element types all equal, and the wide-window conditions. */
static bool is_depthwise_grad_conv(const hlo_instruction_t *in) {
  int64_t stacked, g = in->attrs.batch_group_count;
  if (g <= 1 || !wide_window(in, &stacked)) return false;
  const hlo_shape_t *ls = &in->operands[0]->shape, *ks = &in->operands[1]->shape;
  hlo_element_type_t t = in->shape.element_type;
  return ls->dimensions[in->attrs.input_batch_dimension] == g &&
         ks->dimensions[in->attrs.kernel_output_feature_dimension] == g && hlo_element_type_is_float(t) &&
         ls->element_type == t && ks->element_type == t;
}

static hlo_instruction_t *expand_depthwise_grad_conv(expand_ctx_t *x, hlo_instruction_t *in) {
  const hlo_attrs_t *a = &in->attrs;
  int n = a->input_spatial_dimensions.count, r = in->operands[1]->shape.rank;
  hlo_element_type_t t = in->shape.element_type;
  hlo_element_type_t ct = hlo_element_type_size_bytes(t) < 4 ? HLO_F32 : t;
  hlo_instruction_t *rhs = in->operands[1];
  if (ct != t) rhs = convert(x, rhs, ct);
  int64_t oh[HLO_MAX_RANK], positions;
  hlo_instruction_t *padded = padded_lhs(x, in, oh, &positions);
  hlo_instruction_t **parts = arena_alloc(&x->m->arena, sizeof(void *) * (size_t)positions);
  if (!parts || !padded) {
    x->failed = true;
    return NULL;
  }
  /* the lhs window in the rhs's dimension order; the window dimensions
   * reduced first (ascending), then the input features' */
  int64_t perm[HLO_MAX_RANK], window[HLO_MAX_RANK];
  perm[a->kernel_output_feature_dimension] = a->input_batch_dimension;
  perm[a->kernel_input_feature_dimension] = a->input_feature_dimension;
  for (int i = 0; i < n; i++) perm[a->kernel_spatial_dimensions.data[i]] = a->input_spatial_dimensions.data[i];
  for (int d = 0, k = 0; d < r; d++)
    if (d != a->kernel_output_feature_dimension && d != a->kernel_input_feature_dimension) window[k++] = d;
  int64_t fi = a->kernel_input_feature_dimension < a->kernel_output_feature_dimension ? 0 : 1;
  for (int64_t p = 0; p < positions; p++) {
    hlo_instruction_t *w = permute(x, window_at(x, in, padded, oh, p), perm);
    if (ct != t) w = convert(x, w, ct);
    hlo_instruction_t *s = sum_over(x, binary(x, HLO_OPCODE_MULTIPLY, w, rhs), n, window);
    if (!s) return NULL;
    int64_t dims[3] = {1, s->shape.dimensions[0], s->shape.dimensions[1]};
    parts[p] = reshape_to(x, s, 3, dims);
  }
  int64_t f = 1 + fi;
  hlo_instruction_t *sums = sum_over(x, concat(x, (int)positions, parts, 0), 1, &f);
  if (ct != t) sums = convert(x, sums, t);
  return to_output_order(x, in, sums, oh);
}

/* Grouped weight gradients (batch_group_count G with several lhs
 * "batches" or output features per group: the transpose of a grouped
 * convolution, ResNeXt's): per position, one dot_general batched over the
 * groups, [G, B/G, window] x [G, window, O/G], stacked and put in the
 * output's order.  For f32, the wide-window conditions. */
static bool is_grouped_grad_conv(const hlo_instruction_t *in) {
  int64_t stacked, g = in->attrs.batch_group_count;
  if (g <= 1 || !wide_window(in, &stacked) || is_depthwise_grad_conv(in)) return false;
  const hlo_shape_t *ls = &in->operands[0]->shape, *ks = &in->operands[1]->shape;
  return in->shape.element_type == HLO_F32 && ls->element_type == HLO_F32 && ks->element_type == HLO_F32 &&
         ls->rank < HLO_MAX_RANK && ks->rank < HLO_MAX_RANK && ls->dimensions[in->attrs.input_batch_dimension] % g == 0 &&
         ks->dimensions[in->attrs.kernel_output_feature_dimension] % g == 0;
}

/* |a| with dimension |d| split into [g, size / g]. */
static hlo_instruction_t *split_groups(expand_ctx_t *x, hlo_instruction_t *a, int64_t d, int64_t g) {
  int64_t dims[HLO_MAX_RANK];
  for (int i = 0, o = 0; a && i < a->shape.rank; i++) {
    dims[o++] = a->shape.dimensions[i];
    if (i == d) dims[o - 1] = g, dims[o++] = a->shape.dimensions[i] / g;
  }
  return a ? reshape_to(x, a, a->shape.rank + 1, dims) : NULL;
}

static hlo_instruction_t *expand_grouped_grad_conv(expand_ctx_t *x, hlo_instruction_t *in) {
  const hlo_attrs_t *a = &in->attrs;
  int n = a->input_spatial_dimensions.count;
  int64_t g = a->batch_group_count, b = a->input_batch_dimension, ko = a->kernel_output_feature_dimension;
  int64_t bg = in->operands[0]->shape.dimensions[b] / g, og = in->operands[1]->shape.dimensions[ko] / g;
  int64_t oh[HLO_MAX_RANK], positions;
  hlo_instruction_t *padded = padded_lhs(x, in, oh, &positions);
  hlo_instruction_t *rhs = split_groups(x, in->operands[1], ko, g);
  hlo_instruction_t **parts = arena_alloc(&x->m->arena, sizeof(void *) * (size_t)positions);
  if (!parts || !padded || !rhs) {
    x->failed = true;
    return NULL;
  }
  /* dimensions after the split one move up by one */
  int64_t lb = b, rb = ko, lc[HLO_MAX_RANK], rc[HLO_MAX_RANK];
  lc[0] = a->input_feature_dimension + (a->input_feature_dimension > b);
  rc[0] = a->kernel_input_feature_dimension + (a->kernel_input_feature_dimension > ko);
  for (int i = 0; i < n; i++) {
    lc[1 + i] = a->input_spatial_dimensions.data[i] + (a->input_spatial_dimensions.data[i] > b);
    rc[1 + i] = a->kernel_spatial_dimensions.data[i] + (a->kernel_spatial_dimensions.data[i] > ko);
  }
  int64_t dd[4] = {1, g, bg, og};
  hlo_shape_t ds = array_shape(HLO_F32, 3, dd + 1);
  for (int64_t p = 0; p < positions; p++) {
    hlo_instruction_t *ops[2] = {split_groups(x, window_at(x, in, padded, oh, p), b, g), rhs};
    hlo_instruction_t *dot = ops[0] ? emit(x, HLO_OPCODE_DOT_GENERAL, &ds, 2, ops) : NULL;
    if (!dot) return NULL;
    dot->attrs.lhs_batching_dimensions = dims_of(x, &lb, 1);
    dot->attrs.rhs_batching_dimensions = dims_of(x, &rb, 1);
    dot->attrs.lhs_contracting_dimensions = dims_of(x, lc, 1 + n);
    dot->attrs.rhs_contracting_dimensions = dims_of(x, rc, 1 + n);
    parts[p] = reshape_to(x, dot, 4, dd);
  }
  /* [P, G, B/G, O/G] -> [P, B/G, G, O/G] -> [P, B/G, O] */
  int64_t perm[4] = {0, 2, 1, 3}, flat[3] = {positions, bg, g * og};
  hlo_instruction_t *all = permute(x, concat(x, (int)positions, parts, 0), perm);
  return to_output_order(x, in, reshape_to(x, all, 3, flat), oh);
}

/* ------------------------------------------- convolutions as products */

/* A 1 x 1 convolution (no padding or lhs dilation, one group) is a
 * product: out[.., o] = sum over c of lhs[.., c] * w[c, o], over the
 * lhs's strided slice where it has strides (ResNet's projection
 * shortcuts: 56x56x256 -> 28x28x512 3.7 -> 2.2 ms on lavapipe).  Where
 * the output keeps the lhs's dimension order with the features last
 * (NHWC / HWIO, as JAX and TensorFlow export it) it becomes dot_general
 * (lhs, w as [C, O] or [O, C]) contracting the features, whose result is
 * the output as it stands, so the epilogue (bias, batch norm, activation,
 * residual) fuses into the GEMM kernel's as it did into the conv
 * kernel's.  The GEMM kernels take these shapes better where there are
 * at least CONV_GEMM_FEATURES output features: lavapipe, same run,
 * best of three, MobileNetV2's 7x7x960->160 0.45 -> 0.29 ms, 14x14x576->96
 * 0.52 -> 0.38, 112x112x16->96 2.1 -> 1.8, 28x28x192->32 0.36 -> 0.34;
 * MobileNetV2 NHWC 24.4 -> 22.1 ms per execution, and ResNet-50 NHWC
 * 165 -> 124 ms with the taps below.  With fewer features the
 * conv kernel's tiles fit better (56x56x144->24 0.54 ms against 1.1 as a
 * GEMM, 112x112x32->16 0.47 against 1.1).  The same sums in the same
 * order (f32 only).
 *
 * A small window (at most CONV_GEMM_TAPS taps) over few output pixels (at
 * most CONV_GEMM_ROWS, at least CONV_GEMM_MIN_ROWS: ResNet-50's 14 x 14
 * and 7 x 7 stages) is a sum of
 * such products, one per tap, over strided slices of the padded lhs,
 * added in tap order (each product's epilogue adds the previous sum): a
 * 3 x 3 14x14x256->256 4.5 -> 2.9 ms, 7x7x512->512 4.6 -> 3.7; at 28 x 28
 * the conv kernel is as fast, at 56 x 56 faster (3.6 against 4.1 ms).
 * The taps' sums are added in another order than the conv kernel's (the
 * spec leaves it to the implementation).
 *
 * On CPU devices with the CPU GEMM and the conv kernels' default choice
 * (GPUs keep conv_gpu.glsl: unmeasured). */
#define CONV_GEMM_FEATURES 32
#define CONV_GEMM_TAPS 9
#define CONV_GEMM_ROWS 256
/* and at least this many: fusion.c keeps a pad out of a GEMM operand only
 * for products of more than 16 rows (gemm_unreadable); smaller ones would
 * take the per-element dot */
#define CONV_GEMM_MIN_ROWS 32

/* The taps of a convolution run as products (above), or 0. */
static int64_t gemm_conv_taps(const expand_ctx_t *x, const hlo_instruction_t *in) {
  const hlo_attrs_t *a = &in->attrs;
  int n = a->input_spatial_dimensions.count;
  const codegen_target_t *t = x->target;
  if (!t || !t->is_cpu || t->conv != CODEGEN_CONV_AUTO || t->gemm == CODEGEN_GEMM_OFF || codegen_target_gemm_gpu(t) ||
      in->opcode != HLO_OPCODE_CONVOLUTION || hlo_shape_is_tuple(&in->shape) || n < 1 ||
      a->padding.count != 2 * n || a->feature_group_count != 1 || a->batch_group_count != 1)
    return 0;
  const hlo_shape_t *ls = &in->operands[0]->shape, *ks = &in->operands[1]->shape;
  int64_t o = ks->dimensions[a->kernel_output_feature_dimension];
  if (in->shape.element_type != HLO_F32 || ls->element_type != HLO_F32 || ks->element_type != HLO_F32 ||
      o < CONV_GEMM_FEATURES)
    return 0;
  int64_t taps = 1;
  bool padded = false;
  for (int i = 0; i < n; i++) {
    if (dim_or(a->window_strides, i, 1) < 1 || dim_or(a->lhs_dilation, i, 1) != 1 ||
        (a->window_reversal.count && a->window_reversal.data[i]))
      return 0;
    taps *= ks->dimensions[a->kernel_spatial_dimensions.data[i]];
    padded |= a->padding.data[2 * i] != 0 || a->padding.data[2 * i + 1] != 0;
  }
  int64_t rows = hlo_shape_element_count(&in->shape) / o;
  if (taps < 1 || (taps == 1 && padded) || taps > CONV_GEMM_TAPS ||
      (taps > 1 && (rows > CONV_GEMM_ROWS || rows < CONV_GEMM_MIN_ROWS)))
    return 0;
  /* the output: the lhs's batch and spatial dimensions in the lhs's order,
   * then the features */
  int r = in->shape.rank, next = 0;
  if (a->output_feature_dimension != r - 1) return 0;
  for (int d = 0; d < ls->rank; d++) {
    if (d == a->input_feature_dimension) continue;
    int64_t od = d == a->input_batch_dimension ? a->output_batch_dimension : -1;
    for (int i = 0; i < n; i++)
      if (a->input_spatial_dimensions.data[i] == d) od = a->output_spatial_dimensions.data[i];
    if (od != next++) return 0;
  }
  return taps;
}

static bool is_gemm_conv(const expand_ctx_t *x, const hlo_instruction_t *in) { return gemm_conv_taps(x, in) > 0; }

static hlo_instruction_t *expand_gemm_conv(expand_ctx_t *x, hlo_instruction_t *in) {
  const hlo_attrs_t *a = &in->attrs;
  int n = a->input_spatial_dimensions.count;
  hlo_instruction_t *w = in->operands[1], *lhs = in->operands[0];
  int64_t ki = a->kernel_input_feature_dimension, ko = a->kernel_output_feature_dimension, taps = gemm_conv_taps(x, in);
  int64_t dims[2] = {w->shape.dimensions[ki < ko ? ki : ko], w->shape.dimensions[ki < ko ? ko : ki]};
  int64_t lc = a->input_feature_dimension, rc = ki < ko ? 0 : 1;
  int64_t oh[HLO_MAX_RANK], positions;
  if (taps > 1) lhs = padded_lhs(x, in, oh, &positions); /* a 1x1 one has no padding */
  hlo_instruction_t *sum = NULL;
  for (int64_t t = 0; t < taps && lhs; t++) { /* tap t, row-major over the window */
    int64_t start[HLO_MAX_RANK] = {0}, limit[HLO_MAX_RANK], step[HLO_MAX_RANK];
    int64_t wstart[HLO_MAX_RANK] = {0}, wlimit[HLO_MAX_RANK];
    for (int d = 0; d < lhs->shape.rank; d++) limit[d] = lhs->shape.dimensions[d], step[d] = 1;
    for (int d = 0; d < w->shape.rank; d++) wlimit[d] = w->shape.dimensions[d];
    for (int i = n - 1, rest = (int)t; i >= 0; i--) {
      int64_t kd = a->kernel_spatial_dimensions.data[i], k = w->shape.dimensions[kd], tap = rest % k;
      int64_t d = a->input_spatial_dimensions.data[i], st = dim_or(a->window_strides, i, 1);
      rest /= (int)k;
      start[d] = tap * dim_or(a->rhs_dilation, i, 1);
      step[d] = st;
      limit[d] = start[d] + (in->shape.dimensions[a->output_spatial_dimensions.data[i]] - 1) * st + 1;
      wstart[kd] = tap, wlimit[kd] = tap + 1;
    }
    hlo_instruction_t *ops[2] = {slice_steps(x, lhs, start, limit, step),
                                 reshape_to(x, slice_(x, w, wstart, wlimit), 2, dims)};
    hlo_instruction_t *dot = ops[0] && ops[1] ? emit(x, HLO_OPCODE_DOT_GENERAL, &in->shape, 2, ops) : NULL;
    if (!dot) return NULL;
    dot->attrs.lhs_contracting_dimensions = dims_of(x, &lc, 1);
    dot->attrs.rhs_contracting_dimensions = dims_of(x, &rc, 1);
    sum = sum ? binary(x, HLO_OPCODE_ADD, sum, dot) : dot;
  }
  return sum;
}

/* ----------------------------------- convolutions of 3+ spatial dims */

/* The conv kernels take one or two spatial dimensions; a 3-D convolution
 * (video, volumetric models) ran one invocation per output element (~2
 * GFLOP/s on lavapipe).  Split along its first spatial dimension (depth)
 * instead: for each of the kernel's K depth taps, the input's depth slice
 * that tap reads (padded, strided and dilated as the window says) with
 * depth merged into the batch dimension, convolved in 2-D with that tap's
 * kernel slice; the K results summed (in f32 for 16-bit float results,
 * rounded once), the output's depth split back out of its batch.  More
 * spatial dimensions peel one per step (the new convolutions expand in
 * turn).  Transposes bring depth next to batch where the layout has them
 * apart (NCDHW); simplify drops the identity ones (NDHWC).  For batch
 * groups of 1, no lhs dilation along depth, at most CONV_DEPTH_TAPS taps. */
#define CONV_DEPTH_TAPS 16

static bool is_deep_conv(const hlo_instruction_t *in) {
  const hlo_attrs_t *a = &in->attrs;
  int n = a->input_spatial_dimensions.count;
  if (in->opcode != HLO_OPCODE_CONVOLUTION || hlo_shape_is_tuple(&in->shape) || n < 3 ||
      a->padding.count != 2 * n || a->batch_group_count > 1 || (a->lhs_dilation.count && a->lhs_dilation.data[0] != 1))
    return false;
  hlo_element_type_t t = in->shape.element_type;
  if (hlo_element_type_is_complex(t)) return false;
  int64_t k = in->operands[1]->shape.dimensions[a->kernel_spatial_dimensions.data[0]];
  int64_t od = in->shape.dimensions[a->output_spatial_dimensions.data[0]];
  return k >= 1 && k <= CONV_DEPTH_TAPS && od >= 1;
}

/* The permutation that brings dimensions |first| and |second| of a rank
 * |r| array to the front, the others after them in order, into perm[],
 * and where each original dimension lands into pos[]. */
static void leading_order(int r, int first, int second, int64_t *perm, int *pos) {
  perm[0] = first, perm[1] = second;
  for (int d = 0, o = 2; d < r; d++)
    if (d != first && d != second) perm[o++] = d;
  for (int i = 0; i < r; i++) pos[perm[i]] = i;
}

static hlo_instruction_t *expand_deep_conv(expand_ctx_t *x, hlo_instruction_t *in) {
  const hlo_attrs_t *a = &in->attrs;
  int n = a->input_spatial_dimensions.count, r = in->shape.rank;
  hlo_instruction_t *lhs = in->operands[0], *rhs = in->operands[1];
  int lb = (int)a->input_batch_dimension, ld = (int)a->input_spatial_dimensions.data[0];
  int kd = (int)a->kernel_spatial_dimensions.data[0];
  int ob = (int)a->output_batch_dimension, odim = (int)a->output_spatial_dimensions.data[0];
  int64_t k = rhs->shape.dimensions[kd], od = in->shape.dimensions[odim], nb = lhs->shape.dimensions[lb];
  int64_t st = a->window_strides.count ? a->window_strides.data[0] : 1;
  int64_t dil = a->rhs_dilation.count ? a->rhs_dilation.data[0] : 1;
  int64_t lo = a->padding.data[0], hi = a->padding.data[1];
  bool rev = a->window_reversal.count && a->window_reversal.data[0];
  hlo_element_type_t t = in->shape.element_type;
  bool narrow = t == HLO_F16 || t == HLO_BF16;
  hlo_element_type_t sum_t = narrow ? HLO_F32 : t;
  /* input and output with batch and depth leading, merged into one batch
   * dimension; the kernel without its depth dimension */
  int64_t lperm[HLO_MAX_RANK], operm[HLO_MAX_RANK];
  int lpos[HLO_MAX_RANK], opos[HLO_MAX_RANK];
  leading_order(r, lb, ld, lperm, lpos);
  leading_order(r, ob, odim, operm, opos);
  int64_t kdims[HLO_MAX_RANK], cdims[HLO_MAX_RANK];
  cdims[0] = nb * od;
  for (int i = 2; i < r; i++) cdims[i - 1] = in->shape.dimensions[operm[i]];
  for (int d = 0, o = 0; d < r; d++)
    if (d != kd) kdims[o++] = rhs->shape.dimensions[d];
  /* the (n - 1)-D convolution of every tap: the other spatial dimensions' window */
  hlo_attrs_t ca = in->attrs;
  int64_t sp_in[HLO_MAX_RANK], sp_k[HLO_MAX_RANK], sp_out[HLO_MAX_RANK], v[4][HLO_MAX_RANK], pad[2 * HLO_MAX_RANK];
  for (int i = 1; i < n; i++) {
    int64_t kdim = a->kernel_spatial_dimensions.data[i];
    sp_in[i - 1] = lpos[a->input_spatial_dimensions.data[i]] - 1;
    sp_k[i - 1] = kdim > kd ? kdim - 1 : kdim;
    sp_out[i - 1] = opos[a->output_spatial_dimensions.data[i]] - 1;
    v[0][i - 1] = a->window_strides.count ? a->window_strides.data[i] : 1;
    v[1][i - 1] = a->lhs_dilation.count ? a->lhs_dilation.data[i] : 1;
    v[2][i - 1] = a->rhs_dilation.count ? a->rhs_dilation.data[i] : 1;
    v[3][i - 1] = a->window_reversal.count ? a->window_reversal.data[i] : 0;
    pad[2 * (i - 1)] = a->padding.data[2 * i], pad[2 * (i - 1) + 1] = a->padding.data[2 * i + 1];
  }
  ca.input_batch_dimension = ca.output_batch_dimension = 0;
  ca.input_feature_dimension = lpos[a->input_feature_dimension] - 1;
  ca.output_feature_dimension = opos[a->output_feature_dimension] - 1;
  ca.kernel_input_feature_dimension -= a->kernel_input_feature_dimension > kd;
  ca.kernel_output_feature_dimension -= a->kernel_output_feature_dimension > kd;
  ca.input_spatial_dimensions = dims_of(x, sp_in, n - 1);
  ca.kernel_spatial_dimensions = dims_of(x, sp_k, n - 1);
  ca.output_spatial_dimensions = dims_of(x, sp_out, n - 1);
  ca.window_strides = dims_of(x, v[0], n - 1);
  ca.lhs_dilation = dims_of(x, v[1], n - 1);
  ca.rhs_dilation = dims_of(x, v[2], n - 1);
  ca.window_reversal = dims_of(x, v[3], n - 1);
  ca.padding = dims_of(x, pad, 2 * (n - 1));
  hlo_shape_t cs = array_shape(sum_t, r - 1, cdims);
  /* the input padded (or cropped) along depth */
  hlo_instruction_t *zero = scalar(x, lhs->shape.element_type, 0, 0);
  hlo_instruction_t *xp = pad_dim(x, lhs, ld, lo > 0 ? lo : 0, hi > 0 ? hi : 0, zero);
  if (xp && (lo < 0 || hi < 0))
    xp = slice_dim(x, xp, ld, lo < 0 ? -lo : 0, xp->shape.dimensions[ld] - (hi < 0 ? -hi : 0));
  hlo_instruction_t *sum = NULL;
  for (int64_t tap = 0; tap < k && xp; tap++) {
    /* the depth slice this tap reads, batch and depth leading, merged */
    int64_t from = tap * dil;
    hlo_instruction_t *xs = slice_step(x, xp, ld, from, from + (od - 1) * st + 1, st);
    if (!xs) return NULL;
    int64_t mdims[HLO_MAX_RANK];
    mdims[0] = nb * od;
    for (int i = 2; i < r; i++) mdims[i - 1] = xs->shape.dimensions[lperm[i]];
    hlo_instruction_t *x2 = reshape_to(x, permute(x, xs, lperm), r - 1, mdims);
    /* the tap's kernel slice */
    int64_t kt = rev ? k - 1 - tap : tap;
    hlo_instruction_t *k2 = reshape_to(x, slice_dim(x, rhs, kd, kt, kt + 1), r - 1, kdims);
    hlo_instruction_t *ops[2] = {x2, k2};
    hlo_instruction_t *c = x2 && k2 ? emit(x, HLO_OPCODE_CONVOLUTION, &cs, 2, ops) : NULL;
    if (!c) return NULL;
    c->attrs = ca;
    sum = sum ? binary(x, HLO_OPCODE_ADD, sum, c) : c;
  }
  if (!sum) return NULL;
  /* [batch, depth, others] back into the output's order */
  int64_t sdims[HLO_MAX_RANK], perm[HLO_MAX_RANK];
  sdims[0] = nb, sdims[1] = od;
  for (int d = 1; d < r - 1; d++) sdims[d + 1] = sum->shape.dimensions[d];
  for (int d = 0; d < r; d++) perm[d] = opos[d];
  hlo_instruction_t *y = permute(x, reshape_to(x, sum, r, sdims), perm);
  return narrow ? convert(x, y, t) : y;
}

/* ---------------------------------------- collectives across processes */

/* A collective that interpreter.run_parallel linked across the processes
 * of its group (hlo/run_parallel.c; hlo.h, group_size): operand k of group
 * member j is operands[j * per + k], this process is member group_index.
 * The spec's definitions, member by member in the group's order. */
static hlo_instruction_t *member_operand(const hlo_instruction_t *in, int per, int j, int k) {
  return in->operands[j * per + k];
}

/* all_reduce's body applied to the members' k-th operands, folded in the
 * group's order (the spec leaves the order of the reduction tree to the
 * implementation), as maps of the body. */
static hlo_instruction_t *fold_members(expand_ctx_t *x, const hlo_instruction_t *in, int per, int k) {
  hlo_instruction_t *acc = member_operand(in, per, 0, k);
  int rank = acc->shape.rank;
  int64_t all[HLO_MAX_RANK];
  for (int d = 0; d < rank; d++) all[d] = d;
  for (int j = 1; j < in->attrs.group_size && acc; j++) {
    hlo_instruction_t *ops[2] = {acc, member_operand(in, per, j, k)};
    acc = emit(x, HLO_OPCODE_MAP, &acc->shape, 2, ops);
    if (!acc) return NULL;
    acc->attrs.dimensions = hlo_dims_make(x->m, all, rank);
    if ((rank && !acc->attrs.dimensions.data) || !hlo_instruction_set_called(x->m, acc, 1, in->called_computations))
      x->failed = true;
  }
  return acc;
}

/* A dynamic root's k-th value (a scalar; hlo_collective_has_dynamic_root),
 * and whether it names member |j|, broadcast to |rs|. */
static hlo_instruction_t *dynamic_root(expand_ctx_t *x, const hlo_instruction_t *in, int k) {
  hlo_instruction_t *root = in->operands[in->operand_count - 1];
  return reshape_to(x, slice_dim(x, root, 0, k, k + 1), 0, NULL);
}

static hlo_instruction_t *root_is(expand_ctx_t *x, hlo_instruction_t *at, int j, const hlo_shape_t *rs) {
  if (!at) return NULL;
  hlo_shape_t ps = with_type(rs, HLO_PRED);
  return broadcast(x, compare(x, at, scalar(x, at->shape.element_type, j, (uint64_t)j), HLO_CMP_EQ), &ps, 0, NULL);
}

/* collective_broadcast with a dynamic root: result k is member root[k]'s
 * k-th operand (zeros for a root outside the group). */
static hlo_instruction_t *pick_member(expand_ctx_t *x, const hlo_instruction_t *in, int per, int k,
                                      const hlo_shape_t *rs) {
  hlo_instruction_t *at = dynamic_root(x, in, k);
  hlo_instruction_t *acc = splat(x, rs, 0, 0);
  for (int j = 0; j < in->attrs.group_size; j++)
    acc = select_(x, root_is(x, at, j, rs), member_operand(in, per, j, k), acc);
  return acc;
}

/* collective_reduce (spec 'collective_reduce'): the fold of the members'
 * k-th operands on the group's root (member 0, or the dynamic root's k-th
 * value), zeros on the other members. */
static hlo_instruction_t *reduce_at_root(expand_ctx_t *x, const hlo_instruction_t *in, int per, int k,
                                         const hlo_shape_t *rs) {
  hlo_instruction_t *sum = fold_members(x, in, per, k);
  int me = (int)in->attrs.group_index;
  if (!hlo_collective_has_dynamic_root(in)) return me == 0 ? sum : splat(x, rs, 0, 0);
  return select_(x, root_is(x, dynamic_root(x, in, k), me, rs), sum, splat(x, rs, 0, 0));
}

static vkhlo_status_t expand_linked_collective(expand_ctx_t *x, hlo_instruction_t *in, hlo_instruction_t **out) {
  int members = (int)in->attrs.group_size, me = (int)in->attrs.group_index;
  bool dynamic = hlo_collective_has_dynamic_root(in);
  int per = (in->operand_count - (dynamic ? 1 : 0)) / members;
  int64_t d = in->attrs.dimension;
  bool is_tuple = hlo_shape_is_tuple(&in->shape);
  if (in->opcode == HLO_OPCODE_ALL_TO_ALL && in->attrs.split_count != members)
    return el_unimplemented(in, "stablehlo.all_to_all: split_count %lld differs from its process group's size %d",
                            (long long)in->attrs.split_count, members);
  hlo_instruction_t **v = arena_alloc(&x->m->arena, sizeof(void *) * (size_t)(per + members));
  if (!v) return VKHLO_NO_MEMORY();
  hlo_instruction_t **parts = v + per;
  for (int k = 0; k < per; k++) {
    const hlo_shape_t *rs = is_tuple ? &in->shape.tuple_shapes[k] : &in->shape;
    switch (in->opcode) {
      case HLO_OPCODE_ALL_GATHER: /* spec 'all_gather': the members' operands concatenated */
        for (int j = 0; j < members; j++) parts[j] = member_operand(in, per, j, k);
        v[k] = concat(x, members, parts, (int)d);
        break;
      case HLO_OPCODE_ALL_REDUCE: v[k] = fold_members(x, in, per, k); break; /* spec 'all_reduce' */
      case HLO_OPCODE_REDUCE_SCATTER: { /* spec 'reduce_scatter': this member's part of the reduction */
        int64_t part = rs->rank > d ? rs->dimensions[d] : 0;
        v[k] = slice_dim(x, fold_members(x, in, per, k), (int)d, me * part, (me + 1) * part);
        break;
      }
      case HLO_OPCODE_ALL_TO_ALL: { /* spec 'all_to_all': part |me| of every member's split */
        hlo_instruction_t *a = member_operand(in, per, 0, k);
        int64_t sd = in->attrs.split_dimension, part = a->shape.dimensions[sd] / members;
        for (int j = 0; j < members; j++)
          parts[j] = slice_dim(x, member_operand(in, per, j, k), (int)sd, me * part, (me + 1) * part);
        v[k] = concat(x, members, parts, (int)in->attrs.concat_dimension);
        break;
      }
      case HLO_OPCODE_COLLECTIVE_BROADCAST: v[k] = pick_member(x, in, per, k, rs); break;
      case HLO_OPCODE_COLLECTIVE_REDUCE: v[k] = reduce_at_root(x, in, per, k, rs); break;
      default: return VKHLO_INTERNAL("expand_linked_collective: unexpected %s", hlo_opcode_name(in->opcode));
    }
    if (!v[k]) return x->failed ? VKHLO_NO_MEMORY() : VKHLO_INTERNAL("expand_linked_collective: no value");
    if (!hlo_shape_equal(&v[k]->shape, rs))
      return el_unimplemented(in, "stablehlo.%s whose result %d's type differs from what its process group gives "
                              "(an element type other than its operands')", hlo_opcode_name(in->opcode), k);
  }
  *out = is_tuple ? tuple(x, per, v) : v[0];
  return NULL;
}

/* a [batch..., m, k] times b [batch..., k, n] (or b^T when |b_transposed|,
 * b [batch..., n, k]) -> [batch..., m, n], batched over the leading
 * dimensions. */
static hlo_instruction_t *matmul(expand_ctx_t *x, hlo_instruction_t *a, hlo_instruction_t *b, bool b_transposed) {
  if (!a || !b) return NULL;
  int r = a->shape.rank;
  int64_t batch[HLO_MAX_RANK], dims[HLO_MAX_RANK], ac = r - 1, bc = b_transposed ? r - 1 : r - 2;
  for (int d = 0; d < r - 2; d++) batch[d] = d, dims[d] = a->shape.dimensions[d];
  dims[r - 2] = a->shape.dimensions[r - 2];
  dims[r - 1] = b->shape.dimensions[b_transposed ? r - 2 : r - 1];
  hlo_shape_t s = array_shape(a->shape.element_type, r, dims);
  hlo_instruction_t *ops[2] = {a, b};
  hlo_instruction_t *in = emit(x, HLO_OPCODE_DOT_GENERAL, &s, 2, ops);
  if (!in) return NULL;
  in->attrs.lhs_batching_dimensions = in->attrs.rhs_batching_dimensions = dims_of(x, batch, r - 2);
  in->attrs.lhs_contracting_dimensions = dims_of(x, &ac, 1);
  in->attrs.rhs_contracting_dimensions = dims_of(x, &bc, 1);
  return in;
}

/* triangular_solve(m, b): m x = b (left_side) or x m^H = b (right side,
 * |adjoint|), m lower or upper. */
static hlo_instruction_t *block_solve(expand_ctx_t *x, hlo_instruction_t *m, hlo_instruction_t *b, bool left,
                                      bool lower, bool adjoint, bool unit_diagonal) {
  if (!m || !b) return NULL;
  hlo_instruction_t *ops[2] = {m, b};
  hlo_instruction_t *in = emit(x, HLO_OPCODE_TRIANGULAR_SOLVE, &b->shape, 2, ops);
  if (!in) return NULL;
  in->attrs.left_side = left;
  in->attrs.lower = lower;
  in->attrs.transpose_a = adjoint ? 2 : 0;
  in->attrs.unit_diagonal = unit_diagonal;
  return in;
}

static hlo_instruction_t *expand_cholesky(expand_ctx_t *x, hlo_instruction_t *in) {
  hlo_instruction_t *a = in->operands[0];
  int r = a->shape.rank;
  int64_t n = a->shape.dimensions[r - 1], nb = (n + LINALG_BLOCK - 1) / LINALG_BLOCK;
  hlo_instruction_t **col = arena_alloc(&x->m->arena, sizeof(void *) * (size_t)nb);
  if (!col) {
    x->failed = true;
    return NULL;
  }
  /* the trailing matrix A[j0:n, j0:n] still to factor, in its lower
   * triangle: a's (lower) or a^H's (upper) at first */
  hlo_instruction_t *rest = in->attrs.lower ? a : conjugate(x, transpose_minor(x, a));
  for (int64_t p = 0; p < nb; p++) { /* col[p] = L[j0:n, j0:j1] */
    int64_t j0 = p * LINALG_BLOCK, w = n - j0 < LINALG_BLOCK ? n - j0 : LINALG_BLOCK;
    hlo_instruction_t *d = slice_minor(x, rest, 0, w, 0, w);
    hlo_instruction_t *l = d ? emit(x, HLO_OPCODE_CHOLESKY, &d->shape, 1, &d) : NULL;
    if (l) l->attrs.lower = true;
    if (j0 + w < n) {
      hlo_instruction_t *below = block_solve(x, l, slice_minor(x, rest, w, n - j0, 0, w), false, true, true, false);
      hlo_instruction_t *v[2] = {l, below};
      l = concat(x, 2, v, r - 2);
      rest = binary(x, HLO_OPCODE_SUBTRACT, slice_minor(x, rest, w, n - j0, w, n - j0),
                    matmul(x, below, conjugate(x, below), true));
    }
    col[p] = l;
  }
  /* L = zeros with the block columns written in place */
  hlo_instruction_t *l = splat(x, &in->shape, 0, 0);
  for (int64_t p = 0; p < nb; p++) l = update_minor(x, l, col[p], p * LINALG_BLOCK, p * LINALG_BLOCK);
  return in->attrs.lower ? l : conjugate(x, transpose_minor(x, l));
}

static hlo_instruction_t *expand_triangular_solve(expand_ctx_t *x, hlo_instruction_t *in) {
  const hlo_attrs_t *at = &in->attrs;
  hlo_instruction_t *a = in->operands[0], *b = in->operands[1];
  int r = a->shape.rank;
  int64_t k = a->shape.dimensions[r - 1], nb = (k + LINALG_BLOCK - 1) / LINALG_BLOCK;
  /* M X = B: M = op(a) on the left side; x op(a) = b is op(a)^T x^T = b^T */
  bool swap = at->left_side ? at->transpose_a != 0 : at->transpose_a == 0;
  bool lower = at->lower != swap;
  hlo_instruction_t *m = swap ? transpose_minor(x, a) : a;
  if (at->transpose_a == 2) m = conjugate(x, m);
  /* the rows of B not solved yet, less M[those, solved] X[solved]:
   * [i0, k) going down, [0, i1) going up */
  hlo_instruction_t *rest = at->left_side ? b : transpose_minor(x, b), *sol = rest;
  int64_t cols = rest ? rest->shape.dimensions[r - 1] : 0;
  hlo_instruction_t **xs = arena_alloc(&x->m->arena, sizeof(void *) * (size_t)nb);
  if (!xs) {
    x->failed = true;
    return NULL;
  }
  for (int64_t s = 0; s < nb; s++) {
    int64_t p = lower ? s : nb - 1 - s;
    int64_t i0 = p * LINALG_BLOCK, i1 = i0 + LINALG_BLOCK < k ? i0 + LINALG_BLOCK : k;
    int64_t first = lower ? 0 : i0, end = lower ? i1 - i0 : i1; /* block I's rows in rest */
    xs[p] = block_solve(x, slice_minor(x, m, i0, i1, i0, i1), slice_minor(x, rest, first, end, 0, cols), true, lower,
                        false, at->unit_diagonal);
    if (s + 1 < nb) {
      int64_t lo = lower ? i1 : 0, hi = lower ? k : i0; /* the rows left, in M */
      rest = binary(x, HLO_OPCODE_SUBTRACT,
                    slice_minor(x, rest, lower ? i1 - i0 : 0, lower ? k - i0 : i0, 0, cols),
                    matmul(x, slice_minor(x, m, lo, hi, i0, i1), xs[p], false));
    }
  }
  /* the blocks of X written over B's rows in place, each once */
  for (int64_t p = 0; p < nb; p++) sol = update_minor(x, sol, xs[p], p * LINALG_BLOCK, 0);
  return at->left_side ? sol : transpose_minor(x, sol);
}

/* ---------------------------------------------------------------- fft */

/*
 * The fft kernel (codegen/emit_fft.c) is a direct DFT: each result element
 * sums over every element of its transform, prod N terms (on lavapipe more
 * than 65535 were refused).  Past FFT_DIRECT terms the transform is
 * rewritten into smaller ones:
 *
 *   several fft dimensions: one 1-D transform per dimension in turn (the
 *     DFT is separable), the dimension moved last for it by a transpose.
 *     RFFT transforms the last dimension first (real to N / 2 + 1 complex
 *     values), then the others; IRFFT the others first, the last one last.
 *   one long dimension N = N1 * N2 (N1 the largest divisor <= sqrt N; a
 *     prime length stays direct): the four-step form of Cooley-Tukey,
 *     n = N2 n1 + n2, k = k1 + N1 k2:
 *       X[k1 + N1 k2] = sum_n2 W_N2^(n2 k2) W_N^(n2 k1) sum_n1 W_N1^(n1 k1) x[N2 n1 + n2]
 *     (W_M = exp(-+ 2 pi i / M)): transforms of length N1 over the columns
 *     of x as [N1, N2], a multiply by the twiddles W_N^(n2 k1) (a constant
 *     computed here in double, each angle reduced to half a turn, rounded
 *     once to the element type), transforms of length N2, and a transpose
 *     that puts k1 + N1 k2 in order; lengths past FFT_DIRECT again in
 *     this way.  Each inverse transform divides by its length, 1 / N in
 *     all.  A long RFFT is the complex FFT of (x, 0), its first N / 2 + 1
 *     values; a long IRFFT the real part of the complex IFFT of the
 *     Hermitian spectrum completed from them (X[N - k] = conj X[k]), which
 *     ignores the imaginary parts of X[0] and X[N / 2] as the kernel does.
 *
 * N1 + N2 terms per element instead of N: a 2^16 transform sums 512
 * instead of 65536.  The sums are the same sums in another order
 * (rounding differs; an FFT's error grows more slowly than a DFT's).
 * Small transforms stay one kernel: up to FFT_DIRECT terms per element, or
 * fewer than FFT_MIN_WORK terms in all, where the four-step form's six
 * dispatches cost more than they save (lavapipe, batches of 2^18 complex
 * values: N = 64 20.5 ms direct, 128 39 -> 27 ms, 256 82 -> 27 ms, 4096
 * 1143 -> 55 ms; one transform of 128: 0.09 ms direct, 0.13-0.25 in four
 * steps; of 1024: 1.2 -> 0.37 ms).
 */
#define FFT_DIRECT 64
#define FFT_MIN_WORK (1 << 17)

enum { FFT_FFT = 0, FFT_IFFT = 1, FFT_RFFT = 2, FFT_IRFFT = 3 };

/* The largest divisor of n at most sqrt(n) (1 for a prime). */
static int64_t fft_split(int64_t n) {
  int64_t best = 1;
  for (int64_t f = 2; f * f <= n; f++)
    if (n % f == 0) best = f;
  return best;
}

/* The terms each result element of |in| sums directly. */
static int64_t fft_terms(const hlo_instruction_t *in) {
  const hlo_shape_t *s = &in->operands[0]->shape;
  int q = in->attrs.fft_length.count;
  int64_t t = 1;
  for (int j = 0; j < q && q <= s->rank; j++) t *= s->dimensions[s->rank - q + j];
  return t;
}

static bool is_long_fft(const hlo_instruction_t *in) {
  const hlo_attrs_t *a = &in->attrs;
  int q = a->fft_length.count;
  if (in->opcode != HLO_OPCODE_FFT || q < 1 || in->shape.rank >= HLO_MAX_RANK || fft_terms(in) <= FFT_DIRECT ||
      (double)fft_terms(in) * (double)hlo_shape_element_count(&in->shape) < FFT_MIN_WORK)
    return false;
  return q > 1 || fft_split(a->fft_length.data[0]) > 1;
}

/* stablehlo.fft of |type| over the last dimension of |a|, length |n|. */
static hlo_instruction_t *fft_op(expand_ctx_t *x, hlo_instruction_t *a, int type, int64_t n) {
  if (!a) return NULL;
  hlo_shape_t s = a->shape;
  int r = s.rank;
  if (type == FFT_RFFT) s.dimensions[r - 1] = n / 2 + 1;
  if (type == FFT_IRFFT) s.dimensions[r - 1] = n;
  hlo_element_type_t t = s.element_type, real = hlo_element_type_real(t);
  if (type == FFT_RFFT) t = real == HLO_F64 ? HLO_C128 : HLO_C64;
  if (type == FFT_IRFFT) t = real;
  s = array_shape(t, r, s.dimensions);
  hlo_instruction_t *in = emit(x, HLO_OPCODE_FFT, &s, 1, &a);
  if (!in) return NULL;
  in->attrs.fft_type = type;
  in->attrs.fft_length = dims_of(x, &n, 1);
  return in;
}

/* The twiddles W_N^(n2 k1) as a constant [N2, N1] of complex type |t|. */
static hlo_instruction_t *twiddles(expand_ctx_t *x, hlo_element_type_t t, int64_t n1, int64_t n2, bool inverse) {
  int64_t dims[2] = {n2, n1}, n = n1 * n2;
  hlo_literal_t *lit = arena_alloc(&x->m->arena, sizeof *lit);
  size_t size = hlo_element_type_size_bytes(t);
  unsigned char *data = arena_alloc(&x->m->arena, size * (size_t)n);
  if (!lit || !data) {
    x->failed = true;
    return NULL;
  }
  for (int64_t i2 = 0; i2 < n2; i2++)
    for (int64_t k1 = 0; k1 < n1; k1++) {
      double turns = (double)(i2 * k1 % n) / (double)n; /* exact p / N, then half a turn at most */
      if (turns >= 0.5) turns -= 1;
      double angle = (inverse ? 1 : -1) * 6.283185307179586476925286766559 * turns, re = cos(angle), im = sin(angle);
      unsigned char *at = data + (size_t)(i2 * n1 + k1) * size;
      if (t == HLO_C64) {
        float v[2] = {(float)re, (float)im};
        memcpy(at, v, sizeof v);
      } else {
        double v[2] = {re, im};
        memcpy(at, v, sizeof v);
      }
    }
  lit->shape = array_shape(t, 2, dims);
  lit->data = data;
  lit->size_bytes = size * (size_t)n;
  hlo_instruction_t *in = emit(x, HLO_OPCODE_CONSTANT, &lit->shape, 0, NULL);
  if (in) in->literal = lit;
  return in;
}

/* The complex FFT (IFFT when |inverse|) of length n over the last
 * dimension of |a|: four-step past FFT_DIRECT where n has a factor. */
static hlo_instruction_t *fft_1d(expand_ctx_t *x, hlo_instruction_t *a, int64_t n, bool inverse) {
  int64_t n1 = fft_split(n), n2 = n / n1;
  if (!a || n <= FFT_DIRECT || n1 == 1 || a->shape.rank >= HLO_MAX_RANK)
    return fft_op(x, a, inverse ? FFT_IFFT : FFT_FFT, n);
  int r = a->shape.rank;
  int64_t dims[HLO_MAX_RANK], map[HLO_MAX_RANK];
  memcpy(dims, a->shape.dimensions, sizeof(int64_t) * (size_t)r);
  dims[r - 1] = n1, dims[r] = n2;
  /* x as [.., N1, N2], columns transformed: [.., N2, K1] */
  hlo_instruction_t *c = fft_1d(x, transpose_minor(x, reshape_to(x, a, r + 1, dims)), n1, inverse);
  hlo_instruction_t *w = twiddles(x, a->shape.element_type, n1, n2, inverse);
  map[0] = r - 1, map[1] = r;
  hlo_instruction_t *d = c && w ? binary(x, HLO_OPCODE_MULTIPLY, c, broadcast(x, w, &c->shape, 2, map)) : NULL;
  /* rows transformed: [.., K1, K2], then K2 outer */
  hlo_instruction_t *e = transpose_minor(x, fft_1d(x, transpose_minor(x, d), n2, inverse));
  return reshape_to(x, e, r, a->shape.dimensions);
}

static hlo_instruction_t *expand_fft(expand_ctx_t *x, hlo_instruction_t *in) {
  const hlo_attrs_t *at = &in->attrs;
  int q = at->fft_length.count, type = at->fft_type, r = in->shape.rank;
  const int64_t *len = at->fft_length.data;
  hlo_instruction_t *y = in->operands[0];
  bool inverse = type == FFT_IFFT || type == FFT_IRFFT;
  int64_t n = len[q - 1];
  if (type == FFT_RFFT) { /* the last dimension first: real to complex */
    if (n <= FFT_DIRECT || fft_split(n) == 1) {
      y = fft_op(x, y, FFT_RFFT, n);
    } else {
      hlo_shape_t cs = with_type(&y->shape, in->shape.element_type);
      hlo_instruction_t *ops[2] = {y, splat(x, &y->shape, 0, 0)};
      y = slice_dim(x, fft_1d(x, emit(x, HLO_OPCODE_COMPLEX, &cs, 2, ops), n, false), r - 1, 0, n / 2 + 1);
    }
  }
  int last = type == FFT_FFT || type == FFT_IFFT ? q : q - 1; /* the complex-to-complex ones */
  for (int j = 0; j < last; j++) {
    int d = r - q + j;
    y = swap_dims(x, fft_1d(x, swap_dims(x, y, d, r - 1), len[j], inverse), d, r - 1); /* d moved last */
  }
  if (type == FFT_IRFFT) { /* the last dimension last: complex to real */
    if (n <= FFT_DIRECT || fft_split(n) == 1) return fft_op(x, y, FFT_IRFFT, n);
    /* X[n - k] = conj X[k] for k = 1 .. n - n / 2 - 1 */
    hlo_instruction_t *mirror = reverse_dim(x, conjugate(x, slice_dim(x, y, r - 1, 1, n - n / 2)), r - 1);
    hlo_instruction_t *v[2] = {y, mirror};
    hlo_instruction_t *full = n - n / 2 - 1 > 0 ? concat(x, 2, v, r - 1) : y;
    hlo_instruction_t *z = fft_1d(x, full, n, true);
    return z ? emit(x, HLO_OPCODE_REAL, &in->shape, 1, &z) : NULL;
  }
  return y;
}

/* ------------------------------------------------- sharding annotations */

/*
 * Programs exported for several devices (jax.export with shardings) carry
 * the partitioner's annotations as custom_calls: @Sharding (a value's
 * sharding; the value unchanged), @SPMDFullToShardShape and
 * @SPMDShardToFullShape (into and out of a manually partitioned region),
 * and the memory-placement hints @MoveToHost, @MoveToDevice and
 * @annotate_device_placement; Shardy's round-trip forms of the same
 * (@xla.sdy.FuncResultSharding on a result, @xla.sdy.GlobalToLocalShape /
 * @xla.sdy.LocalToGlobalShape around a manual computation's body), which
 * jax.export writes with Shardy.  vkhlo runs one device, so each is its
 * operand, where the type stays the same (a sharding that splits no
 * dimension, or one over a single device); one that changes the shape
 * belongs to a program partitioned over several devices and is
 * UNIMPLEMENTED.
 */
static const char *const identity_targets[] = {
    "Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape", "MoveToHost", "MoveToDevice",
    "annotate_device_placement", "xla.sdy.FuncResultSharding", "xla.sdy.GlobalToLocalShape",
    "xla.sdy.LocalToGlobalShape",
};

static bool is_annotation(const hlo_instruction_t *in) {
  if (in->opcode != HLO_OPCODE_CUSTOM_CALL || !in->attrs.call_target_name) return false;
  for (size_t i = 0; i < sizeof identity_targets / sizeof identity_targets[0]; i++)
    if (strcmp(in->attrs.call_target_name, identity_targets[i]) == 0) return true;
  return false;
}

static vkhlo_status_t expand_annotation(const hlo_instruction_t *in, hlo_instruction_t **out) {
  const hlo_shape_t *s = &in->shape;
  if (in->operand_count != 1 || hlo_shape_is_tuple(s) || s->element_type != in->operands[0]->shape.element_type ||
      !hlo_shape_compatible_dims(s, &in->operands[0]->shape))
    return el_unimplemented(in, "custom_call @%s changing its operand's type (a program partitioned over several "
                            "devices; vkhlo runs one)", in->attrs.call_target_name);
  *out = in->operands[0];
  return NULL;
}

/* ------------------------------------------------- solver custom calls */

/*
 * JAX exports its linear algebra as calls into the solver library of the
 * platform it exported for: LAPACK on CPUs (lapack_<t>potrf_ffi, ...,
 * <t> = s, d, c, z), cuSOLVER / hipSOLVER on GPUs.  Each is rewritten into
 * what computes the same results here:
 *   potrf (a) -> (factor, info)     cholesky; the other triangle keeps a's
 *                                   values (the library writes only its
 *                                   own), info = 1 + the first column
 *                                   whose pivot is not positive (0: none)
 *   trsm (a, b[, alpha]) -> x       triangular_solve of alpha * b (BLAS's
 *                                   side / uplo / trans_x / diag letters)
 *   getrf (a) -> (lu, pivots, info) the internal lu (codegen/emit_linalg.c:
 *                                   partial pivoting, the first largest
 *                                   pivot as LAPACK's i?amax), pivots from
 *                                   1; wider than 64 columns blocked as
 *                                   LAPACK's getrf (panels of 64 factored
 *                                   (narrower past 1024 rows: lu_panel),
 *                                   their row interchanges applied to the
 *                                   other columns by gathers, the block row
 *                                   of U by a triangular solve, the trailing
 *                                   matrix updated by a dot_general)
 *   lu_pivots_to_permutation        the internal op of that name
 *     (pivots) -> permutation       (cu_, hip_: the GPU exports)
 *   geqrf (a) -> (a, taus)          the internal qr (Householder, LAPACK's
 *     (TPU: Qr)                     reflectors); wider than one panel
 *                                   (qr_panel) blocked as LAPACK's geqrf:
 *                                   each panel factored by qr, the block
 *                                   reflector I - V T V^H of its reflectors
 *                                   applied to the columns right of it
 *   orgqr / ungqr (a, taus) -> q    the internal householder_product;
 *     (TPU: ProductOfElementary-    wider than one panel the block
 *     HouseholderReflectors)        reflectors applied to the identity,
 *                                   the last panel's first
 *   syevd / heevd (a) -> (vectors,  the internal eigh (Jacobi) of the
 *     values, info) (TPU: Eigh)     triangle the call names; info 0
 *   gtsv (dl, d, du, b) -> (dl, d,  the internal tridiagonal_solve (gtsv's
 *     du, x, info) (cuSPARSE        elimination with partial pivoting);
 *     gtsv2: -> x)                  cuSPARSE's call returns x alone
 *   gesdd / gesvd / gesvdj /        the internal svd (one-sided Jacobi) of
 *     gesvdp (a) -> (a, s, U, V^H   a square a; a tall a factored by qr
 *     or V, info)                   first (U = Q [U_R 0; 0 I]), a wide one
 *                                   as its adjoint; the slots as the call
 *                                   lays them out (expand_gesvd)
 * The calls' operand_layouts (column-major, the libraries' storage) change
 * no value: the operands and results are the same logical arrays.  The
 * options come from the dictionary in mhlo.backend_config (BLAS letters as
 * ASCII codes: uplo = 76 'L').
 */
/* The panel width of getrf for m rows: 64, narrower for tall matrices so
 * that the panel kernel's loops (each invocation of its workgroup walks
 * m / 64 rows of the panel, about m w^2 / 128 iterations) stay within
 * lavapipe's loop limit (65535) up to about 25000 rows; the same on every
 * device. */
static int64_t lu_panel(int64_t m) { return m <= 1024 ? 64 : m <= 4096 ? 32 : 16; }

static bool is_expanded(const expand_ctx_t *x, const hlo_instruction_t *in);
static vkhlo_status_t expand_one(expand_ctx_t *x, hlo_instruction_t *in, hlo_instruction_t **out);

/* |in| (created, not yet appended) appended, or its expansion where it has
 * one (a cholesky or triangular_solve past one block). */
static hlo_instruction_t *place(expand_ctx_t *x, hlo_instruction_t *in) {
  if (!in) {
    x->failed = true;
    return NULL;
  }
  in->loc = x->loc;
  hlo_instruction_t *r = NULL;
  if (is_expanded(x, in)) {
    hlo_location_t loc = x->loc;
    if (expand_one(x, in, &r)) r = NULL; /* cholesky and triangular_solve expand without errors */
    x->loc = loc;
  } else if (hlo_computation_append(x->m, x->c, in)) {
    r = in;
  }
  if (!r) x->failed = true;
  return r;
}

typedef enum solver_call_e {
  SOLVER_NONE,
  SOLVER_POTRF,
  SOLVER_TRSM,
  SOLVER_GETRF,
  SOLVER_PERMUTATION,
  SOLVER_GEQRF,
  SOLVER_ORGQR,
  SOLVER_SYEVD,
  SOLVER_GESVD,
  SOLVER_GTSV,
} solver_call_t;

static solver_call_t solver_call(const hlo_instruction_t *in) {
  const char *t = in->attrs.call_target_name;
  if (in->opcode != HLO_OPCODE_CUSTOM_CALL || !t) return SOLVER_NONE;
  if (strncmp(t, "lapack_", 7) == 0 && t[7] && strchr("sdcz", t[7])) {
    if (strcmp(t + 8, "potrf_ffi") == 0) return SOLVER_POTRF;
    if (strcmp(t + 8, "trsm_ffi") == 0) return SOLVER_TRSM;
    if (strcmp(t + 8, "getrf_ffi") == 0) return SOLVER_GETRF;
    if (strcmp(t + 8, "geqrf_ffi") == 0) return SOLVER_GEQRF;
    if (strcmp(t + 8, strchr("sd", t[7]) ? "syevd_ffi" : "heevd_ffi") == 0) return SOLVER_SYEVD;
    if (strcmp(t + 8, strchr("sd", t[7]) ? "orgqr_ffi" : "ungqr_ffi") == 0) return SOLVER_ORGQR;
    if (strcmp(t + 8, "gesdd_ffi") == 0 || strcmp(t + 8, "gesvd_ffi") == 0) return SOLVER_GESVD;
    if (strcmp(t + 8, "gtsv_ffi") == 0) return SOLVER_GTSV;
    return SOLVER_NONE;
  }
  if (strcmp(t, "cusolver_potrf_ffi") == 0 || strcmp(t, "hipsolver_potrf_ffi") == 0) return SOLVER_POTRF;
  if (strcmp(t, "cusolver_getrf_ffi") == 0 || strcmp(t, "hipsolver_getrf_ffi") == 0) return SOLVER_GETRF;
  if (strcmp(t, "cusolver_geqrf_ffi") == 0 || strcmp(t, "hipsolver_geqrf_ffi") == 0 || strcmp(t, "Qr") == 0)
    return SOLVER_GEQRF;
  if (strcmp(t, "cusolver_syevd_ffi") == 0 || strcmp(t, "hipsolver_syevd_ffi") == 0 || strcmp(t, "Eigh") == 0)
    return SOLVER_SYEVD;
  if (strcmp(t, "cusolver_orgqr_ffi") == 0 || strcmp(t, "hipsolver_orgqr_ffi") == 0 ||
      strcmp(t, "ProductOfElementaryHouseholderReflectors") == 0)
    return SOLVER_ORGQR;
  if (strncmp(t, "cusolver_", 9) == 0 || strncmp(t, "hipsolver_", 10) == 0) {
    const char *f = t + (t[0] == 'c' ? 9 : 10);
    if (strcmp(f, "gesvd_ffi") == 0 || strcmp(f, "gesdd_ffi") == 0 || strcmp(f, "gesvdj_ffi") == 0 ||
        strcmp(f, "gesvdp_ffi") == 0)
      return SOLVER_GESVD;
  }
  if (strcmp(t, "cusparse_gtsv2_ffi") == 0 || strcmp(t, "hipsparse_gtsv2_ffi") == 0) return SOLVER_GTSV;
  if (strcmp(t, "cu_lu_pivots_to_permutation") == 0 || strcmp(t, "hip_lu_pivots_to_permutation") == 0)
    return SOLVER_PERMUTATION;
  return SOLVER_NONE;
}


static bool is_matrix(const hlo_shape_t *s) {
  return !hlo_shape_is_tuple(s) && s->rank >= 2 &&
         (hlo_element_type_is_float(s->element_type) || hlo_element_type_is_complex(s->element_type));
}

/* A matrix of one of LAPACK's four types (s, d, c, z). */
static bool is_lapack_matrix(const hlo_shape_t *s) {
  hlo_element_type_t t = s ? s->element_type : HLO_PRED;
  return s && is_matrix(s) && (t == HLO_F32 || t == HLO_F64 || t == HLO_C64 || t == HLO_C128);
}

/* min(m, n) of a [batch..., m, n] */
static int64_t min_dim(const hlo_shape_t *a) {
  int64_t m = a->dimensions[a->rank - 2], n = a->dimensions[a->rank - 1];
  return m < n ? m : n;
}

/* |s| is an array of |a|'s leading |n| dimensions, then |last| (last < 0:
 * none). */
static bool is_batch_shape(const hlo_shape_t *s, const hlo_shape_t *a, int n, int64_t last) {
  if (hlo_shape_is_tuple(s) || s->rank != n + (last >= 0)) return false;
  for (int d = 0; d < n; d++)
    if (s->dimensions[d] != a->dimensions[d]) return false;
  return last < 0 || s->dimensions[n] == last;
}

/* ... and of an integer type. */
static bool is_index_array(const hlo_shape_t *s, const hlo_shape_t *a, int n, int64_t last) {
  return is_batch_shape(s, a, n, last) && hlo_element_type_is_integer(s->element_type);
}

/* reduce(a, init, dimensions = [last], op) for a scalar |op| body. */
static hlo_instruction_t *reduce_last(expand_ctx_t *x, hlo_instruction_t *a, hlo_opcode_t op, hlo_instruction_t *init) {
  if (!a || !init) return NULL;
  hlo_element_type_t t = a->shape.element_type, types[2] = {t, t};
  hlo_instruction_t *root;
  hlo_computation_t *body = scalar_body(x, "expand_reduce_body", 2, types, op, t, &root);
  int64_t last = a->shape.rank - 1;
  hlo_shape_t s = array_shape(t, a->shape.rank - 1, a->shape.dimensions);
  hlo_instruction_t *ops[2] = {a, init};
  hlo_instruction_t *in = body ? emit(x, HLO_OPCODE_REDUCE, &s, 2, ops) : NULL;
  if (!in || !hlo_instruction_set_called(x->m, in, 1, &body)) {
    x->failed = true;
    return NULL;
  }
  in->attrs.dimensions = dims_of(x, &last, 1);
  return in;
}

/* a [batch..., rows, cols] with |keep| (i, j) -> bool for its two minor
 * dimensions: iota(rows) <direction> iota(cols) */
static hlo_instruction_t *triangle_mask(expand_ctx_t *x, const hlo_shape_t *a, hlo_comparison_direction_t dir) {
  hlo_shape_t s = with_type(a, HLO_S32);
  return compare(x, iota(x, &s, a->rank - 2), iota(x, &s, a->rank - 1), dir);
}

/* The identity in each [..., n, n] matrix of shape |s| */
static hlo_instruction_t *identity_matrix(expand_ctx_t *x, const hlo_shape_t *s) {
  return select_(x, triangle_mask(x, s, HLO_CMP_EQ), splat(x, s, 1, 0), splat(x, s, 0, 0));
}

/* potrf: see the section comment. */
static hlo_instruction_t *expand_potrf(expand_ctx_t *x, hlo_instruction_t *in, const hlo_shape_t *info_shape) {
  hlo_instruction_t *a = in->operands[0];
  int64_t lower = 1, uplo;
  if (config_value(in, "uplo", &uplo)) lower = uplo != 'U';
  else config_value(in, "lower", &lower);
  int r = a->shape.rank;
  int64_t n = a->shape.dimensions[r - 1];
  hlo_instruction_t *l = hlo_instruction_create(x->m, HLO_OPCODE_CHOLESKY, &a->shape, 1, &a);
  if (l) l->attrs.lower = lower != 0;
  l = place(x, l);
  hlo_instruction_t *factor = select_(x, triangle_mask(x, &a->shape, lower ? HLO_CMP_GE : HLO_CMP_LE), l, a);
  /* the diagonal, real; a pivot that is not > 0 (NaN included) fails */
  hlo_instruction_t *diag = sum_over(x, select_(x, triangle_mask(x, &a->shape, HLO_CMP_EQ), l,
                                                splat(x, &a->shape, 0, 0)), 1, (int64_t[]){r - 1});
  diag = real_part(x, diag);
  hlo_instruction_t *bad = diag ? unary(x, HLO_OPCODE_NOT, compare(x, diag, splat(x, &diag->shape, 0, 0), HLO_CMP_GT)) : NULL;
  hlo_shape_t is = diag ? with_type(&diag->shape, HLO_S32) : a->shape;
  hlo_instruction_t *column = binary(x, HLO_OPCODE_ADD, iota(x, &is, r - 2), splat(x, &is, 0, 1));
  hlo_instruction_t *none = scalar(x, HLO_S32, 0, (uint64_t)(n + 1));
  hlo_instruction_t *first = reduce_last(x, select_(x, bad, column, splat(x, &is, 0, (uint64_t)(n + 1))),
                                         HLO_OPCODE_MINIMUM, none);
  hlo_instruction_t *info = first ? select_(x, compare(x, first, splat(x, &first->shape, 0, (uint64_t)(n + 1)), HLO_CMP_EQ),
                                            splat(x, &first->shape, 0, 0), first) : NULL;
  hlo_instruction_t *v[2] = {factor, convert(x, info, info_shape->element_type)};
  return tuple(x, 2, v);
}

/* trsm: see the section comment. */
static hlo_instruction_t *expand_trsm(expand_ctx_t *x, hlo_instruction_t *in) {
  int64_t side = 'L', uplo = 'L', trans = 'N', diag = 'N';
  config_value(in, "side", &side);
  config_value(in, "uplo", &uplo);
  config_value(in, "trans_x", &trans);
  config_value(in, "diag", &diag);
  hlo_instruction_t *b = in->operands[1];
  if (in->operand_count == 3)
    b = binary(x, HLO_OPCODE_MULTIPLY, b, broadcast(x, in->operands[2], &b->shape, 0, NULL));
  hlo_instruction_t *ops[2] = {in->operands[0], b};
  hlo_instruction_t *sol = b ? hlo_instruction_create(x->m, HLO_OPCODE_TRIANGULAR_SOLVE, &in->shape, 2, ops) : NULL;
  if (sol) {
    sol->attrs.left_side = side != 'R';
    sol->attrs.lower = uplo != 'U';
    sol->attrs.unit_diagonal = diag == 'U';
    sol->attrs.transpose_a = trans == 'T' ? 1 : trans == 'C' ? 2 : 0;
  }
  return place(x, sol);
}

/* Internal op |op| of |a| with the |n| results |parts| (a tuple). */
static hlo_instruction_t *tuple_op(expand_ctx_t *x, hlo_opcode_t op, hlo_instruction_t *a, int n,
                                   const hlo_shape_t *parts) {
  hlo_shape_t s;
  if (!a) return NULL;
  if (!hlo_shape_make_tuple(x->m, &s, n, parts)) {
    x->failed = true;
    return NULL;
  }
  return emit(x, op, &s, 1, &a);
}

/* [batch..., min(m, n)] of element type |t| for a [batch..., m, n]. */
static hlo_shape_t min_dim_shape(const hlo_shape_t *a, hlo_element_type_t t) {
  int r = a->rank;
  int64_t dims[HLO_MAX_RANK];
  memcpy(dims, a->dimensions, sizeof(int64_t) * (size_t)r);
  dims[r - 2] = min_dim(a);
  return array_shape(t, r - 1, dims);
}

/* The tuple (lu, pivots from 0, info) of the internal lu of |a|. */
static hlo_instruction_t *lu_op(expand_ctx_t *x, hlo_instruction_t *a) {
  if (!a) return NULL;
  hlo_shape_t parts[3] = {a->shape, min_dim_shape(&a->shape, HLO_S32),
                          array_shape(HLO_S32, a->shape.rank - 2, a->shape.dimensions)};
  return tuple_op(x, HLO_OPCODE_LU, a, 3, parts);
}

/* The permutation of 0..size-1 that |pivots| (i32, from 0) make. */
static hlo_instruction_t *pivots_to_permutation(expand_ctx_t *x, hlo_instruction_t *pivots, int64_t size) {
  if (!pivots) return NULL;
  hlo_shape_t s = pivots->shape;
  s.dimensions[s.rank - 1] = size;
  s = array_shape(HLO_S32, s.rank, s.dimensions);
  return emit(x, HLO_OPCODE_LU_PIVOTS_TO_PERMUTATION, &s, 1, &pivots);
}

/* a[..., perm[..., i], :] for every i: the rows of a [batch..., rows,
 * cols] in the order of perm [batch..., n] (a gather). */
static hlo_instruction_t *take_rows(expand_ctx_t *x, hlo_instruction_t *a, hlo_instruction_t *perm) {
  if (!a || !perm) return NULL;
  int r = a->shape.rank;
  int64_t dims[HLO_MAX_RANK], batch[HLO_MAX_RANK], sizes[HLO_MAX_RANK], row = r - 2, col = r - 1;
  for (int d = 0; d < r; d++) dims[d] = a->shape.dimensions[d], batch[d] = d, sizes[d] = 1;
  dims[r - 2] = perm->shape.dimensions[r - 2];
  sizes[r - 1] = a->shape.dimensions[r - 1];
  hlo_shape_t s = array_shape(a->shape.element_type, r, dims);
  hlo_instruction_t *ops[2] = {a, perm};
  hlo_instruction_t *g = emit(x, HLO_OPCODE_GATHER, &s, 2, ops);
  if (!g) return NULL;
  g->attrs.offset_dims = dims_of(x, &col, 1);
  g->attrs.collapsed_slice_dims = dims_of(x, &row, 1);
  g->attrs.operand_batching_dims = g->attrs.start_indices_batching_dims = dims_of(x, batch, r - 2);
  g->attrs.start_index_map = dims_of(x, &row, 1);
  g->attrs.index_vector_dim = r - 1;
  g->attrs.slice_sizes = dims_of(x, sizes, r);
  return g;
}

static hlo_instruction_t *take_elements(expand_ctx_t *x, hlo_instruction_t *v, hlo_instruction_t *perm);

/* getrf's (lu, pivots from 0, info) of |a| into out[0..2]: the lu kernel,
 * or past one panel LAPACK's right-looking blocked getrf on the trailing
 * matrix alone: each panel factored by the kernel (its own rows
 * interchanged), its interchanges applied to the trailing columns right of
 * it by a gather, the block row of U solved, the rest updated by a
 * dot_general.  The rows of a panel's L below its top are interchanged by
 * every later panel: those permutations are composed (last first, on
 * index vectors) and applied once per panel; each piece of the result is
 * then written into place once (no copy of the whole matrix per panel). */
static void lu_factor(expand_ctx_t *x, hlo_instruction_t *a, hlo_instruction_t **out) {
  int r = a->shape.rank;
  int64_t m = a->shape.dimensions[r - 2], n = a->shape.dimensions[r - 1], kk = m < n ? m : n;
  int64_t w = lu_panel(m);
  out[0] = out[1] = out[2] = NULL;
  if (n <= w) {
    hlo_instruction_t *t = lu_op(x, a);
    for (int i = 0; i < 3; i++) out[i] = tuple_element(x, t, i);
    return;
  }
  int np = (int)((kk + w - 1) / w);
  /* per panel: pivots, the panel, U right of it, its permutation of rows
   * j0..m-1, its L below the top in the final order */
  hlo_instruction_t **piv = arena_alloc(&x->m->arena, sizeof(void *) * (size_t)np * 5), *info = NULL;
  if (!piv) {
    x->failed = true;
    return;
  }
  hlo_instruction_t **panel = piv + np, **right = panel + np, **perm = right + np, **below = perm + np, *trail = a;
  for (int p = 0; p < np; p++) {
    int64_t j0 = p * w, jb = kk - j0 < w ? kk - j0 : w, mt = m - j0, rest = n - j0 - jb;
    hlo_instruction_t *t = lu_op(x, slice_minor(x, trail, 0, mt, 0, jb));
    hlo_instruction_t *pp = tuple_element(x, t, 1), *ip = tuple_element(x, t, 2);
    panel[p] = tuple_element(x, t, 0);
    piv[p] = pp && j0 ? binary(x, HLO_OPCODE_ADD, pp, splat(x, &pp->shape, 0, (uint64_t)j0)) : pp;
    if (!info) {
      info = ip;
    } else if (ip) { /* the first zero pivot: this panel's, where none came before */
      hlo_instruction_t *zero = splat(x, &ip->shape, 0, 0);
      hlo_instruction_t *here = binary(x, HLO_OPCODE_AND, compare(x, info, zero, HLO_CMP_EQ),
                                       compare(x, ip, zero, HLO_CMP_NE));
      info = select_(x, here, binary(x, HLO_OPCODE_ADD, ip, splat(x, &ip->shape, 0, (uint64_t)j0)), info);
    }
    perm[p] = p > 0 || rest > 0 ? pivots_to_permutation(x, pp, mt) : NULL;
    right[p] = NULL;
    if (rest > 0) {
      hlo_instruction_t *rows = take_rows(x, slice_minor(x, trail, 0, mt, jb, n - j0), perm[p]);
      right[p] = block_solve(x, slice_minor(x, panel[p], 0, jb, 0, jb), slice_minor(x, rows, 0, jb, 0, rest), true,
                             true, false, true);
      if (mt > jb)
        trail = binary(x, HLO_OPCODE_SUBTRACT, slice_minor(x, rows, jb, mt, 0, rest),
                       matmul(x, slice_minor(x, panel[p], jb, mt, 0, jb), right[p], false));
    }
  }
  /* order = how the panels after q reorder rows j0_q + jb.. (the
   * composition of their permutations, an index vector), last panel first */
  hlo_instruction_t *order = NULL;
  for (int q = np - 1; q >= 0; q--) {
    int64_t j0 = q * w, jb = kk - j0 < w ? kk - j0 : w, mt = m - j0;
    below[q] = mt > jb ? slice_minor(x, panel[q], jb, mt, 0, jb) : NULL;
    if (below[q] && order) below[q] = take_rows(x, below[q], order);
    if (q == 0) break;
    if (order) { /* panel q's permutation, then the later ones on its rows past jb */
      hlo_shape_t is = perm[q] ? perm[q]->shape : order->shape;
      is.dimensions[is.rank - 1] = jb;
      is = array_shape(HLO_S32, is.rank, is.dimensions);
      hlo_instruction_t *v[2] = {iota(x, &is, is.rank - 1),
                                 binary(x, HLO_OPCODE_ADD, order, splat(x, &order->shape, 0, (uint64_t)jb))};
      order = take_elements(x, perm[q], concat(x, 2, v, r - 2));
    } else {
      order = perm[q];
    }
  }
  /* each panel's top, U right of it and L below it written into a's
   * shape where they belong (in place: each element once) */
  hlo_instruction_t *lu = a;
  for (int p = 0; p < np; p++) {
    int64_t j0 = p * w, jb = kk - j0 < w ? kk - j0 : w;
    lu = update_minor(x, lu, slice_minor(x, panel[p], 0, jb, 0, jb), j0, j0);
    if (right[p]) lu = update_minor(x, lu, right[p], j0, j0 + jb);
    if (below[p]) lu = update_minor(x, lu, below[p], j0 + jb, j0);
  }
  out[0] = lu;
  out[1] = concat(x, np, piv, r - 2);
  out[2] = info;
}

static hlo_instruction_t *expand_getrf(expand_ctx_t *x, hlo_instruction_t *in, const hlo_shape_t *parts) {
  hlo_instruction_t *v[3];
  lu_factor(x, in->operands[0], v);
  if (v[1]) v[1] = binary(x, HLO_OPCODE_ADD, v[1], splat(x, &v[1]->shape, 0, 1));
  v[1] = convert(x, v[1], parts[1].element_type);
  v[2] = convert(x, v[2], parts[2].element_type);
  return tuple(x, 3, v);
}

/* The panel width of the Householder kernels for m rows of element type
 * |t|: their shared arrays hold 64 partial sums per column (8 KiB at
 * most), and each invocation walks about 2 m w^2 / 64 iterations (within
 * lavapipe's loop limit up to about 25000 rows); the same on every
 * device. */
static int64_t qr_panel(int64_t m, hlo_element_type_t t) {
  int64_t by_rows = m <= 1024 ? 32 : m <= 4096 ? 16 : 8;
  int64_t by_bytes = t == HLO_C128 ? 8 : t == HLO_F64 || t == HLO_C64 ? 16 : 32;
  return by_rows < by_bytes ? by_rows : by_bytes;
}

/* a [batch..., k] -> its elements [j0, j1) along the last dimension. */
static hlo_instruction_t *slice_last(expand_ctx_t *x, hlo_instruction_t *a, int64_t j0, int64_t j1) {
  if (!a) return NULL;
  int r = a->shape.rank;
  int64_t start[HLO_MAX_RANK] = {0}, limit[HLO_MAX_RANK];
  for (int d = 0; d < r; d++) limit[d] = a->shape.dimensions[d];
  start[r - 1] = j0, limit[r - 1] = j1;
  return slice_(x, a, start, limit);
}

/* v == 0, element by element (complex: both parts). */
static hlo_instruction_t *is_zero(expand_ctx_t *x, hlo_instruction_t *v) {
  if (!v) return NULL;
  hlo_element_type_t t = v->shape.element_type;
  if (hlo_element_type_is_complex(t)) {
    hlo_shape_t rs = with_type(&v->shape, hlo_element_type_real(t));
    v = emit(x, HLO_OPCODE_ABS, &rs, 1, &v);
  }
  return v ? compare(x, v, splat(x, &v->shape, 0, 0), HLO_CMP_EQ) : NULL;
}

/* t [batch..., k] broadcast to [batch..., rows, k] (each row a copy). */
static hlo_instruction_t *rows_of(expand_ctx_t *x, hlo_instruction_t *t, int64_t rows) {
  if (!t) return NULL;
  int r = t->shape.rank + 1;
  int64_t dims[HLO_MAX_RANK], map[HLO_MAX_RANK];
  for (int d = 0; d < r - 2; d++) dims[d] = t->shape.dimensions[d], map[d] = d;
  dims[r - 2] = rows, dims[r - 1] = t->shape.dimensions[r - 2], map[r - 2] = r - 1;
  hlo_shape_t s = array_shape(t->shape.element_type, r, dims);
  return broadcast(x, t, &s, r - 1, map);
}

/* The Householder vectors of a panel as qr leaves them (below its
 * diagonal; taus [batch..., jb]) as the columns of V [batch..., rows, jb]:
 * 1 on the diagonal, 0 above; a column whose tau is 0 (H = I) all 0. */
static hlo_instruction_t *reflectors(expand_ctx_t *x, hlo_instruction_t *panel, hlo_instruction_t *taus) {
  if (!panel) return NULL;
  const hlo_shape_t *s = &panel->shape;
  hlo_instruction_t *zero = splat(x, s, 0, 0);
  hlo_instruction_t *v = select_(x, triangle_mask(x, s, HLO_CMP_GT), panel,
                                 select_(x, triangle_mask(x, s, HLO_CMP_EQ), splat(x, s, 1, 1), zero));
  return select_(x, rows_of(x, is_zero(x, taus), s->dimensions[s->rank - 2]), zero, v);
}

/* U = T^-1 for the block reflector H(0) ... H(jb-1) = I - V T V^H of the
 * reflectors V [batch..., rows, jb] with taus [batch..., jb]: upper
 * triangular, U[i][i] = 1 / tau[i] (1 where tau is 0 and V's column is 0),
 * U[i][j] = v_i^H v_j above the diagonal (T = U^-1 as LAPACK's larft
 * builds it column by column). */
static hlo_instruction_t *block_reflector(expand_ctx_t *x, hlo_instruction_t *v, hlo_instruction_t *taus) {
  hlo_instruction_t *g = matmul(x, transpose_minor(x, conjugate(x, v)), v, false);
  if (!g || !taus) return NULL;
  const hlo_shape_t *s = &g->shape;
  hlo_instruction_t *inv = select_(x, is_zero(x, taus), splat(x, &taus->shape, 1, 1),
                                   binary(x, HLO_OPCODE_DIVIDE, splat(x, &taus->shape, 1, 1), taus));
  return select_(x, triangle_mask(x, s, HLO_CMP_LT), g,
                 select_(x, triangle_mask(x, s, HLO_CMP_EQ), rows_of(x, inv, s->dimensions[s->rank - 2]),
                         splat(x, s, 0, 0)));
}

/* c - V (op(T) (V^H c)): (I - V op(T) V^H) c with op(T) = T^H when
 * |adjoint| (Q^H c), T otherwise (Q c), T^-1 = |u|. */
static hlo_instruction_t *apply_block_reflector(expand_ctx_t *x, hlo_instruction_t *v, hlo_instruction_t *u,
                                                hlo_instruction_t *c, bool adjoint) {
  hlo_instruction_t *w = matmul(x, transpose_minor(x, conjugate(x, v)), c, false);
  return binary(x, HLO_OPCODE_SUBTRACT, c, matmul(x, v, block_solve(x, u, w, true, false, adjoint, false), false));
}

/* The tuple (a, taus) of the internal qr of |a|. */
static hlo_instruction_t *qr_op(expand_ctx_t *x, hlo_instruction_t *a) {
  if (!a) return NULL;
  hlo_shape_t parts[2] = {a->shape, min_dim_shape(&a->shape, a->shape.element_type)};
  return tuple_op(x, HLO_OPCODE_QR, a, 2, parts);
}

/* geqrf's (a, taus) of |a| into out[0..1]: the qr kernel, or past one
 * panel LAPACK's blocked geqrf: each panel of the trailing matrix factored
 * by the kernel, its block reflector's Q^H applied to the columns right of
 * it; the factored panels and the block rows of R the updates leave above
 * the next trailing matrix then written into place, each once. */
static void qr_factor(expand_ctx_t *x, hlo_instruction_t *a, hlo_instruction_t **out) {
  int r = a->shape.rank;
  int64_t m = a->shape.dimensions[r - 2], n = a->shape.dimensions[r - 1], kk = m < n ? m : n;
  int64_t w = qr_panel(m, a->shape.element_type);
  if (n <= w) {
    hlo_instruction_t *t = qr_op(x, a);
    for (int i = 0; i < 2; i++) out[i] = tuple_element(x, t, i);
    return;
  }
  int np = (int)((kk + w - 1) / w);
  /* per panel: its factored columns (rows j0..m-1), taus, R right of it */
  hlo_instruction_t **panel = arena_alloc(&x->m->arena, sizeof(void *) * (size_t)np * 3);
  if (!panel) {
    x->failed = true;
    out[0] = out[1] = NULL;
    return;
  }
  hlo_instruction_t **taus = panel + np, **right = taus + np, *trail = a;
  for (int p = 0; p < np; p++) {
    int64_t j0 = p * w, jb = kk - j0 < w ? kk - j0 : w, rows = m - j0, cols = n - j0;
    hlo_instruction_t *t = qr_op(x, slice_minor(x, trail, 0, rows, 0, jb));
    panel[p] = tuple_element(x, t, 0);
    taus[p] = tuple_element(x, t, 1);
    right[p] = NULL;
    if (cols > jb) {
      hlo_instruction_t *v = reflectors(x, panel[p], taus[p]);
      hlo_instruction_t *c = apply_block_reflector(x, v, block_reflector(x, v, taus[p]),
                                                   slice_minor(x, trail, 0, rows, jb, cols), true);
      right[p] = slice_minor(x, c, 0, jb, 0, cols - jb);
      trail = slice_minor(x, c, jb, rows, 0, cols - jb);
    }
  }
  /* each factored panel (R's diagonal block over its reflectors) and the
   * block row of R right of it written into place (in place, once) */
  hlo_instruction_t *qr = a;
  for (int p = 0; p < np; p++) {
    qr = update_minor(x, qr, panel[p], p * w, p * w);
    if (right[p] && panel[p]) qr = update_minor(x, qr, right[p], p * w, p * w + panel[p]->shape.dimensions[r - 1]);
  }
  out[0] = qr;
  out[1] = concat(x, np, taus, r - 2);
}

/* orgqr's Q of the reflectors |a| [batch..., m, n] and |taus| [batch...,
 * k]: the householder_product kernel, or past one panel the block
 * reflectors of the panels applied to the identity, last panel first.
 * Before panel p (columns j0..) is applied, Q is the identity in its
 * first j0 rows and columns, so only Q[j0:, j0:] is kept: the previous
 * one below and right of jb rows and columns of the identity. */
static hlo_instruction_t *householder_product(expand_ctx_t *x, hlo_instruction_t *a, hlo_instruction_t *taus) {
  int r = a->shape.rank;
  int64_t m = a->shape.dimensions[r - 2], n = a->shape.dimensions[r - 1], k = taus->shape.dimensions[r - 2];
  int64_t w = qr_panel(m, a->shape.element_type);
  if (n <= w) {
    hlo_instruction_t *ops[2] = {a, taus};
    return emit(x, HLO_OPCODE_HOUSEHOLDER_PRODUCT, &a->shape, 2, ops);
  }
  hlo_instruction_t *q = NULL, *zero = scalar(x, a->shape.element_type, 0, 0);
  int64_t last = k ? (k - 1) / w * w : 0;
  for (int64_t j0 = last; j0 >= 0; j0 -= w) {
    int64_t jb = k - j0 < w ? k - j0 : w;
    hlo_instruction_t *eye = q ? pad_dim(x, pad_dim(x, q, r - 2, jb, 0, zero), r - 1, jb, 0, zero)
                               : slice_minor(x, a, j0, m, j0, n);
    if (!eye) return NULL;
    const hlo_shape_t *s = &eye->shape;
    hlo_instruction_t *diag = triangle_mask(x, s, HLO_CMP_EQ);
    if (q) { /* the identity's jb x jb block at the top left */
      hlo_shape_t is = with_type(s, HLO_S32);
      diag = binary(x, HLO_OPCODE_AND, diag, compare(x, iota(x, &is, r - 2), splat(x, &is, 0, (uint64_t)jb), HLO_CMP_LT));
    }
    eye = select_(x, diag, splat(x, s, 1, 1), q ? eye : splat(x, s, 0, 0));
    if (k == 0) return eye;
    hlo_instruction_t *tp = slice_last(x, taus, j0, j0 + jb);
    hlo_instruction_t *v = reflectors(x, slice_minor(x, a, j0, m, j0, j0 + jb), tp);
    q = apply_block_reflector(x, v, block_reflector(x, v, tp), eye, false);
  }
  return q;
}

/* The work arrays of the eigh and svd kernels for a [batch..., n, n]:
 * [batch..., N, N], N = n rounded up to even (the circle method's
 * pairs). */
static hlo_shape_t jacobi_work_shape(const hlo_shape_t *a) {
  int r = a->rank;
  int64_t n = a->dimensions[r - 1], dims[HLO_MAX_RANK];
  memcpy(dims, a->dimensions, sizeof(int64_t) * (size_t)r);
  dims[r - 2] = dims[r - 1] = n + (n & 1);
  return array_shape(a->element_type, r, dims);
}

/* Matrices past JACOBI_KERNEL_MAX are too large for the eigh kernel's one
 * workgroup (lavapipe's loop limiter stops it past 64; a GPU would run
 * them on one of its cores): their Jacobi rounds run as a while loop of
 * eigh_round dispatches, JACOBI_LOOP_ROUNDS per iteration, its condition
 * the eigh kernel's test, per matrix: |offdiag(A)|^2 > (n eps)^2 |A|^2
 * (Frobenius norms), for at most EIGH_MAX_SWEEPS sweeps.  The same
 * rotations in the same order as the kernel; only where sweeps stop
 * differs (after any round here). */
#define JACOBI_KERNEL_MAX 64
#define JACOBI_LOOP_ROUNDS 16
#define EIGH_MAX_SWEEPS 15

/* a reduced by |op| over all its dimensions, one at a time: a scalar */
static hlo_instruction_t *reduce_all(expand_ctx_t *x, hlo_instruction_t *a, hlo_opcode_t op, hlo_instruction_t *init) {
  while (a && a->shape.rank > 0) a = reduce_last(x, a, op, init);
  return a;
}

/* The columns of a [batch..., rows, n] in the order of perm [batch..., n] */
static hlo_instruction_t *take_columns(expand_ctx_t *x, hlo_instruction_t *a, hlo_instruction_t *perm) {
  return transpose_minor(x, take_rows(x, transpose_minor(x, a), perm));
}

/* v [batch..., n] in the order of perm */
static hlo_instruction_t *take_elements(expand_ctx_t *x, hlo_instruction_t *v, hlo_instruction_t *perm) {
  if (!v) return NULL;
  int r = v->shape.rank + 1;
  int64_t dims[HLO_MAX_RANK];
  memcpy(dims, v->shape.dimensions, sizeof(int64_t) * (size_t)(r - 1));
  dims[r - 1] = 1;
  hlo_instruction_t *t = take_rows(x, reshape_to(x, v, r, dims), perm);
  return t ? reshape_to(x, t, r - 1, v->shape.dimensions) : NULL;
}

/* a [batch..., n, n] with a zero row and column appended for an odd n:
 * the Jacobi rounds' N x N (the circle method pairs indices). */
static hlo_instruction_t *pad_to_even(expand_ctx_t *x, hlo_instruction_t *a) {
  if (!a) return NULL;
  int r = a->shape.rank;
  if (!(a->shape.dimensions[r - 1] & 1)) return a;
  hlo_instruction_t *zero = scalar(x, a->shape.element_type, 0, 0);
  return pad_dim(x, pad_dim(x, a, r - 2, 0, 1, zero), r - 1, 0, 1, zero);
}

/* a summed over its two minor dimensions, one at a time (no reduce longer
 * than a dimension). */
static hlo_instruction_t *sum_minor2(expand_ctx_t *x, hlo_instruction_t *a) {
  if (!a) return NULL;
  int64_t d = a->shape.rank - 1;
  hlo_instruction_t *rows = sum_over(x, a, 1, &d);
  d--;
  return sum_over(x, rows, 1, &d);
}

/* |a|^2 elementwise, of the real type */
static hlo_instruction_t *abs_squared(expand_ctx_t *x, hlo_instruction_t *a) {
  if (!a || !hlo_element_type_is_complex(a->shape.element_type)) return binary(x, HLO_OPCODE_MULTIPLY, a, a);
  hlo_shape_t ps = with_type(&a->shape, hlo_element_type_real(a->shape.element_type));
  hlo_instruction_t *re = real_part(x, a), *im = emit(x, HLO_OPCODE_IMAG, &ps, 1, &a);
  return binary(x, HLO_OPCODE_ADD, binary(x, HLO_OPCODE_MULTIPLY, re, re), binary(x, HLO_OPCODE_MULTIPLY, im, im));
}

/* The eigh loop's condition on (A, V, round, iteration): iteration < cap
 * and some matrix of the batch is not yet diagonal enough. */
static hlo_instruction_t *eigh_loop_cond(expand_ctx_t *x, hlo_instruction_t *a, hlo_instruction_t *it, int64_t n,
                                         int64_t cap) {
  hlo_element_type_t rt = hlo_element_type_real(a->shape.element_type);
  double eps = rt == HLO_F64 ? 0x1p-53 : 0x1p-24;
  hlo_instruction_t *m2 = abs_squared(x, a);
  hlo_instruction_t *off = sum_minor2(x, select_(x, triangle_mask(x, &a->shape, HLO_CMP_NE), m2,
                                                 splat(x, &m2->shape, 0, 0)));
  hlo_instruction_t *all = sum_minor2(x, m2);
  if (!off || !all) return NULL;
  hlo_instruction_t *go = compare(x, off, binary(x, HLO_OPCODE_MULTIPLY, all, splat(x, &all->shape,
                                                                                  eps * eps * (double)(n * n), 0)),
                                  HLO_CMP_GT);
  /* how many matrices go on */
  hlo_instruction_t *count = reduce_all(x, convert(x, go, HLO_S32), HLO_OPCODE_ADD, scalar(x, HLO_S32, 0, 0));
  return binary(x, HLO_OPCODE_AND, compare(x, count, scalar(x, HLO_S32, 0, 0), HLO_CMP_GT),
                compare(x, it, scalar(x, HLO_S32, 0, (uint64_t)cap), HLO_CMP_LT));
}

/* The eigh loop's body: JACOBI_LOOP_ROUNDS eigh_rounds. */
static hlo_instruction_t *eigh_loop_body(expand_ctx_t *x, hlo_instruction_t *const *p, int64_t m) {
  hlo_instruction_t *next[4] = {p[0], p[1], NULL, NULL};
  hlo_shape_t parts[2] = {p[0]->shape, p[0]->shape};
  for (int j = 0; j < JACOBI_LOOP_ROUNDS && j < m; j++) {
    hlo_instruction_t *ops[3] = {next[0], next[1], p[2]};
    hlo_shape_t s;
    if (!hlo_shape_make_tuple(x->m, &s, 2, parts)) {
      x->failed = true;
      return NULL;
    }
    hlo_instruction_t *round = emit(x, HLO_OPCODE_EIGH_ROUND, &s, 3, ops);
    if (round) round->attrs.dimension = j;
    next[0] = tuple_element(x, round, 0);
    next[1] = tuple_element(x, round, 1);
  }
  int64_t rounds = m < JACOBI_LOOP_ROUNDS ? m : JACOBI_LOOP_ROUNDS;
  next[2] = binary(x, HLO_OPCODE_REMAINDER, binary(x, HLO_OPCODE_ADD, p[2], scalar(x, HLO_S32, 0, (uint64_t)rounds)),
                   scalar(x, HLO_S32, 0, (uint64_t)m));
  next[3] = binary(x, HLO_OPCODE_ADD, p[3], scalar(x, HLO_S32, 0, 1));
  return tuple(x, 4, next);
}

/* The order of the values |w| [batch..., n] ascending, NaNs last, ties by
 * index (the eigh kernel's): perm [batch..., n] s32, w[perm[r]] the r-th.
 * rank_j counts the i before j; perm[r] is the j of rank r. */
static hlo_instruction_t *ascending_order(expand_ctx_t *x, hlo_instruction_t *w) {
  if (!w) return NULL;
  int r = w->shape.rank + 1;
  int64_t n = w->shape.dimensions[r - 2], dims[HLO_MAX_RANK], bi[HLO_MAX_RANK], bj[HLO_MAX_RANK];
  for (int d = 0; d < r - 2; d++) dims[d] = w->shape.dimensions[d], bi[d] = bj[d] = d;
  dims[r - 2] = dims[r - 1] = n;
  bi[r - 2] = r - 2, bj[r - 2] = r - 1;
  hlo_shape_t ws = array_shape(w->shape.element_type, r, dims), is = with_type(&ws, HLO_S32);
  hlo_instruction_t *wi = broadcast(x, w, &ws, r - 1, bi), *wj = broadcast(x, w, &ws, r - 1, bj);
  hlo_instruction_t *ii = iota(x, &is, r - 2), *ij = iota(x, &is, r - 1);
  hlo_instruction_t *before = compare(x, ii, ij, HLO_CMP_LT), *num_i = compare(x, wi, wi, HLO_CMP_EQ);
  hlo_instruction_t *smaller = binary(x, HLO_OPCODE_OR, compare(x, wi, wj, HLO_CMP_LT),
                                      binary(x, HLO_OPCODE_AND, compare(x, wi, wj, HLO_CMP_EQ), before));
  hlo_instruction_t *ahead = select_(x, compare(x, wj, wj, HLO_CMP_NE), binary(x, HLO_OPCODE_OR, num_i, before),
                                     binary(x, HLO_OPCODE_AND, num_i, smaller));
  int64_t d = r - 2;
  hlo_instruction_t *rank = sum_over(x, convert(x, ahead, HLO_S32), 1, &d); /* [batch..., j] */
  /* perm[r] = the j whose rank is r: rows r, columns j */
  hlo_instruction_t *rj = broadcast(x, rank, &is, r - 1, bj);
  hlo_instruction_t *hit = compare(x, rj, iota(x, &is, r - 2), HLO_CMP_EQ);
  d = r - 1;
  return sum_over(x, select_(x, hit, iota(x, &is, r - 1), splat(x, &is, 0, 0)), 1, &d);
}

/* eigh of a [batch..., n, n] (its |lower| or upper triangle) by the loop
 * of eigh_rounds: out = (vectors, values ascending). */
static void eigh_by_rounds(expand_ctx_t *x, hlo_instruction_t *a, bool lower, hlo_instruction_t **out) {
  out[0] = out[1] = NULL;
  int r = a->shape.rank;
  int64_t n = a->shape.dimensions[r - 1], nn = n + (n & 1), m = nn - 1;
  hlo_element_type_t t = a->shape.element_type;
  /* the Hermitian matrix from the triangle (the diagonal's real part), 0 past n */
  hlo_instruction_t *full = select_(x, triangle_mask(x, &a->shape, lower ? HLO_CMP_GE : HLO_CMP_LE), a,
                                    conjugate(x, transpose_minor(x, a)));
  if (hlo_element_type_is_complex(t))
    full = select_(x, triangle_mask(x, &a->shape, HLO_CMP_EQ), real_as(x, real_part(x, full), t), full);
  full = pad_to_even(x, full);
  if (!full) return;
  hlo_shape_t ws = full->shape;
  hlo_instruction_t *init[4] = {full, identity_matrix(x, &ws), scalar(x, HLO_S32, 0, 0), scalar(x, HLO_S32, 0, 0)};
  hlo_instruction_t *cp[4], *bp[4];
  hlo_computation_t *cond, *body;
  if (!loop_computations(x, "eigh_rounds", x->c->instruction_count, 4, init, &cond, &body, cp, bp)) return;
  hlo_computation_t *outer = x->c;
  int64_t per_sweep = (m + JACOBI_LOOP_ROUNDS - 1) / JACOBI_LOOP_ROUNDS;
  x->c = cond;
  cond->root = eigh_loop_cond(x, cp[0], cp[3], n, EIGH_MAX_SWEEPS * per_sweep);
  x->c = body;
  body->root = eigh_loop_body(x, bp, m);
  x->c = outer;
  hlo_instruction_t *loop = while_loop(x, 4, init, cond, body);
  if (!loop) return;
  hlo_instruction_t *ad = tuple_element(x, loop, 0), *v = slice_minor(x, tuple_element(x, loop, 1), 0, n, 0, n);
  /* the values: A's diagonal (real), the first n */
  int64_t last = r - 1;
  hlo_instruction_t *d = sum_over(x, select_(x, triangle_mask(x, &ws, HLO_CMP_EQ), ad, splat(x, &ws, 0, 0)), 1, &last);
  hlo_instruction_t *w = slice_dim(x, real_part(x, d), r - 2, 0, n);
  hlo_instruction_t *perm = ascending_order(x, w);
  out[1] = take_elements(x, w, perm);
  out[0] = take_columns(x, v, perm);
}

/* syevd: the internal eigh's vectors and values, info 0 (Jacobi always
 * converges; NaNs come out as NaNs), of the triangle the call names:
 * LAPACK's uplo letter, cuSOLVER's lower, the TPU Eigh's first field of
 * "lower,sort,max_iter,tol". */
static hlo_instruction_t *expand_syevd(expand_ctx_t *x, hlo_instruction_t *in, int nres, const hlo_shape_t *parts) {
  hlo_instruction_t *a = in->operands[0];
  int64_t lower = 1, uplo;
  if (config_value(in, "uplo", &uplo)) lower = uplo != 'U';
  else if (!config_value(in, "lower", &lower) && in->attrs.backend_config && in->attrs.backend_config[0] == '0')
    lower = 0;
  hlo_instruction_t *v[3] = {NULL, NULL, NULL};
  if (a->shape.dimensions[a->shape.rank - 1] > JACOBI_KERNEL_MAX) {
    eigh_by_rounds(x, a, lower != 0, v);
  } else {
    hlo_shape_t work = jacobi_work_shape(&a->shape);
    hlo_shape_t shapes[4] = {a->shape, parts[1], work, work};
    hlo_instruction_t *e = tuple_op(x, HLO_OPCODE_EIGH, a, 4, shapes);
    if (e) e->attrs.lower = lower != 0;
    v[0] = tuple_element(x, e, 0);
    v[1] = tuple_element(x, e, 1);
  }
  if (nres == 3) v[2] = splat(x, &parts[2], 0, 0);
  return tuple(x, nres, v);
}

/* Past JACOBI_KERNEL_MAX the svd kernel's rounds run likewise as a while
 * loop of svd_round dispatches (JACOBI_LOOP_ROUNDS per iteration), each
 * pair stamped with the round it last rotated in; the loop stops once no
 * pair has rotated for a whole sweep (N - 1 rounds), or after
 * SVD_MAX_SWEEPS.  Before it a is scaled by a power of two (its largest
 * part in [1, 2): no sum of squares overflows); after it s_j = |w_j|
 * ranked descending (NaNs last), U's column w_j / s_j, and where s_j is
 * zero or too small to normalize (below sqrt(smallest normal) / eps) the
 * column of the Q of a QR factorization of the columns kept (its columns
 * past theirs are orthogonal to them).  info is 1 when the sweeps did not
 * converge or a value is NaN. */
#define SVD_MAX_SWEEPS 30

/* The largest |re| or |im| of each matrix of a [batch..., n, n]: [batch...] */
static hlo_instruction_t *max_part(expand_ctx_t *x, hlo_instruction_t *a) {
  if (!a) return NULL;
  hlo_element_type_t rt = hlo_element_type_real(a->shape.element_type);
  hlo_shape_t ps = with_type(&a->shape, rt);
  hlo_instruction_t *m = a;
  if (hlo_element_type_is_complex(a->shape.element_type))
    m = binary(x, HLO_OPCODE_MAXIMUM, unary(x, HLO_OPCODE_ABS, real_part(x, a)),
               unary(x, HLO_OPCODE_ABS, emit(x, HLO_OPCODE_IMAG, &ps, 1, &a)));
  else m = unary(x, HLO_OPCODE_ABS, a);
  hlo_instruction_t *zero = scalar(x, rt, 0, 0);
  return reduce_last(x, reduce_last(x, m, HLO_OPCODE_MAXIMUM, zero), HLO_OPCODE_MAXIMUM, zero);
}

/* 2^e for each positive finite v = f 2^e, f in [1, 2) (1 otherwise): v's
 * exponent bits alone */
static hlo_instruction_t *power_of_two_below(expand_ctx_t *x, hlo_instruction_t *v) {
  if (!v) return NULL;
  bool f64 = v->shape.element_type == HLO_F64;
  hlo_shape_t is = with_type(&v->shape, f64 ? HLO_U64 : HLO_U32);
  hlo_instruction_t *bits = emit(x, HLO_OPCODE_BITCAST_CONVERT, &is, 1, &v);
  hlo_instruction_t *e = binary(x, HLO_OPCODE_AND, bits, splat(x, &is, 0, f64 ? 0x7ff0000000000000ull : 0x7f800000u));
  hlo_instruction_t *p = emit(x, HLO_OPCODE_BITCAST_CONVERT, &v->shape, 1, &e);
  hlo_instruction_t *usable = binary(x, HLO_OPCODE_AND, compare(x, p, splat(x, &v->shape, 0, 0), HLO_CMP_GT),
                                     compare(x, p, splat(x, &v->shape, f64 ? 0x1p1000 : 0x1p120, 0), HLO_CMP_LT));
  return select_(x, usable, p, splat(x, &v->shape, 1, 0));
}

/* Of the svd loop's (W, V, stamps, round g, iteration): whether some pair
 * rotated in the last N - 1 rounds. */
static hlo_instruction_t *svd_rotating(expand_ctx_t *x, hlo_instruction_t *const *p, int64_t m) {
  hlo_instruction_t *last = reduce_all(x, p[2], HLO_OPCODE_MAXIMUM, scalar(x, HLO_S32, 0, 0));
  return compare(x, last, binary(x, HLO_OPCODE_SUBTRACT, p[3], scalar(x, HLO_S32, 0, (uint64_t)m)), HLO_CMP_GE);
}

/* The svd loop's condition: rotating, and iteration < cap. */
static hlo_instruction_t *svd_loop_cond(expand_ctx_t *x, hlo_instruction_t *const *p, int64_t m, int64_t cap) {
  return binary(x, HLO_OPCODE_AND, svd_rotating(x, p, m),
                compare(x, p[4], scalar(x, HLO_S32, 0, (uint64_t)cap), HLO_CMP_LT));
}

/* The svd loop's body: JACOBI_LOOP_ROUNDS svd_rounds. */
static hlo_instruction_t *svd_loop_body(expand_ctx_t *x, hlo_instruction_t *const *p) {
  hlo_instruction_t *next[5] = {p[0], p[1], p[2], NULL, NULL};
  hlo_shape_t parts[3] = {p[0]->shape, p[1]->shape, p[2]->shape}, s;
  if (!hlo_shape_make_tuple(x->m, &s, 3, parts)) {
    x->failed = true;
    return NULL;
  }
  for (int j = 0; j < JACOBI_LOOP_ROUNDS; j++) {
    hlo_instruction_t *ops[4] = {next[0], next[1], next[2], p[3]};
    hlo_instruction_t *round = emit(x, HLO_OPCODE_SVD_ROUND, &s, 4, ops);
    if (round) round->attrs.dimension = j;
    for (int i = 0; i < 3; i++) next[i] = tuple_element(x, round, i);
  }
  next[3] = binary(x, HLO_OPCODE_ADD, p[3], scalar(x, HLO_S32, 0, JACOBI_LOOP_ROUNDS));
  next[4] = binary(x, HLO_OPCODE_ADD, p[4], scalar(x, HLO_S32, 0, 1));
  return tuple(x, 5, next);
}

/* The svd of the square a [batch..., n, n] by the loop of svd_rounds:
 * out = (U, s, V, info). */
static void svd_by_rounds(expand_ctx_t *x, hlo_instruction_t *a, hlo_instruction_t **out) {
  int r = a->shape.rank;
  int64_t n = a->shape.dimensions[r - 1], nn = n + (n & 1), m = nn - 1, half = nn / 2;
  hlo_element_type_t t = a->shape.element_type, rt = hlo_element_type_real(t);
  bool f64 = rt == HLO_F64;
  hlo_shape_t bs = array_shape(rt, r - 2, a->shape.dimensions);
  hlo_instruction_t *p2 = power_of_two_below(x, max_part(x, a));
  int64_t bdims[HLO_MAX_RANK];
  for (int d = 0; d < r - 2; d++) bdims[d] = d;
  hlo_instruction_t *inv = real_as(x, binary(x, HLO_OPCODE_DIVIDE, splat(x, &bs, 1, 0), p2), t);
  hlo_instruction_t *w = pad_to_even(x, binary(x, HLO_OPCODE_MULTIPLY, a, broadcast(x, inv, &a->shape, r - 2, bdims)));
  if (!w) return;
  hlo_shape_t ws = w->shape;
  int64_t sd[HLO_MAX_RANK];
  memcpy(sd, a->shape.dimensions, sizeof(int64_t) * (size_t)(r - 2));
  sd[r - 2] = half;
  hlo_shape_t ss = array_shape(HLO_S32, r - 1, sd);
  hlo_instruction_t *init[5] = {w, identity_matrix(x, &ws), splat(x, &ss, 0, (uint64_t)m), scalar(x, HLO_S32, 0, (uint64_t)m),
                                scalar(x, HLO_S32, 0, 0)};
  hlo_instruction_t *cp[5], *bp[5];
  hlo_computation_t *cond, *body;
  if (!loop_computations(x, "svd_rounds", x->c->instruction_count, 5, init, &cond, &body, cp, bp)) return;
  hlo_computation_t *outer = x->c;
  int64_t cap = SVD_MAX_SWEEPS * ((m + JACOBI_LOOP_ROUNDS - 1) / JACOBI_LOOP_ROUNDS);
  x->c = cond;
  cond->root = svd_loop_cond(x, cp, m, cap);
  x->c = body;
  body->root = svd_loop_body(x, bp);
  x->c = outer;
  hlo_instruction_t *loop = while_loop(x, 5, init, cond, body);
  if (!loop) return;
  hlo_instruction_t *wf = slice_minor(x, tuple_element(x, loop, 0), 0, n, 0, n);
  hlo_instruction_t *vf = slice_minor(x, tuple_element(x, loop, 1), 0, n, 0, n);
  hlo_instruction_t *lp[5];
  for (int i = 0; i < 5; i++) lp[i] = tuple_element(x, loop, i);
  hlo_instruction_t *unconverged = svd_rotating(x, lp, m); /* stopped by the cap */
  /* s_j = |w_j| (scaled), descending */
  int64_t rows = r - 2;
  hlo_instruction_t *sc = unary(x, HLO_OPCODE_SQRT, sum_over(x, abs_squared(x, wf), 1, &rows));
  hlo_instruction_t *perm = ascending_order(x, unary(x, HLO_OPCODE_NEGATE, sc));
  hlo_instruction_t *s_sorted = take_elements(x, sc, perm);
  if (!s_sorted) return;
  hlo_shape_t vs = s_sorted->shape;
  hlo_instruction_t *w_sorted = take_columns(x, wf, perm);
  out[2] = take_columns(x, vf, perm);
  out[1] = binary(x, HLO_OPCODE_MULTIPLY, s_sorted, broadcast(x, p2, &vs, r - 2, bdims));
  /* U: w_j / s_j where s_j normalizes, else Q's column */
  double tiny = f64 ? 0x1p-511 / 0x1p-53 : 0x1p-63 / 0x1p-24;
  int64_t cols[HLO_MAX_RANK];
  for (int d = 0; d < r - 2; d++) cols[d] = d;
  cols[r - 2] = r - 1;
  hlo_shape_t ps = with_type(&wf->shape, HLO_PRED);
  hlo_instruction_t *keep_col = broadcast(x, compare(x, s_sorted, splat(x, &vs, tiny, 0), HLO_CMP_GT), &ps, r - 1, cols);
  hlo_instruction_t *u =
      binary(x, HLO_OPCODE_DIVIDE, w_sorted, broadcast(x, real_as(x, s_sorted, t), &wf->shape, r - 1, cols));
  hlo_instruction_t *kept = select_(x, keep_col, u, splat(x, &wf->shape, 0, 0));
  hlo_instruction_t *qr[2];
  qr_factor(x, kept, qr);
  hlo_instruction_t *q = householder_product(x, qr[0], qr[1]);
  out[0] = select_(x, keep_col, u, q);
  /* info: not converged, or a NaN value */
  hlo_instruction_t *nan = convert(x, compare(x, s_sorted, s_sorted, HLO_CMP_NE), HLO_S32);
  hlo_instruction_t *bad = reduce_last(x, nan, HLO_OPCODE_MAXIMUM, scalar(x, HLO_S32, 0, 0));
  hlo_shape_t is = array_shape(HLO_S32, r - 2, a->shape.dimensions);
  if (bad) bad = binary(x, HLO_OPCODE_MAXIMUM, bad, broadcast(x, convert(x, unconverged, HLO_S32), &is, 0, NULL));
  out[3] = bad;
}

/* The internal svd of the square |a|: out = (U, s, V, info). */
static void svd_square(expand_ctx_t *x, hlo_instruction_t *a, hlo_instruction_t **out) {
  out[0] = out[1] = out[2] = out[3] = NULL;
  if (!a) return;
  if (a->shape.dimensions[a->shape.rank - 1] > JACOBI_KERNEL_MAX) {
    svd_by_rounds(x, a, out);
    return;
  }
  hlo_shape_t work = jacobi_work_shape(&a->shape);
  hlo_shape_t shapes[6] = {a->shape, min_dim_shape(&a->shape, hlo_element_type_real(a->shape.element_type)), a->shape,
                           array_shape(HLO_S32, a->shape.rank - 2, a->shape.dimensions), work, work};
  hlo_instruction_t *e = tuple_op(x, HLO_OPCODE_SVD, a, 6, shapes);
  for (int i = 0; i < 4; i++) out[i] = tuple_element(x, e, i);
}

/* a [batch..., m, n] = U diag(s) V^H: out = (U [m, ucols], s [min(m, n)],
 * V [n, vcols], info), ucols m or min(m, n), vcols n or min(m, n).  A
 * wide a is the adjoint of a tall one; a tall one is Q R (geqrf), the svd
 * of R gives s and V, and U = Q [U_R 0; 0 I]. */
static void svd_factor(expand_ctx_t *x, hlo_instruction_t *a, int64_t ucols, int64_t vcols, hlo_instruction_t **out) {
  out[0] = out[1] = out[2] = out[3] = NULL;
  if (!a) return;
  int r = a->shape.rank;
  int64_t m = a->shape.dimensions[r - 2], n = a->shape.dimensions[r - 1];
  if (m < n) {
    hlo_instruction_t *t[4];
    svd_factor(x, conjugate(x, transpose_minor(x, a)), vcols, ucols, t);
    out[0] = t[2], out[1] = t[1], out[2] = t[0], out[3] = t[3];
    return;
  }
  if (m == n) {
    svd_square(x, a, out);
    return;
  }
  hlo_instruction_t *qr[2];
  qr_factor(x, a, qr);
  hlo_instruction_t *top = slice_minor(x, qr[0], 0, n, 0, n);
  if (!top) return;
  svd_square(x, select_(x, triangle_mask(x, &top->shape, HLO_CMP_LE), top, splat(x, &top->shape, 0, 0)), out);
  hlo_instruction_t *reflectors =
      ucols > n ? pad_dim(x, qr[0], r - 1, 0, ucols - n, scalar(x, a->shape.element_type, 0, 0)) : qr[0];
  hlo_instruction_t *q = householder_product(x, reflectors, qr[1]);
  hlo_instruction_t *u[2] = {matmul(x, slice_minor(x, q, 0, m, 0, n), out[0], false), NULL};
  if (ucols > n) u[1] = slice_minor(x, q, 0, m, n, ucols);
  out[0] = concat(x, ucols > n ? 2 : 1, u, r - 1);
}

/* What a gesvd-like call's second and third results hold: U [batch..., m,
 * c], V^H [batch..., c, n] or V [batch..., n, c] (c = the other dimension
 * or min(m, n)), or nothing (a scalar: cuSOLVER's gesvd without U and V). */
typedef enum svd_slot_e { SVD_U, SVD_VT, SVD_V } svd_slot_t;

/* The columns of U (rows of V^H, columns of V) that slot shape |s| holds,
 * 0 for a scalar, -1 for a shape that is none of them. */
static int64_t svd_slot_size(const hlo_shape_t *s, const hlo_shape_t *a, svd_slot_t kind) {
  int r = a->rank;
  int64_t m = a->dimensions[r - 2], n = a->dimensions[r - 1], k = min_dim(a);
  if (!hlo_shape_is_tuple(s) && s->rank == 0 && s->element_type == a->element_type) return 0;
  if (hlo_shape_is_tuple(s) || s->rank != r || s->element_type != a->element_type) return -1;
  for (int d = 0; d < r - 2; d++)
    if (s->dimensions[d] != a->dimensions[d]) return -1;
  int64_t d0 = s->dimensions[r - 2], d1 = s->dimensions[r - 1];
  int64_t own = kind == SVD_VT ? d0 : d1, other = kind == SVD_VT ? d1 : d0, full = kind == SVD_U ? m : n;
  if (other != full || (own != full && own != k)) return -1;
  return own;
}

/* gesdd / gesvd / gesvdj: see the section comment.  Slots 2 and 3 hold
 * (U, V^H) for LAPACK and cuSOLVER's gesvd and gesdd, (V^H, U) for those
 * with transposed = true, (U, V) for gesvdj and gesvdp.  U and V are
 * computed only where a slot holds them and the call asks for them
 * (LAPACK's mode not 'N', compute_uv not false); else the slot is 0. */
static hlo_instruction_t *expand_gesvd(expand_ctx_t *x, hlo_instruction_t *in, const hlo_shape_t *parts,
                                       const svd_slot_t *kinds, const int64_t *sizes) {
  hlo_instruction_t *a = in->operands[0];
  int r = a->shape.rank;
  int64_t m = a->shape.dimensions[r - 2], n = a->shape.dimensions[r - 1], k = min_dim(&a->shape), flag;
  bool want = !(config_value(in, "mode", &flag) && flag == 'N') && !(config_value(in, "compute_uv", &flag) && !flag);
  int64_t ucols = k, vcols = k;
  for (int i = 0; i < 2; i++) {
    if (kinds[i] == SVD_U && sizes[i] > ucols) ucols = sizes[i];
    if (kinds[i] != SVD_U && sizes[i] > vcols) vcols = sizes[i];
  }
  hlo_instruction_t *f[4];
  svd_factor(x, a, want ? ucols : k, want ? vcols : k, f);
  hlo_instruction_t *v[5] = {a, f[1], NULL, NULL, f[3]};
  for (int i = 0; i < 2; i++) {
    const hlo_shape_t *s = &parts[2 + i];
    if (!want || sizes[i] == 0) v[2 + i] = splat(x, s, 0, 0);
    else if (kinds[i] == SVD_U) v[2 + i] = slice_minor(x, f[0], 0, m, 0, sizes[i]);
    else if (kinds[i] == SVD_V) v[2 + i] = slice_minor(x, f[2], 0, n, 0, sizes[i]);
    else v[2 + i] = conjugate(x, transpose_minor(x, slice_minor(x, f[2], 0, n, 0, sizes[i])));
  }
  v[4] = convert(x, v[4], parts[4].element_type);
  return tuple(x, 5, v);
}

/* gtsv: the internal tridiagonal_solve; LAPACK's call returns the
 * diagonals as gtsv leaves them, x and info, cuSPARSE's gtsv2 x alone. */
static hlo_instruction_t *expand_gtsv(expand_ctx_t *x, hlo_instruction_t *in, int nres, const hlo_shape_t *parts) {
  const hlo_shape_t *dl = &in->operands[0]->shape, *b = &in->operands[3]->shape;
  hlo_shape_t shapes[7] = {*dl, *dl, *dl, *b, array_shape(HLO_S32, dl->rank - 1, dl->dimensions), *dl,
                           with_type(dl, HLO_S32)};
  hlo_shape_t s;
  if (!hlo_shape_make_tuple(x->m, &s, 7, shapes)) {
    x->failed = true;
    return NULL;
  }
  hlo_instruction_t *e = emit(x, HLO_OPCODE_TRIDIAGONAL_SOLVE, &s, 4, in->operands);
  if (nres == 1) return tuple_element(x, e, 3);
  hlo_instruction_t *v[5];
  for (int i = 0; i < 5; i++) v[i] = tuple_element(x, e, i);
  v[4] = convert(x, v[4], parts[4].element_type);
  return tuple(x, 5, v);
}

static hlo_instruction_t *expand_permutation(expand_ctx_t *x, hlo_instruction_t *in) {
  hlo_instruction_t *p = in->operands[0];
  hlo_instruction_t *perm = pivots_to_permutation(x, convert(x, p, HLO_S32), in->shape.dimensions[in->shape.rank - 1]);
  return convert(x, perm, in->shape.element_type); /* simplify folds an identity convert */
}

static vkhlo_status_t expand_solver_call(expand_ctx_t *x, hlo_instruction_t *in, hlo_instruction_t **out) {
  const hlo_shape_t *s = &in->shape, *a = in->operand_count ? &in->operands[0]->shape : NULL;
  const hlo_shape_t *parts = hlo_shape_is_tuple(s) ? s->tuple_shapes : s;
  int nres = hlo_shape_is_tuple(s) ? s->tuple_count : 1;
  bool ok = false;
  const char *want = "";
  switch (solver_call(in)) {
    case SOLVER_POTRF:
      want = "(a [batch..., n, n] float or complex) -> (a's type, info [batch...] integer)";
      ok = in->operand_count == 1 && is_matrix(a) && a->dimensions[a->rank - 1] == a->dimensions[a->rank - 2] &&
           nres == 2 && hlo_shape_equal(&parts[0], a) && is_index_array(&parts[1], a, a->rank - 2, -1);
      if (ok) *out = expand_potrf(x, in, &parts[1]);
      break;
    case SOLVER_TRSM: {
      want = "(a [batch..., k, k], b [batch..., m, n] of a's element type[, alpha: a scalar of it]) -> b's type";
      const hlo_shape_t *b = in->operand_count >= 2 ? &in->operands[1]->shape : NULL;
      ok = (in->operand_count == 2 || (in->operand_count == 3 && in->operands[2]->shape.rank == 0 &&
                                       in->operands[2]->shape.element_type == b->element_type)) &&
           is_matrix(a) && is_matrix(b) && nres == 1 && hlo_shape_equal(s, b) && a->element_type == b->element_type;
      if (ok) *out = expand_trsm(x, in);
      break;
    }
    case SOLVER_GETRF: {
      want = "(a [batch..., m, n] float or complex) -> (a's type, pivots [batch..., min(m, n)] integer, info [batch...] "
             "integer)";
      ok = in->operand_count == 1 && is_matrix(a) && nres == 3 && hlo_shape_equal(&parts[0], a) &&
           is_index_array(&parts[1], a, a->rank - 2, min_dim(a)) && is_index_array(&parts[2], a, a->rank - 2, -1);
      if (ok) *out = expand_getrf(x, in, parts);
      break;
    }
    case SOLVER_PERMUTATION:
      want = "(pivots [batch..., k] integer) -> permutation [batch..., p] integer";
      ok = in->operand_count == 1 && nres == 1 && a->rank >= 1 && is_index_array(s, a, a->rank - 1, s->rank ? s->dimensions[s->rank - 1] : 0) &&
           hlo_element_type_is_integer(a->element_type);
      if (ok) *out = expand_permutation(x, in);
      break;
    case SOLVER_GEQRF: {
      want = "(a [batch..., m, n] f32, f64, complex64 or complex128) -> (a's type, taus [batch..., min(m, n)] of its "
             "element type)";
      ok = in->operand_count == 1 && is_lapack_matrix(a) && nres == 2 && hlo_shape_equal(&parts[0], a) &&
           parts[1].element_type == a->element_type && is_batch_shape(&parts[1], a, a->rank - 2, min_dim(a));
      if (ok) {
        hlo_instruction_t *v[2];
        qr_factor(x, in->operands[0], v);
        *out = tuple(x, 2, v);
      }
      break;
    }
    case SOLVER_ORGQR: {
      want = "(a [batch..., m, n] f32, f64, complex64 or complex128, taus [batch..., k] of its element type; k <= n <= "
             "m) -> a's type";
      const hlo_shape_t *ts = in->operand_count == 2 ? &in->operands[1]->shape : NULL;
      ok = ts && is_lapack_matrix(a) && nres == 1 && hlo_shape_equal(s, a) && ts->element_type == a->element_type &&
           ts->rank == a->rank - 1 && is_batch_shape(ts, a, a->rank - 2, ts->rank ? ts->dimensions[ts->rank - 1] : -1) &&
           ts->dimensions[ts->rank - 1] <= a->dimensions[a->rank - 1] &&
           a->dimensions[a->rank - 1] <= a->dimensions[a->rank - 2];
      if (ok) *out = householder_product(x, in->operands[0], in->operands[1]);
      break;
    }
    case SOLVER_SYEVD: {
      want = "(a [batch..., n, n] f32, f64, complex64 or complex128) -> (a's type, values [batch..., n] of its real "
             "type[, info [batch...] integer])";
      hlo_element_type_t real = a ? hlo_element_type_real(a->element_type) : HLO_PRED;
      ok = in->operand_count == 1 && is_lapack_matrix(a) && a->dimensions[a->rank - 1] == a->dimensions[a->rank - 2] &&
           (nres == 3 || nres == 2) && hlo_shape_equal(&parts[0], a) && parts[1].element_type == real &&
           is_batch_shape(&parts[1], a, a->rank - 2, a->dimensions[a->rank - 1]) &&
           (nres == 2 || is_index_array(&parts[2], a, a->rank - 2, -1));
      if (ok) *out = expand_syevd(x, in, nres, parts);
      break;
    }
    case SOLVER_GESVD: {
      want = "(a [batch..., m, n] f32, f64, complex64 or complex128) -> (a's type, s [batch..., min(m, n)] of its real "
             "type, U [batch..., m, m or min(m, n)], V^H [batch..., n or min(m, n), n] (gesvdj: V [batch..., n, n or "
             "min(m, n)]; scalars without them), info [batch...] integer)";
      const char *t = in->attrs.call_target_name;
      int64_t transposed = 0;
      config_value(in, "transposed", &transposed);
      svd_slot_t kinds[2] = {SVD_U, SVD_VT};
      if (strstr(t, "gesvdj") || strstr(t, "gesvdp")) kinds[1] = SVD_V;
      else if (transposed) kinds[0] = SVD_VT, kinds[1] = SVD_U;
      hlo_element_type_t real = a ? hlo_element_type_real(a->element_type) : HLO_PRED;
      int64_t sizes[2] = {-1, -1};
      ok = in->operand_count == 1 && is_lapack_matrix(a) && nres == 5 && hlo_shape_equal(&parts[0], a) &&
           parts[1].element_type == real && is_batch_shape(&parts[1], a, a->rank - 2, min_dim(a)) &&
           is_index_array(&parts[4], a, a->rank - 2, -1);
      for (int i = 0; ok && i < 2; i++) ok = (sizes[i] = svd_slot_size(&parts[2 + i], a, kinds[i])) >= 0;
      if (ok) *out = expand_gesvd(x, in, parts, kinds, sizes);
      break;
    }
    case SOLVER_GTSV: {
      want = "(dl, d, du [batch..., m], b [batch..., m, n], all f32, f64, complex64 or complex128) -> b's type "
             "(cuSPARSE), or (dl, d, du, b's types, info [batch...] integer) (LAPACK)";
      const hlo_shape_t *b = in->operand_count == 4 ? &in->operands[3]->shape : NULL;
      ok = b && is_lapack_matrix(b) && (nres == 1 ? hlo_shape_equal(s, b)
                                                  : nres == 5 && hlo_shape_equal(&parts[3], b) &&
                                                        is_index_array(&parts[4], b, b->rank - 2, -1));
      for (int k = 0; ok && k < 3; k++)
        ok = in->operands[k]->shape.element_type == b->element_type &&
             is_batch_shape(&in->operands[k]->shape, b, b->rank - 2, b->dimensions[b->rank - 2]) &&
             (nres == 1 || hlo_shape_equal(&parts[k], &in->operands[k]->shape));
      if (ok) *out = expand_gtsv(x, in, nres, parts);
      break;
    }
    case SOLVER_NONE: break;
  }
  if (!ok)
    return hlo_error_at(in->loc, "custom_call @%s: expected %s",
                         in->attrs.call_target_name, want);
  return NULL;
}

/* Conditionals as selects (XLA's ConditionalSimplifier does the same).
 * An if or case runs on the host: the recorded work is submitted and
 * waited for, the predicate or index read back, the branch recorded (one
 * submission each time, and no program with one is straight-line: never
 * replayed, submitted or recorded by an embedder, and a counted loop
 * holding one reads it back every iteration).  Where every branch is
 * small and cheap (at most COND_SELECT_INSTRUCTIONS instructions in all,
 * each elementwise or data movement, no side effect, no region; results of
 * at most COND_SELECT_ELEMENTS elements each), every branch is inlined and
 * each result is picked by select: if (pred) a else b is select(pred, a,
 * b), and case (index) the last branch's values replaced by branch b's
 * where index == b, from the last but one down to 0, so that an index out
 * of range takes the last branch as the spec says.  The untaken branches'
 * work is done and dropped: StableHLO ops do not trap, and without side
 * effects nothing else tells, so the results are the taken branch's, bit
 * for bit. */
#define COND_SELECT_INSTRUCTIONS 32
#define COND_SELECT_ELEMENTS (1 << 20)

static bool cheap_conditional(const hlo_instruction_t *in) {
  if ((in->opcode != HLO_OPCODE_IF && in->opcode != HLO_OPCODE_CASE) || in->called_count < 1 ||
      in->operand_count < 1 || in->operands[0]->shape.rank != 0 || hlo_instruction_has_side_effect(in))
    return false;
  int results = hlo_shape_is_tuple(&in->shape) ? in->shape.tuple_count : 1;
  for (int r = 0; r < results; r++) {
    const hlo_shape_t *s = hlo_shape_is_tuple(&in->shape) ? &in->shape.tuple_shapes[r] : &in->shape;
    if (hlo_shape_is_tuple(s) || s->element_type == HLO_TOKEN || hlo_shape_element_count(s) > COND_SELECT_ELEMENTS)
      return false;
  }
  int total = 0;
  for (int b = 0; b < in->called_count; b++) {
    const hlo_computation_t *c = in->called_computations[b];
    if (!c->root || c->parameter_count != in->operand_count - 1) return false;
    for (int i = 0; i < c->instruction_count; i++) {
      const hlo_instruction_t *y = c->instructions[i];
      switch (y->opcode) {
        case HLO_OPCODE_PARAMETER:
        case HLO_OPCODE_TUPLE:
        case HLO_OPCODE_GET_TUPLE_ELEMENT: continue;
        case HLO_OPCODE_CONSTANT: break;
        default:
          if (y->called_count > 0 || (!hlo_opcode_is_pointwise(y->opcode) && !el_is_data_movement(y->opcode)))
            return false;
      }
      if (hlo_shape_is_tuple(&y->shape) || y->shape.element_type == HLO_TOKEN) return false;
      if (++total > COND_SELECT_INSTRUCTIONS) return false;
    }
  }
  return true;
}

static hlo_instruction_t *expand_conditional(expand_ctx_t *x, hlo_instruction_t *in) {
  bool multi = hlo_shape_is_tuple(&in->shape);
  int n = multi ? in->shape.tuple_count : 1, branches = in->called_count;
  hlo_instruction_t **values = arena_alloc(&x->m->arena, sizeof(void *) * (size_t)(branches * (n + 1)));
  if (!values) {
    x->failed = true;
    return NULL;
  }
  for (int b = 0; b < branches; b++)
    if (!hlo_computation_inline(x->m, x->c, in->called_computations[b], in->operands + 1, multi, values + b * (n + 1))) {
      x->failed = true;
      return NULL;
    }
  hlo_instruction_t *selector = in->operands[0];
  hlo_instruction_t **results = arena_alloc(&x->m->arena, sizeof(void *) * (size_t)(n + 1));
  if (!results) {
    x->failed = true;
    return NULL;
  }
  for (int r = 0; r < n; r++) {
    hlo_instruction_t *v = values[(branches - 1) * (n + 1) + r]; /* if: the false branch */
    for (int b = branches - 2; b >= 0; b--) {
      hlo_instruction_t *take = in->opcode == HLO_OPCODE_IF
                                    ? selector
                                    : compare(x, selector, scalar(x, selector->shape.element_type, 0, (uint64_t)b),
                                              HLO_CMP_EQ);
      hlo_shape_t mask = v ? with_type(&v->shape, HLO_PRED) : selector->shape;
      if (v && v->shape.rank > 0) take = broadcast(x, take, &mask, 0, NULL);
      v = select_(x, take, values[b * (n + 1) + r], v);
    }
    results[r] = v;
  }
  return multi ? tuple(x, n, results) : results[0];
}

/* -------------------------------------------------- select_and_scatter */

/* select_and_scatter (JAX's gradient of max pooling) per operand element
 * re-runs the selection of every window covering that element: a 3 x 3
 * stride-2 window's selection 2.25 times per element, 9 selects each
 * (lavapipe, 8 x 112 x 112 x 64: 208 ms, the max pooling itself 13).
 * Split, select_window makes each window's selection once (the row-major
 * operand index of the selected element), and scatter_selected sums, per
 * operand element, the source values of the covering windows that
 * selected it (on CPU devices both by 64-bit words of 8 channels:
 * codegen/emit_scatter.c): 16 ms.  The same selections in the same order,
 * the same scatter calls in the same order: exact.  Where the operand's
 * indices fit in s32. */
static bool is_splittable_select_and_scatter(const hlo_instruction_t *in) {
  return in->opcode == HLO_OPCODE_SELECT_AND_SCATTER && in->operand_count == 3 && in->called_count == 2 &&
         !hlo_shape_is_tuple(&in->shape) && hlo_shape_element_count(&in->operands[0]->shape) < INT32_MAX;
}

static hlo_instruction_t *expand_select_and_scatter(expand_ctx_t *x, hlo_instruction_t *in) {
  hlo_shape_t s = with_type(&in->operands[1]->shape, HLO_S32);
  hlo_instruction_t *sel = emit(x, HLO_OPCODE_SELECT_WINDOW, &s, 1, &in->operands[0]);
  hlo_instruction_t *ops[3] = {sel, in->operands[1], in->operands[2]};
  hlo_instruction_t *r = emit(x, HLO_OPCODE_SCATTER_SELECTED, &in->shape, 3, ops);
  if (!sel || !r) return NULL;
  sel->attrs = r->attrs = in->attrs;
  if (!hlo_instruction_set_called(x->m, sel, 1, &in->called_computations[0]) ||
      !hlo_instruction_set_called(x->m, r, 1, &in->called_computations[1])) {
    x->failed = true;
    return NULL;
  }
  return r;
}

/* ----------------------------------------------------------- long scatters */

/* The scatter kernel (emit_scatter.c) loops, per invocation, over the
 * scatter positions (an invocation per window element) or over every
 * update element (one invocation): 10^6 scalar updates (a bincount, a
 * segment sum) are 10^6 iterations in one invocation, which lavapipe's
 * loop limiter (65535 per invocation) refused.  Such a scatter becomes a
 * chain of scatters of consecutive chunks of its positions along the
 * updates' outermost scatter dimension (and the indices' matching one),
 * each at most SCATTER_CHUNK iterations, each updating the previous one's
 * result in place: the updates in the same order, bit-identical.  For one
 * operand and no batching dimensions, where a chunk of one outermost
 * position fits. */
#define SCATTER_CHUNK 32768

/* The chunk length along the updates' outermost scatter dimension (*du)
 * and the indices' dimension it indexes (*ds), or 0 when |in| is not
 * split. */
static int64_t scatter_chunk(const hlo_instruction_t *in, int *du, int *ds) {
  const hlo_attrs_t *a = &in->attrs;
  if (in->opcode != HLO_OPCODE_SCATTER || in->operand_count != 3 || hlo_shape_is_tuple(&in->shape) ||
      in->called_count != 1 || a->input_batching_dims.count > 0)
    return 0;
  const hlo_shape_t *ss = &in->operands[1]->shape, *us = &in->operands[2]->shape;
  /* the loop iterations per position of the outermost scatter dimension:
   * its inner scatter dimensions', and the window's unless an invocation
   * takes each window element */
  bool parallel = codegen_scatter_parallel(in);
  int64_t iterations = 1;
  *du = -1;
  for (int d = 0; d < us->rank; d++) {
    bool window = hlo_dims_contains(a->update_window_dims, d);
    if (!window && *du < 0) *du = d;
    else if (!window || !parallel) iterations *= us->dimensions[d];
  }
  if (*du < 0) return 0;
  *ds = a->index_vector_dim == 0 ? 1 : 0; /* the indices' first scatter dimension */
  if (*ds >= ss->rank || ss->dimensions[*ds] != us->dimensions[*du] || iterations < 1) return 0;
  int64_t chunk = SCATTER_CHUNK / iterations;
  return chunk >= 1 && us->dimensions[*du] * iterations > SCATTER_CHUNK ? chunk : 0;
}

static bool is_long_scatter(const hlo_instruction_t *in) {
  int du, ds;
  return scatter_chunk(in, &du, &ds) > 0;
}

static hlo_instruction_t *expand_long_scatter(expand_ctx_t *x, hlo_instruction_t *in) {
  int du, ds;
  int64_t chunk = scatter_chunk(in, &du, &ds), n = in->operands[2]->shape.dimensions[du];
  hlo_instruction_t *r = in->operands[0];
  for (int64_t p = 0; p < n && r; p += chunk) {
    int64_t end = p + chunk < n ? p + chunk : n;
    hlo_instruction_t *ops[3] = {r, slice_dim(x, in->operands[1], ds, p, end), slice_dim(x, in->operands[2], du, p, end)};
    r = emit(x, HLO_OPCODE_SCATTER, &in->shape, 3, ops);
    if (!r) return NULL;
    r->attrs = in->attrs;
    if (!hlo_instruction_set_called(x->m, r, 1, &in->called_computations[0])) {
      x->failed = true;
      return NULL;
    }
  }
  return r;
}

/* ------------------------------------- arguments larger than a binding */

/* A kernel binds each operand whole, and a binding holds at most
 * maxStorageBufferRange bytes (128 MiB on lavapipe and on many mobile
 * GPUs, where GPT-2's 50257 x 768 f32 embedding, 154 MB, was refused).
 * An entry parameter larger than that becomes the concatenate of
 * contiguous slices along its first dimension, each within the range
 * (also when converted to 32 bits) and at an offset that is a multiple of
 * 256 bytes (EXE_VIEW_ALIGNMENT):
 * lowering makes each slice a view of the argument (api/inplace.c,
 * exe_view_offset; the fusion pass leaves such slices alone), and the
 * kernels bind the pieces.  Gathers and elementwise consumers read the
 * concatenate fused (one binding per piece); a dot_general over it is
 * distributed over the pieces (a dot per piece, concatenated along the
 * result dimension the pieces' dimension becomes, or summed when it is a
 * contracting one: another order of the same sums), and a transpose or an
 * elementwise unary op of it moves onto the pieces, so that the GEMM
 * kernels see each piece alone. */

static uint32_t binding_range(const expand_ctx_t *x) { return x->target ? x->target->max_storage_buffer_range : 0; }

/* The dimension an array of shape |s| is split along: its first of extent
 * more than 1, so that the pieces are consecutive bytes of it (-1: none). */
static int piece_dimension(const hlo_shape_t *s) {
  for (int d = 0; d < s->rank; d++)
    if (s->dimensions[d] > 1) return d;
  return -1;
}

/* The rows of |in| (an array, split along piece_dimension) per piece, or 0 when
 * |in| fits a binding or cannot be split so. */
static int64_t rows_per_piece(const expand_ctx_t *x, const hlo_instruction_t *in) {
  uint64_t range = binding_range(x), bytes = hlo_shape_size_bytes(&in->shape);
  const hlo_shape_t *s = &in->shape;
  size_t es = hlo_element_type_size_bytes(s->element_type);
  int d = hlo_shape_is_tuple(s) ? -1 : piece_dimension(s);
  if (!range || d < 0 || bytes <= range || es == 0 || (int)(8 * es) != hlo_element_type_bit_width(s->element_type))
    return 0;
  /* a piece converted to 32 bits (f16 weights used as f32) must fit too */
  uint64_t row = bytes / (uint64_t)s->dimensions[d], rows = range / (row / es * (es < 4 ? 4 : es)), step = 1;
  while ((row * step) % 256) step++; /* piece offsets: multiples of 256 bytes */
  rows -= rows % step;
  return rows >= 1 && (int64_t)rows < s->dimensions[d] ? (int64_t)rows : 0;
}

static bool is_oversized_parameter(const expand_ctx_t *x, const hlo_instruction_t *in) {
  return in->opcode == HLO_OPCODE_PARAMETER && x->c == x->m->entry_computation && rows_per_piece(x, in) > 0;
}

/* The concatenate of |piece|(x, in, d, lo, hi) over the rows_per_piece
 * pieces of |in| along its piece_dimension d (a slice of a parameter, or
 * the rows of a result, result_rows). */
typedef hlo_instruction_t *(*piece_fn)(expand_ctx_t *x, hlo_instruction_t *in, int d, int64_t lo, int64_t hi);
static hlo_instruction_t *in_pieces(expand_ctx_t *x, hlo_instruction_t *in, piece_fn piece) {
  int d = piece_dimension(&in->shape);
  int64_t rows = rows_per_piece(x, in), n = in->shape.dimensions[d];
  int count = (int)((n + rows - 1) / rows);
  hlo_instruction_t **pieces = arena_alloc(&x->m->arena, sizeof(void *) * (size_t)count);
  if (!pieces) {
    x->failed = true;
    return NULL;
  }
  for (int i = 0; i < count; i++) {
    pieces[i] = piece(x, in, d, i * rows, (i + 1) * rows < n ? (i + 1) * rows : n);
    if (!pieces[i]) return NULL;
  }
  return concat(x, count, pieces, d);
}

static hlo_instruction_t *expand_oversized_parameter(expand_ctx_t *x, hlo_instruction_t *in) {
  return keep(x, in) ? in_pieces(x, in, slice_dim) : NULL;
}

/* A concatenate larger than a binding (of an oversized parameter's
 * pieces, or of ops moved onto them). */
static bool is_split_value(const expand_ctx_t *x, const hlo_instruction_t *v) {
  return v->opcode == HLO_OPCODE_CONCATENATE && codegen_target_exceeds_binding(x->target, &v->shape);
}

static bool is_over_split_value(const expand_ctx_t *x, const hlo_instruction_t *in) {
  if (in->opcode == HLO_OPCODE_DOT_GENERAL)
    return in->operand_count == 2 && (is_split_value(x, in->operands[0]) || is_split_value(x, in->operands[1]));
  if (in->opcode == HLO_OPCODE_TRANSPOSE || (hlo_opcode_is_elementwise(in->opcode) && in->operand_count == 1))
    return is_split_value(x, in->operands[0]) && !hlo_shape_is_tuple(&in->shape);
  return false;
}

/* |op| (a transpose or an elementwise unary op) applied to each operand
 * of the concatenate |v|, concatenated. */
static hlo_instruction_t *move_onto_pieces(expand_ctx_t *x, hlo_instruction_t *in, hlo_instruction_t *v) {
  int64_t d = v->attrs.dimension, rd = d;
  if (in->opcode == HLO_OPCODE_TRANSPOSE)
    for (int i = 0; i < in->shape.rank; i++)
      if (in->attrs.permutation.data[i] == d) rd = i;
  hlo_instruction_t **parts = arena_alloc(&x->m->arena, sizeof(void *) * (size_t)v->operand_count);
  if (!parts) {
    x->failed = true;
    return NULL;
  }
  for (int i = 0; i < v->operand_count; i++) {
    hlo_instruction_t *p = v->operands[i];
    hlo_shape_t s = in->shape;
    s.dimensions[rd] = p->shape.dimensions[d];
    s = array_shape(s.element_type, s.rank, s.dimensions);
    parts[i] = emit(x, in->opcode, &s, 1, &p);
    if (!parts[i]) return NULL;
    parts[i]->attrs = in->attrs;
  }
  return concat(x, v->operand_count, parts, (int)rd);
}

/* dot_general with operand |k| the concatenate |v| along dimension d: a
 * dot per piece. */
static hlo_instruction_t *distribute_dot(expand_ctx_t *x, hlo_instruction_t *in, int k, hlo_instruction_t *v) {
  const hlo_attrs_t *a = &in->attrs;
  hlo_dims_t mb = k ? a->rhs_batching_dimensions : a->lhs_batching_dimensions;
  hlo_dims_t mc = k ? a->rhs_contracting_dimensions : a->lhs_contracting_dimensions;
  hlo_dims_t ob = k ? a->lhs_batching_dimensions : a->rhs_batching_dimensions;
  hlo_dims_t oc = k ? a->lhs_contracting_dimensions : a->rhs_contracting_dimensions;
  int64_t d = v->attrs.dimension;
  int other_dim = -1, rd = -1; /* the other operand's matching dimension, the result's */
  for (int i = 0; i < mb.count; i++)
    if (mb.data[i] == d) other_dim = (int)ob.data[i], rd = i;
  for (int i = 0; i < mc.count; i++)
    if (mc.data[i] == d) other_dim = (int)oc.data[i];
  if (other_dim < 0) { /* a free dimension: its place among the result's */
    const hlo_shape_t *ls = &in->operands[0]->shape;
    int lhs_free = ls->rank - a->lhs_batching_dimensions.count - a->lhs_contracting_dimensions.count;
    rd = a->lhs_batching_dimensions.count + (k ? lhs_free : 0);
    for (int64_t e = 0; e < d; e++)
      if (!hlo_dims_contains(mb, e) && !hlo_dims_contains(mc, e)) rd++;
  }
  bool contracting = other_dim >= 0 && rd < 0;
  hlo_instruction_t **parts = arena_alloc(&x->m->arena, sizeof(void *) * (size_t)v->operand_count);
  if (!parts) {
    x->failed = true;
    return NULL;
  }
  hlo_instruction_t *other = in->operands[1 - k];
  hlo_instruction_t *sum = NULL;
  for (int64_t i = 0, at = 0; i < v->operand_count; i++) {
    hlo_instruction_t *p = v->operands[i];
    int64_t len = p->shape.dimensions[d];
    hlo_instruction_t *ops[2];
    ops[k] = p;
    ops[1 - k] = other_dim >= 0 ? slice_dim(x, other, other_dim, at, at + len) : other;
    at += len;
    hlo_shape_t s = in->shape;
    if (!contracting) s.dimensions[rd] = len;
    s = array_shape(s.element_type, s.rank, s.dimensions);
    hlo_instruction_t *dot = emit(x, HLO_OPCODE_DOT_GENERAL, &s, 2, ops);
    if (!dot) return NULL;
    dot->attrs = in->attrs;
    if (contracting) sum = sum ? binary(x, HLO_OPCODE_ADD, sum, dot) : dot;
    else parts[i] = dot;
  }
  return contracting ? sum : concat(x, v->operand_count, parts, rd);
}

/* The oversized parameter whose pieces |v| concatenates whole, or |v|. */
static hlo_instruction_t *unsplit(hlo_instruction_t *v) {
  if (v->opcode != HLO_OPCODE_CONCATENATE || v->operand_count < 1 || v->operands[0]->opcode != HLO_OPCODE_SLICE)
    return v;
  hlo_instruction_t *p = v->operands[0]->operands[0];
  if (p->opcode != HLO_OPCODE_PARAMETER || !hlo_shape_compatible_dims(&p->shape, &v->shape)) return v;
  for (int i = 0; i < v->operand_count; i++)
    if (v->operands[i]->opcode != HLO_OPCODE_SLICE || v->operands[i]->operands[0] != p) return v;
  return p;
}

/* Values that only pass through (results, loop states, branch operands,
 * calls) keep the parameter whole: copies, which no binding limits. */
static void keep_passed_parameters(hlo_computation_t *c) {
  for (int i = 0; i < c->instruction_count; i++) {
    hlo_instruction_t *in = c->instructions[i];
    switch (in->opcode) {
      case HLO_OPCODE_TUPLE: case HLO_OPCODE_WHILE: case HLO_OPCODE_IF: case HLO_OPCODE_CASE:
      case HLO_OPCODE_CUSTOM_CALL: case HLO_OPCODE_OPTIMIZATION_BARRIER:
        for (int k = 0; k < in->operand_count; k++) in->operands[k] = unsplit(in->operands[k]);
        break;
      default: break;
    }
  }
  if (c->root) c->root = unsplit(c->root);
}

static hlo_instruction_t *expand_over_split_value(expand_ctx_t *x, hlo_instruction_t *in) {
  if (in->opcode != HLO_OPCODE_DOT_GENERAL) return move_onto_pieces(x, in, in->operands[0]);
  int k = is_split_value(x, in->operands[0]) ? 0 : 1;
  return distribute_dot(x, in, k, in->operands[k]);
}

/* Results larger than a binding.  An array computed by an elementwise op,
 * a broadcast_in_dim, a transpose, a dot_general, a reshape that keeps the
 * dimensions up to the split one, or a gather along a batch dimension
 * (rows of its indices), larger than a binding may be, is
 * computed in pieces along its piece_dimension instead (rows_per_piece
 * rows each, consecutive bytes of it), each from the matching rows of the
 * operands that have them (the matching piece where an operand is itself
 * split so), and the pieces concatenated.  That concatenate is never a
 * kernel's output (codegen/fusion.c, root_fusible): lowering copies the
 * pieces into its buffer (api/lower.c, lower_split_concatenate), and its
 * users read it piece by piece, fused (a reduce of the logits), or are
 * split in turn (the rest of a softmax over them).  GPT-2's logits at
 * sequence 1024 (1024 x 50257 f32, 206 MB) on lavapipe's 128 MiB binding
 * were refused before.  Entry computation only; a second round
 * (codegen_expand_pass, oversized_only) splits those the expansions made. */

/* The dimension of a gather's indices that its result dimension |d| (a
 * batch dimension, not an offset one) runs along, or -1. */
static int gather_indices_dimension(const hlo_instruction_t *in, int d) {
  const hlo_attrs_t *a = &in->attrs;
  if (hlo_dims_contains(a->offset_dims, d)) return -1;
  int j = 0; /* its place among the result's batch dimensions */
  for (int e = 0; e < d; e++) j += !hlo_dims_contains(a->offset_dims, e);
  for (int e = 0; e < in->operands[1]->shape.rank; e++)
    if (e != a->index_vector_dim && j-- == 0) return e;
  return -1;
}

static bool is_oversized_result(const expand_ctx_t *x, const hlo_instruction_t *in) {
  if (x->c != x->m->entry_computation || hlo_shape_is_tuple(&in->shape) || in->called_count > 0 ||
      rows_per_piece(x, in) <= 0)
    return false;
  if (in->opcode == HLO_OPCODE_DOT_GENERAL)
    return in->operand_count == 2 && in->attrs.lhs_batching_dimensions.count == in->attrs.rhs_batching_dimensions.count;
  if (in->opcode == HLO_OPCODE_BROADCAST_IN_DIM || in->opcode == HLO_OPCODE_TRANSPOSE) return in->operand_count == 1;
  int d = piece_dimension(&in->shape);
  if (in->opcode == HLO_OPCODE_RESHAPE) { /* rows of the operand's: the dimensions up to d kept */
    const hlo_shape_t *o = &in->operands[0]->shape;
    if (in->operand_count != 1 || o->rank <= d) return false;
    for (int i = 0; i <= d; i++)
      if (o->dimensions[i] != in->shape.dimensions[i]) return false;
    return true;
  }
  if (in->opcode == HLO_OPCODE_GATHER) /* rows of the indices (an embedding lookup's tokens) */
    return in->operand_count == 2 && in->attrs.operand_batching_dims.count == 0 && gather_indices_dimension(in, d) >= 0;
  if (!hlo_opcode_is_elementwise(in->opcode) || in->operand_count < 1) return false;
  for (int k = 0; k < in->operand_count; k++) /* operands of the result's dimensions, or scalars */
    if (in->operands[k]->shape.rank != 0 && !hlo_shape_compatible_dims(&in->operands[k]->shape, &in->shape))
      return false;
  return true;
}

/* Rows [lo, hi) of |v| along |d|: the operand of a concatenate along |d|
 * that is exactly those rows, else a slice. */
static hlo_instruction_t *rows_along(expand_ctx_t *x, hlo_instruction_t *v, int d, int64_t lo, int64_t hi) {
  if (lo == 0 && hi == v->shape.dimensions[d]) return v;
  if (v->opcode == HLO_OPCODE_CONCATENATE && v->attrs.dimension == d)
    for (int64_t i = 0, at = 0; i < v->operand_count; at += v->operands[i]->shape.dimensions[d], i++)
      if (at == lo && at + v->operands[i]->shape.dimensions[d] == hi) return v->operands[i];
  return slice_dim(x, v, d, lo, hi);
}

/* The dimension of dot_general |in|'s operand k that its result dimension
 * |d| comes from, or -1. */
static int dot_source_dimension(const hlo_instruction_t *in, int d, int k) {
  const hlo_attrs_t *a = &in->attrs;
  int nb = a->lhs_batching_dimensions.count;
  if (d < nb) return (int)(k ? a->rhs_batching_dimensions : a->lhs_batching_dimensions).data[d];
  hlo_dims_t b = k ? a->rhs_batching_dimensions : a->lhs_batching_dimensions;
  hlo_dims_t c = k ? a->rhs_contracting_dimensions : a->lhs_contracting_dimensions;
  int lhs_free = in->operands[0]->shape.rank - nb - a->lhs_contracting_dimensions.count;
  int j = d - nb - (k ? lhs_free : 0); /* its place among operand k's free dimensions */
  if (j < 0 || (!k && j >= lhs_free)) return -1;
  for (int e = 0; e < in->operands[k]->shape.rank; e++)
    if (!hlo_dims_contains(b, e) && !hlo_dims_contains(c, e) && j-- == 0) return e;
  return -1;
}

/* |in| computed for rows [lo, hi) of its result along |d|. */
static hlo_instruction_t *result_rows(expand_ctx_t *x, hlo_instruction_t *in, int d, int64_t lo, int64_t hi) {
  hlo_instruction_t **ops = arena_alloc(&x->m->arena, sizeof(void *) * (size_t)in->operand_count);
  if (!ops) {
    x->failed = true;
    return NULL;
  }
  for (int k = 0; k < in->operand_count; k++) {
    hlo_instruction_t *v = in->operands[k];
    int e = -1; /* the operand's dimension of those rows */
    if (in->opcode == HLO_OPCODE_DOT_GENERAL) e = dot_source_dimension(in, d, k);
    else if (in->opcode == HLO_OPCODE_BROADCAST_IN_DIM) {
      for (int j = 0; j < in->attrs.broadcast_dimensions.count; j++)
        if (in->attrs.broadcast_dimensions.data[j] == d && v->shape.dimensions[j] == in->shape.dimensions[d]) e = j;
    } else if (in->opcode == HLO_OPCODE_TRANSPOSE) {
      e = (int)in->attrs.permutation.data[d];
    } else if (in->opcode == HLO_OPCODE_GATHER) {
      e = k == 1 ? gather_indices_dimension(in, d) : -1;
    } else if (v->shape.rank) { /* an elementwise op's operand, a reshape's */
      e = d;
    }
    ops[k] = e >= 0 ? rows_along(x, v, e, lo, hi) : v;
    if (!ops[k]) return NULL;
  }
  hlo_shape_t s = in->shape;
  s.dimensions[d] = hi - lo;
  s = array_shape(s.element_type, s.rank, s.dimensions);
  hlo_instruction_t *r = hlo_instruction_create(x->m, in->opcode, &s, in->operand_count, ops);
  if (r) r->attrs = in->attrs;
  return place(x, r); /* a piece of a product may be split along k in turn */
}


/* ------------------------------------------------------------ driver */

static bool is_expanded(const expand_ctx_t *x, const hlo_instruction_t *in) {
  dot_numbers_t dn;
  if (x->oversized_only) return is_oversized_result(x, in);
  if (is_oversized_parameter(x, in) || is_over_split_value(x, in) || is_oversized_result(x, in)) return true;
  switch (in->opcode) {
    case HLO_OPCODE_DOT:
    case HLO_OPCODE_DOT_GENERAL: return split_k_parts(x, in, &dn) >= 2;
    case HLO_OPCODE_REDUCE: return is_long_reduce(in);
    case HLO_OPCODE_SELECT_AND_SCATTER: return is_splittable_select_and_scatter(in);
    case HLO_OPCODE_SCATTER: return is_long_scatter(in);
    case HLO_OPCODE_REDUCE_WINDOW: {
      bool reverse;
      return scan_dimension(in, &reverse) >= 0 || is_large_window(in);
    }
    case HLO_OPCODE_CHOLESKY:
    case HLO_OPCODE_TRIANGULAR_SOLVE: return is_blocked_linalg(in);
    case HLO_OPCODE_FFT: return is_long_fft(in);
    case HLO_OPCODE_CONVOLUTION:
      return is_lhs_dilated_conv(in) || is_wide_window_conv(in) || is_depthwise_grad_conv(in) ||
             is_grouped_grad_conv(in) || is_deep_conv(in) || is_gemm_conv(x, in);
    case HLO_OPCODE_CUSTOM_CALL: return is_annotation(in) || solver_call(in) != SOLVER_NONE || is_approx_top_k(in);
    case HLO_OPCODE_SORT:
    case HLO_OPCODE_CHLO_TOP_K: return is_long_sort(in);
    case HLO_OPCODE_CHLO_RAGGED_DOT: return !codegen_ragged_dot_gemm(x->target, in);
    case HLO_OPCODE_IF:
    case HLO_OPCODE_CASE: return cheap_conditional(in);
    case HLO_OPCODE_COMPOSITE:
    case HLO_OPCODE_BATCH_NORM_INFERENCE:
    case HLO_OPCODE_BATCH_NORM_TRAINING:
    case HLO_OPCODE_BATCH_NORM_GRAD:
    case HLO_OPCODE_CHLO_MULHI:
    case HLO_OPCODE_CHLO_SCAN:
    case HLO_OPCODE_DYNAMIC_BROADCAST_IN_DIM:
    case HLO_OPCODE_DYNAMIC_IOTA:
    case HLO_OPCODE_DYNAMIC_RESHAPE:
    case HLO_OPCODE_DYNAMIC_PAD:
    case HLO_OPCODE_DYNAMIC_GATHER:
    case HLO_OPCODE_DYNAMIC_CONV:
    case HLO_OPCODE_REAL_DYNAMIC_SLICE:
    case HLO_OPCODE_GET_DIMENSION_SIZE:
    case HLO_OPCODE_REPLICA_ID:
    case HLO_OPCODE_PARTITION_ID:
    case HLO_OPCODE_ALL_GATHER:
    case HLO_OPCODE_ALL_REDUCE:
    case HLO_OPCODE_ALL_TO_ALL:
    case HLO_OPCODE_REDUCE_SCATTER:
    case HLO_OPCODE_COLLECTIVE_BROADCAST:
    case HLO_OPCODE_COLLECTIVE_PERMUTE:
    case HLO_OPCODE_COLLECTIVE_REDUCE:
      return true;
    default: return false;
  }
}

/* Appends the expansion of |in| and sets *out to the value replacing it. */
static vkhlo_status_t expand_one(expand_ctx_t *x, hlo_instruction_t *in, hlo_instruction_t **out) {
  *out = NULL;
  x->loc = in->loc;
  if (is_oversized_parameter(x, in)) {
    *out = expand_oversized_parameter(x, in);
    return NULL;
  }
  if (is_oversized_result(x, in)) { /* first: a product's pieces may then be distributed */
    *out = in_pieces(x, in, result_rows);
    return NULL;
  }
  if (is_over_split_value(x, in)) {
    *out = expand_over_split_value(x, in);
    return NULL;
  }
  switch (in->opcode) {
    case HLO_OPCODE_COMPOSITE: { /* spec 'composite': semantically its decomposition */
      const hlo_computation_t *d = in->called_computations[0];
      bool multi = hlo_shape_is_tuple(&in->shape);
      int n = multi ? in->shape.tuple_count : 1;
      hlo_instruction_t **results = arena_alloc(&x->m->arena, sizeof(void *) * (size_t)(n + 1));
      if (!results || !hlo_computation_inline(x->m, x->c, d, in->operands, multi, results)) {
        x->failed = true;
        return NULL;
      }
      *out = multi ? tuple(x, n, results) : results[0];
      return NULL;
    }
    case HLO_OPCODE_BATCH_NORM_INFERENCE: /* spec 'batch_norm_inference' */
      *out = batch_norm_normalize(x, in->operands[0], in->operands[1], in->operands[2],
                                  in->operands[3], in->operands[4], in->attrs.epsilon,
                                  in->attrs.feature_index);
      return NULL;
    case HLO_OPCODE_BATCH_NORM_TRAINING: *out = expand_batch_norm_training(x, in); return NULL;
    case HLO_OPCODE_BATCH_NORM_GRAD: *out = expand_batch_norm_grad(x, in); return NULL;
    case HLO_OPCODE_CHLO_MULHI: *out = expand_mulhi(x, in); return NULL;
    case HLO_OPCODE_CHLO_RAGGED_DOT: *out = expand_ragged_dot(x, in); return NULL;
    case HLO_OPCODE_DOT:
    case HLO_OPCODE_DOT_GENERAL: *out = expand_split_k(x, in); return NULL;
    case HLO_OPCODE_CHLO_SCAN: *out = expand_scan(x, in); return NULL;
    case HLO_OPCODE_IF:
    case HLO_OPCODE_CASE: *out = expand_conditional(x, in); return NULL;
    case HLO_OPCODE_CHOLESKY: *out = expand_cholesky(x, in); return NULL;
    case HLO_OPCODE_TRIANGULAR_SOLVE: *out = expand_triangular_solve(x, in); return NULL;
    case HLO_OPCODE_FFT: *out = expand_fft(x, in); return NULL;
    case HLO_OPCODE_CONVOLUTION:
      *out = is_lhs_dilated_conv(in)   ? expand_lhs_dilated_conv(x, in)
             : is_wide_window_conv(in)    ? expand_wide_window_conv(x, in)
             : is_depthwise_grad_conv(in) ? expand_depthwise_grad_conv(x, in)
             : is_grouped_grad_conv(in)   ? expand_grouped_grad_conv(x, in)
             : is_gemm_conv(x, in)        ? expand_gemm_conv(x, in)
                                          : expand_deep_conv(x, in);
      return NULL;
    case HLO_OPCODE_CUSTOM_CALL:
      if (is_approx_top_k(in)) return expand_approx_top_k(x, in, out);
      return solver_call(in) != SOLVER_NONE ? expand_solver_call(x, in, out) : expand_annotation(in, out);
    case HLO_OPCODE_REDUCE: *out = split_reduce(x, in); return NULL;
    case HLO_OPCODE_SELECT_AND_SCATTER: *out = expand_select_and_scatter(x, in); return NULL;
    case HLO_OPCODE_SCATTER: *out = expand_long_scatter(x, in); return NULL;
    case HLO_OPCODE_REDUCE_WINDOW:
      *out = is_large_window(in) ? expand_large_window(x, in) : expand_scan_window(x, in);
      return NULL;
    case HLO_OPCODE_SORT:
    case HLO_OPCODE_CHLO_TOP_K: *out = expand_long_sort(x, in); return NULL;
    case HLO_OPCODE_GET_DIMENSION_SIZE: /* spec 'get_dimension_size' */
      *out = scalar(x, in->shape.element_type, 0,
                    (uint64_t)in->operands[0]->shape.dimensions[in->attrs.dimension]);
      return NULL;
    case HLO_OPCODE_REPLICA_ID:   /* spec 'replica_id' */
    case HLO_OPCODE_PARTITION_ID: /* spec 'partition_id' */
      *out = scalar(x, in->shape.element_type, 0, 0);
      return NULL;
    case HLO_OPCODE_ALL_GATHER:     /* spec 'all_gather' */
    case HLO_OPCODE_ALL_REDUCE:     /* spec 'all_reduce' */
    case HLO_OPCODE_ALL_TO_ALL:     /* spec 'all_to_all' */
    case HLO_OPCODE_REDUCE_SCATTER: /* spec 'reduce_scatter' */
      if (in->attrs.group_size > 0) return expand_linked_collective(x, in, out);
      return expand_identity_collective(x, in, out);
    case HLO_OPCODE_COLLECTIVE_BROADCAST: /* spec 'collective_broadcast' */
    case HLO_OPCODE_COLLECTIVE_REDUCE:    /* spec 'collective_reduce' */
      if (in->attrs.group_size > 0) return expand_linked_collective(x, in, out);
      /* fall through */
    case HLO_OPCODE_COLLECTIVE_PERMUTE:   /* spec 'collective_permute' */
      if (max_group_id(in) > 0)
        return el_unimplemented(in, "stablehlo.%s across several processes (vkhlo runs one replica "
                             "of one partition)", hlo_opcode_name(in->opcode));
      *out = expand_receive_or_zero(x, in);
      return NULL;
    default: return expand_dynamic(x, in, out);
  }
}

/* Rebuilds |c| with every expandable instruction replaced. */
static vkhlo_status_t expand_computation(expand_ctx_t *x, hlo_computation_t *c, bool *changed) {
  bool any = false;
  x->c = c;
  for (int i = 0; i < c->instruction_count; i++) any |= is_expanded(x, c->instructions[i]);
  if (!any) return NULL;
  *changed = true;
  int count = c->instruction_count;
  hlo_instruction_t **old = arena_memdup(&x->m->arena, c->instructions, sizeof(void *) * (size_t)count);
  if (!old) return VKHLO_NO_MEMORY();
  int parameter_count = c->parameter_count;
  hlo_instruction_t **parameters = c->parameters;
  for (int i = 0; i < count; i++) old[i]->scratch = NULL;
  c->instruction_count = 0;
  c->parameter_count = 0;
  c->parameters = NULL;
  x->c = c;
  vkhlo_status_t st = NULL;
  for (int i = 0; i < count && !st && !x->failed; i++) {
    hlo_instruction_t *in = old[i];
    for (int k = 0; k < in->operand_count; k++)
      if (in->operands[k]->scratch) in->operands[k] = in->operands[k]->scratch;
    if (!is_expanded(x, in)) {
      if (!hlo_computation_append(x->m, c, in)) x->failed = true;
      continue;
    }
    hlo_instruction_t *r = NULL;
    st = expand_one(x, in, &r);
    if (!st && !r && !x->failed)
      st = VKHLO_INTERNAL("expand: no replacement for %s", in->name);
    in->scratch = r;
  }
  if (!st && c->root && c->root->scratch) c->root = c->root->scratch;
  for (int i = 0; i < count; i++) old[i]->scratch = NULL;
  c->parameter_count = parameter_count;
  c->parameters = parameters;
  if (!st && x->failed) st = VKHLO_NO_MEMORY();
  return st;
}

vkhlo_status_t codegen_expand_pass(hlo_module_t *module, const codegen_target_t *target, bool *changed) {
  *changed = false;
  expand_ctx_t x;
  memset(&x, 0, sizeof x);
  x.m = module;
  x.target = target;
  /* Iterate by index: add_body() prepends computations as it goes. */
  for (int i = 0; i < module->computation_count; i++) {
    hlo_computation_t *c = module->computations[i];
    int before = module->computation_count;
    VKHLO_RETURN_IF_ERROR(expand_computation(&x, c, changed));
    if (c == module->entry_computation && binding_range(&x)) keep_passed_parameters(c);
    i += module->computation_count - before;
  }
  /* values larger than a binding made by the expansions themselves (the
   * product with every expert of a ragged_dot expanded densely) */
  x.oversized_only = true;
  for (int round = 0, more = 1; more && round < 4 && binding_range(&x) && module->entry_computation; round++) {
    bool again = false;
    VKHLO_RETURN_IF_ERROR(expand_computation(&x, module->entry_computation, &again));
    more = again;
    *changed |= again;
  }
  return NULL;
}
