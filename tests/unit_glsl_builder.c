/*
 * Unit tests for the GLSL builder (codegen/glsl_builder.c): the text and
 * indentation of blocks, scope ids and their visibility (what the
 * fused-kernel memo relies on; tests/unit_fusion.c checks the memo
 * itself), functions hiding the scopes outside them, and misuse (closing
 * a scope other than the innermost, blocks left open, nesting too deep)
 * reported as INTERNAL by glsl_builder_check.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "codegen/glsl_builder.h"

static void expect_internal(vkhlo_status_t st, const char *text) {
  assert_non_null(st);
  assert_int_equal(vkhlo_status_code(st), VKHLO_STATUS_INTERNAL);
  if (!strstr(vkhlo_status_message(st), text)) {
    fprintf(stderr, "message: %s\n", vkhlo_status_message(st));
    fail();
  }
  vkhlo_status_free(st);
}

/* glsl_note_fn for the tests: the note is a string. */
static void note_comment(strbuf_t *text, const void *note) {
  if (note) strbuf_printf(text, "  // %s\n", (const char *)note);
  else strbuf_append(text, "\n");
}

static void test_text_and_indentation(void **state) {
  (void)state;
  strbuf_t text;
  strbuf_init(&text, NULL);
  glsl_builder_t b;
  glsl_builder_init(&b, &text, 1, note_comment);
  glsl_line(&b, "x", "float v = %d.0;", 1);
  glsl_scope_t loop = glsl_open(&b, NULL, "for (int r = 0; r < %d; r++) {", 4);
  glsl_scope_t branch = glsl_open(&b, "pad", "if (%s) {", "b0");
  glsl_line(&b, NULL, "v += 1.0;");
  branch = glsl_else(&b, branch, "pad", "else if (%s) {", "b1");
  glsl_line(&b, NULL, "v += 2.0;");
  branch = glsl_else(&b, branch, NULL, "else {");
  glsl_close(&b, branch, "pad");
  glsl_close(&b, loop, NULL);
  glsl_line(&b, NULL, "out = v;");
  assert_null(glsl_builder_check(&b));
  assert_false(text.failed);
  assert_string_equal(text.data,
                      "  float v = 1.0;  // x\n"
                      "  for (int r = 0; r < 4; r++) {\n"
                      "    if (b0) {  // pad\n"
                      "      v += 1.0;\n"
                      "    } else if (b1) {  // pad\n"
                      "      v += 2.0;\n"
                      "    } else {\n"
                      "    }  // pad\n"
                      "  }\n"
                      "  out = v;\n");
  strbuf_free(&text);
}

/* Lines longer than any fixed buffer come out whole. */
static void test_long_line(void **state) {
  (void)state;
  strbuf_t text;
  strbuf_init(&text, NULL);
  glsl_builder_t b;
  glsl_builder_init(&b, &text, 0, NULL);
  char big[1000];
  memset(big, 'a', sizeof big - 1);
  big[sizeof big - 1] = 0;
  glsl_line(&b, NULL, "%s;", big);
  assert_int_equal(text.length, sizeof big + 1);
  assert_int_equal(text.data[sizeof big - 2], 'a');
  assert_string_equal(text.data + sizeof big - 1, ";\n");
  strbuf_free(&text);
}

static void test_scopes(void **state) {
  (void)state;
  strbuf_t text;
  strbuf_init(&text, NULL);
  glsl_builder_t b;
  glsl_builder_init(&b, &text, 1, NULL);
  glsl_scope_t root = glsl_innermost(&b);
  assert_true(glsl_scope_visible(&b, root));
  glsl_scope_t a = glsl_open(&b, NULL, "{");
  assert_int_equal(glsl_innermost(&b).id, a.id);
  assert_true(a.id != root.id);
  glsl_scope_t in_a = glsl_open(&b, NULL, "{");
  assert_true(glsl_scope_visible(&b, a));
  assert_true(glsl_scope_visible(&b, root));
  glsl_close(&b, in_a, NULL);
  /* a closed block: not open, not visible, not innermost */
  assert_false(glsl_scope_open(&b, in_a));
  assert_false(glsl_scope_visible(&b, in_a));
  assert_int_equal(glsl_innermost(&b).id, a.id);
  /* the next branch is a new scope; the first branch's is closed */
  glsl_scope_t other = glsl_else(&b, a, NULL, "else {");
  assert_true(other.id != a.id && other.id != in_a.id);
  assert_false(glsl_scope_visible(&b, a));
  assert_true(glsl_scope_visible(&b, other));
  glsl_close(&b, other, NULL);
  assert_false(glsl_scope_visible(&b, other));
  assert_int_equal(glsl_innermost(&b).id, root.id);
  /* ids are never reused */
  int seen[64];
  for (int i = 0; i < 64; i++) {
    glsl_scope_t s = glsl_open(&b, NULL, "{");
    seen[i] = s.id;
    for (int j = 0; j < i; j++) assert_true(seen[j] != s.id);
    assert_true(s.id != a.id && s.id != in_a.id && s.id != other.id && s.id != root.id);
    glsl_close(&b, s, NULL);
  }
  assert_null(glsl_builder_check(&b));
  strbuf_free(&text);
}

/* A function's body goes to its own text at a function body's
 * indentation, and the blocks open outside it are hidden inside. */
static void test_function(void **state) {
  (void)state;
  strbuf_t text, body;
  strbuf_init(&text, NULL);
  strbuf_init(&body, NULL);
  glsl_builder_t b;
  glsl_builder_init(&b, &text, 1, NULL);
  glsl_scope_t root = glsl_innermost(&b);
  glsl_scope_t loop = glsl_open(&b, NULL, "for (;;) {");
  glsl_scope_t f = glsl_open_function(&b, &body);
  assert_true(glsl_scope_open(&b, loop));
  assert_false(glsl_scope_visible(&b, loop));
  assert_false(glsl_scope_visible(&b, root));
  assert_true(glsl_scope_visible(&b, f));
  glsl_scope_t branch = glsl_open(&b, NULL, "if (p0) {");
  glsl_line(&b, NULL, "res0 = p1;");
  glsl_close(&b, branch, NULL);
  glsl_close_function(&b, f);
  glsl_line(&b, NULL, "v = 0;");
  assert_true(glsl_scope_visible(&b, loop));
  glsl_close(&b, loop, NULL);
  assert_null(glsl_builder_check(&b));
  assert_string_equal(body.data, "  if (p0) {\n    res0 = p1;\n  }\n");
  assert_string_equal(text.data, "  for (;;) {\n    v = 0;\n  }\n");
  strbuf_free(&text);
  strbuf_free(&body);
}

static void test_mismatched_close(void **state) {
  (void)state;
  strbuf_t text;
  strbuf_init(&text, NULL);
  glsl_builder_t b;
  glsl_builder_init(&b, &text, 1, NULL);
  glsl_scope_t outer = glsl_open(&b, NULL, "if (a) {");
  glsl_scope_t inner = glsl_open(&b, NULL, "if (b) {");
  glsl_close(&b, outer, NULL); /* inner is still open */
  (void)inner;
  expect_internal(glsl_builder_check(&b), "not the innermost");
  strbuf_free(&text);

  /* else of a scope that is not the innermost */
  strbuf_init(&text, NULL);
  glsl_builder_init(&b, &text, 1, NULL);
  outer = glsl_open(&b, NULL, "if (a) {");
  inner = glsl_open(&b, NULL, "if (b) {");
  glsl_else(&b, outer, NULL, "else {");
  expect_internal(glsl_builder_check(&b), "not the innermost");
  strbuf_free(&text);

  /* closing the root, or a scope twice */
  strbuf_init(&text, NULL);
  glsl_builder_init(&b, &text, 1, NULL);
  glsl_close(&b, glsl_innermost(&b), NULL);
  expect_internal(glsl_builder_check(&b), "not the innermost");
  strbuf_free(&text);
  strbuf_init(&text, NULL);
  glsl_builder_init(&b, &text, 1, NULL);
  outer = glsl_open(&b, NULL, "{");
  glsl_close(&b, outer, NULL);
  assert_null(glsl_builder_check(&b));
  glsl_close(&b, outer, NULL);
  expect_internal(glsl_builder_check(&b), "not the innermost");
  strbuf_free(&text);

  /* a function closed as a block, a block closed as a function */
  strbuf_t body;
  strbuf_init(&text, NULL);
  strbuf_init(&body, NULL);
  glsl_builder_init(&b, &text, 1, NULL);
  glsl_scope_t f = glsl_open_function(&b, &body);
  glsl_close(&b, f, NULL);
  expect_internal(glsl_builder_check(&b), "function");
  strbuf_free(&text);
  strbuf_free(&body);
  strbuf_init(&text, NULL);
  glsl_builder_init(&b, &text, 1, NULL);
  outer = glsl_open(&b, NULL, "{");
  glsl_close_function(&b, outer);
  expect_internal(glsl_builder_check(&b), "block");
  strbuf_free(&text);
}

static void test_left_open_and_too_deep(void **state) {
  (void)state;
  strbuf_t text;
  strbuf_init(&text, NULL);
  glsl_builder_t b;
  glsl_builder_init(&b, &text, 1, NULL);
  glsl_open(&b, NULL, "{");
  glsl_open(&b, NULL, "{");
  expect_internal(glsl_builder_check(&b), "2 block(s) left open");
  strbuf_free(&text);

  strbuf_init(&text, NULL);
  glsl_builder_init(&b, &text, 1, NULL);
  for (int i = 0; i < GLSL_BUILDER_MAX_DEPTH + 2; i++) glsl_open(&b, NULL, "{");
  expect_internal(glsl_builder_check(&b), "too deeply");
  strbuf_free(&text);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_text_and_indentation),
      cmocka_unit_test(test_long_line),
      cmocka_unit_test(test_scopes),
      cmocka_unit_test(test_function),
      cmocka_unit_test(test_mismatched_close),
      cmocka_unit_test(test_left_open_and_too_deep),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
