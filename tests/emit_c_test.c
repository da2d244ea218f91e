/*
 * vkhlo compile --emit-c: the generated C (emit_model.c/.h, made from
 * tests/emit_c_program.mlir at build time) compiles, links, loads without
 * compiling a shader and its typed entry point computes a * b + c.
 * Exits 77 (skipped) when the build had no Vulkan device to compile with.
 */
#include <stdio.h>
#include <string.h>

#include "emit_model.h"

#ifdef EMIT_MODEL_UNAVAILABLE
int main(void) {
  printf("SKIPPED: emit_model.c was not generated (no Vulkan device at build time)\n");
  return 77;
}
#else
static int fail(vkhlo_status_t st) {
  fprintf(stderr, "emit_c_test: %s\n", vkhlo_status_message(st));
  vkhlo_status_free(st);
  return 1;
}

int main(void) {
  vkhlo_context_t *ctx;
  vkhlo_status_t st = vkhlo_context_create(NULL, &ctx);
  if (st) return fail(st);
  vkhlo_executable_t *exe;
  st = emit_model_load(ctx, &exe);
  if (st) return fail(st);
  vkhlo_executable_stats_t s;
  vkhlo_executable_stats(exe, &s);
  const float a[6] = {1, 2, 3, 4, 5, 6}, b[3] = {10, -1, 0.5f};
  float r[6] = {0};
  int32_t k = 0;
  st = emit_model_run(exe, a, b, r, &k);
  if (st) return fail(st);
  int bad = s.spirv_compiled != 0 || k != 42;
  for (int i = 0; i < 6; i++) {
    float want = a[i] * b[i % 3] + (float)(i + 1);
    if (r[i] != want) {
      fprintf(stderr, "result0[%d] = %g, expected %g\n", i, r[i], want);
      bad = 1;
    }
  }
  vkhlo_executable_destroy(exe);
  int messages = vkhlo_context_validation_message_count(ctx);
  vkhlo_context_destroy(ctx);
  printf("emit_c_test: %s (k=%d, spirv_compiled=%lld, %zu bytes embedded)\n", bad || messages ? "FAILED" : "ok", k,
         (long long)s.spirv_compiled, emit_model_vkx_size);
  return bad || messages ? 1 : 0;
}
#endif
