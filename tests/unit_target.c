/*
 * Unit tests for the restricted mode's target (codegen/target.c):
 * codegen_target_restrict clamps to VP_ANDROID_baseline_2022's limits and
 * keeps a device's smaller ones; codegen_target_check_kernel rejects kernels
 * beyond a target's workgroup invocations, workgroup counts, storage buffers
 * per stage or maxStorageBufferRange with UNIMPLEMENTED and a located
 * message, and accepts them on the default target.
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
#include "codegen/target.h"
#include "hlo/hlo.h"

static void test_restrict_clamps_to_profile(void **state) {
  (void)state;
  codegen_target_t t;
  codegen_target_default(&t);
  t.max_workgroup_count[0] = 1u << 31;
  t.max_shared_memory_bytes = 65536;
  t.subgroup_shuffle = true;
  codegen_target_restrict(&t);
  assert_false(t.shader_int64 || t.shader_float64 || t.shader_int16 || t.shader_int8 || t.shader_float16);
  assert_false(t.storage_buffer_8bit || t.storage_buffer_16bit || t.subgroup_shuffle);
  assert_false(t.signed_zero_inf_nan_preserve_float32 || t.signed_zero_inf_nan_preserve_float16);
  assert_int_equal(t.max_workgroup_invocations, 128);
  assert_int_equal(t.max_workgroup_count[0], 65535);
  assert_int_equal(t.max_shared_memory_bytes, 32768);
  assert_int_equal(t.max_storage_buffer_range, 268435456u);
  assert_int_equal(t.max_storage_buffers_per_stage, 35);

  /* A device below the profile keeps its own limits. */
  codegen_target_default(&t);
  t.max_workgroup_invocations = 64;
  t.max_storage_buffers_per_stage = 8;
  t.max_storage_buffer_range = 1u << 20;
  codegen_target_restrict(&t);
  assert_int_equal(t.max_workgroup_invocations, 64);
  assert_int_equal(t.max_storage_buffers_per_stage, 8);
  assert_int_equal(t.max_storage_buffer_range, 1u << 20);
}

typedef struct fixture {
  hlo_module_t *m;
  hlo_computation_t *c;
} fixture_t;

static hlo_instruction_t *add(fixture_t *f, hlo_opcode_t op, int64_t n, int count,
                              hlo_instruction_t *const *ops) {
  hlo_shape_t s;
  hlo_shape_init(&s, HLO_F32, 1, &n);
  hlo_instruction_t *in = hlo_instruction_create(f->m, op, &s, count, ops);
  assert_non_null(in);
  in->loc.file = "target.mlir";
  in->loc.line = 3;
  in->loc.col = 7;
  if (op == HLO_OPCODE_PARAMETER) in->parameter_number = f->c->parameter_count;
  assert_true(hlo_computation_append(f->m, f->c, in));
  return in;
}

static void expect_unimplemented(vkhlo_status_t st, const char *needle) {
  assert_non_null(st);
  assert_int_equal(vkhlo_status_code(st), VKHLO_STATUS_UNIMPLEMENTED);
  const char *msg = vkhlo_status_message(st);
  if (!strstr(msg, needle) || strncmp(msg, "target.mlir:3:7", 15) != 0) fail_msg("message: %s", msg);
  vkhlo_status_free(st);
}

static void test_check_kernel_limits(void **state) {
  (void)state;
  fixture_t f;
  f.m = hlo_module_create("target", NULL);
  f.c = hlo_computation_create(f.m, "main");
  assert_non_null(f.m);
  assert_non_null(f.c);
  codegen_target_t native, restricted;
  codegen_target_default(&native);
  codegen_target_default(&restricted);
  codegen_target_restrict(&restricted);

  /* 36 storage buffers (35 inputs and the result): over the profile's 35. */
  hlo_instruction_t *params[35];
  for (int i = 0; i < 35; i++) params[i] = add(&f, HLO_OPCODE_PARAMETER, 4, 0, NULL);
  hlo_instruction_t *cat = add(&f, HLO_OPCODE_CONCATENATE, 4 * 35, 35, params);
  codegen_kernel_t k = {.local_size_x = 64, .group_count = {3, 1, 1}, .input_count = 35, .output_count = 1};
  assert_null(codegen_target_check_kernel(&native, cat, &k));
  expect_unimplemented(codegen_target_check_kernel(&restricted, cat, &k), "36 storage buffers");
  k.input_count = 34; /* 35 in all: allowed */
  assert_null(codegen_target_check_kernel(&restricted, cat, &k));

  /* Workgroup size and count. */
  hlo_instruction_t *neg = add(&f, HLO_OPCODE_NEGATE, 4, 1, params);
  codegen_kernel_t e = {.local_size_x = 256, .group_count = {1, 1, 1}, .input_count = 1, .output_count = 1};
  assert_null(codegen_target_check_kernel(&native, neg, &e));
  expect_unimplemented(codegen_target_check_kernel(&restricted, neg, &e), "256 invocations");
  e.local_size_x = 128;
  assert_null(codegen_target_check_kernel(&restricted, neg, &e));
  e.group_count[1] = 65536;
  expect_unimplemented(codegen_target_check_kernel(&restricted, neg, &e), "workgroups along y");
  e.group_count[1] = 1;

  /* A 2^26 + 1 element f32 result: 4 bytes over maxStorageBufferRange. */
  hlo_instruction_t *big = add(&f, HLO_OPCODE_NEGATE, (1 << 26) + 1, 1, params);
  expect_unimplemented(codegen_target_check_kernel(&restricted, big, &e), "maxStorageBufferRange");
  hlo_instruction_t *fits = add(&f, HLO_OPCODE_NEGATE, 1 << 26, 1, params);
  assert_null(codegen_target_check_kernel(&restricted, fits, &e));
  hlo_module_destroy(f.m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_restrict_clamps_to_profile),
      cmocka_unit_test(test_check_kernel_limits),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
