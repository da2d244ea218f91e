/*
 * bytecode_compare TEXT.mlir ARTIFACT.mlir.bc
 *
 * For StableHLO's own serialization tests (stablehlo/tests/vhlo/
 * stablehlo_legalize_to_vhlo.X.mlir and the artifact
 * stablehlo-translate --serialize wrote from it for VHLO version X):
 * every function of the text is parsed alone from the text and from the
 * artifact's text (hlo_bytecode_to_text), and the two modules must print
 * the same (location comments aside).  Functions the parser refuses in
 * both (ops or types vkhlo does not run, callees outside the function) are
 * counted, not compared; a function refused only from the artifact, or
 * printing differently, is a failure.  Run by tests/vhlo_upstream.sh.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hlo/bytecode.h"
#include "hlo/hlo.h"
#include "tests/test_support.h"

/* The text from the line of `func.func ... @name(` to the next such line. */
static char *function_text(const char *text, const char *name) {
  char key[300];
  snprintf(key, sizeof key, "@%s(", name);
  for (const char *p = text; (p = strstr(p, "func.func")); p++) {
    const char *nl = strchr(p, '\n'), *k = strstr(p, key);
    if (!k || (nl && k > nl)) continue;
    const char *end = strstr(p + 9, "\nfunc.func"), *end2 = strstr(p + 9, "\n  func.func");
    if (!end || (end2 && end2 < end)) end = end2;
    if (!end) end = p + strlen(p);
    size_t n = (size_t)(end - p);
    char *c = malloc(n + 2);
    if (!c) return NULL;
    memcpy(c, p, n);
    c[n] = '\n';
    c[n + 1] = 0;
    return c;
  }
  return NULL;
}

static void strip_comments(char *s) {
  char *w = s;
  for (char *r = s; *r;) {
    if (!strncmp(r, "  //", 4)) {
      while (*r && *r != '\n') r++;
      continue;
    }
    *w++ = *r++;
  }
  *w = 0;
}

static vkhlo_status_t parse_function(const char *text, const char *name, hlo_module_t **m) {
  hlo_parse_options_t o = {0};
  o.entry_name = name;
  o.fill_elided = 1;
  return hlo_parse(text, strlen(text), name, &o, m);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: bytecode_compare TEXT.mlir ARTIFACT.mlir.bc\n");
    return 2;
  }
  size_t text_size, bc_size;
  char *text = test_read_file(argv[1], &text_size), *bc = test_read_file(argv[2], &bc_size);
  if (!text || !bc) return fprintf(stderr, "cannot read %s or %s\n", argv[1], argv[2]), 2;
  char *bc_text = NULL;
  vkhlo_status_t st = hlo_bytecode_to_text(bc, bc_size, argv[2], NULL, &bc_text, NULL);
  if (st) return printf("FAIL %s\n", vkhlo_status_message(st)), 1;
  char *module_end = strrchr(bc_text, '}');
  if (module_end) *module_end = 0;
  int same = 0, failed = 0, refused = 0;
  for (char *p = text; (p = strstr(p, "\nfunc.func ")); p++) {
    char *at = strchr(p, '@'), *paren = at ? strchr(at, '(') : NULL, *nl = strchr(p + 1, '\n');
    if (!at || !paren || (nl && paren > nl)) continue;
    char name[256];
    snprintf(name, sizeof name, "%.*s", (int)(paren - at - 1), at + 1);
    char *from_text = function_text(text, name), *from_bc = function_text(bc_text, name);
    if (!from_bc) {
      printf("FAIL %s: not in the artifact\n", name);
      failed++;
      free(from_text);
      continue;
    }
    hlo_module_t *m1 = NULL, *m2 = NULL;
    vkhlo_status_t s1 = parse_function(from_text, name, &m1), s2 = parse_function(from_bc, name, &m2);
    if (s1 && s2) {
      refused++;
    } else if (s1 || s2) {
      printf("FAIL %s: refused only from the %s: %s\n", name, s1 ? "text" : "artifact", vkhlo_status_message(s1 ? s1 : s2));
      failed++;
    } else {
      char *a = hlo_module_to_string(m1), *b = hlo_module_to_string(m2);
      strip_comments(a);
      strip_comments(b);
      if (strcmp(a, b)) {
        printf("FAIL %s: the modules differ\n--- text\n%s--- artifact\n%s", name, a, b);
        failed++;
      } else {
        same++;
      }
      free(a);
      free(b);
    }
    if (m1) hlo_module_destroy(m1);
    if (m2) hlo_module_destroy(m2);
    vkhlo_status_free(s1);
    vkhlo_status_free(s2);
    free(from_text);
    free(from_bc);
  }
  printf("%s: %d functions the same, %d refused by both, %d failed\n", argv[2], same, refused, failed);
  free(bc_text);
  free(text);
  free(bc);
  return failed ? 1 : 0;
}
