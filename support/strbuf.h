/*
 * A growable string, used to build GLSL, dumps and messages.  On allocation
 * failure the buffer records it in |failed| and ignores further appends, so
 * callers check once at the end (strbuf_take returns NULL then).
 */
#ifndef VKHLO_SUPPORT_STRBUF_H
#define VKHLO_SUPPORT_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

#include "support/alloc.h"

typedef struct strbuf {
  char *data;
  size_t length;
  size_t capacity;
  bool failed;
  const vkhlo_allocator_t *allocator; /* |data| comes from here (NULL = libc) */
} strbuf_t;

void strbuf_init(strbuf_t *sb, const vkhlo_allocator_t *allocator);
void strbuf_free(strbuf_t *sb);
void strbuf_append(strbuf_t *sb, const char *s);
void strbuf_appendn(strbuf_t *sb, const char *s, size_t n);
void strbuf_printf(strbuf_t *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Returns the heap string (caller frees it with vkhlo_free(sb->allocator, ...))
 * and resets |sb| (keeping its allocator); NULL if any append failed. */
char *strbuf_take(strbuf_t *sb);

#endif
