/*
 * Tests of hlo_verify().
 *
 *  - Hand-built IR whose structure is broken (use before def, bad parameter
 *    numbering, missing root), independent of the parser.
 *  - Small StableHLO snippets, each violating one op constraint of the
 *    spec: parse must succeed (so the verifier is what catches it), verify
 *    must return INVALID_ARGUMENT with "test.mlir:LINE:COL: stablehlo.OP:"
 *    pointing at the op and naming the constraint.
 *  - Valid snippets that must pass.
 *  - Every program of the StableHLO conformance suite in ../shared (split on
 *    "// -----") that the parser accepts must also pass the verifier.
 */
#define _POSIX_C_SOURCE 200809L /* strdup, opendir */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hlo/hlo.h"
#include "tests/test_support.h"

#define FILE_NAME "test.mlir"

/* ------------------------------------------------------------ helpers */

/* Parses |text| and verifies it; returns the parse or verify status and
 * tells which stage failed in *out_stage ("parse", "verify" or NULL). */
static vkhlo_status_t parse_and_verify(const char *text, const char **out_stage) {
  hlo_module_t *m = NULL;
  hlo_parse_options_t opts = {0};
  *out_stage = "parse";
  vkhlo_status_t s = hlo_parse(text, strlen(text), FILE_NAME, &opts, &m);
  if (s) return s;
  *out_stage = "verify";
  s = hlo_verify(m);
  hlo_module_destroy(m);
  if (!s) *out_stage = NULL;
  return s;
}

/* "test.mlir:L:C: " of the statement holding the first occurrence of
 * |needle| in |text|: an op's location is where its statement starts (its
 * first result, "%0 = ...", or its name when it has none), as in MLIR. */
static void location_of(const char *text, const char *needle, char *buf, size_t size) {
  const char *p = strstr(text, needle);
  assert_non_null(p);
  int line = 1;
  const char *line_start = text;
  for (const char *q = text; q < p; q++)
    if (*q == '\n') {
      line++;
      line_start = q + 1;
    }
  int col = 1;
  while (line_start[col - 1] == ' ') col++;
  snprintf(buf, size, "%s:%d:%d: ", FILE_NAME, line, col);
}

/* Asserts that |text| parses, and that the verifier rejects it with a
 * message that starts at |at| (the op's name in the text) and contains the
 * NULL-terminated key words. */
static void expect_invalid_(const char *text, const char *at, ...) {
  hlo_module_t *m = NULL;
  hlo_parse_options_t opts = {0};
  vkhlo_status_t s = hlo_parse(text, strlen(text), FILE_NAME, &opts, &m);
  if (s) {
    print_error("parse failed: %s\nin:\n%s\n", vkhlo_status_message(s), text);
    vkhlo_status_free(s);
    fail();
  }
  s = hlo_verify(m);
  hlo_module_destroy(m);
  if (!s) {
    print_error("verifier accepted:\n%s\n", text);
    fail();
  }
  const char *msg = vkhlo_status_message(s);
  char loc[128];
  location_of(text, at, loc, sizeof loc);
  bool ok = vkhlo_status_code(s) == VKHLO_STATUS_INVALID_ARGUMENT &&
            strncmp(msg, loc, strlen(loc)) == 0;
  va_list ap;
  va_start(ap, at);
  for (const char *kw; (kw = va_arg(ap, const char *)) != NULL;)
    if (!strstr(msg, kw)) {
      print_error("missing key words \"%s\"\n", kw);
      ok = false;
    }
  va_end(ap);
  if (!ok) print_error("message \"%s\" (expected location \"%s\")\nin:\n%s\n", msg, loc, text);
  vkhlo_status_free(s);
  assert_true(ok);
}
#define expect_invalid(text, at, ...) expect_invalid_(text, at, __VA_ARGS__, (const char *)NULL)

static void expect_valid(const char *text) {
  const char *stage;
  vkhlo_status_t s = parse_and_verify(text, &stage);
  if (s) {
    print_error("%s failed: %s\nin:\n%s\n", stage, vkhlo_status_message(s), text);
    vkhlo_status_free(s);
    fail();
  }
}

/* ---------------------------------------------- hand-built structure */

static hlo_module_t *two_param_add(hlo_computation_t **out_c, hlo_instruction_t **out_p,
                                   hlo_instruction_t **out_add) {
  hlo_module_t *m = hlo_module_create("m", NULL);
  assert_non_null(m);
  hlo_computation_t *c = hlo_computation_create(m, "main");
  int64_t dims[1] = {4};
  hlo_shape_t s;
  hlo_shape_init(&s, HLO_F32, 1, dims);
  hlo_instruction_t *p0 = hlo_instruction_create(m, HLO_OPCODE_PARAMETER, &s, 0, NULL);
  hlo_instruction_t *p1 = hlo_instruction_create(m, HLO_OPCODE_PARAMETER, &s, 0, NULL);
  p1->parameter_number = 1;
  hlo_instruction_t *ops[2] = {p0, p1};
  hlo_instruction_t *add = hlo_instruction_create(m, HLO_OPCODE_ADD, &s, 2, ops);
  add->loc = (hlo_location_t){"built.mlir", 3, 5};
  assert_true(hlo_computation_append(m, c, p0));
  assert_true(hlo_computation_append(m, c, p1));
  assert_true(hlo_computation_append(m, c, add));
  c->root = add;
  assert_true(hlo_module_add_computation(m, c));
  m->entry_computation = c;
  *out_c = c;
  out_p[0] = p0;
  out_p[1] = p1;
  *out_add = add;
  return m;
}

static void test_built_valid(void **state) {
  (void)state;
  hlo_computation_t *c;
  hlo_instruction_t *p[2], *add;
  hlo_module_t *m = two_param_add(&c, p, &add);
  vkhlo_status_t s = hlo_verify(m);
  if (s) print_error("%s\n", vkhlo_status_message(s));
  assert_null(s);
  hlo_module_destroy(m);
}

static void test_built_use_before_def(void **state) {
  (void)state;
  hlo_computation_t *c;
  hlo_instruction_t *p[2], *add;
  hlo_module_t *m = two_param_add(&c, p, &add);
  /* An operand from outside the computation. */
  hlo_instruction_t *stray = hlo_instruction_create(m, HLO_OPCODE_PARAMETER, &add->shape, 0, NULL);
  add->operands[1] = stray;
  vkhlo_status_t s = hlo_verify(m);
  assert_int_equal(vkhlo_status_code(s), VKHLO_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(vkhlo_status_message(s), "built.mlir:3:5: stablehlo.add: operand 1"));
  assert_non_null(strstr(vkhlo_status_message(s), "not defined before"));
  vkhlo_status_free(s);
  hlo_module_destroy(m);
}

static void test_built_bad_root_and_entry(void **state) {
  (void)state;
  hlo_computation_t *c;
  hlo_instruction_t *p[2], *add;
  hlo_module_t *m = two_param_add(&c, p, &add);
  c->root = NULL;
  vkhlo_status_t s = hlo_verify(m);
  assert_int_equal(vkhlo_status_code(s), VKHLO_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(vkhlo_status_message(s), "no root"));
  vkhlo_status_free(s);
  c->root = add;
  m->entry_computation = NULL;
  s = hlo_verify(m);
  assert_int_equal(vkhlo_status_code(s), VKHLO_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(vkhlo_status_message(s), "entry"));
  vkhlo_status_free(s);
  m->entry_computation = c;
  p[1]->parameter_number = 0;
  s = hlo_verify(m);
  assert_int_equal(vkhlo_status_code(s), VKHLO_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(vkhlo_status_message(s), "parameter number"));
  vkhlo_status_free(s);
  p[1]->parameter_number = 1;
  add->shape.dimensions[0] = -1;
  s = hlo_verify(m);
  assert_int_equal(vkhlo_status_code(s), VKHLO_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(vkhlo_status_message(s), "built.mlir:3:5: stablehlo.add: dynamic"));
  vkhlo_status_free(s);
  s = hlo_verify(NULL);
  assert_int_equal(vkhlo_status_code(s), VKHLO_STATUS_INVALID_ARGUMENT);
  vkhlo_status_free(s);
  hlo_module_destroy(m);
}

static void test_built_wrong_operand_count(void **state) {
  (void)state;
  hlo_computation_t *c;
  hlo_instruction_t *p[2], *add;
  hlo_module_t *m = two_param_add(&c, p, &add);
  add->operand_count = 1;
  vkhlo_status_t s = hlo_verify(m);
  assert_int_equal(vkhlo_status_code(s), VKHLO_STATUS_INVALID_ARGUMENT);
  assert_string_equal(vkhlo_status_message(s),
                      "built.mlir:3:5: stablehlo.add: expects 2 operands but has 1");
  vkhlo_status_free(s);
  hlo_module_destroy(m);
}

/* Every opcode with random shapes, operands, attributes and regions: the
 * verifier must return (OK or an error), never read out of bounds (run
 * under AddressSanitizer). */
static uint64_t next_random(uint64_t *state) {
  *state = *state * 6364136223846793005ull + 1442695040888963407ull;
  return *state >> 33;
}

static void random_shape(uint64_t *rng, hlo_shape_t *s) {
  static const hlo_element_type_t types[] = {HLO_PRED, HLO_S32, HLO_U8,  HLO_F32,
                                             HLO_F16,  HLO_C64, HLO_S64, HLO_TOKEN};
  int rank = (int)(next_random(rng) % 5);
  int64_t dims[4];
  for (int i = 0; i < rank; i++) dims[i] = (int64_t)(next_random(rng) % 5);
  hlo_shape_init(s, types[next_random(rng) % 8], rank, dims);
}

static hlo_dims_t random_dims(hlo_module_t *m, uint64_t *rng) {
  int64_t values[6];
  int count = (int)(next_random(rng) % 7);
  for (int i = 0; i < count; i++) values[i] = (int64_t)(next_random(rng) % 9) - 2;
  return hlo_dims_make(m, values, count);
}

static hlo_computation_t *random_region(hlo_module_t *m, uint64_t *rng) {
  hlo_computation_t *c = hlo_computation_create(m, "region");
  int params = (int)(next_random(rng) % 5);
  hlo_instruction_t *last = NULL;
  for (int i = 0; i < params; i++) {
    hlo_shape_t s;
    random_shape(rng, &s);
    if (next_random(rng) % 2) s.rank = 0;
    last = hlo_instruction_create(m, HLO_OPCODE_PARAMETER, &s, 0, NULL);
    last->parameter_number = i;
    assert_true(hlo_computation_append(m, c, last));
  }
  if (!last || next_random(rng) % 3 == 0) {
    hlo_shape_t s;
    random_shape(rng, &s);
    last = hlo_instruction_create(m, HLO_OPCODE_IOTA, &s, 0, NULL);
    assert_true(hlo_computation_append(m, c, last));
  }
  c->root = last;
  assert_true(hlo_module_add_computation(m, c));
  return c;
}

static void test_built_random_attrs(void **state) {
  (void)state;
  uint64_t rng = 12345;
  int errors = 0, oks = 0;
  for (int op = 0; op < HLO_OPCODE_COUNT; op++) {
    for (int iter = 0; iter < 60; iter++) {
      hlo_module_t *m = hlo_module_create("fuzz", NULL);
      assert_non_null(m);
      hlo_computation_t *regions[3];
      int region_count = (int)(next_random(&rng) % 4);
      for (int r = 0; r < region_count; r++) regions[r] = random_region(m, &rng);
      hlo_computation_t *c = hlo_computation_create(m, "main");
      hlo_instruction_t *params[6];
      int param_count = 1 + (int)(next_random(&rng) % 6);
      for (int i = 0; i < param_count; i++) {
        hlo_shape_t s;
        random_shape(&rng, &s);
        params[i] = hlo_instruction_create(m, HLO_OPCODE_PARAMETER, &s, 0, NULL);
        params[i]->parameter_number = i;
        assert_true(hlo_computation_append(m, c, params[i]));
      }
      hlo_instruction_t *ops[6];
      int operand_count = (int)(next_random(&rng) % 7);
      for (int i = 0; i < operand_count; i++) ops[i] = params[next_random(&rng) % (uint64_t)param_count];
      hlo_shape_t shape;
      if (next_random(&rng) % 4 == 0) {
        hlo_shape_t elems[2];
        random_shape(&rng, &elems[0]);
        random_shape(&rng, &elems[1]);
        assert_true(hlo_shape_make_tuple(m, &shape, 2, elems));
      } else if (operand_count && next_random(&rng) % 2) {
        shape = ops[0]->shape; /* often "right", to get past the first checks */
      } else {
        random_shape(&rng, &shape);
      }
      hlo_instruction_t *in = hlo_instruction_create(m, (hlo_opcode_t)op, &shape, operand_count, ops);
      hlo_attrs_t *a = &in->attrs;
      hlo_dims_t *all_dims[] = {
          &a->broadcast_dimensions, &a->permutation, &a->dimensions, &a->start_indices,
          &a->limit_indices, &a->strides, &a->edge_padding_low, &a->edge_padding_high,
          &a->interior_padding, &a->slice_sizes, &a->offset_dims, &a->collapsed_slice_dims,
          &a->operand_batching_dims, &a->start_indices_batching_dims, &a->start_index_map,
          &a->update_window_dims, &a->inserted_window_dims, &a->input_batching_dims,
          &a->scatter_indices_batching_dims, &a->scatter_dims_to_operand_dims,
          &a->lhs_batching_dimensions, &a->rhs_batching_dimensions,
          &a->lhs_contracting_dimensions, &a->rhs_contracting_dimensions, &a->window_strides,
          &a->padding, &a->lhs_dilation, &a->rhs_dilation, &a->window_reversal,
          &a->input_spatial_dimensions, &a->kernel_spatial_dimensions,
          &a->output_spatial_dimensions, &a->window_dimensions, &a->base_dilations,
          &a->window_dilations, &a->fft_length};
      for (size_t i = 0; i < sizeof all_dims / sizeof all_dims[0]; i++)
        *all_dims[i] = random_dims(m, &rng);
      int64_t *scalars[] = {&a->dimension, &a->index, &a->index_vector_dim,
                            &a->input_batch_dimension, &a->input_feature_dimension,
                            &a->kernel_input_feature_dimension, &a->kernel_output_feature_dimension,
                            &a->output_batch_dimension, &a->output_feature_dimension,
                            &a->feature_group_count, &a->batch_group_count, &a->feature_index};
      for (size_t i = 0; i < sizeof scalars / sizeof scalars[0]; i++)
        *scalars[i] = (int64_t)(next_random(&rng) % 7) - 2;
      a->fft_type = (int)(next_random(&rng) % 5);
      a->compare_type = (hlo_compare_type_t)(next_random(&rng) % 5);
      a->exponent_bits = (int)(next_random(&rng) % 4) - 1;
      a->left_side = next_random(&rng) % 2;
      if (op == HLO_OPCODE_CONSTANT && next_random(&rng) % 2) {
        hlo_literal_t *lit = arena_alloc(&m->arena, sizeof *lit);
        lit->shape = shape;
        lit->size_bytes = hlo_shape_size_bytes(&shape);
        lit->data = lit->size_bytes ? arena_alloc(&m->arena, lit->size_bytes) : NULL;
        in->literal = lit;
      }
      assert_true(hlo_instruction_set_called(m, in, region_count, regions));
      assert_true(hlo_computation_append(m, c, in));
      c->root = in;
      assert_true(hlo_module_add_computation(m, c));
      m->entry_computation = c;
      vkhlo_status_t s = hlo_verify(m);
      if (s) {
        errors++;
        assert_int_equal(vkhlo_status_code(s), VKHLO_STATUS_INVALID_ARGUMENT);
      } else {
        oks++;
      }
      vkhlo_status_free(s);
      hlo_module_destroy(m);
    }
  }
  printf("random IR: %d accepted, %d rejected\n", oks, errors);
}

/* ----------------------------------------------- elementwise snippets */

static void test_elementwise_invalid(void **state) {
  (void)state;
  expect_invalid(
      "func.func @main(%a: tensor<4xf32>, %b: tensor<4xi32>) -> tensor<4xf32> {\n"
      "  %0 = \"stablehlo.add\"(%a, %b) : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32>\n"
      "  func.return %0 : tensor<4xf32>\n"
      "}\n",
      "\"stablehlo.add\"", "stablehlo.add: operand types tensor<4xf32> and tensor<4xi32> differ");
  expect_invalid(
      "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = \"stablehlo.and\"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n"
      "  func.return %0 : tensor<4xf32>\n"
      "}\n",
      "\"stablehlo.and\"", "stablehlo.and:", "boolean or integer");
  expect_invalid(
      "func.func @main(%a: tensor<4xi32>) -> tensor<4xi32> {\n"
      "  %0 = \"stablehlo.sine\"(%a) : (tensor<4xi32>) -> tensor<4xi32>\n"
      "  func.return %0 : tensor<4xi32>\n"
      "}\n",
      "\"stablehlo.sine\"", "stablehlo.sine:", "floating-point or complex");
  expect_invalid(
      "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = \"stablehlo.shift_left\"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n"
      "  func.return %0 : tensor<4xf32>\n"
      "}\n",
      "\"stablehlo.shift_left\"", "stablehlo.shift_left:", "integer");
  expect_invalid(
      "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = \"stablehlo.popcnt\"(%a) : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  func.return %0 : tensor<4xf32>\n"
      "}\n",
      "\"stablehlo.popcnt\"", "stablehlo.popcnt:", "integer");
  expect_invalid(
      "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = \"stablehlo.count_leading_zeros\"(%a) : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  func.return %0 : tensor<4xf32>\n"
      "}\n",
      "\"stablehlo.count_leading_zeros\"", "stablehlo.count_leading_zeros:", "integer");
  expect_invalid(
      "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = \"stablehlo.not\"(%a) : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  func.return %0 : tensor<4xf32>\n"
      "}\n",
      "\"stablehlo.not\"", "stablehlo.not:", "boolean or integer");
  expect_invalid(
      "func.func @main(%a: tensor<4xi32>) -> tensor<4xi32> {\n"
      "  %0 = \"stablehlo.exponential\"(%a) : (tensor<4xi32>) -> tensor<4xi32>\n"
      "  func.return %0 : tensor<4xi32>\n"
      "}\n",
      "\"stablehlo.exponential\"", "stablehlo.exponential:", "floating-point or complex");
  expect_invalid(
      "func.func @main(%a: tensor<4xf32>) -> tensor<5xf32> {\n"
      "  %0 = \"stablehlo.negate\"(%a) : (tensor<4xf32>) -> tensor<5xf32>\n"
      "  func.return %0 : tensor<5xf32>\n"
      "}\n",
      "\"stablehlo.negate\"", "stablehlo.negate:", "different shapes");
  expect_invalid(
      "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = \"stablehlo.compare\"(%a, %a) {comparison_direction = #stablehlo<comparison_direction LT>}"
      " : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n"
      "  func.return %0 : tensor<4xf32>\n"
      "}\n",
      "\"stablehlo.compare\"", "stablehlo.compare:", "i1");
  expect_invalid(
      "func.func @main(%a: tensor<4xf32>) -> tensor<4xi1> {\n"
      "  %0 = stablehlo.compare LT, %a, %a, SIGNED : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>\n"
      "  func.return %0 : tensor<4xi1>\n"
      "}\n",
      "stablehlo.compare", "stablehlo.compare:", "compare_type SIGNED");
  expect_invalid(
      "func.func @main(%a: tensor<4xi32>) -> tensor<4xi32> {\n"
      "  %0 = \"stablehlo.real\"(%a) : (tensor<4xi32>) -> tensor<4xi32>\n"
      "  func.return %0 : tensor<4xi32>\n"
      "}\n",
      "\"stablehlo.real\"", "stablehlo.real:", "floating-point or complex");
  expect_invalid(
      "func.func @main(%a: tensor<4xf16>) -> tensor<4xcomplex<f32>> {\n"
      "  %0 = \"stablehlo.complex\"(%a, %a) : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xcomplex<f32>>\n"
      "  func.return %0 : tensor<4xcomplex<f32>>\n"
      "}\n",
      "\"stablehlo.complex\"", "stablehlo.complex:", "f32 or f64");
  expect_invalid(
      "func.func @main(%p: tensor<3xi1>, %a: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = \"stablehlo.select\"(%p, %a, %a) : (tensor<3xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n"
      "  func.return %0 : tensor<4xf32>\n"
      "}\n",
      "\"stablehlo.select\"", "stablehlo.select:", "pred type tensor<3xi1>");
  expect_invalid(
      "func.func @main(%p: tensor<4xf32>, %a: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = \"stablehlo.select\"(%p, %a, %a) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n"
      "  func.return %0 : tensor<4xf32>\n"
      "}\n",
      "\"stablehlo.select\"", "stablehlo.select:", "pred must be a tensor of i1");
  expect_invalid(
      "func.func @main(%lo: tensor<2xf32>, %a: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = \"stablehlo.clamp\"(%lo, %a, %lo) : (tensor<2xf32>, tensor<4xf32>, tensor<2xf32>) -> tensor<4xf32>\n"
      "  func.return %0 : tensor<4xf32>\n"
      "}\n",
      "\"stablehlo.clamp\"", "stablehlo.clamp:", "min type tensor<2xf32>");
  expect_invalid(
      "func.func @main(%a: tensor<4xf32>) -> tensor<4xi16> {\n"
      "  %0 = \"stablehlo.bitcast_convert\"(%a) : (tensor<4xf32>) -> tensor<4xi16>\n"
      "  func.return %0 : tensor<4xi16>\n"
      "}\n",
      "\"stablehlo.bitcast_convert\"", "stablehlo.bitcast_convert:", "cannot bitcast");
}

static void test_elementwise_valid(void **state) {
  (void)state;
  expect_valid(
      "func.func @main(%a: tensor<4xf32>, %p: tensor<i1>, %i: tensor<4xui8>) -> tensor<4xf32> {\n"
      "  %0 = stablehlo.add %a, %a : tensor<4xf32>\n"
      "  %1 = stablehlo.select %p, %0, %a : tensor<i1>, tensor<4xf32>\n"
      "  %lo = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %2 = stablehlo.clamp %lo, %1, %lo : (tensor<f32>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>\n"
      "  %3 = stablehlo.bitcast_convert %2 : (tensor<4xf32>) -> tensor<4x2xi16>\n"
      "  %4 = stablehlo.bitcast_convert %3 : (tensor<4x2xi16>) -> tensor<4xf32>\n"
      "  %5 = stablehlo.popcnt %i : tensor<4xui8>\n"
      "  %6 = stablehlo.convert %5 : (tensor<4xui8>) -> tensor<4xf32>\n"
      "  %7 = stablehlo.compare GT, %6, %4, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>\n"
      "  %8 = stablehlo.not %7 : tensor<4xi1>\n"
      "  %9 = stablehlo.select %8, %4, %6 : tensor<4xi1>, tensor<4xf32>\n"
      "  %10 = stablehlo.complex %9, %9 : tensor<4xcomplex<f32>>\n"
      "  %11 = stablehlo.abs %10 : (tensor<4xcomplex<f32>>) -> tensor<4xf32>\n"
      "  %12 = stablehlo.is_finite %11 : (tensor<4xf32>) -> tensor<4xi1>\n"
      "  %13 = stablehlo.and %12, %8 : tensor<4xi1>\n"
      "  %14 = stablehlo.select %13, %11, %a : tensor<4xi1>, tensor<4xf32>\n"
      "  func.return %14 : tensor<4xf32>\n"
      "}\n");
}

/* --------------------------------------------- data movement snippets */

static void test_data_movement_invalid(void **state) {
  (void)state;
  expect_invalid(
      "func.func @main(%a: tensor<3xf32>) -> tensor<2x4xf32> {\n"
      "  %0 = stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<3xf32>) -> tensor<2x4xf32>\n"
      "  func.return %0 : tensor<2x4xf32>\n"
      "}\n",
      "stablehlo.broadcast_in_dim", "stablehlo.broadcast_in_dim:", "operand dimension 0 has size 3");
  expect_invalid(
      "func.func @main(%a: tensor<3xf32>) -> tensor<2x3xf32> {\n"
      "  %0 = stablehlo.broadcast_in_dim %a, dims = [2] : (tensor<3xf32>) -> tensor<2x3xf32>\n"
      "  func.return %0 : tensor<2x3xf32>\n"
      "}\n",
      "stablehlo.broadcast_in_dim", "broadcast_dimensions [2]", "out of range");
  expect_invalid(
      "func.func @main(%a: tensor<3xf32>) -> tensor<2x3xf32> {\n"
      "  %0 = stablehlo.broadcast_in_dim %a, dims = [0, 1] : (tensor<3xf32>) -> tensor<2x3xf32>\n"
      "  func.return %0 : tensor<2x3xf32>\n"
      "}\n",
      "stablehlo.broadcast_in_dim", "broadcast_dimensions [0, 1] has 2 values", "rank 1");
  expect_invalid(
      "func.func @main(%a: tensor<2x3xf32>) -> tensor<5xf32> {\n"
      "  %0 = stablehlo.reshape %a : (tensor<2x3xf32>) -> tensor<5xf32>\n"
      "  func.return %0 : tensor<5xf32>\n"
      "}\n",
      "stablehlo.reshape", "stablehlo.reshape:", "element counts");
  expect_invalid(
      "func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {\n"
      "  %0 = stablehlo.transpose %a, dims = [0, 0] : (tensor<2x3xf32>) -> tensor<2x3xf32>\n"
      "  func.return %0 : tensor<2x3xf32>\n"
      "}\n",
      "stablehlo.transpose", "stablehlo.transpose: permutation [0, 0]", "more than once");
  expect_invalid(
      "func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {\n"
      "  %0 = stablehlo.transpose %a, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<2x3xf32>\n"
      "  func.return %0 : tensor<2x3xf32>\n"
      "}\n",
      "stablehlo.transpose", "result type tensor<2x3xf32> should be tensor<3x2xf32>");
  expect_invalid(
      "func.func @main(%a: tensor<8xf32>) -> tensor<4xf32> {\n"
      "  %0 = stablehlo.slice %a [2:10] : (tensor<8xf32>) -> tensor<4xf32>\n"
      "  func.return %0 : tensor<4xf32>\n"
      "}\n",
      "stablehlo.slice", "stablehlo.slice: dimension 0", "limit 10 <= size 8");
  expect_invalid(
      "func.func @main(%a: tensor<8xf32>) -> tensor<4xf32> {\n"
      "  %0 = stablehlo.slice %a [0:8:3] : (tensor<8xf32>) -> tensor<4xf32>\n"
      "  func.return %0 : tensor<4xf32>\n"
      "}\n",
      "stablehlo.slice", "should be tensor<3xf32>");
  expect_invalid(
      "func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) -> tensor<4x3xf32> {\n"
      "  %0 = stablehlo.concatenate %a, %b, dim = 0 : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>\n"
      "  func.return %0 : tensor<4x3xf32>\n"
      "}\n",
      "stablehlo.concatenate", "stablehlo.concatenate: operand 1 type tensor<2x4xf32>");
  expect_invalid(
      "func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {\n"
      "  %0 = stablehlo.concatenate %a, %a, dim = 2 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>\n"
      "  func.return %0 : tensor<2x3xf32>\n"
      "}\n",
      "stablehlo.concatenate", "dimension 2 is out of range");
  expect_invalid(
      "func.func @main(%a: tensor<3xf32>, %v: tensor<f32>) -> tensor<8xf32> {\n"
      "  %0 = stablehlo.pad %a, %v, low = [1], high = [1], interior = [-1] : (tensor<3xf32>, tensor<f32>) -> tensor<8xf32>\n"
      "  func.return %0 : tensor<8xf32>\n"
      "}\n",
      "stablehlo.pad", "stablehlo.pad: interior_padding [-1] must be >= 0");
  expect_invalid(
      "func.func @main(%a: tensor<3xf32>, %v: tensor<f32>) -> tensor<8xf32> {\n"
      "  %0 = stablehlo.pad %a, %v, low = [1], high = [-1], interior = [1] : (tensor<3xf32>, tensor<f32>) -> tensor<8xf32>\n"
      "  func.return %0 : tensor<8xf32>\n"
      "}\n",
      "stablehlo.pad", "should be tensor<5xf32>");
  expect_invalid(
      "func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {\n"
      "  %0 = stablehlo.reverse %a, dims = [1] : tensor<3xf32>\n"
      "  func.return %0 : tensor<3xf32>\n"
      "}\n",
      "stablehlo.reverse", "stablehlo.reverse: dimensions [1]", "out of range");
  expect_invalid(
      "func.func @main() -> tensor<3x4xf32> {\n"
      "  %0 = stablehlo.iota dim = 2 : tensor<3x4xf32>\n"
      "  func.return %0 : tensor<3x4xf32>\n"
      "}\n",
      "stablehlo.iota", "stablehlo.iota: iota_dimension 2 is out of range");
  expect_invalid(
      "func.func @main(%a: tensor<4x4xf32>, %i: tensor<i32>) -> tensor<2x5xf32> {\n"
      "  %0 = stablehlo.dynamic_slice %a, %i, %i, sizes = [2, 5] : (tensor<4x4xf32>, tensor<i32>, tensor<i32>) -> tensor<2x5xf32>\n"
      "  func.return %0 : tensor<2x5xf32>\n"
      "}\n",
      "stablehlo.dynamic_slice", "stablehlo.dynamic_slice: slice_sizes [2, 5]", "[0, 4]");
  expect_invalid(
      "func.func @main(%a: tensor<4x4xf32>, %i: tensor<i32>) -> tensor<2x2xf32> {\n"
      "  %0 = stablehlo.dynamic_slice %a, %i, sizes = [2, 2] : (tensor<4x4xf32>, tensor<i32>) -> tensor<2x2xf32>\n"
      "  func.return %0 : tensor<2x2xf32>\n"
      "}\n",
      "stablehlo.dynamic_slice", "has 1 start indices", "rank 2");
  expect_invalid(
      "func.func @main(%a: tensor<4xf32>, %u: tensor<5xf32>, %i: tensor<i32>) -> tensor<4xf32> {\n"
      "  %0 = stablehlo.dynamic_update_slice %a, %u, %i : (tensor<4xf32>, tensor<5xf32>, tensor<i32>) -> tensor<4xf32>\n"
      "  func.return %0 : tensor<4xf32>\n"
      "}\n",
      "stablehlo.dynamic_update_slice", "stablehlo.dynamic_update_slice: update tensor<5xf32> is larger");
  expect_invalid(
      "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
      "  %t = \"stablehlo.tuple\"(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> tuple<tensor<2xf32>, tensor<2xf32>>\n"
      "  %0 = \"stablehlo.get_tuple_element\"(%t) {index = 2 : i32} : (tuple<tensor<2xf32>, tensor<2xf32>>) -> tensor<2xf32>\n"
      "  func.return %0 : tensor<2xf32>\n"
      "}\n",
      "\"stablehlo.get_tuple_element\"", "stablehlo.get_tuple_element: index 2 is out of range");
}

static const char gather_prefix[] =
    "func.func @main(%operand: tensor<3x4x2xi32>, %idx: tensor<2x3x2xi64>) -> tensor<2x3x2x2xi32> {\n";

static void test_gather_scatter_invalid(void **state) {
  (void)state;
  char text[2048];
  /* The spec's example with a wrong result shape. */
  snprintf(text, sizeof text,
           "%s"
           "  %%0 = \"stablehlo.gather\"(%%operand, %%idx) {\n"
           "    dimension_numbers = #stablehlo.gather<offset_dims = [2, 3], collapsed_slice_dims = [0],\n"
           "      start_index_map = [1, 0], index_vector_dim = 2>,\n"
           "    slice_sizes = array<i64: 1, 2, 2>, indices_are_sorted = false\n"
           "  } : (tensor<3x4x2xi32>, tensor<2x3x2xi64>) -> tensor<2x3x2x3xi32>\n"
           "  func.return %%0 : tensor<2x3x2x3xi32>\n}\n",
           "func.func @main(%operand: tensor<3x4x2xi32>, %idx: tensor<2x3x2xi64>) -> tensor<2x3x2x3xi32> {\n");
  expect_invalid(text, "\"stablehlo.gather\"", "stablehlo.gather: result", "should be tensor<2x3x2x2xi32>");
  snprintf(text, sizeof text,
           "%s"
           "  %%0 = \"stablehlo.gather\"(%%operand, %%idx) {\n"
           "    dimension_numbers = #stablehlo.gather<offset_dims = [3, 2], collapsed_slice_dims = [0],\n"
           "      start_index_map = [1, 0], index_vector_dim = 2>,\n"
           "    slice_sizes = array<i64: 1, 2, 2>, indices_are_sorted = false\n"
           "  } : (tensor<3x4x2xi32>, tensor<2x3x2xi64>) -> tensor<2x3x2x2xi32>\n"
           "  func.return %%0 : tensor<2x3x2x2xi32>\n}\n",
           gather_prefix);
  expect_invalid(text, "\"stablehlo.gather\"", "offset_dims [3, 2] must be sorted");
  snprintf(text, sizeof text,
           "%s"
           "  %%0 = \"stablehlo.gather\"(%%operand, %%idx) {\n"
           "    dimension_numbers = #stablehlo.gather<offset_dims = [2, 3], collapsed_slice_dims = [0],\n"
           "      start_index_map = [1, 0], index_vector_dim = 2>,\n"
           "    slice_sizes = array<i64: 2, 2, 2>, indices_are_sorted = false\n"
           "  } : (tensor<3x4x2xi32>, tensor<2x3x2xi64>) -> tensor<2x3x2x2xi32>\n"
           "  func.return %%0 : tensor<2x3x2x2xi32>\n}\n",
           gather_prefix);
  expect_invalid(text, "\"stablehlo.gather\"", "collapsed or batching dimension 0 must have size <= 1");
  snprintf(text, sizeof text,
           "%s"
           "  %%0 = \"stablehlo.gather\"(%%operand, %%idx) {\n"
           "    dimension_numbers = #stablehlo.gather<offset_dims = [2, 3], collapsed_slice_dims = [0],\n"
           "      start_index_map = [1], index_vector_dim = 2>,\n"
           "    slice_sizes = array<i64: 1, 2, 2>, indices_are_sorted = false\n"
           "  } : (tensor<3x4x2xi32>, tensor<2x3x2xi64>) -> tensor<2x3x2x2xi32>\n"
           "  func.return %%0 : tensor<2x3x2x2xi32>\n}\n",
           gather_prefix);
  expect_invalid(text, "\"stablehlo.gather\"", "start_index_map [1] must have 2 values");
  /* scatter: updates window larger than the operand. */
  expect_invalid(
      "func.func @main(%x: tensor<4x3xf32>, %i: tensor<2x1xi32>, %u: tensor<2x4xf32>) -> tensor<4x3xf32> {\n"
      "  %0 = \"stablehlo.scatter\"(%x, %i, %u) ({\n"
      "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
      "    %s = stablehlo.add %a, %b : tensor<f32>\n"
      "    stablehlo.return %s : tensor<f32>\n"
      "  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1],\n"
      "      inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}\n"
      "    : (tensor<4x3xf32>, tensor<2x1xi32>, tensor<2x4xf32>) -> tensor<4x3xf32>\n"
      "  func.return %0 : tensor<4x3xf32>\n"
      "}\n",
      "\"stablehlo.scatter\"", "stablehlo.scatter: updates window dimension 1 has size 4");
  expect_invalid(
      "func.func @main(%x: tensor<4x3xf32>, %i: tensor<2x1xi32>, %u: tensor<3x3xf32>) -> tensor<4x3xf32> {\n"
      "  %0 = \"stablehlo.scatter\"(%x, %i, %u) ({\n"
      "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
      "    %s = stablehlo.add %a, %b : tensor<f32>\n"
      "    stablehlo.return %s : tensor<f32>\n"
      "  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1],\n"
      "      inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}\n"
      "    : (tensor<4x3xf32>, tensor<2x1xi32>, tensor<3x3xf32>) -> tensor<4x3xf32>\n"
      "  func.return %0 : tensor<4x3xf32>\n"
      "}\n",
      "\"stablehlo.scatter\"", "updates scatter dimension 0 has size 3");
}

/* -------------------------------------------- contraction and reduce */

static void test_contraction_invalid(void **state) {
  (void)state;
  expect_invalid(
      "func.func @main(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {\n"
      "  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>\n"
      "  func.return %0 : tensor<2x5xf32>\n"
      "}\n",
      "stablehlo.dot_general",
      "stablehlo.dot_general: lhs contracting dimension 1 has size 3 but rhs contracting dimension 0 has size 4");
  expect_invalid(
      "func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>) -> tensor<5x2xf32> {\n"
      "  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<5x2xf32>\n"
      "  func.return %0 : tensor<5x2xf32>\n"
      "}\n",
      "stablehlo.dot_general", "result tensor<5x2xf32> should have dimensions [2, 5]");
  expect_invalid(
      "func.func @main(%a: tensor<3x3xf32>, %b: tensor<3x3xf32>) -> tensor<3xf32> {\n"
      "  %0 = stablehlo.dot_general %a, %b, batching_dims = [1] x [0], contracting_dims = [1] x [1] : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3xf32>\n"
      "  func.return %0 : tensor<3xf32>\n"
      "}\n",
      "stablehlo.dot_general", "lhs dimension 1 is both a batching and a contracting dimension");
  expect_invalid(
      "func.func @main(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {\n"
      "  %0 = \"stablehlo.dot\"(%a, %b) : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>\n"
      "  func.return %0 : tensor<2x5xf32>\n"
      "}\n",
      "\"stablehlo.dot\"", "lhs contracting dimension 1 has size 3 but rhs contracting dimension 0 has size 4");
  /* Convolution: NHWC x HWIO with a kernel input feature mismatch. */
  expect_invalid(
      "func.func @main(%a: tensor<1x4x4x2xf32>, %k: tensor<3x3x1x1xf32>) -> tensor<1x2x2x1xf32> {\n"
      "  %0 = stablehlo.convolution(%a, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],"
      " window = {stride = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64}"
      " : (tensor<1x4x4x2xf32>, tensor<3x3x1x1xf32>) -> tensor<1x2x2x1xf32>\n"
      "  func.return %0 : tensor<1x2x2x1xf32>\n"
      "}\n",
      "stablehlo.convolution", "stablehlo.convolution: kernel input feature dimension has size 1");
  expect_invalid(
      "func.func @main(%a: tensor<1x4x4x1xf32>, %k: tensor<3x3x1x1xf32>) -> tensor<1x3x3x1xf32> {\n"
      "  %0 = stablehlo.convolution(%a, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],"
      " window = {stride = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64}"
      " : (tensor<1x4x4x1xf32>, tensor<3x3x1x1xf32>) -> tensor<1x3x3x1xf32>\n"
      "  func.return %0 : tensor<1x3x3x1xf32>\n"
      "}\n",
      "stablehlo.convolution", "result tensor<1x3x3x1xf32> should have dimensions [1, 2, 2, 1]");
}

static void test_reduce_invalid(void **state) {
  (void)state;
  expect_invalid(
      "func.func @main(%a: tensor<2x3xf32>, %z: tensor<f32>) -> tensor<2xf32> {\n"
      "  %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [2]"
      " : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>\n"
      "  func.return %0 : tensor<2xf32>\n"
      "}\n",
      "stablehlo.reduce", "stablehlo.reduce: dimensions [2]", "out of range");
  expect_invalid(
      "func.func @main(%a: tensor<2x3xf32>, %z: tensor<f32>) -> tensor<3xf32> {\n"
      "  %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [1]"
      " : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>\n"
      "  func.return %0 : tensor<3xf32>\n"
      "}\n",
      "stablehlo.reduce", "stablehlo.reduce: result 0 tensor<3xf32> should be tensor<2xf32>");
  expect_invalid(
      "func.func @main(%a: tensor<2x3xf32>, %z: tensor<f32>) -> tensor<2xf32> {\n"
      "  %0 = \"stablehlo.reduce\"(%a, %z) ({\n"
      "  ^bb0(%x: tensor<f32>):\n"
      "    stablehlo.return %x : tensor<f32>\n"
      "  }) {dimensions = array<i64: 1>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>\n"
      "  func.return %0 : tensor<2xf32>\n"
      "}\n",
      "\"stablehlo.reduce\"", "stablehlo.reduce: body must take 2 parameters but takes 1");
  expect_invalid(
      "func.func @main(%a: tensor<4x4xf32>, %z: tensor<f32>) -> tensor<3x3xf32> {\n"
      "  %0 = \"stablehlo.reduce_window\"(%a, %z) ({\n"
      "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
      "    %m = stablehlo.maximum %x, %y : tensor<f32>\n"
      "    stablehlo.return %m : tensor<f32>\n"
      "  }) {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>}"
      " : (tensor<4x4xf32>, tensor<f32>) -> tensor<3x3xf32>\n"
      "  func.return %0 : tensor<3x3xf32>\n"
      "}\n",
      "\"stablehlo.reduce_window\"", "stablehlo.reduce_window: result 0 tensor<3x3xf32> should be tensor<2x2xf32>");
  expect_invalid(
      "func.func @main(%a: tensor<4x4xf32>, %s: tensor<3x3xf32>, %z: tensor<f32>) -> tensor<4x4xf32> {\n"
      "  %0 = \"stablehlo.select_and_scatter\"(%a, %s, %z) ({\n"
      "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
      "    %c = stablehlo.compare GE, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
      "    stablehlo.return %c : tensor<i1>\n"
      "  }, {\n"
      "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
      "    %m = stablehlo.add %x, %y : tensor<f32>\n"
      "    stablehlo.return %m : tensor<f32>\n"
      "  }) {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>}"
      " : (tensor<4x4xf32>, tensor<3x3xf32>, tensor<f32>) -> tensor<4x4xf32>\n"
      "  func.return %0 : tensor<4x4xf32>\n"
      "}\n",
      "\"stablehlo.select_and_scatter\"", "stablehlo.select_and_scatter: source tensor<3x3xf32> should have dimensions [2, 2]");
  expect_invalid(
      "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = \"stablehlo.sort\"(%a) ({\n"
      "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
      "    %c = stablehlo.compare LT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
      "    stablehlo.return %c : tensor<i1>\n"
      "  }) {dimension = 1 : i64, is_stable = true} : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  func.return %0 : tensor<4xf32>\n"
      "}\n",
      "\"stablehlo.sort\"", "stablehlo.sort: dimension 1 is out of range");
  expect_invalid(
      "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = \"stablehlo.sort\"(%a) ({\n"
      "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
      "    stablehlo.return %x : tensor<f32>\n"
      "  }) {dimension = 0 : i64, is_stable = true} : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  func.return %0 : tensor<4xf32>\n"
      "}\n",
      "\"stablehlo.sort\"", "stablehlo.sort: comparator must return tensor<i1>");
}

/* ------------------------------------------------------ control flow */

static void test_control_flow_invalid(void **state) {
  (void)state;
  expect_invalid(
      "func.func @main(%n: tensor<i32>) -> tensor<i32> {\n"
      "  %0 = stablehlo.while(%i = %n) : tensor<i32>\n"
      "  cond {\n"
      "    stablehlo.return %i : tensor<i32>\n"
      "  } do {\n"
      "    stablehlo.return %i : tensor<i32>\n"
      "  }\n"
      "  func.return %0 : tensor<i32>\n"
      "}\n",
      "stablehlo.while", "stablehlo.while: cond must return tensor<i1>");
  expect_invalid(
      "func.func @main(%n: tensor<i32>, %f: tensor<f32>) -> tensor<i32> {\n"
      "  %0 = stablehlo.while(%i = %n) : tensor<i32>\n"
      "  cond {\n"
      "    %c = stablehlo.compare LT, %i, %i : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "    stablehlo.return %c : tensor<i1>\n"
      "  } do {\n"
      "    stablehlo.return %f : tensor<f32>\n"
      "  }\n"
      "  func.return %0 : tensor<i32>\n"
      "}\n",
      "stablehlo.while", "stablehlo.while: body returns tensor<f32> as value 0 but tensor<i32> is expected");
  expect_invalid(
      "func.func @main(%p: tensor<i32>, %a: tensor<f32>) -> tensor<f32> {\n"
      "  %0 = \"stablehlo.if\"(%p) ({\n"
      "    stablehlo.return %a : tensor<f32>\n"
      "  }, {\n"
      "    stablehlo.return %a : tensor<f32>\n"
      "  }) : (tensor<i32>) -> tensor<f32>\n"
      "  func.return %0 : tensor<f32>\n"
      "}\n",
      "\"stablehlo.if\"", "stablehlo.if: pred must be tensor<i1> but is tensor<i32>");
  expect_invalid(
      "func.func @main(%p: tensor<i1>, %a: tensor<f32>, %b: tensor<i32>) -> tensor<f32> {\n"
      "  %0 = \"stablehlo.if\"(%p) ({\n"
      "    stablehlo.return %a : tensor<f32>\n"
      "  }, {\n"
      "    stablehlo.return %b : tensor<i32>\n"
      "  }) : (tensor<i1>) -> tensor<f32>\n"
      "  func.return %0 : tensor<f32>\n"
      "}\n",
      "\"stablehlo.if\"", "stablehlo.if: false_branch returns tensor<i32> as value 0 but tensor<f32> is expected");
  expect_invalid(
      "func.func @main(%i: tensor<i64>, %a: tensor<f32>) -> tensor<f32> {\n"
      "  %0 = \"stablehlo.case\"(%i) ({\n"
      "    stablehlo.return %a : tensor<f32>\n"
      "  }) : (tensor<i64>) -> tensor<f32>\n"
      "  func.return %0 : tensor<f32>\n"
      "}\n",
      "\"stablehlo.case\"", "stablehlo.case: index must be tensor<i32> but is tensor<i64>");
}

static void test_check_invalid(void **state) {
  (void)state;
  expect_invalid(
      "func.func @main(%a: tensor<4xf32>, %b: tensor<3xf32>) {\n"
      "  stablehlo.custom_call @check.expect_close(%a, %b) {has_side_effect = true} : (tensor<4xf32>, tensor<3xf32>) -> ()\n"
      "  func.return\n"
      "}\n",
      "stablehlo.custom_call", "check.expect_close: actual type tensor<4xf32> and expected type tensor<3xf32> differ");
}

/* The collectives (verify_collective): process ids, result counts and the
 * gathered / scattered / split dimensions. */
static void test_collectives_invalid(void **state) {
  (void)state;
  expect_invalid(
      "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
      "  %0 = \"stablehlo.collective_broadcast\"(%a) {replica_groups = dense<[[1, 1]]> : tensor<1x2xi64>}"
      " : (tensor<2xf32>) -> tensor<2xf32>\n"
      "  func.return %0 : tensor<2xf32>\n"
      "}\n",
      "stablehlo.collective_broadcast", "stablehlo.collective_broadcast: id 1 appears twice in replica_groups");
  expect_invalid(
      "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
      "  %0 = \"stablehlo.collective_permute\"(%a) {source_target_pairs = dense<[[0, 1], [2, 1]]> : tensor<2x2xi64>}"
      " : (tensor<2xf32>) -> tensor<2xf32>\n"
      "  func.return %0 : tensor<2xf32>\n"
      "}\n",
      "stablehlo.collective_permute", "stablehlo.collective_permute: target 1 appears twice in source_target_pairs");
  expect_invalid(
      "func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {\n"
      "  %0 = \"stablehlo.all_gather\"(%a) {all_gather_dim = 2 : i64, replica_groups = dense<[[0]]> : tensor<1x1xi64>}"
      " : (tensor<2x3xf32>) -> tensor<2x3xf32>\n"
      "  func.return %0 : tensor<2x3xf32>\n"
      "}\n",
      "stablehlo.all_gather", "stablehlo.all_gather: dimension 2 is out of range for tensor<2x3xf32>");
  expect_invalid(
      "func.func @main(%a: tensor<2x3xf32>) -> tensor<2x4xf32> {\n"
      "  %0 = \"stablehlo.all_gather\"(%a) {all_gather_dim = 1 : i64, replica_groups = dense<[[0]]> : tensor<1x1xi64>}"
      " : (tensor<2x3xf32>) -> tensor<2x4xf32>\n"
      "  func.return %0 : tensor<2x4xf32>\n"
      "}\n",
      "stablehlo.all_gather",
      "stablehlo.all_gather: result 0 tensor<2x4xf32> does not fit operand 0 tensor<2x3xf32>");
  expect_invalid(
      "func.func @main(%a: tensor<4x3xf32>) -> tensor<2x6xf32> {\n"
      "  %0 = \"stablehlo.all_to_all\"(%a) {split_dimension = 0 : i64, concat_dimension = 1 : i64,"
      " split_count = 3 : i64, replica_groups = dense<[[0, 1, 2]]> : tensor<1x3xi64>}"
      " : (tensor<4x3xf32>) -> tensor<2x6xf32>\n"
      "  func.return %0 : tensor<2x6xf32>\n"
      "}\n",
      "stablehlo.all_to_all", "stablehlo.all_to_all: split_count 3 does not divide dimension 0 of tensor<4x3xf32>");
  expect_invalid(
      "func.func @main(%a: tensor<4xf32>) -> tensor<4xf64> {\n"
      "  %0 = \"stablehlo.all_reduce\"(%a) ({\n"
      "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
      "    %s = stablehlo.add %x, %y : tensor<f32>\n"
      "    stablehlo.return %s : tensor<f32>\n"
      "  }) {replica_groups = dense<[[0]]> : tensor<1x1xi64>} : (tensor<4xf32>) -> tensor<4xf64>\n"
      "  func.return %0 : tensor<4xf64>\n"
      "}\n",
      "stablehlo.all_reduce",
      "stablehlo.all_reduce: operand 0 tensor<4xf32> and result 0 tensor<4xf64> differ in element type or rank");
  expect_invalid(
      "func.func @main(%a: tensor<2xf32>, %r: tensor<2xi32>) -> tensor<2xf32> {\n"
      "  %0 = \"stablehlo.collective_broadcast\"(%a, %r) {replica_groups = dense<[[0]]> : tensor<1x1xi64>,"
      " has_dynamic_root} : (tensor<2xf32>, tensor<2xi32>) -> tensor<2xf32>\n"
      "  func.return %0 : tensor<2xf32>\n"
      "}\n",
      "stablehlo.collective_broadcast",
      "stablehlo.collective_broadcast: the dynamic root tensor<2xi32> should hold one integer per result (1)");
}

static void test_misc_invalid(void **state) {
  (void)state;
  expect_invalid(
      "func.func @main(%a: tensor<5xf32>) -> tensor<6xf32> {\n"
      "  %v, %i = chlo.top_k(%a, k = 6) : tensor<5xf32> -> (tensor<6xf32>, tensor<6xi32>)\n"
      "  func.return %v : tensor<6xf32>\n"
      "}\n",
      "chlo.top_k", "chlo.top_k: k = 6 must be in [0, 5]");
  expect_invalid(
      "func.func @main(%a: tensor<4xf32>) -> tensor<5xf32> {\n"
      "  %0 = chlo.erf %a : tensor<4xf32> -> tensor<5xf32>\n"
      "  func.return %0 : tensor<5xf32>\n"
      "}\n",
      "chlo.erf", "chlo.erf: result type tensor<5xf32> and operand type tensor<4xf32> have different shapes");
  expect_invalid(
      "func.func @main(%a: tensor<4xf32>, %b: tensor<4xf64>) -> tensor<4xf32> {\n"
      "  %0 = chlo.next_after %a, %b : tensor<4xf32>, tensor<4xf64> -> tensor<4xf32>\n"
      "  func.return %0 : tensor<4xf32>\n"
      "}\n",
      "chlo.next_after", "chlo.next_after: operand types tensor<4xf32> and tensor<4xf64> differ");
  expect_invalid(
      "func.func @main(%a: tensor<4xf32>) -> tensor<i32> {\n"
      "  %0 = \"stablehlo.get_dimension_size\"(%a) {dimension = 1 : i64} : (tensor<4xf32>) -> tensor<i32>\n"
      "  func.return %0 : tensor<i32>\n"
      "}\n",
      "stablehlo.get_dimension_size", "stablehlo.get_dimension_size: dimension 1 is out of range");
  expect_invalid(
      "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = \"stablehlo.reduce_precision\"(%a) {exponent_bits = 0 : i32, mantissa_bits = 2 : i32}"
      " : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  func.return %0 : tensor<4xf32>\n"
      "}\n",
      "stablehlo.reduce_precision", "stablehlo.reduce_precision: exponent_bits 0 must be >= 1");
  expect_invalid(
      "func.func @main(%a: tensor<3x4xf32>) -> tensor<3x4xf32> {\n"
      "  %0 = \"stablehlo.cholesky\"(%a) {lower = true} : (tensor<3x4xf32>) -> tensor<3x4xf32>\n"
      "  func.return %0 : tensor<3x4xf32>\n"
      "}\n",
      "stablehlo.cholesky", "stablehlo.cholesky: a tensor<3x4xf32> must be a batch of square matrices");
  expect_invalid(
      "func.func @main(%a: tensor<4xcomplex<f32>>) -> tensor<4xf32> {\n"
      "  %0 = stablehlo.fft %a, type = FFT, length = [4] : (tensor<4xcomplex<f32>>) -> tensor<4xf32>\n"
      "  func.return %0 : tensor<4xf32>\n"
      "}\n",
      "stablehlo.fft", "stablehlo.fft:", "wrong element types");
  expect_invalid(
      "func.func @main(%a: tensor<3x3xf32>, %b: tensor<1x3xf32>) -> tensor<1x3xf32> {\n"
      "  %0 = \"stablehlo.triangular_solve\"(%a, %b) {left_side = true, lower = true, unit_diagonal = false,"
      " transpose_a = #stablehlo<transpose NO_TRANSPOSE>} : (tensor<3x3xf32>, tensor<1x3xf32>) -> tensor<1x3xf32>\n"
      "  func.return %0 : tensor<1x3xf32>\n"
      "}\n",
      "stablehlo.triangular_solve", "stablehlo.triangular_solve: a tensor<3x3xf32> does not match b tensor<1x3xf32>");
  expect_invalid(
      "func.func @main(%x: tensor<2x3xf32>, %s: tensor<2xf32>) -> tensor<2x3xf32> {\n"
      "  %0 = \"stablehlo.batch_norm_inference\"(%x, %s, %s, %s, %s) {epsilon = 0.001 : f32, feature_index = 1 : i64}"
      " : (tensor<2x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x3xf32>\n"
      "  func.return %0 : tensor<2x3xf32>\n"
      "}\n",
      "stablehlo.batch_norm_inference", "stablehlo.batch_norm_inference: operand 1 tensor<2xf32> must be tensor<3xf32>");
  expect_invalid(
      "func.func @main(%i: tensor<i32>, %a: tensor<f32>, %b: tensor<f64>) -> tensor<f32> {\n"
      "  %0 = \"stablehlo.case\"(%i) ({\n"
      "    stablehlo.return %a : tensor<f32>\n"
      "  }, {\n"
      "    stablehlo.return %b : tensor<f64>\n"
      "  }) : (tensor<i32>) -> tensor<f32>\n"
      "  func.return %0 : tensor<f32>\n"
      "}\n",
      "\"stablehlo.case\"", "stablehlo.case: branch 1 returns tensor<f64> as value 0 but tensor<f32> is expected");
  expect_invalid(
      "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = \"stablehlo.map\"(%a, %a) ({\n"
      "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
      "    %s = stablehlo.add %x, %y : tensor<f32>\n"
      "    stablehlo.return %s : tensor<f32>\n"
      "  }) {dimensions = array<i64: 1>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n"
      "  func.return %0 : tensor<4xf32>\n"
      "}\n",
      "\"stablehlo.map\"", "stablehlo.map: dimensions [1] must be [0, ..., 0]");
}

/* ------------------------------------------------------ valid programs */

static void test_valid_programs(void **state) {
  (void)state;
  /* The spec's gather example. */
  expect_valid(
      "func.func @main(%operand: tensor<3x4x2xi32>, %idx: tensor<2x3x2xi64>) -> tensor<2x3x2x2xi32> {\n"
      "  %0 = \"stablehlo.gather\"(%operand, %idx) {\n"
      "    dimension_numbers = #stablehlo.gather<offset_dims = [2, 3], collapsed_slice_dims = [0],\n"
      "      start_index_map = [1, 0], index_vector_dim = 2>,\n"
      "    slice_sizes = array<i64: 1, 2, 2>, indices_are_sorted = false\n"
      "  } : (tensor<3x4x2xi32>, tensor<2x3x2xi64>) -> tensor<2x3x2x2xi32>\n"
      "  func.return %0 : tensor<2x3x2x2xi32>\n"
      "}\n");
  /* The spec's convolution example. */
  expect_valid(
      "func.func @main(%a: tensor<1x4x4x1xi32>, %k: tensor<3x3x1x1xi32>) -> tensor<1x2x2x1xi32> {\n"
      "  %0 = \"stablehlo.convolution\"(%a, %k) {\n"
      "    window_strides = array<i64: 4, 4>, padding = dense<0> : tensor<2x2xi64>,\n"
      "    lhs_dilation = array<i64: 2, 2>, rhs_dilation = array<i64: 1, 1>,\n"
      "    window_reversal = array<i1: false, false>,\n"
      "    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,\n"
      "    feature_group_count = 1 : i64, batch_group_count = 1 : i64,\n"
      "    precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]\n"
      "  } : (tensor<1x4x4x1xi32>, tensor<3x3x1x1xi32>) -> tensor<1x2x2x1xi32>\n"
      "  func.return %0 : tensor<1x2x2x1xi32>\n"
      "}\n");
  expect_valid(
      "func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>, %z: tensor<f32>) -> tensor<2xf32> {\n"
      "  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1]"
      " : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>\n"
      "  %1 = stablehlo.reduce(%0 init: %z) applies stablehlo.add across dimensions = [1, 2]"
      " : (tensor<2x3x5xf32>, tensor<f32>) -> tensor<2xf32>\n"
      "  %2 = stablehlo.broadcast_in_dim %1, dims = [1] : (tensor<2xf32>) -> tensor<3x2xf32>\n"
      "  %3 = stablehlo.transpose %2, dims = [1, 0] : (tensor<3x2xf32>) -> tensor<2x3xf32>\n"
      "  %4 = stablehlo.reshape %3 : (tensor<2x3xf32>) -> tensor<6xf32>\n"
      "  %5 = stablehlo.slice %4 [1:6:2] : (tensor<6xf32>) -> tensor<3xf32>\n"
      "  %6 = stablehlo.pad %5, %z, low = [1], high = [-1], interior = [1] : (tensor<3xf32>, tensor<f32>) -> tensor<5xf32>\n"
      "  %7 = stablehlo.concatenate %6, %5, dim = 0 : (tensor<5xf32>, tensor<3xf32>) -> tensor<8xf32>\n"
      "  %8 = stablehlo.reverse %7, dims = [0] : tensor<8xf32>\n"
      "  %9 = stablehlo.iota dim = 0 : tensor<8xf32>\n"
      "  %10 = stablehlo.add %8, %9 : tensor<8xf32>\n"
      "  %c = stablehlo.constant dense<1> : tensor<i32>\n"
      "  %11 = stablehlo.dynamic_slice %10, %c, sizes = [2] : (tensor<8xf32>, tensor<i32>) -> tensor<2xf32>\n"
      "  %12 = stablehlo.dynamic_update_slice %11, %1, %c : (tensor<2xf32>, tensor<2xf32>, tensor<i32>) -> tensor<2xf32>\n"
      "  func.return %12 : tensor<2xf32>\n"
      "}\n");
  expect_valid(
      "func.func @main(%a: tensor<4xf32>, %b: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>) {\n"
      "  %0:2 = \"stablehlo.sort\"(%a, %b) ({\n"
      "  ^bb0(%x: tensor<f32>, %y: tensor<f32>, %u: tensor<i32>, %v: tensor<i32>):\n"
      "    %c = stablehlo.compare LT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
      "    stablehlo.return %c : tensor<i1>\n"
      "  }) {dimension = 0 : i64, is_stable = true} : (tensor<4xf32>, tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>)\n"
      "  func.return %0#0, %0#1 : tensor<4xf32>, tensor<4xi32>\n"
      "}\n");
  expect_valid(
      "func.func @main(%n: tensor<i32>, %p: tensor<i1>, %f: tensor<f32>) -> tensor<f32> {\n"
      "  %one = stablehlo.constant dense<1> : tensor<i32>\n"
      "  %0:2 = stablehlo.while(%i = %n, %acc = %f) : tensor<i32>, tensor<f32>\n"
      "  cond {\n"
      "    %c = stablehlo.compare LT, %i, %one : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "    stablehlo.return %c : tensor<i1>\n"
      "  } do {\n"
      "    %j = stablehlo.add %i, %one : tensor<i32>\n"
      "    %g = stablehlo.add %acc, %f : tensor<f32>\n"
      "    stablehlo.return %j, %g : tensor<i32>, tensor<f32>\n"
      "  }\n"
      "  %1 = \"stablehlo.if\"(%p) ({\n"
      "    stablehlo.return %0#1 : tensor<f32>\n"
      "  }, {\n"
      "    stablehlo.return %f : tensor<f32>\n"
      "  }) : (tensor<i1>) -> tensor<f32>\n"
      "  %2 = \"stablehlo.case\"(%n) ({\n"
      "    stablehlo.return %1 : tensor<f32>\n"
      "  }, {\n"
      "    stablehlo.return %f : tensor<f32>\n"
      "  }) : (tensor<i32>) -> tensor<f32>\n"
      "  func.return %2 : tensor<f32>\n"
      "}\n");
  expect_valid(
      "func.func @main(%a: tensor<4x4xf32>, %s: tensor<2x2xf32>, %z: tensor<f32>) -> (tensor<4x4xf32>, tensor<2x2xf32>) {\n"
      "  %0 = \"stablehlo.select_and_scatter\"(%a, %s, %z) ({\n"
      "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
      "    %c = stablehlo.compare GE, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
      "    stablehlo.return %c : tensor<i1>\n"
      "  }, {\n"
      "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
      "    %m = stablehlo.add %x, %y : tensor<f32>\n"
      "    stablehlo.return %m : tensor<f32>\n"
      "  }) {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>}"
      " : (tensor<4x4xf32>, tensor<2x2xf32>, tensor<f32>) -> tensor<4x4xf32>\n"
      "  %1 = \"stablehlo.reduce_window\"(%a, %z) ({\n"
      "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
      "    %m = stablehlo.maximum %x, %y : tensor<f32>\n"
      "    stablehlo.return %m : tensor<f32>\n"
      "  }) {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>}"
      " : (tensor<4x4xf32>, tensor<f32>) -> tensor<2x2xf32>\n"
      "  func.return %0, %1 : tensor<4x4xf32>, tensor<2x2xf32>\n"
      "}\n");
}

/* ------------------------------------------- the conformance corpus */

typedef struct corpus_stats {
  int chunks, parsed, verified, parse_rejected, verify_rejected;
} corpus_stats_t;

/* Parses one "// -----" chunk; if the parser accepts it, the verifier must. */
static void check_chunk(const char *path, int chunk, const char *text, size_t len,
                        corpus_stats_t *st) {
  hlo_module_t *m = NULL;
  hlo_parse_options_t opts = {0};
  opts.fill_elided = 1;
  char name[512];
  snprintf(name, sizeof name, "%s#%d", path, chunk);
  st->chunks++;
  vkhlo_status_t s = hlo_parse(text, len, name, &opts, &m);
  if (s) {
    st->parse_rejected++;
    if (getenv("VKHLO_TEST_VERBOSE")) fprintf(stderr, "  parser rejects: %s\n", vkhlo_status_message(s));
    vkhlo_status_free(s);
    return;
  }
  st->parsed++;
  s = hlo_verify(m);
  hlo_module_destroy(m);
  if (s) {
    if (st->verify_rejected < 40) fprintf(stderr, "  VERIFIER REJECTS VALID: %s\n", vkhlo_status_message(s));
    st->verify_rejected++;
    vkhlo_status_free(s);
    return;
  }
  st->verified++;
}

static bool is_split_line(const char *p, const char *end) {
  /* A line consisting of "// -----" (possibly with trailing spaces). */
  const char *q = p;
  while (q < end && (*q == ' ' || *q == '\t')) q++;
  if (end - q < 8 || strncmp(q, "// -----", 8) != 0) return false;
  q += 8;
  while (q < end && *q != '\n') {
    if (*q != '-' && *q != ' ' && *q != '\t' && *q != '\r') return false;
    q++;
  }
  return true;
}

static void check_file(const char *path, corpus_stats_t *st) {
  size_t size;
  char *text = test_read_file(path, &size);
  if (!text) return;
  const char *start = text, *end = text + size;
  int chunk = 0;
  for (const char *p = text; p < end;) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    if (!eol) eol = end;
    if (is_split_line(p, eol)) {
      check_chunk(path, chunk++, start, (size_t)(p - start), st);
      start = eol < end ? eol + 1 : end;
    }
    p = eol < end ? eol + 1 : end;
  }
  check_chunk(path, chunk, start, (size_t)(end - start), st);
  free(text);
}

static int compare_names(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void check_dir(const char *dir, corpus_stats_t *st) {
  DIR *d = opendir(dir);
  if (!d) return;
  char **names = NULL;
  int count = 0, cap = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    size_t n = strlen(e->d_name);
    if (n < 5 || strcmp(e->d_name + n - 5, ".mlir") != 0) continue;
    if (count == cap) {
      cap = cap ? cap * 2 : 256;
      names = realloc(names, sizeof *names * (size_t)cap);
      assert_non_null(names);
    }
    names[count++] = strdup(e->d_name);
  }
  closedir(d);
  if (count) qsort(names, (size_t)count, sizeof *names, compare_names);
  for (int i = 0; i < count; i++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    check_file(path, st);
    free(names[i]);
  }
  free(names);
}

static void test_conformance_corpus(void **state) {
  (void)state;
  const char *shared = VKHLO_SOURCE_DIR "/../shared";
  DIR *d = opendir(shared);
  if (!d) {
    printf("SKIPPED: %s is absent, so the conformance corpus is not checked\n", shared);
    skip();
  }
  closedir(d);
  corpus_stats_t st = {0};
  check_dir(VKHLO_SOURCE_DIR "/../shared/conformance/testdata", &st);
  check_dir(VKHLO_SOURCE_DIR "/../shared/conformance/interpret", &st);
  check_file(VKHLO_SOURCE_DIR "/../shared/models/searchless_chess_9m.mlir", &st);
  printf("conformance corpus: %d programs, %d parsed, %d verified, %d rejected by the parser, "
         "%d rejected by the verifier\n",
         st.chunks, st.parsed, st.verified, st.parse_rejected, st.verify_rejected);
  assert_int_equal(st.verify_rejected, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_built_valid),
      cmocka_unit_test(test_built_use_before_def),
      cmocka_unit_test(test_built_bad_root_and_entry),
      cmocka_unit_test(test_built_wrong_operand_count),
      cmocka_unit_test(test_built_random_attrs),
      cmocka_unit_test(test_elementwise_invalid),
      cmocka_unit_test(test_elementwise_valid),
      cmocka_unit_test(test_data_movement_invalid),
      cmocka_unit_test(test_gather_scatter_invalid),
      cmocka_unit_test(test_contraction_invalid),
      cmocka_unit_test(test_reduce_invalid),
      cmocka_unit_test(test_control_flow_invalid),
      cmocka_unit_test(test_check_invalid),
      cmocka_unit_test(test_collectives_invalid),
      cmocka_unit_test(test_misc_invalid),
      cmocka_unit_test(test_valid_programs),
      cmocka_unit_test(test_conformance_corpus),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
