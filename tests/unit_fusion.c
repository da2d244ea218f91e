/*
 * Unit tests for the fusion pass (codegen/fusion.c) and fused kernels
 * (codegen/emit_fusion.c).
 *
 * Each test parses a small StableHLO program, runs codegen_fusion_pass
 * alone, checks the module still verifies, and asserts the clusters the
 * cost model promises: how many fusion instructions, their kinds, which
 * ops ended up inside, and which values stayed in memory.  Every fused
 * kernel is then emitted and compiled to SPIR-V (glslang + spirv-val), so
 * the generated GLSL is checked too.  Numeric agreement of fused and
 * unfused programs is covered by the conformance runner and the chess
 * model (they run with fusion on by default).
 *
 * Set VKHLO_TEST_DUMP=1 to print the module after fusion and every fused
 * kernel's GLSL.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "codegen/kernel.h"
#include "codegen/passes.h"
#include "codegen/spirv.h"
#include "hlo/hlo.h"


typedef struct fixture {
  spirv_compiler_t *sc;
  codegen_target_t target;
  hlo_module_t *m;
} fixture_t;

static int setup(void **state) {
  fixture_t *f = calloc(1, sizeof *f);
  spirv_compiler_options_t opts = {.disable_cache = true, .optimize = false};
  vkhlo_status_t st = spirv_compiler_create(&opts, &f->sc);
  if (st) {
    fprintf(stderr, "%s\n", vkhlo_status_message(st));
    vkhlo_status_free(st);
    free(f);
    return -1;
  }
  codegen_target_default(&f->target);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture_t *f = *state;
  hlo_module_destroy(f->m);
  spirv_compiler_destroy(f->sc);
  free(f);
  return 0;
}

static void check_ok(vkhlo_status_t st) {
  if (st) {
    fprintf(stderr, "unexpected error: %s\n", vkhlo_status_message(st));
    vkhlo_status_free(st);
    fail();
  }
}

/* Parses |text|, runs the fusion pass, verifies, compiles every fused
 * kernel of the entry computation. */
static hlo_module_t *fuse(fixture_t *f, const char *text) {
  hlo_module_destroy(f->m);
  f->m = NULL;
  hlo_parse_options_t po = {NULL, 0, 0, NULL, NULL, 0};
  check_ok(hlo_parse(text, strlen(text), "test.mlir", &po, &f->m));
  bool changed = false;
  check_ok(codegen_fusion_pass(f->m, &f->target, &changed));
  check_ok(hlo_verify(f->m));
  bool dump = getenv("VKHLO_TEST_DUMP") != NULL;
  if (dump) {
    char *s = hlo_module_to_string(f->m);
    fprintf(stderr, "%s\n", s);
    free(s);
  }
  const hlo_computation_t *c = f->m->entry_computation;
  for (int i = 0; i < c->instruction_count; i++) {
    const hlo_instruction_t *in = c->instructions[i];
    if (in->opcode != HLO_OPCODE_FUSION) continue;
    codegen_kernel_t k;
    check_ok(codegen_emit_instruction(&f->target, NULL, in, &k));
    if (dump) fprintf(stderr, "%s\n", k.glsl);
    uint32_t *words = NULL;
    size_t size = 0;
    check_ok(spirv_compile_glsl(f->sc, k.name, k.glsl, &words, &size));
    assert_true(size > 0);
    free(words);
    codegen_kernel_free(&k);
  }
  return f->m;
}

static int count_opcode(const hlo_computation_t *c, hlo_opcode_t op) {
  int n = 0;
  for (int i = 0; i < c->instruction_count; i++) n += c->instructions[i]->opcode == op;
  return n;
}

/* The i-th fusion instruction of the entry computation. */
static const hlo_instruction_t *nth_fusion(const hlo_module_t *m, int i) {
  const hlo_computation_t *c = m->entry_computation;
  for (int j = 0; j < c->instruction_count; j++)
    if (c->instructions[j]->opcode == HLO_OPCODE_FUSION && i-- == 0) return c->instructions[j];
  return NULL;
}

static const hlo_computation_t *fused(const hlo_instruction_t *fusion) {
  assert_non_null(fusion);
  assert_int_equal(fusion->called_count, 1);
  return fusion->called_computations[0];
}

/* ------------------------------------------------------------- tests */

static const char softmax[] =
    "func.func @main(%x: tensor<4x8x16xf32>) -> tensor<4x8x16xf32> {\n"
    "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
    "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [2] : (tensor<4x8x16xf32>, tensor<f32>) -> tensor<4x8xf32>\n"
    "  %mb = stablehlo.broadcast_in_dim %m, dims = [0, 1] : (tensor<4x8xf32>) -> tensor<4x8x16xf32>\n"
    "  %d = stablehlo.subtract %x, %mb : tensor<4x8x16xf32>\n"
    "  %e = stablehlo.exponential %d : tensor<4x8x16xf32>\n"
    "  %s = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [2] : (tensor<4x8x16xf32>, tensor<f32>) -> tensor<4x8xf32>\n"
    "  %sb = stablehlo.broadcast_in_dim %s, dims = [0, 1] : (tensor<4x8xf32>) -> tensor<4x8x16xf32>\n"
    "  %y = stablehlo.divide %e, %sb : tensor<4x8x16xf32>\n"
    "  return %y : tensor<4x8x16xf32>\n"
    "}\n";

/* Softmax: max (input fusion), exp -> sum (input fusion with the
 * subtract and exp as its input), exp / sum (loop fusion recomputing the
 * cheap exp).  Neither reduce is fused into a consumer that reads it
 * through a broadcast. */
static void test_softmax(void **state) {
  hlo_module_t *m = fuse(*state, softmax);
  const hlo_computation_t *c = m->entry_computation;
  assert_int_equal(count_opcode(c, HLO_OPCODE_FUSION), 3);
  assert_int_equal(count_opcode(c, HLO_OPCODE_REDUCE), 0);
  assert_int_equal(count_opcode(c, HLO_OPCODE_EXPONENTIAL), 0);
  const hlo_instruction_t *fmax = nth_fusion(m, 0), *fsum = nth_fusion(m, 1), *fdiv = nth_fusion(m, 2);
  assert_int_equal(fmax->attrs.fusion_kind, HLO_FUSION_INPUT);
  assert_int_equal(fsum->attrs.fusion_kind, HLO_FUSION_INPUT);
  assert_int_equal(fdiv->attrs.fusion_kind, HLO_FUSION_LOOP);
  assert_int_equal(count_opcode(fused(fsum), HLO_OPCODE_EXPONENTIAL), 1);
  assert_int_equal(count_opcode(fused(fsum), HLO_OPCODE_REDUCE), 1);
  assert_int_equal(count_opcode(fused(fdiv), HLO_OPCODE_REDUCE), 0);
  assert_int_equal(count_opcode(fused(fdiv), HLO_OPCODE_EXPONENTIAL), 1);
  /* the divide reads x, max and sum from memory */
  assert_int_equal(fdiv->operand_count, 3);
  assert_ptr_equal(c->root, fdiv);
}

/* Layer norm with mean and mean of squares: the two sibling reductions
 * of x become one multi-output input fusion, the normalization one loop
 * fusion (which recomputes the cheap mean = sum / n, variance and rsqrt
 * per element instead of materializing them). */
static void test_layer_norm_multi_output(void **state) {
  hlo_module_t *m = fuse(*state,
      "func.func @main(%x: tensor<8x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<8x64xf32> {\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %n = stablehlo.constant dense<64.0> : tensor<8xf32>\n"
      "  %eps = stablehlo.constant dense<1.0e-5> : tensor<f32>\n"
      "  %s = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [1] : (tensor<8x64xf32>, tensor<f32>) -> tensor<8xf32>\n"
      "  %x2 = stablehlo.multiply %x, %x : tensor<8x64xf32>\n"
      "  %s2 = stablehlo.reduce(%x2 init: %z) applies stablehlo.add across dimensions = [1] : (tensor<8x64xf32>, tensor<f32>) -> tensor<8xf32>\n"
      "  %mean = stablehlo.divide %s, %n : tensor<8xf32>\n"
      "  %mean2 = stablehlo.divide %s2, %n : tensor<8xf32>\n"
      "  %mm = stablehlo.multiply %mean, %mean : tensor<8xf32>\n"
      "  %var = stablehlo.subtract %mean2, %mm : tensor<8xf32>\n"
      "  %epsb = stablehlo.broadcast_in_dim %eps, dims = [] : (tensor<f32>) -> tensor<8xf32>\n"
      "  %ve = stablehlo.add %var, %epsb : tensor<8xf32>\n"
      "  %rs = stablehlo.rsqrt %ve : tensor<8xf32>\n"
      "  %meanb = stablehlo.broadcast_in_dim %mean, dims = [0] : (tensor<8xf32>) -> tensor<8x64xf32>\n"
      "  %rsb = stablehlo.broadcast_in_dim %rs, dims = [0] : (tensor<8xf32>) -> tensor<8x64xf32>\n"
      "  %gb = stablehlo.broadcast_in_dim %g, dims = [1] : (tensor<64xf32>) -> tensor<8x64xf32>\n"
      "  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<64xf32>) -> tensor<8x64xf32>\n"
      "  %c = stablehlo.subtract %x, %meanb : tensor<8x64xf32>\n"
      "  %y = stablehlo.multiply %c, %rsb : tensor<8x64xf32>\n"
      "  %y2 = stablehlo.multiply %y, %gb : tensor<8x64xf32>\n"
      "  %y3 = stablehlo.add %y2, %bb : tensor<8x64xf32>\n"
      "  return %y3 : tensor<8x64xf32>\n"
      "}\n");
  const hlo_computation_t *c = m->entry_computation;
  assert_int_equal(count_opcode(c, HLO_OPCODE_FUSION), 2);
  const hlo_instruction_t *stats = nth_fusion(m, 0), *norm = nth_fusion(m, 1);
  assert_int_equal(stats->attrs.fusion_kind, HLO_FUSION_INPUT);
  assert_true(hlo_shape_is_tuple(&stats->shape));
  assert_int_equal(stats->shape.tuple_count, 2);
  assert_int_equal(fused(stats)->root->opcode, HLO_OPCODE_TUPLE);
  assert_int_equal(count_opcode(fused(stats), HLO_OPCODE_REDUCE), 2);
  assert_int_equal(stats->operand_count, 1); /* x only: the constants are literals */
  assert_int_equal(count_opcode(c, HLO_OPCODE_GET_TUPLE_ELEMENT), 2);
  assert_int_equal(norm->attrs.fusion_kind, HLO_FUSION_LOOP);
  assert_int_equal(count_opcode(fused(norm), HLO_OPCODE_RSQRT), 1);
  assert_int_equal(count_opcode(fused(norm), HLO_OPCODE_DIVIDE), 2);
  assert_int_equal(count_opcode(fused(norm), HLO_OPCODE_REDUCE), 0);
  /* x, the two sums, gamma, beta */
  assert_int_equal(norm->operand_count, 5);
}

/* dot_general + broadcast bias add + relu: one output fusion. */
static void test_dot_bias_relu(void **state) {
  hlo_module_t *m = fuse(*state,
      "func.func @main(%x: tensor<8x32xf32>, %w: tensor<32x16xf32>, %b: tensor<16xf32>) -> tensor<8x16xf32> {\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %d = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>\n"
      "  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<16xf32>) -> tensor<8x16xf32>\n"
      "  %a = stablehlo.add %d, %bb : tensor<8x16xf32>\n"
      "  %zb = stablehlo.broadcast_in_dim %z, dims = [] : (tensor<f32>) -> tensor<8x16xf32>\n"
      "  %r = stablehlo.maximum %a, %zb : tensor<8x16xf32>\n"
      "  return %r : tensor<8x16xf32>\n"
      "}\n");
  const hlo_computation_t *c = m->entry_computation;
  assert_int_equal(count_opcode(c, HLO_OPCODE_FUSION), 1);
  const hlo_instruction_t *fu = nth_fusion(m, 0);
  assert_int_equal(fu->attrs.fusion_kind, HLO_FUSION_OUTPUT);
  assert_int_equal(fu->operand_count, 3);
  assert_int_equal(count_opcode(fused(fu), HLO_OPCODE_DOT_GENERAL), 1);
  assert_int_equal(count_opcode(fused(fu), HLO_OPCODE_MAXIMUM), 1);
  assert_int_equal(count_opcode(fused(fu), HLO_OPCODE_ADD), 1);
  assert_int_equal(fused(fu)->root->opcode, HLO_OPCODE_MAXIMUM);
}

/* A dot used twice is not fused into either consumer (it would be
 * computed twice); an elementwise producer of a dot operand is not fused
 * into the dot (it would be recomputed per output column), a transpose
 * is. */
static void test_dot_not_duplicated(void **state) {
  hlo_module_t *m = fuse(*state,
      "func.func @main(%x: tensor<8x32xf32>, %w: tensor<16x32xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {\n"
      "  %e = stablehlo.exponential %x : tensor<8x32xf32>\n"
      "  %wt = stablehlo.transpose %w, dims = [1, 0] : (tensor<16x32xf32>) -> tensor<32x16xf32>\n"
      "  %d = stablehlo.dot_general %e, %wt, contracting_dims = [1] x [0] : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>\n"
      "  %a = stablehlo.add %d, %d : tensor<8x16xf32>\n"
      "  %n = stablehlo.negate %d : tensor<8x16xf32>\n"
      "  return %a, %n : tensor<8x16xf32>, tensor<8x16xf32>\n"
      "}\n");
  const hlo_computation_t *c = m->entry_computation;
  /* exp stays a kernel, the dot fusion holds the transpose */
  assert_int_equal(count_opcode(c, HLO_OPCODE_EXPONENTIAL), 1);
  int dots = 0;
  for (int i = 0; i < c->instruction_count; i++) {
    const hlo_instruction_t *in = c->instructions[i];
    if (in->opcode == HLO_OPCODE_DOT_GENERAL) dots++;
    if (in->opcode != HLO_OPCODE_FUSION) continue;
    int d = count_opcode(fused(in), HLO_OPCODE_DOT_GENERAL);
    dots += d;
    if (d) {
      assert_int_equal(count_opcode(fused(in), HLO_OPCODE_TRANSPOSE), 1);
      assert_int_equal(count_opcode(fused(in), HLO_OPCODE_EXPONENTIAL), 0);
    }
  }
  assert_int_equal(dots, 1);
}

/* add(conv(x) * s, conv(y)) (ResNet's projection shortcut, NHWC/HWIO):
 * both convolutions are exclusive with identity paths to the add, but a
 * fusion takes one of them (the library kernels take one contraction and
 * its epilogue); the other is a fusion or kernel of its own. */
static void test_one_convolution_per_fusion(void **state) {
  hlo_module_t *m = fuse(*state,
      "func.func @main(%x: tensor<1x8x8x16xf32>, %y: tensor<1x8x8x8xf32>, %w: tensor<1x1x16x32xf32>, %v: tensor<1x1x8x32xf32>, %s: tensor<32xf32>) -> tensor<1x8x8x32xf32> {\n"
      "  %a = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x16xf32>, tensor<1x1x16x32xf32>) -> tensor<1x8x8x32xf32>\n"
      "  %sb = stablehlo.broadcast_in_dim %s, dims = [3] : (tensor<32xf32>) -> tensor<1x8x8x32xf32>\n"
      "  %as = stablehlo.multiply %a, %sb : tensor<1x8x8x32xf32>\n"
      "  %b = stablehlo.convolution(%y, %v) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x8xf32>, tensor<1x1x8x32xf32>) -> tensor<1x8x8x32xf32>\n"
      "  %r = stablehlo.add %as, %b : tensor<1x8x8x32xf32>\n"
      "  return %r : tensor<1x8x8x32xf32>\n"
      "}\n");
  const hlo_computation_t *c = m->entry_computation;
  int convs = count_opcode(c, HLO_OPCODE_CONVOLUTION), fusions = 0;
  for (int i = 0; i < c->instruction_count; i++) {
    const hlo_instruction_t *in = c->instructions[i];
    if (in->opcode != HLO_OPCODE_FUSION) continue;
    fusions++;
    int k = count_opcode(fused(in), HLO_OPCODE_CONVOLUTION);
    assert_true(k <= 1);
    convs += k;
  }
  assert_int_equal(convs, 2);
  assert_int_equal(c->root->opcode, HLO_OPCODE_FUSION);
  assert_int_equal(count_opcode(fused(c->root), HLO_OPCODE_CONVOLUTION), 1);
  assert_int_equal(count_opcode(fused(c->root), HLO_OPCODE_ADD), 1);
  assert_true(fusions >= 1);
}

/* reduce -> broadcast -> add: the reduce is not fused into the add. */
static void test_reduce_through_broadcast_not_fused(void **state) {
  hlo_module_t *m = fuse(*state,
      "func.func @main(%x: tensor<16x32xf32>) -> tensor<16x32xf32> {\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %s = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [1] : (tensor<16x32xf32>, tensor<f32>) -> tensor<16xf32>\n"
      "  %sb = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<16xf32>) -> tensor<16x32xf32>\n"
      "  %y = stablehlo.add %x, %sb : tensor<16x32xf32>\n"
      "  return %y : tensor<16x32xf32>\n"
      "}\n");
  const hlo_computation_t *c = m->entry_computation;
  const hlo_instruction_t *root = c->root;
  assert_int_equal(root->opcode, HLO_OPCODE_FUSION);
  assert_int_equal(root->attrs.fusion_kind, HLO_FUSION_LOOP);
  assert_int_equal(count_opcode(fused(root), HLO_OPCODE_REDUCE), 0);
  assert_int_equal(count_opcode(fused(root), HLO_OPCODE_BROADCAST_IN_DIM), 1);
  /* the reduce is computed once, in its own input fusion read by the root */
  assert_int_equal(root->operand_count, 2);
  int reduces = 0;
  for (int k = 0; k < root->operand_count; k++) {
    const hlo_instruction_t *o = root->operands[k];
    if (o->opcode == HLO_OPCODE_FUSION) {
      assert_int_equal(o->attrs.fusion_kind, HLO_FUSION_INPUT);
      reduces += count_opcode(fused(o), HLO_OPCODE_REDUCE);
    }
  }
  assert_int_equal(reduces, 1);
}

/* A chain of elementwise ops with splat and scalar constants: one loop
 * fusion reading only x; codegen_fusion_dot draws it as a cluster. */
static void test_elementwise_chain_and_dot(void **state) {
  hlo_module_t *m = fuse(*state,
      "func.func @main(%x: tensor<1024xf32>) -> tensor<1024xf32> {\n"
      "  %a = stablehlo.constant dense<1.5> : tensor<1024xf32>\n"
      "  %c = stablehlo.constant dense<2.0> : tensor<f32>\n"
      "  %cb = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<1024xf32>\n"
      "  %0 = stablehlo.multiply %x, %a : tensor<1024xf32>\n"
      "  %1 = stablehlo.add %0, %cb : tensor<1024xf32>\n"
      "  %2 = stablehlo.maximum %1, %x : tensor<1024xf32>\n"
      "  %3 = stablehlo.multiply %2, %2 : tensor<1024xf32>\n"
      "  %4 = stablehlo.abs %3 : tensor<1024xf32>\n"
      "  return %4 : tensor<1024xf32>\n"
      "}\n");
  const hlo_computation_t *c = m->entry_computation;
  assert_int_equal(count_opcode(c, HLO_OPCODE_FUSION), 1);
  assert_int_equal(c->root->opcode, HLO_OPCODE_FUSION);
  assert_int_equal(c->root->attrs.fusion_kind, HLO_FUSION_LOOP);
  assert_int_equal(c->root->operand_count, 1);
  char *dot = codegen_fusion_dot(m);
  assert_non_null(dot);
  assert_non_null(strstr(dot, "subgraph cluster_"));
  assert_non_null(strstr(dot, "kLoop"));
  free(dot);
}

/* while bodies are fused too; the loop structure stays. */
static void test_while_body(void **state) {
  hlo_module_t *m = fuse(*state,
      "func.func @main(%x: tensor<64xf32>) -> tensor<64xf32> {\n"
      "  %i0 = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %r:2 = stablehlo.while(%i = %i0, %v = %x) : tensor<i32>, tensor<64xf32>\n"
      "  cond {\n"
      "    %n = stablehlo.constant dense<3> : tensor<i32>\n"
      "    %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "    stablehlo.return %p : tensor<i1>\n"
      "  } do {\n"
      "    %one = stablehlo.constant dense<1> : tensor<i32>\n"
      "    %i1 = stablehlo.add %i, %one : tensor<i32>\n"
      "    %h = stablehlo.constant dense<0.5> : tensor<64xf32>\n"
      "    %a = stablehlo.multiply %v, %h : tensor<64xf32>\n"
      "    %b = stablehlo.add %a, %v : tensor<64xf32>\n"
      "    %t = stablehlo.tanh %b : tensor<64xf32>\n"
      "    stablehlo.return %i1, %t : tensor<i32>, tensor<64xf32>\n"
      "  }\n"
      "  return %r#1 : tensor<64xf32>\n"
      "}\n");
  const hlo_computation_t *c = m->entry_computation;
  assert_int_equal(count_opcode(c, HLO_OPCODE_WHILE), 1);
  const hlo_instruction_t *w = NULL;
  for (int i = 0; i < c->instruction_count; i++)
    if (c->instructions[i]->opcode == HLO_OPCODE_WHILE) w = c->instructions[i];
  assert_non_null(w);
  const hlo_computation_t *body = w->called_computations[1];
  /* the counter increment and the multiply/add/tanh chain */
  assert_int_equal(count_opcode(body, HLO_OPCODE_FUSION), 2);
  assert_int_equal(count_opcode(body, HLO_OPCODE_TANH), 0);
  assert_int_equal(count_opcode(body, HLO_OPCODE_MULTIPLY), 0);
}

/* The GLSL of the first fusion's kernel (caller frees). */
static char *fusion_glsl(fixture_t *f, const hlo_module_t *m) {
  const hlo_instruction_t *fusion = nth_fusion(m, 0);
  assert_non_null(fusion);
  codegen_kernel_t k;
  check_ok(codegen_emit_instruction(&f->target, NULL, fusion, &k));
  char *glsl = k.glsl;
  k.glsl = NULL;
  codegen_kernel_free(&k);
  return glsl;
}

static int count_text(const char *s, const char *needle) {
  int n = 0;
  for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle)) n++;
  return n;
}

/* The fused-kernel memo reuses a value only while the block it was
 * defined in is open (codegen/emit_fusion.c): a negate first needed in a
 * pad's `if` branch is emitted again after the branch closes, and in the
 * `else` branch; one needed before the `if` is reused inside it.  Reusing
 * a value of a closed block would name a local out of scope (glslang
 * rejects the kernel in fuse()) and change the counts. */
static void test_memo_scopes(void **state) {
  fixture_t *f = *state;
  static const char *const programs[3] = {
      /* needed in the branch, then after it */
      "func.func @main(%p: tensor<4x4xf32>) -> tensor<4x4xf32> {\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %n = stablehlo.negate %p : tensor<4x4xf32>\n"
      "  %q = stablehlo.pad %n, %z, low = [0, 0], high = [0, 2], interior = [0, 0] : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x6xf32>\n"
      "  %s = stablehlo.slice %q [0:4, 0:4] : (tensor<4x6xf32>) -> tensor<4x4xf32>\n"
      "  %a = stablehlo.add %s, %n : tensor<4x4xf32>\n"
      "  return %a : tensor<4x4xf32>\n"
      "}\n",
      /* needed before the branch, then in it */
      "func.func @main(%p: tensor<4x4xf32>) -> tensor<4x4xf32> {\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %n = stablehlo.negate %p : tensor<4x4xf32>\n"
      "  %q = stablehlo.pad %n, %z, low = [0, 0], high = [0, 2], interior = [0, 0] : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x6xf32>\n"
      "  %s = stablehlo.slice %q [0:4, 0:4] : (tensor<4x6xf32>) -> tensor<4x4xf32>\n"
      "  %a = stablehlo.add %n, %s : tensor<4x4xf32>\n"
      "  return %a : tensor<4x4xf32>\n"
      "}\n",
      /* needed in the if branch, the else branch, then after both */
      "func.func @main(%p: tensor<f32>) -> tensor<f32> {\n"
      "  %n = stablehlo.negate %p : tensor<f32>\n"
      "  %q = stablehlo.pad %n, %n, low = [], high = [], interior = [] : (tensor<f32>, tensor<f32>) -> tensor<f32>\n"
      "  %a = stablehlo.add %q, %n : tensor<f32>\n"
      "  return %a : tensor<f32>\n"
      "}\n",
  };
  static const int negates[3] = {2, 1, 3};
  for (int i = 0; i < 3; i++) {
    hlo_module_t *m = fuse(f, programs[i]);
    assert_int_equal(count_opcode(m->entry_computation, HLO_OPCODE_FUSION), 1);
    assert_int_equal(count_opcode(fused(nth_fusion(m, 0)), HLO_OPCODE_PAD), 1);
    char *glsl = fusion_glsl(f, m);
    if (count_text(glsl, "// negate") != negates[i]) fprintf(stderr, "program %d:\n%s\n", i, glsl);
    assert_int_equal(count_text(glsl, "// negate"), negates[i]);
    free(glsl);
  }
}

/* Attention's scores q k^T (heads of 32) on a CPU target: the subgroup
 * kernel reads k in words along d, 8 columns per invocation, or 4 for a
 * narrow product (N <= 120) where whole subgroups of 4 cover fewer columns
 * past N than of 8: chess-9M's 79 keys on 8 lanes (96 against 128), not on
 * 16 (128 both ways), nor 64 keys (64 both ways), nor 200 (not narrow).
 * The product is the program's root: a lone dot, or (N a multiple of 8) a
 * fusion of the dot alone. */
static void test_scores_columns_per_subgroup_size(void **state) {
  fixture_t *f = *state;
  f->target.is_cpu = f->target.subgroup_shuffle = f->target.texel_words = true;
  f->target.max_workgroup_invocations = 256;
  static const struct {
    uint32_t lanes;
    int keys;
    const char *tn;
  } cases[] = {{8, 79, "#define TN 4\n"}, {16, 79, "#define TN 8\n"}, {8, 64, "#define TN 8\n"},
               {8, 200, "#define TN 8\n"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    f->target.subgroup_size = cases[i].lanes;
    int n = cases[i].keys;
    char text[512];
    snprintf(text, sizeof text,
             "func.func @main(%%q: tensor<3x%dx32xf32>, %%k: tensor<3x%dx32xf32>) -> tensor<3x%dx%dxf32> {\n"
             "  %%c = stablehlo.dot_general %%q, %%k, batching_dims = [0] x [0], contracting_dims = [2] x [2] :"
             " (tensor<3x%dx32xf32>, tensor<3x%dx32xf32>) -> tensor<3x%dx%dxf32>\n"
             "  return %%c : tensor<3x%dx%dxf32>\n}\n",
             n, n, n, n, n, n, n, n, n, n);
    hlo_module_t *m = fuse(f, text);
    const hlo_instruction_t *dot = m->entry_computation->root;
    codegen_kernel_t k;
    check_ok(codegen_emit_instruction(&f->target, NULL, dot, &k));
    assert_non_null(strstr(k.glsl, "#define RHS_LOADWK_0"));
    if (!strstr(k.glsl, cases[i].tn)) {
      fprintf(stderr, "%u lanes, %d keys: expected %s", cases[i].lanes, n, cases[i].tn);
      fail();
    }
    uint32_t *words = NULL;
    size_t size = 0;
    check_ok(spirv_compile_glsl(f->sc, k.name, k.glsl, &words, &size));
    free(words);
    codegen_kernel_free(&k);
  }
}

/* A gather with users in two clusters (an embedding lookup that feeds a
 * layer norm and a residual add) is not copied into them: every copy
 * would read the indices again.  Where both read it in place, as here,
 * they become one kernel with it (merge_consumers in codegen/fusion.c),
 * which computes it once and does not store it.  On a CPU device with
 * texel views that kernel reads the s32 indices and the f32 table one
 * element at a time through R32UI views (scalar_inputs), not through
 * storage-buffer loads (a loop over the lanes on lavapipe). */
/* The fixture's target as a CPU device reading through texel views
 * (lavapipe's), with 64-bit integers in shaders where |int64|. */
static void cpu_texel_target(fixture_t *f, bool int64) {
  f->target.is_cpu = f->target.texel_words = true;
  f->target.shader_int64 = int64;
  f->target.max_texel_buffer_elements = 1u << 27;
}

static void test_gather_computed_once(void **state) {
  fixture_t *f = *state;
  cpu_texel_target(f, true);
  hlo_module_t *m = fuse(f,
      "func.func @main(%t: tensor<16x8xf32>, %j: tensor<4x1xi32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {\n"
      "  %one = stablehlo.constant dense<1> : tensor<4x1xi32>\n"
      "  %i = stablehlo.add %j, %one : tensor<4x1xi32>\n"
      "  %g = \"stablehlo.gather\"(%t, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1],"
      " collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>,"
      " slice_sizes = array<i64: 1, 8>}> : (tensor<16x8xf32>, tensor<4x1xi32>) -> tensor<4x8xf32>\n"
      "  %e = stablehlo.exponential %g : tensor<4x8xf32>\n"
      "  %n = stablehlo.negate %g : tensor<4x8xf32>\n"
      "  return %e, %n : tensor<4x8xf32>, tensor<4x8xf32>\n"
      "}\n");
  const hlo_computation_t *c = m->entry_computation;
  assert_int_equal(count_opcode(c, HLO_OPCODE_FUSION), 1);
  assert_int_equal(count_opcode(c, HLO_OPCODE_GATHER), 0);
  const hlo_instruction_t *fu = nth_fusion(m, 0);
  const hlo_computation_t *fc = fused(fu);
  assert_int_equal(count_opcode(fc, HLO_OPCODE_GATHER), 1);
  /* two outputs, the exponential and the negation: the gather is not one */
  assert_int_equal(fc->root->opcode, HLO_OPCODE_TUPLE);
  assert_int_equal(fc->root->operand_count, 2);
  assert_int_equal(fc->root->operands[0]->opcode, HLO_OPCODE_EXPONENTIAL);
  assert_int_equal(fc->root->operands[1]->opcode, HLO_OPCODE_NEGATE);
  codegen_kernel_t k;
  check_ok(codegen_emit_instruction(&f->target, NULL, fu, &k));
  /* the fusion's operands: the indices' producer's input, the table */
  assert_int_equal(fu->operand_count, 2);
  assert_true(k.scalar_inputs == 3u);
  assert_non_null(strstr(k.glsl, "#define in0_at(i) int(texelFetch(in0s, int(i)).x)"));
  assert_non_null(strstr(k.glsl, "#define in1_at(i) uintBitsToFloat(texelFetch(in1s, int(i)).x)"));
  assert_null(strstr(k.glsl, "in0.data["));
  assert_null(strstr(k.glsl, "in1.data["));
  /* one table read per element, shared by both outputs (the memo) */
  assert_int_equal(count_text(k.glsl, "in1_at("), 1 + 1);
  codegen_kernel_free(&k);
}

/* A group norm's normalization as exports write it: x reshaped to
 * [batch, groups, group size], the statistics subtracted there, the
 * result reshaped back.  In the wide kernel (8 elements per invocation)
 * the reshape back asks for its operand at an index delinearized from the
 * lane's position, so the reshape of x reads x at that same position
 * (the elemental emitter's linear_memo): the word already loaded, no
 * element loads of x and no index arithmetic for them; and the lanes'
 * indices share their group (elemental_emitter_t.lanes), so the mean is
 * read once per invocation. */
static void test_reshape_chain_reads_words(void **state) {
  fixture_t *f = *state;
  cpu_texel_target(f, true);
  hlo_module_t *m = fuse(f,
      "func.func @main(%x: tensor<2x8x4x32xf32>, %mean: tensor<2x4xf32>) -> tensor<2x8x4x32xf32> {\n"
      "  %r = stablehlo.reshape %x : (tensor<2x8x4x32xf32>) -> tensor<2x4x256xf32>\n"
      "  %mb = stablehlo.broadcast_in_dim %mean, dims = [0, 1] : (tensor<2x4xf32>) -> tensor<2x4x256xf32>\n"
      "  %d = stablehlo.subtract %r, %mb : tensor<2x4x256xf32>\n"
      "  %y = stablehlo.reshape %d : (tensor<2x4x256xf32>) -> tensor<2x8x4x32xf32>\n"
      "  %e = stablehlo.exponential %y : tensor<2x8x4x32xf32>\n"
      "  return %e : tensor<2x8x4x32xf32>\n"
      "}\n");
  assert_int_equal(count_opcode(m->entry_computation, HLO_OPCODE_FUSION), 1);
  codegen_kernel_t k;
  check_ok(codegen_emit_instruction(&f->target, NULL, nth_fusion(m, 0), &k));
  assert_non_null(strstr(k.glsl, "in0w_at(gid)"));
  /* x's eight elements are the word's: p0_0 .. p0_7, each subtracted */
  assert_int_equal(count_text(k.glsl, "(p0_"), 8);
  assert_null(strstr(k.glsl, "in0_at("));
  /* the 8 lanes share every index component but the last (256 is a
   * multiple of 8), so the group's mean is loaded once for all of them */
  assert_int_equal(count_text(k.glsl, "= in1_at("), 1);
  codegen_kernel_free(&k);
}

/* A post-LN transformer's layer norm: its output feeds a product and,
 * through a second product's epilogue, the residual add.  The product
 * stores it anyway (a contraction takes no such producer), so the epilogue
 * reads it instead of recomputing it from the mean and variance, and on a
 * CPU target the layer norm is one row kernel holding both reduces. */
static void test_value_stored_for_a_product_is_read(void **state) {
  fixture_t *f = *state;
  f->target.is_cpu = true;
  hlo_module_t *m = fuse(f,
      "func.func @main(%x: tensor<8x32xf32>, %w1: tensor<32x16xf32>, %w2: tensor<16x32xf32>) -> tensor<8x32xf32> {\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %n = stablehlo.constant dense<32.0> : tensor<8xf32>\n"
      "  %eps = stablehlo.constant dense<1.0e-5> : tensor<8xf32>\n"
      "  %s = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [1] : (tensor<8x32xf32>, tensor<f32>) -> tensor<8xf32>\n"
      "  %mean = stablehlo.divide %s, %n : tensor<8xf32>\n"
      "  %mb = stablehlo.broadcast_in_dim %mean, dims = [0] : (tensor<8xf32>) -> tensor<8x32xf32>\n"
      "  %d = stablehlo.subtract %x, %mb : tensor<8x32xf32>\n"
      "  %d2 = stablehlo.multiply %d, %d : tensor<8x32xf32>\n"
      "  %v = stablehlo.reduce(%d2 init: %z) applies stablehlo.add across dimensions = [1] : (tensor<8x32xf32>, tensor<f32>) -> tensor<8xf32>\n"
      "  %var = stablehlo.divide %v, %n : tensor<8xf32>\n"
      "  %ve = stablehlo.add %var, %eps : tensor<8xf32>\n"
      "  %r = stablehlo.rsqrt %ve : tensor<8xf32>\n"
      "  %rb = stablehlo.broadcast_in_dim %r, dims = [0] : (tensor<8xf32>) -> tensor<8x32xf32>\n"
      "  %ln = stablehlo.multiply %d, %rb : tensor<8x32xf32>\n"
      "  %h = stablehlo.dot_general %ln, %w1, contracting_dims = [1] x [0] : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>\n"
      "  %o = stablehlo.dot_general %h, %w2, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>\n"
      "  %y = stablehlo.add %o, %ln : tensor<8x32xf32>\n"
      "  return %y : tensor<8x32xf32>\n"
      "}\n");
  const hlo_computation_t *c = m->entry_computation;
  int reduces = 0, rsqrts = 0;
  const hlo_instruction_t *ln = NULL, *last = NULL;
  for (int i = 0; nth_fusion(m, i); i++) {
    const hlo_instruction_t *fu = nth_fusion(m, i);
    const hlo_computation_t *fc = fused(fu);
    int r = count_opcode(fc, HLO_OPCODE_REDUCE);
    reduces += r;
    rsqrts += count_opcode(fc, HLO_OPCODE_RSQRT);
    if (r) ln = fu;
    if (fc->root->opcode == HLO_OPCODE_ADD && count_opcode(fc, HLO_OPCODE_DOT_GENERAL)) last = fu;
  }
  /* the layer norm: one fusion, both reduces, computed once */
  assert_non_null(ln);
  assert_int_equal(count_opcode(fused(ln), HLO_OPCODE_REDUCE), 2);
  assert_int_equal(reduces, 2);
  assert_int_equal(rsqrts, 1);
  /* the last product's epilogue reads the stored layer norm */
  assert_non_null(last);
  assert_ptr_equal(c->root, last);
  bool reads_ln = false;
  for (int k = 0; k < last->operand_count; k++) reads_ln = reads_ln || last->operands[k] == ln;
  assert_true(reads_ln);
}

/* An LSTM cell's update: c' = f * c + i * g reads two full-size values,
 * so it is not copied into h' = o * tanh(c'); c' is also returned (the
 * next step's state).  h' reads c' at its own index, so one kernel
 * computes both (producer-consumer multi-output fusion): c' is stored
 * once and not read back. */
static const char lstm_cell[] =
    "func.func @main(%gates: tensor<2x4x16xf32>, %c: tensor<2x16xf32>) -> (tensor<2x16xf32>, tensor<2x16xf32>) {\n"
    "  %gi = stablehlo.slice %gates [0:2, 0:1, 0:16] : (tensor<2x4x16xf32>) -> tensor<2x1x16xf32>\n"
    "  %gf = stablehlo.slice %gates [0:2, 1:2, 0:16] : (tensor<2x4x16xf32>) -> tensor<2x1x16xf32>\n"
    "  %gg = stablehlo.slice %gates [0:2, 2:3, 0:16] : (tensor<2x4x16xf32>) -> tensor<2x1x16xf32>\n"
    "  %go = stablehlo.slice %gates [0:2, 3:4, 0:16] : (tensor<2x4x16xf32>) -> tensor<2x1x16xf32>\n"
    "  %i = stablehlo.reshape %gi : (tensor<2x1x16xf32>) -> tensor<2x16xf32>\n"
    "  %f = stablehlo.reshape %gf : (tensor<2x1x16xf32>) -> tensor<2x16xf32>\n"
    "  %g = stablehlo.reshape %gg : (tensor<2x1x16xf32>) -> tensor<2x16xf32>\n"
    "  %o = stablehlo.reshape %go : (tensor<2x1x16xf32>) -> tensor<2x16xf32>\n"
    "  %si = stablehlo.logistic %i : tensor<2x16xf32>\n"
    "  %sf = stablehlo.logistic %f : tensor<2x16xf32>\n"
    "  %tg = stablehlo.tanh %g : tensor<2x16xf32>\n"
    "  %so = stablehlo.logistic %o : tensor<2x16xf32>\n"
    "  %fc = stablehlo.multiply %sf, %c : tensor<2x16xf32>\n"
    "  %ig = stablehlo.multiply %si, %tg : tensor<2x16xf32>\n"
    "  %c2 = stablehlo.add %fc, %ig : tensor<2x16xf32>\n"
    "  %t2 = stablehlo.tanh %c2 : tensor<2x16xf32>\n"
    "  %CONSUMER\n"
    "  return %h2, %c2 : tensor<2x16xf32>, tensor<2x16xf32>\n"
    "}\n";

static hlo_module_t *fuse_lstm(fixture_t *f, const char *consumer) {
  const char *at = strstr(lstm_cell, "%CONSUMER");
  char text[sizeof lstm_cell + 1024];
  assert_true(strlen(consumer) < 1024);
  snprintf(text, sizeof text, "%.*s%s%s", (int)(at - lstm_cell), lstm_cell, consumer, at + strlen("%CONSUMER"));
  return fuse(f, text);
}

static void test_consumer_reads_output_in_place(void **state) {
  hlo_module_t *m = fuse_lstm(*state, "%h2 = stablehlo.multiply %so, %t2 : tensor<2x16xf32>");
  const hlo_computation_t *c = m->entry_computation;
  assert_int_equal(count_opcode(c, HLO_OPCODE_FUSION), 1);
  const hlo_instruction_t *fu = nth_fusion(m, 0);
  const hlo_computation_t *fc = fused(fu);
  assert_int_equal(fu->attrs.fusion_kind, HLO_FUSION_LOOP);
  assert_int_equal(fu->operand_count, 2); /* the gates and c */
  assert_int_equal(fc->root->opcode, HLO_OPCODE_TUPLE);
  assert_int_equal(fc->root->operand_count, 2);
  /* c' computed once, h' from it */
  assert_int_equal(count_opcode(fc, HLO_OPCODE_ADD), 1);
  assert_int_equal(count_opcode(fc, HLO_OPCODE_TANH), 2);
  const hlo_instruction_t *outs[2] = {fc->root->operands[0], fc->root->operands[1]};
  bool h_first = outs[0]->opcode == HLO_OPCODE_MULTIPLY;
  const hlo_instruction_t *h = outs[h_first ? 0 : 1], *c2 = outs[h_first ? 1 : 0];
  assert_int_equal(h->opcode, HLO_OPCODE_MULTIPLY);
  assert_int_equal(c2->opcode, HLO_OPCODE_ADD);
  assert_ptr_equal(h->operands[1]->operands[0], c2);
  /* the program's results read the two outputs */
  assert_int_equal(count_opcode(c, HLO_OPCODE_GET_TUPLE_ELEMENT), 2);
}

/* A consumer that reads the output elsewhere than at its own index (here
 * transposed) would recompute it per read: the two stay separate kernels,
 * as does a consumer whose cluster holds a reduce. */
static void test_consumer_reads_output_elsewhere(void **state) {
  hlo_module_t *m = fuse_lstm(*state,
      "%tt = stablehlo.reverse %t2, dims = [1] : tensor<2x16xf32>\n"
      "  %h2 = stablehlo.multiply %so, %tt : tensor<2x16xf32>");
  assert_int_equal(count_opcode(m->entry_computation, HLO_OPCODE_FUSION), 2);
  assert_int_equal(count_opcode(m->entry_computation, HLO_OPCODE_GET_TUPLE_ELEMENT), 0);
  m = fuse_lstm(*state,
      "%z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %s = stablehlo.reduce(%t2 init: %z) applies stablehlo.add across dimensions = [1] : (tensor<2x16xf32>, tensor<f32>) -> tensor<2xf32>\n"
      "  %sb = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<2xf32>) -> tensor<2x16xf32>\n"
      "  %h2 = stablehlo.multiply %so, %sb : tensor<2x16xf32>");
  assert_int_equal(count_opcode(m->entry_computation, HLO_OPCODE_GET_TUPLE_ELEMENT), 0);
  int reduces = 0;
  for (int i = 0; nth_fusion(m, i); i++) {
    const hlo_computation_t *fc = fused(nth_fusion(m, i));
    reduces += count_opcode(fc, HLO_OPCODE_REDUCE);
    assert_int_not_equal(fc->root->opcode, HLO_OPCODE_TUPLE);
  }
  assert_int_equal(reduces, 1);
  assert_true(nth_fusion(m, 1) != NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_softmax, setup, teardown),
      cmocka_unit_test_setup_teardown(test_layer_norm_multi_output, setup, teardown),
      cmocka_unit_test_setup_teardown(test_dot_bias_relu, setup, teardown),
      cmocka_unit_test_setup_teardown(test_dot_not_duplicated, setup, teardown),
      cmocka_unit_test_setup_teardown(test_one_convolution_per_fusion, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reduce_through_broadcast_not_fused, setup, teardown),
      cmocka_unit_test_setup_teardown(test_elementwise_chain_and_dot, setup, teardown),
      cmocka_unit_test_setup_teardown(test_while_body, setup, teardown),
      cmocka_unit_test_setup_teardown(test_memo_scopes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_scores_columns_per_subgroup_size, setup, teardown),
      cmocka_unit_test_setup_teardown(test_gather_computed_once, setup, teardown),
      cmocka_unit_test_setup_teardown(test_consumer_reads_output_in_place, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reshape_chain_reads_words, setup, teardown),
      cmocka_unit_test_setup_teardown(test_value_stored_for_a_product_is_read, setup, teardown),
      cmocka_unit_test_setup_teardown(test_consumer_reads_output_elsewhere, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
