/*
 * Convolution kernels from shaders/: conv2d_cpu.comp (an implicit GEMM,
 * register-blocked; 1x1 convolutions are plain GEMMs there) and
 * conv_depthwise_cpu.comp (feature_group_count = input features) for CPU
 * devices, gemm_gpu.comp through the hooks of conv_gpu.glsl (an implicit
 * GEMM through shared-memory tiles) for GPUs; the essays there have the
 * tilings and the hooks.  This file decides when a kernel applies and which, and
 * writes its #define hooks.
 *
 * What is taken.  A stablehlo.convolution instruction, or a fusion whose
 * fused computation holds exactly one convolution whose lhs and rhs are
 * fused parameters and whose other instructions are elementwise ops, data
 * movement (broadcast of a bias, ...), parameters and splat constants,
 * with every path from the convolution to the single root elementwise over
 * the convolution's dimensions (an output fusion: codegen/fusion.c forms
 * them, so each convolution element is used once, at its own index).  f32,
 * f16/bf16 or integers (see "16-bit and integer convolutions" below).
 * One or two spatial dimensions (codegen/expand.c splits convolutions of
 * more along depth, and lhs-dilated ones by output phase, before they get
 * here), batch_group_count 1; any
 * dimension numbers, strides, padding (negative too), lhs and rhs
 * dilation, window reversal, feature_group_count.  On GPUs (and with
 * target->conv = CODEGEN_CONV_GPU, $VKHLO_CONV_KERNEL=gpu, on any device)
 * gemm_gpu.comp with conv_gpu.glsl where the device allows 256 invocations and 16 KiB of
 * shared memory per workgroup; on a GPU depthwise convolutions and groups
 * of fewer than 16 output features keep the per-element kernel.
 * Everything else goes to the per-element path (elemental.c).
 *
 * Layouts.  Each tensor's logical dimensions (batch, feature, spatial...)
 * become element strides of its row-major shape (LHS_S*, RHS_S*, OUT_S*):
 * the kernel's index maps are these strided sums, so one kernel serves
 * NCHW/OIHW, NHWC/HWIO and any permutation.  A 1-D convolution is a 2-D one
 * with H = 1 (stride 0 for the missing dimension).
 *
 * Epilogue.  The fusion's root, at the delinearized output position, is
 * emitted by the elemental emitter into a GLSL function
 *   float vk_conv_epilogue(float acc, int idx)
 * in which the convolution's value is |acc| and every other fused value is
 * computed at its index as in any fusion (a parameter loads from binding
 * "in<k>", declared here beside the kernel's own views of the lhs, rhs and
 * result bindings), and CONV_EPILOGUE(acc, pos) calls it.
 *
 * Depthwise (one input feature per group, more than one group):
 * conv_depthwise_cpu.comp, TILE_W = min(8, OW) pixels of a row per
 * invocation.
 *
 * Register tile (conv2d_cpu.comp): TILE_C = the largest of 16, 8, 4, 2, 1 dividing the
 * output features per group, TILE_P = 8 pixels (but see the variants
 * below); target->conv_tile_p/c ($VKHLO_CONV_TILE=PxC) overrides
 * (measurements).  bench_conv on lavapipe (2 cores shared with
 * other work, load 13-16, GFLOP/s of s3 3x3 256->256 / s2 1x1 256->128,
 * two sweeps): 2x8 0.8/0.5, 4x8 0.9-1.5/0.5-1.0, 16x4 1.2-2.0/0.7-1.1,
 * 4x16 1.2-1.7/0.8-1.2, 8x8 1.3-2.4/1.0-1.4, 8x16 1.4-2.3/1.4-1.7; on the
 * 7x7 stage (s4 3x3 / s4 1x1 2048->512): 4x8 1.0/0.9, 8x8 1.5/1.7,
 * 8x16 1.7/1.6-1.8.  The 128 accumulators spill on AVX2 but the fewer
 * loads per multiply-add win.  With the weights shared by subgroup
 * shuffles (1.7-2.5x over per-lane weight loads in the same sweep), 8x16,
 * 8x32 and 4x32 measured within the machine's noise of each other (each
 * 2-12 GFLOP/s from run to run at load 12), so 8x16 stays.
 *
 * Variants per layer (the hooks CONV_ROWS, LHS_WORDS, RHS_WORDS,
 * OUT_WORDS of conv2d_cpu.comp; target->conv = CODEGEN_CONV_GENERIC keeps
 * none of them).  What costs on lavapipe is the per-lane loop of every
 * storage-buffer access, one bounds-checked scalar load per lane and
 * vector component (a 64-bit component costs what a 32-bit one does);
 * profiled with perf on the JIT code, those loops were about half of a
 * convolution's time and the multiply-adds (mul + add: no contraction,
 * exact f32) with their accumulator spills most of the rest.  So:
 *  - windows wider than 1: row tiles (TILE_P = 8, or 7 where it divides
 *    OW: 28, 14, 7), a row's window inputs loaded once per input feature
 *    for all window columns (3x3 stride 1: 9-10 loads where the flattened
 *    tile took 24).  The inputs stay scalar: NHWC rows as u64vec4 words
 *    measured 0.74x of scalar rows (cpu, s3 3x3 NHWC).
 *  - NHWC 1x1 (input features consecutive, C % 8 == 0): 8 features per
 *    u64vec4 load.
 *  - NCHW 1x1 of stride 1 without padding: the tile's pixels are
 *    consecutive, 8 per u64vec4 (56x56, 28x28) or 4 per u64vec2 with 4x32
 *    tiles (14x14).
 *  - HWIO weights (output features consecutive): each lane of the subgroup
 *    loads 64-bit words of two features and the shuffles hand them round
 *    (half the weight loads).  Every lane loading its own u64vec4 words
 *    instead (no shuffles) measured 0.8-1.0x.
 *  - NHWC results: 8 features per u64vec4 store; those of the NCHW 1x1
 *    tiles above: 8 (4) consecutive pixels per store.
 *  - flattened tiles of 7 pixels where 7 divides the image and 8 does not
 *    (7x7, 14x14), and the split of a workgroup's 64 lanes into pixel and
 *    feature tiles with the fewest idle lanes (28x28 with tiles of 8: 98
 *    pixel tiles in 2 blocks of 64 left 23% of the lanes idle).
 * bench_conv (both layouts, the generic kernel as the same-run baseline)
 * has the per-layer numbers.
 *
 * Texel views (target->texel_words): the kernels read the input and the
 * weights through texel views of their bindings (declare_conv_views, the
 * CONV_*_AT hooks): the words above through RGBA32UI views, the scalar
 * reads through R32UI views, one vector load or gather per lane instead of
 * the loop over the lanes.  bench_conv with BENCH_CONV_BASE=
 * "VKHLO_TEXEL_WORDS=0" (the storage buffers) as the same-run baseline,
 * every distinct ResNet-50 layer in both layouts: 1.19x in device time and
 * in CPU time over all of them (2026-11-24), 1.02-1.47x per layer in CPU
 * time.
 */
#include "codegen/emit_conv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/emit_internal.h"
#include "codegen/glsl_prelude.h"
#include "codegen/shaders.h"
#include "support/status.h"

/* The convolution's shape, in the kernel's logical order. */
typedef struct conv_geometry {
  int64_t n, c, h, w, o, oh, ow, kh, kw, g;
  int64_t sh, sw, dh, dw, ldh, ldw, ph, pw, rev_h, rev_w;
  int64_t lhs_s[4], rhs_s[4], out_s[4]; /* n c h w / o i h w / n c h w */
  bool check;
} conv_geometry_t;

static int64_t dim_or(hlo_dims_t d, int i, int64_t dflt) { return i >= 0 && i < d.count ? d.data[i] : dflt; }

/* Element stride of dimension |d| in row-major |s|. */
static int64_t stride_of(const hlo_shape_t *s, int64_t d) {
  int64_t st = 1;
  for (int64_t e = s->rank - 1; e > d; e--) st *= s->dimensions[e];
  return st;
}

static bool geometry_of(const hlo_instruction_t *conv, conv_geometry_t *g) {
  const hlo_attrs_t *a = &conv->attrs;
  const hlo_shape_t *ls = &conv->operands[0]->shape, *ks = &conv->operands[1]->shape, *os = &conv->shape;
  int ns = a->input_spatial_dimensions.count;
  if (ns < 1 || ns > 2 || a->kernel_spatial_dimensions.count != ns || a->output_spatial_dimensions.count != ns)
    return false;
  if (a->batch_group_count > 1) return false;
  /* f32, f16/bf16 operands into their own type or f32, or integers of 8,
   * 16 or 32 bits into any of them (see "16-bit and integer
   * convolutions") */
  hlo_element_type_t t = ls->element_type;
  if (ks->element_type != t) return false;
  if (codegen_kernel_int_type(t)) {
    if (!codegen_kernel_int_type(os->element_type)) return false;
  } else if (!codegen_kernel_float_type(t) || (os->element_type != t && os->element_type != HLO_F32)) {
    return false;
  }
  if (hlo_shape_is_tuple(os) || ls->rank != ns + 2 || ks->rank != ns + 2 || os->rank != ns + 2) return false;
  memset(g, 0, sizeof *g);
  g->g = a->feature_group_count > 0 ? a->feature_group_count : 1;
  g->n = ls->dimensions[a->input_batch_dimension];
  g->c = ls->dimensions[a->input_feature_dimension];
  g->o = os->dimensions[a->output_feature_dimension];
  if (g->c % g->g || g->o % g->g || ks->dimensions[a->kernel_input_feature_dimension] != g->c / g->g) return false;
  g->lhs_s[0] = stride_of(ls, a->input_batch_dimension);
  g->lhs_s[1] = stride_of(ls, a->input_feature_dimension);
  g->rhs_s[0] = stride_of(ks, a->kernel_output_feature_dimension);
  g->rhs_s[1] = stride_of(ks, a->kernel_input_feature_dimension);
  g->out_s[0] = stride_of(os, a->output_batch_dimension);
  g->out_s[1] = stride_of(os, a->output_feature_dimension);
  /* spatial dimension i of the convolution is the kernel's H (i = 0 of 2)
   * or W (the last); a 1-D convolution has H = 1 */
  int64_t sp[2][10];
  for (int j = 0; j < 2; j++) { /* j = 0: H, 1: W */
    int i = ns == 2 ? j : (j == 1 ? 0 : -1);
    if (i < 0) {
      int64_t one[10] = {1, 1, 1, 1, 1, 1, 1, 0, 0, 0};
      memcpy(sp[j], one, sizeof one);
      g->lhs_s[2 + j] = g->rhs_s[2 + j] = g->out_s[2 + j] = 0;
      continue;
    }
    int64_t ld = a->input_spatial_dimensions.data[i], kd = a->kernel_spatial_dimensions.data[i],
            od = a->output_spatial_dimensions.data[i];
    sp[j][0] = ls->dimensions[ld];
    sp[j][1] = os->dimensions[od];
    sp[j][2] = ks->dimensions[kd];
    sp[j][3] = dim_or(a->window_strides, i, 1);
    sp[j][4] = dim_or(a->rhs_dilation, i, 1);
    sp[j][5] = dim_or(a->lhs_dilation, i, 1);
    sp[j][6] = 0; /* unused */
    sp[j][7] = dim_or(a->padding, 2 * i, 0);
    sp[j][8] = dim_or(a->window_reversal, i, 0) != 0;
    g->lhs_s[2 + j] = stride_of(ls, ld);
    g->rhs_s[2 + j] = stride_of(ks, kd);
    g->out_s[2 + j] = stride_of(os, od);
  }
  g->h = sp[0][0], g->oh = sp[0][1], g->kh = sp[0][2], g->sh = sp[0][3], g->dh = sp[0][4], g->ldh = sp[0][5];
  g->ph = sp[0][7], g->rev_h = sp[0][8];
  g->w = sp[1][0], g->ow = sp[1][1], g->kw = sp[1][2], g->sw = sp[1][3], g->dw = sp[1][4], g->ldw = sp[1][5];
  g->pw = sp[1][7], g->rev_w = sp[1][8];
  if (g->n * g->oh * g->ow * g->o == 0 || g->c == 0 || g->kh * g->kw == 0) return false;
  /* every tap in range: no padding taps, no lhs dilation */
  int64_t ymax = (g->oh - 1) * g->sh + (g->kh - 1) * g->dh - g->ph;
  int64_t xmax = (g->ow - 1) * g->sw + (g->kw - 1) * g->dw - g->pw;
  g->check = !(g->ldh == 1 && g->ldw == 1 && g->ph <= 0 && g->pw <= 0 && ymax < g->h && xmax < g->w);
  return true;
}

/* ---------------------------------------------------------- epilogue */

typedef struct epilogue_ctx {
  const hlo_instruction_t *fusion, *conv;
  /* bit p: the epilogue reads f32 operand p element by element through
   * in<p>_at (declare_conv_views: an R32UI texel view where the target
   * has them, one gather per load where a storage buffer costs lavapipe
   * a loop over the lanes) */
  uint64_t element_reads;
} epilogue_ctx_t;

static vkhlo_status_t epilogue_operand(elemental_emitter_t *E, const hlo_instruction_t *instr, int k,
                                       const el_name_t *index, el_name_t *out) {
  epilogue_ctx_t *ctx = E->user;
  const hlo_instruction_t *x = instr->operands[k];
  if (x == ctx->conv) {
    snprintf(out->s, sizeof out->s, "acc");
    return NULL;
  }
  if (x->opcode == HLO_OPCODE_PARAMETER) {
    int p = x->parameter_number;
    if (p < 0 || p >= ctx->fusion->operand_count) return VKHLO_INTERNAL("fused parameter %s out of range", x->name);
    const hlo_shape_t *s = &ctx->fusion->operands[p]->shape;
    strbuf_t pos;
    strbuf_init(&pos, E->allocator);
    if (hlo_shape_element_count(s) == 1) strbuf_append(&pos, "0");
    else el_append_linear(&pos, s, index);
    vkhlo_status_t st = pos.failed ? VKHLO_NO_MEMORY()
                                   : codegen_load_element_at(E, x, s->element_type, p, pos.data ? pos.data : "0",
                                                             &ctx->element_reads, out);
    strbuf_free(&pos);
    return st;
  }
  if (x->opcode == HLO_OPCODE_CONSTANT) { /* fusion.c fuses splats only */
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
  el_name_t vals[EL_MAX_RESULTS];
  VKHLO_RETURN_IF_ERROR(el_emit(E, x, index, vals));
  *out = vals[0];
  return NULL;
}

/* True when every use of |x| in |fc| is an elementwise op over |dims| on
 * the way to the root (so |x| is only asked for at the output's index). */
static bool identity_path(const hlo_computation_t *fc, const hlo_instruction_t *x, const hlo_shape_t *dims, int depth) {
  if (depth > 64) return false;
  if (x == fc->root) return true;
  bool used = false;
  for (int i = 0; i < fc->instruction_count; i++) {
    const hlo_instruction_t *u = fc->instructions[i];
    for (int k = 0; k < u->operand_count; k++) {
      if (u->operands[k] != x) continue;
      used = true;
      if (!hlo_opcode_is_elementwise(u->opcode) || hlo_shape_is_tuple(&u->shape) ||
          !hlo_shape_compatible_dims(&u->shape, dims) || !identity_path(fc, u, dims, depth + 1))
        return false;
    }
  }
  return used;
}

/* The convolution of an output fusion the kernel can take, or NULL. */
static const hlo_instruction_t *fused_conv(const hlo_instruction_t *fusion) {
  if (fusion->called_count < 1 || !fusion->called_computations[0] || hlo_shape_is_tuple(&fusion->shape)) return NULL;
  const hlo_computation_t *fc = fusion->called_computations[0];
  if (!fc->root || fc->root->opcode == HLO_OPCODE_TUPLE) return NULL;
  hlo_element_type_t rt = fc->root->shape.element_type;
  if (!codegen_kernel_float_type(rt) && !codegen_kernel_int_type(rt)) return NULL;
  const hlo_instruction_t *conv = NULL;
  for (int i = 0; i < fc->instruction_count; i++) {
    const hlo_instruction_t *x = fc->instructions[i];
    if (x->opcode == HLO_OPCODE_CONVOLUTION) {
      if (conv) return NULL;
      conv = x;
    } else if (!hlo_opcode_is_elementwise(x->opcode) && !el_is_data_movement(x->opcode) &&
               x->opcode != HLO_OPCODE_PARAMETER && x->opcode != HLO_OPCODE_CONSTANT) {
      return NULL;
    }
  }
  if (!conv || conv->operands[0]->opcode != HLO_OPCODE_PARAMETER || conv->operands[1]->opcode != HLO_OPCODE_PARAMETER)
    return NULL;
  if (!hlo_shape_compatible_dims(&fc->root->shape, &conv->shape) || !identity_path(fc, conv, &conv->shape, 0))
    return NULL;
  return conv;
}

/* Declarations of the fusion's operands into |defs|, the epilogue function
 * into |tail| (after the views, whose in<p>_at macros it reads the
 * operands in |*element_reads| through). */
static vkhlo_status_t emit_epilogue(const codegen_target_t *target, const hlo_instruction_t *fusion,
                                    const hlo_instruction_t *conv, strbuf_t *defs, strbuf_t *tail,
                                    uint64_t *element_reads) {
  const hlo_computation_t *fc = fusion->called_computations[0];
  for (int i = 0; i < fc->instruction_count; i++)
    VKHLO_RETURN_IF_ERROR(codegen_check_element_types(target, fc->instructions[i]));
  elemental_emitter_t E;
  epilogue_ctx_t ctx = {fusion, conv, 0};
  el_init(&E, target, defs->allocator, epilogue_operand, &ctx);
  el_name_t index[HLO_MAX_RANK], vals[EL_MAX_RESULTS];
  el_delinearize(&E, fusion, &conv->shape, "idx", index);
  vkhlo_status_t st = el_emit(&E, fc->root, index, vals);
  if (!st) {
    for (int k = 0; k < fusion->operand_count; k++) el_use_type(&E, fusion->operands[k]->shape.element_type);
    if (E.body.failed || E.functions.failed) st = VKHLO_NO_MEMORY();
    else st = glsl_builder_check(&E.glsl);
  }
  if (!st) {
    if (E.features & GLSL_FEATURE_INT64)
      strbuf_append(defs, "#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require\n");
    if (E.features & GLSL_FEATURE_STORAGE8) strbuf_append(defs, "#extension GL_EXT_shader_8bit_storage : require\n");
    if (E.features & GLSL_FEATURE_STORAGE16)
      strbuf_append(defs, "#extension GL_EXT_shader_16bit_storage : require\n");
    for (int k = 0; k < fusion->operand_count; k++)
      strbuf_printf(defs, "layout(std430, set = 0, binding = %d) readonly buffer Buffer%d { %s data[]; } in%d;\n", k, k,
                    glsl_buffer_type_on(target, fusion->operands[k]->shape.element_type), k);
    glsl_append_prelude(tail, E.features);
    if (E.functions.data) strbuf_append(tail, E.functions.data);
    /* a 16-bit convolution's value: its f32 sum rounded once, as the
     * per-element kernel's (elemental.c finish_acc); an 8- or 16-bit
     * integer one's: the low bits of its sum */
    strbuf_printf(tail, "%s vk_conv_epilogue(%s acc, int idx) {\n",
                  glsl_compute_type_on(target, fc->root->shape.element_type),
                  glsl_compute_type_on(target, conv->shape.element_type));
    if (hlo_element_type_bit_width(conv->shape.element_type) < 32) {
      strbuf_append(tail, "  acc = ");
      glsl_append_normalized(tail, conv->shape.element_type, "acc");
      strbuf_append(tail, ";\n");
    }
    strbuf_printf(tail, "%s  return %s;\n}\n", E.body.data ? E.body.data : "", vals[0].s);
    strbuf_append(tail, "#define CONV_EPILOGUE(acc, pos) vk_conv_epilogue(acc, pos)\n");
    *element_reads = ctx.element_reads;
  }
  el_free(&E);
  return st;
}

/* ------------------------------------------------------------ driver */

/* The variant of conv2d_cpu.comp (its hooks). */
typedef struct conv_plan {
  int tp, tc;    /* TILE_P, TILE_C */
  int rows;      /* CONV_ROWS */
  int lhs_words; /* LHS_WORDS: 1 NHWC features, 2 NCHW 1x1 pixels (pxw per load) */
  int pxw;       /* LHS_PXW */
  int rhs_words; /* RHS_WORDS: HWIO weights as words shared by shuffles */
  int out_words; /* OUT_WORDS: 1 NHWC results as words, 2 NCHW 1x1 pixels */
  bool shuffle;  /* weights shared by subgroup shuffles (where the target has them) */
} conv_plan_t;

/* Every stride of |s| but s[skip] a multiple of |m|. */
static bool all_multiple(const int64_t *s, int skip, int64_t m) {
  for (int i = 0; i < 4; i++)
    if (i != skip && s[i] % m) return false;
  return true;
}

/* |out|'s tune key for a convolution of |g| (codegen_kernel_t). */
static void conv_tune_key(const conv_geometry_t *g, codegen_kernel_t *out) {
  const int64_t *l = g->lhs_s, *r = g->rhs_s, *o = g->out_s;
  snprintf(out->tune_key, sizeof out->tune_key,
           "conv_cpu n=%lld c=%lld %lldx%lld o=%lld %lldx%lld k=%lldx%lld g=%lld s=%lldx%lld d=%lldx%lld "
           "ld=%lldx%lld p=%lldx%lld ls=%lld,%lld,%lld,%lld rs=%lld,%lld,%lld,%lld os=%lld,%lld,%lld,%lld",
           (long long)g->n, (long long)g->c, (long long)g->h, (long long)g->w, (long long)g->o, (long long)g->oh,
           (long long)g->ow, (long long)g->kh, (long long)g->kw, (long long)g->g, (long long)g->sh,
           (long long)g->sw, (long long)g->dh, (long long)g->dw, (long long)g->ldh, (long long)g->ldw,
           (long long)g->ph, (long long)g->pw, (long long)l[0], (long long)l[1], (long long)l[2], (long long)l[3],
           (long long)r[0], (long long)r[1], (long long)r[2], (long long)r[3], (long long)o[0], (long long)o[1],
           (long long)o[2], (long long)o[3]);
}

static void pick_plan(const codegen_target_t *target, const conv_geometry_t *g, bool f32, conv_plan_t *pl,
                      codegen_kernel_t *out) {
  int64_t og = g->o / g->g, np = g->oh * g->ow;
  /* words of f32 only: 16-bit operands or results go by elements */
  bool tuned = target->conv != CODEGEN_CONV_GENERIC, words = target->shader_int64 && f32;
  memset(pl, 0, sizeof *pl);
  pl->tc = og % 16 == 0 ? 16 : og % 8 == 0 ? 8 : og % 4 == 0 ? 4 : og % 2 == 0 ? 2 : 1;
  pl->tp = 8;
  pl->shuffle = !target->conv_no_shuffle;
  if (tuned) {
    int pxw = np % 8 == 0 && g->lhs_s[1] % 8 == 0 && g->lhs_s[0] % 8 == 0   ? 8
              : np % 4 == 0 && g->lhs_s[1] % 4 == 0 && g->lhs_s[0] % 4 == 0 ? 4
                                                                              : 0;
    if (g->kw > 1) {
      /* a window wider than 1: tiles along output rows share their inputs
       * (scalar loads: a row's SPAN u64vec4 measured slower) */
      pl->rows = 1;
      pl->tp = g->ow % 8 == 0 ? 8 : g->ow % 7 == 0 ? 7 : g->ow >= 8 ? 8 : (int)g->ow;
    } else if (words && g->lhs_s[1] == 1 && (g->c / g->g) % 8 == 0 && all_multiple(g->lhs_s, 1, 8)) {
      /* input features consecutive (NHWC): 8 per load */
      pl->lhs_words = 1;
    } else if (words && g->kh == 1 && !g->check && g->sh == 1 && g->sw == 1 && g->lhs_s[3] == 1 &&
               g->lhs_s[2] == g->w && g->ow == g->w && g->oh == g->h && pxw > 0) {
      /* NCHW 1x1 of stride 1 without padding: the tile's pixels are
       * consecutive, 8 per load (4 where the image's pixels are a
       * multiple of 4 but not of 8, as 14x14, with twice the features) */
      pl->lhs_words = 2;
      pl->pxw = pxw;
      if (pxw == 4) {
        pl->tp = 4;
        if (og % 32 == 0) pl->tc = 32;
      }
    }
    /* flattened tiles of 7 where that divides the pixels and 8 does not
     * (14x14 and 7x7 images: no tile of repeated pixels) */
    if (!pl->rows && pl->lhs_words != 2 && np % 8 != 0 && np % 7 == 0) pl->tp = 7;
  }
  /* a tuning candidate (features; 0 pixels: the default's), else
   * $VKHLO_CONV_TILE (measurements), else a tuned choice, where valid */
  static const int features[][2] = {{0, 8}, {0, 16}, {0, 32}};
  int p = target->conv_tile_p, c = target->conv_tile_c;
  if (tuned) { /* not the generic baseline */
    conv_tune_key(g, out);
    out->tune_candidates = 3;
    if (!codegen_tile_request(target, out->tune_key, features, 3, pl->tp, pl->tc, p, c, &p, &c)) p = c = 0;
  }
  if (p >= 1 && p <= 16 && c >= 1 && c <= 32 && og % c == 0 && (!pl->rows || p <= g->ow) &&
      (pl->lhs_words != 2 || (p % pl->pxw == 0 && np % p == 0))) {
    pl->tp = p;
    pl->tc = c;
  }
  out->tune_a = pl->tp;
  out->tune_b = pl->tc;
  if (tuned && words) {
    /* weights with consecutive output features (HWIO) shared by the
     * subgroup as 64-bit words, two features each */
    uint32_t sgs = target->subgroup_size;
    pl->rhs_words = g->rhs_s[0] == 1 && pl->shuffle && target->subgroup_shuffle && sgs >= 2 &&
                    pl->tc % (2 * (int)sgs) == 0 && all_multiple(g->rhs_s, 0, 2);
    /* results with consecutive output features (NHWC): 8 per store */
    pl->out_words = g->out_s[1] == 1 && pl->tc % 8 == 0 && all_multiple(g->out_s, 1, 8);
    /* results of a flattened NCHW tile: its pixels consecutive there too */
    if (pl->lhs_words == 2 && g->out_s[3] == 1 && g->out_s[2] == g->ow && g->out_s[1] % pl->pxw == 0 &&
        g->out_s[0] % pl->pxw == 0 && pl->tp % pl->pxw == 0 && np % pl->tp == 0)
      pl->out_words = 2;
  }
}

/* Texel views of the input and the weights (the CONV_*_AT hooks of
 * conv2d_cpu.comp) where the target reads CPU kernels' operands through
 * them: words through RGBA32UI views (u64vec4 inputs two texels per word,
 * u64vec2 inputs one; the uint64_t weight words as halves of u64vec2
 * texels), elements through R32UI views.  The views' bindings follow the
 * storage ones, word views then element views, each in operand order
 * (codegen_declare_word_view).  |lhs_word| / |rhs_word|: the word type the
 * kernel reads the operand in, or NULL where it reads elements.  No view
 * of the input and weights is declared when both are one binding.  The
 * operands in |epilogue_reads| (a fusion's epilogue, emit_epilogue) get
 * their in<p>_at macros here too, element views where the others have
 * them.  *texel_inputs and *scalar_inputs (zeroed by the caller) get the
 * views' operand bits, as in codegen_kernel_t. */
static void declare_conv_views(strbuf_t *sb, const codegen_target_t *target, const hlo_instruction_t *instr,
                               bool fused, int lhs_b, int rhs_b, const char *lhs_word, const char *rhs_word,
                               uint64_t epilogue_reads, uint64_t *texel_inputs, uint64_t *scalar_inputs) {
  if (!target->texel_words || lhs_b == rhs_b) {
    for (int k = 0; k < instr->operand_count && k < 64; k++)
      if (epilogue_reads >> k & 1) codegen_declare_element_view(sb, target, instr, k, false, 0, 0, scalar_inputs);
    return;
  }
  int first = instr->operand_count + 1;
  int ks[2] = {lhs_b < rhs_b ? lhs_b : rhs_b, lhs_b < rhs_b ? rhs_b : lhs_b};
  unsigned features = 0;
  strbuf_t decl;
  strbuf_init(&decl, sb->allocator);
  for (int i = 0; i < 2; i++) {
    int k = ks[i];
    const char *word = k == lhs_b ? lhs_word : rhs_word;
    if (!word) continue;
    bool rhs = k == rhs_b, halves = rhs && strcmp(word, "uint64_t") == 0;
    /* the weights' uint64_t words as halves of u64vec2 ones */
    codegen_declare_word_view(&decl, target, instr, k, halves ? "u64vec2" : word, first, texel_inputs, &features);
    if (halves) strbuf_printf(&decl, "#define CONV_RHS_W_AT(i) conv_word_half(in%dw_at((i) >> 1), (i))\n", k);
    else strbuf_printf(&decl, "#define CONV_%s_W_AT(i) in%dw_at(i)\n", rhs ? "RHS" : "LHS", k);
  }
  /* element views in operand order (their bindings follow that order) */
  for (int k = 0; k < instr->operand_count && k < 64; k++) {
    bool conv_operand = (k == lhs_b || k == rhs_b) && (k == lhs_b ? lhs_word : rhs_word) == NULL;
    if (!conv_operand) {
      if (epilogue_reads >> k & 1) /* also an operand read in words (a view of each kind) */
        codegen_declare_element_view(&decl, target, instr, k, true, first, *texel_inputs, scalar_inputs);
      continue;
    }
    /* the storage-buffer form codegen_declare_element_view falls back on
     * (a fusion's epilogue has declared its operands already) */
    if (!fused)
      strbuf_printf(&decl, "layout(std430, set = 0, binding = %d) readonly buffer Buffer%d { float data[]; } in%d;\n",
                    k, k, k);
    codegen_declare_element_view(&decl, target, instr, k, true, first, *texel_inputs, scalar_inputs);
    strbuf_printf(&decl, "#define CONV_%s_AT(i) in%d_at(i)\n", k == lhs_b ? "LHS" : "RHS", k);
  }
  if (lhs_word || rhs_word) { /* words: the kernel enables int64 too */
    strbuf_append(sb, "#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require\n");
    if (features & GLSL_HELPERS_TEXEL)
      glsl_append_prelude_pieces(sb, GLSL_HELPERS_TEXEL | GLSL_FEATURE_INT64, (size_t)-1, false);
  }
  if (rhs_word && strcmp(rhs_word, "uint64_t") == 0)
    strbuf_append(sb, "uint64_t conv_word_half(u64vec2 w, int i) { return (i & 1) != 0 ? w.y : w.x; }\n");
  if (decl.data) strbuf_append(sb, decl.data);
  if (decl.failed) sb->failed = true;
  strbuf_free(&decl);
}

/* 16-bit and integer convolutions.  f16/bf16 operands (into their own
 * type or f32) take the same kernels by elements: CONV_LHS_AT /
 * CONV_RHS_AT load an element as its f32 value (the per-element kernel's
 * load), the kernel sums the products in f32 (each product of two 16-bit
 * values exact), the sum is rounded once to the convolution's type
 * (CONV_EPILOGUE, or the epilogue function's first statement) and
 * CONV_STORE narrows the result into its 16-bit storage.  The per-element
 * kernel computes the same sums in another order, so results may differ
 * from it by the f32 sum's last bit before the rounding.  Integers (8, 16
 * or 32 bits, CONV_INT): loaded widened by their signedness, int sums
 * wrapping modulo 2^32, the low bits of an 8- or 16-bit result taken in
 * the same place: the per-element kernel's values exactly, in any order.
 * No words (the layouts' word variants are f32); where the target has
 * texel views the input and weights are read through R32UI views, 1, 2 or
 * 4 elements per texel (conv_texel_*: one gather per lane where a storage
 * buffer costs lavapipe a loop over the lanes; a bf16 ResNet-50 NHWC
 * 1.17-1.22x against VKHLO_TEXEL_WORDS=0).  The declarations of the
 * operands (a fusion's epilogue has made them already), the hooks, and the
 * epilogue's element reads into |sb|. */
/* Element i of binding |k| (of type |t|: 16-bit floats, 8-, 16- or 32-bit
 * integers, f32) read from its R32UI texel view in<k>s, 32 / bits
 * elements per texel, as the per-element kernel's load gives it. */
static void texel_element_load(strbuf_t *sb, hlo_element_type_t t, int k) {
  int bits = hlo_element_type_bit_width(t);
  const char *lg = bits == 8 ? "2" : bits == 16 ? "1" : "0";
  strbuf_printf(sb, "conv_texel_%s(texelFetch(in%ds, int(i) >> %s).x, %d * (int(i) & %d))",
                t == HLO_F16 ? "f16" : t == HLO_BF16 ? "bf16" : t == HLO_F32 ? "f32"
                : hlo_element_type_is_signed_int(t) ? "s" : "u",
                k, lg, bits, bits == 32 ? 0 : 32 / bits - 1);
}

static void declare_elements(strbuf_t *sb, const codegen_target_t *target, const hlo_instruction_t *instr,
                             const hlo_instruction_t *conv, bool fused, int lhs_b, int rhs_b, int out_b,
                             uint64_t epilogue_reads, uint64_t *scalar_inputs) {
  hlo_element_type_t ct = conv->operands[0]->shape.element_type, rt = instr->shape.element_type;
  bool integer = codegen_kernel_int_type(ct);
  if (integer) strbuf_append(sb, "#define CONV_INT 1\n#define GEMM_INT 1\n");
  /* the texel decoders (texel_element_load): the element at bit |at| */
  int bits = hlo_element_type_bit_width(ct);
  strbuf_printf(sb,
                "float conv_texel_f16(uint x, int at) { return unpackHalf2x16(x >> at).x; }\n"
                "float conv_texel_bf16(uint x, int at) { return uintBitsToFloat((x >> at) << 16); }\n"
                "float conv_texel_f32(uint x, int at) { return uintBitsToFloat(x); }\n"
                "int conv_texel_s(uint x, int at) { return bitfieldExtract(int(x), at, %d); }\n"
                "uint conv_texel_u(uint x, int at) { return bitfieldExtract(x, at, %d); }\n",
                bits, bits);
  if (!fused) { /* a lone convolution: its storage, extensions and rounding */
    glsl_type_t a, r;
    unsigned features = (glsl_type_lookup(ct, &a) ? a.features : 0) | (glsl_type_lookup(rt, &r) ? r.features : 0);
    if (features & GLSL_FEATURE_STORAGE8) strbuf_append(sb, "#extension GL_EXT_shader_8bit_storage : require\n");
    if (features & GLSL_FEATURE_STORAGE16) strbuf_append(sb, "#extension GL_EXT_shader_16bit_storage : require\n");
    for (int k = 0; k < 2; k++)
      strbuf_printf(sb, "layout(std430, set = 0, binding = %d) readonly buffer Buffer%d { %s data[]; } in%d;\n", k, k,
                    glsl_buffer_type_on(target, ct), k);
    glsl_append_prelude(sb, features | GLSL_HELPERS_FLOAT);
    strbuf_append(sb, "#define CONV_EPILOGUE(acc, pos) ");
    glsl_append_normalized(sb, conv->shape.element_type, "(acc)");
    strbuf_append(sb, "\n");
  }
  /* element views in operand order (their bindings follow that order,
   * after the storage ones: codegen_declare_element_view): the epilogue's
   * f32 reads, and the input and weights as R32UI texels holding 1, 2 or
   * 4 elements (texel_element_load) */
  bool views = target->texel_words && lhs_b != rhs_b;
  int first = instr->operand_count + 1;
  bool viewed[2] = {false, false};
  for (int k = 0; k < instr->operand_count && k < 64; k++) {
    if (views && (k == lhs_b || k == rhs_b)) {
      uint64_t bytes = hlo_shape_size_bytes(&instr->operands[k]->shape);
      int n = __builtin_popcountll(*scalar_inputs);
      if (bytes >= 4 && bytes % 4 == 0 && bytes / 4 <= target->max_texel_buffer_elements && n < 16) {
        strbuf_printf(sb, "layout(set = 0, binding = %d) uniform usamplerBuffer in%ds;\n", first + n, k);
        *scalar_inputs |= 1ull << k;
        viewed[k == rhs_b] = true;
      }
    }
    if (epilogue_reads >> k & 1) {
      /* (the epilogue reads f32 operands only through in<k>_at) */
      if ((*scalar_inputs >> k & 1) && instr->operands[k]->shape.element_type == HLO_F32)
        strbuf_printf(sb, "#define in%d_at(i) uintBitsToFloat(texelFetch(in%ds, int(i)).x)\n", k, k);
      else
        codegen_declare_element_view(sb, target, instr, k, views, first, 0, scalar_inputs);
    }
  }
  char buffer[16];
  for (int k = 0; k < 2; k++) {
    int b = k ? rhs_b : lhs_b;
    snprintf(buffer, sizeof buffer, "in%d", b);
    strbuf_printf(sb, "#define CONV_%s_AT(i) %s", k ? "RHS" : "LHS", integer ? "int(" : "");
    if (viewed[k]) texel_element_load(sb, ct, b);
    else glsl_append_load_element(sb, target, ct, buffer, "(i)");
    strbuf_append(sb, integer ? ")\n" : "\n");
  }
  if (rt != HLO_F32) {
    strbuf_printf(sb, "layout(std430, set = 0, binding = %d) writeonly buffer ConvOut16 { %s data[]; } conv_out16;\n",
                  out_b, glsl_buffer_type_on(target, rt));
    strbuf_append(sb, "#define CONV_STORE(pos, v) ");
    glsl_append_store_element(sb, target, rt, "conv_out16", "(pos)", "(v)");
    strbuf_append(sb, "\n");
  }
}

/* The depthwise kernel's features by words (conv_depthwise_cpu.comp,
 * CONV_WORDS): f32 (the caller checks), 64-bit integers in shaders, a
 * channel multiplier of 1, features minor-most in the input, weights and
 * result, 8 | C, and every other stride a multiple of 8 (each word at a
 * multiple of 8 elements). */
#define DEPTHWISE_WORDS_TILE_W 4
static bool depthwise_words(const codegen_target_t *target, const conv_geometry_t *g) {
  if (!target->shader_int64 || g->o != g->g || g->o % 8 != 0 || g->lhs_s[1] != 1 || g->rhs_s[0] != 1 ||
      g->out_s[1] != 1)
    return false;
  const int64_t strides[] = {g->lhs_s[0], g->lhs_s[2], g->lhs_s[3], g->rhs_s[2], g->rhs_s[3],
                             g->out_s[0], g->out_s[2], g->out_s[3]};
  for (size_t i = 0; i < sizeof strides / sizeof strides[0]; i++)
    if (strides[i] % 8 != 0) return false;
  return true;
}

vkhlo_status_t codegen_emit_conv(const codegen_target_t *target, const hlo_instruction_t *instr,
                                 codegen_kernel_t *out, bool *handled) {
  *handled = false;
  /* conv_gpu.glsl on GPUs (or where asked for), the CPU kernels on CPU
   * devices; nothing (the per-element kernel) otherwise */
  bool gpu = target->conv == CODEGEN_CONV_GPU || (target->conv == CODEGEN_CONV_AUTO && !target->is_cpu);
  if (target->conv == CODEGEN_CONV_ELEMENTAL || (!target->is_cpu && !gpu)) return NULL;
  bool generic = target->conv == CODEGEN_CONV_GENERIC;
  const hlo_instruction_t *conv = instr->opcode == HLO_OPCODE_CONVOLUTION ? instr
                                  : instr->opcode == HLO_OPCODE_FUSION    ? fused_conv(instr)
                                                                          : NULL;
  conv_geometry_t g;
  if (!conv || !geometry_of(conv, &g)) return NULL;
  /* 8- and 16-bit operands or results (see "16-bit and integer
   * convolutions"): where the device stores them natively */
  hlo_element_type_t ct = conv->operands[0]->shape.element_type, rt = instr->shape.element_type;
  bool f32 = ct == HLO_F32 && rt == HLO_F32 && conv->shape.element_type == HLO_F32;
  if (glsl_type_is_packed(target, ct) || glsl_type_is_packed(target, rt)) return NULL;
  /* depthwise: one input feature per group, more than one group */
  bool depthwise = g.g > 1 && g.c == g.g, dw_words = false;
  int tp = 0, tc = 0, lp = 0, tw = 0;
  conv_plan_t plan = {0};
  uint64_t groups;
  if (gpu) {
    /* gemm_gpu.comp's 64 x 64 tiles of pixels x features per group: chosen
     * on a GPU for at least 16 features per group (depthwise and narrow
     * groups keep the per-element kernel, which wastes no columns), taken
     * for every convolution where asked for (the tests) */
    if ((target->conv == CODEGEN_CONV_AUTO && (depthwise || g.o / g.g < 16)) || !codegen_target_fits_gemm_gpu(target))
      return NULL;
    groups = (uint64_t)g.g * (((uint64_t)g.n * (uint64_t)(g.oh * g.ow) + 63) / 64) * ((uint64_t)(g.o / g.g + 63) / 64);
  } else if (depthwise) {
    dw_words = f32 && depthwise_words(target, &g);
    int most = dw_words ? DEPTHWISE_WORDS_TILE_W : 8;
    tw = g.ow < most ? (int)g.ow : most;
    uint64_t total = (uint64_t)g.n * (uint64_t)(dw_words ? g.o / 8 : g.o) * (uint64_t)g.oh * (uint64_t)((g.ow + tw - 1) / tw);
    groups = (total + CODEGEN_LOCAL_SIZE_X - 1) / CODEGEN_LOCAL_SIZE_X;
  } else {
    pick_plan(target, &g, f32, &plan, out);
    tp = plan.tp;
    tc = plan.tc;
    uint64_t pixel_tiles = plan.rows ? (uint64_t)g.oh * (uint64_t)((g.ow + tp - 1) / tp)
                                     : (uint64_t)((g.oh * g.ow + tp - 1) / tp);
    uint64_t feature_tiles = (uint64_t)(g.o / tc);
    lp = CODEGEN_LOCAL_SIZE_X; /* pixel tiles per workgroup: 64 or the power of two covering them */
    while (lp > 1 && (uint64_t)lp / 2 >= pixel_tiles) lp /= 2;
    if (!generic) {
      /* the split of the 64 lanes with the fewest idle ones (lanes past
       * the last pixel or feature tile compute nothing): 98 pixel tiles
       * take 8 blocks of 16, not 2 of 64; at least a subgroup of pixel
       * tiles (the weight shuffles) */
      uint64_t min_lp = target->subgroup_shuffle && target->subgroup_size >= 2 ? target->subgroup_size : 1;
      double best = -1;
      for (uint64_t cand = CODEGEN_LOCAL_SIZE_X; cand >= min_lp && cand >= 1; cand /= 2) {
        uint64_t cl = CODEGEN_LOCAL_SIZE_X / cand;
        double used = (double)pixel_tiles * (double)feature_tiles /
                      ((double)((pixel_tiles + cand - 1) / cand * cand) * (double)((feature_tiles + cl - 1) / cl * cl));
        if (used > best + 1e-9) best = used, lp = (int)cand;
      }
    }
    uint64_t lc = CODEGEN_LOCAL_SIZE_X / (uint64_t)lp;
    groups = (uint64_t)g.n * ((pixel_tiles + (uint64_t)lp - 1) / (uint64_t)lp) * ((feature_tiles + lc - 1) / lc);
  }
  if (hlo_shape_element_count(&conv->shape) > 0x7FFFFFFF || hlo_shape_element_count(&conv->operands[0]->shape) > 0x7FFFFFFF ||
      hlo_shape_element_count(&conv->operands[1]->shape) > 0x7FFFFFFF || groups > 0xFFFFFFFFull)
    return NULL;
  /* weights shared by subgroup shuffles: each subgroup within one feature
   * tile (lp a multiple of the subgroup size) */
  uint32_t sgsz = target->subgroup_size;
  int sgs = !depthwise && plan.shuffle && target->subgroup_shuffle && sgsz >= 2 && sgsz <= (uint32_t)lp && (sgsz & (sgsz - 1)) == 0
                ? (int)sgsz
                : 0;
  uint64_t maxx = target->max_workgroup_count[0] ? target->max_workgroup_count[0] : 65535;
  uint64_t maxy = target->max_workgroup_count[1] ? target->max_workgroup_count[1] : 65535;
  uint64_t gx = groups < maxx ? groups : maxx, gy = (groups + gx - 1) / gx;
  if (gy > maxy) return NULL;

  /* on GPUs gemm_gpu.comp computes it, through conv_gpu.glsl's hooks */
  const char *file_name = gpu ? "gemm_gpu.comp" : depthwise ? "conv_depthwise_cpu.comp" : "conv2d_cpu.comp";
  const shaders_file_t *file = shaders_find(file_name), *hooks = gpu ? shaders_find("conv_gpu.glsl") : NULL;
  if (!file || (gpu && !hooks)) return VKHLO_INTERNAL("shaders/%s is not embedded", file ? "conv_gpu.glsl" : file_name);
  const char *body = strchr(file->text, '\n'); /* after #version */
  if (!body) return VKHLO_INTERNAL("shaders/%s has no #version line", file_name);

  bool fused = instr->opcode == HLO_OPCODE_FUSION;
  int lhs_b = fused ? conv->operands[0]->parameter_number : 0;
  int rhs_b = fused ? conv->operands[1]->parameter_number : 1;
  int out_b = instr->operand_count;
  strbuf_t sb;
  strbuf_init(&sb, out->allocator);
  strbuf_append(&sb, "#version 450\n");
  strbuf_printf(&sb, "// %s: stablehlo.%s", instr->name, hlo_opcode_name(instr->opcode));
  if (conv->loc.file) strbuf_printf(&sb, " (convolution at %s:%d:%d)", conv->loc.file, conv->loc.line, conv->loc.col);
  strbuf_printf(&sb, ", shaders/%s%s\n", gpu ? "conv_gpu.glsl with shaders/" : "", file_name);
  strbuf_t tail; /* the epilogue function, after the views */
  strbuf_init(&tail, out->allocator);
  uint64_t epilogue_reads = 0;
  if (fused) {
    vkhlo_status_t st = emit_epilogue(target, instr, conv, &sb, &tail, &epilogue_reads);
    if (st) {
      strbuf_free(&sb);
      strbuf_free(&tail);
      return st;
    }
  }
  /* the depthwise kernel reads elements only (its plan is all zero) */
  uint64_t texel_inputs = 0, scalar_inputs = 0;
  const char *lw = plan.lhs_words == 1 || (plan.lhs_words == 2 && plan.pxw != 4) ? "u64vec4"
                   : plan.lhs_words == 2                                        ? "u64vec2"
                                                                                : NULL;
  if (f32)
    declare_conv_views(&sb, target, instr, fused, lhs_b, rhs_b, dw_words ? "u64vec4" : lw,
                       dw_words ? "u64vec4" : plan.rhs_words == 1 && sgs > 0 ? "uint64_t" : NULL, epilogue_reads,
                       &texel_inputs, &scalar_inputs);
  else
    declare_elements(&sb, target, instr, conv, fused, lhs_b, rhs_b, out_b, epilogue_reads, &scalar_inputs);
  if (tail.data) strbuf_append(&sb, tail.data);
  if (tail.failed) sb.failed = true;
  strbuf_free(&tail);
  /* the geometry, layouts and bindings (every kernel), then the CPU
   * kernels' tile and variant hooks */
  typedef struct {
    const char *name;
    int64_t v;
  } conv_define_t;
  const conv_define_t defs[] = {
      {"CONV_N", g.n},        {"CONV_C", g.c},        {"CONV_H", g.h},        {"CONV_W", g.w},
      {"CONV_O", g.o},        {"CONV_OH", g.oh},      {"CONV_OW", g.ow},      {"CONV_KH", g.kh},
      {"CONV_KW", g.kw},      {"CONV_G", g.g},        {"CONV_SH", g.sh},      {"CONV_SW", g.sw},
      {"CONV_DH", g.dh},      {"CONV_DW", g.dw},      {"CONV_LDH", g.ldh},    {"CONV_LDW", g.ldw},
      {"CONV_PH", g.ph},      {"CONV_PW", g.pw},      {"CONV_REV_H", g.rev_h}, {"CONV_REV_W", g.rev_w},
      {"CONV_CHECK", g.check}, {"LHS_SN", g.lhs_s[0]}, {"LHS_SC", g.lhs_s[1]}, {"LHS_SH", g.lhs_s[2]},
      {"LHS_SW", g.lhs_s[3]}, {"RHS_SO", g.rhs_s[0]}, {"RHS_SI", g.rhs_s[1]}, {"RHS_SH", g.rhs_s[2]},
      {"RHS_SW", g.rhs_s[3]}, {"OUT_SN", g.out_s[0]}, {"OUT_SC", g.out_s[1]}, {"OUT_SH", g.out_s[2]},
      {"OUT_SW", g.out_s[3]}, {"LHS_BINDING", lhs_b}, {"RHS_BINDING", rhs_b}, {"OUT_BINDING", out_b},
  };
  const conv_define_t cpu_defs[] = {
      {"TILE_P", tp},         {"TILE_C", tc},         {"CONV_LP", lp},        {"TILE_W", tw},
      {"CONV_FEATURE_MINOR", g.out_s[1] == 1}, {"CONV_SGS", sgs}, {"CONV_ROWS", plan.rows},
      {"LHS_WORDS", plan.lhs_words}, {"RHS_WORDS", plan.rhs_words}, {"OUT_WORDS", plan.out_words},
      {"LHS_PXW", plan.pxw ? plan.pxw : 8}, {"CONV_WORDS", dw_words},
  };
  for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++)
    strbuf_printf(&sb, "#define %s %lld\n", defs[i].name, (long long)defs[i].v);
  for (size_t i = 0; !gpu && i < sizeof cpu_defs / sizeof cpu_defs[0]; i++)
    strbuf_printf(&sb, "#define %s %lld\n", cpu_defs[i].name, (long long)cpu_defs[i].v);
  if (hooks) strbuf_appendn(&sb, hooks->text, hooks->size_bytes);
  strbuf_append(&sb, "#line 2\n");
  strbuf_append(&sb, body + 1);
  char *glsl = strbuf_take(&sb);
  char *name = vkhlo_malloc(out->allocator, strlen(instr->name) + 1);
  if (!glsl || !name) {
    vkhlo_free(out->allocator, glsl);
    vkhlo_free(out->allocator, name);
    return VKHLO_NO_MEMORY();
  }
  size_t i = 0;
  for (const char *p = instr->name; *p; p++)
    name[i++] = ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')) ? *p : '_';
  name[i] = 0;
  /* |out| was zeroed by codegen_emit_instruction; the tune fields are set */
  out->name = name;
  out->glsl = glsl;
  out->local_size_x = gpu ? 256 : CODEGEN_LOCAL_SIZE_X;
  out->group_count[0] = (uint32_t)gx;
  out->group_count[1] = (uint32_t)gy;
  out->group_count[2] = 1;
  out->input_count = instr->operand_count;
  out->output_count = 1;
  out->texel_inputs = texel_inputs;
  out->scalar_inputs = scalar_inputs;
  *handled = true;
  return NULL;
}
