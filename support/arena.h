/*
 * Bump allocator for the IR.  Everything an HloModule holds lives in its
 * arena; passes allocate from it and never free single objects.  Memory is
 * zeroed.  arena_alloc returns NULL when the host is out of memory.
 */
#ifndef VKHLO_SUPPORT_ARENA_H
#define VKHLO_SUPPORT_ARENA_H

#include <stddef.h>

#include "support/alloc.h"

typedef struct arena_block arena_block_t;
typedef struct arena {
  arena_block_t *head;
  size_t total_bytes;
  const vkhlo_allocator_t *allocator; /* blocks come from here (NULL = libc) */
} arena_t;

void arena_init(arena_t *arena, const vkhlo_allocator_t *allocator);
void arena_free(arena_t *arena);
void *arena_alloc(arena_t *arena, size_t size_bytes);
char *arena_strdup(arena_t *arena, const char *s);
char *arena_strndup(arena_t *arena, const char *s, size_t n);
/* Copy |size_bytes| from |src| into the arena. */
void *arena_memdup(arena_t *arena, const void *src, size_t size_bytes);

#endif
