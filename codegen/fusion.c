/*
 * The fusion pass: groups instructions into clusters and replaces each
 * cluster by one HLO_OPCODE_FUSION instruction, so that lowering emits one
 * compute shader per cluster instead of one per instruction.
 *
 * What it produces.  A fusion instruction's called_computations[0] is a new
 * fused computation whose parameters are the cluster's external operands, in
 * the order of the fusion's operands, and whose root is the cluster's output
 * (or a tuple of outputs: multi-output fusion; the fusion then has a tuple
 * shape and its users read it through get_tuple_element instructions this
 * pass creates).  Every output of a fusion has the same dimensions: the
 * kernel (codegen/emit_fusion.c) runs one invocation per output element and
 * asks the elemental emitter for each root's value there, recursing into
 * fused producers.  Fused computations are added to module->computations
 * just before the computation that uses them; instructions keep their loc.
 * fusion_kind is XLA's: LOOP (elementwise and data movement only), INPUT (a
 * reduce or reduce_window inside), OUTPUT (a dot_general or convolution
 * inside, with its elementwise epilogue).
 *
 * Which computations.  The entry computation and every computation lowered
 * as a sequence of dispatches: those called by while, if and case,
 * transitively.  Reducer, comparator, map and scatter bodies are emitted as
 * GLSL functions and are left alone.
 *
 * How clusters form (XLA's instruction fusion, consumer first).  Walk the
 * computation from its last instruction to its first.  An instruction that
 * is needed (the root, an operand of a kept instruction, or an operand that
 * some cluster chose not to fuse) and fusible starts a cluster as its root;
 * the cluster then considers its candidate producers in descending
 * position, so when a producer is judged every user it has inside the
 * cluster has been judged already.  An instruction no cluster needs is
 * dropped: its value is recomputed inside every cluster that uses it.
 *
 * Cost model.
 *  - Cheap producers (elementwise ops, transcendental ones included;
 *    broadcast, broadcast_in_dim, reshape, transpose, slice, reverse, pad,
 *    concatenate, iota, convert, bitcast_convert, select, compare, clamp,
 *    dynamic_slice, dynamic_update_slice, gather, map, splat constants) are
 *    fused into every consumer cluster that wants them, duplicating the
 *    computation.  On our devices memory traffic and dispatch count cost far
 *    more than a few ALU operations per element.  Except: a producer that
 *    would be duplicated (it has users outside the cluster) and reads more
 *    than one full-size operand (add(a, b) of two activations; broadcasts
 *    of small tensors, splats and iotas do not count) is materialized
 *    instead, or every copy would read all its inputs again (a residual
 *    stream x + f(x) + g(...) would otherwise be recomputed from all its
 *    terms by every consumer).  So is a gather that would be duplicated:
 *    each copy would read its indices again (chess-9M's embedding lookup
 *    feeds the first layer norm and the first residual add; on lavapipe
 *    the out-projection's epilogue took 2x its kernel recomputing it).
 *    And so is one that a contraction reads (directly or through
 *    index-only ops, stored_for_contraction): it is stored for the
 *    contraction anyway, so the other consumers read it (a post-LN
 *    transformer's layer norm, also read by a later product's residual
 *    add: BERT-base s512 runs 132 dispatches instead of 178).
 *  - Expensive producers (reduce, reduce_window, dot_general, dot,
 *    convolution) are fused only where each of their elements is computed
 *    once: every user is in the cluster, no user is duplicated elsewhere
 *    ("exclusive"), and the path from the producer to the cluster's output
 *    is elementwise over the same dimensions ("identity" indexing).  So a
 *    dot gets its bias add and activation as an epilogue (output fusion) and
 *    mean = sum / n becomes one kernel, but a reduce is not fused into a
 *    consumer that reads it through a broadcast, and a value used twice
 *    stays in memory.  Except row fusions on CPU devices (elemental.h): a
 *    reduce over the last dimension of a value of the root's dimensions
 *    [rows..., C], C <= EL_ROW_MAX, whose result reaches the root only
 *    through ops on row values ([rows...] or [rows..., 1]) and a broadcast
 *    back along the row ("row" indexing, row_read), is fused; its kernel
 *    computes it once per row (a softmax, a layer norm: one kernel).  Such
 *    a cluster takes no dot or convolution.  A convolution is the only
 *    contraction of its cluster (dots may share one: emit_gemm.c computes
 *    several dots of one lhs in a kernel): emit_conv.c takes one
 *    convolution and its epilogue, so the second of add(bn(conv(x)),
 *    bn(conv(y))) (ResNet's projection shortcut) is a fusion of its own
 *    instead of turning both into the per-element kernel (4x slower on
 *    lavapipe).
 *  - Operands of contractions (dot_general, convolution, reduce_window) are
 *    read many times per element; only index-only producers (broadcast,
 *    reshape, transpose, slice, reverse, pad, concatenate, dynamic_slice,
 *    iota, convert, bitcast_convert, scalar constants) are fused there, so
 *    an elementwise chain feeding a matmul is materialized once instead of
 *    recomputed K times.  Except integer weights times a per-column scale
 *    as a product's rhs, which the CPU GEMM kernel reads as integers and
 *    scales itself (codegen_gemm_scaled_operand).  And not a pad,
 *    reverse or concatenate into a product the GEMM kernels take
 *    (gemm_unreadable: their prologues are strided loads), nor a
 *    transpose that would split the product's contracting dimensions
 *    (splits_contraction), nor anything
 *    into a convolution's lhs or rhs where a library conv kernel takes it
 *    (convolved: those kernels read plain parameters); either left the
 *    contraction to the per-element kernel.
 *  - A dynamic_update_slice is not fused into another that updates it in
 *    turn (updated_in_place): each then writes its window into the same
 *    buffer in place, where fused the chain computed every element of the
 *    array through all of them (getrf's result written piece by piece).
 *  - A reduce's input gets any cheap producer (exp -> sum of a softmax,
 *    x * x -> sum of a variance): every input element is read once.
 *  - Never fused: parameters, tuples, get_tuple_element, while, if, case,
 *    custom_call, check, sort, scatter, select_and_scatter, top_k, fusions,
 *    non-scalar constants (they stay bound buffers), tuple-shaped values
 *    except as a cluster's root, tensors of 2^31 or more elements.
 *  - Limits: at most FUSION_MAX_INSTRUCTIONS instructions per cluster (the
 *    GLSL must stay compilable) and at most min(device storage buffers, 31)
 *    distinct buffers (operands + outputs).
 *
 * Multi-output fusion.  After single-output clusters are formed, two
 * clusters whose outputs have the same dimensions and that read a common
 * non-scalar operand are merged (mean and mean of squares of the same x,
 * the Q/K/V projections of one activation), unless that would exceed the
 * limits or create a cycle (an output of one reaching an operand of the
 * merged cluster through instructions outside it), or put a convolution
 * beside another convolution or a dot.  Then producer-consumer merging
 * (merge_consumers, as XLA's multi-output fusion does it): a loop cluster
 * that reads the outputs of another loop cluster only at its own index
 * (through elementwise ops of the same dimensions) is merged into it, the
 * producer's output staying an output where anything outside the union
 * still reads it (an LSTM's new c, read by the new h and carried; Adam's
 * new moments; a gather both of whose consumers read it in place, which
 * then is no output at all).  Clusters with a reduce, reduce_window or
 * contraction are left alone: their kernels pick their own shapes.
 *
 * Attention (CPU devices with subgroup shuffles, elemental.h
 * el_attention_match).  Last, the cluster of a values dot whose lhs is
 * the only output of a row cluster (a softmax) that reads the only output
 * of a scores dot's cluster (every use of the scores in it elementwise or
 * a row reduce), each used there alone, takes both: one kernel
 * (emit_fusion.c) computes q k^T, the softmax and the product with v per
 * query row without writing the scores or the probabilities.
 *
 * Invariants kept: def-before-use order (instructions are re-ordered
 * topologically, keeping the original order where possible), parameters
 * untouched, the computation's root replaced by the value that now computes
 * it.  The pass needs |users| (it calls hlo_compute_users) and uses the
 * instructions' |scratch| for their positions.
 */
#define _POSIX_C_SOURCE 200809L
#include "codegen/passes.h"
#include "support/array.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/elemental.h"
#include "codegen/emit_internal.h"
#include "hlo/literal.h"
#include "support/strbuf.h"

#define FUSION_MAX_INSTRUCTIONS 128
#define FUSION_MAX_BUFFERS 31
#define FUSION_MAX_OUTPUTS 8

/* ------------------------------------------------------ op classes */

typedef struct fuser fuser_t;
static bool is_splat(const fuser_t *f, const hlo_instruction_t *in);

/* Producers that only remap indices (or convert one value): cheap enough
 * to recompute inside a contraction loop. */
static bool is_index_only(const fuser_t *f, const hlo_instruction_t *in) {
  if (in->opcode == HLO_OPCODE_CONSTANT) return is_splat(f, in);
  return hlo_opcode_only_remaps_indices(in->opcode);
}

static bool shape_fusible(const hlo_shape_t *s) {
  if (hlo_shape_is_tuple(s)) {
    for (int i = 0; i < s->tuple_count; i++)
      if (!shape_fusible(&s->tuple_shapes[i])) return false;
    return s->tuple_count > 0;
  }
  return s->element_type != HLO_TOKEN && hlo_shape_element_count(s) <= 0x7FFFFFFF;
}

/* Ops the elemental emitter computes "at an index" (see elemental.c). */
static bool op_fusible(const fuser_t *f, const hlo_instruction_t *in) {
  if (in->opcode == HLO_OPCODE_CONSTANT) return is_splat(f, in);
  return el_is_elemental(in->opcode);
}

static bool reads_unbindable(const fuser_t *f, const hlo_instruction_t *in);
static bool is_unbindable_concatenate(const fuser_t *f, const hlo_instruction_t *in);

/* Can |in| be a cluster's root?  Tuple-shaped only for variadic reduce /
 * reduce_window, whose results share dimensions.  Not a concatenate larger
 * than a binding may be (maxStorageBufferRange): no kernel could bind it;
 * lowering copies its operands, the pieces of a value too large for one
 * binding (codegen/expand.c), into place (api/lower.c). */
static bool root_fusible(const fuser_t *f, const hlo_instruction_t *in) {
  if (!op_fusible(f, in) || !shape_fusible(&in->shape) || reads_unbindable(f, in)) return false;
  if (is_unbindable_concatenate(f, in)) return false;
  for (int k = 0; k < in->operand_count; k++)
    if (!shape_fusible(&in->operands[k]->shape)) return false;
  if (hlo_shape_is_tuple(&in->shape)) {
    if (in->opcode != HLO_OPCODE_REDUCE && in->opcode != HLO_OPCODE_REDUCE_WINDOW) return false;
    if (in->shape.tuple_count > EL_MAX_RESULTS) return false;
    for (int i = 1; i < in->shape.tuple_count; i++)
      if (!hlo_shape_compatible_dims(&in->shape.tuple_shapes[0], &in->shape.tuple_shapes[i]))
        return false;
  }
  return true;
}

/* Does |user| read |producer| at its own index (elementwise, same dims)? */
static bool reads_identity(const hlo_instruction_t *user, const hlo_instruction_t *producer) {
  /* a reshape that only adds or drops 1s (128x3072 -> 1x128x3072 after a
   * PyTorch export's dot) reads each element at its own position too */
  if (user->opcode == HLO_OPCODE_RESHAPE) return hlo_shape_dims_equal_but_ones(&user->shape, &producer->shape);
  bool elementwise = hlo_opcode_is_pointwise(user->opcode) || user->opcode == HLO_OPCODE_MAP;
  return elementwise && !hlo_shape_is_tuple(&user->shape) &&
         hlo_shape_compatible_dims(&user->shape, &producer->shape);
}

/* Row fusions (elemental.h).  Is |s| row-shaped for a cluster whose root
 * has dimensions |root| = [rows..., C]: 1 for [rows...], 2 for [rows..., 1]
 * (the keepdims form JAX exports), 0 for neither. */
static int row_shape(const hlo_shape_t *root, const hlo_shape_t *s) {
  if (!root || hlo_shape_is_tuple(s) || root->rank < 1) return 0;
  int r = root->rank;
  if (s->rank != r - 1 && s->rank != r) return 0;
  for (int d = 0; d < r - 1; d++)
    if (s->dimensions[d] != root->dimensions[d]) return 0;
  if (s->rank == r - 1) return 1;
  return s->dimensions[r - 1] == 1 && root->dimensions[r - 1] != 1 ? 2 : 0;
}

/* Does |user| read row-shaped |producer| at the row of its own index: a
 * broadcast_in_dim that keeps the row's dimensions in place (to the root's
 * dimensions, or from [rows...] to [rows..., 1]), or a reshape between the
 * two row shapes? */
static bool reads_row(const hlo_shape_t *root, const hlo_instruction_t *user, const hlo_instruction_t *producer) {
  const hlo_shape_t *ps = &producer->shape;
  if (!row_shape(root, ps)) return false;
  if (user->opcode == HLO_OPCODE_RESHAPE) return row_shape(root, &user->shape) != 0;
  if (user->opcode != HLO_OPCODE_BROADCAST_IN_DIM || user->attrs.broadcast_dimensions.count != ps->rank ||
      !(hlo_shape_compatible_dims(&user->shape, root) || row_shape(root, &user->shape) == 2))
    return false;
  for (int d = 0; d < ps->rank; d++)
    if (user->attrs.broadcast_dimensions.data[d] != d) return false;
  return true;
}

static const char *kind_name(hlo_fusion_kind_t k) {
  switch (k) {
    case HLO_FUSION_LOOP: return "kLoop";
    case HLO_FUSION_INPUT: return "kInput";
    case HLO_FUSION_OUTPUT: return "kOutput";
  }
  return "?";
}

/* --------------------------------------------------------- state */

typedef struct cluster {
  int *members; /* positions in the computation, any order */
  int member_count, member_capacity;
  int *externals; /* positions of the operands read from outside, first-use order */
  int external_count;
  int roots[FUSION_MAX_OUTPUTS];
  int root_count;
  bool alive;
  bool rows; /* holds a row reduce (a row fusion, elemental.h) */
} cluster_t;

enum { ST_NONE = 0, ST_CAND, ST_MEMBER, ST_EXT };

struct fuser {
  hlo_module_t *m;
  hlo_computation_t *comp;
  int n;
  hlo_instruction_t **ins; /* snapshot of comp->instructions */
  int max_buffers;
  bool wide_singles; /* the target has wide loop kernels (emit_fusion.c) */
  bool row_fusions;  /* the target takes row fusions (elemental.h) */
  bool multi_dots;   /* a cluster may hold several dots (see is_dot) */
  const codegen_target_t *target; /* NULL: none given (no attention fusions) */
  bool *needed, *kept;
  bool *splat; /* per position: a splat constant (hlo_constant_is_splat) */
  /* Per-position state for the cluster being formed / queried. */
  int *stamp;
  unsigned char *state;
  int cur;
  bool *exclusive, *identity, *in_contraction;
  /* per position: read only at the cluster root's row (its index without
   * the last dimension), through a broadcast back along the row */
  bool *row_read;
  const hlo_shape_t *root_dims; /* the cluster root's shape, NULL if a tuple */
  int *mark; /* second stamp array (externals, DFS) */
  int mark_cur;
  cluster_t *clusters;
  int cluster_count, cluster_capacity;
  int *root_cluster; /* per position: the cluster it is a root of, or -1 */
  int convs, dots;   /* convolutions and dots in the cluster being formed */
  const hlo_instruction_t *first_dot; /* its first dot */
  int row_reduces;   /* row reduces in it */
};

static int pos_of(const hlo_instruction_t *in) { return (int)(intptr_t)in->scratch; }

static bool is_splat(const fuser_t *f, const hlo_instruction_t *in) { return f->splat[pos_of(in)]; }

/* Does |in| read a parameter or constant larger than one binding may be
 * (maxStorageBufferRange)?  Such a value is stored whole, so a kernel
 * reading it could not bind it: only a contiguous slice of an argument
 * reads one (codegen/expand.c, "arguments larger than a binding"), which
 * lowering makes a view of the argument, so it stays alone, neither a
 * cluster's root nor a member.  (Larger values computed inside a cluster
 * are never stored and bound: not these.) */
static bool reads_unbindable(const fuser_t *f, const hlo_instruction_t *in) {
  for (int k = 0; k < in->operand_count; k++) {
    const hlo_instruction_t *x = in->operands[k];
    if ((x->opcode == HLO_OPCODE_PARAMETER || x->opcode == HLO_OPCODE_CONSTANT) &&
        codegen_target_exceeds_binding(f->target, &x->shape))
      return true;
  }
  return false;
}

static bool is_unbindable_concatenate(const fuser_t *f, const hlo_instruction_t *in) {
  return in->opcode == HLO_OPCODE_CONCATENATE && codegen_target_exceeds_binding(f->target, &in->shape);
}

static int get_state(const fuser_t *f, int p) { return f->stamp[p] == f->cur ? f->state[p] : ST_NONE; }

static void set_state(fuser_t *f, int p, int s) {
  f->stamp[p] = f->cur;
  f->state[p] = (unsigned char)s;
}

/* Dots and convolutions: the ops with library kernels.  emit_conv.c takes
 * a fusion holding one convolution and its epilogue.  emit_gemm.c's CPU
 * kernel takes several dots of one lhs (NDOT), each lhs element loaded
 * once for all of them; its GPU kernel takes one.  A cluster takes a
 * second dot only where codegen_target_multi_dots says so: not on GPUs,
 * nor on CPU devices of 8 lanes (lavapipe's default, 256 bits), where
 * separate kernels measured faster: their k loop is a half or a third of
 * the straight-line code, and a 2-core AMD EPYC (Zen 5) decodes a loop of
 * more than ~6000 instructions, past its micro-op cache, at 60% of the
 * multiply/add rate of one that fits (README, "One product per GEMM
 * kernel").  Where it may, the dots share their lhs: the GEMM kernel
 * cannot take two of different lhs, whose fusion then ran one invocation
 * per output. */
static bool is_dot(const hlo_instruction_t *in) {
  return in->opcode == HLO_OPCODE_DOT || in->opcode == HLO_OPCODE_DOT_GENERAL;
}

/* May the cluster being formed (f->convs convolutions, f->dots dots,
 * f->row_reduces row reduces) take one more |in|?  A convolution only into
 * a cluster with none of them, a dot only into one without a convolution
 * or a row reduce (a row kernel computes no contraction), nor another dot
 * unless f->multi_dots and one kernel computes both
 * (codegen_gemm_same_product: the first one's lhs, shapes and dimension
 * numbers). */
static bool contraction_fits(const fuser_t *f, const hlo_instruction_t *in) {
  if (in->opcode == HLO_OPCODE_CONVOLUTION) return f->convs + f->dots + f->row_reduces == 0;
  if (is_dot(in))
    return f->convs + f->row_reduces == 0 &&
           (f->dots == 0 || (f->multi_dots && codegen_gemm_same_product(f->first_dot, in)));
  return true;
}

static int output_count_of(const hlo_instruction_t *in) {
  return hlo_shape_is_tuple(&in->shape) ? in->shape.tuple_count : 1;
}

/* ------------------------------------------------ forming clusters */

/* How many distinct operands of |P| are read in full: not scalars, splat
 * constants, iotas or broadcasts of something much smaller.  A producer
 * that gets duplicated into several clusters makes each of them read
 * these; more than one (add(a, b) of two activations) costs more than
 * writing the result once and reading it back. */
static int full_size_reads(const fuser_t *f, const hlo_instruction_t *P) {
  int64_t n = hlo_shape_element_count(&P->shape);
  int count = 0;
  for (int k = 0; k < P->operand_count; k++) {
    const hlo_instruction_t *q = P->operands[k];
    bool dup = false;
    for (int j = 0; j < k; j++) dup = dup || P->operands[j] == q;
    if (dup || is_splat(f, q) || q->opcode == HLO_OPCODE_IOTA || hlo_shape_is_tuple(&q->shape))
      continue;
    int64_t m = hlo_shape_element_count(&q->shape);
    if ((q->opcode == HLO_OPCODE_BROADCAST || q->opcode == HLO_OPCODE_BROADCAST_IN_DIM) &&
        !hlo_shape_is_tuple(&q->operands[0]->shape))
      m = hlo_shape_element_count(&q->operands[0]->shape);
    if (m * 4 > n) count++;
  }
  return count;
}

/* Will |P| be stored anyway?  A contraction reads it, directly or through
 * index-only ops, and a contraction's cluster takes no producer that is not
 * index-only (except scaled integer weights, which the GEMM reads): then a
 * consumer elsewhere reads the stored value instead of recomputing it (a
 * post-LN transformer's layer norm, read by the next products and by the
 * residual add in a later product's epilogue: the add no longer needs the
 * mean and variance, which then stay in the layer norm's row kernel). */
static bool stored_for_contraction(const fuser_t *f, const hlo_instruction_t *P) {
  if (is_index_only(f, P) || codegen_gemm_scaled_operand(f->target, P)) return false;
  for (int u = 0; u < P->user_count; u++) {
    const hlo_instruction_t *U = P->users[u];
    if (hlo_opcode_is_contraction(U->opcode)) return true;
    if (!is_index_only(f, U)) continue;
    for (int v = 0; v < U->user_count; v++)
      if (hlo_opcode_is_contraction(U->users[v]->opcode)) return true;
  }
  return false;
}

/* Whether a member of the cluster being formed, of opcode |op|, reads P
 * as one of its first |count| operands. */
static bool member_reads(const fuser_t *f, const hlo_instruction_t *P, hlo_opcode_t op, int count) {
  for (int u = 0; u < P->user_count; u++) {
    const hlo_instruction_t *U = P->users[u];
    if (U->opcode != op || get_state(f, pos_of(U)) != ST_MEMBER) continue;
    for (int k = 0; k < count && k < U->operand_count; k++)
      if (U->operands[k] == P) return true;
  }
  return false;
}

/* Whether P is an operand of a member convolution that may take a kernel
 * of shaders/ (codegen/emit_conv.c): those read their lhs and rhs as the
 * fusion's parameters, strides and all, and a fused producer (a slice or
 * transpose of the weights, a pad of the input) would leave the
 * convolution to one invocation per output element. */
static bool convolved(const fuser_t *f, const hlo_instruction_t *P) {
  return f->target && f->target->conv != CODEGEN_CONV_ELEMENTAL && member_reads(f, P, HLO_OPCODE_CONVOLUTION, 2);
}

/* Whether P is a pad, reverse or concatenate that the cluster's product
 * would read through (f->dots: the cluster has a dot the GEMM kernels
 * take): their operand prologues are strided loads (transpose, broadcast,
 * reshape, slice, convert), and such a producer left the product to one
 * invocation per output element, 4-7x slower on lavapipe; stored once
 * instead, unless the product has at most GEMM_REREAD_MIN rows or columns
 * (then each element is read about once either way).  Likewise, on CPU
 * devices, a slice whose rows start off the 8-element words of its
 * operand (an offset or row pitch not a multiple of 8, or a stride) while
 * its own rows are whole words: the kernel reads the view element by
 * element, about 2x slower than the words of the stored slice. */
#define GEMM_REREAD_MIN 16

/* Whether the transpose P is read by a member product whose contracting
 * dimensions of P are, in P's operand, not one run (hlo.h,
 * hlo_shape_dims_contiguous): through P the GEMM kernels could not read
 * them as one strided dimension and would leave the product to one
 * invocation per output element; stored transposed they can. */
static bool splits_contraction(const fuser_t *f, const hlo_instruction_t *P) {
  const hlo_shape_t *src = &P->operands[0]->shape;
  if (P->attrs.permutation.count != src->rank) return false;
  for (int u = 0; u < P->user_count; u++) {
    const hlo_instruction_t *U = P->users[u];
    if (U->opcode != HLO_OPCODE_DOT_GENERAL || get_state(f, pos_of(U)) != ST_MEMBER || !codegen_gemm_types(U))
      continue;
    for (int k = 0; k < 2 && k < U->operand_count; k++) {
      hlo_dims_t c = k ? U->attrs.rhs_contracting_dimensions : U->attrs.lhs_contracting_dimensions;
      int64_t in_src[HLO_MAX_RANK];
      if (U->operands[k] != P || c.count > HLO_MAX_RANK) continue;
      for (int i = 0; i < c.count; i++) in_src[i] = P->attrs.permutation.data[c.data[i]];
      if (!hlo_shape_dims_contiguous(src, in_src, c.count)) return true;
    }
  }
  return false;
}

static bool gemm_unreadable(const fuser_t *f, const hlo_instruction_t *P) {
  if (P->opcode == HLO_OPCODE_SLICE) { /* off its operand's words (see above) */
    int m = P->shape.rank - 1;
    if (m < 0 || !f->target || !f->target->is_cpu || P->attrs.start_indices.count <= m) return false;
    int64_t start = P->attrs.start_indices.data[m], step = P->attrs.strides.count > m ? P->attrs.strides.data[m] : 1;
    bool aligned = step == 1 && start % 8 == 0 && P->operands[0]->shape.dimensions[m] % 8 == 0;
    if (aligned || P->shape.dimensions[m] % 8 != 0) return false;
  } else if (P->opcode == HLO_OPCODE_TRANSPOSE) {
    return f->dots > 0 && f->convs == 0 && f->target && f->target->gemm != CODEGEN_GEMM_OFF &&
           splits_contraction(f, P);
  } else if (P->opcode != HLO_OPCODE_PAD && P->opcode != HLO_OPCODE_REVERSE &&
             P->opcode != HLO_OPCODE_CONCATENATE) {
    return false;
  }
  const hlo_instruction_t *d = f->first_dot;
  if (f->dots == 0 || f->convs > 0 || !d || !f->target || f->target->gemm == CODEGEN_GEMM_OFF ||
      !codegen_gemm_types(d) || d->opcode != HLO_OPCODE_DOT_GENERAL)
    return false;
  /* a product with few rows or columns (a decode step's attention over a
   * KV cache concatenated with the new token) reads each operand element
   * about once: recomputing the producer there costs less than storing it */
  int64_t free[2] = {1, 1};
  for (int k = 0; k < 2; k++) {
    const hlo_shape_t *s = &d->operands[k]->shape;
    hlo_dims_t b = k ? d->attrs.rhs_batching_dimensions : d->attrs.lhs_batching_dimensions;
    hlo_dims_t c = k ? d->attrs.rhs_contracting_dimensions : d->attrs.lhs_contracting_dimensions;
    for (int i = 0; i < s->rank; i++)
      if (!hlo_dims_contains(b, i) && !hlo_dims_contains(c, i)) free[k] *= s->dimensions[i];
  }
  return free[0] > GEMM_REREAD_MIN && free[1] > GEMM_REREAD_MIN;
}

/* Whether a member of the cluster updates P (a dynamic_update_slice) in
 * turn: the second update then writes its window into P's buffer in place
 * (codegen_dus_in_place_operand), where fused it would compute every
 * element of the whole array through both. */
static bool updated_in_place(const fuser_t *f, const hlo_instruction_t *P) {
  return member_reads(f, P, HLO_OPCODE_DYNAMIC_UPDATE_SLICE, 1);
}

/* Judges candidate producer |p| for the cluster being formed; see the cost
 * model above.  |ext| counts the distinct non-member operands that are not
 * scalar constants. */
static bool decide(fuser_t *f, int p, int member_count, int outputs, int *ext) {
  hlo_instruction_t *P = f->ins[p];
  bool excl = !f->needed[p], ident = true, contr = false, row = f->row_fusions && f->root_dims;
  for (int u = 0; u < P->user_count; u++) {
    const hlo_instruction_t *U = P->users[u];
    int up = pos_of(U);
    if (get_state(f, up) != ST_MEMBER) {
      excl = false;
      continue;
    }
    excl = excl && f->exclusive[up];
    /* a row reduce reads its input along the row, at the root's index */
    bool row_input = f->row_read[up] && el_is_row_reduce(U, f->root_dims) && U->operands[0] == P &&
                     U->operands[1] != P;
    ident = ident && ((f->identity[up] && reads_identity(U, P)) || row_input);
    /* read at the row: from an element (a broadcast back along the row)
     * or from another row value */
    row = row && ((f->identity[up] && hlo_shape_compatible_dims(&U->shape, f->root_dims) &&
                   reads_row(f->root_dims, U, P)) ||
                  (f->row_read[up] && (reads_identity(U, P) || reads_row(f->root_dims, U, P))));
    contr = contr || f->in_contraction[up] || hlo_opcode_is_contraction(U->opcode);
  }
  f->exclusive[p] = excl;
  f->identity[p] = ident;
  f->row_read[p] = row;
  f->in_contraction[p] = contr;
  if (is_splat(f, P)) return true;
  if (!op_fusible(f, P) || hlo_shape_is_tuple(&P->shape) || !shape_fusible(&P->shape)) return false;
  if (member_count >= FUSION_MAX_INSTRUCTIONS || reads_unbindable(f, P)) return false;
  if (convolved(f, P)) return false;
  for (int k = 0; k < P->operand_count; k++)
    if (!shape_fusible(&P->operands[k]->shape)) return false;
  bool row_reduce = false;
  if (hlo_opcode_is_expensive(P->opcode)) {
    /* a row reduce: computed once per row by the row kernel (no
     * contraction shares its cluster) */
    row_reduce = !ident && row && el_is_row_reduce(P, f->root_dims) && f->convs + f->dots == 0;
    if (!excl || !(ident || row_reduce) || contr) return false;
    if (!contraction_fits(f, P)) return false;
    /* the conv kernels' epilogue is elementwise over the convolution's own
     * dimensions: through a reshape to the root (squeezing a batch of
     * one, splitting a merged batch) the convolution would run per element */
    if (P->opcode == HLO_OPCODE_CONVOLUTION && (!f->root_dims || !hlo_shape_compatible_dims(f->root_dims, &P->shape)))
      return false;
  } else if (contr && !is_index_only(f, P) && !codegen_gemm_scaled_operand(f->target, P)) {
    return false; /* (integer weights times their scale: read so by the GEMM) */
  } else if (is_unbindable_concatenate(f, P)) {
    /* never stored by a kernel: each user reads its pieces */
  } else if (contr && gemm_unreadable(f, P)) {
    return false; /* stored once: the GEMM kernel then reads it by strides */
  } else if (!excl && full_size_reads(f, P) > 1) {
    return false; /* duplicating it would multiply its reads */
  } else if (!excl && stored_for_contraction(f, P)) {
    return false; /* stored anyway: read it */
  } else if (!excl && P->opcode == HLO_OPCODE_GATHER) {
    return false; /* each copy would read the indices again */
  } else if (P->opcode == HLO_OPCODE_DYNAMIC_UPDATE_SLICE && updated_in_place(f, P)) {
    return false; /* a chain of updates: each writes its window in place */
  }
  int new_ext = *ext - 1;
  for (int k = 0; k < P->operand_count; k++) {
    int q = pos_of(P->operands[k]);
    if (get_state(f, q) != ST_NONE || is_splat(f, P->operands[k])) continue;
    bool dup = false;
    for (int j = 0; j < k; j++) dup = dup || P->operands[j] == P->operands[k];
    if (!dup) new_ext++;
  }
  if (new_ext + outputs > f->max_buffers) return false;
  *ext = new_ext;
  f->row_reduces += row_reduce;
  return true;
}

static cluster_t *new_cluster(fuser_t *f) {
  if (f->cluster_count == f->cluster_capacity) {
    int nc = f->cluster_capacity ? f->cluster_capacity * 2 : 16;
    cluster_t *na = vkhlo_realloc(f->m->arena.allocator, f->clusters, sizeof *na * (size_t)nc);
    if (!na) return NULL;
    f->clusters = na;
    f->cluster_capacity = nc;
  }
  cluster_t *c = &f->clusters[f->cluster_count++];
  memset(c, 0, sizeof *c);
  c->alive = true;
  return c;
}

static vkhlo_status_t form_cluster(fuser_t *f, int r) {
  cluster_t *c = new_cluster(f);
  if (!c) return VKHLO_NO_MEMORY();
  f->root_cluster[r] = f->cluster_count - 1;
  f->cur++;
  hlo_instruction_t *R = f->ins[r];
  int outputs = output_count_of(R);
  set_state(f, r, ST_MEMBER);
  f->exclusive[r] = f->identity[r] = true;
  f->in_contraction[r] = f->row_read[r] = false;
  f->root_dims = hlo_shape_is_tuple(&R->shape) ? NULL : &R->shape;
  f->row_reduces = 0;
  c->roots[0] = r;
  c->root_count = 1;
  f->convs = R->opcode == HLO_OPCODE_CONVOLUTION;
  f->dots = is_dot(R);
  f->first_dot = is_dot(R) ? R : NULL;
  if (!int_array_push(f->m->arena.allocator, &c->members, &c->member_count, &c->member_capacity, r)) return VKHLO_NO_MEMORY();
  int ext = 0, low = r;
  for (int k = 0; k < R->operand_count; k++) {
    int q = pos_of(R->operands[k]);
    if (get_state(f, q) != ST_NONE) continue;
    set_state(f, q, ST_CAND);
    if (!is_splat(f, R->operands[k])) ext++;
    if (q < low) low = q;
  }
  for (int p = r - 1; p >= low; p--) {
    if (get_state(f, p) != ST_CAND) continue;
    if (!decide(f, p, c->member_count, outputs, &ext)) {
      set_state(f, p, ST_EXT);
      f->needed[p] = true;
      continue;
    }
    set_state(f, p, ST_MEMBER);
    if (!int_array_push(f->m->arena.allocator, &c->members, &c->member_count, &c->member_capacity, p))
      return VKHLO_NO_MEMORY();
    hlo_instruction_t *P = f->ins[p];
    f->convs += P->opcode == HLO_OPCODE_CONVOLUTION;
    f->dots += is_dot(P);
    if (is_dot(P) && !f->first_dot) f->first_dot = P;
    for (int k = 0; k < P->operand_count; k++) {
      int q = pos_of(P->operands[k]);
      if (get_state(f, q) != ST_NONE) continue;
      set_state(f, q, ST_CAND);
      if (q < low) low = q;
    }
  }
  c->rows = f->row_reduces > 0;
  return NULL;
}

/* Fills c->externals: operands of members that are not members, in the
 * order of first use (members by position, operands in order). */
static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

static vkhlo_status_t compute_externals(fuser_t *f, cluster_t *c) {
  qsort(c->members, (size_t)c->member_count, sizeof(int), cmp_int);
  f->cur++;
  for (int i = 0; i < c->member_count; i++) set_state(f, c->members[i], ST_MEMBER);
  vkhlo_free(f->m->arena.allocator, c->externals);
  c->externals = NULL;
  c->external_count = 0;
  int cap = 0;
  for (int i = 0; i < c->member_count; i++) {
    const hlo_instruction_t *M = f->ins[c->members[i]];
    for (int k = 0; k < M->operand_count; k++) {
      int q = pos_of(M->operands[k]);
      if (get_state(f, q) != ST_NONE) continue;
      set_state(f, q, ST_EXT);
      if (!int_array_push(f->m->arena.allocator, &c->externals, &c->external_count, &cap, q)) return VKHLO_NO_MEMORY();
    }
  }
  return NULL;
}

/* ------------------------------------------------ multi-output merging */

static bool same_output_dims(const fuser_t *f, const cluster_t *a, const cluster_t *b) {
  const hlo_instruction_t *ra = f->ins[a->roots[0]], *rb = f->ins[b->roots[0]];
  if (hlo_shape_is_tuple(&ra->shape) || hlo_shape_is_tuple(&rb->shape)) return false;
  return hlo_shape_compatible_dims(&ra->shape, &rb->shape);
}

static bool shares_big_operand(const fuser_t *f, const cluster_t *a, const cluster_t *b) {
  for (int i = 0; i < a->external_count; i++) {
    const hlo_instruction_t *x = f->ins[a->externals[i]];
    if (hlo_shape_is_tuple(&x->shape) || hlo_shape_element_count(&x->shape) <= 1) continue;
    for (int j = 0; j < b->external_count; j++)
      if (b->externals[j] == a->externals[i]) return true;
  }
  return false;
}

/* Would merging |a| and |b| create a cycle?  True when an output of either
 * reaches an external operand of the union through the original graph.
 * f->state holds ST_MEMBER / ST_EXT for the union (current stamp). */
static bool merge_creates_cycle(fuser_t *f, const cluster_t *a, const cluster_t *b, int max_ext,
                                int *stack) {
  f->mark_cur++;
  int top = 0;
  for (int i = 0; i < a->root_count; i++) stack[top++] = a->roots[i];
  for (int i = 0; i < b->root_count; i++) stack[top++] = b->roots[i];
  for (int i = 0; i < top; i++) f->mark[stack[i]] = f->mark_cur;
  while (top > 0) {
    const hlo_instruction_t *x = f->ins[stack[--top]];
    for (int u = 0; u < x->user_count; u++) {
      int up = pos_of(x->users[u]);
      if (up > max_ext || f->mark[up] == f->mark_cur) continue;
      if (get_state(f, up) == ST_EXT) return true;
      f->mark[up] = f->mark_cur;
      stack[top++] = up;
    }
  }
  return false;
}

/* Adds |from|'s members that |into| lacks to |into|; false when out of memory. */
static bool absorb_members(fuser_t *f, cluster_t *into, const cluster_t *from) {
  for (int i = 0; i < from->member_count; i++) {
    bool dup = false;
    for (int j = 0; j < into->member_count && !dup; j++) dup = into->members[j] == from->members[i];
    if (!dup && !int_array_push(f->m->arena.allocator, &into->members, &into->member_count, &into->member_capacity,
                                from->members[i]))
      return false;
  }
  return true;
}

/* The external operands of the union of clusters cs[0 .. n), whose
 * members are marked ST_MEMBER under the current stamp: marks each ST_EXT
 * once and returns how many are not splat constants (the buffers they
 * take); *max_ext is the highest position among them (-1: none). */
static int mark_union_externals(fuser_t *f, const cluster_t *const *cs, int n, int *max_ext) {
  int ext = 0;
  *max_ext = -1;
  for (int s = 0; s < n; s++)
    for (int i = 0; i < cs[s]->external_count; i++) {
      int q = cs[s]->externals[i];
      if (get_state(f, q) != ST_NONE) continue;
      set_state(f, q, ST_EXT);
      if (!is_splat(f, f->ins[q])) ext++;
      if (q > *max_ext) *max_ext = q;
    }
  return ext;
}

/* Marks the members of |a| and |b| ST_MEMBER under a fresh stamp; returns
 * how many the union has. */
static int mark_union(fuser_t *f, const cluster_t *a, const cluster_t *b) {
  f->cur++;
  int members = 0;
  for (int i = 0; i < a->member_count; i++) set_state(f, a->members[i], ST_MEMBER), members++;
  for (int i = 0; i < b->member_count; i++)
    if (get_state(f, b->members[i]) != ST_MEMBER) set_state(f, b->members[i], ST_MEMBER), members++;
  return members;
}

/* Makes |a| the union: |b|'s members and roots join it, |b| dies. */
static vkhlo_status_t absorb(fuser_t *f, cluster_t *a, cluster_t *b) {
  if (!absorb_members(f, a, b)) return VKHLO_NO_MEMORY();
  int ai = (int)(a - f->clusters);
  for (int i = 0; i < b->root_count; i++) {
    a->roots[a->root_count++] = b->roots[i];
    f->root_cluster[b->roots[i]] = ai;
  }
  qsort(a->roots, (size_t)a->root_count, sizeof(int), cmp_int);
  a->rows = a->rows || b->rows;
  b->alive = false;
  return NULL;
}

static vkhlo_status_t try_merge(fuser_t *f, cluster_t *a, cluster_t *b, int *stack, bool *merged) {
  *merged = false;
  if (a->root_count + b->root_count > FUSION_MAX_OUTPUTS) return NULL;
  if (mark_union(f, a, b) > FUSION_MAX_INSTRUCTIONS) return NULL;
  /* a convolution alone among the contractions of a fusion (emit_conv.c);
   * several dots only where the target takes them and one kernel computes
   * them all (see is_dot) */
  int convs = 0, dots = 0;
  const hlo_instruction_t *first = NULL;
  bool one_kernel = true; /* every dot computable with the first (codegen_gemm_same_product) */
  for (int s = 0; s < 2; s++) {
    const cluster_t *c = s ? b : a;
    for (int i = 0; i < c->member_count; i++) {
      const hlo_instruction_t *x = f->ins[c->members[i]];
      convs += x->opcode == HLO_OPCODE_CONVOLUTION;
      if (!is_dot(x)) continue;
      dots++;
      one_kernel = one_kernel && (!first || codegen_gemm_same_product(first, x));
      if (!first) first = x;
    }
  }
  if (convs > 0 && convs + dots > 1) return NULL;
  if (dots > 1 && (!f->multi_dots || !one_kernel)) return NULL;
  /* a row kernel computes no contraction (elemental.h) */
  if ((a->rows || b->rows) && convs + dots > 0) return NULL;
  /* Siblings only: neither may read what the other computes (that would
   * turn an external value into a recomputed member). */
  for (int i = 0; i < a->external_count; i++)
    if (get_state(f, a->externals[i]) == ST_MEMBER) return NULL;
  for (int i = 0; i < b->external_count; i++)
    if (get_state(f, b->externals[i]) == ST_MEMBER) return NULL;
  int max_ext;
  const cluster_t *both[2] = {a, b};
  int ext = mark_union_externals(f, both, 2, &max_ext);
  int outputs = 0;
  for (int i = 0; i < a->root_count; i++) outputs += output_count_of(f->ins[a->roots[i]]);
  for (int i = 0; i < b->root_count; i++) outputs += output_count_of(f->ins[b->roots[i]]);
  if (ext + outputs > f->max_buffers) return NULL;
  if (merge_creates_cycle(f, a, b, max_ext, stack)) return NULL;
  VKHLO_RETURN_IF_ERROR(absorb(f, a, b));
  *merged = true;
  return compute_externals(f, a);
}

static vkhlo_status_t merge_siblings(fuser_t *f) {
  int *stack = vkhlo_malloc(f->m->arena.allocator, sizeof(int) * (size_t)(f->n + FUSION_MAX_OUTPUTS * 2 + 1));
  if (!stack) return VKHLO_NO_MEMORY();
  vkhlo_status_t st = NULL;
  for (int i = 0; i < f->cluster_count && !st; i++) {
    cluster_t *a = &f->clusters[i];
    if (!a->alive) continue;
    for (int j = i + 1; j < f->cluster_count && !st; j++) {
      cluster_t *b = &f->clusters[j];
      a = &f->clusters[i];
      if (!b->alive || !same_output_dims(f, a, b) || !shares_big_operand(f, a, b)) continue;
      bool merged;
      st = try_merge(f, a, b, stack, &merged);
    }
  }
  vkhlo_free(f->m->arena.allocator, stack);
  return st;
}

/* Producer-consumer multi-output fusion.  |b| reads the output |e| of
 * |a|, which stays in memory because something outside |b| reads it too
 * (an LSTM cell's new c, read by the new h and by the next step; Adam's
 * new moments, read by the parameter update and returned).  Where |b|
 * reads every output of |a| it reads at all only at its own index (a path
 * of elementwise ops of the same dimensions, reads_identity), the union's
 * kernel computes each element of |e| once, stores it and uses it in
 * place: one dispatch instead of two, and |e| is not read back.  Loop
 * clusters only (no reduce, reduce_window or contraction: their kernels
 * choose their own shapes), outputs of the same dimensions. */
static bool loop_only(const fuser_t *f, const cluster_t *c) {
  if (c->rows) return false;
  for (int i = 0; i < c->member_count; i++)
    if (hlo_opcode_is_expensive(f->ins[c->members[i]]->opcode)) return false;
  return true;
}

/* Marks the members of |c| in f->mark under a fresh mark_cur. */
static void mark_members(fuser_t *f, const cluster_t *c) {
  f->mark_cur++;
  for (int i = 0; i < c->member_count; i++) f->mark[c->members[i]] = f->mark_cur;
}

/* Marks f->identity for the members of cluster |bi|: read only at the
 * index of its outputs (members are sorted by position, users after
 * producers). */
static void mark_identity(fuser_t *f, int bi) {
  const cluster_t *b = &f->clusters[bi];
  mark_members(f, b);
  for (int i = b->member_count - 1; i >= 0; i--) {
    int p = b->members[i];
    const hlo_instruction_t *P = f->ins[p];
    bool ident = true;
    if (f->root_cluster[p] != bi) /* not one of its outputs */
      for (int u = 0; u < P->user_count; u++) {
        int up = pos_of(P->users[u]);
        if (f->mark[up] == f->mark_cur) ident = ident && f->identity[up] && reads_identity(P->users[u], P);
      }
    f->identity[p] = ident;
  }
}

/* Does cluster |bi| read what it reads of cluster |ai| (outputs of it
 * only) at its own index, and |ai| nothing of |bi|?  f->identity as
 * mark_identity(bi) left it. */
static bool reads_outputs_in_place(fuser_t *f, int ai, int bi) {
  const cluster_t *a = &f->clusters[ai], *b = &f->clusters[bi];
  mark_members(f, b);
  f->cur++;
  for (int i = 0; i < a->member_count; i++) set_state(f, a->members[i], ST_MEMBER);
  bool any = false;
  for (int i = 0; i < b->external_count; i++) {
    int e = b->externals[i];
    if (get_state(f, e) != ST_MEMBER) continue;
    if (f->root_cluster[e] != ai) return false; /* not an output of |a| */
    const hlo_instruction_t *E = f->ins[e];
    for (int u = 0; u < E->user_count; u++) {
      const hlo_instruction_t *U = E->users[u];
      if (f->mark[pos_of(U)] == f->mark_cur && !(f->identity[pos_of(U)] && reads_identity(U, E))) return false;
    }
    any = true;
  }
  if (!any) return false;
  for (int i = 0; i < a->external_count; i++)
    if (f->mark[a->externals[i]] == f->mark_cur) return false;
  return true;
}

/* Merges |b| into |a| (the producer), when the union keeps to the limits
 * and creates no cycle; *merged says whether it did. */
static vkhlo_status_t try_merge_consumer(fuser_t *f, cluster_t *a, cluster_t *b, int *stack, bool *merged) {
  *merged = false;
  if (a->root_count + b->root_count > FUSION_MAX_OUTPUTS) return NULL;
  if (mark_union(f, a, b) > FUSION_MAX_INSTRUCTIONS) return NULL;
  int max_ext;
  const cluster_t *both[2] = {a, b};
  int ext = mark_union_externals(f, both, 2, &max_ext);
  if (ext + a->root_count + b->root_count > f->max_buffers) return NULL;
  if (merge_creates_cycle(f, a, b, max_ext, stack)) return NULL;
  VKHLO_RETURN_IF_ERROR(absorb(f, a, b));
  *merged = true;
  VKHLO_RETURN_IF_ERROR(compute_externals(f, a));
  /* An output of |a| read only inside the union (a gather materialized
   * for its two consumers, both merged now) is no longer stored. */
  int kept = 0;
  for (int i = 0; i < a->root_count; i++) {
    const hlo_instruction_t *x = f->ins[a->roots[i]];
    bool outside = x == f->comp->root;
    for (int u = 0; u < x->user_count && !outside; u++) outside = get_state(f, pos_of(x->users[u])) != ST_MEMBER;
    if (outside || (kept == 0 && i == a->root_count - 1))
      a->roots[kept++] = a->roots[i];
    else
      f->root_cluster[a->roots[i]] = -1;
  }
  a->root_count = kept;
  return NULL;
}

/* Until no pair merges (a chain a -> b -> c becomes one cluster). */
static vkhlo_status_t merge_consumers(fuser_t *f) {
  int *stack = vkhlo_malloc(f->m->arena.allocator, sizeof(int) * (size_t)(f->n + FUSION_MAX_OUTPUTS * 2 + 1));
  if (!stack) return VKHLO_NO_MEMORY();
  vkhlo_status_t st = NULL;
  bool any = true;
  while (any && !st) {
    any = false;
    for (int j = 0; j < f->cluster_count && !st; j++) {
      cluster_t *b = &f->clusters[j];
      if (!b->alive || !loop_only(f, b)) continue;
      mark_identity(f, j);
      bool merged = false;
      for (int i = 0; i < b->external_count && !merged && !st; i++) {
        int ai = f->root_cluster[b->externals[i]];
        if (ai < 0 || ai == j) continue;
        cluster_t *a = &f->clusters[ai];
        if (!a->alive || !loop_only(f, a) || !same_output_dims(f, a, b) || !reads_outputs_in_place(f, ai, j))
          continue;
        st = try_merge_consumer(f, a, b, stack, &merged);
      }
      any = any || merged;
    }
  }
  vkhlo_free(f->m->arena.allocator, stack);
  return st;
}

/* ------------------------------------------------------- attention */

/* Attention (elemental.h, el_attention_match): the cluster of the values
 * dot |c3| (its only root), the row cluster computing its lhs P (|c2|,
 * P its only root and the dot its only user) and the cluster of the
 * scores dot that c2 reads (|c1|, its only root, every user in c2)
 * become one cluster, whose kernel never stores the scores or P. */
static vkhlo_status_t merge_attention(fuser_t *f) {
  if (!f->target || !f->row_fusions) return NULL;
  for (int i = 0; i < f->cluster_count; i++) {
    cluster_t *c3 = &f->clusters[i];
    if (!c3->alive || c3->root_count != 1) continue;
    hlo_instruction_t *values = f->ins[c3->roots[0]];
    if (values->opcode != HLO_OPCODE_DOT_GENERAL || values->operand_count != 2) continue;
    hlo_instruction_t *p = values->operands[0];
    int i2 = f->root_cluster[pos_of(p)];
    if (i2 < 0 || i2 == i || p->user_count != 1) continue;
    cluster_t *c2 = &f->clusters[i2];
    if (!c2->alive || !c2->rows || c2->root_count != 1) continue;
    const hlo_instruction_t *chain[FUSION_MAX_INSTRUCTIONS];
    int count = 0;
    for (int j = 0; j < c2->member_count && count < FUSION_MAX_INSTRUCTIONS; j++) chain[count++] = f->ins[c2->members[j]];
    for (int e = 0; e < c2->external_count; e++) {
      hlo_instruction_t *scores = f->ins[c2->externals[e]];
      int i1 = f->root_cluster[c2->externals[e]];
      if (i1 < 0 || i1 == i || i1 == i2 || !f->clusters[i1].alive || f->clusters[i1].root_count != 1) continue;
      el_attention_t a;
      if (!el_attention_match(f->target, values, scores, chain, count, &a)) continue;
      cluster_t *c1 = &f->clusters[i1];
      f->cur++;
      for (int j = 0; j < c2->member_count; j++) set_state(f, c2->members[j], ST_MEMBER);
      bool inside = true;
      for (int u = 0; u < scores->user_count; u++) inside = inside && get_state(f, pos_of(scores->users[u])) == ST_MEMBER;
      if (!inside || c1->member_count + c2->member_count + c3->member_count > FUSION_MAX_INSTRUCTIONS) continue;
      /* the union's buffers: its external operands and one result */
      for (int j = 0; j < c1->member_count; j++) set_state(f, c1->members[j], ST_MEMBER);
      for (int j = 0; j < c3->member_count; j++) set_state(f, c3->members[j], ST_MEMBER);
      int max_ext;
      const cluster_t *all[3] = {c1, c2, c3};
      int ext = mark_union_externals(f, all, 3, &max_ext);
      if (ext + 1 > f->max_buffers) continue;
      if (!absorb_members(f, c3, c1) || !absorb_members(f, c3, c2)) return VKHLO_NO_MEMORY();
      c1->alive = c2->alive = false;
      /* the scores and P are no longer results of any cluster */
      f->root_cluster[pos_of(scores)] = -1;
      f->root_cluster[pos_of(p)] = -1;
      c3->rows = true;
      VKHLO_RETURN_IF_ERROR(compute_externals(f, c3));
      break;
    }
  }
  return NULL;
}

/* ------------------------------------------------------- rewriting */

static hlo_fusion_kind_t cluster_kind(const fuser_t *f, const cluster_t *c) {
  bool reduce = false;
  for (int i = 0; i < c->member_count; i++) {
    hlo_opcode_t op = f->ins[c->members[i]]->opcode;
    if (op == HLO_OPCODE_DOT || op == HLO_OPCODE_DOT_GENERAL || op == HLO_OPCODE_CONVOLUTION)
      return HLO_FUSION_OUTPUT;
    if (op == HLO_OPCODE_REDUCE || op == HLO_OPCODE_REDUCE_WINDOW) reduce = true;
  }
  return reduce ? HLO_FUSION_INPUT : HLO_FUSION_LOOP;
}

static bool insert_computation_before(hlo_module_t *m, hlo_computation_t *fused,
                                      const hlo_computation_t *user) {
  if (!hlo_module_add_computation(m, fused)) return false;
  int at = -1;
  for (int i = 0; i < m->computation_count; i++)
    if (m->computations[i] == user) at = i;
  if (at < 0) return true;
  memmove(&m->computations[at + 1], &m->computations[at],
          sizeof(void *) * (size_t)(m->computation_count - 1 - at));
  m->computations[at] = fused;
  return true;
}

static const char *arena_name(hlo_module_t *m, const char *prefix, const char *base) {
  char buf[160];
  snprintf(buf, sizeof buf, "%s%s", prefix, base);
  return arena_strdup(&m->arena, buf);
}

/* Builds the fused computation and fusion instruction of |c|; sets
 * repl[root] for every root. */
static vkhlo_status_t build_fusion(fuser_t *f, cluster_t *c, hlo_instruction_t **repl,
                                   hlo_instruction_t **clone, hlo_instruction_t **out_fusion,
                                   hlo_instruction_t **gtes) {
  hlo_module_t *m = f->m;
  const hlo_instruction_t *first_root = f->ins[c->roots[0]];
  hlo_computation_t *fc = hlo_computation_create(m, arena_name(m, "fused_", first_root->name));
  if (!fc || !fc->name) return VKHLO_NO_MEMORY();
  fc->loc = first_root->loc;
  hlo_instruction_t **ext_ops = arena_alloc(&m->arena, sizeof(void *) * (size_t)(c->external_count + 1));
  if (!ext_ops) return VKHLO_NO_MEMORY();
  /* Map: position -> value inside the fused computation (clone[]), reset by stamp. */
  f->cur++;
  for (int i = 0; i < c->external_count; i++) {
    hlo_instruction_t *x = f->ins[c->externals[i]];
    ext_ops[i] = x;
    hlo_instruction_t *p = hlo_instruction_create(m, HLO_OPCODE_PARAMETER, &x->shape, 0, NULL);
    if (!p) return VKHLO_NO_MEMORY();
    p->parameter_number = i;
    p->loc = x->loc;
    p->name = arena_name(m, "param_", x->name);
    if (!p->name || !hlo_computation_append(m, fc, p)) return VKHLO_NO_MEMORY();
    clone[c->externals[i]] = p;
    set_state(f, c->externals[i], ST_EXT);
  }
  hlo_instruction_t *small[16];
  for (int i = 0; i < c->member_count; i++) {
    hlo_instruction_t *M = f->ins[c->members[i]];
    hlo_instruction_t **ops = small;
    if (M->operand_count > 16) {
      ops = arena_alloc(&m->arena, sizeof(void *) * (size_t)M->operand_count);
      if (!ops) return VKHLO_NO_MEMORY();
    }
    for (int k = 0; k < M->operand_count; k++) ops[k] = clone[pos_of(M->operands[k])];
    hlo_instruction_t *copy = hlo_instruction_clone(m, M, ops);
    if (!copy) return VKHLO_NO_MEMORY();
    copy->name = M->name; /* the GLSL comments name the original instruction */
    if (!hlo_computation_append(m, fc, copy)) return VKHLO_NO_MEMORY();
    clone[c->members[i]] = copy;
  }
  hlo_shape_t shape;
  if (c->root_count == 1) {
    fc->root = clone[c->roots[0]];
    shape = fc->root->shape;
  } else {
    hlo_instruction_t *outs[FUSION_MAX_OUTPUTS];
    hlo_shape_t shapes[FUSION_MAX_OUTPUTS];
    for (int i = 0; i < c->root_count; i++) {
      outs[i] = clone[c->roots[i]];
      shapes[i] = outs[i]->shape;
    }
    if (!hlo_shape_make_tuple(m, &shape, c->root_count, shapes)) return VKHLO_NO_MEMORY();
    hlo_instruction_t *t = hlo_instruction_create(m, HLO_OPCODE_TUPLE, &shape, c->root_count, outs);
    if (!t || !hlo_computation_append(m, fc, t)) return VKHLO_NO_MEMORY();
    t->loc = first_root->loc;
    fc->root = t;
  }
  if (!insert_computation_before(m, fc, f->comp)) return VKHLO_NO_MEMORY();
  hlo_instruction_t *fusion =
      hlo_instruction_create(m, HLO_OPCODE_FUSION, &shape, c->external_count, ext_ops);
  if (!fusion || !hlo_instruction_set_called(m, fusion, 1, &fc)) return VKHLO_NO_MEMORY();
  fusion->attrs.fusion_kind = cluster_kind(f, c);
  fusion->loc = first_root->loc;
  fusion->name = arena_name(m, "fusion.", first_root->name);
  if (!fusion->name) return VKHLO_NO_MEMORY();
  *out_fusion = fusion;
  if (c->root_count == 1) {
    repl[c->roots[0]] = fusion;
    return NULL;
  }
  for (int i = 0; i < c->root_count; i++) {
    const hlo_instruction_t *R = f->ins[c->roots[i]];
    hlo_instruction_t *g = hlo_instruction_create(m, HLO_OPCODE_GET_TUPLE_ELEMENT, &R->shape, 1, &fusion);
    if (!g) return VKHLO_NO_MEMORY();
    g->attrs.index = i;
    g->loc = R->loc;
    gtes[i] = g;
    repl[c->roots[i]] = g;
  }
  return NULL;
}

/* Appends |node| to the new instruction list after everything it uses
 * (iterative DFS; |done| marks emitted nodes by id). */
static vkhlo_status_t emit_ordered(hlo_module_t *m, hlo_computation_t *comp, hlo_instruction_t *node,
                                   unsigned char *done, hlo_instruction_t **stack, int *opnd) {
  int top = 0;
  if (done[node->id]) return NULL;
  stack[top] = node;
  opnd[top++] = 0;
  done[node->id] = 1; /* on the stack */
  while (top > 0) {
    hlo_instruction_t *x = stack[top - 1];
    int k = opnd[top - 1];
    if (k < x->operand_count) {
      opnd[top - 1]++;
      hlo_instruction_t *o = x->operands[k];
      if (!done[o->id]) {
        done[o->id] = 1;
        stack[top] = o;
        opnd[top++] = 0;
      }
      continue;
    }
    top--;
    done[x->id] = 2;
    if (!hlo_computation_append(m, comp, x)) return VKHLO_NO_MEMORY();
  }
  return NULL;
}

/* A lone elementwise op of 32-bit values, or a lone f32 dot whose last
 * result dimension is a multiple of 8, big enough for a wide kernel: on
 * CPU devices it becomes a fusion of one instruction (as XLA makes every
 * elementwise kernel a loop fusion), so that it gets the wide kernel of
 * codegen/emit_fusion.c instead of one element per invocation. */
static bool wide_single(const fuser_t *f, const cluster_t *c) {
  if (c->member_count != 1 || c->root_count != 1) return false;
  const hlo_instruction_t *in = f->ins[c->members[0]];
  hlo_element_type_t t = in->shape.element_type;
  if (hlo_shape_is_tuple(&in->shape) || in->shape.rank < 1 || in->operand_count + 1 > f->max_buffers) return false;
  int64_t n = hlo_shape_element_count(&in->shape);
  if (in->opcode == HLO_OPCODE_DOT || in->opcode == HLO_OPCODE_DOT_GENERAL)
    return t == HLO_F32 && in->shape.dimensions[in->shape.rank - 1] % 8 == 0 && n >= 512;
  return hlo_opcode_is_elementwise(in->opcode) && (t == HLO_F32 || t == HLO_S32 || t == HLO_U32) && n >= 128 &&
         n % 2 == 0;
}

static vkhlo_status_t rewrite(fuser_t *f, bool *changed) {
  hlo_module_t *m = f->m;
  int n = f->n;
  hlo_instruction_t **repl = vkhlo_calloc(f->m->arena.allocator, (size_t)n + 1, sizeof *repl);
  hlo_instruction_t **clone = vkhlo_calloc(f->m->arena.allocator, (size_t)n + 1, sizeof *clone);
  hlo_instruction_t **anchored = vkhlo_calloc(f->m->arena.allocator, (size_t)n + 1, sizeof *anchored);
  hlo_instruction_t **gtes =
      vkhlo_calloc(f->m->arena.allocator, (size_t)f->cluster_count * FUSION_MAX_OUTPUTS + 1, sizeof *gtes);
  vkhlo_status_t st = NULL;
  if (!repl || !clone || !anchored || !gtes) st = VKHLO_NO_MEMORY();
  for (int p = 0; p < n && !st; p++) repl[p] = f->ins[p];
  bool any = false;
  for (int i = 0; i < f->cluster_count && !st; i++) {
    cluster_t *c = &f->clusters[i];
    if (!c->alive || (c->member_count < 2 && c->root_count < 2 && !(f->wide_singles && wide_single(f, c))))
      continue;
    hlo_instruction_t *fusion = NULL;
    st = build_fusion(f, c, repl, clone, &fusion, gtes + (size_t)i * FUSION_MAX_OUTPUTS);
    if (st) break;
    int anchor = 0;
    for (int r = 0; r < c->root_count; r++)
      if (c->roots[r] > anchor) anchor = c->roots[r];
    anchored[anchor] = fusion;
    fusion->scratch = (void *)(intptr_t)i;
    any = true;
  }
  if (st || !any) {
    vkhlo_free(f->m->arena.allocator, repl);
    vkhlo_free(f->m->arena.allocator, clone);
    vkhlo_free(f->m->arena.allocator, anchored);
    vkhlo_free(f->m->arena.allocator, gtes);
    *changed = false;
    return st;
  }
  /* Operands of kept instructions and fusions now read the replacements
   * (each node once; get_tuple_elements already read their fusion). */
  for (int p = 0; p < n; p++) {
    hlo_instruction_t *nodes[2] = {NULL, anchored[p]};
    if (f->kept[p] || (f->root_cluster[p] >= 0 && repl[p] == f->ins[p])) nodes[0] = f->ins[p];
    for (int j = 0; j < 2; j++) {
      hlo_instruction_t *z = nodes[j];
      for (int k = 0; z && k < z->operand_count; k++) z->operands[k] = repl[pos_of(z->operands[k])];
    }
  }
  /* Rebuild the instruction list: anchor order, operands first. */
  int total = n;
  for (int i = 0; i < f->cluster_count; i++) total += FUSION_MAX_OUTPUTS + 1;
  unsigned char *done = vkhlo_calloc(f->m->arena.allocator, (size_t)m->next_instruction_id + 1, 1);
  hlo_instruction_t **stack = vkhlo_malloc(f->m->arena.allocator, sizeof(void *) * ((size_t)total + 1));
  int *opnd = vkhlo_malloc(f->m->arena.allocator, sizeof(int) * ((size_t)total + 1));
  if (!done || !stack || !opnd) st = VKHLO_NO_MEMORY();
  hlo_instruction_t **old = f->ins;
  hlo_instruction_t **params = f->comp->parameters;
  int param_count = f->comp->parameter_count;
  if (!st) {
    f->comp->instructions = NULL;
    f->comp->instruction_count = 0;
    f->comp->instruction_capacity = 0;
  }
  for (int p = 0; p < n && !st; p++) {
    hlo_instruction_t *node = NULL;
    if (f->kept[p] || (f->root_cluster[p] >= 0 && repl[p] == old[p])) node = old[p];
    if (node) st = emit_ordered(m, f->comp, node, done, stack, opnd);
    if (!st && anchored[p]) {
      st = emit_ordered(m, f->comp, anchored[p], done, stack, opnd);
      int ci = (int)(intptr_t)anchored[p]->scratch;
      for (int r = 0; r < FUSION_MAX_OUTPUTS && !st; r++) {
        hlo_instruction_t *g = gtes[(size_t)ci * FUSION_MAX_OUTPUTS + r];
        if (g) st = emit_ordered(m, f->comp, g, done, stack, opnd);
      }
    }
  }
  /* Appending re-listed the parameters: keep the original list. */
  f->comp->parameters = params;
  f->comp->parameter_count = param_count;
  if (!st) f->comp->root = repl[pos_of(f->comp->root)];
  vkhlo_free(f->m->arena.allocator, done);
  vkhlo_free(f->m->arena.allocator, stack);
  vkhlo_free(f->m->arena.allocator, opnd);
  vkhlo_free(f->m->arena.allocator, repl);
  vkhlo_free(f->m->arena.allocator, clone);
  vkhlo_free(f->m->arena.allocator, anchored);
  vkhlo_free(f->m->arena.allocator, gtes);
  *changed = true;
  return st;
}

/* -------------------------------------------------- one computation */

static vkhlo_status_t fuse_computation(hlo_module_t *m, hlo_computation_t *comp, int max_buffers,
                                       const codegen_target_t *target, bool *changed) {
  *changed = false;
  if (!comp->root || comp->instruction_count < 2) return NULL;
  if (!hlo_compute_users(m, comp)) return VKHLO_NO_MEMORY();
  fuser_t F;
  memset(&F, 0, sizeof F);
  fuser_t *f = &F;
  f->m = m;
  f->comp = comp;
  f->n = comp->instruction_count;
  f->max_buffers = max_buffers;
  f->wide_singles = target && target->is_cpu && target->shader_int64;
  f->row_fusions = target && target->is_cpu && !target->subgroup_reduce;
  f->multi_dots = !target || codegen_target_multi_dots(target);
  f->target = target;
  size_t n = (size_t)f->n;
  f->ins = vkhlo_malloc(m->arena.allocator, sizeof(void *) * n);
  f->needed = vkhlo_calloc(m->arena.allocator, n, sizeof(bool));
  f->kept = vkhlo_calloc(m->arena.allocator, n, sizeof(bool));
  f->splat = vkhlo_calloc(m->arena.allocator, n, sizeof(bool));
  f->stamp = vkhlo_calloc(m->arena.allocator, n, sizeof(int));
  f->state = vkhlo_calloc(m->arena.allocator, n, 1);
  f->exclusive = vkhlo_calloc(m->arena.allocator, n, sizeof(bool));
  f->identity = vkhlo_calloc(m->arena.allocator, n, sizeof(bool));
  f->in_contraction = vkhlo_calloc(m->arena.allocator, n, sizeof(bool));
  f->row_read = vkhlo_calloc(m->arena.allocator, n, sizeof(bool));
  f->mark = vkhlo_calloc(m->arena.allocator, n, sizeof(int));
  f->root_cluster = vkhlo_malloc(m->arena.allocator, sizeof(int) * n);
  vkhlo_status_t st = NULL;
  if (!f->ins || !f->needed || !f->kept || !f->splat || !f->stamp || !f->state || !f->exclusive ||
      !f->identity || !f->in_contraction || !f->row_read || !f->mark || !f->root_cluster)
    st = VKHLO_NO_MEMORY();
  for (int p = 0; p < f->n && !st; p++) {
    f->ins[p] = comp->instructions[p];
    f->ins[p]->scratch = (void *)(intptr_t)p;
    f->root_cluster[p] = -1;
    f->splat[p] = hlo_constant_is_splat(f->ins[p]);
  }
  if (!st) f->needed[pos_of(comp->root)] = true;
  /* Consumers first: every user of an instruction is judged before it. */
  for (int p = f->n - 1; p >= 0 && !st; p--) {
    hlo_instruction_t *x = f->ins[p];
    if (!root_fusible(f, x)) {
      f->kept[p] = true;
      for (int k = 0; k < x->operand_count; k++) f->needed[pos_of(x->operands[k])] = true;
      continue;
    }
    if (!f->needed[p]) continue; /* recomputed inside every cluster using it */
    st = form_cluster(f, p);
  }
  for (int i = 0; i < f->cluster_count && !st; i++) st = compute_externals(f, &f->clusters[i]);
  if (!st) st = merge_siblings(f);
  if (!st) st = merge_consumers(f);
  if (!st) st = merge_attention(f);
  if (!st) st = rewrite(f, changed);
  for (int i = 0; i < f->cluster_count; i++) {
    vkhlo_free(m->arena.allocator, f->clusters[i].members);
    vkhlo_free(m->arena.allocator, f->clusters[i].externals);
  }
  vkhlo_free(m->arena.allocator, f->clusters);
  vkhlo_free(m->arena.allocator, f->ins);
  vkhlo_free(m->arena.allocator, f->needed);
  vkhlo_free(m->arena.allocator, f->kept);
  vkhlo_free(m->arena.allocator, f->splat);
  vkhlo_free(m->arena.allocator, f->stamp);
  vkhlo_free(m->arena.allocator, f->state);
  vkhlo_free(m->arena.allocator, f->exclusive);
  vkhlo_free(m->arena.allocator, f->identity);
  vkhlo_free(m->arena.allocator, f->in_contraction);
  vkhlo_free(m->arena.allocator, f->row_read);
  vkhlo_free(m->arena.allocator, f->mark);
  vkhlo_free(m->arena.allocator, f->root_cluster);
  return st;
}

vkhlo_status_t codegen_fusion_pass(hlo_module_t *module, const codegen_target_t *target, bool *changed) {
  *changed = false;
  if (!module->entry_computation) return NULL;
  int max_buffers = FUSION_MAX_BUFFERS;
  if (target && target->max_storage_buffers_per_stage > 0 &&
      target->max_storage_buffers_per_stage < (uint32_t)max_buffers)
    max_buffers = (int)target->max_storage_buffers_per_stage;
  /* The computations lowered as sequences: the entry and, transitively,
   * while/if/case callees. */
  int cap = module->computation_count + 1, count = 0;
  hlo_computation_t **todo = vkhlo_malloc(module->arena.allocator, sizeof(void *) * (size_t)cap);
  if (!todo) return VKHLO_NO_MEMORY();
  todo[count++] = module->entry_computation;
  for (int i = 0; i < count; i++) {
    hlo_computation_t *c = todo[i];
    for (int j = 0; j < c->instruction_count; j++) {
      const hlo_instruction_t *in = c->instructions[j];
      if (in->opcode != HLO_OPCODE_WHILE && in->opcode != HLO_OPCODE_IF &&
          in->opcode != HLO_OPCODE_CASE)
        continue;
      for (int k = 0; k < in->called_count; k++) {
        bool seen = false;
        for (int t = 0; t < count; t++) seen = seen || todo[t] == in->called_computations[k];
        if (!seen && count < cap) todo[count++] = in->called_computations[k];
      }
    }
  }
  vkhlo_status_t st = NULL;
  for (int i = 0; i < count && !st; i++) {
    bool ch = false;
    st = fuse_computation(module, todo[i], max_buffers, target, &ch);
    *changed = *changed || ch;
  }
  vkhlo_free(module->arena.allocator, todo);
  return st;
}

/* ------------------------------------------------------------ DOT */

static void dot_id(strbuf_t *sb, const hlo_instruction_t *in) { strbuf_printf(sb, "n%d", in->id); }

char *codegen_fusion_dot(const hlo_module_t *module) {
  if (!module || !module->entry_computation) return NULL;
  const hlo_computation_t *c = module->entry_computation;
  strbuf_t sb;
  strbuf_init(&sb, module->arena.allocator);
  strbuf_printf(&sb, "digraph \"%s\" {\n  rankdir=TB;\n  node [shape=box, fontsize=10];\n",
                c->name ? c->name : "entry");
  for (int i = 0; i < c->instruction_count; i++) {
    const hlo_instruction_t *in = c->instructions[i];
    if (in->opcode == HLO_OPCODE_FUSION && in->called_count > 0) {
      const hlo_computation_t *fc = in->called_computations[0];
      strbuf_printf(&sb, "  subgraph cluster_%d {\n    label=\"%s (%s)\";\n    style=filled; fillcolor=\"#eef4ff\";\n",
                    in->id, in->name, kind_name(in->attrs.fusion_kind));
      strbuf_append(&sb, "    ");
      dot_id(&sb, in);
      strbuf_printf(&sb, " [label=\"%s", in->name);
      for (int j = 0; j < fc->instruction_count; j++) {
        const hlo_instruction_t *x = fc->instructions[j];
        if (x->opcode == HLO_OPCODE_PARAMETER || x->opcode == HLO_OPCODE_TUPLE) continue;
        strbuf_printf(&sb, "\\n%s = %s", x->name, hlo_opcode_name(x->opcode));
      }
      strbuf_append(&sb, "\"];\n  }\n");
    } else {
      strbuf_append(&sb, "  ");
      dot_id(&sb, in);
      strbuf_printf(&sb, " [label=\"%s = %s\"%s];\n", in->name, hlo_opcode_name(in->opcode),
                    in->opcode == HLO_OPCODE_PARAMETER ? ", shape=ellipse" : "");
    }
    for (int k = 0; k < in->operand_count; k++) {
      strbuf_append(&sb, "  ");
      dot_id(&sb, in->operands[k]);
      strbuf_append(&sb, " -> ");
      dot_id(&sb, in);
      strbuf_append(&sb, ";\n");
    }
  }
  strbuf_append(&sb, "}\n");
  return strbuf_take(&sb);
}
