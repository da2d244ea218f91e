/*
 * Unit tests for shaders/ (the embedded hand-written GLSL, codegen/shaders.h)
 * and the helper prelude's table of pieces (codegen/glsl_prelude.h).
 *
 * Each piece of the prelude, and shaders/rng.glsl, is compiled alone: a
 * minimal compute shader holds the pieces it needs (as the library would
 * assemble them for a kernel whose features select it), then the file
 * itself, then a main() that calls every function the file defines (glslang
 * leaves uncalled functions out of the SPIR-V, and spirv-val should see them
 * all).  The shader goes through the library's own path (spirv_compile_glsl:
 * glslang in process, then spirv-val), unoptimized.  Each file is preceded
 * by `#line 1 "<file>"`, so an error reads "ERROR: float.glsl:12: ..."
 * with the file's own line number.
 *
 * The calls are found by reading the file's top-level definitions
 * ("TYPE NAME(PARAMS) {" at the start of a line, the layout every helper
 * file keeps); each argument is a local of the parameter's type.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "codegen/glsl_prelude.h"
#include "codegen/glsl_types.h"
#include "codegen/shaders.h"
#include "codegen/spirv.h"
#include "support/strbuf.h"
#include "test_support.h"

/* ---- shaders_find --------------------------------------------------------- */

static void test_find_known_and_unknown(void **state) {
  (void)state;
  const shaders_file_t *f = shaders_find("float.glsl");
  assert_non_null(f);
  assert_string_equal(f->name, "float.glsl");
  assert_true(f->size_bytes > 0);
  assert_int_equal(strlen(f->text), f->size_bytes);
  assert_non_null(strstr(f->text, "vk_round_bf16"));
  assert_non_null(shaders_find("rng.glsl"));
  assert_null(shaders_find("no_such_file.glsl"));
  assert_null(shaders_find("float"));
  assert_null(shaders_find(""));
  assert_null(shaders_find("FLOAT.GLSL"));
}

/* Every file the prelude table names is embedded; |needs| points only at
 * earlier pieces (the library's one backward pass relies on it). */
static void test_prelude_table(void **state) {
  (void)state;
  size_t n;
  const glsl_prelude_piece_t *pieces = glsl_prelude_pieces(&n);
  assert_true(n > 0);
  for (size_t i = 0; i < n; i++) {
    if (!shaders_find(pieces[i].file)) fail_msg("prelude piece %zu: no shaders/%s", i, pieces[i].file);
    assert_int_not_equal(pieces[i].any, 0);
    for (size_t j = i; j < n; j++)
      if (pieces[i].needs & pieces[j].any)
        fail_msg("%s needs a later piece, %s", pieces[i].file, pieces[j].file);
  }
}

/* A piece's |needs| are honoured: complex helpers alone bring the float
 * helpers they call; double_int64.glsl only comes with shaderInt64. */
static void test_prelude_selection(void **state) {
  (void)state;
  strbuf_t sb;
  strbuf_init(&sb, NULL);
  glsl_append_prelude(&sb, GLSL_HELPERS_COMPLEX);
  assert_false(sb.failed);
  assert_non_null(strstr(sb.data, "vk_cmul"));
  assert_non_null(strstr(sb.data, "float vk_expm1(float x)"));
  assert_null(strstr(sb.data, "double vk_"));
  assert_null(strstr(sb.data, "#line"));
  strbuf_free(&sb);

  strbuf_init(&sb, NULL);
  glsl_append_prelude(&sb, GLSL_HELPERS_DOUBLE);
  assert_non_null(strstr(sb.data, "double vk_exp(double x)"));
  assert_null(strstr(sb.data, "vk_reduce_precision(double"));
  strbuf_free(&sb);
  strbuf_init(&sb, NULL);
  glsl_append_prelude(&sb, GLSL_HELPERS_DOUBLE | GLSL_FEATURE_INT64);
  assert_non_null(strstr(sb.data, "vk_reduce_precision(double"));
  strbuf_free(&sb);

  /* f16 in integer code: the builtins are redirected after the helpers
   * (half_soft.glsl), never before float.glsl defines the replacements */
  strbuf_init(&sb, NULL);
  glsl_append_prelude(&sb, GLSL_HELPERS_FLOAT);
  assert_null(strstr(sb.data, "#define unpackHalf2x16"));
  strbuf_free(&sb);
  strbuf_init(&sb, NULL);
  glsl_append_prelude(&sb, GLSL_HELPERS_FLOAT | GLSL_FEATURE_F16_SOFT);
  const char *def = strstr(sb.data, "#define unpackHalf2x16 vk_unpack_half2x16");
  const char *fn = strstr(sb.data, "vec2 vk_unpack_half2x16(uint b)");
  assert_non_null(def);
  assert_non_null(fn);
  assert_true(fn < def);
  assert_non_null(strstr(def, "#define packHalf2x16 vk_pack_half2x16"));
  strbuf_free(&sb);

  strbuf_init(&sb, NULL);
  /* no helpers: only the bit tests of NaN and infinity (nan.glsl) */
  glsl_append_prelude(&sb, 0);
  assert_non_null(strstr(sb.data, "bool vk_isnan(float x)"));
  assert_null(strstr(sb.data, "vk_isnan(double x)"));
  assert_null(strstr(sb.data, "vk_fmax"));
  strbuf_free(&sb);
}

/* ---- each file compiles alone --------------------------------------------- */

static const char kHeader[] =
    "#version 450\n"
    "#extension GL_GOOGLE_cpp_style_line_directive : require\n"
    "#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require\n"
    "layout(local_size_x = 1) in;\n"
    "layout(std430, set = 0, binding = 0) buffer Buffer0 { uint data[]; } out0;\n";

/* packed.glsl holds only macros: expand each once. */
static const char kPackedMain[] =
    "  uint i = gl_GlobalInvocationID.x;\n"
    "  VK_STORE_8(out0, i, VK_LOAD_U8(out0, i) + uint(VK_LOAD_S8(out0, i)));\n"
    "  VK_STORE_16(out0, i, VK_LOAD_U16(out0, i) + uint(VK_LOAD_S16(out0, i)));\n";

static bool is_ident(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Appends to |sb| one block calling the function defined on |line| (a
 * line "TYPE NAME(PARAMS) {"), with a local per parameter; returns false
 * when the line is no such definition. */
static bool append_call(strbuf_t *sb, const char *line, size_t len) {
  size_t i = 0;
  while (i < len && is_ident(line[i])) i++; /* return type */
  if (i == 0 || i >= len || line[i] != ' ') return false;
  size_t name = ++i;
  while (i < len && is_ident(line[i])) i++;
  if (i == name || i >= len || line[i] != '(') return false;
  size_t name_end = i, params = i + 1;
  const char *close = memchr(line + params, ')', len - params);
  if (!close) return false;
  size_t params_end = (size_t)(close - line);
  if (!memchr(close, '{', len - params_end)) return false;

  strbuf_append(sb, "  {\n");
  int count = 0;
  size_t p = params;
  while (p < params_end) {
    size_t q = p;
    while (q < params_end && line[q] != ',') q++;
    /* "[in|out|inout] TYPE NAME" */
    size_t a = p;
    while (a < q && line[a] == ' ') a++;
    if (q - a > 4 && strncmp(line + a, "out ", 4) == 0) a += 4;
    else if (q - a > 6 && strncmp(line + a, "inout ", 6) == 0) a += 6;
    else if (q - a > 3 && strncmp(line + a, "in ", 3) == 0) a += 3;
    size_t b = a;
    while (b < q && is_ident(line[b])) b++;
    if (b > a) {
      strbuf_printf(sb, "    %.*s a%d = %.*s(0);\n", (int)(b - a), line + a, count, (int)(b - a),
                    line + a);
      count++;
    }
    p = q + 1;
  }
  strbuf_printf(sb, "    %.*s(", (int)(name_end - name), line + name);
  for (int k = 0; k < count; k++) strbuf_printf(sb, "%sa%d", k ? ", " : "", k);
  strbuf_append(sb, ");\n  }\n");
  return true;
}

/* Appends a call of every function |text| defines; returns their number. */
static int append_calls(strbuf_t *sb, const char *text) {
  int n = 0;
  for (const char *line = text; *line;) {
    const char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line) : strlen(line);
    if (append_call(sb, line, len)) n++;
    if (!end) break;
    line = end + 1;
  }
  return n;
}

typedef struct piece_case {
  char name[96];
  size_t index;      /* in the prelude table; (size_t)-1: rng.glsl */
} piece_case_t;

static spirv_compiler_t *compiler;

static void compile_expect_ok(const char *name, const char *glsl) {
  uint32_t *words = NULL;
  size_t size = 0;
  vkhlo_status_t st = spirv_compile_glsl(compiler, name, glsl, &words, &size);
  if (st) {
    print_error("%s\n", vkhlo_status_message(st));
    vkhlo_status_free(st);
    fail_msg("%s does not compile alone", name);
  }
  assert_true(size > 0 && size % 4 == 0);
  free(words);
}

static void test_piece_compiles(void **state) {
  const piece_case_t *c = *state;
  strbuf_t sb;
  strbuf_init(&sb, NULL);
  strbuf_append(&sb, kHeader);
  const char *file;
  const glsl_define_t *defines = NULL;
  if (c->index == (size_t)-1) {
    file = "rng.glsl";
    const shaders_file_t *f = shaders_find(file);
    assert_non_null(f);
    strbuf_printf(&sb, "#line 1 \"%s\"\n", file);
    strbuf_append(&sb, f->text);
  } else {
    size_t n;
    const glsl_prelude_piece_t *p = &glsl_prelude_pieces(&n)[c->index];
    file = p->file;
    defines = p->defines;
    /* the lowest selector bit, the required ones: the piece and what it needs */
    unsigned features = (p->any & (0u - p->any)) | p->all;
    glsl_append_prelude_pieces(&sb, features, c->index + 1, true);
  }
  strbuf_append(&sb, "#line 1 \"unit_shaders main\"\n");
  for (int d = 0; defines && d < GLSL_PRELUDE_MAX_DEFINES && defines[d].name; d++)
    strbuf_printf(&sb, "#define %s %s\n", defines[d].name, defines[d].value);
  strbuf_append(&sb, "void main() {\n");
  const shaders_file_t *f = shaders_find(file);
  assert_non_null(f);
  if (strcmp(file, "packed.glsl") == 0) strbuf_append(&sb, kPackedMain);
  else if (append_calls(&sb, f->text) == 0) fail_msg("no function definitions found in %s", file);
  strbuf_append(&sb, "}\n");
  assert_false(sb.failed);
  compile_expect_ok(c->name, sb.data);
  strbuf_free(&sb);
}

/* An error in a wrapped file is reported at the file's own line. */
static void test_errors_name_file_lines(void **state) {
  (void)state;
  strbuf_t sb;
  strbuf_init(&sb, NULL);
  strbuf_append(&sb, kHeader);
  strbuf_append(&sb, "#line 1 \"planted.glsl\"\n");
  strbuf_append(&sb, "float vk_ok(float x) { return x; }\n"
                     "float vk_bad(float x) {\n"
                     "  return x + undefined_name;\n"
                     "}\n");
  strbuf_append(&sb, "#line 1 \"unit_shaders main\"\nvoid main() {}\n");
  uint32_t *words = NULL;
  size_t size = 0;
  vkhlo_status_t st = spirv_compile_glsl(compiler, "planted", sb.data, &words, &size);
  strbuf_free(&sb);
  assert_non_null(st);
  assert_non_null(strstr(vkhlo_status_message(st), "planted.glsl:3:"));
  vkhlo_status_free(st);
}

static int group_setup(void **state) {
  (void)state;
  spirv_compiler_options_t opts = {.disable_cache = true, .optimize = false};
  vkhlo_status_t st = spirv_compiler_create(&opts, &compiler);
  if (st) {
    fprintf(stderr, "%s\n", vkhlo_status_message(st));
    vkhlo_status_free(st);
    return -1;
  }
  return 0;
}

static int group_teardown(void **state) {
  (void)state;
  spirv_compiler_destroy(compiler);
  compiler = NULL;
  return 0;
}

int main(void) {
  size_t n;
  const glsl_prelude_piece_t *pieces = glsl_prelude_pieces(&n);
  const struct CMUnitTest fixed[] = {
      cmocka_unit_test(test_find_known_and_unknown),
      cmocka_unit_test(test_prelude_table),
      cmocka_unit_test(test_prelude_selection),
      cmocka_unit_test(test_errors_name_file_lines),
  };
  size_t nfixed = sizeof fixed / sizeof fixed[0], total = nfixed + n + 1;
  struct CMUnitTest *tests = calloc(total, sizeof *tests);
  piece_case_t *cases = calloc(n + 1, sizeof *cases);
  if (!tests || !cases) return 1;
  memcpy(tests, fixed, sizeof fixed);
  for (size_t i = 0; i <= n; i++) {
    piece_case_t *c = &cases[i];
    c->index = i < n ? i : (size_t)-1;
    if (i < n) {
      const glsl_define_t *d = pieces[i].defines;
      snprintf(c->name, sizeof c->name, "compiles alone: %s%s%s%s", pieces[i].file,
               d[0].name ? " (" : "", d[0].name ? d[0].value : "", d[0].name ? ")" : "");
    } else {
      snprintf(c->name, sizeof c->name, "compiles alone: rng.glsl");
    }
    tests[nfixed + i] = (struct CMUnitTest){c->name, test_piece_compiles, NULL, NULL, c};
  }
  int failed = _cmocka_run_group_tests("unit_shaders", tests, total, group_setup, group_teardown);
  free(tests);
  free(cases);
  return failed;
}
