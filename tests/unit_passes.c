/*
 * Tests for the simplification passes that run before fusion:
 * codegen/simplify.c (constant folding, algebraic rules), codegen/cse.c,
 * codegen/dce.c and the rewrite utilities of hlo/rewrite.c.
 *
 * Each rewrite gets a small program: parse, run the pass, check the
 * resulting instructions and that the module still verifies.  Negative
 * tests check what must NOT change (x + (+0.0) on floats, x * 0 on floats,
 * folding of exp, CSE of different constants, DCE of checks).  A corpus
 * test runs simplify, cse and dce over every conformance program under
 * ../shared (skipped when absent), verifying after each pass.
 */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "codegen/passes.h"
#include "hlo/hlo.h"
#include "tests/test_support.h"

/* ---------------------------------------------------------- helpers */

typedef vkhlo_status_t (*pass_fn)(hlo_module_t *, const codegen_target_t *, bool *);

static hlo_module_t *parse_ok(const char *text) {
  hlo_module_t *m = NULL;
  vkhlo_status_t st = hlo_parse(text, strlen(text), "t.mlir", NULL, &m);
  if (st) {
    fprintf(stderr, "unexpected parse error: %s\n", vkhlo_status_message(st));
    vkhlo_status_free(st);
    return NULL;
  }
  return m;
}

static void verify_ok(const hlo_module_t *m) {
  vkhlo_status_t st = hlo_verify(m);
  if (st) fprintf(stderr, "verify failed: %s\n", vkhlo_status_message(st));
  assert_null(st);
}

/* Runs |pass|, asserts it succeeded and the module verifies; returns changed. */
static bool run(hlo_module_t *m, pass_fn pass) {
  bool changed = false;
  vkhlo_status_t st = pass(m, NULL, &changed);
  if (st) fprintf(stderr, "pass failed: %s\n", vkhlo_status_message(st));
  assert_null(st);
  verify_ok(m);
  return changed;
}

/* Parses |text| and runs simplify then dce (so only what is used remains). */
static hlo_module_t *simplified(const char *text) {
  hlo_module_t *m = parse_ok(text);
  assert_non_null(m);
  verify_ok(m);
  run(m, codegen_simplify_pass);
  run(m, codegen_dce_pass);
  return m;
}

static hlo_computation_t *entry(hlo_module_t *m) { return m->entry_computation; }
static hlo_instruction_t *root(hlo_module_t *m) { return m->entry_computation->root; }

static int count_op(const hlo_computation_t *c, hlo_opcode_t op) {
  int n = 0;
  for (int i = 0; i < c->instruction_count; i++) n += c->instructions[i]->opcode == op;
  return n;
}

/* Instructions of the entry computation that are not parameters. */
static int count_non_params(const hlo_computation_t *c) {
  return c->instruction_count - count_op(c, HLO_OPCODE_PARAMETER);
}

static void assert_root_is_param(hlo_module_t *m, int number) {
  assert_int_equal(root(m)->opcode, HLO_OPCODE_PARAMETER);
  assert_int_equal(root(m)->parameter_number, number);
}

static void assert_dims(const hlo_dims_t *d, int count, ...) {
  assert_int_equal(d->count, count);
  va_list ap;
  va_start(ap, count);
  for (int i = 0; i < count; i++) assert_int_equal(d->data[i], va_arg(ap, int));
  va_end(ap);
}

/* The root as a constant; returns its literal data. */
static const void *root_constant(hlo_module_t *m) {
  hlo_instruction_t *r = root(m);
  if (r->opcode != HLO_OPCODE_CONSTANT) {
    char *dump = hlo_module_to_string(m);
    fprintf(stderr, "root is not a constant:\n%s\n", dump ? dump : "");
    free(dump);
  }
  assert_int_equal(r->opcode, HLO_OPCODE_CONSTANT);
  assert_non_null(r->literal);
  return r->literal->data;
}

static float f32_at(const void *p, int i) {
  float f;
  memcpy(&f, (const char *)p + 4 * i, 4);
  return f;
}
static int32_t i32_at(const void *p, int i) {
  int32_t v;
  memcpy(&v, (const char *)p + 4 * i, 4);
  return v;
}
static uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

/* A program of one function: "%x" is a parameter of |type|, |body| ends
 * with "%r = ..." returned as |rtype|. */
static char *program(const char *params, const char *body, const char *rtype) {
  static const char fmt[] = "func.func @main(%s) -> %s {\n%s  return %%r : %s\n}\n";
  size_t n = strlen(fmt) + strlen(params) + strlen(body) + 2 * strlen(rtype) + 1;
  char *s = malloc(n);
  assert_non_null(s);
  snprintf(s, n, fmt, params, rtype, body, rtype);
  return s;
}

/* Parses and simplifies a one-function program (see program()). */
static hlo_module_t *simp(const char *params, const char *body, const char *rtype) {
  char *text = program(params, body, rtype);
  hlo_module_t *m = simplified(text);
  free(text);
  return m;
}

/* ----------------------------------------------- algebraic identities */

static void test_identities_fire(void **state) {
  (void)state;
  static const struct {
    const char *params, *body, *rtype;
  } cases[] = {
      /* x * 1, 1 * x (ints, floats, broadcast constants) */
      {"%x: tensor<4xf32>",
       "  %c = stablehlo.constant dense<1.0> : tensor<f32>\n"
       "  %b = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<4xf32>\n"
       "  %r = stablehlo.multiply %x, %b : tensor<4xf32>\n", "tensor<4xf32>"},
      {"%x: tensor<4xi32>",
       "  %c = stablehlo.constant dense<1> : tensor<4xi32>\n"
       "  %r = stablehlo.multiply %c, %x : tensor<4xi32>\n", "tensor<4xi32>"},
      {"%x: tensor<4xf64>",
       "  %c = stablehlo.constant dense<1.0> : tensor<4xf64>\n"
       "  %r = stablehlo.multiply %x, %c : tensor<4xf64>\n", "tensor<4xf64>"},
      {"%x: tensor<4xbf16>",
       "  %c = stablehlo.constant dense<1.0> : tensor<4xbf16>\n"
       "  %r = stablehlo.multiply %x, %c : tensor<4xbf16>\n", "tensor<4xbf16>"},
      /* x + 0 (ints), x + (-0.0) (floats), both sides */
      {"%x: tensor<4xi32>",
       "  %c = stablehlo.constant dense<0> : tensor<4xi32>\n"
       "  %r = stablehlo.add %c, %x : tensor<4xi32>\n", "tensor<4xi32>"},
      {"%x: tensor<4xui8>",
       "  %c = stablehlo.constant dense<0> : tensor<4xui8>\n"
       "  %r = stablehlo.add %x, %c : tensor<4xui8>\n", "tensor<4xui8>"},
      {"%x: tensor<4xf32>",
       "  %c = stablehlo.constant dense<-0.0> : tensor<4xf32>\n"
       "  %r = stablehlo.add %x, %c : tensor<4xf32>\n", "tensor<4xf32>"},
      {"%x: tensor<4xf32>",
       "  %c = stablehlo.constant dense<-0.0> : tensor<f32>\n"
       "  %b = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<4xf32>\n"
       "  %r = stablehlo.add %b, %x : tensor<4xf32>\n", "tensor<4xf32>"},
      /* x - 0 (ints), x - (+0.0) (floats) */
      {"%x: tensor<4xi64>",
       "  %c = stablehlo.constant dense<0> : tensor<4xi64>\n"
       "  %r = stablehlo.subtract %x, %c : tensor<4xi64>\n", "tensor<4xi64>"},
      {"%x: tensor<4xf32>",
       "  %c = stablehlo.constant dense<0.0> : tensor<4xf32>\n"
       "  %r = stablehlo.subtract %x, %c : tensor<4xf32>\n", "tensor<4xf32>"},
      /* x / 1 */
      {"%x: tensor<4xf32>",
       "  %c = stablehlo.constant dense<1.0> : tensor<4xf32>\n"
       "  %r = stablehlo.divide %x, %c : tensor<4xf32>\n", "tensor<4xf32>"},
      {"%x: tensor<4xi32>",
       "  %c = stablehlo.constant dense<1> : tensor<4xi32>\n"
       "  %r = stablehlo.divide %x, %c : tensor<4xi32>\n", "tensor<4xi32>"},
      /* x | 0, x ^ 0, x & all-ones (ints and i1) */
      {"%x: tensor<4xi32>",
       "  %c = stablehlo.constant dense<0> : tensor<4xi32>\n"
       "  %r = stablehlo.or %x, %c : tensor<4xi32>\n", "tensor<4xi32>"},
      {"%x: tensor<4xi32>",
       "  %c = stablehlo.constant dense<0> : tensor<4xi32>\n"
       "  %r = stablehlo.xor %c, %x : tensor<4xi32>\n", "tensor<4xi32>"},
      {"%x: tensor<4xi32>",
       "  %c = stablehlo.constant dense<-1> : tensor<4xi32>\n"
       "  %r = stablehlo.and %x, %c : tensor<4xi32>\n", "tensor<4xi32>"},
      {"%x: tensor<4xui16>",
       "  %c = stablehlo.constant dense<65535> : tensor<4xui16>\n"
       "  %r = stablehlo.and %x, %c : tensor<4xui16>\n", "tensor<4xui16>"},
      {"%x: tensor<4xi1>",
       "  %c = stablehlo.constant dense<true> : tensor<4xi1>\n"
       "  %r = stablehlo.and %x, %c : tensor<4xi1>\n", "tensor<4xi1>"},
      {"%x: tensor<4xi1>",
       "  %c = stablehlo.constant dense<false> : tensor<4xi1>\n"
       "  %r = stablehlo.or %x, %c : tensor<4xi1>\n", "tensor<4xi1>"},
      /* shift by 0 */
      {"%x: tensor<4xi32>",
       "  %c = stablehlo.constant dense<0> : tensor<4xi32>\n"
       "  %r = stablehlo.shift_left %x, %c : tensor<4xi32>\n", "tensor<4xi32>"},
      /* max(x, x) */
      {"%x: tensor<4xf32>", "  %r = stablehlo.maximum %x, %x : tensor<4xf32>\n", "tensor<4xf32>"},
      /* not(not(x)), negate(negate(x)) */
      {"%x: tensor<4xi32>",
       "  %a = stablehlo.not %x : tensor<4xi32>\n"
       "  %r = stablehlo.not %a : tensor<4xi32>\n", "tensor<4xi32>"},
      {"%x: tensor<4xf32>",
       "  %a = stablehlo.negate %x : tensor<4xf32>\n"
       "  %r = stablehlo.negate %a : tensor<4xf32>\n", "tensor<4xf32>"},
      /* convert to the same type, reshape to the same shape */
      {"%x: tensor<4xf32>", "  %r = stablehlo.convert %x : (tensor<4xf32>) -> tensor<4xf32>\n",
       "tensor<4xf32>"},
      {"%x: tensor<2x3xf32>",
       "  %r = stablehlo.reshape %x : (tensor<2x3xf32>) -> tensor<2x3xf32>\n", "tensor<2x3xf32>"},
      /* reshape(reshape(x)) back to x's shape */
      {"%x: tensor<2x3xf32>",
       "  %a = stablehlo.reshape %x : (tensor<2x3xf32>) -> tensor<6xf32>\n"
       "  %r = stablehlo.reshape %a : (tensor<6xf32>) -> tensor<2x3xf32>\n", "tensor<2x3xf32>"},
      /* transposes that cancel, identity transpose */
      {"%x: tensor<2x3x4xf32>",
       "  %r = stablehlo.transpose %x, dims = [0, 1, 2] : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>\n",
       "tensor<2x3x4xf32>"},
      {"%x: tensor<2x3x4xf32>",
       "  %a = stablehlo.transpose %x, dims = [1, 2, 0] : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>\n"
       "  %r = stablehlo.transpose %a, dims = [2, 0, 1] : (tensor<3x4x2xf32>) -> tensor<2x3x4xf32>\n",
       "tensor<2x3x4xf32>"},
      /* broadcast_in_dim to the same shape */
      {"%x: tensor<2x3xf32>",
       "  %r = stablehlo.broadcast_in_dim %x, dims = [0, 1] : (tensor<2x3xf32>) -> tensor<2x3xf32>\n",
       "tensor<2x3xf32>"},
      /* slice of the full range, concatenate of one, pad of nothing, reverse of size 1 */
      {"%x: tensor<2x3xf32>",
       "  %r = stablehlo.slice %x [0:2, 0:3] : (tensor<2x3xf32>) -> tensor<2x3xf32>\n",
       "tensor<2x3xf32>"},
      {"%x: tensor<2x3xf32>",
       "  %r = stablehlo.concatenate %x, dim = 1 : (tensor<2x3xf32>) -> tensor<2x3xf32>\n",
       "tensor<2x3xf32>"},
      {"%x: tensor<2x3xf32>, %p: tensor<f32>",
       "  %r = stablehlo.pad %x, %p, low = [0, 0], high = [0, 0], interior = [0, 0] : "
       "(tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>\n",
       "tensor<2x3xf32>"},
      {"%x: tensor<1x3xf32>",
       "  %r = stablehlo.reverse %x, dims = [0] : tensor<1x3xf32>\n", "tensor<1x3xf32>"},
      /* select with a constant predicate, select(p, a, a) */
      {"%x: tensor<4xf32>, %y: tensor<4xf32>",
       "  %c = stablehlo.constant dense<true> : tensor<i1>\n"
       "  %r = stablehlo.select %c, %x, %y : tensor<i1>, tensor<4xf32>\n", "tensor<4xf32>"},
      {"%x: tensor<4xf32>, %p: tensor<4xi1>",
       "  %r = stablehlo.select %p, %x, %x : tensor<4xi1>, tensor<4xf32>\n", "tensor<4xf32>"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    hlo_module_t *m = simp(cases[i].params, cases[i].body, cases[i].rtype);
    if (root(m)->opcode != HLO_OPCODE_PARAMETER) fprintf(stderr, "case %zu did not fire\n", i);
    assert_root_is_param(m, 0);
    assert_int_equal(count_non_params(entry(m)), 0);
    hlo_module_destroy(m);
  }
}

static void test_select_false_picks_on_false(void **state) {
  (void)state;
  hlo_module_t *m = simp("%x: tensor<4xf32>, %y: tensor<4xf32>",
                         "  %c = stablehlo.constant dense<false> : tensor<4xi1>\n"
                         "  %r = stablehlo.select %c, %x, %y : tensor<4xi1>, tensor<4xf32>\n",
                         "tensor<4xf32>");
  assert_root_is_param(m, 1);
  hlo_module_destroy(m);
}

/* Rewrites that must not fire: they would change results. */
static void test_identities_must_not_fire(void **state) {
  (void)state;
  static const struct {
    const char *params, *body, *rtype;
    hlo_opcode_t op;
  } cases[] = {
      /* x + (+0.0): -0.0 + 0.0 = +0.0 */
      {"%x: tensor<4xf32>",
       "  %c = stablehlo.constant dense<0.0> : tensor<4xf32>\n"
       "  %r = stablehlo.add %x, %c : tensor<4xf32>\n", "tensor<4xf32>", HLO_OPCODE_ADD},
      {"%x: tensor<4xf32>",
       "  %c = stablehlo.constant dense<0.0> : tensor<f32>\n"
       "  %b = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<4xf32>\n"
       "  %r = stablehlo.add %b, %x : tensor<4xf32>\n", "tensor<4xf32>", HLO_OPCODE_ADD},
      /* x - (-0.0) = x + 0.0 */
      {"%x: tensor<4xf32>",
       "  %c = stablehlo.constant dense<-0.0> : tensor<4xf32>\n"
       "  %r = stablehlo.subtract %x, %c : tensor<4xf32>\n", "tensor<4xf32>", HLO_OPCODE_SUBTRACT},
      /* 0 - x is not x */
      {"%x: tensor<4xi32>",
       "  %c = stablehlo.constant dense<0> : tensor<4xi32>\n"
       "  %r = stablehlo.subtract %c, %x : tensor<4xi32>\n", "tensor<4xi32>", HLO_OPCODE_SUBTRACT},
      /* x * 0 on floats: NaN, inf, -0.0 */
      {"%x: tensor<4xf32>",
       "  %c = stablehlo.constant dense<0.0> : tensor<4xf32>\n"
       "  %r = stablehlo.multiply %x, %c : tensor<4xf32>\n", "tensor<4xf32>", HLO_OPCODE_MULTIPLY},
      /* 1 / x is not x */
      {"%x: tensor<4xf32>",
       "  %c = stablehlo.constant dense<1.0> : tensor<4xf32>\n"
       "  %r = stablehlo.divide %c, %x : tensor<4xf32>\n", "tensor<4xf32>", HLO_OPCODE_DIVIDE},
      /* a constant that is not all ones */
      {"%x: tensor<2xi32>",
       "  %c = stablehlo.constant dense<[1, 2]> : tensor<2xi32>\n"
       "  %r = stablehlo.multiply %x, %c : tensor<2xi32>\n", "tensor<2xi32>", HLO_OPCODE_MULTIPLY},
      /* i32 and with 0xFFFF is not all ones */
      {"%x: tensor<4xi32>",
       "  %c = stablehlo.constant dense<65535> : tensor<4xi32>\n"
       "  %r = stablehlo.and %x, %c : tensor<4xi32>\n", "tensor<4xi32>", HLO_OPCODE_AND},
      /* x + 1 */
      {"%x: tensor<4xi32>",
       "  %c = stablehlo.constant dense<1> : tensor<4xi32>\n"
       "  %r = stablehlo.add %x, %c : tensor<4xi32>\n", "tensor<4xi32>", HLO_OPCODE_ADD},
      /* a broadcast of x * 1 changes shape: the multiply goes, the broadcast stays */
      {"%x: tensor<f32>",
       "  %c = stablehlo.constant dense<1.0> : tensor<4xf32>\n"
       "  %b = stablehlo.broadcast_in_dim %x, dims = [] : (tensor<f32>) -> tensor<4xf32>\n"
       "  %r = stablehlo.multiply %b, %c : tensor<4xf32>\n", "tensor<4xf32>", HLO_OPCODE_BROADCAST_IN_DIM},
      /* a real transpose and reshape stay */
      {"%x: tensor<2x3xf32>",
       "  %r = stablehlo.transpose %x, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>\n",
       "tensor<3x2xf32>", HLO_OPCODE_TRANSPOSE},
      {"%x: tensor<2x3xf32>",
       "  %r = stablehlo.slice %x [0:2, 1:3] : (tensor<2x3xf32>) -> tensor<2x2xf32>\n",
       "tensor<2x2xf32>", HLO_OPCODE_SLICE},
      /* convert to another type */
      {"%x: tensor<4xf32>", "  %r = stablehlo.convert %x : (tensor<4xf32>) -> tensor<4xf64>\n",
       "tensor<4xf64>", HLO_OPCODE_CONVERT},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    hlo_module_t *m = simp(cases[i].params, cases[i].body, cases[i].rtype);
    if (root(m)->opcode != cases[i].op) fprintf(stderr, "case %zu fired\n", i);
    assert_int_equal(root(m)->opcode, cases[i].op);
    hlo_module_destroy(m);
  }
}

/* ----------------------------------------------- structural rewrites */

static void test_compose_transposes(void **state) {
  (void)state;
  hlo_module_t *m = simp("%x: tensor<2x3x4xf32>",
                         "  %a = stablehlo.transpose %x, dims = [1, 2, 0] : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>\n"
                         "  %r = stablehlo.transpose %a, dims = [1, 0, 2] : (tensor<3x4x2xf32>) -> tensor<4x3x2xf32>\n",
                         "tensor<4x3x2xf32>");
  assert_int_equal(count_non_params(entry(m)), 1);
  assert_int_equal(root(m)->opcode, HLO_OPCODE_TRANSPOSE);
  assert_int_equal(root(m)->operands[0]->opcode, HLO_OPCODE_PARAMETER);
  /* q[i] = p1[p2[i]] = [p1[1], p1[0], p1[2]] = [2, 1, 0] */
  assert_dims(&root(m)->attrs.permutation, 3, 2, 1, 0);
  assert_int_equal(root(m)->loc.line, 3);
  hlo_module_destroy(m);
}

/* transpose(dot_general(a, b)) whose minor dimension is a's last free one
 * becomes transpose(dot_general(b, a)) (swap_dot_operands): attention's
 * dot_general(v, p) -> [b, h, d, s] transposed to [b, s, h, d]; a rank-2
 * product's transpose disappears; a dot with a second user, or a transpose
 * that keeps the rhs's free dimension minor, stays. */
static void test_transpose_of_dot_swaps_operands(void **state) {
  (void)state;
  hlo_module_t *m = simp("%v: tensor<2x5x3x4xf32>, %p: tensor<2x3x6x5xf32>",
                         "  %o = stablehlo.dot_general %v, %p, batching_dims = [0, 2] x [0, 1], contracting_dims = [1] x"
                         " [3] : (tensor<2x5x3x4xf32>, tensor<2x3x6x5xf32>) -> tensor<2x3x4x6xf32>\n"
                         "  %r = stablehlo.transpose %o, dims = [0, 3, 1, 2] : (tensor<2x3x4x6xf32>) -> tensor<2x6x3x4xf32>\n",
                         "tensor<2x6x3x4xf32>");
  hlo_instruction_t *t = root(m), *d = t->operands[0];
  assert_int_equal(t->opcode, HLO_OPCODE_TRANSPOSE);
  assert_dims(&t->attrs.permutation, 4, 0, 2, 1, 3);
  assert_int_equal(d->opcode, HLO_OPCODE_DOT_GENERAL);
  assert_int_equal(d->operands[0]->parameter_number, 1);
  assert_int_equal(d->operands[1]->parameter_number, 0);
  assert_dims(&d->attrs.lhs_batching_dimensions, 2, 0, 1);
  assert_dims(&d->attrs.rhs_batching_dimensions, 2, 0, 2);
  assert_dims(&d->attrs.lhs_contracting_dimensions, 1, 3);
  assert_dims(&d->attrs.rhs_contracting_dimensions, 1, 1);
  int64_t want[4] = {2, 3, 6, 4};
  assert_int_equal(d->shape.rank, 4);
  for (int i = 0; i < 4; i++) assert_int_equal(d->shape.dimensions[i], want[i]);
  assert_int_equal(count_op(entry(m), HLO_OPCODE_DOT_GENERAL), 1);
  hlo_module_destroy(m);

  m = simp("%a: tensor<3x4xf32>, %b: tensor<4x5xf32>",
           "  %o = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] :"
           " (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>\n"
           "  %r = stablehlo.transpose %o, dims = [1, 0] : (tensor<3x5xf32>) -> tensor<5x3xf32>\n",
           "tensor<5x3xf32>");
  d = root(m);
  assert_int_equal(d->opcode, HLO_OPCODE_DOT_GENERAL);
  assert_int_equal(d->operands[0]->parameter_number, 1);
  assert_dims(&d->attrs.lhs_contracting_dimensions, 1, 0);
  assert_dims(&d->attrs.rhs_contracting_dimensions, 1, 1);
  assert_int_equal(d->shape.dimensions[0], 5);
  assert_int_equal(d->shape.dimensions[1], 3);
  assert_int_equal(count_non_params(entry(m)), 1);
  hlo_module_destroy(m);

  /* the dot is also returned: two users, nothing changes */
  const char *text = "func.func @main(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) -> (tensor<5x3xf32>, tensor<3x5xf32>) {\n"
               "  %o = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] :"
               " (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>\n"
               "  %r = stablehlo.transpose %o, dims = [1, 0] : (tensor<3x5xf32>) -> tensor<5x3xf32>\n"
               "  return %r, %o : tensor<5x3xf32>, tensor<3x5xf32>\n}\n";
  m = simplified(text);
  assert_int_equal(count_op(entry(m), HLO_OPCODE_TRANSPOSE), 1);
  for (int i = 0; i < entry(m)->instruction_count; i++)
    if (entry(m)->instructions[i]->opcode == HLO_OPCODE_DOT_GENERAL)
      assert_int_equal(entry(m)->instructions[i]->operands[0]->parameter_number, 0);
  hlo_module_destroy(m);

  /* [b, m, n] -> [m, b, n]: n (the rhs's) stays minor, nothing changes */
  m = simp("%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>",
           "  %o = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1] :"
           " (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>\n"
           "  %r = stablehlo.transpose %o, dims = [1, 0, 2] : (tensor<2x3x5xf32>) -> tensor<3x2x5xf32>\n",
           "tensor<3x2x5xf32>");
  assert_int_equal(root(m)->opcode, HLO_OPCODE_TRANSPOSE);
  assert_int_equal(root(m)->operands[0]->operands[0]->parameter_number, 0);
  assert_dims(&root(m)->attrs.permutation, 3, 1, 0, 2);
  hlo_module_destroy(m);
}

static void test_compose_reshapes_and_broadcasts(void **state) {
  (void)state;
  hlo_module_t *m = simp("%x: tensor<2x3xf32>",
                         "  %a = stablehlo.reshape %x : (tensor<2x3xf32>) -> tensor<6xf32>\n"
                         "  %r = stablehlo.reshape %a : (tensor<6xf32>) -> tensor<3x2xf32>\n",
                         "tensor<3x2xf32>");
  assert_int_equal(count_non_params(entry(m)), 1);
  assert_int_equal(root(m)->opcode, HLO_OPCODE_RESHAPE);
  assert_int_equal(root(m)->operands[0]->opcode, HLO_OPCODE_PARAMETER);
  hlo_module_destroy(m);

  m = simp("%x: tensor<3xf32>",
           "  %a = stablehlo.broadcast_in_dim %x, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>\n"
           "  %r = stablehlo.broadcast_in_dim %a, dims = [2, 0] : (tensor<2x3xf32>) -> tensor<3x5x2xf32>\n",
           "tensor<3x5x2xf32>");
  assert_int_equal(count_non_params(entry(m)), 1);
  assert_int_equal(root(m)->opcode, HLO_OPCODE_BROADCAST_IN_DIM);
  assert_int_equal(root(m)->operands[0]->opcode, HLO_OPCODE_PARAMETER);
  assert_dims(&root(m)->attrs.broadcast_dimensions, 1, 0);
  hlo_module_destroy(m);
}

static void test_slice_of_iota(void **state) {
  (void)state;
  /* 7x10 = 70 elements: too large to fold into a constant */
  hlo_module_t *m = simp("",
                         "  %a = stablehlo.iota dim = 1 : tensor<16x16xi32>\n"
                         "  %r = stablehlo.slice %a [2:16:2, 0:10] : (tensor<16x16xi32>) -> tensor<7x10xi32>\n",
                         "tensor<7x10xi32>");
  assert_int_equal(count_non_params(entry(m)), 1);
  assert_int_equal(root(m)->opcode, HLO_OPCODE_IOTA);
  assert_int_equal(root(m)->attrs.dimension, 1);
  hlo_module_destroy(m);
  /* a slice that starts later along the iota dimension stays */
  m = simp("",
           "  %a = stablehlo.iota dim = 1 : tensor<8x16xi32>\n"
           "  %r = stablehlo.slice %a [0:8, 1:16] : (tensor<8x16xi32>) -> tensor<8x15xi32>\n",
           "tensor<8x15xi32>");
  assert_int_equal(root(m)->opcode, HLO_OPCODE_SLICE);
  hlo_module_destroy(m);
}

static void test_dynamic_slice_constant_indices(void **state) {
  (void)state;
  /* start 7 on a dimension of 10 with size 4 is clamped to 6; -2 to 0 */
  hlo_module_t *m = simp("%x: tensor<10x5xf32>",
                         "  %i = stablehlo.constant dense<7> : tensor<i64>\n"
                         "  %j = stablehlo.constant dense<-2> : tensor<i64>\n"
                         "  %r = stablehlo.dynamic_slice %x, %i, %j, sizes = [4, 3] : "
                         "(tensor<10x5xf32>, tensor<i64>, tensor<i64>) -> tensor<4x3xf32>\n",
                         "tensor<4x3xf32>");
  assert_int_equal(root(m)->opcode, HLO_OPCODE_SLICE);
  assert_dims(&root(m)->attrs.start_indices, 2, 6, 0);
  assert_dims(&root(m)->attrs.limit_indices, 2, 10, 3);
  assert_int_equal(count_non_params(entry(m)), 1);
  hlo_module_destroy(m);
  /* unsigned indices */
  m = simp("%x: tensor<10xf32>",
           "  %i = stablehlo.constant dense<200> : tensor<ui8>\n"
           "  %r = stablehlo.dynamic_slice %x, %i, sizes = [2] : (tensor<10xf32>, tensor<ui8>) -> tensor<2xf32>\n",
           "tensor<2xf32>");
  assert_int_equal(root(m)->opcode, HLO_OPCODE_SLICE);
  assert_dims(&root(m)->attrs.start_indices, 1, 8);
  hlo_module_destroy(m);
  /* a non-constant index stays */
  m = simp("%x: tensor<10xf32>, %i: tensor<i32>",
           "  %r = stablehlo.dynamic_slice %x, %i, sizes = [2] : (tensor<10xf32>, tensor<i32>) -> tensor<2xf32>\n",
           "tensor<2xf32>");
  assert_int_equal(root(m)->opcode, HLO_OPCODE_DYNAMIC_SLICE);
  hlo_module_destroy(m);
}

/* convolution(pad(x, +0)) takes the pad's edges into its padding; not
 * for another pad value, -0.0, negative edges (a crop), interior padding,
 * feature padding or lhs dilation. */
static void test_conv_absorbs_pad(void **state) {
  (void)state;
  static const char conv[] =
      "  %%r = stablehlo.convolution(%%p, %%w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = "
      "{pad = [[1, 0], [0, 2]]%s} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : "
      "(tensor<%s>, tensor<3x3x%dx4xf32>) -> tensor<%s>\n";
  struct {
    const char *value, *low, *high, *interior, *padded, *dilate, *out;
    int features; /* the padded input's (x has one fewer where the pad adds one) */
    bool folds;
  } cases[] = {
      {"0.0", "0, 2, 1, 0", "0, 1, 0, 0", "0, 0, 0, 0", "1x9x7x2xf32", "", "1x8x7x4xf32", 2, true},
      {"1.0", "0, 2, 1, 0", "0, 1, 0, 0", "0, 0, 0, 0", "1x9x7x2xf32", "", "1x8x7x4xf32", 2, false},
      {"-0.0", "0, 2, 1, 0", "0, 1, 0, 0", "0, 0, 0, 0", "1x9x7x2xf32", "", "1x8x7x4xf32", 2, false},
      {"0.0", "0, -1, 1, 0", "0, 1, 0, 0", "0, 0, 0, 0", "1x6x7x2xf32", "", "1x5x7x4xf32", 2, false},
      {"0.0", "0, 0, 0, 0", "0, 0, 0, 0", "0, 1, 0, 0", "1x11x6x2xf32", "", "1x10x6x4xf32", 2, false},
      {"0.0", "0, 0, 0, 0", "0, 0, 0, 1", "0, 0, 0, 0", "1x6x6x4xf32", "", "1x5x6x4xf32", 4, false},
      {"0.0", "0, 1, 0, 0", "0, 0, 0, 0", "0, 0, 0, 0", "1x7x6x2xf32", ", lhs_dilate = [2, 1]", "1x12x6x4xf32", 2,
       false},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char body[1024], c[512];
    int xf = cases[i].features - (strcmp(cases[i].high, "0, 0, 0, 1") == 0);
    snprintf(c, sizeof c, conv, cases[i].dilate, cases[i].padded, cases[i].features, cases[i].out);
    snprintf(body, sizeof body,
             "  %%z = stablehlo.constant dense<%s> : tensor<f32>\n"
             "  %%p = stablehlo.pad %%x, %%z, low = [%s], high = [%s], interior = [%s] : (tensor<1x6x6x%dxf32>, "
             "tensor<f32>) -> tensor<%s>\n%s",
             cases[i].value, cases[i].low, cases[i].high, cases[i].interior, xf, cases[i].padded, c);
    char params[128], rtype[64];
    snprintf(params, sizeof params, "%%x: tensor<1x6x6x%dxf32>, %%w: tensor<3x3x%dx4xf32>", xf, cases[i].features);
    snprintf(rtype, sizeof rtype, "tensor<%s>", cases[i].out);
    hlo_module_t *m = simp(params, body, rtype);
    assert_int_equal(root(m)->opcode, HLO_OPCODE_CONVOLUTION);
    assert_int_equal(count_op(entry(m), HLO_OPCODE_PAD), cases[i].folds ? 0 : 1);
    if (cases[i].folds) { /* [[1, 0], [0, 2]] plus the pad's (2, 1) and (1, 0) */
      assert_int_equal(root(m)->operands[0]->opcode, HLO_OPCODE_PARAMETER);
      assert_dims(&root(m)->attrs.padding, 4, 3, 1, 1, 2);
    }
    hlo_module_destroy(m);
  }
}

/* ----------------------------------------------- constant folding */

static void test_fold_integer_semantics(void **state) {
  (void)state;
  static const struct {
    const char *body;
    int32_t want[4];
  } cases[] = {
      {"  %a = stablehlo.constant dense<[2147483647, -5, 7, 0]> : tensor<4xi32>\n"
       "  %b = stablehlo.constant dense<[1, 3, -7, 0]> : tensor<4xi32>\n"
       "  %r = stablehlo.add %a, %b : tensor<4xi32>\n",
       {INT32_MIN, -2, 0, 0}},
      /* x / 0 = -1, INT_MIN / -1 = INT_MIN, truncation toward zero */
      {"  %a = stablehlo.constant dense<[5, -2147483648, -7, 7]> : tensor<4xi32>\n"
       "  %b = stablehlo.constant dense<[0, -1, 2, -2]> : tensor<4xi32>\n"
       "  %r = stablehlo.divide %a, %b : tensor<4xi32>\n",
       {-1, INT32_MIN, -3, -3}},
      /* x % 0 = x, x % -1 = 0, sign of the dividend */
      {"  %a = stablehlo.constant dense<[5, -2147483648, -7, 7]> : tensor<4xi32>\n"
       "  %b = stablehlo.constant dense<[0, -1, 2, -2]> : tensor<4xi32>\n"
       "  %r = stablehlo.remainder %a, %b : tensor<4xi32>\n",
       {5, 0, -1, 1}},
      /* shifts by >= 32 or negative give 0 */
      {"  %a = stablehlo.constant dense<[1, 1, 1, -1]> : tensor<4xi32>\n"
       "  %b = stablehlo.constant dense<[31, 32, -1, 4]> : tensor<4xi32>\n"
       "  %r = stablehlo.shift_left %a, %b : tensor<4xi32>\n",
       {INT32_MIN, 0, 0, -16}},
      {"  %a = stablehlo.constant dense<[-16, -16, 16, -1]> : tensor<4xi32>\n"
       "  %b = stablehlo.constant dense<[2, 40, 40, 31]> : tensor<4xi32>\n"
       "  %r = stablehlo.shift_right_arithmetic %a, %b : tensor<4xi32>\n",
       {-4, -1, 0, -1}},
      {"  %a = stablehlo.constant dense<[-16, -16, 16, -1]> : tensor<4xi32>\n"
       "  %b = stablehlo.constant dense<[28, 40, 2, 31]> : tensor<4xi32>\n"
       "  %r = stablehlo.shift_right_logical %a, %b : tensor<4xi32>\n",
       {15, 0, 4, 1}},
      {"  %a = stablehlo.constant dense<[-3, 5, -2147483648, 0]> : tensor<4xi32>\n"
       "  %r = stablehlo.abs %a : tensor<4xi32>\n",
       {3, 5, INT32_MIN, 0}},
      {"  %a = stablehlo.constant dense<[65536, 3, -3, 2]> : tensor<4xi32>\n"
       "  %r = stablehlo.multiply %a, %a : tensor<4xi32>\n",
       {0, 9, 9, 4}},
      /* f32 -> i32 saturates; NaN cannot be written here, see below */
      {"  %a = stablehlo.constant dense<[3.0e9, -3.0e9, -2.75, 2.75]> : tensor<4xf32>\n"
       "  %r = stablehlo.convert %a : (tensor<4xf32>) -> tensor<4xi32>\n",
       {INT32_MAX, INT32_MIN, -2, 2}},
      /* chain: (a + b) * c folds completely */
      {"  %a = stablehlo.constant dense<[1, 2, 3, 4]> : tensor<4xi32>\n"
       "  %b = stablehlo.constant dense<10> : tensor<4xi32>\n"
       "  %c = stablehlo.constant dense<2> : tensor<i32>\n"
       "  %d = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<4xi32>\n"
       "  %s = stablehlo.add %a, %b : tensor<4xi32>\n"
       "  %r = stablehlo.multiply %s, %d : tensor<4xi32>\n",
       {22, 24, 26, 28}},
      /* compare + select */
      {"  %a = stablehlo.constant dense<[1, -2, 3, -4]> : tensor<4xi32>\n"
       "  %z = stablehlo.constant dense<0> : tensor<4xi32>\n"
       "  %p = stablehlo.compare LT, %a, %z, SIGNED : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>\n"
       "  %n = stablehlo.negate %a : tensor<4xi32>\n"
       "  %r = stablehlo.select %p, %n, %a : tensor<4xi1>, tensor<4xi32>\n",
       {1, 2, 3, 4}},
      /* unsigned compare */
      {"  %a = stablehlo.constant dense<[1, 4294967295, 3, 2]> : tensor<4xui32>\n"
       "  %z = stablehlo.constant dense<2> : tensor<4xui32>\n"
       "  %p = stablehlo.compare GE, %a, %z, UNSIGNED : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xi1>\n"
       "  %r = stablehlo.convert %p : (tensor<4xi1>) -> tensor<4xi32>\n",
       {0, 1, 1, 1}},
      /* clamp with scalar bounds */
      {"  %lo = stablehlo.constant dense<-1> : tensor<i32>\n"
       "  %hi = stablehlo.constant dense<2> : tensor<i32>\n"
       "  %a = stablehlo.constant dense<[-5, 0, 1, 9]> : tensor<4xi32>\n"
       "  %r = stablehlo.clamp %lo, %a, %hi : (tensor<i32>, tensor<4xi32>, tensor<i32>) -> tensor<4xi32>\n",
       {-1, 0, 1, 2}},
      /* iota folds */
      {"  %r = stablehlo.iota dim = 0 : tensor<4xi32>\n", {0, 1, 2, 3}},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    hlo_module_t *m = simp("", cases[i].body, "tensor<4xi32>");
    const void *d = root_constant(m);
    for (int k = 0; k < 4; k++) {
      if (i32_at(d, k) != cases[i].want[k])
        fprintf(stderr, "case %zu element %d: got %d want %d\n", i, k, i32_at(d, k), cases[i].want[k]);
      assert_int_equal(i32_at(d, k), cases[i].want[k]);
    }
    assert_int_equal(count_non_params(entry(m)), 1);
    hlo_module_destroy(m);
  }
}

static void test_fold_unsigned_and_narrow(void **state) {
  (void)state;
  /* ui32: x / 0 = all ones */
  hlo_module_t *m = simp("",
                         "  %a = stablehlo.constant dense<[7, 4294967295]> : tensor<2xui32>\n"
                         "  %b = stablehlo.constant dense<[0, 2]> : tensor<2xui32>\n"
                         "  %r = stablehlo.divide %a, %b : tensor<2xui32>\n",
                         "tensor<2xui32>");
  const uint32_t *u = root_constant(m);
  assert_int_equal(u[0], 0xFFFFFFFFu);
  assert_int_equal(u[1], 0x7FFFFFFFu);
  hlo_module_destroy(m);
  /* i8 wraps */
  m = simp("",
           "  %a = stablehlo.constant dense<[127, -128]> : tensor<2xi8>\n"
           "  %b = stablehlo.constant dense<[1, -1]> : tensor<2xi8>\n"
           "  %r = stablehlo.add %a, %b : tensor<2xi8>\n",
           "tensor<2xi8>");
  const int8_t *s8 = root_constant(m);
  assert_int_equal(s8[0], -128);
  assert_int_equal(s8[1], 127);
  hlo_module_destroy(m);
  /* i64 convert of a negative value to ui64 sign-extends */
  m = simp("",
           "  %a = stablehlo.constant dense<[-1, 5]> : tensor<2xi32>\n"
           "  %r = stablehlo.convert %a : (tensor<2xi32>) -> tensor<2xui64>\n",
           "tensor<2xui64>");
  const uint64_t *u64 = root_constant(m);
  assert_true(u64[0] == UINT64_MAX);
  assert_true(u64[1] == 5);
  hlo_module_destroy(m);
}

static void test_fold_float(void **state) {
  (void)state;
  hlo_module_t *m = simp("",
                         "  %a = stablehlo.constant dense<[0.1, 1.0, -0.0, 3.0]> : tensor<4xf32>\n"
                         "  %b = stablehlo.constant dense<[0.2, 0.0, 0.0, 0.0]> : tensor<4xf32>\n"
                         "  %r = stablehlo.add %a, %b : tensor<4xf32>\n",
                         "tensor<4xf32>");
  const void *d = root_constant(m);
  volatile float x = 0.1f, y = 0.2f; /* the f32 sum, rounded once */
  assert_int_equal(f32_bits(f32_at(d, 0)), f32_bits(x + y));
  assert_true(f32_at(d, 1) == 1.0f);
  assert_int_equal(f32_bits(f32_at(d, 2)), 0u); /* -0 + 0 = +0 */
  hlo_module_destroy(m);

  /* 1 / 0 = inf is folded; max(-0, +0) = +0 */
  m = simp("",
           "  %a = stablehlo.constant dense<[1.0, -0.0, 2.0, -1.0]> : tensor<4xf32>\n"
           "  %b = stablehlo.constant dense<[0.0, 1.0, 4.0, 0.0]> : tensor<4xf32>\n"
           "  %c = stablehlo.constant dense<[0.0, 0.0, 4.0, 0.0]> : tensor<4xf32>\n"
           "  %q = stablehlo.divide %a, %b : tensor<4xf32>\n"
           "  %r = stablehlo.maximum %q, %c : tensor<4xf32>\n",
           "tensor<4xf32>");
  d = root_constant(m);
  assert_true(isinf(f32_at(d, 0)) && f32_at(d, 0) > 0);
  assert_int_equal(f32_bits(f32_at(d, 1)), 0u);
  assert_true(f32_at(d, 2) == 4.0f);
  assert_true(f32_at(d, 3) == 0.0f);
  hlo_module_destroy(m);

  /* i32 -> f32 rounds to nearest even */
  m = simp("",
           "  %a = stablehlo.constant dense<[16777217, 16777219, -3, 0]> : tensor<4xi32>\n"
           "  %r = stablehlo.convert %a : (tensor<4xi32>) -> tensor<4xf32>\n",
           "tensor<4xf32>");
  d = root_constant(m);
  assert_true(f32_at(d, 0) == 16777216.0f);
  assert_true(f32_at(d, 1) == 16777220.0f);
  assert_true(f32_at(d, 2) == -3.0f);
  hlo_module_destroy(m);

  /* total-order compare orders -0 before +0 */
  m = simp("",
           "  %a = stablehlo.constant dense<[-0.0, 1.0]> : tensor<2xf32>\n"
           "  %b = stablehlo.constant dense<[0.0, 1.0]> : tensor<2xf32>\n"
           "  %r = stablehlo.compare LT, %a, %b, TOTALORDER : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>\n",
           "tensor<2xi1>");
  const uint8_t *p = root_constant(m);
  assert_int_equal(p[0], 1);
  assert_int_equal(p[1], 0);
  hlo_module_destroy(m);
  m = simp("",
           "  %a = stablehlo.constant dense<[-0.0, 1.0]> : tensor<2xf32>\n"
           "  %b = stablehlo.constant dense<[0.0, 1.0]> : tensor<2xf32>\n"
           "  %r = stablehlo.compare LT, %a, %b, FLOAT : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>\n",
           "tensor<2xi1>");
  p = root_constant(m);
  assert_int_equal(p[0], 0);
  hlo_module_destroy(m);
}

/* Folds that must not happen. */
static void test_fold_must_not_fire(void **state) {
  (void)state;
  static const struct {
    const char *body, *rtype;
    hlo_opcode_t op;
  } cases[] = {
      /* transcendental functions: device results may differ from libm */
      {"  %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>\n"
       "  %r = stablehlo.exponential %a : tensor<2xf32>\n", "tensor<2xf32>", HLO_OPCODE_EXPONENTIAL},
      {"  %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>\n"
       "  %r = stablehlo.sqrt %a : tensor<2xf32>\n", "tensor<2xf32>", HLO_OPCODE_SQRT},
      {"  %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>\n"
       "  %r = stablehlo.power %a, %a : tensor<2xf32>\n", "tensor<2xf32>", HLO_OPCODE_POWER},
      /* 0 / 0 is NaN: not folded */
      {"  %a = stablehlo.constant dense<[0.0, 1.0]> : tensor<2xf32>\n"
       "  %b = stablehlo.constant dense<[0.0, 1.0]> : tensor<2xf32>\n"
       "  %r = stablehlo.divide %a, %b : tensor<2xf32>\n", "tensor<2xf32>", HLO_OPCODE_DIVIDE},
      /* NaN operands: not folded */
      {"  %a = stablehlo.constant dense<0x7FC00000> : tensor<2xf32>\n"
       "  %r = stablehlo.negate %a : tensor<2xf32>\n", "tensor<2xf32>", HLO_OPCODE_NEGATE},
      /* a subnormal result: devices may flush it */
      {"  %a = stablehlo.constant dense<[1.0e-38, 1.0]> : tensor<2xf32>\n"
       "  %b = stablehlo.constant dense<[0.5, 1.0]> : tensor<2xf32>\n"
       "  %r = stablehlo.multiply %a, %b : tensor<2xf32>\n", "tensor<2xf32>", HLO_OPCODE_MULTIPLY},
      /* f16 arithmetic is left to the device */
      {"  %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf16>\n"
       "  %r = stablehlo.add %a, %a : tensor<2xf16>\n", "tensor<2xf16>", HLO_OPCODE_ADD},
      /* more than 64 elements */
      {"  %a = stablehlo.constant dense<1> : tensor<65xi32>\n"
       "  %r = stablehlo.add %a, %a : tensor<65xi32>\n", "tensor<65xi32>", HLO_OPCODE_ADD},
      {"  %r = stablehlo.iota dim = 0 : tensor<65xi32>\n", "tensor<65xi32>", HLO_OPCODE_IOTA},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    hlo_module_t *m = simp("", cases[i].body, cases[i].rtype);
    if (root(m)->opcode != cases[i].op) fprintf(stderr, "case %zu folded\n", i);
    assert_int_equal(root(m)->opcode, cases[i].op);
    hlo_module_destroy(m);
  }
}

static void test_fold_data_movement(void **state) {
  (void)state;
  /* transpose, slice, reverse, concatenate, pad, reshape of constants (any type: f16 here) */
  hlo_module_t *m = simp("",
                         "  %a = stablehlo.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>\n"
                         "  %t = stablehlo.transpose %a, dims = [1, 0] : (tensor<2x3xi32>) -> tensor<3x2xi32>\n"
                         "  %s = stablehlo.slice %t [1:3, 0:2] : (tensor<3x2xi32>) -> tensor<2x2xi32>\n"
                         "  %v = stablehlo.reverse %s, dims = [1] : tensor<2x2xi32>\n"
                         "  %c = stablehlo.concatenate %v, %s, dim = 0 : (tensor<2x2xi32>, tensor<2x2xi32>) -> tensor<4x2xi32>\n"
                         "  %z = stablehlo.constant dense<9> : tensor<i32>\n"
                         "  %p = stablehlo.pad %c, %z, low = [0, 1], high = [0, 0], interior = [0, 0] : "
                         "(tensor<4x2xi32>, tensor<i32>) -> tensor<4x3xi32>\n"
                         "  %r = stablehlo.reshape %p : (tensor<4x3xi32>) -> tensor<12xi32>\n",
                         "tensor<12xi32>");
  /* t = [[1,4],[2,5],[3,6]]; s = [[2,5],[3,6]]; v = [[5,2],[6,3]];
   * c = [[5,2],[6,3],[2,5],[3,6]]; p = 9 prepended to each row */
  static const int32_t want[12] = {9, 5, 2, 9, 6, 3, 9, 2, 5, 9, 3, 6};
  const void *d = root_constant(m);
  for (int k = 0; k < 12; k++) assert_int_equal(i32_at(d, k), want[k]);
  assert_int_equal(count_non_params(entry(m)), 1);
  hlo_module_destroy(m);

  /* broadcast_in_dim of an f16 constant (bytes only) */
  m = simp("",
           "  %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf16>\n"
           "  %r = stablehlo.broadcast_in_dim %a, dims = [0] : (tensor<2xf16>) -> tensor<2x3xf16>\n",
           "tensor<2x3xf16>");
  const uint16_t *h = root_constant(m);
  assert_int_equal(h[0], 0x3C00);
  assert_int_equal(h[2], 0x3C00);
  assert_int_equal(h[3], 0x4000);
  assert_int_equal(h[5], 0x4000);
  hlo_module_destroy(m);
}

/* Region computations are simplified too. */
static void test_simplify_inside_regions(void **state) {
  (void)state;
  hlo_module_t *m = simplified(
      "func.func @main(%x: tensor<4xf32>) -> tensor<f32> {\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %r = stablehlo.reduce(%x init: %z) across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>\n"
      "   reducer(%a: tensor<f32>, %b: tensor<f32>) {\n"
      "    %one = stablehlo.constant dense<1.0> : tensor<f32>\n"
      "    %m = stablehlo.multiply %b, %one : tensor<f32>\n"
      "    %s = stablehlo.add %a, %m : tensor<f32>\n"
      "    stablehlo.return %s : tensor<f32>\n"
      "  }\n"
      "  return %r : tensor<f32>\n"
      "}\n");
  hlo_computation_t *body = root(m)->called_computations[0];
  assert_int_equal(count_op(body, HLO_OPCODE_MULTIPLY), 0);
  assert_int_equal(count_op(body, HLO_OPCODE_CONSTANT), 0);
  assert_int_equal(body->root->opcode, HLO_OPCODE_ADD);
  assert_ptr_equal(body->root->operands[1], body->parameters[1]);
  hlo_module_destroy(m);
}

/* ----------------------------------------------- CSE */

static void test_cse_merges_equal(void **state) {
  (void)state;
  hlo_module_t *m = parse_ok(
      "func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %a = stablehlo.add %x, %y : tensor<4xf32>\n"
      "  %b = stablehlo.add %x, %y : tensor<4xf32>\n"
      "  %c = stablehlo.constant dense<2.0> : tensor<4xf32>\n"
      "  %d = stablehlo.constant dense<2.0> : tensor<4xf32>\n"
      "  %e = stablehlo.multiply %a, %c : tensor<4xf32>\n"
      "  %f = stablehlo.multiply %b, %d : tensor<4xf32>\n"
      "  %r = stablehlo.subtract %e, %f : tensor<4xf32>\n"
      "  return %r : tensor<4xf32>\n"
      "}\n");
  assert_non_null(m);
  assert_true(run(m, codegen_cse_pass));
  hlo_computation_t *c = entry(m);
  assert_int_equal(count_op(c, HLO_OPCODE_ADD), 1);
  assert_int_equal(count_op(c, HLO_OPCODE_CONSTANT), 1);
  assert_int_equal(count_op(c, HLO_OPCODE_MULTIPLY), 1);
  assert_ptr_equal(root(m)->operands[0], root(m)->operands[1]);
  /* x - x stays: floats (NaN, inf) */
  assert_int_equal(root(m)->opcode, HLO_OPCODE_SUBTRACT);
  assert_false(run(m, codegen_cse_pass));
  hlo_module_destroy(m);
}

static void test_cse_keeps_different(void **state) {
  (void)state;
  hlo_module_t *m = parse_ok(
      "func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xi1>, tensor<4xi1>, tensor<2xf32>, tensor<2xf32>, tensor<4xf32>, tensor<4xf32>) {\n"
      "  %c0 = stablehlo.constant dense<0.0> : tensor<4xf32>\n"
      "  %c1 = stablehlo.constant dense<-0.0> : tensor<4xf32>\n"
      "  %p0 = stablehlo.compare LT, %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>\n"
      "  %p1 = stablehlo.compare GT, %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>\n"
      "  %s0 = stablehlo.slice %x [0:2] : (tensor<4xf32>) -> tensor<2xf32>\n"
      "  %s1 = stablehlo.slice %x [2:4] : (tensor<4xf32>) -> tensor<2xf32>\n"
      "  %a0 = stablehlo.add %x, %y : tensor<4xf32>\n"
      "  %a1 = stablehlo.add %y, %x : tensor<4xf32>\n"
      "  return %c0, %c1, %p0, %p1, %s0, %s1, %a0, %a1 : tensor<4xf32>, tensor<4xf32>, tensor<4xi1>, tensor<4xi1>, tensor<2xf32>, tensor<2xf32>, tensor<4xf32>, tensor<4xf32>\n"
      "}\n");
  assert_non_null(m);
  int before = entry(m)->instruction_count;
  assert_false(run(m, codegen_cse_pass));
  assert_int_equal(entry(m)->instruction_count, before);
  hlo_module_destroy(m);
}

static void test_cse_regions_and_side_effects(void **state) {
  (void)state;
  hlo_module_t *m = parse_ok(
      "func.func @main(%x: tensor<4xf32>) -> tensor<f32> {\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %r0 = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>\n"
      "  %r1 = stablehlo.reduce(%x init: %z) applies stablehlo.maximum across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>\n"
      "  %e = stablehlo.constant dense<1.0> : tensor<4xf32>\n"
      "  check.expect_almost_eq %x, %e : tensor<4xf32>\n"
      "  check.expect_almost_eq %x, %e : tensor<4xf32>\n"
      "  %s = stablehlo.add %r0, %r1 : tensor<f32>\n"
      "  return %s : tensor<f32>\n"
      "}\n");
  assert_non_null(m);
  run(m, codegen_cse_pass);
  /* reduces with different bodies stay; both checks stay */
  assert_int_equal(count_op(entry(m), HLO_OPCODE_REDUCE), 2);
  assert_int_equal(count_op(entry(m), HLO_OPCODE_CHECK), 2);
  hlo_module_destroy(m);
}

/* ----------------------------------------------- DCE */

static void test_dce(void **state) {
  (void)state;
  hlo_module_t *m = parse_ok(
      "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %unused = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>\n"
      "  %n = stablehlo.negate %x : tensor<4xf32>\n"
      "  %e = stablehlo.constant dense<1.0> : tensor<4xf32>\n"
      "  check.expect_almost_eq %n, %e : tensor<4xf32>\n"
      "  %t = stablehlo.custom_call @effect(%x) {has_side_effect = true} : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  %u = stablehlo.custom_call @pure(%x) : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  return %x : tensor<4xf32>\n"
      "}\n");
  assert_non_null(m);
  int comps = m->computation_count;
  assert_true(comps >= 2); /* main and the reduce body */
  assert_true(run(m, codegen_dce_pass));
  hlo_computation_t *c = entry(m);
  assert_int_equal(count_op(c, HLO_OPCODE_REDUCE), 0);
  assert_int_equal(count_op(c, HLO_OPCODE_CHECK), 1);
  assert_int_equal(count_op(c, HLO_OPCODE_NEGATE), 1);   /* used by the check */
  assert_int_equal(count_op(c, HLO_OPCODE_CONSTANT), 1); /* the check's expected value */
  assert_int_equal(count_op(c, HLO_OPCODE_CUSTOM_CALL), 1);
  assert_int_equal(m->computation_count, comps - 1); /* the reduce body is gone */
  assert_ptr_equal(m->computations[m->computation_count - 1], c);
  assert_false(run(m, codegen_dce_pass));
  hlo_module_destroy(m);
}

/* ----------------------------------------------- rewrite utilities */

/* expand splits a reduce whose results combine more than 32768 elements
 * each into a chain of reduces of at most 8192 (codegen/expand.c, "long
 * reductions"): factors found exactly where they exist, else the end
 * padded with the init value; reduced from the innermost group out. */
/* |text| parsed and run through the expand pass, which must change it
 * (|changes|) or not. */
static hlo_module_t *expanded(const char *text, bool changes) {
  hlo_module_t *m = parse_ok(text);
  assert_non_null(m);
  assert_int_equal(run(m, codegen_expand_pass), changes);
  return m;
}

static hlo_instruction_t *split_of(hlo_module_t **out, const char *type, const char *dims, const char *result) {
  char text[1024];
  snprintf(text, sizeof text,
           "func.func @main(%%x: %s) -> %s {\n"
           "  %%z = stablehlo.constant dense<0> : tensor<%s>\n"
           "  %%r = stablehlo.reduce(%%x init: %%z) applies stablehlo.add across dimensions = [%s] : "
           "(%s, tensor<%s>) -> %s\n"
           "  return %%r : %s\n}\n",
           type, result, strstr(type, "f32") ? "f32" : "i8", dims, type, strstr(type, "f32") ? "f32" : "i8", result,
           result);
  hlo_module_t *m = expanded(text, true);
  *out = m;
  return root(m);
}

static void test_split_long_reductions(void **state) {
  (void)state;
  /* 10^8 = 2 x 6250 x 8000: three reduces, innermost first, no padding */
  hlo_module_t *m;
  hlo_instruction_t *r = split_of(&m, "tensor<100000000xi8>", "0", "tensor<i8>");
  assert_int_equal(r->opcode, HLO_OPCODE_REDUCE);
  assert_dims(&r->attrs.dimensions, 1, 0);
  hlo_instruction_t *r1 = r->operands[0], *r2 = r1->operands[0];
  assert_int_equal(r1->opcode, HLO_OPCODE_REDUCE);
  assert_dims(&r1->attrs.dimensions, 1, 1);
  assert_int_equal(r1->shape.rank, 1);
  assert_int_equal(r2->opcode, HLO_OPCODE_REDUCE);
  assert_dims(&r2->attrs.dimensions, 1, 2);
  assert_int_equal(r2->operands[0]->opcode, HLO_OPCODE_RESHAPE);
  hlo_shape_t *s = &r2->operands[0]->shape;
  assert_int_equal(s->rank, 3);
  assert_int_equal(s->dimensions[0], 2);
  assert_int_equal(s->dimensions[1], 6250);
  assert_int_equal(s->dimensions[2], 8000);
  assert_int_equal(r2->operands[0]->operands[0]->opcode, HLO_OPCODE_PARAMETER);
  hlo_module_destroy(m);

  /* a prime length: 13 x 7693, the 6 past the end padded with the init */
  r = split_of(&m, "tensor<100003xf32>", "0", "tensor<f32>");
  assert_dims(&r->attrs.dimensions, 1, 0);
  r1 = r->operands[0];
  assert_dims(&r1->attrs.dimensions, 1, 1);
  hlo_instruction_t *reshape = r1->operands[0], *pad = reshape->operands[0];
  assert_int_equal(reshape->shape.dimensions[0], 13);
  assert_int_equal(reshape->shape.dimensions[1], 7693);
  assert_int_equal(pad->opcode, HLO_OPCODE_PAD);
  assert_dims(&pad->attrs.edge_padding_high, 1, 6);
  assert_ptr_equal(pad->operands[1], r1->operands[1]);
  hlo_module_destroy(m);

  /* two reduced dimensions of 300 (90000 per result): the inner one first */
  r = split_of(&m, "tensor<300x2x300xf32>", "0, 2", "tensor<2xf32>");
  assert_dims(&r->attrs.dimensions, 1, 0);
  assert_dims(&r->operands[0]->attrs.dimensions, 1, 2);
  assert_int_equal(r->operands[0]->operands[0]->opcode, HLO_OPCODE_PARAMETER);
  hlo_module_destroy(m);

  /* 32768 per result stays one reduce */
  m = expanded(
      "func.func @main(%x: tensor<4x32768xf32>) -> tensor<4xf32> {\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %r = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [1] : "
      "(tensor<4x32768xf32>, tensor<f32>) -> tensor<4xf32>\n"
      "  return %r : tensor<4xf32>\n}\n",
      false);
  assert_int_equal(count_op(entry(m), HLO_OPCODE_REDUCE), 1);
  hlo_module_destroy(m);
}

/* A sort of rows longer than 1024 becomes merge passes (sort_runs): a
 * first pass over groups of 8, then 4 runs merged into one per pass, the
 * last up to the row (5000: 1 -> 8 -> 32 -> 128 -> 512 -> 2048 -> 5000),
 * each with the sort's comparator and dimension; chlo.top_k of such rows
 * a sort of (operand, iota) keeping the first k; rows of 1024 stay one
 * sort. */
static void test_long_sorts(void **state) {
  (void)state;
  static const char sort_text[] =
      "func.func @main(%x: tensor<5000x2xf32>) -> tensor<5000x2xf32> {\n"
      "  %s = \"stablehlo.sort\"(%x) <{dimension = 0 : i64}> ({\n"
      "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
      "    %lt = stablehlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
      "    stablehlo.return %lt : tensor<i1>\n"
      "  }) : (tensor<5000x2xf32>) -> tensor<5000x2xf32>\n"
      "  return %s : tensor<5000x2xf32>\n}\n";
  hlo_module_t *m = parse_ok(sort_text);
  assert_non_null(m);
  hlo_computation_t *cmp = entry(m)->root->called_computations[0];
  assert_true(run(m, codegen_expand_pass));
  static const int64_t runs[][2] = {{2048, 5000}, {512, 2048}, {128, 512}, {32, 128}, {8, 32}, {1, 8}};
  hlo_instruction_t *in = root(m);
  for (int i = 0; i < 6; i++) {
    assert_int_equal(in->opcode, HLO_OPCODE_SORT_RUNS);
    assert_int_equal(in->attrs.dimension, 0);
    assert_int_equal(in->attrs.run_length, runs[i][0]);
    assert_int_equal(in->attrs.merged_run_length, runs[i][1]);
    assert_ptr_equal(in->called_computations[0], cmp);
    in = in->operands[0];
  }
  assert_int_equal(in->opcode, HLO_OPCODE_PARAMETER);
  hlo_module_destroy(m);

  /* top 20 of 5000: runs of 8 sorted, then each merged run keeps its
   * first 20, the rows shrinking 5000 -> 3128 -> 788 -> 200 -> 60 -> 20 */
  m = expanded(
      "func.func @main(%x: tensor<3x5000xi32>) -> (tensor<3x20xi32>, tensor<3x20xi32>) {\n"
      "  %v, %i = chlo.top_k(%x, k = 20) : tensor<3x5000xi32> -> (tensor<3x20xi32>, tensor<3x20xi32>)\n"
      "  return %v, %i : tensor<3x20xi32>, tensor<3x20xi32>\n}\n",
      true);
  assert_int_equal(count_op(entry(m), HLO_OPCODE_CHLO_TOP_K), 0);
  static const int64_t passes[][4] = {/* run, merged, k, result length */
                                      {20, 60, 20, 20},  {20, 80, 20, 60}, {20, 80, 20, 200},
                                      {20, 80, 20, 788}, {8, 32, 20, 3128}, {1, 8, 0, 5000}};
  hlo_instruction_t *tuple = root(m);
  assert_int_equal(tuple->opcode, HLO_OPCODE_TUPLE);
  in = tuple->operands[0]->operands[0]; /* get_tuple_element 0 of the last pass */
  for (int i = 0; i < 6; i++) {
    assert_int_equal(in->opcode, HLO_OPCODE_SORT_RUNS);
    assert_int_equal(in->attrs.dimension, 1);
    assert_int_equal(in->attrs.run_length, passes[i][0]);
    assert_int_equal(in->attrs.merged_run_length, passes[i][1]);
    assert_int_equal(in->attrs.k, passes[i][2]);
    assert_int_equal(in->shape.tuple_shapes[1].dimensions[1], passes[i][3]);
    if (i < 5) in = in->operands[0]->operands[0];
  }
  assert_int_equal(in->operands[0]->opcode, HLO_OPCODE_PARAMETER);
  assert_int_equal(in->operands[1]->opcode, HLO_OPCODE_IOTA);
  assert_int_equal(in->operands[1]->attrs.dimension, 1);
  hlo_instruction_t *gt = in->called_computations[0]->root;
  assert_int_equal(gt->opcode, HLO_OPCODE_COMPARE);
  assert_int_equal(gt->attrs.comparison_direction, HLO_CMP_GT);
  assert_int_equal(gt->attrs.compare_type, HLO_CMP_TYPE_SIGNED);
  hlo_module_destroy(m);

  char text[sizeof sort_text];
  snprintf(text, sizeof text, "%s", sort_text);
  for (char *p = strstr(text, "5000"); p; p = strstr(p, "5000")) memcpy(p, "1024", 4);
  m = expanded(text, false);
  assert_int_equal(root(m)->opcode, HLO_OPCODE_SORT);
  hlo_module_destroy(m);
}

static void test_rewrite_utilities(void **state) {
  (void)state;
  hlo_module_t *m = parse_ok(
      "func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %a = stablehlo.add %x, %y : tensor<4xf32>\n"
      "  %b = stablehlo.multiply %a, %a : tensor<4xf32>\n"
      "  return %b : tensor<4xf32>\n"
      "}\n");
  assert_non_null(m);
  hlo_computation_t *c = entry(m);
  hlo_instruction_t *add = c->instructions[2], *mul = c->instructions[3];
  hlo_instruction_t *ops[2] = {c->parameters[0], c->parameters[1]};
  hlo_instruction_t *sub = hlo_instruction_create(m, HLO_OPCODE_SUBTRACT, &add->shape, 2, ops);
  assert_non_null(sub);
  assert_true(hlo_computation_insert_before(m, c, sub, add));
  assert_ptr_equal(c->instructions[2], sub);
  assert_int_equal(hlo_replace_all_uses(c, add, sub), 2);
  assert_ptr_equal(mul->operands[0], sub);
  verify_ok(m);
  assert_int_equal(hlo_computation_remove_dead(c), 1); /* the add */
  assert_int_equal(count_op(c, HLO_OPCODE_ADD), 0);
  assert_int_equal(hlo_replace_all_uses(c, mul, sub), 1); /* the root */
  assert_ptr_equal(c->root, sub);
  assert_int_equal(hlo_computation_remove_dead(c), 1);
  verify_ok(m);
  float v[4] = {1, 2, 3, 4};
  hlo_instruction_t *k = hlo_constant_create(m, &add->shape, v);
  assert_non_null(k);
  assert_true(hlo_computation_insert_before(m, c, k, NULL));
  hlo_computation_set_root(c, k);
  verify_ok(m);
  assert_true(f32_at(k->literal->data, 3) == 4.0f);
  hlo_module_destroy(m);
}

/* attrs_equal in codegen/cse.c lists every field of hlo_attrs_t: a new
 * field changes the size and must be added there (then update this). */
static void test_attrs_struct_unchanged(void **state) {
  (void)state;
  if (sizeof(void *) != 8) skip();
  assert_int_equal(sizeof(hlo_attrs_t), 1008);
}

/* ----------------------------------------------- trip counts */

/* The first while of |m|'s entry computation. */
static hlo_instruction_t *first_while(hlo_module_t *m) {
  for (int i = 0; i < entry(m)->instruction_count; i++)
    if (entry(m)->instructions[i]->opcode == HLO_OPCODE_WHILE) return entry(m)->instructions[i];
  return NULL;
}

/* A counting loop over |type| values: i from INIT while (i DIR BOUND),
 * i = i STEP_OP STEP, the bound given as |bound| says: "const" (in the
 * cond), "carried" (a loop value the body passes on), "capture" (a value
 * of main the cond uses).  Returns the trip count pass's verdict. */
static bool loop_trip_count(const char *type, long long init, const char *dir, const char *cmp_type,
                            long long bound, const char *step_op, long long step, const char *bound_kind,
                            int64_t *out_count) {
  char text[4096];
  bool carried = strcmp(bound_kind, "carried") == 0, capture = strcmp(bound_kind, "capture") == 0;
  char bound_def[256] = "", bound_use[32] = "%n";
  if (carried) snprintf(bound_use, sizeof bound_use, "%%b");
  else snprintf(bound_def, sizeof bound_def, "%s%%n = stablehlo.constant dense<%lld> : tensor<%s>\n",
                capture ? "  " : "    ", bound, type);
  snprintf(text, sizeof text,
           "func.func @main(%%x: tensor<4xf32>) -> tensor<4xf32> {\n"
           "  %%c0 = stablehlo.constant dense<%lld> : tensor<%s>\n"
           "  %%cb = stablehlo.constant dense<%lld> : tensor<%s>\n"
           "%s"
           "  %%r:3 = stablehlo.while(%%i = %%c0, %%v = %%x, %%b = %%cb) : tensor<%s>, tensor<4xf32>, tensor<%s>\n"
           "   cond {\n"
           "%s"
           "    %%p = stablehlo.compare %s, %%i, %s, %s : (tensor<%s>, tensor<%s>) -> tensor<i1>\n"
           "    stablehlo.return %%p : tensor<i1>\n"
           "  } do {\n"
           "    %%a = stablehlo.add %%v, %%v : tensor<4xf32>\n"
           "    %%s = stablehlo.constant dense<%lld> : tensor<%s>\n"
           "    %%j = stablehlo.%s %%i, %%s : tensor<%s>\n"
           "    stablehlo.return %%j, %%a, %%b : tensor<%s>, tensor<4xf32>, tensor<%s>\n"
           "  }\n"
           "  return %%r#1 : tensor<4xf32>\n"
           "}\n",
           init, type, bound, type, capture ? bound_def : "", type, type, capture || carried ? "" : bound_def, dir,
           bound_use, cmp_type, type, type, step, type, step_op, type, type, type);
  hlo_module_t *m = simplified(text);
  hlo_instruction_t *w = first_while(m);
  assert_non_null(w);
  bool changed = false;
  expect_ok(codegen_trip_count_pass(m, NULL, &changed));
  bool known = w->attrs.has_known_trip_count;
  assert_int_equal(changed, known);
  *out_count = w->attrs.known_trip_count;
  if (!known) assert_int_equal(*out_count, 0);
  hlo_module_destroy(m);
  return known;
}

static int64_t known_count(const char *type, long long init, const char *dir, long long bound, long long step) {
  int64_t n = -1;
  if (!loop_trip_count(type, init, dir, "SIGNED", bound, "add", step, "const", &n))
    fail_msg("%s from %lld while %s %lld by %lld: not counted", type, init, dir, bound, step);
  return n;
}

static void test_trip_count_patterns(void **state) {
  (void)state;
  int64_t n;
  /* fori_loop's form in every direction and bound form */
  assert_int_equal(known_count("i32", 0, "LT", 100, 1), 100);
  assert_int_equal(known_count("i32", 0, "LE", 100, 1), 101);
  assert_int_equal(known_count("i32", 0, "LT", 100, 7), 15); /* 0, 7, .., 98 */
  assert_int_equal(known_count("i32", 0, "LE", 98, 7), 15);
  assert_int_equal(known_count("i32", 10, "GT", 0, -1), 10);
  assert_int_equal(known_count("i32", 10, "GE", 0, -3), 4); /* 10, 7, 4, 1 */
  assert_int_equal(known_count("i32", 0, "NE", 5, 1), 5);
  assert_int_equal(known_count("i32", 5, "NE", 0, -1), 5);
  assert_int_equal(known_count("i32", 3, "EQ", 3, 1), 1);
  assert_int_equal(known_count("i32", 7, "LT", 3, 1), 0); /* never entered */
  assert_int_equal(known_count("i32", 7, "LT", 3, -1), 0); /* never entered, even stepping away */
  assert_int_equal(known_count("i64", -5, "LT", 5, 2), 5);
  assert_int_equal(known_count("i8", -128, "LT", 127, 1), 255);
  assert_int_equal(known_count("i64", 0, "LT", 1000000000000LL, 1000), 1000000000);
  assert_true(loop_trip_count("i32", 0, "LT", "SIGNED", 100, "subtract", -2, "const", &n));
  assert_int_equal(n, 50);
  assert_true(loop_trip_count("i32", 0, "LT", "SIGNED", 100, "add", 1, "carried", &n));
  assert_int_equal(n, 100);
  assert_true(loop_trip_count("i32", 0, "LT", "SIGNED", 100, "add", 1, "capture", &n));
  assert_int_equal(n, 100);
  /* unsigned: by the compare's type, and the wrap of NE */
  assert_true(loop_trip_count("ui32", 0, "LT", "UNSIGNED", 4000000000LL, "add", 1000000000, "const", &n));
  assert_int_equal(n, 4);
  assert_true(loop_trip_count("ui8", 250, "NE", "UNSIGNED", 4, "add", 1, "const", &n));
  assert_int_equal(n, 10);
  assert_true(loop_trip_count("ui32", 4294967295LL, "LT", "UNSIGNED", 5, "add", 1, "const", &n)); /* never */
  assert_int_equal(n, 0);
  assert_true(loop_trip_count("ui64", 0, "LT", "UNSIGNED", 3, "add", 1, "const", &n));
  assert_int_equal(n, 3);
  /* not known: would wrap, never ends, steps away from the bound */
  assert_false(loop_trip_count("i8", 0, "LT", "SIGNED", 127, "add", 2, "const", &n)); /* 126 + 2 wraps */
  assert_false(loop_trip_count("i8", 0, "LE", "SIGNED", 127, "add", 1, "const", &n));
  assert_false(loop_trip_count("i32", 0, "LT", "SIGNED", 10, "add", 0, "const", &n));
  assert_false(loop_trip_count("i32", 0, "LT", "SIGNED", 10, "add", -1, "const", &n));
  assert_false(loop_trip_count("i32", 0, "NE", "SIGNED", 10, "add", 3, "const", &n));
  assert_false(loop_trip_count("i32", 0, "LT", "SIGNED", 10, "multiply", 1, "const", &n));
}

/* Forms that are not counted: the start, the bound or the step not
 * constants, a cond that does more than compare, a float counter, a side
 * effect in the cond. */
static void test_trip_count_unknown(void **state) {
  (void)state;
  static const char *const programs[] = {
      /* the start is an argument */
      "func.func @main(%s: tensor<i32>) -> tensor<i32> {\n"
      "  %r = stablehlo.while(%i = %s) : tensor<i32>\n"
      "   cond {\n"
      "    %n = stablehlo.constant dense<10> : tensor<i32>\n"
      "    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "    stablehlo.return %p : tensor<i1>\n"
      "  } do {\n"
      "    %c1 = stablehlo.constant dense<1> : tensor<i32>\n"
      "    %j = stablehlo.add %i, %c1 : tensor<i32>\n"
      "    stablehlo.return %j : tensor<i32>\n"
      "  }\n"
      "  return %r : tensor<i32>\n}\n",
      /* the carried bound changes */
      "func.func @main(%x: tensor<i32>) -> tensor<i32> {\n"
      "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %c9 = stablehlo.constant dense<9> : tensor<i32>\n"
      "  %r:2 = stablehlo.while(%i = %c0, %b = %c9) : tensor<i32>, tensor<i32>\n"
      "   cond {\n"
      "    %p = stablehlo.compare LT, %i, %b, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "    stablehlo.return %p : tensor<i1>\n"
      "  } do {\n"
      "    %c1 = stablehlo.constant dense<1> : tensor<i32>\n"
      "    %j = stablehlo.add %i, %c1 : tensor<i32>\n"
      "    %k = stablehlo.subtract %b, %c1 : tensor<i32>\n"
      "    stablehlo.return %j, %k : tensor<i32>, tensor<i32>\n"
      "  }\n"
      "  return %r#0 : tensor<i32>\n}\n",
      /* the step is a loop value */
      "func.func @main(%x: tensor<i32>) -> tensor<i32> {\n"
      "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %c1 = stablehlo.constant dense<1> : tensor<i32>\n"
      "  %r:2 = stablehlo.while(%i = %c0, %s = %c1) : tensor<i32>, tensor<i32>\n"
      "   cond {\n"
      "    %n = stablehlo.constant dense<10> : tensor<i32>\n"
      "    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "    stablehlo.return %p : tensor<i1>\n"
      "  } do {\n"
      "    %j = stablehlo.add %i, %s : tensor<i32>\n"
      "    %t = stablehlo.add %s, %s : tensor<i32>\n"
      "    stablehlo.return %j, %t : tensor<i32>, tensor<i32>\n"
      "  }\n"
      "  return %r#0 : tensor<i32>\n}\n",
      /* the cond also asks another value */
      "func.func @main(%x: tensor<i1>) -> tensor<i32> {\n"
      "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %r:2 = stablehlo.while(%i = %c0, %go = %x) : tensor<i32>, tensor<i1>\n"
      "   cond {\n"
      "    %n = stablehlo.constant dense<10> : tensor<i32>\n"
      "    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "    %q = stablehlo.and %p, %go : tensor<i1>\n"
      "    stablehlo.return %q : tensor<i1>\n"
      "  } do {\n"
      "    %c1 = stablehlo.constant dense<1> : tensor<i32>\n"
      "    %j = stablehlo.add %i, %c1 : tensor<i32>\n"
      "    %f = stablehlo.not %go : tensor<i1>\n"
      "    stablehlo.return %j, %f : tensor<i32>, tensor<i1>\n"
      "  }\n"
      "  return %r#0 : tensor<i32>\n}\n",
      /* a float counter */
      "func.func @main(%x: tensor<f32>) -> tensor<f32> {\n"
      "  %c0 = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %r = stablehlo.while(%i = %c0) : tensor<f32>\n"
      "   cond {\n"
      "    %n = stablehlo.constant dense<10.0> : tensor<f32>\n"
      "    %p = stablehlo.compare LT, %i, %n, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
      "    stablehlo.return %p : tensor<i1>\n"
      "  } do {\n"
      "    %c1 = stablehlo.constant dense<1.0> : tensor<f32>\n"
      "    %j = stablehlo.add %i, %c1 : tensor<f32>\n"
      "    stablehlo.return %j : tensor<f32>\n"
      "  }\n"
      "  return %r : tensor<f32>\n}\n",
      /* a side effect in the cond */
      "func.func @main(%x: tensor<i32>) -> tensor<i32> {\n"
      "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %r = stablehlo.while(%i = %c0) : tensor<i32>\n"
      "   cond {\n"
      "    %n = stablehlo.constant dense<10> : tensor<i32>\n"
      "    stablehlo.custom_call @log(%i) {has_side_effect = true} : (tensor<i32>) -> ()\n"
      "    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "    stablehlo.return %p : tensor<i1>\n"
      "  } do {\n"
      "    %c1 = stablehlo.constant dense<1> : tensor<i32>\n"
      "    %j = stablehlo.add %i, %c1 : tensor<i32>\n"
      "    stablehlo.return %j : tensor<i32>\n"
      "  }\n"
      "  return %r : tensor<i32>\n}\n",
  };
  for (size_t k = 0; k < sizeof programs / sizeof programs[0]; k++) {
    hlo_module_t *m = simplified(programs[k]);
    hlo_instruction_t *w = first_while(m);
    assert_non_null(w);
    hlo_trip_count_t tc;
    if (hlo_while_trip_count(w, &tc)) fail_msg("program %zu: counted %lld trips", k, (long long)tc.count);
    bool changed = true;
    expect_ok(codegen_trip_count_pass(m, NULL, &changed));
    assert_false(changed);
    assert_false(w->attrs.has_known_trip_count);
    hlo_module_destroy(m);
  }
}

/* Every i8 and ui8 loop "for (v = a; v DIR b; v += s)": where the analysis
 * gives a count, running the loop (with the spec's wrapping arithmetic)
 * takes exactly that many steps; where the loop ends without wrapping and
 * steps by a nonzero amount towards its bound (or by +-1 under NE), the
 * analysis gives its count.  The constants of one parsed loop are
 * rewritten in place for each case. */
static void test_trip_count_exhaustive_8bit(void **state) {
  (void)state;
  static const char *const dirs[] = {"EQ", "NE", "GE", "GT", "LE", "LT"};
  for (int sign = 0; sign < 2; sign++) {
    int64_t n;
    const char *type = sign ? "i8" : "ui8";
    /* parse one loop, then rewrite its constants and direction */
    char text[2048];
    snprintf(text, sizeof text,
             "func.func @main(%%x: tensor<4xf32>) -> tensor<4xf32> {\n"
             "  %%c0 = stablehlo.constant dense<1> : tensor<%s>\n"
             "  %%r:2 = stablehlo.while(%%i = %%c0, %%v = %%x) : tensor<%s>, tensor<4xf32>\n"
             "   cond {\n"
             "    %%n = stablehlo.constant dense<2> : tensor<%s>\n"
             "    %%p = stablehlo.compare LT, %%i, %%n, %s : (tensor<%s>, tensor<%s>) -> tensor<i1>\n"
             "    stablehlo.return %%p : tensor<i1>\n"
             "  } do {\n"
             "    %%a = stablehlo.add %%v, %%v : tensor<4xf32>\n"
             "    %%s = stablehlo.constant dense<3> : tensor<%s>\n"
             "    %%j = stablehlo.add %%i, %%s : tensor<%s>\n"
             "    stablehlo.return %%j, %%a : tensor<%s>, tensor<4xf32>\n"
             "  }\n"
             "  return %%r#1 : tensor<4xf32>\n"
             "}\n",
             type, type, type, sign ? "SIGNED" : "UNSIGNED", type, type, type, type, type);
    hlo_module_t *m = simplified(text);
    hlo_instruction_t *w = first_while(m);
    assert_non_null(w);
    hlo_instruction_t *cmp = w->called_computations[0]->root, *step_op = NULL;
    const hlo_instruction_t *body_root = w->called_computations[1]->root;
    step_op = body_root->operands[0];
    uint8_t *init = w->operands[0]->literal->data, *bound = cmp->operands[1]->literal->data;
    uint8_t *step = step_op->operands[1]->literal->data;
    assert_int_equal(cmp->operands[1]->opcode, HLO_OPCODE_CONSTANT);
    assert_int_equal(step_op->operands[1]->opcode, HLO_OPCODE_CONSTANT);
    long checked = 0, counted = 0;
    for (int d = 0; d < 6; d++) {
      cmp->attrs.comparison_direction = (hlo_comparison_direction_t)d;
      assert_string_equal(dirs[d], dirs[cmp->attrs.comparison_direction]);
      for (int a = 0; a < 256; a += 3)
        for (int b = 0; b < 256; b += 5)
          for (int s = 0; s < 256; s += (s < 8 || s > 248) ? 1 : 17) {
            *init = (uint8_t)a;
            *bound = (uint8_t)b;
            *step = (uint8_t)s;
            /* run it (at most 256 steps visit every value); the step
             * as a signed number ss: adding 200 to a ui8 is taking 56 */
            int ss = (int8_t)(uint8_t)s, v = a, steps = 0;
            bool wrapped = false, ended = false;
            for (; steps <= 256; steps++) {
              int x = sign ? (int8_t)v : v, y = sign ? (int8_t)b : b;
              bool go = d == 0 ? x == y : d == 1 ? x != y : d == 2 ? x >= y : d == 3 ? x > y : d == 4 ? x <= y : x < y;
              if (!go) {
                ended = true;
                break;
              }
              int next = x + ss;
              if (next != (sign ? (int8_t)(uint8_t)next : (uint8_t)next)) wrapped = true;
              v = (uint8_t)next;
            }
            hlo_trip_count_t tc;
            bool known = hlo_while_trip_count(w, &tc);
            n = tc.count;
            if (known && (tc.counter != 0 || tc.init != (uint64_t)a || tc.step != (uint64_t)s))
              fail_msg("%s a=%d s=%d: counter %d from %llu by %llu", type, a, s, tc.counter, (unsigned long long)tc.init,
                       (unsigned long long)tc.step);
            if (known && (!ended || n != steps))
              fail_msg("%s %s a=%d b=%d s=%d: counted %lld, ran %d%s", type, dirs[d], a, b, s, (long long)n, steps,
                       ended ? "" : " (no end)");
            bool towards = (d == 5 || d == 4) ? ss > 0 : (d == 3 || d == 2) ? ss < 0 : d == 1 ? (ss == 1 || ss == -1) : ss != 0;
            if (ended && (steps == 0 || (towards && (!wrapped || d == 1))) && !known)
              fail_msg("%s %s a=%d b=%d s=%d: ran %d steps, not counted", type, dirs[d], a, b, s, steps);
            checked++;
            counted += known;
          }
    }
    assert_true(checked > 100000);
    assert_true(counted > checked / 4);
    hlo_module_destroy(m);
  }
}

/* ----------------------------------------------- corpus */

typedef struct corpus_stats {
  int files, parsed;
  int64_t before, after;
} corpus_stats_t;

static int64_t module_instructions(const hlo_module_t *m) {
  int64_t n = 0;
  for (int i = 0; i < m->computation_count; i++) n += m->computations[i]->instruction_count;
  return n;
}

static void run_corpus_file(const char *path, corpus_stats_t *st) {
  size_t len;
  char *text = test_read_file(path, &len);
  if (!text) return;
  st->files++;
  hlo_module_t *m = NULL;
  hlo_parse_options_t opts = {NULL, 1, 0, NULL, NULL, 0};
  vkhlo_status_t s = hlo_parse(text, len, path, &opts, &m);
  free(text);
  if (s) { /* the parser's own tests cover parse failures */
    vkhlo_status_free(s);
    return;
  }
  if (hlo_verify(m)) { /* nor do invalid programs concern the passes */
    hlo_module_destroy(m);
    return;
  }
  st->parsed++;
  st->before += module_instructions(m);
  static const pass_fn passes[] = {codegen_simplify_pass, codegen_cse_pass, codegen_dce_pass,
                                   codegen_simplify_pass, codegen_cse_pass, codegen_dce_pass};
  for (size_t i = 0; i < sizeof passes / sizeof passes[0]; i++) {
    bool changed;
    vkhlo_status_t ps = passes[i](m, NULL, &changed);
    if (ps) fprintf(stderr, "%s: pass %zu failed: %s\n", path, i, vkhlo_status_message(ps));
    assert_null(ps);
    vkhlo_status_t vs = hlo_verify(m);
    if (vs) fprintf(stderr, "%s: after pass %zu: %s\n", path, i, vkhlo_status_message(vs));
    assert_null(vs);
  }
  st->after += module_instructions(m);
  hlo_module_destroy(m);
}

static void test_corpus(void **state) {
  (void)state;
  const char *shared = VKHLO_SOURCE_DIR "/../shared";
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/conformance/testdata", shared);
  DIR *d = opendir(dir);
  if (!d) {
    printf("SKIP: %s not found; corpus pass test skipped\n", dir);
    skip();
  }
  corpus_stats_t st = {0};
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t n = strlen(e->d_name);
    if (n < 5 || strcmp(e->d_name + n - 5, ".mlir") != 0) continue;
    char path[4096 + 256];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    run_corpus_file(path, &st);
  }
  closedir(d);
  printf("testdata: %d files, %d run; instructions %lld -> %lld\n", st.files, st.parsed,
         (long long)st.before, (long long)st.after);
  assert_true(st.parsed > 0);

  corpus_stats_t model = {0};
  char path[4096];
  snprintf(path, sizeof path, "%s/models/searchless_chess_9m.mlir", shared);
  run_corpus_file(path, &model);
  if (model.parsed)
    printf("chess model: instructions %lld -> %lld\n", (long long)model.before,
           (long long)model.after);
}

/* ------------------------------------------------ the pass pipeline */

/* A pass with a bug: gives the root an element type its operands do not
 * have, and says it changed the module. */
static vkhlo_status_t corrupt_pass(hlo_module_t *m, const codegen_target_t *target, bool *changed) {
  (void)target;
  m->entry_computation->root->shape.element_type = HLO_S32;
  *changed = true;
  return NULL;
}

/* A module the pipeline breaks is vkhlo's bug: INTERNAL, naming the pass,
 * with the verifier's message (its location) kept. */
static void test_pipeline_reports_broken_module_as_internal(void **state) {
  (void)state;
  hlo_module_t *m = parse_ok(
      "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %y = stablehlo.add %x, %x : tensor<4xf32>\n"
      "  return %y : tensor<4xf32>\n}\n");
  assert_non_null(m);
  verify_ok(m);
  static const codegen_pass_t passes[] = {{"dce", codegen_dce_pass, false}, {"corrupt", corrupt_pass, false}};
  codegen_pass_options_t o;
  memset(&o, 0, sizeof o);
  o.verify_between = true;
  codegen_pass_stats_t stats;
  vkhlo_status_t st = codegen_run_pass_list(m, passes, 2, &o, &stats);
  assert_int_equal(vkhlo_status_code(st), VKHLO_STATUS_INTERNAL);
  const char *msg = vkhlo_status_message(st);
  assert_non_null(strstr(msg, "does not verify after pass corrupt: "));
  assert_non_null(strstr(msg, "t.mlir:2:")); /* the verifier's located message */
  vkhlo_status_free(st);
  /* without the corrupting pass the same list succeeds */
  hlo_module_destroy(m);
  m = parse_ok(
      "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %y = stablehlo.add %x, %x : tensor<4xf32>\n"
      "  return %y : tensor<4xf32>\n}\n");
  assert_non_null(m);
  expect_ok(codegen_run_pass_list(m, passes, 1, &o, &stats));
  hlo_module_destroy(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_identities_fire),
      cmocka_unit_test(test_select_false_picks_on_false),
      cmocka_unit_test(test_identities_must_not_fire),
      cmocka_unit_test(test_compose_transposes),
      cmocka_unit_test(test_transpose_of_dot_swaps_operands),
      cmocka_unit_test(test_compose_reshapes_and_broadcasts),
      cmocka_unit_test(test_slice_of_iota),
      cmocka_unit_test(test_dynamic_slice_constant_indices),
      cmocka_unit_test(test_conv_absorbs_pad),
      cmocka_unit_test(test_fold_integer_semantics),
      cmocka_unit_test(test_fold_unsigned_and_narrow),
      cmocka_unit_test(test_fold_float),
      cmocka_unit_test(test_fold_must_not_fire),
      cmocka_unit_test(test_fold_data_movement),
      cmocka_unit_test(test_simplify_inside_regions),
      cmocka_unit_test(test_cse_merges_equal),
      cmocka_unit_test(test_cse_keeps_different),
      cmocka_unit_test(test_cse_regions_and_side_effects),
      cmocka_unit_test(test_dce),
      cmocka_unit_test(test_split_long_reductions),
      cmocka_unit_test(test_long_sorts),
      cmocka_unit_test(test_rewrite_utilities),
      cmocka_unit_test(test_trip_count_patterns),
      cmocka_unit_test(test_trip_count_unknown),
      cmocka_unit_test(test_trip_count_exhaustive_8bit),
      cmocka_unit_test(test_attrs_struct_unchanged),
      cmocka_unit_test(test_corpus),
      cmocka_unit_test(test_pipeline_reports_broken_module_as_internal),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
