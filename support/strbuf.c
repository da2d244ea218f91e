/* Growable strings (see support/strbuf.h). */
#include "support/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void strbuf_init(strbuf_t *sb, const vkhlo_allocator_t *allocator) {
  memset(sb, 0, sizeof *sb);
  sb->allocator = allocator;
}

void strbuf_free(strbuf_t *sb) {
  vkhlo_free(sb->allocator, sb->data);
  strbuf_init(sb, sb->allocator);
}

static bool reserve(strbuf_t *sb, size_t extra) {
  if (sb->failed) return false;
  size_t need = sb->length + extra + 1;
  if (need <= sb->capacity) return true;
  size_t cap = sb->capacity ? sb->capacity : 256;
  while (cap < need) cap *= 2;
  char *p = vkhlo_realloc(sb->allocator, sb->data, cap);
  if (!p) {
    sb->failed = true;
    return false;
  }
  sb->data = p;
  sb->capacity = cap;
  return true;
}

void strbuf_appendn(strbuf_t *sb, const char *s, size_t n) {
  if (!reserve(sb, n)) return;
  memcpy(sb->data + sb->length, s, n);
  sb->length += n;
  sb->data[sb->length] = 0;
}

void strbuf_append(strbuf_t *sb, const char *s) { strbuf_appendn(sb, s, strlen(s)); }

void strbuf_printf(strbuf_t *sb, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0 || !reserve(sb, (size_t)n)) return;
  va_start(ap, fmt);
  vsnprintf(sb->data + sb->length, (size_t)n + 1, fmt, ap);
  va_end(ap);
  sb->length += (size_t)n;
}

char *strbuf_take(strbuf_t *sb) {
  if (sb->failed) {
    strbuf_free(sb);
    return NULL;
  }
  if (!sb->data && !reserve(sb, 0)) return NULL;
  char *s = sb->data;
  strbuf_init(sb, sb->allocator);
  return s;
}
