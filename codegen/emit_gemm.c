/*
 * GEMM kernels for dot_general: the library kernels of shaders/
 * (gemm_cpu.comp for CPU devices, gemm_gpu.comp for GPUs) with their
 * hooks filled in for one instruction.
 *
 * Which instructions.  An f32, f16 or bf16 dot or dot_general, or one of
 * integers of 8, 16 or 32 bits (batch dimensions, any
 * number and order of contracting and free dimensions), alone or in an
 * output fusion (codegen/fusion.c) whose other instructions are
 * elementwise ops, data movement, parameters and splat constants, the dot
 * used only at each output's own index (its epilogue: bias add, residual,
 * activation).  On CPU devices a fusion may hold up to three dots of the
 * same lhs with the same dimension numbers and shapes (q/k/v projections,
 * a SwiGLU's gate and up projections): one kernel computes them all
 * (NDOT in gemm_cpu.comp), each lhs element loaded once.  Conditions:
 *   - each dot operand is a fusion parameter (or the dot's own operand)
 *     seen through a chain of transpose, broadcast_in_dim, reshape (of a
 *     dense view, or one whose merged dimensions form a progression),
 *     slice (its start an offset, its steps scaling the strides),
 *     dynamic_slice (constant starts an offset, a parameter's start read by
 *     the kernel: scan over stacked layer weights) and
 *     exact convert (f16/bf16 to f32): such a chain is a strided view of the
 *     parameter, its offset and strides go into the kernel's
 *     LHS_AT/RHS_AT/..._KS macros (operand fusion stays: no transposed or
 *     sliced copy is made);
 *   - the contracting dimensions of each operand merge into one stride in
 *     the order the dot pairs them (always for row-major operands);
 *     batch and free dimensions need not merge (LHS_AT delinearizes them,
 *     outside the k loop).
 *   - f16/bf16: operands are read as f32 and summed in f32 in k order,
 *     f16/bf16 products rounded once in the epilogue, which is what the
 *     elemental dot computes wherever its conversion of each operand to
 *     the result type is exact (an operand of the result's type, or
 *     f16/bf16 into an f32 result; see plan_gemm), on devices that store
 *     16-bit types natively.
 *   - integers (GEMM_INT, "Integer operands" in gemm_cpu.comp): operands
 *     widened to 32 bits by their own signedness, int products and sums
 *     wrapping modulo 2^32, the low bits of an 8- or 16-bit result taken
 *     in the epilogue: the elemental dot's values whatever the order.  A
 *     widening integer convert is read through (exact_convert), and so is
 *     an 8-bit integer's convert into a float product, or a 16-bit one's
 *     into f32: integer weights whose scale is applied after the product.
 * Anything else keeps the elemental path (one invocation per element, or
 * the wide kernels of emit_fusion.c): i1, 64-bit and f64 dots, f32
 * operands into a 16-bit result, operands behind pads, concatenates or
 * arithmetic (a scale applied to the weights before the product: its
 * multiply is a fusion of its own, the product a GEMM on its result).
 *
 * The epilogue is a GLSL function gemm_epilogue(idx, gemm_v0[, gemm_v1,
 * gemm_v2]) made by the elemental emitter over the fused computation with
 * each dot's value at output position idx given as gemm_v<d>: every root's
 * value there is computed and stored, as the fusion kernel would have.
 * The GPU kernel takes one dot per fusion (fusions of several dots keep
 * the elemental path there).  On the CPU kernel, where TN and N are
 * multiples of 8 and every result is f32, the epilogue is gemm_values
 * (the values without storing them) under gemm_epilogue8, which stores
 * each result's 8 columns as one u64vec4 (GEMM_STORE8 in gemm_cpu.comp)
 * and reads an f32 operand used at the output's own position (a
 * residual) as one word for the 8; other f32 operand reads go through
 * R32UI texel views (in<k>_at): lavapipe pays per access and component,
 * not per byte.
 *
 * Operands in words (CPU): where the lhs has k stride 1 and K % 8 == 0,
 * or the rhs n stride 1 and N % 8 == 0 (and every other stride a multiple
 * of 8), the kernel also binds them as u64vec4 arrays and loads 8 floats
 * at a time (lavapipe pays per loaded component, whatever its width).
 * Tiles shrink for small products (TM <= M, at least 16 invocations
 * across N when N allows), and to 8 rows when NDOT > 1 (registers).
 * Where the rhs is in words, K % 8 == 0, M >= 16 and the device has subgroup
 * shuffles (lavapipe: 8 lanes), the lhs is shared by the subgroup's lanes
 * and the workgroup's subgroups step through k in blocks behind barriers
 * ("Subgroups" in gemm_cpu.comp; choose_cpu_tiles).
 *
 * Kernel choice: target->gemm (filled from VKHLO_GEMM by the API layer):
 * auto picks gemm_cpu on CPU devices (target->is_cpu) and gemm_gpu
 * elsewhere; "cpu"/"gpu" force one (gpu runs on lavapipe too, which is
 * how its correctness is tested here); "off" keeps the elemental path.
 * Products of few result tiles reach the GPU kernel already split along
 * k (codegen/expand.c, "split-K": S parts as a batch dimension, a reduce
 * of their partials after).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/emit_internal.h"
#include "codegen/glsl_types.h"
#include "codegen/shaders.h"
#include "support/array.h"
#include "support/status.h"

/* Register tile of gemm_cpu.comp (rows x columns per invocation).
 * Measured on lavapipe (2 cores, heavily shared: ratios to OpenBLAS in the
 * same run, bench/bench_kernels gemm_1024, operands in words): 8x8 3.2%,
 * 4x16 2.8%, 8x16 4.4%, 16x16 8-12%, 16x32 13%, 32x16 9%, 32x8 11%; 16x16
 * without words 4-6%.  Past 16x16 the gain is within the noise (32x16
 * against 16x16 alternately: 9.7/13.1% vs 12.6/8.9%) and the kernel
 * compiles slower (more registers spilled), so 16x16. */
#define GEMM_CPU_TM 16
#define GEMM_CPU_TN 16
#define GEMM_CPU_MAX_GROUPS 256
/* With the lhs shared by subgroup shuffles (see "Subgroups" in
 * gemm_cpu.comp): TM rows by 8 columns per invocation (GEMM_CPU_SG_TM rows
 * for two products, half as many for one or three; $VKHLO_GEMM_TILE=MxN
 * overrides), GEMM_CPU_SG_ACROSS invocations across the columns and
 * GEMM_CPU_SG_ROWS subgroups down the rows of a workgroup, a barrier every
 * GEMM_CPU_SG_KB steps of k.  Measured on lavapipe (2 shared cores, ratio
 * to OpenBLAS in the same run, bench/bench_kernels gemm_1024; the machine
 * was loaded, +-20% between runs): without the k-block barriers 11-13%,
 * with them (KB 32/64/128/256) 15-27%; TM 64 slower than 32 (16%, and
 * slow LLVM compiles); across 16/32 and 4/8/16 subgroups down within the
 * noise; 16 columns per invocation within the noise.  One product with 16
 * rows against 32 (texel views, bench_kernels alternating, 2026-11-24):
 * gemm_1024 38-39% vs 32-34% of OpenBLAS, ffn_up 27-28% vs 23%, ffn_down
 * 39-42% vs 22-33%; two products (ffn_gated) 28-30% vs 31-35%, so 32 there;
 * three (chess-9M's q, k, v projections, --profile) 195-197 ms per
 * execution with 16 rows, 216-228 ms with 8 or 32.
 * From variants timed in a standalone harness at 1024^3: with its loads
 * taken out of the k loop the 32-row kernel takes 1.5x longer per flop
 * than the 16-row one (28.7 vs 19.4 ms) with the same instruction mix per
 * flop in twice the code (133 against 67 KB of x86 in the loop), while
 * its loads cost half as much (5 vs 10 ms). */
#define GEMM_CPU_SG_TM 32
#define GEMM_CPU_SG_ACROSS 32
#define GEMM_CPU_SG_ROWS 4
#define GEMM_CPU_SG_KB 128

/* A scale or zero point of scaled weights ("Scaled weights"): the float
 * element of binding |binding| (-1: none) at offset + sum(index[d] *
 * stride[d]).  Group-wise (gdim >= 0): along dimension gdim the value is
 * the same for |group| consecutive elements and then moves on by gstride
 * (stride[gdim] is 0): element i of it is at (i / group) * gstride.  A
 * reshape merging [k / G, G] into k of weights quantized per group of G
 * rows (GPTQ/AWQ-style) makes one. */
typedef struct gemm_qparam {
  int binding;
  hlo_element_type_t type;
  int64_t offset, stride[HLO_MAX_RANK];
  int gdim;
  int64_t group, gstride;
} gemm_qparam_t;

static const gemm_qparam_t no_qparam = {.binding = -1, .gdim = -1};

/* A dot operand as a strided view of a kernel binding. */
typedef struct gemm_view {
  int binding;
  hlo_element_type_t type; /* the binding's element type: f32, f16, bf16 or an integer (codegen_kernel_int_type) */
  int64_t offset;               /* of element [0, ..., 0] in the binding (a slice's start) */
  int64_t stride[HLO_MAX_RANK]; /* per dimension of the dot operand */
  /* A split dimension (split_dim >= 0): index i of that dimension is at
   * (i / split_inner) * split_stride + (i % split_inner) * stride[split_dim]:
   * a reshape that merged two dimensions whose strides are no progression
   * (PyTorch's heads x head size, transposed, back to the model width). */
  int split_dim;
  int64_t split_inner, split_stride;
  /* dynamic_slice starts given by kernel inputs: the element offset adds
   * min(max(start, 0), hi) * stride for each, the start the one element of
   * scalar binding |binding| (an integer of |type|), read at run time */
  int dyn_count;
  struct gemm_dyn {
    int binding;
    hlo_element_type_t type;
    int64_t hi, stride;
  } dyn[HLO_MAX_RANK];
  /* Scaled integers (scale.binding >= 0; "Scaled weights" below): each
   * element is the view's integer, made an f32, minus its zero point
   * (zero.binding >= 0; else 0), times its scale: one f32 subtract and
   * one multiply, each rounded to qtype where that is f16 or bf16 (the
   * program's subtract and multiply in that type, as the elemental path
   * computes them: in f32, then rounded). */
  gemm_qparam_t scale, zero;
  hlo_element_type_t qtype;
} gemm_view_t;

#define GEMM_MAX_DOTS 3

typedef struct gemm_plan {
  const hlo_instruction_t *dot; /* the first product */
  /* products sharing the lhs (NDOT in gemm_cpu.comp): dots[0] == dot */
  int ndot;
  const hlo_instruction_t *dots[GEMM_MAX_DOTS];
  gemm_view_t rview[GEMM_MAX_DOTS];
  int64_t rks_of[GEMM_MAX_DOTS];
  const hlo_computation_t *fc; /* fused computation, NULL for a lone dot */
  gemm_view_t view[2];
  int nb, nc;
  int64_t lb[HLO_MAX_RANK], rb[HLO_MAX_RANK], lc[HLO_MAX_RANK], rc[HLO_MAX_RANK];
  int64_t batch, m, n, k;
  int64_t lks, rks; /* merged contracting strides */
  /* the lhs's contracting dimension split (gemm_view_t): k at
   * (k / lk_inner) * lk_outer + (k % lk_inner) * lks; lk_inner 0: not */
  int64_t lk_inner, lk_outer;
  /* chlo.ragged_dot (see "Ragged products"): the rhs's group dimension rg
   * (not a free one), its groups and the stride of its view along rg */
  bool ragged;
  int rg;
  int64_t groups, rgs;
} gemm_plan_t;

/* The element types the kernels read and write: f32, and f16 / bf16 (read
 * as f32, every product exact in f32; see "16-bit operands"); and the
 * integers of 8, 16 and 32 bits (GEMM_INT, "Integer operands" in
 * gemm_cpu.comp). */
bool codegen_kernel_float_type(hlo_element_type_t t) { return t == HLO_F32 || t == HLO_F16 || t == HLO_BF16; }
bool codegen_kernel_int_type(hlo_element_type_t t) {
  return t == HLO_S8 || t == HLO_U8 || t == HLO_S16 || t == HLO_U16 || t == HLO_S32 || t == HLO_U32;
}

bool codegen_gemm_types(const hlo_instruction_t *dot) {
  hlo_element_type_t rt = dot->shape.element_type;
  bool ragged = dot->opcode == HLO_OPCODE_CHLO_RAGGED_DOT;
  int operands = ragged ? 3 : 2; /* (lhs, rhs[, group_sizes]) */
  if (hlo_shape_is_tuple(&dot->shape) || dot->operand_count != operands) return false;
  if (codegen_kernel_int_type(rt) && !ragged) /* any integer operands: they wrap into the result's type */
    return codegen_kernel_int_type(dot->operands[0]->shape.element_type) && codegen_kernel_int_type(dot->operands[1]->shape.element_type);
  if (!codegen_kernel_float_type(rt)) return false;
  for (int k = 0; k < 2; k++) {
    hlo_element_type_t at = dot->operands[k]->shape.element_type;
    if (!codegen_kernel_float_type(at) || (at != rt && rt != HLO_F32)) return false;
  }
  return true;
}

/* The 2- and 4-bit integers are stored a byte per element holding the
 * value (include/vkhlo/vkhlo.h), so the kernels read them as the 8-bit
 * integers of the same signedness: int4 weights converted to a float
 * product, or widened into an int one, cost what int8 weights do.  (A
 * product of them in their own type wraps at their width: not a GEMM
 * kernel's, codegen_gemm_types.) */
static hlo_element_type_t byte_storage_type(hlo_element_type_t t) {
  return t == HLO_S2 || t == HLO_S4 ? HLO_S8 : t == HLO_U2 || t == HLO_U4 ? HLO_U8 : t;
}

/* Does convert from |from| to |to| keep every value, so that a dot reads
 * the converted operand as the unconverted one?  The same type; f16/bf16
 * to f32; an integer into a wider one that holds all of its values (the
 * integer kernels widen every operand to 32 bits by its own signedness);
 * an 8-bit integer into any float type, a 16-bit one into f32 (integer
 * weights of a float product: read as ints, made floats). */
static bool exact_convert(hlo_element_type_t from, hlo_element_type_t to) {
  if (from == to) return true;
  from = byte_storage_type(from);
  if (codegen_kernel_float_type(from)) return to == HLO_F32;
  if (!codegen_kernel_int_type(from)) return false;
  if (codegen_kernel_float_type(to)) {
    int fb = hlo_element_type_bit_width(from);
    return fb == 8 || (fb == 16 && to == HLO_F32);
  }
  if (!codegen_kernel_int_type(to)) return false;
  int fb = hlo_element_type_bit_width(from), tb = hlo_element_type_bit_width(to);
  if (hlo_element_type_is_unsigned_int(from)) return tb > fb || (tb == fb && hlo_element_type_is_unsigned_int(to));
  return tb >= fb && hlo_element_type_is_signed_int(to);
}

static bool is_dot(const hlo_instruction_t *x) {
  return x->opcode == HLO_OPCODE_DOT || x->opcode == HLO_OPCODE_DOT_GENERAL;
}

static void row_major(const hlo_shape_t *s, int64_t *stride) {
  int64_t st = 1;
  for (int d = s->rank - 1; d >= 0; d--) {
    stride[d] = st;
    st *= s->dimensions[d];
  }
}

static bool dense(const hlo_shape_t *s, const int64_t *stride) {
  int64_t st[HLO_MAX_RANK];
  row_major(s, st);
  for (int d = 0; d < s->rank; d++)
    if (s->dimensions[d] != 1 && st[d] != stride[d]) return false;
  return true;
}

/* The runs of a reshape from |is| to |os|: *i and *o the next input and
 * output dimensions; a unit output dimension is a run of its own (no input
 * dimensions), unit input dimensions are skipped, and a run is the fewest
 * dimensions of each whose sizes multiply to the same, [*i0, *i) ->
 * [*o0, *o).  1 for a run, 0 at the end, -1 where the shapes do not split
 * so (or have a dimension of size 0). */
static int reshape_run(const hlo_shape_t *is, const hlo_shape_t *os, int *i, int *o, int *i0, int *o0) {
  while (*i < is->rank && is->dimensions[*i] == 1) ++*i;
  *i0 = *i;
  *o0 = *o;
  if (*o < os->rank && os->dimensions[*o] == 1) {
    ++*o;
    return 1;
  }
  if (*i >= is->rank || *o >= os->rank) return *i >= is->rank && *o >= os->rank ? 0 : -1;
  int64_t pi = is->dimensions[(*i)++], po = os->dimensions[(*o)++];
  while (pi != po) {
    if (pi <= 0 || po <= 0) return -1;
    if (pi < po) {
      if (*i >= is->rank) return -1;
      pi *= is->dimensions[(*i)++];
    } else {
      if (*o >= os->rank) return -1;
      po *= os->dimensions[(*o)++];
    }
  }
  return pi > 0 ? 1 : -1;
}

/* Run [i0, i) -> [o0, o) of a reshape (reshape_run) of strides |stride|:
 * where the run's strides (unit dimensions aside) are one arithmetic
 * progression (zeros included; a run of no input dimensions too), the
 * output dimensions' strides continuing it into |out|, and true; else
 * false, |out| untouched, and |pair| the run's outer and inner non-unit
 * dimensions where it has exactly two (-1, -1 else). */
static bool run_strides(const hlo_shape_t *is, const int64_t *stride, int i0, int i, const hlo_shape_t *os, int o0,
                        int o, int64_t *out, int pair[2]) {
  int64_t st = 0, inner = 0; /* the run's innermost stride; the next one expected */
  int nonunit = 0;
  bool progression = true;
  pair[0] = pair[1] = -1;
  for (int d = i - 1; d >= i0; d--) {
    if (is->dimensions[d] == 1) continue;
    if (nonunit++ == 0) st = stride[d];
    else if (stride[d] != inner) progression = false;
    inner = stride[d] * is->dimensions[d];
    if (nonunit <= 2) pair[2 - nonunit] = d;
  }
  if (!progression) {
    if (nonunit != 2) pair[0] = pair[1] = -1;
    return false;
  }
  for (int d = o - 1; d >= o0; d--) {
    out[d] = os->dimensions[d] == 1 ? 0 : st;
    st *= os->dimensions[d];
  }
  return true;
}

/* The strides |out| of a reshape to |os| of a strided view (|is|,
 * |stride|): false unless each group of input dimensions that the reshape
 * merges (and splits again) is one arithmetic progression, as a transpose
 * of a dense array followed by a reshape that merges dimensions kept
 * together (attention's heads x head size back to the model width). */
static bool reshape_view(const hlo_shape_t *is, const gemm_view_t *in, const hlo_shape_t *os, gemm_view_t *v) {
  const int64_t *stride = in->stride;
  int64_t *out = v->stride;
  v->split_dim = -1;
  int i = 0, o = 0, i0, o0, r, pair[2];
  while ((r = reshape_run(is, os, &i, &o, &i0, &o0)) == 1) {
    if (in->split_dim >= i0 && in->split_dim < i) return false;
    if (run_strides(is, stride, i0, i, os, o0, o, out, pair)) continue;
    /* two input dimensions merged into one: a split dimension */
    int nonunit_out = 0;
    for (int d = o0; d < o; d++) nonunit_out += os->dimensions[d] != 1;
    if (pair[0] < 0 || nonunit_out != 1 || v->split_dim >= 0) return false;
    for (int d = o0; d < o; d++) {
      out[d] = 0;
      if (os->dimensions[d] != 1) {
        out[d] = stride[pair[1]];
        v->split_dim = d;
        v->split_inner = is->dimensions[pair[1]];
        v->split_stride = stride[pair[0]];
      }
    }
  }
  return r == 0;
}

/* Group-wise scales the kernels take: groups of a multiple of 8 steps of
 * k, so that each of gemm_cpu.comp's blocks of 8 steps lies in one group. */
static bool scale_groups_ok(int64_t group) { return group > 0 && group % 8 == 0; }

/* Does scale or zero point |q| of the rhs of |dot| stay the same along
 * the contracting dimensions, or change per group of k (the one
 * contracting dimension's) as the kernels take it? */
static bool qparam_fits_k(const hlo_instruction_t *dot, const gemm_qparam_t *q) {
  if (q->binding < 0) return true;
  const hlo_shape_t *rs = &dot->operands[1]->shape;
  const hlo_dims_t *rc = &dot->attrs.rhs_contracting_dimensions;
  bool legacy = dot->opcode == HLO_OPCODE_DOT; /* contracts the rhs's dimension 0 */
  int nc = legacy ? 1 : rc->count;
  bool grouped = false;
  for (int i = 0; i < nc; i++) {
    int64_t c = legacy ? 0 : rc->data[i];
    if (c < 0 || c >= rs->rank) return false;
    if (c == q->gdim) grouped = nc == 1 && scale_groups_ok(q->group);
    else if (rs->dimensions[c] != 1 && q->stride[c] != 0) return false;
  }
  return q->gdim < 0 || grouped;
}

/* Do the scale and zero point of rhs view |v| of |dot| fit the kernels: a
 * zero point only beside a scale, each the same along k or per group of
 * k, the two grouped alike where both are? */
static bool scale_fits_k(const hlo_instruction_t *dot, const gemm_view_t *v) {
  const gemm_qparam_t *s = &v->scale, *z = &v->zero;
  if (s->binding < 0) return z->binding < 0;
  if (s->gdim >= 0 && z->gdim >= 0 && (s->gdim != z->gdim || s->group != z->group)) return false;
  return qparam_fits_k(dot, s) && qparam_fits_k(dot, z);
}

/* Scale or zero point |in| through a reshape from |is| to |os| (into
 * |out|).  Each run of dimensions the reshape merges or splits keeps
 * strides that are one arithmetic progression (zeros included), as
 * reshape_view's; or, where its input dimensions are [A, G] with the
 * value changing along A only (stride gs) - one value per group of G
 * elements, [k / G, G] of grouped weights - the run becomes a group: its
 * innermost output dimension (a multiple of G long) grouped by G with
 * step gs, and each outer one the stride its elements' groups move by
 * ([k / G, G] -> k, or -> [S, k / S] where split-K splits k).  False
 * for a group reshaped again or any other run. */
static bool reshape_qparam(const hlo_shape_t *is, const gemm_qparam_t *in, const hlo_shape_t *os, gemm_qparam_t *out) {
  *out = *in;
  if (in->binding < 0) return true;
  if (in->gdim >= 0) return false;
  int i = 0, o = 0, i0, o0, r, pair[2];
  while ((r = reshape_run(is, os, &i, &o, &i0, &o0)) == 1) {
    if (run_strides(is, in->stride, i0, i, os, o0, o, out->stride, pair)) continue;
    /* [A, G], the value the same along G: a group */
    if (pair[0] < 0 || in->stride[pair[1]] != 0 || out->gdim >= 0) return false;
    int64_t g = is->dimensions[pair[1]], gs = in->stride[pair[0]];
    int64_t inner = 1; /* the product of the output dimensions inside d */
    for (int d = o - 1; d >= o0; d--) {
      out->stride[d] = 0;
      if (os->dimensions[d] == 1) continue;
      if (out->gdim < 0) { /* the innermost: the group */
        if (os->dimensions[d] % g != 0) return false;
        out->gdim = d;
        out->group = g;
        out->gstride = gs;
      } else {
        out->stride[d] = inner / g * gs;
      }
      inner *= os->dimensions[d];
    }
  }
  return r == 0;
}

static bool has_qparams(const gemm_view_t *v) { return v->scale.binding >= 0 || v->zero.binding >= 0; }

/* View |w| (a float value, no scale of its own) as a scale or zero point. */
static gemm_qparam_t qparam_of(const gemm_view_t *w) {
  gemm_qparam_t q = {.binding = w->binding, .type = w->type, .offset = w->offset, .gdim = -1};
  memcpy(q.stride, w->stride, sizeof q.stride);
  return q;
}

/* The value of integer scalar constant |x| (saturated to int64). */
static bool scalar_integer(const hlo_instruction_t *x, int64_t *out) {
  hlo_element_type_t t = x->shape.element_type;
  size_t n = hlo_element_type_size_bytes(t);
  if (x->opcode != HLO_OPCODE_CONSTANT || x->shape.rank != 0 || !x->literal || !x->literal->data ||
      !hlo_element_type_is_integer(t) || x->literal->size_bytes < n || (int)(8 * n) != hlo_element_type_bit_width(t))
    return false;
  uint64_t raw = 0;
  memcpy(&raw, x->literal->data, n); /* little-endian host bytes */
  if (hlo_element_type_is_unsigned_int(t)) *out = raw > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)raw;
  else *out = n == 8 ? (int64_t)raw : (int64_t)(raw << (64 - 8 * n)) >> (64 - 8 * n);
  return true;
}

/* |x| (inside |fc|, or operand |k| of a lone dot when fc is NULL) as a
 * strided view of a binding. */
static bool trace_view(const hlo_computation_t *fc, const hlo_instruction_t *x, int k, int depth,
                       gemm_view_t *v) {
  const hlo_shape_t *s = &x->shape;
  hlo_element_type_t xt = byte_storage_type(x->shape.element_type);
  if (!(codegen_kernel_float_type(xt) || codegen_kernel_int_type(xt)) || s->rank > HLO_MAX_RANK ||
      depth > 16)
    return false;
  if (!fc) {
    v->binding = k;
    v->type = xt;
    v->split_dim = -1;
    v->offset = 0;
    v->dyn_count = 0;
    v->scale = v->zero = no_qparam;
    v->qtype = HLO_F32;
    row_major(s, v->stride);
    return true;
  }
  gemm_view_t in;
  v->split_dim = -1;
  switch (x->opcode) {
    case HLO_OPCODE_PARAMETER:
      v->binding = (int)x->parameter_number;
      v->type = xt;
      v->offset = 0;
      v->dyn_count = 0;
      v->scale = v->zero = no_qparam;
      v->qtype = HLO_F32;
      row_major(s, v->stride);
      return true;
    case HLO_OPCODE_MULTIPLY: { /* integers times a scale: see "Scaled weights" */
      gemm_view_t w;
      if (!codegen_kernel_float_type(x->shape.element_type) || x->operand_count != 2 ||
          !trace_view(fc, x->operands[0], 0, depth + 1, &in) || !trace_view(fc, x->operands[1], 0, depth + 1, &w))
        return false;
      if (codegen_kernel_int_type(w.type)) { /* the integers first */
        gemm_view_t t = in;
        in = w;
        w = t;
      }
      if (!codegen_kernel_int_type(in.type) || !codegen_kernel_float_type(w.type) || in.scale.binding >= 0 ||
          has_qparams(&w) || w.split_dim >= 0 || w.dyn_count || (in.zero.binding >= 0 && in.qtype != x->shape.element_type))
        return false;
      *v = in;
      v->scale = qparam_of(&w);
      v->qtype = x->shape.element_type;
      return true;
    }
    case HLO_OPCODE_SUBTRACT: { /* integers minus a zero point: see "Scaled weights" */
      gemm_view_t w;
      if (!codegen_kernel_float_type(x->shape.element_type) || x->operand_count != 2 ||
          !trace_view(fc, x->operands[0], 0, depth + 1, &in) || !trace_view(fc, x->operands[1], 0, depth + 1, &w) ||
          !codegen_kernel_int_type(in.type) || has_qparams(&in) || has_qparams(&w) || w.split_dim >= 0 || w.dyn_count)
        return false;
      *v = in;
      v->zero = qparam_of(&w); /* a float, or integers exactly converted (their values) */
      v->qtype = x->shape.element_type;
      return true;
    }
    case HLO_OPCODE_CONVERT: /* exact only (exact_convert) */
      if (!exact_convert(x->operands[0]->shape.element_type, x->shape.element_type)) return false;
      return trace_view(fc, x->operands[0], 0, depth + 1, v);
    case HLO_OPCODE_TRANSPOSE:
      if (!trace_view(fc, x->operands[0], 0, depth + 1, &in) || x->attrs.permutation.count != s->rank) return false;
      *v = in;
      v->scale.gdim = v->zero.gdim = -1;
      for (int d = 0; d < s->rank; d++) {
        int64_t from = x->attrs.permutation.data[d];
        if (from < 0 || from >= s->rank) return false;
        v->stride[d] = in.stride[from];
        v->scale.stride[d] = in.scale.stride[from];
        v->zero.stride[d] = in.zero.stride[from];
        if (from == in.split_dim) v->split_dim = d;
        if (from == in.scale.gdim) v->scale.gdim = d;
        if (from == in.zero.gdim) v->zero.gdim = d;
      }
      return true;
    case HLO_OPCODE_BROADCAST_IN_DIM: {
      const hlo_shape_t *is = &x->operands[0]->shape;
      if (!trace_view(fc, x->operands[0], 0, depth + 1, &in) || x->attrs.broadcast_dimensions.count != is->rank ||
          in.split_dim >= 0 || has_qparams(&in))
        return false;
      *v = in;
      for (int d = 0; d < s->rank; d++) v->stride[d] = 0;
      for (int j = 0; j < is->rank; j++) {
        int64_t od = x->attrs.broadcast_dimensions.data[j];
        if (od < 0 || od >= s->rank) return false;
        v->stride[od] = is->dimensions[j] == 1 ? 0 : in.stride[j];
      }
      return true;
    }
    case HLO_OPCODE_RESHAPE:
      if (!trace_view(fc, x->operands[0], 0, depth + 1, &in)) return false;
      *v = in;
      v->split_dim = -1;
      if (!reshape_qparam(&x->operands[0]->shape, &in.scale, s, &v->scale) ||
          !reshape_qparam(&x->operands[0]->shape, &in.zero, s, &v->zero))
        return false;
      if (in.split_dim < 0 && dense(&x->operands[0]->shape, in.stride)) {
        row_major(s, v->stride);
        return true;
      }
      return reshape_view(&x->operands[0]->shape, &in, s, v);
    case HLO_OPCODE_SLICE: { /* the start moves the offset, the steps scale the strides */
      const hlo_shape_t *is = &x->operands[0]->shape;
      const hlo_attrs_t *a = &x->attrs;
      if (!trace_view(fc, x->operands[0], 0, depth + 1, &in) || a->start_indices.count != s->rank ||
          a->strides.count != s->rank || has_qparams(&in))
        return false;
      *v = in;
      for (int d = 0; d < s->rank; d++) {
        int64_t start = a->start_indices.data[d], step = a->strides.data[d];
        if (d == in.split_dim && (start != 0 || step != 1 || s->dimensions[d] != is->dimensions[d])) return false;
        v->offset += start * in.stride[d];
        v->stride[d] = in.stride[d] * step;
      }
      return true;
    }
    case HLO_OPCODE_DYNAMIC_SLICE: { /* the start (clamped, spec 'dynamic_slice') moves the offset */
      const hlo_shape_t *is = &x->operands[0]->shape;
      if (x->operand_count != 1 + is->rank || !trace_view(fc, x->operands[0], 0, depth + 1, &in) ||
          has_qparams(&in))
        return false;
      *v = in;
      for (int d = 0; d < s->rank; d++) {
        const hlo_instruction_t *start = x->operands[1 + d];
        int64_t hi = is->dimensions[d] - s->dimensions[d], c;
        if (hi == 0) continue; /* clamped to 0 whatever it is */
        if (d == in.split_dim || start->shape.rank != 0 || in.stride[d] == 0) return false;
        if (scalar_integer(start, &c)) {
          v->offset += (c < 0 ? 0 : c > hi ? hi : c) * in.stride[d];
        } else if (start->opcode == HLO_OPCODE_PARAMETER && hlo_element_type_is_integer(start->shape.element_type) &&
                   (hlo_element_type_size_bytes(start->shape.element_type) == 4 ||
                    hlo_element_type_size_bytes(start->shape.element_type) == 8) &&
                   v->dyn_count < HLO_MAX_RANK) {
          struct gemm_dyn *t = &v->dyn[v->dyn_count++];
          t->binding = (int)start->parameter_number;
          t->type = start->shape.element_type;
          t->hi = hi;
          t->stride = in.stride[d];
        } else {
          return false;
        }
      }
      return true;
    }
    default: return false;
  }
}

bool codegen_strided_view(const hlo_computation_t *fc, const hlo_instruction_t *x, int *binding, int64_t *stride) {
  gemm_view_t v;
  if (!fc || !trace_view(fc, x, 0, 0, &v) || v.split_dim >= 0 || v.offset != 0 || v.dyn_count ||
      !codegen_kernel_float_type(v.type))
    return false;
  *binding = v.binding;
  for (int d = 0; d < x->shape.rank; d++) stride[d] = v.stride[d];
  return true;
}

/* Merges dimensions |dims| (in order, outermost first) of a view into one
 * stride; false when they do not form one arithmetic progression. */
static bool merge(const hlo_shape_t *s, const int64_t *stride, const int64_t *dims, int n, int64_t *out) {
  int64_t st = -1, inner = 0;
  for (int i = n - 1; i >= 0; i--) {
    int64_t d = dims[i];
    if (s->dimensions[d] == 1) continue;
    if (st < 0) st = stride[d];
    else if (stride[d] != inner) return false;
    inner = stride[d] * s->dimensions[d];
  }
  *out = st < 0 ? 0 : st;
  return true;
}

/* True when every use of |x| in |fc| is an elementwise op over the dot's
 * dimensions, a reshape that only adds or drops 1s, or a root, so it is
 * only asked for at its own index (a row-major position shared by every
 * such shape). */
static bool own_index_only(const hlo_computation_t *fc, const hlo_instruction_t *x, const hlo_shape_t *dims,
                           int depth) {
  if (depth > 64) return false;
  for (int i = 0; i < fc->instruction_count; i++) {
    const hlo_instruction_t *u = fc->instructions[i];
    for (int k = 0; k < u->operand_count; k++) {
      if (u->operands[k] != x) continue;
      if (u->opcode == HLO_OPCODE_TUPLE && u == fc->root) continue;
      if (!(hlo_opcode_is_pointwise(u->opcode) || u->opcode == HLO_OPCODE_RESHAPE) ||
          !hlo_shape_dims_equal_but_ones(&u->shape, dims) || !own_index_only(fc, u, dims, depth + 1))
        return false;
    }
  }
  return true;
}

/* Ragged products.  chlo.ragged_dot in mode 1 (verifier.c: the lhs
 * ragged dimension a free one, the rhs with a group dimension) whose
 * ragged dimension is the lhs's only free dimension (jax.lax.ragged_dot's
 * [m, k] x [g, k, n], with batch dimensions or not), its group_sizes of
 * rank 1 and 32 or 64 bits, M < 2^30: gemm_cpu.comp's grouped product
 * ("Groups" there), which computes each row with its own group's rhs only,
 * where the expansion (codegen/expand.c) computes the product with every
 * group's.  Fills the plan's ragged fields; false where it does not fit. */
static bool plan_ragged(const hlo_instruction_t *dot, gemm_plan_t *p) {
  const hlo_attrs_t *a = &dot->attrs;
  const hlo_shape_t *ls = &dot->operands[0]->shape, *gs = &dot->operands[2]->shape;
  if (a->lhs_ragged_dimensions.count != 1 || a->rhs_group_dimensions.count != 1 || gs->rank != 1) return false;
  int64_t ragged = a->lhs_ragged_dimensions.data[0];
  if (ragged < 0 || ragged >= ls->rank || ls->rank != a->lhs_batching_dimensions.count + a->lhs_contracting_dimensions.count + 1 ||
      hlo_dims_contains(a->lhs_batching_dimensions, ragged) || hlo_dims_contains(a->lhs_contracting_dimensions, ragged))
    return false;
  size_t bytes = hlo_element_type_size_bytes(gs->element_type);
  if (!hlo_element_type_is_integer(gs->element_type) || (bytes != 4 && bytes != 8) || ls->dimensions[ragged] >= (1 << 30))
    return false;
  p->ragged = true;
  p->rg = (int)a->rhs_group_dimensions.data[0];
  p->groups = gs->dimensions[0];
  return true;
}

/* Is dimension |d| of operand |k| a ragged product's rhs group dimension
 * (neither batch, contracting nor free)? */
static bool group_dimension(const gemm_plan_t *p, int k, int d) { return k == 1 && p->ragged && d == p->rg; }

/* Can one kernel compute dots |a| and |b| (NDOT)?  The same lhs, result
 * and rhs shapes and types and dimension numbers: only the rhs differs. */
bool codegen_gemm_same_product(const hlo_instruction_t *a, const hlo_instruction_t *b) {
  if (!is_dot(a) || b->opcode != a->opcode || b->operand_count != 2 || a->operand_count != 2 ||
      b->operands[0] != a->operands[0] || !hlo_shape_compatible_dims(&b->shape, &a->shape) ||
      b->shape.element_type != a->shape.element_type ||
      b->operands[1]->shape.element_type != a->operands[1]->shape.element_type ||
      !hlo_shape_compatible_dims(&b->operands[1]->shape, &a->operands[1]->shape))
    return false;
  if (a->opcode != HLO_OPCODE_DOT_GENERAL) return true;
  const hlo_attrs_t *x = &a->attrs, *y = &b->attrs;
  const hlo_dims_t *pa[4] = {&x->lhs_batching_dimensions, &x->rhs_batching_dimensions, &x->lhs_contracting_dimensions,
                             &x->rhs_contracting_dimensions};
  const hlo_dims_t *pb[4] = {&y->lhs_batching_dimensions, &y->rhs_batching_dimensions, &y->lhs_contracting_dimensions,
                             &y->rhs_contracting_dimensions};
  for (int j = 0; j < 4; j++)
    if (pa[j]->count != pb[j]->count ||
        (pa[j]->count && memcmp(pa[j]->data, pb[j]->data, sizeof(int64_t) * (size_t)pa[j]->count) != 0))
      return false;
  return true;
}

static bool plan_gemm(const hlo_instruction_t *instr, gemm_plan_t *p) {
  memset(p, 0, sizeof *p);
  const hlo_instruction_t *dot = NULL;
  if (is_dot(instr)) {
    dot = instr;
  } else if (instr->opcode == HLO_OPCODE_CHLO_RAGGED_DOT && codegen_gemm_types(instr)) {
    if (!plan_ragged(instr, p)) return false;
    dot = instr;
  } else if (instr->opcode == HLO_OPCODE_FUSION && instr->called_count >= 1) {
    const hlo_computation_t *fc = instr->called_computations[0];
    for (int i = 0; i < fc->instruction_count; i++) {
      const hlo_instruction_t *x = fc->instructions[i];
      if (is_dot(x)) {
        if (p->ndot == GEMM_MAX_DOTS) return false;
        p->dots[p->ndot++] = x;
        dot = p->dots[0];
      } else if (!hlo_opcode_is_pointwise(x->opcode) && !el_is_data_movement(x->opcode) &&
                 x->opcode != HLO_OPCODE_PARAMETER && x->opcode != HLO_OPCODE_CONSTANT &&
                 x->opcode != HLO_OPCODE_TUPLE) {
        return false;
      }
    }
    if (!dot) return false;
    for (int d = 0; d < p->ndot; d++)
      if (!own_index_only(fc, p->dots[d], &dot->shape, 0) || !codegen_gemm_same_product(dot, p->dots[d])) return false;
    for (int r = 0; r < el_result_count(instr); r++)
      if (!hlo_shape_dims_equal_but_ones(el_result_shape(instr, r), &dot->shape)) return false;
    p->fc = fc;
  } else {
    return false;
  }
  p->dot = dot;
  if (p->ndot == 0) {
    p->ndot = 1;
    p->dots[0] = dot;
  }
  const hlo_shape_t *ls = &dot->operands[0]->shape, *rs = &dot->operands[1]->shape;
  /* The elemental dot converts each operand to the result type and
   * accumulates in f32 (f16/bf16 results rounded once at the end,
   * finish_acc in elemental.c); the kernels read operands as f32 and round
   * in the epilogue, the same values wherever that conversion is exact: an
   * operand of the result's type, or f16/bf16 into an f32 result. */
  if (!codegen_gemm_types(dot)) return false;
  if (dot->opcode == HLO_OPCODE_DOT) {
    if (ls->rank < 1 || ls->rank > 2 || rs->rank < 1 || rs->rank > 2) return false;
    p->nc = 1;
    p->lc[0] = ls->rank - 1;
    p->rc[0] = 0;
  } else {
    const hlo_attrs_t *a = &dot->attrs;
    p->nb = a->lhs_batching_dimensions.count;
    p->nc = a->lhs_contracting_dimensions.count;
    if (a->rhs_batching_dimensions.count != p->nb || a->rhs_contracting_dimensions.count != p->nc) return false;
    for (int i = 0; i < p->nb; i++) {
      p->lb[i] = a->lhs_batching_dimensions.data[i];
      p->rb[i] = a->rhs_batching_dimensions.data[i];
    }
    for (int i = 0; i < p->nc; i++) {
      p->lc[i] = a->lhs_contracting_dimensions.data[i];
      p->rc[i] = a->rhs_contracting_dimensions.data[i];
    }
  }
  for (int k = 0; k < 2; k++)
    if (!trace_view(p->fc, dot->operands[k], k, 0, &p->view[k])) return false;
  /* a split dimension: the lhs's one contracting dimension only (LHS_KOFF) */
  if (p->view[1].split_dim >= 0) return false;
  if (p->view[0].split_dim >= 0) {
    if (p->nc != 1 || p->lc[0] != p->view[0].split_dim) return false;
    p->lk_inner = p->view[0].split_inner;
    p->lk_outer = p->view[0].split_stride;
  }
  if (!merge(ls, p->view[0].stride, p->lc, p->nc, &p->lks) || !merge(rs, p->view[1].stride, p->rc, p->nc, &p->rks))
    return false;
  if (p->ragged) p->rgs = p->view[1].stride[p->rg];
  p->rview[0] = p->view[1];
  p->rks_of[0] = p->rks;
  for (int d = 1; d < p->ndot; d++)
    if (!trace_view(p->fc, p->dots[d]->operands[1], 1, 0, &p->rview[d]) || p->rview[d].split_dim >= 0 ||
        !merge(rs, p->rview[d].stride, p->rc, p->nc, &p->rks_of[d]))
      return false;
  /* scaled weights: rhs only, each scale the same at every k (per
   * column) or per group of k (the one contracting dimension's, groups a
   * multiple of 8 long), no ragged groups */
  if (has_qparams(&p->view[0])) return false;
  for (int d = 0; d < p->ndot; d++) {
    const gemm_view_t *v = &p->rview[d];
    if (!has_qparams(v)) continue;
    if (p->ragged || !scale_fits_k(p->dots[d], v)) return false;
  }
  p->batch = p->k = 1;
  for (int i = 0; i < p->nb; i++) p->batch *= ls->dimensions[p->lb[i]];
  for (int i = 0; i < p->nc; i++) p->k *= ls->dimensions[p->lc[i]];
  int64_t total = hlo_shape_element_count(&dot->shape);
  p->m = 1;
  for (int d = 0; d < ls->rank; d++) {
    bool used = false;
    for (int i = 0; i < p->nb; i++) used |= p->lb[i] == d;
    for (int i = 0; i < p->nc; i++) used |= p->lc[i] == d;
    if (!used) p->m *= ls->dimensions[d];
  }
  if (p->batch * p->m == 0 || total == 0 || p->k == 0) return false;
  p->n = total / (p->batch * p->m);
  return p->batch * p->m * p->n == total;
}

/* Appends the offset expression of the operand's dimensions |dims| (n of
 * them, row-major over their sizes) at linear index |var|.
 *
 * Unsigned division.  Every index here (and in the LHS_KOFF and word macros
 * below, and the tile arithmetic of gemm_cpu.comp) is non-negative, and the
 * divisions are unsigned or shifts: in this kernel lavapipe (Mesa 22.3,
 * LLVM 15) compiled the signed ones, `(m) / 79` and `(m) % 79` of
 * chess-9M's batch x sequence rows and the epilogue's `idx / 8`, to one
 * x86 idiv per lane (seen in the JIT code: 64 to 448 idiv per kernel;
 * 9% of chess-9M's CPU samples fell in that code).  The unsigned forms
 * compile to multiplies and shifts (no idiv left in any kernel of
 * chess-9M, BERT or ResNet-50); chess-9M 1.10-1.15x (README). */
static void append_offset(strbuf_t *sb, const hlo_shape_t *s, const int64_t *stride, const int64_t *dims, int n,
                          const char *var) {
  int64_t inner = 1;
  for (int i = n - 1; i >= 0; i--) {
    int64_t size = s->dimensions[dims[i]], st = stride[dims[i]];
    /* dimensions laid out one inside the next (a [33, 79, K] lhs read as
     * [2607, K]) make one term: no division per row (2607x256x256 with
     * the lhs as [33, 79, 256] on lavapipe: 3.15-3.26 ms against 3.23-3.36
     * in 6 alternating pairs; within the noise inside chess-9M) */
    while (i > 0 && size != 1 && st != 0 && stride[dims[i - 1]] == st * size) size *= s->dimensions[dims[--i]];
    if (size != 1 && st != 0) {
      strbuf_printf(sb, " + int(uint(%s)", var);
      if (inner != 1) strbuf_printf(sb, " / %lluu", (unsigned long long)inner);
      if (i != 0) strbuf_printf(sb, " %% %lluu", (unsigned long long)size);
      strbuf_printf(sb, ") * %lld", (long long)st);
    }
    inner *= size;
  }
}

/* #define NAME_AT(b, x) for operand |k|: its batch then free dimensions. */
static void define_at(strbuf_t *sb, const gemm_plan_t *p, int k, const gemm_view_t *view, const char *name,
                      const char *var) {
  const hlo_shape_t *s = &p->dot->operands[k]->shape;
  const int64_t *bd = k ? p->rb : p->lb, *cd = k ? p->rc : p->lc;
  int64_t free_dims[HLO_MAX_RANK];
  int nf = 0;
  for (int d = 0; d < s->rank; d++) {
    bool used = group_dimension(p, k, d);
    for (int i = 0; i < p->nb; i++) used |= bd[i] == d;
    for (int i = 0; i < p->nc; i++) used |= cd[i] == d;
    if (!used) free_dims[nf++] = d;
  }
  strbuf_printf(sb, "#define %s(b, %s) (%lld", name, var, (long long)view->offset);
  for (int i = 0; i < view->dyn_count; i++) { /* dynamic_slice starts */
    const struct gemm_dyn *t = &view->dyn[i];
    bool wide = hlo_element_type_size_bytes(t->type) == 8, is_signed = hlo_element_type_is_signed_int(t->type);
    const char *ct = is_signed ? (wide ? "int64_t" : "int") : (wide ? "uint64_t" : "uint");
    if (is_signed)
      strbuf_printf(sb, " + int(clamp(in%d.data[0], %s(0), %s(%lld))) * %lld", t->binding, ct, ct, (long long)t->hi,
                    (long long)t->stride);
    else
      strbuf_printf(sb, " + int(min(in%d.data[0], %s(%lld))) * %lld", t->binding, ct, (long long)t->hi,
                    (long long)t->stride);
  }
  append_offset(sb, s, view->stride, bd, p->nb, "b");
  append_offset(sb, s, view->stride, free_dims, nf, var);
  strbuf_append(sb, ")\n");
}

/* Whether operand |k| can be read in 64-bit words of 8 floats (see "Words"
 * in gemm_cpu.comp): the lhs along k (k stride 1), the rhs along n (its
 * innermost free dimension of stride 1), every other stride a multiple of
 * 8, so each word starts at a multiple of 8. */
/* Can operand |k| be read in 64-bit words: along n for the rhs (k == 1,
 * !along_k), along k for the lhs or, with |along_k|, the rhs (stride 1
 * and K % 8 == 0, every other stride a multiple of 8)? */
static bool words_ok(const gemm_plan_t *p, int k, const gemm_view_t *view, int64_t ks, bool along_k) {
  const hlo_shape_t *s = &p->dot->operands[k]->shape;
  const int64_t *bd = k ? p->rb : p->lb, *cd = k ? p->rc : p->lc, *st = view->stride;
  if (view->offset % 8 != 0) return false;
  for (int i = 0; i < view->dyn_count; i++)
    if (view->dyn[i].stride % 8 != 0) return false;
  int inner = -1; /* the innermost free dimension of size > 1 */
  for (int d = 0; d < s->rank; d++) {
    bool used = group_dimension(p, k, d);
    for (int i = 0; i < p->nb; i++) used |= bd[i] == d;
    for (int i = 0; i < p->nc; i++) used |= cd[i] == d;
    if (!used && s->dimensions[d] > 1) inner = d;
  }
  for (int d = 0; d < s->rank; d++) {
    bool contracting = false;
    for (int i = 0; i < p->nc; i++) contracting |= cd[i] == d;
    if (s->dimensions[d] == 1 || contracting) continue;
    if (k == 1 && d == inner && !along_k) {
      if (st[d] != 1 || s->dimensions[d] % 8 != 0) return false;
    } else if (st[d] % 8 != 0) {
      return false;
    }
  }
  if (k == 0 && p->lk_inner) return ks == 1 && p->lk_inner % 8 == 0 && p->lk_outer % 8 == 0;
  if (k == 0 || along_k) return ks == 1 && p->k % 8 == 0;
  return inner >= 0 && ks % 8 == 0;
}

/* ------------------------------------------------------------ epilogue */

typedef struct epi_ctx {
  const gemm_plan_t *plan;
  /* bit k: the epilogue reads f32 operand k element by element through
   * in<k>_at (an R32UI texel view on the CPU kernel: one gather per load
   * where a storage buffer costs lavapipe a loop over the lanes) */
  uint64_t element_reads;
  /* While gemm_values is emitted (stored 8 at a time; NULL otherwise) the
   * root's index: bit k of |word_reads|, f32 operand k is read at the
   * output's own position (same dimensions, that index), so
   * gemm_epilogue8 loads its 8 values as one word and passes them to
   * gemm_values as gemm_p<k>.  The same where the operand is read at the
   * output's trailing dimensions' index (a bias [N] broadcast along the
   * rows, a position table [S, N] along the batch): its word is then
   * (idx >> 3) % word_period[k] (the operand's words; 0: own position). */
  const el_name_t *root;
  const hlo_shape_t *out_shape;
  uint64_t word_reads;
  int64_t word_period[64];
} epi_ctx_t;

/* True when |index| is the output's index |ctx->root| over its trailing
 * s->rank dimensions, of the same sizes: the read is at position idx % P
 * (P the operand's elements), so where P is a multiple of 8 the 8
 * outputs from a multiple of 8 read 8 consecutive elements from a
 * multiple of 8, the word (idx >> 3) % *period (P / 8; 0 when s covers
 * every dimension: the output's own position idx). */
static bool trailing_position(const epi_ctx_t *ctx, const hlo_shape_t *s, const el_name_t *index, int64_t *period) {
  const hlo_shape_t *o = ctx->out_shape;
  if (!ctx->root || s->rank < 1 || s->rank > o->rank) return false;
  int lead = o->rank - s->rank;
  for (int i = 0; i < s->rank; i++)
    if (s->dimensions[i] != o->dimensions[lead + i] || strcmp(index[i].s, ctx->root[lead + i].s) != 0) return false;
  int64_t count = hlo_shape_element_count(s);
  if (lead && count % 8 != 0) return false;
  *period = lead ? count / 8 : 0;
  return true;
}

/* The product |x| is, or -1. */
static int dot_number(const gemm_plan_t *p, const hlo_instruction_t *x) {
  for (int d = 0; d < p->ndot; d++)
    if (p->dots[d] == x) return d;
  return -1;
}

static vkhlo_status_t epi_operand(elemental_emitter_t *E, const hlo_instruction_t *instr, int k,
                                  const el_name_t *index, el_name_t *out) {
  epi_ctx_t *ctx = E->user;
  const hlo_instruction_t *x = instr->operands[k];
  int d = dot_number(ctx->plan, x);
  if (d >= 0) {
    snprintf(out->s, sizeof out->s, "gemm_v%d", d);
    return NULL;
  }
  if (x->opcode == HLO_OPCODE_PARAMETER) {
    const hlo_shape_t *s = &x->shape;
    strbuf_t ref;
    strbuf_init(&ref, E->allocator);
    if (hlo_shape_element_count(s) == 1) strbuf_append(&ref, "0");
    else el_append_linear(&ref, s, index);
    int pn = (int)x->parameter_number;
    int64_t period = 0;
    vkhlo_status_t st = NULL;
    if (ref.failed) {
      st = VKHLO_NO_MEMORY();
    } else if (s->element_type == HLO_F32 && !glsl_type_is_packed(E->target, HLO_F32) && pn < 64 &&
               hlo_shape_element_count(s) > 1 && trailing_position(ctx, s, index, &period) &&
               (!(ctx->word_reads >> pn & 1) || ctx->word_period[pn] == period)) {
      ctx->word_reads |= 1ull << pn;
      ctx->word_period[pn] = period;
      snprintf(out->s, sizeof out->s, "gemm_p%d", pn);
    } else {
      st = codegen_load_element_at(E, x, s->element_type, pn, ref.data ? ref.data : "0", &ctx->element_reads, out);
    }
    strbuf_free(&ref);
    return st;
  }
  if (x->opcode == HLO_OPCODE_CONSTANT) {
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
  return el_emit(E, x, index, out);
}

/* Result |r|'s value |v| at idx, emitted for |x|: stored into out<r>, or
 * with |values| passed out as gemm_r<r>. */
static void emit_result(elemental_emitter_t *E, const hlo_instruction_t *instr, const hlo_instruction_t *x, int r,
                        const char *v, bool values) {
  strbuf_t line;
  strbuf_init(&line, E->allocator);
  char buffer[16];
  snprintf(buffer, sizeof buffer, "out%d", r);
  if (values) strbuf_printf(&line, "gemm_r%d = %s;", r, v);
  else glsl_append_store_element(&line, E->target, el_result_shape(instr, r)->element_type, buffer, "idx", v);
  if (line.failed) E->body.failed = true;
  else el_line(E, x, "%s", line.data);
  strbuf_free(&line);
}

/* The body of gemm_epilogue(int idx, float v) into E->body: every root's
 * value at output position idx, stored; with |values|, the body of
 * gemm_values instead: result r's value into gemm_r<r> (f32 results,
 * stored 8 at a time by gemm_epilogue8). */
static vkhlo_status_t emit_epilogue(elemental_emitter_t *E, const gemm_plan_t *p, const hlo_instruction_t *instr,
                                    bool values) {
  const hlo_shape_t *s0 = el_result_shape(instr, 0);
  int nout = el_result_count(instr);
  if (!p->fc) {
    emit_result(E, instr, instr, 0, "gemm_v0", values);
    return NULL;
  }
  el_name_t index[HLO_MAX_RANK];
  el_delinearize(E, instr, s0, "idx", index);
  epi_ctx_t *ctx = E->user;
  ctx->root = values ? index : NULL;
  ctx->out_shape = s0;
  const hlo_instruction_t *roots[EL_MAX_RESULTS];
  int nroots = 1;
  roots[0] = p->fc->root;
  if (p->fc->root->opcode == HLO_OPCODE_TUPLE) {
    nroots = p->fc->root->operand_count;
    if (nroots > EL_MAX_RESULTS) return el_unimplemented(instr, "fusion with %d roots", nroots);
    for (int i = 0; i < nroots; i++) roots[i] = p->fc->root->operands[i];
  }
  int r = 0;
  for (int i = 0; i < nroots; i++) {
    el_name_t vals[EL_MAX_RESULTS];
    if (dot_number(p, roots[i]) >= 0) snprintf(vals[0].s, sizeof vals[0].s, "gemm_v%d", dot_number(p, roots[i]));
    else if (roots[i]->opcode == HLO_OPCODE_PARAMETER || roots[i]->opcode == HLO_OPCODE_CONSTANT) {
      /* a root that is a parameter: through the operand callback of a tuple */
      int k = -1;
      for (int j = 0; j < p->fc->root->operand_count; j++)
        if (p->fc->root->operands[j] == roots[i]) k = j;
      if (k < 0) return el_unimplemented(instr, "fusion whose root is a parameter");
      VKHLO_RETURN_IF_ERROR(epi_operand(E, p->fc->root, k, index, vals));
    } else {
      VKHLO_RETURN_IF_ERROR(el_emit(E, roots[i], index, vals));
    }
    for (int j = 0; j < el_result_count(roots[i]) && r < nout; j++, r++)
      emit_result(E, instr, roots[i], r, vals[j].s, values);
  }
  ctx->root = NULL;
  if (r != nout) return VKHLO_INTERNAL("fusion %s: %d outputs for %d results", instr->name, r, nout);
  return NULL;
}

/* gemm_epilogue8(idx, a0, b0[, a1, b1, ..]): the 8 outputs from idx (a
 * multiple of 8) of every result, product d's accumulators in the vec4s
 * (ivec4s for GEMM_INT: |acc|) a<d> (columns 0-3) and b<d> (4-7), through
 * gemm_values, stored as one word per result: a u64vec4 of 8 floats or
 * 32-bit integers, a u64vec2 of 8 f16/bf16. */
static void append_epilogue8(strbuf_t *sb, const codegen_target_t *target, const hlo_instruction_t *instr, int ndot,
                             const char *acc, int nres, uint64_t word_reads, const int64_t *word_period) {
  strbuf_append(sb, "void gemm_epilogue8(int idx");
  for (int d = 0; d < ndot; d++) strbuf_printf(sb, ", %s gemm_a%d, %s gemm_b%d", acc, d, acc, d);
  strbuf_append(sb, ") {\n");
  for (int r = 0; r < nres; r++)
    strbuf_printf(sb, "  %s r%d[8];\n", glsl_compute_type_on(target, el_result_shape(instr, r)->element_type), r);
  for (int k = 0; k < 64; k++) {
    if (!(word_reads >> k & 1)) continue;
    if (word_period[k])
      strbuf_printf(sb, "  u64vec4 p%d = in%dw_at(int(uint(idx >> 3) %% %lluu));\n", k, k,
                    (unsigned long long)word_period[k]);
    else
      strbuf_printf(sb, "  u64vec4 p%d = in%dw_at(idx >> 3);\n", k, k);
  }
  for (int j = 0; j < 8; j++) {
    strbuf_printf(sb, "  gemm_values(idx + %d", j);
    for (int d = 0; d < ndot; d++) strbuf_printf(sb, ", gemm_%c%d.%c", j < 4 ? 'a' : 'b', d, "xyzw"[j % 4]);
    for (int k = 0; k < 64; k++)
      if (word_reads >> k & 1)
        strbuf_printf(sb, ", uintBitsToFloat(unpackUint2x32(p%d.%c).%c)", k, "xyzw"[j / 2], "xy"[j % 2]);
    for (int r = 0; r < nres; r++) strbuf_printf(sb, ", r%d[%d]", r, j);
    strbuf_append(sb, ");\n");
  }
  for (int r = 0; r < nres; r++) {
    hlo_element_type_t rt = el_result_shape(instr, r)->element_type;
    if (rt == HLO_F32) {
      strbuf_printf(sb, "  out%dw.data[idx >> 3] = u64vec4(", r);
      for (int w = 0; w < 4; w++)
        strbuf_printf(sb, "%spackUint2x32(floatBitsToUint(vec2(r%d[%d], r%d[%d])))", w ? ", " : "", r, 2 * w, r,
                      2 * w + 1);
    } else if (rt == HLO_S32 || rt == HLO_U32) {
      strbuf_printf(sb, "  out%dw.data[idx >> 3] = u64vec4(", r);
      for (int w = 0; w < 4; w++)
        strbuf_printf(sb, "%spackUint2x32(uvec2(r%d[%d], r%d[%d]))", w ? ", " : "", r, 2 * w, r, 2 * w + 1);
    } else { /* 8 values already of the 16-bit type: 16 bytes, each conversion exact */
      strbuf_printf(sb, "  out%dw.data[idx >> 3] = u64vec2(", r);
      for (int w = 0; w < 2; w++) {
        strbuf_printf(sb, "%spackUint2x32(uvec2(", w ? ", " : "");
        for (int h = 0; h < 2; h++) {
          int j = 4 * w + 2 * h;
          if (rt == HLO_F16) strbuf_printf(sb, "%spackHalf2x16(vec2(r%d[%d], r%d[%d]))", h ? ", " : "", r, j, r, j + 1);
          else
            strbuf_printf(sb, "%s(floatBitsToUint(r%d[%d]) >> 16) | (floatBitsToUint(r%d[%d]) & 0xFFFF0000u)",
                          h ? ", " : "", r, j, r, j + 1);
        }
        strbuf_append(sb, "))");
      }
    }
    strbuf_append(sb, ");\n");
  }
  strbuf_append(sb, "}\n");
}

/* ---------------------------------------------------------------- kernel */

static void declare_buffer(strbuf_t *sb, int binding, const char *qualifier, const char *storage, const char *name) {
  strbuf_printf(sb, "layout(std430, set = 0, binding = %d) %sbuffer Buffer%d { %s data[]; } %s;\n", binding, qualifier,
                binding, storage, name);
}

/* The kernel text after its #version line. */
static const char *after_version(const char *text) {
  const char *nl = strchr(text, '\n');
  return nl ? nl + 1 : text;
}

/* The tiling of gemm_cpu.comp for one product. */
typedef struct cpu_tiles {
  int tm, tn; /* register tile of one invocation */
  int wg;     /* invocations per workgroup */
  int sg;     /* subgroup size when the lhs is shared by subgroup shuffles, else 0 */
  int sgr;    /* tiles of TM rows down the workgroup (subgroups with sg) */
  int kb;     /* k steps between the workgroup's barriers (0: none) */
  bool rhs_k_words; /* the rhs read in words along k (RHS_LOADWK) */
} cpu_tiles_t;

/* Rows a product of |m| rows computes in workgroups of |sgr| tiles of |tm|
 * rows (the last one's rows past M cost as much as real ones). */
static int64_t rows_computed(int64_t m, int tm, int sgr) {
  return (int64_t)align_up((uint64_t)m, (uint64_t)tm * (uint64_t)sgr);
}

/* Columns that whole subgroups of |sgs| lanes of |tn| columns each
 * compute to cover |n| (those past N cost as much as real ones). */
static int64_t covered_columns(int64_t n, int tn, uint32_t sgs) {
  int64_t lanes = (n + tn - 1) / tn;
  return (int64_t)align_up((uint64_t)lanes, sgs) * tn;
}

/* |words| as in codegen_emit_gemm (words[1] is cleared when the tile is too
 * narrow for them); |rhs_k_words|: the rhs could be read in words along k
 * instead (attention's q k^T: k^T has n stride 32 and k stride 1), which
 * the subgroup path takes when words[1] is false. */
/* The tuning key's operand types into |buf|: nothing for f32 operands
 * (the keys of earlier tuning files), else " t=" and the lhs, rhs types. */
static const char *type_suffix(const gemm_plan_t *p, char *buf, size_t size) {
  hlo_element_type_t a = p->view[0].type, b = p->view[1].type;
  if (a == HLO_F32 && b == HLO_F32) return "";
  snprintf(buf, size, " t=%s,%s%s", hlo_element_type_name(a), hlo_element_type_name(b),
           p->view[1].scale.binding >= 0 ? " scaled" : "");
  return buf;
}

static void choose_cpu_tiles(const gemm_plan_t *p, const codegen_target_t *target, bool words[2], bool rhs_k_words,
                             cpu_tiles_t *c, codegen_kernel_t *out) {
  memset(c, 0, sizeof *c);
  char types[32];
  c->sgr = 1;
  uint32_t sgs = target->subgroup_size;
  int64_t maxwg = target->max_workgroup_invocations ? target->max_workgroup_invocations : 128;
  if ((words[0] || p->k % 8 == 0) && (words[1] || rhs_k_words) && target->subgroup_shuffle &&
      (sgs == 4 || sgs == 8 || sgs == 16) && p->m >= 16 && maxwg >= (int64_t)sgs) {
    c->sg = (int)sgs;
    c->tm = p->ndot == 2 ? GEMM_CPU_SG_TM : GEMM_CPU_SG_TM / 2;
    c->rhs_k_words = !words[1];
    /* words along k: any TN; 4 for narrow products (N <= 120: fewer than
     * 16 groups of 8 columns) where whole subgroups of 4 columns cover
     * fewer columns past N than of 8 (N = 79 on 8 lanes: 24 lanes of 4
     * columns, 96, instead of 16 of 8, 128), else 8.  Measured on
     * lavapipe, scores q k^T with heads of 32: 264 x 79x79 at 512 bits
     * (16 lanes, 128 columns both ways) 8.2 -> 4.5 ms with 8 columns
     * (bench_kernels attn_scores); 264 x 64x64 at 256 bits (64 both ways)
     * 3.0-4.1 -> 1.9-2.6 ms; 64 x 200x200 at 256 bits, 8 columns against
     * 4 (256 columns against 224): 5.4 against 12-13 ms, hence narrow
     * only. */
    c->tn = c->rhs_k_words && (p->n + 7) / 8 < 16 && covered_columns(p->n, 4, sgs) < covered_columns(p->n, 8, sgs)
                ? 4
                : 8;
    /* a tuning candidate (rows; 0 columns: the default's), else
     * $VKHLO_GEMM_TILE (measurements), else a tuned choice: rows a power
     * of two up to 64, columns 4 (words along k only), 8 or 16 */
    static const int rows[][2] = {{8, 0}, {16, 0}, {32, 0}};
    snprintf(out->tune_key, sizeof out->tune_key, "gemm_cpu sg b=%lld m=%lld n=%lld k=%lld ndot=%d w=%d%d%d%s",
             (long long)p->batch, (long long)p->m, (long long)p->n, (long long)p->k, p->ndot, words[0], words[1],
             rhs_k_words, type_suffix(p, types, sizeof types));
    out->tune_candidates = 3;
#define TILE_OK(m, n) \
  ((m) >= 1 && (m) <= 64 && ((m) & ((m) - 1)) == 0 && ((n) == 8 || (n) == 16 || ((n) == 4 && c->rhs_k_words)))
    bool knob = TILE_OK(target->gemm_tile_m, target->gemm_tile_n);
    int om, on;
    if (codegen_tile_request(target, out->tune_key, rows, 3, c->tm, c->tn, knob ? target->gemm_tile_m : 0,
                             knob ? target->gemm_tile_n : 0, &om, &on) &&
        TILE_OK(om, on)) {
      c->tm = om;
      c->tn = on;
    }
#undef TILE_OK
    out->tune_a = c->tm;
    out->tune_b = c->tn;
    while (c->tm / 2 >= p->m) c->tm /= 2;
    int64_t across = (p->n + c->tn - 1) / c->tn;
    across = (int64_t)align_up((uint64_t)across, (uint64_t)c->sg);
    if (across > GEMM_CPU_SG_ACROSS) across = GEMM_CPU_SG_ACROSS > c->sg ? GEMM_CPU_SG_ACROSS : c->sg;
    c->sgr = GEMM_CPU_SG_ROWS;
    while (c->sgr > 1 && (int64_t)(c->sgr / 2) * c->tm >= p->m) c->sgr /= 2;
    /* rows computed past M (the last tile's, shifted back) cost as much as
     * real ones: fewer subgroups down, then half the rows, while more than
     * a tenth are wasted (M = 79: 128 rows -> 80) */
    while (c->sgr > 1 && rows_computed(p->m, c->tm, c->sgr) * 10 > p->m * 11) c->sgr /= 2;
    if (rows_computed(p->m, c->tm, c->sgr) * 10 > p->m * 11 && c->tm > 8 &&
        rows_computed(p->m, c->tm / 2, c->sgr) < rows_computed(p->m, c->tm, c->sgr))
      c->tm /= 2;
    while (c->sgr > 1 && across * c->sgr > maxwg) c->sgr /= 2;
    while (across > c->sg && across * c->sgr > maxwg) across /= 2;
    c->wg = (int)(across * c->sgr);
    c->kb = c->sgr * across > c->sg ? GEMM_CPU_SG_KB : 0;
    return;
  }
  c->tm = p->ndot > 1 ? GEMM_CPU_TM / 2 : GEMM_CPU_TM;
  /* skinny products (M <= 8: decode, GEMV) take 8 columns: `vkhlo tune`
   * on lavapipe chose 8 over 16 for every such shape it timed, 1.25-3x
   * (M K N = 1 4096 4096: 3.0x, 1 4096 1024: 2.6x, 1 1024 4096: 1.25x,
   * 8 4096 4096: 1.45x, 4 1024 1024: 1.5x; 1 1024 256 and 1 256 1024
   * within noise) */
  c->tn = p->m <= 8 ? GEMM_CPU_TN / 2 : GEMM_CPU_TN;
  /* a tuning candidate or a tuned choice: rows a power of two up to 32,
   * columns 8, 16 or 32 (before the shrinking below) */
  static const int tiles[][2] = {{8, 16}, {16, 16}, {16, 8}, {16, 32}};
  snprintf(out->tune_key, sizeof out->tune_key, "gemm_cpu b=%lld m=%lld n=%lld k=%lld ndot=%d w=%d%d%s",
           (long long)p->batch, (long long)p->m, (long long)p->n, (long long)p->k, p->ndot, words[0], words[1],
           type_suffix(p, types, sizeof types));
  out->tune_candidates = 4;
  int om, on;
  if (codegen_tile_request(target, out->tune_key, tiles, 4, c->tm, c->tn, 0, 0, &om, &on) && om >= 1 && om <= 32 &&
      (om & (om - 1)) == 0 && (on == 8 || on == 16 || on == 32)) {
    c->tm = om;
    c->tn = on;
  }
  out->tune_a = c->tm;
  out->tune_b = c->tn;
  while (c->tm > 1 && c->tm / 2 >= p->m) c->tm /= 2;
  int64_t across = (p->n + c->tn - 1) / c->tn;
  if (words[1] && across < 8 && p->m >= 16) {
    /* narrow products with the rhs in words (attention's probabilities x
     * values, N = 32) keep 8 or 16 columns per invocation, so the rhs
     * stays in words and the stores go out by words, and fill a SIMD
     * group of 8 with GEMM_SGR tiles of rows down the workgroup instead:
     * 264 x 79x32x79 as chess-9M reads it (rhs rows 256 apart) from
     * 14.2-15.4 to 9.1-9.8 ms on lavapipe */
    c->tn = p->n <= 8 ? 8 : c->tn >= 16 ? 16 : c->tn;
    across = (p->n + c->tn - 1) / c->tn;
    c->sgr = (int)(8 / across);
    while (c->sgr > 1 && (int64_t)(c->sgr / 2) * c->tm >= p->m) c->sgr /= 2;
    while (c->tm > 8 && rows_computed(p->m, c->tm, c->sgr) * 10 > p->m * 11 &&
           rows_computed(p->m, c->tm / 2, c->sgr) < rows_computed(p->m, c->tm, c->sgr))
      c->tm /= 2;
    c->wg = (int)(across * c->sgr);
    return;
  }
  while (c->tn > 4 && (p->n + c->tn - 1) / c->tn < 16) c->tn /= 2;
  if (c->tn % 8 != 0) words[1] = false;
  int64_t wg = (p->n + c->tn - 1) / c->tn;
  c->wg = (int)(wg >= 64 ? 64 : (wg + 7) / 8 * 8);
}

static bool is_16bit(hlo_element_type_t t) { return hlo_element_type_bit_width(t) == 16; }

/* The word type a binding of element type |t| is read in: 8 elements of
 * 32 bits (u64vec4), 8 of 16 bits (u64vec2), or 16 of 8 bits (u64vec2,
 * one RGBA32UI texel; see GEMM_WORDS8 in gemm_cpu.comp). */
static const char *word_type(hlo_element_type_t t) { return hlo_element_type_bit_width(t) == 32 ? "u64vec4" : "u64vec2"; }

/* #define NAME(off): the value of the view's element at off, a float (an
 * int for GEMM_INT): through in<k>_at for f32, an R32UI texel view on CPU
 * devices; the element load of glsl_append_load_element, the elemental
 * path's, for the other types. */
static void define_load(strbuf_t *sb, const codegen_target_t *target, const char *name, const gemm_view_t *v,
                        bool float_product) {
  strbuf_printf(sb, "#define %s(off) ", name);
  if (v->type == HLO_F32) {
    strbuf_printf(sb, "in%d_at(off)\n", v->binding);
    return;
  }
  char buffer[16];
  snprintf(buffer, sizeof buffer, "in%d", v->binding);
  /* integers as ints (GEMM_INT), or as floats for a float product */
  bool integer = codegen_kernel_int_type(v->type);
  if (integer) strbuf_append(sb, float_product ? "float(int(" : "int(");
  glsl_append_load_element(sb, target, v->type, buffer, "(off)");
  strbuf_append(sb, !integer ? "\n" : float_product ? "))\n" : ")\n");
}

/* #define NAME(off): the word of 8 elements from off (a multiple of 8) as
 * the u64vec4 of 8 32-bit values gemm_cpu.comp reads (f32, or ints for
 * GEMM_INT); 16-bit elements come as a u64vec2 word (in<k>w_at) widened
 * by gemm_<type>x8, 8-bit ones as half of a u64vec2 word of 16; integers
 * that a float product reads are then made floats (gemm_i2f8). */
static void define_word_load(strbuf_t *sb, const char *name, const gemm_view_t *v, bool float_product) {
  hlo_element_type_t t = v->type;
  int bits = hlo_element_type_bit_width(t);
  bool to_float = float_product && codegen_kernel_int_type(t);
  strbuf_printf(sb, "#define %s(off) %s", name, to_float ? "gemm_i2f8(" : "");
  if (bits == 32)
    strbuf_printf(sb, "in%dw_at((off) >> 3)", v->binding);
  else if (bits == 16)
    strbuf_printf(sb, "gemm_%sx8(in%dw_at((off) >> 3))",
                  t == HLO_F16 ? "f16" : t == HLO_BF16 ? "bf16" : t == HLO_S16 ? "s16" : "u16", v->binding);
  else
    strbuf_printf(sb, "gemm_%s8x8(GEMM_HALF8(in%dw_at((off) >> 4), off))", t == HLO_S8 ? "s" : "u", v->binding);
  strbuf_append(sb, to_float ? ")\n" : "\n");
}

/* A ragged product's group sizes (operand 2, binding 2: 32- or 64-bit
 * integers) as words, and gemm_group_size(g): group g's size clamped to
 * [0, 2^30] (rows are fewer than 2^30, plan_ragged; a negative size, which
 * no program the spec defines has, counts as 0). */
static void append_group_size(strbuf_t *sb, const hlo_shape_t *gs) {
  bool is_signed = !hlo_element_type_is_unsigned_int(gs->element_type);
  strbuf_append(sb, "layout(std430, set = 0, binding = 2) readonly buffer BufferGroups { uint data[]; } gsz;\n"
                    "int gemm_group_size(int g) {\n");
  if (hlo_element_type_size_bytes(gs->element_type) == 4) {
    strbuf_append(sb, is_signed ? "  return clamp(int(gsz.data[g]), 0, 0x40000000);\n}\n"
                                : "  return int(min(gsz.data[g], 0x40000000u));\n}\n");
    return;
  }
  strbuf_append(sb, "  uint lo = gsz.data[2 * g], hi = gsz.data[2 * g + 1];\n");
  if (is_signed)
    strbuf_append(sb, "  if (int(hi) < 0) return 0;\n");
  strbuf_append(sb, "  return hi != 0u ? 0x40000000 : int(min(lo, 0x40000000u));\n}\n");
}

/* False where |v| is read in halves of 16-byte words (8-bit elements) and
 * its binding, operand v->binding of |instr|, ends inside one. */
static bool whole_words(const hlo_instruction_t *instr, const gemm_view_t *v) {
  if (hlo_element_type_bit_width(v->type) != 8) return true;
  return v->binding >= 0 && v->binding < instr->operand_count &&
         hlo_shape_size_bytes(&instr->operands[v->binding]->shape) % 16 == 0;
}

/* 8-bit integer products summed in f32.  Where every operand is 8-bit
 * integers, each product's magnitude is at most 2^14 (i8 x i8), 2^15
 * (i8 x ui8) or 255^2 < 2^16 (ui8 x ui8), so with K times that at most
 * 2^24 every partial sum is an integer f32 holds exactly, in any order:
 * the f32 kernels' sum, made an int in the epilogue, is the integer
 * sum.  On CPU devices f32 products are vector multiply-adds where int
 * ones are slow multiplies (x86 vpmulld), and the operands are widened
 * to f32 the way integer weights of float products are (gemm_i2f8). */
static bool int_sums_exact_in_f32(const gemm_plan_t *p) {
  if (!codegen_kernel_int_type(p->dot->shape.element_type)) return false;
  int64_t bound[2] = {0, 0};
  for (int v = -1; v < p->ndot; v++) {
    hlo_element_type_t t = v < 0 ? p->view[0].type : p->rview[v].type;
    int64_t m = t == HLO_S8 ? 128 : t == HLO_U8 ? 255 : 0;
    if (m == 0) return false;
    int side = v < 0 ? 0 : 1;
    if (m > bound[side]) bound[side] = m;
  }
  return p->k <= ((int64_t)1 << 24) / (bound[0] * bound[1]);
}

/* Whether a GEMM kernel computes |instr| on |target|, and its plan. */
static bool gemm_takes(const codegen_target_t *target, const hlo_instruction_t *instr, gemm_plan_t *p) {
  if (target->gemm == CODEGEN_GEMM_OFF || !plan_gemm(instr, p)) return false;
  /* 16-bit operands where the device stores them natively (not packed two
   * to a 32-bit word: devices without 16-bit storage keep the elemental
   * path) */
  bool packed = glsl_type_is_packed(target, p->view[0].type);
  for (int d = 0; d < p->ndot; d++)
    packed |= glsl_type_is_packed(target, p->rview[d].type) ||
              (p->rview[d].scale.binding >= 0 && glsl_type_is_packed(target, p->rview[d].scale.type)) ||
              (p->rview[d].zero.binding >= 0 && glsl_type_is_packed(target, p->rview[d].zero.type));
  if (packed) return false;

  /* dynamic_slice starts of 64 bits only where the device has them */
  for (int v = -1; v < p->ndot; v++) {
    const gemm_view_t *view = v < 0 ? &p->view[0] : &p->rview[v];
    for (int i = 0; i < view->dyn_count; i++)
      if (glsl_type_is_emulated64(target, view->dyn[i].type)) return false;
  }
  /* gemm_cpu.comp (at most 64 invocations) where the target cannot run
   * gemm_gpu.comp's workgroups; gemm_gpu.comp computes one product, and
   * no ragged one */
  if (codegen_target_gemm_gpu(target) && (p->ndot > 1 || p->ragged)) return false;
  if (p->batch * p->m * p->n > 0x7FFFFFFF) return false;
  /* Both kernels' k loops take 8 (CPU) or 16 (GPU) steps per iteration: a
   * longer product than the target's loops allow keeps the elemental path,
   * which refuses it by name (codegen_assemble); a ragged product's tile
   * steps through the G groups and takes a pass over k for each of at most
   * TM (<= 32) of them that covers its rows */
  int64_t loops = p->k / 8 + 64;
  if (p->ragged) loops += p->groups + 1 + (p->groups < 32 ? p->groups : 32) * (p->k / 8 + 2);
  return !target->max_loop_iterations || loops <= (int64_t)target->max_loop_iterations;
}

/* The scale or zero point broadcast by |bc| (a broadcast_in_dim of a float
 * value) as the kernels' view of it sees it: zero strides where
 * broadcast, the value's row-major ones elsewhere. */
static bool broadcast_qparam(const hlo_instruction_t *bc, gemm_qparam_t *q) {
  *q = no_qparam;
  if (bc->opcode != HLO_OPCODE_BROADCAST_IN_DIM || !codegen_kernel_float_type(bc->operands[0]->shape.element_type))
    return false;
  const hlo_shape_t *ss = &bc->operands[0]->shape;
  const hlo_dims_t *bd = &bc->attrs.broadcast_dimensions;
  int64_t row[HLO_MAX_RANK];
  if (bd->count != ss->rank || ss->rank > HLO_MAX_RANK || bc->shape.rank > HLO_MAX_RANK) return false;
  row_major(ss, row);
  q->binding = 0; /* some binding: only the strides matter here */
  for (int j = 0; j < bd->count; j++) {
    if (bd->data[j] < 0 || bd->data[j] >= bc->shape.rank) return false;
    q->stride[bd->data[j]] = ss->dimensions[j] == 1 ? 0 : row[j];
  }
  return true;
}

/* Integers, reshaped or not, and their exact convert into float type |t|
 * (the integers reshaped [k / G, G, n] before or after their astype). */
static bool converted_integers(const hlo_instruction_t *x, hlo_element_type_t t) {
  while (x->opcode == HLO_OPCODE_RESHAPE) x = x->operands[0];
  return x->opcode == HLO_OPCODE_CONVERT && x->shape.element_type == t &&
         codegen_kernel_int_type(byte_storage_type(x->operands[0]->shape.element_type)) &&
         exact_convert(x->operands[0]->shape.element_type, t);
}

/* Scaled weights.  multiply(convert(q), broadcast_in_dim(s)) in f32, q
 * integers of 2 to 16 bits (their exact convert), as the rhs of a float
 * product is integer weights dequantized before it (a per-column scale;
 * JAX's w.astype(f32) * scale).  Materialized, it costs a kernel writing
 * the weights in f32 and the product then reads 4 bytes per weight; the
 * kernels instead read the integers and multiply each by its column's
 * scale (RHS_SCALE_AT in gemm_cpu.comp and gemm_gpu.comp), the same f32
 * products.  codegen/fusion.c asks this to fuse such a multiply into its
 * dots' clusters (other arithmetic feeding a contraction is
 * materialized): where the GEMM kernels compute the products, every user
 * is a product taking it as its rhs only, and the scale is the same along
 * the rhs's contracting dimensions.  Or a scale per group of G steps of k
 * (GPTQ/AWQ-style weights, group sizes a multiple of 8): the multiply in
 * [k / G, G, n] (q reshaped before or after its convert, the scale
 * broadcast along G) and one reshape to the product's [k, n] between it
 * and each product.  A product split along k on GPUs (codegen/expand.c)
 * reads its rhs through a reshape too (simplify merges it with the
 * group's), [k / G, G, n] -> [S, k / S, n] for a grouped scale.  The
 * integers may first lose a zero point, subtract(convert(q),
 * broadcast_in_dim(z)) as the multiply's operand (asymmetric
 * quantization; z per column or group like s), and the subtract and
 * multiply may be in f16 or bf16 (a 16-bit model's dequantization), each
 * then rounded to that type by the kernels as by the program. */
bool codegen_gemm_scaled_operand(const codegen_target_t *target, const hlo_instruction_t *x) {
  if (!target || target->gemm == CODEGEN_GEMM_OFF || x->operand_count != 2 ||
      !codegen_kernel_float_type(x->shape.element_type) || x->user_count == 0)
    return false;
  if (x->opcode == HLO_OPCODE_SUBTRACT) /* a zero point: its one user the scale's multiply */
    return x->user_count == 1 && x->users[0]->opcode == HLO_OPCODE_MULTIPLY &&
           x->users[0]->operands[0] != x->users[0]->operands[1] && codegen_gemm_scaled_operand(target, x->users[0]);
  if (x->opcode != HLO_OPCODE_MULTIPLY) return false;
  /* the integers (minus a zero point) times a broadcast scale */
  int q = x->operands[0]->opcode == HLO_OPCODE_BROADCAST_IN_DIM ? 1 : 0;
  const hlo_instruction_t *ints = x->operands[q];
  gemm_view_t sv = {.scale = no_qparam, .zero = no_qparam};
  if (!broadcast_qparam(x->operands[1 - q], &sv.scale)) return false;
  if (ints->opcode == HLO_OPCODE_SUBTRACT) {
    if (ints->operand_count != 2 || ints->user_count != 1 || ints->shape.element_type != x->shape.element_type ||
        !broadcast_qparam(ints->operands[1], &sv.zero))
      return false;
    ints = ints->operands[0];
  }
  if (!converted_integers(ints, x->shape.element_type)) return false;
  /* every user a product taking it as its rhs only, directly or through
   * one reshape (grouped scales: [k / G, G, n] -> [k, n]) */
  for (int u = 0; u < x->user_count; u++) {
    const hlo_instruction_t *y = x->users[u];
    gemm_view_t v = sv;
    if (y->opcode == HLO_OPCODE_RESHAPE) {
      if (y->user_count == 0 || !reshape_qparam(&x->shape, &sv.scale, &y->shape, &v.scale) ||
          !reshape_qparam(&x->shape, &sv.zero, &y->shape, &v.zero))
        return false;
    } else if (!is_dot(y)) {
      return false;
    }
    const hlo_instruction_t *rhs = is_dot(y) ? x : y;
    for (int i = 0; i < (rhs == x ? 1 : y->user_count); i++) {
      const hlo_instruction_t *dot = rhs == x ? y : y->users[i];
      if (!is_dot(dot) || dot->operand_count != 2 || dot->operands[0] == rhs || dot->operands[1] != rhs ||
          !codegen_gemm_types(dot) || !scale_fits_k(dot, &v))
        return false;
    }
  }
  return true;
}

bool codegen_ragged_dot_gemm(const codegen_target_t *target, const hlo_instruction_t *instr) {
  gemm_plan_t p;
  return instr->opcode == HLO_OPCODE_CHLO_RAGGED_DOT && !target->no_ragged_gemm && gemm_takes(target, instr, &p);
}

vkhlo_status_t codegen_emit_gemm(const codegen_target_t *target, const hlo_instruction_t *instr,
                                 codegen_kernel_t *out, bool *handled) {
  *handled = false;
  gemm_plan_t p;
  if (!gemm_takes(target, instr, &p)) return NULL;
  bool gpu = codegen_target_gemm_gpu(target);
  const shaders_file_t *file = shaders_find(gpu ? "gemm_gpu.comp" : "gemm_cpu.comp");
  if (!file) return VKHLO_INTERNAL("shaders/%s is not embedded", gpu ? "gemm_gpu.comp" : "gemm_cpu.comp");

  /* CPU: operands read in 64-bit words where they can be */
  bool words[2] = {false, false}, rhs_k_words = false;
  if (!gpu && target->shader_int64) {
    words[0] = words_ok(&p, 0, &p.view[0], p.lks, false);
    words[1] = rhs_k_words = true;
    for (int d = 0; d < p.ndot; d++) {
      words[1] = words[1] && words_ok(&p, 1, &p.rview[d], p.rks_of[d], false);
      rhs_k_words = rhs_k_words && words_ok(&p, 1, &p.rview[d], p.rks_of[d], true);
    }
    /* 8-bit words are halves of 16-byte ones: the binding must hold whole
     * 16-byte words (its texel view ends at the last whole texel) */
    words[0] = words[0] && whole_words(instr, &p.view[0]);
    for (int d = 0; d < p.ndot; d++) {
      words[1] = words[1] && whole_words(instr, &p.rview[d]);
      rhs_k_words = rhs_k_words && whole_words(instr, &p.rview[d]);
    }
  }
  /* CPU: a workgroup covers WG * TN columns; narrow products get a
   * narrower workgroup (a multiple of 8, the SIMD width of lavapipe on AVX2) */
  /* Small products take smaller tiles: TM no more rows than M has (a tile
   * of 16 rows of a 1-row product would compute the row 16 times); narrow
   * ones (fewer than 8 invocations across N, rhs in words: attention's
   * 79x32 values product) stack GEMM_SGR row tiles down the workgroup,
   * others take TN down to 4 while fewer than 16 invocations would cover N
   * (lanes of lavapipe's SIMD groups would idle). */
  cpu_tiles_t tl;
  choose_cpu_tiles(&p, target, words, rhs_k_words, &tl, out);
  if (p.ragged) { /* see "Groups" in gemm_cpu.comp */
    tl.kb = 0;
    if (tl.tm > 32) tl.tm = 32;
    size_t used = strlen(out->tune_key);
    snprintf(out->tune_key + used, sizeof out->tune_key - used, " groups=%lld", (long long)p.groups);
  }
  if (gpu) { /* gemm_gpu.comp has one configuration */
    out->tune_key[0] = 0;
    out->tune_candidates = 0;
  }
  int nres = el_result_count(instr);
  /* CPU: the results stored in words of 8 (GEMM_STORE8): an f32 store
   * costs lavapipe a loop over the lanes per component, as a load does,
   * and a 64-bit component what a 32-bit one does (ffn_up 2607x1024x256:
   * 39 -> 28 ms, where no stores at all would take 22.5) */
  bool words_out = !gpu && target->shader_int64 && tl.tn % 8 == 0 && p.n % 8 == 0;
  for (int r = 0; r < nres && words_out; r++) {
    hlo_element_type_t rt = el_result_shape(instr, r)->element_type;
    words_out = (codegen_kernel_float_type(rt) || rt == HLO_S32 || rt == HLO_U32) && !glsl_type_is_packed(target, rt);
  }

  elemental_emitter_t E;
  epi_ctx_t ectx = {.plan = &p};
  el_init(&E, target, out->allocator, epi_operand, &ectx);
  vkhlo_status_t st = emit_epilogue(&E, &p, instr, words_out);
  if (st) {
    el_free(&E);
    /* an epilogue the elemental emitter cannot make: keep the old path,
     * which reports the same error if it has one */
    vkhlo_status_free(st);
    return NULL;
  }
  st = glsl_builder_check(&E.glsl);
  if (st) {
    el_free(&E);
    return st;
  }
  for (int k = 0; k < instr->operand_count; k++) el_use_type(&E, instr->operands[k]->shape.element_type);
  for (int r = 0; r < nres; r++) el_use_type(&E, el_result_shape(instr, r)->element_type);
  el_use_type(&E, p.dot->shape.element_type);

  strbuf_t sb;
  strbuf_init(&sb, out->allocator);
  if (words[0] || words[1] || rhs_k_words || words_out) E.features |= GLSL_FEATURE_INT64;
  strbuf_append(&sb, "#version 450\n");
  if (E.features & GLSL_FEATURE_INT64)
    strbuf_append(&sb, "#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require\n");
  if (E.features & GLSL_FEATURE_STORAGE8) strbuf_append(&sb, "#extension GL_EXT_shader_8bit_storage : require\n");
  if (E.features & GLSL_FEATURE_STORAGE16) strbuf_append(&sb, "#extension GL_EXT_shader_16bit_storage : require\n");
  strbuf_printf(&sb, "// %s: %s.%s as shaders/%s", instr->name, hlo_opcode_is_chlo(instr->opcode) ? "chlo" : "stablehlo",
                hlo_opcode_name(instr->opcode), file->name);
  if (instr->loc.file) strbuf_printf(&sb, " at %s:%d:%d", instr->loc.file, instr->loc.line, instr->loc.col);
  strbuf_append(&sb, "\n#define GEMM_GENERATED 1\n");
  strbuf_printf(&sb, "#define GEMM_BATCH %lld\n#define GEMM_M %lld\n#define GEMM_N %lld\n#define GEMM_K %lld\n",
                (long long)p.batch, (long long)p.m, (long long)p.n, (long long)p.k);
  int TMv = tl.tm, TNv = tl.tn, sgr = tl.sgr;
  int64_t wg = tl.wg;
  if (!gpu && tl.sg)
    strbuf_printf(&sb,
                  "#extension GL_KHR_shader_subgroup_basic : require\n"
                  "#extension GL_KHR_shader_subgroup_shuffle : require\n"
                  "#define GEMM_SG %d\n#define GEMM_SGR %d\n#define GEMM_KB %d\n",
                  tl.sg, tl.sgr, tl.kb);
  if (!gpu && !tl.sg && tl.sgr > 1) strbuf_printf(&sb, "#define GEMM_SGR %d\n", tl.sgr);
  if (gpu && codegen_gemm_gpu_rows(target, p.m) == 16) /* the 16 x 256 tile */
    strbuf_append(&sb, "#define GEMM_TY 4\n#define GEMM_BK 8\n");
  bool rhs_in_words = words[1] || (!gpu && tl.rhs_k_words);
  for (int bits = 8; bits <= 16; bits += 8)
    if ((words[0] && hlo_element_type_bit_width(p.view[0].type) == bits) ||
        (rhs_in_words && hlo_element_type_bit_width(p.rview[0].type) == bits))
      strbuf_printf(&sb, "#define GEMM_WORDS%d 1\n", bits);
  bool int_as_float = int_sums_exact_in_f32(&p);
  bool float_product = !codegen_kernel_int_type(p.dot->shape.element_type) || int_as_float;
  if (!float_product) strbuf_append(&sb, "#define GEMM_INT 1\n");
  if (!gpu)
    strbuf_printf(&sb, "#define TM %d\n#define TN %d\n#define WG %lld\n#define NDOT %d\n", TMv, TNv, (long long)wg,
                  p.ndot);
  define_at(&sb, &p, 0, &p.view[0], "LHS_AT", "m");
  strbuf_printf(&sb, "#define LHS_KS %lld\n", (long long)p.lks);
  define_load(&sb, target, "LHS_LOAD", &p.view[0], float_product);
  if (p.lk_inner)
    strbuf_printf(&sb, "#define LHS_KOFF(k) (int(uint(k) / %lldu) * %lld + int(uint(k) %% %lldu) * LHS_KS)\n",
                  (long long)p.lk_inner, (long long)p.lk_outer, (long long)p.lk_inner);
  if (words[0]) define_word_load(&sb, "LHS_LOADW", &p.view[0], float_product);
  bool word_view[64] = {false};
  for (int k = 0; k < 64; k++) word_view[k] = ectx.word_reads >> k & 1; /* the epilogue's word reads */
  if (words[0] && p.view[0].binding < 64) word_view[p.view[0].binding] = true;
  bool any_scaled = false, any_zero = false, any_grouped = false, round16[2] = {false, false}; /* bf16, f16 */
  for (int d = 0; d < p.ndot; d++) {
    any_scaled |= p.rview[d].scale.binding >= 0;
    any_zero |= p.rview[d].zero.binding >= 0;
  }
  /* zero points in the kernel: some product's, or always where scaled on
   * GPUs (gemm_gpu.comp subtracts one, 0 without) */
  bool zeros = any_zero || (gpu && any_scaled);
  for (int d = 0; d < p.ndot; d++) {
    char at[24], suffix[16] = "";
    if (!gpu) snprintf(suffix, sizeof suffix, "_%d", d);
    snprintf(at, sizeof at, "RHS_AT%s", suffix);
    define_at(&sb, &p, 1, &p.rview[d], at, "n");
    strbuf_printf(&sb, "#define RHS_KS%s %lld\n", suffix, (long long)p.rks_of[d]);
    char name[24];
    snprintf(name, sizeof name, "RHS_LOAD%s", suffix);
    define_load(&sb, target, name, &p.rview[d], float_product);
    if (words[1]) {
      snprintf(name, sizeof name, "RHS_LOADW%s", suffix);
      define_word_load(&sb, name, &p.rview[d], float_product);
    }
    if (!gpu && tl.rhs_k_words) {
      snprintf(name, sizeof name, "RHS_LOADWK%s", suffix);
      define_word_load(&sb, name, &p.rview[d], float_product);
    }
    if ((words[1] || (!gpu && tl.rhs_k_words)) && p.rview[d].binding < 64) word_view[p.rview[d].binding] = true;
    /* its scale and zero point, per column or per group of k (see
     * "Scaled weights"); another product's make this one's 1 and 0 (exact) */
    const gemm_qparam_t *qs[2] = {&p.rview[d].scale, &p.rview[d].zero};
    static const char *const qname[2] = {"SCALE", "ZERO"}, *const qnone[2] = {"1.0", "0.0"};
    const gemm_qparam_t *grouped = NULL;
    for (int j = 0; j < 2; j++) {
      const gemm_qparam_t *q = qs[j];
      if (q->binding >= 0) {
        gemm_view_t qv = {.binding = q->binding, .type = q->type, .offset = q->offset, .split_dim = -1,
                          .scale = no_qparam, .zero = no_qparam};
        memcpy(qv.stride, q->stride, sizeof qv.stride);
        snprintf(at, sizeof at, "RHS_%s_AT%s", qname[j], suffix);
        define_at(&sb, &p, 1, &qv, at, "n");
        snprintf(name, sizeof name, "RHS_%s_LOAD%s", qname[j], suffix);
        define_load(&sb, target, name, &qv, true);
        if (q->gdim >= 0) grouped = q;
      } else if (j == 0 ? any_scaled : zeros) {
        strbuf_printf(&sb, "#define RHS_%s_AT%s(b, n) 0\n#define RHS_%s_LOAD%s(off) %s\n", qname[j], suffix, qname[j],
                      suffix, qnone[j]);
      }
    }
    /* where its scale changes along k: each one's offset at step k and
     * whether k starts a group (none: per column), and its rounding to a
     * 16-bit dequantization's type (RHS_QROUND) */
    if (any_scaled) {
      for (int j = 0; j < 2; j++)
        if (j == 0 || zeros) {
          if (qs[j]->gdim >= 0)
            strbuf_printf(&sb, "#define RHS_%s_KOFF%s(k) ((k) / %lld * %lld)\n", qname[j], suffix,
                          (long long)grouped->group, (long long)qs[j]->gstride);
          else
            strbuf_printf(&sb, "#define RHS_%s_KOFF%s(k) 0\n", qname[j], suffix);
        }
      if (grouped)
        strbuf_printf(&sb, "#define RHS_SCALE_NEW%s(k) ((k) %% %lld == 0)\n", suffix, (long long)grouped->group);
      else
        strbuf_printf(&sb, "#define RHS_SCALE_NEW%s(k) false\n", suffix);
      hlo_element_type_t qt = p.rview[d].qtype;
      bool round = p.rview[d].scale.binding >= 0 && (qt == HLO_F16 || qt == HLO_BF16);
      strbuf_printf(&sb, "#define RHS_QROUND%s(x) %s%s(x)\n", suffix, round ? "gemm_round_" : "",
                    !round ? "" : qt == HLO_F16 ? "f16" : "bf16");
      if (round) {
        round16[qt == HLO_F16] = true;
        el_use_type(&E, qt); /* vk_round_f16 / vk_round_bf16 */
      }
      any_grouped |= grouped != NULL;
    }
  }
  if (any_grouped) strbuf_append(&sb, "#define GEMM_SCALE_GROUPS 1\n");
  if (p.ragged)
    strbuf_printf(&sb, "#define GEMM_GROUPS %lld\n#define RHS_GS_0 %lld\n#define GEMM_GROUP_SIZE(g) gemm_group_size(g)\n",
                  (long long)p.groups, (long long)p.rgs);
  /* v is the accumulators of every product, comma-separated (ACCS, ACCS8) */
  if (words_out) strbuf_append(&sb, "#define GEMM_STORE8(idx, v) gemm_epilogue8(idx, v)\n");
  else strbuf_append(&sb, "#define GEMM_STORE(idx, v) gemm_epilogue(idx, v)\n");
  uint64_t texel_inputs = 0;
  for (int k = 0; k < instr->operand_count && k < 64; k++)
    if (word_view[k])
      codegen_declare_word_view(&sb, target, instr, k, word_type(instr->operands[k]->shape.element_type),
                                instr->operand_count + nres, &texel_inputs, &E.features);
  /* the operands' element loads (LHS_LOAD, RHS_LOAD_d): through texel
   * views on the CPU kernel where they are not read by words */
  uint64_t scalar_inputs = 0;
  for (int k = 0; k < instr->operand_count; k++) {
    bool used = k < 64 && (ectx.element_reads >> k & 1), texel = used && !gpu;
    for (int d = -1; d < p.ndot; d++) {
      bool lhs = d < 0;
      if (!lhs && (p.rview[d].scale.binding == k || p.rview[d].zero.binding == k)) { /* read by elements */
        used = true;
        texel |= !gpu;
      }
      if ((lhs ? p.view[0].binding : p.rview[d].binding) != k) continue;
      used = true;
      texel |= !gpu && (lhs ? !words[0] : !words[1] && !tl.rhs_k_words);
    }
    if (used)
      codegen_declare_element_view(&sb, target, instr, k, texel, instr->operand_count + nres, texel_inputs,
                                   &scalar_inputs);
  }
  for (int k = 0; k < instr->operand_count; k++) {
    char name[16];
    snprintf(name, sizeof name, "in%d", k);
    declare_buffer(&sb, k, "readonly ", glsl_buffer_type_on(target, instr->operands[k]->shape.element_type), name);
  }
  for (int r = 0; r < nres; r++) {
    char name[16];
    snprintf(name, sizeof name, "out%d", r);
    hlo_element_type_t rt = el_result_shape(instr, r)->element_type;
    declare_buffer(&sb, instr->operand_count + r, glsl_type_is_packed(target, rt) ? "" : "writeonly ",
                   glsl_buffer_type_on(target, rt), name);
    if (words_out)
      strbuf_printf(&sb, "layout(std430, set = 0, binding = %d) writeonly buffer Buffer%dw { %s data[]; } out%dw;\n",
                    instr->operand_count + r, instr->operand_count + r, is_16bit(rt) ? "u64vec2" : "u64vec4", r);
  }
  if (p.ragged) append_group_size(&sb, &instr->operands[2]->shape);
  glsl_append_prelude(&sb, E.features);
  for (int h = 0; h < 2; h++) { /* a scaled weight rounded to its 16-bit type (RHS_QROUND) */
    const char *t = h ? "f16" : "bf16";
    if (round16[h])
      strbuf_printf(&sb,
                    "float gemm_round_%s(float x) { return vk_round_%s(x); }\n"
                    "vec4 gemm_round_%s(vec4 x) {\n"
                    "  return vec4(vk_round_%s(x.x), vk_round_%s(x.y), vk_round_%s(x.z), vk_round_%s(x.w));\n}\n",
                    t, t, t, t, t, t, t);
  }
  if (E.functions.data) strbuf_append(&sb, E.functions.data);
  strbuf_append(&sb, words_out ? "void gemm_values(int idx" : "void gemm_epilogue(int idx");
  /* each product's value: a float, or an int (GEMM_INT) taken as the
   * compute type of the product's integer type; an integer product summed
   * in f32 (int_sums_exact_in_f32) comes as the float gemm_f<d>, its
   * integer value made below */
  for (int d = 0; d < p.ndot; d++)
    strbuf_printf(&sb, ", %s gemm_%c%d", int_as_float ? "float" : glsl_compute_type_on(target, p.dots[d]->shape.element_type),
                  int_as_float ? 'f' : 'v', d);
  for (int k = 0; k < 64; k++)
    if (ectx.word_reads >> k & 1) strbuf_printf(&sb, ", float gemm_p%d", k);
  for (int r = 0; words_out && r < nres; r++)
    strbuf_printf(&sb, ", out %s gemm_r%d", glsl_compute_type_on(target, el_result_shape(instr, r)->element_type), r);
  strbuf_append(&sb, ") {\n");
  for (int d = 0; int_as_float && d < p.ndot; d++) {
    const char *ct = glsl_compute_type_on(target, p.dots[d]->shape.element_type);
    strbuf_printf(&sb, "  %s gemm_v%d = %s(int(gemm_f%d));\n", ct, d, ct, d);
  }
  /* an f16/bf16 product: its f32 sum rounded once, as the elemental dot;
   * an 8- or 16-bit integer one: the low bits of its 32-bit sum */
  for (int d = 0; d < p.ndot; d++) {
    hlo_element_type_t dt = p.dots[d]->shape.element_type;
    if (hlo_element_type_bit_width(dt) == 32) continue;
    char v[24];
    snprintf(v, sizeof v, "gemm_v%d", d);
    strbuf_printf(&sb, "  %s = ", v);
    glsl_append_normalized(&sb, dt, v);
    strbuf_append(&sb, ";\n");
  }
  if (E.body.data) strbuf_append(&sb, E.body.data);
  strbuf_append(&sb, "}\n");
  if (words_out)
    append_epilogue8(&sb, target, instr, p.ndot, float_product ? "vec4" : "ivec4", nres,
                     ectx.word_reads, ectx.word_period);
  strbuf_append(&sb, after_version(file->text));
  bool failed = sb.failed || E.body.failed || E.functions.failed;
  el_free(&E);
  char *glsl = strbuf_take(&sb);
  char *name = vkhlo_malloc(out->allocator, strlen(instr->name) + 1);
  if (failed || !glsl || !name) {
    vkhlo_free(out->allocator, glsl);
    vkhlo_free(out->allocator, name);
    return VKHLO_NO_MEMORY();
  }
  size_t i = 0;
  for (const char *c = instr->name; *c; c++)
    name[i++] = ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9')) ? *c : '_';
  name[i] = 0;

  uint64_t groups;
  uint32_t local = 64;
  if (gpu) { /* one workgroup of 256 invocations per BM x BN tile */
    const uint64_t bm = (uint64_t)codegen_gemm_gpu_rows(target, p.m), bn = 4096 / bm;
    groups = (uint64_t)p.batch * (uint64_t)((p.m + bm - 1) / bm) * (uint64_t)((p.n + bn - 1) / bn);
    local = 256;
  } else {
    uint64_t rb = (uint64_t)TMv * (uint64_t)sgr, cb = (uint64_t)(wg / sgr * TNv);
    uint64_t tiles = (uint64_t)p.batch * (((uint64_t)p.m + rb - 1) / rb) * (((uint64_t)p.n + cb - 1) / cb);
    groups = tiles < GEMM_CPU_MAX_GROUPS ? tiles : GEMM_CPU_MAX_GROUPS;
    local = (uint32_t)wg;
  }
  if (groups == 0) groups = 1;
  uint64_t maxx = target->max_workgroup_count[0] ? target->max_workgroup_count[0] : 65535;
  uint64_t gx = groups < maxx ? groups : maxx, gy = (groups + gx - 1) / gx;
  uint64_t maxy = target->max_workgroup_count[1] ? target->max_workgroup_count[1] : 65535;
  if (gy > maxy) {
    vkhlo_free(out->allocator, glsl);
    vkhlo_free(out->allocator, name);
    return NULL;
  }
  /* |out| was zeroed by codegen_emit_instruction; the tune fields are set */
  out->name = name;
  out->glsl = glsl;
  out->local_size_x = local;
  out->group_count[0] = (uint32_t)gx;
  out->group_count[1] = (uint32_t)gy;
  out->group_count[2] = 1;
  out->input_count = instr->operand_count;
  out->output_count = nres;
  out->texel_inputs = texel_inputs;
  out->scalar_inputs = scalar_inputs;
  *handled = true;
  return NULL;
}
