/* Bump allocator (see support/arena.h): a list of blocks, each at least 64 KiB. */
#include "support/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct arena_block {
  arena_block_t *next;
  size_t used, capacity;
  _Alignas(16) unsigned char data[];
};

void arena_init(arena_t *arena, const vkhlo_allocator_t *allocator) {
  memset(arena, 0, sizeof *arena);
  arena->allocator = allocator;
}

void arena_free(arena_t *arena) {
  const vkhlo_allocator_t *allocator = arena->allocator;
  for (arena_block_t *b = arena->head; b;) {
    arena_block_t *next = b->next;
    vkhlo_free(allocator, b);
    b = next;
  }
  memset(arena, 0, sizeof *arena);
}

void *arena_alloc(arena_t *arena, size_t size_bytes) {
  size_t size = (size_bytes + 15) & ~(size_t)15;
  if (size == 0) size = 16;
  arena_block_t *b = arena->head;
  if (!b || b->capacity - b->used < size) {
    size_t cap = size > 65536 ? size : 65536;
    b = vkhlo_malloc(arena->allocator, sizeof *b + cap);
    if (!b) return NULL;
    b->used = 0;
    b->capacity = cap;
    b->next = arena->head;
    arena->head = b;
    arena->total_bytes += cap;
  }
  void *p = b->data + b->used;
  b->used += size;
  memset(p, 0, size);
  return p;
}

void *arena_memdup(arena_t *arena, const void *src, size_t size_bytes) {
  void *p = arena_alloc(arena, size_bytes);
  if (p && size_bytes) memcpy(p, src, size_bytes);
  return p;
}

char *arena_strndup(arena_t *arena, const char *s, size_t n) {
  char *p = arena_alloc(arena, n + 1);
  if (!p) return NULL;
  memcpy(p, s, n);
  p[n] = 0;
  return p;
}

char *arena_strdup(arena_t *arena, const char *s) { return arena_strndup(arena, s, strlen(s)); }
